//! RS017: an atomic loaded, then stored with a value computed from (or
//! decided by) the load, instead of one read-modify-write.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::walk::exprs_under;
use unsnarl_model::*;

pub struct AtomicLoadStoreRace;

pub static META: RuleMeta = RuleMeta {
    id: "RS017",
    name: "atomic-load-store-race",
    category: Category::Atomicity,
    severity: Severity::High,
    languages: &[Language::Rust],
    summary: "`x.store(f(v))` after `let v = x.load(..)` (or inside `if x.load(..) ..`) on the same atomic, instead of `fetch_*`, `swap` or a `compare_exchange` loop.",
    docs: r#"
An atomic is read with `load`, and later in the same function the same
atomic is written with `store` of a value computed from what was read
(`x.store(v + 1, ..)`), or a `store` decided by a check of the load
(`if !started.load(..) { started.store(true, ..) }`). Functions that use
`compare_exchange`/`fetch_update` on it, hold a lock, or take `&mut self`
are left alone.

## Why

Each operation is atomic, the pair is not: two threads can both load the
same value and both store their result, so one increment is lost, or both
see "not started" and both start. The race window is tiny, so it shows up
as rare double-runs and counters that drift under load.

## Example

```rust
use std::sync::atomic::{AtomicU64, Ordering};

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

fn next_id() -> u64 {
    let id = NEXT_ID.load(Ordering::SeqCst);
    NEXT_ID.store(id + 1, Ordering::SeqCst);
    id
}
```

## Fix

Use one read-modify-write: `fetch_add`/`fetch_or`/`swap`, or a
`compare_exchange` loop (`fetch_update`) for anything more complex.

```rust
use std::sync::atomic::{AtomicU64, Ordering};

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::SeqCst)
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for AtomicLoadStoreRace {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        let mut seen = HashSet::new();
        for f in cx.model.function_ids() {
            if common::test_like(cx, f) || takes_mut_self(cx, f) {
                continue;
            }
            let exprs = cx.body_exprs(f);
            // Locks taken by the enclosing function before a closure runs
            // (`tail.lock()` then `list.for_each(|w| ..)`) count too.
            let outer = common::outermost(cx, f);
            let outer_exprs = if outer == f {
                &[]
            } else {
                cx.body_exprs(outer)
            };
            let ops: Vec<_> = exprs
                .iter()
                .filter_map(|&e| common::atomic_op(cx, e))
                .collect();
            if ops.is_empty() {
                continue;
            }
            let locks = exprs.iter().chain(outer_exprs.iter()).any(|&e| {
                cx.call(e).is_some_and(|c| {
                    c.receiver.is_some()
                        && c.args.is_empty()
                        && matches!(
                            c.name.as_str(),
                            "lock" | "write" | "borrow_mut" | "try_lock"
                        )
                })
            });
            // Lock-free code that orders its own accesses (fences, CAS on
            // some other atomic) is written against single-writer
            // invariants this rule cannot see; `unsafe fn`s document their
            // preconditions; a guard parameter means the caller holds a lock.
            let lock_free = ops.iter().any(|o| {
                o.method.starts_with("compare_exchange")
                    || o.method == "fetch_update"
                    || o.method == "compare_and_swap"
            }) || exprs.iter().any(|&e| {
                cx.call(e)
                    .is_some_and(|c| matches!(c.name.as_str(), "fence" | "compiler_fence"))
            });
            let func = cx.func(common::outermost(cx, f));
            // The implementation of a lock or guard itself.
            if func.class.as_deref().is_some_and(|c| {
                let last = c.rsplit("::").next().unwrap_or(c);
                last.contains("Guard") || last.contains("Lock") || last.contains("Mutex")
            }) {
                continue;
            }
            let head = cx.source(func.span);
            let head = head.split('{').next().unwrap_or("");
            let guarded = head.contains("unsafe fn")
                || func
                    .params
                    .iter()
                    .any(|p| p.ty.as_ref().is_some_and(|t| t.text.contains("Guard")));
            if locks || lock_free || guarded {
                continue;
            }
            for st in &ops {
                if st.method != "store" || !seen_shared(cx, f, st.recv) {
                    continue;
                }
                if ops.iter().any(|o| {
                    o.key == st.key
                        && (o.method.starts_with("compare_exchange")
                            || o.method == "fetch_update"
                            || o.method == "compare_and_swap")
                }) {
                    continue;
                }
                let value = cx.call(st.call).and_then(|c| c.positional(0));
                let from_value = value.is_some_and(|v| {
                    exprs_under(cx.model, v).into_iter().any(|x| {
                        common::atomic_op(cx, x)
                            .is_some_and(|o| o.key == st.key && o.method == "load")
                            || cx
                                .model
                                .name_of(x)
                                .is_some_and(|n| loaded_into(cx, f, n, &st.key, st.call))
                    })
                });
                // A flag stored after a check of it, with something done
                // once in between (`if !started { started = true; spawn() }`).
                let literal = value.is_some_and(|v| {
                    matches!(cx.model.literal(v), Some(Lit::Bool(_) | Lit::Int(_)))
                });
                let decided = !from_value
                    && literal
                    && guarded_by_load(cx, st.call, &st.key)
                    && acts_in_branch(cx, st.call);
                if !(from_value || decided) || !seen.insert(st.call) {
                    continue;
                }
                let what = if from_value {
                    "a value computed from an earlier `load`"
                } else {
                    "a value decided by an earlier `load` of it"
                };
                out.push(cx.finding(
                    &META,
                    cx.expr(st.call).span,
                    format!(
                        "`{}` is stored with {what}: another thread can load the same old value in between, so one of the two updates is lost (or both threads act as if they were first)",
                        st.key
                    ),
                    format!(
                        "make it one atomic read-modify-write: `{k}.fetch_add(..)`/`fetch_sub`/`fetch_or`, `{k}.swap(..)` (use its return value to decide), or `{k}.compare_exchange(..)` / `fetch_update` in a loop",
                        k = st.key
                    ),
                ));
            }
        }
    }
}

/// The branch holding the store also calls something else (an action that
/// is meant to run once), logging aside.
fn acts_in_branch(cx: &FileCx, store: ExprId) -> bool {
    let Some(s) = cx.tree.enclosing_stmt(store) else {
        return false;
    };
    let Some(block) = common::block_of(cx, s) else {
        return false;
    };
    let exprs = unsnarl_model::walk::exprs_in_block(cx.model, block);
    // Another atomic written in the branch: a lazily computed value being
    // cached (`HASH.store(h); HASHED.store(true)`), not a once-only action.
    if exprs.iter().any(|&e| {
        e != store
            && common::atomic_op(cx, e).is_some_and(|o| o.method == "store" || o.method == "swap")
    }) {
        return false;
    }
    exprs.into_iter().any(|e| {
        e != store
            && cx.call(e).is_some_and(|c| {
                !c.is_macro
                    && common::atomic_op(cx, e).is_none()
                    && !matches!(c.name.as_str(), "clone" | "unwrap" | "into" | "get")
            })
    })
}

/// `name` was bound from `key.load(..)` in `f` before `before`, and not
/// reassigned in between.
fn loaded_into(cx: &FileCx, f: FuncId, name: &str, key: &str, before: ExprId) -> bool {
    let end = cx.expr(before).span.start;
    let stmts = cx.body_stmts(f);
    let reassigned = |after: u32| {
        stmts.iter().any(|&s| {
            let st = cx.stmt(s);
            st.span.start >= after
                && st.span.end <= end
                && matches!(&st.kind, StmtKind::Assign { targets, op, .. }
                    if !matches!(op, AssignOp::Declare { .. })
                        && targets.iter().any(|&t| cx.model.name_of(t) == Some(name)))
        })
    };
    stmts.iter().any(|&s| {
        let st = cx.stmt(s);
        if st.span.end > end {
            return false;
        }
        let StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } = &st.kind
        else {
            return false;
        };
        targets
            .first()
            .and_then(|&t| common::binding_name(cx.model, t))
            == Some(name)
            && common::atomic_op(cx, common::unwrap_value(cx, *v))
                .is_some_and(|o| o.key == key && o.method == "load")
            && !reassigned(st.span.end)
    })
}

/// The store sits in an `if`/`match` whose condition loads the same atomic.
fn guarded_by_load(cx: &FileCx, store: ExprId, key: &str) -> bool {
    cx.enclosing_stmts(store).into_iter().skip(1).any(|s| {
        let cond = match &cx.stmt(s).kind {
            StmtKind::If { cond, .. } => *cond,
            StmtKind::Switch {
                subject: Some(sub), ..
            } => *sub,
            _ => return false,
        };
        exprs_under(cx.model, cond)
            .into_iter()
            .any(|x| common::atomic_op(cx, x).is_some_and(|o| o.key == key && o.method == "load"))
    })
}

/// The atomic may be shared: not a plain local created in this function.
fn seen_shared(cx: &FileCx, f: FuncId, recv: ExprId) -> bool {
    let Some(name) = cx.model.name_of(recv) else {
        return true;
    };
    if matches!(
        &cx.expr(cx.model.strip(recv)).kind,
        ExprKind::Name {
            resolved: Some(_),
            ..
        }
    ) {
        return true;
    }
    // A local `let x = AtomicU64::new(..)` never handed to another closure.
    let local = cx.body_stmts(f).iter().copied().any(|s| {
        matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(v), .. }
            if targets.first().and_then(|&t| common::binding_name(cx.model, t)) == Some(name)
                && cx.call(*v).and_then(|c| c.target.as_deref()).is_some_and(|t| t.contains("atomic::Atomic")))
    });
    !local
}

/// A method taking `&mut self`: the atomics of `self` are not shared there.
fn takes_mut_self(cx: &FileCx, f: FuncId) -> bool {
    let func = cx.func(f);
    if func.receiver.is_none() {
        return false;
    }
    let head = cx.source(func.span);
    let head = head.split('{').next().unwrap_or("");
    head.contains("&mut self")
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[r#"
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

struct Stats {
    hits: AtomicUsize,
    started: AtomicBool,
}

impl Stats {
    fn hit(&self) {
        let n = self.hits.load(Ordering::Relaxed);
        self.hits.store(n + 1, Ordering::Relaxed); // expect
    }

    fn start(&self) {
        if !self.started.load(Ordering::Acquire) {
            self.started.store(true, Ordering::Release); // expect
            spawn_worker();
        }
    }
}
"#],
    pass: &[
        r#"
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

struct Stats {
    hits: AtomicUsize,
    started: AtomicBool,
    lock: Mutex<()>,
}

impl Stats {
    fn hit(&self) {
        self.hits.fetch_add(1, Ordering::Relaxed);
    }

    fn start(&self) {
        if self.started.swap(true, Ordering::AcqRel) {
            return;
        }
        spawn_worker();
    }

    fn bump_locked(&self) {
        let _g = self.lock.lock().unwrap();
        let n = self.hits.load(Ordering::Relaxed);
        self.hits.store(n + 1, Ordering::Relaxed);
    }

    fn cas(&self) {
        let mut cur = self.hits.load(Ordering::Relaxed);
        loop {
            match self.hits.compare_exchange_weak(cur, cur * 2, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => break,
                Err(actual) => cur = actual,
            }
        }
    }

    fn reset(&mut self) {
        let n = self.hits.load(Ordering::Relaxed);
        self.hits.store(n / 2, Ordering::Relaxed);
    }
}

fn local() -> usize {
    let c = AtomicUsize::new(0);
    let v = c.load(Ordering::Relaxed);
    c.store(v + 1, Ordering::Relaxed);
    c.into_inner()
}
"#,
        r#"
use std::sync::atomic::{AtomicUsize, Ordering};

// The lock's own implementation: only the owning thread touches `count`.
struct ReentrantMutex<T> {
    owner: AtomicUsize,
    count: AtomicUsize,
    data: T,
}

impl<T> ReentrantMutex<T> {
    fn relock(&self) {
        if self.owner.load(Ordering::Relaxed) == current_thread_id() {
            let n = self.count.load(Ordering::Relaxed);
            self.count.store(n + 1, Ordering::Relaxed);
        }
    }
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(AtomicLoadStoreRace);
}
