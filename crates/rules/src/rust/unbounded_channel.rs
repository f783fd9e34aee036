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
            if unbounded_reason(cx.model, c, entry).is_none() {
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
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(UnboundedChannel);
}
