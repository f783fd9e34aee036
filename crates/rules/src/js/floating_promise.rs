//! JS001: a promise created in statement position and left floating.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct FloatingPromise;

pub static META: RuleMeta = RuleMeta {
    id: "JS001",
    name: "floating-promise",
    category: Category::OrphanTask,
    severity: Severity::High,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "A promise-returning call is made as a statement without `await`, `return`, `void` or a rejection handler; or a `.then()` chain has no `.catch()`.",
    docs: r#"
A call of an `async` function of the project (or one declared to return a
`Promise`, in source or in a `.d.ts`, or one that returns a promise
expression, across imports and `require`), or of a known promise API
(`fetch`, `fs/promises`, database and HTTP clients), used as a statement:
nobody awaits it, returns it or handles its rejection. Also `.then(onFulfilled)` chains with no `.catch()` and no
rejection callback, and async IIFEs (`(async () => { ... })()`) whose awaits
can reject with nothing to catch it. Write `void promise` to discard one on purpose.

## Why

A floating promise runs unobserved: when it rejects, Node raises an
`unhandledRejection`, which terminates the process by default since Node 15
— at some later tick, far from the code that caused it. When it succeeds
late, the caller has already moved on (responded, closed the connection,
ended the test), so its work lands out of order or not at all.

## Example

```javascript
async function auditLog(req) {
  await fetch("https://audit.example/log", { method: "POST" });
}

function handle(req) {
  auditLog(req);
  return process(req);
}
```

## Fix

Await it (or return it); collect concurrent work with `Promise.allSettled`
when one failure must not hide the others; mark a deliberate fire-and-forget
with `void` and a `.catch`.

```javascript
async function auditLog(req) {
  await fetch("https://audit.example/log", { method: "POST" });
}

async function handle(req) {
  const [audit, result] = await Promise.allSettled([auditLog(req), process(req)]);
  if (result.status === "rejected") throw result.reason;
  return result.value;
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for FloatingPromise {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for (i, e) in cx.model.exprs.iter().enumerate() {
            let ExprKind::Call(c) = &e.kind else { continue };
            let id = ExprId(i as u32);
            if !cx.is_discarded(id)
                || common::eslint_disabled(cx, e.span, "no-floating-promises")
                || common::eslint_disabled(cx, e.span, "catch-or-return")
                || says_cannot_fail(cx, e.span)
            {
                continue;
            }
            if let Some(f) = check_chain(cx, id, c) {
                out.push(f);
                continue;
            }
            if let ExprKind::Closure(f) = cx.expr(cx.model.strip(c.func)).kind {
                // An async IIFE: only a problem when something in it can reject.
                if cx.func(f).is_async && common::unguarded_await(cx, f).is_some() {
                    out.push(cx.finding(
                        &META,
                        e.span,
                        "this async IIFE is called without `.catch()`: if an `await` in it rejects, the error becomes an unhandled rejection that can crash the process",
                        "wrap its body in `try`/`catch`, or append `.catch(handleError)` to the call",
                    ));
                }
                continue;
            }
            // `Promise.reject(err)` as a statement reports an error as an
            // unhandled rejection on purpose; `Promise.resolve()` does nothing.
            if matches!(
                c.target.as_deref(),
                Some("Promise.reject" | "Promise.resolve")
            ) {
                continue;
            }
            if guarded_callee(cx, c) || settles_elsewhere(cx, c) {
                continue;
            }
            if let Some(what) = common::promise_call(cx, c) {
                out.push(cx.finding(
                    &META,
                    e.span,
                    format!(
                        "`{}` returns a promise ({what}) that is neither awaited, returned nor given a rejection handler: a rejection becomes an unhandled rejection that can crash the process later, and the caller continues before the work is done",
                        callee_text(cx, c)
                    ),
                    "`await` it (or `return` it); if it really must run in the background, write `void promise.catch(handleError)`",
                ));
            }
        }
    }
}

/// The comment right above the statement says it cannot fail ("should not
/// error", "never rejects"): the author considered it.
fn says_cannot_fail(cx: &FileCx, span: Span) -> bool {
    let before = &cx.text[..(span.start as usize).min(cx.text.len())];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let above = &before[..line_start.saturating_sub(1).min(before.len())];
    let prev = above
        .rsplit('\n')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    prev.starts_with("//")
        && [
            "should not error",
            "should not reject",
            "should not throw",
            "never rejects",
            "never throws",
            "cannot reject",
            "can't reject",
            "won't reject",
        ]
        .iter()
        .any(|w| prev.contains(w))
}

/// The call is handed the `resolve`/`reject` of an enclosing promise (or a
/// completion callback): its outcome is routed through them.
fn settles_elsewhere(cx: &FileCx, c: &Call) -> bool {
    c.args.iter().any(|a| {
        let text = cx.source(cx.expr(a.value).span);
        let last = text.rsplit('.').next().unwrap_or(text);
        matches!(last, "resolve" | "reject" | "callback" | "cb" | "done")
    })
}

/// `resolved` where every assignment of `resolved` in the file is
/// `Promise.resolve(...)`.
fn resolved_promise_var(cx: &FileCx, r: ExprId) -> bool {
    let Some(name) = cx.model.name_of(r) else {
        return false;
    };
    let is_resolve = |v: ExprId| {
        cx.call(cx.model.strip(v))
            .is_some_and(|c| c.target.as_deref() == Some("Promise.resolve"))
    };
    let mut any = false;
    for st in &cx.model.stmts {
        if let StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } = &st.kind
            && targets.iter().any(|&t| cx.model.name_of(t) == Some(name))
        {
            if !is_resolve(*v) {
                return false;
            }
            any = true;
        }
    }
    for ex in &cx.model.exprs {
        if let ExprKind::AssignExpr { target, value, .. } = &ex.kind
            && cx.model.name_of(*target) == Some(name)
        {
            if !is_resolve(*value) {
                return false;
            }
            any = true;
        }
    }
    any
}

/// Every link of the chain starting at `id` is `.finally(...)`.
fn only_finally(cx: &FileCx, id: ExprId) -> bool {
    let mut cur = cx.call(id);
    while let Some(c) = cur {
        if !is_chain_link(c) {
            return true;
        }
        if c.name != "finally" {
            return false;
        }
        cur = c.receiver.and_then(|r| cx.call(cx.model.strip(r)));
    }
    true
}

fn is_chain_link(c: &Call) -> bool {
    c.receiver.is_some() && matches!(c.name.as_str(), "then" | "catch" | "finally")
}

/// An async function of this file whose every await is inside a
/// `try`/`catch` and that throws nothing itself: its promise cannot reject,
/// so dropping it loses nothing (a deliberate background task).
fn guarded_callee(cx: &FileCx, c: &Call) -> bool {
    let Some(t) = c.target.as_deref() else {
        return false;
    };
    let Some(f) = cx
        .model
        .function_ids()
        .find(|&f| f.0 != 0 && cx.func(f).qualname == t && cx.func(f).is_async)
    else {
        return false;
    };
    common::unguarded_await(cx, f).is_none()
        && common::stmts_of(cx, f).into_iter().all(|s| {
            !matches!(cx.stmt(s).kind, StmtKind::Raise(_)) || {
                let e = cx.stmt(s).span;
                common::stmts_of(cx, f).into_iter().any(|t| {
                    matches!(&cx.stmt(t).kind, StmtKind::Try { body, handlers, .. }
                        if !handlers.is_empty() && common::block_contains(cx, body, s))
                        && cx.stmt(t).span.start <= e.start
                })
            }
        })
}

fn callee_text(cx: &FileCx, c: &Call) -> String {
    let s = cx.source(cx.expr(c.func).span);
    let s: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.len() > 60 {
        format!("{}…", &s[..s.floor_char_boundary(57)])
    } else {
        s
    }
}

/// A `.then(...)` / `.finally(...)` chain used as a statement with no
/// rejection handler anywhere in it.
fn check_chain(cx: &FileCx, id: ExprId, c: &Call) -> Option<Finding> {
    if !matches!(c.name.as_str(), "then" | "finally") || c.receiver.is_none() {
        return None;
    }
    let mut cur = Some((id, c));
    while let Some((_, call)) = cur {
        match call.name.as_str() {
            "catch" => return None,
            "then" if call.args.len() >= 2 => return None,
            _ => {}
        }
        // A local only ever assigned `Promise.resolve(...)`.
        if call.receiver.is_some_and(|r| resolved_promise_var(cx, r)) {
            return None;
        }
        // `Promise.allSettled(...)` and `Promise.resolve(x)` never reject,
        // nor does an async function of this file that catches everything
        // (only a throwing callback could, and `finally` callbacks rarely do).
        if matches!(
            call.target.as_deref(),
            Some("Promise.allSettled" | "Promise.resolve")
        ) || (guarded_callee(cx, call) && only_finally(cx, id))
        {
            return None;
        }
        cur = call
            .receiver
            .map(|r| cx.model.strip(r))
            .and_then(|r| cx.call(r).map(|rc| (r, rc)));
    }
    Some(cx.finding(
        &META,
        cx.expr(id).span,
        "this promise chain has no rejection handler (`.catch()` or a second `.then` argument): if any step rejects, the error surfaces as an unhandled rejection that can crash the process",
        "end the chain with `.catch(err => ...)`, or `await` it inside a `try`",
    ))
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
async function auditLog(req) {
  await fetch("/audit");
}

function handle(req) {
  auditLog(req); // expect
  fetch("/ping"); // expect
  return process(req);
}
"#,
        r#"
import { writeFile } from "node:fs/promises";

export function save(data) {
  writeFile("/tmp/out.json", JSON.stringify(data)); // expect
}
"#,
        r#"
const nodemailer = require("nodemailer");
const User = require("./models/user");

const transporter = nodemailer.createTransport({ host: "smtp.example" });

function onSignup(user) {
  transporter.sendMail({ to: user.email, subject: "Welcome" }); // expect
  User.updateOne({ _id: user.id }, { welcomed: true }); // expect
  Object.create(null);
}
"#,
        r#"
function load() {
  fetch("/data").then(r => r.json()).then(show); // expect
  fetch("/more").then(r => r.json()).finally(done); // expect
}
"#,
        r#"
async function main() {
  await migrate();
}

(async () => { // expect
  await main();
})();
"#,
        r#"
// file: src/db.ts
export async function saveUser(u: User): Promise<void> {
  await db.insert(u);
}
// file: src/handler.ts
import { saveUser } from "./db";

export function onSignup(u: User) {
  saveUser(u); // expect
}
"#,
    ],
    pass: &[
        r#"
async function auditLog(req) {
  await fetch("/audit");
}

async function handle(req) {
  await auditLog(req);
  void auditLog(req).catch(console.error);
  const p = auditLog(req);
  await p;
  return auditLog(req);
}
"#,
        r#"
function load() {
  fetch("/data").then(r => r.json()).then(show).catch(report);
  fetch("/more").then(show, report);
  fetch("/x").catch(report);
}
"#,
        r#"
(async () => {
  try {
    await main();
  } catch (err) {
    console.error(err);
    process.exitCode = 1;
  }
})();

(async () => {
  await main();
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
"#,
        r#"
async function drain(queue) {
  try {
    await queue.flush();
  } catch (err) {
    console.error(err);
  }
}

async function readAll(reader, onDone, onError) {
  try {
    onDone(await reader.read());
  } catch (e) {
    onError(e);
  }
}

function bodyPromise(reader) {
  return new Promise((resolve, reject) => {
    readAll(reader, resolve, reject);
  });
}

let resolved;
function setImmediateish(cb) {
  if (!resolved) resolved = Promise.resolve();
  resolved.then(() => cb());
}

function close(dispatcher, onClosed) {
  // Should not error.
  dispatcher.close().then(() => queueMicrotask(onClosed));
}

function reportLater(err, results) {
  Promise.reject(err);
  drain(results);
  Promise.allSettled(results).then(log);
  // eslint-disable-next-line @typescript-eslint/no-floating-promises
  fetch("/beacon").then(log);
}
"#,
        r#"
function notAsync() {
  return 1;
}

function caller() {
  notAsync();
  [1, 2, 3].map(x => x * 2);
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(FloatingPromise);
}
