//! JS027: listeners added to a long-lived emitter on every call, never
//! removed.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct ListenerLeak;

pub static META: RuleMeta = RuleMeta {
    id: "JS027",
    name: "listener-leak",
    category: Category::ResourceLeak,
    severity: Severity::Medium,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "A request handler, async function or effect adds a listener (`.on`, `addEventListener`) to a long-lived emitter (`process`, `window`, a module-level emitter) and nothing ever removes it.",
    docs: r#"
Inside code that runs once per request, message, call or render (request
and message handlers, async functions, React effects): `x.on(event, fn)`,
`x.addListener(...)` or `x.addEventListener(...)` where `x` outlives the
call (`process`, `window`, `document`, a module-level or imported emitter),
with no `once`, no `{ once: true }`/`{ signal }`, and no matching
`off`/`removeListener`/`removeEventListener` in the file. Async
functions named for set-up (`init`, `start`, `boot`, ...) run once, and so
does one that the top level of a module exporting nothing calls once.

## Why

Each call adds one more listener and none goes away. The listeners keep
their closures alive (the request, the response, everything they captured),
memory grows with traffic, every event runs all the stale handlers, and
Node eventually prints `MaxListenersExceededWarning`. In a browser, a
component that subscribes on every mount keeps handling events after it
unmounted.

## Example

```javascript
import { bus } from "./bus.js";

app.get("/events", (req, res) => {
  bus.on("order", (o) => res.write(`data: ${JSON.stringify(o)}\n\n`));
});
```

## Fix

Remove the listener when the call is over (or use `once`, or an
`AbortSignal`).

```javascript
import { bus } from "./bus.js";

app.get("/events", (req, res) => {
  const onOrder = (o) => res.write(`data: ${JSON.stringify(o)}\n\n`);
  bus.on("order", onOrder);
  req.on("close", () => bus.off("order", onOrder));
});
```
"#,
    examples: &EXAMPLES,
};

const ADD: &[&str] = &["on", "addListener", "addEventListener", "prependListener"];
const REMOVE: &[&str] = &[
    "off",
    "removeListener",
    "removeEventListener",
    "removeAllListeners",
];

impl Rule for ListenerLeak {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        let h = common::handlers(cx);
        // Removals in the file: (receiver text, event, scope).
        let mut removals: Vec<(String, Option<String>, Owner)> = Vec::new();
        for (e, c) in cx.calls_named(REMOVE) {
            if let Some(r) = c.receiver {
                removals.push((
                    cx.source(cx.expr(r).span).to_string(),
                    common::str_arg(cx, c, 0).map(str::to_string),
                    owner(cx, cx.func_of(e)),
                ));
            }
        }
        for (e, c) in cx.calls_named(ADD) {
            let ex = cx.expr(e);
            if c.args.len() < 2 {
                continue;
            }
            // A kept result is a subscription to remove later
            // (`const sub = BackHandler.addEventListener(...)`).
            if !cx.is_discarded(e) {
                continue;
            }
            let Some(recv) = c.receiver else { continue };
            let Some(ev) = common::str_arg(cx, c, 0) else {
                continue;
            };
            let f = cx.func_of(e);
            let Some(per) = per_call(cx, h, f) else {
                continue;
            };
            if !long_lived(cx, f, recv) || rebuilt_before(cx, f, recv, e) {
                continue;
            }
            if let Some(opts) = c.positional(2)
                && (!matches!(common::opt_key(cx, opts, "once"), common::OptKey::Missing)
                    || !matches!(common::opt_key(cx, opts, "signal"), common::OptKey::Missing))
            {
                continue;
            }
            let rtext = cx.source(cx.expr(recv).span);
            let here = owner(cx, f);
            if removals
                .iter()
                .any(|(r, e, o)| r == rtext && e.as_deref().is_none_or(|e| e == ev) && *o == here)
            {
                continue;
            }
            out.push(cx.finding(
                &META,
                ex.span,
                format!(
                    "a `{ev}` listener is added to `{rtext}` {per} and never removed: every call adds another one, keeping its closure (and everything it captured) alive and running it on every event"
                ),
                format!("remove it when the call ends (`{rtext}.off('{ev}', fn)` / `removeEventListener`), or use `once` / an `AbortSignal`"),
            ));
        }
    }
}

/// Where a removal must be to undo an addition: the same top-level function
/// (its nested callbacks included), or any method of the same class.
#[derive(PartialEq)]
enum Owner {
    Function(FuncId),
    Class(String),
}

fn owner(cx: &FileCx, f: FuncId) -> Owner {
    let mut top = f;
    for a in cx.tree.func_ancestors(cx.model, f) {
        if a.0 == 0 {
            break;
        }
        if let Some(c) = &cx.func(a).class {
            return Owner::Class(c.to_string());
        }
        top = a;
    }
    Owner::Function(top)
}

/// The function runs per request/message/call/render: what to call it.
fn per_call(cx: &FileCx, h: &common::Handlers, f: FuncId) -> Option<&'static str> {
    for a in cx.tree.func_ancestors(cx.model, f) {
        if a.0 == 0 || common::in_test(cx, a) {
            return None;
        }
        if h.kind(a).is_some() {
            return Some("on every request");
        }
        // React effects run per mount/update.
        if let Some((site, _)) = common::closure_call_site(cx, a) {
            let c = cx.call(site).unwrap();
            if matches!(c.name.as_str(), "useEffect" | "useLayoutEffect") {
                return Some("on every effect run");
            }
        }
        let func = cx.func(a);
        if func.is_async && func.kind != FnKind::Closure {
            let n = func.name.to_ascii_lowercase();
            let setup = [
                "init",
                "setup",
                "start",
                "main",
                "listen",
                "connect",
                "open",
                "register",
                "bootstrap",
                "subscribe",
                "watch",
                "install",
                "create",
                "constructor",
                "configure",
                "run",
                "mount",
                "boot",
            ]
            .iter()
            .any(|w| n.starts_with(w));
            return (!setup && !common::called_once_at_top(cx, a)).then_some("on every call");
        }
    }
    None
}

/// The function itself makes the emitter anew before listening on it
/// (`consumer = new Consumer(); .. consumer.on("error", ..)`): each call
/// attaches its listeners to a fresh object, so none piles up on one.
fn rebuilt_before(cx: &FileCx, f: FuncId, recv: ExprId, call: ExprId) -> bool {
    let Some(name) = cx.model.dotted(cx.model.strip(recv)) else {
        return false;
    };
    let at = cx.expr(call).span.start;
    cx.body_stmts(f).iter().any(|&s| {
        cx.stmt(s).span.end <= at
            && matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(v), .. }
                if targets.iter().any(|&t| cx.model.dotted(t).as_deref() == Some(name.as_str()))
                    && cx.call(cx.model.strip(*v)).is_some_and(|c| c.is_new))
    })
}

/// The receiver outlives the call: `process`, `window`, `document`, a
/// module-level or imported emitter.
fn long_lived(cx: &FileCx, f: FuncId, recv: ExprId) -> bool {
    let recv = cx.model.strip(recv);
    match &cx.expr(recv).kind {
        ExprKind::Name { id, resolved } => {
            if matches!(
                id.as_str(),
                "process" | "window" | "document" | "globalThis"
            ) {
                return resolved.is_some();
            }
            match common::scope_of(cx, f, id) {
                common::Scope::Module => true,
                // An import (not a global like `console`).
                common::Scope::Unknown => cx.model.imports.iter().any(|i| i.local == *id),
                _ => false,
            }
        }
        ExprKind::Attr { obj, name, .. } => {
            // `document.body`, `window.visualViewport`.
            matches!(cx.model.name_of(*obj), Some("document" | "window"))
                && !matches!(cx.tree.expr_parent(recv), Parent::Detached)
                && name != "createElement"
        }
        _ => false,
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
import express from "express";
import { EventEmitter } from "node:events";

const bus = new EventEmitter();
const app = express();

app.get("/events", (req, res) => {
  bus.on("order", (o) => res.write(JSON.stringify(o))); // expect
});

export async function handleJob(job) {
  process.on("SIGTERM", () => job.abort()); // expect
  await job.run();
}
"#,
        r#"
const { EventEmitter } = require("events");

class Consumer extends EventEmitter {}

let consumer = new Consumer();

async function handle(req, res) {
  await consumer.connect();
  consumer.on("ping", (t) => res.write(`ping ${t}\n`)); // expect
}

module.exports = { handle };
"#,
        r#"
// Called for every job: each call adds another SIGINT listener.
async function go(worker) {
  await worker.start();
  process.on("SIGINT", () => worker.stop()); // expect
}

queue.on("job", () => {
  go(new Worker());
});
"#,
    ],
    pass: &[
        r#"
// A script's start-up: `go` runs once, from the top level.
async function go(worker) {
  await worker.start();
  process.on("SIGINT", () => worker.stop());
}

go(new Worker());
"#,
        r#"
import express from "express";
import { EventEmitter } from "node:events";

const bus = new EventEmitter();
const app = express();

app.get("/events", (req, res) => {
  const onOrder = (o) => res.write(JSON.stringify(o));
  bus.on("order", onOrder);
  req.on("close", () => bus.off("order", onOrder));
  req.on("data", (chunk) => res.write(chunk));
});

export async function handleJob(job) {
  process.once("SIGTERM", () => job.abort());
  await job.run();
}

export async function start() {
  process.on("SIGTERM", shutdown);
}

bus.on("order", log);
"#,
        r#"
import { useEffect } from "react";

export function useBack(onBack) {
  useEffect(() => {
    const sub = BackHandler.addEventListener("hardwareBackPress", onBack);
    return () => sub.remove();
  }, [onBack]);
}

export function useResize(onResize) {
  useEffect(() => {
    window.addEventListener("resize", onResize);
    return () => window.removeEventListener("resize", onResize);
  }, [onResize]);
}
"#,
        r#"
const { EventEmitter } = require("events");

class Consumer extends EventEmitter {}

let consumer;

// Each boot makes its own consumer and listens on that one.
async function boot() {
  consumer = new Consumer();
  await consumer.connect();
  consumer.on("error", (e) => console.log(`error ${e}`));
}

boot();
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(ListenerLeak);
}
