//! RS027: sleeping to let concurrent work finish before checking it.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::walk::{Parent, exprs_in_block};
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
loops (polling) are not flagged, and neither are sleeps whose following
checks block until the other side acts (`assert_eq!(rx.recv(), Ok(1))`, a
`join()`, an await or `block_on` of the spawned task's handle, a `select`, an `accept`,
a stream's `next().await`, tower-test's `assert_request_eq!` (it awaits
the mock's next request), a socket `read` (when the file sets no read
timeout), a `send` or a `flush`/`force_flush` whose result the assertion
checks; not the
`try_*`/`*_timeout` forms) or read only what the sleeping code owns (its
own locals built from literals, constants, task-locals, thread-locals;
not a `static` built by a call, such as a counter other threads bump): those pass
however long the other side takes. On a current-thread runtime
(`#[tokio::test]`'s default, `Builder::new_current_thread()`,
`#[ntex::test]` or ntex's re-exported `rt_test`, `#[actix_rt::test]`,
`#[actix::test]`), a test whose only concurrency is
spawned tasks that wait on nothing but timers is not flagged either: the
sleep is a yield to them, and they run until they park whatever the load.
The same holds for tasks that wait only on timers and the thread's own
synchronization (a channel's `recv` or `send`, a `Notify`, a lock or
semaphore) or on a future the test built before spawning it (`let (disp,
_) = Dispatcher::new(io); spawn(async move { disp.await })`), alone or
combined (`select(rx, stopped).await`), when nothing
in the test reaches outside the thread (no thread, server, socket, file or
process; reads and writes on an in-memory pipe the test made, such as
`IoTest::create()`, a `testing` module's `Io::create()`,
`tokio::io::duplex` or a mock stream, and sends on a channel the test
made, `tx.send(())`, stay inside).
On a one-thread runtime, the runtime's own `spawn` (`ntex::rt::spawn`)
starts such a task too; and a test there that spawns nothing itself but
works over such an in-memory pipe (whose library runs the pipe's tasks on
the same thread), with nothing reaching outside, is left alone as well. Nor is a sleep whose first check is an absence
(`assert_err!(rx.try_recv())`, `assert!(rx.recv_timeout(d).is_err())`,
`assert!(rx.try_recv().unwrap().is_none())`, `assert_pending!(fut)`, a flag that only
ever turns on read as still off: `assert!(!done.load(..))` of an atomic
the file only ever stores `true` in, `!token.is_cancelled()`, a counter
still at zero, `assert_eq!(counter.swap(0, ..), 0)`, in a file whose
atomics only count up or go back to zero) with any later
check, up to the next sleep, after a real wait: a slow machine cannot
make an absence fail. Nor
is a sleep before connecting to a listener the test bound itself
(`TcpListener::bind`, then `TcpStream::connect(listener.local_addr())`),
or that a thread or task it spawned bound before answering on a channel
the test waited on (`bind(..)` then `tx.send(..)` there, `rx.recv()`
here): the connection succeeds once the socket listens, whoever accepts
it. Nor
is a sleep whose first check repeats word for word one made before it
(nothing changed across the wait), or a sleep followed by another before
the check (the one nearest the check is reported), or a sleep after which
the test polls through a retry helper (`tryhard::retry_fn`, `backoff`):
the sleep is only a head start. Nor, in a test that starts no task or
thread (nor in an async test that sleeps on a clock paused time cannot
skip, `async_std::task::sleep`, and reaches nothing outside), is a sleep
that only lets time pass; nor, in a tokio test that starts nothing
concurrent, is a sleep longer than a constant deadline the test handed to the
code under test (`push(k, Some(Duration::from_millis(1)))`, then a 2 ms
sleep) when the test then runs the expiry itself (`drop_expired()`,
`run_pending_tasks()`): a slower machine only puts the deadline further
behind.

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
(`#[tokio::test(start_paused = true)]`) and `advance` the clock. With
threads, `join()` them (or let a `thread::scope` end) or have them signal a
channel, `Barrier` or `Condvar`; for a process started outside the test,
poll for its readiness with a deadline. The finding's fix names the one
that fits the sleep it found.

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
            for s in cx.body_stmts(f).iter().copied() {
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
            // A blocking sleep (`std::thread::sleep`) on a current-thread
            // runtime stops every task of the test with it: only something
            // started outside the runtime can move meanwhile.
            // Paused time is tokio's: an async test on another runtime
            // (`async_std::task::sleep`) that starts nothing concurrent is
            // only letting its own deadlines pass, as a sync one is.
            let top = common::outermost(cx, cx.func_of(sleep));
            let async_test = cx.func(top).is_async
                && (is_awaited(cx, sleep) || !current_thread(cx, top))
                && (tokio_sleep(cx, sleep)
                    || concurrent_before(cx, sleep)
                    || reaches_outside(cx, top));
            let asserts = test
                && (async_test || concurrent_before(cx, sleep))
                && later.iter().any(|&e| {
                    cx.call(e)
                        .is_some_and(|c| c.is_macro && c.name.starts_with("assert"))
                });
            // The checks after the sleep block until the other side acts
            // (`assert_eq!(rx.recv(), Ok(7))`, a `join`, a `select!`): they
            // pass however long the other side takes, and the sleep only
            // makes the interleaving under test likely.
            let asserts = asserts
                && !observes_by_blocking(cx, rest)
                && !private_assertions(cx, cx.func_of(sleep), rest)
                && !absence_check(cx, rest)
                && !polls_with_retry_helper(cx, rest)
                && !waits_out_own_deadline(cx, sleep, rest)
                && !crate::util::repeats_earlier_check(cx, cx.func_of(sleep), s, |x| {
                    is_assert(cx, x)
                });
            let next = rest.iter().find(|&&x| !common::is_trivial_stmt(cx, x));
            // In a test, checks that wait for the spawned side (`assert_eq!(
            // t.join().unwrap(), ..)`) pass whichever side goes first.
            let after_spawn = spawned.is_some()
                && next.is_some_and(|&x| !observes_by_blocking(cx, std::slice::from_ref(&x)))
                && !(test && (observes_by_blocking(cx, rest) || absence_check(cx, rest)));
            // Two sleeps before one check: the one nearest the check is the
            // bet it depends on, and the one reported.
            let nearer = up_to_first_assert(cx, rest)
                .iter()
                .any(|&x| stmt_sleep(cx, x).is_some());
            if !(asserts || after_spawn)
                || (asserts && nearer)
                || (test && only_yields(cx, sleep))
                || next.is_some_and(|&x| {
                    let prev = i.checked_sub(1).map(|p| block[p]);
                    connects_to_bound_listener(cx, cx.func_of(sleep), x, prev)
                })
                || !seen.insert(sleep)
            {
                continue;
            }
            let msg = if asserts {
                "this test sleeps and then asserts: the sleep is a guess at how long the concurrent work takes, too short on a loaded CI machine (flaky) and too long everywhere else (slow)"
            } else {
                "this sleep waits for the task started above to get somewhere instead of waiting for it: under load it takes longer and the code below runs too early"
            };
            out.push(cx.finding(&META, cx.expr(sleep).span, msg, fix_for(cx, sleep)));
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

/// A sleep on tokio's clock (`tokio::time::sleep`, actix's re-export of
/// it), which paused time (`start_paused`) can skip.
fn tokio_sleep(cx: &FileCx, sleep: ExprId) -> bool {
    cx.call(sleep)
        .and_then(|c| c.target.as_deref())
        .is_none_or(|t| {
            t.starts_with("tokio::") || t.starts_with("actix_rt::") || t.starts_with("actix::")
        })
}

/// The statement after the sleep connects to a listener this function
/// bound before (`let l = TcpListener::bind(..)`, `let addr =
/// l.local_addr()`, then `TcpStream::connect(addr)`): the kernel accepts
/// the connection as soon as the socket listens, whether or not the
/// serving thread has reached `accept`. The sleep orders nothing.
fn connects_to_bound_listener(
    cx: &FileCx,
    f: FuncId,
    next: StmtId,
    before_sleep: Option<StmtId>,
) -> bool {
    let top = common::outermost(cx, f);
    let at = cx.stmt(next).span.start;
    let mut bound: Vec<&str> = Vec::new();
    for &s in cx.body_stmts(top) {
        if cx.stmt(s).span.end > at {
            continue;
        }
        let StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } = &cx.stmt(s).kind
        else {
            continue;
        };
        let Some(name) = targets.first().and_then(|&t| cx.model.name_of(t)) else {
            continue;
        };
        let binds = cx
            .call(common::unwrap_value(cx, *v))
            .and_then(|c| c.target.as_deref())
            .is_some_and(|t| t.ends_with("TcpListener::bind") || t.ends_with("UnixListener::bind"));
        let derived = unsnarl_model::walk::exprs_under(cx.model, *v)
            .into_iter()
            .any(|x| cx.model.name_of(x).is_some_and(|n| bound.contains(&n)));
        if binds || derived {
            bound.push(name);
        }
    }
    let connects = |to: &dyn Fn(&str) -> bool| {
        exprs_in_block(cx.model, &vec![next]).into_iter().any(|e| {
            cx.call(e).is_some_and(|c| {
                c.name == "connect"
                    && c.args.iter().any(|a| {
                        unsnarl_model::walk::exprs_under(cx.model, a.value)
                            .into_iter()
                            .any(|x| cx.model.name_of(x).is_some_and(to))
                    })
            })
        })
    };
    (!bound.is_empty() && connects(&|n| bound.contains(&n)))
        || (before_sleep.is_some_and(|p| bound_before_handshake(cx, top, p)) && connects(&|_| true))
}

/// The statement right before the sleep (`handshake`) receives from a
/// channel (`rx.recv()`) whose sender, in a thread or task the test
/// spawned, sends only after binding (`build().bind("srv", addr, ..)`,
/// `TcpListener::bind(..)`, then `tx.send(..)`): the socket listens before
/// the test goes on, so a connect after that succeeds whoever accepts it.
fn bound_before_handshake(cx: &FileCx, top: FuncId, handshake: StmtId) -> bool {
    let within = cx.stmt(handshake).span;
    common::local_channels(cx, top).iter().any(|ch| {
        let received = cx.body_exprs(top).iter().any(|&e| {
            within.contains(cx.expr(e).span)
                && cx.call(e).is_some_and(|c| {
                    c.name == "recv"
                        && c.receiver.and_then(|r| cx.model.name_of(r)) == Some(ch.rx.as_str())
                })
        });
        received
            && common::fns_within(cx, top)
                .into_iter()
                .filter(|&g| g != top)
                .any(|g| {
                    let calls: Vec<(u32, &Call)> = cx
                        .body_exprs(g)
                        .iter()
                        .filter_map(|&e| cx.call(e).map(|c| (cx.expr(e).span.start, c)))
                        .collect();
                    let first_send = calls.iter().find(|(_, c)| {
                        c.name == "send"
                            && c.receiver.and_then(|r| cx.model.name_of(r)) == Some(ch.tx.as_str())
                    });
                    first_send.is_some_and(|&(sent, _)| {
                        calls.iter().any(|&(pos, c)| {
                            pos < sent && matches!(c.name.as_str(), "bind" | "listen")
                        })
                    })
                })
    })
}

/// What to wait on instead, by the kind of sleep: a thread's sleep has
/// joins and handshakes, tokio has paused time, other runtimes only their
/// handles and channels.
fn fix_for(cx: &FileCx, sleep: ExprId) -> &'static str {
    if !is_awaited(cx, sleep) {
        return "wait for the real event: `join()` the thread (or let its scope end), or have it signal a channel, `Barrier` or `Condvar` that this code waits on; for a process started outside, poll for its readiness with a deadline";
    }
    let c = cx.call(sleep);
    let tokio = c
        .and_then(|c| c.target.as_deref())
        .is_some_and(|t| t.starts_with("tokio::"))
        || cx
            .func(common::outermost(cx, cx.func_of(sleep)))
            .decorators
            .iter()
            .any(|d| d.starts_with("tokio::"));
    if tokio {
        "wait for the real event (await the `JoinHandle`, a channel or `Notify` the task signals; for a server or process started outside the test's tasks, retry the connection until it answers, with a deadline); for time-based behaviour use paused time (`#[tokio::test(start_paused = true)]` / `tokio::time::pause()` and `advance`)"
    } else {
        "wait for the real event: await the task's handle, or a channel or notification the task signals; for a server or process started outside, retry the connection until it answers, with a deadline"
    }
}

fn is_awaited(cx: &FileCx, e: ExprId) -> bool {
    matches!(cx.tree.expr_parent(e), Parent::Expr(p) if matches!(cx.expr(p).kind, ExprKind::Await(_)))
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

/// The sleep outlasts a deadline the test set, and the test then expires
/// what it holds itself: nothing concurrent has to get anywhere.
fn waits_out_own_deadline(cx: &FileCx, sleep: ExprId, rest: &[StmtId]) -> bool {
    outlasts_own_deadline(cx, sleep) && runs_the_expiry(cx, rest)
}

/// Before its first check, the test runs the expiry itself
/// (`q.drop_expired()`, `cache.run_pending_tasks()`, `purge`, `sweep`): no
/// background task has to get there first.
fn runs_the_expiry(cx: &FileCx, rest: &[StmtId]) -> bool {
    up_to_first_assert(cx, rest).iter().any(|&s| {
        common::own_exprs(cx.model, s).into_iter().any(|e| {
            cx.call(e).is_some_and(|c| {
                let n = c.name.as_str();
                !c.is_macro
                    && (n == "run_pending_tasks"
                        || ["expire", "evict", "purge", "sweep", "cleanup", "clean_up"]
                            .iter()
                            .any(|w| n.contains(w)))
            })
        })
    })
}

/// A test that starts nothing (no task, thread or server before the sleep)
/// sleeps longer than a constant duration it handed to the code under test
/// before (`q.push(9, Some(Duration::from_millis(1)))`, then a 2 ms sleep):
/// the sleep waits for its own deadline to pass, and a slower machine only
/// makes it more certain that it has.
fn outlasts_own_deadline(cx: &FileCx, sleep: ExprId) -> bool {
    fn nanos(cx: &FileCx, e: ExprId) -> Option<i128> {
        let c = cx.call(cx.model.strip(e))?;
        let unit: i128 = match c.name.as_str() {
            "from_secs" => 1_000_000_000,
            "from_millis" => 1_000_000,
            "from_micros" => 1_000,
            "from_nanos" => 1,
            _ => return None,
        };
        Some(cx.model.int_value(c.positional(0)?)? * unit)
    }
    let Some(slept) = cx
        .call(sleep)
        .and_then(|c| c.positional(0))
        .and_then(|d| nanos(cx, d))
    else {
        return false;
    };
    if concurrent_before(cx, sleep) {
        return false;
    }
    let top = common::outermost(cx, cx.func_of(sleep));
    let span = cx.func(top).span;
    let start = cx.expr(sleep).span.start;
    cx.model.exprs.iter().enumerate().any(|(i, e)| {
        e.span.end <= start
            && span.contains(e.span)
            && matches!(&e.kind, ExprKind::Call(c) if !common::is_sleep(c) && c.args.iter().any(|a| {
                unsnarl_model::walk::exprs_under(cx.model, a.value)
                    .into_iter()
                    .any(|x| x != ExprId(i as u32) && nanos(cx, x).is_some_and(|d| d < slept))
            }))
    })
}

/// On a current-thread runtime (`#[tokio::test]`'s default flavor,
/// `Builder::new_current_thread()`), a test whose only concurrency is tasks
/// it spawned that never wait on anything but timers: the sleep hands the
/// thread to those tasks, which run until they park in their own sleep or
/// finish, whatever the load. The sleep is a yield; the outcome does not
/// depend on its length.
fn only_yields(cx: &FileCx, sleep: ExprId) -> bool {
    let top = common::outermost(cx, cx.func_of(sleep));
    if !current_thread(cx, top) {
        return false;
    }
    let start = cx.expr(sleep).span.start;
    let span = cx.func(top).span;
    let mut spawns = 0;
    for (i, e) in cx.model.exprs.iter().enumerate() {
        if e.span.end > start || !span.contains(e.span) {
            continue;
        }
        let ExprKind::Call(c) = &e.kind else { continue };
        let spawn = cx.effect(c, Effect::Spawn);
        let concurrent = spawn.is_some()
            || cx.effect(c, Effect::ScopedSpawn).is_some()
            || c.name.starts_with("spawn")
            || matches!(c.name.as_str(), "serve" | "start");
        if !concurrent {
            continue;
        }
        // A task of the test's runtime: a spawn the tables know, or, on a
        // runtime that has one thread only (`#[ntex::test]`), its own
        // `spawn` of a future (`ntex::rt::spawn(async move { .. })`).
        let task = match spawn {
            Some(entry) => entry.kind.as_deref() != Some("thread"),
            None => {
                single_thread_runtime(cx, top)
                    && !c.target.as_deref().is_some_and(|t| t.contains("thread"))
            }
        } && matches!(c.name.as_str(), "spawn" | "spawn_local");
        let Some(body) = common::spawned_fn(cx, ExprId(i as u32)).filter(|_| task) else {
            return false;
        };
        let yields = parks_only_on(cx, body, &[], None)
            || (!reaches_outside(cx, top) && parks_only_on(cx, body, IN_PROCESS_WAITS, Some(top)));
        if !yields {
            return false;
        }
        spawns += 1;
    }
    // No task of its own: a test over an in-memory pipe whose tasks the
    // pipe's library started on this thread, with nothing outside it.
    spawns > 0
        || (cx
            .body_calls(top)
            .any(|e| cx.call(e).is_some_and(|c| makes_in_memory_pipe(cx, c)))
            && !reaches_outside(cx, top))
}

/// The thread's own synchronization a task can park on (a channel's
/// `recv`/`send`, a `Notify`, a semaphore or lock, a watch's `changed`, a
/// cancellation token's `cancelled`):
/// what wakes it is another task of the thread.
const IN_PROCESS_WAITS: &[&str] = &[
    "cancelled",
    "recv",
    "recv_async",
    "send",
    "send_async",
    "notified",
    "acquire",
    "acquire_owned",
    "lock",
    "changed",
    "wait",
    "yield_now",
];

/// A spawned body that makes no blocking or network call and awaits
/// nothing but sleeps and the calls named in `waits`: once polled, it runs
/// until it parks on one of them or ends. With `waits`, it may not touch
/// anything outside the thread either (a file, a process). An await of
/// anything else (`c.refresh().await`) may be I/O, whose time the sleep
/// guesses. With `test`, a test that reaches nothing outside its thread,
/// the body may also await a future that test built before spawning
/// (`let (disp, io) = Dispatcher::new(in_memory_io); spawn(async move {
/// disp.await })`): it runs on what the test handed it. Futures combined
/// (`select(rx, stopped)`, `join(a, b)`) park on their operands.
fn parks_only_on(cx: &FileCx, body: FuncId, waits: &[&str], test: Option<FuncId>) -> bool {
    let built_by_test = |awaited: ExprId| {
        test.is_some_and(|t| {
            cx.model.name_of(awaited).is_some_and(|n| {
                !cx.func(body).params.iter().any(|p| p.name == n)
                    && common::declaration_of(cx, n, awaited)
                        .is_some_and(|d| cx.tree.stmt_func(d) == t)
            })
        })
    };
    common::fns_within(cx, body).into_iter().all(|f| {
        cx.body_exprs(f)
            .iter()
            .copied()
            .all(|e| match &cx.expr(e).kind {
                ExprKind::Await(inner) => {
                    let parks = |x: ExprId| {
                        let x = common::unwrap_value(cx, x);
                        cx.call(x).is_some_and(|c| {
                            common::is_sleep(c) || waits.contains(&c.name.as_str())
                        }) || built_by_test(x)
                    };
                    let inner = common::unwrap_value(cx, *inner);
                    parks(inner)
                        // `select(rx, stopped)`, `join(a, b)`: parks on
                        // its operands.
                        || cx.call(inner).is_some_and(|c| {
                            matches!(c.name.as_str(), "select" | "join" | "race")
                                && !c.args.is_empty()
                                && c.args.iter().all(|a| parks(a.value))
                        })
                }
                ExprKind::Call(c) => {
                    cx.effect(c, Effect::Blocking).is_none()
                        && !common::is_network_io(cx, e)
                        && (waits.is_empty() || !outside_call(c))
                }
                _ => true,
            })
    })
}

/// Anything in the test that reaches outside the thread: a thread, a
/// server, a socket, a file, a process (`test_server(..)`,
/// `TcpStream::connect`, `thread::spawn`, `spawn_blocking`). With none, the
/// test's tasks are all the concurrency there is.
fn reaches_outside(cx: &FileCx, top: FuncId) -> bool {
    common::fns_within(cx, top).into_iter().any(|f| {
        cx.body_exprs(f).iter().copied().any(|e| {
            cx.call(e).is_some_and(outside_call)
                || (common::is_network_io(cx, e) && !on_in_memory_endpoint(cx, e))
        })
    })
}

/// A read or write on an end of an in-memory pipe the test made
/// (`let (client, server) = IoTest::create()`, `tokio::io::duplex(64)`, a
/// mock or fake stream), or a send on a channel it made: the bytes never
/// leave the process.
fn on_in_memory_endpoint(cx: &FileCx, call: ExprId) -> bool {
    let Some(recv) = cx.call(call).and_then(|c| c.receiver) else {
        return false;
    };
    let Some(name) = cx.model.name_of(cx.model.strip(recv)) else {
        return false;
    };
    let Some(StmtKind::Assign { value: Some(v), .. }) =
        common::declaration_of(cx, name, recv).map(|d| &cx.stmt(d).kind)
    else {
        return false;
    };
    cx.call(common::unwrap_value(cx, *v)).is_some_and(|made| {
        makes_in_memory_pipe(cx, made)
            // An end of a channel (`let (tx, rx) = oneshot::channel()`):
            // `tx.send(())` wakes a task of the thread.
            || matches!(
                made.name.as_str(),
                "channel" | "unbounded" | "bounded" | "unbounded_channel"
            )
    })
}

/// The call makes an in-memory pipe or a test double of a stream
/// (`IoTest::create()`, `tokio::io::duplex(64)`, `MockStream::new()`).
fn makes_in_memory_pipe(cx: &FileCx, made: &Call) -> bool {
    let callee = cx.source(cx.expr(made.func).span);
    // Or the constructor of a crate's testing module (`use
    // crate::testing::Io; Io::create()`).
    let from_testing = made
        .target
        .as_deref()
        .is_some_and(|t| t.split("::").any(|seg| seg == "testing"));
    from_testing
        || matches!(made.name.as_str(), "duplex" | "simplex")
        || (callee.contains("::")
            && callee
                .split("::")
                .any(|seg| ["Test", "Mock", "Fake"].iter().any(|w| seg.contains(w))))
}

fn outside_call(c: &Call) -> bool {
    const WORDS: &[&str] = &[
        "server", "connect", "bind", "listen", "thread", "blocking", "process", "command",
    ];
    const MODULES: &[&str] = &[
        "std::fs",
        "std::net",
        "std::process",
        "std::thread",
        "tokio::fs",
        "tokio::net",
        "tokio::process",
        "tokio::signal",
        "async_std::fs",
        "async_std::net",
    ];
    let name = c.name.to_ascii_lowercase();
    // A question about one (`client.is_server_dropped()`) starts nothing.
    let asks = name.starts_with("is_") || name.starts_with("has_");
    (!asks && WORDS.iter().any(|w| name.contains(w)))
        || c.target
            .as_deref()
            .is_some_and(|t| MODULES.iter().any(|m| t.starts_with(m)))
}

/// The runtime the test runs on is tokio's current-thread one.
fn current_thread(cx: &FileCx, top: FuncId) -> bool {
    let func = cx.func(top);
    let calls: Vec<&Call> = cx
        .body_exprs(top)
        .iter()
        .copied()
        .filter_map(|e| cx.call(e))
        .collect();
    if calls.iter().any(|c| c.name == "new_current_thread") {
        return true;
    }
    if calls.iter().any(|c| {
        c.name == "new_multi_thread"
            || c.target
                .as_deref()
                .is_some_and(|t| t.ends_with("Runtime::new"))
    }) {
        return false;
    }
    if single_thread_runtime(cx, top) {
        return true;
    }
    let tokio_test = func.decorators.iter().any(|d| d == "tokio::test");
    let multi = func.decorator_calls.iter().any(|&d| {
        cx.call(d).is_some_and(|c| {
            c.kwarg("flavor")
                .and_then(|v| match cx.model.literal(v) {
                    Some(Lit::Str(s)) => Some(s.contains("multi")),
                    _ => None,
                })
                .unwrap_or(false)
        })
    });
    tokio_test && !multi
}

/// The test runs under the attribute of a runtime that has one thread
/// only (ntex, actix, monoio, compio): no flavor to check.
fn single_thread_runtime(cx: &FileCx, top: FuncId) -> bool {
    cx.func(top).decorators.iter().any(|d| {
        matches!(
            d.as_str(),
            "ntex::test"
                | "actix::test"
                | "actix_rt::test"
                | "actix_web::test"
                | "monoio::test"
                | "compio::test"
        )
        // ntex's test attributes under the names its crates re-export
        // them with (`#[crate::rt_test]` for `ntex_macros::rt_test2`).
        || matches!(d.rsplit("::").next(), Some("rt_test" | "rt_test2"))
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

/// The statements after a sleep, up to the first assertion, wait for the
/// concurrent side with a blocking operation: a receive, a join, a wait, a
/// `select`, an accept, a `changed()`/`notified()`, a socket read (no read timeout set in the file), or a send that the
/// assertion itself checks (`assert_eq!(s.send(5), Err(SendError(5)))`,
/// which waits for room or for the receiver to go). `try_*` and `*_timeout`
/// forms do not count: they observe a moment.
fn observes_by_blocking(cx: &FileCx, rest: &[StmtId]) -> bool {
    let window = up_to_first_assert(cx, rest);
    if common::stmts_in(cx.model, &window)
        .into_iter()
        .any(|s| matches!(cx.stmt(s).kind, StmtKind::Select { .. }))
    {
        return true;
    }
    let exprs = exprs_in_block(cx.model, &window);
    // The test ends the other side itself (`drop(child)`, `kill()`): a read
    // then returns what was written before, which the sleep decided.
    let ends_peer = exprs.iter().any(|&e| {
        cx.call(e)
            .is_some_and(|c| matches!(c.name.as_str(), "drop" | "kill" | "shutdown" | "close"))
    });
    let asserted: Vec<ExprId> = exprs
        .iter()
        .copied()
        .filter(|&e| is_assert(cx, e))
        .flat_map(|a| unsnarl_model::walk::exprs_under(cx.model, a))
        .collect();
    // `let x = <e>;` where the assertions read `x`.
    let bound_and_asserted = |e: ExprId| {
        let Parent::Stmt(s) = cx.tree.expr_parent(e) else {
            return false;
        };
        let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind else {
            return false;
        };
        targets
            .iter()
            .filter_map(|&t| cx.model.name_of(t))
            .any(|n| asserted.iter().any(|&a| cx.model.name_of(a) == Some(n)))
    };
    exprs.iter().any(|&e| {
        if let ExprKind::Await(inner) = &cx.expr(e).kind {
            return awaits_spawned_task(cx, *inner);
        }
        let Some(c) = cx.call(e) else { return false };
        let method = c.receiver.is_some();
        let awaited = is_awaited(cx, e);
        match c.name.as_str() {
            // `stream.next().await`: the next item, whenever it comes.
            "next" => method && awaited,
            "select" => c.is_macro || (method && c.args.is_empty()),
            "recv" | "recv_async" | "ready" | "changed" | "notified" | "accept" | "accept_uni"
            | "accept_bi" | "join_next" => method,
            // `handle.join()`, not `path.join("x")`.
            "join" => method && c.args.is_empty(),
            // `block_on(handle)`, `block_on(async { rx.await })`: runs the
            // future to its end here.
            "block_on" => c.positional(0).is_some_and(|a| {
                matches!(
                    cx.expr(cx.model.strip(a)).kind,
                    ExprKind::Name { .. } | ExprKind::Closure(_)
                )
            }),
            "wait" | "acquire" => method && c.args.len() <= 1,
            "send" | "send_async" => method && asserted.contains(&e),
            // tower-test's `assert_request_eq!(handle, req)` awaits the
            // mock's next request (`handle.next_request().await`).
            "assert_request_eq" => c.is_macro,
            // `let res = processor.force_flush(); assert!(res.is_ok())`: a
            // flush the assertion checks returns once the other side has
            // taken everything (or failed to).
            "flush" | "force_flush" => method && (asserted.contains(&e) || bound_and_asserted(e)),
            // `stream.read(&mut buf)`: waits for the peer's bytes or its
            // close, unless the test put a timeout on the socket.
            "read" | "read_exact" | "read_to_end" | "read_to_string" | "read_line" => {
                method && !ends_peer && !times_out_reads(cx)
            }
            _ => false,
        }
    })
}

/// The file sets a read timeout or non-blocking mode on a socket: its
/// reads may return before the peer acts.
fn times_out_reads(cx: &FileCx) -> bool {
    cx.model.exprs.iter().any(|e| {
        matches!(&e.kind, ExprKind::Call(c)
            if matches!(c.name.as_str(), "set_read_timeout" | "set_nonblocking"))
    })
}

/// `handle.await` on the handle of a task this function spawned
/// (`let handle = tokio::spawn(..)`): it waits for the task to end.
fn awaits_spawned_task(cx: &FileCx, awaited: ExprId) -> bool {
    let awaited = cx.model.strip(awaited);
    // `timeout(d, handle).await`: the handle, with a deadline.
    if let Some(c) = cx.call(awaited)
        && c.name == "timeout"
        && let Some(inner) = c.positional(1)
    {
        return awaits_spawned_task(cx, inner);
    }
    let Some(name) = cx.model.name_of(awaited) else {
        return false;
    };
    if let Some((_, handles)) = loop_over(cx, awaited, name) {
        return holds_spawned(cx, handles);
    }
    let Some(decl) = common::declaration_of(cx, name, awaited) else {
        return false;
    };
    let StmtKind::Assign { value: Some(v), .. } = &cx.stmt(decl).kind else {
        return false;
    };
    cx.call(common::unwrap_value(cx, *v))
        .is_some_and(|c| cx.effect(c, Effect::Spawn).is_some())
}

/// The innermost `for` loop around `at` that binds `name` (`for t in
/// tasks`, `for (i, t) in ..`): its target and the collection it goes over.
fn loop_over(cx: &FileCx, at: ExprId, name: &str) -> Option<(ExprId, ExprId)> {
    let s = cx.tree.enclosing_stmt(at)?;
    std::iter::once(s)
        .chain(cx.tree.stmt_ancestors(s))
        .find_map(|a| match &cx.stmt(a).kind {
            StmtKind::For {
                target: Some(t),
                iter,
                ..
            } if unsnarl_model::walk::exprs_under(cx.model, *t)
                .into_iter()
                .any(|y| cx.model.name_of(y) == Some(name)) =>
            {
                Some((*t, *iter))
            }
            _ => None,
        })
}

/// `tasks` (or `&mut tasks`, `tasks.drain(..)`) is a local of this
/// function filled with spawned tasks' handles: `tasks.push(spawn(..))`,
/// or built by a `map` that spawns and `collect`s.
fn holds_spawned(cx: &FileCx, handles: ExprId) -> bool {
    let root = unsnarl_model::walk::exprs_under(cx.model, handles)
        .into_iter()
        .find_map(|x| cx.model.name_of(x).map(|n| (x, n)));
    let Some((at, name)) = root else {
        return false;
    };
    let spawns = |e: ExprId| {
        unsnarl_model::walk::exprs_under(cx.model, e)
            .into_iter()
            .any(|x| {
                cx.call(x)
                    .is_some_and(|c| cx.effect(c, Effect::Spawn).is_some())
            })
    };
    let pushed = cx.calls_named(&["push"]).into_iter().any(|(_, c)| {
        c.receiver.and_then(|r| cx.model.name_of(r)) == Some(name)
            && c.positional(0).is_some_and(spawns)
            && c.receiver.is_some_and(|r| cx.func_of(r) == cx.func_of(at))
    });
    pushed
        || common::declaration_of(cx, name, at).is_some_and(
            |d| matches!(&cx.stmt(d).kind, StmtKind::Assign { value: Some(v), .. } if spawns(*v)),
        )
}

fn is_assert(cx: &FileCx, e: ExprId) -> bool {
    cx.call(e)
        .is_some_and(|c| c.is_macro && c.name.starts_with("assert"))
}

/// The sleep is a grace window for something that must not have happened
/// (`assert_err!(rx.try_recv())`, `assert_pending!(fut)`): the first
/// assertion after it checks an absence, which a slow machine cannot make
/// fail, and any later check comes after a real wait.
fn absence_check(cx: &FileCx, rest: &[StmtId]) -> bool {
    let window = up_to_first_assert(cx, rest);
    let Some(&first) = window.last() else {
        return false;
    };
    // "Not yet": a `try_*` poll that fails (`assert_err!(rx.try_recv())`,
    // `assert!(rx.try_recv().is_err())`) or a pending future. (`is_none()`
    // or a negated flag is no absence: an expired cache entry is `None`
    // too, and `!cache.contains(k)` after a TTL is an event.)
    // (`recv_timeout` waits a while itself, then says nothing came.)
    let polls = |e: ExprId| {
        unsnarl_model::walk::exprs_under(cx.model, e)
            .into_iter()
            .any(|x| {
                cx.call(x)
                    .is_some_and(|k| k.name.starts_with("try_") || k.name == "recv_timeout")
            })
    };
    // A receive that found nothing (`rx.try_recv().unwrap().is_none()` on
    // a channel whose `try_recv` gives an `Option`): not a cache lookup,
    // whose `None` may mean an entry expired.
    let received_nothing = |e: ExprId| {
        cx.call(e).is_some_and(|k| k.name == "is_none")
            && unsnarl_model::walk::exprs_under(cx.model, e)
                .into_iter()
                .any(|x| {
                    cx.call(x)
                        .is_some_and(|k| matches!(k.name.as_str(), "try_recv" | "try_next"))
                })
    };
    let negative = |e: ExprId| {
        let Some(c) = cx.call(e) else { return false };
        if !(c.is_macro && c.name.starts_with("assert")) {
            return false;
        }
        let Some(a) = c.positional(0) else {
            return false;
        };
        match c.name.as_str() {
            "assert_pending" => true,
            "assert_err" => polls(a),
            "assert_eq" => counter_still_zero(cx, c),
            "assert" => {
                (cx.call(a).is_some_and(|k| k.name == "is_err") && polls(a))
                    || received_nothing(a)
                    || failed_poll_matched(cx, a, &polls)
                    || matches!(&cx.expr(a).kind, ExprKind::Unary { op: UnOp::Not, operand }
                        if one_way_flag_off(cx, *operand))
            }
            _ => false,
        }
    };
    let first_asserts: Vec<ExprId> = exprs_in_block(cx.model, &vec![first])
        .into_iter()
        .filter(|&e| is_assert(cx, e))
        .collect();
    if first_asserts.is_empty() || !first_asserts.iter().all(|&e| negative(e)) {
        return false;
    }
    let after = &rest[window.len()..];
    // Up to the next sleep: the checks after it are that sleep's to
    // answer for (and are reported there if they need it).
    let after = &after[..after
        .iter()
        .position(|&s| stmt_sleep(cx, s).is_some())
        .unwrap_or(after.len())];
    let next_positive = after.iter().position(|&s| {
        exprs_in_block(cx.model, &vec![s])
            .into_iter()
            .any(|e| is_assert(cx, e) && !negative(e))
    });
    match next_positive {
        None => true,
        Some(i) => {
            // From after the last absence check before it (`assert!(!x)`
            // lines are not what the positive check waits behind).
            let from = after[..i]
                .iter()
                .rposition(|&s| {
                    exprs_in_block(cx.model, &vec![s])
                        .into_iter()
                        .any(|e| is_assert(cx, e) && negative(e))
                })
                .map_or(0, |k| k + 1);
            observes_by_blocking(cx, &after[from..=i])
        }
    }
}

/// `let fired = counter.swap(0, ..); assert_eq!(fired, 0)` (or a
/// `load`): a counter still at zero, in a file whose atomics only ever
/// count up (`fetch_add`) or go back to zero, so zero means nothing has
/// happened yet, which a slower machine cannot change.
fn counter_still_zero(cx: &FileCx, c: &Call) -> bool {
    let zero = |e: ExprId| matches!(cx.model.literal(e), Some(Lit::Int(0)));
    let (Some(a), Some(b)) = (c.positional(0), c.positional(1)) else {
        return false;
    };
    let read = match (zero(a), zero(b)) {
        (false, true) => a,
        (true, false) => b,
        _ => return false,
    };
    let read = super::common::declared_value(cx, read).unwrap_or(read);
    let Some(k) = cx.call(cx.model.strip(read)) else {
        return false;
    };
    let resets =
        |k: &Call| matches!(k.name.as_str(), "swap" | "store") && k.positional(0).is_some_and(zero);
    if k.receiver.is_none() || !(k.name == "load" || resets(k)) {
        return false;
    }
    // No atomic of the file ever counts down or is set to anything else
    // (flags set to `true`/`false` aside).
    cx.model.exprs.iter().all(|x| {
        let ExprKind::Call(k) = &x.kind else {
            return true;
        };
        match k.name.as_str() {
            "store" | "swap" => k
                .positional(0)
                .is_some_and(|v| zero(v) || matches!(cx.model.literal(v), Some(Lit::Bool(_)))),
            "fetch_sub"
            | "fetch_and"
            | "fetch_nand"
            | "fetch_xor"
            | "fetch_or"
            | "fetch_min"
            | "fetch_max"
            | "fetch_update"
            | "compare_exchange"
            | "compare_exchange_weak" => false,
            _ => true,
        }
    })
}

/// `matches!(rx.try_recv(), Err(TryRecvError::Empty))`: a `try_*` poll
/// matched against its "nothing there yet" error. A disconnected or closed
/// channel is something that happened, so those patterns do not count.
fn failed_poll_matched(cx: &FileCx, a: ExprId, polls: &dyn Fn(ExprId) -> bool) -> bool {
    let Some(m) = cx.call(a).filter(|m| m.is_macro && m.name == "matches") else {
        return false;
    };
    let Some(polled) = m.positional(0).filter(|&p| polls(p)) else {
        return false;
    };
    let (from, to) = (
        cx.expr(polled).span.end as usize,
        cx.expr(a).span.end as usize,
    );
    let pattern = cx.text.get(from..to).unwrap_or("");
    pattern.contains("Err") && !pattern.contains("Disconnected") && !pattern.contains("Closed")
}

/// A flag that only ever turns on, read as still off: an atomic whose
/// every store in the file is `true` (`done.load(..)`), a cancellation
/// token's `is_cancelled()`, a task's `is_finished()`. Once on it stays
/// on, so "still off" after a sleep is an absence: a slower machine cannot
/// make it fail.
fn one_way_flag_off(cx: &FileCx, e: ExprId) -> bool {
    let Some(c) = cx.call(cx.model.strip(e)) else {
        return false;
    };
    // A task or thread that has finished stays finished.
    if matches!(c.name.as_str(), "is_cancelled" | "is_finished") && c.args.is_empty() {
        return true;
    }
    if c.name != "load" {
        return false;
    }
    let Some(flag) = c.receiver.and_then(|r| cx.model.dotted(r)) else {
        return false;
    };
    // The flag's last segment: `done` and `self.done`, or a clone's name.
    let last = flag.rsplit('.').next().unwrap_or(&flag).to_string();
    let stores: Vec<&Call> = cx
        .calls_named(&["store"])
        .into_iter()
        .map(|(_, k)| k)
        .filter(|k| {
            k.receiver
                .and_then(|r| cx.model.dotted(r))
                .is_some_and(|d| d.rsplit('.').next() == Some(last.as_str()))
        })
        .collect();
    !stores.is_empty()
        && stores.iter().all(|k| {
            k.positional(0)
                .is_some_and(|v| matches!(cx.model.literal(v), Some(Lit::Bool(true))))
        })
}

/// The statements after a sleep up to (and including) the first one with
/// an assertion in it.
/// Before the first assertion after the sleep, the test polls through a
/// retry helper (`tryhard::retry_fn(|| ..)`, `backoff::future::retry`,
/// `tokio_retry::Retry::spawn`): the check waits for the other side with a
/// deadline, and the sleep only gives it a head start.
fn polls_with_retry_helper(cx: &FileCx, rest: &[StmtId]) -> bool {
    const CRATES: &[&str] = &[
        "tryhard::",
        "backoff::",
        "tokio_retry::",
        "again::",
        "retry::",
    ];
    up_to_first_assert(cx, rest).into_iter().any(|s| {
        exprs_in_block(cx.model, &vec![s]).into_iter().any(|e| {
            cx.call(e).is_some_and(|c| {
                c.target
                    .as_deref()
                    .is_some_and(|t| CRATES.iter().any(|k| t.starts_with(k)))
                    || matches!(c.name.as_str(), "retry_fn" | "retry_notify")
            })
        })
    })
}

fn up_to_first_assert(cx: &FileCx, rest: &[StmtId]) -> Vec<StmtId> {
    let end = rest
        .iter()
        .position(|&s| {
            exprs_in_block(cx.model, &vec![s])
                .into_iter()
                .any(|e| is_assert(cx, e))
        })
        .map_or(rest.len(), |i| i + 1);
    rest[..end].to_vec()
}

/// The first assertions after the sleep read only what the sleeping code
/// owns: its locals built from literals and constants, loop variables over
/// those, task-locals and thread-locals (`REQ_ID.get()`, `FLAG.with(..)`).
/// Nothing running concurrently can change them, so the outcome does not
/// hang on the sleep's length (the sleep is there to let other tasks
/// interleave, not to wait for them).
fn private_assertions(cx: &FileCx, f: FuncId, rest: &[StmtId]) -> bool {
    let asserts: Vec<ExprId> = exprs_in_block(cx.model, &up_to_first_assert(cx, rest))
        .into_iter()
        .filter(|&e| is_assert(cx, e))
        .collect();
    !asserts.is_empty() && asserts.iter().all(|&a| private_expr(cx, f, a, &[], 0))
}

fn private_expr(cx: &FileCx, f: FuncId, e: ExprId, params: &[String], depth: u32) -> bool {
    if depth > 4 {
        return false;
    }
    unsnarl_model::walk::exprs_under(cx.model, e)
        .into_iter()
        .all(|x| match &cx.expr(x).kind {
            // A free function or constructor call: only constructors
            // (`Some(..)`, `Ok(..)`, `Point { .. }`) are known to read
            // nothing shared.
            ExprKind::Call(c) if !c.is_macro && c.receiver.is_none() => {
                c.name.starts_with(|ch: char| ch.is_ascii_uppercase())
            }
            ExprKind::Closure(g) => {
                let mut inner: Vec<String> = params.to_vec();
                inner.extend(cx.func(*g).params.iter().map(|p| p.name.to_string()));
                cx.body_exprs(*g)
                    .iter()
                    .copied()
                    .all(|y| private_expr(cx, f, y, &inner, depth + 1))
            }
            ExprKind::Name { id, resolved: None } => {
                is_callee(cx, x)
                    || params.iter().any(|p| p == id)
                    || private_name(cx, f, x, id, depth)
            }
            // An item of this file: a `static` built by a call
            // (`AtomicUsize::new(0)`) is what other threads bump; a `const`
            // or a `static` of literals is fixed.
            ExprKind::Name {
                resolved: Some(q), ..
            } if !is_callee(cx, x) => {
                module_item_value(cx, q).is_none_or(|v| private_expr(cx, f, v, &[], depth + 1))
            }
            _ => true,
        })
}

/// The value a module-level `static` or `const` of this file named
/// `qualified` is declared with.
fn module_item_value(cx: &FileCx, qualified: &str) -> Option<ExprId> {
    cx.model.stmts.iter().find_map(|st| match &st.kind {
        StmtKind::Assign {
            targets,
            op: AssignOp::Declare { .. },
            value: Some(v),
        } if targets.iter().any(|&t| {
            matches!(&cx.expr(t).kind, ExprKind::Name { resolved: Some(r), .. } if r.as_str() == qualified)
        }) =>
        {
            Some(*v)
        }
        _ => None,
    })
}

/// `x` is the callee of a call (`f` in `f(..)`), judged with the call.
fn is_callee(cx: &FileCx, x: ExprId) -> bool {
    matches!(cx.tree.expr_parent(x), unsnarl_model::walk::Parent::Expr(p)
        if cx.call(p).is_some_and(|c| c.func == x))
}

fn private_name(cx: &FileCx, f: FuncId, x: ExprId, id: &str, depth: u32) -> bool {
    let constant = id.chars().any(|c| c.is_ascii_uppercase())
        && id
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    if constant {
        return match super::common::method_on(cx, x).map(|c| c.name.as_str()) {
            None => true,
            Some(m) => {
                matches!(m, "get" | "with" | "try_with" | "with_borrow")
                    && declared_in_local_macro(cx, id)
            }
        };
    }
    // A loop variable over something private.
    if let Some((t, iter)) = loop_over(cx, x, id) {
        return cx.func_of(t) == f && private_expr(cx, f, iter, &[], depth + 1);
    }
    // A `let` of the sleeping function built from private values.
    let Some(d) = common::declaration_of(cx, id, x) else {
        return false;
    };
    match &cx.stmt(d).kind {
        StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } => {
            targets.first().is_some_and(|&t| cx.func_of(t) == f)
                && private_expr(cx, f, *v, &[], depth + 1)
        }
        _ => false,
    }
}

/// `static NAME` is declared inside a `thread_local!` or `task_local!`
/// block of this file: every thread or task has its own.
fn declared_in_local_macro(cx: &FileCx, name: &str) -> bool {
    let text = cx.text;
    ["thread_local!", "task_local!"].iter().any(|m| {
        text.match_indices(m).any(|(i, _)| {
            let rest = &text[i + m.len()..];
            let Some(open) = rest.find(['{', '(']) else {
                return false;
            };
            let mut level = 0usize;
            let mut end = rest.len();
            for (j, ch) in rest[open..].char_indices() {
                match ch {
                    '{' | '(' => level += 1,
                    '}' | ')' => {
                        level -= 1;
                        if level == 0 {
                            end = open + j;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let body = &rest[open..end];
            body.match_indices("static").any(|(k, _)| {
                let after = body[k + "static".len()..].trim_start();
                let after = after.strip_prefix("mut ").unwrap_or(after).trim_start();
                after
                    .strip_prefix(name)
                    .is_some_and(|t| t.trim_start().starts_with(':'))
            })
        })
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
    attr || cx.body_exprs(top).iter().any(|&e| {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread")]
    async fn batch_processor_exports_on_tick() {
        let (exporter, mut export_receiver) = new_exporter();
        let processor = BatchSpanProcessor::new(exporter);
        let handle = tokio::spawn(async move { export_receiver.recv().await });
        processor.on_end(span());
        tokio::time::sleep(Duration::from_secs(1)).await; // expect
        let exported = processor.exported_count();
        assert_eq!(exported, 1);
        handle.abort();
    }
}
"#,
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
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn slot_is_taken_while_waiting() {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<()>(1);
    let busy = Arc::new(AtomicBool::new(false));
    let b = busy.clone();
    tokio::spawn(async move {
        b.store(true, Ordering::SeqCst);
        rx.recv().await;
        b.store(false, Ordering::SeqCst);
    });
    tokio::time::sleep(Duration::from_millis(25)).await; // expect
    assert!(busy.load(Ordering::SeqCst));
    tx.send(()).await.unwrap();
}

// One thread, but the task writes a file: the write runs on tokio's
// blocking pool, and the sleep guesses how long the disk takes.
#[tokio::test]
async fn log_is_written() {
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    tokio::spawn(async move {
        tokio::fs::write("out.log", b"x").await.unwrap();
        d.store(true, Ordering::SeqCst);
    });
    tokio::time::sleep(Duration::from_millis(25)).await; // expect
    assert!(done.load(Ordering::SeqCst));
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
        r#"
use std::time::Duration;

static HITS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

// A static is shared with the spawned task, which runs on another worker.
#[tokio::test(flavor = "multi_thread")]
async fn counts_hits() {
    tokio::spawn(async {
        HITS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    });
    tokio::time::sleep(Duration::from_millis(10)).await; // expect
    assert_eq!(HITS.load(std::sync::atomic::Ordering::SeqCst), 1);
}

// `try_recv` looks once: whether the value is there depends on the sleep.
#[test]
fn value_arrives() {
    let (s, r) = crossbeam_channel::unbounded();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(100)); // expect
            assert_eq!(r.try_recv(), Ok(1));
        });
        s.send(1).unwrap();
    });
}
"#,
        r#"
use std::net::TcpStream;
use std::thread;
use std::time::Duration;

#[test]
fn server_starts() {
    let addr = "127.0.0.1:7070";
    let _h = thread::spawn(move || serve_on(addr));
    thread::sleep(Duration::from_millis(300)); // expect
    assert!(TcpStream::connect(addr).is_ok());
}
"#,
        r#"
use std::thread;
use std::time::Duration;
use std::sync::atomic::{AtomicBool, Ordering};

#[test]
fn flag_is_cleared_later() {
    let flag = std::sync::Arc::new(AtomicBool::new(false));
    let f = flag.clone();
    thread::spawn(move || f.store(true, Ordering::SeqCst));
    thread::sleep(Duration::from_millis(50)); // expect
    assert!(!flag.load(Ordering::SeqCst));
}
"#,
        r#"
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

#[test]
fn second_stage_runs() {
    let stage = Arc::new(AtomicUsize::new(0));
    let s = stage.clone();
    thread::scope(|scope| {
        scope.spawn(|| {
            thread::sleep(Duration::from_millis(100));
            s.store(1, Ordering::SeqCst);
            thread::sleep(Duration::from_millis(300)); // expect
            assert_eq!(stage.load(Ordering::SeqCst), 2);
        });
        scope.spawn(|| {
            while stage.load(Ordering::SeqCst) == 0 {}
            stage.store(2, Ordering::SeqCst);
        });
    });
}
"#,
        r#"
use std::time::Duration;

#[tokio::test]
async fn pause_ends() {
    let c = Consumer::start(false).await;
    assert!(!c.info().await.paused);
    let c = Consumer::start(true).await;
    assert!(c.info().await.paused);
    tokio::time::sleep(Duration::from_secs(4)).await; // expect
    assert!(!c.info().await.paused);
}
"#,
        r#"
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

static RUNS: AtomicUsize = AtomicUsize::new(0);

fn start_worker() {
    tokio::spawn(async {
        RUNS.fetch_add(1, Ordering::SeqCst);
    });
}

#[tokio::test]
async fn worker_runs_once() {
    start_worker();
    tokio::time::sleep(Duration::from_millis(100)).await; // expect
    assert_eq!(RUNS.load(Ordering::SeqCst), 1);
}
"#,
        r#"
use std::process::Stdio;
use tokio::io::AsyncReadExt;
use tokio::time::{sleep, Duration};

#[tokio::test]
async fn kill_on_drop() {
    let mut child = cmd.kill_on_drop(true).stdout(Stdio::piped()).spawn().unwrap();
    sleep(Duration::from_secs(2)).await; // expect
    let mut out = child.stdout.take().unwrap();
    drop(child);
    let mut msg = String::new();
    out.read_to_string(&mut msg).await.unwrap();
    assert_eq!("child ran\n", msg);
}
"#,
        r#"
use std::time::Duration;

#[tokio::test]
async fn expired_items_are_dropped_by_the_sweeper() {
    let q = Queue::with_sweeper(Duration::from_millis(5));
    q.push(9, Some(Duration::from_millis(1)));
    // The sweeper is the library's own task: 2 ms is a guess at when it ran.
    tokio::time::sleep(Duration::from_millis(20)).await; // expect
    assert_eq!(q.len(), 0);
}
"#,
        r#"
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::time::{sleep, Duration};
use tokio_util::sync::CancellationToken;

async fn worker(token: CancellationToken, done: Arc<AtomicBool>) {
    token.cancelled().await;
    done.store(true, Ordering::Release);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_stops_soon_after_cancel() {
    let token = CancellationToken::new();
    let done = Arc::new(AtomicBool::new(false));
    let _h = tokio::spawn(worker(token.clone(), Arc::clone(&done)));
    token.cancel();
    sleep(Duration::from_millis(50)).await; // expect
    assert!(done.load(Ordering::Acquire));
}
"#,
        r#"
use std::time::Duration;

// The task may not have started yet: "finished" is a guess at how long
// it takes.
#[tokio::test(flavor = "multi_thread")]
async fn task_ends_quickly() {
    let h = tokio::spawn(async { compute().await });
    tokio::time::sleep(Duration::from_millis(50)).await; // expect
    assert!(h.is_finished());
}
"#,
        r#"
use std::sync::mpsc::{channel, TryRecvError};
use std::thread;
use std::time::Duration;

#[test]
fn worker_reports_once() {
    let (tx, rx) = channel();
    thread::spawn(move || tx.send(work()).unwrap());
    thread::sleep(Duration::from_millis(100)); // expect
    assert!(matches!(rx.try_recv(), Ok(_)));
}
"#,
        r#"
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

// The tasks are never joined: the count is read whenever the sleep ends.
#[tokio::test(flavor = "multi_thread")]
async fn every_task_counts() {
    let n = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..10 {
        let n = n.clone();
        tasks.push(tokio::spawn(async move { n.fetch_add(1, Ordering::SeqCst) }));
    }
    tokio::time::sleep(Duration::from_millis(50)).await; // expect
    assert_eq!(n.load(Ordering::SeqCst), 10);
}
"#,
        r#"
use std::time::Duration;

// Two worker threads: the spawned task runs beside the blocking sleep.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refresh_runs_in_background() {
    let cache = Cache::new();
    let c = cache.clone();
    tokio::spawn(async move { c.refresh().await });
    std::thread::sleep(Duration::from_millis(200)); // expect
    assert!(cache.is_fresh());
}
"#,
        r#"
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[actix::test]
async fn counts_on_another_thread() {
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = n.clone();
    std::thread::spawn(move || {
        n2.fetch_add(1, Ordering::SeqCst);
    });
    actix_rt::time::sleep(Duration::from_millis(10)).await; // expect
    assert_eq!(n.load(Ordering::SeqCst), 1);
}
"#,
        r#"
use ntex::time::{sleep, Millis};

#[ntex::test]
async fn closes_write_side_on_error() {
    let stream = std::net::TcpStream::connect("127.0.0.1:8080").unwrap();
    let (disp, state) = Dispatcher::debug(Io::new(stream), BytesCodec, failing_service());
    ntex::rt::spawn(async move {
        let _ = disp.await;
    });
    sleep(Millis(250)).await; // expect
    assert!(state.is_closed());
}
"#,
        r#"
use std::{net, sync::mpsc, thread, time};

#[test]
fn answers_before_binding() {
    let addr = unused_addr();
    let (tx, rx) = mpsc::channel();
    let h = thread::spawn(move || {
        let _ = tx.send(addr);
        let srv = build().workers(1).bind("test", addr, make_service).unwrap().run();
        srv.wait();
    });
    let addr = rx.recv().unwrap();
    thread::sleep(time::Duration::from_millis(300)); // expect
    assert!(net::TcpStream::connect(addr).is_ok());
    let _ = h.join();
}
"#,
        r#"
use std::{io::Read, net, sync::mpsc, thread, time};

// The listener was bound long before; the sleep bets on the pause, which
// reaches the accept thread whenever it gets there.
#[test]
fn pause_stops_accepting() {
    let addr = unused_addr();
    let (tx, rx) = mpsc::channel();
    let h = thread::spawn(move || {
        let srv = build().workers(1).bind("test", addr, make_service).unwrap().run();
        let _ = tx.send(srv);
        run_forever();
    });
    let srv = rx.recv().unwrap();
    let _ = srv.pause();
    thread::sleep(time::Duration::from_millis(200)); // expect
    let mut conn = net::TcpStream::connect(addr).unwrap();
    conn.set_read_timeout(Some(time::Duration::from_millis(100))).unwrap();
    let mut buf = [0u8; 4];
    assert!(conn.read_exact(&mut buf).is_err());
    let _ = h.join();
}
"#,
        r#"
use ntex::time::{sleep, Millis};

#[ntex::test]
async fn wakes_reader_on_write() {
    let (client, _server) = IoTest::create();
    let io = Io::new(std::net::TcpStream::connect("127.0.0.1:9000").unwrap());
    client.write(TEXT);
    sleep(Millis(50)).await; // expect
    assert!(lazy(|cx| io.poll_read_ready(cx)).await.is_ready());
}
"#,
        r#"
#[cfg(test)]
mod tests {
    use crate::time::{sleep, Millis};

    #[crate::rt_test]
    async fn closes_after_bad_request() {
        let server = std::net::TcpStream::connect("127.0.0.1:9000").unwrap();
        let mut h1 = h1(server, ok_service);
        sleep(Millis(50)).await; // expect
        assert!(poll_fn(|cx| Pin::new(&mut h1).poll(cx)).await.is_ok());
    }
}
"#,
        r#"
use std::time::Duration;

#[async_std::test]
async fn worker_picks_up_the_job() {
    let (tx, rx) = async_std::channel::bounded(1);
    let worker = async_std::task::spawn(run_worker(rx));
    tx.send(Job::new()).await.unwrap();
    async_std::task::sleep(Duration::from_millis(50)).await; // expect
    assert_eq!(processed(), 1);
    worker.cancel().await;
}
"#,
        r#"
// After the absence comes a check of a moment, which the sleep decides.
use std::time::Duration;
use tokio_test::{assert_pending, assert_ready, assert_request_eq, task};
use tower_test::mock;

#[tokio::test]
async fn dropped_request_is_skipped() {
    let (service, mut handle) = mock::pair::<&str, &str>();
    let (batch, worker) = Batch::pair(service, 2);
    tokio::spawn(worker);
    let mut first = task::spawn(batch.call("first"));
    let second = task::spawn(batch.call("second"));
    drop(second);
    tokio::time::sleep(Duration::from_millis(10)).await; // expect
    assert_pending!(first.poll());
    handle.allow(1);
    assert_ready!(first.poll());
}
"#,
        r#"
// Counting firings after a sleep: the count depends on how late the test wakes.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn defused_event_never_fires() {
    let timer = Timer::default();
    let counter = Arc::new(AtomicUsize::new(0));
    let c = counter.clone();
    let handle = timer.add_async(move || {
        c.fetch_add(1, Ordering::SeqCst);
    });
    handle.defuse();
    tokio::time::sleep(Duration::from_millis(300)).await; // expect
    let fired = counter.swap(0, Ordering::SeqCst);
    assert_eq!(fired, 3);
}
"#,
        r#"
// The first sleep ends in an absence; the second one's count is a guess.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn fires_once_after_rearm() {
    let timer = Timer::default();
    let counter = Arc::new(AtomicUsize::new(0));
    let c = counter.clone();
    let handle = timer.add_async(move || {
        c.fetch_add(1, Ordering::SeqCst);
    });
    handle.defuse();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(counter.swap(0, Ordering::SeqCst), 0);
    timer.rearm(&handle);
    tokio::time::sleep(Duration::from_millis(300)).await; // expect
    assert_eq!(counter.swap(0, Ordering::SeqCst), 1);
}
"#,
        r#"
// A receive that must have got the message by now: a guess at the timing.
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

#[test]
fn unsubscribed_listener_hears_nothing() {
    let (tx, rx) = mpsc::channel();
    let bus = Bus::new();
    let id = bus.subscribe(move |ev| tx.send(ev).unwrap());
    bus.unsubscribe(id);
    thread::spawn(move || bus.publish("ping"));
    thread::sleep(Duration::from_millis(100)); // expect
    assert!(rx.recv_timeout(Duration::from_millis(100)).is_ok());
}
"#,
    ],
    pass: &[
        r#"
use std::time::Duration;

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread")]
    async fn batch_processor_exports_on_flush() {
        let (exporter, mut export_receiver) = new_exporter();
        let processor = BatchSpanProcessor::new(exporter);
        let handle = tokio::spawn(async move { export_receiver.recv().await });
        tokio::time::sleep(Duration::from_secs(1)).await; // skip the first tick
        processor.on_end(span());
        let flush_res = processor.force_flush();
        assert!(flush_res.is_ok());
        assert!(tokio::time::timeout(Duration::from_secs(5), handle).await.is_ok());
    }
}
"#,
        r#"
use std::time::Duration;

// The task waits for the go signal: "not finished yet" cannot fail on a
// slow machine, and the end is then awaited with a deadline.
#[tokio::test(flavor = "multi_thread")]
async fn task_waits_for_go() {
    let (go_tx, go_rx) = tokio::sync::oneshot::channel::<()>();
    let h = tokio::spawn(async move { go_rx.await.ok(); });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!h.is_finished());
    go_tx.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(1), h).await.unwrap().unwrap();
}
"#,
        r#"
use std::sync::mpsc::{channel, TryRecvError};
use std::thread;
use std::time::Duration;

#[test]
fn worker_waits_for_its_input() {
    let (tx, rx) = channel::<u32>();
    let (in_tx, in_rx) = channel::<u32>();
    thread::spawn(move || tx.send(in_rx.recv().unwrap() * 2).unwrap());
    thread::sleep(Duration::from_millis(100));
    assert!(matches!(rx.try_recv(), Err(TryRecvError::Empty)));
    in_tx.send(4).unwrap();
    assert_eq!(rx.recv().unwrap(), 8);
}
"#,
        r#"
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

// Every task is joined before the check: the sleep only lets them start
// waiting on the condition first.
#[tokio::test(flavor = "multi_thread")]
async fn every_task_counts() {
    let n = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..10 {
        let n = n.clone();
        tasks.push(tokio::spawn(async move { n.fetch_add(1, Ordering::SeqCst) }));
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(n.load(Ordering::SeqCst), 10);
}
"#,
        r#"
use std::time::Duration;

// One runtime thread and nothing spawned: the blocking sleep stops the
// whole test, so nothing can move while it lasts.
#[tokio::test]
async fn purge_then_check() {
    let cache = Cache::new();
    cache.insert(1, "a").await;
    cache.run_pending_tasks().await;
    std::thread::sleep(Duration::from_millis(200));
    assert!(cache.get(&1).await.is_none());
}
"#,
        r#"
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::time::{sleep, Duration};
use tokio_util::sync::CancellationToken;

// One thread: once cancelled, the task runs to its end during the sleep.
#[tokio::test]
async fn worker_stops_after_cancel() {
    let token = CancellationToken::new();
    let done = Arc::new(AtomicBool::new(false));
    let (t, d) = (token.clone(), done.clone());
    tokio::spawn(async move {
        t.cancelled().await;
        d.store(true, Ordering::SeqCst);
    });
    token.cancel();
    sleep(Duration::from_millis(50)).await;
    assert!(done.load(Ordering::SeqCst));
}
"#,
        r#"
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

// One thread, and nothing outside it: the sleep lets the task run until it
// parks on the channel, however loaded the machine.
#[tokio::test]
async fn slot_is_taken_while_waiting() {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<()>(1);
    let busy = Arc::new(AtomicBool::new(false));
    let b = busy.clone();
    tokio::spawn(async move {
        b.store(true, Ordering::SeqCst);
        rx.recv().await;
        b.store(false, Ordering::SeqCst);
    });
    tokio::time::sleep(Duration::from_millis(25)).await;
    assert!(busy.load(Ordering::SeqCst));
    tx.send(()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(25)).await;
    assert!(!busy.load(Ordering::SeqCst));
}
"#,
        r#"
use std::time::Duration;

const RETRIES: usize = 3;
static NAMES: &[&str] = &["a", "b"];

#[tokio::test]
async fn settings_hold_while_others_run() {
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(NAMES.len() + RETRIES, 5);
}
"#,
        r#"
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[tokio::test]
async fn no_more_wakeups_after_close() {
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    let sub = Bus::subscribe(move || {
        h.fetch_add(1, Ordering::SeqCst);
    });
    Bus::publish().await;
    sub.close();
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}
"#,
        r#"
use std::thread;
use std::time::Duration;

#[test]
fn receiver_gets_value_sent_later() {
    let (tx, rx) = std::sync::mpsc::channel::<u32>();
    let t = thread::spawn(move || rx.recv());
    thread::sleep(Duration::from_millis(200));
    tx.send(9).unwrap();
    assert_eq!(t.join().unwrap(), Ok(9));
}
"#,
        r#"
use std::thread;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio_test::assert_err;

#[test]
fn task_waits_for_driver() {
    let (tx, mut rx) = oneshot::channel();
    let rt = test_runtime();
    rt.spawn(async move {
        let _ = tx.send(1u8);
    });
    thread::sleep(Duration::from_millis(50));
    assert_err!(rx.try_recv());
    let v = rt.block_on(async { rx.await.unwrap() });
    assert_eq!(v, 1);
}
"#,
        r#"
use std::thread;
use std::time::Duration;
use futures_lite::future;

#[test]
fn join_while_running() {
    let (runnable, handle, polls) = spawn_slow_task();
    Parallel::new()
        .add(|| runnable.run())
        .add(|| {
            thread::sleep(Duration::from_millis(100));
            future::block_on(handle);
            assert_eq!(polls.load(Ordering::SeqCst), 1);
        })
        .run();
}
"#,
        r#"
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

#[test]
fn server_accepts_on_prebound_socket() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    let _h = thread::spawn(move || serve(listener, tx));
    rx.recv().unwrap();
    thread::sleep(Duration::from_millis(300));
    assert!(TcpStream::connect(addr).is_ok());
}
"#,
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

#[tokio::test]
async fn writer_gives_up_when_the_reader_leaves() {
    let (mut input, reader) = pipe_with_reader_that_quits();
    let handle = tokio::spawn(async move {
        loop {
            input.write_all(&[0u8; 8192]).await?;
        }
    });
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert!(handle.await.unwrap().is_err());
}

#[tokio::test]
async fn watcher_sees_every_put() {
    let mut watch = store.watch_all().await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    put_ten(&store).await;
    let mut seen = 0;
    while let Some(entry) = watch.next().await {
        assert_eq!(entry.unwrap().revision, seen + 1);
        seen += 1;
    }
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
        r#"
use std::time::Duration;

// The checks after the sleep block until the other side acts, so they pass
// however long it takes; the sleep only makes the interleaving likely.
#[test]
fn recv_waits_for_sender() {
    let (s, r) = crossbeam_channel::bounded(1);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(100));
            assert_eq!(r.recv(), Ok(1));
        });
        s.send(1).unwrap();
    });
}

#[tokio::test]
async fn reply_arrives() {
    let (tx, mut rx) = tokio::sync::mpsc::channel(1);
    tokio::spawn(async move {
        tx.send(5).await.unwrap();
    });
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(rx.recv().await, Some(5));
}

tokio::task_local! {
    static TRACE_ID: u64;
}

// The checks after the sleep read only what the sleeping task owns (a
// task-local, its own buffer): nothing concurrent can change them.
#[tokio::test]
async fn trace_id_survives_a_yield() {
    let t = tokio::spawn(TRACE_ID.scope(7, async move {
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert_eq!(TRACE_ID.get(), 7);
    }));
    tokio::spawn(TRACE_ID.scope(8, async {}));
    t.await.unwrap();
}

#[tokio::test]
async fn buffer_survives_suspension() {
    let h = tokio::spawn(async {
        let mut buf = [0u8; 64];
        for (i, b) in buf.iter_mut().enumerate() {
            *b = i as u8;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
        for (i, b) in buf.iter().enumerate() {
            assert_eq!(*b, i as u8);
        }
    });
    h.await.unwrap();
}

// On the current-thread runtime the sleep hands the thread to the task,
// which runs until it parks in its own sleep: a yield, not a guess.
#[test]
fn abort_parked_task() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        let guard = std::sync::Arc::new(());
        let weak = std::sync::Arc::downgrade(&guard);
        let h = tokio::spawn(async move {
            let _guard = guard;
            tokio::time::sleep(Duration::from_secs(60)).await;
        });
        tokio::time::sleep(Duration::from_millis(5)).await;
        h.abort();
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert!(weak.upgrade().is_none());
    });
}

#[test]
fn send_fails_once_receiver_leaves() {
    let (s, r) = std::sync::mpsc::sync_channel::<u32>(0);
    let h = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        drop(r);
    });
    std::thread::sleep(Duration::from_millis(10));
    assert!(s.send(1).is_err());
    h.join().unwrap();
}
"#,
        r#"
use std::time::Duration;

#[tokio::test]
async fn mirror_follows_origin() {
    let origin = open("origin").await;
    origin.put("name", "a").await.unwrap();
    create_mirror("origin").await;
    // A head start only: the check below polls with a deadline.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mirror = open("mirror").await;
    tryhard::retry_fn(|| async {
        match mirror.get("name").await {
            Ok(Some(v)) if v == "a" => Ok(()),
            _ => Err("not there yet"),
        }
    })
    .retries(6)
    .exponential_backoff(Duration::from_millis(200))
    .await
    .unwrap();
    assert_eq!(origin.get("name").await.unwrap().as_deref(), Some("a"));
}
"#,
        r#"
use std::io::{Read, Write};
use std::net::TcpStream;
use std::thread;
use std::time::Duration;

#[tokio::test]
async fn idle_connection_is_closed() {
    let addr = start_server(Duration::from_secs(1)).await;
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.write_all(b"PING\r\n").unwrap();
    let mut buf = [0u8; 64];
    // Past the idle timeout; the read waits for the close however late.
    thread::sleep(Duration::from_millis(1100));
    let n = stream.read(&mut buf).unwrap();
    assert_eq!(n, 0);
}
"#,
        r#"
use std::time::Duration;

#[tokio::test]
async fn expired_items_are_dropped() {
    let mut q = Queue::default();
    q.push(8, None);
    q.push(9, Some(Duration::from_millis(1)));
    assert_eq!(q.len(), 2);
    // Outlives the 1 ms deadline set above; a slower machine waits longer.
    tokio::time::sleep(Duration::from_millis(2)).await;
    q.drop_expired();
    assert_eq!(q.len(), 1);
}
"#,
        r#"
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::time::{sleep, timeout, Duration};
use tokio_util::sync::CancellationToken;

async fn worker(token: CancellationToken, done: Arc<AtomicBool>) {
    token.cancelled().await;
    done.store(true, Ordering::Release);
}

// The flags only ever turn on: "still off" cannot fail on a slow machine,
// and the positive check comes after a real wait.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_waits_for_cancel() {
    let token = CancellationToken::new();
    let done = Arc::new(AtomicBool::new(false));
    let handle = tokio::spawn(worker(token.clone(), Arc::clone(&done)));
    sleep(Duration::from_millis(50)).await;
    assert!(!done.load(Ordering::Acquire));
    assert!(!token.is_cancelled());
    token.cancel();
    timeout(Duration::from_secs(5), handle).await.unwrap().unwrap();
    assert!(done.load(Ordering::Acquire));
}
"#,
        r#"
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

// actix's test runtime has one thread: the sleep lets the task run to
// its end whatever the load.
#[actix::test]
async fn counts_on_one_thread() {
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = n.clone();
    tokio::spawn(async move {
        n2.fetch_add(1, Ordering::SeqCst);
    });
    actix_rt::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(n.load(Ordering::SeqCst), 1);
}
"#,
        r#"
use ntex::time::{sleep, Millis};

// One thread, an in-memory transport: the dispatcher the test spawned runs
// on what the test handed it, so the sleep only lets it run.
#[ntex::test]
async fn closes_write_side_on_error() {
    let (client, server) = IoTest::create();
    let (disp, _state) = Dispatcher::debug(Io::new(server), BytesCodec, failing_service());
    ntex::rt::spawn(async move {
        let _ = disp.await;
    });
    client.write("GET /test HTTP/1\r\n\r\n");
    sleep(Millis(250)).await;
    assert!(client.is_closed());
}
"#,
        r#"
use std::{net, sync::mpsc, thread, time};

// The server thread binds before it answers: the socket listens by the
// time the test goes on, so the connect succeeds whoever accepts it.
#[test]
fn binds_before_handshake() {
    let addr = unused_addr();
    let (tx, rx) = mpsc::channel();
    let h = thread::spawn(move || {
        let srv = build().workers(1).bind("test", addr, make_service).unwrap().run();
        let _ = tx.send(srv);
        run_forever();
    });
    let srv = rx.recv().unwrap();
    thread::sleep(time::Duration::from_millis(300));
    assert!(net::TcpStream::connect(addr).is_ok());
    srv.stop();
    let _ = h.join();
}
"#,
        r#"
use ntex::time::{sleep, Millis};

// Over an in-memory pipe: the pipe's own tasks run on this one thread, and
// the sleep only yields to them.
#[ntex::test]
async fn wakes_reader_on_write() {
    let (client, server) = IoTest::create();
    let io = Io::new(server);
    client.write(TEXT);
    sleep(Millis(50)).await;
    assert!(lazy(|cx| io.poll_read_ready(cx)).await.is_ready());
    assert!(!client.is_server_dropped());
}
"#,
        r#"
#[cfg(test)]
mod tests {
    use crate::testing::Io;
    use crate::time::{sleep, Millis};

    // ntex's own tests: `rt_test` is its one-thread test runtime, and the
    // testing module's `Io` is an in-memory pipe.
    #[crate::rt_test]
    async fn closes_after_bad_request() {
        let (client, server) = Io::create();
        client.write("GET /test HTTP/1\r\n\r\n");
        let mut h1 = h1(server, ok_service);
        sleep(Millis(50)).await;
        assert!(poll_fn(|cx| Pin::new(&mut h1).poll(cx)).await.is_ok());
    }
}
"#,
        r#"
use ntex::channel::oneshot;
use ntex::time::{sleep, Millis};

#[ntex::test]
async fn ready_after_release() {
    let srv = Pipeline::from(Srv::default());
    let (tx, rx) = oneshot::channel();
    let (_stop, stopped) = oneshot::channel::<()>();
    ntex::rt::spawn(async move {
        let _ = select(rx, stopped).await;
        sleep(Millis(25_000)).await;
    });
    sleep(Millis(250)).await;
    assert!(srv.is_pending());
    let _ = tx.send(());
    sleep(Millis(250)).await;
    assert!(srv.is_pending());
}
"#,
        r#"
use std::time::Duration;

#[async_std::test]
async fn expired_session_is_gone() {
    let store = MemoryStore::new();
    let mut session = Session::new();
    session.expire_in(Duration::from_secs(3));
    let id = store.store_session(session).await.unwrap();
    async_std::task::sleep(Duration::from_secs(3)).await;
    assert_eq!(None, store.load_session(id).await.unwrap());
}
"#,
        r#"
// After the absence comes a real wait for the next request.
use std::time::Duration;
use tokio_test::{assert_pending, assert_ready, assert_request_eq, task};
use tower_test::mock;

#[tokio::test]
async fn dropped_request_is_skipped() {
    let (service, mut handle) = mock::pair::<&str, &str>();
    let (batch, worker) = Batch::pair(service, 2);
    tokio::spawn(worker);
    let mut first = task::spawn(batch.call("first"));
    let second = task::spawn(batch.call("second"));
    drop(second);
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_pending!(first.poll());
    handle.allow(1);
    assert_request_eq!(handle, "first").send_response("ok");
}
"#,
        r#"
// Nothing may fire: a counter still at zero is an absence, which a slow machine cannot break.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn defused_event_never_fires() {
    let timer = Timer::default();
    let counter = Arc::new(AtomicUsize::new(0));
    let c = counter.clone();
    let handle = timer.add_async(move || {
        c.fetch_add(1, Ordering::SeqCst);
    });
    handle.defuse();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let fired = counter.swap(0, Ordering::SeqCst);
    assert_eq!(fired, 0);
}
"#,
        r#"
// Nothing may arrive: an absence, which a slow machine can only make pass.
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

#[test]
fn unsubscribed_listener_hears_nothing() {
    let (tx, rx) = mpsc::channel();
    let bus = Bus::new();
    let id = bus.subscribe(move |ev| tx.send(ev).unwrap());
    bus.unsubscribe(id);
    thread::spawn(move || bus.publish("ping"));
    thread::sleep(Duration::from_millis(100));
    assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(SleepBeforeAssert);

    #[test]
    fn the_fix_fits_the_kind_of_sleep() {
        let fixes = crate::testing::fixes(
            &SleepBeforeAssert,
            Language::Rust,
            r#"
use std::thread;
use std::time::Duration;

#[test]
fn counter_reaches_ten() {
    let c = Arc::new(AtomicUsize::new(0));
    let c2 = c.clone();
    thread::spawn(move || bump(&c2));
    thread::sleep(Duration::from_millis(50));
    assert_eq!(c.load(Ordering::SeqCst), 10);
}

#[tokio::test]
async fn caches_after_fetch() {
    let cache = Cache::default();
    let c = cache.clone();
    tokio::spawn(async move { c.refresh().await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(cache.contains("key"));
}
"#,
        );
        assert_eq!(fixes.len(), 2, "{fixes:#?}");
        assert!(fixes[0].contains("`join()` the thread"), "{}", fixes[0]);
        assert!(!fixes[0].contains("tokio"), "{}", fixes[0]);
        assert!(fixes[1].contains("start_paused"), "{}", fixes[1]);
    }
}
