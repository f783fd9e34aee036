//! JS030: `src.on('data', c => dst.write(c))` ignoring `write()`'s return
//! value.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct WriteWithoutDrain;

pub static META: RuleMeta = RuleMeta {
    id: "JS030",
    name: "write-without-drain",
    category: Category::BackpressureIgnored,
    severity: Severity::Medium,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "A `data` handler (or a `for await` loop) writes every chunk to a stream and ignores `write()` returning `false`: the writable buffers without bound.",
    docs: r#"
`src.on('data', (chunk) => dst.write(chunk))`, or a `for await (const chunk
of src)` loop calling `dst.write(chunk)`, where the result of `write()` is
ignored and the file never waits for `drain` (nor pauses the source).
A `write` of a class of the file that extends nothing (a parser fed
chunk by chunk) has no buffer to fill and is not reported.

## Why

`write()` returns `false` when the destination's buffer is full: that is the
signal to stop until `drain`. Ignoring it keeps reading at the source's
speed and queues everything the destination cannot absorb in memory. A fast
producer and a slow consumer (a disk, a slow client, a throttled upload)
then grow the process until it runs out of memory.

## Example

```javascript
function copy(src, dst) {
  src.on("data", (chunk) => dst.write(transform(chunk)));
  src.on("end", () => dst.end());
}
```

## Fix

Use `pipeline()`, which handles backpressure, errors and teardown.

```javascript
import { pipeline } from "node:stream/promises";

async function copy(src, transformStream, dst) {
  await pipeline(src, transformStream, dst);
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for WriteWithoutDrain {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) || handles_drain(cx) {
            return;
        }
        // `x.on('data', cb)` callbacks.
        for (_, c) in cx.calls_named(&["on", "addListener"]) {
            if common::str_arg(cx, c, 0) != Some("data") {
                continue;
            }
            let Some(cb) = c.positional(1).and_then(|a| common::callback_fn(cx, a)) else {
                continue;
            };
            let calls: Vec<ExprId> = common::calls_of(cx, cb).collect();
            if calls.iter().any(|&x| cx.call(x).unwrap().name == "pause") {
                continue;
            }
            for x in calls {
                if let Some(f) = ignored_write(cx, x) {
                    out.push(f);
                }
            }
        }
        // `for await (const chunk of src) dst.write(chunk)`.
        for st in &cx.model.stmts {
            let StmtKind::For {
                is_async: true,
                body,
                ..
            } = &st.kind
            else {
                continue;
            };
            for x in unsnarl_model::walk::calls_in_block(cx.model, body) {
                if let Some(f) = ignored_write(cx, x) {
                    out.push(f);
                }
            }
        }
    }
}

fn ignored_write(cx: &FileCx, x: ExprId) -> Option<Finding> {
    let c = cx.call(x)?;
    if c.name != "write" || c.receiver.is_none() || !(cx.is_discarded(x) || concise_return(cx, x)) {
        return None;
    }
    if own_class_write(cx, c.receiver?) {
        return None;
    }
    let recv = cx.source(cx.expr(c.receiver?).span);
    if recv.contains("stdout")
        || recv.contains("stderr")
        || recv.contains("console")
        || recv.contains("hash")
    {
        return None;
    }
    Some(cx.finding(
        &META,
        cx.expr(x).span,
        format!(
            "`{recv}.write(...)` ignores the `false` it returns when its buffer is full: the source keeps pushing and the destination buffers everything in memory, without bound, when it is slower"
        ),
        "use `stream.pipeline(src, ..., dst)` (or `pipe`); by hand, pause (or stop reading) when `write()` returns `false` and resume on `'drain'`",
    ))
}

/// The receiver is an instance of a class of this file that defines
/// `write` itself and extends nothing (`const parser = new
/// MultipartParser(..)`): a parser fed chunk by chunk, with no buffer and
/// no `drain` to wait for.
fn own_class_write(cx: &FileCx, recv: ExprId) -> bool {
    let Some(ty) = cx.sema.type_of(cx.model.strip(recv)) else {
        return false;
    };
    let Some(decl) = cx.model.types.iter().find(|t| t.qualname == *ty) else {
        return false;
    };
    // The class head, up to its body: no `extends` (a base could be a
    // stream, or make one).
    let text = cx.source(decl.span);
    let head = text.split('{').next().unwrap_or(text);
    !head.split_whitespace().any(|w| w == "extends")
        && cx
            .model
            .functions
            .iter()
            .any(|f| f.class.as_deref() == Some(ty) && f.name == "write")
}

/// `chunk => dst.write(chunk)`: the value goes back to an event emitter that
/// ignores it.
fn concise_return(cx: &FileCx, x: ExprId) -> bool {
    let f = cx.func_of(x);
    let body = &cx.func(f).body;
    cx.func(f).kind == FnKind::Closure
        && body.len() == 1
        && matches!(cx.stmt(body[0]).kind, StmtKind::Return(Some(v)) if v == x)
}

/// The file waits for `drain` somewhere (hand-written backpressure).
fn handles_drain(cx: &FileCx) -> bool {
    cx.model
        .exprs
        .iter()
        .any(|e| matches!(&e.kind, ExprKind::Literal(Lit::Str(s)) if s == "drain"))
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[r#"
function relay(src, dst) {
  src.on("data", (chunk) => {
    dst.write(transform(chunk)); // expect
  });
}

async function upload(file, sock) {
  for await (const chunk of file) {
    sock.write(chunk); // expect
  }
}

const { Transform } = require("stream");

class LineSplitter extends Transform {
  write(chunk) {
    return super.write(chunk);
  }
}

async function split(body) {
  const splitter = new LineSplitter();
  for await (const chunk of body) {
    splitter.write(chunk); // expect
  }
}
"#],
    pass: &[
        r#"
const { pipeline } = require("stream/promises");

async function relay(src, transformStream, dst) {
  await pipeline(src, transformStream, dst);
}

function paused(src, dst) {
  src.on("data", (chunk) => {
    if (!dst.write(chunk)) src.pause();
  });
}
"#,
        r#"
class LineParser {
  constructor(onLine) {
    this.onLine = onLine;
    this.rest = "";
  }

  write(chunk) {
    const lines = (this.rest + chunk).split("\n");
    this.rest = lines.pop();
    for (const line of lines) this.onLine(line);
  }
}

async function readLines(body, onLine) {
  const parser = new LineParser(onLine);
  for await (const chunk of body) {
    parser.write(chunk);
  }
}
"#,
        r#"
function relay(src, dst) {
  src.on("data", (chunk) => {
    const ok = dst.write(chunk);
    if (!ok) {
      src.pause();
      dst.once("drain", () => src.resume());
    }
  });
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(WriteWithoutDrain);
}
