//! GO018: a plain variable set by one goroutine and polled by another.

use super::common::{self, NameScope};
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::{exprs_in_block, exprs_under};
use unsnarl_model::*;

pub struct PlainFlagPolling;

pub static META: RuleMeta = RuleMeta {
    id: "GO018",
    name: "plain-flag-polling",
    category: Category::MemoryOrdering,
    severity: Severity::High,
    languages: &[Language::Go],
    summary: "A loop polls a plain (non-atomic) variable that a goroutine sets (`for !done {}`), or spins on one with `runtime.Gosched()`.",
    docs: r#"
A loop whose condition reads a plain variable or field with no lock and no
atomic, when the variable is written by a goroutine of the same function,
or when the loop is a busy wait on it (an empty body, or only
`runtime.Gosched()`/`time.Sleep`).

## Why

Without a synchronizing operation the Go memory model gives no guarantee
that the write is ever seen: the compiler may hoist the read out of the
loop, which then spins forever. Even when the flag is seen, the data
written before it (the result the flag announces) may not be. And the race
detector reports it, because it is a data race.

## Example

```go
package app

import "runtime"

func Run() *Report {
	var result *Report
	done := false
	go func() {
		result = compute()
		done = true
	}()
	for !done {
		runtime.Gosched()
	}
	return result
}
```

## Fix

Publish through a synchronizing edge: a channel (send happens before the
receive completes), a `sync.WaitGroup`, or an `atomic.Bool`.

```go
package app

func Run() *Report {
	ch := make(chan *Report, 1)
	go func() { ch <- compute() }()
	return <-ch
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for PlainFlagPolling {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for (i, st) in cx.model.stmts.iter().enumerate() {
            let StmtKind::While { cond, body, .. } = &st.kind else {
                continue;
            };
            let s = StmtId(i as u32);
            let f = cx.tree.stmt_func(s);
            // Only plain reads: no calls, no receives in the condition.
            let parts = exprs_under(cx.model, *cond);
            if parts
                .iter()
                .any(|&e| matches!(cx.expr(e).kind, ExprKind::Call(_) | ExprKind::Recv(_)))
            {
                continue;
            }
            let vars: Vec<String> = parts
                .iter()
                .filter(|&&e| matches!(cx.expr(e).kind, ExprKind::Name { .. } | ExprKind::Attr { .. }))
                .filter(|&&e| !matches!(cx.tree.expr_parent(e), unsnarl_model::walk::Parent::Expr(p) if matches!(cx.expr(p).kind, ExprKind::Attr { .. })))
                .filter_map(|&e| cx.model.dotted(e))
                .collect();
            if vars.is_empty() || locks_in(cx, body) {
                continue;
            }
            let spin = is_spin(cx, body);
            for var in vars {
                if written_in(cx, body, &var) {
                    continue;
                }
                let root = var.split('.').next().unwrap_or(&var);
                let scope = common::name_scope(cx, f, root);
                // A local of this loop's function that nobody else sees
                // cannot be polled across goroutines.
                let writer = goroutine_writer(cx, f, &var);
                let shared = matches!(scope, NameScope::Captured(_) | NameScope::Package)
                    || var.contains('.');
                if writer.is_none() && !(spin && shared) {
                    continue;
                }
                let how = if writer.is_some() {
                    "set by a goroutine"
                } else {
                    "shared"
                };
                out.push(cx.finding(
                    &META,
                    st.span,
                    format!(
                        "this loop polls `{var}`, a plain variable {how}, with no lock or atomic: the write may never become visible (the read can be hoisted out of the loop, which then spins forever), and data published before it may be seen stale"
                    ),
                    format!(
                        "signal with a channel (close it or send once), a `sync.WaitGroup`, or make `{var}` an `atomic.Bool` and read it with `Load()`"
                    ),
                ));
                break;
            }
        }
    }
}

/// The loop body does nothing but yield or sleep (or nothing at all).
fn is_spin(cx: &FileCx, body: &Block) -> bool {
    body.iter().all(|&s| match &cx.stmt(s).kind {
        StmtKind::Expr(e) => cx
            .call(*e)
            .is_some_and(|c| matches!(c.target.as_deref(), Some("runtime.Gosched" | "time.Sleep"))),
        StmtKind::Pass => true,
        _ => false,
    })
}

fn locks_in(cx: &FileCx, body: &Block) -> bool {
    exprs_in_block(cx.model, body).into_iter().any(|e| {
        cx.call(e)
            .is_some_and(|c| matches!(c.name.as_str(), "Lock" | "RLock" | "Wait" | "Load"))
    })
}

/// A goroutine closure started in `f`'s function that assigns the same
/// variable `var` (same declaration) that `f` reads.
fn goroutine_writer(cx: &FileCx, f: FuncId, var: &str) -> Option<FuncId> {
    let root = var.split('.').next().unwrap_or(var);
    let decl = declaring(cx, f, root)?;
    let top = common::outermost(cx, f);
    cx.with_nested(top).into_iter().skip(1).find(|&g| {
        g != f
            && cx
                .tree
                .func_ancestors(cx.model, g)
                .any(|a| common::runs_in_goroutine(cx, a))
            && declaring(cx, g, root) == Some(decl)
            && cx
                .body_stmts(g)
                .iter()
                .copied()
                .any(|s| match &cx.stmt(s).kind {
                    StmtKind::Assign { targets, op, .. }
                        if !matches!(op, AssignOp::Declare { .. }) =>
                    {
                        targets.iter().any(|&t| {
                            let mut names = vec![cx.model.dotted(t)];
                            if let ExprKind::Collection { elems, .. } = &cx.expr(t).kind {
                                names = elems.iter().map(|&x| cx.model.dotted(x)).collect();
                            }
                            names.into_iter().flatten().any(|n| n == var)
                        })
                    }
                    _ => false,
                })
    })
}

/// The function declaring a name seen from `f` (the module for package
/// variables).
fn declaring(cx: &FileCx, f: FuncId, name: &str) -> Option<FuncId> {
    match common::name_scope(cx, f, name) {
        NameScope::Own => Some(f),
        NameScope::Captured(d) => Some(d),
        NameScope::Package => Some(FuncId(0)),
        NameScope::Unknown => None,
    }
}

/// The loop body assigns the variable itself (a counter, not a flag).
fn written_in(cx: &FileCx, body: &Block, var: &str) -> bool {
    common::stmts_in(cx.model, body).into_iter().any(|s| {
        matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, .. }
            if targets.iter().any(|&t| cx.model.dotted(t).as_deref() == Some(var)))
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[r#"
package app

import "runtime"

var ready bool

func Run() *Report {
	var result *Report
	done := false
	go func() {
		result = compute()
		done = true
	}()
	for !done { // expect
		runtime.Gosched()
	}
	return result
}

func Wait() {
	for !ready { // expect
	}
}

type Worker struct {
	stopped bool
}

func (w *Worker) Join() {
	for !w.stopped { // expect
		runtime.Gosched()
	}
}
"#],
    pass: &[r#"
package app

import (
	"sync"
	"sync/atomic"
	"time"
)

type Worker struct {
	stopped atomic.Bool
	mu      sync.Mutex
	n       int
}

func (w *Worker) Join() {
	for !w.stopped.Load() {
		time.Sleep(time.Millisecond)
	}
}

func Count(items []int) int {
	i := 0
	for i < len(items) {
		i++
	}
	return i
}

func (w *Worker) Drain() {
	for w.n > 0 {
		w.mu.Lock()
		w.n--
		w.mu.Unlock()
	}
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(PlainFlagPolling);
}
