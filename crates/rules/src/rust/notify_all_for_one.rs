//! RS025: every waiter woken for a single new item.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::exprs_in_block;
use unsnarl_model::*;

pub struct NotifyAllForOne;

pub static META: RuleMeta = RuleMeta {
    id: "RS025",
    name: "notify-all-for-one",
    category: Category::ThunderingHerd,
    severity: Severity::Medium,
    languages: &[Language::Rust],
    summary: "`Condvar::notify_all()` or `tokio::sync::Notify::notify_waiters()` right after adding a single item (`push`, `push_back`, `insert`, `send`).",
    docs: r#"
A single item is added to a shared queue or map (`push`, `push_back`,
`insert`, `send`...) and then every waiter is woken with
`Condvar::notify_all()` or `Notify::notify_waiters()`. Broadcasts that
follow a state change all waiters care about (a shutdown flag set to
`true`, a `clear()`) are not flagged, nor is a condvar producers wait on
too (a bounded queue with one condvar for "not full" and "not empty"):
its waiters wait for different things, and only waking all of them is
sure to reach one the new item concerns.

## Why

All waiters wake up, contend for the mutex, and all but one find nothing
to do and go back to sleep. With many workers that is a burst of context
switches and lock contention for every item: CPU spent on the herd instead
of the work.

## Example

```rust
use std::sync::{Condvar, Mutex};

fn submit(queue: &Mutex<Vec<Job>>, ready: &Condvar, job: Job) {
    queue.lock().unwrap().push(job);
    ready.notify_all();
}
```

## Fix

Wake one waiter per item when the waiters are interchangeable
(`notify_one`, `Notify::notify_one`).

```rust
use std::sync::{Condvar, Mutex};

fn submit(queue: &Mutex<Vec<Job>>, ready: &Condvar, job: Job) {
    queue.lock().unwrap().push(job);
    ready.notify_one();
}
```
"#,
    examples: &EXAMPLES,
};

const ADDS: &[&str] = &[
    "push",
    "push_back",
    "push_front",
    "insert",
    "send",
    "enqueue",
    "try_send",
];

impl Rule for NotifyAllForOne {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for (e, c) in cx.calls_named(&["notify_all", "notify_waiters"]) {
            let ex = cx.expr(e);
            let broadcast = match c.name.as_str() {
                "notify_all" => common::condvar_notify(cx, e).is_some(),
                "notify_waiters" => {
                    c.args.is_empty()
                        && c.receiver
                            .and_then(|r| cx.sema.type_of(r))
                            .is_none_or(|t| t.ends_with("Notify"))
                }
                _ => false,
            };
            if !broadcast {
                continue;
            }
            if common::test_like(cx, cx.func_of(e)) {
                continue;
            }
            let Some(s) = cx.tree.enclosing_stmt(e) else {
                continue;
            };
            let Some(block) = common::block_of(cx, s) else {
                continue;
            };
            let i = block.iter().position(|&x| x == s).unwrap_or(0);
            let before: Vec<StmtId> = block[..i]
                .iter()
                .copied()
                .filter(|&x| {
                    !matches!(
                        cx.stmt(x).kind,
                        StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::Loop { .. }
                    )
                })
                .collect();
            if block[..i].len() != before.len() {
                continue; // items added in a loop: many items.
            }
            let exprs = exprs_in_block(cx.model, &before);
            let adds = exprs
                .iter()
                .filter(|&&x| {
                    cx.call(x).is_some_and(|c| {
                        ADDS.contains(&c.name.as_str())
                            && c.receiver.is_some()
                            // `tx.send(())` signals, it adds no item.
                            && !c
                                .positional(0)
                                .is_some_and(|a| matches!(cx.model.literal(a), Some(Lit::Null)))
                    })
                })
                .count();
            let state_change = exprs.iter().any(|&x| match &cx.expr(x).kind {
                ExprKind::Call(c) => {
                    matches!(
                        c.name.as_str(),
                        "clear"
                            | "close"
                            | "extend"
                            | "append"
                            | "drain"
                            | "store"
                            | "cancel"
                            | "take"
                            | "wake_all"
                    ) || c.name.contains("shutdown")
                }
                _ => false,
            }) || common::stmts_in(cx.model, &before).into_iter().any(|x| {
                // Any state written in place (`self.error = Some(e)`,
                // `*closed = true`) is news for every waiter.
                matches!(
                    &cx.stmt(x).kind,
                    StmtKind::Assign {
                        op: AssignOp::Plain,
                        ..
                    }
                )
            });
            if adds != 1 || state_change || producers_wait_too(cx, c) {
                continue;
            }
            out.push(cx.finding(
                &META,
                ex.span,
                format!(
                    "`{}` wakes every waiter for a single new item: all of them wake and contend for the lock, one takes the item and the rest go back to sleep, a burst of wasted wakeups per item",
                    c.name
                ),
                "wake one waiter per item with `notify_one()` (waiters must be interchangeable; otherwise use one condvar per condition)",
            ));
        }
    }
}

/// Producers wait on the condvar too: a function that waits on it (by
/// the name it is notified through) also adds items, as in a bounded
/// queue with one condvar for "not full" and "not empty". Its waiters then
/// wait for different things, and `notify_one` could wake a producer for
/// a new item, a lost wakeup; every waiter has to look.
fn producers_wait_too(cx: &FileCx, notify: &Call) -> bool {
    let Some(name) = notify
        .receiver
        .and_then(|r| cx.model.dotted(r))
        .map(|d| d.rsplit('.').next().unwrap_or(&d).to_string())
    else {
        return false;
    };
    cx.calls_named(&["wait", "wait_while", "wait_timeout", "wait_timeout_while"])
        .into_iter()
        .filter(|(_, c)| {
            c.receiver
                .and_then(|r| cx.model.dotted(r))
                .is_some_and(|d| d.rsplit('.').next() == Some(name.as_str()))
        })
        .map(|(e, _)| common::outermost(cx, cx.func_of(e)))
        .any(|f| {
            cx.body_calls(f).any(|x| {
                cx.call(x)
                    .is_some_and(|c| c.receiver.is_some() && ADDS.contains(&c.name.as_str()))
            })
        })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[
        r#"
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};

struct Queue {
    items: Mutex<VecDeque<Job>>,
    cv: Condvar,
    notify: tokio::sync::Notify,
}

impl Queue {
    fn push(&self, job: Job) {
        let mut q = self.items.lock().unwrap();
        q.push_back(job);
        self.cv.notify_all(); // expect
    }

    fn push_async(&self, job: Job) {
        self.items.lock().unwrap().push_back(job);
        self.notify.notify_waiters(); // expect
    }
}
"#,
        r#"
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};

pub struct Work {
    q: Mutex<VecDeque<u32>>,
    more: Condvar,
}

impl Work {
    pub fn add(&self, v: u32) {
        self.q.lock().unwrap().push_back(v);
        self.more.notify_all(); // expect
    }

    pub fn next(&self) -> u32 {
        let mut q = self.q.lock().unwrap();
        while q.is_empty() {
            q = self.more.wait(q).unwrap();
        }
        q.pop_front().unwrap()
    }

    pub fn next_or_none(&self) -> Option<u32> {
        let (mut q, _) = self
            .more
            .wait_timeout_while(self.q.lock().unwrap(), std::time::Duration::from_secs(1), |q| q.is_empty())
            .unwrap();
        q.pop_front()
    }
}
"#,
    ],
    pass: &[
        r#"
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};

pub struct Slots {
    state: Mutex<(VecDeque<u32>, usize)>,
    changed: Condvar,
}

impl Slots {
    pub fn put(&self, v: u32) {
        let mut st = self.state.lock().unwrap();
        loop {
            if st.0.len() < st.1 {
                st.0.push_back(v);
                self.changed.notify_all();
                return;
            }
            st = self.changed.wait(st).unwrap();
        }
    }

    pub fn take(&self) -> u32 {
        let mut st = self.state.lock().unwrap();
        loop {
            if let Some(v) = st.0.pop_front() {
                self.changed.notify_all();
                return v;
            }
            st = self.changed.wait(st).unwrap();
        }
    }
}
"#,
        r#"
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};

struct Queue {
    items: Mutex<VecDeque<Job>>,
    closed: Mutex<bool>,
    cv: Condvar,
}

impl Queue {
    fn push(&self, job: Job) {
        self.items.lock().unwrap().push_back(job);
        self.cv.notify_one();
    }

    fn push_many(&self, jobs: Vec<Job>) {
        let mut q = self.items.lock().unwrap();
        for j in jobs {
            q.push_back(j);
        }
        self.cv.notify_all();
    }

    fn close(&self) {
        *self.closed.lock().unwrap() = true;
        self.cv.notify_all();
    }
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(NotifyAllForOne);
}
