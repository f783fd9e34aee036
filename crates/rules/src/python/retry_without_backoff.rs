//! PY027: retry loops with no backoff or a fixed one.

use crate::context::FileCx;
use crate::python::common::{int_constant, is_random_ref, is_zero_sleep, sleep_arg, written_text};
use crate::rule::{Examples, Rule, RuleMeta};
use crate::util::always_raises;
use std::collections::HashSet;
use unsnarl_model::walk::{self, Visitor, exprs_in_block, exprs_under, walk_block};
use unsnarl_model::*;

pub struct RetryWithoutBackoff;

pub static META: RuleMeta = RuleMeta {
    id: "PY027",
    name: "retry-without-backoff",
    category: Category::RetryStorm,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "A retry loop (`for attempt in range(n)` or `while True` around `try`/`except`) retries with no sleep, or sleeps a constant time with no jitter.",
    docs: r#"
A loop that retries a call: a `for ... in range(...)`, `itertools.count()`
or `while` loop around a `try` whose success path leaves the loop
(`return`/`break`; a `return False` reports failure, so a probe loop that
only stops once too many probes failed is not a retry, nor is `if not
line: break`, the end of the input of a loop that serves one request per
round, nor `if not self._session_token: break`, a periodic task its owner
stopped) and whose `except` path goes round again (a `for` whose awaited request takes an argument
made from the loop variable, `for hours_back in range(3)` building each
URL, searches candidates: it is not a retry; nor is one whose handler
rewrites an input of the call from itself, `trajectory =
truncate(trajectory)` after a context-window error, or one whose handler
moves a cursor on, `idx += 1`, from which the loop picks the next item
to ask for, or a failover that adds each target it tried to a collection
it starts empty and hands to the call picking the next one, `tried =
set()` ... `chosen = await selector.pick_next(tried)`: the next request
is a different one). Only a call that waits on
another service makes a retry: binding local sockets in turn (a search
for a free port, also through aiohttp's `web.TCPSite(..).start()`) talks
to no one. Reported when
the loop never sleeps between attempts, or only sleeps a constant duration
with no random jitter. At most two attempts (`range(2)`, `attempts = 2;
while attempts > 0: ... attempts -= 1`, `tries = 0;
while tries < 2: ... tries += 1`, or a bound the
function or the module sets to 2, `attempts = _RETRY_ATTEMPTS`, `attempts
= 2 if retry else 1`, or an attribute every assignment of the file sets
to 2, `self.max_retries = 2`) make one
retry, which builds no storm, and are not reported. A liveness probe is not reported: a loop that only
awaits `ping` (or a health check) inside a deadline scope of its own
(`with anyio.move_on_after(timeout):`), which caps the attempts. Nor is a
loop that catches only timeouts around awaits that wait for a reply
(`await sub.next_msg(timeout=left)`, also through a one-argument wrapper,
`await ensure_async(ch.get_msg(timeout=1))`) or wait with a timeout
(`await asyncio.wait_for(fut, timeout=t)`, or awaits only inside `async
with asyncio.timeout(t):`), or, in blocking code, around
a `try` that receives and sends nothing (`sock.recv(n)` caught as
`socket.timeout`): each failed attempt already waited that long. Nor is
a loop whose handlers catch only errors of the input or of the code
itself (`except (UnboundLocalError, TypeError, NameError):`,
`KeyError`, `json.JSONDecodeError`): the other side did not fail. Nor is
a non-blocking I/O loop: one whose handlers catch only "would block"
errors (`ssl.SSLWantReadError`, pyOpenSSL's `SSL.WantReadError`, the
same names re-exported by a package's own TLS shim, `BlockingIOError`),
re-raise every error but an interrupted or would-block
code (`if e.errno not in (errno.EAGAIN, errno.EWOULDBLOCK): raise`,
`ssl.SSL_ERROR_WANT_READ`) or but a local port already in use
(`if err.errno != errno.EADDRINUSE: raise`, a bind tried again), or wait for the socket to be ready before
the next attempt (`select`, eventlet's `trampoline(sock, read=True)`).
Nor is a loop that asks a person each time round (`input()`, `await
ainput("Code: ")`, `Prompt.ask(..)`, or `input` read on a thread,
`await loop.run_in_executor(None, input, "> ")`, or a terminal front
end's reader, `renderer.get_input()`, rich's `console.input(..)`): the
answers pace it.
Nor a poll: a `try` whose success may fall through (`if
health_check(): break`), a sleep after it every round, and a deadline
or a count that ends the loop (`elapsed += interval; if elapsed >=
timeout: break`, `while polls < max_polls:`, or `sys.exit(1)` once the
deadline has passed), or an exit once what it polls reports a final
state (`if resp.status == "ACTIVE": return`, `if state not in
("pending", "queued"): break`); it waits for a state, and its period is
the periodic rule's to judge. Nor one that starts each round by taking new work from a queue or
waiting for an event of the process (`line = await lines.get()`, `await
self.wakeup.wait()`, also with a timeout, `await asyncio.wait_for(q.get(),
t)`, or a thread's blocking `task = task_queue.get()`; a receiver of
unknown type counts by its name, `self.work_queue.get_next_work()`):
after a failure it handles the next item, not the failed one again;
nor one whose handler catches only an in-process queue's empty or full
(`except asyncio.QueueEmpty:` for a `get_nowait()` in the `try`).
Nor one whose handlers catch only optimistic-concurrency conflicts
(Redis's `WatchError`, `StaleHeadError`, `KeyWrongLastSequenceError`, a
version or revision mismatch, a `RunStateConflict`, a database's
`IntegrityError`, `UniqueViolation` or `SerializationFailure`, or an
exclusive create of a name already taken, `...AlreadyExistsError`,
`DuplicateKeyError`): another writer got there first, and the
compare-and-swap reads again (or draws a new name) and tries again at once, by design.
A fixed delay in a loop that connects to this machine only (a socket
built with `AF_UNIX`, or a loopback host written out:
`socket.create_connection(("127.0.0.1", port))` or
`f"http://localhost:{port}/docs"`, also `f"{protocol}://localhost:{port}"`,
while a server just started comes up, also built into a local of the
loop or of the function before it) is not reported: a local peer has no fleet of clients
to come back in waves. Nor one after the function started a child
process (`subprocess.Popen(..)`, `await asyncio.create_subprocess_exec(..)`):
it waits for that child to come up, and no other client waits on it. A wait read from the error just caught (`except FloodWaitError as e:
await asyncio.sleep(e.seconds)`) is the one the server asked for, not a
fixed delay.
A delay one call down counts as the loop's own (a helper of the file
that sleeps for a parameter, `await pause(retry_delay, stop)`, with the
value the loop passes it). A backoff one or two calls down counts: the loop calls a function of
the file that sleeps a randomized delay (`await
self._handle_conflict(err, attempt)`) or one it computes from its
arguments or by a call (`delay = retry_backoff(attempt, lo, hi)`), not a
delay handed straight through.

## Why

When a dependency blips, every client retries at once. Without backoff
they hammer it at full speed exactly when it has the least capacity; with
a fixed delay they come back in synchronized waves. Either way the retries
can keep the dependency down after the original cause is gone (a
metastable failure), and with retries at several layers the load is
multiplied.

## Example

```python
async def fetch_with_retry(client, url):
    for attempt in range(5):
        try:
            return await client.get(url)
        except ConnectionError:
            continue
    raise RuntimeError("gave up")
```

## Fix

Exponential backoff with full jitter, within the caller's deadline.

```python
import asyncio
import random

async def fetch_with_retry(client, url):
    for attempt in range(5):
        try:
            return await client.get(url)
        except ConnectionError:
            await asyncio.sleep(random.uniform(0, min(10, 0.1 * 2 ** attempt)))
    raise RuntimeError("gave up")
```
"#,
    examples: &EXAMPLES,
};

impl Rule for RetryWithoutBackoff {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for s in 0..cx.model.stmts.len() as u32 {
            let s = StmtId(s);
            if matches!(
                cx.tree.stmt_parent(s),
                unsnarl_model::walk::Parent::Detached
            ) {
                continue;
            }
            let Some(body) = retry_loop_body(cx, s) else {
                continue;
            };
            if cx.func(cx.tree.stmt_func(s)).is_test
                || probes_within_deadline(cx, s, body)
                || asks_a_person(cx, body)
                // `line = await lines.get()` first each round: a new item
                // every time, not the failed one again.
                || crate::python::periodic_without_jitter::waits_for_work(cx, body)
                || polls_until_deadline(cx, s, body)
            {
                continue;
            }
            let sleeps: Vec<ExprId> = exprs_in_block(cx.model, body)
                .into_iter()
                .filter(|&e| {
                    cx.call(e)
                        .is_some_and(|c| sleep_arg(c).is_some() && !is_zero_sleep(cx, c))
                })
                .collect();
            let jitter = exprs_in_block(cx.model, body).into_iter().any(|e| {
                is_random_ref(cx, e) || is_backoff_helper(cx, e) || sleeps_with_jitter(cx, e)
            });
            if jitter {
                continue;
            }
            // A delay one call down: a helper of the file that sleeps for
            // one of its parameters (`await wait_interruptible(retry_delay,
            // stop)`), with what the loop passes it.
            let helper_delays: Vec<(ExprId, ExprId)> =
                unsnarl_model::walk::calls_in_block(cx.model, body)
                    .into_iter()
                    .filter_map(|e| {
                        let c = cx.call(e)?;
                        let g = cx.callee_in_file(c)?;
                        let slept = cx.body_calls(g).find_map(|x| {
                            let k = cx.call(x)?;
                            let n = cx.model.name_of(sleep_arg(k).flatten()?)?;
                            cx.func(g).params.iter().any(|p| p.name == n).then_some(n)
                        })?;
                        let i = (0..c.args.len())
                            .find(|&i| cx.param_receiving(g, c, i) == Some(slept))?;
                        Some((e, c.args[i].value))
                    })
                    .collect();
            if sleeps.is_empty() && helper_delays.is_empty() {
                out.push(cx.finding(
                    &META,
                    loop_header(cx, s),
                    "this retry loop tries again immediately after a failure: when the dependency is struggling, every client retries at full speed and keeps it down",
                    "sleep between attempts with exponential backoff and full jitter (`random.uniform(0, min(cap, base * 2 ** attempt))`), and stop within the caller's deadline",
                ));
                continue;
            }
            let changing = changing_names(cx, s, body);
            let constant = sleeps.iter().all(|&e| {
                let c = cx.call(e).unwrap();
                sleep_arg(c)
                    .flatten()
                    .is_some_and(|a| is_constant(cx, a, &changing))
            }) && helper_delays
                .iter()
                .all(|&(_, a)| is_constant(cx, a, &changing));
            let first = sleeps
                .first()
                .copied()
                .or_else(|| helper_delays.first().map(|&(e, _)| e));
            if let Some(first) = first
                && constant
                && !reaches_this_host_only(cx, body)
                && !waits_for_own_child(cx, s)
            {
                out.push(cx.finding(
                    &META,
                    cx.expr(first).span,
                    "this retry loop waits a fixed delay between attempts with no jitter: clients that failed together retry together, in synchronized waves against the recovering dependency",
                    "use exponential backoff with random jitter (`random.uniform(0, min(cap, base * 2 ** attempt))`)",
                ));
            }
        }
    }
}

/// The loop connects to this machine only: a socket built with
/// `AF_UNIX`, or calls addressed to a loopback host written out
/// (`socket.create_connection(("127.0.0.1", port))`,
/// `requests.get("http://localhost:8000/health")`), and to no other host
/// written out. The peer is a local process with a few local clients (a
/// readiness wait for a server just started, an agent reconnecting to its
/// master's socket): a fixed delay cannot synchronize a fleet against it.
/// An address the loop (or the function, before it) builds into a local
/// first (`url = f"http://127.0.0.1:11356/api/..."; requests.get(url)`)
/// counts too, also with the scheme a placeholder
/// (`f"{protocol}://localhost:{port}/.."`).
pub(crate) fn reaches_this_host_only(cx: &FileCx, body: &Block) -> bool {
    let (Some(&first), Some(&last)) = (body.first(), body.last()) else {
        return false;
    };
    let scope = Span::new(cx.stmt(first).span.start, cx.stmt(last).span.end);
    let mut local = false;
    for e in unsnarl_model::walk::calls_in_block(cx.model, body) {
        let c = cx.call(e).unwrap();
        for a in &c.args {
            let v = cx.model.strip(a.value);
            // Built in the loop, or once before it in the function.
            let v = cx
                .model
                .name_of(v)
                .and_then(|n| {
                    crate::util::local_value_in(cx.model, scope, n).or_else(|| {
                        crate::util::enclosing_function_span(cx.model, scope)
                            .and_then(|f| crate::util::local_value_in(cx.model, f, n))
                    })
                })
                .unwrap_or(v);
            let host = match &cx.expr(v).kind {
                ExprKind::Collection { elems, .. } => elems.first().copied(),
                _ => Some(v),
            };
            if cx.model.dotted(v).is_some_and(|d| d.ends_with("AF_UNIX")) {
                local = true;
            }
            let Some(text) = host.and_then(|h| written_text(cx, h)) else {
                continue;
            };
            // `f"{protocol}://localhost:{port}/register"`: the scheme is a
            // placeholder; the host is written out after it.
            let after_placeholder = host
                .filter(|_| text.is_empty())
                .and_then(|h| cx.source(cx.expr(h).span).split_once("}://"))
                .map(|(_, rest)| rest.split(['{', '"', '\'']).next().unwrap_or(""));
            let (h, has_scheme) = match after_placeholder {
                Some(rest) => (rest, true),
                None => (
                    text.split_once("://").map_or(text, |(_, rest)| rest),
                    text.contains("://"),
                ),
            };
            if crate::shared::is_loopback_host(h) || h == "::1" {
                local = true;
            } else if has_scheme || h.parse::<std::net::IpAddr>().is_ok() {
                return false;
            }
        }
    }
    local
}

/// The function started a child process before the loop
/// (`subprocess.Popen([...])`, `await asyncio.create_subprocess_exec(..)`):
/// a fixed delay while polling is a readiness wait for that child, which
/// only this caller waits on, not a client among many retrying a shared
/// dependency.
pub(crate) fn waits_for_own_child(cx: &FileCx, lp: StmtId) -> bool {
    let f = cx.tree.stmt_func(lp);
    let start = cx.stmt(lp).span.start;
    cx.body_calls(f).any(|e| {
        cx.expr(e).span.end <= start
            && cx.call(e).is_some_and(|c| {
                c.target.as_deref() == Some("subprocess.Popen")
                    || cx
                        .effect(c, Effect::AsyncApi)
                        .is_some_and(|a| a.kind.as_deref() == Some("spawn"))
            })
    })
}

/// A call of a function of the file that sleeps a randomized delay
/// (`await self._handle_conflict(error, attempt)`, which caps the
/// attempts and sleeps `base * 2 ** attempt` plus jitter): the backoff
/// lives one call down.
///
/// Two calls down counts too, and so does a delay the helper computes
/// rather than fixes (`delay = retry_backoff(attempt - 1, lo, hi)`, `await
/// asyncio.sleep(base * 2 ** attempt)` with `attempt` its parameter): the
/// helper is the loop's delay policy (`_on_execute_fail()` ->
/// `_execute_retry_slowdown(ctx.attempt)`).
fn sleeps_with_jitter(cx: &FileCx, e: ExprId) -> bool {
    backs_off_below(cx, e, cx.func_of(e), 2)
}

fn backs_off_below(cx: &FileCx, e: ExprId, from: FuncId, depth: u8) -> bool {
    let Some(g) = cx.call(e).and_then(|c| cx.callee_in_file(c)) else {
        return false;
    };
    if g == from || g == cx.func_of(e) {
        return false;
    }
    let exprs = cx.body_exprs(g);
    let delays: Vec<ExprId> = exprs
        .iter()
        .filter_map(|&x| {
            cx.call(x)
                .filter(|c| !is_zero_sleep(cx, c))
                .and_then(|c| sleep_arg(c).flatten())
        })
        .collect();
    (!delays.is_empty()
        && (exprs.iter().any(|&x| is_random_ref(cx, x))
            || delays.iter().any(|&d| computed_delay(cx, g, d))))
        || (depth > 1
            && exprs
                .iter()
                .any(|&x| cx.call(x).is_some() && backs_off_below(cx, x, from, depth - 1)))
}

/// A delay worked out from the helper's parameters (`base * 2 ** attempt`)
/// or by a call (`retry_backoff(n, lo, hi)`), directly or through a local
/// assigned so. A parameter passed straight to the sleep (`def
/// _pause(self, seconds)`) is the caller's delay, maybe a fixed one.
fn computed_delay(cx: &FileCx, g: FuncId, d: ExprId) -> bool {
    let params: Vec<&str> = cx
        .func(g)
        .params
        .iter()
        .map(|p| p.name.as_str())
        .filter(|&n| n != "self" && n != "cls")
        .collect();
    let computed = |e: ExprId| {
        let bare = cx.model.name_of(e).is_some();
        exprs_under(cx.model, e)
            .into_iter()
            .any(|x| match &cx.expr(x).kind {
                ExprKind::Call(_) => true,
                ExprKind::Name { id, .. } => !bare && params.contains(&id.as_str()),
                _ => false,
            })
    };
    computed(d)
        || cx.model.name_of(d).is_some_and(|n| {
            cx.body_stmts(g).iter().any(|&s| {
                matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(v), .. }
                    if targets.iter().any(|&t| cx.model.name_of(t) == Some(n)) && computed(*v))
            })
        })
}

/// The loop asks a person at the terminal for something each time round
/// (`code = await ainput("Enter code: ")`, `name = Prompt.ask("Block
/// name")`): the person's answer paces the attempts, and a retry after a
/// wrong code or a taken name is a new question, not a storm.
fn asks_a_person(cx: &FileCx, body: &Block) -> bool {
    walk::calls_in_block(cx.model, body)
        .into_iter()
        .any(|e| crate::python::common::asks_a_person(cx, e))
}

/// A poll: a `try` whose success may fall through (`if health_check():
/// break`, a status still pending), a sleep after it on every round, and
/// either a deadline or count that ends the loop (`elapsed += interval;
/// if elapsed >= timeout: break`, `while polls < max_polls:`) or an exit
/// once what it polls reaches a final state (`if resp.status == "ACTIVE":
/// return`). It waits for a state, and a fixed period there is the
/// periodic rule's to judge.
fn polls_until_deadline(cx: &FileCx, lp: StmtId, body: &Block) -> bool {
    let falls_through = body.iter().any(|&st| {
        matches!(&cx.stmt(st).kind, StmtKind::Try { body: tb, .. }
            if tb.last().is_some_and(|&l| !matches!(cx.stmt(l).kind,
                StmtKind::Return(_) | StmtKind::Break | StmtKind::Raise(_) | StmtKind::Continue)))
    });
    let sleeps_each_round = body.iter().any(|&st| {
        matches!(cx.stmt(st).kind, StmtKind::Expr(e)
            if cx.call(cx.model.strip(e)).is_some_and(|c| sleep_arg(c).is_some())
                || matches!(cx.expr(cx.model.strip(e)).kind, ExprKind::Await(i)
                    if cx.call(cx.model.strip(i)).is_some_and(|c| sleep_arg(c).is_some())))
    });
    // `while retry_count < max_retries:`: a count bounds the rounds.
    let bounded_header = matches!(&cx.stmt(lp).kind, StmtKind::While { cond, .. }
        if matches!(cx.expr(cx.model.strip(*cond)).kind,
            ExprKind::Binary { op: BinOp::Lt | BinOp::LtE | BinOp::Gt | BinOp::GtE, .. }));
    falls_through
        && sleeps_each_round
        && (crate::python::periodic_without_jitter::gives_up(cx, body)
            || bounded_header
            || crate::python::periodic_without_jitter::waits_for_final_state(cx, lp, body))
}

/// A liveness probe: everything the loop awaits, sleeps aside, is a
/// `ping` (or health check), and the loop runs inside a deadline scope of
/// its own (`with anyio.move_on_after(timeout):`). Each attempt is the
/// cheapest request the server has, the deadline caps how many there are,
/// and backing off would only make the probe miss a recovery within its
/// window.
fn probes_within_deadline(cx: &FileCx, s: StmtId, body: &Block) -> bool {
    let probes = |name: &str| {
        let n = name.trim_start_matches('_').to_ascii_lowercase();
        n == "ping" || n.ends_with("_ping") || n == "health_check" || n == "healthcheck"
    };
    let awaited: Vec<&Call> = exprs_in_block(cx.model, body)
        .into_iter()
        .filter_map(|e| match cx.expr(e).kind {
            ExprKind::Await(inner) => cx.call(cx.model.strip(inner)),
            _ => None,
        })
        .filter(|c| sleep_arg(c).is_none())
        .collect();
    !awaited.is_empty()
        && awaited.iter().all(|c| probes(&c.name))
        && cx.tree.stmt_ancestors(s).any(|a| {
            matches!(&cx.stmt(a).kind, StmtKind::With { items, .. }
                if items.iter().any(|it| crate::python::common::is_deadline_scope(cx, it.ctx)))
        })
}

/// The span of the loop's first line.
fn loop_header(cx: &FileCx, s: StmtId) -> Span {
    let sp = cx.stmt(s).span;
    let text = cx.source(sp);
    let end = text.find('\n').map_or(sp.end, |i| sp.start + i as u32);
    Span::new(sp.start, end)
}

/// The body of a retry loop: a counted or unconditional loop around a
/// `try` whose success path leaves the loop and whose handler loops again.
pub(crate) fn retry_loop_body<'a>(cx: &FileCx<'a>, s: StmtId) -> Option<&'a Block> {
    let body = match &cx.stmt(s).kind {
        StmtKind::For { iter, body, .. } => {
            let c = cx.call(cx.model.strip(*iter))?;
            match c.target.as_deref() {
                Some("builtins.range") => {
                    // `range(len(xs))` walks alternatives, it does not retry.
                    if c.args.iter().any(|a| {
                        cx.call(a.value)
                            .is_some_and(|ic| ic.target.as_deref() == Some("builtins.len"))
                    }) {
                        return None;
                    }
                    // Two attempts at most: one immediate retry (of a lost
                    // race, say) cannot build a storm.
                    if crate::python::common::range_len(cx, c).is_some_and(|n| n <= 2) {
                        return None;
                    }
                }
                Some("itertools.count") => {}
                _ => return None,
            }
            if walks_alternatives(cx, s, body) {
                return None;
            }
            body
        }
        StmtKind::While { cond, body, .. } => {
            if !is_retry_condition(cx, *cond)
                || counts_to_two(cx, s, *cond)
                || counts_down_from_two(cx, s, *cond)
            {
                return None;
            }
            body
        }
        StmtKind::Loop { body } => body,
        _ => return None,
    };
    for &st in body {
        let StmtKind::Try {
            body: tb,
            handlers,
            orelse,
            ..
        } = &cx.stmt(st).kind
        else {
            continue;
        };
        if handlers.is_empty() {
            continue;
        }
        let network_errors = handlers
            .iter()
            .any(|h| h.types.iter().any(|t| is_network_error(t)));
        if !network_errors && !calls_remote(cx, s, tb) {
            continue;
        }
        let leaves = exits_on_success(cx, tb)
            || exits_on_success(cx, orelse)
            || after_try_breaks(cx, body, st);
        let retries = handlers.iter().any(|h| {
            !always_raises(cx.model, &h.body)
                && !crate::python::common::ends_in_raising_helper(cx, &h.body)
                && !exits_loop(cx, &h.body)
                && !waits_for_readiness(cx, &h.body)
                && !retries_only_interrupted(cx, &h.body)
                && !follows_the_error(cx, h)
                && !reshapes_the_request(cx, tb, h)
                && !advances_to_another_item(cx, body, tb, h)
                && !excludes_what_it_tried(cx, body, tb)
                && !empty_queue_only(cx, tb, h)
                && !h.types.iter().all(|t| is_local_error(t))
                // Waiting again for a task after the caller's cancellation
                // (`await shield(task)` until it is done) re-issues nothing.
                && !h.types.iter().all(|t| is_cancellation(t))
                && !gives_up_after_two(cx, &h.body)
                && !waits_again_for_a_reply(cx, tb, h)
        });
        if leaves && retries {
            return Some(body);
        }
    }
    None
}

/// Each round asks for something else: an I/O call in the loop's `try`
/// (awaited, or a blocking one in a plain function) takes an argument
/// made from the loop variable (`for hours_back in
/// range(3)`, `url = BASE.format(hour=..hours_back..)`, `await
/// session.get(url)`). A search over candidates (the last three hourly
/// folders), not a retry of one request. A `timeout=` grown from the
/// attempt number still asks for the same thing.
fn walks_alternatives(cx: &FileCx, lp: StmtId, body: &Block) -> bool {
    let StmtKind::For {
        target: Some(t), ..
    } = &cx.stmt(lp).kind
    else {
        return false;
    };
    let mentions = |e: ExprId, names: &HashSet<String>| {
        exprs_under(cx.model, e)
            .into_iter()
            .any(|x| cx.model.name_of(x).is_some_and(|n| names.contains(n)))
    };
    let loop_names: HashSet<String> = exprs_under(cx.model, *t)
        .into_iter()
        .filter_map(|x| cx.model.name_of(x).map(str::to_string))
        .collect();
    let mut tainted = loop_names.clone();
    // Locals made from it, in order (`check_time`, then `hour_str`, `url`).
    spread_to_locals(cx, body, &mut tainted);
    // What the handlers do after a failure (`save_snapshot(f"..{attempt}")`)
    // is not the operation tried.
    let handlers: Vec<Span> = walk::stmts_in_block(cx.model, body)
        .into_iter()
        .filter_map(|st| match &cx.stmt(st).kind {
            StmtKind::Try { handlers, .. } => Some(handlers.iter().map(|h| h.span)),
            _ => None,
        })
        .flatten()
        .collect();
    let varies_with = |c: &Call, names: &HashSet<String>| {
        c.args
            .iter()
            .any(|a| a.name.as_deref() != Some("timeout") && mentions(a.value, names))
    };
    unsnarl_model::walk::exprs_in_block(cx.model, body)
        .into_iter()
        .any(|e| {
            let Some(c) = cx.call(e) else {
                return false;
            };
            let awaited = cx.is_awaited(e);
            let sync = !cx.func(cx.func_of(e)).is_async;
            if !awaited && !sync {
                return false;
            }
            let in_handler = handlers.iter().any(|h| h.contains(cx.expr(e).span));
            // A plain function's blocking request, not a pause between
            // rounds (`threading.Event().wait(DELAYS[attempt])`).
            let blocking_request = sync
                && !in_handler
                && cx.effect(c, Effect::Blocking).is_some()
                && crate::python::common::sleep_arg(c).is_none()
                && !matches!(c.name.as_str(), "wait" | "wait_for" | "join" | "acquire");
            if crate::python::common::is_io_call(cx, c) || blocking_request {
                return varies_with(c, &tainted);
            }
            // A function of another module of the project, which
            // `calls_remote` counts as the call retried, handed the loop
            // variable itself (`create_tcp_forward_listener(.., BASE_PORT +
            // n)`), not a value merely made after a failure (a prompt that
            // reports the last error).
            awaited
                && c.receiver.is_none()
                && c.target
                    .as_deref()
                    .is_some_and(|t| cx.local_functions(t).next().is_none())
                && !in_handler
                && varies_with(c, &loop_names)
        })
}

/// `while True`, or a condition on a retry counter (`attempt < MAX`,
/// `retries > 0`).
fn is_retry_condition(cx: &FileCx, cond: ExprId) -> bool {
    match cx.model.literal(cond) {
        Some(Lit::Bool(true)) | Some(Lit::Int(1)) => return true,
        Some(_) => return false,
        None => {}
    }
    exprs_under(cx.model, cond).into_iter().any(|x| {
        cx.model
            .name_of(x)
            .or_else(|| match &cx.expr(x).kind {
                ExprKind::Attr { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .is_some_and(|n| {
                let n = n.to_ascii_lowercase();
                n.contains("retr") || n.contains("attempt") || n.contains("tries")
            })
    })
}

/// The `while` counts its attempts up from zero to at most two (`tries =
/// 0; while tries < 2: ...; tries += 1`): one retry, as `range(2)`.
fn counts_to_two(cx: &FileCx, lp: StmtId, cond: ExprId) -> bool {
    let ExprKind::Binary {
        op,
        left,
        right: bound,
    } = &cx.expr(cx.model.strip(cond)).kind
    else {
        return false;
    };
    let Some(counter) = cx.model.name_of(*left) else {
        return false;
    };
    let f = cx.tree.stmt_func(lp);
    let limit = match op {
        BinOp::Lt => 2,
        BinOp::LtE => 1,
        _ => return false,
    };
    // (Or an attribute of the object every assignment of the file sets to
    // such a constant: `self.max_retries = 2` in `__init__`.)
    let attribute_bound = || {
        let name = cx.model.dotted(*bound).filter(|d| d.starts_with("self."))?;
        let values: Vec<Option<i128>> =
            crate::util::assignments(cx, |t| cx.model.dotted(t).as_deref() == Some(name.as_str()))
                .into_iter()
                .map(|(st, v)| {
                    let plain = matches!(
                        cx.stmt(st).kind,
                        StmtKind::Assign {
                            op: AssignOp::Plain | AssignOp::Declare { .. },
                            ..
                        }
                    );
                    cx.model.int_value(v).filter(|_| plain)
                })
                .collect();
        values
            .iter()
            .copied()
            .try_fold(None, |most: Option<i128>, v| {
                let v = v?;
                Some(Some(most.map_or(v, |m| m.max(v))))
            })?
    };
    if int_constant(cx, f, *bound, 2)
        .or_else(attribute_bound)
        .is_none_or(|n| n > limit)
    {
        return false;
    }
    // Every plain assignment starts it at zero; the rest only add to it.
    only_moves_one_way(cx, f, counter, BinOp::Add, |v| {
        cx.model.int_value(v) == Some(0)
    })
}

/// Every assignment of `f` to `counter` either steps it with `step`
/// (`+= 1`, `-= 1`) or starts it at a value `starts_ok` accepts, and it
/// is started at least once.
fn only_moves_one_way(
    cx: &FileCx,
    f: FuncId,
    counter: &str,
    step: BinOp,
    starts_ok: impl Fn(ExprId) -> bool,
) -> bool {
    let mut starts = 0;
    let one_way = cx.body_stmts(f).iter().all(|&st| match &cx.stmt(st).kind {
        StmtKind::Assign {
            targets,
            value,
            op: aop,
        } if targets
            .iter()
            .any(|&t| cx.model.name_of(t) == Some(counter)) =>
        {
            match aop {
                AssignOp::Augmented(o) if *o == step => true,
                _ => {
                    starts += 1;
                    value.is_some_and(&starts_ok)
                }
            }
        }
        _ => true,
    });
    one_way && starts > 0
}

/// The `while` counts its attempts down to zero from at most two
/// (`attempts = 2; while attempts > 0: ...; attempts -= 1`, also `while
/// attempts:`): one retry, as `range(2)`.
fn counts_down_from_two(cx: &FileCx, lp: StmtId, cond: ExprId) -> bool {
    let cond = cx.model.strip(cond);
    let counter = match &cx.expr(cond).kind {
        ExprKind::Name { id, .. } => id.as_str(),
        ExprKind::Binary { op, left, right } => {
            let zero = match op {
                BinOp::Gt | BinOp::NotEq => 0,
                BinOp::GtE => 1,
                _ => return false,
            };
            if cx.model.int_value(*right) != Some(zero) {
                return false;
            }
            match cx.model.name_of(*left) {
                Some(n) => n,
                None => return false,
            }
        }
        _ => return false,
    };
    let f = cx.tree.stmt_func(lp);
    // Every plain assignment starts it at two at most; the rest only take
    // from it.
    only_moves_one_way(cx, f, counter, BinOp::Sub, |v| {
        int_constant(cx, f, v, 2).is_some_and(|n| n <= 2)
    })
}

/// A call of the program's own sleep or backoff helper (`self._sleep(d)`,
/// `backoff.delay(n)`): the delay policy lives there.
fn is_backoff_helper(cx: &FileCx, e: ExprId) -> bool {
    cx.call(e).is_some_and(|c| {
        sleep_arg(c).is_none() && {
            let n = c.name.to_ascii_lowercase();
            n.contains("sleep") || n.contains("backoff") || n.contains("delay")
        }
    })
}

/// Errors that say "this input" or "not ready yet" rather than "the other
/// side failed": loops that catch only these are parsers, probes and
/// non-blocking I/O state machines, not retries of a dependency; nor are
/// optimistic-transaction conflicts ([`is_conflict`]).
fn is_local_error(t: &str) -> bool {
    // A TLS engine's "feed me more bytes" under any module: `ssl`, pyOpenSSL,
    // or a package's own shim re-exporting them (`from .anytls import ssl as
    // _tls`, `except _tls.SSLWantReadError`).
    let last = t.rsplit('.').next().unwrap_or(t);
    is_conflict(t)
        || matches!(
            last,
            "SSLWantReadError" | "SSLWantWriteError" | "WantReadError" | "WantWriteError"
        )
        || matches!(
            t,
            "IndexError"
                | "KeyError"
                | "ValueError"
                | "TypeError"
                | "AttributeError"
                | "NameError"
                | "UnboundLocalError"
                | "StopIteration"
                | "StopAsyncIteration"
                | "LookupError"
                | "UnicodeError"
                | "UnicodeDecodeError"
                | "UnicodeEncodeError"
                | "FileExistsError"
                | "FileNotFoundError"
                | "PermissionError"
                | "IsADirectoryError"
                | "NotADirectoryError"
                | "InterruptedError"
                | "BlockingIOError"
                | "OverflowError"
                | "ZeroDivisionError"
                | "RecursionError"
                | "NotImplementedError"
                | "ImportError"
                | "ModuleNotFoundError"
                | "EOFError"
                | "json.JSONDecodeError"
        )
}

/// The handler catches only an in-process queue's "empty" or "full"
/// (`except asyncio.QueueEmpty:`) and the `try` makes a non-waiting queue
/// call that raises it (`q.get_nowait()`): the next round waits for the
/// queue, not for a service. (A client that raises `queue.Empty` on a
/// timed-out reply, `except Empty:` around `channel.execute(code)`, still
/// retries its request.)
fn empty_queue_only(cx: &FileCx, tried: &Block, h: &Handler) -> bool {
    !h.types.is_empty()
        && h.types.iter().all(|t| {
            matches!(
                t.rsplit('.').next(),
                Some("QueueEmpty" | "QueueFull" | "Empty" | "Full")
            )
        })
        && walk::calls_in_block(cx.model, tried).into_iter().any(|e| {
            cx.call(e)
                .is_some_and(|c| matches!(c.name.as_str(), "get_nowait" | "put_nowait"))
        })
}

/// An optimistic-concurrency conflict: Redis's `WatchError` (another
/// client changed a watched key, so the `WATCH`/`MULTI` transaction lost
/// the race), or an error named for a stale or wrong revision
/// (`StaleHeadError`, NATS KV's `KeyWrongLastSequenceError`,
/// `VersionConflictError`, `OptimisticLockError`), or a database's unique
/// key or serialization conflict (`IntegrityError`, `UniqueViolation`,
/// `SerializationFailure`), or an exclusive create of a name already taken
/// (`...AlreadyExistsError`, `DuplicateKeyError`). Another writer got
/// there first: the compare-and-swap reads again and runs again at once,
/// by design; the server did not fail.
pub(crate) fn is_conflict(t: &str) -> bool {
    let last = t.rsplit('.').next().unwrap_or(t);
    last == "WatchError"
        || [
            "Stale",
            "WrongLastSequence",
            "VersionConflict",
            "VersionMismatch",
            "RevisionMismatch",
            "OptimisticLock",
            "ConcurrentModification",
            "StateConflict",
            // A unique key another writer took first (`INSERT` of the
            // next link of a chain), or a serializable transaction that
            // lost to another: read again and retry is the protocol.
            "IntegrityError",
            "UniqueViolation",
            "SerializationFailure",
            // An exclusive create that found the name taken
            // (`MetadataAlreadyExistsError`, pymongo's
            // `DuplicateKeyError`): the next round draws a fresh id.
            "AlreadyExists",
            "DuplicateKey",
        ]
        .iter()
        .any(|w| last.contains(w))
}

/// Exceptions raised by network and database clients.
pub(crate) fn is_network_error(t: &str) -> bool {
    !is_conflict(t) && is_client_error(t)
}

fn is_client_error(t: &str) -> bool {
    matches!(
        t,
        "ConnectionError"
            | "ConnectionResetError"
            | "ConnectionRefusedError"
            | "TimeoutError"
            | "socket.timeout"
            | "socket.error"
            | "asyncio.TimeoutError"
            | "asyncio.exceptions.TimeoutError"
    ) || [
        "requests.",
        "aiohttp.",
        "httpx.",
        "urllib.error.",
        "urllib3.",
        "redis.",
        "psycopg",
        "pymysql.",
        "asyncpg.",
        "botocore.",
        "grpc.",
        "websockets.",
        "pika.",
        "aio_pika.",
        "http.client.",
    ]
    .iter()
    .any(|p| t.starts_with(p))
}

/// Verbs that, on an untyped receiver, talk to another service.
const REMOTE_VERBS: &[&str] = &[
    "connect", "request", "get", "post", "put", "patch", "delete", "fetch", "execute", "query",
    "publish", "send", "call", "upload", "download", "urlopen", "invoke",
];

/// A receiver named like a client of another service.
fn is_client_name(d: &str) -> bool {
    let last = d
        .rsplit('.')
        .next()
        .unwrap_or(d)
        .trim_start_matches('_')
        .to_ascii_lowercase();
    [
        "client",
        "session",
        "conn",
        "connection",
        "db",
        "api",
        "http",
        "sock",
        "socket",
        "channel",
        "stub",
        "service",
        "producer",
        "consumer",
        "broker",
        "redis",
        "cursor",
        "pool",
        "transport",
        "remote",
        "server",
        "smtp",
        "ftp",
    ]
    .iter()
    .any(|k| last == *k || last.ends_with(&format!("_{k}")) || last.starts_with(&format!("{k}_")))
}

/// The retried block calls another service: a network/database call, an
/// I/O verb on an untyped client, or the operation handed in as a
/// parameter (`await op()` in a retry helper).
fn calls_remote(cx: &FileCx, loop_stmt: StmtId, b: &Block) -> bool {
    let f = cx.tree.stmt_func(loop_stmt);
    unsnarl_model::walk::calls_in_block(cx.model, b)
        .into_iter()
        .any(|e| {
            let c = cx.call(e).unwrap();
            // The knowledge tables know these talk to another service.
            if cx.effect(c, Effect::NeedsTimeout).is_some()
                || cx.effect(c, Effect::NonIdempotent).is_some()
            {
                return true;
            }
            if let Some(t) = c.target.as_deref() {
                // A socket's own set-up (`bind`, `listen`, `setsockopt`)
                // talks to no one: only what waits on the network counts.
                if t.starts_with("socket.") {
                    return cx.effect(c, Effect::Blocking).is_some();
                }
                // aiohttp's server side (`web.TCPSite(runner, host,
                // port).start()` binds a port) waits on no peer either.
                if t.starts_with("aiohttp.web") {
                    return false;
                }
                let remote_prefix = [
                    "requests.",
                    "urllib.request.",
                    "urllib3.",
                    "http.client.",
                    "httpx.",
                    "aiohttp.",
                    "asyncpg.",
                    "psycopg",
                    "pymysql.",
                    "redis.",
                    "boto3.",
                    "botocore.",
                    "smtplib.",
                    "ftplib.",
                    "aio_pika.",
                    "pika.",
                    "websockets.",
                ];
                if remote_prefix.iter().any(|p| t.starts_with(p))
                    && !t.ends_with("Error")
                    && !t.ends_with("Exception")
                {
                    return true;
                }
                // In a coroutine, any awaited operation of another module
                // (a connection, a client call) is the thing being retried.
                return cx.is_awaited(e)
                    && (crate::python::common::is_io_call(cx, c)
                        || cx.local_functions(t).next().is_none());
            }
            if cx.is_awaited(e) && c.receiver.is_none() {
                return true;
            }
            if let Some(r) = c.receiver {
                return REMOTE_VERBS.contains(&c.name.as_str())
                    && cx.sema.type_of(r).is_none()
                    && cx.model.dotted(r).is_some_and(|d| is_client_name(&d));
            }
            // A callable parameter: the operation being retried.
            cx.model
                .name_of(c.func)
                .is_some_and(|n| cx.func(f).params.iter().any(|p| p.name == n))
        })
}

/// A handler that re-raises every error but a system call the kernel cut
/// short or that would block (`if e.errno != errno.EINTR: raise`): going
/// round again at once is how such calls are meant to be repeated, and no
/// other side failed (`except InterruptedError` is the same, by type).
fn retries_only_interrupted(cx: &FileCx, b: &Block) -> bool {
    let raises = unsnarl_model::walk::stmts_in_block(cx.model, b)
        .into_iter()
        .any(|s| matches!(cx.stmt(s).kind, StmtKind::Raise(_)));
    raises
        && exprs_in_block(cx.model, b)
            .into_iter()
            .any(|e| cx.model.dotted(e).is_some_and(|d| is_would_block_code(&d)))
}

/// A constant naming an interrupted or would-block call: `errno.EINTR`,
/// `errno.EAGAIN`, `errno.EWOULDBLOCK`, `ssl.SSL_ERROR_WANT_READ`, or a
/// project's own set of them (eventlet's `SOCKET_BLOCKING`): an
/// upper-case name that says so. Or a local port already taken
/// (`errno.EADDRINUSE`): the retry binds again (usually another port),
/// and no other side failed.
fn is_would_block_code(dotted: &str) -> bool {
    let last = dotted.rsplit('.').next().unwrap_or(dotted);
    last.bytes().all(|c| c.is_ascii_uppercase() || c == b'_')
        && [
            "EINTR",
            "EAGAIN",
            "WOULDBLOCK",
            "WANT_READ",
            "WANT_WRITE",
            "BLOCKING",
            "EADDRINUSE",
        ]
        .iter()
        .any(|k| last.contains(k))
}

/// A handler that takes the next target from the error before going round
/// again (`exc_or_uri = self.process_redirect(exc)` ... `self.uri =
/// exc_or_uri`): following a redirect or failing over, not repeating the
/// same call. A value made by a call given the caught error, stored in an
/// attribute or element; the error itself kept (`last_error = exc`), or
/// only formatted or logged, does not count.
fn follows_the_error(cx: &FileCx, h: &Handler) -> bool {
    let Some(err) = h.name.as_deref() else {
        return false;
    };
    let from_error = |v: ExprId| {
        cx.call(cx.model.strip(v)).is_some_and(|c| {
            !matches!(
                c.target.as_deref(),
                Some("builtins.str" | "builtins.repr" | "builtins.type" | "builtins.isinstance")
            ) && c
                .args
                .iter()
                .any(|a| cx.model.name_of(a.value) == Some(err))
        })
    };
    let stmts = unsnarl_model::walk::stmts_in_block(cx.model, &h.body);
    let mut derived: Vec<&str> = Vec::new();
    for &s in &stmts {
        if let StmtKind::Assign {
            targets,
            value: Some(v),
            op: AssignOp::Plain,
        } = &cx.stmt(s).kind
            && from_error(*v)
        {
            derived.extend(targets.iter().filter_map(|&t| cx.model.name_of(t)));
        }
    }
    stmts.iter().any(|&s| match &cx.stmt(s).kind {
        StmtKind::Assign {
            targets,
            value: Some(v),
            op: AssignOp::Plain,
        } => {
            let new_target =
                from_error(*v) || cx.model.name_of(*v).is_some_and(|n| derived.contains(&n));
            new_target && targets.iter().any(|&t| cx.model.name_of(t).is_none())
        }
        _ => false,
    })
}

/// A handler that rewrites an input of the call it tried, from that
/// input (`trajectory = self.truncate_trajectory(trajectory)` after
/// `ContextWindowExceededError`, for `await module(.., trajectory=
/// fmt(trajectory))`): the next round sends a different, smaller request,
/// not the same one again.
fn reshapes_the_request(cx: &FileCx, tried: &Block, h: &Handler) -> bool {
    let inputs: HashSet<&str> = exprs_in_block(cx.model, tried)
        .into_iter()
        .filter_map(|a| match cx.expr(a).kind {
            ExprKind::Await(inner) => cx.call(cx.model.strip(inner)),
            _ => None,
        })
        .flat_map(|c| c.args.iter().flat_map(|a| exprs_under(cx.model, a.value)))
        .filter_map(|e| cx.model.name_of(e))
        .collect();
    h.body.iter().any(|&st| {
        let StmtKind::Assign {
            targets,
            value: Some(v),
            op: AssignOp::Plain,
        } = &cx.stmt(st).kind
        else {
            return false;
        };
        let [t] = targets.as_slice() else {
            return false;
        };
        let Some(name) = cx.model.name_of(*t) else {
            return false;
        };
        // A copy (`dict(body)`, `copy.deepcopy(body)`) sends the same.
        inputs.contains(name)
            && cx.call(cx.model.strip(*v)).is_some_and(|c| {
                !c.target
                    .as_deref()
                    .is_some_and(|t| t.starts_with("builtins.") || t.starts_with("copy."))
                    && c.args
                        .iter()
                        .any(|a| cx.model.name_of(a.value) == Some(name))
            })
    })
}

/// Adds to `names` every local the block assigns from a value that
/// mentions one of them, in source order (`check_time` made from the
/// loop variable, then `url` from `check_time`).
fn spread_to_locals(cx: &FileCx, block: &Block, names: &mut HashSet<String>) {
    for st in walk::stmts_in_block(cx.model, block) {
        if let StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } = &cx.stmt(st).kind
            && exprs_under(cx.model, *v)
                .into_iter()
                .any(|x| cx.model.name_of(x).is_some_and(|n| names.contains(n)))
        {
            for &tg in targets {
                if let Some(n) = cx.model.name_of(tg) {
                    names.insert(n.to_string());
                }
            }
        }
    }
}

/// Failover: each round grows a local collection of what it tried
/// (`tried.add(chosen.id)`, `tried.append(index)` in the handler) and
/// picks the next target from a call handed that collection (`chosen =
/// await selector.pick_next(tried)`, `client, index = await
/// self.get_client(tried=tried)`), and the request goes to what was picked:
/// no target is asked twice.
fn excludes_what_it_tried(cx: &FileCx, loop_body: &Block, tried: &Block) -> bool {
    // (collection, what is added to it)
    let grown: Vec<(&str, ExprId)> = walk::calls_in_block(cx.model, loop_body)
        .into_iter()
        .filter_map(|e| {
            let c = cx.call(e)?;
            if !matches!(c.name.as_str(), "add" | "append") || c.args.len() != 1 {
                return None;
            }
            Some((cx.model.name_of(c.receiver?)?, c.args[0].value))
        })
        .collect();
    let mentions = |e: ExprId, names: &HashSet<String>| {
        exprs_under(cx.model, e)
            .into_iter()
            .any(|x| cx.model.name_of(x).is_some_and(|n| names.contains(n)))
    };
    // A collection the function starts empty (`tried = set()`, `tried:
    // list[int] = []`), not a repository whose `add` is the request.
    let Some(&first) = loop_body.first() else {
        return false;
    };
    let f = cx.tree.stmt_func(first);
    let starts_empty = |list: &str| {
        let mut values = crate::python::common::values_bound_to(cx, f, list).peekable();
        values.peek().is_some()
            && values
                .all(|v| v.is_some_and(|v| crate::python::common::new_empty_list_or_set(cx, v)))
    };
    grown.iter().any(|&(list, added)| {
        if !starts_empty(list) {
            return false;
        }
        // What a call handed the collection picks (`chosen = await
        // selector.pick_next(tried)`).
        let hands_it = |v: ExprId| {
            exprs_under(cx.model, v).into_iter().any(|x| {
                cx.call(x).is_some_and(|c| {
                    c.args
                        .iter()
                        .any(|a| cx.model.name_of(a.value) == Some(list))
                })
            })
        };
        let mut picked: HashSet<String> = HashSet::new();
        for st in walk::stmts_in_block(cx.model, loop_body) {
            if let StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } = &cx.stmt(st).kind
                && hands_it(*v)
            {
                for &t in targets {
                    crate::python::common::collect_target_names(cx.model, t, &mut picked);
                }
            }
        }
        spread_to_locals(cx, loop_body, &mut picked);
        // What is added is what was picked (`tried.add(chosen.id)`): the
        // collection records the targets tried, not the data sent.
        if !mentions(added, &picked) {
            return false;
        }
        exprs_in_block(cx.model, tried).into_iter().any(|e| {
            let ExprKind::Await(inner) = cx.expr(e).kind else {
                return false;
            };
            cx.call(cx.model.strip(inner)).is_some_and(|c| {
                c.receiver
                    .and_then(|r| cx.model.name_of(cx.model.strip(r)))
                    .is_some_and(|n| picked.contains(n))
                    || c.args.iter().any(|a| mentions(a.value, &picked))
            })
        })
    })
}

/// A handler that moves a cursor on (`idx += 1`) from which the loop
/// builds what the next round asks for (`next_index = pick(cur + idx)`,
/// `item = get_item(next_index)`, `await get_stream_details(item)`): the
/// next round tries another item, a search, not the same request again.
/// A `timeout=` grown from the counter still asks for the same thing.
fn advances_to_another_item(cx: &FileCx, loop_body: &Block, tried: &Block, h: &Handler) -> bool {
    let mut tainted: HashSet<String> = walk::stmts_in_block(cx.model, &h.body)
        .into_iter()
        .filter_map(|st| match &cx.stmt(st).kind {
            StmtKind::Assign {
                targets,
                value: Some(v),
                op: AssignOp::Augmented(BinOp::Add | BinOp::Sub),
            } if matches!(cx.model.literal(*v), Some(Lit::Int(_))) => match targets.as_slice() {
                [t] => cx.model.name_of(*t).map(str::to_string),
                _ => None,
            },
            _ => None,
        })
        .collect();
    if tainted.is_empty() {
        return false;
    }
    let mentions = |e: ExprId, names: &HashSet<String>| {
        exprs_under(cx.model, e)
            .into_iter()
            .any(|x| cx.model.name_of(x).is_some_and(|n| names.contains(n)))
    };
    spread_to_locals(cx, loop_body, &mut tainted);
    exprs_in_block(cx.model, tried).into_iter().any(|e| {
        let ExprKind::Await(inner) = cx.expr(e).kind else {
            return false;
        };
        cx.call(cx.model.strip(inner)).is_some_and(|c| {
            c.args
                .iter()
                .any(|a| a.name.as_deref() != Some("timeout") && mentions(a.value, &tainted))
        })
    })
}

/// A handler that waits for the resource to become ready (`await
/// wait_readable()`, `select`, eventlet's `trampoline(sock, read=True)`)
/// rather than retrying blindly.
fn waits_for_readiness(cx: &FileCx, b: &Block) -> bool {
    // `await fut`: waiting for a future someone else completes.
    let awaits_future = unsnarl_model::walk::exprs_in_block(cx.model, b)
        .into_iter()
        .any(|e| matches!(cx.expr(e).kind, ExprKind::Await(inner) if cx.model.name_of(inner).is_some()));
    awaits_future
        || unsnarl_model::walk::calls_in_block(cx.model, b)
            .into_iter()
            .any(|e| {
                let c = cx.call(e).unwrap();
                sleep_arg(c).is_none()
                    && (c.name.starts_with("wait")
                        || c.name.starts_with("_wait")
                        // eventlet's hub: park until the socket is ready.
                        || c.name.ends_with("trampoline")
                        || matches!(c.name.as_str(), "select" | "poll"))
            })
}

/// Only a timeout is caught around awaits that all receive (`msg = await
/// sub.next_msg(timeout=left)`, also through a one-argument wrapper:
/// `await ensure_async(ch.get_msg(timeout=1))`): going round waits for the
/// same reply again, and sends nothing to anyone. Or that all wait with a
/// timeout (`await asyncio.wait_for(reply, timeout=t)`): each failed
/// attempt took the whole timeout before the next. In blocking code, the
/// same for a `try` that only receives (`sock.recv(n)` on a socket with a
/// timeout, caught as `socket.timeout`) and sends nothing.
fn waits_again_for_a_reply(cx: &FileCx, tried: &Block, h: &Handler) -> bool {
    let timeouts_only = !h.types.is_empty()
        && h.types.iter().all(|t| {
            matches!(
                t.as_str(),
                "TimeoutError"
                    | "asyncio.TimeoutError"
                    | "asyncio.exceptions.TimeoutError"
                    | "queue.Empty"
                    | "socket.timeout"
                    | "trio.TooSlowError"
            ) || t.ends_with(".TimeoutError")
                // curio's and multio's `timeout_after`.
                || t.ends_with(".TaskTimeout")
        });
    if !timeouts_only {
        return false;
    }
    // (`get` only on a queue: `await session.get(url)` is a request.)
    let receives = |c: &Call| {
        c.receiver.is_some()
            && (matches!(
                c.name.as_str(),
                "next_msg"
                    | "get_msg"
                    | "recv"
                    | "recvfrom"
                    | "recv_into"
                    | "receive"
                    | "wait"
                    // A listening socket's timeout: waits for the next
                    // client again, and calls no one.
                    | "accept"
            ) || c
                .target
                .as_deref()
                .is_some_and(|t| t.ends_with("Queue.get")))
    };
    // `await asyncio.wait_for(reply, timeout=t)`: a failed attempt has
    // already waited the whole timeout, so the attempts are that far apart.
    let bounded_wait = |c: &Call| {
        c.target.as_deref() == Some("asyncio.wait_for")
            && (c.positional(1).is_some() || c.kwarg("timeout").is_some())
    };
    let waits = |c: &Call| receives(c) || bounded_wait(c);
    // `async with asyncio.timeout(t): await event.wait()`: the deadline
    // scope is the bounded wait; a failed attempt took the whole of it.
    let in_deadline_scope = |s: StmtId| {
        matches!(&cx.stmt(s).kind, StmtKind::With { items, is_async: true, .. }
            if items.iter().any(|it| crate::python::common::is_deadline_scope(cx, it.ctx)))
    };
    if tried.iter().any(|&s| in_deadline_scope(s))
        && tried.iter().all(|&s| {
            in_deadline_scope(s) || crate::util::awaits_in_block(cx.model, &vec![s]).is_empty()
        })
    {
        return true;
    }
    let Some(aw) = crate::util::awaited_values(cx.model, tried) else {
        return false;
    };
    if aw.is_empty() {
        let calls = unsnarl_model::walk::calls_in_block(cx.model, tried);
        let sends = |c: &Call| {
            ["send", "write", "connect", "request", "put"]
                .iter()
                .any(|p| c.name.starts_with(p))
        };
        return calls.iter().any(|&e| cx.call(e).is_some_and(receives))
            && !calls.iter().any(|&e| cx.call(e).is_some_and(sends));
    }
    aw.iter().all(|&a| {
        cx.call(cx.model.strip(a)).is_some_and(|c| {
            waits(c)
                || (c.args.len() == 1
                    && cx.call(cx.model.strip(c.args[0].value)).is_some_and(waits))
        })
    })
}

fn is_cancellation(t: &str) -> bool {
    matches!(
        t,
        "asyncio.CancelledError"
            | "asyncio.exceptions.CancelledError"
            | "concurrent.futures.CancelledError"
    )
}

/// The handler gives up (raises, returns, breaks) once a counter reaches a
/// bound of at most two (`if attempts >= MAX_ATTEMPTS: raise` with
/// `MAX_ATTEMPTS = 2`): one immediate retry, on a fresh connection say, and
/// never a storm.
fn gives_up_after_two(cx: &FileCx, body: &Block) -> bool {
    body.iter().any(|&st| {
        let StmtKind::If { cond, then, .. } = &cx.stmt(st).kind else {
            return false;
        };
        let ExprKind::Binary { op, right: rhs, .. } = &cx.expr(*cond).kind else {
            return false;
        };
        // A name the function does not bind is the module's constant.
        let f = cx.tree.stmt_func(st);
        let module_level = cx.model.name_of(*rhs).is_some_and(|n| {
            crate::python::common::values_bound_to(cx, f, n)
                .next()
                .is_none()
        });
        let bound = int_constant(cx, if module_level { FuncId(0) } else { f }, *rhs, 2);
        let at_most_two = match op {
            BinOp::GtE | BinOp::Eq => bound.is_some_and(|n| n <= 2),
            BinOp::Gt => bound.is_some_and(|n| n <= 1),
            _ => false,
        };
        at_most_two && (always_raises(cx.model, then) || exits_loop(cx, then))
    })
}

/// A `return` or `break` at this loop's level (not in nested loops).
fn exits_loop(cx: &FileCx, b: &Block) -> bool {
    leaves(cx, b, true)
}

/// The block leaves the loop other than to report failure: a `break`, or a
/// `return` of anything but `False`. A probe loop that only stops early
/// once too many probes failed (`if failures > allowed: return False`)
/// takes every probe when they succeed; it samples, it does not retry.
fn exits_on_success(cx: &FileCx, b: &Block) -> bool {
    leaves(cx, b, false)
}

/// The block has a `break` or `return` of its own (not in a nested loop);
/// `return False` counts only when `failures_count`.
fn leaves(cx: &FileCx, b: &Block, failures_count: bool) -> bool {
    struct V {
        failures_count: bool,
        found: bool,
    }
    impl Visitor for V {
        fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
            match m.stmt(id).kind {
                StmtKind::Return(Some(v))
                    if !self.failures_count && matches!(m.literal(v), Some(Lit::Bool(false))) =>
                {
                    false
                }
                StmtKind::Return(_) | StmtKind::Break => {
                    self.found = true;
                    false
                }
                StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::Loop { .. } => false,
                // `if not line: break` after a read: the end of the input,
                // not the success of an attempt (a serving loop that reads
                // one request per round). Also a state of the object gone
                // (`if not self._session_token: break`): a periodic task
                // whose owner stopped it.
                StmtKind::If {
                    cond,
                    ref then,
                    ref orelse,
                } if !self.failures_count => {
                    !(orelse.is_empty()
                        && matches!(then.as_slice(), [b] if matches!(m.stmt(*b).kind, StmtKind::Break))
                        && matches!(&m.expr(m.strip(cond)).kind,
                        ExprKind::Unary { op: UnOp::Not, operand }
                            if m.name_of(*operand).is_some()
                                || m.dotted(*operand).is_some_and(|d| d.starts_with("self."))))
                }
                _ => true,
            }
        }
    }
    let mut v = V {
        failures_count,
        found: false,
    };
    walk_block(cx.model, b, &mut v);
    v.found
}

/// `try: ... except: continue` followed by `break`/`return` in the loop.
fn after_try_breaks(cx: &FileCx, body: &Block, t: StmtId) -> bool {
    let Some(i) = body.iter().position(|&x| x == t) else {
        return false;
    };
    body[i + 1..]
        .iter()
        .any(|&s| matches!(cx.stmt(s).kind, StmtKind::Break | StmtKind::Return(_)))
}

/// Names assigned in the loop (and the loop variable): a delay that uses
/// them changes between attempts.
fn changing_names(cx: &FileCx, s: StmtId, body: &Block) -> Vec<String> {
    let mut out = Vec::new();
    if let StmtKind::For {
        target: Some(t), ..
    } = &cx.stmt(s).kind
    {
        for x in exprs_under(cx.model, *t) {
            if let Some(n) = cx.model.name_of(x) {
                out.push(n.to_string());
            }
        }
    }
    struct V<'a>(&'a mut Vec<String>);
    impl Visitor for V<'_> {
        fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
            match &m.stmt(id).kind {
                StmtKind::Assign { targets, .. } => {
                    for &t in targets {
                        if let Some(d) = m.dotted(t) {
                            self.0.push(d);
                        }
                    }
                }
                // `except FloodWaitError as e: await asyncio.sleep(e.seconds)`:
                // each error carries the wait the server asked for.
                StmtKind::Try { handlers, .. } => {
                    self.0.extend(
                        handlers
                            .iter()
                            .filter_map(|h| h.name.as_deref().map(String::from)),
                    );
                }
                _ => {}
            }
            true
        }
    }
    walk_block(cx.model, body, &mut V(&mut out));
    out
}

/// A delay that is the same on every attempt: literals and names not
/// assigned in the loop (nor read from the error caught in it, `e.seconds`),
/// combined with arithmetic.
fn is_constant(cx: &FileCx, e: ExprId, changing: &[String]) -> bool {
    exprs_under(cx.model, e)
        .into_iter()
        .all(|x| match &cx.expr(x).kind {
            ExprKind::Literal(_) | ExprKind::Binary { .. } | ExprKind::Unary { .. } => true,
            ExprKind::Name { id, .. } => !changing.iter().any(|c| c == id),
            ExprKind::Attr { .. } => cx.model.dotted(x).is_some_and(|d| {
                !changing.contains(&d)
                    && !d
                        .split_once('.')
                        .is_some_and(|(root, _)| changing.iter().any(|c| c == root))
            }),
            _ => false,
        })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import asyncio


class LightConnection:
    async def send_with_retries(self, msg, timeout_secs=1, max_attempts=3):
        attempts = 0
        while attempts < max_attempts:  # expect
            event = asyncio.Event()
            self.pending[msg.seq] = event
            attempts += 1
            try:
                async with asyncio.timeout(timeout_secs):
                    await self.transport.send(msg.packed)
                    await event.wait()
                break
            except (TimeoutError, ConnectionError):
                continue
"#,
        r#"
import time

import requests


def fetch(url, attempts=5):
    for attempt in range(attempts):
        try:
            return requests.get(url, timeout=5).json()
        except requests.RequestException:
            if attempt == attempts - 1:
                raise
        time.sleep(2)  # expect
"#,
        r#"
import asyncio

import httpx


class Chat:
    def __init__(self, client: httpx.AsyncClient):
        self.client = client

    async def send(self, lines: asyncio.Queue):
        line = await lines.get()
        while True:
            try:
                reply = await self.client.post("/chat", json={"text": line})
                return reply.text
            except httpx.HTTPError:
                await asyncio.sleep(1)  # expect
"#,
        r#"
import socket


def ensure_connected(client):
    tries = 0
    while tries < 10:  # expect
        try:
            client.sock.connect((client.host, client.port))
            return
        except socket.error:
            client.reset()
        tries += 1
    raise ConnectionError("cannot connect")
"#,
        r#"
import asyncio
import time

import httpx


async def wait_for_service(host, timeout=30):
    # Every client of `host` polls it in step after an outage.
    start = time.monotonic()
    while True:
        try:
            async with httpx.AsyncClient() as client:
                response = await client.get(f"https://{host}/health", timeout=0.5)
                if response.status_code == 200:
                    return
        except Exception as e:
            if time.monotonic() - start > timeout:
                raise TimeoutError(host) from e
            await asyncio.sleep(0.5)  # expect
"#,
        r#"
import socket
import time


def connect_to_primary(port):
    for _ in range(30):
        try:
            return socket.create_connection(("10.0.4.12", port), timeout=1)
        except OSError:
            time.sleep(1)  # expect
    raise RuntimeError("primary unreachable")
"#,
        r#"
import socket
from queue import Empty

from jupyter_core.utils import ensure_async


class KernelClient:
    async def execute_until_done(self, code):
        while True:  # expect
            try:
                msg = await ensure_async(self.shell_channel.execute(code))
            except Empty:
                pass
            else:
                if msg["msg_type"] == "execute_reply":
                    break


def locate_name_server(port):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(0.7)
    for _ in range(3):  # expect
        try:
            sock.sendto(b"GET_NSURI", ("<broadcast>", port))
            data, _ = sock.recvfrom(100)
            return data.decode()
        except socket.timeout:
            continue
    return None
"#,
        r#"
import logging
import requests

log = logging.getLogger(__name__)

def fetch(url):
    last = None
    for _ in range(5):  # expect
        try:
            return requests.get(url, timeout=5)
        except requests.ConnectionError as exc:
            last = exc
            log.warning("retrying %s: %s", url, str(exc))
    raise last
"#,
        r#"
async def fetch_with_retry(client, url):
    for attempt in range(5):  # expect
        try:
            return await client.get(url)
        except ConnectionError:
            continue
    raise RuntimeError("gave up")
"#,
        r#"
import time
import requests

RETRY_DELAY = 2

def post_event(evt):
    while True:
        try:
            requests.post("https://hooks.example/e", json=evt, timeout=5)
            break
        except requests.RequestException:
            time.sleep(RETRY_DELAY)  # expect
"#,
        r#"
import asyncio

async def connect(host):
    for _ in range(10):
        try:
            conn = await open_db(host)
        except OSError:
            await asyncio.sleep(1)  # expect
        else:
            return conn
"#,
        r#"
import pika

MAX_DECLARE_ATTEMPTS = 50

class Broker:
    def declare(self, name):
        attempts = 0
        while True:  # expect
            try:
                self.channel().queue_declare(queue=name, durable=True)
                break
            except pika.exceptions.AMQPConnectionError:
                self.conn = None
                attempts += 1
                if attempts >= MAX_DECLARE_ATTEMPTS:
                    raise
"#,
        r#"
import asyncio

async def fetch_config(session, url):
    while True:  # expect
        try:
            resp = await session.get(url)
            return await resp.json()
        except asyncio.TimeoutError:
            continue
"#,
        r#"
import anyio


class Broker:
    async def publish(self, msg, timeout=3):
        sleep_time = (timeout or 10) / 10
        with anyio.move_on_after(timeout) as scope:
            while True:
                if scope.cancel_called:
                    return False
                try:
                    await self._connection.publish(msg)
                    return True
                except ConnectionError:
                    pass
                await anyio.sleep(sleep_time)  # expect
        return False
"#,
        r#"
import asyncio

class Transaction:
    async def execute(self, request):
        retries = 0
        while retries <= self.retries:  # expect
            self.response = asyncio.get_running_loop().create_future()
            self.send(request)
            try:
                return await asyncio.wait_for(self.response, timeout=self.timeout)
            except (asyncio.TimeoutError, ConnectionError):
                retries += 1
        raise TimeoutError("no response")
"#,
        r#"
from myapp.utils import ainput

# The code is read once: a wrong one is sent again and again at full speed.
async def login(client):
    code = await ainput("Enter the code you received: ")
    while True:  # expect
        try:
            return await client.post("/login", json={"code": code})
        except ConnectionError as e:
            print(e)
"#,
        r#"
import asyncio
import random


class Session:
    async def _handle_conflict(self, error, attempt):
        if attempt >= 5:
            raise error
        await asyncio.sleep(0.5)

    async def add_items(self, items):
        attempt = 0
        while True:  # expect
            try:
                return await self._client.save_state(items)
            except ConnectionError as error:
                attempt += 1
                await self._handle_conflict(error, attempt)
"#,
        r#"
import time
from OpenSSL import SSL

def safe_call(call, *args):
    start = time.time()
    while True:
        try:
            return call(*args)
        except SSL.SysCallError:
            time.sleep(0.01)  # expect
        if time.time() - start > 30:
            raise TimeoutError("timed out")
"#,
        r#"
import errno

def send_all(sock, data, hub):
    while True:  # expect
        try:
            return sock.send(data)
        except OSError as e:
            if e.errno == errno.ENOTCONN:
                raise
            hub.log(e)
"#,
        r#"
import asyncio


class Client:
    async def call(self, cmd):
        for attempt in range(5):  # expect
            try:
                return await self._send(cmd)
            except ConnectionError:
                await self._on_fail(attempt)

    async def _on_fail(self, attempt):
        self._log(attempt)
        await self._pause(1)

    async def _pause(self, seconds):
        await asyncio.sleep(seconds)
"#,
        r#"
import aiohttp


async def fetch_listing(session, url):
    for attempt in range(5):  # expect
        try:
            response = await session.get(url, timeout=10 * (attempt + 1))
            return await response.text()
        except aiohttp.ClientError:
            continue
    return None
"#,
        r#"
import asyncio

from .client import reload_page
from .operations import save_error_snapshot


async def refresh(page, max_retries=3):
    for attempt in range(max_retries):
        try:
            await reload_page(page)
            break
        except Exception as err:
            if attempt < max_retries - 1:
                await asyncio.sleep(5)  # expect
            else:
                await save_error_snapshot(f"reload_fail_attempt_{attempt + 1}")
"#,
        r#"
import asyncio

import httpx


async def pump(queue: asyncio.Queue, client: httpx.AsyncClient):
    item = None
    while True:
        try:
            if item is None:
                item = await queue.get()
            await client.post("/events", json=item)
            return
        except httpx.HTTPError:
            await asyncio.sleep(1)  # expect
"#,
        r#"
import asyncio

import httpx


async def pause(delay, stop):
    if stop is None:
        await asyncio.sleep(delay)
        return False
    try:
        await asyncio.wait_for(stop.wait(), timeout=delay)
        return True
    except TimeoutError:
        return False


async def fetch(client: httpx.AsyncClient, stop, retry_delay=1.0):
    for attempt in range(5):
        if attempt > 0:
            await pause(retry_delay, stop)  # expect
        try:
            return await client.get("/status")
        except httpx.HTTPError:
            continue
"#,
        r#"
# Five attempts counted down, back to back.
async def ready(container):
    attempts = 5
    while attempts > 0:  # expect
        try:
            await container.read()
            return True
        except ConnectionError:
            attempts -= 1
    return False
"#,
        r#"
# The handler rebuilds the same request: the next round sends it again.
async def send(client, url, body):
    while True:  # expect
        try:
            return await client.post(url, json=body)
        except ConnectionError:
            body = dict(body)
"#,
        r#"
import aiohttp


async def fetch(session, url, log):
    errors = []
    while True:  # expect
        try:
            return await session.get(url)
        except aiohttp.ClientError as exc:
            errors.append(exc)
            summary = log.summarize(errors)
            log.warning(summary)
"#,
        r#"
import asyncio
import json

import aiohttp


class Catalog:
    def __init__(self, url):
        self.url = url
        self.session = aiohttp.ClientSession()

    async def add(self, entry):
        for _ in range(10):
            async with self.session.get(self.url) as resp:
                current = await resp.json()
            current.append(entry)
            new_data = json.dumps(current)
            try:
                await self.session.put(self.url, data=new_data)
                return
            except aiohttp.ClientError:
                await asyncio.sleep(0.5)  # expect
                continue
        raise RuntimeError("catalog update did not converge")
"#,
    ],
    pass: &[
        r#"
import httpx


async def chat(client: httpx.AsyncClient, renderer):
    while True:
        # One round per line the user types; a failure waits for the next.
        line = renderer.get_input()
        if not line:
            continue
        try:
            reply = await client.post("https://llm.example/chat", json={"q": line})
            if reply.status_code == 204:
                break
            renderer.show(reply.text)
        except Exception as exc:
            renderer.show(f"Error: {exc}")
"#,
        r#"
import logging
import time

import requests

logger = logging.getLogger(__name__)


def wait_healthy(url, interval=5.0, timeout=120.0):
    healthy = False
    elapsed = 0.0
    while True:
        try:
            if requests.get(url, timeout=5).ok:
                healthy = True
                break
        except requests.RequestException:
            logger.debug("health check failed", exc_info=True)
        elapsed += interval
        if elapsed >= timeout:
            break
        time.sleep(interval)
    return healthy
"#,
        r#"
import asyncio

import httpx


class Chat:
    def __init__(self, client: httpx.AsyncClient):
        self.client = client

    async def repl(self, lines: asyncio.Queue):
        while True:
            try:
                line = await lines.get()
                if line is None:
                    break
                reply = await self.client.post("/chat", json={"text": line})
                print(reply.text)
            except httpx.HTTPError as exc:
                print(f"error: {exc}")
                await asyncio.sleep(1)
"#,
        r#"
import socket


def ensure_connected(client):
    # Two attempts at most: one retry on a fresh connection.
    tries = 0
    while tries < 2:
        try:
            client.sock.connect((client.host, client.port))
            return
        except socket.error:
            client.reset()
        tries += 1
    raise ConnectionError("cannot connect")
"#,
        r#"
import socket


def free_port(start):
    # A search for a free port: binding a local socket talks to no one.
    for port in range(start, start + 100):
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind(("127.0.0.1", port))
                return port
        except OSError:
            continue
    raise RuntimeError("no free port")
"#,
        r#"
import asyncio
import json
import sys


async def serve_stdio(handlers):
    loop = asyncio.get_running_loop()
    while True:
        try:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line:
                break
            msg = json.loads(line)
            result = await handlers[msg["method"]](msg.get("params", {}))
            print(json.dumps({"id": msg["id"], "result": result}), flush=True)
        except json.JSONDecodeError:
            # One bad line: skip it and read the next request.
            continue
        except Exception:
            log.exception("request failed; reading the next one")
"#,
        r#"
import socket
import subprocess
import time


def start_trace_server(port):
    subprocess.Popen(["trace-server", "--port", str(port)])
    for _ in range(10):
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=0.1)
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("trace server did not come up")
"#,
        r#"
import asyncio
import time

import httpx


async def wait_for_injection_server(port, timeout=10):
    # The server this process just started, on this machine.
    start = time.monotonic()
    while True:
        try:
            async with httpx.AsyncClient() as client:
                response = await client.get(f"http://localhost:{port}/docs", timeout=0.5)
                if response.status_code == 200:
                    return
        except Exception as e:
            if time.monotonic() - start > timeout:
                raise TimeoutError("injection server did not start") from e
            await asyncio.sleep(0.1)
"#,
        r#"
import socket
import time


class AgentSession:
    def connect(self, path):
        while True:
            try:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.connect(path)
                return
            except socket.error:
                time.sleep(2)
"#,
        r#"
import asyncio


class Sender:
    async def send(self, request):
        for attempt in range(self.request_retries):
            try:
                return await asyncio.wait_for(self._call(request), timeout=60.0)
            except FloodWaitError as e:
                # The server says how long to wait.
                if e.seconds <= self.flood_sleep_threshold:
                    await asyncio.sleep(e.seconds)
                    continue
                raise
"#,
        r#"
import asyncio

import aiohttp


async def request(session, method, url, retry=True):
    # One retry at most, for a keep-alive socket the server closed.
    attempts = 2 if retry else 1
    for attempt in range(attempts):
        try:
            async with session.request(method, url) as resp:
                return await resp.json()
        except aiohttp.ServerDisconnectedError:
            if attempt + 1 < attempts:
                await asyncio.sleep(1)
    raise ConnectionError(url)
"#,
        r#"
import asyncio


async def prompt_loop(client):
    loop = asyncio.get_running_loop()
    while True:
        try:
            line = await loop.run_in_executor(None, input, "> ")
            if line == "quit":
                return
            await client.send_command(line)
        except Exception as e:
            print(f"error: {e}")
"#,
        r#"
import asyncio
from urllib3.contrib.anytls import ssl as _tls

# A TLS handshake over memory buffers, through the package's own TLS shim:
# "want read" means feed the engine more bytes, not try a request again.
class TLSSocket:
    def __init__(self, transport, ctx):
        self._transport = transport
        self._incoming = _tls.MemoryBIO()
        self._outgoing = _tls.MemoryBIO()
        self._sslobj = ctx.wrap_bio(self._incoming, self._outgoing)

    async def _flush(self):
        while self._outgoing.pending:
            await self._transport.sendall(self._outgoing.read())

    async def do_handshake(self):
        while True:
            try:
                self._sslobj.do_handshake()
            except _tls.SSLWantReadError:
                await self._flush()
                data = await self._transport.recv(65536)
                if not data:
                    raise _tls.SSLEOFError("EOF during the handshake")
                self._incoming.write(data)
            else:
                await self._flush()
                break
"#,
        r#"
import asyncio

import aiohttp

_DISCONNECT_RETRY_ATTEMPTS = 2

# One retry of a stale keep-alive connection: two attempts in all.
async def post(session, url, body):
    attempts = _DISCONNECT_RETRY_ATTEMPTS
    for attempt in range(attempts):
        if attempt:
            await asyncio.sleep(0.5)
        try:
            async with session.post(url, data=body) as resp:
                return await resp.read()
        except aiohttp.ServerDisconnectedError:
            if attempt + 1 >= attempts:
                raise
"#,
        r#"
import asyncio
import errno


class Listener:
    async def start(self, host):
        loop = asyncio.get_running_loop()
        tries = 5
        while True:
            try:
                self.server = await loop.create_server(self.protocol, host, 0)
                return self.server.sockets[0].getsockname()[1]
            except OSError as err:
                tries -= 1
                # The port may be taken in the other address family.
                if err.errno != errno.EADDRINUSE or not tries:
                    raise
"#,
        r#"
from datetime import UTC, datetime, timedelta

import aiohttp

BASE = "https://dd.example/citypage_weather/{province}/{hour}/"


async def discover_file_url(session, province):
    now = datetime.now(UTC)
    for hours_back in range(3):
        check_time = now - timedelta(hours=hours_back)
        url = BASE.format(province=province, hour=f"{check_time.hour:02d}")
        try:
            response = await session.get(url, timeout=10)
            listing = await response.text()
            if "xml" in listing:
                return url
        except aiohttp.ClientError:
            continue
    return None
"#,
        r#"
import asyncio


class LightConnection:
    async def send_with_retries(self, msg, timeout_secs=1, max_attempts=3):
        attempts = 0
        while attempts < max_attempts:
            event = asyncio.Event()
            self.pending[msg.seq] = event
            attempts += 1
            self.transport.sendto(msg.packed)
            try:
                async with asyncio.timeout(timeout_secs):
                    await event.wait()
                break
            except TimeoutError:
                continue
"#,
        r#"
import socket
from queue import Empty

from jupyter_core.utils import ensure_async


class KernelClient:
    async def wait_for_ready(self):
        while True:
            self.kernel_info()
            try:
                msg = await ensure_async(self.shell_channel.get_msg(timeout=1))
            except Empty:
                pass
            else:
                if msg["msg_type"] == "kernel_info_reply":
                    break


class Packetizer:
    def read_timeout(self):
        while True:
            try:
                x = self.sock.recv(128)
                if len(x) == 0:
                    raise EOFError()
                break
            except socket.timeout:
                pass
            if self.closed:
                raise EOFError()
        return x
"#,
        r#"
import asyncio

class Transaction:
    async def execute(self, request):
        retries = 0
        while retries <= self.retries:
            self.response = asyncio.get_running_loop().create_future()
            self.send(request)
            try:
                return await asyncio.wait_for(self.response, timeout=self.timeout)
            except asyncio.TimeoutError:
                retries += 1
        raise TimeoutError("no response")
"#,
        r#"
import anyio


class Broker:
    async def ping(self, timeout=3):
        sleep_time = (timeout or 10) / 10
        with anyio.move_on_after(timeout) as scope:
            while True:
                if scope.cancel_called:
                    return False
                try:
                    # A liveness probe within its own deadline.
                    await self._connection.ping()
                    return True
                except ConnectionError:
                    pass
                await anyio.sleep(sleep_time)
        return False
"#,
        r#"
import sqlalchemy.exc

async def record(session_factory, rows):
    # One immediate second try after a lost insert race: two attempts in all.
    max_attempts = 2
    for attempt in range(1, max_attempts + 1):
        try:
            async with session_factory() as session:
                await session.execute(insert_rows(rows))
            return
        except sqlalchemy.exc.IntegrityError:
            if attempt < max_attempts:
                continue
            raise
"#,
        r#"
import requests

MAX_REDIRECTS = 10

class Client:
    # Each failure names the next place to try: a redirect, not a retry.
    def connect(self):
        for _ in range(MAX_REDIRECTS):
            try:
                return requests.get(self.url, timeout=5, allow_redirects=False)
            except requests.ConnectionError as exc:
                target = self.redirect_target(exc)
                if target is None:
                    raise
                self.url = target
        raise RuntimeError("too many redirects")
"#,
        r#"
import asyncio
import random

async def fetch_with_retry(client, url):
    for attempt in range(5):
        try:
            return await client.get(url)
        except ConnectionError:
            await asyncio.sleep(random.uniform(0, min(10, 0.1 * 2 ** attempt)))
    raise RuntimeError("gave up")
"#,
        r#"
import asyncio

async def worker(queue):
    while True:
        try:
            item = await queue.get()
            await handle(item)
        except Exception:
            log_failure()
            continue

def first_alive(hosts):
    for i in range(len(hosts)):
        try:
            return ping(hosts[i])
        except OSError:
            continue

def read_eintr(fd, n):
    while True:
        try:
            return os.read(fd, n)
        except InterruptedError:
            continue

def incr(client, key, amount):
    with client.pipeline() as pipe:
        while True:
            try:
                pipe.watch(key)
                value = int(pipe.get(key) or b"0") + amount
                pipe.multi()
                pipe.set(key, value)
                pipe.execute()
                return value
            except redis.WatchError:
                continue

def wait_for(fn, timeout):
    while True:
        try:
            return fn(timeout)
        except OSError as e:
            if e.args[0] != errno.EINTR:
                raise
            continue

def mktemp_name(dir, names):
    for seq in range(100):
        name = next(names)
        try:
            return make_file(dir, name)
        except FileExistsError:
            continue

def parse_all(stack):
    while stack:
        try:
            node = stack.pop()
            visit(node)
            break
        except KeyError:
            continue

async def backoff(op):
    delay = 0.1
    for attempt in range(5):
        try:
            return await op()
        except OSError:
            await asyncio.sleep(delay)
            delay *= 2
"#,
        r#"
import asyncio

async def healthy_majority(check, db, probes, delay):
    allowed = (probes - 1) // 2
    for attempt in range(probes):
        try:
            if not await check(db):
                allowed -= 1
                if allowed < 0:
                    return False
        except ConnectionError:
            allowed -= 1
            if allowed < 0:
                raise
        await asyncio.sleep(delay)
    return True
"#,
        r#"
import pika

MAX_DECLARE_ATTEMPTS = 2

class Broker:
    def declare(self, name):
        attempts = 0
        while True:
            try:
                self.channel().queue_declare(queue=name, durable=True)
                break
            except pika.exceptions.AMQPConnectionError:
                # The cached connection went stale: one more try on a new one.
                self.conn = None
                attempts += 1
                if attempts >= MAX_DECLARE_ATTEMPTS:
                    raise
"#,
        r#"
import asyncio

async def run_to_completion(coro):
    task = asyncio.ensure_future(coro)
    cancelled = None
    while True:
        try:
            value = await asyncio.shield(task)
        except asyncio.CancelledError as err:
            if task.done():
                raise
            cancelled = err
        else:
            break
    if cancelled is not None:
        raise cancelled
    return value
"#,
        r#"
import asyncio
import json
import time

# One request; the loop only waits on for its reply.
async def fetch_one(nc, sub, subject, timeout):
    await nc.publish(subject, json.dumps({"batch": 1}).encode(), sub.inbox)
    start = time.monotonic()
    while True:
        try:
            return await sub.next_msg(timeout=timeout - (time.monotonic() - start))
        except asyncio.TimeoutError:
            if time.monotonic() - start > timeout:
                raise
"#,
        r#"
from myapp.utils import ainput

# Login at the terminal: each new attempt waits for the person to type a
# fresh code, so the person paces the loop.
async def login(client):
    while True:
        code = await ainput("Enter the code you received: ")
        try:
            return await client.post("/login", json={"code": code})
        except ConnectionError as e:
            print(e)
"#,
        r#"
from rich.prompt import Prompt

async def create_block(client, data):
    while True:
        name = Prompt.ask("Name for the new block")
        try:
            return await client.post("/blocks", json={"name": name, "data": data})
        except ConnectionError:
            print("server unreachable; enter the name again")
"#,
        r#"
from rich.prompt import Prompt

async def ask_validated(client, label, default=None):
    while True:
        # The question is the caller's label: still a person answering.
        if default is None:
            value = Prompt.ask(label)
        else:
            value = Prompt.ask(label, default=default)
        try:
            return await client.post("/validate", json={"value": value})
        except ConnectionError:
            print("server unreachable; try again")
"#,
        r#"
import asyncio
import random


class Session:
    async def _handle_conflict(self, error, attempt):
        if attempt >= 5:
            raise error
        delay = min(2.0, 0.05 * 2 ** attempt)
        await asyncio.sleep(delay + random.uniform(0, delay))

    async def add_items(self, items):
        attempt = 0
        while True:
            try:
                return await self._client.save_state(items)
            except ConnectionError as error:
                attempt += 1
                await self._handle_conflict(error, attempt)
"#,
        r#"
import time
from OpenSSL import SSL

def safe_call(call, *args):
    start = time.time()
    while True:
        try:
            return call(*args)
        except SSL.WantReadError:
            time.sleep(0.01)
        except SSL.WantWriteError:
            time.sleep(0.01)
        except SSL.SysCallError as e:
            raise OSError(e.args[0])
        if time.time() - start > 30:
            raise TimeoutError("timed out")
"#,
        r#"
import errno
import ssl
from eventlet.hubs import trampoline

SOCKET_BLOCKING = {errno.EAGAIN, errno.EWOULDBLOCK}

def send_all(sock, data):
    while True:
        try:
            return sock.send(data)
        except OSError as e:
            if e.errno == errno.ENOTCONN or e.errno not in SOCKET_BLOCKING:
                raise
        trampoline(sock, write=True, timeout=sock.gettimeout())

def read_tls(sock, n):
    while True:
        try:
            return sock.recv(n)
        except ssl.SSLError as exc:
            if exc.errno == ssl.SSL_ERROR_WANT_READ:
                trampoline(sock, read=True, timeout=sock.gettimeout())
            elif exc.errno == ssl.SSL_ERROR_WANT_WRITE:
                trampoline(sock, write=True, timeout=sock.gettimeout())
            else:
                raise

def read_green(sock, n):
    while True:
        try:
            return sock.recv(n)
        except OSError:
            trampoline(sock, read=True, timeout=sock.gettimeout())
"#,
        r#"
import asyncio

from .util import retry_backoff


class Client:
    async def call(self, cmd):
        for attempt in range(5):
            try:
                return await self._send(cmd)
            except ConnectionError:
                await self._on_fail(attempt)

    async def _on_fail(self, attempt):
        self._log(attempt)
        await self._slow_down(attempt)

    async def _slow_down(self, attempt):
        delay = retry_backoff(attempt, self._min_delay, self._max_delay)
        await asyncio.sleep(delay)


class Other:
    async def call(self, cmd):
        for attempt in range(5):
            try:
                return await self._send(cmd)
            except ConnectionError:
                await self._wait_before(attempt)

    async def _wait_before(self, attempt):
        await asyncio.sleep(0.1 * 2**attempt)
"#,
        r#"
import socket


class Listener:
    def __init__(self, port):
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            self._socket.bind(("127.0.0.1", port))
            self._socket.listen(1)
            self._socket.settimeout(0.25)
        except OSError:
            self._socket.close()
            raise

    def accept(self):
        while True:
            try:
                connection, _ = self._socket.accept()
            except TimeoutError:
                continue
            connection.settimeout(None)
            return connection

    def close(self):
        self._socket.close()
"#,
        r#"
import multio


class Gateway:
    def __init__(self):
        self._stop = multio.Event()

    async def heartbeat(self, interval):
        while True:
            try:
                async with multio.asynclib.timeout_after(interval):
                    await self._stop.wait()
            except multio.asynclib.TaskTimeout:
                pass
            else:
                break
            try:
                await self.send_heartbeat()
            except (ConnectionError, OSError):
                return
"#,
        r#"
import asyncio
import sys
import time

import aiohttp


async def wait_until_ready(url, timeout_s):
    deadline = time.perf_counter() + timeout_s
    async with aiohttp.ClientSession() as http:
        while True:
            try:
                async with http.get(url) as resp:
                    if resp.status == 200:
                        return
            except Exception:
                pass
            if time.perf_counter() >= deadline:
                print(f"server not answering at {url}", file=sys.stderr)
                sys.exit(1)
            await asyncio.sleep(2.0)
"#,
        r#"
from .listener import create_tcp_forward_listener

DISPLAY_START = 10
MAX_DISPLAYS = 1000
BASE_PORT = 6000


async def create_display_listener(conn, loop, host):
    for dpynum in range(DISPLAY_START, MAX_DISPLAYS):
        try:
            listener = await create_tcp_forward_listener(
                conn, loop, conn.create_connection, host, BASE_PORT + dpynum
            )
        except OSError:
            continue
        return listener, f"{host}:{dpynum}"
    return None
"#,
        r#"
import logging
import time

logger = logging.getLogger(__name__)


class HiveClient:
    def __init__(self, connect):
        self._connect = connect
        self.max_retries = 2

    def query(self, sql):
        retry_count = 0
        while retry_count < self.max_retries:
            try:
                return self._connect().execute(sql)
            except ConnectionError as e:
                retry_count += 1
                logger.warning("attempt %d failed: %s", retry_count, e)
                time.sleep(1)
        raise RuntimeError("query failed")
"#,
        r#"
import requests


def worker(task_queue, results, session: requests.Session):
    while True:
        try:
            task = task_queue.get()
            if task is None:
                break
            results.put(session.get(task, timeout=10).text)
        except requests.RequestException:
            results.put(None)
"#,
        r#"
import httpx


class Runner:
    def __init__(self, work_queue, client: httpx.AsyncClient):
        self.work_queue = work_queue
        self.client = client

    async def run_batch(self, stop):
        for _ in range(4):
            if stop.is_set():
                break
            item = await self.work_queue.get_next_work()
            if not item:
                break
            try:
                reply = await self.client.post("/run", json=item)
                if reply.status_code != 200:
                    await self.work_queue.fail_work(item["id"])
                    return
            except httpx.HTTPError:
                await self.work_queue.fail_work(item["id"])
"#,
        r#"
import asyncio

import httpx


async def pause(delay):
    await asyncio.sleep(delay)


async def fetch(client: httpx.AsyncClient):
    delay = 0.5
    for attempt in range(5):
        try:
            return await client.get("/status")
        except httpx.HTTPError:
            await pause(delay)
            delay *= 2
"#,
        r#"
# Two attempts, counted down: one retry.
import logging

log = logging.getLogger(__name__)


async def ready(container):
    attempts = 2
    while attempts > 0:
        try:
            await container.read()
            return True
        except ConnectionError:
            log.warning("readiness check failed, trying again")
            attempts -= 1
    return False
"#,
        r#"
# Each round sends a shorter trajectory: the request changes.
class ContextWindowExceededError(Exception):
    pass


class ReAct:
    async def call_truncating(self, module, trajectory, **inputs):
        while True:
            try:
                return await module(**inputs, trajectory=self.format(trajectory))
            except ContextWindowExceededError:
                trajectory = self.truncate(trajectory)
"#,
        r#"
# A compare-and-swap: a conflict means another writer won; read again.
class KeyWrongLastSequenceError(Exception):
    pass


async def claim(kv, key, update, max_retries=5):
    for _ in range(max_retries):
        entry = await kv.get(key)
        try:
            return await kv.update(key, update(entry.value), last=entry.revision)
        except KeyWrongLastSequenceError:
            continue
    raise RuntimeError("contended")
"#,
        r#"
# A heartbeat: success goes round again; it stops when the session ends.
import asyncio

import httpx


class Bot:
    async def heartbeat_loop(self, url):
        while True:
            try:
                await asyncio.sleep(300)
                if not self._session_token:
                    break
                async with httpx.AsyncClient(timeout=5) as client:
                    await client.post(url, json={"session_token": self._session_token})
            except asyncio.CancelledError:
                break
            except Exception:
                pass
"#,
        r#"
# A consumer: an empty queue means "wait for the next query", no retry.
import asyncio


async def process(queue, conn):
    empty = True
    while True:
        try:
            if empty:
                query = await queue.get()
                empty = False
            else:
                query = queue.get_nowait()
            if query is None:
                break
            await conn.execute(query)
        except asyncio.QueueEmpty:
            empty = True
            await conn.commit()
            continue
"#,
        r#"
import asyncio
import sys

async def wait_for_activation(client, node):
    # Polls the controller until an admin activates this node.
    while True:
        try:
            resp = await client.heartbeat(node.node_id, node.auth_token)
            if resp.status == "ACTIVE":
                return
            if resp.status == "REVOKED":
                sys.exit(0)
        except ConnectionError as exc:
            print("could not reach controller", exc)
        await asyncio.sleep(10)
"#,
        r#"
import asyncio

import httpx

async def wait_for_job(url, max_retries=50):
    client = httpx.AsyncClient(timeout=10)
    retry_count = 0
    # Polls the job until it ends, at most `max_retries` times.
    while retry_count < max_retries:
        retry_count += 1
        try:
            resp = await client.get(url)
            status = resp.json()["data"]["task_status"]
            if status == "success":
                return resp.json()["data"]
            if status in ("failure", "canceled"):
                return None
        except ConnectionError as e:
            print("poll failed", e)
        await asyncio.sleep(2)
"#,
        r#"
class RunStateConflict(Exception):
    pass

async def update_run(store, run_id, change):
    for _ in range(5):
        record = await store.load(run_id)
        try:
            # Compare-and-swap: another writer got there first, read again.
            return await store.save(run_id, change(record), expected=record.version)
        except RunStateConflict:
            continue
    raise RuntimeError("too many concurrent updates")
"#,
        r#"
from aiohttp import web

async def start_callback_server(app, port):
    runner = web.AppRunner(app)
    await runner.setup()
    # A search for a free port: binding talks to no one.
    for i in range(5):
        try:
            site = web.TCPSite(runner, "localhost", port)
            await site.start()
            return port
        except OSError:
            port += 1
    raise RuntimeError("no free port")
"#,
        r#"
from .errors import MediaNotFoundError
from .streams import get_stream_details


async def preload_next_item(queue, cur_index):
    idx = 0
    while True:
        next_index = queue.next_index(cur_index + idx)
        if next_index is None:
            raise LookupError("no more tracks left")
        item = queue.get_item(next_index)
        try:
            item.stream = await get_stream_details(queue_item=item)
            break
        except MediaNotFoundError:
            idx += 1
    return item
"#,
        r#"
import httpx
from rich.console import Console

console = Console()


async def chat(client: httpx.AsyncClient, url):
    while True:
        try:
            question = console.input("[bold]You:[/bold] ").strip()
            if question == "/exit":
                break
            reply = await client.post(url, json={"q": question})
            console.print(reply.json()["answer"])
        except httpx.HTTPError as e:
            console.print(f"error: {e}")
"#,
        r#"
import asyncio

import aiohttp


class KernelBox:
    async def start(self, session: aiohttp.ClientSession):
        self.proc = await asyncio.create_subprocess_exec("kernel-gateway", "--port", str(self.port))
        while True:
            try:
                response = await session.get(self.kernel_url)
                if response.status == 200:
                    break
            except aiohttp.ClientConnectorError:
                pass
            await asyncio.sleep(1)
"#,
        r#"
import subprocess
import sys
import time

import httpx


def run_demo(url, env):
    hub = subprocess.Popen([sys.executable, "-m", "hub", "serve"], env=env)
    try:
        for _ in range(100):
            try:
                if httpx.get(url + "/health", timeout=0.5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        else:
            raise RuntimeError("hub did not start")
    finally:
        hub.terminate()
"#,
        r#"
import psycopg2


def append(pg, cur, record_id, digest_of):
    for _ in range(5):
        cur.execute("SELECT hash FROM ledger ORDER BY created_at DESC LIMIT 1")
        row = cur.fetchone()
        digest = digest_of(row[0] if row else None)
        try:
            cur.execute("INSERT INTO ledger (id, prev_hash, hash) VALUES (%s, %s, %s)", (record_id, row, digest))
            pg.commit()
            return digest
        except psycopg2.IntegrityError:
            pg.rollback()
    raise RuntimeError("ledger append could not converge")
"#,
        r#"
import asyncio


async def delete_mirrored(get_session, bot, message_id):
    for attempt in range(5):
        try:
            async with get_session() as session:
                rows = await session.scalars(message_id)
                for row in rows:
                    await bot.delete_message(message_id=row.dcid)
                    await session.delete(row)
                await session.commit()
            break
        except (UnboundLocalError, TypeError, NameError):
            # Waits for local state (the row) to be written; no service failed.
            await asyncio.sleep(5)
"#,
        r#"
import time

import requests


def register(protocol, port, param):
    # The backend runs on this machine: no fleet retries against it.
    url = f"{protocol}://localhost:{port}/app/service/register"
    while True:
        try:
            res = requests.post(url, json=param, timeout=10)
            res.raise_for_status()
            return
        except Exception:
            time.sleep(10)
"#,
        r#"
import requests

TEMPLATE = "https://download.example.org/whl/nightly/cu{}/torch/"


def find_torch_page(cuda):
    for c in range(cuda, max(-1, cuda - 15), -1):
        # Try the nightly builds of each CUDA version in turn.
        url = TEMPLATE.format(c)
        try:
            if requests.get(url, timeout=10).ok:
                return url
        except Exception:
            continue
    return None
"#,
        r#"
import httpx


class FailoverClient:
    async def dispatch(self, method, url, **kwargs):
        tried = set()
        last_exc = None
        for attempt in range(self.max_attempts):
            chosen = await self.selector.pick_next(tried)
            if chosen is None:
                break
            tried.add(chosen.upstream_id)
            try:
                return await self.send(method, url, upstream=chosen.upstream_id, **kwargs)
            except (httpx.ConnectError, httpx.TimeoutException) as exc:
                last_exc = exc
                continue
        raise RuntimeError("every upstream failed") from last_exc
"#,
        r#"
from redis.exceptions import ConnectionError


class ShardClient:
    async def set(self, key, value):
        client = None
        tried = []
        while True:
            try:
                if client is None:
                    client, index = await self.get_client(write=True, tried=tried)
                return await client.set(key, value)
            except ConnectionError:
                if len(tried) < len(self.servers):
                    tried.append(index)
                    client = None
                    continue
                raise
"#,
        r#"
import asyncio

from .ids import new_compact_id
from .storage import MetadataAlreadyExistsError


class AgencyService:
    async def create(self, config, requested_id=None):
        for _ in range(10):
            agency_id = requested_id or new_compact_id("a")
            workspace = await asyncio.to_thread(self.workspace, agency_id)
            try:
                await asyncio.to_thread(
                    self.storage.create_text_absent_sync,
                    path=workspace.home / "agency.json",
                    content=config.model_dump_json(indent=2),
                )
            except MetadataAlreadyExistsError as error:
                if requested_id:
                    raise ValueError(f"agency {agency_id!r} already exists") from error
                continue
            break
        else:
            raise RuntimeError("could not allocate an unused agency id")
        return agency_id
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(RetryWithoutBackoff);
}
