//! JS022: outbound HTTP calls with no deadline: `fetch` without a signal in
//! server code, axios calls and instances without `timeout`, `http.request`
//! without a timeout.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use crate::util::is_or_under;
use unsnarl_model::*;

pub struct MissingTimeout;

pub static META: RuleMeta = RuleMeta {
    id: "JS022",
    name: "http-call-without-timeout",
    category: Category::MissingTimeout,
    severity: Severity::High,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "An outbound HTTP call with no deadline that fits a caller: `fetch` with no `signal` in server code (request handlers, server modules; Node's waits 5 minutes for headers), an axios call or `axios.create` with no `timeout` (axios waits indefinitely by default), `http.request`/`https.get` with no timeout.",
    docs: r#"
- `fetch(url)` / `fetch(url, options)` without a `signal` in server code (a
  request handler, or a module that sets up an HTTP server);
- `axios.get/post/...`, `axios(config)` and `axios.create(config)` without a
  `timeout` (unless the file sets `axios.defaults.timeout`, or the config
  passes a `signal` or `cancelToken`, which whoever holds it aborts);
- `http.request`, `http.get`, `https.request`, `https.get` without a
  `timeout` option and without `req.setTimeout(...)` (or a timer of the same
  function that destroys the request).

## Why

None of these give up in time on their own: axios's default timeout is 0
(none), Node's `http` and node-fetch have no response deadline, and Node's
built-in `fetch` (undici) waits 5 minutes for the response headers and 5
minutes between chunks of the body, with no limit on the whole. One stuck
dependency then holds every
request that calls it, with its socket and memory, until the process runs
out of both; the caller's own timeout fires, but the work behind it
continues.

## Example

```javascript
import axios from "axios";

export async function getRates() {
  const { data } = await axios.get("https://rates.example/latest");
  return data;
}
```

## Fix

Give every call a deadline (and share it down the call tree).

```javascript
import axios from "axios";

export async function getRates() {
  const { data } = await axios.get("https://rates.example/latest", { timeout: 5000 });
  return data;
}
```
"#,
    examples: &EXAMPLES,
};

/// The HTTP clients this rule knows, by resolved target (the axios
/// methods are added from the two lists below).
const CLIENTS: &[&str] = &[
    "fetch",
    "undici.fetch",
    "node-fetch",
    "axios",
    "axios.request",
    "axios.create",
    "http.request",
    "http.get",
    "https.request",
    "https.get",
];
const AXIOS_NO_DATA: &[&str] = &["get", "delete", "head", "options"];
const AXIOS_DATA: &[&str] = &["post", "put", "patch", "postForm", "putForm", "patchForm"];

impl Rule for MissingTimeout {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) || cx.model.is_test {
            return;
        }
        let axios_methods: Vec<String> = AXIOS_NO_DATA
            .iter()
            .chain(AXIOS_DATA)
            .map(|m| format!("axios.{m}"))
            .collect();
        let mut targets: Vec<&str> = CLIENTS.to_vec();
        targets.extend(axios_methods.iter().map(String::as_str));
        let clients = cx.calls_to(&targets);
        // The file-wide facts below are worked out only for a file that
        // makes a request at all.
        if clients.is_empty() {
            return;
        }
        let server = creates_server(cx);
        let h = common::handlers(cx);
        let axios_defaults = sets_axios_default_timeout(cx);
        for (e, c) in clients {
            let ex = cx.expr(e);
            if common::in_test(cx, cx.func_of(e)) {
                continue;
            }
            let Some(t) = c.target.as_deref() else {
                continue;
            };
            let (what, fix) = match t {
                "fetch" | "undici.fetch" | "node-fetch"
                    if is_server_code(cx) && (server || in_handler(cx, h, e)) =>
                {
                    let missing = match c.positional(1) {
                        None => c.args.len() == 1,
                        Some(o) => common::opt_key(cx, o, "signal") == common::OptKey::Missing,
                    };
                    if !missing || in_race(cx, e) {
                        continue;
                    }
                    let what = if t == "node-fetch" {
                        "this `fetch` has no `signal`: node-fetch has no deadline of its own, so it waits as long as the server keeps the connection open, holding the caller and its socket when the dependency hangs"
                    } else {
                        "this `fetch` has no `signal`: Node's `fetch` gives up only after 5 minutes without response headers (undici's default), and a body that keeps trickling has no limit at all, so a hung dependency holds the caller and its socket for minutes"
                    };
                    (
                        what,
                        "pass `{ signal: AbortSignal.timeout(ms) }` (combined with the caller's signal when there is one)",
                    )
                }
                "axios" | "axios.request" | "axios.create" if !axios_defaults => {
                    let cfg = if t == "axios" && c.args.len() == 2 {
                        c.positional(1)
                    } else {
                        c.positional(0)
                    };
                    let missing = match cfg {
                        None => t == "axios.create",
                        Some(o) => !config_sets_timeout(cx, o),
                    };
                    if !missing
                        || (t == "axios"
                            && c.args.len() == 1
                            && common::str_arg(cx, c, 0).is_some())
                        || (t == "axios.create" && every_request_sets_timeout(cx, e))
                    {
                        continue;
                    }
                    if t == "axios.create" {
                        (
                            "this axios instance has no `timeout`: axios waits forever by default, so every call made through it can hang on a stuck server",
                            "set `timeout` (ms) in `axios.create({ ... })`",
                        )
                    } else {
                        (
                            "this axios request has no `timeout`: axios waits forever by default, so a stuck server holds this call and its caller indefinitely",
                            "pass `timeout` (ms) in the request config, or create an instance with a default `timeout`",
                        )
                    }
                }
                _ if !axios_defaults && axios_method(t).is_some() => {
                    let idx = axios_method(t).unwrap();
                    let missing = !c
                        .positional(idx)
                        .is_some_and(|o| config_sets_timeout(cx, o));
                    if !missing {
                        continue;
                    }
                    (
                        "this axios request has no `timeout`: axios waits forever by default, so a stuck server holds this call and its caller indefinitely",
                        "pass `{ timeout: ms }` as the request config, or create an instance with a default `timeout`",
                    )
                }
                "http.request" | "http.get" | "https.request" | "https.get" => {
                    let has_opt = c.args.iter().any(|a| {
                        let v = cx.model.strip(a.value);
                        match &cx.expr(v).kind {
                            ExprKind::Collection { .. } => !matches!(
                                common::opt_key(cx, v, "timeout"),
                                common::OptKey::Missing
                            ),
                            // An options object built elsewhere may set it.
                            ExprKind::Name { .. } | ExprKind::Attr { .. } => !is_url_name(cx, v),
                            _ => false,
                        }
                    });
                    if has_opt || sets_timeout_later(cx, e) {
                        continue;
                    }
                    (
                        "this request has no timeout: Node's `http` client has no response deadline, so a server that accepts the connection and never answers holds it forever",
                        "pass `timeout` in the options and handle the `timeout` event (`req.destroy(err)`), or call `req.setTimeout(ms, ...)`; or use `fetch` with `AbortSignal.timeout(ms)`",
                    )
                }
                _ => continue,
            };
            out.push(cx.finding(&META, ex.span, what, fix));
        }
    }
}

/// An axios config that sets a `timeout` other than 0 (which means none)
/// or a `signal`/`cancelToken`, or one that cannot be read (a variable, a
/// spread), which may.
fn config_sets_timeout(cx: &FileCx, config: ExprId) -> bool {
    // A request given a way to abort it (`signal`, or the older
    // `cancelToken`) is bounded by whoever holds the other end: usually a
    // timer (`AbortSignal.timeout(ms)`, `setTimeout(() => source.cancel())`).
    let abortable = ["signal", "cancelToken"]
        .iter()
        .any(|k| common::opt_key(cx, config, k) != common::OptKey::Missing);
    abortable
        || match common::opt_key(cx, config, "timeout") {
            common::OptKey::Missing => false,
            common::OptKey::Set(v) => cx.model.int_value(v) != Some(0),
            common::OptKey::Unknown => true,
        }
}

/// The instance `e` builds is kept in a name (`this._instance =
/// axios.create({..})`) that the file only ever calls request methods on,
/// at least once, each with a config that sets a `timeout` (`{ timeout:
/// this.opts.timeout }`), and never hands to anything: every request it
/// makes has a deadline, given per call instead of per instance.
fn every_request_sets_timeout(cx: &FileCx, e: ExprId) -> bool {
    let Some(s) = cx.tree.enclosing_stmt(e) else {
        return false;
    };
    let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind else {
        return false;
    };
    let Some(name) = targets.first().and_then(|&t| cx.model.dotted(t)) else {
        return false;
    };
    let target = targets[0];
    let mut requests = 0;
    for (i, x) in cx.model.exprs.iter().enumerate() {
        let id = ExprId(i as u32);
        if id == target || !matches!(x.kind, ExprKind::Name { .. } | ExprKind::Attr { .. }) {
            continue;
        }
        if cx.model.dotted(id).as_deref() != Some(name.as_str()) {
            continue;
        }
        // Handed to a call, it may make requests this file cannot see.
        let unsnarl_model::walk::Parent::Expr(member) = cx.tree.expr_parent(id) else {
            continue;
        };
        if cx.call(member).is_some() {
            return false;
        }
        // Otherwise only its request methods matter (not `typeof`,
        // `.defaults.headers`).
        let unsnarl_model::walk::Parent::Expr(call) = cx.tree.expr_parent(member) else {
            continue;
        };
        let Some(c) = cx.call(call).filter(|c| c.receiver == Some(id)) else {
            continue;
        };
        let config = match c.name.as_str() {
            "request" => c.positional(0),
            "get" | "delete" | "head" | "options" => c.positional(1),
            "post" | "put" | "patch" => c.positional(2),
            // `instance.interceptors`, `instance.defaults`: not a request.
            _ => continue,
        };
        if !config.is_some_and(|o| config_sets_timeout(cx, o)) {
            return false;
        }
        requests += 1;
    }
    requests > 0
}

/// `axios.get(url, config)` and friends: the index of the config argument.
fn axios_method(t: &str) -> Option<usize> {
    let m = t.strip_prefix("axios.")?;
    if AXIOS_NO_DATA.contains(&m) {
        Some(1)
    } else if AXIOS_DATA.contains(&m) {
        Some(2)
    } else {
        None
    }
}

fn is_url_name(cx: &FileCx, e: ExprId) -> bool {
    cx.model
        .name_of(e)
        .is_some_and(|n| n.to_ascii_lowercase().contains("url") || n == "href")
}

/// `axios.defaults.timeout = ...` somewhere in the file.
fn sets_axios_default_timeout(cx: &FileCx) -> bool {
    // Spelling out the name of every assigned attribute costs a string
    // each: only one that ends in `.timeout` can be the one.
    let may_be = |t: ExprId| match &cx.expr(cx.model.strip(t)).kind {
        ExprKind::Attr { name, .. } => name == "timeout",
        ExprKind::Name { id, .. } => id.ends_with("defaults.timeout"),
        _ => true,
    };
    cx.model.stmts.iter().any(|s| {
        matches!(&s.kind, StmtKind::Assign { targets, .. }
            if targets.iter().any(|&t| may_be(t) && cx.model.dotted(t).is_some_and(|d| d.ends_with("defaults.timeout"))))
    })
}

/// `req.setTimeout(...)` / `req.on('timeout', ...)` / `{ timeout }` later
/// in the same function, or chained on the call; or a timer of the same
/// function that destroys the request (`setTimeout(() => req.destroy(),
/// ms)`, a deadline written by hand).
fn sets_timeout_later(cx: &FileCx, e: ExprId) -> bool {
    let f = cx.func_of(e);
    let chained = cx.tree.expr_ancestors(e).any(|a| {
        cx.call(a)
            .is_some_and(|c| c.name == "setTimeout" && c.receiver.is_some())
    });
    let request = assigned_name(cx, e);
    chained
        || common::calls_of(cx, f).any(|x| {
            let c = cx.call(x).unwrap();
            (c.name == "setTimeout" && c.receiver.is_some())
                || (c.name == "on" && common::str_arg(cx, c, 0) == Some("timeout"))
                || (c.target.as_deref() == Some("setTimeout")
                    && request.is_some_and(|r| timer_destroys(cx, c, r)))
        })
}

/// The local the call's result is assigned to (`req = http.request(..)`).
fn assigned_name<'a>(cx: &FileCx<'a>, e: ExprId) -> Option<&'a str> {
    let s = common::stmt_of(cx, e)?;
    match &cx.stmt(s).kind {
        StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } if *v == e && targets.len() == 1 => cx.model.name_of(targets[0]),
        _ => None,
    }
}

/// The timer's callback ends the request `req` (`req.destroy()`,
/// `req.abort()`).
fn timer_destroys(cx: &FileCx, timer: &Call, req: &str) -> bool {
    timer
        .positional(0)
        .and_then(|a| common::callback_fn(cx, a))
        .is_some_and(|cb| {
            common::calls_of(cx, cb).any(|x| {
                let c = cx.call(x).unwrap();
                matches!(c.name.as_str(), "destroy" | "abort")
                    && c.receiver.and_then(|r| cx.model.name_of(r)) == Some(req)
            })
        })
}

/// The call is an element of a `Promise.race` (reported as a race loser).
fn in_race(cx: &FileCx, e: ExprId) -> bool {
    cx.tree.expr_ancestors(e).any(|a| {
        cx.call(a)
            .is_some_and(|c| c.target.as_deref() == Some("Promise.race"))
    })
}

/// The call runs while serving a request (in a handler or a callback of
/// one).
fn in_handler(cx: &FileCx, h: &common::Handlers, e: ExprId) -> bool {
    cx.tree
        .func_ancestors(cx.model, cx.func_of(e))
        .any(|a| a.0 != 0 && h.kind(a).is_some())
}

/// The file sets up a server: an HTTP framework or `http.createServer`.
fn creates_server(cx: &FileCx) -> bool {
    const SERVERS: &[&str] = &[
        "express", "koa", "fastify", "hono", "@nestjs/", "restify", "@hapi/",
    ];
    cx.model.imports.iter().any(|i| {
        let t = i.target.as_str();
        SERVERS
            .iter()
            .any(|s| t == s.trim_end_matches('/') || t.starts_with(s))
    }) || !cx
        .calls_to(&[
            "http.createServer",
            "https.createServer",
            "http2.createServer",
        ])
        .is_empty()
}

/// Node (server) code: it loads Node modules or uses `process`, and does
/// not touch the DOM.
pub fn is_server_code(cx: &FileCx) -> bool {
    let browser = cx.path.ends_with(".jsx")
        || cx.path.ends_with(".tsx")
        || cx.model.imports.iter().any(|i| {
            let t = i.target.as_str();
            t == "react" || t.starts_with("react.") || t.starts_with("react-dom") || t == "vue"
                || t.starts_with("@angular/") || t.starts_with("svelte")
        })
        || cx.model.exprs.iter().any(|e| {
            matches!(&e.kind, ExprKind::Name { id, resolved: Some(r) } if r == id && (id == "window" || id == "document" || id == "localStorage"))
        });
    if browser {
        return false;
    }
    const NODE: &[&str] = &[
        "fs",
        "http",
        "https",
        "http2",
        "net",
        "child_process",
        "path",
        "os",
        "crypto",
        "stream",
        "express",
        "koa",
        "fastify",
        "@nestjs/common",
        "undici",
        "node-fetch",
        "dotenv",
        "worker_threads",
        "cluster",
        "zlib",
        "events",
        "util",
        "url",
        "dns",
    ];
    cx.model.imports.iter().any(|i| {
        let t = i.target.as_str();
        NODE.iter().any(|n| is_or_under(t, n, &['.', '/']))
    }) || cx.model.exprs.iter().any(|e| {
        matches!(&e.kind, ExprKind::Name { id, resolved: Some(r) } if r == id && (id == "process" || id == "require"))
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
const axios = require("axios");
const https = require("https");

const api = axios.create({ baseURL: "https://api.example" }); // expect

async function rates() {
  const { data } = await axios.get("https://rates.example/latest"); // expect
  await axios.post("https://audit.example", { event: "rates" }); // expect
  return data;
}

function ping(cb) {
  https.get("https://status.example/health", (res) => cb(res.statusCode)); // expect
}
"#,
        r#"
import express from "express";

const app = express();
app.get("/weather", async (req, res) => {
  const r = await fetch(`https://weather.example/${req.query.city}`); // expect
  res.json(await r.json());
});
"#,
        r#"
const axios = require("axios");

class Controller {
  constructor(opts) {
    this.opts = { timeout: 5000, ...opts };
    this._instance = axios.create({ baseURL: opts.url }); // expect
  }
  async login(data) {
    return this._instance.post("/api/login", data, { timeout: this.opts.timeout });
  }
  async self() {
    return this._instance.get("/api/self");
  }
}
"#,
    ],
    pass: &[
        r#"
const axios = require("axios");

// The token cancels the request after a second: a deadline written by hand.
class Client {
  token() {
    const source = axios.CancelToken.source();
    setTimeout(() => source.cancel("timeout"), 1000);
    return source.token;
  }
  get(url) {
    return axios.get(url, { cancelToken: this.token() }).then((r) => r.data);
  }
  put(url, body, signal) {
    return axios.put(url, body, { signal });
  }
}
"#,
        r#"
const http = require("http");

// A deadline written by hand: the timer destroys the request unless the response ends first.
function fetchXml(url) {
  return new Promise((resolve, reject) => {
    let req = null;
    let timer = setTimeout(() => {
      req.destroy();
      reject(new Error("TIMEOUT"));
    }, 1000);
    req = http.request(url, { method: "GET" }, (res) => {
      let xml = "";
      res.on("data", (c) => (xml += c));
      res.on("end", () => {
        clearTimeout(timer);
        resolve(xml);
      });
    });
    req.end();
  });
}
"#,
        r#"
const axios = require("axios");

class Controller {
  constructor(opts) {
    this.opts = { timeout: 5000, ...opts };
    this._instance = axios.create({ baseURL: opts.url });
    this._instance.defaults.headers.common["x-client"] = "unifi";
  }
  async login(data) {
    return this._instance.post("/api/login", data, { timeout: this.opts.timeout });
  }
  async self() {
    return this._instance.get("/api/self", { timeout: this.opts.timeout });
  }
  async send(path, body) {
    return this._instance.request({ url: path, method: "POST", data: body, timeout: this.opts.timeout });
  }
}
"#,
        r#"
const axios = require("axios");
const https = require("https");

const api = axios.create({ baseURL: "https://api.example", timeout: 5000 });

async function rates(signal) {
  const { data } = await axios.get("https://rates.example/latest", { timeout: 3000 });
  await api.post("/audit", { event: "rates" });
  const r = await fetch("https://x.example", { signal: AbortSignal.timeout(2000) });
  return data;
}

function ping(cb) {
  const req = https.get("https://status.example/health", { timeout: 2000 }, (res) => cb(res.statusCode));
  req.on("timeout", () => req.destroy(new Error("timeout")));
}
"#,
        r#"
import React, { useEffect } from "react";

export function Profile() {
  useEffect(() => {
    fetch("/api/me").then((r) => r.json()).then(setMe).catch(setErr);
  }, []);
  return null;
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(MissingTimeout);

    /// Node's own `fetch` has undici's 5-minute limits; node-fetch has none.
    #[test]
    fn fetch_messages_say_how_long_the_call_can_wait() {
        static RULE: MissingTimeout = MissingTimeout;
        let src = r#"
import express from "express";
import nodeFetch from "node-fetch";

const app = express();
app.get("/a", async (req, res) => {
  const r = await fetch("https://a.example");
  const s = await nodeFetch("https://b.example");
  res.json([await r.json(), await s.json()]);
});
"#;
        let messages = crate::testing::messages(&RULE, Language::JavaScript, src);
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert!(
            messages[0].contains("5 minutes without response headers"),
            "{}",
            messages[0]
        );
        assert!(
            messages[1].contains("node-fetch has no deadline"),
            "{}",
            messages[1]
        );
    }
}
