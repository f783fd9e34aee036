//! PY020: a condition wait guarded by `if` instead of a loop.

use crate::context::FileCx;
use crate::python::common::is_condition;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::{Parent, exprs_under};
use unsnarl_model::*;

pub struct CondvarWaitIf;

pub static META: RuleMeta = RuleMeta {
    id: "PY020",
    name: "condition-wait-without-loop",
    category: Category::CondvarMisuse,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "`Condition.wait()` is called under an `if` that checks the predicate once, instead of in a `while` loop or with `wait_for`.",
    docs: r#"
A `wait()` on a `threading.Condition`, `asyncio.Condition` (or trio/anyio
condition) that is inside an `if` and not inside any loop of the function:
the predicate is checked once before waiting and never again after waking
(an `if` that only picks how to wait by the object's type,
`isinstance(cond, anyio.Condition)`, tests no predicate and does not count;
nor does one that tests only the function's parameters, `if timeout is
None:`, or fields of the object nothing in the file writes, `if
self.path == "/wait":` in a request handler).
A wait followed at once by an `if` that tests the guard's state again and
returns or raises (`if self._stop or not self._pending: return []`) is
not reported: a wakeup with the predicate false goes back to the caller
instead of running on.

## Why

A wait can return when the predicate is not true: another consumer may
have taken the item between the notify and this thread re-acquiring the
lock (a stolen wakeup), `notify_all` wakes every waiter for one item, and
threading conditions allow spurious wakeups. Code after an `if`-guarded
wait then pops from an empty queue or reads state that is not there.

## Example

```python
import threading

class Mailbox:
    def __init__(self):
        self._cond = threading.Condition()
        self._items = []

    def take(self):
        with self._cond:
            if not self._items:
                self._cond.wait()
            return self._items.pop(0)
```

## Fix

Re-check the predicate after every wakeup: loop, or let `wait_for` do it.

```python
import threading

class Mailbox:
    def __init__(self):
        self._cond = threading.Condition()
        self._items = []

    def take(self):
        with self._cond:
            self._cond.wait_for(lambda: self._items)
            return self._items.pop(0)
```
"#,
    examples: &EXAMPLES,
};

impl Rule for CondvarWaitIf {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for (id, c) in cx.calls_named(&["wait"]) {
            let e = cx.expr(id);
            if matches!(cx.tree.expr_parent(id), Parent::Detached) {
                continue;
            }
            let Some(r) = c.receiver else { continue };
            // A wait with a timeout is a bounded wait whose caller handles
            // both outcomes; tests poke at conditions on purpose.
            if !is_condition(cx, r) || !c.args.is_empty() || cx.func(cx.func_of(id)).is_test {
                continue;
            }
            let stmts = cx.enclosing_stmts(id);
            let in_loop = stmts.iter().any(|&s| {
                matches!(
                    cx.stmt(s).kind,
                    StmtKind::While { .. } | StmtKind::For { .. } | StmtKind::Loop { .. }
                )
            });
            if in_loop {
                continue;
            }
            // The wait is in the body of an `if` (not in its condition).
            let Some(guard) = stmts.iter().copied().find(|&s| match &cx.stmt(s).kind {
                StmtKind::If { cond, .. } => {
                    !cx.contains(*cond, id)
                        && !crate::python::common::is_assert(cx, s)
                        && !tests_a_type(cx, *cond)
                        && !tests_no_shared_state(cx, cx.func_of(id), *cond)
                }
                _ => false,
            }) else {
                continue;
            };
            if rechecks_after_waking(cx, id, guard) {
                continue;
            }
            let cond = cx.model.dotted(r).unwrap_or_else(|| "cond".into());
            let mut f = cx.finding(
                &META,
                e.span,
                format!(
                    "`{cond}.wait()` is guarded by an `if`, so the predicate is not re-checked after waking: a stolen or spurious wakeup lets this code run with the condition false"
                ),
                format!("use `while not <predicate>: {cond}.wait()` or `{cond}.wait_for(lambda: <predicate>)`"),
            );
            f.related.push(Related {
                file: None,
                span: cx.stmt(guard).span,
                message: "the predicate is checked only once here".into(),
            });
            out.push(f);
        }
    }
}

/// `isinstance(condition, anyio.Condition)`, `hasattr(obj, "wait")`: the
/// `if` picks how to wait by the object's type; it tests no predicate
/// that the wait is for.
fn tests_a_type(cx: &FileCx, cond: ExprId) -> bool {
    cx.call(cx.model.strip(cond)).is_some_and(|c| {
        matches!(
            c.target.as_deref(),
            Some("builtins.isinstance" | "builtins.hasattr" | "builtins.callable")
        )
    })
}

/// The `if` tests only the function's parameters (`if timeout is None:`
/// picks a plain wait over a bounded one) or fields of the object that
/// nothing in the file writes (`if self.path == "/wait":` on a request
/// handler): no notifier changes what it tests, so it is not the
/// predicate the wait is for, only a choice of what to do.
fn tests_no_shared_state(cx: &FileCx, f: FuncId, cond: ExprId) -> bool {
    let func = cx.func(f);
    let receiver = func.receiver.as_deref();
    let written = |d: &str| {
        (0..cx.model.exprs.len() as u32).any(|i| {
            let x = ExprId(i);
            matches!(cx.expr(x).kind, ExprKind::Attr { .. })
                && cx.model.dotted(x).as_deref() == Some(d)
                && (crate::python::common::is_store(cx, x)
                    || matches!(cx.tree.expr_parent(x), Parent::Expr(p)
                        if matches!(cx.expr(p).kind, ExprKind::Attr { .. } | ExprKind::Index { .. })))
        })
    };
    exprs_under(cx.model, cond)
        .into_iter()
        .all(|x| match &cx.expr(x).kind {
            ExprKind::Name { id, .. } => {
                Some(id.as_str()) == receiver || func.params.iter().any(|p| p.name == *id)
            }
            ExprKind::Attr { obj, .. } => {
                receiver.is_some_and(|r| cx.model.name_of(*obj) == Some(r))
                    && cx.model.dotted(x).is_some_and(|d| !written(&d))
            }
            ExprKind::Call(_) | ExprKind::Await(_) | ExprKind::Index { .. } => false,
            _ => true,
        })
}

/// Right after the wait, an `if` tests again what the guard tested and
/// leaves (`self._cv.wait()` then `if self._stop or not self._pending:
/// return []`): a wakeup with the predicate false returns to a caller
/// that loops, rather than running on.
fn rechecks_after_waking(cx: &FileCx, wait: ExprId, guard: StmtId) -> bool {
    let StmtKind::If { cond: tested, .. } = &cx.stmt(guard).kind else {
        return false;
    };
    let Some(next) = cx
        .tree
        .enclosing_stmt(wait)
        .and_then(|s| crate::util::next_stmt(cx, s))
    else {
        return false;
    };
    let StmtKind::If { cond, then, .. } = &cx.stmt(next).kind else {
        return false;
    };
    let names = |e: ExprId| -> Vec<String> {
        exprs_under(cx.model, e)
            .into_iter()
            .filter(|&x| {
                matches!(
                    cx.expr(x).kind,
                    ExprKind::Attr { .. } | ExprKind::Name { .. }
                )
            })
            .filter_map(|x| cx.model.dotted(x))
            .filter(|d| d != "self")
            .collect()
    };
    let before = names(*tested);
    crate::util::ends_in_exit(cx.model, then) && names(*cond).iter().any(|n| before.contains(n))
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import threading

class Mailbox:
    def __init__(self):
        self._cond = threading.Condition()
        self._items = []

    def take(self):
        with self._cond:
            if not self._items:
                self._cond.wait()  # expect
            return self._items.pop(0)
"#,
        r#"
import asyncio

cond = asyncio.Condition()
ready = []

async def consume():
    async with cond:
        if not ready:
            await cond.wait()  # expect
        return ready.pop()
"#,
        r#"
import threading

class Batcher:
    def __init__(self):
        self._cv = threading.Condition()
        self._pending = []
        self._stop = False

    def next_batch(self):
        with self._cv:
            if not self._pending:
                self._cv.wait()  # expect
                if self._stop:
                    return []
            batch, self._pending = self._pending, []
            return batch
"#,
    ],
    pass: &[
        r#"
import threading

class Mailbox:
    def __init__(self):
        self._cond = threading.Condition()
        self._items = []

    def take(self):
        with self._cond:
            while not self._items:
                self._cond.wait()
            return self._items.pop(0)

    def take_for(self):
        with self._cond:
            self._cond.wait_for(lambda: self._items)
            return self._items.pop(0)

class Event:
    def __init__(self):
        self._cond = threading.Condition()
        self._flag = False

    def wait(self, timeout=None):
        with self._cond:
            signaled = self._flag
            if not signaled:
                signaled = self._cond.wait(timeout)
            return signaled

def wait_event(ev: threading.Event, flag):
    if flag:
        ev.wait()
"#,
        r#"
import threading

class Batcher:
    def __init__(self):
        self._cv = threading.Condition()
        self._pending = []
        self._stop = False

    def run(self):
        while not self._stop:
            batch = self.next_batch()
            if batch:
                self.dispatch(batch)

    def next_batch(self):
        with self._cv:
            if not self._pending:
                self._cv.wait()
                # Woken with nothing to do: the caller's loop comes back.
                if self._stop or not self._pending:
                    return []
            batch, self._pending = self._pending, []
            return batch
"#,
        r#"
import anyio


async def cancel_on_exit(condition, scope):
    if isinstance(condition, anyio.Event):
        await condition.wait()
    elif isinstance(condition, anyio.Condition):
        async with condition:
            await condition.wait()
    else:
        raise TypeError("condition must be an Event or a Condition")
    scope.cancel()
"#,
        r#"
import asyncio


class Session:
    def __init__(self):
        self.wakeup = asyncio.Condition()

    async def suspend(self, timeout=None):
        async with self.wakeup:
            # Picks a plain or a bounded wait for the next wakeup: the
            # parameter is no predicate another task changes.
            if timeout is None:
                await self.wakeup.wait()
                return True
            try:
                await asyncio.wait_for(self.wakeup.wait(), timeout)
                return True
            except asyncio.TimeoutError:
                return False
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(CondvarWaitIf);
}
