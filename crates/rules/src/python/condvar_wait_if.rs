//! PY020: a condition wait guarded by `if` instead of a loop.

use crate::context::FileCx;
use crate::python::common::is_condition;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
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
the predicate is checked once before waiting and never again after waking.

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
                    !cx.contains(*cond, id) && !crate::python::common::is_assert(cx, s)
                }
                _ => false,
            }) else {
                continue;
            };
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
    ],
    pass: &[r#"
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
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(CondvarWaitIf);
}
