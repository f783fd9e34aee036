//! Questions the Python rules keep asking: is this shared state, is this
//! await under a deadline, is this a sleep, which lock is this, who uses
//! this variable.

use crate::context::FileCx;
pub use crate::util::{containing_block, next_stmt, stmts_after};
use std::collections::HashSet;
use unsnarl_model::walk::{Parent, Visitor, walk_block};
use unsnarl_model::*;

/// Whether a sync-over-async call blocks where it is made: always, but for
/// a wrapper factory (`kind = "wrapper"`: `async_to_sync(fn)`), which only
/// builds a sync function and blocks when that is called, here only if it
/// is called on the spot (`async_to_sync(fn)(x)`).
pub fn bridges_here(cx: &FileCx, id: ExprId, entry: &Entry) -> bool {
    entry.kind.as_deref() != Some("wrapper")
        || matches!(cx.tree.expr_parent(id), Parent::Expr(p)
            if cx.call(p).is_some_and(|c| c.func == id))
}

/// The sleeps [`sleep_arg`] knows, by resolved target.
pub const SLEEPS: &[&str] = &[
    "time.sleep",
    "asyncio.sleep",
    "asyncio.tasks.sleep",
    "trio.sleep",
    "anyio.sleep",
    "gevent.sleep",
    "eventlet.sleep",
];

/// `time.sleep`, `asyncio.sleep`, `trio.sleep`, `anyio.sleep`: the call's
/// duration argument (`None` when there is none) if `c` is a sleep.
pub fn sleep_arg(c: &Call) -> Option<Option<ExprId>> {
    let t = c.target.as_deref()?;
    SLEEPS.contains(&t).then(|| {
        c.positional(0).or_else(|| {
            c.kwarg("delay")
                .or_else(|| c.kwarg("seconds"))
                .or_else(|| c.kwarg("secs"))
        })
    })
}

/// True when the call is a sleep of a literal zero (a yield, not a wait).
pub fn is_zero_sleep(cx: &FileCx, c: &Call) -> bool {
    match sleep_arg(c) {
        Some(None) => c.target.as_deref() != Some("time.sleep"),
        Some(Some(a)) => match cx.model.literal(a) {
            Some(Lit::Int(0)) => true,
            Some(Lit::Float(f)) => *f == 0.0,
            _ => false,
        },
        None => false,
    }
}

/// True when a call builds a deadline scope (knowledge `deadline`) with a
/// real deadline (`asyncio.timeout(None)` has none).
pub fn is_deadline_scope(cx: &FileCx, ctx: ExprId) -> bool {
    let Some(c) = cx.call(cx.model.strip(ctx)) else {
        return false;
    };
    let Some(t) = c.target.as_deref() else {
        // `async with timeout(5):` from an unknown import.
        return matches!(
            c.name.as_str(),
            "fail_after"
                | "move_on_after"
                | "timeout"
                | "fail_at"
                | "move_on_at"
                | "Timeout"
                | "timeout_after"
        ) && c.positional(0).is_some_and(|a| !is_none(cx, a));
    };
    if let Some(en) = cx.effect(c, Effect::Deadline) {
        // A user's entry names neither: the duration comes first.
        let arg = en.arg.or(en.keyword.is_none().then_some(0));
        return (arg.and_then(|i| c.positional(i)))
            .or_else(|| en.keyword.as_deref().and_then(|k| c.kwarg(k)))
            .is_some_and(|a| !is_none(cx, a));
    }
    // `from .utils import asyncio_timeout`, where `utils` picks
    // `asyncio.timeout` or `async_timeout.timeout` by Python version: a
    // context manager of the project named as a timeout, given a duration.
    let last = t.rsplit('.').next().unwrap_or(t);
    (last == "timeout" || last.ends_with("_timeout"))
        && !t.starts_with("asyncio.")
        && c.positional(0).is_some_and(|a| !is_none(cx, a))
}

pub fn is_none(cx: &FileCx, e: ExprId) -> bool {
    matches!(cx.model.literal(e), Some(Lit::Null))
}

/// True when an expression runs under a deadline: inside a timeout scope of
/// its own function, or wrapped in `asyncio.wait_for(..., t)` /
/// `asyncio.shield(...)` (when `shield_counts`).
pub fn under_deadline(cx: &FileCx, e: ExprId, shield_counts: bool) -> bool {
    for a in cx.tree.expr_ancestors(e) {
        if let Some(c) = cx.call(a) {
            match c.target.as_deref() {
                Some("asyncio.wait_for" | "asyncio.tasks.wait_for" | "anyio.fail_after") => {
                    let t = c.positional(1).or_else(|| c.kwarg("timeout"));
                    if t.is_some_and(|t| !is_none(cx, t)) {
                        return true;
                    }
                }
                Some("asyncio.shield") if shield_counts => return true,
                _ => {}
            }
        }
    }
    cx.enclosing_stmts(e)
        .into_iter()
        .any(|s| match &cx.stmt(s).kind {
            StmtKind::With { items, .. } => items
                .iter()
                .any(|it| is_deadline_scope(cx, it.ctx) && !cx.contains(it.ctx, e)),
            _ => false,
        })
}

/// The functions nested (at any depth) in `f`, `f` included.
pub fn func_and_nested(cx: &FileCx, f: FuncId) -> HashSet<FuncId> {
    let mut out = HashSet::new();
    out.insert(f);
    for g in cx.model.function_ids() {
        if cx.tree.func_ancestors(cx.model, g).any(|a| a == f) {
            out.insert(g);
        }
    }
    out
}

/// Every expression of the given functions, in id order.
pub fn exprs_of(cx: &FileCx, funcs: &HashSet<FuncId>) -> Vec<ExprId> {
    (0..cx.model.exprs.len() as u32)
        .map(ExprId)
        .filter(|&e| {
            !matches!(cx.tree.expr_parent(e), Parent::Detached) && funcs.contains(&cx.func_of(e))
        })
        .collect()
}

/// The receiver name (`self`) of `f` or of the nearest enclosing method.
pub fn receiver_of<'a>(cx: &FileCx<'a>, f: FuncId) -> Option<&'a str> {
    cx.tree
        .func_ancestors(cx.model, f)
        .find_map(|g| cx.func(g).receiver.as_deref())
}

/// The class whose method `f` is (or is nested in).
pub fn class_of<'a>(cx: &FileCx<'a>, f: FuncId) -> Option<&'a str> {
    cx.tree
        .func_ancestors(cx.model, f)
        .find_map(|g| cx.func(g).class.as_deref())
}

/// Names assigned at module level (module variables), from the module's
/// top-level statements (also under `if`/`try`).
pub fn module_vars(m: &FileModel) -> HashSet<String> {
    struct V(HashSet<String>);
    impl Visitor for V {
        fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
            match &m.stmt(id).kind {
                StmtKind::Assign { targets, .. } => {
                    for &t in targets {
                        collect_target_names(m, t, &mut self.0);
                    }
                    false
                }
                StmtKind::If { .. } | StmtKind::Try { .. } | StmtKind::Block(_) => true,
                _ => false,
            }
        }
    }
    let mut v = V(HashSet::new());
    walk_block(m, &m.functions[0].body, &mut v);
    v.0
}

/// The names an assignment target binds (`client`, `client, index`,
/// `first, *rest`), added to `out`.
pub(crate) fn collect_target_names(m: &FileModel, t: ExprId, out: &mut HashSet<String>) {
    match &m.expr(t).kind {
        ExprKind::Name { id, .. } => {
            out.insert(id.to_string());
        }
        ExprKind::Collection { elems, .. } => {
            for &e in elems {
                collect_target_names(m, e, out);
            }
        }
        ExprKind::Spread(e) => collect_target_names(m, *e, out),
        _ => {}
    }
}

/// Shared state an expression names: a module variable (`cache`, as
/// `"cache"`) seen from a function, or an attribute of the method's
/// receiver (`self.cache`, as `"self.cache"`). Subscripts are looked
/// through (`cache[k]` is `cache`).
pub fn shared_state(cx: &FileCx, globals: &HashSet<String>, e: ExprId) -> Option<String> {
    let e = cx.model.strip(e);
    match &cx.expr(e).kind {
        ExprKind::Index { obj, .. } => shared_state(cx, globals, *obj),
        ExprKind::Name { id, resolved } => {
            let f = cx.func_of(e);
            if f.0 == 0 {
                return None;
            }
            let module_name = if cx.model.module.is_empty() {
                id.clone()
            } else {
                format_compact!("{}.{id}", cx.model.module)
            };
            (globals.contains(id.as_str()) && resolved.as_deref() == Some(module_name.as_str()))
                .then(|| id.clone())
                .map(Into::into)
        }
        ExprKind::Attr { obj, name, .. } => {
            let recv = receiver_of(cx, cx.func_of(e))?;
            (cx.model.name_of(*obj) == Some(recv)).then(|| format!("{recv}.{name}"))
        }
        _ => None,
    }
}

/// A lock taken with `with`/`async with`: a stable identity (`mod.lock`,
/// `Class.attr`, or the dotted text) and its kind from the knowledge table.
pub struct LockRef {
    pub key: String,
    pub display: String,
    pub kind: String,
}

/// The lock kind of a value (a `with` item, a receiver), from its type and
/// the knowledge table.
pub fn lock_kind<'a>(cx: &FileCx<'a>, e: ExprId) -> Option<&'a str> {
    let ty = cx.sema.type_of(e)?;
    cx.kb.find(Effect::Lock, Some(ty), "")?.kind.as_deref()
}

/// The spans of the `async with` statements of `block` (nested ones
/// included) whose every item is a lock or semaphore: entering one waits
/// for a turn and fails only by cancellation.
pub fn lock_entries(cx: &FileCx, block: &Block) -> Vec<Span> {
    unsnarl_model::walk::stmts_in_block(cx.model, block)
        .into_iter()
        .filter(|&s| {
            matches!(&cx.stmt(s).kind, StmtKind::With { is_async: true, items, .. }
                if items.iter().all(|it| lock_kind(cx, cx.model.strip(it.ctx)).is_some()))
        })
        .map(|s| cx.stmt(s).span)
        .collect()
}

pub fn lock_ref(cx: &FileCx, ctx: ExprId, f: FuncId) -> Option<LockRef> {
    let ctx = cx.model.strip(ctx);
    let kind = lock_kind(cx, ctx)?.to_string();
    let display = cx.model.dotted(ctx)?;
    let key = match &cx.expr(ctx).kind {
        ExprKind::Name {
            resolved: Some(r), ..
        } => r.clone(),
        ExprKind::Attr { obj, name, .. } => {
            match (receiver_of(cx, f), class_of(cx, f), cx.model.name_of(*obj)) {
                (Some(r), Some(c), Some(o)) if r == o => format_compact!("{c}.{name}"),
                _ => display.clone().into(),
            }
        }
        _ => display.clone().into(),
    };
    Some(LockRef {
        key: key.to_string(),
        display,
        kind,
    })
}

/// An `acquire` that only tries (`acquire(blocking=False)`,
/// `acquire(False)`, `acquire(timeout=0)`): it answers "held" at once
/// instead of waiting.
pub fn is_try_acquire(cx: &FileCx, c: &Call) -> bool {
    let blocking = c.kwarg("blocking").or_else(|| c.positional(0));
    matches!(
        blocking.and_then(|b| cx.model.literal(b)),
        Some(Lit::Bool(false))
    ) || c
        .kwarg("timeout")
        .is_some_and(|t| matches!(cx.model.literal(t), Some(Lit::Int(0))))
}

/// Lock kinds that are thread locks (taken with plain `with`).
pub fn is_thread_lock(kind: &str) -> bool {
    matches!(kind, "mutex" | "rlock" | "condition" | "semaphore")
}

/// The name references (`Name` expressions) of `name` in `funcs`, skipping
/// nested functions that bind the name themselves (a parameter of a nested
/// function shadows it; one of the outermost function is the name itself:
/// `def create(coro): coro = wait_for(coro, t); ensure_future(coro)`).
pub fn name_refs(cx: &FileCx, funcs: &HashSet<FuncId>, name: &str) -> Vec<ExprId> {
    // The name test first: it is cheaper than asking which function an
    // expression is in, and rules out almost every expression of the file.
    (cx.model.exprs.iter().enumerate())
        .filter(|(_, e)| matches!(&e.kind, ExprKind::Name { id, .. } if id == name))
        .map(|(i, _)| ExprId(i as u32))
        .filter(|&e| {
            !matches!(cx.tree.expr_parent(e), Parent::Detached) && funcs.contains(&cx.func_of(e))
        })
        .filter(|&e| {
            let f = cx.func_of(e);
            !cx.func(f).params.iter().any(|p| p.name == name)
                || funcs.len() == 1
                || !cx
                    .tree
                    .func_ancestors(cx.model, f)
                    .any(|a| a != f && funcs.contains(&a))
        })
        .collect()
}

/// True when `e` is (part of) an assignment target, or a name `del`
/// unbinds (`del _task`: written to, not read).
pub fn is_store(cx: &FileCx, e: ExprId) -> bool {
    let mut cur = e;
    loop {
        match cx.tree.expr_parent(cur) {
            Parent::Stmt(s) => {
                return match &cx.stmt(s).kind {
                    StmtKind::Assign { targets, .. } => targets.contains(&cur),
                    StmtKind::For { target, .. } => *target == Some(cur),
                    StmtKind::With { items, .. } => items.iter().any(|i| i.target == Some(cur)),
                    StmtKind::Delete(targets) => targets.contains(&cur),
                    _ => false,
                };
            }
            Parent::Expr(p) => match &cx.expr(p).kind {
                ExprKind::Collection { .. } | ExprKind::Spread(_) => cur = p,
                ExprKind::AssignExpr { target, .. } => return *target == cur,
                ExprKind::Comprehension { generators, .. } => {
                    return generators.iter().any(|g| g.target == cur);
                }
                _ => return false,
            },
            _ => return false,
        }
    }
}

/// True when a statement is a lowered `assert` (an `If` raising in its only
/// branch, with the same span).
pub fn is_assert(cx: &FileCx, s: StmtId) -> bool {
    let st = cx.stmt(s);
    match &st.kind {
        StmtKind::If { then, orelse, .. } => {
            orelse.is_empty()
                && then.len() == 1
                && matches!(cx.stmt(then[0]).kind, StmtKind::Raise(_))
                && cx.stmt(then[0]).span == st.span
                && cx.source(st.span).starts_with("assert")
        }
        _ => false,
    }
}

/// True for calls that start a task (`create_task`, `ensure_future`,
/// `loop.create_task`) or a task in a group/nursery.
pub fn is_task_spawn(cx: &FileCx, c: &Call) -> bool {
    if cx.effect(c, Effect::ScopedSpawn).is_some() {
        return true;
    }
    cx.effect(c, Effect::Spawn)
        .is_some_and(|e| e.kind.as_deref() == Some("task"))
}

pub fn is_random_ref(cx: &FileCx, x: ExprId) -> bool {
    let r = cx
        .model
        .resolved(x)
        .map(str::to_string)
        .or_else(|| cx.call(x).and_then(|c| c.target.clone()).map(Into::into));
    if let Some(r) = r
        && (r.starts_with("random.")
            || r.starts_with("secrets.")
            || r.starts_with("numpy.random")
            || r.contains("jitter"))
    {
        return true;
    }
    match &cx.expr(x).kind {
        ExprKind::Name { id, .. } => id.to_ascii_lowercase().contains("jitter"),
        ExprKind::Attr { name, .. } => {
            let n = name.to_ascii_lowercase();
            n.contains("jitter") || n == "uniform" || n == "random" || n == "randint"
        }
        _ => false,
    }
}

/// True when an expression sits in the body of `async with` a task group or
/// nursery (asyncio, anyio, trio).
pub fn in_task_group(cx: &FileCx, e: ExprId) -> bool {
    cx.enclosing_stmts(e)
        .into_iter()
        .any(|s| match &cx.stmt(s).kind {
            StmtKind::With { items, .. } => items
                .iter()
                .any(|it| is_task_group_ctx(cx, it.ctx) && !cx.contains(it.ctx, e)),
            _ => false,
        })
}

pub fn is_task_group_ctx(cx: &FileCx, ctx: ExprId) -> bool {
    let ctx = cx.model.strip(ctx);
    if let Some(t) = cx.sema.type_of(ctx)
        && matches!(
            t,
            "asyncio.TaskGroup" | "anyio.abc.TaskGroup" | "trio.Nursery"
        )
    {
        return true;
    }
    let Some(c) = cx.call(ctx) else {
        return false;
    };
    let name = c.target.as_deref().unwrap_or(&c.name);
    let last = name.rsplit('.').next().unwrap_or(name);
    matches!(
        last,
        "TaskGroup" | "create_task_group" | "open_nursery" | "Nursery"
    )
}

/// True when `e` is a condition variable (`threading.Condition`,
/// `asyncio.Condition`, trio/anyio conditions), by type or, for untyped
/// receivers, by a name like `cond`/`cv`/`condition`.
pub fn is_condition(cx: &FileCx, e: ExprId) -> bool {
    let e = cx.model.strip(e);
    if let Some(t) = cx.sema.type_of(e) {
        return cx
            .kb
            .find(Effect::Lock, Some(t), "")
            .is_some_and(|en| matches!(en.kind.as_deref(), Some("condition" | "async-condition")));
    }
    // A condition a library base class builds (`self.not_empty` of a
    // `queue.Queue` subclass): the group's members after its lock.
    if let Some((_, group)) = library_lock_group(cx, e)
        && let ExprKind::Attr { name, .. } = &cx.expr(e).kind
        && group.iter().skip(1).any(|a| a == name.as_str())
    {
        return true;
    }
    // A file whose conditions are all of a kind without a lock
    // (`tornado.locks.Condition`) means one of those by the name.
    let built = condition_constructions(cx);
    if !built.is_empty()
        && built.iter().all(|(_, c)| {
            cx.kb.find_for_call(Effect::Lock, c).is_none_or(|en| {
                !matches!(en.kind.as_deref(), Some("condition" | "async-condition"))
            })
        })
    {
        return false;
    }
    // By its name alone only in a module that imports a library that has
    // conditions, or builds the object itself (`self._condition =
    // real_condition(self._lock)`, a project's factory): a project's own
    // wait queue named `condition`, made elsewhere, in a module importing
    // none of them is not one.
    let made_here = || {
        cx.model.dotted(e).is_some_and(|d| {
            crate::util::assignments(cx, |t| cx.model.dotted(t).as_deref() == Some(d.as_str()))
                .into_iter()
                .any(|(_, v)| cx.call(cx.model.strip(v)).is_some())
        })
    };
    if built.is_empty()
        && !made_here()
        && !cx.model.imports.iter().any(|i| {
            let root = i.target.split('.').next().unwrap_or("");
            matches!(
                root,
                "threading" | "asyncio" | "multiprocessing" | "trio" | "anyio"
            )
        })
    {
        return false;
    }
    cx.model.dotted(e).is_some_and(|d| {
        let last = d
            .rsplit('.')
            .next()
            .unwrap_or(&d)
            .trim_start_matches('_')
            .to_ascii_lowercase();
        last == "cond"
            || last == "cv"
            || last == "condition"
            || last.ends_with("_cond")
            || last.ends_with("_cv")
            || last.ends_with("_condition")
            || last == "not_empty"
            || last == "not_full"
    })
}

/// The attributes of one lock that a library class builds, when `cond`
/// (`obj.attr`) is one of them: `self.not_empty` in a subclass of
/// `queue.Queue` (held by `with self.mutex:` and by `with self.not_full:`),
/// or `self.rejections.queue_cv` of an object typed as such a class. The
/// object as written and the group, the lock's attribute first.
pub fn library_lock_group<'k>(cx: &FileCx<'k>, cond: ExprId) -> Option<(String, &'k [String])> {
    let ExprKind::Attr { obj, name, .. } = &cx.expr(cx.model.strip(cond)).kind else {
        return None;
    };
    let root = cx.model.dotted(*obj)?;
    let class = if root == "self" {
        cx.func(cx.func_of(cond)).class.as_deref()?
    } else {
        cx.sema.type_of(*obj)?
    };
    let group = ancestors_in_file(cx, class)
        .into_iter()
        .filter_map(|b| cx.kb.shared_lock(b))
        .find(|group| group.iter().any(|a| a == name.as_str()))?;
    Some((root, group))
}

/// [`library_lock_group`] for an object of unknown class (not `self`)
/// whose condition attribute is one of a group's (`q._memory_queue.
/// not_empty`): the group, by the condition's name, so that holding the
/// group's lock by its name (`with q._memory_queue.mutex:`) counts.
pub fn lock_group_by_name<'k>(cx: &FileCx<'k>, cond: ExprId) -> Option<(String, &'k [String])> {
    let ExprKind::Attr { obj, name, .. } = &cx.expr(cx.model.strip(cond)).kind else {
        return None;
    };
    let root = cx.model.dotted(*obj)?;
    if root == "self" || cx.sema.type_of(*obj).is_some() {
        return None;
    }
    let group = cx
        .kb
        .shared_lock_groups()
        .find(|group| group.iter().skip(1).any(|a| a == name.as_str()))?;
    Some((root, group))
}

/// Method `f` overrides a hook its library base class calls only under
/// its own lock (`def _put(self, item)` of a `queue.Queue` subclass), so
/// the lock of that class's group is held in it: the group's attributes
/// (see [`library_lock_group`]).
pub fn library_calls_under_lock<'k>(cx: &FileCx<'k>, f: FuncId) -> Option<&'k [String]> {
    let m = cx.func(f);
    let class = m.class.as_deref()?;
    ancestors_in_file(cx, class)
        .into_iter()
        .find(|b| cx.kb.is_locked_hook(b, &m.name))
        .and_then(|b| cx.kb.shared_lock(b))
}

/// A class and its bases, following the bases the file itself defines
/// (`class _Events(queue.Queue)`, then `class _Queue(_Events)`), each once.
fn ancestors_in_file<'a>(cx: &FileCx<'a>, class: &'a str) -> Vec<&'a str> {
    let mut seen = vec![class];
    let mut i = 0;
    while i < seen.len() && seen.len() < 16 {
        let here = seen[i];
        i += 1;
        let Some(t) = cx.model.types.iter().find(|t| &*t.qualname == here) else {
            continue;
        };
        for b in &t.bases {
            if !seen.contains(&&**b) {
                seen.push(b);
            }
        }
    }
    seen
}

/// The `with`/`async with` statements around an expression that take
/// something whose dotted text is `name`.
pub fn inside_with_of(cx: &FileCx, e: ExprId, names: &[String]) -> bool {
    inside_with_matching(cx, e, |cx, ctx| {
        // `with (await self._cond):`, the pre-3.9 way of taking an asyncio
        // lock or condition, holds it too, and so does the generator-based
        // `with (yield from self._cond):` before it.
        let ctx = match cx.expr(cx.model.strip(ctx)).kind {
            ExprKind::Await(inner) | ExprKind::Yield(Some(inner)) => cx.model.strip(inner),
            _ => ctx,
        };
        lock_text(cx, ctx).is_some_and(|d| names.contains(&d))
            // `with self._locked():`, a helper that takes the object's lock.
            || cx.call(ctx).is_some_and(|c| {
                c.receiver.and_then(|r| cx.model.name_of(r)) == Some("self")
                    && c.name.to_ascii_lowercase().contains("lock")
            })
    })
}

/// How a lock is written, to compare its uses: its dotted name
/// (`self._lock`), or a getter called with nothing
/// (`self.state.get_lock()`), which hands back the same lock each time.
pub fn lock_text(cx: &FileCx, e: ExprId) -> Option<String> {
    let e = cx.model.strip(e);
    cx.model.dotted(e).or_else(|| {
        let c = cx.call(e)?;
        if !c.args.is_empty() || !c.name.to_ascii_lowercase().contains("lock") {
            return None;
        }
        Some(format!("{}.{}()", cx.model.dotted(c.receiver?)?, c.name))
    })
}

/// `e` sits in the body of a `with` one of whose items `pred` accepts.
pub fn inside_with_matching(
    cx: &FileCx,
    e: ExprId,
    pred: impl Fn(&FileCx, ExprId) -> bool,
) -> bool {
    cx.enclosing_stmts(e)
        .into_iter()
        .any(|s| match &cx.stmt(s).kind {
            StmtKind::With { items, .. } => items
                .iter()
                .any(|it| !cx.contains(it.ctx, e) && pred(cx, it.ctx)),
            _ => false,
        })
}

/// Methods that close or release: awaited in cleanup on purpose, and
/// bounded by the transport in practice.
pub fn is_close_like(name: &str) -> bool {
    matches!(
        name,
        "close"
            | "aclose"
            | "wait_closed"
            | "shutdown"
            | "release"
            | "cancel"
            | "unlink"
            | "disconnect"
            | "terminate"
            | "kill"
            | "stop"
            | "__aexit__"
    )
}

/// `q.put(x)`/`q.get()` (or `q.join()`, waiting for its consumers) on a
/// receiver named for a queue (`self._queue`, `ic.event_queue`, `q`,
/// `self._in_q`) or typed as one: an in-process hand-off, not an HTTP
/// verb, whatever the queue's type.
pub fn on_a_queue(cx: &FileCx, c: &Call) -> bool {
    if matches!(c.name.as_str(), "send" | "receive") {
        return c.receiver.is_some_and(|r| on_a_memory_channel(cx, r));
    }
    let queue_verb =
        matches!(c.name.as_str(), "put" | "get") || (c.name == "join" && c.args.is_empty());
    if !queue_verb {
        return false;
    }
    let Some(r) = c.receiver else { return false };
    if cx
        .sema
        .type_of(cx.model.strip(r))
        .is_some_and(|t| cx.kb.find(Effect::Queue, Some(t), "").is_some())
    {
        return true;
    }
    let names_a_queue = |last: &str| {
        let last = last.to_ascii_lowercase();
        let last = last.trim_matches('_');
        last.contains("queue") || last == "q" || last.ends_with("_q")
    };
    // `info["queue"].put(event)`: the entry a dict keeps its queue under;
    // `self._queues[priority].put(job)`: one of a table of queues.
    if let ExprKind::Index { obj, index } = &cx.expr(cx.model.strip(r)).kind {
        let by_key = matches!(cx.model.literal(*index), Some(Lit::Str(key)) if names_a_queue(key));
        return by_key
            || cx
                .model
                .dotted(*obj)
                .is_some_and(|d| names_a_queue(d.rsplit('.').next().unwrap_or(&d)));
    }
    cx.model
        .dotted(r)
        .is_some_and(|d| names_a_queue(d.rsplit('.').next().unwrap_or(&d)))
}

/// `self._send, self._receive = anyio.create_memory_object_stream(100)`:
/// an end of an in-process channel (a queue by another name), unpacked
/// from the call that makes it anywhere in the file.
fn on_a_memory_channel(cx: &FileCx, r: ExprId) -> bool {
    let Some(end) = cx.model.dotted(r) else {
        return false;
    };
    let unpacks_to_end = |t: ExprId| {
        matches!(&cx.expr(t).kind, ExprKind::Collection { elems, .. }
            if elems.iter().any(|&x| cx.model.dotted(x).as_deref() == Some(end.as_str())))
    };
    crate::util::assignments(cx, unpacks_to_end)
        .into_iter()
        .any(|(_, v)| {
            cx.call(cx.model.strip(v))
                .is_some_and(|k| cx.effect(k, Effect::Queue).is_some())
        })
}

/// An awaited call that waits on the network or the disk: a known I/O
/// coroutine, an I/O verb on an untyped receiver, or a coroutine of this
/// project that itself awaits such a call (one level deep).
pub fn is_io_call(cx: &FileCx, c: &Call) -> bool {
    if is_close_like(&c.name) || on_a_queue(cx, c) {
        return false;
    }
    if let Some(e) = cx.effect(c, Effect::AsyncApi) {
        return e.kind.as_deref() == Some("io");
    }
    if crate::util::is_io_method_call(c) {
        return true;
    }
    let Some(t) = c.target.as_deref() else {
        return false;
    };
    // A coroutine of this file.
    if let Some(f) = cx.local_functions(t).next() {
        if !cx.func(f).is_async {
            return false;
        }
        return cx.body_calls(f).any(|e| {
            cx.is_awaited(e)
                && cx.call(e).is_some_and(|ic| {
                    !is_close_like(&ic.name)
                        && !on_a_queue(cx, ic)
                        && (cx
                            .effect(ic, Effect::AsyncApi)
                            .is_some_and(|en| en.kind.as_deref() == Some("io"))
                            || crate::util::is_io_method_call(ic))
                })
        });
    }
    // A coroutine of another module.
    let Some(i) = cx.index.resolve(cx.lang, t, cx.file) else {
        return false;
    };
    let s = cx.index.summary(i);
    s.is_async
        && s.calls.iter().any(|site| {
            let last = site.target.rsplit('.').next().unwrap_or("");
            !is_close_like(last)
                && cx
                    .kb
                    .find(Effect::AsyncApi, Some(&site.target), last)
                    .is_some_and(|en| en.kind.as_deref() == Some("io"))
        })
}

/// The function of this file a callable argument names: a lambda, a
/// module-level or nested `def`, or a method through `self.m`.
pub fn local_callable(cx: &FileCx, a: ExprId) -> Option<FuncId> {
    let a = cx.model.strip(a);
    match &cx.expr(a).kind {
        ExprKind::Closure(f) => Some(*f),
        ExprKind::Name { id, resolved } => {
            let outer = cx.func_of(a);
            cx.model.function_ids().find(|&f| {
                let func = cx.func(f);
                !func.name.is_empty()
                    && (resolved.as_deref() == Some(func.qualname.as_str())
                        || (func.name == *id && func.parent == Some(outer)))
            })
        }
        ExprKind::Attr {
            resolved: Some(r), ..
        } => cx.local_functions(r).next(),
        ExprKind::Call(c) if c.target.as_deref() == Some("functools.partial") => {
            local_callable(cx, c.positional(0)?)
        }
        _ => None,
    }
}

/// Where the awaitables of a `gather(*xs)` come from, when they are one per
/// item of a collection: the collection and the per-item expression.
pub struct FanOut {
    pub iter: ExprId,
    pub per_item: Option<ExprId>,
}

/// The fan-out shape of a `gather` call: `gather(*(f(x) for x in xs))`,
/// `gather(*map(f, xs))`, or `gather(*coros)` where `coros` is a local
/// built by a comprehension or appended to in a `for` loop. Lists of tasks
/// started in a loop are not included (the spawn itself is the fan-out).
pub fn fanout_source(cx: &FileCx, gather: ExprId) -> Option<FanOut> {
    let c = cx.call(gather)?;
    let awaitables: Vec<&Arg> = c.args.iter().filter(|a| a.name.is_none()).collect();
    let [one] = awaitables.as_slice() else {
        return None;
    };
    if !one.spread {
        return None;
    }
    fanout_of_value(cx, gather, one.value)
}

/// The fan-out shape of a collection of awaitables passed to `call`
/// (`asyncio.wait(coros)`, the spread of `gather(*coros)`).
pub fn fanout_of_value(cx: &FileCx, gather: ExprId, value: ExprId) -> Option<FanOut> {
    let v = cx.model.strip(value);
    if let Some(f) = inline_fanout(cx, v) {
        // `[create_task(f(x)) for x in xs]`: the spawn is the fan-out.
        return (!f.per_item.is_some_and(|p| is_spawned(cx, p))).then_some(f);
    }
    let name = cx.model.name_of(v)?;
    if cx.model.resolved(v).is_some() {
        return None;
    }
    let fid = cx.func_of(gather);
    let at = cx.expr(gather).span.start;
    for s in 0..cx.model.stmts.len() as u32 {
        let s = StmtId(s);
        if cx.tree.stmt_func(s) != fid || cx.stmt(s).span.start > at {
            continue;
        }
        match &cx.stmt(s).kind {
            StmtKind::Assign {
                targets,
                value: Some(val),
                ..
            } if targets.len() == 1 && cx.model.name_of(targets[0]) == Some(name) => {
                if let Some(f) = inline_fanout(cx, cx.model.strip(*val)) {
                    return (!f.per_item.is_some_and(|p| is_spawned(cx, p))).then_some(f);
                }
            }
            StmtKind::Expr(e) => {
                let Some(ac) = cx.call(*e) else { continue };
                if !matches!(ac.name.as_str(), "append" | "add")
                    || ac.receiver.and_then(|r| cx.model.name_of(r)) != Some(name)
                {
                    continue;
                }
                let Some(item) = ac.positional(0) else {
                    continue;
                };
                if is_spawned(cx, item) || cx.call(cx.model.strip(item)).is_none() {
                    return None;
                }
                let lp = cx
                    .tree
                    .stmt_ancestors(s)
                    .find(|&a| matches!(cx.stmt(a).kind, StmtKind::For { .. }))?;
                if let StmtKind::For { iter, .. } = &cx.stmt(lp).kind {
                    return Some(FanOut {
                        iter: *iter,
                        per_item: Some(item),
                    });
                }
            }
            _ => {}
        }
    }
    None
}

fn is_spawned(cx: &FileCx, e: ExprId) -> bool {
    cx.call(cx.model.strip(e))
        .is_some_and(|c| is_task_spawn(cx, c))
}

fn inline_fanout(cx: &FileCx, v: ExprId) -> Option<FanOut> {
    match &cx.expr(v).kind {
        // The element starts work (a call), it is not an existing task.
        ExprKind::Comprehension {
            elt, generators, ..
        } if generators.len() == 1 && cx.call(cx.model.strip(*elt)).is_some() => Some(FanOut {
            iter: generators[0].iter,
            per_item: Some(*elt),
        }),
        ExprKind::Call(m) if m.target.as_deref() == Some("builtins.map") => Some(FanOut {
            iter: m.positional(1)?,
            per_item: m.positional(0),
        }),
        _ => None,
    }
}

/// The handler ends with a call of a function of this file that always
/// raises (`self._convert_error(exc)`).
pub fn ends_in_raising_helper(cx: &FileCx, body: &Block) -> bool {
    let Some(&last) = body.last() else {
        return false;
    };
    match &cx.stmt(last).kind {
        StmtKind::Expr(e) => cx.call(*e).is_some_and(|c| raising_helper(cx, c)),
        // `try: reraise_from_group(exc) except Many: raise ..`: the body
        // ends in a raise and so does every handler.
        StmtKind::Try {
            body: tried,
            handlers,
            orelse,
            finally,
        } => {
            orelse.is_empty()
                && finally.as_ref().is_none_or(Vec::is_empty)
                && !handlers.is_empty()
                && (crate::util::always_raises(cx.model, tried)
                    || ends_in_raising_helper(cx, tried))
                && handlers.iter().all(|h| {
                    crate::util::always_raises(cx.model, &h.body)
                        || ends_in_raising_helper(cx, &h.body)
                })
        }
        _ => false,
    }
}

/// A function that never returns normally: one of this file whose every
/// path raises or that is annotated `-> NoReturn`/`-> Never`, or one named
/// for it (`raise_single_exception_from_group`, `reraise`).
fn raising_helper(cx: &FileCx, c: &Call) -> bool {
    let name = c.name.as_str();
    if name.starts_with("raise_") || name.starts_with("reraise") || name.starts_with("_raise_") {
        return true;
    }
    let Some(t) = c.target.as_deref() else {
        return false;
    };
    cx.model
        .function_ids()
        .find(|&f| cx.func(f).qualname == t)
        .is_some_and(|f| {
            let func = cx.func(f);
            crate::util::always_raises(cx.model, &func.body)
                || func.returns.as_ref().is_some_and(|r| {
                    let ty = r.text.rsplit('.').next().unwrap_or("");
                    matches!(ty, "NoReturn" | "Never")
                })
        })
}

/// The call asks the person at the terminal for something: `input()`,
/// `getpass()`, `input` read on a thread (`await
/// loop.run_in_executor(None, input, "> ")`), a prompt helper handed
/// the question (`await ainput("Enter code: ")`, `Prompt.ask("Name")`),
/// or a front end's reader (`renderer.get_input()`).
pub fn asks_a_person(cx: &FileCx, e: ExprId) -> bool {
    const ASKERS: &[&str] = &[
        "click",
        "typer",
        "Prompt",
        "Confirm",
        "IntPrompt",
        "FloatPrompt",
        "questionary",
    ];
    let Some(c) = cx.call(e) else { return false };
    if matches!(
        c.target.as_deref(),
        Some("builtins.input" | "getpass.getpass")
    ) {
        return true;
    }
    if matches!(
        c.name.as_str(),
        "run_in_executor" | "to_thread" | "run_sync"
    ) && c
        .args
        .iter()
        .any(|a| matches!(cx.model.name_of(a.value), Some("input" | "getpass")))
    {
        return true;
    }
    // A terminal front end's reader (`renderer.get_input()`,
    // prompt_toolkit's `session.prompt_async()`): named for what the user
    // types. Also rich's `console.input(prompt)`.
    if c.receiver.is_some()
        && matches!(
            c.name.as_str(),
            "get_input" | "read_input" | "get_user_input" | "prompt_async"
        )
    {
        return true;
    }
    if c.name == "input"
        && (c.target.as_deref() == Some("rich.console.Console.input")
            || c.receiver
                .and_then(|r| cx.model.dotted(r))
                .is_some_and(|d| {
                    d.rsplit('.')
                        .next()
                        .is_some_and(|n| n.trim_start_matches('_').eq_ignore_ascii_case("console"))
                }))
    {
        return true;
    }
    // A prompt library's own asker (`Prompt.ask(label)`) asks a person
    // whatever its text; a bare `ask(..)` does when the question is text
    // written for one.
    let asker = match c.receiver {
        None => c.positional(0).is_some_and(|a| {
            matches!(cx.expr(a).kind, ExprKind::Literal(Lit::Str(_) | Lit::Other))
        }),
        Some(r) => cx
            .model
            .dotted(r)
            .is_some_and(|d| ASKERS.contains(&d.as_str())),
    };
    asker
        && matches!(
            c.name.as_str(),
            "input" | "ainput" | "getpass" | "prompt" | "ask" | "confirm"
        )
}

/// Every mention of `name` in the file (as a plain name) sits directly in
/// an expression `p` for which `ok(mention, p)` holds, and there is at
/// least one.
pub fn every_mention(cx: &FileCx, name: &str, ok: impl Fn(ExprId, ExprId) -> bool) -> bool {
    every_mention_as(cx, name, false, ok)
}

/// [`every_mention`], of a method's name when `method` holds: every
/// attribute of that name (`self.check(..)`, `job.check`).
fn every_mention_as(
    cx: &FileCx,
    name: &str,
    method: bool,
    ok: impl Fn(ExprId, ExprId) -> bool,
) -> bool {
    let mut any = false;
    for (i, x) in cx.model.exprs.iter().enumerate() {
        let mentions = match &x.kind {
            ExprKind::Name { id, .. } => !method && id == name,
            ExprKind::Attr { name: n, .. } => method && n == name,
            _ => false,
        };
        if !mentions {
            continue;
        }
        let id = ExprId(i as u32);
        let Parent::Expr(p) = cx.tree.expr_parent(id) else {
            return false;
        };
        if !ok(id, p) {
            return false;
        }
        any = true;
    }
    any
}

/// Every mention of `g`'s name in the file hands it to a call that starts
/// a new loop for it (`asyncio.run(g(..))`, `anyio.run(g, ..)`; for a
/// private method, every attribute of its name: `asyncio.run(
/// self._check())`; a public one is the class's users' to await too), and
/// there is at least one.
pub fn only_a_loop_root(cx: &FileCx, g: FuncId) -> bool {
    let rooted = std::cell::Cell::new(false);
    let func = cx.func(g);
    // A public method may be awaited by the class's users on their own
    // loops (`await scraper.scrape_reviews()` beside a sync `scrape()`
    // that runs it): only a private one is the class's own root.
    let private = func.name.starts_with('_') && !func.name.starts_with("__");
    if func.class.is_some() && !private {
        return false;
    }
    every_mention_as(cx, &func.name, func.class.is_some(), |id, p| {
        let root = handed_to_a_new_loop(cx, id, p);
        rooted.set(rooted.get() || root);
        root || awaits_itself(cx, g, id, p)
    }) && rooted.get()
}

/// The mention `id` of a coroutine function (whose parent is `p`) is
/// started on a new loop: `anyio.run(g, ..)` or `asyncio.run(g(..))`.
pub fn handed_to_a_new_loop(cx: &FileCx, id: ExprId, p: ExprId) -> bool {
    if runs_on_a_new_loop(cx, p) {
        cx.call(p).and_then(|r| r.positional(0)) == Some(id)
    } else {
        cx.call(p).is_some_and(|c| c.func == id)
            && matches!(cx.tree.expr_parent(p), Parent::Expr(r)
                if runs_on_a_new_loop(cx, r) && cx.call(r).and_then(|r| r.positional(0)) == Some(p))
    }
}

/// The call `e` runs what it is handed first on a new loop: `asyncio.run(
/// ..)`, a helper of the file that does only that, or `loop.
/// run_until_complete(..)` on a loop the function made for it (`loop =
/// asyncio.new_event_loop()`).
pub fn runs_on_a_new_loop(cx: &FileCx, e: ExprId) -> bool {
    cx.call(e).is_some_and(|r| {
        starts_a_loop(cx, r)
            || cx
                .callee_in_file(r)
                .is_some_and(|h| runs_its_argument_on_a_new_loop(cx, h, 1))
            || (r.name == "run_until_complete"
                && r.receiver
                    .and_then(|x| cx.model.name_of(x))
                    .is_some_and(|n| bound_to_new_loop(cx, cx.func_of(e), n, 1)))
    })
}

/// `asyncio.run(..)`, `anyio.run(..)`: starts a new loop for what it is
/// given.
fn starts_a_loop(cx: &FileCx, c: &Call) -> bool {
    cx.effect(c, Effect::SyncOverAsync)
        .is_some_and(|k| k.kind.as_deref() == Some("new_loop"))
}

/// `h` is a sync function of the file that does nothing but start a new
/// loop for the coroutine it is handed (`def _run(coro): return
/// asyncio.run(coro)`, the one-line helper a command-line app's sync
/// commands call), bar handling the run's failure, or that picks the loop
/// first (the thread's own when it is not running, else a new one on a
/// worker thread), or that only ever hands it to such a helper and does
/// other work around it (`result = _run(coro); echo(json.dumps(result))`:
/// before the run no loop exists for that work to start tasks on, and
/// after it the loop is gone). `depth` bounds the helpers read through.
fn runs_its_argument_on_a_new_loop(cx: &FileCx, h: FuncId, depth: u32) -> bool {
    let func = cx.func(h);
    let Some(first) = func
        .params
        .iter()
        .find(|p| p.name != "self" && p.name != "cls")
    else {
        return false;
    };
    // What its `except` handlers do when the run fails (report, exit),
    // or its `finally` once the loop is gone, does not matter: `try:
    // return asyncio.run(coro) except Error as e: report(e)`.
    if func.is_async {
        return false;
    }
    // A helper that picks a loop makes a handful of calls; this runs for
    // every call of a file function, so a long one is not read through.
    const MAX_CALLS: usize = 12;
    let calls: Vec<&Call> = cx
        .body_calls(h)
        .filter(|&e| {
            !crate::util::in_except_handler(cx, e) && !crate::util::in_finally_block(cx, e)
        })
        .filter_map(|e| cx.call(e))
        .take(MAX_CALLS + 1)
        .collect();
    if calls.len() > MAX_CALLS {
        return false;
    }
    let is_first = |a: Option<ExprId>| a.and_then(|a| cx.model.name_of(a)) == Some(&*first.name);
    // The coroutine goes to a loop it is the first work of: a new one
    // (`asyncio.run(coro)`, also on a worker thread, `pool.submit(
    // asyncio.run, coro)`), or the thread's loop when it is not running
    // (`loop.run_until_complete(coro)` after `if loop.is_running():`).
    let runs_it = |c: &Call| {
        (starts_a_loop(cx, c) && is_first(c.positional(0)))
            || (c.name == "run_until_complete" && is_first(c.positional(0)))
            || (c.name == "submit"
                && c.positional(0).and_then(|a| cx.model.resolved(a)) == Some("asyncio.run")
                && is_first(c.positional(1)))
    };
    // Choosing that loop: the thread's loop and whether it runs, a pool
    // to run a new one on.
    let plumbing = |c: &Call| {
        matches!(
            c.name.as_str(),
            "get_event_loop"
                | "get_running_loop"
                | "new_event_loop"
                | "set_event_loop"
                | "is_running"
                | "ThreadPoolExecutor"
                | "result"
        ) && !c.args.iter().any(|a| is_first(Some(a.value)))
    };
    let one_plain_run =
        matches!(calls.as_slice(), [c] if starts_a_loop(cx, c) && is_first(c.positional(0)));
    one_plain_run
        || (calls.iter().any(|c| runs_it(c)) && calls.iter().all(|c| runs_it(c) || plumbing(c)))
        || (depth < 3 && only_runs_it_through_a_helper(cx, h, &first.name, depth))
}

/// Every mention of the parameter `param` of `h` is the first argument of
/// a call of a helper of the file that runs its argument on a new loop
/// (`def _exec_json(coro): result = _run(coro); ...`).
fn only_runs_it_through_a_helper(cx: &FileCx, h: FuncId, param: &str, depth: u32) -> bool {
    let mut mentions = cx
        .body_exprs(h)
        .iter()
        .filter(|&&x| cx.model.name_of(x) == Some(param))
        .peekable();
    mentions.peek().is_some()
        && mentions.all(|&x| {
            matches!(cx.tree.expr_parent(x), Parent::Expr(p) if cx.call(p).is_some_and(|c| {
                c.positional(0) == Some(x)
                    && cx.callee_in_file(c).is_some_and(|g| {
                        g != h && runs_its_argument_on_a_new_loop(cx, g, depth + 1)
                    })
            }))
        })
}

/// The mention `id` of `g`'s name is `g` awaiting itself (`return await
/// configure(conf)` to ask again): the recursion stays on the loop and in
/// the line of work `g` was started in.
pub fn awaits_itself(cx: &FileCx, g: FuncId, id: ExprId, p: ExprId) -> bool {
    cx.func_of(p) == g
        && cx.call(p).is_some_and(|c| c.func == id)
        && matches!(cx.tree.expr_parent(p), Parent::Expr(a)
            if matches!(cx.expr(a).kind, ExprKind::Await(_)))
}

/// Every assignment of `f` to `name` binds a new event loop: `loop =
/// asyncio.new_event_loop()`, or the value of a sync helper of the file
/// that makes one and returns it (`loop = _create_request_loop()`, which
/// sets an exception handler first), `depth` helpers down. Not a loop the
/// function keeps in a global or nonlocal name.
fn bound_to_new_loop(cx: &FileCx, f: FuncId, name: &str, depth: u32) -> bool {
    // A loop kept in a global (`global _loop`) is shared between calls,
    // with whatever earlier runs left on it.
    let shared = declared_outer(cx, f, name).is_some();
    let mut bound = values_bound_to(cx, f, name).peekable();
    !shared
        && bound.peek().is_some()
        && bound.all(|v| v.is_some_and(|v| makes_new_loop(cx, v, depth)))
}

/// `v` is a new event loop: `asyncio.new_event_loop()`, or a call of a
/// sync function of the file whose every `return` gives one (`depth`
/// helpers down).
fn makes_new_loop(cx: &FileCx, v: ExprId, depth: u32) -> bool {
    let Some(k) = cx.call(v) else {
        return cx
            .model
            .name_of(v)
            .is_some_and(|n| depth > 0 && bound_to_new_loop(cx, cx.func_of(v), n, depth - 1));
    };
    if k.target.as_deref() == Some("asyncio.new_event_loop") {
        return true;
    }
    let Some(h) = cx
        .callee_in_file(k)
        .filter(|&h| depth > 0 && !cx.func(h).is_async)
    else {
        return false;
    };
    let mut returns = returned_values(cx, h).peekable();
    returns.peek().is_some()
        && returns.all(|r| {
            r.is_some_and(|r| match cx.model.name_of(r) {
                Some(n) => bound_to_new_loop(cx, h, n, 0),
                None => makes_new_loop(cx, r, depth - 1),
            })
        })
}

/// `span` lies inside the module's `if __name__ == "__main__":` block: a
/// script's own entry code, run once in the foreground by whoever started
/// it.
pub fn in_main_guard(cx: &FileCx, span: Span) -> bool {
    main_guard(cx).is_some_and(|s| cx.stmt(s).span.contains(span))
}

/// The module's `if __name__ == "__main__":` statement, if it has one:
/// the file is a program someone runs, not only a library's module.
pub fn main_guard(cx: &FileCx) -> Option<StmtId> {
    cx.func(FuncId(0)).body.iter().copied().find(|&s| {
        let StmtKind::If { cond, .. } = &cx.stmt(s).kind else {
            return false;
        };
        let ExprKind::Binary {
            op: BinOp::Eq,
            left,
            right,
        } = &cx.expr(*cond).kind
        else {
            return false;
        };
        let main = |a: ExprId, b: ExprId| {
            cx.model.name_of(a) == Some("__name__")
                && matches!(cx.model.literal(b), Some(Lit::Str(v)) if v.as_str() == "__main__")
        };
        main(*left, *right) || main(*right, *left)
    })
}

/// A command of a command-line app (`@app.command()` of typer, cyclopts,
/// click, asyncclick): the process runs it as its one job.
pub fn is_cli_command(f: &Function) -> bool {
    f.decorators
        .iter()
        .any(|d| d.as_str() == "command" || d.ends_with(".command"))
}

/// A command of a command-line app ([`is_cli_command`]) in a file that
/// imports a command-line framework (typer, click, asyncclick, cyclopts,
/// cloup, rich-click), or may through a `*` import: the process runs that
/// one command. A chat bot's command (discord.py's `@bot.command()`) is
/// decorated the same way but runs beside every other handler of the bot.
pub fn is_cli_app_command(cx: &FileCx, f: &Function) -> bool {
    is_cli_command(f) && imports_a_cli_framework(cx.model)
}

/// The file imports a command-line framework (typer, click, asyncclick,
/// cyclopts, cloup, rich-click), or imports `*` from somewhere.
pub fn imports_a_cli_framework(m: &FileModel) -> bool {
    m.imports.iter().any(|i| {
        i.local.as_str() == "*"
            || matches!(
                i.target.split('.').next().unwrap_or(""),
                "typer" | "click" | "asyncclick" | "cyclopts" | "cloup" | "rich_click"
            )
    })
}

/// A method that closes or stops what it is called on (`conn.close()`,
/// `await writer.wait_closed()`, `server.shutdown()`, `worker.stop()`).
pub fn is_closing_method(name: &str) -> bool {
    matches!(
        name,
        "close" | "aclose" | "wait_closed" | "shutdown" | "stop"
    )
}

/// `v` makes a new empty list or set (`[]`, `set()`, `list()`).
pub fn new_empty_list_or_set(cx: &FileCx, v: ExprId) -> bool {
    match &cx.expr(cx.model.strip(v)).kind {
        ExprKind::Collection {
            kind: CollKind::List | CollKind::Set,
            elems,
            ..
        } => elems.is_empty(),
        ExprKind::Call(c) => {
            c.args.is_empty()
                && matches!(c.target.as_deref(), Some("builtins.list" | "builtins.set"))
        }
        _ => false,
    }
}

/// A call that tears something down, by its name: a closing method
/// (leading underscores aside), `disconnect`, or a name made of one
/// (`close_backend`, `stop_listening`, `cleanup`, `handle_connection_closed`).
pub fn is_teardown_name(name: &str) -> bool {
    let n = name.trim_start_matches('_');
    is_closing_method(n)
        || n == "disconnect"
        || [
            "close_",
            "stop_",
            "shutdown_",
            "disconnect_",
            "cleanup",
            "teardown",
            "tear_down",
        ]
        .iter()
        .any(|p| n.starts_with(p))
        || ["_close", "_closed", "_cleanup", "_shutdown", "_teardown"]
            .iter()
            .any(|s| n.ends_with(s))
}

/// `f` declares `name` as another scope's: `Some(false)` for `global
/// name`, `Some(true)` for `nonlocal name`, `None` when the name is its
/// own.
pub fn declared_outer(cx: &FileCx, f: FuncId, name: &str) -> Option<bool> {
    cx.body_stmts(f)
        .iter()
        .find_map(|&st| match &cx.stmt(st).kind {
            StmtKind::Global { names, nonlocal } if names.iter().any(|n| n.as_str() == name) => {
                Some(*nonlocal)
            }
            _ => None,
        })
}

/// What each `return` of `f` gives, in source order (`None` for a bare
/// `return`).
pub fn returned_values<'a>(cx: &'a FileCx, f: FuncId) -> impl Iterator<Item = Option<ExprId>> + 'a {
    cx.body_stmts(f)
        .iter()
        .filter_map(move |&s| match cx.stmt(s).kind {
            StmtKind::Return(v) => Some(v),
            _ => None,
        })
}

/// The values `f`'s own assignments bind to the name `name`, in source
/// order (`None` for an assignment without a value, a bare annotation).
pub fn values_bound_to<'a>(
    cx: &'a FileCx,
    f: FuncId,
    name: &'a str,
) -> impl Iterator<Item = Option<ExprId>> + 'a {
    cx.body_stmts(f)
        .iter()
        .filter_map(move |&s| match &cx.stmt(s).kind {
            StmtKind::Assign { targets, value, .. }
                if targets.iter().any(|&t| cx.model.name_of(t) == Some(name)) =>
            {
                Some(*value)
            }
            _ => None,
        })
}

/// The value `f`'s own assignments bind to `name`, when they bind it
/// exactly once and with a value (`tasks = [..]`, then only read).
pub fn value_bound_once(cx: &FileCx, f: FuncId, name: &str) -> Option<ExprId> {
    let mut bound = values_bound_to(cx, f, name);
    match (bound.next(), bound.next()) {
        (Some(Some(v)), None) => Some(v),
        _ => None,
    }
}

/// The innermost loop (of the same function) around a statement, through
/// `if`/`try`/`with` blocks.
pub fn enclosing_loop(cx: &FileCx, s: StmtId) -> Option<StmtId> {
    cx.tree.stmt_ancestors(s).find(|&a| {
        matches!(
            cx.stmt(a).kind,
            StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::Loop { .. }
        )
    })
}

/// `f` is a private helper of the file (`_ensure`, not a dunder method)
/// that the file calls at least once, never from itself, and only where
/// `ok` holds of the call: its callers' context is all it runs in (a
/// public function may be called from anywhere).
pub fn private_helper_called_only(cx: &FileCx, f: FuncId, ok: impl Fn(ExprId) -> bool) -> bool {
    let func = cx.func(f);
    func.name.starts_with('_') && !func.name.starts_with("__") && called_only(cx, f, ok)
}

/// The file calls `f` at least once, never from `f` itself, and only where
/// `ok` holds of the call. (For a public function, only what this file
/// does: see [`private_helper_called_only`].)
pub fn called_only(cx: &FileCx, f: FuncId, ok: impl Fn(ExprId) -> bool) -> bool {
    let func = cx.func(f);
    let mut any = false;
    for (e, c) in cx.calls_named(&[func.name.as_str()]) {
        if cx.callee_in_file(c) != Some(f) {
            continue;
        }
        if cx.func_of(e) == f || !ok(e) {
            return false;
        }
        any = true;
    }
    any
}

/// The call cancels something: `task.cancel()`, or a helper named for
/// cancelling that is handed what to cancel (`cancel_and_wait(*tasks)`,
/// `gracefully_cancel(t)`, `self.tm.cancel_task(t)`), which may live in
/// another module where the rule cannot look.
pub fn cancels(c: &Call) -> bool {
    (c.name == "cancel" && c.receiver.is_some())
        || (!c.args.is_empty()
            && c.name
                .to_ascii_lowercase()
                .split('_')
                .any(|w| w == "cancel"))
}

/// `f` cancels something itself, or through functions of the file it
/// calls, `depth` calls down (`finally: stop_tasks()` whose body runs
/// `t.cancel()`).
pub fn cancels_within(cx: &FileCx, f: FuncId, depth: u32) -> bool {
    cx.body_calls(f).any(|e| {
        cx.call(e).is_some_and(|c| {
            cancels(c)
                || (depth > 0
                    && cx
                        .callee_in_file(c)
                        .is_some_and(|g| g != f && cancels_within(cx, g, depth - 1)))
        })
    })
}

/// `name` is bound in `f` to the done set of `asyncio.wait` (`done, pending
/// = await asyncio.wait(tasks, ..)`): tasks that have finished.
pub fn is_done_set_of_wait(cx: &FileCx, f: FuncId, name: &str) -> bool {
    cx.body_stmts(f).iter().any(|&s| {
        let StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } = &cx.stmt(s).kind
        else {
            return false;
        };
        let first_is_done = targets.iter().any(|&x| match &cx.expr(x).kind {
            ExprKind::Collection { elems, .. } => {
                elems.first().and_then(|&e| cx.model.name_of(e)) == Some(name)
            }
            _ => false,
        });
        first_is_done
            && matches!(&cx.expr(*v).kind, ExprKind::Await(w)
                if cx.call(*w).is_some_and(|c| c.target.as_deref() == Some("asyncio.wait")))
    })
}

/// `e` is `lock.release` taken as a value, not called
/// (`waiters.append(lock.release)`, `Response(release=sem.release)`): the
/// release is handed to whoever will call it.
pub fn hands_over_release(cx: &FileCx, e: ExprId, lock: &str) -> bool {
    matches!(&cx.expr(e).kind, ExprKind::Attr { obj, name, .. }
        if name == "release" && cx.model.dotted(*obj).as_deref() == Some(lock))
        && !matches!(cx.tree.expr_parent(e), Parent::Expr(p)
            if cx.call(p).is_some_and(|c| c.func == e))
}

/// The calls of `g` that cancel what `target` names (`self._task.cancel()`
/// for `self._task`, `self._tasks[key].cancel()` for `self._tasks[key]`):
/// how a task kept in a name, an attribute or an entry is stopped.
pub fn cancels_of<'a>(
    cx: &'a FileCx,
    g: FuncId,
    target: &'a str,
) -> impl Iterator<Item = ExprId> + 'a {
    cx.body_calls(g).filter(move |&e| {
        cx.call(e).is_some_and(|c| {
            c.name == "cancel"
                && c.receiver.and_then(|r| cx.model.keyed_place(r)).as_deref() == Some(target)
        })
    })
}

/// A method of `class` other than `except` cancels every task of the
/// object's collection `attr`: `for t in self.tasks: t.cancel()` (or over
/// `self.tasks.values()`). Tasks kept there have an owner that stops them.
pub fn class_cancels_every_task_of(cx: &FileCx, class: &str, except: FuncId, attr: &str) -> bool {
    let is_collection = |e: ExprId| {
        let e = cx.model.strip(e);
        let e = match cx.call(e) {
            Some(c) if c.name == "values" && c.args.is_empty() => match c.receiver {
                Some(r) => r,
                None => return false,
            },
            _ => e,
        };
        matches!(&cx.expr(e).kind, ExprKind::Attr { obj, name, .. }
            if name == attr && matches!(cx.model.name_of(*obj), Some("self" | "cls")))
    };
    cx.model.function_ids().any(|g| {
        g != except
            && cx.func(g).class.as_deref() == Some(class)
            && cx
                .body_stmts(g)
                .iter()
                .any(|&s| cancels_each_of(cx, s).is_some_and(is_collection))
    })
}

/// `for t in tasks: t.cancel()`: the collection whose every task the loop
/// `s` cancels.
pub fn cancels_each_of(cx: &FileCx, s: StmtId) -> Option<ExprId> {
    let StmtKind::For {
        target: Some(v),
        iter,
        body,
        ..
    } = &cx.stmt(s).kind
    else {
        return None;
    };
    let item = cx.model.name_of(*v)?;
    unsnarl_model::walk::calls_in_block(cx.model, body)
        .into_iter()
        .any(|k| {
            cx.call(k).is_some_and(|kc| {
                kc.name == "cancel" && kc.receiver.and_then(|r| cx.model.name_of(r)) == Some(item)
            })
        })
        .then_some(*iter)
}

/// `span` lies in a branch that never runs: the `if` tests a literal
/// `True`/`False` (`if True:  # ASYNC`, the kept branch of code generated
/// for both flavors) or a module-level name the file assigns once, to
/// `True` or `False` (`_IS_SYNC = False`), or its `not`, or `False and
/// ...` / `True or ...`, and `span` is in the branch that value rules out.
pub fn in_dead_branch(cx: &FileCx, span: Span) -> bool {
    cx.model.stmts.iter().any(|st| {
        let StmtKind::If { cond, then, orelse } = &st.kind else {
            return false;
        };
        if !st.span.contains(span) {
            return false;
        }
        let Some(value) = constant_flag(cx, *cond) else {
            return false;
        };
        let dead = if value { orelse } else { then };
        let (Some(&first), Some(&last)) = (dead.first(), dead.last()) else {
            return false;
        };
        Span::new(cx.stmt(first).span.start, cx.stmt(last).span.end).contains(span)
    })
}

/// The value of a condition made of a boolean literal or a module-level
/// flag assigned once to one, or of `not` it, or of an `and`/`or` its
/// left side decides.
fn constant_flag(cx: &FileCx, cond: ExprId) -> Option<bool> {
    if let Some(Lit::Bool(b)) = cx.model.literal(cond) {
        return Some(*b);
    }
    match &cx.expr(cx.model.strip(cond)).kind {
        ExprKind::Unary {
            op: UnOp::Not,
            operand,
        } => constant_flag(cx, *operand).map(|v| !v),
        // `if False and method == "PUT":` (a branch switched off by hand):
        // the left side decides the whole test.
        ExprKind::Logical { op, left, .. } => match (op, constant_flag(cx, *left)?) {
            (LogicalOp::And, false) => Some(false),
            (LogicalOp::Or, true) => Some(true),
            _ => None,
        },
        ExprKind::Name { .. } => match cx.model.literal(module_constant(cx, cond)?) {
            Some(Lit::Bool(b)) => Some(*b),
            _ => None,
        },
        _ => None,
    }
}

/// The value of a module-level name of this file assigned exactly once,
/// at the top level, and declared `global` by no function
/// (`PENDING = ["queued", "running"]`, `_IS_SYNC = False`).
pub fn module_constant(cx: &FileCx, e: ExprId) -> Option<ExprId> {
    let ExprKind::Name {
        id,
        resolved: Some(r),
    } = &cx.expr(cx.model.strip(e)).kind
    else {
        return None;
    };
    if r.strip_prefix(cx.model.module.as_str())
        .and_then(|t| t.strip_prefix('.'))
        != Some(id.as_str())
    {
        return None;
    }
    let mut value = None;
    for &s in &cx.func(FuncId(0)).body {
        if let StmtKind::Assign {
            targets, value: v, ..
        } = &cx.stmt(s).kind
            && targets
                .iter()
                .any(|&t| cx.model.name_of(t) == Some(id.as_str()))
        {
            if value.is_some() {
                return None;
            }
            value = Some((*v)?);
        }
    }
    // Assigned nowhere else (a function's `global` could change it).
    let elsewhere = cx.model.stmts.iter().any(
        |st| matches!(&st.kind, StmtKind::Global { names, .. } if names.iter().any(|n| n == id)),
    );
    value.filter(|_| !elsewhere)
}

/// Every `X = <...>Condition(..)` of the file (`threading.Condition`,
/// `asyncio.Condition`...): each target as written (`self._not_empty`) with
/// the constructor call.
pub fn condition_constructions<'a>(cx: &FileCx<'a>) -> Vec<(String, &'a Call)> {
    constructions(cx, |t| t.ends_with("Condition"))
}

/// Every `X = f(..)` of the file whose callee's target passes `built_by`:
/// each target as written (`self._lock`) with the call.
pub fn constructions<'a>(
    cx: &FileCx<'a>,
    built_by: impl Fn(&str) -> bool,
) -> Vec<(String, &'a Call)> {
    let mut out = Vec::new();
    for st in &cx.model.stmts {
        let StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } = &st.kind
        else {
            continue;
        };
        let Some(c) = cx.call(cx.model.strip(*v)) else {
            continue;
        };
        if !c.target.as_deref().is_some_and(&built_by) {
            continue;
        }
        out.extend(
            targets
                .iter()
                .filter_map(|&t| cx.model.dotted(t))
                .map(|d| (d, c)),
        );
    }
    out
}

/// The kind of result slot the call builds (knowledge `completion`:
/// `future`, `thread-future` or `event`), if it builds one. Nothing runs
/// behind such a slot: whoever fills it is elsewhere.
pub fn completion_kind<'a>(cx: &FileCx<'a>, c: &Call) -> Option<&'a str> {
    cx.effect(c, unsnarl_model::knowledge::Effect::Completion)
        .and_then(|e| e.kind.as_deref())
}

/// The call builds a bare asyncio future (`loop.create_future()`,
/// `asyncio.Future()`).
pub fn makes_asyncio_future(cx: &FileCx, c: &Call) -> bool {
    completion_kind(cx, c) == Some("future")
}
/// A private helper (`_ensure`, `_connect`) that the file calls, and only
/// ever calls while holding a lock (`async with self._lock: await
/// self._ensure()`): its callers serialize the check and the set. A public
/// method may be called from anywhere without the lock, so it still counts.
///
/// The callers may be private helpers themselves, called only under the
/// lock (`subscribe` holds it around `_create_subscriber()`, which calls
/// `_get_or_create_client()`): up to three calls up.
pub fn callers_hold_lock(cx: &FileCx, f: FuncId) -> bool {
    runs_under_locking_decorator(cx, f) || held_by_callers(cx, f, 3)
}

fn held_by_callers(cx: &FileCx, f: FuncId, depth: u8) -> bool {
    private_helper_called_only(cx, f, |e| {
        cx.tree.enclosing_stmt(e).is_some_and(|s| under_lock(cx, s)) || {
            let g = cx.func_of(e);
            g != f
                && (runs_under_locking_decorator(cx, g)
                    || (depth > 1 && held_by_callers(cx, g, depth - 1)))
        }
    })
}

/// The function is wrapped by a decorator of this file whose wrapper
/// calls it under a lock (`@operation_lock`, whose wrapper runs `async
/// with self._operation_lock: return await func(self, ...)`).
pub fn runs_under_locking_decorator(cx: &FileCx, f: FuncId) -> bool {
    decorator_calls_it_where(cx, f, |e| {
        cx.tree.enclosing_stmt(e).is_some_and(|s| under_lock(cx, s))
    })
}

/// The function is wrapped by a module-level decorator of this file whose
/// wrapper (the decorator or a function nested in it) calls the wrapped
/// function (its first parameter) at a call `pred` accepts.
pub fn decorator_calls_it_where(cx: &FileCx, f: FuncId, pred: impl Fn(ExprId) -> bool) -> bool {
    cx.func(f).decorators.iter().any(|d| {
        let d = d.rsplit('.').next().unwrap_or(d);
        cx.model.function_ids().any(|g| {
            let deco = cx.func(g);
            let Some(wrapped) = deco.params.first().map(|p| p.name.as_str()) else {
                return false;
            };
            deco.name == d
                && deco.class.is_none()
                && cx.with_nested(g).into_iter().any(|w| {
                    cx.body_calls(w).any(|e| {
                        cx.call(e)
                            .is_some_and(|c| cx.model.name_of(c.func) == Some(wrapped))
                            && pred(e)
                    })
                })
        })
    })
}

pub fn under_lock(cx: &FileCx, s: StmtId) -> bool {
    let named_lock = |e: ExprId| {
        cx.model
            .dotted(e)
            .is_some_and(|d| d.to_ascii_lowercase().contains("lock"))
    };
    // `self._lock`, a getter of one (`async with self._get_init_lock():`),
    // or one lock of a keyed table (`cls._locks[name]`,
    // `self._locks.setdefault(key, asyncio.Lock())`).
    let is_lock = |e: ExprId| {
        let e = cx.model.strip(e);
        crate::python::common::lock_kind(cx, e).is_some()
            || named_lock(e)
            || cx.call(e).is_some_and(|c| {
                (c.args.is_empty() && c.name.to_ascii_lowercase().ends_with("lock"))
                    || (matches!(c.name.as_str(), "get" | "setdefault")
                        && c.receiver.is_some_and(named_lock))
            })
            || matches!(&cx.expr(e).kind, ExprKind::Index { obj, .. } if named_lock(*obj))
    };
    // `await self._lock.acquire()` earlier in a block around `s`, released
    // elsewhere (in `close()`): held from there on like `async with`.
    let acquired = |st: StmtId| {
        matches!(&cx.stmt(st).kind, StmtKind::Expr(e)
            if matches!(&cx.expr(*e).kind, ExprKind::Await(inner)
                if cx.call(*inner).is_some_and(|c| c.name == "acquire"
                    && c.receiver.is_some_and(is_lock))))
    };
    std::iter::once(s)
        .chain(cx.tree.stmt_ancestors(s))
        .any(|a| match &cx.stmt(a).kind {
            StmtKind::With { items, .. } if a != s => items.iter().any(|it| is_lock(it.ctx)),
            _ => crate::util::containing_block(cx, a)
                .is_some_and(|b| b.iter().take_while(|&&x| x != a).any(|&x| acquired(x))),
        })
}

/// A coroutine function with no `await`, `async with` or `async for` of
/// its own (`q.put_nowait(msg)` and return): a task of it runs to its end
/// in its first step, and awaiting it never suspends the caller.
pub fn never_suspends(cx: &FileCx, f: FuncId) -> bool {
    let func = cx.func(f);
    func.is_async
        && !func.is_generator
        && crate::util::awaits_in_block(cx.model, &func.body).is_empty()
}

/// The collections `del` statements take from or unbind: `del d[k]` and
/// `del self._items[:n]` give `d` and `self._items`, `del x` gives `x`.
pub fn deleted_from<'a>(cx: &'a FileCx) -> impl Iterator<Item = ExprId> + 'a {
    cx.model.stmts.iter().flat_map(move |st| {
        let StmtKind::Delete(targets) = &st.kind else {
            return Vec::new();
        };
        targets
            .iter()
            .map(|&t| {
                let mut t = cx.model.strip(t);
                while let ExprKind::Index { obj, .. } = &cx.expr(t).kind {
                    t = cx.model.strip(*obj);
                }
                t
            })
            .collect()
    })
}

/// `if self._pool is None:` or `if not _client:`: the slot a test finds
/// missing, as written (`self._pool`, `_client`).
pub fn tested_as_missing(cx: &FileCx, cond: ExprId) -> Option<String> {
    let m = cx.model;
    match &cx.expr(m.strip(cond)).kind {
        ExprKind::Binary {
            op: BinOp::Is,
            left,
            right,
        } if matches!(m.literal(*right), Some(Lit::Null)) => m.dotted(*left),
        ExprKind::Unary {
            op: UnOp::Not,
            operand,
        } => m.dotted(*operand),
        _ => None,
    }
}

/// Like [`never_suspends`], also for a coroutine whose every suspension
/// is an `await` of a coroutine of the file that itself never suspends,
/// `depth` calls down (`async def analyze(x): return await compute(x)`
/// over a `compute` with no await): it too runs to its end in one step.
pub fn never_suspends_within(cx: &FileCx, f: FuncId, depth: u32) -> bool {
    if never_suspends(cx, f) {
        return true;
    }
    let func = cx.func(f);
    depth > 0
        && func.is_async
        && !func.is_generator
        && crate::util::awaited_values(cx.model, &func.body).is_some_and(|awaited| {
            // As in `runs_in_one_step`: a plain or own call, and every
            // function of the file by that name (overrides) does work
            // without suspending; a method on another object, or a stub a
            // subclass elsewhere fills, may suspend.
            awaited.iter().all(|&a| {
                cx.call(cx.model.strip(a)).is_some_and(|c| {
                    let own = c
                        .receiver
                        .is_none_or(|r| matches!(cx.model.name_of(r), Some("self" | "cls")));
                    own && cx.callee_in_file(c).is_some_and(|g| g != f)
                        && cx
                            .model
                            .function_ids()
                            .filter(|&g| cx.func(g).name == c.name)
                            .all(|g| {
                                g != f
                                    && does_work(cx, g)
                                    && never_suspends_within(cx, g, depth - 1)
                            })
                })
            })
        })
}

/// The awaited expression `inner` is a call of a coroutine of the file,
/// on `self` or as a plain function, that never suspends: it has no await
/// of its own, nor does any other function of the file by that name (an
/// override), and none is a stub a subclass elsewhere fills with awaits.
/// Awaiting it runs to its end in one step: no other task runs meanwhile.
/// (On another object, `await self._inner.resolve()`, the method is
/// another class's, which the name alone does not tell.)
pub fn runs_in_one_step(cx: &FileCx, inner: ExprId) -> bool {
    cx.call(cx.model.strip(inner)).is_some_and(|c| {
        let own = c
            .receiver
            .is_none_or(|r| matches!(cx.model.name_of(r), Some("self" | "cls")));
        own && cx.callee_in_file(c).is_some()
            && cx
                .model
                .function_ids()
                .filter(|&g| cx.func(g).name == c.name)
                .all(|g| never_suspends(cx, g) && does_work(cx, g))
    })
}

/// The function has a body of its own: not an abstract method or a stub
/// (`...`, `pass`, a docstring, `raise NotImplementedError`) that a
/// subclass, perhaps in another file, fills with awaits.
pub(crate) fn does_work(cx: &FileCx, g: FuncId) -> bool {
    let f = cx.func(g);
    !f.decorators.iter().any(|d| d.ends_with("abstractmethod"))
        && f.body.iter().any(|&s| match &cx.stmt(s).kind {
            StmtKind::Pass | StmtKind::Raise(_) => false,
            StmtKind::Expr(e) => !matches!(cx.expr(*e).kind, ExprKind::Literal(_)),
            _ => true,
        })
}

/// The call `e` spawns a task or runs awaitables side by side
/// (`create_task`, `gather`, `wait`, `as_completed`, a task group). With
/// `joined_ok`, an awaited `gather` or spawn does not count: its tasks have
/// all finished when it returns.
pub fn starts_tasks_at(cx: &FileCx, e: ExprId, c: &Call, joined_ok: bool) -> bool {
    // An awaited spawn has finished when the await returns (and an API
    // client's `await client.create_task(todo)` makes a to-do item).
    (is_task_spawn(cx, c) && !(joined_ok && cx.is_awaited(e)))
        || matches!(
            c.name.as_str(),
            "as_completed" | "wait" | "create_task_group" | "TaskGroup"
        )
        || (c.name == "gather" && !(joined_ok && cx.is_awaited(e)))
}

/// The integer value of `e` in `f` (of a conditional, the larger of its
/// two), where a name counts when the function
/// binds it exactly once, to a constant (`max_attempts = 2`), or, binding
/// it not at all, the module does (`retries = _RETRY_ATTEMPTS` with
/// `_RETRY_ATTEMPTS = 2` at the top), up to `depth` names deep.
pub fn int_constant(cx: &FileCx, f: FuncId, e: ExprId, depth: u8) -> Option<i128> {
    // `None` when `g` does not bind the name, `Some(None)` when it binds
    // it more than once or to no value.
    let sole = |g: FuncId, name: &str| -> Option<Option<ExprId>> {
        let mut bound = values_bound_to(cx, g, name);
        let first = bound.next()?;
        Some(if bound.next().is_some() { None } else { first })
    };
    // `attempts = 2 if retry else 1`: at most the larger of the two.
    if let ExprKind::Ternary { then, orelse, .. } = &cx.expr(cx.model.strip(e)).kind {
        return match (
            int_constant(cx, f, *then, depth),
            int_constant(cx, f, *orelse, depth),
        ) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
    }
    cx.model.int_value_with(e, &|name| {
        if depth == 0 {
            return None;
        }
        match sole(f, name) {
            Some(v) => int_constant(cx, f, v?, depth - 1),
            None if f != FuncId(0) => {
                int_constant(cx, FuncId(0), sole(FuncId(0), name)??, depth - 1)
            }
            None => None,
        }
    })
}

/// How many values `range(...)` yields, when its arguments are constants
/// (literals, or names the function binds once to one).
pub fn range_len(cx: &FileCx, c: &Call) -> Option<i128> {
    let f = cx.func_of(c.func);
    let arg = |i: usize| c.args.get(i).and_then(|a| int_constant(cx, f, a.value, 2));
    let (start, stop) = match c.args.len() {
        1 => (0, arg(0)?),
        2 => (arg(0)?, arg(1)?),
        _ => return None,
    };
    Some((stop - start).max(0))
}

/// `self.nets |= parse(await r.text())` on an attribute the file only
/// ever sets to a new set, list or dict (`self.nets = set()`): `|=`, `-=`
/// (and `+=` on a list) change that one object in place and store it back,
/// so what other tasks added meanwhile is kept; only a task putting a new
/// object there could lose it, and none does.
pub fn updated_in_place(cx: &FileCx, globals: &HashSet<String>, key: &str, op: BinOp) -> bool {
    let fits = |kind: CollKind| match op {
        BinOp::Add => kind == CollKind::List,
        BinOp::Bit | BinOp::Sub => matches!(kind, CollKind::Set | CollKind::Dict),
        _ => false,
    };
    let fresh_container = |v: ExprId| match &cx.expr(cx.model.strip(v)).kind {
        ExprKind::Collection { kind, .. } => fits(*kind),
        // A bytearray or deque grows in place under `+=` whatever it
        // starts with (`bytearray(size)`, `deque(maxlen=n)`).
        ExprKind::Call(c)
            if matches!(
                c.target.as_deref(),
                Some("builtins.bytearray" | "collections.deque")
            ) =>
        {
            fits(CollKind::List)
        }
        ExprKind::Call(c) => {
            c.args.is_empty()
                && match c.target.as_deref() {
                    Some("builtins.list") => fits(CollKind::List),
                    Some("builtins.set") => fits(CollKind::Set),
                    Some("builtins.dict") => fits(CollKind::Dict),
                    _ => false,
                }
        }
        _ => false,
    };
    let mut sets = 0;
    for s in 0..cx.model.stmts.len() as u32 {
        let s = StmtId(s);
        if matches!(cx.tree.stmt_parent(s), Parent::Detached) {
            continue;
        }
        let StmtKind::Assign {
            targets,
            value,
            op: AssignOp::Plain | AssignOp::Declare { .. },
        } = &cx.stmt(s).kind
        else {
            continue;
        };
        // An entry written (`self.nets[k] = v`) keeps the object.
        if !targets.iter().any(|&t| {
            !matches!(cx.expr(cx.model.strip(t)).kind, ExprKind::Index { .. })
                && shared_state(cx, globals, t).as_deref() == Some(key)
        }) {
            continue;
        }
        match (targets.as_slice(), value) {
            ([_], Some(v)) if fresh_container(*v) => sets += 1,
            _ => return false,
        }
    }
    sets > 0
}

/// A string written out: a literal, or the text of an f-string before its
/// first placeholder (`f"http://localhost:{port}/docs"`: `http://localhost:`).
pub fn written_text<'a>(cx: &FileCx<'a>, e: ExprId) -> Option<&'a str> {
    if let Some(Lit::Str(text)) = cx.model.literal(e) {
        return Some(text.as_str());
    }
    if !matches!(cx.expr(e).kind, ExprKind::Other(_)) {
        return None;
    }
    let src = cx.source(cx.expr(e).span);
    let body = src
        .strip_prefix(['f', 'F'])
        .or_else(|| src.strip_prefix("rf"))
        .or_else(|| src.strip_prefix("fr"))?;
    let body = body.strip_prefix(['"', '\''])?;
    Some(body.split(['{', '"', '\'']).next().unwrap_or(""))
}
