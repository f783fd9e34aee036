//! PY021: a condition notified without holding its lock.

use crate::context::FileCx;
use crate::python::common::{
    inside_with_of, is_condition, library_calls_under_lock, library_lock_group, lock_group_by_name,
};
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct NotifyWithoutLock;

pub static META: RuleMeta = RuleMeta {
    id: "PY021",
    name: "notify-without-lock",
    category: Category::CondvarMisuse,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "`notify()`/`notify_all()` on a condition outside `with cond:` (and outside the lock the condition was built on).",
    docs: r#"
A call to `notify()` or `notify_all()` on a `threading.Condition` or
`asyncio.Condition` that is not inside `with cond:`/`async with cond:`
(or the pre-3.9 `with (await cond):`; or
`with lock:` for `Condition(lock)`, or the generator-based `with (yield
from cond):`, the lock also got from a method,
`Condition(lock=self.state.get_lock())` held by `with
self.state.get_lock():`, also through another reference to the
object that built them: `with parent._mutex: parent._not_empty.notify()`,
or `with self:` in a class whose `__enter__` acquires that lock; a
condition stored on another object under a lock of this one, `s.cond =
Condition(self._mu)`, is held by `with self._mu:`; a condition the file
never builds, reached through another object, is taken as built on that
object's lock, `with entry.lock: entry.flow_cv.notify_all()`; the conditions a
library base class builds on one lock, `not_empty`, `not_full` and
`all_tasks_done` of a `queue.Queue` subclass (also through the
subclass's own base classes), are held by `with self.mutex:` or by any of
them, and in the hooks the library calls under that lock: `_put`, `_get`
and `_qsize`; on an object of unknown class, `with q.mutex:` holds
`q.not_empty` by those names too),
in a function that does not acquire
the condition itself, is not only called from under it, and is not
wrapped by a decorator of the file that calls it inside `with` that lock
(`@locked`, whose wrapper runs `with self._lock: return fn(self, ...)`).
A receiver known only by its name (`self.condition`) in a file whose
conditions all come from a library without a lock behind them
(`tornado.locks.Condition`), or in a module that imports none of
`threading`, `asyncio`, `multiprocessing`, trio or anyio (a project's own
wait queue named `condition`), is not taken for one.

## Why

Python raises `RuntimeError: cannot notify on un-acquired lock` when this
path runs, usually an error path nobody tested. Even in languages that
allow it, changing the predicate or notifying outside the lock races with a
waiter that has just checked the predicate and is about to sleep: the
notification is lost and the waiter sleeps forever.

## Example

```python
import threading

class Jobs:
    def __init__(self):
        self._cond = threading.Condition()
        self._items = []

    def put(self, item):
        self._items.append(item)
        self._cond.notify()
```

## Fix

Change the shared state and notify while holding the condition.

```python
import threading

class Jobs:
    def __init__(self):
        self._cond = threading.Condition()
        self._items = []

    def put(self, item):
        with self._cond:
            self._items.append(item)
            self._cond.notify()
```
"#,
    examples: &EXAMPLES,
};

impl Rule for NotifyWithoutLock {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for (id, c) in cx.calls_named(&["notify", "notify_all", "notifyAll"]) {
            let e = cx.expr(id);
            if matches!(cx.tree.expr_parent(id), Parent::Detached) {
                continue;
            }
            let Some(r) = c.receiver else { continue };
            if !is_condition(cx, r) || cx.func(cx.func_of(id)).is_test {
                continue;
            }
            let Some(cond) = cx.model.dotted(r) else {
                continue;
            };
            let f = cx.func_of(id);
            let mut names = lock_names(cx, &cond);
            if let Some((root, group)) =
                library_lock_group(cx, r).or_else(|| lock_group_by_name(cx, r))
            {
                names.extend(group.iter().map(|a| format!("{root}.{a}")));
            }
            // A hook the library base calls under its lock (`_get`).
            if library_calls_under_lock(cx, f).is_some_and(|group| {
                names.iter().any(|n| {
                    n.strip_prefix("self.")
                        .is_some_and(|a| group.iter().any(|g| g == a))
                })
            }) {
                continue;
            }
            if enter_acquires(cx, f, &names) {
                names.push("self".into());
            }
            if inside_with_of(cx, id, &names)
                || (names.len() == 1 && inside_with_of(cx, id, &condition_locks(cx)))
                || (names.len() == 1 && under_lock_of_same_object(cx, id, &cond))
            {
                continue;
            }
            if acquires_in(cx, f, &names)
                || callers_hold(cx, f, &names)
                || decorator_holds(cx, f, &names)
            {
                continue;
            }
            out.push(cx.finding(
                &META,
                e.span,
                format!(
                    "`{cond}.{}()` is called without holding `{cond}`: Python raises `RuntimeError` here, and a notify outside the lock can be lost between a waiter's check and its sleep",
                    c.name
                ),
                format!("update the shared state and notify inside `with {cond}:`"),
            ));
        }
    }
}

/// The condition itself, the lock it was built on (`Condition(lock)`),
/// and the other conditions built on that same lock (holding any of them
/// holds the lock: `queue.Queue`'s `not_empty`/`not_full`).
fn lock_names(cx: &FileCx, cond: &str) -> Vec<String> {
    // (variable, lock it was built on) for every `X = Condition(L)`.
    let built: Vec<(String, String)> = crate::python::common::condition_constructions(cx)
        .into_iter()
        .filter_map(|(x, c)| {
            let l = c.positional(0).or_else(|| c.kwarg("lock"))?;
            Some((x, crate::python::common::lock_text(cx, l)?))
        })
        .collect();
    // Built as attributes of `self` (`self._not_empty =
    // Condition(self._mutex)`) and used through another reference to the
    // same object (`parent._not_empty.notify()` under `with
    // parent._mutex:`): the same attributes of that reference.
    let (root, attr) = cond.rsplit_once('.').unwrap_or(("", cond));
    // Built in a class body (`_condition = Condition(lock=_lock)`, named
    // `Cache._condition` or plain `_condition`) and used as
    // `self._condition`: an attribute of the class.
    let class_attr = |x: &'_ str| -> Option<String> {
        if root.is_empty() || root.contains('.') {
            return None;
        }
        match x.split_once('.') {
            None => Some(x.to_string()),
            Some((class, rest))
                if !rest.contains('.') && class.starts_with(|c: char| c.is_ascii_uppercase()) =>
            {
                Some(rest.to_string())
            }
            _ => None,
        }
    };
    let rebase = |name: &str| match name.strip_prefix("self.") {
        Some(rest) if !root.is_empty() && root != "self" => format!("{root}.{rest}"),
        Some(_) => name.to_string(),
        None => class_attr(name).map_or_else(|| name.to_string(), |a| format!("{root}.{a}")),
    };
    let is_cond = |x: &str| {
        x == cond
            || (root != "self" && x.strip_prefix("self.").is_some_and(|rest| rest == attr))
            || class_attr(x).is_some_and(|a| a == attr)
    };
    let mut names = vec![cond.to_string()];
    let locks: Vec<String> = built
        .iter()
        .filter(|(x, _)| is_cond(x))
        .map(|(_, l)| l.clone())
        .collect();
    // Built under the very name used (`s.cond = Condition(self._mu)`, and
    // `s.cond.notify_all()` in a method of the same object): the lock is
    // the one named there, not an attribute of `s`.
    names.extend(
        built
            .iter()
            .filter(|(x, _)| x == cond && !x.starts_with("self."))
            .map(|(_, l)| l.clone()),
    );
    for l in &locks {
        names.push(rebase(l));
        names.extend(
            built
                .iter()
                .filter(|(_, bl)| bl == l)
                .map(|(x, _)| rebase(x)),
        );
    }
    names
}

/// A condition this file never builds, reached through another object
/// (`entry.flow_cv`, made in another module), notified under a lock of
/// that same object (`with entry.lock:`): taken as the lock it was built
/// on, as a condition kept beside a lock almost always is.
fn under_lock_of_same_object(cx: &FileCx, id: ExprId, cond: &str) -> bool {
    let Some((root, attr)) = cond.rsplit_once('.') else {
        return false;
    };
    if root == "self" || root.contains('.') {
        return false;
    }
    let built_here = crate::python::common::condition_constructions(cx)
        .iter()
        .any(|(x, _)| x.rsplit('.').next() == Some(attr));
    if built_here {
        return false;
    }
    crate::python::common::inside_with_matching(cx, id, |cx, ctx| {
        cx.model.dotted(ctx).is_some_and(|d| {
            d.strip_prefix(root)
                .and_then(|rest| rest.strip_prefix('.'))
                .is_some_and(|a| {
                    !a.contains('.') && {
                        let a = a.to_ascii_lowercase();
                        a.contains("lock") || a.contains("mutex")
                    }
                })
        })
    })
}

/// The locks the file builds conditions on, wherever the condition goes
/// (`Flight(threading.Condition(self._lock))`, `self._conds[name] =
/// Condition(self._lock)`). A condition reached through a name no
/// construction shows (a record's field, a loop over a dict of them) and
/// notified under one of these locks is taken as built on it.
fn condition_locks(cx: &FileCx) -> Vec<String> {
    cx.calls_named(&["Condition"])
        .into_iter()
        .filter(|(_, c)| {
            c.target
                .as_deref()
                .is_some_and(|t| t.ends_with("Condition"))
        })
        .filter_map(|(_, c)| {
            crate::python::common::lock_text(cx, c.positional(0).or_else(|| c.kwarg("lock"))?)
        })
        .collect()
}

/// The class of method `f` takes the lock in its `__enter__` (`def
/// __enter__(self): self.lock.acquire()`), so `with self:` holds it.
fn enter_acquires(cx: &FileCx, f: FuncId, names: &[String]) -> bool {
    let Some(class) = &cx.func(f).class else {
        return false;
    };
    cx.model.function_ids().any(|g| {
        let m = cx.func(g);
        m.name == "__enter__" && m.class.as_ref() == Some(class) && acquires_in(cx, g, names)
    })
}

/// The method is wrapped by a decorator of this file whose wrapper takes
/// the lock around the call (`@locked`, whose `inner` runs `with
/// self._pool_lock: return fn(self, ...)`).
fn decorator_holds(cx: &FileCx, f: FuncId, names: &[String]) -> bool {
    crate::python::common::decorator_calls_it_where(cx, f, |e| {
        cx.enclosing_stmts(e).into_iter().any(|st| {
            matches!(&cx.stmt(st).kind, StmtKind::With { items, .. }
            if items.iter().any(|it| {
                !cx.contains(it.ctx, e)
                    && cx.model.dotted(it.ctx).is_some_and(|x| names.contains(&x))
            }))
        })
    })
}

/// `cond.acquire()` somewhere in the function.
fn acquires_in(cx: &FileCx, f: FuncId, names: &[String]) -> bool {
    cx.body_calls(f).any(|e| {
        cx.call(e).is_some_and(|c| {
            c.name == "acquire"
                && c.receiver
                    .and_then(|r| cx.model.dotted(r))
                    .is_some_and(|d| names.contains(&d))
        })
    })
}

/// Every call of the function in this file is under the lock (a helper
/// documented as "call with the lock held"): inside `with` it, or in a
/// function that takes it with `acquire()`.
fn callers_hold(cx: &FileCx, f: FuncId, names: &[String]) -> bool {
    let func = cx.func(f);
    if func.name.ends_with("_locked") {
        return true;
    }
    if func.qualname.is_empty() {
        return false;
    }
    let sites: Vec<ExprId> = (0..cx.model.exprs.len() as u32)
        .map(ExprId)
        .filter(|&e| {
            cx.call(e)
                .is_some_and(|c| c.target.as_deref() == Some(func.qualname.as_str()))
        })
        .collect();
    // The lock as the caller writes it: `self._cond` of the method is
    // `pool._cond` where it is called as `pool._fill()`.
    !sites.is_empty()
        && sites.iter().all(|&s| {
            let receiver = cx
                .call(s)
                .and_then(|c| c.receiver)
                .and_then(|r| cx.model.dotted(r));
            let seen: Vec<String> = names
                .iter()
                .map(|n| match (n.strip_prefix("self."), &receiver) {
                    (Some(rest), Some(r)) => format!("{r}.{rest}"),
                    _ => n.clone(),
                })
                .collect();
            // Under `with`, or between the caller's own `acquire()` and
            // `release()` of the lock.
            inside_with_of(cx, s, &seen) || acquires_in(cx, cx.func_of(s), &seen)
        })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import threading

class Jobs:
    def __init__(self):
        self._cond = threading.Condition()
        self._items = []

    def put(self, item):
        self._items.append(item)
        self._cond.notify()  # expect

    def close(self):
        self.closed = True
        self._cond.notify_all()  # expect
"#,
        r#"
import threading


class Waiters:
    def __init__(self):
        self._lock = threading.Lock()
        self._other = threading.Lock()
        self._by_queue = {}

    def register(self, key):
        with self._lock:
            self._by_queue[key] = threading.Condition(self._lock)

    def wake_all(self):
        with self._other:
            for condition in self._by_queue.values():
                condition.notify_all()  # expect
"#,
        r#"
import asyncio

ready = asyncio.Condition()

async def publish(state, value):
    state.append(value)
    ready.notify_all()  # expect
"#,
        r#"
import threading

class Queue:
    def __init__(self):
        self._mutex = threading.Lock()
        self._not_empty = threading.Condition(self._mutex)
        self._other = threading.Lock()
        self._items = []
        self.sync_q = SyncSide(self)

class SyncSide:
    def __init__(self, parent):
        self._parent = parent

    def put(self, item):
        parent = self._parent
        with parent._other:
            parent._items.append(item)
            parent._not_empty.notify()  # expect
"#,
        r#"
import threading

class Session:
    def __init__(self):
        self.lock = threading.RLock()
        self._changed = threading.Condition(self.lock)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def notify_changed(self):
        with self:
            self._changed.notify_all()  # expect
"#,
        r#"
import threading

class ChannelCache:
    _lock = threading.RLock()
    _other = threading.RLock()
    _condition = threading.Condition(lock=_lock)

    def get(self, key):
        with self._other:
            self._mapping[key] = make_channel(key)
            self._condition.notify()  # expect
"#,
        r#"
import threading

class Zip:
    @property
    def condition(self):
        if self._condition is None:
            self._condition = threading.Condition()
        return self._condition

    def update(self, x):
        self.buffer.append(x)
        self.condition.notify_all()  # expect
"#,
        r#"
import functools
import threading

def logged(fn):
    @functools.wraps(fn)
    def inner(self, *args):
        with self._log_lock:
            log(fn.__name__)
        return fn(self, *args)
    return inner

class Pool:
    def __init__(self):
        self._pool_lock = threading.RLock()
        self._log_lock = threading.Lock()
        self._available = threading.Condition(self._pool_lock)

    @logged
    def release(self, conn):
        self._free.append(conn)
        self._available.notify()  # expect
"#,
        r#"
import multiprocessing as mp

class Comms:
    def __init__(self):
        self.ctx = mp.get_context("spawn")
        self._restart_condition = self.ctx.Condition(self.ctx.Lock())

    def signal_restart(self):
        self._restart_condition.notify()  # expect
"#,
        r#"
import functools
import threading

def counted(fn):
    @functools.wraps(fn)
    def inner(self, *args):
        with self._pool_lock:
            self.calls += 1
        return fn(self, *args)
    return inner

class Pool:
    def __init__(self):
        self._pool_lock = threading.RLock()
        self._available = threading.Condition(self._pool_lock)

    @counted
    def release(self, conn):
        self._free.append(conn)
        self._available.notify()  # expect
"#,
        r#"
import queue


class FrontQueue(queue.Queue):
    def put_front(self, item):
        self.queue.appendleft(item)
        self.unfinished_tasks += 1
        self.not_empty.notify()  # expect
"#,
        r#"
import queue


class HookedQueue(queue.Queue):
    def on_put(self, hook):
        self.hook = hook


class ClosableQueue(HookedQueue):
    def put_last(self, item):
        self.queue.append(item)
        self.not_empty.notify()  # expect
"#,
        r#"
import queue
import threading


class WatchedQueue(queue.Queue):
    def __init__(self, maxsize=0):
        super().__init__(maxsize)
        self.drained = threading.Condition(self.mutex)

    def discard(self):
        self.queue.clear()
        self.drained.notify_all()  # expect
"#,
    ],
    pass: &[
        r#"
import threading
from dataclasses import dataclass


@dataclass
class Flight:
    condition: threading.Condition
    done: bool = False


class Waiters:
    def __init__(self):
        self._lock = threading.Lock()
        self._flights = {}
        self._by_queue = {}

    def start(self, key):
        with self._lock:
            flight = Flight(threading.Condition(self._lock))
            self._flights[key] = flight
            self._by_queue[key] = threading.Condition(self._lock)
            return flight

    def finish(self, key):
        with self._lock:
            flight = self._flights.pop(key)
            flight.done = True
            flight.condition.notify_all()
            for condition in self._by_queue.values():
                condition.notify_all()
"#,
        r#"
from typing import Optional


class DowngradeMixin:
    # `condition` is the package's own wait queue, not a threading.Condition.
    def _downgrade_core(self, owner: Optional[int]) -> None:
        self.write.owner = None
        self.read.condition.notify_all()
"#,
        r#"
import threading


class Connection:
    def __init__(self):
        self._mu = threading.Lock()

    def wait_reply(self, s, wait):
        with self._mu:
            if s.cond is None:
                s.cond = threading.Condition(self._mu)
            s.cond.wait(wait)

    def dispatch(self, s, payload):
        with self._mu:
            s.chunks.append(payload)
            if s.cond is not None:
                s.cond.notify_all()
"#,
        r#"
import threading

class Queue:
    def __init__(self):
        self._mutex = threading.Lock()
        self._not_empty = threading.Condition(self._mutex)
        self._items = []
        self.sync_q = SyncSide(self)

class SyncSide:
    def __init__(self, parent):
        self._parent = parent

    def put(self, item):
        parent = self._parent
        with parent._mutex:
            parent._items.append(item)
            parent._not_empty.notify()
"#,
        r#"
import threading

class Jobs:
    def __init__(self):
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._not_empty = threading.Condition(self._lock)
        self._not_full = threading.Condition(self._lock)
        self._items = []

    def put(self, item):
        with self._cond:
            self._items.append(item)
            self._cond.notify()

    def put_raw(self, item):
        with self._lock:
            self._items.append(item)
            self._cond.notify()

    def _wake_locked(self):
        self._cond.notify_all()

    def _wake(self):
        self._cond.notify_all()

    def close(self):
        with self._cond:
            self._wake()

    def shared_mutex_put(self, item):
        with self._not_full:
            self._items.append(item)
            self._not_empty.notify()

    def manual(self):
        self._cond.acquire()
        try:
            self._cond.notify()
        finally:
            self._cond.release()
"#,
        r#"
import asyncio

class Pool:
    def __init__(self):
        self._cond = asyncio.Condition()
        self._free = []

    async def _fill(self):
        conn = await connect()
        self._free.append(conn)
        self._cond.notify()

    async def acquire(self):
        async with self._cond:
            await self._fill()
            return self._free.pop()

async def create_pool():
    pool = Pool()
    async with pool._cond:
        await pool._fill()
    return pool
"#,
        r#"
import threading

class Session:
    def __init__(self):
        self.lock = threading.RLock()
        self._changed = threading.Condition(self.lock)

    def __enter__(self):
        self.lock.acquire()
        return self

    def __exit__(self, *exc):
        self.lock.release()

    def notify_changed(self):
        with self:
            self._changed.notify_all()
"#,
        r#"
import threading

class ChannelCache:
    _lock = threading.RLock()
    _condition = threading.Condition(lock=_lock)

    def get(self, key):
        with self._lock:
            self._mapping[key] = make_channel(key)
            self._condition.notify()
"#,
        r#"
from tornado.locks import Condition

class Zip:
    @property
    def condition(self):
        if self._condition is None:
            self._condition = Condition()
        return self._condition

    def update(self, x):
        self.buffer.append(x)
        self.condition.notify_all()
"#,
        r#"
import functools
import threading

def locked(fn):
    @functools.wraps(fn)
    def inner(self, *args, **kwargs):
        with self._pool_lock:
            return fn(self, *args, **kwargs)
    return inner

class Pool:
    def __init__(self):
        self._pool_lock = threading.RLock()
        self._available = threading.Condition(self._pool_lock)

    @locked
    def release(self, conn):
        self._free.append(conn)
        self._available.notify()
"#,
        r#"
import queue
import threading


class FrontQueue(queue.Queue):
    def __init__(self, maxsize=0):
        super().__init__(maxsize)
        self.closed = threading.Event()

    def put_front(self, item):
        with self.mutex:
            self.queue.appendleft(item)
            self.unfinished_tasks += 1
            self.not_empty.notify()

    def drain(self):
        with self.not_empty:
            items = list(self.queue)
            self.queue.clear()
            self.not_full.notify_all()
            return items
"#,
        r#"
import queue
import threading


class Feeder:
    def __init__(self):
        self.jobs = queue.Queue(maxsize=100)
        self.stopped = threading.Event()

    def drop_pending(self):
        with self.jobs.mutex:
            self.jobs.queue.clear()
            self.jobs.all_tasks_done.notify_all()
            self.jobs.unfinished_tasks = 0
            self.jobs.not_full.notify_all()


def flush(q: queue.Queue):
    with q.mutex:
        q.queue.clear()
        q.not_full.notify_all()
"#,
        r#"
import queue
import threading


class HookedQueue(queue.Queue):
    def on_put(self, hook):
        self.hook = hook


class ClosableQueue(HookedQueue):
    def __init__(self, maxsize=0):
        super().__init__(maxsize)
        self.emptied = threading.Condition(self.mutex)

    def put_last(self, item):
        with self.not_full:
            self.queue.append(item)
            self.unfinished_tasks += 1
            self.not_empty.notify()
"#,
        r#"
import queue
import threading


class WatchedQueue(queue.Queue):
    def __init__(self, maxsize=0):
        super().__init__(maxsize)
        self.drained = threading.Condition(self.mutex)

    def _get(self):
        item = self.queue.popleft()
        if not self.queue:
            self.drained.notify_all()
        return item
"#,
        r#"
import threading


class Store:
    def __init__(self, backing):
        self._memory_queue = backing
        self._total = 0
        self._lock = threading.Lock()

    def preload(self, items):
        with self._memory_queue.mutex:
            self._memory_queue.queue.extend(items)
            self._memory_queue.not_empty.notify_all()
            self._total += len(items)
"#,
        r#"
import asyncio


class Pool:
    def __init__(self):
        self._cond = asyncio.Condition()
        self._free = []

    async def release(self, conn):
        with (await self._cond):
            self._free.append(conn)
            self._cond.notify()
"#,
        r#"
import threading

from proxy.streams import StreamEntry

class Connection:
    def __init__(self):
        self.entries = {}
        self.ready = threading.Event()

    def drain(self, entry: StreamEntry):
        # `StreamEntry` builds `flow_cv` on its own `lock`.
        with entry.lock:
            if entry.send_queue:
                entry.send_queue.popleft()
                entry.flow_cv.notify_all()
"#,
        r#"
from multiprocessing import Condition, Value

class SharedQueue:
    def __init__(self):
        self.state = Value("i", 0)
        self.not_full = Condition(lock=self.state.get_lock())

    def take(self):
        # The condition was built on the value's own lock.
        with self.state.get_lock():
            self.state.value -= 1
            self.not_full.notify()
"#,
        r#"
import threading

class Cache:
    def __init__(self):
        self.__lock = threading.Lock()
        self.__cond = threading.Condition(self.__lock)
        self.__pending = {}

    def __finish(self, key, value):
        # Callers must hold `__lock`.
        self.__pending[key] = value
        self.__cond.notify_all()

    def fetch(self, key):
        self.__lock.acquire()
        try:
            self.__finish(key, key * 2)
        finally:
            self.__lock.release()
"#,
        r#"
import asyncio

class Pool:
    def __init__(self):
        self._cond = asyncio.Condition()
        self._free = []

    @asyncio.coroutine
    def release(self, conn):
        with (yield from self._cond):
            self._free.append(conn)
            self._cond.notify()
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(NotifyWithoutLock);
}
