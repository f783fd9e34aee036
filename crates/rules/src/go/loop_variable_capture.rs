//! GO015: loop variables captured by `go`/`defer` closures before Go 1.22.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct LoopVariableCapture;

pub static META: RuleMeta = RuleMeta {
    id: "GO015",
    name: "loop-variable-capture",
    category: Category::SharedStateRace,
    severity: Severity::High,
    languages: &[Language::Go],
    summary: "A goroutine or deferred func literal uses the loop variable, in a module whose `go.mod` says `go` < 1.22 (one variable shared by every iteration).",
    docs: r#"
A func literal started with `go`, deferred with `defer`, or handed to an
errgroup's `Go` inside a loop refers to the loop's variable, and the code
is built with Go older than 1.22 (the `go` line of `go.mod`, or a
`//go:build go1.N` constraint on the file). Unknown versions are not
reported, and neither is a goroutine the same iteration waits for before
it can go on (a `wg.Wait()`, or a receive from a channel the goroutine
uses, right after it; or a `wg.Wait()` after an inner loop that starts it,
before the captured outer variable changes; a select arm that gives up
must end the test, also through a `Fatal..` helper such as
`testutil.FatalStack(t, ..)`).

## Why

Before Go 1.22 a `for` loop has one variable for all iterations. The
goroutines read it while the loop keeps changing it: most of them see a
later value (often the last), some items are processed twice and others
never, and the unsynchronized read is a data race. Deferred closures all
see the final value.

## Example

```go
//go:build go1.21

package app

func Start(jobs []Job) {
	for _, j := range jobs {
		go func() {
			j.Run()
		}()
	}
}
```

## Fix

Pass the variable as an argument (or copy it with `j := j` inside the
loop), or move the module to Go 1.22 or later.

```go
//go:build go1.21

package app

func Start(jobs []Job) {
	for _, j := range jobs {
		go func(j Job) {
			j.Run()
		}(j)
	}
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for LoopVariableCapture {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        match common::go_version(cx) {
            Some((1, minor)) if minor < 22 => {}
            _ => return,
        }
        for g in cx.model.function_ids() {
            if cx.func(g).kind != FnKind::Closure {
                continue;
            }
            let Some((stmt, how)) = launch(cx, g) else {
                continue;
            };
            for lp in common::enclosing_loops(cx, stmt) {
                if how != DEFERRED && joined_in_iteration(cx, stmt, lp, g) {
                    continue;
                }
                for var in loop_vars(cx, lp) {
                    if cx.func(g).params.iter().any(|p| p.name == var)
                        || rebound_in_body(cx, lp, stmt, &var)
                    {
                        continue;
                    }
                    let Some(first) = first_use(cx, g, &var) else {
                        continue;
                    };
                    // A deferred call runs after the loop, on this goroutine:
                    // it sees the final value, but races with nothing.
                    let effect = if how == DEFERRED {
                        "so every deferred call sees the value of the last iteration"
                    } else {
                        "so the closure sees a later value (usually the last) and races with the loop updating it"
                    };
                    out.push(cx.finding(
                        &META,
                        cx.expr(first).span,
                        format!(
                            "loop variable `{var}` is captured by {how}: before Go 1.22 the loop has a single `{var}` for all iterations, {effect}"
                        ),
                        format!(
                            "pass `{var}` as an argument of the func literal, or add `{var} := {var}` at the top of the loop body (or build with Go 1.22+)"
                        ),
                    ));
                }
            }
        }
    }
}

const DEFERRED: &str = "a deferred function";

/// The goroutine started by `go_stmt` is joined before an iteration of
/// `lp` (the loop whose variable it captures) can go on: right after it
/// (see [`joined_right_after`]), or after an inner loop that starts it,
/// with `wg.Wait()` (which waits for every goroutine the inner loop
/// started; a single receive would wait for one).
fn joined_in_iteration(cx: &FileCx, go_stmt: StmtId, lp: StmtId, g: FuncId) -> bool {
    let mut at = go_stmt;
    let mut only_wait = false;
    loop {
        if joined_right_after(cx, at, g, only_wait) {
            return true;
        }
        let Parent::Stmt(p) = cx.tree.stmt_parent(at) else {
            return false;
        };
        if p == lp {
            return false;
        }
        only_wait |= matches!(
            cx.stmt(p).kind,
            StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::Loop { .. }
        );
        at = p;
    }
}

/// The goroutine started by `go_stmt` is waited for before the iteration
/// can go on: a statement after it in the same block calls `wg.Wait()`,
/// receives from a channel the goroutine uses (`<-done`), or selects on
/// such a receive with every other arm ending the test or the function
/// (with `only_wait`, only `wg.Wait()` counts).
/// The loop variable cannot change while it runs.
fn joined_right_after(cx: &FileCx, go_stmt: StmtId, g: FuncId, only_wait: bool) -> bool {
    let used = |ch: ExprId| {
        cx.model.name_of(cx.model.strip(ch)).is_some_and(|n| {
            cx.body_exprs(g)
                .iter()
                .any(|&e| cx.model.name_of(e) == Some(n))
        })
    };
    let ends = |b: &Block| {
        b.last().is_some_and(|&l| match &cx.stmt(l).kind {
            StmtKind::Return(_) => true,
            StmtKind::Expr(e) => cx.call(*e).is_some_and(common::is_noreturn_call),
            _ => false,
        })
    };
    let is_wait = |e: ExprId| {
        cx.call(cx.model.strip(e))
            .is_some_and(|c| c.name == "Wait" && c.receiver.is_some() && c.args.is_empty())
    };
    let joins = |s: StmtId| match &cx.stmt(s).kind {
        StmtKind::Expr(e) if only_wait => is_wait(*e),
        _ if only_wait => false,
        StmtKind::Select { arms, .. } => {
            arms.iter()
                .any(|a| matches!(a.kind, ArmKind::Recv { channel, .. } if used(channel)))
                && arms.iter().all(|a| {
                    matches!(a.kind, ArmKind::Recv { channel, .. } if used(channel))
                        || ends(&a.body)
                })
        }
        StmtKind::Expr(e) | StmtKind::Assign { value: Some(e), .. } => {
            match &cx.expr(cx.model.strip(*e)).kind {
                ExprKind::Recv(ch) => used(*ch),
                ExprKind::Call(_) => is_wait(*e),
                _ => false,
            }
        }
        _ => false,
    };
    // Up to the join, nothing may leave the iteration early.
    for &s in crate::util::stmts_after(cx, go_stmt) {
        if joins(s) {
            return true;
        }
        // (A `continue` of an inner loop counts too: conservative.)
        if common::stmts_in(cx.model, &vec![s])
            .into_iter()
            .any(|x| matches!(cx.stmt(x).kind, StmtKind::Continue | StmtKind::Break))
        {
            return false;
        }
    }
    false
}

/// How closure `g` outlives the iteration: `go`, `defer`, or a group's `Go`.
fn launch(cx: &FileCx, g: FuncId) -> Option<(StmtId, &'static str)> {
    if let Some(s) = common::go_stmt_of_closure(cx, g) {
        return Some((s, "a goroutine"));
    }
    let Parent::Expr(site) = cx.tree.func_site(g) else {
        return None;
    };
    let s = cx.tree.enclosing_stmt(site)?;
    match cx.stmt(s).kind {
        StmtKind::Defer(call) => {
            let c = cx.call(call)?;
            (cx.model.strip(c.func) == site).then_some((s, DEFERRED))
        }
        StmtKind::Expr(call) => {
            let c = cx.call(call)?;
            (common::is_group_go(cx, c) && c.args.iter().any(|a| a.value == site))
                .then_some((s, "a goroutine of the group"))
        }
        _ => None,
    }
}

/// The variables a loop declares: range targets (`:=`), or the `:=` of a
/// three-clause loop's init statement.
fn loop_vars(cx: &FileCx, lp: StmtId) -> Vec<String> {
    match &cx.stmt(lp).kind {
        StmtKind::For {
            target: Some(t), ..
        } => {
            let text = cx.source(cx.stmt(lp).span);
            let head = text.split('{').next().unwrap_or("");
            if !head.contains(":=") {
                return Vec::new();
            }
            common::names_in_target(cx, *t)
                .into_iter()
                .filter(|n| *n != "_")
                .map(str::to_string)
                .collect()
        }
        StmtKind::While { .. } | StmtKind::Loop { .. } => {
            // `for i := 0; ...` lowers as Block[init, loop].
            let Parent::Stmt(p) = cx.tree.stmt_parent(lp) else {
                return Vec::new();
            };
            let StmtKind::Block(b) = &cx.stmt(p).kind else {
                return Vec::new();
            };
            if b.len() != 2 || b[1] != lp || cx.stmt(p).span != cx.stmt(lp).span {
                return Vec::new();
            }
            match &cx.stmt(b[0]).kind {
                StmtKind::Assign {
                    targets,
                    op: AssignOp::Declare { .. },
                    ..
                } => targets
                    .iter()
                    .flat_map(|&t| common::names_in_target(cx, t))
                    .map(str::to_string)
                    .collect(),
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

/// `v := v` (or any `:=` of the name) in the loop body before the launch.
fn rebound_in_body(cx: &FileCx, lp: StmtId, launch: StmtId, var: &str) -> bool {
    let body = match &cx.stmt(lp).kind {
        StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::Loop { body } => body,
        _ => return false,
    };
    let at = cx.stmt(launch).span.start;
    common::stmts_in(cx.model, body).into_iter().any(|s| {
        cx.stmt(s).span.start < at
            && matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, op: AssignOp::Declare { .. }, .. }
                if targets.iter().any(|&t| common::names_in_target(cx, t).contains(&var)))
    })
}

/// The first use of `var` in the closure (or closures nested in it) that
/// refers to the captured variable.
fn first_use(cx: &FileCx, g: FuncId, var: &str) -> Option<ExprId> {
    cx.with_nested(g)
        .into_iter()
        .flat_map(|h| cx.body_exprs(h).iter().copied())
        .filter(|&e| cx.model.name_of(e) == Some(var))
        .filter(|&e| match common::name_scope(cx, cx.func_of(e), var) {
            // Declared outside the closure: captured from the loop.
            common::NameScope::Captured(f) => {
                f != g && !cx.tree.func_ancestors(cx.model, f).any(|a| a == g)
            }
            _ => false,
        })
        .min_by_key(|&e| cx.expr(e).span.start)
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[r#"
//go:build go1.21

package app

import (
	"sync"
	"testing"
	"time"
)

func Start(jobs []Job) {
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j.Run() // expect
		}()
	}
	wg.Wait()
}

func Close(files []File) {
	for i := 0; i < len(files); i++ {
		defer func() { files[i].Close() }() // expect
	}
}

func Probe(hosts []string) {
	for _, h := range hosts {
		done := make(chan bool)
		go func() {
			done <- ping(h) // expect
		}()
		if skip(h) {
			continue
		}
		<-done
	}
}

func Hammer(users []string) {
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(len(users))
		for _, u := range users {
			go func(user string) {
				defer wg.Done()
				login(user, i) // expect
			}(u)
		}
	}
	wg.Wait()
}

func Blocked(t *testing.T, ops []func()) {
	for i, op := range ops {
		done := make(chan struct{}, 1)
		go func() { op(); done <- struct{}{} }() // expect
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("op %d: not unblocked", i)
		}
	}
}
"#],
    pass: &[
        r#"
//go:build go1.21

package app

func Start(jobs []Job) {
	for _, j := range jobs {
		go func(j Job) {
			j.Run()
		}(j)
	}
	for _, j := range jobs {
		j := j
		go func() { j.Run() }()
	}
}
"#,
        r#"
//go:build go1.21

package app

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"example.com/app/testutil"
)

func TestEach(t *testing.T, cases []Case) {
	for i := range cases {
		done := make(chan struct{})
		go func() {
			cases[i].Run()
			done <- struct{}{}
		}()
		select {
		case <-done:
		case <-time.After(time.Second):
			t.Fatalf("case %d timed out", i)
		}
	}
	for _, c := range cases {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Run()
		}()
		wg.Wait()
	}
}

// The outer iteration waits for every goroutine of the inner loop before
// i changes.
func TestHammer(t *testing.T, users []string) {
	for i := 0; i < 10; i++ {
		var wg sync.WaitGroup
		wg.Add(len(users))
		for _, u := range users {
			go func(user string) {
				defer wg.Done()
				login(user, i)
			}(u)
		}
		wg.Wait()
	}
}

func TestBlocked(t *testing.T, ops []func()) {
	for i, op := range ops {
		done := make(chan struct{}, 1)
		go func() { op(); done <- struct{}{} }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			testutil.FatalStack(t, fmt.Sprintf("op %d: not unblocked", i))
		}
	}
}
"#,
        r#"
//go:build go1.22

package app

func Start(jobs []Job) {
	for _, j := range jobs {
		go func() { j.Run() }()
	}
}
"#,
        r#"
package app

func Start(jobs []Job) {
	for _, j := range jobs {
		go func() { j.Run() }()
	}
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(LoopVariableCapture);

    /// Deferred calls run after the loop on the same goroutine: no race.
    #[test]
    fn only_goroutines_are_said_to_race() {
        let found = crate::testing::messages(&LoopVariableCapture, Language::Go, EXAMPLES.fail[0]);
        let go = crate::testing::message_with(&found, "a goroutine");
        assert!(go.contains("races with the loop"), "{go}");
        let deferred = crate::testing::message_with(&found, "a deferred function");
        assert!(
            deferred.contains("the value of the last iteration") && !deferred.contains("race"),
            "{deferred}"
        );
    }
}
