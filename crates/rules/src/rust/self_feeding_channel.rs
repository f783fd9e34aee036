//! RS010: the consumer of a bounded channel sends into that same channel
//! (and waits when it is full).

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::walk::exprs_in_block;
use unsnarl_model::*;

pub struct SelfFeedingChannel;

pub static META: RuleMeta = RuleMeta {
    id: "RS010",
    name: "self-feeding-channel",
    category: Category::WaitCycle,
    severity: Severity::Critical,
    languages: &[Language::Rust],
    summary: "The loop draining a bounded channel sends into the same channel with a waiting `send` (`send(..).await`, `SyncSender::send`): once the channel is full, the only consumer waits on itself.",
    docs: r#"
A bounded channel (`tokio::sync::mpsc::channel(n)`, `sync_channel(n)`,
`crossbeam_channel::bounded(n)`, `async_channel::bounded(n)`...) whose
receiving loop (`while let Some(x) = rx.recv().await`, `for x in rx`) sends
back into the same channel through its sender or a clone of it, with a send
that waits for room (`send(..).await`, a blocking `send`).

## Why

The loop is the channel's only consumer. When it sends while the channel is
full, it waits for a consumer to make room, and that consumer is itself:
nothing ever drains the channel again. It works while the queue is short
(tests) and locks up for good under a burst.

## Example

```rust
use tokio::sync::mpsc;

async fn crawl(start: String) {
    let (tx, mut rx) = mpsc::channel::<String>(100);
    tx.send(start).await.unwrap();
    while let Some(url) = rx.recv().await {
        for link in fetch_links(&url).await {
            tx.send(link).await.unwrap();
        }
    }
}
```

## Fix

Keep the work the consumer feeds back in a local queue (or use
`try_send` and handle `Full`), so the consumer never waits on its own
channel.

```rust
use std::collections::VecDeque;

async fn crawl(start: String) {
    let mut queue = VecDeque::from([start]);
    while let Some(url) = queue.pop_front() {
        for link in fetch_links(&url).await {
            queue.push_back(link);
        }
    }
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for SelfFeedingChannel {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        let mut seen = HashSet::new();
        for f in cx.model.function_ids() {
            for ch in common::local_channels(cx, f) {
                if !ch.bounded {
                    continue;
                }
                let within = common::fns_within(cx, f);
                let senders = aliases(cx, f, &ch.tx);
                for &g in &within {
                    for s in cx.body_stmts(g).iter().copied() {
                        let Some((rx, body)) = common::drain_loop(cx, s) else {
                            continue;
                        };
                        if rx != ch.rx {
                            continue;
                        }
                        for e in exprs_in_block(cx.model, body) {
                            let Some(c) = cx.call(e) else { continue };
                            if c.name != "send" || c.args.len() != 1 {
                                continue;
                            }
                            let Some(r) = c.receiver.and_then(|r| cx.model.name_of(r)) else {
                                continue;
                            };
                            if !senders.contains(r) {
                                continue;
                            }
                            if ch.async_send && !cx.is_awaited(e) {
                                continue;
                            }
                            if !seen.insert(e) {
                                continue;
                            }
                            let mut fd = cx.finding(
                                &META,
                                cx.expr(e).span,
                                format!(
                                    "`{r}.send(..)` waits for room in the bounded channel that this very loop drains (`{}`): once it is full, the only consumer waits for itself and the channel never drains again",
                                    ch.rx
                                ),
                                "do not feed the consumer's own bounded channel with a waiting send: keep fed-back work in a local queue (`VecDeque`), or use `try_send` and handle `Full` explicitly",
                            );
                            fd.related.push(Related {
                                file: None,
                                span: cx.stmt(ch.stmt).span,
                                message: "the bounded channel is created here".into(),
                            });
                            out.push(fd);
                        }
                    }
                }
            }
        }
    }
}

/// The sender and its clones (`let tx2 = tx.clone()`), in `f` and the
/// closures inside it.
fn aliases(cx: &FileCx, f: FuncId, tx: &str) -> HashSet<String> {
    let span = cx.func(f).span;
    let mut names: HashSet<String> = HashSet::from([tx.to_string()]);
    let mut changed = true;
    while changed {
        changed = false;
        for st in &cx.model.stmts {
            if !span.contains(st.span) {
                continue;
            }
            let StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } = &st.kind
            else {
                continue;
            };
            let Some(c) = cx.call(*v) else { continue };
            let src = match (c.name.as_str(), c.receiver) {
                ("clone", Some(r)) => cx.model.name_of(r),
                _ => None,
            };
            let Some(src) = src else { continue };
            if !names.contains(src) {
                continue;
            }
            for &t in targets {
                if let Some(n) = common::binding_name(cx.model, t)
                    && names.insert(n.to_string())
                {
                    changed = true;
                }
            }
        }
    }
    names
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[
        r#"
use tokio::sync::mpsc;

async fn crawl(start: String) {
    let (tx, mut rx) = mpsc::channel::<String>(100);
    tx.send(start).await.unwrap();
    while let Some(url) = rx.recv().await {
        for link in links(&url).await {
            tx.send(link).await.unwrap(); // expect
        }
    }
}
"#,
        r#"
use std::sync::mpsc;
use std::thread;

fn retry_worker() {
    let (tx, rx) = mpsc::sync_channel::<Job>(8);
    let requeue = tx.clone();
    thread::spawn(move || {
        for job in rx {
            if job.run().is_err() {
                requeue.send(job).unwrap(); // expect
            }
        }
    });
    tx.send(Job::default()).unwrap();
}
"#,
    ],
    pass: &[r#"
use tokio::sync::mpsc;

async fn crawl(start: String) {
    let (tx, mut rx) = mpsc::channel::<String>(100);
    let (out_tx, _out_rx) = mpsc::channel::<String>(100);
    tx.send(start).await.unwrap();
    while let Some(url) = rx.recv().await {
        for link in links(&url).await {
            if tx.try_send(link.clone()).is_err() {
                break;
            }
            out_tx.send(link).await.unwrap();
        }
    }
}

async fn unbounded(start: String) {
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    tx.send(start).unwrap();
    while let Some(url) = rx.recv().await {
        tx.send(url).unwrap();
    }
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(SelfFeedingChannel);
}
