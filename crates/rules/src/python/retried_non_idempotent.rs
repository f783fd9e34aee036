//! PY040: a call that is not safe to repeat, retried when its outcome is
//! unknown, with no idempotency key.

use crate::context::FileCx;
use crate::python::retry_without_backoff::retry_loop_body;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::calls_in_block;
use unsnarl_model::*;

pub struct RetriedNonIdempotent;

pub static META: RuleMeta = RuleMeta {
    id: "PY040",
    name: "retried-non-idempotent-call",
    category: Category::DoubleExecution,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "An HTTP POST/PATCH or a payment call is retried (a retry loop, `@retry`, `@backoff.on_exception`) on errors that can come after the server acted, with no idempotency key.",
    docs: r#"
A call the knowledge tables mark as not safe to repeat (an HTTP `POST` or
`PATCH` through requests, httpx or aiohttp, a Stripe `create`) made inside
a retry: a retry loop whose `except` catches timeouts or broad errors, a
function decorated with tenacity's `@retry`, `@backoff.on_exception` or
`@stamina.retry`, or a `for attempt in Retrying(...)` block. Not reported
when the call carries an idempotency key (an `Idempotency-Key` header or
the API's `idempotency_key=`), or when only errors raised before the
request left are retried (connection refused, connect timeouts).

## Why

A timeout, a reset connection or a 502 after the request was sent does
not mean it failed: it means the client does not know. The server may
have charged the card, created the order or sent the email, and the retry
does it again. Under load, when timeouts are common, this turns into
duplicate charges and orders in bulk.

## Example

```python
import requests
from tenacity import retry, stop_after_attempt, wait_random_exponential

@retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=5))
def charge(order):
    r = requests.post("https://pay.example/charges", json=order, timeout=10)
    r.raise_for_status()
    return r.json()
```

## Fix

Send an idempotency key that stays the same across the attempts, so the
server does the work once and answers the retries with the first result.

```python
import requests
from tenacity import retry, stop_after_attempt, wait_random_exponential

@retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=5))
def charge(order, key):
    r = requests.post(
        "https://pay.example/charges",
        json=order,
        headers={"Idempotency-Key": key},
        timeout=10,
    )
    r.raise_for_status()
    return r.json()
```
"#,
    examples: &EXAMPLES,
};

impl Rule for RetriedNonIdempotent {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        let retried = retried_blocks(cx);
        for (block, how, region) in retried {
            // An idempotency key built anywhere around the retry (a header
            // dict, a key argument) is taken as handling it.
            if cx.source(region).to_ascii_lowercase().contains("idempot") {
                continue;
            }
            for e in calls_in_block(cx.model, block) {
                let Some(c) = cx.call(e) else { continue };
                let Some(entry) = cx.effect(c, Effect::NonIdempotent) else {
                    continue;
                };
                if entry
                    .keyword
                    .as_deref()
                    .is_some_and(|k| c.kwarg(k).is_some())
                {
                    continue;
                }
                out.push(cx.finding(
                    &META,
                    cx.expr(e).span,
                    format!(
                        "`{}` {} and is retried by {how} on errors that can come after the server acted (a timeout, a reset connection): without an idempotency key a retry can do it twice, a double charge or a duplicate order",
                        cx.callee_display(c),
                        entry.what
                    ),
                    "send an idempotency key that stays the same across attempts (an `Idempotency-Key` header, `idempotency_key=`), or retry only errors raised before the request was sent (connection refused, connect timeouts)",
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
        let span = cx.stmt(s).span;
        // `for attempt in Retrying(...): with attempt: ...`
        if let StmtKind::For { iter, body, .. } = &cx.stmt(s).kind
            && let Some(c) = cx.call(cx.model.strip(*iter))
            && c.target
                .as_deref()
                .is_some_and(|t| matches!(t, "tenacity.Retrying" | "tenacity.AsyncRetrying"))
        {
            if !only_unsent_errors(cx, cx.expr(*iter).span) {
                out.push((body, "`tenacity.Retrying`".to_string(), span));
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
        let called: Vec<(ExprId, &str)> = func
            .decorator_calls
            .iter()
            .filter_map(|&d| {
                let t = cx.call(d)?.target.as_deref()?;
                is_retry_decorator(t).then_some((d, t))
            })
            .collect();
        let decorator = match called.first() {
            Some(&(d, t)) => {
                if only_unsent_errors(cx, cx.expr(d).span) {
                    continue;
                }
                t.to_string()
            }
            None => match func.decorators.iter().find(|d| is_retry_decorator(d)) {
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

fn is_retry_decorator(target: &str) -> bool {
    matches!(
        target,
        "tenacity.retry" | "backoff.on_exception" | "stamina.retry" | "retrying.retry"
    )
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
import requests
from tenacity import retry, stop_after_attempt, wait_random_exponential

@retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=5))
def charge(order):
    r = requests.post("https://pay.example/charges", json=order, timeout=10)  # expect
    r.raise_for_status()
    return r.json()
"#,
        r#"
import asyncio
import random
import httpx

async def create_order(client: httpx.AsyncClient, order):
    for attempt in range(5):
        try:
            r = await client.post("/orders", json=order, timeout=5)  # expect
            return r.json()
        except httpx.TimeoutException:
            await asyncio.sleep(random.uniform(0, 2 ** attempt))
    raise RuntimeError("gave up")
"#,
        r#"
import backoff
import stripe

@backoff.on_exception(backoff.expo, stripe.error.APIConnectionError, max_tries=4)
def pay(customer, amount):
    return stripe.PaymentIntent.create(customer=customer, amount=amount, currency="eur")  # expect
"#,
        r#"
import httpx
from tenacity import Retrying, stop_after_attempt

def create(order):
    for attempt in Retrying(stop=stop_after_attempt(3)):
        with attempt:
            return httpx.post("https://api.example/orders", json=order, timeout=5)  # expect
"#,
    ],
    pass: &[
        // The key makes the retries safe.
        r#"
import requests
from tenacity import retry, stop_after_attempt, wait_random_exponential

@retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=5))
def charge(order, key):
    headers = {"Idempotency-Key": key}
    r = requests.post("https://pay.example/charges", json=order, headers=headers, timeout=10)
    r.raise_for_status()
    return r.json()
"#,
        r#"
import backoff
import stripe

@backoff.on_exception(backoff.expo, stripe.error.APIConnectionError, max_tries=4)
def pay(customer, amount, key):
    return stripe.PaymentIntent.create(
        customer=customer, amount=amount, currency="eur", idempotency_key=key
    )
"#,
        // Only errors raised before the request left are retried.
        r#"
import asyncio
import random
import httpx

async def create_order(client: httpx.AsyncClient, order):
    for attempt in range(5):
        try:
            r = await client.post("/orders", json=order, timeout=5)
            return r.json()
        except httpx.ConnectError:
            await asyncio.sleep(random.uniform(0, 2 ** attempt))
    raise RuntimeError("gave up")
"#,
        r#"
import httpx
from tenacity import retry, retry_if_exception_type, stop_after_attempt

@retry(retry=retry_if_exception_type(httpx.ConnectError), stop=stop_after_attempt(3))
def create(order):
    return httpx.post("https://api.example/orders", json=order, timeout=5)
"#,
        // GET is safe to repeat.
        r#"
import requests
from tenacity import retry, stop_after_attempt, wait_random_exponential

@retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=5))
def fetch(order_id):
    return requests.get(f"https://api.example/orders/{order_id}", timeout=10).json()
"#,
        // A POST sent once, outside any retry.
        r#"
import requests

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
                "`requests.post` sends an HTTP POST/PATCH and is retried by `@tenacity.retry` on `charge`",
            ),
            (
                EXAMPLES.fail[1],
                "`httpx.AsyncClient.post` sends an HTTP POST/PATCH and is retried by this loop",
            ),
            (
                EXAMPLES.fail[2],
                "creates a Stripe object (a charge, a payment, a refund) and is retried by `@backoff.on_exception` on `pay`",
            ),
        ];
        for (example, needle) in cases {
            let found = crate::testing::messages(&RetriedNonIdempotent, Language::Python, example);
            crate::testing::message_with(&found, needle);
        }
    }
}
