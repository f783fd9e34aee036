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
locks) are left alone.

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
            if h.acq.is_async && h.acq.typed && !cx.contains(aw, h.acq.call) {
                self.found.push((h.clone(), at, call));
            }
        }
    }
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
    fail: &[r#"
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
"#],
    pass: &[r#"
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
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(AsyncGuardAcrossIo);
}
