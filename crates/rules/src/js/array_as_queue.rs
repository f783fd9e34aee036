//! JS031: a shared array used as a queue (`push` from events, `shift`
//! elsewhere) with no length bound.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashMap;
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct ArrayAsQueue;

pub static META: RuleMeta = RuleMeta {
    id: "JS031",
    name: "array-as-unbounded-queue",
    category: Category::UnboundedQueue,
    severity: Severity::Medium,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "A module-level or `this` array is filled with `push` from event/request handlers and drained with `shift` elsewhere, with no limit on its length.",
    docs: r#"
A shared array (module-level, or a field of `this`) that gets `push`ed in
an event listener, a message handler or a request handler, and `shift`ed
(or spliced from the front) somewhere else — typically a timer or a worker
loop — while nothing in the file ever compares its `length` to a limit.

## Why

An array used this way is a queue with no capacity. When events arrive
faster than the consumer drains them (a slow database, a stalled worker, a
burst of traffic), the array grows until the process runs out of memory,
and the latency of every item grows with it. Nothing pushes back on the
producer, and nothing is dropped deliberately.

## Example

```javascript
const pending = [];

socket.on("message", (msg) => pending.push(JSON.parse(msg)));

setInterval(async () => {
  const batch = pending.splice(0, 100);
  if (batch.length) await db.insertMany(batch);
}, 1000);
```

## Fix

Bound the queue and decide what happens when it is full (drop, reject,
pause the source), or use a bounded queue library.

```javascript
const MAX_PENDING = 10_000;
const pending = [];

socket.on("message", (msg) => {
  if (pending.length >= MAX_PENDING) {
    metrics.increment("dropped");
    return;
  }
  pending.push(JSON.parse(msg));
});

setInterval(async () => {
  const batch = pending.splice(0, 100);
  if (batch.length) await db.insertMany(batch);
}, 1000);
```
"#,
    examples: &EXAMPLES,
};

#[derive(Default)]
struct Uses {
    pushes: Vec<ExprId>,
    /// The functions that take items out (`shift`, `pop`, `splice(0, n)`).
    drains: Vec<FuncId>,
    bounded: bool,
}

impl Uses {
    /// Filled by events and drained by other code: a handler that takes
    /// out what it puts in (`history.pop(); history.push(line)`) is not
    /// feeding a consumer.
    fn is_queue(&self, cx: &FileCx) -> bool {
        !self.bounded
            && self
                .drains
                .iter()
                .any(|&d| self.pushes.iter().all(|&p| cx.func_of(p) != d))
    }
}

impl Rule for ArrayAsQueue {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) || cx.model.is_test {
            return;
        }
        let h = common::handlers(cx);
        let mut arrays: HashMap<String, Uses> = HashMap::new();
        for (i, ex) in cx.model.exprs.iter().enumerate() {
            let e = ExprId(i as u32);
            match &ex.kind {
                ExprKind::Call(c) => {
                    let Some(recv) = c.receiver else { continue };
                    // Only these methods matter; the checks below are not free.
                    if !matches!(
                        c.name.as_str(),
                        "push" | "unshift" | "shift" | "pop" | "splice"
                    ) {
                        continue;
                    }
                    let f = cx.func_of(e);
                    if f.0 == 0 || common::shared_state(cx, f, recv).is_none() {
                        continue;
                    }
                    let Some(key) = common::chain_key(cx, recv) else {
                        continue;
                    };
                    match c.name.as_str() {
                        "push" | "unshift" if in_event_handler(cx, h, f) => {
                            arrays.entry(key).or_default().pushes.push(e);
                        }
                        "shift" | "pop" => arrays.entry(key).or_default().drains.push(f),
                        "splice" => {
                            let from_front =
                                c.positional(0).and_then(|a| cx.model.int_value(a)) == Some(0);
                            let u = arrays.entry(key).or_default();
                            if from_front && c.positional(1).is_some() {
                                u.drains.push(f);
                            } else {
                                u.bounded = true;
                            }
                        }
                        _ => {}
                    }
                }
                ExprKind::Attr { obj, name, .. } if name == "length" => {
                    // A comparison of the length (a bound) or a truncation.
                    let compared = match cx.tree.expr_parent(e) {
                        Parent::Expr(p) => matches!(
                            cx.expr(p).kind,
                            ExprKind::Binary {
                                op: BinOp::Gt
                                    | BinOp::GtE
                                    | BinOp::Lt
                                    | BinOp::LtE
                                    | BinOp::Eq
                                    | BinOp::Is,
                                ..
                            }
                        ),
                        Parent::Stmt(s) => {
                            matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, .. } if targets.contains(&e))
                        }
                        _ => false,
                    };
                    if compared && let Some(key) = common::chain_key(cx, *obj) {
                        arrays.entry(key).or_default().bounded = true;
                    }
                }
                _ => {}
            }
        }
        let mut keys: Vec<_> = arrays
            .iter()
            .filter(|(_, u)| !u.pushes.is_empty() && u.is_queue(cx))
            .collect();
        keys.sort_by_key(|(k, _)| (*k).clone());
        for (key, u) in keys {
            for &p in &u.pushes {
                out.push(cx.finding(
                    &META,
                    cx.expr(p).span,
                    format!(
                        "`{key}` is used as a queue (filled here from an event handler, drained elsewhere) with no limit on its length: when items arrive faster than they are drained, it grows until the process runs out of memory"
                    ),
                    format!("check `{key}.length` against a maximum before pushing and decide what happens when it is full (drop, reject, pause the source), or use a bounded queue"),
                ));
            }
        }
    }
}

/// `f` runs per event: an event listener, a message/request handler, or a
/// callback inside one.
fn in_event_handler(cx: &FileCx, h: &common::Handlers, f: FuncId) -> bool {
    cx.tree.func_ancestors(cx.model, f).any(|a| {
        if a.0 == 0 {
            return false;
        }
        if h.kind(a).is_some() {
            return true;
        }
        common::closure_call_site(cx, a).is_some_and(|(site, _)| {
            let c = cx.call(site).unwrap();
            matches!(
                c.name.as_str(),
                "on" | "addListener" | "addEventListener" | "subscribe"
            )
        })
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[r#"
const pending = [];

socket.on("message", (msg) => pending.push(JSON.parse(msg))); // expect

setInterval(() => {
  const item = pending.shift();
  if (item) handle(item);
}, 100);

class Batcher {
  constructor(emitter) {
    this.items = [];
    emitter.on("event", (e) => {
      this.items.push(e); // expect
    });
  }
  flush() {
    return this.items.splice(0, 50);
  }
}
"#],
    pass: &[r#"
const MAX = 1000;
const pending = [];

socket.on("message", (msg) => {
  if (pending.length >= MAX) return;
  pending.push(JSON.parse(msg));
});

setInterval(() => {
  const item = pending.shift();
  if (item) handle(item);
}, 100);

const history = [""];
form.addEventListener("submit", () => {
  const draft = history.pop();
  history.push(input.value);
  history.push(draft);
});

function collect(rows) {
  const out = [];
  for (const r of rows) out.push(r);
  return out.shift();
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(ArrayAsQueue);
}
