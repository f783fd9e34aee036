//! PY008: task handles kept in a long-lived set that never forgets them.

use crate::context::FileCx;
use crate::python::common::{deleted_from, is_task_spawn, module_vars, shared_state};
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct TaskSetLeak;

pub static META: RuleMeta = RuleMeta {
    id: "PY008",
    name: "task-set-never-pruned",
    category: Category::TaskSetLeak,
    severity: Severity::Medium,
    languages: &[Language::Python],
    summary: "Tasks are added to a module-level or `self` collection that nothing ever removes them from.",
    docs: r#"
A task created with `create_task`/`ensure_future` is added to a set, list
or dict that lives at module level or on `self`, and no code in the file
removes finished tasks from it: no `add_done_callback(tasks.discard)`
(nor a callback of a base class in another module named for it,
`task.add_done_callback(self._remove_task)`), no
`discard`/`remove`/`pop`/`clear`, no reassignment (also as one target
of a swap: `tasks, self._tasks = self._tasks, []`). A dict entry under a
fixed key (a literal, or an attribute of `self`: `self._tasks[self.manager]
= task`) is one slot that each new task replaces, and is not reported;
so is an entry whose slot the function looks at first (`task =
self._tasks.get(hub_id); if task is not None and not task.done(): return`,
`if key not in cache:`): one task per key, replaced or swapped for its
result;
nor is a task added in `__init__` (`for _ in range(n):
self._workers.append(create_task(self._worker()))`), or in a private
helper that only `__init__` calls (`self._create_ui()`): a fixed pool,
made once for each object. Nor are the workers a method that starts or
connects the object adds (`start`, `_connect_to_server`, `open`,
`initialize`, `__aenter__`, `setup_*`, `launch`) when the file cancels every task of the collection (`for
task in self._tasks: task.cancel()`, also through a local joining it to
others, `all_tasks = self.readers + self.writers`) or gathers it whole
when it stops (`await asyncio.gather(*self._workers)`): a fixed set per
connection; nor those an object's `run()` or `main()` adds one by one,
outside any loop, when the file cancels each of them the same way; nor
a collection the file both gathers whole (`await
asyncio.gather(*self._tasks)`, or `*self._tasks.values()` of a dict)
and cancels task by task: the object
supervises one batch of work, reaped together.

## Why

Keeping a strong reference to background tasks is the right instinct (the
loop itself only keeps weak ones), but a collection that only grows holds
every task object, its coroutine frame and its result or exception for the
life of the process. In a long-running service that is a slow memory leak
that looks like an application leak, and the collection is useless for
shutdown because it is mostly finished tasks.

## Example

```python
import asyncio

_background = set()

def spawn(coro):
    task = asyncio.create_task(coro)
    _background.add(task)
    return task
```

## Fix

Let each task remove itself when it finishes.

```python
import asyncio

_background = set()

def spawn(coro):
    task = asyncio.create_task(coro)
    _background.add(task)
    task.add_done_callback(_background.discard)
    return task
```
"#,
    examples: &EXAMPLES,
};

/// Methods that take something out of a collection.
const REMOVALS: &[&str] = &[
    "discard",
    "remove",
    "pop",
    "popitem",
    "popleft",
    "clear",
    "difference_update",
    "intersection_update",
];

impl Rule for TaskSetLeak {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        let globals = module_vars(cx.model);
        let mut pruned: Option<HashSet<String>> = None;
        for (id, c) in cx.calls_named(&["add", "append"]) {
            let e = cx.expr(id);
            let (Some(coll), Some(value)) = (c.receiver, c.positional(0)) else {
                continue;
            };
            // Filled while the object is built (`for _ in range(n):
            // self._workers.append(create_task(self._worker()))` in
            // `__init__`): a fixed pool, made once per object.
            if !is_task_value(cx, value) || runs_at_construction(cx, cx.func_of(id), 2) {
                continue;
            }
            let Some(key) = shared_state(cx, &globals, coll) else {
                continue;
            };
            // A field declared weak (`tasks: WeakSet = field(default_factory=
            // WeakSet)`) forgets finished tasks by itself.
            if cx.sema.type_of(coll).is_some_and(is_weak_collection) {
                continue;
            }
            let pruned = pruned.get_or_insert_with(|| pruned_collections(cx, &globals));
            if pruned.contains(&key)
                || started_for_the_connection(cx, cx.func_of(id), &key)
                || started_by_the_run(cx, id, &key)
                || supervised_whole(cx, &key)
                || removed_by_inherited_callback(cx, cx.func_of(id), value)
            {
                continue;
            }
            out.push(cx.finding(
                &META,
                e.span,
                format!(
                    "task added to `{key}`, which nothing in this file ever removes tasks from: every finished task, its frame and its result stay referenced for the life of the process"
                ),
                format!(
                    "call `task.add_done_callback({key}.discard)` right after adding it (or remove it when it is awaited)"
                ),
            ));
        }
        // `self._tasks[key] = task` into a dict that is never popped.
        for s in 0..cx.model.stmts.len() as u32 {
            let s = StmtId(s);
            let StmtKind::Assign {
                targets,
                value: Some(v),
                op: AssignOp::Plain,
            } = &cx.stmt(s).kind
            else {
                continue;
            };
            let [t] = targets.as_slice() else { continue };
            let ExprKind::Index { obj, index } = &cx.expr(*t).kind else {
                continue;
            };
            if matches!(cx.tree.stmt_parent(s), Parent::Detached)
                || !is_task_value(cx, *v)
                || fixed_slot(cx, *index)
                || reads_the_slot_first(cx, s, *obj, *index)
                || held_in_a_list(cx, *obj)
            {
                continue;
            }
            let Some(key) = shared_state(cx, &globals, *obj) else {
                continue;
            };
            let pruned = pruned.get_or_insert_with(|| pruned_collections(cx, &globals));
            if pruned.contains(&key) || supervised_whole(cx, &key) {
                continue;
            }
            out.push(cx.finding(
                &META,
                cx.stmt(s).span,
                format!(
                    "task stored in `{key}`, which nothing in this file ever removes entries from: finished tasks accumulate for the life of the process"
                ),
                format!("remove the entry when the task finishes (`task.add_done_callback(lambda _: {key}.pop(k, None))`)"),
            ));
        }
    }
}

/// A key that names one fixed slot: a literal (`self._tasks["heartbeat"]`)
/// or an attribute of `self` (`self._tasks[self.manager]`). A new task
/// replaces the one before it, so the dict does not grow.
fn fixed_slot(cx: &FileCx, key: ExprId) -> bool {
    let key = cx.model.strip(key);
    matches!(cx.expr(key).kind, ExprKind::Literal(_))
        || cx.model.dotted(key).is_some_and(|d| {
            d.strip_prefix("self.")
                .is_some_and(|rest| !rest.contains('.'))
        })
}

/// Every value the file gives the collection is a list (`self.tasks =
/// [None] * worker_count`, `[]`): a store by index overwrites a slot of a
/// list and never adds one, so the tasks cannot pile up through it.
fn held_in_a_list(cx: &FileCx, coll: ExprId) -> bool {
    let Some(name) = cx.model.dotted(coll) else {
        return false;
    };
    let m = cx.model;
    let is_list = |v: ExprId| {
        matches!(
            &m.expr(m.strip(v)).kind,
            ExprKind::Collection {
                kind: CollKind::List,
                ..
            } | ExprKind::Comprehension {
                kind: CollKind::List,
                ..
            }
        )
    };
    crate::util::every_assigned_value(
        m,
        |t| m.dotted(t).as_deref() == Some(name.as_str()),
        |v| match &m.expr(m.strip(v)).kind {
            ExprKind::Binary {
                op: BinOp::Mul,
                left,
                right,
            } => is_list(*left) || is_list(*right),
            _ => is_list(v),
        },
    )
}

/// `task = self._tasks.get(hub_id); if task is not None and not
/// task.done(): return` (or `if domain not in self._tasks:`, `self._tasks[key]`)
/// before `self._tasks[hub_id] = create_task(..)`: the function looks at
/// the key's slot before filling it, so each key holds one task, replaced
/// (or swapped for its result) rather than piled up.
fn reads_the_slot_first(cx: &FileCx, s: StmtId, dict: ExprId, key: ExprId) -> bool {
    let (Some(dict), Some(key)) = (cx.model.dotted(dict), cx.model.dotted(key)) else {
        return false;
    };
    let at = cx.stmt(s).span.start;
    let same = |e: ExprId, want: &str| cx.model.dotted(e).as_deref() == Some(want);
    cx.body_exprs(cx.tree.stmt_func(s)).iter().any(|&e| {
        cx.expr(e).span.start < at
            && match &cx.expr(e).kind {
                ExprKind::Binary {
                    op: BinOp::In | BinOp::NotIn,
                    left,
                    right,
                } => same(*left, &key) && same(*right, &dict),
                // A read of the entry, not another store into it.
                ExprKind::Index { obj, index } => {
                    same(*obj, &dict)
                        && same(*index, &key)
                        && !matches!(cx.tree.expr_parent(e), Parent::Stmt(p)
                            if matches!(&cx.stmt(p).kind, StmtKind::Assign { targets, .. } if targets.contains(&e)))
                }
                _ => cx.call(e).is_some_and(|c| {
                    c.name == "get"
                        && c.receiver.is_some_and(|r| same(r, &dict))
                        && c.positional(0).is_some_and(|k| same(k, &key))
                }),
            }
    })
}

/// A task: a spawn call, or a local assigned from one in the same function.
fn is_task_value(cx: &FileCx, v: ExprId) -> bool {
    let v = cx.model.strip(v);
    if let Some(c) = cx.call(v) {
        return is_task_spawn(cx, c);
    }
    let Some(name) = cx.model.name_of(v) else {
        return false;
    };
    let f = cx.func_of(v);
    cx.body_exprs(f)
        .iter()
        .copied()
        .filter_map(|e| cx.call(e).map(|c| (e, c)))
        .any(|(e, c)| {
            is_task_spawn(cx, c)
                && match cx.tree.expr_parent(e) {
                    Parent::Stmt(s) => matches!(&cx.stmt(s).kind,
                        StmtKind::Assign { targets, .. }
                            if targets.iter().any(|&t| cx.model.name_of(t) == Some(name))),
                    _ => false,
                }
        })
}

/// `task.add_done_callback(self._remove_task)` in the same function, where
/// `_remove_task` is no method of this file (a base class's, from another
/// module) and is named for taking the task out: the base class prunes.
fn removed_by_inherited_callback(cx: &FileCx, f: FuncId, value: ExprId) -> bool {
    let Some(task) = cx.model.name_of(cx.model.strip(value)) else {
        return false;
    };
    cx.body_calls(f).any(|e| {
        let Some(c) = cx.call(e).filter(|c| c.name == "add_done_callback") else {
            return false;
        };
        let Some(cb) = c.positional(0) else {
            return false;
        };
        let on_task = c.receiver.and_then(|r| cx.model.name_of(r)) == Some(task);
        let inherited = match &cx.expr(cb).kind {
            ExprKind::Attr { obj, name, .. } => {
                cx.model.name_of(*obj) == Some("self")
                    && ["remove", "discard", "untrack", "forget"]
                        .iter()
                        .any(|w| name.to_ascii_lowercase().contains(w))
                    && !cx
                        .model
                        .function_ids()
                        .any(|g| cx.func(g).name == *name && cx.func(g).class.is_some())
            }
            _ => false,
        };
        on_task && inherited
    })
}

/// A collection of weak references, which drops a task once nothing else
/// holds it.
fn is_weak_collection(ty: &str) -> bool {
    matches!(ty, "weakref.WeakSet" | "weakref.WeakValueDictionary")
}

/// Shared collections something removes entries from (or rebuilds).
fn pruned_collections(cx: &FileCx, globals: &HashSet<String>) -> HashSet<String> {
    let mut out = HashSet::new();
    for (i, e) in cx.model.exprs.iter().enumerate() {
        let id = ExprId(i as u32);
        if matches!(cx.tree.expr_parent(id), Parent::Detached) {
            continue;
        }
        match &e.kind {
            // `tasks.discard` called or passed as a callback.
            ExprKind::Attr { obj, name, .. } if REMOVALS.contains(&name.as_str()) => {
                if let Some(k) = shared_state(cx, globals, *obj) {
                    out.insert(k);
                }
            }
            // `weakref.WeakSet()` forgets by itself.
            ExprKind::Call(c) if c.target.as_deref().is_some_and(is_weak_collection) => {
                if let Parent::Stmt(s) = cx.tree.expr_parent(id)
                    && let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind
                {
                    for &t in targets {
                        if let Some(k) = shared_state_any(cx, globals, t) {
                            out.insert(k);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    // Reassignments and in-place subtraction outside `__init__` and module
    // code.
    for s in 0..cx.model.stmts.len() as u32 {
        let s = StmtId(s);
        let StmtKind::Assign { targets, op, .. } = &cx.stmt(s).kind else {
            continue;
        };
        let f = cx.tree.stmt_func(s);
        if f.0 == 0 || cx.func(f).name == "__init__" {
            continue;
        }
        if matches!(op, AssignOp::Augmented(_)) || matches!(op, AssignOp::Plain) {
            // `tasks, self._tasks = self._tasks, []` swaps the collection
            // out as one of a tuple's targets.
            let flat = targets.iter().flat_map(|&t| match &cx.expr(t).kind {
                ExprKind::Collection { elems, .. } => elems.clone(),
                _ => vec![t],
            });
            for t in flat {
                if matches!(cx.expr(t).kind, ExprKind::Index { .. }) {
                    continue;
                }
                if let Some(k) = shared_state(cx, globals, t) {
                    out.insert(k);
                }
            }
        }
    }
    // `del tasks[k]`.
    for t in deleted_from(cx) {
        if let Some(k) = shared_state_any(cx, globals, t) {
            out.insert(k);
        }
    }
    out
}

/// Like `shared_state`, also for module-level assignments.
fn shared_state_any(cx: &FileCx, globals: &HashSet<String>, t: ExprId) -> Option<String> {
    if cx.func_of(t).0 == 0 {
        return cx.model.name_of(t).map(str::to_string);
    }
    shared_state(cx, globals, t)
}

/// The object's long-lived workers, started when it starts or connects
/// (`start`, `_connect_to_server`, `open`, `initialize`, `__aenter__`,
/// `setup_lifecycle_tasks`, `launch`) and all
/// cancelled by the file when it stops (`for task in self._tasks:
/// task.cancel()`): a fixed set per connection, not one per request.
fn started_for_the_connection(cx: &FileCx, f: FuncId, key: &str) -> bool {
    let name = cx.func(f).name.trim_matches('_').to_ascii_lowercase();
    let lifecycle = [
        "start", "connect", "open", "aenter", "init", "setup", "set_up", "launch", "boot",
    ]
    .iter()
    .any(|w| name.starts_with(w));
    // The collection itself, or a local joining it to others
    // (`all_tasks = self.inference_workers + self.calc_workers`).
    let walks_it = |e: ExprId| {
        cx.model.dotted(e).as_deref() == Some(key)
            || cx.model.name_of(e).is_some_and(|n| {
                cx.model.only_ever_assigned(n, |v| {
                    unsnarl_model::walk::exprs_under(cx.model, v)
                        .into_iter()
                        .any(|x| cx.model.dotted(x).as_deref() == Some(key))
                        && matches!(
                            cx.expr(cx.model.strip(v)).kind,
                            ExprKind::Binary { op: BinOp::Add, .. }
                        )
                })
            })
    };
    // Stopped by cancelling each, or by a flag and then a gather of the
    // whole set (`self._shutdown = True` .. `gather(*self._workers)`).
    lifecycle
        && ((0..cx.model.stmts.len() as u32)
            .any(|i| crate::python::common::cancels_each_of(cx, StmtId(i)).is_some_and(walks_it))
            || gathers_whole(cx, key))
}

/// The object's `run()` (or `main()`) adds its workers one by one, outside
/// any loop (`self.tasks.append(create_task(self.receiver.start()))`), and
/// the file cancels each task of the collection when it stops: a fixed
/// set for the one run of the object.
fn started_by_the_run(cx: &FileCx, add: ExprId, key: &str) -> bool {
    let f = cx.func_of(add);
    let name = cx.func(f).name.trim_matches('_');
    if !matches!(name, "run" | "main") || cx.func(f).class.is_none() {
        return false;
    }
    let in_loop = cx
        .tree
        .enclosing_stmt(add)
        .is_some_and(|s| crate::python::common::enclosing_loop(cx, s).is_some());
    !in_loop
        && (0..cx.model.stmts.len() as u32).any(|i| {
            crate::python::common::cancels_each_of(cx, StmtId(i))
                .is_some_and(|e| cx.model.dotted(e).as_deref() == Some(key))
        })
}

/// The file both waits for the whole collection (`await
/// asyncio.gather(*self._tasks)`) and cancels each of its tasks: the
/// object supervises one batch of work (a streamed result, a run), whose
/// tasks it reaps together, not a set that grows with each request.
fn supervised_whole(cx: &FileCx, key: &str) -> bool {
    gathers_whole(cx, key)
        && (0..cx.model.stmts.len() as u32).any(|i| {
            crate::python::common::cancels_each_of(cx, StmtId(i))
                .is_some_and(|e| names_the_tasks(cx, e, key))
        })
}

/// The file awaits the whole collection at once (`asyncio.gather(*self._tasks)`,
/// or `*self._tasks.values()` of a dict).
fn gathers_whole(cx: &FileCx, key: &str) -> bool {
    cx.calls_to(&["asyncio.gather", "asyncio.tasks.gather"])
        .into_iter()
        .any(|(_, c)| {
            c.args
                .iter()
                .any(|a| a.spread && names_the_tasks(cx, a.value, key))
        })
}

/// `e` is the collection, or the tasks of a dict of them
/// (`self._tasks.values()`).
fn names_the_tasks(cx: &FileCx, e: ExprId, key: &str) -> bool {
    let e = cx.model.strip(e);
    cx.model.dotted(e).as_deref() == Some(key)
        || cx.call(e).is_some_and(|k| {
            k.name == "values"
                && k.args.is_empty()
                && k.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some(key)
        })
}

/// `f` is `__init__`, or a private helper of the file called only from
/// such a function (`self._create_ui()` in `__init__`), `depth` helpers
/// down: it runs once per object, while the object is built.
fn runs_at_construction(cx: &FileCx, f: FuncId, depth: u32) -> bool {
    cx.func(f).name == "__init__"
        || (depth > 0
            && crate::python::common::private_helper_called_only(cx, f, |call| {
                runs_at_construction(cx, cx.func_of(call), depth - 1)
            }))
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import asyncio

_background = set()

def spawn(coro):
    t = asyncio.create_task(coro)
    _background.add(t)  # expect
    return t
"#,
        r#"
import asyncio

class Dispatcher:
    def __init__(self):
        self._tasks = []
        self._by_id = {}

    def dispatch(self, event):
        self._tasks.append(asyncio.create_task(self.handle(event)))  # expect

    def track(self, key, coro):
        self._by_id[key] = asyncio.ensure_future(coro)  # expect

    def track_once(self, key, other, coro):
        if other in self._by_id:
            return
        self._by_id[key] = asyncio.ensure_future(coro)  # expect

    def connect(self, cmd):
        self._tasks.append(asyncio.create_task(self.handle(cmd)))  # expect

    def on_command(self, cmd):
        if cmd.kind == "connect":
            self._by_id[cmd.token] = asyncio.ensure_future(self.handle(cmd))  # expect
        else:
            self._by_id[cmd.token] = asyncio.ensure_future(self.handle(cmd))  # expect

    async def handle(self, event):
        await asyncio.sleep(0)
"#,
        r#"
import asyncio


class HaClient:
    def __init__(self, manager):
        self.manager = manager
        self._client_tasks = {}

    async def watch(self, client):
        self._client_tasks[client] = asyncio.create_task(self.manager.watch(client))  # expect
"#,
        r#"
import asyncio

class App:
    def __init__(self, loop):
        self.loop = loop
        self.tasks = []
        self._create_ui()

    def _create_ui(self):
        self.tasks.append(self.loop.create_task(self._monitor()))  # expect

    def on_click(self):
        self._create_ui()

    async def _monitor(self):
        while True:
            await asyncio.sleep(1)
"#,
    ],
    pass: &[
        r#"
import asyncio


class Client:
    def __init__(self, reader, writer):
        self._reader = reader
        self._writer = writer
        self._io_tasks = []
        self._workers = []
        self._spares = []
        self.outbox = asyncio.Queue(maxsize=100)

    async def _connect_to_server(self):
        self._io_tasks.append(asyncio.create_task(self._read_loop()))
        self._io_tasks.append(asyncio.create_task(self._send_loop()))

    async def start(self):
        self._workers.append(asyncio.create_task(self._send_loop()))

    def stop(self):
        for task in self._io_tasks:
            task.cancel()
        every = self._workers + self._spares
        for task in every:
            task.cancel()

    async def _read_loop(self):
        while await self._reader.readline():
            pass

    async def _send_loop(self):
        while True:
            self._writer.write(await self.outbox.get())
"#,
        r#"
import asyncio

dns_cache = {}


class Callbacks:
    def __init__(self):
        self._verify_tasks = {}
        self._parsers = {}

    def on_change(self, hub_id, proxy):
        task = self._verify_tasks.get(hub_id)
        if task is not None and not task.done():
            return
        self._verify_tasks[hub_id] = asyncio.create_task(self._check(hub_id, proxy))

    async def can_fetch(self, domain, url):
        if domain not in self._parsers:
            self._parsers[domain] = asyncio.create_task(self._fetch_rules(domain))
        rules = self._parsers[domain]
        if isinstance(rules, asyncio.Task):
            rules = await rules
            self._parsers[domain] = rules
        return rules.allows(url)

    async def _check(self, hub_id, proxy):
        await proxy.ping(hub_id)

    async def _fetch_rules(self, domain):
        await asyncio.sleep(0)


async def resolve(hostname, lookup):
    if hostname in dns_cache:
        return await dns_cache[hostname]
    task = asyncio.create_task(lookup(hostname))
    dns_cache[hostname] = task
    return await task
"#,
        r#"
import asyncio

class App:
    def __init__(self, loop):
        self.loop = loop
        self.tasks = []
        self._create_ui()

    def _create_ui(self):
        self.tasks.append(self.loop.create_task(self._monitor()))

    async def _monitor(self):
        while True:
            await asyncio.sleep(1)
"#,
        r#"
import asyncio

# A fixed pool of workers, started once when the producer is built.
class Producer:
    def __init__(self, size):
        self.input = asyncio.Queue(maxsize=100)
        self._workers = []
        for _ in range(size):
            self._workers.append(asyncio.create_task(self._worker()))

    async def _worker(self):
        while True:
            msg = await self.input.get()
            if msg is None:
                return
            await self.send(msg)
"#,
        r#"
import asyncio

class Scoreboard:
    def __init__(self):
        self._tasks = []

    async def activate(self, driver):
        self._tasks.append(asyncio.create_task(self._pump(driver)))

    async def _stop_tasks(self):
        # The list is swapped out for an empty one and the old tasks reaped.
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
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

class Pool:
    def __init__(self):
        self._tasks = set()
        self._jobs = {}

    def start(self, coro):
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        return task

    def track(self, key, coro):
        self._jobs[key] = asyncio.create_task(coro)

    async def close(self):
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
        for key in list(self._jobs):
            del self._jobs[key]
"#,
        r#"
import asyncio

async def local_only(items):
    tasks = set()
    for it in items:
        tasks.add(asyncio.create_task(work(it)))
    await asyncio.gather(*tasks)

class Registry:
    def __init__(self):
        self._seen = set()

    def note(self, name):
        self._seen.add(name)
"#,
        r#"
import asyncio


class HaClient:
    def __init__(self, manager, reconciliator):
        self.manager = manager
        self.reconciliator = reconciliator
        self._manager_task = {}
        self._reconciliator_task = {}

    async def start(self):
        self._manager_task[self.manager] = asyncio.create_task(self.manager.run())
        self._reconciliator_task["main"] = asyncio.create_task(self.reconciliator.run())
"#,
        r#"
import asyncio


class Agent:
    def __init__(self, bus):
        self.bus = bus
        self.running = False
        self.background_tasks = set()

    async def initialize(self):
        await self.bus.start()
        self.running = True
        task = asyncio.create_task(self._loop())
        self.background_tasks.add(task)

    async def _loop(self):
        while self.running:
            await self.bus.poll()

    async def shutdown(self):
        self.running = False
        for task in self.background_tasks:
            task.cancel()
        await asyncio.gather(*self.background_tasks, return_exceptions=True)
"#,
        r#"
import asyncio

from hyperforge.server.session import SessionManager


class AgentSessions(SessionManager):
    def activate(self, topic):
        task = asyncio.create_task(self.run(topic))
        task.add_done_callback(self._remove_task)
        self.tasks.append(task)
"#,
        r#"
import asyncio


class WorkerPool:
    def __init__(self, worker_count):
        self.worker_count = worker_count
        self.tasks = [None] * worker_count

    async def startup(self):
        for i in range(self.worker_count):
            self.tasks[i] = asyncio.create_task(self.work(i))

    async def work(self, slot):
        try:
            await self.handle_one()
        finally:
            self.tasks[slot] = asyncio.get_running_loop().create_task(self.work(slot))

    async def shutdown(self):
        for task in self.tasks:
            task.cancel()
"#,
        r#"
import asyncio
from dataclasses import dataclass, field
from weakref import WeakSet


@dataclass
class Bot:
    tasks: WeakSet = field(init=False, default_factory=WeakSet)

    async def handle(self, message):
        await asyncio.sleep(0)

    def dispatch(self, message):
        self.tasks.add(asyncio.ensure_future(self.handle(message)))
"#,
        r#"
# One long-lived task per start-up, all cancelled at shutdown.
import asyncio

_tasks = []


def setup_lifecycle_tasks(enabled):
    if enabled:
        _tasks.append(asyncio.create_task(auto_cleanup()))


def shutdown_lifecycle_tasks():
    for task in _tasks:
        task.cancel()


async def auto_cleanup():
    while True:
        await asyncio.sleep(24 * 3600)
"#,
        r#"
import asyncio


class AgentRunner:
    def __init__(self, agent, receiver):
        self.agent = agent
        self.receiver = receiver
        self.tasks = []
        self.stopping = asyncio.Event()

    async def run(self):
        receiver_task = asyncio.create_task(self.receiver.start())
        self.tasks.append(receiver_task)
        agent_task = asyncio.create_task(self.agent.start())
        self.tasks.append(agent_task)
        try:
            await self.stopping.wait()
        finally:
            await self.shutdown()

    async def shutdown(self):
        for task in self.tasks:
            if not task.done():
                task.cancel()
"#,
        r#"
import asyncio


class StreamedResult:
    def __init__(self):
        self._tasks = []
        self._queue = asyncio.Queue(maxsize=16)

    def add_segment(self, segment):
        self._tasks.append(asyncio.create_task(self._render(segment)))

    async def finish(self):
        await asyncio.gather(*self._tasks)
        await self._queue.put(None)

    def cleanup(self):
        for task in self._tasks:
            if not task.done():
                task.cancel()

    async def _render(self, segment):
        await self._queue.put(segment)
"#,
        r#"
import asyncio


class Executor:
    def __init__(self, nodes):
        self._nodes = nodes
        self._workers = {}

    async def run(self):
        for name, node in self._nodes.items():
            for i in range(node.workers):
                self._workers[f"{name}_{i}"] = asyncio.create_task(node.consume())
        for node in self._nodes.values():
            await node.queue.join()
        # The whole batch is cancelled and reaped together.
        for task in self._workers.values():
            task.cancel()
        await asyncio.gather(*self._workers.values(), return_exceptions=True)
"#,
        r#"
import asyncio


class Scraper:
    def __init__(self, workers):
        self.max_concurrent = workers
        self._workers = []
        self._shutdown = False

    async def start(self):
        # A fixed pool, stopped by the flag and gathered whole.
        for i in range(self.max_concurrent):
            self._workers.append(asyncio.create_task(self._worker(i)))

    async def stop(self):
        self._shutdown = True
        await asyncio.gather(*self._workers, return_exceptions=True)

    async def _worker(self, i):
        while not self._shutdown:
            await asyncio.sleep(1)
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(TaskSetLeak);
}
