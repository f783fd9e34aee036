//! RS006: CPU-heavy work (password hashing, rayon) on a runtime thread.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use crate::shared::blocking;
use unsnarl_model::*;

pub struct CpuHeavyOnRuntime;

pub static META: RuleMeta = RuleMeta {
    id: "RS006",
    name: "cpu-heavy-on-runtime",
    category: Category::CpuInAsync,
    severity: Severity::High,
    languages: &[Language::Rust],
    summary: "Password hashing (`bcrypt`, `argon2`, `pbkdf2`, `scrypt`) or a rayon parallel computation (`par_iter`, `rayon::join`...) inside an `async fn` or async block.",
    docs: r#"
Inside an `async fn` or `async` block: a password hash or verification
(`bcrypt::hash`/`verify`, `Argon2::hash_password`/`verify_password`,
`pbkdf2`, `scrypt`), or a rayon parallel iterator or join (`par_iter()`,
`into_par_iter()`, `par_sort`, `rayon::join`, `rayon::scope`,
`ThreadPool::install`) run in place. Code inside `spawn_blocking` and
`block_in_place` closures is exempt.

## Why

Password hashes are built to burn ~100 ms of CPU each; a rayon computation
blocks the calling thread until the whole pool is done. On a tokio worker
that time is stolen from every other task on the thread: latency spikes for
unrelated requests, timers fire late, and a burst of logins stalls the
service.

## Example

```rust
async fn register(password: String) -> String {
    bcrypt::hash(password, bcrypt::DEFAULT_COST).unwrap()
}
```

## Fix

Run the work on the blocking pool (or send it to rayon and await the result
through a channel).

```rust
async fn register(password: String) -> String {
    tokio::task::spawn_blocking(move || bcrypt::hash(password, bcrypt::DEFAULT_COST).unwrap())
        .await
        .unwrap()
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for CpuHeavyOnRuntime {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        blocking::check(cx, &META, Effect::CpuHeavy, |cx, f| cx.runs_on_loop(f), out);
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[r#"
use argon2::{Argon2, PasswordHasher};
use rayon::prelude::*;

async fn login(pw: &[u8], salt: &SaltString, hash: &str) -> bool {
    let ok = bcrypt::verify(pw, hash).unwrap(); // expect
    let h = Argon2::default().hash_password(pw, salt); // expect
    ok && h.is_ok()
}

async fn score(items: Vec<u64>) -> u64 {
    items.par_iter().map(|x| x * 2).sum() // expect
}
"#],
    pass: &[r#"
use rayon::prelude::*;

async fn login(pw: String, hash: String) -> bool {
    tokio::task::spawn_blocking(move || bcrypt::verify(pw, &hash).unwrap())
        .await
        .unwrap()
}

fn batch(items: &[u64]) -> u64 {
    items.par_iter().map(|x| x * 2).sum()
}

async fn score(items: Vec<u64>) -> u64 {
    let (tx, rx) = tokio::sync::oneshot::channel();
    rayon::spawn(move || {
        let _ = tx.send(items.par_iter().sum::<u64>());
    });
    rx.await.unwrap()
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(CpuHeavyOnRuntime);
}
