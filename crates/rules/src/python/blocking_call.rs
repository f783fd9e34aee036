//! PY002: a blocking call inside `async def`.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use crate::shared::blocking;
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct BlockingCall;

/// Longest helper chain reported (calls from the coroutine to the blocking
/// call, counted as related locations).
const MAX_CHAIN_SHOWN: usize = 4;

pub static META: RuleMeta = RuleMeta {
    id: "PY002",
    name: "blocking-call-in-async",
    category: Category::BlockingInAsync,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "A coroutine makes a blocking call (sleep, file, HTTP, database, subprocess, socket, thread wait), directly or through a project helper.",
    docs: r#"
A call that blocks the thread (`time.sleep`, `requests`, `open()`,
`subprocess.run`, `sqlite3`/`psycopg2`, blocking sockets and DNS,
`threading` waits, `queue.Queue.get`, `input()`...) made inside an
`async def`, either directly or through sync functions of the project that
end up making such a call (the message shows the chain). Calling a generator function of the project runs none of its body, so
a generator only kept or returned (`self._rows = read_rows(path)`) is
not reported; iterating it is. A call in a
branch that cannot run is left alone: the `else` of `if True:` or of
`if not _IS_SYNC:` where the module assigns `_IS_SYNC = False` once (code
written for both an async and a generated sync flavor keeps the other
flavor's call there). A call in an `except` handler that
repeats the blocking call that is its `try`'s only statement (`try:
ex.shutdown(cancel_futures=True) except TypeError: ex.shutdown()`, the
fallback for an older library) is the same wait, reported once at the
`try`. Opening a literal path under `/proc/` or `/sys/`
(`open("/proc/meminfo")`, also built from one: `open("/proc/%d/statm" %
pid)`, or read through `Path("/proc/cpuinfo")`) waits for nothing: the kernel answers from
memory; neither does opening the null device (`open(os.devnull)`) or an
in-memory SQLite database (`sqlite3.connect(":memory:")`), a move to the
source's own directory (`shutil.move(tmp, os.path.splitext(tmp)[0])`, or
`shutil.move(f"{path}.temp.mp4", path)` or from `dest.with_suffix(".tmp")`
to `dest`, also through a local bound to that name and with either path
wrapped in `str(..)`: one rename), or fetching a
`data:` URI (`urlopen(uri)` after `if not uri.startswith("data:"):
raise`), or opening a file for appending only to write one record (`with
open(log, "a") as f: f.write(line)`, or in up to three writes, a heading
then the entry, with the record formatted in between by assignments and
`if`s that neither loop nor touch the file: what a logging handler costs
per call), here or in a helper. A helper memoized with no arguments
(`@functools.cache def git_exe():`) runs its body once per process, and
calls of it are not followed; so does the lazy initialisation of a
module-level singleton the helper declares `global`, or of a factory's
variable its closure declares `nonlocal` (the block of `if _client is
None:` that assigns `_client`, or what follows `if _config is not None:
return _config`, also `and not force_reload`, or `if _config is None or
reload:`, with a flag off by default, when it assigns `_config`), and the helpers called there are not followed
either. A block guarded by `not path.exists()` that always creates that
path (`if not new.exists(): shutil.copy2(old, new)`, a one-time migration
or cache fill) is treated the same way: once the file is there, later
calls only test for it. Reading a file shipped inside the package, whose
path is built only from `__file__` and literals (`Path(__file__).parent /
"guide.md"`, also through the function's own locals so built and loops
over literal names), is a few kilobytes from the page cache and is left
alone; a name from an argument in that path is not. Opening a file whose handle is only handed to a
worker thread (`with open(p) as f: data = await asyncio.to_thread(json.load,
f)`), or to an aiohttp form (`form.add_field("file", f)`, which aiohttp
reads in an executor), is not reported: the reading happens off the loop. An async command of a command-line app (`@app.command()`
in a file that imports typer, click, asyncclick, cyclopts, cloup or
rich-click: a chat bot's `@bot.command()` runs beside the bot's other
handlers, and is checked,
or an argparse subcommand: registered with `set_defaults(func=cmd)`, or
awaited in its arm of the coroutine `asyncio.run` starts, `if args.cmd ==
"status": await run_status(args)`, with no task started before it) that
starts no tasks of its own is left alone: the process runs that one
coroutine, and the blocking call holds up only the command itself. So is
the coroutine a new loop is started with (`asyncio.run(main())`, or a
private method every use of whose name is such a start,
`asyncio.run(self._check())`: a public one, `get_pages_async` beside a
sync `get_pages`, is the class's users' to await on their own loops; also
through a sync helper of the file that does nothing else (bar handling
its failure or reporting in a `finally`), `_run(main())` with `def
_run(coro): return asyncio.run(coro)`, or through a helper that only
hands the coroutine on to such a helper and prints what it returns
(`def _exec_json(coro): print(json.dumps(_run(coro)))`), or
`loop.run_until_complete(main())` on a loop the function made with
`asyncio.new_event_loop()`, there or in a sync helper of the file that
returns it, not kept in a global; used nowhere else in the file but by
awaiting itself, `return await configure()` to ask again), and a private coroutine of the file only such
coroutines await (`await _export(report)`), when nothing it runs can leave
another task on the loop: no task spawned, itself or in the functions of
the file it calls, nothing run side by side but by an awaited `gather`
(whose tasks have all finished when it returns; they are checked where
they are defined), nothing awaited or entered of another
module that is named for starting something (`await site.start()`, `await
launch()`, `await app.run_shell()`, `async with
websockets.connect(url)`), and no `async with` of an object it did not
build there (`async with client:`). Otherwise a call
in the coroutine a new loop is started with (`asyncio.run(main())`,
`anyio.run(_main, path)`, used nowhere else in the file), or in such a
subcommand, before its first
`await` (awaits in other arms of an `if` or `match`, another subcommand's,
do not count), or, outside any loop, `async with` or `async for`, after
awaits that left nothing running: of another module only inside an
`async with` that has closed since (`async with httpx.AsyncClient() as
api: await api.post(..)`, then the settings saved, then a watcher
started), of the file only what starts nothing by the standard above;
when nothing before it started a task: no other task exists yet. The same two readings reach across files for a function of
a module (not a method, whose calls on receivers of unknown type the
project index cannot see): when every call of it in the project runs it
alone (handed to a new loop, `asyncio.run(serve(args))` in `cli.py`, also
by name, `trio_asyncio.run(evaluate, args)`, or awaited by a coroutine
that runs alone and starts nothing, `return await evaluate_local(args)`),
a blocking call in it is left alone if it starts nothing, or if the call
comes before its first await and before it starts anything. A function
another file also starts beside other work (`create_task(serve(spec))`)
is still checked; one handed on by value to a spawner in another file is
beyond what the index sees. Methods count too, however many calls
away the run starts, when every chain of calls into the coroutine begins
at a program's entry point (a command of a command-line app, or a
module-level `main`, `cli` or `cmd_*` that runs
`asyncio.run(kernel.run(query))`; a class's sync `get_pages` beside its public `get_pages_async`
is the class's API, not an entry point) and goes on only through awaits
in coroutines that leave nothing running (no task, no server, no serving context
kept open on an exit stack, `enter_async_context(websockets.serve(..))`,
themselves or through the project functions they call), and when no
file that can reach its package calls a method of its name on a receiver
of unknown type, hands such a method on, or registers the coroutine with
a decorator. A coroutine whose every run so begins may also start work
later (a daemon's `start` spawning its server): a blocking call it makes
before its first await and before it starts anything (reading its pid
file) still finds nothing else on the loop. A prompt for the user (`input()`, `getpass()`)
anywhere in such a coroutine is left alone too when it starts no tasks
(itself or in the functions of the file it calls, two calls down): the
program is waiting for its user, and none of its own tasks is held up.
Nor is a call right before the process ends (`input("press enter to
exit")` then `exit(1)` or `sys.exit(..)` as the next statement): the
program is on its way out. A call inside `with self.app.suspend():` of a
Textual app, which hands the terminal to a blocking program on purpose,
is left alone. Reading the result of a future known to be
finished (under `if fut.done():`, or after a done callback was
registered and a `wait()` awaited since) returns at once. The startup half
of a FastAPI or Starlette app's lifespan (an `@asynccontextmanager`
handed only as `lifespan=` to the app, before its first `yield`, with no
task started before the call), like a handler decorated
`@app.on_event("startup")`, serves no request yet, and is left alone
(an MCP server's `FastMCP(lifespan=..)` runs its lifespan once per
session, beside the other sessions, and is still checked). A send or receive on a socket the file
switches to non-blocking mode (`sock.setblocking(False)`, or inside `try:
... except BlockingIOError`) returns at once, also in a helper of the
file that the coroutine calls (`self.drain()` receiving on
`self.wakeup_sock`); a `sendto` counts only when
its host is an IP address, since a host name is resolved first. So does
one right after an awaited readiness wait on the same socket (`await
anyio.wait_writable(sock); sock.sendto(packet, addr)`), unless its
address names a host. Nor is
`socket.getaddrinfo` of an IP address (a literal or a module constant
bound to one), which is parsed, not looked up, nor a connect to this
machine (`socket.create_connection(("localhost", port))`, also to a
loopback address, a module constant bound to one or a parameter
defaulting to one, `def port_in_use(port, host="127.0.0.1")`), which the
kernel accepts or refuses at once, nor the `accept` of a socket pair the
function connected itself. A datagram socket the function builds
(`socket.SOCK_DGRAM`) waits for no peer: connecting it to an IP address
only picks a route (the local-address idiom, then `getsockname()`), and
a send hands one packet to the kernel (a Unix datagram, systemd's
`sd_notify`, any path; an address written out or held by a name only
ever bound to one, `group = ("239.255.255.250", 1900)`); a host name is
still looked up, and receives still wait. A `put` on a queue built with no
`maxsize` (held by the instance, also set from a local that holds one
and cleared to `None` between uses, or, read through `self`, by its
class: `_stdout = queue.Queue()` in the class body) never waits, closing a
`requests` or `httpx` session only releases its connection pools, and
building a `redis` client, pipeline, pub/sub object or lock
(`redis.Redis.from_url(url)`) connects nothing, and closing one only
closes its sockets. Opening a cursor of psycopg, psycopg2, PyMySQL or
MySQLdb sends nothing, and their default cursors receive the whole result
in `execute`: `fetchone`, `fetchmany` and `fetchall` read rows already in
memory, and the `execute` before them is what is reported. Closing one
of their connections sends a goodbye and closes the socket, with no
reply to wait for.

## Why

An event loop runs every task on one thread and only switches at `await`.
A call that blocks keeps the thread: every other request, timer, heartbeat
and socket of the process waits until it returns. The median latency looks
fine while the tail grows to the length of the blocking call.

## Example

```python
import time
import requests

async def register(req):
    profile = requests.post("https://kyc.example/check", json=req).json()
    time.sleep(0.1)
    return profile
```

## Fix

Use the async equivalent, or move the blocking work to a thread with
`asyncio.to_thread` / `loop.run_in_executor`.

```python
import asyncio
import httpx

async def register(req):
    async with httpx.AsyncClient(timeout=5) as client:
        profile = (await client.post("https://kyc.example/check", json=req)).json()
    await asyncio.sleep(0.1)
    return profile
```
"#,
    examples: &EXAMPLES,
};

impl Rule for BlockingCall {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        let mut found = Vec::new();
        blocking::check(
            cx,
            &META,
            Effect::Blocking,
            |cx, f| cx.runs_on_loop(f) && !cx.func(f).is_test && !runs_by_itself(cx, f),
            &mut found,
        );
        // Chains through many layers of helpers are rarely what the author
        // of the coroutine can act on (they end deep inside libraries).
        let kept: Vec<Finding> = found
            .into_iter()
            .filter(|f| {
                f.related.len() <= MAX_CHAIN_SHOWN
                    && !in_nonblocking_try(cx, f.span)
                    && !on_nonblocking_socket(cx, f.span)
                    && !resolves_an_address(cx, f.span)
                    && !renames_in_place(cx, f.span)
                    && !after_empty_wait(cx, f.span)
                    && !crate::python::common::in_dead_branch(cx, f.span)
                    && !runs_once(cx, f.span)
                    && !before_other_tasks(cx, f.span)
                    && !prompt_in_lone_root(cx, f.span)
                    && !result_of_finished_future(cx, f.span)
                    && !in_lifespan_startup(cx, f.span)
                    && !while_app_suspended(cx, f.span)
                    && !alone_across_files(cx, f.span)
                    && !just_before_exit(cx, f.span)
            })
            .collect();
        let fallbacks: Vec<bool> = kept
            .iter()
            .map(|f| repeats_a_reported_try_call(cx, f, &kept))
            .collect();
        out.extend(
            kept.into_iter()
                .zip(fallbacks)
                .filter_map(|(f, fallback)| (!fallback).then_some(f)),
        );
    }
}

/// The statement right after the call ends the process (`input("press
/// enter to exit"); exit(1)`, `time.sleep(1); sys.exit(2)`): the program
/// is on its way out, and no task of it is left to hold up.
fn just_before_exit(cx: &FileCx, span: Span) -> bool {
    let Some((e, _)) = call_expr_at(cx, span) else {
        return false;
    };
    let Parent::Stmt(s) = cx.tree.expr_parent(e) else {
        return false;
    };
    crate::util::next_stmt(cx, s).is_some_and(|n| match cx.stmt(n).kind {
        StmtKind::Expr(x) | StmtKind::Raise(Some(x)) => {
            cx.call(cx.model.strip(x)).is_some_and(|c| {
                crate::util::ends_the_process(c) || (c.receiver.is_none() && c.name == "SystemExit")
            })
        }
        _ => false,
    })
}

/// The call is in the lazy set-up of a module-level singleton in the
/// coroutine itself (`global _conn; if _conn is not None: return; ...;
/// _conn = sqlite3.connect(path)`): it waits once per process, as the
/// same set-up in a sync helper does (see the project index).
fn runs_once(cx: &FileCx, span: Span) -> bool {
    call_expr_at(cx, span).is_some_and(|(e, _)| {
        let f = cx.func(cx.func_of(e));
        crate::index::runs_once_spans(cx.model, f)
            .iter()
            .any(|o| o.contains(span))
    })
}

/// The coroutine runs alone on its loop: it is the one a command-line
/// program starts its loop with (`asyncio.run(main())` and used nowhere
/// else in the file, a typer or click command, an argparse subcommand), or
/// a private coroutine of the file that only such coroutines await
/// directly (`await _export(report)`), `depth` awaits down; and nothing it
/// runs can leave another task on the loop ([`starts_nothing_within`]). A
/// blocking call there holds up the program's one line of work, which
/// would wait for the same I/O anyway.
fn alone_on_its_loop(cx: &FileCx, f: FuncId, depth: u32, command: Option<bool>) -> bool {
    let func = cx.func(f);
    if !func.is_async {
        return false;
    }
    // The cheap tests first: this runs for every coroutine of the file.
    // `command`: [`is_command`], when the caller knows it.
    let entry = command.unwrap_or_else(|| is_command(cx, f))
        || crate::python::common::only_a_loop_root(cx, f)
        || (depth > 0
            && crate::python::common::private_helper_called_only(cx, f, |call| {
                cx.is_awaited(call) && alone_on_its_loop(cx, cx.func_of(call), depth - 1, None)
            }));
    entry && starts_nothing_within(cx, f)
}

/// The calls of the file that run their callee alone on its loop, by
/// span, and the functions it hands by name to a call that starts a new
/// loop for them (see [`crate::FileSummaries::set_lone_runs`]): the first
/// argument of a call that runs it on a new loop (`asyncio.run(serve(
/// args))`, `trio_asyncio.run(evaluate, args)`), and every awaited call of
/// a coroutine that runs alone and starts nothing ([`alone_on_its_loop`]:
/// `return await evaluate(args)` in an async command). Calls made by the
/// module's own code, which no summary holds, are handed over by target.
///
/// Third, the spans of those runs a program's entry point starts (see
/// [`starts_a_program`]), which the project index follows however far
/// ([`crate::ProjectIndex::runs_alone_in_project`]).
pub fn lone_runs(cx: &FileCx) -> (Vec<Span>, Vec<String>, Vec<Span>) {
    let mut spans = Vec::new();
    let mut refs = Vec::new();
    let mut entries = Vec::new();
    let note = |e: ExprId, spans: &mut Vec<Span>, refs: &mut Vec<String>| {
        let Some(c) = cx.call(e) else { return };
        if !cx.func(cx.func_of(e)).qualname.is_empty() {
            spans.push(cx.expr(e).span);
        } else if let Some(t) = &c.target {
            refs.push(t.to_string());
        }
    };
    for (i, x) in cx.model.exprs.iter().enumerate() {
        let ExprKind::Call(r) = &x.kind else { continue };
        let e = ExprId(i as u32);
        let Some(a) = r.positional(0).map(|a| cx.model.strip(a)) else {
            continue;
        };
        if !crate::python::common::runs_on_a_new_loop(cx, e) {
            continue;
        }
        if cx.call(a).is_some() {
            note(a, &mut spans, &mut refs);
            if starts_a_program(cx, cx.func_of(e)) {
                entries.push(cx.expr(a).span);
            }
        } else if let Some(q) = cx.model.resolved(a) {
            refs.push(q.to_string());
        }
    }
    // Only calls of other files' functions matter (the index reads a
    // file's own calls of its functions from the rule, not from here).
    for g in cx.model.function_ids() {
        if !cx.func(g).is_async {
            continue;
        }
        let awaited: Vec<ExprId> = cx
            .body_calls(g)
            .filter(|&e| {
                cx.call(e)
                    .is_some_and(|c| c.target.is_some() && cx.callee_in_file(c).is_none())
                    && cx.is_awaited(e)
            })
            .collect();
        if !awaited.is_empty() && alone_on_its_loop(cx, g, 2, None) {
            for e in awaited {
                note(e, &mut spans, &mut refs);
            }
        }
    }
    (spans, refs, entries)
}

/// The function `g`, which starts a new loop, is a program's entry point,
/// not a library's sync flavour of its async API (`def get_pages(self,
/// url): return asyncio.run(self.get_pages_async(url))`, whose coroutine
/// its users may await on their own loops): a module-level function that
/// is a command of a command-line app, or is named as an entry point is
/// (`main`, `cli`, `cmd_export`, `run_command`).
fn starts_a_program(cx: &FileCx, g: FuncId) -> bool {
    let func = cx.func(g);
    let name = func.name.trim_start_matches('_');
    func.class.is_none()
        && func.parent.is_none_or(|p| p.0 == 0)
        && (crate::python::common::is_cli_app_command(cx, func)
            || matches!(
                name,
                "main" | "cli" | "cli_main" | "main_cli" | "entrypoint" | "entry_point"
            )
            || name.starts_with("cmd_")
            || name.ends_with("_cmd")
            || name.ends_with("_command")
            || name.ends_with("_main"))
}

/// What the project index needs to tell which coroutines run alone
/// however many calls away their run starts
/// ([`crate::ProjectIndex::runs_alone_in_project`]): the awaited calls of
/// the file's coroutines, by span (`await self.tools.execute(call)` in a
/// kernel's step, or the coroutine an awaited `asyncio.wait_for` runs: it
/// has finished, or been cancelled, when the wait returns); and the
/// functions of the file that may leave work running on the loop by
/// themselves ([`leaves_work_running`]), by id. What the functions of the
/// project they call start, the index adds.
pub fn awaits_and_starts(cx: &FileCx) -> (Vec<Span>, Vec<u32>) {
    let mut awaited = Vec::new();
    let mut starting = Vec::new();
    for g in cx.model.function_ids() {
        let func = cx.func(g);
        if func.qualname.is_empty() {
            continue;
        }
        if leaves_work_running(cx, g) {
            starting.push(g.0);
            continue;
        }
        if func.is_async && !func.is_generator {
            awaited.extend(
                cx.body_calls(g)
                    .filter(|&e| {
                        cx.call(e).is_some_and(|c| c.target.is_some())
                            && (cx.is_awaited(e) || waited_for(cx, e))
                    })
                    .map(|e| cx.expr(e).span),
            );
        }
    }
    (awaited, starting)
}

/// The body of `g` may leave work running on the loop: it spawns a task
/// or runs awaitables side by side (bar an awaited `gather`), enters an
/// `async with` of something it did not build or that is named for
/// starting, or calls something outside its own package named for
/// starting ([`may_leave_work_running`]). Calls of its package's
/// functions are the project index's to follow.
fn leaves_work_running(cx: &FileCx, g: FuncId) -> bool {
    let own = cx.model.module.split('.').next().unwrap_or("");
    let in_package = |c: &Call| {
        c.target
            .as_deref()
            .is_some_and(|t| !own.is_empty() && t.split('.').next() == Some(own))
    };
    cx.body_calls(g).any(|e| {
        let c = cx.call(e).unwrap();
        crate::python::common::starts_tasks_at(cx, e, c, true)
            || (!in_package(c) && may_leave_work_running(cx, c))
            || keeps_context_open(cx, c)
    }) || enters_running_context(cx, g, |c| !in_package(c))
}

/// `f` has an `async with` of an object it did not build there (`async
/// with client:`), or of a context that runs work while open
/// ([`context_runs_tasks`]) and that `elsewhere` says is not the file's
/// (or the package's) to look into.
fn enters_running_context(cx: &FileCx, f: FuncId, elsewhere: impl Fn(&Call) -> bool) -> bool {
    cx.body_stmts(f).iter().any(|&s| {
        matches!(&cx.stmt(s).kind, StmtKind::With { items, is_async: true, .. }
        if items.iter().any(|it| match cx.call(cx.model.strip(it.ctx)) {
            None => true,
            Some(c) => elsewhere(c) && context_runs_tasks(c),
        }))
    })
}

/// `e` is the coroutine an awaited `asyncio.wait_for(e, timeout)` runs.
fn waited_for(cx: &FileCx, e: ExprId) -> bool {
    matches!(cx.tree.expr_parent(e), Parent::Expr(p)
        if cx.call(p).is_some_and(|c| {
            c.target.as_deref() == Some("asyncio.wait_for") && c.positional(0) == Some(e)
        }) && cx.is_awaited(p))
}

/// The coroutine the blocking call sits in is a function of the module
/// (not a method: the index cannot tell the class of every receiver) that
/// every run in the project starts alone ([`runs_alone_everywhere`]), and
/// either starts nothing ([`starts_nothing_within`]) or reaches the call
/// before its first await and before starting anything
/// ([`nothing_else_yet`]): the `serve(args)` a command-line program's
/// `cli.py` runs with `asyncio.run`, reading its spec before it starts the
/// server.
fn alone_across_files(cx: &FileCx, span: Span) -> bool {
    call_expr_at(cx, span).is_some_and(|(e, _)| {
        let f = cx.func_of(e);
        // (The scan for earlier awaits runs at most once, and only when
        // the index says the coroutine is alone.)
        let alone = runs_alone_everywhere(cx, f, 2) || runs_alone_in_project(cx, f);
        (alone && starts_nothing_within(cx, f))
            || ((alone || starts_alone_in_project(cx, f)) && nothing_else_yet(cx, f, span))
    })
}

/// The coroutine `f` (a method too) runs alone wherever the project runs
/// it, by the project index's account of every call of it
/// ([`crate::ProjectIndex::runs_alone_in_project`]).
fn runs_alone_in_project(cx: &FileCx, f: FuncId) -> bool {
    let func = cx.func(f);
    func.is_async
        && !func.is_test
        && !func.qualname.is_empty()
        && cx
            .index
            .runs_alone_in_project(cx.lang, &func.qualname, cx.file)
}

/// The coroutine `f` (a method too) is alone on its loop when it starts,
/// wherever the project runs it
/// ([`crate::ProjectIndex::starts_alone_in_project`]).
fn starts_alone_in_project(cx: &FileCx, f: FuncId) -> bool {
    let func = cx.func(f);
    func.is_async
        && !func.is_test
        && !func.qualname.is_empty()
        && cx
            .index
            .starts_alone_in_project(cx.lang, &func.qualname, cx.file)
}

/// Every run of the module function `f` starts it while nothing else is
/// on its loop, as far as the project shows: every mention of it in this
/// file hands it to a new loop or is awaited by a coroutine that runs
/// alone and starts nothing (here, or by the same test `depth` callers
/// up); every call of it in the other files does the same
/// ([`crate::ProjectIndex::runs_alone_elsewhere`]); and some run exists.
/// What the index cannot see (the function handed on by value to a
/// spawner in another file) is not counted.
fn runs_alone_everywhere(cx: &FileCx, f: FuncId, depth: u32) -> bool {
    let func = cx.func(f);
    let module_level = func.parent.is_none_or(|p| p.0 == 0);
    if !func.is_async
        || func.is_generator
        || func.is_test
        || func.class.is_some()
        || !module_level
        || func.qualname.is_empty()
    {
        return false;
    }
    let lone_here = std::cell::Cell::new(0u32);
    let mentioned = cx
        .model
        .exprs
        .iter()
        .any(|x| matches!(&x.kind, ExprKind::Name { id, .. } if *id == func.name));
    let each_alone = !mentioned
        || crate::python::common::every_mention(cx, &func.name, |id, p| {
            let root = crate::python::common::handed_to_a_new_loop(cx, id, p);
            let awaited_alone = !root
                && depth > 0
                && cx.call(p).is_some_and(|c| c.func == id)
                && cx.is_awaited(p)
                && {
                    let g = cx.func_of(p);
                    g != f
                        && (alone_on_its_loop(cx, g, 2, None)
                            || (runs_alone_everywhere(cx, g, depth - 1)
                                && starts_nothing_within(cx, g)))
                };
            if root || awaited_alone {
                lone_here.set(lone_here.get() + 1);
            }
            root || awaited_alone || crate::python::common::awaits_itself(cx, f, id, p)
        });
    each_alone
        && cx
            .index
            .runs_alone_elsewhere(cx.lang, &func.qualname, cx.file, lone_here.get() > 0)
}

/// In the coroutine `g`, the call at `span` comes before any task is
/// started and before every await (bar those in another arm of an `if` or
/// `match`, and the one around the call itself).
fn nothing_else_yet(cx: &FileCx, g: FuncId, span: Span) -> bool {
    !spawns_before(cx, g, span)
        && crate::util::awaits_in_block(cx.model, &cx.func(g).body)
            .iter()
            .all(|a| {
                a.start >= span.end
                    || (a.start <= span.start && span.end <= a.end)
                    || other_branch(cx, &cx.func(g).body, *a, span)
            })
}

/// The coroutine `g` is the program's own: a subcommand, or a private or
/// nested function (`async def _go():` inside a command). A public one a
/// library exports may be awaited on its users' loops, however the file
/// itself runs it.
fn own_root(cx: &FileCx, g: FuncId) -> bool {
    let func = cx.func(g);
    func.name.starts_with('_')
        || func.parent.is_some_and(|p| p.0 != 0)
        || dispatched_subcommand(cx, g)
}

/// In the coroutine `g`, nothing that ran before the call at `span` can
/// still be running: the call is in no loop and no `async with` or `async
/// for` of `g`; every call before it (bar another arm of an `if` or
/// `match`) starts nothing by the standard of [`starts_nothing_within`];
/// and every call of another module awaited before it was awaited inside
/// an `async with` that has closed since (whatever a client's context
/// started ended with it). A command that posts through a client it then
/// closes, saves its settings, and only then starts a watcher.
fn starts_nothing_before(cx: &FileCx, g: FuncId, span: Span) -> bool {
    let body = &cx.func(g).body;
    let stmts = cx.body_stmts(g);
    let encloses = |s: StmtId| {
        let sp = cx.stmt(s).span;
        sp.start <= span.start && span.end <= sp.end
    };
    let in_loop_or_context = stmts.iter().any(|&s| {
        encloses(s)
            && matches!(
                cx.stmt(s).kind,
                StmtKind::For { .. }
                    | StmtKind::While { .. }
                    | StmtKind::Loop { .. }
                    | StmtKind::With { is_async: true, .. }
            )
    });
    if in_loop_or_context {
        return false;
    }
    let closed_contexts: Vec<Span> = stmts
        .iter()
        .map(|&s| cx.stmt(s))
        .filter(|st| {
            matches!(st.kind, StmtKind::With { is_async: true, .. }) && st.span.end <= span.start
        })
        .map(|st| st.span)
        .collect();
    let before = |s: Span| s.end <= span.start && !other_branch(cx, body, s, span);
    let mut seen = vec![g];
    cx.body_calls(g).all(|e| {
        let at = cx.expr(e).span;
        if !before(at) {
            return true;
        }
        let c = cx.call(e).unwrap();
        if crate::python::common::starts_tasks_at(cx, e, c, true) {
            return false;
        }
        callee_starts_nothing(cx, c, &mut seen)
            && (cx.callee_in_file(c).is_some()
                || !cx.is_awaited(e)
                || closed_contexts
                    .iter()
                    .any(|w| w.start <= at.start && at.end <= w.end))
    })
}

/// Nothing `f` runs can leave another task on the loop: it spawns nothing
/// and runs nothing side by side but an awaited `gather`, which has
/// finished its tasks when it returns (they are checked where they are
/// defined, not alone); it calls or awaits nothing named for starting
/// something that is not a function of the file (`await site.start()`,
/// `await launch()`, `async with websockets.connect(url)`: a server, a
/// connection's reader or pinger), and enters no context it does not
/// build there (`async with client:` may start a connection's tasks); and
/// the same holds of the functions of the file it calls, however deep
/// (a command's helpers call helpers), up to [`MAX_CALLEES_FOLLOWED`] of
/// them. Threads it starts (`threading.Thread.start`) run off the loop and
/// do not count, nor do calls the knowledge knows to block or offload
/// (`subprocess.run`, `loop.run_in_executor`).
fn starts_nothing_within(cx: &FileCx, f: FuncId) -> bool {
    let mut seen = Vec::new();
    starts_nothing_from(cx, f, &mut seen)
}

/// Functions of the file [`starts_nothing_within`] looks into before it
/// gives up (and says something may start).
const MAX_CALLEES_FOLLOWED: usize = 64;

fn starts_nothing_from(cx: &FileCx, f: FuncId, seen: &mut Vec<FuncId>) -> bool {
    if seen.contains(&f) {
        return true;
    }
    if seen.len() >= MAX_CALLEES_FOLLOWED {
        return false;
    }
    seen.push(f);
    if cx
        .body_calls(f)
        .any(|e| crate::python::common::starts_tasks_at(cx, e, cx.call(e).unwrap(), true))
    {
        return false;
    }
    if enters_running_context(cx, f, |c| cx.callee_in_file(c).is_none()) {
        return false;
    }
    cx.body_calls(f)
        .all(|e| callee_starts_nothing(cx, cx.call(e).unwrap(), seen))
}

/// What the call `c` runs starts nothing: a function of the file by
/// [`starts_nothing_from`], another module's by its name
/// ([`may_leave_work_running`]).
fn callee_starts_nothing(cx: &FileCx, c: &Call, seen: &mut Vec<FuncId>) -> bool {
    match cx.callee_in_file(c) {
        Some(h) => starts_nothing_from(cx, h, seen),
        None => !may_leave_work_running(cx, c),
    }
}

/// A call of another module named for starting something
/// ([`named_for_starting`]: `status.start_async_refresh()`, `await
/// site.start()`) may leave work running on the loop. A known blocking or
/// offloaded call (`subprocess.run`, `loop.run_in_executor`) waits for its
/// work, and a thread or process runs off the loop.
fn may_leave_work_running(cx: &FileCx, c: &Call) -> bool {
    named_for_starting(&c.name)
        && cx.effect(c, Effect::Blocking).is_none()
        && cx.effect(c, Effect::Offload).is_none()
        && !c
            .target
            .as_deref()
            .is_some_and(|t| t.starts_with("threading.") || t.starts_with("multiprocessing."))
}

/// A context manager that runs work while it is open: one named for
/// starting something (`websockets.connect(url)`, `websockets.serve(..)`).
/// (An MCP client's stdio transport also reads in a task, but a command
/// line chat that prompts beside it holds up no one: what the server
/// sends waits in the pipe.)
fn context_runs_tasks(c: &Call) -> bool {
    named_for_starting(&c.name)
}

/// The call enters, on an exit stack, a context that runs work and stays
/// open after the function returns (`await self.stack.enter_async_context(
/// websockets.serve(handler, host, port))`): the server keeps serving.
fn keeps_context_open(cx: &FileCx, c: &Call) -> bool {
    c.name == "enter_async_context"
        && c.positional(0)
            .and_then(|a| cx.call(cx.model.strip(a)))
            .is_some_and(context_runs_tasks)
}

/// A call named for starting something that may keep running after it
/// returns (`start`, `start_polling`, `launch`, `serve`, `run`, `connect`,
/// `listen`, `spawn`, `begin`, `schedule`, `submit`). `run` counts too:
/// an app's `await instance.run_shell()` may return with its background
/// tasks still alive.
fn named_for_starting(name: &str) -> bool {
    let name = name.trim_start_matches('_').to_ascii_lowercase();
    [
        "start", "launch", "serve", "run", "listen", "spawn", "connect", "begin", "schedule",
        "submit",
    ]
    .iter()
    .any(|v| name.starts_with(v))
}

/// An async command of a command-line app (`@app.command()` of typer,
/// cyclopts, asyncclick) that starts no concurrent work of its own: the
/// process runs this one coroutine on its loop, so a blocking call in its
/// body holds up nothing but the command, which would wait for the same
/// I/O anyway. A command that gathers or spawns tasks is still checked.
///
/// Or the coroutine runs alone on its loop ([`alone_on_its_loop`]); both
/// ask whether it is a command, which is answered once.
fn runs_by_itself(cx: &FileCx, f: FuncId) -> bool {
    let command = is_command(cx, f);
    (command && starts_no_tasks(cx, f)) || alone_on_its_loop(cx, f, 2, Some(command))
}

/// A command of a command-line app, or an argparse subcommand.
fn is_command(cx: &FileCx, f: FuncId) -> bool {
    crate::python::common::is_cli_app_command(cx, cx.func(f)) || dispatched_subcommand(cx, f)
}

/// A subcommand of a command-line program, found by how the file runs it:
/// every mention of its name registers it with argparse
/// (`sub.set_defaults(func=cmd_batch)`, later run as
/// `asyncio.run(args.func(args))`) or awaits it from the coroutine a new
/// loop is started with, outside any loop, with no task started before
/// it there (another subcommand's arm aside): `if args.cmd == "status":
/// await run_status(args)` in `main`, run by `asyncio.run(main())`. The
/// process then runs this one command.
fn dispatched_subcommand(cx: &FileCx, f: FuncId) -> bool {
    let func = cx.func(f);
    if !func.is_async || func.class.is_some() {
        return false;
    }
    let dispatched = std::cell::Cell::new(false);
    crate::python::common::every_mention(cx, &func.name, |id, p| {
        let Some(c) = cx.call(p) else { return false };
        let registered = c.name == "set_defaults" && c.kwarg("func") == Some(id);
        let run = registered
            || (c.func == id
                && matches!(cx.tree.expr_parent(p), Parent::Expr(a)
                    if matches!(cx.expr(a).kind, ExprKind::Await(_)))
                && run_first_by_root(cx, p));
        dispatched.set(dispatched.get() || run);
        run || crate::python::common::awaits_itself(cx, f, id, p)
    }) && dispatched.get()
}

/// The call `call` sits in the coroutine a new loop is started with,
/// outside any loop, and no task was started before it there (calls in
/// other arms of an `if` or `match` aside).
fn run_first_by_root(cx: &FileCx, call: ExprId) -> bool {
    let g = cx.func_of(call);
    let at = cx.expr(call).span;
    crate::python::common::only_a_loop_root(cx, g)
        && cx
            .tree
            .enclosing_stmt(call)
            .is_some_and(|s| crate::python::common::enclosing_loop(cx, s).is_none())
        && !spawns_before(cx, g, at)
}

/// The coroutine neither spawns tasks nor runs awaitables side by side.
fn starts_no_tasks(cx: &FileCx, f: FuncId) -> bool {
    !cx.body_calls(f)
        .any(|e| crate::python::common::starts_tasks_at(cx, e, cx.call(e).unwrap(), false))
}

/// `fut.result()` (or `.exception()`) of a future known to be finished:
/// under `if fut.done():`, or after the function registered a done
/// callback on it (`fut.add_done_callback(cb)`) and awaited a `wait()`
/// since (the callback sets the event): it returns at once.
fn result_of_finished_future(cx: &FileCx, span: Span) -> bool {
    let Some((e, c)) =
        call_expr_at(cx, span).filter(|(_, c)| matches!(c.name.as_str(), "result" | "exception"))
    else {
        return false;
    };
    let Some(fut) = c.receiver.and_then(|r| cx.model.dotted(r)) else {
        return false;
    };
    let method_on_fut = |x: ExprId, name: &str| {
        cx.call(x).is_some_and(|k| {
            k.name == name && k.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some(&*fut)
        })
    };
    let guarded = cx.enclosing_stmts(e).into_iter().any(|s| {
        matches!(&cx.stmt(s).kind, StmtKind::If { cond, then, .. }
            if crate::util::block_contains(cx, then, cx.tree.enclosing_stmt(e).unwrap_or(s))
                && crate::util::any_conjunct(cx.model, *cond, &mut |t| method_on_fut(t, "done")))
    });
    if guarded {
        return true;
    }
    let f = cx.func_of(e);
    let Some(registered) = cx
        .body_calls(f)
        .find(|&x| method_on_fut(x, "add_done_callback") && cx.expr(x).span.end <= span.start)
    else {
        return false;
    };
    let after = cx.expr(registered).span.end;
    cx.body_calls(f).any(|x| {
        let sp = cx.expr(x).span;
        sp.start >= after
            && sp.end <= span.start
            && cx.is_awaited(x)
            && cx.call(x).is_some_and(|k| k.name == "wait")
    })
}

/// The call is in the startup half of an application's lifespan (an
/// `@asynccontextmanager` handed only as `lifespan=` to a FastAPI or
/// Starlette app, `FastAPI(lifespan=lifespan)`), before its first `yield`,
/// with no task started before it: the server accepts no request until
/// startup is over, so the wait holds up only the start. (An MCP server's
/// `FastMCP(lifespan=..)` runs it for every session, beside the others.)
/// A handler decorated `@app.on_event("startup")` is the same.
fn in_lifespan_startup(cx: &FileCx, span: Span) -> bool {
    let Some((e, _)) = call_expr_at(cx, span) else {
        return false;
    };
    let f = cx.func_of(e);
    let func = cx.func(f);
    // `@app.on_event("startup")`: the server runs these handlers to the
    // end before it accepts a connection.
    let startup_handler = func.is_async
        && func.decorator_calls.iter().any(|&d| {
            cx.call(d).is_some_and(|c| {
                c.name == "on_event"
                    && c.positional(0).is_some_and(
                        |a| matches!(cx.model.literal(a), Some(Lit::Str(s)) if s == "startup"),
                    )
            })
        });
    if startup_handler {
        return !spawns_before(cx, f, span);
    }
    let is_lifespan = func.is_async
        && func
            .decorators
            .iter()
            .any(|d| d.ends_with("asynccontextmanager"))
        && crate::python::common::every_mention(cx, &func.name, |id, p| {
            cx.call(p).is_some_and(|c| {
                c.kwarg("lifespan") == Some(id)
                    && matches!(
                        c.target.as_deref(),
                        Some("fastapi.FastAPI" | "starlette.applications.Starlette")
                    )
            })
        });
    if !is_lifespan {
        return false;
    }
    let first_yield = cx
        .body_exprs(f)
        .iter()
        .filter(|&&x| matches!(cx.expr(x).kind, ExprKind::Yield(_)))
        .map(|&x| cx.expr(x).span.start)
        .min();
    first_yield.is_some_and(|y| span.end <= y) && !spawns_before(cx, f, span)
}

/// The call runs inside `with self.app.suspend():` in a file that imports
/// Textual: the app hands the terminal to a blocking program (an editor,
/// an installer's prompt) and waits for it on purpose; its screen is
/// paused until the `with` ends.
fn while_app_suspended(cx: &FileCx, span: Span) -> bool {
    let textual = cx
        .model
        .imports
        .iter()
        .any(|i| i.target.split('.').next() == Some("textual"));
    textual
        && call_expr_at(cx, span).is_some_and(|(e, _)| {
            cx.enclosing_stmts(e).into_iter().any(|s| {
                matches!(&cx.stmt(s).kind, StmtKind::With { items, is_async: false, .. }
                if items.iter().any(|it| cx.call(cx.model.strip(it.ctx)).is_some_and(|c| {
                    c.name == "suspend" && c.args.is_empty() && c.receiver.is_some()
                })))
            })
        })
}

/// A prompt for the user (`input()`, `getpass()`: the knowledge's
/// `prompt` kind) in the coroutine a program starts its loop with
/// (`asyncio.run(run_setup())`), which starts no tasks: the program is
/// waiting for its user, and no other task of its own is there to hold
/// up.
fn prompt_in_lone_root(cx: &FileCx, span: Span) -> bool {
    let prompt = call_at(cx, span).is_some_and(|c| {
        cx.effect(c, Effect::Blocking)
            .is_some_and(|e| e.kind.as_deref() == Some("prompt"))
    });
    prompt
        && cx.model.function_ids().any(|g| {
            let func = cx.func(g);
            func.is_async
                && func.span.start <= span.start
                && span.end <= func.span.end
                && crate::python::common::only_a_loop_root(cx, g)
                && starts_no_tasks_within(cx, g, 2)
        })
}

/// A call of `g` before `span` starts a task (`asyncio.create_task(..)`,
/// or a function of the file that does): that task exists, and waits. (A
/// call in another arm of an `if` or `match` than `span` does not run.)
fn spawns_before(cx: &FileCx, g: FuncId, span: Span) -> bool {
    cx.body_calls(g).any(|e| {
        let before = cx.expr(e).span;
        before.end <= span.start && !other_branch(cx, &cx.func(g).body, before, span) && {
            let c = cx.call(e).unwrap();
            crate::python::common::is_task_spawn(cx, c)
                || cx
                    .callee_in_file(c)
                    .is_some_and(|h| h != g && !starts_no_tasks_within(cx, h, 1))
        }
    })
}

/// [`starts_no_tasks`] for `f` and the functions of the file it calls,
/// `depth` calls down (`await start_workers()` spawns for it).
fn starts_no_tasks_within(cx: &FileCx, f: FuncId, depth: u32) -> bool {
    starts_no_tasks(cx, f)
        && cx.body_calls(f).all(|e| {
            cx.call(e)
                .and_then(|c| cx.callee_in_file(c))
                .is_none_or(|h| h == f || depth == 0 || starts_no_tasks_within(cx, h, depth - 1))
        })
}

/// The call runs in the coroutine a new loop is started with
/// (`asyncio.run(main())`, `anyio.run(_main, path)`), before its first
/// `await` or after awaits that left nothing running
/// ([`starts_nothing_before`]): no other task exists yet, so it holds up
/// nothing. The
/// coroutine function must be used nowhere else in the file (awaited from
/// another coroutine, its loop may be busy).
fn before_other_tasks(cx: &FileCx, span: Span) -> bool {
    cx.model.function_ids().any(|g| {
        let func = cx.func(g);
        func.is_async
            && func.span.start <= span.start
            && span.end <= func.span.end
            && (crate::python::common::only_a_loop_root(cx, g) || dispatched_subcommand(cx, g))
            && (nothing_else_yet(cx, g, span)
                || (own_root(cx, g)
                    && !spawns_before(cx, g, span)
                    && starts_nothing_before(cx, g, span)))
    })
}

/// `a` and `b` sit in different arms of one `if` or `match` of `body`
/// (`case ["grant"]: await grant()` and `case ["scaffold"]: scaffold()`)
/// that no loop repeats: at most one of them runs.
fn other_branch(cx: &FileCx, body: &Block, a: Span, b: Span) -> bool {
    let holds = |block: &Block, x: Span| {
        block.iter().any(|&s| {
            let sp = cx.stmt(s).span;
            sp.start <= x.start && x.end <= sp.end
        })
    };
    unsnarl_model::walk::stmts_in_block(cx.model, body)
        .into_iter()
        .filter(|&s| crate::python::common::enclosing_loop(cx, s).is_none())
        .any(|s| match &cx.stmt(s).kind {
            StmtKind::If { then, orelse, .. } => {
                (holds(then, a) && holds(orelse, b)) || (holds(orelse, a) && holds(then, b))
            }
            StmtKind::Switch { cases, .. } => {
                let arm = |x: Span| cases.iter().position(|c| holds(&c.body, x));
                matches!((arm(a), arm(b)), (Some(i), Some(j)) if i != j)
            }
            _ => false,
        })
}

/// The finding sits in an `except` handler that retries the blocking call
/// that is the whole `try` body and is reported there too
/// (`try: ex.shutdown(cancel_futures=True) except TypeError: ex.shutdown()`,
/// the fallback for an older library): one blocking action, one finding,
/// at the call that runs first.
fn repeats_a_reported_try_call(cx: &FileCx, f: &Finding, all: &[Finding]) -> bool {
    let covering = |block: &Block| match (block.first(), block.last()) {
        (Some(&first), Some(&last)) => {
            Some(Span::new(cx.stmt(first).span.start, cx.stmt(last).span.end))
        }
        _ => None,
    };
    cx.model.stmts.iter().any(|st| {
        // The `try` holds that call alone, so the handler runs only when it
        // failed: a retry, not a second wait after it succeeded.
        let StmtKind::Try { body, handlers, .. } = &st.kind else {
            return false;
        };
        let ([_], Some(tried)) = (body.as_slice(), covering(body)) else {
            return false;
        };
        handlers
            .iter()
            .any(|h| covering(&h.body).is_some_and(|b| b.contains(f.span)))
            && all.iter().any(|other| {
                other.span != f.span && tried.contains(other.span) && other.message == f.message
            })
    })
}

/// `q.get()` right after `while q.empty(): await asyncio.sleep(0)`: the
/// loop gave way until the queue had an item, and nothing awaits between
/// its last check and the `get`, so it returns at once.
fn after_empty_wait(cx: &FileCx, span: Span) -> bool {
    cx.model.stmts.iter().enumerate().any(|(i, st)| {
        let StmtKind::While { cond, body, .. } = &st.kind else {
            return false;
        };
        let Some(queue) = cx
            .call(*cond)
            .filter(|c| c.name == "empty" && c.args.is_empty())
            .and_then(|c| c.receiver)
            .and_then(|r| cx.model.dotted(r))
        else {
            return false;
        };
        if crate::util::awaits_in_block(cx.model, body).is_empty() {
            return false;
        }
        let Some(next) = crate::util::next_stmt(cx, StmtId(i as u32)) else {
            return false;
        };
        cx.stmt(next).span.contains(span)
            && crate::util::awaits_in_block(cx.model, &vec![next]).is_empty()
            && unsnarl_model::walk::exprs_in_block(cx.model, &vec![next])
                .into_iter()
                .any(|e| {
                    cx.expr(e).span == span
                        && cx.call(e).is_some_and(|c| {
                            c.name == "get"
                                && c.receiver.and_then(|r| cx.model.dotted(r)).as_deref()
                                    == Some(queue.as_str())
                        })
                })
    })
}

/// Inside `try:` with `except BlockingIOError`: a socket in non-blocking
/// mode, where the call returns at once or raises.
fn in_nonblocking_try(cx: &FileCx, span: Span) -> bool {
    cx.model.stmts.iter().any(|s| {
        let StmtKind::Try { body, handlers, .. } = &s.kind else {
            return false;
        };
        let (Some(&first), Some(&last)) = (body.first(), body.last()) else {
            return false;
        };
        let covered = Span::new(cx.stmt(first).span.start, cx.stmt(last).span.end);
        covered.contains(span)
            && handlers.iter().any(|h| {
                h.types.iter().any(|t| {
                    matches!(
                        t.as_str(),
                        "BlockingIOError" | "ssl.SSLWantReadError" | "ssl.SSLWantWriteError"
                    )
                })
            })
    })
}

/// A send or receive on a socket the file switches to non-blocking mode
/// (`sock.setblocking(False)` on the same name anywhere in the file, or on
/// the one a local alias was taken from, `sock = self.sock`, as
/// where a coroutine that opens the socket hands it to a sender): it
/// returns at once or raises. A `sendto` counts
/// only when its host is an IP address (a literal, or a module constant
/// bound to one), since a host name is resolved first, and that blocks.
fn on_nonblocking_socket(cx: &FileCx, span: Span) -> bool {
    let Some((e, c)) = call_expr_at(cx, span) else {
        return false;
    };
    if c.name != "sendto" && !crate::shared::blocking::returns_at_once_when_nonblocking(cx.model, c)
    {
        return false;
    }
    let Some(sock) = c.receiver.and_then(|r| cx.model.dotted(r)) else {
        return false;
    };
    if readied_just_before(cx, e, &sock) {
        return c.name != "sendto" || !c.positional(1).is_some_and(|a| names_a_host(cx, a));
    }
    if c.name == "sendto" && !c.positional(1).is_some_and(|a| names_ip_host(cx, a)) {
        return false;
    }
    let nonblocking = crate::shared::blocking::nonblocking_sockets(cx.model);
    // `sock = self.sock` first: a local alias of the object's socket.
    let alias_of = || {
        let mut bound = crate::python::common::values_bound_to(cx, cx.func_of(e), &sock);
        let first = bound.next().flatten().and_then(|v| cx.model.dotted(v));
        first.filter(|_| bound.next().is_none())
    };
    nonblocking.contains(&sock) || alias_of().is_some_and(|a| nonblocking.contains(&a))
}

/// The statement before the call's awaits the socket's readiness (`await
/// anyio.wait_writable(sock)`, trio's `wait_readable`): the call that
/// follows finds it ready and returns at once.
fn readied_just_before(cx: &FileCx, call: ExprId, sock: &str) -> bool {
    let Some(prev) = cx
        .tree
        .enclosing_stmt(call)
        .and_then(|s| crate::util::prev_stmt(cx, s))
    else {
        return false;
    };
    matches!(cx.stmt(prev).kind, StmtKind::Expr(x)
    if matches!(cx.expr(x).kind, ExprKind::Await(w) if cx.call(w).is_some_and(|k| {
        matches!(k.name.as_str(), "wait_writable" | "wait_readable"
            | "wait_socket_writable" | "wait_socket_readable")
            && k.positional(0).and_then(|a| cx.model.dotted(a)).as_deref() == Some(sock)
    })))
}

/// A `sendto` address written with a host name in it (`("example.com",
/// 53)`): the call resolves it first, and that blocks.
fn names_a_host(cx: &FileCx, addr: ExprId) -> bool {
    match &cx.expr(cx.model.strip(addr)).kind {
        ExprKind::Collection { elems, .. } => elems.first().is_some_and(|&h| {
            matches!(cx.model.literal(h), Some(Lit::Str(s))
                if s.parse::<std::net::IpAddr>().is_err())
        }),
        _ => false,
    }
}

/// The call reported at `span`.
fn call_at<'a>(cx: &FileCx<'a>, span: Span) -> Option<&'a Call> {
    call_expr_at(cx, span).map(|(_, c)| c)
}

/// [`call_at`], with the call's expression.
fn call_expr_at<'a>(cx: &FileCx<'a>, span: Span) -> Option<(ExprId, &'a Call)> {
    let e = ExprId(cx.model.exprs.iter().position(|x| x.span == span)? as u32);
    cx.call(e).map(|c| (e, c))
}

/// `shutil.move(tmp, os.path.splitext(tmp)[0])`, `shutil.move(tmp,
/// tmp.with_suffix(""))`: the destination is in the source's own
/// directory, so the move is one `rename` of a directory entry, not a copy
/// (a download's `.temp` file taking its final name).
fn renames_in_place(cx: &FileCx, span: Span) -> bool {
    let Some((e, c)) = call_expr_at(cx, span) else {
        return false;
    };
    if c.target.as_deref() != Some("shutil.move") {
        return false;
    }
    let (Some(src), Some(dst)) = (c.positional(0), c.positional(1)) else {
        return false;
    };
    // `f"{path}.temp.mp4"`, written there or bound to a local
    // (`temp_output = f"{video_path}.temp.mp4"`).
    let suffixed = |v: ExprId| suffixed_name_of(cx, v, dst);
    if suffixed(src)
        || cx.model.name_of(src).is_some_and(|n| {
            let mut bound = crate::python::common::values_bound_to(cx, cx.func_of(e), n).peekable();
            bound.peek().is_some() && bound.all(|v| v.is_some_and(suffixed))
        })
    {
        return true;
    }
    // `str(dst)`, `os.fspath(p)`, `Path(p)`: the path inside.
    let unwrapped = |x: ExprId| {
        let x = cx.model.strip(x);
        cx.call(x)
            .filter(|k| {
                matches!(
                    k.target.as_deref(),
                    Some("pathlib.Path" | "builtins.str" | "os.fspath")
                ) && k.args.len() == 1
            })
            .and_then(|k| k.positional(0))
            .unwrap_or(x)
    };
    let Some(src) = cx.model.dotted(unwrapped(src)) else {
        return false;
    };
    let f = cx.func_of(e);
    // `tmp`, or `Path(tmp)`, `str(tmp)`: the source path itself.
    let is_src = |x: ExprId| cx.model.dotted(unwrapped(x)).as_deref() == Some(src.as_str());
    let beside = |v: ExprId| {
        let v = cx.model.strip(v);
        // `str(Path(tmp).with_suffix(""))`
        let v = cx
            .call(v)
            .filter(|k| {
                matches!(k.target.as_deref(), Some("builtins.str" | "os.fspath"))
                    && k.args.len() == 1
            })
            .and_then(|k| k.positional(0))
            .unwrap_or(v);
        // `os.path.splitext(tmp)[0]`
        if let ExprKind::Index { obj, index } = &cx.expr(v).kind {
            return cx.model.int_value(*index) == Some(0)
                && cx.call(*obj).is_some_and(|k| {
                    k.target.as_deref() == Some("os.path.splitext")
                        && k.positional(0).is_some_and(is_src)
                });
        }
        // `tmp.with_suffix("")`, `tmp.with_name(name)`
        cx.call(v).is_some_and(|k| {
            matches!(k.name.as_str(), "with_suffix" | "with_name" | "with_stem")
                && k.receiver.is_some_and(is_src)
        })
    };
    // Also through a local (`backup = dst.with_suffix(".bak")`, then
    // `shutil.move(str(dst), str(backup))`).
    beside(dst)
        || cx.model.name_of(unwrapped(dst)).is_some_and(|n| {
            let mut bound = crate::python::common::values_bound_to(cx, f, n).peekable();
            bound.peek().is_some() && bound.all(|v| v.is_some_and(beside))
        })
}

/// `src` is `dst`'s own name with a suffix, written as an f-string
/// (`shutil.move(f"{video_path}.temp.mp4", video_path)`) or made by
/// `dst.with_suffix(".tmp")`: the same directory, so the move is one
/// rename.
fn suffixed_name_of(cx: &FileCx, src: ExprId, dst: ExprId) -> bool {
    let Some(dst) = cx.model.dotted(dst) else {
        return false;
    };
    // `tmp = dest.with_suffix(".tmp")`: a sibling of the destination.
    if let Some(k) = cx.call(cx.model.strip(src))
        && matches!(k.name.as_str(), "with_suffix" | "with_name" | "with_stem")
        && k.receiver
            .is_some_and(|r| cx.model.dotted(r).as_deref() == Some(dst.as_str()))
    {
        return true;
    }
    let text = cx.source(cx.expr(src).span);
    let Some(rest) = ["f\"{", "f'{"]
        .iter()
        .find_map(|open| text.strip_prefix(open))
        .and_then(|r| r.strip_prefix(dst.as_str()))
        .and_then(|r| r.strip_prefix('}'))
    else {
        return false;
    };
    let suffix = rest.trim_end_matches(['"', '\'']);
    !suffix.is_empty() && !suffix.contains(['/', '\\', '{', '"', '\''])
}

/// `socket.getaddrinfo("239.255.255.250", port)`: a numeric address is
/// parsed, not looked up, so the call returns at once.
fn resolves_an_address(cx: &FileCx, span: Span) -> bool {
    call_at(cx, span).is_some_and(|c| {
        matches!(
            c.target.as_deref(),
            Some("socket.getaddrinfo" | "socket.gethostbyname")
        ) && c.positional(0).is_some_and(|h| is_ip_host(cx, h))
    })
}

/// An address tuple whose host is an IP address (or `<broadcast>`),
/// written out or a module-level name bound to one.
fn names_ip_host(cx: &FileCx, addr: ExprId) -> bool {
    let ExprKind::Collection { elems, .. } = &cx.expr(cx.model.strip(addr)).kind else {
        return false;
    };
    elems.first().is_some_and(|&host| is_ip_host(cx, host))
}

/// A host that is an IP address (or `<broadcast>`): a literal, or a
/// module-level name bound once to one.
fn is_ip_host(cx: &FileCx, host: ExprId) -> bool {
    crate::shared::blocking::module_literal(cx.model, host)
        .is_some_and(|h| h == "<broadcast>" || h.parse::<std::net::IpAddr>().is_ok())
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import queue

results = queue.Queue(maxsize=100)

async def report(x):
    results.put(x)  # expect
"#,
        r#"
import socket


def port_open(host, port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(2)
        return sock.connect_ex((host, port)) == 0


async def health(host):
    # A probe of another machine waits up to two seconds for its answer.
    return port_open(host, 443)  # expect
"#,
        r#"
# file: dmn/daemon.py
import asyncio
from pathlib import Path


class Daemon:
    def __init__(self, pidfile):
        self.pidfile = Path(pidfile)

    async def start(self):
        asyncio.create_task(self.serve())
        while True:
            await asyncio.sleep(5)
            # The server task is running beside this loop by now.
            if not self.pidfile.read_text().strip():  # expect
                break

    async def serve(self):
        await asyncio.sleep(3600)

# file: dmn/cli.py
import asyncio
import click
from dmn.daemon import Daemon


@click.command()
def start():
    d = Daemon("/run/d.pid")
    asyncio.run(d.start())
"#,
        r#"
import socket


async def reachable(host, port):
    # Another machine: the connect waits for its answer, or the timeout.
    try:
        socket.create_connection((host, port), timeout=5).close()  # expect
        return True
    except OSError:
        return False
"#,
        r#"
import pymysql


class Store:
    def __init__(self):
        self.conn = pymysql.connect(host="db")

    def user(self, uid):
        with self.conn.cursor() as cur:
            cur.execute("SELECT * FROM users WHERE id = %s", (uid,))
            return cur.fetchone()


store = Store()


async def handler(uid):
    return store.user(uid)  # expect
"#,
        r#"
from kubernetes import client, config


async def list_pods(namespace):
    config.load_kube_config()  # expect
    v1 = client.CoreV1Api()
    return v1.list_namespaced_pod(namespace)  # expect
"#,
        r#"
import os


async def template(name):
    # The file name comes from the caller: any file next to the module.
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, name)) as f:  # expect
        return f.read()
"#,
        r#"
import httpx


class Gateway:
    def __init__(self):
        self._client = httpx.Client(timeout=5)

    def get(self, path):
        return self._client.get(path)


async def call_tool(state, path):
    gw: Gateway | None = state["gateway"]
    if gw is None:
        return None
    return gw.get(path)  # expect
"#,
        r#"
import asyncio
import json

async def load(path):
    with open(path) as f:  # expect
        version = f.readline()
        rest = await asyncio.to_thread(json.load, f)
    return version, rest
"#,
        r#"
import shutil
from pathlib import Path

def refresh(src: Path, dst: Path, stamp: Path):
    # Tests one path, writes another: the copy runs on every call.
    if not stamp.exists():
        shutil.copy2(src, dst)

async def handle(src, dst, stamp):
    refresh(src, dst, stamp)  # expect
"#,
        r#"
import requests

_session = None

def get_session():
    global _session
    if _session is None:
        _session = requests.Session()
    return _session

async def fetch(url):
    return get_session().get(url, timeout=10)  # expect
"#,
        r#"
from huggingface_hub import hf_hub_download

async def load_config(repo_id):
    # Fetches the file from the Hub when the cache does not have it.
    return hf_hub_download(repo_id=repo_id, filename="config.json")  # expect
"#,
        r#"
import sqlite3

import requests

URL = "http://display:5077"
_refreshing = False


async def refresh(path):
    # A flag, not a singleton: every refresh after the first one waits too.
    global _refreshing
    if _refreshing:
        return
    _refreshing = True
    conn = sqlite3.connect(path)  # expect
    conn.close()
    _refreshing = False


_display = None


def display():
    # Kept only when the check passes: until then every call asks again.
    global _display
    if _display is None:
        candidate = Display(URL)
        if requests.get(URL + "/health", timeout=2).ok:
            _display = candidate
    return _display


async def show(code):
    return display().render(code)  # expect
"#,
        r#"
import json
import os

def save_events(events):
    # A record per event, then a wait for the disk.
    with open("events.ndjson", "a") as f:
        for e in events:
            f.write(json.dumps(e) + "\n")

def save_durably(event):
    with open("events.ndjson", "a") as f:
        f.write(json.dumps(event) + "\n")
        os.fsync(f.fileno())

async def handle(request):
    save_events(request.events)  # expect
    save_durably(request.event)  # expect
    return await request.respond()
"#,
        r#"
import asyncio
import json

import click
import httpx


def _run(coro):
    try:
        return asyncio.run(coro)
    finally:
        click.echo("done")


@click.command()
@click.argument("offer")
def open_session(offer):
    async def _go():
        async with httpx.AsyncClient() as api:
            opened = (await api.post("/sessions", json={"offer": offer})).json()
        heartbeat = asyncio.create_task(_beat(opened["id"]))
        # The heartbeat task is already running: it waits for this write.
        with open("settings.json", "w") as f:  # expect
            json.dump({"last_session": opened["id"]}, f)
        await heartbeat

    _run(_go())
"#,
        r#"
import time
import requests
import subprocess

async def handler(req):
    time.sleep(1)  # expect
    r = requests.get("http://x")  # expect
    out = subprocess.run(["ls"])  # expect
    with open("/tmp/x") as f:  # expect
        data = f.read()
    name = input()  # expect
"#,
        r#"
import time as t
from time import sleep as nap
from urllib.request import urlopen

async def f():
    t.sleep(1)  # expect
    nap(2)  # expect
    urlopen("http://x")  # expect
"#,
        r#"
import sqlite3, socket

async def q():
    conn = sqlite3.connect("db.sqlite")  # expect
    conn.execute("select 1")  # expect
    socket.gethostbyname("example.com")  # expect
"#,
        r#"
import time

def read_config():
    with open("cfg.toml") as f:
        return f.read()

def load():
    return read_config()

async def handler():
    cfg = load()  # expect
"#,
        r#"
# file: app/util.py
import time

def slow_helper():
    time.sleep(5)

# file: app/views.py
from .util import slow_helper

async def view():
    slow_helper()  # expect
"#,
        r#"
# file: agent/code_tools.py
async def find_definition(path, name):
    with open(path) as f:  # expect
        source = f.read()
    return name in source

# file: agent/main.py
from .code_tools import find_definition

def build(Agent):
    # The agent awaits its tools on its own busy loop.
    return Agent(tools=[find_definition])

# file: agent/check.py
import asyncio
from .code_tools import find_definition

def main():
    print(asyncio.run(find_definition("setup.py", "setup")))
"#,
        r#"
import asyncio, json

def _read_specs(path):
    with open(path) as f:
        return json.load(f)

def _prepare(client):
    _watch(client)

def _watch(client):
    _keep_alive(client)

def _keep_alive(client):
    # Four calls down, a task that keeps running beside the command.
    client.pinger = asyncio.create_task(client.ping_forever())

async def main(client, args):
    await client.login()
    _prepare(client)
    specs = _read_specs(args.file)  # expect
    for s in specs:
        await client.create_task(s)

def cli(client, args):
    return asyncio.run(main(client, args))
"#,
        r#"
import json

_config = None

def load_config():
    global _config
    # Read again on every call: the cache is written but never consulted.
    with open("config.json") as f:
        _config = json.load(f)
    return _config

async def handle(request):
    return load_config()["greeting"]  # expect
"#,
        r#"
# file: tool/server.py
import json

async def serve(spec_path, transport):
    with open(spec_path) as f:  # expect
        spec = json.load(f)
    await transport.run(spec)

# file: tool/cli.py
import asyncio
from .server import serve

def main(args):
    asyncio.run(serve(args.spec, args.transport))

# file: tool/hub.py
import asyncio
from .server import serve

async def start_all(specs, transport):
    # Several servers share this loop: each one's blocking read stalls the others.
    return [asyncio.create_task(serve(s, transport)) for s in specs]
"#,
        r#"
# file: agent/kernel.py
import sqlite3


class Kernel:
    async def answer(self, query):
        with sqlite3.connect("audit.db") as db:  # expect
            return db.execute("SELECT ?", (query,)).fetchone()  # expect

# file: agent/cli.py
import asyncio
from agent.kernel import Kernel


def main(query):
    return asyncio.run(Kernel().answer(query))

# file: agent/web.py
async def handle(request, engine):
    # `engine` may be the kernel (its type is not known here), and many
    # requests share this loop.
    return await engine.answer(request.query)
"#,
        r#"
# file: chat/relay.py
import asyncio
from contextlib import AsyncExitStack

import websockets


class Relay:
    def __init__(self):
        self.stack = AsyncExitStack()
        self.peers = set()

    async def open(self, port):
        await self.stack.enter_async_context(websockets.serve(self.join, "0.0.0.0", port))

    async def join(self, ws):
        self.peers.add(ws)
        await ws.wait_closed()

    async def loop(self):
        while True:
            # The server keeps serving its peers while this waits for a line.
            line = input("> ")  # expect
            for ws in list(self.peers):
                await ws.send(line)


async def main(port):
    relay = Relay()
    await relay.open(port)
    await relay.loop()


if __name__ == "__main__":
    asyncio.run(main(8765))
"#,
        r#"
# file: agent/kernel.py
import sqlite3


class Kernel:
    async def run(self, query):
        answer = await self._answer(query)
        await self._audit(query, answer)
        return answer

    async def _answer(self, query):
        return query.upper()

    async def _audit(self, query, answer):
        with sqlite3.connect("audit.db") as db:  # expect
            db.execute("INSERT INTO log VALUES (?, ?)", (query, answer))  # expect

# file: agent/cli.py
import asyncio
from agent.kernel import Kernel


def ask(query):
    kernel = Kernel()
    return asyncio.run(kernel.run(query))


async def ask_all(queries):
    # Every query runs beside the others: one's audit write stalls them all.
    kernel = Kernel()
    return await asyncio.gather(*(kernel.run(q) for q in queries))
"#,
        r#"
# file: agent/kernel.py
import sqlite3


class Kernel:
    async def run(self, query):
        await self._audit(query)
        return query.upper()

    async def _audit(self, query):
        with sqlite3.connect("audit.db") as db:  # expect
            db.execute("INSERT INTO log VALUES (?)", (query,))  # expect

# file: agent/cli.py
import asyncio
from agent.heartbeat import start_heartbeat
from agent.kernel import Kernel


async def main(query):
    # The heartbeat task keeps running while the kernel works.
    start_heartbeat()
    return await Kernel().run(query)


def ask(query):
    return asyncio.run(main(query))

# file: agent/heartbeat.py
import asyncio


def start_heartbeat():
    return asyncio.get_running_loop().create_task(asyncio.sleep(3600))
"#,
        r#"
# file: tool/server.py
import json

async def serve(spec_path, transport):
    await transport.start()
    with open(spec_path) as f:  # expect
        spec = json.load(f)
    await transport.run(spec)

# file: tool/cli.py
import asyncio
from .server import serve

def main(args):
    asyncio.run(serve(args.spec, args.transport))
"#,
        r#"
import queue, threading

jobs = queue.Queue(maxsize=10)
lock = threading.Lock()

async def consume():
    item = jobs.get()  # expect
    lock.acquire()  # expect
    jobs.put(item, True)  # expect
    jobs.get(block=True)  # expect
"#,
        r#"
from concurrent.futures import ThreadPoolExecutor

pool = ThreadPoolExecutor(4)

def close_pool():
    pool.shutdown()

async def stop():
    close_pool()  # expect
"#,
        r#"
import os
import socket

async def reap(pid):
    os.waitpid(pid, 0)  # expect

async def resolve(host):
    return socket.getaddrinfo(host, 443)  # expect
"#,
        r#"
import socket as _socket

_NUMERIC_ONLY = _socket.AI_NUMERICSERV

async def resolve(host, port, flags=0):
    return _socket.getaddrinfo(host, port, 0, 0, 0, flags | _NUMERIC_ONLY)  # expect
"#,
        r#"
import asyncio
import queue

class FakeSocket:
    def __init__(self):
        self.inbox = queue.Queue()

    async def next_message(self):
        # Yields once; the queue may still be empty, and then `get` blocks.
        if self.inbox.empty():
            await asyncio.sleep(0)
        return self.inbox.get()  # expect
"#,
        r#"
import asyncio
import os
import socket

_IS_SYNC = os.environ.get("SYNC") == "1"

async def resolve(host, port):
    if not _IS_SYNC:
        return await asyncio.get_running_loop().getaddrinfo(host, port)
    else:
        return socket.getaddrinfo(host, port)  # expect

async def legacy_resolve(host, port):
    if False:
        return await asyncio.get_running_loop().getaddrinfo(host, port)
    else:
        return socket.getaddrinfo(host, port)  # expect
"#,
        r#"
import concurrent.futures
import queue
import time

class Plugin:
    def __init__(self):
        self._executor = concurrent.futures.ThreadPoolExecutor()

    async def teardown(self):
        try:
            self._executor.shutdown(cancel_futures=True)  # expect
        except TypeError:
            self._executor.shutdown()

    async def retry(self):
        try:
            self._executor.shutdown(cancel_futures=True)  # expect
        except RuntimeError:
            time.sleep(1)  # expect

    async def report(self, results: queue.Queue, work):
        try:
            results.put("started")  # expect
            await work()
        except Exception as e:
            results.put(e)  # expect
"#,
        r#"
import socket

_FLAGS = socket.AI_NUMERICHOST
_FLAGS = socket.AI_CANONNAME

async def resolve(host, port):
    return socket.getaddrinfo(host, port, 0, 0, 0, _FLAGS)  # expect
"#,
        r#"
import asyncio


async def memory_available():
    with open("/var/lib/app/meminfo") as f:  # expect
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    await asyncio.sleep(0)
"#,
        r#"
import asyncio
import json
import typer

app = typer.Typer()

# The command runs uploads concurrently: the blocking read between them
# stalls every upload in flight.
@app.command()
async def upload(paths: list[str]):
    tasks = [asyncio.create_task(send(p)) for p in paths]
    with open("manifest.json") as f:  # expect
        manifest = json.load(f)
    await asyncio.gather(*tasks)
    return manifest
"#,
        r#"
import sqlite3

async def load_rows(rows):
    db = sqlite3.connect("app.db")  # expect
    return db
"#,
        r#"
import os

async def write_private(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)  # expect
    with os.fdopen(fd, "w") as f:
        f.write(data)
"#,
        r#"
import json
import sys

import anyio

async def _main(path):
    server = await launch()
    # The server's tasks are running: this read holds them all up.
    with open(path) as f:  # expect
        cfg = json.load(f)
    await server.reconfigure(cfg)

def main():
    anyio.run(_main, sys.argv[1])
"#,
        r#"
import asyncio
import json

async def load_and_serve(path):
    with open(path) as f:  # expect
        cfg = json.load(f)
    await serve(cfg)

async def supervise(paths):
    # Also awaited by a coroutine that runs alongside others.
    await asyncio.gather(*(load_and_serve(p) for p in paths))

if __name__ == "__main__":
    asyncio.run(load_and_serve("app.json"))
"#,
        r#"
import urllib.request


def from_uri(uri):
    if not uri.startswith(("data:", "https:")):
        raise ValueError("unsupported URI")
    with urllib.request.urlopen(uri, timeout=10) as response:
        return response.read()


async def set_avatar(client, avatar):
    await client.patch_me(avatar=from_uri(avatar))  # expect
"#,
        r#"
import socket

async def notify(sock: socket.socket, host, payload):
    sock.setblocking(False)
    # A host name is resolved before the datagram goes out: that blocks.
    sock.sendto(payload, (host, 514))  # expect
"#,
        r#"
import asyncio

# A task runs beside the prompt: it stalls while the user types.
async def main():
    heartbeat = asyncio.create_task(keep_alive())
    name = input("name: ")  # expect
    await register(name)
    heartbeat.cancel()

asyncio.run(main())
"#,
        r#"
import asyncio

async def start_workers(n):
    return [asyncio.create_task(work(i)) for i in range(n)]

# The prompt holds up the workers a helper started.
async def main():
    workers = await start_workers(4)
    answer = input("continue? ")  # expect
    for w in workers:
        w.cancel()

asyncio.run(main())
"#,
        r#"
import csv

def read_rows(path):
    with open(path) as f:
        yield from csv.reader(f)

# Iterated here: the file is read on the loop.
async def count_rows(path):
    n = 0
    for _ in read_rows(path):  # expect
        n += 1
    return n
"#,
        r#"
from concurrent.futures import Future

# Checked, but the result is read on the other path.
async def wrap(future: Future):
    if future.done():
        return None
    return future.result()  # expect
"#,
        r#"
import sqlite3

# The connection is kept on the object; each query still blocks the loop.
class Store:
    def __init__(self, path):
        self.db = sqlite3.connect(path)

    async def save(self, row):
        self.db.execute("insert into t values (?)", row)  # expect
"#,
        r#"
import asyncio
import sys

import requests

# A later round of the loop runs the other branch after the first awaited.
async def main(url, attempts):
    for attempt in range(attempts):
        if attempt == 0:
            await connect(url)
        else:
            print(requests.get(url, timeout=10).status_code)  # expect


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], 3))
"#,
        r#"
import socket

import anyio


# Ready to write, but the host name is looked up first, on the loop.
async def send_probe(sock: socket.socket, packet):
    await anyio.wait_writable(sock)
    sock.sendto(packet, ("probe.example.com", 53))  # expect
"#,
        r#"
import asyncio
import json


async def main(args):
    asyncio.create_task(heartbeat(args.host))
    if args.cmd == "status":
        await run_status(args)


async def run_status(args):
    status = await query(args.host)
    # The heartbeat task started above waits while this file is written.
    with open(args.out, "w") as f:  # expect
        json.dump(status, f)


asyncio.run(main(parse()))
"#,
        r#"
import asyncio
import subprocess
from pathlib import Path

import click

@click.command()
@click.argument("path")
def review(path):
    asyncio.run(_review(path))

async def _review(path):
    beat = asyncio.create_task(send_heartbeats())
    analysis = await analyze(path)
    subprocess.run(["black", path])  # expect
    beat.cancel()
"#,
        r#"
import asyncio
import json

from aiohttp import web

async def main(app, path):
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, port=8080)
    await site.start()
    # The server is answering requests now: this read holds them all up.
    with open(path) as f:  # expect
        app["cfg"] = json.load(f)
    await asyncio.Event().wait()

if __name__ == "__main__":
    asyncio.run(main(web.Application(), "cfg.json"))
"#,
        r#"
import asyncio
import sqlite3

from .client import make_client

async def main():
    client = make_client()
    async with client:
        me = await client.get_me()
        # The client's connection tasks run beside this query.
        rows = sqlite3.connect("cache.db").execute("SELECT ?", (me,)).fetchall()  # expect
        await client.send(rows)

asyncio.run(main())
"#,
        r#"
import asyncio
import json

async def _export(report, path):
    with open(path, "w") as f:  # expect
        json.dump(report, f)

async def main(reports):
    # Every export runs beside the others.
    await asyncio.gather(*(_export(r, f"out{i}.json") for i, r in enumerate(reports)))
    await _export(reports[0], "first.json")

asyncio.run(main([]))
"#,
        r#"
import discord
from discord.ext import commands

import requests

bot = commands.Bot(command_prefix="!", intents=discord.Intents.default())

@bot.command()
async def check(ctx, user_id):
    r = requests.get(f"https://api.example.com/ban/{user_id}", timeout=10)  # expect
    await ctx.send(r.text)
"#,
        r#"
import asyncio
import json
import sys

async def fetch(client, url):
    with open("cache/" + url.replace("/", "_")) as f:  # expect
        cached = json.load(f)
    return cached or await client.get(url)

async def main(client, urls):
    # The fetches run side by side: each read holds up the others.
    return await asyncio.gather(*(fetch(client, u) for u in urls))

if __name__ == "__main__":
    asyncio.run(main(None, sys.argv[1:]))
"#,
        r#"
import asyncio
import json

async def export(source, path):
    data = await fetch_all(source)
    # The application's loop runs its other tasks beside this one.
    with open(path, "w") as f:  # expect
        json.dump(data, f)

def export_now(app, source, path):
    app.loop.run_until_complete(export(source, path))
"#,
        r#"
import asyncio
import json

_loop = None

def _shared_loop():
    # One loop for every call: tasks an earlier call left run beside this.
    global _loop
    if _loop is None:
        _loop = asyncio.new_event_loop()
    return _loop

async def export(source, path):
    data = await fetch_all(source)
    with open(path, "w") as f:  # expect
        json.dump(data, f)

def export_now(source, path):
    loop = _shared_loop()
    loop.run_until_complete(export(source, path))
"#,
        r#"
import asyncio
import sqlite3
from contextlib import asynccontextmanager

from fastapi import FastAPI

@asynccontextmanager
async def lifespan(app: FastAPI):
    # The refresher runs already, and waits for the database to open.
    refresher = asyncio.create_task(refresh_forever(app))
    app.state.db = sqlite3.connect("app.db")  # expect
    yield
    refresher.cancel()

app = FastAPI(lifespan=lifespan)

@app.on_event("startup")
async def warm_cache():
    app.state.poller = asyncio.create_task(poll_forever(app))
    app.state.cache = sqlite3.connect("cache.db")  # expect"#,
        r#"
import time
from contextlib import asynccontextmanager

from mcp.server.fastmcp import FastMCP

@asynccontextmanager
async def lifespan(server):
    # Runs for every client session, beside the sessions already open.
    broker = connect_broker()
    while not broker.connected:
        time.sleep(0.1)  # expect
    yield broker

mcp = FastMCP("bridge", lifespan=lifespan)
"#,
        r#"
import asyncio
import json
import threading
from pathlib import Path

LOOP = asyncio.new_event_loop()
threading.Thread(target=LOOP.run_forever, daemon=True).start()

def _run(coro):
    # Every command's coroutine shares the background loop.
    return asyncio.run_coroutine_threadsafe(coro, LOOP).result()

def databases(client):
    async def _run_it():
        token = json.loads(Path("token.json").read_text())  # expect
        print(await client.list_databases(token))

    _run(_run_it())

def _print(coro):
    print(_run(coro))

def tables(client):
    async def _run_it():
        token = json.loads(Path("token.json").read_text())  # expect
        print(await client.list_tables(token))

    _print(_run_it())
"#,
        r#"
import argparse
import asyncio

async def configure(conf):
    token = input("token> ")  # expect
    if not await check_token(token):
        return await configure(conf)
    save(conf, token)

async def run():
    args = argparse.ArgumentParser().parse_args()
    # The heartbeat runs beside the prompt, and stops while it waits.
    beat = asyncio.create_task(heartbeat())
    if args.configure:
        return await configure(args.conf)
    await send(args)
    beat.cancel()

def main():
    asyncio.run(run())
"#,
        r#"
import subprocess

from textual.app import App

class Installer(App):
    async def action_install(self) -> None:
        # The screen, its timers and workers freeze until pip is done.
        subprocess.run(["pip", "install", "--user", "rich"])  # expect
        self.notify("installed")
"#,
        r#"
import asyncio
import json

class Notifier:
    def __init__(self, path, client):
        self.path = path
        self.client = client

    def check(self):
        return asyncio.run(self._check_and_notify())

    async def handle(self, request):
        # Also run by the server's handler, beside every other request.
        await self._check_and_notify()

    async def _check_and_notify(self):
        with open(self.path) as f:  # expect
            seen = json.load(f)
        for item in await self.client.new_items(seen):
            await self.client.notify(item)
"#,
        r#"
import asyncio

import requests

class Ships:
    def get_pages(self, url):
        return asyncio.run(self.get_pages_async(url))

    async def get_pages_async(self, url):
        # The async flavour of the API: its users await it on their loops.
        return requests.get(url, timeout=10).json()  # expect
"#,
        r#"
import asyncio
import sys


class Bot:
    async def connect(self):
        while True:
            reply = await self.login()
            if "authentication failed" in reply:
                input("press enter to retry")  # expect
                continue
            await asyncio.sleep(1)
            sys.exit(0)

    async def login(self):
        await asyncio.sleep(0)
        return "ok"
"#,
    ],
    pass: &[
        r#"
import asyncio
import socket


async def discover(timeout=2.0, retries=2):
    group = ("239.255.255.250", 1900)
    message = b"M-SEARCH * HTTP/1.1\r\nMAN: ssdp:discover\r\n\r\n"
    for _ in range(retries):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
        sock.settimeout(timeout)
        sock.sendto(message, group)
        sock.setblocking(False)
        await asyncio.sleep(timeout)
"#,
        r#"
import asyncio
import sys


class Bot:
    async def connect(self):
        while True:
            reply = await self.login()
            if "authentication failed" in reply:
                print("authentication failed: check the token")
                input("press enter to exit")
                sys.exit(1)
            await asyncio.sleep(1)

    async def login(self):
        await asyncio.sleep(0)
        return "ok"
"#,
        r#"
import socket


def local_ip():
    # Connecting a UDP socket sends nothing: it only picks the route.
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect(("10.255.255.255", 1))
    ip = s.getsockname()[0]
    s.close()
    return ip


def port_in_use(port, host="127.0.0.1"):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1)
        return sock.connect_ex((host, port)) == 0


def sd_notify(path, msg):
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
        s.sendto(msg.encode(), path)


async def advertise(port):
    sd_notify("/run/systemd/notify", "READY=1")
    return local_ip(), port_in_use(port)
"#,
        r#"
import datetime


def log_reply(path, model, resp):
    stamp = datetime.datetime.now().isoformat()
    with open(path, "a") as f:
        if isinstance(resp, dict):
            text = resp["content"]
        else:
            text = str(resp)
        f.write(f"AI {stamp} {model}\n")
        f.write(text)
        f.flush()


async def complete(client, path, prompt):
    resp = await client.complete(prompt)
    # One record appended to a local log, formatted first.
    log_reply(path, "m", resp)
    return resp
"#,
        r#"
# file: dmn/daemon.py
import asyncio
from pathlib import Path


class Daemon:
    def __init__(self, pidfile):
        self.pidfile = Path(pidfile)

    async def start(self):
        # First thing on a fresh loop: nothing else runs on it yet.
        if self.pidfile.exists() and self.pidfile.read_text().strip():
            raise RuntimeError("already running")
        asyncio.create_task(self.serve())
        await asyncio.sleep(3600)

    async def serve(self):
        await asyncio.sleep(3600)

# file: dmn/cli.py
import asyncio
import click
from dmn.daemon import Daemon


@click.command()
def start():
    d = Daemon("/run/d.pid")
    asyncio.run(d.start())
"#,
        r#"
import socket

HOST = "127.0.0.1"


async def daemon_running(port):
    # A connect to this machine is accepted or refused at once.
    try:
        socket.create_connection(("localhost", port), timeout=1).close()
        return True
    except OSError:
        return False


async def probe(port):
    return socket.create_connection((HOST, port), timeout=1)
"#,
        r#"
import json
from pathlib import Path


def load_script(filename):
    js_dir = Path(__file__).parent / "js"
    js_file = js_dir / filename
    return js_file.read_text()


async def extract_assets(page):
    # This function's own `js_file`, built only from `__file__` and literals.
    js_dir = Path(__file__).parent / "js"
    js_file = js_dir / "extract_assets.js"
    with open(js_file) as f:
        return await page.evaluate(f.read())


async def translations():
    out = {}
    base = Path(__file__).parent.parent / "locales"
    for code in ["en", "fr"]:
        lang_dir = base / code
        path = lang_dir / "translation.json"
        with open(path, encoding="utf-8") as f:
            out[code] = json.load(f)
    return out
"#,
        r#"
# file: chat/client.py
import asyncio
from contextlib import AsyncExitStack

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


class Chat:
    def __init__(self):
        self.stack = AsyncExitStack()

    async def connect(self, script):
        params = StdioServerParameters(command="python", args=[script])
        read, write = await self.stack.enter_async_context(stdio_client(params))
        self.session = await self.stack.enter_async_context(ClientSession(read, write))
        await self.session.initialize()

    async def loop(self):
        while True:
            # The session's reader waits too, but nothing is lost: what the
            # server sends stays in the pipe until the next await.
            query = input("> ")
            print(await self.session.call_tool("ask", {"q": query}))


async def main(script):
    chat = Chat()
    await chat.connect(script)
    await chat.loop()


if __name__ == "__main__":
    asyncio.run(main("server.py"))
"#,
        r#"
# file: agent/kernel.py
import sqlite3


class Kernel:
    async def run(self, query):
        # One query per process, its steps one after another: the audit
        # write holds up nothing but this query.
        answer = await self._answer(query)
        await self._audit(query, answer)
        return answer

    async def _answer(self, query):
        return query.upper()

    async def _audit(self, query, answer):
        with sqlite3.connect("audit.db") as db:
            db.execute("INSERT INTO log VALUES (?, ?)", (query, answer))

# file: agent/cli.py
import asyncio
import click
from agent.kernel import Kernel


def build() -> Kernel:
    return Kernel()


@click.command()
@click.argument("query")
def ask(query):
    kernel = build()
    click.echo(asyncio.run(kernel.run(query)))
"#,
        r#"
import asyncio
import psycopg2

conn = psycopg2.connect("dbname=app")


async def first_row(sql):
    # Opening the cursor sends nothing, and its rows arrive inside `execute`
    # (on a worker thread here): `fetchone` reads them from memory.
    cur = conn.cursor()
    await asyncio.to_thread(cur.execute, sql)
    return cur.fetchone()


async def shutdown():
    # Closing sends a goodbye and closes the socket: no reply to wait for.
    conn.close()
"#,
        r#"
import os
from pathlib import Path

GUIDES = Path(__file__).parent / "guides"


async def chat_page():
    # Assets shipped inside the package: a few kilobytes from the page cache.
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "ui", "index.html"), encoding="utf-8") as f:
        return f.read()


async def guide():
    for name in ["intro.md", "advanced.md"]:
        path = GUIDES / name
        if path.exists():
            return path.read_text()
    return ""
"#,
        r#"
import asyncio
import json

async def load(path):
    # Reading and parsing run on the worker thread.
    with open(path, encoding="utf-8") as f:
        return await asyncio.to_thread(json.load, f)
"#,
        r#"
import shutil
from pathlib import Path

def token_file():
    new = Path.home() / ".cfg" / "tokens.json"
    legacy = Path("tokens.json")
    # A one-time migration: the copy makes the path the test finds missing.
    if legacy.exists() and not new.exists():
        shutil.copy2(legacy, new)
    return new

async def tokens_path():
    return token_file()
"#,
        r#"
import json
import os
import time

TRANSCRIPT = "session.ndjson"

def log_transcript(event, text):
    # One record appended: what a logging.FileHandler does per call.
    with open(TRANSCRIPT, "a", encoding="utf-8") as f:
        f.write(json.dumps({"t": time.time(), "event": event, "text": text[:500]}) + "\n")

def log_debug(message):
    open("debug.log", "a").write(message + "\n")

def check_writable(path):
    # Opened and closed: nothing is written.
    with open(path, "a"):
        pass

def dir_handle(path):
    # A handle on the directory: one lookup, no data read.
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)

async def handle(request):
    log_transcript("request", request.text)
    log_debug("handled")
    check_writable(request.out)
    os.close(dir_handle(request.root))
    return await request.respond()
"#,
        r#"
from huggingface_hub import hf_hub_download

async def is_cached(repo_id):
    # Only looks in the local cache: no request to the Hub.
    try:
        hf_hub_download(repo_id=repo_id, filename="config.json", local_files_only=True)
        return True
    except Exception:
        return False
"#,
        r#"
import json
from cryptography.fernet import Fernet

_fernet = None
_config = None

def get_fernet():
    global _fernet
    if _fernet is None:
        with open("key.bin", "rb") as f:
            _fernet = Fernet(f.read())
    return _fernet

def load_config():
    global _config
    if _config is not None:
        return _config
    with open("config.json") as f:
        _config = json.load(f)
    return _config

async def encrypt(data):
    return get_fernet().encrypt(data) + load_config()["suffix"]
"#,
        r#"
import json

_cached = None


def load_settings(force_reload=False):
    global _cached
    if _cached is not None and not force_reload:
        return _cached
    with open("settings.json") as f:
        _cached = json.load(f)
    return _cached


import sqlite3

_config = None


def get_config(reload=False):
    global _config
    if _config is None or reload:
        with open("config.json") as f:
            _config = json.load(f)
    return _config


async def handle(request):
    return {"region": load_settings()["region"], "name": get_config()["name"]}


_conn = None


async def ensure_ready():
    # Once per process: the first caller opens the shared connection.
    global _conn
    if _conn is not None:
        return
    path = await download_db()
    _conn = sqlite3.connect(str(path))
"#,
        r#"
import sqlite3
from starlette.applications import Starlette
from starlette.responses import JSONResponse


def _open(path):
    conn = sqlite3.connect(path, check_same_thread=False)
    conn.execute("pragma journal_mode=wal")
    return conn


def _read_settings(path):
    with open(path) as f:
        return f.read()


def build_app(db_path, settings_path):
    conn = None
    settings = None

    def get_conn():
        nonlocal conn
        if conn is None:
            conn = _open(db_path)
        return conn

    def get_settings():
        nonlocal settings
        if settings is None:
            settings = _read_settings(settings_path)
        return settings

    async def health(request):
        get_conn()
        return JSONResponse({"ok": True, "settings": get_settings()})

    return Starlette(routes=[("/health", health)])
"#,
        r#"
import asyncio, json

def _read_specs(path):
    with open(path) as f:
        return json.load(f)

def _validate(specs):
    return [s for s in specs if _check(s)]

def _check(spec):
    return _known_field(spec)

def _known_field(spec):
    return _field_names(spec) >= {"title"}

def _field_names(spec):
    return set(_keys(spec))

def _keys(spec):
    return list(spec)

async def main(client, args):
    await client.login()
    specs = _validate(_read_specs(args.file))
    created = []
    for s in specs:
        # A to-do API's create_task, awaited: nothing is left running.
        created.append(await client.create_task(s))
    return created

def cli(client, args):
    return asyncio.run(main(client, args))
"#,
        r#"
# file: tool/server.py
import json

async def serve(spec_path, transport):
    with open(spec_path) as f:
        spec = json.load(f)
    await transport.run(spec)

# file: tool/cli.py
import asyncio
from .server import serve

def main(args):
    asyncio.run(serve(args.spec, args.transport))
"#,
        r#"
# file: bench/evaluate.py
import subprocess

async def evaluate(args):
    return await evaluate_local(args)

async def evaluate_local(args):
    return subprocess.run(["pytest", args.path], capture_output=True)

# file: bench/cli.py
import typer

app = typer.Typer()

@app.command()
def run(path: str):
    import trio_asyncio
    from .evaluate import evaluate
    trio_asyncio.run(evaluate, path)
"#,
        r#"
# file: dl/fetch.py
import time

async def download_all(urls, get):
    for url in urls:
        await get(url)
        time.sleep(1)

# file: dl/cli.py
import asyncio
from .fetch import download_all

async def main(urls, get):
    await download_all(urls, get)

if __name__ == "__main__":
    asyncio.run(main(["https://example.org"], None))
"#,
        r#"
import shutil

async def download(client, url, video_path):
    temp_output = f"{video_path}.temp.mp4"
    await client.download(url, temp_output)
    # The finished file takes its name: one rename in the same directory.
    shutil.move(temp_output, video_path)
"#,
        r#"
import asyncio
import json

import click
import httpx


def _run(coro):
    try:
        return asyncio.run(coro)
    finally:
        click.echo("done")


async def _watch(session_id):
    poller = asyncio.create_task(_poll(session_id))
    await poller


@click.command()
@click.argument("offer")
def open_session(offer):
    async def _go():
        async with httpx.AsyncClient() as api:
            opened = (await api.post("/sessions", json={"offer": offer})).json()
        # The client is closed and nothing was started: only this command
        # waits for the settings file.
        with open("settings.json", "w") as f:
            json.dump({"last_session": opened["id"]}, f)
        await _watch(opened["id"])

    _run(_go())
"#,
        r#"
import asyncio
import json

import typer

app = typer.Typer()


def _run(coro):
    return asyncio.run(coro)


def _exec_json(coro):
    # Hands the coroutine to `_run` and prints what it returned.
    try:
        result = _run(coro)
        typer.echo(json.dumps(result, default=str))
    except ValueError as e:
        typer.echo(json.dumps({"error": str(e)}))
        raise typer.Exit(1)


@app.command()
def stock(product_id: int):
    async def _inner():
        # The first work of a new loop: nothing else runs on it yet.
        config = json.load(open("config.json"))
        async with Client(config["url"]) as client:
            return await client.stock(product_id)

    _exec_json(_inner())
"#,
        r#"
import shutil
from pathlib import Path

async def save_snapshot(client, dest: Path):
    tmp = dest.with_suffix(".tmp")
    await client.download_to(tmp)
    shutil.move(tmp, dest)
"#,
        r#"
import asyncio
import json

class Notifier:
    def __init__(self, path, client):
        self.path = path
        self.client = client

    def check(self):
        # The private method's one use: the root of a loop made for it.
        return asyncio.run(self._check_and_notify())

    async def _check_and_notify(self):
        with open(self.path) as f:
            seen = json.load(f)
        for item in await self.client.new_items(seen):
            await self.client.notify(item)
"#,
        r#"
import subprocess

from textual.app import App

class Installer(App):
    async def action_install(self) -> None:
        # The terminal goes to pip's prompts; the screen waits on purpose.
        with self.app.suspend():
            subprocess.run(["pip", "install", "--user", "rich"])
        self.notify("installed")
"#,
        r#"
import sqlite3
from contextlib import asynccontextmanager

from fastapi import FastAPI

@asynccontextmanager
async def lifespan(app: FastAPI):
    # Startup: no request is served before the yield.
    app.state.db = sqlite3.connect("app.db")
    try:
        yield
    finally:
        app.state.db.close()

app = FastAPI(lifespan=lifespan)

@app.on_event("startup")
async def startup():
    # Startup handlers finish before the first connection is accepted.
    app.state.cache = sqlite3.connect("cache.db")
"#,
        r#"
import asyncio
import json

import typer

app = typer.Typer()

def _run(coro):
    try:
        return asyncio.run(coro)
    except KeyboardInterrupt:
        raise typer.Exit(130)

@app.command()
def databases(url: str):
    async def _run_it():
        # The command's one coroutine, on the loop `_run` made for it.
        with open("token.json") as f:
            token = json.load(f)
        async with Client(url, token) as c:
            print(await c.list_databases())

    _run(_run_it())
"#,
        r#"
import argparse
import asyncio

async def configure(conf):
    token = input("token> ")
    if not await check_token(token):
        # Asks again, on the same loop, in the same line of work.
        return await configure(conf)
    save(conf, token)

async def run():
    parser = argparse.ArgumentParser()
    parser.add_argument("--configure", action="store_true")
    args = parser.parse_args()
    if args.configure:
        return await configure(args.conf)
    await send(args)

def main():
    asyncio.run(run())
"#,
        r#"
import asyncio
import json
import logging

def _request_loop():
    loop = asyncio.new_event_loop()
    loop.set_exception_handler(lambda lp, ctx: logging.warning(ctx["message"]))
    return loop

def stream(source, path):
    loop = _request_loop()
    asyncio.set_event_loop(loop)

    async def export():
        data = await fetch_all(source)
        # The loop was made for this one coroutine.
        with open(path, "w") as f:
            json.dump(data, f)

    try:
        loop.run_until_complete(export())
    finally:
        loop.close()
"#,
        r#"
import asyncio
import json
import sys

async def export(source, path):
    data = await fetch_all(source)
    with open(path, "w") as f:
        json.dump(data, f)

def main():
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(export(sys.argv[1], sys.argv[2]))
    finally:
        loop.close()
"#,
        r#"
import asyncio
import json
import sys

import httpx

async def fetch(client, url):
    r = await client.get(url)
    return r.json()

async def main(urls, out):
    async with httpx.AsyncClient(timeout=10) as client:
        results = await asyncio.gather(*(fetch(client, u) for u in urls))
    # Every fetch has finished: nothing else is on the loop.
    with open(out, "w") as f:
        json.dump(results, f)

if __name__ == "__main__":
    asyncio.run(main(sys.argv[2:], sys.argv[1]))
"#,
        r#"
import asyncio
from pathlib import Path

import click

from .providers import create_provider

@click.command()
@click.argument("path")
def review(path):
    asyncio.run(_review(path))

async def _review(path):
    provider = create_provider()
    analysis = await provider.analyze_code(path)
    await provider.close()
    text = Path(path).read_text()
    Path(path).write_text(text + analysis)
"#,
        r#"
import asyncio
import subprocess

import click

from .api import get_api

def send_notification(title, message):
    subprocess.run(["notify-send", title, message], capture_output=True)

async def watch_loop(interval):
    api = get_api()
    while True:
        for change in await api.poll_changes():
            send_notification("Task changed", change.title)
        await asyncio.sleep(interval)

@click.command()
@click.option("--interval", default=30)
def watch(interval):
    asyncio.run(watch_loop(interval))
"#,
        r#"
import asyncio
import json
import sys

from .scanner import scan

async def _export(report, path):
    with open(path, "w") as f:
        json.dump(report, f)

async def main():
    for target in sys.argv[1:]:
        report = await scan(target)
        await _export(report, target + ".json")

if __name__ == "__main__":
    asyncio.run(main())
"#,
        r#"
import socket


class AioSock:
    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.sock.setblocking(False)

    async def on_readable(self, size):
        # Called when the loop reports the socket readable.
        sock: socket.socket = self.sock
        return sock.recv(size)
"#,
        r#"
import socket

import trio


class WakeupSocketpair:
    def __init__(self):
        self.wakeup_sock: socket.socket
        self.write_sock: socket.socket
        self.wakeup_sock, self.write_sock = socket.socketpair()
        self.wakeup_sock.setblocking(False)

    def drain(self):
        # Non-blocking: returns what is there, or raises at once.
        try:
            while True:
                self.wakeup_sock.recv(2**16)
        except BlockingIOError:
            pass

    async def wait_woken(self):
        await trio.lowlevel.wait_readable(self.wakeup_sock)
        self.drain()
"#,
        r#"
import os
import shutil
from pathlib import Path


async def handle_download(self, temp_file_path):
    await self.fetch_into(temp_file_path)
    # Same directory, ".temp" dropped: a rename, not a copy.
    file_path = os.path.splitext(temp_file_path)[0]
    shutil.move(temp_file_path, file_path)
    return file_path


async def save_download(self, temp_file_path):
    await self.fetch_into(temp_file_path)
    file_path = str(Path(temp_file_path).with_suffix(""))
    shutil.move(temp_file_path, file_path)
    return file_path
"#,
        r#"
import asyncio
import functools
import shutil
import subprocess


@functools.cache
def git_exe():
    # Checked once per process; later calls return the cached path.
    git = shutil.which("git") or "git"
    subprocess.check_call([git, "--version"], timeout=5)
    return git


async def status(repo):
    proc = await asyncio.create_subprocess_exec(git_exe(), "-C", repo, "status")
    await proc.wait()
"#,
        r#"
import argparse
import asyncio
import json


async def cmd_batch(args):
    # argparse runs this one subcommand: the read holds up nobody else.
    with open(args.config) as f:
        config = json.load(f)
    for job in config["jobs"]:
        await run_job(job)


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    b = sub.add_parser("batch")
    b.set_defaults(func=cmd_batch)
    args = parser.parse_args()
    return asyncio.run(args.func(args))
"#,
        r#"
import asyncio
import json


async def main(args):
    if args.cmd == "sip":
        await run_sip(args)
    elif args.cmd == "status":
        await run_status(args)


async def run_status(args):
    status = await query(args.host)
    # The status command runs alone: saving the answer stops nobody.
    with open(args.out, "w") as f:
        json.dump(status, f)


async def run_sip(args):
    # First, before any task of the command exists.
    with open(args.config) as f:
        config = json.load(f)
    asyncio.create_task(keepalive(config))
    await serve(config)


asyncio.run(main(parse()))
"#,
        r#"
import os
import socket

import anyio


# The socket was reported ready, and the kernel answers /proc from memory.
async def send_ping(sock: socket.socket, packet, addr):
    await anyio.wait_writable(sock)
    sock.sendto(packet, addr)


async def rss_pages():
    with open("/proc/%d/statm" % os.getpid()) as f:
        return int(f.read().split()[1])
"#,
        r#"
import asyncio
import sys

import requests

# Each subcommand is its own branch: the listing runs before anything awaits.
async def main(args):
    if args[0] == "fetch":
        await fetch_all(args[1:])
    else:
        print(requests.get(args[1], timeout=10).text)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
"#,
        r#"
import redis
import redis.asyncio as aioredis

class RedisService:
    def __init__(self, url):
        self.redis = aioredis.Redis.from_url(url)
        self.sync_redis = redis.Redis(host=url)
        self.cache = redis.Redis.from_url(url)

    async def disconnect(self):
        # Closing only disconnects the pool's sockets: no round trip.
        await self.redis.aclose()
        self.sync_redis.close()
        self.cache.close()
"#,
        r#"
import queue
import threading

# Each utterance gets a fresh queue with no maxsize: `put` never waits.
class Recognizer:
    def __init__(self):
        self._audio: queue.Queue | None = None

    def begin(self, send):
        audio = queue.Queue()
        threading.Thread(target=lambda: send(audio.get()), daemon=True).start()
        self._audio = audio

    async def push(self, frame):
        if self._audio is not None:
            self._audio.put(frame)

    async def end(self):
        self._audio.put(None)
        self._audio = None
"#,
        r#"
import asyncio
import threading
from concurrent.futures import Future

# The result is read only once the future has finished.
async def wrap(future: Future):
    if future.done():
        return future.result()
    event = asyncio.Event()
    loop = asyncio.get_running_loop()
    future.add_done_callback(lambda _: loop.call_soon_threadsafe(event.set))
    await event.wait()
    return future.result()
"#,
        r#"
import csv

def read_rows(path):
    with open(path) as f:
        yield from csv.reader(f)

# Calling the generator function opens nothing: `pop` reads the file.
class CsvSource:
    async def initialize(self, path):
        self._rows = read_rows(path)

    def pop(self):
        return next(self._rows, None)
"#,
        r#"
import asyncio
import click

# The whole command is one coroutine that waits on its user.
@click.command()
def login():
    async def run_setup():
        client = await open_browser()
        input("Log in in the browser window, then press Enter: ")
        await client.save_cookies()

    asyncio.run(run_setup())
"#,
        r#"
import asyncio
import queue

import aiohttp
import requests

class Transfer:
    # Class attributes with no maxsize: never full, so `put` never waits.
    _stdout = queue.Queue()
    _stderr = queue.Queue()

    async def step(self, holder):
        result = await holder.stdout(self, self._stdout.get_nowait())
        self._stderr.put(result)

class Client:
    def __init__(self):
        self.sync_session = requests.Session()
        self.session = aiohttp.ClientSession()

    async def close(self):
        # Closing a session releases its pools; it sends nothing.
        self.sync_session.close()
        await self.session.close()

async def probe(url, run):
    # Building the client connects nothing; the probe runs in a thread.
    import redis
    client = redis.Redis.from_url(url)
    return await asyncio.to_thread(run, client)
"#,
        r#"
from gcloud.aio.auth import BUILD_GCLOUD_REST

if BUILD_GCLOUD_REST:
    from builtins import open as file_open
else:
    from aiofiles import open as file_open


class Storage:
    async def download_to_filename(self, bucket, name, filename):
        data = await self.download(bucket, name)
        async with file_open(filename, mode="wb+") as f:
            await f.write(data)
"#,
        r#"
import asyncio
import socket

_NUMERIC_ONLY = socket.AI_NUMERICHOST
_NUMERIC_ONLY |= getattr(socket, "AI_NUMERICSERV", 0)

async def resolve(host, port):
    try:
        return socket.getaddrinfo(host, port, 0, 0, 0, _NUMERIC_ONLY)
    except socket.gaierror:
        pass
    return await asyncio.to_thread(socket.getaddrinfo, host, port)
"#,
        r#"
import asyncio
import socket

# Generated for both flavors; this is the async one.
_IS_SYNC = False

async def resolve(host, port):
    if not _IS_SYNC:
        return await asyncio.get_running_loop().getaddrinfo(host, port)
    else:
        return socket.getaddrinfo(host, port)

async def connect_addrs(host, port):
    if True:  # ASYNC
        ans = await asyncio.get_running_loop().getaddrinfo(host, port)
    else:
        ans = socket.getaddrinfo(host, port)
    return [a[4] for a in ans]
"#,
        r#"
import os
import socket

async def reap(pid):
    done, status = os.waitpid(pid, os.WNOHANG)
    return done

async def is_ip(host):
    try:
        socket.getaddrinfo(host, None, flags=socket.AI_NUMERICHOST)
        return True
    except socket.gaierror:
        return False

_NUMERIC_ONLY = socket.AI_NUMERICHOST | socket.AI_NUMERICSERV

async def numeric_first(host, port, flags=0):
    try:
        return socket.getaddrinfo(host, port, 0, 0, 0, flags | _NUMERIC_ONLY)
    except socket.gaierror:
        return None
"#,
        r#"
import queue, threading
from concurrent.futures import ThreadPoolExecutor

jobs = queue.Queue(maxsize=10)
lock = threading.Lock()
pool = ThreadPoolExecutor(4)

def close_pool():
    # Returns at once: the workers finish on their own.
    pool.shutdown(wait=False)

async def poll():
    # Each of these tries and returns at once instead of waiting.
    try:
        item = jobs.get(block=False)
        jobs.put(item, False)
    except (queue.Empty, queue.Full):
        pass
    if lock.acquire(blocking=False):
        lock.release()
    if lock.acquire(False):
        lock.release()
    close_pool()

class Session:
    def __init__(self, app):
        self.app = app
        # No maxsize: never full, so `put` never waits.
        self.outbox = queue.Queue()

    async def pump(self):
        try:
            await self.app()
        except BaseException as exc:
            self.outbox.put(exc)
            raise
"#,
        r#"
import threading

_lock = threading.RLock()
_cache = {}

def remember(key, value):
    # A short critical section in a sync helper does not stall the loop.
    _lock.acquire()
    try:
        _cache[key] = value
    finally:
        _lock.release()

async def handler(key, value):
    remember(key, value)
"#,
        r#"
import asyncio
import time
import requests

async def handler(url):
    await asyncio.sleep(1)
    r = await asyncio.to_thread(requests.get, url)
    loop = asyncio.get_running_loop()
    data = await loop.run_in_executor(None, lambda: open("/tmp/x").read())
    await asyncio.to_thread(time.sleep, 1)
    time.sleep(0)
"#,
        r#"
import time

def sync_worker():
    time.sleep(1)
    with open("x") as f:
        return f.read()

async def main():
    def inner():
        time.sleep(1)
    return 1
"#,
        r#"
import aiofiles

async def read(p):
    async with aiofiles.open(p) as f:
        return await f.read()
"#,
        r#"
import asyncio
import socket
import time

def helper():
    return 42

async def handler():
    return helper()

class Clock:
    def sleep(self, n):
        return n

BROADCAST = "255.255.255.255"
SSDP_GROUP = "239.255.255.250"

async def join_group(port):
    return socket.getaddrinfo(SSDP_GROUP, port)

async def announce(sock: socket.socket, packet):
    while True:
        sock.sendto(packet, (BROADCAST, 47808))
        await asyncio.sleep(0.1)

async def discover(packet):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setblocking(False)
    sender = asyncio.create_task(announce(sock, packet))
    try:
        await asyncio.sleep(2)
    finally:
        sender.cancel()

async def nonblocking(sock: socket.socket, loop):
    sock.setblocking(False)
    while True:
        try:
            return sock.recv(4096)
        except BlockingIOError:
            await loop.sock_recv(sock, 0)

async def g(clock: Clock):
    clock.sleep(3)
"#,
        r#"
import asyncio
import queue

class FakeSocket:
    def __init__(self):
        self.inbox = queue.Queue()

    async def next_message(self):
        while self.inbox.empty():
            await asyncio.sleep(0)
        return self.inbox.get()
"#,
        r#"
import asyncio


async def memory_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    await asyncio.sleep(0)
"#,
        r#"
import asyncio
import json

import typer

app = typer.Typer()


def _run(coro):
    try:
        loop = asyncio.get_event_loop()
        if loop.is_running():
            import concurrent.futures
            with concurrent.futures.ThreadPoolExecutor() as pool:
                return pool.submit(asyncio.run, coro).result()
        return loop.run_until_complete(coro)
    except RuntimeError:
        return asyncio.run(coro)


async def _export(path, fetch):
    rows = await fetch()
    with open(path, "w") as f:
        json.dump(rows, f)


def export(path: str):
    _run(_export(path, load_rows))
"#,
        r#"
from pathlib import Path


async def cpu_model():
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
"#,
        r#"
import json
import typer

app = typer.Typer()

# The process runs this one command: reading its input file holds up
# nothing else.
@app.command()
async def create(path: str):
    with open(path) as f:
        spec = json.load(f)
    await submit(spec)
"#,
        r#"
import sqlite3

async def scratch_db():
    return sqlite3.connect(":memory:")
"#,
        r#"
import os

def quiet_env():
    return {"stdout": open(os.devnull, "w")}

async def start_child(cmd):
    opts = quiet_env()
    return opts
"#,
        r#"
import os

async def wrap_stdin():
    fd = os.dup(0)
    return os.fdopen(fd, "rb", closefd=False)
"#,
        r#"
import json
import sys

import anyio

# The first task of the loop reads its config before it starts anything:
# no other task exists yet.
async def _main(path):
    with open(path) as f:
        cfg = json.load(f)
    await launch(cfg)

def main():
    anyio.run(_main, sys.argv[1])
"#,
        r#"
import urllib.request


def from_data_uri(data_uri):
    if not data_uri.startswith("data:"):
        raise ValueError("not a data URI")
    with urllib.request.urlopen(data_uri) as response:
        return response.read()


async def set_avatar(client, avatar):
    await client.patch_me(avatar=from_data_uri(avatar))
"#,
        r#"
# aiohttp reads the file payload in an executor while it sends it.
import aiohttp


async def upload(session, url, file_path):
    with open(file_path, "rb") as f:
        form = aiohttp.FormData()
        form.add_field("file", f, filename="upload.bin")
        async with session.post(url, data=form) as resp:
            return await resp.json()
"#,
        r#"
import shutil


async def rename_with_backup(dst, src):
    if dst.exists():
        dst_backup = dst.with_suffix(dst.suffix + ".bak")
        shutil.move(str(dst), str(dst_backup))
    return dst
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(BlockingCall);
}
