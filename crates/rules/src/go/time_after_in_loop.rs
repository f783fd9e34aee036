//! GO029: `time.After` in a `select` inside a loop: a timer per iteration.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
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
when the loop can abandon only a few timers: every other case leaves the
loop (a backoff wait; a case that leaves only once its channel is closed,
`if !ok { return }`, still goes around for every value) or receives from
a stop channel another select of the loop leaves on, or is the `ctx.Done()`
of a back-off whose loop goes on only while the next attempt (given that
`ctx`, or the same field: `o.ctx`) fails with one particular error, or sleeps as long as
the timer runs (`time.Sleep(d)` against `time.After(d)`); the function returns right after the select; the loop
runs a small constant number of times (`i < 20`, or `i < n` with
`const n = 3`); or it sleeps on every turn, so it cannot go around faster
than the sleep. A case that closes the channel the loop ranges over
(`for range trigger { .. close(trigger) }`) leaves the loop too, and a
timer of a constant 100 ms or less (`10 * time.Millisecond`) is gone
before more than a few can pile up. Nor when the module's
Go version is known to be 1.23 or later (timers are then collected once
unreferenced).

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
            let sel = StmtId(i as u32);
            let loops = common::enclosing_loops(cx, sel);
            if arms.len() < 2
                || loops.is_empty()
                || common::in_test_func(cx, cx.tree.stmt_func(sel))
                || common::in_test_helper(cx, cx.tree.stmt_func(sel))
                || returns_after(cx, sel, loops[0])
                || few_iterations(cx, loops[0])
                || paced(cx, loops[0])
            {
                continue;
            }
            // Another case that goes around the loop again abandons the timer;
            // cases that all leave (a backoff wait on ctx) abandon at most one.
            // A case on a channel another select of the loop leaves on (a
            // stop channel) wins at most once more before the loop ends.
            let goes_around = |a: &SelectArm| {
                !matches!(a.kind, ArmKind::Default)
                    && !leaves_on_more_than_close(cx, a)
                    && !ends_loop_condition(cx, &a.body, loops[0])
                    && !matches!(a.kind, ArmKind::Recv { channel, .. }
                        if stop_channel(cx, loops[0], sel, channel)
                            || done_fails_the_next_attempt(cx, channel, sel, loops[0]))
            };
            for (j, arm) in arms.iter().enumerate() {
                let ArmKind::Recv { channel, .. } = arm.kind else {
                    continue;
                };
                let others: Vec<&SelectArm> = arms
                    .iter()
                    .enumerate()
                    .filter(|&(k, a)| k != j && goes_around(a))
                    .map(|(_, a)| a)
                    .collect();
                if others.is_empty() {
                    continue;
                }
                let Some(c) = cx.call(channel) else { continue };
                if c.target.as_deref() != Some("time.After")
                    || c.positional(0).is_some_and(|d| short_constant(cx, d))
                {
                    continue;
                }
                // Every other case that goes around sleeps as long as the
                // timer runs (`time.Sleep(time.Second)` against
                // `time.After(time.Second)`): the abandoned timer has fired
                // before the next one is made.
                let outlasts = |a: &SelectArm| {
                    let Some(d) = c.positional(0) else {
                        return false;
                    };
                    let want = cx.source(cx.expr(d).span);
                    common::stmts_in(cx.model, &a.body).into_iter().any(|s| {
                        matches!(&cx.stmt(s).kind, StmtKind::Expr(e) if cx.call(*e).is_some_and(|k| {
                            k.target.as_deref() == Some("time.Sleep")
                                && k.positional(0).is_some_and(|x| cx.source(cx.expr(x).span) == want)
                        }))
                    })
                };
                if others.iter().all(|a| outlasts(a)) {
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

/// The block leaves the loop or the function (`return`, `break`, a call
/// that never returns).
fn leaves(cx: &FileCx, b: &Block) -> bool {
    common::stmts_in(cx.model, b)
        .into_iter()
        .any(|s| leaving(cx, s))
}

fn leaving(cx: &FileCx, s: StmtId) -> bool {
    matches!(cx.stmt(s).kind, StmtKind::Return(_) | StmtKind::Break)
        || matches!(&cx.stmt(s).kind, StmtKind::Expr(e)
            if cx.call(*e).is_some_and(common::is_noreturn_call))
}

/// The arm leaves the loop or the function, and not only once its channel
/// is closed: `case e, ok := <-events: if !ok { return }; out <- e` handles
/// a stream of values and goes around again for each one.
fn leaves_on_more_than_close(cx: &FileCx, arm: &SelectArm) -> bool {
    let ok = match arm.kind {
        ArmKind::Recv {
            binding: Some(b), ..
        } => match &cx.expr(b).kind {
            ExprKind::Collection {
                kind: CollKind::Tuple,
                elems,
                ..
            } => elems.last().and_then(|&e| cx.model.dotted(e)),
            _ => None,
        },
        _ => None,
    };
    let Some(ok) = ok else {
        return leaves(cx, &arm.body);
    };
    let on_close = |s: StmtId| {
        let mut cur = s;
        while let Parent::Stmt(p) = cx.tree.stmt_parent(cur) {
            if let StmtKind::If { cond, then, .. } = &cx.stmt(p).kind
                && then.contains(&cur)
                && matches!(&cx.expr(*cond).kind, ExprKind::Unary { op: UnOp::Not, operand }
                    if cx.model.dotted(*operand).as_deref() == Some(ok.as_str()))
            {
                return true;
            }
            if arm.body.contains(&p) {
                break;
            }
            cur = p;
        }
        false
    };
    common::stmts_in(cx.model, &arm.body)
        .into_iter()
        .any(|s| leaving(cx, s) && !on_close(s))
}

/// The longest timer abandoned without harm: one that fires within this
/// many milliseconds is gone before a loop could pile up more than a few.
const SHORT_TIMER_MS: i64 = 100;

/// A constant duration of at most [`SHORT_TIMER_MS`] (`10 *
/// time.Millisecond`, `time.Millisecond`, `500 * time.Microsecond`).
fn short_constant(cx: &FileCx, d: ExprId) -> bool {
    let unit_ns = |e: ExprId| match cx.model.resolved(e) {
        Some("time.Nanosecond") => Some(1),
        Some("time.Microsecond") => Some(1_000),
        Some("time.Millisecond") => Some(1_000_000),
        _ => None,
    };
    let int = |e: ExprId| match cx.model.literal(e) {
        Some(Lit::Int(n)) if *n >= 0 => Some(*n),
        _ => None,
    };
    let d = cx.model.strip(d);
    let ns = match &cx.expr(d).kind {
        ExprKind::Binary {
            op: BinOp::Mul,
            left,
            right,
        } => int(*left)
            .zip(unit_ns(*right))
            .or_else(|| unit_ns(*left).zip(int(*right)))
            .map(|(a, b)| a.saturating_mul(b)),
        _ => unit_ns(d),
    };
    ns.is_some_and(|ns| ns <= SHORT_TIMER_MS * 1_000_000)
}

/// The block makes the loop's condition false (`finished = true` under
/// `for !finished`, `running = false` under `for running`), or closes the
/// channel the loop ranges over (`for range trigger { .. close(trigger) }`):
/// the loop ends after this round.
fn ends_loop_condition(cx: &FileCx, b: &Block, lp: StmtId) -> bool {
    if let StmtKind::For { iter, .. } = &cx.stmt(lp).kind {
        let ranged = cx.model.dotted(*iter);
        return ranged.is_some()
            && common::stmts_in(cx.model, b).into_iter().any(|s| {
                matches!(&cx.stmt(s).kind, StmtKind::Expr(e) if cx.call(*e).is_some_and(|c| {
                    c.name == "close"
                        && c.receiver.is_none()
                        && c.positional(0).and_then(|x| cx.model.dotted(x)) == ranged
                }))
            });
    }
    let StmtKind::While { cond, .. } = &cx.stmt(lp).kind else {
        return false;
    };
    let (flag, stops_with) = match &cx.expr(*cond).kind {
        ExprKind::Unary {
            op: UnOp::Not,
            operand,
        } => (cx.model.dotted(*operand), true),
        _ => (cx.model.dotted(*cond), false),
    };
    let Some(flag) = flag else { return false };
    common::stmts_in(cx.model, b).into_iter().any(|s| {
        matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(v), .. }
            if targets.iter().any(|&t| cx.model.dotted(t).as_deref() == Some(flag.as_str()))
                && cx.model.literal(*v) == Some(&Lit::Bool(stops_with)))
    })
}

/// Another select of the same loop receives from `channel` and leaves on
/// it: the channel is the loop's stop signal, so once it fires the loop
/// ends, and the timer is abandoned at most once.
fn stop_channel(cx: &FileCx, lp: StmtId, sel: StmtId, channel: ExprId) -> bool {
    let Some(name) = cx.model.dotted(channel) else {
        return false;
    };
    let body = match &cx.stmt(lp).kind {
        StmtKind::While { body, .. } | StmtKind::For { body, .. } | StmtKind::Loop { body } => body,
        _ => return false,
    };
    common::stmts_in(cx.model, body).into_iter().any(|s| {
        s != sel
            && matches!(&cx.stmt(s).kind, StmtKind::Select { arms, .. } if arms.iter().any(|a| {
                matches!(a.kind, ArmKind::Recv { channel: c, .. }
                    if cx.model.dotted(c).as_deref() == Some(name.as_str()))
                    && leaves(cx, &a.body)
            }))
    })
}

/// `case <-ctx.Done():` in the back-off of a loop that goes on only while
/// an attempt fails with one particular error (`for err ==
/// errNoResponders && ..`), where the attempt after the select is given
/// that `ctx` (`resp, err = r.Request(ctx, ..)`): once `ctx` is done the
/// attempt fails with `ctx`'s own error and the loop ends, so the case
/// wins at most once.
fn done_fails_the_next_attempt(cx: &FileCx, channel: ExprId, sel: StmtId, lp: StmtId) -> bool {
    let Some(done) = cx
        .call(channel)
        .filter(|c| c.name == "Done" && c.args.is_empty())
    else {
        return false;
    };
    // `ctx.Done()`, or a context kept in a field (`o.ctx.Done()`).
    let Some(ctx) = done.receiver.and_then(|r| cx.model.dotted(r)) else {
        return false;
    };
    let StmtKind::While { cond, body, .. } = &cx.stmt(lp).kind else {
        return false;
    };
    // The names the condition compares for equality (`err == errX`).
    let compared: Vec<&str> = unsnarl_model::walk::exprs_under(cx.model, *cond)
        .into_iter()
        .filter_map(|e| match &cx.expr(e).kind {
            ExprKind::Binary {
                op: BinOp::Eq,
                left,
                ..
            } => cx.model.name_of(*left),
            _ => None,
        })
        .collect();
    let sel_end = cx.stmt(sel).span.end;
    !compared.is_empty()
        && common::stmts_in(cx.model, body).into_iter().any(|s| {
            cx.stmt(s).span.start >= sel_end
                && matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(v), .. }
                if targets.iter().flat_map(|&t| unsnarl_model::walk::exprs_under(cx.model, t))
                    .any(|t| cx.model.name_of(t).is_some_and(|n| compared.contains(&n)))
                    && cx.call(cx.model.strip(*v)).is_some_and(|c| {
                        c.args
                            .iter()
                            .any(|a| cx.model.dotted(a.value).as_deref() == Some(ctx.as_str()))
                    }))
        })
}

/// Between the select and the loop's next turn the function returns
/// unconditionally (`if headless { select {...} }; return nil`): the
/// select runs at most once per call, so at most one timer is abandoned.
fn returns_after(cx: &FileCx, sel: StmtId, lp: StmtId) -> bool {
    let mut s = sel;
    while s != lp {
        if crate::util::stmts_after(cx, s).iter().any(|&n| {
            matches!(cx.stmt(n).kind, StmtKind::Return(_))
                || matches!(&cx.stmt(n).kind, StmtKind::Expr(e)
                    if cx.call(*e).is_some_and(common::is_noreturn_call))
        }) {
            return true;
        }
        match cx.tree.stmt_parent(s) {
            Parent::Stmt(p) => s = p,
            _ => return false,
        }
    }
    false
}

/// A loop of a small constant trip count (`for i := 0; i < 20; i++`,
/// `for range 3`, or a bound `const n = 3`): it can abandon no more timers
/// than that.
fn few_iterations(cx: &FileCx, lp: StmtId) -> bool {
    const FEW: i64 = 100;
    // A literal, or a name the file binds only to such (`const n = 3`).
    let small = |e: ExprId| common::int_bound(cx, e).is_some_and(|n| n <= i128::from(FEW));
    match &cx.stmt(lp).kind {
        StmtKind::While { cond, .. } => match &cx.expr(*cond).kind {
            ExprKind::Binary { op, right, .. } => {
                matches!(op, BinOp::Lt | BinOp::LtE) && small(*right)
            }
            _ => false,
        },
        StmtKind::For { iter, .. } => small(*iter),
        _ => false,
    }
}

/// The loop sleeps on every turn (`time.Sleep(minGap)` among its own
/// statements): it goes around at most once per sleep, so the timers it can
/// abandon are bounded by the timeout over the sleep, not by the traffic.
fn paced(cx: &FileCx, lp: StmtId) -> bool {
    let body = match &cx.stmt(lp).kind {
        StmtKind::While { body, .. } | StmtKind::For { body, .. } | StmtKind::Loop { body } => body,
        _ => return false,
    };
    body.iter().any(|&s| {
        matches!(&cx.stmt(s).kind, StmtKind::Expr(e)
            if cx.call(*e).is_some_and(|c| c.target.as_deref() == Some("time.Sleep")))
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[
        r#"
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
"#,
        r#"
package app

import "time"

// A busy consumer: every message abandons a timer.
func Pump(msgs <-chan Msg, quit <-chan struct{}) {
	for {
		select {
		case m := <-msgs:
			handle(m)
		case <-quit:
		case <-time.After(time.Minute): // expect
			flush()
		}
	}
}

func Retry(n int, events <-chan Event) {
	for i := 0; i < n; i++ {
		select {
		case e := <-events:
			apply(e)
		case <-time.After(time.Second): // expect
		}
	}
}
"#,
        r#"
package wait

import (
	"errors"
	"time"
)

func ExpectDials(dials <-chan bool, n int) error {
	for i := 0; i < n; i++ {
		select {
		case <-dials:
		case <-time.After(5 * time.Second): // expect
			return errors.New("missing dial")
		}
	}
	return nil
}
"#,
        r#"
package pump

import (
	"log"
	"time"
)

// Leaves only once `events` is closed: every event goes around again.
func Pump(events <-chan string, out chan<- string) {
	for {
		select {
		case e, ok := <-events:
			if !ok {
				return
			}
			out <- e
		case <-time.After(5 * time.Second): // expect
			log.Print("idle")
		}
	}
}
"#,
        r#"
package client

import (
	"context"
	"time"
)

type Requester interface {
	Request(ctx context.Context, subj string) error
}

// Once ctx is done, every attempt fails with ctx's error, which is still
// not nil: the loop spins, leaving a timer behind on every turn.
func Publish(ctx context.Context, r Requester, subj string, wait time.Duration) {
	err := r.Request(ctx, subj)
	for err != nil {
		select {
		case <-ctx.Done():
		case <-time.After(wait): // expect
		}
		err = r.Request(ctx, subj)
	}
}
"#,
        r#"
package app

import "time"

func Dispatch(trigger chan struct{}, other chan struct{}, dying <-chan struct{}) {
	for range trigger {
		select {
		case <-dying:
			close(other)
		case <-time.After(backoff()): // expect
			retry()
		}
	}
}

func Drain(acks <-chan int, quit <-chan struct{}) {
	for {
		select {
		case <-acks:
		case <-quit:
			return
		case <-time.After(200 * time.Millisecond): // expect
		}
	}
}
"#,
    ],
    pass: &[
        r#"
package app

import "time"

// Closing the ranged channel is the only way another case wins: the loop
// ends, so at most one timer is abandoned.
func Dispatch(trigger chan struct{}, dying <-chan struct{}) {
	for range trigger {
		select {
		case <-dying:
			close(trigger)
		case <-time.After(backoff()):
			retry()
		}
	}
}

// Abandoned 10ms timers are gone before more than a few pile up.
func Drain(acks <-chan int, quit <-chan struct{}) {
	for {
		select {
		case <-acks:
		case <-quit:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}
"#,
        r#"
package wait

import (
	"errors"
	"time"
)

func ExpectDials(dials <-chan bool) error {
	const n = 3
	for i := 0; i < n; i++ {
		select {
		case <-dials:
		case <-time.After(5 * time.Second):
			return errors.New("missing dial")
		}
	}
	return nil
}
"#,
        r#"
// file: pool/pool_test.go
package pool

import (
	"testing"
	"time"
)

func startWorkers(t *testing.T, n int) []int {
	ready := make(chan int)
	for i := 0; i < n; i++ {
		go func(id int) { ready <- id }(i)
	}
	ids := make([]int, 0, n)
	for len(ids) < n {
		select {
		case id := <-ready:
			ids = append(ids, id)
		case <-time.After(5 * time.Second):
			t.Fatalf("worker %d did not start", len(ids))
		}
	}
	return ids
}
"#,
        r#"
package job

import (
	"errors"
	"time"
)

func await2(output <-chan error, exited <-chan error, limit time.Duration) error {
	var readErr error
	over := false
	for !over {
		select {
		case err := <-output:
			readErr = err
			over = true
		case err := <-exited:
			if err != nil {
				return err
			}
		case <-time.After(limit):
			return errors.New("timed out")
		}
	}
	return readErr
}
"#,
        r#"
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
"#,
        r#"
package app

import "time"

func (w *watcher) loop() {
	for {
		w.fetch()
		time.Sleep(500 * time.Millisecond)
		select {
		case <-w.kick:
		case <-time.After(30 * time.Second):
		}
	}
}

func (p *peer) run(stop chan struct{}) {
	for {
		select {
		case <-p.kick:
		case <-stop:
			return
		}
		if err := p.send(); err != nil {
			select {
			case <-time.After(time.Second):
			case <-stop:
			}
		}
	}
}

func (s *srv) waitReady(d time.Duration) error {
	for !s.ready() {
		if s.headless {
			select {
			case <-s.started:
			case <-time.After(d):
				return errTimeout
			}
			return nil
		}
		check()
	}
	return nil
}

func roundTrip(done <-chan struct{}) error {
	for i := 0; i < 20; i++ {
		send(i)
		select {
		case <-done:
		case <-time.After(500 * time.Millisecond):
			return errNoProgress
		}
	}
	return nil
}
"#,
        r#"
package agent

import (
	"log"
	"time"
)

// The case that beats the timer sleeps as long as the timer runs.
func closeProxies(pxs map[int]Proxy) {
	for port, px := range pxs {
		px.Close()
		select {
		case <-px.Done():
			time.Sleep(time.Second)
		case <-time.After(time.Second):
		}
		log.Printf("closed proxy %d", port)
	}
}
"#,
        r#"
package client

import (
	"context"
	"errors"
	"time"
)

var errNoResponders = errors.New("no responders")

type Requester interface {
	Request(ctx context.Context, subj string) ([]byte, error)
}

func Publish(ctx context.Context, r Requester, subj string, retries int, wait time.Duration) ([]byte, error) {
	resp, err := r.Request(ctx, subj)
	for i := 0; err == errNoResponders && (i < retries || retries < 0); i++ {
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		resp, err = r.Request(ctx, subj)
	}
	return resp, err
}
"#,
        r#"
package client

import (
	"context"
	"errors"
	"time"
)

var errNoResponders = errors.New("no responders")

type pubOpts struct {
	ctx   context.Context
	rwait time.Duration
	rnum  int
}

func publish(r Requester, o *pubOpts, subj string) ([]byte, error) {
	resp, err := r.Request(o.ctx, subj)
	for i := 0; err == errNoResponders && i < o.rnum; i++ {
		select {
		case <-o.ctx.Done():
		case <-time.After(o.rwait):
		}
		resp, err = r.Request(o.ctx, subj)
	}
	return resp, err
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(TimeAfterInLoop);
}
