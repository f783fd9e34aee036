//! A message acknowledged before the work it asks for (`double-execution`,
//! the ack-before-durable shape), shared by the rules of the four languages.
//!
//! An acknowledgement (knowledge effect `ack`) tells the broker it may
//! forget the message. Work that runs after it in the same pass through the
//! handler is then unprotected: a crash, a deploy or an exception there
//! loses the message, and nothing redelivers it. The work we look for after
//! the ack, in the statements that follow it up to the enclosing loop (a
//! later iteration handles another message):
//!
//! - an awaited call (async handlers do their I/O through awaits);
//! - a call the knowledge tables know does I/O (`blocking`,
//!   `needs_timeout`);
//! - a call of a function of the project, of a method on an unknown
//!   receiver or of a callback, that is handed the message (the ack's
//!   receiver or arguments, or a parameter of the handler when the ack is
//!   made from one).
//!
//! Kafka offset commits count as acks (they are `ack` entries of the
//! tables): committing before processing loses the message the same way.
//!
//! Logging, other acks, acks in `except`/`catch`/`finally` blocks or Go
//! `defer`s (which run after the work), and acks of a message fetched in
//! the ack's own expression (nothing after it can reach that message) are
//! not reported.

use crate::context::FileCx;
use crate::rule::RuleMeta;
use std::collections::HashSet;
use unsnarl_model::walk::{Child, Parent, exprs_in_block, exprs_under, for_each_stmt_child};
use unsnarl_model::*;

/// Reports each ack call followed by work on the message. `how` is the
/// language's way to acknowledge after the work; the rest of the advice is
/// the same everywhere.
pub fn check(cx: &FileCx, meta: &'static RuleMeta, how: &str, out: &mut Vec<Finding>) {
    let fix = format!(
        "{how}, and make the work safe to run twice, since a crash between the work and the ack redelivers it; if losing messages is acceptable here, say so with a suppression"
    );
    let acks: Vec<(ExprId, &Call)> = match cx.kb.names_of(Effect::Ack) {
        Some(names) if names.is_empty() => return,
        Some(names) => cx.calls_named(&names),
        None => (0..cx.model.exprs.len() as u32)
            .map(ExprId)
            .filter_map(|e| cx.call(e).map(|c| (e, c)))
            .collect(),
    };
    for (id, c) in acks {
        // A broker's ack is a method of the message, channel or session; a
        // plain `ack(...)` is a callback (socket.io's reply to its client).
        if c.receiver.is_none() || cx.effect(c, Effect::Ack).is_none() {
            continue;
        }
        if own_ack(cx, c) {
            continue;
        }
        // A test acks a fake message and then reads back what was recorded.
        if cx.func(cx.func_of(id)).is_test {
            continue;
        }
        if c.receiver.is_some_and(|r| temporary_message(cx, r)) {
            continue;
        }
        let Some(stmt) = ack_statement(cx, id) else {
            continue;
        };
        if runs_after_the_work(cx, stmt) {
            continue;
        }
        let message = message_names(cx, id, c);
        // Work on the message before the ack: the ack follows the work,
        // and what comes after it reports or cleans up.
        if worked_before(cx, stmt, cx.expr(id).span.start, &message) {
            continue;
        }
        let Some((work, why)) = first_work_after(cx, stmt, &message) else {
            continue;
        };
        let work_span = cx.expr(work).span;
        let line = cx.line_of(work_span);
        let mut f = cx.finding(
            meta,
            cx.expr(id).span,
            format!(
                "the message is acknowledged before the work on it is done (`{}` at line {line}, {why}): if the process stops or that work fails after the ack, the broker has already forgotten the message and it is lost, never retried",
                cx.snippet(work_span),
            ),
            fix.clone(),
        );
        f.related.push(Related {
            file: None,
            span: work_span,
            message: "work done after the acknowledgement".into(),
        });
        out.push(f);
    }
}

/// An ack of the file's own protocol: a method the file defines under that
/// name (`def ack(self): self._last_ack = time.perf_counter()` on its
/// heartbeat thread) that acknowledges nothing to a broker itself, called
/// on a receiver of no known broker type (`self._keep_alive.ack()`).
fn own_ack(cx: &FileCx, c: &Call) -> bool {
    let untyped_or_own = c.target.is_none() || cx.callee_in_file(c).is_some();
    untyped_or_own
        && cx.model.function_ids().any(|f| {
            let func = cx.func(f);
            func.name == c.name
                && func.class.is_some()
                && !cx.body_calls(f).any(|x| {
                    cx.call(x)
                        .is_some_and(|k| cx.effect(k, Effect::Ack).is_some())
                })
        })
}

/// The acknowledged message is a temporary, fetched in the ack's own
/// expression (`messages.next().await.unwrap()?.ack()`): nothing after the
/// ack can reach it, so what follows is not work on it.
fn temporary_message(cx: &FileCx, recv: ExprId) -> bool {
    let mut cur = recv;
    loop {
        match &cx.expr(cur).kind {
            ExprKind::Await(inner) | ExprKind::Try(inner) => cur = *inner,
            ExprKind::Call(c) => match c.receiver {
                Some(r)
                    if matches!(
                        c.name.as_str(),
                        "unwrap" | "expect" | "ok" | "unwrap_or_default"
                    ) =>
                {
                    cur = r
                }
                _ => return true,
            },
            _ => return false,
        }
    }
}

/// The statement of an ack made for its effect: alone, awaited, unwrapped
/// (`?`, `.expect(...)`), or with only its error kept (`err := d.Ack(false)`,
/// `if let Err(e) = delivery.ack(..).await`). An ack whose value is used
/// otherwise (`args.push(this.ack(id))`, `let done = stream.ack(frame)`)
/// is some other protocol's acknowledgement, not a broker's.
fn ack_statement(cx: &FileCx, id: ExprId) -> Option<StmtId> {
    let mut cur = id;
    loop {
        match cx.tree.expr_parent(cur) {
            Parent::Expr(p) => match &cx.expr(p).kind {
                ExprKind::Await(_) | ExprKind::Try(_) | ExprKind::Cast(_) => cur = p,
                ExprKind::Let { value, .. } if *value == cur => cur = p,
                // `.expect("ack")` on it: the callee is an attribute of
                // the value, and the call's receiver.
                ExprKind::Attr { obj, name, .. }
                    if *obj == cur
                        && matches!(
                            name.as_ref(),
                            "unwrap" | "expect" | "ok" | "map_err" | "catch" | "then"
                        ) =>
                {
                    match cx.tree.expr_parent(p) {
                        Parent::Expr(call) if cx.call(call).is_some_and(|c| c.func == p) => {
                            cur = call
                        }
                        _ => return None,
                    }
                }
                _ => return None,
            },
            Parent::Stmt(s) => {
                return match &cx.stmt(s).kind {
                    StmtKind::Expr(_) => Some(s),
                    StmtKind::If { cond, .. } | StmtKind::While { cond, .. } if *cond == cur => {
                        Some(s)
                    }
                    StmtKind::Assign { targets, .. }
                        if targets.iter().all(|&t| {
                            matches!(cx.model.name_of(t), Some("_" | "err" | "error" | "e"))
                        }) =>
                    {
                        Some(s)
                    }
                    _ => None,
                };
            }
            _ => return None,
        }
    }
}

/// The ack sits where it runs after the work anyway: a Go `defer`, or an
/// `except`/`catch` handler or `finally` block (the error path acks a
/// message it gives up on, or acks after the body ran).
fn runs_after_the_work(cx: &FileCx, stmt: StmtId) -> bool {
    if matches!(cx.stmt(stmt).kind, StmtKind::Defer(_)) {
        return true;
    }
    let mut child = stmt;
    for parent in cx.tree.stmt_ancestors(stmt) {
        if let StmtKind::Try {
            handlers, finally, ..
        } = &cx.stmt(parent).kind
        {
            let inside =
                |b: &Block| unsnarl_model::walk::stmts_in_block(cx.model, b).contains(&child);
            if handlers.iter().any(|h| inside(&h.body)) || finally.as_ref().is_some_and(inside) {
                return true;
            }
        }
        child = parent;
    }
    false
}

/// The names the ack is about: the roots of its receiver and arguments
/// (`msg` of `msg.ack()`, `channel.ack(msg)`, `ch.basic_ack(delivery_tag=
/// method.delivery_tag)`), and, when one of them is a parameter of the
/// handler, every parameter (pika hands the body and the delivery tag in
/// separate parameters).
fn message_names(cx: &FileCx, id: ExprId, c: &Call) -> HashSet<String> {
    // `message.ack()`, `d.Ack(false)`: the receiver is the message;
    // `client.ack(message)`: the receiver is the client, and closing it is
    // no work on the message.
    let passes_message = c.args.iter().any(|a| cx.model.literal(a.value).is_none());
    let receiver = c.receiver.filter(|_| !passes_message);
    let mut names: HashSet<String> = receiver
        .into_iter()
        .chain(c.args.iter().map(|a| a.value))
        .flat_map(|e| unsnarl_model::walk::exprs_under(cx.model, e))
        .filter_map(|e| cx.model.name_of(e).map(str::to_string))
        .collect();
    let f = cx.func(cx.func_of(id));
    if f.params.iter().any(|p| names.contains(p.name.as_str())) {
        names.extend(f.params.iter().map(|p| p.name.to_string()));
    }
    // The object the handler is a method of is not the message: every call
    // on it would look like work on the message (`self.reschedule()`).
    for receiver in ["self", "this", "cls"] {
        names.remove(receiver);
    }
    names
}

/// Work on the message between the start of the ack's loop body (or
/// function) and the ack: a call handed the message that is awaited, does
/// I/O or is the project's own code.
fn worked_before(cx: &FileCx, stmt: StmtId, ack_start: u32, message: &HashSet<String>) -> bool {
    let f = cx.tree.stmt_func(stmt);
    let region: &Block = cx
        .tree
        .stmt_ancestors(stmt)
        .find_map(|a| match &cx.stmt(a).kind {
            StmtKind::For { body, .. } | StmtKind::While { body, .. } | StmtKind::Loop { body } => {
                Some(body)
            }
            _ => None,
        })
        .unwrap_or(&cx.func(f).body);
    exprs_in_block(cx.model, region).into_iter().any(|e| {
        cx.expr(e).span.end <= ack_start
            && cx.call(e).is_some_and(|c| {
                handed_the_message(cx, c, message) && work(cx, e, c, message).is_some()
            })
    })
}

/// Why a call counts as work on the message, the strongest reason first.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Work {
    Awaited,
    Io,
    /// The project's code (or a callback) is handed the message.
    Handed,
}

impl Work {
    fn why(self) -> &'static str {
        match self {
            Work::Awaited => "an awaited call",
            Work::Io => "which does I/O",
            Work::Handed => "which is handed the message",
        }
    }
}

/// How a call counts as work on the message; `None` for bookkeeping (other
/// acks, logging, metrics) and for everything else.
fn work(cx: &FileCx, e: ExprId, c: &Call, message: &HashSet<String>) -> Option<Work> {
    if cx.effect(c, Effect::Ack).is_some()
        || cx.effect(c, Effect::Logging).is_some()
        || test_assertion(cx, c)
        || telemetry(cx, c)
        || unwraps(cx, c)
        || local_bookkeeping(cx, e, c)
        || decodes_for_the_caller(cx, e, c)
    {
        None
    } else if cx.is_awaited(e) {
        Some(Work::Awaited)
    } else if cx
        .effect(c, Effect::Blocking)
        .is_some_and(|b| b.kind.as_deref() != Some("rendezvous"))
        || cx.effect(c, Effect::NeedsTimeout).is_some()
    {
        Some(Work::Io)
    } else if handed_the_message(cx, c, message) && own_code(cx, c) {
        Some(Work::Handed)
    } else {
        None
    }
}

/// The call after `stmt` that does the message's work, and why it counts:
/// the first awaited or I/O call (the strongest evidence), else the first
/// call of the project's code handed the message.
fn first_work_after(
    cx: &FileCx,
    stmt: StmtId,
    message: &HashSet<String>,
) -> Option<(ExprId, &'static str)> {
    let mut handed = None;
    for s in following(cx, stmt, message) {
        for e in exprs_in_block(cx.model, &vec![s]) {
            let Some(c) = cx.call(e) else { continue };
            match work(cx, e, c, message) {
                Some(Work::Handed) => {
                    handed.get_or_insert((e, Work::Handed.why()));
                }
                Some(w) => return Some((e, w.why())),
                None => {}
            }
        }
    }
    handed
}

/// An item added to a container the function (or one around it) made
/// itself, empty (`acked = []` ... `acked.append(message.payload)`):
/// in-memory bookkeeping of what was handled, not work on the message.
fn local_bookkeeping(cx: &FileCx, e: ExprId, c: &Call) -> bool {
    const ADDS: &[&str] = &["append", "add", "extend", "insert", "appendleft", "push"];
    let Some(name) = c.receiver.and_then(|r| cx.model.name_of(cx.model.strip(r))) else {
        return false;
    };
    if !ADDS.contains(&c.name.as_str()) {
        return false;
    }
    let empty_container = |v: ExprId| match &cx.expr(cx.model.strip(v)).kind {
        ExprKind::Collection { elems, .. } => elems.is_empty(),
        ExprKind::Call(k) => {
            k.args.is_empty()
                && k.receiver.is_none()
                && matches!(k.name.as_str(), "list" | "set" | "dict")
        }
        _ => false,
    };
    cx.tree.func_ancestors(cx.model, cx.func_of(e)).any(|g| {
        cx.body_stmts(g).iter().any(|&s| {
            matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(v), .. }
                if targets.iter().any(|&t| cx.model.name_of(t) == Some(name)) && empty_container(*v))
        })
    })
}

/// A mock's or a test's check (`put.assert_called_once_with(..)`,
/// `self.assertEqual(..)`) in a test: it reads what the ack did, it does
/// no work on the message.
fn test_assertion(cx: &FileCx, c: &Call) -> bool {
    c.receiver.is_some() && c.name.starts_with("assert") && cx.func(cx.func_of(c.func)).is_test
}

/// The body decoded and handed back (`return self.serializer.loads(
/// message.body)`, `return JSON.parse(msg.content)`): a pull-style
/// `receive()` whose caller does the work; decoding is not that work.
fn decodes_for_the_caller(cx: &FileCx, e: ExprId, c: &Call) -> bool {
    matches!(
        c.name.as_str(),
        "loads"
            | "decode"
            | "parse"
            | "parse_raw"
            | "model_validate_json"
            | "deserialize"
            | "unpackb"
    ) && matches!(cx.tree.expr_parent(e), unsnarl_model::walk::Parent::Stmt(s)
        if matches!(cx.stmt(s).kind, StmtKind::Return(Some(v)) if cx.model.strip(v) == e))
}

/// Rust's unwrapping and borrowing of a value (`let msg = msg.unwrap();`,
/// `msg.as_ref()`): taking the message out of its `Result`, not work on it.
fn unwraps(cx: &FileCx, c: &Call) -> bool {
    cx.lang == Language::Rust
        && c.receiver.is_some()
        && matches!(
            c.name.as_str(),
            "unwrap" | "expect" | "ok" | "as_ref" | "as_mut" | "clone" | "unwrap_or_default"
        )
}

/// A method of a logger or a metrics client the tables do not know
/// (`this.logger.info(...)`, `self.metrics.incr(...)`): reporting on the
/// message is not working on it.
fn telemetry(cx: &FileCx, c: &Call) -> bool {
    let Some(recv) = c.receiver.and_then(|r| cx.model.dotted(r)) else {
        return false;
    };
    let last = recv
        .rsplit('.')
        .next()
        .unwrap_or(&recv)
        .to_ascii_lowercase();
    ["log", "metric", "stats"].iter().any(|w| last.contains(w))
}

/// The call's receiver or arguments mention one of `message`'s names.
fn handed_the_message(cx: &FileCx, c: &Call, message: &HashSet<String>) -> bool {
    c.receiver
        .into_iter()
        .chain(c.args.iter().map(|a| a.value))
        .flat_map(|e| unsnarl_model::walk::exprs_under(cx.model, e))
        .any(|e| cx.model.name_of(e).is_some_and(|n| message.contains(n)))
}

/// A call whose body is the project's (a function of this file or of the
/// scanned tree), or a method of a value of unknown type: something that
/// may do the work, unlike a known library call such as `json.loads`.
fn own_code(cx: &FileCx, c: &Call) -> bool {
    if cx.callee_in_file(c).is_some() {
        return true;
    }
    match c.target.as_deref() {
        Some(t) => cx.index.resolve(cx.lang, t, cx.file).is_some(),
        // A method of a value of unknown type (`store.save(msg)`), or a
        // callback the handler was given (`process(msg)`).
        None => !c.is_macro,
    }
}

/// The statements that run after `s` in the same pass through its
/// function: the rest of its block, then the rest of each enclosing block,
/// up to the innermost loop. A `return`, `raise`, `break` or `continue`
/// ends the flow.
fn following(cx: &FileCx, s: StmtId, message: &HashSet<String>) -> Vec<StmtId> {
    let mut out = Vec::new();
    let mut cur = s;
    loop {
        let (block, parent) = match cx.tree.stmt_parent(cur) {
            Parent::Function(f) => (&cx.func(f).body, None),
            Parent::Stmt(p) => {
                let mut found = None;
                for_each_stmt_child(cx.model, p, &mut |ch| {
                    if let Child::Block(b) = ch
                        && b.contains(&cur)
                    {
                        found = Some(b);
                    }
                });
                match found {
                    Some(b) => (b, Some(p)),
                    None => return out,
                }
            }
            _ => return out,
        };
        let at = block.iter().position(|&x| x == cur).unwrap_or(block.len());
        for &next in &block[at + 1..] {
            out.push(next);
            if matches!(
                cx.stmt(next).kind,
                StmtKind::Return(_) | StmtKind::Raise(_) | StmtKind::Break | StmtKind::Continue
            ) {
                return out;
            }
        }
        match parent {
            Some(p)
                if !matches!(
                    cx.stmt(p).kind,
                    StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::Loop { .. }
                ) && !binds_the_message(cx, p, message) =>
            {
                cur = p
            }
            _ => return out,
        }
    }
}

/// `if let Some(msg) = sub.next().await { .. }` binds the message: after
/// that block, nothing can reach it, so what follows is not work on it.
fn binds_the_message(cx: &FileCx, s: StmtId, message: &HashSet<String>) -> bool {
    let StmtKind::If { cond, .. } = &cx.stmt(s).kind else {
        return false;
    };
    let ExprKind::Let { pattern, .. } = cx.expr(*cond).kind else {
        return false;
    };
    exprs_under(cx.model, pattern)
        .into_iter()
        .any(|x| cx.model.name_of(x).is_some_and(|n| message.contains(n)))
}
