//! What can and cannot reject: functions of the file whose promise cannot
//! reject (every await caught, every returned promise handled) and
//! deferreds a file settles only by resolving. Shared by the rules about
//! unhandled rejections (JS001, JS009).

use crate::context::FileCx;
use unsnarl_model::*;

/// `this.done`, a deferred (a promise carrying its own `resolve` and
/// `reject`) that this file settles only by resolving: it calls
/// `this.done.resolve(..)` (an error, if any, passed as the value) and
/// never `this.done.reject(..)`. A field is settled by its own class, so a
/// rejection from elsewhere is not expected. The same field of an object
/// of another name (`feed.done` for a `Feed` of this file whose methods
/// settle `this.done`) is judged by every settling of a field of that name
/// in the file.
pub fn resolve_only_deferred(cx: &FileCx, field: &str) -> bool {
    let Some((root, last)) = field.rsplit_once('.') else {
        return false;
    };
    let own = field.starts_with("this.");
    // Another object's field: only one read off a plain name (`feed.x`),
    // settled by a class of this file (`this.x.resolve(..)`).
    if !own && root.contains('.') {
        return false;
    }
    let in_class = format!("this.{last}");
    let mut resolved = false;
    for e in &cx.model.exprs {
        let ExprKind::Call(c) = &e.kind else { continue };
        if !matches!(c.name.as_str(), "resolve" | "reject") {
            continue;
        }
        let Some(on) = c.receiver.and_then(|r| cx.model.dotted(r)) else {
            continue;
        };
        let same = if own {
            on == field
        } else {
            on.rsplit_once('.').is_some_and(|(_, l)| l == last)
        };
        if same {
            if c.name == "reject" {
                return false;
            }
            resolved |= own || on == in_class;
        }
    }
    resolved
}

/// An await of a deferred field that [`resolve_only_deferred`] says cannot
/// reject, directly (`await this.ready`) or through its value accessor
/// (`await this.#ready?.valueOrThrow()`), when every deferred the file
/// stores there is made without options (`Deferred.create()`: no timeout
/// that would reject it).
pub fn awaits_resolve_only_deferred(cx: &FileCx, awaited: ExprId) -> bool {
    let e = cx.model.strip(awaited);
    let field = match &cx.expr(e).kind {
        ExprKind::Attr { .. } => e,
        ExprKind::Call(c)
            if c.args.is_empty()
                && matches!(
                    c.name.as_str(),
                    "valueOrThrow" | "promise" | "wait" | "value"
                ) =>
        {
            match c.receiver {
                Some(r) => r,
                None => return false,
            }
        }
        _ => return false,
    };
    let Some(name) = cx.model.dotted(field) else {
        return false;
    };
    name.starts_with("this.") && resolve_only_deferred(cx, &name) && made_without_options(cx, &name)
}

/// Every value the file stores in `field` is a call with no arguments, and
/// there is at least one.
fn made_without_options(cx: &FileCx, field: &str) -> bool {
    let mut any = false;
    for s in &cx.model.stmts {
        let StmtKind::Assign { targets, value, .. } = &s.kind else {
            continue;
        };
        if !targets
            .iter()
            .any(|&t| cx.model.dotted(t).as_deref() == Some(field))
        {
            continue;
        }
        // A declaration without a value (`#ready?: Deferred<void>;`) stores
        // nothing.
        let Some(v) = value else { continue };
        match cx.call(cx.model.strip(*v)) {
            Some(c) if c.args.is_empty() => any = true,
            _ => return false,
        }
    }
    any
}

pub fn is_chain_link(c: &Call) -> bool {
    c.receiver.is_some() && matches!(c.name.as_str(), "then" | "catch" | "finally")
}

/// An async function of this file whose every await is inside a
/// `try`/`catch`, that throws nothing itself and returns no promise it
/// did not await (but a call of itself, a retry): its promise cannot
/// reject, so dropping it loses nothing (a deliberate background task).
pub fn guarded_callee(cx: &FileCx, c: &Call) -> bool {
    guarded_callee_within(cx, c, 0) || never_rejects_in_project(cx, c)
}

/// An async function of the project, in this file or another, that catches
/// what it awaits, through the project functions it awaits outside a `try`
/// (the index's `never_rejects`, settled across files): the same judgment
/// as [`guarded_callee`], minus what the index cannot see (which callees of
/// this file only resolve deferreds).
pub fn never_rejects_in_project(cx: &FileCx, c: &Call) -> bool {
    c.target.as_deref().is_some_and(|t| {
        cx.index
            .resolve(cx.lang, t, cx.file)
            .is_some_and(|i| cx.index.summary(i).never_rejects)
    })
}

/// [`guarded_callee`], `depth` awaited calls deep already.
pub(crate) fn guarded_callee_within(cx: &FileCx, c: &Call, depth: usize) -> bool {
    let Some(f) = local_callee(cx, c) else {
        return false;
    };
    if !cx.func(f).is_async {
        return returns_only_handled(cx, f);
    }
    // A call of something else, or a field that may hold a promise made
    // elsewhere (`return this.#running`, set to a chain by `??=`).
    // One that cannot reject (`new Promise((resolve) => ..)`) passes on
    // nothing.
    let passes_on_a_promise = super::common::stmts_of(cx, f).any(|s| {
        matches!(cx.stmt(s).kind, StmtKind::Return(Some(v))
            if cx.call(cx.model.strip(v)).is_some_and(|k| local_callee(cx, k) != Some(f))
                    && !handled_promise(cx, f, v, 0)
                || matches!(cx.expr(cx.model.strip(v)).kind, ExprKind::Attr { .. }))
    });
    !passes_on_a_promise
        && super::common::unguarded_await_within(cx, f, depth).is_none()
        && super::common::stmts_of(cx, f).all(|s| {
            !matches!(cx.stmt(s).kind, StmtKind::Raise(_)) || {
                let e = cx.stmt(s).span;
                super::common::stmts_of(cx, f).any(|t| {
                    matches!(&cx.stmt(t).kind, StmtKind::Try { body, handlers, .. }
                        if !handlers.is_empty() && super::common::block_contains(cx, body, s))
                        && cx.stmt(t).span.start <= e.start
                })
            }
        })
}

/// The function of this file a call resolves to.
pub fn local_callee(cx: &FileCx, c: &Call) -> Option<FuncId> {
    let t = c.target.as_deref()?;
    cx.model
        .function_ids()
        .find(|&f| f.0 != 0 && cx.func(f).qualname == t)
}

/// A plain function every `return` of which gives a promise that cannot
/// reject: a chain with a `.catch(...)` or a two-callback `.then` (only
/// `.then`/`.finally` steps after it),
/// `Promise.resolve()`, or a local the function itself wraps with
/// `.catch(...)` (`p = p.catch(noop)`). The callee already handles the
/// rejection, so the caller has nothing to add.
fn returns_only_handled(cx: &FileCx, f: FuncId) -> bool {
    let mut any = false;
    for s in super::common::stmts_of(cx, f) {
        if let StmtKind::Return(Some(v)) = cx.stmt(s).kind {
            if !handled_promise(cx, f, v, 0) {
                return false;
            }
            any = true;
        }
    }
    any
}

/// The file attaches a rejection handler to the promise held in `field`
/// itself (`this.stub.then(ok, onErr)`, `this.ready.catch(log)`): a
/// promise with a handler never becomes an unhandled rejection, so handing
/// out the same promise (`initialize() { .. return this.stub }`) and
/// dropping it loses nothing.
fn handler_attached_to(cx: &FileCx, field: &str) -> bool {
    cx.model.exprs.iter().any(|x| match &x.kind {
        ExprKind::Call(c) => {
            ((c.name == "then" && c.args.len() >= 2) || (c.name == "catch" && !c.args.is_empty()))
                && c.receiver
                    .is_some_and(|r| cx.model.dotted(r).as_deref() == Some(field))
        }
        _ => false,
    })
}

fn handled_promise(cx: &FileCx, f: FuncId, v: ExprId, depth: usize) -> bool {
    if depth > 6 {
        return false;
    }
    let v = cx.model.strip(v);
    match &cx.expr(v).kind {
        ExprKind::Ternary { then, orelse, .. } => {
            handled_promise(cx, f, *then, depth + 1) && handled_promise(cx, f, *orelse, depth + 1)
        }
        ExprKind::Call(c) => {
            // `.catch()` with no handler handles nothing: the promise it
            // returns rejects just the same.
            if crate::index::js_settles_without_rejecting(cx.model, c) {
                return true;
            }
            // `.finally(cb)` or `.then(cb)` after the handler: only a
            // throwing callback could reject it, as for any chain.
            is_chain_link(c)
                && c.name != "catch"
                && c.receiver
                    .is_some_and(|r| handled_promise(cx, f, r, depth + 1))
        }
        ExprKind::Attr { .. } => cx
            .model
            .dotted(v)
            .is_some_and(|d| resolve_only_deferred(cx, &d) || handler_attached_to(cx, &d)),
        ExprKind::Name { id, .. } => {
            // `promise = promise.catch(noop)` somewhere in the function.
            super::common::exprs_of(cx, f).any(|e| {
                matches!(&cx.expr(e).kind, ExprKind::AssignExpr { target, value, .. }
                    if cx.model.name_of(*target) == Some(id.as_str())
                        && handled_promise(cx, f, *value, depth + 1))
            }) || super::common::stmts_of(cx, f).any(|s| {
                matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(val), op: AssignOp::Plain }
                    if targets.iter().any(|&t| cx.model.name_of(t) == Some(id.as_str()))
                        && handled_promise(cx, f, *val, depth + 1))
            })
        }
        _ => false,
    }
}

/// `new Promise(resolve => ...)` (no `reject` parameter, or one it never
/// uses), or a `timers/promises` timer given no abort signal, possibly
/// followed by `.then`/`.finally` steps.
pub fn resolve_only_promise(cx: &FileCx, v: ExprId) -> bool {
    let mut cur = cx.model.strip(v);
    for _ in 0..8 {
        let Some(c) = cx.call(cur) else { return false };
        // `await wait(50)` with `setTimeout as wait` from `timers/promises`:
        // a timer rejects only when an abort signal it was given fires.
        if matches!(
            c.target.as_deref(),
            Some(
                "timers/promises.setTimeout"
                    | "timers/promises.setImmediate"
                    | "timers/promises.scheduler.wait"
            )
        ) {
            return !c
                .args
                .iter()
                .any(|a| cx.source(cx.expr(a.value).span).contains("signal"));
        }
        if c.is_new {
            return c.target.as_deref() == Some("Promise")
                && c.positional(0)
                    .and_then(|a| super::common::callback_fn(cx, a))
                    .is_some_and(|exec| crate::index::executor_never_rejects(cx.model, exec));
        }
        if !is_chain_link(c) || c.name == "catch" {
            return false;
        }
        let Some(r) = c.receiver else { return false };
        cur = cx.model.strip(r);
    }
    false
}
