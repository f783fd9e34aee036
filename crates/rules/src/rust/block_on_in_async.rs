//! RS005: blocking on a future from inside async code.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct BlockOnInAsync;

pub static META: RuleMeta = RuleMeta {
    id: "RS005",
    name: "block-on-in-async",
    category: Category::SyncOverAsync,
    severity: Severity::Critical,
    languages: &[Language::Rust],
    summary: "`block_on` (futures, tokio `Runtime`/`Handle`, async-std, smol, pollster) or a new `Runtime` inside an `async fn` or async block.",
    docs: r#"
Inside async code: `futures::executor::block_on`, `Runtime::block_on`,
`Handle::block_on`, `async_std::task::block_on`, `smol::block_on`,
`pollster::block_on`, or building a new tokio `Runtime`.

## Why

The worker thread blocks until the inner future completes, but that future
may need the very thread (or runtime) now blocked to make progress: on a
current-thread runtime it deadlocks at once, and tokio panics with "Cannot
start a runtime from within a runtime" for `Runtime`/`Handle::block_on`.
Even when it completes, every other task on the worker waits.

## Example

```rust
async fn load(url: &str) -> String {
    futures::executor::block_on(fetch(url))
}
```

## Fix

`.await` the future. If sync code really must wait on async work, run that
sync code in `spawn_blocking` and use `Handle::block_on` there.

```rust
async fn load(url: &str) -> String {
    fetch(url).await
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for BlockOnInAsync {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for (i, e) in cx.model.exprs.iter().enumerate() {
            let ExprKind::Call(c) = &e.kind else { continue };
            let id = ExprId(i as u32);
            let Some(entry) = cx.effect(c, Effect::SyncOverAsync) else {
                continue;
            };
            let f = cx.func_of(id);
            if !cx.runs_on_loop(f) {
                continue;
            }
            out.push(cx.finding(
                &META,
                e.span,
                format!(
                    "`{}` {} inside async {}: the worker thread waits on work that may need this very thread, which deadlocks a current-thread runtime and panics in tokio",
                    cx.callee_display(c),
                    entry.what,
                    cx.func_display(f)
                ),
                entry.fix.clone(),
            ));
        }
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[r#"
use futures::executor::block_on;
use tokio::runtime::Handle;

async fn load(url: &str) -> String {
    let a = block_on(fetch(url)); // expect
    let b = Handle::current().block_on(fetch(url)); // expect
    let rt = tokio::runtime::Runtime::new().unwrap(); // expect
    a
}
"#],
    pass: &[r#"
use tokio::runtime::Handle;

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(run());
}

async fn run() {
    let h = Handle::current();
    tokio::task::spawn_blocking(move || h.block_on(fetch("x"))).await.unwrap();
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(BlockOnInAsync);
}
