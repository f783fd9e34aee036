//! RS013: a `tokio::sync::Mutex`/`RwLock` guard held across an awaited
//! network call.

use super::common;
use super::locks::{Held, Sink, walk_fn};
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::*;

pub struct AsyncGuardAcrossIo;

pub static META: RuleMeta = RuleMeta {
    id: "RS013",
    name: "async-guard-across-io",
    category: Category::LockAcrossAwait,
    severity: Severity::Medium,
    languages: &[Language::Rust],
    summary: "A `tokio::sync::Mutex`/`RwLock` (or other async lock) guard is alive while the task awaits network or database I/O.",
    docs: r#"
In async code, a guard of an async lock (`tokio::sync::Mutex`/`RwLock`,
`futures::lock::Mutex`, `async_std::sync::Mutex`) is still alive when the
task awaits a call that talks to a peer: an HTTP request, a database query,
a socket read or write. Awaits of anything else (channels, timers, other
locks) are left alone, and so is I/O through the locked value itself (a
connection kept behind the lock, used through the guard): there the lock
is how the task owns the connection for the operation.

## Why

An async lock may be held across `.await` without blocking a thread, but
every other task that needs it now waits for the full round trip to the
peer: the lock turns a slow dependency into a queue in front of all callers,
and a peer that never answers (no timeout) freezes every one of them.

## Example

```rust
use tokio::sync::Mutex;

async fn refresh(cache: &Mutex<Option<String>>, client: &reqwest::Client) {
    let mut slot = cache.lock().await;
    let body = client.get("https://example.com/config").send().await;
    *slot = body.ok().map(|_| String::new());
}
```

## Fix

Do the I/O without the lock, then take it only to store the result (check
that nobody refreshed meanwhile if that matters).

```rust
use tokio::sync::Mutex;

async fn refresh(cache: &Mutex<Option<String>>, client: &reqwest::Client) {
    let body = client.get("https://example.com/config").send().await;
    let mut slot = cache.lock().await;
    *slot = body.ok().map(|_| String::new());
}
```
"#,
    examples: &EXAMPLES,
};

struct IoSink {
    found: Vec<(Held, Span, ExprId)>,
}

impl Sink for IoSink {
    fn suspend(&mut self, cx: &FileCx, at: Span, awaited: Option<ExprId>, held: &[Held]) {
        let Some(aw) = awaited else { return };
        let call = common::unwrap_value(cx, aw);
        if !common::is_network_io(cx, call) {
            return;
        }
        for h in held {
            if h.acq.is_async
                && h.acq.typed
                && !cx.contains(aw, h.acq.call)
                && !through_guard(cx, h, call)
            {
                self.found.push((h.clone(), at, call));
            }
        }
    }
}

/// The I/O goes through the locked value itself (`guard.execute(..)`,
/// `query.execute(&mut *guard)`): the lock is how the task owns the
/// connection for the operation, so the I/O cannot move out from under it.
fn through_guard(cx: &FileCx, h: &Held, call: ExprId) -> bool {
    let names = guard_names(cx, h);
    !names.is_empty()
        && walk::exprs_under(cx.model, call).into_iter().any(|e| {
            cx.model
                .name_of(e)
                .is_some_and(|n| names.iter().any(|g| g == n))
        })
}

/// The names the locked value goes by: the guard's binding, or for a
/// temporary guard matched on the spot (`match *conn.lock().await {
/// Inner::Pg(ref mut c) => .. }`) the bindings of the arms; then the locals
/// assigned from any of them (`let c = &mut *guard;`).
fn guard_names(cx: &FileCx, h: &Held) -> Vec<String> {
    let mut names: Vec<String> = h.name.iter().cloned().collect();
    if h.name.is_none()
        && let Some(s) = cx.enclosing_stmts(h.acq.call).into_iter().next()
        && let StmtKind::Switch {
            subject: Some(subject),
            cases,
        } = &cx.stmt(s).kind
        && cx.contains(*subject, h.acq.call)
    {
        for p in cases.iter().flat_map(|c| &c.patterns) {
            for e in walk::exprs_under(cx.model, *p) {
                if let Some(n) = common::binding_name(cx.model, e) {
                    names.push(n.to_string());
                }
            }
        }
    }
    if names.is_empty() {
        return names;
    }
    let f = cx.func_of(h.acq.call);
    let mentions = |v: ExprId, names: &[String]| {
        walk::exprs_under(cx.model, v).into_iter().any(|e| {
            cx.model
                .name_of(e)
                .is_some_and(|n| names.iter().any(|g| g == n))
        })
    };
    let mut derived = Vec::new();
    for &e in cx.body_exprs(f) {
        if let walk::Parent::Stmt(s) = cx.tree.expr_parent(e)
            && let StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } = &cx.stmt(s).kind
            && *v == e
            && mentions(e, &names)
        {
            derived.extend(
                targets
                    .iter()
                    .filter_map(|&t| common::binding_name(cx.model, t).map(str::to_string)),
            );
        }
    }
    names.extend(derived);
    names
}

impl Rule for AsyncGuardAcrossIo {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        let mut seen = HashSet::new();
        for f in cx.model.function_ids() {
            if !cx.func(f).is_async || common::test_like(cx, f) {
                continue;
            }
            let mut sink = IoSink { found: Vec::new() };
            walk_fn(cx, f, &mut sink);
            for (h, at, call) in sink.found {
                if !seen.insert(h.acq.span) {
                    continue;
                }
                let holder = match &h.name {
                    Some(n) => format!("`{n}`"),
                    None => "a temporary".into(),
                };
                let mut fd = cx.finding(
                    &META,
                    h.acq.span,
                    format!(
                        "the guard of `{}` ({holder}) is held while awaiting `{}`, a network call: every task that needs the lock waits for the peer's round trip, and a peer that never answers freezes them all",
                        h.acq.text,
                        common::text(cx, cx.call(call).map(|c| c.func).unwrap_or(call))
                    ),
                    "do the I/O before taking the lock (or copy what it needs out and drop the guard first), then lock only to store the result",
                );
                fd.related.push(Related {
                    file: None,
                    span: at,
                    message: "awaits network I/O with the guard held".into(),
                });
                out.push(fd);
            }
        }
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[
        r#"
use std::sync::Arc;
use tokio::net::TcpStream;
use tokio::sync::Mutex;

struct Pool {
    conns: Mutex<Vec<TcpStream>>,
    client: reqwest::Client,
}

impl Pool {
    async fn grow(&self) -> std::io::Result<()> {
        let mut conns = self.conns.lock().await; // expect
        let c = TcpStream::connect("10.0.0.1:5432").await?;
        conns.push(c);
        Ok(())
    }

    async fn fetch(&self) {
        let guard = self.conns.lock().await; // expect
        let r = self.client.get("http://x").send().await;
        drop(guard);
    }
}
"#,
        r#"
use std::sync::Arc;
use tokio::sync::Mutex;

struct Tx {
    conn: Arc<Mutex<sqlx::PgConnection>>,
    client: reqwest::Client,
}

impl Tx {
    async fn audit(&self, q: &str) -> Result<(), sqlx::Error> {
        let mut conn = self.conn.lock().await; // expect
        sqlx::query(q).execute(&mut *conn).await?;
        // Another peer, while the connection stays locked.
        let _ = self.client.post("http://audit").send().await;
        Ok(())
    }
}
"#,
        r#"
use std::sync::Arc;
use tokio::io::AsyncWriteExt;
use tokio::sync::RwLock;

struct Scheduler {
    inner: RwLock<Inner>,
    log: Arc<RwLock<tokio::net::TcpStream>>,
}

impl Scheduler {
    async fn shutdown(&mut self, conn: &mut tokio::net::TcpStream) {
        let mut inner = self.inner.write().await; // expect
        inner.stop();
        conn.write(b"bye").await.ok();
    }
}
"#,
    ],
    pass: &[
        r#"
use std::sync::Arc;
use tokio::sync::RwLock;

struct Scheduler {
    inner: RwLock<Inner>,
    on_shutdown: Option<Arc<RwLock<Box<dyn FnMut() + Send + Sync>>>>,
}

impl Scheduler {
    async fn shutdown(&mut self) {
        let notify = self.on_shutdown.take();
        let mut inner = self.inner.write().await;
        inner.stop();
        if let Some(notify) = notify {
            let mut notify = notify.write().await;
            notify();
        }
    }
}
"#,
        r#"
use tokio::sync::{mpsc, Mutex};

struct State {
    items: Mutex<Vec<u32>>,
    client: reqwest::Client,
}

impl State {
    async fn add(&self, tx: &mpsc::Sender<u32>) {
        let mut items = self.items.lock().await;
        items.push(1);
        tx.send(1).await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }

    async fn fetch(&self) {
        let r = self.client.get("http://x").send().await;
        let mut items = self.items.lock().await;
        items.push(2);
        drop(items);
        let again = self.client.get("http://y").send().await;
    }
}
"#,
        r#"
use std::sync::Arc;
use tokio::sync::Mutex;

enum Inner {
    Pg(sqlx::PgConnection),
}

struct Tx {
    conn: Arc<Mutex<sqlx::PgConnection>>,
    inner: Arc<Mutex<Inner>>,
}

impl Tx {
    async fn run(&self, q: &str) -> Result<(), sqlx::Error> {
        let mut conn = self.conn.lock().await;
        sqlx::query(q).execute(&mut *conn).await?;
        let c: &mut sqlx::PgConnection = &mut *conn;
        sqlx::query("SELECT 1").execute(c).await?;
        Ok(())
    }

    async fn commit(&self) -> Result<(), sqlx::Error> {
        match *self.inner.lock().await {
            Inner::Pg(ref mut c) => {
                sqlx::query("COMMIT").execute(c).await?;
            }
        }
        Ok(())
    }
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(AsyncGuardAcrossIo);
}
