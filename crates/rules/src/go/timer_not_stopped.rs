//! GO028: `time.NewTicker`/`time.NewTimer` never stopped.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct TimerNotStopped;

pub static META: RuleMeta = RuleMeta {
    id: "GO028",
    name: "timer-not-stopped",
    category: Category::ResourceLeak,
    severity: Severity::Medium,
    languages: &[Language::Go],
    summary: "A `time.NewTicker`/`time.NewTimer` held in a local variable that is never stopped and not handed on.",
    docs: r#"
A ticker or timer created into a local variable on which `Stop` is never
called (directly or deferred) and which is not returned, stored or passed
to another function, nor a timer made before the function's final
endless `select` loop when the function can only return from that loop's
`case <-t.C:` (it has fired by then), nor one made before a loop the
function never leaves (`for range ticker.C { .. }` with no `break` or
`return`, ended only by `os.Exit` or a panic): it is never done with it;
nor a timer made right before an endless `select` loop that can be left
only from its `case <-t.C:` arm (collecting until the timeout): it has
fired by the time the code goes on. Nor is a ticker that a goroutine the
function starts ranges over and never leaves (`go func() { for range
ticker.C { purge() } }()`): it serves that goroutine for the life of the
process.
Not
reported when the module's Go version is known to
be 1.23 or later: the runtime then collects unreferenced timers and
tickers, stopped or not.

## Why

A ticker keeps firing until stopped; a function that returns without
stopping it leaves it running (and, before Go 1.23, never collected). A
timer that is not stopped keeps its callback or channel alive until it
fires. In code that runs per request or per loop iteration they pile up.

## Example

```go
package app

import "time"

func WaitReady(ready <-chan struct{}) bool {
	t := time.NewTimer(5 * time.Second)
	select {
	case <-ready:
		return true
	case <-t.C:
		return false
	}
}
```

## Fix

```go
package app

import "time"

func WaitReady(ready <-chan struct{}) bool {
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-ready:
		return true
	case <-t.C:
		return false
	}
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for TimerNotStopped {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        // Since Go 1.23 unreferenced timers and tickers are collected.
        if common::skip_file(cx) || matches!(common::go_version(cx), Some((1, m)) if m >= 23) {
            return;
        }
        for (i, st) in cx.model.stmts.iter().enumerate() {
            let StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } = &st.kind
            else {
                continue;
            };
            let Some(c) = cx.call(*v) else { continue };
            let what = match c.target.as_deref() {
                Some("time.NewTicker") => "ticker",
                Some("time.NewTimer") => "timer",
                _ => continue,
            };
            let [t] = targets.as_slice() else { continue };
            let Some(name) = cx.model.name_of(*t) else {
                continue;
            };
            let f = cx.tree.stmt_func(StmtId(i as u32));
            // A ticker of `main` itself (not of a closure it defines, such
            // as a handler) is one ticker, made once, that goes with the
            // process.
            if common::in_test_func(cx, f)
                || common::in_test_helper(cx, f)
                || common::is_program_main(cx, f)
            {
                continue;
            }
            let scope = common::outermost(cx, f);
            if matches!(common::name_scope(cx, f, name), common::NameScope::Package) {
                continue;
            }
            let handled = common::name_uses(cx, scope, name).into_iter().any(|u| {
                if u == *t {
                    return false;
                }
                match cx.tree.expr_parent(u) {
                    Parent::Expr(p) => match &cx.expr(p).kind {
                        // `t.Stop()` / `t.Reset()`: `t.C` is a read.
                        ExprKind::Attr { name, .. } => name == "Stop",
                        _ => true,
                    },
                    Parent::Stmt(s) => match &cx.stmt(s).kind {
                        StmtKind::Assign { targets, .. } => !targets.contains(&u),
                        _ => true,
                    },
                    _ => true,
                }
            });
            // A timer whose channel is received unconditionally has fired:
            // as a statement anywhere, or inside a top-level statement of
            // the function (`return fn(<-t.C)`).
            let channel = format!("{name}.C");
            let is_recv = |e: ExprId| {
                matches!(cx.expr(e).kind, ExprKind::Recv(ch)
                    if cx.model.dotted(ch).as_deref() == Some(channel.as_str()))
            };
            let fired = what == "timer"
                && (cx
                    .body_stmts(f)
                    .iter()
                    .copied()
                    .any(|s| matches!(&cx.stmt(s).kind, StmtKind::Expr(e) if is_recv(*e)))
                    || cx.func(f).body.iter().any(|&s| match &cx.stmt(s).kind {
                        StmtKind::Expr(e)
                        | StmtKind::Return(Some(e))
                        | StmtKind::Assign { value: Some(e), .. } => {
                            unsnarl_model::walk::exprs_under(cx.model, *e)
                                .into_iter()
                                .any(|x| is_recv(x) && cx.func_of(x) == f)
                        }
                        _ => false,
                    }));
            let at_top = cx.func(f).body.contains(&StmtId(i as u32));
            if handled
                || fired
                || (at_top && never_returns_after(cx, f, name, st.span.start))
                || owned_by_endless_goroutine(cx, f, name)
                || (what == "timer" && at_top && leaves_only_when_fired(cx, f, name))
                || (what == "timer" && next_loop_ends_when_fired(cx, StmtId(i as u32), name))
            {
                continue;
            }
            let consequence = if what == "ticker" {
                "it keeps firing forever"
            } else {
                "when another case wins, it stays alive until it fires"
            };
            out.push(cx.finding(
                &META,
                st.span,
                format!(
                    "this {what} is never stopped: {consequence}, after {} is done with it",
                    cx.func_display(f)
                ),
                // In a loop, a defer per iteration would pile up until the
                // function returns.
                if common::enclosing_loops(cx, StmtId(i as u32)).is_empty() {
                    format!("`defer {name}.Stop()` right after creating it")
                } else {
                    format!(
                        "call `{name}.Stop()` on every way out of the iteration (or create one timer before the loop and `Reset` it)"
                    )
                },
            ));
        }
    }
}

/// The function (which made the timer before its loop) ends in an endless
/// `for { select { .. } }` whose only way out is a `return` in the `case
/// <-t.C:` arm (the other arms `Reset` and
/// go around): when the function returns, the timer has fired, and there
/// is nothing left to stop.
fn leaves_only_when_fired(cx: &FileCx, f: FuncId, name: &str) -> bool {
    let Some(&last) = cx.func(f).body.last() else {
        return false;
    };
    let StmtKind::Loop { body } = &cx.stmt(last).kind else {
        return false;
    };
    let channel = format!("{name}.C");
    let own = cx.body_stmts(f);
    let in_timer_arm = |s: StmtId| in_arm_of(cx, &channel, s);
    !body.is_empty()
        && own.iter().all(|&s| match cx.stmt(s).kind {
            StmtKind::Return(_) => in_timer_arm(s),
            StmtKind::Break => !leaves_loop(cx, s, last),
            _ => true,
        })
}

/// The statement right after the timer's is an endless `for { select {
/// .. } }` that can be left only from its `case <-t.C:` arm (a `return`, or
/// a `break` out of the loop, as in "collect until the timeout"): by the
/// time the code goes on, the timer has fired.
fn next_loop_ends_when_fired(cx: &FileCx, made: StmtId, name: &str) -> bool {
    let Some(next) = crate::util::next_stmt(cx, made) else {
        return false;
    };
    let StmtKind::Loop { body } = &cx.stmt(next).kind else {
        return false;
    };
    let channel = format!("{name}.C");
    let in_timer_arm = |s: StmtId| in_arm_of(cx, &channel, s);
    let mut leaves = unsnarl_model::walk::stmts_in_block(cx.model, body)
        .into_iter()
        .filter(|&s| match cx.stmt(s).kind {
            StmtKind::Return(_) => true,
            StmtKind::Break => leaves_loop(cx, s, next),
            // `continue outer` leaves this loop too.
            StmtKind::Continue => cx.source(cx.stmt(s).span).trim() != "continue",
            _ => false,
        })
        .peekable();
    leaves.peek().is_some() && leaves.all(in_timer_arm)
}

/// `s` runs in the `case <-channel:` arm of a `select` around it.
fn in_arm_of(cx: &FileCx, channel: &str, s: StmtId) -> bool {
    cx.tree.stmt_ancestors(s).any(|a| match &cx.stmt(a).kind {
        StmtKind::Select { arms, .. } => arms.iter().any(|arm| {
            matches!(arm.kind, ArmKind::Recv { channel: ch, .. }
                if cx.model.dotted(ch).as_deref() == Some(channel))
                && crate::util::block_contains(cx, &arm.body, s)
        }),
        _ => false,
    })
}

/// A `break` leaves `the_loop` when the loop is the nearest statement it
/// can break (a `break` in a `select` or `switch` only ends that), or when
/// it names a label.
fn leaves_loop(cx: &FileCx, brk: StmtId, the_loop: StmtId) -> bool {
    cx.source(cx.stmt(brk).span).trim() != "break"
        || cx
            .tree
            .stmt_ancestors(brk)
            .find(|&a| {
                matches!(
                    cx.stmt(a).kind,
                    StmtKind::Loop { .. }
                        | StmtKind::For { .. }
                        | StmtKind::While { .. }
                        | StmtKind::Select { .. }
                        | StmtKind::Switch { .. }
                )
            })
            .is_some_and(|a| a == the_loop)
}

/// After making the timer `name` (at offset `from`), the function enters a
/// loop it never leaves (`for range ticker.C {..}`, `for {..}` or `for ;
/// true; <-t.C {..}` with no `break` or `return` in it; only `os.Exit` or
/// a panic end it), and it returns nowhere else after `from`: once the
/// timer exists, the function is never done with it, so there is no moment
/// to stop it at.
fn never_returns_after(cx: &FileCx, f: FuncId, name: &str, from: u32) -> bool {
    let channel = format!("{name}.C");
    let endless = |s: StmtId| match &cx.stmt(s).kind {
        StmtKind::Loop { .. } => true,
        StmtKind::While { cond, .. } => matches!(cx.model.literal(*cond), Some(Lit::Bool(true))),
        StmtKind::For { iter, .. } => cx.model.dotted(*iter).as_deref() == Some(channel.as_str()),
        _ => false,
    };
    let Some(&lp) = cx
        .func(f)
        .body
        .iter()
        .find(|&&s| cx.stmt(s).span.start >= from && endless(s))
    else {
        return false;
    };
    let after = cx.stmt(lp).span.end;
    cx.body_stmts(f).iter().all(|&s| match cx.stmt(s).kind {
        StmtKind::Return(_) => cx.stmt(s).span.end <= from || cx.stmt(s).span.start >= after,
        StmtKind::Break => !leaves_loop(cx, s, lp),
        // `goto` is lowered to a no-op statement.
        StmtKind::Pass => !cx.source(cx.stmt(s).span).trim_start().starts_with("goto"),
        _ => true,
    })
}

/// A goroutine the function starts, whose func literal uses the ticker
/// `name` and never leaves its loop over it (`go func() { for range
/// ticker.C { purge() } }()`): the ticker serves that goroutine for the
/// life of the process, so no one is ever done with it.
fn owned_by_endless_goroutine(cx: &FileCx, f: FuncId, name: &str) -> bool {
    let channel = format!("{name}.C");
    cx.with_nested(f).into_iter().skip(1).any(|g| {
        cx.func(g).parent == Some(f)
            && common::go_stmt_of_closure(cx, g).is_some()
            && cx.func(g).body.iter().any(|&s| {
                matches!(&cx.stmt(s).kind, StmtKind::For { iter, .. }
                    if cx.model.dotted(*iter).as_deref() == Some(channel.as_str()))
            })
            && never_returns_after(cx, g, name, cx.func(g).span.start)
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[
        r#"
package app

import "time"

func Heartbeat(stop <-chan struct{}, send func()) {
	ticker := time.NewTicker(10 * time.Second) // expect
	for {
		select {
		case <-ticker.C:
			send()
		case <-stop:
			return
		}
	}
}

func Drain(events <-chan Event, handle func(Event)) {
	for {
		idle := time.NewTimer(time.Minute) // expect
		select {
		case ev := <-events:
			handle(ev)
		case <-idle.C:
			return
		}
	}
}
"#,
        r#"
package app

import "time"

func Watchdog(beat <-chan struct{}, stop <-chan struct{}, onTimeout func()) {
	t := time.NewTimer(10 * time.Second) // expect
	for {
		select {
		case <-t.C:
			onTimeout()
			return
		case <-beat:
			t.Reset(10 * time.Second)
		case <-stop:
			return
		}
	}
}
"#,
        r#"
package app

import (
	"log"
	"time"
)

func StartKeyframes(send func() error) {
	go func() {
		ticker := time.NewTicker(3 * time.Second) // expect
		for range ticker.C {
			if err := send(); err != nil {
				log.Println(err)
				return
			}
		}
	}()
}

func Paced(items []string, send func(string)) {
	ticker := time.NewTicker(100 * time.Millisecond) // expect
	for _, it := range items {
		<-ticker.C
		send(it)
	}
}
"#,
        r#"
package main

import (
	"net/http"
	"time"
)

// A handler `main` defines runs per request: its ticker is one more each time.
func main() {
	http.HandleFunc("/watch", func(w http.ResponseWriter, r *http.Request) {
		ticker := time.NewTicker(time.Second) // expect
		for i := 0; i < 3; i++ {
			<-ticker.C
			w.Write([]byte("tick"))
		}
	})
	http.ListenAndServe(":8080", nil)
}
"#,
        r#"
package app

import "time"

// The loop is also left when the channel closes, before the timer fires.
func Gather(ch <-chan byte, timeout time.Duration) (out []byte) {
	t := time.NewTimer(timeout) // expect
loop:
	for {
		select {
		case b, ok := <-ch:
			if !ok {
				break loop
			}
			out = append(out, b)
		case <-t.C:
			break loop
		}
	}
	return out
}
"#,
        r#"
package app

import "time"

// The goroutine returns on the first failed purge: the ticker then keeps
// firing with no one reading it.
func startPurgeTicker(purge func() error) {
	ticker := time.NewTicker(time.Minute) // expect
	go func() {
		for range ticker.C {
			if err := purge(); err != nil {
				return
			}
		}
	}()
}
"#,
    ],
    pass: &[
        r#"
package tea

import "time"

type Msg interface{}

// The command waits for the timer: it has fired by the time it returns.
func Every(d time.Duration, fn func(time.Time) Msg) func() Msg {
	return func() Msg {
		t := time.NewTimer(d)
		return fn(<-t.C)
	}
}
"#,
        r#"
package app

import (
	"log"
	"time"
)

// The goroutine ranges over the ticker for the life of the process.
func startPurgeTicker(keep int, purge func(int) error) {
	if keep != 0 {
		ticker := time.NewTicker(time.Minute)
		go func() {
			for range ticker.C {
				if err := purge(keep); err != nil {
					log.Println(err)
				}
			}
		}()
	}
}
"#,
        r#"
package app

import "time"

// Collects until the timeout: the loop is left only once the timer fired.
func Drain(ch <-chan byte, timeout time.Duration) []byte {
	var out []byte
	t := time.NewTimer(timeout)
	for {
		select {
		case b := <-ch:
			out = append(out, b)
		case <-t.C:
			return out
		}
	}
}

func Gather(ch <-chan byte, timeout time.Duration) (out []byte) {
	if timeout > 0 {
		t := time.NewTimer(timeout)
	loop:
		for {
			select {
			case b := <-ch:
				out = append(out, b)
			case <-t.C:
				break loop
			}
		}
	}
	return out
}
"#,
        r#"
package main

import (
	"fmt"
	"time"
)

func main() {
	ticker := time.NewTicker(time.Second)
	for i := 0; i < 10; i++ {
		<-ticker.C
		fmt.Println("tick", i)
	}
}
"#,
        r#"
package app

import "time"

// The only way out is the timer's own case: it has fired by then.
func Watchdog(beat <-chan struct{}, onTimeout func()) {
	t := time.NewTimer(10 * time.Second)
	for {
		select {
		case <-t.C:
			onTimeout()
			return
		case <-beat:
			t.Reset(10 * time.Second)
		}
	}
}
"#,
        r#"
//go:build go1.23

package app

import "time"

func WaitReady(ready <-chan struct{}) bool {
	t := time.NewTimer(5 * time.Second)
	select {
	case <-ready:
		return true
	case <-t.C:
		return false
	}
}
"#,
        r#"
// file: app/loop_test.go
package app

import (
	"testing"
	"time"
)

func (s) TestLoop(t *testing.T) {
	timer := time.NewTimer(time.Second)
	select {
	case <-done:
	case <-timer.C:
		t.Fatal("timeout")
	}
}
"#,
        r#"
package app

import "time"

func Heartbeat(stop <-chan struct{}, send func()) {
	ticker := time.NewTicker(10 * time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-ticker.C:
			send()
		case <-stop:
			return
		}
	}
}

func Start() *time.Ticker {
	t := time.NewTicker(time.Second)
	return t
}

type Loop struct {
	t *time.Timer
}

func (l *Loop) Arm() {
	t := time.NewTimer(time.Second)
	l.t = t
	go watch(t)
}

func Wait(d time.Duration) {
	t := time.NewTimer(d)
	if !t.Stop() {
		<-t.C
	}
}
"#,
        r#"
package app

import (
	"log"
	"time"
)

// The goroutine never leaves its loop: it is never done with the ticker.
func StartKeyframes(send func() error) {
	go func() {
		ticker := time.NewTicker(3 * time.Second)
		for range ticker.C {
			if err := send(); err != nil {
				log.Println(err)
			}
		}
	}()
}

func Pump(open func() error, next func() bool) error {
	if err := open(); err != nil {
		return err
	}
	ticker := time.NewTicker(time.Second)
	for ; true; <-ticker.C {
		if !next() {
			log.Fatal("done")
		}
	}
	return nil
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(TimerNotStopped);

    /// A timer made in a loop is stopped per iteration, not deferred.
    #[test]
    fn no_defer_is_offered_inside_a_loop() {
        let fixes = crate::testing::fixes(&TimerNotStopped, Language::Go, EXAMPLES.fail[0]);
        assert_eq!(fixes.len(), 2, "{fixes:#?}");
        assert!(fixes[0].contains("`defer ticker.Stop()`"), "{fixes:#?}");
        assert!(
            !fixes[1].contains("defer") && fixes[1].contains("idle.Stop()"),
            "{fixes:#?}"
        );
    }
}
