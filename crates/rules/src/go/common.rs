//! Questions the Go rules keep asking of a file: which function is test
//! code or an entry point, where a context is in scope, what a channel
//! variable was made with, which statements end a path.

use crate::context::FileCx;
use crate::util::is_under;
use std::collections::HashMap;
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

/// Generated files (`// Code generated ... DO NOT EDIT.`) are skipped, and
/// so are files excluded from every build (`//go:build ignore`, or `//
/// +build ignore` before Go 1.17: generator scripts run by hand). Files kept out of packages (under `testdata/`) are
/// not even read: the walk leaves them out unless they are what the user
/// asked to scan.
pub fn skip_file(cx: &FileCx) -> bool {
    // Every Go rule asks; the header is read once per file.
    *cx.caches
        .go_skip
        .get_or_init(|| cx.model.is_generated || build_ignored(cx.text))
}

fn build_ignored(text: &str) -> bool {
    for line in text.lines().take(30) {
        let t = line.trim();
        if let Some(expr) = t.strip_prefix("//go:build ") {
            return expr.trim() == "ignore";
        }
        // The form before Go 1.17: `// +build ignore` (a space between
        // terms means "or": `// +build ignore linux` is built on Linux).
        if let Some(terms) = t.strip_prefix("// +build ")
            && terms.trim() == "ignore"
        {
            return true;
        }
        if t.starts_with("package ") {
            break;
        }
    }
    false
}

/// A knowledge entry for waiting on other goroutines (`WaitGroup.Wait`,
/// errgroup's `Wait`): it ends when they do, so it deadlocks if they need a
/// lock the waiter holds.
pub fn waits_for_goroutines(entry: &Entry) -> bool {
    entry.kind.as_deref() == Some("waits-for-goroutines")
}

/// A qualified name without its import path's directories, for messages:
/// `golang.org/x/net/http2.Transport.RoundTrip` is `http2.Transport.RoundTrip`.
pub fn short_name(qualified: &str) -> &str {
    qualified.rsplit('/').next().unwrap_or(qualified)
}

/// Test code: a `_test.go` file or a test function.
pub fn in_test(cx: &FileCx, f: FuncId) -> bool {
    cx.model.is_test || cx.func(f).is_test
}

/// The named function (or method) a closure is nested in; itself for named
/// functions.
pub fn outermost(cx: &FileCx, f: FuncId) -> FuncId {
    let mut cur = f;
    while cx.func(cur).kind == FnKind::Closure {
        match cx.func(cur).parent {
            Some(p) => cur = p,
            None => break,
        }
    }
    cur
}

/// `main` or `init` (no receiver): entry points that may create root
/// contexts and long-lived tickers.
pub fn is_entry_point(cx: &FileCx, f: FuncId) -> bool {
    let top = cx.func(outermost(cx, f));
    top.receiver.is_none()
        && top.class.is_none()
        && matches!(top.name.as_str(), "main" | "init")
        && top.kind == FnKind::Function
}

/// `func main()` of a `package main`: the process ends when it returns, so
/// whatever it leaves behind (a goroutine blocked on a send, a ticker)
/// goes with it.
pub fn is_program_main(cx: &FileCx, f: FuncId) -> bool {
    let func = cx.func(f);
    func.kind == FnKind::Function
        && func.receiver.is_none()
        && func.name == "main"
        && cx
            .text
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with("package "))
            .and_then(|l| l.strip_prefix("package "))
            .is_some_and(|rest| rest.split_whitespace().next() == Some("main"))
}

pub fn is_ctx_type(t: &TypeRef) -> bool {
    t.resolved.as_deref() == Some("context.Context")
}

/// The context in scope in `f`: a `context.Context` parameter of `f` or of
/// an enclosing function, or the request of an HTTP handler (`r.Context()`).
#[derive(Clone, Debug)]
pub enum CtxSource {
    Param(String),
    Request(String),
}

impl CtxSource {
    /// How to write the context in a fix.
    pub fn expr(&self) -> String {
        match self {
            CtxSource::Param(n) => n.clone(),
            CtxSource::Request(r) => format!("{r}.Context()"),
        }
    }
}

///
/// A func literal that escapes (stored in a struct, a field, or handed to a
/// function of the file that stores it; returned) runs later, when the
/// enclosing function's context may be long done: it does not inherit it.
/// A request the function only sends (`req.WithContext(..)`, passed to
/// `RoundTrip`/`Do`), or takes as a client's own `RoundTrip`/`Do`, is an
/// outgoing one: its context is the sender's to set.
pub fn ctx_in_scope(cx: &FileCx, f: FuncId) -> Option<CtxSource> {
    let mut cur = Some(f);
    while let Some(id) = cur {
        let func = cx.func(id);
        for p in &func.params {
            if p.name.is_empty() || p.name == "_" {
                continue;
            }
            if let Some(t) = &p.ty {
                if is_ctx_type(t) {
                    return Some(CtxSource::Param(p.name.to_string()));
                }
                if t.resolved.as_deref() == Some("net/http.Request")
                    && t.text.starts_with('*')
                    && !sends_request(cx, id, &p.name)
                    && !is_client_method(cx, id)
                {
                    return Some(CtxSource::Request(p.name.to_string()));
                }
            }
        }
        if func.kind != FnKind::Closure || escapes(cx, id) {
            break;
        }
        cur = func.parent;
    }
    None
}

/// `f` is a client's own sending method, `RoundTrip(req)` or `Do(req)`
/// returning an `*http.Response` (a transport, or a fake client of a
/// test helper): the request is outgoing, and how long to wait for the
/// answer is the client's to decide.
fn is_client_method(cx: &FileCx, f: FuncId) -> bool {
    let func = cx.func(f);
    func.kind == FnKind::Method
        && matches!(func.name.as_str(), "RoundTrip" | "Do")
        && func
            .returns
            .as_ref()
            .is_some_and(|r| r.text.contains("*http.Response"))
}

/// `f` uses its request parameter `req` as a client: sets its context
/// (`req.WithContext(ctx)`) or sends it (`rt.RoundTrip(req)`,
/// `client.Do(req)`).
fn sends_request(cx: &FileCx, f: FuncId, req: &str) -> bool {
    cx.with_nested(f).into_iter().any(|g| {
        cx.body_calls(g).any(|e| {
            let c = cx.call(e).unwrap();
            (c.name.as_str() == "WithContext"
                && c.receiver.and_then(|r| cx.model.name_of(r)) == Some(req))
                || (matches!(c.name.as_str(), "RoundTrip" | "Do")
                    && c.args
                        .iter()
                        .any(|a| cx.model.name_of(a.value) == Some(req)))
        })
    })
}

/// The func literal `f` is kept to run later: it is a value of a composite
/// literal, assigned to a field, returned, passed to a function of the
/// file that stores the parameter it lands in, or to another package's
/// constructor (`New..`).
pub fn escapes(cx: &FileCx, f: FuncId) -> bool {
    let Parent::Expr(lit) = cx.tree.func_site(f) else {
        return false;
    };
    match cx.tree.expr_parent(lit) {
        Parent::Stmt(s) => match &cx.stmt(s).kind {
            StmtKind::Return(_) => true,
            StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } => {
                *v == lit
                    && targets
                        .iter()
                        .any(|&t| matches!(cx.expr(t).kind, ExprKind::Attr { .. }))
            }
            _ => false,
        },
        Parent::Expr(p) => match &cx.expr(p).kind {
            ExprKind::Collection { .. } => true,
            ExprKind::Call(c) if c.func != lit => {
                let Some(i) = c.args.iter().position(|a| a.value == lit) else {
                    return false;
                };
                let Some(callee) = cx.callee_in_file(c) else {
                    // A constructor of another package (`pool.New(dial,
                    // destroy, max)`) keeps the callbacks it is given to
                    // run later, when the caller's context may be gone.
                    return c.name.starts_with("New");
                };
                let Some(param) = cx.param_receiving(callee, c, i) else {
                    return false;
                };
                cx.body_exprs(callee).iter().any(|&e| {
                    cx.model.name_of(e) == Some(param)
                        && match cx.tree.expr_parent(e) {
                            Parent::Expr(q) => {
                                matches!(cx.expr(q).kind, ExprKind::Collection { .. })
                            }
                            Parent::Stmt(s) => matches!(&cx.stmt(s).kind,
                                StmtKind::Assign { targets, value: Some(v), .. }
                                    if *v == e && targets.iter().any(|&t| matches!(cx.expr(t).kind, ExprKind::Attr { .. }))),
                            _ => false,
                        }
                })
            }
            _ => false,
        },
        _ => false,
    }
}

/// Every statement of a block, recursively (not into nested functions),
/// in source order.
pub use unsnarl_model::walk::stmts_in_block as stmts_in;

/// True when the call never returns: `panic`, `os.Exit`, `log.Fatal*`,
/// `t.Fatal*`/`t.FailNow`/`t.Skip*`, `runtime.Goexit`, and any resolved
/// `Fatal..` function or method (`testutil.FatalStack(t, ..)`).
pub fn is_noreturn_call(c: &Call) -> bool {
    match c.target.as_deref() {
        Some("panic" | "os.Exit" | "runtime.Goexit" | "syscall.Exit") => true,
        Some(t) if t.starts_with("log.Fatal") || t.starts_with("log.Panic") => true,
        // A package's own `Fatal..` helper (`testutil.FatalStack(t, ..)`,
        // `klog.Fatalf`): it ends the test or the process like `t.Fatal`.
        Some(t)
            if t.rsplit(['.', '/'])
                .next()
                .is_some_and(|n| n.starts_with("Fatal")) =>
        {
            true
        }
        _ => {
            c.receiver.is_some()
                && matches!(
                    c.name.as_str(),
                    "Fatal" | "Fatalf" | "FailNow" | "Skip" | "Skipf" | "SkipNow"
                )
        }
    }
}

/// How a channel was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChanCap {
    Unbuffered,
    Buffered(i128),
    /// A non-constant buffer size.
    Unknown,
}

/// A channel variable made in a function: `ch := make(chan T[, n])`.
#[derive(Clone, Debug)]
pub struct LocalChan {
    pub func: FuncId,
    pub cap: ChanCap,
}

/// The `make(chan ...)` a plain variable is bound to in `f` or an enclosing
/// function (the last binding in source order; any other binding of the
/// name makes the answer unknown).
pub fn local_chan(cx: &FileCx, f: FuncId, name: &str) -> Option<LocalChan> {
    let mut cur = Some(f);
    while let Some(id) = cur {
        let binds = bindings(cx, id, name);
        if !binds.is_empty() {
            let mut found = None;
            for (_, v) in binds {
                let v = v?;
                let c = cx.call(v)?;
                if c.target.as_deref() != Some("make") || !makes_chan(cx, c) {
                    return None;
                }
                let cap = match c.positional(1) {
                    None => ChanCap::Unbuffered,
                    Some(n) => match cx.model.int_value(n) {
                        Some(0) => ChanCap::Unbuffered,
                        Some(v) => ChanCap::Buffered(v),
                        None => ChanCap::Unknown,
                    },
                };
                found = Some(LocalChan { func: id, cap });
            }
            return found;
        }
        if cx.func(id).params.iter().any(|p| p.name == name) {
            return None;
        }
        cur = cx.func(id).parent.filter(|p| p.0 != 0);
    }
    None
}

/// `make(chan T, ...)`.
pub fn makes_chan(cx: &FileCx, c: &Call) -> bool {
    c.positional(0).is_some_and(|t| {
        let text = cx.source(cx.expr(t).span).trim_start();
        text.starts_with("chan") || text.starts_with("<-chan")
    })
}

/// The statements of `f` (not nested functions) that bind `name`, with the
/// value bound (`None` when it cannot be paired: `a, b := f()`, or a
/// declaration without value).
pub fn bindings(cx: &FileCx, f: FuncId, name: &str) -> Vec<(StmtId, Option<ExprId>)> {
    let mut out = Vec::new();
    for s in cx.body_stmts(f).iter().copied() {
        let StmtKind::Assign { targets, value, op } = &cx.stmt(s).kind else {
            if let StmtKind::For {
                target: Some(t), ..
            } = &cx.stmt(s).kind
                && names_in_target(cx, *t).contains(&name)
            {
                out.push((s, None));
            }
            continue;
        };
        if matches!(op, AssignOp::Augmented(_)) {
            continue;
        }
        for &t in targets {
            match (&cx.expr(t).kind, value) {
                (ExprKind::Name { id, .. }, v) if id == name => out.push((s, *v)),
                (ExprKind::Collection { elems, .. }, v) => {
                    for (i, &e) in elems.iter().enumerate() {
                        if cx.model.name_of(e) == Some(name) {
                            let paired = v.and_then(|v| match &cx.expr(v).kind {
                                ExprKind::Collection {
                                    kind: CollKind::Tuple,
                                    elems: vs,
                                    ..
                                } if vs.len() == elems.len() => Some(vs[i]),
                                _ => None,
                            });
                            out.push((s, paired));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// The plain names bound by an assignment or range target.
pub fn names_in_target<'a>(cx: &FileCx<'a>, t: ExprId) -> Vec<&'a str> {
    match &cx.model.expr(t).kind {
        ExprKind::Name { id, .. } => vec![id.as_str()],
        ExprKind::Collection { elems, .. } => elems
            .iter()
            .filter_map(|&e| match &cx.model.expr(e).kind {
                ExprKind::Name { id, .. } => Some(id.as_str()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Every expression of `f` and of the closures nested in it.
pub fn exprs_deep(cx: &FileCx, f: FuncId) -> Vec<ExprId> {
    let mut out = Vec::new();
    for g in cx.with_nested(f) {
        out.extend(cx.body_exprs(g).iter().copied());
    }
    out
}

/// The plain-name uses of `name` in `f` and its closures.
pub fn name_uses(cx: &FileCx, f: FuncId, name: &str) -> Vec<ExprId> {
    exprs_deep(cx, f)
        .into_iter()
        .filter(|&e| matches!(&cx.expr(e).kind, ExprKind::Name { id, .. } if id == name))
        .collect()
}

/// What the code around a use of a channel variable does with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChanUse {
    Send,
    Recv,
    /// `for v := range ch`.
    Range,
    Close,
    /// `len(ch)`/`cap(ch)`: reads nothing.
    Inspect,
    /// Anything else: passed, returned, stored, assigned.
    Escape,
}

/// Classifies one use (a `Name` expression) of a channel variable.
pub fn chan_use(cx: &FileCx, e: ExprId) -> ChanUse {
    match cx.tree.expr_parent(e) {
        Parent::Expr(p) => match &cx.expr(p).kind {
            ExprKind::Send { channel, .. } if *channel == e => ChanUse::Send,
            ExprKind::Recv(_) => ChanUse::Recv,
            ExprKind::Call(c) if c.func != e => match c.target.as_deref() {
                Some("close") => ChanUse::Close,
                Some("len" | "cap") => ChanUse::Inspect,
                _ => ChanUse::Escape,
            },
            _ => ChanUse::Escape,
        },
        Parent::Stmt(s) => match &cx.stmt(s).kind {
            StmtKind::For { iter, .. } if *iter == e => ChanUse::Range,
            StmtKind::Select { arms, .. } => {
                for arm in arms {
                    match &arm.kind {
                        ArmKind::Recv { channel, .. } if *channel == e => return ChanUse::Recv,
                        ArmKind::Send { channel, .. } if *channel == e => return ChanUse::Send,
                        _ => {}
                    }
                }
                ChanUse::Escape
            }
            StmtKind::Assign { targets, .. } if targets.contains(&e) => ChanUse::Inspect,
            _ => ChanUse::Escape,
        },
        _ => ChanUse::Escape,
    }
}

/// The statement of the parent that starts goroutine `g`: its `go`
/// statement, or the statement holding the call it is given to (a group's
/// `Go(...)`).
pub fn spawn_stmt(cx: &FileCx, g: FuncId) -> Option<StmtId> {
    if let Some(s) = go_stmt_of_closure(cx, g) {
        return Some(s);
    }
    let Parent::Expr(site) = cx.tree.func_site(g) else {
        return None;
    };
    cx.tree.enclosing_stmt(site)
}

/// The `go` statement that starts closure `f`, if `f` is the func literal of
/// `go func() {...}()`.
pub fn go_stmt_of_closure(cx: &FileCx, f: FuncId) -> Option<StmtId> {
    let Parent::Expr(site) = cx.tree.func_site(f) else {
        return None;
    };
    let Parent::Expr(call) = cx.tree.expr_parent(site) else {
        return None;
    };
    let c = cx.call(call)?;
    if cx.model.strip(c.func) != site {
        return None;
    }
    match cx.tree.expr_parent(call) {
        Parent::Stmt(s) if matches!(cx.stmt(s).kind, StmtKind::Go(g) if g == call) => Some(s),
        _ => None,
    }
}

/// The closure a `go` statement runs, if it is a func literal.
pub fn go_closure(cx: &FileCx, go_call: ExprId) -> Option<FuncId> {
    let c = cx.call(go_call)?;
    match cx.expr(cx.model.strip(c.func)).kind {
        ExprKind::Closure(f) => Some(f),
        _ => None,
    }
}

/// True when `f` runs in a goroutine of its own: it is the func literal of
/// a `go` statement, or a closure passed to a known group spawn
/// (`g.Go(func() error {...})`).
pub fn runs_in_goroutine(cx: &FileCx, f: FuncId) -> bool {
    if go_stmt_of_closure(cx, f).is_some() {
        return true;
    }
    let Parent::Expr(site) = cx.tree.func_site(f) else {
        return false;
    };
    matches!(cx.tree.expr_parent(site), Parent::Expr(p)
        if cx.call(p).is_some_and(|c| c.func != site && is_group_go(cx, c)))
}

/// `g.Go(...)` / `g.TryGo(...)` of an errgroup-like group (by knowledge, or
/// by name on an unknown receiver).
pub fn is_group_go(cx: &FileCx, c: &Call) -> bool {
    cx.effect(c, Effect::ScopedSpawn).is_some()
        || (c.target.is_none() && c.receiver.is_some() && matches!(c.name.as_str(), "Go"))
}

/// The loop statements enclosing a statement, innermost first, stopping at
/// the function boundary.
pub fn enclosing_loops(cx: &FileCx, s: StmtId) -> Vec<StmtId> {
    std::iter::once(s)
        .chain(cx.tree.stmt_ancestors(s))
        .filter(|&a| {
            a != s
                && matches!(
                    cx.stmt(a).kind,
                    StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::Loop { .. }
                )
        })
        .collect()
}

/// The parameter `name` of `f` or of a function enclosing it (a closure
/// sees its parents' parameters).
pub fn param_named<'a>(cx: &FileCx<'a>, f: FuncId, name: &str) -> Option<&'a Param> {
    let mut cur = Some(f);
    while let Some(g) = cur {
        if let Some(p) = cx.func(g).params.iter().find(|p| p.name == name) {
            return Some(p);
        }
        cur = cx.func(g).parent;
    }
    None
}

/// `e` without parentheses and a leading `&` (`&bytes.Buffer{}` →
/// `bytes.Buffer{}`, `&buf` → `buf`).
pub fn strip_ref(cx: &FileCx, e: ExprId) -> ExprId {
    match &cx.expr(cx.model.strip(e)).kind {
        ExprKind::Unary {
            op: UnOp::Ref,
            operand,
        } => cx.model.strip(*operand),
        _ => cx.model.strip(e),
    }
}

/// The root name of a dotted chain (`s` in `s.a.b`).
pub fn root_name(cx: &FileCx, e: ExprId) -> Option<ExprId> {
    let mut cur = cx.model.strip(e);
    loop {
        match &cx.expr(cur).kind {
            ExprKind::Name { .. } => return Some(cur),
            ExprKind::Attr { obj, .. } => cur = *obj,
            ExprKind::Unary {
                op: UnOp::Ref | UnOp::Deref,
                operand,
            } => cur = *operand,
            ExprKind::Index { obj, .. } => cur = *obj,
            _ => return None,
        }
    }
}

/// Where a plain name used in function `f` is declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameScope {
    /// Bound in this function (a parameter, a `:=`, a `var`, a range var).
    Own,
    /// Bound in an enclosing function: the closure captures it.
    Captured(FuncId),
    /// A package-level variable of this file.
    Package,
    Unknown,
}

pub fn name_scope(cx: &FileCx, f: FuncId, name: &str) -> NameScope {
    let mut cur = Some(f);
    while let Some(id) = cur {
        let func = cx.func(id);
        let declared = id.0 != 0
            && (func.params.iter().any(|p| p.name == name)
                || func.receiver.as_deref() == Some(name)
                || bindings(cx, id, name).iter().any(|(s, _)| {
                    matches!(
                        cx.stmt(*s).kind,
                        StmtKind::Assign {
                            op: AssignOp::Declare { .. },
                            ..
                        } | StmtKind::For { .. }
                    )
                })
                || func.returns.as_ref().is_some_and(|r| {
                    r.text.starts_with('(') && r.text.split([',', '(', ' ']).any(|w| w == name)
                }));
        if declared {
            return if id == f {
                NameScope::Own
            } else {
                NameScope::Captured(id)
            };
        }
        if id.0 == 0 {
            break;
        }
        cur = func.parent;
    }
    let pkg_var = bindings(cx, FuncId(0), name)
        .iter()
        .any(|(s, _)| matches!(cx.stmt(*s).kind, StmtKind::Assign { .. }));
    if pkg_var {
        NameScope::Package
    } else {
        NameScope::Unknown
    }
}

/// The literal duration of a `time.Sleep`-like argument, when it is a
/// constant expression with no call to a random source.
pub fn is_constant_expr(cx: &FileCx, e: ExprId) -> bool {
    let mut ok = true;
    for x in unsnarl_model::walk::exprs_under(cx.model, e) {
        match &cx.expr(x).kind {
            ExprKind::Call(c) => {
                // Conversions such as `time.Duration(3)` keep it constant.
                let t = c.target.as_deref().unwrap_or("");
                if t != "time.Duration" {
                    ok = false;
                }
            }
            // A local variable may be a computed backoff.
            ExprKind::Name { id, resolved }
                if resolved.is_none() && !id.chars().next().is_some_and(char::is_uppercase) =>
            {
                ok = false;
            }
            ExprKind::Index { .. } | ExprKind::Closure(_) => ok = false,
            _ => {}
        }
    }
    ok
}

/// Lines of the file, for messages that point at another place.
pub fn line_of(cx: &FileCx, span: Span) -> usize {
    cx.line_of(span)
}

/// A `sync.WaitGroup` method call: the WaitGroup as written (`wg`, `s.wg`)
/// and the method (`Add`, `Done`, `Wait`). WaitGroups of unknown type are
/// recognized by name (`wg`, `...Wg`, `waitGroup`).
pub fn wg_call<'a>(cx: &FileCx<'a>, e: ExprId) -> Option<(String, &'a str)> {
    let c = cx.model.call(e)?;
    if !matches!(c.name.as_str(), "Add" | "Done" | "Wait") {
        return None;
    }
    let recv = c.receiver?;
    let d = cx.model.dotted(recv)?;
    let ok = match c.target.as_deref() {
        Some(t) => t.starts_with("sync.WaitGroup."),
        None => {
            let last = d.rsplit('.').next().unwrap_or(&d).to_ascii_lowercase();
            last == "wg" || last.ends_with("wg") || last.contains("waitgroup")
        }
    };
    ok.then_some((d, c.name.as_str()))
}

/// The Go language version of a file, as `(1, minor)`: a `//go:build
/// go1.N` constraint in the file (which sets the file's version), else the
/// `go` directive of the nearest `go.mod` above the file on disk. `None`
/// when neither is found.
pub fn go_version(cx: &FileCx) -> Option<(u32, u32)> {
    for line in cx.text.lines().take(40) {
        let t = line.trim();
        if let Some(expr) = t.strip_prefix("//go:build ") {
            // `!go1.22` builds only with older toolchains.
            if let Some(rest) = expr.split("!go1.").nth(1)
                && let Ok(n) = rest
                    .split(|c: char| !c.is_ascii_digit())
                    .next()
                    .unwrap_or("")
                    .parse::<u32>()
            {
                return Some((1, n.saturating_sub(1)));
            }
            if let Some(v) = expr
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
                .filter_map(parse_go_tag)
                .next()
            {
                return Some(v);
            }
        }
        if t.starts_with("package ") {
            break;
        }
    }
    gomod_version(cx.path)
}

/// A method that stops a server or a long-running object (`srv.Shutdown`,
/// `grpcServer.GracefulStop`, `ln.Close`, `w.Stop`).
pub fn is_stop_method(name: &str) -> bool {
    matches!(name, "Stop" | "GracefulStop" | "Shutdown" | "Close")
}

/// The file builds only with a tag of the project's own (`//go:build
/// generate`, `integration && perftest`, `tools`): a generator, a tool or
/// a test harness run by hand, not part of the program. Operating systems,
/// architectures, Go versions and the toolchain's own tags do not count.
pub fn tool_build(cx: &FileCx) -> bool {
    const STANDARD: &[&str] = &[
        "aix",
        "android",
        "darwin",
        "dragonfly",
        "freebsd",
        "hurd",
        "illumos",
        "ios",
        "js",
        "linux",
        "nacl",
        "netbsd",
        "openbsd",
        "plan9",
        "solaris",
        "wasip1",
        "windows",
        "zos",
        "unix",
        "386",
        "amd64",
        "amd64p32",
        "arm",
        "arm64",
        "arm64be",
        "armbe",
        "loong64",
        "mips",
        "mipsle",
        "mips64",
        "mips64le",
        "mips64p32",
        "mips64p32le",
        "ppc",
        "ppc64",
        "ppc64le",
        "riscv",
        "riscv64",
        "s390",
        "s390x",
        "sparc",
        "sparc64",
        "wasm",
        "cgo",
        "gc",
        "gccgo",
        "purego",
        "race",
        "msan",
        "asan",
        "appengine",
        "boringcrypto",
        "goexperiment",
    ];
    for line in cx.text.lines().take(40) {
        let t = line.trim();
        if let Some(expr) = t.strip_prefix("//go:build ") {
            // A tag required (not negated) that is none of the standard ones.
            let mut negated = false;
            let mut tok = String::new();
            let mut custom = false;
            for ch in expr.chars().chain(std::iter::once(' ')) {
                if ch.is_ascii_alphanumeric() || ch == '_' || ch == '.' {
                    tok.push(ch);
                    continue;
                }
                if !tok.is_empty() {
                    let standard = STANDARD.contains(&tok.as_str())
                        || tok.starts_with("go1.")
                        || tok.starts_with("goexperiment.");
                    custom |= !negated && !standard;
                    tok.clear();
                    negated = false;
                }
                if ch == '!' {
                    negated = true;
                }
            }
            return custom;
        }
        if t.starts_with("package ") {
            break;
        }
    }
    false
}

fn parse_go_tag(tok: &str) -> Option<(u32, u32)> {
    let rest = tok.strip_prefix("go1.")?;
    Some((1, rest.parse().ok()?))
}

/// `go.mod` versions by directory.
type VersionCache = HashMap<std::path::PathBuf, Option<(u32, u32)>>;

fn gomod_version(path: &str) -> Option<(u32, u32)> {
    use std::sync::{Mutex, OnceLock};
    static CACHE: OnceLock<Mutex<VersionCache>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let p = std::path::Path::new(path);
    let mut dir = p.parent();
    while let Some(d) = dir {
        let key = d.to_path_buf();
        if let Some(v) = cache.lock().ok().and_then(|c| c.get(&key).copied()) {
            return v;
        }
        let gomod = if d.as_os_str().is_empty() {
            std::path::PathBuf::from("go.mod")
        } else {
            d.join("go.mod")
        };
        if let Some(text) = read_gomod(&gomod) {
            let v = text.lines().find_map(|l| {
                let l = l.trim();
                let v = l.strip_prefix("go ")?.trim();
                let mut parts = v.split('.');
                let major = parts.next()?.parse().ok()?;
                let minor = parts.next()?.parse().ok()?;
                Some((major, minor))
            });
            if let Ok(mut c) = cache.lock() {
                c.insert(key, v);
            }
            return v;
        }
        dir = d.parent();
    }
    None
}

/// The text of a `go.mod`, if it is a regular file of sane size. The type is
/// checked before opening: a FIFO named `go.mod` would block `open` forever,
/// and a link to `/dev/zero` would never end.
fn read_gomod(path: &std::path::Path) -> Option<String> {
    const MAX_GOMOD_BYTES: u64 = 1024 * 1024;
    let md = std::fs::metadata(path).ok()?;
    if !md.is_file() || md.len() > MAX_GOMOD_BYTES {
        return None;
    }
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_GOMOD_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// A `sync.Cond` method call (`Wait`, `Signal`, `Broadcast`): the condition
/// variable as written and the method. Conditions of unknown type are
/// recognized by name (`cond`, `notEmpty`... must contain "cond").
pub fn cond_call<'a>(cx: &FileCx<'a>, e: ExprId) -> Option<(String, &'a str)> {
    let c = cx.model.call(e)?;
    if !matches!(c.name.as_str(), "Wait" | "Signal" | "Broadcast") || !c.args.is_empty() {
        return None;
    }
    let d = cx.model.dotted(c.receiver?)?;
    let ok = match c.target.as_deref() {
        Some(t) => t.starts_with("sync.Cond."),
        None => d
            .rsplit('.')
            .next()
            .is_some_and(|l| l.to_ascii_lowercase().contains("cond")),
    };
    ok.then_some((d, c.name.as_str()))
}

/// Verbs that, as the start of a function or method name whose callee is
/// not known, almost always mean network, database or file I/O.
const IO_VERBS: &[&str] = &[
    "fetch",
    "download",
    "upload",
    "send",
    "post",
    "request",
    "query",
    "dial",
    "connect",
    "publish",
    "write",
    "read",
    "save",
    "delete",
    "remove",
    "notify",
    "push",
    "pull",
    "flush",
    "serve",
    "listen",
    "insert",
    "upsert",
    "invoke",
    "deliver",
    "persist",
    "refresh",
    "subscribe",
    "consume",
    "ping",
    "probe",
    "email",
    "mail",
];

fn starts_with_verb(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if lower == "get" || lower.starts_with("http") {
        return true;
    }
    IO_VERBS.iter().any(|v| {
        lower.starts_with(v)
            && name[v.len()..]
                .chars()
                .next()
                .is_none_or(|c| c.is_uppercase() || c == '_' || c.is_ascii_digit())
    })
}

/// What I/O a call does, as a short description, when it is known to
/// (knowledge), is a project function known to block, or is an unknown
/// callee named like I/O (`fetch(u)`, `s.store.Delete(id)`).
pub fn io_call(cx: &FileCx, c: &Call) -> Option<String> {
    let display = cx.callee_display(c);
    let callee = short_name(&display);
    if let Some(e) = cx.effect(c, Effect::Blocking)
        && !matches!(
            c.target.as_deref(),
            Some("time.Sleep" | "sync.WaitGroup.Wait" | "golang.org/x/sync/errgroup.Group.Wait")
        )
    {
        return Some(format!("`{callee}` {}", e.what));
    }
    if let Some(t) = &c.target
        && let Some(chain) = cx.index.blocking_chain_of(cx.lang, t, cx.file)
        && !matches!(&*chain.site.callee, "time.Sleep" | "sync.WaitGroup.Wait")
    {
        return Some(format!("`{callee}` {}", chain.site.what));
    }
    // A property read of a JavaScript value in a WebAssembly program
    // (`js.Global().Get("document")`): an object lookup, not I/O.
    let js_property = matches!(c.name.as_str(), "Get" | "Set" | "Index" | "SetIndex")
        && std::iter::successors(c.receiver, |&r| {
            cx.call(cx.model.strip(r)).and_then(|k| k.receiver)
        })
        .any(|r| {
            let r = cx.model.strip(r);
            let js = |t: &str| t.starts_with("syscall/js.");
            // `js.Global()`, or a local a function of the file returning a
            // `js.Value` filled (`el := getElementByID(id)`).
            cx.call(r).and_then(|k| k.target.as_deref()).is_some_and(js)
                || cx.model.name_of(r).is_some_and(|n| {
                    let binds = bindings(cx, cx.func_of(r), n);
                    !binds.is_empty()
                        && binds.iter().all(|(_, v)| {
                            v.and_then(|v| cx.call(v))
                                .and_then(|k| cx.callee_in_file(k))
                                .and_then(|g| cx.func(g).returns.as_ref())
                                .and_then(|t| t.resolved.as_deref())
                                .is_some_and(js)
                        })
                })
        });
    if js_property {
        return None;
    }
    let guessable = match c.target.as_deref() {
        None => true,
        Some(t) => {
            // This package (possibly another file of it), or a third-party
            // package: judge by the name. The standard library is covered
            // by the knowledge tables.
            is_under(t, &cx.model.module, &['.'])
                || (t.contains('/') && t.split('/').next().is_some_and(|first| first.contains('.')))
        }
    };
    (guessable && starts_with_verb(&c.name)).then(|| format!("`{callee}`"))
}

/// True when everything a function of the file runs is known and does no
/// I/O: its calls go to functions of the file that are pure in turn, or to
/// the standard library (minus what the knowledge tables say blocks), or
/// to builtins. Calls of unknown methods or of other packages' functions
/// may do anything.
pub fn provably_pure(cx: &FileCx, f: FuncId, depth: u32) -> bool {
    pure_but(cx, f, depth, |_| false)
}

/// Like [`provably_pure`], but calls `allowed` accepts count as pure.
fn pure_but(cx: &FileCx, f: FuncId, depth: u32, allowed: impl Fn(&Call) -> bool + Copy) -> bool {
    cx.with_nested(f).into_iter().all(|g| {
        cx.body_exprs(g).iter().all(|&e| {
            let Some(c) = cx.call(e) else { return true };
            if allowed(c) {
                return true;
            }
            if let Some(h) = cx.callee_in_file(c) {
                return h == f || (depth > 0 && provably_pure(cx, h, depth - 1));
            }
            if cx.effect(c, Effect::Blocking).is_some() {
                return false;
            }
            match c.target.as_deref() {
                None => false,
                Some(t) => {
                    let std = !t.contains('/') || !t.split('/').next().unwrap_or("").contains('.');
                    std && !is_under(t, &cx.model.module, &['.'])
                }
            }
        })
    })
}

/// All `f` does besides pure work is call callbacks that return nothing
/// (`h.onRequest(args)` with a field `onRequest func(Args)`, or a
/// parameter of such a type): `notifyRequest` hands values to the user's
/// code, it does no I/O of its own and has no error to lose.
fn only_notifies(cx: &FileCx, f: FuncId, depth: u32) -> bool {
    let fields: Vec<&str> = cx
        .model
        .types
        .iter()
        .flat_map(|t| t.fields.iter())
        .filter(|fl| returns_nothing(&fl.ty.text))
        .map(|fl| fl.name.as_str())
        .collect();
    let params: Vec<&str> = cx
        .func(f)
        .params
        .iter()
        .filter(|p| p.ty.as_ref().is_some_and(|t| returns_nothing(&t.text)))
        .map(|p| p.name.as_str())
        .collect();
    let is_callback = |c: &Call| {
        let callee = cx.model.strip(c.func);
        match &cx.expr(callee).kind {
            ExprKind::Attr { name, .. } => fields.contains(&name.as_str()),
            ExprKind::Name { id, .. } => params.contains(&id.as_str()),
            _ => false,
        }
    };
    let calls_one = cx.with_nested(f).into_iter().any(|g| {
        cx.body_exprs(g)
            .iter()
            .any(|&e| cx.call(e).is_some_and(is_callback))
    });
    calls_one && pure_but(cx, f, depth, is_callback)
}

/// A function type with no results: `func(Args)`, not `func() error`.
fn returns_nothing(ty: &str) -> bool {
    let Some(rest) = ty.trim().strip_prefix("func(") else {
        return false;
    };
    let mut depth = 1;
    for (i, ch) in rest.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return rest[i + 1..].trim().is_empty();
                }
            }
            _ => {}
        }
    }
    false
}

/// The I/O a function of the file does, directly or through functions of
/// the file it calls (a few levels deep), closures included.
pub fn does_io(cx: &FileCx, f: FuncId, depth: u32) -> Option<String> {
    // A function of the file named like I/O (`sendEmail`) whose body hides
    // it behind helpers we cannot see; not one whose whole body we can see
    // does none (`deleteRandomKey` over a `sync.Map`).
    let name = &cx.func(f).name;
    if !name.is_empty()
        && starts_with_verb(name)
        && !provably_pure(cx, f, depth)
        && !only_notifies(cx, f, depth)
    {
        return Some(format!("`{name}`"));
    }
    for g in cx.with_nested(f) {
        // A goroutine started inside is judged as a goroutine of its own.
        if cx
            .tree
            .func_ancestors(cx.model, g)
            .take_while(|&a| a != f)
            .any(|a| runs_in_goroutine(cx, a))
        {
            continue;
        }
        for &e in cx.body_exprs(g) {
            let Some(c) = cx.call(e) else { continue };
            // `go h(x)`: `h` runs in the new goroutine (its arguments here).
            if matches!(cx.tree.expr_parent(e), unsnarl_model::walk::Parent::Stmt(s)
                if matches!(cx.stmt(s).kind, StmtKind::Go(_)))
            {
                continue;
            }
            if let Some(h) = cx.callee_in_file(c) {
                if depth > 0
                    && h != f
                    && let Some(io) = does_io(cx, h, depth - 1)
                {
                    return Some(io);
                }
                continue;
            }
            if let Some(io) = io_call(cx, c) {
                return Some(io);
            }
        }
    }
    None
}

/// Code of a helper of a `_test.go` file that takes the test's handle
/// (`func startCluster(t *testing.T, n int)`), closures in it included:
/// only a test can call it, and what it leaves behind ends with the test
/// binary. (Rules about goroutines blocked forever still report it: a leak
/// per table row is what goroutine-leak checkers in tests catch.)
pub fn in_test_helper(cx: &FileCx, f: FuncId) -> bool {
    cx.model.is_test
        && cx.func(outermost(cx, f)).params.iter().any(|p| {
            p.ty.as_ref().is_some_and(|t| {
                matches!(
                    t.text.trim_start_matches('*'),
                    "testing.T" | "testing.B" | "testing.F" | "testing.TB"
                )
            })
        })
}

/// Code of a test, benchmark or example function (`func TestX(t
/// *testing.T)`), closures in it included. Helpers of `_test.go` files
/// that are not tests themselves are not.
pub fn in_test_func(cx: &FileCx, f: FuncId) -> bool {
    let top_id = outermost(cx, f);
    let top = cx.func(top_id);
    if top.is_test {
        return true;
    }
    // Ginkgo-style specs: closures handed to `Describe`/`It` in a package
    // variable's initializer (`var _ = Describe(..)`) of a test file.
    if cx.model.is_test && top_id.0 == 0 {
        return true;
    }
    // Suite-style tests are methods: `func (s) TestX(t *testing.T)`, and
    // gocheck's `func (s *S) TestX(c *check.C)`.
    cx.model.is_test
        && ["Test", "Benchmark", "Fuzz"]
            .iter()
            .any(|p| top.name.starts_with(p))
        && top.params.iter().any(|p| {
            p.ty.as_ref().is_some_and(|t| {
                matches!(
                    t.resolved.as_deref(),
                    Some("testing.T" | "testing.B" | "testing.F")
                ) || t
                    .resolved
                    .as_deref()
                    .is_some_and(|r| r.ends_with("check.v1.C") || r.ends_with("go-check/check.C"))
                    || matches!(t.text.trim_start_matches('*'), "check.C" | "C" | "gc.C")
            })
        })
}

/// `iter` is a ticker's channel: `time.Tick(d)`, or `ticker.C` of a
/// `time.NewTicker` made inline or bound in `g`.
pub fn ticker_channel(cx: &FileCx, g: FuncId, iter: ExprId) -> bool {
    let new_ticker = |e: ExprId| {
        cx.call(e)
            .is_some_and(|c| c.target.as_deref() == Some("time.NewTicker"))
    };
    if cx
        .call(iter)
        .is_some_and(|c| c.target.as_deref() == Some("time.Tick"))
    {
        return true;
    }
    let ExprKind::Attr { obj, name, .. } = &cx.expr(iter).kind else {
        return false;
    };
    name == "C"
        && (new_ticker(*obj)
            || cx.model.name_of(*obj).is_some_and(|n| {
                bindings(cx, g, n)
                    .iter()
                    .any(|(_, v)| v.is_some_and(new_ticker))
            }))
}

/// No remote peer that could stall the dial: a `unix...` network (a daemon
/// of this machine: syslog, a local agent), a connectionless one (`udp`,
/// `ip`: the dial only binds a socket), or a loopback address (`127.0.0.1`,
/// `localhost`, a listener's own `ln.Addr()`). The network may be a literal,
/// a local bound once to one, or ranged over a literal list of such.
pub fn no_remote_peer(cx: &FileCx, f: FuncId, c: &Call) -> bool {
    let no_peer = |e: ExprId| {
        matches!(cx.model.literal(e), Some(Lit::Str(s))
            if s.starts_with("unix") || s.starts_with("udp") || s.starts_with("ip"))
    };
    let all_no_peer = |e: ExprId| {
        matches!(&cx.expr(cx.model.strip(e)).kind,
            ExprKind::Collection { elems, .. } if !elems.is_empty() && elems.iter().all(|&x| no_peer(x)))
    };
    let Some(network) = c.positional(0) else {
        return false;
    };
    if no_peer(network) || c.positional(1).is_some_and(|a| loopback(cx, f, a, 2)) {
        return true;
    }
    let Some(name) = cx.model.name_of(network) else {
        return false;
    };
    // `const network = "udp"`; `for _, network := range logTypes` with
    // `logTypes := []string{"unixgram", "unix"}`.
    let binds = bindings(cx, f, name);
    !binds.is_empty()
        && binds.iter().all(|&(s, v)| match &cx.stmt(s).kind {
            StmtKind::For { iter, .. } => {
                all_no_peer(*iter)
                    || cx.model.name_of(*iter).is_some_and(|list| {
                        let lists = bindings(cx, f, list);
                        !lists.is_empty() && lists.iter().all(|&(_, v)| v.is_some_and(all_no_peer))
                    })
            }
            _ => v.is_some_and(no_peer),
        })
}

/// A URL on this machine: `"http://localhost:8080/x"`, `"http://127.0.0.1/"`,
/// also as the format of a `fmt.Sprintf("http://localhost:%d/x", port)`, or
/// a local bound to one of those.
pub fn loopback_url(cx: &FileCx, f: FuncId, e: ExprId) -> bool {
    let e = cx.model.strip(e);
    let text = match cx.model.literal(e) {
        Some(Lit::Str(s)) => Some(s.to_string()),
        _ => cx
            .call(e)
            .filter(|c| c.target.as_deref() == Some("fmt.Sprintf"))
            .and_then(|c| c.positional(0))
            .and_then(|fmt| match cx.model.literal(fmt) {
                Some(Lit::Str(s)) => Some(s.to_string()),
                _ => None,
            }),
    };
    if let Some(t) = text {
        return crate::shared::is_loopback_host(t.split_once("://").map_or("", |(_, rest)| rest));
    }
    let Some(name) = cx.model.name_of(e) else {
        return false;
    };
    let binds = bindings(cx, f, name);
    !binds.is_empty()
        && binds.iter().all(|&(_, v)| {
            v.is_some_and(|v| {
                cx.model.name_of(cx.model.strip(v)).is_none() && loopback_url(cx, f, v)
            })
        })
}

/// An address on this machine: a literal starting `127.`, `localhost` or
/// `[::1]` (also as the format of a `fmt.Sprintf` or the host of a
/// `net.JoinHostPort`), a listener's own address (`ln.Addr().String()`),
/// or a local bound to one of those.
fn loopback(cx: &FileCx, f: FuncId, e: ExprId, depth: u8) -> bool {
    if let Some(Lit::Str(s)) = cx.model.literal(e) {
        return crate::shared::is_loopback_host(s);
    }
    if let Some(c) = cx.call(cx.model.strip(e)) {
        // `fmt.Sprintf("127.0.0.1:%d", port)`, `net.JoinHostPort("localhost",
        // port)`: the host is written out.
        let host = match c.target.as_deref() {
            Some("fmt.Sprintf" | "net.JoinHostPort") => {
                c.positional(0).and_then(|h| match cx.model.literal(h) {
                    Some(Lit::Str(s)) => Some(s),
                    _ => None,
                })
            }
            _ => None,
        };
        if let Some(h) = host {
            return crate::shared::is_loopback_host(h) || (c.name == "JoinHostPort" && h == "::1");
        }
        // `ln.Addr().String()` / `ln.Addr()`.
        let addr_of = |c: &Call| c.name == "Addr" && c.args.is_empty();
        return addr_of(c)
            || (c.name == "String"
                && c.args.is_empty()
                && c.receiver
                    .is_some_and(|r| cx.call(cx.model.strip(r)).is_some_and(addr_of)));
    }
    let Some(name) = cx.model.name_of(e) else {
        return false;
    };
    if depth == 0 {
        return false;
    }
    let binds = bindings(cx, f, name);
    !binds.is_empty()
        && binds
            .iter()
            .all(|&(_, v)| v.is_some_and(|v| loopback(cx, f, v, depth - 1)))
}

/// `time.Sleep(50)`: an untyped constant is a count of nanoseconds, so
/// this pause is over before another goroutine could notice it (a yield,
/// not a wait for anything).
pub fn nanosecond_sleep(cx: &FileCx, c: &Call) -> bool {
    c.target.as_deref() == Some("time.Sleep")
        && c.positional(0).is_some_and(|d| {
            matches!(cx.expr(cx.model.strip(d)).kind, ExprKind::Literal(Lit::Int(n)) if n < 1_000_000)
        })
}

/// The integer value of `e`, where a plain name counts as the largest
/// literal the file binds it to (`const n = 3`, `maxTries := 2`, perhaps
/// in several functions); `None` when any binding is not a literal.
pub fn int_bound(cx: &FileCx, e: ExprId) -> Option<i128> {
    let named = |n: &str| {
        let mut most: Option<i128> = None;
        for v in cx.model.values_assigned_to(n) {
            let v = cx.model.int_value(v?)?;
            most = Some(most.map_or(v, |m| m.max(v)));
        }
        most
    };
    cx.model.int_value_with(e, &named)
}
