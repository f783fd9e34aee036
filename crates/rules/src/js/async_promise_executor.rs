//! JS004: `new Promise(async (resolve, reject) => ...)`.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct AsyncPromiseExecutor;

pub static META: RuleMeta = RuleMeta {
    id: "JS004",
    name: "async-promise-executor",
    category: Category::OrphanTask,
    severity: Severity::High,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "A `new Promise(...)` executor is an `async` function: an exception (after an `await`, or anywhere when it awaits nothing) rejects a promise nobody sees, and the outer promise never settles.",
    docs: r#"
`new Promise(async (resolve, reject) => { ... })`: the executor is an async
function with an `await` outside `try`/`catch`, or with no `await` at all
(or only of promises that cannot fail: `await wait(ms)` from
`timers/promises` with no abort signal, `await new Promise((resolve) =>
..)`) and a call outside `try`/`catch`
that can throw (anything but its own `resolve`/`reject`, such as a
constructor given the caller's configuration).

## Why

The `Promise` constructor ignores what its executor returns. If the async
executor throws after an `await`, the error rejects the executor's own
promise, which nobody observes: it surfaces as an unhandled rejection, while
the promise being built never settles and everything awaiting it hangs.
Without any `await` the same goes for every throw: a synchronous executor's
exception rejects the promise it builds, an async one's does not. An
async executor is also a sign the wrapper is unnecessary: the async function
already is a promise.

## Example

```javascript
function loadUser(id) {
  return new Promise(async (resolve, reject) => {
    const row = await db.query("select * from users where id = $1", [id]);
    resolve(row);
  });
}
```

## Fix

Drop the wrapper and make the function itself async (or keep the executor
synchronous and chain the promise).

```javascript
async function loadUser(id) {
  const row = await db.query("select * from users where id = $1", [id]);
  return row;
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for AsyncPromiseExecutor {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for (id, c) in cx.calls_to(&["Promise"]) {
            let e = cx.expr(id);
            if !c.is_new {
                continue;
            }
            let Some(f) = c.positional(0).and_then(|a| common::callback_fn(cx, a)) else {
                continue;
            };
            if !cx.func(f).is_async {
                continue;
            }
            // Every await inside `try`/`catch` (wired to `reject`): awkward but
            // nothing escapes.
            if common::unguarded_await(cx, f).is_some() {
                out.push(cx.finding(
                    &META,
                    e.span,
                    "the executor of this `new Promise` is async: an error thrown after one of its awaits rejects a promise nobody observes (an unhandled rejection), and this promise never settles, so its awaiters hang",
                    "remove the `new Promise` wrapper and write an `async` function that returns the value, or keep the executor synchronous and wire `reject` to every failure",
                ));
            } else if !awaits_what_can_fail(cx, f)
                && let Some(risky) = unguarded_call(cx, f)
            {
                // No await (or only of timers that cannot fail): `async`
                // only moves a synchronous throw from this promise (which a
                // plain executor's throw rejects) to the executor's own.
                out.push(cx.finding(
                    &META,
                    e.span,
                    format!(
                        "the executor of this `new Promise` is async{}: if `{}{}` throws, the error rejects the executor's own promise, which nobody observes (an unhandled rejection), instead of this one, so this promise never settles and its awaiters hang",
                        if common::has_await(cx, f) { "" } else { " but awaits nothing" },
                        if risky.is_new { "new " } else { "" },
                        cx.snippet(cx.expr(risky.func).span),
                    ),
                    "drop `async` from the executor (a synchronous executor's throw rejects the promise it builds), or remove the `new Promise` wrapper",
                ));
            }
        }
    }
}

/// The executor awaits something that can fail: any `await` but one of a
/// promise that only resolves (a `timers/promises` timer with no abort
/// signal, `new Promise(resolve => ..)`). Awaits in a `try` count: an
/// executor that guards them is written to route failures to `reject`.
fn awaits_what_can_fail(cx: &FileCx, f: FuncId) -> bool {
    common::exprs_of(cx, f).any(|e| {
        matches!(cx.expr(e).kind, ExprKind::Await(p)
            if !super::rejection::resolve_only_promise(cx, p))
    })
}

/// The first call or `new` in the executor that can throw and is not
/// inside `try`/`catch`: anything but calling the executor's own
/// `resolve`/`reject`.
fn unguarded_call<'a>(cx: &FileCx<'a>, f: FuncId) -> Option<&'a Call> {
    let params = &cx.func(f).params;
    common::exprs_of(cx, f).find_map(|e| {
        let c = cx.call(e)?;
        let own = matches!(&cx.expr(cx.model.strip(c.func)).kind,
            ExprKind::Name { id, .. } if params.iter().any(|p| p.name == *id));
        // (Starting a timer that only resolves, `await wait(ms)`, throws
        // nothing.)
        let timer = super::rejection::resolve_only_promise(cx, e);
        (!own && !timer && !common::in_try_with_catch(cx, e)).then_some(c)
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
function readBody(req) {
  return new Promise(async (resolve) => { // expect
    const chunks = [];
    for await (const c of req) chunks.push(c);
    resolve(Buffer.concat(chunks));
  });
}
"#,
        r#"
class Queue {
  get scheduler() {
    return new Promise(async (resolve) => { // expect
      if (!this._scheduler) {
        this._scheduler = new Scheduler(this.name, this.opts);
        this._scheduler.on("error", (e) => this.emit("error", e));
      }
      resolve(this._scheduler);
    });
  }
}
"#,
        r#"
const wait = (client, key) =>
  new Promise(async function (resolve, reject) { // expect
    const value = await client.get(key);
    if (!value) reject(new Error("missing"));
    resolve(value);
  });
"#,
        r#"
const { setTimeout: wait } = require("timers/promises");

function connect(config) {
  return new Promise(async (resolve, reject) => { // expect
    // A bad certificate makes the constructor throw: that rejects the
    // executor's own promise, and this one never settles.
    const session = new DtlsClient({ cert: config.cert });
    session.onConnect.once(resolve);
    session.onError.once(reject);
    await wait(100);
    session.connect().catch(reject);
  });
}
"#,
        r#"
function console(options) {
  return new Promise(async (resolve) => { // expect
    // Nothing awaited here can fail, but a throwing start is lost.
    const server = repl.start(options);
    server.on("exit", () => resolve(server));
    await new Promise((ready) => server.setupHistory(options.history, ready));
  });
}
"#,
    ],
    pass: &[
        r#"
function delay(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function once(emitter, name) {
  return new Promise((resolve, reject) => {
    emitter.once(name, resolve);
    emitter.once("error", reject);
  });
}

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks);
}

const wait = (client, key) =>
  new Promise(async (resolve, reject) => {
    try {
      resolve(await client.get(key));
    } catch (e) {
      reject(e);
    }
  });

const settled = (value) => new Promise(async (resolve) => resolve(value));

const guarded = (make) =>
  new Promise(async (resolve, reject) => {
    try {
      resolve(make());
    } catch (e) {
      reject(e);
    }
  });
"#,
        r#"
const { setTimeout: wait } = require("timers/promises");

// Only a timer is awaited and nothing else here can throw.
function settle(ms) {
  return new Promise(async (resolve) => {
    await wait(ms);
    resolve();
  });
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(AsyncPromiseExecutor);

    /// Without an await, the message names the call whose throw is lost.
    #[test]
    fn message_names_the_call_that_can_throw() {
        static RULE: AsyncPromiseExecutor = AsyncPromiseExecutor;
        let m = crate::testing::messages(&RULE, Language::JavaScript, EXAMPLES.fail[1]);
        crate::testing::message_with(&m, "awaits nothing: if `new Scheduler` throws");
    }
}
