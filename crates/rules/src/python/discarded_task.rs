//! PY001: a task created and dropped on the floor.

use crate::context::FileCx;
use crate::python::common::{func_and_nested, is_store, name_refs};
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct DiscardedTask;

pub static META: RuleMeta = RuleMeta {
    id: "PY001",
    name: "discarded-task",
    category: Category::OrphanTask,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "A task is created with `create_task`/`ensure_future` and its handle is thrown away, overwritten in a loop, or kept where nothing reads it.",
    docs: r#"
A task started with `asyncio.create_task`, `asyncio.ensure_future` or
`loop.create_task` whose returned task is not kept anywhere: dropped on the
spot, kept only in a local variable nothing reads (for a `nonlocal`
one, nothing in the enclosing function or its other closures), overwritten on every
iteration of a loop (only the last task is awaited), or collected in a
local list that nothing awaits or drains. Tasks of a `TaskGroup` or a
trio/anyio nursery (or of python-telegram-bot's application,
`context.application.create_task(..)`, which keeps and awaits them),
tasks that are returned, awaited, stored on an object
or passed on are not reported, nor is `self.create_task(..)` in a class
that inherits it from a base in another file (a spawner of the project's
own, whose body is not in sight), nor a call passing a keyword asyncio's
spawners do not take (`looper.create_task(target=job, name=..)`, the
project's own spawner) or more than their one positional coroutine
(`store.create_task(task_id, query)`, a row in a table), nor a task running a coroutine of the
file that never suspends (no `await`, `async for` or `async with`) and
makes no blocking call: it runs to its end in its first step, with
nothing left in flight to lose or cancel. Nor is `ensure_future` of an
executor's future (`ensure_future(loop.run_in_executor(..))`): it returns
that future and starts no task. A task kept only in a local that adds a done
callback is reported at medium severity: the callback sees how it ends,
but nothing holds a reference to it.

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
            // The knowledge first: most calls spawn nothing, and it is the
            // cheapest question.
            let Some(entry) = cx.effect(c, Effect::Spawn) else {
                continue;
            };
            if entry.kind.as_deref() != Some("task")
                || is_scoped_spawn(cx, c)
                || cx.func(cx.func_of(id)).is_test
                || inherited_spawner(cx, c)
                || takes_foreign_keywords(c)
                || runs_in_one_step(cx, c)
                || wraps_a_future(cx, c)
                || puts_on_unbounded_queue(cx, c)
            {
                continue;
            }
            let Some(how) = lost_how(cx, id) else {
                continue;
            };
            let f = match how {
                Lost::Unobserved(how) => cx.finding(
                    &META,
                    e.span,
                    format!(
                        "`{}` starts a task and {how}: its exception is never observed, nothing cancels it on shutdown, and the loop may garbage-collect it mid-flight",
                        cx.callee_display(c)
                    ),
                    // A sync function (a done callback, `__exit__`) can
                    // neither await nor open a task group.
                    if cx.func(cx.func_of(id)).is_async {
                        "create the task in an `asyncio.TaskGroup`, await it, or keep it in a set with `task.add_done_callback(tasks.discard)`"
                    } else {
                        "keep it in a set that outlives this call (`tasks.add(task)`, `task.add_done_callback(tasks.discard)`), and cancel and await what is left at shutdown"
                    },
                ),
                // A done callback sees the outcome, but holds no reference:
                // the loop keeps only a weak one.
                Lost::OnlyCallback(name) => {
                    let mut f = cx.finding(
                        &META,
                        e.span,
                        format!(
                            "`{}` starts a task and keeps it only in `{name}` and its done callback, which hold no reference once this function returns: the loop keeps only a weak one, so it may garbage-collect the task mid-flight, and nothing cancels it on shutdown",
                            cx.callee_display(c)
                        ),
                        format!("also keep `{name}` in a set until it finishes (`tasks.add({name})`, `{name}.add_done_callback(tasks.discard)`), or create it in an `asyncio.TaskGroup`"),
                    );
                    f.severity = Severity::Medium;
                    f
                }
            };
            out.push(f);
        }
    }
}

/// `asyncio.ensure_future(loop.run_in_executor(None, fn, ..))`: handed a
/// future rather than a coroutine, `ensure_future` returns that future and
/// starts no task. The work runs in the executor's thread, which holds it.
fn wraps_a_future(cx: &FileCx, c: &Call) -> bool {
    c.name == "ensure_future"
        && c.positional(0)
            .and_then(|a| cx.call(cx.model.strip(a)))
            .is_some_and(|inner| inner.name == "run_in_executor")
}

/// `asyncio.ensure_future(self.q.put(item))` where every queue the file
/// binds to `self.q` is built without a bound: `put` on a queue that is
/// never full returns in its first step and cannot fail, so the task is
/// done before anything could lose it (`put_nowait` says the same without
/// a task).
fn puts_on_unbounded_queue(cx: &FileCx, c: &Call) -> bool {
    let Some(queue) = c
        .positional(0)
        .or_else(|| c.kwarg("coro"))
        .and_then(|a| cx.call(cx.model.strip(a)))
        .filter(|put| put.name == "put")
        .and_then(|put| put.receiver)
        .and_then(|r| cx.model.dotted(r))
    else {
        return false;
    };
    cx.model.only_ever_assigned(&queue, |v| {
        cx.call(cx.model.strip(v)).is_some_and(|k| {
            cx.effect(k, Effect::Queue).is_some_and(|entry| {
                k.target
                    .as_deref()
                    .is_some_and(|t| t.starts_with("asyncio."))
                    && crate::util::unbounded_reason(cx.model, k, entry).is_some()
            })
        })
    })
}

/// The task runs a coroutine of the file that never suspends (no `await`,
/// `async for` or `async with`) and does no blocking I/O: bookkeeping that
/// runs to its end in its first step, so there is nothing in flight to
/// collect or cancel. (One that blocks on I/O, `requests.post(..)`, can
/// still fail where nobody looks.)
fn runs_in_one_step(cx: &FileCx, c: &Call) -> bool {
    c.positional(0)
        .or_else(|| c.kwarg("coro"))
        .and_then(|a| cx.call(cx.model.strip(a)))
        .and_then(|k| cx.callee_in_file(k))
        .is_some_and(|f| {
            let func = cx.func(f);
            func.is_async
                && !func.is_generator
                && crate::util::awaits_in_block(cx.model, &func.body).is_empty()
                && !cx.body_calls(f).any(|e| {
                    cx.call(e)
                        .is_some_and(|k| cx.effect(k, Effect::Blocking).is_some())
                })
        })
}

/// How the handle of the task created by `call` is lost, if it is: dropped
/// on the spot, kept in a local nobody reads, overwritten on every loop
/// iteration, or collected in a local list nobody drains.
enum Lost {
    /// Nothing sees how the task ends: how the handle is lost.
    Unobserved(String),
    /// Only a done callback added through this local sees it.
    OnlyCallback(String),
}

fn lost_how(cx: &FileCx, call: ExprId) -> Option<Lost> {
    if cx.is_discarded(call) {
        return Some(Lost::Unobserved("drops it".into()));
    }
    let f = cx.func_of(call);
    if f.0 == 0 {
        return None;
    }
    match cx.tree.expr_parent(call) {
        Parent::Stmt(s) => {
            let StmtKind::Assign { targets, value, .. } = &cx.stmt(s).kind else {
                return None;
            };
            if *value != Some(call) || targets.len() != 1 {
                return None;
            }
            let name = cx.model.name_of(targets[0])?;
            if cx.model.resolved(targets[0]).is_some() {
                return None; // a module variable or a global
            }
            // `nonlocal task` (or `global task`): the variable is the
            // enclosing function's, and its other closures read it (a
            // sibling `cleanup()` cancelling the task).
            let declared = crate::python::common::declared_outer(cx, f, name);
            let owner = match declared {
                None => f,
                Some(false) => return None,
                Some(true) => cx.tree.func_ancestors(cx.model, f).find(|&g| g != f)?,
            };
            let funcs = func_and_nested(cx, owner);
            let refs: Vec<ExprId> = name_refs(cx, &funcs, name)
                .into_iter()
                .filter(|&r| !is_store(cx, r))
                .collect();
            let reads: Vec<ExprId> = refs
                .iter()
                .copied()
                .filter(|&r| !is_bookkeeping_use(cx, r))
                .collect();
            if reads.is_empty() {
                if refs.iter().any(|&r| adds_done_callback(cx, r)) {
                    return Some(Lost::OnlyCallback(name.to_string()));
                }
                return Some(Lost::Unobserved(format!(
                    "keeps it only in `{name}`, which nothing reads"
                )));
            }
            // In a loop, a handle read only after the loop is the last one:
            // every earlier task was overwritten.
            let loop_stmt = crate::python::common::enclosing_loop(cx, s)?;
            let loop_span = cx.stmt(loop_stmt).span;
            if reads.iter().all(|&r| !loop_span.contains(cx.expr(r).span)) {
                return Some(Lost::Unobserved(format!(
                    "overwrites `{name}` on every iteration of the loop: only the last task is kept"
                )));
            }
            None
        }
        Parent::Expr(p) => {
            // `tasks.append(create_task(...))` into a local list nobody
            // drains.
            let outer = cx.call(p)?;
            if !matches!(outer.name.as_str(), "append" | "add") || !cx.is_discarded(p) {
                return None;
            }
            let recv = outer.receiver?;
            let name = cx.model.name_of(recv)?;
            if cx.model.resolved(recv).is_some() {
                return None;
            }
            let funcs = func_and_nested(cx, f);
            let drained = name_refs(cx, &funcs, name).into_iter().any(|r| {
                if is_store(cx, r) {
                    return false;
                }
                match cx.tree.expr_parent(r) {
                    Parent::Expr(a) => match &cx.expr(a).kind {
                        ExprKind::Attr { name: m, .. } => {
                            !matches!(m.as_str(), "append" | "add" | "extend" | "update")
                        }
                        _ => true,
                    },
                    _ => true,
                }
            });
            (!drained).then(|| {
                Lost::Unobserved(format!(
                    "collects it in `{name}`, which nothing awaits or drains"
                ))
            })
        }
        _ => None,
    }
}

/// `t.add_done_callback(cb)`: a callback will see how the task ends.
fn adds_done_callback(cx: &FileCx, r: ExprId) -> bool {
    let Parent::Expr(a) = cx.tree.expr_parent(r) else {
        return false;
    };
    matches!(&cx.expr(a).kind, ExprKind::Attr { name, .. } if name == "add_done_callback")
}

/// `t.add_done_callback(...)`, `t.set_name(...)`: uses of a task handle
/// that do not own it.
fn is_bookkeeping_use(cx: &FileCx, r: ExprId) -> bool {
    let Parent::Expr(a) = cx.tree.expr_parent(r) else {
        return false;
    };
    matches!(&cx.expr(a).kind, ExprKind::Attr { name, .. } if matches!(name.as_str(), "add_done_callback" | "set_name" | "get_name"))
}

/// `self.create_task(..)` in a class that does not define it here: the
/// method comes from a base class in another file, a spawner of the
/// project's own (asyncio puts `create_task` on loops and task groups, not
/// on arbitrary objects), which usually keeps the tasks it starts. Its
/// body is out of sight, so what happens to the handle is unknown.
fn inherited_spawner(cx: &FileCx, c: &Call) -> bool {
    let Some(r) = c.receiver else { return false };
    if !matches!(cx.model.name_of(r), Some("self" | "cls")) || cx.callee_in_file(c).is_some() {
        return false;
    }
    let class = cx
        .tree
        .func_ancestors(cx.model, cx.func_of(r))
        .find_map(|f| cx.func(f).class.clone());
    let Some(class) = class else { return false };
    // An event loop's own class (`class SelectorEventLoop(BaseEventLoop)`)
    // inherits asyncio's `create_task`, which keeps only a weak reference.
    if class
        .rsplit('.')
        .next()
        .is_some_and(|n| n.ends_with("Loop"))
    {
        return false;
    }
    !cx.model.function_ids().any(|f| {
        let func = cx.func(f);
        func.name == c.name && func.class.as_ref() == Some(&class)
    })
}

/// A keyword asyncio's spawners do not take
/// (`self.looper.create_task(target=job, name="poll")`), or more than the
/// one positional coroutine they take (`store.create_task(task_id,
/// "pending")`, a row in a table): a function of the project's own under
/// the same name, whose body decides what happens (asyncio's would raise
/// `TypeError`).
fn takes_foreign_keywords(c: &Call) -> bool {
    c.args.iter().filter(|a| a.name.is_none()).count() > 1
        || c.args.iter().any(|a| {
            a.name.as_deref().is_some_and(|n| {
                !matches!(
                    n,
                    "coro" | "coro_or_future" | "name" | "context" | "loop" | "eager_start"
                )
            })
        })
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
        // python-telegram-bot's `context.application.create_task(..)`
        // keeps the task, reports its errors to the error handlers and
        // awaits it when the application stops.
        let telegram_app = (last == "application" || last == "app")
            && c.name == "create_task"
            && cx
                .model
                .imports
                .iter()
                .any(|i| i.target.split('.').next() == Some("telegram"));
        return last == "tg"
            || telegram_app
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
        r#"
import asyncio

async def fan_out(urls):
    for u in urls:
        t = asyncio.create_task(fetch(u))  # expect
    await t

async def fire(evt):
    task = asyncio.ensure_future(send(evt))  # expect
    task.add_done_callback(lambda t: None)
    return "ok"

async def collect(items):
    pending = []
    for it in items:
        pending.append(asyncio.create_task(handle(it)))  # expect
    return len(items)
"#,
        r#"
from .base import Owned

class Channel(Owned):
    async def on_deliver(self, consumer, message):
        self.loop.create_task(consumer(message))  # expect

class SelectorEventLoop(base_events.BaseEventLoop):
    def _accept(self, conn):
        self.create_task(self._serve(conn))  # expect
"#,
        r#"
import asyncio


class HttpTransport:
    def pause_reading(self):
        asyncio.ensure_future(self._stop_reader())  # expect

    async def _stop_reader(self):
        self._reader_task.cancel()
        await asyncio.sleep(0)
        self._reader_task = None
"#,
        r#"
import asyncio

import requests


class Shop:
    async def place(self, order):
        asyncio.create_task(self.notify_warehouse(order))  # expect
        return order.id

    async def notify_warehouse(self, order):
        requests.post("https://warehouse.example/notify", json={"id": order.id})
"#,
        r#"
class Device:
    def __init__(self, central):
        self._central = central

    async def refresh(self):
        self._central.loop.create_task(self.poll(), name="poll")  # expect

    async def poll(self):
        await self._central.fetch()
"#,
        r#"
import asyncio


async def flush(path, data):
    await asyncio.sleep(0.1)
    await asyncio.get_running_loop().run_in_executor(None, path.write_bytes, data)


class Cache:
    def __init__(self, path):
        self._path = path

    def add(self, key, data):
        asyncio.ensure_future(flush(self._path / key, data))  # expect
"#,
        r#"
import asyncio


class Reader:
    def __init__(self, size):
        self.q = asyncio.Queue(maxsize=size)

    def data_received(self, data):
        asyncio.ensure_future(self.q.put(data))  # expect
"#,
        r#"
import asyncio

async def serve(conn):
    watchdog = None

    async def start_watchdog():
        # The enclosing function's variable: nothing there reads it either.
        nonlocal watchdog
        watchdog = asyncio.create_task(check_idle(conn))  # expect

    await start_watchdog()
    await conn.run()
"#,
        r#"
import asyncio


def emit(handler, data):
    result = handler(data)
    if asyncio.iscoroutine(result):
        task = asyncio.get_running_loop().create_task(result)  # expect
        del task  # unbinding the name is not reading it
"#,
    ],
    pass: &[
        r#"
from telegram.ext import ContextTypes


async def on_signup(update, context: ContextTypes.DEFAULT_TYPE):
    # The application keeps the task and awaits it when it stops.
    context.application.create_task(sync_sheet(update.effective_user.id))


async def sync_sheet(user_id):
    await sheets.append_row([user_id])
"#,
        r#"
import asyncio

async def serve(conn):
    watchdog = None

    async def cleanup():
        if watchdog:
            watchdog.cancel()
        await conn.close()

    async def start_watchdog():
        nonlocal watchdog
        watchdog = asyncio.create_task(check_idle(conn, cleanup))

    await start_watchdog()
    try:
        await conn.run()
    finally:
        await cleanup()
"#,
        r#"
import asyncio


class Reader:
    def __init__(self):
        self.q = asyncio.Queue()

    def data_received(self, data):
        asyncio.ensure_future(self.q.put(data))
"#,
        r#"
import asyncio


def writeback(path, data):
    with open(path, "wb") as f:
        f.write(data)


class Cache:
    def __init__(self, path):
        self._path = path
        self._memory = {}

    def add(self, key, data):
        self._memory[key] = data
        asyncio.ensure_future(asyncio.get_event_loop().run_in_executor(None, writeback, self._path / key, data))
"#,
        r#"
import asyncio


class HttpTransport:
    def pause_reading(self):
        asyncio.ensure_future(self._stop_reader())

    async def _stop_reader(self):
        if self._reader_task:
            self._reader_task.cancel()
        self._reader_task = None
"#,
        r#"
from .base import Owned

class Channel(Owned):
    async def on_deliver(self, consumer, message):
        self.create_task(consumer(message))
"#,
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
        r#"
import asyncio

async def fan_out(urls):
    tasks = []
    for u in urls:
        t = asyncio.create_task(fetch(u))
        tasks.append(t)
    return await asyncio.gather(*tasks)

async def each(urls):
    for u in urls:
        t = asyncio.create_task(fetch(u))
        await t

async def keep(self, coro):
    t = asyncio.create_task(coro)
    self._tasks.add(t)
    t.add_done_callback(self._tasks.discard)

async def named():
    t = asyncio.create_task(work())
    t.set_name("worker")
    return t

async def comp(urls):
    tasks = [asyncio.create_task(fetch(u)) for u in urls]
    done, pending = await asyncio.wait(tasks)
"#,
        r#"
class Device:
    def __init__(self, central):
        self._central = central

    async def refresh(self):
        self._central.looper.create_task(target=self.poll, name="poll")

    async def poll(self):
        await self._central.fetch()
"#,
        r#"
from waflib.TaskGen import feature


# A build tool's task generator: `create_task` names a build step, it
# starts no asyncio task.
@feature("docs")
def process_docs(self):
    self.create_task("sphinx_build")
    self.create_task("copy", self.source, self.target)
"#,
        r#"
class TaskService:
    def __init__(self, store):
        self.task_store = store

    async def submit(self, task_id, query):
        # The project's own store: it inserts a row, it starts no task.
        self.task_store.create_task(task_id, query)
        return task_id
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(DiscardedTask);

    /// A done callback sees the outcome; what is still wrong is the missing
    /// strong reference, said as such and at a lower severity.
    #[test]
    fn a_done_callback_observes_but_does_not_keep_the_task() {
        static RULE: DiscardedTask = DiscardedTask;
        let src = r#"
import asyncio

def report(task):
    if task.exception() is not None:
        print(task.exception())

async def fire(coro):
    task = asyncio.ensure_future(coro())
    task.add_done_callback(report)

async def drop(coro):
    task = asyncio.ensure_future(coro())
    task.set_name("x")
"#;
        let found = crate::testing::run_example(&RULE, Language::Python, src).0;
        assert_eq!(found.len(), 2, "{found:#?}");
        let (observed, lost) = (&found[0].1, &found[1].1);
        assert_eq!(observed.severity, Severity::Medium);
        assert!(
            observed.message.contains("done callback")
                && !observed.message.contains("never observed"),
            "{}",
            observed.message
        );
        assert_eq!(lost.severity, Severity::High);
        assert!(
            lost.message.contains("which nothing reads"),
            "{}",
            lost.message
        );
    }

    /// Only an async function can await the task or open a task group.
    #[test]
    fn a_sync_caller_is_offered_only_a_set() {
        let src = r#"
import asyncio

def on_done(fut):
    asyncio.get_running_loop().create_task(cleanup())

async def handle():
    asyncio.create_task(audit())
"#;
        let fixes = crate::testing::fixes(&DiscardedTask, Language::Python, src);
        assert_eq!(fixes.len(), 2, "{fixes:#?}");
        assert!(
            !fixes[0].contains("TaskGroup") && fixes[0].contains("tasks.add"),
            "{fixes:#?}"
        );
        assert!(fixes[1].contains("TaskGroup"), "{fixes:#?}");
    }
}
