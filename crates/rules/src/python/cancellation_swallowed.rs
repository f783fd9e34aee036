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
`sys.exc_info()`) or gives it to a helper of the file that raises or keeps
it is not reported.

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

const CANCEL_TYPES: &[&str] = &[
    "BaseException",
    "asyncio.CancelledError",
    "asyncio.exceptions.CancelledError",
    "concurrent.futures.CancelledError",
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
    if awaits_in_block(cx.model, body).is_empty() || reaps_cancelled_task(cx, fid, t, body) {
        return;
    }
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
        {
            continue;
        }
        let consequence = if function_ends_after(cx, t) {
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
            "catch `Exception` for ordinary errors; if cancellation must be intercepted, do bounded cleanup and end the handler with `raise`",
        ));
        // One finding per try: later handlers never see the cancellation.
        break;
    }
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
/// (`self.error = exc`) or passes it to a keeper (`errors.append(exc)`).
fn keeps(cx: &FileCx, body: &Block, name: &str) -> bool {
    unsnarl_model::walk::exprs_in_block(cx.model, body)
        .into_iter()
        .any(|e| {
            cx.model.name_of(e) == Some(name)
                && match cx.tree.expr_parent(e) {
                    Parent::Stmt(s) => matches!(&cx.stmt(s).kind,
                        StmtKind::Assign { value: Some(v), .. } if *v == e),
                    Parent::Expr(p) => is_keeper_arg(cx, p, e),
                    _ => false,
                }
        })
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
                || cx
                    .call(e)
                    .is_some_and(|c| c.name == "cancelling" || c.name == "get_cancelled_exc_class")
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
    mentions && has_raise
}

/// Nothing runs after the `try` `t` but a `return`: it is in no loop, and
/// at every level up to the function's body only a `return` may follow.
/// A handler there ends the coroutine (the task does stop); what is lost
/// is the cancellation itself.
fn function_ends_after(cx: &FileCx, t: StmtId) -> bool {
    let mut s = t;
    loop {
        let rest = crate::python::common::stmts_after(cx, s);
        if !rest
            .iter()
            .all(|&r| matches!(cx.stmt(r).kind, StmtKind::Return(_)))
        {
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

/// The idiom `task.cancel()` then `try: await task except CancelledError:
/// pass`: the caught cancellation is the cancelled task's own. Every await
/// of the `try` must be of a task the function cancelled before it
/// (`stop()` cancelling and reaping two tasks in one `try`).
fn reaps_cancelled_task(cx: &FileCx, fid: FuncId, t: StmtId, body: &Block) -> bool {
    let try_start = cx.stmt(t).span.start;
    let cancelled_before = |awaited: &str| {
        cx.body_calls(fid).any(|c| {
            let call = cx.call(c).unwrap();
            call.name == "cancel"
                && cx.expr(c).span.start < try_start
                && call.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some(awaited)
        })
    };
    let awaited: Vec<ExprId> = exprs_in_block(cx.model, body)
        .into_iter()
        .filter_map(|e| match cx.expr(e).kind {
            ExprKind::Await(inner) => Some(inner),
            _ => None,
        })
        .collect();
    // (`async with`/`async for` suspend too: counted by awaits_in_block.)
    !awaited.is_empty()
        && awaited.len() == awaits_in_block(cx.model, body).len()
        && awaited.iter().all(|&inner| {
            // `await asyncio.shield(task)` still waits for the cancelled task.
            let inner = cx
                .call(inner)
                .filter(|c| c.target.as_deref() == Some("asyncio.shield"))
                .and_then(|c| c.positional(0))
                .unwrap_or(inner);
            cx.model
                .dotted(inner)
                .is_some_and(|name| cancelled_before(&name))
        })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
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
    ],
    pass: &[
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
}
