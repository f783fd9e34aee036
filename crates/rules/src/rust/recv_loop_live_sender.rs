//! RS009: a loop draining a channel whose sender the same function still
//! holds, so the loop never ends.

use super::common::{self, UseKind};
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct RecvLoopLiveSender;

pub static META: RuleMeta = RuleMeta {
    id: "RS009",
    name: "recv-loop-with-live-sender",
    category: Category::ChannelMisuse,
    severity: Severity::High,
    languages: &[Language::Rust],
    summary: "`while let Some(x) = rx.recv().await` (or `for x in rx`) in a function that still holds the channel's original sender, so the loop never sees the channel close.",
    docs: r#"
A function creates a channel with `let (tx, rx) = ...`, hands clones of `tx`
to producers, and then drains `rx` in a loop that only ends when the
channel closes (`while let Some(x) = rx.recv().await`, `while let Ok(x) =
rx.recv()`, `for x in rx`), without dropping its own `tx` first (no
`drop(tx)`, not moved into a task) and with code after the loop that is
expected to run.

## Why

A receiver sees the end of the stream only when every sender is gone. The
producers finish and drop their clones, but the original `tx` lives until
the end of the function, which is after the loop: the loop waits forever
for a message nobody will send, the function never returns, and whatever
comes after (collecting results, shutdown) never happens.

## Example

```rust
use tokio::sync::mpsc;

async fn fetch_all(urls: Vec<String>) -> Vec<String> {
    let (tx, mut rx) = mpsc::channel(16);
    for url in urls {
        let tx = tx.clone();
        tokio::spawn(async move {
            let _ = tx.send(url).await;
        });
    }
    let mut out = Vec::new();
    while let Some(body) = rx.recv().await {
        out.push(body);
    }
    out
}
```

## Fix

Drop the original sender once the producers have their clones (or move it
into the last producer).

```rust
use tokio::sync::mpsc;

async fn fetch_all(urls: Vec<String>) -> Vec<String> {
    let (tx, mut rx) = mpsc::channel(16);
    for url in urls {
        let tx = tx.clone();
        tokio::spawn(async move {
            let _ = tx.send(url).await;
        });
    }
    drop(tx);
    let mut out = Vec::new();
    while let Some(body) = rx.recv().await {
        out.push(body);
    }
    out
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for RecvLoopLiveSender {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for f in cx.model.function_ids() {
            for ch in common::local_channels(cx, f) {
                let chan_end = cx.stmt(ch.stmt).span.end;
                for s in cx.body_stmts(f).iter().copied() {
                    let st = cx.stmt(s);
                    if st.span.start < chan_end {
                        continue;
                    }
                    let Some((rx, body)) = common::drain_loop(cx, s) else {
                        continue;
                    };
                    if rx != ch.rx || common::loop_has_exit(cx, body) {
                        continue;
                    }
                    if !work_after(cx, s) {
                        continue;
                    }
                    let uses: Vec<ExprId> = common::uses_after(cx, f, &ch.tx, chan_end)
                        .into_iter()
                        .filter(|&u| cx.expr(u).span.start < st.span.start)
                        .filter(|&u| common::declaration_of(cx, &ch.tx, u) == Some(ch.stmt))
                        .collect();
                    if uses
                        .iter()
                        .any(|&u| common::use_kind(cx, u, f) == UseKind::Consumed)
                    {
                        continue;
                    }
                    let mut fd = cx.finding(
                        &META,
                        st.span,
                        format!(
                            "this loop ends only when every sender of `{}` is dropped, but this function still holds `{}` (created at line {}) and drops it only after the loop: the loop waits forever once the producers are done, and the code after it never runs",
                            ch.rx,
                            ch.tx,
                            common::line_of(cx, cx.stmt(ch.stmt).span)
                        ),
                        format!(
                            "`drop({})` once every producer has its clone (before the loop), or move the original sender into the last producer",
                            ch.tx
                        ),
                    );
                    fd.related.push(Related {
                        file: None,
                        span: cx.stmt(ch.stmt).span,
                        message: format!("`{}` is created here and stays alive", ch.tx),
                    });
                    out.push(fd);
                }
            }
        }
    }
}

/// Something after the loop is expected to run: a statement that is not a
/// bare `Ok(())`, in the loop's block or in an enclosing one.
fn work_after(cx: &FileCx, s: StmtId) -> bool {
    let Some(block) = common::block_of(cx, s) else {
        return false;
    };
    let i = block.iter().position(|&x| x == s).unwrap_or(block.len());
    block[i + 1..]
        .iter()
        .any(|&x| !common::is_trivial_stmt(cx, x))
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[
        r#"
use tokio::sync::mpsc;

async fn gather(jobs: Vec<Job>) -> Vec<Output> {
    let (tx, mut rx) = mpsc::channel(32);
    for job in jobs {
        let tx = tx.clone();
        tokio::spawn(async move {
            let _ = tx.send(job.run().await).await;
        });
    }
    let mut results = Vec::new();
    while let Some(r) = rx.recv().await { // expect
        results.push(r);
    }
    results
}
"#,
        r#"
use std::sync::mpsc;
use std::thread;

fn sum(parts: Vec<Vec<u64>>) -> u64 {
    let (tx, rx) = mpsc::sync_channel(4);
    for p in parts {
        let tx = tx.clone();
        thread::spawn(move || tx.send(p.iter().sum::<u64>()).unwrap());
    }
    let mut total = 0;
    for v in rx { // expect
        total += v;
    }
    total
}
"#,
    ],
    pass: &[r#"
use tokio::sync::mpsc;

async fn gather(jobs: Vec<Job>) -> Vec<Output> {
    let (tx, mut rx) = mpsc::channel(32);
    for job in jobs {
        let tx = tx.clone();
        tokio::spawn(async move {
            let _ = tx.send(job.run().await).await;
        });
    }
    drop(tx);
    let mut results = Vec::new();
    while let Some(r) = rx.recv().await {
        results.push(r);
    }
    results
}

async fn moved(job: Job) -> Vec<Output> {
    let (tx, mut rx) = mpsc::channel(32);
    tokio::spawn(async move {
        let _ = tx.send(job.run().await).await;
    });
    let mut results = Vec::new();
    while let Some(r) = rx.recv().await {
        results.push(r);
    }
    results
}

async fn passed(job: Job) -> Vec<Output> {
    let (tx, mut rx) = mpsc::channel(32);
    tokio::spawn(produce(job, tx));
    let mut results = Vec::new();
    while let Some(r) = rx.recv().await {
        results.push(r);
    }
    results
}

async fn until_done(jobs: Vec<Job>) -> u32 {
    let (tx, mut rx) = mpsc::channel(32);
    let n = jobs.len();
    for job in jobs {
        let tx = tx.clone();
        tokio::spawn(async move { let _ = tx.send(job.run().await).await; });
    }
    let mut seen = 0;
    while let Some(_r) = rx.recv().await {
        seen += 1;
        if seen == n {
            break;
        }
    }
    seen as u32
}

#[tokio::main]
async fn main() {
    let (tx, mut rx) = mpsc::channel(32);
    start_server(tx.clone());
    while let Some(ev) = rx.recv().await {
        handle(ev).await;
    }
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(RecvLoopLiveSender);
}
