//! RS019: `notify_one` on a condvar whose waiters wait for different
//! conditions.

use super::common;
use super::locks::identity;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::{BTreeSet, HashMap};
use unsnarl_model::*;

pub struct CondvarNotifyOneMixed;

pub static META: RuleMeta = RuleMeta {
    id: "RS019",
    name: "condvar-notify-one-mixed",
    category: Category::CondvarMisuse,
    severity: Severity::High,
    languages: &[Language::Rust],
    summary: "`notify_one` on a `Condvar` that threads wait on for different conditions (heterogeneous waiters).",
    docs: r#"
One `Condvar` is waited on with two or more different predicates (the
conditions of the `while` loops around its `wait` calls, or the closures of
`wait_while`), and some code wakes it with `notify_one`.

## Why

`notify_one` wakes an arbitrary waiter. If it picks one waiting for a
different condition (a producer waiting for room when an item was just
added), that thread re-checks, goes back to sleep, and the notification is
gone: the thread that could have proceeded keeps sleeping. With a bounded
buffer shared by producers and consumers this stalls the pipeline.

## Example

```rust
use std::sync::{Condvar, Mutex};

struct Buffer {
    items: Mutex<Vec<u32>>,
    changed: Condvar,
}

impl Buffer {
    fn put(&self, v: u32) {
        let mut g = self.items.lock().unwrap();
        while g.len() >= 8 {
            g = self.changed.wait(g).unwrap();
        }
        g.push(v);
        self.changed.notify_one();
    }

    fn take(&self) -> u32 {
        let mut g = self.items.lock().unwrap();
        while g.is_empty() {
            g = self.changed.wait(g).unwrap();
        }
        let v = g.remove(0);
        self.changed.notify_one();
        v
    }
}
```

## Fix

Use one condvar per condition (`not_full`, `not_empty`), or `notify_all`.

```rust
use std::sync::{Condvar, Mutex};

struct Buffer {
    items: Mutex<Vec<u32>>,
    not_full: Condvar,
    not_empty: Condvar,
}

impl Buffer {
    fn put(&self, v: u32) {
        let mut g = self.items.lock().unwrap();
        while g.len() >= 8 {
            g = self.not_full.wait(g).unwrap();
        }
        g.push(v);
        self.not_empty.notify_one();
    }

    fn take(&self) -> u32 {
        let mut g = self.items.lock().unwrap();
        while g.is_empty() {
            g = self.not_empty.wait(g).unwrap();
        }
        let v = g.remove(0);
        self.not_full.notify_one();
        v
    }
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for CondvarNotifyOneMixed {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        let mut preds: HashMap<String, BTreeSet<String>> = HashMap::new();
        let mut notifies: Vec<(String, ExprId)> = Vec::new();
        for i in 0..cx.model.exprs.len() {
            let e = ExprId(i as u32);
            let c = match cx.call(e) {
                Some(c) => c,
                None => continue,
            };
            let Some(recv) = c.receiver else { continue };
            if let Some(m) = common::condvar_wait(cx, e) {
                let Some(id) = identity(cx, recv).0 else {
                    continue;
                };
                let pred = if m.contains("while") {
                    // The closure's body: `|q| q.is_empty()` → `q.is_empty()`.
                    c.positional(1).map(|p| match common::closure_fn(cx, p) {
                        Some(f) => match cx.func(f).body.as_slice() {
                            [s] => match &cx.stmt(*s).kind {
                                StmtKind::Return(Some(e)) => common::text(cx, *e),
                                _ => common::text(cx, p),
                            },
                            _ => common::text(cx, p),
                        },
                        None => common::text(cx, p),
                    })
                } else {
                    enclosing_while_cond(cx, e)
                };
                if let Some(p) = pred {
                    preds.entry(id).or_default().insert(normalize(&p));
                }
            } else if common::condvar_notify(cx, e) == Some("notify_one")
                && let Some(id) = identity(cx, recv).0
            {
                notifies.push((id, e));
            }
        }
        for (id, e) in notifies {
            if common::test_like(cx, cx.func_of(e)) {
                continue;
            }
            let Some(ps) = preds.get(&id) else { continue };
            if ps.len() < 2 {
                continue;
            }
            let list: Vec<String> = ps.iter().take(3).map(|p| format!("`{p}`")).collect();
            out.push(cx.finding(
                &META,
                cx.expr(e).span,
                format!(
                    "`notify_one` wakes one arbitrary waiter of a condvar that threads wait on for different conditions ({}): if it wakes one whose condition still does not hold, that thread sleeps again and the wakeup is lost for the thread that could proceed",
                    list.join(", ")
                ),
                "give each condition its own `Condvar` (e.g. `not_empty` / `not_full`) and notify the one whose condition changed, or use `notify_all`",
            ));
        }
    }
}

fn normalize(p: &str) -> String {
    p.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The condition of the innermost `while` around `e` in its function.
fn enclosing_while_cond(cx: &FileCx, e: ExprId) -> Option<String> {
    cx.enclosing_stmts(e)
        .into_iter()
        .find_map(|s| match &cx.stmt(s).kind {
            StmtKind::While { cond, .. } => Some(common::text(cx, *cond)),
            _ => None,
        })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[r#"
use std::sync::{Condvar, Mutex};

struct Pool {
    free: Mutex<Vec<Conn>>,
    cv: Condvar,
}

impl Pool {
    fn get(&self) -> Conn {
        let mut g = self.free.lock().unwrap();
        while g.is_empty() {
            g = self.cv.wait(g).unwrap();
        }
        g.pop().unwrap()
    }

    fn wait_idle(&self, n: usize) {
        let g = self.free.lock().unwrap();
        let _g = self.cv.wait_while(g, |f| f.len() < n).unwrap();
    }

    fn put(&self, c: Conn) {
        self.free.lock().unwrap().push(c);
        self.cv.notify_one(); // expect
    }
}
"#],
    pass: &[r#"
use std::sync::{Condvar, Mutex};

struct Pool {
    free: Mutex<Vec<Conn>>,
    cv: Condvar,
    idle: Condvar,
}

impl Pool {
    fn get(&self) -> Conn {
        let mut g = self.free.lock().unwrap();
        while g.is_empty() {
            g = self.cv.wait(g).unwrap();
        }
        g.pop().unwrap()
    }

    fn get_other(&self) -> Conn {
        let mut g = self.free.lock().unwrap();
        while g.is_empty() {
            g = self.cv.wait(g).unwrap();
        }
        g.remove(0)
    }

    fn wait_idle(&self, n: usize) {
        let g = self.free.lock().unwrap();
        let _g = self.idle.wait_while(g, |f| f.len() < n).unwrap();
    }

    fn put(&self, c: Conn) {
        self.free.lock().unwrap().push(c);
        self.cv.notify_one();
        self.idle.notify_all();
    }
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(CondvarNotifyOneMixed);
}
