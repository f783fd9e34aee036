//! RS001: a spawned task or thread whose handle is dropped.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::{Parent, exprs_under};
use unsnarl_model::*;

pub struct DetachedSpawn;

pub static META: RuleMeta = RuleMeta {
    id: "RS001",
    name: "detached-spawn",
    category: Category::OrphanTask,
    severity: Severity::High,
    languages: &[Language::Rust],
    summary: "`tokio::spawn`, `spawn_blocking`, `std::thread::spawn` (and friends) whose `JoinHandle` is dropped, bound to `_`, or never used.",
    docs: r#"
A task or thread spawned with `tokio::spawn`, `tokio::task::spawn_local`,
`spawn_blocking`, `std::thread::spawn` or `async_std::task::spawn` whose
`JoinHandle` is discarded: used as a statement, bound with `let _ =`, or bound
to a name that is never used.

Not findings: tasks the shutdown path owns (they wait on a cancellation
token's `cancelled()`, a watch receiver's `changed()` or a sender's
`closed()`, hold a shutdown signal, or hold one end of a channel whose other
end the spawner waits on afterwards), a background worker spawned next to
the handle the function returns (`let (svc, worker) = pair(); spawn(worker);
svc`, or a connection driver `conn` from `let (client, conn) =
handshake(io).await?` (or from a local holding that result, `let (client,
conn) = connect.unwrap()`) with `client` used afterwards: it ends when the handle
is dropped; or the other way round, a task holding the handle while the
spawner drives the worker in a loop, `while let Ok(ev) =
eventloop.poll().await` (or `for ev in connection.iter()`, or a `loop`
that polls it first thing and can end), which ends once the task drops
it; or a method
taking apart a value of both, spawning one field and returning the other,
`spawn(self.driver); self.handle`), tasks that report back on a channel or reply sender the
caller holds (also a sender handed to a method or to a function of the
project, `add_to_stream(err, &tx)`, or a clone of the sender, `let
cloned_tx = tx.clone()`, or a reply sender carried
by the request the task answers, `request.reply.send(r)` or
`message.sender.send(r)` on a parameter of the handler, also once taken out
of it, `let tx = m.tx.take().unwrap(); .. reply(tx, v)`, and a future
first put in a local, `let fut = handle(req); spawn(fut)`), and executor adapters that spawn the future their caller
hands them (`fn execute(&self, fut: F) { tokio::spawn(fut); }`, or a thread
running `block_on(fut)`; also a task that only runs a callback the user
registered, `let cb = self.on_open.clone(); spawn(async move {
cb(()).await })`, or a handler implemented for closures spawning
`(self.clone())()`), or an executor loop spawning futures it takes off
a channel (`while let Some(Cmd::Submit(job)) = rx.recv().await {
spawn(job) }`, or a `match` on `ready!(self.rx.poll_recv(cx))` in a
loop of a hand-written future's `poll`; also a thread that runs such a
loop of a channel the function made on a runtime of its own): the caller owns that work. Pool workers that run on a
clone of the state of the value the function returns, when that type's
`Drop` is in the file (it tells them to stop), live as long as the handle
and are not reported either, nor is a task holding a clone of a field
that the spawning type's `Drop` in the file touches (`let state =
self.state.clone(); thread::spawn(move || while state.load(..) == 1 {
.. })` beside a `drop` that stores 2 in `self.state`, or `Db::new`
spawning on `shared.clone()` and returning `Db { shared }`): the owner's
drop tells it to stop. Nor are a spawn per
connection in `main`'s (or a `-> !` function's) accept loop that never
ends or is the last thing `main` does, where nothing runs after the loop
but the end of the process, and a
thread started inside a one-time initializer (`OnceLock::get_or_init`,
`Lazy::new`, `Once::call_once`), or in a function of the file that only
such initializers call or are handed (`Lazy::new(|| start())`,
`get_or_try_init(iocp_start)`), or in a method taking `&'static self` (a
pool kept in a static, `fn start(&'static self)`): it lives as long as
the process and has no owner to join it. Neither are a task that never ends started by `main`
(an endless `loop`, in the task or in the function of the file it runs:
`thread::spawn(|| block_on(EX.run()))`; it lives as long as the process) and a spawn in a `Drop` implementation
(nobody is left to hold the handle). The same accept loop in a helper
that `main` awaits last, or runs while it goes on forever itself, counts
as `main`'s, and so do the per-stream tasks of a connection's serving loop
(`while let Some(s) = conn.accept_stream().await { spawn(..) }`) in a
function that only such an accept loop's connection tasks run. A task
holding its owner only as a `Weak`, which stops when `upgrade()` fails
(`while let Some(o) = Weak::upgrade(&w)`, or a `None => break` arm),
ends with that owner and is left alone too. So is an actor: a task
given the receiver of a channel the function made (directly or inside a
value it builds, `Actor { conn, request_rx }`) whose sender goes back in
the handle the function returns (`Client { inner:
Arc::new(Mutex::new(Inner { request_tx })) }`), when the file drains that
receiver in a `while let` loop and the task holds no sender of its own:
it ends once the last handle is dropped. A task that only drains a channel the function made, calling
something synchronous per message (`while let Some(ev) = rx.recv().await
{ cb(ev) }`, or a thread's `for job in rx { job() }` or `while let Ok(m) =
rx.recv()`, also in a function of the file the thread only calls with
the receiver: `thread::spawn(move || event_loop(conn, receiver))`), ends
with the last sender and is left alone too. An async block
that awaits nothing and loops nowhere is done on its first poll and is not
reported either. A serving
loop that can end (a shutdown branch, `?`) is still reported: that is
where in-flight work gets cut off.
Example and bench programs (files under `examples/` or `benches/`, but
not a project with a `src/` of its own kept there, and benchmark binaries
such as `src/bin/perf-producer.rs`) are not reported: they
run once and exit, and what they start is a demonstration.

## Why

Dropping a `JoinHandle` detaches the task: it keeps running with no owner.
Its panic is caught by the runtime and only surfaces through the handle
nobody holds, its errors are lost, and nothing cancels or waits for it when
the caller returns or the service shuts down, so in-flight work is cut off
at exit.

## Example

```rust
async fn sync_all(items: Vec<Item>) {
    for item in items {
        tokio::spawn(async move { sync_to_remote(item).await });
    }
}
```

## Fix

Keep the handles: spawn on a `JoinSet` owned by the caller and drain it
(errors and panics surface), or await the handle.

```rust
async fn sync_all(items: Vec<Item>) -> anyhow::Result<()> {
    let mut set = tokio::task::JoinSet::new();
    for item in items {
        set.spawn(sync_to_remote(item));
    }
    while let Some(res) = set.join_next().await {
        res??;
    }
    Ok(())
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for DetachedSpawn {
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
            let id = ExprId(i as u32);
            if cx.effect(c, Effect::ScopedSpawn).is_some() {
                continue;
            }
            let Some(entry) = cx.effect(c, Effect::Spawn) else {
                continue;
            };
            if super::common::test_like(cx, cx.func_of(id))
                || forwards_param(cx, id, c)
                || tracked(cx, id)
                || reports_back(cx, id)
                || stops_on_shutdown(cx, id)
                || worker_of_returned_handle(cx, id)
                || holds_handle_of_driven_worker(cx, id)
                || serves_until_exit(cx, id)
                || in_drop(cx, id)
                || once_per_process(cx, id)
                || spawns_received_future(cx, id, c)
                || runs_handed_callback(cx, c)
                || works_for_returned_owner(cx, id)
                || stopped_by_owners_drop(cx, id)
                || drains_own_channel(cx, id)
                || hosts_channel_executor(cx, id)
                || finishes_on_first_poll(cx, id)
                || driver_beside_returned_field(cx, id)
                || ends_with_weak_owner(cx, id)
                || actor_of_returned_sender(cx, id)
            {
                continue;
            }
            // A body that logs its failures has someone seeing its errors;
            // its panics still reach nobody.
            let logs = logs_failures(cx, id);
            // `Builder::new().spawn(f).unwrap()` / `..spawn(f)?`: the handle
            // is the unwrapped value.
            let id = through_unwrap(cx, id);
            let how = if cx.is_discarded(id) {
                "its `JoinHandle` is dropped right away".to_string()
            } else if let Some(name) = bound_name(cx, id) {
                if name == "_" {
                    "`let _ =` drops its `JoinHandle` right away".to_string()
                } else if !used_later(cx, id, &name) {
                    format!("its `JoinHandle` is bound to `{name}` and never used")
                } else {
                    continue;
                }
            } else {
                continue;
            };
            let noun = if entry.kind.as_deref() == Some("thread") {
                "thread"
            } else {
                "task"
            };
            let lost = if logs {
                "its panics reach nobody (its errors are only logged)"
            } else {
                "its panics and errors reach nobody"
            };
            out.push(cx.finding(
                &META,
                e.span,
                format!(
                    "`{}` starts a detached {noun}: {how}, so {lost} and nothing waits for it or stops it on shutdown",
                    cx.callee_display(c)
                ),
                entry.fix.clone(),
            ));
        }
    }
}

/// The spawned closure or async block writes log output (`error!`,
/// `eprintln!`) in a branch taken on an `Err` (`if let Err(e) = ...`, a
/// `match` arm `Err(e) => ...`): it reports its own failures.
fn logs_failures(cx: &FileCx, spawn: ExprId) -> bool {
    let Some(body) = super::common::spawned_fn(cx, spawn) else {
        return false;
    };
    let mentions_err = |root: ExprId| {
        unsnarl_model::walk::exprs_under(cx.model, root)
            .into_iter()
            .any(|x| cx.model.resolved(x) == Some("std::result::Result::Err"))
    };
    // `inner` is a statement of a branch of `outer` taken on an `Err`.
    let err_branch = |inner: StmtId, outer: StmtId| match &cx.stmt(outer).kind {
        StmtKind::If { cond, then, .. } => then.contains(&inner) && mentions_err(*cond),
        StmtKind::Switch { cases, .. } => cases
            .iter()
            .any(|c| c.body.contains(&inner) && c.patterns.iter().any(|&p| mentions_err(p))),
        _ => false,
    };
    let in_err_branch = |s: StmtId| {
        std::iter::once(s)
            .chain(cx.tree.stmt_ancestors(s))
            .zip(cx.tree.stmt_ancestors(s))
            .any(|(inner, outer)| err_branch(inner, outer))
    };
    cx.with_nested(body).into_iter().any(|f| {
        cx.body_stmts(f).iter().any(|&s| {
            super::common::own_exprs(cx.model, s).into_iter().any(|e| {
                cx.call(e)
                    .is_some_and(|c| cx.effect(c, Effect::Logging).is_some())
            }) && in_err_branch(s)
        })
    })
}

/// An executor adapter: the spawned future is a parameter of the function
/// (`fn execute(&self, fut: F) { tokio::spawn(fut); }`), so its owner is the
/// caller that built it.
fn forwards_param(cx: &FileCx, call: ExprId, c: &Call) -> bool {
    let f = super::common::outermost(cx, cx.func_of(call));
    let params = &cx.func(f).params;
    let is_param = |e: ExprId| {
        cx.model
            .name_of(e)
            .is_some_and(|n| params.iter().any(|p| p.name == n))
    };
    c.args.len() == 1
        && c.args.iter().all(|a| {
            // `move || thread.run()` / `move || f()` / `|| block_on(fut)`: a
            // closure that only runs what the caller handed in.
            if let Some(cl) = super::common::closure_fn(cx, a.value)
                && let [s] = cx.func(cl).body.as_slice()
                && let StmtKind::Return(Some(e)) | StmtKind::Expr(e) = &cx.stmt(*s).kind
                && let Some(inner) = cx.call(super::common::unwrap_value(cx, *e))
            {
                return inner.receiver.is_some_and(is_param)
                    || (inner.receiver.is_none() && is_param(inner.func))
                    || (cx.effect(inner, Effect::SyncOverAsync).is_some()
                        && matches!(inner.args.as_slice(), [a] if is_param(a.value)));
            }
            let v = super::common::unwrap_value(cx, a.value);
            let v = match cx.call(v) {
                // `fut.in_current_span()`, `Box::pin(fut)`.
                Some(m) if m.receiver.is_some() && m.args.is_empty() => m.receiver.unwrap_or(v),
                Some(m) if m.receiver.is_none() && m.args.len() == 1 => m.args[0].value,
                _ => v,
            };
            cx.model
                .name_of(v)
                .is_some_and(|n| params.iter().any(|p| p.name == n))
        })
}

/// The task reports back: its body sends on a channel created by the
/// spawning function (`let (tx, rx) = oneshot::channel(); spawn(async move
/// { tx.send(r) })`), whose receiver sees the result, or the sender drop
/// if it panics.
fn reports_back(cx: &FileCx, spawn: ExprId) -> bool {
    if replies_through_callee(cx, spawn) {
        return true;
    }
    let Some(body) = super::common::spawned_fn(cx, spawn) else {
        return false;
    };
    let owner = super::common::outermost(cx, cx.func_of(spawn));
    let mut senders: Vec<String> = super::common::local_channels(cx, owner)
        .into_iter()
        .map(|ch| ch.tx)
        .collect();
    // A clone of one is the same channel (`let cloned_tx = tx.clone()`).
    for s in cx.body_stmts(owner) {
        if let StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } = &cx.stmt(*s).kind
            && let [t] = targets.as_slice()
            && let Some(name) = cx.model.name_of(*t)
            && let Some(k) = cx.call(cx.model.strip(*v))
            && k.name == "clone"
            && k.receiver
                .and_then(|r| cx.model.name_of(r))
                .is_some_and(|r| senders.iter().any(|x| x == r))
        {
            senders.push(name.to_string());
        }
    }
    // Or the reply sender of a request the task answers (`Command::Lookup {
    // key, reply } => spawn(async move { reply.send(found) })`): the
    // requester awaits the answer, or sees the sender dropped.
    let reply_sender = |n: &str| {
        let n = n.to_ascii_lowercase();
        n.contains("reply") || n.contains("respond") || n.starts_with("resp")
    };
    // Or a sender the request the function handles carries: a field of
    // one of its parameters (`message.sender.send(r)`), or a local taken
    // out of one (`let tx = msg.reply.take().unwrap()`).
    let params: Vec<&str> = cx
        .func(owner)
        .params
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    // (A field, not a method: `notify.clone()` reads no field.)
    let field_of_param = |x: ExprId| {
        let method = matches!(cx.tree.expr_parent(x), Parent::Expr(p)
            if cx.call(p).is_some_and(|c| c.func == x));
        !method
            && cx.model.dotted(x).is_some_and(|d| {
                d.split_once('.')
                    .is_some_and(|(root, _)| params.contains(&root))
            })
    };
    let request_sender = |x: ExprId| {
        let x = cx.model.strip(x);
        field_of_param(x)
            || super::common::declared_value(cx, x).is_some_and(|v| {
                exprs_under(cx.model, v)
                    .into_iter()
                    .any(|y| matches!(cx.expr(y).kind, ExprKind::Attr { .. }) && field_of_param(y))
            })
    };
    // (Also through a helper handed the sender: `emit(&tx, line).await`,
    // or `reply(tx, v)` with a sender of the request, named as one.)
    let local_sender = |x: ExprId| {
        let x = cx.model.strip(x);
        let last = cx.model.dotted(x).map(|d| {
            d.rsplit('.')
                .next()
                .unwrap_or_default()
                .to_ascii_lowercase()
        });
        cx.model
            .name_of(x)
            .is_some_and(|n| senders.iter().any(|s| s == n))
            || (request_sender(x)
                && last.is_some_and(|l| {
                    reply_sender(&l) || l.contains("sender") || l == "tx" || l.ends_with("_tx")
                }))
    };
    cx.body_exprs(body).iter().any(|&e| {
        cx.call(e).is_some_and(|c| {
            (c.name.starts_with("send")
                && c.receiver.is_some_and(|r| {
                    cx.model
                        .name_of(r)
                        .is_some_and(|n| senders.iter().any(|s| s == n) || reply_sender(n))
                        || request_sender(r)
                }))
                // (A method of the file the types do not resolve counts
                // too, and a function of another module of the project,
                // `add_to_stream(resp, &response_tx)`: handing it the
                // sender is how it reports.)
                || ((cx.callee_in_file(c).is_some()
                    || c.receiver.is_some()
                    || c.target
                        .as_deref()
                        .is_some_and(|t| cx.index.resolve(cx.lang, t, cx.file).is_some()))
                    && c.args.iter().any(|a| {
                        local_sender(a.value)
                            || matches!(&cx.expr(a.value).kind, ExprKind::Unary { op: UnOp::Ref, operand } if local_sender(*operand))
                    }))
        })
    })
}

/// `tokio::spawn(forward(fut, reply_tx))`: the spawned future is a call of
/// a function of this file that sends its result on one of its parameters
/// (a reply sender the caller handed in), so whoever holds the receiver sees
/// the result, or the sender drop if it panics.
fn replies_through_callee(cx: &FileCx, spawn: ExprId) -> bool {
    let Some(c) = cx.call(spawn) else {
        return false;
    };
    let [arg] = c.args.as_slice() else {
        return false;
    };
    // The future itself, or the local it was put in (`let fut =
    // Self::handle(req); tokio::spawn(fut)`).
    let value = super::common::unwrap_value(cx, arg.value);
    let value = super::common::declared_value(cx, value).unwrap_or(value);
    let Some(inner) = cx.call(value) else {
        return false;
    };
    if inner.receiver.is_some() || inner.args.is_empty() {
        return false;
    }
    let callee = cx.callee_in_file(inner).or_else(|| {
        // A free function of this file called by its bare name.
        let name = cx.model.name_of(inner.func)?;
        let mut found = cx
            .model
            .function_ids()
            .filter(|&f| cx.func(f).name == name && cx.func(f).class.is_none());
        let f = found.next()?;
        found.next().is_none().then_some(f)
    });
    let Some(callee) = callee else { return false };
    let params = &cx.func(callee).params;
    // On the parameter itself, or on a field of it (`request.reply.send(r)`:
    // the reply sender a request carries).
    cx.body_exprs(callee).iter().any(|&e| {
        cx.call(e).is_some_and(|s| {
            s.name == "send"
                && s.receiver
                    .and_then(|r| cx.model.dotted(r))
                    .is_some_and(|d| {
                        let root = d.split('.').next().unwrap_or(&d);
                        params.iter().any(|p| p.name == root)
                    })
        })
    })
}

/// The spawned future is tracked elsewhere: it awaits a value made by a
/// graceful-shutdown watcher or task tracker (`graceful.watch(conn)`,
/// `tracker.track_future(fut)`), which waits for it on shutdown.
fn tracked(cx: &FileCx, spawn: ExprId) -> bool {
    let Some(c) = cx.call(spawn) else {
        return false;
    };
    let is_track = |e: ExprId| {
        cx.call(super::common::unwrap_value(cx, e))
            .is_some_and(|t| matches!(t.name.as_str(), "watch" | "track_future" | "track"))
    };
    c.args.iter().any(|a| {
        if is_track(a.value) {
            return true;
        }
        let Some(f) = super::common::closure_fn(cx, a.value) else {
            return false;
        };
        cx.body_exprs(f).iter().any(|&e| {
                is_track(e)
                    || cx.model.name_of(e).is_some_and(|n| {
                        super::common::declaration_of(cx, n, e).is_some_and(|d| {
                            matches!(&cx.stmt(d).kind, StmtKind::Assign { value: Some(v), .. } if is_track(*v))
                        })
                    })
            })
    })
}

/// Every expression inside a call (its arguments, closures and async blocks
/// included).
fn exprs_within(cx: &FileCx, call: ExprId) -> Vec<ExprId> {
    let span = cx.expr(call).span;
    (0..cx.model.exprs.len() as u32)
        .map(ExprId)
        .filter(|&e| e != call && span.contains(cx.expr(e).span))
        .collect()
}

/// A name or type that says "shutdown signal": a cancellation token, a
/// shutdown/close receiver.
fn shutdown_word(s: &str) -> bool {
    let s = s.to_ascii_lowercase();
    let segs: Vec<&str> = s.split('_').collect();
    let has = |set: &[&str]| segs.iter().any(|g| set.contains(g));
    s == "signal"
        || has(&["shutdown", "cancellation", "graceful"])
        || (has(&["cancel", "stop", "quit", "close", "signal"])
            && has(&["rx", "tx", "token", "signal", "sig", "notify"]))
}

/// The task is part of a graceful shutdown: it waits on a shutdown signal
/// (`token.cancelled()`, a watch receiver's `changed()`, a sender's
/// `closed()`), holds a cancellation token or shutdown receiver, is handed
/// one (`spawn(run(listener, shutdown_rx))`), or holds one end of a channel
/// whose other end the spawner waits on after the spawn (`close_tx.closed()`
/// returns once every task holding a receiver clone is gone; `rx.recv()` /
/// `rx.iter()` end when the producer task does). The shutdown path or the
/// spawner owns its lifetime, even though the `JoinHandle` is dropped.
fn stops_on_shutdown(cx: &FileCx, spawn: ExprId) -> bool {
    let inner = exprs_within(cx, spawn);
    let waits_on_signal = inner.iter().any(|&e| {
        cx.call(e).is_some_and(|c| {
            c.receiver.is_some()
                && matches!(
                    c.name.as_str(),
                    "cancelled" | "cancelled_owned" | "is_cancelled" | "changed" | "closed"
                )
        })
    });
    if waits_on_signal {
        return true;
    }
    let holds_signal = inner.iter().any(|&e| match &cx.expr(e).kind {
        ExprKind::Name { id, resolved: None } if !is_callee(cx, e) => {
            shutdown_word(id) || cx.sema.type_of(e).is_some_and(shutdown_type)
        }
        ExprKind::Attr { name, .. } if !is_callee(cx, e) => shutdown_word(name),
        _ => false,
    });
    if holds_signal {
        return true;
    }
    // One end of a local channel pair moves into the task; the spawner
    // waits on the other end afterwards.
    let owner = super::common::outermost(cx, cx.func_of(spawn));
    let after = cx.expr(spawn).span.end;
    local_pairs(cx, owner).into_iter().any(|(a, b)| {
        [(&a, &b), (&b, &a)].into_iter().any(|(held, kept)| {
            inner
                .iter()
                .any(|&e| matches!(&cx.expr(e).kind, ExprKind::Name { id, resolved: None } if id == held))
                && super::common::uses_after(cx, owner, kept, after)
                    .into_iter()
                    .any(|u| {
                        super::common::method_on(cx, u).is_some_and(|c| {
                            // A receiver read as a stream counts too
                            // (`rx.next().await`, `rx.map(Ok).forward(sink)`).
                            matches!(
                                c.name.as_str(),
                                "closed"
                                    | "recv"
                                    | "recv_async"
                                    | "changed"
                                    | "join"
                                    | "wait"
                                    | "iter"
                                    | "next"
                                    | "try_next"
                                    | "for_each"
                                    | "forward"
                                    | "map"
                                    | "collect"
                            )
                        })
                    })
        })
    })
}

fn shutdown_type(t: &str) -> bool {
    let l = t.to_ascii_lowercase();
    t.contains("CancellationToken")
        || t.contains("watch::Receiver")
        || t.contains("broadcast::Receiver")
        || l.contains("shutdown")
        || l.contains("graceful")
}

/// `x` is what a call calls (`f` in `f(..)`, `o.m` in `o.m(..)`).
fn is_callee(cx: &FileCx, x: ExprId) -> bool {
    matches!(cx.tree.expr_parent(x), Parent::Expr(p) if cx.call(p).is_some_and(|c| c.func == x))
}

/// `let (a, b) = <...>channel(..)` pairs of a function (any channel kind:
/// mpsc, watch, broadcast, oneshot).
fn local_pairs<'a>(cx: &FileCx<'a>, f: FuncId) -> Vec<(&'a str, &'a str)> {
    super::common::let_pairs(cx, f)
        .into_iter()
        .filter(|p| {
            cx.call(super::common::unwrap_value(cx, p.value))
                .is_some_and(|c| {
                    c.name.ends_with("channel") || c.name == "unbounded" || c.name == "bounded"
                })
        })
        .map(|p| (p.first, p.second))
        .collect()
}

/// A value received or popped from somewhere (`rx.recv()`, `jobs.pop()`),
/// not made by the call.
fn taken_from_a_queue(c: &Call) -> bool {
    matches!(
        c.name.as_str(),
        "recv" | "try_recv" | "pop" | "next" | "take"
    )
}

/// A background worker or connection driver built together with the handle
/// that drives it: `let (service, worker) = Self::pair(..);
/// tokio::spawn(worker); service`, or `let (client, conn) =
/// handshake(io).await?; tokio::spawn(async move { conn.await })` with the
/// client used afterwards. The worker runs for as long as the handle (and
/// its clones) live: dropping them closes its queue and it ends.
fn worker_of_returned_handle(cx: &FileCx, spawn: ExprId) -> bool {
    let Some(c) = cx.call(spawn) else {
        return false;
    };
    let [arg] = c.args.as_slice() else {
        return false;
    };
    // The spawned future is the worker itself, or a block that awaits it.
    let worker_use = match cx.model.name_of(cx.model.strip(arg.value)) {
        Some(_) => Some(cx.model.strip(arg.value)),
        None => super::common::closure_fn(cx, arg.value).and_then(|f| {
            cx.body_exprs(f)
                .iter()
                .copied()
                .find_map(|e| match &cx.expr(e).kind {
                    ExprKind::Await(inner) if cx.model.name_of(*inner).is_some() => Some(*inner),
                    _ => None,
                })
        }),
    };
    let Some(worker_use) = worker_use else {
        return false;
    };
    let Some(worker) = cx.model.name_of(worker_use) else {
        return false;
    };
    let Some(decl) = super::common::declaration_of(cx, worker, worker_use) else {
        return false;
    };
    let StmtKind::Assign {
        targets,
        value: Some(v),
        ..
    } = &cx.stmt(decl).kind
    else {
        return false;
    };
    // Made by one call, not taken from a queue; also through a local
    // holding that call's result (`let connect = pg::connect(..).await;
    // .. let (client, conn) = connect.unwrap();`).
    let made_by = super::common::unwrap_value(cx, *v);
    let made_by = super::common::declared_value(cx, made_by)
        .map(|d| super::common::unwrap_value(cx, d))
        .unwrap_or(made_by);
    let made = cx.call(made_by).is_some_and(|m| !taken_from_a_queue(m));
    let [t] = targets.as_slice() else {
        return false;
    };
    let ExprKind::Collection {
        kind: CollKind::Tuple,
        elems,
        ..
    } = &cx.expr(*t).kind
    else {
        return false;
    };
    let siblings: Vec<&str> = elems
        .iter()
        .filter_map(|&e| super::common::binding_name(cx.model, e))
        .filter(|&n| n != worker && !n.starts_with('_'))
        .collect();
    if !made || siblings.is_empty() {
        return false;
    }
    // A sibling is used (the function's value, or driven by the function).
    let owner = super::common::outermost(cx, cx.func_of(spawn));
    let after = cx.stmt(decl).span.end;
    siblings
        .iter()
        .any(|n| !super::common::uses_after(cx, owner, n, after).is_empty())
}

/// The task holds the handle half of a pair whose worker half the spawner
/// then drives until it fails (`let (client, mut eventloop) =
/// Client::new(..); spawn(async move { requests(client).await });
/// while let Ok(ev) = eventloop.poll().await { .. }`): when the task ends
/// or panics the handle drops, the worker's next poll fails and the loop
/// ends, so the task's end is observed.
fn holds_handle_of_driven_worker(cx: &FileCx, spawn: ExprId) -> bool {
    let Some(c) = cx.call(spawn) else {
        return false;
    };
    let Some(task) = c
        .args
        .first()
        .and_then(|a| super::common::closure_fn(cx, a.value))
    else {
        return false;
    };
    let owner = super::common::outermost(cx, cx.func_of(spawn));
    let after = cx.expr(spawn).span.end;
    super::common::let_pairs(cx, owner).into_iter().any(|p| {
        let made_by_constructor = cx
            .call(super::common::unwrap_value(cx, p.value))
            .is_some_and(|m| !m.name.ends_with("channel") && !taken_from_a_queue(m));
        let held = |n: &str| {
            cx.body_exprs(task)
                .iter()
                .any(|&e| cx.model.name_of(e) == Some(n))
        };
        // The other half polled by a loop after the spawn: in its condition
        // (`while let Ok(ev) = eventloop.poll().await`), as what it goes
        // over (`for ev in connection.iter()`), or first thing in a `loop`
        // that can end (`loop { match eventloop.poll().await { Err(_) =>
        // break, .. } }`).
        let names = |e: ExprId, n: &str| {
            unsnarl_model::walk::exprs_under(cx.model, e)
                .into_iter()
                .any(|x| cx.model.name_of(x) == Some(n))
        };
        let driven = |n: &str| {
            cx.body_stmts(owner).iter().any(|&s| {
                cx.stmt(s).span.start >= after
                    && match &cx.stmt(s).kind {
                        StmtKind::While { cond, .. } => names(*cond, n),
                        StmtKind::For { iter, .. } => names(*iter, n),
                        StmtKind::Loop { body } => {
                            super::common::loop_has_exit(cx, body)
                                && body.first().is_some_and(|&first| {
                                    super::common::own_exprs(cx.model, first)
                                        .into_iter()
                                        .any(|e| names(e, n))
                                })
                        }
                        _ => false,
                    }
            })
        };
        made_by_constructor
            && ((held(p.first) && !held(p.second) && driven(p.second))
                || (held(p.second) && !held(p.first) && driven(p.first)))
    })
}

/// A task that holds its owner only as a `Weak` and stops when
/// `upgrade()` fails (`let Some(pool) = self.pool.upgrade() else { break
/// }`): a reaper or refresher that ends once its owner is dropped. Its body
/// is the spawned closure or the function of the file the spawn runs
/// (`spawn(Reaper { .. }.run())`).
fn ends_with_weak_owner(cx: &FileCx, spawn: ExprId) -> bool {
    let Some(c) = cx.call(spawn) else {
        return false;
    };
    let body = super::common::spawned_fn(cx, spawn).or_else(|| {
        c.args.iter().find_map(|a| {
            cx.call(cx.model.strip(a.value))
                .and_then(|k| cx.callee_in_file(k))
        })
    });
    let Some(g) = body else { return false };
    // A closure that only calls a function of the file (`move ||
    // cleanup_loop(storage, ttl)`) runs that function's loop.
    let g = match cx.func(g).body.as_slice() {
        [s] => match &cx.stmt(*s).kind {
            StmtKind::Expr(e) | StmtKind::Return(Some(e)) => cx
                .call(cx.model.strip(*e))
                .and_then(|k| cx.callee_in_file(k))
                .filter(|&h| h != g)
                .unwrap_or(g),
            _ => g,
        },
        _ => g,
    };
    // `w.upgrade()`, or `Weak::upgrade(&w)`.
    let upgrades: Vec<ExprId> = cx
        .body_calls(g)
        .filter(|&e| {
            cx.call(e).is_some_and(|k| {
                k.name == "upgrade"
                    && ((k.receiver.is_some() && k.args.is_empty())
                        || (k.receiver.is_none()
                            && k.args.len() == 1
                            && cx.source(cx.expr(k.func).span).ends_with("Weak::upgrade")))
            })
        })
        .collect();
    // `while let Some(owner) = w.upgrade() { .. }` ends when it fails.
    let loop_on_it = upgrades.iter().any(|&u| {
        cx.tree.enclosing_stmt(u).is_some_and(
            |s| matches!(&cx.stmt(s).kind, StmtKind::While { cond, .. } if cx.contains(*cond, u)),
        )
    });
    !upgrades.is_empty()
        && (loop_on_it
            || cx
                .body_stmts(g)
                .iter()
                .any(|&s| matches!(cx.stmt(s).kind, StmtKind::Break | StmtKind::Return(_))))
}

/// The standard server's accept loop: a spawn in a `loop` with no way out
/// (no `break`, `return` or `?`) in `main` or a function returning `!`.
/// Nothing runs after the loop and the process ends with it, so no caller
/// can return or shut down while a detached task is still working. A loop
/// that can end (a shutdown branch, an accept error passed up with `?`) or
/// a serving function someone else calls (and may drop) is still reported.
fn serves_until_exit(cx: &FileCx, spawn: ExprId) -> bool {
    serves_streams_of_exempt_connection(cx, spawn) || accept_loop_of_the_process(cx, spawn)
}

fn accept_loop_of_the_process(cx: &FileCx, spawn: ExprId) -> bool {
    let f = cx.func_of(spawn);
    let root = super::common::is_process_root(cx, f);
    if !root && !runs_for_the_process(cx, f) {
        return false;
    }
    // `main` goes on forever after starting it: the task cannot outlive it.
    if root
        && let Some(st) = cx.tree.enclosing_stmt(spawn)
        && root_outlives(cx, st, f)
    {
        return true;
    }
    // A task that never ends (`loop { tick().await }`) started by `main`:
    // it is meant to live as long as the process.
    // Also through a call: `thread::spawn(|| block_on(EX.run()))`, where
    // `run` is a function of the file made of an endless loop.
    let has_endless_loop = |g: FuncId| {
        cx.func(g).body.iter().any(|&s| {
            matches!(&cx.stmt(s).kind, StmtKind::Loop { body } if !super::common::loop_has_exit(cx, body))
        })
    };
    let endless = super::common::spawned_fn(cx, spawn).is_some_and(|g| {
        has_endless_loop(g)
            || cx.body_calls(g).any(|e| {
                cx.call(e)
                    .and_then(|c| cx.callee_in_file(c))
                    .is_some_and(|h| h != g && has_endless_loop(h))
            })
    });
    if endless {
        return true;
    }
    let stmts = cx.enclosing_stmts(spawn);
    // `loop { .. }` with no way out; or any loop (`while let Ok(..) =
    // listener.accept().await`) after which `main` only returns: when it
    // ends, so does the process.
    stmts.iter().any(|&s| match &cx.stmt(s).kind {
        StmtKind::Loop { body } if !super::common::loop_has_exit(cx, body) => true,
        StmtKind::Loop { .. } | StmtKind::While { .. } | StmtKind::For { .. } => {
            matches!(cx.tree.stmt_parent(s), Parent::Function(_))
                && crate::util::stmts_after(cx, s)
                    .iter()
                    .all(|&n| matches!(cx.stmt(n).kind, StmtKind::Return(_)))
        }
        _ => false,
    })
}

/// One task per stream of a connection (`while let Some(s) =
/// conn.accept_stream().await { spawn(handle(s)) }`) in a function that
/// runs only inside the per-connection tasks of an accept loop exempt
/// below: its tasks end with the connection, and the process with the
/// accept loop.
fn serves_streams_of_exempt_connection(cx: &FileCx, spawn: ExprId) -> bool {
    let f = cx.func_of(spawn);
    let in_accept_loop = cx.enclosing_stmts(spawn).iter().any(|&s| {
        matches!(&cx.stmt(s).kind, StmtKind::While { cond, .. }
        if unsnarl_model::walk::exprs_under(cx.model, *cond).into_iter().any(|x| {
            cx.call(x).is_some_and(|c| c.name.starts_with("accept"))
        }))
    });
    if !in_accept_loop || cx.func(f).kind == FnKind::Closure {
        return false;
    }
    let calls: Vec<ExprId> = (0..cx.model.exprs.len() as u32)
        .map(ExprId)
        .filter(|&e| cx.call(e).is_some_and(|c| cx.callee_in_file(c) == Some(f)))
        .collect();
    !calls.is_empty()
        && calls.iter().all(|&call| {
            let task = cx.func_of(call);
            let Parent::Expr(body) = cx.tree.func_site(task) else {
                return false;
            };
            let Parent::Expr(outer) = cx.tree.expr_parent(body) else {
                return false;
            };
            super::common::spawned_fn(cx, outer) == Some(task)
                && accept_loop_of_the_process(cx, outer)
        })
}

/// A helper (`async fn server()`) that `main` alone calls, and that lives
/// as long as the process: `main` awaits it as its last act (`server().
/// await;` then nothing but a return), or runs it in a task of its own
/// and then never finishes itself (it goes on into an endless loop, or a
/// function of the file made of one).
pub(crate) fn runs_for_the_process(cx: &FileCx, f: FuncId) -> bool {
    let calls: Vec<ExprId> = (0..cx.model.exprs.len() as u32)
        .map(ExprId)
        .filter(|&e| cx.call(e).is_some_and(|c| cx.callee_in_file(c) == Some(f)))
        .collect();
    let only_returns = |rest: &[StmtId]| {
        rest.iter()
            .all(|&n| matches!(cx.stmt(n).kind, StmtKind::Return(_)))
    };
    !calls.is_empty()
        && calls.iter().all(|&call| {
            let caller = cx.func_of(call);
            let root = super::common::outermost(cx, caller);
            let Some(st) = cx.tree.enclosing_stmt(call) else {
                return false;
            };
            if !super::common::is_process_root(cx, root)
                || !only_returns(crate::util::stmts_after(cx, st))
            {
                return false;
            }
            // Directly, or in a task `main` spawned and outlives.
            caller == root || root_outlives(cx, st, root)
        })
}

/// The statement of the process root `root` that holds `st` (through the
/// closures and async blocks in between) is followed by one that never
/// finishes: `root` outlives whatever `st` starts.
fn root_outlives(cx: &FileCx, mut st: StmtId, root: FuncId) -> bool {
    while cx.tree.stmt_func(st) != root {
        let Parent::Expr(site) = cx.tree.func_site(cx.tree.stmt_func(st)) else {
            return false;
        };
        let Some(outer) = cx.tree.enclosing_stmt(site) else {
            return false;
        };
        st = outer;
    }
    let top = cx.tree.stmt_ancestors(st).last().unwrap_or(st);
    crate::util::stmts_after(cx, top)
        .iter()
        .any(|&n| never_finishes(cx, n))
}

/// An endless `loop`, or an awaited call of a function of the file whose
/// body ends in one.
fn never_finishes(cx: &FileCx, s: StmtId) -> bool {
    let endless = |b: &Block| {
        b.last().is_some_and(|&l| {
            matches!(&cx.stmt(l).kind, StmtKind::Loop { body } if !super::common::loop_has_exit(cx, body))
        })
    };
    if endless(&vec![s]) {
        return true;
    }
    super::common::own_exprs(cx.model, s).into_iter().any(|e| {
        cx.call(e)
            .and_then(|c| cx.callee_in_file(c))
            .is_some_and(|g| endless(&cx.func(g).body))
    })
}

/// The task only drains a channel this function made (`while let Some(ev)
/// = events_rx.recv().await { cb(ev) }`, nothing after it, nothing awaited
/// inside): it ends by itself once every sender is dropped, so it lives
/// exactly as long as whatever holds the senders, and has no work of its
/// own to cut short.
fn drains_own_channel(cx: &FileCx, spawn: ExprId) -> bool {
    let Some(g) = super::common::spawned_fn(cx, spawn) else {
        return false;
    };
    let [only] = cx.func(g).body.as_slice() else {
        return false;
    };
    let (rx, ranges) = match drained_receiver(cx, *only) {
        Some(found) => found,
        // A thread that only runs a loop function of the file on the
        // receiver (`thread::spawn(move || event_loop(conn, receiver))`).
        None => {
            let call = match cx.stmt(*only).kind {
                StmtKind::Expr(e) | StmtKind::Tail(e) | StmtKind::Return(Some(e)) => {
                    cx.call(cx.model.strip(e))
                }
                _ => None,
            };
            let Some((c, h)) = call.and_then(|c| Some((c, cx.callee_in_file(c)?))) else {
                return false;
            };
            let [looped] = cx.func(h).body.as_slice() else {
                return false;
            };
            let Some((param, ranges)) = drained_receiver(cx, *looped) else {
                return false;
            };
            let Some(i) = cx.func(h).params.iter().position(|p| p.name == param) else {
                return false;
            };
            let Some(rx) = c.positional(i).and_then(|a| cx.model.name_of(a)) else {
                return false;
            };
            (rx, ranges)
        }
    };
    // `let (tx, mut rx) = mpsc::channel(..)` in the spawning function.
    let owner = super::common::outermost(cx, cx.func_of(spawn));
    cx.body_stmts(owner).iter().any(|&s| {
        matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(v), .. }
        if targets.iter().any(|&t| {
            unsnarl_model::walk::exprs_under(cx.model, t)
                .into_iter()
                .any(|x| cx.model.name_of(x) == Some(rx))
        }) && cx.call(cx.model.strip(*v)).is_some_and(|c| {
            !ranges || cx.effect(c, Effect::Queue).is_some()
        }))
    })
}

/// The receiver a loop drains, with whether the loop is a `for` (which
/// could range over anything, so only a channel made right there counts):
/// `while let Some(ev) = rx.recv().await { cb(ev) }` with nothing awaited
/// inside, a thread's `while let Ok(m) = rx.recv() { .. }`, or `for job in
/// rx { job() }` (or `rx.iter()`). Each ends once every sender is dropped.
fn drained_receiver<'a>(cx: &FileCx<'a>, s: StmtId) -> Option<(&'a str, bool)> {
    match &cx.stmt(s).kind {
        StmtKind::While { cond, body, .. } => {
            // Its work is synchronous (a callback per event): nothing
            // awaited that could be cut off half done.
            if !crate::util::awaits_in_block(cx.model, body).is_empty() {
                return None;
            }
            let ExprKind::Let { value, .. } = &cx.expr(*cond).kind else {
                return None;
            };
            let value = cx.model.strip(*value);
            let inner = match &cx.expr(value).kind {
                ExprKind::Await(inner) => cx.model.strip(*inner),
                _ => value,
            };
            let recv = cx.call(inner)?;
            // A channel's receiver, by its type (`mpsc::Receiver::recv`).
            if !(recv.name == "recv"
                && recv
                    .target
                    .as_deref()
                    .is_some_and(|t| t.contains("Receiver::")))
            {
                return None;
            }
            Some((cx.model.name_of(recv.receiver?)?, false))
        }
        StmtKind::For { iter, body, .. }
            if crate::util::awaits_in_block(cx.model, body).is_empty() =>
        {
            let it = cx.model.strip(*iter);
            let rx = cx.model.name_of(it).or_else(|| {
                cx.call(it)
                    .filter(|c| c.name == "iter" && c.args.is_empty())
                    .and_then(|c| c.receiver)
                    .and_then(|r| cx.model.name_of(r))
            })?;
            Some((rx, true))
        }
        _ => None,
    }
}

/// A method that takes its value apart: it spawns what one field holds
/// (the driver, `let driver = self.driver.map_err(..); spawn(driver)`) and
/// returns another (the handle, `self.handle`). The pair-as-a-struct form
/// of a driver spawned next to the handle that feeds it: the driver ends
/// once the handle is dropped.
fn driver_beside_returned_field(cx: &FileCx, spawn: ExprId) -> bool {
    let Some(c) = cx.call(spawn) else {
        return false;
    };
    let Some(arg) = c.args.first().map(|a| cx.model.strip(a.value)) else {
        return false;
    };
    let f = super::common::outermost(cx, cx.func_of(spawn));
    let field_of_self = |e: ExprId| {
        unsnarl_model::walk::exprs_under(cx.model, e)
            .into_iter()
            .find_map(|x| {
                cx.model
                    .dotted(x)
                    .filter(|d| d.starts_with("self.") && d.matches('.').count() == 1)
            })
    };
    // The field the spawned future comes from, directly or through a local.
    let spawned_field = field_of_self(arg)
        .or_else(|| super::common::declared_value(cx, arg).and_then(field_of_self));
    let Some(spawned_field) = spawned_field else {
        return false;
    };
    // The function's value is another field of `self`.
    let returned = cx.func(f).body.last().and_then(|&l| match cx.stmt(l).kind {
        StmtKind::Tail(v) | StmtKind::Return(Some(v)) => cx.model.dotted(v),
        _ => None,
    });
    returned.is_some_and(|r| r.starts_with("self.") && r != spawned_field)
}

/// The spawned async block awaits nothing and loops nowhere (`spawn(async
/// move { let _ = tx.send(ev); })`): it runs to its end on its first poll,
/// so there is nothing to wait for, cancel or cut off.
fn finishes_on_first_poll(cx: &FileCx, spawn: ExprId) -> bool {
    let Some(c) = cx.call(spawn) else {
        return false;
    };
    let Some(g) = c
        .args
        .first()
        .and_then(|a| super::common::closure_fn(cx, a.value))
    else {
        return false;
    };
    cx.func(g).kind == FnKind::AsyncBlock
        && crate::util::awaits_in_block(cx.model, &cx.func(g).body).is_empty()
        && !cx.body_stmts(g).iter().any(|&s| {
            matches!(
                cx.stmt(s).kind,
                StmtKind::While { .. }
                    | StmtKind::For { .. }
                    | StmtKind::Loop { .. }
                    | StmtKind::Select { .. }
            )
        })
}

/// A thread that hosts an executor loop fed by a channel the spawning
/// function made (`thread::spawn(move || { local.spawn_local(async move {
/// while let Some(job) = rx.recv().await { spawn_local(job) } });
/// rt.block_on(local) })`): the loop, nested in the thread's runtime, ends
/// when the last sender is dropped, and the work is its callers'.
fn hosts_channel_executor(cx: &FileCx, spawn: ExprId) -> bool {
    let Some(g) = super::common::spawned_fn(cx, spawn) else {
        return false;
    };
    let owner = super::common::outermost(cx, cx.func_of(spawn));
    let made_here = |rx: &str| {
        super::common::let_pairs(cx, owner).iter().any(|p| {
            p.second == rx
                && cx
                    .call(super::common::unwrap_value(cx, p.value))
                    .is_some_and(|c| {
                        // Also a project's own wrapper (`mpsc_unbounded()`).
                        cx.effect(c, Effect::Queue).is_some()
                            || c.name.contains("channel")
                            || c.name.starts_with("mpsc")
                    })
        })
    };
    cx.with_nested(g).into_iter().any(|h| {
        cx.body_stmts(h).iter().any(|&s| {
            let StmtKind::While { cond, body, .. } = &cx.stmt(s).kind else {
                return false;
            };
            let rx = unsnarl_model::walk::exprs_under(cx.model, *cond)
                .into_iter()
                .find_map(|x| {
                    cx.call(x)
                        .filter(|c| c.name == "recv")
                        .and_then(|c| c.receiver)
                        .and_then(|r| cx.model.name_of(r))
                });
            rx.is_some_and(made_here)
                && unsnarl_model::walk::calls_in_block(cx.model, body)
                    .into_iter()
                    .any(|e| cx.call(e).is_some_and(|c| c.name.starts_with("spawn")))
        })
    })
}

/// Started by a `Drop` implementation (`fn drop(&mut self)`): the value
/// is going away and nobody is left to hold a handle; the task is the
/// value's last act (a flush, an async close).
fn in_drop(cx: &FileCx, spawn: ExprId) -> bool {
    let f = super::common::outermost(cx, cx.func_of(spawn));
    let func = cx.func(f);
    func.name.as_str() == "drop" && func.class.is_some() && func.params.is_empty()
}

/// A thread or task started inside a one-time initializer
/// (`OnceLock::get_or_init(|| ..)`, `Lazy::new(|| ..)`, `Once::call_once`),
/// or in a function of the file that only such initializers call or are
/// handed (`Lazy::new(|| start())`, `get_or_try_init(iocp_start)`): it
/// starts at most once per process and lives as long as the process, so
/// there is no per-call orphan and no owner that could join it. So is one
/// started by a method taking `&'static self` (a pool kept in a static,
/// `fn initialize(&'static self)`): its owner lives as long as the process.
fn once_per_process(cx: &FileCx, spawn: ExprId) -> bool {
    let (inside, f) = in_initializer(cx, spawn);
    if inside || static_receiver(cx, f) {
        return true;
    }
    if !matches!(cx.func(f).kind, FnKind::Function | FnKind::Method) || cx.func(f).name.is_empty() {
        return false;
    }
    // Every use of the function in the file: a call made inside an
    // initializer, or the function itself handed to one.
    let mut uses = 0;
    for (i, e) in cx.model.exprs.iter().enumerate() {
        let id = ExprId(i as u32);
        let called = matches!(&e.kind, ExprKind::Call(c) if cx.callee_in_file(c) == Some(f));
        // The function named as an argument of the call around it.
        let taker = match cx.tree.expr_parent(id) {
            Parent::Expr(p) => cx.call(p).filter(|c| c.func != id),
            _ => None,
        };
        let handed = matches!(&e.kind, ExprKind::Name { id: n, .. } if *n == cx.func(f).name)
            && taker.is_some();
        if !called && !handed {
            continue;
        }
        uses += 1;
        let ok = if called {
            in_initializer(cx, id).0
        } else {
            taker.is_some_and(initializer_call)
        };
        if !ok {
            return false;
        }
    }
    uses > 0
}

/// A method whose receiver is `&'static self`, read from its signature
/// (the text between its name and its body).
fn static_receiver(cx: &FileCx, f: FuncId) -> bool {
    let func = cx.func(f);
    func.receiver.is_some()
        && cx
            .text
            .get(func.name_span.end as usize..func.span.end as usize)
            .and_then(|t| t.split('{').next())
            .is_some_and(|sig| sig.contains("&'static self") || sig.contains("&'static mut self"))
}

/// Whether `e` runs inside a closure handed to a one-time initializer, and
/// the outermost function reached on the way up.
fn in_initializer(cx: &FileCx, e: ExprId) -> (bool, FuncId) {
    let mut f = cx.func_of(e);
    while matches!(cx.func(f).kind, FnKind::Closure | FnKind::AsyncBlock) {
        if let Parent::Expr(closure) = cx.tree.func_site(f)
            && let Parent::Expr(call) = cx.tree.expr_parent(closure)
            && let Some(c) = cx.call(call)
            && c.args.iter().any(|a| a.value == closure)
            && initializer_call(c)
        {
            return (true, f);
        }
        match cx.func(f).parent {
            Some(p) => f = p,
            None => break,
        }
    }
    (false, f)
}

/// `get_or_init`, `get_or_try_init`, `call_once(_force)`, `Lazy::new`,
/// `LazyLock::new`: runs what it is given at most once per process.
fn initializer_call(c: &Call) -> bool {
    matches!(
        c.name.as_str(),
        "get_or_init" | "get_or_try_init" | "call_once" | "call_once_force"
    ) || (c.name.as_str() == "new"
        && c.target
            .as_deref()
            .is_some_and(|t| t.ends_with("Lazy::new") || t.ends_with("LazyLock::new")))
}

/// The task runs a callback the user handed over, and nothing else: a
/// future made by calling a function value (`let fut = (self.clone())();
/// spawn(fut)` in a handler trait implemented for closures), or an async
/// block that only awaits a call of a local holding one (`let on_open =
/// self.on_open.clone(); spawn(async move { on_open(()).await })`). The
/// library dispatches an event to user code, as an executor adapter runs
/// the future it is given; the user's callback owns its failures.
fn runs_handed_callback(cx: &FileCx, c: &Call) -> bool {
    let [arg] = c.args.as_slice() else {
        return false;
    };
    let calls_value = |k: &Call| {
        k.receiver.is_none() && {
            let callee = cx.model.strip(k.func);
            match &cx.expr(callee).kind {
                // `(self.clone())()`, `(self)(..)`.
                ExprKind::Call(inner) => inner.name == "clone",
                ExprKind::Name { id, .. } if id.as_str() == "self" => true,
                // A local bound to a value, not to a closure written here
                // and not a function of the file.
                ExprKind::Name { .. } => {
                    k.target.is_none()
                        && cx.callee_in_file(k).is_none()
                        && super::common::declared_value(cx, callee)
                            .is_some_and(|v| super::common::closure_fn(cx, v).is_none())
                }
                _ => false,
            }
        }
    };
    if let Some(v) = super::common::declared_value(cx, arg.value)
        && let Some(k) = cx.call(cx.model.strip(v))
    {
        return calls_value(k);
    }
    let Some(body) = super::common::closure_fn(cx, arg.value) else {
        return false;
    };
    let [s] = cx.func(body).body.as_slice() else {
        return false;
    };
    let (StmtKind::Expr(e) | StmtKind::Return(Some(e)) | StmtKind::Tail(e)) = &cx.stmt(*s).kind
    else {
        return false;
    };
    let e = match &cx.expr(*e).kind {
        ExprKind::Await(inner) => *inner,
        _ => *e,
    };
    cx.call(cx.model.strip(e)).is_some_and(calls_value)
}

/// An executor loop: the spawned future is a plain name bound by a pattern
/// (`Command::Submit(job) => spawn(job)`, `while let Some(fut) = ..`) in a
/// loop that takes its values off a channel or stream (`rx.recv()`,
/// `stream.next()`, or a `match` on `poll_recv` inside a loop). Whoever
/// sent the future built it and owns that work, as
/// with a future handed in as a parameter.
fn spawns_received_future(cx: &FileCx, spawn: ExprId, c: &Call) -> bool {
    let [arg] = c.args.as_slice() else {
        return false;
    };
    let arg = cx.model.strip(arg.value);
    let Some(name) = cx.model.name_of(arg) else {
        return false;
    };
    if super::common::declaration_of(cx, name, arg).is_some() {
        return false;
    }
    let binds = |e: ExprId| {
        unsnarl_model::walk::exprs_under(cx.model, e)
            .into_iter()
            .any(|x| cx.model.name_of(x) == Some(name))
    };
    let takes_from_channel = |e: ExprId| {
        unsnarl_model::walk::exprs_under(cx.model, e)
            .into_iter()
            .any(|x| {
                cx.call(x).is_some_and(|c| {
                    c.receiver.is_some()
                        && matches!(
                            c.name.as_str(),
                            "recv" | "next" | "recv_async" | "poll_recv"
                        )
                })
            })
    };
    let stmts = cx.enclosing_stmts(spawn);
    let bound = stmts.iter().any(|&s| match &cx.stmt(s).kind {
        StmtKind::Switch { cases, .. } => cases
            .iter()
            .any(|k| k.span.contains(cx.expr(spawn).span) && k.patterns.iter().any(|&p| binds(p))),
        StmtKind::While { cond, .. } => binds(*cond),
        StmtKind::For { target, .. } => target.is_some_and(binds),
        _ => false,
    });
    bound
        && stmts.iter().any(|&s| match &cx.stmt(s).kind {
            StmtKind::While { cond, .. } => takes_from_channel(*cond),
            StmtKind::For { iter, .. } => takes_from_channel(*iter),
            // `loop { match ready!(self.rx.poll_recv(cx)) { .. } }` in a
            // hand-written future's `poll`.
            StmtKind::Switch {
                subject: Some(x), ..
            } => takes_from_channel(*x) && !super::common::enclosing_loops(cx, s).is_empty(),
            _ => false,
        })
}

/// The actor idiom: the function makes a channel, moves the receiver into
/// the spawned task (directly or in a value it builds, `let task = Task {
/// reader, request_rx }`), returns the sender inside the handle it gives
/// back (`Ok(Client { inner: Arc::new(Mutex::new(Inner { request_tx }))
/// })`), and the file drains that receiver in a `while let` loop, which
/// ends once every sender is dropped. The task lives as long as the
/// handle, and the handle's sends fail once it is gone.
fn actor_of_returned_sender(cx: &FileCx, spawn: ExprId) -> bool {
    let Some(c) = cx.call(spawn) else {
        return false;
    };
    let owner = super::common::outermost(cx, cx.func_of(spawn));
    let spawn_at = cx.expr(spawn).span.start;
    // Every name under `e`, also in the closures and async blocks in it.
    let names_under = |e: ExprId| -> Vec<&str> {
        let mut out = Vec::new();
        for x in exprs_under(cx.model, e) {
            if let Some(n) = cx.model.name_of(x) {
                out.push(n);
            }
            if let ExprKind::Closure(g) = cx.expr(x).kind {
                for h in cx.with_nested(g) {
                    out.extend(cx.body_exprs(h).iter().filter_map(|&y| cx.model.name_of(y)));
                }
            }
        }
        out
    };
    // The names a local of `owner` was declared from, `depth` levels back.
    let reaches = |start: &[&str], name: &str, depth: u32| {
        let mut seen: Vec<&str> = start.to_vec();
        for _ in 0..depth {
            if seen.contains(&name) {
                return true;
            }
            let more: Vec<&str> = seen
                .iter()
                .filter_map(|n| {
                    super::common::stmts_in(cx.model, &cx.func(owner).body)
                        .into_iter()
                        .find_map(|s| match &cx.stmt(s).kind {
                            StmtKind::Assign {
                                targets,
                                value: Some(v),
                                ..
                            } if targets.iter().any(|&t| cx.model.name_of(t) == Some(*n)) => {
                                Some(names_under(*v))
                            }
                            _ => None,
                        })
                })
                .flatten()
                .filter(|n| !seen.contains(n))
                .collect();
            if more.is_empty() {
                break;
            }
            seen.extend(more);
        }
        seen.contains(&name)
    };
    let task_names: Vec<&str> = c.args.iter().flat_map(|a| names_under(a.value)).collect();
    let body = &cx.func(owner).body;
    let returned: Vec<&str> = body
        .last()
        .into_iter()
        .chain(
            super::common::stmts_in(cx.model, body)
                .iter()
                .filter(|&&s| matches!(cx.stmt(s).kind, StmtKind::Return(Some(_)))),
        )
        .filter_map(|&s| match cx.stmt(s).kind {
            StmtKind::Expr(v) | StmtKind::Return(Some(v)) => Some(names_under(v)),
            _ => None,
        })
        .flatten()
        .collect();
    super::common::local_channels(cx, owner).iter().any(|ch| {
        cx.stmt(ch.stmt).span.end <= spawn_at
            && reaches(&task_names, &ch.rx, 3)
            && !reaches(&task_names, &ch.tx, 3)
            && reaches(&returned, &ch.tx, 4)
            && drained_until_closed(cx, &ch.rx)
    })
}

/// Some `while let Some(m) = <..>rx.recv().await` (or `.next()`) loop of
/// the file takes from a receiver named `rx`, or a field of that name: it
/// ends when the channel closes.
fn drained_until_closed(cx: &FileCx, rx: &str) -> bool {
    cx.model.stmts.iter().any(|st| {
        let StmtKind::While { cond, .. } = &st.kind else {
            return false;
        };
        exprs_under(cx.model, *cond).into_iter().any(|x| {
            cx.call(x).is_some_and(|k| {
                matches!(k.name.as_str(), "recv" | "next" | "recv_async")
                    && k.receiver
                        .and_then(|r| cx.model.dotted(r))
                        .is_some_and(|d| d.rsplit('.').next() == Some(rx))
            })
        })
    })
}

/// The task holds a clone of a field of the spawning method's type that
/// the type's `Drop` in this file touches: the owner's drop flips the flag
/// or wakes the task it shares (`let state = self.state.clone();
/// thread::spawn(move || while state.load(..) == 1 { .. })` beside `impl
/// Drop for FileWatcher { fn drop(&mut self) { self.state.store(2, ..) }
/// }`; or `spawn(purge(shared.clone())); Db { shared }` in `Db::new`, whose
/// `drop` sets `self.shared`'s shutdown flag and notifies). The task lives
/// as long as its owner.
fn stopped_by_owners_drop(cx: &FileCx, spawn: ExprId) -> bool {
    let last = |t: &str| t.rsplit("::").next().unwrap_or(t).to_string();
    let owner = super::common::outermost(cx, cx.func_of(spawn));
    let Some(class) = cx.func(owner).class.as_deref().map(last) else {
        return false;
    };
    let is_self_field = |e: ExprId, fields: &[&str]| {
        matches!(&cx.expr(cx.model.strip(e)).kind, ExprKind::Attr { obj, name, .. }
            if cx.model.name_of(*obj) == Some("self") && fields.contains(&name.as_str()))
    };
    let touched: Vec<&str> = cx
        .model
        .function_ids()
        .filter(|&f| {
            cx.func(f).name.as_str() == "drop"
                && cx.func(f).class.as_deref().map(last).as_deref() == Some(class.as_str())
        })
        .flat_map(|f| cx.body_exprs(f).iter().copied())
        .filter_map(|e| match &cx.expr(e).kind {
            ExprKind::Attr { obj, name, .. } if cx.model.name_of(*obj) == Some("self") => {
                Some(name.as_str())
            }
            _ => None,
        })
        .collect();
    if touched.is_empty() {
        return false;
    }
    // Locals the function stores in a touched field of a struct literal
    // (`Db { shared }`, `Db { shared: s }`).
    let stored: Vec<&str> = cx
        .body_exprs(owner)
        .iter()
        .filter_map(|&e| match &cx.expr(e).kind {
            ExprKind::Collection {
                kind: CollKind::Struct,
                elems,
                keys,
                ..
            } => Some(elems.iter().zip(keys.iter())),
            _ => None,
        })
        .flatten()
        .filter(|(_, k)| k.as_deref().is_some_and(|k| touched.contains(&k)))
        .filter_map(|(&v, _)| cx.model.name_of(cx.model.strip(v)))
        .collect();
    // `x.clone()` or `Arc::clone(&x)` of a touched field, or of a local
    // the function stores in one.
    let clone_of_touched = |c: &Call| {
        let source = match (c.name.as_str(), c.receiver) {
            ("clone", Some(r)) => Some(r),
            ("clone", None) => c.positional(0),
            _ => None,
        };
        source.is_some_and(|r| {
            let r = cx.model.strip(r);
            is_self_field(r, &touched) || cx.model.name_of(r).is_some_and(|n| stored.contains(&n))
        })
    };
    exprs_within(cx, spawn).into_iter().any(|e| {
        cx.call(e).is_some_and(clone_of_touched)
            || (matches!(cx.expr(e).kind, ExprKind::Name { resolved: None, .. })
                && super::common::declared_value(cx, e)
                    .and_then(|v| cx.call(cx.model.strip(v)))
                    .is_some_and(clone_of_touched))
    })
}

/// Pool workers: the spawned closure runs on state shared with the value
/// the function returns (`let shared = pool.shared.clone(); spawn(move ||
/// shared.run()); Ok(pool)`), and that value's type has a `Drop` in this
/// file, where it tells the workers to stop. The workers live exactly as
/// long as the handle the caller holds.
fn works_for_returned_owner(cx: &FileCx, spawn: ExprId) -> bool {
    let Some(body) = super::common::spawned_fn(cx, spawn) else {
        return false;
    };
    let owner = super::common::outermost(cx, cx.func_of(spawn));
    let last = |t: &str| t.rsplit("::").next().unwrap_or(t).to_string();
    let dropped: Vec<String> = cx
        .model
        .function_ids()
        .filter(|&f| cx.func(f).name.as_str() == "drop")
        .filter_map(|f| cx.func(f).class.as_deref().map(last))
        .collect();
    let owner_fn = cx.func(owner);
    let returns_dropped = owner_fn.returns.as_ref().is_some_and(|t| {
        let words: Vec<&str> = t
            .text
            .split(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
            .collect();
        dropped.iter().any(|d| {
            words.contains(&d.as_str())
                || (words.contains(&"Self")
                    && owner_fn.class.as_deref().map(last).as_deref() == Some(d.as_str()))
        })
    });
    if !returns_dropped {
        return false;
    }
    // The names the function returns: `pool`, `Ok(pool)`, `Some(pool)`.
    let returned: Vec<&str> = super::common::stmts_in(cx.model, &owner_fn.body)
        .into_iter()
        .filter_map(|s| match &cx.stmt(s).kind {
            StmtKind::Return(Some(v)) => {
                let v = cx.model.strip(*v);
                cx.model.name_of(v).or_else(|| {
                    cx.call(v)
                        .and_then(|c| c.positional(0))
                        .and_then(|a| cx.model.name_of(cx.model.strip(a)))
                })
            }
            _ => None,
        })
        .collect();
    if returned.is_empty() {
        return false;
    }
    // A name the workers use is a clone of (a field of) a returned value.
    let shares_returned = |name: &str, at: ExprId| {
        let Some(decl) = super::common::declaration_of(cx, name, at) else {
            return false;
        };
        let StmtKind::Assign { value: Some(v), .. } = &cx.stmt(decl).kind else {
            return false;
        };
        let Some(c) = cx.call(cx.model.strip(*v)) else {
            return false;
        };
        let source = match (c.name.as_str(), c.receiver) {
            ("clone", Some(r)) => Some(r),
            ("clone", None) => c.positional(0),
            _ => None,
        };
        source.and_then(|r| cx.model.dotted(r)).is_some_and(|d| {
            let root = d.trim_start_matches('&').split('.').next().unwrap_or("");
            returned.contains(&root)
        })
    };
    cx.body_exprs(body).iter().any(|&e| {
        matches!(&cx.expr(e).kind, ExprKind::Name { resolved: None, .. })
            && cx.model.name_of(e).is_some_and(|n| shares_returned(n, e))
    })
}

/// The outermost `.unwrap()`/`.expect(..)`/`?` applied to a call's value.
fn through_unwrap(cx: &FileCx, mut e: ExprId) -> ExprId {
    loop {
        match cx.tree.expr_parent(e) {
            Parent::Expr(p) => match &cx.expr(p).kind {
                ExprKind::Try(_) | ExprKind::Cast(_) => e = p,
                ExprKind::Attr { .. } => {
                    let Parent::Expr(pp) = cx.tree.expr_parent(p) else {
                        return e;
                    };
                    match cx.call(pp) {
                        Some(c)
                            if c.receiver == Some(e)
                                && matches!(c.name.as_str(), "unwrap" | "expect") =>
                        {
                            e = pp
                        }
                        _ => return e,
                    }
                }
                _ => return e,
            },
            _ => return e,
        }
    }
}

/// The name a `let NAME = <call>` binds the call's value to.
fn bound_name(cx: &FileCx, call: ExprId) -> Option<String> {
    let Parent::Stmt(s) = cx.tree.expr_parent(call) else {
        return None;
    };
    let StmtKind::Assign {
        targets,
        value: Some(v),
        ..
    } = &cx.stmt(s).kind
    else {
        return None;
    };
    if *v != call {
        return None;
    }
    match targets.as_slice() {
        [t] => cx.model.name_of(*t).map(str::to_string),
        _ => None,
    }
}

/// True when `name` is read after the binding at `call`, inside the same
/// function (closures included).
fn used_later(cx: &FileCx, call: ExprId, name: &str) -> bool {
    let after = cx.expr(call).span.end;
    let func_span = cx.func(cx.func_of(call)).span;
    cx.model.exprs.iter().any(|e| {
        e.span.start >= after
            && e.span.end <= func_span.end
            && matches!(&e.kind, ExprKind::Name { id, .. } if id == name)
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[
        r#"
use tracing::error;

async fn accept_loop(listener: tokio::net::TcpListener) {
    loop {
        let (socket, _) = listener.accept().await.unwrap();
        tokio::spawn(async move { // expect
            if let Err(e) = serve(socket).await {
                error!("connection failed: {e}");
            }
        });
    }
}
"#,
        r#"
async fn fire(items: Vec<u32>) {
    for item in items {
        tokio::spawn(async move { push(item).await }); // expect
    }
    let _ = tokio::task::spawn_blocking(|| compact()); // expect
}
"#,
        r#"
use std::thread;

fn start() {
    thread::spawn(|| loop { tick() }); // expect
    let handle = thread::spawn(|| work()); // expect
    thread::Builder::new().name("flusher".into()).spawn(flush).unwrap(); // expect
    thread::spawn(|| futures::executor::block_on(refresh())); // expect
}
"#,
        r#"
// The task holds a channel end, but the spawner never waits on the other.
async fn publish(events: Vec<Event>) {
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    tokio::spawn(async move { // expect
        while let Some(e) = rx.recv().await {
            store(e).await;
        }
    });
    for e in events {
        tx.send(e).await.unwrap();
    }
    // The handle that would own the worker is thrown away.
    let (worker, _handle) = Worker::pair();
    tokio::spawn(worker); // expect
    // Calling something named "cancel" is not holding a shutdown signal.
    tokio::spawn(async move { cancel_order(42).await }); // expect
}
"#,
        r#"
#[tokio::main]
async fn main() {
    let listener = tokio::net::TcpListener::bind("0.0.0.0:8080").await.unwrap();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (socket, _) = accepted.unwrap();
                tokio::spawn(serve(socket)); // expect
            }
            _ = tokio::signal::ctrl_c() => break,
        }
    }
    flush_metrics().await;
}
"#,
        r#"
use std::sync::OnceLock;
use std::thread;

fn handle_request(req: Request) {
    thread::spawn(move || audit(req)); // expect
}

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Cache::new)
}
"#,
        r#"
pub async fn resend_all(mut inbox: tokio::sync::mpsc::Receiver<Vec<Item>>) {
    while let Some(batch) = inbox.recv().await {
        let job = async move { upload(batch).await };
        tokio::spawn(job); // expect
    }
}
"#,
        r#"
use std::sync::Arc;
use std::thread;

pub struct Pool {
    shared: Arc<Shared>,
}

impl Pool {
    pub fn start(size: usize) -> Pool {
        let pool = Pool { shared: Arc::new(Shared::new(size)) };
        for _ in 0..size {
            let shared = pool.shared.clone();
            thread::spawn(move || shared.run()); // expect
        }
        pool
    }
}
"#,
        r#"
use tokio::net::{TcpListener, TcpStream};

#[tokio::main]
async fn main() {
    let listener = TcpListener::bind("0.0.0.0:9002").await.unwrap();
    accept_some(listener).await;
    save_stats().await;
}

async fn accept_some(listener: TcpListener) {
    while let Ok((sock, _)) = listener.accept().await {
        tokio::spawn(serve(sock)); // expect
    }
}

async fn serve(_sock: TcpStream) {}

async fn save_stats() {}
"#,
        r#"
use std::thread;

struct Pool {
    jobs: Vec<u32>,
}

impl Pool {
    async fn run(&self) {
        for j in &self.jobs {
            work(*j).await;
        }
    }
}

fn main() {
    static POOL: Pool = Pool { jobs: Vec::new() };
    thread::spawn(|| futures_lite::future::block_on(POOL.run())); // expect
    report();
}
"#,
        r#"
use std::thread;

pub fn start_worker(paths: Vec<String>) {
    let jobs = load(paths);
    thread::spawn(move || { // expect
        for job in jobs {
            job.run();
        }
    });
}
"#,
        r#"
use tokio::net::TcpStream;

// A library's serve loop: nobody's accept loop owns it, and its stream
// tasks outlive the `serve` call that started them.
pub async fn serve(socket: TcpStream, store: Store) -> Result<(), Error> {
    let mut conn = mux::Connection::handshake(socket).await?;
    while let Some(next) = conn.accept_stream().await {
        let stream = next?;
        let store = store.clone();
        tokio::spawn(async move { // expect
            if let Err(e) = copy_into(stream, &store).await {
                eprintln!("stream error: {e}");
            }
        });
    }
    store.flush().await
}

async fn copy_into(mut stream: mux::Stream, store: &Store) -> Result<(), Error> {
    while let Some(chunk) = stream.read_chunk().await? {
        store.append(chunk).await?;
    }
    Ok(())
}
"#,
        r#"
use mqtt::{Client, Options};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let (client, mut eventloop) = Client::new(Options::new("demo", "localhost", 1883), 10);
    tokio::spawn(async move { // expect
        upload_report().await.unwrap();
    });
    requests(client).await;
    while let Ok(event) = eventloop.poll().await {
        println!("{:?}", event);
    }
}
"#,
        r#"
use std::time::Duration;

pub struct Reporter {
    pub name: String,
}

impl Reporter {
    pub fn new(name: String) -> Self {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        std::thread::spawn(move || { // expect
            let local = tokio::task::LocalSet::new();
            local.spawn_local(async move {
                loop {
                    flush_metrics().await;
                    tokio::time::sleep(Duration::from_secs(10)).await;
                }
            });
            rt.block_on(local);
        });
        Self { name }
    }
}
"#,
        r#"
use tokio::sync::broadcast::{Receiver, Sender};

pub async fn relay(mut rx: Receiver<u64>, notify: Sender<u64>) {
    while let Ok(id) = rx.recv().await {
        let tx = notify.clone();
        tokio::spawn(async move { // expect
            run_job(id).await.ok();
            let _ = tx.send(id);
        });
    }
}
"#,
        r#"
use tokio::sync::mpsc;

pub struct Poller {
    pub tx: mpsc::Sender<String>,
    pub name: String,
}

impl Poller {
    pub fn start(self) -> String {
        let tx = self.tx.clone();
        tokio::spawn(async move { // expect
            loop {
                tokio::time::sleep(std::time::Duration::from_secs(5)).await;
                let _ = tx.send("tick".into()).await;
            }
        });
        self.name
    }
}
"#,
        r#"
use async_std::net::TcpListener;
use async_std::prelude::*;
use async_std::task;

fn main() -> std::io::Result<()> {
    task::block_on(async {
        let listener = TcpListener::bind("127.0.0.1:8080").await?;
        let mut incoming = listener.incoming();
        while let Some(stream) = incoming.next().await {
            let stream = stream?;
            task::spawn(async { process(stream).await.unwrap() }); // expect
        }
        Ok::<(), std::io::Error>(())
    })?;
    flush_metrics();
    Ok(())
}
"#,
        r#"
use tokio::sync::mpsc;

struct Request {
    name: String,
}

struct Worker;

impl Worker {
    async fn run(&self, mut rx: mpsc::Receiver<Request>) {
        while let Some(request) = rx.recv().await {
            let fut = Self::handle(request);
            tokio::spawn(fut); // expect
        }
    }

    // The result goes nowhere: a failure is lost.
    async fn handle(request: Request) {
        let _ = use_keyspace(&request.name).await;
    }
}

async fn use_keyspace(_n: &str) -> Result<(), String> {
    Ok(())
}

fn prefetch() {
    let task = async move {
        let _ = use_keyspace("pages").await;
    };
    let _handle = tokio::task::spawn(task); // expect
}
"#,
        r#"
use mqtt::{Client, Options};

// The loop never ends: when the publishing task fails, its client drops
// and every poll errors, but the errors are only printed and nobody
// learns the task is gone.
async fn run(options: Options) {
    let (client, mut eventloop) = Client::new(options, 10);
    tokio::spawn(async move { // expect
        publish_all(&client).await.unwrap();
    });
    loop {
        match eventloop.poll().await {
            Ok(event) => println!("{:?}", event),
            Err(e) => eprintln!("{e}"),
        }
    }
}
"#,
        r#"
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::sync::mpsc;

struct Ticker {
    rx: mpsc::UnboundedReceiver<u64>,
}

// The spawned future is built here, not taken off the channel: its
// failures are this runner's, and nobody sees them.
impl Future for Ticker {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            match ready!(self.rx.poll_recv(cx)) {
                None => return Poll::Ready(()),
                Some(id) => {
                    tokio::task::spawn_local(report(id)); // expect
                }
            }
        }
    }
}
"#,
        r#"
use tokio::sync::oneshot;

pub struct DescribeAll {
    pub depth: usize,
    pub sender: oneshot::Sender<Vec<String>>,
}

pub async fn handle(message: DescribeAll, actors: Vec<String>) {
    let depth = message.depth;
    tokio::spawn(async move { // expect
        let described = describe_all(actors, depth).await;
        println!("{described:?}");
    });
    let _ = message.sender.send(Vec::new());
}

async fn describe_all(actors: Vec<String>, depth: usize) -> Vec<String> {
    tokio::task::yield_now().await;
    actors.into_iter().take(depth).collect()
}
"#,
        r#"
// file: src/bin/relay.rs
use std::thread;
use std::time::Duration;

fn relay() {
    loop {
        forward_one();
    }
}

fn forward_one() {
    let _ = std::fs::read("/tmp/relay.in");
}

fn main() {
    thread::spawn(relay); // expect
    thread::spawn(|| { // expect
        let _ = std::fs::write("/tmp/relay.out", b"ready");
    });
    thread::sleep(Duration::from_secs(5));
}
"#,
        r#"
use once_cell::sync::Lazy;
use std::thread;
use std::time::Duration;

static REFRESHER: Lazy<()> = Lazy::new(|| start());

fn start() {
    thread::spawn(|| { // expect
        let _ = std::fs::write("/var/run/app.pid", std::process::id().to_string());
        thread::sleep(Duration::from_secs(1));
    });
}

pub fn ensure_started() {
    Lazy::force(&REFRESHER);
    start();
}
"#,
        r#"
// file: examples/relay/src/main.rs
use std::thread;
use std::time::Duration;

fn relay() {
    loop {
        forward_one();
    }
}

fn forward_one() {
    let _ = std::fs::read("/tmp/relay.in");
}

fn main() {
    thread::spawn(relay); // expect
    thread::spawn(|| { // expect
        let _ = std::fs::write("/tmp/relay.out", b"ready");
    });
    thread::sleep(Duration::from_secs(5));
}
"#,
        r#"
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub struct Storage {
    inner: Arc<Mutex<Vec<u64>>>,
}

impl Default for Storage {
    fn default() -> Self {
        let inner = Arc::new(Mutex::new(Vec::new()));
        // A strong reference: the task keeps the storage alive for good.
        tokio::spawn({ // expect
            let inner = inner.clone();
            async move {
                loop {
                    inner.lock().unwrap().clear();
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        });
        Storage { inner }
    }
}
"#,
        r#"
use std::thread;

pub struct Connection {
    sender: crossbeam_channel::Sender<Job>,
}

impl Connection {
    pub fn open(db: Db) -> Self {
        let (sender, receiver) = crossbeam_channel::unbounded::<Job>();
        thread::spawn(move || event_loop(db, receiver)); // expect
        Self { sender }
    }
}

fn event_loop(mut db: Db, receiver: crossbeam_channel::Receiver<Job>) {
    loop {
        if let Ok(job) = receiver.try_recv() {
            job.run(&mut db);
        }
        db.checkpoint();
    }
}
"#,
        r#"
// The task keeps a sender of its own: its loop never sees the channel close.
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

struct Actor {
    conn: Conn,
    request_rx: mpsc::Receiver<Request>,
}

impl Actor {
    async fn run(mut self) -> Result<(), Error> {
        while let Some(req) = self.request_rx.recv().await {
            self.conn.write(req).await?;
        }
        Ok(())
    }
}

struct Inner {
    request_tx: mpsc::Sender<Request>,
}

pub struct Client {
    inner: Arc<Mutex<Inner>>,
}

pub async fn connect(conn: Conn) -> Result<Client, Error> {
    let (request_tx, request_rx) = mpsc::channel(64);
    let resend = request_tx.clone();
    let actor = Actor { conn, request_rx };
    tokio::spawn(async move { // expect
        if let Err(err) = actor.run().await {
            eprintln!("client task failed: {err}");
        }
        drop(resend);
    });
    let inner = Arc::new(Mutex::new(Inner { request_tx }));
    Ok(Client { inner })
}
"#,
        r#"
use std::sync::Arc;

pub struct Socket {
    handle: tokio::runtime::Handle,
    on_open: Option<Arc<dyn Fn(()) -> futures::future::BoxFuture<'static, ()> + Send + Sync>>,
}

impl Socket {
    pub fn connect(&self) {
        let greet = |()| async { log_open().await };
        self.handle.spawn(async move { greet(()).await }); // expect
    }
}
"#,
        r#"
// file: src/bin/producer.rs
#[tokio::main]
async fn main() {
    let producer = connect().await;
    tokio::spawn(async move { report(producer).await }); // expect
    serve().await;
}
"#,
        r#"
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct Watcher {
    state: Arc<AtomicUsize>,
    hits: Arc<AtomicUsize>,
}

impl Watcher {
    pub fn spawn(&self) {
        let hits = self.hits.clone();
        std::thread::spawn(move || loop { // expect
            poll_file(&hits);
        });
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.state.store(2, Ordering::SeqCst);
    }
}
"#,
        r#"
use std::sync::Arc;
use std::thread;

pub struct Pool {
    workers: usize,
    queue: Arc<Queue>,
}

impl Pool {
    // Any pool can call this, as often as it likes: the threads outlive it.
    pub fn start(&self) {
        (0..self.workers).for_each(|_| {
            let q = Arc::clone(&self.queue);
            thread::Builder::new() // expect
                .name("pool-worker".into())
                .spawn(move || q.run_forever())
                .expect("cannot start a worker");
        });
    }
}
"#,
        r#"
use tokio::sync::mpsc::unbounded_channel;

pub struct Service;

impl Service {
    // The sender only goes to `drop`: the failure reaches nobody.
    pub async fn respond(&self, zone: Zone, out: Sink) {
        let (tx, mut rx) = unbounded_channel::<Item>();
        let cloned_tx = tx.clone();
        tokio::spawn(async move { // expect
            if let Err(e) = zone.walk().await {
                log_error(e);
            }
            std::mem::drop(cloned_tx);
        });
        drop(tx);
        while let Some(item) = rx.recv().await {
            out.push(item).await;
        }
    }
}
"#,
        r#"
use tokio_postgres::NoTls;

// The client is thrown away: nothing owns the driver's lifetime.
pub async fn warm_up(url: &str) {
    let connect = tokio_postgres::connect(url, NoTls).await;
    let (_client, connection) = connect.unwrap();
    tokio::spawn(async move { // expect
        let _ = connection.await;
    });
}
"#,
    ],
    pass: &[
        r#"
use std::sync::{Arc, Mutex, Weak};
use std::thread;
use std::time::Duration;

type Map = Mutex<Vec<(u64, Vec<u8>)>>;

pub struct MemoryBackend {
    storage: Arc<Map>,
}

impl MemoryBackend {
    // The sweeper holds the map only weakly and stops once it is dropped.
    pub fn new(ttl: Duration) -> MemoryBackend {
        let storage = Arc::new(Mutex::new(Vec::new()));
        {
            let storage = Arc::downgrade(&storage);
            thread::spawn(move || cleanup_loop(storage, ttl));
        }
        MemoryBackend { storage }
    }
}

fn cleanup_loop(storage: Weak<Map>, ttl: Duration) {
    loop {
        let storage = match storage.upgrade() {
            None => break,
            Some(storage) => storage,
        };
        storage.lock().unwrap().clear();
        thread::sleep(ttl);
    }
}
"#,
        r#"
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::sync::mpsc;

enum Command {
    Stop,
    Execute(Pin<Box<dyn Future<Output = ()>>>),
}

struct Runner {
    rx: mpsc::UnboundedReceiver<Command>,
}

// An executor: each future comes off the channel, built by whoever sent
// it, who owns that work.
impl Future for Runner {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            match ready!(self.rx.poll_recv(cx)) {
                None | Some(Command::Stop) => return Poll::Ready(()),
                Some(item) => match item {
                    Command::Execute(fut) => {
                        tokio::task::spawn_local(fut);
                    }
                    Command::Stop => return Poll::Ready(()),
                },
            }
        }
    }
}
"#,
        r#"
use mqtt::{Client, Options};

// The loop ends at the first failed poll, which is what the publishing
// task's end (its client dropped) causes.
async fn run(options: Options) {
    let (client, mut eventloop) = Client::new(options, 10);
    tokio::spawn(async move {
        publish_all(&client).await.unwrap();
    });
    loop {
        match eventloop.poll().await {
            Ok(event) => println!("{:?}", event),
            Err(_) => break,
        }
    }
}
"#,
        r#"
use mqtt::{Client, Options};
use std::thread;

fn run(options: Options) {
    let (client, mut connection) = Client::new(options, 10);
    thread::spawn(move || publish_all(client));
    for notification in connection.iter() {
        println!("{:?}", notification);
    }
}
"#,
        r#"
use tokio::sync::{mpsc, oneshot};

struct Request {
    name: String,
    response_chan: oneshot::Sender<Result<(), String>>,
}

struct Worker;

impl Worker {
    async fn run(&self, mut rx: mpsc::Receiver<Request>) {
        while let Some(request) = rx.recv().await {
            let fut = Self::handle(request);
            tokio::spawn(fut);
        }
    }

    // The requester awaits the answer on the reply sender the request carries.
    async fn handle(request: Request) {
        let result = use_keyspace(&request.name).await;
        let _ = request.response_chan.send(result);
    }
}

async fn use_keyspace(_n: &str) -> Result<(), String> {
    Ok(())
}

pub struct Pager {
    rx: mpsc::Receiver<Result<Vec<u8>, String>>,
}

struct PagerWorker;

impl PagerWorker {
    async fn query_remaining_pages(self, sender: mpsc::Sender<Result<Vec<u8>, String>>) {
        let _ = sender.send(Ok(vec![])).await;
    }
}

// Pages and errors reach the pager returned, and the task stops once it is
// dropped.
pub fn pages() -> Pager {
    let (sender, receiver) = mpsc::channel(1);
    let worker_task = async move {
        let executor = PagerWorker;
        executor.query_remaining_pages(sender).await;
    };
    let _worker_handle = tokio::task::spawn(worker_task);
    Pager { rx: receiver }
}
"#,
        r#"
use async_std::net::TcpListener;
use async_std::prelude::*;
use async_std::task;

fn main() -> std::io::Result<()> {
    // The accept loop is main's body, as under #[async_std::main].
    task::block_on(async {
        let listener = TcpListener::bind("127.0.0.1:8080").await?;
        let mut incoming = listener.incoming();
        while let Some(stream) = incoming.next().await {
            let stream = stream?;
            task::spawn(async { process(stream).await.unwrap() });
        }
        Ok::<(), std::io::Error>(())
    })
}
"#,
        r#"
use std::sync::mpsc;
use std::thread;

pub fn start_worker() -> mpsc::Sender<Box<dyn FnOnce() + Send>> {
    let (tx, rx) = mpsc::channel::<Box<dyn FnOnce() + Send>>();
    thread::spawn(move || {
        for job in rx {
            job();
        }
    });
    tx
}
"#,
        r#"
use std::thread;

struct Tiers {
    tiers: [async_executor::Executor<'static>; 2],
}

impl Tiers {
    async fn run(&self) {
        loop {
            let a = self.tiers[0].tick();
            let b = self.tiers[1].tick();
            futures_lite::future::or(a, b).await;
        }
    }
}

fn main() {
    static EX: Tiers = Tiers { tiers: [async_executor::Executor::new(), async_executor::Executor::new()] };
    thread::spawn(|| futures_lite::future::block_on(EX.run()));
    let task = EX.tiers[0].spawn(async { 1 + 1 });
    println!("{}", futures_lite::future::block_on(task));
}
"#,
        r#"
use tokio::sync::mpsc;

pub struct Bus {
    tx: mpsc::Sender<String>,
}

pub fn open(log: fn(&str)) -> Bus {
    let (tx, mut rx) = mpsc::channel::<String>(64);
    tokio::spawn(async move {
        while let Some(line) = rx.recv().await {
            log(&line);
        }
    });
    Bus { tx }
}
"#,
        r#"
use tokio::net::{TcpListener, TcpStream};

#[tokio::main]
async fn main() {
    let listener = TcpListener::bind("0.0.0.0:9000").await.unwrap();
    accept_forever(listener).await;
}

async fn accept_forever(listener: TcpListener) {
    while let Ok((sock, _)) = listener.accept().await {
        tokio::spawn(serve(sock));
    }
}

async fn serve(_sock: TcpStream) {}
"#,
        r#"
use tokio::net::{TcpListener, TcpStream};

#[tokio::main]
async fn main() {
    tokio::spawn(async move {
        relay().await;
    });
    report_forever().await;
}

async fn relay() {
    let listener = TcpListener::bind("0.0.0.0:9001").await.unwrap();
    while let Ok((sock, _)) = listener.accept().await {
        tokio::spawn(forward(sock));
    }
}

async fn forward(_sock: TcpStream) {}

async fn report_forever() {
    loop {
        tokio::time::sleep(std::time::Duration::from_secs(60)).await;
        println!("alive");
    }
}
"#,
        r#"
struct Conn {
    inner: Option<Inner>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take() {
            tokio::spawn(async move {
                let _ = inner.close().await;
            });
        }
    }
}

#[tokio::main]
async fn main() {
    tokio::spawn(async {
        loop {
            report_metrics().await;
            tokio::time::sleep(std::time::Duration::from_secs(10)).await;
        }
    });
    run_server().await;
}
"#,
        r#"
use std::sync::Arc;
use std::thread;

pub struct Pool {
    shared: Arc<Shared>,
}

impl Pool {
    pub fn start(size: usize) -> std::io::Result<Pool> {
        let pool = Pool { shared: Arc::new(Shared::new(size)) };
        for i in 0..size {
            let shared = pool.shared.clone();
            thread::Builder::new()
                .name(format!("pool-{i}"))
                .spawn(move || shared.run())?;
        }
        Ok(pool)
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.stop_all();
    }
}
"#,
        r#"
pub enum Command {
    Submit(Pin<Box<dyn Future<Output = ()>>>),
    Halt,
}

pub async fn serve_commands(mut inbox: tokio::sync::mpsc::UnboundedReceiver<Command>) {
    while let Some(cmd) = inbox.recv().await {
        match cmd {
            Command::Submit(job) => {
                tokio::task::spawn_local(job);
            }
            Command::Halt => break,
        }
    }
}
"#,
        r#"
#[tokio::main]
async fn main() {
    let listener = tokio::net::TcpListener::bind("0.0.0.0:8080").await.unwrap();
    loop {
        let (socket, _) = listener.accept().await.unwrap();
        tokio::spawn(async move {
            serve(socket).await;
        });
    }
}
"#,
        r#"
#[tokio::main]
async fn main() -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind("0.0.0.0:8081").await?;
    while let Ok((socket, _)) = listener.accept().await {
        tokio::spawn(serve(socket));
    }
    Ok(())
}

fn run_forever(listener: std::net::TcpListener) -> ! {
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                std::thread::spawn(move || handle(stream));
            }
            Err(e) => eprintln!("accept failed: {e}"),
        }
    }
}
"#,
        r#"
use std::sync::OnceLock;
use once_cell::sync::Lazy;

fn flusher() -> &'static Sender<Record> {
    static TX: OnceLock<Sender<Record>> = OnceLock::new();
    TX.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for r in rx {
                write_out(r);
            }
        });
        tx
    })
}

static REAPER: Lazy<()> = Lazy::new(|| {
    std::thread::spawn(|| loop {
        reap_children();
    });
});
"#,
        r#"
use tokio::task::JoinSet;

async fn run(items: Vec<u32>) {
    let mut set = JoinSet::new();
    for item in items {
        set.spawn(async move { push(item).await });
    }
    while let Some(r) = set.join_next().await {
        r.unwrap();
    }
    let h = tokio::spawn(async { 1 });
    let v = h.await.unwrap();
    let mut handles = Vec::new();
    handles.push(tokio::spawn(async { 2 }));
}

fn start() -> std::thread::JoinHandle<()> {
    std::thread::spawn(|| work())
}

struct TokioExecutor;

impl<F: std::future::Future + Send + 'static> hyper::rt::Executor<F> for TokioExecutor {
    fn execute(&self, fut: F) {
        tokio::spawn(fut);
    }
}

struct ThreadRuntime;

impl Runtime for ThreadRuntime {
    fn spawn<T: std::future::Future<Output = ()> + Send + 'static>(task: T) {
        std::thread::spawn(|| futures::executor::block_on(task));
    }
}

async fn fetch_in_background(url: String) -> Result<String, Error> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let _ = tx.send(fetch(&url).await);
    });
    rx.await?
}

async fn graceful_serve(graceful: GracefulShutdown, conn: Connection) {
    let conn = graceful.watch(conn);
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            eprintln!("connection error: {e}");
        }
    });
}
"#,
        r#"
use tokio_util::sync::CancellationToken;

// Connection tasks stop when the server's token is cancelled.
async fn accept_loop(listener: TcpListener, token: CancellationToken) {
    loop {
        let (sock, _) = listener.accept().await.unwrap();
        let token = token.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = handle(sock) => {}
                _ = token.cancelled() => {}
            }
        });
    }
}

// The connection driver ends when the client handle made with it is
// dropped.
async fn fetch(io: TcpStream) -> Result<Response, Error> {
    let (mut client, conn) = handshake(io).await?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            eprintln!("connection failed: {e}");
        }
    });
    client.send(request()).await
}

// Each task holds a receiver clone; the spawner waits for all of them to
// be dropped before returning.
async fn run_all(conns: Vec<Conn>) {
    let (done_tx, done_rx) = tokio::sync::watch::channel(());
    for conn in conns {
        let done_rx = done_rx.clone();
        tokio::spawn(async move {
            conn.run().await;
            drop(done_rx);
        });
    }
    drop(done_rx);
    done_tx.closed().await;
}

// A producer thread: the spawner consumes its output, and the thread ends
// (its send fails) once the receiver is dropped.
fn first_squares() -> Vec<u64> {
    let (s, r) = std::sync::mpsc::sync_channel(0);
    std::thread::spawn(move || produce_squares(s));
    r.iter().take(10).collect()
}

// The worker lives as long as the handle returned with it.
impl Queue {
    pub fn new(cap: usize) -> Queue {
        let (queue, worker) = Queue::pair(cap);
        tokio::spawn(worker);
        queue
    }
}

// Every request carries its reply sender; the callee answers on it.
async fn dispatch(mut rx: UnboundedReceiver<(Request, oneshot::Sender<Response>)>) {
    while let Some((req, reply)) = rx.recv().await {
        tokio::spawn(answer(req, reply));
    }
}

async fn answer(req: Request, reply: oneshot::Sender<Response>) {
    let _ = reply.send(handle(req).await);
}
"#,
        r#"
// file: src/bin/pipe.rs
// The task feeds a channel; main reads the other end as a stream until the
// session ends, and the task stops when that end is dropped.
use futures_util::StreamExt;

#[tokio::main]
async fn main() {
    let (line_tx, line_rx) = futures_channel::mpsc::unbounded();
    tokio::spawn(pump_stdin(line_tx));
    let sink = connect().await;
    line_rx.map(Ok).forward(sink).await.unwrap();
}

async fn pump_stdin(tx: futures_channel::mpsc::UnboundedSender<Vec<u8>>) {
    while let Some(line) = read_line().await {
        if tx.unbounded_send(line).is_err() {
            break;
        }
    }
}
"#,
        r#"
use tokio::net::{TcpListener, TcpStream};

#[tokio::main]
async fn main() {
    let listener = TcpListener::bind("127.0.0.1:7100").await.unwrap();
    loop {
        if let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                if let Err(e) = serve(socket).await {
                    eprintln!("connection error: {e}");
                }
            });
        }
    }
}

async fn serve(socket: TcpStream) -> Result<(), Error> {
    let mut conn = mux::Connection::handshake(socket).await?;
    while let Some(next) = conn.accept_stream().await {
        let stream = next?;
        tokio::spawn(async move {
            if let Err(e) = echo(stream).await {
                eprintln!("stream error: {e}");
            }
        });
    }
    Ok(())
}
"#,
        r#"
use std::sync::{Arc, Weak};
use std::time::Duration;

struct Reaper {
    every: tokio::time::Interval,
    pool: Weak<Shared>,
}

impl Reaper {
    async fn run(mut self) {
        loop {
            self.every.tick().await;
            // The pool is gone: stop with it.
            let Some(shared) = self.pool.upgrade() else { break };
            shared.reap();
        }
    }
}

impl Pool {
    pub fn new() -> Self {
        let shared = Arc::new(Shared::default());
        tokio::spawn(
            Reaper {
                every: tokio::time::interval(Duration::from_secs(30)),
                pool: Arc::downgrade(&shared),
            }
            .run(),
        );
        Pool { shared }
    }
}
"#,
        r#"
use mqtt::{Client, Options};

// Once every client is dropped, `poll()` fails and the loop ends: the
// task's end (or panic) is seen here.
#[tokio::main(flavor = "current_thread")]
async fn main() {
    let (client, mut eventloop) = Client::new(Options::new("demo", "localhost", 1883), 10);
    tokio::spawn(async move {
        requests(client).await;
    });
    while let Ok(event) = eventloop.poll().await {
        println!("{:?}", event);
    }
}
"#,
        r#"
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

struct Request {
    make: Box<dyn FnOnce() -> BoxFut + Send>,
    reply: oneshot::Sender<JoinHandle<()>>,
}

// Runs `!Send` futures on one thread, which ends with the last `LocalPool`.
#[derive(Clone)]
pub struct LocalPool {
    tx: mpsc::UnboundedSender<Request>,
}

impl LocalPool {
    pub fn new() -> Self {
        let (tx, mut rx) = mpsc::unbounded_channel::<Request>();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        std::thread::spawn(move || {
            let local = tokio::task::LocalSet::new();
            local.spawn_local(async move {
                while let Some(Request { make, reply }) = rx.recv().await {
                    let handle = tokio::task::spawn_local(make());
                    let _ = reply.send(handle);
                }
            });
            rt.block_on(local);
        });
        Self { tx }
    }
}
"#,
        r#"
use tokio::sync::broadcast::{Receiver, Sender};

// The spawned block awaits nothing: it is done on its first poll.
pub async fn relay(mut rx: Receiver<u64>, notify: Sender<u64>) {
    while let Ok(id) = rx.recv().await {
        let tx = notify.clone();
        tokio::spawn(async move {
            if let Err(e) = tx.send(id) {
                eprintln!("nobody listening: {e:?}");
            }
        });
    }
}
"#,
        r#"
use futures::TryFutureExt;

pub struct Connected<H, D> {
    pub handle: H,
    pub driver: D,
}

impl<H, D, E> Connected<H, D>
where
    D: Future<Output = Result<(), E>> + Send + 'static,
    E: std::error::Error + Send + 'static,
{
    // The driver serves the handle and ends once every handle is dropped.
    pub fn spawn(self) -> H {
        let driver = self.driver.unwrap_or_else(|e| {
            eprintln!("connection broken: {e}");
        });
        tokio::spawn(driver);
        self.handle
    }
}
"#,
        r#"
use tokio::sync::oneshot;

pub enum Command {
    Lookup { key: String, reply: oneshot::Sender<Option<String>> },
}

// The requester awaits `reply`: it gets the answer, or the sender dropped.
fn handle(cmd: Command) {
    match cmd {
        Command::Lookup { key, reply } => {
            tokio::spawn(async move {
                let found = fetch_remote(&key).await;
                let _ = reply.send(found);
            });
        }
    }
}
"#,
        r#"
use tokio::sync::mpsc;

async fn emit(tx: &mpsc::Sender<String>, line: &str) {
    let _ = tx.send(line.to_string()).await;
}

async fn print_all(mut rx: mpsc::Receiver<String>) {
    while let Some(line) = rx.recv().await {
        println!("got {line}");
    }
}

// The task reports on the channel through a helper; the caller drains it.
async fn produce_and_print() {
    let (tx, rx) = mpsc::channel(8);
    tokio::spawn(async move {
        emit(&tx, "one").await;
        emit(&tx, "two").await;
    });
    print_all(rx).await;
}
"#,
        r#"
use tokio::sync::oneshot;

pub struct DescribeAll {
    pub depth: usize,
    pub sender: oneshot::Sender<Vec<String>>,
}

pub async fn handle(message: DescribeAll, actors: Vec<String>) {
    tokio::spawn(async move {
        let described = describe_all(actors, message.depth).await;
        let _ = message.sender.send(described);
    });
}

async fn describe_all(actors: Vec<String>, depth: usize) -> Vec<String> {
    tokio::task::yield_now().await;
    actors.into_iter().take(depth).collect()
}
"#,
        r#"
use tokio::sync::oneshot;

pub struct Req {
    pub tx: Option<oneshot::Sender<u32>>,
}

fn reply(tx: oneshot::Sender<u32>, v: u32) {
    let _ = tx.send(v);
}

async fn compute() -> u32 {
    tokio::task::yield_now().await;
    7
}

pub async fn handle(mut m: Req) {
    let tx = m.tx.take().unwrap();
    tokio::spawn(async move { reply(tx, compute().await) });
}
"#,
        r#"
// file: examples/relay.rs
use std::thread;
use std::time::Duration;

fn relay() {
    loop {
        forward_one();
    }
}

fn forward_one() {
    let _ = std::fs::read("/tmp/relay.in");
}

fn main() {
    thread::spawn(relay);
    thread::spawn(|| {
        let _ = std::fs::write("/tmp/relay.out", b"ready");
    });
    thread::sleep(Duration::from_secs(5));
}
"#,
        r#"
use once_cell::sync::Lazy;
use std::thread;
use std::time::Duration;

static REFRESHER: Lazy<()> = Lazy::new(|| start());

fn start() {
    thread::spawn(|| {
        let _ = std::fs::write("/var/run/app.pid", std::process::id().to_string());
        thread::sleep(Duration::from_secs(1));
    });
}

pub fn ensure_started() {
    Lazy::force(&REFRESHER);
}
"#,
        r#"
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

pub struct Resolver {
    certs: Mutex<Vec<String>>,
}

// The renewal task holds the resolver only weakly: it ends once the
// resolver is dropped.
pub fn start_renewal(resolver: &Arc<Resolver>) {
    let weak = Arc::downgrade(resolver);
    tokio::spawn(async move {
        while let Some(r) = Weak::upgrade(&weak) {
            r.certs.lock().unwrap().retain(|c| !c.is_empty());
            drop(r);
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
    });
}
"#,
        r#"
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub struct Storage {
    inner: Arc<Mutex<Vec<u64>>>,
}

impl Default for Storage {
    fn default() -> Self {
        let inner = Arc::new(Mutex::new(Vec::new()));
        tokio::spawn({
            let inner = Arc::downgrade(&inner);
            async move {
                loop {
                    match inner.upgrade() {
                        Some(inner) => inner.lock().unwrap().clear(),
                        None => break,
                    }
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        });
        Storage { inner }
    }
}
"#,
        r#"
use std::thread;

enum Message {
    Execute(Box<dyn FnOnce(&mut Db) + Send>),
    Close,
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
}

fn event_loop(mut db: Db, receiver: crossbeam_channel::Receiver<Message>) {
    while let Ok(message) = receiver.recv() {
        match message {
            Message::Execute(f) => f(&mut db),
            Message::Close => break,
        }
    }
}
"#,
        r#"
// The actor ends when the last handle, holding the last sender, is dropped.
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

struct Actor {
    conn: Conn,
    request_rx: mpsc::Receiver<Request>,
}

impl Actor {
    async fn run(mut self) -> Result<(), Error> {
        while let Some(req) = self.request_rx.recv().await {
            self.conn.write(req).await?;
        }
        Ok(())
    }
}

struct Inner {
    request_tx: mpsc::Sender<Request>,
}

pub struct Client {
    inner: Arc<Mutex<Inner>>,
}

pub async fn connect(conn: Conn) -> Result<Client, Error> {
    let (request_tx, request_rx) = mpsc::channel(64);
    let actor = Actor { conn, request_rx };
    tokio::spawn(async move {
        if let Err(err) = actor.run().await {
            eprintln!("client task failed: {err}");
        }
    });
    let inner = Arc::new(Mutex::new(Inner { request_tx }));
    Ok(Client { inner })
}
"#,
        r#"
use std::sync::Arc;

pub struct Socket {
    handle: tokio::runtime::Handle,
    on_open: Option<Arc<dyn Fn(()) -> futures::future::BoxFuture<'static, ()> + Send + Sync>>,
}

impl Socket {
    pub fn connect(&self) {
        if let Some(on_open) = self.on_open.as_ref() {
            let on_open = on_open.clone();
            self.handle.spawn(async move { on_open(()).await });
        }
    }
}

pub trait Handler {
    fn call(&self);
}

impl<F, Fut> Handler for F
where
    F: FnOnce() -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    fn call(&self) {
        let fut = (self.clone())();
        tokio::spawn(fut);
    }
}
"#,
        r#"
// file: src/bin/perf-producer.rs
#[tokio::main]
async fn main() {
    let producer = connect().await;
    tokio::spawn(async move { report(producer).await });
    serve().await;
}
"#,
        r#"
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct Watcher {
    state: Arc<AtomicUsize>,
}

impl Watcher {
    pub fn spawn(&self) {
        let state = self.state.clone();
        std::thread::spawn(move || {
            while state.load(Ordering::SeqCst) == 1 {
                poll_file();
            }
        });
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.state.store(2, Ordering::SeqCst);
    }
}

pub struct Db {
    shared: Arc<Shared>,
}

impl Db {
    pub fn new() -> Db {
        let shared = Arc::new(Shared::default());
        tokio::spawn(purge_expired(shared.clone()));
        Db { shared }
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        self.shared.state.lock().unwrap().shutdown = true;
        self.shared.background_task.notify_one();
    }
}
"#,
        r#"
use std::sync::Arc;
use std::thread;

pub struct Pool {
    workers: usize,
    queue: Arc<Queue>,
}

impl Pool {
    // The pool lives in a static: its workers run for the whole process.
    pub fn start(&'static self) {
        (0..self.workers).for_each(|_| {
            let q = Arc::clone(&self.queue);
            thread::Builder::new()
                .name("pool-worker".into())
                .spawn(move || q.run_forever())
                .expect("cannot start a worker");
        });
    }
}
"#,
        r#"
// file: src/stream.rs
use tokio::sync::mpsc::UnboundedSender;

pub fn add_to_stream<T>(item: T, tx: &UnboundedSender<T>) {
    let _ = tx.send(item);
}
// file: src/service.rs
use crate::stream::add_to_stream;
use tokio::sync::mpsc::unbounded_channel;

pub struct Service;

impl Service {
    // The walker's failure goes into the stream the caller reads.
    pub async fn respond(&self, zone: Zone, out: Sink) {
        let (tx, mut rx) = unbounded_channel();
        let cloned_tx = tx.clone();
        tokio::spawn(async move {
            if let Err(e) = zone.walk().await {
                add_to_stream(Item::Error(e), &cloned_tx);
            }
        });
        drop(tx);
        while let Some(item) = rx.recv().await {
            out.push(item).await;
        }
    }
}
"#,
        r#"
use tokio_postgres::{Client, NoTls};

// The driver ends when the returned client is dropped.
pub async fn open(url: &str) -> Result<Client, Error> {
    let connect = tokio_postgres::connect(url, NoTls).await;
    if let Err(e) = connect {
        return Err(Error::Connect(e));
    }
    let (client, connection) = connect.unwrap();
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            log::error!("postgres connection: {e}");
        }
    });
    Ok(client)
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(DetachedSpawn);

    /// A task that logs its errors is still detached, and the message says
    /// what is lost: its panics, not its errors.
    #[test]
    fn message_says_a_logging_task_loses_only_its_panics() {
        static RULE: DetachedSpawn = DetachedSpawn;
        let msg = |ex: &str| crate::testing::messages(&RULE, Language::Rust, ex)[0].clone();
        let logging = msg(EXAMPLES.fail[0]);
        assert!(
            logging.contains("its panics reach nobody (its errors are only logged)"),
            "{logging}"
        );
        let silent = msg(EXAMPLES.fail[1]);
        assert!(
            silent.contains("its panics and errors reach nobody"),
            "{silent}"
        );
        // A `match` arm on `Err` counts; printing on the way does not.
        let arm = msg(
            "async fn f() {\n    tokio::spawn(async move {\n        match serve().await {\n            Ok(()) => {}\n            Err(e) => eprintln!(\"failed: {e}\"),\n        }\n    });\n}\n",
        );
        assert!(arm.contains("its errors are only logged"), "{arm}");
        let chatty = msg(
            "async fn f() {\n    tokio::spawn(async move {\n        let c = accept().await.unwrap();\n        println!(\"accepted {c}\");\n    });\n}\n",
        );
        assert!(
            chatty.contains("its panics and errors reach nobody"),
            "{chatty}"
        );
    }
}
