//! RS023: a spawned task or thread running a `loop` nothing can stop.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::walk::exprs_in_block;
use unsnarl_model::*;

pub struct EndlessSpawnedLoop;

pub static META: RuleMeta = RuleMeta {
    id: "RS023",
    name: "endless-spawned-loop",
    category: Category::ResourceLeak,
    severity: Severity::Medium,
    languages: &[Language::Rust],
    summary: "A `tokio::spawn`/`thread::spawn` body with a `loop` that has no way out: no `break`/`return`/`?`, no `select!` on a shutdown signal, no cancellation token, and a task handle nobody aborts.",
    docs: r#"
The closure or async block given to `tokio::spawn`, `spawn_blocking`,
`std::thread::spawn` (and friends) runs a `loop { .. }` with no exit: no
`break`, `return` or `?` in it, no `select!` (where a shutdown branch would
go), no cancellation-token or shutdown-channel check. Tasks whose handle is
kept and aborted somewhere in the file are left alone, and so are those
`main` (or a `-> !` function) starts, also through a function only `main`
calls, as the last thing it does: they are meant to live as long as the
process.

## Why

Such a task lives until the process exits. On shutdown nothing can tell it
to stop, so it keeps its sockets, buffers and timers, races with teardown
(writing to closed resources, logging after the subscriber is gone), and
in tests or a restarted subsystem each start adds one more forever-task.

## Example

```rust
use std::time::Duration;

fn start_reporter(stats: Stats) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(10));
        loop {
            tick.tick().await;
            stats.flush().await;
        }
    });
}
```

## Fix

Give the loop a shutdown signal (a `CancellationToken`, a `watch`/`oneshot`
channel) and `select!` on it, and keep the handle to await it on shutdown.

```rust
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn start_reporter(stats: Stats, token: CancellationToken) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(10));
        loop {
            tokio::select! {
                _ = token.cancelled() => break,
                _ = tick.tick() => stats.flush().await,
            }
        }
    })
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for EndlessSpawnedLoop {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        let aborts = cx.model.exprs.iter().any(|e| {
            matches!(&e.kind, ExprKind::Call(c) if c.name.contains("abort") || c.name == "shutdown_timeout" || c.name == "shutdown_background")
        });
        let mut seen = HashSet::new();
        for (i, ex) in cx.model.exprs.iter().enumerate() {
            let e = ExprId(i as u32);
            let ExprKind::Call(c) = &ex.kind else {
                continue;
            };
            let Some(entry) = cx.effect(c, Effect::Spawn) else {
                continue;
            };
            let kind = if entry.kind.as_deref() == Some("thread") {
                "thread"
            } else {
                "task"
            };
            // Started by `main` (or a `-> !` function): it is meant to run
            // as long as the process does.
            // (Also in a function that only `main` calls, as the last
            // thing it does: it runs as long as the process too.)
            let top = common::outermost(cx, cx.func_of(e));
            if common::test_like(cx, cx.func_of(e))
                || common::is_process_root(cx, top)
                || crate::rust::detached_spawn::runs_for_the_process(cx, top)
            {
                continue;
            }
            if aborts && !cx.is_discarded(e) {
                continue;
            }
            let Some(body) = common::spawned_fn(cx, e) else {
                continue;
            };
            for s in cx.body_stmts(body).iter().copied() {
                let StmtKind::Loop { body: lb } = &cx.stmt(s).kind else {
                    continue;
                };
                if common::loop_has_exit(cx, lb) || stoppable(cx, lb) || !seen.insert(s) {
                    continue;
                }
                out.push(cx.finding(
                    &META,
                    cx.stmt(s).span,
                    format!(
                        "this `loop` in the body given to `{}` has no way out (no `break`/`return`/`?`, no shutdown signal), so the {kind} runs until the process exits: nothing stops it on shutdown, and it keeps its resources and races with teardown",
                        cx.callee_display(c)
                    ),
                    // An OS thread cannot `select!` on a token.
                    if kind == "thread" {
                        "give the loop a way out: check a shared `AtomicBool` stop flag each pass (or end it when a channel it reads from closes), and keep the `JoinHandle` to `join()` it on shutdown"
                    } else {
                        "pass a shutdown signal (`tokio_util::sync::CancellationToken`, a `watch` channel) and `select!` on it to `break`, and keep the `JoinHandle` to await the task on shutdown"
                    },
                ));
            }
        }
    }
}

/// The loop selects (a shutdown branch may end it) or checks a
/// cancellation token / shutdown flag.
fn stoppable(cx: &FileCx, body: &Block) -> bool {
    if common::stmts_in(cx.model, body)
        .into_iter()
        .any(|s| matches!(cx.stmt(s).kind, StmtKind::Select { .. }))
    {
        return true;
    }
    exprs_in_block(cx.model, body).into_iter().any(|e| {
        cx.call(e).is_some_and(|c| {
            let n = c.name.as_str();
            matches!(
                n,
                "cancelled" | "is_cancelled" | "is_closed" | "exit" | "changed"
            ) || n.contains("shutdown")
                || n.contains("stop")
        })
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[r#"
use std::time::Duration;

fn start(cache: Cache) {
    tokio::spawn(async move {
        loop { // expect
            tokio::time::sleep(Duration::from_secs(60)).await;
            cache.evict_expired();
        }
    });
    std::thread::spawn(move || loop { // expect
        std::thread::sleep(Duration::from_secs(1));
        heartbeat();
    });
}
"#],
    pass: &[
        r#"
#[tokio::main]
async fn main() {
    tokio::spawn(async move {
        loop {
            heartbeat().await;
            tokio::time::sleep(std::time::Duration::from_secs(5)).await;
        }
    });
    serve().await;
}
"#,
        r#"
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn start(cache: Cache, token: CancellationToken) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = token.cancelled() => break,
                _ = tokio::time::sleep(Duration::from_secs(60)) => cache.evict_expired(),
            }
        }
    })
}

fn worker(rx: std::sync::mpsc::Receiver<Job>) {
    std::thread::spawn(move || loop {
        match rx.recv() {
            Ok(job) => job.run(),
            Err(_) => break,
        }
    });
}

fn pump(mut rx: tokio::sync::mpsc::Receiver<Msg>, sink: Sink) {
    tokio::spawn(async move {
        loop {
            let msg = rx.recv().await.ok_or(Closed)?;
            sink.write(msg).await?;
        }
        #[allow(unreachable_code)]
        Ok::<(), Closed>(())
    });
}
"#,
        r#"
use std::time::Duration;

// `main` awaits `serve` last: the ticker lives as long as the process.
async fn serve(stats: Stats) -> std::io::Result<()> {
    let s = stats.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            s.flush();
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:7000").await?;
    loop {
        let (sock, _) = listener.accept().await?;
        stats.add(sock);
    }
}

#[tokio::main]
async fn main() {
    serve(Stats::default()).await.unwrap();
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(EndlessSpawnedLoop);

    /// A thread is told how threads stop, a task how tasks do.
    #[test]
    fn fixes_fit_threads_and_tasks() {
        let found = crate::testing::fail_findings(&EndlessSpawnedLoop, &EXAMPLES);
        let thread = found
            .iter()
            .find(|f| f.message.contains("the thread runs"))
            .expect("a thread finding");
        assert!(
            thread.fix.contains("AtomicBool") && !thread.fix.contains("select!"),
            "{}",
            thread.fix
        );
        let task = found
            .iter()
            .find(|f| f.message.contains("the task runs"))
            .expect("a task finding");
        assert!(task.fix.contains("CancellationToken"), "{}", task.fix);
    }
}
