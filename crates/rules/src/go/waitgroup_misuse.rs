//! GO006: WaitGroup counts that cannot match: `Add` inside the goroutine,
//! `Done` skipped on a path, `Add(n)` for a different number of goroutines.

use super::common;
use super::flow::{self, Flow};
use super::locks::evaluated_exprs;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::{exprs_in_block, exprs_under};
use unsnarl_model::*;

pub struct WaitgroupMisuse;

pub static META: RuleMeta = RuleMeta {
    id: "GO006",
    name: "waitgroup-misuse",
    category: Category::OrphanTask,
    severity: Severity::High,
    languages: &[Language::Go],
    summary: "`wg.Add` inside the goroutine it counts, `wg.Done` skipped on some path, or `Add(n)` for a different number of goroutines.",
    docs: r#"
Flags WaitGroup bookkeeping that cannot balance:

- `wg.Add(1)` called inside the goroutine it is meant to count, racing
  with `wg.Wait()`;
- a goroutine that calls `wg.Done()` without `defer` and can return before
  it, or that is counted by `Add` but never calls `Done` (unless a method
  of the file calls `Done` on that WaitGroup field itself: it counts
  running servers, and the method that stops one marks it done; nor for a
  WaitGroup the goroutine declares itself, which counts the goroutines it
  starts, not this one; nor an `Add(n)` other than 1 when goroutines
  started after it call `Done`: it counts those workers, not the producer
  started first; nor when a func literal calling `Done` is handed to
  another call, `gls.Go(func() { defer wg.Done(); .. })`, which may run
  it in a goroutine of its own; nor a goroutine handed the WaitGroup as
  an argument, `go func(mywg *sync.WaitGroup) { defer mywg.Done() }(&wg)`,
  which calls `Done` under its own name for it);
- `wg.Add(n)` with a constant `n` that differs from the number of
  goroutines started (one `Add(1)` for a goroutine per loop iteration).

## Why

`Wait` returns when the counter drops to zero. An `Add` inside the goroutine
may run after `Wait` already returned, so the caller proceeds while work is
still running (and its results are read half-written). A skipped `Done`
leaves the counter above zero and `Wait` blocks forever; too many `Done`s
panic with "negative WaitGroup counter".

## Example

```go
package app

import "sync"

func Process(items []Item) {
	var wg sync.WaitGroup
	for _, it := range items {
		go func(it Item) {
			wg.Add(1)
			defer wg.Done()
			handle(it)
		}(it)
	}
	wg.Wait()
}
```

## Fix

Call `Add` before the `go` statement and `Done` with `defer` as the first
line of the goroutine.

```go
package app

import "sync"

func Process(items []Item) {
	var wg sync.WaitGroup
	for _, it := range items {
		wg.Add(1)
		go func(it Item) {
			defer wg.Done()
			handle(it)
		}(it)
	}
	wg.Wait()
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for WaitgroupMisuse {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        add_inside_goroutine(cx, out);
        for g in cx.model.function_ids() {
            if common::go_stmt_of_closure(cx, g).is_some() {
                done_skipped(cx, g, out);
            }
        }
        for f in cx.model.function_ids() {
            count_mismatch(cx, f, out);
        }
    }
}

/// WaitGroup calls of a block (not in nested functions): (expr, wg, method).
fn wg_calls<'a>(cx: &FileCx<'a>, body: &Block) -> Vec<(ExprId, String, &'a str)> {
    exprs_in_block(cx.model, body)
        .into_iter()
        .filter_map(|e| common::wg_call(cx, e).map(|(w, m)| (e, w, m)))
        .collect()
}

fn waited_in_file(cx: &FileCx, wg: &str) -> bool {
    let last = wg.rsplit('.').next().unwrap_or(wg);
    (0..cx.model.exprs.len()).any(|i| {
        common::wg_call(cx, ExprId(i as u32))
            .is_some_and(|(w, m)| m == "Wait" && w.rsplit('.').next().unwrap_or(&w) == last)
    })
}

fn add_inside_goroutine(cx: &FileCx, out: &mut Vec<Finding>) {
    for g in cx.model.function_ids() {
        if common::go_stmt_of_closure(cx, g).is_none() {
            continue;
        }
        let calls = wg_calls(cx, &cx.func(g).body);
        for (e, wg, m) in &calls {
            if *m != "Add" {
                continue;
            }
            // `Add(-1)` is a `Done`.
            if cx
                .call(*e)
                .and_then(|c| c.positional(0))
                .and_then(|n| cx.model.int_value(n))
                .is_some_and(|n| n <= 0)
            {
                continue;
            }
            let root = wg.split('.').next().unwrap_or(wg);
            if common::name_scope(cx, g, root) == common::NameScope::Own {
                continue;
            }
            // A goroutine that is itself counted (its `Done` registered
            // before the `Add`) may add for the goroutines it starts.
            // Or counted by its starter (`wg.Add(1)` right before its `go`)
            // and calling `Done` itself once it has added.
            let done_here = |after: bool| {
                calls.iter().any(|(d, w, dm)| {
                    *dm == "Done"
                        && w == wg
                        && (cx.expr(*d).span.start < cx.expr(*e).span.start) != after
                })
            };
            let added_by_starter = common::go_stmt_of_closure(cx, g)
                .and_then(|go| previous_stmt(cx, go))
                .is_some_and(|p| {
                    matches!(cx.stmt(p).kind, StmtKind::Expr(a) if cx.call(a).is_some_and(|c| {
                        c.name == "Add"
                            && c.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some(wg.as_str())
                    }))
                });
            let counted = done_here(false) || (added_by_starter && done_here(true));
            if counted || !waited_in_file(cx, wg) {
                continue;
            }
            // `wg.Add(1); go child()` inside an uncounted goroutine: it
            // counts the child, but still too late for a `Wait` elsewhere.
            let counts_next_go = cx.tree.enclosing_stmt(*e).is_some_and(|s| {
                crate::util::stmts_after(cx, s)
                    .first()
                    .is_some_and(|&n| matches!(cx.stmt(n).kind, StmtKind::Go(_)))
            });
            let message = if counts_next_go {
                format!(
                    "`{wg}.Add` runs inside a goroutine that is not itself counted: `{wg}.Wait()` can run before this goroutine gets here and return, and the goroutine started next then runs uncounted"
                )
            } else {
                format!(
                    "`{wg}.Add` runs inside the goroutine it counts: `{wg}.Wait()` can run before it and return while this goroutine is still working"
                )
            };
            out.push(cx.finding(
                &META,
                cx.expr(*e).span,
                message,
                format!("call `{wg}.Add(1)` before the `go` statement, and `defer {wg}.Done()` first thing in the goroutine"),
            ));
        }
    }
}

/// A goroutine calling `Done` without `defer` that can leave before it, or
/// a goroutine counted right before its `go` statement that never calls
/// `Done`.
fn done_skipped(cx: &FileCx, g: FuncId, out: &mut Vec<Finding>) {
    let body = &cx.func(g).body;
    let calls = wg_calls(cx, body);
    let deferred: Vec<String> = common::stmts_in(cx.model, body)
        .into_iter()
        .filter_map(|s| match cx.stmt(s).kind {
            StmtKind::Defer(e) => Some(e),
            _ => None,
        })
        .flat_map(|e| {
            let mut v: Vec<String> = common::wg_call(cx, e)
                .filter(|(_, m)| *m == "Done")
                .map(|(w, _)| w)
                .into_iter()
                .collect();
            if let Some(f) = common::go_closure(cx, e) {
                v.extend(
                    wg_calls(cx, &cx.func(f).body)
                        .into_iter()
                        .filter(|(_, _, m)| *m == "Done")
                        .map(|(_, w, _)| w),
                );
            }
            v
        })
        .collect();
    let mut done_wgs: Vec<String> = calls
        .iter()
        .filter(|(_, w, m)| *m == "Done" && !deferred.contains(w))
        .map(|(_, w, _)| w.clone())
        .collect();
    done_wgs.dedup();
    // A WaitGroup the goroutine declares itself (`ready := sync.WaitGroup{}`,
    // `var ready sync.WaitGroup`) counts the goroutines it starts, not this
    // one: leaving early skips nothing anyone waits for.
    let declared_here = |wg: &str| {
        common::stmts_in(cx.model, body).into_iter().any(|s| {
            matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, op: AssignOp::Declare { .. }, .. }
                if targets.iter().any(|&t| cx.model.dotted(t).as_deref() == Some(wg)))
        })
    };
    done_wgs.retain(|w| !declared_here(w));
    for wg in done_wgs {
        let mut fl = DoneFlow {
            wg: &wg,
            skips: Vec::new(),
        };
        flow::run_function(cx, &mut fl, body, false);
        if let Some(ret) = fl.skips.into_iter().flatten().next() {
            out.push(cx.finding(
                &META,
                cx.stmt(ret).span,
                format!(
                    "this return leaves the goroutine without calling `{wg}.Done()`: the counter never reaches zero and `{wg}.Wait()` blocks forever"
                ),
                format!("put `defer {wg}.Done()` at the top of the goroutine instead of calling it at the end"),
            ));
        }
    }
    // Counted by the statement just before `go`, but never done.
    let Some(go) = common::go_stmt_of_closure(cx, g) else {
        return;
    };
    let Some(prev) = previous_stmt(cx, go) else {
        return;
    };
    let StmtKind::Expr(pe) = cx.stmt(prev).kind else {
        return;
    };
    let Some((wg, "Add")) = common::wg_call(cx, pe) else {
        return;
    };
    let mentions_wg = |e: ExprId| {
        cx.model.dotted(e).is_some_and(|d| d == wg)
            || cx.model.name_of(e) == Some(wg.split('.').next().unwrap_or(&wg))
    };
    // Used in the goroutine, or handed to it as an argument (`go
    // func(mywg *sync.WaitGroup) { defer mywg.Done() }(&wg)`).
    let handed_in = match cx.stmt(go).kind {
        StmtKind::Go(e) => cx.call(e).is_some_and(|c| {
            c.args.iter().any(|a| {
                unsnarl_model::walk::exprs_under(cx.model, a.value)
                    .into_iter()
                    .any(|e| cx.model.dotted(e).is_some_and(|d| d == wg))
            })
        }),
        _ => false,
    };
    let uses_wg = handed_in
        || cx
            .with_nested(g)
            .into_iter()
            .any(|h| cx.body_exprs(h).iter().any(|&e| mentions_wg(e)));
    // A WaitGroup field counting running servers rather than goroutines:
    // another function of the file calls `Done` on that field (a `StopAt`
    // that stops the server the goroutine runs, then calls `s.wg.Done()`).
    let nested = cx.with_nested(g);
    let done_elsewhere = wg.contains('.')
        && (0..cx.model.exprs.len() as u32).map(ExprId).any(|e| {
            common::wg_call(cx, e).is_some_and(|(w, m)| {
                m == "Done" && w.rsplit('.').next() == wg.rsplit('.').next() && w.contains('.')
            }) && !nested.contains(&cx.func_of(e))
                && cx.func(cx.func_of(e)).kind != FnKind::Closure
        });
    // `wg.Add(nworkers)` before a producer and then a loop of workers
    // that each call `Done`: the count is theirs, not the producer's.
    let counts_others = cx.call(pe).and_then(|c| c.positional(0)).is_some_and(|n| {
        cx.model.int_value(n) != Some(1)
            && cx
                .with_nested(common::outermost(cx, g))
                .into_iter()
                .filter(|h| !nested.contains(h))
                .any(|h| {
                    common::go_stmt_of_closure(cx, h).is_some()
                        && wg_calls(cx, &cx.func(h).body)
                            .iter()
                            .any(|(_, w, m)| *m == "Done" && *w == wg)
                })
    });
    if !uses_wg && !done_elsewhere && !counts_others && waited_in_file(cx, &wg) {
        out.push(cx.finding(
            &META,
            cx.stmt(go).span,
            format!(
                "this goroutine is counted by `{wg}.Add` but never calls `{wg}.Done()`: `{wg}.Wait()` blocks forever"
            ),
            format!("add `defer {wg}.Done()` as the first statement of the goroutine"),
        ));
    }
}

/// The statement right before `s` in its block.
fn previous_stmt(cx: &FileCx, s: StmtId) -> Option<StmtId> {
    let block: &Block = match cx.tree.stmt_parent(s) {
        unsnarl_model::walk::Parent::Function(f) => &cx.func(f).body,
        unsnarl_model::walk::Parent::Stmt(p) => {
            let mut found = None;
            unsnarl_model::walk::for_each_stmt_child(cx.model, p, &mut |ch| {
                if let unsnarl_model::walk::Child::Block(b) = ch
                    && b.contains(&s)
                {
                    found = Some(b);
                }
            });
            found?
        }
        _ => return None,
    };
    let i = block.iter().position(|&x| x == s)?;
    i.checked_sub(1).map(|j| block[j])
}

struct DoneFlow<'a> {
    wg: &'a str,
    skips: Vec<Option<StmtId>>,
}

impl Flow for DoneFlow<'_> {
    type S = bool;
    fn simple(&mut self, cx: &FileCx, s: StmtId, st: &mut bool) {
        if evaluated_exprs(cx, s)
            .into_iter()
            .any(|e| common::wg_call(cx, e).is_some_and(|(w, m)| m == "Done" && w == self.wg))
        {
            *st = true;
        }
    }
    fn cond(&mut self, cx: &FileCx, e: ExprId, st: &mut bool) {
        if exprs_under(cx.model, e)
            .into_iter()
            .any(|x| common::wg_call(cx, x).is_some_and(|(w, m)| m == "Done" && w == self.wg))
        {
            *st = true;
        }
    }
    fn exit(&mut self, _cx: &FileCx, ret: Option<StmtId>, st: &bool) {
        if !*st && ret.is_some() {
            self.skips.push(ret);
        }
    }
    fn join(&self, a: &bool, b: &bool) -> bool {
        *a && *b
    }
}

/// `wg.Add(n)` with constant `n` in a function that then starts a
/// different number of goroutines calling `wg.Done()`, and waits.
fn count_mismatch(cx: &FileCx, f: FuncId, out: &mut Vec<Finding>) {
    let calls = wg_calls(cx, &cx.func(f).body);
    let mut waited: Vec<&String> = calls
        .iter()
        .filter(|(_, _, m)| *m == "Wait")
        .map(|(_, w, _)| w)
        .collect();
    waited.dedup();
    for wg in waited {
        let adds: Vec<ExprId> = calls
            .iter()
            .filter(|(_, w, m)| *m == "Add" && w == wg)
            .map(|(e, _, _)| *e)
            .collect();
        // One `Add` in the function: several (per subtest, per phase) are
        // usually balanced by logic we do not follow.
        let [first_add] = adds.as_slice() else {
            continue;
        };
        let first_add = *first_add;
        let mut total = 0i128;
        let mut add_in_loop = false;
        let mut all_const = true;
        for &a in &adds {
            let Some(s) = cx.tree.enclosing_stmt(a) else {
                continue;
            };
            if !common::enclosing_loops(cx, s).is_empty() {
                add_in_loop = true;
            }
            match cx
                .call(a)
                .and_then(|c| c.positional(0))
                .and_then(|n| cx.model.int_value(n))
            {
                Some(n) => total += n,
                None => all_const = false,
            }
        }
        if add_in_loop || !all_const {
            continue;
        }
        // The WaitGroup must not be handed to anyone else.
        let root = wg.split('.').next().unwrap_or(wg);
        let escapes = cx.body_exprs(f).iter().any(|&e| {
            cx.call(e).is_some_and(|c| {
                c.args.iter().any(|a| {
                    cx.model
                        .dotted(a.value)
                        .is_some_and(|d| d == *wg || d == root)
                })
            })
        });
        if escapes {
            continue;
        }
        let mut count = 0i128;
        let mut many = false;
        // A func literal handed to another call (`gls.Go(func() { defer
        // wg.Done() .. })`) may run in a goroutine that call starts: the
        // number of goroutines is not known.
        let mut handed_over = false;
        for g in cx.with_nested(f).into_iter().skip(1) {
            if cx.func(g).parent != Some(f) {
                continue;
            }
            let dones = cx
                .with_nested(g)
                .into_iter()
                .flat_map(|h| wg_calls(cx, &cx.func(h).body))
                .filter(|(_, w, m)| *m == "Done" && w == wg)
                .count();
            if dones == 0 {
                continue;
            }
            let Some(go) = common::go_stmt_of_closure(cx, g) else {
                handed_over |= passed_to_call(cx, g);
                continue;
            };
            match trips(cx, go) {
                Some(n) => count += n,
                None => many = true,
            }
        }
        if handed_over || (count == 0 && !many) {
            continue;
        }
        // `Add(n)` before a loop of unknown length: only `Add(1)` is
        // clearly wrong.
        if many && total != 1 {
            continue;
        }
        let msg = if many {
            format!(
                "`{wg}.Add({total})` is called once, but a goroutine per loop iteration calls `{wg}.Done()`: the counter goes negative (panic) or `Wait` returns before the work is done"
            )
        } else if count != total {
            format!(
                "`{wg}.Add({total})` counts {total} goroutine(s) but {count} are started: `{wg}.Wait()` {}",
                if count < total {
                    "blocks forever"
                } else {
                    "returns early or the counter goes negative (panic)"
                }
            )
        } else {
            continue;
        };
        out.push(cx.finding(
            &META,
            cx.expr(first_add).span,
            msg,
            format!("call `{wg}.Add(1)` right before each `go` statement (inside the loop), so the count always matches"),
        ));
    }
}

/// How many times a statement runs per call: 1 outside loops, the product
/// of constant trip counts (`for i := 0; i < 4; i++`, `for range 3`) of
/// the loops around it, `None` when a loop's length is not constant.
fn trips(cx: &FileCx, s: StmtId) -> Option<i128> {
    let mut n = 1i128;
    for lp in common::enclosing_loops(cx, s) {
        let k = match &cx.stmt(lp).kind {
            StmtKind::For { iter, .. } => match &cx.expr(*iter).kind {
                ExprKind::Collection { elems, .. } => Some(elems.len() as i128),
                _ => cx.model.int_value(*iter),
            },
            StmtKind::While { cond, body, .. } => counted_loop(cx, lp, *cond, body),
            _ => None,
        }?;
        n = n.checked_mul(k)?;
    }
    Some(n)
}

/// The trip count of `for i := a; i < b; i++` (`<=` runs once more),
/// lowered as `i := a` before a `while i < b { ..; i += 1 }`: both bounds
/// constant and a step of one, else unknown.
/// The func literal `g` is an argument of a call (`gls.Go(func() {..})`,
/// `pool.Submit(func() {..})`).
fn passed_to_call(cx: &FileCx, g: FuncId) -> bool {
    let unsnarl_model::walk::Parent::Expr(site) = cx.tree.func_site(g) else {
        return false;
    };
    let unsnarl_model::walk::Parent::Expr(call) = cx.tree.expr_parent(site) else {
        return false;
    };
    cx.call(call)
        .is_some_and(|c| c.args.iter().any(|a| cx.model.strip(a.value) == site))
}

fn counted_loop(cx: &FileCx, lp: StmtId, cond: ExprId, body: &Block) -> Option<i128> {
    let ExprKind::Binary {
        op, left, right, ..
    } = &cx.expr(cond).kind
    else {
        return None;
    };
    let extra = match op {
        BinOp::Lt => 0,
        BinOp::LtE => 1,
        _ => return None,
    };
    let var = cx.model.name_of(*left)?;
    let end = cx.model.int_value(*right)?;

    let assigns = |s: StmtId| match &cx.stmt(s).kind {
        StmtKind::Assign {
            targets,
            value: Some(v),
            op,
        } if targets.iter().any(|&t| cx.model.name_of(t) == Some(var)) => Some((*op, *v)),
        _ => None,
    };
    // The last assignment of the variable before the loop's test (the
    // init clause sits inside the loop's span) is its start.
    let before = cx.expr(cond).span.start;
    let start = cx
        .body_stmts(cx.tree.stmt_func(lp))
        .iter()
        .filter(|&&s| cx.stmt(s).span.end <= before)
        .filter_map(|&s| assigns(s).map(|a| (cx.stmt(s).span.end, a)))
        .max_by_key(|(end, _)| *end)
        .and_then(|(_, (op, v))| match op {
            AssignOp::Augmented(_) => None,
            _ => cx.model.int_value(v),
        })?;
    // The step: one `i += 1` (`i++`) at the end of the body.
    let step = body.last().and_then(|&s| assigns(s))?;
    if step.0 != AssignOp::Augmented(BinOp::Add) || cx.model.int_value(step.1) != Some(1) {
        return None;
    }
    Some((end - start + extra).max(0))
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[
        r#"
package app

import "sync"

func Run(tasks []Task) {
	var wg sync.WaitGroup
	for _, t := range tasks {
		go func(t Task) {
			wg.Add(1) // expect
			defer wg.Done()
			t.Do()
		}(t)
	}
	wg.Wait()
}
"#,
        r#"
package app

import "sync"

func Run(tasks []Task) error {
	var wg sync.WaitGroup
	for _, t := range tasks {
		wg.Add(1)
		go func(t Task) {
			if err := t.Prepare(); err != nil {
				return // expect
			}
			t.Do()
			wg.Done()
		}(t)
	}
	wg.Wait()
	return nil
}
"#,
        r#"
package app

import "sync"

func Run(tasks []Task) {
	var wg sync.WaitGroup
	wg.Add(1) // expect
	for _, t := range tasks {
		go func(t Task) {
			defer wg.Done()
			t.Do()
		}(t)
	}
	wg.Wait()
}
"#,
        r#"
package app

import "sync"

func Pair(a, b Task) {
	var wg sync.WaitGroup
	wg.Add(3) // expect
	go func() { defer wg.Done(); a.Do() }()
	go func() { defer wg.Done(); b.Do() }()
	wg.Wait()
}

func Lost(a Task) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // expect
		a.Do()
	}()
	wg.Wait()
}
"#,
        r#"
package mock

import (
	"net"
	"net/http"
	"sync"
)

type fleet struct {
	wg   sync.WaitGroup
	lns  []net.Listener
	srvs []*http.Server
}

func (f *fleet) StartAt(i int) {
	srv := &http.Server{}
	f.srvs[i] = srv
	f.wg.Add(1)
	go func(s *http.Server, l net.Listener) { // expect
		s.Serve(l)
	}(srv, f.lns[i])
}

func (f *fleet) StartSidecar() {
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
	}()
}

func (f *fleet) StopAt(i int) {
	f.srvs[i].Close()
	f.srvs[i] = nil
	
}

func (f *fleet) Stop() {
	for i := range f.srvs {
		f.StopAt(i)
	}
	f.wg.Wait()
}
"#,
        r#"
package mirror

import "sync"

func Setup(cfg *Config, work func()) {
	var ready sync.WaitGroup
	ready.Add(1)
	go func() {
		if cfg == nil {
			return // expect
		}
		work()
		ready.Done()
	}()
	ready.Wait()
}
"#,
        r#"
package app

import "sync"

func Bump(c *Counter) {
	wg := &sync.WaitGroup{}
	wg.Add(3) // expect
	for i := 0; i <= 3; i++ {
		go func(val int64) {
			c.Incr(val)
			wg.Done()
		}(int64(i))
	}
	wg.Wait()
}
"#,
    ],
    pass: &[
        r#"
package bench

import "sync"

// Each worker gets the WaitGroup as its parameter.
func run(ips chan string, query func(string)) {
	var wg sync.WaitGroup
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func(mywg *sync.WaitGroup) {
			defer mywg.Done()
			for ip := range ips {
				query(ip)
			}
		}(&wg)
	}
	close(ips)
	wg.Wait()
}
"#,
        r#"
package gls

import "sync"

// Go runs cb in a goroutine of its own: two goroutines call Done.
func Go(cb func()) { go cb() }

func Both(a, b func()) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		a()
	}()
	Go(func() {
		defer wg.Done()
		b()
	})
	wg.Wait()
}
"#,
        r#"
package app

import "sync"

// The count is the workers': the producer only feeds and closes the channel.
func Fill(items []uint64, nworkers int, add func(uint64)) {
	ch := make(chan uint64, nworkers)
	var wg sync.WaitGroup
	wg.Add(nworkers)
	go func() {
		for _, h := range items {
			ch <- h
		}
		close(ch)
	}()
	for i := 0; i < nworkers; i++ {
		go func() {
			for h := range ch {
				add(h)
			}
			wg.Done()
		}()
	}
	wg.Wait()
}
"#,
        r#"
package mirror

import "sync"

// The WaitGroup belongs to the goroutine: it waits for the one it starts,
// and the early return comes before either exists.
func Setup(cfg *Config, work func()) {
	go func() {
		if cfg == nil {
			return
		}
		ready := sync.WaitGroup{}
		ready.Add(1)
		go func() {
			work()
			ready.Done()
		}()
		if cfg.Fail {
			ready.Done()
			return
		}
		ready.Wait()
	}()
}
"#,
        r#"
package mock

import (
	"net"
	"net/http"
	"sync"
)

type fleet struct {
	wg   sync.WaitGroup
	lns  []net.Listener
	srvs []*http.Server
}

func (f *fleet) StartAt(i int) {
	srv := &http.Server{}
	f.srvs[i] = srv
	f.wg.Add(1)
	go func(s *http.Server, l net.Listener) {
		s.Serve(l)
	}(srv, f.lns[i])
}

func (f *fleet) StartSidecar() {
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
	}()
}

func (f *fleet) StopAt(i int) {
	f.srvs[i].Close()
	f.srvs[i] = nil
	f.wg.Done()
}

func (f *fleet) Stop() {
	for i := range f.srvs {
		f.StopAt(i)
	}
	f.wg.Wait()
}
"#,
        r#"
package app

import "sync"

func Run(tasks []Task) {
	var wg sync.WaitGroup
	for _, t := range tasks {
		wg.Add(1)
		go func(t Task) {
			defer wg.Done()
			t.Do()
		}(t)
	}
	wg.Wait()
}
"#,
        r#"
package app

import "sync"

func Tree(root *Node) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, c := range root.Children {
			wg.Add(1)
			go func(c *Node) {
				defer wg.Done()
				visit(c)
			}(c)
		}
	}()
	wg.Wait()
}
"#,
        r#"
package app

import "sync"

func Pair(a, b Task) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); a.Do() }()
	go func() {
		if err := b.Prepare(); err != nil {
			wg.Done()
			return
		}
		b.Do()
		wg.Done()
	}()
	wg.Wait()
}

func Fixed() {
	var wg sync.WaitGroup
	wg.Add(8)
	for i := 0; i < 4; i++ {
		go func() { defer wg.Done(); work() }()
		go func() { defer wg.Done(); work() }()
	}
	wg.Wait()
}

func Each(tasks []Task) {
	var wg sync.WaitGroup
	wg.Add(len(tasks))
	for _, t := range tasks {
		go func(t Task) {
			defer wg.Done()
			t.Do()
		}(t)
	}
	wg.Wait()
}
"#,
        r#"
package app

import "sync"

func Run(tasks []Task) {
	var wg sync.WaitGroup
	wg.Add(1)
	go worker(tasks, &wg)
	wg.Add(1)
	go func() {
		defer wg.Done()
		idle()
	}()
	wg.Wait()
}
"#,
        r#"
package load

import "sync"

// The spawner is counted itself (Add before its go, Done after its loop),
// so the counter cannot reach zero while it is still adding.
func Hammer(put func(int), n int) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				put(i)
			}(i)
		}
		wg.Done()
	}()
	wg.Wait()
}
"#,
        r#"
package app

import "sync"

func Bump(c *Counter) {
	wg := &sync.WaitGroup{}
	wg.Add(3)
	for i := 1; i <= 3; i++ {
		go func(val int64) {
			c.Incr(val)
			wg.Done()
		}(int64(i))
	}
	wg.Wait()
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(WaitgroupMisuse);

    #[test]
    fn an_add_for_the_next_goroutine_is_described_as_such() {
        let found = crate::testing::messages(
            &WaitgroupMisuse,
            Language::Go,
            r#"
package app

import "sync"

type Client struct{ workers sync.WaitGroup }

func (c *Client) Connect() {
	go func() {
		c.dial()
		c.workers.Add(1)
		go c.keepalive()
	}()
	go func() {
		c.workers.Add(1)
		defer c.workers.Done()
		c.serve()
	}()
}

func (c *Client) Disconnect() { c.workers.Wait() }
"#,
        );
        assert_eq!(found.len(), 2, "{found:#?}");
        crate::testing::message_with(&found, "the goroutine started next then runs uncounted");
        crate::testing::message_with(&found, "runs inside the goroutine it counts");
    }
}
