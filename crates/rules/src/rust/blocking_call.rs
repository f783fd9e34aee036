//! RS002: a blocking call on an async runtime thread.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use crate::shared::blocking;
use unsnarl_model::*;

pub struct BlockingCall;

pub static META: RuleMeta = RuleMeta {
    id: "RS002",
    name: "blocking-call-on-runtime",
    category: Category::BlockingInAsync,
    severity: Severity::High,
    languages: &[Language::Rust],
    summary: "An `async fn` or async block calls blocking std APIs (`thread::sleep`, `std::fs`, `std::net`, `Command::output`, `reqwest::blocking`, sync channel receives), directly or through a project helper.",
    docs: r#"
Inside an `async fn` or `async` block: `std::thread::sleep`, `std::fs::*`,
`std::io::stdin()` reads, `std::net` sockets, `std::process::Command::output`
/ `status` / `Child::wait`, `reqwest::blocking`, `std::sync::mpsc` /
`crossbeam_channel` blocking receives and sends, `Condvar::wait`,
`Barrier::wait`, `JoinHandle::join`; or a call to a sync function of the
project that makes one of them. Code inside `spawn_blocking` and
`block_in_place` closures is exempt.

## Why

A tokio worker thread runs many tasks and only switches between them at
`.await`. A blocking call holds the worker: every task scheduled on it
stalls, timers fire late, and with a current-thread runtime (or all workers
blocked) the whole service freezes.

## Example

```rust
async fn handle(path: &str) -> std::io::Result<String> {
    std::thread::sleep(std::time::Duration::from_millis(100));
    std::fs::read_to_string(path)
}
```

## Fix

Use the async equivalents (`tokio::time::sleep`, `tokio::fs`, `tokio::net`,
`tokio::process`), or move the blocking part into `spawn_blocking`.

```rust
async fn handle(path: &str) -> std::io::Result<String> {
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    tokio::fs::read_to_string(path).await
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for BlockingCall {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        blocking::check(cx, &META, Effect::Blocking, |cx, f| cx.runs_on_loop(f), out);
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[
        r#"
use std::thread;
use std::time::Duration;

async fn poll() {
    thread::sleep(Duration::from_secs(1)); // expect
    let data = std::fs::read("/etc/hosts"); // expect
    let out = std::process::Command::new("ls").arg("-l").output(); // expect
}
"#,
        r#"
use std::fs::File;

fn load() -> File {
    File::open("cfg").unwrap()
}

async fn handler() {
    tokio::spawn(async {
        std::thread::sleep(std::time::Duration::from_millis(5)); // expect
    })
    .await
    .unwrap();
    let f = load(); // expect
}
"#,
        r#"
async fn get(url: &str) -> String {
    reqwest::blocking::get(url).unwrap().text().unwrap() // expect
}
"#,
    ],
    pass: &[r#"
use std::time::Duration;

async fn poll() {
    tokio::time::sleep(Duration::from_secs(1)).await;
    let data = tokio::fs::read("/etc/hosts").await;
    let v = tokio::task::spawn_blocking(|| std::fs::read("/etc/hosts")).await;
    tokio::task::block_in_place(|| std::thread::sleep(Duration::from_millis(1)));
}

fn sync_only() {
    std::thread::sleep(Duration::from_secs(1));
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(BlockingCall);
}
