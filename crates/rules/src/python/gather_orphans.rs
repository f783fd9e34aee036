//! PY009: `asyncio.gather` whose first failure strands the other awaitables.

use crate::context::FileCx;
use crate::python::common::{fanout_source, in_task_group};
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct GatherOrphans;

pub static META: RuleMeta = RuleMeta {
    id: "PY009",
    name: "gather-without-supervision",
    category: Category::GatherOrphans,
    severity: Severity::Medium,
    languages: &[Language::Python],
    summary: "`asyncio.gather` of several awaitables without `return_exceptions=True`, outside a task group: one failure leaves the others running.",
    docs: r#"
`await asyncio.gather(a(), b(), ...)` with more than one awaitable, no
`return_exceptions=True`, not inside an `asyncio.TaskGroup` (or anyio/trio
task group) and with no cancellation of the siblings in the function (or
in a helper of the file it calls, such as a `finally: cancel_all(loop)`,
or a helper named for cancelling that is handed the tasks:
`finally: await cancel_and_wait(*tasks)`, wherever it is defined).
A list of one awaitable (`tasks = [remove(ids)]`, then `gather(*tasks)`)
is not reported. Tasks gathered from a collection of the object
(`*self.tasks.values()`, a copy `*list(self.tasks)`, or a local list the
function also stores there, `self.tasks = tasks`)
whose every task another method of the class cancels still have an owner
when one fails, and are not reported; nor are tasks held in fields of the
object (`gather(self._reader, self._writer)`) that another method cancels. Nor is a gather in a teardown
method (`close`, `_close`, `_do_close`, `shutdown`, `stop`,
`wait_closed`),
where every close should run to its end even when one fails, or a
`gather(*futs)` after `await asyncio.wait(futs)`, when all of them have
already finished (also a list of only the done ones, `[t for t in
tasks if t.done()]`), or one in a script's `if __name__ == "__main__":`
block, whose `asyncio.run` cancels and reaps what is left when it
raises, or in a plain statement of a script's module level with no `try`
around it (`loop.run_until_complete(gather(a(), b()))`: a failure ends
the process), or in a coroutine the file only runs as `asyncio.run(main(..))`
when nothing in it catches the gather's error and goes on (its failure
ends the loop, which cancels the rest; a handler that ends in `raise` or
`sys.exit(1)`, or one for `KeyboardInterrupt` only, goes on to that end), or run by a plain function with
`loop.run_until_complete(gather(..))` that closes that loop afterwards
(the others never run again). Nor is a gather nothing waits on (a bare
`asyncio.gather(*tasks)` statement): it re-raises to no one. Nor is one
operation gathered with a sleep that paces it
(`gather(self.work(), asyncio.sleep(5))`), or with a bare future that a
callback completes (`gather(cli.write(..), self._reply)` with `self._reply
= asyncio.Future()`): a sleep or a future left behind does nothing. Nor is a gather of
only functions run on other threads (`loop.run_in_executor(None, fn)`,
`asyncio.to_thread(fn)`, also collected in a local list, `scans =
[sast]` then `scans.append(secrets)`): cancelling those futures does not stop their
threads, so a task group would change nothing. Nor is a gather of coroutines of the file that each catch every
ordinary error (all their awaits in a `try` whose `except Exception:`
logs or returns instead of raising, also each round of a loop, `while
running: try: ... except Exception: await asyncio.sleep(1)`; an await
outside such a `try` may be a sleep or a call of a coroutine of the file
that catches everything in the same way, two calls down, or the entry
of an `async with` on a lock or semaphore), called
directly (or first bound to a local, `plugin = self._plugin_stats()`,
also one of the function around a closure that gathers), started as
tasks collected in a local list (also gathered a slice at a time, or
appended by a callback the function defines), listed in a literal (`coros =
[_check(a()), _check(b())]`), or built by a comprehension
(`gather(*tasks.values())` of `tasks = {n: self.check(p) for n, p in
items}`), or picked by a conditional with a placeholder that does
nothing (`self._send(x) if enabled else self._noop()`, `async def
_noop(self): return`): the gather has no failure to stop
early on; nor of coroutines of the file none of which ever suspends (no
`await`, `async for` or `async with` of their own): each task runs to its
end in its first step, so all have finished before the gather sees a
failure (a gather may mix the two kinds).

## Why

When one of the gathered operations raises, `gather` re-raises that
exception to the caller immediately, but it does not cancel the others:
they keep running with nobody awaiting them. The caller believes the
operation failed and moved on, while the siblings go on writing, holding
connections and spending quota on behalf of a request that already
returned an error. Their own exceptions are never seen.

## Example

```python
import asyncio

async def load_dashboard(user_id):
    profile, orders = await asyncio.gather(fetch_profile(user_id), fetch_orders(user_id))
    return profile, orders
```

## Fix

Use a `TaskGroup`, which cancels the siblings when one fails; or, when
partial results are useful, pass `return_exceptions=True` and look at each
result.

```python
import asyncio

async def load_dashboard(user_id):
    async with asyncio.TaskGroup() as tg:
        profile = tg.create_task(fetch_profile(user_id))
        orders = tg.create_task(fetch_orders(user_id))
    return profile.result(), orders.result()
```
"#,
    examples: &EXAMPLES,
};

impl Rule for GatherOrphans {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for (id, c) in cx.calls_to(&["asyncio.gather", "asyncio.tasks.gather"]) {
            let e = cx.expr(id);
            let f = cx.func_of(id);
            if cx.func(f).is_test || !is_unsupervised(cx, id, c) || in_task_group(cx, id) {
                continue;
            }
            // A bare `asyncio.gather(*tasks)` statement: nothing waits on
            // it, so nothing re-raises (its errors are never retrieved, a
            // fire-and-forget problem of its own, not this one).
            if matches!(cx.tree.expr_parent(id), unsnarl_model::walk::Parent::Stmt(s)
                if matches!(cx.stmt(s).kind, StmtKind::Expr(_)))
            {
                continue;
            }
            if cancels_something(cx, f)
                || gathers_owned_tasks(cx, f, c)
                || gathers_owned_fields(cx, f, c)
                || in_teardown(cx, f)
                || already_finished(cx, id, c)
                || crate::python::common::in_main_guard(cx, e.span)
                // The loop's root: its failure ends the loop, which cancels
                // the rest, unless a `try` around the gather catches it and
                // the function goes on with the siblings still running (a
                // handler that ends in `raise` or `sys.exit(1)` goes on to
                // the loop's end all the same, nor does one for
                // `KeyboardInterrupt` alone catch the gather's failure).
                || (crate::python::common::only_a_loop_root(cx, f)
                    && !crate::util::in_try_body_handling(cx, id, |h| {
                        let ordinary = h.types.is_empty()
                            || h.types.iter().any(|t| {
                                !matches!(
                                    t.rsplit('.').next(),
                                    Some("KeyboardInterrupt" | "SystemExit" | "GeneratorExit")
                                )
                            });
                        ordinary && !crate::util::always_raises(cx.model, &h.body)
                    }))
                || every_gathered(cx, f, c, Gathered::SettlingAlone)
                || paced_by_sleep(cx, c)
                || every_gathered(cx, f, c, Gathered::ThreadWork)
                || run_on_a_loop_then_closed(cx, id)
                // A script's own statement (`loop.run_until_complete(
                // gather(..))` at module level, no `try` around it): a
                // failure ends the process, and the rest with it.
                || (matches!(cx.func(f).kind, FnKind::Module)
                    && !crate::util::in_try_body_handling(cx, id, |_| true))
            {
                continue;
            }
            out.push(cx.finding(
                &META,
                e.span,
                "if one of the gathered awaitables raises, `gather` re-raises at once and does not cancel the others: they keep running unsupervised and their errors are lost",
                "use `async with asyncio.TaskGroup() as tg:` (siblings are cancelled on failure), or pass `return_exceptions=True` and check each result",
            ));
        }
    }
}

/// Several awaitables, no `return_exceptions`, and not a fan-out over a
/// comprehension (that shape is judged by the fan-out rule).
fn is_unsupervised(cx: &FileCx, id: ExprId, c: &Call) -> bool {
    if let Some(r) = c.kwarg("return_exceptions")
        && !matches!(cx.model.literal(r), Some(Lit::Bool(false)))
    {
        return false;
    }
    let awaitables: Vec<&Arg> = c.args.iter().filter(|a| a.name.is_none()).collect();
    match awaitables.as_slice() {
        [] => false,
        [one] if !one.spread => false,
        // `tasks = [one_call()]`, then `gather(*tasks)`: a single awaitable.
        [one] if single_item_list(cx, cx.func_of(id), one.value) => false,
        // One per item of a collection: the fan-out rule judges it.
        [one] => {
            let inline = matches!(
                cx.expr(cx.model.strip(one.value)).kind,
                ExprKind::Comprehension { .. }
            );
            !inline && fanout_source(cx, id).is_none()
        }
        _ => true,
    }
}

/// A local bound once, to a list or tuple literal of one plain element,
/// and never grown (no `append`, `extend`, `insert` or `+=` on it).
fn single_item_list(cx: &FileCx, f: FuncId, e: ExprId) -> bool {
    let Some(name) = cx.model.name_of(e) else {
        return false;
    };
    let one = crate::python::common::value_bound_once(cx, f, name).is_some_and(|v| {
        matches!(&cx.expr(cx.model.strip(v)).kind, ExprKind::Collection { kind: CollKind::List | CollKind::Tuple, elems, .. }
            if matches!(elems.as_slice(), [x] if !matches!(cx.expr(*x).kind, ExprKind::Spread(_))))
    });
    let grown = cx.body_calls(f).any(|x| {
        cx.call(x).is_some_and(|k| {
            matches!(k.name.as_str(), "append" | "extend" | "insert" | "__iadd__")
                && k.receiver.and_then(|r| cx.model.name_of(r)) == Some(name)
        })
    }) || cx.body_stmts(f).iter().any(|&st| {
        matches!(&cx.stmt(st).kind, StmtKind::Assign { targets, op, .. }
            if !matches!(op, AssignOp::Plain | AssignOp::Declare { .. })
                && targets.iter().any(|&t| cx.model.name_of(t) == Some(name)))
    });
    one && !grown
}

/// One operation gathered with sleeps (`gather(self.work(),
/// asyncio.sleep(5))`: each round takes at least the pause) or with bare
/// futures another callback completes (`gather(write(), self._reply)`): when the
/// operation fails, what is left running is only a sleep, with nothing to
/// do and no error to lose; a failing sleep leaves only the operation,
/// which the caller's own cancellation still reaches.
fn paced_by_sleep(cx: &FileCx, c: &Call) -> bool {
    let awaitables: Vec<&Arg> = c.args.iter().filter(|a| a.name.is_none()).collect();
    let is_sleep = |a: &Arg| {
        !a.spread
            && cx.call(cx.model.strip(a.value)).is_some_and(|k| {
                matches!(
                    k.target.as_deref(),
                    Some("asyncio.sleep" | "anyio.sleep" | "trio.sleep")
                )
            })
    };
    // A bare future (`self._reply = asyncio.Future()`, `loop.create_future()`)
    // runs nothing: someone else sets its result.
    let is_bare_future = |a: &Arg| {
        !a.spread
            && cx.model.dotted(a.value).is_some_and(|d| {
                cx.model.stmts.iter().any(|st| {
                    matches!(&st.kind, StmtKind::Assign { targets, value: Some(v), .. }
                    if targets.iter().any(|&t| cx.model.dotted(t).as_deref() == Some(d.as_str()))
                        && cx.call(cx.model.strip(*v)).is_some_and(|k| {
                            crate::python::common::makes_asyncio_future(cx, k)
                        }))
                })
            })
    };
    let idle = awaitables
        .iter()
        .filter(|a| is_sleep(a) || is_bare_future(a))
        .count();
    idle > 0 && awaitables.len() - idle <= 1 && awaitables.iter().all(|a| !a.spread)
}

/// A gathered coroutine that leaves no sibling behind when another fails:
/// it catches every ordinary error (or does nothing), or it never
/// suspends. A gather may mix the two kinds.
fn settles_alone(cx: &FileCx, g: FuncId) -> bool {
    catches_everything_or_does_nothing(cx, g) || crate::python::common::never_suspends(cx, g)
}

/// What [`every_gathered`] asks of each gathered awaitable.
#[derive(Clone, Copy)]
enum Gathered {
    /// A coroutine of the file that settles alone ([`settles_alone`]).
    SettlingAlone,
    /// A function run on another thread (`loop.run_in_executor(None,
    /// fn)`, `asyncio.to_thread(fn)`): cancelling such a future does not
    /// stop its thread, so a task group would leave the same work running
    /// after a failure; nothing is stranded that supervision could stop.
    ThreadWork,
}

/// Every gathered awaitable is what `kind` asks for (for
/// [`Gathered::SettlingAlone`], a coroutine of the file that settles alone),
/// called directly or started as a task and collected in a local list
/// (`tasks.append(create_task(self.process(r)))` then `gather(*tasks)`)
/// or built by a comprehension (`tasks = {n: self.check(p) for n, p in
/// items}` then `gather(*tasks.values())`), or listed in a literal
/// (`coros = [_check(a()), _check(b())]` then `gather(*coros)`).
/// Two properties leave no sibling behind: each coroutine catches every
/// ordinary error itself (`async def _run_module(..): try: .. except
/// Exception: log(..); return []`), so `gather` has no failure to stop
/// early on; or none ever suspends (no `await` of its own), so each task
/// runs to its end in its first step, and all have finished by the time
/// `gather` hears of a failure.
fn every_gathered(cx: &FileCx, f: FuncId, c: &Call, kind: Gathered) -> bool {
    // The value a name is bound to once: in `f`, or (when `f` binds it
    // nowhere) in the function around it, for a gather in a closure
    // (`dyn = _check_dynamic()` then `async def both(): return await
    // asyncio.gather(dyn, ..)`).
    let bound_once = |n: &str| -> Option<ExprId> {
        let mut scope = Some(f);
        while let Some(g) = scope {
            if cx.func(g).params.iter().any(|p| p.name == n) {
                return None;
            }
            if crate::python::common::values_bound_to(cx, g, n)
                .next()
                .is_some()
            {
                return crate::python::common::value_bound_once(cx, g, n);
            }
            scope = cx.func(g).parent;
        }
        None
    };
    // `real`: not a stub, `async def check(self) -> bool: ...` of a
    // protocol, whose callers run some other class's code.
    let one = |call: ExprId, real: bool| {
        let call = cx.model.strip(call);
        if let Gathered::ThreadWork = kind {
            return cx
                .call(call)
                .is_some_and(|k| cx.effect(k, Effect::Offload).is_some());
        }
        // `create_task(coro)`, `ensure_future(coro)`: the coroutine inside.
        let inner = cx
            .call(call)
            .filter(|k| crate::python::common::is_task_spawn(cx, k))
            .and_then(|k| k.positional(0))
            .map_or(call, |a| cx.model.strip(a));
        cx.call(inner)
            .and_then(|k| cx.callee_in_file(k))
            .is_some_and(|g| {
                (!real || crate::python::common::does_work(cx, g)) && settles_alone(cx, g)
            })
    };
    // `self._write(..) if enabled else self._noop()`: either one.
    let qualifies = |call: ExprId| match cx.expr(cx.model.strip(call)).kind {
        ExprKind::Ternary { then, orelse, .. } => one(then, true) && one(orelse, true),
        _ => one(call, false),
    };
    // The element a comprehension builds (of a dict one, the value):
    // `{name: self.check(p) for name, p in items}`.
    let built_by = |x: ExprId| -> Option<ExprId> {
        let ExprKind::Comprehension { elt, .. } = &cx.expr(cx.model.strip(x)).kind else {
            return None;
        };
        Some(match &cx.expr(*elt).kind {
            ExprKind::Other(kv) if kv.len() == 2 => kv[1],
            _ => *elt,
        })
    };
    // `*[...]`, `*tasks` or `*tasks.values()` of a local bound once to a
    // comprehension.
    let comprehended = |x: ExprId| -> Option<ExprId> {
        let x = cx.model.strip(x);
        let source = match cx.call(x) {
            Some(k) if k.name == "values" && k.args.is_empty() => k.receiver?,
            _ => x,
        };
        built_by(source).or_else(|| built_by(bound_once(cx.model.name_of(source)?)?))
    };
    // A name stands for the value it is first bound to in `f`
    // (`tasks.append(task)` after `task = create_task(..)`).
    let resolved = |v: ExprId| -> ExprId {
        cx.model
            .name_of(v)
            .and_then(|n| {
                crate::python::common::values_bound_to(cx, f, n)
                    .next()
                    .flatten()
            })
            .unwrap_or(v)
    };
    // `*coros` of a local bound once to a list or tuple literal (`coros =
    // [_check(a()), _check(b())]`), or `*[...]` itself: its elements.
    let listed = |x: ExprId| -> Option<Vec<ExprId>> {
        let literal = |v: ExprId| match &cx.expr(cx.model.strip(v)).kind {
            ExprKind::Collection { elems, keys, .. } if keys.is_empty() && !elems.is_empty() => {
                Some(elems.clone())
            }
            _ => None,
        };
        literal(x).or_else(|| literal(bound_once(cx.model.name_of(cx.model.strip(x))?)?))
    };
    // What the function (or a callback it defines) appends to the local
    // list `list` (`tasks.append(task)` after `task = create_task(..)`:
    // the value the name is bound to).
    let appended_to = |list: &str| -> Vec<ExprId> {
        crate::python::common::func_and_nested(cx, f)
            .into_iter()
            .flat_map(|g| cx.body_calls(g))
            .filter_map(|e| cx.call(e))
            .filter(|k| {
                k.name == "append" && k.receiver.and_then(|r| cx.model.name_of(r)) == Some(list)
            })
            .filter_map(|k| k.positional(0))
            .map(&resolved)
            .collect()
    };
    let mut any = false;
    for a in c.args.iter().filter(|a| a.name.is_none()) {
        let ok = if let Some(elt) = a.spread.then(|| comprehended(a.value)).flatten() {
            qualifies(elt)
        } else if let Some(elems) = a.spread.then(|| listed(a.value)).flatten() {
            // `scans = [sast]`, then `if secrets: scans.append(scan)`.
            let grown = cx
                .model
                .name_of(cx.model.strip(a.value))
                .map(appended_to)
                .unwrap_or_default();
            elems
                .iter()
                .map(|&e| resolved(e))
                .chain(grown)
                .all(&qualifies)
        } else if a.spread {
            // `*tasks` of a local list only ever appended such calls (also
            // a slice of it bound once, `batch = tasks[i:i + n]`).
            let sliced = |n: &str| -> Option<&str> {
                match &cx.expr(cx.model.strip(bound_once(n)?)).kind {
                    ExprKind::Index { obj, .. } => cx.model.name_of(*obj),
                    _ => None,
                }
            };
            let list = cx.model.name_of(a.value).map(|n| sliced(n).unwrap_or(n));
            list.is_some_and(|list| {
                // Also in callbacks `f` defines (`def on_response(r):
                // tasks.append(ensure_future(read(r)))`).
                let appended = appended_to(list);
                !appended.is_empty() && appended.iter().all(|&v| qualifies(v))
            })
        } else {
            // `plugin = self._plugin_storage(..)` first, then `gather(plugin,
            // ..)`: a local bound once.
            let v = cx
                .model
                .name_of(a.value)
                .and_then(bound_once)
                .unwrap_or(a.value);
            qualifies(v)
        };
        if !ok {
            return false;
        }
        any = true;
    }
    any
}

/// `loop.run_until_complete(asyncio.gather(..))` in a plain function that
/// closes that loop afterwards (`finally: loop.close()`): when one fails,
/// the loop stops with it and is closed, so the others never run again.
fn run_on_a_loop_then_closed(cx: &FileCx, id: ExprId) -> bool {
    let unsnarl_model::walk::Parent::Expr(p) = cx.tree.expr_parent(id) else {
        return false;
    };
    let Some(run) = cx.call(p).filter(|k| k.name == "run_until_complete") else {
        return false;
    };
    let Some(lp) = run.receiver.and_then(|r| cx.model.dotted(r)) else {
        return false;
    };
    let f = cx.func_of(id);
    !cx.func(f).is_async
        && cx.body_calls(f).any(|e| {
            cx.call(e).is_some_and(|k| {
                k.name == "close"
                    && k.args.is_empty()
                    && k.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some(lp.as_str())
            })
        })
}

/// The coroutine's awaits all sit in `try` blocks (at its top level or
/// in its loops: `while running: try: ... except Exception: await
/// asyncio.sleep(1)`) with a handler for every ordinary error (`except
/// Exception`, `BaseException` or bare) that raises nothing; such a
/// handler may itself await only a sleep. An await outside such a `try`
/// may call a coroutine of the file that catches everything in the same
/// way (`rows = await self._fetch(q)`, whose own `except Exception:
/// return []` ends every failure), two calls down.
pub(crate) fn catches_everything(cx: &FileCx, g: FuncId) -> bool {
    catches_everything_within(cx, g, 2)
}

/// Or a placeholder that does nothing (`async def _noop(self): return`),
/// gathered in place of an optional step: it cannot fail.
fn catches_everything_or_does_nothing(cx: &FileCx, g: FuncId) -> bool {
    let func = cx.func(g);
    let idle = func.is_async
        && func.decorators.iter().all(|d| {
            matches!(
                d.trim_start_matches("builtins."),
                "staticmethod" | "classmethod"
            )
        })
        && func.body.iter().all(|&s| match &cx.stmt(s).kind {
            StmtKind::Pass | StmtKind::Return(None) => true,
            StmtKind::Return(Some(v)) => matches!(cx.model.literal(*v), Some(Lit::Null)),
            // A docstring.
            StmtKind::Expr(e) => matches!(cx.model.literal(*e), Some(Lit::Str(_))),
            _ => false,
        });
    idle || catches_everything(cx, g)
}

fn catches_everything_within(cx: &FileCx, g: FuncId, depth: u32) -> bool {
    let func = cx.func(g);
    if !func.is_async {
        return false;
    }
    let all = crate::util::awaits_in_block(cx.model, &func.body);
    // Entering `async with semaphore:` fails only by cancellation.
    let mut covered = crate::python::common::lock_entries(cx, &func.body);
    let mut guarded = false;
    for s in unsnarl_model::walk::stmts_in_block(cx.model, &func.body) {
        let StmtKind::Try { body, handlers, .. } = &cx.stmt(s).kind else {
            continue;
        };
        let catch_all = handlers
            .iter()
            .find(|h| crate::util::swallows_every_error(cx.model, h));
        let Some(h) = catch_all else { continue };
        guarded = true;
        covered.extend(crate::util::awaits_in_block(cx.model, body));
        // A pause before the next round cannot fail but by cancellation.
        covered.extend(
            unsnarl_model::walk::exprs_in_block(cx.model, &h.body)
                .into_iter()
                .filter(|&e| {
                    matches!(cx.expr(e).kind, ExprKind::Await(x)
                        if cx.call(cx.model.strip(x)).is_some_and(|c| crate::python::common::SLEEPS.contains(&c.target.as_deref().unwrap_or(""))))
                })
                .map(|e| cx.expr(e).span),
        );
    }
    let helper_seen = std::cell::Cell::new(false);
    let safe_helper = |a: &Span| {
        depth > 0
            && unsnarl_model::walk::exprs_in_block(cx.model, &func.body)
                .into_iter()
                .find(|&e| cx.expr(e).span == *a)
                .is_some_and(|e| {
                    let ExprKind::Await(x) = cx.expr(e).kind else {
                        return false;
                    };
                    cx.call(cx.model.strip(x)).is_some_and(|c| {
                        // A pause between calls fails only by cancellation.
                        crate::python::common::SLEEPS.contains(&c.target.as_deref().unwrap_or(""))
                            || cx.callee_in_file(c).is_some_and(|h| {
                                let safe = h != g && catches_everything_within(cx, h, depth - 1);
                                helper_seen.set(helper_seen.get() || safe);
                                safe
                            })
                    })
                })
    };
    // Without a `try` of its own, some await must reach such a helper:
    // sleeps alone catch nothing.
    all.iter().all(|a| covered.contains(a) || safe_helper(a)) && (guarded || helper_seen.get())
}

/// `gather(*self.tasks.values())` (or `*self.tasks`) where another method
/// of the class cancels every task of that collection (`for t in
/// self.tasks.values(): t.cancel()`): when one fails, the others are still
/// held by the object, and its shutdown stops them.
fn gathers_owned_tasks(cx: &FileCx, f: FuncId, c: &Call) -> bool {
    let Some(class) = cx.func(f).class.as_deref() else {
        return false;
    };
    let [one] = c.args.as_slice() else {
        return false;
    };
    let mut e = cx.model.strip(one.value);
    // `gather(*list(self._tasks))`: a copy of the same set.
    if let Some(k) = cx.call(e).filter(|k| {
        matches!(
            k.target.as_deref(),
            Some("builtins.list" | "builtins.tuple")
        ) && k.args.len() == 1
            && !k.args[0].spread
    }) {
        e = cx.model.strip(k.args[0].value);
    }
    if let Some(v) = cx
        .call(e)
        .filter(|v| v.name == "values" && v.args.is_empty())
    {
        let Some(r) = v.receiver else { return false };
        e = r;
    }
    // `self.tasks = tasks` then `gather(*tasks)`: the local is the field's
    // list.
    if let Some(local) = cx.model.name_of(e)
        && let Some(field) = stored_in_field(cx, f, local)
    {
        e = field;
    }
    let ExprKind::Attr { obj, name, .. } = &cx.expr(e).kind else {
        return false;
    };
    one.spread
        && matches!(cx.model.name_of(*obj), Some("self" | "cls"))
        && crate::python::common::class_cancels_every_task_of(cx, class, f, name)
}

/// The `self.field` target of `self.field = local` in `f`.
fn stored_in_field(cx: &FileCx, f: FuncId, local: &str) -> Option<ExprId> {
    unsnarl_model::walk::stmts_in_block(cx.model, &cx.func(f).body)
        .into_iter()
        .find_map(|st| match &cx.stmt(st).kind {
            StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } if cx.model.name_of(*v) == Some(local) => targets
                .iter()
                .copied()
                .find(|&t| matches!(&cx.expr(t).kind, ExprKind::Attr { .. })),
            _ => None,
        })
}

/// `gather(self._read_task, self._forward_task)` where another method of
/// the class cancels each of those fields (`self._read_task.cancel()`, or
/// hands it to a cancelling helper: `await cancel_and_wait(self._a,
/// self._b)`): the tasks belong to the object, whose shutdown stops them.
fn gathers_owned_fields(cx: &FileCx, f: FuncId, c: &Call) -> bool {
    let Some(class) = cx.func(f).class.as_deref() else {
        return false;
    };
    let fields: Vec<String> = c
        .args
        .iter()
        .filter(|a| a.name.is_none())
        .filter_map(|a| {
            let d = cx.model.dotted(a.value)?;
            (d.starts_with("self.") && !a.spread).then_some(d)
        })
        .collect();
    let positional = c.args.iter().filter(|a| a.name.is_none()).count();
    if fields.is_empty() || fields.len() != positional {
        return false;
    }
    let cancelled: Vec<String> = cx
        .model
        .function_ids()
        .filter(|&g| g != f && cx.func(g).class.as_deref() == Some(class))
        .flat_map(|g| cx.body_calls(g).collect::<Vec<_>>())
        .filter_map(|e| cx.call(e))
        .filter(|k| crate::python::common::cancels(k))
        .flat_map(|k| {
            k.receiver
                .filter(|_| k.name == "cancel")
                .into_iter()
                .chain(k.args.iter().map(|a| a.value))
                .filter_map(|x| cx.model.dotted(x))
                .collect::<Vec<_>>()
        })
        .collect();
    fields.iter().all(|d| cancelled.contains(d))
}

/// A teardown method (`close`, `_close`, `close_rpc`, `shutdown`, `stop`):
/// the gathered awaitables close what the object holds, and when one close
/// fails the others should still run to their end, which is what `gather`
/// does (a task group would cancel them half-way).
fn in_teardown(cx: &FileCx, f: FuncId) -> bool {
    let name = cx.func(f).name.trim_start_matches('_');
    // The worker behind a public teardown (`close()` -> `_do_close()`).
    let name = name.strip_prefix("do_").unwrap_or(name);
    let verb = name.split('_').next().unwrap_or(name);
    // (`wait_closed`, asyncio's own name for waiting out a teardown.)
    crate::python::common::is_closing_method(verb)
        || matches!(verb, "teardown" | "cleanup" | "terminate" | "disconnect")
        || name == "wait_closed"
}

/// `gather(*futs)` after `await asyncio.wait(futs)` (waiting for all of
/// them, the default) in the same function: every awaitable has finished,
/// and `gather` only collects the results and the first error.
fn already_finished(cx: &FileCx, id: ExprId, c: &Call) -> bool {
    let [one] = c.args.as_slice() else {
        return false;
    };
    let Some(name) = one.spread.then(|| cx.model.dotted(one.value)).flatten() else {
        return false;
    };
    let f = cx.func_of(id);
    // `done = [t for t in tasks if t.done()]`: only finished ones.
    let filtered_done = |v: Option<ExprId>| {
        v.is_some_and(|v| {
            matches!(&cx.expr(cx.model.strip(v)).kind, ExprKind::Comprehension { generators, .. }
            if matches!(generators.as_slice(), [g] if cx.model.name_of(g.target).is_some_and(|t| {
                g.conds.iter().any(|&k| cx.call(k).is_some_and(|c| {
                    c.name == "done" && c.args.is_empty()
                        && c.receiver.and_then(|r| cx.model.name_of(r)) == Some(t)
                }))
            })))
        })
    };
    let mut bound = crate::python::common::values_bound_to(cx, f, &name).peekable();
    if bound.peek().is_some() && bound.all(filtered_done) {
        return true;
    }
    cx.body_calls(f).any(|e| {
        let w = cx.call(e).unwrap();
        matches!(
            w.target.as_deref(),
            Some("asyncio.wait" | "asyncio.tasks.wait")
        ) && w.kwarg("return_when").is_none()
            && w.kwarg("timeout").is_none()
            && w.positional(1).is_none()
            && cx.expr(e).span.end <= cx.expr(id).span.start
            && matches!(cx.tree.expr_parent(e), unsnarl_model::walk::Parent::Expr(p)
                if matches!(cx.expr(p).kind, ExprKind::Await(_)))
            && w.positional(0).and_then(|a| cx.model.dotted(a)).as_deref() == Some(name.as_str())
            && !cx.in_loop(e)
    })
}

/// True when the function cancels tasks somewhere (reaping after cancel, or
/// cancelling siblings on failure), itself or through a helper of the file
/// (`finally: _cancel_all_tasks(loop)`).
fn cancels_something(cx: &FileCx, f: FuncId) -> bool {
    crate::python::common::cancels_within(cx, f, 1)
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import asyncio

async def refresh(user):
    await asyncio.gather(sync_profile(user), sync_billing(user))  # expect

async def start(tasks):
    results = await asyncio.gather(*tasks)  # expect
    return results


async def on_block(block, provider, with_traces):
    # One item at first, a second appended: two siblings after all.
    coroutines = [get_logs(block, provider)]
    if with_traces:
        coroutines.append(get_traces(block, provider))
    return await asyncio.gather(*coroutines)  # expect
"#,
        r#"
from asyncio import gather

async def both():
    a, b = await gather(  # expect
        step_one(),
        step_two(),
        return_exceptions=False,
    )
"#,
        r#"
import asyncio


class Worker:
    def __init__(self):
        self.tasks = {}

    def start_job(self, job_id):
        self.tasks[job_id] = asyncio.create_task(self.run_job(job_id))

    async def drain(self):
        # Nothing ever cancels what self.tasks holds.
        await asyncio.gather(*self.tasks.values())  # expect

    def handle_sig(self):
        for t in self.tasks.values():
            print(t.get_name())
"#,
        r#"
import asyncio

class Cluster:
    async def _restart(self):
        await asyncio.gather(self.scheduler.start(), self.nanny.start())  # expect
"#,
        r#"
import asyncio

async def run_all(workers):
    futs = [asyncio.ensure_future(w.run()) for w in workers]
    await asyncio.wait(futs, return_when=asyncio.FIRST_COMPLETED)
    return await asyncio.gather(*futs)  # expect
"#,
        r#"
import asyncio

from .utils.aio import wait_all


async def bridge(ws, pipe):
    tasks = [asyncio.create_task(recv(ws, pipe)), asyncio.create_task(send(ws, pipe))]
    try:
        await asyncio.gather(*tasks)  # expect
    finally:
        await wait_all(*tasks)


async def relay(a, b, cancelled):
    up = asyncio.create_task(a.pump())
    down = asyncio.create_task(b.pump())
    await asyncio.gather(up, down)  # expect
    cancelled.set()
"#,
        r#"
import asyncio


class Runner:
    async def start(self):
        self._read_task = asyncio.create_task(self._read_audio())
        self._forward_task = asyncio.create_task(self._forward_video())

    async def wait(self):
        await asyncio.gather(self._read_task, self._forward_task)  # expect

    async def aclose(self):
        self._read_task.cancel()
"#,
        r#"
import asyncio


async def lookup(resolver):
    return await asyncio.gather(  # expect
        resolver.query("a.example"),
        resolver.query("b.example"),
    )


class Pool:
    async def _do_connect(self):
        await asyncio.gather(self._dial(1), self._dial(2))  # expect
"#,
        r#"
import asyncio
import logging

log = logging.getLogger(__name__)

# The handler logs and raises again: one failure still leaves the other running.
async def run_module(name, coro):
    try:
        return await coro
    except Exception:
        log.exception("%s crashed", name)
        raise

async def run(session):
    return await asyncio.gather(run_module("a", a(session)), run_module("b", b(session)))  # expect
"#,
        r#"
import asyncio

# Two operations besides the pause: one failing strands the other.
async def sync_round(store, feed):
    await asyncio.gather(store.flush(), feed.pull(), asyncio.sleep(1))  # expect
"#,
        r#"
import asyncio


async def poll(device):
    await device.read()


async def watch(devices, log):
    try:
        await asyncio.gather(poll(devices[0]), poll(devices[1]))  # expect
    except OSError as e:
        # Caught: the loop goes on, and so does the other poller.
        log.warning("poll failed: %s", e)
    await asyncio.sleep(3600)


async def serve(devices):
    # Also run as a task of a running loop, not only as its root.
    await asyncio.gather(poll(devices[0]), poll(devices[1]))  # expect


def main(devices, log):
    asyncio.run(watch(devices, log))
    asyncio.run(serve(devices))


async def restart(devices):
    await serve(devices)
"#,
        r#"
import asyncio


class Coherence:
    async def score(self, text):
        if not text:
            raise ValueError("empty response")
        return len(set(text.split())) / len(text.split())


class Judge:
    async def score(self, text):
        # Suspends: still running when the other one raises.
        return await self.client.rate(text)


class Scorer:
    def __init__(self):
        self._coherence = Coherence()
        self._judge = Judge()

    async def score(self, text):
        return await asyncio.gather(self._coherence.score(text), self._judge.score(text))  # expect
"#,
        r#"
import asyncio


class Relay:
    async def run(self):
        await asyncio.gather(self._poll(), self._send())  # expect

    async def _poll(self):
        while self.running:
            try:
                await self.fetch()
            except Exception as exc:
                # Reporting the error is I/O too, and can fail.
                await self.report(exc)

    async def _send(self):
        while self.running:
            try:
                await self.flush()
            except Exception:
                await asyncio.sleep(1.0)
"#,
        r#"
import asyncio

import httpx


async def _get_page(client, url, cursor):
    r = await client.get(url, params={"cursor": cursor})
    r.raise_for_status()
    return r.json()


async def fetch_all(client, url, pages):
    items, cursor = [], None
    for _ in range(pages):
        page = await _get_page(client, url, cursor)
        items.extend(page["items"])
        cursor = page["cursor"]
        if not cursor:
            break
        await asyncio.sleep(0.3)
    return items


async def markets():
    async with httpx.AsyncClient(timeout=10) as client:
        a, b = await asyncio.gather(  # expect
            fetch_all(client, "https://a.example.invalid/markets", 3),
            fetch_all(client, "https://b.example.invalid/markets", 3),
        )
    return a + b
"#,
        r#"
import asyncio


async def probe_batch(sock, ports):
    for p in ports:
        sock.send(p)
    await asyncio.sleep(1.0)
    return sock.replies(ports)


async def probe_task(sock, ports):
    return await probe_batch(sock, ports)


async def scan(sock, low, high):
    return await asyncio.gather(probe_task(sock, low), probe_task(sock, high))  # expect
"#,
        r#"
import asyncio
import logging

log = logging.getLogger(__name__)


class Output:
    def __init__(self, room, stream_enabled):
        self.room = room
        self.stream_enabled = stream_enabled

    async def _noop(self):
        return None

    async def _write_stream(self, text):
        await self.room.stream_text(text)

    async def _publish_legacy(self, text):
        try:
            await self.room.publish(text)
        except Exception:
            log.exception("legacy publish failed")

    async def on_text(self, text):
        await asyncio.gather(  # expect
            self._write_stream(text) if self.stream_enabled else self._noop(),
            self._publish_legacy(text),
        )
"#,
        r#"
import asyncio
from typing import Protocol


class Carrier(Protocol):
    async def check_cache(self) -> bool: ...

    async def check_db(self) -> bool: ...


async def _absent() -> bool:
    return False


async def health(carrier: Carrier | None):
    cache = carrier.check_cache() if carrier is not None else _absent()
    db = carrier.check_db() if carrier is not None else _absent()
    return await asyncio.gather(cache, db)  # expect
"#,
        r#"
import asyncio


async def fetch(session, name):
    async with session.get(f"/items/{name}") as r:
        return await r.json()


async def refresh_all(session, index, remote):
    loop = asyncio.get_running_loop()
    jobs = [loop.run_in_executor(None, index.rebuild)]
    if remote:
        jobs.append(fetch(session, remote))
    return await asyncio.gather(*jobs)  # expect
"#,
    ],
    pass: &[
        r#"
import asyncio


def cli(broker, tasks):
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(asyncio.gather(*[broker.find(t) for t in tasks], broker.serve()))
    except KeyboardInterrupt:
        broker.stop()
    finally:
        # Closed with the failure: the others never run again.
        loop.stop()
        loop.close()
"#,
        r#"
import asyncio


class Maintenance:
    async def storage(self, ctx):
        plugin = self._plugin_storage()
        box = self._box_storage(ctx)
        return await asyncio.gather(plugin, box)

    async def _plugin_storage(self):
        if not self.plugins_enabled:
            return {"state": "disabled"}
        try:
            result = await self.plugins.storage_analysis()
        except Exception as exc:
            return {"state": "unavailable", "error": str(exc)}
        return {"state": "ok", "result": result}

    async def _box_storage(self, ctx):
        try:
            result = await self.box.storage_analysis(ctx)
        except Exception as exc:
            return {"state": "unavailable", "error": str(exc)}
        return {"state": "ok", "result": result}
"#,
        r#"
import asyncio


class Relay:
    async def run(self):
        await asyncio.gather(self._poll(), self._process())

    async def _poll(self):
        while self.running:
            try:
                for item in await self.fetch():
                    await self.pending.put(item)
                await asyncio.sleep(0.5)
            except asyncio.CancelledError:
                break
            except Exception:
                await asyncio.sleep(1.0)

    async def _process(self):
        while self.running:
            try:
                try:
                    item = await asyncio.wait_for(self.pending.get(), timeout=1.0)
                except asyncio.TimeoutError:
                    continue
                await self.handle(item)
            except asyncio.CancelledError:
                break
            except Exception:
                pass
"#,
        r#"
import asyncio
import shutil


class Installer:
    async def check(self, name):
        if shutil.which(name) is None:
            return False
        try:
            proc = await asyncio.create_subprocess_exec(name, "--version")
            await proc.wait()
            return True
        except Exception:
            return True

    async def check_all(self, names):
        # Each check catches its own errors: no failure stops the gather.
        tasks = {n: self.check(n) for n in names}
        results = await asyncio.gather(*tasks.values())
        return dict(zip(tasks, results))
"#,
        r#"
import asyncio


class Coherence:
    async def score(self, text):
        # No await: a task of it runs to its end in its first step.
        if not text:
            raise ValueError("empty response")
        return len(set(text.split())) / len(text.split())


class Length:
    async def score(self, text):
        return min(len(text) / 400, 1.0)


class Scorer:
    def __init__(self):
        self._coherence = Coherence()
        self._length = Length()

    async def score(self, text):
        # Both have finished by the time gather hears of a failure.
        return await asyncio.gather(self._coherence.score(text), self._length.score(text))
"#,
        r#"
import asyncio


class Session:
    async def check_tasks(self):
        # Only finished tasks: gather re-raises a stored error, nothing runs on.
        done_tasks = [t for t in self.running_tasks() if t.done()]
        await asyncio.gather(*done_tasks)
"#,
        r#"
import asyncio


async def poll(device):
    while True:
        await device.read()
        await asyncio.sleep(1)


async def main_coro(devices):
    # Its failure ends the loop: asyncio.run cancels the other pollers.
    await asyncio.gather(*[asyncio.create_task(poll(d)) for d in devices[:1]], poll(devices[1]))


def main(devices):
    asyncio.run(main_coro(devices))
"#,
        r#"
import asyncio

class Controller:
    def _on_indicate(self, data):
        if not self._indicate.done():
            self._indicate.set_result(data)

    async def write_control(self, cli, payload):
        # Beside the write is a bare future the notification handler
        # completes: if the write fails, nothing is left running.
        self._indicate = asyncio.Future()
        _, resp = await asyncio.wait_for(
            asyncio.gather(cli.write_gatt_char(payload), self._indicate),
            timeout=2.0,
        )
        return resp
"#,
        r#"
import asyncio

class Worker:
    # Each round takes at least five seconds, however fast the work is.
    async def run(self):
        while True:
            await asyncio.gather(self.work(), asyncio.sleep(5))
"#,
        r#"
import asyncio
import logging

log = logging.getLogger(__name__)

class Runner:
    # Each module catches and logs its own failures: gather never fails early.
    async def _run_module(self, name, coro):
        try:
            return await coro
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("%s crashed", name)
            return []

    async def run(self, session):
        return await asyncio.gather(
            self._run_module("latency", latency(session)),
            self._run_module("schema", schema(session)),
        )

class Client:
    async def process_request(self, request):
        try:
            return await self.http.post("/v1/responses", json=request)
        except Exception as exc:
            return {"error": str(exc)}

    async def process_batch(self, requests):
        tasks = []
        for req in requests:
            task = asyncio.create_task(self.process_request(req))
            tasks.append(task)
        return await asyncio.gather(*tasks)
"#,
        r#"
import asyncio


class Worker:
    def __init__(self):
        self.tasks = {}

    def start_job(self, job_id):
        self.tasks[job_id] = asyncio.create_task(self.run_job(job_id))

    async def drain(self):
        # The siblings stay in self.tasks, and handle_sig cancels them all.
        await asyncio.gather(*self.tasks.values())

    def handle_sig(self):
        for t in self.tasks.values():
            if not t.done():
                t.cancel()
"#,
        r#"
import asyncio


class Launcher:
    def __init__(self):
        self.tasks = []

    async def start_all(self, servers):
        tasks = [asyncio.create_task(s.serve()) for s in servers]
        # The list is the object's: shutdown cancels every task in it.
        self.tasks = tasks
        await asyncio.gather(*tasks)

    async def shutdown(self):
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
"#,
        r#"
import asyncio

def _cancel_all(loop):
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))

def run(loop, serve, watch):
    try:
        loop.run_until_complete(asyncio.gather(serve(), watch()))
    finally:
        _cancel_all(loop)
"#,
        r#"
import asyncio

async def caches(urls):
    results = await asyncio.gather(*(fetch(u) for u in urls), return_exceptions=True)
    return [r for r in results if not isinstance(r, BaseException)]

async def one():
    return await asyncio.gather(fetch("a"))

async def grouped():
    async with asyncio.TaskGroup() as tg:
        await asyncio.gather(a(), b())
"#,
        r#"
import asyncio

async def shutdown(tasks):
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks)

async def bounded(urls):
    sem = asyncio.Semaphore(10)

    async def limited(u):
        async with sem:
            return await fetch(u)

    return await asyncio.gather(*(limited(u) for u in urls))
"#,
        r#"
import asyncio

class Cluster:
    async def _close(self):
        # Every worker should get its close, even when one of them fails.
        await asyncio.gather(self.scheduler.close(), self.nanny.close())
"#,
        r#"
import asyncio

async def run_all(workers):
    futs = [asyncio.ensure_future(w.run()) for w in workers]
    await asyncio.wait(futs)
    # All finished: gather only collects the results and the first error.
    return await asyncio.gather(*futs)
"#,
        r#"
import asyncio

from .utils.aio import cancel_and_wait


async def bridge(ws, pipe):
    tasks = [asyncio.create_task(recv(ws, pipe)), asyncio.create_task(send(ws, pipe))]
    try:
        await asyncio.gather(*tasks)
    finally:
        await cancel_and_wait(*tasks)


async def relay(a, b):
    up = asyncio.create_task(a.pump())
    down = asyncio.create_task(b.pump())
    try:
        await asyncio.gather(up, down)
    finally:
        await utils.gracefully_cancel(up, down)
"#,
        r#"
import asyncio


class Runner:
    async def start(self):
        self._read_task = asyncio.create_task(self._read_audio())
        self._forward_task = asyncio.create_task(self._forward_video())

    async def wait(self):
        await asyncio.gather(self._read_task, self._forward_task)

    async def aclose(self):
        self._read_task.cancel()
        self._forward_task.cancel()
"#,
        r#"
import asyncio


class Pool:
    async def close(self):
        await self._do_close()

    async def _do_close(self):
        for conn in self._conns:
            conn.close()
        await asyncio.gather(*[c.wait_closed() for c in self._conns], self._idle.wait_closed())


if __name__ == "__main__":
    resolver = Resolver()

    async def main():
        print(await asyncio.gather(
            resolver.query("a.example"),
            resolver.query("b.example"),
        ))

    asyncio.run(main())
"#,
        r#"
import asyncio

import httpx


async def _get_page(client, url, cursor):
    try:
        r = await client.get(url, params={"cursor": cursor})
        r.raise_for_status()
        return r.json()
    except Exception:
        return {"items": [], "cursor": None}


async def fetch_all(client, url, pages):
    items, cursor = [], None
    for _ in range(pages):
        page = await _get_page(client, url, cursor)
        items.extend(page["items"])
        cursor = page["cursor"]
        if not cursor:
            break
        await asyncio.sleep(0.3)
    return items


async def markets():
    async with httpx.AsyncClient(timeout=10) as client:
        a, b = await asyncio.gather(
            fetch_all(client, "https://a.example.invalid/markets", 3),
            fetch_all(client, "https://b.example.invalid/markets", 3),
        )
    return a + b
"#,
        r#"
import asyncio


async def _check(coro, key):
    try:
        result = await coro
        return {"ok": True, "count": len(result.get(key) or [])}
    except Exception as e:
        return {"ok": False, "error": str(e)}


async def health(clients):
    names = ["ads", "items"]
    coros = [
        _check(clients.ads.search("bike"), "ads"),
        _check(clients.items.search("bike"), "items"),
    ]
    return dict(zip(names, await asyncio.gather(*coros)))
"#,
        r#"
import asyncio


class EventHandler:
    def __init__(self, plugins):
        self.plugins = plugins

    async def dispatch(self, event):
        tasks = []
        for plugin in self.plugins:
            tasks.append(asyncio.create_task(plugin.handle(event)))
        asyncio.gather(*tasks)
"#,
        r#"
import asyncio


class Server:
    def __init__(self, loop):
        self._loop = loop
        self._connections = []

    async def wait_closed(self):
        tasks = []
        for con in self._connections:
            con.close()
            tasks.append(self._loop.create_task(con.wait_closed()))
        await asyncio.gather(*tasks)
"#,
        r#"
import asyncio
import logging

log = logging.getLogger(__name__)


class Output:
    def __init__(self, room, stream_enabled, legacy_enabled):
        self.room = room
        self.stream_enabled = stream_enabled
        self.legacy_enabled = legacy_enabled

    @staticmethod
    async def _noop() -> None:
        return None

    async def _write_stream(self, text):
        try:
            await self.room.stream_text(text)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("stream write failed")

    async def _publish_legacy(self, text):
        try:
            await self.room.publish(text)
        except Exception:
            log.exception("legacy publish failed")

    async def on_text(self, text):
        await asyncio.gather(
            self._write_stream(text) if self.stream_enabled else self._noop(),
            self._publish_legacy(text) if self.legacy_enabled else self._noop(),
        )
"#,
        r#"
import asyncio

async def group_details(contract, group):
    loop = asyncio.get_running_loop()
    # Both calls run on threads: cancelling their futures would not stop
    # them, so a task group would leave the same work running.
    info, eligible = await asyncio.gather(
        loop.run_in_executor(None, contract.functions.getGroup(group).call),
        loop.run_in_executor(None, contract.functions.getEligible().call),
    )
    return info, eligible
"#,
        r#"
import asyncio
import logging

log = logging.getLogger(__name__)

class Optimizer:
    async def _evaluate(self, candidate):
        try:
            return await candidate.score()
        except Exception:
            log.exception("scoring failed")
            return None

    async def evaluate_all(self, candidates, batch_size=8):
        tasks = []
        for c in candidates:
            tasks.append(self._evaluate(c))
        results = []
        for i in range(0, len(tasks), batch_size):
            # Each coroutine catches its own errors.
            batch = tasks[i:i + batch_size]
            results.extend(await asyncio.gather(*batch))
        return results
"#,
        r#"
import asyncio
import logging

log = logging.getLogger(__name__)

class Readiness:
    async def _config_ok(self):
        return self.config is not None

    async def _upstream_ok(self, client):
        try:
            await client.ping()
            return True
        except Exception:
            log.warning("upstream not ready")
            return False

    async def check(self, client):
        # One never suspends, the other catches everything.
        return await asyncio.gather(self._config_ok(), self._upstream_ok(client))
"#,
        r#"
import asyncio


async def capture(page, url):
    tasks = []
    seen = []

    async def read(resp):
        try:
            seen.append(await resp.text())
        except Exception:
            pass

    def on_response(resp):
        tasks.append(asyncio.ensure_future(read(resp)))

    page.on("response", on_response)
    await page.goto(url)
    await asyncio.gather(*tasks)
    return seen
"#,
        r#"
import asyncio


async def validate(guard, run_with_timeout, name, desc):
    async def check_dynamic():
        try:
            return await guard.validate(name)
        except Exception as e:
            return {"status": "error", "error": e}

    async def check_static():
        try:
            return await guard.validate(desc)
        except Exception as e:
            return {"status": "error", "error": e}

    dyn_task = check_dynamic()
    stat_task = check_static()

    async def both():
        return await asyncio.gather(dyn_task, stat_task)

    return await run_with_timeout(both)
"#,
        r#"
import asyncio
import sys

from .servers import http_server, mcp_server


def serve():
    async def run_hybrid():
        try:
            tasks = [
                asyncio.create_task(http_server.start()),
                asyncio.create_task(mcp_server.run()),
            ]
            await asyncio.gather(*tasks)
        except KeyboardInterrupt:
            print("interrupted")
        except Exception as e:
            print(f"server error: {e}")
            sys.exit(1)

    asyncio.run(run_hybrid())
"#,
        r#"
import asyncio
import logging

log = logging.getLogger(__name__)


class Discovery:
    async def fetch_all(self, names):
        limit = asyncio.Semaphore(10)

        async def fetch_one(name):
            async with limit:
                try:
                    return name, await self.client.fetch_user(name)
                except Exception as e:
                    log.debug("fetch failed for %s: %s", name, e)
                    return name, None

        tasks = [asyncio.create_task(fetch_one(n)) for n in names]
        return await asyncio.gather(*tasks)
"#,
        r#"
import asyncio


class Economy:
    async def remove_agents(self, agent_ids):
        tasks = [self._stub.RemoveAgent(agent_ids)]
        await asyncio.gather(*tasks)
"#,
        r#"
import asyncio


class Runtime:
    def __init__(self):
        self._server_tasks = set()

    async def run(self, servers):
        for s in servers:
            self._server_tasks.add(asyncio.create_task(s.serve()))
        if self._server_tasks:
            await asyncio.gather(*list(self._server_tasks))

    async def shutdown(self):
        for t in self._server_tasks:
            t.cancel()
        await asyncio.gather(*self._server_tasks, return_exceptions=True)
"#,
        r#"
import asyncio


async def fetch(n):
    await asyncio.sleep(n)
    return n


loop = asyncio.new_event_loop()
results = loop.run_until_complete(asyncio.gather(fetch(1), fetch(2)))
print(results)
"#,
        r#"
import asyncio


async def security_scan(code, filename, include_secrets, guardian, detector):
    loop = asyncio.get_event_loop()
    sast_task = loop.run_in_executor(None, guardian.audit, code, filename)
    scans = [sast_task]
    if include_secrets:
        secrets_task = loop.run_in_executor(None, detector.scan, code, filename)
        scans.append(secrets_task)
    completed = await asyncio.gather(*scans)
    return completed[0], completed[1:] if include_secrets else []
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(GatherOrphans);
}
