//! JS012: `Promise.all(items.map(async ...))` over an input of any size,
//! with no concurrency limit.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::{Parent, exprs_under};
use unsnarl_model::*;

pub struct UnboundedPromiseAll;

pub static META: RuleMeta = RuleMeta {
    id: "JS012",
    name: "unbounded-promise-all",
    category: Category::UnboundedFanout,
    severity: Severity::High,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "`Promise.all`/`Promise.allSettled` over `items.map(asyncFn)` (or promises pushed in a loop) starts one operation per item at once, with no concurrency limit.",
    docs: r#"
`Promise.all(xs.map(async (x) => ...))`, `Promise.allSettled(xs.map(fn))`,
or an array of promises filled in a loop over `xs` and then awaited with
`Promise.all`, where `xs` is not an array literal, not a chunk of a larger
input, and the callback goes through no limiter, itself or in a function
of the file it calls (`p-limit`, a semaphore, a
queue). A callback that starts a listener per element (`server.listen`,
`createServer`, grpc's `bindAsync`, directly or in a function of the file)
is not reported: every listener has to be open at once anyway. Nor is a
teardown of what already runs (`close`, `destroy`, `shutdown`, `abort`, a
subscription's `sub.return()`...): as many as are open, not one per item
of new input. Nor is a
function's rest parameter (`exposeHostPorts(...ports)`: the arguments its
caller wrote out), nor a
collection that comes from configuration, followed back through locals,
destructuring, the constructor's fields and argument-less methods of the
class: `options`/`config` values, their keys (`Object.keys(options)`) and
what `await Promise.all` over them gives back, what a synchronous method
of such a value returns (`this.config.source.directories()`), either branch of a
normalising ternary (`Array.isArray(c.dirs) ? c.dirs : [c.dirs]`), and the
command line (`process.argv`). Collections named for the program's own
structure (columns, indexes, plugins, handlers and callbacks, a cluster's brokers, shards,
masters or nodes, the definitions or registry it fills at start-up, its services
and clients, a browser's contexts and frames) are not reported either:
their size is not the data's. Nor is a callback that only tells each
element of an event (`(rm) => rm?.handleLLMEnd(out)`, `(l) =>
l.onClose()`), or only calls the handler registered for it (`(p) => {
const onPrune = pruneMap.get(p); if (onPrune) return onPrune(data) }`):
one notification per handler the program already has. Nor is one that
only chains handlers on the promise it is handed (`(p) =>
Promise.resolve(p).then(onFulfill, onReject)`, an `allSettled` shim):
those promises were started by whoever made them.

## Why

Every element starts its operation immediately: with ten items that is
fine, with the ten thousand rows a query returned in production it is ten
thousand simultaneous sockets, file descriptors and timers, a burst that
exhausts the connection pool or trips the downstream's rate limit, and a
memory spike holding every pending result. The code works in development
and falls over on the first large input.

## Example

```javascript
async function refreshAll(db) {
  const users = await db.query("select id from users");
  await Promise.all(users.map(async (u) => {
    const profile = await fetch(`https://profiles.example/${u.id}`);
    await db.save(u.id, await profile.json());
  }));
}
```

## Fix

Bound the concurrency (`p-limit`, `p-map` with `concurrency`, or chunks).

```javascript
import pLimit from "p-limit";

const limit = pLimit(8);

async function refreshAll(db) {
  const users = await db.query("select id from users");
  await Promise.all(users.map((u) => limit(async () => {
    const profile = await fetch(`https://profiles.example/${u.id}`);
    await db.save(u.id, await profile.json());
  })));
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for UnboundedPromiseAll {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for (e, c) in cx.calls_to(&["Promise.all", "Promise.allSettled"]) {
            let ex = cx.expr(e);
            let f = cx.func_of(e);
            if common::in_test(cx, f) {
                continue;
            }
            let Some(arg) = c.positional(0) else { continue };
            let Some(source) = fanout_source(cx, f, arg) else {
                continue;
            };
            if sequential_alternative(cx, e, &source) {
                continue;
            }
            out.push(cx.finding(
                &META,
                ex.span,
                format!(
                    "`{}` starts one operation per element of `{source}` at the same time, with no concurrency limit: a large input puts that many operations in flight at once (a socket, connection or timer each, when they do I/O), which floods the downstream and starves the rest of the process",
                    c.target.as_deref().unwrap_or("Promise.all")
                ),
                "limit the concurrency: wrap the callback with `p-limit` (`xs.map(x => limit(() => work(x)))`), use `p-map` with `{ concurrency }`, or process the input in fixed-size chunks",
            ));
        }
    }
}

/// The unbounded collection an argument of `Promise.all` fans out over.
fn fanout_source(cx: &FileCx, f: FuncId, arg: ExprId) -> Option<String> {
    let arg = cx.model.strip(arg);
    if let Some(c) = cx.call(arg) {
        return mapped_source(cx, c);
    }
    let name = cx.model.name_of(arg)?;
    // `const ps = xs.map(...)` or `ps.push(work(x))` in a loop over `xs`.
    for s in common::stmts_of(cx, f) {
        if let StmtKind::Assign {
            targets,
            value: Some(v),
            op: AssignOp::Declare { .. },
        } = &cx.stmt(s).kind
            && targets.iter().any(|&t| cx.model.name_of(t) == Some(name))
            && let Some(c) = cx.call(cx.model.strip(*v))
        {
            return mapped_source(cx, c);
        }
    }
    for e in common::calls_of(cx, f) {
        let c = cx.call(e).unwrap();
        if c.name != "push" || c.receiver.and_then(|r| cx.model.name_of(r)) != Some(name) {
            continue;
        }
        let pushed = c.positional(0)?;
        if common::promise_expr(cx, pushed).is_none() || waits_on_values(cx, f, pushed) {
            continue;
        }
        let loop_iter = cx
            .enclosing_stmts(e)
            .into_iter()
            .find_map(|s| match &cx.stmt(s).kind {
                StmtKind::For { iter, .. } => Some(*iter),
                _ => None,
            })?;
        if bounded(cx, loop_iter) || limited(cx, pushed) {
            return None;
        }
        return Some(cx.snippet(cx.expr(loop_iter).span));
    }
    None
}

/// The pushed promise only waits on values the loop already has
/// (`Promise.all([a, b]).then(...)` over locals that hold whatever a
/// validator or hook returned, sometimes a promise): it starts no work, so
/// collecting it limits nothing and adds no concurrency.
fn waits_on_values(cx: &FileCx, f: FuncId, e: ExprId) -> bool {
    let e = cx.model.strip(e);
    let Some(c) = cx.call(e) else { return false };
    if common::is_chain_call(c) {
        return c.receiver.is_some_and(|r| waits_on_values(cx, f, r));
    }
    if !matches!(
        c.target.as_deref(),
        Some("Promise.all" | "Promise.allSettled" | "Promise.race" | "Promise.any")
    ) {
        return false;
    }
    let Some(ExprKind::Collection { elems, .. }) =
        c.positional(0).map(|a| &cx.expr(cx.model.strip(a)).kind)
    else {
        return false;
    };
    let promises = common::promise_bindings(cx, f);
    !elems.is_empty()
        && elems.iter().all(|&x| {
            cx.model
                .name_of(x)
                .is_some_and(|n| !promises.contains_key(n))
        })
}

/// `xs.map(cb)` with a callback that makes promises, over an unbounded `xs`.
fn mapped_source(cx: &FileCx, c: &Call) -> Option<String> {
    if !matches!(c.name.as_str(), "map" | "flatMap") {
        return None;
    }
    let recv = c.receiver?;
    let cb = c.positional(0)?;
    if bounded(cx, recv)
        || limited(cx, cb)
        || teardown(cx, cb)
        || binds_listeners(cx, cb)
        || notifies_each(cx, cb)
        || waits_for_events(cx, cb)
    {
        return None;
    }
    if let Some(f) = common::callback_fn(cx, cb) {
        // `toDrop.map((indexName) => ...)`: the element says what it is.
        if cx.func(f).params.first().is_some_and(|p| {
            camel_words(&p.name)
                .iter()
                .any(|w| STRUCTURE.iter().any(|t| w.starts_with(t)))
        }) {
            return None;
        }
        if !makes_promise(cx, f) || !may_do_io(cx, f, 4, &mut Vec::new()) {
            return None;
        }
    } else if cx.model.resolved(cb).is_none() && cx.call(cb).is_some() {
        // `xs.map(limit(fn))`, `xs.map(wrap(fn))`: a wrapped callback.
        return None;
    }
    Some(cx.snippet(cx.expr(recv).span))
}

/// The fan-out sits in one branch of an `if` whose other branch walks the
/// same collection one element at a time (`for (const x of xs) await
/// work(x)`): the author chose between sequential and concurrent execution
/// for this case on purpose (e.g. per database driver).
fn sequential_alternative(cx: &FileCx, e: ExprId, source: &str) -> bool {
    let Some(s) = common::stmt_of(cx, e) else {
        return false;
    };
    let f = cx.func_of(e);
    let walks_sequentially = |block: &Block| {
        common::stmts_of(cx, f).any(|t| {
            matches!(&cx.stmt(t).kind, StmtKind::For { iter, body, .. }
                if common::block_contains(cx, block, t)
                    && cx.snippet(cx.expr(*iter).span) == source
                    && !crate::util::awaits_in_block(cx.model, body).is_empty())
        })
    };
    // `if (serial) { for (...) await ...; return; }` before the fan-out.
    let early_return = common::stmts_of(cx, f).any(|t| {
        matches!(&cx.stmt(t).kind, StmtKind::If { then, .. }
            if cx.stmt(t).span.end <= cx.expr(e).span.start
                && then.last().is_some_and(|&l| matches!(cx.stmt(l).kind, StmtKind::Return(_)))
                && walks_sequentially(then))
    });
    early_return
        || cx.enclosing_stmts(e).into_iter().any(|a| {
            let StmtKind::If { then, orelse, .. } = &cx.stmt(a).kind else {
                return false;
            };
            let other = if common::block_contains(cx, then, s) {
                orelse
            } else if common::block_contains(cx, orelse, s) {
                then
            } else {
                return false;
            };
            walks_sequentially(other)
        })
}

/// Whether the callback (or what it calls in this file, a few levels deep)
/// can do I/O: it calls a known promise API or an async function of another
/// file, or awaits or returns a call this file does not define. Callbacks
/// that only collect entries in memory (to send them later in one batch)
/// open nothing per element.
fn may_do_io(cx: &FileCx, f: FuncId, depth: usize, seen: &mut Vec<FuncId>) -> bool {
    if depth == 0 {
        return true;
    }
    seen.push(f);
    // `f` and the callbacks it hands to calls (not closures it only stores,
    // like the methods of an object it returns).
    let mut run: Vec<FuncId> = Vec::new();
    for g in cx.with_nested(f) {
        if g == f
            || (cx.func(g).parent.is_some_and(|p| run.contains(&p))
                && common::closure_call_site(cx, g).is_some())
        {
            run.push(g);
        }
    }
    for g in run {
        for s in common::stmts_of(cx, g) {
            if matches!(cx.stmt(s).kind, StmtKind::For { is_async: true, .. }) {
                return true;
            }
        }
        for e in common::calls_of(cx, g) {
            let c = cx.call(e).unwrap();
            let local = c.target.as_deref().and_then(|t| {
                cx.model
                    .function_ids()
                    .find(|&h| h.0 != 0 && cx.func(h).qualname == t)
            });
            // `Promise.all(...)` and friends only combine what their
            // arguments (looked at here too) start.
            if c.target
                .as_deref()
                .is_some_and(|t| t.starts_with("Promise."))
            {
                continue;
            }
            if let Some(h) = local {
                if !seen.contains(&h) && may_do_io(cx, h, depth - 1, seen) {
                    return true;
                }
                continue;
            }
            if c.target.is_some() && cx.effect(c, Effect::AsyncApi).is_some() {
                return true;
            }
            // A wrapper that runs a callback (`trace(span, async () => ...)`,
            // `withRetry(() => ...)`): the callback is looked at here too.
            if c.args
                .iter()
                .any(|a| matches!(cx.expr(cx.model.strip(a.value)).kind, ExprKind::Closure(_)))
            {
                continue;
            }
            // Handlers chained on a promise the callback was handed
            // (`Promise.resolve(item).then(onFulfill, onReject)`, an
            // `allSettled` shim): that promise was started by whoever made
            // it, and chaining starts nothing.
            if common::is_chain_call(c) && c.receiver.is_some_and(|r| handed_promise(cx, g, r)) {
                continue;
            }
            if common::promise_call(cx, c).is_some() {
                return true;
            }
            let consumed = match cx.tree.expr_parent(e) {
                Parent::Expr(p) => matches!(cx.expr(p).kind, ExprKind::Await(_)),
                Parent::Stmt(st) => matches!(cx.stmt(st).kind, StmtKind::Return(Some(_))),
                _ => false,
            };
            if consumed {
                return true;
            }
        }
    }
    false
}

/// `e` is a parameter of `g`, `Promise.resolve` of one, or a local `g`
/// binds to either.
fn handed_promise(cx: &FileCx, g: FuncId, e: ExprId) -> bool {
    let is_param = |x: ExprId| {
        cx.model
            .name_of(cx.model.strip(x))
            .is_some_and(|n| cx.func(g).params.iter().any(|p| p.name == n))
    };
    let wraps_param = |x: ExprId| {
        let x = cx.model.strip(x);
        is_param(x)
            || cx.call(x).is_some_and(|c| {
                c.target.as_deref() == Some("Promise.resolve")
                    && c.positional(0).is_some_and(is_param)
            })
    };
    let e = cx.model.strip(e);
    if wraps_param(e) {
        return true;
    }
    let Some(name) = cx.model.name_of(e) else {
        return false;
    };
    let mut bound = false;
    for s in common::stmts_of(cx, g) {
        if let StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } = &cx.stmt(s).kind
            && targets.iter().any(|&t| cx.model.name_of(t) == Some(name))
        {
            if !wraps_param(*v) {
                return false;
            }
            bound = true;
        }
    }
    bound
}

/// The callback is async or returns what a call gives (not a plain value).
fn makes_promise(cx: &FileCx, f: FuncId) -> bool {
    let func = cx.func(f);
    if func.is_async {
        return common::has_await(cx, f) || returns_calls(cx, f);
    }
    returns_calls(cx, f)
}

fn returns_calls(cx: &FileCx, f: FuncId) -> bool {
    let mut any = false;
    for s in common::stmts_of(cx, f) {
        if let StmtKind::Return(Some(v)) = cx.stmt(s).kind {
            let v = cx.model.strip(v);
            match cx.call(v) {
                Some(c) if !c.is_new || c.target.as_deref() == Some("Promise") => any = true,
                _ => return false,
            }
        }
    }
    any
}

/// Collections whose size is fixed by the code: literals, chunks, worker
/// pools.
fn bounded(cx: &FileCx, e: ExprId) -> bool {
    let e = cx.model.strip(e);
    match &cx.expr(e).kind {
        ExprKind::Collection { .. } => return true,
        ExprKind::Call(c) => {
            if matches!(c.name.as_str(), "slice" | "splice" | "chunk" | "take") {
                return true;
            }
            if matches!(c.target.as_deref(), Some("Array.from" | "Array")) {
                // `Array.from({ length: concurrency }, worker)`.
                return true;
            }
            // `Array(concurrency).fill(worker)`: a pool of that many.
            if let Some(r) = c.receiver
                && matches!(
                    c.name.as_str(),
                    "filter" | "map" | "concat" | "flat" | "fill"
                )
            {
                return bounded(cx, r);
            }
            if matches!(
                c.target.as_deref(),
                Some("Object.keys" | "Object.values" | "Object.entries")
            ) && let Some(a) = c.positional(0)
                && matches!(cx.expr(cx.model.strip(a)).kind, ExprKind::Collection { .. })
            {
                return true;
            }
        }
        _ => {}
    }
    let text = cx.source(cx.expr(e).span).to_ascii_lowercase();
    [
        "chunk", "batch", "slice", "page", "window", "group", "worker", "pool", "shard",
    ]
    .iter()
    .any(|w| text.contains(w))
        || program_structure(&text)
        || literal_binding(cx, e)
        || rest_parameter(cx, e)
        || configured(cx, e, 6)
}

/// The `...ports` rest parameter of the function or of one it is nested in:
/// the arguments the caller wrote out one by one, a handful, not data.
fn rest_parameter(cx: &FileCx, e: ExprId) -> bool {
    cx.model
        .name_of(e)
        .is_some_and(|name| crate::util::variadic_param_in_scope(cx, cx.func_of(e), name))
}

/// Where the collection comes from says it is configuration, whatever it
/// is called here: a local destructured or copied from `options`/`config`
/// (`const { fields } = options`), a field the constructor alone sets from
/// one (`this.folders = config.directory`), what a method of the class
/// without arguments returns from such a field, or the command line
/// (`process.argv`), and the keys of such a value (`Object.keys(options)`)
/// or the results of `Promise.all` over them. Those hold what a developer
/// or operator wrote, not data that grows.
fn configured(cx: &FileCx, e: ExprId, depth: u32) -> bool {
    let e = cx.model.strip(e);
    // The words count on a path (`options.fields`, `process.argv`), not
    // in a call's arguments (`await fetch(config.url)` is data).
    if matches!(
        cx.expr(e).kind,
        ExprKind::Name { .. } | ExprKind::Attr { .. } | ExprKind::Index { .. }
    ) {
        let text = cx.source(cx.expr(e).span).to_ascii_lowercase();
        if program_structure(&text) || text.contains("argv") {
            return true;
        }
    }
    if depth == 0 {
        return false;
    }
    match &cx.expr(e).kind {
        ExprKind::Literal(_) => true,
        ExprKind::Collection { elems, .. } => elems.iter().all(|&x| configured(cx, x, depth - 1)),
        ExprKind::Logical { left, right, .. } => {
            configured(cx, *left, depth - 1) && configured(cx, *right, depth - 1)
        }
        // `Array.isArray(c.dirs) ? c.dirs : [c.dirs]`: either branch.
        ExprKind::Ternary { then, orelse, .. } => {
            configured(cx, *then, depth - 1) && configured(cx, *orelse, depth - 1)
        }
        // `await Promise.all(props.map(..))`: one result per configured
        // element.
        ExprKind::Await(v) => cx.call(cx.model.strip(*v)).is_some_and(|c| {
            matches!(
                c.target.as_deref(),
                Some("Promise.all" | "Promise.allSettled")
            ) && c
                .positional(0)
                .is_some_and(|a| configured(cx, a, depth - 1))
        }),
        ExprKind::Call(c) => {
            // `Object.keys(options)`: the keys, values or entries of it.
            if matches!(
                c.target.as_deref(),
                Some("Object.keys" | "Object.values" | "Object.entries")
            ) {
                return c
                    .positional(0)
                    .is_some_and(|a| configured(cx, a, depth - 1));
            }
            // `[].concat(config.dirs || "./x")`: what it joins.
            if let Some(r) = c.receiver
                && c.name == "concat"
            {
                return configured(cx, r, depth - 1)
                    && c.args.iter().all(|a| configured(cx, a.value, depth - 1));
            }
            if let Some(r) = c.receiver
                && matches!(
                    c.name.as_str(),
                    "map" | "filter" | "flat" | "slice" | "sort" | "reverse"
                )
            {
                return configured(cx, r, depth - 1);
            }
            // `this.config.source.directories(log)`, `config.get("dirs")`:
            // asked of the configuration itself, synchronously (an awaited
            // call, `await opts.db.query(..)`, is an `Await`, not this).
            if let Some(r) = c.receiver
                && configured(cx, r, 0)
            {
                return true;
            }
            // `this.resolvedFolders()`: a method of the file that takes no
            // argument and returns one expression.
            c.args.is_empty()
                && cx.callee_in_file(c).is_some_and(|g| {
                    let returned: Vec<ExprId> = common::stmts_of(cx, g)
                        .filter_map(|s| match cx.stmt(s).kind {
                            StmtKind::Return(Some(v)) => Some(v),
                            _ => None,
                        })
                        .collect();
                    !returned.is_empty() && returned.iter().all(|&v| configured(cx, v, depth - 1))
                })
        }
        ExprKind::Attr { obj, name, .. } => {
            let is_this = |o: ExprId| cx.model.name_of(o) == Some("this");
            if is_this(*obj) {
                let sets: Vec<(StmtId, ExprId)> = crate::util::assignments(cx, |t| {
                    matches!(&cx.expr(t).kind, ExprKind::Attr { obj, name: n, .. }
                        if n == name && is_this(*obj))
                });
                return !sets.is_empty()
                    && sets.iter().all(|&(s, v)| {
                        cx.func(cx.tree.stmt_func(s)).name.as_str() == "constructor"
                            && configured(cx, v, depth - 1)
                    });
            }
            configured(cx, *obj, depth - 1)
        }
        ExprKind::Name { id, .. } => {
            // Bindings in this function or the ones around it; a parameter
            // (destructured or not) holds whatever the caller passed.
            let scopes: Vec<FuncId> = cx.tree.func_ancestors(cx.model, cx.func_of(e)).collect();
            let is_param = scopes.iter().any(|&g| {
                cx.func(g).params.iter().any(|p| {
                    p.name == *id
                        || (p.name.starts_with(['{', '['])
                            && p.name
                                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
                                .any(|w| w == id.as_str()))
                })
            });
            if is_param {
                return false;
            }
            let binds: Vec<(StmtId, ExprId)> = crate::util::assignments(cx, |t| {
                common::bound_names(cx, t).iter().any(|n| n == id)
            })
            .into_iter()
            .filter(|&(s, _)| scopes.contains(&cx.tree.stmt_func(s)))
            .collect();
            !binds.is_empty() && binds.iter().all(|&(_, v)| configured(cx, v, depth - 1))
        }
        _ => false,
    }
}

/// Collections whose size the program or its schema fixes, not the data:
/// columns, indices, constraints and enum types of a table, registered plugins,
/// providers, listeners, replicas, a cluster's brokers and nodes, the
/// services, clients, contexts and frames the program holds.
fn program_structure(text: &str) -> bool {
    STRUCTURE.iter().any(|w| text.contains(w))
}

const STRUCTURE: &[&str] = &[
    "config",
    "cfg",
    "opts",
    "setting",
    "column",
    "indices",
    "index",
    "constraint",
    "enums",
    "foreignkey",
    "schema",
    "model",
    "migration",
    "slave",
    "replica",
    "plugin",
    "module",
    "provider",
    "enhancer",
    "subscriber",
    "listener",
    "handler",
    "callback",
    "hook",
    "middleware",
    "dependenc",
    "metadata",
    "propert",
    "option",
    "args",
    "param",
    "queries",
    "interceptor",
    "guard",
    "pipe",
    "decorator",
    "validator",
    "transport",
    "driver",
    "adapter",
    "connection",
    "server",
    "microservice",
    "script",
    "command",
    "table",
    "view",
    "subdoc",
    // A cluster's layout: one request per broker, shard, master or node.
    "broker",
    "shard",
    "leader",
    // (Plural: "master state" is a replication protocol's data.)
    "masters",
    "node",
    // What the program registered at start-up (`define(name, handler)`).
    "definition",
    "registr",
    // What the program runs or holds open: its services and clients, a
    // browser's contexts and frames (one message each on a session that
    // is already open).
    "service",
    "client",
    "context",
    "frame",
];

/// The lowercase words of a camelCase or snake_case name (`indexName` →
/// `index`, `name`), each starting a word so `review` is not `view`.
fn camel_words(name: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut cur = String::new();
    for ch in name.chars() {
        if (ch == '_' || ch == '$' || ch.is_ascii_uppercase()) && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        if ch != '_' && ch != '$' {
            cur.push(ch.to_ascii_lowercase());
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// A local initialized with an array literal.
fn literal_binding(cx: &FileCx, e: ExprId) -> bool {
    let Some(name) = cx.model.name_of(e) else {
        return false;
    };
    let f = cx.func_of(e);
    common::stmts_of(cx, f).any(|s| {
        matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(v), op: AssignOp::Declare { mutable: false } }
            if targets.iter().any(|&t| cx.model.name_of(t) == Some(name))
                && matches!(cx.expr(cx.model.strip(*v)).kind, ExprKind::Collection { .. }))
    })
}

/// The callback closes, releases or kills something that already exists (a
/// pool member, a child process, a connection, a running subscription's
/// generator: `sub.return()`): as many as are open, not one per input item.
fn teardown(cx: &FileCx, cb: ExprId) -> bool {
    let Some(f) = common::callback_fn(cx, cb) else {
        return false;
    };
    common::calls_of(cx, f).any(|e| {
        // A private variant counts too (`this._destroy(r)`).
        matches!(
            cx.call(e).unwrap().name.trim_start_matches('_'),
            "close"
                | "return"
                | "unsubscribe"
                | "cancel"
                | "quit"
                | "kill"
                | "disconnect"
                | "destroy"
                | "release"
                | "end"
                | "terminate"
                | "stop"
                | "abort"
                | "dispose"
                | "shutdown"
        )
    })
}

/// The callback tells each element (a handler, a run manager) that
/// something happened: `(rm) => rm?.handleLLMEnd(out)`, `(l) =>
/// l.onClose(reason)`. One notification per handler the program already
/// has; what a handler does with it is its own business.
fn notifies_each(cx: &FileCx, cb: ExprId) -> bool {
    let Some(f) = common::callback_fn(cx, cb) else {
        return false;
    };
    if calls_registered_handler(cx, f) {
        return true;
    }
    let Some(element) = cx.func(f).params.first().map(|p| p.name.as_str()) else {
        return false;
    };
    let body = common::stmts_of(cx, f).collect::<Vec<_>>();
    // An expression body: the call is the whole callback.
    let [only] = body.as_slice() else {
        return false;
    };
    let (StmtKind::Expr(v) | StmtKind::Return(Some(v)) | StmtKind::Tail(v)) = cx.stmt(*only).kind
    else {
        return false;
    };
    cx.call(cx.model.strip(v)).is_some_and(|c| {
        let event_method = |prefix: &str| {
            c.name
                .strip_prefix(prefix)
                .and_then(|rest| rest.chars().next())
                .is_some_and(|ch| ch.is_ascii_uppercase())
        };
        (event_method("handle") || event_method("on"))
            && c.receiver.and_then(|r| cx.model.name_of(r)) == Some(element)
    })
}

/// The callback hands the element to the handler the program registered
/// for it, and does nothing else: `(path) => { const onPrune =
/// this.pruneMap.get(path); if (onPrune) return onPrune(data) }`. Its
/// only calls are map lookups and calls of a local bound to one.
fn calls_registered_handler(cx: &FileCx, f: FuncId) -> bool {
    let handlers: Vec<&str> = common::stmts_of(cx, f)
        .filter_map(|s| match &cx.stmt(s).kind {
            StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } if cx.call(cx.model.strip(*v)).is_some_and(|c| c.name == "get") => {
                targets.first().and_then(|&t| cx.model.name_of(t))
            }
            _ => None,
        })
        .collect();
    let mut calls_one = false;
    let only_lookups = common::calls_of(cx, f).all(|e| {
        let c = cx.call(e).unwrap();
        if c.receiver.is_none()
            && cx
                .model
                .name_of(c.func)
                .is_some_and(|n| handlers.contains(&n))
        {
            calls_one = true;
            return true;
        }
        c.name == "get" && c.receiver.is_some()
    });
    only_lookups && calls_one
}

/// The callback (or a function of this file it calls) starts a listener
/// (`server.listen(..)`, `net.createServer`, grpc's `bindAsync`): one per
/// address the program binds, all of which must be open at once anyway, so
/// a cap on concurrency would bound nothing.
fn binds_listeners(cx: &FileCx, cb: ExprId) -> bool {
    fn binds(cx: &FileCx, f: FuncId, depth: u32) -> bool {
        cx.with_nested(f).into_iter().any(|g| {
            common::calls_of(cx, g).any(|e| {
                let c = cx.call(e).unwrap();
                // (Not `bind`: `fn.bind(this)` is everywhere.)
                matches!(c.name.as_str(), "listen" | "createServer" | "bindAsync")
                    || (depth > 0
                        && cx
                            .callee_in_file(c)
                            .is_some_and(|h| binds(cx, h, depth - 1)))
            })
        })
    }
    common::callback_fn(cx, cb).is_some_and(|f| binds(cx, f, 2))
}

/// The callback makes a promise that only waits for events of objects that
/// already exist (`new Promise((resolve) => board.on("ready", resolve))`):
/// its own calls are that `new Promise` alone, and the executor's are
/// listener registrations. Nothing starts per element; `Promise.all` joins
/// work that runs anyway.
fn waits_for_events(cx: &FileCx, cb: ExprId) -> bool {
    let Some(f) = common::callback_fn(cx, cb) else {
        return false;
    };
    let mut executors = Vec::new();
    for e in common::calls_of(cx, f) {
        let c = cx.call(e).unwrap();
        match (c.target.as_deref(), c.is_new) {
            (Some("Promise"), true) => {
                match c.positional(0).and_then(|x| common::callback_fn(cx, x)) {
                    Some(ex) => executors.push(ex),
                    None => return false,
                }
            }
            _ => return false,
        }
    }
    !executors.is_empty()
        && executors.into_iter().all(|ex| {
            common::calls_of(cx, ex).all(|e| {
                matches!(
                    cx.call(e).unwrap().name.as_str(),
                    "on" | "once"
                        | "addListener"
                        | "addEventListener"
                        | "prependListener"
                        | "prependOnceListener"
                )
            })
        })
}

/// The callback (or the pushed expression) goes through a limiter.
fn limited(cx: &FileCx, e: ExprId) -> bool {
    let mut exprs = exprs_under(cx.model, e);
    if let Some(f) = common::callback_fn(cx, e) {
        exprs.extend(common::exprs_of(cx, f));
    }
    // One call down: a method of the file every request goes through
    // (`this.makeRequest(u)` that does `return this.requestQueue.add(() =>
    // ..)`), its queue named as one, or a limiter it calls (`return
    // this.limit(() => ..)` with `this.limit = pLimit(n)`).
    let through_queue = |g: FuncId| {
        common::calls_of(cx, g).any(|x| {
            let c = cx.call(x).unwrap();
            let n = c.name.to_ascii_lowercase();
            n.contains("limit")
                || n.contains("throttle")
                || matches!(c.name.as_str(), "add" | "schedule")
                    && c.receiver
                        .and_then(|r| cx.model.dotted(r))
                        .is_some_and(|d| {
                            let d = d.to_ascii_lowercase();
                            d.contains("queue") || d.contains("limit")
                        })
        })
    };
    // `this.writeFile(..)` in an object of methods (`Store.prototype = {
    // writeFile: async function .. }`) has no target: the one function of
    // the file of that name stands for it.
    let callee = |c: &Call| {
        super::rejection::local_callee(cx, c).or_else(|| {
            let this = c.target.is_none()
                && c.receiver
                    .is_some_and(|r| cx.model.name_of(r) == Some("this"));
            if !this {
                return None;
            }
            let mut named = common::functions_ending_with(cx, &c.name);
            match (named.next(), named.next()) {
                (Some(f), None) => Some(f),
                _ => None,
            }
        })
    };
    if exprs
        .iter()
        .any(|&x| cx.call(x).and_then(callee).is_some_and(through_queue))
    {
        return true;
    }
    exprs.into_iter().any(|x| {
        let Some(c) = cx.call(x) else { return false };
        let n = c.name.to_ascii_lowercase();
        let t = c.target.as_deref().unwrap_or("").to_ascii_lowercase();
        n.contains("limit")
            || n.contains("throttle")
            || n == "acquire"
            || n == "runexclusive"
            || n == "schedule"
            || n == "add"
            || t.contains("p-limit")
            || t.contains("p-queue")
            || t.contains("bottleneck")
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
const fs = require("node:fs/promises");

class Seeds {
  constructor(config, db) {
    this.config = config;
    this.db = db;
  }

  async prepare() {
    const dirs = await this.config.db.listTenantDirs(this.config.logger);
    return Promise.all(dirs.map((d) => fs.mkdir(d, { recursive: true }))); // expect
  }
}
"#,
        r#"
async function fetchAll(urls) {
  return Promise.all(urls.map((u) => fetch(u))); // expect
}

async function saveAll(db, rows) {
  await Promise.allSettled(rows.map(async (r) => { // expect
    await db.insert(r);
  }));
}
"#,
        r#"
async function notify(users) {
  const pending = [];
  for (const u of users) {
    pending.push(sendMail(u.email));
  }
  await Promise.all(pending); // expect
}

async function sendMail(to) {
  await fetch("https://mail.example/send", { method: "POST", body: to });
}
"#,
        r#"
async function mirrorAll(db, config) {
  const { rows } = await db.query(config.selectAll);
  await Promise.all(rows.map((r) => fetch(config.target + "/" + r.id))); // expect
}

module.exports = { mirrorAll };
"#,
        r#"
const offsetsOf = async (admin, { group, topics }) => {
  if (!topics) {
    topics = [];
  }
  return Promise.all(topics.map((t) => admin.fetchOffsets(group, t))); // expect
};

module.exports = { offsetsOf };
"#,
        r#"
// One request per item: the fan-out grows with the input.
async function alterConfigs(cluster, items) {
  const responses = await Promise.all( // expect
    items.map(async (item) => {
      const broker = await cluster.leaderFor(item.topic);
      return broker.alterConfigs({ resources: [item] });
    })
  );
  return responses.flat();
}
"#,
        r#"
class Pool {
  warm(rows) {
    return Promise.all(rows.map((row) => reflect(this._connect(row)))); // expect
  }
}
"#,
        r#"
function multiSession(storage) {
  return async (ctx, next) => {
    const props = Object.keys(ctx.update.payload);
    const sessions = await Promise.all(props.map(async (prop) => { // expect
      const value = await storage.read(ctx.chat.id, prop);
      return { prop, value, save: () => storage.write(ctx.chat.id, prop, value) };
    }));
    await next();
    await Promise.all(sessions.map((s) => s.save())); // expect
  };
}
module.exports = { multiSession };
"#,
        r#"
export class Crawler {
  async fetchAll(urls) {
    await Promise.all(urls.map((u) => fetch(u))); // expect
  }
}
"#,
        r#"
export class Orders {
  // The object's own handler, once per incoming order: the work itself.
  async handleAll(orders) {
    await Promise.all(orders.map((o) => this.handleOrder(o))); // expect
  }

  async handleOrder(o) {
    await fetch(`https://billing.example/charge/${o.id}`, { method: "POST" });
  }
}
"#,
        r#"
class Client {
  async warmup() {
    const hosts = this.hosts.values();
    await Promise.all(hosts.map((h) => h.connect())); // expect
  }
}
"#,
        r#"
export class WebClient {
  constructor() {
    this.seen = new Set();
  }

  async makeRequest(url, body) {
    this.seen.add(url);
    return fetch(url, { method: "POST", body });
  }

  async postAll(channels, text) {
    return Promise.all(channels.map((c) => this.makeRequest(`/chat.postMessage?channel=${c}`, text))); // expect
  }
}
"#,
        r#"
export class HotClient {
  urlMap = new Map();

  async refetch(paths) {
    await Promise.all(paths.map((path) => { // expect
      const url = this.urlMap.get(path);
      if (url) return fetch(url);
    }));
  }
}
"#,
        r#"
export function loadAll(ids, store) {
  return Promise.all(ids.map(id => { // expect
    const onFulfill = (value) => ({ status: "fulfilled", value });
    const onReject = (reason) => ({ status: "rejected", reason });
    const itemPromise = store.load(id);
    return itemPromise.then(onFulfill, onReject);
  }));
}
"#,
        r#"
// Thunks built from the input: calling each one starts a request.
export async function fetchAll(urls) {
  const jobs = urls.map((u) => () => fetch(u));
  return Promise.all(jobs.map((run) => run())); // expect
}
"#,
        r#"
class TestContainers {
  static async exposeHostPorts(ports) {
    const forwarder = await PortForwarder.getInstance();
    await Promise.all(ports.map((port) => forwarder.exposeHostPort(port))); // expect
  }
}
module.exports = { TestContainers };
"#,
        r#"
async function connectAll(devices) {
  const ready = devices.map((device) => {
    return new Promise((resolve) => {
      device.connect(); // opens a socket per device
      device.once("ready", () => resolve(device));
    });
  });
  await Promise.all(ready); // expect
}
"#,
        r#"
const fs = require("fs/promises");

function Store() {}

Store.prototype = {
  writeFile: async function (file, content) {
    return fs.writeFile(file, content);
  },
  flush: async function () {
    const jobs = Object.keys(this.q).map(async (file) => {
      await this.writeFile(file, this.q[file]);
    });
    await Promise.all(jobs); // expect
  },
};
"#,
    ],
    pass: &[
        r#"
const fs = require("fs/promises");
const pLimit = require("p-limit");

function Store(options) {
  this.limit = pLimit(options.maxFileDescriptors);
}

Store.prototype = {
  writeFile: async function (file, content) {
    return this.limit(() => fs.writeFile(file, content));
  },
  flush: async function () {
    const jobs = Object.keys(this.q).map(async (file) => {
      await this.writeFile(file, this.q[file]);
    });
    await Promise.all(jobs);
  },
};
"#,
        r#"
async function whenReady(devices) {
  const ready = devices.map((device) => {
    return new Promise((resolve, reject) => {
      device.on("error", reject);
      device.once("ready", () => resolve(device));
    });
  });
  await Promise.all(ready);
}
"#,
        r#"
class TestContainers {
  static async exposeHostPorts(...ports) {
    const forwarder = await PortForwarder.getInstance();
    await Promise.all(ports.map((port) => forwarder.exposeHostPort(port)));
  }
}
module.exports = { TestContainers };
"#,
        r#"
class Pool {
  destroy() {
    return Promise.all(this.free.map((free) => reflect(this._destroy(free.resource))));
  }
}
"#,
        r#"
async function closeAll(ctx) {
  const subs = { ...ctx.subscriptions };
  ctx.subscriptions = {};
  await Promise.all(Object.values(subs).map((sub) => sub.return(undefined)));
}
"#,
        r#"
class ModelManager {
  constructor() {
    this.models = [];
  }
  addModel(model) {
    this.models.push(model);
    return model;
  }
  sortedByDependency() {
    return this.models.length < 2 ? this.models : null;
  }
}

class Orm {
  constructor(db) {
    this.db = db;
    this.modelManager = new ModelManager();
  }
  async truncateAll(options) {
    const sorted = this.modelManager.sortedByDependency();
    const models = sorted || this.modelManager.models;
    await Promise.all(models.map((model) => model.truncate(options)));
  }
}
"#,
        r#"
const fs = require("node:fs/promises");

class Seeds {
  constructor(config) {
    this.config = config;
  }

  prepare() {
    const dirs = this.config.source.directories(this.config.logger);
    return Promise.all(dirs.map((d) => fs.mkdir(d, { recursive: true })));
  }
}
"#,
        r#"
const fs = require("fs/promises");
const path = require("path");

class AssetIndex {
  constructor(cfg) {
    this.roots = [].concat(cfg.roots || "./assets");
  }

  absoluteRoots() {
    return this.roots.map((r) => path.resolve(r));
  }

  async scan() {
    return Promise.all(this.absoluteRoots().map((r) => fs.readdir(r)));
  }
}

async function provision(db, opts) {
  const { tables: { list } } = opts;
  await Promise.all(list.map((t) => db.createTable(t)));
}

async function main() {
  const files = process.argv.slice(2);
  await Promise.all(files.map((f) => fs.readFile(f, "utf8")));
}

module.exports = { AssetIndex, provision, main };
"#,
        r#"
const net = require("node:net");
const dns = require("node:dns");

function listenOn(address, port, onConn) {
  return new Promise((resolve) => {
    const srv = net.createServer(onConn);
    srv.once("error", (err) => resolve({ error: err.message }));
    srv.listen({ host: address, port }, () => resolve({ server: srv }));
  });
}

async function bindAll(hostname, port, onConn) {
  const addrs = await dns.promises.lookup(hostname, { all: true });
  const results = await Promise.all(addrs.map((a) => listenOn(a.address, port, onConn)));
  return results.filter((r) => r.server).map((r) => r.server);
}
"#,
        r#"
import pLimit from "p-limit";

const limit = pLimit(10);

async function fetchAll(urls) {
  return Promise.all(urls.map((u) => limit(() => fetch(u))));
}

async function profile(id) {
  const [user, orders] = await Promise.all([getUser(id), getOrders(id)]);
  return { user, orders };
}

async function inChunks(rows, db) {
  for (let i = 0; i < rows.length; i += 50) {
    const chunk = rows.slice(i, i + 50);
    await Promise.all(chunk.map((r) => db.insert(r)));
  }
}

async function workers(queue, concurrency) {
  await Promise.all(Array.from({ length: concurrency }, () => drain(queue)));
}

function names(users) {
  return Promise.all(users.map((u) => u.name));
}

async function closeAll(pool) {
  await Promise.all(pool.clients.map((c) => c.release()));
}

async function dropColumns(runner, table, columns) {
  await Promise.all(columns.map((c) => runner.dropColumn(table, c)));
}

async function checkEntries(entries, keyCheck, valueCheck) {
  const pending = [];
  for (const [key, value] of entries) {
    const k = keyCheck(key);
    const v = valueCheck(value);
    if (k instanceof Promise || v instanceof Promise) {
      pending.push(Promise.all([k, v]).then(([a, b]) => record(key, a, b)));
    }
  }
  await Promise.all(pending);
}

async function hideIndexes(db, collection, toHide) {
  await Promise.all(toHide.map((indexName) => db.command({ collMod: collection, index: indexName })));
}
"#,
        r#"
class Archiver {
  async archiveAll(items) {
    if (this.driver.serialOnly) {
      for (const item of items) {
        await this.archive(item);
      }
    } else {
      await Promise.all(items.map((item) => this.archive(item)));
    }
  }

  async archive(item) {
    await this.store.put(item.id, item);
  }

  async restoreAll(items) {
    if (this.driver.serialOnly) {
      const restored = [];
      for (const item of items) {
        restored.push(await this.restore(item));
      }
      return restored;
    }
    return Promise.all(items.map((item) => this.restore(item)));
  }

  async restore(item) {
    return this.store.get(item.id);
  }
}
"#,
        r#"
// file: src/trace.js
export async function traced(name, fn) {
  const started = Date.now();
  try {
    return await fn();
  } finally {
    console.debug(name, Date.now() - started);
  }
}
// file: src/planner.js
import { traced } from "./trace";

class Planner {
  // Walks a tree of steps and only records them; the caller sends the
  // whole plan in one request afterwards.
  planAll(plan, steps) {
    return Promise.all(steps.map((step) => this.planStep(plan, step)));
  }

  planChildren(plan, steps) {
    return Promise.all(steps.map(async (step) => {
      await this.record(plan, step);
      return Promise.all(step.children.map((c) => this.planStep(plan, c)));
    }));
  }

  planStep(plan, step) {
    return traced("plan", async () => {
      await this.record(plan, step);
      if (step.children) {
        await this.planAll(plan, step.children);
      }
    });
  }

  async record(plan, step) {
    plan.push({ name: step.name, args: step.args, target: this.targetOf(step) });
  }

  targetOf(step) {
    return {
      name: step.target,
      ready: async () => {
        await this.client.ping(step.target);
      },
    };
  }
}
"#,
        r#"
const fs = require("fs/promises");

class Generator {
  constructor(config) {
    this.config = config;
  }

  ensureFolders() {
    const dirs = this.dirs();
    return Promise.all(dirs.map((d) => fs.mkdir(d, { recursive: true })));
  }

  dirs() {
    return Array.isArray(this.config.directory)
      ? this.config.directory
      : [this.config.directory];
  }
}
"#,
        r#"
// One request per leader broker, whatever the number of topics.
async function fetchOffsets(cluster, topics) {
  const perNode = {};
  for (const t of topics) {
    const nodeId = cluster.leaderId(t);
    perNode[nodeId] = perNode[nodeId] || [];
    perNode[nodeId].push(t);
  }
  const responses = await Promise.all(
    Object.keys(perNode).map(async (nodeId) => {
      const broker = await cluster.findBroker(nodeId);
      return broker.listOffsets({ topics: perNode[nodeId] });
    })
  );
  return responses.flat();
}
"#,
        r#"
class Scheduler {
  constructor(store) {
    this.store = store;
    this.definitions = {};
  }

  define(name, handler) {
    this.definitions[name] = { name, handler };
  }

  async scan() {
    await Promise.all(Object.keys(this.definitions).map((name) => this.store.lockNext(name)));
  }
}
"#,
        r#"
class SchemaTool {
  constructor(orm) {
    this.orm = orm;
  }

  async dropAllEnums(opts) {
    const enums = await this.orm.query("select typname from pg_type where typtype = 'e'", opts);
    return Promise.all(enums.map((e) => this.orm.query(`drop type ${e.typname}`, opts)));
  }
}
"#,
        r#"
function multiSession(options) {
  const props = Object.keys(options).filter((k) => k !== "type");
  return async (ctx, next) => {
    const sessions = await Promise.all(props.map(async (prop) => {
      const value = await options[prop].storage.read(ctx.chat.id);
      return { prop, value, save: () => options[prop].storage.write(ctx.chat.id, value) };
    }));
    await next();
    await Promise.all(sessions.map((s) => s.save()));
  };
}
module.exports = { multiSession };
"#,
        r#"
// One message per frame of the page, on the session already open.
export class FrameManager {
  frames() {
    return Array.from(this.tree.frames());
  }

  async addBinding(binding) {
    await Promise.all(this.frames().map((frame) => frame.addBinding(binding)));
  }
}
"#,
        r#"
// Every service the app started gets its stop signal.
export async function shutdown(app) {
  await Promise.all(app.services.map(async (svc) => {
    await svc.drain();
  }));
}
"#,
        r#"
// Each run manager hears how its run ended: one notification per run
// that was already made.
export async function endRuns(runManagers, output) {
  await Promise.all(runManagers.map((rm) => rm?.handleLLMEnd(output)));
}
"#,
        r#"
export async function mapConcurrent(source, mapFn, concurrency) {
  const it = source[Symbol.asyncIterator]();
  const mapper = async () => {
    for (let v = await it.next(); !v.done; v = await it.next()) await mapFn(v.value);
  };
  // The `Promise.all` is the limit: `concurrency` mappers share one iterator.
  const mappers = Array(concurrency).fill(mapper).map((f) => f());
  await Promise.all(mappers);
}
"#,
        r#"
class Client {
  async close() {
    const hosts = this.hosts.values();
    await Promise.all(hosts.map((h) => h.shutdown(false)));
  }
}
"#,
        r#"
import PQueue from "p-queue";

export class WebClient {
  constructor(maxRequestConcurrency = 100) {
    this.requestQueue = new PQueue({ concurrency: maxRequestConcurrency });
  }

  async makeRequest(url, body) {
    return this.requestQueue.add(() => fetch(url, { method: "POST", body }));
  }

  async postAll(channels, text) {
    return Promise.all(channels.map((c) => this.makeRequest(`/chat.postMessage?channel=${c}`, text)));
  }
}
"#,
        r#"
export class HotClient {
  pruneMap = new Map();
  dataMap = new Map();

  async prunePaths(paths) {
    await Promise.all(paths.map((path) => {
      const onPrune = this.pruneMap.get(path);
      if (onPrune) return onPrune(this.dataMap.get(path));
    }));
  }
}
"#,
        r#"
export function allSettled(values) {
  return Promise.all(values.map(item => {
    const onFulfill = (value) => ({ status: "fulfilled", value });
    const onReject = (reason) => ({ status: "rejected", reason });
    const itemPromise = Promise.resolve(item);
    try {
      return itemPromise.then(onFulfill, onReject);
    } catch (error) {
      return Promise.reject(error);
    }
  }));
}
"#,
        r#"
// One client per master of the cluster's layout.
async function masterClients(cluster) {
  const clients = cluster.masters.map(async (m) => cluster.nodeClient(m));
  return Promise.all(clients);
}
"#,
        r#"
export class Client {
  onResetStore(cb) {
    this.resetStoreCallbacks.push(cb);
  }

  // One call per callback the program registered, not per item of data.
  resetStore() {
    return this.cache
      .clear()
      .then(() => Promise.all(this.resetStoreCallbacks.map((fn) => fn())));
  }
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(UnboundedPromiseAll);
}
