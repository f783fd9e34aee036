//! GO036: a call that moves money, retried with no idempotency key.

use super::common;
use super::retry_without_backoff::retry_loop;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use crate::shared::retried_payment;
use unsnarl_model::walk::calls_in_block;
use unsnarl_model::*;

pub struct RetriedNonIdempotent;

pub static META: RuleMeta = RuleMeta {
    id: "GO036",
    name: "retried-non-idempotent-call",
    category: Category::DoubleExecution,
    severity: Severity::High,
    languages: &[Language::Go],
    summary: "A call that moves money (stripe-go's `paymentintent.New`, `charge.New`, `refund.New`...) is retried by a retry loop with no idempotency key.",
    docs: r#"
A call the knowledge tables mark as not safe to repeat (stripe-go's
`paymentintent.New`/`Capture`/`Confirm`, `charge.New`/`Capture`,
`refund.New`, `payout.New`, `transfer.New`, `invoice.Pay`) inside a retry
loop (one that leaves on `err == nil` and tries again otherwise). Not
reported when the function sets an idempotency key
(`params.SetIdempotencyKey(...)`, `IdempotencyKey:`).

## Why

An error after the request was sent (a timeout, a reset connection, a
502) does not mean the payment failed: the client does not know. Stripe
may have charged the card, and the next attempt charges it again. Under
load, when timeouts are common, this turns into duplicate charges in bulk.

## Example

```go
package billing

import (
	"time"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/paymentintent"
)

func Charge(customer string, amount int64) (*stripe.PaymentIntent, error) {
	params := &stripe.PaymentIntentParams{Customer: stripe.String(customer), Amount: stripe.Int64(amount)}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		pi, err := paymentintent.New(params)
		if err == nil {
			return pi, nil
		}
		lastErr = err
		time.Sleep(time.Duration(attempt+1) * time.Second)
	}
	return nil, lastErr
}
```

## Fix

Set an idempotency key once, before the loop, so Stripe performs the
payment once and answers the retries with its result.

```go
package billing

import (
	"time"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/paymentintent"
)

func Charge(customer string, amount int64, key string) (*stripe.PaymentIntent, error) {
	params := &stripe.PaymentIntentParams{Customer: stripe.String(customer), Amount: stripe.Int64(amount)}
	params.SetIdempotencyKey(key)
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		pi, err := paymentintent.New(params)
		if err == nil {
			return pi, nil
		}
		lastErr = err
		time.Sleep(time.Duration(attempt+1) * time.Second)
	}
	return nil, lastErr
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
        if common::skip_file(cx) {
            return;
        }
        for s in (0..cx.model.stmts.len() as u32).map(StmtId) {
            let Some(body) = retry_loop(cx, s) else {
                continue;
            };
            // A key set anywhere in the function, often on the params
            // before the loop.
            let f = cx.tree.stmt_func(s);
            if retried_payment::has_idempotency_key(cx, cx.func(f).span) {
                continue;
            }
            for (e, c, entry) in retried_payment::money_moving(cx, calls_in_block(cx.model, body)) {
                out.push(retried_payment::finding(
                    cx,
                    &META,
                    e,
                    common::short_name(&cx.callee_display(c)),
                    entry,
                    "this loop calls it again",
                    "set an idempotency key once, before the loop (`params.SetIdempotencyKey(key)`), so the retries are answered with the first result",
                ));
            }
        }
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[r#"
package billing

import (
	"time"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/refund"
)

func Refund(charge string) (*stripe.Refund, error) {
	params := &stripe.RefundParams{Charge: stripe.String(charge)}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		r, err := refund.New(params) // expect
		if err == nil {
			return r, nil
		}
		lastErr = err
		time.Sleep(time.Duration(1<<attempt) * time.Second)
	}
	return nil, lastErr
}
"#],
    pass: &[
        r#"
package billing

import (
	"time"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/refund"
)

func Refund(charge, key string) (*stripe.Refund, error) {
	params := &stripe.RefundParams{Charge: stripe.String(charge)}
	params.SetIdempotencyKey(key)
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		r, err := refund.New(params)
		if err == nil {
			return r, nil
		}
		lastErr = err
		time.Sleep(time.Duration(1<<attempt) * time.Second)
	}
	return nil, lastErr
}
"#,
        // Reading is safe to repeat; a payment made once is not retried.
        r#"
package billing

import (
	"time"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/paymentintent"
)

func Status(id string) (*stripe.PaymentIntent, error) {
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		pi, err := paymentintent.Get(id, nil)
		if err == nil {
			return pi, nil
		}
		lastErr = err
		time.Sleep(time.Duration(1<<attempt) * time.Second)
	}
	return nil, lastErr
}

func Pay(params *stripe.PaymentIntentParams) (*stripe.PaymentIntent, error) {
	return paymentintent.New(params)
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(RetriedNonIdempotent);

    #[test]
    fn the_message_names_the_call_by_its_package() {
        let found = crate::testing::messages(&RetriedNonIdempotent, Language::Go, EXAMPLES.fail[0]);
        crate::testing::message_with(
            &found,
            "`refund.New` moves money through Stripe (a charge, a payment, a payout) and this loop calls it again on errors",
        );
    }
}
