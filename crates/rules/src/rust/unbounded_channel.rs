//! RS003: an unbounded channel.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use crate::util::unbounded_reason;
use unsnarl_model::*;

pub struct UnboundedChannel;

pub static META: RuleMeta = RuleMeta {
    id: "RS003",
    name: "unbounded-channel",
    category: Category::UnboundedQueue,
    severity: Severity::Medium,
    languages: &[Language::Rust],
    summary: "An unbounded channel: `tokio::sync::mpsc::unbounded_channel`, `std::sync::mpsc::channel`, `crossbeam_channel::unbounded`, `flume::unbounded`, `async_channel::unbounded`, `futures::channel::mpsc::unbounded`.",
    docs: r#"
A channel constructor that has no capacity: `unbounded_channel()`,
`std::sync::mpsc::channel()` (as opposed to `sync_channel(n)`),
`crossbeam_channel::unbounded()`, `flume::unbounded()`,
`async_channel::unbounded()`, `futures::channel::mpsc::unbounded()`.

Not findings: the constructor called by a function of the same name, or
named for an unbounded channel (`unbounded`, `mpsc_unbounded`), that
returns a value (a drop-in wrapper, `fn channel<T>()` in an instrumented
or mocked `mpsc`, whose callers choose it as they would the original); a channel whose
message type has no values (`enum Void {}`,
`Infallible`, `!`, in the constructor's turbofish or the `let`'s type),
which only tells receivers that every sender is gone; a channel whose
sender is dropped where it is made (`let (_, sink) = channel();`, a
receiver that stands in for another); a channel made in the branch of a
`match`/`if let` on an `Option` whose other branch makes a bounded one (`Some(n) =>
bounded(n), None => unbounded()`: the caller's `None` asks for no
limit); a request/reply
channel whose every send (through the
struct fields the sender is stored in, directly or by a constructor of the
file) carries a oneshot reply sender (or a closure that answers on one) the
caller then waits on, so each caller has at most one message queued; a
channel used as a oneshot (one send, or one `recv()` by the function that
made it) or fed a fixed few messages (up to four sends written out one by
one, none in a loop, from a sender that is never cloned or handed on); a scatter-gather channel (one sender clone per task started,
one send each, the receiver drained to the end by the function that made
it); and a tokio/futures command channel whose every send is made by
a function that is not async (it could not await room in a bounded one,
and `try_send` would drop commands) and whose every receive drives a
`while let` loop (or a `loop` that starts with a `match` on it) that awaits nothing else, or is a hand-written future's
`poll` taking every ready message in a loop (the consumer keeps up); the
same for a flume channel read only by such a task (`recv_async().await`),
where a blocking `send` on a full channel would stall the runtime thread
the consumer needs.
Example and bench programs (files under `examples/` or `benches/`, but
not a project with a `src/` of its own kept there, and benchmark binaries
such as `src/bin/perf-producer.rs`) are not reported: they
run once and exit, and what they start is a demonstration.

## Why

Sending never waits, so when receivers fall behind, messages pile up in
memory with nothing telling the producer to slow down, and each message waits
behind the whole backlog. The failure arrives late and all at once: an
out-of-memory kill that loses everything queued.

## Example

```rust
use tokio::sync::mpsc;

fn events() {
    let (tx, rx) = mpsc::unbounded_channel::<Event>();
}
```

## Fix

Use a bounded channel; `send().await` then waits when the receiver is
behind (or `try_send` lets you shed).

```rust
use tokio::sync::mpsc;

fn events() {
    let (tx, rx) = mpsc::channel::<Event>(1024);
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for UnboundedChannel {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        // Example and bench programs run once and exit: their spawns,
        // queues and retries are demonstrations, not a service's.
        if super::common::non_service_path(cx) {
            return;
        }
        for (i, e) in cx.model.exprs.iter().enumerate() {
            let ExprKind::Call(c) = &e.kind else { continue };
            let Some(entry) = cx.effect(c, Effect::Queue) else {
                continue;
            };
            // Test scaffolding is not a production queue.
            if super::common::test_like(cx, cx.func_of(ExprId(i as u32))) {
                continue;
            }
            if unbounded_reason(cx.model, c, entry).is_none()
                || used_as_oneshot(cx, ExprId(i as u32))
                || received_once(cx, ExprId(i as u32))
                || gathered_by_maker(cx, ExprId(i as u32))
                || request_reply(cx, ExprId(i as u32))
                || sync_command_channel(cx, ExprId(i as u32))
                || carries_nothing(cx, ExprId(i as u32))
                || sender_discarded(cx, ExprId(i as u32))
                || is_drop_in_wrapper(cx, ExprId(i as u32), c)
                || super::common::chosen_over(cx, ExprId(i as u32), &|k| {
                    matches!(k.name.as_str(), "bounded" | "channel" | "sync_channel")
                        && !k.args.is_empty()
                })
            {
                continue;
            }
            out.push(cx.finding(
                &META,
                e.span,
                format!(
                    "`{}` creates {}: when receivers fall behind, messages pile up in memory with no backpressure on senders",
                    cx.callee_display(c),
                    entry.what
                ),
                entry.fix.clone(),
            ));
        }
    }
}

/// The constructor is called by a function of the same name, or named for
/// an unbounded channel (`unbounded`, `mpsc_unbounded`), that returns
/// something (`pub fn channel<T>() -> (Sender<T>, Receiver<T>)` wrapping
/// `mpsc::channel()`):
/// a drop-in replacement (an instrumented or mocked channel) that must be
/// as unbounded as what it stands for. Whoever calls it chose that.
fn is_drop_in_wrapper(cx: &FileCx, ctor: ExprId, c: &Call) -> bool {
    let f = cx.func_of(ctor);
    let name = cx.func(f).name.as_str();
    let wrapper_name = name == c.name.as_str() || name == "channel" || name.contains("unbounded");
    !name.is_empty() && wrapper_name && cx.func(f).returns.is_some()
}

/// The channel's message type has no values (`unbounded::<Void>()` with
/// `enum Void {}`, `Infallible`, `!`), spelled in the constructor's
/// turbofish or in the type of the `let` it is bound by: no message can
/// be sent, so nothing can pile up. The channel only signals its senders'
/// drop (a shutdown signal).
fn carries_nothing(cx: &FileCx, ctor: ExprId) -> bool {
    let end = cx.expr(ctor).span.start;
    let start = cx
        .tree
        .enclosing_stmt(ctor)
        .map_or(end, |s| cx.stmt(s).span.start.min(end));
    let Some(call) = cx.call(ctor) else {
        return false;
    };
    let mut text = String::from(cx.source(Span::new(start, end)));
    text.push_str(cx.source(cx.expr(call.func).span));
    let args = innermost_generic_args(&text);
    !args.is_empty() && args.iter().all(|a| is_uninhabited(cx, a))
}

/// The sender is thrown away where the channel is made (`let (_, sink) =
/// channel();`): nothing can ever send on it, and the receiver only stands
/// in for another one (swapped in to disconnect workers on drop).
fn sender_discarded(cx: &FileCx, ctor: ExprId) -> bool {
    let Some(s) = cx.tree.enclosing_stmt(ctor) else {
        return false;
    };
    let StmtKind::Assign {
        targets,
        value: Some(v),
        ..
    } = &cx.stmt(s).kind
    else {
        return false;
    };
    if cx.model.strip(*v) != ctor {
        return false;
    }
    let Some(ExprKind::Collection { elems, .. }) = targets.first().map(|&t| &cx.expr(t).kind)
    else {
        return false;
    };
    elems
        .first()
        .is_some_and(|&first| cx.source(cx.expr(first).span).trim() == "_")
}

/// The contents of the innermost `<...>` pairs of a type or path text
/// (`(Sender<Void>, Receiver<Void>)` → `Void`, `Void`).
fn innermost_generic_args(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut open: Option<usize> = None;
    for (i, ch) in text.char_indices() {
        match ch {
            '<' => open = Some(i + 1),
            '>' => {
                if let Some(o) = open.take() {
                    out.push(text[o..i].trim());
                }
            }
            _ => {}
        }
    }
    out
}

fn is_uninhabited(cx: &FileCx, ty: &str) -> bool {
    let last = ty.rsplit("::").next().unwrap_or(ty).trim();
    if matches!(last, "Infallible" | "!") {
        return true;
    }
    // `enum Void {}` declared in the file.
    !last.is_empty()
        && last.chars().all(|c| c.is_alphanumeric() || c == '_')
        && cx.text.match_indices("enum ").any(|(i, _)| {
            let rest = cx.text[i + 5..].trim_start();
            rest.strip_prefix(last).is_some_and(|r| {
                let r = r.trim_start();
                r.starts_with('{') && r[1..].trim_start().starts_with('}')
            })
        })
}

/// `let (tx, rx) = channel();` whose sender sends once (or a few times,
/// each written out), outside any loop, and is never cloned: a oneshot in
/// disguise, it cannot grow past those messages.
fn used_as_oneshot(cx: &FileCx, ctor: ExprId) -> bool {
    use super::common;
    let Some((_, ch, top, after)) = channel_made_by(cx, ctor) else {
        return false;
    };
    // A receiver drained in a loop (`while let Some(x) = rx.recv().await`,
    // `for x in rx`) is a stream, whatever the sends seen here.
    let ctor_span = cx.stmt(ch.stmt).span;
    let drained = common::uses_after(cx, top, &ch.rx, after)
        .into_iter()
        .filter_map(|u| cx.tree.enclosing_stmt(u))
        .any(|s| {
            std::iter::once(s)
                .chain(cx.tree.stmt_ancestors(s))
                .any(|a| {
                    let st = cx.stmt(a);
                    matches!(
                        st.kind,
                        StmtKind::Loop { .. } | StmtKind::While { .. } | StmtKind::For { .. }
                    ) && !(st.span.start <= ctor_span.start && ctor_span.end <= st.span.end)
                })
        });
    let uses = common::uses_after(cx, top, &ch.tx, after);
    let mut sends = 0;
    // A sender only ever used by its own method calls (no move into a
    // field, a binding or a call) is all there is: one send, one message,
    // however the receiver is polled. Otherwise the sends seen here may not
    // be all of them.
    let dropped = |c: &Call| c.name == "drop" && c.receiver.is_none();
    let escapes = uses.iter().any(|&u| {
        common::call_around(cx, u).is_none_or(|(_, c)| c.receiver != Some(u) && !dropped(c))
    });
    if drained && escapes {
        return false;
    }
    for u in &uses {
        match common::call_around(cx, *u) {
            Some((p, c)) if c.receiver == Some(*u) => {
                if c.name == "send" {
                    let s = cx.tree.enclosing_stmt(p);
                    if s.is_some_and(|s| !common::enclosing_loops(cx, s).is_empty()) {
                        return false;
                    }
                    sends += 1;
                } else if c.name == "clone" {
                    return false;
                }
            }
            // `drop(tx)`: the sender ends there; it sends nothing.
            Some((_, c)) if dropped(c) => {}
            Some(_) => return false, // passed to a function
            None => {}
        }
    }
    // A few sends written out one by one (not in a loop), from a sender
    // that never leaves: the queue holds at most that many messages.
    (1..=MAX_LISTED_SENDS).contains(&sends)
}

/// How many sends written out one by one still make a channel whose size
/// the code fixes (a demo's `tx.send("hello"); tx.send("bye")`).
const MAX_LISTED_SENDS: usize = 4;

/// The receiver is read once (`rx.recv()` outside any loop) by the
/// function that made the channel and never leaves it: an answer channel
/// for a startup handshake. Nothing reads a second message, and the queue
/// goes away with the function.
fn received_once(cx: &FileCx, ctor: ExprId) -> bool {
    use super::common;
    let Some((f, ch, top, after)) = channel_made_by(cx, ctor) else {
        return false;
    };
    let mut uses = common::uses_after(cx, top, &ch.rx, after);
    // `let rx = rx.recv();` shadows the receiver: later uses of the name
    // are of the new binding. Keep the uses in that statement's value and
    // those before it.
    if let Some(b) = uses.iter().position(|&u| binds_the_name(cx, u)) {
        let stmt = cx.tree.enclosing_stmt(uses[b]);
        let mut kept: Vec<ExprId> = uses[..b].to_vec();
        kept.extend(
            uses[b + 1..]
                .iter()
                .copied()
                .filter(|&u| cx.tree.enclosing_stmt(u) == stmt),
        );
        uses = kept;
    }
    let [u] = uses.as_slice() else { return false };
    if cx.func_of(*u) != f {
        return false;
    }
    let Some(c) = common::method_on(cx, *u) else {
        return false;
    };
    let is_loop = |s: StmtId| {
        matches!(
            cx.stmt(s).kind,
            StmtKind::Loop { .. } | StmtKind::While { .. } | StmtKind::For { .. }
        )
    };
    // The loop header (`while let Ok(x) = rx.recv()`) counts as in the loop.
    matches!(c.name.as_str(), "recv" | "recv_timeout" | "try_recv")
        && cx
            .tree
            .enclosing_stmt(*u)
            .is_some_and(|s| !is_loop(s) && common::enclosing_loops(cx, s).is_empty())
}

/// Scatter-gather: the function that made the channel hands a clone of the
/// sender to each task it starts, each task sends once (not in a loop),
/// and the function itself drains the receiver to the end (`rx.iter()
/// .collect()`, `for r in rx`). The queue holds at most one message per
/// task, all of which the function keeps anyway.
fn gathered_by_maker(cx: &FileCx, ctor: ExprId) -> bool {
    use super::common;
    let Some((f, ch, top, after)) = channel_made_by(cx, ctor) else {
        return false;
    };
    let rx_uses = common::uses_after(cx, top, &ch.rx, after);
    let [u] = rx_uses.as_slice() else {
        return false;
    };
    if cx.func_of(*u) != f {
        return false;
    }
    let drained = common::method_on(cx, *u)
        .is_some_and(|c| matches!(c.name.as_str(), "iter" | "into_iter"))
        || cx.tree.enclosing_stmt(*u).is_some_and(
            |s| matches!(cx.stmt(s).kind, StmtKind::For { iter, .. } if cx.model.strip(iter) == *u),
        );
    if !drained {
        return false;
    }
    let mut sends = 0;
    for t in common::uses_after(cx, top, &ch.tx, after) {
        // `let tx = tx.clone();`: the clone's own name.
        if binds_the_name(cx, t) {
            continue;
        }
        match common::call_around(cx, t) {
            Some((p, c)) if c.receiver == Some(t) && c.name == "send" => {
                let looped = cx
                    .tree
                    .enclosing_stmt(p)
                    .is_some_and(|s| !common::enclosing_loops(cx, s).is_empty());
                if looped {
                    return false;
                }
                sends += 1;
            }
            Some((_, c)) if c.receiver == Some(t) && c.name == "clone" => {}
            Some((_, c)) if c.receiver.is_none() && c.name == "drop" => {}
            _ => return false,
        }
    }
    sends > 0
}

/// `u` is the name a `let` (or an assignment) binds, not a use of the
/// value: `let tx = Sender { inner: tx }` shadows the raw sender, `let tx =
/// tx.clone()` names a clone.
fn binds_the_name(cx: &FileCx, u: ExprId) -> bool {
    matches!(
        cx.tree.expr_parent(u),
        unsnarl_model::walk::Parent::Stmt(s)
            if matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, .. } if targets.contains(&u))
    )
}

/// The `let (tx, rx) = ..` channel that `ctor` builds: the function it is
/// made in, the channel, the outermost function its names are visible in,
/// and where its statement ends.
fn channel_made_by(
    cx: &FileCx,
    ctor: ExprId,
) -> Option<(FuncId, super::common::LocalChannel, FuncId, u32)> {
    let f = cx.func_of(ctor);
    let ch = super::common::local_channels(cx, f)
        .into_iter()
        .find(|ch| ch.ctor == ctor)?;
    let after = cx.stmt(ch.stmt).span.end;
    Some((f, ch, super::common::outermost(cx, f), after))
}

/// The struct fields the channel end `name` (declared by `decl`, in scope
/// in `top` after `after`) is stored in: `Struct { field: tx }`, `field:
/// Some(tx)`, `field: Mutex::new(tx)`, or a constructor of this file that
/// puts it in one. `None` when it goes anywhere else (a send here, a clone,
/// a function argument): then we cannot see all its uses.
fn stored_in_fields(
    cx: &FileCx,
    top: FuncId,
    name: &str,
    decl: StmtId,
    after: u32,
) -> Option<Vec<Str>> {
    use super::common;
    let mut fields = Vec::new();
    for u in common::uses_after(cx, top, name, after) {
        // `let tx = Sender { inner: tx, .. }` shadows the raw sender: later
        // uses are of the wrapper.
        if binds_the_name(cx, u) || common::declaration_of(cx, name, u) != Some(decl) {
            continue;
        }
        let mut cur = u;
        let field = loop {
            match cx.tree.expr_parent(cur) {
                unsnarl_model::walk::Parent::Expr(p) => match &cx.expr(p).kind {
                    ExprKind::Call(c)
                        if c.receiver.is_none() && c.args.iter().any(|a| a.value == cur) =>
                    {
                        // `make_control(tx)`: a constructor of this file
                        // that puts its parameter in a struct field.
                        if let Some(g) = cx.callee_in_file(c)
                            && let Some(i) = c.args.iter().position(|a| a.value == cur)
                            && let Some(param) = cx.param_receiving(g, c, i)
                        {
                            break field_holding(cx, g, param);
                        }
                        cur = p
                    }
                    ExprKind::Collection { elems, keys, .. } => {
                        break elems
                            .iter()
                            .position(|&e| e == cur)
                            .and_then(|i| keys.get(i).cloned().flatten());
                    }
                    _ => break None,
                },
                _ => break None,
            }
        };
        fields.push(field?);
    }
    (!fields.is_empty()).then_some(fields)
}

/// The calls named one of `names` made through one of `fields`
/// (`self.inner.cmd_tx.send(..)`).
fn calls_through<'a>(
    cx: &'a FileCx,
    fields: &'a [Str],
    names: &'a [&str],
) -> impl Iterator<Item = (ExprId, &'a Call)> + 'a {
    cx.model.exprs.iter().enumerate().filter_map(move |(i, e)| {
        let ExprKind::Call(c) = &e.kind else {
            return None;
        };
        (names.contains(&c.name.as_str())
            && c.receiver
                .and_then(|r| field_root(cx, r))
                .is_some_and(|n| fields.iter().any(|k| k == n)))
        .then_some((ExprId(i as u32), &**c))
    })
}

const SENDS: &[&str] = &["send", "unbounded_send", "try_send"];

/// A request/reply channel: the sender is stored in struct fields, and every
/// send through those fields in this file carries a reply sender made just
/// before (`let (tx, rx) = oneshot::channel(); self.inner.send((req, tx));`)
/// whose receiver the sending function keeps and waits on. Each caller has at
/// most one request in the queue, so it cannot outgrow the callers.
fn request_reply(cx: &FileCx, ctor: ExprId) -> bool {
    use super::common;
    let Some((_, ch, top, after)) = channel_made_by(cx, ctor) else {
        return false;
    };
    let Some(fields) = stored_in_fields(cx, top, &ch.tx, ch.stmt, after) else {
        return false;
    };
    // The structs the sender went into (`Sink { sender }`): a send through
    // a field of the same name in a method of another struct of the file
    // (`Driver`'s own `sender`) is another channel. A send through a part
    // of `self` (`self.inner.tx_api`, the sender kept in `RaftInner`) is
    // made by a method of the struct holding that part, not the owner.
    let owners = storing_structs(cx, top, &ch.tx, after);
    let mut sends = 0;
    for (id, c) in calls_through(cx, &fields, SENDS) {
        let sender_fn = cx.func_of(id);
        let method_of = cx.func(common::outermost(cx, sender_fn)).class.as_deref();
        let through_part = c
            .receiver
            .and_then(|r| cx.model.dotted(r))
            .is_some_and(|d| d.starts_with("self.") && d.matches('.').count() > 1);
        if !owners.is_empty()
            && !through_part
            && method_of.is_some_and(|k| {
                let k = k.rsplit("::").next().unwrap_or(k);
                !owners.iter().any(|o| o == k)
            })
        {
            continue;
        }
        let replies = common::local_channels(cx, common::outermost(cx, sender_fn));
        let carries_reply = c.args.iter().any(|a| {
            // Also inside a closure the message carries (`Box::new(move
            // |conn| { let _ = tx.send(f(conn)); })`).
            let under = unsnarl_model::walk::exprs_under(cx.model, a.value);
            let in_closures: Vec<ExprId> = under
                .iter()
                .filter_map(|&x| match cx.expr(x).kind {
                    ExprKind::Closure(g) => Some(g),
                    _ => None,
                })
                .flat_map(|g| cx.with_nested(g))
                .flat_map(|g| cx.body_exprs(g).to_vec())
                .collect();
            under
                .into_iter()
                .chain(in_closures)
                .filter_map(|x| cx.model.name_of(x))
                .any(|n| {
                    replies.iter().any(|ch| {
                        ch.tx == n
                            && cx
                                .call(ch.ctor)
                                .and_then(|k| k.target.as_deref())
                                .is_some_and(|t| t.ends_with("oneshot::channel"))
                    })
                })
        });
        if !carries_reply {
            return false;
        }
        sends += 1;
    }
    sends > 0
}

/// A command channel between synchronous callers and a task that only
/// dispatches: every send (through the struct fields the sender is kept
/// in) is made by a function that is not async, so it could not wait for
/// room in a bounded channel (a `try_send` would drop commands), and every
/// receive is the condition of a loop whose body awaits nothing, so the
/// consumer keeps up with anything the callers can send.
fn sync_command_channel(cx: &FileCx, ctor: ExprId) -> bool {
    let Some((_, ch, top, after)) = channel_made_by(cx, ctor) else {
        return false;
    };
    // Only where a bounded send would have to be awaited: a blocking
    // `send` (std, crossbeam, flume) is backpressure a sync caller can use,
    // unless the consumer is a task (flume's `recv_async`): then the
    // callers are the runtime's threads too, and blocking one of them to
    // wait for the task would stall the task itself.
    let target = cx
        .call(ctor)
        .and_then(|c| c.target.as_deref())
        .unwrap_or("");
    let awaited_send = target.starts_with("tokio::")
        || target.starts_with("futures")
        || target.starts_with("async_channel::");
    let task_consumer = target.starts_with("flume::");
    if !awaited_send && !task_consumer {
        return false;
    }
    let recv_names: &[&str] = if awaited_send {
        &["recv", "poll_recv"]
    } else {
        &["recv", "recv_async"]
    };
    let Some(tx) = stored_in_fields(cx, top, &ch.tx, ch.stmt, after) else {
        return false;
    };
    // The receives: through the fields the receiver is kept in, or in the
    // function of the file it is handed to (`spawn(controller(rx, ..))`).
    let recvs: Vec<ExprId> = match stored_in_fields(cx, top, &ch.rx, ch.stmt, after) {
        Some(rx) => calls_through(cx, &rx, recv_names).map(|(e, _)| e).collect(),
        None => {
            let uses = super::common::uses_after(cx, top, &ch.rx, after);
            let [u] = uses.as_slice() else { return false };
            let unsnarl_model::walk::Parent::Expr(p) = cx.tree.expr_parent(*u) else {
                return false;
            };
            let Some(c) = cx.call(p) else { return false };
            let (Some(g), Some(i)) = (
                cx.callee_in_file(c),
                c.args.iter().position(|a| a.value == *u),
            ) else {
                return false;
            };
            let Some(param) = cx.param_receiving(g, c, i) else {
                return false;
            };
            cx.body_calls(g)
                .filter(|&e| {
                    cx.call(e).is_some_and(|k| {
                        recv_names.contains(&k.name.as_str())
                            && k.receiver.and_then(|r| cx.model.name_of(r)) == Some(param)
                    })
                })
                .collect()
        }
    };
    let in_async = |e: ExprId| {
        let f = cx.func_of(e);
        cx.func(f).is_async
            || cx
                .tree
                .func_ancestors(cx.model, f)
                .any(|g| cx.func(g).is_async)
    };
    if task_consumer
        && recvs
            .iter()
            .any(|&e| cx.call(e).is_some_and(|c| c.name != "recv_async"))
    {
        return false;
    }
    let mut sends = calls_through(cx, &tx, SENDS).peekable();
    if sends.peek().is_none() || sends.any(|(e, _)| in_async(e)) {
        return false;
    }
    !recvs.is_empty()
        && recvs.iter().all(|&e| {
            // A hand-written future's `poll` taking every ready message in
            // a loop (`loop { match ready!(self.rx.poll_recv(cx)) { .. } }`):
            // it cannot await, so it keeps up like the `while let` below.
            if cx.call(e).is_some_and(|c| c.name == "poll_recv") {
                return !in_async(e)
                    && cx.tree.enclosing_stmt(e).is_some_and(|s| {
                        matches!(cx.stmt(s).kind, StmtKind::While { .. })
                            || !super::common::enclosing_loops(cx, s).is_empty()
                    });
            }
            cx.tree
                .enclosing_stmt(e)
                .is_some_and(|s| match &cx.stmt(s).kind {
                    StmtKind::While { body, .. } => {
                        !unsnarl_model::walk::exprs_in_block(cx.model, body)
                            .into_iter()
                            .any(|x| matches!(cx.expr(x).kind, ExprKind::Await(_)))
                    }
                    // `loop { match rx.recv().await { .. } }`: the same
                    // consumer, when the receive is the only await.
                    StmtKind::Switch {
                        subject: Some(_), ..
                    } => match cx.tree.stmt_parent(s) {
                        unsnarl_model::walk::Parent::Stmt(lp) => match &cx.stmt(lp).kind {
                            StmtKind::Loop { body } => {
                                body.first() == Some(&s)
                                    && unsnarl_model::walk::exprs_in_block(cx.model, body)
                                        .into_iter()
                                        .filter(|&x| matches!(cx.expr(x).kind, ExprKind::Await(_)))
                                        .count()
                                        == 1
                            }
                            _ => false,
                        },
                        _ => false,
                    },
                    _ => false,
                })
        })
}

/// The struct types whose literal the channel end `name` is put in
/// directly (`Sink { sender }`), by last path segment; empty when any use
/// goes elsewhere (then nothing is known).
fn storing_structs(cx: &FileCx, top: FuncId, name: &str, after: u32) -> Vec<String> {
    let mut out = Vec::new();
    for u in super::common::uses_after(cx, top, name, after) {
        let unsnarl_model::walk::Parent::Expr(p) = cx.tree.expr_parent(u) else {
            continue;
        };
        match &cx.expr(p).kind {
            ExprKind::Collection { ty: Some(t), .. } => {
                let t = t.text.rsplit("::").next().unwrap_or(&t.text);
                // `Self { tx, .. }` in an `impl Queue` is a `Queue`.
                let t = match cx.func(top).class.as_deref() {
                    Some(class) if t == "Self" => {
                        let last = class.rsplit("::").next().unwrap_or(class);
                        last.split('<').next().unwrap_or(last)
                    }
                    _ => t,
                };
                out.push(t.to_string());
            }
            _ => return Vec::new(),
        }
    }
    out
}

/// The struct field a function puts its parameter `param` in
/// (`WorkerControl { halt_tx }`), when that is the parameter's only use.
fn field_holding(cx: &FileCx, f: FuncId, param: &str) -> Option<Str> {
    let uses: Vec<ExprId> = cx
        .body_exprs(f)
        .iter()
        .copied()
        .filter(|&e| cx.model.name_of(e) == Some(param))
        .collect();
    let [u] = uses.as_slice() else { return None };
    let unsnarl_model::walk::Parent::Expr(p) = cx.tree.expr_parent(*u) else {
        return None;
    };
    let ExprKind::Collection { elems, keys, .. } = &cx.expr(p).kind else {
        return None;
    };
    elems
        .iter()
        .position(|e| e == u)
        .and_then(|i| keys.get(i).cloned().flatten())
}

/// The field a method receiver chain starts from: `self.inner.tx.as_ref()
/// .expect(..)` → `tx`.
fn field_root<'a>(cx: &FileCx<'a>, mut e: ExprId) -> Option<&'a str> {
    for _ in 0..8 {
        e = cx.model.strip(e);
        match &cx.expr(e).kind {
            ExprKind::Attr { name, .. } => return Some(name),
            ExprKind::Try(inner) => e = *inner,
            ExprKind::Call(c) if c.receiver.is_some() => e = c.receiver?,
            // A local copy of the field: `let rx = self.rx.clone();`.
            ExprKind::Name { id, .. } => {
                let s = super::common::declaration_of(cx, id, e)?;
                let StmtKind::Assign {
                    targets,
                    value: Some(v),
                    ..
                } = &cx.stmt(s).kind
                else {
                    return None;
                };
                if targets.len() != 1 {
                    return None;
                }
                e = *v;
            }
            _ => return None,
        }
    }
    None
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[
        r#"
use std::sync::mpsc;
use tokio::sync::mpsc::unbounded_channel;

fn setup() {
    let (a, b) = mpsc::channel::<u32>(); // expect
    let (c, d) = unbounded_channel::<u32>(); // expect
    let (e, f) = crossbeam_channel::unbounded::<u32>(); // expect
}

#[tokio::main]
async fn main() {
    let (audit_tx, mut audit_rx) = tokio::sync::mpsc::unbounded_channel::<String>(); // expect
    let consumer = tokio::spawn(async move {
        while let Some(line) = audit_rx.recv().await {
            println!("{line}");
        }
    });
    let (events_tx, events_rx) = tokio::sync::mpsc::channel::<String>(16);
    run(events_rx).await;
    audit_tx.send("done".into()).unwrap();
    drop((audit_tx, events_tx));
    consumer.await.unwrap();
}
"#,
        r#"
use futures::channel::mpsc;

enum Event { Joined(u64) }
enum Void {}

async fn serve(listener: Listener) {
    let (events_tx, events_rx) = mpsc::unbounded::<Event>(); // expect
    let (_stop, stopped): (mpsc::UnboundedSender<Event>, mpsc::UnboundedReceiver<Void>) = mpsc::unbounded(); // expect
    run(listener, events_tx, events_rx, stopped).await;
}
"#,
        r#"
// Some sends carry no reply: nothing bounds those.
struct Bus {
    tx: tokio::sync::mpsc::UnboundedSender<(Event, Option<tokio::sync::oneshot::Sender<()>>)>,
}

impl Bus {
    fn new() -> Bus {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel(); // expect
        tokio::spawn(drain(rx));
        Bus { tx }
    }

    async fn publish_and_wait(&self, e: Event) {
        let (done_tx, done_rx) = tokio::sync::oneshot::channel();
        self.tx.send((e, Some(done_tx))).unwrap();
        done_rx.await.unwrap();
    }

    fn publish(&self, e: Event) {
        self.tx.send((e, None)).unwrap();
    }
}

// The receiver is read in a loop: a stream of results, not one answer.
fn collect(jobs: Vec<Job>) -> Vec<Out> {
    let (tx, rx) = std::sync::mpsc::channel(); // expect
    for j in jobs {
        let tx = tx.clone();
        std::thread::spawn(move || tx.send(j.run()).unwrap());
    }
    drop(tx);
    let mut out = Vec::new();
    while let Ok(o) = rx.recv() {
        out.push(o);
    }
    out
}
"#,
        r#"
use std::collections::HashMap;
use tokio::sync::mpsc;

pub enum Command {
    Exit(i32),
    Register(usize, String),
}

pub struct Runtime {
    tx: mpsc::UnboundedSender<Command>,
}

impl Runtime {
    pub fn start() -> Runtime {
        let (tx, rx) = mpsc::unbounded_channel(); // expect
        tokio::spawn(controller(rx));
        Runtime { tx }
    }

    pub fn stop(&self, code: i32) {
        let _ = self.tx.send(Command::Exit(code));
    }

    pub fn register(&self, id: usize, name: String) {
        let _ = self.tx.send(Command::Register(id, name));
    }
}

async fn controller(mut rx: mpsc::UnboundedReceiver<Command>) {
    let mut workers = HashMap::new();
    while let Some(cmd) = rx.recv().await {
        match cmd {
            Command::Exit(_) => return,
            Command::Register(id, name) => {
                announce(&name).await;
                workers.insert(id, name);
            }
        }
    }
}
"#,
        r#"
use flume::{Receiver, Sender};

pub struct Driver {
    rx: Receiver<Command>,
    handle: Handle,
}

#[derive(Clone)]
pub struct Handle {
    tx: Sender<Command>,
}

impl Handle {
    pub fn ack(&self, tag: u64) {
        let _ = self.tx.send(Command::Ack(tag));
    }
}

impl Driver {
    pub fn new() -> Self {
        let (tx, rx) = flume::unbounded(); // expect
        Self { rx, handle: Handle { tx } }
    }

    pub async fn run(self, wire: Wire) {
        while let Ok(cmd) = self.rx.recv_async().await {
            match cmd {
                Command::Ack(tag) => wire.ack(tag).await,
            }
        }
    }
}
"#,
        r#"
use std::sync::mpsc;
use std::thread;

// Each worker streams lines for as long as it runs.
pub fn collect_logs(workers: &[Worker]) -> Vec<String> {
    let (tx, rx) = mpsc::channel(); // expect
    for w in workers {
        let tx = tx.clone();
        let lines = w.lines();
        thread::spawn(move || {
            for line in lines {
                let _ = tx.send(line);
            }
        });
    }
    drop(tx);
    rx.iter().collect()
}
"#,
        r#"
async fn add_all(ctx: Ctx) -> Vec<u64> {
    let mut created_rx = ctx.created.subscribe();
    let (tx, rx) = std::sync::mpsc::channel(); // expect
    tokio::spawn(async move {
        while let Ok(id) = created_rx.recv().await {
            let _ = tx.send(id);
        }
    });
    let first = rx.recv();
    let rx: Vec<u64> = rx.iter().take(10).collect();
    first.into_iter().chain(rx).collect()
}
"#,
        r#"
use std::thread;

fn main() {
    let (tx, rx) = flume::unbounded(); // expect
    let t = thread::spawn(move || {
        for msg in rx.iter() {
            println!("{msg}");
        }
    });
    for line in std::io::stdin().lines() {
        tx.send(line.unwrap()).unwrap();
    }
    drop(tx);
    t.join().unwrap();
}
"#,
        r#"
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::sync::mpsc;

pub enum Command {
    Stop,
    Execute(Pin<Box<dyn Future<Output = ()>>>),
}

pub struct Handle {
    tx: mpsc::UnboundedSender<Command>,
}

struct Runner {
    rx: mpsc::UnboundedReceiver<Command>,
}

impl Future for Runner {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            match ready!(self.rx.poll_recv(cx)) {
                None | Some(Command::Stop) => return Poll::Ready(()),
                Some(Command::Execute(fut)) => {
                    tokio::task::spawn_local(fut);
                }
            }
        }
    }
}
// `run` awaits on the sending side: a bounded channel would give it
// backpressure, and here a fast caller grows the queue without limit.
impl Handle {
    pub fn start() -> Handle {
        let (tx, rx) = mpsc::unbounded_channel(); // expect
        tokio::task::spawn_local(Runner { rx });
        Handle { tx }
    }

    pub async fn run(&self, job: Pin<Box<dyn Future<Output = ()>>>) {
        let _ = self.tx.send(Command::Execute(job));
        tokio::task::yield_now().await;
    }
}
"#,
        r#"
use async_channel::{unbounded, Receiver, Sender};

enum Command {
    Stop,
    Execute(Box<dyn FnOnce() + Send>),
}

pub struct Arbiter {
    sender: Sender<Command>,
}

impl Arbiter {
    pub fn new() -> Arbiter {
        let (tx, rx) = unbounded(); // expect
        let ctl = Controller { rx };
        std::thread::spawn(move || block_on(ctl.run()));
        Arbiter { sender: tx }
    }

    pub fn stop(&self) {
        let _ = self.sender.try_send(Command::Stop);
    }

    pub fn exec(&self, f: Box<dyn FnOnce() + Send>) {
        let _ = self.sender.try_send(Command::Execute(f));
    }
}

struct Controller {
    rx: Receiver<Command>,
}

impl Controller {
    async fn run(self) {
        loop {
            match self.rx.recv().await {
                Ok(Command::Stop) => break,
                Ok(Command::Execute(f)) => {
                    f();
                    flush_to_disk().await;
                }
                Err(_) => break,
            }
        }
    }
}
"#,
        r#"
use std::sync::mpsc::{channel, Receiver, Sender};

pub struct Stepwise {
    receive_result: Receiver<u64>,
    feed: Sender<u64>,
}

impl Stepwise {
    pub fn reset(&mut self) {
        let (tx, sink) = channel(); // expect
        self.feed = tx;
        drop(std::mem::replace(&mut self.receive_result, sink));
    }
}
"#,
        r#"
// A send through the shared part with no reply: nothing bounds it.
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

enum Msg {
    Vote { term: u64, tx: oneshot::Sender<bool> },
    Nudge,
}

struct Inner {
    tx_api: mpsc::UnboundedSender<Msg>,
}

pub struct Node {
    inner: Arc<Inner>,
}

impl Node {
    pub fn new() -> Self {
        let (tx_api, rx_api) = mpsc::unbounded_channel(); // expect
        tokio::spawn(core(rx_api));
        Node { inner: Arc::new(Inner { tx_api }) }
    }

    pub async fn vote(&self, term: u64) -> bool {
        let (tx, rx) = oneshot::channel();
        self.inner.tx_api.send(Msg::Vote { term, tx }).unwrap();
        rx.await.unwrap_or(false)
    }

    pub fn nudge(&self) {
        self.inner.tx_api.send(Msg::Nudge).unwrap();
    }
}
"#,
        r#"
pub struct Client;

impl Client {
    /// Both flavours queue without limit: there is nothing to choose.
    pub fn events(&mut self, fast: bool) -> Events {
        let (tx, rx) = if fast {
            flume::unbounded() // expect
        } else {
            crossbeam_channel::unbounded() // expect
        };
        self.subscribe(tx);
        Events(rx)
    }
}
"#,
    ],
    pass: &[
        r#"
/// The crate's own name for tokio's unbounded channel, for code that
/// builds on either runtime.
pub fn mpsc_unbounded<T>() -> (
    tokio::sync::mpsc::UnboundedSender<T>,
    tokio::sync::mpsc::UnboundedReceiver<T>,
) {
    tokio::sync::mpsc::unbounded_channel()
}
"#,
        r#"
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::sync::mpsc;

pub enum Command {
    Stop,
    Execute(Pin<Box<dyn Future<Output = ()>>>),
}

pub struct Handle {
    tx: mpsc::UnboundedSender<Command>,
}

struct Runner {
    rx: mpsc::UnboundedReceiver<Command>,
}

impl Future for Runner {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            match ready!(self.rx.poll_recv(cx)) {
                None | Some(Command::Stop) => return Poll::Ready(()),
                Some(Command::Execute(fut)) => {
                    tokio::task::spawn_local(fut);
                }
            }
        }
    }
}
// Every send is from a plain function, and the runner's `poll` takes
// every ready command in a loop, only handing each to the executor.
impl Handle {
    pub fn start() -> Handle {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::task::spawn_local(Runner { rx });
        Handle { tx }
    }

    pub fn spawn(&self, job: Pin<Box<dyn Future<Output = ()>>>) {
        let _ = self.tx.send(Command::Execute(job));
    }

    pub fn stop(&self) {
        let _ = self.tx.send(Command::Stop);
    }
}
"#,
        r#"
use std::thread;

fn main() {
    let (tx, rx) = flume::unbounded();
    let t = thread::spawn(move || {
        for msg in rx.iter() {
            println!("{msg}");
        }
    });
    tx.send("hello").unwrap();
    tx.send("bye").unwrap();
    drop(tx);
    t.join().unwrap();
}
"#,
        r#"
async fn add(ctx: Ctx) -> Result<u64, Error> {
    let mut created_rx = ctx.created.subscribe();
    let (tx, rx) = std::sync::mpsc::channel();
    tokio::spawn(async move {
        loop {
            if let Ok(id) = created_rx.recv().await {
                let _ = tx.send(Ok(id));
                break;
            }
        }
    });
    let rx = rx.recv();
    match rx {
        Ok(ret) => ret,
        Err(_) => Err(Error::CantAdd),
    }
}
"#,
        r#"
/// An instrumented stand-in for `std::sync::mpsc::channel`.
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let (tx, rx) = std::sync::mpsc::channel();
    trace::record_channel();
    (Sender { inner: tx }, Receiver { inner: rx })
}

/// The crate's unbounded channel, whichever backend is compiled in.
pub(crate) fn unbounded<T>() -> (Sender<T>, Receiver<T>) {
    std::sync::mpsc::channel()
}
"#,
        r#"
use futures::channel::mpsc;

enum Void {}

async fn serve(listener: Listener) {
    let (_shutdown_tx, shutdown_rx) = mpsc::unbounded::<Void>();
    let (_stop, stopped): (mpsc::UnboundedSender<std::convert::Infallible>, mpsc::UnboundedReceiver<std::convert::Infallible>) = mpsc::unbounded();
    run(listener, shutdown_rx, stopped).await;
}
"#,
        r#"
use std::collections::HashMap;
use tokio::sync::mpsc;

pub enum Command {
    Exit(i32),
    Register(usize, String),
}

pub struct Runtime {
    tx: mpsc::UnboundedSender<Command>,
}

impl Runtime {
    pub fn start() -> Runtime {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(controller(rx));
        Runtime { tx }
    }

    pub fn stop(&self, code: i32) {
        let _ = self.tx.send(Command::Exit(code));
    }

    pub fn register(&self, id: usize, name: String) {
        let _ = self.tx.send(Command::Register(id, name));
    }
}

async fn controller(mut rx: mpsc::UnboundedReceiver<Command>) {
    let mut workers = HashMap::new();
    while let Some(cmd) = rx.recv().await {
        match cmd {
            Command::Exit(_) => return,
            Command::Register(id, name) => {
                workers.insert(id, name);
            }
        }
    }
}
"#,
        r#"
fn run_until_done(work: impl FnOnce() -> u64 + Send + 'static) -> u64 {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(work());
    });
    loop {
        if let Ok(v) = rx.try_recv() {
            return v;
        }
        std::thread::yield_now();
    }
}
"#,
        r#"
use tokio::sync::{mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender}, oneshot};

pub struct Halt {
    pub graceful: bool,
    pub done: oneshot::Sender<bool>,
}

pub struct WorkerControl {
    halt_tx: UnboundedSender<Halt>,
}

fn make_control(halt_tx: UnboundedSender<Halt>) -> WorkerControl {
    WorkerControl { halt_tx }
}

impl WorkerControl {
    pub fn halt(&self, graceful: bool) -> oneshot::Receiver<bool> {
        let (done, rx) = oneshot::channel();
        let _ = self.halt_tx.send(Halt { graceful, done });
        rx
    }
}

pub fn start_worker() -> WorkerControl {
    let (halt_tx, halt_rx) = unbounded_channel();
    tokio::spawn(run(halt_rx));
    make_control(halt_tx)
}
"#,
        r#"
use std::sync::mpsc;

fn setup() {
    let (a, b) = mpsc::sync_channel::<u32>(16);
    let (c, d) = tokio::sync::mpsc::channel::<u32>(64);
    let (e, f) = crossbeam_channel::bounded::<u32>(8);
}

fn channel() {}

fn other() {
    channel();
}

// Every request carries a oneshot reply sender its caller waits on.
struct Handle {
    tx: tokio::sync::mpsc::UnboundedSender<(Query, tokio::sync::oneshot::Sender<Row>)>,
}

impl Handle {
    fn start() -> Handle {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(serve_queries(rx));
        Handle { tx }
    }

    async fn query(&self, q: Query) -> Row {
        let (reply_tx, reply_rx) = tokio::sync::oneshot::channel();
        self.tx.send((q, reply_tx)).expect("worker gone");
        reply_rx.await.expect("worker dropped the query")
    }
}

// The same through a wrapper that shadows the raw sender.
struct Client {
    chan: Chan,
}

impl Client {
    fn connect() -> Client {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(serve_queries(rx));
        let tx = Chan { raw: tx };
        Client { chan: tx }
    }

    async fn call(&self, q: Query) -> Row {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.chan.raw.send((q, tx)).ok();
        rx.await.unwrap()
    }
}

// A startup handshake: one answer, read once, then the channel is gone.
fn start_worker() -> Runtime {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || run_worker(ready_tx));
    ready_rx.recv().expect("worker failed to start")
}

fn close_signal(conn: Conn) -> std::sync::mpsc::Receiver<Error> {
    let (close_tx, close_rx) = std::sync::mpsc::channel();
    tokio::spawn(async move {
        let e = conn.closed().await;
        let _ = close_tx.send(e);
    });
    close_rx
}
"#,
        r#"
use flume::{Receiver, Sender};

pub struct Driver {
    rx: Receiver<Command>,
    handle: Handle,
}

#[derive(Clone)]
pub struct Handle {
    tx: Sender<Command>,
    spawner: Arc<dyn Spawn>,
}

impl Handle {
    pub fn ack(&self, tag: u64) {
        let _ = self.tx.send(Command::Ack(tag));
    }

    pub fn close(&self) {
        let _ = self.tx.send(Command::Close);
    }
}

impl Driver {
    pub fn new(spawner: Arc<dyn Spawn>) -> Self {
        let (tx, rx) = flume::unbounded();
        Self { rx, handle: Handle { tx, spawner } }
    }

    pub async fn run(self, wire: Arc<Wire>) {
        let spawner = self.handle.spawner.clone();
        let rx = self.rx.clone();
        while let Ok(cmd) = rx.recv_async().await {
            let wire = wire.clone();
            match cmd {
                Command::Ack(tag) => spawner.spawn(Box::pin(async move { wire.ack(tag).await })),
                Command::Close => break,
            }
        }
    }
}
"#,
        r#"
use std::sync::mpsc;
use std::thread;

// One clone per worker, one report each, all collected here.
pub fn collect_reports(workers: &[Worker]) -> Vec<String> {
    let (tx, rx) = mpsc::channel();
    for w in workers {
        let tx = tx.clone();
        let id = w.id;
        thread::spawn(move || {
            let _ = tx.send(format!("worker {id} ok"));
        });
    }
    drop(tx);
    rx.iter().collect()
}
"#,
        r#"
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::sync::oneshot;

struct Notifier {
    sender: UnboundedSender<Event>,
}

impl Notifier {
    fn notify(&self, e: Event) {
        let _ = self.sender.send(e);
    }
}

// Every request carries the oneshot its caller waits on.
pub struct Client {
    sender: UnboundedSender<Request>,
}

impl Client {
    pub fn new() -> (Client, UnboundedReceiver<Request>) {
        let (sender, receiver) = unbounded_channel();
        (Client { sender }, receiver)
    }

    pub async fn call(&self, input: Vec<u8>) -> Option<Vec<u8>> {
        let (reply, answer) = oneshot::channel();
        self.sender.send(Request { input, reply }).ok()?;
        answer.await.ok()
    }
}
"#,
        r#"
use tokio::sync::{mpsc, oneshot};

pub struct Job {
    pub req: u64,
    pub reply: oneshot::Sender<u64>,
}

pub struct Queue {
    tx: mpsc::UnboundedSender<Job>,
}

// Every send carries the reply its caller waits on (built with `Self`).
impl Queue {
    pub fn new() -> (Self, mpsc::UnboundedReceiver<Job>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Self { tx }, rx)
    }

    pub async fn call(&self, req: u64) -> Option<u64> {
        let (reply, answer) = oneshot::channel();
        self.tx.send(Job { req, reply }).ok()?;
        answer.await.ok()
    }
}
"#,
        r#"
// Synchronous callers (`try_send` would drop commands in a bounded one) and
// a consumer that only dispatches: it keeps up.
use async_channel::{unbounded, Receiver, Sender};

enum Command {
    Stop,
    Execute(Box<dyn FnOnce() + Send>),
}

pub struct Arbiter {
    sender: Sender<Command>,
}

impl Arbiter {
    pub fn new() -> Arbiter {
        let (tx, rx) = unbounded();
        let ctl = Controller { rx };
        std::thread::spawn(move || block_on(ctl.run()));
        Arbiter { sender: tx }
    }

    pub fn stop(&self) {
        let _ = self.sender.try_send(Command::Stop);
    }

    pub fn exec(&self, f: Box<dyn FnOnce() + Send>) {
        let _ = self.sender.try_send(Command::Execute(f));
    }
}

struct Controller {
    rx: Receiver<Command>,
}

impl Controller {
    async fn run(self) {
        loop {
            match self.rx.recv().await {
                Ok(Command::Stop) => break,
                Ok(Command::Execute(f)) => f(),
                Err(_) => break,
            }
        }
    }
}
"#,
        r#"
use std::sync::mpsc::{channel, Receiver};
use std::thread::JoinHandle;

pub struct Stepwise {
    receive_result: Receiver<u64>,
    threads: Vec<JoinHandle<()>>,
}

impl Drop for Stepwise {
    fn drop(&mut self) {
        let (_, sink) = channel();
        drop(std::mem::replace(&mut self.receive_result, sink));
        for handle in std::mem::take(&mut self.threads) {
            let _ = handle.join();
        }
    }
}
"#,
        r#"
use std::thread;
use tokio::sync::oneshot;

enum Message {
    Execute(Box<dyn FnOnce(&mut Db) + Send + 'static>),
}

pub struct Connection {
    sender: crossbeam_channel::Sender<Message>,
}

impl Connection {
    pub fn open(db: Db) -> Self {
        let (sender, receiver) = crossbeam_channel::unbounded::<Message>();
        thread::spawn(move || event_loop(db, receiver));
        Self { sender }
    }

    pub async fn call<R: Send + 'static>(&self, function: fn(&mut Db) -> R) -> Option<R> {
        let (sender, receiver) = oneshot::channel::<R>();
        self.sender
            .send(Message::Execute(Box::new(move |db| {
                let _ = sender.send(function(db));
            })))
            .ok()?;
        receiver.await.ok()
    }
}

fn event_loop(mut db: Db, receiver: crossbeam_channel::Receiver<Message>) {
    while let Ok(Message::Execute(f)) = receiver.recv() {
        f(&mut db);
    }
}
"#,
        r#"
// Every request, sent through the shared part, waits for its reply.
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

enum Msg {
    Vote { term: u64, tx: oneshot::Sender<bool> },
    Nudge,
}

struct Inner {
    tx_api: mpsc::UnboundedSender<Msg>,
}

pub struct Node {
    inner: Arc<Inner>,
}

impl Node {
    pub fn new() -> Self {
        let (tx_api, rx_api) = mpsc::unbounded_channel();
        tokio::spawn(core(rx_api));
        Node { inner: Arc::new(Inner { tx_api }) }
    }

    pub async fn vote(&self, term: u64) -> bool {
        let (tx, rx) = oneshot::channel();
        self.inner.tx_api.send(Msg::Vote { term, tx }).unwrap();
        rx.await.unwrap_or(false)
    }
}
"#,
        r#"
use tokio::sync::mpsc;

pub struct Client;

impl Client {
    /// `None` asks for no limit: the caller picks, knowing its consumer.
    pub fn events(&mut self, limit: Option<usize>) -> Events {
        let (tx, rx) = match limit {
            Some(n) => {
                let (tx, rx) = mpsc::channel(n);
                (Sender::Bounded(tx), Receiver::Bounded(rx))
            }
            None => {
                let (tx, rx) = mpsc::unbounded_channel();
                (Sender::Unbounded(tx), Receiver::Unbounded(rx))
            }
        };
        self.subscribe(tx);
        Events(rx)
    }
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(UnboundedChannel);

    /// The fix names the bounded constructor of the crate that was called.
    #[test]
    fn the_fix_is_the_same_crates_bounded_channel() {
        let fixes = crate::testing::fixes(&UnboundedChannel, Language::Rust, EXAMPLES.fail[0]);
        assert!(
            fixes[0].contains("`std::sync::mpsc::sync_channel(n)`"),
            "{fixes:#?}"
        );
        assert!(
            fixes[1].contains("`tokio::sync::mpsc::channel(n)`"),
            "{fixes:#?}"
        );
        assert!(
            fixes[2].contains("`crossbeam_channel::bounded(n)`"),
            "{fixes:#?}"
        );
    }
}
