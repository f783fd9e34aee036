//! RS029: a call that moves money, retried with no idempotency key.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use crate::shared::retried_payment;
use unsnarl_model::*;

pub struct RetriedNonIdempotent;

pub static META: RuleMeta = RuleMeta {
    id: "RS029",
    name: "retried-non-idempotent-call",
    category: Category::DoubleExecution,
    severity: Severity::High,
    languages: &[Language::Rust],
    summary: "A call that moves money (async-stripe's `PaymentIntent::create`, `Refund::create`...) is the operation of a retry loop, with no idempotency key.",
    docs: r#"
A call the knowledge tables mark as not safe to repeat (async-stripe's
`PaymentIntent::create`/`capture`/`confirm`, `Charge::create`,
`Refund::create`, `Payout::create`, `Transfer::create`, `Invoice::pay`)
retried by a loop (`Ok` leaves it, `Err` goes around again). Not reported
when the function asks for an idempotent request
(`RequestStrategy::Idempotent(key)`, an idempotency key).

## Why

An error after the request was sent (a timeout, a reset connection, a
502) does not mean the payment failed: the client does not know. Stripe
may have charged the card, and the next attempt charges it again. Under
load, when timeouts are common, this turns into duplicate charges in bulk.

## Example

```rust
use stripe::{Client, CreateRefund, Refund};

async fn refund(client: &Client, params: CreateRefund<'_>) -> Result<Refund, stripe::StripeError> {
    let mut attempt = 0;
    loop {
        match Refund::create(client, params.clone()).await {
            Ok(r) => return Ok(r),
            Err(_) if attempt < 3 => {
                attempt += 1;
                tokio::time::sleep(std::time::Duration::from_millis(100 << attempt)).await;
            }
            Err(e) => return Err(e),
        }
    }
}
```

## Fix

Make the client send one idempotency key for every attempt, so Stripe
performs the refund once and answers the retries with its result.

```rust
use stripe::{Client, CreateRefund, Refund, RequestStrategy};

async fn refund(client: &Client, params: CreateRefund<'_>, key: String) -> Result<Refund, stripe::StripeError> {
    let client = client.clone().with_strategy(RequestStrategy::Idempotent(key));
    let mut attempt = 0;
    loop {
        match Refund::create(&client, params.clone()).await {
            Ok(r) => return Ok(r),
            Err(_) if attempt < 3 => {
                attempt += 1;
                tokio::time::sleep(std::time::Duration::from_millis(100 << attempt)).await;
            }
            Err(e) => return Err(e),
        }
    }
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for RetriedNonIdempotent {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for s in (0..cx.model.stmts.len() as u32).map(StmtId) {
            let Some(op) = common::retried_call(cx, s) else {
                continue;
            };
            let f = cx.tree.stmt_func(s);
            if common::test_like(cx, f) {
                continue;
            }
            let Some((e, c, entry)) = retried_payment::money_moving(cx, [op]).next() else {
                continue;
            };
            // An idempotent strategy or key set anywhere in the function.
            if retried_payment::has_idempotency_key(cx, cx.func(common::outermost(cx, f)).span) {
                continue;
            }
            out.push(retried_payment::finding(
                cx,
                &META,
                e,
                &cx.callee_display(c),
                entry,
                "this loop calls it again",
                "send one idempotency key for every attempt (`client.with_strategy(RequestStrategy::Idempotent(key))`, the key made once before the loop)",
            ));
        }
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[r#"
use stripe::{Client, CreatePaymentIntent, PaymentIntent};

async fn charge(client: &Client, params: CreatePaymentIntent<'_>) -> Result<PaymentIntent, stripe::StripeError> {
    let mut attempt = 0;
    loop {
        match PaymentIntent::create(client, params.clone()).await { // expect
            Ok(pi) => return Ok(pi),
            Err(_) if attempt < 3 => {
                attempt += 1;
                tokio::time::sleep(std::time::Duration::from_millis(100 << attempt)).await;
            }
            Err(e) => return Err(e),
        }
    }
}
"#],
    pass: &[
        r#"
use stripe::{Client, CreatePaymentIntent, PaymentIntent, RequestStrategy};

async fn charge(client: &Client, params: CreatePaymentIntent<'_>, key: String) -> Result<PaymentIntent, stripe::StripeError> {
    let client = client.clone().with_strategy(RequestStrategy::Idempotent(key));
    let mut attempt = 0;
    loop {
        match PaymentIntent::create(&client, params.clone()).await {
            Ok(pi) => return Ok(pi),
            Err(_) if attempt < 3 => {
                attempt += 1;
                tokio::time::sleep(std::time::Duration::from_millis(100 << attempt)).await;
            }
            Err(e) => return Err(e),
        }
    }
}
"#,
        // Reading is safe to repeat.
        r#"
use stripe::{Client, PaymentIntent, PaymentIntentId};

async fn status(client: &Client, id: &PaymentIntentId) -> Result<PaymentIntent, stripe::StripeError> {
    let mut attempt = 0;
    loop {
        match PaymentIntent::retrieve(client, id, &[]).await {
            Ok(pi) => return Ok(pi),
            Err(_) if attempt < 3 => {
                attempt += 1;
                tokio::time::sleep(std::time::Duration::from_millis(100 << attempt)).await;
            }
            Err(e) => return Err(e),
        }
    }
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(RetriedNonIdempotent);
}
