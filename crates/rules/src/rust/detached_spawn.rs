//! RS001: a spawned task or thread whose handle is dropped.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
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
            {
                continue;
            }
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
            out.push(cx.finding(
                &META,
                e.span,
                format!(
                    "`{}` starts a detached {noun}: {how}, so its panics and errors reach nobody and nothing waits for it or stops it on shutdown",
                    cx.callee_display(c)
                ),
                entry.fix.clone(),
            ));
        }
    }
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
            // `move || thread.run()` / `move || f()`: a closure that only
            // runs what the caller handed in.
            if let Some(cl) = super::common::closure_fn(cx, a.value)
                && let [s] = cx.func(cl).body.as_slice()
                && let StmtKind::Return(Some(e)) | StmtKind::Expr(e) = &cx.stmt(*s).kind
                && let Some(inner) = cx.call(super::common::unwrap_value(cx, *e))
            {
                return inner.receiver.is_some_and(is_param)
                    || (inner.receiver.is_none() && is_param(inner.func));
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
    let Some(body) = super::common::spawned_fn(cx, spawn) else {
        return false;
    };
    let owner = super::common::outermost(cx, cx.func_of(spawn));
    let senders: Vec<String> = super::common::local_channels(cx, owner)
        .into_iter()
        .map(|ch| ch.tx)
        .collect();
    if senders.is_empty() {
        return false;
    }
    unsnarl_model::walk::exprs_in_block(cx.model, &cx.func(body).body)
        .into_iter()
        .any(|e| {
            cx.call(e).is_some_and(|c| {
                c.name.starts_with("send")
                    && c.receiver
                        .and_then(|r| cx.model.name_of(r))
                        .is_some_and(|n| senders.iter().any(|s| s == n))
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
        unsnarl_model::walk::exprs_in_block(cx.model, &cx.func(f).body)
            .into_iter()
            .any(|e| {
                is_track(e)
                    || cx.model.name_of(e).is_some_and(|n| {
                        super::common::declaration_of(cx, n, e).is_some_and(|d| {
                            matches!(&cx.stmt(d).kind, StmtKind::Assign { value: Some(v), .. } if is_track(*v))
                        })
                    })
            })
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
}
"#,
    ],
    pass: &[r#"
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
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(DetachedSpawn);
}
