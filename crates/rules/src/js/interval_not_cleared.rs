//! JS028: `setInterval` started per call whose handle is never cleared.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct IntervalNotCleared;

pub static META: RuleMeta = RuleMeta {
    id: "JS028",
    name: "interval-not-cleared",
    category: Category::ResourceLeak,
    severity: Severity::Medium,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "A function starts a `setInterval` whose handle is dropped or never passed to `clearInterval`: every call leaves one more timer running forever.",
    docs: r#"
`setInterval(...)` inside a function (not module start-up code, nor a
function that the top level of a module exporting nothing calls once:
`async function boot() { .. } boot();` or an IIFE of its top level,
`(async () => { .. })();`, nor a Node-style callback a
program script hands to a call of its top level: `Broker.create(config,
function (err, broker) { .. })` in `examples/`), whose
return value is discarded, or stored in a variable or field that no
`clearInterval` in the file ever receives (also through the `timers`
module, as compiled TypeScript calls it: `(0, timers_1.clearInterval)(h)`,
or read back first into a local: `const t = this[TIMER];
clearInterval(t)`). A local handle then kept in a field or keyed slot
of an object (`channel[TIMER] = timer`) is cleared when that slot is.

## Why

An interval runs until it is cleared. Started per request, per connection,
per component mount or per object, each one keeps its callback and
everything the callback captured alive, keeps firing after its owner is
gone (writing to closed sockets, polling for nobody), and keeps the process
from exiting.

## Example

```javascript
wss.on("connection", (ws) => {
  setInterval(() => ws.ping(), 30_000);
});
```

## Fix

Keep the handle and clear it when the owner goes away.

```javascript
wss.on("connection", (ws) => {
  const heartbeat = setInterval(() => ws.ping(), 30_000);
  ws.on("close", () => clearInterval(heartbeat));
});
```
"#,
    examples: &EXAMPLES,
};

impl Rule for IntervalNotCleared {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        // Everything passed to clearInterval/clearTimeout in the file, with
        // the function that clears it.
        let mut cleared: Vec<(String, FuncId)> = Vec::new();
        // (Also through the `timers` module: TypeScript compiles an imported
        // `clearInterval` to `(0, timers_1.clearInterval)(h)`.)
        for (e, c) in cx.calls_to(&[
            "clearInterval",
            "clearTimeout",
            "timers.clearInterval",
            "timers.clearTimeout",
        ]) {
            if let Some(a) = c.positional(0) {
                cleared.push((last_key(cx, a), cx.func_of(e)));
                // A local read back from where the handle was kept (`const
                // t = this[TIMER]; if (t) clearInterval(t)`).
                if let Some(n) = cx.model.name_of(cx.model.strip(a)) {
                    for v in cx.model.values_assigned_to(n).flatten() {
                        if matches!(
                            cx.expr(v).kind,
                            ExprKind::Attr { .. } | ExprKind::Index { .. }
                        ) {
                            cleared.push((last_key(cx, v), cx.func_of(e)));
                        }
                    }
                }
            }
        }
        for (e, _) in cx.calls_to(&["setInterval", "timers.setInterval"]) {
            let ex = cx.expr(e);
            let f = cx.func_of(e);
            if f.0 == 0
                || common::in_test(cx, f)
                || common::called_once_at_top(cx, common::top_level_fn(cx, f))
                || common::startup_callback(cx, common::top_level_fn(cx, f))
                || common::top_level_iife(cx, common::top_level_fn(cx, f))
            {
                continue;
            }
            let msg = match holder(cx, e) {
                Holder::Dropped => "the handle of this `setInterval` is dropped, so it can never be cleared: every call of this function leaves one more timer running forever".to_string(),
                Holder::Stored(key, local) if !(cleared.iter().any(|(k, g)| {
                    // A local handle is cleared in its own function (or a
                    // callback of it); a field or module variable anywhere.
                    *k == key && (!local || cx.with_nested(f).contains(g))
                }) || (local
                    && (cleared_from_collection(cx, f, &key, &cleared)
                        || handed_to_cleared_field(cx, f, &key, &cleared)))) => format!(
                    "this `setInterval` is kept in `{key}` but nothing ever calls `clearInterval({key})`: the timer outlives its owner and each call adds another"
                ),
                _ => continue,
            };
            out.push(cx.finding(
                &META,
                ex.span,
                msg,
                "keep the handle and `clearInterval` it when the owner goes away (connection closed, component unmounted, object disposed)",
            ));
        }
    }
}

enum Holder {
    Dropped,
    /// Kept in a variable or field (`true` for a local of the function).
    Stored(String, bool),
    Other,
}

/// Where the interval handle goes.
fn holder(cx: &FileCx, e: ExprId) -> Holder {
    let mut cur = e;
    loop {
        match cx.tree.expr_parent(cur) {
            Parent::Expr(p) => match &cx.expr(p).kind {
                ExprKind::Cast(_) => cur = p,
                // `setInterval(...).unref()`: still the same timer.
                ExprKind::Attr { name, .. } if name == "unref" || name == "ref" => {
                    match cx.tree.expr_parent(p) {
                        Parent::Expr(call) if cx.call(call).is_some() => cur = call,
                        _ => return Holder::Other,
                    }
                }
                ExprKind::AssignExpr { target, .. } => {
                    if let Some(field) = down_levelled_unref(cx, p, *target) {
                        return field;
                    }
                    return Holder::Stored(last_key(cx, *target), false);
                }
                _ => return Holder::Other,
            },
            Parent::Stmt(s) => {
                return match &cx.stmt(s).kind {
                    StmtKind::Expr(x) if *x == cur => Holder::Dropped,
                    StmtKind::Assign { targets, .. } => match targets.first() {
                        Some(&t)
                            if matches!(
                                cx.expr(t).kind,
                                ExprKind::Name { .. } | ExprKind::Attr { .. }
                            ) =>
                        {
                            let local = cx.model.name_of(t).is_some_and(|n| {
                                common::declares_local(cx, cx.tree.stmt_func(s), n)
                            });
                            Holder::Stored(last_key(cx, t), local)
                        }
                        _ => Holder::Other,
                    },
                    _ => Holder::Other,
                };
            }
            _ => return Holder::Other,
        }
    }
}

/// The local handle is put in a collection (`this.timers.set(socket,
/// timer)`, `.push(timer)`, `.add(timer)`) that a function clearing a timer
/// reads from (`clearInterval(this.timers.get(socket))`, or a local read
/// from it first): the collection owns the timer, and whoever removes the
/// entry stops it.
fn cleared_from_collection(
    cx: &FileCx,
    f: FuncId,
    key: &str,
    cleared: &[(String, FuncId)],
) -> bool {
    let collections: Vec<String> = cx
        .body_calls(f)
        .filter_map(|e| cx.call(e))
        .filter(|c| matches!(c.name.as_str(), "set" | "push" | "add" | "unshift"))
        .filter(|c| {
            c.args
                .iter()
                .any(|a| cx.model.name_of(cx.model.strip(a.value)) == Some(key))
        })
        .filter_map(|c| c.receiver.map(|r| last_key(cx, r)))
        .collect();
    !collections.is_empty()
        && cleared.iter().any(|(_, g)| {
            cx.body_exprs(*g).iter().any(|&x| {
                matches!(cx.expr(x).kind, ExprKind::Attr { .. })
                    && collections.contains(&last_key(cx, x))
            })
        })
}

/// The local handle is then kept in a field or keyed slot of an object
/// (`channel[TIMER] = timer`, `this.poller = timer`) that a clearing call
/// elsewhere in the file reads: whoever owns that object stops it.
fn handed_to_cleared_field(
    cx: &FileCx,
    f: FuncId,
    key: &str,
    cleared: &[(String, FuncId)],
) -> bool {
    let here = cx.with_nested(f);
    crate::util::assignments(cx, |t| {
        matches!(
            cx.expr(t).kind,
            ExprKind::Attr { .. } | ExprKind::Index { .. }
        ) && cleared.iter().any(|(k, _)| *k == last_key(cx, t))
    })
    .into_iter()
    .any(|(s, v)| {
        cx.model.name_of(cx.model.strip(v)) == Some(key) && here.contains(&cx.tree.stmt_func(s))
    })
}

/// TypeScript's output for `this.timer = setInterval(..).unref?.()`:
/// `this.timer = (_b = (_a = setInterval(..)).unref) === null || _b ===
/// void 0 ? void 0 : _b.call(_a)`. `unref()` returns the timer itself, so
/// the handle lands in the statement's target, not in the temporary `_a`.
fn down_levelled_unref(cx: &FileCx, assign: ExprId, temp: ExprId) -> Option<Holder> {
    let name = cx.model.name_of(temp)?;
    let b = name.as_bytes();
    let is_temp = b.len() >= 2
        && b[0] == b'_'
        && b[1].is_ascii_lowercase()
        && b[2..].iter().all(u8::is_ascii_digit);
    if !is_temp {
        return None;
    }
    let mut cur = assign;
    let stmt = loop {
        match cx.tree.expr_parent(cur) {
            Parent::Expr(p) => cur = p,
            Parent::Stmt(s) => break s,
            _ => return None,
        }
    };
    let StmtKind::Assign {
        targets,
        value: Some(v),
        ..
    } = &cx.stmt(stmt).kind
    else {
        return None;
    };
    let &t = targets.first()?;
    let text = cx.source(cx.expr(*v).span);
    (matches!(
        cx.expr(t).kind,
        ExprKind::Attr { .. } | ExprKind::Name { .. }
    ) && text.contains(".unref)")
        && text.contains(&format!(".call({name})")))
    .then(|| Holder::Stored(last_key(cx, t), false))
}

/// The last segment of a name or member chain (`this.timer` → `timer`).
fn last_key(cx: &FileCx, e: ExprId) -> String {
    let d = cx
        .model
        .dotted(e)
        .unwrap_or_else(|| cx.source(cx.expr(e).span).to_string());
    d.rsplit('.').next().unwrap_or(&d).to_string()
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
wss.on("connection", (ws) => {
  setInterval(() => ws.ping(), 30000); // expect
});

class Poller {
  start() {
    this.timer = setInterval(() => this.poll(), 1000); // expect
  }
}

class Refresher {
  start(ms) {
    var _a, _b;
    this.refresh = (_b = (_a = setInterval(() => this.run(), ms)).unref) === null || _b === void 0 ? void 0 : _b.call(_a); // expect
  }
}
"#,
        r#"
const timers_1 = require("timers");

function waitIdle(pool) {
  return new Promise((resolve) => {
    const interval = (0, timers_1.setInterval)(() => { // expect
      if (pool.pending === 0) {
        resolve();
      }
    }, 100);
  });
}
"#,
        r#"
// Exported: every caller's call adds another timer.
export async function boot(queue) {
  await queue.connect();
  setInterval(() => report(queue.stats()), 10_000); // expect
}
"#,
        r#"
// file: examples/server.js
// A connection handler of a script: one more timer per connection.
const net = require("net");

net.createServer().on("connection", function (socket) {
  setInterval(() => socket.write("ping"), 1000); // expect
}).listen(7000);
"#,
        r#"
// The IIFE runs once per connection, not once per module.
server.on("connection", (socket) => {
  (async () => {
    await socket.ready();
    setInterval(() => socket.ping(), 1000); // expect
  })();
});
"#,
        r#"
class Pinger {
  start(socket) {
    const timer = setInterval(() => socket.write("ping"), 1000); // expect
    this.timers.set(socket, timer);
  }
  stop(socket) {
    this.timers.delete(socket);
  }
  reset() {
    clearInterval(this.other);
  }
}
"#,
        r#"
const TIMER = Symbol("consume-timer");

// Kept on the channel, but nothing reads it back to clear it.
function patchConsume(channel, check, ms) {
  const timer = setInterval(() => check(channel), ms); // expect
  channel[TIMER] = timer;
}

function onClose(channel) {
  clearInterval(channel.pingTimer);
}

module.exports = { patchConsume, onClose };
"#,
    ],
    pass: &[
        r#"
const TIMER = Symbol("consume-timer");

// The channel keeps its timer; closing the channel stops it.
function patchConsume(channel, check, ms) {
  const timer = setInterval(() => check(channel), ms);
  timer.unref();
  channel[TIMER] = timer;
}

function onClose(channel) {
  const active = channel[TIMER];
  if (active) {
    clearInterval(active);
  }
  channel[TIMER] = undefined;
}

module.exports = { patchConsume, onClose };
"#,
        r#"
class Pinger {
  start(socket) {
    const timerPing = setInterval(() => socket.write("ping"), 1000);
    this.mapTimerPing.set(socket, timerPing);
  }
  stop(socket) {
    const timerPing = this.mapTimerPing.get(socket);
    if (timerPing) {
      clearInterval(timerPing);
      this.mapTimerPing.delete(socket);
    }
  }
}
"#,
        r#"
// A script's start-up: `boot` runs once, from the top level.
async function boot() {
  await queue.connect();
  setInterval(() => report(queue.stats()), 10_000);
}

boot();
"#,
        r#"
const metrics = setInterval(flushMetrics, 10000);

wss.on("connection", (ws) => {
  const heartbeat = setInterval(() => ws.ping(), 30000);
  ws.on("close", () => clearInterval(heartbeat));
});

class Poller {
  start() {
    this.timer = setInterval(() => this.poll(), 1000);
  }
  stop() {
    clearInterval(this.timer);
  }
}

function every(ms, fn) {
  return setInterval(fn, ms);
}

class Balancer {
  update(periodMs) {
    var _a, _b;
    if (this.timer) {
      clearInterval(this.timer);
    }
    this.timer = (_b = (_a = setInterval(() => this.recompute(), periodMs)).unref) === null || _b === void 0 ? void 0 : _b.call(_a);
  }
  destroy() {
    clearInterval(this.timer);
  }
}
"#,
        r#"
const timers_1 = require("timers");

// TypeScript's compiled form of an imported clearInterval.
function waitIdle(pool) {
  return new Promise((resolve) => {
    const interval = setInterval(() => {
      if (pool.pending === 0) {
        (0, timers_1.clearInterval)(interval);
        resolve();
      }
    }, 100);
  });
}
"#,
        r#"
// file: examples/publish.js
// The example's start-up callback runs once; its timer is the program.
const Broker = require("../broker");

Broker.create(config, function (err, broker) {
  if (err) throw err;
  setInterval(function () {
    broker.publish("demo", { at: Date.now() });
  }, 1000);
});
"#,
        r#"
// The module's top-level IIFE runs once, when the module loads.
(async () => {
  const broker = await Broker.create(config);
  setInterval(async () => {
    await broker.publish("demo", new Date().toISOString());
  }, 1000);
})();
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(IntervalNotCleared);
}
