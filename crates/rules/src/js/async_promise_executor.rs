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
    summary: "A `new Promise(...)` executor is an `async` function: an exception after its first `await` rejects a promise nobody sees, and the outer promise never settles.",
    docs: r#"
`new Promise(async (resolve, reject) => { ... })`: the executor is an async
function with an `await` outside `try`/`catch`.

## Why

The `Promise` constructor ignores what its executor returns. If the async
executor throws after an `await`, the error rejects the executor's own
promise, which nobody observes: it surfaces as an unhandled rejection, while
the promise being built never settles and everything awaiting it hangs. An
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
            // Every await inside `try`/`catch` (wired to `reject`): awkward but
            // nothing escapes.
            if !cx.func(f).is_async || common::unguarded_await(cx, f).is_none() {
                continue;
            }
            out.push(cx.finding(
                &META,
                e.span,
                "the executor of this `new Promise` is async: an error thrown after one of its awaits rejects a promise nobody observes (an unhandled rejection), and this promise never settles, so its awaiters hang",
                "remove the `new Promise` wrapper and write an `async` function that returns the value, or keep the executor synchronous and wire `reject` to every failure",
            ));
        }
    }
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
const wait = (client, key) =>
  new Promise(async function (resolve, reject) { // expect
    const value = await client.get(key);
    if (!value) reject(new Error("missing"));
    resolve(value);
  });
"#,
    ],
    pass: &[r#"
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
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(AsyncPromiseExecutor);
}
