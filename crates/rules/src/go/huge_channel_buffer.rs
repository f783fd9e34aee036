//! GO002: a channel with a buffer so large it is unbounded in practice.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use crate::util::unbounded_reason;
use unsnarl_model::*;

pub struct HugeChannelBuffer;

pub static META: RuleMeta = RuleMeta {
    id: "GO002",
    name: "huge-channel-buffer",
    category: Category::UnboundedQueue,
    severity: Severity::Medium,
    languages: &[Language::Go],
    summary: "`make(chan T, N)` with a constant buffer of 10,000 or more.",
    docs: r#"
A channel made with a constant buffer of 10,000 elements or more, outside
test code (a test sends what it sends, and its channel lives for one test).

## Why

A huge buffer is chosen "to be safe", but it only delays the moment the
producer notices the consumer is behind: meanwhile memory grows and every
item waits behind everything already queued (depth divided by throughput).
When the buffer finally fills, the same blocking happens, only later and
with far more work lost on a crash.

## Example

```go
package app

func NewBus() chan Event {
	return make(chan Event, 1_000_000)
}
```

## Fix

Keep the buffer small and decide what a full channel means: block the
sender (backpressure), or select with `ctx.Done()` / `default` to shed.

```go
package app

func NewBus() chan Event {
	return make(chan Event, 128)
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for HugeChannelBuffer {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        // A test's channel lives for one test, which sends what it sends:
        // the buffer costs nothing in production and no backlog builds.
        for (id, c) in cx.calls_to(&["make"]) {
            let e = cx.expr(id);
            if !makes_channel(cx, c) || crate::go::common::in_test(cx, cx.func_of(id)) {
                continue;
            }
            let Some(entry) = cx.effect(c, Effect::Queue) else {
                continue;
            };
            let Some(reason) = unbounded_reason(cx.model, c, entry) else {
                continue;
            };
            out.push(cx.finding(
                &META,
                e.span,
                format!("{reason}: the buffer hides a slow consumer until memory runs out, and every item waits behind the whole backlog"),
                entry.fix.clone(),
            ));
        }
    }
}

/// `make(chan T, ...)`: the first argument is a channel type.
fn makes_channel(cx: &FileCx, c: &Call) -> bool {
    c.positional(0).is_some_and(|t| {
        let text = cx.source(cx.expr(t).span).trim_start();
        text.starts_with("chan") || text.starts_with("<-chan")
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[r#"
package app

const backlog = 100000

func New() {
	events := make(chan Event, 1_000_000) // expect
	jobs := make(chan int, 10000) // expect
	_ = events
	_ = jobs
}
"#],
    pass: &[
        r#"
package app

func New(n int) {
	a := make(chan int, 128)
	b := make(chan int)
	c := make(chan int, n)
	buf := make([]byte, 1<<20)
	d := make(map[string]int, 100000)
	_, _, _, _, _ = a, b, c, buf, d
}
"#,
        r#"
// file: sub/sub_test.go
package sub

import "testing"

func TestChanSubscribe(t *testing.T) {
	const toSend = 10
	mch := make(chan []byte, 16536)
	for i := 0; i < toSend; i++ {
		mch <- []byte("x")
	}
	for i := 0; i < toSend; i++ {
		<-mch
	}
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(HugeChannelBuffer);
}
