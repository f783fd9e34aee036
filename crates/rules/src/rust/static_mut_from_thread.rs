//! RS016: a `static mut` written from a spawned thread or task.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::*;

pub struct StaticMutFromThread;

pub static META: RuleMeta = RuleMeta {
    id: "RS016",
    name: "static-mut-from-thread",
    category: Category::MemoryOrdering,
    severity: Severity::High,
    languages: &[Language::Rust],
    summary: "A `static mut` assigned or mutated inside a closure run by `thread::spawn`, `tokio::spawn`, a scoped or rayon spawn.",
    docs: r#"
Inside a closure or async block handed to a spawn (`std::thread::spawn`,
`thread::scope(|s| s.spawn(..))`, `tokio::spawn`, `spawn_blocking`,
`rayon::spawn`...): an assignment to a `static mut`, a compound assignment
(`COUNTER += 1`), or a mutating method call on it (`push`, `insert`...).

## Why

A `static mut` has no synchronization at all. Written from a spawned thread
while anything else reads or writes it, it is a data race: undefined
behaviour, lost updates, torn values, and a compiler free to cache the
value in a register so other threads never see the write.

## Example

```rust
static mut HITS: u64 = 0;

fn count_in_background() {
    std::thread::spawn(|| unsafe {
        HITS += 1;
    });
}
```

## Fix

Use an atomic (or a `Mutex`/`OnceLock` for non-integer data).

```rust
use std::sync::atomic::{AtomicU64, Ordering};

static HITS: AtomicU64 = AtomicU64::new(0);

fn count_in_background() {
    std::thread::spawn(|| {
        HITS.fetch_add(1, Ordering::Relaxed);
    });
}
```
"#,
    examples: &EXAMPLES,
};

const MUTATING: &[&str] = &[
    "push",
    "push_str",
    "push_back",
    "push_front",
    "insert",
    "extend",
    "clear",
    "remove",
    "pop",
    "truncate",
    "retain",
    "append",
    "sort",
    "sort_by",
    "dedup",
    "drain",
    "take",
    "replace",
    "get_or_insert",
];

impl Rule for StaticMutFromThread {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        let muts = common::static_muts(cx);
        if muts.is_empty() {
            return;
        }
        let mut seen = HashSet::new();
        for (i, ex) in cx.model.exprs.iter().enumerate() {
            let e = ExprId(i as u32);
            let ExprKind::Call(c) = &ex.kind else {
                continue;
            };
            if cx.effect(c, Effect::Spawn).is_none()
                && cx.effect(c, Effect::ScopedSpawn).is_none()
                && !matches!(
                    c.target.as_deref(),
                    Some("rayon::spawn" | "rayon::spawn_fifo")
                )
            {
                continue;
            }
            if common::test_like(cx, cx.func_of(e)) {
                continue;
            }
            let Some(body) = common::spawned_fn(cx, e) else {
                continue;
            };
            for g in common::fns_within(cx, body) {
                if synchronized_closure(cx, g, body) {
                    continue;
                }
                for s in cx.body_stmts(g).iter().copied() {
                    if let StmtKind::Assign { targets, op, .. } = &cx.stmt(s).kind
                        && !matches!(op, AssignOp::Declare { .. })
                    {
                        for &t in targets {
                            if let Some(name) = common::static_mut_root(cx, t, &muts)
                                && seen.insert(t)
                            {
                                out.push(report(cx, t, &name, c));
                            }
                        }
                    }
                }
                for &x in cx.body_exprs(g) {
                    let target = match &cx.expr(x).kind {
                        ExprKind::AssignExpr { target, .. } => Some(*target),
                        ExprKind::Call(m) if MUTATING.contains(&m.name.as_str()) => m.receiver,
                        _ => None,
                    };
                    if let Some(t) = target
                        && let Some(name) = common::static_mut_root(cx, t, &muts)
                        && seen.insert(t)
                    {
                        out.push(report(cx, t, &name, c));
                    }
                }
            }
        }
    }
}

/// A closure run under synchronization: the initializer of `call_once`,
/// `get_or_init`... (the `Once` orders it with every later reader).
fn synchronized_closure(cx: &FileCx, g: FuncId, spawned: FuncId) -> bool {
    let mut cur = g;
    while cur != spawned {
        if let Some(site) = common::closure_call_site(cx, cur)
            && cx.call(site).is_some_and(|c| {
                matches!(
                    c.name.as_str(),
                    "call_once"
                        | "call_once_force"
                        | "get_or_init"
                        | "get_or_try_init"
                        | "init_once"
                )
            })
        {
            return true;
        }
        match cx.func(cur).parent {
            Some(p) => cur = p,
            None => return false,
        }
    }
    false
}

fn report(cx: &FileCx, at: ExprId, name: &str, spawn: &Call) -> Finding {
    let short = name.rsplit("::").next().unwrap_or(name);
    cx.finding(
        &META,
        cx.expr(at).span,
        format!(
            "the `static mut` `{short}` is written from code started by `{}`: with no synchronization this is a data race (undefined behaviour) — other threads may see stale or torn values, and updates get lost",
            cx.callee_display(spawn)
        ),
        format!("make `{short}` an atomic (`AtomicU64`, `AtomicBool`...) or put it behind a `Mutex`/`OnceLock`"),
    )
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[r#"
use std::thread;

static mut TOTAL: u64 = 0;
static mut SEEN: Vec<u64> = Vec::new();

fn run(items: Vec<u64>) {
    let h = thread::spawn(move || {
        for v in items {
            unsafe {
                TOTAL += v; // expect
                SEEN.push(v); // expect
            }
        }
    });
    h.join().unwrap();
}

async fn reset() {
    tokio::spawn(async {
        unsafe { TOTAL = 0 }; // expect
    })
    .await
    .unwrap();
}
"#],
    pass: &[r#"
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;

static TOTAL: AtomicU64 = AtomicU64::new(0);
static mut LIMIT: u64 = 10;

fn main() {
    unsafe { LIMIT = 20 };
    let h = thread::spawn(|| {
        TOTAL.fetch_add(1, Ordering::Relaxed);
        let mut local = 0;
        local += 1;
    });
    h.join().unwrap();
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(StaticMutFromThread);
}
