//! PY036: sleeping "long enough" for another task, then reading its work.

use crate::context::FileCx;
use crate::python::common::{
    SLEEPS, is_assert, is_random_ref, is_task_spawn, is_zero_sleep, next_stmt, sleep_arg,
};
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::walk::{Parent, exprs_under};
use unsnarl_model::*;

pub struct SleepSynchronization;

pub static META: RuleMeta = RuleMeta {
    id: "PY036",
    name: "sleep-as-synchronization",
    category: Category::SleepSynchronization,
    severity: Severity::Medium,
    languages: &[Language::Python],
    summary: "After starting a task or thread, the code sleeps and then immediately asserts or reads what that task was supposed to produce.",
    docs: r#"
A sleep (`time.sleep`, `asyncio.sleep`, trio/anyio `sleep`) with a
non-zero delay, not in a loop, in a function that earlier started a task,
thread or process (`create_task`, `start_soon`, `Thread.start`,
`executor.submit`...), directly followed by an `assert`, or by a statement
that reads the started work's result (`.result()`, `.done()`,
`.is_set()`), or a variable handed to it (not a function of the file
handed to it as what to run: starting it again, `self.loop.create_task(
self.check())`, reads nothing of the earlier run). A next statement that waits for
the work itself (`thread.join()`, `proc.wait()`, `await task`, also
with a deadline, `await asyncio.wait_for(future, timeout=t)`) is not
reported: the sleep orders nothing there, and nor is a sleep right after
such a wait (`run = await eval_task`): the work is over when it starts.
Neither is an `assert` that something did not happen (`assert not
t.done()`, `self.assertFalse(t.done())`), nor one that
repeats word for word one made before the sleep: it checks that nothing
changed, which a slow machine cannot make fail. A `task.cancel()` of the
started work right after the sleep reads nothing; the statement after it
is the one judged (also under `if not task.done():`, a deadline for
the work). Nor is a sleep whose next statement tries again (it
calls the sleeping function itself, also under `if not self._shutdown:`,
or hands a call an attempt count): a pause between attempts. A sleep of a random length (`asyncio.sleep(random.uniform(1,
2))`) paces on purpose and is not reported. An awaited sleep in a test that runs on a fake clock
(a parameter `autojump_clock`/`mock_clock` of trio, or `looptime`) is not
reported either: it moves virtual time past a timeout exactly, at no cost.

Outside tests, a sleep of under a minute is also reported when its comment
(on its line or the line above) says it waits for something to happen
("wait for the workers", "give it time to start", "make sure"), unless
the comment names a delay policy (a backoff, a retry, a rate limit, an
interval) or a length someone set ("wait for the specified time"), the sleep lasts a window the caller passes in
(`asyncio.sleep(timeout)` of a parameter named for a timeout, window or
duration, also one of an enclosing function: how long to listen for
replies), or the rest of an interval measured on a clock (`asyncio.sleep(
self.min_interval - elapsed)`, a rate limiter's pacing), or the statement after it
tries again (calls the sleeping function itself, or hands a call an
attempt count: `await self.send(failed, retry - 1)`): a pause between
attempts, where a guess that is too short costs one more attempt, or
checks for an early crash when the comment says that is what it waits
for ("give it a moment to see if it starts", "crash on startup", then
`if proc.poll() is None: return proc` or `container.reload(); if
container.status != "running": raise ..`: the branch for a dead child
leaves, the one for a running child goes on). After "wait for the API
to start", or with no comment, the same check still guesses that the
thing is ready. Nor when the statement before it (or the `try` before it) already waits for
the condition with a deadline (`page.wait_for_selector(sel,
timeout=30_000)`, `proc.wait(timeout=10)`, `consumer.poll(timeout=1.0)`;
log lines between do not count), or awaits a coroutine of the file that awaits the
closing of what it tears down (`await self._disconnect(server)` whose
body awaits `stack.aclose()`): the sleep is a margin after the real wait.
Neither is a sleep followed by a loop that polls (it sleeps each round
and leaves with `break` or `return`: `for _ in range(150): time.sleep(2);
if not t.is_alive(): break`, also as the first statement of the `if`
after the sleep, or, for a loop that counts its rounds or tests a
condition, after a few statements that neither sleep nor assert: a
lookup, a guard that returns early): the loop is the wait, the sleep a
head start.

## Why

The sleep encodes a guess: "the worker will be done by then". On a loaded
CI machine or a busy production host the guess is wrong, and the test is
flaky or the code reads half-written state; when it is right, it wastes
the whole delay every time. The ordering has no enforcement at all.

## Example

```python
import asyncio

async def test_worker_processes_job(queue, results):
    asyncio.create_task(worker(queue, results))
    await queue.put("job-1")
    await asyncio.sleep(0.1)
    assert results == ["job-1"]
```

## Fix

Wait for the actual condition: join the queue, await the task or an
event, or poll the condition with a deadline.

```python
import asyncio

async def test_worker_processes_job(queue, results):
    task = asyncio.create_task(worker(queue, results))
    await queue.put("job-1")
    await asyncio.wait_for(queue.join(), timeout=5)
    assert results == ["job-1"]
    task.cancel()
```
"#,
    examples: &EXAMPLES,
};

impl Rule for SleepSynchronization {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for (id, c) in cx.calls_to(SLEEPS) {
            let e = cx.expr(id);
            if is_zero_sleep(cx, c) || cx.in_loop(id) {
                continue;
            }
            // `await asyncio.sleep(random.uniform(1.0, 2.0))`: a delay drawn
            // at random paces on purpose (a human-like pause, jitter); no
            // guess of how long some work takes is drawn from a range.
            if sleep_arg(c).flatten().is_some_and(|a| {
                exprs_under(cx.model, a)
                    .into_iter()
                    .any(|x| is_random_ref(cx, x))
            }) {
                continue;
            }
            // A statement of its own: `time.sleep(x)` / `await asyncio.sleep(x)`.
            let stmt = match cx.tree.expr_parent(id) {
                Parent::Stmt(s) => s,
                Parent::Expr(aw) if matches!(cx.expr(aw).kind, ExprKind::Await(_)) => {
                    match cx.tree.expr_parent(aw) {
                        Parent::Stmt(s) => s,
                        _ => continue,
                    }
                }
                _ => continue,
            };
            if !matches!(cx.stmt(stmt).kind, StmtKind::Expr(_)) {
                continue;
            }
            let f = cx.func_of(id);
            // "give the worker time to finish": the comment says it (in
            // production code; tests are judged by what follows the sleep).
            let long = sleep_arg(c)
                .flatten()
                .and_then(|a| match cx.model.literal(a) {
                    Some(Lit::Float(v)) => Some(*v),
                    _ => cx.model.int_value(a).map(|v| v as f64),
                })
                .is_some_and(|v| v >= 60.0);
            // `await asyncio.sleep(timeout)`: a window the caller chose
            // (how long to listen for replies), not a guess of this code.
            let callers_window = sleep_arg(c).flatten().is_some_and(|a| {
                cx.model.name_of(a).is_some_and(|n| {
                    let n = n.to_ascii_lowercase();
                    // A parameter of the function, or of one it is nested
                    // in (a closure inside a command that takes
                    // `--timeout`).
                    let mut scope = Some(f);
                    let mut param = false;
                    while let Some(g) = scope {
                        param |= cx
                            .func(g)
                            .params
                            .iter()
                            .any(|p| p.name.eq_ignore_ascii_case(&n));
                        scope = cx.func(g).parent.filter(|p| p.0 != 0);
                    }
                    (n.contains("timeout") || n.contains("window") || n.contains("duration"))
                        && param
                })
            });
            // `await asyncio.sleep(self.min_interval - elapsed)`: the rest
            // of an interval, measured on a clock (a rate limiter's pacing),
            // not a guess of how long something takes.
            let remainder = sleep_arg(c).flatten().is_some_and(|a| {
                matches!(
                    cx.expr(cx.model.strip(a)).kind,
                    ExprKind::Binary { op: BinOp::Sub, .. }
                )
            });
            // "Give it a moment to see if it crashes", then a check that it
            // still runs: the probe the comment names. ("Wait for the API to
            // start" before the same check still guesses readiness.)
            if waiting_comment(cx, e.span).is_some_and(|why| names_a_crash(&why))
                && next_stmt(cx, stmt).is_some_and(|n| probes_early_exit(cx, n))
            {
                continue;
            }
            if !cx.func(f).is_test
                && !long
                && !callers_window
                && !remainder
                && !retries_next(cx, f, stmt)
                && !waited_with_deadline_before(cx, stmt)
                && !polls_after(cx, stmt)
                && let Some(why) = waiting_comment(cx, e.span)
            {
                out.push(cx.finding(
                    &META,
                    e.span,
                    format!(
                        "this sleep stands in for waiting on something (\"{why}\"): the delay is a guess that is too short on a loaded machine and wasted time otherwise, and nothing enforces the ordering"
                    ),
                    "wait for the real condition: await the task, an `Event`, `queue.join()`, `thread.join()`, or poll the condition with a deadline",
                ));
                continue;
            }
            // A pause between attempts (`await asyncio.sleep(2)` in an
            // `except` handler, then `await self.pop()` again): whatever
            // was started above, the next statement tries again rather
            // than reading it.
            if on_virtual_clock(cx, f, id) || retries_next(cx, f, stmt) {
                continue;
            }
            let Some(handed) = started_before(cx, f, e.span.start) else {
                continue;
            };
            // `run = await eval_task` right before, every task started
            // earlier awaited too: the work is over when the sleep starts,
            // so the sleep is not waiting for it.
            if crate::util::prev_stmt(cx, stmt).is_some_and(|p| waits_for_work(cx, p, &handed))
                && all_started_work_waited(cx, f, e.span.start)
            {
                continue;
            }
            let Some(mut next) = next_stmt(cx, stmt) else {
                continue;
            };
            // A poll follows: it is the wait, the sleep only a head start.
            if polls_after(cx, stmt) {
                continue;
            }
            // `task.cancel()` of the started work reads nothing of it: what
            // counts is the statement after.
            while cancels_work(cx, next, &handed) {
                match next_stmt(cx, next) {
                    Some(n) => next = n,
                    None => break,
                }
            }
            if cancels_work(cx, next, &handed) {
                continue;
            }
            // `thread.join()`, `await task`: the next statement waits for
            // the work itself, whatever the sleep did.
            if waits_for_work(cx, next, &handed) {
                continue;
            }
            // `self.assertFalse(task.done())`: unittest's form of the
            // same negative check.
            if asserts_false(cx, next) {
                continue;
            }
            let reads = if is_assert(cx, next) {
                // `assert not task.done()`: checking that something did
                // *not* happen has no condition to wait for instead.
                if negative_assert(cx, next) || asserted_before(cx, f, next, e.span.start) {
                    continue;
                }
                Some("asserts")
            } else if reads_work(cx, next, &handed) {
                Some("reads")
            } else {
                None
            };
            let Some(what) = reads else { continue };
            out.push(cx.finding(
                &META,
                e.span,
                format!(
                    "this sleep waits a fixed time for work started above and the next statement {what} its outcome: on a slow or loaded machine the work is not done yet (flaky), and when it is, the delay is wasted"
                ),
                "wait for the real condition: await the task or `queue.join()`, wait on an `Event`, `thread.join()`, or poll the condition with a deadline",
            ));
        }
    }
}

/// The sleep is followed by a loop that polls (it sleeps each round and
/// leaves with `break` or `return`: `for _ in range(150): time.sleep(2); if
/// not t.is_alive(): break`), directly or as the first statement of the
/// `if` after it: the loop is the real wait, and the sleep a head start.
///
/// A few statements that neither sleep nor assert may come between (a
/// lookup, a guard that returns early, a counter set to zero): `time.sleep(
/// 0.3)`, `f = current_file()`, `if f is None: return 1`, `last = 0`, then
/// a loop that polls until the file's size stops changing.
fn polls_after(cx: &FileCx, sleep_stmt: StmtId) -> bool {
    let after = crate::util::stmts_after(cx, sleep_stmt);
    let Some(&next) = after.first() else {
        return false;
    };
    let mut candidates = vec![next];
    if let StmtKind::If { then, .. } = &cx.stmt(next).kind {
        candidates.extend(then.iter().copied().filter(|&t| {
            !matches!(&cx.stmt(t).kind, StmtKind::Expr(x) if cx.call(*x).is_some_and(|c| c.target.as_deref() == Some("builtins.print")))
        }).take(1));
    }
    for &s in after.iter().skip(1).take(4) {
        // Only a loop that polls by count or condition (`for _ in
        // range(10)`, `while ..`), not one that tries alternatives in turn
        // (`for sel in selectors: .. break`).
        let counted = match &cx.stmt(s).kind {
            StmtKind::While { .. } => Some(true),
            StmtKind::For { iter, .. } => Some(
                cx.call(cx.model.strip(*iter))
                    .is_some_and(|c| c.target.as_deref() == Some("builtins.range")),
            ),
            _ => None,
        };
        if let Some(counted) = counted {
            if counted {
                candidates.push(s);
            }
            break;
        }
        // Plain steps only: not a function defined on the way (a script
        // that sets up, then enters its interactive loop).
        if !matches!(
            cx.stmt(s).kind,
            StmtKind::Assign { .. } | StmtKind::If { .. } | StmtKind::Expr(_) | StmtKind::Pass
        ) {
            break;
        }
        if sleeps_in(cx, &vec![s]) || is_assert(cx, s) {
            break;
        }
    }
    candidates.into_iter().any(|l| {
        let (StmtKind::For { body, .. } | StmtKind::While { body, .. }) = &cx.stmt(l).kind else {
            return false;
        };
        let stmts = unsnarl_model::walk::stmts_in_block(cx.model, body);
        let leaves = stmts
            .iter()
            .any(|&x| matches!(cx.stmt(x).kind, StmtKind::Break | StmtKind::Return(_)));
        leaves && sleeps_in(cx, body)
    })
}

/// Some call in the block sleeps (with a delay or without).
fn sleeps_in(cx: &FileCx, block: &Block) -> bool {
    unsnarl_model::walk::calls_in_block(cx.model, block)
        .into_iter()
        .any(|x| cx.call(x).is_some_and(|c| sleep_arg(c).is_some()))
}

/// The statement before the sleep (or the `try` it is) already waits for
/// the condition, with a deadline: a call named for waiting on something
/// that is given a `timeout=` (`page.wait_for_selector(sel, timeout=30_000)`,
/// `process.wait(timeout=10)`, a consumer's `poll(timeout=1.0)`,
/// a helper `_wait_for_any_selector(page, sels, timeout=..)`). The sleep
/// after it is a margin on top of the real wait, not a stand-in for it.
///
/// Log lines between that wait and the sleep change nothing.
fn waited_with_deadline_before(cx: &FileCx, sleep_stmt: StmtId) -> bool {
    let mut prev = crate::util::prev_stmt(cx, sleep_stmt);
    for _ in 0..2 {
        match prev {
            Some(p) if only_logs(cx, p) => prev = crate::util::prev_stmt(cx, p),
            _ => break,
        }
    }
    let Some(prev) = prev else {
        return false;
    };
    let block: Block = match &cx.stmt(prev).kind {
        StmtKind::Try { body, .. } => body.clone(),
        _ => vec![prev],
    };
    unsnarl_model::walk::calls_in_block(cx.model, &block)
        .into_iter()
        .filter_map(|x| cx.call(x))
        .any(|c| {
            let name = c.name.trim_start_matches('_');
            (name.starts_with("wait") || name == "poll") && c.kwarg("timeout").is_some()
        })
        || awaited_close_before(cx, prev)
}

/// A statement that only writes a log record (`logger.info(..)`).
fn only_logs(cx: &FileCx, s: StmtId) -> bool {
    matches!(&cx.stmt(s).kind, StmtKind::Expr(x)
        if cx.call(*x).is_some_and(|c| cx.effect(c, Effect::Logging).is_some()))
}

/// The statement before the sleep (or an `if` whose body it is) awaits a
/// coroutine of the file that itself awaits the closing of what it tears
/// down (`await self._disconnect(server)`, whose body awaits
/// `stack.aclose()`): the cleanup a comment says the sleep waits for is
/// over when the sleep starts.
fn awaited_close_before(cx: &FileCx, prev: StmtId) -> bool {
    let block: Block = match &cx.stmt(prev).kind {
        StmtKind::If { then, orelse, .. } if orelse.is_empty() => then.clone(),
        _ => vec![prev],
    };
    let Some(&last) = block.last() else {
        return false;
    };
    let StmtKind::Expr(e) = cx.stmt(last).kind else {
        return false;
    };
    let ExprKind::Await(inner) = cx.expr(cx.model.strip(e)).kind else {
        return false;
    };
    let Some(g) = cx
        .call(cx.model.strip(inner))
        .and_then(|c| cx.callee_in_file(c))
    else {
        return false;
    };
    cx.body_calls(g).any(|x| {
        cx.is_awaited(x)
            && cx.call(x).is_some_and(|c| {
                matches!(
                    c.name.as_str(),
                    "aclose" | "close" | "wait_closed" | "wait" | "join" | "shutdown"
                )
            })
    })
}

/// pytest fixtures that run the event loop on a fake clock: trio's
/// `autojump_clock`/`mock_clock` (a `trio.testing.MockClock`), looptime's
/// `looptime`. An awaited sleep then moves virtual time on at once, and
/// the timers due by then fire in order before the sleeper resumes.
const VIRTUAL_CLOCK_FIXTURES: &[&str] = &["autojump_clock", "mock_clock", "looptime"];

/// The awaited sleep `sleep` runs in a test (or a function nested in one)
/// that takes a fake-clock fixture: the delay is exact and free, often the
/// very timeout under test, not a guess about another task's speed. A
/// blocking `time.sleep` still takes real time.
fn on_virtual_clock(cx: &FileCx, f: FuncId, sleep: ExprId) -> bool {
    if !cx.is_awaited(sleep) {
        return false;
    }
    cx.tree.func_ancestors(cx.model, f).any(|g| {
        cx.func(g).params.iter().any(|p| {
            VIRTUAL_CLOCK_FIXTURES.contains(&p.name.as_str())
                || p.ty.as_ref().is_some_and(|t| t.text.ends_with("MockClock"))
        })
    })
}

/// `task.cancel()` of a task handed the work (or its handle).
fn cancels_work(cx: &FileCx, s: StmtId, handed: &HashSet<String>) -> bool {
    match &cx.stmt(s).kind {
        StmtKind::Expr(e) => cx.call(*e).is_some_and(|c| {
            c.name == "cancel"
                && c.args.is_empty()
                && c.receiver
                    .and_then(|r| cx.model.dotted(r))
                    .is_some_and(|d| handed.contains(&d))
        }),
        // `if not task.done(): task.cancel()`: the sleep was a deadline
        // for the work, and what it reads of it is only whether it ended.
        StmtKind::If { cond, then, orelse } => {
            let done_test = matches!(&cx.expr(*cond).kind, ExprKind::Unary { operand, .. }
                if cx.call(*operand).is_some_and(|c| c.name == "done" && c.args.is_empty()));
            done_test
                && orelse.is_empty()
                && !then.is_empty()
                && then.iter().all(|&t| cancels_work(cx, t, handed))
        }
        _ => false,
    }
}

/// The asserts right after the sleep (the run starting at `check`) each
/// repeat word for word the latest assert `f` made before `at` on the same
/// subject (the left side of its comparison): they check that nothing
/// changed across the wait, which a slow machine cannot make fail. An
/// assert expecting a new value (`len(procs) == 1` after `== 2`) depends
/// on the wait.
fn asserted_before(cx: &FileCx, f: FuncId, check: StmtId, at: u32) -> bool {
    let subject = |s: StmtId| -> String {
        let StmtKind::If { cond, .. } = &cx.stmt(s).kind else {
            return crate::util::squeezed_source(cx, cx.stmt(s).span);
        };
        let mut e = *cond;
        if let ExprKind::Unary { operand, .. } = &cx.expr(e).kind {
            e = *operand;
        }
        match &cx.expr(e).kind {
            ExprKind::Binary { left, .. } => crate::util::squeezed_source(cx, cx.expr(*left).span),
            _ => crate::util::squeezed_source(cx, cx.expr(e).span),
        }
    };
    let mut before: Vec<StmtId> = cx
        .body_stmts(f)
        .iter()
        .copied()
        .filter(|&s| cx.stmt(s).span.end <= at && is_assert(cx, s))
        .collect();
    before.sort_by_key(|&s| cx.stmt(s).span.start);
    std::iter::once(check)
        .chain(crate::util::stmts_after(cx, check).iter().copied())
        .take_while(|&s| is_assert(cx, s))
        .all(|s| {
            let subj = subject(s);
            before
                .iter()
                .rev()
                .find(|&&b| subject(b) == subj)
                .is_some_and(|&b| {
                    crate::util::squeezed_source(cx, cx.stmt(b).span)
                        == crate::util::squeezed_source(cx, cx.stmt(s).span)
                })
        })
}

/// Names handed to work started in `f` before `at` (the spawn's arguments
/// and the handle), if any work was started. Functions of the file handed
/// over are what runs, not what it produces: starting one again later
/// (`tg.start_soon(publisher)`) reads nothing of the earlier run.
fn started_before(cx: &FileCx, f: FuncId, at: u32) -> Option<HashSet<String>> {
    let is_function = |n: &str| cx.model.functions.iter().any(|g| g.name == n);
    let mut names = HashSet::new();
    let mut started = false;
    for e in cx.body_calls(f) {
        if cx.expr(e).span.start >= at {
            continue;
        }
        let c = cx.call(e).unwrap();
        if !starts_work(cx, c) {
            continue;
        }
        started = true;
        for a in &c.args {
            for x in exprs_under(cx.model, a.value) {
                if let Some(n) = cx.model.dotted(x)
                    && !is_function(&n)
                {
                    names.insert(n);
                }
            }
        }
        if let Parent::Stmt(s) = cx.tree.expr_parent(e)
            && let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind
        {
            for &t in targets {
                if let Some(n) = cx.model.dotted(t) {
                    names.insert(n);
                }
            }
        }
    }
    started.then_some(names)
}

/// A call that starts work running beside this code: a task, a thread, a
/// process, a job handed to an executor or another loop.
fn starts_work(cx: &FileCx, c: &Call) -> bool {
    is_task_spawn(cx, c)
        || matches!(
            c.target.as_deref(),
            Some("threading.Thread" | "multiprocessing.Process" | "threading.Timer")
        )
        || (matches!(
            c.name.as_str(),
            "submit" | "start" | "call_soon_threadsafe" | "run_in_executor"
        ) && c.receiver.is_some())
}

/// Every work `f` started before `at` is bound to a handle (`task =
/// create_task(..)`) that a plain statement after it, before `at`, waits
/// for (`await task`, `thread.join()`).
fn all_started_work_waited(cx: &FileCx, f: FuncId, at: u32) -> bool {
    cx.body_calls(f).all(|e| {
        let start = cx.expr(e).span.start;
        if start >= at || !cx.call(e).is_some_and(|c| starts_work(cx, c)) {
            return true;
        }
        let Parent::Stmt(s) = cx.tree.expr_parent(e) else {
            return false;
        };
        let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind else {
            return false;
        };
        let handle: HashSet<String> = targets.iter().filter_map(|&t| cx.model.dotted(t)).collect();
        !handle.is_empty()
            && cx.body_stmts(f).iter().any(|&w| {
                let sp = cx.stmt(w).span;
                sp.start > start
                    && sp.end <= at
                    && matches!(cx.stmt(w).kind, StmtKind::Expr(_) | StmtKind::Assign { .. })
                    && waits_for_work(cx, w, &handle)
            })
    })
}

/// The comment on the sleep's line (or the line above) when it says the
/// sleep waits for something to happen.
fn waiting_comment(cx: &FileCx, span: Span) -> Option<String> {
    let text = cx.text;
    let start = span.start as usize;
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let mut comments = Vec::new();
    if let Some(i) = text[line_start..line_end].find('#') {
        comments.push(&text[line_start + i + 1..line_end]);
    }
    if line_start > 0 {
        let prev_start = text[..line_start - 1].rfind('\n').map_or(0, |i| i + 1);
        let prev = text[prev_start..line_start - 1].trim();
        if let Some(c) = prev.strip_prefix('#') {
            comments.push(c);
        }
    }
    const PHRASES: &[&str] = &[
        "wait for",
        "waiting for",
        "give it",
        "give the",
        "give them",
        "let the",
        "let it",
        "let them",
        "to finish",
        "to complete",
        "to start",
        "to be ready",
        "to settle",
        "to propagate",
        "to catch up",
        "to pick",
        "to process",
        "make sure",
        "ensure",
        "hopefully",
        "enough time",
        "in time",
        "until the",
        "so that the",
    ];
    // A delay chosen as a policy (a retry's backoff, a rate limit, a
    // polling interval) orders nothing: "wait for backoff" is no guess.
    const POLICY: &[&str] = &[
        "backoff",
        "back off",
        "back-off",
        "retry",
        "retries",
        "rate limit",
        "throttl",
        "interval",
        "debounce",
        "cooldown",
        "cool down",
        // A length the caller set: "wait for the specified time".
        "specified time",
        "specified delay",
        "specified duration",
        "given time",
        "given delay",
        "configured time",
        "configured delay",
        "requested time",
        "requested delay",
    ];
    comments.into_iter().find_map(|c| {
        let lc = c.to_ascii_lowercase();
        (PHRASES.iter().any(|p| lc.contains(p)) && !POLICY.iter().any(|p| lc.contains(p)))
            .then(|| c.trim().to_string())
    })
}

/// The comment says the pause is for catching an early death ("see if it
/// starts", "crash on startup", "check it didn't exit", "still alive"),
/// not for the thing to become ready.
fn names_a_crash(comment: &str) -> bool {
    let lc = comment.to_ascii_lowercase();
    [
        "crash",
        "fail",
        "exit",
        "die",
        "dead",
        "alive",
        "see if",
        "see whether",
    ]
    .iter()
    .any(|w| lc.contains(w))
}

/// The statement after the sleep tries again: it calls the sleeping
/// function itself (`return await self.request(url, retries + 1)`) or
/// hands a call an attempt count (`await self.send(cmds, retry)`). The
/// sleep is the pause between attempts, whatever its comment hopes for: a
/// guess that is too short costs one more attempt, nothing is misordered.
fn retries_next(cx: &FileCx, f: FuncId, sleep_stmt: StmtId) -> bool {
    let Some(next) = next_stmt(cx, sleep_stmt) else {
        return false;
    };
    let counts_attempts = |a: ExprId| {
        exprs_under(cx.model, a).into_iter().any(|x| {
            cx.model.name_of(x).is_some_and(|n| {
                let n = n.to_ascii_lowercase();
                n.contains("retr") || n.contains("attempt") || n.contains("tries")
            })
        })
    };
    let name = &cx.func(f).name;
    unsnarl_model::walk::exprs_in_block(cx.model, &vec![next])
        .into_iter()
        .any(|e| {
            cx.call(e).is_some_and(|c| {
                let recurses = c.name == *name
                    && c.receiver
                        .is_none_or(|r| matches!(cx.model.name_of(r), Some("self" | "cls")));
                recurses || c.args.iter().any(|a| counts_attempts(a.value))
            })
        })
}

/// `assert not x`, `assert x is None`.
fn negative_assert(cx: &FileCx, s: StmtId) -> bool {
    let StmtKind::If { cond, .. } = &cx.stmt(s).kind else {
        return false;
    };
    match &cx.expr(cx.model.strip(*cond)).kind {
        ExprKind::Unary { op: UnOp::Not, .. } => true,
        ExprKind::Binary {
            op: BinOp::Is | BinOp::Eq,
            right,
            ..
        } => matches!(cx.model.literal(*right), Some(Lit::Null | Lit::Bool(false))),
        _ => false,
    }
}

/// A probe for an early crash: the statement (after perhaps a refresh of
/// the started thing, `container.reload()`) tests whether it is still
/// running (`proc.poll() is None`, `t.is_alive()`, `proc.returncode`,
/// `container.status != "running"`), and its branch for "it died" raises
/// or returns, while the branch for "still running" does not raise. Like
/// `assert not t.done()`, it checks that something did not happen: there
/// is no condition to wait for instead, and the next step (a readiness
/// poll, the caller's own wait) does the waiting.
///
/// Only where the sleep's comment says it waits for a crash: the same
/// check after "wait for the server to start" (or after no comment, `if
/// t.is_alive(): return True`) reports a start the caller then uses as
/// ready.
fn probes_early_exit(cx: &FileCx, s: StmtId) -> bool {
    let handle = |e: ExprId| cx.model.dotted(e).is_some();
    let mut s = s;
    if let StmtKind::Expr(x) = cx.stmt(s).kind
        && cx.call(x).is_some_and(|c| {
            matches!(c.name.as_str(), "reload" | "refresh")
                && c.args.is_empty()
                && c.receiver.is_some_and(handle)
        })
        && let Some(n) = next_stmt(cx, s)
    {
        s = n;
    }
    let StmtKind::If { cond, then, orelse } = &cx.stmt(s).kind else {
        return false;
    };
    // Some(true): the condition holds while the thing runs.
    let alive = |c: ExprId| -> Option<bool> {
        let c = cx.model.strip(c);
        match &cx.expr(c).kind {
            ExprKind::Unary {
                op: UnOp::Not,
                operand,
            } => cx
                .call(cx.model.strip(*operand))
                .filter(|k| k.name == "is_alive" && k.receiver.is_some_and(handle))
                .map(|_| false),
            ExprKind::Call(k) if k.name == "is_alive" && k.receiver.is_some_and(handle) => {
                Some(true)
            }
            ExprKind::Binary { op, left, right } => {
                let left = cx.model.strip(*left);
                let status_of_handle = match &cx.expr(left).kind {
                    ExprKind::Call(k) => k.name == "poll" && k.receiver.is_some_and(handle),
                    ExprKind::Attr { obj, name, .. } => name == "returncode" && handle(*obj),
                    _ => false,
                };
                let running_status = matches!(&cx.expr(left).kind,
                    ExprKind::Attr { obj, name, .. } if name == "status" && handle(*obj))
                    && matches!(cx.model.literal(*right), Some(Lit::Str(t)) if t == "running");
                let none = matches!(cx.model.literal(*right), Some(Lit::Null));
                match op {
                    BinOp::Is if status_of_handle && none => Some(true),
                    BinOp::IsNot if status_of_handle && none => Some(false),
                    BinOp::Eq if running_status => Some(true),
                    BinOp::NotEq if running_status => Some(false),
                    _ => None,
                }
            }
            _ => None,
        }
    };
    let Some(alive_when_true) = alive(*cond) else {
        return false;
    };
    let leaves = |b: &Block| {
        b.last()
            .is_some_and(|&l| matches!(cx.stmt(l).kind, StmtKind::Raise(_) | StmtKind::Return(_)))
    };
    let (alive_branch, dead_branch) = if alive_when_true {
        (then, orelse)
    } else {
        (orelse, then)
    };
    !crate::util::always_raises(cx.model, alive_branch)
        && (leaves(dead_branch) || (alive_when_true && leaves(then)))
}

/// `self.assertFalse(x)` / `self.assertIsNone(x)` as a statement: a check
/// that something did *not* happen, which a slow machine only makes more
/// likely to hold.
fn asserts_false(cx: &FileCx, s: StmtId) -> bool {
    matches!(cx.stmt(s).kind, StmtKind::Expr(e)
    if cx.call(cx.model.strip(e)).is_some_and(|c| {
        matches!(c.name.as_str(), "assertFalse" | "assertIsNone")
            && c.receiver.and_then(|r| cx.model.name_of(r)) == Some("self")
    }))
}

/// The statement waits for the started work to end: `t.join()` or
/// `t.wait()` on its handle, or `await t`, also with a deadline (`await
/// asyncio.wait_for(future, timeout=t)`, `await asyncio.shield(t)`).
fn waits_for_work(cx: &FileCx, s: StmtId, handed: &HashSet<String>) -> bool {
    let handle = |e: ExprId| cx.model.dotted(e).is_some_and(|d| handed.contains(&d));
    unsnarl_model::walk::exprs_in_block(cx.model, &vec![s])
        .into_iter()
        .any(|x| match &cx.expr(x).kind {
            ExprKind::Call(c) => {
                (matches!(c.name.as_str(), "join" | "wait") && c.receiver.is_some_and(handle))
                    || (matches!(
                        c.target.as_deref(),
                        Some("asyncio.wait_for" | "asyncio.shield")
                    ) && c
                        .positional(0)
                        .or_else(|| c.kwarg("fut"))
                        .is_some_and(handle)
                        && !zero_timeout(cx, c))
            }
            ExprKind::Await(inner) => handle(*inner),
            _ => false,
        })
}

/// `asyncio.wait_for(t, timeout=0)`: waits for nothing, it cancels at once.
fn zero_timeout(cx: &FileCx, c: &Call) -> bool {
    c.positional(1)
        .or_else(|| c.kwarg("timeout"))
        .is_some_and(|t| {
            matches!(cx.model.literal(t), Some(Lit::Int(0)))
                || matches!(cx.model.literal(t), Some(Lit::Float(f)) if *f == 0.0)
        })
}

/// The statement checks a result (`.result()`, `.done()`, `.is_set()`) or
/// reads a variable handed to the started work.
fn reads_work(cx: &FileCx, s: StmtId, handed: &HashSet<String>) -> bool {
    let exprs = unsnarl_model::walk::exprs_in_block(cx.model, &vec![s]);
    // Starting work again reads nothing of the earlier run: not the
    // spawner (`self.loop` of `self.loop.create_task(..)`), nor the
    // object whose method of the file it runs (`self` of
    // `self.check_update()`).
    let starts: Vec<Span> = exprs
        .iter()
        .filter_map(|&x| cx.call(x))
        .filter_map(|c| {
            if starts_work(cx, c) {
                // Only a spawner handed the work (`loop.create_task(w)`);
                // `consumer.start()` starts the receiver itself.
                c.receiver
                    .filter(|_| !c.args.is_empty())
                    .map(|r| cx.expr(r).span)
            } else {
                cx.callee_in_file(c).map(|_| cx.expr(c.func).span)
            }
        })
        .collect();
    let in_a_start = |x: ExprId| starts.iter().any(|r| r.contains(cx.expr(x).span));
    exprs.into_iter().any(|x| match &cx.expr(x).kind {
        ExprKind::Call(c) => matches!(
            c.name.as_str(),
            "result" | "done" | "is_set" | "exception" | "is_alive" | "qsize" | "empty"
        ),
        ExprKind::Name { .. } | ExprKind::Attr { .. } => {
            !crate::python::common::is_store(cx, x)
                && !in_a_start(x)
                && cx.model.dotted(x).is_some_and(|d| handed.contains(&d))
                && !matches!(cx.tree.expr_parent(x), Parent::Expr(p) if matches!(cx.expr(p).kind, ExprKind::Call(_)) && cx.call(p).is_some_and(|c| c.func == x))
        }
        _ => false,
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import threading
import time

def test_worker_drains(looptime, results):
    threading.Thread(target=worker, args=(results,)).start()
    time.sleep(0.5)  # expect
    assert results == [1, 2, 3]
"#,
        r#"
import asyncio

async def test_worker(queue, results):
    asyncio.create_task(worker(queue, results))
    await queue.put("job-1")
    await asyncio.sleep(0.1)  # expect
    assert results == ["job-1"]
"#,
        r#"
import threading
import time

def run_and_report():
    results = []
    t = threading.Thread(target=crunch, args=(results,))
    t.start()
    time.sleep(2)  # expect
    print(len(results))
"#,
        r#"
import asyncio

async def restart(svc):
    await svc.stop()
    # give the old process time to release the port
    await asyncio.sleep(2)  # expect
    await svc.start()

async def publish(bus, event):
    await bus.send(event)
    await asyncio.sleep(0.5)  # expect: wait for the consumers to pick it up
    return bus.acked(event)

async def search(listener, delay):
    await listener.start()
    # Wait for devices to respond.
    await asyncio.sleep(delay)  # expect
    listener.stop()

async def reconnect(client, attempt):
    # wait for the broker to come back
    await asyncio.sleep(2 ** attempt)  # expect
    await client.connect()
"#,
        r#"
import anyio


async def test_publishes(client, other):
    sent = []

    async def publisher():
        await other.publish("t", "x")
        sent.append("x")

    async with anyio.create_task_group() as tg:
        tg.start_soon(publisher, sent)
        await anyio.sleep(1)  # expect
        check(sent)
"#,
        r#"
import asyncio


async def test_worker_runs_hook(worker, calls):
    assert calls["before"] == 0
    task = asyncio.create_task(worker.process_one())
    await asyncio.sleep(0.05)  # expect
    task.cancel()
    assert calls["before"] == 1
"#,
        r#"
import time

def open_channel(page, url):
    page.goto(url, wait_until="domcontentloaded")
    # Give the SPA time to render the messages.
    time.sleep(2.0)  # expect
    return [m.inner_text() for m in page.query_selector_all("[data-message-id]")]
"#,
        r#"
import asyncio


async def start_monitoring(bus, monitor):
    watcher = asyncio.create_task(monitor.watch(bus))
    warmup = asyncio.create_task(bus.warm_up())
    await warmup
    await asyncio.sleep(0.5)  # expect
    assert monitor.watching
    return watcher
"#,
        r#"
import asyncio


class Bot:
    def __init__(self, loop):
        self.loop = loop
        self.items = []

    async def refresh(self):
        self.items.append(1)

    async def check_update(self):
        self.loop.create_task(self.refresh())
        await asyncio.sleep(1)  # expect
        print(self.items)
"#,
        r#"
import threading
import time


def test_order(produce, consume):
    received = []
    producer = threading.Thread(target=produce)
    consumer = threading.Thread(target=consume, args=(received,))
    producer.start()
    time.sleep(2)  # expect
    consumer.start()
    producer.join()
    consumer.join()
    assert received == sorted(received)
"#,
        r#"
import subprocess
import time


def build(command):
    proc = subprocess.Popen(command)
    # Wait for the build to finish.
    time.sleep(5)  # expect
    if proc.poll() is None:
        proc.kill()
        raise TimeoutError("the build did not finish")
    return proc.returncode
"#,
        r#"
import asyncio
import subprocess


async def start_training(run):
    run.api_process = subprocess.Popen(["run-api"], stdout=run.api_log, stderr=subprocess.STDOUT)

    # Wait for API to start
    await asyncio.sleep(5)  # expect

    if run.api_process.poll() is not None:
        run.status = "failed"
        return
    run.trainer = subprocess.Popen(["launch-training", "--api", run.api_url])
"#,
        r#"
import threading
from time import sleep


def start_rest_server(app, server, run):
    server_thread = threading.Thread(target=run, kwargs={"app": app, "server": server})
    server_thread.daemon = True
    server_thread.start()
    sleep(2)  # expect
    if server_thread.is_alive():
        return True, {"server": server, "thread": server_thread}
    return False, {}
"#,
    ],
    pass: &[
        r#"
import asyncio
from concurrent.futures import ThreadPoolExecutor


async def call_tool(dispatch, name, arguments, limit):
    loop = asyncio.get_running_loop()
    executor = ThreadPoolExecutor(max_workers=1)
    future = loop.run_in_executor(executor, dispatch, name, arguments)
    try:
        await asyncio.sleep(0.01)
        return await asyncio.wait_for(future, timeout=limit)
    finally:
        executor.shutdown(wait=False)
"#,
        r#"
import asyncio


class Manager:
    async def _disconnect(self, server):
        stack = self.stacks.pop(server.name, None)
        if stack:
            await stack.aclose()
        server.connected = False

    async def reconnect(self, server):
        if server.connected:
            await self._disconnect(server)
        # Small delay to ensure cleanup completes
        await asyncio.sleep(0.1)
        await self._connect(server)

    async def _connect(self, server):
        await server.open()
"#,
        r#"
import logging
import time

def open_channel(page, url):
    page.goto(url, wait_until="domcontentloaded")
    try:
        page.wait_for_selector("[data-message-id]", timeout=30_000)
    except Exception:
        logging.warning("messages not visible yet")

    # Give the SPA extra time to fully render the channel.
    time.sleep(2.0)
    return page.title()
"#,
        r#"
import asyncio


async def render(page, url, wait=500):
    await page.goto(url)
    # Wait for the specified time (the caller's setting, in milliseconds)
    await asyncio.sleep(wait / 1000.0)
    return await page.content()
"#,
        r#"
import asyncio

import aiohttp

RETRY_BACKOFF = [0.01, 0.10, 0.25, 1, 2]
MAX_RETRIES = 5


class Connection:
    def __init__(self, session):
        self.session = session

    async def request(self, url, retries=0):
        try:
            async with self.session.get(url, timeout=30) as res:
                if res.status == 200:
                    return await res.text()
        except aiohttp.ClientError:
            pass
        if retries < MAX_RETRIES:
            # sleep to allow the device to catch up
            await asyncio.sleep(RETRY_BACKOFF[retries])
            return await self.request(url, retries + 1)
        return None

    async def send_all(self, cmds, retry=2):
        failed = [cmd for cmd in cmds if not await self.send_one(cmd)]
        if failed and retry > 0:
            await asyncio.sleep(1.0)  # give the battery cam time to wake
            await self.send_all(failed, retry - 1)

    async def send_one(self, cmd):
        async with self.session.post("http://cam/api", json=cmd, timeout=10) as res:
            return res.status == 200
"#,
        r#"
import asyncio


async def search(listener, timeout=5):
    await listener.start()
    # Wait for devices to respond.
    await asyncio.sleep(timeout)
    listener.stop()


class GatewayClient:
    async def is_retryable(self, method, exception):
        if self.retry_count == self.max_retries:
            return False
        # Is retryable, wait for backoff, then increment count
        await asyncio.sleep(self.backoff_factor * (2**self.retry_count))
        self.retry_count += 1
        return True
"#,
        r#"
import asyncio
import trio
import trio.testing

async def test_stops_on_flag(looptime):
    flag = asyncio.Future()
    task = asyncio.create_task(checker(stop_flag=flag))
    await asyncio.sleep(3)
    assert task.done()
    flag.set_result(None)
    await task

async def test_server_times_out(autojump_clock: trio.testing.MockClock):
    async with trio.open_nursery() as nursery:
        nursery.start_soon(serve, 1.0)
        await trio.sleep(2)
        assert len(nursery.child_tasks) == 0
        nursery.cancel_scope.cancel()
"#,
        r#"
import asyncio


async def test_idle_worker_runs_no_hooks(worker, calls):
    await worker.process_one()
    assert calls["before"] == 1
    task = asyncio.create_task(worker.process_one())
    await asyncio.sleep(0.05)
    # Cancelling reads nothing; the assert repeats the one before the sleep.
    task.cancel()
    assert calls["before"] == 1
"#,
        r#"
import anyio


async def test_reentrant(client, other):
    async def first(task_status=anyio.TASK_STATUS_IGNORED):
        async with client:
            task_status.started()
            await anyio.sleep_forever()

    async def second():
        async with client:
            pass

    async def publisher():
        await other.publish("t", "x")

    async with anyio.create_task_group() as tg:
        tg.start_soon(publisher)

    async with anyio.create_task_group() as tg:
        await tg.start(first)
        tg.start_soon(second)
        await anyio.sleep(1)
        # Starts the same function again: reads nothing the first run made.
        tg.start_soon(publisher)
"#,
        r#"
import asyncio


async def test_no_second_delivery(bus):
    seen = []
    task = asyncio.create_task(bus.deliver(seen.append))
    await bus.flush()
    assert seen == ["hello"]
    await asyncio.sleep(0.2)
    assert seen == ["hello"]
    task.cancel()
"#,
        r#"
import asyncio

async def test_worker(queue, results):
    task = asyncio.create_task(worker(queue, results))
    await queue.put("job-1")
    await asyncio.wait_for(queue.join(), timeout=5)
    assert results == ["job-1"]
    task.cancel()

async def poll(flag):
    asyncio.create_task(setter(flag))
    while not flag.ready:
        await asyncio.sleep(0.05)

async def not_yet(stream):
    task = asyncio.create_task(stream.read())
    stream.feed(b"partial")
    await asyncio.sleep(0.1)
    assert not task.done()

async def rate_limit(client):
    await client.send("a")
    # rate limit: at most one message per second
    await asyncio.sleep(1)

async def pacing(client):
    await client.send("a")
    await asyncio.sleep(1)
    assert client.connected

def test_skip_locked(status):
    import threading, time
    thread = threading.Thread(target=lock_rows, args=(status,))
    thread.start()
    time.sleep(1)
    thread.join()
    assert status

async def test_settles(job):
    task = asyncio.create_task(job())
    await asyncio.sleep(0.1)
    await task
"#,
        r#"
import asyncio


async def watch(run_evaluation, config, state, render):
    queue = asyncio.Queue()
    eval_task = asyncio.create_task(run_evaluation(config, events=queue))
    while not eval_task.done():
        render(state)
        await asyncio.sleep(0.25)
    result = await eval_task
    await asyncio.sleep(0.05)
    while not queue.empty():
        state.apply(queue.get_nowait())
    return result
"#,
        r#"
import subprocess
import time


def restart(proc, start):
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    time.sleep(1)  # wait for the old server to let go of its port
    return start()
"#,
        r#"
import asyncio
import random


async def reply(bot, chat, text, correction):
    typing = asyncio.create_task(bot.show_typing(chat))
    await bot.send(chat, text)
    typing.cancel()
    await asyncio.sleep(random.uniform(1.0, 2.0))
    await bot.send(chat, correction)
"#,
        r#"
import asyncio


class Bot:
    def __init__(self, loop):
        self.loop = loop

    async def refresh(self):
        await asyncio.sleep(0)

    async def check_update(self):
        self.loop.create_task(self.refresh())
        await asyncio.sleep(40)
        self.loop.create_task(self.check_update())
"#,
        r#"
import time

def last_offset(consumer, tp):
    consumer.assign([tp])
    # The poll waits, with its own deadline, for the assignment.
    consumer.poll(timeout=1.0)
    time.sleep(0.1)  # small margin to ensure the consumer is ready
    return consumer.get_watermark_offsets(tp, timeout=5.0)
"#,
        r#"
import asyncio

def discover(manager, timeout=5):
    async def run_discovery():
        await manager.start_discovery()
        # Wait for discovery
        await asyncio.sleep(timeout)
        return await manager.get_devices()
    return asyncio.run(run_discovery())
"#,
        r#"
import threading
import time


def authorize(port, serve):
    result = {}

    def run():
        result["code"] = serve(port, timeout=300)

    t = threading.Thread(target=run, daemon=True)
    t.start()

    # Give the server a moment to start
    time.sleep(0.3)

    for _ in range(150):
        time.sleep(2)
        if not t.is_alive():
            break
        if result.get("code"):
            break
    return result.get("code")
"#,
        r#"
import asyncio


class Worker:
    def __init__(self, redis):
        self.redis = redis
        self._shutdown = False
        self._jobs = set()

    async def pop(self):
        try:
            job = await self.redis.blpop("jobs")
            task = asyncio.create_task(self._process(job))
            self._jobs.add(task)
            task.add_done_callback(self._jobs.discard)
        except ConnectionError:
            await asyncio.sleep(2)
            # Tries again after a pause; reads nothing of the job above.
            if not self._shutdown:
                await self.pop()

    async def _process(self, job):
        await asyncio.sleep(0)
"#,
        r#"
import asyncio
import unittest


class WatchdogTest(unittest.IsolatedAsyncioTestCase):
    async def test_keeps_running(self):
        task = asyncio.create_task(self.watchdog())
        await asyncio.sleep(0.2)
        # A check that it has not ended: a slow machine cannot break it.
        self.assertFalse(task.done())
        task.cancel()

    async def watchdog(self):
        while True:
            await asyncio.sleep(1)
"#,
        r#"
import logging
import time

logger = logging.getLogger(__name__)


def open_and_read(page, selector):
    page.wait_for_selector(selector, timeout=30_000)
    logger.info("the page shows %s", selector)
    # Make sure the animation has finished before reading.
    time.sleep(0.5)
    return page.inner_text(selector)
"#,
        r#"
import subprocess
import time


def stop_recording(current_file):
    subprocess.run(["pkill", "-f", "ffmpeg"], capture_output=True)
    # Wait for the file to be fully written.
    time.sleep(0.3)
    audio = current_file()
    if audio is None:
        return 1
    last_size = 0
    for _ in range(10):
        size = audio.stat().st_size
        if size == last_size:
            break
        last_size = size
        time.sleep(0.1)
    return 0
"#,
        r#"
import asyncio
import time


class RateLimiter:
    def __init__(self, min_interval):
        self.min_interval = min_interval
        self.last_request_time = 0.0
        self._lock = asyncio.Lock()

    async def wait_for_rate_limit(self):
        async with self._lock:
            elapsed = time.time() - self.last_request_time
            if elapsed < self.min_interval:
                # Wait for the remaining time
                await asyncio.sleep(self.min_interval - elapsed)
            self.last_request_time = time.time()
"#,
        r#"
import asyncio


async def run_scenario(agent, scenario):
    task = asyncio.create_task(agent.run(scenario.prompt))
    await asyncio.sleep(scenario.cancel_after_s)
    if not task.done():
        task.cancel()
    try:
        return await task
    except asyncio.CancelledError:
        return None
"#,
        r#"
import asyncio
import subprocess


async def start_server(command, cwd):
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    # Give it a moment to see if it starts
    await asyncio.sleep(0.2)

    if process.poll() is None:
        return process, None
    _, err = process.communicate()
    return None, err.decode()
"#,
        r#"
import asyncio

import docker


async def deploy(image, port):
    client = docker.from_env()
    container = client.containers.run(image, detach=True, ports={"8080/tcp": port})

    # Give the container a moment to start, then check it didn't exit immediately.
    await asyncio.sleep(3)
    container.reload()
    if container.status != "running":
        logs = container.logs().decode()
        raise RuntimeError(f"container exited immediately: {logs}")
    return container
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(SleepSynchronization);
}
