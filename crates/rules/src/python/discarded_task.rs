//! PY001: a task created and dropped on the floor.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct DiscardedTask;

pub static META: RuleMeta = RuleMeta {
    id: "PY001",
    name: "discarded-task",
    category: Category::OrphanTask,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "A task is created with `create_task`/`ensure_future` and its handle is thrown away.",
    docs: r#"
A task started with `asyncio.create_task`, `asyncio.ensure_future` or
`loop.create_task` whose returned task is not kept anywhere.

## Why

Nobody awaits the task, so an exception it raises is never seen (at best it
is logged as "Task exception was never retrieved" when the task is garbage
collected); nothing cancels it when the caller or the service shuts down, so
it outlives the request that started it; and the event loop keeps only a weak
reference to tasks, so a task whose wake-up source becomes unreachable can be
collected mid-flight.

## Example

```python
import asyncio

async def handle(request):
    asyncio.create_task(audit_log(request))
    return await process(request)
```

## Fix

Give the task an owner: a `TaskGroup` that waits for it and cancels it on
error, or a set that keeps it alive and forgets it when done.

```python
import asyncio

async def handle(request):
    async with asyncio.TaskGroup() as tg:
        tg.create_task(audit_log(request))
        result = tg.create_task(process(request))
    return result.result()
```
"#,
    examples: &EXAMPLES,
};

impl Rule for DiscardedTask {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for (i, e) in cx.model.exprs.iter().enumerate() {
            let ExprKind::Call(c) = &e.kind else { continue };
            let id = ExprId(i as u32);
            if !cx.is_discarded(id) || is_scoped_spawn(cx, c) {
                continue;
            }
            let Some(entry) = cx.effect(c, Effect::Spawn) else {
                continue;
            };
            if entry.kind.as_deref() != Some("task") {
                continue;
            }
            out.push(cx.finding(
                &META,
                e.span,
                format!(
                    "`{}` starts a task and drops it: its exception is never observed, nothing cancels it on shutdown, and the loop may garbage-collect it mid-flight",
                    cx.callee_display(c)
                ),
                "create the task in an `asyncio.TaskGroup`, await it, or keep it in a set with `task.add_done_callback(tasks.discard)`",
            ));
        }
    }
}

/// A spawn on a task group / nursery (typed, or named like one when the
/// receiver's type is unknown).
pub(crate) fn is_scoped_spawn(cx: &FileCx, c: &Call) -> bool {
    if cx.effect(c, Effect::ScopedSpawn).is_some() && c.target.is_some() {
        return true;
    }
    if c.target.is_none()
        && let Some(r) = c.receiver
        && let Some(name) = cx.model.dotted(r)
    {
        let last = name
            .rsplit('.')
            .next()
            .unwrap_or(&name)
            .to_ascii_lowercase();
        let last = last.trim_start_matches('_');
        return last == "tg"
            || last.ends_with("group")
            || last.ends_with("nursery")
            || last.ends_with("scope")
            || last.ends_with("_tg");
    }
    false
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import asyncio

async def handle(req):
    asyncio.create_task(audit_log(req))  # expect
    asyncio.ensure_future(notify(req))  # expect
    return await process(req)
"#,
        r#"
from asyncio import create_task as spawn

async def main():
    spawn(worker())  # expect
"#,
        r#"
import asyncio

async def run():
    loop = asyncio.get_running_loop()
    loop.create_task(tick())  # expect
"#,
        r#"
class Service:
    def start(self, loop):
        loop.create_task(self.poll())  # expect
"#,
    ],
    pass: &[
        r#"
import asyncio

async def handle(req):
    async with asyncio.TaskGroup() as tg:
        tg.create_task(audit_log(req))
        t = tg.create_task(process(req))
    return t.result()
"#,
        r#"
import asyncio

_background = set()

def spawn(coro):
    t = asyncio.create_task(coro)
    _background.add(t)
    t.add_done_callback(_background.discard)
    return t
"#,
        r#"
import asyncio

async def main():
    t = asyncio.create_task(work())
    await t
    return await asyncio.create_task(other())
"#,
        r#"
import trio

async def main():
    async with trio.open_nursery() as nursery:
        nursery.start_soon(worker)
"#,
        r#"
class Jobs:
    def create_task(self, name):
        return name

def f(jobs: Jobs):
    jobs.create_task("x")
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(DiscardedTask);
}
