//! PY023: `asyncio.wait(..., FIRST_COMPLETED)` whose losers keep running.

use crate::context::FileCx;
use crate::python::common::{func_and_nested, in_task_group, is_store, name_refs, receiver_of};
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct WaitFirstCompleted;

pub static META: RuleMeta = RuleMeta {
    id: "PY023",
    name: "race-losers-not-cancelled",
    category: Category::RaceLoserLeak,
    severity: Severity::Medium,
    languages: &[Language::Python],
    summary: "`asyncio.wait(..., return_when=FIRST_COMPLETED/FIRST_EXCEPTION)` whose pending set is never cancelled or awaited.",
    docs: r#"
`done, pending = await asyncio.wait(tasks, return_when=FIRST_COMPLETED)`
(or `FIRST_EXCEPTION`) where the pending set is ignored (`_`, or never
used) and nothing in the function cancels the tasks (`t.cancel()`, or a
helper named for cancelling handed them: `await cancel_and_wait(*tasks)`,
`await self.tasks.cancel_task(t)`, or a function of the file that
cancels, `finally: await stop_tasks()`) after the wait, or all of them before
it (`for t in tasks: t.cancel()`, then a short wait on `tasks`), and
nothing awaits them all after it (`finally: server.should_exit = True`
then `await asyncio.gather(*tasks)`, or each by name, `finally: await
task`, beside bare futures the function made or tasks that only wait
for an `asyncio.Event`, `create_task(stop.wait())`). Nor is a race of
timers and stop signals only (`create_task(asyncio.sleep(n))` against
`create_task(stop.wait())`): the loser holds nothing. A wait over a
collection that outlives it (one held by the object, or a local, a
parameter or an attribute of one, kept across the iterations of a loop:
`while ctx.tasks: done, _ = await asyncio.wait(ctx.tasks, ..)`, also
picked from it, `[t for _, t in in_progress]`) multiplexes events or waits for a free
slot: its unfinished tasks stay tracked, and it is not reported; nor is
a wait over the loop's every task (`{t for t in asyncio.all_tasks() if t
is not current}`), whose unfinished ones belong to whoever started them. Nor is a
wait on one task written out (`asyncio.wait({task}, timeout=t)`): there
is no race and no loser, only a bounded look at a task that goes on. Nor is a
race of functions run on other threads (`asyncio.to_thread(ev.wait,
t)`, `loop.run_in_executor(..)`, also wrapped in `ensure_future`):
cancelling a loser would not stop its thread. Nor is a
wait on futures other objects keep, written out (`[self._closing,
self._dead_fut]`) or gathered in a local list grown only with such
fields (`futures.append(self._heartbeat_task)`) or filtered from them
(`[t for t in (self._a, self._b) if t is not None]`): nobody expects this
wait to cancel them. Nor is a wait inside `while not runner.done():` on that
task and bare futures only (`{runner, wakeup}` with `wakeup =
loop.create_future()`, also bound to a local first): the loop waits for the task again until it has
finished, and a bare future runs no work. Nor is a wait in a loop on
locals the loop fills only when empty (`if not next_input: next_input =
create_task(..)`) and empties once done: a racer still pending stays in
its name and is raced again next round.

## Why

`asyncio.wait` returns as soon as the first task finishes; the others are
still running. A race that does not cancel its losers keeps them going
with nobody watching: the slower request still holds its connection and
quota, its exception is never retrieved, and in a loop the abandoned tasks
pile up.

## Example

```python
import asyncio

async def fastest(primary, fallback):
    done, _ = await asyncio.wait(
        {asyncio.create_task(primary()), asyncio.create_task(fallback())},
        return_when=asyncio.FIRST_COMPLETED,
    )
    return done.pop().result()
```

## Fix

Cancel the pending tasks and reap them.

```python
import asyncio

async def fastest(primary, fallback):
    done, pending = await asyncio.wait(
        {asyncio.create_task(primary()), asyncio.create_task(fallback())},
        return_when=asyncio.FIRST_COMPLETED,
    )
    for t in pending:
        t.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    return done.pop().result()
```
"#,
    examples: &EXAMPLES,
};

impl Rule for WaitFirstCompleted {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for (id, c) in cx.calls_to(&["asyncio.wait", "asyncio.tasks.wait"]) {
            let e = cx.expr(id);
            let Some(rw) = c.kwarg("return_when").or_else(|| c.positional(3)) else {
                continue;
            };
            let mode = cx
                .model
                .resolved(rw)
                .map(str::to_string)
                .or_else(|| cx.model.dotted(rw))
                .or_else(|| match cx.model.literal(rw) {
                    Some(Lit::Str(s)) => Some(s.to_string()),
                    _ => None,
                })
                .unwrap_or_default();
            if !(mode.ends_with("FIRST_COMPLETED") || mode.ends_with("FIRST_EXCEPTION")) {
                continue;
            }
            let f = cx.func_of(id);
            if cx.func(f).is_test || in_task_group(cx, id) || cancels_after(cx, f, e.span) {
                continue;
            }
            if waits_only_on_others(cx, f, c)
                || waits_on_one(cx, c)
                || races_only_thread_work(cx, c)
                || waits_on_kept_collection(cx, f, id, c)
                || all_cancelled_before(cx, f, id, c)
                || gathers_all_after(cx, f, id, c)
                || awaits_each_after(cx, f, id, c)
                || rewaits_until_done(cx, f, id, c)
                || racers_carried_over(cx, f, id, c)
                || races_only_timers(cx, f, c)
            {
                continue;
            }
            let Some(pending) = pending_binding(cx, id) else {
                continue;
            };
            if let Some(name) = &pending {
                let funcs = func_and_nested(cx, f);
                let used = name_refs(cx, &funcs, name)
                    .into_iter()
                    .any(|r| !is_store(cx, r) && !cx.contains(id, r));
                if used {
                    continue;
                }
            }
            out.push(cx.finding(
                &META,
                e.span,
                "the tasks that lose this race are left running: `asyncio.wait` returns at the first completion, and the pending set is never cancelled or awaited, so the losers keep their connections and their errors are never seen",
                "cancel the pending tasks and reap them: `for t in pending: t.cancel()` then `await asyncio.gather(*pending, return_exceptions=True)`",
            ));
        }
    }
}

/// `asyncio.wait({task}, timeout=t, return_when=FIRST_COMPLETED)`: one
/// task, so no race and no loser; the wait is a bounded look at a task
/// that goes on, whoever owns it.
fn waits_on_one(cx: &FileCx, c: &Call) -> bool {
    c.positional(0).is_some_and(|a| {
        matches!(&cx.expr(cx.model.strip(a)).kind, ExprKind::Collection { elems, .. }
            if elems.len() == 1 && !c.args.iter().any(|x| x.spread))
    })
}

/// `Some(Some(name))`: the pending set is bound to `name`; `Some(None)`: it
/// is discarded (`_`, or the result is not unpacked and not kept); `None`:
/// the result goes somewhere we do not follow.
fn pending_binding(cx: &FileCx, call: ExprId) -> Option<Option<String>> {
    let Parent::Expr(aw) = cx.tree.expr_parent(call) else {
        return None;
    };
    if !matches!(cx.expr(aw).kind, ExprKind::Await(_)) {
        return None;
    }
    match cx.tree.expr_parent(aw) {
        Parent::Stmt(s) => match &cx.stmt(s).kind {
            StmtKind::Expr(_) => Some(None),
            StmtKind::Assign { targets, .. } => {
                let [t] = targets.as_slice() else { return None };
                let ExprKind::Collection { elems, .. } = &cx.expr(*t).kind else {
                    return None;
                };
                let p = *elems.get(1)?;
                match cx.model.name_of(p) {
                    Some("_") => Some(None),
                    Some(n) => Some(Some(n.to_string())),
                    None => None,
                }
            }
            _ => None,
        },
        _ => None,
    }
}

/// The waited-on tasks were all cancelled just before (`for t in tasks:
/// t.cancel()` then `await asyncio.wait(tasks, timeout=0.5,
/// return_when=FIRST_COMPLETED)`): the wait only gives them a moment to
/// finish; nothing is left racing.
fn all_cancelled_before(cx: &FileCx, f: FuncId, wait: ExprId, c: &Call) -> bool {
    let Some(name) = c.positional(0).and_then(|a| cx.model.name_of(a)) else {
        return false;
    };
    let at = cx.expr(wait).span.start;
    cx.body_stmts(f).iter().any(|&s| {
        cx.stmt(s).span.end <= at
            && crate::python::common::cancels_each_of(cx, s)
                .is_some_and(|iter| cx.model.name_of(iter) == Some(name))
    })
}

/// The awaitables are written out and each is awaited by name after the
/// race (`done, _ = await asyncio.wait((on_connect, task), ..)` ...
/// `finally: await task`), or is a bare future the function made
/// (`on_connect = asyncio.Future()`), which runs nothing: no loser is left
/// running unwatched.
fn awaits_each_after(cx: &FileCx, f: FuncId, wait: ExprId, c: &Call) -> bool {
    let Some(arg) = c.positional(0).map(|a| cx.model.strip(a)) else {
        return false;
    };
    let ExprKind::Collection { elems, .. } = &cx.expr(arg).kind else {
        return false;
    };
    let at = cx.expr(wait).span.end;
    let awaited_later = |n: &str| {
        cx.body_exprs(f).iter().any(|&e| {
            cx.expr(e).span.start > at
                && matches!(cx.expr(e).kind, ExprKind::Await(x)
                    if cx.model.name_of(cx.model.strip(x)) == Some(n))
        })
    };
    let bare_future = |n: &str| {
        let mut values = crate::python::common::values_bound_to(cx, f, n).peekable();
        values.peek().is_some()
            && values.all(|v| {
                v.and_then(|v| cx.call(cx.model.strip(v)))
                    .is_some_and(|k| crate::python::common::makes_asyncio_future(cx, k))
            })
    };
    let event_waiter = |x: ExprId| spawns_where(cx, x, |w| is_event_wait(cx, w));
    !elems.is_empty()
        && elems.iter().all(|&x| {
            let x = cx.model.strip(x);
            event_waiter(x)
                || cx
                    .model
                    .name_of(x)
                    .is_some_and(|n| bare_future(n) || awaited_later(n))
        })
        && elems.iter().any(|&x| !event_waiter(cx.model.strip(x)))
}

/// `x` is a task started over a call that `runs` accepts
/// (`create_task(stop.wait())`).
fn spawns_where(cx: &FileCx, x: ExprId, runs: impl Fn(&Call) -> bool) -> bool {
    cx.call(x).is_some_and(|k| {
        crate::python::common::is_task_spawn(cx, k)
            && k.positional(0)
                .and_then(|a| cx.call(cx.model.strip(a)))
                .is_some_and(runs)
    })
}

/// `shutdown.wait()` on an `asyncio.Event`: a waiter that holds nothing
/// and does no work of its own.
fn is_event_wait(cx: &FileCx, w: &Call) -> bool {
    w.name == "wait"
        && w.receiver
            .and_then(|r| cx.sema.type_of(cx.model.strip(r)))
            .is_some_and(|t| {
                cx.kb
                    .find(Effect::Completion, Some(t), "")
                    .is_some_and(|e| e.kind.as_deref() == Some("event"))
            })
}

/// Every racer, written out or bound to a local of the function, is a
/// timer or a stop signal (`sleep_task = create_task(asyncio.sleep(n))`
/// raced against `stop_task = create_task(stop.wait())`): an interruptible
/// sleep. The loser is a pending sleep or an event waiter, which hold
/// nothing and do no work, so leaving it is harmless.
fn races_only_timers(cx: &FileCx, f: FuncId, c: &Call) -> bool {
    let Some(arg) = c.positional(0).map(|a| cx.model.strip(a)) else {
        return false;
    };
    let ExprKind::Collection { elems, .. } = &cx.expr(arg).kind else {
        return false;
    };
    let idle = |x: ExprId| {
        spawns_where(cx, x, |w| {
            matches!(
                w.target.as_deref(),
                Some("asyncio.sleep" | "asyncio.tasks.sleep")
            ) || is_event_wait(cx, w)
        })
    };
    !elems.is_empty()
        && elems.iter().all(|&x| {
            let x = cx.model.strip(x);
            idle(x)
                || cx.model.name_of(x).is_some_and(|n| {
                    let mut values = crate::python::common::values_bound_to(cx, f, n).peekable();
                    values.peek().is_some()
                        && values.all(|v| v.is_some_and(|v| idle(cx.model.strip(v))))
                })
        })
}

/// The tasks waited on are all awaited after the race (`finally: for s
/// in servers: s.should_exit = True` then `await asyncio.gather(*tasks)`):
/// the losers are reaped there, and their errors seen, not left running.
fn gathers_all_after(cx: &FileCx, f: FuncId, wait: ExprId, c: &Call) -> bool {
    let Some(name) = c.positional(0).and_then(|a| cx.model.name_of(a)) else {
        return false;
    };
    let at = cx.expr(wait).span.end;
    cx.body_calls(f).any(|e| {
        cx.expr(e).span.start > at
            && cx.is_awaited(e)
            && cx.call(e).is_some_and(|g| {
                matches!(
                    g.target.as_deref(),
                    Some("asyncio.gather" | "asyncio.tasks.gather")
                ) && g.args.iter().any(|a| {
                    let v = match cx.expr(a.value).kind {
                        ExprKind::Spread(x) => x,
                        _ if a.spread => a.value,
                        _ => return false,
                    };
                    cx.model.name_of(v) == Some(name)
                })
            })
    })
}

/// The awaitables are written out (`[self.response_rcvd,
/// self.connection_lost]`) and none is a task this function started: they
/// are futures and tasks that live on in their owners (a connection's
/// "closed" future, a consumer's "unassigned" signal), which nobody
/// expects this wait to cancel. A list built elsewhere (`tasks`) may hold
/// tasks started for the race, and is still judged.
///
/// Also through a local list written out the same way and grown only with
/// such values (`futures = [self._closing, self._dead]`, then
/// `futures.append(self._heartbeat_task)`).
fn waits_only_on_others(cx: &FileCx, f: FuncId, c: &Call) -> bool {
    let Some(arg) = c.positional(0).map(|a| cx.model.strip(a)) else {
        return false;
    };
    // Fields of objects, or names this function does not fill from a call.
    let other = |x: ExprId| match &cx.expr(cx.model.strip(x)).kind {
        ExprKind::Attr { .. } => true,
        ExprKind::Name { id, .. } => assignments_of(cx, f, id)
            .iter()
            .all(|&(_, v)| cx.call(cx.model.strip(v)).is_none()),
        _ => false,
    };
    let others = |elems: &[ExprId]| elems.iter().all(|&x| other(x));
    if let ExprKind::Collection { elems, .. } = &cx.expr(arg).kind {
        return !elems.iter().any(|&x| started_here(cx, f, x));
    }
    let Some(name) = cx.model.name_of(arg) else {
        return false;
    };
    // `[t for t in (self._a, self._b) if t is not None]`: the same fields,
    // filtered.
    let filtered_others = |v: ExprId| match &cx.expr(v).kind {
        ExprKind::Comprehension {
            elt, generators, ..
        } => match generators.as_slice() {
            [g] => {
                cx.model.name_of(*elt).is_some()
                    && cx.model.name_of(*elt) == cx.model.name_of(g.target)
                    && matches!(&cx.expr(cx.model.strip(g.iter)).kind,
                        ExprKind::Collection { elems, .. } if others(elems))
            }
            _ => false,
        },
        _ => false,
    };
    let assigned = assignments_of(cx, f, name);
    !assigned.is_empty()
        && assigned.iter().all(|&(_, v)| {
            let v = cx.model.strip(v);
            matches!(&cx.expr(v).kind,
                ExprKind::Collection { elems, .. } if others(elems))
                || filtered_others(v)
        })
        && cx.body_exprs(f).iter().all(|&e| {
            let Some(k) = cx.call(e) else { return true };
            let on_it = k
                .receiver
                .is_some_and(|r| cx.model.name_of(r) == Some(name));
            !on_it
                || match k.name.as_str() {
                    "append" | "add" => others(&k.args.iter().map(|a| a.value).collect::<Vec<_>>()),
                    "extend" | "update" | "insert" => false,
                    _ => true,
                }
        })
}

/// The wait sits in `while not runner.done():` for one of its racers
/// (written out, or in a local set made just for it), and every other
/// racer is a bare future (`wakeup = loop.create_future()`) or an event's
/// `wait()` of something else: the
/// loop waits again for the task until it has finished, and what it
/// raced against runs no work of its own.
fn rewaits_until_done(cx: &FileCx, f: FuncId, wait: ExprId, c: &Call) -> bool {
    let Some(mut arg) = c.positional(0).map(|a| cx.model.strip(a)) else {
        return false;
    };
    // `pending = {response, worker}` first.
    if let Some(v) = cx
        .model
        .name_of(arg)
        .and_then(|n| crate::python::common::value_bound_once(cx, f, n))
    {
        arg = cx.model.strip(v);
    }
    let ExprKind::Collection { elems, .. } = &cx.expr(arg).kind else {
        return false;
    };
    let Some(s) = cx.tree.enclosing_stmt(wait) else {
        return false;
    };
    let watched: Vec<&str> = std::iter::once(s)
        .chain(cx.tree.stmt_ancestors(s))
        .filter(|&a| cx.tree.stmt_func(a) == f)
        .filter_map(|a| match &cx.stmt(a).kind {
            StmtKind::While { cond, .. } => match &cx.expr(cx.model.strip(*cond)).kind {
                ExprKind::Unary {
                    op: UnOp::Not,
                    operand,
                } => cx
                    .call(cx.model.strip(*operand))
                    .filter(|k| k.name == "done" && k.args.is_empty())
                    .and_then(|k| k.receiver)
                    .and_then(|r| cx.model.name_of(r)),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let bare = |x: ExprId| {
        let Some(n) = cx.model.name_of(cx.model.strip(x)) else {
            return false;
        };
        let assigned = assignments_of(cx, f, n);
        !assigned.is_empty()
            && assigned.iter().all(|&(_, v)| {
                cx.call(cx.model.strip(v))
                    .is_some_and(|k| crate::python::common::makes_asyncio_future(cx, k))
            })
    };
    elems.iter().any(|&x| {
        cx.model
            .name_of(cx.model.strip(x))
            .is_some_and(|n| watched.contains(&n))
    }) && elems.iter().all(|&x| {
        cx.model
            .name_of(cx.model.strip(x))
            .is_some_and(|n| watched.contains(&n))
            || bare(x)
    })
}

/// In a loop, the racers are locals the loop fills only when empty
/// (`if not next_input: next_input = create_task(..)`, `if task is None:`)
/// and empties once done: a racer still pending stays in its name and is
/// raced again next round (`[t for t in (next_input, next_output) if t]`).
fn racers_carried_over(cx: &FileCx, f: FuncId, wait: ExprId, c: &Call) -> bool {
    let Some(s) = cx.tree.enclosing_stmt(wait) else {
        return false;
    };
    if crate::python::common::enclosing_loop(cx, s).is_none() {
        return false;
    }
    let Some(arg) = c.positional(0).map(|a| cx.model.strip(a)) else {
        return false;
    };
    // A local bound once to the racers.
    let arg = cx
        .model
        .name_of(arg)
        .and_then(|n| crate::python::common::value_bound_once(cx, f, n))
        .map_or(arg, |v| cx.model.strip(v));
    // `[a, b]`, or `[aw for aw in (a, b) if aw]`.
    let listed = match &cx.expr(arg).kind {
        ExprKind::Comprehension { generators, .. } if generators.len() == 1 => {
            cx.model.strip(generators[0].iter)
        }
        _ => arg,
    };
    let ExprKind::Collection { elems, .. } = &cx.expr(listed).kind else {
        return false;
    };
    let names: Vec<&str> = elems
        .iter()
        .filter_map(|&x| cx.model.name_of(cx.model.strip(x)))
        .collect();
    if names.is_empty() || names.len() != elems.len() {
        return false;
    }
    // `not n`, `n is None`, among the conjuncts of an `if` around it.
    let tests_empty = |cond: ExprId, n: &str| {
        crate::util::conjuncts(cx.model, cond).into_iter().any(|t| {
            match &cx.expr(cx.model.strip(t)).kind {
                ExprKind::Unary {
                    op: UnOp::Not,
                    operand,
                } => cx.model.name_of(cx.model.strip(*operand)) == Some(n),
                ExprKind::Binary {
                    op: BinOp::Is,
                    left,
                    right,
                } => {
                    cx.model.name_of(cx.model.strip(*left)) == Some(n)
                        && crate::python::common::is_none(cx, *right)
                }
                _ => false,
            }
        })
    };
    names.iter().all(|&n| {
        let spawns: Vec<(StmtId, ExprId)> = assignments_of(cx, f, n)
            .into_iter()
            .filter(|&(_, v)| cx.call(cx.model.strip(v)).is_some())
            .collect();
        !spawns.is_empty()
            && spawns.iter().all(|&(st, _)| {
                cx.tree.stmt_ancestors(st).any(|a| {
                    matches!(&cx.stmt(a).kind, StmtKind::If { cond, then, .. }
                        if crate::util::block_contains(cx, then, st) && tests_empty(*cond, n))
                })
            })
    })
}

/// The awaitables come from a collection that outlives this wait: one held
/// by the object (`set(chain(self._pending, ...))`, `list(self._calls)`),
/// or, in a loop, a local made before the loop (`waiters = tasks | {...}`
/// with `tasks` kept across iterations). Such a wait multiplexes events
/// or waits for a free slot: the unfinished tasks stay in their collection,
/// are waited for again, and whoever owns it reaps them.
fn waits_on_kept_collection(cx: &FileCx, f: FuncId, wait: ExprId, c: &Call) -> bool {
    let Some(arg) = c.positional(0).map(|a| cx.model.strip(a)) else {
        return false;
    };
    if matches!(cx.expr(arg).kind, ExprKind::Collection { .. }) {
        return false;
    }
    let receiver = receiver_of(cx, f);
    // The collections the waited expression is made of: itself, and those
    // of the value a local it names was last given before the wait.
    let mut parts = collection_parts(cx, arg);
    let mut value = arg;
    if let Some(name) = cx.model.name_of(arg) {
        let last = assignments_of(cx, f, name)
            .into_iter()
            .filter(|&(s, _)| cx.stmt(s).span.end <= cx.expr(wait).span.start)
            .max_by_key(|&(s, _)| cx.stmt(s).span.start);
        if let Some((_, v)) = last {
            parts.extend(collection_parts(cx, v));
            value = v;
        }
    }
    // Every task of the loop (`{t for t in asyncio.all_tasks() if t is not
    // current}`): the ones still running belong to whoever started them.
    if unsnarl_model::walk::exprs_under(cx.model, value)
        .into_iter()
        .any(|x| {
            cx.call(x)
                .is_some_and(|k| k.target.as_deref() == Some("asyncio.all_tasks"))
        })
    {
        return true;
    }
    let on_object = parts.iter().any(|&e| {
        matches!(&cx.expr(e).kind, ExprKind::Attr { obj, .. }
            if receiver.is_some() && cx.model.name_of(*obj) == receiver)
    });
    if on_object {
        return true;
    }
    let Some(s) = cx.tree.enclosing_stmt(wait) else {
        return false;
    };
    let Some(lp) = cx.tree.stmt_ancestors(s).find(|&a| {
        matches!(
            cx.stmt(a).kind,
            StmtKind::For { .. } | StmtKind::While { .. }
        )
    }) else {
        return false;
    };
    let loop_span = cx.stmt(lp).span;
    // A local made before the loop or a parameter, or an attribute of one
    // (`ctx.tasks` with `ctx = make_context(..)` before the loop).
    let kept = |n: &str| {
        cx.func(f).params.iter().any(|p| p.name == n)
            || assignments_of(cx, f, n)
                .iter()
                .any(|&(a, _)| !loop_span.contains(cx.stmt(a).span))
    };
    parts.iter().any(|&e| {
        let mut root = e;
        while let ExprKind::Attr { obj, .. } = &cx.expr(root).kind {
            root = cx.model.strip(*obj);
        }
        cx.model.name_of(root).is_some_and(kept)
    })
}

/// Every racer runs a function on another thread (`asyncio.to_thread(
/// ev.wait, timeout)`, `loop.run_in_executor(None, fn)`), also wrapped in
/// `ensure_future`/`create_task` or built into a local list first:
/// cancelling a loser would not stop its thread, so leaving it is all
/// there is to do.
fn races_only_thread_work(cx: &FileCx, c: &Call) -> bool {
    let Some(arg) = c.positional(0) else {
        return false;
    };
    let mut leaves = Vec::new();
    racers(cx, arg, 4, &mut leaves)
        && !leaves.is_empty()
        && leaves.iter().all(|&x| {
            cx.call(cx.model.strip(x))
                .is_some_and(|k| cx.effect(k, Effect::Offload).is_some())
        })
}

/// Collects the awaitables a racer collection holds into `out`; false when
/// some part cannot be followed.
fn racers(cx: &FileCx, e: ExprId, depth: u32, out: &mut Vec<ExprId>) -> bool {
    let m = cx.model;
    let e = m.strip(e);
    if depth == 0 {
        return false;
    }
    match &cx.expr(e).kind {
        ExprKind::Collection { elems, .. } => elems.iter().all(|&x| racers(cx, x, depth - 1, out)),
        ExprKind::Comprehension {
            elt, generators, ..
        } => {
            // `[ensure_future(c) for c in coros]`: the racers are `coros`'.
            let wrapped = cx
                .call(m.strip(*elt))
                .filter(|w| matches!(w.name.as_str(), "ensure_future" | "create_task"))
                .and_then(|w| w.positional(0))
                .and_then(|a| m.name_of(a));
            match (generators.as_slice(), wrapped.or_else(|| m.name_of(*elt))) {
                ([g], Some(n)) if binds_name(cx, g.target, n) => racers(cx, g.iter, depth - 1, out),
                _ => {
                    out.push(*elt);
                    true
                }
            }
        }
        // A local: every value the function binds to it (`coros = [..]` in
        // each branch of an `if`).
        ExprKind::Name { id, .. } => {
            let values: Vec<Option<ExprId>> =
                crate::python::common::values_bound_to(cx, cx.func_of(e), id).collect();
            !values.is_empty()
                && values
                    .into_iter()
                    .all(|v| v.is_some_and(|v| v != e && racers(cx, v, depth - 1, out)))
        }
        ExprKind::Call(w) if matches!(w.name.as_str(), "ensure_future" | "create_task") => w
            .positional(0)
            .is_some_and(|a| racers(cx, a, depth - 1, out)),
        _ => {
            out.push(e);
            true
        }
    }
}

/// The names and attributes a collection expression joins: `tasks`,
/// `set(chain(self._pending, others))`, `tasks | {waiter}`, `jobs.keys()`, not what a
/// call builds (`[create_task(client.get(u)) ...]` names `client` only as
/// a receiver).
fn collection_parts(cx: &FileCx, e: ExprId) -> Vec<ExprId> {
    let e = cx.model.strip(e);
    match &cx.expr(e).kind {
        ExprKind::Name { .. } | ExprKind::Attr { .. } => vec![e],
        // `[task for _, _, task in in_progress]`: picks from `in_progress`.
        ExprKind::Comprehension {
            elt, generators, ..
        } => match (generators.as_slice(), cx.model.name_of(*elt)) {
            ([g], Some(n)) if binds_name(cx, g.target, n) => collection_parts(cx, g.iter),
            _ => Vec::new(),
        },
        ExprKind::Binary { left, right, .. } => {
            let mut out = collection_parts(cx, *left);
            out.extend(collection_parts(cx, *right));
            out
        }
        // `pending.keys()`, `tasks.values()`: a view of the collection.
        ExprKind::Call(c) if c.args.is_empty() && matches!(c.name.as_str(), "keys" | "values") => c
            .receiver
            .map_or_else(Vec::new, |r| collection_parts(cx, r)),
        ExprKind::Call(c)
            if matches!(
                c.name.as_str(),
                "set" | "list" | "tuple" | "frozenset" | "chain" | "union"
            ) =>
        {
            c.args
                .iter()
                .chain(
                    c.receiver
                        .map(|r| Arg {
                            name: None,
                            value: r,
                            spread: false,
                        })
                        .as_ref(),
                )
                .flat_map(|a| collection_parts(cx, a.value))
                .collect()
        }
        _ => Vec::new(),
    }
}

/// A loop target binds `name` (`task`, or `(_, _, task)`).
fn binds_name(cx: &FileCx, target: ExprId, name: &str) -> bool {
    match &cx.expr(target).kind {
        ExprKind::Name { id, .. } => id == name,
        ExprKind::Collection { elems, .. } => elems.iter().any(|&x| binds_name(cx, x, name)),
        _ => false,
    }
}

/// The assignments of `f` (not of nested functions) to the local `name`,
/// with their values.
fn assignments_of(cx: &FileCx, f: FuncId, name: &str) -> Vec<(StmtId, ExprId)> {
    cx.body_stmts(f)
        .iter()
        .filter_map(|&s| match &cx.stmt(s).kind {
            StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } if targets.iter().any(|&t| cx.model.name_of(t) == Some(name)) => Some((s, *v)),
            _ => None,
        })
        .collect()
}

/// `x` is a task started in `f`: a `create_task`/`ensure_future` call, or
/// a name `f` binds to one.
fn started_here(cx: &FileCx, f: FuncId, x: ExprId) -> bool {
    let starts = |e: ExprId| {
        cx.call(e)
            .is_some_and(|c| matches!(c.name.as_str(), "create_task" | "ensure_future"))
    };
    if starts(x) {
        return true;
    }
    let Some(name) = cx.model.name_of(x) else {
        return false;
    };
    unsnarl_model::walk::stmts_in_block(cx.model, &cx.func(f).body)
        .into_iter()
        .any(|s| match &cx.stmt(s).kind {
            StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } => starts(*v) && targets.iter().any(|&t| cx.model.name_of(t) == Some(name)),
            _ => false,
        })
}

/// A `.cancel()` call after the wait in the same function, or a call of a
/// function of the file that cancels.
fn cancels_after(cx: &FileCx, f: FuncId, at: Span) -> bool {
    let funcs = func_and_nested(cx, f);
    crate::python::common::exprs_of(cx, &funcs)
        .into_iter()
        .any(|e| {
            cx.expr(e).span.start > at.start
                && cx.call(e).is_some_and(|c| {
                    crate::python::common::cancels(c)
                        // `finally: stop_tasks()`, a closure or helper of
                        // the file that cancels them.
                        || cx
                            .callee_in_file(c)
                            .is_some_and(|g| crate::python::common::cancels_within(cx, g, 0))
                })
        })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import asyncio

async def fastest(primary, fallback):
    done, _ = await asyncio.wait(  # expect
        {asyncio.create_task(primary()), asyncio.create_task(fallback())},
        return_when=asyncio.FIRST_COMPLETED,
    )
    return done.pop().result()

async def flush_or_stop(accumulator, sender_task):
    flushing = asyncio.create_task(accumulator.close())
    await asyncio.wait([flushing, sender_task], return_when=asyncio.FIRST_COMPLETED)  # expect

async def first_error(tasks):
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)  # expect
    for t in done:
        t.result()

async def poll_mirrors(client, mirrors):
    while True:
        racers = [asyncio.create_task(client.get(m)) for m in mirrors]
        done, _ = await asyncio.wait(racers, return_when=asyncio.FIRST_COMPLETED)  # expect
        if done.pop().result():
            return

async def run_jobs(next_job, report):
    while True:
        # A fresh dict each round: the unfinished jobs are dropped with it.
        pending = {}
        while (job := next_job()) is not None:
            pending[asyncio.ensure_future(job())] = id(job)
        done, _ = await asyncio.wait(pending.keys(), timeout=0.05, return_when=asyncio.FIRST_COMPLETED)  # expect
        for f in done:
            report(pending[f], f)
"#,
        r#"
import asyncio

from .utils.aio import wait_quietly


async def first_reply(ws, deadline):
    read = asyncio.create_task(ws.receive())
    timer = asyncio.create_task(asyncio.sleep(deadline))
    try:
        done, _ = await asyncio.wait([read, timer], return_when=asyncio.FIRST_COMPLETED)  # expect
        return read.result() if read in done else None
    finally:
        await wait_quietly(read)
"#,
        r#"
# The list is grown with tasks started for the race.
import asyncio


async def first_answer(self, hosts):
    racers = [self._closing]
    for h in hosts:
        racers.append(asyncio.create_task(self.query(h)))
    done, _ = await asyncio.wait(racers, return_when=asyncio.FIRST_COMPLETED)  # expect
    return done.pop().result()
"#,
        r#"
import asyncio


async def first_or_nothing(fetch, seconds):
    # A timer raced against real work: when the timer wins, the request
    # goes on with nobody watching it.
    work = asyncio.create_task(fetch())
    timer = asyncio.create_task(asyncio.sleep(seconds))
    await asyncio.wait({work, timer}, return_when=asyncio.FIRST_COMPLETED)  # expect
    return work.result() if work.done() else None
"#,
    ],
    pass: &[
        r#"
import asyncio


async def serve(app, receive):
    tasks = []

    async def stop_tasks():
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    try:
        tasks = [asyncio.create_task(app()), asyncio.create_task(receive())]
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for t in done:
            await t
    finally:
        # The losers are cancelled and reaped here.
        await stop_tasks()
"#,
        r#"
import asyncio


async def shut_down():
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    # Every task is already cancelled: this only gives them a moment.
    await asyncio.wait(tasks, timeout=0.5, return_when=asyncio.FIRST_COMPLETED)
"#,
        r#"
import asyncio

# Every task stays in `ctx.tasks` until it is done and waited for again.
async def solve(ctx):
    while True:
        done, _ = await asyncio.wait(ctx.tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            ctx.tasks.remove(task)
            ctx.report(await task)
        if not ctx.tasks:
            break
"#,
        r#"
import asyncio

async def run_jobs(next_job, report, running):
    # The dict is kept across rounds: unfinished jobs are waited for again.
    pending = {}
    while running() or pending:
        while (job := next_job()) is not None:
            pending[asyncio.ensure_future(job())] = id(job)
        done, _ = await asyncio.wait(pending.keys(), timeout=0.05, return_when=asyncio.FIRST_COMPLETED)
        for f in done:
            report(pending.pop(f), f)
"#,
        r#"
import asyncio

async def fastest(primary, fallback):
    done, pending = await asyncio.wait(
        {asyncio.create_task(primary()), asyncio.create_task(fallback())},
        return_when=asyncio.FIRST_COMPLETED,
    )
    for t in pending:
        t.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    return done.pop().result()

async def all_of(tasks):
    done, _ = await asyncio.wait(tasks)
    return done

async def drain(tasks):
    pending = set(tasks)
    while pending:
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        for t in done:
            handle(t.result())

async def race(tasks):
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    return done, pending

class Client:
    async def handshake(self):
        self.send_request()
        await asyncio.wait(
            [self.response_rcvd, self.connection_lost_waiter],
            return_when=asyncio.FIRST_COMPLETED,
        )
"#,
        r#"
import asyncio
from itertools import chain

class Pump:
    def __init__(self):
        self._inflight = set()
        self._background = set()

    async def run(self, make_work, wakeup):
        # Multiplexing: unfinished tasks stay in `_inflight` for the next round.
        while True:
            self._inflight.add(asyncio.create_task(make_work()))
            done, _ = await asyncio.wait(
                set(chain(self._inflight, [wakeup])), return_when=asyncio.FIRST_COMPLETED
            )
            self._inflight -= done

    async def admit(self, serve):
        # A free slot, not a race: the others are meant to keep running.
        while len(self._background) >= 8:
            await asyncio.wait(list(self._background), return_when=asyncio.FIRST_COMPLETED)
        self._background.add(asyncio.create_task(serve()))

async def sender_loop(next_batch, new_data):
    tasks = set()
    while True:
        tasks.add(asyncio.create_task(next_batch()))
        waiters = tasks | {new_data()}
        done, _ = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        tasks -= done
"#,
        r#"
import asyncio

from .utils.aio import cancel_and_wait


async def first_reply(ws, deadline):
    read = asyncio.create_task(ws.receive())
    timer = asyncio.create_task(asyncio.sleep(deadline))
    try:
        done, _ = await asyncio.wait([read, timer], return_when=asyncio.FIRST_COMPLETED)
        return read.result() if read in done else None
    finally:
        await cancel_and_wait(read, timer)


class Runner:
    async def race(self, a, b):
        ta = self.task_manager.create_task(a)
        tb = self.task_manager.create_task(b)
        try:
            done, _ = await asyncio.wait({ta, tb}, return_when=asyncio.FIRST_COMPLETED)
            return done.pop().result()
        finally:
            for t in (ta, tb):
                if not t.done():
                    await self.task_manager.cancel_task(t)
"#,
        r#"
import asyncio


async def serve_all(servers):
    tasks = [asyncio.create_task(s.serve()) for s in servers]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for server in servers:
            server.should_exit = True
        await asyncio.gather(*tasks)
"#,
        r#"
# A wake-up on the coordinator's own futures, gathered in a local list.
import asyncio


class Coordinator:
    async def _run(self, subscription, auto_assigned, wait_timeout):
        while not self._closing.done():
            futures = [self._closing, self._coordinator_dead_fut, subscription.unsubscribe_future]
            if auto_assigned:
                futures.append(self._rejoin_needed_fut)
            if self._heartbeat_task:
                futures.append(self._heartbeat_task)
            done, _ = await asyncio.wait(
                futures, timeout=wait_timeout, return_when=asyncio.FIRST_COMPLETED
            )
            self._handle(done)
"#,
        r#"
# A pool of at most three: the unfinished ones stay in `in_progress`.
import asyncio


async def run_all(streams, handle):
    not_started = list(streams)
    in_progress = []
    while not_started or in_progress:
        while not_started and len(in_progress) < 3:
            stream = not_started.pop()
            in_progress.append((stream, asyncio.create_task(handle(stream))))
        tasks = [task for _, task in in_progress]
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        in_progress = [(s, t) for s, t in in_progress if t not in done]
"#,
        r#"
# The connection task is awaited in the `finally`; the other is a bare future.
import asyncio


async def run(client, handle):
    task = asyncio.ensure_future(client.connect())
    on_connect = asyncio.Future()
    client.on_connect.add_observer(lambda: on_connect.set_result(None))
    done, _ = await asyncio.wait((on_connect, task), return_when=asyncio.FIRST_COMPLETED)
    await asyncio.gather(*done)
    try:
        await handle(client)
    finally:
        await client.disconnect()
        await task
"#,
        r#"
import asyncio

async def wait_any(events, timeout):
    # Each racer is a thread blocked in `Event.wait` with its own timeout:
    # cancelling a loser would not stop its thread.
    if len(events) > 1:
        coros = [asyncio.to_thread(ev.wait, timeout) for ev in events]
    else:
        coros = [asyncio.to_thread(events[0].wait, timeout)]
    await asyncio.wait(
        [asyncio.ensure_future(c) for c in coros],
        timeout=timeout,
        return_when=asyncio.FIRST_COMPLETED,
    )
"#,
        r#"
import asyncio


async def run_transaction(self, body):
    loop = asyncio.get_running_loop()
    wakeup = loop.create_future()
    runner = asyncio.create_task(self._run(body, wakeup))
    while not runner.done():
        done, _ = await asyncio.wait(
            {runner, wakeup}, timeout=5, return_when=asyncio.FIRST_COMPLETED
        )
        if runner in done:
            break
        if wakeup in done:
            wakeup = loop.create_future()
    return runner.result()
"#,
        r#"
import asyncio


async def stream(source, queue, handle):
    next_input = None
    next_output = None
    done_reading = False
    while not done_reading:
        if not next_input:
            next_input = asyncio.create_task(source.__anext__())
        if next_output is None:
            next_output = asyncio.create_task(queue.get())
        racers = [t for t in (next_input, next_output) if t]
        done, _ = await asyncio.wait(racers, return_when=asyncio.FIRST_COMPLETED)
        if next_input in done:
            try:
                await handle(next_input.result())
            except StopAsyncIteration:
                done_reading = True
            next_input = None
        if next_output in done:
            yield next_output.result()
            next_output = None
"#,
        r#"
import asyncio
import signal


async def main(server):
    stop = asyncio.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    serving = asyncio.create_task(server.serve())
    await asyncio.wait(
        [serving, asyncio.create_task(stop.wait())],
        return_when=asyncio.FIRST_COMPLETED,
    )
    if not serving.done():
        server.should_exit = True
        await serving
"#,
        r#"
import asyncio


class Adapter:
    async def reply(self, user, msg):
        state = self.buffers.get(user)
        if state:
            task = state.get("task")
            done, _ = await asyncio.wait({task}, timeout=4.5, return_when=asyncio.FIRST_COMPLETED)
            if done:
                return task.result()
            return "still working, the answer follows"
        self.buffers[user] = state = {"task": None}
        state["task"] = task = asyncio.create_task(self.answer(msg))
        return "thinking"
"#,
        r#"
import asyncio
from datetime import timedelta


async def run_until_stopped(tick, interval: timedelta, stop: asyncio.Event):
    # A stop signal raced against a timer: the loser is a pending sleep or
    # an event waiter, neither of which holds anything.
    stop_task = asyncio.create_task(stop.wait())
    while True:
        await tick()
        sleep_task = asyncio.create_task(asyncio.sleep(interval.total_seconds()))
        await asyncio.wait({stop_task, sleep_task}, return_when=asyncio.FIRST_COMPLETED)
        if stop.is_set():
            return
"#,
        r#"
import asyncio


def pump(generator):
    requests = asyncio.Queue()

    async def drive():
        while (response := await requests.get()) is not None:
            response.set_result(await generator.__anext__())

    worker = asyncio.create_task(drive())

    async def iterate():
        # The worker is waited for again each round until it is done; the
        # other racer is a bare future.
        while not worker.done():
            response = asyncio.get_running_loop().create_future()
            requests.put_nowait(response)
            pending = {response, worker}
            done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            if response not in done:
                break
            yield response.result()
        worker.result()

    return iterate()
"#,
        r#"
import asyncio


class Channel:
    def _ensure_consumer_tasks(self):
        if self._consume_task is None or self._consume_task.done():
            self._consume_task = asyncio.create_task(self._consume())

    async def drain_events(self, timeout):
        self._ensure_consumer_tasks()
        tasks = [t for t in (self._consume_task, self._xread_task) if t is not None]
        if not tasks:
            return False
        done, _pending = await asyncio.wait(
            tasks, return_when=asyncio.FIRST_COMPLETED, timeout=timeout
        )
        return bool(done)
"#,
        r#"
import asyncio


async def run_until_idle():
    current = asyncio.current_task()
    while True:
        pending = {t for t in asyncio.all_tasks() if t is not current}
        if not pending:
            return
        done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_EXCEPTION)
        for t in done:
            if not t.cancelled() and t.exception() is not None:
                raise t.exception()
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(WaitFirstCompleted);
}
