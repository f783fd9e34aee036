//! GO002: a channel with a buffer so large it is unbounded in practice.

use crate::context::FileCx;
use crate::go::common::{self, ChanUse};
use crate::rule::{Examples, Rule, RuleMeta};
use crate::util::unbounded_reason;
use unsnarl_model::walk::Parent;
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
A result buffer is not reported either: a local channel that never leaves
the function, which reads it in a bounded loop (`for range parts { r :=
<-results }`); its slots let the workers finish after an early return.
Nor is its twin, a job list the function fills in a bounded loop and
closes before starting the workers that drain it (the buffer must hold
every job, or the filling loop would block).

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
            if !makes_channel(cx, c) || common::in_test(cx, cx.func_of(id)) {
                continue;
            }
            let Some(entry) = cx.effect(c, Effect::Queue) else {
                continue;
            };
            let Some(reason) = unbounded_reason(cx.model, c, entry) else {
                continue;
            };
            if call_scoped_buffer(cx, id) {
                continue;
            }
            out.push(cx.finding(
                &META,
                e.span,
                format!("{reason}: the buffer hides a slow consumer until memory runs out, and every item waits behind the whole backlog"),
                entry.fix.clone(),
            ));
        }
    }
}

/// `results := make(chan res, 10000)` that never leaves the function (its
/// goroutines send on it, nothing stores, passes or returns it) and that
/// the function itself reads in a bounded loop (`for range parts { r :=
/// <-results }`): one slot per result the call can produce, so workers can
/// still finish their sends after the reader returns early. Or the same
/// function's job list, filled and closed before the workers start. A
/// buffer that lives as long as the call, not a queue.
fn call_scoped_buffer(cx: &FileCx, make: ExprId) -> bool {
    let Parent::Stmt(s) = cx.tree.expr_parent(make) else {
        return false;
    };
    let StmtKind::Assign {
        targets,
        value: Some(_),
        ..
    } = &cx.stmt(s).kind
    else {
        return false;
    };
    let [t] = targets.as_slice() else {
        return false;
    };
    let Some(name) = cx.model.name_of(*t) else {
        return false;
    };
    let f = cx.func_of(make);
    let uses: Vec<ExprId> = common::name_uses(cx, f, name)
        .into_iter()
        .filter(|&u| u != *t)
        .collect();
    let stays = uses.iter().all(|&u| {
        matches!(
            common::chan_use(cx, u),
            ChanUse::Send | ChanUse::Recv | ChanUse::Range | ChanUse::Close | ChanUse::Inspect
        )
    });
    let in_bounded_loop = |u: ExprId| {
        cx.func_of(u) == f
            && cx.tree.enclosing_stmt(u).is_some_and(|st| {
                common::enclosing_loops(cx, st).first().is_some_and(|&lp| {
                    matches!(
                        cx.stmt(lp).kind,
                        StmtKind::For { .. } | StmtKind::While { .. }
                    )
                })
            })
    };
    let read_in_bounded_loop = uses
        .iter()
        .any(|&u| common::chan_use(cx, u) == ChanUse::Recv && in_bounded_loop(u));
    // The job-side twin: `jobs := make(..); for p := range parts { jobs <-
    // p }; close(jobs)`, filled and closed before any worker reads, so the
    // buffer must hold every job.
    let preloaded = || {
        let first_go = cx
            .body_stmts(f)
            .iter()
            .filter(|&&st| matches!(cx.stmt(st).kind, StmtKind::Go(_)))
            .map(|&st| cx.stmt(st).span.start)
            .min()
            .unwrap_or(u32::MAX);
        let before_workers = |u: ExprId| cx.func_of(u) == f && cx.expr(u).span.end <= first_go;
        let mut sends = uses
            .iter()
            .filter(|&&u| common::chan_use(cx, u) == ChanUse::Send)
            .peekable();
        sends.peek().is_some()
            && sends.all(|&u| in_bounded_loop(u) && before_workers(u))
            && uses
                .iter()
                .any(|&u| common::chan_use(cx, u) == ChanUse::Close && before_workers(u))
    };
    stays && (read_in_bounded_loop || preloaded())
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
    fail: &[
        r#"
package app

const backlog = 100000

func New() {
	events := make(chan Event, 1_000_000) // expect
	jobs := make(chan int, 10000) // expect
	_ = events
	_ = jobs
}
"#,
        r#"
package up

type Event struct{ Name string }

type Bus struct {
	events chan Event
}

// A long-lived bus fed for every request: a queue, not a result buffer.
func NewBus() *Bus {
	events := make(chan Event, 10000) // expect
	b := &Bus{events: events}
	go func() {
		for e := range b.events {
			slowSink(e)
		}
	}()
	return b
}

func (b *Bus) Publish(e Event) { b.events <- e }

// Fed while the workers run: a queue in front of slow consumers.
func Feed(src <-chan Event, workers int) {
	jobs := make(chan Event, 10000) // expect
	for w := 0; w < workers; w++ {
		go func() {
			for e := range jobs {
				slowSink(e)
			}
		}()
	}
	for e := range src {
		jobs <- e
	}
	close(jobs)
}
"#,
    ],
    pass: &[
        r#"
package up

type res struct {
	n   int
	err error
}

// One slot per part the call can upload: the workers finish their sends
// even when the reader returns at the first error.
func uploadAll(parts []int, workers int) error {
	work := make(chan int, len(parts))
	for _, p := range parts {
		work <- p
	}
	close(work)
	results := make(chan res, 10000)
	for w := 0; w < workers; w++ {
		go func() {
			for p := range work {
				results <- res{n: p, err: uploadPart(p)}
			}
		}()
	}
	for range parts {
		if r := <-results; r.err != nil {
			return r.err
		}
	}
	return nil
}

// Filled and closed before any worker starts: the buffer holds every job.
func uploadJobs(parts, workers int) {
	jobs := make(chan int, 10000)
	for p := 1; p <= parts; p++ {
		jobs <- p
	}
	close(jobs)
	for w := 0; w < workers; w++ {
		go func() {
			for p := range jobs {
				uploadPart(p)
			}
		}()
	}
}
"#,
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
