//! JS013: a loop over request-sized input on the event loop with no yield
//! point.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::walk::exprs_under;
use unsnarl_model::*;

pub struct LoopWithoutYield;

pub static META: RuleMeta = RuleMeta {
    id: "JS013",
    name: "loop-without-yield",
    category: Category::CpuInAsync,
    severity: Severity::High,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "A request handler loops over input whose size the client or the database decides (a request field, the rows of a query) doing work per item, with no `await` to yield in between.",
    docs: r#"
In a request/message handler (or code it runs synchronously), a loop whose
length comes from the request (`req.body.items`, `Number(req.query.n)`) or
from the result of a query awaited in the handler; in any async function, a
loop over awaited `rows`/`records` (not the records of a DNS answer, a few
hosts); or a loop bound in the millions — whose body calls other code or
loops again, and that never awaits.

## Why

JavaScript runs one piece of code at a time. A loop that never yields keeps
the event loop for its whole duration: with a large input (a 5 MB JSON body,
a query that returned half a million rows, `?n=1e9`) every other request,
timer and socket of the process waits seconds. When the client controls the
size, one request is enough to make the service unresponsive.

## Example

```javascript
app.post("/score", async (req, res) => {
  const rows = await db.query("select * from events where day = $1", [req.body.day]);
  let total = 0;
  for (const row of rows) total += score(row);
  res.json({ total });
});
```

## Fix

Bound the input, move the work to a worker thread, or yield to the event
loop every few thousand items.

```javascript
app.post("/score", async (req, res) => {
  const rows = await db.query("select * from events where day = $1", [req.body.day]);
  let total = 0;
  let i = 0;
  for (const row of rows) {
    total += score(row);
    if (++i % 10_000 === 0) await new Promise((r) => setImmediate(r));
  }
  res.json({ total });
});
```
"#,
    examples: &EXAMPLES,
};

impl Rule for LoopWithoutYield {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        let h = common::handlers(cx);
        for f in cx.model.function_ids() {
            let Some(place) = common::loop_place(cx, h, f) else {
                continue;
            };
            let in_handler = cx
                .tree
                .func_ancestors(cx.model, f)
                .any(|a| a.0 != 0 && h.kind(a).is_some());
            let taint = tainted(cx, h, f, in_handler);
            for s in common::stmts_of(cx, f) {
                let (head, body) = match &cx.stmt(s).kind {
                    StmtKind::For {
                        iter,
                        body,
                        is_async: false,
                        ..
                    } => (*iter, body),
                    StmtKind::While { cond, body, .. } => (*cond, body),
                    _ => continue,
                };
                let Some(source) = uses_taint(cx, head, &taint).or_else(|| huge_bound(cx, head))
                else {
                    continue;
                };
                // An outer loop already reported covers this one.
                if cx.tree.stmt_ancestors(s).any(|a| {
                    matches!(
                        cx.stmt(a).kind,
                        StmtKind::For { .. } | StmtKind::While { .. }
                    )
                }) {
                    continue;
                }
                if !crate::util::awaits_in_block(cx.model, body).is_empty() || !does_work(cx, body)
                {
                    continue;
                }
                out.push(cx.finding(
                    &META,
                    cx.stmt(s).span,
                    format!(
                        "this loop runs {place} over `{source}`, whose size the {} decides, without ever yielding: a large input keeps the event loop busy for the whole loop and every other request waits",
                        if source.contains("req") || source.contains("body") || source.contains("query") {
                            "client"
                        } else if source.starts_with(|c: char| c.is_ascii_digit()) {
                            "code (millions of iterations)"
                        } else {
                            "input"
                        }
                    ),
                    "cap the input size, move the work to a worker thread (`worker_threads`, `piscina`), or yield every N items with `await new Promise(r => setImmediate(r))`",
                ));
            }
        }
    }
}

/// Locals of `f` (and of the functions it is nested in) that hold request
/// input or the result of an awaited call.
fn tainted(cx: &FileCx, h: &common::Handlers, f: FuncId, in_handler: bool) -> HashSet<String> {
    let mut names: HashSet<String> = HashSet::new();
    // Request parameters of handlers (the first one: `req`, `ctx`, `event`).
    for a in cx.tree.func_ancestors(cx.model, f) {
        if a.0 == 0 {
            break;
        }
        if (h.kind(a) == Some("a request handler") || h.kind(a) == Some("an HTTP request handler"))
            && let Some(p) = cx.func(a).params.first()
        {
            names.insert(format!("{}.", p.name));
        }
    }
    for a in cx
        .tree
        .func_ancestors(cx.model, f)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
    {
        if a.0 == 0 {
            continue;
        }
        for s in common::stmts_of(cx, a) {
            let StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } = &cx.stmt(s).kind
            else {
                continue;
            };
            let v = cx.model.strip(*v);
            // Query results count inside request handlers (where their size
            // multiplies per request), and elsewhere when they are rows or
            // records; request fields count everywhere.
            let bulk_name = targets.iter().any(|&t| {
                cx.model.name_of(t).is_some_and(|n| {
                    let n = n.to_ascii_lowercase();
                    n == "rows" || n == "records" || n.ends_with("rows") || n.ends_with("records")
                })
            });
            // A DNS answer (`records` of `dns.promises.resolve(host, "SRV")`)
            // is a handful of hosts, capped by the message size.
            let dns_answer = |a: ExprId| {
                cx.call(cx.model.strip(a)).is_some_and(|c| {
                    c.target.as_deref().is_some_and(|t| {
                        ["dns.", "dns/promises.", "node:dns.", "node:dns/promises."]
                            .iter()
                            .any(|m| t.starts_with(m))
                    })
                })
            };
            let from_await = (in_handler || bulk_name)
                && matches!(cx.expr(v).kind, ExprKind::Await(a) if !dns_answer(a));
            if !from_await && uses_taint(cx, v, &names).is_none() {
                continue;
            }
            for &t in targets {
                for n in common::bound_names(cx, t) {
                    names.insert(n);
                }
            }
        }
    }
    names
}

/// The tainted name or request field an expression reads.
fn uses_taint(cx: &FileCx, e: ExprId, taint: &HashSet<String>) -> Option<String> {
    for x in exprs_under(cx.model, e) {
        match &cx.expr(x).kind {
            ExprKind::Name { id, .. } if taint.contains(id.as_str()) => {
                return Some(id.to_string());
            }
            ExprKind::Attr { obj, name, .. } => {
                if matches!(
                    name.as_str(),
                    "body" | "query" | "params" | "files" | "request"
                ) && let Some(root) = cx.model.name_of(*obj)
                    && taint.contains(&format!("{root}."))
                {
                    return Some(format!("{root}.{name}"));
                }
            }
            _ => {}
        }
    }
    None
}

/// `i < 10_000_000`: a loop bound in the millions.
fn huge_bound(cx: &FileCx, head: ExprId) -> Option<String> {
    exprs_under(cx.model, head)
        .into_iter()
        .find_map(|x| match cx.expr(x).kind {
            ExprKind::Binary {
                op: BinOp::Lt | BinOp::LtE | BinOp::Gt | BinOp::GtE,
                left,
                right,
            } => [left, right]
                .into_iter()
                .find(|&s| cx.model.int_value(s).is_some_and(|v| v >= 1_000_000))
                .map(|s| cx.source(cx.expr(s).span).to_string()),
            _ => None,
        })
}

/// The loop body calls other code (not just collection bookkeeping) or
/// loops again.
fn does_work(cx: &FileCx, body: &Block) -> bool {
    unsnarl_model::walk::exprs_in_block(cx.model, body)
        .into_iter()
        .any(|x| match cx.call(x) {
            Some(c) => !matches!(
                c.name.as_str(),
                "push"
                    | "set"
                    | "add"
                    | "get"
                    | "has"
                    | "toString"
                    | "String"
                    | "Number"
                    | "parseInt"
                    | "parseFloat"
                    | "trim"
                    | "toLowerCase"
                    | "toUpperCase"
                    | "log"
                    | "debug"
                    | "info"
                    | "warn"
                    | "error"
                    | "unshift"
                    | "concat"
                    | "startsWith"
                    | "endsWith"
                    | "includes"
                    | "indexOf"
                    | "isArray"
                    | "hasOwnProperty"
                    | "keys"
                    | "values"
                    | "entries"
                    | "assign"
                    | "min"
                    | "max"
                    | "abs"
                    | "round"
                    | "floor"
                    | "ceil"
                    | "send"
                    | "write"
                    | "emit"
                    | "next"
                    | "resolve"
                    | "reject"
            ),
            None => false,
        })
        || has_nested_loop(cx, body)
}

fn has_nested_loop(cx: &FileCx, body: &Block) -> bool {
    struct V(bool);
    impl unsnarl_model::walk::Visitor for V {
        fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
            if matches!(
                m.stmt(id).kind,
                StmtKind::For { .. } | StmtKind::While { .. }
            ) {
                self.0 = true;
            }
            !self.0
        }
    }
    let mut v = V(false);
    unsnarl_model::walk::walk_block(cx.model, body, &mut v);
    v.0
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[r#"
const express = require("express");
const app = express();

app.post("/score", async (req, res) => {
  const rows = await db.query("select * from events");
  let total = 0;
  for (const row of rows) total += score(row); // expect
  res.json({ total });
});

app.get("/primes", (req, res) => {
  const n = Number(req.query.n);
  const out = [];
  for (let i = 2; i < n; i++) { // expect
    if (isPrime(i)) out.push(i);
  }
  res.json(out);
});
"#],
    pass: &[
        r#"
const express = require("express");
const app = express();

app.post("/score", async (req, res) => {
  const rows = await db.query("select * from events");
  let total = 0;
  let i = 0;
  for (const row of rows) {
    total += score(row);
    if (++i % 10000 === 0) await new Promise((r) => setImmediate(r));
  }
  const ids = [];
  for (const row of rows) ids.push(row.id);
  for (const item of req.body.items) {
    await save(item);
  }
  res.json({ total, ids });
});

async function startup() {
  for (const name of ["a", "b"]) register(name);
}
"#,
        r#"
const dns = require("dns");

function normalize(name) {
  return name.endsWith(".") ? name.slice(0, -1).toLowerCase() : name.toLowerCase();
}

// An SRV answer lists a few hosts.
async function pollSeeds(address) {
  const srvRecords = await dns.promises.resolve(address, "SRV");
  const hosts = [];
  for (const record of srvRecords) {
    hosts.push({ host: normalize(record.name), port: record.port });
  }
  return hosts;
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(LoopWithoutYield);
}
