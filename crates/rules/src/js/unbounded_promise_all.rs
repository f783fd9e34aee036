//! JS012: `Promise.all(items.map(async ...))` over an input of any size,
//! with no concurrency limit.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::exprs_under;
use unsnarl_model::*;

pub struct UnboundedPromiseAll;

pub static META: RuleMeta = RuleMeta {
    id: "JS012",
    name: "unbounded-promise-all",
    category: Category::UnboundedFanout,
    severity: Severity::High,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "`Promise.all`/`Promise.allSettled` over `items.map(asyncFn)` (or promises pushed in a loop) starts one operation per item at once, with no concurrency limit.",
    docs: r#"
`Promise.all(xs.map(async (x) => ...))`, `Promise.allSettled(xs.map(fn))`,
or an array of promises filled in a loop over `xs` and then awaited with
`Promise.all`, where `xs` is not an array literal, not a chunk of a larger
input, and the callback goes through no limiter (`p-limit`, a semaphore, a
queue).

## Why

Every element starts its operation immediately: with ten items that is
fine, with the ten thousand rows a query returned in production it is ten
thousand simultaneous sockets, file descriptors and timers, a burst that
exhausts the connection pool or trips the downstream's rate limit, and a
memory spike holding every pending result. The code works in development
and falls over on the first large input.

## Example

```javascript
async function refreshAll(db) {
  const users = await db.query("select id from users");
  await Promise.all(users.map(async (u) => {
    const profile = await fetch(`https://profiles.example/${u.id}`);
    await db.save(u.id, await profile.json());
  }));
}
```

## Fix

Bound the concurrency (`p-limit`, `p-map` with `concurrency`, or chunks).

```javascript
import pLimit from "p-limit";

const limit = pLimit(8);

async function refreshAll(db) {
  const users = await db.query("select id from users");
  await Promise.all(users.map((u) => limit(async () => {
    const profile = await fetch(`https://profiles.example/${u.id}`);
    await db.save(u.id, await profile.json());
  })));
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for UnboundedPromiseAll {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for (i, ex) in cx.model.exprs.iter().enumerate() {
            let ExprKind::Call(c) = &ex.kind else {
                continue;
            };
            let e = ExprId(i as u32);
            if !matches!(
                c.target.as_deref(),
                Some("Promise.all" | "Promise.allSettled")
            ) {
                continue;
            }
            let f = cx.func_of(e);
            if common::in_test(cx, f) {
                continue;
            }
            let Some(arg) = c.positional(0) else { continue };
            let Some(source) = fanout_source(cx, f, arg) else {
                continue;
            };
            out.push(cx.finding(
                &META,
                ex.span,
                format!(
                    "`{}` starts one operation per element of `{source}` at the same time, with no concurrency limit: a large input opens that many sockets, connections and timers at once and floods the downstream",
                    c.target.as_deref().unwrap_or("Promise.all")
                ),
                "limit the concurrency: wrap the callback with `p-limit` (`xs.map(x => limit(() => work(x)))`), use `p-map` with `{ concurrency }`, or process the input in fixed-size chunks",
            ));
        }
    }
}

/// The unbounded collection an argument of `Promise.all` fans out over.
fn fanout_source(cx: &FileCx, f: FuncId, arg: ExprId) -> Option<String> {
    let arg = cx.model.strip(arg);
    if let Some(c) = cx.call(arg) {
        return mapped_source(cx, c);
    }
    let name = cx.model.name_of(arg)?;
    // `const ps = xs.map(...)` or `ps.push(work(x))` in a loop over `xs`.
    for s in common::stmts_of(cx, f) {
        if let StmtKind::Assign {
            targets,
            value: Some(v),
            op: AssignOp::Declare { .. },
        } = &cx.stmt(s).kind
            && targets.iter().any(|&t| cx.model.name_of(t) == Some(name))
            && let Some(c) = cx.call(cx.model.strip(*v))
        {
            return mapped_source(cx, c);
        }
    }
    for e in common::calls_of(cx, f) {
        let c = cx.call(e).unwrap();
        if c.name != "push" || c.receiver.and_then(|r| cx.model.name_of(r)) != Some(name) {
            continue;
        }
        let pushed = c.positional(0)?;
        if common::promise_expr(cx, pushed).is_none() {
            continue;
        }
        let loop_iter = cx
            .enclosing_stmts(e)
            .into_iter()
            .find_map(|s| match &cx.stmt(s).kind {
                StmtKind::For { iter, .. } => Some(*iter),
                _ => None,
            })?;
        if bounded(cx, loop_iter) || limited(cx, pushed) {
            return None;
        }
        return Some(common::excerpt(cx, cx.expr(loop_iter).span));
    }
    None
}

/// `xs.map(cb)` with a callback that makes promises, over an unbounded `xs`.
fn mapped_source(cx: &FileCx, c: &Call) -> Option<String> {
    if !matches!(c.name.as_str(), "map" | "flatMap") {
        return None;
    }
    let recv = c.receiver?;
    let cb = c.positional(0)?;
    if bounded(cx, recv) || limited(cx, cb) || teardown(cx, cb) {
        return None;
    }
    if let Some(f) = common::callback_fn(cx, cb) {
        if !makes_promise(cx, f) {
            return None;
        }
    } else if cx.model.resolved(cb).is_none() && cx.call(cb).is_some() {
        // `xs.map(limit(fn))`, `xs.map(wrap(fn))`: a wrapped callback.
        return None;
    }
    Some(common::excerpt(cx, cx.expr(recv).span))
}

/// The callback is async or returns what a call gives (not a plain value).
fn makes_promise(cx: &FileCx, f: FuncId) -> bool {
    let func = cx.func(f);
    if func.is_async {
        return common::has_await(cx, f) || returns_calls(cx, f);
    }
    returns_calls(cx, f)
}

fn returns_calls(cx: &FileCx, f: FuncId) -> bool {
    let mut any = false;
    for s in common::stmts_of(cx, f) {
        if let StmtKind::Return(Some(v)) = cx.stmt(s).kind {
            let v = cx.model.strip(v);
            match cx.call(v) {
                Some(c) if !c.is_new || c.target.as_deref() == Some("Promise") => any = true,
                _ => return false,
            }
        }
    }
    any
}

/// Collections whose size is fixed by the code: literals, chunks, worker
/// pools.
fn bounded(cx: &FileCx, e: ExprId) -> bool {
    let e = cx.model.strip(e);
    match &cx.expr(e).kind {
        ExprKind::Collection { .. } => return true,
        ExprKind::Call(c) => {
            if matches!(c.name.as_str(), "slice" | "splice" | "chunk" | "take") {
                return true;
            }
            if matches!(c.target.as_deref(), Some("Array.from" | "Array")) {
                // `Array.from({ length: concurrency }, worker)`.
                return true;
            }
            if let Some(r) = c.receiver
                && matches!(c.name.as_str(), "filter" | "map" | "concat" | "flat")
            {
                return bounded(cx, r);
            }
            if matches!(
                c.target.as_deref(),
                Some("Object.keys" | "Object.values" | "Object.entries")
            ) && let Some(a) = c.positional(0)
            {
                return matches!(cx.expr(cx.model.strip(a)).kind, ExprKind::Collection { .. });
            }
        }
        _ => {}
    }
    let text = cx.source(cx.expr(e).span).to_ascii_lowercase();
    [
        "chunk", "batch", "slice", "page", "window", "group", "worker", "pool", "shard",
    ]
    .iter()
    .any(|w| text.contains(w))
        || program_structure(&text)
        || literal_binding(cx, e)
}

/// Collections whose size the program or its schema fixes, not the data:
/// columns, indices and constraints of a table, registered plugins,
/// providers, listeners, replicas.
fn program_structure(text: &str) -> bool {
    [
        "column",
        "indices",
        "index",
        "constraint",
        "foreignkey",
        "schema",
        "migration",
        "slave",
        "replica",
        "plugin",
        "module",
        "provider",
        "enhancer",
        "subscriber",
        "listener",
        "handler",
        "hook",
        "middleware",
        "dependenc",
        "metadata",
        "propert",
        "option",
        "args",
        "param",
        "queries",
        "interceptor",
        "guard",
        "pipe",
        "decorator",
        "validator",
        "transport",
        "driver",
        "adapter",
        "connection",
        "server",
        "microservice",
        "script",
        "command",
        "table",
        "view",
        "subdoc",
    ]
    .iter()
    .any(|w| text.contains(w))
}

/// A local initialized with an array literal.
fn literal_binding(cx: &FileCx, e: ExprId) -> bool {
    let Some(name) = cx.model.name_of(e) else {
        return false;
    };
    let f = cx.func_of(e);
    common::stmts_of(cx, f).into_iter().any(|s| {
        matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(v), op: AssignOp::Declare { mutable: false } }
            if targets.iter().any(|&t| cx.model.name_of(t) == Some(name))
                && matches!(cx.expr(cx.model.strip(*v)).kind, ExprKind::Collection { .. }))
    })
}

/// The callback closes, releases or kills something that already exists (a
/// pool member, a child process, a connection): as many as are open, not
/// one per input item.
fn teardown(cx: &FileCx, cb: ExprId) -> bool {
    let Some(f) = common::callback_fn(cx, cb) else {
        return false;
    };
    common::calls_of(cx, f).into_iter().any(|e| {
        matches!(
            cx.call(e).unwrap().name.as_str(),
            "close"
                | "quit"
                | "kill"
                | "disconnect"
                | "destroy"
                | "release"
                | "end"
                | "terminate"
                | "stop"
                | "abort"
                | "dispose"
        )
    })
}

/// The callback (or the pushed expression) goes through a limiter.
fn limited(cx: &FileCx, e: ExprId) -> bool {
    let mut exprs = exprs_under(cx.model, e);
    if let Some(f) = common::callback_fn(cx, e) {
        exprs.extend(common::exprs_of(cx, f));
    }
    exprs.into_iter().any(|x| {
        let Some(c) = cx.call(x) else { return false };
        let n = c.name.to_ascii_lowercase();
        let t = c.target.as_deref().unwrap_or("").to_ascii_lowercase();
        n.contains("limit")
            || n.contains("throttle")
            || n == "acquire"
            || n == "runexclusive"
            || n == "schedule"
            || n == "add"
            || t.contains("p-limit")
            || t.contains("p-queue")
            || t.contains("bottleneck")
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
async function fetchAll(urls) {
  return Promise.all(urls.map((u) => fetch(u))); // expect
}

async function saveAll(db, rows) {
  await Promise.allSettled(rows.map(async (r) => { // expect
    await db.insert(r);
  }));
}
"#,
        r#"
async function notify(users) {
  const pending = [];
  for (const u of users) {
    pending.push(sendMail(u.email));
  }
  await Promise.all(pending); // expect
}

async function sendMail(to) {
  await fetch("https://mail.example/send", { method: "POST", body: to });
}
"#,
    ],
    pass: &[r#"
import pLimit from "p-limit";

const limit = pLimit(10);

async function fetchAll(urls) {
  return Promise.all(urls.map((u) => limit(() => fetch(u))));
}

async function profile(id) {
  const [user, orders] = await Promise.all([getUser(id), getOrders(id)]);
  return { user, orders };
}

async function inChunks(rows, db) {
  for (let i = 0; i < rows.length; i += 50) {
    const chunk = rows.slice(i, i + 50);
    await Promise.all(chunk.map((r) => db.insert(r)));
  }
}

async function workers(queue, concurrency) {
  await Promise.all(Array.from({ length: concurrency }, () => drain(queue)));
}

function names(users) {
  return Promise.all(users.map((u) => u.name));
}

async function closeAll(pool) {
  await Promise.all(pool.clients.map((c) => c.release()));
}

async function dropColumns(runner, table, columns) {
  await Promise.all(columns.map((c) => runner.dropColumn(table, c)));
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(UnboundedPromiseAll);
}
