//! JS029: a `new Promise` executor with a path that neither resolves nor
//! rejects (an `error` event or an error callback not wired to `reject`).

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct PromiseNeverSettles;

pub static META: RuleMeta = RuleMeta {
    id: "JS029",
    name: "promise-never-settles",
    category: Category::ResourceLeak,
    severity: Severity::Medium,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "A `new Promise` executor resolves from an event or callback but has a failure path that never settles it: no `error` listener wired to `reject`, or an error branch that returns without rejecting.",
    docs: r#"
A `new Promise((resolve, reject) => ...)` whose executor:

- listens to events of a stream, request or socket (`end`, `finish`,
  `close`, `response`...) and resolves from them, with no `error` listener
  and no use of `reject`; or
- passes a Node-style callback `(err, value) => ...` whose `if (err)` branch
  returns without calling `reject` (or `resolve`), itself or through a
  helper the executor defines that does (`const fail = (err) =>
  fs.close(fd, () => reject(err))`).

Test code is left out: a test whose promise never settles times out, and
the runner reports it. So is a promise only raced against an
`events.once(..)` promise (`Promise.race([once(s, "end"), new
Promise(r => s.once("data", r))])`): `once` rejects on `error`, so the
race settles, and the pending loser is awaited by nothing. Nor is a
promise resolved on an iframe's `load` (`document.createElement("iframe")`):
an iframe fires `load` when its page fails too, and has no `error` event,
and neither has the page's own `load` (`window.addEventListener("load",
resolve)`).
Nor is a promise resolved on an event of the file's own `new
EventEmitter()` that it only ever uses through its methods (never handing
it on) and never makes emit `error`: there is no failure to miss.

## Why

On that path the promise stays pending forever. Everything awaiting it
hangs — the request, the job, the shutdown sequence — holding its memory,
sockets and locks, and nothing is logged because no error ever surfaces. For
an emitter, an `error` event with no listener is worse: Node throws it and
crashes the process.

## Example

```javascript
function readAll(stream) {
  return new Promise((resolve) => {
    const chunks = [];
    stream.on("data", (c) => chunks.push(c));
    stream.on("end", () => resolve(Buffer.concat(chunks)));
  });
}
```

## Fix

Wire every failure path to `reject` (or use `events.once`,
`stream.promises.finished`, `util.promisify`).

```javascript
function readAll(stream) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    stream.on("data", (c) => chunks.push(c));
    stream.on("end", () => resolve(Buffer.concat(chunks)));
    stream.on("error", reject);
  });
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for PromiseNeverSettles {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for (e, c) in cx.calls_to(&["Promise"]) {
            let ex = cx.expr(e);
            // In a test a promise that never settles times the test out:
            // the runner reports it.
            if !c.is_new || common::in_test(cx, cx.func_of(e)) {
                continue;
            }
            let Some(exec) = c.positional(0).and_then(|a| common::callback_fn(cx, a)) else {
                continue;
            };
            let params = &cx.func(exec).params;
            let resolve = params.first().map(|p| p.name.as_str()).unwrap_or("");
            let reject = params.get(1).map(|p| p.name.as_str());
            if resolve.is_empty() || resolve.starts_with(['{', '[']) {
                continue;
            }
            let all = cx.with_nested(exec);
            let names_used = |name: &str| {
                all.iter()
                    .any(|&g| common::exprs_of(cx, g).any(|x| cx.model.name_of(x) == Some(name)))
            };
            let reject_used = reject.is_some_and(names_used);
            let msg = if let Some(ev) = event_resolution(cx, exec, resolve) {
                // `close` and a process's `exit` fire after a failure too.
                if reject_used
                    || has_error_listener(cx, &all)
                    || matches!(ev.as_str(), "close" | "exit")
                    || raced_with_once(cx, e)
                {
                    continue;
                }
                format!(
                    "this promise resolves on `{ev}` but nothing rejects it on `error`: if the stream or request fails, it stays pending forever and everything awaiting it hangs (and an `error` event with no listener crashes the process)"
                )
            } else if let Some(span) = dropped_error_branch(cx, &all, resolve, reject) {
                let _ = span;
                "the error branch of this callback returns without calling `reject`: on failure the promise never settles and its awaiters hang forever".to_string()
            } else {
                continue;
            };
            out.push(cx.finding(
                &META,
                ex.span,
                msg,
                "wire every failure path to `reject` (`emitter.on('error', reject)`, `if (err) return reject(err)`), or use `events.once`/`stream.promises.finished`/`util.promisify`",
            ));
        }
    }
}

/// The promise is only raced (`Promise.race([onEnd, new Promise(r =>
/// s.once("data", r))])`) against an `events.once(..)` promise, directly
/// or through a `const` of the function: `events.once` rejects when the
/// emitter emits `error`, so the race settles on failure, and the promise
/// left pending is a loser nothing waits on.
fn raced_with_once(cx: &FileCx, promise: ExprId) -> bool {
    let Parent::Expr(arr) = cx.tree.expr_parent(promise) else {
        return false;
    };
    let ExprKind::Collection { elems, .. } = &cx.expr(arr).kind else {
        return false;
    };
    let Parent::Expr(race) = cx.tree.expr_parent(arr) else {
        return false;
    };
    if cx.call(race).is_none_or(|c| c.name != "race") {
        return false;
    }
    let f = cx.func_of(promise);
    let is_once = |v: ExprId| cx.call(cx.model.strip(v)).is_some_and(|c| c.name == "once");
    elems.iter().any(|&el| {
        el != promise
            && (is_once(el)
                || cx.model.name_of(el).is_some_and(|n| {
                    common::stmts_of(cx, f).any(|s| {
                        matches!(&cx.stmt(s).kind, StmtKind::Assign {
                            targets,
                            value: Some(v),
                            op: AssignOp::Declare { .. },
                        } if targets.len() == 1
                            && cx.model.name_of(targets[0]) == Some(n)
                            && is_once(*v))
                    })
                }))
    })
}

/// The event whose listener calls `resolve`, when the executor resolves
/// from an event listener.
fn event_resolution(cx: &FileCx, exec: FuncId, resolve: &str) -> Option<String> {
    let mut found: Option<String> = None;
    for g in cx.with_nested(exec) {
        for e in common::calls_of(cx, g) {
            let c = cx.call(e).unwrap();
            if !matches!(
                c.name.as_str(),
                "on" | "once" | "addListener" | "addEventListener"
            ) {
                continue;
            }
            let Some(ev) = common::str_arg(cx, c, 0) else {
                continue;
            };
            // Lifecycle events of streams, requests, sockets and processes,
            // which have an `error` counterpart (custom events do not).
            if !matches!(
                ev,
                "end"
                    | "finish"
                    | "close"
                    | "response"
                    | "exit"
                    | "open"
                    | "connect"
                    | "ready"
                    | "listening"
                    | "drain"
                    | "data"
                    | "readable"
                    | "load"
                    | "message"
            ) {
                continue;
            }
            // An iframe fires `load` whether its page loaded or failed
            // (it has no `error` to listen to): the promise settles.
            if ev == "load" && c.receiver.is_some_and(|r| iframe_element(cx, r)) {
                continue;
            }
            // A page's own `load` (`window.addEventListener("load", ..)`)
            // has no failure counterpart either: the page loads.
            if ev == "load"
                && c.receiver
                    .and_then(|r| cx.model.dotted(r))
                    .is_some_and(|r| matches!(r.as_str(), "window" | "self" | "globalThis"))
            {
                continue;
            }
            // The file's own `new EventEmitter()`, kept to itself and never
            // made to emit `error`: its events are the file's, and there is
            // no failure to miss.
            if c.receiver
                .is_some_and(|r| private_emitter_without_errors(cx, r))
            {
                continue;
            }
            let Some(cb) = c.positional(1) else { continue };
            let resolves = cx.model.name_of(cb) == Some(resolve)
                || common::callback_fn(cx, cb).is_some_and(|h| {
                    cx.with_nested(h).into_iter().any(|k| {
                        common::calls_of(cx, k).any(|x| {
                            cx.call(x).unwrap().name == resolve
                                && cx.call(x).unwrap().receiver.is_none()
                        })
                    })
                });
            if resolves {
                // Resolving on `close` as well settles after a failure too.
                if found.as_deref() != Some("close") {
                    found = Some(ev.to_string());
                }
            }
        }
    }
    found
}

/// `emitter` holds only a `new EventEmitter()` of the file, is handed to
/// no call and returned nowhere, and the file never emits `error` on it.
fn private_emitter_without_errors(cx: &FileCx, e: ExprId) -> bool {
    let Some(name) = cx.model.name_of(e) else {
        return false;
    };
    let made_here = crate::util::every_assigned_value(
        cx.model,
        |t| cx.model.name_of(t) == Some(name),
        |v| {
            cx.call(cx.model.strip(v))
                .is_some_and(|c| c.is_new && c.name == "EventEmitter")
        },
    );
    // Every use is a member access (`emitter.once(..)`) or its binding:
    // anything else (an argument, a return, an object literal) hands it on.
    let escapes_or_errs = cx
        .model
        .exprs
        .iter()
        .enumerate()
        .any(|(i, x)| match &x.kind {
            ExprKind::Call(c) => {
                c.name == "emit"
                    && c.receiver
                        .is_some_and(|r| cx.model.name_of(r) == Some(name))
                    && common::str_arg(cx, c, 0).is_none_or(|ev| ev == "error")
            }
            ExprKind::Name { id, .. } if id.as_str() == name => {
                match cx.tree.expr_parent(ExprId(i as u32)) {
                    unsnarl_model::walk::Parent::Expr(p) => !matches!(
                        &cx.expr(p).kind,
                        ExprKind::Attr { obj, .. } if *obj == ExprId(i as u32)
                    ),
                    unsnarl_model::walk::Parent::Stmt(s) => !matches!(
                        &cx.stmt(s).kind,
                        StmtKind::Assign { targets, .. } if targets.contains(&ExprId(i as u32))
                    ),
                    _ => true,
                }
            }
            _ => false,
        });
    made_here && !escapes_or_errs
}

/// `iframe` holds only `document.createElement("iframe")`.
fn iframe_element(cx: &FileCx, e: ExprId) -> bool {
    let Some(name) = cx.model.name_of(e) else {
        return false;
    };
    crate::util::every_assigned_value(
        cx.model,
        |t| cx.model.name_of(t) == Some(name),
        |v| {
            cx.call(cx.model.strip(v)).is_some_and(|c| {
                c.name == "createElement"
                    && matches!(common::str_arg(cx, c, 0), Some(tag) if tag.eq_ignore_ascii_case("iframe"))
            })
        },
    )
}

fn has_error_listener(cx: &FileCx, all: &[FuncId]) -> bool {
    all.iter().any(|&g| {
        common::calls_of(cx, g).any(|e| {
            let c = cx.call(e).unwrap();
            (matches!(
                c.name.as_str(),
                "on" | "once" | "addListener" | "addEventListener"
            ) && matches!(
                common::str_arg(cx, c, 0),
                Some("error" | "abort" | "timeout")
            )) || c.name == "catch"
                || matches!(
                    c.target.as_deref(),
                    Some("stream.pipeline" | "stream.finished")
                )
        })
    })
}

/// A Node-style callback `(err, ...) => { if (err) { ...; return; } ... }`
/// whose error branch settles nothing.
fn dropped_error_branch(
    cx: &FileCx,
    all: &[FuncId],
    resolve: &str,
    reject: Option<&str>,
) -> Option<Span> {
    let names = [Some(resolve), reject, Some("reject"), Some("resolve")];
    let mentions = |text: &str| names.into_iter().flatten().any(|n| has_word(text, n));
    // Helpers the executor defines that settle the promise (`const fail =
    // (err) => fs.close(fd, () => reject(err))`): calling one settles too.
    let settlers: Vec<&str> = all
        .iter()
        .map(|&g| cx.func(g))
        .filter(|f| !f.name.is_empty() && mentions(cx.source(f.span)))
        .map(|f| f.name.as_str())
        .collect();
    for &g in all {
        let func = cx.func(g);
        let Some(p0) = func.params.first() else {
            continue;
        };
        if !matches!(p0.name.as_str(), "err" | "error" | "e") || func.kind != FnKind::Closure {
            continue;
        }
        for s in common::stmts_of(cx, g) {
            let StmtKind::If { cond, then, .. } = &cx.stmt(s).kind else {
                continue;
            };
            if cx.model.name_of(*cond) != Some(p0.name.as_str()) {
                continue;
            }
            // Any mention of `resolve`/`reject` in the branch, callbacks
            // included (`return pool.end(() => reject(err))`), or of a
            // helper that settles (`return fail(err)`).
            let settles = then.iter().any(|&b| {
                let text = cx.source(cx.stmt(b).span);
                mentions(text) || settlers.iter().any(|n| has_word(text, n))
            });
            let returns = then
                .last()
                .is_some_and(|&l| matches!(cx.stmt(l).kind, StmtKind::Return(_)));
            if returns && !settles && !crate::util::always_raises(cx.model, then) {
                return Some(cx.stmt(s).span);
            }
        }
    }
    None
}

fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        let ident =
            |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$');
        !ident(before) && !ident(after)
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
const isLinkLogged = (fs, file, logger) =>
  new Promise((resolve) => { // expect
    const logError = (err) => logger.warn(err.code);
    fs.lstat(file, (err, stats) => {
      if (err) return logError(err);
      resolve(stats.isSymbolicLink());
    });
  });

const fs = require("fs");

function readAll(stream) {
  return new Promise((resolve) => { // expect
    const chunks = [];
    stream.on("data", (c) => chunks.push(c));
    stream.on("end", () => resolve(Buffer.concat(chunks)));
  });
}

function readConfig(path) {
  return new Promise((resolve, reject) => { // expect
    fs.readFile(path, "utf8", (err, text) => {
      if (err) {
        console.error(err);
        return;
      }
      resolve(JSON.parse(text));
    });
  });
}

async function* rowsRacedWithoutOnce(stream) {
  const ended = new Promise((resolve) => stream.once("end", resolve)); // expect
  while (true) {
    const row = await Promise.race([ended, new Promise((resolve) => stream.once("data", resolve))]); // expect
    if (row === undefined) break;
    yield row;
  }
}
"#,
        r#"
// A script element fires `error` when it fails to load.
function createWindow(uri) {
  return new Promise((resolve) => { // expect
    const frame = document.createElement("script");
    frame.addEventListener("load", () => resolve(frame.contentWindow));
    frame.setAttribute("src", uri);
    document.body.appendChild(frame);
  });
}
"#,
        r#"
const EventEmitter = require("events");

// The emitter is handed out: whoever holds it may emit `error` instead.
function createWorker() {
  const events = new EventEmitter();
  const stop = () => new Promise((resolve) => events.once("end", resolve)); // expect
  return { events, stop };
}

module.exports = createWorker;
"#,
    ],
    pass: &[
        r#"
// The page's own load: there is no failure to wait for instead.
export const pageLoaded = () =>
  new Promise((resolve) => {
    if (typeof document === "undefined" || document.readyState === "complete") {
      return resolve();
    }
    window.addEventListener("load", resolve);
  });
"#,
        r#"
const EventEmitter = require("events");

// The file's own emitter: `start` emits `end` on every way out, and no
// one else can reach it to emit `error`.
function createFetcher(fetchOnce) {
  const emitter = new EventEmitter();
  let isRunning = false;

  const start = async () => {
    isRunning = true;
    try {
      while (isRunning) {
        await fetchOnce();
      }
    } catch (error) {
      isRunning = false;
      emitter.emit("end");
      throw error;
    }
    emitter.emit("end");
  };

  const stop = async () => {
    if (!isRunning) return;
    isRunning = false;
    await new Promise((resolve) => emitter.once("end", () => resolve()));
  };

  return { start, stop };
}

module.exports = createFetcher;
"#,
        r#"
const isLink = (fs, file) =>
  new Promise((resolve) => {
    const resolveError = (err) => resolve(err.code !== "ENOENT");
    fs.lstat(file, (err, stats) => {
      if (err) return resolveError(err);
      resolve(stats.isSymbolicLink());
    });
  });

const readHeader = (fs, file) =>
  new Promise((resolve, reject) => {
    fs.open(file, "r", (err, fd) => {
      if (err) return reject(err);
      const fail = (err) => {
        fs.close(fd, () => reject(err));
      };
      fs.read(fd, Buffer.alloc(16), 0, 16, 0, (err, n, buf) => {
        if (err) return fail(err);
        fs.close(fd, () => resolve(buf));
      });
    });
  });
"#,
        r#"
const { once } = require("events");

async function* rows(stream) {
  const onEnd = once(stream, "end");
  while (true) {
    stream.resume();
    const row = await Promise.race([onEnd, new Promise((resolve) => stream.once("data", resolve))]);
    if (row === undefined || row.length === 0) break;
    yield row;
  }
}
"#,
        r#"
// file: test/echo.test.js
const { test } = require("node:test");

test("echo answers", async () => {
  const sock = connect();
  await new Promise((resolve) => sock.once("data", resolve));
});
"#,
        r#"
const fs = require("fs");

function readAll(stream) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    stream.on("data", (c) => chunks.push(c));
    stream.on("end", () => resolve(Buffer.concat(chunks)));
    stream.on("error", reject);
  });
}

function readConfig(path) {
  return new Promise((resolve, reject) => {
    fs.readFile(path, "utf8", (err, text) => {
      if (err) return reject(err);
      resolve(JSON.parse(text));
    });
  });
}

const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function refreshed(server) {
  return new Promise((resolve) => server.once("refreshed", resolve));
}

function closed(conn) {
  return new Promise((resolve) => {
    conn.once("end", resolve);
    conn.once("close", resolve);
  });
}

// A running child process always exits, whatever went wrong in it.
function exited(child) {
  return new Promise((resolve) => {
    child.once("exit", (code) => resolve(code));
  });
}
"#,
        r#"
// An iframe fires `load` whether its page loaded or not.
function createWindow(uri) {
  return new Promise((resolve) => {
    const frame = document.createElement("iframe");
    frame.addEventListener("load", () => resolve(frame.contentWindow));
    frame.setAttribute("src", uri);
    document.body.appendChild(frame);
  });
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(PromiseNeverSettles);
}
