//! PY030: a polling loop that calls a remote service on a fixed period.

use crate::context::FileCx;
use crate::python::common::{is_io_call, is_random_ref, is_zero_sleep, sleep_arg};
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::{Parent, exprs_in_block, exprs_under, stmts_in_block};
use unsnarl_model::*;

pub struct PeriodicWithoutJitter;

pub static META: RuleMeta = RuleMeta {
    id: "PY030",
    name: "fixed-period-polling",
    category: Category::ThunderingHerd,
    severity: Severity::Low,
    languages: &[Language::Python],
    summary: "A service loop polls (or reconnects to) a network dependency and sleeps a constant interval between rounds, with no jitter.",
    docs: r#"
A `while` loop whose body calls a network or database API (or reconnects
after connection errors) and sleeps a constant duration (`await
asyncio.sleep(30)`, `time.sleep(POLL_INTERVAL)`) with no random component
anywhere in the loop. A loop that gives up after a deadline or a number
of attempts (`if time.monotonic() >= deadline: raise TimeoutError(..)`,
`if attempts_left == 0: return`, `if remaining < backoff: break` with
`remaining` the time left, a loop inside a deadline scope
(`async with asyncio.timeout_at(deadline): while not acquired:`),
`while attempts:` counted down, a
`while` condition with a bound among others, `while todo and pages <
max_pages:`, or any
count the loop takes down, `left -= 1` then `if left <= 0: return`, or
up, `fails += 1` then `if fails >= 10: return`) waits for
one job and ends; it is not reported. So is one that leaves when what it
polls reports that it got there (`if data.get("status") in ("completed",
"failed"): break`, `if job["state"] == "running": return`, `if status ==
RunStatus.SUCCESS: break`), or that it is no longer underway (`if state
not in ("submitted", "working"): break`, or `if state in ("submitted",
"working"): continue` at the loop's top level before a last statement
that leaves, the words also qualified,
`"pending-fulfillment"`, or through a module-level constant), or when the result it fetches is there at
last (`content = await resp.text()` then `if content: break`, `if
data.get("jobComplete"): break`); leaving only
on `"error"` is a service that stops when its dependency fails. So is
`while status in ("STARTING", "UNKNOWN"):` when the loop sets `status`
afresh from what it polls (or `while run.status in [..]:`, `while
task.get("status") in (..):`, with `run` or `task` fetched again). A delay the loop computes afresh each round
(`retry = backoff.delay()`, `delay = min(delay * 2, 60)`, also an
attribute, `self._backoff *= 1.5`, or from a count the loop bumps,
`retries += 1; delay = factor * 2 ** retries`) is a backoff, not a period, and so is
one the server asked for (`await asyncio.sleep(e.retry_after)`). Retry loops that leave on success are the retry
rule's business. So is a sleep in the handler of a `try` whose
success leaves its loop, for an error that is not a network client's
(`try: api.login() except LoginError: time.sleep(180) else: break`),
even inside a loop that polls: it spaces out attempts at one thing until
it works. A protocol heartbeat (a loop in a function named for a
heartbeat, keepalive, pulse or ping whose awaits only write to the connection or
close it, `await self.send_command(..)` included, or push to the server's
own clients, `await self.broadcast(..)`) is left alone: it keeps
open connections alive, on their own phase. So is a loop
that starts each round by waiting for work the process hands it (`msg =
await self.send_queue.get()`, `await self.wakeup.wait()`), or takes it
only under a test that the queue holds some (`if not self.queue.empty():
data = self.queue.get()`): it runs when something arrives, and its sleep
spaces out that work. Nor a sleep that
waits for a non-blocking socket to have data (in a handler of
`BlockingIOError`, or under a test of `EWOULDBLOCK`/`EAGAIN`): that sleep
paces reads on a connection the code already has, not a poll's period;
nor a loop whose only I/O is reading from a stream it already has
(`buf += await self.reader.read(n); await asyncio.sleep(0.1)`): it asks
the peer for nothing. Nor a sleep in one branch of an `if` whose other
branch holds every network call of the loop (`if self.connected: await
ws.recv() else: await asyncio.sleep(1)`): a round either talks to the
peer or waits for a flag, and asks nothing on a period (also `if not
self.track: await asyncio.sleep(0.02); continue` before the loop's
network calls, whose `else` is the rest of the body). Nor a loop
whose every address written out is this machine's
(`requests.get(f"http://127.0.0.1:{port}/positions")`, also through a
local the loop builds the address into): a sidecar on the same host has
one poller, not a fleet. Nor a loop after the function started a child
process (`subprocess.Popen(..)`, `asyncio.create_subprocess_exec(..)`):
it waits for that child to come up.

## Why

Every instance of the service starts at about the same time (a deploy, a
restart, a broker coming back) and then polls on exactly the same period:
the dependency sees all of them in the same instant, every period, forever.
The load is a comb of spikes instead of a flat line, and a dependency that
could serve the average falls over at the peaks.

## Example

```python
import asyncio

async def refresh_loop(client, cache):
    while True:
        cache.update(await client.get("/config"))
        await asyncio.sleep(30)
```

## Fix

Add jitter to the period (and to the first delay).

```python
import asyncio
import random

async def refresh_loop(client, cache):
    while True:
        cache.update(await client.get("/config"))
        await asyncio.sleep(30 + random.uniform(-3, 3))
```
"#,
    examples: &EXAMPLES,
};

impl Rule for PeriodicWithoutJitter {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for s in 0..cx.model.stmts.len() as u32 {
            let s = StmtId(s);
            let StmtKind::While { body, cond, .. } = &cx.stmt(s).kind else {
                continue;
            };
            // `while waited < max_wait`, `while attempts:` (counted down in
            // the body): a wait with a deadline or a number of tries ends,
            // it is no service polling forever.
            // Also as one condition of several (`while urls_to_visit and
            // page_count < max_pages:`): it stops at the bound either way.
            let bounded = |c: ExprId| {
                matches!(
                    cx.expr(c).kind,
                    ExprKind::Binary {
                        op: BinOp::Lt | BinOp::LtE | BinOp::Gt | BinOp::GtE,
                        ..
                    }
                ) || names_a_bound(cx, c)
            };
            if crate::util::any_conjunct(cx.model, *cond, &mut |c| bounded(c)) {
                continue;
            }
            if matches!(cx.tree.stmt_parent(s), Parent::Detached)
                || cx.func(cx.tree.stmt_func(s)).is_test
                || polls_until_state_changes(cx, *cond, body)
            {
                continue;
            }
            let exprs = exprs_in_block(cx.model, body);
            if exprs.iter().any(|&e| is_random_ref(cx, e)) {
                continue;
            }
            let sleeps: Vec<ExprId> = exprs
                .iter()
                .copied()
                .filter(|&e| {
                    cx.call(e)
                        .is_some_and(|c| sleep_arg(c).is_some() && !is_zero_sleep(cx, c))
                })
                .collect();
            let [sleep] = sleeps.as_slice() else { continue };
            // A sleep in an error handler of a loop that leaves on success
            // is a retry delay: the retry rule judges it. In a loop that
            // never leaves (reconnect-and-serve), it is a reconnect delay.
            // A handler of transaction conflicts only (`WatchError`) waits
            // before running a transaction again, not to poll.
            if let Some(h) = handler_of(cx, *sleep, s)
                && (crate::python::retry_without_backoff::retry_loop_body(cx, s).is_some()
                    || (leaves_when_the_try_succeeds(cx, *sleep, s)
                        && !h
                            .types
                            .iter()
                            .any(|t| crate::python::retry_without_backoff::is_network_error(t)))
                    || (!h.types.is_empty()
                        && h.types
                            .iter()
                            .all(|t| crate::python::retry_without_backoff::is_conflict(t))))
            {
                continue;
            }
            if ends_the_loop_after(cx, *sleep, *cond, body)
                || gives_up(cx, body)
                || inside_deadline_scope(cx, s)
                || waits_for_final_state(cx, s, body)
                || waits_for_readiness(cx, *sleep, s)
            {
                continue;
            }
            let c = cx.call(*sleep).unwrap();
            let Some(Some(arg)) = sleep_arg(c) else {
                continue;
            };
            if !constant(cx, arg) || set_in_loop(cx, arg, body) {
                continue;
            }
            let remote = exprs.iter().any(|&e| asks_remote(cx, e));
            // Or it reconnects: it catches connection errors.
            // (A timeout around a wait on the loop's own queue or event is
            // no connection error.)
            let reconnects = body.iter().any(|&st| {
                matches!(&cx.stmt(st).kind, StmtKind::Try { body: tried, handlers, .. }
                if !waits_only_locally(cx, tried)
                    && handlers.iter().any(|h| h.types.iter().any(|t| {
                        crate::python::retry_without_backoff::is_network_error(t)
                    })))
            });
            // A service on this machine (`http://127.0.0.1:11356/...`): a
            // local sidecar has no fleet of pollers to line up.
            if (!remote && !reconnects)
                || crate::python::retry_without_backoff::reaches_this_host_only(cx, body)
                || crate::python::retry_without_backoff::waits_for_own_child(cx, s)
                || sleeps_instead_of_io(cx, *sleep, s, &exprs)
                || only_reads(cx, &exprs)
                || keepalive_writes(cx, s, &exprs)
                || waits_for_work(cx, body)
            {
                continue;
            }
            out.push(cx.finding(
                &META,
                cx.expr(*sleep).span,
                "this loop polls a remote dependency on a fixed period with no jitter: instances that start together hit the dependency in the same instant on every cycle",
                "add random jitter to the interval (e.g. `interval * random.uniform(0.8, 1.2)`), including the first wait",
            ));
        }
    }
}

/// The loop runs inside a deadline scope (`async with
/// asyncio.timeout_at(deadline): while not self.acquired: ...`): it waits
/// for one thing, and gives up when the time is out.
fn inside_deadline_scope(cx: &FileCx, lp: StmtId) -> bool {
    cx.tree.stmt_ancestors(lp).any(|a| {
        matches!(&cx.stmt(a).kind, StmtKind::With { items, .. }
            if items.iter().any(|it| crate::python::common::is_deadline_scope(cx, it.ctx)))
    })
}

/// `e` is a call to a network dependency: awaited I/O, or a blocking HTTP
/// request.
fn asks_remote(cx: &FileCx, e: ExprId) -> bool {
    cx.call(e).is_some_and(|c| {
        ((cx.is_awaited(e) || is_async_with_ctx(cx, e)) && is_io_call(cx, c))
            || c.target
                .as_deref()
                .is_some_and(|t| t.starts_with("requests.") || t.starts_with("urllib.request."))
    })
}

/// The sleep is in one branch of an `if` of the loop and every network
/// call (every awaited call, when the loop only reconnects) of the loop
/// in the other (`if self.connected: msg = await
/// ws.recv() else: await asyncio.sleep(1)`): a round either talks to the
/// peer or waits for a flag to change, so nothing is asked on a period.
/// (A branch that sleeps and `continue`s has the rest of the loop's body
/// for its `else`.)
fn sleeps_instead_of_io(cx: &FileCx, sleep: ExprId, lp: StmtId, exprs: &[ExprId]) -> bool {
    let block_span = |b: &Block| match (b.first(), b.last()) {
        (Some(&first), Some(&last)) => {
            Some(Span::new(cx.stmt(first).span.start, cx.stmt(last).span.end))
        }
        _ => None,
    };
    let io: Vec<Span> = exprs
        .iter()
        .filter(|&&e| e != sleep && (asks_remote(cx, e) || cx.is_awaited(e)))
        .map(|&e| cx.expr(e).span)
        .collect();
    let Some(at) = cx.tree.enclosing_stmt(sleep) else {
        return false;
    };
    let sleep_span = cx.expr(sleep).span;
    for a in std::iter::once(at).chain(cx.tree.stmt_ancestors(at)) {
        if a == lp {
            break;
        }
        let StmtKind::If { then, orelse, .. } = &cx.stmt(a).kind else {
            continue;
        };
        // `if not self.track: await asyncio.sleep(0.02); continue`: the
        // rest of the loop's body is the `else`, written without one.
        let rest_of_body = || {
            let (StmtKind::While { body, .. } | StmtKind::For { body, .. }) = &cx.stmt(lp).kind
            else {
                return None;
            };
            let i = body.iter().position(|&b| b == a)?;
            block_span(&body[i + 1..].to_vec())
        };
        let orelse_span = if orelse.is_empty()
            && then
                .last()
                .is_some_and(|&l| matches!(cx.stmt(l).kind, StmtKind::Continue))
        {
            rest_of_body()
        } else {
            block_span(orelse)
        };
        let (Some(t), Some(o)) = (block_span(then), orelse_span) else {
            continue;
        };
        let other = if t.contains(sleep_span) { o } else { t };
        return !io.is_empty() && io.iter().all(|&span| other.contains(span));
    }
    false
}

/// A protocol heartbeat: the loop lives in a function named for one
/// (`_heartbeat`, `__heart_task`, `keepalive`, `ping_loop`, `_pulse`) and its awaited calls only
/// write to the connection (`put`, `write`, `send`, `ping`) or push to the
/// server's own clients (`broadcast`, `emit`), reading
/// nothing back. It keeps one already-open connection alive; its phase is
/// that connection's start, so instances do not line up.
fn keepalive_writes(cx: &FileCx, lp: StmtId, exprs: &[ExprId]) -> bool {
    let name = cx.func(cx.tree.stmt_func(lp)).name.to_ascii_lowercase();
    if !["heart", "keepalive", "keep_alive", "ping", "pulse"]
        .iter()
        .any(|w| name.contains(w))
    {
        return false;
    }
    exprs.iter().all(|&e| {
        !cx.is_awaited(e)
            || cx
                .call(e)
                .is_some_and(|c| sleep_arg(c).is_some() || only_writes(&c.name))
    })
}

/// Every I/O the loop awaits reads from a stream it already has (`buf +=
/// await self.reader.read(n)`): it waits for what the peer sends and asks
/// nothing of it, so there is no request for instances to line up on.
fn only_reads(cx: &FileCx, exprs: &[ExprId]) -> bool {
    const READS: &[&str] = &[
        "read",
        "readline",
        "readexactly",
        "readuntil",
        "recv",
        "receive",
    ];
    let read = |c: &Call| READS.contains(&c.name.as_str()) && c.receiver.is_some();
    let awaited = || {
        exprs
            .iter()
            .filter(|&&e| cx.is_awaited(e) || is_async_with_ctx(cx, e))
            .filter_map(|&e| cx.call(e))
    };
    let mut io = awaited().filter(|c| is_io_call(cx, c)).peekable();
    if io.peek().is_some() {
        return io.all(read);
    }
    // `await asyncio.wait_for(self.reader.read(-1), timeout=t)`: the read
    // under its deadline, when nothing else but sleeps is awaited (the
    // loop's other calls are not known to be I/O or not).
    let mut reads = 0;
    let only = awaited().all(|c| {
        if sleep_arg(c).is_some() {
            return true;
        }
        let bounded = (c.target.as_deref() == Some("asyncio.wait_for"))
            .then(|| c.positional(0).and_then(|a| cx.call(cx.model.strip(a))))
            .flatten();
        reads += 1;
        bounded.is_some_and(read)
    });
    only && reads > 0
}

/// A call named for writing to a connection or closing it (`send`,
/// `async_send_command`, `write_frame`, `close`), and for nothing that reads
/// a reply back (`send_and_receive`, `request`).
fn only_writes(name: &str) -> bool {
    // `close_socket`, `CloseSocket`: a project's own way of closing it.
    if crate::python::common::is_close_like(name)
        || name == "wait_for"
        || name.to_ascii_lowercase().starts_with("close")
    {
        return true;
    }
    let words: Vec<&str> = name.split('_').collect();
    let writes = words.iter().any(|w| {
        matches!(
            *w,
            "put"
                | "nowait"
                | "write"
                | "send"
                | "sendall"
                | "ping"
                | "drain"
                // A server pushing to its own clients (`broadcast_event`).
                | "broadcast"
                | "emit"
        )
    });
    let reads = words.iter().any(|w| {
        matches!(
            *w,
            "recv" | "receive" | "read" | "request" | "get" | "fetch" | "query" | "wait"
        )
    });
    writes && !reads
}

/// Each round starts by waiting for work the process hands it (`msg =
/// await self.send_queue.get()`, `await self.wakeup.wait()`), unconditionally
/// (in the loop's body or the `try` that is), or takes it under a test
/// that the queue holds some (`if not self.queue.empty(): data =
/// self.queue.get()`): the loop runs when something arrives, and its
/// sleep spaces out that work (writes to one device), it is not the
/// period of a poll.
pub(crate) fn waits_for_work(cx: &FileCx, body: &Block) -> bool {
    // `queue.get()` by type, or on a receiver named for a queue when the
    // type is unknown (`task = task_queue.get()`, `await
    // self.work_queue.get_next_work()`): the next item, not the failed one.
    fn takes_work(cx: &FileCx, c: &Call) -> bool {
        let by_type = c.target.as_deref().is_some_and(|t| {
            t.ends_with("Queue.get") || t.ends_with("Event.wait") || t.ends_with("Condition.wait")
        });
        let by_name = c.name.starts_with("get") && c.receiver.is_some_and(|r| named_queue(cx, r));
        // `await asyncio.wait_for(queue.get(), timeout=t)` (not of an
        // event's `wait()`: with a timeout, that is a sleep a stop can cut
        // short).
        let bounded = c.target.as_deref() == Some("asyncio.wait_for")
            && c.positional(0)
                .and_then(|a| cx.call(cx.model.strip(a)))
                .is_some_and(|inner| inner.name.starts_with("get") && takes_work(cx, inner));
        by_type || by_name || bounded
    }
    let waits = |e: ExprId| match cx.expr(cx.model.strip(e)).kind {
        ExprKind::Await(inner) => cx
            .call(cx.model.strip(inner))
            .is_some_and(|c| takes_work(cx, c)),
        // A blocking get (a thread's or a process's queue).
        _ => cx
            .call(cx.model.strip(e))
            .is_some_and(|c| c.name == "get" && takes_work(cx, c)),
    };
    // (Also on both sides of an `if`: `if timeout: event = await
    // asyncio.wait_for(queue.get(), timeout) else: event = await
    // queue.get()`.)
    fn any_waits(cx: &FileCx, b: &Block, waits: &dyn Fn(ExprId) -> bool) -> bool {
        b.iter().any(|&s| match &cx.stmt(s).kind {
            StmtKind::Expr(e) => waits(*e),
            StmtKind::Assign { value: Some(v), .. } => waits(*v),
            // `if not self.queue.empty(): data = self.queue.get(); post(data)`:
            // the round does its work only when an item was there, and
            // everything else in it is under that test.
            StmtKind::If { cond, then, orelse }
                if orelse.is_empty() && tests_queue_has_items(cx, *cond) =>
            {
                then.iter().any(|&t| match &cx.stmt(t).kind {
                    StmtKind::Try { body, .. } => any_waits(cx, body, waits),
                    _ => any_waits(cx, &vec![t], waits),
                })
            }
            StmtKind::If { then, orelse, .. } => {
                any_waits(cx, then, waits) && any_waits(cx, orelse, waits)
            }
            _ => false,
        })
    }
    // `not q.empty()`, `q.qsize()`, `q.qsize() > 0` on a queue by name.
    fn tests_queue_has_items(cx: &FileCx, cond: ExprId) -> bool {
        let names_queue =
            |c: &Call| c.args.is_empty() && c.receiver.is_some_and(|r| named_queue(cx, r));
        match &cx.expr(cx.model.strip(cond)).kind {
            ExprKind::Unary {
                op: UnOp::Not,
                operand,
            } => cx
                .call(cx.model.strip(*operand))
                .is_some_and(|c| c.name == "empty" && names_queue(c)),
            ExprKind::Binary {
                op: BinOp::Gt,
                left,
                ..
            } => cx
                .call(cx.model.strip(*left))
                .is_some_and(|c| c.name == "qsize" && names_queue(c)),
            _ => cx
                .call(cx.model.strip(cond))
                .is_some_and(|c| c.name == "qsize" && names_queue(c)),
        }
    }
    body.iter().any(|&s| match &cx.stmt(s).kind {
        StmtKind::Try { body, .. } => any_waits(cx, body, &waits),
        _ => any_waits(cx, &vec![s], &waits),
    })
}

/// A receiver named for a queue (`task_queue`, `self.send_queue`, `q`,
/// `self._in_q`), whatever its type.
fn named_queue(cx: &FileCx, r: ExprId) -> bool {
    cx.model.dotted(r).is_some_and(|d| {
        let last = d.rsplit('.').next().unwrap_or(&d).to_ascii_lowercase();
        last.ends_with("queue") || last == "q" || last.ends_with("_q")
    })
}

/// The loop gives up after a deadline or a number of attempts: an `if`
/// on a deadline, timeout, elapsed time (`time.time() - start > limit`) or
/// attempt count that leaves it
/// (`if time.monotonic() >= deadline: raise TimeoutError(..)`, `if
/// attempts_left == 0: return`, or a count the loop takes down, `left -= 1`
/// then `if left <= 0: return`, or up, `fails += 1` then `if fails >= 10:
/// return`), or a helper that checks the timeout
/// (`self._check_timeout(start, limit)`). A wait for one job of one
/// request, which ends, not a service polling forever.
pub(crate) fn gives_up(cx: &FileCx, body: &Block) -> bool {
    let stmts = unsnarl_model::walk::stmts_in_block(cx.model, body);
    // `retry_time -= 1` in the loop, then `if retry_time <= 0: return`;
    // or `fails += 1`, then `if fails >= 10: return`.
    let counted = |n: &str, op: BinOp| {
        stmts.iter().any(|&st| {
            matches!(&cx.stmt(st).kind, StmtKind::Assign { targets, op: AssignOp::Augmented(o), .. }
                if *o == op && targets.iter().any(|&t| cx.model.name_of(t) == Some(n)))
        })
    };
    let counted_down = |n: &str| counted(n, BinOp::Sub);
    let counted_up = |e: ExprId| {
        matches!(&cx.expr(cx.model.strip(e)).kind, ExprKind::Binary { op: BinOp::Gt | BinOp::GtE, left, .. }
            if cx.model.name_of(*left).is_some_and(|n| counted(n, BinOp::Add)))
    };
    // `time.time() - started > self.max_wait_time`: the time spent so far
    // against a limit.
    let elapsed_over = |e: ExprId| {
        matches!(&cx.expr(cx.model.strip(e)).kind, ExprKind::Binary { op: BinOp::Gt | BinOp::GtE, left, .. }
        if matches!(&cx.expr(cx.model.strip(*left)).kind, ExprKind::Binary { op: BinOp::Sub, left: now, .. }
            if cx.call(cx.model.strip(*now)).is_some_and(|c| {
                cx.effect(c, unsnarl_model::knowledge::Effect::Clock).is_some()
            })))
    };
    let names_bound = |e: ExprId| {
        names_a_bound(cx, e)
            || elapsed_over(e)
            || counted_up(e)
            || matches!(&cx.expr(cx.model.strip(e)).kind, ExprKind::Binary { op: BinOp::Lt | BinOp::LtE | BinOp::Eq, left, right }
                if matches!(cx.model.literal(*right), Some(Lit::Int(0 | 1)))
                    && cx.model.name_of(*left).is_some_and(counted_down))
    };
    stmts.iter().any(|&st| match &cx.stmt(st).kind {
        StmtKind::If { cond, then, .. } => {
            names_bound(*cond)
                && then.last().is_some_and(|&l| match cx.stmt(l).kind {
                    StmtKind::Raise(_) | StmtKind::Return(_) | StmtKind::Break => true,
                    // `sys.exit(1)` once the deadline has passed.
                    StmtKind::Expr(x) => cx
                        .call(cx.model.strip(x))
                        .is_some_and(crate::util::ends_the_process),
                    _ => false,
                })
        }
        StmtKind::Expr(e) => cx.call(cx.model.strip(*e)).is_some_and(|c| {
            let n = c.name.to_ascii_lowercase();
            n.contains("check") && (n.contains("timeout") || n.contains("deadline"))
        }),
        _ => false,
    })
}

/// The loop leaves when what it polls reaches its final state: an `if`
/// that compares something with a status word of success (`if
/// data.get("status") in ("completed", "failed"): break`, `if
/// job["state"] == "running": return`, `if status == RunStatus.SUCCESS:
/// break`), or that it is no longer underway (`if state not in
/// ("submitted", "working"): break`), and then leaves the loop. It waits for one job to finish, and
/// ends with it; it is not a service polling forever.
pub(crate) fn waits_for_final_state(cx: &FileCx, lp: StmtId, body: &Block) -> bool {
    // The words of a job that got where it was going. A loop that leaves
    // only on `"error"` is a service that stops when its dependency fails.
    const FINAL: &[&str] = &[
        "completed",
        "complete",
        "done",
        "finished",
        "success",
        "succeed",
        "succeeded",
        "successful",
        "ready",
        "running",
        "active",
    ];
    // A status string, or an enum member named for one
    // (`RunStatus.SUCCESS`).
    let names_final = |e: ExprId| {
        exprs_under(cx.model, e)
            .into_iter()
            .any(|x| match &cx.expr(x).kind {
                ExprKind::Attr { name, .. } => FINAL.contains(&name.to_ascii_lowercase().as_str()),
                _ => matches!(cx.model.literal(x), Some(Lit::Str(v))
                    if FINAL.contains(&v.to_ascii_lowercase().as_str())),
            })
    };
    // The words of a job still on its way: leaving once the state is none
    // of them (`if state not in ["submitted", "running"]: break`) is
    // leaving at its final state.
    const UNDERWAY: &[&str] = &[
        "pending",
        "queued",
        "submitted",
        "working",
        "running",
        "in_progress",
        "processing",
        "starting",
        "started",
        "created",
        "waiting",
    ];
    // Also through a module-level constant (`PENDING_STATES = ["pending",
    // "queued"]`, `if status not in PENDING_STATES: break`).
    let names_underway = |e: ExprId| {
        let e = crate::python::common::module_constant(cx, e).unwrap_or(e);
        // The word alone or qualified (`"pending-fulfillment"`).
        let underway = |v: &str| {
            let v = v.to_ascii_lowercase();
            UNDERWAY.iter().any(|w| {
                v.strip_prefix(w)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '_', ' ']))
            })
        };
        exprs_under(cx.model, e)
            .into_iter()
            .any(|x| matches!(cx.model.literal(x), Some(Lit::Str(v)) if underway(v)))
    };
    let compares_status = |cond: ExprId| {
        exprs_under(cx.model, cond)
            .into_iter()
            .any(|x| match &cx.expr(x).kind {
                ExprKind::Binary {
                    op: BinOp::Eq | BinOp::In,
                    right,
                    ..
                } => names_final(*right),
                ExprKind::Binary {
                    op: BinOp::NotEq | BinOp::NotIn,
                    right,
                    ..
                } => names_underway(*right),
                _ => false,
            })
    };
    let stmts = unsnarl_model::walk::stmts_in_block(cx.model, body);
    // `content = await resp.text()` ... `if content: break`, `if
    // data.get("jobComplete"): break`: a result the round fetched, there
    // at last.
    let fetched = |n: &str| {
        stmts.iter().any(|&st| {
            matches!(&cx.stmt(st).kind, StmtKind::Assign { targets, value: Some(v), .. }
                if targets.iter().any(|&t| cx.model.name_of(t) == Some(n))
                    && exprs_under(cx.model, *v).into_iter().any(|x| matches!(cx.expr(x).kind, ExprKind::Await(_))))
        })
    };
    let arrived = |cond: ExprId| {
        let cond = cx.model.strip(cond);
        let polled = match cx.call(cond) {
            Some(c) if c.name == "get" => c.receiver,
            Some(_) => None,
            None => Some(cond),
        };
        polled
            .and_then(|p| cx.model.name_of(p))
            .is_some_and(fetched)
    };
    // `if state in ("submitted", "running"): continue` and then a round
    // that always ends the loop: the same test, written the other way.
    let leaves_after = body.last().is_some_and(|&l| match cx.stmt(l).kind {
        StmtKind::Return(_) | StmtKind::Raise(_) => true,
        StmtKind::Break => crate::python::common::enclosing_loop(cx, l) == Some(lp),
        _ => false,
    });
    let still_underway = |cond: ExprId| {
        matches!(&cx.expr(cx.model.strip(cond)).kind,
            ExprKind::Binary { op: BinOp::Eq | BinOp::In, right, .. } if names_underway(*right))
    };
    stmts.iter().any(|&st| match &cx.stmt(st).kind {
        StmtKind::If { cond, then, orelse }
            if leaves_after
                && body.contains(&st)
                && orelse.is_empty()
                && still_underway(*cond)
                && then
                    .last()
                    .is_some_and(|&l| matches!(cx.stmt(l).kind, StmtKind::Continue)) =>
        {
            true
        }
        StmtKind::If { cond, then, .. } => {
            (compares_status(*cond) || arrived(*cond))
                && then.last().is_some_and(|&l| match cx.stmt(l).kind {
                    StmtKind::Return(_) | StmtKind::Raise(_) => true,
                    StmtKind::Break => crate::python::common::enclosing_loop(cx, l) == Some(lp),
                    _ => false,
                })
        }
        _ => false,
    })
}

/// `while status in ("STARTING", "UNKNOWN"):` (or `!=`, `==`, `not in`
/// a status string) where the loop assigns `status` afresh from what it
/// polls (also `while run.status in (..)`, `task.get("status")` or
/// `job["state"]` with `run`, `task`, `job` fetched again each round): it
/// runs until one job leaves a state, and ends with it.
fn polls_until_state_changes(cx: &FileCx, cond: ExprId, body: &Block) -> bool {
    let ExprKind::Binary {
        op: BinOp::In | BinOp::NotIn | BinOp::Eq | BinOp::NotEq,
        left,
        right,
    } = &cx.expr(cx.model.strip(cond)).kind
    else {
        return false;
    };
    // `while run.status in (..)`, `task.get("status")`, `job["state"]`:
    // a field of what the loop re-fetches.
    let left = match &cx.expr(cx.model.strip(*left)).kind {
        ExprKind::Attr { obj, .. } | ExprKind::Index { obj, .. } => *obj,
        ExprKind::Call(c) if c.name == "get" => c.receiver.unwrap_or(*left),
        _ => *left,
    };
    let Some(name) = cx.model.name_of(left) else {
        return false;
    };
    let strings = exprs_under(cx.model, *right)
        .into_iter()
        .any(|x| matches!(cx.model.literal(x), Some(Lit::Str(_))));
    strings
        && stmts_in_block(cx.model, body).into_iter().any(|st| {
            matches!(&cx.stmt(st).kind, StmtKind::Assign { targets, value: Some(_), .. }
                if targets.iter().any(|&t| cx.model.name_of(t) == Some(name)))
        })
}

/// The expression names a deadline, a timeout, elapsed time, an attempt
/// count or what is left of one (`deadline`, `time.monotonic()`,
/// `attempts_left`, `retries`, `remaining`, `budget`).
fn names_a_bound(cx: &FileCx, e: ExprId) -> bool {
    let bound_word = |n: &str| {
        let n = n.to_ascii_lowercase();
        [
            "deadline",
            "timeout",
            "monotonic",
            "elapsed",
            "attempt",
            "retries",
            "tries",
            // The time or tries left (`if remaining < backoff: break`).
            "remaining",
            "budget",
        ]
        .iter()
        .any(|w| n.contains(w))
    };
    exprs_under(cx.model, e)
        .into_iter()
        .any(|x| match &cx.expr(x).kind {
            ExprKind::Name { id, .. } => bound_word(id),
            ExprKind::Attr { name, .. } => bound_word(name),
            ExprKind::Call(c) => bound_word(&c.name),
            _ => false,
        })
}

/// The sleep is on a branch of the loop (an `if`, an `except`) and is
/// followed, in that branch, by a statement that leaves the loop (`break`,
/// `return`, `raise`) or makes its condition false (`self.keep_alive =
/// False` under `while self.keep_alive`): a one-time pause before the loop
/// ends, not a period. A sleep in the loop's own body paces every round.
fn ends_the_loop_after(cx: &FileCx, sleep: ExprId, cond: ExprId, loop_body: &Block) -> bool {
    let Some(st) = cx.tree.enclosing_stmt(sleep) else {
        return false;
    };
    let Some(block) = crate::util::containing_block(cx, st) else {
        return false;
    };
    if std::ptr::eq(block, loop_body) {
        return false;
    }
    let Some(i) = block.iter().position(|&x| x == st) else {
        return false;
    };
    let flag = cx.model.dotted(cond);
    block[i + 1..].iter().any(|&x| match &cx.stmt(x).kind {
        StmtKind::Break | StmtKind::Return(_) | StmtKind::Raise(_) => true,
        StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } => {
            flag.is_some()
                && targets.iter().any(|&t| cx.model.dotted(t) == flag)
                && matches!(cx.model.literal(*v), Some(Lit::Bool(false) | Lit::Null))
        }
        _ => false,
    })
}

/// Every wait of `block` is on an in-process primitive (`await
/// asyncio.wait_for(inbox.get(), 5)` on an `asyncio.Queue`): the async APIs
/// the knowledge lists that do no I/O, also inside `wait_for`/`shield`.
fn waits_only_locally(cx: &FileCx, block: &Block) -> bool {
    fn local(cx: &FileCx, e: ExprId) -> bool {
        let Some(c) = cx.call(cx.model.strip(e)) else {
            return false;
        };
        if matches!(
            c.target.as_deref(),
            Some("asyncio.wait_for" | "asyncio.shield")
        ) {
            return c.positional(0).is_some_and(|a| local(cx, a));
        }
        cx.effect(c, Effect::AsyncApi)
            .is_some_and(|en| en.kind.as_deref() != Some("io"))
    }
    crate::util::awaited_values(cx.model, block)
        .is_some_and(|awaited| !awaited.is_empty() && awaited.iter().all(|&e| local(cx, e)))
}

/// `async with session.get(...) as resp:`.
fn is_async_with_ctx(cx: &FileCx, e: ExprId) -> bool {
    matches!(cx.tree.expr_parent(e), Parent::Stmt(s)
        if matches!(&cx.stmt(s).kind, StmtKind::With { items, is_async: true, .. }
            if items.iter().any(|it| it.ctx == e)))
}

/// The `except` handler (inside `loop_stmt`) that `e` runs in, if any.
fn handler_of<'a>(cx: &FileCx<'a>, e: ExprId, loop_stmt: StmtId) -> Option<&'a Handler> {
    for s in cx.enclosing_stmts(e) {
        if s == loop_stmt {
            return None;
        }
        if let Some(p) = cx.tree.stmt_ancestors(s).next()
            && let StmtKind::Try { handlers, .. } = &cx.stmt(p).kind
            && let Some(h) = handlers.iter().find(|h| h.body.contains(&s))
        {
            return Some(h);
        }
    }
    None
}

/// The `try` whose handler holds the sleep leaves the loop when it
/// succeeds (`try: api.login() except LoginError: time.sleep(180) else:
/// break`): the sleep spaces out attempts at one thing until it works, a
/// retry, not the period of a poll. (Asked only of handlers of errors
/// that are not a network client's: a fixed delay between reconnects to
/// a service that is down stays this rule's.)
fn leaves_when_the_try_succeeds(cx: &FileCx, sleep: ExprId, loop_stmt: StmtId) -> bool {
    let leaves = |b: &Block| {
        b.iter()
            .any(|&x| matches!(cx.stmt(x).kind, StmtKind::Break | StmtKind::Return(_)))
    };
    cx.enclosing_stmts(sleep)
        .into_iter()
        .take_while(|&x| x != loop_stmt)
        .any(|x| {
            cx.tree.stmt_ancestors(x).next().is_some_and(|p| {
                matches!(&cx.stmt(p).kind, StmtKind::Try { body, handlers, orelse, .. }
                    if handlers.iter().any(|h| h.body.contains(&x))
                        && (leaves(body) || leaves(orelse)))
            })
        })
}

/// The sleep waits for a non-blocking socket to have data: it runs in a
/// handler of `BlockingIOError`, or under a test of `EWOULDBLOCK`/`EAGAIN`
/// in the loop. It paces reads on a connection the code already has
/// (waiting for a reply), not the period of a poll.
fn waits_for_readiness(cx: &FileCx, sleep: ExprId, loop_stmt: StmtId) -> bool {
    const NOT_READY: [&str; 3] = ["BlockingIOError", "EWOULDBLOCK", "EAGAIN"];
    let named = |e: ExprId| {
        exprs_under(cx.model, e)
            .into_iter()
            .any(|x| match &cx.expr(x).kind {
                ExprKind::Name { id, .. } => NOT_READY.contains(&id.as_str()),
                ExprKind::Attr { name, .. } => NOT_READY.contains(&name.as_str()),
                _ => false,
            })
    };
    let Some(h) = handler_of(cx, sleep, loop_stmt) else {
        return false;
    };
    if h.types
        .iter()
        .any(|t| NOT_READY.iter().any(|n| t.ends_with(n)))
    {
        return true;
    }
    cx.enclosing_stmts(sleep)
        .into_iter()
        .take_while(|&st| st != loop_stmt)
        .any(|st| matches!(&cx.stmt(st).kind, StmtKind::If { cond, .. } if named(*cond)))
}

/// A name in the delay that the loop itself sets from a computation
/// (`retry = backoff.delay()`, `delay = min(delay * 2, 60)`): the wait
/// changes from round to round, a backoff rather than a period.
fn set_in_loop(cx: &FileCx, arg: ExprId, body: &Block) -> bool {
    // Names and attribute chains (`delay`, `self._backoff`).
    let names: Vec<String> = exprs_under(cx.model, arg)
        .into_iter()
        .filter(|&x| {
            matches!(
                cx.expr(x).kind,
                ExprKind::Name { .. } | ExprKind::Attr { .. }
            )
        })
        .filter_map(|x| cx.model.dotted(x))
        .collect();
    if names.is_empty() {
        return false;
    }
    // A wait the server asked for (`await asyncio.sleep(e.retry_after)` on
    // a 429): its length is the server's, not a fixed period.
    if names.iter().any(|n| {
        let last = n.rsplit('.').next().unwrap_or(n).to_ascii_lowercase();
        last.replace('_', "").contains("retryafter")
    }) {
        return true;
    }
    // Set from a computation, or updated in place (`delay *= 2`,
    // `self._backoff *= 1.5`), or from names the loop updates
    // (`retries += 1; delay = factor * 2 ** (retries - 1)`).
    let assigned = stmts_in_block(cx.model, body);
    let updated: Vec<String> = assigned
        .iter()
        .filter_map(|&st| match &cx.stmt(st).kind {
            StmtKind::Assign { targets, op, .. } if *op != AssignOp::Plain => {
                targets.first().and_then(|&t| cx.model.dotted(t))
            }
            _ => None,
        })
        .collect();
    let uses_updated = |v: ExprId| {
        exprs_under(cx.model, v)
            .into_iter()
            .any(|x| cx.model.dotted(x).is_some_and(|d| updated.contains(&d)))
    };
    assigned.into_iter().any(|st| {
        matches!(&cx.stmt(st).kind, StmtKind::Assign { targets, value, op }
            if targets.iter().any(|&t| cx.model.dotted(t).is_some_and(|n| names.contains(&n)))
                && (*op != AssignOp::Plain
                    || value.is_some_and(|v| !constant(cx, v) || uses_updated(v))))
    })
}

/// Literals, constants and attribute reads (configured intervals).
fn constant(cx: &FileCx, e: ExprId) -> bool {
    exprs_under(cx.model, e).into_iter().all(|x| {
        matches!(
            cx.expr(x).kind,
            ExprKind::Literal(_)
                | ExprKind::Binary { .. }
                | ExprKind::Unary { .. }
                | ExprKind::Name { .. }
                | ExprKind::Attr { .. }
        )
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import asyncio

async def refresh_loop(client, cache):
    while True:
        cache.update(await client.get("/config"))
        await asyncio.sleep(30)  # expect
"#,
        r#"
import asyncio

async def keep_connected(client, handle):
    while True:
        try:
            async for msg in client.subscribe("events"):
                await handle(msg)
        except ConnectionError:
            await asyncio.sleep(5)  # expect
"#,
        r#"
import time
import requests

POLL = 10

def poll_jobs(stop):
    while not stop.is_set():
        jobs = requests.get("https://ci.example/jobs", timeout=5).json()
        handle(jobs)
        time.sleep(POLL)  # expect
"#,
        r#"
import asyncio

async def heartbeat_loop(session, url):
    # Reports to a shared registry: every instance in the same instant.
    while True:
        await asyncio.sleep(30)  # expect
        async with session.get(url) as resp:
            await resp.read()
"#,
        r#"
import asyncio
import logging

log = logging.getLogger(__name__)

async def watch(connection, inbox):
    while True:
        try:
            rows = await asyncio.wait_for(connection.fetch("SELECT id FROM ready"), 5)
            for r in rows:
                inbox.put_nowait(r)
        except asyncio.TimeoutError:
            log.warning("slow poll")
        except Exception:
            log.exception("poll failed")
        await asyncio.sleep(1)  # expect
"#,
        r#"
import asyncio


async def keep_connected(client, handle, settings):
    while True:
        try:
            async for msg in client.subscribe("events"):
                await handle(msg)
        except ConnectionError:
            retry = settings.reconnect_delay
            await asyncio.sleep(retry)  # expect
"#,
        r#"
import asyncio


async def watch_state(client, box_id, on_change):
    while True:
        resp = await client.get(f"/sandboxes/{box_id}")
        on_change(resp.json()["state"])
        if resp.json()["state"] == "Terminated":
            return
        await asyncio.sleep(2)  # expect
"#,
        r#"
import asyncio


class Hub:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader = reader
        self.writer = writer
        self.wakeup = asyncio.Event()

    async def poll_task(self):
        while True:
            if self.wakeup.is_set():
                await self.wakeup.wait()
            self.writer.write(b"STATUS\n")
            await self.writer.drain()
            await self.reader.readline()
            await asyncio.sleep(30)  # expect

    async def keep_alive(self, interval=14):
        while True:
            await asyncio.sleep(interval)  # expect
            await self.send_and_receive("PING")

    async def send_and_receive(self, line):
        self.writer.write(line.encode())
        await self.writer.drain()
        return await self.reader.readline()
"#,
        r#"
import asyncio


class Zone:
    async def _watch(self, session, polling_url, delay=5):
        polls = 0
        while self.running:
            await asyncio.sleep(delay)  # expect
            async with session.get(polling_url) as response:
                self.state = (await response.read()).strip()
            polls += 1
"#,
        r#"
import asyncio

async def watch(client, store):
    while True:
        health = await client.get("/health")
        store.save(health)
        # Stops only when the dependency breaks; polls on a period until then.
        if health.get("status") == "error":
            break
        await asyncio.sleep(30)  # expect
"#,
    ],
    pass: &[
        r#"
import asyncio


async def wait_for_images(session, url):
    while True:
        response = await session.get(url)
        if response.status != 200:
            return None
        content = await response.text()
        if content:
            break
        await asyncio.sleep(1)
    return content
"#,
        r#"
import asyncio


async def fetch_version(session, url):
    fails = 0
    while True:
        if fails >= 10:
            return None
        try:
            async with session.get(url) as response:
                if response.status == 200:
                    return await response.json()
                fails += 1
        except asyncio.TimeoutError:
            fails += 1
        await asyncio.sleep(1)
"#,
        r#"
import time

import requests


class Cube:
    def __init__(self, endpoint, max_wait_time=30, backoff=1):
        self.endpoint = endpoint
        self.max_wait_time = max_wait_time
        self.backoff = backoff

    def query(self, params):
        started = time.time()
        response = requests.get(self.endpoint, params=params, timeout=10)
        while response.json().get("error") == "Continue wait":
            if time.time() - started > self.max_wait_time:
                return {"error": "timed out"}
            time.sleep(self.backoff)
            response = requests.get(self.endpoint, params=params, timeout=10)
        return response.json()
"#,
        r#"
import time

import requests

from .client import RunStatus

def wait_for_run(url):
    while True:
        status = RunStatus(requests.get(url, timeout=10).json()["status"])
        if status == RunStatus.SUCCESS:
            break
        time.sleep(10)
"#,
        r#"
import time

import requests

def wait_deployed(status_url):
    status = "STARTING"
    # Until this one deployment leaves its starting states.
    while status in ["STARTING", "UNKNOWN"]:
        time.sleep(2)
        status = requests.get(status_url, timeout=10).json()["status"]
    return status
"#,
        r#"
import time

import requests

def get_page(url, retry_time=3, retry_interval=5):
    while True:
        try:
            return requests.get(url, timeout=10).text
        except requests.RequestException as e:
            print(e)
            # Three tries, then give up: one job, not a service's poll.
            retry_time -= 1
            if retry_time <= 0:
                return None
            time.sleep(retry_interval)
"#,
        r#"
import asyncio

async def follow(client, execution_id):
    # Waits for the one run the user asked about, and ends with it.
    while True:
        data = await client.get(f"/api/v1/executions/{execution_id}")
        print(data.get("status"))
        if data.get("status") in ("completed", "failed", "cancelled"):
            break
        await asyncio.sleep(2)
"#,
        r#"
import asyncio

async def wait_for_task(client, url, task_id):
    while True:
        await asyncio.sleep(2)
        resp = await client.post(url, json={"method": "tasks/get", "id": task_id})
        state = resp.json()["result"]["status"]["state"]
        if state not in ["submitted", "running", "working"]:
            print(f"finished: {state}")
            break
"#,
        r#"
import asyncio

import websockets

class Server:
    async def __heart_task(self, websocket, clientid):
        while True:
            await asyncio.sleep(self.ping_interval)
            try:
                await websocket.send(self.ping_data)
            except websockets.exceptions.ConnectionClosed:
                await self.close_socket(clientid)
                break
"#,
        r#"
import asyncio


class Client:
    async def request(self, method, url):
        retries = 0
        while True:
            resp = await self._client.request(method, url)
            if resp.status_code in (429, 503) and retries < self.max_retries:
                retries += 1
                sleep_time = self.backoff_factor * (2 ** (retries - 1))
                await asyncio.sleep(sleep_time)
                continue
            return resp
"#,
        r#"
import asyncio


class Client:
    async def message_loop(self):
        while self.should_reconnect:
            try:
                if self.is_connected and self.websocket:
                    message = await asyncio.wait_for(self.websocket.recv(), timeout=30.0)
                    await self.process(message)
                else:
                    # Wait for the reconnect task to bring the socket back.
                    await asyncio.sleep(1)
            except ConnectionError:
                self.is_connected = False
"#,
        r#"
import asyncio

# Waits for the rest of a frame the peer is sending: nothing is requested.
class Client:
    async def _recv(self, length):
        while length - len(self._buf):
            self._buf += await self.reader.read(length - len(self._buf))
            await asyncio.sleep(0.1)
        return self._buf
"#,
        r#"
import asyncio
import logging

import anyio

logger = logging.getLogger(__name__)


class Server:
    # The delay grows after each lost connection.
    async def _reader(self, conn):
        while True:
            try:
                msg = await conn.receive()
                self._backoff = 0.1
                await self._dispatch(msg)
            except (ConnectionResetError, anyio.ClosedResourceError):
                logger.error("Disconnected")
                await anyio.sleep(self._backoff)
                if self._backoff < 10:
                    self._backoff *= 1.5
                conn = await self._connect()

class RateLimited(Exception):
    retry_after = 1.0

# The server says how long to wait.
async def poll(session, url, handle):
    while True:
        try:
            handle(await session.get(url))
        except RateLimited as e:
            await asyncio.sleep(e.retry_after)
"#,
        r#"
import socket
import time


class Remote:
    def _read_response(self):
        chunks = []
        while True:
            try:
                data = self.socket.recv(4096)
                if not data or data.endswith(b"\n"):
                    break
                chunks.append(data)
            except socket.error as e:
                if e.errno == socket.errno.EWOULDBLOCK:
                    time.sleep(1)
                    continue
                raise
        return b"".join(chunks)

    def _drain(self, sock):
        while True:
            try:
                sock.recv(4096)
            except BlockingIOError:
                time.sleep(0.5)
            except ConnectionError:
                return
"#,
        r#"
import asyncio


class Zone:
    async def _post_and_await(self, session, url, polling_url, delay=5, max_polls=8):
        await session.post(url)
        attempts = max_polls
        while attempts:
            await asyncio.sleep(delay)
            async with session.get(polling_url) as response:
                payload = (await response.read()).strip()
            if payload != b"null":
                return True
            attempts -= 1
        return False
"#,
        r#"
import asyncio
import time


class Bus:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader = reader
        self.writer = writer
        self.send_queue = asyncio.Queue()

    async def _write_task(self):
        while True:
            try:
                msg = await self.send_queue.get()
                self.writer.write(msg.encode())
                await self.writer.drain()
                await asyncio.sleep(0.1)
            except ConnectionError:
                await self.reconnect()
                return

    async def keep_alive(self, interval=14):
        self._last_recv_at = time.monotonic()
        while True:
            await asyncio.sleep(interval)
            if time.monotonic() - self._last_recv_at > 2 * interval:
                await self.close()
                continue
            await self.async_send_command(["HANDSHAKE"])

    async def async_send_command(self, commands):
        try:
            self.writer.write(repr(commands).encode())
            await self.writer.drain()
        except ConnectionError:
            await self.close()

    async def close(self):
        self.writer.close()
        await self.writer.wait_closed()
"#,
        r#"
import time

import requests


def wait_until_healthy(url, limit=30.0):
    spent = 0.0
    while spent < limit:
        try:
            if requests.get(url, timeout=2).ok:
                return True
        except requests.ConnectionError:
            pass
        time.sleep(0.5)
        spent += 0.5
    return False
"#,
        r#"
import asyncio


class Session:
    def __init__(self, stream):
        self.stream = stream
        self.open = True

    async def run(self):
        while self.open:
            frame = await self.stream.read_frame()
            try:
                await self.stream.reply(frame)
            except ConnectionResetError:
                await asyncio.sleep(0.05)
                self.open = False
"#,
        r#"
import asyncio
import random

async def refresh_loop(client, cache):
    while True:
        cache.update(await client.get("/config"))
        await asyncio.sleep(30 + random.uniform(-3, 3))

async def reconnect_retry(connect):
    while True:
        try:
            conn = await connect()
            break
        except ConnectionError:
            await asyncio.sleep(5)
    return conn

async def local_tick(state):
    while True:
        state.tick()
        await asyncio.sleep(1)

async def wait_ready(flag):
    while not flag.ready:
        await asyncio.sleep(0.1)

import time
import redis

def transaction(client, func, *watches, watch_delay=0.1):
    with client.pipeline() as pipe:
        while True:
            try:
                pipe.watch(*watches)
                value = func(pipe)
                pipe.execute()
                return value
            except redis.WatchError:
                time.sleep(watch_delay)
                continue

async def atransaction(client, func, *watches, watch_delay=0.1):
    async with client.pipeline() as pipe:
        while True:
            try:
                await pipe.watch(*watches)
                value = await func(pipe)
                await pipe.execute()
                return value
            except redis.WatchError:
                await asyncio.sleep(watch_delay)
                continue
"#,
        r#"
import asyncio

HEARTBEAT = b"\x08\x00\x00\x00\x00\x00\x00\xce"


class Connection:
    def __init__(self, heartbeat_timeout):
        self.heartbeat_timeout = heartbeat_timeout
        self.write_queue = asyncio.Queue(maxsize=64)
        self.closed = False

    async def _heartbeat(self):
        # Keeps this connection alive; its phase is the connection's start.
        interval = max(1, self.heartbeat_timeout // 2)
        while not self.closed:
            await asyncio.sleep(interval)
            try:
                await asyncio.wait_for(self.write_queue.put(HEARTBEAT), timeout=interval)
            except asyncio.TimeoutError:
                return
"#,
        r#"
import asyncio
import logging

log = logging.getLogger(__name__)

async def listen(connection, channel):
    inbox = asyncio.Queue()

    def on_notify(conn, pid, chan, payload):
        inbox.put_nowait(payload)

    await connection.add_listener(channel, on_notify)
    while True:
        try:
            payload = await asyncio.wait_for(inbox.get(), timeout=5.0)
            yield payload
        except asyncio.TimeoutError:
            if connection.is_closed():
                break
        except Exception:
            log.exception("listener failed")
            await asyncio.sleep(1)
"#,
        r#"
import asyncio
import random


class ExponentialBackoff:
    def __init__(self, base=1):
        self._exp = 0
        self._base = base

    def delay(self):
        self._exp = min(self._exp + 1, 10)
        return random.uniform(0, self._base * 2 ** self._exp)


async def keep_connected(client, handle):
    backoff = ExponentialBackoff()
    while True:
        try:
            async for msg in client.subscribe("events"):
                await handle(msg)
        except ConnectionError:
            retry = backoff.delay()
            await asyncio.sleep(retry)
"#,
        r#"
import asyncio
import time


async def wait_running(client, box_id, ready_timeout):
    deadline = time.monotonic() + ready_timeout
    while True:
        resp = await client.get(f"/sandboxes/{box_id}")
        if resp.json()["state"] == "Running":
            return
        if time.monotonic() >= deadline:
            raise TimeoutError(box_id)
        await asyncio.sleep(2)


class Images:
    async def generate(self, url):
        status = ""
        attempts_left = 120
        while status != "succeeded":
            attempts_left -= 1
            if attempts_left == 0:
                return None
            await asyncio.sleep(1)
            status = (await self.session.get(url)).json()["status"]

    async def poll(self, task_url, start, limit):
        while True:
            self._check_timeout(start_time=start, timeout_secs=limit)
            response = await self.client.get(task_url)
            if response.json()["status"] == "succeeded":
                return response
            await asyncio.sleep(2)
"#,
        r#"
import asyncio


class Session:
    def __init__(self, websocket, interval):
        self._websocket = websocket
        self._interval = interval

    async def _pulse(self):
        while not self._websocket.closed:
            try:
                await asyncio.wait_for(self.send_alive(), timeout=5)
            except asyncio.TimeoutError:
                break
            await asyncio.sleep(self._interval - 3)
"#,
        r#"
import asyncio

import httpx


async def crawl(url, max_pages, delay):
    visited = set()
    todo = [url]
    pages = []
    page_count = 0
    async with httpx.AsyncClient(timeout=30.0) as client:
        while todo and page_count < max_pages:
            current = todo.pop(0)
            if current in visited:
                continue
            visited.add(current)
            await asyncio.sleep(0.5)
            response = await client.get(current)
            pages.append(response.text)
            todo.extend(links_of(response.text))
            page_count += 1
    return pages
"#,
        r#"
import time

import requests


class PositionSync:
    def __init__(self, accounts, interval):
        self.accounts = accounts
        self.interval = interval

    def run(self):
        while True:
            for acc in self.accounts:
                url = f"http://127.0.0.1:11356/api/positions?acc={acc}"
                resp = requests.get(url, timeout=5)
                self.store(acc, resp.json())
            time.sleep(self.interval)
"#,
        r#"
import asyncio


class AdvisoryLock:
    def __init__(self, session, lock_id):
        self.session = session
        self.lock_id = lock_id
        self.acquired = False

    async def acquire(self, deadline):
        async with asyncio.timeout_at(deadline):
            while not self.acquired:
                cursor = await self.session.connection.execute(
                    "SELECT pg_try_advisory_lock(%s) AS acquired", (self.lock_id,)
                )
                row = await cursor.fetchone()
                self.acquired = row["acquired"]
                if not self.acquired:
                    await asyncio.sleep(0.05)
"#,
        r#"
import asyncio
import time


class EventStream:
    def __init__(self, interval):
        self.interval = interval
        self.connections = {}
        self.running = True

    async def broadcast_event(self, event):
        for info in list(self.connections.values()):
            await info["queue"].put(event)

    async def _heartbeat_loop(self):
        while self.running:
            await asyncio.sleep(self.interval)
            now = time.time()
            for info in self.connections.values():
                info["last_heartbeat"] = now
            await self.broadcast_event({"event": "heartbeat", "at": now})
"#,
        r#"
import asyncio


class Connection:
    def __init__(self, reader, timeout=1):
        self.reader = reader
        self.timeout = timeout

    async def receive(self):
        while True:
            try:
                return await asyncio.wait_for(self.reader.read(-1), timeout=self.timeout)
            except asyncio.TimeoutError:
                await asyncio.sleep(1)
"#,
        r#"
# Retries until the time budget is spent.
import asyncio


class Fetcher:
    async def offsets_by_times(self, timestamps, timeout_ms):
        loop = asyncio.get_running_loop()
        start = loop.time()
        remaining = timeout_ms / 1000
        while True:
            try:
                return await asyncio.wait_for(self._client.send(timestamps), remaining)
            except asyncio.TimeoutError:
                break
            except ConnectionError:
                remaining = max(0, remaining - (loop.time() - start))
                if remaining < 0.1:
                    break
                await asyncio.sleep(0.1)
        raise TimeoutError("no offsets")
"#,
        r#"
# Waits for a track to be attached; the rest of the loop sends frames.
import asyncio


class Sender:
    async def run(self, session, url):
        while True:
            if not self.track:
                await asyncio.sleep(0.02)
                continue
            frame = await self.track.recv()
            async with session.post(url, data=frame) as resp:
                await resp.read()
"#,
        r#"
# The only sleep spaces out logins until one works: a retry, not a poll.
import time

import requests


class LoginError(Exception):
    pass


def worker(api, log):
    while True:
        term = api.next_term()
        try:
            requests.get(f"https://example.org/search?q={term}", timeout=10)
        except requests.HTTPError:
            while True:
                try:
                    api.login()
                except LoginError:
                    log.info("login failed, retry in 3 minutes")
                    time.sleep(180)
                else:
                    break
"#,
        r#"
import time

import boto3
from botocore.client import ClientError

PENDING_STATES = ["pending-evaluation", "pending-fulfillment"]

class SpotWorker:
    def __init__(self):
        self.ec2 = boto3.resource("ec2")

    def wait_for_request(self, request_id, interval=5):
        # Waits for one request to leave its pending states, and ends with it.
        while True:
            try:
                requests = self.ec2.meta.client.describe_spot_instance_requests(
                    SpotInstanceRequestIds=[request_id]
                )
            except ClientError as e:
                if "NotFound" in str(e):
                    requests = None
                else:
                    raise
            if requests is not None:
                status = requests["SpotInstanceRequests"][0]["Status"]["Code"]
                if status not in PENDING_STATES:
                    break
            time.sleep(interval)
        return status
"#,
        r#"
import asyncio

import httpx

async def wait_for_image(task_id):
    async with httpx.AsyncClient(timeout=30) as client:
        while True:
            resp = await client.get(f"https://api.example.com/v1/tasks/{task_id}")
            data = resp.json()
            if data["task_status"] == "SUCCEED":
                return data["output_images"]
            elif data["task_status"] == "FAILED":
                raise RuntimeError("generation failed")
            await asyncio.sleep(5)
"#,
        r#"
import asyncio

import aiohttp


class Sandbox:
    async def start(self, session: aiohttp.ClientSession):
        self.proc = await asyncio.create_subprocess_exec("gateway", "--port", str(self.port))
        while True:
            try:
                async with session.get(self.status_url) as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientConnectorError:
                pass
            await asyncio.sleep(1)
"#,
        r#"
import asyncio


async def wait_for_run(client, thread_id, run):
    # Ends when this one run leaves its pending states.
    while run.status in ["queued", "in_progress"]:
        await asyncio.sleep(1)
        run = await client.runs.get(thread_id=thread_id, run_id=run.id)
    return run
"#,
        r#"
import asyncio


async def send_and_wait(client, url, first, poll_interval=1.0):
    task = first
    # Ends when this one task leaves its pending states.
    while task.get("status") in ("pending", "running"):
        await asyncio.sleep(poll_interval)
        resp = await client.get(f"{url}/tasks/{task['id']}")
        task = resp.json()
    return task
"#,
        r#"
import time

import requests


class Alerter:
    def __init__(self, queue, url):
        self.queue = queue
        self.url = url
        self.running = True

    def run(self):
        # Sends only what the process queued; the period spaces the sends.
        while self.running or not self.queue.empty():
            if not self.queue.empty():
                data = self.queue.get()
                requests.post(self.url, data, timeout=10)
            time.sleep(1)
"#,
        r#"
import asyncio


async def poll_task(client, url, task_id):
    while True:
        await asyncio.sleep(2)
        resp = await client.post(url, json={"method": "tasks/get", "params": {"id": task_id}})
        if resp.status_code != 200:
            return None
        state = resp.json()["result"]["status"]["state"]
        if state in ("submitted", "running", "working"):
            continue
        print(f"task finished: {state}")
        return resp.json()
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(PeriodicWithoutJitter);
}
