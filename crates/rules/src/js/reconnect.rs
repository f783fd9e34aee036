//! JS025: reconnecting from a `close`/`error` handler with no delay.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct ReconnectWithoutDelay;

pub static META: RuleMeta = RuleMeta {
    id: "JS025",
    name: "reconnect-without-delay",
    category: Category::RetryStorm,
    severity: Severity::High,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "A `close`/`error`/`disconnect` handler reconnects immediately, with no delay or backoff.",
    docs: r#"
A handler of a connection's `close`, `error`, `end` or `disconnect` event
(`ws.on('close', ...)`, `socket.onclose = ...`,
`addEventListener('close', ...)`) that calls a connect/reconnect function
(or the function that set the handler up) directly, not after a delay.

## Why

When the server goes away, the reconnect fails at once, fires `close` again,
and reconnects again: a tight loop that burns CPU, floods logs and, across
every client, hammers the server with connection attempts the moment it
comes back, often knocking it over again.

## Example

```javascript
function connect() {
  const ws = new WebSocket(URL);
  ws.on("message", onMessage);
  ws.on("close", () => connect());
}
```

## Fix

Reconnect after an exponentially growing, jittered delay (reset after a
successful connection).

```javascript
let attempt = 0;

function connect() {
  const ws = new WebSocket(URL);
  ws.on("open", () => { attempt = 0; });
  ws.on("message", onMessage);
  ws.on("close", () => {
    const delay = Math.random() * Math.min(30_000, 500 * 2 ** attempt++);
    setTimeout(connect, delay);
  });
}
```
"#,
    examples: &EXAMPLES,
};

const CLOSE_EVENTS: &[&str] = &["close", "error", "end", "disconnect", "disconnected"];

/// Handlers of close/error events: the handler function and the enclosing
/// function that registered it.
pub(crate) fn close_handlers(cx: &FileCx) -> Vec<FuncId> {
    let mut out = Vec::new();
    for g in cx.model.function_ids() {
        let Parent::Expr(site) = cx.tree.func_site(g) else {
            continue;
        };
        if let Some((call, i)) = common::closure_call_site(cx, g) {
            let c = cx.call(call).unwrap();
            if matches!(
                c.name.as_str(),
                "on" | "once" | "addListener" | "addEventListener"
            ) && i == 1
                && common::str_arg(cx, c, 0).is_some_and(|e| CLOSE_EVENTS.contains(&e))
            {
                out.push(g);
            }
            continue;
        }
        // `ws.onclose = () => ...`
        if let Parent::Stmt(s) = cx.tree.expr_parent(site)
            && let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind
            && targets.iter().any(|&t| {
                matches!(&cx.expr(t).kind, ExprKind::Attr { name, .. } if name == "onclose" || name == "onerror")
            })
        {
            out.push(g);
        }
    }
    out
}

/// A call that reconnects: a connect-like name, or the function that
/// registered the handler.
pub(crate) fn is_reconnect(cx: &FileCx, c: &Call, registrar: Option<FuncId>) -> bool {
    let n = c.name.to_ascii_lowercase();
    let n = n.trim_start_matches('_');
    let connecty = n.starts_with("connect")
        || n.starts_with("reconnect")
        || n.ends_with("reconnect")
        || n == "doconnect";
    let not_a_connect = [
        "disconnect",
        "connection",
        "connected",
        "error",
        "closed",
        "schedule",
        "later",
        "delay",
        "backoff",
    ]
    .iter()
    .any(|w| n.contains(w));
    if connecty && !not_a_connect {
        return true;
    }
    let Some(r) = registrar else { return false };
    let func = cx.func(r);
    !func.name.is_empty()
        && (c.target.as_deref() == Some(func.qualname.as_str())
            || (c.name == func.name && func.kind != FnKind::Closure))
        && opens_connection(cx, r)
}

/// `f` opens a connection: a connect-like call or a `new` socket, client
/// or connection. Calling it again from a close handler reconnects; a
/// function that restarts a local stream (a store's read loop on `end`)
/// does not.
fn opens_connection(cx: &FileCx, f: FuncId) -> bool {
    cx.with_nested(f).into_iter().any(|g| {
        common::calls_of(cx, g).any(|e| {
            let c = cx.call(e).unwrap();
            let n = c.name.to_ascii_lowercase();
            if c.is_new {
                ["socket", "client", "connection", "eventsource"]
                    .iter()
                    .any(|w| n.contains(w))
            } else {
                n.contains("connect") && !n.contains("disconnect")
            }
        })
    })
}

/// The named function a handler closure was registered in.
pub(crate) fn registrar(cx: &FileCx, g: FuncId) -> Option<FuncId> {
    cx.tree
        .func_ancestors(cx.model, g)
        .skip(1)
        .find(|&a| a.0 != 0 && !cx.func(a).name.is_empty())
}

/// A `reconnect()` whose body this file does not show: reconnect routines
/// usually schedule their own backoff.
fn opaque_reconnect(cx: &FileCx, c: &Call) -> bool {
    let n = c.name.to_ascii_lowercase();
    if !n.contains("reconnect") {
        return false;
    }
    let Some(t) = c.target.as_deref() else {
        return true;
    };
    !cx.local_functions(t).any(|f| f.0 != 0)
}

/// The reconnect function (of this file) waits or backs off itself.
fn delays_inside(cx: &FileCx, c: &Call) -> bool {
    common::local_callee_makes(cx, c, |e| {
        let k = cx.call(e).unwrap();
        let n = k.name.to_ascii_lowercase();
        // A periodic retry (`setInterval(reconnect, period)`) waits its
        // period before every attempt.
        common::delay_of(cx, e).is_some()
            || k.target.as_deref() == Some("setInterval")
            || n.contains("backoff")
            || n.contains("schedule")
    })
}

impl Rule for ReconnectWithoutDelay {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for g in close_handlers(cx) {
            if common::in_test(cx, g) {
                continue;
            }
            let reg = registrar(cx, g);
            for e in common::calls_of(cx, g) {
                let c = cx.call(e).unwrap();
                if !is_reconnect(cx, c, reg) || delays_inside(cx, c) || opaque_reconnect(cx, c) {
                    continue;
                }
                out.push(cx.finding(
                    &META,
                    cx.expr(e).span,
                    format!(
                        "`{}` reconnects as soon as the connection closes or fails, with no delay: while the server is down this loops at full speed, and every client reconnects at the same instant when it returns",
                        cx.snippet(cx.expr(e).span)
                    ),
                    "reconnect from `setTimeout` with an exponentially growing, jittered delay, reset once a connection succeeds",
                ));
            }
        }
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[r#"
function connect() {
  const ws = new WebSocket(URL);
  ws.on("message", onMessage);
  ws.on("close", () => connect()); // expect
  ws.onerror = () => {
    reconnect(); // expect
  };
}

function reconnect() {
  connect();
}

function listen(url) {
  const source = new EventSource(url);
  source.onerror = () => listen(url); // expect
}
"#],
    pass: &[r#"
let attempt = 0;

function connect() {
  const ws = new WebSocket(URL);
  ws.on("open", () => { attempt = 0; });
  ws.on("close", () => {
    setTimeout(connect, Math.random() * Math.min(30000, 500 * 2 ** attempt++));
  });
  ws.on("error", (err) => log.warn(err));
}

function shutdown(server) {
  server.on("close", () => db.disconnect());
}

class Redisish {
  attach(raw) {
    raw.on("close", () => this._scheduleReconnect());
    raw.on("error", (err) => {
      if (isConnectionClosedError(err)) return;
      this.emit("error", err);
    });
  }
}

class Client {
  open() {
    this.socket = new WebSocket(URL);
    this.socket.onclose = () => this.reconnect();
  }
}

function startStreamProcess(store) {
  const stream = store.createStream();
  stream.on("end", () => {
    if (!allProcessed()) startStreamProcess(store);
  });
}

class MqttLike extends EventEmitter {
  constructor(options) {
    super();
    this.options = options;
    this.on("close", () => {
      this.connected = false;
      this._setupReconnect();
    });
  }

  _setupReconnect() {
    if (!this.reconnectTimer && this.options.reconnectPeriod > 0) {
      this.reconnectTimer = setInterval(() => this._reconnect(), this.options.reconnectPeriod);
    }
  }
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(ReconnectWithoutDelay);
}
