//! PY018: a check of shared state, an await, then the act the check
//! guarded.

use crate::context::FileCx;
use crate::python::common::{module_vars, shared_state};
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::walk::{Parent, exprs_under};
use unsnarl_model::*;

pub struct CheckThenAwait;

pub static META: RuleMeta = RuleMeta {
    id: "PY018",
    name: "check-then-await-then-set",
    category: Category::CheckThenAct,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "A coroutine checks module-level or `self` state (`if key not in cache`, `if not self.conn`), awaits, then sets it: concurrent callers all pass the check.",
    docs: r#"
In an `async def`, an `if` that tests shared state for absence (`k not in
d`, `not d.get(k)`, `d.get(k) is None`, `not self.x`, `self.x is None`) and
whose body writes that state after (or with) an `await`:
`cache[k] = await fetch(k)`, `self.conn = await connect()`. Shared state is
a module-level variable or an attribute of `self`; bodies under an
`asyncio.Lock` (`async with lock:`, one of a keyed table, `async with
cls._locks[name]:`, or after `await lock.acquire()`) are not reported, nor code after the coroutine claimed the
object for itself (`if self._closed: return` directly followed by setting
`self._closed`, or calling a method that does): every other call returns at
that check. Neither is an "already started" guard on a start-up path
(`start`, `setup`, `__aenter__`, `__await__`, the object's long-running `main` or
`serve_forever`, or a helper only they call, such as a
hook a base class of the file calls from its `start`) whose attribute a
shutdown method (`stop`, `close`, `__aexit__`, `reset`, the base class's
too) resets to `None`: the owner starts the object once. A client's
`connect` (or `_connect_websocket`) and a framework's start hooks
(`on_started_...`) count as such a path without the reset, when no other
method of the class calls them and they take no lock of their own: a
`query()` that connects lazily makes `connect` a request path again, and
a connect lock says concurrent connects happen. Nor is the step of an async iterator
(`__anext__`, an `async def __aiter__` that yields, or a method only they
call, such as a lazy connect), or a method of the iterator that takes its
value from the stream `__anext__` steps through (`self.fieldnames =
await self.reader.__anext__()`): `async for` takes one item at a time,
and two readers of one stream would split its items anyway. Nor is a
check and set whose only awaits are of coroutines of the file, called on
`self` or as plain functions, that never suspend (`self._session = await
self.get_new_session()` where that only builds a session, and no
override of it awaits): no other task runs in between. Nor is one
whose only awaits are of a task or future the object keeps
(`self._result = await self._task`, the task made once under `if
self._task is None:`, or handed to `__init__` as an `asyncio.Task`): every caller waits for the same work. Nor
is a method that every caller in the file calls on an object it has just
built (`cursor = Cursor(conn, q); return cursor._init()`, or `instance =
cls(host)` in a classmethod factory): the second phase of a construction, which no other task can reach yet. Nor is a
check of a field the function itself empties at its top on every call
(`self._server = None`, a first attempt, then `if self._server is
None:` for the fallback): it asks whether this call's attempt worked. Nor is a
private helper (`_ensure_client`) that the file only ever calls while
holding a lock (`async with self._lock: await self._ensure_client()`, the
lock also got from a method: `async with self._get_lock():`), directly or
through other private helpers called only that way (up to three calls up),
or from a method wrapped by a decorator of the file that takes the lock
around the call (`@operation_lock`); nor a method so wrapped itself. Nor
is a check whose first await is of a method of the file that sets the
state before awaiting anything itself (`self._api_version = 1` at the top
of `detect_api_version()`): a second caller finds it set. Nor is a
coroutine that asks the person at the terminal (`value = await
ainput("Enter phone number: ")`, `input` read on a thread): an interactive
flow, such as a login, driven one answer at a time, whose state is what
the person typed. Nor is one slot (`self._user_id`, not an item of a
table) filled from reads whose arguments the caller does not choose
(`self._user_id = (await self.get("user"))["id"]`, `self._tools = await
self.client.list_tools()`, or a `get` of a fixed URL on a client made for
it, `async with httpx.AsyncClient() as c: resp = await
c.get(self.jwks_uri)`), outside a connect or start path: racing
callers make the same read and store the same value, one duplicate
request at worst. Nor is one slot filled only from a class's getter of
its single shared instance (`self._pool = await
Pool.get_shared_instance(cfg)`, `await Registry.instance()`): every racer
gets the same object back.

## Why

The check and the act are separated by a suspension point. Every task that
arrives while the first one is awaiting sees the same "missing" state and
starts its own fetch or connection: N concurrent callers make N requests,
open N connections and overwrite each other's results (a cache stampede in
miniature; with non-idempotent actions, a double charge).

## Example

```python
_cache = {}

async def get_user(uid):
    if uid not in _cache:
        _cache[uid] = await fetch_user(uid)
    return _cache[uid]
```

## Fix

Memoize the future, not the value: store the task before any await, so
concurrent callers await the same one (and drop it if it fails).

```python
import asyncio

_cache = {}

async def get_user(uid):
    fut = _cache.get(uid)
    if fut is None:
        fut = asyncio.ensure_future(fetch_user(uid))
        _cache[uid] = fut
    try:
        return await fut
    except Exception:
        _cache.pop(uid, None)
        raise
```
"#,
    examples: &EXAMPLES,
};

impl Rule for CheckThenAwait {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        let globals = module_vars(cx.model);
        // A nested re-check of the same key finds the same write again.
        let mut reported = HashSet::new();
        for s in 0..cx.model.stmts.len() as u32 {
            let s = StmtId(s);
            let StmtKind::If { cond, then, .. } = &cx.stmt(s).kind else {
                continue;
            };
            if matches!(cx.tree.stmt_parent(s), Parent::Detached) {
                continue;
            }
            let f = cx.tree.stmt_func(s);
            // `async for` calls `__anext__` one step at a time: an iterator
            // stepped by two tasks at once is already broken (an async
            // generator refuses it).
            if !cx.func(f).is_async || cx.func(f).is_test || is_iterator_step(cx.func(f)) {
                continue;
            }
            if crate::python::common::under_lock(cx, s) || after_claim(cx, &globals, f, s) {
                continue;
            }
            // `if k not in d: d[k] = await ...`: the act is in the branch.
            let checked = absence_checks(cx, &globals, *cond);
            // A fallback inside the branch of an outer check of the same
            // key (`if self.s is None: self.s = await open(); if self.s is
            // None: self.s = await make_null()`) is the outer check's race,
            // reported there once.
            if rechecked_inside(cx, &globals, s, &checked) {
                continue;
            }
            let mut window: Block = then.clone();
            let mut found = if checked.is_empty() {
                None
            } else {
                act_after_await(cx, &globals, then, &checked)
            };
            // `if k in d: return d[k]` then `d[k] = await ...` below. A
            // branch that raises instead rejects a second use (`if
            // self.conn is not None: raise InterfaceError(...)`): a guard,
            // not a cache that concurrent callers miss.
            if found.is_none() && returns(cx, then) {
                let mut present = HashSet::new();
                collect_absence(cx, &globals, *cond, true, &mut present);
                if !present.is_empty() {
                    let rest: Block = crate::python::common::stmts_after(cx, s).to_vec();
                    found = act_after_await(cx, &globals, &rest, &present);
                    window = rest;
                }
            }
            if let Some((w, key)) = found
                && !lifecycle_guard(cx, f, &key)
                && !iterator_step(cx, f)
                && !only_on_fresh_objects(cx, f)
                && !crate::python::common::callers_hold_lock(cx, f)
                && !interactive(cx, f)
                && !same_value_for_all(cx, &window, w)
                && !shared_instance_only(cx, &window, w)
                && !reset_first(cx, f, s, &key)
                && reported.insert(w)
            {
                out.push(cx.finding(
                    &META,
                    cx.stmt(w).span,
                    format!(
                        "`{key}` was checked before an `await` and is set after it: every task that runs the check while this one is suspended also sees it missing, so the work runs once per concurrent caller and the results overwrite each other"
                    ),
                    format!(
                        "store a future/task in `{key}` before awaiting (concurrent callers await the same one; drop it on failure), or hold an `asyncio.Lock` and re-check under it"
                    ),
                ));
            }
        }
    }
}

/// One slot (`self.user_id`, not an item of a table) filled from reads
/// whose arguments the caller does not choose: every await from the check
/// to the set (`w`) in `window` is of a method named for reading
/// (`get("user")`, `list_tools`, `fetch_config`) on `self` or a client
/// it holds (not a module's function: `fetch_master_rows()` may download
/// megabytes, once per racer) whose arguments are literals,
/// fields of `self` or module-level names (`self.user_id = (await
/// self.get("user"))["id"]`), also on a client made for the read (`async
/// with httpx.AsyncClient() as c: resp = await c.get(self.jwks_uri)`). Racing callers each make the same read and
/// store the same value: a duplicate request, nothing lost or run twice
/// that changes anything.
fn same_value_for_all(cx: &FileCx, window: &Block, w: StmtId) -> bool {
    let m = cx.model;
    let Some(awaited) = slot_fill_awaits(cx, window, w) else {
        return false;
    };
    // In a connect or start path the filled slot guards what comes next:
    // two racers that both find the device both open a link to it.
    let func = cx.func(cx.tree.stmt_func(w));
    let opens = [
        "connect", "open", "start", "login", "ensure", "init", "setup",
    ]
    .iter()
    .any(|v| func.name.trim_start_matches('_').starts_with(v));
    if opens {
        return false;
    }
    let fixed = |a: ExprId| {
        let a = m.strip(a);
        m.literal(a).is_some()
            || m.dotted(a).is_some_and(|d| d.starts_with("self."))
            || (matches!(cx.expr(a).kind, ExprKind::Name { .. }) && m.resolved(a).is_some())
    };
    // Not a bare `get()`, `read()` or `fetch()`: a queue's or a stream's
    // next item differs from call to call.
    // `async with httpx.AsyncClient() as c:` in the window: a client made
    // for this read, with nothing of the caller's in it.
    let fresh_clients: Vec<&str> = unsnarl_model::walk::stmts_in_block(m, window)
        .into_iter()
        .filter_map(|st| match &cx.stmt(st).kind {
            StmtKind::With {
                items,
                is_async: true,
                ..
            } => Some(items),
            _ => None,
        })
        .flatten()
        .filter(|it| cx.call(m.strip(it.ctx)).is_some())
        .filter_map(|it| it.target.and_then(|t| m.name_of(t)))
        .collect();
    let reads = |inner: ExprId| {
        cx.call(m.strip(inner)).is_some_and(|c| {
            let name = c.name.trim_start_matches('_');
            let http_get = name == "get"
                && c.positional(0).is_some_and(|a| {
                    matches!(m.literal(a), Some(Lit::Str(_)))
                        || m.dotted(a).is_some_and(|d| d.starts_with("self."))
                });
            let named_read = ["get_", "list", "fetch_", "describe", "load", "find"]
                .iter()
                .any(|v| name.starts_with(v));
            let on_own_client = c.receiver.and_then(|r| m.dotted(r)).is_some_and(|d| {
                d == "self" || d.starts_with("self.") || fresh_clients.contains(&d.as_str())
            });
            (http_get || named_read) && on_own_client && c.args.iter().all(|a| fixed(a.value))
        })
    };
    !awaited.is_empty() && awaited.iter().all(|&inner| reads(inner))
}

/// Every await from the check to the set (`w`) asks a class for its one
/// shared instance (`self._pool = await Pool.get_shared_instance(cfg)`,
/// `await Registry.instance()`): a getter named for a singleton hands
/// racing callers the same object, so each stores the same value. Whether
/// that getter is itself safe is a question for its own body.
fn shared_instance_only(cx: &FileCx, window: &Block, w: StmtId) -> bool {
    let m = cx.model;
    let Some(awaited) = slot_fill_awaits(cx, window, w) else {
        return false;
    };
    let singleton = |inner: ExprId| {
        cx.call(m.strip(inner)).is_some_and(|c| {
            let name = c.name.trim_start_matches('_').to_ascii_lowercase();
            let on_class = c
                .receiver
                .and_then(|r| m.name_of(r))
                .is_some_and(|r| r == "cls" || r.chars().next().is_some_and(char::is_uppercase));
            on_class
                && (name.contains("instance")
                    || name.contains("singleton")
                    || name.starts_with("get_shared"))
        })
    };
    !awaited.is_empty() && awaited.into_iter().all(singleton)
}

/// What is awaited in `window` up to the set `w` of one slot (`self.x =
/// ...`, not an item of a table, `d[k] = ...`, which is `None`).
fn slot_fill_awaits(cx: &FileCx, window: &Block, w: StmtId) -> Option<Vec<ExprId>> {
    let m = cx.model;
    let StmtKind::Assign { targets, .. } = &cx.stmt(w).kind else {
        return None;
    };
    if targets
        .iter()
        .any(|&t| matches!(cx.expr(m.strip(t)).kind, ExprKind::Index { .. }))
    {
        return None;
    }
    let end = cx.stmt(w).span.end;
    Some(
        unsnarl_model::walk::exprs_in_block(m, window)
            .into_iter()
            .filter(|&x| cx.expr(x).span.end <= end)
            .filter_map(|x| match cx.expr(x).kind {
                ExprKind::Await(inner) => Some(inner),
                _ => None,
            })
            .collect(),
    )
}

/// The coroutine asks the person at the terminal (`value = await
/// ainput("Enter phone number: ")`, `input` read on a thread): an
/// interactive flow, such as a login, that the person drives one answer at
/// a time. Two tasks prompting the same terminal at once is not a way it
/// runs, and what it stores is the person's answer.
fn interactive(cx: &FileCx, f: FuncId) -> bool {
    cx.body_calls(f)
        .any(|e| cx.is_awaited(e) && crate::python::common::asks_a_person(cx, e))
}

/// An "already started" guard on a lifecycle path: the function is a
/// start-up method (`start`, `setup`, `__aenter__`...) or the object's
/// long-running body (`main`, `serve_forever`), or is called in
/// this file only from one, and a shutdown method of the same class
/// (`stop`, `close`, `__aexit__`...) resets the attribute to `None`. The
/// owner starts and stops the object once each; concurrent `start()`
/// calls are not how it is used. (A lazy getter on a request path, such as
/// `get_conn()`, is still reported.)
fn lifecycle_guard(cx: &FileCx, f: FuncId, key: &str) -> bool {
    const STARTS: &[&str] = &[
        "start",
        "startup",
        "setup",
        "__aenter__",
        // `conn = await connect(..)`: awaiting the object starts it.
        "__await__",
        "open",
        "initialize",
        "connect",
        // The object's one long-running body (`self.main_task =
        // create_task(self.main())`).
        "main",
        "serve",
        "serve_forever",
        "run_forever",
    ];
    const STOPS: &[&str] = &[
        "stop",
        "close",
        "aclose",
        "shutdown",
        "__aexit__",
        "teardown",
        "disconnect",
        "cleanup",
        "reset",
        "on_stop",
        "on_disconnect",
        "on_shutdown",
    ];
    let func = cx.func(f);
    let Some(class) = func.class.as_deref() else {
        return false;
    };
    // The class and its base classes of this file: a base's `start()` may
    // call a hook the subclass overrides (`self._create_subscription()`).
    let mut classes: Vec<&str> = vec![class];
    let mut i = 0;
    while i < classes.len() && classes.len() < 8 {
        if let Some(t) = cx.model.types.iter().find(|t| t.qualname == classes[i]) {
            for b in &t.bases {
                if !classes.contains(&b.as_str()) && cx.model.types.iter().any(|t| t.qualname == *b)
                {
                    classes.push(b);
                }
            }
        }
        i += 1;
    }
    let methods: Vec<FuncId> = cx
        .model
        .function_ids()
        .filter(|&g| {
            cx.func(g)
                .class
                .as_deref()
                .is_some_and(|c| classes.contains(&c))
        })
        .collect();
    // `_start` is a start too; `__aenter__` is matched as written.
    // (Also the `_async` spellings of sync/async twins: `open_async`.)
    let named = |g: FuncId, set: &[&str]| {
        let n = cx.func(g).name.as_str();
        let bare = n.trim_start_matches('_');
        let bare = bare
            .strip_suffix("_async")
            .or_else(|| bare.strip_prefix("async_"))
            .unwrap_or(bare);
        set.contains(&n) || set.contains(&bare)
    };
    // A client's connection set-up (`connect`, `_connect_websocket`) and a
    // framework's start hooks (`on_started_init_web_server`) run once per
    // connection or service by design.
    let is_setup = |g: FuncId| {
        let bare = cx.func(g).name.trim_start_matches('_');
        bare == "connect" || ["connect_", "on_start"].iter().any(|p| bare.starts_with(p))
    };
    let is_start = |g: FuncId| named(g, STARTS) || is_setup(g);
    let calls_f = |c: &Call| {
        cx.callee_in_file(c) == Some(f)
            || (c.name == func.name && c.receiver.and_then(|r| cx.model.name_of(r)) == Some("self"))
    };
    let callers: Vec<FuncId> = methods
        .iter()
        .copied()
        .filter(|&g| g != f && cx.body_calls(g).any(|e| cx.call(e).is_some_and(calls_f)))
        .collect();
    let only_starts_call = callers.iter().all(|&g| is_start(g));
    let started = is_start(f) || (!callers.is_empty() && only_starts_call);
    // A set-up that takes a lock of its own expects concurrent calls.
    let locks = |g: FuncId| {
        cx.body_calls(g)
            .any(|e| cx.call(e).is_some_and(|c| c.name == "acquire"))
            || cx.body_stmts(g).iter().any(|&st| {
                matches!(&cx.stmt(st).kind, StmtKind::With { items, .. }
                    if items.iter().any(|it| crate::python::common::lock_kind(cx, it.ctx).is_some()))
            })
    };
    // Set up on such a path and called from nowhere else (a `query()`
    // that connects lazily would make it a request path): no shutdown has
    // to undo it for the owner to run it once.
    let set_up = only_starts_call
        && !locks(f)
        && (is_setup(f) || (!callers.is_empty() && callers.iter().all(|&g| is_setup(g))));
    started
        && (set_up || methods.iter().any(|&g| {
            named(g, STOPS)
                && cx.body_stmts(g).iter().any(|&s| {
                    matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(v), .. }
                        if (matches!(cx.model.literal(*v), Some(Lit::Null))
                            || matches!(&cx.expr(*v).kind, ExprKind::Collection { elems, .. } if elems.is_empty()))
                            && targets.iter().any(|&t| cx.model.dotted(t).as_deref() == Some(key)))
                })
        }))
}

/// An async iterator's `__anext__`, or a method its class calls only from
/// there (`await self._ensure_connected()`): `async for` takes one item at a
/// time, so one consumer never runs the check twice at once, and an
/// iterator shared by several consumers would interleave its reads anyway.
fn iterator_step(cx: &FileCx, f: FuncId) -> bool {
    let func = cx.func(f);
    if is_iterator_step(func) {
        return true;
    }
    let Some(class) = func.class.as_ref() else {
        return false;
    };
    if reads_the_iterated_stream(cx, f, class) {
        return true;
    }
    let callers: Vec<FuncId> = cx
        .model
        .function_ids()
        .filter(|&g| {
            g != f
                && cx
                    .body_calls(g)
                    .any(|e| cx.call(e).is_some_and(|c| cx.callee_in_file(c) == Some(f)))
        })
        .collect();
    !callers.is_empty()
        && callers
            .iter()
            .all(|&g| cx.func(g).class.as_ref() == Some(class) && is_iterator_step(cx.func(g)))
}

/// A method of an async iterator that takes its items from the stream the
/// iteration steps through (`get_fieldnames()`: `await
/// self.reader.__anext__()`, as `__anext__` does): two tasks calling it at
/// once would already split the stream's items between them.
fn reads_the_iterated_stream(cx: &FileCx, f: FuncId, class: &str) -> bool {
    let steps_of = |g: FuncId| -> Vec<String> {
        cx.body_calls(g)
            .filter_map(|e| cx.call(e))
            .filter(|c| c.name == "__anext__")
            .filter_map(|c| c.receiver.and_then(|r| cx.model.dotted(r)))
            .filter(|d| d.starts_with("self."))
            .collect()
    };
    let ours = steps_of(f);
    !ours.is_empty()
        && cx.model.function_ids().any(|g| {
            g != f
                && cx.func(g).class.as_deref() == Some(class)
                && cx.func(g).name == "__anext__"
                && steps_of(g).iter().any(|d| ours.contains(d))
        })
}

/// A method every call of which in the file is made on an object its
/// caller has just built (`cursor = Cursor(conn, q); return
/// cursor._init()`, `Builder(x).init()`, `cls(..)` in a classmethod): the second phase of a
/// construction, which no other task can reach while it runs.
fn only_on_fresh_objects(cx: &FileCx, f: FuncId) -> bool {
    let Some(class) = cx.func(f).class.as_deref() else {
        return false;
    };
    let short = class.rsplit('.').next().unwrap_or(class);
    // `Cls(..)`, or `cls(..)` in a classmethod of the class (a factory:
    // `instance = cls(host); await instance.initialize()`).
    let builds = |v: ExprId| {
        cx.call(cx.model.strip(v)).is_some_and(|k| {
            k.target
                .as_deref()
                .is_some_and(|t| t == class || t.rsplit('.').next() == Some(short))
                || (cx.model.name_of(k.func) == Some("cls")
                    && cx.func(cx.func_of(v)).class.as_deref() == Some(class))
        })
    };
    // The local `n` of `g` is bound at least once, and every binding's
    // value passes `pred`.
    let every_binding = |g: FuncId, n: &str, pred: &dyn Fn(ExprId) -> bool| {
        let values: Vec<Option<ExprId>> =
            crate::python::common::values_bound_to(cx, g, n).collect();
        !values.is_empty() && values.iter().all(|v| v.is_some_and(pred))
    };
    let mut calls = 0;
    for g in cx.model.function_ids() {
        for e in cx.body_calls(g) {
            let c = cx.call(e).unwrap();
            // `instance.initialize()` on `instance = cls(..)`: the type of
            // the local is not inferred, the name and the factory say it.
            let on_cls_instance = c.name == cx.func(f).name
                && cx.func(g).class.as_deref() == Some(class)
                && c.receiver
                    .and_then(|r| cx.model.name_of(r))
                    .is_some_and(|n| {
                        every_binding(g, n, &|v| {
                            cx.call(cx.model.strip(v))
                                .is_some_and(|k| cx.model.name_of(k.func) == Some("cls"))
                        })
                    });
            if cx.callee_in_file(c) != Some(f) && !on_cls_instance {
                continue;
            }
            calls += 1;
            let Some(r) = c.receiver.map(|r| cx.model.strip(r)) else {
                return false;
            };
            // Or every binding of the local in the caller builds one.
            let fresh = builds(r)
                || cx
                    .model
                    .name_of(r)
                    .is_some_and(|n| every_binding(g, n, &builds));
            if !fresh {
                return false;
            }
        }
    }
    calls > 0
}

/// `__anext__`, or an `__aiter__` written as an async generator (its body
/// runs as the steps of the iteration, the part before the first `yield`
/// on the first step).
fn is_iterator_step(func: &Function) -> bool {
    func.name == "__anext__" || (func.name == "__aiter__" && func.is_async && func.is_generator)
}

/// The block ends by leaving the function (`return`/`raise`).
fn exits(cx: &FileCx, b: &Block) -> bool {
    b.last()
        .is_some_and(|&l| matches!(cx.stmt(l).kind, StmtKind::Return(_) | StmtKind::Raise(_)))
}

/// The block ends by returning.
fn returns(cx: &FileCx, b: &Block) -> bool {
    b.last()
        .is_some_and(|&l| matches!(cx.stmt(l).kind, StmtKind::Return(_)))
}

/// The shared state a condition tests for absence.
/// `s` sits in the `then` branch of an enclosing `if` of its function that
/// checks one of the same keys for absence.
fn rechecked_inside(
    cx: &FileCx,
    globals: &HashSet<String>,
    s: StmtId,
    checked: &HashSet<String>,
) -> bool {
    let at = cx.stmt(s).span.start;
    !checked.is_empty()
        && cx.tree.stmt_ancestors(s).any(|a| {
            let StmtKind::If { cond, then, .. } = &cx.stmt(a).kind else {
                return false;
            };
            let in_then = match (then.first(), then.last()) {
                (Some(&first), Some(&last)) => {
                    cx.stmt(first).span.start <= at && at < cx.stmt(last).span.end
                }
                _ => false,
            };
            in_then
                && absence_checks(cx, globals, *cond)
                    .iter()
                    .any(|k| checked.contains(k))
        })
}

fn absence_checks(cx: &FileCx, globals: &HashSet<String>, cond: ExprId) -> HashSet<String> {
    let mut out = HashSet::new();
    collect_absence(cx, globals, cond, false, &mut out);
    out
}

fn collect_absence(
    cx: &FileCx,
    globals: &HashSet<String>,
    e: ExprId,
    negated: bool,
    out: &mut HashSet<String>,
) {
    let e = cx.model.strip(e);
    match &cx.expr(e).kind {
        ExprKind::Unary {
            op: UnOp::Not,
            operand,
        } => collect_absence(cx, globals, *operand, !negated, out),
        ExprKind::Logical { left, right, .. } => {
            collect_absence(cx, globals, *left, negated, out);
            collect_absence(cx, globals, *right, negated, out);
        }
        ExprKind::Binary { op, left, right } => {
            let absent = match op {
                BinOp::NotIn => !negated,
                BinOp::In => negated,
                BinOp::Is | BinOp::Eq => {
                    !negated && matches!(cx.model.literal(*right), Some(Lit::Null))
                }
                BinOp::IsNot | BinOp::NotEq => {
                    negated && matches!(cx.model.literal(*right), Some(Lit::Null))
                }
                _ => false,
            };
            if !absent {
                return;
            }
            let subject = if matches!(op, BinOp::In | BinOp::NotIn) {
                *right
            } else {
                *left
            };
            if let Some(k) = state_of(cx, globals, subject) {
                out.insert(k);
            }
        }
        _ if negated => {
            if let Some(k) = state_of(cx, globals, e) {
                out.insert(k);
            }
        }
        _ => {}
    }
}

/// `d`, `d[k]`, `d.get(k)`, `self.x`.
fn state_of(cx: &FileCx, globals: &HashSet<String>, e: ExprId) -> Option<String> {
    let e = cx.model.strip(e);
    if let Some(c) = cx.call(e)
        && c.name == "get"
        && let Some(r) = c.receiver
    {
        return shared_state(cx, globals, r);
    }
    shared_state(cx, globals, e)
}

/// A write of a checked key in the branch with an await before or in it.
fn act_after_await(
    cx: &FileCx,
    globals: &HashSet<String>,
    then: &Block,
    checked: &HashSet<String>,
) -> Option<(StmtId, String)> {
    let awaits = crate::util::awaits_in_block(cx.model, then);
    let first_await = awaits.iter().map(|a| a.start).min()?;
    // Every await is of a coroutine of the file that has no await of its
    // own (`await self.get_new_session()` that only builds a session): it
    // runs to its end in one step, and no other task runs in between.
    let awaited: Vec<ExprId> = unsnarl_model::walk::exprs_in_block(cx.model, then)
        .into_iter()
        .filter_map(|x| match cx.expr(x).kind {
            ExprKind::Await(inner) => Some(inner),
            _ => None,
        })
        .collect();
    if awaited.len() == awaits.len()
        && awaited
            .iter()
            .all(|&inner| crate::python::common::runs_in_one_step(cx, inner))
    {
        return None;
    }
    // Every await is of a task or future the object keeps (`self._result =
    // await self._task`, the task made once under `if self._task is
    // None:`): concurrent callers wait for the same work and store the
    // same result; nothing runs twice.
    if awaited.len() == awaits.len()
        && awaited.iter().all(|&inner| {
            cx.call(cx.model.strip(inner)).is_none()
                && cx
                    .model
                    .dotted(cx.model.strip(inner))
                    .is_some_and(|d| d.starts_with("self.") && holds_a_task(cx, &d))
        })
    {
        return None;
    }
    for x in unsnarl_model::walk::exprs_in_block(cx.model, then) {
        let Parent::Stmt(w) = cx.tree.expr_parent(x) else {
            continue;
        };
        let StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } = &cx.stmt(w).kind
        else {
            continue;
        };
        if !targets.contains(&x) {
            continue;
        }
        let Some(key) = shared_state(cx, globals, x) else {
            continue;
        };
        if !checked.contains(&key) || crate::python::common::under_lock(cx, w) {
            continue;
        }
        // The stored value is the awaited result, or is computed after an
        // await in the branch (storing a task/future before awaiting is the
        // fix, not the bug).
        let value_awaits = exprs_under(cx.model, *v)
            .into_iter()
            .any(|y| matches!(cx.expr(y).kind, ExprKind::Await(_)));
        if (value_awaits
            || (first_await < cx.stmt(w).span.start && uses_awaited_value(cx, then, w, *v)))
            && !first_await_claims(cx, then, &key)
        {
            return Some((w, key));
        }
    }
    None
}

/// Every value the file stores in `place` (`self._task`) is a task it
/// starts (`asyncio.create_task(..)`) or `None`, and there is one: awaiting
/// it waits for work already under way (not an async property that
/// starts a request each time it is read).
fn holds_a_task(cx: &FileCx, place: &str) -> bool {
    crate::util::every_assigned_value(
        cx.model,
        |t| cx.model.dotted(t).as_deref() == Some(place),
        |v| {
            let v = cx.model.strip(v);
            cx.call(v)
                .is_some_and(|c| crate::python::common::is_task_spawn(cx, c))
                // A task handed in (`def __init__(self, task:
                // asyncio.Task[Result])`): started by whoever built it.
                || cx.sema.type_of(v) == Some("asyncio.Task")
        },
    )
}

/// The branch's first await is of a method of the file that sets `key`
/// before it first awaits anything itself (`self._api_version = 1` at the
/// top of `detect_api_version`): a second caller arriving meanwhile finds
/// it set and does not start the work again.
fn first_await_claims(cx: &FileCx, then: &Block, key: &str) -> bool {
    let first = unsnarl_model::walk::exprs_in_block(cx.model, then)
        .into_iter()
        .filter_map(|x| match cx.expr(x).kind {
            ExprKind::Await(inner) => Some((cx.expr(x).span.start, inner)),
            _ => None,
        })
        .min_by_key(|&(at, _)| at);
    let Some(g) = first
        .and_then(|(_, inner)| cx.call(inner))
        .and_then(|c| cx.callee_in_file(c))
    else {
        return false;
    };
    let own_await = crate::util::awaits_in_block(cx.model, &cx.func(g).body)
        .iter()
        .map(|a| a.start)
        .min()
        .unwrap_or(u32::MAX);
    cx.body_stmts(g).iter().any(|&st| {
        cx.stmt(st).span.start < own_await
            && matches!(&cx.stmt(st).kind, StmtKind::Assign { targets, value: Some(v), .. }
                if targets.iter().any(|&t| cx.model.dotted(t).as_deref() == Some(key))
                    && !matches!(cx.model.literal(*v), Some(Lit::Null)))
    })
}

/// The written value uses a local that holds an awaited result (`resp =
/// await ...`, `async with ... as resp`), assigned earlier in the branch.
fn uses_awaited_value(cx: &FileCx, then: &Block, w: StmtId, value: ExprId) -> bool {
    let before = cx.stmt(w).span.start;
    let mut awaited: HashSet<String> = HashSet::new();
    for s in 0..cx.model.stmts.len() as u32 {
        let s = StmtId(s);
        let st = cx.stmt(s);
        if st.span.start >= before || !crate::util::block_contains(cx, then, s) {
            continue;
        }
        let (targets, source): (Vec<ExprId>, Option<ExprId>) = match &st.kind {
            StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } => (targets.clone(), Some(*v)),
            StmtKind::With {
                items,
                is_async: true,
                ..
            } => (items.iter().filter_map(|i| i.target).collect(), None),
            StmtKind::For {
                target: Some(t),
                is_async: true,
                ..
            } => (vec![*t], None),
            _ => continue,
        };
        let from_await = source.is_none_or(|v| {
            exprs_under(cx.model, v).into_iter().any(|y| {
                matches!(cx.expr(y).kind, ExprKind::Await(_))
                    || cx.model.name_of(y).is_some_and(|n| awaited.contains(n))
            })
        });
        if from_await {
            for t in targets {
                for y in exprs_under(cx.model, t) {
                    if let Some(n) = cx.model.name_of(y) {
                        awaited.insert(n.to_string());
                    }
                }
            }
        }
    }
    exprs_under(cx.model, value)
        .into_iter()
        .any(|y| cx.model.name_of(y).is_some_and(|n| awaited.contains(n)))
}

/// `s` comes after the function claimed the object for this call alone:
/// `if self._closed: return` and, with no await in between, the statement
/// that sets it (`self._closed = True`, or `self._set_closed()`, a method
/// of the class that does). Every other task running the function returns
/// at the check, so nothing after it is raced by another call of it.
fn after_claim(cx: &FileCx, globals: &HashSet<String>, f: FuncId, s: StmtId) -> bool {
    let body = &cx.func(f).body;
    let Some(at) = top_level_index(cx, f, s) else {
        return false;
    };
    body[..at].windows(2).any(|pair| {
        let StmtKind::If { cond, then, orelse } = &cx.stmt(pair[0]).kind else {
            return false;
        };
        if !orelse.is_empty() || !exits(cx, then) {
            return false;
        }
        let Some(flag) = state_of(cx, globals, *cond) else {
            return false;
        };
        sets_flag(cx, pair[1], &flag)
            && crate::util::awaits_in_block(cx.model, &vec![pair[1]]).is_empty()
    })
}

/// The position in `f`'s body of the top-level statement that holds `s`.
fn top_level_index(cx: &FileCx, f: FuncId, s: StmtId) -> Option<usize> {
    cx.func(f)
        .body
        .iter()
        .position(|&b| b == s || cx.tree.stmt_ancestors(s).any(|a| a == b))
}

/// The function itself empties `key` on every call, before the check
/// (`self._server = None` at the top, then `if self._server is None:`
/// after a first attempt): the check asks whether this call's own attempt
/// worked, not whether another caller already did the work.
fn reset_first(cx: &FileCx, f: FuncId, s: StmtId, key: &str) -> bool {
    let body = &cx.func(f).body;
    let Some(at) = top_level_index(cx, f, s) else {
        return false;
    };
    body[..at].iter().any(|&b| {
        matches!(&cx.stmt(b).kind, StmtKind::Assign { targets, value: Some(v), .. }
            if targets.iter().any(|&t| cx.model.dotted(t).as_deref() == Some(key))
                && crate::python::common::is_none(cx, *v))
    })
}

/// Statement `s` sets `flag` (`self.x`) without awaiting: an assignment to
/// it, or a call of a method of the same class whose body assigns it.
fn sets_flag(cx: &FileCx, s: StmtId, flag: &str) -> bool {
    match &cx.stmt(s).kind {
        StmtKind::Assign { targets, .. } => targets
            .iter()
            .any(|&t| cx.model.dotted(t).as_deref() == Some(flag)),
        StmtKind::Expr(e) => {
            let Some(c) = cx.call(*e) else { return false };
            let Some(m) = cx.callee_in_file(c) else {
                return false;
            };
            !cx.func(m).is_async
                && cx.body_stmts(m).iter().any(|&b| {
                    matches!(&cx.stmt(b).kind, StmtKind::Assign { targets, .. }
                        if targets.iter().any(|&t| cx.model.dotted(t).as_deref() == Some(flag)))
                })
        }
        _ => false,
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
class Conn:
    async def close(self):
        if self._closed:
            return
        await self._flush()
        self._closed = True
        if self._code is None:
            self._code = await self._read()  # expect

    async def open(self):
        if self._conn:
            return
        self._conn = await self._dial()  # expect
        if self._banner is None:
            self._banner = await self._read()  # expect
"#,
        r#"
class Gateway:
    def __init__(self, api):
        self.api = api
        self._session = None

    async def session_for(self, user):
        # The caller picks the user: racing callers store different
        # sessions, and the last one wins for everyone.
        if self._session is None:
            self._session = await self.api.fetch_session(user)  # expect
        return self._session
"#,
        r#"
cache = {}

async def get_user(uid):
    if uid not in cache:
        cache[uid] = await fetch(uid)  # expect
    return cache[uid]
"#,
        r#"
_tokens = {}

async def token_for(user):
    if user in _tokens:
        return _tokens[user]
    token = await issue_token(user)
    _tokens[user] = token  # expect
    return token
"#,
        r#"
import asyncpg

class Repo:
    async def conn(self):
        if not self._conn:
            self._conn = await asyncpg.connect("postgres://db")  # expect
        return self._conn

    async def token(self):
        if self._token is None:
            resp = await self.http.post("/token")
            self._token = resp["token"]  # expect
        return self._token
"#,
        r#"
class Future:
    async def result(self):
        if not self._state:
            await self.wait()
            if not self._state:
                self._state = await self._client.read_state()  # expect
        return self._state
"#,
        r#"
class Client:
    async def get_conn(self):
        if self.conn is None:
            self.conn = await self.pool.connect()  # expect
        return self.conn

    async def close(self):
        await self.conn.close()
        self.conn = None
"#,
        r#"
class Subscription:
    def __init__(self, connect):
        self._connect = connect
        self._ws = None

    def __aiter__(self):
        return self

    async def __anext__(self):
        await self._ensure_connected()
        return await self._ws.recv()

    async def _ensure_connected(self):
        if self._ws:
            return
        ws = await self._connect()
        await ws.send("auth")
        self._ws = ws  # expect

    async def publish(self, msg):
        await self._ensure_connected()
        await self._ws.send(msg)
"#,
        r#"
class Subscriber:
    def __init__(self, conn):
        self.conn = conn
        self.sub = None

    async def start(self):
        await self._subscribe()

    async def stop(self):
        self.sub = None

    async def _subscribe(self):
        raise NotImplementedError


class PollSubscriber(Subscriber):
    async def get_one(self):
        if self.sub is None:
            self.sub = await self.conn.subscribe("events") # expect
        return await self.sub.next_msg()
"#,
        r#"
class Worker:
    def __init__(self, url):
        self.url = url
        self._pool = None

    async def handle(self, job):
        if self._pool is None:
            self._pool = await create_pool(self.url)  # expect
        await self._pool.run(job)

    async def close(self):
        self._pool = None
"#,
        r#"
class KVSubscriber:
    _watch = None

    # Called per request by concurrent handlers: two of them both see no
    # watch and both open one.
    async def latest(self):
        if not self._watch:
            bucket = await self.declarer.create_key_value(bucket=self.name)
            self._watch = await bucket.watch(keys=self.keys)  # expect
        return await self._watch.updates(5)
"#,
        r#"
class Conn:
    def __init__(self, connector):
        self._connection = None
        self._connector = connector

    # Every query may be the first: concurrent queries each connect.
    async def query(self, sql):
        if self._connection is None:
            self._connection = await self._run(self._connector)  # expect
        return await self._run(self._connection.execute, sql)

    async def close(self):
        await self._run(self._connection.close)
        self._connection = None
"#,
        r#"
class App:
    def __init__(self):
        self.session = None

    # Reported once, at the first assignment: the inner check is a fallback
    # of the same race.
    async def get_session(self):
        if self.session is None:
            self.session = await self.open_session()  # expect
            if self.session is None:
                self.session = await self.make_null_session()
        return self.session
"#,
        r#"
import asyncio
import socket

class Client:
    def __init__(self):
        self._connect_lock = asyncio.Lock()
        self.local_hostname = None

    async def connect(self):
        if self.local_hostname is None:
            self.local_hostname = await asyncio.to_thread(socket.getfqdn)  # expect
        await self._connect_lock.acquire()

    def close(self):
        self._connect_lock.release()
"#,
        r#"
class Client:
    def __init__(self, address):
        self.address = address
        self._path = None

    # Every query connects lazily: two queries at once both look the
    # device up and both open a link.
    async def connect(self):
        if self._path is None:
            self._path = await find_device(self.address) # expect
        await open_link(self._path)

    async def query(self, q):
        await self.connect()
        return await send(self._path, q)
"#,
        r#"
class Cursor:
    def __init__(self, connection, query):
        self._connection = connection
        self._query = query
        self._state = None

    async def _init(self, timeout):
        if self._state is None:
            self._state = await self._connection.prepare(self._query, timeout)  # expect
        return self


class CursorFactory:
    def __init__(self, connection, query, timeout):
        self._cursor = Cursor(connection, query)
        self._timeout = timeout

    def __await__(self):
        return self._cursor._init(self._timeout).__await__()
"#,
        r#"
import asyncio


class Sandbox:
    def __init__(self):
        self._lock = asyncio.Lock()
        self._box = None

    async def run(self, cmd):
        async with self._lock:
            await self._ensure_box()
        return await self._box.exec(cmd)

    async def upload(self, path):
        await self._ensure_box()
        return await self._box.put(path)

    async def _ensure_box(self):
        if self._box is None:
            self._box = await create_box()  # expect
"#,
        r#"
import asyncio


class Consumer:
    def __init__(self):
        self._lock = asyncio.Lock()
        self._clients = {}

    async def subscribe(self, stream):
        async with self._lock:
            await self._create_subscriber(stream)

    async def resubscribe(self, stream):
        await self._create_subscriber(stream)

    async def _create_subscriber(self, stream):
        return await self._client_for(stream)

    async def _client_for(self, stream):
        if stream not in self._clients:
            self._clients[stream] = await self._connect(stream)  # expect
        return self._clients[stream]
"#,
        r#"
# The inner provider is another object: its `resolve` may well suspend.
class Provider:
    async def resolve(self):
        return {}


class CachedProvider(Provider):
    async def resolve(self):
        if self._cached is None:
            self._cached = await self._inner.resolve()  # expect
        return self._cached
"#,
    ],
    pass: &[
        r#"
import time

import httpx


class Verifier:
    async def signing_keys(self):
        if self._jwks and time.time() - self._fetched < 300:
            return self._jwks
        async with httpx.AsyncClient() as c:
            # The same document for every racer: one duplicate fetch.
            resp = await c.get(self.jwks_uri)
            resp.raise_for_status()
            self._jwks = resp.json()
            self._fetched = time.time()
        return self._jwks
"#,
        r#"
class Clockify:
    def __init__(self, http):
        self.http = http
        self._user_id = None

    async def get(self, path):
        return (await self.http.get(path)).json()

    async def current_user_id(self):
        # Every racer reads the same user and stores the same id: at worst
        # one extra read.
        if self._user_id is None:
            self._user_id = (await self.get("user"))["id"]
        return self._user_id
"#,
        r#"
from myapp.utils import ainput


class Client:
    async def authorize(self):
        # The person at the terminal drives this flow, one answer at a time.
        while True:
            if not self.phone_number:
                value = await ainput("Enter phone number or bot token: ")
                self.phone_number = value
            sent = await self.send_code(self.phone_number)
            if sent:
                return sent
"#,
        r#"
import aiohttp

# `get_new_session` never suspends: no other task runs between check and set.
class Client:
    async def get_new_session(self):
        return aiohttp.ClientSession()

    async def session(self):
        if self._session is None:
            self._session = await self.get_new_session()
        return self._session
"#,
        r#"
# The header comes from the same rows the iteration reads.
class DictReader:
    def __init__(self, reader):
        self.reader = reader
        self.fieldnames = None

    async def get_fieldnames(self):
        if self.fieldnames is None:
            self.fieldnames = await self.reader.__anext__()
        return self.fieldnames

    def __aiter__(self):
        return self

    async def __anext__(self):
        if self.fieldnames is None:
            self.fieldnames = await self.reader.__anext__()
        return dict(zip(self.fieldnames, await self.reader.__anext__()))
"#,
        r#"
import asyncio
import asyncpg

class Pools:
    _pools = {}
    _locks = {}

    @classmethod
    async def get_pool(cls, name):
        # One lock per configuration, taken around the check and the set.
        if name not in cls._locks:
            cls._locks[name] = asyncio.Lock()
        async with cls._locks[name]:
            if name not in cls._pools:
                cls._pools[name] = await asyncpg.create_pool(dsn_of(name))
            return cls._pools[name]
"#,
        r#"
class Printer:
    def __init__(self, host):
        self.host = host
        self._engine = None

    @classmethod
    async def create(cls, host):
        instance = cls(host)
        await instance.initialize()
        return instance

    async def initialize(self):
        if self._engine is None:
            self._engine = await open_engine(self.host)
"#,
        r#"
class Client:
    def __init__(self, session):
        self._session = session
        self._api_version = None

    async def api_version(self):
        if self._api_version is None:
            self._api_version = await self._detect()
        return self._api_version

    async def _detect(self):
        # Claimed before the first await: a concurrent caller sees it set.
        self._api_version = 1
        if await self._probe("/v1/info"):
            return 1
        self._api_version = 2
        return 2
"#,
        r#"
import asyncio
import functools


def operation_lock(func):
    @functools.wraps(func)
    async def wrapper(self, *args, **kwargs):
        async with self._operation_lock:
            return await func(self, *args, **kwargs)

    return wrapper


class Device:
    def __init__(self, client):
        self._client = client
        self._operation_lock = asyncio.Lock()
        self._info = None

    @operation_lock
    async def update(self):
        await self._refresh()

    async def _refresh(self):
        if self._info is None:
            info = await self._client.probe()
            self._info = info
        return self._info

    @operation_lock
    async def lock_info(self):
        if self._info is None:
            self._info = await self._client.probe()
        return self._info
"#,
        r#"
class Client:
    def __init__(self, address):
        self.address = address
        self._path = None

    # The owner connects once; nothing else of the class calls it.
    async def connect(self):
        if self._path is None:
            self._path = await find_device(self.address)
        await open_link(self._path)

    async def query(self, q):
        return await send(self._path, q)
"#,
        r#"
import asyncio
import socket

class Client:
    def __init__(self):
        self._connect_lock = asyncio.Lock()
        self.local_hostname = None

    async def connect(self):
        # Held until close(): one connect at a time.
        await self._connect_lock.acquire()
        try:
            if self.local_hostname is None:
                self.local_hostname = await asyncio.to_thread(socket.getfqdn)
        except BaseException:
            self._connect_lock.release()
            raise

    def close(self):
        self._connect_lock.release()
"#,
        r#"
import threading


class Conn:
    def __init__(self, connector):
        self._connection = None
        self._connector = connector
        self._thread = threading.Thread(target=self._worker)

    # `conn = await Conn(..)` starts it, once: the thread cannot start twice.
    def __await__(self):
        self._thread.start()
        return self._connect().__await__()

    async def _connect(self):
        if self._connection is None:
            self._connection = await self._run(self._connector)
        return self

    async def close(self):
        await self._run(self._connection.close)
        self._connection = None
"#,
        r#"
class KVSubscriber:
    _watch = None

    # An async generator: the set-up before the first yield runs on the
    # first step of one `async for`.
    async def __aiter__(self):
        if not self._watch:
            bucket = await self.declarer.create_key_value(bucket=self.name)
            self._watch = await bucket.watch(keys=self.keys)
        watch = self._watch
        while True:
            msg = await watch.updates(5)
            if msg is not None:
                yield msg
"#,
        r#"
class Subscription:
    def __init__(self, connect):
        self._connect = connect
        self._ws = None

    def __aiter__(self):
        return self

    async def __anext__(self):
        await self._ensure_connected()
        return await self._ws.recv()

    async def _ensure_connected(self):
        if self._ws:
            return
        ws = await self._connect()
        await ws.send("auth")
        self._ws = ws
"#,
        r#"
class Consumer:
    async def start(self):
        await self._subscribe()

    async def stop(self):
        if self.subscription is not None:
            await self.subscription.cancel()
            self.subscription = None

    async def _subscribe(self):
        if self.subscription:
            return
        self.subscription = await self.bus.subscribe(self.topic)
"#,
        r#"
import asyncio

cache = {}

async def get_user(uid):
    fut = cache.get(uid)
    if fut is None:
        fut = asyncio.ensure_future(fetch(uid))
        cache[uid] = fut
    return await fut
"#,
        r#"
import asyncio

class Repo:
    def __init__(self):
        self._lock = asyncio.Lock()

    async def conn(self):
        if self._conn is None:
            async with self._lock:
                if self._conn is None:
                    self._conn = await connect()
        return self._conn

    async def close(self):
        if self._closed:
            return False
        self._set_closed()
        await self._writer.close()
        if self._close_code is None:
            self._close_code = await self._reader.read()
        return True

    def _set_closed(self):
        self._closed = True

    async def local(self, uid):
        seen = {}
        if uid not in seen:
            seen[uid] = await fetch(uid)
        return seen

_tokens = {}

async def token_for(user):
    if user in _tokens:
        return _tokens[user]
    fut = asyncio.ensure_future(issue_token(user))
    _tokens[user] = fut
    return await fut

class Lock:
    async def acquire(self, task):
        if self._owner is None:
            await checkpoint()
            self._owner = task

    async def disconnected(self):
        if not self._is_disconnected:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                self._is_disconnected = True
        return self._is_disconnected

class Acquire:
    async def __aenter__(self):
        if self.connection is not None or self.done:
            raise InterfaceError("a connection is already acquired")
        self.connection = await self.pool.acquire()
        return self.connection

class Cursor:
    async def __anext__(self):
        if self._state is None:
            self._state = await self._conn.prepare(self._query)
        return await self._state.fetch_next()

def sync_memo(k, d={}):
    if k not in d:
        d[k] = compute(k)
    return d[k]
"#,
        r#"
class Subscriber:
    def __init__(self, conn):
        self.conn = conn
        self.sub = None

    async def start(self):
        await self._subscribe()

    async def stop(self):
        if self.sub is not None:
            await self.sub.unsubscribe()
            self.sub = None

    async def _subscribe(self):
        raise NotImplementedError


class PushSubscriber(Subscriber):
    async def _subscribe(self):
        if self.sub:
            return
        self.sub = await self.conn.subscribe("events", cb=self.on_message)

    async def on_message(self, msg):
        print(msg)
"#,
        r#"
import asyncio

class Worker:
    def __init__(self, url, pool=None):
        self.url = url
        self._pool = pool

    def run(self, loop):
        task = loop.create_task(self.main())
        try:
            loop.run_until_complete(task)
        finally:
            loop.run_until_complete(self.close())

    async def main(self):
        if self._pool is None:
            self._pool = await create_pool(self.url)
        while True:
            await self.poll()

    async def close(self):
        self._pool = None
"#,
        r#"
import asyncpg

class Connector:
    def __init__(self, **pool_args):
        self._pool = None
        self._pool_args = pool_args

    # Opened once by the owner; close_async resets it.
    async def open_async(self) -> None:
        if self._pool:
            return
        self._pool = await asyncpg.create_pool(**self._pool_args)

    async def close_async(self) -> None:
        if not self._pool:
            return
        await self._pool.close()
        self._pool = None
"#,
        r#"
import asyncio

class Service:
    def __init__(self, client, name):
        self._client = client
        self._name = name
        self._subs = {}

    # Started once; stop empties the table again.
    async def start(self) -> None:
        if self._subs:
            return
        for verb in ("PING", "INFO"):
            self._subs[verb] = await self._client.subscribe(f"$SRV.{verb}.{self._name}")

    async def stop(self) -> None:
        for sub in self._subs.values():
            await sub.drain()
        self._subs = {}
"#,
        r#"
class Cursor:
    def __init__(self, connection, query):
        self._connection = connection
        self._query = query
        self._state = None

    async def _init(self, timeout):
        if self._state is None:
            self._state = await self._connection.prepare(self._query, timeout)
        return self


class CursorFactory:
    def __init__(self, connection, query, timeout):
        self._connection = connection
        self._query = query
        self._timeout = timeout

    def __await__(self):
        cursor = Cursor(self._connection, self._query)
        return cursor._init(self._timeout).__await__()
"#,
        r#"
import asyncio


class Sandbox:
    def __init__(self):
        self._lock = asyncio.Lock()
        self._box = None

    async def run(self, cmd):
        async with self._lock:
            await self._ensure_box()
        return await self._box.exec(cmd)

    async def upload(self, path):
        async with self._lock:
            await self._ensure_box()
        return await self._box.put(path)

    async def _ensure_box(self):
        if self._box is None:
            self._box = await create_box()


class Cache:
    def _get_init_lock(self):
        return self._init_lock

    async def client(self):
        async with self._get_init_lock():
            await self._connect()
        return self._client

    async def _connect(self):
        if self._client is None:
            self._client = await open_client()
"#,
        r#"
import asyncio


class Consumer:
    def __init__(self):
        self._lock = asyncio.Lock()
        self._clients = {}

    async def subscribe(self, stream):
        async with self._lock:
            await self._create_subscriber(stream)

    async def _create_subscriber(self, stream):
        return await self._client_for(stream)

    async def _client_for(self, stream):
        if stream not in self._clients:
            self._clients[stream] = await self._connect(stream)
        return self._clients[stream]
"#,
        r#"
import asyncio


class Run:
    def __init__(self, job):
        self.job = job
        self._task = None
        self._result = None

    async def wait(self):
        if self._result is not None:
            return self._result
        if self._task is None:
            self._task = asyncio.create_task(self.job())
        self._result = await self._task
        return self._result
"#,
        r#"
# Each call empties the field first: the check asks whether this call's
# preferred port worked, not whether another caller got there first.
import asyncio


class LoopbackCallback:
    async def start(self, preferred_port=None):
        self._server = None
        if preferred_port:
            try:
                self._server = await asyncio.start_server(self._handle, "127.0.0.1", preferred_port)
            except OSError:
                pass
        if self._server is None:
            self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self._server.sockets[0].getsockname()[1]

    async def _handle(self, reader, writer):
        writer.close()
"#,
        r#"
import asyncio


class Runner:
    def __init__(self, config):
        self._config = config
        self._pool = None

    async def _resolve_pool(self):
        # The class hands every caller its one shared pool.
        if self._pool is None:
            self._pool = await WorkerPool.get_shared_instance(self._config)
        return self._pool


class WorkerPool:
    _shared = None
    _lock = asyncio.Lock()

    @classmethod
    async def get_shared_instance(cls, config):
        async with cls._lock:
            if cls._shared is None:
                cls._shared = cls(config)
                await cls._shared.start()
            return cls._shared

    def __init__(self, config):
        self.config = config

    async def start(self):
        await asyncio.sleep(0)
"#,
        r#"
import asyncio


class Run:
    def __init__(self, task: asyncio.Task[dict], events):
        self._task = task
        self._events = events
        self._result = None

    async def result(self):
        if self._result is None:
            self._result = await self._task
        return self._result
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(CheckThenAwait);

    /// An inner re-check of the same attribute finds the same write: one
    /// finding, not two.
    #[test]
    fn a_nested_recheck_reports_the_write_once() {
        let nested = EXAMPLES
            .fail
            .iter()
            .find(|e| e.contains("await self.wait()"))
            .expect("the nested re-check example");
        let found = crate::testing::messages(&CheckThenAwait, Language::Python, nested);
        assert_eq!(found.len(), 1, "{found:#?}");
    }
}
