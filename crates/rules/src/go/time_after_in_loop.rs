//! GO029: `time.After` in a `select` inside a loop: a timer per iteration.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct TimeAfterInLoop;

pub static META: RuleMeta = RuleMeta {
    id: "GO029",
    name: "time-after-in-loop",
    category: Category::ResourceLeak,
    severity: Severity::Medium,
    languages: &[Language::Go],
    summary: "`case <-time.After(d):` in a `select` inside a loop: every iteration allocates a timer that lives until it fires.",
    docs: r#"
A `select` inside a `for` loop has a `case <-time.After(d):` arm. Each
iteration creates a new timer; when another case wins and the loop goes
on, that timer is abandoned but stays alive until it fires. Not reported
when every other case leaves the loop (a backoff wait), nor when the
module's Go version is known to be 1.23 or later (timers are then
collected once unreferenced).

## Why

A busy loop (a message every millisecond with a one-minute timeout) keeps
tens of thousands of pending timers alive at once: memory grows, and the
runtime spends its time managing timers. It also resets the timeout every
iteration, which is rarely what was meant for an overall deadline.

## Example

```go
package app

import "time"

func Consume(msgs <-chan Msg) {
	for {
		select {
		case m := <-msgs:
			handle(m)
		case <-time.After(time.Minute):
			return
		}
	}
}
```

## Fix

Create one timer and reset it, or use a context deadline for an overall
limit.

```go
package app

import "time"

func Consume(msgs <-chan Msg) {
	idle := time.NewTimer(time.Minute)
	defer idle.Stop()
	for {
		select {
		case m := <-msgs:
			handle(m)
			idle.Reset(time.Minute)
		case <-idle.C:
			return
		}
	}
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for TimeAfterInLoop {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        if matches!(common::go_version(cx), Some((1, m)) if m >= 23) {
            return;
        }
        for (i, st) in cx.model.stmts.iter().enumerate() {
            let StmtKind::Select { arms, .. } = &st.kind else {
                continue;
            };
            if arms.len() < 2
                || common::enclosing_loops(cx, StmtId(i as u32)).is_empty()
                || common::in_test_func(cx, cx.tree.stmt_func(StmtId(i as u32)))
            {
                continue;
            }
            // Another case that goes around the loop again abandons the timer;
            // cases that all leave (a backoff wait on ctx) abandon at most one.
            let loops_again = |skip: usize| {
                arms.iter().enumerate().any(|(j, a)| {
                    j != skip
                        && !matches!(a.kind, ArmKind::Default)
                        && !common::stmts_in(cx.model, &a.body).into_iter().any(|s| {
                            matches!(cx.stmt(s).kind, StmtKind::Return(_) | StmtKind::Break)
                                || matches!(&cx.stmt(s).kind, StmtKind::Expr(e)
                                    if cx.call(*e).is_some_and(common::is_noreturn_call))
                        })
                })
            };
            for (j, arm) in arms.iter().enumerate() {
                let ArmKind::Recv { channel, .. } = arm.kind else {
                    continue;
                };
                if !loops_again(j) {
                    continue;
                }
                let Some(c) = cx.call(channel) else { continue };
                if c.target.as_deref() != Some("time.After") {
                    continue;
                }
                out.push(cx.finding(
                    &META,
                    cx.expr(channel).span,
                    "`time.After` in a select inside a loop creates a new timer on every iteration; each one the other cases win against stays alive until it fires, so a busy loop piles up timers",
                    "create one `time.NewTimer` before the loop (`defer t.Stop()`), `Reset` it when needed and select on `t.C`; for an overall limit use a context deadline",
                ));
            }
        }
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[r#"
package app

import "time"

func Forward(in <-chan Msg, out chan<- Msg) {
	for m := range in {
		select {
		case out <- m:
		case <-time.After(30 * time.Second): // expect
			drop(m)
		}
	}
}
"#],
    pass: &[r#"
package app

import (
	"context"
	"time"
)

func Once(ctx context.Context, ready <-chan struct{}) error {
	select {
	case <-ready:
		return nil
	case <-time.After(5 * time.Second):
		return errTimeout
	}
}

func Backoff(ctx context.Context, n int) error {
	for i := 0; i < n; i++ {
		<-time.After(time.Second)
		select {
		case <-time.After(backoff(i)):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(TimeAfterInLoop);
}
