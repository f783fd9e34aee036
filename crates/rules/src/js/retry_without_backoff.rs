//! JS024: retry loops (and recursive retries) with no delay or a constant
//! delay between attempts.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::{calls_in_block, exprs_under};
use unsnarl_model::*;

pub struct RetryWithoutBackoff;

pub static META: RuleMeta = RuleMeta {
    id: "JS024",
    name: "retry-without-jittered-backoff",
    category: Category::RetryStorm,
    severity: Severity::High,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "A retry loop (`for`/`while` with `try`/`catch` around an await) or a recursive retry in a `catch` tries again immediately or after a constant delay, with no backoff or jitter.",
    docs: r#"
A loop whose body awaits an operation in a `try`, leaves the loop when it
succeeds, and goes around again from the `catch`; or an async function that
calls itself again from its `catch`. Reported when nothing waits between
attempts (at the loop) or when the wait is a constant with no jitter (at the
sleep). A wait is `setTimeout` in a promise, `timers/promises` (also an awaited
`timers.setTimeout(ms, ..)` of one the code loads itself), a worker's
`Atomics.wait(view, i, v, ms)` with a timeout, or a
helper named for one (`sleep`, `delay`, `pause`, `wait`, `promiseWait`). A
delay the code changes between attempts so that it grows or varies (`t
*= 2`, also inside a comma expression; `delay = Math.min(delay * f,
max)`; `wait += Math.random() * base`) is a backoff, not a constant. A `catch` that can call again only once is not a retry storm: it
sets a flag its condition tests, passes a constant for a parameter its
condition tests (`if (!retried) return put(key, true)`), or clears the
state that guards the `try` (`cache.dropToken()` under `if
(cache.hasToken())`) so that the next call takes the other path. Nor is
a `catch` that moves the `try`'s input on (`cur = path.dirname(cur)`):
each round tries something new, as a search does; or a `try` that only
waits for an emitter's event (`await once(child, "exit")`): listening
again sends nothing. Nor is a
loop that takes a new item off a queue each time round (`const job =
queue.shift()`) and works on it in the `try`: a failure settles that item,
the next round works on another. The same goes for a loop that hands an
iterator to a helper each round (`const host = getNextHost(iterator,
tried)`, `await this.borrowConnection(contactPointsIterator)`): a
failover that moves to the next host, which ends when the helper runs
out of them, and for a function that calls itself with the next
candidate: `i + 1` for a parameter it indexes with (`transports[i]`), or
the rest of a list parameter (`const [, ...rest] = candidates`,
`candidates.slice(1)`).

## Why

When the dependency fails because it is overloaded, immediate retries
multiply the load exactly when it has the least capacity: every client turns
one request into five within milliseconds, and the outage feeds itself.
Constant delays keep clients in lockstep, so the retries arrive in waves.

## Example

```javascript
async function send(payload) {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      return await fetch("https://hooks.example/in", { method: "POST", body: payload });
    } catch (err) {
      console.warn("retrying", err);
    }
  }
  throw new Error("gave up");
}
```

## Fix

Exponential backoff with full jitter, capped, and only for retryable
errors.

```javascript
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function send(payload) {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      return await fetch("https://hooks.example/in", { method: "POST", body: payload });
    } catch (err) {
      await sleep(Math.random() * Math.min(30_000, 200 * 2 ** attempt));
    }
  }
  throw new Error("gave up");
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for RetryWithoutBackoff {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for f in cx.model.function_ids() {
            if common::in_test(cx, f) {
                continue;
            }
            for s in common::stmts_of(cx, f) {
                let body = match &cx.stmt(s).kind {
                    StmtKind::While { body, .. } | StmtKind::Loop { body } => body,
                    _ => continue,
                };
                if !is_retry_loop(cx, body) {
                    continue;
                }
                self.judge_delays(cx, f, cx.stmt(s).span, body, "this loop retries", out);
            }
            self.check_recursive(cx, f, out);
        }
    }
}

impl RetryWithoutBackoff {
    /// Reports a retry region with no delay (at `span`) or with a constant
    /// delay (at the delay).
    fn judge_delays(
        &self,
        cx: &FileCx,
        f: FuncId,
        span: Span,
        region: &Block,
        what: &str,
        out: &mut Vec<Finding>,
    ) {
        let delays: Vec<(ExprId, Option<ExprId>)> = calls_in_block(cx.model, region)
            .into_iter()
            .filter_map(|e| common::delay_of(cx, e).map(|d| (e, d)))
            .filter(|(e, _)| !is_inner_timer(cx, region, *e))
            // A wait is awaited (`await sleep(ms)`); a timer handed to an
            // option (`AbortSignal.timeout(ms)`) bounds the attempt instead.
            .filter(|(e, _)| cx.is_awaited(*e) || cx.is_discarded(*e))
            .collect();
        let other_wait = calls_in_block(cx.model, region).into_iter().any(|e| {
            let c = cx.call(e).unwrap();
            let n = c.name.to_ascii_lowercase();
            n.contains("backoff")
                || n.contains("jitter")
                || n.contains("retryafter")
                || n == "waitfor"
                || (cx.is_awaited(e) && common::delay_of(cx, e).is_none() && awaits_a_delay(cx, c))
        });
        if delays.is_empty() {
            if other_wait {
                return;
            }
            out.push(cx.finding(
                &META,
                span,
                format!("{what} the failed operation immediately, with no wait between attempts: when the dependency is struggling, every caller hammers it at full speed and keeps it down"),
                "wait between attempts with exponential backoff and full jitter (`Math.random() * Math.min(cap, base * 2 ** attempt)`), and retry only retryable errors",
            ));
            return;
        }
        for (e, d) in delays {
            let Some(d) = d else { continue };
            // The names the delay is computed from (`t`, or `currentDelay`
            // in `Math.min(currentDelay, maxDelay)`).
            let resolved = resolve_local(cx, f, d);
            let names: Vec<String> = unsnarl_model::walk::exprs_under(cx.model, d)
                .into_iter()
                .chain(unsnarl_model::walk::exprs_under(cx.model, resolved))
                .filter_map(|x| cx.model.name_of(x).map(str::to_owned))
                .collect();
            let d = resolved;
            if common::has_jitter(cx, d)
                || common::grows(cx, d)
                || other_wait
                || names.iter().any(|n| reassigned_to_vary(cx, f, n))
            {
                continue;
            }
            out.push(cx.finding(
                &META,
                cx.expr(e).span,
                format!("{what} after a constant delay (`{}`): every client retries in lockstep, so retries arrive in synchronized waves that keep an overloaded dependency down", cx.snippet(cx.expr(d).span)),
                "grow the delay exponentially and add full jitter (`Math.random() * Math.min(cap, base * 2 ** attempt)`)",
            ));
        }
    }

    /// `catch (e) { ...; return self(...) }` in an async function.
    fn check_recursive(&self, cx: &FileCx, f: FuncId, out: &mut Vec<Finding>) {
        let func = cx.func(f);
        if !func.is_async || func.name.is_empty() {
            return;
        }
        for s in common::stmts_of(cx, f) {
            let StmtKind::Try { body, handlers, .. } = &cx.stmt(s).kind else {
                continue;
            };
            if crate::util::awaits_in_block(cx.model, body).is_empty()
                || only_waits_for_events(cx, body)
            {
                continue;
            }
            for h in handlers {
                let retry = calls_in_block(cx.model, &h.body).into_iter().find(|&e| {
                    let c = cx.call(e).unwrap();
                    c.target.as_deref() == Some(func.qualname.as_str())
                        || (c.receiver.is_none() && c.name == func.name)
                        || (func.class.is_some()
                            && c.name == func.name
                            && c.receiver
                                .is_some_and(|r| cx.model.name_of(r) == Some("this")))
                });
                let Some(retry) = retry else { continue };
                if is_one_shot_fallback(cx, &h.body)
                    || retries_once_by_argument(cx, f, &h.body, retry)
                    || moves_to_next_candidate(cx, f, retry)
                    || invalidates_its_guard(cx, s, &h.body, retry)
                {
                    continue;
                }
                self.judge_delays(
                    cx,
                    f,
                    cx.expr(retry).span,
                    &h.body,
                    "this `catch` retries",
                    out,
                );
            }
        }
    }
}

/// An awaited function of this file that waits itself (p-retry's
/// `onAttemptFailure` computes the backoff and awaits a `setTimeout`):
/// the delay policy lives there.
fn awaits_a_delay(cx: &FileCx, c: &Call) -> bool {
    common::local_callee_makes(cx, c, |e| common::delay_of(cx, e).is_some())
}

/// A handler that sets a flag its own condition tests before calling
/// again (`if (err.code !== "E404" || this.full) throw err; this.full =
/// true; return this.load()`): the second failure takes the other branch,
/// so this is one fallback, not a retry loop. Only constants count
/// (`= true`, `= null`): a counter (`this.tries++`) is a retry budget.
fn is_one_shot_fallback(cx: &FileCx, handler: &Block) -> bool {
    let stmts = unsnarl_model::walk::stmts_in_block(cx.model, handler);
    let flipped: Vec<String> = stmts
        .iter()
        .filter_map(|&s| match &cx.stmt(s).kind {
            StmtKind::Assign {
                targets,
                value: Some(v),
                op: AssignOp::Plain,
            } if cx.model.literal(*v).is_some() => Some(targets),
            _ => None,
        })
        .flatten()
        .filter_map(|&t| cx.model.dotted(t))
        .collect();
    !flipped.is_empty()
        && stmts.iter().any(|&s| match &cx.stmt(s).kind {
            StmtKind::If { cond, .. } => exprs_under(cx.model, *cond)
                .into_iter()
                .any(|x| cx.model.dotted(x).is_some_and(|d| flipped.contains(&d))),
            _ => false,
        })
}

/// The recursive call passes a constant for a parameter the handler's
/// condition tests (`if (!retried && ...) return put(key, true)`): the
/// second call fails into the other branch, so there is one retry at most.
fn retries_once_by_argument(cx: &FileCx, f: FuncId, handler: &Block, retry: ExprId) -> bool {
    let Some(c) = cx.call(retry) else {
        return false;
    };
    let params = &cx.func(f).params;
    let fixed: Vec<&str> = c
        .args
        .iter()
        .enumerate()
        .filter(|(_, a)| !a.spread && cx.model.literal(a.value).is_some())
        .filter_map(|(i, _)| params.get(i).map(|p| p.name.as_str()))
        .collect();
    !fixed.is_empty()
        && unsnarl_model::walk::stmts_in_block(cx.model, handler)
            .into_iter()
            .any(|s| match &cx.stmt(s).kind {
                StmtKind::If { cond, .. } => exprs_under(cx.model, *cond)
                    .into_iter()
                    .any(|x| cx.model.name_of(x).is_some_and(|n| fixed.contains(&n))),
                _ => false,
            })
}

/// The recursive call moves on to the next candidate, as a failover or a
/// search does: it passes `i + 1` for a parameter the function indexes
/// with (`transports[i]`), or the rest of a list parameter (`const [,
/// ...rest] = candidates`, `candidates.slice(1)`). Each call tries
/// something new, and the list running out ends it.
fn moves_to_next_candidate(cx: &FileCx, f: FuncId, retry: ExprId) -> bool {
    let Some(c) = cx.call(retry) else {
        return false;
    };
    let params = &cx.func(f).params;
    let exprs: Vec<ExprId> = common::exprs_of(cx, f).collect();
    let indexes_with = |p: &str| {
        exprs.iter().any(|&e| {
            matches!(cx.expr(e).kind, ExprKind::Index { index, .. }
                if cx.model.name_of(cx.model.strip(index)) == Some(p))
        })
    };
    // `p.slice(1)`.
    let tail_of = |v: ExprId, p: &str| {
        cx.call(v).is_some_and(|k| {
            k.name == "slice"
                && k.receiver
                    .is_some_and(|r| cx.model.name_of(cx.model.strip(r)) == Some(p))
                && k.positional(0)
                    .is_some_and(|a| matches!(cx.model.literal(a), Some(Lit::Int(n)) if *n > 0))
        })
    };
    c.args.iter().zip(params).any(|(a, p)| {
        let (v, p) = (cx.model.strip(a.value), p.name.as_str());
        match &cx.expr(v).kind {
            ExprKind::Binary {
                op: BinOp::Add,
                left,
                right,
            } => {
                cx.model.name_of(*left) == Some(p)
                    && matches!(cx.model.literal(*right), Some(Lit::Int(1)))
                    && indexes_with(p)
            }
            ExprKind::Name { id, .. } => {
                id != p
                    && common::stmts_of(cx, f).any(|s| {
                        matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(val), .. }
                            if (cx.model.name_of(*val) == Some(p)
                                && targets.iter().any(|&t| {
                                    cx.source(cx.expr(t).span).contains(&format!("...{id}"))
                                }))
                                || (tail_of(*val, p)
                                    && targets.iter().any(|&t| cx.model.name_of(t) == Some(id.as_str()))))
                    })
            }
            _ => tail_of(v, p),
        }
    })
}

/// The `try` runs only under a condition on some state (`if
/// (this.cache.hasToken()) { try { ... } catch { this.cache.dropToken();
/// return this.authenticate() } }`), and the handler clears that state
/// before calling again: the second call takes the other path, so the
/// failure is retried once, after a refresh.
fn invalidates_its_guard(cx: &FileCx, try_stmt: StmtId, handler: &Block, retry: ExprId) -> bool {
    let guards: Vec<String> = cx
        .tree
        .stmt_ancestors(try_stmt)
        .filter_map(|a| match &cx.stmt(a).kind {
            StmtKind::If { cond, then, .. } if then.contains(&try_stmt) => Some(*cond),
            _ => None,
        })
        .flat_map(|cond| exprs_under(cx.model, cond))
        // `cache.hasToken()`, or a getter read `cache.hasToken`: the
        // object whose state guards the `try`.
        .filter_map(|x| match &cx.expr(x).kind {
            ExprKind::Call(c) => c.receiver,
            ExprKind::Attr { obj, .. } => Some(*obj),
            _ => None,
        })
        .filter_map(|r| cx.model.dotted(r))
        .collect();
    if guards.is_empty() {
        return false;
    }
    let at = cx.expr(retry).span.start;
    calls_in_block(cx.model, handler).into_iter().any(|e| {
        let c = cx.call(e).unwrap();
        cx.expr(e).span.end <= at
            && [
                "drop",
                "clear",
                "delete",
                "invalidate",
                "reset",
                "remove",
                "evict",
            ]
            .iter()
            .any(|p| c.name.to_ascii_lowercase().starts_with(p))
            && c.receiver
                .and_then(|r| cx.model.dotted(r))
                .is_some_and(|d| guards.contains(&d))
    })
}

/// A timer inside a nested callback of the region (a timeout for the
/// operation, not a wait between attempts) — only direct delays count.
fn is_inner_timer(cx: &FileCx, _region: &Block, e: ExprId) -> bool {
    // `setTimeout(cb, ms)` used to time out the attempt rather than wait.
    let c = cx.call(e).unwrap();
    c.target.as_deref() == Some("setTimeout") && !cx.is_awaited(e) && {
        let inside_promise = cx
            .tree
            .expr_ancestors(e)
            .any(|a| cx.call(a).is_some_and(|k| k.is_new));
        !inside_promise
    }
}

/// The delay variable `name` is changed between attempts in a way that
/// makes it grow or vary (`t *= 2`, `delay <<= 1`, `waitTime +=
/// Math.random() * delay`, `delay = Math.min(delay * factor, max)`), in a
/// statement or inside an expression (`await sleep(t), t *= 2`).
fn reassigned_to_vary(cx: &FileCx, f: FuncId, name: &str) -> bool {
    let varies = |op: AssignOp, value: ExprId| match op {
        AssignOp::Augmented(BinOp::Mul | BinOp::Bit) => true,
        AssignOp::Augmented(_) => common::has_jitter(cx, value) || common::grows(cx, value),
        AssignOp::Plain => common::has_jitter(cx, value) || common::grows(cx, value),
        AssignOp::Declare { .. } => false,
    };
    let in_stmts = common::stmts_of(cx, f).into_iter().any(|s| {
        matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(v), op }
            if targets.iter().any(|&t| cx.model.name_of(t) == Some(name)) && varies(*op, *v))
    });
    in_stmts
        || common::exprs_of(cx, f).any(|e| {
            matches!(&cx.expr(e).kind, ExprKind::AssignExpr { target, value, op }
                if cx.model.name_of(*target) == Some(name) && varies(*op, *value))
        })
}

/// A local's initializer when the delay is a local name.
fn resolve_local(cx: &FileCx, f: FuncId, d: ExprId) -> ExprId {
    let Some(name) = cx.model.name_of(d) else {
        return d;
    };
    for s in common::stmts_of(cx, f) {
        if let StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } = &cx.stmt(s).kind
            && targets.iter().any(|&t| cx.model.name_of(t) == Some(name))
        {
            return *v;
        }
    }
    d
}

/// A loop whose body awaits in a `try` that leaves the loop on success
/// (`return`/`break`), with a `catch` that lets the loop go around.
fn is_retry_loop(cx: &FileCx, body: &Block) -> bool {
    body.iter().any(|&s| {
        let StmtKind::Try {
            body: tb, handlers, ..
        } = &cx.stmt(s).kind
        else {
            return false;
        };
        if handlers.is_empty() || crate::util::awaits_in_block(cx.model, tb).is_empty() {
            return false;
        }
        let exits = exits_on_success(cx, tb);
        let handler_continues = handlers.iter().all(|h| {
            !crate::util::always_raises(cx.model, &h.body) && !ends_with_return(cx, &h.body)
        });
        exits
            && handler_continues
            && !only_waits_for_events(cx, tb)
            && !is_traversal(cx, body, tb, handlers)
            && !takes_an_item(cx, body, tb, handlers)
            && !handlers.iter().any(|h| follows_the_error(cx, tb, h))
    })
}

/// The `catch` points the next attempt somewhere new, read from the error
/// (`const address = err.message.split(" ")[2]; client = nodeAt(address)`):
/// a redirect the failure asked for, not a retry of the same call.
fn follows_the_error(cx: &FileCx, try_body: &Block, h: &Handler) -> bool {
    let Some(err) = h.name.as_deref() else {
        return false;
    };
    let mut derived: Vec<&str> = vec![err];
    let mut assigned: Vec<&str> = Vec::new();
    for (targets, v) in value_assignments(cx, &h.body) {
        let reads_error = exprs_under(cx.model, v)
            .into_iter()
            .any(|x| cx.model.name_of(x).is_some_and(|n| derived.contains(&n)));
        if reads_error {
            for n in targets.iter().filter_map(|&t| cx.model.name_of(t)) {
                derived.push(n);
                assigned.push(n);
            }
        }
    }
    // Or the handler tests for a redirect reply (`MOVED`, `ASK`, "not the
    // leader") and looks the target up again (`node = await
    // topology.nodeFor(key)`): the server said where to go, and following
    // it at once is the protocol.
    if redirect_reply(cx, &h.body) {
        for s in unsnarl_model::walk::stmts_in_block(cx.model, &h.body) {
            if let StmtKind::Assign {
                targets,
                value: Some(_),
                op: AssignOp::Plain,
            } = &cx.stmt(s).kind
            {
                assigned.extend(targets.iter().filter_map(|&t| cx.model.name_of(t)));
            }
        }
    }
    !assigned.is_empty()
        && unsnarl_model::walk::exprs_in_block(cx.model, try_body)
            .into_iter()
            .any(|x| cx.model.name_of(x).is_some_and(|n| assigned.contains(&n)))
}

/// The `x = v` and `let x = v` statements of a block (nested ones too), as
/// their targets and value.
fn value_assignments<'a>(
    cx: &'a FileCx,
    b: &Block,
) -> impl Iterator<Item = (&'a [ExprId], ExprId)> + 'a {
    unsnarl_model::walk::stmts_in_block(cx.model, b)
        .into_iter()
        .filter_map(|s| match &cx.stmt(s).kind {
            StmtKind::Assign {
                targets,
                value: Some(v),
                op: AssignOp::Plain | AssignOp::Declare { .. },
            } => Some((targets.as_slice(), *v)),
            _ => None,
        })
}

/// The handler compares the error with a redirect reply of a clustered
/// store: Redis Cluster's `MOVED`/`ASK`, or a "not the leader" answer.
fn redirect_reply(cx: &FileCx, handler: &Block) -> bool {
    const REDIRECTS: &[&str] = &["MOVED", "ASK", "NOT_LEADER", "NotLeader", "not leader"];
    unsnarl_model::walk::exprs_in_block(cx.model, handler)
        .into_iter()
        .any(|x| {
            matches!(&cx.expr(x).kind, ExprKind::Literal(Lit::Str(v))
                if REDIRECTS.iter().any(|r| v.trim() == *r || v.starts_with(&format!("{r} "))
                    || (r.len() > 3 && v.contains(r))))
        })
}

/// The `try` body leaves the loop once it got through: a `return`/`break`
/// among its own statements (not only under a condition).
fn exits_on_success(cx: &FileCx, b: &Block) -> bool {
    b.iter()
        .any(|&s| matches!(cx.stmt(s).kind, StmtKind::Return(_) | StmtKind::Break))
}

/// Each iteration works on something new (`dir = path.dirname(dir)`,
/// `url = next`): a search, not a retry of the same operation.
fn is_traversal(cx: &FileCx, loop_body: &Block, try_body: &Block, handlers: &[Handler]) -> bool {
    let used: Vec<String> = unsnarl_model::walk::exprs_in_block(cx.model, try_body)
        .into_iter()
        .filter_map(|x| cx.model.name_of(x).map(str::to_string))
        .collect();
    collect(cx, loop_body).into_iter().any(|s| {
        let in_handler = handlers.iter().any(|h| common::block_contains(cx, &h.body, s));
        matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, op: AssignOp::Plain, .. }
            if !in_handler && targets.iter().any(|&t| cx.model.name_of(t).is_some_and(|n| used.iter().any(|u| u == n))))
    }) || handlers.iter().any(|h| steps_to_next(cx, &h.body, &used))
}

/// Everything the `try` awaits is an event of an emitter (`await
/// once(child, "exit")`), which rejects when the emitter reports an
/// `error`: listening again sends nothing to anyone, it waits for the next
/// event.
fn only_waits_for_events(cx: &FileCx, try_body: &Block) -> bool {
    let mut any = false;
    for x in unsnarl_model::walk::exprs_in_block(cx.model, try_body) {
        let ExprKind::Await(inner) = cx.expr(x).kind else {
            continue;
        };
        let waits_for_event = cx
            .call(cx.model.strip(inner))
            .is_some_and(|c| matches!(c.target.as_deref(), Some("events.once" | "events.on")));
        if !waits_for_event {
            return false;
        }
        any = true;
    }
    any
}

/// The `catch` moves an input of the `try` on by a call over itself (`const
/// up = path.dirname(cur); if (up === cur) throw e; cur = up`): the next
/// round tries a different input (the parent directory), as a search does.
fn steps_to_next(cx: &FileCx, handler: &Block, used: &[String]) -> bool {
    // Names the handler binds to a call over one of the `try`'s inputs,
    // with the input each one steps.
    let mut stepped: Vec<(&str, &str)> = Vec::new();
    for (targets, v) in value_assignments(cx, handler) {
        let [t] = targets else { continue };
        let Some(target) = cx.model.name_of(*t) else {
            continue;
        };
        let v = cx.model.strip(v);
        // `cur = up` where `up` stepped `cur`.
        if let Some(from) = cx.model.name_of(v)
            && stepped.iter().any(|&(n, of)| n == from && of == target)
            && used.iter().any(|u| u == target)
        {
            return true;
        }
        let Some(c) = cx.call(v) else { continue };
        let over: Option<&str> = c.args.iter().find_map(|a| {
            cx.model
                .name_of(cx.model.strip(a.value))
                .filter(|n| used.iter().any(|u| u == n))
        });
        if let Some(input) = over {
            if input == target {
                // `cur = path.dirname(cur)`.
                return true;
            }
            stepped.push((target, input));
        }
    }
    false
}

/// Each iteration takes a new item off a queue before the `try`
/// (`const job = this.queue.shift()`, `const { value } = await it.next()`)
/// and the `try` works on it: a failure settles that item and the loop goes
/// on to the next, it does not try the same one again.
fn takes_an_item(cx: &FileCx, loop_body: &Block, try_body: &Block, handlers: &[Handler]) -> bool {
    const TAKES: &[&str] = &["shift", "pop", "dequeue", "next", "take", "poll"];
    // `getNextHost(iterator, ..)`, `await this.borrow(contactPointsIterator)`:
    // a helper that draws the next element of an iterator each round.
    let draws = |e: ExprId| {
        exprs_under(cx.model, e).into_iter().any(|x| {
            cx.call(x).is_some_and(|c| {
                c.args.iter().any(|a| {
                    cx.model
                        .name_of(cx.model.strip(a.value))
                        .is_some_and(|n| n.to_ascii_lowercase().ends_with("iterator"))
                })
            })
        })
    };
    let mut items: Vec<&str> = Vec::new();
    for s in collect(cx, loop_body) {
        if handlers
            .iter()
            .any(|h| common::block_contains(cx, &h.body, s))
            || common::block_contains(cx, try_body, s)
        {
            continue;
        }
        if let StmtKind::Expr(e) = cx.stmt(s).kind
            && draws(e)
        {
            return true;
        }
        let StmtKind::Assign {
            targets,
            value: Some(v),
            op: AssignOp::Plain | AssignOp::Declare { .. },
        } = &cx.stmt(s).kind
        else {
            continue;
        };
        let mut v = cx.model.strip(*v);
        if let ExprKind::Await(inner) = cx.expr(v).kind {
            v = cx.model.strip(inner);
        }
        let taken = cx
            .call(v)
            .is_some_and(|c| c.receiver.is_some() && TAKES.contains(&c.name.as_str()))
            || draws(v);
        let derived = exprs_under(cx.model, v)
            .into_iter()
            .any(|x| cx.model.name_of(x).is_some_and(|n| items.contains(&n)));
        if taken || derived {
            for &t in targets {
                items.extend(
                    exprs_under(cx.model, t)
                        .into_iter()
                        .filter_map(|x| cx.model.name_of(x)),
                );
            }
        }
    }
    !items.is_empty()
        && unsnarl_model::walk::exprs_in_block(cx.model, try_body)
            .into_iter()
            .any(|x| cx.model.name_of(x).is_some_and(|n| items.contains(&n)))
}

fn ends_with_return(cx: &FileCx, b: &Block) -> bool {
    b.last()
        .is_some_and(|&s| matches!(cx.stmt(s).kind, StmtKind::Return(_) | StmtKind::Break))
}

fn collect(cx: &FileCx, b: &Block) -> Vec<StmtId> {
    struct V(Vec<StmtId>);
    impl unsnarl_model::walk::Visitor for V {
        fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
            self.0.push(id);
            // A nested loop's `break` does not leave the retry loop.
            !matches!(
                m.stmt(id).kind,
                StmtKind::While { .. }
                    | StmtKind::For { .. }
                    | StmtKind::Loop { .. }
                    | StmtKind::Switch { .. }
            )
        }
    }
    let mut v = V(Vec::new());
    unsnarl_model::walk::walk_block(cx.model, b, &mut v);
    v.0
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
import { promiseWait } from "./utils.ts";

export async function commitWithRetry(buildTx) {
  let attempt = 0;
  while (true) {
    const tx = buildTx();
    try {
      return await tx.commit();
    } catch (err) {
      if (attempt < 10) {
        attempt++;
        await promiseWait(100); // expect
        continue;
      }
      throw err;
    }
  }
}
"#,
        r#"
function retryingTransport(transport) {
  const request = async (method, params, attempt = 0) => {
    try {
      return await transport.request(method, params);
    } catch (err) {
      if (attempt === 5) throw err;
      return request(method, params, attempt + 1); // expect
    }
  };
  return { request };
}
"#,
        r#"
class Mailbox {
  async openFirst() {
    const lock = this.queue[0];
    const { resolve, path } = lock;
    while (this.queue.length > 0) { // expect
      try {
        resolve(await this.open(path));
        break;
      } catch (err) {
        this.log.warn(err);
      }
    }
  }
}
"#,
        r#"
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function publish(msg) {
  for (let i = 0; i < 5; i++) { // expect
    try {
      await broker.send(msg);
      return;
    } catch (err) {
      log.warn(err);
    }
  }
}

async function connect() {
  while (true) {
    try {
      return await db.connect();
    } catch (err) {
      await sleep(1000); // expect
    }
  }
}
"#,
        r#"
async function fetchWithRetry(url, retries = 3) {
  try {
    return await fetch(url);
  } catch (err) {
    if (retries === 0) throw err;
    return fetchWithRetry(url, retries - 1); // expect
  }
}

class Client {
  async get(key) {
    try {
      return await this.conn.get(key);
    } catch (err) {
      if (this.failures > 5) throw err;
      this.failures += 1;
      this.lastError = null;
      return this.get(key); // expect
    }
  }
}
"#,
        r#"
async function put(conn, key, value, quiet = false) {
  try {
    return await conn.send(["SET", key, value]);
  } catch (err) {
    if (err.code === "ECONNRESET") {
      return put(conn, key, value, true); // expect
    }
    throw err;
  }
}
"#,
        r#"
class ShardClient {
  // Any error: try the same node again at once.
  async subscribe(channel, listener) {
    let node = await this.topology.nodeFor(channel);
    for (let i = 0; ; i++) { // expect
      try {
        return await node.subscribe(channel, listener);
      } catch (err) {
        if (i >= this.maxRetries) {
          throw err;
        }
      }
    }
  }
}
"#,
        r#"
import fs from "node:fs/promises";
import path from "node:path";

export async function realAncestor(p) {
  let cur = p;
  for (;;) { // expect
    try {
      return await fs.realpath(cur);
    } catch (e) {
      if (e.code !== "ENOENT") throw e;
      const up = path.dirname(cur);
      if (up === cur) return p;
    }
  }
}
"#,
        r#"
export const fetchStatus = async (url) => {
  try {
    return await fetch(url);
  } catch {
    return fetchStatus(url); // expect
  }
};
"#,
        r#"
class PrepareHandler {
  async prepareWithPlan(hosts, query) {
    const triedHosts = {};
    while (true) { // expect
      const host = pickHost(hosts, triedHosts);
      if (host === null) {
        throw new Error("no host available");
      }
      try {
        return await host.prepare(query);
      } catch (err) {
        triedHosts.last = err;
      }
    }
  }
}

function pickHost(hosts, triedHosts) {
  return hosts.length ? hosts[0] : null;
}
"#,
        r#"
// The promise form of `setTimeout`, loaded lazily, always waits one second.
export async function pollUntilUp(check, loadTimers) {
  const timers = loadTimers();
  while (true) {
    try {
      return await check();
    } catch (e) {
      await timers.setTimeout(1000); // expect
    }
  }
}
"#,
        r#"
// A worker blocks the same 50 ms between every attempt.
const openHandle = async (fh) => {
  for (let i = 0; ; i++) {
    try {
      return await fh.fileHandle.createSyncAccessHandle();
    } catch (e) {
      if (i === 5) throw e;
      Atomics.wait(state.view, 0, 0, 50); // expect
    }
  }
};
"#,
    ],
    pass: &[
        r#"
// A worker that blocks on `Atomics.wait` with a timeout between attempts,
// the wait growing with each try.
const getSyncHandle = async (fh) => {
  let i = 1, ms = 20;
  for (; true; ms = 20 * ++i) {
    try {
      fh.syncHandle = await fh.fileHandle.createSyncAccessHandle();
      break;
    } catch (e) {
      if (i === 6) throw e;
      Atomics.wait(state.view, state.retrySlot, 0, ms);
    }
  }
  return fh.syncHandle;
};
"#,
        r#"
// The delay doubles after each failure, capped by `maxDelay`.
export async function withRetry(fn, { retries = 3, delay = 1000, maxDelay = 30000, exponential = true } = {}) {
  let currentDelay = delay;
  let attempt = 0;
  while (true) {
    try {
      return await fn();
    } catch (err) {
      if (attempt++ >= retries) throw err;
      const waitTime = Math.min(currentDelay, maxDelay);
      await new Promise((r) => setTimeout(r, waitTime));
      if (exponential) {
        currentDelay *= 2;
      } else {
        currentDelay += delay;
      }
    }
  }
}

// `sleepMillis` is a sleep, named with its unit.
export async function request(send, System) {
  while (true) {
    try {
      return await send();
    } catch (err) {
      if (err.name !== "TimeoutError") throw err;
      await System.sleepMillis(1000 * Math.random());
    }
  }
}
"#,
        r#"
// The delay doubles after each wait, inside the comma expression.
export const fetchWithBackoff = async (url, init, fetchImpl = globalThis.fetch, { delay: t, maxRetries: n } = { delay: 500, maxRetries: 7 }) => {
  for (let o = 0; o <= n; o++)
    try {
      const res = await fetchImpl(url, init);
      if (!res.ok) throw new Error("RATE_LIMIT_REACHED");
      return res;
    } catch (e) {
      if (e.message === "RATE_LIMIT_REACHED" && o < n)
        console.log("retrying in " + t + "ms"), await new Promise((r) => setTimeout(r, t)), (t *= 2);
      else throw e;
    }
  throw new Error("Max retries reached.");
};
"#,
        r#"
let _timers;
function getTimers() {
  if (_timers === undefined) {
    _timers = require("node:timers/promises");
  }
  return _timers;
}

// Waits with the promise form of `setTimeout`, growing the delay each round.
export async function pRetry(fn, { retries = 3, baseDelayMs = 200, maxDelayMs = 10000, backoffFactor = 2, signal } = {}) {
  const timers = getTimers();
  let attempts = retries;
  let delay = baseDelayMs;
  while (attempts-- >= 0) {
    try {
      return await fn({ signal });
    } catch (e) {
      if (attempts < 0) throw e;
      await timers.setTimeout(delay, undefined, { signal });
      delay = Math.min(delay * backoffFactor, maxDelayMs);
    }
  }
}
"#,
        r#"
import { promiseWait } from "./utils.ts";

export async function commitWithRetry(buildTx) {
  let attempt = 0;
  while (true) {
    const tx = buildTx();
    try {
      return await tx.commit();
    } catch (err) {
      if (attempt < 10) {
        attempt++;
        await promiseWait(10 * attempt + Math.random() * 10);
        continue;
      }
      throw err;
    }
  }
}
"#,
        r#"
function fallbackTransport(transports) {
  const request = async (method, params, i = 0) => {
    const transport = transports[i];
    try {
      return await transport.request(method, params);
    } catch (err) {
      if (i === transports.length - 1) throw err;
      return request(method, params, i + 1);
    }
  };
  return { request };
}

async function fetchFromCandidates(readResource, candidates) {
  try {
    return await readResource(candidates[0]);
  } catch (error) {
    const [, ...rest] = candidates;
    if (rest.length === 0) throw error;
    return fetchFromCandidates(readResource, rest);
  }
}
"#,
        r#"
class Mailbox {
  async processLocks() {
    while (this.queue.length > 0) {
      const lock = this.queue.shift();
      const { resolve, reject, path } = lock;
      try {
        const box = await this.open(path);
        resolve(box);
        break;
      } catch (err) {
        reject(err);
      }
    }
  }
}
"#,
        r#"
async function put(conn, key, value, retried = false) {
  try {
    return await conn.send(["SETX", key, value]);
  } catch (err) {
    if (!retried && err.message.includes("unknown schema")) {
      await conn.send(["DEFINE", key]);
      return put(conn, key, value, true);
    }
    throw err;
  }
}

class TokenAuth {
  async authenticate(conn) {
    if (this.cache.hasToken()) {
      try {
        return await conn.login(this.cache.token());
      } catch (error) {
        if (error.code === 18) {
          this.cache.dropToken();
          return await this.authenticate(conn);
        }
        throw error;
      }
    }
    const token = await this.issuer.fetchToken();
    this.cache.store(token);
    return conn.login(token);
  }
}

class SessionAuth {
  async open(conn) {
    if (this.store.hasSession) {
      try {
        return await conn.resume(this.store.session);
      } catch (error) {
        if (error.code === 18) {
          this.store.removeSession();
          return await this.open(conn);
        }
        throw error;
      }
    }
    return conn.login(await this.issuer.fetchToken());
  }
}
"#,
        r#"
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function publish(msg) {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      await broker.send(msg);
      return;
    } catch (err) {
      await sleep(Math.random() * Math.min(10000, 100 * 2 ** attempt));
    }
  }
}

async function consume(queue) {
  while (running) {
    try {
      const job = await queue.next();
      await handle(job);
    } catch (err) {
      log.error(err);
    }
  }
}

async function fetchWithRetry(url, retries = 3) {
  try {
    return await fetch(url);
  } catch (err) {
    if (retries === 0) throw err;
    await sleep(backoff(retries));
    return fetchWithRetry(url, retries - 1);
  }
}

class Registry {
  async packument() {
    try {
      return await this.fetchPackument();
    } catch (err) {
      if (err.code !== "E404" || this.fullMetadata) {
        throw err;
      }
      this.fullMetadata = true;
      return this.packument();
    }
  }
}

async function onAttemptFailure({ error, retriesConsumed, options }) {
  if (retriesConsumed >= options.retries) throw error;
  const delay = Math.random() * 100 * 2 ** retriesConsumed;
  if (delay > 0) {
    await new Promise((resolve) => {
      const token = setTimeout(() => resolve(), delay);
      options.signal?.addEventListener("abort", () => clearTimeout(token));
    });
  }
  return true;
}

async function pRetry(input, options) {
  let retriesConsumed = 0;
  while (retriesConsumed <= options.retries) {
    try {
      const result = await input();
      return result;
    } catch (error) {
      if (await onAttemptFailure({ error, retriesConsumed, options })) {
        retriesConsumed++;
      }
    }
  }
}

async function nearestPackageJson(dir) {
  while (dir !== path.dirname(dir)) {
    dir = path.dirname(dir);
    try {
      return JSON.parse(await fs.promises.readFile(path.join(dir, "package.json"), "utf8"));
    } catch {
      // not here: go up
    }
  }
}

class Cluster {
  async send(key, command) {
    let node = this.nodeFor(key);
    for (let hops = 0; hops < 16; hops++) {
      try {
        return await node.send(command);
      } catch (err) {
        if (!err.message.startsWith("MOVED")) throw err;
        const address = err.message.split(" ")[2];
        node = this.nodeAt(address);
      }
    }
    throw new Error("too many redirections");
  }
}
async function each(items) {
  for (const item of items) {
    try {
      await save(item);
    } catch (err) {
      log.error(err);
    }
  }
}
"#,
        r#"
class ShardClient {
  // MOVED: the key lives on another shard. Refresh the slot map and go
  // there; every other error is thrown.
  async subscribe(channel, listener) {
    let node = await this.topology.nodeFor(channel);
    for (let i = 0; ; i++) {
      try {
        return await node.subscribe(channel, listener);
      } catch (err) {
        if (i >= this.maxRedirects || !err.message.startsWith("MOVED")) {
          throw err;
        }
        await this.topology.refresh(node);
        node = await this.topology.nodeFor(channel);
      }
    }
  }

  async ssubscribe(channel, listener) {
    let node = await this.topology.nodeFor(channel);
    for (let i = 0; ; i++) {
      try {
        return await node.ssubscribe(channel, listener);
      } catch (err) {
        const isRedirect = err.message.startsWith("MOVED");
        if (++i > this.maxRedirects || !isRedirect) {
          throw err;
        }
        await this.topology.refresh(node);
        node = await this.topology.nodeFor(channel);
      }
    }
  }
}
"#,
        r#"
import fs from "node:fs/promises";
import path from "node:path";

// Resolves the nearest existing ancestor: each failure moves one level up.
export async function realAncestor(p) {
  let cur = p;
  for (;;) {
    try {
      return await fs.realpath(cur);
    } catch (e) {
      if (e.code !== "ENOENT") throw e;
      const up = path.dirname(cur);
      if (up === cur) return p;
      cur = up;
    }
  }
}
"#,
        r#"
import { once } from "node:events";

// Waits for the child to exit; an `error` event only means listening again.
export const waitExit = async (child) => {
  try {
    return await once(child, "exit");
  } catch {
    return waitExit(child);
  }
};
"#,
        r#"
class PrepareHandler {
  async prepareWithPlan(iterator, query) {
    const triedHosts = {};
    while (true) {
      const host = getNextHost(iterator, triedHosts);
      if (host === null) {
        throw new Error("no host available");
      }
      try {
        return await host.prepare(query);
      } catch (err) {
        triedHosts[host.address] = err;
      }
    }
  }
}

function getNextHost(iterator, triedHosts) {
  for (let item = iterator.next(); !item.done; item = iterator.next()) {
    if (!triedHosts[item.value.address]) {
      return item.value;
    }
  }
  return null;
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(RetryWithoutBackoff);
}
