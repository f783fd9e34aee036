//! RS024: `std::mem::forget` of a lock guard or semaphore permit.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct ForgottenGuard;

pub static META: RuleMeta = RuleMeta {
    id: "RS024",
    name: "forgotten-guard",
    category: Category::ResourceLeak,
    severity: Severity::Medium,
    languages: &[Language::Rust],
    summary: "`std::mem::forget` of a lock guard, `RefCell` borrow or semaphore permit, which then is never released.",
    docs: r#"
`std::mem::forget(x)` (or `core::mem::forget`) where `x` is a lock guard
(`lock()`, `read()`, `write()`), a `RefCell` borrow, or a semaphore permit
(`acquire()`, `acquire_owned()`, `try_acquire()`).

## Why

A guard releases its lock, and a permit its slot, in `Drop`; `forget`
skips `Drop`. The mutex stays locked forever (every later `lock()` waits
for good), the `RefCell` stays borrowed (every later borrow panics), and the
semaphore loses a slot for the rest of the process, until the service has
no capacity left.

## Example

```rust
async fn handle(sem: &tokio::sync::Semaphore) {
    let permit = sem.acquire().await.unwrap();
    process().await;
    std::mem::forget(permit);
}
```

## Fix

Let the guard drop (or `drop()` it explicitly); to give a permit away for
good on purpose, use the API made for it (`SemaphorePermit::forget`, with a
comment saying why).

```rust
async fn handle(sem: &tokio::sync::Semaphore) {
    let permit = sem.acquire().await.unwrap();
    process().await;
    drop(permit);
}
```
"#,
    examples: &EXAMPLES,
};

const GUARD_METHODS: &[&str] = &[
    "lock",
    "read",
    "write",
    "try_lock",
    "try_read",
    "try_write",
    "lock_owned",
    "read_owned",
    "write_owned",
    "borrow",
    "borrow_mut",
    "acquire",
    "acquire_owned",
    "acquire_many",
    "acquire_many_owned",
    "try_acquire",
    "try_acquire_owned",
    "upgradable_read",
];

impl Rule for ForgottenGuard {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for (e, c) in cx.calls_to(&["std::mem::forget", "core::mem::forget"]) {
            let ex = cx.expr(e);
            if common::test_like(cx, cx.func_of(e)) {
                continue;
            }
            let Some(arg) = c.positional(0) else { continue };
            let Some(what) = guard_kind(cx, arg) else {
                continue;
            };
            out.push(cx.finding(
                &META,
                ex.span,
                format!(
                    "`mem::forget` of {what} skips its `Drop`, so it is never released: {}",
                    if what.contains("permit") {
                        "the semaphore loses this slot for the rest of the process"
                    } else {
                        "the lock stays held forever and every later acquisition waits (or a `RefCell` stays borrowed and later borrows panic)"
                    }
                ),
                "let it drop (or call `drop(..)`); if a permit must be given away on purpose, use `permit.forget()` with a comment explaining why",
            ));
        }
    }
}

/// What a value is when it is a guard or permit taken in this function:
/// the call itself, or a local bound from it (`let g = m.lock().unwrap()`).
/// Parameters and `self` are not: guard implementations forget themselves
/// on purpose to hand the lock over (`MutexGuard::map`).
fn guard_kind(cx: &FileCx, arg: ExprId) -> Option<&'static str> {
    let value = match cx.model.name_of(arg) {
        Some(n) => {
            let decl = common::declaration_of(cx, n, arg)?;
            if cx.tree.stmt_func(decl) != cx.func_of(arg) {
                return None;
            }
            match &cx.stmt(decl).kind {
                StmtKind::Assign { value: Some(v), .. } => *v,
                _ => return None,
            }
        }
        None => arg,
    };
    let call = common::unwrap_value(cx, value);
    let c = cx.call(call)?;
    let recv = c.receiver?;
    if !GUARD_METHODS.contains(&c.name.as_str())
        || !c.args.is_empty() && !c.name.starts_with("acquire_many")
    {
        return None;
    }
    let ty = cx.sema.type_of(recv);
    if c.name.contains("acquire") {
        return ty
            .is_none_or(|t| t.ends_with("Semaphore"))
            .then_some("a semaphore permit");
    }
    if c.name.starts_with("borrow") {
        return ty
            .is_none_or(|t| t.ends_with("RefCell"))
            .then_some("a `RefCell` borrow");
    }
    // `lock`/`read`/`write`: a known lock, or `lock()` on an unknown type.
    let lock = ty.is_some_and(|t| super::locks::lock_kind(cx, t).is_some());
    (lock || ty.is_none() && c.name == "lock").then_some("a lock guard")
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[r#"
use std::mem;
use std::sync::Mutex;

fn keep_locked(m: &Mutex<u32>) {
    let g = m.lock().unwrap();
    mem::forget(g); // expect
}

async fn leak(sem: std::sync::Arc<tokio::sync::Semaphore>) {
    let p = sem.clone().acquire_owned().await.unwrap();
    work().await;
    std::mem::forget(p); // expect
}
"#],
    pass: &[r#"
use std::mem;

fn buffers(v: Vec<u8>, f: std::fs::File) {
    mem::forget(v);
    let n = std::mem::forget(f);
}

async fn shrink(sem: &tokio::sync::Semaphore) {
    let p = sem.acquire().await.unwrap();
    p.forget();
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(ForgottenGuard);
}
