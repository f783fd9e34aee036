//! Lock guards of Rust code: which calls take a guard of which lock, the
//! identity of a lock across functions, and the guards alive at each point
//! of a function (scope-based: a `let` guard lives to the end of its block
//! or `drop(guard)`, a temporary to the end of its statement, a scrutinee's
//! temporary through the body of its `if let`/`while let`/`match`/`for`).

use super::common;
use crate::context::FileCx;
use unsnarl_model::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `Mutex::lock`.
    Exclusive,
    /// `RwLock::read`.
    Read,
    /// `RwLock::write`.
    Write,
}

/// Where a lock lives, for telling two acquisitions of the same lock apart
/// from two acquisitions of different ones.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Root {
    /// A `static` (qualified name).
    Static,
    /// A field path under the method's `self`.
    SelfField,
    /// A field path under a parameter or local of a known type: the same
    /// identity may be two different instances.
    Typed,
    /// A local lock (or an `Arc` clone of one) of one function and the
    /// closures inside it.
    Local,
}

/// One guard-taking call.
#[derive(Clone, Debug)]
pub struct Acq {
    pub call: ExprId,
    pub span: Span,
    pub mode: Mode,
    /// The lock is async (`tokio::sync::Mutex`...): `.lock().await`.
    pub is_async: bool,
    /// The lock is reentrant (`parking_lot::ReentrantMutex`).
    pub reentrant: bool,
    /// Cross-function identity (`crate::STATE`, `crate::Db::inner.map`).
    pub id: Option<String>,
    pub root: Option<Root>,
    /// As written (`self.map`, `STATE`).
    pub text: String,
    /// The lock's type is known (not guessed from the method name).
    pub typed: bool,
}

/// The lock kind of a type, from the knowledge `lock` entries.
pub fn lock_kind<'a>(cx: &FileCx<'a>, ty: &str) -> Option<&'a str> {
    cx.kb.find(Effect::Lock, Some(ty), "")?.kind.as_deref()
}

/// The guard acquisition made by call `e`, if it is one: `lock`, `read`,
/// `write` (and `try_*` variants are not: they do not wait) on a
/// `Mutex`/`RwLock` (std, parking_lot, spin, tokio...), or, when the lock's
/// type is unknown, on a `static` or `self` field with no arguments.
pub fn acquisition(cx: &FileCx, e: ExprId) -> Option<Acq> {
    let c = cx.call(e)?;
    let method = c.name.as_str();
    if !matches!(
        method,
        "lock" | "read" | "write" | "lock_owned" | "read_owned" | "write_owned" | "blocking_lock"
    ) || !c.args.is_empty()
    {
        return None;
    }
    let recv = c.receiver?;
    let ty = cx.sema.type_of(recv);
    let kind = ty.and_then(|t| lock_kind(cx, t));
    let (id, root) = identity(cx, recv);
    let typed = kind.is_some();
    let kind = match kind {
        Some(k) => k,
        None => {
            // An unknown type: a guess from the method name, only for locks
            // with an identity (a static or a field), and never for a value
            // of a known non-lock type.
            if ty.is_some() || !matches!(root, Some(Root::Static | Root::SelfField)) {
                return None;
            }
            match method {
                "lock" => "mutex",
                _ => "rwlock",
            }
        }
    };
    let mode = match (kind, method) {
        ("mutex" | "async-mutex", "lock" | "lock_owned" | "blocking_lock") => Mode::Exclusive,
        ("rwlock" | "async-rwlock", "read" | "read_owned") => Mode::Read,
        ("rwlock" | "async-rwlock", "write" | "write_owned") => Mode::Write,
        _ => return None,
    };
    let is_async = kind.starts_with("async") && method != "blocking_lock";
    // An async lock is taken when its future is awaited, not when built
    // (`spawn(lock.read())` only creates the future).
    if is_async && !cx.is_awaited(e) {
        return None;
    }
    let reentrant = ty.is_some_and(|t| t.contains("Reentrant"));
    Some(Acq {
        call: e,
        span: cx.expr(e).span,
        mode,
        is_async,
        reentrant,
        id,
        root,
        text: cx
            .model
            .dotted(recv)
            .unwrap_or_else(|| common::text(cx, recv)),
        typed,
    })
}

/// The identity of a lock expression across functions.
pub fn identity(cx: &FileCx, recv: ExprId) -> (Option<String>, Option<Root>) {
    let recv = strip_refs(cx, recv);
    // A path of field accesses down to its root name.
    let mut fields = Vec::new();
    let mut cur = recv;
    loop {
        match &cx.expr(cur).kind {
            ExprKind::Attr { obj, name, .. } => {
                fields.push(name.clone());
                cur = strip_refs(cx, *obj);
            }
            ExprKind::Call(c)
                if c.receiver.is_some()
                    && matches!(c.name.as_str(), "as_ref" | "deref" | "clone") =>
            {
                cur = strip_refs(cx, c.receiver.expect("checked"));
            }
            _ => break,
        }
    }
    fields.reverse();
    let path = fields.join(".");
    match &cx.expr(cur).kind {
        ExprKind::Name { id, resolved } => {
            if id == "self" {
                let f = common::outermost(cx, cx.func_of(recv));
                let class = cx.func(f).class.clone();
                return match class {
                    Some(class) if !path.is_empty() => {
                        (Some(format!("{class}::{path}")), Some(Root::SelfField))
                    }
                    _ => (None, None),
                };
            }
            if let Some(r) = resolved
                && is_static_name(id)
            {
                let base = r.clone();
                let full = if path.is_empty() {
                    base
                } else {
                    format_compact!("{base}.{path}")
                };
                return (Some(full.to_string()), Some(Root::Static));
            }
            if !path.is_empty()
                && let Some(t) = cx.sema.type_of(cur)
                && lock_kind(cx, t).is_none()
                && !t.starts_with('(')
            {
                return (Some(format!("{t}::{path}")), Some(Root::Typed));
            }
            if path.is_empty() && resolved.is_none() {
                // A local lock: the same variable (or a clone of its `Arc`)
                // in the function and its closures.
                let outer = common::outermost(cx, cx.func_of(recv));
                let canon = canonical_local(cx, outer, id, 0);
                let q = &cx.func(outer).qualname;
                if !q.is_empty() {
                    return (Some(format!("{q}#{canon}")), Some(Root::Local));
                }
            }
            (None, None)
        }
        ExprKind::Path {
            resolved: Some(r), ..
        } => {
            let full = if path.is_empty() {
                r.clone()
            } else {
                format_compact!("{r}.{path}")
            };
            (Some(full.to_string()), Some(Root::Static))
        }
        _ => (None, None),
    }
}

/// The variable a local is a clone of: `let a2 = a.clone()`,
/// `let a2 = Arc::clone(&a)` → `a`.
fn canonical_local(cx: &FileCx, outer: FuncId, name: &str, depth: u32) -> String {
    if depth > 4 {
        return name.to_string();
    }
    let span = cx.func(outer).span;
    for st in &cx.model.stmts {
        if !span.contains(st.span) {
            continue;
        }
        let StmtKind::Assign {
            targets,
            value: Some(v),
            op: AssignOp::Declare { .. },
        } = &st.kind
        else {
            continue;
        };
        let Some(&t) = targets.first() else { continue };
        // `let a2 = ..` or `let (a2, b2) = (.., ..)`.
        let v = match (&cx.expr(t).kind, &cx.expr(*v).kind) {
            (
                ExprKind::Collection {
                    kind: CollKind::Tuple,
                    elems: ts,
                    ..
                },
                ExprKind::Collection {
                    kind: CollKind::Tuple,
                    elems: vs,
                    ..
                },
            ) if ts.len() == vs.len() => {
                match ts
                    .iter()
                    .position(|&x| common::binding_name(cx.model, x) == Some(name))
                {
                    Some(i) => vs[i],
                    None => continue,
                }
            }
            _ if common::binding_name(cx.model, t) == Some(name) => *v,
            _ => continue,
        };
        let Some(c) = cx.call(v) else { continue };
        let src = if c.name == "clone" {
            match c.receiver {
                Some(r) => Some(r),
                None => c.positional(0),
            }
        } else {
            None
        };
        if let Some(src) = src
            && let Some(n) = cx.model.name_of(strip_refs(cx, src))
            && n != name
        {
            return canonical_local(cx, outer, n, depth + 1);
        }
    }
    name.to_string()
}

fn strip_refs(cx: &FileCx, mut e: ExprId) -> ExprId {
    loop {
        e = cx.model.strip(e);
        match &cx.expr(e).kind {
            ExprKind::Unary {
                op: UnOp::Ref | UnOp::Deref,
                operand,
            } => e = *operand,
            _ => return e,
        }
    }
}

/// A name bound by a module-level (or block-level) `static`/`const` item:
/// a resolved name whose declaration is an item, not a local.
fn is_static_name(id: &str) -> bool {
    id.chars().next().is_some_and(|c| c.is_uppercase())
        && id
            .chars()
            .all(|c| c.is_uppercase() || c.is_ascii_digit() || c == '_')
}

/// A guard alive at some point.
#[derive(Clone, Debug)]
pub struct Held {
    pub acq: Acq,
    /// The binding holding it (`None` for a temporary).
    pub name: Option<String>,
}

/// What the walker reports.
pub trait Sink {
    /// A guard is about to be taken while `held` are alive.
    fn acquire(&mut self, _cx: &FileCx, _acq: &Acq, _held: &[Held]) {}
    /// A call (not an acquisition) is made while `held` are alive.
    fn call(&mut self, _cx: &FileCx, _call: ExprId, _held: &[Held]) {}
    /// An `.await` of `awaited` (or a `select!`, with `None`) suspends while
    /// `held` are alive.
    fn suspend(&mut self, _cx: &FileCx, _at: Span, _awaited: Option<ExprId>, _held: &[Held]) {}
}

/// Walks a function's body in execution order, tracking live guards.
/// Non-async closures passed to calls that do not spawn (iterator adapters,
/// `Option::map`...) run inline and are walked in place.
pub fn walk_fn(cx: &FileCx, f: FuncId, sink: &mut dyn Sink) {
    let mut w = Walker {
        cx,
        held: Vec::new(),
        sink,
        depth: 0,
    };
    let body = &cx.func(f).body;
    w.block(body);
}

struct Walker<'c, 'a, 's> {
    cx: &'c FileCx<'a>,
    held: Vec<Held>,
    sink: &'s mut dyn Sink,
    depth: u32,
}

impl Walker<'_, '_, '_> {
    fn block(&mut self, b: &Block) {
        let mark = self.held.len();
        for &s in b {
            self.stmt(s);
        }
        self.held.truncate(mark.min(self.held.len()));
    }

    fn stmt(&mut self, s: StmtId) {
        let cx = self.cx;
        match &cx.stmt(s).kind {
            StmtKind::Assign { targets, value, op } => {
                // `#[cfg(a)] let g = m.lock(); #[cfg(not(a))] let g = m.lock();`:
                // the second binding of the same name to the same lock is
                // the other cfg branch, not a second acquisition.
                if let (Some(v), AssignOp::Declare { .. }) = (value, op)
                    && let Some(acq) = bound_guard(cx, *v)
                    && let Some(name) = targets
                        .first()
                        .and_then(|&t| common::binding_name(cx.model, t))
                {
                    self.held
                        .retain(|h| !(h.name.as_deref() == Some(name) && h.acq.id == acq.id));
                }
                let mark = self.held.len();
                if let Some(v) = value {
                    self.expr(*v);
                }
                for &t in targets {
                    if !matches!(op, AssignOp::Declare { .. }) {
                        self.expr(t);
                    }
                }
                self.held.truncate(mark.min(self.held.len()));
                if let (Some(v), AssignOp::Declare { .. }) = (value, op)
                    && let Some(acq) = bound_guard(cx, *v)
                    && let Some(name) = targets
                        .first()
                        .and_then(|&t| common::binding_name(cx.model, t))
                {
                    self.held.push(Held {
                        acq,
                        name: Some(name.to_string()),
                    });
                }
                if let (Some(v), AssignOp::Plain) = (value, op)
                    && let Some(name) = targets.first().and_then(|&t| cx.model.name_of(t))
                {
                    // `g = cv.wait(g).unwrap()`: still the same guard;
                    // `g = other.lock()`: a new one replaces it.
                    if let Some(acq) = bound_guard(cx, *v) {
                        self.held.retain(|h| h.name.as_deref() != Some(name));
                        self.held.push(Held {
                            acq,
                            name: Some(name.to_string()),
                        });
                    }
                }
            }
            StmtKind::Expr(e) | StmtKind::Tail(e) | StmtKind::Return(Some(e)) => {
                let mark = self.held.len();
                self.expr(*e);
                self.held.truncate(mark.min(self.held.len()));
            }
            StmtKind::If { cond, then, orelse } => {
                let mark = self.held.len();
                match &cx.expr(*cond).kind {
                    ExprKind::Let { value, .. } => {
                        self.expr(*value);
                        self.block(then);
                        self.held.truncate(mark.min(self.held.len()));
                    }
                    _ => {
                        self.expr(*cond);
                        self.held.truncate(mark.min(self.held.len()));
                        self.block(then);
                    }
                }
                self.block(orelse);
            }
            StmtKind::While { cond, body, .. } => {
                let mark = self.held.len();
                match &cx.expr(*cond).kind {
                    ExprKind::Let { value, .. } => {
                        self.expr(*value);
                        self.block(body);
                    }
                    _ => {
                        self.expr(*cond);
                        self.held.truncate(mark.min(self.held.len()));
                        self.block(body);
                    }
                }
                self.held.truncate(mark.min(self.held.len()));
            }
            StmtKind::For { iter, body, .. } => {
                let mark = self.held.len();
                self.expr(*iter);
                self.block(body);
                self.held.truncate(mark.min(self.held.len()));
            }
            StmtKind::Loop { body } | StmtKind::Block(body) => self.block(body),
            StmtKind::Switch { subject, cases } => {
                let mark = self.held.len();
                if let Some(sub) = subject {
                    self.expr(*sub);
                }
                for c in cases {
                    self.block(&c.body);
                }
                self.held.truncate(mark.min(self.held.len()));
            }
            StmtKind::Select { arms, .. } => {
                for arm in arms {
                    if let ArmKind::Future { future, .. } = &arm.kind {
                        let mark = self.held.len();
                        self.expr(*future);
                        self.held.truncate(mark.min(self.held.len()));
                    }
                }
                let span = cx.stmt(s).span;
                let mut any = false;
                for arm in arms {
                    if let ArmKind::Future { future, .. } = &arm.kind {
                        self.sink.suspend(cx, span, Some(*future), &self.held);
                        any = true;
                    }
                }
                if !any {
                    self.sink.suspend(cx, span, None, &self.held);
                }
                for arm in arms {
                    self.block(&arm.body);
                }
            }
            StmtKind::Try {
                body,
                handlers,
                orelse,
                finally,
            } => {
                self.block(body);
                for h in handlers {
                    self.block(&h.body);
                }
                self.block(orelse);
                if let Some(f) = finally {
                    self.block(f);
                }
            }
            StmtKind::With { body, .. } => self.block(body),
            _ => {}
        }
    }

    fn expr(&mut self, e: ExprId) {
        if self.depth > 64 {
            return;
        }
        self.depth += 1;
        self.expr_inner(e);
        self.depth -= 1;
    }

    fn expr_inner(&mut self, e: ExprId) {
        let cx = self.cx;
        match &cx.expr(e).kind {
            ExprKind::Block(b) => {
                // A block expression: its `let`s end with it, its tail's
                // temporaries live on in the enclosing statement.
                self.block(b);
            }
            ExprKind::Closure(f) => {
                // Run inline when it is an argument of a call that does not
                // spawn or offload it.
                let func = cx.func(*f);
                if func.is_async {
                    return;
                }
                if let Some(site) = common::closure_call_site(cx, *f) {
                    let c = cx.call(site).expect("a call");
                    let spawns = cx.effect(c, Effect::Spawn).is_some()
                        || cx.effect(c, Effect::ScopedSpawn).is_some()
                        || cx.effect(c, Effect::Offload).is_some()
                        || matches!(
                            c.name.as_str(),
                            "spawn" | "spawn_blocking" | "spawn_local" | "with" | "call_once"
                        );
                    if !spawns {
                        let body = func.body.clone();
                        self.block(&body);
                    }
                }
            }
            ExprKind::Await(inner) => {
                self.expr(*inner);
                let span = cx.expr(e).span;
                self.sink.suspend(cx, span, Some(*inner), &self.held);
            }
            ExprKind::Call(c) => {
                if let Some(r) = c.receiver {
                    self.expr(r);
                } else {
                    self.expr(c.func);
                }
                for a in &c.args {
                    self.expr(a.value);
                }
                // `drop(guard)` / `std::mem::drop(guard)`.
                if c.receiver.is_none()
                    && c.name == "drop"
                    && let Some(n) = c.positional(0).and_then(|a| cx.model.name_of(a))
                {
                    if let Some(i) = self.held.iter().rposition(|h| h.name.as_deref() == Some(n)) {
                        self.held.remove(i);
                    }
                    return;
                }
                // A guard passed by value is moved away (`consume(guard)`).
                for (k, a) in c.args.iter().enumerate() {
                    if let Some(n) = cx.model.name_of(a.value)
                        && let Some(i) =
                            self.held.iter().rposition(|h| h.name.as_deref() == Some(n))
                    {
                        self.held.remove(i);
                    } else if let Some(i) = moved_temporary(cx, c, k, &self.held) {
                        self.held.remove(i);
                    }
                }
                if let Some(acq) = acquisition(cx, e) {
                    self.sink.acquire(cx, &acq, &self.held);
                    self.held.push(Held { acq, name: None });
                } else {
                    self.sink.call(cx, e, &self.held);
                    // `tokio::join!(a, b)`: each future is awaited here.
                    if is_join_macro(c) {
                        let span = cx.expr(e).span;
                        for a in &c.args {
                            self.sink.suspend(cx, span, Some(a.value), &self.held);
                        }
                    }
                }
            }
            _ => {
                let mut kids = Vec::new();
                unsnarl_model::walk::for_each_expr_child(cx.model, e, &mut |k| kids.push(k));
                for k in kids {
                    self.expr(k);
                }
            }
        }
    }
}

/// A temporary guard handed by value to a function of the file that drops
/// it (`self.inner(self.m.lock().unwrap())`, where `inner` calls
/// `drop(guard)` before locking again): the callee owns it from the call
/// on. Its index in `held`.
fn moved_temporary(cx: &FileCx, c: &Call, k: usize, held: &[Held]) -> Option<usize> {
    let arg = c.args.get(k)?.value;
    let moved = bound_guard(cx, arg)?;
    let i = held
        .iter()
        .rposition(|h| h.name.is_none() && h.acq.call == moved.call)?;
    let callee = cx.callee_in_file(c)?;
    let param = cx.param_receiving(callee, c, k)?;
    let drops = cx.body_exprs(callee).iter().any(|&e| {
        cx.call(e).is_some_and(|d| {
            d.receiver.is_none()
                && d.name == "drop"
                && d.positional(0).and_then(|x| cx.model.name_of(x)) == Some(param)
        })
    });
    drops.then_some(i)
}

/// The guard a `let` initializer binds, looking through `.unwrap()`,
/// `.expect(..)`, `?` and `.await` (so the binding *is* the guard).
pub fn bound_guard(cx: &FileCx, mut e: ExprId) -> Option<Acq> {
    for _ in 0..8 {
        e = cx.model.strip(e);
        if let Some(acq) = acquisition(cx, e) {
            return Some(acq);
        }
        match &cx.expr(e).kind {
            ExprKind::Try(inner) | ExprKind::Await(inner) => e = *inner,
            ExprKind::Call(c)
                if c.receiver.is_some()
                    && matches!(
                        c.name.as_str(),
                        "unwrap" | "expect" | "unwrap_or_else" | "unwrap_or_default"
                    ) =>
            {
                e = c.receiver?;
            }
            _ => return None,
        }
    }
    None
}

/// A short description of an acquisition for messages.
pub fn describe(acq: &Acq) -> String {
    let how = match acq.mode {
        Mode::Exclusive => "locks",
        Mode::Read => "read-locks",
        Mode::Write => "write-locks",
    };
    format!("{how} `{}`", acq.text)
}

/// An acquisition a function makes when it runs: directly or through calls
/// of functions of the same file.
#[derive(Clone, Debug)]
pub struct Reach {
    pub acq: Acq,
    /// The function that takes the lock.
    pub func: FuncId,
    /// The calls from the summarized function down to it (call span, callee
    /// qualname), outermost first.
    pub via: Vec<(Span, Str)>,
    /// Reached only through `self.method()` calls (or the lock is a static),
    /// so a `self` field lock is the very same instance the caller has.
    pub same_instance: bool,
}

/// Direct acquisitions and same-file calls of every function, and the
/// acquisitions each reaches (depth-limited).
pub struct LockSummaries {
    reach: Vec<Vec<Reach>>,
}

struct Collect {
    acqs: Vec<Acq>,
    calls: Vec<ExprId>,
}

impl Sink for Collect {
    fn acquire(&mut self, _cx: &FileCx, acq: &Acq, _held: &[Held]) {
        self.acqs.push(acq.clone());
    }
    fn call(&mut self, _cx: &FileCx, call: ExprId, _held: &[Held]) {
        self.calls.push(call);
    }
}

const MAX_VIA: usize = 4;

/// Per function: its direct acquisitions, and its calls of functions of
/// the file.
type Direct = Vec<(Vec<Acq>, Vec<(ExprId, FuncId)>)>;

impl LockSummaries {
    pub fn build(cx: &FileCx) -> LockSummaries {
        let n = cx.model.functions.len();
        let mut direct: Direct = Vec::with_capacity(n);
        for f in cx.model.function_ids() {
            let mut c = Collect {
                acqs: Vec::new(),
                calls: Vec::new(),
            };
            if cx.func(f).kind != FnKind::Module {
                walk_fn(cx, f, &mut c);
            }
            let calls = c
                .calls
                .iter()
                .filter_map(|&e| {
                    let call = cx.call(e)?;
                    let g = cx.callee_in_file(call)?;
                    (g != f).then_some((e, g))
                })
                .collect();
            direct.push((c.acqs, calls));
        }
        let mut reach: Vec<Option<Vec<Reach>>> = vec![None; n];
        for f in 0..n {
            compute(cx, f, &direct, &mut reach, &mut Vec::new());
        }
        LockSummaries {
            reach: reach.into_iter().map(Option::unwrap_or_default).collect(),
        }
    }

    /// What running `f` acquires.
    pub fn reach(&self, f: FuncId) -> &[Reach] {
        &self.reach[f.index()]
    }
}

fn compute(
    cx: &FileCx,
    f: usize,
    direct: &Direct,
    reach: &mut Vec<Option<Vec<Reach>>>,
    stack: &mut Vec<usize>,
) {
    if reach[f].is_some() || stack.contains(&f) || stack.len() > MAX_VIA {
        return;
    }
    stack.push(f);
    let mut out: Vec<Reach> = direct[f]
        .0
        .iter()
        .map(|a| Reach {
            acq: a.clone(),
            func: FuncId(f as u32),
            via: Vec::new(),
            same_instance: true,
        })
        .collect();
    for &(call, g) in &direct[f].1 {
        compute(cx, g.index(), direct, reach, stack);
        let Some(sub) = reach[g.index()].as_ref() else {
            continue;
        };
        let c = cx.call(call).expect("a call");
        let on_self = c
            .receiver
            .and_then(|r| cx.model.name_of(r))
            .is_some_and(|n| n == "self");
        let callee = cx.func(g).qualname.clone();
        for r in sub.iter().filter(|r| r.via.len() < MAX_VIA) {
            let mut via = vec![(cx.expr(call).span, callee.clone())];
            via.extend(r.via.iter().cloned());
            out.push(Reach {
                acq: r.acq.clone(),
                func: r.func,
                via,
                same_instance: r.same_instance && (on_self || r.acq.root == Some(Root::Static)),
            });
        }
    }
    stack.pop();
    reach[f] = Some(out);
}

/// Two guards of the same lock, or of two locks taken in order.
#[derive(Clone, Debug)]
pub struct Nesting {
    /// The function whose body nests them.
    pub func: FuncId,
    /// The guard already held.
    pub outer: Acq,
    /// The acquisition made while it is held.
    pub inner: Acq,
    /// Where the inner acquisition happens in `func`: the acquisition
    /// itself, or the call leading to it.
    pub at: Span,
    /// The calls down to the inner acquisition, when it is in a callee.
    pub via: Vec<(Span, Str)>,
    pub same_instance: bool,
    /// Identities of every guard held at that point.
    pub held_ids: Vec<String>,
}

struct NestSink<'s> {
    sums: &'s LockSummaries,
    func: FuncId,
    out: Vec<Nesting>,
}

impl NestSink<'_> {
    fn push(&mut self, held: &[Held], inner: &Acq, at: Span, via: Vec<(Span, Str)>, same: bool) {
        let held_ids: Vec<String> = held.iter().filter_map(|h| h.acq.id.clone()).collect();
        for h in held {
            if h.acq.id.is_none() || inner.id.is_none() {
                continue;
            }
            self.out.push(Nesting {
                func: self.func,
                outer: h.acq.clone(),
                inner: inner.clone(),
                at,
                via: via.clone(),
                same_instance: same,
                held_ids: held_ids.clone(),
            });
        }
    }
}

impl Sink for NestSink<'_> {
    fn acquire(&mut self, _cx: &FileCx, acq: &Acq, held: &[Held]) {
        self.push(held, acq, acq.span, Vec::new(), true);
    }
    fn call(&mut self, cx: &FileCx, call: ExprId, held: &[Held]) {
        if held.is_empty() {
            return;
        }
        let Some(c) = cx.call(call) else { return };
        let Some(g) = cx.callee_in_file(c) else {
            return;
        };
        if g == self.func {
            return;
        }
        let on_self = c
            .receiver
            .and_then(|r| cx.model.name_of(r))
            .is_some_and(|n| n == "self");
        let callee = cx.func(g).qualname.clone();
        let span = cx.expr(call).span;
        for r in self.sums.reach(g).to_vec() {
            let mut via = vec![(span, callee.clone())];
            via.extend(r.via.iter().cloned());
            let same = r.same_instance && (on_self || r.acq.root == Some(Root::Static));
            self.push(held, &r.acq, span, via, same);
        }
    }
}

/// Every nesting of two lock acquisitions in the file: a guard held while
/// another lock (or the same one) is taken, directly or in a callee.
pub fn nestings(cx: &FileCx) -> Vec<Nesting> {
    let sums = LockSummaries::build(cx);
    let mut out = Vec::new();
    for f in cx.model.function_ids() {
        if cx.func(f).kind == FnKind::Module || common::test_like(cx, f) {
            continue;
        }
        let mut sink = NestSink {
            sums: &sums,
            func: f,
            out: Vec::new(),
        };
        walk_fn(cx, f, &mut sink);
        out.extend(sink.out);
    }
    out
}

/// The name of a function for messages: its own name, or that of the
/// function a closure is in.
pub fn fn_label(cx: &FileCx, f: FuncId) -> String {
    let top = common::outermost(cx, f);
    let name = &cx.func(top).name;
    let base = match &cx.func(top).class {
        Some(c) => format!("{}::{name}", c.rsplit("::").next().unwrap_or(c)),
        None => name.to_string(),
    };
    if top == f {
        format!("`{base}`")
    } else {
        format!("a closure in `{base}`")
    }
}

/// `tokio::join!` / `try_join!` / `futures::join!`: a macro that awaits its
/// arguments.
pub fn is_join_macro(c: &Call) -> bool {
    c.is_macro
        && matches!(c.name.as_str(), "join" | "try_join")
        && c.target.as_deref().is_none_or(|t| {
            t.starts_with("tokio::")
                || t.starts_with("futures::")
                || t.starts_with("futures_util::")
        })
}
