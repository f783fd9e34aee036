//! PY029: `notify_all()` after adding a single item.

use crate::context::FileCx;
use crate::python::common::{containing_block, deleted_from, is_condition};
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct NotifyAllForOne;

pub static META: RuleMeta = RuleMeta {
    id: "PY029",
    name: "notify-all-for-one-item",
    category: Category::ThunderingHerd,
    severity: Severity::Medium,
    languages: &[Language::Python],
    summary: "A condition's `notify_all()` right after adding one item (`append`, `put`, `add`, `heappush`): every waiter wakes for one item.",
    docs: r#"
On a `threading.Condition` or `asyncio.Condition`: a `notify_all()` whose
preceding statement adds exactly one item to a collection (`append`,
`appendleft`, `add`, `put`, `put_nowait`, `insert`, `heapq.heappush`).
A condition of the object that only `run` of a `threading.Thread`
subclass waits on is left alone, and so is one waited on only by the
method `__init__` hands to the one thread it starts
(`threading.Thread(target=self._loop)`): each object has one waiting thread. So
is an append-only log, a collection nothing in the file takes items out
of (no `pop`, `get`, `remove`, `clear`, `del` or rebinding): each reader
walks it with an index of its own, and every waiter needs every item.
So are waiters that each look for an item of their own (the test of the
wait loop, or the predicate given to `wait_for`, uses a parameter of the
waiting function: `if msg["method"] == method and predicate(msg)`), or
functions that wait for different things (a consumer's `while not
self._queue:` and a `flush()` waiting until the queue is empty and
nothing is in flight): a single `notify()` could wake one whose item has
not come and leave the one it was for asleep.

## Why

One item can satisfy one waiter. `notify_all` wakes all of them: they all
contend for the lock, one wins the item, and the rest re-check the
predicate and go back to sleep. With many waiters this is a burst of
context switches and lock contention on every single item (a thundering
herd), which grows with the number of consumers.

## Example

```python
import threading

class WorkQueue:
    def __init__(self):
        self._cond = threading.Condition()
        self._items = []

    def put(self, item):
        with self._cond:
            self._items.append(item)
            self._cond.notify_all()
    def get(self):
        with self._cond:
            while not self._items:
                self._cond.wait()
            return self._items.pop(0)
```

## Fix

Wake one waiter per item when the waiters are interchangeable (keep
`notify_all` for state changes every waiter must see, like shutdown).

```python
import threading

class WorkQueue:
    def __init__(self):
        self._cond = threading.Condition()
        self._items = []

    def put(self, item):
        with self._cond:
            self._items.append(item)
            self._cond.notify()
    def get(self):
        with self._cond:
            while not self._items:
                self._cond.wait()
            return self._items.pop(0)
```
"#,
    examples: &EXAMPLES,
};

const ADDS: &[&str] = &[
    "append",
    "appendleft",
    "add",
    "put",
    "put_nowait",
    "insert",
    "heappush",
];

impl Rule for NotifyAllForOne {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for (id, c) in cx.calls_named(&["notify_all", "notifyAll"]) {
            let e = cx.expr(id);
            let Some(r) = c.receiver else { continue };
            if !is_condition(cx, r)
                || waited_by_one_thread(cx, r)
                || waiters_differ(cx, r)
                || waiters_of_kinds(cx, r)
            {
                continue;
            }
            let Parent::Stmt(s) = cx.tree.expr_parent(id) else {
                let Parent::Expr(aw) = cx.tree.expr_parent(id) else {
                    continue;
                };
                let Parent::Stmt(s) = cx.tree.expr_parent(aw) else {
                    continue;
                };
                check_at(cx, s, id, e.span, out);
                continue;
            };
            check_at(cx, s, id, e.span, out);
        }
    }
}

/// The condition (an attribute of the object, `self._cond`) is waited on
/// only in `run` of a `threading.Thread` subclass of the file: each object
/// has one thread, its own, waiting, so `notify_all` wakes just that one.
fn waited_by_one_thread(cx: &FileCx, cond: ExprId) -> bool {
    let Some(name) = cx.model.dotted(cond).filter(|d| d.starts_with("self.")) else {
        return false;
    };
    let waits: Vec<ExprId> = cx
        .calls_named(&["wait", "wait_for"])
        .into_iter()
        .filter(|(_, c)| c.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some(&*name))
        .map(|(e, _)| e)
        .collect();
    !waits.is_empty()
        && waits.iter().all(|&e| {
            let f = cx.func(cx.func_of(e));
            (f.name == "run"
                && f.class.as_deref().is_some_and(|class| {
                    cx.model.types.iter().any(|t| {
                        &*t.qualname == class && t.bases.iter().any(|b| &**b == "threading.Thread")
                    })
                }))
                || the_thread_of_init(cx, cx.func_of(e))
        })
}

/// `f` is a method the class's `__init__` hands to one thread it starts
/// (`self.thread = threading.Thread(target=self._loop)`, not in a loop):
/// the object's only thread runs it.
fn the_thread_of_init(cx: &FileCx, f: FuncId) -> bool {
    let func = cx.func(f);
    let Some(class) = func.class.as_deref() else {
        return false;
    };
    let target = format!("self.{}", func.name);
    let threads: Vec<ExprId> = cx
        .calls_to(&["threading.Thread"])
        .into_iter()
        .filter(|(_, c)| {
            c.kwarg("target")
                .and_then(|t| cx.model.dotted(t))
                .as_deref()
                == Some(&*target)
        })
        .map(|(e, _)| e)
        .collect();
    matches!(threads.as_slice(), [t] if {
        let g = cx.func(cx.func_of(*t));
        g.name == "__init__"
            && g.class.as_deref() == Some(class)
            && !cx.in_loop(*t)
    })
}

/// The `wait()`/`wait_for()` calls on the condition named `name`.
fn waits_on<'a>(cx: &FileCx<'a>, name: &str) -> Vec<(ExprId, &'a Call)> {
    cx.calls_named(&["wait", "wait_for"])
        .into_iter()
        .filter(|(_, c)| c.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some(name))
        .collect()
}

/// Every function that waits on the condition looks for something of its
/// own: a test of the wait loop, or the predicate of `wait_for`, uses one
/// of its parameters (`if message["method"] == method and
/// predicate(message)`). Waiters are not interchangeable, so one
/// `notify()` could wake one whose item has not come.
fn waiters_differ(cx: &FileCx, cond: ExprId) -> bool {
    let Some(name) = cx.model.dotted(cond) else {
        return false;
    };
    let waits = waits_on(cx, &name);
    let own = |f: FuncId, e: ExprId| {
        let func = cx.func(f);
        unsnarl_model::walk::exprs_under(cx.model, e)
            .into_iter()
            .filter_map(|x| cx.model.name_of(x))
            .any(|n| {
                !matches!(n, "self" | "cls" | "timeout" | "deadline" | "block")
                    && func.params.iter().any(|p| p.name == n)
            })
    };
    !waits.is_empty()
        && waits.iter().all(|&(w, c)| {
            let f = cx.func_of(w);
            // A lambda (`lambda: key in self._done`) is a function of its
            // own: look at its body for the waiter's parameters.
            let in_predicate = c.name == "wait_for"
                && c.positional(0)
                    .is_some_and(|p| match cx.expr(cx.model.strip(p)).kind {
                        ExprKind::Closure(g) => cx.body_exprs(g).iter().any(|&x| own(f, x)),
                        _ => own(f, p),
                    });
            in_predicate
                || cx.body_stmts(f).iter().any(|&st| match &cx.stmt(st).kind {
                    StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => own(f, *cond),
                    _ => false,
                })
        })
}

/// Two functions wait on the condition for different things (a consumer's
/// `while not self._queue:` and a `flush()` waiting for `wait_for(lambda:
/// not self._queue and not self._inflight)`): one `notify()` could wake
/// the waiter the item is not for, so every one must be woken.
fn waiters_of_kinds(cx: &FileCx, cond: ExprId) -> bool {
    let Some(name) = cx.model.dotted(cond) else {
        return false;
    };
    let source = |e: ExprId| -> String { cx.source(cx.expr(e).span).split_whitespace().collect() };
    let mut tests: Vec<(FuncId, String)> = Vec::new();
    for (w, c) in waits_on(cx, &name) {
        let f = cx.func_of(w);
        let test = if c.name == "wait_for" {
            c.positional(0).map(source)
        } else {
            cx.tree.enclosing_stmt(w).and_then(|s| {
                std::iter::once(s)
                    .chain(cx.tree.stmt_ancestors(s))
                    .find_map(|a| match &cx.stmt(a).kind {
                        // `while not self._items:`, or the same test
                        // written as an `if`.
                        StmtKind::While { cond, .. } | StmtKind::If { cond, .. } => {
                            Some(source(*cond))
                        }
                        _ => None,
                    })
            })
        };
        // A wait with no test of its own says nothing about what it is for.
        if let Some(t) = test.filter(|t| !t.is_empty()) {
            tests.push((f, t));
        }
    }
    tests
        .iter()
        .any(|(f, t)| tests.iter().any(|(g, u)| f != g && t != u))
}

/// The item goes into a collection nothing in the file takes items out
/// of (no `pop`, `popleft`, `get`, `remove`, `clear` or `del` on it): an
/// append-only log each reader walks with its own index
/// (`event = self._events[index]; index += 1`), where every waiter needs
/// every new item.
fn append_only(cx: &FileCx, add: &Call) -> bool {
    let Some(coll) = add.receiver.and_then(|r| cx.model.dotted(r)) else {
        return false;
    };
    // Queues and heaps (`heapq.heappush(heap, job)`) exist to be taken from.
    if !matches!(
        add.name.as_str(),
        "append" | "appendleft" | "add" | "insert"
    ) || add
        .target
        .as_deref()
        .is_some_and(|t| t.starts_with("heapq."))
    {
        return false;
    }
    let takes = cx
        .calls_named(&[
            "pop",
            "popleft",
            "popitem",
            "get",
            "get_nowait",
            "remove",
            "clear",
        ])
        .into_iter()
        .any(|(_, c)| {
            c.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some(coll.as_str())
        });
    // `del self._events[0]`.
    let deletes = deleted_from(cx).any(|t| cx.model.dotted(t).as_deref() == Some(coll.as_str()));
    // Rebinding it (`self._events = []`, `self._items[:] = rest`) empties it
    // too; only its first binding is allowed.
    let rebinds = cx
        .model
        .values_assigned_to(&coll)
        .filter(|v| v.is_some())
        .count()
        > 1;
    !takes && !deletes && !rebinds
}

fn check_at(cx: &FileCx, s: StmtId, _call: ExprId, span: Span, out: &mut Vec<Finding>) {
    let Some(block) = containing_block(cx, s) else {
        return;
    };
    let Some(i) = block.iter().position(|&x| x == s) else {
        return;
    };
    if i == 0 {
        return;
    }
    let prev = block[i - 1];
    let StmtKind::Expr(pe) = cx.stmt(prev).kind else {
        return;
    };
    let Some(pc) = cx.call(cx.model.strip(pe)) else {
        return;
    };
    if !ADDS.contains(&pc.name.as_str()) {
        return;
    }
    // The other statements of the block must not change a flag every
    // waiter cares about (`self.closed = True`).
    let sets_flag = block.iter().any(|&x| {
        matches!(&cx.stmt(x).kind, StmtKind::Assign { value: Some(v), .. }
            if matches!(cx.model.literal(*v), Some(Lit::Bool(_))))
    });
    if sets_flag || append_only(cx, pc) {
        return;
    }
    out.push(cx.finding(
        &META,
        span,
        "`notify_all()` after adding one item wakes every waiter for an item only one of them can take: the rest contend for the lock and go back to sleep, on every item",
        "use `notify()` (or `notify(n)` for n items) when waiters are interchangeable; keep `notify_all()` for changes every waiter must see",
    ));
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import threading

class WorkQueue:
    def __init__(self):
        self._cond = threading.Condition()
        self._items = []

    def put(self, item):
        with self._cond:
            self._items.append(item)
            self._cond.notify_all()  # expect

    def get(self):
        with self._cond:
            while not self._items:
                self._cond.wait()
            return self._items.pop(0)
"#,
        r#"
import threading


class Pump(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self._cond = threading.Condition()
        self._items = []

    def put(self, item):
        with self._cond:
            self._items.append(item)
            self._cond.notify_all()  # expect

    def take(self):
        # Any number of caller threads wait here beside the pump itself.
        with self._cond:
            while not self._items:
                self._cond.wait()
            return self._items.pop(0)

    def run(self):
        while True:
            with self._cond:
                while not self._items:
                    self._cond.wait()
"#,
        r#"
import asyncio
import heapq

cond = asyncio.Condition()
heap = []

async def schedule(job):
    async with cond:
        heapq.heappush(heap, job)
        cond.notify_all()  # expect
"#,
        r#"
import threading


class Inbox:
    def __init__(self):
        self._cond = threading.Condition()
        self._items = []

    def put(self, item):
        with self._cond:
            self._items.append(item)
            self._cond.notify_all()  # expect

    def take(self):
        # Taken with `del`, not `pop`: still one item for one waiter.
        with self._cond:
            while not self._items:
                self._cond.wait()
            item = self._items[0]
            del self._items[0]
            return item
"#,
    ],
    pass: &[
        r#"
import threading
import time


class Client:
    def __init__(self):
        self._cond = threading.Condition()
        self._notes = []

    def on_message(self, message):
        with self._cond:
            self._notes.append(message)
            self._cond.notify_all()

    def wait_for_note(self, method, timeout):
        # Each waiter wants its own method: any of them may be the one.
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for i, note in enumerate(self._notes):
                    if note.get("method") == method:
                        return self._notes.pop(i)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._cond.wait(remaining)
"#,
        r#"
import threading


class StreamResult:
    def __init__(self):
        self._events = []
        self._condition = threading.Condition()
        self._done = False

    def push(self, event):
        with self._condition:
            self._events.append(event)
            self._condition.notify_all()

    def stream(self):
        index = 0
        while True:
            with self._condition:
                while index >= len(self._events) and not self._done:
                    self._condition.wait()
                if index >= len(self._events):
                    return
                event = self._events[index]
                index += 1
            yield event
"#,
        r#"
import threading
import time


class Timer(threading.Thread):
    """One thread per timer waits on its own condition."""

    def __init__(self):
        super().__init__(daemon=True)
        self._cond = threading.Condition()
        self._due = []

    def schedule(self, at, job):
        with self._cond:
            self._due.append((at, job))
            self._cond.notify_all()

    def run(self):
        while True:
            with self._cond:
                while not self._due:
                    self._cond.wait()
                at, job = self._due.pop(0)
            time.sleep(max(0, at - time.time()))
            job()
"#,
        r#"
import threading

class WorkQueue:
    def __init__(self):
        self._cond = threading.Condition()
        self._items = []
        self.closed = False

    def put(self, item):
        with self._cond:
            self._items.append(item)
            self._cond.notify()

    def close(self):
        with self._cond:
            self.closed = True
            self._cond.notify_all()

    def put_many(self, items):
        with self._cond:
            self._items.extend(items)
            self._cond.notify_all()
"#,
        r#"
# A consumer and a flush wait on the same condition for different things.
import threading
from collections import deque


class Sink:
    def __init__(self):
        self._cond = threading.Condition()
        self._queue = deque()
        self._inflight = 0

    def log(self, item):
        with self._cond:
            self._queue.append(item)
            self._cond.notify_all()

    def _worker(self):
        while True:
            with self._cond:
                while not self._queue:
                    self._cond.wait()
                item = self._queue.popleft()
                self._inflight += 1
            self._send(item)
            with self._cond:
                self._inflight -= 1
                self._cond.notify_all()

    def flush(self):
        with self._cond:
            self._cond.wait_for(lambda: not self._queue and self._inflight == 0)
"#,
        r#"
import threading


class Scheduler:
    def __init__(self):
        self.condition = threading.Condition()
        self.commands = []
        self.closed = False
        # The object's one waiting thread.
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def submit(self, command):
        with self.condition:
            self.commands.append(command)
            self.condition.notify_all()

    def _loop(self):
        while True:
            with self.condition:
                while not self.commands:
                    self.condition.wait()
                command = self.commands.pop(0)
            if command is None:
                return
            command()
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(NotifyAllForOne);
}
