//! PY024: unbounded network waits in `finally` or cancellation handlers.

use crate::context::FileCx;
use crate::python::common::{is_io_call, is_none, under_deadline};
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::{Visitor, walk_block};
use unsnarl_model::*;

pub struct AwaitInCleanup;

pub static META: RuleMeta = RuleMeta {
    id: "PY024",
    name: "unbounded-await-in-cleanup",
    category: Category::AwaitInCleanup,
    severity: Severity::Medium,
    languages: &[Language::Python],
    summary: "A `finally` block or a handler that catches cancellation awaits network or disk I/O with no timeout.",
    docs: r#"
In an `async def`, an `await` of I/O (HTTP and database calls, streams,
connections, or a coroutine of the project that does such I/O) inside a
`finally:` block or inside `except asyncio.CancelledError`/`except
BaseException`/bare `except:`, with no `asyncio.timeout`/`wait_for`/
`shield` bounding it. Closing calls (`close`, `aclose`, `wait_closed`,
`release`) are not reported, nor a `put` or `get` on a queue (typed as
one, or named for one: `self.events_queue.put(DONE)`) or a `send` or
`receive` on an end of an in-process memory channel (`self._send, rx =
anyio.create_memory_object_stream(100)`), an in-process
hand-off rather than I/O, nor a request that passes its own `timeout=`
(anything but `None`: the call's value overrides its client's), nor one
on a client the function builds with a limit on every request (`async
with httpx.AsyncClient(timeout=90) as client:`, httpx's own 5-second
default when `timeout=` is left out, or an `aiohttp.ClientSession` given
a `timeout=`). Neither
is the cleanup of a `try` whose body
(and `else`, and handlers, for a `finally`; the body alone, for a handler) never suspends (`try:
target(token) finally: await self.signal(token)`): cancellation only
lands where a task suspends, so that cleanup runs on the body's own
errors or its success, not on a cancellation. Nor is an await in a
`finally` under an `if` on a flag that the `try`'s `except
CancelledError` sets the other way (`cancelled = True` there, then
`finally: if not cancelled: await notify()`): it never runs during a
cancellation. Nor is a wait for a child the cleanup has just killed
(`proc.kill()`, or SIGKILL sent to it or to its pid,
`os.killpg(proc.pid, signal.SIGKILL)`, also by a function of the module
handed the process, or its pid and SIGKILL, `_signal_group(proc.pid,
signal.SIGKILL)`, then `await proc.wait()`): a
killed process cannot ignore the signal, so the wait only reaps it
(after `terminate()` it stays reported: SIGTERM can be ignored), nor a
read of a child's `stdout` or `stderr` after the cleanup has awaited its
`wait()`, or under an `if` that finds its exit status set (`rc =
proc.returncode` ... `if rc and rc != 0:`): the child is gone and the
pipe is at its end.

## Why

Cleanup runs while the task is being cancelled: during shutdown, a
timeout, or a task group tearing down. asyncio gives it one free pass
through the cancellation, so a slow or hung peer in cleanup delays the
shutdown without bound (a deploy waits for it, then gets killed), and if
the await is cancelled again the cleanup is cut in the middle.

## Example

```python
import asyncio

async def process(job, client):
    try:
        await job.run()
    finally:
        await client.post("/jobs/release", json={"id": job.id})
```

## Fix

Give the cleanup its own short budget (and shield it if it must finish).

```python
import asyncio

async def process(job, client):
    try:
        await job.run()
    finally:
        async with asyncio.timeout(2):
            await client.post("/jobs/release", json={"id": job.id})
```
"#,
    examples: &EXAMPLES,
};

const CANCEL_CATCHERS: &[&str] = &[
    "asyncio.CancelledError",
    "asyncio.exceptions.CancelledError",
    "CancelledError",
    "BaseException",
    "builtins.BaseException",
    "trio.Cancelled",
];

impl Rule for AwaitInCleanup {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for fid in cx.model.function_ids() {
            let func = cx.func(fid);
            if !func.is_async || func.is_test {
                continue;
            }
            for (block, where_, t) in cleanups(cx, fid) {
                for e in unsnarl_model::walk::exprs_in_block(cx.model, block) {
                    let ExprKind::Await(inner) = cx.expr(e).kind else {
                        continue;
                    };
                    let inner = cx.model.strip(inner);
                    let Some(c) = cx.call(inner) else { continue };
                    // A request's own `timeout=` bounds it, whatever its
                    // client was built with (httpx and aiohttp both let
                    // the call's value win).
                    if !is_io_call(cx, c)
                        || helper_bounded(cx, c)
                        || under_deadline(cx, e, true)
                        || c.kwarg("timeout").is_some_and(|t| !is_none(cx, t))
                        || on_client_with_timeout(cx, fid, c)
                        || reaps_killed_process(cx, block, e, c)
                        || drains_pipe_of_reaped_child(cx, block, e, c)
                        || skipped_when_cancelled(cx, t, block, e)
                    {
                        continue;
                    }
                    out.push(cx.finding(
                        &META,
                        cx.expr(e).span,
                        format!(
                            "`{}` waits on I/O {where_} with no deadline: this code runs during cancellation and shutdown, so a slow or hung peer delays them without bound",
                            cx.snippet(cx.expr(e).span)
                        ),
                        "bound the cleanup: `async with asyncio.timeout(...)` (shielded with `asyncio.shield` if it must complete), or hand it to an owner that drains it at shutdown",
                    ));
                }
            }
        }
    }
}

/// The request is made on a client the function (or, for a field of
/// `self`, its class) builds with a limit on every request: `async with httpx.AsyncClient(timeout=90) as client:`
/// (httpx also limits each request to 5 seconds when `timeout=` is left
/// out), or `aiohttp.ClientSession(timeout=ClientTimeout(total=30))`;
/// not one built with `timeout=None`.
fn on_client_with_timeout(cx: &FileCx, f: FuncId, c: &Call) -> bool {
    let bounded = |built: ExprId| {
        cx.call(cx.model.strip(built))
            .is_some_and(|k| match k.target.as_deref() {
                Some("httpx.AsyncClient" | "httpx.Client") => {
                    k.kwarg("timeout").is_none_or(|t| !is_none(cx, t))
                }
                Some("aiohttp.ClientSession") => {
                    k.kwarg("timeout").is_some_and(|t| !is_none(cx, t))
                }
                _ => false,
            })
    };
    let Some(recv) = c.receiver.map(|r| cx.model.strip(r)) else {
        return false;
    };
    // `self._http.delete(..)` where every method of the class that sets
    // `self._http` builds it bounded (`self._http = httpx.AsyncClient(
    // timeout=httpx.Timeout(config.timeout))` in `__init__`).
    if let Some(field) = cx.model.dotted(recv).filter(|d| {
        d.strip_prefix("self.")
            .is_some_and(|rest| !rest.contains('.'))
    }) {
        let Some(class) = cx.func(f).class.as_deref() else {
            return false;
        };
        return crate::util::every_assigned_value(
            cx.model,
            |t| {
                cx.model.dotted(t).as_deref() == Some(field.as_str())
                    && cx.func(cx.func_of(t)).class.as_deref() == Some(class)
            },
            bounded,
        );
    }
    let Some(name) = cx.model.name_of(recv) else {
        return false;
    };
    let mut bindings = 0;
    let mut all_bounded = true;
    for s in unsnarl_model::walk::stmts_in_block(cx.model, &cx.func(f).body) {
        match &cx.stmt(s).kind {
            StmtKind::With { items, .. } => {
                for it in items {
                    if it.target.and_then(|t| cx.model.name_of(t)) == Some(name) {
                        bindings += 1;
                        all_bounded &= bounded(it.ctx);
                    }
                }
            }
            StmtKind::Assign { targets, value, .. }
                if targets.iter().any(|&t| cx.model.name_of(t) == Some(name)) =>
            {
                bindings += 1;
                all_bounded &= value.is_some_and(bounded);
            }
            _ => {}
        }
    }
    bindings > 0 && all_bounded
}

/// A coroutine of this file whose every awaited I/O is bounded: under a
/// deadline, on a client it builds with a limit on every request (`async
/// with httpx.AsyncClient(timeout=10) as client:`), or the reaping of a
/// process it has just killed (`terminate();
/// await wait_for(proc.wait(), 5)`, and on timeout `kill(); await
/// proc.wait()`). Awaiting it in cleanup is as bounded as its own awaits.
fn helper_bounded(cx: &FileCx, c: &Call) -> bool {
    let Some(f) = c
        .target
        .as_deref()
        .and_then(|t| cx.local_functions(t).next())
    else {
        return false;
    };
    let body = &cx.func(f).body;
    cx.func(f).is_async
        && unsnarl_model::walk::exprs_in_block(cx.model, body)
            .into_iter()
            .all(|e| {
                let ExprKind::Await(inner) = cx.expr(e).kind else {
                    return true;
                };
                let Some(ic) = cx.call(cx.model.strip(inner)) else {
                    return true;
                };
                // A retry that calls the helper itself again (`except:
                // return await self.fetch(retries + 1)`) waits as long as
                // each of its attempts.
                cx.func_of(e) != f
                    || ic.target.is_some() && ic.target == c.target
                    || !is_io_call(cx, ic)
                    || under_deadline(cx, e, false)
                    || ic.kwarg("timeout").is_some_and(|t| !is_none(cx, t))
                    || on_client_with_timeout(cx, f, ic)
                    || reaps_killed_process(cx, body, e, ic)
            })
}

/// `proc.wait()` / `proc.communicate()` after `proc.kill()` (or a SIGKILL
/// sent to it, also by pid: `os.killpg(proc.pid, signal.SIGKILL)`, or
/// through a helper of the file handed the pid and SIGKILL) earlier in the same cleanup block, nested or not (`with
/// CancelScope(shield=True): proc.kill(); await proc.wait()`): a killed
/// process cannot ignore the signal, so the wait ends as soon as the kernel
/// reaps it, and a timeout would only risk leaving a zombie.
/// (`terminate()` can be ignored: a wait after it stays reported.)
fn reaps_killed_process(cx: &FileCx, block: &Block, e: ExprId, c: &Call) -> bool {
    let Some(proc) = c
        .receiver
        .filter(|_| matches!(c.name.as_str(), "wait" | "communicate"))
    else {
        return false;
    };
    let proc = cx.source(cx.expr(proc).span);
    let at = cx.expr(e).span.start;
    let before: Vec<&Call> = unsnarl_model::walk::exprs_in_block(cx.model, block)
        .into_iter()
        .filter(|&k| cx.expr(k).span.end <= at)
        .filter_map(|k| cx.call(k))
        .collect();
    before.iter().any(|k| kills(cx, k, proc))
        // `_kill_process_tree(proc)`: a function of the file that kills
        // the parameter it is handed.
        || before.iter().any(|k| {
            let Some(g) = cx.callee_in_file(k) else {
                return false;
            };
            let Some(param) = k
                .args
                .iter()
                .position(|a| a.name.is_none() && cx.source(cx.expr(a.value).span) == proc)
                .and_then(|i| cx.param_receiving(g, k, i))
            else {
                return false;
            };
            cx.body_calls(g)
                .filter_map(|x| cx.call(x))
                .any(|x| kills(cx, x, param))
        })
}

/// `await proc.stderr.read()` after `await proc.wait()` (also under
/// `wait_for`) earlier in the same cleanup block: the child has exited and its end of the pipe is
/// closed, so the read returns what is buffered and then end of file.
fn drains_pipe_of_reaped_child(cx: &FileCx, block: &Block, e: ExprId, c: &Call) -> bool {
    if c.name != "read" {
        return false;
    }
    let Some(pipe) = c.receiver else {
        return false;
    };
    let ExprKind::Attr { obj, name, .. } = &cx.expr(cx.model.strip(pipe)).kind else {
        return false;
    };
    if !matches!(name.as_str(), "stdout" | "stderr") {
        return false;
    }
    let proc = cx.source(cx.expr(*obj).span);
    let at = cx.expr(e).span.start;
    exited_per_returncode(cx, e, proc)
        || unsnarl_model::walk::exprs_in_block(cx.model, block)
            .into_iter()
            .filter(|&k| cx.expr(k).span.end <= at)
            .any(|k| {
                cx.call(k).is_some_and(|wc| {
                    wc.name == "wait"
                        && wc
                            .receiver
                            .is_some_and(|r| cx.source(cx.expr(r).span) == proc)
                }) && cx
                    .tree
                    .expr_ancestors(k)
                    .any(|a| matches!(cx.expr(a).kind, ExprKind::Await(_)))
            })
}

/// The read runs only under an `if` that finds the child's exit status
/// set and non-zero (`rc = proc.returncode` ... `if rc and rc != 0:`, `if
/// proc.returncode is not None:`): asyncio sets it once the child has
/// exited, as after `wait()`.
fn exited_per_returncode(cx: &FileCx, e: ExprId, proc: &str) -> bool {
    let f = cx.func_of(e);
    let status = format!("{proc}.returncode");
    let is_status = |x: ExprId| {
        cx.model.dotted(x).is_some_and(|d| d == status)
            || cx.model.name_of(cx.model.strip(x)).is_some_and(|n| {
                let mut vals = crate::python::common::values_bound_to(cx, f, n);
                vals.next()
                    .is_some_and(|v| v.and_then(|v| cx.model.dotted(v)).as_deref() == Some(&status))
                    && vals.next().is_none()
            })
    };
    // `rc` (None is false), `rc is not None`, `rc > 0`; not `rc != 0`,
    // which holds for None too.
    let set = |c: ExprId| {
        let c = cx.model.strip(c);
        is_status(c)
            || matches!(&cx.expr(c).kind, ExprKind::Binary { op: BinOp::IsNot, left, right }
                if is_status(*left) && matches!(cx.model.literal(*right), Some(Lit::Null)))
            || matches!(&cx.expr(c).kind, ExprKind::Binary { op: BinOp::Gt | BinOp::Lt, left, right }
                if is_status(*left) && cx.model.literal(*right).is_some())
    };
    let at = cx.expr(e).span;
    let Some(s) = cx.tree.enclosing_stmt(e) else {
        return false;
    };
    cx.tree.stmt_ancestors(s).any(|a| {
        matches!(&cx.stmt(a).kind, StmtKind::If { cond, then, .. }
        if crate::util::conjuncts(cx.model, *cond).into_iter().any(set)
            && then.iter().any(|&t| {
                let ts = cx.stmt(t).span;
                ts.start <= at.start && at.end <= ts.end
            }))
    })
}

/// `k` kills process `proc` (as written): `proc.kill()`, a SIGKILL sent to
/// it or to its pid.
fn kills(cx: &FileCx, k: &Call, proc: &str) -> bool {
    let on_proc = k
        .receiver
        .is_some_and(|r| cx.source(cx.expr(r).span) == proc);
    let sigkill = || {
        k.args
            .iter()
            .any(|a| cx.source(cx.expr(a.value).span).ends_with("SIGKILL"))
    };
    // `os.kill(proc.pid, signal.SIGKILL)`, `os.killpg(proc.pid,
    // SIGKILL)`, `os.killpg(os.getpgid(proc.pid), SIGKILL)`, or a helper
    // handed the pid and SIGKILL (`_signal_group(proc.pid, signal.SIGKILL)`).
    let by_pid = || {
        (matches!(k.target.as_deref(), Some("os.kill" | "os.killpg"))
            || cx.callee_in_file(k).is_some())
            && k.args.first().is_some_and(|a| {
                cx.source(cx.expr(a.value).span)
                    .contains(&format!("{proc}.pid"))
            })
            && sigkill()
    };
    (on_proc && (k.name == "kill" || (k.name == "send_signal" && sigkill()))) || by_pid()
}

/// The `try` statements of a function.
struct Tries(Vec<StmtId>);

impl Visitor for Tries {
    fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
        if matches!(m.stmt(id).kind, StmtKind::Try { .. }) {
            self.0.push(id);
        }
        true
    }
}

/// The await sits, in the `finally` of `t`, under an `if` on a flag that
/// the `try`'s cancellation handler sets the other way (`except
/// CancelledError: cancelled = True` ... `finally: if not cancelled: await
/// send(FINISH)`): the I/O runs after success or an error, never while
/// the task is being cancelled.
fn skipped_when_cancelled(cx: &FileCx, t: StmtId, fin: &Block, e: ExprId) -> bool {
    let StmtKind::Try {
        handlers,
        finally: Some(finally),
        ..
    } = &cx.stmt(t).kind
    else {
        return false;
    };
    if !std::ptr::eq(finally, fin) {
        return false;
    }
    // (flag, the value under which the guarded cleanup runs)
    let guard = |cond: ExprId| -> Option<(&str, bool)> {
        let cond = cx.model.strip(cond);
        match &cx.expr(cond).kind {
            ExprKind::Unary {
                op: UnOp::Not,
                operand,
            } => cx.model.name_of(*operand).map(|n| (n, false)),
            _ => cx.model.name_of(cond).map(|n| (n, true)),
        }
    };
    let set_on_cancel = |flag: &str, value: bool| {
        handlers.iter().any(|h| {
            h.types.iter().any(|t| t.ends_with("CancelledError"))
                && h.body.iter().any(|&st| {
                    matches!(&cx.stmt(st).kind, StmtKind::Assign { targets, value: Some(v), .. }
                        if targets.iter().any(|&x| cx.model.name_of(x) == Some(flag))
                            && matches!(cx.model.literal(*v), Some(Lit::Bool(b)) if *b == value))
                })
        })
    };
    cx.enclosing_stmts(e).windows(2).any(|w| {
        matches!(&cx.stmt(w[1]).kind, StmtKind::If { cond, then, .. }
            if fin.contains(&w[1])
                && then.contains(&w[0])
                && guard(*cond).is_some_and(|(flag, runs)| set_on_cancel(flag, !runs)))
    })
}

/// `finally` blocks and cancellation handlers of a function, each with
/// its `try`.
fn cleanups<'a>(cx: &FileCx<'a>, f: FuncId) -> Vec<(&'a Block, &'static str, StmtId)> {
    let mut v = Tries(Vec::new());
    walk_block(cx.model, &cx.func(f).body, &mut v);
    let mut out = Vec::new();
    for t in v.0 {
        let StmtKind::Try {
            body,
            handlers,
            orelse,
            finally,
        } = &cx.model.stmt(t).kind
        else {
            continue;
        };
        // Cancellation arrives only where the task suspends: a `try` whose
        // body never does (`try: target(token) finally: await
        // self.signal(token)`) reaches its handlers and `finally` on its
        // own errors or on success, never on a cancellation.
        let suspends = |b: &Block| !crate::util::awaits_in_block(cx.model, b).is_empty();
        if !suspends(body) && !suspends(orelse) && !handlers.iter().any(|h| suspends(&h.body)) {
            continue;
        }
        // A handler runs on the body's errors: when the body never
        // suspends, none of them is a cancellation (`try: r =
        // get_data(p) except: await bot.send(..)`).
        for h in handlers.iter().filter(|_| suspends(body)) {
            if h.types.is_empty()
                || h.types
                    .iter()
                    .any(|t| CANCEL_CATCHERS.contains(&t.as_str()))
            {
                out.push((&h.body, "in a handler that catches cancellation", t));
            }
        }
        if let Some(fin) = finally {
            out.push((fin, "in a `finally` block", t));
        }
    }
    out
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import asyncio
import aiohttp

async def process(job, client):
    try:
        await job.run()
    finally:
        await client.post("/jobs/release", json={"id": job.id})  # expect

async def release(job, client):
    try:
        await job.run()
    finally:
        # `timeout=None` turns the request's own limit off.
        await client.post("/jobs/release", json={"id": job.id}, timeout=None)  # expect

async def worker(session: aiohttp.ClientSession, job):
    try:
        await job.run()
    except asyncio.CancelledError:
        await session.put(f"https://api/jobs/{job.id}", json={"state": "requeue"})  # expect
        raise
"#,
        r#"
import httpx


async def search(base, query):
    # `timeout=None`: no request of this client has a limit.
    async with httpx.AsyncClient(timeout=None) as client:
        created = (await client.post(f"{base}/filters", json=query)).json()
        try:
            return (await client.get(f"{base}/results/{created['id']}")).json()
        finally:
            await client.delete(f"{base}/filters/{created['id']}")  # expect
"#,
        r#"
import asyncio

async def run_script(cmd):
    proc = await asyncio.create_subprocess_exec(*cmd, stdout=asyncio.subprocess.PIPE)
    try:
        out, _ = await proc.communicate()
    except BaseException:
        proc.terminate()  # SIGTERM can be ignored
        await proc.wait()  # expect
        raise
    return out

async def run_other(cmd, other):
    proc = await asyncio.create_subprocess_exec(*cmd)
    try:
        await proc.wait()
    finally:
        other.kill()
        await proc.wait()  # expect
"#,
        r#"
async def notify_server(conn, job):
    await conn.execute("UPDATE jobs SET state = 'failed' WHERE id = $1", job)

async def run(conn, job):
    try:
        await job.go()
    finally:
        await notify_server(conn, job)  # expect
"#,
        r#"
import asyncio


async def run_live(runner, session):
    ctx = new_context(runner, session)

    async def drive():
        try:
            await runner.agent.run(ctx)
        finally:
            await ctx.http_session.put(session.url, json={"done": True})  # expect

    await asyncio.create_task(drive())
"#,
        r#"
import aiohttp


async def beat(session: aiohttp.ClientSession, url):
    failed = False
    try:
        await session.post(url, json={"state": "running"})
    except Exception:
        failed = True
    finally:
        # The flag tells an error from success; a cancellation still
        # reaches this request.
        if not failed:
            await session.post(url, json={"state": "finished"})  # expect
"#,
        r#"
import asyncio


async def reap(proc: asyncio.subprocess.Process):
    proc.terminate()
    await proc.wait()


async def run(cmd):
    proc = await asyncio.create_subprocess_exec(*cmd)
    try:
        return await proc.communicate()
    finally:
        await reap(proc)  # expect
"#,
        r#"
class Client:
    def __init__(self, http):
        self._http = http

    async def run_as(self, token, job):
        try:
            return await job.run(self._http, token)
        finally:
            await self._http.post("/logout", headers={"Authorization": token})  # expect
"#,
        r#"
import asyncio
import os
import signal


def stop_tree(proc):
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass


async def run_shell(cmd):
    proc = await asyncio.create_subprocess_shell(cmd, start_new_session=True)
    try:
        return await proc.communicate()
    except asyncio.CancelledError:
        stop_tree(proc)
        await proc.wait()  # expect
        raise
"#,
        r#"
import asyncio
import json
import logging


async def stream_transcript(cmd):
    proc = await asyncio.create_subprocess_exec(
        *cmd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        async for raw in proc.stdout:
            yield json.loads(raw)
        await proc.wait()
    finally:
        # On cancellation the child still runs: returncode is None, and None != 0.
        if proc.returncode != 0:
            err = await proc.stderr.read()  # expect
            logging.error("transcriber failed: %s", err.decode()[:300])
"#,
    ],
    pass: &[
        r#"
import asyncio
import aiohttp


async def heartbeat(session: aiohttp.ClientSession, url, every):
    try:
        while True:
            await session.post(url, json={"state": "running"})
            await asyncio.sleep(every)
    except asyncio.CancelledError:
        cancelled = True
        raise
    except Exception:
        cancelled = False
    else:
        cancelled = False
    finally:
        # Told on a normal end or an error; skipped when cancelled.
        if not cancelled:
            await session.post(url, json={"state": "finished"})
"#,
        r#"
import asyncio


async def probe(image, name, discover):
    try:
        return await discover(["docker", "run", "--name", name, image])
    finally:
        process = await asyncio.create_subprocess_exec("docker", "stop", name)
        await asyncio.wait_for(process.wait(), timeout=10)
"#,
        r#"
import httpx


async def search(base, query):
    async with httpx.AsyncClient(timeout=90) as client:
        created = (await client.post(f"{base}/filters", json=query)).json()
        try:
            return (await client.get(f"{base}/results/{created['id']}")).json()
        finally:
            # The client limits every request, this one too.
            await client.delete(f"{base}/filters/{created['id']}")
"#,
        r#"
import asyncio
import contextlib
import httpx

async def poll(api, step):
    async with httpx.AsyncClient(timeout=None) as client:
        offset = 0
        try:
            while True:
                offset = await step(client, offset)
        except asyncio.CancelledError:
            # The request's own timeout overrides the client's `None`.
            with contextlib.suppress(Exception):
                await client.post(f"{api}/ack", json={"offset": offset}, timeout=2.0)
            raise
"#,
        r#"
from aioredis import StrictRedis


class Semaphore:
    def __init__(self, client=None):
        self.client = client or StrictRedis()

    async def acquire(self, target=None):
        token = await self.client.lpop(self.available_key)
        if target is not None:
            # The body never suspends: no cancellation can land in it.
            try:
                target(token)
            finally:
                await self.signal(token)
        return token

    async def signal(self, token):
        async with self.client.pipeline() as pipe:
            await pipe.lpush(self.available_key, token)
            await pipe.execute()
"#,
        r#"
import asyncio

async def process(job, client, writer):
    try:
        await job.run()
    finally:
        async with asyncio.timeout(2):
            await client.post("/jobs/release", json={"id": job.id})
        await asyncio.wait_for(client.post("/x"), timeout=1)
        writer.close()
        await writer.wait_closed()
        await client.aclose()

async def discipline():
    try:
        await work()
    except asyncio.CancelledError:
        await _fast_cleanup()
        raise
    except Exception:
        await client.post("/error")
"#,
        r#"
import anyio
import asyncio
import signal

async def run_script(cmd):
    proc = await asyncio.create_subprocess_exec(*cmd, stdout=asyncio.subprocess.PIPE)
    try:
        out, _ = await proc.communicate()
    except BaseException:
        with anyio.CancelScope(shield=True):
            proc.kill()
            await proc.wait()
        raise
    return out

class Runner:
    async def run(self, cmd):
        self.proc = await asyncio.create_subprocess_exec(*cmd)
        try:
            await self.proc.wait()
        finally:
            if self.proc.returncode is None:
                self.proc.send_signal(signal.SIGKILL)
            await self.proc.communicate()
"#,
        r#"
import asyncio


async def run_live(runner, session):
    ctx = new_context(runner, session)
    ctx.event_queue = asyncio.Queue()

    async def drive():
        try:
            await runner.agent.run(ctx)
        finally:
            await ctx.event_queue.put(DONE)

    task = asyncio.create_task(drive())
    while (event := await ctx.event_queue.get()) is not DONE:
        yield event
    await task
"#,
        r#"
import asyncio


async def reap(proc: asyncio.subprocess.Process):
    proc.terminate()
    try:
        await asyncio.wait_for(proc.wait(), timeout=5)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()


async def run(cmd):
    proc = await asyncio.create_subprocess_exec(*cmd)
    try:
        return await proc.communicate()
    finally:
        await reap(proc)
"#,
        r#"
import asyncio

import httpx


async def report_hangup(call_id):
    async with httpx.AsyncClient(timeout=10.0) as client:
        await client.post("https://calls.example.invalid/hangup", json={"id": call_id})


async def handle_call(call):
    try:
        await call.run()
    finally:
        await report_hangup(call.id)
"#,
        r#"
import asyncio
import os
import signal


async def monitor(cmd, log):
    child = await asyncio.create_subprocess_exec(*cmd, start_new_session=True)
    try:
        await child.wait()
    finally:
        if child.returncode is None:
            os.killpg(child.pid, signal.SIGKILL)
            await child.wait()
        log.info("monitor stopped")
"#,
        r#"
import httpx


class Session:
    def __init__(self, http, token):
        self._http = http
        self.token = token


class Client:
    def __init__(self, config):
        self._http = httpx.AsyncClient(
            base_url=config.api_url,
            timeout=httpx.Timeout(config.timeout),
        )

    async def run_as(self, login, job):
        token = await self._login(login)
        try:
            return await job.run(Session(self._http, token))
        finally:
            await self._logout(token)

    async def _logout(self, token):
        try:
            await self._http.post("/logout", headers={"Authorization": token})
        except Exception:
            pass

    async def _login(self, login):
        response = await self._http.post("/login", json=login)
        return response.json()["token"]
"#,
        r#"
import asyncio


class StreamManager:
    def __init__(self):
        self.connections = {}

    async def remove(self, connection_id):
        info = self.connections.pop(connection_id, None)
        if info is not None:
            await info["queue"].put({"event": "close"})

    async def events(self, connection_id):
        queue = asyncio.Queue()
        self.connections[connection_id] = {"queue": queue}
        try:
            while True:
                yield await queue.get()
        finally:
            await self.remove(connection_id)
"#,
        r#"
import asyncio
import os
import signal


def kill_tree(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


async def run_shell(cmd):
    proc = await asyncio.create_subprocess_shell(cmd, start_new_session=True)
    try:
        return await proc.communicate()
    except asyncio.CancelledError:
        kill_tree(proc)
        await proc.wait()
        raise
"#,
        r#"
import anyio


class Query:
    def __init__(self, transport):
        self.transport = transport
        self._send, self._receive = anyio.create_memory_object_stream(100)

    async def read_messages(self):
        try:
            async for message in self.transport.read():
                await self._send.send(message)
        finally:
            await self._send.send({"type": "end"})
"#,
        r#"
# The body never suspends: the bare `except` handles its errors only.
import requests


async def bind(event, bot):
    try:
        result = requests.get("https://example.org/player", timeout=5).json()
    except:
        await bot.send("could not fetch the player")
        return
    return result
"#,
        r#"
import asyncio


async def to_jpeg(frame):
    process = await asyncio.create_subprocess_exec(
        "ffmpeg", "-i", "-", "-f", "mjpeg", "-",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    process.stdin.write(frame)
    process.stdin.close()
    try:
        image = await process.stdout.read()
    finally:
        retcode = await asyncio.wait_for(process.wait(), 10)
        if retcode != 0:
            errors = await process.stderr.read()
            raise RuntimeError(errors.decode())
    return image
"#,
        r#"
import httpx


class Player:
    async def avatar(self, retries=0):
        try:
            async with httpx.AsyncClient() as client:
                r = await client.get(f"https://avatars.example/{self.user_id}.png")
                return r.content
        except:
            if retries < 3:
                return await self.avatar(retries + 1)
            return None
"#,
        r#"
import asyncio
import os
import signal


def _signal_group(pid, sig):
    try:
        os.killpg(os.getpgid(pid), sig)
    except ProcessLookupError:
        pass


async def run(cmd):
    process = await asyncio.create_subprocess_exec(*cmd, start_new_session=True)
    try:
        return await process.wait()
    except asyncio.CancelledError:
        _signal_group(process.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), timeout=5)
        except TimeoutError:
            pass
        if process.returncode is None:
            _signal_group(process.pid, signal.SIGKILL)
            await process.wait()
        raise
"#,
        r#"
import asyncio
import logging

log = logging.getLogger(__name__)


async def stream(cmd):
    proc = await asyncio.create_subprocess_exec(
        *cmd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        async for line in proc.stdout:
            yield line.decode()
    finally:
        rc = proc.returncode
        if rc and rc != 0 and proc.stderr:
            err = await proc.stderr.read()
            log.error("exit %s: %s", rc, err.decode(errors="replace"))
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(AwaitInCleanup);
}
