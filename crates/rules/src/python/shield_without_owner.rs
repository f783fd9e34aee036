//! PY010: `asyncio.shield` of work nobody else keeps.

use crate::context::FileCx;
use crate::index::Awaitable;
use crate::python::common::{func_and_nested, is_store, name_refs};
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct ShieldWithoutOwner;

pub static META: RuleMeta = RuleMeta {
    id: "PY010",
    name: "shield-without-owner",
    category: Category::ShieldWithoutOwner,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "`asyncio.shield` of a coroutine or of a task that nothing outside the caller keeps.",
    docs: r#"
`asyncio.shield(coro())`, `asyncio.shield(asyncio.create_task(...))`, or a
shield of a task held only in a local variable of the function. A plain
function of the project that hands back a future rather than a coroutine
(`return self._waiter`; one of another module counts when it calls no
coroutine function) is not reported: `shield` makes no task for a
future, and whoever made it owns it; nor an `async def` of the file that
only catches every ordinary error itself and returns nothing (a
cleanup shielded in a `finally`, its save inside `try: .. except
Exception: log.error(..)`), or whose only await is entering `async with`
on a lock around changes of its object's state (also made a task first,
`shield(ensure_future(self._cleanup()))`), nor one that
only waits for futures its object keeps and returns nothing, or their
result (`await self._pid_waiter`, `await self._started; return await
self._task`). Neither is a fresh bare future
(`loop.create_future()`, `asyncio.Future()`, also one put in a table with
`setdefault(key, loop.create_future())`): it runs no work at all;
nor a future over work that already runs (`asyncio.wrap_future(cf)`,
`loop.run_in_executor(pool, fn)`, `asyncio.to_thread(fn)` (also made a
task first, `ensure_future(asyncio.to_thread(fn))`), a child process's `process.wait()`,
`asyncio.gather(*tasks, return_exceptions=True)` or `asyncio.wait` of
tasks held in names or fields, also through a local): `shield` starts no
task for it, and whoever started that work owns it. Nor a wait for an
event or a sleep (`await asyncio.wait_for(asyncio.shield(closed.wait()),
t)`, `asyncio.shield(asyncio.sleep(d))`): it does no work, so the wait
left behind loses no result and no error.
Nor is a shield the caller repeats, in a loop, after catching or
suppressing its own cancellation (`while not task.done(): with
contextlib.suppress(asyncio.CancelledError): await asyncio.shield(task)`):
it does not leave before the work is done, so it stays the owner; nor one
whose handler of the caller's cancellation awaits the task before going on
(`except asyncio.CancelledError: await task`, also `except
BaseException:` or a bare `except:`; also from a coroutine the handler
defines, `async def rollback(): await task`), or whose `finally` awaits it
(`finally: task.cancel(); with suppress(CancelledError): await task`),
or only cancels it (`finally: nxt.cancel()`: the work stops with the
caller). Nor is a task the function shields only from a timeout
(`await asyncio.wait_for(asyncio.shield(task), 5)`) and awaits itself
later (`await task`), unless it catches its own cancellation there and
lets the task go, nor a coroutine of the file that never suspends
(no `await` of its own): it runs to its end in the first step. A `typing.cast(T, x)`
around the shielded value is `x` itself: it changes none of this.

## Why

`shield` does not protect the caller: when the caller is cancelled it gets
its `CancelledError` right away, and the shielded work runs on alone. If
nothing else holds that work, it has become an orphan by design: its
result and exception are never observed, shutdown cannot wait for it, and
the loop keeps only a weak reference to it. Shielding is right for work
that must finish (a commit, a lease release), and exactly that work needs
an owner that outlives the caller.

## Example

```python
import asyncio

async def commit_and_reply(txn):
    await asyncio.shield(txn.commit())
    return "ok"
```

## Fix

Start the work as a task, register it with something that outlives the
caller (a module-level set drained at shutdown), then shield it.

```python
import asyncio

_critical = set()

async def commit_and_reply(txn):
    task = asyncio.create_task(txn.commit())
    _critical.add(task)
    task.add_done_callback(_critical.discard)
    await asyncio.shield(task)
    return "ok"
```
"#,
    examples: &EXAMPLES,
};

impl Rule for ShieldWithoutOwner {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for (id, c) in cx.calls_to(&["asyncio.shield", "asyncio.tasks.shield"]) {
            let e = cx.expr(id);
            let Some(arg) = c.positional(0) else { continue };
            if cx.func(cx.func_of(id)).is_test {
                continue;
            }
            let what = match unowned(cx, id, arg) {
                Some(w) => w,
                None => continue,
            };
            out.push(cx.finding(
                &META,
                e.span,
                format!(
                    "{what}: when this caller is cancelled, the shielded work runs on with no owner, so its result and exception are lost and shutdown cannot drain it"
                ),
                "create the work as a task, keep it in a collection that outlives the caller (e.g. a module-level set with `add_done_callback(set.discard)`, drained at shutdown), then shield that task",
            ));
        }
    }
}

/// The call is a plain `def` of this file that returns no coroutine
/// (`return self._waiter`, a completed future): `shield` makes no task for
/// a future, it only keeps this caller's cancellation from cancelling it,
/// and whoever made the future owns it.
fn hands_back_a_future(cx: &FileCx, c: &Call) -> bool {
    let Some(g) = cx.callee_in_file(c) else {
        return plain_elsewhere(cx, c);
    };
    let func = cx.func(g);
    if func.is_async || func.is_generator {
        return false;
    }
    let coroutine = |v: ExprId| {
        cx.call(cx.model.strip(v))
            .is_some_and(|r| match cx.callee_in_file(r) {
                Some(h) => cx.func(h).is_async,
                None => r.target.as_deref().is_some_and(|t| {
                    cx.index.awaitable(cx.lang, t, cx.file) == Some(Awaitable::Async)
                }),
            })
    };
    let returns: Vec<ExprId> = crate::python::common::returned_values(cx, g)
        .flatten()
        .collect();
    !returns.is_empty() && !returns.into_iter().any(coroutine)
}

/// The call is a plain `def` of another module of the project that calls
/// no coroutine function (`def wait_for_end(self): return self._waiter`):
/// what it hands back is no coroutine, so `shield` makes no task of it.
fn plain_elsewhere(cx: &FileCx, c: &Call) -> bool {
    let Some(t) = c.target.as_deref() else {
        return false;
    };
    let Some(i) = cx.index.resolve(cx.lang, t, cx.file) else {
        return false;
    };
    let s = cx.index.summary(i);
    s.lang == cx.lang
        && !s.is_async
        && !s.is_generator
        && s.calls.iter().all(|site| {
            let t: &str = &site.target;
            let name = t.rsplit('.').next().unwrap_or(t);
            cx.index.awaitable(cx.lang, t, cx.file).is_none()
                && cx.kb.find(Effect::AsyncApi, Some(t), name).is_none()
        })
}

/// The call is an `async def` of this file that only waits for a future
/// its object keeps (`if self.has_pid(): return; await self._pid_waiter`)
/// and returns nothing, or what that future gives (`await self._started;
/// return await self._task`): the future's owner settles it, and a
/// shielded run left behind by a cancelled caller loses no result and no
/// error of its own.
fn only_awaits_a_stored_future(cx: &FileCx, c: &Call) -> bool {
    let Some(g) = cx.callee_in_file(c) else {
        return false;
    };
    let func = cx.func(g);
    if !func.is_async || func.is_generator {
        return false;
    }
    let awaited: Vec<ExprId> = cx
        .body_exprs(g)
        .iter()
        .filter_map(|&e| match cx.expr(e).kind {
            ExprKind::Await(inner) => Some(inner),
            _ => None,
        })
        .collect();
    let stored = |v: ExprId| {
        let v = cx.model.strip(v);
        matches!(cx.expr(v).kind, ExprKind::Attr { .. })
            && cx.model.dotted(v).is_some_and(|d| d.starts_with("self."))
    };
    !awaited.is_empty()
        && awaited.len() + deadline_scopes(cx, g)
            == crate::util::awaits_in_block(cx.model, &func.body).len()
        && awaited.into_iter().all(stored)
        && cx.body_stmts(g).iter().all(|&s| match cx.stmt(s).kind {
            // `return await self._task`: the task's own result, which its
            // owner keeps too.
            StmtKind::Return(Some(v)) => matches!(
                cx.expr(cx.model.strip(v)).kind,
                ExprKind::Await(x) if stored(x)
            ),
            _ => true,
        })
}

/// The `async with` statements of `g` that only set a deadline (`async
/// with asyncio.timeout(t):`): they wait for nothing themselves.
fn deadline_scopes(cx: &FileCx, g: FuncId) -> usize {
    cx.body_stmts(g)
        .iter()
        .filter(|&&s| {
            matches!(&cx.stmt(s).kind, StmtKind::With { items, is_async: true, .. }
            if items.iter().all(|it| cx.call(cx.model.strip(it.ctx)).is_some_and(|c| {
                cx.effect(c, unsnarl_model::knowledge::Effect::Deadline).is_some()
            })))
        })
        .count()
}

/// `self._published.setdefault(key, loop.create_future())`: a bare future
/// kept in a table of the object (or the one it already held there).
fn kept_bare_future(cx: &FileCx, c: &Call) -> bool {
    c.name == "setdefault"
        && c.positional(1)
            .and_then(|v| cx.call(cx.model.strip(v)))
            .is_some_and(|k| crate::python::common::makes_asyncio_future(cx, k))
}

/// Describes the shielded value when nothing else owns it.
/// A coroutine of the file that catches every ordinary error itself (its
/// awaits inside `try: .. except Exception: log(..)`) and returns nothing
/// (`async def _cleanup(): ...` shielded in a `finally`): left to run on
/// alone, it has no result and no error for an owner to see.
fn settles_alone(cx: &FileCx, c: &Call) -> bool {
    // `shield(ensure_future(self._cleanup()))`: the task over it.
    if crate::python::common::is_task_spawn(cx, c)
        && let Some(inner) = c.positional(0).and_then(|a| cx.call(cx.model.strip(a)))
    {
        return settles_alone(cx, inner);
    }
    cx.callee_in_file(c).is_some_and(|g| {
        (crate::python::gather_orphans::catches_everything(cx, g) || only_takes_locks(cx, g))
            && crate::python::common::returned_values(cx, g).all(|v| v.is_none())
    })
}

/// An `async def` whose only suspension is entering `async with` on a lock
/// (`async with self._lock: self._count -= 1; self._idle.set()`): it does
/// no I/O and waits for nothing but its turn, so it has no failure of its
/// own to report.
fn only_takes_locks(cx: &FileCx, g: FuncId) -> bool {
    let body = &cx.func(g).body;
    let awaits = crate::util::awaits_in_block(cx.model, body);
    let lock_entries = crate::python::common::lock_entries(cx, body);
    cx.func(g).is_async
        && !lock_entries.is_empty()
        && awaits.iter().all(|a| lock_entries.contains(a))
}

fn unowned(cx: &FileCx, shield: ExprId, arg: ExprId) -> Option<String> {
    let arg = cx.model.strip(arg);
    if let Some(c) = cx.call(arg) {
        // `loop.create_future()`, `asyncio.Future()`: a bare future runs no
        // work, so there is no task to lose.
        if hands_back_a_future(cx, c)
            || only_awaits_a_stored_future(cx, c)
            || over_existing_work(cx, c)
            || crate::python::common::makes_asyncio_future(cx, c)
            || settles_alone(cx, c)
            || crate::python::common::runs_in_one_step(cx, arg)
        {
            return None;
        }
        // As written (`work(job)`): the resolved name of a project function
        // is its whole module path.
        return Some(format!(
            "`{}` is shielded directly, so the task `shield` wraps it in is referenced by nobody else",
            cx.snippet(cx.expr(arg).span)
        ));
    }
    let name = cx.model.name_of(arg)?;
    if cx.model.resolved(arg).is_some() {
        return None;
    }
    let f = cx.func_of(shield);
    // Where does the local come from? Only judge locals made from a call
    // in this function.
    let funcs = func_and_nested(cx, f);
    let refs = name_refs(cx, &funcs, name);
    let assigned_call = |r: ExprId| match cx.tree.expr_parent(r) {
        Parent::Stmt(s) => match &cx.stmt(s).kind {
            StmtKind::Assign { value: Some(v), .. } => cx.call(cx.model.strip(*v)),
            _ => None,
        },
        _ => None,
    };
    let stored: Vec<&Call> = refs
        .iter()
        .filter(|&&r| is_store(cx, r))
        .filter_map(|&r| assigned_call(r))
        .collect();
    // `drain = asyncio.gather(*pending, return_exceptions=True)`: a future
    // over tasks that already exist; `fut = self._waiters.setdefault(key,
    // loop.create_future())`: a bare future, or the one already kept.
    // `asyncio.ensure_future(asyncio.to_thread(fn))` (also of a local
    // bound to it): a task over work a thread already runs.
    let wraps_running_work = |c: &Call| {
        crate::python::common::is_task_spawn(cx, c)
            && c.positional(0).is_some_and(|a| {
                let a = cx.model.strip(a);
                let inner = cx
                    .model
                    .name_of(a)
                    .and_then(|n| crate::python::common::value_bound_once(cx, f, n))
                    .map_or(a, |v| cx.model.strip(v));
                cx.call(inner).is_some_and(|k| over_existing_work(cx, k))
            })
    };
    if stored.is_empty()
        || stored
            .iter()
            .any(|c| over_existing_work(cx, c) || kept_bare_future(cx, c) || wraps_running_work(c))
    {
        return None;
    }
    // Owned when handed to anything else: stored in an attribute or a
    // collection, passed to a call other than the shield, returned.
    let owned = refs.iter().any(|&r| {
        if is_store(cx, r) || cx.contains(shield, r) {
            return false;
        }
        match cx.tree.expr_parent(r) {
            Parent::Expr(p) => match &cx.expr(p).kind {
                ExprKind::Call(_) => true,
                ExprKind::Attr { name: m, .. } => !matches!(
                    m.as_str(),
                    "done"
                        | "cancelled"
                        | "result"
                        | "exception"
                        | "cancel"
                        | "set_name"
                        | "get_name"
                ),
                ExprKind::Await(_) => false,
                _ => true,
            },
            Parent::Stmt(s) => !matches!(cx.stmt(s).kind, StmtKind::Expr(_)),
            _ => false,
        }
    });
    (!owned
        && !waits_until_done(cx, shield)
        && !reaps_on_cancel(cx, shield, name)
        && !bounded_look_then_awaited(cx, shield, name))
    .then(|| format!("`{name}` is only held by this function"))
}

/// `await asyncio.wait_for(asyncio.shield(task), timeout=5)`, and later in
/// the function `await task`: the shield keeps the timeout from cancelling
/// the task, which the function goes on to await itself. It stays the
/// owner, and the task's result and error reach it.
fn bounded_look_then_awaited(cx: &FileCx, shield: ExprId, name: &str) -> bool {
    let Parent::Expr(w) = cx.tree.expr_parent(shield) else {
        return false;
    };
    let in_wait_for = cx.call(w).is_some_and(|k| {
        matches!(
            k.target.as_deref(),
            Some("asyncio.wait_for" | "asyncio.tasks.wait_for")
        ) && k.positional(0).map(|a| cx.model.strip(a)) == Some(shield)
    });
    // A handler of the caller's own cancellation around it that lets the
    // task go (`except asyncio.CancelledError: raise Interrupted()`) is
    // the case the rule is for: the author handled the cancellation and
    // left the task running.
    let path = cx.enclosing_stmts(shield);
    let handles_own_cancel = path.windows(2).any(|w| {
        matches!(&cx.stmt(w[1]).kind, StmtKind::Try { body, handlers, .. }
        if body.contains(&w[0])
            && handlers.iter().any(catches_cancellation))
    });
    let f = cx.func_of(shield);
    let at = cx.expr(shield).span.end;
    in_wait_for
        && !handles_own_cancel
        && cx.body_exprs(f).iter().any(|&e| {
            cx.expr(e).span.start > at
                && matches!(cx.expr(e).kind, ExprKind::Await(x)
                    if cx.model.name_of(cx.model.strip(x)) == Some(name))
        })
}

/// The `try` around the shield catches the caller's cancellation and, in
/// that handler, awaits the task itself (`except CancelledError: await
/// task`), also from a coroutine the handler defines and runs (`async def
/// rollback(): await task` wrapped in a task it waits for), or its
/// `finally` awaits it (`finally: task.cancel(); with
/// suppress(CancelledError): await task`): the caller gives up only once
/// the work is done, so its result and error still reach someone.
fn reaps_on_cancel(cx: &FileCx, shield: ExprId, name: &str) -> bool {
    let awaits_it = |block: &Block| {
        let is_await_of_it = |e: ExprId| match &cx.expr(e).kind {
            ExprKind::Await(x) => cx.model.name_of(*x) == Some(name),
            _ => false,
        };
        unsnarl_model::walk::exprs_in_block(cx.model, block)
            .into_iter()
            .any(is_await_of_it)
            || cx.model.functions.iter().enumerate().any(|(i, g)| {
                g.is_async
                    && crate::util::block_span_contains(cx.model, block, g.span)
                    && cx
                        .body_exprs(FuncId(i as u32))
                        .iter()
                        .any(|&e| is_await_of_it(e))
            })
    };
    // `finally: nxt.cancel()`: the work stops when the caller leaves, so
    // none is left running on its own.
    let cancels_it = |block: &Block| {
        unsnarl_model::walk::calls_in_block(cx.model, block)
            .into_iter()
            .any(|e| {
                cx.call(e).is_some_and(|c| {
                    c.name == "cancel" && c.receiver.and_then(|r| cx.model.name_of(r)) == Some(name)
                })
            })
    };
    let path = cx.enclosing_stmts(shield);
    path.windows(2).any(|w| {
        let StmtKind::Try {
            body,
            handlers,
            finally,
            ..
        } = &cx.stmt(w[1]).kind
        else {
            return false;
        };
        body.contains(&w[0])
            && (finally
                .as_ref()
                .is_some_and(|f| awaits_it(f) || cancels_it(f))
                || handlers.iter().any(|h| {
                    // Also `except BaseException:` or a bare `except:`,
                    // which catch the cancellation too.
                    catches_cancellation(h) && awaits_it(&h.body)
                }))
    })
}

/// The handler catches the caller's cancellation: `except
/// CancelledError:`, `except BaseException:` or a bare `except:`.
fn catches_cancellation(h: &Handler) -> bool {
    h.types.is_empty()
        || h.types
            .iter()
            .any(|t| t.ends_with("CancelledError") || t == "BaseException")
}

/// A future over work that already runs, which `shield` wraps in no new
/// task: `asyncio.wrap_future(cf)` of a thread's future,
/// `loop.run_in_executor(...)`, a child process's `wait()` (the knowledge
/// table's `running-work` completions), or
/// `asyncio.gather(*tasks)` / `asyncio.wait((self.task,))` of tasks or
/// futures held in names and fields (not of coroutines, which `gather`
/// would turn into tasks of its own). Whoever made those owns them.
fn over_existing_work(cx: &FileCx, c: &Call) -> bool {
    // A name the function fills with coroutines (`coros = [a(), b()]`)
    // holds no running work yet.
    let coroutine = |x: ExprId| {
        cx.call(cx.model.strip(x))
            .is_some_and(|k| !matches!(k.name.as_str(), "create_task" | "ensure_future"))
    };
    let makes_coroutines = |v: ExprId| match &cx.expr(cx.model.strip(v)).kind {
        ExprKind::Comprehension { elt, .. } => coroutine(*elt),
        ExprKind::Collection { elems, .. } => elems.iter().any(|&x| coroutine(x)),
        _ => false,
    };
    let held = |e: ExprId| match &cx.expr(cx.model.strip(e)).kind {
        ExprKind::Attr { .. } => true,
        ExprKind::Name { id, .. } => {
            let f = cx.func_of(e);
            !crate::python::common::values_bound_to(cx, f, id)
                .any(|v| v.is_some_and(&makes_coroutines))
        }
        _ => false,
    };
    // `event.wait()` runs no work: a wait left behind loses nothing.
    if matches!(
        crate::python::common::completion_kind(cx, c),
        Some("running-work" | "signal-wait")
    ) {
        return true;
    }
    match c.target.as_deref() {
        Some("asyncio.gather" | "asyncio.tasks.gather" | "asyncio.wait" | "asyncio.tasks.wait") => {
            let mut awaitables = c.args.iter().filter(|a| a.name.is_none()).peekable();
            awaitables.peek().is_some()
                && awaitables.all(|a| match &cx.expr(cx.model.strip(a.value)).kind {
                    ExprKind::Collection { elems, .. } => {
                        !elems.is_empty() && elems.iter().all(|&x| held(x))
                    }
                    _ => held(a.value),
                })
        }
        _ => false,
    }
}

/// The shield sits, inside a loop, in a `try` whose handler of the
/// caller's cancellation does not always raise, or in a `with
/// contextlib.suppress(CancelledError):`: the caller waits again (until
/// the task is done), so the shielded work always has its owner.
fn waits_until_done(cx: &FileCx, shield: ExprId) -> bool {
    let path = cx.enclosing_stmts(shield);
    let suppresses_cancellation = |items: &[WithItem]| {
        items.iter().any(|it| {
            cx.call(cx.model.strip(it.ctx)).is_some_and(|c| {
                c.target.as_deref() == Some("contextlib.suppress")
                    && c.args.iter().any(|a| {
                        cx.model
                            .dotted(a.value)
                            .is_some_and(|t| t.ends_with("CancelledError") || t == "BaseException")
                    })
            })
        })
    };
    path.windows(2).any(|w| {
        let catches = match &cx.stmt(w[1]).kind {
            StmtKind::Try { body, handlers, .. } => {
                body.contains(&w[0])
                    && handlers.iter().any(|h| {
                        h.types.iter().any(|t| t.ends_with("CancelledError"))
                            && !crate::util::always_raises(cx.model, &h.body)
                    })
            }
            StmtKind::With { items, body, .. } => {
                body.contains(&w[0]) && suppresses_cancellation(items)
            }
            _ => false,
        };
        catches && crate::python::common::enclosing_loop(cx, w[1]).is_some()
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import asyncio

async def release(lease):
    await asyncio.shield(lease.release())  # expect

async def commit(txn):
    task = asyncio.create_task(txn.commit())
    try:
        return await asyncio.shield(task)  # expect
    except asyncio.CancelledError:
        raise
"#,
        r#"
from asyncio import shield, ensure_future

async def flush(buf):
    await shield(ensure_future(buf.flush()))  # expect
"#,
        r#"
import asyncio

class Pool:
    async def _drain(self):
        await self._conn.flush()

    def drain(self):
        return self._drain()

    async def stop(self):
        await asyncio.shield(self.drain())  # expect
"#,
        r#"
import asyncio

async def commit_in_loop(txns):
    for txn in txns:
        task = asyncio.create_task(txn.commit())
        try:
            await asyncio.shield(task)  # expect
        except asyncio.CancelledError:
            raise
"#,
        r#"
import asyncio


class TxnManager:
    def __init__(self):
        self._pid = None
        self._pid_waiter = asyncio.get_event_loop().create_future()

    def has_pid(self):
        return self._pid is not None

    async def wait_for_pid(self):
        if self.has_pid():
            return
        await self._pid_waiter
        self._pid = await self._fetch_pid()


class Producer:
    def __init__(self):
        self._txn = TxnManager()

    async def begin_transaction(self):
        await asyncio.shield(self._txn.wait_for_pid())  # expect
        self._txn.begin()
"#,
        r#"
import asyncio
import contextlib

async def poster(scheduler):
    try:
        await scheduler.run()
    finally:
        closing = asyncio.create_task(scheduler.close())
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(closing)  # expect
"#,
        r#"
import asyncio


class Result:
    async def finish(self, items):
        coros = [self.speak(i) for i in items]
        await asyncio.shield(asyncio.gather(*coros, return_exceptions=True))  # expect

    async def flush(self):
        await asyncio.shield(asyncio.gather(self.commit(), self.notify()))  # expect
"#,
        r#"
import asyncio
from typing import Awaitable, cast


class Cache:
    async def _refresh(self):
        await asyncio.sleep(1)

    async def get(self):
        await asyncio.shield(cast(Awaitable[None], self._refresh()))  # expect
"#,
        r#"
import asyncio


class Interrupted(Exception):
    pass


async def run_interruptible(operation, interrupted, interval=0.5):
    task = asyncio.create_task(operation())
    try:
        while not task.done():
            if interrupted():
                task.cancel()
                raise Interrupted()
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout=interval)  # expect
            except asyncio.TimeoutError:
                continue
        return await task
    except asyncio.CancelledError:
        # The caller's cancellation is turned into an error, and the task
        # is left running.
        raise Interrupted()
"#,
    ],
    pass: &[
        r#"
import asyncio

# Cancelled while cleaning up: wait for the cleanup, then let the cancel go on.
async def stop(client):
    task = asyncio.create_task(client.abort())
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        await task
        raise
"#,
        r#"
import asyncio
import contextlib

async def poster(scheduler):
    try:
        await scheduler.run()
    finally:
        closing = asyncio.create_task(scheduler.close())
        while not closing.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(closing)
"#,
        r#"
import asyncio


class TxnManager:
    def __init__(self):
        self._pid = None
        self._pid_waiter = asyncio.get_event_loop().create_future()

    def has_pid(self):
        return self._pid is not None

    async def wait_for_pid(self):
        # Only waits for the manager's own future: nothing of its own to lose.
        if self.has_pid():
            return
        await self._pid_waiter


class Producer:
    def __init__(self):
        self._txn = TxnManager()

    async def begin_transaction(self):
        await asyncio.shield(self._txn.wait_for_pid())
        self._txn.begin()
"#,
        r#"
import asyncio

class Stream:
    async def attach(self, loop):
        self.finished = asyncio.shield(loop.create_future())
        self.closed = asyncio.shield(asyncio.Future())
"#,
        r#"
import asyncio

class Transactions:
    def __init__(self, loop):
        # Resolved by the sender task, which owns it.
        self._ended = loop.create_future()

    def wait_for_end(self):
        return self._ended

    def close(self):
        self._release()
        return done_future()

    async def commit(self):
        await asyncio.shield(self.wait_for_end())
        await asyncio.shield(self.close())
"#,
        r#"
import asyncio

_critical = set()

async def commit_and_reply(txn):
    t = asyncio.create_task(txn.commit())
    _critical.add(t)
    t.add_done_callback(_critical.discard)
    try:
        return await asyncio.shield(t)
    except asyncio.CancelledError:
        raise
"#,
        r#"
import asyncio

class Uploader:
    async def upload(self, data):
        self._task = asyncio.create_task(self._send(data))
        return await asyncio.shield(self._task)

async def wait_for_it(task):
    return await asyncio.shield(task)

async def registered(registry, coro):
    t = asyncio.ensure_future(coro)
    registry.track(t)
    return await asyncio.shield(t)
"#,
        r#"
import asyncio

async def run_to_completion(coro):
    task = asyncio.ensure_future(coro)
    cancelled = None
    while True:
        try:
            value = await asyncio.shield(task)
        except asyncio.CancelledError as err:
            if task.done():
                raise
            cancelled = err
        else:
            break
    if cancelled is not None:
        raise cancelled
    return value
"#,
        r#"
import asyncio


async def drain_cancelled(pending_tasks, timeout):
    for task in pending_tasks:
        task.cancel()
    drain = asyncio.gather(*pending_tasks, return_exceptions=True)
    try:
        await asyncio.wait_for(asyncio.shield(drain), timeout=timeout)
    except asyncio.TimeoutError:
        pass


async def setup(loop, executor, client):
    setup_future = executor.submit(client.connect)
    await asyncio.shield(asyncio.wrap_future(setup_future))


async def flush_barrier(executor, deadline):
    # Queued behind the writes already on the executor; the thread runs it.
    loop = asyncio.get_running_loop()
    barrier = loop.run_in_executor(executor, lambda: None)
    await asyncio.wait_for(asyncio.shield(barrier), timeout=deadline)


async def stop(process: asyncio.subprocess.Process, grace):
    # Waiting for a child's exit: the status stays on `process.returncode`.
    process.terminate()
    try:
        await asyncio.wait_for(asyncio.shield(process.wait()), grace)
    except asyncio.TimeoutError:
        process.kill()


async def run(cmd):
    process = await asyncio.create_subprocess_shell(cmd)
    try:
        return await asyncio.wait_for(process.communicate(), 30)
    except asyncio.TimeoutError:
        process.kill()
        await asyncio.shield(process.wait())


class Result:
    async def wait_text(self):
        await asyncio.shield(asyncio.wait((self.text_task,)))

    async def finish(self, items):
        tasks = [asyncio.create_task(self.speak(i)) for i in items]
        await asyncio.shield(asyncio.gather(*tasks, return_exceptions=True))
"#,
        r#"
import asyncio
from typing import Awaitable, cast


class Dispatcher:
    def __init__(self):
        self._worker_task = None

    def start(self):
        self._worker_task = asyncio.create_task(self._run())

    async def _run(self):
        await asyncio.sleep(1)

    async def stop(self):
        worker_task = self._worker_task
        if worker_task is None:
            return
        await asyncio.shield(cast(Awaitable[object], worker_task))
"#,
        r#"
# A wait for an event runs no work: left behind, it loses nothing.
import asyncio
from dataclasses import dataclass, field


@dataclass
class Instance:
    owner: asyncio.Task | None = None
    closed: asyncio.Event = field(default_factory=asyncio.Event)


async def stop(instance: Instance, timeout: float):
    try:
        await asyncio.wait_for(asyncio.shield(instance.closed.wait()), timeout)
    except TimeoutError:
        if instance.owner:
            instance.owner.cancel()
"#,
        r#"
# The shielded coroutine only waits for the job's own task and returns
# its result: the task's owner keeps it.
import asyncio


class Job:
    async def _do_wait(self, timeout):
        async with asyncio.timeout(timeout):
            await self._started
            return await self._task

    async def wait(self, *, timeout=None):
        return await asyncio.shield(self._do_wait(timeout))
"#,
        r#"
# A shielded sleep runs no work: left behind, it loses nothing.
import asyncio


async def flush_loop(stop, interval, flush):
    while not stop.is_set():
        try:
            await asyncio.wait_for(asyncio.shield(asyncio.sleep(interval)), interval + 1)
        except asyncio.TimeoutError:
            break
        await flush()
"#,
        r#"
# The handler of everything, cancellation included, waits for the task.
import asyncio


async def offload(lock, write):
    task = asyncio.create_task(write())
    try:
        return await asyncio.shield(task)
    except BaseException:
        await task
        lock.release()
        raise
"#,
        r#"
import asyncio

class Approvals:
    def __init__(self, timeout):
        self.timeout = timeout
        self._published = {}

    async def wait_for_decision(self, tool_use):
        future = self._published.setdefault(tool_use, asyncio.get_running_loop().create_future())
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.timeout)
        finally:
            self._published.pop(tool_use, None)
"#,
        r#"
import asyncio

class Store:
    async def save(self, record):
        # The write runs on a worker thread, which a cancelled caller
        # could not stop anyway.
        await asyncio.shield(asyncio.to_thread(self._write, record))

    def _write(self, record):
        with open(self.path, "a") as f:
            f.write(record)
"#,
        r#"
import asyncio
from contextlib import suppress


async def database_ready(connect):
    connection = await connect()
    query = asyncio.create_task(connection.execute("SELECT 1"))
    try:
        cursor = await asyncio.shield(query)
        return await cursor.fetchone() == (1,)
    finally:
        await connection.close()
        query.cancel()
        with suppress(asyncio.CancelledError):
            await query
"#,
        r#"
import asyncio


async def finish_cleanup(task):
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            continue


async def start_bridge(client):
    start_task = asyncio.create_task(client.start())
    try:
        await asyncio.shield(start_task)
    except asyncio.CancelledError:

        async def rollback_start():
            try:
                await start_task
            finally:
                await client.stop()

        await finish_cleanup(asyncio.create_task(rollback_start()))
        raise
    return client
"#,
        r#"
import asyncio


async def run_with_progress(ctx, func, *args):
    worker = asyncio.to_thread(func, *args)
    worker_task = asyncio.ensure_future(worker)
    ticks = 0
    try:
        while not worker_task.done():
            try:
                await asyncio.wait_for(asyncio.shield(worker_task), timeout=5.0)
            except asyncio.TimeoutError:
                ticks += 1
                await ctx.report_progress(ticks)
        return await worker_task
    finally:
        if not worker_task.done():
            worker_task.cancel()
"#,
        r#"
import asyncio
import time


async def batches(source, size, window):
    items = []
    started = None
    nxt = asyncio.ensure_future(source.__anext__())
    try:
        while True:
            timeout = None
            if started is not None:
                timeout = window - (time.monotonic() - started)
            try:
                item = await asyncio.wait_for(asyncio.shield(nxt), timeout)
            except asyncio.TimeoutError:
                yield items
                items, started = [], None
                continue
            except StopAsyncIteration:
                break
            started = started or time.monotonic()
            items.append(item)
            if len(items) == size:
                yield items
                items, started = [], None
            nxt = asyncio.ensure_future(source.__anext__())
    finally:
        nxt.cancel()
    if items:
        yield items
"#,
        r#"
import asyncio
import logging

logger = logging.getLogger(__name__)


class Room:
    async def chat(self, chat_id, memory):
        try:
            return await self._run(chat_id)
        finally:
            self.threads.pop(chat_id, None)

            async def cleanup():
                memory.update_metadata({"running": False})
                try:
                    await self.store.save(chat_id)
                except Exception as e:
                    logger.error("could not save %s: %s", chat_id, e)

            await asyncio.shield(cleanup())
"#,
        r#"
import asyncio
from contextlib import asynccontextmanager


class PauseGate:
    def __init__(self):
        self._active = 0
        self._resume = asyncio.Event()
        self._lock = asyncio.Lock()

    @asynccontextmanager
    async def request(self):
        async with self._lock:
            self._active += 1
            self._resume.clear()
        try:
            yield
        finally:
            await asyncio.shield(self._release())

    async def _release(self):
        async with self._lock:
            self._active -= 1
            if self._active == 0:
                self._resume.set()
"#,
        r#"
import asyncio


async def start(bot, fetch_latest):
    version = asyncio.create_task(fetch_latest())
    try:
        # Shielded from the timeout only: the task is awaited below.
        await asyncio.wait_for(asyncio.shield(version), timeout=5)
    except asyncio.TimeoutError:
        bot.log("still fetching the version in the background")
    bot.ready.set()
    try:
        bot.latest = await version
    except OSError:
        bot.latest = None
"#,
        r#"
import asyncio


async def answer(manager, message):
    async def commit():
        # No await: it runs to its end in one step.
        manager.append(message)
        manager.notify(message)

    await asyncio.shield(commit())
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(ShieldWithoutOwner);

    /// The shielded call is quoted as written, not by its resolved name.
    #[test]
    fn message_quotes_the_shielded_call() {
        static RULE: ShieldWithoutOwner = ShieldWithoutOwner;
        let m = crate::testing::messages(&RULE, Language::Python, EXAMPLES.fail[0]);
        assert!(
            m[0].starts_with("`lease.release()` is shielded directly"),
            "{m:?}"
        );
    }
}
