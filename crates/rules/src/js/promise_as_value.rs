//! JS010: a promise read as if it were the value it resolves to.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct PromiseAsValue;

pub static META: RuleMeta = RuleMeta {
    id: "JS010",
    name: "promise-used-as-value",
    category: Category::MissingAwait,
    severity: Severity::High,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "The result of a promise-returning call is used as its value without `await`: a property read, an index, destructuring, spreading or iterating a promise.",
    docs: r#"
A promise-returning call whose result (directly, or through a local it was
stored in) is read as a value: `getUser(id).name`, `const { rows } =
db.query(...)`, `user.email` after `const user = getUser(id)`, `[...list()]`,
`for (const x of load())`. A call on a type's own name is its static
factory, not the instance method (`Response.json(data)` builds a
response; `res.json()` reads one), and the members of the promise APIs
that return no promise are left alone (a file handle's `readLines()`, a
readline interface).

## Why

Without `await`, the code reads a property of the promise object, not of the
result: `undefined` for every field, so the function goes on with missing
data (an empty e-mail address, a `rows` of `undefined` that throws later, a
permission that reads as missing). The call's own failure is also lost.

## Example

```javascript
async function getUser(id) {
  return db.users.findById(id);
}

async function greet(id) {
  const user = getUser(id);
  return `Hello ${user.name}`;
}
```

## Fix

Await the call.

```javascript
async function getUser(id) {
  return db.users.findById(id);
}

async function greet(id) {
  const user = await getUser(id);
  return `Hello ${user.name}`;
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for PromiseAsValue {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        let mut reported: HashSet<ExprId> = HashSet::new();
        let mut bindings: std::collections::HashMap<
            FuncId,
            std::collections::HashMap<String, ExprId>,
        > = std::collections::HashMap::new();
        for (i, ex) in cx.model.exprs.iter().enumerate() {
            let e = ExprId(i as u32);
            if !matches!(ex.kind, ExprKind::Call(_) | ExprKind::Name { .. })
                || value_use(cx, e).is_none()
            {
                continue;
            }
            // The promise expression whose value is read here.
            let (promise, via_local) = match &ex.kind {
                ExprKind::Call(_) if common::promise_expr(cx, e).is_some() => (e, false),
                ExprKind::Name { id, .. } => {
                    let f = cx.func_of(e);
                    let b = bindings
                        .entry(f)
                        .or_insert_with(|| common::promise_bindings(cx, f));
                    match b.get(id.as_str()).copied() {
                        // A local also tested for truth is reported there
                        // (JS006), once.
                        Some(init)
                            if !is_assign_target(cx, e)
                                && !truth_tested_anywhere(cx, f, id)
                                && !decorated(cx, f, id) =>
                        {
                            (init, true)
                        }
                        _ => continue,
                    }
                }
                _ => continue,
            };
            let Some(how) = value_use(cx, e) else {
                continue;
            };
            if !reported.insert(promise) {
                continue;
            }
            let pspan = cx.expr(promise).span;
            let text = cx.snippet(pspan);
            let mut f = cx.finding(
                &META,
                pspan,
                if via_local {
                    format!(
                        "`{text}` gives a promise that is stored and then {how} on line {} without `await`: the code reads the promise object, not the result, so it sees `undefined`",
                        common::line_of(cx, ex.span.start)
                    )
                } else {
                    format!(
                        "`{text}` gives a promise that is {how} without `await`: the code reads the promise object, not the result, so it sees `undefined`"
                    )
                },
                format!("`await {text}` before using its value"),
            );
            if via_local {
                f.related.push(Related {
                    file: None,
                    span: ex.span,
                    message: "read as a value here".into(),
                });
            }
            out.push(f);
        }
    }
}

/// Some use of the local `name` in `f` is tested for truth.
fn truth_tested_anywhere(cx: &FileCx, f: FuncId, name: &str) -> bool {
    common::exprs_of(cx, f)
        .any(|x| cx.model.name_of(x) == Some(name) && common::truth_tested(cx, x))
}

/// The code sets properties on the local promise (`promise.process =
/// proc`, `p["clear"] = fn`, as child-process and timeout wrappers do): it
/// is used as an object on
/// purpose, and reading those properties back is no mistake.
fn decorated(cx: &FileCx, f: FuncId, name: &str) -> bool {
    common::exprs_of(cx, f).any(|x| {
        cx.model.name_of(x) == Some(name)
            && matches!(cx.tree.expr_parent(x), Parent::Expr(p)
                if matches!(cx.expr(p).kind,
                    ExprKind::Attr { obj, .. } | ExprKind::Index { obj, .. } if obj == x)
                    && is_assign_target(cx, p))
    })
}

/// `e` is what an assignment writes to.
fn is_assign_target(cx: &FileCx, e: ExprId) -> bool {
    matches!(cx.tree.expr_parent(e), Parent::Stmt(s)
        if matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, .. } if targets.contains(&e)))
}

/// How the value of `e` (a promise) is read as a plain value, if it is.
fn value_use(cx: &FileCx, e: ExprId) -> Option<&'static str> {
    match cx.tree.expr_parent(e) {
        Parent::Expr(p) => match &cx.expr(p).kind {
            ExprKind::Attr { obj, name, .. } if *obj == e => {
                // A method call (`query.exec()`, `q.lean()`) is how thenable
                // builders are used; a real promise has no such methods, and
                // calling one fails loudly anyway. And `p.should` is
                // chai's assertion chain (`p.should.be.fulfilled` with
                // chai-as-promised), made to be read on the promise itself.
                let called = matches!(cx.tree.expr_parent(p), Parent::Expr(c) if cx.call(c).is_some_and(|c| c.func == p));
                if called
                    || matches!(
                        name.as_str(),
                        "then" | "catch" | "finally" | "constructor" | "should"
                    )
                {
                    None
                } else {
                    Some("read as an object (`.property`)")
                }
            }
            // `p["clear"] = fn` writes a property; it reads nothing. And
            // `p["catch"](fn)` is a transpiler's spelling of `p.catch(fn)`.
            ExprKind::Index { obj, index }
                if *obj == e
                    && !is_assign_target(cx, p)
                    && !(matches!(cx.model.literal(*index), Some(Lit::Str(m))
                        if matches!(m.as_str(), "then" | "catch" | "finally"))
                        && matches!(cx.tree.expr_parent(p), Parent::Expr(c)
                            if cx.call(c).is_some_and(|c| c.func == p))) =>
            {
                Some("indexed")
            }
            ExprKind::Spread(_) => Some("spread"),
            _ => None,
        },
        Parent::Stmt(s) => match &cx.stmt(s).kind {
            StmtKind::For { iter, .. } if *iter == e => Some("iterated"),
            StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } if *v == e
                && targets
                    .iter()
                    .any(|&t| matches!(cx.expr(t).kind, ExprKind::Collection { .. })) =>
            {
                Some("destructured")
            }
            _ => None,
        },
        _ => None,
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
import axios from "axios";

async function getUser(id) {
  return db.users.get(id);
}

async function show(id) {
  const user = getUser(id); // expect
  console.log(user.name);
  const { data } = axios.get(`/api/orders/${id}`); // expect
  return getUser(id).email; // expect
}
"#,
        r#"
// Indexing the promise with a string is a read, whatever the quotes.
function upload(parts) {
  const done = Promise.all(parts.map(send)); // expect
  return done["length"];
}
"#,
    ],
    pass: &[
        r#"
import fs from "fs/promises";

// `Response.json(data)` builds a response at once (the static factory), and
// a file handle's `readLines()` returns a readline interface.
export function metadataResponse(metadata) {
  const res = Response.json(metadata, { headers: { "cache-control": "no-store" } });
  res.headers.set("x-kind", "metadata");
  return res;
}

// file: src/reader.ts
import fs from "fs/promises";

export class FileReader {
  private file?: fs.FileHandle;

  async open(path: string): Promise<void> {
    this.file = await fs.open(path);
  }

  lines(): AsyncIterator<string> {
    if (!this.file) {
      throw new Error("not open");
    }
    return this.file.readLines()[Symbol.asyncIterator]();
  }
}
"#,
        r#"
import axios from "axios";

async function getUser(id) {
  return db.users.get(id);
}

async function show(id) {
  const user = await getUser(id);
  console.log(user.name);
  const { data } = await axios.get(`/api/orders/${id}`);
  const pending = getUser(id);
  pending.then(log).catch(report);
  const again = await pending;
  return again.email;
}

function run(cmd, args) {
  const promise = new Promise((resolve, reject) => {
    child.once("exit", resolve);
    child.once("error", reject);
  });
  const child = spawn(cmd, args);
  promise.process = child;
  promise.stdin = child.stdin;
  return promise;
}

function withTimeout(promise, ms) {
  let timer;
  const wrapped = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error("timed out")), ms);
    promise.then(resolve, reject).finally(() => clearTimeout(timer));
  });
  wrapped["clear"] = () => clearTimeout(timer);
  return wrapped;
}

const paginate = async function* (url) {
  let page = await fetchPage(url);
  while (page) {
    yield* page.items;
    page = await fetchPage(page.next);
  }
};

async function all(url) {
  const out = [];
  for await (const item of paginate(url)) out.push(item);
  return out;
}

async function byEmail(email) {
  const q = db.users.findOne({ email });
  return q.lean().exec();
}
"#,
        r#"
// chai-as-promised asserts on the promise; mocha waits for what the hook returns.
class Client {
  async login() {
    return this.session.open();
  }
}

describe("setup", function () {
  const client = new Client();
  before(function () {
    return client.login().should.be.fulfilled;
  });
});
"#,
        r#"
// A transpiler's spelling of `.then(..).catch(..)`.
function upload(parts) {
  Promise.all(parts.map(send)).then(function () {
    return finish();
  })["catch"](function (err) {
    report(err);
  });
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(PromiseAsValue);
}
