//! RS005: blocking on a future from inside async code.

use super::common;
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
            if !cx.runs_on_loop(f) || common::test_like(cx, f) {
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
        through_helpers(cx, out);
        handle_block_on_on_worker(cx, out);
    }
}

/// An async function calling a sync helper of the same file that blocks on
/// a future (directly or a few helpers further down).
fn through_helpers(cx: &FileCx, out: &mut Vec<Finding>) {
    for f in cx.model.function_ids() {
        if !cx.runs_on_loop(f) || common::test_like(cx, f) {
            continue;
        }
        for &e in cx.body_exprs(f) {
            let Some(c) = cx.call(e) else { continue };
            if cx.effect(c, Effect::SyncOverAsync).is_some()
                || common::inside_call_with(cx, e, Effect::Offload)
            {
                continue;
            }
            let Some(g) = cx.callee_in_file(c) else {
                continue;
            };
            if cx.func(g).is_async {
                continue;
            }
            let mut path = Vec::new();
            let Some(site) = blocks_on(cx, g, &mut path) else {
                continue;
            };
            let inner = cx.call(site).expect("a call");
            let names: Vec<String> = path
                .iter()
                .map(|&h| format!("`{}`", cx.func(h).name))
                .collect();
            let mut fd = cx.finding(
                &META,
                cx.expr(e).span,
                format!(
                    "{} is called inside async {} and blocks on a future (`{}` at line {}): the worker thread waits on work that may need this very thread, which deadlocks a current-thread runtime and panics in tokio",
                    names.join(" → "),
                    cx.func_display(f),
                    cx.callee_display(inner),
                    common::line_of(cx, cx.expr(site).span)
                ),
                "make the helper async and `.await` the future, or call it from `tokio::task::spawn_blocking` (where `Handle::block_on` is allowed)",
            );
            fd.related.push(Related {
                file: None,
                span: cx.expr(site).span,
                message: "blocks on the future here".into(),
            });
            out.push(fd);
        }
    }
}

/// The `block_on` (or runtime construction) a sync function performs,
/// directly or through sync helpers of the file (depth-limited).
fn blocks_on(cx: &FileCx, g: FuncId, path: &mut Vec<FuncId>) -> Option<ExprId> {
    if path.contains(&g) || path.len() >= 4 {
        return None;
    }
    path.push(g);
    let exprs = cx.body_exprs(g);
    for &e in exprs {
        if let Some(c) = cx.call(e)
            && cx.effect(c, Effect::SyncOverAsync).is_some()
            && !common::inside_call_with(cx, e, Effect::Offload)
        {
            return Some(e);
        }
    }
    for &e in exprs {
        if let Some(c) = cx.call(e)
            && let Some(h) = cx.callee_in_file(c)
            && !cx.func(h).is_async
            && let Some(site) = blocks_on(cx, h, path)
        {
            return Some(site);
        }
    }
    path.pop();
    None
}

/// `Handle::current().block_on(..)` in sync code that is not running in
/// `spawn_blocking`/`block_in_place` or on a thread of its own: if it runs
/// on a runtime worker (where `Handle::current()` succeeds), it panics.
fn handle_block_on_on_worker(cx: &FileCx, out: &mut Vec<Finding>) {
    for (e, c) in cx.calls_to(&["tokio::runtime::Handle::block_on"]) {
        let ex = cx.expr(e);
        let f = cx.func_of(e);
        if cx.runs_on_loop(f) || common::test_like(cx, f) {
            continue; // async code is reported above
        }
        let Some(recv) = c.receiver else { continue };
        if !from_current_handle(cx, recv) {
            continue;
        }
        let elsewhere = cx.tree.func_ancestors(cx.model, f).any(|g| {
            cx.func(g).is_async
                || cx.is_offloaded(g)
                || common::closure_call_site(cx, g).is_some_and(|site| {
                    cx.call(site).is_some_and(|sc| {
                        cx.effect(sc, Effect::Spawn).is_some()
                            || cx.effect(sc, Effect::ScopedSpawn).is_some()
                            || sc.name == "spawn"
                    })
                })
        });
        if elsewhere {
            continue;
        }
        out.push(cx.finding(
            &META,
            ex.span,
            "`Handle::current().block_on(..)` in sync code that is not inside `spawn_blocking`: `Handle::current()` only works inside the runtime, and if this runs on a runtime worker thread `block_on` panics (\"Cannot start a runtime from within a runtime\") or stalls the worker",
            "call this code through `tokio::task::spawn_blocking` (or `block_in_place`), or make it async and `.await` instead of blocking",
        ));
    }
}

/// `Handle::current()` itself, or a local bound from it.
fn from_current_handle(cx: &FileCx, recv: ExprId) -> bool {
    let is_current = |e: ExprId| {
        cx.call(common::unwrap_value(cx, e))
            .is_some_and(|c| c.target.as_deref() == Some("tokio::runtime::Handle::current"))
    };
    if is_current(recv) {
        return true;
    }
    let Some(n) = cx.model.name_of(recv) else {
        return false;
    };
    let Some(decl) = common::declaration_of(cx, n, recv) else {
        return false;
    };
    matches!(&cx.stmt(decl).kind, StmtKind::Assign { value: Some(v), .. } if is_current(*v))
        && cx.tree.stmt_func(decl) == cx.func_of(recv)
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[
        r#"
use futures::executor::block_on;
use tokio::runtime::Handle;

async fn load(url: &str) -> String {
    let a = block_on(fetch(url)); // expect
    let b = Handle::current().block_on(fetch(url)); // expect
    let rt = tokio::runtime::Runtime::new().unwrap(); // expect
    a
}
"#,
        r#"
fn load_config() -> Config {
    futures::executor::block_on(read_remote_config())
}

fn settings() -> Config {
    load_config()
}

async fn handler() {
    let c = settings(); // expect
}

fn on_worker() -> u32 {
    tokio::runtime::Handle::current().block_on(async { 1 }) // expect
}
"#,
    ],
    pass: &[r#"
use tokio::runtime::Handle;

fn sync_entry() {
    let h = Handle::current();
    std::thread::spawn(move || h.block_on(fetch("x")));
}

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
