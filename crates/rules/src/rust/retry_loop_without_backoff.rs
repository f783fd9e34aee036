//! RS022: a retry loop with no backoff, or a constant sleep.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::exprs_in_block;
use unsnarl_model::*;

pub struct RetryLoopWithoutBackoff;

pub static META: RuleMeta = RuleMeta {
    id: "RS022",
    name: "retry-loop-without-backoff",
    category: Category::RetryStorm,
    severity: Severity::High,
    languages: &[Language::Rust],
    summary: "A loop that retries an operation on `Err` (and leaves on `Ok`) with no wait between attempts, or with a constant sleep and no jitter.",
    docs: r#"
A retry loop: `loop`/`while` (or `for attempt in 0..n`) around a fallible
call (awaited, or an I/O call such as `connect`/`send`/`query`), whose `Ok`
branch leaves the loop (`break`/`return`) while the `Err` branch goes
around again (`match`, `if let Ok(..)`, `while let Err(..)`), and that:

- retries immediately, with no sleep or backoff helper in the loop;
- sleeps a constant duration (`Duration::from_secs(1)`, a constant) with
  no growth and no jitter.

Loops over a list of candidates (`for addr in addrs`), CAS loops and
non-blocking polls (`try_recv`, `try_lock`) are not retries. Constant-delay
reconnect loops are reported by `reconnect-without-jitter` instead. A
listener's `accept` loop that pauses a constant time after an error (out of
file descriptors) is left alone: it calls no other service, and the pause
is only there to keep it from spinning (with no pause at all, it is still
reported).

## Why

When the dependency is failing or overloaded, immediate retries multiply
the load exactly when it has the least capacity, and constant delays keep
every client that failed together retrying together, in waves. The outage
feeds itself (a metastable failure).

## Example

```rust
async fn publish(client: &Client, msg: &[u8]) -> Result<(), Error> {
    loop {
        match client.send(msg).await {
            Ok(()) => return Ok(()),
            Err(e) => eprintln!("send failed: {e}, retrying"),
        }
    }
}
```

## Fix

Exponential backoff with jitter and a bound on attempts.

```rust
use std::time::Duration;

async fn publish(client: &Client, msg: &[u8]) -> Result<(), Error> {
    let mut delay = Duration::from_millis(100);
    for attempt in 0..5 {
        match client.send(msg).await {
            Ok(()) => return Ok(()),
            Err(e) if attempt == 4 => return Err(e),
            Err(_) => {
                let jitter = rand::random::<f64>();
                tokio::time::sleep(delay.mul_f64(0.5 + jitter)).await;
                delay *= 2;
            }
        }
    }
    unreachable!()
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for RetryLoopWithoutBackoff {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for (i, st) in cx.model.stmts.iter().enumerate() {
            let s = StmtId(i as u32);
            let Some(op) = common::retried_call(cx, s) else {
                continue;
            };
            let f = cx.tree.stmt_func(s);
            let fname = &cx.func(common::outermost(cx, f)).name;
            if common::test_like(cx, f) || fname == "poll" || fname.starts_with("poll_") {
                continue;
            }
            let body = loop_body(cx, s);
            let exprs = exprs_in_block(cx.model, body);
            let has_select = common::stmts_in(cx.model, body)
                .into_iter()
                .any(|x| matches!(cx.stmt(x).kind, StmtKind::Select { .. }));
            let sleeps: Vec<ExprId> = exprs
                .iter()
                .copied()
                .filter(|&e| cx.call(e).is_some_and(common::is_sleep))
                .collect();
            let smart = exprs.iter().any(|&e| common::is_smart_wait(cx, e));
            let jitter = exprs.iter().any(|&e| common::is_jitter(cx, e));
            let op_text = common::text(cx, cx.call(op).map(|c| c.func).unwrap_or(op));
            // Another await in the loop (a readiness wait, an error
            // handler that may back off) may be the wait.
            let other_awaits = exprs.iter().any(|&e| match cx.expr(e).kind {
                ExprKind::Await(inner) => common::unwrap_value(cx, inner) != op,
                _ => false,
            });
            if sleeps.is_empty() && !smart && !has_select && !other_awaits {
                out.push(cx.finding(
                    &META,
                    st.span,
                    format!(
                        "this loop retries `{op_text}` immediately after each failure, with no wait between attempts: when the dependency is struggling, every caller hammers it at full speed and keeps it down"
                    ),
                    "wait between attempts with exponential backoff and jitter (e.g. `sleep(base * 2^attempt * rand(0.5..1.5))`, capped), and bound the number of attempts",
                ));
                continue;
            }
            // A listener's own `accept` that pauses after an error (EMFILE)
            // hammers no dependency: the pause only keeps it from spinning.
            let accepts = cx.call(op).is_some_and(|c| c.name.starts_with("accept"));
            if jitter || smart || accepts || common::is_connect(cx, op) {
                continue;
            }
            let loop_vars = loop_vars(cx, s);
            let vars: Vec<&str> = loop_vars.iter().map(String::as_str).collect();
            for e in sleeps {
                let c = cx.call(e).expect("a call");
                let constant = c
                    .positional(0)
                    .is_some_and(|a| common::is_constant_in(cx, a, body, &vars));
                if !constant {
                    continue;
                }
                out.push(cx.finding(
                    &META,
                    cx.expr(e).span,
                    format!(
                        "this loop retries `{op_text}` after a constant sleep, with no growth and no jitter: clients that failed together retry together, in waves that keep the dependency overloaded"
                    ),
                    "grow the delay exponentially between attempts, add random jitter, and bound the number of attempts (or use a backoff crate such as `backoff`/`backon`)",
                ));
                break;
            }
        }
    }
}

fn loop_body<'a>(cx: &FileCx<'a>, s: StmtId) -> &'a Block {
    match &cx.stmt(s).kind {
        StmtKind::Loop { body } | StmtKind::While { body, .. } | StmtKind::For { body, .. } => body,
        _ => unreachable!("a loop"),
    }
}

/// Names bound by a `for` loop header.
fn loop_vars(cx: &FileCx, s: StmtId) -> Vec<String> {
    match &cx.stmt(s).kind {
        StmtKind::For {
            target: Some(t), ..
        } => unsnarl_model::walk::exprs_under(cx.model, *t)
            .into_iter()
            .filter_map(|x| cx.model.name_of(x).map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[
        r#"
async fn save(db: &Db, row: Row) -> Result<(), DbError> {
    loop { // expect
        match db.insert(&row).await {
            Ok(_) => return Ok(()),
            Err(e) => log::warn!("insert failed: {e}"),
        }
    }
}

fn push(client: &Client, body: &[u8]) -> bool {
    for _ in 0..10 { // expect
        if let Ok(()) = client.post(body) {
            return true;
        }
    }
    false
}
"#,
        r#"
use std::time::Duration;

async fn fetch(url: &str) -> String {
    loop {
        match reqwest::get(url).await {
            Ok(r) => break r.text().await.unwrap_or_default(),
            Err(_) => tokio::time::sleep(Duration::from_secs(1)).await, // expect
        }
    }
}
"#,
        r#"
use tokio::net::{TcpListener, TcpStream};

pub async fn accept_spin(listener: &TcpListener) -> (TcpStream, std::net::SocketAddr) {
    loop { // expect
        match listener.accept().await {
            Ok(value) => return value,
            Err(e) => tracing::warn!("accept failed: {e}"),
        }
    }
}
"#,
    ],
    pass: &[
        r#"
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};

pub async fn accept(listener: &TcpListener) -> (TcpStream, std::net::SocketAddr) {
    loop {
        match listener.accept().await {
            Ok(value) => return value,
            Err(e) => {
                tracing::warn!("accept failed: {e}");
                // Avoid a hot loop when the listener keeps failing (EMFILE).
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}
"#,
        r#"
use std::time::Duration;

async fn fetch(url: &str) -> Option<String> {
    let mut delay = Duration::from_millis(100);
    for _ in 0..5 {
        match reqwest::get(url).await {
            Ok(r) => return r.text().await.ok(),
            Err(_) => {
                tokio::time::sleep(delay).await;
                delay *= 2;
            }
        }
    }
    None
}

async fn first_reachable(addrs: Vec<std::net::SocketAddr>) -> Option<tokio::net::TcpStream> {
    for addr in addrs {
        match tokio::net::TcpStream::connect(addr).await {
            Ok(s) => return Some(s),
            Err(_) => continue,
        }
    }
    None
}

fn open_any(addresses: &[String], start: usize) -> Result<Client, Error> {
    let mut last_err = None;
    for i in 0..addresses.len() {
        let index = (i + start) % addresses.len();
        match Client::open(addresses[index].clone()) {
            Ok(client) => return Ok(client),
            Err(err) => last_err = Some(err),
        }
    }
    Err(last_err.unwrap())
}

async fn serve(listener: tokio::net::TcpListener) {
    loop {
        match listener.accept().await {
            Ok((sock, _)) => {
                tokio::spawn(handle(sock));
            }
            Err(e) => eprintln!("accept: {e}"),
        }
    }
}

fn cas(x: &std::sync::atomic::AtomicU64) {
    let mut cur = x.load(std::sync::atomic::Ordering::Relaxed);
    loop {
        match x.compare_exchange_weak(cur, cur + 1, std::sync::atomic::Ordering::AcqRel, std::sync::atomic::Ordering::Relaxed) {
            Ok(_) => break,
            Err(v) => cur = v,
        }
    }
}

async fn with_jitter(url: &str) -> String {
    loop {
        match reqwest::get(url).await {
            Ok(r) => return r.text().await.unwrap_or_default(),
            Err(_) => {
                let ms = rand::thread_rng().gen_range(100..1000);
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            }
        }
    }
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(RetryLoopWithoutBackoff);
}
