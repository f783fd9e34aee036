//! GO033: `time.Sleep` used to wait for goroutines.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct SleepToSynchronize;

pub static META: RuleMeta = RuleMeta {
    id: "GO033",
    name: "sleep-to-synchronize",
    category: Category::SleepSynchronization,
    severity: Severity::Medium,
    languages: &[Language::Go],
    summary: "A `go` statement followed, in the same block, by a `time.Sleep` that waits for the goroutine instead of a WaitGroup or channel.",
    docs: r#"
A function starts a goroutine and then, right after it (nothing but other
`go` statements or plain assignments in between), calls `time.Sleep` and
carries on: the sleep stands in for "the goroutine
has finished (or started)". Tests too: use a WaitGroup, a channel, or
`testing/synctest`. A sleep directly followed by a real wait (`wg.Wait()`,
an errgroup's `Wait`, a receive), or by signals telling the goroutines to
stop (`close(quit)`, `cancel()`, `srv.Stop()`, also as `if err :=
c.Close(); err != nil {..}`) and then such a wait or the end of the
function, is not reported: the wait orders the code after it, and the sleep is only
how long the goroutines run. Nor is a sleep whose goroutine is joined
later in the block with nothing before the join reading what it changes
(a scenario step: let the load run, restart a node, then stop and join),
a grace window for something that must not happen (`select { case
<-passed: t.Fatal(..); default: }` right after it), or a sleep before
connecting to a listener the function opened before the goroutine started,
directly or through an address or URL built from it, or a value such a
URL was stored in (`opts.Servers = ..; opts.Connect()`; the connection
succeeds as soon as the socket listens), or a sleep after which the
function first uses its end of a pipe whose other end it handed the
goroutine, and reads from it (`ca, cb := net.Pipe(); go serve(cb)`,
sleep, `ca.Write(hello)`, `ca.Read(buf)`): the read waits for the
goroutine's answer. Nor is a sleep followed by a loop that polls with
sleeps of its own until the goroutine's work is ready (`for i := 0; i <
10; i++ { if _, err := http.Get(url); err != nil { time.Sleep(d);
continue }; break }`): the loop is the wait, the sleep a head start. Nor
is `time.Sleep(1)` (an untyped constant counts nanoseconds): a yield to
the scheduler, not a guess at how long the goroutine needs.

## Why

A sleep is a guess about scheduling. On a loaded CI machine or in
production under load the goroutine takes longer, and the code after the
sleep reads unfinished results or asserts too early: flaky tests,
occasional wrong answers. When it is long enough to be safe, it wastes
that time on every run.

## Example

```go
package app

import "time"

func Warm(c *Cache, keys []string) {
	go c.Load(keys)
	time.Sleep(500 * time.Millisecond)
	c.MarkReady()
}
```

## Fix

Wait for the actual event.

```go
package app

func Warm(c *Cache, keys []string) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Load(keys)
	}()
	<-done
	c.MarkReady()
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for SleepToSynchronize {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for f in cx.model.function_ids() {
            scan_block(cx, &cx.func(f).body, true, out);
            for s in cx.body_stmts(f).iter().copied() {
                let blocks: Vec<&Block> = match &cx.stmt(s).kind {
                    StmtKind::If { then, orelse, .. } => vec![then, orelse],
                    StmtKind::Block(b) => vec![b],
                    StmtKind::Switch { cases, .. } => cases.iter().map(|c| &c.body).collect(),
                    _ => Vec::new(),
                };
                for b in blocks {
                    scan_block(cx, b, false, out);
                }
            }
        }
    }
}

/// In one statement list: a `go` statement, then (with only other `go`
/// statements or call-free statements in between) a statement-level
/// `time.Sleep` that is not the last statement. `ends_function`: the list
/// is the function's body, so nothing runs after its last statement.
fn scan_block(cx: &FileCx, block: &Block, ends_function: bool, out: &mut Vec<Finding>) {
    let mut started: Option<StmtId> = None;
    for (i, &s) in block.iter().enumerate() {
        if let StmtKind::Go(_) = cx.stmt(s).kind {
            started = Some(s);
            continue;
        }
        let Some(go) = started else { continue };
        // `time.Sleep(1)` is one nanosecond: a yield, not a guess at how
        // long the goroutine needs.
        let is_sleep = matches!(&cx.stmt(s).kind, StmtKind::Expr(e)
            if cx.call(*e).is_some_and(|c| c.target.as_deref() == Some("time.Sleep")
                && !common::nanosecond_sleep(cx, c)));
        if !is_sleep {
            if has_call(cx, s) {
                started = None;
            }
            continue;
        }
        started = None;
        let rest = &block[i + 1..];
        if rest.is_empty()
            || !in_loop_free_context(cx, s)
            || stops_then_waits(cx, rest)
            // `go s.Run(); time.Sleep(d); s.Stop()` and the function ends:
            // nothing reads what the goroutine did, so nothing can come too
            // early; the sleep is only how long it runs.
            || (ends_function && rest.iter().all(|&r| stop_signal(cx, r)))
            || negative_check(cx, rest[0])
            || joined_before_its_results_are_read(cx, go, rest)
            || dials_a_listener_made_before(cx, go, rest)
            || talks_over_its_pipe(cx, go, rest)
            || polls_until_ready(cx, rest)
        {
            continue;
        }
        out.push(cx.finding(
            &META,
            cx.stmt(s).span,
            format!(
                "this sleep waits for the goroutine started at line {} to get somewhere, instead of waiting for it: under load it takes longer and the code below runs too early (flaky, or wrong results)",
                common::line_of(cx, cx.stmt(go).span)
            ),
            "wait for the real event: a `sync.WaitGroup`, a channel the goroutine closes or sends on, or (in tests) `testing/synctest`",
        ));
    }
}

/// The function handed the goroutine one end of a pipe it made before
/// (`ca, cb := net.Pipe()`; `go serve(cb)`), and what it does first after
/// the sleep uses its own end, which it then reads (`ca.Write(hello)`,
/// `ca.Read(buf)`, also through a helper given `ca`): the read waits for
/// the goroutine's answer, so the sleep orders nothing.
fn talks_over_its_pipe(cx: &FileCx, go: StmtId, rest: &[StmtId]) -> bool {
    let f = cx.tree.stmt_func(go);
    let go_at = cx.stmt(go).span.start;
    let StmtKind::Go(go_call) = cx.stmt(go).kind else {
        return false;
    };
    let mentions =
        |exprs: &[ExprId], name: &str| exprs.iter().any(|&x| cx.model.name_of(x) == Some(name));
    let mut handed: Vec<ExprId> = unsnarl_model::walk::exprs_under(cx.model, go_call);
    if let Some(g) = common::go_closure(cx, go_call) {
        handed.extend(common::exprs_deep(cx, g));
    }
    let builtin = |c: &Call| {
        c.receiver.is_none() && matches!(c.name.as_str(), "append" | "make" | "len" | "cap" | "new")
    };
    cx.body_stmts(f).iter().any(|&s| {
        if cx.stmt(s).span.end > go_at {
            return false;
        }
        let StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } = &cx.stmt(s).kind
        else {
            return false;
        };
        if cx.call(*v).is_none_or(|c| c.name != "Pipe") {
            return false;
        }
        let ends: Vec<&str> = targets
            .iter()
            .flat_map(|&t| common::names_in_target(cx, t))
            .collect();
        let [a, b] = ends.as_slice() else {
            return false;
        };
        [(*a, *b), (*b, *a)].into_iter().any(|(mine, theirs)| {
            if !mentions(&handed, theirs) || mentions(&handed, mine) {
                return false;
            }
            let reads = unsnarl_model::walk::exprs_in_block(cx.model, &rest.to_vec())
                .into_iter()
                .any(|e| {
                    cx.call(e).is_some_and(|c| {
                        (c.name == "Read"
                            && c.receiver.and_then(|r| cx.model.name_of(r)) == Some(mine))
                            || (matches!(
                                c.target.as_deref(),
                                Some("io.ReadFull" | "io.ReadAtLeast")
                            ) && c.positional(0).and_then(|r| cx.model.name_of(r))
                                == Some(mine))
                    })
                });
            // The first statement that calls anything (but builtins) or
            // receives uses the pipe.
            let first = rest.iter().copied().find(|&r| {
                unsnarl_model::walk::exprs_in_block(cx.model, &vec![r])
                    .into_iter()
                    .any(|e| {
                        matches!(cx.expr(e).kind, ExprKind::Recv(_))
                            || cx.call(e).is_some_and(|c| !builtin(c))
                    })
            });
            reads
                && first.is_some_and(|r| {
                    mentions(
                        &unsnarl_model::walk::exprs_in_block(cx.model, &vec![r]),
                        mine,
                    )
                })
        })
    })
}

/// The sleep is followed by a dial of a listener the function opened
/// before starting the goroutine (`l, _ := net.Listen(..)`; `go serve(l)`;
/// sleep; `net.Dial("tcp", l.Addr().String())`): the kernel completes the
/// connection as soon as the socket listens, whether or not the goroutine
/// has reached `Accept`, so the sleep orders nothing (it is only dead time).
fn dials_a_listener_made_before(cx: &FileCx, go: StmtId, rest: &[StmtId]) -> bool {
    let f = cx.tree.stmt_func(go);
    let go_at = cx.stmt(go).span.start;
    // `opts.Servers = []string{url}` puts the address into `opts`.
    let target_names = |s: StmtId| -> Vec<String> {
        match &cx.stmt(s).kind {
            StmtKind::Assign { targets, .. } => targets
                .iter()
                .flat_map(|&t| {
                    let mut n = common::names_in_target(cx, t);
                    if n.is_empty()
                        && let ExprKind::Attr { .. } = cx.expr(t).kind
                        && let Some(root) =
                            common::root_name(cx, t).and_then(|r| cx.model.name_of(r))
                    {
                        n.push(root);
                    }
                    n
                })
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        }
    };
    let mentions = |e: ExprId, names: &[String]| {
        unsnarl_model::walk::exprs_under(cx.model, e)
            .into_iter()
            .any(|x| {
                cx.model
                    .name_of(x)
                    .is_some_and(|n| names.iter().any(|m| m == n))
            })
    };
    let mut names: Vec<String> = cx
        .body_stmts(f)
        .iter()
        .filter(|&&s| cx.stmt(s).span.end <= go_at)
        .filter(|&&s| {
            matches!(&cx.stmt(s).kind, StmtKind::Assign { value: Some(v), .. }
            if cx.call(*v).is_some_and(|c| matches!(
                c.target.as_deref(),
                Some("net.Listen" | "net.ListenTCP" | "net.ListenUnix" | "crypto/tls.Listen")
            )))
        })
        .flat_map(|&s| target_names(s).into_iter().take(1))
        .collect();
    if names.is_empty() {
        return false;
    }
    // Values made from the listener (`addr := l.Addr()`, `url :=
    // fmt.Sprintf(.., addr.Port)`), before the goroutine or after the sleep.
    let derive = |s: StmtId, names: &mut Vec<String>| {
        if let StmtKind::Assign { value: Some(v), .. } = &cx.stmt(s).kind
            && mentions(*v, names)
        {
            names.extend(target_names(s));
        }
    };
    for &s in cx.body_stmts(f).iter() {
        if cx.stmt(s).span.end <= go_at {
            derive(s, &mut names);
        }
    }
    // The statements after the sleep connect with one of the values, within
    // the first few or after a run of simple statements that build it (the
    // URL, options and their fields, the server list).
    for (i, &s) in rest.iter().take(12).enumerate() {
        let mut connects = false;
        unsnarl_model::walk::for_each_stmt_child(cx.model, s, &mut |ch| {
            if let unsnarl_model::walk::Child::Expr(e) = ch {
                for x in unsnarl_model::walk::exprs_under(cx.model, e) {
                    if let Some(c) = cx.call(x) {
                        let dials = c.name.starts_with("Dial")
                            || matches!(
                                c.name.as_str(),
                                "Connect" | "Get" | "Post" | "Head" | "Do"
                            );
                        connects |= dials
                            && (c.args.iter().any(|a| mentions(a.value, &names))
                                || c.receiver.is_some_and(|r| mentions(r, &names)));
                    }
                }
            }
        });
        if connects {
            return true;
        }
        // Past the first few, only a run of simple statements (assignments,
        // calls such as an option applied to `&opts`) leads on to it.
        if i >= 3
            && !matches!(
                cx.stmt(s).kind,
                StmtKind::Assign { .. } | StmtKind::Expr(_) | StmtKind::Defer(_)
            )
        {
            return false;
        }
        derive(s, &mut names);
    }
    false
}

/// `t.Fatal(..)`, `t.Errorf(..)`, `t.FailNow()`: the call fails the test.
fn fails_test(cx: &FileCx, e: ExprId) -> bool {
    cx.call(e).is_some_and(|c| {
        let n = c.name.as_str();
        n.starts_with("Fatal") || n.starts_with("Error") || n == "Fail" || n == "FailNow"
    })
}

/// The sleep is a grace window for something that must not happen: right
/// after it, a `select` whose cases fail the test and whose `default` goes
/// on (`case <-passed: t.Fatal("passed a closed gate"); default:`). A slow
/// machine only makes the check weaker; it cannot fail the test.
fn negative_check(cx: &FileCx, s: StmtId) -> bool {
    let StmtKind::Select { arms, .. } = &cx.stmt(s).kind else {
        return false;
    };
    let failing = |e: ExprId| fails_test(cx, e);
    // Fails whatever it received: a failing call among its own statements.
    let fails = |b: &Block| {
        b.iter()
            .any(|&s| matches!(cx.stmt(s).kind, StmtKind::Expr(e) if failing(e)))
    };
    let mut default_goes_on = false;
    for a in arms {
        if matches!(a.kind, ArmKind::Default) {
            default_goes_on = !unsnarl_model::walk::calls_in_block(cx.model, &a.body)
                .into_iter()
                .any(failing);
        } else if !fails(&a.body) {
            return false;
        }
    }
    default_goes_on
}

/// The sleep times a scenario (how long a load runs before the next step),
/// not the goroutine's result: the goroutine (a func literal) is joined
/// later in the same block (`wg.Wait()`, `<-done`), and nothing before the
/// join reads a variable the goroutine assigns.
fn joined_before_its_results_are_read(cx: &FileCx, go: StmtId, rest: &[StmtId]) -> bool {
    let StmtKind::Go(call) = cx.stmt(go).kind else {
        return false;
    };
    let Some(body) = cx
        .call(call)
        .and_then(|c| match cx.expr(cx.model.strip(c.func)).kind {
            ExprKind::Closure(f) => Some(f),
            _ => None,
        })
    else {
        return false;
    };
    let Some(join) = rest.iter().position(|&s| waits(cx, s)) else {
        return false;
    };
    let written: Vec<&str> = cx
        .with_nested(body)
        .into_iter()
        .flat_map(|g| cx.body_stmts(g).iter().copied())
        .filter_map(|s| match &cx.stmt(s).kind {
            StmtKind::Assign { targets, op, .. } if !matches!(op, AssignOp::Declare { .. }) => {
                Some(targets)
            }
            _ => None,
        })
        .flatten()
        .flat_map(|&t| {
            // `s.result = ..`, `out[i] = ..`: the variable it hangs off.
            let mut names = common::names_in_target(cx, t);
            names.extend(common::root_name(cx, t).and_then(|r| cx.model.name_of(r)));
            names
        })
        .collect();
    // Objects it calls methods on (`c.Spin(quit)`) may change too; not
    // its own locals (`js, _ := nc.JetStream()` inside it shadows any `js`
    // of the test).
    // Nor the test's handle: `t.Error(err)` in the goroutine reports, and
    // a step handed `t` (`m.Restart(t)`) does not read what it reported.
    let test_handle = |r: ExprId| {
        matches!(
            cx.sema.type_of(r),
            Some("testing.T" | "testing.B" | "testing.TB" | "testing.F")
        )
    };
    let mut touched = written;
    touched.extend(cx.with_nested(body).into_iter().flat_map(|g| {
        cx.body_calls(g)
            .filter_map(|e| cx.call(e).and_then(|c| c.receiver))
            .filter_map(|r| common::root_name(cx, r))
            .filter(|&r| !test_handle(r))
            .filter_map(|r| cx.model.name_of(r))
            .filter(|n| common::bindings(cx, body, n).is_empty())
            .collect::<Vec<_>>()
    }));
    let reads = |e: ExprId| {
        unsnarl_model::walk::exprs_under(cx.model, e)
            .into_iter()
            .any(|x| cx.model.name_of(x).is_some_and(|n| touched.contains(&n)))
    };
    // A step of the scenario (`n.stop()`, its result unused) acts on the
    // objects; anything whose value is used (`v := c.Value()`, a
    // condition, an argument) reads them.
    !rest[..join].iter().any(|&s| match &cx.stmt(s).kind {
        StmtKind::Expr(e) => match cx.call(cx.model.strip(*e)) {
            Some(c) if c.receiver.is_some() => c.args.iter().any(|a| reads(a.value)),
            _ => reads(*e),
        },
        _ => {
            let mut found = false;
            unsnarl_model::walk::for_each_stmt_child(cx.model, s, &mut |ch| {
                found |= match ch {
                    unsnarl_model::walk::Child::Expr(e) => reads(e),
                    unsnarl_model::walk::Child::Block(b) => {
                        unsnarl_model::walk::exprs_in_block(cx.model, b)
                            .into_iter()
                            .any(reads)
                    }
                };
            });
            found
        }
    })
}

/// After the sleep, only signals telling the goroutines to stop
/// (`close(quit)`, `cancel()`, `srv.Stop()`, `stop <- true`), then a real
/// wait: the sleep is how long they run (a stress test, a load run), not a
/// guess at when they finish, and the join orders what follows.
fn stops_then_waits(cx: &FileCx, rest: &[StmtId]) -> bool {
    rest.iter()
        .find(|&&s| !stop_signal(cx, s) && !joins_in_a_goroutine(cx, s))
        .is_some_and(|&s| waits(cx, s))
}

/// The set-up of a join with a timeout: `done := make(chan struct{})`, and
/// `go func() { defer close(done); wg.Wait() }()` (the wait the select
/// after it receives from).
fn joins_in_a_goroutine(cx: &FileCx, s: StmtId) -> bool {
    match &cx.stmt(s).kind {
        StmtKind::Assign { value: Some(v), .. } => cx.call(*v).is_some_and(|c| {
            c.name == "make"
                && c.positional(0)
                    .is_some_and(|t| cx.source(cx.expr(t).span).trim_start().starts_with("chan"))
        }),
        // A `Wait()` with no arguments counts even when the receiver's type
        // is declared in another file (`transport.wg.Wait()`): nothing else
        // in such a closure would be waited for through `done`.
        StmtKind::Go(call) => common::go_closure(cx, *call).is_some_and(|g| {
            cx.body_calls(g).any(|e| {
                cx.call(e).is_some_and(|c| {
                    cx.effect(c, Effect::Blocking)
                        .is_some_and(common::waits_for_goroutines)
                        || (c.name == "Wait" && c.args.is_empty() && c.receiver.is_some())
                })
            })
        }),
        _ => false,
    }
}

fn stop_signal(cx: &FileCx, s: StmtId) -> bool {
    match &cx.stmt(s).kind {
        StmtKind::Expr(e) => stop_call(cx, *e),
        // `if err := c.Close(); err != nil { t.Fatal(err) }`: the init
        // statement is the signal, the check only reports its failure.
        StmtKind::Block(b) => matches!(b.as_slice(), [init, check]
            if matches!(&cx.stmt(*init).kind, StmtKind::Assign { value: Some(v), .. }
                if stop_call(cx, *v))
                && matches!(cx.stmt(*check).kind, StmtKind::If { .. })),
        _ => false,
    }
}

/// `close(quit)`, `cancel()`, `srv.Stop()`, `stop <- true`, an atomic
/// store of a flag.
fn stop_call(cx: &FileCx, e: ExprId) -> bool {
    match &cx.expr(cx.model.strip(e)).kind {
        ExprKind::Send { .. } => true,
        ExprKind::Call(c) => {
            common::is_stop_method(&c.name)
                || matches!(c.name.as_str(), "cancel" | "stop" | "Cancel")
                || (c.name.as_str() == "close" && c.receiver.is_none())
                || (c
                    .target
                    .as_deref()
                    .is_some_and(|t| t.starts_with("sync/atomic."))
                    && c.name.starts_with("Store"))
        }
        _ => false,
    }
}

/// The statement after the sleep waits for real: `wg.Wait()` (a WaitGroup
/// or an errgroup), or a receive (`<-done`, `v := <-results`, also in an
/// `if`'s init statement). The sleep then stands in for nothing.
fn waits(cx: &FileCx, s: StmtId) -> bool {
    let value = match &cx.stmt(s).kind {
        // `if e := <-errCh; e != want {..}`: the init statement comes first.
        StmtKind::Block(b) => return b.first().is_some_and(|&first| waits(cx, first)),
        StmtKind::Expr(e) => *e,
        StmtKind::Assign { value: Some(v), .. } => *v,
        // `select { case <-done: case <-time.After(d): t.Fatal(..) }`: a
        // receive whose only way out otherwise fails the test.
        StmtKind::Select { arms, .. } => {
            let fails = |b: &Block| {
                unsnarl_model::walk::calls_in_block(cx.model, b)
                    .into_iter()
                    .any(|e| fails_test(cx, e) || cx.call(e).is_some_and(|c| c.name == "panic"))
            };
            let timeout = |ch: ExprId| {
                cx.call(cx.model.strip(ch)).is_some_and(|c| {
                    matches!(c.target.as_deref(), Some("time.After" | "time.Tick"))
                        || c.name == "Done"
                })
            };
            return arms
                .iter()
                .any(|a| matches!(a.kind, ArmKind::Recv { channel, .. } if !timeout(channel)))
                && arms.iter().all(|a| match a.kind {
                    ArmKind::Recv { channel, .. } if timeout(channel) => fails(&a.body),
                    ArmKind::Recv { .. } => true,
                    _ => false,
                });
        }
        _ => return false,
    };
    match &cx.expr(cx.model.strip(value)).kind {
        ExprKind::Recv(_) => true,
        ExprKind::Call(c) => cx
            .effect(c, Effect::Blocking)
            .is_some_and(common::waits_for_goroutines),
        _ => false,
    }
}

/// The sleep is followed (after call-free set-up such as `i := 0`) by a
/// loop that retries with sleeps of its own (`for i := 0; i < 10; i++ {
/// resp, err := http.Get(url); if err != nil { time.Sleep(d); continue }
/// .. }`): the loop waits for readiness, and the sleep before it is only
/// a head start.
fn polls_until_ready(cx: &FileCx, rest: &[StmtId]) -> bool {
    let Some(&first) = rest.iter().find(|&&r| has_call(cx, r)) else {
        return false;
    };
    // (A three-clause `for` is a block of its set-up and the loop.)
    let lp = match &cx.stmt(first).kind {
        StmtKind::Block(b) => b.last().copied().unwrap_or(first),
        _ => first,
    };
    let body = match &cx.stmt(lp).kind {
        StmtKind::While { body, .. } | StmtKind::For { body, .. } | StmtKind::Loop { body } => body,
        _ => return false,
    };
    unsnarl_model::walk::calls_in_block(cx.model, body)
        .into_iter()
        .any(|e| {
            cx.call(e)
                .is_some_and(|c| c.target.as_deref() == Some("time.Sleep"))
        })
}

/// Any call, receive or select in the statement: it does real work (or
/// waits) between the `go` and the sleep.
fn has_call(cx: &FileCx, s: StmtId) -> bool {
    if !matches!(cx.stmt(s).kind, StmtKind::Expr(_) | StmtKind::Assign { .. }) {
        return true;
    }
    let mut found = false;
    unsnarl_model::walk::for_each_stmt_child(cx.model, s, &mut |ch| {
        if let unsnarl_model::walk::Child::Expr(e) = ch {
            found |= unsnarl_model::walk::exprs_under(cx.model, e)
                .into_iter()
                .any(|x| {
                    matches!(
                        cx.expr(x).kind,
                        ExprKind::Call(_) | ExprKind::Recv(_) | ExprKind::Send { .. }
                    )
                });
        }
    });
    found
}

/// The sleep is not itself inside a loop of its function (polling).
fn in_loop_free_context(cx: &FileCx, s: StmtId) -> bool {
    common::enclosing_loops(cx, s).is_empty()
        && !matches!(cx.tree.stmt_parent(s), Parent::Stmt(p) if matches!(cx.stmt(p).kind, StmtKind::Select { .. }))
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[
        r#"
package app

import "time"

func Start(s *Server) {
	go s.Listen()
	time.Sleep(100 * time.Millisecond) // expect
	s.RegisterRoutes()
}
"#,
        r#"
// file: app/worker_test.go
package app

import (
	"testing"
	"time"
)

func TestWorker(t *testing.T) {
	w := NewWorker()
	go w.Process("job")
	time.Sleep(50 * time.Millisecond) // expect
	if w.Done() != 1 {
		t.Fatal("not processed")
	}
}
"#,
        r#"
package app

import (
	"sync"
	"time"
)

func Hammer(c *Counter) int {
	var wg sync.WaitGroup
	quit := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.Spin(quit)
	}()
	time.Sleep(100 * time.Millisecond) // expect
	n := c.Value()
	close(quit)
	wg.Wait()
	return n
}
"#,
        r#"
package app

import (
	"sync"
	"testing"
	"time"
)

func TestCompute(t *testing.T) {
	var wg sync.WaitGroup
	s := &state{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.result = compute()
	}()
	time.Sleep(10 * time.Millisecond) // expect
	if s.result != 55 {
		t.Fatal(s.result)
	}
	wg.Wait()
}

func TestGateOpens(t *testing.T) {
	g := NewGate()
	passed := make(chan struct{}, 1)
	go func() {
		g.Open()
		passed <- struct{}{}
	}()
	time.Sleep(50 * time.Millisecond) // expect
	select {
	case <-passed:
	default:
		t.Fatal("gate did not open")
	}
}
"#,
        r#"
package app

import (
	"net"
	"testing"
	"time"
)

func TestGreeting(t *testing.T) {
	addr := "127.0.0.1:7070"
	go func() {
		l, _ := net.Listen("tcp", addr)
		c, _ := l.Accept()
		c.Close()
	}()
	time.Sleep(100 * time.Millisecond) // expect
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}
"#,
        r#"
package pingtest

import (
	"fmt"
	"net"
	"testing"
	"time"
)

func TestBanner(t *testing.T) {
	addr := "127.0.0.1:4222"
	go func() {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return
		}
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		fmt.Fprintf(c, "HELLO\r\n")
	}()

	time.Sleep(100 * time.Millisecond) // expect

	opts := DefaultOptions()
	opts.Servers = []string{fmt.Sprintf("tcp://%s", addr)}
	nc, err := opts.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
}
"#,
        r#"
package cron

import (
	"testing"
	"time"
)

type Sched struct {
	running bool
	stop    chan struct{}
}

func (s *Sched) Run()  { s.running = true; <-s.stop }
func (s *Sched) Stop() { close(s.stop) }

func TestStartThenStop(t *testing.T) {
	s := &Sched{stop: make(chan struct{})}
	go s.Run()
	time.Sleep(2 * time.Millisecond) // expect
	s.Stop()
	if !s.running {
		t.Fatal("not running")
	}
}
"#,
        r#"
package pipe

import (
	"io"
	"net"
	"testing"
	"time"
)

// Closed, then read what the copy did before anything joined it.
func TestCloseWhileCopy(t *testing.T) {
	c1, c2 := net.Pipe()
	var copied int64
	done := make(chan error)
	go func() { c2.Write([]byte("foobar")) }()
	go func() { n, err := io.Copy(io.Discard, c1); copied = n; done <- err }()
	time.Sleep(10 * time.Millisecond) // expect
	if err := c1.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	report(copied)
	<-done
}
"#,
        r#"
package transport

import (
	"sync/atomic"
	"testing"
	"time"
)

// NetTransport is declared in another file of the package.
func TestListenBackoff(t *testing.T) {
	var calls int32
	tr := NetTransport{calls: &calls}
	tr.wg.Add(1)
	go tr.listen()
	time.Sleep(time.Second) // expect
	atomic.StoreInt32(&tr.shutdown, 1)
	if atomic.LoadInt32(&calls) > 14 {
		t.Fatal("no backoff")
	}
}
"#,
        r#"
package app

import (
	"fmt"
	"net"
	"testing"
	"time"
)

func TestFlushOnClose(t *testing.T) {
	var addr *net.TCPAddr
	go func() {
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		addr = l.Addr().(*net.TCPAddr)
		conn, _ := l.Accept()
		serveMock(conn)
	}()

	// The goroutine opens the listener: the sleep guesses when it has.
	time.Sleep(100 * time.Millisecond) // expect

	url := fmt.Sprintf("nats://%s:%d", addr.IP, addr.Port)
	opts := defaultOptions()
	opts.AllowReconnect = false
	opts.Timeout = time.Second
	opts.PingInterval = 20 * time.Millisecond
	opts.MaxPingsOut = 2
	opts.Servers = []string{url}
	nc, err := opts.Connect()
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
}
"#,
        r#"
package app

import (
	"net"
	"testing"
	"time"
)

func TestHandshake(t *testing.T) {
	ca, cb := net.Pipe()
	srv := newServer()
	go func() {
		if err := srv.serve(cb); err != nil {
			t.Error(err)
		}
	}()
	time.Sleep(50 * time.Millisecond) // expect
	if !srv.Ready() {
		t.Fatal("server not ready")
	}
	if _, err := ca.Write(hello()); err != nil {
		t.Fatal(err)
	}
}
"#,
        r#"
package app

import (
	"testing"
	"time"
)

func TestWorkers(t *testing.T) {
	results := make([]int, 2)
	go func() { results[0] = work(0) }()
	go func() { results[1] = work(1) }()
	time.Sleep(100 * time.Millisecond) // expect
	// A loop over the results, with no waiting of its own.
	for i, r := range results {
		if r == 0 {
			t.Errorf("worker %d did nothing", i)
		}
	}
}
"#,
    ],
    pass: &[
        r#"
package app

import (
	"sync"
	"time"
)

// A nanosecond yield; the goroutines meet on the channel and are joined.
func PingPong() {
	var wg sync.WaitGroup
	receiver := func(ch chan int) { defer wg.Done(); <-ch }
	sender := func(ch chan int) { defer wg.Done(); ch <- 1 }
	ch := make(chan int)
	wg.Add(2)
	go receiver(ch)
	time.Sleep(1)
	go sender(ch)
	wg.Wait()
}
"#,
        r#"
package transport

import (
	"sync/atomic"
	"testing"
	"time"
)

// NetTransport is declared in another file of the package. The sleep is
// how long the loop runs; then it is flagged to stop and joined.
func TestListenBackoff(t *testing.T) {
	var calls int32
	tr := NetTransport{calls: &calls}
	tr.wg.Add(1)
	go tr.listen()
	time.Sleep(time.Second)
	atomic.StoreInt32(&tr.shutdown, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tr.wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("listener did not stop")
	}
	if atomic.LoadInt32(&calls) > 14 {
		t.Fatal("no backoff")
	}
}
"#,
        r#"
package pipe

import (
	"io"
	"net"
	"testing"
	"time"
)

// The sleep is how long the copies run; the closes stop them (each checked
// for an error) and the receives join them.
func TestCloseWhileCopy(t *testing.T) {
	c1, c2 := net.Pipe()
	readCh, writeCh := make(chan error), make(chan error)
	go func() { _, err := io.Copy(io.Discard, c1); readCh <- err }()
	go func() { _, err := c2.Write([]byte("foobar")); writeCh <- err }()
	time.Sleep(10 * time.Millisecond)
	if err := c1.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := c2.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	<-readCh
	<-writeCh
}
"#,
        r#"
package cron

import (
	"testing"
	"time"
)

type Sched struct{ stop chan struct{} }

func (s *Sched) Run()  { <-s.stop }
func (s *Sched) Stop() { close(s.stop) }

// A race-detector test: Stop must work whether or not Run has started, and
// nothing after the sleep reads what Run did.
func TestStartAndStop(t *testing.T) {
	s := &Sched{stop: make(chan struct{})}
	go s.Run()
	time.Sleep(2 * time.Millisecond)
	s.Stop()
}
"#,
        r#"
package pingtest

import (
	"fmt"
	"net"
	"testing"
	"time"
)

func TestBanner(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	addr := l.Addr().String()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		fmt.Fprintf(c, "HELLO\r\n")
	}()

	time.Sleep(100 * time.Millisecond)

	opts := DefaultOptions()
	opts.Servers = []string{fmt.Sprintf("tcp://%s", addr)}
	nc, err := opts.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
}
"#,
        r#"
package app

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

func TestIndirectDial(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().(*net.TCPAddr)
	go func() {
		conn, _ := l.Accept()
		conn.Close()
	}()
	time.Sleep(100 * time.Millisecond)
	opts := Options{URL: fmt.Sprintf("tcp://%s:%d", addr.IP, addr.Port)}
	nc, err := opts.Connect()
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
}

func TestMoveUnderLoad(t *testing.T) {
	js := connect()
	var wg sync.WaitGroup
	quit := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		js := connect()
		for {
			select {
			case <-quit:
				return
			default:
				js.Publish()
			}
		}
	}()
	time.Sleep(500 * time.Millisecond)
	js.Move("C2")
	close(quit)
	wg.Wait()
}
"#,
        r#"
package app

import (
	"net"
	"testing"
	"time"
)

func TestGreeting(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		c.Write([]byte("hello\n"))
		c.Close()
	}()
	time.Sleep(100 * time.Millisecond)
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}
"#,
        r#"
package app

import (
	"sync"
	"testing"
	"time"
)

func TestRestartUnderLoad(t *testing.T) {
	n := &node{}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			n.send()
			select {
			case <-quit:
				return
			default:
			}
		}
	}()
	time.Sleep(200 * time.Millisecond)
	n.stop()
	n.restart()
	close(quit)
	wg.Wait()
}

func TestGateBlocks(t *testing.T) {
	g := NewGate()
	passed := make(chan struct{}, 1)
	go func() {
		g.Wait()
		passed <- struct{}{}
	}()
	time.Sleep(50 * time.Millisecond)
	select {
	case <-passed:
		t.Fatal("passed a closed gate")
	default:
	}
	g.Open()
	<-passed
}
"#,
        r#"
package app

import (
	"context"
	"sync"
	"time"
)

// Runs the load for a while, then stops it and waits: the sleep is how
// long it runs, and the Wait orders the read below.
func Hammer(c *Counter) int {
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	quit := make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		c.Spin(quit)
	}()
	go func() {
		defer wg.Done()
		c.Load(ctx)
	}()
	time.Sleep(100 * time.Millisecond)
	close(quit)
	cancel()
	wg.Wait()
	return c.Value()
}
"#,
        r#"
package app

import (
	"sync"
	"time"
)

// The sleep gives the goroutine a head start; the Wait after it is what
// orders the code below.
func Drain(q *Queue) []int {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		q.Fill()
	}()
	time.Sleep(10 * time.Millisecond)
	wg.Wait()
	return q.Items()
}

func First(c *Client) int {
	done := make(chan int)
	go func() { done <- c.Fetch() }()
	time.Sleep(time.Millisecond)
	v := <-done
	return v
}
"#,
        r#"
package app

import (
	"sync"
	"time"
)

func Start(s *Server) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.Listen()
	}()
	wg.Wait()
	time.Sleep(time.Second)
	s.RegisterRoutes()
}

func Retry(s *Server) {
	for i := 0; i < 3; i++ {
		go s.Ping()
		time.Sleep(time.Second)
		s.Check()
	}
}

func Forever(s *Server) {
	go s.Listen()
	time.Sleep(time.Hour)
}
"#,
        r#"
// file: client/close_test.go
package client

import (
	"testing"
	"time"
)

// The sleep only lets Request start before Close interrupts it; the
// result is then received, and a late goroutine still gets ErrClosed.
func TestCloseKicksOutRequest(t *testing.T) {
	nc := newConn()
	errCh := make(chan error, 1)
	go func() {
		errCh <- nc.Request("x", time.Second)
	}()
	time.Sleep(100 * time.Millisecond)
	nc.Close()
	if e := <-errCh; e != ErrClosed {
		t.Fatalf("unexpected: %v", e)
	}
}
"#,
        r#"
// file: kv/restart_test.go
package kv

import (
	"context"
	"testing"
	"time"
)

// A scenario step handed the test's `t`, then the join.
func TestGetRetriesAfterRestart(t *testing.T) {
	clus := newCluster(t)
	kv := clus.Client(0)
	clus.Members[0].Stop(t)
	donec := make(chan struct{})
	go func() {
		if _, err := kv.Get(context.TODO(), "foo"); err != nil {
			t.Error(err)
		}
		donec <- struct{}{}
	}()
	time.Sleep(100 * time.Millisecond)
	clus.Members[0].Restart(t)
	select {
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for get")
	case <-donec:
	}
}
"#,
        r#"
// file: transport/accept_test.go
package transport

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type listener struct {
	shutdown int32
	wg       sync.WaitGroup
	errors   int32
}

func (l *listener) acceptLoop(ln net.Listener) {
	defer l.wg.Done()
	for atomic.LoadInt32(&l.shutdown) == 0 {
		if _, err := ln.Accept(); err != nil {
			atomic.AddInt32(&l.errors, 1)
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// The sleep is how long the loop runs: then it is stopped and joined.
func TestAcceptBackoff(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ln.Close()
	l := &listener{}
	l.wg.Add(1)
	go l.acceptLoop(ln)

	time.Sleep(3 * time.Second)
	atomic.StoreInt32(&l.shutdown, 1)

	done := make(chan struct{})
	go func() {
		defer close(done)
		l.wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("loop did not stop")
	}
	if n := atomic.LoadInt32(&l.errors); n > 700 {
		t.Fatalf("no back-off: %d errors", n)
	}
}
"#,
        r#"
package app

import (
	"fmt"
	"net"
	"testing"
	"time"
)

func TestFlushOnClose(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tl := l.(*net.TCPListener)
	defer tl.Close()
	addr := tl.Addr().(*net.TCPAddr)
	go func() {
		conn, _ := l.Accept()
		serveMock(conn)
	}()

	// The socket listens already: connecting does not need the goroutine.
	time.Sleep(100 * time.Millisecond)

	url := fmt.Sprintf("nats://%s:%d", addr.IP, addr.Port)
	opts := defaultOptions()
	opts.AllowReconnect = false
	opts.Timeout = time.Second
	opts.PingInterval = 20 * time.Millisecond
	opts.MaxPingsOut = 2
	opts.Servers = []string{url}
	nc, err := opts.Connect()
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
}
"#,
        r#"
package app

import (
	"net"
	"testing"
	"time"
)

// The test talks to the server over the pipe after the sleep: the read
// waits for the server's answer, whatever the sleep's length.
func TestHandshake(t *testing.T) {
	ca, cb := net.Pipe()
	go func() {
		if err := serve(cb); err != nil {
			t.Error(err)
		}
	}()
	time.Sleep(50 * time.Millisecond)
	resp := make([]byte, 1024)
	if _, err := ca.Write(hello()); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Read(resp); err != nil {
		t.Fatal(err)
	}
}
"#,
        r#"
package app

import (
	"net/http"
	"os/exec"
	"testing"
	"time"
)

func TestStart(t *testing.T) {
	cmd := exec.Command("server")
	errc := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		if err := cmd.Wait(); err != nil {
			errc <- err
		}
	}()
	time.Sleep(50 * time.Millisecond)
	for i := 0; i < 10; i++ {
		resp, err := http.Get("http://localhost:9093/")
		if err != nil {
			time.Sleep(500 * time.Millisecond)
			continue
		}
		resp.Body.Close()
		return
	}
	// The loop polls until the server answers; the sleep is a head start.
	t.Fatal("not ready")
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(SleepToSynchronize);
}
