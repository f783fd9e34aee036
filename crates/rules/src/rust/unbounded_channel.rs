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

/// `let (tx, rx) = channel();` whose sender sends exactly once, outside any
/// loop, and is never cloned: a oneshot in disguise, it cannot grow.
fn used_as_oneshot(cx: &FileCx, ctor: ExprId) -> bool {
    use super::common;
    let f = cx.func_of(ctor);
    let Some(ch) = common::local_channels(cx, f)
        .into_iter()
        .find(|ch| ch.ctor == ctor)
    else {
        return false;
    };
    let top = common::outermost(cx, f);
    let after = cx.stmt(ch.stmt).span.end;
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
    if drained {
        return false;
    }
    let uses = common::uses_after(cx, top, &ch.tx, after);
    let mut sends = 0;
    for u in &uses {
        // A method call's receiver hangs under the callee `Attr`.
        let parent = match cx.tree.expr_parent(*u) {
            unsnarl_model::walk::Parent::Expr(a)
                if matches!(cx.expr(a).kind, ExprKind::Attr { .. }) =>
            {
                cx.tree.expr_parent(a)
            }
            p => p,
        };
        if let unsnarl_model::walk::Parent::Expr(p) = parent {
            match cx.call(p) {
                Some(c) if c.receiver == Some(*u) => {
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
                Some(_) => return false, // passed to a function
                None => {}
            }
        }
    }
    sends == 1
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[r#"
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
"#],
    pass: &[r#"
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

fn close_signal(conn: Conn) -> std::sync::mpsc::Receiver<Error> {
    let (close_tx, close_rx) = std::sync::mpsc::channel();
    tokio::spawn(async move {
        let e = conn.closed().await;
        let _ = close_tx.send(e);
    });
    close_rx
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(UnboundedChannel);
}
