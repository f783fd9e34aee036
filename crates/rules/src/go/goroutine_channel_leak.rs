//! GO003: a goroutine blocked forever on a channel whose other side left.

use super::common::{self, ChanCap, ChanUse};
use super::flow::{self, Flow};
use super::locks::evaluated_exprs;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::{Parent, exprs_under};
use unsnarl_model::*;

pub struct GoroutineChannelLeak;

pub static META: RuleMeta = RuleMeta {
    id: "GO003",
    name: "goroutine-channel-leak",
    category: Category::ChannelMisuse,
    severity: Severity::High,
    languages: &[Language::Go],
    summary: "A goroutine sends on (or receives from) an unbuffered channel whose only other side can return without the matching receive (or send).",
    docs: r#"
A goroutine started by a function sends its result on an unbuffered channel
made by that function, but the function can return without receiving it: a
`select` that also waits on `ctx.Done()` or `time.After`, or an early error
return before the receive. The same holds the other way round for a
goroutine waiting to receive a value the function may never send. It also
flags a goroutine per loop iteration sending on a channel the function
receives from only once ("first answer wins"), and, for an unbuffered
channel kept in a struct field, a plain send (or receive) in one method
when every receive (or send) elsewhere sits in a `select` that can return
through another case. Not such a send: one made only while a flag field
says the receiving loop runs (`if c.running { c.add <- e }`), under a
mutex, when the loop leaves only on stop channels whose every send clears
that flag under the same mutex (`c.stop <- struct{}{}; c.running =
false`): while the flag is set the receiver is still there.

## Why

An unbuffered send completes only when someone receives. Once the function
has returned, nobody ever will: the goroutine blocks forever, keeping its
stack, its connections and everything it references. Each timed-out or
failed request leaks one more goroutine until memory runs out. This is the
most common goroutine leak in real Go code.

## Example

```go
package app

import "context"

func Fetch(ctx context.Context, url string) (string, error) {
	ch := make(chan string)
	go func() {
		ch <- download(url)
	}()
	select {
	case body := <-ch:
		return body, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
```

## Fix

Give the channel room for the one value, so the send completes even when
nobody is left to receive it (or make the goroutine select on `ctx.Done()`
too).

```go
package app

import "context"

func Fetch(ctx context.Context, url string) (string, error) {
	ch := make(chan string, 1)
	go func() {
		ch <- download(url)
	}()
	select {
	case body := <-ch:
		return body, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for GoroutineChannelLeak {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for g in cx.model.function_ids() {
            if cx.func(g).kind != FnKind::Closure || !common::runs_in_goroutine(cx, g) {
                continue;
            }
            let Some(parent) = cx.func(g).parent else {
                continue;
            };
            // A test that gives up on a hung goroutine after a timeout is
            // reporting a failure, not leaking in production.
            if common::in_test_func(cx, parent) {
                continue;
            }
            // Leaving `main` ends the process and every goroutine with it.
            if common::is_program_main(cx, parent) {
                continue;
            }
            let Some(start) = common::spawn_stmt(cx, g) else {
                continue;
            };
            let mut seen = Vec::new();
            for (op, ch, is_send) in blocking_ops(cx, g) {
                if seen.contains(&ch) {
                    continue;
                }
                if let Some(f) = check_op(cx, g, parent, start, op, &ch, is_send) {
                    seen.push(ch);
                    out.push(f);
                }
            }
        }
        let done: Vec<Span> = out.iter().map(|f| f.span).collect();
        local_channels(cx, &done, out);
        field_channels(cx, out);
    }
}

/// Where a struct's channel field is used in the file.
#[derive(Default)]
struct FieldUses {
    unbuffered_makes: usize,
    other_makes: usize,
    plain_sends: Vec<ExprId>,
    plain_recvs: Vec<ExprId>,
    /// `select` arms on the field in a select that can also leave the
    /// function (a `ctx.Done()`/`time.After`/stop case that returns).
    guarded_sends: Vec<Span>,
    guarded_recvs: Vec<Span>,
    /// Other select arms (loops waiting on several channels).
    open_selects: usize,
    drained: bool,
}

/// Channels held in struct fields and used across methods: a plain send on
/// an unbuffered field channel whose every receive is in a `select` that
/// can return through another case (and the mirror case for receives).
fn field_channels(cx: &FileCx, out: &mut Vec<Finding>) {
    for t in &cx.model.types {
        for fld in &t.fields {
            let text = fld.ty.text.trim();
            if !(text.starts_with("chan ") || text.starts_with("chan\t")) {
                continue;
            }
            let Some(u) = field_uses(cx, &t.qualname, &fld.name) else {
                continue;
            };
            if u.unbuffered_makes == 0 || u.other_makes > 0 || u.drained || u.open_selects > 0 {
                continue;
            }
            let short = format!("{}.{}", t.name, fld.name);
            if u.plain_recvs.is_empty() && u.guarded_sends.is_empty() && !u.guarded_recvs.is_empty()
            {
                let line = common::line_of(cx, u.guarded_recvs[0]);
                // What the receiver gives up on: the other cases of its select.
                let others = other_cases(cx, u.guarded_recvs[0]);
                let fix = if others.is_empty() {
                    format!(
                        "select around this send on what makes the receiver give up, or give `{short}` a buffer for the values that may be abandoned"
                    )
                } else {
                    format!(
                        "select around this send on what makes the receiver give up ({}), so the sender gives up too",
                        others.join(", ")
                    )
                };
                for &e in &u.plain_sends {
                    if common::in_test_func(cx, cx.func_of(e))
                        || sent_only_while_receiver_runs(cx, e, &u.guarded_recvs)
                    {
                        continue;
                    }
                    out.push(cx.finding(
                        &META,
                        cx.expr(e).span,
                        format!(
                            "this send on unbuffered channel `{short}` blocks until someone receives, but every receive of it (line {line}) is in a `select` that can return through another case: once the receiver has left, this goroutine blocks here forever"
                        ),
                        fix.clone(),
                    ));
                }
            }
            if u.plain_sends.is_empty() && u.guarded_recvs.is_empty() && !u.guarded_sends.is_empty()
            {
                let line = common::line_of(cx, u.guarded_sends[0]);
                for &e in &u.plain_recvs {
                    if common::in_test_func(cx, cx.func_of(e)) {
                        continue;
                    }
                    out.push(cx.finding(
                        &META,
                        cx.expr(e).span,
                        format!(
                            "this receive on unbuffered channel `{short}` waits for a sender, but every send on it (line {line}) is in a `select` that can give up through another case, and nothing closes it: this goroutine can wait here forever"
                        ),
                        format!(
                            "select on the same cancellation around this receive, or close `{short}` when the sender gives up"
                        ),
                    ));
                }
            }
        }
    }
}

/// The send runs only while a flag field says the receiver is running
/// (`if c.running { c.add <- e }`, or the `else` of `if !c.running`), under
/// a mutex, and the receiver's select leaves only on stop channels whose
/// every send clears that flag under the same mutex (`c.stop <- struct{}{};
/// c.running = false` in `Stop`): while the flag is set the receiver has
/// not left, and the mutex keeps the stop from slipping in between the
/// check and the send.
fn sent_only_while_receiver_runs(cx: &FileCx, send: ExprId, recvs: &[Span]) -> bool {
    // The flag the send is guarded by: an `if` around it testing a field,
    // with the send in the branch taken while the flag is set.
    let Some(st) = cx.tree.enclosing_stmt(send) else {
        return false;
    };
    let flag = cx.tree.stmt_ancestors(st).find_map(|a| {
        let StmtKind::If { cond, then, orelse } = &cx.stmt(a).kind else {
            return None;
        };
        let (field, branch) = match &cx.expr(cx.model.strip(*cond)).kind {
            ExprKind::Unary {
                op: UnOp::Not,
                operand,
            } => (field_name(cx, *operand), orelse),
            _ => (field_name(cx, *cond), then),
        };
        field.filter(|_| crate::util::block_contains(cx, branch, st))
    });
    let Some(flag) = flag else { return false };
    let locks_of = |f: FuncId| -> Vec<String> {
        cx.body_calls(f)
            .filter_map(|e| cx.call(e))
            .filter(|c| c.name == "Lock")
            .filter_map(|c| c.receiver.and_then(|r| field_name(cx, r)))
            .collect()
    };
    let send_locks = locks_of(cx.func_of(send));
    if send_locks.is_empty() {
        return false;
    }
    // The receiver's ways out: every leaving arm receives from a field
    // channel.
    let Some(arms) = recvs.first().and_then(|&r| innermost_select(cx, r)) else {
        return false;
    };
    let mut stops = Vec::new();
    for a in arms.iter().filter(|a| returns_in(cx, &a.body)) {
        let ArmKind::Recv { channel, .. } = a.kind else {
            return false;
        };
        let Some(stop) = field_name(cx, channel) else {
            return false;
        };
        stops.push(stop);
    }
    if stops.is_empty() {
        return false;
    }
    // Every send on a stop channel clears the flag in its block, in a
    // function holding one of the same locks.
    let clears_flag = |b: &[StmtId]| {
        b.iter().any(|&s| {
            matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(v), .. }
                if cx.model.literal(*v) == Some(&Lit::Bool(false))
                    && targets.iter().any(|&t| field_name(cx, t).as_deref() == Some(flag.as_str())))
        })
    };
    let mut stop_sends = 0;
    for (i, e) in cx.model.exprs.iter().enumerate() {
        let ExprKind::Send { channel, .. } = &e.kind else {
            continue;
        };
        if !field_name(cx, *channel).is_some_and(|n| stops.contains(&n)) {
            continue;
        }
        let id = ExprId(i as u32);
        let Some(st) = cx.tree.enclosing_stmt(id) else {
            return false;
        };
        let block = crate::util::containing_block(cx, st)
            .map(|b| b.as_slice())
            .unwrap_or(&[]);
        let f = cx.func_of(id);
        if !clears_flag(block) || !locks_of(f).iter().any(|l| send_locks.contains(l)) {
            return false;
        }
        stop_sends += 1;
    }
    stop_sends > 0
}

/// The field an expression names (`running` in `c.running`).
fn field_name(cx: &FileCx, e: ExprId) -> Option<String> {
    match &cx.expr(cx.model.strip(e)).kind {
        ExprKind::Attr { name, .. } => Some(name.to_string()),
        _ => None,
    }
}

/// The uses of field `field` of values of type `ty` in the file; `None`
/// when the channel escapes (passed, returned, assigned elsewhere).
fn field_uses(cx: &FileCx, ty: &str, field: &str) -> Option<FieldUses> {
    let is_field = |e: ExprId| -> bool {
        matches!(&cx.expr(e).kind, ExprKind::Attr { obj, name, .. }
            if name == field && cx.sema.type_of(*obj) == Some(ty))
    };
    chan_uses(cx, &is_field, Some((ty, field)))
}

/// The uses of local channel `name` made in `maker` (by the function and
/// its closures).
fn local_uses(cx: &FileCx, maker: FuncId, name: &str) -> Option<FieldUses> {
    let is_it = |e: ExprId| -> bool {
        if cx.model.name_of(e) != Some(name) {
            return false;
        }
        let f = cx.func_of(e);
        match common::name_scope(cx, f, name) {
            common::NameScope::Own => f == maker,
            common::NameScope::Captured(d) => d == maker,
            _ => false,
        }
    };
    chan_uses(cx, &is_it, None)
}

/// Plain sends (receives) on unbuffered local channels, in goroutines,
/// whose every receive (send) is in a `select` that can return through
/// another case: the goroutine blocks forever once the other side left.
fn local_channels(cx: &FileCx, done: &[Span], out: &mut Vec<Finding>) {
    for (i, st) in cx.model.stmts.iter().enumerate() {
        let StmtKind::Assign {
            targets,
            value: Some(v),
            op: AssignOp::Declare { .. },
        } = &st.kind
        else {
            continue;
        };
        let [t] = targets.as_slice() else { continue };
        let Some(name) = cx.model.name_of(*t) else {
            continue;
        };
        let Some(c) = cx.call(*v) else { continue };
        if c.target.as_deref() != Some("make") || !common::makes_chan(cx, c) {
            continue;
        }
        let maker = cx.tree.stmt_func(StmtId(i as u32));
        if common::in_test_func(cx, maker) {
            continue;
        }
        let Some(u) = local_uses(cx, maker, name) else {
            continue;
        };
        if u.unbuffered_makes != 1 || u.other_makes > 0 || u.drained || u.open_selects > 0 {
            continue;
        }
        let in_goroutine = |e: ExprId| {
            cx.tree
                .func_ancestors(cx.model, cx.func_of(e))
                .any(|g| common::runs_in_goroutine(cx, g))
        };
        let (ops, other, verb) = if u.plain_recvs.is_empty()
            && u.guarded_sends.is_empty()
            && !u.guarded_recvs.is_empty()
        {
            (&u.plain_sends, &u.guarded_recvs, "receive from")
        } else if u.plain_sends.is_empty()
            && u.guarded_recvs.is_empty()
            && !u.guarded_sends.is_empty()
        {
            (&u.plain_recvs, &u.guarded_sends, "send on")
        } else {
            continue;
        };
        let line = common::line_of(cx, other[0]);
        for &e in ops {
            let sp = cx.expr(e).span;
            if !in_goroutine(e) || done.contains(&sp) {
                continue;
            }
            out.push(cx.finding(
                &META,
                sp,
                format!(
                    "this goroutine blocks on unbuffered channel `{name}` until the other side is ready, but every {verb} it (line {line}) is in a `select` that can return through another case: once that side has left, this goroutine waits here forever"
                ),
                format!(
                    "give `{name}` a buffer (`make(chan T, 1)` for a single value), or select on the same cancellation here"
                ),
            ));
        }
    }
}

fn chan_uses(
    cx: &FileCx,
    is_field: &dyn Fn(ExprId) -> bool,
    literal_field: Option<(&str, &str)>,
) -> Option<FieldUses> {
    let mut u = FieldUses::default();
    let mut in_arms = Vec::new();
    for st in &cx.model.stmts {
        let StmtKind::Select { arms, .. } = &st.kind else {
            continue;
        };
        let exit_arm = |skip: usize| {
            arms.iter().enumerate().any(|(j, a)| {
                j != skip
                    && matches!(a.kind, ArmKind::Recv { .. })
                    && common::stmts_in(cx.model, &a.body)
                        .into_iter()
                        .any(|s| matches!(cx.stmt(s).kind, StmtKind::Return(_)))
            })
        };
        for (j, arm) in arms.iter().enumerate() {
            let (ch, send) = match arm.kind {
                ArmKind::Recv { channel, .. } => (channel, false),
                ArmKind::Send { channel, .. } => (channel, true),
                _ => continue,
            };
            if !is_field(ch) {
                continue;
            }
            in_arms.push(ch);
            match (send, exit_arm(j)) {
                (true, true) => u.guarded_sends.push(arm.span),
                (false, true) => u.guarded_recvs.push(arm.span),
                _ => u.open_selects += 1,
            }
        }
    }
    for (i, e) in cx.model.exprs.iter().enumerate() {
        let id = ExprId(i as u32);
        // Struct literals: `&T{ch: make(chan X)}`.
        if let Some((ty, field)) = literal_field
            && let ExprKind::Collection {
                ty: Some(t),
                elems,
                keys,
                ..
            } = &e.kind
            && t.resolved.as_deref() == Some(ty)
        {
            for (k, v) in keys.iter().zip(elems) {
                if k.as_deref() == Some(field) {
                    count_make(cx, *v, &mut u);
                }
            }
        }
        if !is_field(id) || in_arms.contains(&id) {
            continue;
        }
        match cx.tree.expr_parent(id) {
            Parent::Expr(p) => match &cx.expr(p).kind {
                ExprKind::Send { channel, .. } if *channel == id => u.plain_sends.push(p),
                ExprKind::Recv(_) => u.plain_recvs.push(p),
                ExprKind::Call(c) if c.target.as_deref() == Some("close") => u.drained = true,
                ExprKind::Call(c) if matches!(c.target.as_deref(), Some("len" | "cap")) => {}
                _ => return None,
            },
            Parent::Stmt(s) => match &cx.stmt(s).kind {
                StmtKind::For { iter, .. } if *iter == id => u.drained = true,
                StmtKind::Assign {
                    targets,
                    value: Some(v),
                    ..
                } if targets.contains(&id) => count_make(cx, *v, &mut u),
                _ => return None,
            },
            _ => return None,
        }
    }
    Some(u)
}

fn count_make(cx: &FileCx, v: ExprId, u: &mut FieldUses) {
    match cx.call(v) {
        Some(c) if c.target.as_deref() == Some("make") && common::makes_chan(cx, c) => {
            match c.positional(1).map(|n| cx.model.int_value(n)) {
                None | Some(Some(0)) => u.unbuffered_makes += 1,
                _ => u.other_makes += 1,
            }
        }
        _ => u.other_makes += 1,
    }
}

/// Channel operations in the goroutine's body that block until the other
/// side acts: plain sends and receives on a named channel, outside any
/// `select` (a select has other ways out).
fn blocking_ops(cx: &FileCx, g: FuncId) -> Vec<(ExprId, String, bool)> {
    let mut out = Vec::new();
    for &e in cx.body_exprs(g) {
        let (chan, is_send) = match &cx.expr(e).kind {
            ExprKind::Send { channel, .. } => (*channel, true),
            ExprKind::Recv(channel) => (*channel, false),
            _ => continue,
        };
        let Some(name) = cx.model.name_of(chan) else {
            continue;
        };
        out.push((e, name.to_string(), is_send));
    }
    out
}

fn check_op(
    cx: &FileCx,
    g: FuncId,
    parent: FuncId,
    start: StmtId,
    op: ExprId,
    ch: &str,
    is_send: bool,
) -> Option<Finding> {
    let made = common::local_chan(cx, g, ch)?;
    // The channel must belong to the spawning function (or enclose it).
    if !cx
        .tree
        .func_ancestors(cx.model, parent)
        .any(|a| a == made.func)
    {
        return None;
    }
    // Who else touches the channel: only the spawning function's own body
    // may be the other side; any other receiver/sender, or the channel
    // escaping, means we cannot tell.
    let mut own_other_side = 0;
    let mut own_in_loop = false;
    let mut ranged = false;
    for u in common::name_uses(cx, made.func, ch) {
        let uf = cx.func_of(u);
        if uf == g || cx.tree.func_ancestors(cx.model, uf).any(|a| a == g) {
            if common::chan_use(cx, u) == ChanUse::Escape {
                return None;
            }
            continue;
        }
        let kind = common::chan_use(cx, u);
        let satisfies = match kind {
            ChanUse::Recv | ChanUse::Range => is_send,
            ChanUse::Send | ChanUse::Close => !is_send,
            ChanUse::Escape => return None,
            ChanUse::Inspect => false,
        };
        if uf != parent {
            if satisfies {
                return None;
            }
            continue;
        }
        if satisfies {
            own_other_side += 1;
            if kind == ChanUse::Range {
                ranged = true;
            }
            if let Some(s) = cx.tree.enclosing_stmt(u)
                && !common::enclosing_loops(cx, s).is_empty()
            {
                own_in_loop = true;
            }
        }
    }
    if own_other_side == 0 || deferred_serve(cx, parent, ch, is_send) {
        // Nobody receives at all: reported as an orphan goroutine.
        return None;
    }
    let op_line = cx.expr(op).span;
    let verb = if is_send { "sends on" } else { "receives from" };
    let other = if is_send {
        "receiving from"
    } else {
        "sending on"
    };
    let fname = cx.func_display(parent);
    // First answer wins: a sender per iteration, one receive.
    let spawned_in_loop = !common::enclosing_loops(cx, start).is_empty();
    if is_send && spawned_in_loop && !own_in_loop && !ranged {
        let blocks = match made.cap {
            ChanCap::Unbuffered => true,
            ChanCap::Buffered(_) => true,
            ChanCap::Unknown => false,
        };
        if blocks && !loop_is_constant(cx, start) {
            return Some(cx.finding(
                &META,
                op_line,
                format!(
                    "a goroutine is started per loop iteration and each {verb} `{ch}`, but {fname} receives from it only once: every other goroutine blocks on this send forever and leaks"
                ),
                format!(
                    "receive once per goroutine, or make the channel hold every result (`make(chan T, len(items))`), or let the losers give up by selecting on a context cancelled when {fname} returns"
                ),
            ));
        }
    }
    if made.cap != ChanCap::Unbuffered {
        return None;
    }
    let mut fl = Pending {
        ch,
        start,
        is_send,
        leaks: Vec::new(),
    };
    flow::run_function(cx, &mut fl, &cx.func(parent).body, false);
    let exit = fl.leaks.first().copied()?;
    let at = match exit {
        Some(s) => format!(
            "the return at line {}",
            common::line_of(cx, cx.stmt(s).span)
        ),
        None => "the end of the function".to_string(),
    };
    Some(cx.finding(
        &META,
        op_line,
        format!(
            "this goroutine {verb} unbuffered channel `{ch}`, but {fname} can reach {at} without {other} it (another `select` case or an early return): the goroutine then blocks here forever and leaks"
        ),
        if is_send {
            format!(
                "make the channel buffered (`make(chan T, 1)`) so this send completes even after {fname} has returned, or select on `ctx.Done()` around the send"
            )
        } else {
            format!(
                "close `{ch}` (or send) on every path of {fname}, e.g. `defer close({ch})`, or select on `ctx.Done()` around the receive"
            )
        },
    ))
}

/// `defer close(ch)` (or a deferred func literal that sends/receives/closes
/// `ch`) serves the goroutine on every exit.
fn deferred_serve(cx: &FileCx, parent: FuncId, ch: &str, is_send: bool) -> bool {
    cx.body_stmts(parent).iter().copied().any(|s| {
        let StmtKind::Defer(call) = cx.stmt(s).kind else {
            return false;
        };
        let mut exprs = vec![call];
        if let Some(g) = common::go_closure(cx, call) {
            exprs.extend(cx.body_exprs(g).iter().copied());
        }
        exprs.into_iter().any(|e| {
            let named = |x: ExprId| cx.model.name_of(x) == Some(ch);
            match &cx.expr(e).kind {
                ExprKind::Call(c) => {
                    !is_send
                        && c.target.as_deref() == Some("close")
                        && c.positional(0).is_some_and(named)
                }
                ExprKind::Recv(x) => is_send && named(*x),
                ExprKind::Send { channel, .. } => !is_send && named(*channel),
                _ => false,
            }
        })
    })
}

/// A loop over a literal list or with a constant bound: the number of
/// senders is known and small.
fn loop_is_constant(cx: &FileCx, s: StmtId) -> bool {
    let Some(&l) = common::enclosing_loops(cx, s).first() else {
        return false;
    };
    match &cx.stmt(l).kind {
        StmtKind::For { iter, .. } => matches!(
            cx.expr(*iter).kind,
            ExprKind::Collection { .. } | ExprKind::Literal(_)
        ),
        StmtKind::While { cond, .. } => match &cx.expr(*cond).kind {
            ExprKind::Binary { right, .. } => cx.model.int_value(*right).is_some(),
            _ => false,
        },
        _ => false,
    }
}

/// Whether the goroutine is started and its channel not yet served.
struct Pending<'a> {
    ch: &'a str,
    start: StmtId,
    is_send: bool,
    leaks: Vec<Option<StmtId>>,
}

impl Pending<'_> {
    fn serves(&self, cx: &FileCx, e: ExprId) -> bool {
        let named = |x: ExprId| cx.model.name_of(x) == Some(self.ch);
        match &cx.expr(e).kind {
            ExprKind::Recv(x) => self.is_send && named(*x),
            ExprKind::Send { channel, .. } => !self.is_send && named(*channel),
            ExprKind::Call(c) => {
                !self.is_send
                    && c.target.as_deref() == Some("close")
                    && c.positional(0).is_some_and(named)
            }
            _ => false,
        }
    }
}

impl Flow for Pending<'_> {
    type S = bool;
    fn simple(&mut self, cx: &FileCx, s: StmtId, st: &mut bool) {
        if s == self.start {
            *st = true;
            return;
        }
        if evaluated_exprs(cx, s)
            .into_iter()
            .any(|e| self.serves(cx, e))
        {
            *st = false;
        }
    }
    fn cond(&mut self, cx: &FileCx, e: ExprId, st: &mut bool) {
        if self.is_send && cx.model.name_of(e) == Some(self.ch) {
            // `for v := range ch`.
            *st = false;
        }
        if exprs_under(cx.model, e)
            .into_iter()
            .any(|x| self.serves(cx, x))
        {
            *st = false;
        }
    }
    fn arm(&mut self, cx: &FileCx, arm: &SelectArm, st: &mut bool) {
        let named = |x: ExprId| cx.model.name_of(x) == Some(self.ch);
        match &arm.kind {
            ArmKind::Recv { channel, .. } if self.is_send && named(*channel) => *st = false,
            ArmKind::Send { channel, .. } if !self.is_send && named(*channel) => *st = false,
            _ => {}
        }
    }
    fn exit(&mut self, _cx: &FileCx, ret: Option<StmtId>, st: &bool) {
        if *st {
            self.leaks.push(ret);
        }
    }
    fn join(&self, a: &bool, b: &bool) -> bool {
        *a || *b
    }
    fn zero_trip_loops(&self) -> bool {
        false
    }
}

/// The arms of the innermost `select` around `at`.
fn innermost_select<'a>(cx: &FileCx<'a>, at: Span) -> Option<&'a [SelectArm]> {
    cx.model
        .stmts
        .iter()
        .filter(|st| matches!(st.kind, StmtKind::Select { .. }) && st.span.contains(at))
        .min_by_key(|st| st.span.end - st.span.start)
        .and_then(|st| match &st.kind {
            StmtKind::Select { arms, .. } => Some(arms.as_slice()),
            _ => None,
        })
}

/// A `return` somewhere in the block: the case ends its function's wait.
fn returns_in(cx: &FileCx, b: &Block) -> bool {
    common::stmts_in(cx.model, b)
        .into_iter()
        .any(|s| matches!(cx.stmt(s).kind, StmtKind::Return(_)))
}

/// The receives of the other cases of the `select` around the receive at
/// `recv` that return (`<-ctx.Done()`, `<-c.closing`), as written.
fn other_cases(cx: &FileCx, recv: Span) -> Vec<String> {
    let Some(arms) = innermost_select(cx, recv) else {
        return Vec::new();
    };
    // Only the cases that end the receiver's wait (a `return` in their
    // body), not other events a loop multiplexes.
    arms.iter()
        .filter_map(|a| match a.kind {
            ArmKind::Recv { channel, .. } if returns_in(cx, &a.body) => {
                let at = cx.expr(channel).span;
                (!at.contains(recv) && !recv.contains(at))
                    .then(|| format!("`<-{}`", cx.snippet(at)))
            }
            _ => None,
        })
        .collect()
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[
        r#"
package app

import (
	"context"
	"time"
)

func Query(ctx context.Context, q string) (Rows, error) {
	res := make(chan Rows)
	go func() {
		res <- runQuery(q) // expect
	}()
	select {
	case r := <-res:
		return r, nil
	case <-time.After(2 * time.Second):
		return nil, errTimeout
	}
}
"#,
        r#"
package app

func Load(id string) (Item, error) {
	done := make(chan Item)
	go func() { done <- fetchItem(id) }() // expect
	if err := validate(id); err != nil {
		return Item{}, err
	}
	return <-done, nil
}
"#,
        r#"
package app

func First(urls []string) string {
	out := make(chan string)
	for _, u := range urls {
		go func(u string) {
			out <- get(u) // expect
		}(u)
	}
	return <-out
}
"#,
        r#"
package app

import "context"

func Pump(ctx context.Context, src Source) {
	items := make(chan Item)
	go func() {
		for {
			it := src.Next()
			items <- it // expect
		}
	}()
	go func() {
		for {
			select {
			case it := <-items:
				handle(it)
			case <-ctx.Done():
				return
			}
		}
	}()
}
"#,
        r#"
package app

import "context"

type Worker struct {
	results chan Result
}

func NewWorker() *Worker {
	return &Worker{results: make(chan Result)}
}

func (w *Worker) run(job Job) {
	w.results <- job.Do() // expect
}

func (w *Worker) Wait(ctx context.Context) (Result, error) {
	select {
	case r := <-w.results:
		return r, nil
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}
"#,
        r#"
package app

func Start(cfg Config) error {
	ready := make(chan Config)
	go func() {
		c := <-ready // expect
		serve(c)
	}()
	if err := cfg.Validate(); err != nil {
		return err
	}
	ready <- cfg
	return nil
}
"#,
        r#"
package sched

import (
	"context"
	"sync"
)

type Sched struct {
	mu      sync.Mutex
	running bool
	add     chan int
	stop    chan struct{}
	ctx     context.Context
}

func New(ctx context.Context) *Sched {
	return &Sched{add: make(chan int), stop: make(chan struct{}), ctx: ctx}
}

func (s *Sched) Add(x int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		s.add <- x // expect
	}
}

func (s *Sched) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running = true
	go s.run()
}

// The loop also leaves on the context, which clears no flag.
func (s *Sched) run() {
	for {
		select {
		case x := <-s.add:
			_ = x
		case <-s.ctx.Done():
			return
		case <-s.stop:
			return
		}
	}
}

func (s *Sched) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		s.stop <- struct{}{} // expect
		s.running = false
	}
}
"#,
        r#"
package tool

import "time"

// A `main` of another package is only a function.
func main() {
	res := make(chan int)
	go func() {
		res <- work() // expect
	}()
	select {
	case r := <-res:
		println(r)
	case <-time.After(time.Second):
	}
}

func work() int { return 1 }
"#,
    ],
    pass: &[
        r#"
package main

import (
	"fmt"
	"time"
)

func main() {
	res := make(chan int)
	go func() {
		res <- work()
	}()
	select {
	case r := <-res:
		fmt.Println(r)
	case <-time.After(time.Second):
		fmt.Println("timed out")
	}
}

func work() int { return 1 }
"#,
        r#"
package sched

import "sync"

type Sched struct {
	mu      sync.Mutex
	running bool
	pending []int
	add     chan int
	stop    chan struct{}
}

func New() *Sched {
	return &Sched{add: make(chan int), stop: make(chan struct{})}
}

// Sends only while the loop runs: the loop leaves only on stop, and Stop
// clears the flag under the same mutex.
func (s *Sched) Add(x int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		s.pending = append(s.pending, x)
	} else {
		s.add <- x
	}
}

func (s *Sched) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running = true
	go s.run()
}

func (s *Sched) run() {
	for {
		select {
		case x := <-s.add:
			s.pending = append(s.pending, x)
		case <-s.stop:
			return
		}
	}
}

func (s *Sched) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		s.stop <- struct{}{}
		s.running = false
	}
}
"#,
        r#"
package app

import "context"

func Query(ctx context.Context, q string) (Rows, error) {
	res := make(chan Rows, 1)
	go func() {
		res <- runQuery(q)
	}()
	select {
	case r := <-res:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
"#,
        r#"
package app

import "context"

func Query(ctx context.Context, q string) (Rows, error) {
	res := make(chan Rows)
	go func() {
		select {
		case res <- runQuery(q):
		case <-ctx.Done():
		}
	}()
	select {
	case r := <-res:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
"#,
        r#"
package app

func All(urls []string) []string {
	out := make(chan string)
	for _, u := range urls {
		go func(u string) { out <- get(u) }(u)
	}
	var bodies []string
	for range urls {
		bodies = append(bodies, <-out)
	}
	return bodies
}
"#,
        r#"
package app

import "sync"

func Pipeline(items []int) []int {
	out := make(chan int)
	var wg sync.WaitGroup
	for _, it := range items {
		wg.Add(1)
		go func(it int) {
			defer wg.Done()
			out <- it * 2
		}(it)
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	var res []int
	for v := range out {
		res = append(res, v)
	}
	return res
}
"#,
        r#"
package app

import "context"

type Worker struct {
	results chan Result
	stop    chan struct{}
}

func NewWorker() *Worker {
	return &Worker{results: make(chan Result), stop: make(chan struct{})}
}

func (w *Worker) run(job Job) {
	select {
	case w.results <- job.Do():
	case <-w.stop:
	}
}

func (w *Worker) Wait(ctx context.Context) (Result, error) {
	select {
	case r := <-w.results:
		return r, nil
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}
"#,
        r#"
package app

func Run() error {
	errc := make(chan error)
	go func() { errc <- serve() }()
	return <-errc
}

func Stream(items []int) <-chan int {
	ch := make(chan int)
	go func() {
		defer close(ch)
		for _, it := range items {
			ch <- it
		}
	}()
	return ch
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(GoroutineChannelLeak);

    /// The fix names what the receiver gives up on, not a context the
    /// type may not have.
    #[test]
    fn the_fix_names_the_receivers_other_cases() {
        let src = r#"
package app

type Worker struct {
	results chan int
	closing chan struct{}
}

func NewWorker() *Worker {
	return &Worker{results: make(chan int), closing: make(chan struct{})}
}

func (w *Worker) run(job int) {
	w.results <- job * 2
}

func (w *Worker) Next() (int, bool) {
	select {
	case r := <-w.results:
		return r, true
	case <-w.closing:
		return 0, false
	}
}
"#;
        let found = crate::testing::run_example(&GoroutineChannelLeak, Language::Go, src).0;
        let fix = found
            .iter()
            .map(|(_, f)| &f.fix)
            .find(|f| f.contains("what makes the receiver give up"))
            .expect("a finding on the send");
        assert!(
            fix.contains("`<-w.closing`") && !fix.contains("ctx.Done()"),
            "{fix}"
        );
    }
}
