//! PY005: blocking on the event loop from inside it.

use super::common::bridges_here;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct SyncOverAsync;

pub static META: RuleMeta = RuleMeta {
    id: "PY005",
    name: "loop-blocked-on-itself",
    category: Category::SyncOverAsync,
    severity: Severity::Critical,
    languages: &[Language::Python],
    summary: "A coroutine runs a nested event loop (`run_until_complete`, `asyncio.run`) or waits on a `run_coroutine_threadsafe` future; or `nest_asyncio` is used.",
    docs: r#"
Inside a coroutine (so on the loop's own thread): `loop.run_until_complete`,
`asyncio.run`, `anyio.run`, `trio.run`, a function made by `async_to_sync`
called on the spot (`async_to_sync(send)(msg)`; building the wrapper alone
runs nothing), or `.result()` on the future returned by
`asyncio.run_coroutine_threadsafe` (not one the file scheduled on a loop
it made for a thread of its own, `self._loop = asyncio.new_event_loop()`
run by a thread, also the loop field of a thread object of the file,
`self.t.loop`: that loop is not the caller's). Anywhere: importing `nest_asyncio`
and calling its `apply()`, which patches asyncio so that such nesting
appears to work (an import left behind with the `apply()` commented out
patches nothing). A call in the branch that runs only when no loop is
running (`try: loop = asyncio.get_running_loop() ... except RuntimeError:
asyncio.run(cb(out))`, also with the probe's loop used on the spot,
`asyncio.get_running_loop().create_task(c)`, or probed with
`get_event_loop()`, which hands back the running loop whenever one runs;
the `else` of `if asyncio.get_event_loop().is_running():` or the body of
`if not asyncio.get_event_loop().is_running():`, that loop also held in
a local first) is not reported: it never runs on the loop. Nor is one in
the `else` of `if loop == asyncio.get_running_loop():`, where the loop
waited on is another thread's.

## Why

The loop thread would wait for a result that only the loop itself can
produce. `run_until_complete` and `asyncio.run` raise `RuntimeError` on a
running loop; `fut.result()` on a `run_coroutine_threadsafe` future does not
raise: it hangs the whole process with zero CPU, because the loop that should
run the coroutine is the thread now blocked waiting for it. `nest_asyncio`
hides the design problem by re-entering the loop, breaking the invariants
other async code relies on.

## Example

```python
import asyncio

async def handler(loop):
    fut = asyncio.run_coroutine_threadsafe(work(), loop)
    return fut.result()
```

## Fix

Await the coroutine. Keep the sync/async boundary at the top of the program
(one `asyncio.run` in `main`).

```python
import asyncio

async def handler(loop):
    return await work()
```
"#,
    examples: &EXAMPLES,
};

impl Rule for SyncOverAsync {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        // An import whose `apply()` is never called (`# nest_asyncio.apply()`
        // commented out) patches nothing.
        let applies = || {
            cx.model.exprs.iter().any(|e| {
                matches!(&e.kind, ExprKind::Call(c)
                    if c.target.as_deref().is_some_and(|t| t.starts_with("nest_asyncio.")))
            })
        };
        for imp in &cx.model.imports {
            if (imp.target == "nest_asyncio" || imp.target.starts_with("nest_asyncio."))
                && applies()
            {
                let mut f = cx.finding(
                    &META,
                    imp.span,
                    "`nest_asyncio` makes a running event loop re-entrant: code that blocks on the loop from inside it appears to work, while tasks now run nested inside each other's callbacks",
                    "remove `nest_asyncio` and make the callers async (await instead of running a nested loop)",
                );
                f.severity = Severity::High;
                out.push(f);
            }
        }
        for (i, e) in cx.model.exprs.iter().enumerate() {
            let ExprKind::Call(c) = &e.kind else { continue };
            let id = ExprId(i as u32);
            let Some(entry) = cx.effect(c, Effect::SyncOverAsync) else {
                continue;
            };
            let f = cx.func_of(id);
            // (`try: asyncio.get_running_loop() except RuntimeError:
            // asyncio.run(..)`: that branch runs only with no loop.)
            if !cx.runs_on_loop(f)
                || cx.func(f).is_test
                || !bridges_here(cx, id, entry)
                || crate::util::only_without_running_loop(cx, id)
                || crate::util::waits_on_other_loop(cx, id)
            {
                continue;
            }
            // `run_coroutine_threadsafe(coro, self._loop).result()` on a loop
            // the file made for a thread of its own: not the caller's loop.
            if crate::util::waits_on_dedicated_loop(cx.model, c, e.span) {
                continue;
            }
            out.push(cx.finding(
                &META,
                e.span,
                format!(
                    "`{}` {} inside async {}: the loop thread waits for work only the loop can run, so it raises on a running loop or hangs forever",
                    cx.callee_display(c),
                    entry.what,
                    cx.func_display(f)
                ),
                entry.fix.clone(),
            ));
        }
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import asyncio

async def handler(loop):
    fut = asyncio.run_coroutine_threadsafe(work(), loop)
    data = fut.result()  # expect
    loop.run_until_complete(work())  # expect
    asyncio.run(work())  # expect
"#,
        r#"
import nest_asyncio  # expect
nest_asyncio.apply()
"#,
        r#"
import asyncio

async def f(loop):
    return asyncio.run_coroutine_threadsafe(work(), loop).result(timeout=5)  # expect
"#,
        r#"
from asgiref.sync import async_to_sync

async def notify(layer, group, event):
    async_to_sync(layer.group_send)(group, event)  # expect
"#,
    ],
    pass: &[
        r#"
import asyncio

async def main():
    await work()

if __name__ == "__main__":
    asyncio.run(main())
"#,
        r#"
import asyncio
import threading

def from_worker_thread(loop):
    fut = asyncio.run_coroutine_threadsafe(work(), loop)
    return fut.result(timeout=2.0)

def sync_facade():
    return asyncio.get_event_loop().run_until_complete(work())
"#,
        r#"
from asgiref.sync import async_to_sync

class Consumer:
    async def __call__(self, scope, receive, send):
        # Only wraps `send` for the sync handlers, which run in a thread.
        self.base_send = async_to_sync(send)
        await self.dispatch(scope, receive)
"#,
        r#"
import logging

import nest_asyncio

# nest_asyncio.apply()

logger = logging.getLogger(__name__)


def adapt(agent):
    logger.info("adapting %s", agent)
    return agent
"#,
        r#"
import asyncio
import threading


class Bridge:
    def __init__(self):
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()

    async def run_turn(self, pump):
        future = asyncio.run_coroutine_threadsafe(pump(), self._loop)
        try:
            await asyncio.sleep(0)
        finally:
            if not future.done():
                future.result(timeout=10)
"#,
        r#"
import asyncio
import logging

log = logging.getLogger(__name__)


async def run_task(task, output):
    if task.callback:
        try:
            loop = asyncio.get_running_loop()
            loop.create_task(task.callback(output))
        except RuntimeError:
            asyncio.run(task.callback(output))
"#,
        r#"
import asyncio


async def setup(registry, container):
    if asyncio.get_event_loop().is_running():
        await registry.initialize_all(container)
    else:
        asyncio.run(registry.initialize_all(container))
"#,
        r#"
import asyncio

class Processor:
    async def process(self, items):
        await asyncio.sleep(0)

    async def execute(self, items):
        loop = asyncio.get_event_loop()
        if loop.is_running():
            self._task = asyncio.create_task(self.process(items))
        else:
            # Only reached when no loop runs on this thread.
            loop.run_until_complete(self.process(items))
"#,
        r#"
import asyncio
from threading import Thread


class LoopThread(Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.loop = asyncio.new_event_loop()

    def run(self):
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()


class IsolatedServer:
    def __init__(self, server):
        self.server = server
        self.t = LoopThread()
        self.t.start()

    async def list_tools(self):
        # Runs on the thread's own loop, not the caller's.
        return asyncio.run_coroutine_threadsafe(self.server.list_tools(), self.t.loop).result()
"#,
        r#"
import asyncio


async def run_step(coro):
    try:
        loop = asyncio.get_event_loop()
    except RuntimeError:
        return asyncio.run(coro)
    return await asyncio.ensure_future(coro, loop=loop)
"#,
        r#"
import asyncio


async def create_sub_task(coro, loop=None):
    if loop is not None:
        if loop == asyncio.get_running_loop():
            return loop.create_task(coro)
        else:

            async def make(c):
                return asyncio.ensure_future(c)

            return asyncio.run_coroutine_threadsafe(make(coro), loop=loop).result()
    return asyncio.create_task(coro)
"#,
        r#"
import asyncio


async def stop_sync(sync):
    if not asyncio.get_event_loop().is_running():
        loop = asyncio.new_event_loop()
        loop.run_until_complete(sync.stop())
        loop.close()
    else:
        await sync.stop()
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(SyncOverAsync);
}
