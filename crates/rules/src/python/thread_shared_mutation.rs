//! PY016: shared state read-modify-written by thread or executor targets
//! with no lock.

use crate::context::FileCx;
use crate::python::common::{module_vars, shared_state, updated_in_place};
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::{HashMap, HashSet};
use unsnarl_model::walk::{Parent, Visitor, exprs_under, walk_block};
use unsnarl_model::*;

pub struct ThreadSharedMutation;

pub static META: RuleMeta = RuleMeta {
    id: "PY016",
    name: "unlocked-update-in-thread",
    category: Category::SharedStateRace,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "A function run concurrently on several threads (`Thread(target=...)` in a loop, executor `map`/`submit`) does a read-modify-write of module-level or `self` state without a lock.",
    docs: r#"
A function of the file used as a thread target or executor task, started
several times (in a loop or comprehension, through `executor.map`, or from
several places), that updates shared state with a read-modify-write
(`total += n`, `stats["hits"] += 1`, `self.count = self.count + 1`,
`d[k] = d.get(k, 0) + 1`) outside any `with <lock>:` (a lock known
as one, or named for one: `self._stats_lock`, also an entry kept under a
key named for it, `with self._progress["eventing"]["condition"]:`). A method started
once per object, each on a new one (`target=out.drain` and
`target=err.drain`, with `out` and `err` two new `Capture()` objects,
bound one by one or by `out, err = Capture(), Capture()`), is
not reported for its updates of `self`: no two threads share them.
Nor is a thread started from several places that each start it only
while the one before has died (`if player is None or not
player.is_alive(): player = Thread(..)`, the same `player` each time):
one such thread runs at a time. Nor is an `async def` handed to a pool
(`worker_pool.submit(self.handle, update)`): threads do not run its body,
a loop does, and an update with no `await` inside is atomic there. Nor
is `|=`/`-=` on a set or dict (or `+=` on a list, a bytearray or a deque) that the file only ever
sets to a new empty one (`self.seen = set()`): the operator changes that
one object in a single call and stores the same object back.

## Why

`+=` is several bytecodes: load, add, store. The GIL can switch threads
between them, so two threads load the same old value and one increment is
lost. It is rare enough to pass every test and common enough to make
counters, balances and aggregates drift in production (and free-threaded
CPython removes even the GIL's partial protection).

## Example

```python
import threading

stats = {"total": 0}

def record(order):
    stats["total"] += order.amount

def record_all(orders):
    threads = [threading.Thread(target=record, args=(o,)) for o in orders]
    for t in threads:
        t.start()
```

## Fix

Protect the whole read-modify-write with one lock (or give the state a
single owner and send it updates through a queue).

```python
import threading

stats = {"total": 0}
stats_lock = threading.Lock()

def record(order):
    with stats_lock:
        stats["total"] += order.amount

def record_all(orders):
    threads = [threading.Thread(target=record, args=(o,)) for o in orders]
    for t in threads:
        t.start()
```
"#,
    examples: &EXAMPLES,
};

impl Rule for ThreadSharedMutation {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        let targets = concurrent_targets(cx);
        if targets.is_empty() {
            return;
        }
        let globals = module_vars(cx.model);
        for (f, how, own_objects) in targets {
            let mut v = Updates {
                cx,
                globals: &globals,
                locked: 0,
                found: Vec::new(),
            };
            walk_block(cx.model, &cx.func(f).body, &mut v);
            for (s, key) in v.found {
                if own_objects && key.starts_with("self.") {
                    continue;
                }
                out.push(cx.finding(
                    &META,
                    cx.stmt(s).span,
                    format!(
                        "`{key}` is read, modified and written back by {} without a lock, and {how}: two threads can load the same old value and one update is lost",
                        cx.func_display(f)
                    ),
                    format!("wrap the update of `{key}` in `with <lock>:` (one `threading.Lock` shared by every writer), or send updates to a single owner through a queue"),
                ));
            }
        }
    }
}

/// How a function of the file is started on threads.
struct Starts {
    count: usize,
    /// Started by a loop or on a pool's many workers.
    many: bool,
    how: &'static str,
    /// Per start, the object whose method it is when that is a new one.
    objects: Vec<Option<String>>,
    /// Per start, the place its thread is stored in when the start runs
    /// only while that place holds no live thread.
    slots: Vec<Option<String>>,
}

/// `t = threading.Thread(..)` (then `t.start()`) under `if t is None or not
/// t.is_alive():`: the place `t` when the thread is started only while the
/// one stored there is dead.
fn singleton_slot(cx: &FileCx, thread: ExprId) -> Option<String> {
    let Parent::Stmt(s) = cx.tree.expr_parent(thread) else {
        return None;
    };
    let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind else {
        return None;
    };
    let slot = cx.model.dotted(*targets.first()?)?;
    let checked = cx.tree.stmt_ancestors(s).any(|a| {
        matches!(&cx.stmt(a).kind, StmtKind::If { cond, .. }
        if exprs_under(cx.model, *cond).into_iter().any(|e| {
            cx.call(e).is_some_and(|c| {
                c.name == "is_alive"
                    && c.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some(slot.as_str())
            })
        }))
    });
    checked.then_some(slot)
}

/// Functions of this file that run on several threads at once, with how
/// they are started, and whether each start runs on an object of its own.
fn concurrent_targets(cx: &FileCx) -> Vec<(FuncId, String, bool)> {
    let mut sites: HashMap<FuncId, Starts> = HashMap::new();
    for (id, c) in cx.calls_to_or_named(&["threading.Thread"], &["map", "submit"]) {
        let (target, many, how) = match c.target.as_deref() {
            Some("threading.Thread") => (
                c.kwarg("target").or_else(|| c.positional(1)),
                false,
                "it runs as a thread target started more than once",
            ),
            _ if c.name == "map" && c.receiver.is_some_and(|r| is_executor(cx, r)) => (
                c.positional(0),
                true,
                "`executor.map` runs it on several worker threads at once",
            ),
            _ if c.name == "submit" && c.receiver.is_some_and(|r| is_executor(cx, r)) => (
                c.positional(0),
                false,
                "it is submitted to an executor more than once",
            ),
            _ => continue,
        };
        let Some(t) = target else { continue };
        let Some(name) = cx
            .model
            .resolved(t)
            .map(str::to_string)
            .or_else(|| cx.model.dotted(t))
        else {
            continue;
        };
        let Some(f) = cx.local_function(&name).or_else(|| {
            // `obj.method` on an untyped receiver: the only method of that
            // name in this file. Not a function of a module
            // (`asyncio.run`), nor a method of an attribute
            // (`self.regex_validator.validate`, an object of another
            // class).
            if cx.model.resolved(t).is_some() {
                return None;
            }
            let ExprKind::Attr { obj, .. } = &cx.expr(cx.model.strip(t)).kind else {
                return None;
            };
            cx.model.name_of(cx.model.strip(*obj))?;
            let (_, m) = name.rsplit_once('.')?;
            let mut it = cx
                .model
                .function_ids()
                .filter(|&g| cx.func(g).class.is_some() && cx.func(g).name == m);
            let first = it.next()?;
            it.next().is_none().then_some(first)
        }) else {
            continue;
        };
        // An `async def` handed to a pool (`worker_pool.submit(self.
        // _process_update, u)`): a thread would only build its coroutine;
        // what runs it is a loop, where `+=` with no `await` inside is
        // atomic.
        if cx.func(f).is_async {
            continue;
        }
        let in_loop = cx.in_loop(id)
            || cx
                .tree
                .expr_ancestors(id)
                .any(|a| matches!(cx.expr(a).kind, ExprKind::Comprehension { .. }));
        let entry = sites.entry(f).or_insert(Starts {
            count: 0,
            many: false,
            how,
            objects: Vec::new(),
            slots: Vec::new(),
        });
        entry.count += 1;
        entry.many |= many || in_loop;
        entry.objects.push(fresh_object(cx, t));
        entry.slots.push(singleton_slot(cx, id));
    }
    sites
        .into_iter()
        .filter(|(_, st)| {
            // Every start refills one slot only once its thread has died
            // (`if t is None or not t.is_alive(): t = Thread(..)`): one
            // thread at a time, however many places start it.
            let one_slot = st.slots.first().cloned().flatten().is_some_and(|first| {
                st.slots
                    .iter()
                    .all(|s| s.as_deref() == Some(first.as_str()))
            });
            st.many || (st.count > 1 && !one_slot)
        })
        .map(|(f, st)| {
            // Each start runs the method of an object of its own
            // (`target=stdout_capture.drain`, `target=stderr_capture.drain`):
            // no two threads share that object's attributes.
            let objects = &st.objects;
            let own_objects = !st.many
                && objects.iter().all(Option::is_some)
                && objects
                    .iter()
                    .enumerate()
                    .all(|(i, o)| !objects[..i].contains(o));
            (f, st.how.to_string(), own_objects)
        })
        .collect()
}

/// The object of a bound-method target (`capture.drain`), when it is a
/// name its function binds once, to a new object (`capture =
/// _StreamCapture(limit)`, or `out, err = _Capture(), _Capture()`).
fn fresh_object(cx: &FileCx, target: ExprId) -> Option<String> {
    let ExprKind::Attr { obj, .. } = &cx.expr(cx.model.strip(target)).kind else {
        return None;
    };
    let name = cx.model.name_of(*obj)?;
    let mut bound =
        cx.body_stmts(cx.func_of(target))
            .iter()
            .filter_map(|&s| match &cx.stmt(s).kind {
                StmtKind::Assign { targets, value, .. } => {
                    targets.iter().find_map(|&t| value_for(cx, t, *value, name))
                }
                _ => None,
            });
    let first = bound.next()??;
    let c = cx.call(cx.model.strip(first))?;
    let class_like = c.receiver.is_none()
        && c.name
            .trim_start_matches('_')
            .starts_with(|ch: char| ch.is_ascii_uppercase());
    (class_like && bound.next().is_none()).then(|| name.to_string())
}

/// What an assignment to `t` binds to `name`: the whole value for a plain
/// name, the matching element when a tuple of names takes a tuple of the
/// same length (`out, err = A(), B()`), no value when it takes anything
/// else. `None` when `t` does not bind `name`.
fn value_for(cx: &FileCx, t: ExprId, value: Option<ExprId>, name: &str) -> Option<Option<ExprId>> {
    let m = cx.model;
    if m.name_of(t) == Some(name) {
        return Some(value);
    }
    let ExprKind::Collection { elems: names, .. } = &cx.expr(m.strip(t)).kind else {
        return None;
    };
    let i = names.iter().position(|&n| m.name_of(n) == Some(name))?;
    let elems = value.and_then(|v| match &cx.expr(m.strip(v)).kind {
        ExprKind::Collection { elems, .. } if elems.len() == names.len() => Some(elems),
        _ => None,
    });
    Some(elems.map(|e| e[i]))
}

fn is_executor(cx: &FileCx, r: ExprId) -> bool {
    if let Some(t) = cx.sema.type_of(r)
        && t.starts_with("concurrent.futures.")
        && t.ends_with("ThreadPoolExecutor")
    {
        return true;
    }
    cx.model.dotted(r).is_some_and(|d| {
        let last = d.rsplit('.').next().unwrap_or(&d).to_ascii_lowercase();
        last.contains("executor") || last == "pool" || last.ends_with("_pool")
    })
}

struct Updates<'a, 'b> {
    cx: &'b FileCx<'a>,
    globals: &'b HashSet<String>,
    locked: u32,
    found: Vec<(StmtId, String)>,
}

/// `with` takes a lock: one known as such, one named for it
/// (`self._stats_lock`), or one kept under a key named for it
/// (`self._progress["eventing"]["condition"]`).
fn takes_lock(cx: &FileCx, ctx: ExprId) -> bool {
    let m = cx.model;
    let named = |s: &str| {
        let s = s.to_ascii_lowercase();
        s.contains("lock") || s.contains("mutex") || s.contains("condition")
    };
    crate::python::common::lock_kind(cx, ctx).is_some()
        || m.dotted(ctx)
            .is_some_and(|d| d.to_ascii_lowercase().contains("lock"))
        || matches!(&cx.expr(m.strip(ctx)).kind, ExprKind::Index { index, .. }
            if matches!(m.literal(*index), Some(Lit::Str(k)) if named(k)))
}

impl Visitor for Updates<'_, '_> {
    fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
        match &m.stmt(id).kind {
            StmtKind::With { items, .. } if items.iter().any(|it| takes_lock(self.cx, it.ctx)) => {
                self.locked += 1;
            }
            StmtKind::Assign {
                targets,
                value: Some(v),
                op,
            } if self.locked == 0 => {
                if let [t] = targets.as_slice()
                    && let Some(key) = shared_state(self.cx, self.globals, *t)
                {
                    // `self.ids |= {x}` on a set the file only ever sets
                    // to a new one changes that object in one C call and
                    // stores it back: no thread's addition is lost.
                    if let AssignOp::Augmented(bin) = op
                        && updated_in_place(self.cx, self.globals, &key, *bin)
                    {
                        return true;
                    }
                    let rmw = matches!(op, AssignOp::Augmented(_))
                        || exprs_under(m, *v).into_iter().any(|x| {
                            matches!(
                                m.expr(x).kind,
                                ExprKind::Name { .. } | ExprKind::Attr { .. }
                            ) && shared_state(self.cx, self.globals, x).as_deref() == Some(&key)
                        });
                    if rmw {
                        self.found.push((id, key));
                    }
                }
            }
            _ => {}
        }
        true
    }

    fn exit_stmt(&mut self, m: &FileModel, id: StmtId) {
        if let StmtKind::With { items, .. } = &m.stmt(id).kind
            && items.iter().any(|it| takes_lock(self.cx, it.ctx))
        {
            self.locked -= 1;
        }
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import threading

stats = {"total": 0}
processed = 0

def record(order):
    global processed
    stats["total"] += order.amount  # expect
    processed = processed + 1  # expect

def record_all(orders):
    for o in orders:
        threading.Thread(target=record, args=(o,)).start()
"#,
        r#"
from concurrent.futures import ThreadPoolExecutor

class Crawler:
    def __init__(self):
        self.pages = 0

    def visit(self, url):
        body = download(url)
        self.pages += 1  # expect
        return body

    def crawl(self, urls):
        with ThreadPoolExecutor(max_workers=8) as pool:
            return list(pool.map(self.visit, urls))
"#,
        r#"
import threading


class Capture:
    def __init__(self):
        self.total = 0
        self.chunks = []

    def drain(self, stream):
        while chunk := stream.read(65536):
            self.total += len(chunk)  # expect
            self.chunks.append(chunk)


def run(proc):
    capture = Capture()
    readers = [
        threading.Thread(target=capture.drain, args=(proc.stdout,)),
        threading.Thread(target=capture.drain, args=(proc.stderr,)),
    ]
    for t in readers:
        t.start()
    for t in readers:
        t.join()
    return capture.total
"#,
    ],
    pass: &[
        r#"
import threading

stats = {"total": 0}
stats_lock = threading.Lock()

def record(order):
    with stats_lock:
        stats["total"] += order.amount

def record_all(orders):
    for o in orders:
        threading.Thread(target=record, args=(o,)).start()
"#,
        r#"
import threading

counter = 0

def once():
    global counter
    counter += 1

def start():
    t = threading.Thread(target=once)
    t.start()
    t.join()

def pure(x):
    total = 0
    total += x
    return total

def run(pool, xs):
    return list(pool.map(pure, xs))
"#,
        r#"
import threading


class Capture:
    def __init__(self):
        self.total = 0
        self.chunks = []

    def drain(self, stream):
        while chunk := stream.read(65536):
            self.total += len(chunk)
            self.chunks.append(chunk)


def run(proc):
    out = Capture()
    err = Capture()
    readers = [
        threading.Thread(target=out.drain, args=(proc.stdout,)),
        threading.Thread(target=err.drain, args=(proc.stderr,)),
    ]
    for t in readers:
        t.start()
    for t in readers:
        t.join()
    return out.total, err.total
"#,
        r#"
import threading


class Downloader:
    def __init__(self, parts):
        self.parts = parts
        self._progress = {"done": 0, "eventing": {"condition": threading.Condition()}}

    def _fetch(self, part):
        data = part.read()
        with self._progress["eventing"]["condition"]:
            self._progress["done"] += len(data)
            self._progress["eventing"]["condition"].notify_all()

    def run(self):
        workers = [threading.Thread(target=self._fetch, args=(p,)) for p in self.parts]
        for w in workers:
            w.start()
"#,
        r#"
import threading


class Watcher:
    def __init__(self):
        self.hooked = set()

    def watch(self, order):
        if order.hooked:
            # One set, changed in place: no thread's id is lost.
            self.hooked |= {order.id}

    def run(self, orders):
        for o in orders:
            threading.Thread(target=self.watch, args=(o,)).start()
"#,
        r#"
import threading

playback = None
index = 0
playlist = []


def play_loop():
    global index
    while playlist:
        index = (index + 1) % len(playlist)


def play(songs):
    global playback, playlist
    playlist = list(songs)
    if playback is None or not playback.is_alive():
        playback = threading.Thread(target=play_loop, daemon=True)
        playback.start()


def resume():
    global playback
    if playback is None or not playback.is_alive():
        playback = threading.Thread(target=play_loop, daemon=True)
        playback.start()
"#,
        r#"
import subprocess
import threading


class Capture:
    data = b""

    def drain(self, stream):
        while chunk := stream.read(8192):
            self.data += chunk


def shell(command):
    process = subprocess.Popen(["sh", "-c", command], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = Capture(), Capture()
    readers = [
        threading.Thread(target=out.drain, args=(process.stdout,)),
        threading.Thread(target=err.drain, args=(process.stderr,)),
    ]
    for reader in readers:
        reader.start()
    process.wait()
    for reader in readers:
        reader.join()
    return out.data, err.data
"#,
        r#"
class Client:
    def __init__(self, worker_pool):
        self.worker_pool = worker_pool
        self.handled = 0

    async def _process_update(self, update):
        self.handled += 1
        await self.dispatch(update)

    def feed(self, updates):
        for u in updates:
            self.worker_pool.submit(self._process_update, u)
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(ThreadSharedMutation);
}
