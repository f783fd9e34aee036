//! PY040: a call that is not safe to repeat, retried when its outcome is
//! unknown, with no idempotency key.

use crate::context::FileCx;
use crate::python::retry_without_backoff::retry_loop_body;
use crate::rule::{Examples, Rule, RuleMeta};
use crate::shared::retried_payment;
use unsnarl_model::walk::calls_in_block;
use unsnarl_model::*;

pub struct RetriedNonIdempotent;

pub static META: RuleMeta = RuleMeta {
    id: "PY040",
    name: "retried-non-idempotent-call",
    category: Category::DoubleExecution,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "A call that moves money (a Stripe `create`/`capture`/`confirm`) is retried (a retry loop, `@retry`, `@backoff.on_exception`) on errors that can come after it went through, with no idempotency key.",
    docs: r#"
A call the knowledge tables mark as not safe to repeat (Stripe's
`create`, `capture`, `confirm` and `pay`) made inside a retry: a retry
loop whose `except` catches timeouts or broad errors, a function
decorated with a retry decorator of the tables (tenacity's `@retry`,
`@backoff.on_exception`, `@stamina.retry`), or a `for attempt in
Retrying(...)` block. Not reported when an idempotency key is passed
(Stripe's `idempotency_key=`, anywhere around the retry), or when only
errors raised before the request left are retried (connection refused,
connect timeouts). Plain HTTP POSTs are not judged: many go to endpoints
built for at-least-once delivery, which the client cannot tell apart.

## Why

A timeout, a reset connection or a 502 after the request was sent does
not mean it failed: it means the client does not know. The payment may
have gone through, and the retry charges the card again. Under load, when
timeouts are common, this turns into duplicate charges in bulk.

## Example

```python
import stripe
from tenacity import retry, stop_after_attempt, wait_random_exponential

@retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=5))
def charge(customer, amount):
    return stripe.PaymentIntent.create(customer=customer, amount=amount, currency="eur")
```

## Fix

Pass an idempotency key that stays the same across the attempts (made
once, outside the retry), so Stripe performs the payment once and answers
the retries with its result.

```python
import stripe
from tenacity import retry, stop_after_attempt, wait_random_exponential

@retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=5))
def charge(customer, amount, key):
    return stripe.PaymentIntent.create(
        customer=customer, amount=amount, currency="eur", idempotency_key=key
    )
```
"#,
    examples: &EXAMPLES,
};

impl Rule for RetriedNonIdempotent {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for (block, how, region) in retried_blocks(cx) {
            if retried_payment::has_idempotency_key(cx, region) {
                continue;
            }
            for (e, c, entry) in retried_payment::money_moving(cx, calls_in_block(cx.model, block))
            {
                out.push(retried_payment::finding(
                    cx,
                    &META,
                    e,
                    &cx.callee_display(c),
                    entry,
                    &format!("is retried by {how}"),
                    "pass an idempotency key made once, before the retry (`idempotency_key=`), or retry only errors raised before the request was sent (connection refused, connect timeouts)",
                ));
            }
        }
    }
}

/// The blocks a retry runs again, how they are retried (for messages) and
/// the source region around them.
fn retried_blocks<'a>(cx: &FileCx<'a>) -> Vec<(&'a Block, String, Span)> {
    let mut out = Vec::new();
    for s in (0..cx.model.stmts.len() as u32).map(StmtId) {
        if matches!(
            cx.tree.stmt_parent(s),
            unsnarl_model::walk::Parent::Detached
        ) || cx.func(cx.tree.stmt_func(s)).is_test
        {
            continue;
        }
        // A key made before the loop counts: the region is the function.
        let span = cx.func(cx.tree.stmt_func(s)).span;
        // `for attempt in Retrying(...): with attempt: ...`
        if let StmtKind::For { iter, body, .. } = &cx.stmt(s).kind
            && let Some(c) = cx.call(cx.model.strip(*iter))
            && cx
                .effect(c, Effect::Retry)
                .is_some_and(|e| e.kind.as_deref() == Some("attempts"))
        {
            if !only_unsent_errors(cx, cx.expr(*iter).span) {
                out.push((body, format!("`{}`", cx.callee_display(c)), span));
            }
            continue;
        }
        let Some(body) = retry_loop_body(cx, s) else {
            continue;
        };
        for &st in body {
            if let StmtKind::Try {
                body: tried,
                handlers,
                ..
            } = &cx.stmt(st).kind
                && handlers
                    .iter()
                    .any(|h| h.types.is_empty() || h.types.iter().any(|t| !is_unsent_error(t)))
            {
                out.push((tried, "this loop".to_string(), span));
            }
        }
    }
    for f in cx.model.function_ids() {
        let func = cx.func(f);
        if func.is_test {
            continue;
        }
        let called = func.decorator_calls.iter().find_map(|&d| {
            let c = cx.call(d)?;
            is_retry_decorator(cx.effect(c, Effect::Retry)).then(|| (d, cx.callee_display(c)))
        });
        let decorator = match called {
            Some((d, name)) => {
                if only_unsent_errors(cx, cx.expr(d).span) {
                    continue;
                }
                name
            }
            None => match func.decorators.iter().find(|d| {
                let last = d.rsplit('.').next().unwrap_or(d);
                is_retry_decorator(cx.kb.find(Effect::Retry, Some(d), last))
            }) {
                Some(d) => d.to_string(),
                None => continue,
            },
        };
        out.push((
            &func.body,
            format!("`@{decorator}` on {}", cx.func_display(f)),
            func.span,
        ));
    }
    out
}

/// A knowledge entry of a retry decorator (not an iterator of attempts).
fn is_retry_decorator(entry: Option<&Entry>) -> bool {
    entry.is_some_and(|e| e.kind.as_deref() != Some("attempts"))
}

/// Errors raised before a request left the client: retrying them cannot
/// repeat what the server did.
fn is_unsent_error(t: &str) -> bool {
    let last = t.rsplit('.').next().unwrap_or(t);
    matches!(
        last,
        "ConnectTimeout" | "ConnectError" | "ClientConnectorError" | "ConnectionRefusedError"
    )
}

/// A retry decorator or `Retrying(...)` that names the errors it retries,
/// all of them raised before the request left.
fn only_unsent_errors(cx: &FileCx, span: Span) -> bool {
    let text = cx.source(span);
    let named: Vec<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .filter(|w| {
            let last = w.rsplit('.').next().unwrap_or(w);
            last.ends_with("Error") || last.ends_with("Exception") || last.ends_with("Timeout")
        })
        .collect();
    !named.is_empty() && named.iter().all(|w| is_unsent_error(w))
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import stripe
from tenacity import retry, stop_after_attempt, wait_random_exponential

@retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=5))
def charge(customer, amount):
    return stripe.PaymentIntent.create(customer=customer, amount=amount, currency="eur")  # expect
"#,
        r#"
import random
import time
import stripe

def capture(intent_id):
    for attempt in range(5):
        try:
            return stripe.PaymentIntent.capture(intent_id)  # expect
        except stripe.error.StripeError:
            time.sleep(random.uniform(0, 2 ** attempt))
    raise RuntimeError("gave up")
"#,
        r#"
import backoff
import stripe

@backoff.on_exception(backoff.expo, stripe.error.APIConnectionError, max_tries=4)
def pay(invoice_id):
    return stripe.Invoice.pay(invoice_id)  # expect
"#,
        r#"
import stripe
from tenacity import Retrying, stop_after_attempt

def refund(charge_id):
    for attempt in Retrying(stop=stop_after_attempt(3)):
        with attempt:
            return stripe.Refund.create(charge=charge_id)  # expect
"#,
    ],
    pass: &[
        // The key makes the retries safe.
        r#"
import stripe
from tenacity import retry, stop_after_attempt, wait_random_exponential

@retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=5))
def charge(customer, amount, key):
    return stripe.PaymentIntent.create(
        customer=customer, amount=amount, currency="eur", idempotency_key=key
    )
"#,
        // Only errors raised before the request left are retried.
        r#"
import random
import time
import stripe

def capture(intent_id):
    for attempt in range(5):
        try:
            return stripe.PaymentIntent.capture(intent_id)
        except ConnectionRefusedError:
            time.sleep(random.uniform(0, 2 ** attempt))
    raise RuntimeError("gave up")
"#,
        r#"
import stripe
from tenacity import retry, retry_if_exception_type, stop_after_attempt

@retry(retry=retry_if_exception_type(ConnectionRefusedError), stop=stop_after_attempt(3))
def pay(invoice_id):
    return stripe.Invoice.pay(invoice_id)
"#,
        // Reading is safe to repeat.
        r#"
import stripe
from tenacity import retry, stop_after_attempt, wait_random_exponential

@retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=5))
def status(intent_id):
    return stripe.PaymentIntent.retrieve(intent_id).status
"#,
        // A payment made once, outside any retry; a retried webhook POST.
        r#"
import requests
import stripe
from tenacity import retry, stop_after_attempt, wait_random_exponential

def charge(customer, amount):
    return stripe.PaymentIntent.create(customer=customer, amount=amount, currency="eur")

@retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=5))
def notify(event):
    requests.post("https://hooks.example/events", json=event, timeout=5)
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(RetriedNonIdempotent);

    /// The message names the call, what it does and what retries it.
    #[test]
    fn messages_name_the_call_and_the_retry() {
        let cases = [
            (
                EXAMPLES.fail[0],
                "`stripe.PaymentIntent.create` moves money through Stripe (a charge, a payment, a payout) and is retried by `@tenacity.retry` on `charge`",
            ),
            (
                EXAMPLES.fail[1],
                "`stripe.PaymentIntent.capture` moves money",
            ),
            (EXAMPLES.fail[1], "is retried by this loop"),
            (
                EXAMPLES.fail[2],
                "is retried by `@backoff.on_exception` on `pay`",
            ),
            (EXAMPLES.fail[3], "is retried by `tenacity.Retrying`"),
        ];
        for (example, needle) in cases {
            let found = crate::testing::messages(&RetriedNonIdempotent, Language::Python, example);
            crate::testing::message_with(&found, needle);
        }
    }
}
