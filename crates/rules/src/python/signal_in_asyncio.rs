//! PY033: `signal.signal` in a program that runs an asyncio loop.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct SignalInAsyncio;

pub static META: RuleMeta = RuleMeta {
    id: "PY033",
    name: "signal-signal-in-asyncio",
    category: Category::SignalHandlerWork,
    severity: Severity::Medium,
    languages: &[Language::Python],
    summary: "A handler is installed with `signal.signal` in a module that runs asyncio code, instead of `loop.add_signal_handler`.",
    docs: r#"
`signal.signal(sig, handler)` with a real handler (not `SIG_DFL`/`SIG_IGN`)
in a module that runs coroutines (it defines `async def` functions or
starts a loop; not one with no coroutine of its own that runs its loops
only on threads it starts, `threading.Thread(target=run_loop)` or
`target=loop.run_forever`, where
handlers run on the main thread), where the handler does not hand off with
`call_soon_threadsafe`, `run_coroutine_threadsafe`, trio's
`TrioToken.run_sync_soon` or tornado's `IOLoop.add_callback_from_signal`
(itself or through a
function of the file it calls; called directly or first taken as a bound
method, `call_soon = loop.call_soon_threadsafe`). A handler that calls nothing, only setting a flag
that a task or loop polls (`stop = True`, `self.running = False`, or
`.set()` on a `threading.Event` of the file that something else reads, with at
most a `raise KeyboardInterrupt` on a second signal, and perhaps a log
line or a `print` beside it when something else in the file reads the
flag), is left alone: it touches nothing of the loop's. So is one that ends the process at once
(`os._exit(1)`, a force exit that works even while the loop is stuck, or
`os.execv(..)`, a restart that replaces the process,
or the default action put back and the signal sent again:
`signal.signal(sig, signal.SIG_DFL); os.kill(os.getpid(), sig)`),
forwards it as SIGINT (`lambda *_: signal.raise_signal(signal.SIGINT)`,
whose handler `asyncio.run` makes loop-aware) or
raises an exception of its own (`sys.exit(0)` raises `SystemExit`; `raise
KeyboardInterrupt` does what SIGINT's own handler does), with
perhaps a log line (also on a logger of unknown type named `logger` or
`log`) or a `print` (`console.print`, rich's `print`, `click.echo`) on the way out, also
through helpers of the file that only do that (`self.log(msg)`,
`self.cleanup()` that only logs); when the exit is the handler's last
statement (also the last of a `finally` that closes its body), other
calls of the standard library outside asyncio and
threading may come before it too (restoring the terminal with
`termios.tcsetattr`, `conn.send(ack)` on a multiprocessing connection,
naming the signal with `signal.Signals(signum).name`, also in helpers of
the file), and before an `os._exit(..)` that ends the handler an event
may be set (`shutdown.set()`): the process ends before anything wakes.
PY034 reports the logging and printing (a
write they make can fail if the signal interrupts one on the same stream;
none of it touches the loop). One
that only logs swallows the signal and is reported. Nor is the fallback for a loop without
`add_signal_handler` (`signal.signal` in the `except NotImplementedError:`
of a `try` that calls it or opens anyio's or trio's signal receiver on
it, as on Windows, also under `if not ok:` after a `try` that sets `ok
= True` once the loop's handler is installed, or in the Windows branch of an
`if sys.platform == "win32":` whose other branch calls it), nor a SIGINT
or SIGTERM handler (also installed in a loop over those two) a plain function installs before it calls
`uvicorn.run(..)`: uvicorn takes those two signals over while it serves
and gives the old handlers back (replaying the signal to them) only once
the server has shut down, nor one in a module with no coroutine of its
own, by a function that starts its loop only in an earlier branch that
leaves it (`if gateway: asyncio.run(serve()); return`): the install is on
the synchronous path. Nor is a handler that only starts a thread for its
work (`threading.Thread(target=self._confirm_exit).start()`), perhaps
re-arming a signal first: nothing of it runs on the loop's thread.

## Why

A `signal.signal` handler runs between two bytecodes of whatever the main
thread was doing, possibly in the middle of the event loop's own
bookkeeping. Touching the loop, tasks, futures or locks from there is not
safe, and the loop does not wake up to react until its next I/O event.
`loop.add_signal_handler` integrates with the loop's wakeup pipe and runs
the callback as an ordinary loop callback.

## Example

```python
import asyncio
import signal

async def main(stop: asyncio.Event):
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    await stop.wait()
```

## Fix

```python
import asyncio
import signal

async def main(stop: asyncio.Event):
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
```
"#,
    examples: &EXAMPLES,
};

/// The call is the fallback where `loop.add_signal_handler` is missing
/// (`try: loop.add_signal_handler(..) except NotImplementedError:
/// signal.signal(..)`, or the Windows branch of a platform test whose other
/// branch uses it): the code already uses the loop's way wherever the loop
/// has one.
fn fallback_of_add_signal_handler(cx: &FileCx, id: ExprId) -> bool {
    let Some(s) = cx.tree.enclosing_stmt(id) else {
        return false;
    };
    // A block, or a method of the file it calls (`self._install_unix()`).
    let reaches = |b: &Block, pred: &dyn Fn(ExprId) -> bool| {
        unsnarl_model::walk::exprs_in_block(cx.model, b)
            .into_iter()
            .any(|e| {
                pred(e)
                    || cx.call(e).is_some_and(|c| {
                        crate::python::common::local_callable(cx, c.func)
                            .is_some_and(|g| cx.body_exprs(g).iter().any(|&x| pred(x)))
                    })
            })
    };
    // The loop's own handler, or anyio's/trio's signal receiver built on
    // it (`with anyio.open_signal_receiver(SIGINT) as signals:`).
    let loop_handler = |e: ExprId| {
        cx.call(e).is_some_and(|c| {
            c.name == "add_signal_handler"
                || matches!(
                    c.target.as_deref(),
                    Some("anyio.open_signal_receiver" | "trio.open_signal_receiver")
                )
        })
    };
    let uses_loop_handler = |b: &Block| reaches(b, &loop_handler);
    // `if sys.platform == "win32": signal.signal(..) else:
    // loop.add_signal_handler(..)`, also through a method per branch:
    // Windows' loops have no `add_signal_handler`.
    let this_call = |e: ExprId| e == id;
    let platform_branch = cx.model.stmts.iter().any(|st| {
        let StmtKind::If { cond, then, orelse } = &st.kind else {
            return false;
        };
        let on_platform = unsnarl_model::walk::exprs_under(cx.model, *cond)
            .into_iter()
            .any(|e| {
                cx.model.dotted(e).is_some_and(|d| {
                    matches!(d.as_str(), "sys.platform" | "os.name" | "platform.system")
                }) || cx
                    .call(e)
                    .is_some_and(|c| c.target.as_deref() == Some("platform.system"))
            });
        on_platform
            && ((reaches(then, &this_call) && uses_loop_handler(orelse))
                || (reaches(orelse, &this_call) && uses_loop_handler(then)))
    });
    // `try: loop.add_signal_handler(..); ok = True except
    // NotImplementedError: ok = False`, then `if not ok: signal.signal(..)`.
    let catches_missing = |h: &Handler| {
        h.types
            .iter()
            .any(|t| t.rsplit('.').next() == Some("NotImplementedError"))
    };
    let flagged_fallback = cx.tree.stmt_ancestors(s).any(|a| {
        let StmtKind::If { cond, then, .. } = &cx.stmt(a).kind else {
            return false;
        };
        let ExprKind::Unary {
            op: UnOp::Not,
            operand,
        } = &cx.expr(cx.model.strip(*cond)).kind
        else {
            return false;
        };
        let Some(flag) = cx.model.name_of(cx.model.strip(*operand)) else {
            return false;
        };
        // The flag is set `True` in the `try` that installs the loop's handler.
        let sets_true = |b: &Block| {
            unsnarl_model::walk::stmts_in_block(cx.model, b)
                .into_iter()
                .any(|x| {
                    matches!(&cx.stmt(x).kind, StmtKind::Assign { targets, value: Some(v), .. }
                        if targets.iter().any(|&t| cx.model.name_of(t) == Some(flag))
                            && matches!(cx.model.literal(*v), Some(Lit::Bool(true))))
                })
        };
        then.iter()
            .any(|&b| cx.stmt(b).span.contains(cx.stmt(s).span))
            && cx.model.stmts.iter().any(|st| {
                matches!(&st.kind, StmtKind::Try { body, handlers, .. }
                    if st.span.end <= cx.stmt(a).span.start
                        && handlers.iter().any(catches_missing)
                        && uses_loop_handler(body)
                        && sets_true(body))
            })
    });
    platform_branch
        || flagged_fallback
        || cx.tree.stmt_ancestors(s).any(|a| {
            let StmtKind::Try { body, handlers, .. } = &cx.stmt(a).kind else {
                return false;
            };
            handlers.iter().any(|h| {
                catches_missing(h)
                    && h.body
                        .iter()
                        .any(|&b| cx.stmt(b).span.contains(cx.stmt(s).span))
            }) && uses_loop_handler(body)
        })
}

impl Rule for SignalInAsyncio {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        let handlers = cx.calls_to(&["signal.signal"]);
        if handlers.is_empty() {
            return;
        }
        let runs_asyncio = cx.model.functions.iter().any(|f| f.is_async)
            || !cx
                .calls_to(&[
                    "asyncio.run",
                    "asyncio.get_event_loop",
                    "asyncio.new_event_loop",
                    "asyncio.Runner",
                ])
                .is_empty();
        // The event loop's own implementation of `add_signal_handler`.
        if !runs_asyncio
            || cx.text.contains("def add_signal_handler")
            || loop_only_on_worker_threads(cx)
        {
            return;
        }
        for (id, c) in handlers {
            let e = cx.expr(id);
            if matches!(cx.tree.expr_parent(id), Parent::Detached)
                || cx.func(cx.func_of(id)).is_test
                || fallback_of_add_signal_handler(cx, id)
                || replaced_while_uvicorn_runs(cx, id, c)
                || loop_mode_returned_before(cx, id)
            {
                continue;
            }
            let Some(h) = c.positional(1).or_else(|| c.kwarg("handler")) else {
                continue;
            };
            let Some(f) = crate::python::common::local_callable(cx, h) else {
                continue;
            };
            // Directly or through a one-line helper of the file.
            // Trio's `TrioToken.run_sync_soon` is its thread- and
            // signal-safe entry into the loop, tornado's
            // `IOLoop.add_callback_from_signal` its.
            let safe_entry = |name: &str| {
                matches!(
                    name,
                    "call_soon_threadsafe"
                        | "run_coroutine_threadsafe"
                        | "run_sync_soon"
                        | "add_callback_from_signal"
                )
            };
            // Called, or taken as a bound method first (`call_soon =
            // loop.call_soon_threadsafe; call_soon(task.cancel)`).
            let hands_off_in = |g: FuncId| {
                cx.body_exprs(g).iter().any(|&x| match &cx.expr(x).kind {
                    ExprKind::Attr { name, .. } => safe_entry(name),
                    _ => cx.call(x).is_some_and(|hc| safe_entry(&hc.name)),
                })
            };
            let hands_off = hands_off_in(f)
                || cx.body_calls(f).any(|x| {
                    cx.call(x)
                        .and_then(|hc| cx.callee_in_file(hc))
                        .is_some_and(|g| g != f && hands_off_in(g))
                });
            // A handler that only sets a flag (`stop = True`, `self.run =
            // False`), perhaps raising `KeyboardInterrupt` on a second
            // signal, touches nothing of the loop's: a task or loop that
            // polls the flag acts on it in its own time.
            // Ending the process at once (`os._exit(1)`) or raising an
            // exception of its own, as SIGINT's default handler does
            // (`sys.exit(0)` raises `SystemExit`), touch nothing of the
            // loop's either, nor does a log line or a `print` on the way out
            // (what can go wrong there is a re-entered stream write, which
            // PY034 reports; none of it is the loop's). A handler that
            // only logs is still reported: it swallows the signal.
            // Putting the default action back and sending the signal to
            // the process again (`signal.signal(sig, signal.SIG_DFL)` then
            // `os.kill(os.getpid(), sig)`) ends it as the default would.
            let restores_default = cx.body_calls(f).any(|x| {
                cx.call(x).is_some_and(|hc| {
                    hc.target.as_deref() == Some("signal.signal")
                        && hc
                            .positional(1)
                            .and_then(|a| cx.model.dotted(a))
                            .is_some_and(|d| d.ends_with("SIG_DFL"))
                })
            });
            let resends = |hc: &Call| {
                restores_default
                    && match hc.target.as_deref() {
                        Some("signal.signal" | "os.getpid" | "signal.raise_signal") => true,
                        Some("os.kill") => hc.positional(0).is_some_and(|a| {
                            cx.call(cx.model.strip(a))
                                .is_some_and(|k| k.target.as_deref() == Some("os.getpid"))
                        }),
                        _ => false,
                    }
            };
            // Forwarding the signal as SIGINT (`signal.raise_signal(
            // signal.SIGINT)`, `os.kill(os.getpid(), signal.SIGINT)`) hands
            // it to the SIGINT handler, which `asyncio.run` makes loop-aware.
            let forwards_as_sigint = |hc: &Call| {
                let names_sigint = |a: Option<ExprId>| {
                    a.and_then(|a| cx.model.dotted(a))
                        .is_some_and(|d| d.ends_with("SIGINT"))
                };
                match hc.target.as_deref() {
                    Some("signal.raise_signal") => names_sigint(hc.positional(0)),
                    Some("os.kill") => {
                        names_sigint(hc.positional(1))
                            && hc.positional(0).is_some_and(|a| {
                                cx.call(cx.model.strip(a))
                                    .is_some_and(|k| k.target.as_deref() == Some("os.getpid"))
                            })
                    }
                    _ => false,
                }
            };
            let ends = |x: ExprId, hc: &Call| {
                (matches!(hc.name.as_str(), "KeyboardInterrupt" | "SystemExit")
                    && hc.receiver.is_none())
                    || crate::util::ends_the_process(hc)
                    || resends(hc)
                    || forwards_as_sigint(hc)
                    || raised(cx, x)
            };
            // `raise KeyboardInterrupt`, the class raised without a call.
            let raises_exit_class = |st: StmtId| {
                matches!(cx.stmt(st).kind, StmtKind::Raise(Some(x))
                    if matches!(cx.model.name_of(cx.model.strip(x)), Some("KeyboardInterrupt" | "SystemExit")))
            };
            let ends_somewhere = cx
                .body_calls(f)
                .any(|x| cx.call(x).is_some_and(|hc| ends(x, hc)))
                || cx.body_stmts(f).iter().any(|&st| raises_exit_class(st));
            // Output on the way: logging, `print`, rich's `console.print`,
            // `click.echo`.
            // Also a helper of the file that does nothing but that
            // (`self.log(msg)` that is `if self.debug: logger.debug(msg)`,
            // a `cleanup()` that only logs), two calls down.
            let says = |hc: &Call| says_only(cx, hc, f, 2);
            // A handler whose last statement ends the process (`os._exit(0)`
            // after `termios.tcsetattr(..)`, `sys.exit(0)` after
            // `conn.send(ack)`) may do other work of a known library on
            // the way, as long as none of it is asyncio's.
            // Also as the last statement of a `finally` that closes the
            // body (`try: cleanup() .. finally: sys.exit(0)`).
            let last_of = |block: &Block| {
                let mut last = block.last().copied();
                while let Some(st) = last {
                    match &cx.stmt(st).kind {
                        StmtKind::Try {
                            finally: Some(fin), ..
                        } => last = fin.last().copied(),
                        _ => break,
                    }
                }
                last
            };
            let last = last_of(&cx.func(f).body);
            let ends_last = last.is_some_and(|st| match cx.stmt(st).kind {
                StmtKind::Expr(x) | StmtKind::Raise(Some(x)) => {
                    raises_exit_class(st)
                        || cx
                            .call(cx.model.strip(x))
                            .is_some_and(|hc| ends(cx.model.strip(x), hc))
                }
                _ => false,
            });
            // `os._exit(0)` last ends the process on the spot, before the
            // loop runs again: an event set on the way (`shutdown.set()`)
            // wakes nobody.
            let exits_at_once = last.is_some_and(|st| {
                matches!(cx.stmt(st).kind, StmtKind::Expr(x)
                    if cx.call(cx.model.strip(x)).is_some_and(|hc| hc.target.as_deref() == Some("os._exit")))
            });
            // A flag set to a plain value (`self.is_idling = False`): the
            // loop that polls it acts; a log line beside it is output only.
            let sets_a_flag = cx.body_stmts(f).iter().any(|&st| {
                matches!(&cx.stmt(st).kind, StmtKind::Assign { targets, value: Some(v), .. }
                    if cx.model.literal(*v).is_some()
                        && targets.iter().any(|&t| read_elsewhere(cx, t, f)))
            });
            let only_sets_flags = cx.body_calls(f).all(|x| {
                cx.call(x).is_some_and(|hc| {
                    ends(x, hc)
                        || sets_thread_event(cx, hc, f)
                        || ((ends_somewhere || sets_a_flag) && says(hc))
                        || (ends_last && away_from_the_loop(cx, hc, f, 2))
                        || (exits_at_once && hc.name == "set" && hc.args.is_empty())
                })
            });
            // `signal.signal(SIGINT, self._stop)` then
            // `threading.Thread(target=self._confirm_exit).start()`: the
            // work goes to a thread of its own, off the loop's thread.
            let makes_thread = |x: ExprId| {
                cx.call(cx.model.strip(x))
                    .is_some_and(|k| k.target.as_deref() == Some("threading.Thread"))
            };
            let starts_thread = |hc: &Call| {
                hc.name == "start"
                    && hc.receiver.is_some_and(|r| {
                        makes_thread(r)
                            || cx.model.name_of(cx.model.strip(r)).is_some_and(|n| {
                                crate::python::common::value_bound_once(cx, f, n)
                                    .is_some_and(makes_thread)
                            })
                    })
            };
            let hands_to_a_thread = cx
                .body_calls(f)
                .any(|x| cx.call(x).is_some_and(starts_thread))
                && cx.body_calls(f).all(|x| {
                    cx.call(x).is_some_and(|hc| {
                        makes_thread(x)
                            || starts_thread(hc)
                            || says(hc)
                            || matches!(
                                hc.target.as_deref(),
                                Some("signal.signal" | "signal.getsignal")
                            )
                    })
                });
            if hands_off || only_sets_flags || hands_to_a_thread {
                continue;
            }
            out.push(cx.finding(
                &META,
                e.span,
                "`signal.signal` installs a handler that runs between arbitrary bytecodes of the event loop's thread: it cannot safely touch the loop, tasks or locks, and the loop does not wake up to react",
                "use `asyncio.get_running_loop().add_signal_handler(sig, callback)`; where it is unavailable (Windows), keep the handler to `loop.call_soon_threadsafe(callback)`",
            ));
        }
    }
}

/// `loop.run_until_complete(..)`, `loop.run_forever()`, `asyncio.run(..)`:
/// the call runs a loop on the calling thread.
fn drives_a_loop(c: &Call) -> bool {
    matches!(c.name.as_str(), "run_until_complete" | "run_forever")
        || c.target.as_deref() == Some("asyncio.run")
}

/// The module has no coroutine of its own and runs its loops only on
/// threads it starts (`threading.Thread(target=_run_loop)` whose body
/// calls `loop.run_until_complete(..)`, or `target=loop.run_forever`):
/// handlers run on the main thread,
/// never between the loop's bytecodes.
fn loop_only_on_worker_threads(cx: &FileCx) -> bool {
    if cx.model.functions.iter().any(|f| f.is_async) {
        return false;
    }
    let thread_targets: Vec<ExprId> = cx
        .calls_to(&["threading.Thread"])
        .into_iter()
        .filter_map(|(_, c)| c.kwarg("target"))
        .collect();
    let targets: Vec<FuncId> = thread_targets
        .iter()
        .filter_map(|&t| crate::python::common::local_callable(cx, t))
        .collect();
    // `threading.Thread(target=loop.run_forever)`: the loop's own method
    // is the thread's body.
    let runs_loop_itself = thread_targets.iter().any(|&t| {
        matches!(&cx.expr(cx.model.strip(t)).kind,
            ExprKind::Attr { name, .. } if matches!(name.as_str(), "run_forever" | "run_until_complete"))
    });
    let runs: Vec<ExprId> = cx
        .model
        .exprs
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(&e.kind, ExprKind::Call(c) if drives_a_loop(c)))
        .map(|(i, _)| ExprId(i as u32))
        .collect();
    (!runs.is_empty() || runs_loop_itself)
        && runs.iter().all(|&r| {
            let f = cx.func_of(r);
            targets.contains(&f)
                || cx
                    .tree
                    .func_ancestors(cx.model, f)
                    .any(|g| targets.contains(&g))
        })
}

/// The module has no coroutine of its own, and the function installing the
/// handler starts a loop only in an earlier branch that ends by leaving it
/// (`if gateway: asyncio.run(serve()); return`): the install is on the
/// other, synchronous path, where no loop of this function runs.
fn loop_mode_returned_before(cx: &FileCx, id: ExprId) -> bool {
    if cx.model.functions.iter().any(|f| f.is_async) {
        return false;
    }
    let f = cx.func_of(id);
    let at = cx.expr(id).span.start;
    let runners: Vec<ExprId> = cx
        .body_calls(f)
        .filter(|&x| {
            cx.call(x).is_some_and(|c| {
                drives_a_loop(c)
                    || matches!(
                        c.target.as_deref(),
                        Some("asyncio.new_event_loop" | "asyncio.Runner")
                    )
            })
        })
        .collect();
    let returning_branches: Vec<Span> = cx
        .body_stmts(f)
        .iter()
        .filter_map(|&s| match &cx.stmt(s).kind {
            StmtKind::If { then, .. }
                if cx.stmt(s).span.end <= at
                    && (crate::util::ends_in_exit(cx.model, then)
                        || then.last().is_some_and(|&l| {
                            matches!(cx.stmt(l).kind, StmtKind::Expr(x)
                                if cx.call(cx.model.strip(x)).is_some_and(crate::util::ends_the_process))
                        })) =>
            {
                Some(cx.stmt(s).span)
            }
            _ => None,
        })
        .collect();
    !runners.is_empty()
        && runners.iter().all(|&r| {
            let sp = cx.expr(r).span;
            returning_branches.iter().any(|b| b.contains(sp))
        })
}

/// `stop_requested.set()` on a `threading.Event` of the file that something
/// outside the handler reads (`is_set()`, `wait()`): a flag for a poller,
/// touching nothing of the loop's.
fn sets_thread_event(cx: &FileCx, c: &Call, handler: FuncId) -> bool {
    if c.name != "set" || !c.args.is_empty() {
        return false;
    }
    let Some(name) = c.receiver.and_then(|r| cx.model.dotted(r)) else {
        return false;
    };
    crate::python::common::constructions(cx, |t| t == "threading.Event")
        .iter()
        .any(|(d, _)| *d == name)
        && c.receiver.is_some_and(|r| read_elsewhere(cx, r, handler))
}

/// A SIGINT or SIGTERM handler installed by a plain function that then
/// hands the process to `uvicorn.run(..)`: uvicorn installs its own
/// handlers for those two signals while it serves and puts the old ones
/// back only once the server has shut down (replaying the signal to them
/// then), so this one never interrupts the loop's work.
fn replaced_while_uvicorn_runs(cx: &FileCx, id: ExprId, c: &Call) -> bool {
    let f = cx.func_of(id);
    let uvicorn_signal = |s: ExprId| {
        cx.model
            .dotted(s)
            .is_some_and(|d| d.ends_with("SIGINT") || d.ends_with("SIGTERM"))
    };
    // `for sig in (signal.SIGTERM, signal.SIGINT): signal.signal(sig, h)`.
    let looped_over_them = |name: &str| {
        cx.enclosing_stmts(id).into_iter().any(|st| {
            matches!(&cx.stmt(st).kind, StmtKind::For { target: Some(t), iter, .. }
                if cx.model.name_of(*t) == Some(name)
                    && matches!(&cx.expr(cx.model.strip(*iter)).kind,
                        ExprKind::Collection { elems, .. }
                            if !elems.is_empty() && elems.iter().all(|&e| uvicorn_signal(e))))
        })
    };
    let for_uvicorn_signal = c
        .positional(0)
        .or_else(|| c.kwarg("signalnum"))
        .is_some_and(|s| uvicorn_signal(s) || cx.model.name_of(s).is_some_and(looped_over_them));
    let at = cx.expr(id).span.start;
    for_uvicorn_signal
        && !cx.func(f).is_async
        && cx.body_calls(f).any(|e| {
            cx.expr(e).span.start > at
                && cx
                    .call(e)
                    .is_some_and(|k| k.target.as_deref() == Some("uvicorn.run"))
        })
}

/// The call is output (logging, `print`, rich's `console.print`,
/// `click.echo`), or of a function of the file (not `handler` itself)
/// whose every call is, `depth` calls down.
fn says_only(cx: &FileCx, c: &Call, handler: FuncId, depth: u32) -> bool {
    // (`rprint`: rich's `print` under another name.)
    let printer = |n: &str| matches!(n, "print" | "echo");
    if cx.effect(c, Effect::Logging).is_some()
        || printer(&c.name)
        || c.target
            .as_deref()
            .is_some_and(|t| printer(t.rsplit('.').next().unwrap_or(t)))
        || on_a_logger(cx, c)
    {
        return true;
    }
    depth > 0
        && cx.callee_in_file(c).is_some_and(|g| {
            g != handler
                && cx.body_calls(g).all(|x| {
                    cx.call(x)
                        .is_some_and(|k| says_only(cx, k, handler, depth - 1))
                })
        })
}

/// The call is output (see [`says_only`]) or resolves to a function of
/// the standard library outside asyncio and threading (`termios.tcsetattr`,
/// a multiprocessing connection's `send`), or is of a function of the file (not `handler`)
/// whose every call is, `depth` calls down. A call of unknown target may
/// be the loop's (`loop.stop()` on an untyped loop), and is not.
fn away_from_the_loop(cx: &FileCx, c: &Call, handler: FuncId, depth: u32) -> bool {
    if says_only(cx, c, handler, 0) {
        return true;
    }
    if let Some(g) = cx.callee_in_file(c) {
        return depth > 0
            && g != handler
            && cx.body_calls(g).all(|x| {
                cx.call(x)
                    .is_some_and(|k| away_from_the_loop(cx, k, handler, depth - 1))
            });
    }
    c.target.as_deref().is_some_and(|t| {
        // Of `signal`, only what names or re-arms a signal: its default
        // SIGINT handler and `raise_signal` interrupt the loop's thread.
        matches!(
            t,
            "signal.Signals" | "signal.strsignal" | "signal.getsignal" | "signal.signal"
        ) || t.split_once('.').is_some_and(|(head, _)| {
            unsnarl_model::knowledge::is_standard_module(Language::Python, head)
                && !matches!(head, "asyncio" | "concurrent" | "threading" | "signal")
        })
    })
}

/// What `target` names (`self.idling`, a global `stop`) is read somewhere
/// in the file outside function `f`: a flag something polls.
fn read_elsewhere(cx: &FileCx, target: ExprId, f: FuncId) -> bool {
    let Some(name) = cx.model.dotted(target) else {
        return false;
    };
    (0..cx.model.exprs.len() as u32).map(ExprId).any(|x| {
        matches!(
            cx.expr(x).kind,
            ExprKind::Name { .. } | ExprKind::Attr { .. }
        ) && cx.func_of(x) != f
            && cx.model.dotted(x).as_deref() == Some(name.as_str())
            && !crate::python::common::is_store(cx, x)
    })
}

/// `logger.info(..)` on a logger of unknown type (`logger =
/// get_logger(__name__)` from a module of the project): a level method on
/// a receiver named `logger` or `log` (`self._logger`, `LOG`).
fn on_a_logger(cx: &FileCx, c: &Call) -> bool {
    matches!(
        c.name.as_str(),
        "debug" | "info" | "warning" | "warn" | "error" | "exception" | "critical"
    ) && c
        .receiver
        .and_then(|r| cx.model.dotted(r))
        .is_some_and(|d| {
            let last = d.rsplit('.').next().unwrap_or(&d);
            matches!(
                last.trim_matches('_').to_ascii_lowercase().as_str(),
                "logger" | "log"
            )
        })
}

/// The call builds the exception a `raise` statement raises.
fn raised(cx: &FileCx, call: ExprId) -> bool {
    matches!(cx.tree.expr_parent(call), Parent::Stmt(s)
        if matches!(cx.stmt(s).kind, StmtKind::Raise(Some(v)) if cx.model.strip(v) == call))
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import asyncio
import signal

def on_term(signum, frame):
    for t in asyncio.all_tasks():
        t.cancel()

async def main():
    signal.signal(signal.SIGTERM, on_term)  # expect
    await serve()

asyncio.run(main())
"#,
        r#"
import asyncio
import signal
import sys


def serve(server):
    def on_term(signum, frame):
        server.close()
        sys.exit(0)

    signal.signal(signal.SIGTERM, on_term)  # expect
    asyncio.run(server.serve_forever())
"#,
        r#"
import asyncio
import signal
import sys


class Server:
    def __init__(self):
        self.tasks = set()

    def cleanup(self):
        for t in self.tasks:
            t.cancel()

    def install(self):
        def exit_handler(signum, frame):
            # Cancels tasks from inside the signal handler before leaving.
            self.cleanup()
            sys.exit(0)

        signal.signal(signal.SIGTERM, exit_handler)  # expect

    async def serve(self):
        await asyncio.sleep(3600)
"#,
        r#"
import signal

import uvicorn


async def health(scope, receive, send):
    ...


def main():
    def reload_config(signum, frame):
        settings.reload()

    # uvicorn takes over SIGINT and SIGTERM only: SIGHUP lands mid-loop.
    signal.signal(signal.SIGHUP, reload_config)  # expect
    uvicorn.run("app:health", port=8000)
"#,
        r#"
import asyncio
import signal

class Reloader:
    def __init__(self, done: asyncio.Event):
        self.run = True
        self.done = done

    def __call__(self):
        signal.signal(signal.SIGTERM, self.stop)  # expect
        loop = asyncio.new_event_loop()
        loop.run_until_complete(self.watch())

    def stop(self, *_):
        self.run = False
        self.done.set()

    async def watch(self):
        while self.run:
            await asyncio.sleep(1.0)
"#,
        r#"
import signal
import trio

class Console:
    async def read_line(self):
        def install():
            def handler(sig, frame):
                self.interrupted = True
                print_newline()

            return signal.signal(signal.SIGINT, handler)  # expect

        previous = trio.from_thread.run_sync(install)
        return previous
"#,
        r#"
import asyncio
import logging
import os
import signal

logger = logging.getLogger(__name__)


def run(server):
    loop = asyncio.new_event_loop()

    def force_exit(sig, frame):
        logger.warning("stopping")
        loop.stop()

    signal.signal(signal.SIGTERM, force_exit)  # expect
    loop.run_until_complete(server.serve())
"#,
        r#"
import asyncio
import logging
import signal

async def main():
    stop = asyncio.Event()

    def on_int(signum, frame):
        logging.info("interrupted")
        stop.set()

    signal.signal(signal.SIGINT, on_int)  # expect
    await stop.wait()

asyncio.run(main())
"#,
        r#"
import asyncio
import signal


def serve(app):
    loop = asyncio.new_event_loop()

    def on_signal(signum, frame):
        loop.stop()
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)  # expect
    loop.run_until_complete(app.serve())
"#,
        r#"
import asyncio
import logging
import signal

logger = logging.getLogger(__name__)
shutdown_requested = False


def handle_shutdown(signum, frame):
    global shutdown_requested
    logger.info("shutdown requested by signal %s", signum)
    shutdown_requested = True


def main(server):
    signal.signal(signal.SIGINT, handle_shutdown)  # expect
    asyncio.run(server.serve())
"#,
        r#"
import asyncio
import signal

from .server import serve, serve_fast


def handle_term(signum, frame):
    for task in asyncio.all_tasks():
        task.cancel()


def main(fast: bool):
    signal.signal(signal.SIGTERM, handle_term)  # expect
    if fast:
        asyncio.run(serve_fast())
        return
    asyncio.run(serve())
"#,
    ],
    pass: &[
        r#"
import signal

import anyio

HANDLED = (signal.SIGINT, signal.SIGTERM)


class Bot:
    async def watch_signals(self):
        try:
            with anyio.open_signal_receiver(*HANDLED) as signals:
                async for _ in signals:
                    self.stop()
        except NotImplementedError:
            # Windows: no loop signal handlers there.
            for sig in HANDLED:
                signal.signal(sig, self.on_signal)

    def on_signal(self, *args):
        self.should_exit.set()
"#,
        r#"
import asyncio
import signal
import threading
import time


def main(gateway):
    loop = asyncio.new_event_loop()

    def run_loop():
        asyncio.set_event_loop(loop)
        loop.run_until_complete(gateway.start())

    threading.Thread(target=run_loop, daemon=True).start()

    def on_term(signum, frame):
        # Runs on the main thread, which only sleeps; the loop is on its
        # own thread.
        for hook in gateway.shutdown_hooks:
            hook()

    signal.signal(signal.SIGTERM, on_term)
    while True:
        time.sleep(60)
"#,
        r#"
import asyncio
import signal
import sys
from contextlib import suppress

_SAVED_ATTRS = None


def _restore_terminal():
    if _SAVED_ATTRS is None:
        return
    with suppress(Exception):
        import termios

        termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, _SAVED_ATTRS)


def chat(console, loop_body):
    def on_signal(signum, frame):
        name = signal.Signals(signum).name
        _restore_terminal()
        console.print(f"got {name}, bye")
        sys.exit(0)

    signal.signal(signal.SIGINT, on_signal)
    asyncio.run(loop_body())
"#,
        r#"
import asyncio
import logging
import os
import signal
import sys
import termios
from multiprocessing.connection import Connection

logger = logging.getLogger(__name__)
_saved = None


def _restore_terminal():
    if _saved is None:
        return
    termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, _saved)


def interactive(agent):
    def exit_on_sigint(signum, frame):
        _restore_terminal()
        print("Goodbye!")
        os._exit(0)

    signal.signal(signal.SIGINT, exit_on_sigint)
    asyncio.run(agent.chat())


def child(conn: Connection, worker):
    def on_term(signum, frame):
        logger.info("shutting down")
        conn.send({"type": "shutdown_ack"})
        sys.exit(0)

    signal.signal(signal.SIGTERM, on_term)
    asyncio.run(worker.serve(conn))


def serve_stdio(server, get_logger):
    log = get_logger(__name__)

    def on_signal(sig, frame):
        log.info("shutting down")
        sys.exit(0)

    signal.signal(signal.SIGINT, on_signal)
    asyncio.run(server.run())
"#,
        r#"
import contextlib
import signal

import uvicorn


async def app(scope, receive, send):
    ...


def serve(pid_path):
    def on_signal(sig, frame):
        pid_path.unlink(missing_ok=True)
        raise SystemExit(0)

    # uvicorn takes both signals over while it serves.
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, on_signal)
    uvicorn.run(app, port=8000)
"#,
        r#"
import asyncio
import logging
import signal
import sys

logger = logging.getLogger(__name__)


class Server:
    def __init__(self, debug=False):
        self.debug = debug

    def log(self, message):
        if self.debug:
            logger.debug(message)

    def cleanup(self):
        self.log("cleaning up")

    def install(self):
        def exit_handler(signum, frame):
            # Logs through the class's helpers, then leaves.
            self.log(f"signal {signum}")
            self.cleanup()
            sys.exit(0)

        signal.signal(signal.SIGTERM, exit_handler)

    async def serve(self):
        await asyncio.sleep(3600)
"#,
        r#"
import signal
import sys

import uvicorn


async def health(scope, receive, send):
    ...


def main():
    def on_exit(signum, frame):
        write_summary()
        sys.exit(0)

    signal.signal(signal.SIGINT, on_exit)
    signal.signal(signal.SIGTERM, on_exit)
    uvicorn.run("app:health", port=8000)
"#,
        r#"
import asyncio
import signal

from rich.console import Console

console = Console()

def watch(bridge):
    def handle_signal(signum, frame):
        console.print("Shutting down...")
        raise KeyboardInterrupt()

    signal.signal(signal.SIGINT, handle_signal)
    signal.signal(signal.SIGTERM, handle_signal)
    try:
        asyncio.run(bridge.watch())
    except KeyboardInterrupt:
        pass

async def noop():
    pass
"#,
        r#"
import asyncio
import logging
import signal
import sys

def handle_interrupt(signum, frame):
    logging.info("interrupted, exiting")
    sys.exit(0)

async def main():
    signal.signal(signal.SIGINT, handle_interrupt)
    await asyncio.sleep(3600)

asyncio.run(main())
"#,
        r#"
import asyncio
import signal

async def repl(run):
    task = asyncio.current_task()

    def on_sigint(_signum, _frame):
        # The thread-safe variant wakes the loop up.
        call_soon = asyncio.get_running_loop().call_soon_threadsafe
        call_soon(print, "interrupted")
        call_soon(task.cancel)

    saved = signal.signal(signal.SIGINT, on_sigint)
    try:
        await run()
    finally:
        signal.signal(signal.SIGINT, saved)
"#,
        r#"
import signal
import trio

class Console:
    async def read_line(self):
        def install():
            def handler(sig, frame):
                self.interrupted = True
                token.run_sync_soon(print_newline, idempotent=True)

            token = trio.lowlevel.current_trio_token()
            return signal.signal(signal.SIGINT, handler)

        previous = trio.from_thread.run_sync(install)
        return previous
"#,
        r#"
import asyncio
import signal

class Runner:
    def __init__(self):
        self._loop = None
        self.started = False

    def handle_sigterm(self, *args):
        self._stop_soon()

    def _stop_soon(self):
        asyncio.run_coroutine_threadsafe(self.astop(), self._loop)

    async def astop(self):
        self.started = False

    async def start(self):
        self._loop = asyncio.get_running_loop()
        signal.signal(signal.SIGTERM, self.handle_sigterm)
        self.started = True
        while self.started:
            await asyncio.sleep(1)

async def main(stop):
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    await stop.wait()

def windows(loop, stop):
    def handler(signum, frame):
        loop.call_soon_threadsafe(stop.set)
    signal.signal(signal.SIGINT, handler)
"#,
        r#"
import signal

def on_term(signum, frame):
    raise SystemExit(0)

def main():
    signal.signal(signal.SIGTERM, on_term)
"#,
        r#"
import asyncio
import signal

class Reloader:
    def __init__(self):
        self.run = True

    def __call__(self):
        signal.signal(signal.SIGTERM, self.stop)
        loop = asyncio.new_event_loop()
        loop.run_until_complete(self.watch())

    def stop(self, *_):
        self.run = False

    async def watch(self):
        while self.run:
            await asyncio.sleep(1.0)

def keep_ctrl_c_alive(app):
    async def poll(app):
        while not stop:
            await asyncio.sleep(0.1)
        app.stop()

    def on_sigint(sig, frame):
        nonlocal stop
        if stop:
            raise KeyboardInterrupt("second Ctrl+C")
        stop = True

    stop = False
    signal.signal(signal.SIGINT, on_sigint)
    app.add_task(poll)
"#,
        r#"
import asyncio
import signal


def run(main):
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    def on_signal(*_):
        stop.set()
        loop.call_later(5, loop.stop)

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, on_signal)
        except NotImplementedError:
            # Windows: the loop cannot install handlers.
            signal.signal(sig, on_signal)
    loop.run_until_complete(main(stop))
"#,
        r#"
import asyncio
import signal
import sys

class Runner:
    def __init__(self, loop):
        self.loop = loop
        self._stopping = None

    # Windows' loops have no add_signal_handler: signal.signal there only.
    def install_signal_handlers(self):
        if sys.platform == "win32":
            signal.signal(signal.SIGTERM, self._on_win_sigterm)
        else:
            self.loop.add_signal_handler(signal.SIGTERM, self._on_sigterm)

    def _on_sigterm(self):
        self._schedule_stop()

    def _on_win_sigterm(self, signum, frame):
        self._schedule_stop()

    def _schedule_stop(self):
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self.stop(), loop=self.loop)

    async def stop(self):
        await asyncio.sleep(0)
"#,
        r#"
import asyncio
import signal
import sys

class Worker:
    def __init__(self, loop):
        self.loop = loop

    # One method per platform: Windows' loops have no add_signal_handler.
    def install_signal_handlers(self):
        if sys.platform == "win32":
            self._install_windows()
        else:
            self._install_unix()

    def _install_windows(self):
        signal.signal(signal.SIGTERM, self._on_win_sigterm)

    def _install_unix(self):
        self.loop.add_signal_handler(signal.SIGTERM, self._on_sigterm)

    def _on_sigterm(self):
        asyncio.ensure_future(self.stop(), loop=self.loop)

    def _on_win_sigterm(self, signum, frame):
        asyncio.ensure_future(self.stop(), loop=self.loop)

    async def stop(self):
        await asyncio.sleep(0)
"#,
        r#"
import asyncio
import logging
import os
import signal

logger = logging.getLogger(__name__)


class ExitCli(Exception):
    pass


def run(server):
    loop = asyncio.new_event_loop()
    exiting = False

    def force_exit(sig, frame):
        nonlocal exiting
        if exiting:
            return
        exiting = True
        os._exit(1)

    def interrupt(sig, frame):
        raise ExitCli()

    signal.signal(signal.SIGINT, interrupt)
    try:
        loop.run_until_complete(server.drain())
    except ExitCli:
        signal.signal(signal.SIGTERM, force_exit)
        loop.run_until_complete(server.aclose())
    finally:
        signal.signal(signal.SIGINT, lambda *_: os._exit(1))
"#,
        r#"
import signal
from tornado.ioloop import IOLoop

class ClusterApp:
    async def start(self):
        self.loop = IOLoop.current()
        signal.signal(signal.SIGINT, self.sigint_handler)
        await self.cluster.start()

    def sigint_handler(self, signum, frame):
        return self.relay_signal(signum, frame)

    def relay_signal(self, signum, frame):
        self.loop.add_callback_from_signal(self.cluster.stop)
"#,
        r#"
import asyncio
import logging
import signal

logger = logging.getLogger(__name__)


def serve(app):
    def on_signal(signum, frame):
        logger.info("signal %s: shutting down", signum)
        # What SIGINT's own handler does, for SIGTERM too.
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    asyncio.run(app.serve())
"#,
        r#"
import asyncio
import signal
import sys

from rich import print as rprint


async def hold_open(url):
    def on_sigint(sig, frame):
        rprint("[yellow]closing the connection[/yellow]")
        sys.exit(0)

    signal.signal(signal.SIGINT, on_sigint)
    while True:
        await asyncio.sleep(1)
"#,
        r#"
import asyncio
import logging
import signal

log_ = logging.getLogger("bot")


class Client:
    async def idle(self):
        def on_signal(signum, frame):
            log_.info("stop signal %s received, exiting", signum)
            self.idling = False

        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, on_signal)
        self.idling = True
        while self.idling:
            await asyncio.sleep(1)
"#,
        r#"
import asyncio
import logging
import os
import signal

logger = logging.getLogger(__name__)


def _sigterm_handler(signum, frame):
    logger.info("terminating on signal %s", signum)
    try:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    except Exception:
        import sys

        sys.exit(0)


async def serve():
    await asyncio.sleep(3600)


def main():
    signal.signal(signal.SIGTERM, _sigterm_handler)
    asyncio.run(serve())
"#,
        r#"
# SIGTERM is forwarded as SIGINT, which asyncio.run handles loop-aware.
import asyncio
import signal
from contextlib import suppress


async def serve():
    await asyncio.Event().wait()


def main():
    signal.signal(signal.SIGTERM, lambda *_: signal.raise_signal(signal.SIGINT))
    with suppress(KeyboardInterrupt):
        asyncio.run(serve())
"#,
        r#"
import asyncio
import os
import signal
import sys

def restart(signum, frame):
    # Replaces the process with a fresh copy of itself.
    os.execv(sys.executable, [sys.executable] + sys.argv)

async def main():
    signal.signal(signal.SIGHUP, restart)
    await asyncio.Event().wait()
"#,
        r#"
import asyncio
import signal

from .agent import interrupt_agent, run_sync_agent
from .gateway import start_gateway


def main(gateway: bool, query: str):
    if gateway:
        asyncio.run(start_gateway())
        return

    def on_term(signum, frame):
        interrupt_agent(signum)
        raise KeyboardInterrupt()

    signal.signal(signal.SIGTERM, on_term)
    run_sync_agent(query)
"#,
        r#"
import signal
import threading


class ChatApp:
    def __init__(self):
        self._sigint = threading.Event()

    async def on_mount(self):
        signal.signal(signal.SIGINT, lambda _sig, _frame: self._sigint.set())

    async def poll_sigint(self):
        if self._sigint.is_set():
            self._sigint.clear()
            await self.quit()
"#,
        r#"
import asyncio
import signal


class Signals:
    def __init__(self, server):
        self._server = server

    def _handle(self, sig):
        self._server.close()

    async def wait_closed(self):
        await self._server.wait_closed()

    def register(self, loop):
        ok = False
        try:
            loop.add_signal_handler(signal.SIGTERM, self._handle, signal.SIGTERM)
            ok = True
        except (NotImplementedError, RuntimeError):
            ok = False
        if not ok:
            # Only where the loop cannot take the signal itself.
            signal.signal(signal.SIGTERM, lambda s, f: self._handle(s))
"#,
        r#"
import asyncio
import signal
import threading


def serve(server):
    # The loop runs on its own thread; the main thread only waits.
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()

    def stop(signum, frame):
        server.stop(grace=5)

    signal.signal(signal.SIGTERM, stop)
    server.wait_for_termination()
"#,
        r#"
import asyncio
import signal
import threading


class App:
    def __init__(self, loop):
        self.loop = loop

    def init_signal(self):
        signal.signal(signal.SIGINT, self._handle_sigint)

    def _handle_sigint(self, sig, frame):
        signal.signal(signal.SIGINT, self._force_stop)
        # The prompt runs on a thread of its own, off the loop's thread.
        thread = threading.Thread(target=self._confirm_exit, daemon=True)
        thread.start()

    def _force_stop(self, sig, frame):
        self.loop.call_soon_threadsafe(self.loop.stop)

    def _confirm_exit(self):
        if input("Shut down? ") == "y":
            self.loop.call_soon_threadsafe(self.loop.stop)

    async def serve(self):
        await asyncio.sleep(3600)
"#,
        r#"
import asyncio
import os
import signal


def serve(console, run_server):
    shutdown_event = asyncio.Event()

    def signal_handler(sig, frame):
        console.print("Shutting down server...")
        shutdown_event.set()
        os._exit(0)

    signal.signal(signal.SIGINT, signal_handler)
    asyncio.run(run_server(shutdown_event))
"#,
        r#"
import asyncio
import signal
import sys


class Agent:
    def setup_graceful_shutdown(self):
        def signal_handler(signum, frame):
            self.log.warning("shutdown_signal_received", signal=signum)
            try:
                if hasattr(self, "_session_manager"):
                    pass
                self.log.info("cleanup_completed")
            except Exception as e:
                self.log.error("cleanup_error", error=str(e))
            finally:
                sys.exit(0)

        signal.signal(signal.SIGTERM, signal_handler)

    def run(self):
        self.setup_graceful_shutdown()
        asyncio.run(self.serve())
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(SignalInAsyncio);
}
