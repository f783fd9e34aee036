//! PY035: leaving an `async for` over an async generator without closing it.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::{Parent, Visitor, walk_block};
use unsnarl_model::*;

pub struct AsyncGeneratorNotClosed;

pub static META: RuleMeta = RuleMeta {
    id: "PY035",
    name: "async-generator-not-closed",
    category: Category::GeneratorCleanup,
    severity: Severity::Low,
    languages: &[Language::Python],
    summary: "`break` or `return` out of `async for` over a project async generator that is not wrapped in `contextlib.aclosing`.",
    docs: r#"
An `async for` loop over a call to an async generator of the project (an
`async def` that yields) that yields from inside a `try` with a `finally`
or a `with`/`async with`, whose body can leave early with `break` or
`return`, when the generator is not wrapped in `contextlib.aclosing(...)`
(and not closed with `aclose()` afterwards). A generator with no cleanup
(a ticker, a paginator; a `finally` that only sets flags, `self._closed =
True`, or logs, and calls nothing else and releases nothing), or whose `with` blocks all
end before its next `yield` (a timeout around each read), holds nothing
while suspended.

## Why

Leaving the loop early leaves the generator suspended at its `yield`. Its
`finally` blocks and `async with` exits (closing a cursor, releasing a
connection, cancelling a subscription) only run when the generator is
garbage collected, which for async generators means a finalizer scheduled
on the loop at some later, unpredictable time, or never at shutdown. The
resources it holds stay held in the meantime.

## Example

```python
async def rows(pool):
    async with pool.acquire() as conn:
        async for row in conn.cursor("SELECT * FROM events"):
            yield row

async def first_error(pool):
    async for row in rows(pool):
        if row["level"] == "error":
            return row
```

## Fix

```python
from contextlib import aclosing

async def rows(pool):
    async with pool.acquire() as conn:
        async for row in conn.cursor("SELECT * FROM events"):
            yield row

async def first_error(pool):
    async with aclosing(rows(pool)) as events:
        async for row in events:
            if row["level"] == "error":
                return row
```
"#,
    examples: &EXAMPLES,
};

impl Rule for AsyncGeneratorNotClosed {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for s in 0..cx.model.stmts.len() as u32 {
            let s = StmtId(s);
            let StmtKind::For {
                iter,
                body,
                is_async: true,
                ..
            } = &cx.stmt(s).kind
            else {
                continue;
            };
            if matches!(cx.tree.stmt_parent(s), Parent::Detached)
                || cx.func(cx.tree.stmt_func(s)).is_test
            {
                continue;
            }
            let Some(gen_name) = async_generator_call(cx, *iter) else {
                continue;
            };
            if !leaves_early(cx, body) {
                continue;
            }
            let sp = cx.stmt(s).span;
            let header_end = cx
                .source(sp)
                .find('\n')
                .map_or(sp.end, |i| sp.start + i as u32);
            out.push(cx.finding(
                &META,
                Span::new(sp.start, header_end),
                format!(
                    "this loop can leave `{gen_name}()` early (`break`/`return`) without closing it: the generator stays suspended and its cleanup (`finally`, `async with` exits) runs only when it is garbage collected, if ever"
                ),
                format!("wrap it: `async with contextlib.aclosing({gen_name}(...)) as gen: async for x in gen: ...`"),
            ));
        }
    }
}

/// The name of the async generator the loop iterates, when the iterable is
/// a direct call to one of the project's async generators.
fn async_generator_call(cx: &FileCx, iter: ExprId) -> Option<String> {
    let c = cx.call(cx.model.strip(iter))?;
    let t = c.target.as_deref()?;
    // A generator suspended outside every `finally` and `with` (a ticker,
    // a paginator, a timeout around each read) releases nothing when closed.
    if let Some(f) = cx.local_functions(t).next() {
        let func = cx.func(f);
        return (func.is_async
            && func.is_generator
            && !has_ctx_decorator(func)
            && crate::index::has_cleanup(cx.model, cx.kb, &func.body))
        .then(|| func.name.clone())
        .map(Into::into);
    }
    let i = cx.index.resolve(cx.lang, t, cx.file)?;
    let s = cx.index.summary(i);
    // An `async def` iterated with `async for` is an async generator.
    (s.is_async && s.lang == cx.lang && s.has_cleanup)
        .then(|| c.name.clone())
        .map(Into::into)
}

fn has_ctx_decorator(f: &Function) -> bool {
    f.decorators
        .iter()
        .any(|d| d.ends_with("asynccontextmanager"))
}

/// A `break` (of this loop) or a `return` in the body.
fn leaves_early(cx: &FileCx, body: &Block) -> bool {
    struct V {
        depth: u32,
        found: bool,
    }
    impl Visitor for V {
        fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
            match m.stmt(id).kind {
                StmtKind::Return(_) => self.found = true,
                StmtKind::Break if self.depth == 0 => self.found = true,
                StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::Loop { .. } => {
                    self.depth += 1
                }
                _ => {}
            }
            true
        }
        fn exit_stmt(&mut self, m: &FileModel, id: StmtId) {
            if matches!(
                m.stmt(id).kind,
                StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::Loop { .. }
            ) {
                self.depth -= 1;
            }
        }
    }
    let mut v = V {
        depth: 0,
        found: false,
    };
    walk_block(cx.model, body, &mut v);
    v.found
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[r#"
async def rows(pool):
    async with pool.acquire() as conn:
        async for row in conn.cursor("SELECT * FROM events"):
            yield row

async def first_error(pool):
    async for row in rows(pool):  # expect
        if row["level"] == "error":
            return row

async def first_n(pool, n):
    seen = []
    async for row in rows(pool):  # expect
        seen.append(row)
        if len(seen) >= n:
            break
    return seen

async def messages(channel):
    await channel.subscribe()
    try:
        while True:
            yield await channel.next()
    finally:
        await channel.unsubscribe()

async def wait_for_ready(channel):
    async for message in messages(channel):  # expect
        if message == "ready":
            break
"#],
    pass: &[
        r#"
from contextlib import aclosing

async def rows(pool):
    async with pool.acquire() as conn:
        async for row in conn.cursor("SELECT * FROM events"):
            yield row

async def first_error(pool):
    async with aclosing(rows(pool)) as events:
        async for row in events:
            if row["level"] == "error":
                return row

async def all_rows(pool):
    out = []
    async for row in rows(pool):
        for col in row:
            if col is None:
                break
        out.append(row)
    return out

async def from_library(resp):
    async for chunk in resp.content.iter_chunked(1024):
        if chunk:
            break
"#,
        r#"
# file: app/utils.py
import asyncio
import time

async def ticker(delay):
    start = time.monotonic()
    while True:
        yield time.monotonic() - start
        await asyncio.sleep(delay)

# file: app/jobs.py
from .utils import ticker

async def wait_result(redis, key, timeout):
    async for elapsed in ticker(0.5):
        value = await redis.get(key)
        if value is not None:
            return value
        if elapsed > timeout:
            raise TimeoutError()
"#,
        r#"
import asyncio

class Discovery:
    async def _replies(self, protocol, window):
        loop = asyncio.get_running_loop()
        deadline = loop.time() + window
        while True:
            try:
                async with asyncio.timeout(deadline - loop.time()):
                    raw, address = await protocol.replies.get()
            except TimeoutError:
                return
            yield raw, address

    async def get(self, protocol, ip):
        async for info, address in self._replies(protocol, 5.0):
            if address == ip:
                return info
        return None
"#,
        r#"
# The generator's `finally` only sets a flag: nothing is held.
class StreamManager:
    async def events(self, source):
        try:
            async for event in source:
                yield event
        finally:
            self._closed = True

    async def first_error(self, source):
        async for event in self.events(source):
            if event.get("error"):
                return event
"#,
        r#"
import logging

log = logging.getLogger(__name__)


async def events(conn):
    try:
        while True:
            yield await conn.receive()
    finally:
        log.debug("event stream for %s ended", conn.name)


async def first_join(conn):
    async for event in events(conn):
        if event.kind == "join":
            return event
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(AsyncGeneratorNotClosed);
}
