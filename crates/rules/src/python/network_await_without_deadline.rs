//! PY026: awaiting a network peer with no deadline.

use crate::context::FileCx;
use crate::python::common::{is_none, snippet, under_deadline};
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct NetworkAwaitWithoutDeadline;

pub static META: RuleMeta = RuleMeta {
    id: "PY026",
    name: "network-await-without-deadline",
    category: Category::MissingTimeout,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "An awaited aiohttp request, `asyncio.open_connection` or stream read with no timeout in the call, the session, or an enclosing `asyncio.timeout`/`wait_for`.",
    docs: r#"
Awaits that wait on a network peer with nothing bounding them:

- aiohttp requests (`session.get/post/...`) with no `timeout=` in the
  call, on a session this file builds without `timeout=`, and no
  enclosing deadline;
- `asyncio.open_connection(...)` and `StreamReader.read/readline/
  readexactly/readuntil`.

An enclosing `async with asyncio.timeout(...)` (or `asyncio.timeout_at`,
`async_timeout`, anyio/trio `fail_after`/`move_on_after`) or an
`asyncio.wait_for(..., t)` counts as a deadline.

## Why

An await with no deadline is a promise to wait forever. Peers hang half
open, load balancers drop connections silently, and a slow dependency
makes every request that touches it pile up behind it, holding its memory
and connections, until the service runs out of both.

## Example

```python
import asyncio

async def read_banner(host):
    reader, writer = await asyncio.open_connection(host, 25)
    banner = await reader.readline()
    writer.close()
    return banner
```

## Fix

Put one deadline around the whole operation.

```python
import asyncio

async def read_banner(host):
    async with asyncio.timeout(5):
        reader, writer = await asyncio.open_connection(host, 25)
        banner = await reader.readline()
    writer.close()
    return banner
```
"#,
    examples: &EXAMPLES,
};

const AIOHTTP_REQUESTS: &[&str] = &[
    "aiohttp.ClientSession.get",
    "aiohttp.ClientSession.post",
    "aiohttp.ClientSession.put",
    "aiohttp.ClientSession.patch",
    "aiohttp.ClientSession.delete",
    "aiohttp.ClientSession.head",
    "aiohttp.ClientSession.options",
    "aiohttp.ClientSession.request",
    "aiohttp.ClientSession.ws_connect",
    "aiohttp.request",
];

const CONNECTIONS: &[&str] = &["asyncio.open_connection", "asyncio.open_unix_connection"];

const STREAM_READS: &[&str] = &["read", "readline", "readexactly", "readuntil"];

impl Rule for NetworkAwaitWithoutDeadline {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        // The calls that can be reported: aiohttp requests, connections
        // opened, stream reads (the checks below tell them apart).
        let candidates =
            cx.calls_to_or_named(&[AIOHTTP_REQUESTS, CONNECTIONS].concat(), STREAM_READS);
        if candidates.is_empty() {
            return;
        }
        let sessions_configured = sessions_have_timeouts(cx);
        let readers = stream_readers(cx);
        for (id, c) in candidates {
            let e = cx.expr(id);
            if matches!(cx.tree.expr_parent(id), Parent::Detached) {
                continue;
            }
            let f = cx.func_of(id);
            if !cx.func(f).is_async || cx.func(f).is_test {
                continue;
            }
            // Awaited directly or used as `async with session.get(...)`.
            let awaited = cx.is_awaited(id) || is_async_with_ctx(cx, id);
            if !awaited || under_deadline(cx, id, false) {
                continue;
            }
            if c.kwarg("timeout").is_some_and(|t| !is_none(cx, t))
                || c.args.iter().any(|a| a.spread)
            {
                continue;
            }
            let t = c.target.as_deref().unwrap_or("");
            let what = if AIOHTTP_REQUESTS.contains(&t) {
                if sessions_configured && t != "aiohttp.request" {
                    continue;
                }
                "an aiohttp request with no timeout in the call or the session"
            } else if CONNECTIONS.contains(&t) {
                "opening a connection"
            } else if STREAM_READS.contains(&c.name.as_str())
                && c.receiver.is_some_and(|r| is_reader(cx, r, &readers))
                && !is_read_wrapper(cx.func(f))
            {
                "reading from a stream"
            } else {
                continue;
            };
            out.push(cx.finding(
                &META,
                e.span,
                format!(
                    "`{}` is {what} with no deadline: if the peer stops answering this task waits forever, holding its connection, and so does everything awaiting it",
                    snippet(cx, e.span)
                ),
                "wrap the operation in `async with asyncio.timeout(...)` (one budget for the whole exchange), or pass `timeout=` to the call or the session",
            ));
        }
    }
}

fn is_async_with_ctx(cx: &FileCx, id: ExprId) -> bool {
    matches!(cx.tree.expr_parent(id), Parent::Stmt(s)
        if matches!(&cx.stmt(s).kind, StmtKind::With { items, is_async: true, .. }
            if items.iter().any(|it| it.ctx == id)))
}

/// True when every `aiohttp.ClientSession(...)` built in this file passes a
/// timeout, or when the file builds no session (a session handed in from
/// elsewhere has a configuration we cannot see).
fn sessions_have_timeouts(cx: &FileCx) -> bool {
    let mut built = 0;
    let mut with_timeout = 0;
    for (_, c) in cx.calls_to(&["aiohttp.ClientSession"]) {
        built += 1;
        if c.kwarg("timeout").is_some() || c.args.iter().any(|a| a.spread) {
            with_timeout += 1;
        }
    }
    if built == 0 {
        return true;
    }
    with_timeout == built
}

/// Names bound to stream readers: the first of `reader, writer = await
/// asyncio.open_connection(...)`, and the first parameter of handlers
/// given to `asyncio.start_server`.
fn stream_readers(cx: &FileCx) -> HashSet<String> {
    let mut out = HashSet::new();
    let servers: &[&str] = &["asyncio.start_server", "asyncio.start_unix_server"];
    for (id, c) in cx.calls_to(&[CONNECTIONS, servers].concat()) {
        match c.target.as_deref() {
            Some("asyncio.open_connection" | "asyncio.open_unix_connection") => {
                let Parent::Expr(aw) = cx.tree.expr_parent(id) else {
                    continue;
                };
                let Parent::Stmt(s) = cx.tree.expr_parent(aw) else {
                    continue;
                };
                if let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind
                    && let [t] = targets.as_slice()
                    && let ExprKind::Collection { elems, .. } = &cx.expr(*t).kind
                    && let Some(n) = elems.first().and_then(|&r| cx.model.dotted(r))
                {
                    out.insert(n);
                }
            }
            Some("asyncio.start_server" | "asyncio.start_unix_server") => {
                let Some(h) = c.positional(0) else { continue };
                let Some(name) = cx
                    .model
                    .resolved(h)
                    .map(str::to_string)
                    .or_else(|| cx.model.dotted(h))
                else {
                    continue;
                };
                if let Some(f) = cx
                    .model
                    .function_ids()
                    .find(|&f| cx.func(f).qualname == name || cx.func(f).name == name)
                    && let Some(p) = cx.func(f).params.first()
                {
                    out.insert(p.name.to_string());
                }
            }
            _ => {}
        }
    }
    out
}

/// A method that is itself a read primitive (`receive`, `read_frame`):
/// the deadline belongs to its caller.
fn is_read_wrapper(f: &Function) -> bool {
    f.class.is_some()
        && matches!(
            f.name.trim_start_matches('_'),
            "receive"
                | "recv"
                | "read"
                | "readline"
                | "readexactly"
                | "readuntil"
                | "receive_some"
                | "recv_into"
                | "read_frame"
        )
}

fn is_reader(cx: &FileCx, r: ExprId, readers: &HashSet<String>) -> bool {
    if cx.sema.type_of(r) == Some("asyncio.StreamReader") {
        return true;
    }
    cx.model.dotted(r).is_some_and(|d| readers.contains(&d))
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import asyncio

async def read_banner(host):
    reader, writer = await asyncio.open_connection(host, 25)  # expect
    banner = await reader.readline()  # expect
    writer.close()
    return banner
"#,
        r#"
import aiohttp

async def fetch(url):
    async with aiohttp.ClientSession() as session:
        async with session.get(url) as resp:  # expect
            return await resp.text()

async def handler(client, url):
    data = await client.get(url)
    return data
"#,
        r#"
import asyncio

async def handle(reader, writer):
    line = await reader.readline()  # expect
    writer.write(line)

async def main():
    server = await asyncio.start_server(handle, "0.0.0.0", 8000)
"#,
    ],
    pass: &[
        r#"
import asyncio

async def read_banner(host):
    async with asyncio.timeout(5):
        reader, writer = await asyncio.open_connection(host, 25)
        banner = await reader.readline()
    return banner

async def wrapped(host):
    return await asyncio.wait_for(asyncio.open_connection(host, 25), timeout=3)
"#,
        r#"
import aiohttp

TIMEOUT = aiohttp.ClientTimeout(total=10)

async def fetch(url):
    async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
        async with session.get(url) as resp:
            return await resp.text()

async def per_call(session, url):
    return await session.get(url, timeout=5)
"#,
        r#"
import httpx

async def handler(client, url):
    return await client.get(url)

async def cache_lookup(cache, key):
    return await cache.get(key)
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(NetworkAwaitWithoutDeadline);
}
