//! JS026: reconnects and periodic network refreshes on a fixed interval
//! with no jitter.

use super::common;
use super::reconnect::{close_handlers, is_reconnect, registrar};
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct FixedIntervalNoJitter;

pub static META: RuleMeta = RuleMeta {
    id: "JS026",
    name: "fixed-interval-no-jitter",
    category: Category::ThunderingHerd,
    severity: Severity::Low,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "A reconnect after a constant delay, or a periodic network refresh on a fixed interval, with no jitter: every client fires at the same moment.",
    docs: r#"
`setTimeout(connect, 5000)` in a `close`/`error` handler, `setInterval(refresh,
60_000)` or a self-rescheduling `setTimeout(poll, 30_000)` whose callback
talks to the network, with a constant delay and no random component.

## Why

Clients that disconnect together (a server restart, a network blip) all
reconnect exactly N ms later, and fleets started together poll in lockstep:
the server sees synchronized spikes instead of a spread-out load, and a
restart can be knocked over by its own clients.

## Example

```javascript
function connect() {
  const ws = new WebSocket(URL);
  ws.on("close", () => setTimeout(connect, 5000));
}
```

## Fix

Add jitter (and grow the reconnect delay).

```javascript
function connect(attempt = 0) {
  const ws = new WebSocket(URL);
  ws.on("close", () => setTimeout(() => connect(attempt + 1), Math.random() * Math.min(30_000, 1000 * 2 ** attempt)));
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for FixedIntervalNoJitter {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        // Reconnects on a constant delay.
        for g in close_handlers(cx) {
            if common::in_test(cx, g) {
                continue;
            }
            let reg = registrar(cx, g);
            for e in common::calls_of(cx, g) {
                let c = cx.call(e).unwrap();
                if c.target.as_deref() != Some("setTimeout") {
                    continue;
                }
                let Some(cb) = c.positional(0) else { continue };
                let reconnects = match common::callback_fn(cx, cb) {
                    Some(h) if cx.func(h).kind == FnKind::Closure => {
                        common::calls_of(cx, h).any(|x| is_reconnect(cx, cx.call(x).unwrap(), reg))
                    }
                    Some(h) => {
                        Some(h) == reg || cx.func(h).name.to_ascii_lowercase().contains("connect")
                    }
                    None => cx
                        .model
                        .name_of(cb)
                        .is_some_and(|n| n.to_ascii_lowercase().contains("connect")),
                };
                if !reconnects || !constant_delay(cx, c.positional(1)) {
                    continue;
                }
                out.push(cx.finding(
                    &META,
                    cx.expr(e).span,
                    "this reconnect waits a fixed delay with no jitter: every client that lost the connection together reconnects at the same moment, hitting the server in one spike",
                    "add jitter and grow the delay: `setTimeout(connect, Math.random() * Math.min(cap, base * 2 ** attempt))`",
                ));
            }
        }
        // Periodic network refreshes.
        for (e, c) in cx.calls_to(&["setInterval", "setTimeout"]) {
            let ex = cx.expr(e);
            let f = cx.func_of(e);
            if common::in_test(cx, f) {
                continue;
            }
            let periodic = match c.target.as_deref() {
                Some("setInterval") => true,
                // `function poll() { ...; setTimeout(poll, 30000) }`
                Some("setTimeout") => c
                    .positional(0)
                    .and_then(|a| common::callback_fn(cx, a))
                    .is_some_and(|h| h == f || cx.tree.func_ancestors(cx.model, f).any(|a| a == h)),
                _ => false,
            };
            if !periodic || !constant_delay(cx, c.positional(1)) {
                continue;
            }
            let Some(cb) = c.positional(0).and_then(|a| common::callback_fn(cx, a)) else {
                continue;
            };
            if !does_network(cx, cb) {
                continue;
            }
            out.push(cx.finding(
                &META,
                ex.span,
                "this periodic refresh runs on a fixed interval with no jitter: every instance started together polls the server at the same instant, in synchronized spikes",
                "add jitter to each period (e.g. `base * (0.8 + Math.random() * 0.4)`, rescheduling with `setTimeout`)",
            ));
        }
    }
}

/// A delay that is a constant (a literal or a constant name) with no
/// randomness.
fn constant_delay(cx: &FileCx, d: Option<ExprId>) -> bool {
    let Some(d) = d else { return true };
    if common::has_jitter(cx, d) || common::grows(cx, d) {
        return false;
    }
    if cx.model.int_value(d).is_some() {
        return true;
    }
    // A local: judge its initializer.
    if let Some(name) = cx.model.name_of(d) {
        let f = cx.func_of(d);
        if common::declares_local(cx, f, name) {
            for s in common::stmts_of(cx, f) {
                if let StmtKind::Assign {
                    targets,
                    value: Some(v),
                    ..
                } = &cx.stmt(s).kind
                    && targets.iter().any(|&t| cx.model.name_of(t) == Some(name))
                {
                    return cx.model.int_value(*v).is_some() && !common::has_jitter(cx, *v);
                }
            }
            return false;
        }
    }
    // SCREAMING_CASE constants and `config.pollInterval` style settings.
    cx.model.dotted(d).is_some_and(|n| {
        let last = n.rsplit('.').next().unwrap_or(&n);
        let l = last.to_ascii_lowercase();
        last.chars()
            .all(|ch| ch.is_ascii_uppercase() || ch == '_' || ch.is_ascii_digit())
            || (n.contains('.')
                && (l.ends_with("interval") || l.ends_with("delay") || l.ends_with("ms")))
    })
}

/// The callback (or what it calls in this file) refreshes something from
/// the network.
fn does_network(cx: &FileCx, f: FuncId) -> bool {
    if names_refresh(&cx.func(f).name) {
        return true;
    }
    cx.with_nested(f).into_iter().any(|g| {
        common::calls_of(cx, g).any(|e| {
            let c = cx.call(e).unwrap();
            if c.is_new {
                return false;
            }
            // Reads from a remote (a refresh), not writes such as a batch
            // flush or a metrics push.
            matches!(
                c.target.as_deref(),
                Some(
                    "fetch"
                        | "undici.fetch"
                        | "undici.request"
                        | "node-fetch"
                        | "axios"
                        | "axios.get"
                        | "axios.request"
                        | "got"
                        | "got.get"
                        | "ky.get"
                        | "http.get"
                        | "https.get"
                )
            ) || names_refresh(&c.name)
        })
    })
}

/// A function or method name that says it refreshes from a remote
/// (`refreshToken`, `pollStatus`, `syncDevices`). Node's `Sync` suffix
/// (`readSync`, `existsSync`) names the blocking variant of a local call,
/// not a sync with a server, so it does not count.
fn names_refresh(name: &str) -> bool {
    let name = match name.strip_suffix("Sync") {
        Some(stem) if !stem.is_empty() => stem,
        _ => name,
    }
    .to_ascii_lowercase();
    ["refresh", "poll", "sync", "reload", "fetch"]
        .iter()
        .any(|w| name.contains(w))
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[r#"
function connect() {
  const ws = new WebSocket(URL);
  ws.on("close", () => setTimeout(connect, 5000)); // expect
}

setInterval(async () => { // expect
  const res = await fetch("https://config.example/flags");
  flags = await res.json();
}, 60000);

async function poll() {
  await syncJobs();
  setTimeout(poll, POLL_MS); // expect
}
"#],
    pass: &[
        r#"
// Blinks a local pin: `readSync` is Node's blocking read, not a sync with a server.
const led = new Gpio(17, "out");
const blink = setInterval(() => led.writeSync(led.readSync() ^ 1), 200);
"#,
        r#"
function connect(attempt = 0) {
  const ws = new WebSocket(URL);
  ws.on("close", () => setTimeout(() => connect(attempt + 1), Math.random() * 1000 * 2 ** attempt));
}

setInterval(() => {
  metrics.gauge("heap", process.memoryUsage().heapUsed);
}, 10000);

const batch = [];
async function flush() {
  if (batch.length) await db.events.insertMany(batch.splice(0));
}
setInterval(() => flush().catch(log.error), 1000);

async function poll() {
  await syncJobs();
  setTimeout(poll, POLL_MS * (0.8 + Math.random() * 0.4));
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(FixedIntervalNoJitter);
}
