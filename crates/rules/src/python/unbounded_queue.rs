//! PY003: a queue created without a bound.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use crate::util::unbounded_reason;
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct UnboundedQueue;

pub static META: RuleMeta = RuleMeta {
    id: "PY003",
    name: "unbounded-queue",
    category: Category::UnboundedQueue,
    severity: Severity::Medium,
    languages: &[Language::Python],
    summary: "An `asyncio.Queue`, `queue.Queue`, `multiprocessing.Queue` or memory channel is created with no capacity bound.",
    docs: r#"
`asyncio.Queue()`, `asyncio.Queue(maxsize=0)`, `queue.Queue()`,
`multiprocessing.Queue()`, `queue.SimpleQueue()` and memory channels with
an infinite buffer accept items without limit. Not reported when the file
runs watermark flow control over it: an `if` comparing its fill level
(`qsize()`, `len(..)`, `statistics()`) or testing it (`empty()`, `full()`)
pauses or resumes the producer
(`transport.pause_reading()`) or drops the oldest item (`if q.qsize() >
capacity: q.get()`), which bounds it without blocking `put`. Nor
is a queue used as a plain container by one function: a local that the
function alone fills and drains through its own methods, in a file that
starts no thread, process or task (a worklist; a bound would deadlock the
one thread using it). Two more are left alone: a one-answer queue (a local
the function reads once, outside any loop, after handing it to whoever
answers, also inside the request it sends, `jobs.put((url, reply))`, or
keeps in a dict under the request's key for the answerer to find,
`self.pending[request_id] = queue.Queue()`, when no other function reads
from that dict's queues), and a queue handed to a producer that never waits for room
(`logging.handlers.QueueHandler`, knowledge `nowait_producer`, also as
the base class whose `super().__init__` gets the queue, or of a subclass
of the file that keeps the base's constructor) or filled
only by signal handlers (which must not wait, and arrive at the pace an
operator sends them), where a bound would turn bursts into errors. Nor is
a lifecycle mailbox: every put sends a message fixed in the code
(`{"type": "startup"}`, a sentinel) outside any loop; or a request/reply
mailbox, whose every item carries a future the producer made for it and
then waits on (`reply = Future(); q.put_nowait((fn, reply)); return
reply.result()`; or an event it then waits on until the consumer sets
it: `ev = asyncio.Event(); await q.put((item, ev)); await ev.wait()`, or
`await q.put(item)` right before `await self.next_event.wait()`; or a
queue it then reads the one answer from, `response =
queue.Queue(maxsize=1); requests.put((op, response));
response.get(timeout=t)`, whatever that queue's bound, also inside a
dict item, `{"type": "READ", "result_queue": result_queue}`, beside
fixed messages such as `{"type": "CLOSE", "result_queue":
queue.Queue()}` (a queue made inside the message it travels in is that
message's answer slot, and is not reported either); also
through `await asyncio.wait_for(reply, t)` or, for a thread's future,
`await asyncio.wrap_future(reply)`, and for a dict of such
mailboxes, one per peer: `self._queues[peer] = asyncio.Queue()`), so each
producer has one item at most; or a completion queue, a local fed only by
the done callbacks the function attaches to the tasks it starts
(`t.add_done_callback(cb)`, `cb` running `q.put_nowait(t)`) and read by
the function itself: one item per task it started. Two worklists
are left alone as well: the overflow of a pipe, when every put copies
lines a thread of the file reads from a stream (`for line in
iter(proc.stderr.readline, b""): q.put(line)`, or `for line in stream`
in a reader every thread start hands a child's pipe, also values parsed
from each line, `for m in json.loads(line): q.put(m)`, with one
end-of-stream `None` or module sentinel (`_EOF = object()`) each, which
a consumer or a watchdog timer may put there too; a bound would stall the child on its pipe), and a queue in an attribute of a `threading.Thread`
subclass that only its own `run` (and what `run` calls) uses. When the producers only
use `put_nowait` (a bound alone would make them raise `QueueFull`), the
fix says how they can wait for room instead; when they already catch
`Full` to drop what does not fit, it says the bound is all that is missing.
A reply mailbox that the file empties before each request is left alone
as well: a function drains what is left (`while not q.empty():
q.get_nowait()`, itself or through a helper), or swaps in a fresh queue
(`if not self.responses.empty(): self.responses = queue.Queue()`), and
then waits for the
answer (`await q.get()`), so the queue holds the replies to one request
at a time (draining it only at teardown, in `close`, does not count).
The work queue of an executor class of the project's own (based on
`concurrent.futures.Executor`), filled by its `submit`, is left alone
too: `submit` promises not to block, and the caller bounds the work in
flight, as with the standard executors. So is a page buffer, whose every put runs only once it is empty
(under `if self._items.empty():`, or in a function the file only calls
there): it holds one batch at most. So is a worklist filled once, up front: the statement
after `q = queue.Queue()` (past set-up assignments that start no task,
`lock = asyncio.Lock()`) loops over a collection already in memory
(`for item in tests: q.put(item)`, also through `enumerate`, `sorted`,
`zip`, `range` or `.items()`) and the function puts nothing else
into it, so it never holds more than that collection. Modules of a library's test
harness (`testing`, `testclient`) are not checked: their queues carry
what one test sends. Nor is an empty queue `__init__` puts in an
attribute that a later assignment (in `connect`, a reconnect) replaces
with a bounded one: a placeholder until the object starts. Nor is a
pool's free list: a private attribute (`self._slots`) filled with a fixed
number of resources (not `None` sentinels) by a loop over
`range(n)`, and otherwise only given back what was taken (every other put
is in a function that also takes from it, or in one named for giving
back, `_release`, `return_connection`): it never holds more than the
pool's size. The same for a pool that makes its resources on demand
(`if self._created < self._size:` in the checkout) when every put gives
back a resource the function checked out (`cursor = self._checkout()`
... `finally: self._idle.put(cursor)`). Nor is a queue each of whose puts sits under `if not
self._done:` and is followed there by `self._done = True`: one item, ever.
Nor is a crawl frontier whose workers are its only producers: every put
sits in a loop that takes from the queue (`url = await q.get()` ... `await
q.put(link)`), or in a closure or private helper that only such a loop
runs (awaited or called, not handed to a task), besides seeds the making
function puts in outside any loop; a local or a private attribute, which
no other module can fill. A bound would deadlock the workers, each waiting
for room only they can make. Nor is the buffer of a logging handler
subclass filled only by its `emit` (knowledge `nowait_producer`: `emit`
runs in whichever thread logs and must not wait), apart from a `None` put
in to stop its thread.
Nor is a multiprocessing queue the function reads only after joining the
process it handed it to: PY041 reports that hang, which a bound would
only bring sooner.

## Why

When the producer is faster than the consumer, and under load it will be,
the difference piles up in the queue: memory grows, and each item waits
longer (queue depth divided by throughput is the latency it adds). An
unbounded queue does not add throughput; it hides overload until the
process runs out of memory. A bound turns overload into backpressure on the
producer, or into an explicit decision to shed.

## Example

```python
import asyncio

jobs = asyncio.Queue()
```

## Fix

Choose a bound from the latency you accept, and a policy for when it is full
(`await q.put(...)` waits; `put_nowait` raises `QueueFull` so you can shed).

```python
import asyncio

jobs = asyncio.Queue(maxsize=256)
```
"#,
    examples: &EXAMPLES,
};

impl Rule for UnboundedQueue {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if test_support_module(&cx.model.module) {
            return;
        }
        for (i, e) in cx.model.exprs.iter().enumerate() {
            let ExprKind::Call(c) = &e.kind else { continue };
            let Some(entry) = cx.effect(c, Effect::Queue) else {
                continue;
            };
            let id = ExprId(i as u32);
            if matches!(
                cx.tree.expr_parent(id),
                unsnarl_model::walk::Parent::Detached
            ) || cx.func(cx.func_of(id)).is_test
            {
                continue;
            }
            let Some(reason) = unbounded_reason(cx.model, c, entry) else {
                continue;
            };
            if flow_controlled(cx, id)
                || single_thread_container(cx, id)
                || fed_without_waiting(cx, id)
                || fed_by_signal_handlers(cx, id)
                || carries_fixed_messages(cx, id)
                || answer_queue(cx, id)
                || keyed_answer_queue(cx, id)
                || made_inside_a_message(cx, id)
                || request_reply(cx, id)
                || never_used(cx, id)
                || drains_a_pipe(cx, id)
                || thread_own_worklist(cx, id)
                || executor_work_queue(cx, id)
                || emptied_before_each_request(cx, id)
                || prefilled_worklist(cx, id)
                || completion_queue(cx, id)
                || bound_left_to_caller(cx, id)
                || placeholder_for_bounded(cx, id)
                || free_list(cx, id)
                || put_once(cx, id)
                || refilled_when_empty(cx, id)
                || self_fed_frontier(cx, id)
                || handler_buffer(cx, id)
                || stranded_by_join(cx, id)
            {
                continue;
            }
            // A type that has no bound at all says so in its own words
            // (`a queue that cannot be bounded`).
            let limit = if entry.unbounded == Some(Unbounded::Always) {
                String::new()
            } else {
                format!(" with no capacity limit ({reason})")
            };
            // The knowledge's fix shows the bounded form of the very class
            // called (`{callee}`): a bounded `queue.Queue` is no substitute
            // for a `PriorityQueue`.
            let callee = cx.callee_display(c);
            out.push(cx.finding(
                &META,
                e.span,
                format!(
                    "`{callee}` creates {}{limit}: a slow consumer turns it into growing memory and latency instead of backpressure",
                    entry.what
                ),
                {
                    let fix = entry.fix.replace("{callee}", &callee);
                    if sheds_when_full(cx, id) {
                        format!(
                            "{fix}; its producers already catch `Full` around `put_nowait` to drop what does not fit, so the bound is all that is missing"
                        )
                    } else if fed_only_nowait(cx, id) {
                        format!(
                            "{fix}; its producers use `put_nowait`, which a bound turns into `QueueFull`: have them wait for room instead (`await q.put(x)`; from a thread, `asyncio.run_coroutine_threadsafe(q.put(x), loop).result()`), or pause the source while the queue is full"
                        )
                    } else {
                        fix
                    }
                },
            ));
        }
    }
}

/// A library's test harness (`starlette.testclient`, `litestar.testing`):
/// the queues between a test client and the app carry what one test sends,
/// and are unbounded so that neither side can block the other.
fn test_support_module(module: &str) -> bool {
    module.split('.').any(|seg| {
        matches!(
            seg,
            "testing" | "testclient" | "test_client" | "testutils" | "test_utils"
        )
    })
}

/// The queue `ctor` builds is bound to a local of a function (`q =
/// queue.Queue()` in a `def`): the binding target, the function and the
/// name.
fn local_queue<'a>(cx: &FileCx<'a>, ctor: ExprId) -> Option<(ExprId, FuncId, &'a str)> {
    let unsnarl_model::walk::Parent::Stmt(s) = cx.tree.expr_parent(ctor) else {
        return None;
    };
    let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind else {
        return None;
    };
    let [t] = targets.as_slice() else {
        return None;
    };
    let home = cx.func_of(*t);
    let name = cx.model.name_of(*t)?;
    (home.0 != 0).then_some((*t, home, name))
}

/// A queue used as a plain container by one function: the file starts no
/// thread, process or task, and the queue is a local of that function,
/// only ever the receiver of its own methods (`put`, `get`, `empty`...),
/// never handed to anything or captured by a nested function. A worklist or a heap, not a channel: there is
/// no consumer to fall behind, and a bound would deadlock the one thread
/// that both fills and drains it.
fn single_thread_container(cx: &FileCx, ctor: ExprId) -> bool {
    use unsnarl_model::walk::Parent;
    // A local of one function: an attribute (`self.q`) or a module global
    // can be filled by a callback another thread runs (a reactor's
    // `callFromThread`, a portal) that no spawn in this file shows.
    let Some((t, home, name)) = local_queue(cx, ctor) else {
        return false;
    };
    let spawns = cx.model.exprs.iter().any(|e| {
        matches!(&e.kind, ExprKind::Call(c)
            if cx.effect(c, Effect::Spawn).is_some() || cx.effect(c, Effect::ScopedSpawn).is_some())
    });
    if spawns {
        return false;
    }
    // Every other mention is `<queue>.method(..)` (or `.attr`).
    let own_method = |e: ExprId| {
        matches!(cx.tree.expr_parent(e), Parent::Expr(p)
            if matches!(&cx.expr(p).kind, ExprKind::Attr { obj, .. } if *obj == e))
    };
    let uses: Vec<ExprId> = (0..cx.model.exprs.len() as u32)
        .map(ExprId)
        .filter(|&e| e != t && cx.model.name_of(e) == Some(name))
        .collect();
    if uses.iter().any(|&e| cx.func_of(e) != home) {
        return false;
    }
    // It is filled and drained here: both ends in this file.
    let calls = |names: &[&str]| {
        uses.iter().any(|&e| {
            matches!(cx.tree.expr_parent(e), Parent::Expr(p)
                if matches!(&cx.expr(p).kind, ExprKind::Attr { name, .. } if names.contains(&name.as_str())))
        })
    };
    calls(&["put", "put_nowait"])
        && calls(&["get", "get_nowait"])
        && uses.iter().all(|&e| own_method(e))
}

/// A one-answer queue: a local of a function that reads it once (one
/// `get`, outside any loop) and hands it to whoever answers (`schedule(fn,
/// reply)`, a closure that puts). The function leaves after the one item;
/// nothing reads a second, and the queue goes away with the call.
fn answer_queue(cx: &FileCx, ctor: ExprId) -> bool {
    use unsnarl_model::walk::Parent;
    let Some((t, home, name)) = local_queue(cx, ctor) else {
        return false;
    };
    let method = |e: ExprId| match cx.tree.expr_parent(e) {
        Parent::Expr(p) => match &cx.expr(p).kind {
            ExprKind::Attr { obj, name, .. } if *obj == e => Some(name.as_str()),
            _ => None,
        },
        _ => None,
    };
    let mut gets = 0;
    for e in (0..cx.model.exprs.len() as u32).map(ExprId) {
        if e == t || cx.model.name_of(e) != Some(name) {
            continue;
        }
        let inside = cx
            .tree
            .func_ancestors(cx.model, cx.func_of(e))
            .any(|g| g == home);
        if !inside {
            continue;
        }
        match method(e) {
            Some("get" | "get_nowait") if cx.func_of(e) == home => {
                if cx.in_loop(e) {
                    return false;
                }
                gets += 1;
            }
            Some("put" | "put_nowait") => {}
            Some(_) => return false,
            // Handed to a call (`schedule(runner, reply)`), also inside
            // the request it sends (`jobs.put((url, reply))`): the answerer.
            None => {
                let handed = |x: ExprId| matches!(cx.tree.expr_parent(x), Parent::Expr(p) if cx.call(p).is_some());
                let in_request = matches!(cx.tree.expr_parent(e), Parent::Expr(t)
                    if matches!(cx.expr(t).kind, ExprKind::Collection { .. }) && handed(t));
                if !handed(e) && !in_request {
                    return false;
                }
            }
        }
    }
    gets == 1
}

/// A queue made inside the message it travels in (`requests.put({"type":
/// "CLOSE", "result_queue": queue.Queue()})`): the answer slot of one
/// message, which only its answerer can reach.
fn made_inside_a_message(cx: &FileCx, ctor: ExprId) -> bool {
    let Parent::Expr(msg) = cx.tree.expr_parent(ctor) else {
        return false;
    };
    matches!(cx.expr(msg).kind, ExprKind::Collection { .. })
        && matches!(cx.tree.expr_parent(msg), Parent::Expr(p)
            if cx.call(p).is_some_and(|c| matches!(c.name.as_str(), "put" | "put_nowait")))
}

/// A one-answer queue kept in a dict under a key its function just made
/// (`self.pending[request_id] = queue.Queue()`), which that function reads
/// once, outside any loop (`q = self.pending.get(request_id)`, then
/// `q.get(timeout=t)`), and which no other function reads from: the
/// answerer looks the queue up by the reply's id and puts the one reply.
fn keyed_answer_queue(cx: &FileCx, ctor: ExprId) -> bool {
    use unsnarl_model::walk::Parent;
    let Parent::Stmt(s) = cx.tree.expr_parent(ctor) else {
        return false;
    };
    let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind else {
        return false;
    };
    let [t] = targets.as_slice() else {
        return false;
    };
    let ExprKind::Index { obj, index } = &cx.expr(*t).kind else {
        return false;
    };
    let (Some(dict), Some(_key)) = (cx.model.dotted(*obj), cx.model.name_of(*index)) else {
        return false;
    };
    let home = cx.func_of(*t);
    // `D[K]` or `D.get(K)`, for the same dict.
    let entry_of = |e: ExprId| -> bool {
        let e = cx.model.strip(e);
        match &cx.expr(e).kind {
            ExprKind::Index { obj, .. } => cx.model.dotted(*obj).as_deref() == Some(&*dict),
            _ => cx.call(e).is_some_and(|c| {
                c.name == "get"
                    && c.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some(&*dict)
            }),
        }
    };
    // Locals of `home` bound to an entry: `q = self.pending.get(request_id)`.
    let bound: Vec<&str> = unsnarl_model::walk::stmts_in_block(cx.model, &cx.func(home).body)
        .into_iter()
        .filter_map(|st| match &cx.stmt(st).kind {
            StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } if entry_of(*v) => match targets.as_slice() {
                [one] => cx.model.name_of(*one),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let mut reads = 0;
    for (i, x) in cx.model.exprs.iter().enumerate() {
        let ExprKind::Call(c) = &x.kind else { continue };
        if !matches!(c.name.as_str(), "get" | "get_nowait") {
            continue;
        }
        let Some(r) = c.receiver else { continue };
        let e = ExprId(i as u32);
        let on_entry = entry_of(r)
            || (cx.func_of(e) == home && cx.model.name_of(r).is_some_and(|n| bound.contains(&n)));
        if !on_entry {
            continue;
        }
        if cx.func_of(e) != home || cx.in_loop(e) {
            return false;
        }
        reads += 1;
    }
    reads == 1
}

/// The queue is handed to an API that fills it without ever waiting for
/// room (knowledge: `nowait_producer`, e.g. `logging.handlers.QueueHandler`),
/// directly (`QueueHandler(queue.Queue())`) or through the name it is
/// bound to: unbounded by design, a bound would make bursts fail.
fn fed_without_waiting(cx: &FileCx, ctor: ExprId) -> bool {
    use unsnarl_model::walk::Parent;
    let given_to_producer = |e: ExprId| {
        let Parent::Expr(p) = cx.tree.expr_parent(e) else {
            return false;
        };
        let Some(c) = cx.call(p) else { return false };
        let Some(entry) = cx
            .effect(c, Effect::NowaitProducer)
            .or_else(|| base_initializer(cx, p, c, Effect::NowaitProducer))
            .or_else(|| inherited_constructor(cx, c, Effect::NowaitProducer))
        else {
            return false;
        };
        entry.arg.and_then(|i| c.positional(i)) == Some(e)
            || entry.keyword.as_deref().and_then(|k| c.kwarg(k)) == Some(e)
    };
    if given_to_producer(ctor) {
        return true;
    }
    let Some((t, name)) = bound_name(cx, ctor) else {
        return false;
    };
    (0..cx.model.exprs.len() as u32)
        .map(ExprId)
        .any(|e| e != t && given_to_producer(e) && cx.model.dotted(e).as_deref() == Some(&*name))
}

/// `super().__init__(..)` in the `__init__` of a class whose base the
/// knowledge has an `effect` entry for (`class H(QueueHandler)`): the
/// entry of that base's constructor, which receives the same arguments.
fn base_initializer<'k>(
    cx: &FileCx<'k>,
    call: ExprId,
    c: &Call,
    effect: Effect,
) -> Option<&'k unsnarl_model::knowledge::Entry> {
    let super_call = cx.call(c.receiver?)?;
    if c.name != "__init__" || super_call.target.as_deref() != Some("builtins.super") {
        return None;
    }
    let class = cx.func(cx.func_of(call)).class.as_deref()?;
    base_entry(cx, class, effect)
}

/// The knowledge entry of the constructor of a base class of `class` (a
/// class of this file).
fn base_entry<'k>(
    cx: &FileCx<'k>,
    class: &str,
    effect: Effect,
) -> Option<&'k unsnarl_model::knowledge::Entry> {
    let decl = cx.model.types.iter().find(|t| t.qualname == class)?;
    decl.bases.iter().find_map(|b| {
        let last = b.rsplit('.').next().unwrap_or(b);
        cx.kb.find(effect, Some(b), last)
    })
}

/// `LocalQueueHandler(q)` of a class of this file that keeps its base's
/// `__init__` (`class LocalQueueHandler(QueueHandler)` overriding only
/// `prepare`): the entry of that base's constructor.
fn inherited_constructor<'k>(
    cx: &FileCx<'k>,
    c: &Call,
    effect: Effect,
) -> Option<&'k unsnarl_model::knowledge::Entry> {
    if c.receiver.is_some() {
        return None;
    }
    let class = c.target.as_deref()?;
    let own_init = cx.model.function_ids().any(|f| {
        let func = cx.func(f);
        func.name == "__init__" && func.class.as_deref() == Some(class)
    });
    if own_init {
        return None;
    }
    base_entry(cx, class, effect)
}

/// The name the queue `ctor` builds is bound to (`self.sigq = ..`): the
/// target and its dotted spelling.
fn bound_name(cx: &FileCx, ctor: ExprId) -> Option<(ExprId, String)> {
    let t = sole_target(cx, ctor)?;
    Some((t, cx.model.dotted(t)?))
}

/// The one target of the assignment whose value is `ctor`.
fn sole_target(cx: &FileCx, ctor: ExprId) -> Option<ExprId> {
    let unsnarl_model::walk::Parent::Stmt(s) = cx.tree.expr_parent(ctor) else {
        return None;
    };
    let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind else {
        return None;
    };
    match targets.as_slice() {
        [t] => Some(*t),
        _ => None,
    }
}

/// An empty queue `__init__` puts in an attribute that the object's start
/// (`connect`, a reconnect) replaces with a bounded one before use:
/// `self._pool = asyncio.Queue()`, then `self._pool =
/// asyncio.Queue(maxsize=size)`. The first is a placeholder.
fn placeholder_for_bounded(cx: &FileCx, ctor: ExprId) -> bool {
    let Some((_, name)) = bound_name(cx, ctor) else {
        return false;
    };
    if !name.starts_with("self.") || cx.func(cx.func_of(ctor)).name != "__init__" {
        return false;
    }
    crate::util::assignments(cx, |t| cx.model.dotted(t).as_deref() == Some(&*name))
        .into_iter()
        .any(|(_, v)| {
            v != ctor
                && cx.call(cx.model.strip(v)).is_some_and(|c| {
                    cx.effect(c, Effect::Queue)
                        .is_some_and(|entry| unbounded_reason(cx.model, c, entry).is_none())
                })
        })
}

/// A queue in an attribute of a `threading.Thread` subclass that only the
/// thread itself uses: every mention is in `run` or in a method `run`
/// calls (besides `__init__`, which makes it). One thread puts and takes:
/// a worklist with no other side to hold back, so a bound would only make
/// its own `put` block forever.
fn thread_own_worklist(cx: &FileCx, ctor: ExprId) -> bool {
    let Some((_, name)) = bound_name(cx, ctor) else {
        return false;
    };
    if !name.starts_with("self.") {
        return false;
    }
    let Some(class) = cx.func(cx.func_of(ctor)).class.clone() else {
        return false;
    };
    let is_thread =
        cx.model.types.iter().any(|t| {
            t.qualname == class && t.bases.iter().any(|b| b.as_str() == "threading.Thread")
        });
    if !is_thread {
        return false;
    }
    let methods: Vec<FuncId> = cx
        .model
        .function_ids()
        .filter(|&g| cx.func(g).class.as_deref() == Some(class.as_str()))
        .collect();
    // `run`, and the methods it calls through `self`, transitively.
    let mut reach: Vec<FuncId> = methods
        .iter()
        .copied()
        .filter(|&g| cx.func(g).name == "run")
        .collect();
    let mut i = 0;
    while i < reach.len() {
        let g = reach[i];
        for e in cx.body_calls(g) {
            let Some(c) = cx.call(e) else { continue };
            if c.receiver.and_then(|r| cx.model.name_of(r)) != Some("self") {
                continue;
            }
            if let Some(&m) = methods.iter().find(|&&m| cx.func(m).name == c.name)
                && !reach.contains(&m)
            {
                reach.push(m);
            }
        }
        i += 1;
    }
    if reach.is_empty() {
        return false;
    }
    let mentions: Vec<ExprId> = (0..cx.model.exprs.len() as u32)
        .map(ExprId)
        .filter(|&e| {
            matches!(cx.expr(e).kind, ExprKind::Attr { .. })
                && cx.model.dotted(e).as_deref() == Some(name.as_str())
        })
        .collect();
    mentions.iter().all(|&e| {
        let f = cx.func_of(e);
        reach.contains(&f) || cx.func(f).name == "__init__"
    }) && !puts_into(cx, &name).is_empty()
}

/// The work queue of an executor of the project's own (a class whose base
/// the knowledge lists with an offloading `submit`, `class
/// Pool(concurrent.futures.Executor)`), filled by its `submit`: the
/// executor's contract is that `submit` never blocks, and the caller bounds
/// the work in flight (as callers of the standard executors do, whose
/// queues are unbounded too).
fn executor_work_queue(cx: &FileCx, ctor: ExprId) -> bool {
    let Some((_, name)) = bound_name(cx, ctor) else {
        return false;
    };
    let Some(class) = cx.func(cx.func_of(ctor)).class.as_deref() else {
        return false;
    };
    let is_executor = cx.model.types.iter().any(|t| {
        t.qualname == class
            && t.bases.iter().any(|b| {
                cx.kb
                    .find(Effect::Offload, Some(&format!("{b}.submit")), "submit")
                    .is_some()
            })
    });
    let puts = puts_into(cx, &name);
    is_executor
        && name.starts_with("self.")
        && !puts.is_empty()
        && puts.iter().any(|&(e, _)| {
            let f = cx.func(cx.func_of(e));
            f.name == "submit" && f.class.as_deref() == Some(class)
        })
}

/// Every put into the queue copies lines from a pipe or stream, in a
/// thread target of the file (`for line in iter(proc.stderr.readline,
/// b""): q.put(line)`): the queue is the pipe's overflow, there so the
/// child never blocks on a full pipe. A bound would stall the reader, then
/// the child writing to it; what it holds is what the child printed.
fn drains_a_pipe(cx: &FileCx, ctor: ExprId) -> bool {
    let Some((_, name)) = bound_name(cx, ctor) else {
        return false;
    };
    // The queue under its own name, and under the parameter name of each
    // thread target it is handed to (`Thread(target=pump, args=(s, q))`).
    let mut puts: Vec<ExprId> = puts_into(cx, &name).into_iter().map(|(e, _)| e).collect();
    let mut targets = Vec::new();
    // `proc.stdout`, `self._stdout` (a pipe kept under a private name),
    // `proc.stderr.readline`.
    let lines_of = |e: ExprId| {
        cx.model.dotted(e).is_some_and(|d| {
            d.ends_with(".readline")
                || d.rsplit('.').next().is_some_and(|last| {
                    d.contains('.') && matches!(last.trim_start_matches('_'), "stdout" | "stderr")
                })
        })
    };
    // The parameters of thread targets that every start hands a child's
    // pipe (`Thread(target=_reader, args=(proc.stdout, "out"))`), or
    // `None` where some start hands something else.
    let mut stream_params: Vec<(FuncId, usize, bool)> = Vec::new();
    for (_, t) in cx.calls_to(&["threading.Thread"]) {
        let Some(f) = t
            .kwarg("target")
            .and_then(|target| crate::python::common::local_callable(cx, target))
        else {
            continue;
        };
        targets.push(f);
        let Some(args) = t.kwarg("args") else {
            continue;
        };
        let ExprKind::Collection { elems, .. } = &cx.expr(cx.model.strip(args)).kind else {
            continue;
        };
        for (k, &a) in elems.iter().enumerate() {
            let pipe = lines_of(a);
            match stream_params
                .iter_mut()
                .find(|(g, j, _)| *g == f && *j == k)
            {
                Some(known) => known.2 &= pipe,
                None => stream_params.push((f, k, pipe)),
            }
        }
        let Some(k) = elems
            .iter()
            .position(|&a| cx.model.dotted(a).as_deref() == Some(&*name))
        else {
            continue;
        };
        // (The receiver is not among a method's parameters.)
        if let Some(p) = cx.func(f).params.get(k) {
            puts.extend(cx.body_calls(f).filter(|&e| {
                cx.call(e).is_some_and(|c| {
                    matches!(c.name.as_str(), "put" | "put_nowait")
                        && c.receiver.and_then(|r| cx.model.name_of(r)) == Some(&p.name)
                })
            }));
        }
    }
    let pipe_param = |f: FuncId, e: ExprId| {
        let Some(n) = cx.model.name_of(e) else {
            return false;
        };
        let params = &cx.func(f).params;
        stream_params
            .iter()
            .any(|&(g, k, pipe)| g == f && pipe && params.get(k).is_some_and(|p| *p.name == *n))
    };
    let lines_of = |e: ExprId| lines_of(e) || pipe_param(cx.func_of(e), e);
    let reads_a_stream = |lp: StmtId| {
        let StmtKind::For { iter, .. } = &cx.stmt(lp).kind else {
            return false;
        };
        let iter = cx.model.strip(*iter);
        lines_of(iter)
            || cx.call(iter).is_some_and(|c| {
                c.target.as_deref() == Some("builtins.iter")
                    && c.positional(0).is_some_and(lines_of)
            })
    };
    // The end-of-stream mark: `None`, `(label, None)`, or a sentinel of
    // the module (`_EOF = object()`).
    let sentinel = |a: ExprId| {
        let a = cx.model.strip(a);
        let is_none = |x: ExprId| crate::python::common::is_none(cx, x);
        let own_object = || {
            cx.model.name_of(a).is_some_and(|n| {
                crate::python::common::constructions(cx, |t| t == "builtins.object")
                    .iter()
                    .any(|(d, _)| d == n)
            })
        };
        is_none(a)
            || own_object()
            || matches!(&cx.expr(a).kind,
                ExprKind::Collection { elems, .. } if elems.iter().any(|&x| is_none(x)))
    };
    let puts_sentinel = |e: ExprId| {
        cx.call(e)
            .and_then(|c| c.positional(0))
            .is_some_and(sentinel)
    };
    // The reader's mark, outside its loop. One per reader thread.
    let end_mark = |e: ExprId| {
        cx.tree
            .enclosing_stmt(e)
            .is_some_and(|s| crate::python::common::enclosing_loop(cx, s).is_none())
            && puts_sentinel(e)
    };
    // Inside a loop over the stream, also one nested in it (`for item in
    // json.loads(line): q.put(item)`, a batch's messages).
    let copies_lines = |e: ExprId| {
        cx.tree.enclosing_stmt(e).is_some_and(|s| {
            let f = cx.tree.stmt_func(s);
            cx.tree
                .stmt_ancestors(s)
                .take_while(|&a| cx.tree.stmt_func(a) == f)
                .any(reads_a_stream)
        })
    };
    // A consumer that takes the mark may put it back for the next reader
    // (`if item is _EOF: q.put(_EOF)`): one item, not a stream.
    puts.iter().any(|&e| copies_lines(e))
        && puts.iter().all(|&e| {
            if targets.contains(&cx.func_of(e)) {
                copies_lines(e) || end_mark(e)
            } else {
                puts_sentinel(e)
            }
        })
}

/// A worklist filled once, up front: the statement right after `q =
/// Queue()` (past a few set-up assignments) is a loop over a collection already in memory (`for item in
/// tests: q.put(item)`), and the function puts nothing else into it. It
/// holds no more than that collection did, and its consumers only drain
/// it; a bound would block the filling loop before any consumer starts.
fn prefilled_worklist(cx: &FileCx, ctor: ExprId) -> bool {
    let Some((t, home, name)) = local_queue(cx, ctor) else {
        return false;
    };
    let Some(created) = cx.tree.enclosing_stmt(t) else {
        return false;
    };
    // Set-up that cannot start a consumer may sit in between (`lock =
    // asyncio.Lock()`, `results = []`): assignments that start no task,
    // await nothing and leave the queue alone.
    let setup = |s: StmtId| {
        matches!(cx.stmt(s).kind, StmtKind::Assign { .. })
            && unsnarl_model::walk::exprs_in_block(cx.model, &vec![s])
                .into_iter()
                .all(|x| {
                    !matches!(&cx.expr(x).kind, ExprKind::Name { id, .. } if id == name)
                        && !matches!(cx.expr(x).kind, ExprKind::Await(_))
                        && !cx
                            .call(x)
                            .is_some_and(|c| crate::python::common::is_task_spawn(cx, c))
                })
    };
    let Some(&next) = crate::util::stmts_after(cx, created)
        .iter()
        .take(4)
        .find(|&&s| !setup(s))
    else {
        return false;
    };
    // (`async for line in reader:` reads a stream as it arrives.)
    let StmtKind::For {
        iter,
        is_async: false,
        ..
    } = &cx.stmt(next).kind
    else {
        return false;
    };
    let in_memory = in_memory(cx, *iter);
    let puts: Vec<ExprId> = puts_into(cx, name)
        .into_iter()
        .map(|(e, _)| e)
        .filter(|&e| cx.func_of(e) == home)
        .collect();
    in_memory
        && !puts.is_empty()
        && puts.iter().all(|&e| {
            cx.tree
                .enclosing_stmt(e)
                .is_some_and(|s| s == next || cx.tree.stmt_ancestors(s).any(|a| a == next))
        })
}

/// A crawl frontier: the queue's consumers are its only producers. Every
/// put is in a function that also takes from the queue (`url = await
/// q.get()` ... `await q.put(link)`), or in a function only such functions
/// call (a closure of the function that makes the queue, or a private
/// helper: `parse_and_enqueue`), besides seeds the making function puts
/// in before the workers run (outside any loop, or in a loop over a
/// collection in memory). Nothing outside the workers adds work, so there
/// is no faster producer to hold back, and a bound would deadlock them:
/// each would wait for room only the workers themselves can make. A queue
/// another module can reach (a public attribute, a module global) is
/// still reported.
fn self_fed_frontier(cx: &FileCx, ctor: ExprId) -> bool {
    let Some((_, name)) = bound_name(cx, ctor) else {
        return false;
    };
    let home = cx.func_of(ctor);
    let local = local_queue(cx, ctor).is_some();
    let private_attr = name
        .strip_prefix("self.")
        .is_some_and(|a| a.starts_with('_') && !a.contains('.'));
    if !local && !private_attr {
        return false;
    }
    // A local is the same queue only where the making function can see it.
    let scope = local.then(|| cx.with_nested(home));
    let in_scope = |e: ExprId| scope.as_ref().is_none_or(|s| s.contains(&cx.func_of(e)));
    let class = cx.func(home).class.clone();
    let in_scope = |e: ExprId| in_scope(e) && (local || cx.func(cx.func_of(e)).class == class);
    // The loops that take from the queue: a worker's `while True: url =
    // await q.get()`.
    let taking_loops: Vec<StmtId> = cx
        .calls_named(&["get", "get_nowait"])
        .into_iter()
        .filter(|&(e, c)| {
            in_scope(e) && c.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some(&*name)
        })
        .filter_map(|(e, _)| cx.tree.enclosing_stmt(e))
        .flat_map(|s| cx.tree.stmt_ancestors(s).chain(std::iter::once(s)))
        .filter(|&s| {
            matches!(
                cx.stmt(s).kind,
                StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::Loop { .. }
            )
        })
        .collect();
    let puts: Vec<ExprId> = puts_into(cx, &name).into_iter().map(|(e, _)| e).collect();
    if taking_loops.is_empty() || puts.iter().any(|&e| !in_scope(e)) {
        return false;
    }
    let in_taking_loop = |e: ExprId| {
        cx.tree
            .enclosing_stmt(e)
            .is_some_and(|s| cx.tree.stmt_ancestors(s).any(|a| taking_loops.contains(&a)))
    };
    // Run then and there by a worker's loop: awaited or called as a
    // statement, not handed to a task or a thread (a producer the consumer
    // starts is still a producer).
    let run_by_worker = |call: ExprId| {
        let awaited_or_alone = match cx.tree.expr_parent(call) {
            unsnarl_model::walk::Parent::Expr(p) => {
                matches!(cx.expr(p).kind, ExprKind::Await(_))
            }
            unsnarl_model::walk::Parent::Stmt(s) => matches!(cx.stmt(s).kind, StmtKind::Expr(_)),
            _ => false,
        };
        awaited_or_alone && in_taking_loop(call)
    };
    // A function only workers run: a closure of the making function
    // (nothing else can name it) or a private helper of the file.
    let feeder = |f: FuncId| {
        if scope.as_ref().is_some_and(|s| s.contains(&f)) && f != home {
            crate::python::common::called_only(cx, f, run_by_worker)
        } else {
            crate::python::common::private_helper_called_only(cx, f, run_by_worker)
        }
    };
    let seed = |e: ExprId| {
        cx.func_of(e) == home
            && cx.tree.enclosing_stmt(e).is_some_and(|s| {
                cx.tree.stmt_ancestors(s).all(|a| match &cx.stmt(a).kind {
                    StmtKind::For {
                        iter,
                        is_async: false,
                        ..
                    } => in_memory(cx, *iter),
                    StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::Loop { .. } => false,
                    _ => true,
                })
            })
    };
    let fed_back = |e: ExprId| in_taking_loop(e) || feeder(cx.func_of(e));
    puts.iter().any(|&e| fed_back(e)) && puts.iter().all(|&e| fed_back(e) || seed(e))
}

/// A multiprocessing queue the function reads only after joining the
/// process that fills it: PY041 reports the hang, and a bound would only
/// make it come sooner (the child would block in `put` instead of at exit).
fn stranded_by_join(cx: &FileCx, ctor: ExprId) -> bool {
    let Some((_, home, name)) = local_queue(cx, ctor) else {
        return false;
    };
    crate::python::join_before_drain::stranded_by_join(cx, home, name)
}

/// The buffer of a logging handler of the file: the queue is a private
/// or public attribute of a class whose every put sits in a method the
/// knowledge says must return without waiting (`nowait_producer`: a
/// `logging.Handler` subclass's `emit`, which runs in whichever thread
/// logs), apart from `None` put in to stop the consumer. A bound would make
/// logging block or fail under a burst, as with the standard
/// `QueueHandler`.
fn handler_buffer(cx: &FileCx, ctor: ExprId) -> bool {
    let Some((_, name)) = bound_name(cx, ctor) else {
        return false;
    };
    let Some(class) = cx.func(cx.func_of(ctor)).class.as_deref() else {
        return false;
    };
    if !name.starts_with("self.") {
        return false;
    }
    let Some(decl) = cx.model.types.iter().find(|t| &*t.qualname == class) else {
        return false;
    };
    // A mixin's `emit` is the handler's when a class of the file puts the
    // mixin before a handler base (`class AsyncFileHandler(AsyncMixin,
    // FileHandler)`).
    let is_mixin_of = |t: &&unsnarl_model::TypeDecl| {
        t.bases
            .iter()
            .any(|b| **b == *class || b.rsplit('.').next() == Some(&*decl.name))
    };
    let bases: Vec<&str> = decl
        .bases
        .iter()
        .chain(
            cx.model
                .types
                .iter()
                .filter(is_mixin_of)
                .flat_map(|t| &t.bases),
        )
        .map(|b| &**b)
        .collect();
    let must_not_wait = |f: FuncId| {
        let func = cx.func(f);
        func.class.as_deref() == Some(class)
            && bases.iter().any(|b| {
                cx.kb
                    .find(
                        Effect::NowaitProducer,
                        Some(&format!("{b}.{}", func.name)),
                        &func.name,
                    )
                    .is_some()
            })
    };
    let stop = |c: &Call| {
        c.positional(0)
            .is_some_and(|a| crate::python::common::is_none(cx, a))
    };
    let puts = puts_into(cx, &name);
    puts.iter().any(|&(e, _)| must_not_wait(cx.func_of(e)))
        && puts.iter().all(|&(e, c)| {
            let f = cx.func_of(e);
            cx.func(f).class.as_deref() == Some(class) && (must_not_wait(f) || stop(c))
        })
}

/// A `for` loop's iterable is a collection already in memory: a name, an
/// attribute or a literal (`for item in tests:`), not a stream read as it
/// arrives.
fn in_memory(cx: &FileCx, iter: ExprId) -> bool {
    let iter = cx.model.strip(iter);
    if let Some(c) = cx.call(iter) {
        // `enumerate(self._cases)`, `sorted(jobs)`, `range(n)`,
        // `tasks.items()`: a view of what is already there.
        return match (c.target.as_deref(), c.receiver) {
            (Some("builtins.range"), _) => true,
            (
                Some(
                    "builtins.enumerate" | "builtins.reversed" | "builtins.sorted"
                    | "builtins.list" | "builtins.tuple" | "builtins.zip",
                ),
                _,
            ) => {
                c.positional(0).is_some()
                    && (c.args.iter())
                        .filter(|a| a.name.is_none())
                        .all(|a| !a.spread && in_memory(cx, a.value))
            }
            (_, Some(r)) if matches!(c.name.as_str(), "items" | "values" | "keys") => {
                c.args.is_empty() && in_memory(cx, r)
            }
            _ => false,
        };
    }
    matches!(
        cx.expr(iter).kind,
        ExprKind::Name { .. } | ExprKind::Attr { .. } | ExprKind::Collection { .. }
    )
}

/// Every put into the queue sits under `if not self._done:` and is followed
/// in that branch by `self._done = True`: the flag lets one item in, ever
/// (a state the caller reads once: `await self._check_list_state.get()`).
fn put_once(cx: &FileCx, ctor: ExprId) -> bool {
    let Some((_, name)) = bound_name(cx, ctor) else {
        return false;
    };
    let puts = puts_into(cx, &name);
    let mut flags = puts.iter().map(|&(e, _)| {
        let s = cx.tree.enclosing_stmt(e)?;
        cx.tree.stmt_ancestors(s).find_map(|a| {
            let StmtKind::If { cond, then, .. } = &cx.stmt(a).kind else {
                return None;
            };
            let ExprKind::Unary { op: UnOp::Not, operand } = &cx.expr(*cond).kind else {
                return None;
            };
            let flag = cx.model.dotted(*operand)?;
            let sets = then.iter().any(|&t| {
                cx.stmt(t).span.start > cx.expr(e).span.start
                    && matches!(&cx.stmt(t).kind, StmtKind::Assign { targets, value: Some(v), .. }
                        if targets.iter().any(|&x| cx.model.dotted(x).as_deref() == Some(flag.as_str()))
                            && matches!(cx.model.literal(*v), Some(Lit::Bool(true))))
            });
            sets.then_some(flag)
        })
    });
    let Some(Some(first)) = flags.next() else {
        return false;
    };
    flags.all(|f| f.as_deref() == Some(first.as_str()))
}

/// A page buffer: every put into the queue runs only once it is empty,
/// under `if self._items.empty():` (or in a function the file only calls
/// there: `if self._items.empty(): await self._fill()`), so it holds one
/// batch at most (a page of results), never a backlog.
fn refilled_when_empty(cx: &FileCx, ctor: ExprId) -> bool {
    let Some((_, name)) = bound_name(cx, ctor) else {
        return false;
    };
    let under_empty_check = |e: ExprId| {
        cx.tree.enclosing_stmt(e).is_some_and(|s| {
            cx.tree.stmt_ancestors(s).any(|a| {
                matches!(&cx.stmt(a).kind, StmtKind::If { cond, then, .. }
                if crate::util::block_contains(cx, then, s)
                    && cx.call(*cond).is_some_and(|c| {
                        c.name == "empty"
                            && c.receiver.and_then(|r| cx.model.dotted(r)).as_deref()
                                == Some(name.as_str())
                    }))
            })
        })
    };
    // Or in the filling method, which the file calls only there (discord.py's
    // `fill_messages`, public by name, private in use).
    let puts = puts_into(cx, &name);
    !puts.is_empty()
        && puts.iter().all(|&(e, _)| {
            under_empty_check(e)
                || crate::python::common::called_only(cx, cx.func_of(e), under_empty_check)
        })
}

/// A pool's free list, not a work queue: a private attribute filled with a
/// fixed number of resources by a loop over `range(n)` (`for _ in range(self._size):
/// await self._slots.put(await self._new_slot())`), and otherwise only
/// given back what was taken: every other put is in a function that takes
/// from it too (`slot = await self._slots.get()` ... `put(slot)`), or in
/// one named for giving back (`_release`, `return_connection`,
/// `_discard_and_replace`). It never holds more than the pool's size. Or,
/// made on demand, only ever given back what a checkout took.
fn free_list(cx: &FileCx, ctor: ExprId) -> bool {
    let Some((_, name)) = bound_name(cx, ctor) else {
        return false;
    };
    // Only this file fills a private attribute (other modules reach a
    // public one: `client.dispatcher.updates_queue.put_nowait(update)`).
    if !name
        .strip_prefix("self.")
        .is_some_and(|a| a.starts_with('_'))
    {
        return false;
    }
    let takers: Vec<FuncId> = cx
        .calls_named(&["get", "get_nowait"])
        .into_iter()
        .filter(|(_, c)| c.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some(&*name))
        .map(|(e, _)| cx.func_of(e))
        .collect();
    let puts = puts_into(cx, &name);
    // A resource per round (`put(await self._new_slot())`, `put(i)`), not
    // a sentinel (`put(None)` once per worker, to stop them).
    let seeds = |e: ExprId| {
        cx.call(e)
            .and_then(|c| c.positional(0))
            .is_some_and(|a| !matches!(cx.model.literal(a), Some(Lit::Null)))
            && cx.tree.enclosing_stmt(e).is_some_and(|s| {
                cx.tree
                    .stmt_ancestors(s)
                    .chain(std::iter::once(s))
                    .any(|a| {
                        matches!(&cx.stmt(a).kind, StmtKind::For { iter, .. }
                    if cx.call(cx.model.strip(*iter))
                        .is_some_and(|c| c.target.as_deref() == Some("builtins.range")))
                    })
            })
    };
    let gives_back = |f: FuncId| {
        let n = cx.func(f).name.trim_start_matches('_').to_ascii_lowercase();
        takers.contains(&f)
            || [
                "release",
                "return",
                "put_back",
                "give_back",
                "recycle",
                "free",
                "replace",
            ]
            .iter()
            .any(|w| n.contains(w))
    };
    // Made lazily instead (`if self._created < self._size: return
    // self._root.cursor()` in a taker): every put gives back a local the
    // function took through a taker of the file (`cursor =
    // self._checkout()` ... `finally: self._idle.put(cursor)`).
    let gives_back_taken = |e: ExprId| {
        let f = cx.func_of(e);
        cx.call(e)
            .and_then(|c| c.positional(0))
            .and_then(|a| cx.model.name_of(a))
            .is_some_and(|n| {
                let vals: Vec<Option<ExprId>> =
                    crate::python::common::values_bound_to(cx, f, n).collect();
                matches!(vals.as_slice(), [Some(v)]
                if cx.call(cx.model.strip(*v)).is_some_and(|k| {
                    cx.callee_in_file(k).is_some_and(|g| takers.contains(&g))
                }))
            })
    };
    !takers.is_empty()
        && ((puts.iter().any(|&(e, _)| seeds(e))
            && puts
                .iter()
                .all(|&(e, _)| seeds(e) || gives_back(cx.func_of(e))))
            || (!puts.is_empty() && puts.iter().all(|&(e, _)| gives_back_taken(e))))
}

/// A reply mailbox the file empties before each request: a function drains
/// what is left (`while not self._replies.empty(): self._replies.
/// get_nowait()`, itself or through a helper of the file) and then waits
/// for the answer (`await self._replies.get()`, itself or through a helper
/// it calls). The queue holds the replies to one request at a time; a stale
/// one is thrown away, not kept. Swapping in a fresh queue there instead
/// (`if not self.responses.empty(): self.responses = queue.Queue()`)
/// throws the stale ones away too. Draining at teardown (`close`) and then
/// reading nothing is no such thing.
fn emptied_before_each_request(cx: &FileCx, ctor: ExprId) -> bool {
    let Some((_, name)) = bound_name(cx, ctor) else {
        return false;
    };
    let on_queue = |c: &Call, method: &str| {
        c.name == method && c.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some(&*name)
    };
    let drains = |g: FuncId| {
        cx.body_stmts(g).iter().any(|&s| {
            matches!(&cx.stmt(s).kind, StmtKind::While { cond, body, .. }
                if unsnarl_model::walk::exprs_under(cx.model, *cond)
                    .into_iter()
                    .any(|e| cx.call(e).is_some_and(|c| on_queue(c, "empty") || on_queue(c, "qsize")))
                    && unsnarl_model::walk::calls_in_block(cx.model, body)
                        .into_iter()
                        .any(|e| cx.call(e).is_some_and(|c| on_queue(c, "get_nowait") || on_queue(c, "get"))))
        })
    };
    let reads = |g: FuncId| {
        cx.body_calls(g)
            .any(|e| cx.call(e).is_some_and(|c| on_queue(c, "get")))
    };
    // Where a fresh queue is assigned to it: a swap is one made again
    // after another (`__init__` makes the first). Only an attribute
    // (`self.responses`) is one queue across functions; locals of the same
    // name in two functions are two queues.
    let attribute = name.contains('.');
    let made_in: Vec<FuncId> = cx
        .model
        .stmts
        .iter()
        .enumerate()
        .filter(|_| attribute)
        .filter(|(_, st)| {
            matches!(&st.kind, StmtKind::Assign { targets, value: Some(v), .. }
                if targets.iter().any(|&t| cx.model.dotted(t).as_deref() == Some(&*name))
                    && cx.call(cx.model.strip(*v)).is_some_and(|c| cx.effect(c, Effect::Queue).is_some()))
        })
        .map(|(i, _)| cx.tree.stmt_func(StmtId(i as u32)))
        .collect();
    let replaces =
        |g: FuncId| made_in.len() >= 2 && cx.func(g).name != "__init__" && made_in.contains(&g);
    // The function itself, or a function of the file it calls (`depth`
    // calls down).
    fn itself_or_callee(cx: &FileCx, f: FuncId, depth: u32, test: &dyn Fn(FuncId) -> bool) -> bool {
        test(f)
            || depth > 0
                && cx.body_calls(f).any(|e| {
                    cx.call(e)
                        .and_then(|c| cx.callee_in_file(c))
                        .is_some_and(|g| g != f && itself_or_callee(cx, g, depth - 1, test))
                })
    }
    cx.model.function_ids().any(|f| {
        !crate::python::common::is_closing_method(cx.func(f).name.trim_start_matches('_'))
            && (itself_or_callee(cx, f, 1, &drains) || replaces(f))
            && itself_or_callee(cx, f, 2, &reads)
    })
}

/// The unbounded queue is one branch of a choice whose other branch builds
/// it with a bound (`asyncio.Queue() if size is None else
/// asyncio.Queue(size)`): the bound is an option the caller left unset,
/// and the code already offers what the fix asks for.
fn bound_left_to_caller(cx: &FileCx, ctor: ExprId) -> bool {
    let unsnarl_model::walk::Parent::Expr(p) = cx.tree.expr_parent(ctor) else {
        return false;
    };
    let ExprKind::Ternary { then, orelse, .. } = cx.expr(p).kind else {
        return false;
    };
    let other = if cx.model.strip(then) == ctor {
        orelse
    } else {
        then
    };
    cx.call(cx.model.strip(other)).is_some_and(|c| {
        cx.effect(c, Effect::Queue)
            .is_some_and(|entry| crate::util::unbounded_reason(cx.model, c, entry).is_none())
    })
}

/// The queue is stored in a private attribute (`self._pending`) or a local
/// of a function that nothing else in the file puts into: every other use
/// calls one of its methods other than `put`/`put_nowait` (`empty()`,
/// `get_nowait()` when clearing it), also through a helper of the file it
/// is handed to, and none hands it elsewhere (a public
/// attribute or a module-level name may be used from other modules). A
/// leftover nobody can put into cannot grow.
fn never_used(cx: &FileCx, ctor: ExprId) -> bool {
    let Some((target, name)) = bound_name(cx, ctor) else {
        return false;
    };
    let private = name
        .strip_prefix("self.")
        .is_some_and(|a| a.starts_with('_'))
        || (matches!(cx.expr(target).kind, ExprKind::Name { .. }) && cx.func_of(ctor).0 != 0);
    private
        && !cx.model.exprs.iter().enumerate().any(|(i, e)| {
            let u = ExprId(i as u32);
            u != target
                && matches!(e.kind, ExprKind::Name { .. } | ExprKind::Attr { .. })
                && cx.model.dotted(u).as_deref() == Some(&*name)
                && !drains_or_inspects(cx, u, true)
        })
}

/// The use `u` of a queue only calls one of its methods other than `put`
/// (`q.empty()`, `q.get_nowait()`), or, when `follow`, hands it to a
/// function of the file whose parameter is used only that way (a
/// `_clear_queue(q)` helper).
fn drains_or_inspects(cx: &FileCx, u: ExprId, follow: bool) -> bool {
    use unsnarl_model::walk::Parent;
    match cx.tree.expr_parent(u) {
        Parent::Expr(a) => match &cx.expr(a).kind {
            ExprKind::Attr { obj, name, .. } if *obj == u => {
                !matches!(name.as_str(), "put" | "put_nowait")
                    && matches!(cx.tree.expr_parent(a), Parent::Expr(c)
                        if cx.call(c).is_some_and(|c| c.func == a))
            }
            ExprKind::Call(c) if follow => {
                let Some(g) = cx.callee_in_file(c) else {
                    return false;
                };
                let Some(i) = c.args.iter().position(|arg| arg.value == u) else {
                    return false;
                };
                let Some(param) = cx.param_receiving(g, c, i) else {
                    return false;
                };
                cx.body_exprs(g)
                    .iter()
                    .filter(|&&x| cx.model.name_of(x) == Some(param))
                    .all(|&x| drains_or_inspects(cx, x, false))
            }
            _ => false,
        },
        _ => false,
    }
}

/// The queue is filled only with `put_nowait` (called, or handed over as
/// `loop.call_soon_threadsafe(q.put_nowait, x)`), never with a `put` that
/// could wait: bounding it alone would make those calls raise.
fn fed_only_nowait(cx: &FileCx, ctor: ExprId) -> bool {
    let Some((_, name)) = bound_name(cx, ctor) else {
        return false;
    };
    let mut nowait = false;
    for e in &cx.model.exprs {
        if let ExprKind::Attr { obj, name: m, .. } = &e.kind
            && matches!(m.as_str(), "put" | "put_nowait")
            && cx.model.dotted(*obj).as_deref() == Some(&*name)
        {
            if m == "put" {
                return false;
            }
            nowait = true;
        }
    }
    nowait
}

/// Every put into the queue is a `put_nowait` inside a `try` that catches
/// `queue.Full`/`asyncio.QueueFull`: the producers were written to drop
/// items when the queue is full, which an unbounded queue never is.
fn sheds_when_full(cx: &FileCx, ctor: ExprId) -> bool {
    let Some((_, name)) = bound_name(cx, ctor) else {
        return false;
    };
    let catches_full = |e: ExprId| {
        cx.tree.enclosing_stmt(e).is_some_and(|s| {
            cx.tree.stmt_ancestors(s).any(|a| {
                matches!(&cx.stmt(a).kind, StmtKind::Try { body, handlers, .. }
                if body.iter().any(|&b| cx.stmt(b).span.contains(cx.expr(e).span))
                    && handlers.iter().any(|h| h.types.iter().any(|t| {
                        matches!(t.rsplit('.').next(), Some("Full" | "QueueFull"))
                    })))
            })
        })
    };
    let puts = puts_into(cx, &name);
    !puts.is_empty()
        && puts
            .iter()
            .all(|&(e, c)| c.name == "put_nowait" && catches_full(e))
}

/// Every put into the queue (through the name it is bound to) sends a
/// message fixed in the code (`{"type": "startup"}`, `None`, a literal),
/// outside any loop: a lifecycle mailbox (ASGI lifespan events, a stop
/// sentinel) that holds at most one message per place that puts one.
fn carries_fixed_messages(cx: &FileCx, ctor: ExprId) -> bool {
    let Some((_, name)) = bound_name(cx, ctor) else {
        return false;
    };
    let fixed = |e: ExprId| {
        unsnarl_model::walk::exprs_under(cx.model, e)
            .into_iter()
            .all(|x| {
                matches!(
                    cx.expr(x).kind,
                    ExprKind::Literal(_) | ExprKind::Collection { .. }
                )
            })
    };
    let puts = puts_into(cx, &name);
    !puts.is_empty()
        && puts.iter().all(|&(e, c)| {
            !cx.in_loop(e) && c.args.len() == 1 && c.positional(0).is_some_and(fixed)
        })
}

/// A request/reply mailbox: every item put into the queue (directly or
/// handed over as `loop.call_soon_threadsafe(q.put_nowait, item)`) carries
/// a future the putting function made just for it and then waits on
/// (`reply = Future(); ..put_nowait((fn, args, reply)); return
/// reply.result()`; or a one-slot queue it reads, `response =
/// queue.Queue(maxsize=1)` then `response.get(timeout=t)`), or is a fixed
/// message (a `None` sentinel). Each
/// producer has at most one item in the queue, so it cannot outgrow them.
fn request_reply(cx: &FileCx, ctor: ExprId) -> bool {
    // The queue's name; or, for one of a dict of mailboxes
    // (`self._queues[agent_id] = asyncio.Queue()`), the dict's: a put
    // into any of its queues counts.
    let (name, in_dict) = match bound_name(cx, ctor) {
        Some((_, name)) => (name, false),
        None => match dict_slot(cx, ctor) {
            Some(dict) => (dict, true),
            None => return false,
        },
    };
    let is_the_queue = |r: ExprId| match &cx.expr(cx.model.strip(r)).kind {
        ExprKind::Index { obj, .. } if in_dict => {
            cx.model.dotted(*obj).as_deref() == Some(name.as_str())
        }
        _ => !in_dict && cx.model.dotted(r).as_deref() == Some(name.as_str()),
    };
    let is_queue_put = |e: ExprId| {
        matches!(&cx.expr(e).kind, ExprKind::Attr { obj, name: m, .. }
            if matches!(m.as_str(), "put" | "put_nowait") && is_the_queue(*obj))
    };
    // (the call making the put, the item it puts)
    let mut items: Vec<(ExprId, ExprId)> = Vec::new();
    let puts = cx
        .calls_named(&["put", "put_nowait"])
        .into_iter()
        .filter(|(_, c)| c.receiver.is_some_and(is_the_queue));
    for (e, c) in puts {
        let Some(item) = c.positional(0) else {
            return false;
        };
        items.push((e, item));
    }
    for (e, c) in cx.calls_named(&["call_soon_threadsafe", "call_soon"]) {
        if c.positional(0).is_some_and(is_queue_put) {
            let Some(item) = c.positional(1) else {
                return false;
            };
            items.push((e, item));
        }
    }
    // A future, or an event the producer waits on until the consumer sets
    // it (a hand-off in lockstep, a FIFO of waiters).
    // Or a queue with room for the one answer (`response =
    // queue.Queue(maxsize=1)`), read with `response.get(timeout=t)`.
    let one_slot = |c: &Call| {
        cx.effect(c, Effect::Queue)
            .and_then(|e| crate::util::queue_bound(c, e))
            .and_then(|v| cx.model.int_value(v))
            == Some(1)
    };
    // Or any fresh queue the producer then reads its answer from
    // (`result_queue = queue.Queue()` put inside the request, then
    // `result_queue.get()`): one answer per request, whatever its bound.
    let makes_future = |c: &Call| {
        crate::python::common::completion_kind(cx, c).is_some_and(|k| k != "signal-wait")
            || one_slot(c)
            || cx.effect(c, Effect::Queue).is_some()
    };
    // A fixed message: a literal (a `None` sentinel), or a literal built
    // of literals and fresh objects (`{"type": "CLOSE", "result_queue":
    // queue.Queue()}`), carrying nothing from outside.
    let fixed = |item: ExprId| {
        unsnarl_model::walk::exprs_under(cx.model, item)
            .into_iter()
            .all(|x| match &cx.expr(x).kind {
                ExprKind::Literal(_) | ExprKind::Collection { .. } => true,
                ExprKind::Call(c) => c.args.is_empty(),
                // The callee of such a call (`queue.Queue`).
                ExprKind::Name { .. } | ExprKind::Attr { .. } => {
                    matches!(
                        cx.tree.expr_parent(x),
                        Parent::Expr(p) if cx.call(p).is_some_and(|c| c.func == x)
                    ) || matches!(cx.tree.expr_parent(x), Parent::Expr(p)
                    if matches!(cx.expr(p).kind, ExprKind::Attr { .. }))
                }
                _ => false,
            })
    };
    items.iter().any(|&(_, item)| !fixed(item))
        && items.iter().all(|&(put, item)| {
            if fixed(item) {
                return true;
            }
            let f = cx.func_of(put);
            waits_for_its_turn(cx, put)
                || unsnarl_model::walk::exprs_under(cx.model, item).into_iter().any(|x| {
                    let Some(reply) = cx.model.name_of(x) else { return false };
                    let made_here = crate::python::common::values_bound_to(cx, f, reply)
                        .any(|v| v.and_then(|v| cx.call(v)).is_some_and(makes_future));
                    let waited = cx.body_calls(f).any(|w| {
                        cx.call(w).is_some_and(|k| {
                            (matches!(k.name.as_str(), "result" | "wait" | "get")
                                && k.receiver.and_then(|r| cx.model.name_of(r)) == Some(reply))
                                // `await asyncio.wait_for(reply, timeout)`, or a
                                // thread's future awaited on the loop
                                // (`await asyncio.wrap_future(reply)`)
                                || (matches!(
                                    k.target.as_deref(),
                                    Some("asyncio.wait_for" | "asyncio.wrap_future")
                                ) && k.positional(0).and_then(|a| cx.model.name_of(a))
                                    == Some(reply))
                        })
                    }) || cx.model.exprs.iter().any(|e| {
                        matches!(e.kind, ExprKind::Await(inner) if cx.model.name_of(inner) == Some(reply))
                    });
                    made_here && waited
                })
        })
}

/// The dict a queue is stored into by key (`self._queues[agent_id] =
/// asyncio.Queue()`), by its dotted name.
fn dict_slot(cx: &FileCx, ctor: ExprId) -> Option<String> {
    match &cx.expr(sole_target(cx, ctor)?).kind {
        ExprKind::Index { obj, .. } => cx.model.dotted(*obj),
        _ => None,
    }
}

/// The statement right after the put waits on an event the consumer sets
/// when it has taken the item (`await q.put(ev); await
/// self.next_step_event.wait()`): a producer in lockstep with its
/// consumer, one item in the queue at a time.
fn waits_for_its_turn(cx: &FileCx, put: ExprId) -> bool {
    let Some(next) = cx
        .tree
        .enclosing_stmt(put)
        .and_then(|s| crate::util::next_stmt(cx, s))
    else {
        return false;
    };
    let StmtKind::Expr(e) = cx.stmt(next).kind else {
        return false;
    };
    let ExprKind::Await(inner) = cx.expr(e).kind else {
        return false;
    };
    cx.call(cx.model.strip(inner)).is_some_and(|c| {
        c.name == "wait"
            && c.args.is_empty()
            && c.receiver.is_some_and(|r| {
                cx.sema.type_of(r).is_some_and(|t| t.ends_with("Event"))
                    || cx
                        .model
                        .dotted(r)
                        .is_some_and(|d| d.to_ascii_lowercase().ends_with("event"))
            })
    })
}

/// Every put into the queue is made by a signal handler (a function of the
/// file installed with `signal.signal`): a handler cannot wait for room
/// (the queue it fills has to be reentrant, `SimpleQueue`), and signals
/// come at the pace someone sends them.
fn fed_by_signal_handlers(cx: &FileCx, ctor: ExprId) -> bool {
    let Some((_, name)) = bound_name(cx, ctor) else {
        return false;
    };
    let handlers: Vec<FuncId> = cx
        .calls_to(&["signal.signal"])
        .into_iter()
        .filter_map(|(_, c)| {
            c.positional(1)
                .and_then(|h| crate::python::common::local_callable(cx, h))
        })
        .collect();
    if handlers.is_empty() {
        return false;
    }
    let puts = puts_into(cx, &name);
    !puts.is_empty() && puts.iter().all(|&(e, _)| handlers.contains(&cx.func_of(e)))
}

/// The `put`/`put_nowait` calls on the queue bound to `name`.
/// A completion queue: a local of the function, fed only by the done
/// callbacks it attaches to tasks it started (`t.add_done_callback(cb)`
/// with a nested `cb` that runs `q.put_nowait(t)`), and read by the
/// function itself. It holds at most one item per task started, and a
/// bound would make the callback's `put_nowait` raise.
fn completion_queue(cx: &FileCx, ctor: ExprId) -> bool {
    let Some((_, home, name)) = local_queue(cx, ctor) else {
        return false;
    };
    let puts = puts_into(cx, name);
    let callbacks: Vec<FuncId> = cx
        .with_nested(home)
        .into_iter()
        .flat_map(|g| cx.body_calls(g).collect::<Vec<_>>())
        .filter_map(|e| {
            let c = cx.call(e)?;
            if c.name != "add_done_callback" {
                return None;
            }
            let cb = cx.model.strip(c.positional(0)?);
            match &cx.expr(cb).kind {
                ExprKind::Closure(g) => Some(*g),
                _ => {
                    let n = cx.model.name_of(cb)?;
                    cx.with_nested(home)
                        .into_iter()
                        .find(|&g| g != home && cx.func(g).name == n)
                }
            }
        })
        .collect();
    let gets = cx.body_calls(home).any(|e| {
        cx.call(e).is_some_and(|c| {
            c.name == "get" && c.receiver.and_then(|r| cx.model.name_of(r)) == Some(name)
        })
    });
    // Used only through calls of its own methods: not handed on, nor its
    // `put` given away as a callback (`feed.subscribe(q.put_nowait)`).
    let only_called = cx.with_nested(home).into_iter().all(|g| {
        cx.body_exprs(g).iter().all(|&x| {
            cx.model.name_of(x) != Some(name) || {
                let up = |y: ExprId| match cx.tree.expr_parent(y) {
                    unsnarl_model::walk::Parent::Expr(p) => Some(p),
                    _ => None,
                };
                up(x).is_some_and(|a| {
                    matches!(cx.expr(a).kind, ExprKind::Attr { .. })
                        && up(a).and_then(|c| cx.call(c)).is_some_and(|c| c.func == a)
                }) || crate::python::common::is_store(cx, x)
            }
        })
    });
    gets && only_called
        && !puts.is_empty()
        && puts
            .iter()
            .all(|&(p, _)| callbacks.contains(&cx.func_of(p)))
}

fn puts_into<'a>(cx: &FileCx<'a>, name: &str) -> Vec<(ExprId, &'a Call)> {
    cx.calls_named(&["put", "put_nowait"])
        .into_iter()
        .filter(|(_, c)| c.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some(name))
        .collect()
}

/// High/low watermark flow control around the queue: the file compares
/// its fill level (`q.qsize()`, `len(q...)`, `ch.statistics()...`) in an
/// `if` whose branch pauses or resumes the producer (`pause_reading()`,
/// `self.resume()`) or takes the oldest item out (`q.get()`). The bound is
/// enforced by pausing the source or dropping instead of blocking `put`
/// (which a protocol callback cannot do).
fn flow_controlled(cx: &FileCx, ctor: ExprId) -> bool {
    use unsnarl_model::walk::{Parent, exprs_under};
    let Parent::Stmt(s) = cx.tree.expr_parent(ctor) else {
        return false;
    };
    let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind else {
        return false;
    };
    let names: Vec<String> = targets
        .iter()
        .flat_map(|&t| exprs_under(cx.model, t))
        .filter_map(|e| cx.model.dotted(e))
        .filter(|d| !d.is_empty())
        .collect();
    if names.is_empty() {
        return false;
    }
    let measures_queue = |e: ExprId| {
        cx.call(e).is_some_and(|c| {
            let of_queue = |x: ExprId| {
                exprs_under(cx.model, x)
                    .into_iter()
                    .any(|y| cx.model.dotted(y).is_some_and(|d| names.contains(&d)))
            };
            match (c.name.as_str(), c.receiver) {
                ("qsize" | "statistics", Some(r)) => of_queue(r),
                ("len", None) => c.positional(0).is_some_and(of_queue),
                _ => false,
            }
        })
    };
    // `q.empty()` / `q.full()`: a fill level already read as a yes or no
    // (`if self.paused and self.inbox.empty(): resume_reading()`).
    let tests_queue = |e: ExprId| {
        cx.call(e).is_some_and(|c| {
            matches!(c.name.as_str(), "empty" | "full")
                && c.receiver
                    .is_some_and(|r| cx.model.dotted(r).is_some_and(|d| names.contains(&d)))
        })
    };
    let throttles = |b: &Block| {
        unsnarl_model::walk::calls_in_block(cx.model, b)
            .into_iter()
            .any(|e| {
                let n = cx.call(e).unwrap().name.to_ascii_lowercase();
                n.contains("pause") || n.contains("resume") || n.contains("throttle")
            })
    };
    // Drops the oldest item when the level is over a limit (`if q.qsize()
    // > capacity: q.get()`, `if q.full(): q.get_nowait()`): a ring buffer
    // that never holds more than that. (A `get` after `if not q.empty():`
    // is a consumer, not a bound.)
    let over_limit = |e: ExprId| match &cx.expr(e).kind {
        ExprKind::Binary {
            op: BinOp::Gt | BinOp::GtE,
            left,
            ..
        } => exprs_under(cx.model, *left).into_iter().any(measures_queue),
        _ => cx.call(e).is_some_and(|c| {
            c.name == "full"
                && c.receiver
                    .is_some_and(|r| cx.model.dotted(r).is_some_and(|d| names.contains(&d)))
        }),
    };
    let drops_oldest = |b: &Block| {
        unsnarl_model::walk::calls_in_block(cx.model, b)
            .into_iter()
            .any(|e| {
                let c = cx.call(e).unwrap();
                matches!(c.name.as_str(), "get" | "get_nowait")
                    && c.receiver
                        .and_then(|r| cx.model.dotted(r))
                        .is_some_and(|d| names.contains(&d))
            })
    };
    // ... in the function that puts into it: the producer makes room (a
    // consumer waiting for a count, `if q.qsize() >= count: return
    // q.get_nowait()`, takes what it came for).
    let producer = |st: usize| {
        let f = cx.tree.stmt_func(StmtId(st as u32));
        names
            .iter()
            .any(|n| puts_into(cx, n).iter().any(|&(p, _)| cx.func_of(p) == f))
    };
    cx.model
        .stmts
        .iter()
        .enumerate()
        .any(|(i, st)| match &st.kind {
            StmtKind::If { cond, then, .. } => {
                let cond_exprs = exprs_under(cx.model, *cond);
                (cond_exprs.iter().any(|&e| {
                    tests_queue(e)
                        || (matches!(&cx.expr(e).kind, ExprKind::Binary { .. })
                            && exprs_under(cx.model, e).into_iter().any(measures_queue))
                }) && throttles(then))
                    || (cond_exprs.into_iter().any(over_limit) && drops_oldest(then) && producer(i))
            }
            _ => false,
        })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import asyncio, queue, multiprocessing
from asyncio import Queue as AQ

a = asyncio.Queue()  # expect
b = asyncio.Queue(maxsize=0)  # expect
c = queue.Queue()  # expect
d = multiprocessing.Queue()  # expect
e = AQ(0)  # expect
f = asyncio.PriorityQueue(-1)  # expect
g = queue.SimpleQueue()  # expect
"#,
        r#"
import queue
import threading


class Stream:
    def __init__(self):
        self.lock = threading.Lock()
        self.streams = {}

    def on_event(self, data):
        # Every chunk of a reply goes to its request's queue.
        self.streams[data["id"]].put(data)

    def request(self, request_id, send):
        with self.lock:
            self.streams[request_id] = queue.Queue()  # expect
        send(request_id)
        q = self.streams[request_id]
        while True:
            chunk = q.get()
            if chunk.get("done"):
                return
"#,
        r#"
import asyncio


class Router:
    def __init__(self):
        self._queues = {}

    def connect(self, agent):
        self._queues[agent.id] = asyncio.Queue()  # expect
        self._workers.append(asyncio.create_task(self._serve(agent)))

    async def _serve(self, agent):
        queue = self._queues[agent.id]
        while True:
            await agent.handle(await queue.get())

    async def tell(self, agent_id, msg):
        # Nobody waits for the agent: a fast sender fills its mailbox.
        await self._queues[agent_id].put(msg)
"#,
        r#"
import queue, threading


class BackgroundWriteMixin:
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._records = queue.Queue()  # expect
        threading.Thread(target=self._write_loop, daemon=True).start()

    def _write_loop(self):
        while True:
            self.deliver(self._records.get())

    def emit(self, record):
        self._records.put(record)


# Not a logging handler: `emit` is called by the event bus for every
# event, as fast as it publishes.
class BackgroundEventSink(BackgroundWriteMixin, EventSink):
    pass
"#,
        r#"
import queue, threading

def relay(proc, upstream):
    q = queue.Queue()  # expect

    def _reader(stream, label):
        try:
            for line in stream:
                q.put((label, line))
        finally:
            q.put((label, None))

    threading.Thread(target=_reader, args=(proc.stdout, "out"), daemon=True).start()
    # A socket's lines arrive at the peer's pace, not the child's.
    threading.Thread(target=_reader, args=(upstream.makefile(), "net"), daemon=True).start()
    while True:
        label, line = q.get()
        yield label, line
"#,
        r#"
import asyncio

async def crawl(start, fetch, links):
    frontier = asyncio.Queue()  # expect
    await frontier.put(start)

    async def enqueue(page):
        for link in links(page):
            await frontier.put(link)

    async def worker():
        while True:
            url = await frontier.get()
            await enqueue(await fetch(url))
            frontier.task_done()

    async def on_webhook(url):
        # Anyone posting to the hook adds work the workers must keep up with.
        await frontier.put(url)

    return worker, on_webhook
"#,
        r#"
import logging, queue, threading

class SlowSinkHandler(logging.Handler):
    def __init__(self, sink):
        super().__init__()
        self.sink = sink
        self.records = queue.Queue()  # expect
        threading.Thread(target=self.drain, daemon=True).start()

    def drain(self):
        while True:
            self.sink.send(self.format(self.records.get()))

    def emit(self, record):
        self.records.put(record)

    def replay(self, records):
        for r in records:
            self.records.put(r)
"#,
        r#"
import math
import trio

send, recv = trio.open_memory_channel(math.inf)  # expect
"#,
        r#"
import asyncio

class Reader:
    def __init__(self, transport):
        self.frames = asyncio.Queue()  # expect
        self.transport = transport

    def feed(self, frame):
        self.frames.put_nowait(frame)
        if self.frames.qsize() > 1000:
            log.warning("backlog")
"#,
        r#"
import queue
import threading

class Crawler:
    def __init__(self):
        self.frontier = queue.Queue()  # expect
        threading.Thread(target=self.worker).start()

    def worker(self):
        while True:
            url = self.frontier.get()
            for link in fetch(url):
                self.frontier.put(link)
"#,
        r#"
import queue
import signal

class Master:
    def __init__(self):
        self.sigq = queue.SimpleQueue()  # expect

    def install(self):
        for s in (signal.SIGHUP, signal.SIGTERM):
            signal.signal(s, self.on_signal)

    def on_signal(self, sig, frame):
        self.sigq.put_nowait(sig)

    def forward(self, sock):
        while True:
            self.sigq.put(sock.recv(4096))

    def loop(self):
        while True:
            self.handle(self.sigq.get())

    def handle(self, sig):
        pass
"#,
        r#"
import queue
import threading

def produce(jobs, sink):
    for job in jobs:
        sink.put(job.compute())

class Pipeline:
    def start(self, jobs, worker):
        self.pending = queue.Queue()  # expect
        threading.Thread(target=produce, args=(jobs, self.pending), daemon=True).start()
        threading.Thread(target=worker, args=(self.pending,), daemon=True).start()
"#,
        r#"
import asyncio

class HookRunner:
    def __init__(self, app, frames):
        self.app = app
        self.frames = frames
        self._inbox = asyncio.Queue()  # expect

    async def startup(self):
        await self._inbox.put({"type": "startup"})

    async def shutdown(self):
        await self._inbox.put({"type": "shutdown"})
        async for frame in self.frames:
            await self._inbox.put({"type": "frame", "data": frame})

    async def _receive(self):
        return await self._inbox.get()
"#,
        r#"
import asyncio

class SensorFeed:
    """Threads push readings and never wait for them."""

    def push(self, value):
        self._loop.call_soon_threadsafe(self._readings.put_nowait, value)

    async def serve(self, sink):
        self._loop = asyncio.get_running_loop()
        self._readings = asyncio.Queue()  # expect
        while True:
            await sink.write(await self._readings.get())
"#,
        r#"
import asyncio

class Ingest:
    def __init__(self):
        self.events = asyncio.Queue[bytes]()  # expect

    async def on_data(self, chunk):
        await self.events.put(chunk)

    async def run(self, sink):
        while True:
            await sink.write(await self.events.get())
"#,
        r#"
import asyncio

class Conn:
    def __init__(self, reader):
        self.reader = reader
        self.pending = asyncio.Queue()  # expect
"#,
        r#"
import queue
import threading
import time

class Poller(threading.Thread):
    def __init__(self, sink):
        super().__init__(daemon=True)
        self.sink = sink
        self.later = queue.PriorityQueue()  # expect

    def schedule(self, msg):
        # Called from other threads.
        self.later.put((msg.eta, msg))

    def run(self):
        while True:
            eta, msg = self.later.get()
            time.sleep(max(0, eta - time.time()))
            self.sink(msg)
"#,
        r#"
import queue
import threading
from concurrent.futures import Future

class Pool:
    def __init__(self, n):
        self._work_queue = queue.Queue()  # expect
        self._threads = [threading.Thread(target=self._worker) for _ in range(n)]

    def submit(self, fn, *args):
        f = Future()
        self._work_queue.put((f, fn, args))
        return f

    def _worker(self):
        while True:
            f, fn, args = self._work_queue.get()
            f.set_result(fn(*args))
"#,
        r#"
from logging import Handler
from queue import SimpleQueue
from threading import Thread


class Relay:
    # Not a log handler: a relay of this file whose queue a slow sender
    # drains.
    def __init__(self, q):
        self.q = q

    def push(self, item):
        self.q.put(item)


def start(sender):
    q = SimpleQueue()  # expect
    relay = Relay(q)
    Thread(target=lambda: [sender(q.get()) for _ in iter(int, 1)]).start()
    return relay
"#,
        r#"
import asyncio


class FifoLock:
    def __init__(self):
        self._waiters = asyncio.Queue()  # expect

    async def acquire(self):
        ev = asyncio.Event()
        self._waiters.put_nowait(ev)
        await asyncio.sleep(0)


async def run_steps(agent, consumer):
    events = asyncio.Queue()  # expect
    next_step_event = asyncio.Event()

    async def produce():
        async for ev in agent.run():
            await events.put(ev)
            next_step_event.clear()
        await events.put(None)

    task = asyncio.create_task(produce())
    while (ev := await events.get()) is not None:
        await consumer(ev)
        next_step_event.set()
    await task
"#,
        r#"
import asyncio


class EventPump:
    def __init__(self):
        self._events = asyncio.Queue()  # expect

    def on_event(self, event):
        self._events.put_nowait(event)

    async def run(self, handle):
        while True:
            event = await self._events.get()
            await handle(event)

    def close(self):
        while not self._events.empty():
            self._events.get_nowait()
"#,
        r#"
import queue
import threading

def run_in_parallel(tests, jobs, source):
    work = queue.Queue()  # expect
    for item in tests:
        work.put(item, block=False)
    workers = [threading.Thread(target=drain, args=(work,)) for _ in range(jobs)]
    for w in workers:
        w.start()
    for item in source.follow():
        work.put(item)

def drain(work):
    while True:
        item = work.get()
        item.run()
"#,
        r#"
import asyncio

async def as_completed(coros, feed):
    q = asyncio.Queue()  # expect
    remaining = 0

    def result_callback(t):
        q.put_nowait(t)

    feed.subscribe(q.put_nowait)
    for coro in coros:
        t = asyncio.ensure_future(coro)
        t.add_done_callback(result_callback)
        remaining += 1
    while remaining:
        t = await q.get()
        remaining -= 1
        yield t
"#,
        r#"
import queue

class SdoClient:
    def __init__(self, network):
        self.network = network
        self.responses = queue.Queue()  # expect

    def on_response(self, can_id, data, timestamp):
        self.responses.put(bytes(data))

    def reset(self):
        self.responses = queue.Queue()  # expect

    def request_response(self, request):
        self.network.send_message(request)
        return self.responses.get(block=True, timeout=0.3)
"#,
        r#"
import asyncio


class Protocol(asyncio.DatagramProtocol):
    def __init__(self, lifo=False):
        self.queue = (
            asyncio.LifoQueue()  # expect
            if lifo
            else asyncio.Queue()  # expect
        )

    def datagram_received(self, data, addr):
        self.queue.put_nowait(data)
"#,
        r#"
import asyncio


class Workers:
    def __init__(self, size):
        self._size = size
        self._jobs = asyncio.Queue()  # expect

    async def start(self):
        for _ in range(self._size):
            await self._jobs.put(None)

    async def submit(self, job):
        # Anyone can add work: this is no free list.
        await self._jobs.put(job)

    async def run(self):
        while True:
            job = await self._jobs.get()
            if job is not None:
                await job()
"#,
        r#"
import asyncio


class Dispatcher:
    def __init__(self, workers):
        self.workers = workers
        # Filled by the client module on every update.
        self.updates_queue = asyncio.Queue()  # expect

    async def stop(self):
        for _ in range(self.workers):
            self.updates_queue.put_nowait(None)

    async def worker(self):
        while (packet := await self.updates_queue.get()) is not None:
            await self.handle(packet)
"#,
        r#"
import asyncio

class PageIterator:
    def __init__(self, fetch_page):
        self._fetch = fetch_page
        self._items = asyncio.Queue()  # expect

    async def next(self):
        if self._items.empty():
            await self._fill()
        return self._items.get_nowait()

    async def _fill(self):
        for item in await self._fetch(limit=100):
            await self._items.put(item)

    async def on_push(self, item):
        # Pushed items arrive whether or not anyone reads them.
        await self._items.put(item)
"#,
        r#"
import queue
import threading


class Listener:
    def __init__(self):
        self._caught = queue.Queue()  # expect
        threading.Thread(target=self._listen, daemon=True).start()

    def _listen(self):
        for packet in self.source():
            self._caught.put(packet)

    def wait(self, count):
        if self._caught.qsize() >= count:
            return [self._caught.get_nowait() for _ in range(count)]
        return []
"#,
    ],
    pass: &[
        r#"
import queue
import threading
from contextlib import contextmanager


class CursorPool:
    def __init__(self, connect, size=4):
        self._connect = connect
        self._size = size
        self._created = 0
        self._lock = threading.Lock()
        self._idle = queue.LifoQueue()

    @contextmanager
    def acquire(self):
        cursor = self._checkout()
        try:
            yield cursor
        finally:
            self._idle.put(cursor)

    def _checkout(self):
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            if self._created < self._size:
                self._created += 1
                return self._connect().cursor()
        return self._idle.get(timeout=30)
"#,
        r#"
import queue
import threading


class Runtime:
    def __init__(self):
        self._requests = queue.Queue()
        threading.Thread(target=self._worker, daemon=True).start()

    def _worker(self):
        while True:
            op, payload, response = self._requests.get()
            response.put(handle(op, payload))

    def call(self, op, payload):
        # One request per waiting caller: each waits for its own answer.
        response = queue.Queue(maxsize=1)
        self._requests.put((op, payload, response))
        return response.get(timeout=30)
"#,
        r#"
import queue
import threading


class Client:
    def __init__(self):
        self.lock = threading.Lock()
        self.response_queues = {}
        self._next_id = 0

    def on_message(self, data):
        msg_id = data.get("id")
        if msg_id in self.response_queues:
            self.response_queues[msg_id].put(data)

    def post(self, send, timeout=30):
        with self.lock:
            request_id = self._next_id
            self._next_id += 1
            # One reply, under this request's own id.
            self.response_queues[request_id] = queue.Queue()
        send(request_id)
        try:
            with self.lock:
                q = self.response_queues.get(request_id)
            return q.get(timeout=timeout)
        finally:
            with self.lock:
                del self.response_queues[request_id]
"#,
        r#"
import queue, threading

class Renderer:
    def __init__(self):
        self._jobs = queue.Queue(maxsize=16)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            url, reply = self._jobs.get()
            reply.put(self._render(url))

    def render(self, url, timeout):
        reply: queue.Queue = queue.Queue()
        self._jobs.put((url, reply))
        return reply.get(timeout=timeout)
"#,
        r#"
from multiprocessing import Process, Queue

def run(url, scrape):
    results = Queue()
    p = Process(target=scrape, args=(url, results))
    p.start()
    p.join()
    return results.get()
"#,
        r#"
import queue, subprocess, threading

def run_streaming(cmd):
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    q = queue.Queue()

    def _reader(stream, label):
        try:
            for line in stream:
                q.put((label, line.rstrip("\n")))
        finally:
            q.put((label, None))

    threading.Thread(target=_reader, args=(proc.stdout, "stdout"), daemon=True).start()
    threading.Thread(target=_reader, args=(proc.stderr, "stderr"), daemon=True).start()
    open_streams = 2
    while open_streams:
        label, line = q.get()
        if line is None:
            open_streams -= 1
        else:
            yield label, line
"#,
        r#"
import asyncio

async def crawl(start, fetch, links, depth=3):
    frontier = asyncio.Queue()
    await frontier.put((start, 0))

    async def enqueue(page, level):
        for link in links(page):
            await frontier.put((link, level + 1))

    async def worker():
        while True:
            url, level = await frontier.get()
            if level < depth:
                await enqueue(await fetch(url), level)
            frontier.task_done()

    tasks = [asyncio.create_task(worker()) for _ in range(5)]
    await frontier.join()
    for t in tasks:
        t.cancel()
"#,
        r#"
import queue, threading

class Spider:
    def __init__(self, seeds):
        self._todo = queue.Queue()
        for url in seeds:
            self._todo.put(url)

    def _work(self):
        while True:
            url = self._todo.get()
            for link in self.fetch_links(url):
                self._todo.put(link)
            self._todo.task_done()

    def run(self, n):
        for _ in range(n):
            threading.Thread(target=self._work, daemon=True).start()
        self._todo.join()
"#,
        r#"
import logging, queue, threading

class FifoHandler(logging.Handler):
    def __init__(self, path):
        super().__init__()
        self.path = path
        self.log_queue = queue.Queue()
        self.thread = threading.Thread(target=self.pump, daemon=True)
        self.thread.start()

    def pump(self):
        with open(self.path, "w") as fifo:
            while (record := self.log_queue.get()) is not None:
                fifo.write(self.format(record) + "\n")

    def emit(self, record):
        try:
            self.log_queue.put(record)
        except Exception:
            self.handleError(record)

    def close(self):
        super().close()
        self.log_queue.put(None)
        self.thread.join()
"#,
        r#"
import queue, threading
from logging import FileHandler


class BackgroundWriteMixin:
    """Hands records to a writer thread; mixed in before a file handler."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._records = queue.Queue()
        threading.Thread(target=self._write_loop, daemon=True).start()

    def _write_loop(self):
        while True:
            super().emit(self._records.get())

    def emit(self, record):
        self._records.put(record)


class BackgroundFileHandler(BackgroundWriteMixin, FileHandler):
    pass
"#,
        r#"
import asyncio

async def crawl_all(tickers, fetch, workers=4):
    queue = asyncio.Queue()
    lock = asyncio.Lock()
    results = []
    # Filled once from a list in memory, before any worker starts.
    for t in tickers:
        queue.put_nowait(t)

    async def worker():
        while not queue.empty():
            t = queue.get_nowait()
            page = await fetch(t)
            async with lock:
                results.append(page)

    await asyncio.gather(*(worker() for _ in range(workers)))
    return results
"#,
        r#"
import asyncio

class HistoryIterator:
    def __init__(self, channel, limit):
        self.channel = channel
        self.limit = limit
        self.messages = asyncio.Queue()

    async def next(self):
        if self.messages.empty():
            await self.fill_messages()
        return self.messages.get_nowait()

    async def fill_messages(self):
        data = await self.channel.logs_from(limit=min(self.limit, 100))
        for element in data:
            await self.messages.put(element)
"#,
        r#"
import asyncio

class PageIterator:
    def __init__(self, fetch_page):
        self._fetch = fetch_page
        self._items = asyncio.Queue()

    async def next(self):
        if self._items.empty():
            await self._fill()
        return self._items.get_nowait()

    async def _fill(self):
        for item in await self._fetch(limit=100):
            await self._items.put(item)
"#,
        r#"
import asyncio

from .states import ICE_COMPLETED, ICE_FAILED


class Connection:
    def __init__(self):
        self._check_list_done = False
        self._check_list_state = asyncio.Queue()

    async def connect(self):
        return await self._check_list_state.get()

    def _maybe_complete(self):
        if not self._check_list_done:
            self._check_list_state.put_nowait(ICE_COMPLETED)
            self._check_list_done = True

    def _maybe_fail(self):
        if not self._check_list_done:
            self._check_list_state.put_nowait(ICE_FAILED)
            self._check_list_done = True
"#,
        r#"
import asyncio


class BrowserPool:
    def __init__(self, size):
        self._size = size
        self._slots = asyncio.Queue()

    async def __aenter__(self):
        for _ in range(self._size):
            await self._slots.put(await self._new_slot())
        return self

    async def fetch(self, url):
        slot = await self._slots.get()
        try:
            return await slot.page.goto(url)
        except Exception:
            await self._discard_and_replace(slot)
            raise
        else:
            await self._slots.put(slot)

    async def _discard_and_replace(self, slot):
        await slot.close()
        await self._slots.put(await self._new_slot())
"#,
        r#"
import asyncio


class Adapter:
    def __init__(self, config):
        self.config = config
        self._pool: asyncio.Queue = asyncio.Queue()

    async def connect(self):
        # The real pool, bounded by its size, replaces the placeholder.
        self._pool = asyncio.Queue(maxsize=self.config.pool_size)
        for _ in range(self.config.pool_size):
            self._pool.put_nowait(await self._open())

    async def acquire(self):
        return await self._pool.get()
"#,
        r#"
import asyncio


class Call:
    def __init__(self):
        # Nothing ever puts into this one: it is only cleared.
        self._audio = asyncio.Queue()

    def disconnect(self):
        self._clear(self._audio)

    @staticmethod
    def _clear(queue):
        while not queue.empty():
            queue.get_nowait()
"#,
        r#"
import asyncio


class Protocol(asyncio.DatagramProtocol):
    def __init__(self, queue_size=None):
        self.queue = (
            asyncio.Queue() if queue_size is None else asyncio.Queue(queue_size)
        )

    def datagram_received(self, data, addr):
        self.queue.put_nowait(data)
"#,
        r#"
import asyncio


class OutboundHandler:
    def __init__(self, topic):
        self._message_response = asyncio.Queue()
        self._send_lock = asyncio.Lock()
        self._topic = topic

    async def async_send(self, **kwargs):
        async with self._send_lock:
            while not self._message_response.empty():
                self._message_response.get_nowait()
            publish(self._topic, **kwargs)
            async with asyncio.timeout(3):
                return await self._message_response.get()

    def handle_ack(self, **kwargs):
        self._message_response.put_nowait("ack")


class RecordReader:
    def __init__(self):
        self._record_queue = asyncio.Queue()

    async def read_first(self):
        self._clear_read_queue()
        publish("get_first")
        return await self._record_queue.get()

    def receive_record(self, record):
        self._record_queue.put_nowait(record)

    def _clear_read_queue(self):
        while not self._record_queue.empty():
            self._record_queue.get_nowait()
"#,
        r#"
from logging import Handler
from logging.handlers import QueueHandler, QueueListener
from queue import SimpleQueue


class LocalQueueHandler(QueueHandler):
    # Keeps QueueHandler's constructor: the queue is a log queue, filled
    # without waiting, as the standard handler does.
    def prepare(self, record):
        return record


def setup_logging(*handlers: Handler) -> QueueHandler:
    q = SimpleQueue()
    handler = LocalQueueHandler(q)
    QueueListener(q, *handlers).start()
    return handler
"#,
        r#"
import queue
import threading
from concurrent.futures import _base

class ThreadPoolExecutor(_base.Executor):
    def __init__(self, n):
        self._work_queue = queue.Queue()
        self._threads = [threading.Thread(target=self._worker) for _ in range(n)]

    def submit(self, fn, *args):
        f = _base.Future()
        self._work_queue.put((f, fn, args))
        return f

    def _worker(self):
        while True:
            f, fn, args = self._work_queue.get()
            f.set_result(fn(*args))
"#,
        r#"
import asyncio

class HookRunner:
    def __init__(self, app, frames):
        self.app = app
        self.frames = frames
        self._inbox = asyncio.Queue()

    async def startup(self):
        await self._inbox.put({"type": "startup"})

    async def shutdown(self):
        await self._inbox.put({"type": "shutdown"})

    async def _receive(self):
        return await self._inbox.get()
"#,
        r#"
import queue
import signal

class Master:
    def __init__(self):
        self.sigq = queue.SimpleQueue()

    def install(self):
        for s in (signal.SIGHUP, signal.SIGTERM):
            signal.signal(s, self.on_signal)

    def on_signal(self, sig, frame):
        self.sigq.put_nowait(sig)

    def forward(self, sock):
        pass

    def loop(self):
        while True:
            self.handle(self.sigq.get())

    def handle(self, sig):
        pass
"#,
        r#"
import queue
import threading


def ask_worker(pool, job):
    answer = queue.Queue()
    pool.submit(job, answer)
    return answer.get(timeout=30)


def compute_in_thread(fn):
    box = queue.SimpleQueue()

    def run():
        box.put(fn())

    threading.Thread(target=run).start()
    return box.get()
"#,
        r#"
import logging
import logging.handlers
import queue


def route_logs_through_thread(root: logging.Logger, sink: logging.Handler):
    pending = queue.Queue()
    root.addHandler(logging.handlers.QueueHandler(pending))
    worker = logging.handlers.QueueListener(pending, sink)
    worker.start()
    return worker
"#,
        r#"
from queue import PriorityQueue

def best_first(start):
    frontier = PriorityQueue()
    frontier.put((0, start))
    while not frontier.empty():
        cost, node = frontier.get()
        yield node
        for nxt in node.children():
            frontier.put((cost + nxt.cost, nxt))
"#,
        r#"
import asyncio
import math
import trio

class Reader:
    def __init__(self, transport):
        self.frames = asyncio.Queue()
        self.transport = transport

    def feed(self, frame):
        self.frames.put_nowait(frame)
        if self.frames.qsize() > 64:
            self.transport.pause_reading()

    async def next(self):
        frame = await self.frames.get()
        if self.frames.qsize() < 16:
            self.transport.resume_reading()
        return frame

class FrameBuffer:
    def __init__(self, high, pause):
        self.tx, self.rx = trio.open_memory_channel(math.inf)
        self.high, self.pause = high, pause

    def feed(self, frame):
        self.tx.send_nowait(frame)
        if self.tx.statistics().current_buffer_used > self.high:
            self.pause()
"#,
        r#"
import asyncio, queue

a = asyncio.Queue(maxsize=256)
b = asyncio.Queue(100)
c = queue.Queue(maxsize=1000)
n = 50
d = asyncio.Queue(maxsize=n)
"#,
        r#"
import trio

send, recv = trio.open_memory_channel(0)

class Queue:
    pass

q = Queue()
"#,
        r#"
import logging
from logging.handlers import QueueHandler, QueueListener
from queue import Queue


class BackgroundLogHandler(QueueHandler):
    def __init__(self, *handlers):
        super().__init__(Queue(-1))
        self.listener = QueueListener(self.queue, *handlers)
        self.listener.start()
"#,
        r#"
import asyncio
import concurrent.futures

class LoopPortal:
    """Worker threads run a function on the loop's thread and wait for it."""

    def call(self, fn, *args):
        reply = concurrent.futures.Future()
        self._loop.call_soon_threadsafe(self._inbox.put_nowait, (fn, args, reply))
        return reply.result()

    def close(self):
        self._loop.call_soon_threadsafe(self._inbox.put_nowait, None)

    async def serve(self):
        self._loop = asyncio.get_running_loop()
        self._inbox = asyncio.Queue()
        while (item := await self._inbox.get()) is not None:
            fn, args, reply = item
            try:
                reply.set_result(fn(*args))
            except Exception as exc:
                reply.set_exception(exc)
"#,
        r#"
import asyncio


class Router:
    """One mailbox per agent; every sender waits for its own answer."""

    def __init__(self):
        self._queues = {}

    def connect(self, agent):
        self._queues[agent.id] = asyncio.Queue()
        self._workers.append(asyncio.create_task(self._serve(agent)))

    async def _serve(self, agent):
        queue = self._queues[agent.id]
        while True:
            msg, answer = await queue.get()
            answer.set_result(await agent.handle(msg))

    async def ask(self, agent_id, msg, timeout):
        answer = asyncio.Future()
        await self._queues[agent_id].put((msg, answer))
        return await asyncio.wait_for(answer, timeout)
"#,
        r#"
# file: webkit/testclient.py
import math
import anyio

class WebSocketTestSession:
    async def _run(self):
        send_tx, send_rx = anyio.create_memory_object_stream(math.inf)
        receive_tx, receive_rx = anyio.create_memory_object_stream(math.inf)
        self._receive_tx, self._send_rx = receive_tx, send_rx
        await self.app(self.scope, receive_rx.receive, send_tx.send)
"#,
        r#"
import asyncio

class Conn:
    def __init__(self, reader):
        self.reader = reader
        self.streams = {}
        self._pending_requests = asyncio.Queue()

    async def serve(self):
        while data := await self.reader.read(65536):
            self.streams[len(self.streams)] = data
"#,
        r#"
import queue
import subprocess
import threading

def pump(stream, sink):
    for line in iter(stream.readline, b""):
        sink.put(line)

class Helper:
    def start(self, argv):
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        # Never blocks the pump: a full queue would stall the child on stderr.
        self.errors = queue.Queue()
        threading.Thread(target=pump, args=(self.proc.stderr, self.errors), daemon=True).start()
        self.lines = queue.Queue()
        threading.Thread(target=self.read_out, daemon=True).start()

    def read_out(self):
        for line in self.proc.stdout:
            self.lines.put(line)

    def drain_errors(self):
        out = []
        while not self.errors.empty():
            out.append(self.errors.get_nowait())
        return out
"#,
        r#"
import queue
import threading
import time

class Poller(threading.Thread):
    # Delayed messages wait in a worklist of this thread alone.
    def __init__(self, source, sink):
        super().__init__(daemon=True)
        self.source = source
        self.sink = sink
        self.later = queue.PriorityQueue()

    def run(self):
        while True:
            for msg in self.source.fetch():
                self.take(msg)
                self.release_due()

    def take(self, msg):
        if msg.eta:
            self.later.put((msg.eta, msg))
        else:
            self.sink(msg)

    def release_due(self):
        while not self.later.empty():
            eta, msg = self.later.get()
            if eta > time.time():
                self.later.put((eta, msg))
                break
            self.sink(msg)
"#,
        r#"
import asyncio

class LineProtocol(asyncio.Protocol):
    def __init__(self):
        self.inbox = asyncio.Queue()
        self.paused = False
        self.transport = None

    def connection_made(self, transport):
        self.transport = transport

    # Reading pauses after every chunk and resumes once the queue is empty.
    def data_received(self, data):
        for line in data.split(b"\n"):
            self.inbox.put_nowait(line)
        if not self.paused:
            self.paused = True
            self.transport.pause_reading()

    async def receive(self):
        line = await self.inbox.get()
        if self.paused and self.inbox.empty():
            self.paused = False
            self.transport.resume_reading()
        return line
"#,
        r#"
import asyncio


class FifoLock:
    def __init__(self):
        self._waiters = asyncio.Queue()
        self._locked = False

    async def acquire(self):
        ev = asyncio.Event()
        self._waiters.put_nowait(ev)
        await ev.wait()

    def wake_next(self):
        if not self._waiters.empty():
            self._waiters.get_nowait().set()


async def run_steps(agent, consumer):
    events = asyncio.Queue()
    next_step_event = asyncio.Event()

    async def produce():
        async for ev in agent.run():
            await events.put(ev)
            await next_step_event.wait()
            next_step_event.clear()
        await events.put(None)

    task = asyncio.create_task(produce())
    while (ev := await events.get()) is not None:
        await consumer(ev)
        next_step_event.set()
    await task
"#,
        r#"
import queue
import threading

def run_in_parallel(tests, jobs):
    work = queue.Queue()
    for item in tests:
        work.put(item, block=False)
    workers = [threading.Thread(target=drain, args=(work,)) for _ in range(jobs)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()

def drain(work):
    while True:
        try:
            item = work.get(block=False)
        except queue.Empty:
            return
        item.run()
"#,
        r#"
import asyncio

async def as_completed(coros):
    q = asyncio.Queue()
    remaining = 0

    def result_callback(t):
        q.put_nowait(t)

    for coro in coros:
        t = asyncio.ensure_future(coro)
        t.add_done_callback(result_callback)
        remaining += 1
    while remaining:
        t = await q.get()
        remaining -= 1
        yield t
"#,
        r#"
import queue

class SdoClient:
    def __init__(self, network):
        self.network = network
        self.responses = queue.Queue()

    def on_response(self, can_id, data, timestamp):
        self.responses.put(bytes(data))

    def request_response(self, request):
        if not self.responses.empty():
            self.responses = queue.Queue()
        self.network.send_message(request)
        return self.responses.get(block=True, timeout=0.3)
"#,
        r#"
import asyncio
from typing import Any


class Experiment:
    def __init__(self, cases):
        self._cases = list(cases)

    async def run(self, max_workers=10):
        queue: asyncio.Queue[tuple[int, Any]] = asyncio.Queue()
        results: list[Any] = [None] * len(self._cases)

        for i, case in enumerate(self._cases):
            queue.put_nowait((i, case))

        workers = [asyncio.create_task(self._worker(queue, results)) for _ in range(max_workers)]
        await queue.join()
        for w in workers:
            w.cancel()
        return results
"#,
        r#"
import multiprocessing


class Robot:
    def __init__(self):
        self._pending_capacity = 256
        self._pending = multiprocessing.Queue()
        self._worker = multiprocessing.Process(target=self._post_states, daemon=True)
        self._worker.start()

    def record(self, state):
        self._pending.put(state)
        if self._pending.qsize() > self._pending_capacity:
            self._pending.get()

    def _post_states(self):
        while True:
            post(self._pending.get())
"#,
        r#"
import json
import queue
import subprocess
import threading

_EOF = object()


class StdioTransport:
    def __init__(self, argv):
        self.argv = argv
        self.proc = None
        self._inbox = queue.Queue()

    def start(self):
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        threading.Thread(target=self._read_stdout, daemon=True).start()

    def _read_stdout(self):
        try:
            for raw in iter(self.proc.stdout.readline, b""):
                msg = json.loads(raw)
                if isinstance(msg, list):
                    for item in msg:
                        self._inbox.put(item)
                else:
                    self._inbox.put(msg)
        finally:
            self._inbox.put(_EOF)

    def receive(self, timeout):
        item = self._inbox.get(timeout=timeout)
        if item is _EOF:
            self._inbox.put(_EOF)
            raise EOFError("server exited")
        return item
"#,
        r#"
import json
import queue
import threading


class Bridge:
    def __init__(self, process, timeout):
        self._process = process
        self._stdout = process.stdout
        self._replies = queue.Queue()
        self._watchdog = threading.Timer(timeout, self._expire)
        self._watchdog.start()
        threading.Thread(target=self._read, daemon=True).start()

    def _expire(self):
        self._replies.put(None)
        self._process.kill()

    def _read(self):
        for line in self._stdout:
            message = json.loads(line)
            if isinstance(message, dict):
                self._replies.put(message)
        self._replies.put(None)

    def request(self):
        reply = self._replies.get()
        if reply is None:
            self._replies.put(None)
            raise EOFError("bridge ended")
        return reply
"#,
        r#"
import queue
import threading


class SafePipe:
    def __init__(self, pipe):
        self._pipe = pipe
        # Each caller has one request in it and waits for its answer.
        self._requests = queue.Queue()
        self._worker = threading.Thread(target=self._work, daemon=True)
        self._worker.start()

    def send(self, data):
        result_queue = queue.Queue()
        self._requests.put({"type": "SEND", "data": data, "result_queue": result_queue})
        return result_queue.get()

    def close(self):
        self._requests.put({"type": "CLOSE", "result_queue": queue.Queue()})
        self._worker.join()

    def _work(self):
        while True:
            request = self._requests.get()
            if request["type"] == "CLOSE":
                return
            request["result_queue"].put(self._pipe.send(request["data"]))
"#,
        r#"
import asyncio
import concurrent.futures
import queue
import threading


class ComThread:
    def __init__(self):
        self._queue = queue.Queue()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while True:
            item = self._queue.get()
            if item is None:
                return
            fn, reply = item
            try:
                reply.set_result(fn())
            except Exception as exc:
                reply.set_exception(exc)

    async def call(self, fn):
        reply = concurrent.futures.Future()
        self._queue.put((fn, reply))
        return await asyncio.wrap_future(reply)

    def close(self):
        self._queue.put(None)
        self._thread.join()
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(UnboundedQueue);

    /// The fix bounds the class that was called, not a stand-in for it.
    #[test]
    fn the_fix_bounds_the_class_called() {
        let fixes = crate::testing::fixes(&UnboundedQueue, Language::Python, EXAMPLES.fail[0]);
        assert!(
            fixes[2].contains("`queue.Queue(maxsize=1000)`"),
            "{fixes:#?}"
        );
        assert!(
            fixes[5].contains("`asyncio.PriorityQueue(maxsize=1000)`"),
            "{fixes:#?}"
        );
        assert!(fixes.iter().all(|f| !f.contains("{callee}")), "{fixes:#?}");
    }

    /// The reason is given for a queue left unbounded, not for a type that
    /// cannot be bounded at all.
    #[test]
    fn a_queue_fed_only_with_put_nowait_is_told_how_producers_can_wait() {
        static RULE: UnboundedQueue = UnboundedQueue;
        let src = r#"
import asyncio

async def interactive(conn, reader_thread):
    loop = asyncio.get_running_loop()
    lines = asyncio.Queue()
    reader_thread.deliver = lambda line: loop.call_soon_threadsafe(lines.put_nowait, line)
    while True:
        await conn.send(await lines.get())

async def relay(reader, conn):
    queue = asyncio.Queue()
    async for line in reader:
        await queue.put(line)
"#;
        let fixes = crate::testing::fixes(&RULE, Language::Python, src);
        assert_eq!(fixes.len(), 2, "{fixes:?}");
        assert!(
            fixes[0].contains("run_coroutine_threadsafe(q.put(x), loop).result()"),
            "{fixes:?}"
        );
        assert!(!fixes[1].contains("put_nowait"), "{fixes:?}");
    }

    /// Producers that already drop on `Full` only lack the bound.
    #[test]
    fn producers_shedding_on_full_are_told_only_the_bound_is_missing() {
        static RULE: UnboundedQueue = UnboundedQueue;
        let src = r#"
import queue
import threading

class Analytics:
    def __init__(self, client):
        self._queue = queue.Queue()
        self._client = client
        threading.Thread(target=self._run, daemon=True).start()

    def enqueue(self, event):
        try:
            self._queue.put_nowait(event)
        except queue.Full:
            pass

    def _run(self):
        while True:
            self._client.send(self._queue.get())
"#;
        let fixes = crate::testing::fixes(&RULE, Language::Python, src);
        assert_eq!(fixes.len(), 1, "{fixes:?}");
        assert!(
            fixes[0].contains("the bound is all that is missing"),
            "{fixes:?}"
        );
        assert!(!fixes[0].contains("wait for room"), "{fixes:?}");
    }

    #[test]
    fn messages_give_the_reason_only_when_a_bound_was_possible() {
        static RULE: UnboundedQueue = UnboundedQueue;
        let m = crate::testing::messages(&RULE, Language::Python, EXAMPLES.fail[0]);
        let simple = crate::testing::message_with(&m, "`queue.SimpleQueue` creates");
        assert!(
            simple.starts_with(
                "`queue.SimpleQueue` creates a queue that cannot be bounded: a slow consumer"
            ),
            "{simple}"
        );
        assert!(!simple.contains("capacity limit"), "{simple}");
        crate::testing::message_with(
            &m,
            "`queue.Queue` creates a thread-safe queue with no capacity limit (no bound is given)",
        );
    }
}
