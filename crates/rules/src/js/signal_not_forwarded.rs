//! JS023: a function that receives an AbortSignal calls `fetch` (or another
//! signal-taking API) without passing it on.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::{Parent, exprs_under};
use unsnarl_model::*;

pub struct SignalNotForwarded;

pub static META: RuleMeta = RuleMeta {
    id: "JS023",
    name: "signal-not-forwarded",
    category: Category::ContextSevered,
    severity: Severity::Medium,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "A function that receives an AbortSignal (`signal` parameter or `options.signal`) calls `fetch`, axios, a timer or a helper that takes a signal without passing it on: cancelling the caller does not stop that work.",
    docs: r#"
A function with a `signal` parameter (or `{ signal }`, or an options
parameter whose `.signal` it reads) that calls `fetch`, `undici.request`,
axios, `timers/promises.setTimeout`, `events.once`, `stream.pipeline`, or a
function of the same file that accepts a `signal`, without giving it a
signal. A call whose result the function stops by hand when the signal
aborts (`signal.addEventListener("abort", () => child.kill())`) is
left alone: the cancellation reaches it that way.

## Why

Cancellation in JavaScript only reaches the code that is handed the signal.
The caller aborts (the user navigated away, the request timed out, the
server is shutting down) and this function's own work carries on: the HTTP
request runs to completion, the backoff sleep keeps the process alive, and
their results are thrown away.

## Example

```javascript
export async function loadReport(id, { signal } = {}) {
  const meta = await fetch(`/api/reports/${id}`, { signal });
  const body = await fetch(`/api/reports/${id}/body`);
  return { meta: await meta.json(), body: await body.text() };
}
```

## Fix

Pass the signal to every call that accepts one.

```javascript
export async function loadReport(id, { signal } = {}) {
  const meta = await fetch(`/api/reports/${id}`, { signal });
  const body = await fetch(`/api/reports/${id}/body`, { signal });
  return { meta: await meta.json(), body: await body.text() };
}
```
"#,
    examples: &EXAMPLES,
};

/// Known APIs that accept an AbortSignal.
fn takes_signal(t: &str) -> bool {
    matches!(
        t,
        "fetch"
            | "undici.fetch"
            | "undici.request"
            | "undici.stream"
            | "node-fetch"
            | "axios"
            | "axios.get"
            | "axios.post"
            | "axios.put"
            | "axios.patch"
            | "axios.delete"
            | "axios.request"
            | "timers/promises.setTimeout"
            | "timers/promises.setInterval"
            | "events.once"
            | "events.on"
            | "stream/promises.pipeline"
            | "stream/promises.finished"
            | "child_process.exec"
            | "child_process.spawn"
            | "child_process.execFile"
    )
}

/// How `f` receives a signal: the expression to pass, if it does.
fn signal_in_scope(cx: &FileCx, f: FuncId) -> Option<String> {
    let func = cx.func(f);
    for p in &func.params {
        let is_sig_type =
            p.ty.as_ref()
                .is_some_and(|t| t.text.trim_end_matches(['?', ' ']).ends_with("AbortSignal"));
        if is_sig_type || (p.name == "signal" && !posix_signal(cx, f, p)) {
            return Some(p.name.to_string());
        }
        if p.name.starts_with('{')
            && p.name
                .split(|c: char| !c.is_alphanumeric())
                .any(|w| w == "signal")
        {
            return Some("signal".into());
        }
    }
    // `options.signal` read in the body.
    for e in common::exprs_of(cx, f) {
        if let ExprKind::Attr { obj, name, .. } = &cx.expr(e).kind
            && name == "signal"
            && let Some(o) = cx.model.name_of(*obj)
            && func.params.iter().any(|p| p.name == o)
        {
            return Some(format!("{o}.signal"));
        }
    }
    None
}

/// A `signal` parameter that is a POSIX signal name (`kill(signal =
/// 'SIGTERM')`), not an AbortSignal.
fn posix_signal(cx: &FileCx, f: FuncId, p: &Param) -> bool {
    if p.default.is_some_and(|d| common::str_lit(cx, d).is_some()) {
        return true;
    }
    if cx.func(f).name.to_ascii_lowercase().contains("kill") {
        return true;
    }
    common::exprs_of(cx, f).any(|e| {
        let Some(c) = cx.call(e) else { return false };
        let n = c.name.to_ascii_lowercase();
        (n.contains("kill") || n == "on" || n == "once")
            && c.args.iter().any(|a| cx.model.name_of(a.value) == Some(p.name.as_str()))
    }) || common::exprs_of(cx, f).any(|e| {
        matches!(&cx.expr(e).kind, ExprKind::Binary { left, right, .. }
            if (cx.model.name_of(*left) == Some(p.name.as_str()) && common::str_lit(cx, *right).is_some())
                || (cx.model.name_of(*right) == Some(p.name.as_str()) && common::str_lit(cx, *left).is_some()))
    })
}

impl Rule for SignalNotForwarded {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        // Every way a function receives a signal spells `signal` or
        // `AbortSignal` in the source: a file with neither has none.
        if common::skip_file(cx) || !cx.text.contains("ignal") {
            return;
        }
        // Functions of this file that take a signal.
        let takers: Vec<String> = cx
            .model
            .function_ids()
            .filter(|&f| {
                f.0 != 0 && !cx.func(f).qualname.is_empty() && signal_in_scope(cx, f).is_some()
            })
            .map(|f| cx.func(f).qualname.to_string())
            .collect();
        for f in cx.model.function_ids() {
            if f.0 == 0 || common::in_test(cx, f) {
                continue;
            }
            let Some(sig) = signal_in_scope(cx, f) else {
                continue;
            };
            // The function and its closures (which see the same signal).
            for g in cx.with_nested(f) {
                if g != f && signal_in_scope(cx, g).is_some() {
                    continue;
                }
                for e in common::calls_of(cx, g) {
                    let c = cx.call(e).unwrap();
                    let Some(t) = c.target.as_deref() else {
                        continue;
                    };
                    if !takes_signal(t) && !takers.iter().any(|q| q == t) {
                        continue;
                    }
                    if mentions_signal(cx, e)
                        || t == cx.func(f).qualname
                        || raced_with_signal(cx, e)
                        || stopped_on_abort(cx, f, e)
                    {
                        continue;
                    }
                    out.push(cx.finding(
                        &META,
                        cx.expr(e).span,
                        format!(
                            "{} receives an AbortSignal (`{sig}`) but calls `{}` without it: when the caller aborts, this call keeps running and its result is thrown away",
                            cx.func_display(f),
                            cx.snippet(cx.expr(c.func).span)
                        ),
                        format!("pass the signal on (`{{ signal: {sig} }}`, combined with a timeout via `AbortSignal.any([...])` if needed)"),
                    ));
                }
            }
        }
    }
}

/// The call's result is stopped by hand when the signal aborts: `const
/// child = spawn(..)` and, in the function, `signal.addEventListener(
/// "abort", () => child.kill())`. The signal reaches the work that way.
fn stopped_on_abort(cx: &FileCx, f: FuncId, call: ExprId) -> bool {
    let Parent::Stmt(s) = cx.tree.expr_parent(call) else {
        return false;
    };
    let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind else {
        return false;
    };
    let Some(result) = targets.first().and_then(|&t| cx.model.name_of(t)) else {
        return false;
    };
    cx.with_nested(f).into_iter().any(|g| {
        common::calls_of(cx, g).any(|e| {
            let c = cx.call(e).unwrap();
            c.name == "addEventListener"
                && c.positional(0).and_then(|a| common::str_lit(cx, a)) == Some("abort")
                && c.receiver.is_some_and(|r| {
                    cx.source(cx.expr(r).span)
                        .to_ascii_lowercase()
                        .contains("signal")
                })
                && c.positional(1).is_some_and(|l| {
                    exprs_under(cx.model, l)
                        .into_iter()
                        .any(|x| cx.model.name_of(x) == Some(result))
                        || common::callback_fn(cx, l).is_some_and(|h| {
                            common::exprs_of(cx, h).any(|x| cx.model.name_of(x) == Some(result))
                        })
                })
        })
    })
}

/// The call is one of the entries of `Promise.race([...])` (or
/// `Promise.any`), directly or under `.then`/`.catch`, and another entry
/// gets the signal: an abort settles the race, and what this call still
/// waits for is dropped with it (`Promise.race([rl.question(q, { signal }),
/// once(rl, "error")])`).
fn raced_with_signal(cx: &FileCx, call: ExprId) -> bool {
    let mut e = call;
    // Up through the promise chain the call starts (`once(..).then(..)`).
    let entry = loop {
        let Parent::Expr(p) = cx.tree.expr_parent(e) else {
            return false;
        };
        match &cx.expr(p).kind {
            ExprKind::Collection { elems, .. } if elems.contains(&e) => break p,
            ExprKind::Attr { .. } => e = p,
            ExprKind::Call(c) if c.func == e => e = p,
            _ => return false,
        }
    };
    let ExprKind::Collection { elems, .. } = &cx.expr(entry).kind else {
        return false;
    };
    let Parent::Expr(outer) = cx.tree.expr_parent(entry) else {
        return false;
    };
    let races = cx.call(outer).is_some_and(|c| {
        matches!(c.target.as_deref(), Some("Promise.race" | "Promise.any"))
            && c.args.iter().any(|a| a.value == entry)
    });
    races
        && elems.iter().filter(|&&x| x != e).any(|&x| {
            exprs_under(cx.model, x)
                .into_iter()
                .any(|y| cx.call(y).is_some() && mentions_signal(cx, y))
        })
}

/// Some argument of the call mentions a signal (or spreads options that
/// may carry one).
fn mentions_signal(cx: &FileCx, call: ExprId) -> bool {
    let c = cx.call(call).unwrap();
    c.args.iter().any(|a| {
        exprs_under(cx.model, a.value)
            .into_iter()
            .any(|x| match &cx.expr(x).kind {
                ExprKind::Name { id, .. } => {
                    let l = id.to_ascii_lowercase();
                    l.contains("signal")
                        || l.contains("opts")
                        || l.contains("options")
                        || l == "init"
                        || l == "config"
                }
                ExprKind::Attr { name, .. } => name.to_ascii_lowercase().contains("signal"),
                ExprKind::Collection { keys, .. } => keys.iter().flatten().any(|k| k == "signal"),
                ExprKind::Spread(_) => true,
                _ => false,
            })
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";

async function waitClosed(rl, signal) {
  await Promise.race([
    once(rl, "close"), // expect
    rl.question("?"),
  ]);
}

async function download(url, signal) {
  const res = await fetch(url); // expect
  await sleep(100); // expect
  return res.text();
}

async function sync(ids, options) {
  if (options.signal.aborted) return;
  for (const id of ids) {
    await download(`/items/${id}`); // expect
  }
}
"#,
        r#"
import { spawn } from "node:child_process";

export function recordAudio({ signal } = {}) {
  return new Promise((resolve, reject) => {
    const ffmpeg = spawn("ffmpeg", ["-f", "pulse", "-i", "default", "pipe:1"]); // expect
    const chunks = [];
    ffmpeg.stdout.on("data", (c) => chunks.push(c));
    ffmpeg.on("close", () => resolve(Buffer.concat(chunks)));
    ffmpeg.on("error", reject);
    signal?.addEventListener("abort", () => reject(signal.reason));
  });
}
"#,
    ],
    pass: &[
        r#"
import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";

async function download(url, signal) {
  const res = await fetch(url, { signal });
  await sleep(100, undefined, { signal });
  return res.text();
}

async function sync(ids, options) {
  for (const id of ids) {
    await download(`/items/${id}`, options.signal);
  }
}

async function plain(url) {
  return fetch(url);
}

async function ask(rl, prompt, { signal }) {
  return Promise.race([
    rl.question(prompt, { signal }),
    once(rl, "error"),
    once(rl, "SIGINT").then(() => {
      throw new Error("canceled");
    }),
  ]);
}

async function kill(child, signal = "SIGTERM") {
  child.kill(signal);
  await fetch("/children/exited", { method: "POST" });
}
"#,
        r#"
import { spawn } from "node:child_process";

export function recordAudio({ signal } = {}) {
  return new Promise((resolve, reject) => {
    const ffmpeg = spawn("ffmpeg", ["-f", "pulse", "-i", "default", "pipe:1"]);
    const chunks = [];
    ffmpeg.stdout.on("data", (c) => chunks.push(c));
    ffmpeg.on("close", () => resolve(Buffer.concat(chunks)));
    ffmpeg.on("error", reject);
    // Aborting stops the recording: the signal reaches the child this way.
    signal?.addEventListener("abort", () => ffmpeg.kill("SIGTERM"));
  });
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(SignalNotForwarded);
}
