//! RS015: hand-rolled double-checked locking on an atomic or `static mut`.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::walk::exprs_under;
use unsnarl_model::*;

pub struct DoubleCheckedInit;

pub static META: RuleMeta = RuleMeta {
    id: "RS015",
    name: "double-checked-init",
    category: Category::MemoryOrdering,
    severity: Severity::High,
    languages: &[Language::Rust],
    summary: "Hand-rolled double-checked locking: an atomic (`AtomicBool`, `AtomicPtr`) or `static mut` checked, a lock taken, and the same value checked again before initializing, instead of `OnceLock`/`LazyLock`.",
    docs: r#"
An `if` that checks an atomic flag or pointer (or a `static mut`), then
takes a lock and checks the same value again before initializing it: the
double-checked locking idiom written by hand.

## Why

It is easy to get subtly wrong: with `Relaxed` (or a plain `static mut`)
the first check can see the "initialized" flag or pointer before the value
it guards is visible, so a thread skips the lock and reads a half-built
object; a `static mut` read is a data race outright. The standard library
already has the correct, tested version.

## Example

```rust
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

static INIT: AtomicBool = AtomicBool::new(false);
static LOCK: Mutex<()> = Mutex::new(());
static mut TABLE: Vec<u32> = Vec::new();

fn table() -> &'static Vec<u32> {
    if !INIT.load(Ordering::Relaxed) {
        let _g = LOCK.lock().unwrap();
        if !INIT.load(Ordering::Relaxed) {
            unsafe { TABLE = build() };
            INIT.store(true, Ordering::Relaxed);
        }
    }
    unsafe { &*std::ptr::addr_of!(TABLE) }
}
```

## Fix

Use `OnceLock` (or `LazyLock` / `once_cell::sync::Lazy`).

```rust
use std::sync::OnceLock;

static TABLE: OnceLock<Vec<u32>> = OnceLock::new();

fn table() -> &'static Vec<u32> {
    TABLE.get_or_init(build)
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for DoubleCheckedInit {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        let muts = common::static_muts(cx);
        let mut seen = HashSet::new();
        for (i, st) in cx.model.stmts.iter().enumerate() {
            let s = StmtId(i as u32);
            let StmtKind::If { cond, then, .. } = &st.kind else {
                continue;
            };
            let first = checked(cx, s, *cond, &muts);
            if first.is_empty() {
                continue;
            }
            // A lock taken in the then-branch, then the same check again.
            let inner = common::stmts_in(cx.model, then);
            let Some(lock_at) = inner.iter().position(|&x| takes_lock(cx, x)) else {
                continue;
            };
            let again = inner[lock_at..].iter().any(|&x| match &cx.stmt(x).kind {
                StmtKind::If {
                    cond: c2, then: t2, ..
                } => checked(cx, x, *c2, &muts).iter().any(|(k, _)| {
                    first.iter().any(|(k1, _)| k1 == k) && initializes(cx, t2, k, &muts)
                }),
                _ => false,
            });
            if !again {
                continue;
            }
            let (key, at) = first[0].clone();
            if !seen.insert(at) {
                continue;
            }
            out.push(cx.finding(
                &META,
                cx.expr(at).span,
                format!(
                    "hand-rolled double-checked locking on `{key}`: the unlocked first check can see `{key}` say \"initialized\" before the value it guards is visible to this thread (and a `static mut` read is a data race), so a caller may use a half-built value"
                ),
                "use `std::sync::OnceLock` (`get_or_init`) or `LazyLock` / `once_cell::sync::Lazy` instead of a flag plus a lock",
            ));
        }
    }
}

/// What a condition checks: atomics loaded in it (directly, or through a
/// local bound from a load just before), and `static mut`s it reads.
fn checked(cx: &FileCx, s: StmtId, cond: ExprId, muts: &HashSet<String>) -> Vec<(String, ExprId)> {
    let mut out = Vec::new();
    for e in exprs_under(cx.model, cond) {
        if let Some(op) = common::atomic_op(cx, e)
            && op.method == "load"
        {
            out.push((op.key, e));
            continue;
        }
        match &cx.expr(e).kind {
            ExprKind::Name {
                resolved: Some(r), ..
            } if muts.contains(r.as_str()) => out.push((r.to_string(), e)),
            ExprKind::Name { id, resolved: None } => {
                // `let p = PTR.load(..); if p.is_null() {`
                if let Some(block) = common::block_of(cx, s) {
                    let i = block.iter().position(|&x| x == s).unwrap_or(0);
                    for &prev in block[..i].iter().rev().take(3) {
                        if let StmtKind::Assign {
                            targets,
                            value: Some(v),
                            ..
                        } = &cx.stmt(prev).kind
                            && targets
                                .first()
                                .and_then(|&t| common::binding_name(cx.model, t))
                                == Some(id.as_str())
                            && let Some(op) = common::atomic_op(cx, common::unwrap_value(cx, *v))
                            && op.method == "load"
                        {
                            out.push((op.key, op.call));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The block sets the checked value: a literal or pointer stored to the
/// atomic (`INIT.store(true, ..)`, `PTR.store(Box::into_raw(..), ..)`), or
/// an assignment to the `static mut`.
fn initializes(cx: &FileCx, b: &Block, key: &str, muts: &HashSet<String>) -> bool {
    let exprs = unsnarl_model::walk::exprs_in_block(cx.model, b);
    exprs.iter().any(|&e| {
        if let Some(op) = common::atomic_op(cx, e)
            && op.key == key
            && matches!(op.method, "store" | "swap")
        {
            let v = cx.call(e).and_then(|c| c.positional(0));
            return v.is_some_and(|v| {
                matches!(cx.model.literal(v), Some(Lit::Bool(_) | Lit::Int(_)))
                    || cx
                        .sema
                        .type_of(op.recv)
                        .is_some_and(|t| t.ends_with("AtomicPtr"))
                    || cx.call(v).is_some_and(|c| c.name == "into_raw")
            });
        }
        false
    }) || common::stmts_in(cx.model, b).into_iter().any(|s| {
        matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, op: AssignOp::Plain, .. }
            if targets.iter().any(|&t| common::static_mut_root(cx, t, muts).as_deref() == Some(key)))
    })
}

fn takes_lock(cx: &FileCx, s: StmtId) -> bool {
    common::own_exprs(cx.model, s).into_iter().any(|e| {
        cx.call(e).is_some_and(|c| {
            c.receiver.is_some() && c.args.is_empty() && matches!(c.name.as_str(), "lock" | "write")
        })
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[
        r#"
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;

static INSTANCE: AtomicPtr<Registry> = AtomicPtr::new(ptr::null_mut());
static INIT_LOCK: Mutex<()> = Mutex::new(());

fn registry() -> &'static Registry {
    let p = INSTANCE.load(Ordering::Acquire); // expect
    if p.is_null() {
        let _g = INIT_LOCK.lock().unwrap();
        let p = INSTANCE.load(Ordering::Relaxed);
        if p.is_null() {
            let fresh = Box::into_raw(Box::new(Registry::new()));
            INSTANCE.store(fresh, Ordering::Release);
        }
    }
    unsafe { &*INSTANCE.load(Ordering::Acquire) }
}
"#,
        r#"
use std::sync::Mutex;

static LOCK: Mutex<()> = Mutex::new(());
static mut READY: bool = false;

fn init() {
    unsafe {
        if !READY { // expect
            let _g = LOCK.lock().unwrap();
            if !READY {
                setup();
                READY = true;
            }
        }
    }
}
"#,
    ],
    pass: &[r#"
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

static TABLE: OnceLock<Vec<u32>> = OnceLock::new();
static DIRTY: AtomicBool = AtomicBool::new(false);
static STATE: Mutex<Vec<u32>> = Mutex::new(Vec::new());

fn table() -> &'static Vec<u32> {
    TABLE.get_or_init(build)
}

fn flush() {
    if DIRTY.load(Ordering::Acquire) {
        let mut g = STATE.lock().unwrap();
        g.clear();
        DIRTY.store(false, Ordering::Release);
    }
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(DoubleCheckedInit);
}
