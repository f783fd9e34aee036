//! RS011: two locks taken in opposite orders on two paths.

use super::common::line_of;
use super::locks::{Nesting, describe, fn_label, nestings};
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::*;

pub struct LockOrderCycle;

pub static META: RuleMeta = RuleMeta {
    id: "RS011",
    name: "lock-order-cycle",
    category: Category::LockOrder,
    severity: Severity::Critical,
    languages: &[Language::Rust],
    summary: "Two `Mutex`/`RwLock`s acquired in opposite orders on two paths (statics, `self` fields, or `Arc` clones of one local lock), directly or through calls of the same file.",
    docs: r#"
One path takes lock `A` and, while holding its guard, takes lock `B`;
another path takes `B` and then `A`. Locks are told apart by what they are:
a `static`, a field of `self` in the methods of one type (`Db::index`), a
field of a value of a known type, or one local lock and its `Arc` clones
moved into threads. Acquisitions inside helper functions and methods of the
same file count at the call. Both paths are in the finding.

## Why

Run the two paths on two threads (two requests, a worker and a timer) and
each can end up holding its first lock while waiting for the other's: a
deadlock that no timeout breaks, reached only under the right interleaving,
so it passes tests and hangs in production.

## Example

```rust
use std::sync::Mutex;

static ACCOUNTS: Mutex<Vec<u64>> = Mutex::new(Vec::new());
static LEDGER: Mutex<Vec<u64>> = Mutex::new(Vec::new());

fn credit(amount: u64) {
    let mut accounts = ACCOUNTS.lock().unwrap();
    let mut ledger = LEDGER.lock().unwrap();
    accounts.push(amount);
    ledger.push(amount);
}

fn audit() -> usize {
    let ledger = LEDGER.lock().unwrap();
    let accounts = ACCOUNTS.lock().unwrap();
    ledger.len() + accounts.len()
}
```

## Fix

Take the locks in one global order everywhere (document it), or avoid
holding two at once.

```rust
use std::sync::Mutex;

static ACCOUNTS: Mutex<Vec<u64>> = Mutex::new(Vec::new());
static LEDGER: Mutex<Vec<u64>> = Mutex::new(Vec::new());

// Lock order: ACCOUNTS before LEDGER.
fn credit(amount: u64) {
    let mut accounts = ACCOUNTS.lock().unwrap();
    let mut ledger = LEDGER.lock().unwrap();
    accounts.push(amount);
    ledger.push(amount);
}

fn audit() -> usize {
    let accounts = ACCOUNTS.lock().unwrap();
    let ledger = LEDGER.lock().unwrap();
    ledger.len() + accounts.len()
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for LockOrderCycle {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if cx.model.is_generated {
            return;
        }
        let all = nestings(cx);
        let edges: Vec<&Nesting> = all
            .iter()
            .filter(|n| n.outer.id.is_some() && n.inner.id != n.outer.id)
            .collect();
        let mut reported: HashSet<(String, String)> = HashSet::new();
        let mut spans: HashSet<Span> = HashSet::new();
        for (i, e1) in edges.iter().enumerate() {
            let (a, b) = (e1.outer.id.clone().unwrap(), e1.inner.id.clone().unwrap());
            let key = if a < b {
                (a.clone(), b.clone())
            } else {
                (b.clone(), a.clone())
            };
            if reported.contains(&key) {
                continue;
            }
            let Some(e2) = edges
                .iter()
                .skip(i + 1)
                .chain(edges.iter().take(i))
                .find(|e2| {
                    e2.outer.id.as_deref() == Some(b.as_str())
                        && e2.inner.id.as_deref() == Some(a.as_str())
                        && !gated(e1, e2, &a, &b)
                })
            else {
                continue;
            };
            reported.insert(key);
            for (x, y) in [(*e1, *e2), (*e2, *e1)] {
                if !spans.insert(x.at) {
                    continue;
                }
                out.push(finding(cx, x, y));
            }
        }
    }
}

/// Both paths hold a third lock already: that lock serializes them.
fn gated(e1: &Nesting, e2: &Nesting, a: &str, b: &str) -> bool {
    e1.held_ids
        .iter()
        .any(|h| h != a && h != b && e2.held_ids.iter().any(|g| g == h))
}

fn path_text(cx: &FileCx, n: &Nesting) -> String {
    let via = match n.via.last() {
        Some((_, callee)) => format!(
            " (through `{}`)",
            callee
                .rsplit("::")
                .take(2)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("::")
        ),
        None => String::new(),
    };
    format!(
        "{} {} (line {}) then {}{} (line {})",
        fn_label(cx, n.func),
        describe(&n.outer),
        line_of(cx, n.outer.span),
        describe(&n.inner),
        via,
        line_of(cx, n.at)
    )
}

fn finding(cx: &FileCx, this: &Nesting, other: &Nesting) -> Finding {
    let mut f = cx.finding(
        &META,
        this.at,
        format!(
            "lock-order inversion: {}, while {}: two threads running both paths can each hold their first lock and wait forever for the other's",
            path_text(cx, this),
            path_text(cx, other)
        ),
        format!(
            "take `{}` and `{}` in one fixed order on every path (document the order), or restructure so that no path holds both at once",
            this.outer.text, this.inner.text
        ),
    );
    f.related.push(Related {
        file: None,
        span: other.outer.span,
        message: format!("the other path {} first", describe(&other.outer)),
    });
    f.related.push(Related {
        file: None,
        span: other.at,
        message: format!("then {} while holding it", describe(&other.inner)),
    });
    f
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[
        r#"
use std::sync::Mutex;

static A: Mutex<u32> = Mutex::new(0);
static B: Mutex<u32> = Mutex::new(0);

fn one() {
    let _a = A.lock().unwrap();
    let _b = B.lock().unwrap(); // expect
}

fn two() {
    let _b = B.lock().unwrap();
    let _a = A.lock().unwrap(); // expect
}
"#,
        r#"
use std::sync::Mutex;

struct Bank {
    accounts: Mutex<Vec<u64>>,
    log: Mutex<Vec<String>>,
}

impl Bank {
    fn deposit(&self, v: u64) {
        let mut acc = self.accounts.lock().unwrap();
        acc.push(v);
        self.record("deposit"); // expect
    }

    fn record(&self, what: &str) {
        self.log.lock().unwrap().push(what.to_string());
    }

    fn report(&self) -> usize {
        let log = self.log.lock().unwrap();
        let n = self.accounts.lock().unwrap().len(); // expect
        n + log.len()
    }
}
"#,
        r#"
use std::sync::{Arc, Mutex};
use std::thread;

fn main() {
    let a = Arc::new(Mutex::new(0));
    let b = Arc::new(Mutex::new(0));
    let (a1, b1) = (Arc::clone(&a), Arc::clone(&b));
    let t = thread::spawn(move || {
        let _x = a1.lock().unwrap();
        let _y = b1.lock().unwrap(); // expect
    });
    let _y = b.lock().unwrap();
    let _x = a.lock().unwrap(); // expect
    t.join().unwrap();
}
"#,
    ],
    pass: &[
        r#"
use std::sync::Mutex;

static A: Mutex<u32> = Mutex::new(0);
static B: Mutex<u32> = Mutex::new(0);

fn one() {
    let _a = A.lock().unwrap();
    let _b = B.lock().unwrap();
}

fn two() {
    let _a = A.lock().unwrap();
    let _b = B.lock().unwrap();
}

fn three() {
    let b = { *B.lock().unwrap() };
    let _a = A.lock().unwrap();
}

"#,
        r#"
use std::sync::Mutex;

static A: Mutex<u32> = Mutex::new(0);
static B: Mutex<u32> = Mutex::new(0);
static GATE: Mutex<()> = Mutex::new(());

fn four() {
    let _g = GATE.lock().unwrap();
    let _b = B.lock().unwrap();
    let _a = A.lock().unwrap();
}

fn five() {
    let _g = GATE.lock().unwrap();
    let _a = A.lock().unwrap();
    let _b = B.lock().unwrap();
}
"#,
        r#"
use std::sync::Mutex;

struct Account {
    balance: Mutex<u64>,
}

fn transfer(from: &Account, to: &Account, v: u64) {
    let mut a = from.balance.lock().unwrap();
    let mut b = to.balance.lock().unwrap();
    *a -= v;
    *b += v;
}

struct Pair {
    x: Mutex<u32>,
    y: Mutex<u32>,
}

impl Pair {
    fn first(&self) {
        let x = self.x.lock().unwrap();
        drop(x);
        let _y = self.y.lock().unwrap();
    }

    fn second(&self) {
        let _y = self.y.lock().unwrap();
        let x = *self.x.lock().unwrap();
    }
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(LockOrderCycle);
}
