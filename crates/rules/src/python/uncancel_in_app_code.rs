//! PY037: `Task.uncancel()` outside scope-like framework code.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct UncancelInAppCode;

pub static META: RuleMeta = RuleMeta {
    id: "PY037",
    name: "uncancel-outside-scope",
    category: Category::CancellationSwallowed,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "`task.uncancel()` is called outside a scope-like class (an async context manager that owns the cancellation it undoes).",
    docs: r#"
A call to `.uncancel()` that is not inside a class implementing
`__aexit__`/`__exit__` (a cancel scope, a timeout, a task group) or a
function written as a context manager (`@asynccontextmanager`), whose
result is not checked (`if task.uncancel() == 0`), that is not under a
test of the pending count (`if task.cancelling() == 1:`), not in a
handler of `CancelledError` that first re-raises every cancellation but
the one it expects (`if not self.is_stopping(): raise`), and after which
the function does not cancel the same task again (uncancelling to let a
shutdown step run, then `finally: task.cancel()` as many times). In a
plain function outside any coroutine, only a receiver visibly made by
`asyncio.current_task()`, `create_task` or `ensure_future` is judged: an
object of the project's own may have an `uncancel` method of its own
(`self.facade.uncancel()` resetting a flag).

## Why

`cancel()` and `uncancel()` keep a count so that nested scopes can tell
whose cancellation arrived. `uncancel()` claims a cancellation as yours.
Application code that calls it may be claiming a cancellation that belongs
to an enclosing `TaskGroup` or `asyncio.timeout`: that outer scope then
never sees its cancellation complete, and the task runs on when it should
have stopped (or the scope hangs waiting for it).

## Example

```python
import asyncio

async def resilient(step):
    try:
        await step()
    except asyncio.CancelledError:
        asyncio.current_task().uncancel()
        return None
```

## Fix

Let cancellation propagate; to bound a step, use a scope that does the
bookkeeping for you.

```python
import asyncio

async def resilient(step):
    try:
        async with asyncio.timeout(5):
            await step()
    except TimeoutError:
        return None
```
"#,
    examples: &EXAMPLES,
};

impl Rule for UncancelInAppCode {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for (id, c) in cx.calls_named(&["uncancel"]) {
            let e = cx.expr(id);
            if c.receiver.is_none() || matches!(cx.tree.expr_parent(id), Parent::Detached) {
                continue;
            }
            let f = cx.func_of(id);
            if in_scope_class(cx, f)
                || context_manager_fn(cx, f)
                || result_checked(cx, id)
                // `if task.cancelling() == 1: task.uncancel()`: the code
                // checked that the cancellation it claims is the only one.
                || crate::util::under_test_calling(cx, id, "cancelling")
                || gives_it_back(cx, f, id, c)
                || tells_its_own_apart(cx, id)
                || not_a_task_here(cx, f, c)
                || cx.func(f).is_test
            {
                continue;
            }
            out.push(cx.finding(
                &META,
                e.span,
                "`uncancel()` claims a cancellation as this code's own: if it came from an enclosing `TaskGroup` or `asyncio.timeout`, that scope never sees it and the task keeps running when it should stop",
                "let the `CancelledError` propagate; use `asyncio.timeout`/`TaskGroup` for scoped cancellation (they do the `uncancel` bookkeeping)",
            ));
        }
    }
}

/// The function cancels the same task again after the `uncancel()` (`for
/// _ in range(n): task.uncancel()` to let a shutdown step run, then
/// `finally: for _ in range(n): task.cancel()`): the count is restored and
/// the cancellation still reaches the enclosing scopes.
fn gives_it_back(cx: &FileCx, f: FuncId, id: ExprId, c: &Call) -> bool {
    let Some(task) = c.receiver.and_then(|r| cx.model.dotted(r)) else {
        return false;
    };
    let at = cx.expr(id).span.end;
    crate::python::common::cancels_of(cx, f, &task).any(|e| cx.expr(e).span.start > at)
}

/// The `except CancelledError` handler re-raises every cancellation but
/// the one the code asked for before it uncancels (`if not
/// self.is_stopping(): raise`, then `task.uncancel()`): it claims only
/// its own, and an enclosing scope's cancellation still propagates.
fn tells_its_own_apart(cx: &FileCx, id: ExprId) -> bool {
    let path = cx.enclosing_stmts(id);
    path.windows(2).any(|w| {
        let StmtKind::Try { handlers, .. } = &cx.stmt(w[1]).kind else {
            return false;
        };
        handlers.iter().any(|h| {
            h.types.iter().any(|t| t.ends_with("CancelledError"))
                && h.body.iter().position(|&s| s == w[0]).is_some_and(|at| {
                    h.body[..at].iter().any(|&s| {
                        matches!(&cx.stmt(s).kind, StmtKind::If { then, orelse, .. }
                            if orelse.is_empty()
                                && matches!(then.as_slice(), [r]
                                    if matches!(cx.stmt(*r).kind, StmtKind::Raise(None))))
                    })
                })
        })
    })
}

/// A plain function (nested in no coroutine) calls `uncancel()` on
/// something not visibly an asyncio task: `Task.uncancel()` is for the
/// code of a running task, and an object of the project's own with a
/// method of that name (`self.facade.uncancel()` resetting a flag) is
/// more likely here. A receiver made by `asyncio.current_task()`,
/// `create_task` or `ensure_future` is still judged.
fn not_a_task_here(cx: &FileCx, f: FuncId, c: &Call) -> bool {
    let in_coroutine = std::iter::once(f)
        .chain(cx.tree.func_ancestors(cx.model, f))
        .any(|g| cx.func(g).is_async);
    if in_coroutine {
        return false;
    }
    let makes_task = |e: ExprId| {
        cx.call(cx.model.strip(e)).is_some_and(|k| {
            matches!(
                k.name.as_str(),
                "current_task" | "create_task" | "ensure_future"
            )
        })
    };
    let Some(r) = c.receiver else {
        return false;
    };
    if makes_task(r) {
        return false;
    }
    !cx.model.name_of(r).is_some_and(|n| {
        crate::python::common::values_bound_to(cx, f, n).any(|v| v.is_some_and(makes_task))
    })
}

/// The function is a method of a class with `__aexit__`/`__exit__`.
fn in_scope_class(cx: &FileCx, f: FuncId) -> bool {
    let Some(class) = crate::python::common::class_of(cx, f) else {
        return false;
    };
    cx.model.functions.iter().any(|g| {
        g.class.as_deref() == Some(class) && matches!(g.name.as_str(), "__aexit__" | "__exit__")
    })
}

/// A generator written as a context manager (`@asynccontextmanager`,
/// `@contextmanager`): a scope, as a class with `__aexit__` is.
fn context_manager_fn(cx: &FileCx, f: FuncId) -> bool {
    cx.tree.func_ancestors(cx.model, f).any(|g| {
        cx.func(g).decorators.iter().any(|d| {
            matches!(
                d.as_str(),
                "contextlib.asynccontextmanager" | "contextlib.contextmanager"
            )
        })
    })
}

/// `if task.uncancel() == 0:` / `n = task.uncancel()`: bookkeeping that
/// looks at the count.
fn result_checked(cx: &FileCx, id: ExprId) -> bool {
    !cx.is_discarded(id)
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import asyncio

async def resilient(step):
    try:
        await step()
    except asyncio.CancelledError:
        asyncio.current_task().uncancel()  # expect
        return None
"#,
        r#"
import asyncio


async def consume(channel, reason):
    try:
        await channel.read()
    except asyncio.CancelledError as exc:
        task = asyncio.current_task()
        if exc.args and exc.args[0] is reason:
            task.uncancel()  # expect
            raise reason from exc
        raise
"#,
        r#"
# The check decides nothing: every cancellation is claimed.
import asyncio


async def pump(queue, log):
    try:
        return await queue.get()
    except asyncio.CancelledError:
        if log is not None:
            log.info("cancelled")
        asyncio.current_task().uncancel()  # expect
        return None
"#,
    ],
    pass: &[
        r#"
import asyncio


async def serve(self):
    try:
        await self.pump()
    finally:
        current = asyncio.current_task()
        pending = current.cancelling() if current else 0
        for _ in range(pending):
            current.uncancel()
        try:
            await self.shutdown()
        finally:
            # The cancellation is given back before it propagates.
            for _ in range(pending):
                current.cancel()
"#,
        r#"
import asyncio

class Deadline:
    def __init__(self, task):
        self._task = task
        self._expired = False

    async def __aenter__(self):
        return self

    async def __aexit__(self, exc_type, exc, tb):
        if exc_type is asyncio.CancelledError and self._expired:
            if self._task.uncancel() == 0:
                raise TimeoutError from None
        return None

    def expire(self):
        self._expired = True
        self._task.uncancel()
"#,
        r#"
import asyncio
from contextlib import asynccontextmanager


@asynccontextmanager
async def closing_scope(channel):
    reason = channel.close_reason
    try:
        yield channel
    except asyncio.CancelledError as exc:
        task = asyncio.current_task()
        if exc.args and exc.args[0] is reason:
            task.uncancel()
            raise reason from exc
        raise
"#,
        r#"
import asyncio


async def consume(channel, reason):
    try:
        await channel.read()
    except asyncio.CancelledError as exc:
        task = asyncio.current_task()
        if exc.args and exc.args[0] is reason and task.cancelling() == 1:
            task.uncancel()
            raise reason from exc
        raise
"#,
        r#"
# Only the worker's own stop is claimed: any other cancellation re-raises.
import asyncio


class Worker:
    def __init__(self):
        self._queue = asyncio.Queue()
        self._stopping = False

    def is_stopping(self):
        return self._stopping

    async def get_message(self, timeout):
        try:
            async with asyncio.timeout(timeout):
                return await self._queue.get()
        except asyncio.TimeoutError:
            return None
        except asyncio.CancelledError:
            if not self.is_stopping():
                raise
            if task := asyncio.current_task():
                task.uncancel()
        return None
"#,
        r#"
class Repl:
    def __init__(self, facade):
        self.facade = facade

    def run(self):
        while True:
            line = input("> ")
            for event in self.facade.stream(line):
                print(event)
            self.facade.uncancel()
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(UncancelInAppCode);
}
