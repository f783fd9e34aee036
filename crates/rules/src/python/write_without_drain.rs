//! PY031: `StreamWriter.write` in a loop with no `await drain()`.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct WriteWithoutDrain;

pub static META: RuleMeta = RuleMeta {
    id: "PY031",
    name: "stream-write-without-drain",
    category: Category::BackpressureIgnored,
    severity: Severity::Medium,
    languages: &[Language::Python],
    summary: "An asyncio `StreamWriter.write()` inside a loop whose body never awaits `drain()`.",
    docs: r#"
`writer.write(...)` (or `writelines`) on an asyncio `StreamWriter` inside
a `for`/`while` loop, when the loop body has no `await writer.drain()`
(nor a call of a function of the file that drains, `await
_drain(writer, timeout)`).
Writers are recognized by type, as the second value of
`asyncio.open_connection`, or as the second parameter of a
`start_server` handler; inside a `with` that binds the same name to what
it opens (`with open(path, "wb") as writer:`), the name is a file and is
left alone. A write followed at once by `break` or `return` happens once
per run of the loop (`if method in offered: writer.write(b); break`) and is
not reported, and neither is a loop over the function's `*args` (the
fields of one message its caller wrote out) or over a list the function
built itself (`lines = []` filled from one request), or over a mapping
the caller handed in (`for key, vals in headers.items()`, also an item
of one, `headers = resp.get("headers")` or `resp.headers if
resp.headers else Headers()`, and the values of one), or a
`while` loop with no `await` that empties a queue already in memory
(`while not q.empty(): writer.write(q.get_nowait())`), that
the function drains after the loop: what waits in the
buffer was already in memory.
Nor is a loop of a few rounds fixed in the code (`for _ in
range(PREROLL_FRAMES)`, up to 64), or one inside a loop that drains each
round (`while chunk := await reader.read(n):` writing the chunk's lines,
then `await writer.drain()`). Nor is a loop that opens the writer anew
each round before writing (`reader, writer = await open_connection(..)`
in the body: a fixed amount per fresh connection), or awaits a read
after the write in the same round (`await reader.read(1)`): the peer's
answer paces the writes.

## Why

`write()` never blocks: it appends to the transport's buffer and returns.
`drain()` is the only place where a slow reader pushes back. A loop that
writes without draining buffers everything the peer has not read yet: a
slow or stalled client makes the server's memory grow without bound, one
connection at a time.

## Example

```python
import asyncio

async def send_rows(writer: asyncio.StreamWriter, rows):
    for row in rows:
        writer.write(row.encode() + b"\n")
    await writer.drain()
```

## Fix

Await `drain()` inside the loop (every write, or every few writes).

```python
import asyncio

async def send_rows(writer: asyncio.StreamWriter, rows):
    for row in rows:
        writer.write(row.encode() + b"\n")
        await writer.drain()
```
"#,
    examples: &EXAMPLES,
};

impl Rule for WriteWithoutDrain {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        // What the file says about stream writers, worked out at the first
        // `write` call that could be one (most files have none).
        let writers = std::cell::OnceCell::new();
        let writers = || {
            writers.get_or_init(|| {
                let streams_file = cx.text.contains("open_connection")
                    || cx.text.contains("start_server")
                    || cx.text.contains("StreamWriter");
                (writer_names(cx), streams_file)
            })
        };
        let mut reported: HashSet<u32> = HashSet::new();
        for (i, e) in cx.model.exprs.iter().enumerate() {
            let ExprKind::Call(c) = &e.kind else { continue };
            let id = ExprId(i as u32);
            if !matches!(c.name.as_str(), "write" | "writelines")
                || matches!(cx.tree.expr_parent(id), Parent::Detached)
            {
                continue;
            }
            let Some(r) = c.receiver else { continue };
            let f = cx.func_of(id);
            if !cx.func(f).is_async
                || cx.func(f).is_test
                || cx.is_awaited(id)
                || rebound_by_with(cx, id, r)
                || !is_writer(cx, r, writers)
            {
                continue;
            }
            let Some(lp) = cx.enclosing_stmts(id).into_iter().find(|&s| {
                matches!(
                    cx.stmt(s).kind,
                    StmtKind::For { .. } | StmtKind::While { .. }
                )
            }) else {
                continue;
            };
            let body = match &cx.stmt(lp).kind {
                StmtKind::For { body, .. } | StmtKind::While { body, .. } => body,
                _ => continue,
            };
            // `writer.write(x); break`: one write per run of the loop.
            if cx
                .tree
                .enclosing_stmt(id)
                .and_then(|s| crate::util::next_stmt(cx, s))
                .is_some_and(|n| matches!(cx.stmt(n).kind, StmtKind::Break | StmtKind::Return(_)))
            {
                continue;
            }
            // A drain, also through a function of the file that drains
            // (`await _drain(upstream, timeout)`, bounding it).
            let drains = |dc: &Call| dc.name == "drain";
            let drains_in = |b: &Block| {
                unsnarl_model::walk::calls_in_block(cx.model, b)
                    .into_iter()
                    .filter_map(|x| cx.call(x))
                    .any(|dc| {
                        drains(dc)
                            || cx.callee_in_file(dc).is_some_and(|g| {
                                g != f && cx.body_calls(g).any(|y| cx.call(y).is_some_and(drains))
                            })
                    })
            };
            // An outer loop that drains each round (`while data := await
            // reader.read(n):` splitting each chunk into writes, then
            // `await writer.drain()`): the inner loop writes one chunk.
            let outer_drains = cx.enclosing_stmts(id).into_iter().any(|s| {
                s != lp
                    && cx.tree.stmt_func(s) == f
                    && matches!(&cx.stmt(s).kind,
                        StmtKind::For { body, .. } | StmtKind::While { body, .. } if drains_in(body))
            });
            if drains_in(body)
                || outer_drains
                || few_rounds(cx, lp)
                || writes_arguments_then_drains(cx, f, lp, c, r)
                || fresh_writer_or_reply(cx, body, id, r)
                || !reported.insert(cx.stmt(lp).span.start)
            {
                continue;
            }
            let w = cx.model.dotted(r).unwrap_or_else(|| "writer".into());
            out.push(cx.finding(
                &META,
                e.span,
                format!(
                    "`{w}.{}()` runs in a loop that never awaits `{w}.drain()`: writes only fill the transport buffer, so a slow or stalled peer makes memory grow without bound",
                    c.name
                ),
                format!("`await {w}.drain()` inside the loop, so the peer's reading speed paces the writer"),
            ));
        }
    }
}

/// Each round of the loop opens the writer anew (`reader, writer = await
/// open_connection(..)` in the body, before the write): it writes a fixed
/// amount to each fresh connection. Or, after the write, the round awaits
/// a read (`await reader.readline()`, `read_n(1)`): the peer's reply
/// paces the writer, one request per answer.
fn fresh_writer_or_reply(cx: &FileCx, body: &Block, write: ExprId, writer: ExprId) -> bool {
    let Some(w) = cx.model.dotted(writer) else {
        return false;
    };
    let at = cx.expr(write).span;
    let binds_writer = |t: ExprId| {
        unsnarl_model::walk::exprs_under(cx.model, t)
            .into_iter()
            .any(|x| cx.model.dotted(x).as_deref() == Some(w.as_str()))
    };
    let fresh = unsnarl_model::walk::stmts_in_block(cx.model, body)
        .into_iter()
        .any(|s| {
            cx.stmt(s).span.end <= at.start
                && matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, .. }
                    if targets.iter().any(|&t| binds_writer(t)))
        });
    fresh
        || unsnarl_model::walk::exprs_in_block(cx.model, body)
            .into_iter()
            .any(|x| {
                cx.expr(x).span.start >= at.end
                    && cx.is_awaited(x)
                    && cx
                        .call(x)
                        .is_some_and(|c| c.name.starts_with("read") && c.receiver.is_some())
            })
}

/// `for _ in range(PREROLL_FRAMES)` with a small constant count (up to
/// 64): the loop writes a fixed, small amount.
fn few_rounds(cx: &FileCx, lp: StmtId) -> bool {
    let StmtKind::For { iter, .. } = &cx.stmt(lp).kind else {
        return false;
    };
    cx.call(cx.model.strip(*iter)).is_some_and(|c| {
        c.target.as_deref() == Some("builtins.range")
            && crate::python::common::range_len(cx, c).is_some_and(|n| n <= 64)
    })
}

/// `for arg in argv: writer.write(pack(arg))` over the function's `*argv`
/// (the fields of one message the caller wrote out), or over a list the
/// function built in memory (`header_lines`), followed in the same
/// block by `await writer.drain()`: the buffer holds one message at most
/// before the peer's pace applies.
fn writes_arguments_then_drains(
    cx: &FileCx,
    f: FuncId,
    lp: StmtId,
    write: &Call,
    writer: ExprId,
) -> bool {
    let w = cx.model.dotted(writer);
    let drained_after = || {
        w.is_some()
            && std::iter::successors(crate::util::next_stmt(cx, lp), |&s| {
                crate::util::next_stmt(cx, s)
            })
            .any(|s| {
                unsnarl_model::walk::calls_in_block(cx.model, &[s].to_vec())
                    .into_iter()
                    .any(|x| {
                        cx.call(x).is_some_and(|dc| {
                            dc.name == "drain" && dc.receiver.and_then(|r| cx.model.dotted(r)) == w
                        }) && cx.is_awaited(x)
                    })
            })
    };
    let StmtKind::For { iter, .. } = &cx.stmt(lp).kind else {
        // `while not q.empty(): writer.write(q.get_nowait())` with no await
        // in the loop: it empties a container already in memory, and
        // nothing new can arrive before the drain after it.
        let StmtKind::While { body, .. } = &cx.stmt(lp).kind else {
            return false;
        };
        let takes_from_memory = write.args.first().is_some_and(|a| {
            cx.call(cx.model.strip(a.value)).is_some_and(|k| {
                k.receiver.is_some() && matches!(k.name.as_str(), "get_nowait" | "popleft" | "pop")
            })
        });
        let suspends = unsnarl_model::walk::exprs_in_block(cx.model, body)
            .into_iter()
            .any(|x| matches!(cx.expr(x).kind, ExprKind::Await(_)));
        return takes_from_memory && !suspends && drained_after();
    };
    let over_varargs = cx
        .model
        .name_of(*iter)
        .is_some_and(|n| crate::util::variadic_param_in_scope(cx, f, n));
    // A list the function built (`header_lines = []`, then appended to):
    // what the loop writes is already in memory, so the buffer holds at
    // most one more copy of it before the drain.
    let over_built_list = cx.model.name_of(*iter).is_some_and(|n| {
        let mut bound = crate::python::common::values_bound_to(cx, f, n).peekable();
        bound.peek().is_some()
            && bound.all(|v| {
                v.is_some_and(|v| {
                    matches!(
                        cx.expr(cx.model.strip(v)).kind,
                        ExprKind::Collection { .. } | ExprKind::Comprehension { .. }
                    )
                })
            })
    });
    // A mapping the caller handed in (`for key, vals in raw_headers.items()`),
    // or the values of one (`for v in vals` inside that loop): in memory
    // already, and drained after the loops.
    if over_a_param_mapping(cx, f, lp) && w.is_some() {
        let end = cx.stmt(lp).span.end;
        return cx.body_calls(f).any(|x| {
            cx.expr(x).span.start > end
                && cx.is_awaited(x)
                && cx.call(x).is_some_and(|dc| {
                    dc.name == "drain" && dc.receiver.and_then(|r| cx.model.dotted(r)) == w
                })
        });
    }
    (over_varargs || over_built_list) && drained_after()
}

/// The `for` walks a mapping parameter of `f` (`params.items()`,
/// `.keys()`, `.values()`, also of a local taken from one, `headers =
/// resp.get("headers") or {}`), or a value taken from such a walk by an
/// enclosing `for` (`for v in vals` under `for key, vals in
/// headers.items()`).
fn over_a_param_mapping(cx: &FileCx, f: FuncId, lp: StmtId) -> bool {
    let StmtKind::For { iter, .. } = &cx.stmt(lp).kind else {
        return false;
    };
    let iter = cx.model.strip(*iter);
    if let Some(c) = cx.call(iter)
        && c.args.is_empty()
        && matches!(c.name.as_str(), "items" | "keys" | "values")
        && let Some(p) = c.receiver.and_then(|r| cx.model.name_of(r))
    {
        let is_param = |n: &str| cx.func(f).params.iter().any(|q| q.name == n);
        // Or a local taken from one (`raw_headers = resp.get("headers") or
        // {}`, `headers = resp.headers if resp.headers else Headers()`):
        // an item of the caller's mapping, no call but `get` and a new
        // empty mapping.
        let taken_from_param = || {
            let mut bound = crate::python::common::values_bound_to(cx, f, p).peekable();
            bound.peek().is_some()
                && bound.all(|v| {
                    v.is_some_and(|v| {
                        let under = unsnarl_model::walk::exprs_under(cx.model, v);
                        under
                            .iter()
                            .any(|&x| cx.model.name_of(x).is_some_and(is_param))
                            && under.iter().all(|&x| match &cx.expr(x).kind {
                                ExprKind::Call(k) => {
                                    k.name == "get"
                                        || (k.args.is_empty()
                                            && k.receiver.is_none()
                                            && (k.name == "dict"
                                                || k.name
                                                    .starts_with(|c: char| c.is_ascii_uppercase())))
                                }
                                ExprKind::Await(_) => false,
                                _ => true,
                            })
                    })
                })
        };
        return is_param(p) || taken_from_param();
    }
    let Some(n) = cx.model.name_of(iter) else {
        return false;
    };
    cx.tree.stmt_ancestors(lp).any(|a| {
        matches!(&cx.stmt(a).kind, StmtKind::For { target: Some(t), .. }
            if unsnarl_model::walk::exprs_under(cx.model, *t)
                .into_iter()
                .any(|x| cx.model.name_of(x) == Some(n)))
            && over_a_param_mapping(cx, f, a)
    })
}

/// Names bound to stream writers in this file.
fn writer_names(cx: &FileCx) -> HashSet<String> {
    let mut out = HashSet::new();
    for (i, e) in cx.model.exprs.iter().enumerate() {
        let ExprKind::Call(c) = &e.kind else { continue };
        match c.target.as_deref() {
            Some("asyncio.open_connection" | "asyncio.open_unix_connection") => {
                let id = ExprId(i as u32);
                let Parent::Expr(aw) = cx.tree.expr_parent(id) else {
                    continue;
                };
                let Parent::Stmt(s) = cx.tree.expr_parent(aw) else {
                    continue;
                };
                if let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind
                    && let [t] = targets.as_slice()
                    && let ExprKind::Collection { elems, .. } = &cx.expr(*t).kind
                    && let Some(n) = elems.get(1).and_then(|&w| cx.model.dotted(w))
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
                    && let Some(p) = cx.func(f).params.get(1)
                {
                    out.insert(p.name.to_string());
                }
            }
            _ => {}
        }
    }
    out
}

/// The call sits in a `with` block that binds its receiver's name to
/// what the `with` opened (`with open(path, "wb") as writer:
/// writer.write(buf)`): a file there, whatever the name meant before.
fn rebound_by_with(cx: &FileCx, call: ExprId, r: ExprId) -> bool {
    let Some(name) = cx.model.name_of(cx.model.strip(r)) else {
        return false;
    };
    cx.enclosing_stmts(call).into_iter().any(|s| {
        matches!(&cx.stmt(s).kind, StmtKind::With { items, .. }
            if items.iter().any(|it| it.target.and_then(|t| cx.model.name_of(t)) == Some(name)))
    })
}

fn is_writer<'w>(
    cx: &FileCx,
    r: ExprId,
    writers: impl FnOnce() -> &'w (HashSet<String>, bool),
) -> bool {
    if let Some(t) = cx.sema.type_of(r) {
        return t == "asyncio.StreamWriter" || t == "asyncio.streams.StreamWriter";
    }
    let Some(d) = cx.model.dotted(r) else {
        return false;
    };
    let (writers, streams_file) = writers();
    if writers.contains(&d) {
        return true;
    }
    let last = d.rsplit('.').next().unwrap_or(&d).trim_start_matches('_');
    *streams_file && (last == "writer" || last.ends_with("_writer"))
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import asyncio

async def send_rows(host, rows):
    reader, writer = await asyncio.open_connection(host, 9000)
    for row in rows:
        writer.write(row.encode() + b"\n")  # expect
    await writer.drain()
"#,
        r#"
import asyncio

async def stream(writer: asyncio.StreamWriter, source):
    async for chunk in source:
        writer.write(chunk)  # expect
"#,
        r#"
import asyncio

async def relay(host, frames):
    reader, writer = await asyncio.open_connection(host, 31415)
    # The `with` binds another name: `writer` is still the stream.
    with open("relay.log", "a") as log:
        for frame in frames:
            writer.write(frame)  # expect
            log.write("sent\n")
"#,
        r#"
import asyncio


async def stream_audio(frames, writer: asyncio.StreamWriter, count):
    for i in range(count):
        writer.write(frames[i])  # expect
    await writer.drain()
"#,
    ],
    pass: &[
        r#"
import asyncio


class Channel:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader = reader
        self.writer = writer

    async def send(self, *argv):
        # The fields of one message, then one drain for it.
        for arg in argv:
            self.writer.write(arg.encode() + b"\0")
        self.writer.write(b"\n")
        await self.writer.drain()
"#,
        r#"
import asyncio

async def handshake(host, port, offered):
    reader, writer = await asyncio.open_connection(host, port)
    # One byte for the first supported method, then out of the loop.
    for method in (33, 1, 2):
        if method in offered:
            writer.write(method.to_bytes(1, "big"))
            break
    else:
        raise ValueError("no supported method")
    return await reader.readexactly(4)
"#,
        r#"
import asyncio

async def send_rows(host, rows):
    reader, writer = await asyncio.open_connection(host, 9000)
    for row in rows:
        writer.write(row.encode() + b"\n")
        await writer.drain()

async def once(writer: asyncio.StreamWriter, data):
    writer.write(data)
    await writer.drain()

async def aiohttp_style(writer: asyncio.StreamWriter, chunks):
    for chunk in chunks:
        await writer.write(chunk)

def to_file(f, lines):
    for line in lines:
        f.write(line)
"#,
        r#"
import asyncio

async def dump_frames(host):
    reader, writer = await asyncio.open_connection(host, 31415)
    i = 0
    while True:
        frame = await reader.readuntil(b"\xc0")
        # `writer` names a file inside this block, not the stream.
        with open(f"frame-{i}.bin", "wb") as writer:
            writer.write(frame)
        i += 1
"#,
        r#"
import asyncio

async def forward_request(reader, host, port):
    header_lines = []
    while True:
        line = await asyncio.wait_for(reader.readline(), timeout=10)
        if line in (b"\r\n", b"\n", b""):
            break
        header_lines.append(line)
    upstream_reader, upstream = await asyncio.open_connection(host, port)
    for line in header_lines:
        upstream.write(line)
    upstream.write(b"\r\n")
    await upstream.drain()
    return upstream_reader, upstream
"#,
        r#"
import asyncio

PREROLL_FRAMES = 5
SILENCE = bytes(320)


async def stream_audio(reader, writer: asyncio.StreamWriter):
    for _ in range(PREROLL_FRAMES):
        writer.write(SILENCE)
    while frame := await reader.read(320):
        writer.write(frame)
        await writer.drain()
"#,
        r#"
import asyncio


async def relay_lines(reader, writer: asyncio.StreamWriter):
    while chunk := await reader.read(65536):
        for line in chunk.splitlines(keepends=True):
            writer.write(line)
        await writer.drain()
"#,
        r#"
# The caller's headers are in memory already; one drain after the loops.
import asyncio


async def write_response(writer: asyncio.StreamWriter, status, resp, body):
    headers = resp.get("headers") or {}
    writer.write(f"HTTP/1.1 {status}\r\n".encode())
    for key, vals in headers.items():
        if isinstance(vals, list):
            for v in vals:
                writer.write(f"{key}: {v}\r\n".encode())
        else:
            writer.write(f"{key}: {vals}\r\n".encode())
    writer.write(b"\r\n" + body)
    await writer.drain()
"#,
        r#"
import asyncio

async def _drain(writer, deadline):
    async with asyncio.timeout(deadline):
        await writer.drain()

async def relay(reader, host, port, timeout):
    _, upstream = await asyncio.open_connection(host, port)
    while message := await reader.read(65536):
        upstream.write(message)
        await _drain(upstream, timeout)
"#,
        r#"
import asyncio


async def serve_backward(host, port, auth, handler, closed):
    while not closed.is_set():
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(auth)
        data = await reader.read(1)
        if data:
            asyncio.ensure_future(handler(reader, writer))
        else:
            writer.close()
"#,
        r#"
import asyncio


async def forward(channel, writer: asyncio.StreamWriter):
    await channel.wait_until_ended()
    # The last bytes arrived with the end: pass them on, then drain once.
    while not channel.arrived.empty():
        writer.write(channel.arrived.get_nowait())
    await writer.drain()
"#,
        r#"
import asyncio


async def write_response(writer: asyncio.StreamWriter, response, status):
    headers = response.headers if response.headers else HttpHeaders()
    writer.write(f"HTTP/1.1 {status}\r\n".encode())
    for key, value in headers.items():
        writer.write(f"{key}: {value}\r\n".encode())
    writer.write(b"\r\n")
    await writer.drain()
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(WriteWithoutDrain);
}
