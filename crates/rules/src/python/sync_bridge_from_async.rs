//! PY038: a sync function that runs the event loop, reachable from a
//! coroutine.

use super::common::bridges_here;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::cell::OnceCell;
use std::collections::HashMap;
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct SyncBridgeFromAsync;

pub static META: RuleMeta = RuleMeta {
    id: "PY038",
    name: "sync-bridge-called-from-async",
    category: Category::SyncOverAsync,
    severity: Severity::Critical,
    languages: &[Language::Python],
    summary: "A sync function runs or waits on the event loop (`run_until_complete`, `asyncio.run`, `run_coroutine_threadsafe(...).result()`) and is called, directly or through sync helpers, from a coroutine.",
    docs: r#"
A sync facade over async code (`def get(self): return
asyncio.get_event_loop().run_until_complete(self._aget())`) is harmless in a
script and a deadlock inside a server. This rule follows the calls: the
bridge call is reported when a coroutine of the file reaches the sync
function (through other sync helpers of the file), and a coroutine's call
is reported when it reaches such a bridge in another module of the project.
A bridge on one side of a test of `loop.is_running()` (`coro if
loop.is_running() else loop.run_until_complete(coro)`, or the same test
as an `if` statement, in this module or another) is not reported: on a
running loop the function hands the coroutine back or skips the work
(also a test inside a `try` that probes for the loop, `try: loop =
asyncio.get_event_loop(); if loop.is_running(): return`, with the bridge
after the `try`, or a probe that leaves as soon as it finds a running
loop: `try: asyncio.get_running_loop(); return None except RuntimeError:
pass`, or one that sets a flag the function then leaves on, `if loop is
not None: loop.create_task(coro); return`); nor is a bridge after
`nest_asyncio.apply()`, which
lets the running loop be entered again, nor one in a `try` whose
`except RuntimeError` applies it and runs the coroutine again. Nor
is a bridge in the handler of a `try` that first asks for the running
loop (`try: loop = asyncio.get_running_loop() ... except RuntimeError:
asyncio.run(coro)`, also `try: asyncio.get_running_loop().create_task(c)`;
in another module too, where the handler waits on another thread's loop,
`run_coroutine_threadsafe(coro, self._loop).result()`),
or in the `else` of `if asyncio.get_event_loop().is_running():`, or in the branch that finds the flag that `try` set
empty (`if running is None and not loop.is_closed():`): that code runs
only where no loop runs. Nor is
a wait on a loop the module made for a thread of its own
(`run_coroutine_threadsafe(coro, _tool_loop).result()` where every value
given to `_tool_loop` is `asyncio.new_event_loop()`, also through a
local: `loop = asyncio.new_event_loop()` then `self._loop = loop`, or
handed back by a helper of the file, `loop = _ensure_loop()` whose
returns are that variable or `None`, or a future a method of the file
schedules on it and returns, `self._invoke(coro).result()`): it is not
the caller's loop. Nor a call in a test, inside `with
mock.patch.object(asyncio, "get_event_loop", ..)` or a patch of the
module's `asyncio`, that replaced the loop with a mock. Nor a bridge in a
sync generator function that the coroutine only calls and hands on
(`stream_zip(files=to_sync_iterable(files))`): none of its body runs at
the call, only where it is iterated; a `for` loop over it in the
coroutine (or `list(..)`, a list comprehension) runs it there and is
followed.

## Why

The coroutine runs on the loop's thread. When it calls the sync facade,
the facade asks the already-running loop to run something and wait: asyncio
raises `RuntimeError: This event loop is already running`, or, with
`run_coroutine_threadsafe(...).result()`, the thread waits forever for a
loop that can no longer run. It works in every test that calls the facade
from sync code, and fails the first time a handler uses it.

## Example

```python
import asyncio

def load_settings():
    return asyncio.get_event_loop().run_until_complete(fetch_settings())

async def handler(request):
    settings = load_settings()
    return settings["greeting"]
```

## Fix

Make the callers async and await the coroutine; keep one bridge at the top
of the program.

```python
import asyncio

async def load_settings():
    return await fetch_settings()

async def handler(request):
    settings = await load_settings()
    return settings["greeting"]
```
"#,
    examples: &EXAMPLES,
};

impl Rule for SyncBridgeFromAsync {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        // Built on first use: most files have no bridge, and need no map of
        // callers.
        let callers = OnceCell::new();
        let callers = || callers.get_or_init(|| callers_in_file(cx));
        for (i, e) in cx.model.exprs.iter().enumerate() {
            let ExprKind::Call(c) = &e.kind else { continue };
            let id = ExprId(i as u32);
            if matches!(cx.tree.expr_parent(id), Parent::Detached) {
                continue;
            }
            let f = cx.func_of(id);
            // (1) A bridge in a sync function of this file reached from a
            // coroutine of this file.
            if let Some(entry) = cx.effect(c, Effect::SyncOverAsync)
                && bridges_here(cx, id, entry)
                // `coro if loop.is_running() else loop.run_until_complete(coro)`:
                // on a running loop the function hands the coroutine back.
                && !crate::util::under_test_calling(cx, id, "is_running")
                // `if loop.is_running(): return ...` above it.
                && !crate::util::after_running_loop_test(cx, id)
                // `try: get_running_loop() except RuntimeError: asyncio.run(coro)`.
                && !crate::util::only_without_running_loop(cx, id)
                // `run_coroutine_threadsafe(coro, self._loop).result()` on
                // a loop the file made for its own thread.
                && !crate::util::waits_on_dedicated_loop(cx.model, c, e.span)
                && !cx.func(f).is_async
                && f.0 != 0
                && let Some(path) = async_caller(cx, f, callers())
            {
                out.push(cx.finding(
                    &META,
                    e.span,
                    format!(
                        "`{}` {} in sync {}, which is called from async code ({}): on the loop's thread this raises `RuntimeError` or waits forever for a loop that cannot run",
                        cx.callee_display(c),
                        entry.what,
                        cx.func_display(f),
                        path
                    ),
                    "make this function and its callers async and `await` the coroutine; keep a single sync/async bridge at the program's entry point",
                ));
                continue;
            }
            // (2) A coroutine calling a sync function of another module that
            // bridges.
            if !cx.runs_on_loop(f) || cx.is_awaited(id) {
                continue;
            }
            let Some(t) = c.target.as_deref() else {
                continue;
            };
            if cx.local_function(t).is_some() {
                continue;
            }
            if under_patched_loop(cx, id) {
                continue;
            }
            if let Some(chain) = remote_bridge(cx, t, 0) {
                out.push(cx.finding(
                    &META,
                    e.span,
                    format!(
                        "async {} calls `{t}`, which blocks on the event loop ({chain}): from the loop's thread this raises `RuntimeError` or deadlocks",
                        cx.func_display(f)
                    ),
                    "make the callee async and await it here, or move the sync facade out of the async call path",
                ));
            }
        }
    }
}

/// The call runs inside `with mock.patch.object(asyncio, "get_event_loop",
/// ..)` (or a patch of the callee module's `asyncio`): a test that
/// replaced the loop the bridge would run with a mock.
fn under_patched_loop(cx: &FileCx, id: ExprId) -> bool {
    cx.enclosing_stmts(id).into_iter().any(|s| {
        matches!(&cx.stmt(s).kind, StmtKind::With { items, .. } if items.iter().any(|it| {
            cx.call(cx.model.strip(it.ctx)).is_some_and(|c| {
                matches!(c.name.as_str(), "patch" | "object")
                    && c.args.iter().any(|a| {
                        let text = cx.source(cx.expr(a.value).span);
                        text.contains("asyncio") || text.contains("event_loop")
                    })
            })
        }))
    })
}

/// Callers of each function of this file: (caller, call site).
fn callers_in_file(cx: &FileCx) -> HashMap<FuncId, Vec<(FuncId, ExprId)>> {
    let mut callers: HashMap<FuncId, Vec<(FuncId, ExprId)>> = HashMap::new();
    for (i, e) in cx.model.exprs.iter().enumerate() {
        let ExprKind::Call(c) = &e.kind else { continue };
        let id = ExprId(i as u32);
        if matches!(cx.tree.expr_parent(id), Parent::Detached) {
            continue;
        }
        if let Some(callee) = cx.callee_in_file(c) {
            callers
                .entry(callee)
                .or_default()
                .push((cx.func_of(id), id));
        }
    }
    callers
}

/// A path from a coroutine of the file down to `f` through sync functions
/// of the file, rendered for the message.
fn async_caller(
    cx: &FileCx,
    f: FuncId,
    callers: &HashMap<FuncId, Vec<(FuncId, ExprId)>>,
) -> Option<String> {
    let mut frontier = vec![(f, vec![cx.func(f).name.clone()])];
    let mut seen = vec![f];
    for _ in 0..5 {
        let mut next = Vec::new();
        for (g, path) in frontier {
            for &(caller, site) in callers.get(&g).into_iter().flatten() {
                // Calling a generator function runs none of its body: that
                // runs wherever the generator is iterated, which is here
                // only when this caller loops over it on the spot.
                if cx.func(g).is_generator && !iterated_on_the_spot(cx, site) {
                    continue;
                }
                if cx.func(caller).is_async {
                    if cx.is_offloaded(caller) || inside_offload(cx, site) {
                        continue;
                    }
                    let mut p = vec![format!("async `{}`", cx.func(caller).name)];
                    p.extend(path.iter().map(|n| format!("`{n}`")));
                    return Some(p.join(" → "));
                }
                if !seen.contains(&caller) && caller.0 != 0 {
                    seen.push(caller);
                    let mut p = vec![cx.func(caller).name.clone()];
                    p.extend(path.iter().cloned());
                    next.push((caller, p));
                }
            }
        }
        frontier = next;
    }
    None
}

/// `for x in gen(..):`, `list(gen(..))`, `[y for y in gen(..)]`: the call's
/// generator is drained where it is made.
fn iterated_on_the_spot(cx: &FileCx, site: ExprId) -> bool {
    match cx.tree.expr_parent(site) {
        Parent::Stmt(s) => matches!(&cx.stmt(s).kind, StmtKind::For { iter, .. } if *iter == site),
        Parent::Expr(p) => match &cx.expr(p).kind {
            ExprKind::Comprehension {
                kind, generators, ..
            } => *kind != CollKind::Generator && generators.first().is_some_and(|g| g.iter == site),
            ExprKind::Call(c) => matches!(
                c.target.as_deref(),
                Some(
                    "builtins.list"
                        | "builtins.tuple"
                        | "builtins.set"
                        | "builtins.sorted"
                        | "builtins.dict"
                        | "builtins.next"
                )
            ),
            _ => false,
        },
        _ => true,
    }
}

fn inside_offload(cx: &FileCx, call: ExprId) -> bool {
    cx.tree.expr_ancestors(call).any(|a| {
        cx.call(a)
            .is_some_and(|c| a != call && cx.effect(c, Effect::Offload).is_some())
    })
}

/// A project function (another module) that is sync and calls a bridge,
/// directly or through sync project functions.
fn remote_bridge(cx: &FileCx, target: &str, depth: u32) -> Option<String> {
    if depth > 3 {
        return None;
    }
    let i = cx.index.resolve(cx.lang, target, cx.file)?;
    let s = cx.index.summary(i);
    if s.is_async || s.lang != cx.lang {
        return None;
    }
    for site in s.calls {
        let last = site.target.rsplit('.').next().unwrap_or("");
        if cx
            .kb
            .find(Effect::SyncOverAsync, Some(&site.target), last)
            .is_some()
        {
            return Some(format!("`{}` calls `{}`", short(target), site.target));
        }
    }
    for site in s.calls {
        if let Some(chain) = remote_bridge(cx, &site.target, depth + 1) {
            return Some(format!("`{}` → {chain}", short(target)));
        }
    }
    None
}

fn short(q: &str) -> &str {
    q.rsplit('.').next().unwrap_or(q)
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import asyncio

def load_settings():
    return asyncio.get_event_loop().run_until_complete(fetch_settings())  # expect

def greeting():
    return load_settings()["greeting"]

async def handler(request):
    return greeting()
"#,
        r#"
import asyncio


def save_now(store, run):
    try:
        loop = asyncio.get_running_loop()
        return loop.run_until_complete(store.save(run))  # expect
    except RuntimeError:
        return asyncio.run(store.save(run))


async def handle(store, run):
    save_now(store, run)
"#,
        r#"
# file: app/facade.py
import asyncio

def get_user_sync(uid):
    return asyncio.run(get_user(uid))

def build_memory(store):
    loop = asyncio.get_event_loop()
    if loop.is_closed():
        return store
    loop.run_until_complete(store.ping())
    return store

# file: app/views.py
from .facade import build_memory, get_user_sync

async def view(uid):
    return get_user_sync(uid)  # expect

async def lifespan(app):
    app.memory = build_memory(app.store)  # expect
"#,
        r#"
import asyncio


def start(phone):
    loop = asyncio.get_event_loop()
    coro = _start(phone)
    return coro if loop.is_closed() else loop.run_until_complete(coro)  # expect


async def _start(phone):
    await asyncio.sleep(0)
    return phone


async def main():
    return await start("555")
"#,
        r#"
import asyncio


class MemoryStore:
    def save(self, coro):
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is not None:
            loop.run_until_complete(coro)  # expect
        else:
            asyncio.run(coro)

    async def remember(self, coro):
        self.save(coro)
"#,
        r#"
import asyncio


def pages(client, loop):
    n = 0
    while True:
        page = loop.run_until_complete(client.fetch(n))  # expect
        if not page:
            return
        yield page
        n += 1


async def count(client):
    total = 0
    for page in pages(client, asyncio.get_event_loop()):
        total += len(page)
    return total
"#,
        r#"
import asyncio


class Bridge:
    def __init__(self, loop):
        # The loop the caller runs on.
        self._loop = loop

    def _invoke(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def fetch(self):
        return self._invoke(self._get()).result()  # expect

    async def _get(self):
        await asyncio.sleep(0)

    async def handler(self):
        return self.fetch()
"#,
    ],
    pass: &[
        r#"
# file: app/tools.py
import asyncio
import threading
from typing import Optional

_tool_loop: Optional[asyncio.AbstractEventLoop] = None


def start_tools():
    global _tool_loop
    _tool_loop = asyncio.new_event_loop()
    threading.Thread(target=_tool_loop.run_forever, daemon=True).start()


def stop_tools():
    # The tools' own loop, on its own thread: never the caller's.
    future = asyncio.run_coroutine_threadsafe(close_all(), _tool_loop)
    future.result(timeout=15)


def stop_tools_locked(lock):
    with lock:
        loop = _tool_loop
    if loop is not None:
        asyncio.run_coroutine_threadsafe(close_all(), loop).result(timeout=15)


async def close_all():
    await asyncio.sleep(0)


async def shutdown_here(lock):
    stop_tools()
    stop_tools_locked(lock)
# file: app/gateway.py
from app.tools import stop_tools


async def shutdown():
    stop_tools()
"#,
        r#"
import asyncio

def load_settings():
    return asyncio.get_event_loop().run_until_complete(fetch_settings())

def main():
    print(load_settings())

async def handler(request):
    return await asyncio.to_thread(load_settings)

if __name__ == "__main__":
    main()
"#,
        r#"
from asgiref.sync import async_to_sync

def sync_sender(send):
    # Builds the sync function; the sync handlers call it from threads.
    return async_to_sync(send)

async def connect(scope, receive, send):
    handlers = {"send": sync_sender(send)}
    await serve(scope, receive, handlers)
"#,
        r#"
import asyncio


def start(phone):
    loop = asyncio.get_event_loop()
    coro = _start(phone)
    return coro if loop.is_running() else loop.run_until_complete(coro)


async def _start(phone):
    await asyncio.sleep(0)
    return phone


async def main():
    return await start("555")
"#,
        r#"
# file: app/memory.py
import asyncio

def build_memory(store):
    loop = asyncio.get_event_loop()
    if loop.is_running():
        pass  # a running loop cannot be blocked on: skip the check
    else:
        loop.run_until_complete(store.ping())
    return store

# file: app/server.py
from .memory import build_memory

async def lifespan(app):
    app.memory = build_memory(app.store)
"#,
        r#"
# file: app/state.py
import asyncio

def fire_and_forget(coro):
    try:
        loop = asyncio.get_running_loop()
        loop.create_task(coro)
    except RuntimeError:
        asyncio.run(coro)

# file: app/router.py
import asyncio
from .state import fire_and_forget

def record_sync(store, run):
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(store.save(run))
    return None

async def handle(store, run):
    fire_and_forget(store.save(run))
    record_sync(store, run)
"#,
        r#"
# file: app/bridge.py
import asyncio
import threading


class Bridge:
    def __init__(self):
        self._loop = None
        self._thread = None

    def start(self):
        loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=loop.run_forever, daemon=True)
        self._thread.start()
        self._loop = loop

    def connect(self, conn):
        # The bridge's own loop, on its own thread: never the caller's.
        fut = asyncio.run_coroutine_threadsafe(conn.start(), self._loop)
        return fut.result(timeout=15.0)

# file: app/server.py
from app.bridge import Bridge

bridge = Bridge()


async def on_startup(conn):
    bridge.start()
    bridge.connect(conn)
"#,
        r#"
import asyncio
import concurrent.futures


def run_sync(coro):
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    if loop is not None and loop.is_running():
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(asyncio.run, coro)
    return asyncio.run(coro)


def pause(client, run_id):
    return run_sync(client.pause(run_id))


async def pause_later(client, run_id):
    await asyncio.sleep(1)
    return pause(client, run_id)
"#,
        r#"
# file: app/bridge.py
import asyncio


def resolve(coro):
    loop = asyncio.get_event_loop()
    if loop.is_running():
        return asyncio.ensure_future(coro)
    return loop.run_until_complete(coro)

# file: app/views.py
from app.bridge import resolve


async def show(user):
    return resolve(user.load())
"#,
        r#"
# file: app/start.py
import asyncio


def run_loop(startup):
    loop = asyncio.get_event_loop()
    loop.run_until_complete(startup)

# file: app/tests/test_start.py
from unittest import IsolatedAsyncioTestCase, mock

from app import start as test_module


class TestStart(IsolatedAsyncioTestCase):
    async def test_run_loop(self):
        startup = mock.MagicMock()
        with mock.patch.object(test_module, "asyncio", autospec=True) as mock_asyncio:
            test_module.run_loop(startup)
            mock_asyncio.get_event_loop.return_value.run_until_complete.assert_called_once()
"#,
        r#"
import asyncio


class MemoryStore:
    def __init__(self, storage):
        self._storage = storage
        self._pending = set()

    def save(self, entry):
        coro = self._storage.store(entry.id, entry.to_dict())
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is not None:
            task = asyncio.ensure_future(coro)
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)
        else:
            new_loop = asyncio.new_event_loop()
            try:
                new_loop.run_until_complete(coro)
            finally:
                new_loop.close()

    async def remember(self, entry):
        self.save(entry)
"#,
        r#"
import asyncio

import httpx


def robots_text(url):
    async def fetch():
        async with httpx.AsyncClient(timeout=8.0) as client:
            r = await client.get(url)
            return r.text

    try:
        loop = asyncio.get_event_loop()
        if loop.is_running():
            return ""
    except RuntimeError:
        pass
    return asyncio.run(fetch())


async def crawl(url):
    return robots_text(url)
"#,
        r#"
import asyncio


async def login(url):
    await asyncio.sleep(0)
    return {"session": url}


def cookies_for(url):
    try:
        asyncio.get_running_loop()
        import nest_asyncio

        nest_asyncio.apply()
    except RuntimeError:
        pass
    return asyncio.run(login(url))


async def mount(url):
    return cookies_for(url)
"#,
        r#"
import asyncio


class Registry:
    def __init__(self, storage):
        self._storage = storage
        self._loaded = False

    def credentials(self, name):
        if not self._loaded:
            try:
                asyncio.get_running_loop()
                return None
            except RuntimeError:
                pass
            loop = asyncio.new_event_loop()
            try:
                loop.run_until_complete(self._storage.load())
            finally:
                loop.close()
        return self._storage.get(name)

    async def login(self, name):
        return self.credentials(name)
"#,
        r#"
import asyncio


class Kernel:
    def __init__(self):
        self._owned_loop = asyncio.new_event_loop()

    def close(self):
        loop = self._owned_loop
        if loop is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            return
        loop.call_soon_threadsafe(loop.stop)
        if running is None and not loop.is_closed():
            loop.run_until_complete(asyncio.sleep(0))
        loop.close()

    async def arun_once(self):
        self.close()
"#,
        r#"
import asyncio
import logging

logger = logging.getLogger(__name__)


async def write_audit(event):
    await asyncio.sleep(0)


def write_audit_nowait(event):
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    if loop is not None:
        try:
            loop.create_task(write_audit(event))
            return
        except Exception:
            logger.warning("audit dropped")
            return
    try:
        asyncio.run(write_audit(event))
    except Exception:
        logger.warning("audit dropped")


async def delete_session(session_id):
    write_audit_nowait({"deleted": session_id})
"#,
        r#"
import asyncio


class Providers:
    @classmethod
    def reset(cls):
        cls._client = None

    @classmethod
    def build(cls, http_client, factory):
        try:
            cls._provider = factory(http_client)
        except Exception:
            cls.reset()
            close = http_client.close()
            try:
                asyncio.get_running_loop().create_task(close)
            except RuntimeError:
                asyncio.run(close)
            raise


async def main(http_client, factory):
    Providers.build(http_client, factory)
"#,
        r#"
import asyncio


async def zip_stream(files, pack):
    loop = asyncio.get_event_loop()

    def to_sync_iterable(chunks):
        it = chunks.__aiter__()

        async def get_next():
            return await it.__anext__()

        while True:
            try:
                value = asyncio.run_coroutine_threadsafe(get_next(), loop).result()
            except StopAsyncIteration:
                break
            yield value

    packed = pack(to_sync_iterable(files))
    while True:
        chunk = await loop.run_in_executor(None, next, packed, None)
        if chunk is None:
            break
        yield chunk
"#,
        r#"
import asyncio
import threading

_LOOP = None
_LOOP_LOCK = threading.Lock()
_READY = threading.Event()


def _ensure_loop():
    global _LOOP
    with _LOOP_LOCK:
        if _LOOP is not None and _LOOP.is_running():
            return _LOOP

        def _run():
            global _LOOP
            loop = asyncio.new_event_loop()
            _LOOP = loop
            _READY.set()
            loop.run_forever()

        threading.Thread(target=_run, daemon=True).start()
    if not _READY.wait(timeout=1.0):
        return None
    return _LOOP


def _schedule(coro):
    # The module's own loop, on its own thread: never the caller's.
    loop = _ensure_loop()
    if loop is None:
        raise RuntimeError("no loop")
    asyncio.run_coroutine_threadsafe(coro, loop).result(timeout=5)


async def _write(event):
    await asyncio.sleep(0)


async def emit(event):
    _schedule(_write(event))
"#,
        r#"
import asyncio
import threading


class Client:
    def __init__(self):
        self._loop = None

    def start(self):
        self._loop = asyncio.new_event_loop()
        threading.Thread(target=self._loop.run_forever, daemon=True).start()

    def stop(self):
        self._loop = None

    def _invoke(self, coro):
        # The client's own loop, on its own thread: never the caller's.
        future = asyncio.run_coroutine_threadsafe(coro, loop=self._loop)
        return future

    def list_tools(self):
        return self._invoke(self._list_tools()).result()

    async def _list_tools(self):
        await asyncio.sleep(0)
        return []

    async def refresh(self):
        return self.list_tools()
"#,
        r#"
import asyncio

import nest_asyncio


def run_sync(func, *args):
    loop = asyncio.get_event_loop()
    try:
        return loop.run_until_complete(func(*args))
    except RuntimeError as e:
        if "event loop is already running" in str(e):
            # On a running loop: patch it, then run the coroutine again.
            nest_asyncio.apply()
            return loop.run_until_complete(func(*args))
        raise


async def handler(tool):
    return run_sync(tool.fetch)
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(SyncBridgeFromAsync);
}
