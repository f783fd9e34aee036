//! JS006: a promise tested for truth (`if (isAllowed(user))`).

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct PromiseInCondition;

pub static META: RuleMeta = RuleMeta {
    id: "JS006",
    name: "promise-in-condition",
    category: Category::MissingAwait,
    severity: Severity::Critical,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "A promise is used as a condition (`if`, `while`, `!`, `&&`, `||`, `?:`) without `await`: a promise is always truthy, so the check always passes (or always fails).",
    docs: r#"
The result of an async function (or of another promise-returning call) is
tested for truth without `await`: `if (canEdit(user, doc))`, `!isBanned(ip)`,
`valid && save()`, `ok ? a : b`, or a local holding such a promise. A
plain function of the file that can run off its end without returning
(`if (body.used) return Promise.reject(err); body.used = true`) gives a
promise only on some paths: testing it for truth asks which, and is not
reported.

## Why

A promise object is truthy whatever it will resolve to. `if (isAdmin(user))`
on an async `isAdmin` therefore takes the branch for every user: an
authorization check that always passes, a guard that never stops anything,
a `!exists(...)` that is always false. Nothing fails loudly; the check is
just gone.

## Example

```javascript
async function isAdmin(user) {
  const row = await db.roles.findOne({ userId: user.id });
  return row?.role === "admin";
}

async function deleteProject(user, id) {
  if (!isAdmin(user)) throw new Error("forbidden");
  await db.projects.delete(id);
}
```

## Fix

Await the promise before testing it.

```javascript
async function isAdmin(user) {
  const row = await db.roles.findOne({ userId: user.id });
  return row?.role === "admin";
}

async function deleteProject(user, id) {
  if (!(await isAdmin(user))) throw new Error("forbidden");
  await db.projects.delete(id);
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for PromiseInCondition {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        let mut reported: Vec<ExprId> = Vec::new();
        let mut bindings: std::collections::HashMap<
            FuncId,
            std::collections::HashMap<String, ExprId>,
        > = std::collections::HashMap::new();
        for (i, ex) in cx.model.exprs.iter().enumerate() {
            let e = ExprId(i as u32);
            if !matches!(ex.kind, ExprKind::Call(_) | ExprKind::Name { .. })
                || !common::truth_tested(cx, e)
            {
                continue;
            }
            // The promise, and where its missing `await` belongs: the call
            // itself, or the initializer of the local tested later.
            let (why, at) = match &ex.kind {
                ExprKind::Call(_) => (common::promise_expr(cx, e), e),
                ExprKind::Name { id, .. } => {
                    let f = cx.func_of(e);
                    let b = bindings
                        .entry(f)
                        .or_insert_with(|| common::promise_bindings(cx, f));
                    match b.get(id.as_str()) {
                        Some(&init) => (Some("it holds a promise"), init),
                        None => continue,
                    }
                }
                _ => continue,
            };
            let Some(why) = why else { continue };
            if !common::truth_tested(cx, e) || reported.contains(&at) || sometimes_nothing(cx, at) {
                continue;
            }
            reported.push(at);
            let text = cx.snippet(ex.span);
            let mut f = cx.finding(
                &META,
                cx.expr(at).span,
                format!(
                    "`{text}` is a promise ({why}) tested for truth without `await`: a promise is always truthy, so this condition never depends on the result and the check it makes is silently skipped"
                ),
                format!("await it: `if (await {text})` (the enclosing function must be `async`)"),
            );
            if at != e {
                f.related.push(Related {
                    file: None,
                    span: ex.span,
                    message: "tested for truth here".into(),
                });
            }
            out.push(f);
        }
    }
}

/// The call is of a plain function of this file that can run off its end
/// (`if (body.used) return Promise.reject(err); body.used = true`): it
/// gives a promise only sometimes, and testing it for truth asks which.
fn sometimes_nothing(cx: &FileCx, call: ExprId) -> bool {
    let Some(g) = cx
        .call(cx.model.strip(call))
        .and_then(|c| cx.callee_in_file(c))
    else {
        return false;
    };
    let func = cx.func(g);
    !func.is_async && !crate::util::ends_in_exit(cx.model, &func.body)
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
async function isAllowed(user) {
  return (await db.acl.get(user.id)).allowed;
}

async function handler(req, res) {
  if (isAllowed(req.user)) { // expect
    return res.send(await secret());
  }
  const ok = isAllowed(req.user); // expect
  const label = ok ? "yes" : "no";
  while (!isAllowed(req.user)) { // expect
    await tick();
  }
  return req.user && isAllowed(req.user) && render(res); // expect
}
"#,
        r#"
// file: src/auth.ts
export function checkToken(t: string): Promise<boolean> {
  return verify(t);
}
// file: src/route.ts
import { checkToken } from "./auth";

export function guard(t: string) {
  return !checkToken(t) ? deny() : allow(); // expect
}
"#,
    ],
    pass: &[
        r#"
// Gives a rejected promise only when the body was read already, else nothing:
// testing it for truth asks which, as meant.
function consumed(body) {
  if (body.used) {
    return Promise.reject(new TypeError("Already read"));
  }
  body.used = true;
}

function text(body) {
  const rejected = consumed(body);
  if (rejected) {
    return rejected;
  }
  return Promise.resolve(body.source);
}

function json(body) {
  return consumed(body) || Promise.resolve(JSON.parse(body.source));
}
"#,
        r#"
async function isAllowed(user) {
  return (await db.acl.get(user.id)).allowed;
}

function isLocal(req) {
  return req.ip === "127.0.0.1";
}

async function handler(req, res) {
  if (await isAllowed(req.user)) {
    return res.send(await secret());
  }
  const p = isAllowed(req.user);
  if (await p) return;
  if (isLocal(req)) return;
  const cached = cache.get(req.url) || fetch(req.url);
  req.user && isAllowed(req.user).then(log);
  return cached;
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(PromiseInCondition);
}
