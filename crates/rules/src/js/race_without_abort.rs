//! JS021: `Promise.race([op(), timeout(ms)])` that never stops the loser.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::{Parent, exprs_under};
use unsnarl_model::*;

pub struct RaceWithoutAbort;

pub static META: RuleMeta = RuleMeta {
    id: "JS021",
    name: "race-without-abort",
    category: Category::RaceLoserLeak,
    severity: Severity::Medium,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "`Promise.race` against a timer abandons the operation instead of cancelling it (no AbortSignal), or leaves the timer running after the operation wins.",
    docs: r#"
`Promise.race([operation(...), timeout(ms)])` (a sleep/delay helper, or a
`new Promise` rejecting from `setTimeout`) where the operation is given no
`AbortSignal` (in its arguments, or in an options object the function
built for it), or where the timer set up for the race is never cleared
(and not `.unref()`ed, which keeps nothing alive).
Test code is not reported: there a race is a bounded wait that runs once.
Nor is a helper racing a promise its caller handed it (`timeout(promise,
ms)` racing `promise.finally(clear)`): it has no handle on work it did
not start, and the caller that started it is where a signal belongs.
Nor is a race whose timer, when it fires, stops the work itself
(`setTimeout(destroy, ms, resolve)` with a `destroy` that terminates the
connections the other side is ending), or takes the other side's waiter
back out of the queue it joined (`waiters.add(resolver)` in one promise,
`waiters.delete(resolver)` in the timer's callback): a queued waiter is
all that side is, and once it is withdrawn nothing wakes it. A race that
ends in `.finally(() => controller.abort())`, for a controller whose
`signal` the function hands to the work, cancels its loser too.

## Why

A race settles with the first promise; it does not stop the others. When the
timer wins, the request, query or child process keeps running, holding its
socket and pool slot, and its result is thrown away: under a slow
dependency, timed-out work piles up behind the "timeout". When the operation
wins, an uncleared timer keeps the process alive and fires for nothing.

## Example

```javascript
const timeout = (ms) =>
  new Promise((_, reject) => setTimeout(() => reject(new Error("timeout")), ms));

async function getPrice(sku) {
  return Promise.race([fetch(`https://prices.example/${sku}`), timeout(2000)]);
}
```

## Fix

Cancel the operation itself: pass `AbortSignal.timeout(ms)` (or an
`AbortController`'s signal aborted by the timer, cleared in `finally`).

```javascript
async function getPrice(sku) {
  return fetch(`https://prices.example/${sku}`, { signal: AbortSignal.timeout(2000) });
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for RaceWithoutAbort {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for (e, c) in cx.calls_to(&["Promise.race"]) {
            let ex = cx.expr(e);
            let f = cx.func_of(e);
            // A test's "wait at most N ms": it runs once, and what the
            // loser holds goes away with the test process.
            if common::in_test(cx, f) {
                continue;
            }
            let Some(arg) = c.positional(0) else { continue };
            let ExprKind::Collection { elems, .. } = &cx.expr(cx.model.strip(arg)).kind else {
                continue;
            };
            let (timers, ops): (Vec<ExprId>, Vec<ExprId>) =
                elems.iter().partition(|&&x| is_timer(cx, f, x));
            if timers.is_empty() || ops.is_empty() {
                continue;
            }
            let losers_stopped = timers
                .iter()
                .any(|&t| timer_stops_the_work(cx, t) || timer_withdraws_waiter(cx, f, t))
                || aborted_when_settled(cx, f, e);
            let unsignalled: Vec<ExprId> = ops
                .iter()
                .copied()
                .filter(|&op| {
                    started_here(cx, f, op)
                        && !losers_stopped
                        && !has_signal(cx, f, op)
                        && !cancelled_otherwise(cx, f, op)
                })
                .collect();
            let msg = if let Some(&op) = unsignalled.first() {
                format!(
                    "when the timer wins this race, `{}` keeps running: nothing cancels it, so timed-out work keeps whatever it holds (a socket, a connection, a worker) and piles up while the dependency is slow",
                    cx.snippet(cx.expr(op).span)
                )
            } else if inline_timer_uncleared(cx, f, &timers) {
                "the timer of this race is never cleared: when the operation wins, the timer stays armed, keeps the process alive and fires for nothing".to_string()
            } else {
                continue;
            };
            out.push(cx.finding(
                &META,
                ex.span,
                msg,
                "give the operation an `AbortSignal` (`{ signal: AbortSignal.timeout(ms) }`, or a controller aborted by the timer) and clear the timer in `finally`",
            ));
        }
    }
}

/// The operand is work this race started: a call, or a `.then`/`.catch`/
/// `.finally` chain on one or on a local; not a chain on a promise the
/// function was handed (`promise.finally(cleanup)` on a parameter): a
/// helper racing its argument has no handle on that work, and the caller
/// that started it is where a signal belongs.
fn started_here(cx: &FileCx, f: FuncId, op: ExprId) -> bool {
    let Some(c) = cx.call(cx.model.strip(op)) else {
        return false;
    };
    let mut root = op;
    let mut c = c;
    while common::is_chain_call(c) {
        root = cx.model.strip(c.receiver.unwrap());
        match cx.call(root) {
            Some(inner) => c = inner,
            None => break,
        }
    }
    cx.model
        .name_of(root)
        .is_none_or(|n| common::param_owner(cx, f, n).is_none())
}

/// A timer promise: `timeout(ms)`, `sleep(ms)`, `delay(ms)`, `new
/// Promise((_, rej) => setTimeout(...))`, or a local bound to one.
fn is_timer(cx: &FileCx, f: FuncId, e: ExprId) -> bool {
    let e = cx.model.strip(e);
    if common::delay_of(cx, e).is_some() {
        return true;
    }
    if let Some(c) = cx.call(e) {
        if common::is_chain_call(c) {
            return is_timer(cx, f, c.receiver.unwrap());
        }
        let n = c.name.to_ascii_lowercase();
        return n.contains("timeout") || n.contains("deadline") || n.contains("timer");
    }
    if let Some(name) = cx.model.name_of(e) {
        let n = name.to_ascii_lowercase();
        if n.contains("timeout") || n.contains("timer") || n.contains("deadline") {
            return true;
        }
        return common::stmts_of(cx, f).any(|s| {
            matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(v), .. }
                if targets.iter().any(|&t| cx.model.name_of(t) == Some(name))
                    && common::delay_of(cx, *v).is_some())
        });
    }
    false
}

/// Methods that stop what is running: a connection, a child, a stream.
const STOPS: &[&str] = &[
    "cancel",
    "destroy",
    "disconnect",
    "kill",
    "close",
    "terminate",
    "end",
];

/// The function stops the operation some other way when the timer wins
/// (`client.disconnect()`, `child.kill()`, `req.destroy()` on the same
/// object).
fn cancelled_otherwise(cx: &FileCx, f: FuncId, op: ExprId) -> bool {
    let Some(root) = cx
        .call(cx.model.strip(op))
        .and_then(|c| c.receiver)
        .and_then(|r| common::root_name(cx, r))
    else {
        return false;
    };
    cx.with_nested(f).into_iter().any(|g| {
        common::calls_of(cx, g).any(|e| {
            let c = cx.call(e).unwrap();
            (c.name == "abort" || STOPS.contains(&c.name.as_str()))
                && c.receiver.and_then(|r| common::root_name(cx, r)) == Some(root)
        })
    })
}

/// The timer's own callback stops the work when it fires: `setTimeout(destroy,
/// ms, resolve)` where `destroy` (a function of the file, or an inline
/// one) terminates, destroys, kills, closes or ends what is running.
fn timer_stops_the_work(cx: &FileCx, timer: ExprId) -> bool {
    timer_callbacks(cx, timer).into_iter().any(|g| {
        cx.with_nested(g).into_iter().any(|h| {
            common::calls_of(cx, h).any(|e| STOPS.contains(&cx.call(e).unwrap().name.as_str()))
        })
    })
}

/// The timer's callback withdraws the other side's waiter from the queue
/// it joined (`setTimeout(() => { waiters.delete(resolver); reject(..) })`
/// against `new Promise(r => { resolver = ..; waiters.add(resolver) })`): a
/// waiter in a queue is all that side is, and once it is out nobody will
/// wake it and hand it the lock.
fn timer_withdraws_waiter(cx: &FileCx, f: FuncId, timer: ExprId) -> bool {
    // `(queue, waiter)` of the calls named `names` under `g`.
    let entries = |g: FuncId, names: &[&str]| -> Vec<(String, String)> {
        cx.with_nested(g)
            .into_iter()
            .flat_map(|h| common::calls_of(cx, h))
            .filter_map(|e| {
                let c = cx.call(e)?;
                if !names.contains(&c.name.as_str()) {
                    return None;
                }
                let queue = cx.snippet(cx.expr(c.receiver?).span);
                let waiter = cx.model.name_of(c.positional(0)?)?;
                Some((queue.to_string(), waiter.to_string()))
            })
            .collect()
    };
    let joined = entries(f, &["add", "push", "set"]);
    timer_callbacks(cx, timer).into_iter().any(|g| {
        entries(g, &["delete", "remove"])
            .iter()
            .any(|w| joined.contains(w))
    })
}

/// The race ends in `.finally(() => controller.abort())` for a controller
/// whose `signal` the function hands out (`{ ...options, abortSignal:
/// aborter.signal }`): whichever side loses is aborted as the race settles.
fn aborted_when_settled(cx: &FileCx, f: FuncId, race: ExprId) -> bool {
    // The race is the object of the `.finally` member the call calls.
    let up = |x: ExprId| match cx.tree.expr_parent(x) {
        Parent::Expr(p) => Some(p),
        _ => None,
    };
    let Some(p) = up(race).and_then(up) else {
        return false;
    };
    let Some(fin) = cx
        .call(p)
        .filter(|c| c.name == "finally" && c.receiver == Some(race))
    else {
        return false;
    };
    let Some(cb) = fin.positional(0).and_then(|a| common::callback_fn(cx, a)) else {
        return false;
    };
    let aborted: Vec<&str> = common::calls_of(cx, cb)
        .filter_map(|e| {
            let c = cx.call(e)?;
            (c.name == "abort").then_some(())?;
            common::root_name(cx, c.receiver?)
        })
        .collect();
    !aborted.is_empty()
        && cx.body_exprs(f).iter().any(|&x| {
            matches!(&cx.expr(x).kind, ExprKind::Attr { obj, name, .. }
                if name == "signal"
                    && common::root_name(cx, *obj).is_some_and(|r| aborted.contains(&r)))
        })
}

/// The callbacks of the `setTimeout` calls in a timer promise: in the
/// element itself or in the executor of its `new Promise(..)`.
fn timer_callbacks(cx: &FileCx, timer: ExprId) -> Vec<FuncId> {
    let under = exprs_under(cx.model, timer);
    let executors = under.iter().filter_map(|&x| match cx.expr(x).kind {
        ExprKind::Closure(g) => Some(g),
        _ => None,
    });
    let calls: Vec<ExprId> = under
        .iter()
        .copied()
        .chain(
            executors
                .flat_map(|g| cx.with_nested(g))
                .flat_map(|g| common::calls_of(cx, g)),
        )
        .collect();
    calls
        .into_iter()
        .filter_map(|x| {
            let c = cx.call(x)?;
            if c.target.as_deref() != Some("setTimeout") {
                return None;
            }
            common::callback_fn(cx, c.positional(0)?)
        })
        .collect()
}

/// The operation call is given an AbortSignal: in its arguments, or in an
/// options object the function built beforehand (`const params = {
/// cancel: controller.signal, prompt }` passed as `ask(params)`).
fn has_signal(cx: &FileCx, f: FuncId, op: ExprId) -> bool {
    let signalish = |e: ExprId| {
        exprs_under(cx.model, e)
            .into_iter()
            .any(|x| match &cx.expr(x).kind {
                ExprKind::Name { id, .. } => id.to_ascii_lowercase().contains("signal"),
                ExprKind::Attr { name, .. } => name.to_ascii_lowercase().contains("signal"),
                ExprKind::Collection { keys, .. } => keys.iter().flatten().any(|k| k == "signal"),
                _ => false,
            })
    };
    if signalish(op) {
        return true;
    }
    let Some(c) = cx.call(cx.model.strip(op)) else {
        return false;
    };
    c.args
        .iter()
        .filter_map(|a| cx.model.name_of(a.value))
        .any(|name| {
            common::stmts_of(cx, f).any(|s| {
                matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(v), .. }
                if targets.iter().any(|&t| cx.model.name_of(t) == Some(name))
                    && matches!(cx.expr(cx.model.strip(*v)).kind, ExprKind::Collection { .. })
                    && signalish(*v))
            })
        })
}

/// An inline `setTimeout` in a timer element with no `clearTimeout` in the
/// function. One made with `.unref()` (`setTimeout(resolve, 2000).unref()`)
/// keeps nothing alive, and firing late settles a race already over.
fn inline_timer_uncleared(cx: &FileCx, f: FuncId, timers: &[ExprId]) -> bool {
    // In the executor: `new Promise((r) => setTimeout(r, ms).unref())`.
    let unref = |t: ExprId| {
        cx.call(cx.model.strip(t))
            .and_then(|c| c.positional(0))
            .and_then(|a| common::callback_fn(cx, a))
            .is_some_and(|exec| {
                common::calls_of(cx, exec).any(|x| {
                    cx.call(x)
                        .is_some_and(|c| c.name == "unref" && c.args.is_empty())
                })
            })
    };
    let inline = timers.iter().any(|&t| {
        cx.call(cx.model.strip(t))
            .is_some_and(|c| c.is_new && c.target.as_deref() == Some("Promise"))
            && !unref(t)
    });
    inline
        && !cx.with_nested(f).into_iter().any(|g| {
            common::calls_of(cx, g)
                .any(|x| cx.call(x).unwrap().target.as_deref() == Some("clearTimeout"))
        })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function getPrice(sku) {
  const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error("timeout")), 2000));
  return Promise.race([fetch(`/prices/${sku}`), timeout]); // expect
}

async function query(db, sql) {
  return Promise.race([db.query(sql), sleep(5000).then(() => { throw new Error("slow"); })]); // expect
}

async function signalled(url) {
  const ac = new AbortController();
  return Promise.race([ // expect
    fetch(url, { signal: ac.signal }),
    new Promise((_, rej) => setTimeout(() => { ac.abort(); rej(new Error("t")); }, 1000)),
  ]);
}
"#,
        r#"
const connections = [];

function report(resolve) {
  console.warn("connections still open");
  resolve();
}

async function end({ timeout = null } = {}) {
  let timer;
  return Promise.race([ // expect
    new Promise((r) => timeout !== null && (timer = setTimeout(report, timeout * 1000, r))),
    Promise.all(connections.map((c) => c.end())),
  ]).then(() => clearTimeout(timer));
}
module.exports = { end };
"#,
        r#"
export class StdioTransport {
  async close() {
    const child = this.process;
    const closed = new Promise((resolve) => child.once("close", resolve));
    child.stdin?.end();
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 2000))]); // expect
    if (child.exitCode === null) {
      child.kill("SIGKILL");
    }
  }
}
"#,
        r#"
class Lock {
  #waiters = new Set();
  #stats = new Set();

  acquireWithTimeout(timeout) {
    let resolver;
    let timer;
    return Promise.race([  // expect
      new Promise((resolve) => {
        resolver = () => {
          clearTimeout(timer);
          resolve();
        };
        this.#waiters.add(resolver);
      }),
      new Promise((_, reject) => {
        timer = setTimeout(() => {
          this.#stats.delete(resolver);
          reject(new Error("timed out waiting for the lock"));
        }, timeout);
      }),
    ]);
  }
}
"#,
        r#"
import { delay } from "./util.js";

export function receiveBatch(link, queue, maxWaitMs) {
  const aborter = new AbortController();
  const pending = link.waitForMessages(queue);
  return Promise.race([  // expect
    pending.then(() => queue.splice(0)),
    delay(maxWaitMs).then(() => []),
  ]).finally(() => aborter.abort());
}
"#,
    ],
    pass: &[
        r#"
// A generic helper: the promise it races was started by its caller, so it
// has nothing to cancel; it clears its own timer when the promise settles.
export default function timeout(promise, ms) {
  const promiseDelay = delay(ms);
  function cancelDelay() {
    clearTimeout(promiseDelay.timeout);
  }
  return Promise.race([
    promise.finally(cancelDelay),
    promiseDelay.then(() => {
      throw new TimeoutError();
    }),
  ]);
}
"#,
        r#"
// file: test/hang.test.js
const test = require("node:test");
const assert = require("node:assert");
const { startServer } = require("../src/server");

test("a stalled upstream never answers", async () => {
  const server = await startServer({ upstreamDelayMs: 60000 });
  const outcome = await Promise.race([
    server.get("/slow"),
    new Promise((resolve) => setTimeout(() => resolve("waited"), 500)),
  ]);
  assert.strictEqual(outcome, "waited");
  await server.close();
});
"#,
        r#"
class Prompter {
  async askWithLimit(prompt) {
    const controller = new AbortController();
    const params = { cancel: controller.signal, prompt };
    const timer = expiresIn(60000);
    try {
      return await Promise.race([this.askAndCheck(params), timer]);
    } catch (err) {
      controller.abort();
      throw err;
    } finally {
      timer.clear();
    }
  }
}
"#,
        r#"
async function getPrice(sku) {
  return fetch(`/prices/${sku}`, { signal: AbortSignal.timeout(2000) });
}

async function withTimer(url) {
  const ac = new AbortController();
  let timer;
  try {
    return await Promise.race([
      fetch(url, { signal: ac.signal }),
      new Promise((_, rej) => {
        timer = setTimeout(() => { ac.abort(); rej(new Error("t")); }, 1000);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function connectWithTimeout(client, ms) {
  let timer;
  try {
    await Promise.race([
      client.connect(),
      new Promise((_, rej) => {
        timer = setTimeout(() => rej(new Error("connect timeout")), ms);
      }),
    ]);
  } catch (err) {
    client.disconnect();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

async function first(a, b) {
  return Promise.race([a.ready(), b.ready()]);
}
"#,
        r#"
const connections = [];

async function destroy(resolve) {
  await Promise.all(connections.map((c) => c.terminate()));
  resolve();
}

async function end({ timeout = null } = {}) {
  let timer;
  return Promise.race([
    new Promise((r) => timeout !== null && (timer = setTimeout(destroy, timeout * 1000, r))),
    Promise.all(connections.map((c) => c.end())),
  ]).then(() => clearTimeout(timer));
}
module.exports = { end };
"#,
        r#"
export class StdioTransport {
  async close() {
    const child = this.process;
    const closed = new Promise((resolve) => child.once("close", resolve));
    child.stdin?.end();
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
    if (child.exitCode === null) {
      child.kill("SIGKILL");
    }
  }
}
"#,
        r#"
class Lock {
  #waiters = new Set();

  acquireWithTimeout(timeout) {
    let resolver;
    let timer;
    return Promise.race([
      new Promise((resolve) => {
        resolver = () => {
          clearTimeout(timer);
          resolve();
        };
        this.#waiters.add(resolver);
      }),
      new Promise((_, reject) => {
        timer = setTimeout(() => {
          this.#waiters.delete(resolver);
          reject(new Error("timed out waiting for the lock"));
        }, timeout);
      }),
    ]);
  }
}
"#,
        r#"
import { delay } from "./util.js";

export function receiveBatch(link, queue, maxWaitMs, options) {
  const aborter = new AbortController();
  const updatedOptions = { ...options, abortSignal: aborter.signal };
  const pending = link.waitForMessages(queue, updatedOptions);
  return Promise.race([
    pending.then(() => queue.splice(0)),
    delay(maxWaitMs, updatedOptions).then(() => []),
  ]).finally(() => aborter.abort());
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(RaceWithoutAbort);
}
