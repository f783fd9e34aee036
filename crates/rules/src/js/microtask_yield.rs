//! JS014: `await Promise.resolve()` (or `await null`) used to yield inside a
//! loop.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct MicrotaskYield;

pub static META: RuleMeta = RuleMeta {
    id: "JS014",
    name: "microtask-yield-in-loop",
    category: Category::MicrotaskStarvation,
    severity: Severity::Medium,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "A loop awaits an already-resolved value (`await Promise.resolve()`, `await null`, a `queueMicrotask`/`nextTick` promise) as if it yielded to the event loop; it only yields to other microtasks.",
    docs: r#"
Inside a loop: `await Promise.resolve()`, `await null`/`undefined`/a
constant, or `await new Promise(r => queueMicrotask(r))` /
`process.nextTick(r)`.

## Why

Awaiting a resolved value resumes the function in the microtask queue, which
is drained completely before the event loop moves on: timers, I/O callbacks,
incoming requests and rendering do not get a turn. A loop that "yields" this
way still holds the event loop for its whole run; the await only adds cost.

## Example

```javascript
async function processAll(items) {
  for (const item of items) {
    transform(item);
    await Promise.resolve();
  }
}
```

## Fix

Yield to the macrotask queue (`setImmediate`, `setTimeout(0)`, or
`scheduler.yield()` in browsers), ideally every N items.

```javascript
async function processAll(items) {
  let i = 0;
  for (const item of items) {
    transform(item);
    if (++i % 1000 === 0) await new Promise((r) => setImmediate(r));
  }
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for MicrotaskYield {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for &e in cx.awaits() {
            let ex = cx.expr(e);
            let ExprKind::Await(inner) = ex.kind else {
                continue;
            };
            let Some(what) = microtask_only(cx, inner) else {
                continue;
            };
            if !cx.in_loop(e) {
                continue;
            }
            out.push(cx.finding(
                &META,
                ex.span,
                format!(
                    "`await {what}` inside a loop does not yield to the event loop: it resumes in the microtask queue, so timers, I/O and other requests still wait until the whole loop is done"
                ),
                "yield to the macrotask queue instead, e.g. every N iterations: `await new Promise(r => setImmediate(r))` (or `setTimeout(r, 0)`)",
            ));
        }
    }
}

/// What an awaited expression is, when awaiting it only hops the microtask
/// queue.
fn microtask_only(cx: &FileCx, inner: ExprId) -> Option<String> {
    let inner = cx.model.strip(inner);
    match &cx.expr(inner).kind {
        ExprKind::Literal(Lit::Null) => return Some("null".into()),
        ExprKind::Literal(Lit::Int(_) | Lit::Bool(_)) => {
            return Some(cx.source(cx.expr(inner).span).to_string());
        }
        ExprKind::Unary { op: UnOp::Void, .. } => return Some("void 0".into()),
        _ => {}
    }
    let c = cx.call(inner)?;
    match c.target.as_deref() {
        Some("Promise.resolve") => {
            let arg_ok = c
                .positional(0)
                .is_none_or(|a| matches!(cx.expr(cx.model.strip(a)).kind, ExprKind::Literal(_)));
            arg_ok.then(|| "Promise.resolve()".into())
        }
        Some("Promise") if c.is_new => {
            let f = common::callback_fn(cx, c.positional(0)?)?;
            common::calls_of(cx, f)
                .any(|x| {
                    matches!(
                        cx.call(x).and_then(|k| k.target.as_deref()),
                        Some("queueMicrotask" | "process.nextTick")
                    )
                })
                .then(|| "new Promise(r => queueMicrotask(r))".into())
        }
        _ => None,
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[r#"
async function drain(queue) {
  while (!queue.done) {
    await Promise.resolve(); // expect
    queue.step();
  }
  for (const job of queue.jobs) {
    run(job);
    await null; // expect
  }
  do {
    await new Promise((r) => process.nextTick(r)); // expect
  } while (queue.more());
}
"#],
    pass: &[r#"
async function drain(queue) {
  while (!queue.done) {
    await new Promise((r) => setImmediate(r));
    queue.step();
  }
  const cached = await Promise.resolve(queue.cached);
  for (const job of queue.jobs) {
    await run(job);
    await Promise.resolve(job.result);
  }
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(MicrotaskYield);
}
