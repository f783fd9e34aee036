//! JS015: a function that reschedules itself with `process.nextTick` or
//! `queueMicrotask`.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct RecursiveMicrotask;

pub static META: RuleMeta = RuleMeta {
    id: "JS015",
    name: "recursive-microtask",
    category: Category::MicrotaskStarvation,
    severity: Severity::Medium,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "A function schedules itself again with `process.nextTick`, `queueMicrotask` or `Promise.resolve().then`: as long as it keeps going, no I/O, timer or request is processed.",
    docs: r#"
A function that passes itself (or a callback calling it) to
`process.nextTick`, `queueMicrotask` or `Promise.resolve().then(...)`. A
callback that calls it again only after awaiting a timer (`await new
Promise(r => setTimeout(r, ms))`, a retry with a delay) comes back from a
macrotask and is not reported, nor is a reschedule only on an error path
or from the callback of some other operation, nor one inside `while (r =
stack.pop())` in a function that puts nothing back on that stack but the
item it took (the rounds end with the stack; TypeScript emits this shape
for `await using`).

## Why

`process.nextTick` callbacks and microtasks run before the event loop
continues, and callbacks they schedule run in the same drain. A function
that keeps rescheduling itself this way never lets the loop reach timers or
I/O: the process stops answering while the recursion lasts, which is worse
than a plain synchronous loop because it looks asynchronous.

## Example

```javascript
function pump(queue) {
  const job = queue.shift();
  if (!job) return;
  job.run();
  process.nextTick(() => pump(queue));
}
```

## Fix

Reschedule through the macrotask queue (`setImmediate`), which lets I/O run
between iterations.

```javascript
function pump(queue) {
  const job = queue.shift();
  if (!job) return;
  job.run();
  setImmediate(() => pump(queue));
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for RecursiveMicrotask {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        // The functions that schedule a microtask, found first: most files
        // have none, and each function below looks at its nested ones.
        let scheduling: Vec<bool> = cx
            .model
            .function_ids()
            .map(|g| common::calls_of(cx, g).any(|e| scheduler(cx, cx.call(e).unwrap()).is_some()))
            .collect();
        if !scheduling.contains(&true) {
            return;
        }
        for f in cx.model.function_ids() {
            let func = cx.func(f);
            if func.name.is_empty() || f.0 == 0 {
                continue;
            }
            for g in cx.with_nested(f) {
                if !scheduling.get(g.index()).copied().unwrap_or(false)
                    || after_other_work(cx, f, g)
                {
                    continue;
                }
                for e in common::calls_of(cx, g) {
                    let c = cx.call(e).unwrap();
                    let Some(api) = scheduler(cx, c) else {
                        continue;
                    };
                    let Some(arg) = c.positional(0) else { continue };
                    if !reenters(cx, f, arg) || on_error_path(cx, e) || drains_a_stack(cx, f, e) {
                        continue;
                    }
                    out.push(cx.finding(
                        &META,
                        cx.expr(e).span,
                        format!(
                            "`{}` reschedules itself with `{api}`: each round runs before the event loop continues, so while it keeps going no I/O, timer or request is handled",
                            func.name
                        ),
                        "reschedule with `setImmediate(...)` (macrotask) so I/O runs between rounds, or loop synchronously over a bounded batch",
                    ));
                }
            }
        }
    }
}

/// `g`, nested in `f`, is the callback of some other operation
/// (`this.createConnection((err, conn) => { ...; queueMicrotask(...) })`):
/// it runs when that operation completes, after the event loop has turned,
/// so rescheduling from it is no tight microtask loop. Callbacks of the
/// schedulers themselves and of promise chains still count.
fn after_other_work(cx: &FileCx, f: FuncId, g: FuncId) -> bool {
    if g == f {
        return false;
    }
    let Some((site, _)) = common::closure_call_site(cx, g) else {
        return false;
    };
    let c = cx.call(site).unwrap();
    scheduler(cx, c).is_none() && !common::is_chain_call(c)
}

/// The reschedule only happens when something failed (`if (err) ...`): one
/// extra round per error, not a loop.
fn on_error_path(cx: &FileCx, e: ExprId) -> bool {
    cx.enclosing_stmts(e).into_iter().any(|s| {
        matches!(cx.stmt(s).kind, StmtKind::If { cond, .. }
            if cx.source(cx.expr(cond).span).to_ascii_lowercase().contains("err"))
    })
}

/// The reschedule is inside `while (r = stack.pop())` (or `shift()`), and
/// `f` puts nothing back on that stack but what it took off (`stack.push(r)`,
/// the item deferred to the next round): each round takes an item, so the
/// rounds end with the stack (TypeScript's emitted `__disposeResources`).
fn drains_a_stack(cx: &FileCx, f: FuncId, e: ExprId) -> bool {
    cx.enclosing_stmts(e).into_iter().any(|s| {
        let StmtKind::While { cond, .. } = cx.stmt(s).kind else {
            return false;
        };
        let ExprKind::AssignExpr { target, value, .. } = &cx.expr(cx.model.strip(cond)).kind else {
            return false;
        };
        let (Some(item), Some(taken)) = (cx.model.name_of(*target), cx.call(*value)) else {
            return false;
        };
        let Some(stack) = taken
            .receiver
            .filter(|_| matches!(taken.name.as_str(), "pop" | "shift"))
            .and_then(|r| cx.model.dotted(r))
        else {
            return false;
        };
        cx.with_nested(f).into_iter().all(|g| {
            common::calls_of(cx, g).all(|x| {
                let c = cx.call(x).unwrap();
                !matches!(c.name.as_str(), "push" | "unshift" | "splice" | "concat")
                    || c.receiver.and_then(|r| cx.model.dotted(r)).as_deref() != Some(&stack)
                    || (c.name == "push"
                        && c.args
                            .iter()
                            .all(|a| cx.model.name_of(a.value) == Some(item)))
            })
        })
    })
}

fn scheduler(cx: &FileCx, c: &Call) -> Option<&'static str> {
    match c.target.as_deref() {
        Some("process.nextTick") => Some("process.nextTick"),
        Some("queueMicrotask") => Some("queueMicrotask"),
        _ if c.name == "then"
            && c.receiver
                .and_then(|r| cx.call(cx.model.strip(r)))
                .is_some_and(|r| {
                    r.target.as_deref() == Some("Promise.resolve") && r.args.is_empty()
                }) =>
        {
            Some("Promise.resolve().then")
        }
        _ => None,
    }
}

/// The scheduled callback is `f` itself or calls it.
fn reenters(cx: &FileCx, f: FuncId, arg: ExprId) -> bool {
    let func = cx.func(f);
    let calls_f = |c: &Call| {
        c.target.as_deref() == Some(func.qualname.as_str())
            || (c.receiver.is_none() && c.name == func.name)
            || (func.class.is_some()
                && c.name == func.name
                && c.receiver
                    .is_some_and(|r| cx.model.name_of(r) == Some("this")))
    };
    match common::callback_fn(cx, arg) {
        Some(g) if g == f => true,
        // A call back into `f` after the callback awaited a timer (`await
        // new Promise(r => setTimeout(r, ms))`) comes from a macrotask: the
        // event loop turned in between (a retry with a delay).
        Some(g) if cx.func(g).kind == FnKind::Closure => {
            let delays: Vec<u32> = cx
                .body_exprs(g)
                .iter()
                .filter_map(|&e| match cx.expr(e).kind {
                    ExprKind::Await(inner) if common::delay_of(cx, inner).is_some() => {
                        Some(cx.expr(e).span.end)
                    }
                    _ => None,
                })
                .collect();
            common::calls_of(cx, g).any(|e| {
                calls_f(cx.call(e).unwrap()) && !delays.iter().any(|&d| d <= cx.expr(e).span.start)
            })
        }
        _ => cx.model.name_of(arg) == Some(func.name.as_str()),
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
function tick(state) {
  state.step();
  if (!state.done) process.nextTick(tick, state); // expect
}

class Pump {
  run() {
    this.flush();
    queueMicrotask(() => this.run()); // expect
  }

  drain() {
    Promise.resolve().then(() => {
      this.flush();
      queueMicrotask(() => this.drain()); // expect
    });
  }
}
"#,
        r#"
export function pump(queue) {
  const waiting = [];
  const drain = () =>
    new Promise((resolve, reject) => {
      const step = () => {
        const job = queue.shift();
        if (job) job();
        return drain();
      };
      const start = () => {
        Promise.resolve().then(step).then(resolve).catch(reject); // expect
      };
      if (waiting.length < 10) start();
      else waiting.push(start);
    });
  return drain;
}
"#,
        r#"
export function drainForever(queue, source) {
  let pendingSync = false;
  let r;
  function next() {
    while ((r = queue.pop())) {
      if (!r.async && pendingSync) {
        pendingSync = false;
        queue.push(r, ...source.poll());
        return Promise.resolve().then(next); // expect
      }
      if (r.dispose) r.dispose();
      else pendingSync = true;
    }
    return Promise.resolve();
  }
  return next();
}
"#,
    ],
    pass: &[
        r#"
export function disposeAll(stack) {
  let pendingSync = false;
  let r;
  function next() {
    while ((r = stack.pop())) {
      if (!r.async && pendingSync) {
        pendingSync = false;
        stack.push(r);
        return Promise.resolve().then(next);
      }
      if (r.dispose) r.dispose();
      else pendingSync = true;
    }
    return Promise.resolve();
  }
  return next();
}
"#,
        r#"
function tick(state) {
  state.step();
  if (!state.done) setImmediate(tick, state);
}

function emitLater(emitter, ev) {
  process.nextTick(() => emitter.emit(ev));
}

class Pool {
  processWaitQueue() {
    while (this.waitQueue.length > 0) {
      const waiter = this.waitQueue.shift();
      this.createConnection((err, conn) => {
        if (conn) waiter.resolve(conn);
        queueMicrotask(() => this.processWaitQueue());
      });
    }
  }
}
"#,
        r#"
class RetryLater extends Error {}

// The task comes back only after a failed attempt and a timer: a retry.
export function limiter(maxRetries, delayMs) {
  const waiting = [];
  const schedule = (task, state = { left: maxRetries }) =>
    new Promise((resolve, reject) => {
      const attempt = async () => {
        try {
          return await task();
        } catch (err) {
          if (!(err instanceof RetryLater) || state.left-- <= 0) throw err;
          await new Promise((r) => setTimeout(r, delayMs));
          return schedule(task, state);
        }
      };
      const start = () => {
        Promise.resolve().then(attempt).then(resolve).catch(reject);
      };
      if (waiting.length < 10) start();
      else waiting.push(start);
    });
  return schedule;
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(RecursiveMicrotask);
}
