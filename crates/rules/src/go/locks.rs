//! Mutex operations of Go code: which calls lock or unlock what, the set of
//! locks held along a path, and which locks a function of the file takes
//! (directly or through the calls it makes).

use super::common;
use super::flow::Flow;
use crate::context::FileCx;
use std::collections::HashMap;
use unsnarl_model::walk::{Child, Parent, exprs_under, for_each_stmt_child};
use unsnarl_model::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    Lock,
    RLock,
    Unlock,
    RUnlock,
}

impl OpKind {
    pub fn acquires(self) -> bool {
        matches!(self, OpKind::Lock | OpKind::RLock)
    }
    pub fn read(self) -> bool {
        matches!(self, OpKind::RLock | OpKind::RUnlock)
    }
}

/// A `Lock`/`RLock`/`Unlock`/`RUnlock` call on a mutex.
#[derive(Clone, Debug)]
pub struct LockOp {
    pub kind: OpKind,
    /// The mutex as written: `s.mu`, `mu`, `c` (an embedded mutex).
    pub instance: String,
    /// The mutex across functions: `<type>.mu` for a field of a value of a
    /// known type, `<module>.mu` for a package variable; `None` for a
    /// local mutex or an unknown root.
    pub class: Option<String>,
    /// For a mutex reached from the method's receiver: the path after it
    /// (`mu` for `s.mu`, empty for `s` itself).
    pub recv_path: Option<String>,
    pub call: ExprId,
    pub span: Span,
}

/// Whether some call of the file may take a lock (a [`lock_op`] that
/// acquires is a zero-argument `Lock`/`RLock` call). Without one no path of
/// any function holds a lock, directly or through a callee, and the rules
/// about held locks have nothing to walk.
pub fn file_takes_locks(cx: &FileCx) -> bool {
    cx.calls_named(&["Lock", "RLock"])
        .iter()
        .any(|(_, c)| c.args.is_empty())
}

/// The lock operation of a call expression, if it is one.
pub fn lock_op(cx: &FileCx, e: ExprId) -> Option<LockOp> {
    let c = cx.call(e)?;
    let kind = match c.name.as_str() {
        "Lock" => OpKind::Lock,
        "RLock" => OpKind::RLock,
        "Unlock" => OpKind::Unlock,
        "RUnlock" => OpKind::RUnlock,
        _ => return unlock_helper_call(cx, e),
    };
    if !c.args.is_empty() {
        return None;
    }
    // Any zero-argument Lock/Unlock method whose result is not used is
    // taken for a lock: sync's mutexes, embedded mutexes, lock wrappers.
    // (`unlock, err := fileLock.Lock()` is a different kind of lock: a
    // cross-process file lock meant to be held across I/O.)
    if matches!(kind, OpKind::Lock | OpKind::RLock)
        && !matches!(cx.tree.expr_parent(e), unsnarl_model::walk::Parent::Stmt(s)
            if matches!(cx.stmt(s).kind, StmtKind::Expr(_) | StmtKind::Defer(_)))
    {
        return None;
    }
    let recv = c.receiver?;
    let instance = cx.model.dotted(recv)?;
    let (class, recv_path) = classify(cx, cx.func_of(e), recv, &instance);
    Some(LockOp {
        kind,
        instance,
        class,
        recv_path,
        call: e,
        span: cx.expr(e).span,
    })
}

/// A call of a local unlock function: `unlock := unlockOnce(&srv.lock)`
/// (a helper given the mutex whose name says it unlocks) then `unlock()`,
/// or a local closure whose body unlocks (`doErr := func(err error) {
/// ...; mu.Unlock() }` then `doErr(err)`) — an unlock of that mutex.
fn unlock_helper_call(cx: &FileCx, e: ExprId) -> Option<LockOp> {
    let c = cx.call(e)?;
    if c.receiver.is_some() {
        return None;
    }
    let name = cx.model.name_of(c.func)?;
    let f = cx.func_of(e);
    let [(_, Some(value))] = common::bindings(cx, f, name)[..] else {
        return None;
    };
    let value = cx.model.strip(value);
    if let ExprKind::Closure(g) = cx.expr(value).kind {
        let op = cx
            .body_exprs(g)
            .iter()
            .filter_map(|&x| lock_op(cx, x))
            .find(|op| !op.kind.acquires())?;
        return Some(LockOp {
            call: e,
            span: cx.expr(e).span,
            ..op
        });
    }
    let helper = cx.call(value)?;
    if !c.args.is_empty() || !helper.name.to_ascii_lowercase().contains("unlock") {
        return None;
    }
    let [arg] = helper.args.as_slice() else {
        return None;
    };
    let ExprKind::Unary {
        op: UnOp::Ref,
        operand,
    } = cx.expr(cx.model.strip(arg.value)).kind
    else {
        return None;
    };
    let instance = cx.model.dotted(operand)?;
    let (class, recv_path) = classify(cx, f, operand, &instance);
    Some(LockOp {
        kind: OpKind::Unlock,
        instance,
        class,
        recv_path,
        call: e,
        span: cx.expr(e).span,
    })
}

/// The cross-function identity of a mutex expression: `<type of the
/// value holding it>.<field>`, the type itself for an embedded mutex, or
/// `<module>.<var>` for a package variable; plus the path from the method's
/// receiver when it starts there.
fn classify(
    cx: &FileCx,
    f: FuncId,
    recv: ExprId,
    instance: &str,
) -> (Option<String>, Option<String>) {
    let Some(root) = common::root_name(cx, recv) else {
        return (None, None);
    };
    let Some(root_name) = cx.model.name_of(root) else {
        return (None, None);
    };
    let rest = instance
        .strip_prefix(root_name)
        .unwrap_or("")
        .trim_start_matches('.');
    let top = common::outermost(cx, f);
    let on_receiver = receiver_of(cx, f).is_some_and(|(recv_name, _)| {
        recv_name == root_name
            && (f == top
                || common::name_scope(cx, f, root_name) == common::NameScope::Captured(top))
    });
    let recv_path = on_receiver.then(|| rest.to_string());
    let usable = |t: &str| t != "chan" && t != "map" && !t.starts_with("sync.");
    let class = match &cx.expr(cx.model.strip(recv)).kind {
        ExprKind::Attr { obj, name, .. } => match cx.sema.type_of(*obj) {
            Some(t) if usable(t) => Some(format!("{t}.{name}")),
            _ => None,
        },
        ExprKind::Name { .. } => match cx.sema.type_of(root) {
            Some(t) if usable(t) => Some(t.to_string()),
            _ => None,
        },
        _ => None,
    };
    let class = class.or_else(|| {
        (common::name_scope(cx, f, root_name) == common::NameScope::Package)
            .then(|| format!("{}.{}", cx.model.module, instance))
    });
    (class, recv_path)
}

/// The receiver name and type of the method `f` is (or is nested in).
pub fn receiver_of(cx: &FileCx, f: FuncId) -> Option<(String, String)> {
    let top = cx.func(common::outermost(cx, f));
    Some((
        top.receiver.clone()?.to_string(),
        top.class.clone()?.to_string(),
    ))
}

/// A lock held at some point of a path.
#[derive(Clone, Debug)]
pub struct Held {
    pub op: LockOp,
    /// `defer mu.Unlock()` was registered: held until the function returns.
    pub deferred: bool,
}

pub type HeldSet = Vec<Held>;

/// The held locks common to two paths.
pub fn join_held(a: &HeldSet, b: &HeldSet) -> HeldSet {
    a.iter()
        .filter(|h| {
            b.iter()
                .any(|g| g.op.instance == h.op.instance && g.op.kind.read() == h.op.kind.read())
        })
        .cloned()
        .collect()
}

/// The expressions a simple statement evaluates now, in source order (not
/// the deferred call or the goroutine's call of `defer`/`go`, whose
/// arguments only are evaluated now).
pub fn evaluated_exprs(cx: &FileCx, s: StmtId) -> Vec<ExprId> {
    let mut out = Vec::new();
    match &cx.stmt(s).kind {
        StmtKind::Go(e) | StmtKind::Defer(e) => {
            if let Some(c) = cx.call(*e) {
                for a in &c.args {
                    out.extend(exprs_under(cx.model, a.value));
                }
            }
        }
        _ => for_each_stmt_child(cx.model, s, &mut |ch| {
            if let Child::Expr(e) = ch {
                out.extend(exprs_under(cx.model, e));
            }
        }),
    }
    out
}

/// Applies the lock operations of a simple statement to `held`; calls
/// `on_acquire` for each acquisition with the locks held just before it.
pub fn apply(
    cx: &FileCx,
    s: StmtId,
    held: &mut HeldSet,
    on_acquire: &mut dyn FnMut(&LockOp, &HeldSet),
) {
    if let StmtKind::Defer(e) = &cx.stmt(s).kind {
        for op in deferred_unlocks(cx, *e) {
            for h in held.iter_mut() {
                if h.op.instance == op.instance {
                    h.deferred = true;
                }
            }
        }
        return;
    }
    for e in evaluated_exprs(cx, s) {
        apply_expr(cx, e, held, on_acquire);
    }
}

/// Applies one expression (a call) to `held`.
pub fn apply_expr(
    cx: &FileCx,
    e: ExprId,
    held: &mut HeldSet,
    on_acquire: &mut dyn FnMut(&LockOp, &HeldSet),
) {
    let Some(op) = lock_op(cx, e) else { return };
    if op.kind.acquires() {
        on_acquire(&op, held);
        held.push(Held {
            op,
            deferred: false,
        });
    } else if let Some(i) = held
        .iter()
        .rposition(|h| h.op.instance == op.instance && h.op.kind.read() == op.kind.read())
    {
        held.remove(i);
    } else if let Some(i) = held.iter().rposition(|h| h.op.instance == op.instance) {
        held.remove(i);
    }
}

/// The unlocks a deferred call performs: `defer mu.Unlock()` or
/// `defer func() { ...; mu.Unlock() }()`.
pub fn deferred_unlocks(cx: &FileCx, call: ExprId) -> Vec<LockOp> {
    let mut out = Vec::new();
    if let Some(op) = lock_op(cx, call) {
        if !op.kind.acquires() {
            out.push(op);
        }
        return out;
    }
    if let Some(f) = common::go_closure(cx, call) {
        for &e in cx.body_exprs(f) {
            if let Some(op) = lock_op(cx, e)
                && !op.kind.acquires()
            {
                out.push(op);
            }
        }
    }
    out
}

/// A lock a function takes, directly or through calls of functions of the
/// same file.
#[derive(Clone, Debug)]
pub struct Acquire {
    pub kind: OpKind,
    pub class: Option<String>,
    /// Path from the function's receiver (see [`LockOp::recv_path`]).
    pub recv_path: Option<String>,
    /// The instance as written in the function that locks it.
    pub instance: String,
    /// Calls from the summarized function down to the lock, outermost first.
    pub via: Vec<(Span, Str)>,
}

/// Which locks each function of the file takes (not counting closures run
/// as goroutines), computed on demand and memoized.
#[derive(Default)]
pub struct Summaries {
    memo: HashMap<FuncId, Vec<Acquire>>,
    active: Vec<FuncId>,
}

const MAX_DEPTH: usize = 6;

impl Summaries {
    pub fn acquires(&mut self, cx: &FileCx, f: FuncId) -> Vec<Acquire> {
        if let Some(v) = self.memo.get(&f) {
            return v.clone();
        }
        if self.active.contains(&f) || self.active.len() >= MAX_DEPTH {
            return Vec::new();
        }
        self.active.push(f);
        let mut out: Vec<Acquire> = Vec::new();
        let dropped = released_first(cx, f);
        for s in cx.body_stmts(f).iter().copied() {
            if matches!(cx.stmt(s).kind, StmtKind::Defer(_)) || flag_guarded(cx, f, s) {
                continue;
            }
            let exprs = match &cx.stmt(s).kind {
                StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => {
                    exprs_under(cx.model, *cond)
                }
                StmtKind::For { iter, .. } => exprs_under(cx.model, *iter),
                StmtKind::Switch {
                    subject: Some(e), ..
                } => exprs_under(cx.model, *e),
                StmtKind::Select { arms, .. } => arms
                    .iter()
                    .flat_map(|a| match &a.kind {
                        ArmKind::Recv { channel, .. } => exprs_under(cx.model, *channel),
                        ArmKind::Send { channel, value } => {
                            let mut v = exprs_under(cx.model, *channel);
                            v.extend(exprs_under(cx.model, *value));
                            v
                        }
                        _ => Vec::new(),
                    })
                    .collect(),
                StmtKind::Expr(_)
                | StmtKind::Assign { .. }
                | StmtKind::Return(_)
                | StmtKind::Go(_) => evaluated_exprs(cx, s),
                _ => Vec::new(),
            };
            for e in exprs {
                if let Some(op) = lock_op(cx, e) {
                    if op.kind.acquires()
                        && !dropped.contains(&op.instance)
                        && !nil_guarded(cx, s, &op.instance)
                    {
                        out.push(Acquire {
                            kind: op.kind,
                            class: op.class.clone(),
                            recv_path: op.recv_path.clone(),
                            instance: op.instance.clone(),
                            via: Vec::new(),
                        });
                    }
                    continue;
                }
                let Some(c) = cx.call(e) else { continue };
                let Some(g) = cx.callee_in_file(c) else {
                    continue;
                };
                if g == f {
                    continue;
                }
                let recv_name = receiver_of(cx, f).map(|(rn, _)| rn);
                let on_recv = c
                    .receiver
                    .and_then(|r| cx.model.name_of(r))
                    .is_some_and(|n| recv_name.as_deref() == Some(n));
                for a in self.acquires(cx, g) {
                    // A callee's lock of a mutex this function let go of
                    // first happens while it is released.
                    let seen_here = match (&a.recv_path, &recv_name) {
                        (Some(p), Some(rn)) if on_recv && p.is_empty() => Some(rn.to_string()),
                        (Some(p), Some(rn)) if on_recv => Some(format!("{rn}.{p}")),
                        _ => None,
                    };
                    if seen_here.is_some_and(|i| dropped.contains(&i)) {
                        continue;
                    }
                    let mut via = vec![(cx.expr(e).span, cx.func(g).name.clone())];
                    via.extend(a.via.iter().cloned());
                    out.push(Acquire {
                        recv_path: if on_recv { a.recv_path.clone() } else { None },
                        via,
                        ..a
                    });
                }
            }
        }
        self.active.pop();
        self.memo.insert(f, out.clone());
        out
    }
}

/// Mutexes a function unlocks before it first locks them: it expects them
/// held on entry and drops them for a while (`mu.Unlock(); ...;
/// mu.Lock()`), so its re-lock is no new acquisition for its callers.
pub fn released_first(cx: &FileCx, f: FuncId) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for &e in cx.body_exprs(f) {
        if let Some(op) = lock_op(cx, e)
            && !seen.contains(&op.instance)
        {
            if !op.kind.acquires() {
                out.push(op.instance.clone());
            }
            seen.push(op.instance);
        }
    }
    out
}

/// A statement under an `if` on a boolean parameter (`if lock { mu.Lock()
/// }`): callers choose whether it locks, so it is left out of summaries.
fn flag_guarded(cx: &FileCx, f: FuncId, s: StmtId) -> bool {
    let flags: Vec<&str> = cx
        .func(f)
        .params
        .iter()
        .filter(|p| p.ty.as_ref().is_some_and(|t| t.text == "bool"))
        .map(|p| p.name.as_str())
        .collect();
    if flags.is_empty() {
        return false;
    }
    cx.tree.stmt_ancestors(s).any(|a| match &cx.stmt(a).kind {
        StmtKind::If { cond, .. } => exprs_under(cx.model, *cond)
            .into_iter()
            .any(|e| cx.model.name_of(e).is_some_and(|n| flags.contains(&n))),
        _ => false,
    })
}

/// A lock taken only when the mutex itself is nil (`if n.mu == nil {
/// n.mu.RLock() }`): a nil `*sync.Mutex` panics on `Lock`, so the branch
/// is dead for any mutex that exists, and callers holding it never see
/// this lock.
fn nil_guarded(cx: &FileCx, s: StmtId, instance: &str) -> bool {
    cx.tree.stmt_ancestors(s).any(|a| {
        matches!(&cx.stmt(a).kind, StmtKind::If { cond, then, .. }
            if then.iter().any(|&t| t == s || cx.tree.stmt_ancestors(s).any(|x| x == t))
                && matches!(&cx.expr(*cond).kind, ExprKind::Binary { op: BinOp::Eq, left, right }
                    if cx.model.dotted(*left).as_deref() == Some(instance)
                        && matches!(cx.model.literal(*right), Some(Lit::Null))))
    })
}

/// The function hands the mutex's unlock to other code, so a second `Lock`
/// waits for that hand-off on purpose (a mutex used as a one-shot signal):
/// a goroutine it starts unlocks it, a callback it stores or passes on
/// unlocks it (`op.replyFunc = func(...) { defer mu.Unlock(); ... }`), or
/// it gives away the method value itself (`srv.NotifyStarted = mu.Unlock`).
/// The other code is not the function holding the lock, nor one it runs
/// inside: a callback that locks twice itself (`b.RunParallel(func(...) {
/// mu.RLock(); mu.RLock() ...})`) hands nothing off.
fn handed_off(cx: &FileCx, f: FuncId, instance: &str) -> bool {
    let top = common::outermost(cx, f);
    let funcs = cx.with_nested(top);
    let unlocks =
        |e: ExprId| lock_op(cx, e).is_some_and(|o| !o.kind.acquires() && o.instance == instance);
    let encloses_f =
        |g: FuncId| std::iter::successors(Some(f), |&h| cx.func(h).parent).any(|h| h == g);
    funcs.iter().skip(1).any(|&g| {
        !encloses_f(g)
            && (common::runs_in_goroutine(cx, g) || given_away(cx, g))
            && cx
                .with_nested(g)
                .into_iter()
                .any(|h| cx.body_exprs(h).iter().any(|&e| unlocks(e)))
    }) || funcs.iter().any(|&g| {
        cx.body_exprs(g)
            .iter()
            .any(|&e| is_unlock_method_value(cx, e, instance))
    })
}

/// A closure passed as an argument, stored in a field, an element or a
/// literal, or returned: code other than this function decides when it
/// runs. Not one called on the spot (`defer func() {...}()`) or bound to a
/// local name (a local helper: [`unlock_helper_call`] follows its calls).
fn given_away(cx: &FileCx, g: FuncId) -> bool {
    let Parent::Expr(site) = cx.tree.func_site(g) else {
        return false;
    };
    match cx.tree.expr_parent(site) {
        Parent::Expr(p) => cx.call(p).is_none_or(|c| c.func != site),
        Parent::Stmt(s) => match &cx.stmt(s).kind {
            StmtKind::Assign { targets, .. } => {
                targets.iter().any(|&t| cx.model.name_of(t).is_none())
            }
            StmtKind::Return(_) => true,
            _ => false,
        },
        _ => false,
    }
}

/// `mu.Unlock` as a value, not called: a function that releases `mu`
/// whenever its new owner calls it.
fn is_unlock_method_value(cx: &FileCx, e: ExprId, instance: &str) -> bool {
    let ExprKind::Attr { obj, name, .. } = &cx.expr(e).kind else {
        return false;
    };
    matches!(name.as_str(), "Unlock" | "RUnlock")
        && cx.model.dotted(*obj).as_deref() == Some(instance)
        && !matches!(cx.tree.expr_parent(e), Parent::Expr(p)
            if cx.call(p).is_some_and(|c| c.func == e))
}

/// Two acquisitions of the same mutex instance on one path: a
/// non-reentrant re-lock, or a recursive read lock.
#[derive(Clone, Debug)]
pub struct Reentry {
    /// Where the second acquisition happens (a Lock call, or the call of a
    /// function of the file that locks).
    pub at: Span,
    pub instance: String,
    /// The first acquisition (still held).
    pub held_at: Span,
    pub held_kind: OpKind,
    pub kind: OpKind,
    /// For a re-lock through calls: the calls, outermost first.
    pub via: Vec<(Span, Str)>,
}

/// "While holding `from`, `to` is acquired": an edge of the lock graph.
#[derive(Clone, Debug)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub func: FuncId,
    pub held_at: Span,
    pub at: Span,
    pub via: Vec<(Span, Str)>,
}

/// Walks every function of the file, collecting lock re-entries and the
/// edges of the lock graph (through calls of functions of the file).
/// The receiver of the call at `e` is a loop variable of a `range` that
/// started after the lock at `held_at` was taken (`c.Lock(); for _, c :=
/// range c.conns { c.Close() }`): the same name, another value.
fn rebound_since(cx: &FileCx, e: ExprId, held_at: Span) -> bool {
    let Some(root) = cx
        .call(e)
        .and_then(|c| c.receiver)
        .and_then(|r| cx.model.dotted(r))
        .map(|d| d.split('.').next().unwrap_or_default().to_string())
    else {
        return false;
    };
    cx.enclosing_stmts(e).into_iter().any(|s| {
        let st = cx.stmt(s);
        matches!(st.kind, StmtKind::For { target: Some(t), .. }
            if !(st.span.start <= held_at.start && held_at.end <= st.span.end)
                && common::names_in_target(cx, t).contains(&root.as_str()))
    })
}

/// The lock belongs to a value the statement just before built
/// (`upv = &usagePoolVal{refs: 1}; upv.Lock()`, or `new(T)`): no other
/// goroutine can see it yet, so taking it never waits and orders nothing.
fn just_built(cx: &FileCx, op: &LockOp) -> bool {
    let Some(root) = op.instance.split('.').next() else {
        return false;
    };
    let Some(prev) = cx
        .tree
        .enclosing_stmt(op.call)
        .and_then(|s| crate::util::prev_stmt(cx, s))
    else {
        return false;
    };
    let StmtKind::Assign {
        targets,
        value: Some(v),
        ..
    } = &cx.stmt(prev).kind
    else {
        return false;
    };
    let mut v = cx.model.strip(*v);
    if let ExprKind::Unary {
        op: UnOp::Ref,
        operand,
    } = cx.expr(v).kind
    {
        v = cx.model.strip(operand);
    }
    let built = matches!(cx.expr(v).kind, ExprKind::Collection { .. })
        || cx
            .call(v)
            .is_some_and(|c| c.target.as_deref() == Some("new") || c.name == "new");
    built && targets.len() == 1 && cx.model.name_of(targets[0]) == Some(root)
}

pub fn lock_graph(cx: &FileCx) -> (Vec<Reentry>, Vec<Edge>) {
    if !file_takes_locks(cx) {
        return (Vec::new(), Vec::new());
    }
    let mut sums = Summaries::default();
    let mut g = GraphFlow {
        sums: &mut sums,
        func: FuncId(0),
        reentries: Vec::new(),
        edges: Vec::new(),
    };
    for f in cx.model.function_ids() {
        if f.0 == 0 {
            continue;
        }
        g.func = f;
        super::flow::run_function(cx, &mut g, &cx.func(f).body, HeldSet::new());
    }
    (g.reentries, g.edges)
}

struct GraphFlow<'s> {
    sums: &'s mut Summaries,
    func: FuncId,
    reentries: Vec<Reentry>,
    edges: Vec<Edge>,
}

impl GraphFlow<'_> {
    fn acquire(&mut self, cx: &FileCx, op: &LockOp, held: &HeldSet) {
        for h in held {
            if h.op.instance == op.instance {
                if handed_off(cx, self.func, &op.instance) {
                    continue;
                }
                self.reentries.push(Reentry {
                    at: op.span,
                    instance: op.instance.clone(),
                    held_at: h.op.span,
                    held_kind: h.op.kind,
                    kind: op.kind,
                    via: Vec::new(),
                });
            } else if let (Some(a), Some(b)) = (&h.op.class, &op.class)
                && a != b
                && !just_built(cx, op)
            {
                self.edges.push(Edge {
                    from: a.clone(),
                    to: b.clone(),
                    func: self.func,
                    held_at: h.op.span,
                    at: op.span,
                    via: Vec::new(),
                });
            }
        }
    }

    /// A call of a function of the file while holding locks.
    fn call(&mut self, cx: &FileCx, e: ExprId, held: &HeldSet) {
        if held.is_empty() {
            return;
        }
        let Some(c) = cx.call(e) else { return };
        let Some(g) = cx.callee_in_file(c) else {
            return;
        };
        let recv = c.receiver.and_then(|r| cx.model.dotted(r));
        for a in self.sums.acquires(cx, g) {
            let mut via = vec![(cx.expr(e).span, cx.func(g).name.clone())];
            via.extend(a.via.iter().cloned());
            // The instance the callee locks, seen from here.
            let instance = match (&a.recv_path, &recv) {
                (Some(p), Some(r)) if p.is_empty() => Some(r.clone()),
                (Some(p), Some(r)) => Some(format!("{r}.{p}")),
                (None, _)
                    if a.class.as_deref().is_some_and(|c| {
                        c.strip_prefix(cx.model.module.as_str())
                            .and_then(|r| r.strip_prefix('.'))
                            == Some(a.instance.as_str())
                    }) =>
                {
                    // A package-level mutex: the same everywhere.
                    Some(a.instance.clone())
                }
                _ => None,
            };
            for h in held {
                if instance.as_deref() == Some(h.op.instance.as_str())
                    && !rebound_since(cx, e, h.op.span)
                {
                    // Long call chains are often cut by conditions we do
                    // not follow; report direct and one-hop re-locks.
                    if via.len() > 2 {
                        continue;
                    }
                    self.reentries.push(Reentry {
                        at: cx.expr(e).span,
                        instance: h.op.instance.clone(),
                        held_at: h.op.span,
                        held_kind: h.op.kind,
                        kind: a.kind,
                        via: via.clone(),
                    });
                } else if let (Some(x), Some(y)) = (&h.op.class, &a.class)
                    && x != y
                    && via.len() <= 3
                {
                    self.edges.push(Edge {
                        from: x.clone(),
                        to: y.clone(),
                        func: self.func,
                        held_at: h.op.span,
                        at: cx.expr(e).span,
                        via: via.clone(),
                    });
                }
            }
        }
    }

    fn exprs(&mut self, cx: &FileCx, exprs: Vec<ExprId>, st: &mut HeldSet) {
        for e in exprs {
            if let Some(op) = lock_op(cx, e) {
                if op.kind.acquires() {
                    self.acquire(cx, &op, st);
                }
                apply_expr(cx, e, st, &mut |_, _| {});
            } else {
                self.call(cx, e, st);
            }
        }
    }
}

impl Flow for GraphFlow<'_> {
    type S = HeldSet;
    fn simple(&mut self, cx: &FileCx, s: StmtId, st: &mut HeldSet) {
        if matches!(cx.stmt(s).kind, StmtKind::Defer(_)) {
            apply(cx, s, st, &mut |_, _| {});
            return;
        }
        let exprs = evaluated_exprs(cx, s);
        self.exprs(cx, exprs, st);
    }
    fn cond(&mut self, cx: &FileCx, e: ExprId, st: &mut HeldSet) {
        let exprs = exprs_under(cx.model, e);
        self.exprs(cx, exprs, st);
    }
    fn join(&self, a: &HeldSet, b: &HeldSet) -> HeldSet {
        join_held(a, b)
    }
}
