//! Questions the Rust rules keep asking of a file: test code, spawned
//! closures, sleeps and constant durations, channel pairs, bindings and uses
//! of local names.

use crate::context::FileCx;
use unsnarl_model::walk::{Child, Parent, exprs_in_block, for_each_stmt_child};
use unsnarl_model::*;

/// Test code: a test file, a `#[test]`/`#[tokio::test]` function, code
/// under `#[cfg(test)]`, or a closure inside one.
pub fn in_test(cx: &FileCx, f: FuncId) -> bool {
    cx.model.is_test
        || cx
            .tree
            .func_ancestors(cx.model, f)
            .any(|g| cx.func(g).is_test)
}

/// Test or benchmark code: where unbounded channels, detached tasks and
/// blocking calls are test scaffolding, not bugs.
pub fn test_like(cx: &FileCx, f: FuncId) -> bool {
    *cx.caches.rust_test_path.get_or_init(|| test_path(cx.path)) || in_test(cx, f)
}

/// A path with a test or benchmark directory or file name in it.
fn test_path(path: &str) -> bool {
    path.split(['/', '\\']).any(|c| {
        let c = c.strip_suffix(".rs").unwrap_or(c);
        matches!(
            c,
            "benches"
                | "tests"
                | "test"
                | "testing"
                | "test_helpers"
                | "test_util"
                | "test_utils"
                | "testutil"
                | "test_support"
                | "test_server"
                | "testserver"
        )
    })
}

/// Files that are not service code: examples, benches (also a benchmark
/// binary in `src/bin/`), tests, build scripts and fuzz targets. An `examples/` or `benches/` folder holding a
/// project of its own (`examples/shop/src/main.rs`: a crate with a `src/`,
/// not one of Cargo's example programs) is service code.
pub fn non_service_path(cx: &FileCx) -> bool {
    let p = cx.path.replace('\\', "/");
    let p = format!("/{p}");
    let programs = ["/examples/", "/benches/"].iter().any(|d| {
        p.rfind(d)
            .is_some_and(|i| !p[i + d.len()..].split('/').any(|seg| seg == "src"))
    });
    // A benchmark binary of the crate (`src/bin/perf-producer.rs`).
    let bench_bin = p.contains("/src/bin/")
        && p.rsplit('/').next().is_some_and(|f| {
            f.trim_end_matches(".rs")
                .split(['-', '_'])
                .any(|w| matches!(w, "perf" | "bench" | "benchmark"))
        });
    programs
        || bench_bin
        || ["/tests/", "/fuzz/", "/build.rs"]
            .iter()
            .any(|d| p.contains(d))
}

/// `main`, or a function that never returns (`-> !`): it lives as long as
/// the process. So does the async block `main` hands to `block_on` as its
/// last act (`fn main() { task::block_on(async { .. }) }`): it is `main`'s
/// body, as under `#[tokio::main]`.
pub fn is_process_root(cx: &FileCx, f: FuncId) -> bool {
    let func = cx.func(f);
    (func.name.as_str() == "main" && func.class.is_none())
        || func
            .returns
            .as_ref()
            .is_some_and(|t| t.text.as_str() == "!")
        || (func.kind == FnKind::AsyncBlock && is_body_of_main(cx, f))
}

/// `f` is the async block of `main`'s last statement, `block_on(async {
/// .. })` (tokio's `Runtime::block_on`, async-std's `task::block_on`,
/// `futures::executor::block_on`).
fn is_body_of_main(cx: &FileCx, f: FuncId) -> bool {
    let Some(main) = cx.func(f).parent else {
        return false;
    };
    let m = cx.func(main);
    if m.name.as_str() != "main" || m.class.is_some() {
        return false;
    }
    let Some(&last) = m.body.last() else {
        return false;
    };
    let tail = match cx.stmt(last).kind {
        StmtKind::Return(Some(e)) | StmtKind::Expr(e) | StmtKind::Tail(e) => e,
        _ => return false,
    };
    cx.call(cx.model.strip(tail)).is_some_and(|c| {
        c.name == "block_on"
            && c.args.iter().any(
                |a| matches!(cx.expr(cx.model.strip(a.value)).kind, ExprKind::Closure(g) if g == f),
            )
    })
}

/// The named function a closure or async block is nested in (itself for
/// named functions).
pub fn outermost(cx: &FileCx, f: FuncId) -> FuncId {
    let mut cur = f;
    while matches!(cx.func(cur).kind, FnKind::Closure | FnKind::AsyncBlock) {
        match cx.func(cur).parent {
            Some(p) => cur = p,
            None => break,
        }
    }
    cur
}

/// The function a closure expression defines, looking through `move`-less
/// wrappers (`Box::pin(async move {..})`, `f.instrument(span)`, a cast).
pub fn closure_fn(cx: &FileCx, e: ExprId) -> Option<FuncId> {
    let mut cur = cx.model.strip(e);
    for _ in 0..4 {
        match &cx.expr(cur).kind {
            ExprKind::Closure(f) => return Some(*f),
            ExprKind::Call(c) => {
                // `Box::pin(fut)`, `fut.instrument(span)`, `fut.boxed()`.
                if let Some(r) = c.receiver
                    && matches!(
                        c.name.as_str(),
                        "instrument" | "in_current_span" | "boxed" | "boxed_local" | "fuse"
                    )
                {
                    cur = cx.model.strip(r);
                } else if c.receiver.is_none()
                    && matches!(c.name.as_str(), "pin" | "new")
                    && c.args.len() == 1
                {
                    cur = cx.model.strip(c.args[0].value);
                } else {
                    return None;
                }
            }
            // `spawn({ let w = Arc::downgrade(&x); async move { .. } })`:
            // the block's value.
            ExprKind::Block(b) => match b.last().map(|&s| &cx.stmt(s).kind) {
                Some(StmtKind::Tail(v)) => cur = cx.model.strip(*v),
                _ => return None,
            },
            _ => return None,
        }
    }
    None
}

/// The body a spawn call runs: its closure or async block argument.
pub fn spawned_fn(cx: &FileCx, call: ExprId) -> Option<FuncId> {
    let c = cx.call(call)?;
    c.args.iter().rev().find_map(|a| {
        // Also `let worker = async move { .. }; spawn(worker)`.
        closure_fn(cx, a.value)
            .or_else(|| declared_value(cx, a.value).and_then(|v| closure_fn(cx, v)))
    })
}

/// The value a local named by `e` was declared with (`let fut = ..;` for
/// the `fut` in `spawn(fut)`), if `e` is a name with such a declaration.
pub fn declared_value(cx: &FileCx, e: ExprId) -> Option<ExprId> {
    let e = cx.model.strip(e);
    let name = cx.model.name_of(e)?;
    match &cx.stmt(declaration_of(cx, name, e)?).kind {
        StmtKind::Assign { value: Some(v), .. } => Some(*v),
        _ => None,
    }
}

/// Every statement of a block, recursively (not into nested functions),
/// in source order.
pub use unsnarl_model::walk::stmts_in_block as stmts_in;

/// The expressions directly evaluated by a statement itself (not those of
/// nested blocks).
pub fn own_exprs(m: &FileModel, s: StmtId) -> Vec<ExprId> {
    let mut out = Vec::new();
    for_each_stmt_child(m, s, &mut |ch| {
        if let Child::Expr(e) = ch {
            out.extend(unsnarl_model::walk::exprs_under(m, e));
        }
    });
    out
}

/// A sleep: `tokio::time::sleep`, `std::thread::sleep`,
/// `async_std::task::sleep`, `smol::Timer::after`, `tokio::time::sleep_until`.
pub fn is_sleep(c: &Call) -> bool {
    match c.target.as_deref() {
        Some(t) => {
            matches!(
                t,
                "tokio::time::sleep"
                    | "std::thread::sleep"
                    | "async_std::task::sleep"
                    | "smol::Timer::after"
                    | "futures_timer::Delay::new"
                    | "tokio::time::delay_for"
                    | "actix_rt::time::sleep"
            ) || (c.name == "sleep" && c.receiver.is_none())
        }
        None => c.name == "sleep" && c.receiver.is_none(),
    }
}

/// True when the value of `e` cannot change from one loop iteration to the
/// next: literals, `Duration::from_*` of constants, constants (UPPERCASE or
/// resolved module items), and locals not assigned inside `body` (and not
/// bound by a `for` over `body`).
pub fn is_constant_in(cx: &FileCx, e: ExprId, body: &Block, loop_vars: &[&str]) -> bool {
    let assigned = assigned_names(cx.model, body);
    let mut ok = true;
    for x in unsnarl_model::walk::exprs_under(cx.model, e) {
        match &cx.expr(x).kind {
            ExprKind::Call(c) => {
                let t = c.target.as_deref().unwrap_or("");
                let dur = t.starts_with("std::time::Duration::")
                    || t.starts_with("core::time::Duration::")
                    || t.starts_with("tokio::time::Duration::")
                    || (c.receiver.is_none() && c.name.starts_with("from_"));
                let conv = matches!(c.name.as_str(), "into" | "clone" | "unwrap" | "to_owned");
                if !dur && !conv {
                    ok = false;
                }
            }
            ExprKind::Name { id, resolved } => {
                if resolved.is_some() || id.chars().all(|ch| ch.is_uppercase() || ch == '_') {
                    continue;
                }
                if assigned.contains(id.as_str()) || loop_vars.contains(&id.as_str()) {
                    ok = false;
                }
            }
            ExprKind::Attr { .. } => {
                // A field read (`self.retry_delay`): constant unless written
                // in the loop.
                if let Some(d) = cx.model.dotted(x)
                    && assigned.contains(d.as_str())
                {
                    ok = false;
                }
            }
            _ => {}
        }
        if !ok {
            return false;
        }
    }
    ok
}

/// Names (and dotted targets) assigned anywhere in a block.
pub fn assigned_names(m: &FileModel, body: &Block) -> std::collections::HashSet<String> {
    let mut out = std::collections::HashSet::new();
    for s in stmts_in(m, body) {
        if let StmtKind::Assign { targets, .. } = &m.stmt(s).kind {
            for &t in targets {
                for x in unsnarl_model::walk::exprs_under(m, t) {
                    if let Some(d) = m.dotted(x) {
                        out.insert(d);
                    }
                }
            }
        }
    }
    for e in exprs_in_block(m, body) {
        if let ExprKind::AssignExpr { target, .. } = &m.expr(e).kind
            && let Some(d) = m.dotted(*target)
        {
            out.insert(d);
        }
        // `delay = delay.saturating_mul(2)` via a method on `&mut`:
        // `backoff.next()`, `delay.mul_assign(2)`.
        if let Some(c) = m.call(e)
            && let Some(r) = c.receiver
            && let Some(d) = m.dotted(r)
            && (c.name.starts_with("next") || c.name.ends_with("_assign") || c.name == "step")
        {
            out.insert(d);
        }
    }
    out
}

/// The name a binding target binds: `x`, `mut x`, and the one name inside a
/// single-binding pattern (`Ok(g)`, `Some(mut g)`, `(g, _)` is not one).
pub fn binding_name(m: &FileModel, t: ExprId) -> Option<&str> {
    match &m.expr(t).kind {
        ExprKind::Name { id, resolved: None } if id != "_" => Some(id),
        ExprKind::Other(kids) => {
            let names: Vec<&str> = kids
                .iter()
                .filter_map(|&k| match &m.expr(k).kind {
                    ExprKind::Name { id, resolved: None } if id != "_" => Some(id.as_str()),
                    ExprKind::Other(_) => binding_name(m, k),
                    _ => None,
                })
                .collect();
            match names.as_slice() {
                [one] => Some(one),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Uses of a local name in a function (and closures inside it) after
/// `after`, as expression ids.
pub fn uses_after(cx: &FileCx, f: FuncId, name: &str, after: u32) -> Vec<ExprId> {
    let span = cx.func(f).span;
    cx.model
        .exprs
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            e.span.start >= after
                && e.span.end <= span.end
                && matches!(&e.kind, ExprKind::Name { id, resolved: None } if id == name)
        })
        .map(|(i, _)| ExprId(i as u32))
        .collect()
}

/// The 1-based line of a span.
pub fn line_of(cx: &FileCx, span: Span) -> usize {
    let end = (span.start as usize).min(cx.text.len());
    cx.text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Looks through `.await`, `?`, `.unwrap()`, `.expect(..)` and similar
/// wrappers to the call whose value they pass on.
pub fn unwrap_value(cx: &FileCx, mut e: ExprId) -> ExprId {
    for _ in 0..8 {
        e = cx.model.strip(e);
        match &cx.expr(e).kind {
            ExprKind::Await(inner) | ExprKind::Try(inner) => e = *inner,
            ExprKind::Call(c)
                if c.receiver.is_some()
                    && matches!(
                        c.name.as_str(),
                        "unwrap"
                            | "expect"
                            | "unwrap_or_else"
                            | "unwrap_or_default"
                            | "into_inner"
                            | "map_err"
                            | "context"
                            | "with_context"
                    ) =>
            {
                e = c.receiver.expect("checked");
            }
            _ => return e,
        }
    }
    e
}

pub use crate::util::{call_around, method_on};

/// The channel a tuple `let (tx, rx) = <channel ctor>(..)` builds: the
/// sender and receiver names, the constructor call, and whether it has a
/// capacity (`channel(n)`, `sync_channel(n)`, `bounded(n)`).
#[derive(Clone, Debug)]
pub struct LocalChannel {
    pub tx: String,
    pub rx: String,
    pub ctor: ExprId,
    pub stmt: StmtId,
    pub bounded: bool,
    /// The sender has an async `send().await` (tokio, async_channel, flume).
    pub async_send: bool,
}

/// A `let (first, second) = value;` declaration of two plain names.
pub struct LetPair<'a> {
    pub stmt: StmtId,
    pub first: &'a str,
    pub second: &'a str,
    pub value: ExprId,
}

/// The `let (a, b) = ..;` declarations of a function's body.
pub fn let_pairs<'a>(cx: &FileCx<'a>, f: FuncId) -> Vec<LetPair<'a>> {
    let mut out = Vec::new();
    for s in cx.body_stmts(f).iter().copied() {
        let StmtKind::Assign {
            targets,
            value: Some(v),
            op: AssignOp::Declare { .. },
        } = &cx.stmt(s).kind
        else {
            continue;
        };
        let [t] = targets.as_slice() else { continue };
        let ExprKind::Collection {
            kind: CollKind::Tuple,
            elems,
            ..
        } = &cx.expr(*t).kind
        else {
            continue;
        };
        let [a, b] = elems.as_slice() else { continue };
        if let (Some(first), Some(second)) =
            (binding_name(cx.model, *a), binding_name(cx.model, *b))
        {
            out.push(LetPair {
                stmt: s,
                first,
                second,
                value: *v,
            });
        }
    }
    out
}

/// Channels created in a function with `let (tx, rx) = ...`.
pub fn local_channels(cx: &FileCx, f: FuncId) -> Vec<LocalChannel> {
    let mut out = Vec::new();
    for LetPair {
        stmt: s,
        first: tx,
        second: rx,
        value: v,
    } in let_pairs(cx, f)
    {
        let call = unwrap_value(cx, v);
        let Some(c) = cx.call(call) else { continue };
        let Some(target) = c.target.as_deref() else {
            continue;
        };
        let (bounded, async_send) = match target {
            // A oneshot carries one value: "bounded" (and never drained in
            // a loop).
            "tokio::sync::oneshot::channel" | "futures::channel::oneshot::channel" => (true, false),
            "tokio::sync::mpsc::channel" | "futures::channel::mpsc::channel" => (true, true),
            "async_channel::bounded" | "flume::bounded" => (true, true),
            "std::sync::mpsc::sync_channel"
            | "crossbeam_channel::bounded"
            | "crossbeam::channel::bounded" => (true, false),
            "tokio::sync::mpsc::unbounded_channel"
            | "futures::channel::mpsc::unbounded"
            | "async_channel::unbounded"
            | "flume::unbounded"
            | "std::sync::mpsc::channel"
            | "crossbeam_channel::unbounded"
            | "crossbeam::channel::unbounded" => (false, false),
            _ => continue,
        };
        out.push(LocalChannel {
            tx: tx.to_string(),
            rx: rx.to_string(),
            ctor: call,
            stmt: s,
            bounded,
            async_send,
        });
    }
    out
}

/// True when a loop body has a way out: a `break` or `return` (not inside
/// a nested loop for `break`), a `?`, or a call that never returns.
pub fn loop_has_exit(cx: &FileCx, body: &Block) -> bool {
    fn walk(cx: &FileCx, b: &Block, depth: u32) -> bool {
        for &s in b {
            match &cx.stmt(s).kind {
                StmtKind::Break if depth == 0 => return true,
                StmtKind::Return(_) => return true,
                StmtKind::Loop { body }
                | StmtKind::While { body, .. }
                | StmtKind::For { body, .. }
                    if walk(cx, body, depth + 1) =>
                {
                    return true;
                }
                _ => {}
            }
            // Children blocks other than nested loops.
            let mut found = false;
            for_each_stmt_child(cx.model, s, &mut |ch| match ch {
                Child::Block(inner) => {
                    if !matches!(
                        cx.stmt(s).kind,
                        StmtKind::Loop { .. } | StmtKind::While { .. } | StmtKind::For { .. }
                    ) && walk(cx, inner, depth)
                    {
                        found = true;
                    }
                }
                Child::Expr(e) => {
                    for x in unsnarl_model::walk::exprs_under(cx.model, e) {
                        match &cx.expr(x).kind {
                            ExprKind::Try(_) => found = true,
                            ExprKind::Block(inner) if walk(cx, inner, depth) => found = true,
                            ExprKind::Call(c)
                                if c.is_macro
                                    && matches!(
                                        c.name.as_str(),
                                        "panic" | "unreachable" | "todo" | "unimplemented"
                                    ) =>
                            {
                                found = true
                            }
                            ExprKind::Call(c)
                                if c.target.as_deref() == Some("std::process::exit") =>
                            {
                                found = true
                            }
                            _ => {}
                        }
                    }
                }
            });
            if found {
                return true;
            }
        }
        false
    }
    walk(cx, body, 0)
}

/// True when the expression is inside the arguments of a call to a
/// `tokio::time::timeout`-like wrapper, also within an `async { .. }` block
/// (or closure) handed to it: `timeout(d, async move { connect(a).await })`.
pub fn under_timeout(cx: &FileCx, e: ExprId) -> bool {
    if directly_under_timeout(cx, e) {
        return true;
    }
    let mut f = cx.func_of(e);
    for _ in 0..4 {
        let Parent::Expr(site) = cx.tree.func_site(f) else {
            return false;
        };
        if directly_under_timeout(cx, site) {
            return true;
        }
        f = cx.func_of(site);
    }
    false
}

fn directly_under_timeout(cx: &FileCx, e: ExprId) -> bool {
    cx.tree.expr_ancestors(e).any(|a| {
        cx.call(a).is_some_and(|c| {
            matches!(
                c.target.as_deref(),
                Some(
                    "tokio::time::timeout"
                        | "tokio::time::timeout_at"
                        | "async_std::future::timeout"
                        | "async_std::io::timeout"
                )
            ) || c.name == "timeout"
                || c.name == "timeout_at"
                || c.name == "with_timeout"
        })
    })
}

/// The statements enclosing `s` that are loops, innermost first, within
/// its function.
pub fn enclosing_loops(cx: &FileCx, s: StmtId) -> Vec<StmtId> {
    std::iter::once(s)
        .chain(cx.tree.stmt_ancestors(s))
        .skip(1)
        .filter(|&a| {
            matches!(
                cx.stmt(a).kind,
                StmtKind::Loop { .. } | StmtKind::While { .. } | StmtKind::For { .. }
            )
        })
        .collect()
}

/// True when `e` sits in the arguments of a call with `effect`.
pub fn inside_call_with(cx: &FileCx, e: ExprId, effect: Effect) -> bool {
    cx.tree
        .expr_ancestors(e)
        .any(|a| a != e && cx.call(a).is_some_and(|c| cx.effect(c, effect).is_some()))
}

/// Where a closure is defined: the call it is an argument of, if any.
pub fn closure_call_site(cx: &FileCx, f: FuncId) -> Option<ExprId> {
    let Parent::Expr(site) = cx.tree.func_site(f) else {
        return None;
    };
    let mut cur = site;
    for _ in 0..4 {
        match cx.tree.expr_parent(cur) {
            Parent::Expr(p) => {
                if cx.call(p).is_some() {
                    return Some(p);
                }
                cur = p;
            }
            _ => return None,
        }
    }
    None
}

/// The source text of an expression with whitespace runs collapsed.
pub fn text(cx: &FileCx, e: ExprId) -> String {
    cx.source(cx.expr(e).span)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Crates whose async calls talk to a network peer or a database.
const NET_CRATES: &[&str] = &[
    "tokio::net::",
    "reqwest::",
    "hyper::",
    "hyper_util::",
    "sqlx::",
    "tokio_postgres::",
    "deadpool_postgres::",
    "redis::",
    "mongodb::",
    "tonic::",
    "lapin::",
    "rdkafka::",
    "tokio_tungstenite::",
    "async_nats::",
    "surf::",
    "isahc::",
    "diesel_async::",
    "sea_orm::",
    "bb8::",
    "deadpool::",
];

/// Methods that, awaited on a value of unknown type, read or write a
/// stream or talk to a peer.
const NET_METHODS: &[&str] = &[
    "read",
    "read_exact",
    "read_to_end",
    "read_to_string",
    "read_line",
    "read_buf",
    "write",
    "write_all",
    "write_all_buf",
    "connect",
    "accept",
    "send_request",
    "ready",
];

/// True when an awaited call does network (or database) I/O: a call into a
/// networking crate, a stream read/write, or a usual I/O verb on a value of
/// unknown type (`client.get(..)`, `db.query(..)`, `req.send()`).
pub fn is_network_io(cx: &FileCx, call: ExprId) -> bool {
    let Some(c) = cx.call(call) else { return false };
    // `timeout(d, fut)`: what the timeout wraps.
    if c.receiver.is_none()
        && matches!(c.name.as_str(), "timeout" | "timeout_at")
        && let Some(fut) = c.args.last()
    {
        return is_network_io(cx, unwrap_value(cx, fut.value));
    }
    if let Some(t) = c.target.as_deref() {
        return NET_CRATES.iter().any(|p| t.starts_with(p));
    }
    if c.receiver.is_none() {
        return false;
    }
    // `lock.read()`/`lock.write()` with no buffer: an `RwLock` being taken
    // (a stream's `read`/`write` is given the bytes).
    if matches!(c.name.as_str(), "read" | "write") && c.args.is_empty() {
        return false;
    }
    if NET_METHODS.contains(&c.name.as_str()) || crate::util::is_io_method_call(c) {
        return true;
    }
    // `client.get(url).send()`: a chain rooted in a network call.
    let mut cur = c.receiver;
    while let Some(r) = cur {
        match cx.call(r) {
            Some(rc) => {
                if rc
                    .target
                    .as_deref()
                    .is_some_and(|t| NET_CRATES.iter().any(|p| t.starts_with(p)))
                {
                    return true;
                }
                cur = rc.receiver;
            }
            None => break,
        }
    }
    false
}

/// A loop that drains a receiver: `while let Some(x) = rx.recv().await`,
/// `while let Ok(x) = rx.recv()`, `for x in rx` / `rx.iter()` /
/// `&rx`; with the receiver's name.
pub fn drain_loop<'a>(cx: &FileCx<'a>, s: StmtId) -> Option<(&'a str, &'a Block)> {
    match &cx.stmt(s).kind {
        StmtKind::While { cond, body, .. } => {
            let ExprKind::Let { value, .. } = &cx.expr(*cond).kind else {
                return None;
            };
            let call = unwrap_value(cx, *value);
            let c = cx.call(call)?;
            if !matches!(c.name.as_str(), "recv" | "recv_async" | "next") {
                return None;
            }
            let rx = cx.model.name_of(c.receiver?)?;
            Some((rx, body))
        }
        StmtKind::For { iter, body, .. } => {
            let mut it = cx.model.strip(*iter);
            if let ExprKind::Unary {
                op: UnOp::Ref,
                operand,
            } = &cx.expr(it).kind
            {
                it = *operand;
            }
            if let Some(c) = cx.call(it) {
                if !matches!(c.name.as_str(), "iter" | "into_iter") {
                    return None;
                }
                it = c.receiver?;
            }
            let rx = cx.model.name_of(it)?;
            // Only receivers: the name must come from a channel or be typed
            // as one.
            let t = cx.sema.type_of(it)?;
            t.ends_with("Receiver").then_some((rx, body))
        }
        _ => None,
    }
}

/// The declaration a use of `name` refers to: the latest `let` of that name
/// before `at` whose scope (the enclosing statement or function) contains
/// it.
pub fn declaration_of(cx: &FileCx, name: &str, at: ExprId) -> Option<StmtId> {
    let pos = cx.expr(at).span.start;
    let mut best: Option<(StmtId, u32)> = None;
    for (i, st) in cx.model.stmts.iter().enumerate() {
        if st.span.end > pos {
            continue;
        }
        let StmtKind::Assign {
            targets,
            op: AssignOp::Declare { .. },
            ..
        } = &st.kind
        else {
            continue;
        };
        let binds = targets.iter().any(|&t| {
            unsnarl_model::walk::exprs_under(cx.model, t)
                .into_iter()
                .any(|x| matches!(&cx.expr(x).kind, ExprKind::Name { id, resolved: None } if id == name))
        });
        if !binds {
            continue;
        }
        let s = StmtId(i as u32);
        let scope = match cx.tree.stmt_parent(s) {
            Parent::Stmt(p) => cx.stmt(p).span,
            Parent::Expr(e) => cx.expr(e).span,
            Parent::Function(f) => cx.func(f).span,
            Parent::Detached => continue,
        };
        if !scope.contains(cx.expr(at).span) {
            continue;
        }
        if best.is_none_or(|(_, start)| st.span.start >= start) {
            best = Some((s, st.span.start));
        }
    }
    best.map(|(s, _)| s)
}

/// How a use of a local consumes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UseKind {
    /// `drop(x)` or moved into a call, a struct, a `move` closure.
    Consumed,
    /// Borrowed or used through a method (`x.clone()`, `x.send(..)`, `&x`).
    Borrowed,
}

/// How the expression `use_` (a name) uses its value. `owner` is the
/// function that declares the name.
pub fn use_kind(cx: &FileCx, use_: ExprId, owner: FuncId) -> UseKind {
    // Captured by a `move` closure / `async move` block.
    let mut f = cx.func_of(use_);
    while f != owner {
        let src = cx.source(cx.func(f).span).trim_start();
        if src.starts_with("move")
            || src.starts_with("async move")
            || src.starts_with("static move")
        {
            return UseKind::Consumed;
        }
        match cx.func(f).parent {
            Some(p) => f = p,
            None => break,
        }
    }
    match cx.tree.expr_parent(use_) {
        Parent::Expr(p) => match &cx.expr(p).kind {
            ExprKind::Call(c) => {
                if c.receiver == Some(use_) {
                    if matches!(c.name.as_str(), "into" | "into_inner" | "into_sink") {
                        UseKind::Consumed
                    } else {
                        UseKind::Borrowed
                    }
                } else if c.args.iter().any(|a| a.value == use_) {
                    UseKind::Consumed
                } else {
                    UseKind::Borrowed
                }
            }
            ExprKind::Collection { .. } => UseKind::Consumed,
            _ => UseKind::Borrowed,
        },
        Parent::Stmt(s) => match &cx.stmt(s).kind {
            // `let y = x;` moves; `return x` / a tail moves too.
            StmtKind::Assign { value: Some(v), .. } if *v == use_ => UseKind::Consumed,
            StmtKind::Return(Some(v)) | StmtKind::Tail(v) if *v == use_ => UseKind::Consumed,
            _ => UseKind::Borrowed,
        },
        _ => UseKind::Borrowed,
    }
}

/// The statement list that directly contains `s`.
pub fn block_of<'a>(cx: &FileCx<'a>, s: StmtId) -> Option<&'a Block> {
    match cx.tree.stmt_parent(s) {
        Parent::Function(f) => {
            let b = &cx.func(f).body;
            b.contains(&s).then_some(b)
        }
        Parent::Stmt(p) => {
            let mut found = None;
            for_each_stmt_child(cx.model, p, &mut |ch| {
                if let Child::Block(b) = ch
                    && b.contains(&s)
                {
                    found = Some(b);
                }
            });
            found
        }
        Parent::Expr(e) => match &cx.expr(e).kind {
            ExprKind::Block(b) if b.contains(&s) => Some(b),
            _ => None,
        },
        Parent::Detached => None,
    }
}

/// `Ok(())`, `()`, or nothing: a statement that does no work.
pub fn is_trivial_stmt(cx: &FileCx, s: StmtId) -> bool {
    let e = match &cx.stmt(s).kind {
        StmtKind::Return(None) | StmtKind::Pass => return true,
        StmtKind::Return(Some(e)) | StmtKind::Tail(e) | StmtKind::Expr(e) => *e,
        _ => return false,
    };
    let t = text(cx, e);
    matches!(t.as_str(), "()" | "Ok(())" | "Ok(( ))")
}

/// Every function whose body lies inside `f` (itself included).
pub fn fns_within(cx: &FileCx, f: FuncId) -> Vec<FuncId> {
    let span = cx.func(f).span;
    cx.model
        .function_ids()
        .filter(|&g| {
            g == f || (span.contains(cx.func(g).span) && cx.func(g).kind != FnKind::Module)
        })
        .collect()
}

/// An operation on an atomic: `X.load(o)`, `X.store(v, o)`, `fetch_*`,
/// `swap`, `compare_exchange*`.
#[derive(Clone, Debug)]
pub struct AtomicOp<'a> {
    pub call: ExprId,
    pub recv: ExprId,
    /// The receiver as written (`READY`, `self.ready`).
    pub key: String,
    pub method: &'a str,
    /// `Relaxed`, `Acquire`, `Release`, `AcqRel`, `SeqCst` (the last
    /// ordering argument), if written.
    pub ordering: Option<&'a str>,
}

/// The atomic operation of a call, if it is one: the receiver is typed as
/// an atomic, or an `Ordering::*` argument says so.
pub fn atomic_op<'a>(cx: &FileCx<'a>, e: ExprId) -> Option<AtomicOp<'a>> {
    let c = cx.call(e)?;
    let method = c.name.as_str();
    if !(matches!(method, "load" | "store" | "swap")
        || method.starts_with("fetch_")
        || method.starts_with("compare_exchange")
        || method == "compare_and_swap")
    {
        return None;
    }
    let recv = c.receiver?;
    let ordering = c.args.iter().rev().find_map(|a| ordering_of(cx, a.value));
    let typed = cx.sema.type_of(recv).is_some_and(|t| {
        t.rsplit("::")
            .next()
            .is_some_and(|l| l.starts_with("Atomic"))
    });
    if !typed && ordering.is_none() {
        return None;
    }
    let key = cx.model.dotted(recv)?;
    Some(AtomicOp {
        call: e,
        recv,
        key,
        method,
        ordering,
    })
}

/// `Ordering::Relaxed` (any path spelling) → `Relaxed`.
pub fn ordering_of<'a>(cx: &FileCx<'a>, e: ExprId) -> Option<&'a str> {
    let e = cx.model.strip(e);
    let last = match &cx.expr(e).kind {
        ExprKind::Path { text, resolved } => {
            let r = resolved.as_deref().unwrap_or(text);
            if !(r.contains("atomic::Ordering::") || text.starts_with("Ordering::")) {
                return None;
            }
            text.rsplit("::").next()?
        }
        ExprKind::Name {
            id,
            resolved: Some(r),
        } if r.contains("atomic::Ordering::") => id.as_str(),
        _ => return None,
    };
    matches!(
        last,
        "Relaxed" | "Acquire" | "Release" | "AcqRel" | "SeqCst"
    )
    .then_some(last)
}

/// The last segment of an atomic's key, to match the same flag seen
/// through different roots (`self.ready`, `shared.ready`).
pub fn key_tail(key: &str) -> &str {
    key.rsplit('.').next().unwrap_or(key)
}

/// Module-level `static mut` items of the file, by qualified name.
pub fn static_muts(cx: &FileCx) -> std::collections::HashSet<String> {
    let mut out = std::collections::HashSet::new();
    for st in &cx.model.stmts {
        if let StmtKind::Assign {
            targets,
            op: AssignOp::Declare { mutable: true },
            ..
        } = &st.kind
            && let [t] = targets.as_slice()
            && let ExprKind::Name {
                resolved: Some(r), ..
            } = &cx.expr(*t).kind
        {
            out.insert(r.to_string());
        }
    }
    out
}

/// The `static mut` an expression reads or writes (its root name).
pub fn static_mut_root(
    cx: &FileCx,
    e: ExprId,
    muts: &std::collections::HashSet<String>,
) -> Option<String> {
    let mut cur = cx.model.strip(e);
    loop {
        match &cx.expr(cur).kind {
            ExprKind::Attr { obj, .. } | ExprKind::Index { obj, .. } => cur = cx.model.strip(*obj),
            ExprKind::Unary { operand, .. } => cur = cx.model.strip(*operand),
            ExprKind::Name {
                resolved: Some(r), ..
            } if muts.contains(r.as_str()) => return Some(r.to_string()),
            _ => return None,
        }
    }
}

/// A `Condvar` wait: `cv.wait(guard)`, `wait_timeout`, `wait_while`... on a
/// receiver typed as a condvar, or, when the type is unknown, with a lock
/// guard as its first argument. Returns the method name.
pub fn condvar_wait<'a>(cx: &FileCx<'a>, e: ExprId) -> Option<&'a str> {
    let c = cx.call(e)?;
    let m = c.name.as_str();
    if !matches!(
        m,
        "wait"
            | "wait_timeout"
            | "wait_while"
            | "wait_timeout_while"
            | "wait_for"
            | "wait_until"
            | "wait_while_for"
            | "wait_while_until"
    ) {
        return None;
    }
    let recv = c.receiver?;
    match cx.sema.type_of(recv) {
        Some(t) => t.ends_with("Condvar").then_some(m),
        None => {
            let g = c.positional(0)?;
            let g = match &cx.expr(cx.model.strip(g)).kind {
                ExprKind::Unary { operand, .. } => *operand,
                _ => g,
            };
            cx.sema
                .type_of(g)
                .is_some_and(|t| t.ends_with("Guard"))
                .then_some(m)
        }
    }
}

/// A `notify_one`/`notify_all` call on a condvar (typed, or of unknown type
/// with no arguments).
pub fn condvar_notify<'a>(cx: &FileCx<'a>, e: ExprId) -> Option<&'a str> {
    let c = cx.call(e)?;
    let m = c.name.as_str();
    if !matches!(m, "notify_one" | "notify_all") || !c.args.is_empty() {
        return None;
    }
    match cx.sema.type_of(c.receiver?) {
        Some(t) if !t.ends_with("Condvar") => None,
        _ => Some(m),
    }
}

/// Calls whose failure a loop should not retry by spinning (CAS loops,
/// non-blocking polls): not retries of an I/O operation.
const SPIN_OPS: &[&str] = &[
    "compare_exchange",
    "compare_exchange_weak",
    "compare_and_swap",
    "fetch_update",
    "try_lock",
    "try_read",
    "try_write",
    "try_recv",
    "try_send",
    "try_acquire",
    "try_acquire_owned",
    "try_pop",
    "pop",
    "steal",
    "try_reserve",
    "poll",
    "try_wait",
    "parse",
    "from_str",
    "try_from",
    "next",
];

/// A retry loop: a loop (not over a collection) around a fallible call,
/// where `Ok` leaves the loop and `Err` goes around again. Returns the
/// retried call.
pub fn retried_call(cx: &FileCx, s: StmtId) -> Option<ExprId> {
    let body = match &cx.stmt(s).kind {
        StmtKind::Loop { body } => body,
        StmtKind::While { cond, body, .. } => {
            if let ExprKind::Let { pattern, value } = &cx.expr(*cond).kind {
                // `while let Err(e) = op().await { .. }`
                if cx
                    .source(cx.expr(*pattern).span)
                    .trim_start()
                    .starts_with("Err")
                {
                    return fallible_op(cx, *value);
                }
                return None;
            }
            body
        }
        StmtKind::For { iter, body, .. } => {
            let t = cx.source(cx.expr(*iter).span);
            if !(matches!(cx.expr(cx.model.strip(*iter)).kind, ExprKind::Other(_))
                && t.contains(".."))
            {
                return None;
            }
            // `0..addrs.len()` walks the alternatives (each attempt tries
            // the next address), it does not repeat one call.
            if t.contains(".len()") {
                return None;
            }
            body
        }
        _ => return None,
    };
    for x in top_stmts(cx, body) {
        match &cx.stmt(x).kind {
            StmtKind::Switch {
                subject: Some(sub),
                cases,
            } => {
                let ok_exits = cases
                    .iter()
                    .any(|c| pat_starts(cx, c, "Ok") && block_exits(cx, &c.body));
                let err_retries = cases.iter().any(|c| {
                    pat_starts(cx, c, "Err")
                        && !block_exits(cx, &c.body)
                        && !transient_os_error(cx, c)
                        && !specific_variant(cx, c)
                });
                if ok_exits && err_retries {
                    return fallible_op(cx, *sub);
                }
            }
            StmtKind::If { cond, then, orelse } => {
                if let ExprKind::Let { pattern, value } = &cx.expr(*cond).kind {
                    let p = cx.source(cx.expr(*pattern).span).trim_start();
                    if p.starts_with("Ok") && block_exits(cx, then) && !block_exits(cx, orelse) {
                        return fallible_op(cx, *value);
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// `Err(e) if e.kind() == Interrupted => continue`: retrying EINTR or
/// `WouldBlock` is how OS-level I/O is done, not a retry storm.
fn transient_os_error(cx: &FileCx, c: &Case) -> bool {
    let text = cx.source(c.span);
    ["Interrupted", "WouldBlock", "EINTR", "EAGAIN", "TryAgain"]
        .iter()
        .any(|w| text.contains(w))
}

/// `Err(Error::CheckoutClosed(..))`: a retry of one classified error.
fn specific_variant(cx: &FileCx, c: &Case) -> bool {
    c.patterns.iter().any(|&p| {
        let t = cx.source(cx.expr(p).span).trim_start();
        t.strip_prefix("Err(")
            .is_some_and(|inner| inner.contains("::") || inner.contains('('))
    })
}

fn pat_starts(cx: &FileCx, c: &Case, prefix: &str) -> bool {
    c.patterns
        .iter()
        .any(|&p| cx.source(cx.expr(p).span).trim_start().starts_with(prefix))
}

/// The statements of a block, looking into plain nested blocks.
fn top_stmts(cx: &FileCx, b: &Block) -> Vec<StmtId> {
    let mut out = Vec::new();
    for &s in b {
        match &cx.stmt(s).kind {
            StmtKind::Block(inner) => out.extend(top_stmts(cx, inner)),
            _ => out.push(s),
        }
    }
    out
}

/// Every path through the block leaves the loop or function (its last
/// statement is a `break`/`return`, or an `if`/`match` all of whose
/// branches do).
pub fn block_exits(cx: &FileCx, b: &Block) -> bool {
    let Some(&last) = b.last() else { return false };
    match &cx.stmt(last).kind {
        StmtKind::Break | StmtKind::Return(_) => true,
        StmtKind::Block(inner) => block_exits(cx, inner),
        StmtKind::If { then, orelse, .. } => block_exits(cx, then) && block_exits(cx, orelse),
        StmtKind::Switch { cases, .. } => {
            !cases.is_empty() && cases.iter().all(|c| block_exits(cx, &c.body))
        }
        _ => false,
    }
}

/// The call a retry loop retries, when it is worth retrying with backoff:
/// awaited (async I/O), a network call, or an I/O-sounding name; not a CAS
/// or a non-blocking poll.
fn fallible_op(cx: &FileCx, value: ExprId) -> Option<ExprId> {
    let call = unwrap_value(cx, value);
    let c = cx.call(call)?;
    if SPIN_OPS.contains(&c.name.as_str()) {
        return None;
    }
    let awaited = unsnarl_model::walk::exprs_under(cx.model, value)
        .into_iter()
        .any(|x| matches!(cx.expr(x).kind, ExprKind::Await(_)));
    if c.name.starts_with("try_") || c.name.starts_with("poll") {
        return None;
    }
    let io_name = {
        let n = c.name.to_ascii_lowercase();
        n.split('_').any(|w| {
            matches!(
                w,
                "connect"
                    | "reconnect"
                    | "send"
                    | "request"
                    | "fetch"
                    | "query"
                    | "execute"
                    | "call"
                    | "post"
                    | "get"
                    | "put"
                    | "open"
                    | "upload"
                    | "download"
                    | "publish"
                    | "login"
                    | "dial"
                    | "handshake"
                    | "resolve"
                    | "lookup"
            )
        })
    };
    (awaited || io_name || is_network_io(cx, call)).then_some(call)
}

/// A call that introduces randomness into a delay (`rand`, `fastrand`,
/// a jitter helper).
pub fn is_jitter(cx: &FileCx, e: ExprId) -> bool {
    let Some(c) = cx.call(e) else { return false };
    let n = c.name.to_ascii_lowercase();
    let t = c.target.as_deref().unwrap_or("");
    n.contains("jitter")
        || n.contains("random")
        || n == "gen_range"
        || n == "thread_rng"
        || n == "rng"
        || t.starts_with("rand::")
        || t.starts_with("fastrand::")
        || t.starts_with("nanorand::")
}

/// A call that waits in a way that is not a constant sleep: a backoff
/// helper, an interval tick, a rate limiter.
pub fn is_smart_wait(cx: &FileCx, e: ExprId) -> bool {
    let Some(c) = cx.call(e) else { return false };
    let n = c.name.to_ascii_lowercase();
    n.contains("backoff")
        || n.contains("delay")
        || n == "tick"
        || n.contains("until_ready")
        || n.contains("wait")
}

/// A call that connects (or reconnects) to a peer.
pub fn is_connect(cx: &FileCx, e: ExprId) -> bool {
    cx.call(e).is_some_and(|c| {
        let n = c.name.to_ascii_lowercase();
        n.starts_with("connect")
            || n.starts_with("reconnect")
            || n.split('_')
                .any(|w| matches!(w, "connect" | "reconnect" | "dial" | "subscribe"))
    })
}

/// `e` sits in one branch of a `match` or `if let` on an `Option` whose
/// other branch calls the bounded form (`Some(n) => bounded(n), None => unbounded()`, `if let
/// Some(t) = timeout { connect_timeout(a, t) } else { connect(a) }`): the
/// caller's configuration picks one, and the unbounded branch is what a
/// caller who passes `None` asked for.
pub fn chosen_over(cx: &FileCx, e: ExprId, bounded: &dyn Fn(&Call) -> bool) -> bool {
    let mut p = cx.tree.expr_parent(e);
    for _ in 0..8 {
        match p {
            Parent::Expr(x) => p = cx.tree.expr_parent(x),
            _ => break,
        }
    }
    let Parent::Stmt(mut s) = p else {
        return false;
    };
    // Up through the statements around it to the nearest branching one.
    for _ in 0..4 {
        let Parent::Stmt(owner) = cx.tree.stmt_parent(s) else {
            return false;
        };
        // Only a choice on an `Option` the caller set (`Some(n)`/`None`,
        // `if let Some(t) = ..`): a `match scheme { "http" => .., "https"
        // => .. }` whose other arm bounds something is no such choice.
        // Or a choice on a timeout setting, where zero means none (`match
        // config.connect_timeout_ms { 0 => connect(a), ms =>
        // connect_timeout(a, ms) }`).
        let some = |e: ExprId| cx.source(cx.expr(e).span).trim_start().starts_with("Some(");
        let names_timeout = |e: ExprId| {
            cx.source(cx.expr(e).span)
                .to_ascii_lowercase()
                .contains("timeout")
        };
        let branches: Vec<&Block> = match &cx.stmt(owner).kind {
            StmtKind::If { cond, then, orelse } => {
                if !matches!(&cx.expr(*cond).kind, ExprKind::Let { pattern, .. } if some(*pattern))
                    && !names_timeout(*cond)
                {
                    return false;
                }
                vec![then, orelse]
            }
            StmtKind::Switch { subject, cases } => {
                if !cases.iter().any(|c| c.patterns.iter().any(|&p| some(p)))
                    && !subject.is_some_and(names_timeout)
                {
                    return false;
                }
                cases.iter().map(|c| &c.body).collect()
            }
            _ => {
                s = owner;
                continue;
            }
        };
        let Some(mine) = branches
            .iter()
            .position(|b| crate::util::block_contains(cx, b, s))
        else {
            return false;
        };
        return branches.iter().enumerate().any(|(i, b)| {
            i != mine
                && exprs_in_block(cx.model, b)
                    .into_iter()
                    .any(|x| cx.call(x).is_some_and(bounded))
        });
    }
    false
}

#[cfg(test)]
mod tests {
    use super::test_path;

    #[test]
    fn test_and_benchmark_paths_are_recognized_by_whole_components() {
        assert!(test_path("crates/x/tests/it.rs"));
        assert!(test_path("src/test.rs"));
        assert!(test_path("a\\benches\\b.rs"));
        assert!(test_path("src/test_utils/mod.rs"));
        assert!(test_path("src/testserver.rs"));
        assert!(test_path("src/test_server.rs"));
        assert!(!test_path("src/server.rs"));
        assert!(!test_path("src/testing_ground.rs"));
        assert!(!test_path("src/contest/mod.rs"));
        assert!(!test_path("src/lib.rs"));
    }
}
