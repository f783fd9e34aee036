//! RS026: a reconnect loop that waits a fixed period, with no jitter.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::exprs_in_block;
use unsnarl_model::*;

pub struct ReconnectWithoutJitter;

pub static META: RuleMeta = RuleMeta {
    id: "RS026",
    name: "reconnect-without-jitter",
    category: Category::ThunderingHerd,
    severity: Severity::Low,
    languages: &[Language::Rust],
    summary: "A loop that (re)connects to a peer and sleeps a constant duration between attempts, with no jitter.",
    docs: r#"
A `loop`/`while` that calls a connect operation (`connect`,
`TcpStream::connect`, `connect_async`, `reconnect`, `subscribe`...) and
sleeps a fixed duration (`Duration::from_secs(5)`, a constant) between
attempts, with no random jitter in the loop.
Example and bench programs (files under `examples/` or `benches/`, but
not a project with a `src/` of its own kept there, and benchmark binaries
such as `src/bin/perf-producer.rs`) are not reported: they
run once and exit, and what they start is a demonstration.

## Why

When the server restarts or the network blips, every client loses its
connection at the same moment and then retries on the same fixed clock:
all of them reconnect in the same instant, every period, and the server
that just came back is knocked over again by the synchronized wave.

## Example

```rust
use std::time::Duration;

async fn keep_connected(addr: &str) {
    loop {
        if let Ok(conn) = tokio::net::TcpStream::connect(addr).await {
            serve(conn).await;
        }
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
}
```

## Fix

Add jitter to the delay (and grow it while failures continue).

```rust
use std::time::Duration;

async fn keep_connected(addr: &str) {
    loop {
        if let Ok(conn) = tokio::net::TcpStream::connect(addr).await {
            serve(conn).await;
        }
        let ms = rand::random::<u64>() % 5_000;
        tokio::time::sleep(Duration::from_millis(2_500 + ms)).await;
    }
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for ReconnectWithoutJitter {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        // Example and bench programs run once and exit: their spawns,
        // queues and retries are demonstrations, not a service's.
        if super::common::non_service_path(cx) {
            return;
        }
        for st in &cx.model.stmts {
            let body = match &st.kind {
                StmtKind::Loop { body } | StmtKind::While { body, .. } => body,
                _ => continue,
            };
            let exprs = exprs_in_block(cx.model, body);
            if !exprs.iter().any(|&e| common::is_connect(cx, e))
                || exprs
                    .iter()
                    .any(|&e| common::is_jitter(cx, e) || common::is_smart_wait(cx, e))
            {
                continue;
            }
            let Some(&first) = exprs.first() else {
                continue;
            };
            if common::test_like(cx, cx.func_of(first)) {
                continue;
            }
            for &e in &exprs {
                let Some(c) = cx.call(e) else { continue };
                if !common::is_sleep(c) {
                    continue;
                }
                // A sleep of a nested loop belongs to that loop.
                if cx.enclosing_stmts(e).into_iter().any(|s| {
                    cx.stmt(s).span != st.span
                        && st.span.contains(cx.stmt(s).span)
                        && matches!(
                            cx.stmt(s).kind,
                            StmtKind::Loop { .. } | StmtKind::While { .. } | StmtKind::For { .. }
                        )
                }) {
                    continue;
                }
                if !c
                    .positional(0)
                    .is_some_and(|a| common::is_constant_in(cx, a, body, &[]))
                {
                    continue;
                }
                out.push(cx.finding(
                    &META,
                    cx.expr(e).span,
                    "this reconnect loop waits a fixed period between attempts, with no jitter: after a server restart or a network blip every client reconnects in the same instant, every period, knocking the recovering server over again",
                    "add random jitter to the reconnect delay (and back off exponentially while attempts keep failing)",
                ));
                break;
            }
        }
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[r#"
use std::time::Duration;

const RETRY: Duration = Duration::from_secs(3);

async fn subscriber(url: String) {
    loop {
        match connect_async(&url).await {
            Ok((ws, _)) => pump(ws).await,
            Err(e) => eprintln!("connect failed: {e}"),
        }
        tokio::time::sleep(RETRY).await; // expect
    }
}

async fn dial(addr: &str) -> tokio::net::TcpStream {
    loop {
        match tokio::net::TcpStream::connect(addr).await {
            Ok(s) => return s,
            Err(_) => tokio::time::sleep(Duration::from_millis(500)).await, // expect
        }
    }
}
"#],
    pass: &[r#"
use std::time::Duration;

async fn subscriber(url: String) {
    let mut delay = Duration::from_millis(200);
    loop {
        if let Ok((ws, _)) = connect_async(&url).await {
            delay = Duration::from_millis(200);
            pump(ws).await;
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(Duration::from_secs(30));
    }
}

async fn ticker() {
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        report().await;
    }
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(ReconnectWithoutJitter);
}
