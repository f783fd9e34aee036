//! JS008: `forEach(async ...)` (and `map(async ...)` whose promises are
//! dropped).

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct AsyncForEach;

pub static META: RuleMeta = RuleMeta {
    id: "JS008",
    name: "async-foreach",
    category: Category::MissingAwait,
    severity: Severity::High,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "`forEach` (or a `map` whose result is dropped) is given an async callback: the loop returns before any of the work is done and rejections go unhandled.",
    docs: r#"
`items.forEach(async (item) => { await ... })`, or `items.map(async ...)` as
a statement, so that the promises the callback returns are thrown away.

## Why

`forEach` calls the callback for each element and ignores what it returns.
With an async callback, the loop "finishes" immediately: the code after it
runs before any item is processed (a response sent before the writes, a
transaction committed before its statements, a test that passes with
nothing checked), every item runs at once with no limit, and a rejection in
any of them is unhandled.

## Example

```javascript
async function importRows(rows) {
  rows.forEach(async (row) => {
    await db.insert("items", row);
  });
  console.log("import done");
}
```

## Fix

Use `for...of` with `await` for sequential work, or collect the promises
(with a concurrency limit for large inputs) and await them.

```javascript
async function importRows(rows) {
  for (const row of rows) {
    await db.insert("items", row);
  }
  console.log("import done");
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for AsyncForEach {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for (id, c) in cx.calls_named(&["forEach", "map", "flatMap"]) {
            let ex = cx.expr(id);
            let dropped_map = matches!(c.name.as_str(), "map" | "flatMap") && cx.is_discarded(id);
            if c.receiver.is_none() || !(c.name == "forEach" || dropped_map) {
                continue;
            }
            let Some(f) = c.positional(0).and_then(|a| common::callback_fn(cx, a)) else {
                continue;
            };
            if !cx.func(f).is_async || !common::has_await(cx, f) {
                continue;
            }
            let msg = if c.name == "forEach" {
                "`forEach` ignores the promises its async callback returns: the loop completes before any item is processed, every item runs concurrently with no limit, and a rejection is unhandled"
            } else {
                "the promises of this `map` over an async callback are dropped: nothing waits for the work, and a rejection is unhandled"
            };
            out.push(cx.finding(
                &META,
                ex.span,
                msg,
                "use `for (const x of xs) { await ... }` for sequential work, or `await Promise.all(xs.map(async ...))` (bounded with a concurrency limit for large inputs)",
            ));
        }
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[r#"
async function notifyAll(users) {
  users.forEach(async (u) => { // expect
    await mailer.send(u.email, "hi");
  });
  users.map(async (u) => { // expect
    await audit(u);
  });
  return "sent";
}
"#],
    pass: &[r#"
async function notifyAll(users) {
  for (const u of users) {
    await mailer.send(u.email, "hi");
  }
  await Promise.all(users.map(async (u) => {
    await audit(u);
  }));
  users.forEach((u) => console.log(u.id));
  users.forEach(async (u) => cache.delete(u.id));
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(AsyncForEach);
}
