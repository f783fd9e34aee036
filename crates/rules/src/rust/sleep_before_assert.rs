//! RS027: sleeping to let concurrent work finish before checking it.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::walk::exprs_in_block;
use unsnarl_model::*;

pub struct SleepBeforeAssert;

pub static META: RuleMeta = RuleMeta {
    id: "RS027",
    name: "sleep-before-assert",
    category: Category::SleepSynchronization,
    severity: Severity::Medium,
    languages: &[Language::Rust],
    summary: "A test sleeps (`thread::sleep`, `tokio::time::sleep`) and then asserts, or code spawns a task/thread and sleeps to let it get somewhere before going on.",
    docs: r#"
Two shapes: in a test (`#[test]`, `#[tokio::test]`), a statement-level
sleep followed later in the same block by an `assert!`-family check, when
the test does not run on paused time (`start_paused = true`,
`tokio::time::pause()`); anywhere outside examples and benches, a spawn
followed by a sleep and then more code in the same block. Sleeps inside
loops (polling) are not flagged.

## Why

The sleep is a guess at how long the other task or thread needs. On a
loaded CI machine it is too short (flaky failures), and everywhere else it
is too long (slow tests). In production code the guess encodes an ordering
nobody enforces: under load the code after the sleep runs before the work
it waits for.

## Example

```rust
#[tokio::test]
async fn caches_after_fetch() {
    let cache = Cache::default();
    let c = cache.clone();
    tokio::spawn(async move { c.refresh().await });
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(cache.contains("key"));
}
```

## Fix

Wait for the real event: await the `JoinHandle`, a channel or `Notify` the
task signals; for time-based behaviour, run on paused time
(`#[tokio::test(start_paused = true)]`) and `advance` the clock.

```rust
#[tokio::test]
async fn caches_after_fetch() {
    let cache = Cache::default();
    let c = cache.clone();
    tokio::spawn(async move { c.refresh().await }).await.unwrap();
    assert!(cache.contains("key"));
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for SleepBeforeAssert {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        let mut seen = HashSet::new();
        for f in cx.model.function_ids() {
            let test = common::test_like(cx, f);
            if !test && common::non_service_path(cx) {
                continue;
            }
            if test && paused_time(cx, f) {
                continue;
            }
            let mut blocks = vec![cx.func(f).body.clone()];
            for s in common::stmts_in(cx.model, &cx.func(f).body) {
                match &cx.stmt(s).kind {
                    StmtKind::Block(b) => blocks.push(b.clone()),
                    StmtKind::If { then, orelse, .. } => {
                        blocks.push(then.clone());
                        blocks.push(orelse.clone());
                    }
                    _ => {}
                }
            }
            for b in &blocks {
                scan(cx, b, test, &mut seen, out);
            }
        }
    }
}

fn scan(
    cx: &FileCx,
    block: &Block,
    test: bool,
    seen: &mut HashSet<ExprId>,
    out: &mut Vec<Finding>,
) {
    let mut spawned: Option<StmtId> = None;
    for (i, &s) in block.iter().enumerate() {
        if let Some(sleep) = stmt_sleep(cx, s) {
            if !common::enclosing_loops(cx, s).is_empty() || i + 1 == block.len() {
                continue;
            }
            let rest = &block[i + 1..];
            let later = exprs_in_block(cx.model, &rest.to_vec());
            // A test of the clock itself (`assert!(start.elapsed() >= d)`)
            // needs the real sleep.
            let times = later.iter().any(|&e| {
                cx.call(e).is_some_and(|c| {
                    matches!(c.name.as_str(), "elapsed" | "now" | "duration_since")
                })
            });
            if times {
                continue;
            }
            // An async (tokio) test has background tasks and paused time
            // available; a sync test needs something running alongside.
            let async_test = cx.func(common::outermost(cx, cx.func_of(sleep))).is_async;
            let asserts = test
                && (async_test || concurrent_before(cx, sleep))
                && later.iter().any(|&e| {
                    cx.call(e)
                        .is_some_and(|c| c.is_macro && c.name.starts_with("assert"))
                });
            let after_spawn =
                spawned.is_some() && rest.iter().any(|&x| !common::is_trivial_stmt(cx, x));
            if !(asserts || after_spawn) || !seen.insert(sleep) {
                continue;
            }
            let msg = if asserts {
                "this test sleeps and then asserts: the sleep is a guess at how long the concurrent work takes, too short on a loaded CI machine (flaky) and too long everywhere else (slow)"
            } else {
                "this sleep waits for the task started above to get somewhere instead of waiting for it: under load it takes longer and the code below runs too early"
            };
            out.push(cx.finding(
                &META,
                cx.expr(sleep).span,
                msg,
                "wait for the real event (await the `JoinHandle`, a channel or `Notify` the task signals); for time-based behaviour use paused time (`#[tokio::test(start_paused = true)]` / `tokio::time::pause()` and `advance`)",
            ));
            spawned = None;
            continue;
        }
        if common::own_exprs(cx.model, s).into_iter().any(|e| {
            cx.call(e).is_some_and(|c| {
                cx.effect(c, Effect::Spawn).is_some() || cx.effect(c, Effect::ScopedSpawn).is_some()
            })
        }) {
            spawned = Some(s);
        } else if waits(cx, s) {
            spawned = None;
        }
    }
}

/// Something runs concurrently with the sleeping code: the sleep is inside
/// a spawned closure, or something was spawned (a task, a thread, a child
/// process) earlier in the test. A test of a timer alone has no one to wait
/// for.
fn concurrent_before(cx: &FileCx, sleep: ExprId) -> bool {
    let f = cx.func_of(sleep);
    let spawned_here = cx.tree.func_ancestors(cx.model, f).any(|g| {
        common::closure_call_site(cx, g)
            .and_then(|site| cx.call(site))
            .is_some_and(|c| c.name.starts_with("spawn"))
    });
    if spawned_here {
        return true;
    }
    let top = common::outermost(cx, f);
    let start = cx.expr(sleep).span.start;
    let span = cx.func(top).span;
    cx.model.exprs.iter().any(|e| {
        e.span.end <= start
            && span.contains(e.span)
            && matches!(&e.kind, ExprKind::Call(c) if c.name.starts_with("spawn") || c.name == "serve" || c.name == "start")
    })
}

/// The sleep call of a statement that is just a sleep.
fn stmt_sleep(cx: &FileCx, s: StmtId) -> Option<ExprId> {
    let e = match &cx.stmt(s).kind {
        StmtKind::Expr(e) => *e,
        _ => return None,
    };
    let call = common::unwrap_value(cx, e);
    cx.call(call).filter(|c| common::is_sleep(c)).map(|_| call)
}

/// A statement that waits for something real: a join, a receive, an await
/// other than a sleep.
fn waits(cx: &FileCx, s: StmtId) -> bool {
    if matches!(cx.stmt(s).kind, StmtKind::Select { .. }) {
        return true;
    }
    exprs_in_block(cx.model, &vec![s])
        .into_iter()
        .any(|e| match &cx.expr(e).kind {
            ExprKind::Await(inner) => !cx
                .call(common::unwrap_value(cx, *inner))
                .is_some_and(common::is_sleep),
            ExprKind::Call(c) => matches!(
                c.name.as_str(),
                "join" | "recv" | "wait" | "recv_timeout" | "notified"
            ),
            _ => false,
        })
}

/// The test runs on tokio's paused clock.
fn paused_time(cx: &FileCx, f: FuncId) -> bool {
    let top = common::outermost(cx, f);
    let func = cx.func(top);
    let attr = func.decorator_calls.iter().any(|&d| {
        cx.call(d).is_some_and(|c| {
            c.kwarg("start_paused")
                .is_some_and(|v| matches!(cx.model.literal(v), Some(Lit::Bool(true))))
        })
    });
    attr || exprs_in_block(cx.model, &func.body).into_iter().any(|e| {
        cx.call(e).is_some_and(|c| {
            matches!(
                c.target.as_deref(),
                Some("tokio::time::pause" | "tokio::time::advance")
            )
        })
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[
        r#"
use std::time::Duration;

#[test]
fn worker_processes_job() {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let w = Worker::start(rx);
    tx.send(Job::new()).unwrap();
    std::thread::sleep(Duration::from_millis(50)); // expect
    assert_eq!(w.processed(), 1);
}

#[tokio::test]
async fn expires() {
    let cache = Cache::with_ttl(Duration::from_millis(10));
    cache.put("k", 1);
    tokio::time::sleep(Duration::from_millis(20)).await; // expect
    assert!(cache.get("k").is_none());
}
"#,
        r#"
use std::time::Duration;

async fn start(server: Server, client: Client) {
    tokio::spawn(server.run());
    tokio::time::sleep(Duration::from_millis(200)).await; // expect
    client.connect().await;
}
"#,
    ],
    pass: &[
        r#"
use std::time::Duration;

#[tokio::test(start_paused = true)]
async fn expires() {
    let cache = Cache::with_ttl(Duration::from_millis(10));
    cache.put("k", 1);
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(cache.get("k").is_none());
}

#[tokio::test]
async fn joins() {
    let h = tokio::spawn(async { 1 });
    assert_eq!(h.await.unwrap(), 1);
}

async fn poll(flag: &std::sync::atomic::AtomicBool) {
    while !flag.load(std::sync::atomic::Ordering::Acquire) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[test]
fn timer_fires() {
    let t = Timer::after(Duration::from_millis(50));
    std::thread::sleep(Duration::from_millis(100));
    assert!(t.fired());
}

async fn pace(items: Vec<u32>) {
    for i in items {
        send(i).await;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
"#,
        r#"
use std::time::{Duration, Instant};

// A test of the timer itself: the real sleep is the subject.
#[tokio::test]
async fn farther_timer_survives() {
    let start = Instant::now();
    let near = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(5)).await;
    });
    tokio::time::sleep(Duration::from_millis(25)).await;
    assert!(start.elapsed() >= Duration::from_millis(25), "deadline not held");
    near.await.unwrap();
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(SleepBeforeAssert);
}
