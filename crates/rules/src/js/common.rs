//! Questions the JS/TS rules keep asking of a file: does this call give a
//! promise, which functions run on the event loop (async functions and the
//! request/message handlers of servers, which are often not `async`), what
//! is shared state, what an options object says.

use crate::context::FileCx;
use crate::index::Awaitable;
use crate::util::is_or_under;
use std::collections::{HashMap, HashSet};
use unsnarl_model::walk::{Parent, Visitor, walk_block};
use unsnarl_model::*;

/// Globals only a browser page or a web worker has.
const BROWSER_GLOBALS: &[&str] = &[
    "document",
    "window",
    "navigator",
    "localStorage",
    "sessionStorage",
    "importScripts",
    "customElements",
    "postMessage",
    "Worker",
];

/// Names only Node has (CommonJS and the process), and the prefix of its
/// built-in modules' specifiers.
const NODE_GLOBALS: &[&str] = &[
    "require",
    "process",
    "module",
    "exports",
    "__dirname",
    "__filename",
    "Buffer",
];

/// Node's built-in modules most programs import.
const NODE_MODULES: &[&str] = &[
    "fs",
    "path",
    "os",
    "http",
    "https",
    "http2",
    "net",
    "tls",
    "child_process",
    "cluster",
    "worker_threads",
    "events",
    "stream",
    "crypto",
    "zlib",
    "dns",
    "dgram",
    "readline",
    "util",
    "vm",
];

/// The file runs in a browser or a web worker: it uses the DOM or worker
/// globals and nothing of Node's (no `require`, `process`, `node:`
/// imports). There an unhandled rejection is logged, not fatal.
pub fn browser_only(cx: &FileCx) -> bool {
    let mut browser = false;
    // `self` is a worker's global (`self.clients`, `self.skipWaiting()`)
    // unless the file declares it (`const self = this`).
    let declares_self = cx.model.stmts.iter().any(|st| {
        matches!(&st.kind, StmtKind::Assign { targets, .. }
            if targets.iter().any(|&t| cx.model.name_of(t) == Some("self")))
    });
    for e in &cx.model.exprs {
        if let ExprKind::Name { id, resolved: None } = &e.kind
            && id == "self"
            && !declares_self
        {
            browser = true;
            continue;
        }
        let ExprKind::Name {
            id,
            resolved: Some(r),
        } = &e.kind
        else {
            continue;
        };
        let head = r.split(['.', '/']).next().unwrap_or(r);
        if r.starts_with("node:")
            || NODE_GLOBALS.contains(&head)
            || (id != r && NODE_MODULES.contains(&head))
        {
            return false;
        }
        browser |= id == r && BROWSER_GLOBALS.contains(&r.as_str());
    }
    browser
}

/// Generated files are skipped.
pub fn skip_file(cx: &FileCx) -> bool {
    cx.model.is_generated || type_test_file(cx.path) || says_type_checked_only(cx.text)
}

/// The file's opening comments say it is only type-checked (`tsc --noEmit
/// test.ts` validating a package's typings): nothing runs it.
fn says_type_checked_only(text: &str) -> bool {
    // The comments before the first line of code that is not an import.
    let mut head = String::new();
    let mut in_block = false;
    for line in text.lines().take(40) {
        let t = line.trim();
        let comment = in_block || t.starts_with("/*") || t.starts_with("//");
        if comment {
            head.push_str(t);
            head.push('\n');
            if in_block || t.starts_with("/*") {
                in_block = !t.contains("*/");
            }
        } else if !(t.is_empty() || t.starts_with("import ") || t.starts_with("function assert")) {
            break;
        }
    }
    head.contains("--noEmit")
}

/// A type-level test (`*.test-d.ts` for tsd, `*.tst.ts` for TSTyche): the
/// type checker reads it, nothing ever runs it.
fn type_test_file(path: &str) -> bool {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    [".test-d.", ".tst."].iter().any(|m| name.contains(m))
}

/// Test code: a test file (`*.test.ts`, `__tests__/`...) or a test function.
pub fn in_test(cx: &FileCx, f: FuncId) -> bool {
    cx.model.is_test || cx.func(f).is_test
}

// ------------------------------------------------------------- promises --

/// Why a call gives a promise: a project function that is `async`, declared
/// to return a promise or returns one; a known promise API; `new Promise`;
/// an async IIFE. `None` when nothing says so.
pub fn promise_call(cx: &FileCx, c: &Call) -> Option<&'static str> {
    promise_call_with(cx, c, true)
}

fn promise_call_with(cx: &FileCx, c: &Call, heuristic: bool) -> Option<&'static str> {
    if c.is_new {
        return (c.target.as_deref() == Some("Promise")).then_some("a new promise");
    }
    if let ExprKind::Closure(f) = cx.expr(cx.model.strip(c.func)).kind {
        return is_async_function(cx.func(f)).then_some("an async function");
    }
    let Some(t) = c.target.as_deref() else {
        return promise_without_index(cx, c, heuristic);
    };
    // A function of the project decides; when nothing else would call it a
    // promise, all that matters is whether it gives one.
    let otherwise = promise_without_index(cx, c, heuristic);
    let why = |a: Awaitable| match a {
        Awaitable::Async => "it is an async function",
        Awaitable::Returns => "it returns a promise",
    };
    if otherwise.is_none() {
        return cx.index.awaitable(cx.lang, t, cx.file).map(why);
    }
    if let Some(i) = cx.index.resolve(cx.lang, t, cx.file) {
        return cx.index.summary(i).awaitable().map(why);
    }
    otherwise
}

/// [`promise_call_with`] for a call that is not a project function's.
fn promise_without_index(cx: &FileCx, c: &Call, heuristic: bool) -> Option<&'static str> {
    if let Some(t) = c.target.as_deref()
        && let Some(kind) = local_fn_kind(cx, t)
    {
        return kind;
    }
    // A dual API given a node-style callback last (`MongoClient.connect(url,
    // opts, setupDB)`) reports through the callback and returns no promise.
    if c.target.is_some() && cx.effect(c, Effect::AsyncApi).is_some() && !node_callback_last(cx, c)
    {
        return Some("a promise-returning API");
    }
    if !heuristic {
        return None;
    }
    // A method of something unknown (a local, or an import the scan cannot
    // see into) with a database-client name, called without a callback.
    if let Some(r) = c.receiver
        && db_like(cx, r)
        && cx.kb.find(Effect::AsyncApi, None, &c.name).is_some()
        && !has_callback(cx, c)
    {
        return Some("a promise-returning database call");
    }
    None
}

/// A receiver named like a database client, pool, repository or model
/// (`db`, `this.pool`, `userRepository`, `prisma.user`, `User`).
fn db_like(cx: &FileCx, r: ExprId) -> bool {
    let Some(d) = cx.model.dotted(r) else {
        return false;
    };
    let mut segs = d.rsplit('.');
    let last = segs.next().unwrap_or("");
    let l = last.to_ascii_lowercase();
    let exact = matches!(
        l.as_str(),
        "db" | "database"
            | "pool"
            | "client"
            | "conn"
            | "prisma"
            | "knex"
            | "repo"
            | "repository"
            | "collection"
            | "coll"
            | "mongo"
            | "redis"
            | "pg"
            | "mysql"
            | "sequelize"
            | "em"
            | "manager"
            | "tx"
            | "trx"
            | "sql"
    );
    let suffix = [
        "repository",
        "repo",
        "model",
        "collection",
        "db",
        "pool",
        "client",
        "dao",
        "store",
    ]
    .iter()
    .any(|s| l.ends_with(s));
    // `prisma.user.findMany()`: a model of a client.
    let of_client = segs
        .next()
        .is_some_and(|p| matches!(p.to_ascii_lowercase().as_str(), "prisma" | "db" | "client"));
    // `User.findById(id)`: an ORM model class (not a built-in).
    let model_class = d == last
        && last.starts_with(|c: char| c.is_ascii_uppercase())
        && last.chars().any(|c| c.is_ascii_lowercase())
        && !matches!(
            last,
            "Object"
                | "Array"
                | "Promise"
                | "Reflect"
                | "Proxy"
                | "JSON"
                | "Math"
                | "Date"
                | "Number"
                | "String"
                | "Symbol"
                | "Buffer"
                | "Map"
                | "Set"
                | "URL"
                | "Intl"
                | "Atomics"
                | "Error"
                | "RegExp"
                | "BigInt"
                | "WeakMap"
                | "WeakSet"
        );
    exact || suffix || of_client || model_class
}

/// True when a call is given a function argument (callback-style APIs
/// return no promise).
pub fn has_callback(cx: &FileCx, c: &Call) -> bool {
    c.args.iter().any(|a| {
        let v = cx.model.strip(a.value);
        matches!(cx.expr(v).kind, ExprKind::Closure(_))
            || callback_fn(cx, v).is_some()
            || cx.model.name_of(v).is_some_and(|n| {
                matches!(n, "cb" | "callback" | "done" | "next" | "fn" | "handler")
            })
    })
}

/// The call's last argument is a node-style callback: a function (inline,
/// or of the file passed by name) whose first parameter is the error
/// (`(err, db) => ..`), or a name that says so (`cb`, `callback`). A task
/// handed to a limiter or a retry helper (`limit(() => fetch(u))`) takes
/// no error first, and its call still gives a promise.
pub fn node_callback_last(cx: &FileCx, c: &Call) -> bool {
    c.args.last().is_some_and(|a| {
        let v = cx.model.strip(a.value);
        callback_fn(cx, v).is_some_and(|f| {
            cx.func(f)
                .params
                .first()
                .is_some_and(|p| is_error_param(&p.name))
        }) || cx
            .model
            .name_of(v)
            .is_some_and(|n| matches!(n, "cb" | "callback"))
            // A callback a helper makes (`db.query(q, sendCallback(res))`).
            || cx
                .call(v)
                .is_some_and(|k| k.name.to_ascii_lowercase().ends_with("callback"))
    })
}

/// A parameter named for an error, as a Node-style callback's first one
/// is: `err`, `error`, `e`, or a camelCase name ending in one
/// (`joinError`, `connErr`).
fn is_error_param(name: &str) -> bool {
    name.starts_with("err")
        || matches!(name, "er" | "e")
        || name.ends_with("Error")
        || name.ends_with("Err")
}

/// A function of this file by qualified name (the index may not hold
/// anonymous-but-named locals): `Some(Some(why))` if it is async.
fn local_fn_kind(cx: &FileCx, target: &str) -> Option<Option<&'static str>> {
    let f = cx.local_functions(target).next()?;
    Some(is_async_function(cx.func(f)).then_some("it is an async function"))
}

/// `async`, and not a generator: calling it gives a promise (an `async
/// function*` gives an async iterator, for `for await`).
pub fn is_async_function(f: &Function) -> bool {
    f.is_async && !f.is_generator
}

/// True for `.then(...)`, `.catch(...)`, `.finally(...)` calls.
pub fn is_chain_call(c: &Call) -> bool {
    c.receiver.is_some()
        && !c.args.is_empty()
        && matches!(c.name.as_str(), "then" | "catch" | "finally")
}

/// Why an expression evaluates to a promise (not awaited): a promise call,
/// or a `.then`/`.catch`/`.finally` chain on one.
pub fn promise_expr(cx: &FileCx, e: ExprId) -> Option<&'static str> {
    promise_expr_with(cx, e, true)
}

fn promise_expr_with(cx: &FileCx, e: ExprId, heuristic: bool) -> Option<&'static str> {
    let e = cx.model.strip(e);
    let c = cx.call(e)?;
    if is_chain_call(c) {
        return promise_expr_with(cx, c.receiver?, heuristic).map(|_| "a promise chain");
    }
    promise_call_with(cx, c, heuristic)
}

/// The function a callback argument is: an inline closure, or a function of
/// this file passed by name.
pub fn callback_fn(cx: &FileCx, e: ExprId) -> Option<FuncId> {
    let e = cx.model.strip(e);
    match &cx.expr(e).kind {
        ExprKind::Closure(f) => Some(*f),
        ExprKind::Name {
            resolved: Some(q), ..
        }
        | ExprKind::Attr {
            resolved: Some(q), ..
        } => cx.local_functions(q).find(|f| f.0 != 0),
        _ => None,
    }
}

/// The call a closure is passed to directly (as an argument), and the
/// argument's position.
pub fn closure_call_site(cx: &FileCx, f: FuncId) -> Option<(ExprId, usize)> {
    let Parent::Expr(site) = cx.tree.func_site(f) else {
        return None;
    };
    let mut cur = site;
    loop {
        match cx.tree.expr_parent(cur) {
            Parent::Expr(p) => {
                if let Some(c) = cx.call(p) {
                    let i = c.args.iter().position(|a| a.value == cur)?;
                    return Some((p, i));
                }
                if matches!(cx.expr(p).kind, ExprKind::Cast(_)) {
                    cur = p;
                    continue;
                }
                return None;
            }
            _ => return None,
        }
    }
}

/// The string value of a literal argument.
pub fn str_arg<'a>(cx: &FileCx<'a>, c: &Call, i: usize) -> Option<&'a str> {
    match cx.model.literal(c.positional(i)?) {
        Some(Lit::Str(s)) => Some(s.as_str()),
        _ => None,
    }
}

/// The string value of a literal expression.
pub fn str_lit<'a>(cx: &FileCx<'a>, e: ExprId) -> Option<&'a str> {
    match cx.model.literal(e) {
        Some(Lit::Str(s)) => Some(s.as_str()),
        _ => None,
    }
}

/// What an options object says about a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptKey {
    /// The key is set (to this value).
    Set(ExprId),
    /// The object cannot be read (a variable, a spread): it may be set.
    Unknown,
    /// An object literal without the key.
    Missing,
}

/// Looks up `key` in an options argument.
pub fn opt_key(cx: &FileCx, obj: ExprId, key: &str) -> OptKey {
    let obj = cx.model.strip(obj);
    match &cx.expr(obj).kind {
        ExprKind::Collection {
            kind: CollKind::Dict,
            elems,
            keys,
            ..
        } => {
            for (k, v) in keys.iter().zip(elems) {
                if k.as_deref() == Some(key) {
                    return OptKey::Set(*v);
                }
                if matches!(cx.expr(*v).kind, ExprKind::Spread(_)) || k.is_none() {
                    return OptKey::Unknown;
                }
            }
            OptKey::Missing
        }
        _ => OptKey::Unknown,
    }
}

// ------------------------------------------------------- loop and handlers --

/// HTTP/WebSocket/socket.io callbacks that run per request or message.
#[derive(Debug, Default)]
pub struct Handlers {
    kinds: HashMap<FuncId, &'static str>,
    /// The module runs in a worker thread (see [`is_worker_entry`]).
    worker_entry: bool,
    /// Functions that run once at start-up: a script's entry point, those
    /// named for start-up, and what only they call (see
    /// [`startup_functions`]).
    entries: HashSet<FuncId>,
    /// The module is a command-line program that serves nothing (see
    /// [`is_command_line_program`] and [`is_cli_module`]).
    command_line: bool,
}

impl Handlers {
    /// What kind of handler `f` is, if it is one.
    pub fn kind(&self, f: FuncId) -> Option<&'static str> {
        self.kinds.get(&f).copied()
    }
}

/// Route registration methods of express/koa-router/fastify/restify apps.
const ROUTE_METHODS: &[&str] = &[
    "get", "post", "put", "patch", "delete", "del", "all", "options", "head", "use",
];

/// Receivers that are server apps or routers by name, when their type is
/// not known.
fn app_like_name(name: &str) -> bool {
    let last = name.rsplit('.').next().unwrap_or(name).to_ascii_lowercase();
    matches!(
        last.as_str(),
        "app" | "router" | "server" | "api" | "fastify" | "routes" | "route" | "instance"
    ) || last.ends_with("router")
        || last.ends_with("app")
}

/// Packages whose apps and routers register request handlers.
fn framework_type(t: &str) -> bool {
    [
        "express",
        "koa",
        "@koa/router",
        "koa-router",
        "fastify",
        "restify",
        "hono",
        "polka",
    ]
    .iter()
    .any(|p| is_or_under(t, p, &['.']))
}

/// Server constructors whose callback handles each request or connection.
fn server_factory(t: &str) -> Option<&'static str> {
    Some(match t {
        "http.createServer"
        | "https.createServer"
        | "http2.createServer"
        | "http2.createSecureServer" => "an HTTP request handler",
        "net.createServer" | "tls.createServer" => "a connection handler",
        _ => return None,
    })
}

/// Events that fire per request, connection or message.
fn per_request_event(ev: &str) -> Option<&'static str> {
    Some(match ev {
        "request" | "stream" => "an HTTP request handler",
        "connection" | "connect" => "a connection handler",
        "message" | "upgrade" => "a message handler",
        _ => return None,
    })
}

/// NestJS controller and gateway decorators.
fn nest_handler(decorator: &str) -> bool {
    let last = decorator.rsplit('.').next().unwrap_or(decorator);
    decorator.starts_with("@nestjs/")
        && matches!(
            last,
            "Get"
                | "Post"
                | "Put"
                | "Patch"
                | "Delete"
                | "All"
                | "Head"
                | "Options"
                | "SubscribeMessage"
                | "MessagePattern"
                | "EventPattern"
        )
}

/// Finds the request/message handlers of a file: callbacks given to route
/// registrations (`app.get('/x', (req, res) => ...)`), to server factories
/// (`http.createServer(cb)`), to per-request events (`wss.on('connection',
/// ...)`, `ws.on('message', ...)`), events of the sockets and requests those
/// handlers receive (`socket.on('chat', ...)`, `req.on('end', ...)`), and
/// NestJS controller methods. Worked out once per file.
pub fn handlers<'c>(cx: &'c FileCx) -> &'c Handlers {
    cx.caches.js_handlers.get_or_init(|| find_handlers(cx))
}

fn find_handlers(cx: &FileCx) -> Handlers {
    let mut h = Handlers {
        worker_entry: is_worker_entry(cx),
        entries: startup_functions(cx),
        ..Handlers::default()
    };
    let next_api =
        cx.model.module.contains("pages/api/") || cx.model.module.starts_with("pages/api");
    for f in cx.model.function_ids() {
        let func = cx.func(f);
        if func.decorators.iter().any(|d| nest_handler(d)) {
            h.kinds.insert(f, "a NestJS route handler");
        }
        // Next.js API routes: the default export of `pages/api/**`.
        if next_api && func.qualname.ends_with(".default") && !func.params.is_empty() {
            h.kinds.insert(f, "a request handler");
        }
    }
    // Handlers first by registration, then the events of their parameters
    // (in id order, parents before children).
    let mut calls: Vec<ExprId> = Vec::new();
    for (i, e) in cx.model.exprs.iter().enumerate() {
        if matches!(e.kind, ExprKind::Call(_)) {
            calls.push(ExprId(i as u32));
        }
    }
    for &e in &calls {
        let c = cx.call(e).unwrap();
        if let Some(kind) = registration_kind(cx, c) {
            for a in &c.args {
                if let Some(f) = callback_fn(cx, a.value) {
                    h.kinds.entry(f).or_insert(kind);
                }
            }
        }
        // `fastify.route({ method, url, handler })`, hapi's `server.route`.
        if c.name == "route"
            && c.receiver
                .and_then(|r| cx.model.dotted(r))
                .is_some_and(|n| app_like_name(&n))
        {
            for a in &c.args {
                if let OptKey::Set(v) = opt_key(cx, a.value, "handler")
                    && let Some(f) = callback_fn(cx, v)
                {
                    h.kinds.entry(f).or_insert("a request handler");
                }
            }
        }
    }
    // Events on the parameters of handlers (`socket.on('chat', ...)`).
    for _ in 0..3 {
        let mut added = false;
        for &e in &calls {
            let c = cx.call(e).unwrap();
            if !matches!(
                c.name.as_str(),
                "on" | "once" | "addListener" | "addEventListener"
            ) {
                continue;
            }
            let Some(recv) = c.receiver else { continue };
            let Some(root) = root_name(cx, recv) else {
                continue;
            };
            let owner = cx.func_of(e);
            let Some(param_of) = param_owner(cx, owner, root) else {
                continue;
            };
            let Some(kind) = h.kind(param_of) else {
                continue;
            };
            let kind = if kind == "a connection handler" {
                "a message handler"
            } else {
                kind
            };
            for a in c.args.iter().skip(1) {
                if let Some(f) = callback_fn(cx, a.value)
                    && !h.kinds.contains_key(&f)
                {
                    h.kinds.insert(f, kind);
                    added = true;
                }
            }
        }
        if !added {
            break;
        }
    }
    h.command_line = is_command_line_program(cx, &h);
    h
}

fn registration_kind(cx: &FileCx, c: &Call) -> Option<&'static str> {
    if let Some(t) = c.target.as_deref()
        && let Some(k) = server_factory(t)
    {
        return Some(k);
    }
    let recv = c.receiver?;
    if matches!(c.name.as_str(), "on" | "once" | "addListener") {
        let ev = str_arg(cx, c, 0)?;
        let kind = per_request_event(ev)?;
        let r = cx.model.dotted(recv).unwrap_or_default();
        // A worker's own message port: blocking there blocks only the worker.
        if r.ends_with("parentPort") || r == "self" {
            return None;
        }
        if ev == "connect" && !app_like_name(&r) && !r.ends_with("io") {
            return None;
        }
        return Some(kind);
    }
    if !ROUTE_METHODS.contains(&c.name.as_str()) {
        return None;
    }
    let typed = cx.sema.type_of(recv).is_some_and(framework_type)
        || c.target.as_deref().is_some_and(framework_type);
    let named = cx.model.dotted(recv).is_some_and(|n| app_like_name(&n));
    if !typed && !named {
        return None;
    }
    // A route path (or `use`), then handler callbacks taking a request.
    let path_ok = c.name == "use"
        || str_arg(cx, c, 0).is_some_and(|p| p.starts_with('/') || p == "*")
        || typed;
    let has_req_callback = c.args.iter().any(|a| {
        callback_fn(cx, a.value).is_some_and(|f| {
            let ps = &cx.func(f).params;
            !ps.is_empty() && ps.len() <= 4
        })
    });
    (path_ok && has_req_callback).then_some("a request handler")
}

/// The function among `f` and its ancestors that has a parameter `name`.
pub fn param_owner(cx: &FileCx, f: FuncId, name: &str) -> Option<FuncId> {
    let mut cur = Some(f);
    while let Some(id) = cur {
        if id.0 == 0 {
            return None;
        }
        if cx.func(id).params.iter().any(|p| p.name == name) {
            return Some(id);
        }
        if declares_local(cx, id, name) {
            return None;
        }
        cur = cx.func(id).parent;
    }
    None
}

/// The module runs in a worker thread: it talks to its parent through
/// `parentPort` or reads `workerData` (both null on the main thread). Its
/// event loop serves that worker alone, and blocking or long CPU work
/// there is what workers are for.
fn is_worker_entry(cx: &FileCx) -> bool {
    const WORKER_SIDE: [&str; 2] = ["worker_threads.parentPort", "worker_threads.workerData"];
    cx.model
        .imports
        .iter()
        .any(|i| WORKER_SIDE.contains(&i.target.as_str()))
        // `wt.parentPort.on(..)` through the module object (compiled TS).
        || cx
            .calls_named(&["on", "once", "postMessage"])
            .iter()
            .any(|(_, c)| {
                c.target
                    .as_deref()
                    .is_some_and(|t| WORKER_SIDE.iter().any(|w| crate::util::is_under(t, w, &['.'])))
            })
        || is_web_worker_script(cx)
}

/// A dedicated web worker's script: it sets its message handler on the
/// worker's global (`self.onmessage = ..`) or loads scripts with a bare
/// `importScripts(..)`, which only a worker's global has.
fn is_web_worker_script(cx: &FileCx) -> bool {
    cx.model.stmts.iter().any(|st| {
        matches!(&st.kind, StmtKind::Assign { targets, .. }
        if targets.iter().any(|&t| {
            matches!(cx.model.dotted(t).as_deref(), Some("self.onmessage" | "globalThis.onmessage"))
        }))
    }) || cx
        .calls_named(&["importScripts"])
        .iter()
        .any(|(_, c)| c.receiver.is_none())
}

/// Where `f` runs on the loop at request time, for messages ("in async
/// `load`", "in a request handler"), or `None`: async functions that are
/// not start-up `main`s or tests, request/message handlers, and the
/// callbacks and helpers nested in either.
pub fn loop_place(cx: &FileCx, h: &Handlers, f: FuncId) -> Option<String> {
    if h.worker_entry || h.command_line {
        return None;
    }
    let mut cur = f;
    let mut nested = false;
    for _ in 0..8 {
        if in_test(cx, cur) || cur.0 == 0 {
            return None;
        }
        let func = cx.func(cur);
        let inner = if nested { "in a callback of " } else { "in " };
        if let Some(kind) = h.kind(cur) {
            let name = if func.name.is_empty() {
                String::new()
            } else {
                format!(" `{}`", func.name)
            };
            return Some(format!("{inner}{kind}{name}"));
        }
        if func.is_async {
            if cx.is_offloaded(cur) || h.entries.contains(&cur) {
                return None;
            }
            return Some(format!("{inner}{}", cx.async_func_display(cur)));
        }
        // A function nested in request-time code (an array callback, a
        // promise executor, a `.then` or event callback, a local helper)
        // also runs on the loop at request time, unless it is handed to a
        // worker thread.
        if cx.is_offloaded(cur) {
            return None;
        }
        cur = func.parent?;
        nested = true;
    }
    None
}

/// A command-line program: a module that registers no request or message
/// handler and that either its path names as part of a command-line
/// interface or that exports nothing and reads its arguments
/// (`process.argv`) or starts with `#!`. It runs its tasks one after another for
/// one user, so a blocking call in it stalls no one else (`node
/// npm-scripts.mjs release`: `execSync` and `fs.*Sync` by design).
fn is_command_line_program(cx: &FileCx, h: &Handlers) -> bool {
    h.kinds.is_empty()
        && (is_cli_module(&cx.model.module)
            || is_build_config(&cx.model.module)
            || exports_nothing(cx.text)
                && (cx.text.starts_with("#!") || cx.text.contains("process.argv")))
}

/// A module that its path names as part of a command-line interface or a
/// script: a file named `cli` (or `cli-*`, `*-cli`), or one under a folder
/// so named or a `bin/` or `scripts/` folder (eslint's `lib/cli.js`,
/// `src/internal/cli/init/package-manager.js`, `tools/cli-client/
/// program.js`, `scripts/release.mjs`). Such code runs the steps of one
/// command for one user, even when it exports them for an executable to
/// call.
fn is_cli_module(module: &str) -> bool {
    let cli = |p: &str| {
        p == "cli"
            || p.starts_with("cli-")
            || p.starts_with("cli_")
            || p.ends_with("-cli")
            || p.ends_with("_cli")
    };
    let mut parts = module.split('/');
    let file = parts.next_back().unwrap_or_default();
    cli(file) || parts.any(|d| cli(d) || d == "bin" || d == "scripts")
}

/// A build tool's configuration (`tsup.config.ts`, `vite.config.mjs`,
/// `webpack.config.js`): the tool loads it once per build, and its hooks
/// (`onSuccess`) run in that one process for the one user building.
fn is_build_config(module: &str) -> bool {
    let file = module.rsplit('/').next().unwrap_or(module);
    file.ends_with(".config") || file.contains(".config.")
}

/// The functions of the file that run once at start-up: those module code
/// calls under `if (require.main === module)` (or a test that `||` joins
/// to it; the file is a script, and they are its entry point), those named
/// for start-up ([`is_startup_name`]), and the module's functions that only
/// such code calls (`start()` calling `checkDist()`): see
/// [`reached_only_from`].
fn startup_functions(cx: &FileCx) -> HashSet<FuncId> {
    let mut out = HashSet::new();
    for &s in &cx.func(FuncId(0)).body {
        let StmtKind::If { cond, then, .. } = &cx.stmt(s).kind else {
            continue;
        };
        let test: String = cx
            .source(cx.expr(*cond).span)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let is_main = |t: &str| {
            matches!(
                t.trim_start_matches('(').trim_end_matches(')'),
                "require.main===module" | "require.main==module" | "module===require.main"
            )
        };
        if !test.split("||").any(is_main) {
            continue;
        }
        for e in unsnarl_model::walk::calls_in_block(cx.model, then) {
            if let Some(f) = cx.call(e).and_then(|c| cx.callee_in_file(c)) {
                out.insert(f);
            }
        }
    }
    // Start-up functions by name, so that what only they call is too
    // (`init()` calling `migrateConfig()`).
    out.extend(
        cx.model
            .function_ids()
            .filter(|&f| f.0 != 0 && is_startup_name(&cx.func(f).name)),
    );
    if !out.is_empty() {
        reached_only_from(cx, &mut out);
    }
    out
}

/// Adds to `set` the module-level functions whose every mention in the
/// file is their definition or a plain call from code already in `set`
/// (or nested in it): they run only as part of it. A function that is
/// exported, passed as a value or called from anywhere else has other
/// mentions and stays out.
fn reached_only_from(cx: &FileCx, set: &mut HashSet<FuncId>) {
    let inside = |set: &HashSet<FuncId>, mut f: FuncId| loop {
        if set.contains(&f) {
            return true;
        }
        match cx.func(f).parent {
            Some(p) if p != FuncId(0) => f = p,
            _ => return false,
        }
    };
    // Every plain in-file call of a module-level function: the functions
    // it is made from, by callee.
    let mut callers: HashMap<FuncId, Vec<FuncId>> = HashMap::new();
    for (i, e) in cx.model.exprs.iter().enumerate() {
        if let ExprKind::Call(c) = &e.kind
            && c.receiver.is_none()
            && let Some(g) = cx.callee_in_file(c)
            && cx.func(g).parent == Some(FuncId(0))
            && cx.func(g).class.is_none()
            && !cx.func(g).name.is_empty()
        {
            callers
                .entry(g)
                .or_default()
                .push(cx.func_of(ExprId(i as u32)));
        }
    }
    loop {
        let mut added = Vec::new();
        for (&f, sites) in &callers {
            if !set.contains(&f)
                && sites.iter().all(|&from| inside(set, from))
                && crate::util::word_count(cx.text, &cx.func(f).name) == sites.len() + 1
            {
                added.push(f);
            }
        }
        if added.is_empty() {
            return;
        }
        set.extend(added);
    }
}

/// Functions that by name run once at start-up (a service's `init` or
/// `start`, a script's `main`).
fn is_startup_name(name: &str) -> bool {
    matches!(
        name,
        "main"
            | "bootstrap"
            | "cli"
            | "run_cli"
            | "runCli"
            | "setup"
            | "globalSetup"
            | "globalTeardown"
            | "init"
            | "initialize"
            | "start"
    )
}

// ---------------------------------------------------------- shared state --

/// Where a name used in a function lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// A parameter or local of the function itself.
    Local,
    /// A variable of an enclosing function (shared by every call of the
    /// closure that captured it).
    Outer(FuncId),
    /// A module-level variable.
    Module,
    /// An import, a global, or something not declared in this file.
    Unknown,
}

/// True when `f` itself (not a nested function) declares `name`: a
/// parameter, a `let`/`const`/`var`, a function declaration, a catch or
/// loop binding.
pub fn declares_local(cx: &FileCx, f: FuncId, name: &str) -> bool {
    let func = cx.func(f);
    if func.params.iter().any(|p| {
        p.name == name
            || p.name.strip_prefix("...") == Some(name)
            || (p.name.starts_with(['{', '[']) && pattern_has(&p.name, name))
    }) {
        return true;
    }
    struct V<'n> {
        name: &'n str,
        found: bool,
    }
    impl Visitor for V<'_> {
        fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
            match &m.stmt(id).kind {
                StmtKind::Assign {
                    targets,
                    op: AssignOp::Declare { .. },
                    ..
                } => {
                    for &t in targets {
                        if target_binds(m, t, self.name) {
                            self.found = true;
                        }
                    }
                }
                StmtKind::For {
                    target: Some(t), ..
                } if target_binds(m, *t, self.name) => self.found = true,
                StmtKind::FuncDef(f) if m.func(*f).name == self.name => self.found = true,
                StmtKind::Try { handlers, .. }
                    if handlers
                        .iter()
                        .any(|h| h.name.as_deref() == Some(self.name)) =>
                {
                    self.found = true
                }
                _ => {}
            }
            !self.found
        }
        fn enter_expr(&mut self, _m: &FileModel, _id: ExprId) -> bool {
            false
        }
    }
    let mut v = V { name, found: false };
    walk_block(cx.model, &func.body, &mut v);
    v.found
}

fn pattern_has(pattern: &str, name: &str) -> bool {
    pattern
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .any(|w| w == name)
}

/// True when the binding target `t` (a name or a destructuring pattern)
/// binds `name`.
fn target_binds(m: &FileModel, t: ExprId, name: &str) -> bool {
    match &m.expr(t).kind {
        ExprKind::Name { id, .. } => id == name,
        ExprKind::Collection { elems, .. } => elems.iter().any(|&e| target_binds(m, e, name)),
        ExprKind::Spread(e) | ExprKind::Cast(e) => target_binds(m, *e, name),
        ExprKind::AssignExpr { target, .. } => target_binds(m, *target, name),
        _ => false,
    }
}

/// The names a binding target (a name or a destructuring pattern) binds.
pub fn bound_names(cx: &FileCx, t: ExprId) -> Vec<String> {
    match &cx.expr(t).kind {
        ExprKind::Name { id, .. } => vec![id.to_string()],
        ExprKind::Collection { elems, .. } => {
            elems.iter().flat_map(|&e| bound_names(cx, e)).collect()
        }
        ExprKind::AssignExpr { target, .. } | ExprKind::Spread(target) | ExprKind::Cast(target) => {
            bound_names(cx, *target)
        }
        _ => Vec::new(),
    }
}

/// Where `name`, used in `f`, is declared.
pub fn scope_of(cx: &FileCx, f: FuncId, name: &str) -> Scope {
    let mut cur = Some(f);
    while let Some(id) = cur {
        if id.0 == 0 {
            return if declares_local(cx, id, name) {
                Scope::Module
            } else {
                Scope::Unknown
            };
        }
        if declares_local(cx, id, name) {
            return if id == f {
                Scope::Local
            } else {
                Scope::Outer(id)
            };
        }
        cur = cx.func(id).parent;
    }
    Scope::Unknown
}

/// The root identifier of a member chain (`a` of `a.b[c].d`), `this`
/// included.
pub fn root_name<'a>(cx: &FileCx<'a>, e: ExprId) -> Option<&'a str> {
    let mut cur = cx.model.strip(e);
    for _ in 0..32 {
        match &cx.expr(cur).kind {
            ExprKind::Name { id, .. } => return Some(id),
            ExprKind::Attr { obj, .. } | ExprKind::Index { obj, .. } => cur = cx.model.strip(*obj),
            ExprKind::Call(c) if c.receiver.is_some() => cur = cx.model.strip(c.receiver?),
            _ => return None,
        }
    }
    None
}

/// What kind of shared state an expression (a name or member chain) is in
/// function `f`: module state, `this` state, or a captured outer variable.
/// `None` for locals and unknown things.
pub fn shared_state(cx: &FileCx, f: FuncId, e: ExprId) -> Option<&'static str> {
    let root = root_name(cx, e)?;
    if root == "this" {
        let owner = cx.tree.func_ancestors(cx.model, f).find(|&a| {
            let func = cx.func(a);
            func.kind != FnKind::Closure || func.class.is_some()
        })?;
        let func = cx.func(owner);
        // `this` in a plain function is whatever the caller passes; the
        // constructor's own body runs before anyone else sees the object
        // (closures it creates run later).
        return (func.class.is_some() && (func.name != "constructor" || owner != f))
            .then_some("instance state");
    }
    match scope_of(cx, f, root) {
        Scope::Module => Some("module state"),
        Scope::Outer(_) => Some("a variable shared with an enclosing function"),
        Scope::Local | Scope::Unknown => None,
    }
}

/// A canonical text for a member chain (`this.cache`, `cache[key]` →
/// `cache[]`), to compare reads and writes of the same state.
pub fn chain_key(cx: &FileCx, e: ExprId) -> Option<String> {
    let e = cx.model.strip(e);
    match &cx.expr(e).kind {
        ExprKind::Name { id, .. } => Some(id.to_string()),
        ExprKind::Attr { obj, name, .. } => Some(format!("{}.{name}", chain_key(cx, *obj)?)),
        ExprKind::Index { obj, index } => {
            let idx = match cx.model.literal(*index) {
                Some(Lit::Str(s)) => format!("[{s:?}]"),
                Some(Lit::Int(v)) => format!("[{v}]"),
                _ => match cx.model.dotted(*index) {
                    Some(d) => format!("[{d}]"),
                    None => "[]".into(),
                },
            };
            Some(format!("{}{idx}", chain_key(cx, *obj)?))
        }
        _ => None,
    }
}

// ------------------------------------------------------------ statements --

/// The statement an expression belongs to.
pub fn stmt_of(cx: &FileCx, e: ExprId) -> Option<StmtId> {
    cx.tree.enclosing_stmt(e)
}

/// True when the expression sits in the body of a `try` that has a `catch`
/// (in its own function).
pub fn in_try_with_catch(cx: &FileCx, e: ExprId) -> bool {
    let Some(s) = stmt_of(cx, e) else {
        return false;
    };
    cx.tree.stmt_ancestors(s).any(|a| {
        matches!(&cx.stmt(a).kind, StmtKind::Try { body, handlers, .. }
            if !handlers.is_empty() && block_contains(cx, body, s))
    })
}

pub use crate::util::block_contains;

/// The functions of this file (not the module itself) whose qualified name
/// ends with the segment `name` (`Store.prototype.writeFile`,
/// `Flow.prototype.then`): what a `this.name(..)` call the front end left
/// unresolved may reach.
pub fn functions_ending_with<'c>(cx: &'c FileCx, name: &str) -> impl Iterator<Item = FuncId> + 'c {
    let suffix = format!(".{name}");
    cx.model
        .function_ids()
        .filter(move |&f| f.0 != 0 && cx.func(f).qualname.ends_with(&suffix))
}

/// Every call expression of a function body, in source order (not in
/// nested functions).
pub fn calls_of<'c>(cx: &'c FileCx, f: FuncId) -> impl Iterator<Item = ExprId> + 'c {
    cx.body_calls(f)
}

/// Every expression of a function body (not nested functions).
pub fn exprs_of<'c>(cx: &'c FileCx, f: FuncId) -> impl Iterator<Item = ExprId> + 'c {
    cx.body_exprs(f).iter().copied()
}

/// The 1-based line of a byte offset.
pub fn line_of(cx: &FileCx, offset: u32) -> usize {
    cx.text
        .get(..offset as usize)
        .map_or(0, |t| t.bytes().filter(|&b| b == b'\n').count())
        + 1
}

/// The line of `span` (or the one before it) carries an
/// `eslint-disable(-next)-line` comment naming `rule` (the author looked at
/// this exact finding and decided).
pub fn eslint_disabled(cx: &FileCx, span: Span, rule: &str) -> bool {
    let start = span.start as usize;
    let line_start = cx.text[..start.min(cx.text.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let line_end = cx.text[start.min(cx.text.len())..]
        .find('\n')
        .map_or(cx.text.len(), |i| start + i);
    let prev_start = cx.text[..line_start.saturating_sub(1)]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let this_line = &cx.text[line_start..line_end];
    let prev_line = &cx.text[prev_start..line_start];
    (this_line.contains("eslint-disable-line") && this_line.contains(rule))
        || (prev_line.contains("eslint-disable-next-line") && prev_line.contains(rule))
}

/// Whether a local function the call names (`await attempt()`,
/// `this.reconnect()`), or a closure inside it, makes a call `pred` accepts:
/// how a rule sees a delay or backoff hidden behind a helper of the file.
pub fn local_callee_makes(cx: &FileCx, c: &Call, pred: impl Fn(ExprId) -> bool) -> bool {
    let Some(t) = c.target.as_deref() else {
        return false;
    };
    cx.local_functions(t).filter(|f| f.0 != 0).any(|f| {
        cx.with_nested(f)
            .into_iter()
            .any(|g| calls_of(cx, g).any(&pred))
    })
}

/// A timer-like delay call: `setTimeout(fn, ms)`, `sleep(ms)`,
/// `delay(ms)`, `timers/promises.setTimeout(ms)`, `new Promise(r =>
/// setTimeout(r, ms))`. Returns the delay expression when there is one.
pub fn delay_of(cx: &FileCx, e: ExprId) -> Option<Option<ExprId>> {
    let e = cx.model.strip(e);
    let c = cx.call(e)?;
    let lname = c.name.to_ascii_lowercase();
    if c.target
        .as_deref()
        .is_some_and(|t| t.starts_with("AbortSignal."))
    {
        return None;
    }
    match c.target.as_deref() {
        Some("setTimeout") => return Some(c.positional(1)),
        Some("timers/promises.setTimeout" | "timers/promises.scheduler.wait") => {
            return Some(c.positional(0));
        }
        // `Atomics.wait(view, index, value, ms)` in a worker: with a
        // timeout it is a blocking sleep (without one it waits for a
        // notification, which is no delay).
        Some("Atomics.wait") if c.positional(3).is_some() => return Some(c.positional(3)),
        // `await timers.setTimeout(ms, value, { signal })` of a
        // `timers/promises` module the code loaded itself: awaited, with
        // the delay first (the global `setTimeout` takes a callback first
        // and returns a handle, not a promise).
        _ if c.name == "setTimeout"
            && c.receiver.is_some()
            && cx.is_awaited(e)
            && c.positional(0)
                .is_some_and(|a| callback_fn(cx, a).is_none()) =>
        {
            return Some(c.positional(0));
        }
        Some("Promise") if c.is_new => {
            // `new Promise(r => setTimeout(r, ms))`.
            let f = callback_fn(cx, c.positional(0)?)?;
            for inner in calls_of(cx, f) {
                if let Some(d) = delay_of(cx, inner) {
                    return Some(d);
                }
            }
            return None;
        }
        _ => {}
    }
    let sleepy = lname == "sleep"
        || lname == "delay"
        || lname == "pause"
        || lname == "timeout"
        || lname.ends_with("sleep")
        // `sleepMillis(ms)`, `sleepMs(ms)`: named with the unit.
        || lname.starts_with("sleep")
        || lname.ends_with("delay")
        // `wait(ms)`, `promiseWait(10 * attempt)`.
        || lname.ends_with("wait");
    (sleepy && c.args.len() <= 2).then(|| c.positional(0))
}

/// True when an expression involves randomness (`Math.random()`, a
/// `jitter` helper, `crypto.randomInt`).
pub fn has_jitter(cx: &FileCx, e: ExprId) -> bool {
    unsnarl_model::walk::exprs_under(cx.model, e)
        .into_iter()
        .any(|x| match &cx.expr(x).kind {
            ExprKind::Call(c) => {
                let n = c.name.to_ascii_lowercase();
                n.contains("random") || n.contains("jitter")
            }
            ExprKind::Name { id, .. } | ExprKind::Attr { name: id, .. } => {
                let n = id.to_ascii_lowercase();
                n.contains("jitter") || n.contains("random")
            }
            _ => false,
        })
}

/// True when a delay expression grows (an exponent, a multiplication by a
/// variable, a `backoff` helper) rather than being constant.
pub fn grows(cx: &FileCx, e: ExprId) -> bool {
    if cx.model.int_value(e).is_some() {
        return false;
    }
    unsnarl_model::walk::exprs_under(cx.model, e)
        .into_iter()
        .any(|x| match &cx.expr(x).kind {
            ExprKind::Binary {
                op: BinOp::Mul | BinOp::Other | BinOp::Bit,
                left,
                right,
            } => cx.model.int_value(*left).is_none() || cx.model.int_value(*right).is_none(),
            ExprKind::Call(c) => {
                let n = c.name.to_ascii_lowercase();
                n == "pow" || n.contains("backoff") || n.contains("exponential")
            }
            ExprKind::Name { id, .. } | ExprKind::Attr { name: id, .. } => {
                let n = id.to_ascii_lowercase();
                n.contains("backoff") || n.contains("attempt") || n.contains("retry")
            }
            _ => false,
        })
}

/// The first `await` of `f` (not of nested functions) that is not inside a
/// `try` with a `catch`: where a rejection escapes the function. `None` when
/// every await is guarded (or there is none).
pub fn unguarded_await(cx: &FileCx, f: FuncId) -> Option<ExprId> {
    unguarded_await_within(cx, f, 0)
}

/// [`unguarded_await`], following awaited calls of the file's own async
/// functions `depth` levels deep already.
pub(crate) fn unguarded_await_within(cx: &FileCx, f: FuncId, depth: usize) -> Option<ExprId> {
    let awaits = exprs_of(cx, f).find(|&e| match cx.expr(e).kind {
        ExprKind::Await(p) => {
            // `await this.tick()` of a function of the file that catches
            // everything itself.
            let guarded_call = || {
                depth < 3
                    && cx.call(cx.model.strip(p)).is_some_and(|c| {
                        local_callee_is_not(cx, c, f)
                            && super::rejection::guarded_callee_within(cx, c, depth + 1)
                            || super::rejection::never_rejects_in_project(cx, c)
                    })
            };
            // `await new Promise((resolve) => (this.wake = resolve))`: a
            // waiter with no `reject` cannot reject.
            !(in_try_with_catch(cx, e)
                || handles_rejection(cx, p)
                || super::rejection::awaits_resolve_only_deferred(cx, p)
                || super::rejection::resolve_only_promise(cx, p)
                || guarded_call())
        }
        _ => false,
    });
    // `for await (x of it)`: each step awaits `it`.
    awaits.or_else(|| {
        stmts_of(cx, f).find_map(|s| match cx.stmt(s).kind {
            StmtKind::For {
                iter,
                is_async: true,
                ..
            } if !in_try_with_catch(cx, iter) => Some(iter),
            _ => None,
        })
    })
}

/// `c` calls a function of the file other than `f` (a retry of itself
/// proves nothing).
fn local_callee_is_not(cx: &FileCx, c: &Call, f: FuncId) -> bool {
    super::rejection::local_callee(cx, c).is_some_and(|g| g != f)
}

/// No `module.exports`, `exports.x =` or ES `export`: nothing imports the
/// file for what it defines.
pub fn exports_nothing(text: &str) -> bool {
    !text.contains("exports") && !text.lines().any(|l| l.trim_start().starts_with("export "))
}

/// The file is a program run on its own, not a module others load: it
/// starts with `#!`, or exports nothing and is a test file, sits in a
/// folder of runnable programs (`examples/`, `scripts/`, `bin/`,
/// `benchmark/`) or is
/// named as one outside the module folders (`example.js`, `demo.mjs`).
pub fn program_script(cx: &FileCx) -> bool {
    if cx.text.starts_with("#!") {
        return true;
    }
    let mut segments = cx.path.rsplit('/');
    let stem = segments
        .next()
        .and_then(|f| f.split('.').next())
        .unwrap_or("");
    let dirs: Vec<&str> = segments.collect();
    let program_dir = dirs.iter().any(|d| {
        matches!(
            *d,
            "examples"
                | "example"
                | "scripts"
                | "script"
                | "bin"
                | "demo"
                | "demos"
                | "benchmark"
                | "benchmarks"
                | "bench"
        )
    });
    // Beside the package's manifest, not among its modules (`src/`, `lib/`).
    let program_name = matches!(stem, "example" | "demo")
        && !dirs
            .first()
            .is_some_and(|d| matches!(*d, "src" | "lib" | "dist"));
    (cx.model.is_test || program_dir || program_name) && exports_nothing(cx.text)
}

/// A Node-style callback (`function (err, broker) { .. }`) handed to a
/// call made once at the top level of a program script
/// (`Broker.create(config, function (err, broker) { .. })`): it runs once,
/// when the call completes, as part of the program's start-up.
pub fn startup_callback(cx: &FileCx, f: FuncId) -> bool {
    let first_is_err = cx
        .func(f)
        .params
        .first()
        .is_some_and(|p| matches!(p.name.as_str(), "err" | "error"));
    first_is_err
        && program_script(cx)
        && closure_call_site(cx, f).is_some_and(|(call, _)| runs_once_at_top(cx, call))
}

/// An IIFE of the module's top level (`(async () => { .. })();`), outside
/// any loop: it runs once, when the module loads.
pub fn top_level_iife(cx: &FileCx, f: FuncId) -> bool {
    let Parent::Expr(site) = cx.tree.func_site(f) else {
        return false;
    };
    let mut callee = site;
    while let Parent::Expr(p) = cx.tree.expr_parent(callee) {
        if let Some(c) = cx.call(p) {
            return cx.model.strip(c.func) == cx.model.strip(callee) && runs_once_at_top(cx, p);
        }
        if !matches!(cx.expr(p).kind, ExprKind::Cast(_)) {
            return false;
        }
        callee = p;
    }
    false
}

/// A function of the module (not a method) that the module calls exactly
/// once, from its top level and outside any loop, in a file that exports
/// nothing (`async function boot() { .. } boot();`): a script's start-up, which
/// runs once per process, not per call.
pub fn called_once_at_top(cx: &FileCx, f: FuncId) -> bool {
    let func = cx.func(f);
    if func.class.is_some() || func.parent != Some(FuncId(0)) || func.name.is_empty() {
        return false;
    }
    if !exports_nothing(cx.text) {
        return false;
    }
    let name = func.name.as_str();
    let mut calls = cx.model.exprs.iter().enumerate().filter(|(_, e)| {
        matches!(&e.kind, ExprKind::Call(c) if c.receiver.is_none() && cx.model.name_of(c.func) == Some(name))
    });
    let (Some((i, _)), None) = (calls.next(), calls.next()) else {
        return false;
    };
    runs_once_at_top(cx, ExprId(i as u32))
}

/// The call is made by the module's top level itself, outside any loop:
/// once per load of the module.
fn runs_once_at_top(cx: &FileCx, call: ExprId) -> bool {
    cx.func_of(call) == FuncId(0)
        && !cx.tree.enclosing_stmt(call).is_some_and(|s| {
            std::iter::once(s)
                .chain(cx.tree.stmt_ancestors(s))
                .any(|a| {
                    matches!(
                        cx.stmt(a).kind,
                        StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::Loop { .. }
                    )
                })
        })
}

/// The function of the module's top level that `f` is nested in (`f`
/// itself when it is one).
pub fn top_level_fn(cx: &FileCx, mut f: FuncId) -> FuncId {
    while let Some(p) = cx.func(f).parent {
        if p == FuncId(0) {
            break;
        }
        f = p;
    }
    f
}

/// `p.catch(handler)` or `p.then(onOk, onErr)`, or a local the file only
/// ever gives such promises or `undefined`: the awaited promise has its
/// rejection handled already (it rejects only if the handler throws).
fn handles_rejection(cx: &FileCx, awaited: ExprId) -> bool {
    let awaited = cx.model.strip(awaited);
    // `await bodyWritten`, a local only ever given handled promises.
    if let Some(name) = cx.model.name_of(awaited) {
        return crate::index::js_local_settles(cx.model, name);
    }
    cx.call(awaited)
        .is_some_and(|c| crate::index::js_settles_without_rejecting(cx.model, c))
}

/// True when `f` has an `await` (or `for await`) anywhere in its own body.
pub fn has_await(cx: &FileCx, f: FuncId) -> bool {
    !crate::util::awaits_in_block(cx.model, &cx.func(f).body).is_empty()
}

/// The promises locals of `f` hold: `const p = promiseCall()` (or `let`,
/// never reassigned) in `f`'s own body; name → initializer.
pub fn promise_bindings(cx: &FileCx, f: FuncId) -> HashMap<String, ExprId> {
    // A binding needs a declaration from a promise in `f`: one pass over
    // the file's statements finds the few functions that have one, and the
    // others need no walk of their body.
    let declarers = cx.caches.js_promise_declarers.get_or_init(|| {
        (cx.model.stmts.iter().enumerate())
            .filter(|(_, s)| {
                matches!(&s.kind, StmtKind::Assign {
                    op: AssignOp::Declare { .. },
                    value: Some(v),
                    ..
                } if promise_expr(cx, *v).is_some())
            })
            .map(|(i, _)| cx.tree.stmt_func(StmtId(i as u32)))
            .collect()
    });
    if !declarers.contains(&f) {
        return HashMap::new();
    }
    let mut writes: HashMap<&str, (usize, Option<ExprId>)> = HashMap::new();
    let mut spoiled: HashSet<&str> = HashSet::new();
    for s in stmts_of(cx, f) {
        match &cx.stmt(s).kind {
            StmtKind::Assign { targets, value, op } => {
                for &t in targets {
                    if let Some(n) = cx.model.name_of(t) {
                        let w = writes.entry(n).or_insert((0, None));
                        w.0 += 1;
                        if matches!(op, AssignOp::Declare { .. }) {
                            w.1 = *value;
                        }
                    }
                }
            }
            StmtKind::For {
                target: Some(t), ..
            } => {
                if let Some(n) = cx.model.name_of(*t) {
                    spoiled.insert(n);
                }
            }
            _ => {}
        }
    }
    for e in exprs_of(cx, f) {
        if let ExprKind::AssignExpr { target, .. } = cx.expr(e).kind
            && let Some(n) = cx.model.name_of(target)
        {
            spoiled.insert(n);
        }
    }
    writes
        .into_iter()
        .filter(|(n, (count, init))| *count == 1 && init.is_some() && !spoiled.contains(n))
        .filter_map(|(n, (_, init))| {
            let init = init?;
            promise_expr(cx, init).map(|_| (n.to_string(), init))
        })
        .collect()
}

/// Every statement of a function body, nested ones included, in order (not
/// in nested functions).
pub fn stmts_of<'c>(cx: &'c FileCx, f: FuncId) -> impl Iterator<Item = StmtId> + 'c {
    cx.body_stmts(f).iter().copied()
}

/// True when the value of `e` is tested for truth: an `if`/`while`/ternary
/// condition, the operand of `!`, the left side of `&&`/`||` (or the right
/// side of one that is itself tested).
pub fn truth_tested(cx: &FileCx, e: ExprId) -> bool {
    let mut cur = e;
    for _ in 0..16 {
        match cx.tree.expr_parent(cur) {
            Parent::Expr(p) => match &cx.expr(p).kind {
                ExprKind::Cast(_) => cur = p,
                ExprKind::Unary { op: UnOp::Not, .. } => return true,
                ExprKind::Ternary { cond, .. } => return *cond == cur,
                ExprKind::Logical {
                    op: LogicalOp::And | LogicalOp::Or,
                    left,
                    ..
                } => {
                    if *left == cur {
                        return true;
                    }
                    cur = p;
                }
                _ => return false,
            },
            Parent::Stmt(s) => {
                return match &cx.stmt(s).kind {
                    StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => *cond == cur,
                    _ => false,
                };
            }
            _ => return false,
        }
    }
    false
}

/// The file installs a process-wide `unhandledRejection` listener.
pub fn routes_unhandled_rejections(cx: &FileCx) -> bool {
    cx.calls_named(&["on", "once", "addListener", "prependListener"])
        .into_iter()
        .any(|(_, c)| {
            c.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some("process")
                && c.positional(0).is_some_and(|a| {
                    matches!(cx.model.literal(a), Some(Lit::Str(s)) if s.as_str() == "unhandledRejection")
                })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_tests_are_never_run() {
        assert!(type_test_file("test/types/fastify.tst.ts"));
        assert!(type_test_file("index.test-d.ts"));
        assert!(type_test_file("types\\api.test-d.tsx"));
        assert!(!type_test_file("test/server.test.ts"));
        assert!(!type_test_file("src/tstats.ts"));
    }

    #[test]
    fn a_header_saying_tsc_no_emit_marks_a_type_check_only_file() {
        let checked = "/// <reference path=\"lib.d.ts\" />\nimport Lib from \"lib\";\n/*\nValidates the typings: tsc --noEmit test.ts\n*/\nnew Lib().run().then(() => {});\n";
        assert!(says_type_checked_only(checked));
        // The flag in code, or after the code starts, says nothing.
        let run =
            "import Lib from \"lib\";\nnew Lib().run().then(() => {});\n// see tsc --noEmit\n";
        assert!(!says_type_checked_only(run));
        assert!(!says_type_checked_only("const args = [\"--noEmit\"];\n"));
    }
}
