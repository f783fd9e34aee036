//! PY012: one concurrent task per item of an unbounded input.

use crate::context::FileCx;
use crate::python::common::{FanOut, fanout_of_value, fanout_source, is_task_spawn};
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::{Parent, Visitor, exprs_under, walk_block};
use unsnarl_model::*;

pub struct UnboundedFanout;

pub static META: RuleMeta = RuleMeta {
    id: "PY012",
    name: "unbounded-task-fanout",
    category: Category::UnboundedFanout,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "`gather(*(f(x) for x in xs))` or a loop starting a task per item of a non-literal collection, with no semaphore or worker pool bounding it.",
    docs: r#"
`asyncio.gather(*(f(x) for x in xs))`, `gather(*[f(x) for x in xs])`,
`gather(*map(f, xs))`, a comprehension of `create_task` calls, or a `for`
loop that starts a task (`create_task`, `ensure_future`,
`tg.create_task`, `nursery.start_soon`) per item, over a
collection that is not a literal (nor a local bound only to one, to a
comprehension over one, to an entry of one, `methods = table[kind]`, or
to another such local and grown only with literals,
`scripts.extend(full_scripts)`; nor a module-level name bound only
to one that nothing in the file grows; either counts only when no outer
loop over other input multiplies it; nor a slice, `xs[:n]` or
`islice(it, 0, n)` (also a local bound only to a slice with an end, `rows =
results[:limit]`, to a comprehension over one, or to the result of a
function of the file whose every `return` is such a slice, `return
found[:3]`), or a `zip` with a count, `zip(items, range(n))`,
nor a collection whose length the function tests first against a
constant and leaves on (`if len(buckets) > MAX_BUCKETS: return ..`),
or one walked only in the branch of a length test where it holds a
handful (the `else` of `if len(channels) > 1:`, eight at most),
nor the arguments of a `*channels` or `**kwargs`
parameter (`kwargs.items()`), which the caller wrote out one by one, or a
comprehension over them), with
nothing limiting how many run at
once: no semaphore or capacity limiter taken in the loop or inside the
spawned coroutine (or in a function of the file it calls, up to two calls
down: `self._get(path)` under `async with self._request_semaphore:`),
no wrapper handed one around each call (`with_semaphore(sem)(check)(x)`),
no `asyncio.Lock` shared by all the tasks (of the spawner's own object,
`self.evaluate(c)` under `async with self._lock:`, or of the module)
around every await of the spawned coroutine (the tasks take turns; a
lock of each item's own object serializes nothing across items),
no chunking, no worker pool. A teardown that releases
what the program already holds (`gather(*(c.close() for c in
self._conns))`, `aclose`, `wait_closed`, `stop`, `cancel`, `kill`,
`teardown`, `cleanup`, or a function or method named for one,
`_close_comm(c)`, `teardown_run(ctx)`,
`self.shutdown_kernel(k)`, its async twin `self._async_shutdown_kernel(k)`), a notification of handlers
(`gather(*(rm.on_chain_end(out) for rm in run_managers))`, on objects
other than `self`), or waits in
a teardown method on each member of the object's own collection
(`gather(*(h.wait_until_released() for h in self._holders))` in `close`),
opens nothing and is not reported, and neither does waiting on bare
futures made for replies others will set (`loop.create_future()`, also
through a sync method of the file that makes one and starts nothing, a
data loader's `load(key)`), or on work already submitted to a pool
(`asyncio.wrap_future(f)`), or
putting each item on an in-process queue (`gather(*[q.put(m) for m in
batch])`, or waiting for each to be drained, `q.join()`, also through a
coroutine of the file that awaits nothing else,
`async def _put(q): await q.put(item)`) or waiting on one per item
(`create_task(queue.get())` for each running job): the queue's other side
sets the pace. Nor
is a coroutine that only waits on
and signals synchronization primitives (`await event.wait();
scope.cancel()`), a loop that stops after a count (`if i >= limit: break`
on its own index), or a restart loop that awaits the previous run's
end on the same object before starting it again with nothing of the loop's
item (`async for _ in changes: await w.stop(); create_task(w.serve())`).
Collections that come from configuration are left alone too: a path
through a config, settings or options object, the command line
(`sys.argv`), or an attribute only `__init__` sets from one (or fills,
one entry per item of a list of the program's parts it was handed: `for
s in servers: self._states[s.name] = State(s)`). So are lists
of callables started as they are (`for job in self.jobs:
tg.start_soon(job)`, or the values of `for name, app in
self.mounts.items()`) or, kept on the class, called to make the
awaitables (`gather(*(hook(doc) for hook in cls._hooks))`): the program
registered them, no input brings them. The same goes for collections
named for the program's own parts: workers, servers, clients, transports,
a cluster's masters, replicas, shards or nodes,
retrievers, engines, the steps, branches, processors or sinks of a
pipeline, an agent's tools, sub-agents, guardrails or termination
conditions.
A slot taken in the loop with any of a limiter's acquire methods
(`acquire_nowait`, anyio's `acquire_on_behalf_of_nowait`, the loop
stopping at `WouldBlock`) bounds it like `acquire`. Not reported either:
a task that takes the slot of a finished one in the list being walked
(`pending[i] = ensure_future(..)`) or starts once for each task of
`asyncio.wait`'s done set (`for t in done: pending.add(create_task(
fetch(next(items))))`, a worker pool topped up), a task the iteration then awaits
before going on (`t = ensure_future(c()); await bounded_wait(t, 5)`), starts the loop paces by waiting after
each one (happy eyeballs: `with move_on_after(delay): await
failed.wait()`; not a bare `sleep(0)`), one endless listener of the file
(`while True:` with no way out, or a loop on run flags of the object,
`while self._running:`) per item, a per-item coroutine that hands
its work to a buffering client and only awaits a future it made itself
(a delivery receipt), work handed to a thread pool (`asyncio.to_thread(scan, port)`,
`loop.run_in_executor(pool, f, x)`, anyio's or trio's
`to_thread.run_sync`, or a coroutine of the file that only awaits such
calls, also under `asyncio.wait_for` or through its own such coroutines,
two calls down), whose worker threads or thread limiter are the limit, a coroutine of
the file that never suspends
(`q.put_nowait(msg)` and return: each task ends in its first step; also
one that only awaits such coroutines of the file, two calls down), or a
start followed in its block by `break`, `return` or `raise` (the loop
starts one task at most).

A collection of the object whose every entry is stored under a key
written in the code (`self.channels["telegram"] = ...`, each behind a
config flag) and that nothing else grows holds at most one entry per
such key, and is not reported.

A fan-out over a collection the object keeps (`self._checks`,
`self._probes.values()`) that only its set-up grows (`__init__`, or
methods named `add_*`, `register*`, `subscribe*`, `attach*`, `setup*`,
`build*`, `configure*`, `install*`, `include*`, `mount*`, `connect*`,
`login*`) is reported at low severity: it runs as many at once as the
object has parts, which is usually a handful fixed by its owner; it
becomes a flood only if those parts grow with traffic. A collection any
other method grows (`record(event)` appending each event) is sized by the
traffic and stays high.

## Why

Concurrency is not free: each in-flight operation holds a socket, a file
descriptor, buffers and timers, and the service on the other side sees all
of them at once. The input is small in tests and large in production, so
the code works until the day it opens ten thousand connections, runs out
of file descriptors or gets rate-limited, and becomes the thundering herd
against its own dependency.

## Example

```python
import asyncio

async def fetch_all(urls):
    return await asyncio.gather(*(fetch(u) for u in urls))
```

## Fix

Bound the concurrency: a semaphore around the operation, or a fixed pool
of workers reading from a bounded queue.

```python
import asyncio

sem = asyncio.Semaphore(50)

async def bounded_fetch(u):
    async with sem:
        return await fetch(u)

async def fetch_all(urls):
    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(bounded_fetch(u)) for u in urls]
    return [t.result() for t in tasks]
```
"#,
    examples: &EXAMPLES,
};

impl Rule for UnboundedFanout {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for (i, e) in cx.model.exprs.iter().enumerate() {
            let ExprKind::Call(c) = &e.kind else { continue };
            let id = ExprId(i as u32);
            if matches!(cx.tree.expr_parent(id), Parent::Detached)
                || cx.func(cx.func_of(id)).is_test
            {
                continue;
            }
            if matches!(
                c.target.as_deref(),
                Some("asyncio.gather" | "asyncio.tasks.gather")
            ) {
                check_gather(cx, id, c, out);
            } else if matches!(
                c.target.as_deref(),
                Some("asyncio.wait" | "asyncio.as_completed" | "asyncio.tasks.wait")
            ) {
                check_wait(cx, id, c, out);
            } else if is_task_spawn(cx, c) {
                check_spawn(cx, id, c, out);
            }
        }
    }
}

/// `gather(*(f(x) for x in xs))`.
fn check_gather(cx: &FileCx, id: ExprId, c: &Call, out: &mut Vec<Finding>) {
    if c.kwarg("return_exceptions")
        .is_some_and(|r| !matches!(cx.model.literal(r), Some(Lit::Bool(false))))
    {
        return;
    }
    let Some(FanOut { iter, per_item }) = fanout_source(cx, id) else {
        return;
    };
    if bounded_input(cx, iter)
        || capped_by_counter(cx, iter)
        || per_item.is_some_and(|p| {
            spawned_is_bounded(cx, p)
                || releases(cx, p)
                || bare_future(cx, p)
                || hands_to_queue(cx, p)
                || (calls_the_item(cx, p) && kept_on_class(cx, iter, 2))
        })
        || teardown_of_own(cx, id, iter, per_item)
    {
        return;
    }
    if guarded_here(cx, id) {
        return;
    }
    report(
        cx,
        id,
        iter,
        "`gather` starts one concurrent operation per item of",
        "with no limit: a large input opens that many connections and timers at once and floods the dependency",
        "bound it: take an `asyncio.Semaphore(N)` inside the per-item coroutine, or use N workers reading from a bounded `asyncio.Queue`",
        out,
    );
}

/// `asyncio.wait([f(x) for x in xs])`, `as_completed(...)`.
fn check_wait(cx: &FileCx, id: ExprId, c: &Call, out: &mut Vec<Finding>) {
    let Some(arg) = c.positional(0).or_else(|| c.kwarg("fs")) else {
        return;
    };
    let Some(FanOut { iter, per_item }) = fanout_of_value(cx, id, arg) else {
        return;
    };
    if bounded_input(cx, iter)
        || per_item.is_some_and(|p| {
            spawned_is_bounded(cx, p)
                || releases(cx, p)
                || bare_future(cx, p)
                || hands_to_queue(cx, p)
        })
        || teardown_of_own(cx, id, iter, per_item)
        || guarded_here(cx, id)
    {
        return;
    }
    report(
        cx,
        id,
        iter,
        &format!("`{}` runs one concurrent operation per item of", c.name),
        "with no limit: a large input opens that many connections and timers at once and floods the dependency",
        "bound it: take an `asyncio.Semaphore(N)` inside the per-item coroutine, or use N workers reading from a bounded `asyncio.Queue`",
        out,
    );
}

/// A spawn inside a loop (or a comprehension) over a non-literal input.
fn check_spawn(cx: &FileCx, id: ExprId, c: &Call, out: &mut Vec<Finding>) {
    // `ensure_future(create_task(f(x)))` starts one task, not two: the
    // outer call is the one judged.
    if let Parent::Expr(p) = cx.tree.expr_parent(id)
        && cx.call(p).is_some_and(|outer| is_task_spawn(cx, outer))
    {
        return;
    }
    // In a comprehension: `[create_task(f(x)) for x in xs]`.
    let mut iter = None;
    let mut loop_item: Option<&str> = None;
    for a in cx.tree.expr_ancestors(id) {
        if let ExprKind::Comprehension {
            elt, generators, ..
        } = &cx.expr(a).kind
        {
            if cx.contains(*elt, id) && generators.len() == 1 {
                iter = Some(generators[0].iter);
                loop_item = item_name(cx, generators[0].target, generators[0].iter);
            }
            break;
        }
    }
    let mut loop_body = None;
    if iter.is_none() {
        let s = cx.tree.enclosing_stmt(id);
        let lp = s.and_then(|s| {
            std::iter::once(s)
                .chain(cx.tree.stmt_ancestors(s))
                .find(|&a| {
                    matches!(
                        cx.stmt(a).kind,
                        StmtKind::For { .. } | StmtKind::While { .. }
                    )
                })
        });
        if let Some(lp) = lp
            && let StmtKind::For {
                iter: it,
                body,
                target,
                ..
            } = &cx.stmt(lp).kind
        {
            iter = Some(*it);
            loop_body = Some(body);
            loop_item = target.and_then(|t| item_name(cx, t, *it));
            if restarts(cx, id, c, *target, body) {
                return;
            }
        }
    }
    let Some(iter) = iter else { return };
    if bounded_input(cx, iter)
        || guarded_here(cx, id)
        || refills_slot(cx, id, iter)
        || refills_finished(cx, id, iter)
    {
        return;
    }
    if loop_body.is_some_and(|b| loop_waits_for_slots(cx, b) || paced_starts(cx, b, id))
        || (loop_body.is_some() && (leaves_loop_after(cx, id) || awaited_in_turn(cx, id)))
    {
        return;
    }
    let spawned = c.positional(0);
    if spawned.is_some_and(|p| {
        spawned_is_bounded(cx, p)
            || releases(cx, p)
            || listens_forever(cx, p)
            || hands_to_queue(cx, p)
    }) {
        return;
    }
    // `for job in self.jobs: tg.start_soon(job)`, `create_task(cb())`: the
    // items are the callables themselves, registered by the program, not
    // data that arrives.
    // Also `create_task(cb.fn(ev))` over what an `add_*`/`register*`
    // method of the file put in the collection: registered callbacks
    // wrapped in a record.
    if let Some(item) = loop_item
        && spawned.is_some_and(|p| {
            let p = cx.model.strip(p);
            let callee = cx.call(p).map_or(p, |k| k.func);
            cx.model.name_of(callee) == Some(item)
                || matches!(&cx.expr(callee).kind, ExprKind::Attr { obj, .. }
                    if cx.model.name_of(*obj) == Some(item))
                    && filled_by_registration(cx, iter)
        })
    {
        return;
    }
    report(
        cx,
        id,
        iter,
        "a task is started for every item of",
        "with no limit on how many run at once: a large input starts that many concurrent operations",
        "bound the fan-out: acquire an `asyncio.Semaphore(N)` in the spawned coroutine (or before spawning), or run N workers over a bounded queue",
        out,
    );
}

/// Reports a fan-out over `iter`. Over a collection the object keeps
/// (`self.checkers`, `self._probes.values()`) the count is what the object
/// holds: in the precision rounds those were its configured parts
/// (dependencies, health probes, regions, registered devices; 30 read,
/// none a bug), so the finding stays, at low severity, saying what would
/// make it one.
fn report(
    cx: &FileCx,
    id: ExprId,
    iter: ExprId,
    what: &str,
    unbounded: &str,
    fix: &str,
    out: &mut Vec<Finding>,
) {
    let source = cx.snippet(cx.expr(iter).span);
    let (message, severity) = if own_collection(cx, iter) {
        (
            format!(
                "{what} `{source}`, a collection the object keeps, with no limit: as many run at once as it holds, harmless while its members are a few parts set up in code, a flood once requests or data make it grow"
            ),
            Severity::Low,
        )
    } else {
        (format!("{what} `{source}` {unbounded}"), META.severity)
    };
    let mut finding = cx.finding(&META, cx.expr(id).span, message, fix);
    finding.severity = severity;
    out.push(finding);
}

/// `self.x`, `self.x.values()`, `list(self.x)`: a collection held by the
/// object itself rather than one a caller passed or a fetch returned, and
/// grown (if at all) only where the object is set up or its parts are
/// registered: `__init__`, `add_*`, `register*`, `connect*`... A
/// collection another method grows (`record(event)` appending each event)
/// is sized by the traffic, and stays high.
fn own_collection(cx: &FileCx, iter: ExprId) -> bool {
    let iter = cx.model.strip(iter);
    match &cx.expr(iter).kind {
        ExprKind::Attr { obj, .. } if cx.model.name_of(*obj) == Some("self") => cx
            .model
            .dotted(iter)
            .is_some_and(|field| grown_only_at_setup(cx, &field)),
        ExprKind::Call(c) => match (c.receiver, c.target.as_deref()) {
            (Some(r), _) if matches!(c.name.as_str(), "items" | "values" | "keys" | "copy") => {
                c.args.is_empty() && own_collection(cx, r)
            }
            (None, Some("builtins.list" | "builtins.tuple" | "builtins.sorted")) => {
                c.args.len() == 1 && c.positional(0).is_some_and(|a| own_collection(cx, a))
            }
            _ => false,
        },
        _ => false,
    }
}

/// Every place of the file that adds to `field` (`self.x.append(..)`,
/// `self.x[k] = v`) is in a method that sets the object up or registers a
/// part of it.
fn grown_only_at_setup(cx: &FileCx, field: &str) -> bool {
    let is_field = |e: ExprId| cx.model.dotted(e).is_some_and(|d| d == field);
    let growths = cx
        .calls_named(&["append", "add", "extend", "insert", "update", "setdefault"])
        .into_iter()
        .filter(|(_, c)| c.receiver.is_some_and(is_field))
        .map(|(e, _)| cx.func_of(e))
        .chain(
            crate::util::assignments(
                cx,
                |t| matches!(&cx.expr(t).kind, ExprKind::Index { obj, .. } if is_field(*obj)),
            )
            .into_iter()
            .map(|(s, _)| cx.tree.stmt_func(s)),
        )
        .collect::<Vec<FuncId>>();
    growths.into_iter().all(|f| {
        let name = cx.func(f).name.trim_start_matches('_');
        let name = name.strip_prefix("async_").unwrap_or(name);
        name == "init__"
            || [
                "add",
                "register",
                "subscribe",
                "attach",
                "setup",
                "set_up",
                "build",
                "configure",
                "install",
                "include",
                "mount",
                "connect",
                "login",
            ]
            .iter()
            .any(|w| name.starts_with(w))
    })
}

/// The per-item awaitable puts the item on an in-process queue
/// (`gather(*[q.put(m.value) for m in messages])`) or waits for the next
/// one from it (`create_task(queue.get())` per running job): a hand-off
/// within the process, whose pace the queue's other side sets; it opens
/// nothing.
fn hands_to_queue(cx: &FileCx, per_item: ExprId) -> bool {
    cx.call(cx.model.strip(per_item)).is_some_and(|c| {
        crate::python::common::on_a_queue(cx, c)
            // A coroutine of the file whose only awaits are such hand-offs
            // (`async def _put(q): try: await q.put(item) except
            // QueueShutDown: ...`).
            || cx.callee_in_file(c).is_some_and(|g| {
                let awaited = crate::util::awaited_values(cx.model, &cx.func(g).body);
                cx.func(g).is_async
                    && !cx.func(g).is_generator
                    && awaited.is_some_and(|a| {
                        !a.is_empty()
                            && a.iter().all(|&x| {
                                cx.call(cx.model.strip(x))
                                    .is_some_and(|k| crate::python::common::on_a_queue(cx, k))
                            })
                    })
            })
    })
}

/// The per-item awaitable is a bare future (`loop.create_future()`,
/// `asyncio.Future()`), or a wrap of a pool's future already submitted
/// (`asyncio.wrap_future(f)`): waiting on a list of them waits for
/// replies that others will set; it starts no work of its own.
fn bare_future(cx: &FileCx, per_item: ExprId) -> bool {
    let makes_future = |c: &Call| {
        (c.name == "create_future" && c.receiver.is_some())
            || matches!(
                c.target.as_deref(),
                Some("asyncio.Future" | "asyncio.futures.Future")
            )
    };
    cx.call(cx.model.strip(per_item)).is_some_and(|c| {
        makes_future(c)
            // `asyncio.wrap_future(f)` of work already submitted to a
            // pool: waiting on it starts nothing.
            || (crate::python::common::completion_kind(cx, c) == Some("running-work")
                && c.name == "wrap_future")
            // A sync method of the file that hands out such a future
            // and starts nothing (`self.load(key)` of a data loader,
            // which queues the key for one batched call).
            || cx.callee_in_file(c).is_some_and(|g| {
                !cx.func(g).is_async
                    && cx
                        .body_calls(g)
                        .any(|e| cx.call(e).is_some_and(makes_future))
                    && !cx.body_calls(g).any(|e| {
                        cx.call(e).is_some_and(|k| {
                            crate::python::common::is_task_spawn(cx, k)
                                || cx.callee_in_file(k).is_some_and(|h| cx.func(h).is_async)
                        })
                    })
            })
    })
}

/// The per-item awaitable comes from calling the item itself
/// (`[hook(doc) for hook in cls._hooks]`, `for action in actions:
/// coros.append(action(instance))`). Over a registry kept on the class
/// (see `kept_on_class`) those are callables the program registered (by
/// decorators, at class creation): their number is set by the code, not by
/// data. Callables in general may be bound methods of data (`[c.fetch for
/// c in clients]`).
fn calls_the_item(cx: &FileCx, per_item: ExprId) -> bool {
    let Some(c) = cx.call(cx.model.strip(per_item)) else {
        return false;
    };
    let Some(callee) = cx.model.name_of(c.func) else {
        return false;
    };
    if cx.model.resolved(c.func).is_some() {
        return false;
    }
    let in_comprehension = cx.tree.expr_ancestors(per_item).any(|a| {
        matches!(&cx.expr(a).kind, ExprKind::Comprehension { generators, .. }
            if generators.iter().any(|g| cx.model.name_of(g.target) == Some(callee)))
    });
    in_comprehension
        || cx.tree.enclosing_stmt(per_item).is_some_and(|s| {
            std::iter::once(s)
                .chain(cx.tree.stmt_ancestors(s))
                .any(|a| {
                    matches!(&cx.stmt(a).kind,
                    StmtKind::For { target: Some(t), .. } if cx.model.name_of(*t) == Some(callee))
                })
        })
}

/// `e` is reached from `cls` (`cls._hooks`, `cls.get_actions(kind)[..]`),
/// or is a local bound only to such a value: state of the class, not of
/// one request.
fn kept_on_class(cx: &FileCx, e: ExprId, depth: u32) -> bool {
    let mut e = cx.model.strip(e);
    loop {
        match &cx.expr(e).kind {
            ExprKind::Attr { obj, .. } => e = *obj,
            ExprKind::Index { obj, .. } => e = *obj,
            ExprKind::Call(c) => match c.receiver {
                Some(r) => e = r,
                None => return false,
            },
            ExprKind::Name { id, resolved: None } => {
                if id == "cls" {
                    return true;
                }
                let f = cx.func_of(e);
                let values: Vec<ExprId> = crate::python::common::values_bound_to(cx, f, id)
                    .collect::<Option<Vec<_>>>()
                    .unwrap_or_default();
                return depth > 0
                    && !values.is_empty()
                    && values.iter().all(|&v| kept_on_class(cx, v, depth - 1));
            }
            _ => return false,
        }
        e = cx.model.strip(e);
    }
}

/// After starting the task, each round of the loop waits before the next
/// start (`nursery.start_soon(attempt, addr); with move_on_after(delay):
/// await failed.wait()`): staggered starts, one per wait (happy eyeballs).
fn paced_starts(cx: &FileCx, body: &Block, spawn: ExprId) -> bool {
    let Some(at) = body
        .iter()
        .position(|&s| cx.stmt(s).span.contains(cx.expr(spawn).span))
    else {
        return false;
    };
    // (`await asyncio.sleep(0)` only yields: that paces nothing.)
    body[at + 1..].iter().any(|&s| {
        let block = vec![s];
        !crate::util::awaits_in_block(cx.model, &block).is_empty()
            && !unsnarl_model::walk::calls_in_block(cx.model, &block)
                .into_iter()
                .filter_map(|e| cx.call(e))
                .any(|c| crate::python::common::is_zero_sleep(cx, c))
    })
}

/// The statement that starts the task is followed, in its own block or in
/// an enclosing one inside the loop, by a `break`, `return` or `raise`
/// (`else: if cb: create_task(cb()); break` after a successful attempt):
/// the loop starts one task at most.
fn leaves_loop_after(cx: &FileCx, spawn: ExprId) -> bool {
    let Some(s) = cx.tree.enclosing_stmt(spawn) else {
        return false;
    };
    let leaves = |s: StmtId| {
        crate::util::stmts_after(cx, s).iter().any(|&n| {
            matches!(
                cx.stmt(n).kind,
                StmtKind::Break | StmtKind::Return(_) | StmtKind::Raise(_)
            )
        })
    };
    for a in std::iter::once(s).chain(cx.tree.stmt_ancestors(s)) {
        if matches!(
            cx.stmt(a).kind,
            StmtKind::For { .. } | StmtKind::While { .. }
        ) {
            return false;
        }
        if leaves(a) {
            return true;
        }
    }
    false
}

/// `pending = ensure_future(closer())` followed in its own block by a
/// statement awaiting that task (`await pending`, `await
/// asyncio.wait_for(pending, t)`): each iteration waits for its task
/// before the next one starts, so one runs at a time.
fn awaited_in_turn(cx: &FileCx, spawn: ExprId) -> bool {
    let Some(s) = cx.tree.enclosing_stmt(spawn) else {
        return false;
    };
    let StmtKind::Assign {
        targets,
        value: Some(v),
        ..
    } = &cx.stmt(s).kind
    else {
        return false;
    };
    let ([t], true) = (targets.as_slice(), cx.model.strip(*v) == spawn) else {
        return false;
    };
    let Some(task) = cx.model.name_of(*t) else {
        return false;
    };
    crate::util::stmts_after(cx, s).iter().any(|&n| {
        let (StmtKind::Expr(e) | StmtKind::Assign { value: Some(e), .. }) = &cx.stmt(n).kind else {
            return false;
        };
        let ExprKind::Await(inner) = &cx.expr(cx.model.strip(*e)).kind else {
            return false;
        };
        unsnarl_model::walk::exprs_under(cx.model, *inner)
            .into_iter()
            .any(|x| cx.model.name_of(x) == Some(task))
    })
}

/// The per-item coroutine is a listener of the file that never ends on its
/// own (`async def listen(self, channel): while True: ..`): one per
/// configured channel or endpoint, long-lived, not one per piece of data.
fn listens_forever(cx: &FileCx, per_item: ExprId) -> bool {
    let Some(c) = cx.call(cx.model.strip(per_item)) else {
        return false;
    };
    let Some(f) = cx.callee_in_file(c) else {
        return false;
    };
    // `while True:`, or a run flag of the object (`while self._running and
    // self._fallback_mode:`): it runs until its owner stops it.
    let forever = |cond: ExprId| {
        let cond = cx.model.strip(cond);
        matches!(cx.model.literal(cond), Some(Lit::Bool(true)))
            || match &cx.expr(cond).kind {
                ExprKind::Logical {
                    op: LogicalOp::And,
                    left,
                    right,
                } => [*left, *right].into_iter().all(|x| self_flag(cx, x)),
                _ => self_flag(cx, cond),
            }
    };
    cx.func(f).is_async
        && cx.func(f).body.iter().any(|&s| {
            matches!(&cx.stmt(s).kind, StmtKind::While { cond, body, .. }
                if forever(*cond)
                    && !body.iter().any(|&b| matches!(cx.stmt(b).kind, StmtKind::Break | StmtKind::Return(_))))
        })
}

/// A flag of the object (`self._running`, `not self._stopped`).
fn self_flag(cx: &FileCx, e: ExprId) -> bool {
    let e = cx.model.strip(e);
    let e = match &cx.expr(e).kind {
        ExprKind::Unary {
            op: UnOp::Not,
            operand,
        } => cx.model.strip(*operand),
        _ => e,
    };
    matches!(cx.expr(e).kind, ExprKind::Attr { .. })
        && cx.model.dotted(e).is_some_and(|d| {
            d.strip_prefix("self.")
                .is_some_and(|rest| !rest.contains('.'))
        })
}

/// The task takes the slot of a finished one in the list being walked
/// (`for i, t in enumerate(pending): if t.done(): pending[i] =
/// ensure_future(..)`): the number of tasks stays what it was.
fn refills_slot(cx: &FileCx, spawn: ExprId, iter: ExprId) -> bool {
    // The list walked: `pending`, also through `enumerate(pending)`.
    let iter = cx.model.strip(iter);
    let walked = cx
        .call(iter)
        .filter(|c| c.target.as_deref() == Some("builtins.enumerate"))
        .and_then(|c| c.positional(0))
        .unwrap_or(iter);
    let Some(list) = cx.model.dotted(walked) else {
        return false;
    };
    matches!(cx.tree.expr_parent(spawn), unsnarl_model::walk::Parent::Stmt(s)
        if matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(v), .. }
            if *v == spawn && targets.iter().any(|&t| matches!(&cx.expr(t).kind,
                ExprKind::Index { obj, .. } if cx.model.dotted(*obj).as_deref() == Some(list.as_str())))))
}

/// The loop walks the done set `asyncio.wait` handed back (`done, pending
/// = await asyncio.wait(pending, return_when=FIRST_COMPLETED)`, `for t in
/// done: .. pending.add(create_task(fetch(next(items))))`): one start per
/// finished task keeps the number running where it was (a worker pool
/// topped up).
fn refills_finished(cx: &FileCx, spawn: ExprId, iter: ExprId) -> bool {
    cx.model
        .name_of(cx.model.strip(iter))
        .is_some_and(|done| crate::python::common::is_done_set_of_wait(cx, cx.func_of(spawn), done))
}

/// The collection (`self._sinks`) is filled only by methods of the file
/// named for registration (`add_sink`, `register`, `subscribe`, `attach`):
/// the program decides what is in it.
fn filled_by_registration(cx: &FileCx, iter: ExprId) -> bool {
    let Some(field) = cx.model.dotted(iter).filter(|d| d.starts_with("self.")) else {
        return false;
    };
    let mut fills = cx
        .calls_named(&["add", "append", "insert", "setdefault", "__setitem__"])
        .into_iter()
        .filter(|(_, c)| {
            c.receiver
                .and_then(|r| cx.model.dotted(r))
                .is_some_and(|d| d == field)
        })
        .peekable();
    fills.peek().is_some()
        && fills.all(|(e, _)| {
            let name = cx.func(cx.func_of(e)).name.as_str();
            ["add", "register", "subscribe", "attach"]
                .iter()
                .any(|w| name.trim_start_matches('_').starts_with(w))
        })
}

/// A restart loop, not a fan-out: the spawned call uses nothing of the
/// loop's item (`async for _ in changes:`), and earlier in the same body
/// the loop awaits the previous run's end on the same object (`await
/// worker.stop()` before `create_task(worker.serve())`). One run at a time.
fn restarts(cx: &FileCx, spawn: ExprId, c: &Call, target: Option<ExprId>, body: &Block) -> bool {
    let Some(spawned) = c.positional(0).and_then(|p| cx.call(cx.model.strip(p))) else {
        return false;
    };
    let Some(object) = spawned.receiver.and_then(|r| cx.model.dotted(r)) else {
        return false;
    };
    let item_names: Vec<&str> = target
        .map(|t| {
            unsnarl_model::walk::exprs_under(cx.model, t)
                .into_iter()
                .filter_map(|x| cx.model.name_of(x))
                .collect()
        })
        .unwrap_or_default();
    let uses_item = unsnarl_model::walk::exprs_under(cx.model, cx.model.strip(c.args[0].value))
        .into_iter()
        .any(|x| cx.model.name_of(x).is_some_and(|n| item_names.contains(&n)));
    if uses_item {
        return false;
    }
    let at = cx.expr(spawn).span.start;
    unsnarl_model::walk::exprs_in_block(cx.model, body)
        .into_iter()
        .any(|e| {
            let ExprKind::Await(inner) = cx.expr(e).kind else {
                return false;
            };
            cx.expr(e).span.end <= at
                && cx.call(cx.model.strip(inner)).is_some_and(|w| {
                    (crate::python::common::is_closing_method(&w.name) || w.name == "join")
                        && w.receiver.and_then(|r| cx.model.dotted(r)).as_deref()
                            == Some(object.as_str())
                })
        })
}

/// The per-item operation releases something already held (`c.close()`,
/// `aclose`, `wait_closed`, `stop`, `cancel`, `kill`, `terminate`,
/// `disconnect`, `shutdown`, `drain`, `_drain`, `teardown`, `cleanup`, or a
/// function or method named for one: `_close_comm(comm)`, `stop_timer(t)`,
/// `teardown_run(ctx)`,
/// `self.shutdown_kernel(k)`, `c.stop_async()`): a teardown over
/// the program's own connections or workers opens nothing and floods no
/// dependency, however many there are. Or it tells a handler that
/// something happened (`rm.on_chain_end(out)`, `h.on_error(e)`, on an
/// object other than `self`): one notification per run or handler the
/// program already has.
fn releases(cx: &FileCx, per_item: ExprId) -> bool {
    let p = cx.model.strip(per_item);
    let (name, method) = match &cx.expr(p).kind {
        ExprKind::Call(c) => (c.name.as_str(), c.receiver.is_some()),
        ExprKind::Attr { name, .. } => (name.as_str(), true),
        _ => return false,
    };
    // The async twin of a teardown names it after `async_`
    // (`self._async_shutdown_kernel(kid)`).
    let name = name.trim_start_matches('_');
    let name = name.strip_prefix("async_").unwrap_or(name);
    let tears_down = |verb: &str| {
        crate::python::common::is_closing_method(verb)
            || matches!(
                verb,
                "cancel" | "drain" | "kill" | "terminate" | "teardown" | "cleanup"
            )
            || verb.starts_with("disconnect")
    };
    // A handler told of an event, not the object's own processing of one
    // (`self.on_message(m)` per message is the work itself).
    if name.starts_with("on_") {
        let receiver = match &cx.expr(p).kind {
            ExprKind::Call(c) => c.receiver,
            ExprKind::Attr { obj, .. } => Some(*obj),
            _ => None,
        };
        return receiver.is_some_and(|r| {
            cx.model
                .dotted(r)
                .is_none_or(|d| !matches!(d.split('.').next(), Some("self" | "cls")))
        });
    }
    // Its first word says what it does (`close_comm(c)`,
    // `self.shutdown_kernel(k)`, `c.stop_async()`).
    let first_word = || {
        name.split_once('_')
            .is_some_and(|(verb, _)| tears_down(verb))
    };
    (method && tears_down(name)) || first_word()
}

/// A teardown method (`close`, `aclose`, `shutdown`, `stop`) waiting on
/// each member of the object's own collection (`await gather(*(h.
/// wait_until_released() for h in self._holders))` in `Pool.close`): the
/// members exist already, and waiting on them opens nothing new.
fn teardown_of_own(cx: &FileCx, id: ExprId, iter: ExprId, per_item: Option<ExprId>) -> bool {
    let f = cx.func(cx.func_of(id));
    crate::python::common::is_closing_method(f.name.as_str())
        && cx
            .model
            .dotted(iter)
            .is_some_and(|d| d.starts_with("self."))
        && per_item.is_some_and(|p| {
            cx.call(cx.model.strip(p))
                .is_some_and(|c| c.receiver.is_some_and(|r| cx.model.name_of(r).is_some()))
        })
}

/// The loop over `iter` stops after a count (`for i, h in
/// enumerate(hosts): if i >= limit: break`): a comparison of the loop's
/// own index with a bound, then `break`.
fn capped_by_counter(cx: &FileCx, iter: ExprId) -> bool {
    let Parent::Stmt(s) = cx.tree.expr_parent(iter) else {
        return false;
    };
    let StmtKind::For {
        target: Some(t),
        body,
        ..
    } = &cx.stmt(s).kind
    else {
        return false;
    };
    let index: Vec<&str> = unsnarl_model::walk::exprs_under(cx.model, *t)
        .into_iter()
        .filter_map(|x| cx.model.name_of(x))
        .collect();
    body.iter().any(|&b| {
        let StmtKind::If { cond, then, .. } = &cx.stmt(b).kind else {
            return false;
        };
        then.first()
            .is_some_and(|&f| matches!(cx.stmt(f).kind, StmtKind::Break))
            && matches!(&cx.expr(*cond).kind, ExprKind::Binary { op: BinOp::Gt | BinOp::GtE | BinOp::Eq, left, .. }
                if cx.model.name_of(*left).is_some_and(|n| index.contains(&n)))
    })
}

/// Inputs whose size is fixed in the code: literals, `range(...)` (a pool
/// of N workers), chunks of an enclosing loop, slices (`xs[:n]`,
/// `islice(it, 0, n)`: the first window of a sliding window that starts
/// one more as each finishes), a `zip` with a `range` or `islice`.
fn bounded_input(cx: &FileCx, iter: ExprId) -> bool {
    let iter = cx.model.strip(iter);
    if is_structural(cx, iter)
        || configured(cx, iter, 4)
        || filled_at_construction(cx, iter)
        || literal_keyed(cx, iter)
    {
        return true;
    }
    match &cx.expr(iter).kind {
        ExprKind::Collection { .. } | ExprKind::Literal(_) => true,
        ExprKind::Index { index, .. } => matches!(cx.expr(*index).kind, ExprKind::Other(_)),
        ExprKind::Call(c) => {
            matches!(
                c.target.as_deref(),
                Some("builtins.range" | "itertools.repeat")
            ) || (c.target.as_deref() == Some("builtins.enumerate")
                && c.positional(0).is_some_and(|a| bounded_input(cx, a)))
                // `zip` stops at its shortest input: `zip(items,
                // range(limit))` takes `limit` at most. (Only a count: a
                // list zipped beside the data is as long as the data.)
                || (c.target.as_deref() == Some("builtins.zip")
                    && c.args.iter().any(|a| {
                        !a.spread
                            && cx.call(cx.model.strip(a.value)).is_some_and(|k| {
                                matches!(
                                    k.target.as_deref(),
                                    Some("builtins.range" | "itertools.islice")
                                )
                            })
                    }))
                || (c.target.as_deref() == Some("itertools.islice")
                    && c.args.len() >= 2
                    && c.positional(c.args.len().min(3) - 1)
                        .is_some_and(|stop| !matches!(cx.model.literal(stop), Some(Lit::Null))))
                // `kwargs.items()` of a bounded mapping.
                || (matches!(c.name.as_str(), "items" | "keys" | "values")
                    && c.args.is_empty()
                    && c.receiver.is_some_and(|r| bounded_input(cx, r)))
        }
        ExprKind::Name { id, .. } => {
            if from_varargs(cx, cx.func_of(iter), id) {
                return true;
            }
            if (literal_local(cx, cx.func_of(iter), id, 2)
                || literal_module_constant(cx, cx.func_of(iter), id))
                && !nested_in_unbounded_loop(cx, iter)
            {
                return true;
            }
            if sliced_local(cx, cx.func_of(iter), id)
                || length_checked(cx, iter, id)
                || in_short_branch(cx, iter, id)
            {
                return true;
            }
            // The loop variable of an enclosing `for chunk in batched(...)`
            // (also `for i, chunk in enumerate(chunked(ids, n))`).
            let Some(s) = cx.tree.enclosing_stmt(iter) else {
                return false;
            };
            std::iter::once(s)
                .chain(cx.tree.stmt_ancestors(s))
                .any(|a| match &cx.stmt(a).kind {
                    StmtKind::For {
                        target: Some(t),
                        iter: outer,
                        ..
                    } => match &cx.expr(*t).kind {
                        // Only `enumerate`'s item, not a walk's or a
                        // mapping's (`for root, dirs, files in os.walk(p)`).
                        ExprKind::Collection { elems, .. } => {
                            matches!(elems.as_slice(), [_, item] if cx.model.name_of(*item) == Some(id.as_str()))
                                && cx.call(*outer).is_some_and(|c| {
                                    c.target.as_deref() == Some("builtins.enumerate")
                                })
                        }
                        _ => cx.model.name_of(*t) == Some(id.as_str()),
                    },
                    _ => false,
                })
        }
        _ => false,
    }
}

/// `len(name)`.
fn is_len_of(cx: &FileCx, e: ExprId, name: &str) -> bool {
    cx.call(cx.model.strip(e)).is_some_and(|c| {
        c.target.as_deref() == Some("builtins.len")
            && c.positional(0).and_then(|a| cx.model.name_of(a)) == Some(name)
    })
}

/// Earlier in the function, a test of the collection's length against a
/// constant that leaves (`if len(buckets) > MAX_BUCKETS: return ..`, `if
/// len(ids) >= 50: raise ValueError(..)`): past it, the fan-out is capped.
fn length_checked(cx: &FileCx, iter: ExprId, name: &str) -> bool {
    let f = cx.func_of(iter);
    let at = cx.expr(iter).span.start;
    let len_of_it = |e: ExprId| is_len_of(cx, e, name);
    let constant = |e: ExprId| {
        cx.model.int_value(e).is_some()
            || cx.model.name_of(e).is_some_and(|n| {
                n.chars()
                    .all(|ch| ch.is_ascii_uppercase() || ch == '_' || ch.is_ascii_digit())
            })
            || cx.model.dotted(e).is_some_and(|d| {
                d.rsplit('.')
                    .next()
                    .is_some_and(|n| n.chars().all(|ch| ch.is_ascii_uppercase() || ch == '_'))
            })
    };
    cx.body_stmts(f).iter().any(|&st| {
        let StmtKind::If { cond, then, .. } = &cx.stmt(st).kind else {
            return false;
        };
        cx.stmt(st).span.end <= at
            && then.last().is_some_and(|&l| {
                matches!(cx.stmt(l).kind, StmtKind::Return(_) | StmtKind::Raise(_))
            })
            && matches!(&cx.expr(cx.model.strip(*cond)).kind,
                ExprKind::Binary { op: BinOp::Gt | BinOp::GtE, left, right }
                    if len_of_it(*left) && constant(*right))
    })
}

/// The loop sits in the branch of a length test of the same collection
/// where it holds a handful at most: the `else` of `if len(channels) > 1:`
/// (the many-item case handled above it as one batch), or the body of
/// `if len(ids) <= 3:`.
fn in_short_branch(cx: &FileCx, iter: ExprId, name: &str) -> bool {
    const SMALL: i128 = 8;
    let Some(s) = cx.tree.enclosing_stmt(iter) else {
        return false;
    };
    let len_of_it = |e: ExprId| is_len_of(cx, e, name);
    let small = |e: ExprId| {
        cx.model
            .int_value(e)
            .is_some_and(|n| (0..=SMALL).contains(&n))
    };
    cx.tree.stmt_ancestors(s).any(|a| {
        let StmtKind::If { cond, then, orelse } = &cx.stmt(a).kind else {
            return false;
        };
        let ExprKind::Binary { op, left, right } = &cx.expr(cx.model.strip(*cond)).kind else {
            return false;
        };
        if !len_of_it(*left) || !small(*right) {
            return false;
        }
        match op {
            BinOp::Gt | BinOp::GtE => crate::util::block_contains(cx, orelse, s),
            BinOp::Lt | BinOp::LtE | BinOp::Eq => crate::util::block_contains(cx, then, s),
            _ => false,
        }
    })
}

/// The arguments a caller wrote out one by one: the `*channels` parameter
/// of `f` or of a function it is nested in, or a local (of those) bound
/// only to a comprehension over one (`_channels = [derive(c) for c in
/// channels]`). A handful, not data.
fn from_varargs(cx: &FileCx, f: FuncId, name: &str) -> bool {
    let star_param = |g: FuncId, n: &str| crate::util::variadic_param_in_scope(cx, g, n);
    if star_param(f, name) {
        return true;
    }
    let mut cur = Some(f);
    while let Some(g) = cur {
        let values: Vec<Option<ExprId>> =
            crate::python::common::values_bound_to(cx, g, name).collect();
        if !values.is_empty() {
            return values.iter().all(|v| {
                v.is_some_and(|v| match &cx.expr(cx.model.strip(v)).kind {
                    ExprKind::Comprehension { generators, .. } => {
                        matches!(generators.as_slice(), [one]
                            if cx.model.name_of(one.iter).is_some_and(|n| n != name && star_param(g, n)))
                    }
                    _ => false,
                })
            });
        }
        cur = cx.func(g).parent;
    }
    false
}

/// The loop over `iter` sits inside another loop of the function over
/// input of any size (`for form in forms: for payload in PAYLOADS:`): the
/// literal only multiplies it.
fn nested_in_unbounded_loop(cx: &FileCx, iter: ExprId) -> bool {
    let Some(s) = cx.tree.enclosing_stmt(iter) else {
        return false;
    };
    cx.tree.stmt_ancestors(s).any(|a| match &cx.stmt(a).kind {
        StmtKind::For { iter: outer, .. } => !bounded_input(cx, *outer),
        _ => false,
    })
}

/// A module-level name (that `f` and the functions around it do not bind)
/// the module binds only to literal collections and nothing in the file
/// grows (`URLS = ["..", ".."]`, no `URLS.append(..)`).
fn literal_module_constant(cx: &FileCx, f: FuncId, name: &str) -> bool {
    let mut cur = Some(f);
    while let Some(g) = cur {
        if g.0 == 0 {
            break;
        }
        if crate::python::common::values_bound_to(cx, g, name)
            .next()
            .is_some()
            || cx.func(g).params.iter().any(|p| p.name == name)
        {
            return false;
        }
        cur = cx.func(g).parent;
    }
    literal_local(cx, FuncId(0), name, 0)
        && !cx
            .calls_named(&["append", "extend", "add", "update", "insert", "setdefault"])
            .iter()
            .any(|(_, c)| c.receiver.and_then(|r| cx.model.name_of(r)) == Some(name))
}

/// A local of `f` bound only to literal collections, to a comprehension
/// over one, or to an entry of one (`methods = table[kind]` with `table =
/// {"flow": [..], ..}`): its size is written in the code.
fn literal_local(cx: &FileCx, f: FuncId, name: &str, depth: u32) -> bool {
    let values: Vec<ExprId> = crate::python::common::values_bound_to(cx, f, name)
        .collect::<Option<Vec<_>>>()
        .unwrap_or_default();
    !values.is_empty()
        && values
            .iter()
            .all(|&v| match &cx.expr(cx.model.strip(v)).kind {
                ExprKind::Collection { .. } => true,
                // `[Discoverer(c) for c in [AT4, AT5]]`: one per entry of a
                // literal.
                ExprKind::Comprehension { generators, .. } => matches!(
                    generators.as_slice(),
                    [one] if matches!(cx.expr(cx.model.strip(one.iter)).kind, ExprKind::Collection { .. })
                ),
                ExprKind::Index { obj, .. } if depth > 0 => cx
                    .model
                    .name_of(*obj)
                    .is_some_and(|o| o != name && literal_local(cx, f, o, depth - 1)),
                // `scripts: List[str] = basic_scripts`, another literal
                // local, grown only by literals (`.extend(full_scripts)`).
                ExprKind::Name { id, .. } if depth > 0 => {
                    id != name
                        && literal_local(cx, f, id, depth - 1)
                        && grown_only_by_literals(cx, f, name, depth)
                }
                _ => false,
            })
}

/// Every `name.extend(x)`/`name.append(x)`/`name += x` of `f` adds a
/// literal, or a local bound only to literals: the collection stays the
/// size the code writes out.
fn grown_only_by_literals(cx: &FileCx, f: FuncId, name: &str, depth: u32) -> bool {
    let literal = |v: ExprId| match &cx.expr(cx.model.strip(v)).kind {
        ExprKind::Collection { .. } | ExprKind::Literal(_) => true,
        ExprKind::Name { id, .. } => depth > 0 && id != name && literal_local(cx, f, id, depth - 1),
        _ => false,
    };
    cx.body_calls(f).all(|e| {
        let Some(c) = cx.call(e) else { return true };
        let on_it = c.receiver.and_then(|r| cx.model.name_of(r)) == Some(name);
        !on_it
            || match c.name.as_str() {
                "extend" | "append" | "insert" => c.args.iter().all(|a| literal(a.value)),
                _ => true,
            }
    })
}

/// A local of `f` bound only to a slice with an end (`rows =
/// results[:limit]`) or to
/// a comprehension over one (`[fetch(u) for u in urls[:n]]`): the slice
/// caps it, as it does written in place.
fn sliced_local(cx: &FileCx, f: FuncId, name: &str) -> bool {
    // With an end: `xs[1:]` is as long as the data.
    let is_slice = |v: ExprId| {
        matches!(&cx.expr(cx.model.strip(v)).kind, ExprKind::Index { index, .. }
            if matches!(cx.expr(*index).kind, ExprKind::Other(_))
                && cx.source(cx.expr(*index).span).split(':').nth(1).is_some_and(|end| !end.trim().is_empty()))
    };
    let values: Vec<ExprId> = crate::python::common::values_bound_to(cx, f, name)
        .collect::<Option<Vec<_>>>()
        .unwrap_or_default();
    // `names = self._matches(query)` where every `return` of that function
    // of the file is a slice with an end (`return found[:3]`).
    let returns_a_slice = |v: ExprId| {
        cx.call(cx.model.strip(v))
            .and_then(|c| cx.callee_in_file(c))
            .is_some_and(|g| {
                let returns: Vec<Option<ExprId>> =
                    crate::python::common::returned_values(cx, g).collect();
                !cx.func(g).is_generator
                    && !returns.is_empty()
                    && returns.iter().all(|r| r.is_some_and(is_slice))
            })
    };
    !values.is_empty() && values.iter().all(|&v| {
        is_slice(v)
            || returns_a_slice(v)
            || matches!(&cx.expr(cx.model.strip(v)).kind, ExprKind::Comprehension { generators, .. }
                    if matches!(generators.as_slice(), [one] if is_slice(one.iter)))
    })
}

/// The collection comes from configuration: a path through a config,
/// settings or options object (`config.endpoints()`, `self.settings.peers`)
/// or the command line (`sys.argv[1:]`), directly, through locals, or
/// through an attribute of `self` that only `__init__` sets. Its size is
/// what an operator wrote, not what the data brings.
fn configured(cx: &FileCx, e: ExprId, depth: u32) -> bool {
    let e = cx.model.strip(e);
    let path = match &cx.expr(e).kind {
        // `config.endpoints()`: a method of the config object.
        ExprKind::Call(c) => c.receiver.or(Some(c.func)),
        ExprKind::Index { obj, .. } => Some(*obj),
        _ => Some(e),
    };
    if let Some(p) = path
        && let Some(d) = cx.model.dotted(p)
    {
        let d = d.to_ascii_lowercase();
        if ["config", "settings", "options", "cfg", "opts", "argv"]
            .iter()
            .any(|w| {
                d.split('.')
                    .any(|seg| seg.trim_start_matches('_').starts_with(w))
            })
        {
            return true;
        }
    }
    if depth == 0 {
        return false;
    }
    let ExprKind::Attr { obj, name, .. } = &cx.expr(e).kind else {
        return match cx.model.name_of(e) {
            Some(n) => {
                let f = cx.func_of(e);
                // A parameter holds whatever the caller passed.
                if cx.func(f).params.iter().any(|p| p.name == n) {
                    return false;
                }
                let binds: Vec<ExprId> =
                    crate::util::assignments(cx, |t| cx.model.name_of(t) == Some(n))
                        .into_iter()
                        .filter(|&(s, _)| cx.tree.stmt_func(s) == f)
                        .map(|(_, v)| v)
                        .collect();
                !binds.is_empty() && binds.iter().all(|&v| configured(cx, v, depth - 1))
            }
            None => false,
        };
    };
    if cx.model.name_of(*obj) != Some("self") {
        return false;
    }
    let sets = crate::util::assignments(cx, |t| {
        matches!(&cx.expr(t).kind, ExprKind::Attr { obj: o, name: n, .. }
            if n == name && cx.model.name_of(*o) == Some("self"))
    });
    !sets.is_empty()
        && sets.iter().all(|&(s, v)| {
            cx.func(cx.tree.stmt_func(s)).name.as_str() == "__init__"
                && configured(cx, v, depth - 1)
        })
}

/// The attribute `x` when the loop runs over `self.x` or its
/// `.values()`, `.keys()` or `.items()`.
fn own_attribute<'a>(cx: &FileCx<'a>, iter: ExprId) -> Option<&'a str> {
    let mut e = cx.model.strip(iter);
    if let Some(c) = cx.call(e)
        && matches!(c.name.as_str(), "values" | "keys" | "items")
        && c.args.is_empty()
        && let Some(r) = c.receiver
    {
        e = cx.model.strip(r);
    }
    let ExprKind::Attr { obj, name, .. } = &cx.expr(e).kind else {
        return None;
    };
    (cx.model.name_of(*obj) == Some("self")).then_some(name.as_str())
}

/// `self.channels` (or its `.values()`, `.keys()`, `.items()`) whose
/// every entry is stored under a key written in the code
/// (`self.channels["telegram"] = TelegramChannel(..)`), and that nothing
/// else grows: it holds at most one entry per such key, a number the code
/// fixes.
fn literal_keyed(cx: &FileCx, iter: ExprId) -> bool {
    let Some(name) = own_attribute(cx, iter) else {
        return false;
    };
    let this = |t: ExprId| {
        matches!(&cx.expr(cx.model.strip(t)).kind, ExprKind::Attr { obj: o, name: n, .. }
            if n == name && cx.model.name_of(*o) == Some("self"))
    };
    // No method call may grow it (`update`, `setdefault`, `append`...).
    let grown_by_call = cx
        .calls_named(&[
            "append",
            "add",
            "extend",
            "insert",
            "update",
            "setdefault",
            "__setitem__",
        ])
        .into_iter()
        .any(|(_, c)| c.receiver.is_some_and(this));
    if grown_by_call {
        return false;
    }
    let mut keys = 0;
    let all_literal = cx.model.stmts.iter().all(|st| {
        let StmtKind::Assign { targets, value, op } = &st.kind else {
            return true;
        };
        targets
            .iter()
            .all(|&t| match &cx.expr(cx.model.strip(t)).kind {
                // Set to a literal: `{}`, or `{"a": A(), "b": B()}` (not
                // grown by one: `self.x += [item]`).
                _ if this(t) => {
                    !matches!(op, AssignOp::Augmented(_))
                        && value.is_some_and(|v| {
                            matches!(
                                &cx.expr(cx.model.strip(v)).kind,
                                ExprKind::Collection { .. }
                            )
                        })
                }
                ExprKind::Index { obj, index } if this(*obj) => {
                    keys += 1;
                    matches!(cx.model.literal(*index), Some(Lit::Str(_) | Lit::Int(_)))
                }
                _ => true,
            })
    });
    all_literal && keys > 0
}

/// `self._states` (or its `.values()`, `.keys()`, `.items()`) that only
/// `__init__` makes and fills, one entry per item of a collection of the
/// program's parts it was handed (`for s in servers: self._states[s.name]
/// = State(s)`): one per configured server, not one per input.
fn filled_at_construction(cx: &FileCx, iter: ExprId) -> bool {
    let Some(name) = own_attribute(cx, iter) else {
        return false;
    };
    let this = |t: ExprId| {
        matches!(&cx.expr(cx.model.strip(t)).kind, ExprKind::Attr { obj: o, name: n, .. }
            if n == name && cx.model.name_of(*o) == Some("self"))
    };
    let mut filled = false;
    let all_in_init = cx.model.stmts.iter().enumerate().all(|(i, st)| {
        let StmtKind::Assign { targets, value, .. } = &st.kind else {
            return true;
        };
        let s = StmtId(i as u32);
        targets.iter().all(|&t| {
            let in_init = || cx.func(cx.tree.stmt_func(s)).name == "__init__";
            match &cx.expr(cx.model.strip(t)).kind {
                _ if this(t) => {
                    in_init()
                        && value.is_some_and(|v| {
                            matches!(&cx.expr(cx.model.strip(v)).kind,
                                ExprKind::Collection { elems, .. } if elems.is_empty())
                        })
                }
                ExprKind::Index { obj, .. } if this(*obj) => {
                    filled = true;
                    in_init()
                        && cx.tree.stmt_ancestors(s).any(|a| {
                            matches!(&cx.stmt(a).kind, StmtKind::For { iter, .. }
                                if is_structural(cx, *iter))
                        })
                }
                _ => true,
            }
        })
    });
    filled && all_in_init
}

/// Collections of the program's own parts (registered listeners, receivers,
/// callbacks, the awaitables a helper was handed, worker, server or client
/// lists, the steps or branches of a pipeline it composed, an agent's tools):
/// their size is set by the code, not by input data.
fn is_structural(cx: &FileCx, iter: ExprId) -> bool {
    let mut names = Vec::new();
    for x in exprs_under(cx.model, iter) {
        match &cx.expr(x).kind {
            ExprKind::Name { id, .. } => names.push(id.clone()),
            ExprKind::Attr { name, .. } => names.push(name.clone()),
            ExprKind::Call(c) => names.push(c.name.clone()),
            _ => {}
        }
    }
    const WRAPPERS: &[&str] = &[
        "enumerate",
        "zip",
        "list",
        "tuple",
        "sorted",
        "reversed",
        "items",
        "values",
        "keys",
        "iter",
        "self",
        "cls",
        "get",
        "copy",
    ];
    let Some(last) = names.iter().find(|n| !WRAPPERS.contains(&n.as_str())) else {
        return false;
    };
    let n = last.trim_start_matches('_').to_ascii_lowercase();
    [
        "listener",
        "receiver",
        "handler",
        "callback",
        "hook",
        "coro",
        "awaitable",
        "worker",
        "server",
        "service",
        "addr",
        "signal",
        "subscriber",
        "observer",
        "plugin",
        "middleware",
        "child",
        "scope",
        "func",
        "factor",
        "consumer",
        "producer",
        "shard",
        "broker",
        "leader",
        // A Redlock's independent masters (plural: a replication
        // protocol's "master state" is data).
        "masters",
        "partition",
        "replica",
        "node",
        "peer",
        "backend",
        "provider",
        "connection",
        "client",
        "transport",
        "sentinel",
        "engine",
        "retriever",
        "component",
        "binding",
        "storage",
        "step",
        "branch",
        // An agent framework's parts: its tools and toolsets, sub-agents,
        // guardrails, judges, termination conditions; a media pipeline's
        // processors and sinks.
        "tool",
        "agent",
        "guardrail",
        "judge",
        "condition",
        "pipeline",
        "processor",
        "sink",
    ]
    .iter()
    .any(|k| n.contains(k))
        // `args`, `arguments`, not `targets`.
        || n.starts_with("arg")
}

/// Names that say "this limits concurrency".
fn is_limiter_name(n: &str) -> bool {
    let n = n.to_ascii_lowercase();
    n.contains("sem") || n.contains("limit") || n.contains("throttle")
}

fn is_limiter(cx: &FileCx, e: ExprId) -> bool {
    let e = cx.model.strip(e);
    if let Some(t) = cx.sema.type_of(e)
        && let Some(entry) = cx.kb.find(Effect::Lock, Some(t), "")
        && matches!(entry.kind.as_deref(), Some("semaphore" | "async-semaphore"))
    {
        return true;
    }
    cx.model
        .dotted(e)
        .is_some_and(|d| is_limiter_name(d.rsplit('.').next().unwrap_or(&d)))
        || cx.call(e).is_some_and(|c| {
            is_limiter_name(&c.name) || c.receiver.is_some_and(|r| is_limiter(cx, r))
        })
}

/// The spawn sits in `async with sem:` or after `await sem.acquire()` in
/// the same loop body / function.
fn guarded_here(cx: &FileCx, id: ExprId) -> bool {
    let in_with = cx
        .enclosing_stmts(id)
        .into_iter()
        .any(|s| match &cx.stmt(s).kind {
            StmtKind::With { items, .. } => items.iter().any(|it| is_limiter(cx, it.ctx)),
            _ => false,
        });
    if in_with {
        return true;
    }
    let f = cx.func_of(id);
    cx.body_calls(f).any(|e| {
        cx.call(e)
            .is_some_and(|c| is_acquire(&c.name) && c.receiver.is_some_and(|r| is_limiter(cx, r)))
    })
}

/// Every way of taking a slot: `acquire`, and anyio's `acquire_nowait`
/// and `acquire_on_behalf_of[_nowait]` (a loop that stops at `WouldBlock`
/// never holds more slots than the limiter has).
fn is_acquire(name: &str) -> bool {
    matches!(
        name,
        "acquire" | "acquire_nowait" | "acquire_on_behalf_of" | "acquire_on_behalf_of_nowait"
    )
}

/// The loop's item: `job` in `for job in jobs`, and the value in `for
/// name, job in registry.items()`.
fn item_name<'a>(cx: &'a FileCx, target: ExprId, iter: ExprId) -> Option<&'a str> {
    if let ExprKind::Collection {
        kind: CollKind::Tuple | CollKind::List,
        elems,
        ..
    } = &cx.expr(cx.model.strip(target)).kind
    {
        let items = cx
            .call(cx.model.strip(iter))
            .is_some_and(|c| c.name == "items" && c.args.is_empty());
        return match elems.as_slice() {
            [_, value] if items => cx.model.name_of(*value),
            _ => None,
        };
    }
    cx.model.name_of(target)
}

/// A loop that waits for running tasks before starting more (`await
/// asyncio.wait(...)`, `gather` of a batch, a queue `join`).
fn loop_waits_for_slots(cx: &FileCx, body: &Block) -> bool {
    unsnarl_model::walk::calls_in_block(cx.model, body)
        .into_iter()
        .any(|e| {
            cx.is_awaited(e)
                && cx.call(e).is_some_and(|c| {
                    matches!(
                        c.target.as_deref(),
                        Some("asyncio.wait" | "asyncio.gather" | "asyncio.wait_for")
                    ) || matches!(c.name.as_str(), "join" | "acquire" | "put")
                })
        })
}

/// The per-item coroutine (a call, or a function passed to `map`/a
/// thread) limits itself: its body takes a semaphore, or it is handed one.
fn spawned_is_bounded(cx: &FileCx, per_item: ExprId) -> bool {
    let per_item = cx.model.strip(per_item);
    let (callee, args): (Option<String>, Vec<ExprId>) = match &cx.expr(per_item).kind {
        ExprKind::Call(c) => (
            c.target
                .clone()
                .or_else(|| Some(c.name.clone()))
                .map(Into::into),
            c.args.iter().map(|a| a.value).collect(),
        ),
        ExprKind::Name { id, resolved } => (
            resolved
                .clone()
                .or_else(|| Some(id.clone()))
                .map(Into::into),
            vec![],
        ),
        ExprKind::Attr { resolved, name, .. } => (
            resolved
                .clone()
                .or_else(|| Some(name.clone()))
                .map(Into::into),
            vec![],
        ),
        _ => (None, vec![]),
    };
    if args.iter().any(|&a| is_limiter(cx, a)) || wrapped_with_limiter(cx, per_item) {
        return true;
    }
    if cx.call(per_item).is_some_and(|c| offloads(cx, c)) {
        return true;
    }
    // The offload function itself handed to the spawner
    // (`tg.start_soon(to_thread.run_sync, digest, path)`).
    if let (Some(target), ExprKind::Name { .. } | ExprKind::Attr { .. }) =
        (callee.as_deref(), &cx.expr(per_item).kind)
    {
        let method = target.rsplit('.').next().unwrap_or(target);
        if cx.kb.find(Effect::Offload, Some(target), method).is_some() {
            return true;
        }
    }
    let Some(callee) = callee else { return false };
    // A function of this file (module level, method, or nested def).
    let found = cx.model.function_ids().find(|&f| {
        let func = cx.func(f);
        !func.name.is_empty() && (func.qualname == callee || func.name == callee)
    });
    match found {
        Some(f) => {
            takes_limiter_within(cx, f, 2)
                || serialized_by_a_mutex(cx, f, on_self(cx, per_item))
                || only_offloads(cx, f)
                || only_synchronizes(cx, f)
                || awaits_own_future(cx, f)
                // Each task runs to its end in its first step: no more
                // than one is ever in flight.
                || crate::python::common::never_suspends_within(cx, f, 2)
        }
        None => {
            // Another module: the index tells us what it calls.
            cx.index
                .resolve(cx.lang, &callee, cx.file)
                .is_some_and(|i| {
                    cx.index.summary(i).calls.iter().any(|c| {
                        c.target.ends_with("Semaphore.acquire")
                            || c.target.ends_with("CapacityLimiter.acquire")
                    })
                })
        }
    }
}

/// The per-item call goes through a wrapper that is handed a limiter
/// (`with_semaphore(sem)(check)(frame)`, `limited(sem, check)(frame)`):
/// the wrapper takes it around each call.
fn wrapped_with_limiter(cx: &FileCx, per_item: ExprId) -> bool {
    let mut cur = per_item;
    for _ in 0..3 {
        let Some(c) = cx.call(cur) else { return false };
        let callee = cx.model.strip(c.func);
        let Some(inner) = cx.call(callee) else {
            return false;
        };
        if inner.args.iter().any(|a| is_limiter(cx, a.value)) {
            return true;
        }
        cur = callee;
    }
    false
}

/// The call hands its work to a thread or process pool (the knowledge
/// table's offload entries: `asyncio.to_thread(f, x)`,
/// `loop.run_in_executor(pool, f, x)`, anyio's and trio's
/// `to_thread.run_sync`): the pool's size or the library's thread limiter,
/// not the number of callers, bounds how much runs at once.
fn offloads(cx: &FileCx, c: &Call) -> bool {
    cx.effect(c, Effect::Offload).is_some()
}

/// A coroutine of the file whose every `await` hands work to an executor
/// (`async def encode_async(t): return await asyncio.to_thread(enc, t)`),
/// with no `async with`/`async for` of its own.
fn only_offloads(cx: &FileCx, f: FuncId) -> bool {
    only_offloads_within(cx, f, 2)
}

/// [`only_offloads`], also through a deadline (`await
/// asyncio.wait_for(loop.run_in_executor(None, call), t)`) and through
/// coroutines of the file that only offload, `depth` calls down
/// (`_dispatch_quiet` awaiting `self._dispatch(..)`).
fn only_offloads_within(cx: &FileCx, f: FuncId, depth: u32) -> bool {
    let func = cx.func(f);
    let awaited: Vec<ExprId> = cx
        .body_exprs(f)
        .iter()
        .filter_map(|&e| match cx.expr(e).kind {
            ExprKind::Await(inner) => Some(cx.model.strip(inner)),
            _ => None,
        })
        .collect();
    let offloaded = |a: ExprId| {
        let Some(c) = cx.call(a) else { return false };
        let c = match c.target.as_deref() {
            Some("asyncio.wait_for" | "asyncio.tasks.wait_for") => {
                match c.positional(0).and_then(|x| cx.call(cx.model.strip(x))) {
                    Some(inner) => inner,
                    None => return false,
                }
            }
            _ => c,
        };
        offloads(cx, c)
            || (depth > 0
                && cx
                    .callee_in_file(c)
                    .is_some_and(|g| g != f && only_offloads_within(cx, g, depth - 1)))
    };
    func.is_async
        && !awaited.is_empty()
        && awaited.iter().all(|&a| offloaded(a))
        && crate::util::awaits_in_block(cx.model, &func.body).len() == awaited.len()
}

/// The spawned coroutine only waits on and signals synchronization
/// primitives (`await event.wait(); scope.cancel()`: a "first of" race):
/// it holds no connection or file, so any number of them floods nothing.
fn only_synchronizes(cx: &FileCx, f: FuncId) -> bool {
    let mut waits = false;
    let all_sync = cx.body_calls(f).all(|e| {
        cx.call(e).is_some_and(|c| {
            waits |= c.name == "wait";
            c.receiver.is_some()
                && matches!(
                    c.name.as_str(),
                    "wait" | "set" | "clear" | "cancel" | "notify" | "notify_all" | "release"
                )
        })
    });
    all_sync && waits
}

/// The spawned coroutine hands its work over synchronously (to a client
/// that buffers it, `producer.produce(.., on_delivery=ack)`) and then only
/// awaits a future it made itself (`done = loop.create_future()`), which a
/// callback resolves: the tasks are receipts waiting for acknowledgements,
/// not concurrent operations, and the client bounds what is in flight.
fn awaits_own_future(cx: &FileCx, f: FuncId) -> bool {
    let futures: Vec<&str> = cx
        .body_stmts(f)
        .iter()
        .filter_map(|&s| match &cx.stmt(s).kind {
            StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } => {
                let made = cx
                    .call(*v)
                    .is_some_and(|c| crate::python::common::makes_asyncio_future(cx, c));
                match targets.as_slice() {
                    [t] if made => cx.model.name_of(*t),
                    _ => None,
                }
            }
            _ => None,
        })
        .collect();
    !futures.is_empty()
        && crate::util::awaited_values(cx.model, &cx.func(f).body).is_some_and(|awaited| {
            !awaited.is_empty()
                && awaited.iter().all(|&a| {
                    cx.model
                        .name_of(cx.model.strip(a))
                        .is_some_and(|n| futures.contains(&n))
                })
        })
}

/// `f` takes a limiter itself, or through a function of the file it calls
/// (at most `depth` calls down: `self._get(path)` whose request runs under
/// `async with self.request_semaphore:`): every task queues there, so no
/// more than its capacity do their I/O at once.
fn takes_limiter_within(cx: &FileCx, f: FuncId, depth: u32) -> bool {
    body_takes_limiter(cx, f)
        || (depth > 0
            && cx.body_calls(f).any(|e| {
                cx.call(e)
                    .and_then(|c| cx.callee_in_file(c))
                    .is_some_and(|g| g != f && takes_limiter_within(cx, g, depth - 1))
            }))
}

/// The per-item call is a method of the spawner's own object
/// (`self.evaluate(ctx)`), so its fields are shared by every task.
fn on_self(cx: &FileCx, per_item: ExprId) -> bool {
    cx.call(cx.model.strip(per_item))
        .and_then(|c| c.receiver)
        .is_some_and(|r| cx.model.name_of(r) == Some("self"))
}

/// Every await of `f` runs under one `async with <asyncio.Lock>:` of its
/// body that all the tasks share (`async with self._async_lock: return
/// await loop.run_in_executor(..)` on the spawner's own object, or a
/// module's lock): the tasks take turns, one at a time, a limit of one.
/// (A lock of each item's own object, `conn._write_lock`, serializes
/// nothing across items.)
fn serialized_by_a_mutex(cx: &FileCx, f: FuncId, on_self: bool) -> bool {
    let shared = |e: ExprId| match &cx.expr(cx.model.strip(e)).kind {
        ExprKind::Attr { obj, .. } => on_self && cx.model.name_of(*obj) == Some("self"),
        ExprKind::Name { resolved, .. } => resolved.is_some(),
        _ => false,
    };
    let all = crate::util::awaits_in_block(cx.model, &cx.func(f).body);
    !all.is_empty()
        && cx.body_stmts(f).iter().any(|&s| {
            let StmtKind::With {
                items,
                body,
                is_async: true,
            } = &cx.stmt(s).kind
            else {
                return false;
            };
            items.iter().any(|it| {
                shared(it.ctx)
                    && crate::python::common::lock_kind(cx, it.ctx) == Some("async-mutex")
            }) && crate::util::awaits_in_block(cx.model, body).len() + 1 == all.len()
        })
}

fn body_takes_limiter(cx: &FileCx, f: FuncId) -> bool {
    struct V<'a, 'b> {
        cx: &'b FileCx<'a>,
        found: bool,
    }
    impl Visitor for V<'_, '_> {
        fn enter_stmt(&mut self, _m: &FileModel, id: StmtId) -> bool {
            if let StmtKind::With { items, .. } = &self.cx.stmt(id).kind
                && items.iter().any(|it| is_limiter(self.cx, it.ctx))
            {
                self.found = true;
            }
            true
        }
        fn enter_expr(&mut self, _m: &FileModel, id: ExprId) -> bool {
            if let Some(c) = self.cx.call(id)
                && is_acquire(&c.name)
                && c.receiver.is_some_and(|r| is_limiter(self.cx, r))
            {
                self.found = true;
            }
            true
        }
    }
    let mut v = V { cx, found: false };
    walk_block(cx.model, &cx.func(f).body, &mut v);
    v.found
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
# Each connection has its own write lock: the sends to all run at once.
import asyncio


class Conn:
    def __init__(self, writer):
        self._writer = writer
        self._write_lock = asyncio.Lock()

    async def send(self, payload):
        async with self._write_lock:
            self._writer.write(payload)
            await self._writer.drain()


async def broadcast(conns, payload):
    return await asyncio.gather(*(c.send(payload) for c in conns))  # expect
"#,
        r#"
# The lock guards a counter only: the requests run all at once.
import asyncio


class Fetcher:
    def __init__(self, client):
        self._client = client
        self._lock = asyncio.Lock()
        self.count = 0

    async def fetch(self, url):
        async with self._lock:
            self.count += 1
        return await self._client.get(url)

    async def fetch_all(self, urls):
        return await asyncio.gather(*(self.fetch(u) for u in urls))  # expect
"#,
        r#"
import asyncio

async def scrape_all(search, fetch, query):
    results = await search(query)
    # Everything after the first: as many as the search returned.
    rows = results[1:]
    return await asyncio.gather(*(fetch(r["url"]) for r in rows))  # expect
"#,
        r#"
import asyncio


class BaseScanner:
    name = "base"

    async def run(self, repo_path):
        raise NotImplementedError


async def run_all(scanners, repo_path):
    async def safe_run(scanner):
        try:
            return await scanner.run(repo_path)
        except Exception as exc:
            return str(exc)

    return await asyncio.gather(*[safe_run(s) for s in scanners])  # expect
"#,
        r#"
import asyncio


class KernelManager:
    async def restart_all(self, now=False):
        kids = self.list_kernel_ids()
        futs = [self._async_start_kernel(kid, now=now) for kid in set(kids)]
        await asyncio.gather(*futs)  # expect
"#,
        r#"
import asyncio


async def knock(address, ports, timeout):
    tasks = []
    for port in ports:
        tasks.append(
            asyncio.ensure_future(  # expect
                asyncio.create_task(open_port(address, port, timeout))
            )
        )
    await asyncio.wait(tasks)
"#,
        r#"
import asyncio

async def notify_all(send, users):
    coros = []
    for user in users:
        coros.append(send(user))
    await asyncio.gather(*coros)  # expect
"#,
        r#"
import asyncio

async def notify(users, room):
    for user in users:
        asyncio.create_task(user.push(room.state))  # expect
        if room.closed:
            break
"#,
        r#"
import asyncio

async def probe(url, send):
    await send(url)

class Mux:
    async def check_all(self, urls, send):
        async with asyncio.TaskGroup() as tg:
            for path, url in urls.items():
                tg.create_task(probe(url, send))  # expect

class Worker:
    def __init__(self, limiter):
        self.limiter = limiter
        self.tg = None

    async def submit_all(self, runs):
        for run in runs:
            self.limiter.statistics()
            self.tg.start_soon(self.execute, run)  # expect

    async def execute(self, run):
        await run.go()
"#,
        r#"
import asyncio

async def fetch_all(urls):
    return await asyncio.gather(*(fetch(u) for u in urls))  # expect

async def fetch_list(urls):
    return await asyncio.gather(*[fetch(u) for u in urls])  # expect

async def built(urls):
    coros = [fetch(u) for u in urls]
    return await asyncio.gather(*coros)  # expect

async def waited(urls):
    done, _ = await asyncio.wait([fetch(u) for u in urls])  # expect
    for fut in asyncio.as_completed([fetch(u) for u in urls]):  # expect
        print(await fut)

async def appended(urls):
    pending = []
    for u in urls:
        pending.append(fetch(u))
    return await asyncio.gather(*pending)  # expect
"#,
        r#"
import asyncio

async def notify_all(users):
    for user in users:
        asyncio.create_task(send_email(user))  # expect

async def crawl(links):
    async with asyncio.TaskGroup() as tg:
        for link in links:
            tg.create_task(visit(link))  # expect
    tasks = [asyncio.create_task(visit(l)) for l in links]  # expect
    await asyncio.gather(*tasks)
"#,
        r#"
import asyncio

async def follow(worker, changes):
    async for change in changes:
        await worker.stop()
        asyncio.create_task(worker.serve(change))  # expect

class Pool:
    async def warm(self):
        await asyncio.gather(*(c.connect() for c in self._conns))  # expect
"#,
        r#"
import asyncio


class Mirror:
    def __init__(self, config, db):
        self._db = db
        self._target = config.target

    async def _push(self, row):
        return await self._target.put(row)

    async def run(self):
        rows = await self._db.fetch_all()
        tasks = [asyncio.create_task(self._push(r)) for r in rows]  # expect
        await asyncio.gather(*tasks)
"#,
        r#"
import asyncio

async def read_obj(client, kind, obj_id):
    methods = client.readers(kind)
    return await asyncio.gather(*[m(obj_id) for m in methods])  # expect
"#,
        r#"
import asyncio

class Conn:
    def __init__(self, loop):
        self._loop = loop
        self._pending = []

    def on_message(self, msg):
        self._pending.append(Job(msg))

    def add_sink(self, fn):
        self._pending.append(fn)

    def _flush(self, record):
        for job in self._pending:
            self._loop.create_task(job.run(record))  # expect
"#,
        r#"
import anyio

class Uploader:
    def __init__(self, http):
        self.http = http

    async def send(self, url, body):
        return await self.http.post(url, content=body)

    async def send_batch(self, url, batch):
        async with anyio.create_task_group() as tg:
            for item in batch.items:
                tg.start_soon(self.send, url, item)  # expect
"#,
        r#"
import asyncio

async def pump(sources, handle):
    pending = [asyncio.ensure_future(src()) for src in sources]
    while True:
        await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        for t in list(pending):
            if t.done():
                for item in t.result():
                    pending.append(asyncio.ensure_future(handle(item)))  # expect
"#,
        r#"
import asyncio

class ChannelWorker:
    def __init__(self, app, layer):
        self.app = app
        self.layer = layer

    async def handle(self, channels):
        batch = await self.layer.receive_many(channels)
        tasks = []
        for message in batch:
            tasks.append(asyncio.ensure_future(self.process(message)))  # expect
        await asyncio.wait(tasks)

    async def process(self, message):
        await self.app(message["channel"], message)
"#,
        r#"
import asyncio

async def probe_all(client, targets):
    await asyncio.gather(*(client.probe(t) for t in targets))  # expect
"#,
        r#"
import asyncio

async def fetch_all(session, urls):
    tasks = []
    for u in urls:
        tasks.append(asyncio.create_task(session.get(u)))  # expect
        await asyncio.sleep(0)
    return await asyncio.gather(*tasks)
"#,
        r#"
import asyncio


class Layer:
    def __init__(self, client):
        self.client = client
        self.channels = {}
        self.groups = {}

    async def send(self, channel, message):
        await self.client.publish(channel, message)

    async def group_send(self, group, message):
        ops = []
        for channel in self.groups.get(group, {}).keys():
            ops.append(asyncio.create_task(self.send(channel, message)))  # expect
        for op in asyncio.as_completed(ops):
            await op
"#,
        r#"
import asyncio

class Bot:
    # The object's own handler, once per incoming message: that is the
    # work itself, as many at once as there are messages.
    async def handle_batch(self, messages):
        await asyncio.gather(*(self.on_message(m) for m in messages))  # expect

    async def on_message(self, m):
        await self.api.post("/reply", json={"to": m.sender})
"#,
        r#"
import asyncio

async def _open_page(session, url):
    async with session.get(url) as resp:
        return await resp.text()

def open_pages(session, urls):
    tasks = []
    for u in urls:
        task = asyncio.ensure_future(_open_page(session, u))  # expect
        tasks.append(task)
    return tasks
"#,
        r#"
import asyncio


class Agent:
    async def resolve_urls(self, request):
        return await asyncio.gather(*(self.fetch(u) for u in request.urls))  # expect

    async def check(self, text, documents):
        tasks = [asyncio.create_task(self.classify(d, text)) for d in documents]  # expect
        return await asyncio.gather(*tasks)
"#,
        r#"
import asyncio


class KernelManager:
    async def start_all(self, request):
        kids = list(request.kernel_names)
        await asyncio.gather(*(self.start_kernel(k) for k in kids))  # expect
"#,
        r#"
import asyncio
from itertools import islice

async def upload_all(uploader):
    upload_tasks = uploader.get_substream_blocks()
    running = [
        asyncio.ensure_future(uploader.process_block(u))  # expect
        for u in islice(upload_tasks, 1, None)
    ]
    await asyncio.wait(running)
"#,
        r#"
# One send per command, all started by `wait` at once.
import asyncio


class Hub:
    async def send_commands(self, commands):
        pending = [self._send(c) for c in commands]
        done, _ = await asyncio.wait(pending, timeout=1)  # expect
        return [f.result() for f in done]
"#,
        r#"
import asyncio


class Device:
    def __init__(self, session):
        self._session = session

    async def _get(self, path):
        async with self._session.get(path) as resp:
            return await resp.json()

    async def _read(self, name):
        return await self._get(f"/aircon/{name}")

    # Nothing down the call chain limits the requests.
    async def refresh(self, names):
        return await asyncio.gather(*(self._read(n) for n in names))  # expect
"#,
        r#"
import asyncio


async def notify_all(session, message, urls):
    await asyncio.gather(*(session.post(url, json=message) for url in urls))  # expect
"#,
        r#"
import asyncio

# The task is kept, not waited for: every flush runs at once.
async def flush_all(app, log):
    for resource in list(app.db.values()):
        pending = asyncio.ensure_future(resource.flush())  # expect
        log.append(pending)
"#,
        r#"
import asyncio

PAYLOADS = ["<script>", "'\"><img>", "javascript:"]

async def scan(forms):
    # The literal only multiplies the forms, which come from the page.
    tasks = []
    for form in forms:
        for payload in PAYLOADS:
            tasks.append(probe(form, payload))
    await asyncio.gather(*tasks)  # expect
"#,
        r#"
import asyncio

# The requests list is as long as the items: zipping it bounds nothing.
async def run_batch(client, items):
    requests = [client.build(item) for item in items]
    return await asyncio.gather(*(client.send(r) for item, r in zip(items, requests)))  # expect
"#,
        r#"
import asyncio
import os


async def search(path, text):
    for root, dirs, files in os.walk(path):
        # A directory can hold any number of files: one task each, at once.
        await asyncio.gather(*(grep_file(text, os.path.join(root, f)) for f in files))  # expect
"#,
        r#"
import asyncio


class Monitor:
    def __init__(self, servers):
        self._states = {}
        for s in servers:
            self._states[s.name] = State(s)

    def track(self, job):
        # Filled from traffic too: one entry per job.
        self._states[job.id] = State(job)

    async def run(self):
        tasks = [asyncio.create_task(self._watch(name)) for name in self._states]  # expect
        await asyncio.gather(*tasks)
"#,
        r#"
import asyncio


class ChannelManager:
    def __init__(self, bus):
        self.bus = bus
        self.channels = {}

    def on_join(self, message):
        self.channels[message.channel_id] = Channel(message.channel_id, self.bus)

    async def broadcast(self, text):
        tasks = []
        for channel in self.channels.values():
            tasks.append(asyncio.create_task(channel.send(text)))  # expect
        await asyncio.gather(*tasks, return_exceptions=True)
"#,
        r#"
import asyncio


class Monitor:
    def __init__(self, checks):
        self._checks = list(checks)
        self._seen = {}

    def record(self, event):
        self._seen[event.id] = event

    async def probe_all(self):
        # The object's own parts: low, unless they grow with input.
        return await asyncio.gather(*(c.run() for c in self._checks))  # expect

    async def replay(self):
        # Grown by every event: sized by the traffic, high.
        for event in self._seen.values():
            asyncio.create_task(self.resend(event))  # expect

    async def resend_all(self, events):
        return await asyncio.gather(*(self.resend(e) for e in events))  # expect

    async def resend(self, event):
        await event.deliver()
"#,
    ],
    pass: &[
        r#"
import asyncio
import contextlib


class Bridge:
    def on_lines(self, lines):
        for payload in lines:
            self._loop.create_task(self._dispatch_quiet(payload))

    async def _dispatch_quiet(self, payload):
        with contextlib.suppress(Exception):
            await self._dispatch(payload)

    async def _dispatch(self, payload):
        # The default executor's threads bound how many run at once.
        loop = asyncio.get_running_loop()
        return await asyncio.wait_for(
            loop.run_in_executor(None, self._app.handle, payload), 30
        )
"#,
        r#"
import asyncio


class Monitor:
    def __init__(self, servers):
        self._states = {}
        for s in servers:
            if s.enabled:
                self._states[s.name] = State(s)

    async def run(self):
        # One supervisor per configured server, for the monitor's life.
        tasks = [asyncio.create_task(self._watch(name)) for name in self._states]
        await asyncio.gather(*tasks)
"#,
        r#"
import asyncio


async def analyze_stock(symbol, prices):
    closes = [p["close"] for p in prices[symbol]]
    return {"symbol": symbol, "mean": sum(closes) / len(closes)}


async def analyze_wrapper(symbol, prices):
    return await analyze_stock(symbol, prices)


async def analyze_all(symbols, prices):
    return await asyncio.gather(*(analyze_wrapper(s, prices) for s in symbols))
"#,
        r#"
import asyncio

async def deep_search(search, fetch, query, scrape_limit=5):
    results = await search(query)
    rows = results[:scrape_limit]
    return await asyncio.gather(*(fetch(r["url"]) for r in rows))
"#,
        r#"
import asyncio

from more_itertools import chunked


async def fetch_all(client, all_ids, chunk_size=50):
    results = []
    for i, id_chunk in enumerate(chunked(all_ids, chunk_size)):
        # One chunk at a time: at most chunk_size requests in flight.
        results += await asyncio.gather(*(client.get(x) for x in id_chunk))
    return results
"#,
        r#"
import asyncio


async def next_events(task_to_queue, in_progress):
    waits = []
    for name in list(in_progress):
        queue = task_to_queue[name]
        # Waits on in-process queues: nothing is opened per job.
        waits.append(asyncio.create_task(queue.get()))
    done, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    for t in pending:
        t.cancel()
    return [t.result() for t in done]
"#,
        r#"
import asyncio


async def receive(consumer, receive_queue):
    batch = await consumer.getmany(timeout_ms=1000)
    for tp, messages in batch.items():
        # In-process hand-offs: the queue's consumers set the pace.
        await asyncio.gather(*[receive_queue.put(m.value) for m in messages])
"#,
        r#"
import asyncio


async def search(host):
    discoverers = [Discoverer(config, host) for config in [AT4_CONFIG, AT5_CONFIG]]
    found = []
    for done in asyncio.as_completed([d.search() for d in discoverers]):
        found.extend(await done)
    return found
"#,
        r#"
import asyncio

# At most `limit` fetches run: one more starts as each one finishes.
async def fetch_all(session, urls, limit=10):
    items = iter(urls)
    pending = {asyncio.create_task(session.get(u)) for u, _ in zip(items, range(limit))}
    while pending:
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        for t in done:
            yield t.result()
            try:
                nxt = next(items)
            except StopIteration:
                continue
            pending.add(asyncio.create_task(session.get(nxt)))
"#,
        r#"
import asyncio

class State:
    def set(self, **kwargs):
        # One task per keyword the caller wrote out: a handful, not data.
        for name, value in kwargs.items():
            self._data[name] = value
            asyncio.create_task(self._notify(name, value))
"#,
        r#"
import asyncio

URLS = [
    "https://example.com/a",
    "https://example.com/b",
    "https://example.com/c",
]

async def main():
    # A module-level literal list: its size is written in the code.
    tasks = []
    for url in URLS:
        tasks.append(asyncio.create_task(capture(url)))
    for t in asyncio.as_completed(tasks):
        print(await t)
"#,
        r#"
import anyio
from anyio import to_thread

# anyio lets 40 worker threads run at once (its default thread limiter).
async def hash_all(paths, digest):
    async with anyio.create_task_group() as tg:
        for path in paths:
            tg.start_soon(to_thread.run_sync, digest, path)

async def read_one(path):
    return await anyio.to_thread.run_sync(path.read_bytes)

async def read_all(paths):
    async with anyio.create_task_group() as tg:
        for path in paths:
            tg.start_soon(read_one, path)
"#,
        r#"
import asyncio

# Every probe waits for a worker thread of the default executor.
async def scan(host, ports, probe):
    results = await asyncio.gather(*(asyncio.to_thread(probe, host, p) for p in ports))
    return [p for p, ok in zip(ports, results) if ok]

async def encode_async(encoding, text):
    return await asyncio.to_thread(encoding.encode, text)

async def count_tokens(encoding, messages):
    counts = await asyncio.gather(*(encode_async(encoding, m) for m in messages))
    return sum(len(c) for c in counts)
"#,
        r#"
import asyncio
import inspect

from .tools import bounded_wait


class Resources:
    async def finish_all(self, app, per_resource):
        resources = list(app.db.values())
        for resource in reversed(resources):
            closer = getattr(resource, "aclose", None) or resource.close
            result = closer()
            if inspect.isawaitable(result):
                # Each close is waited for before the next one starts.
                pending = asyncio.ensure_future(result)
                await bounded_wait(pending, per_resource)
"#,
        r#"
import asyncio


class Stream:
    def echo(self, *channels):
        _channels = [self.derive_topic(c) if isinstance(c, str) else c for c in channels]

        async def echoing(value):
            await asyncio.gather(*[channel.send(value) for channel in _channels])
            return value

        self.add_processor(echoing)
        return self


async def notify_all(session, message, *urls):
    await asyncio.gather(*(session.post(url, json=message) for url in urls))
"#,
        r#"
import asyncio
import inspect

class Registry:
    actions_by_event = {}

    @classmethod
    async def run(cls, event, instance):
        coros = []
        for action in cls.actions_by_event.get(event, []):
            if inspect.iscoroutinefunction(action):
                coros.append(action(instance))
        await asyncio.gather(*coros)

    @classmethod
    async def validate(cls, instance):
        await asyncio.gather(*(check(instance) for check in cls._validators))
"#,
        r#"
import asyncio

async def reconnect(sender, attempts):
    for attempt in attempts:
        try:
            await sender.connect()
        except OSError:
            await asyncio.sleep(attempt)
        else:
            if sender.on_reconnect:
                asyncio.create_task(sender.on_reconnect())
            break
"#,
        r#"
import asyncio


class Layer:
    def __init__(self, client):
        self.client = client
        self.channels = {}
        self.groups = {}

    # Never suspends: each task ends in its first step.
    async def send(self, channel, message):
        q = self.channels.setdefault(channel, asyncio.Queue(maxsize=100))
        q.put_nowait(dict(message))

    async def group_send(self, group, message):
        ops = []
        for channel in self.groups.get(group, {}).keys():
            ops.append(asyncio.create_task(self.send(channel, message)))
        for op in asyncio.as_completed(ops):
            await op
"#,
        r#"
import asyncio

async def read_obj(client, kind, obj_id):
    table = {
        "flow": [client.read_flow],
        "queue": [client.read_queue, client.read_queue_status],
    }
    if kind not in table:
        return None
    methods = table[kind]
    return await asyncio.gather(*[m(obj_id) for m in methods])
"#,
        r#"
import asyncio
import anyio

class Mux:
    def __init__(self, mounts):
        self.mounts = mounts

    async def lifespan(self, scope, receive, send):
        queues = {path: asyncio.Queue(10) for path in self.mounts}
        async with asyncio.TaskGroup() as tg:
            for path, app in self.mounts.items():
                tg.create_task(app(scope, queues[path].get, send))

class Worker:
    def __init__(self, limit=None):
        self.limiter = anyio.CapacityLimiter(limit) if limit else None
        self.tg = None

    async def submit_all(self, runs):
        for run in runs:
            try:
                if self.limiter:
                    self.limiter.acquire_on_behalf_of_nowait(run.id)
            except anyio.WouldBlock:
                break
            else:
                self.tg.start_soon(self.execute, run)

    async def execute(self, run):
        try:
            await run.go()
        finally:
            if self.limiter:
                self.limiter.release_on_behalf_of(run.id)
"#,
        r#"
import asyncio


class Hooks:
    def __init__(self):
        self.on_shutdown = []

    async def fire(self):
        tasks = []
        for hook in self.on_shutdown:
            tasks.append(asyncio.create_task(hook()))
        await asyncio.gather(*tasks)
"#,
        r#"
import asyncio


class Hub:
    def __init__(self):
        self.sessions = set()

    async def shutdown(self):
        closing = [asyncio.create_task(s.close(1001)) for s in self.sessions]
        if closing:
            await asyncio.wait(closing)
"#,
        r#"
import asyncio
import sys


class Monitor:
    def __init__(self, config):
        self._hosts = config.hosts()

    async def _check(self, target):
        return await target.ping()

    async def sweep(self):
        tasks = [asyncio.create_task(self._check(t)) for t in self._hosts]
        return await asyncio.gather(*tasks, return_exceptions=True)


async def fetch_all(session):
    urls = sys.argv[1:]
    return await asyncio.gather(*[session.get(u) for u in urls])
"#,
        r#"
import asyncio

class Pool:
    async def warm_up(self):
        tasks = []
        for i, h in enumerate(reversed(self._holders)):
            if i >= self._initsize:
                break
            tasks.append(h.connect())
        await asyncio.gather(*tasks)
"#,
        r#"
import asyncio

async def reload_on_change(worker, changes):
    loop = asyncio.get_running_loop()
    loop.create_task(worker.serve())
    async for _ in changes:
        await worker.stop()
        loop.create_task(worker.serve())

class Client:
    async def close(self):
        closing = [conn.close() for conn in self._conns.values()]
        if closing:
            await asyncio.gather(*closing)
        await asyncio.wait([w.wait_closed() for w in self._writers])
"#,
        r#"
import asyncio

sem = asyncio.Semaphore(20)

async def limited(u):
    async with sem:
        return await fetch(u)

async def fetch_all(urls):
    await asyncio.gather(*(limited(u) for u in urls))
    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(limited(u)) for u in urls]
"#,
        r#"
import asyncio

async def workers(queue, n):
    tasks = [asyncio.create_task(worker(queue)) for _ in range(n)]
    for i in range(n):
        asyncio.ensure_future(worker(queue))
    await queue.join()

async def fixed():
    await asyncio.gather(*(ping(h) for h in ["a", "b", "c"]))

async def chunked(items):
    for chunk in batched(items, 100):
        await asyncio.gather(*(handle(x) for x in chunk))
"#,
        r#"
import asyncio

async def guarded(urls):
    sem = asyncio.Semaphore(10)
    for u in urls:
        await sem.acquire()
        t = asyncio.create_task(fetch(u))
        t.add_done_callback(lambda _: sem.release())

async def notify_listeners(self, event):
    async with asyncio.TaskGroup() as tg:
        for listener in self._listeners:
            tg.create_task(listener(event))
    await asyncio.gather(*(r(event) for r in self.receivers))

async def passed(urls, limiter):
    async with asyncio.TaskGroup() as tg:
        for u in urls:
            tg.create_task(fetch_with(limiter, u))
"#,
        r#"
import asyncio

import trio


class Pool:
    def __init__(self, holders):
        self._holders = holders

    async def close(self):
        # Waits on connections the pool already holds: opens nothing.
        await asyncio.gather(*[h.wait_until_released() for h in self._holders])


async def _waiter(event, scope):
    await event.wait()
    scope.cancel()


async def first_of(*events):
    async with trio.open_nursery() as nursery:
        for event in events:
            nursery.start_soon(_waiter, event, nursery.cancel_scope)
"#,
        r#"
import asyncio
from collections import defaultdict

class Admin:
    async def describe(self, resources):
        by_broker = defaultdict(list)
        for res in resources:
            by_broker[res.broker_id].append(res)
        return await asyncio.gather(
            *(self._send(("describe", by_broker[b]), b) for b in by_broker)
        )
"#,
        r#"
import asyncio

class _Entry:
    def __init__(self, fn, is_async):
        self.fn = fn
        self.is_async = is_async

class Conn:
    def __init__(self, loop):
        self._loop = loop
        self._sinks = set()

    def add_sink(self, fn):
        self._sinks.add(_Entry(fn, asyncio.iscoroutinefunction(fn)))

    def remove_sink(self, entry):
        self._sinks.discard(entry)

    def _notify(self, record):
        for entry in self._sinks:
            if entry.is_async:
                self._loop.create_task(entry.fn(record))
"#,
        r#"
import asyncio
import anyio

class Producer:
    def __init__(self, native):
        self.native = native  # buffers locally; produce() does not wait

    async def send(self, topic, value):
        loop = asyncio.get_running_loop()
        done = loop.create_future()

        def on_ack(err, msg):
            if err:
                loop.call_soon_threadsafe(done.set_exception, RuntimeError(err))
            else:
                loop.call_soon_threadsafe(done.set_result, msg)

        self.native.produce(topic, value, on_delivery=on_ack)
        return await done

    async def send_batch(self, topic, batch):
        async with anyio.create_task_group() as tg:
            for item in batch.items:
                tg.start_soon(self.send, topic, item)
"#,
        r#"
import asyncio

async def pump(sources, handle):
    # One pending read per source: a finished read's slot gets the next one.
    pending = [asyncio.ensure_future(src()) for src in sources]
    try:
        while True:
            await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for i, t in enumerate(pending):
                if t.done():
                    await handle(t.result())
                    pending[i] = asyncio.ensure_future(sources[i]())
    finally:
        for t in pending:
            t.cancel()
"#,
        r#"
import asyncio

class ChannelWorker:
    def __init__(self, app, channels, layer):
        self.app = app
        self.channels = channels
        self.layer = layer

    # One listener per configured channel, for the worker's whole life.
    async def handle(self):
        listeners = []
        for channel in self.channels:
            listeners.append(asyncio.ensure_future(self.listen(channel)))
        await asyncio.wait(listeners)

    async def listen(self, channel):
        while True:
            message = await self.layer.receive(channel)
            await self.app(channel, message)
"#,
        r#"
import asyncio

class Conn:
    def __init__(self):
        self._subs = {}

    # Drains the connection's own subscriptions: nothing new is opened.
    async def drain(self, timeout: float = 5.0) -> None:
        tasks = []
        for sub in self._subs.values():
            tasks.append(asyncio.get_running_loop().create_task(sub._drain()))
        try:
            await asyncio.wait_for(asyncio.gather(*tasks), timeout)
        finally:
            self._subs.clear()
"#,
        r#"
import trio

# Happy eyeballs: each attempt gets a head start before the next begins.
async def connect_first(targets, attempt, delay):
    async with trio.open_nursery() as nursery:
        for addr in targets:
            failed = trio.Event()
            nursery.start_soon(attempt, addr, failed)
            with trio.move_on_after(delay):
                await failed.wait()
"#,
        r#"
import asyncio

# Each run manager is told how its run ended: one notification per run
# the program already made.
async def finish_runs(run_managers, outputs):
    await asyncio.gather(
        *(rm.on_chain_end(out) for rm, out in zip(run_managers, outputs))
    )
"#,
        r#"
import asyncio

async def _close_comm(comm):
    try:
        await comm.write({"op": "close"})
        await comm.close()
    except OSError:
        comm.abort()

def close_comms(comms):
    tasks = []
    for c in list(comms):
        task = asyncio.ensure_future(_close_comm(c))
        tasks.append(task)
    return tasks


class KernelManager:
    async def shutdown_all(self, now=False):
        kids = self.list_kernel_ids()
        futs = [self._async_shutdown_kernel(kid, now=now) for kid in set(kids)]
        await asyncio.gather(*futs)
"#,
        r#"
import asyncio

class FusionRetriever:
    def __init__(self, retrievers, llm):
        self._retrievers = list(retrievers)
        self._llm = llm

    async def aretrieve(self, query):
        found = await asyncio.gather(*(r.aretrieve(query) for r in self._retrievers))
        return [n for nodes in found for n in nodes]
"#,
        r#"
import asyncio


class Agent:
    def __init__(self, tools, sub_agents, guardrails):
        self.tools = tools
        self.sub_agents = sub_agents
        self.input_guardrails = guardrails

    async def resolve_tools(self, ctx):
        return await asyncio.gather(*(t.resolve(ctx) for t in self.tools))

    async def check(self, text, guardrails):
        tasks = [asyncio.create_task(g.run(text)) for g in guardrails]
        return await asyncio.gather(*tasks)


class ParallelPipeline:
    async def push(self, frame):
        await asyncio.gather(*[p.queue_frame(frame) for p in self._pipelines])

    async def flush(self, processors):
        await asyncio.gather(*[p.cleanup() for p in processors])
"#,
        r#"
import asyncio


class KernelManager:
    async def shutdown_all(self):
        kids = list(self._kernels)
        await asyncio.gather(*(self.shutdown_kernel(k) for k in kids))

    async def stop_crawlers(self):
        await asyncio.wait([asyncio.create_task(c.stop_async()) for c in list(self._crawlers)])
"#,
        r#"
import asyncio
from itertools import islice

async def upload_all(uploader, max_concurrency):
    upload_tasks = uploader.get_substream_blocks()
    running = [
        asyncio.ensure_future(uploader.process_block(u))
        for u in islice(upload_tasks, 0, max_concurrency)
    ]
    while running:
        done, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
        for _ in range(len(done)):
            nxt = next(upload_tasks, None)
            if nxt is not None:
                running.add(asyncio.ensure_future(uploader.process_block(nxt)))
"#,
        r#"
import asyncio


class Redlock:
    def __init__(self, key, masters):
        self.key = key
        self.masters = frozenset(masters)

    async def acquire(self):
        coros = [self._acquire_on(m) for m in self.masters]
        won = 0
        for coro in asyncio.as_completed(coros):
            won += await coro
        return won > len(self.masters) // 2
"#,
        r#"
# Futures the reader sets when the hub answers: waiting on them starts nothing.
import asyncio


class Hub:
    async def send_commands(self, commands):
        loop = asyncio.get_running_loop()
        pending = [loop.create_future() for c in commands]
        for command, reply in zip(commands, pending):
            self._register(command, reply)
        await self._send_all(commands)
        done, _ = await asyncio.wait(pending, timeout=1)
        return [f.result() for f in done]
"#,
        r#"
import asyncio


class Device:
    def __init__(self, session):
        self._session = session
        self._request_semaphore = asyncio.Semaphore(1)

    async def _get(self, path):
        async with self._request_semaphore:
            async with self._session.get(path) as resp:
                return await resp.json()

    async def _read(self, name):
        return await self._get(f"/aircon/{name}")

    # Every read queues on the device's semaphore, one request at a time.
    async def refresh(self, names):
        return await asyncio.gather(*(self._read(n) for n in names))
"#,
        r#"
import asyncio


class ChannelManager:
    def __init__(self, config, bus):
        self.config = config
        self.bus = bus
        self.channels = {}
        self._init_channels()

    def _init_channels(self):
        if self.config.telegram.enabled:
            self.channels["telegram"] = TelegramChannel(self.config.telegram, self.bus)
        if self.config.slack.enabled:
            self.channels["slack"] = SlackChannel(self.config.slack, self.bus)

    async def start_all(self):
        tasks = []
        for name, channel in self.channels.items():
            tasks.append(asyncio.create_task(channel.start()))
        await asyncio.gather(*tasks, return_exceptions=True)
"#,
        r#"
import asyncio


class Loader:
    def __init__(self, batch_load):
        self.batch_load = batch_load
        self.loop = asyncio.get_event_loop()
        self.keys = []
        self.futures = []

    def load(self, key):
        self.keys.append(key)
        future = self.loop.create_future()
        self.futures.append(future)
        return future

    def load_many(self, keys):
        return asyncio.gather(*[self.load(key) for key in keys])
"#,
        r#"
# Each call goes through a wrapper handed the semaphore.
import asyncio


def with_semaphore(sem):
    def deco(fn):
        async def run(*args):
            async with sem:
                return await fn(*args)
        return run
    return deco


async def check_single(frame):
    await asyncio.sleep(0)
    return frame


async def check(frames, concurrency):
    sem = asyncio.Semaphore(concurrency)
    return await asyncio.gather(*(with_semaphore(sem)(check_single)(f) for f in frames))
"#,
        r#"
# Each evaluation runs under the evaluator's asyncio.Lock: one at a time.
import asyncio


class Evaluator:
    def __init__(self, engine):
        self._engine = engine
        self._async_lock = asyncio.Lock()

    async def evaluate(self, ctx):
        async with self._async_lock:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(None, self._engine.evaluate, ctx)

    async def evaluate_all(self, contexts):
        return await asyncio.gather(*(self.evaluate(c) for c in contexts))
"#,
        r#"
# The scripts are written out: two literal lists, one added on a flag.
import asyncio


async def check_health(level, run_script):
    basic_scripts = ["health/a.sql", "health/b.sql"]
    full_scripts_additional = ["health/c.sql", "health/d.sql"]
    scripts_to_run: list[str] = basic_scripts
    if level == "full":
        scripts_to_run.extend(full_scripts_additional)
    tasks = [asyncio.create_task(run_script(s)) for s in scripts_to_run]
    await asyncio.gather(*tasks)
"#,
        r#"
# The number of buckets is capped before the fan-out.
import asyncio

MAX_BUCKETS = 500


async def heatmap(client, buckets):
    if len(buckets) > MAX_BUCKETS:
        return {"error": "too many buckets"}
    return await asyncio.gather(*(client.get(f"/history/{b}") for b in buckets))
"#,
        r#"
# The work was submitted to the pool already: gather only waits for it.
import asyncio
from concurrent.futures import ThreadPoolExecutor


async def run_callbacks(pool: ThreadPoolExecutor, callbacks):
    futures = [pool.submit(cb) for cb in callbacks]
    return await asyncio.gather(*[asyncio.wrap_future(f) for f in futures])
"#,
        r#"
import asyncio

class PanelChannel:
    def __init__(self, client, panels):
        self.client = client
        self._panels = set(panels)
        self._running = True
        self._fallback = False
        self._pollers = {}

    async def start_fallback(self):
        self._fallback = True
        # One long-lived poller per panel, started only when none runs.
        for pid in sorted(self._panels):
            t = self._pollers.get(pid)
            if not t or t.done():
                self._pollers[pid] = asyncio.create_task(self._poll_panel(pid))

    async def _poll_panel(self, pid):
        while self._running and self._fallback:
            try:
                await self.client.fetch_messages(pid)
            except OSError:
                pass
            await asyncio.sleep(5)
"#,
        r#"
import asyncio


class Mutes:
    async def resume_unmutes(self, user, channels):
        if len(channels) > 1:
            self._tasks[user] = asyncio.create_task(self.unmute_all(user, channels))
        else:
            for channel, data in channels.items():
                self._tasks[(channel, user)] = asyncio.create_task(
                    self.unmute_one(channel, data)
                )
"#,
        r#"
import asyncio


class Catalogue:
    def _matches(self, query, index):
        found = []
        for word in query.split():
            name = index.get(word)
            if name and name not in found:
                found.append(name)
        return found[:3]

    async def fetch_results(self, query, index):
        names = self._matches(query, index)
        if not names:
            return []
        return await asyncio.gather(*(self._get_json(f"/api/{name}") for name in names))
"#,
        r#"
import asyncio


class Broadcast:
    def __init__(self):
        self._subscribers = {}

    async def publish(self, topic, item):
        queues = self._subscribers.get(topic, set()).copy()
        # One in-process hand-off per subscriber: nothing is opened.
        await asyncio.gather(*(self._deliver(queue, item) for queue in queues))

    async def _deliver(self, queue, item):
        try:
            await queue.put(item)
        except asyncio.QueueShutDown:
            pass
"#,
        r#"
import asyncio


class Publisher:
    def __init__(self, shards):
        self._queues = [asyncio.Queue() for _ in range(shards)]

    async def flush(self):
        # Waits for each in-process queue to be drained; starts no work.
        await asyncio.gather(*(queue.join() for queue in self._queues))
"#,
        r#"
import asyncio


async def teardown_run(context):
    await context.sandbox.delete()


async def run_bundle(runs):
    results = await asyncio.gather(*(r.execute() for r in runs), return_exceptions=True)
    if any(isinstance(r, asyncio.CancelledError) for r in results):
        kept = [r.context for r in runs if not r.torn_down]
        await asyncio.gather(*(teardown_run(context) for context in kept))
        raise asyncio.CancelledError
    return results
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(UnboundedFanout);

    /// A fan-out over a collection the object keeps is reported at low
    /// severity and says what would make it a flood; over a caller's
    /// input it stays high.
    #[test]
    fn own_collections_are_low_and_inputs_high() {
        static RULE: UnboundedFanout = UnboundedFanout;
        let last = EXAMPLES.fail.last().unwrap();
        let (found, _) = crate::testing::run_example(&RULE, Language::Python, last);
        let got: Vec<(Severity, &str)> = found
            .iter()
            .map(|(_, f)| (f.severity, f.message.as_str()))
            .collect();
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(got[0].0, Severity::Low);
        assert!(
            got[0]
                .1
                .contains("`self._checks`, a collection the object keeps")
        );
        assert!(got[0].1.contains("once requests or data make it grow"));
        assert_eq!(got[1].0, Severity::High);
        assert!(
            got[1]
                .1
                .contains("a large input starts that many concurrent operations")
        );
        assert_eq!(got[2].0, Severity::High);
        assert!(
            got[2]
                .1
                .contains("a large input opens that many connections")
        );
    }
}
