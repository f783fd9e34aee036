//! JS007: an async callback given to `filter`/`some`/`every`/`find`.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct AsyncPredicate;

pub static META: RuleMeta = RuleMeta {
    id: "JS007",
    name: "async-predicate",
    category: Category::MissingAwait,
    severity: Severity::Critical,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "`filter`/`some`/`every`/`find`/`findIndex` get a callback that returns a promise: every promise is truthy, so the predicate accepts everything.",
    docs: r#"
An array predicate method (`filter`, `some`, `every`, `find`, `findIndex`,
`findLast`, `findLastIndex`) called with an `async` callback, a callback
returning a promise, or a reference to an async function. Not reported:
`this.filter(pred)` inside a class that defines its own `filter` method,
which is that method and not the array's.

## Why

The array methods do not await: they test what the callback returns, and a
pending promise is truthy. `users.filter(async u => await isActive(u))`
keeps every user, `some(...)` is always `true`, `every(...)` never fails,
`find(...)` returns the first element. Permission filters and validation
passes built this way silently accept everything.

## Example

```javascript
async function visibleDocs(user, docs) {
  return docs.filter(async (doc) => await canRead(user, doc));
}
```

## Fix

Resolve the predicates first, then filter synchronously.

```javascript
async function visibleDocs(user, docs) {
  const allowed = await Promise.all(docs.map((doc) => canRead(user, doc)));
  return docs.filter((_, i) => allowed[i]);
}
```
"#,
    examples: &EXAMPLES,
};

const PREDICATES: &[&str] = &[
    "filter",
    "some",
    "every",
    "find",
    "findIndex",
    "findLast",
    "findLastIndex",
];

impl Rule for AsyncPredicate {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for (e, c) in cx.calls_named(PREDICATES) {
            let ex = cx.expr(e);
            if c.receiver.is_none() || c.args.len() > 2 {
                continue;
            }
            let Some(arg) = c.positional(0) else { continue };
            if calls_own_method(cx, e, c) {
                continue;
            }
            let Some(why) = returns_promise(cx, arg) else {
                continue;
            };
            out.push(cx.finding(
                &META,
                ex.span,
                format!(
                    "`{}` gets a predicate that returns a promise ({why}): the array method does not await it and every promise is truthy, so the test accepts every element",
                    c.name
                ),
                "compute the results first (`const ok = await Promise.all(xs.map(pred))`), then `xs.filter((_, i) => ok[i])`; or use a `for...of` loop with `await`",
            ));
        }
    }
}

/// `this.filter(pred)` in a class that defines its own `filter`: the
/// class's method, not the array's, and it may well await the predicate.
fn calls_own_method(cx: &FileCx, e: ExprId, c: &Call) -> bool {
    if c.receiver.and_then(|r| cx.model.dotted(r)).as_deref() != Some("this") {
        return false;
    }
    let Some(class) = cx
        .tree
        .func_ancestors(cx.model, cx.func_of(e))
        .find_map(|g| cx.func(g).class.as_deref())
    else {
        return false;
    };
    cx.model.function_ids().any(|m| {
        let m = cx.func(m);
        m.kind == FnKind::Method && m.class.as_deref() == Some(class) && m.name == c.name
    })
}

/// Why a callback argument returns a promise.
fn returns_promise(cx: &FileCx, arg: ExprId) -> Option<&'static str> {
    let f = common::callback_fn(cx, arg);
    if let Some(f) = f {
        if cx.func(f).is_async {
            return Some("it is async");
        }
        // `x => isValid(x)` with an async `isValid`.
        if let [s] = cx.func(f).body.as_slice()
            && let StmtKind::Return(Some(v)) = cx.stmt(*s).kind
            && common::promise_expr(cx, v).is_some()
        {
            return Some("it returns a promise");
        }
        return None;
    }
    // A function passed by reference that the project index knows.
    let q = cx.model.resolved(arg)?;
    let i = cx.index.resolve(cx.lang, q, cx.file)?;
    let s = cx.index.summary(i);
    s.awaitable().map(|_| "it is an async function")
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
async function isActive(u) {
  return (await db.users.get(u.id)).active;
}

async function pick(users) {
  const active = users.filter(async (u) => await isActive(u)); // expect
  const any = users.some((u) => isActive(u)); // expect
  const all = users.every(isActive); // expect
  return { active, any, all };
}
"#,
        r#"
class Composer {
  constructor(...middleware) {
    this.middleware = middleware;
  }
  keep(predicate) {
    return this.middleware.filter(async (m) => await predicate(m)); // expect
  }
  drop(predicate) {
    return this.filter(async (ctx) => !(await predicate(ctx))); // expect
  }
}
module.exports = { Composer };
"#,
    ],
    pass: &[
        r#"
async function isActive(u) {
  return (await db.users.get(u.id)).active;
}

function isAdult(u) {
  return u.age >= 18;
}

async function pick(users) {
  const flags = await Promise.all(users.map((u) => isActive(u)));
  const active = users.filter((_, i) => flags[i]);
  const adults = users.filter(isAdult);
  const first = users.find((u) => u.id === 1);
  return { active, adults, first };
}
"#,
        r#"
class Composer {
  constructor(...middleware) {
    this.middleware = middleware;
  }
  filter(predicate, ...middleware) {
    return this.branch(predicate, new Composer(...middleware), new Composer());
  }
  branch(predicate, yes, no) {
    return async (ctx) => ((await predicate(ctx)) ? yes : no);
  }
  drop(predicate, ...middleware) {
    return this.filter(async (ctx) => !(await predicate(ctx)), ...middleware);
  }
}
module.exports = { Composer };
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(AsyncPredicate);
}
