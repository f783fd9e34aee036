//! RS008: a non-cancel-safe future as a `select!` arm inside a loop.

use super::common;
use super::locks::lock_kind;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::exprs_under;
use unsnarl_model::*;

pub struct SelectNotCancelSafe;

pub static META: RuleMeta = RuleMeta {
    id: "RS008",
    name: "select-loop-not-cancel-safe",
    category: Category::RaceLoserLeak,
    severity: Severity::Medium,
    languages: &[Language::Rust],
    summary: "`tokio::select!` in a loop with an arm that awaits an operation tokio documents as not cancel-safe (`read_exact`, `read_line`, `read_to_end`, `write_all`, `Sender::send`, `Mutex::lock`...).",
    docs: r#"
A `tokio::select!` (or `futures::select!`) inside a loop, with an arm whose
future is created in place and is not cancellation safe: `read_exact`,
`read_to_end`, `read_to_string`, `read_line`, `read_until`, `read_u16`..,
`write_all`, `write_all_buf`, `tokio::io::copy`, a channel or sink `send(x)`,
an async `Mutex::lock` / `RwLock` / `Semaphore::acquire`.

## Why

When another arm wins, `select!` drops the losing future. For these
operations that throws work away: bytes already read into the future's
internal state vanish (the next `read_line` starts mid-message), a partial
`write_all` leaves half a frame on the wire, a `send` loses its message,
and a lock or permit request loses its place in the queue. In a loop this
happens on every iteration the other arm wins: data loss under load.

## Example

```rust
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;

async fn run(stream: TcpStream, mut shutdown: tokio::sync::watch::Receiver<bool>) {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    loop {
        tokio::select! {
            n = reader.read_line(&mut line) => {
                if n.unwrap_or(0) == 0 { break; }
                line.clear();
            }
            _ = shutdown.changed() => break,
        }
    }
}
```

## Fix

Use a cancel-safe operation in the arm (`lines().next_line()`, a codec with
`Framed` + `StreamExt::next`, `mpsc::Receiver::recv`, `reserve()` then
`send`), or create the future once outside the loop, pin it, and poll it by
reference (`&mut fut`) so it survives the other arms.

```rust
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;

async fn run(stream: TcpStream, mut shutdown: tokio::sync::watch::Receiver<bool>) {
    let mut lines = BufReader::new(stream).lines();
    loop {
        tokio::select! {
            line = lines.next_line() => {
                if !matches!(line, Ok(Some(_))) { break; }
            }
            _ = shutdown.changed() => break,
        }
    }
}
```
"#,
    examples: &EXAMPLES,
};

/// Reads and writes whose progress lives in the future (tokio documents
/// them as not cancellation safe).
const IO_NOT_SAFE: &[&str] = &[
    "read_exact",
    "read_to_end",
    "read_to_string",
    "read_line",
    "read_until",
    "read_u16",
    "read_u32",
    "read_u64",
    "read_u128",
    "read_i16",
    "read_i32",
    "read_i64",
    "read_i128",
    "read_f32",
    "read_f64",
    "read_u16_le",
    "read_u32_le",
    "read_u64_le",
    "read_i16_le",
    "read_i32_le",
    "read_i64_le",
    "write_all",
    "write_all_buf",
    "write_u16",
    "write_u32",
    "write_u64",
    "write_i16",
    "write_i32",
    "write_i64",
];

impl Rule for SelectNotCancelSafe {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for (i, st) in cx.model.stmts.iter().enumerate() {
            let s = StmtId(i as u32);
            let StmtKind::Select { arms, .. } = &st.kind else {
                continue;
            };
            if common::enclosing_loops(cx, s).is_empty() {
                continue;
            }
            for arm in arms {
                let ArmKind::Future { future, .. } = &arm.kind else {
                    continue;
                };
                if let Some((call, what)) = not_cancel_safe(cx, *future) {
                    let c = cx.call(call).expect("a call");
                    out.push(cx.finding(
                        &META,
                        cx.expr(call).span,
                        format!(
                            "`{}` in a `select!` inside a loop is not cancel-safe: whenever another arm completes first, this future is dropped and {what}",
                            common::text(cx, c.func)
                        ),
                        "use a cancel-safe operation in the arm (`lines().next_line()`, a `Framed` codec with `next()`, `recv()`, `reserve()` then `send`), or create the future once before the loop, `tokio::pin!` it and select on `&mut fut`",
                    ));
                }
            }
        }
    }
}

/// The first non-cancel-safe call of an arm's future (in an `async {}`
/// block too), and what is lost when it is dropped.
fn not_cancel_safe(cx: &FileCx, future: ExprId) -> Option<(ExprId, &'static str)> {
    let mut exprs = exprs_under(cx.model, future);
    if let Some(f) = common::closure_fn(cx, future) {
        exprs.extend(cx.body_exprs(f).iter().copied());
    }
    for e in exprs {
        let Some(c) = cx.call(e) else { continue };
        if c.receiver.is_none() {
            if matches!(
                c.target.as_deref(),
                Some("tokio::io::copy" | "tokio::io::copy_buf" | "tokio::io::copy_bidirectional")
            ) {
                return Some((e, "the bytes it already moved are lost track of"));
            }
            continue;
        }
        let name = c.name.as_str();
        if IO_NOT_SAFE.contains(&name) {
            let what = if name.starts_with("write") {
                "the part already written is lost track of (a half-written frame)"
            } else {
                "the bytes it already read are lost (the next read starts mid-message)"
            };
            return Some((e, what));
        }
        if name == "send" && c.args.len() == 1 {
            return Some((e, "the message it was sending is lost"));
        }
        if matches!(
            name,
            "lock" | "read" | "write" | "acquire" | "acquire_owned" | "acquire_many"
        ) && c.args.len() <= 1
            && let Some(t) = c.receiver.and_then(|r| cx.sema.type_of(r))
            && (t.contains("Semaphore") || lock_kind(cx, t).is_some_and(|k| k.starts_with("async")))
        {
            return Some((
                e,
                "it loses its place in the lock's fair queue (others keep overtaking it)",
            ));
        }
    }
    None
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[r#"
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

async fn pump(mut sock: TcpStream, tx: mpsc::Sender<Vec<u8>>, mut stop: mpsc::Receiver<()>) {
    let mut buf = [0u8; 64];
    loop {
        tokio::select! {
            r = sock.read_exact(&mut buf) => { // expect
                if r.is_err() { break; }
                let _ = tx.try_send(buf.to_vec());
            }
            _ = stop.recv() => break,
        }
    }
}

async fn forward(mut rx: mpsc::Receiver<u32>, out: mpsc::Sender<u32>, mut stop: mpsc::Receiver<()>) {
    let mut pending = None;
    loop {
        tokio::select! {
            Some(v) = rx.recv(), if pending.is_none() => pending = Some(v),
            _ = out.send(pending.unwrap_or(0)) => pending = None, // expect
            _ = stop.recv() => return,
        }
    }
}
"#],
    pass: &[r#"
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

async fn lines(sock: TcpStream, mut stop: mpsc::Receiver<()>) {
    let mut lines = BufReader::new(sock).lines();
    loop {
        tokio::select! {
            l = lines.next_line() => { if l.is_err() { break; } }
            _ = stop.recv() => break,
        }
    }
}

async fn once(mut sock: TcpStream, mut stop: mpsc::Receiver<()>) {
    let mut buf = [0u8; 8];
    tokio::select! {
        _ = sock.read_exact(&mut buf) => {}
        _ = stop.recv() => {}
    }
}

async fn pinned(mut sock: TcpStream, mut stop: mpsc::Receiver<()>) {
    let mut buf = [0u8; 8];
    let read = sock.read_exact(&mut buf);
    tokio::pin!(read);
    loop {
        tokio::select! {
            _ = &mut read => break,
            _ = stop.recv() => return,
        }
    }
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(SelectNotCancelSafe);
}
