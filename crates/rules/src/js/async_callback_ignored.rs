//! JS005: an async callback handed to an API that ignores the promise it
//! returns (timers, event emitters, DOM listeners, express routes).

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct AsyncCallbackIgnored;

pub static META: RuleMeta = RuleMeta {
    id: "JS005",
    name: "async-callback-ignored",
    category: Category::OrphanTask,
    severity: Severity::High,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "An async function is passed as a callback to an API that ignores the returned promise (`setTimeout`, `setInterval`, `emitter.on`, `addEventListener`, express routes) and its awaits are not wrapped in `try`/`catch`.",
    docs: r#"
An `async` callback given to `setTimeout`/`setInterval`/`setImmediate`,
`process.nextTick`, `emitter.on`/`once`, `process.on`, `addEventListener`, or
an express route (`app.get(path, async (req, res) => ...)`), where an `await`
of the callback is outside any `try`/`catch`. An await of a deferred that
the file only ever resolves, made without a timeout option (`await
this.#ready?.valueOrThrow()`), or of a `timers/promises` timer given no
abort signal (`await wait(50)`), cannot reject and is not counted, nor is
an await of an async function of the file that catches everything itself
(`await this.tick()`). A handler registered with `on` that takes a
`next` continuation (`this.on("MembersAdded", async (context, next) =>
..)`) belongs to a middleware runner that awaits its handlers, not to an
event emitter, and is not reported. A file that installs its own
`process.on("unhandledRejection", ..)` handler routes such rejections
there on purpose and is not reported.

## Why

These APIs call the callback and drop what it returns. When an awaited call
inside it rejects, the promise the callback returned rejects with nobody
listening: Node reports an `unhandledRejection` and, by default, exits. In an
express 4 route the request also never gets a response, so the client hangs
until its own timeout.

## Example

```javascript
setInterval(async () => {
  const res = await fetch("https://config.example/flags");
  flags = await res.json();
}, 30_000);
```

## Fix

Catch inside the callback (or call a function that returns a promise and
attach `.catch`).

```javascript
setInterval(async () => {
  try {
    const res = await fetch("https://config.example/flags");
    flags = await res.json();
  } catch (err) {
    log.warn({ err }, "flag refresh failed");
  }
}, 30_000);
```
"#,
    examples: &EXAMPLES,
};

/// What ignores the callback's promise, if the call does.
fn ignoring_api(cx: &FileCx, c: &Call, express: bool) -> Option<&'static str> {
    match c.target.as_deref() {
        Some("setTimeout" | "setInterval" | "setImmediate") => return Some("the timer"),
        Some("process.nextTick" | "queueMicrotask") => return Some("the scheduler"),
        _ => {}
    }
    c.receiver?;
    match c.name.as_str() {
        "on" | "once" | "addListener" | "prependListener" | "prependOnceListener" => {
            Some("the event emitter")
        }
        "addEventListener" => Some("the event target"),
        "get" | "post" | "put" | "patch" | "delete" | "all" | "use" if express => {
            let path = common::str_arg(cx, c, 0);
            (c.name == "use" || path.is_some_and(|p| p.starts_with('/') || p == "*"))
                .then_some("express")
        }
        _ => None,
    }
}

/// The file uses express (whose v4 routes ignore returned promises) and no
/// framework that awaits handlers.
fn uses_express(cx: &FileCx) -> bool {
    let mut express = false;
    for i in &cx.model.imports {
        let t = i.target.as_str();
        if t == "express" || t.starts_with("express.") {
            express = true;
        }
        if [
            "koa",
            "fastify",
            "hono",
            "@nestjs/",
            "express-async-errors",
            "express-promise-router",
        ]
        .iter()
        .any(|p| t.starts_with(p))
        {
            return false;
        }
    }
    express
}

impl Rule for AsyncCallbackIgnored {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        // The program routes every unhandled rejection to a handler of its
        // own (`process.on("unhandledRejection", ..)`): none goes unseen.
        if common::routes_unhandled_rejections(cx) {
            return;
        }
        let express = uses_express(cx);
        for f in cx.model.function_ids() {
            if !cx.func(f).is_async || cx.func(f).kind != FnKind::Closure {
                continue;
            }
            let Some((site, _)) = common::closure_call_site(cx, f) else {
                continue;
            };
            let c = cx.call(site).unwrap();
            let Some(api) = ignoring_api(cx, c, express) else {
                continue;
            };
            // `this.on("MembersAdded", async (context, next) => ..)`: a
            // handler given the rest of the chain to call is registered
            // with a middleware runner, which awaits each handler; an
            // event emitter hands its listeners no continuation.
            if api == "the event emitter"
                && cx.func(f).params.iter().skip(1).any(|p| p.name == "next")
            {
                continue;
            }
            let Some(aw) = common::unguarded_await(cx, f) else {
                continue;
            };
            let what = if api == "express" {
                "express calls this async route handler and ignores the promise it returns: if the await rejects, the rejection is unhandled (the process may exit) and the request never gets a response"
                    .to_string()
            } else {
                format!(
                    "{api} calls this async callback and ignores the promise it returns: if `{}` rejects, nobody handles it and Node reports an unhandled rejection (exiting by default)",
                    cx.snippet(cx.expr(aw).span)
                )
            };
            let mut finding = cx.finding(
                &META,
                cx.func(f).span,
                what,
                "wrap the callback's body in `try`/`catch` and handle the error there (respond with an error, log, retry), or pass a non-async function that calls `promise.catch(...)`",
            );
            finding.related.push(Related {
                file: None,
                span: cx.expr(aw).span,
                message: "can reject here".into(),
            });
            out.push(finding);
        }
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
const express = require("express");
const app = express();

app.get("/users/:id", async (req, res) => { // expect
  const user = await db.findUser(req.params.id);
  res.json(user);
});

process.on("message", async (msg) => { // expect
  await handle(msg);
});

setTimeout(async () => { // expect
  await refresh();
}, 1000);

bus.on("start", async (opts) => { // expect
  const cfg = await loadConfig(opts).then((c) => normalize(c));
  apply(cfg);
});
"#,
        r#"
button.addEventListener("click", async () => { // expect
  const res = await fetch("/api/like", { method: "POST" });
  render(await res.json());
});
"#,
        r#"
class Deferred {
  #resolve;
  #reject;
  #promise = new Promise((res, rej) => {
    this.#resolve = res;
    this.#reject = rej;
  });
  static create(opts) {
    const d = new Deferred();
    if (opts && opts.timeout) setTimeout(() => d.#reject(new Error(opts.message)), opts.timeout);
    return d;
  }
  resolve(v) {
    this.#resolve(v);
  }
  valueOrThrow() {
    return this.#promise;
  }
}

export class FrameManager {
  #treeHandled;

  // Made with a timeout: it rejects when the tree takes too long.
  async init(client) {
    this.#treeHandled = Deferred.create({ timeout: 1000, message: "frame tree" });
    await client.send("Page.enable");
    this.#treeHandled.resolve();
  }

  listen(session) {
    session.on("Page.lifecycleEvent", async (event) => { // expect
      await this.#treeHandled?.valueOrThrow();
      this.onLifecycle(event);
    });
  }
}
"#,
        r#"
class Poller {
  async tick() {
    try {
      await this.db.query("select 1");
    } catch (err) {
      this.emit("error", err);
      throw err;
    }
  }

  start() {
    this.timer = setInterval(async () => await this.tick(), 1000); // expect
  }
}
"#,
        r#"
class Slots {
  // No await here, but it hands on a promise kept in a field: whatever
  // rejects `#running` rejects this too.
  async rediscover() {
    this.running ??= this.discover().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  watch(client) {
    client.on("moved", async () => { // expect
      await this.rediscover();
    });
  }
}
"#,
        r#"
// An emitter's listener gets the event's arguments, not a continuation:
// the second argument here is the payload.
queue.on("job", async (id, payload) => { // expect
  await store.save(id, payload);
});
"#,
        r#"
const { setTimeout: wait } = require("node:timers/promises");

// Aborted through its signal, the timer rejects with an AbortError.
server.on("connection", async (socket) => { // expect
  await wait(50, undefined, { signal: socket.signal });
  socket.ping();
});
"#,
    ],
    pass: &[
        r#"
// file: dist/utils/wait.d.ts
export declare function wait(milliseconds: number): Promise<void>;
// file: dist/utils/wait.js
"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.wait = wait;
function wait(milliseconds) {
  return new Promise((resolve) => {
    setTimeout(() => resolve(), milliseconds);
  });
}
// file: dist/utils/index.js
"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
var wait_1 = require("./wait");
Object.defineProperty(exports, "wait", { enumerable: true, get: function () { return wait_1.wait; } });
// file: dist/adapter/uart.js
"use strict";
const utils_1 = require("../utils");
class Uart {
  constructor(transport) {
    this.transport = transport;
    // The compiled module's `wait` (not its declaration) cannot reject.
    this.transport.on("close", async () => {
      await (0, utils_1.wait)(3000);
      this.reconnecting = false;
    });
  }
}
exports.Uart = Uart;
"#,
        r#"
class Poller {
  async tick() {
    try {
      await this.db.query("select 1");
    } catch (err) {
      this.emit("error", err);
    }
  }

  start() {
    // `tick` catches everything: its promise cannot reject.
    this.timer = setInterval(async () => await this.tick(), 1000);
  }
}
"#,
        r#"
process.on("unhandledRejection", (err) => {
  console.error(err);
  process.exit(1);
});

process.on("SIGTERM", async () => {
  await queue.end();
  process.exit(0);
});
"#,
        r#"
class Deferred {
  #resolve;
  #reject;
  #promise = new Promise((res, rej) => {
    this.#resolve = res;
    this.#reject = rej;
  });
  static create(opts) {
    const d = new Deferred();
    if (opts && opts.timeout) setTimeout(() => d.#reject(new Error(opts.message)), opts.timeout);
    return d;
  }
  resolve(v) {
    this.#resolve(v);
  }
  valueOrThrow() {
    return this.#promise;
  }
}

export class FrameManager {
  #treeHandled;

  // The deferred is made without a timeout and only ever resolved: the
  // awaited value cannot reject.
  async init(client) {
    this.#treeHandled?.resolve();
    this.#treeHandled = Deferred.create();
    await client.send("Page.enable");
    this.#treeHandled.resolve();
  }

  listen(session) {
    session.on("Page.lifecycleEvent", async (event) => {
      await this.#treeHandled?.valueOrThrow();
      this.onLifecycle(event);
    });
  }
}
"#,
        r#"
const express = require("express");
const app = express();

app.get("/users/:id", async (req, res, next) => {
  try {
    res.json(await db.findUser(req.params.id));
  } catch (err) {
    next(err);
  }
});

setInterval(() => {
  refresh().catch((err) => log.warn(err));
}, 1000);

emitter.on("job", async (job) => {
  try {
    await run(job);
  } catch (err) {
    log.error(err);
  }
});

setTimeout(async () => {
  counter += 1;
}, 10);

bus.on("start", async (opts) => {
  const addon = await import("optional-addon").catch(() => null);
  const cfg = await loadConfig(opts).then((c) => c, () => defaults);
  try {
    await addon?.init(cfg);
  } catch (err) {
    console.error(err);
  }
});
"#,
        r#"
import Koa from "koa";
import Router from "@koa/router";

const router = new Router();
router.get("/users/:id", async (ctx) => {
  ctx.body = await db.findUser(ctx.params.id);
});
"#,
        r#"
class TeamsHandler extends Handler {
  onMembersAdded(handler) {
    // The runner awaits each registered handler and passes the chain on.
    return this.on("MembersAdded", async (context, next) => {
      await handler(context.activity.membersAdded, context, next);
    });
  }
}
"#,
        r#"
const { setTimeout: wait } = require("node:timers/promises");

// A timer with no abort signal only resolves: nothing here can reject.
server.on("connection", async (socket) => {
  await wait(50);
  socket.ping();
});
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(AsyncCallbackIgnored);
}
