//! PY006: catching cancellation around an await and not re-raising it.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use crate::util::{always_raises, awaits_in_block};
use unsnarl_model::walk::{Parent, Visitor, exprs_in_block, walk_block};
use unsnarl_model::*;

pub struct CancellationSwallowed;

pub static META: RuleMeta = RuleMeta {
    id: "PY006",
    name: "cancellation-swallowed",
    category: Category::CancellationSwallowed,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "`except BaseException`, bare `except:` or `except CancelledError` around an await, with a path that does not re-raise.",
    docs: r#"
A handler that catches cancellation (`asyncio.CancelledError`,
`BaseException`, a bare `except:`, `trio.Cancelled`) around code that
awaits, where some path through the handler neither re-raises nor raises
something else. A handler that keeps the exception to raise it later
(stores it, appends it to a list, sets it on a future, saves or hands on
`sys.exc_info()`, folds it into a local the function raises after the
`try`, `error = merge_errors(error, exc)` then `if error is not None:
raise error`) or gives it to a helper of the file that raises or keeps
it is not reported, nor one that ends with `raise` and leaves otherwise
only under `if isinstance(e, TransportError) and ..:` for a type that is
no cancellation (also in a loop over a list of such types, `for err in
listed: if isinstance(e, err): ... return`), nor one that re-raises
the cancellations it was not meant for and claims the rest with
`uncancel()` (whether it may is PY037's question), nor one that starts by re-raising everything but a list
of ordinary errors (`if not isinstance(err, (BleakError, TimeoutError)):
raise`), nor one that re-raises when the task was really cancelled
(`if task.cancelling(): raise`, also through a helper of the file that
asks, `if self._really_cancelled(): raise`). Nor one around an await of a
shielded task (`await asyncio.shield(task)`) that starts with `if not
task.cancelled(): raise`: a cancelled waiter leaves the shielded task
running and re-raises, and what is kept is the task's own cancellation. Nor is a private helper that the file calls only from
handlers of the caller's own cancellation that re-raise it right after
(`except asyncio.CancelledError: await self._drain(); raise`): what it
swallows are the repeats that arrive while it cleans up. Nor is a `try` whose awaits all run inside a shielded
trio/anyio scope (`with CancelScope(shield=True):`), where no outer
cancellation can arrive; under trio or anyio, a handler that awaits at its
top level outside a shielded scope (`await trio.aclose_forcefully(s)`),
where the level-triggered cancellation is raised again; or a handler (waiting, if at all, only to close
things) that ends a coroutine which only
ever runs as the root of its own task (a CLI command, `asyncio.run(main())`,
a `create_task(conn.serve())`, or `create_task(coro=conn.serve())`, also
kept in a list built by a comprehension or under a key of a mapping
(`self._tasks[path] = create_task(..)`), or made only on one arm of a
conditional (`create_task(..) if enabled else None`), that
is cancelled but never awaited, or
awaited only right after its own `cancel()` by the code that stopped it
(or under a `wait_for` whose timeout handler cancels it);
started directly, through a spawning helper of the file or a
`create_task` of another module of the project, by a task
group's `start_soon`/`start`, an application's `add_task(coro)` or
`start_background_task(fn)`, a portal's `start_task_soon(fn)`, or from another thread with
`run_coroutine_threadsafe`; the connection callback of
`asyncio.start_server` or websockets' `serve`, run as a task per connection; or handed straight to `asyncio.gather`,
which raises its own cancellation whatever its children return): no
frame of that task is left to tell.
Awaiting a task only to reap it is left alone too (also with a deadline:
`await asyncio.wait_for(task, 1.0)`, through a shield,
`wait_for(asyncio.shield(task), t)`, `async with asyncio.timeout(t):
await task`): right after cancelling it (before the `try` or as its
first step, `try: task.cancel(); await task`; also a task kept under a
key, `self._tasks[key].cancel()` then `await self._tasks[key]`), or, when nothing follows the `try`, a task the coroutine started
itself (`self.task = create_task(..)`) that another method of the class
cancels (`stop()`), or one it keeps in a collection of the object
(`self.tasks.add(fut)`) whose every task another method cancels (`for t in
self.tasks: t.cancel()`), or a task of the `done` set that `asyncio.wait`
handed back (`for t in done: try: await t`, or `if t in done:`), which
has finished, so the await does not suspend: that `CancelledError` is the child's result.
So is a teardown coroutine (`close_connection`) awaiting, once, a task of
its object that another method cancels to say "stop now". A handler is
not reported either when it ends in a helper that always raises (`raise_*`,
`reraise*`, `-> NoReturn`, also inside a nested `try` whose handlers
raise), when it runs on into code after its `try` that always raises
(`except BaseException: pass` around a cleanup inside a handler that then
does `raise Stopped() from None`), when its `try` runs only once an earlier error was saved (`if
exc:`) and the function always ends by raising that error (`if exc: raise
exc`), when it only goes round a loop that a bare `raise` follows, or
sets a flag that a following `if cancelled: raise asyncio.CancelledError`
reads (the cancellation put off until a shielded worker is done), when it first
leaves on a stop flag that the file sets before its `cancel()`, right
before or earlier in the same function (`closing = True; task.cancel()`,
or `self._closing = True`, a drain, then `self._task.cancel()`), or
re-raises unless that flag is set
(`if not self._interrupted: raise`: only the cancellation the file asked
for, to interrupt one step, is lived through), when it re-raises whenever its `while`
loop would go round again and swallows only once that loop's own
condition says stop (`while not self.closed: ... except CancelledError:
if not self.closed: raise`, nothing awaited after the `try`), or when
it runs in the `finally` of a body that can only end by raising (`try:
while True: ... finally:`, no `break` or `return`): the exception in
flight goes on after the cleanup, or in a cleanup `try` inside a handler
of the caller's cancellation whose own `finally` raises that cancellation
again (`except CancelledError as err: try: ... finally: raise err`). Nor when, in
`__aexit__`, it raises any
exception but the one the block exited with and returns `False` or
`None`, or falls off its end (so `async with` raises that one itself).

In trio and anyio code the message says what differs there: cancellation
is re-delivered at the next checkpoint, and the cancel scope never sees
the `Cancelled` it raised.

## Why

asyncio delivers a cancellation once, as an exception at the next await. A
handler that catches it and carries on has eaten the only signal: the task
keeps running after `task.cancel()`, `asyncio.timeout` and `TaskGroup` can no
longer stop it, and shutdown hangs waiting for a task that will not end.

## Example

```python
import asyncio

async def worker(queue):
    while True:
        try:
            item = await queue.get()
            await handle(item)
        except BaseException:
            log_failure()
```

## Fix

Catch ordinary errors with `except Exception`, and when cancellation must
be intercepted for cleanup, keep the cleanup short and re-raise.

```python
import asyncio

async def worker(queue):
    while True:
        try:
            item = await queue.get()
            await handle(item)
        except asyncio.CancelledError:
            release_lease()
            raise
        except Exception:
            log_failure()
```
"#,
    examples: &EXAMPLES,
};

/// The handler types that catch a task's cancellation.
/// `concurrent.futures.CancelledError` is not among them: since Python 3.8
/// it is an ordinary `Exception`, apart from `asyncio.CancelledError`.
const CANCEL_TYPES: &[&str] = &[
    "BaseException",
    "asyncio.CancelledError",
    "asyncio.exceptions.CancelledError",
    "trio.Cancelled",
    "CancelledError",
];

impl Rule for CancellationSwallowed {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for fid in cx.model.function_ids() {
            if !cx.func(fid).is_async {
                continue;
            }
            let mut v = TryFinder(Vec::new());
            walk_block(cx.model, &cx.func(fid).body, &mut v);
            for t in v.0 {
                if cx.func(fid).is_test {
                    break;
                }
                check_try(cx, fid, t, out);
            }
        }
    }
}

struct TryFinder(Vec<StmtId>);

impl Visitor for TryFinder {
    fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
        if matches!(m.stmt(id).kind, StmtKind::Try { .. }) {
            self.0.push(id);
        }
        true
    }
}

fn check_try(cx: &FileCx, fid: FuncId, t: StmtId, out: &mut Vec<Finding>) {
    let StmtKind::Try { body, handlers, .. } = &cx.stmt(t).kind else {
        return;
    };
    let awaits = awaits_in_block(cx.model, body);
    if awaits.is_empty()
        || reaps_cancelled_task(cx, fid, t, body)
        || shielded(cx, body, &awaits)
        || only_called_while_cancelling(cx, fid, 2)
    {
        return;
    }
    let level_triggered = trio_style(cx, handlers);
    for (i, h) in handlers.iter().enumerate() {
        // An earlier handler already took the cancellation.
        if handlers[..i]
            .iter()
            .any(|p| p.types.iter().any(|t| is_cancel_type(t)))
        {
            break;
        }
        let caught = if h.types.is_empty() {
            "a bare `except:`".to_string()
        } else if let Some(ty) = h
            .types
            .iter()
            .find(|t| is_cancel_type(t) || t.as_str() == "BaseException")
        {
            format!("`except {ty}`")
        } else {
            continue;
        };
        if always_raises(cx.model, &h.body)
            || reraises_cancellation(cx, &h.body)
            || crate::python::common::ends_in_raising_helper(cx, &h.body)
            || forwards_exception(cx, h)
            || deferred_then_raised(cx, t, h)
            || saved_error_raised_later(cx, fid, t, h)
            || merged_then_raised(cx, fid, t, h)
            || exit_passes_its_own_exception_on(cx, fid, t, h)
            || stops_on_flag_set_before_cancel(cx, h)
            || raises_unless_loop_ends(cx, t, h)
            || in_finally_of_endless_body(cx, t)
            || finally_raises_outer_cancellation(cx, t)
            || raises_after(cx, t, h)
            || leaves_only_for_other_errors(cx, h)
            || claims_with_uncancel(cx, &h.body)
            || raises_unless_shielded_task_cancelled(cx, body, h)
            || (level_triggered && checkpoints_first(cx, &h.body))
        {
            continue;
        }
        // The handler returns, or nothing but a `return` follows the `try`.
        // (Or `break`s out of the loop the function ends with.)
        let ends = function_ends_after(cx, t)
            || h.body.last().is_some_and(|&l| match cx.stmt(l).kind {
                StmtKind::Return(_) => true,
                StmtKind::Break => crate::python::common::enclosing_loop(cx, t)
                    .is_some_and(|lp| function_ends_after(cx, lp)),
                _ => false,
            });
        // The task's last act in a coroutine that only ever runs as the
        // root of its own task: nobody above it inside the task to inform.
        if ends && only_cleanup_awaits(cx, &h.body) && runs_as_own_task(cx, fid) {
            return;
        }
        let consequence = if level_triggered {
            "the handler's code runs on as if nothing had been cancelled (trio and anyio deliver the cancellation again only at the next checkpoint), and the cancel scope that asked for it never sees its `Cancelled`, so it cannot tell its work was cut short"
        } else if ends {
            "the coroutine then returns as if it had finished: whoever cancelled it, awaits it or put a timeout or task group around it never learns it was cancelled (`asyncio.timeout` cannot turn it into `TimeoutError`, a task group loses the cancellation of its children)"
        } else {
            "`cancel()`, timeouts and task groups can no longer stop this task, and shutdown waits on it forever"
        };
        out.push(cx.finding(
            &META,
            h.span,
            format!(
                "{caught} catches the task's cancellation around an await and does not re-raise it: {consequence}"
            ),
            if level_triggered {
                "catch `Exception` for ordinary errors; if cancellation must be intercepted, do the cleanup (inside `CancelScope(shield=True)` if it awaits) and end the handler with `raise`"
            } else {
                "catch `Exception` for ordinary errors; if cancellation must be intercepted, do bounded cleanup and end the handler with `raise`"
            },
        ));
        // One finding per try: later handlers never see the cancellation.
        break;
    }
}

/// A private helper (`_await_cleanup`) that the file calls only from
/// handlers of the caller's own cancellation that re-raise it right after
/// (`except asyncio.CancelledError: await self._await_cleanup(); raise`),
/// or from helpers only called so (`depth` levels up): the cancellation is
/// already being delivered, and what the helper swallows are the repeats
/// that arrive while it waits for its cleanup.
fn only_called_while_cancelling(cx: &FileCx, f: FuncId, depth: u32) -> bool {
    depth > 0
        && crate::python::common::private_helper_called_only(cx, f, |e| {
            let in_handler = cx.enclosing_stmts(e).into_iter().any(|s| {
                cx.tree.stmt_ancestors(s).next().is_some_and(|p| {
                    matches!(&cx.stmt(p).kind, StmtKind::Try { handlers, .. }
                        if handlers.iter().any(|h| {
                            h.body.contains(&s)
                                && (h.types.is_empty() || h.types.iter().any(|t| CANCEL_TYPES.contains(&t.as_str())))
                                && h.body.last().is_some_and(|&l| matches!(cx.stmt(l).kind, StmtKind::Raise(None)))
                        }))
                })
            });
            in_handler || only_called_while_cancelling(cx, cx.func_of(e), depth - 1)
        })
}

/// `except BaseException as e:` that ends with `raise` and leaves any
/// other way only behind an `if isinstance(e, TransportError) and ..:` of a
/// type that is no cancellation: a cancellation skips those branches and
/// is raised again.
fn leaves_only_for_other_errors(cx: &FileCx, h: &Handler) -> bool {
    let Some(name) = h.name.as_deref() else {
        return false;
    };
    let Some((&last, before)) = h.body.split_last() else {
        return false;
    };
    let raises_it = match cx.stmt(last).kind {
        StmtKind::Raise(None) => true,
        StmtKind::Raise(Some(v)) => cx.model.name_of(v) == Some(name),
        _ => false,
    };
    // `isinstance(e, RealtimeError)`, alone or as a term of an `and`.
    fn requires_other_type(cx: &FileCx, e: ExprId, name: &str) -> bool {
        match &cx.expr(cx.model.strip(e)).kind {
            ExprKind::Logical {
                op: LogicalOp::And,
                left,
                right,
            } => requires_other_type(cx, *left, name) || requires_other_type(cx, *right, name),
            ExprKind::Call(c) => {
                c.name == "isinstance"
                    && c.receiver.is_none()
                    && c.positional(0).and_then(|a| cx.model.name_of(a)) == Some(name)
                    && c.positional(1).is_some_and(|t| {
                        unsnarl_model::walk::exprs_under(cx.model, t)
                            .into_iter()
                            .all(|x| {
                                cx.model.dotted(x).is_none_or(|d| {
                                    !d.contains("Cancel") && !d.ends_with("BaseException")
                                })
                            })
                    })
            }
            _ => false,
        }
    }
    // Falls through, or leaves only behind such a test (also inside a loop
    // over the listed types: `for err in listed: if isinstance(e, err):`).
    fn passes_cancellation_on(cx: &FileCx, s: StmtId, name: &str) -> bool {
        crate::util::falls_through(cx.model, std::slice::from_ref(&s))
            || match &cx.stmt(s).kind {
                StmtKind::If { cond, orelse, .. } => {
                    requires_other_type(cx, *cond, name)
                        && crate::util::falls_through(cx.model, orelse)
                }
                StmtKind::For { body, .. } => {
                    body.iter().all(|&b| passes_cancellation_on(cx, b, name))
                }
                _ => false,
            }
    }
    raises_it && before.iter().all(|&s| passes_cancellation_on(cx, s, name))
}

/// The handler re-raises the cancellations it was not meant for and
/// claims the one it was with `uncancel()` (`if self._closing: raise` ...
/// `asyncio.current_task().uncancel()`), which takes it off the task's
/// count: a deliberate, selective claim (whether it is the handler's to
/// make is PY037's question), not a silent swallow. A handler that
/// uncancels whatever arrives is still reported.
fn claims_with_uncancel(cx: &FileCx, body: &Block) -> bool {
    contains_raise(cx, body)
        && unsnarl_model::walk::calls_in_block(cx.model, body)
            .into_iter()
            .any(|e| {
                cx.call(e)
                    .is_some_and(|c| c.name == "uncancel" && c.receiver.is_some())
            })
}

/// The handler runs on into what follows its `try`, and that always raises
/// (`except CancelledError: try: await cleanup() except BaseException:
/// pass` inside a handler that then does `raise Stopped() from None`): the
/// task still ends with an exception, it does not carry on.
fn raises_after(cx: &FileCx, t: StmtId, h: &Handler) -> bool {
    crate::util::falls_through(cx.model, &h.body)
        && always_raises(cx.model, &crate::util::stmts_after(cx, t).to_vec())
}

/// `t` sits in the `finally` of a `try` whose body cannot finish normally:
/// it ends in a `while True:` that nothing breaks out of, and nothing in
/// it returns. That `finally` only runs with an exception on its way out
/// (the task's own cancellation, most often), which goes on once the
/// cleanup is done: a second cancellation swallowed during the cleanup
/// loses nothing.
fn in_finally_of_endless_body(cx: &FileCx, t: StmtId) -> bool {
    cx.tree.stmt_ancestors(t).any(|a| {
        let StmtKind::Try {
            body,
            finally: Some(finally),
            ..
        } = &cx.stmt(a).kind
        else {
            return false;
        };
        if !crate::util::block_contains(cx, finally, t) {
            return false;
        }
        let Some(&last) = body.last() else {
            return false;
        };
        let StmtKind::While { cond, .. } = &cx.stmt(last).kind else {
            return false;
        };
        let f = cx.tree.stmt_func(a);
        matches!(cx.model.literal(*cond), Some(Lit::Bool(true)))
            && unsnarl_model::walk::stmts_in_block(cx.model, body)
                .into_iter()
                .filter(|&s| cx.tree.stmt_func(s) == f)
                .all(|s| match cx.stmt(s).kind {
                    StmtKind::Return(_) => false,
                    StmtKind::Break => crate::python::common::enclosing_loop(cx, s) != Some(last),
                    _ => true,
                })
    })
}

/// The `try` sits in a handler of the caller's cancellation (`except
/// asyncio.CancelledError as err:`) and its own `finally` ends by raising
/// that cancellation again (`finally: raise err`, or a bare `raise`): what
/// the inner handler catches during the cleanup is dropped, but the
/// cancellation goes on whichever way the cleanup ends.
fn finally_raises_outer_cancellation(cx: &FileCx, t: StmtId) -> bool {
    let StmtKind::Try {
        finally: Some(finally),
        ..
    } = &cx.stmt(t).kind
    else {
        return false;
    };
    let Some(&last) = finally.last() else {
        return false;
    };
    let StmtKind::Raise(raised) = cx.stmt(last).kind else {
        return false;
    };
    cx.tree.stmt_ancestors(t).any(|a| {
        let StmtKind::Try { handlers, .. } = &cx.stmt(a).kind else {
            return false;
        };
        handlers.iter().any(|h| {
            let catches_cancel = h.types.is_empty()
                || h.types
                    .iter()
                    .any(|ty| is_cancel_type(ty) || ty.as_str() == "BaseException");
            catches_cancel
                && crate::util::block_contains(cx, &h.body, t)
                && match raised {
                    None => true,
                    Some(x) => h
                        .name
                        .as_deref()
                        .is_some_and(|n| cx.model.name_of(cx.model.strip(x)) == Some(n)),
                }
        })
    })
}

/// The handler first leaves when a stop flag is set (`if closing:
/// return`), and the code of the file that cancels a task sets that flag
/// just before (`closing = True; ticker.cancel()`): the owner's
/// cancellation ends the task; only a stray `CancelledError` from below
/// (a driver's) is logged and lived through. Or it re-raises unless the
/// flag is set (`if not self._sigint: raise`): only the cancellation the
/// file asked for, to interrupt one step, is lived through.
fn stops_on_flag_set_before_cancel(cx: &FileCx, h: &Handler) -> bool {
    let Some(&first) = h.body.first() else {
        return false;
    };
    let StmtKind::If { cond, then, .. } = &cx.stmt(first).kind else {
        return false;
    };
    // Or the other way round: `if not self._interrupted: raise`, every
    // cancellation but the one the file asked for goes on, and that one
    // only interrupts the current step (a console's Ctrl-C).
    let (flag, leaves) = match &cx.expr(*cond).kind {
        ExprKind::Unary {
            op: UnOp::Not,
            operand,
        } => (
            cx.model.dotted(*operand),
            then.len() == 1 && matches!(cx.stmt(then[0]).kind, StmtKind::Raise(None)),
        ),
        _ => (
            cx.model.dotted(*cond),
            then.last().is_some_and(|&l| {
                matches!(
                    cx.stmt(l).kind,
                    StmtKind::Return(_) | StmtKind::Break | StmtKind::Raise(_)
                )
            }),
        ),
    };
    let Some(flag) = flag else {
        return false;
    };
    let sets_flag = |s: StmtId| {
        matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(v), .. }
            if matches!(cx.model.literal(*v), Some(Lit::Bool(true)))
                && targets.iter().any(|&t| cx.model.dotted(t).as_deref() == Some(flag.as_str())))
    };
    let cancels = |s: StmtId| {
        matches!(cx.stmt(s).kind, StmtKind::Expr(e)
            if cx.call(e).is_some_and(|c| c.name == "cancel" && c.receiver.is_some()))
    };
    // The cancel right after the flag, or later in the same function (a
    // `close()` that sets `self._closing = True`, then, past a drain,
    // `self._task.cancel()`).
    let cancels_later = |s: StmtId| {
        let f = cx.tree.stmt_func(s);
        let at = cx.stmt(s).span.end;
        cx.body_calls(f).any(|e| {
            cx.expr(e).span.start > at
                && cx
                    .call(e)
                    .is_some_and(|c| c.name == "cancel" && c.receiver.is_some())
        })
    };
    leaves
        && cx.model.stmts.iter().enumerate().any(|(i, _)| {
            let s = StmtId(i as u32);
            sets_flag(s)
                && (crate::util::stmts_after(cx, s)
                    .first()
                    .is_some_and(|&n| cancels(n))
                    || cancels_later(s))
        })
}

/// The handler re-raises while the loop around the `try` would go on and
/// swallows only once the loop's own condition says stop (`while not
/// self.closed: try: await step() except CancelledError: if not
/// self.closed: raise`), with no await after the `try` in the loop's body:
/// the swallowed cancellation comes from the owner closing the loop, and
/// the task ends right after.
fn raises_unless_loop_ends(cx: &FileCx, t: StmtId, h: &Handler) -> bool {
    let Some(lp) = crate::python::common::enclosing_loop(cx, t) else {
        return false;
    };
    let StmtKind::While {
        cond: looping,
        body,
        ..
    } = &cx.stmt(lp).kind
    else {
        return false;
    };
    // The two conditions, compared as written (spaces aside).
    let source = |e: ExprId| -> String { cx.source(cx.expr(e).span).split_whitespace().collect() };
    let raises_while_looping = h.body.iter().any(|&s| {
        matches!(&cx.stmt(s).kind, StmtKind::If { cond, then, .. }
            if source(*cond) == source(*looping)
                && then.last().is_some_and(|&l| matches!(cx.stmt(l).kind, StmtKind::Raise(_))))
    });
    let rest_of_body_waits = body
        .iter()
        .position(|&s| s == t || cx.tree.stmt_ancestors(t).any(|a| a == s))
        .is_none_or(|i| !awaits_in_block(cx.model, &body[i + 1..].to_vec()).is_empty());
    raises_while_looping && !rest_of_body_waits
}

/// In `__aexit__`, a handler that raises whatever is not the exception the
/// block exited with (`if exc is not value: raise`) and otherwise returns
/// a false value (or falls through to one after the `try`, or off the
/// function's end): `async with` then raises that exception itself, the
/// cancellation included (contextlib's generator context managers).
fn exit_passes_its_own_exception_on(cx: &FileCx, fid: FuncId, t: StmtId, h: &Handler) -> bool {
    let f = cx.func(fid);
    if f.name != "__aexit__" || f.params.len() < 2 {
        return false;
    }
    let (Some(caught), value) = (h.name.as_deref(), f.params[1].name.as_str()) else {
        return false;
    };
    let compares = |cond: ExprId, want: BinOp| {
        matches!(&cx.expr(cond).kind, ExprKind::Binary { op, left, right }
        if *op == want && {
            let (l, r) = (cx.model.name_of(*left), cx.model.name_of(*right));
            (l == Some(caught) && r == Some(value)) || (l == Some(value) && r == Some(caught))
        })
    };
    let returns_false = |b: &Block| {
        b.last().is_some_and(|&l| {
            matches!(cx.stmt(l).kind, StmtKind::Return(Some(v))
                if matches!(cx.model.literal(v), Some(Lit::Bool(false) | Lit::Null)))
        })
    };
    // `if exc is not value: raise` ... `return False`.
    let raises_if_other = h.body.iter().any(|&s| {
        matches!(&cx.stmt(s).kind, StmtKind::If { cond, then, .. }
            if always_raises(cx.model, then) && compares(*cond, BinOp::IsNot))
    });
    // `if exc is value: return False` ... `raise`.
    let returns_false_if_own = h.body.iter().any(|&s| {
        matches!(&cx.stmt(s).kind, StmtKind::If { cond, then, .. }
            if returns_false(then) && compares(*cond, BinOp::Is))
    });
    let raises_last = h
        .body
        .last()
        .is_some_and(|&l| matches!(cx.stmt(l).kind, StmtKind::Raise(_)));
    // Only `if exc is not value: raise`, then the function returns a false
    // value after the `try` or falls off its end (`return None`).
    let falls_to_false_return = || {
        let mut s = t;
        loop {
            let rest = crate::util::stmts_after(cx, s);
            if let Some(&next) = rest.first() {
                return returns_false(&vec![next]);
            }
            match cx.tree.stmt_parent(s) {
                Parent::Function(_) => return true,
                Parent::Stmt(p) if matches!(cx.stmt(p).kind, StmtKind::If { .. }) => s = p,
                _ => return false,
            }
        }
    };
    (raises_if_other && (returns_false(&h.body) || (h.body.len() == 1 && falls_to_false_return())))
        || (returns_false_if_own && raises_last)
}

/// The handler falls through (it only logs, or goes round the loop again:
/// `except CancelledError: continue` while a shielded worker finishes) and
/// a bare `raise` follows, after the `try` or after the loops around it,
/// inside the `except` that started the work: the cancellation is put off
/// until the rollback or the worker is done, then the exception that
/// started it all goes on (`except BaseException: for p in started: try:
/// await p.stop() except BaseException: log(..)` then `raise`).
fn deferred_then_raised(cx: &FileCx, t: StmtId, h: &Handler) -> bool {
    if leaves_early(cx, &h.body) || always_raises(cx.model, &h.body) {
        return false;
    }
    // A flag the handler sets (`cancelled = True`) that a later `if
    // cancelled: raise asyncio.CancelledError` turns back into the
    // cancellation, once the shielded work is done.
    let flags = names_set_to(cx, &h.body, |v| {
        matches!(cx.model.literal(v), Some(Lit::Bool(true)))
    });
    let raises_cancel_on_flag = |n: StmtId| {
        matches!(&cx.stmt(n).kind, StmtKind::If { cond, then, .. }
            if cx.model.name_of(*cond).is_some_and(|c| flags.contains(&c))
                && then.iter().any(|&r| matches!(cx.stmt(r).kind,
                    StmtKind::Raise(Some(x)) if is_cancelled_error(cx, x))))
    };
    // `raise cancellation`, the name an enclosing handler of the
    // cancellation bound it to (`except CancelledError as cancellation:`).
    let outer_names: Vec<&str> = cx
        .tree
        .stmt_ancestors(t)
        .filter_map(|a| match &cx.stmt(a).kind {
            StmtKind::Try { handlers, .. } => Some(handlers),
            _ => None,
        })
        .flatten()
        .filter(|oh| {
            oh.types
                .iter()
                .any(|ty| is_cancel_type(ty) || ty.as_str() == "BaseException")
                && crate::util::block_contains(cx, &oh.body, t)
        })
        .filter_map(|oh| oh.name.as_deref())
        .collect();
    let raises_outer = |n: StmtId| {
        matches!(cx.stmt(n).kind, StmtKind::Raise(Some(x))
            if cx.model.name_of(cx.model.strip(x)).is_some_and(|v| outer_names.contains(&v)))
    };
    let raised_after = |s: StmtId| {
        crate::util::stmts_after(cx, s).iter().any(|&n| {
            matches!(cx.stmt(n).kind, StmtKind::Raise(None))
                || raises_cancel_on_flag(n)
                || raises_outer(n)
        })
    };
    // Up through the loops (and `if`s) around the `try`, not past the
    // statement whose handler holds them.
    let mut s = t;
    loop {
        if raised_after(s) {
            return true;
        }
        match cx.tree.stmt_parent(s) {
            Parent::Stmt(p)
                if matches!(
                    cx.stmt(p).kind,
                    StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::If { .. }
                ) =>
            {
                s = p;
            }
            _ => return false,
        }
    }
}

/// The cancellation exception (`asyncio.CancelledError`), called or not.
fn is_cancelled_error(cx: &FileCx, e: ExprId) -> bool {
    let e = cx.model.strip(e);
    let e = cx.call(e).map_or(e, |c| c.func);
    cx.model
        .resolved(e)
        .or_else(|| cx.model.name_of(e))
        .is_some_and(is_cancel_type)
}

/// The `try` runs only when an earlier error was saved (`if exc:`), and
/// the function then always ends by raising it (`if exc: raise exc` at its
/// top level, with `exc` not assigned in between): a cancellation
/// swallowed here still ends the task with an exception, after the same
/// shutdown the saved error gets.
fn saved_error_raised_later(cx: &FileCx, fid: FuncId, t: StmtId, h: &Handler) -> bool {
    if leaves_early(cx, &h.body) {
        return false;
    }
    let name_of = |e: ExprId| cx.model.name_of(cx.model.strip(e));
    // The `if exc:` around the `try`, and the top-level statement holding it.
    let mut saved = None;
    let mut top = t;
    loop {
        match cx.tree.stmt_parent(top) {
            Parent::Stmt(p) => {
                if let StmtKind::If { cond, then, .. } = &cx.stmt(p).kind
                    && saved.is_none()
                    && then.contains(&top)
                {
                    saved = name_of(*cond);
                }
                top = p;
            }
            Parent::Function(f) if f == fid => break,
            _ => return false,
        }
    }
    let Some(saved) = saved else {
        return false;
    };
    let raised = crate::util::stmts_after(cx, top).iter().position(|&n| {
        matches!(&cx.stmt(n).kind, StmtKind::If { cond, then, .. }
            if name_of(*cond) == Some(saved)
                && matches!(then.first().map(|&r| &cx.stmt(r).kind),
                    Some(StmtKind::Raise(Some(v))) if name_of(*v) == Some(saved)))
    });
    let Some(raised) = raised else {
        return false;
    };
    // Not cleared from the `try` on (its handler included) to the raise:
    // given only other exceptions (`exception = user_cancel_err` in a
    // sibling handler), never `None` or what a call returns.
    let from = cx.stmt(t).span.start;
    let to = cx
        .stmt(crate::util::stmts_after(cx, top)[raised])
        .span
        .start;
    !cx.body_stmts(fid).iter().any(|&x| {
        let at = cx.stmt(x).span.start;
        (from..to).contains(&at)
            && matches!(&cx.stmt(x).kind, StmtKind::Assign { targets, value, .. }
                if targets.iter().any(|&tg| name_of(tg) == Some(saved))
                    && value.and_then(name_of).is_none_or(|v| v == "None"))
    })
}

/// The handler folds the caught exception into a local the function
/// raises after the `try` (`except BaseException as exc: error =
/// combine_errors(error, exc)`, then `if error is not None: raise error`
/// once every resource is closed): the cancellation ends the task, after
/// the rest of the cleanup.
fn merged_then_raised(cx: &FileCx, fid: FuncId, t: StmtId, h: &Handler) -> bool {
    let Some(name) = h.name.as_deref() else {
        return false;
    };
    if leaves_early(cx, &h.body) {
        return false;
    }
    let m = cx.model;
    let kept = names_set_to(cx, &h.body, |v| {
        cx.call(m.strip(v))
            .is_some_and(|c| c.args.iter().any(|a| m.name_of(a.value) == Some(name)))
    });
    let after = cx.stmt(t).span.end;
    !kept.is_empty()
        && cx.body_stmts(fid).iter().any(|&x| {
            cx.stmt(x).span.start >= after
                && matches!(cx.stmt(x).kind, StmtKind::Raise(Some(v))
                    if m.name_of(m.strip(v)).is_some_and(|n| kept.contains(&n)))
        })
}

/// The names the statements of `body` (its own, not nested ones) assign
/// a value `value` accepts (`cancelled = True`, `error = merge(error,
/// exc)`).
fn names_set_to<'a>(cx: &FileCx<'a>, body: &Block, value: impl Fn(ExprId) -> bool) -> Vec<&'a str> {
    body.iter()
        .filter_map(|&b| match &cx.stmt(b).kind {
            StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } if value(*v) => targets.first().and_then(|&t| cx.model.name_of(t)),
            _ => None,
        })
        .collect()
}

/// The handler `return`s or `break`s somewhere: on that path nothing
/// raised later runs.
fn leaves_early(cx: &FileCx, body: &Block) -> bool {
    unsnarl_model::walk::stmts_in_block(cx.model, body)
        .into_iter()
        .any(|s| matches!(cx.stmt(s).kind, StmtKind::Return(_) | StmtKind::Break))
}

/// The `try` only awaits a shielded task (`await asyncio.shield(task)`)
/// and the handler starts with `if not task.cancelled(): raise`: when the
/// waiter itself is cancelled, the shield leaves the task running, so the
/// test fails and the cancellation goes on up; what the handler keeps is
/// the task's own cancellation (someone cancelled the work it waits for,
/// and it moves on to the replacement). Without the shield, cancelling the
/// waiter cancels the task too, and the test could not tell them apart.
fn raises_unless_shielded_task_cancelled(cx: &FileCx, body: &Block, h: &Handler) -> bool {
    let mut shielded_tasks = unsnarl_model::walk::exprs_in_block(cx.model, body)
        .into_iter()
        .filter_map(|e| match cx.expr(e).kind {
            ExprKind::Await(x) => Some(x),
            _ => None,
        })
        .map(|x| {
            cx.call(cx.model.strip(x))
                .filter(|c| c.name == "shield")
                .and_then(|c| c.positional(0))
                .and_then(|t| cx.model.dotted(t))
        });
    let Some(Some(task)) = shielded_tasks.next() else {
        return false;
    };
    if !shielded_tasks.all(|t| t.as_deref() == Some(task.as_str())) {
        return false;
    }
    let Some(&first) = h.body.first() else {
        return false;
    };
    let StmtKind::If { cond, then, .. } = &cx.stmt(first).kind else {
        return false;
    };
    let asks_task = matches!(&cx.expr(*cond).kind, ExprKind::Unary { op: UnOp::Not, operand }
        if cx.call(*operand).is_some_and(|c| c.name == "cancelled"
            && c.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some(task.as_str())));
    asks_task && always_raises(cx.model, then)
}

/// Every await of the `try` body runs inside a shielded trio/anyio cancel
/// scope (`with CancelScope(shield=True):`, `move_on_after(t, shield=True)`):
/// no outer cancellation reaches it, and a scope cancelled from inside
/// absorbs its own `Cancelled` on exit, so the handler only sees the
/// awaited code's own errors.
fn shielded(cx: &FileCx, body: &Block, awaits: &[Span]) -> bool {
    let shields: Vec<Span> = unsnarl_model::walk::stmts_in_block(cx.model, body)
        .into_iter()
        .filter(|&s| {
            let StmtKind::With { items, .. } = &cx.stmt(s).kind else {
                return false;
            };
            items.iter().any(|i| {
                cx.call(i.ctx).is_some_and(|c| {
                    matches!(
                        c.name.as_str(),
                        "CancelScope" | "move_on_after" | "move_on_at" | "fail_after" | "fail_at"
                    ) && c
                        .kwarg("shield")
                        .is_some_and(|v| matches!(cx.model.literal(v), Some(Lit::Bool(true))))
                })
            })
        })
        .map(|s| cx.stmt(s).span)
        .collect();
    !shields.is_empty()
        && awaits
            .iter()
            .all(|a| shields.iter().any(|s| s.contains(*a)))
}

/// Under trio or anyio, the handler awaits at its top level, outside any
/// shielded scope (`except BaseException: await
/// trio.aclose_forcefully(stream)`): cancellation is level-triggered, so
/// that await is a checkpoint that raises `Cancelled` again. Nothing is
/// swallowed.
fn checkpoints_first(cx: &FileCx, body: &Block) -> bool {
    body.iter().any(|&s| {
        matches!(
            cx.stmt(s).kind,
            StmtKind::Expr(_) | StmtKind::Assign { .. } | StmtKind::Return(_)
        ) && !awaits_in_block(cx.model, &vec![s]).is_empty()
    })
}

/// Cancellation here is trio's or anyio's (level-triggered, scoped): the
/// handler names `trio.Cancelled` or anyio's `get_cancelled_exc_class()`,
/// or the file imports trio or anyio and not asyncio.
fn trio_style(cx: &FileCx, handlers: &[Handler]) -> bool {
    let named = handlers
        .iter()
        .flat_map(|h| &h.types)
        .any(|t| t.as_str() == "trio.Cancelled" || t.contains("get_cancelled_exc_class"));
    let imports = |root: &str| {
        cx.model.imports.iter().any(|i| {
            i.target.as_str() == root
                || i.target
                    .strip_prefix(root)
                    .is_some_and(|rest| rest.starts_with('.'))
        })
    };
    named || ((imports("trio") || imports("anyio")) && !imports("asyncio"))
}

/// The coroutine function runs only as the root of a task of its own: a
/// CLI command (`@app.command()`), or, at every place this file names it,
/// called only to be handed to `asyncio.run`/`create_task`/`ensure_future`
/// /`run_until_complete`, and no task so made is awaited or passed to
/// `wait_for`/`gather`/`shield` (cancelled, kept in a set, or reaped with
/// `asyncio.wait` is fine). Or handed straight to `asyncio.gather`, which
/// runs it as a task of its own and raises the gather's own cancellation
/// whatever its children return. Then no frame of the task is above the handler:
/// a handler that ends the function only loses `task.cancelled()`, which
/// nobody reads. A function awaited anywhere in the file, or named in any
/// other way (a callback, `partial`), may run inside someone else's task.
/// Other files are not seen: a method spawned here and awaited elsewhere is
/// missed.
fn runs_as_own_task(cx: &FileCx, fid: FuncId) -> bool {
    let f = cx.func(fid);
    if f.name.is_empty() || f.kind == FnKind::Module {
        return false;
    }
    if crate::python::common::is_cli_command(f) {
        return true;
    }
    let method = f.class.is_some();
    let mut started = false;
    for (i, e) in cx.model.exprs.iter().enumerate() {
        let refers = match &e.kind {
            ExprKind::Name { id, .. } => !method && *id == f.name,
            // `connect_utils._cancel(..)`: a module's function of the same
            // name, not this method.
            ExprKind::Attr { name, obj, .. } => {
                method && *name == f.name && cx.model.resolved(*obj).is_none()
            }
            _ => false,
        };
        if !refers {
            continue;
        }
        let id = ExprId(i as u32);
        let Parent::Expr(call) = cx.tree.expr_parent(id) else {
            return false;
        };
        // `tg.start_soon(self.run)`, `nursery.start(serve, port)`: a task
        // group runs the function as a task of its own; so do
        // python-socketio's `sio.start_background_task(self._listen)` and
        // anyio's `portal.start_task_soon(owner.run)`.
        if let Some(r) = cx.call(call)
            && r.func != id
            && r.receiver.is_some()
            && matches!(
                r.name.as_str(),
                "start_soon" | "start" | "start_background_task" | "start_task_soon"
            )
            && r.positional(0) == Some(id)
        {
            started = true;
            continue;
        }
        // `asyncio.start_server(self._handle, host, port)` (or websockets'
        // `serve(self.handle, host, port)`): each accepted connection runs
        // the callback as a task of its own, whose result nobody awaits.
        if let Some(r) = cx.call(call)
            && matches!(
                r.target.as_deref(),
                Some(
                    "asyncio.start_server"
                        | "asyncio.start_unix_server"
                        | "websockets.serve"
                        | "websockets.unix_serve"
                        | "websockets.server.serve"
                        | "websockets.server.unix_serve"
                        | "websockets.asyncio.server.serve"
                        | "websockets.asyncio.server.unix_serve"
                        | "websockets.legacy.server.serve"
                )
            )
            && (r.positional(0) == Some(id)
                || r.kwarg("client_connected_cb") == Some(id)
                || r.kwarg("handler") == Some(id))
        {
            started = true;
            continue;
        }
        if cx.call(call).is_none_or(|c| c.func != id) {
            return false;
        }
        // `ensure_future(self.run_loop() if looping else self.run_once())`:
        // either branch is the task's root.
        let mut arg = call;
        while let Parent::Expr(p) = cx.tree.expr_parent(arg)
            && matches!(&cx.expr(p).kind, ExprKind::Ternary { then, orelse, .. }
                if *then == arg || *orelse == arg)
        {
            arg = p;
        }
        let Parent::Expr(root) = cx.tree.expr_parent(arg) else {
            return false;
        };
        let Some(r) = cx.call(root) else { return false };
        // `asyncio.gather(serve(), dispatch_loop())`: the gather wraps each
        // coroutine in a task of its own and, when it is cancelled itself,
        // raises `CancelledError` whatever its children return.
        if r.target.as_deref() == Some("asyncio.gather") && r.args.iter().any(|a| a.value == arg) {
            started = true;
            continue;
        }
        // `asyncio.create_task(name=.., coro=run())` names the coroutine.
        let rooted = (is_task_root(r)
            && (r.positional(0) == Some(arg) || r.kwarg("coro") == Some(arg)))
            || spawning_wrapper(cx, r, arg)
            || spawned_from_thread(cx, r, arg);
        if !rooted || task_waited_for(cx, root) {
            return false;
        }
        started = true;
    }
    started
}

/// `self.add_task(self._serve(), name="serve")`: a function of this file
/// whose parameter receiving the coroutine goes straight to a task-root
/// call (`task = self.loop.create_task(coro)`), the project's own spawner.
fn spawning_wrapper(cx: &FileCx, r: &Call, coro: ExprId) -> bool {
    let Some(g) = cx.callee_in_file(r) else {
        return false;
    };
    let Some(i) = r.args.iter().position(|a| a.value == coro) else {
        return false;
    };
    let Some(param) = cx.param_receiving(g, r, i) else {
        return false;
    };
    cx.body_calls(g).any(|e| {
        let c = cx.call(e).unwrap();
        is_task_root(c) && c.positional(0).and_then(|a| cx.model.name_of(a)) == Some(param)
    })
}

/// The handler waits on nothing but closing things (`await
/// self.server.close()`): after swallowing the cancellation, any other
/// wait (`await event.wait()`) can keep the cancelled task alive for good.
fn only_cleanup_awaits(cx: &FileCx, body: &Block) -> bool {
    exprs_in_block(cx.model, body).into_iter().all(|e| {
        let ExprKind::Await(inner) = cx.expr(e).kind else {
            return true;
        };
        cx.call(cx.model.strip(inner))
            .is_some_and(|c| crate::python::common::is_teardown_name(&c.name))
    }) && !body.iter().any(|&s| {
        matches!(
            cx.stmt(s).kind,
            StmtKind::For { is_async: true, .. } | StmtKind::With { is_async: true, .. }
        )
    })
}

/// Started on a loop from another thread: `asyncio.run_coroutine_threadsafe(
/// coro, loop)`, or `loop.call_soon_threadsafe(loop.create_task, coro)`.
fn spawned_from_thread(cx: &FileCx, r: &Call, coro: ExprId) -> bool {
    if r.target.as_deref() == Some("asyncio.run_coroutine_threadsafe") {
        return r.positional(0) == Some(coro);
    }
    r.name == "call_soon_threadsafe"
        && r.positional(1) == Some(coro)
        && r.positional(0).is_some_and(|f| {
            matches!(&cx.expr(f).kind, ExprKind::Attr { name, .. } | ExprKind::Name { id: name, .. }
                if matches!(name.as_str(), "create_task" | "ensure_future"))
        })
}

/// A call that runs a coroutine as a task of its own (or as the root of
/// an event loop). A project's own `create_task(coro)`, imported from a
/// helper module, is taken at its name: such wrappers hand the coroutine to
/// the loop's.
fn is_task_root(c: &Call) -> bool {
    c.target.as_deref() == Some("asyncio.run")
        || matches!(c.name.as_str(), "create_task" | "ensure_future")
        // `app.add_task(self._serve())`: an application that schedules
        // the coroutine as a task of its own (sanic, aiohttp-style apps).
        || (c.receiver.is_some() && matches!(c.name.as_str(), "run_until_complete" | "add_task"))
}

/// The task a task-root call makes is awaited, or handed to something that
/// reports its cancellation onward (`wait_for`, `gather`, `shield`), here
/// or through the name it is stored under; or it is returned to an unknown
/// caller.
fn task_waited_for(cx: &FileCx, root: ExprId) -> bool {
    let waits = |e: ExprId| match cx.tree.expr_parent(e) {
        Parent::Expr(p) => {
            matches!(cx.expr(p).kind, ExprKind::Await(_))
                || cx.call(p).is_some_and(|c| {
                    c.func != e && matches!(c.name.as_str(), "wait_for" | "gather" | "shield")
                })
        }
        _ => false,
    };
    if waits(root) {
        return true;
    }
    // `self._task = create_task(..) if path is not None else None`: what
    // happens to the task is what happens to the conditional's value.
    if let Parent::Expr(p) = cx.tree.expr_parent(root)
        && let ExprKind::Ternary { then, orelse, .. } = cx.expr(p).kind
        && (then == root || orelse == root)
    {
        return task_waited_for(cx, p);
    }
    match cx.tree.expr_parent(root) {
        Parent::Stmt(s) => match &cx.stmt(s).kind {
            StmtKind::Expr(_) => false,
            StmtKind::Return(_) => cx
                .call(root)
                .is_none_or(|c| c.target.as_deref() != Some("asyncio.run")),
            StmtKind::Assign { targets, .. } => {
                // `self._tasks[path] = create_task(..)`: kept in a mapping.
                if let Some(&t) = targets.first()
                    && let ExprKind::Index { obj, .. } = &cx.expr(t).kind
                {
                    return match cx.model.dotted(*obj) {
                        Some(name) => collection_waited(cx, &name),
                        None => true,
                    };
                }
                let Some(name) = targets.first().and_then(|&t| cx.model.dotted(t)) else {
                    return true;
                };
                // `self._task.cancel(); await self._task`: the canceller
                // reaps the task it stopped; nobody else is misled.
                let cancelled_before = |e: ExprId| {
                    let f = cx.func_of(e);
                    cx.body_calls(f).any(|k| {
                        let c = cx.call(k).unwrap();
                        c.name == "cancel"
                            && cx.expr(k).span.end <= cx.expr(e).span.start
                            && c.receiver.and_then(|r| cx.model.dotted(r)).as_deref()
                                == Some(name.as_str())
                    })
                };
                // `try: await wait_for(self._task, 5) except TimeoutError:
                // self._task.cancel(); ...`: the stopper waits for the task
                // to end and cancels it itself when it does not; the
                // cancellation is its own, and so is the reaping.
                let cancelled_on_timeout = |e: ExprId| {
                    cx.enclosing_stmts(e).into_iter().any(|s| {
                        matches!(&cx.stmt(s).kind, StmtKind::Try { handlers, .. }
                        if handlers.iter().any(|h| {
                            walk::calls_in_block(cx.model, &h.body).into_iter().any(|k| {
                                cx.call(k).is_some_and(|c| {
                                    c.name == "cancel"
                                        && c.receiver.and_then(|r| cx.model.dotted(r)).as_deref()
                                            == Some(name.as_str())
                                })
                            })
                        }))
                    })
                };
                (0..cx.model.exprs.len() as u32).map(ExprId).any(|e| {
                    waits(e)
                        && cx.model.dotted(e).as_deref() == Some(name.as_str())
                        && !cancelled_before(e)
                        && !cancelled_on_timeout(e)
                })
            }
            _ => true,
        },
        // `self._tasks = [create_task(..)]` (or a comprehension of them):
        // kept in a collection.
        Parent::Expr(p)
            if matches!(
                cx.expr(p).kind,
                ExprKind::Collection { .. } | ExprKind::Comprehension { .. }
            ) =>
        {
            let Parent::Stmt(s) = cx.tree.expr_parent(p) else {
                return true;
            };
            let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind else {
                return true;
            };
            match targets.first().and_then(|&t| cx.model.dotted(t)) {
                Some(name) => collection_waited(cx, &name),
                None => true,
            }
        }
        // `tasks.add(create_task(..))`: kept in a collection.
        Parent::Expr(p) => cx
            .call(p)
            .is_none_or(|c| !matches!(c.name.as_str(), "add" | "append")),
        _ => true,
    }
}

/// Tasks kept in the collection `name` are waited for only where someone
/// gathers it without cancelling its tasks first (`for t in self._tasks:
/// t.cancel()` then `gather(*self._tasks, return_exceptions=True)` reaps
/// what it stopped).
fn collection_waited(cx: &FileCx, name: &str) -> bool {
    let cancels_items_before = |e: ExprId| {
        cx.body_stmts(cx.func_of(e)).iter().any(|&l| {
            matches!(&cx.stmt(l).kind, StmtKind::For { target: Some(t), iter, body, .. }
            if cx.stmt(l).span.end <= cx.expr(e).span.start
                && cx.model.dotted(*iter).as_deref() == Some(name)
                && cx.model.name_of(*t).is_some_and(|item| {
                    walk::calls_in_block(cx.model, body).into_iter().any(|k| {
                        cx.call(k).is_some_and(|c| {
                            c.name == "cancel"
                                && c.receiver.and_then(|r| cx.model.name_of(r)) == Some(item)
                        })
                    })
                }))
        })
    };
    cx.model.exprs.iter().enumerate().any(|(i, x)| {
        let ExprKind::Call(c) = &x.kind else {
            return false;
        };
        matches!(c.name.as_str(), "gather" | "wait" | "wait_for")
            && c.args
                .iter()
                .any(|a| cx.model.dotted(a.value).as_deref() == Some(name))
            && !cancels_items_before(ExprId(i as u32))
    })
}

/// The caught exception is handed on to be raised elsewhere
/// (`errors.append(exc)`, `future.set_exception(exc)`, `exc_val = exc`,
/// `state.set_exception(sys.exc_info())`, or a helper of this file that
/// raises or keeps what it is given).
fn forwards_exception(cx: &FileCx, h: &Handler) -> bool {
    if test_failure(cx, &h.body) || captures_exc_info(cx, &h.body) {
        return true;
    }
    let Some(name) = h.name.as_deref() else {
        return false;
    };
    if keeps(cx, &h.body, name) {
        return true;
    }
    unsnarl_model::walk::calls_in_block(cx.model, &h.body)
        .into_iter()
        .any(|e| {
            let c = cx.call(e).unwrap();
            let Some(helper) = cx.callee_in_file(c) else {
                return false;
            };
            let body = &cx.func(helper).body;
            c.args.iter().enumerate().any(|(i, a)| {
                cx.model.name_of(a.value) == Some(name)
                    && (contains_raise(cx, body)
                        || cx
                            .param_receiving(helper, c, i)
                            .is_some_and(|p| keeps(cx, body, p)))
            })
        })
}

/// Calls that keep their argument for later: a list, a future, a queue, a
/// generator to throw into.
const KEEPERS: &[&str] = &[
    "append",
    "extend",
    "set_exception",
    "put",
    "put_nowait",
    "throw",
];

/// `body` keeps the value of the variable `name`: assigns it somewhere
/// (`self.error = exc`, `kind, err = type(exc), exc`), passes it to a keeper (`errors.append(exc)`), or
/// returns it as a value (`return Failure(exc)`, `return None, exc`) for
/// the caller to raise.
fn keeps(cx: &FileCx, body: &Block, name: &str) -> bool {
    unsnarl_model::walk::exprs_in_block(cx.model, body)
        .into_iter()
        .any(|e| {
            cx.model.name_of(e) == Some(name)
                && (returned(cx, e)
                    || match cx.tree.expr_parent(e) {
                        Parent::Stmt(s) => matches!(&cx.stmt(s).kind,
                        StmtKind::Assign { value: Some(v), .. } if *v == e),
                        Parent::Expr(p) => is_keeper_arg(cx, p, e) || assigned_in_tuple(cx, p),
                        _ => false,
                    })
        })
}

/// `tuple`, the expression around the kept name, is a tuple unpacked into
/// as many targets (`exc_type, exc_val = type(exc), exc`): the name is
/// stored as surely as by `exc_val = exc`. A dict or list built around it
/// is only a value.
fn assigned_in_tuple(cx: &FileCx, tuple: ExprId) -> bool {
    let tuple_len = |x: ExprId| match &cx.expr(x).kind {
        ExprKind::Collection {
            kind: CollKind::Tuple,
            elems,
            ..
        } => Some(elems.len()),
        _ => None,
    };
    let Some(n) = tuple_len(tuple) else {
        return false;
    };
    let Parent::Stmt(s) = cx.tree.expr_parent(tuple) else {
        return false;
    };
    matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(v), .. }
        if *v == tuple && !targets.is_empty() && targets.iter().all(|&t| tuple_len(t) == Some(n)))
}

/// `e` is the returned value, or part of it: an argument of a wrapper
/// class or an element of a tuple or list that is returned.
fn returned(cx: &FileCx, mut e: ExprId) -> bool {
    loop {
        match cx.tree.expr_parent(e) {
            Parent::Stmt(s) => {
                return matches!(cx.stmt(s).kind, StmtKind::Return(Some(v)) if v == e);
            }
            Parent::Expr(p) => match &cx.expr(p).kind {
                // A wrapper class (`Failure(exc)`), not `str(exc)`.
                ExprKind::Call(c)
                    if c.args.iter().any(|a| a.value == e)
                        && c.name.starts_with(|ch: char| ch.is_ascii_uppercase()) =>
                {
                    e = p
                }
                ExprKind::Collection { elems, .. } if elems.contains(&e) => e = p,
                _ => return false,
            },
            _ => return false,
        }
    }
}

/// `e` is an argument of the call `call`, and the call keeps it.
fn is_keeper_arg(cx: &FileCx, call: ExprId, e: ExprId) -> bool {
    cx.call(call)
        .is_some_and(|c| KEEPERS.contains(&c.name.as_str()) && c.args.iter().any(|a| a.value == e))
}

/// `details = sys.exc_info()` (or `sys.exception()`), or the same handed to
/// a keeper (`state.set_exception(sys.exc_info())`): the handler keeps the
/// exception to raise it later, as `contextlib.AsyncExitStack` does with a
/// bare `except:` while it runs the remaining exit callbacks.
fn captures_exc_info(cx: &FileCx, body: &Block) -> bool {
    unsnarl_model::walk::calls_in_block(cx.model, body)
        .into_iter()
        .any(|e| {
            matches!(
                cx.call(e).and_then(|c| c.target.as_deref()),
                Some("sys.exc_info" | "sys.exception")
            ) && match cx.tree.expr_parent(e) {
                Parent::Stmt(s) => matches!(&cx.stmt(s).kind,
                    StmtKind::Assign { value: Some(v), .. } if *v == e),
                Parent::Expr(p) => is_keeper_arg(cx, p, e),
                _ => false,
            }
        })
}

/// `pytest.fail(...)`, `self.fail(...)`: the handler fails the test.
fn test_failure(cx: &FileCx, body: &Block) -> bool {
    unsnarl_model::walk::calls_in_block(cx.model, body)
        .into_iter()
        .any(|e| {
            let c = cx.call(e).unwrap();
            matches!(c.target.as_deref(), Some("pytest.fail" | "pytest.skip"))
                || (c.name == "fail"
                    && c.receiver.and_then(|r| cx.model.name_of(r)) == Some("self"))
        })
}

fn contains_raise(cx: &FileCx, body: &Block) -> bool {
    struct R(bool);
    impl Visitor for R {
        fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
            if matches!(m.stmt(id).kind, StmtKind::Raise(_)) {
                self.0 = true;
            }
            true
        }
    }
    let mut r = R(false);
    walk_block(cx.model, body, &mut r);
    r.0
}

/// A handler type that is the cancellation exception itself.
fn is_cancel_type(t: &str) -> bool {
    (CANCEL_TYPES.contains(&t) && t != "BaseException") || t.contains("get_cancelled_exc_class")
}

/// `task.cancelling()` or anyio's `get_cancelled_exc_class()`: a question
/// about the cancellation itself.
fn asks_cancelling(c: &Call) -> bool {
    c.name == "cancelling" || c.name == "get_cancelled_exc_class"
}

/// `if isinstance(e, CancelledError): raise` somewhere in the handler.
fn reraises_cancellation(cx: &FileCx, body: &Block) -> bool {
    let mentions = unsnarl_model::walk::exprs_in_block(cx.model, body)
        .into_iter()
        .any(|e| {
            cx.model
                .resolved(e)
                .or_else(|| cx.model.name_of(e))
                .is_some_and(|n| {
                    n.ends_with("CancelledError")
                        || n.ends_with("Cancelled")
                        // `isinstance(exc, Exception)`: re-raise what is not
                        // an ordinary error.
                        || n == "builtins.Exception"
                        || n == "Exception"
                })
                || cx.call(e).is_some_and(|c| {
                    asks_cancelling(c)
                        // A helper of the file that asks (`if
                        // self._really_cancelled(): raise`).
                        || cx.callee_in_file(c).is_some_and(|g| {
                            cx.body_calls(g)
                                .any(|x| cx.call(x).is_some_and(asks_cancelling))
                        })
                })
        });
    let mut has_raise = false;
    struct R<'a>(&'a mut bool);
    impl Visitor for R<'_> {
        fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
            if matches!(m.stmt(id).kind, StmtKind::Raise(_)) {
                *self.0 = true;
            }
            true
        }
    }
    walk_block(cx.model, body, &mut R(&mut has_raise));
    (mentions && has_raise) || raises_all_but_listed(cx, body)
}

/// `if not isinstance(err, (BleakError, TimeoutError)): raise` at the top
/// of the handler: everything but the listed ordinary errors goes on up,
/// the cancellation with it (none of the listed types is one).
fn raises_all_but_listed(cx: &FileCx, body: &Block) -> bool {
    body.iter().any(|&s| {
        let StmtKind::If { cond, then, .. } = &cx.stmt(s).kind else {
            return false;
        };
        let ExprKind::Unary {
            op: UnOp::Not,
            operand,
        } = &cx.expr(cx.model.strip(*cond)).kind
        else {
            return false;
        };
        let Some(c) = cx.call(*operand).filter(|c| c.name == "isinstance") else {
            return false;
        };
        let Some(types) = c.positional(1) else {
            return false;
        };
        let listed = match &cx.expr(cx.model.strip(types)).kind {
            ExprKind::Collection { elems, .. } => elems.clone(),
            _ => vec![types],
        };
        let ordinary = |t: ExprId| {
            cx.model.dotted(t).is_some_and(|d| {
                let last = d.rsplit('.').next().unwrap_or(&d);
                !is_cancel_type(&d)
                    && !matches!(last, "BaseException" | "CancelledError" | "Cancelled")
            })
        };
        !listed.is_empty()
            && listed.iter().all(|&t| ordinary(t))
            && matches!(then.as_slice(), [r] if matches!(cx.stmt(*r).kind, StmtKind::Raise(_)))
    })
}

/// Nothing after the `try` `t` waits again: it is in no loop, and at every
/// level up to the function's body what follows has no `await` (a
/// `return`, a log line, `done.set_result(..)`). A handler there ends the
/// coroutine (the task does stop); what is lost is the cancellation
/// itself.
fn function_ends_after(cx: &FileCx, t: StmtId) -> bool {
    let mut s = t;
    loop {
        // What follows may finish up (`done.set_result(result)`, a log
        // line, `await self._shutdown()`) but not wait for anything else:
        // the coroutine runs to its end.
        let rest = crate::python::common::stmts_after(cx, s).to_vec();
        let only_closing = exprs_in_block(cx.model, &rest).into_iter().all(|e| {
            let ExprKind::Await(inner) = cx.expr(e).kind else {
                return true;
            };
            cx.call(cx.model.strip(inner))
                .is_some_and(|c| crate::python::common::is_teardown_name(&c.name))
        });
        if !awaits_in_block(cx.model, &rest).is_empty() && !only_closing {
            return false;
        }
        match cx.tree.stmt_parent(s) {
            Parent::Function(_) => return true,
            Parent::Stmt(p) => {
                if matches!(
                    cx.stmt(p).kind,
                    StmtKind::While { .. } | StmtKind::For { .. } | StmtKind::Loop { .. }
                ) {
                    return false;
                }
                s = p;
            }
            _ => return false,
        }
    }
}

/// A coroutine whose name says it closes or tears down its object.
fn tears_down(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["close", "shutdown", "teardown", "cleanup", "finish"]
        .iter()
        .any(|w| name.contains(w))
}

/// The idiom `task.cancel()` then `try: await task except CancelledError:
/// pass` (or the `cancel()` as the `try`'s first step): the caught
/// cancellation is the cancelled task's own. Every await of the `try` must
/// be of a task the function cancelled before its first await (`stop()`
/// cancelling and reaping two tasks in one `try`).
fn reaps_cancelled_task(cx: &FileCx, fid: FuncId, t: StmtId, body: &Block) -> bool {
    let try_start = cx.stmt(t).span.start;
    // (`async with`/`async for` suspend too: then this is no reaping,
    // unless it only puts a deadline on the reaping.)
    let Some(awaited) = reaping_awaits(cx, body) else {
        return false;
    };
    // The cancel comes before the first await: before the `try`, or as
    // its first step (`try: task.cancel(); await task`).
    let first_await = awaited
        .iter()
        .map(|&e| cx.expr(e).span.start)
        .min()
        .unwrap_or(try_start);
    let cancels = |g: FuncId, awaited: &str, before: bool| {
        crate::python::common::cancels_of(cx, g, awaited)
            .any(|c| !before || cx.expr(c).span.start < first_await)
    };
    // `self.task = create_task(..)` earlier in this function, and another
    // method of the class stops it (`stop()`: `self.task.cancel()`): the
    // `CancelledError` is the child's result, and the coroutine ends there.
    let own_child_stopped_elsewhere = |awaited: &str| {
        let class = cx.func(fid).class.as_ref();
        awaited.starts_with("self.")
            && class.is_some()
            && function_ends_after(cx, t)
            && cx.body_stmts(fid).iter().any(|&s| {
                cx.stmt(s).span.start < try_start
                    && matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(v), .. }
                        if targets.iter().any(|&x| cx.model.dotted(x).as_deref() == Some(awaited))
                            && cx.call(*v).is_some_and(is_task_root))
            })
            && cx.model.function_ids().any(|g| {
                g != fid && cx.func(g).class.as_ref() == class && cancels(g, awaited, false)
            })
    };
    // `fut = ensure_future(..)`, `self.tasks.add(fut)` earlier in this
    // function, and another method of the class cancels every task of that
    // collection (`for t in self.tasks: t.cancel()`).
    let registered_child_stopped_elsewhere = |awaited: &str| {
        let class = cx.func(fid).class.as_ref();
        if awaited.contains('.') || class.is_none() || !function_ends_after(cx, t) {
            return false;
        }
        let before = |e: ExprId| cx.expr(e).span.start < try_start;
        let made_here = cx.body_stmts(fid).iter().any(|&s| {
            matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(v), .. }
                if before(*v)
                    && targets.iter().any(|&x| cx.model.name_of(x) == Some(awaited))
                    && cx.call(*v).is_some_and(is_task_root))
        });
        let collections: Vec<&str> = cx
            .body_calls(fid)
            .filter(|&e| before(e))
            .filter_map(|e| {
                let c = cx.call(e)?;
                let kept = matches!(c.name.as_str(), "add" | "append")
                    && c.positional(0).and_then(|a| cx.model.name_of(a)) == Some(awaited);
                let ExprKind::Attr { obj, name, .. } = &cx.expr(c.receiver?).kind else {
                    return None;
                };
                (kept && matches!(cx.model.name_of(*obj), Some("self" | "cls")))
                    .then_some(name.as_str())
            })
            .collect();
        made_here
            && class.is_some_and(|class| {
                collections.iter().any(|attr| {
                    crate::python::common::class_cancels_every_task_of(cx, class, fid, attr)
                })
            })
    };
    // A teardown coroutine (`close_connection`) awaiting, once, a task of
    // its object that another method cancels to say "stop now"
    // (`fail_connection`: `self.transfer_task.cancel()`): the
    // `CancelledError` is that task's result, and the teardown going on
    // after it is the point.
    let sibling_signal_in_teardown = |awaited: &str| {
        let f = cx.func(fid);
        awaited
            .strip_prefix("self.")
            .is_some_and(|attr| !attr.contains('.'))
            && f.class.is_some()
            && crate::python::common::enclosing_loop(cx, t).is_none()
            && (tears_down(&f.name) || function_ends_after(cx, t))
            && cx
                .model
                .function_ids()
                .any(|g| g != fid && cx.func(g).class == f.class && cancels(g, awaited, false))
    };
    // `for t in tasks: t.cancel()`, then `for coro in
    // asyncio.as_completed(tasks): try: await coro`: each awaited one is a
    // member of the collection this function cancelled.
    // The loop around the `try` that walks a collection with `awaited` as
    // its variable, and what it walks.
    let walked_by = |awaited: &str| -> Option<(StmtId, ExprId)> {
        let l = crate::python::common::enclosing_loop(cx, t)?;
        match &cx.stmt(l).kind {
            StmtKind::For {
                target: Some(var),
                iter,
                ..
            } if cx.model.name_of(*var) == Some(awaited) => Some((l, *iter)),
            _ => None,
        }
    };
    let member_of_cancelled = |awaited: &str| {
        let Some((l, iter)) = walked_by(awaited) else {
            return false;
        };
        let iter = cx
            .call(iter)
            .filter(|c| c.target.as_deref() == Some("asyncio.as_completed"))
            .and_then(|c| c.positional(0))
            .unwrap_or(iter);
        let Some(tasks) = cx.model.dotted(iter) else {
            return false;
        };
        let loop_start = cx.stmt(l).span.start;
        cx.body_stmts(fid).iter().any(|&s| {
            cx.stmt(s).span.start < loop_start
                && matches!(&cx.stmt(s).kind, StmtKind::For { target: Some(v), iter, body, .. }
                if cx.model.dotted(*iter).as_deref() == Some(tasks.as_str())
                    && cx.model.name_of(*v).is_some_and(|v| {
                        unsnarl_model::walk::calls_in_block(cx.model, body)
                            .into_iter()
                            .filter_map(|e| cx.call(e))
                            .any(|c| {
                                c.name == "cancel"
                                    && c.receiver.and_then(|r| cx.model.name_of(r)) == Some(v)
                            })
                    }))
        })
    };
    // `done, pending = await asyncio.wait(tasks)`, then `for t in done:
    // try: await t`: the task has finished, so the await does not suspend
    // and the `CancelledError` is that task's result.
    let member_of_done = |awaited: &str| {
        walked_by(awaited).is_some_and(|(_, iter)| {
            cx.model
                .name_of(iter)
                .is_some_and(|done| crate::python::common::is_done_set_of_wait(cx, fid, done))
        })
    };
    // `if other in done: try: await other`: checked to be in the done set.
    let checked_done = |awaited: &str| {
        cx.tree.stmt_ancestors(t).any(|a| {
            matches!(&cx.stmt(a).kind, StmtKind::If { cond, then, .. }
            if crate::util::block_contains(cx, then, t)
                && matches!(&cx.expr(*cond).kind, ExprKind::Binary { op: BinOp::In, left, right }
                    if cx.model.name_of(*left) == Some(awaited)
                        && cx.model.name_of(*right).is_some_and(|d| {
                            crate::python::common::is_done_set_of_wait(cx, fid, d)
                        })))
        })
    };
    let cancelled_before = |awaited: &str| {
        cancels(fid, awaited, true)
            || member_of_done(awaited)
            || checked_done(awaited)
            || member_of_cancelled(awaited)
            || own_child_stopped_elsewhere(awaited)
            || registered_child_stopped_elsewhere(awaited)
            || sibling_signal_in_teardown(awaited)
    };
    !awaited.is_empty()
        && awaited.iter().all(|&inner| {
            // `await asyncio.shield(task)`, `await asyncio.wait_for(task,
            // 1.0)` and both together still wait for the cancelled task.
            let mut inner = inner;
            for _ in 0..2 {
                let Some(arg) = cx
                    .call(cx.model.strip(inner))
                    .filter(|c| {
                        matches!(
                            c.target.as_deref(),
                            Some("asyncio.shield" | "asyncio.wait_for")
                        )
                    })
                    .and_then(|c| c.positional(0))
                else {
                    break;
                };
                inner = arg;
            }
            cx.model
                .keyed_place(inner)
                .is_some_and(|name| cancelled_before(&name))
        })
}

/// What a `try` body awaits, when awaits are all it suspends on; through
/// one `async with` that only sets a deadline (`async with
/// asyncio.timeout(t): await task`), whose entry does not wait.
fn reaping_awaits(cx: &FileCx, body: &Block) -> Option<Vec<ExprId>> {
    if let Some(awaited) = crate::util::awaited_values(cx.model, body) {
        return Some(awaited);
    }
    let [only] = body.as_slice() else {
        return None;
    };
    let StmtKind::With {
        items,
        is_async: true,
        body: inner,
    } = &cx.stmt(*only).kind
    else {
        return None;
    };
    let deadline_only = items.iter().all(|it| {
        cx.call(it.ctx)
            .is_some_and(|c| c.name.ends_with("timeout") || c.name == "timeout_at")
    });
    if deadline_only {
        crate::util::awaited_values(cx.model, inner)
    } else {
        None
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import asyncio

async def run(server):
    async def dispatch_loop():
        while True:
            try:
                await server.dispatch_one()
            except asyncio.CancelledError:  # expect
                break
        # Swallowed, then more waiting: the gather's cancellation cannot
        # finish while this child keeps going.
        await server.drain_forever()

    await asyncio.gather(server.serve(), dispatch_loop(), return_exceptions=True)
"#,
        r#"
import logging


class Session:
    async def close(self):
        error = None
        for res in (self._page, self._browser):
            try:
                await res.close()
            except BaseException as exc:  # expect
                error = merge_errors(error, exc)
        if error is not None:
            logging.warning("close failed: %s", error)
"#,
        r#"
import asyncio

class Playback:
    async def wait(self):
        while self._task is not None:
            task = self._task
            try:
                # Not shielded: cancelling the waiter cancels the task too.
                await task
            except asyncio.CancelledError:  # expect
                if not task.cancelled():
                    raise
                if self._task is task:
                    break
        return self.stats
"#,
        r#"
import asyncio


class RemoteUI:
    def start(self):
        self._acme_task = asyncio.create_task(self._certificate_handler())

    def stop(self):
        if self._acme_task is not None:
            self._acme_task.cancel()
            self._acme_task = None

    async def _certificate_handler(self):
        while True:
            try:
                await asyncio.sleep(3600)
                await self._renew()
            except asyncio.CancelledError:  # expect
                break
        await self.wait_for_new_config()
"#,
        r#"
import logging

log = logging.getLogger(__name__)

async def run_callbacks(callbacks):
    for callback in callbacks:
        try:
            await callback()
        except BaseException as exc:  # expect
            kind, text = type(exc), str(exc)
            log.warning("callback failed: %s %s", kind, text)
"#,
        r#"
import asyncio

async def poll_forever(client):
    while True:
        try:
            await client.poll()
        except BaseException:  # expect
            log("oops")
            return None
"#,
        r#"
import asyncio

async def f():
    try:
        await asyncio.sleep(10)
    except asyncio.CancelledError:  # expect
        pass

async def g():
    try:
        await step()
    except:  # expect
        cleanup()

async def stop_and_flush(task, writer):
    task.cancel()
    try:
        await task
        await writer.drain()
    except asyncio.CancelledError:  # expect
        pass
"#,
        r#"
from asyncio import CancelledError

async def h():
    try:
        await step()
    except (ValueError, CancelledError) as e:  # expect
        if isinstance(e, ValueError):
            raise
"#,
        r#"
import asyncio
import logging
import sys

class Worker:
    def _report(self, error):
        logging.warning("step failed: %s", error)

    async def step_once(self):
        try:
            await self.step()
        except BaseException as exc:  # expect
            self._report(exc)

    async def step_quietly(self):
        try:
            await self.step()
        except BaseException:  # expect
            logging.warning("failed", exc_info=sys.exc_info())
"#,
        r#"
import trio

async def finalize(agen):
    with trio.CancelScope(shield=True):
        await agen.aclose()
    try:
        await agen.asend(None)
    except BaseException:  # expect
        log_exception()
"#,
        r#"
import asyncio

class Feed:
    async def pump(self):
        try:
            await self.source.read()
        except asyncio.CancelledError:  # expect
            self.log("pump stopped")

    async def run_with_deadline(self):
        task = asyncio.create_task(self.pump())
        await asyncio.wait_for(task, timeout=5)

async def drain(conn):
    try:
        await conn.drain()
    except asyncio.CancelledError:  # expect
        pass

async def handler(conn):
    asyncio.create_task(drain(conn))
    await drain(conn)
"#,
        r#"
import asyncio

class Session:
    def start(self):
        self.task = self.loop.create_task(self.run_asgi())

    async def run_asgi(self):
        try:
            await self.app(self.scope)
        except BaseException:  # expect
            self.log("application failed")
            await self.handshake_done.wait()
"#,
        r#"
import asyncio


async def describe(job):
    try:
        return await job.run()
    except asyncio.CancelledError as e:  # expect
        return str(e)
"#,
        r#"
import asyncio

class EventsService:
    def __init__(self, consumer, handler):
        self.consumer = consumer
        self.handler = handler
        self.consumer_task = None

    async def start(self):
        self.consumer_task = asyncio.create_task(self.consumer.run(self.handler))
        try:
            await self.consumer_task
        except asyncio.CancelledError:  # expect
            pass
        await self.consumer.flush()

    async def stop(self):
        self.consumer_task.cancel()
"#,
        r#"
import asyncio

class Link:
    def __init__(self, reader, transport):
        self.reader = reader
        self.transport = transport

    async def close_link(self):
        try:
            try:
                await self.reader.read(1)
            except asyncio.CancelledError:  # expect
                pass
            self.transport.write_eof()
            await asyncio.wait_for(self.transport.drained(), 10)
        finally:
            self.transport.close()
"#,
        r#"
import trio
from mylib.errors import log_group, ManyErrors

class Client:
    async def __aexit__(self, et, ev, tb):
        try:
            await self.cm.__aexit__(et, ev, tb)
        except BaseException as exc:  # expect
            try:
                log_group(exc)
            except ManyErrors:
                raise AssertionError("many errors") from exc
"#,
        r#"
import asyncio

async def call_in_thread(loop, fn, arg):
    inner = loop.run_in_executor(None, fn, arg)
    while True:
        try:
            return await asyncio.shield(inner)
        except asyncio.CancelledError:  # expect
            continue
"#,
        r#"
class Session:
    async def __aexit__(self, typ, value, tb):
        try:
            await self.conn.close()
        except BaseException:  # expect
            return False
"#,
        r#"
import asyncio
import contextlib
import logging

log = logging.getLogger(__name__)

@contextlib.asynccontextmanager
async def batching(sink, every):
    buf = []

    async def tick():
        while True:
            try:
                await asyncio.sleep(every)
                await sink.write(list(buf))
                buf.clear()
            except asyncio.CancelledError:  # expect
                log.warning("flush cancelled; continuing")

    ticker = asyncio.create_task(tick())
    try:
        yield buf.append
    finally:
        ticker.cancel()
        await asyncio.wait([ticker])
"#,
        r#"
import asyncio
import logging

log = logging.getLogger(__name__)

async def start_all(plugins, core) -> None:
    started = []
    try:
        for p in plugins:
            await p.start()
            started.append(p)
        await core.start()
    except Exception:
        for p in reversed(started):
            try:
                await p.stop()
            except (Exception, asyncio.CancelledError):  # expect
                log.exception("rollback of %s failed", p)
                return
        raise
"#,
        r#"
import logging

log = logging.getLogger(__name__)


async def run(worker, on_fatal_error):
    exception = None
    try:
        await worker.run()
    except Exception as e:
        exception = e
    if exception:
        try:
            await on_fatal_error(exception)
        except:  # expect
            log.warning("fatal error handler failed")
            exception = None
    await worker.shutdown()
    if exception:
        raise exception
"#,
        r#"
import trio

class Stream:
    async def aclose(self):
        try:
            await self.send_close()
        except BaseException:  # expect
            with trio.CancelScope(shield=True):
                await trio.aclose_forcefully(self.transport)
"#,
        r#"
import asyncio

class Processor:
    def __init__(self):
        self.closed = False

    async def run(self):
        while True:
            try:
                await self.step()
            except asyncio.CancelledError:  # expect
                if not self.closed:
                    raise

    async def step(self):
        await asyncio.sleep(1)
"#,
        r#"
import asyncio

async def keepalive(conn):
    try:
        while True:
            if not await conn.ping():
                break
            await asyncio.sleep(5)
    finally:
        try:
            await asyncio.shield(conn.say_goodbye())
        except asyncio.CancelledError:  # expect
            pass
"#,
        r#"
class IterContext:
    async def __aexit__(self, typ, value, tb):
        try:
            await self.gen.athrow(value)
        except StopAsyncIteration as exc:
            return exc is not value
        except BaseException as exc:  # expect
            if exc is not value:
                return False
            raise
"#,
        r#"
import asyncio

class Job:
    # The deadline covers another wait than the cancelled task's: the
    # caught cancellation can be this coroutine's own.
    async def close(self, timeout):
        self._task.cancel()
        try:
            async with asyncio.timeout(timeout):
                await self._scheduler.flush()
        except asyncio.CancelledError:  # expect
            pass
"#,
        r#"
import asyncio

class PubSubManager:
    async def initialize(self):
        # Awaited in place: the caller's cancellation is swallowed here.
        await self._listen()

    async def _listen(self):
        while True:
            try:
                message = await self.channel.get_message()
            except asyncio.CancelledError:  # expect
                break
            await self.handle(message)
"#,
        r#"
import asyncio

async def run_tools(run, settle):
    try:
        await run.execute()
    except asyncio.CancelledError:  # expect
        try:
            await settle()
        except BaseException:
            pass
        if run.completed:
            return run.results
        raise
"#,
        r#"
import asyncio


class RealtimeError(Exception):
    pass


class Session:
    async def send_audio(self, data):
        try:
            await self._send_frame(data)
        except BaseException as e:  # expect
            if self._can_reconnect and not self._closing:
                return
            raise
"#,
        r#"
import asyncio


class Pipeline:
    async def run(self, frames):
        try:
            await self._process(frames)
        except asyncio.CancelledError:
            await self._cancel()
            raise

    async def stop(self):
        await self._cancel()

    async def _cancel(self):
        self._stop_task = asyncio.create_task(self._teardown())
        await self._await_cleanup(self._stop_task)

    async def _await_cleanup(self, task):
        while not task.done():
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:  # expect
                continue
"#,
        r#"
import asyncio

class Transport:
    async def close(self):
        if self.sniffing_task:
            try:
                await self.sniffing_task
                self.sniffing_task.cancel()
            except asyncio.CancelledError:  # expect
                pass
            self.sniffing_task = None
        for connection in self.connections:
            await connection.close()
"#,
        r#"
class QuietExit:
    async def __aexit__(self, typ, value, tb):
        try:
            await self.gen.athrow(value)
        except BaseException as err:  # expect
            if err is not value:
                raise
        return True
"#,
        r#"
# The tasks cancelled are not the ones reaped.
import asyncio


class Server:
    async def serve(self):
        try:
            await self._stopping.wait()
        finally:
            tasks = self._tasks
            self._tasks = []
            for task in self._helpers:
                task.cancel()
            for coro in asyncio.as_completed(tasks):
                try:
                    await coro
                except asyncio.CancelledError:  # expect
                    pass
"#,
        r#"
# The flag is not set by the code that cancels.
import asyncio


class Console:
    def interrupt(self, task):
        task.cancel()

    def on_key(self):
        self._interrupted = True

    async def repl(self):
        while True:
            try:
                line = await self.read_line()
                await self.run(line)
            except asyncio.CancelledError:  # expect
                if not self._interrupted:
                    raise
                self._interrupted = False
                await self.write("KeyboardInterrupt\n")
"#,
        r#"
# Another caller waits on the task: it sees a normal return.
import asyncio


class Reader:
    async def run_loop(self):
        while True:
            try:
                await self.run_once()
            except asyncio.CancelledError:  # expect
                break
            await asyncio.sleep(1)

    async def __aenter__(self):
        self._runner = asyncio.ensure_future(
            self.run_loop() if self.looping else self.run_once())
        return self

    async def __aexit__(self, *exc):
        self._runner.cancel()

    async def join(self):
        return await self._runner
"#,
        r#"
import asyncio


class Lock:
    async def drain(self, device):
        try:
            async for record in device.records():
                self.deliver(record)
        except BaseException as err:  # expect
            # BaseException is listed: the cancellation is kept here too.
            if not isinstance(err, (ConnectionError, BaseException)):
                raise
            self.note_failure(err)
"#,
        r#"
import asyncio
import logging

# The flag is only logged: the cancellation never comes back.
async def create_user(adapter, user):
    task = asyncio.create_task(adapter.commit(user))
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:  # expect
            cancelled = True
    if cancelled:
        logging.info("cancelled during commit")
    return task.result()
"#,
        r#"
import asyncio


class Crawler:
    async def run(self, timeout):
        self.worker_tasks = [asyncio.create_task(self.worker()) for _ in range(4)]
        # A timeout around the workers: it cancels them and expects to see it.
        await asyncio.wait_for(asyncio.gather(*self.worker_tasks), timeout)

    async def worker(self):
        while True:
            try:
                url = await self.queue.get()
            except asyncio.CancelledError:  # expect
                break
            await self.fetch(url)
"#,
        r#"
import asyncio


async def await_job(pool, job):
    wrapped = asyncio.wrap_future(job.future)
    try:
        return await asyncio.shield(wrapped)
    except asyncio.CancelledError as cancellation:  # expect
        pool.cancel(job)
        while not wrapped.done():
            try:
                await asyncio.shield(wrapped)
            except asyncio.CancelledError:  # expect
                pass
            except BaseException:
                break
        log_cancelled(job, cancellation)
        return None
"#,
        r#"
import asyncio


class Relay:
    async def start(self, host):
        self._server = await asyncio.start_server(self._accept, host, 0)

    async def _accept(self, reader, writer):
        await self._handle(reader, writer)
        await self.log_closed(writer)

    async def _handle(self, reader, writer):
        try:
            await self.serve(reader, writer)
        except asyncio.CancelledError:  # expect
            pass
        finally:
            writer.close()
"#,
        r#"
import asyncio
import logging

logger = logging.getLogger(__name__)


class Scorer:
    def __init__(self):
        self.queue = asyncio.Queue(maxsize=100)
        self._worker_task = None

    async def start(self):
        self._worker_task = asyncio.create_task(self._worker())

    async def stop(self):
        if self._worker_task:
            try:
                await asyncio.wait_for(self._worker_task, timeout=5.0)
            except asyncio.TimeoutError:
                logger.warning("worker still busy")
        self._worker_task = None

    async def _worker(self):
        while True:
            try:
                item = await self.queue.get()
                await self.score(item)
            except asyncio.CancelledError:  # expect
                logger.info("worker cancelled")
                break

    async def score(self, item):
        await asyncio.sleep(0)
"#,
    ],
    pass: &[
        r#"
class Session:
    async def close(self):
        error = None
        for res in (self._page, self._browser):
            if res is None:
                continue
            try:
                await res.close()
            except BaseException as exc:
                # Kept, and raised once the other resources are closed.
                error = merge_errors(error, exc)
        if error is not None:
            raise error
"#,
        r#"
import asyncio


async def stop_flag_checker(stop_flag):
    try:
        await stop_flag.wait()
    except asyncio.CancelledError:
        pass


async def run(stop_flag, work):
    # Cancelling `run` cancels the gather, which raises `CancelledError`
    # itself once its children end, whatever they return.
    await asyncio.gather(work(), stop_flag_checker(stop_flag))
"#,
        r#"
import asyncio

async def run(bots, server, bus):
    async def dispatch_loop():
        while True:
            try:
                msg = await bus.next_outbound()
                await bots.send(msg)
            except asyncio.CancelledError:
                break
            except Exception:
                continue

    await asyncio.gather(bots.start_all(), server.serve(), dispatch_loop(), return_exceptions=True)
"#,
        r#"
import asyncio

class Playback:
    async def wait(self):
        while self._task is not None:
            task = self._task
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:
                if not task.cancelled():
                    raise
                if self._task is task:
                    break
                continue
            if self._task is task:
                break
        return self.stats
"#,
        r#"
import asyncio


class Crawler:
    async def run(self, urls):
        self.worker_tasks = [asyncio.create_task(self.worker()) for _ in range(4)]
        await self.queue.join()
        for task in self.worker_tasks:
            task.cancel()
        await asyncio.gather(*self.worker_tasks, return_exceptions=True)

    async def worker(self):
        while True:
            try:
                url = await self.queue.get()
            except asyncio.CancelledError:
                # The task's own stop: its owner cancels and reaps it.
                break
            await self.fetch(url)
            self.queue.task_done()


class Client:
    def subscribe(self, path, callback):
        self._subscription_tasks[path] = asyncio.create_task(self._handler(path, callback))

    async def _handler(self, path, callback):
        queue = self._queues[path]
        try:
            while True:
                callback(await queue.get())
        except asyncio.CancelledError:
            pass
"#,
        r#"
import asyncio


class Watchdog:
    async def stop(self, key):
        if key in self._tasks:
            self._tasks[key].cancel()
            try:
                await self._tasks[key]
            except asyncio.CancelledError:
                pass
            finally:
                self._tasks.pop(key, None)
"#,
        r#"
import asyncio

# The other task finished too: awaiting it only collects its outcome.
async def first_value(t_val, t_err):
    done, _ = await asyncio.wait({t_val, t_err}, return_when=asyncio.FIRST_COMPLETED)
    winner = t_val if t_val in done else t_err
    other = t_err if winner is t_val else t_val
    if other in done:
        try:
            await other
        except BaseException:
            pass
    return winner.result()
"#,
        r#"
import asyncio

# Reaping finished commands: a child that was cancelled is skipped, and the
# await of a finished task does not suspend, so no cancel of ours is caught.
async def run_all(tasks):
    while tasks:
        done, _pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for t in done:
            tasks.remove(t)
            try:
                code = await t
            except asyncio.CancelledError:
                continue
            if code != 0:
                return code
    return 0
"#,
        r#"
import asyncio

# Only the error types the user listed are answered and swallowed; anything
# else, cancellation included, reaches the final `raise`.
def add_operation(operation):
    listed = {e.origin: e for e in operation.catch}

    async def handler(request):
        try:
            await operation.handle(request)
        except BaseException as e:
            for err in listed:
                if isinstance(e, err):
                    await request.respond_error(listed[err].code)
                    return
            raise

    return handler
"#,
        r#"
import asyncio

class SerialDriver:
    async def _run_serial(self):
        while self._pending:
            transfer = self._pending.popleft()
            try:
                await self._run_one(transfer)
            except asyncio.CancelledError:
                if self._closing or not transfer.withdrawn:
                    raise
                # A withdrawn transfer's targeted cancel: claimed on purpose
                # (`uncancel()` balances it), and the worker moves on.
                asyncio.current_task().uncancel()
"#,
        r#"
import asyncio

# The commit finishes under the shield; the cancellation is raised after.
async def create_user(adapter, user):
    task = asyncio.create_task(adapter.commit(user))
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled = True
    result = task.result()
    if cancelled:
        raise asyncio.CancelledError
    return result
"#,
        r#"
from concurrent.futures import CancelledError

# A future's own cancellation error, an ordinary exception since Python 3.8:
# the task's cancellation is not caught here.
async def poll(bus):
    try:
        await bus.scan_one()
    except CancelledError:
        return
"#,
        r#"
import asyncio

class Transport:
    @staticmethod
    def _really_cancelled():
        task = asyncio.current_task()
        return task is not None and task.cancelling() > 0

    async def publish(self, exchange, message):
        try:
            await exchange.publish(message)
        except asyncio.CancelledError as exc:
            if self._really_cancelled():
                raise
            # The client library cancels internally when its connection dies.
            self._fail_pending(exc)
"#,
        r#"
import asyncio


class Lock:
    async def drain(self, device):
        try:
            async for record in device.records():
                self.deliver(record)
        except BaseException as err:
            self.pending = True
            if not isinstance(err, (ConnectionError, TimeoutError)):
                raise
            self.note_failure(err)
"#,
        r#"
import asyncio


class RemoteUI:
    def start(self):
        self._acme_task = asyncio.create_task(self._certificate_handler())

    def stop(self):
        if self._acme_task is not None:
            self._acme_task.cancel()
            self._acme_task = None

    async def _certificate_handler(self):
        while True:
            try:
                await asyncio.sleep(3600)
                await self._renew()
            except asyncio.CancelledError:
                break
        await self.close_backend()
"#,
        r#"
import asyncio

class PubSubManager:
    def initialize(self):
        self.thread = self.server.start_background_task(self._listen)

    async def _listen(self):
        while True:
            try:
                message = await self.channel.get_message()
            except asyncio.CancelledError:
                break
            await self.handle(message)
"#,
        r#"
import asyncio

class Job:
    async def close(self, timeout):
        self._task.cancel()
        scheduler = self._scheduler
        try:
            async with asyncio.timeout(timeout):
                await self._task
        except asyncio.CancelledError:
            pass
        scheduler.forget(self)

    async def on_stop(self):
        if self._drainer is not None and not self._drainer.done():
            self._drainer.cancel()
            while True:
                try:
                    await asyncio.wait_for(self._drainer, timeout=1.0)
                except asyncio.CancelledError:
                    break
                except asyncio.TimeoutError:
                    self.log.warning("still draining")


async def stop(task, attempts, each):
    # Cancelled again on a timer until it ends; the shield keeps the
    # timeout from cancelling it a second time.
    for _ in range(attempts):
        if task.done():
            break
        task.cancel()
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=each)
            break
        except asyncio.TimeoutError:
            continue
        except asyncio.CancelledError:
            break
"#,
        r#"
class IterContext:
    async def __aexit__(self, typ, value, tb):
        try:
            await self.gen.athrow(value)
        except StopAsyncIteration as exc:
            return exc is not value
        except BaseException as exc:
            if exc is value:
                return False
            raise
"#,
        r#"
import asyncio

async def keepalive(conn):
    try:
        while True:
            await conn.ping()
            await asyncio.sleep(5)
    finally:
        try:
            await asyncio.shield(conn.say_goodbye())
        except asyncio.CancelledError:
            pass
"#,
        r#"
async def run_callbacks(callbacks):
    pending = None
    for callback in callbacks:
        try:
            await callback()
        except BaseException as exc:
            kind, pending = type(exc), exc
    if pending is not None:
        raise pending
"#,
        r#"
import asyncio
import logging

class Processor:
    def __init__(self):
        self.closed = False

    async def process_messages(self):
        while not self.closed:
            try:
                await self.process_message()
            except asyncio.CancelledError:
                if not self.closed:
                    raise
            except Exception:
                logging.exception("step failed")

    async def process_message(self):
        await asyncio.sleep(1)

    async def close(self, task):
        self.closed = True
        await asyncio.sleep(0)
        task.cancel()
"#,
        r#"
import trio

class Stream:
    async def aclose(self):
        try:
            await self.send_close()
        except BaseException:
            await trio.aclose_forcefully(self.transport)
"#,
        r#"
import asyncio
import logging

log = logging.getLogger(__name__)


async def run(worker, on_fatal_error):
    exception = None
    try:
        await worker.run()
    except Exception as e:
        exception = e
    if exception:
        try:
            await on_fatal_error(exception)
        except:
            log.warning("fatal error handler failed")
    await worker.shutdown()
    # Every path after the handler ends here: the task still fails.
    if exception:
        raise exception


async def serve(worker, on_fatal_error):
    exception = None
    try:
        exception = await worker.wait_failed()
        if exception:
            try:
                await on_fatal_error(exception)
            except:
                log.warning("fatal error handler failed")
    except asyncio.CancelledError as cancelled:
        exception = cancelled
    await worker.shutdown()
    if exception:
        raise exception
"#,
        r#"
import asyncio

class EventsService:
    def __init__(self, consumer, handler):
        self.consumer = consumer
        self.handler = handler
        self.consumer_task = None

    async def start(self):
        self.consumer_task = asyncio.create_task(self.consumer.run(self.handler))
        try:
            await self.consumer_task
        except asyncio.CancelledError:
            pass

    async def stop(self):
        self.consumer_task.cancel()
"#,
        r#"
import asyncio


class Daemon:
    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.running = True
        self.servers = []

    def run(self):
        self.loop.run_until_complete(self._main())

    async def _main(self):
        try:
            while self.running:
                await asyncio.sleep(1.0)
        except asyncio.CancelledError:
            pass
        await self._stop()

    async def _stop(self):
        for s in self.servers:
            s.close()
"#,
        r#"
class Value:
    def __init__(self, v):
        self.v = v

    def get(self):
        return self.v


class Error:
    def __init__(self, e):
        self.e = e

    def get(self):
        raise self.e


async def outcome(coro):
    try:
        return Value(await coro)
    except BaseException as e:
        return Error(e)
"#,
        r#"
import anyio

async def heartbeat(send):
    try:
        while True:
            await send(b"ping")
            await anyio.sleep(5)
    except anyio.get_cancelled_exc_class():
        pass

async def session(send):
    async with anyio.create_task_group() as tg:
        tg.start_soon(heartbeat, send)
        await serve(send)
        tg.cancel_scope.cancel()
"#,
        r#"
import asyncio
import wire

class HttpProtocol:
    def connection_made(self, transport):
        self._task = self.loop.create_task(self.connection_task())

    def connection_lost(self, exc):
        if self._task:
            self._task.cancel()

    async def connection_task(self):
        try:
            await self.serve()
        except asyncio.CancelledError:
            pass
        finally:
            self.close()

class TelnetServer:
    def _accept(self, listen_socket):
        async def run():
            try:
                await self.interact()
            except BaseException as e:
                print("Got %s" % type(e).__name__, e)
            finally:
                self._application_tasks.remove(task)

        task = asyncio.get_running_loop().create_task(run())
        self._application_tasks.append(task)

class App:
    def add_task(self, coro, name=None):
        task = self.loop.create_task(coro, name=name)
        self.tasks[name] = task
        return task

    async def _serve(self):
        try:
            await self.server.serve_forever()
        except asyncio.CancelledError:
            await self.server.close()

    def start(self):
        self.add_task(self._serve(), name="serve")

class Bridge:
    def run(self, make_coro):
        done = concurrent.futures.Future()

        async def runner():
            try:
                result = await make_coro()
            except BaseException:
                traceback.print_exc()
                result = None
            done.set_result(result)

        self.loop.call_soon_threadsafe(self.loop.create_task, runner())
        return done.result()

class Fetcher:
    def start_pending_task(self, coro):
        task = asyncio.ensure_future(coro)
        self._pending.add(task)
        return task

    async def _update_positions(self, partitions):
        for tp in partitions:
            try:
                await self._reset_offset(tp)
            except asyncio.CancelledError:
                return False
        return True

    def refresh(self, partitions):
        self.start_pending_task(self._update_positions(partitions))

class Poller:
    def start(self):
        self._task = asyncio.create_task(self._poll())

    async def stop(self):
        self._task.cancel()
        await self._task

    async def _poll(self):
        try:
            while True:
                await self._fetch()
        except asyncio.CancelledError:
            pass

class Link:
    def request_interrupt(self, waiter):
        self._jobs.add(self._loop.create_task(self._interrupt(waiter)))

    async def _interrupt(self, waiter):
        try:
            await wire._interrupt(self._addr)
        except asyncio.CancelledError:
            pass

@worker_app.command()
async def start(name: str):
    try:
        await run_worker(name)
    except asyncio.CancelledError:
        print(f"Worker {name} stopped!")

async def main():
    try:
        await serve_forever()
    except asyncio.CancelledError:
        print("bye")

if __name__ == "__main__":
    asyncio.run(main())
"#,
        r#"
import trio

async def finalize(agen):
    try:
        with trio.CancelScope(shield=True) as scope:
            scope.cancel()
            await agen.aclose()
    except BaseException:
        log_exception("error while closing async generator")

async def flush(conn):
    try:
        with anyio.move_on_after(5, shield=True):
            await conn.flush()
            await conn.close()
    except BaseException:
        pass
"#,
        r#"
import asyncio

async def f():
    try:
        await poll()
    except asyncio.CancelledError:
        await release_lease()
        raise

async def g():
    try:
        await poll()
    except Exception:
        log("error")

async def h():
    try:
        await poll()
    except BaseException as e:
        if isinstance(e, asyncio.CancelledError):
            raise
        log(e)
"#,
        r#"
import asyncio
import sys

async def stop(task):
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass

class Recorder:
    async def stop(self):
        self.consumer_task.cancel()
        if self.metrics_task:
            self.metrics_task.cancel()
        try:
            await self.consumer_task
            if self.metrics_task:
                await self.metrics_task
        except asyncio.CancelledError:
            pass
        finally:
            self.consumer_task = None

async def stop_distributor(task):
    task.cancel()
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        pass

async def wait_released(fut):
    try:
        await fut
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise

async def run_coro(coro, future):
    try:
        retval = await coro
    except asyncio.CancelledError:
        future.cancel()
        raise
    except BaseException as exc:
        future.set_exception(exc)
        if not isinstance(exc, Exception):
            raise

class Sock:
    def _convert_error(self, exc):
        raise OSError(str(exc)) from exc

    async def recv(self):
        try:
            return await self._sock.recv(10)
        except BaseException as exc:
            self._convert_error(exc)

async def cleanup(exits):
    errors = []
    for it in exits:
        try:
            await it.close()
        except (Exception, asyncio.CancelledError) as exc:
            errors.append(exc)
    if errors:
        raise errors[0]

async def exit_all(callbacks):
    pending = None
    for cb in callbacks:
        try:
            await cb()
        except:
            pending = sys.exc_info()
    if pending is not None:
        raise pending[1]

def sync_code():
    try:
        work()
    except BaseException:
        pass
"#,
        r#"
import asyncio
import sys

class Nursery:
    def __init__(self):
        self._errors = []

    def _record(self, error):
        self._errors.append(error)

    async def run_child(self, fn):
        try:
            await fn()
        except BaseException as exc:
            self._record(exc)

    async def close(self):
        if self._errors:
            raise BaseExceptionGroup("child failed", self._errors)

async def attempt(fn, state):
    try:
        result = await fn()
    except BaseException:
        state.set_exception(sys.exc_info())
    else:
        state.set_result(result)
"#,
        r#"
async def no_await_in_body():
    try:
        x = compute()
    except BaseException:
        x = None
    return x
"#,
        r#"
from asyncio import CancelledError, ensure_future


class App:
    def __init__(self):
        self.socket_tasks = set()

    async def handle_socket(self, handler, ws):
        fut = ensure_future(handler(ws))
        self.socket_tasks.add(fut)
        cancelled = False
        try:
            await fut
        except CancelledError:
            cancelled = True
        finally:
            self.socket_tasks.remove(fut)
            if cancelled:
                ws.abort()

    def stop(self):
        for task in self.socket_tasks:
            task.cancel()
"#,
        r#"
# file: kafka/util.py
import asyncio

def create_task(coro):
    return asyncio.get_running_loop().create_task(coro)

# file: kafka/coordinator.py
import asyncio
from .util import create_task

class Coordinator:
    def start_heartbeat(self):
        self._heartbeat = create_task(self._beat())

    async def stop_heartbeat(self):
        self._heartbeat.cancel()
        await self._heartbeat

    async def _beat(self):
        while True:
            try:
                await self.client.heartbeat()
                await asyncio.sleep(3)
            except asyncio.CancelledError:
                break
        log.debug("heartbeat stopped")
"#,
        r#"
import asyncio

class Link:
    def __init__(self, transport):
        self.transport = transport

    def connection_open(self):
        self.pump_task = asyncio.get_running_loop().create_task(self.pump())
        self.closer_task = asyncio.get_running_loop().create_task(self.close_link())

    async def pump(self):
        while True:
            await self.transport.step()

    def abort(self):
        self.pump_task.cancel()

    async def close_link(self):
        try:
            try:
                await self.pump_task
            except asyncio.CancelledError:
                pass
            self.transport.write_eof()
            await asyncio.wait_for(self.transport.drained(), 10)
        finally:
            self.transport.close()
"#,
        r#"
import trio
from mylib.errors import reraise_single_from_group, ManyErrors

class Client:
    async def __aexit__(self, et, ev, tb):
        try:
            await self.cm.__aexit__(et, ev, tb)
        except BaseException as exc:
            # Re-raises the one exception inside the group, Cancelled included.
            try:
                reraise_single_from_group(exc)
            except ManyErrors:
                raise AssertionError("many errors") from exc
"#,
        r#"
import asyncio

async def call_in_thread(loop, fn, arg, timeout):
    # The worker cannot be interrupted: wait for it, then give up.
    inner = loop.run_in_executor(None, fn, arg)
    try:
        return await asyncio.wait_for(asyncio.shield(inner), timeout)
    except (asyncio.CancelledError, TimeoutError):
        while True:
            try:
                await asyncio.shield(inner)
                break
            except asyncio.CancelledError:
                continue
            except Exception:
                break
        raise
"#,
        r#"
class GenContext:
    def __init__(self, gen):
        self.gen = gen

    async def __aexit__(self, typ, value, tb):
        if typ is None:
            try:
                await self.gen.__anext__()
            except StopAsyncIteration:
                return False
            raise RuntimeError("generator didn't stop")
        try:
            await self.gen.athrow(value)
        except StopAsyncIteration as exc:
            return exc is not value
        except BaseException as exc:
            # The exception thrown in came back out: `async with` re-raises it.
            if exc is not value:
                raise
            return False
        raise RuntimeError("generator didn't stop after athrow()")
"#,
        r#"
import asyncio
import contextlib
import logging

log = logging.getLogger(__name__)

@contextlib.asynccontextmanager
async def batching(sink, every):
    buf = []
    closing = False

    async def tick():
        while True:
            try:
                await asyncio.sleep(every)
                await sink.write(list(buf))
                buf.clear()
            except asyncio.CancelledError:
                if closing:
                    return
                # The driver raises CancelledError on a dropped connection.
                log.warning("flush cancelled unexpectedly; continuing")

    ticker = asyncio.create_task(tick())
    try:
        yield buf.append
    finally:
        closing = True
        ticker.cancel()
        await asyncio.wait([ticker])
"#,
        r#"
import asyncio
import logging

log = logging.getLogger(__name__)

async def start_all(plugins, core) -> None:
    started = []
    try:
        for p in plugins:
            await p.start()
            started.append(p)
        await core.start()
    except (Exception, asyncio.CancelledError):
        # Roll back what started, then let the first error go on.
        for p in reversed(started):
            try:
                await p.stop()
            except (Exception, asyncio.CancelledError):
                log.exception("rollback of %s failed", p)
        raise
"#,
        r#"
import asyncio


async def stop_flag_checker(stop_flag):
    try:
        await stop_flag.wait()
    except asyncio.CancelledError:
        pass  # the operator is stopping for another reason


async def run(stop_flag, work):
    tasks = [asyncio.create_task(name="stop-flag checker", coro=stop_flag_checker(stop_flag))]
    try:
        await work()
    finally:
        for t in tasks:
            t.cancel()
"#,
        r#"
import asyncio

class RunCancelled(asyncio.CancelledError):
    pass

async def run_tools(run, settle):
    try:
        await run.execute()
    except asyncio.CancelledError:
        # Settle what was started, then end the task with an exception that
        # says how far it got.
        try:
            await settle()
        except BaseException:
            pass
        raise RunCancelled(run.completed) from None
"#,
        r#"
import asyncio


class RealtimeError(Exception):
    pass


class Session:
    async def send_audio(self, data):
        try:
            await self._send_frame(data)
        except BaseException as e:
            if isinstance(e, RealtimeError) and self._can_reconnect and not self._closing:
                # A dropped link is being replaced: late audio is worthless.
                return
            raise
"#,
        r#"
import asyncio


class Pipeline:
    async def run(self, frames):
        try:
            await self._process(frames)
        except asyncio.CancelledError:
            await self._cancel()
            raise

    async def _cancel(self):
        self._stop_task = asyncio.create_task(self._teardown())
        await self._await_cleanup(self._stop_task)

    async def _await_cleanup(self, task):
        while not task.done():
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:
                continue
"#,
        r#"
import asyncio

class Transport:
    async def close(self):
        if self.sniffing_task:
            try:
                self.sniffing_task.cancel()
                await self.sniffing_task
            except asyncio.CancelledError:
                pass
            self.sniffing_task = None
        for connection in self.connections:
            await connection.close()
"#,
        r#"
class Serving:
    async def __aexit__(self, typ, value, tb):
        if typ is None:
            await self.stop()
        else:
            try:
                await self.gen.athrow(value)
            except BaseException as err:
                # Only the exception the block exited with stops here, and
                # the `return None` below makes `async with` raise it.
                if err is not value:
                    raise
        return None
"#,
        r#"
# Each task reaped is one this function cancelled just before.
import asyncio


class Server:
    async def serve(self):
        try:
            await self._stopping.wait()
        finally:
            tasks = self._tasks
            self._tasks = []
            for task in tasks:
                task.cancel()
            for coro in asyncio.as_completed(tasks):
                try:
                    await coro
                except asyncio.CancelledError:
                    pass
"#,
        r#"
# Only the cancellation the console asked for is lived through.
import asyncio


class Console:
    def interrupt(self, task):
        self._interrupted = True
        task.cancel()

    def on_key(self):
        self._interrupted = True

    async def repl(self):
        while True:
            try:
                line = await self.read_line()
                await self.run(line)
            except asyncio.CancelledError:
                if not self._interrupted:
                    raise
                self._interrupted = False
                await self.write("KeyboardInterrupt\n")
"#,
        r#"
# Either branch is the root of the task, which is cancelled and never awaited.
import asyncio


class Reader:
    async def run_loop(self):
        while True:
            try:
                await self.run_once()
            except asyncio.CancelledError:
                break
            await asyncio.sleep(1)

    async def __aenter__(self):
        self._runner = asyncio.ensure_future(
            self.run_loop() if self.looping else self.run_once())
        return self

    async def __aexit__(self, *exc):
        self._runner.cancel()
"#,
        r#"
import asyncio


async def await_job(pool, job):
    wrapped = asyncio.wrap_future(job.future)
    try:
        return await asyncio.shield(wrapped)
    except asyncio.CancelledError as cancellation:
        pool.cancel(job)
        # The worker thread cannot be stopped: wait for it, then let the
        # cancellation go on.
        while not wrapped.done():
            try:
                await asyncio.shield(wrapped)
            except asyncio.CancelledError:
                pass
            except BaseException:
                break
        raise cancellation
"#,
        r#"
import asyncio


class Relay:
    def __init__(self):
        self._tasks = set()

    async def start(self, host):
        self._server = await asyncio.start_server(self._handle, host, 0)

    async def _handle(self, reader, writer):
        task = asyncio.current_task()
        self._tasks.add(task)
        try:
            await self.serve(reader, writer)
        except asyncio.CancelledError:
            pass
        finally:
            self._tasks.discard(task)
            writer.close()
"#,
        r#"
import anyio
from anyio.from_thread import start_blocking_portal


class Owner:
    def __init__(self):
        self._stack = start_blocking_portal()
        self._portal = self._stack.__enter__()
        self._portal.start_task_soon(self._serve)

    async def _serve(self):
        try:
            await self.pump()
        except BaseException as exc:
            self.error = exc
"#,
        r#"
import asyncio
import logging

logger = logging.getLogger(__name__)


class Scorer:
    def __init__(self):
        self.queue = asyncio.Queue(maxsize=100)
        self.running = False
        self._worker_task = None

    async def start(self):
        self.running = True
        self._worker_task = asyncio.create_task(self._worker())

    async def stop(self):
        self.running = False
        if self._worker_task:
            try:
                await asyncio.wait_for(self._worker_task, timeout=5.0)
            except asyncio.TimeoutError:
                self._worker_task.cancel()
                try:
                    await self._worker_task
                except asyncio.CancelledError:
                    pass
        self._worker_task = None

    async def _worker(self):
        while self.running:
            try:
                item = await asyncio.wait_for(self.queue.get(), timeout=1.0)
                await self.score(item)
            except asyncio.TimeoutError:
                continue
            except asyncio.CancelledError:
                logger.info("worker cancelled")
                break

    async def score(self, item):
        await asyncio.sleep(0)
"#,
        r#"
import logging

from websockets.asyncio.server import serve

log = logging.getLogger(__name__)


class Hub:
    def __init__(self, host, port):
        self.host = host
        self.port = port
        self.clients = set()

    async def run(self):
        self.server = await serve(self.handle_connection, self.host, self.port)

    async def handle_connection(self, websocket):
        self.clients.add(websocket)
        try:
            async for message in websocket:
                await websocket.send(message)
        finally:
            self.clients.discard(websocket)
            try:
                await websocket.close()
            except:
                pass
"#,
        r#"
# `close()` sets the flag, tries a clean drain, then cancels: that
# cancellation propagates; any other is contained and the loop serves on.
import asyncio


class Session:
    def __init__(self):
        self._closing = False
        self._queue = asyncio.Queue()
        self._task = None

    async def close(self):
        self._closing = True
        if self._task is not None:
            await self._queue.put(None)
            self._task.cancel()

    async def _serve_loop(self):
        while True:
            try:
                request = await self._queue.get()
            except asyncio.CancelledError:
                if self._closing:
                    raise
                await self._quarantine()
                continue
            if request is None:
                return
            await self._handle(request)
"#,
        r#"
import asyncio
import logging
import signal

logger = logging.getLogger(__name__)


async def run_child(proc):
    try:
        await proc.wait()
    except asyncio.CancelledError as err:
        try:
            proc.send_signal(signal.SIGINT)
            await asyncio.wait_for(proc.wait(), timeout=2)
        except BaseException:
            logger.exception("could not stop the child")
        finally:
            raise err
"#,
        r#"
import asyncio
import contextlib
import logging

logger = logging.getLogger(__name__)


class Adapter:
    def __init__(self):
        self._supervisor_task = None
        self._shutting_down = False

    async def connect(self, subscription):
        self._supervisor_task = asyncio.create_task(self._run_supervisor()) if subscription is not None else None

    async def disconnect(self):
        self._shutting_down = True
        if self._supervisor_task and not self._supervisor_task.done():
            self._supervisor_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, asyncio.TimeoutError):
                await asyncio.wait_for(self._supervisor_task, timeout=5.0)

    async def _run_supervisor(self):
        while not self._shutting_down:
            try:
                await self._pull()
            except asyncio.CancelledError:
                return
            except Exception:
                logger.exception("pull failed")
                await asyncio.sleep(5)
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(CancellationSwallowed);

    #[test]
    fn says_what_happens_whether_or_not_the_task_goes_on() {
        let found = crate::testing::messages(
            &CancellationSwallowed,
            Language::Python,
            r#"
import asyncio

async def keepalive(ws):
    try:
        while True:
            await ws.ping()
            await asyncio.sleep(20)
    except asyncio.CancelledError:
        log("keepalive stopped")

async def poll(client):
    while True:
        try:
            await client.poll()
        except asyncio.CancelledError:
            log("ignored")
"#,
        );
        assert_eq!(found.len(), 2, "{found:#?}");
        assert!(
            found[0].contains("returns as if it had finished"),
            "{}",
            found[0]
        );
        assert!(
            found[1].contains("can no longer stop this task"),
            "{}",
            found[1]
        );
    }

    #[test]
    fn speaks_trio_in_trio_code() {
        let found = crate::testing::messages(
            &CancellationSwallowed,
            Language::Python,
            r#"
import trio

async def pump(stream):
    try:
        await stream.receive_some()
    except trio.Cancelled:
        log("stopped")
"#,
        );
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(found[0].contains("next checkpoint"), "{}", found[0]);
        assert!(!found[0].contains("asyncio"), "{}", found[0]);
    }
}
