//! RS002: a blocking call on an async runtime thread.

use super::common;
use super::locks::{self, Held, Sink};
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use crate::shared::blocking;
use std::collections::HashMap;
use unsnarl_model::*;

pub struct BlockingCall;

pub static META: RuleMeta = RuleMeta {
    id: "RS002",
    name: "blocking-call-on-runtime",
    category: Category::BlockingInAsync,
    severity: Severity::High,
    languages: &[Language::Rust],
    summary: "An `async fn` or async block calls blocking std APIs (`thread::sleep`, `std::fs`, `std::net`, `Command::output`, `reqwest::blocking`, sync channel receives), directly or through a project helper.",
    docs: r#"
Inside an `async fn` or `async` block: `std::thread::sleep`, `std::fs::*`,
`std::io::stdin()` reads, `std::net` sockets, `std::process::Command::output`
/ `status` / `Child::wait`, `reqwest::blocking`, `std::sync::mpsc` /
`crossbeam_channel` blocking receives and sends (not a send on an
unbounded channel, which never waits, also when the sender is a struct field
only ever filled from `unbounded()`), `Condvar::wait`,
`Barrier::wait`, `JoinHandle::join`; or a call to a sync function of the
project that makes one of them. Code inside `spawn_blocking` and
`block_in_place` closures is exempt, and so is the entry of an example or
bench program (`#[tokio::main]`, or the async block `main` hands to
`block_on`) up to its first spawn or serve: nothing else runs on the
runtime yet. On tokio's multi-thread runtime (`#[tokio::main]` without
the `current_thread` flavor) an example's `main`, and an async fn of its
file that `main` only ever awaits directly, are left alone throughout:
`main`'s future runs on the program's own thread, the one `block_on`
blocks, not on a worker, so spawned tasks keep running.

## Why

A tokio worker thread runs many tasks and only switches between them at
`.await`. A blocking call holds the worker: every task scheduled on it
stalls, timers fire late, and with a current-thread runtime (or all workers
blocked) the whole service freezes.

## Example

```rust
async fn handle(path: &str) -> std::io::Result<String> {
    std::thread::sleep(std::time::Duration::from_millis(100));
    std::fs::read_to_string(path)
}
```

## Fix

Use the async equivalents (`tokio::time::sleep`, `tokio::fs`, `tokio::net`,
`tokio::process`), or move the blocking part into `spawn_blocking`.

```rust
async fn handle(path: &str) -> std::io::Result<String> {
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    tokio::fs::read_to_string(path).await
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for BlockingCall {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        // Test scaffolding (`thread::sleep` in an async test) is not a
        // service stalling its runtime.
        let mut found = Vec::new();
        blocking::check(
            cx,
            &META,
            Effect::Blocking,
            |cx, f| cx.runs_on_loop(f) && !common::test_like(cx, f),
            &mut found,
        );
        out.extend(
            found
                .into_iter()
                .filter(|f| !example_startup(cx, f.span) && !example_main_thread(cx, f.span)),
        );
        contended_locks(cx, out);
    }
}

/// An example or bench program's runtime entry (`#[tokio::main]`) reading
/// its certificates or settings before it spawns or serves anything: no
/// other task exists yet for the blocking call to stall.
fn example_startup(cx: &FileCx, at: Span) -> bool {
    if !common::non_service_path(cx) {
        return false;
    }
    // `#[tokio::main] async fn main`, or `fn main() { block_on(async { .. }) }`:
    // the one future the program drives on its own thread.
    let block_on_in_main = |f: FuncId| {
        cx.func(f).kind == FnKind::AsyncBlock
            && cx
                .func(f)
                .parent
                .is_some_and(|p| cx.func(p).name.as_str() == "main" && cx.func(p).class.is_none())
            && matches!(cx.tree.func_site(f), unsnarl_model::walk::Parent::Expr(lit)
                if matches!(cx.tree.expr_parent(lit), unsnarl_model::walk::Parent::Expr(call)
                    if cx.call(call).is_some_and(|c| c.name == "block_on")))
    };
    let Some(entry) = cx.model.function_ids().find(|&f| {
        let func = cx.func(f);
        func.is_async
            && func.span.contains(at)
            && (func
                .decorators
                .iter()
                .any(|d| d == "main" || d.ends_with("::main"))
                || block_on_in_main(f))
    }) else {
        return false;
    };
    let span = cx.func(entry).span;
    !cx.model.exprs.iter().any(|e| {
        e.span.end <= at.start
            && span.contains(e.span)
            && matches!(&e.kind, ExprKind::Call(c) if cx.effect(c, Effect::Spawn).is_some()
                || c.name.starts_with("spawn")
                || matches!(c.name.as_str(), "serve" | "accept" | "run" | "start" | "block_on"))
    })
}

/// An example or bench program on tokio's multi-thread runtime
/// (`#[tokio::main]`, no `current_thread` flavor): `main`'s future runs on
/// the program's own thread, the one `block_on` blocks, not on a worker.
/// A blocking call there, or in an async fn of the file that `main` only
/// ever awaits directly (`zk_example().await`), stalls no spawned task,
/// only the program's own next step.
fn example_main_thread(cx: &FileCx, at: Span) -> bool {
    if !common::non_service_path(cx) {
        return false;
    }
    let Some(main) = cx.model.function_ids().find(|&f| {
        let func = cx.func(f);
        func.is_async
            && func.name.as_str() == "main"
            && func.class.is_none()
            && func.decorators.iter().any(|d| d == "tokio::main")
            && !func.decorator_calls.iter().any(|&d| {
                cx.call(d).is_some_and(|c| {
                    c.kwarg("flavor").is_some_and(|v| {
                        matches!(cx.model.literal(v), Some(Lit::Str(s)) if s.contains("current"))
                    })
                })
            })
    }) else {
        return false;
    };
    // The innermost function holding the call.
    let Some(g) = cx
        .model
        .function_ids()
        .filter(|&f| cx.func(f).span.contains(at))
        .min_by_key(|&f| cx.func(f).span.end - cx.func(f).span.start)
    else {
        return false;
    };
    if g == main {
        return true;
    }
    let func = cx.func(g);
    if !func.is_async || func.kind != FnKind::Function {
        return false;
    }
    let mut calls = (0..cx.model.exprs.len() as u32)
        .map(ExprId)
        .filter(|&e| cx.call(e).is_some_and(|c| cx.callee_in_file(c) == Some(g)));
    let mut any = false;
    calls.all(|e| {
        any = true;
        cx.func_of(e) == main
            && matches!(cx.tree.expr_parent(e), unsnarl_model::walk::Parent::Expr(p)
                if matches!(cx.expr(p).kind, ExprKind::Await(_)))
    }) && any
}

/// Locks whose guard some function of the file holds across a blocking
/// call: the first such call per lock.
struct HeldAcrossBlocking {
    found: HashMap<String, (FuncId, ExprId, Span)>,
}

impl Sink for HeldAcrossBlocking {
    fn call(&mut self, cx: &FileCx, call: ExprId, held: &[Held]) {
        let Some(c) = cx.call(call) else { return };
        if cx.effect(c, Effect::Blocking).is_none() {
            return;
        }
        for h in held {
            if let Some(id) = &h.acq.id
                && !h.acq.is_async
                && h.acq.typed
            {
                self.found
                    .entry(id.clone())
                    .or_insert((cx.func_of(call), call, h.acq.span));
            }
        }
    }
}

/// `lock()` of a std/parking_lot mutex in async code, when some function
/// of the file holds that same lock across blocking I/O: the runtime
/// worker waits for that I/O too.
fn contended_locks(cx: &FileCx, out: &mut Vec<Finding>) {
    let mut sink = HeldAcrossBlocking {
        found: HashMap::new(),
    };
    for f in cx.model.function_ids() {
        if cx.func(f).kind != FnKind::Module {
            locks::walk_fn(cx, f, &mut sink);
        }
    }
    if sink.found.is_empty() {
        return;
    }
    for (i, _) in cx.model.exprs.iter().enumerate() {
        let e = ExprId(i as u32);
        let Some(acq) = locks::acquisition(cx, e) else {
            continue;
        };
        if acq.is_async || !cx.runs_on_loop(cx.func_of(e)) {
            continue;
        }
        let Some(id) = &acq.id else { continue };
        let Some((holder, io, _)) = sink.found.get(id) else {
            continue;
        };
        if *holder == cx.func_of(e) {
            continue;
        }
        let io_call = cx.call(*io).expect("a call");
        let mut f = cx.finding(
            &META,
            acq.span,
            format!(
                "`{}.{}()` in {} waits for a blocking lock that {} holds across blocking I/O (`{}` at line {}): while that I/O runs, this runtime worker thread is blocked too, and every task on it stalls",
                acq.text,
                cx.call(e).map(|c| c.name.as_str()).unwrap_or("lock"),
                cx.async_func_display(cx.func_of(e)),
                locks::fn_label(cx, *holder),
                cx.callee_display(io_call),
                common::line_of(cx, cx.expr(*io).span)
            ),
            "do not hold the lock across I/O (copy what the I/O needs, drop the guard, then do it), or take the lock in `tokio::task::spawn_blocking` / switch to `tokio::sync::Mutex`",
        );
        f.related.push(Related {
            file: None,
            span: cx.expr(*io).span,
            message: "blocking I/O while holding the lock".into(),
        });
        out.push(f);
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[
        r#"
use std::thread;
use std::time::Duration;

async fn poll() {
    thread::sleep(Duration::from_secs(1)); // expect
    let data = std::fs::read("/etc/hosts"); // expect
    let out = std::process::Command::new("ls").arg("-l").output(); // expect
}
"#,
        r#"
use std::fs::File;

fn load() -> File {
    File::open("cfg").unwrap()
}

async fn handler() {
    tokio::spawn(async {
        std::thread::sleep(std::time::Duration::from_millis(5)); // expect
    })
    .await
    .unwrap();
    let f = load(); // expect
}
"#,
        r#"
async fn get(url: &str) -> String {
    reqwest::blocking::get(url).unwrap().text().unwrap() // expect
}

async fn forward(items: Vec<u32>) -> flume::Receiver<u32> {
    let (tx, rx) = flume::bounded(8);
    for i in items {
        tx.send(i).unwrap(); // expect
    }
    rx
}
"#,
        r#"
use std::io::Write;
use std::sync::Mutex;

static LOG: Mutex<Option<std::fs::File>> = Mutex::new(None);

fn rotate() {
    let mut g = LOG.lock().unwrap();
    *g = Some(std::fs::File::create("app.log").unwrap());
}

async fn record(line: &str) {
    let mut g = LOG.lock().unwrap(); // expect
    if let Some(f) = g.as_mut() {
        let _ = f.write_all(line.as_bytes());
    }
}
"#,
        r#"
// file: examples/watch.rs
// Once tasks run, the entry function's blocking read stalls them: on the
// current-thread runtime they run only while `main` waits.
#[tokio::main(flavor = "current_thread")]
async fn main() {
    tokio::spawn(report_forever());
    loop {
        let cfg = std::fs::read_to_string("watch.toml").unwrap(); // expect
        apply(cfg).await;
    }
}
"#,
        r#"
use flume::Sender;

pub struct Waker {
    events: Sender<u8>,
}

impl Waker {
    pub fn new() -> (Self, flume::Receiver<u8>) {
        let (events, rx) = flume::bounded(1);
        (Self { events }, rx)
    }

    pub async fn publish(&self, out: &tokio::sync::Mutex<Vec<u8>>, b: u8) {
        out.lock().await.push(b);
        let _ = self.events.send(b); // expect
    }
}
"#,
        r#"
// file: examples/watch.rs
// A spawned task runs on a worker: its blocking read stalls the others.
#[tokio::main]
async fn main() {
    tokio::spawn(reload());
    serve().await;
}

async fn reload() {
    loop {
        let cfg = std::fs::read_to_string("watch.toml").unwrap(); // expect
        apply(cfg).await;
    }
}
"#,
    ],
    pass: &[
        r#"
// file: examples/ls.rs
use futures_lite::{future, prelude::*};

fn main() -> std::io::Result<()> {
    let root = std::env::args().nth(1).unwrap_or_else(|| ".".into());
    future::block_on(async {
        let meta = std::fs::metadata(&root)?;
        println!("{root}: dir={}", meta.is_dir());
        Ok(())
    })
}
"#,
        r#"
use std::time::Duration;

async fn poll() {
    tokio::time::sleep(Duration::from_secs(1)).await;
    let data = tokio::fs::read("/etc/hosts").await;
    let v = tokio::task::spawn_blocking(|| std::fs::read("/etc/hosts")).await;
    tokio::task::block_in_place(|| std::thread::sleep(Duration::from_millis(1)));
}

fn sync_only() {
    std::thread::sleep(Duration::from_secs(1));
}

async fn forward(items: Vec<u32>) -> flume::Receiver<u32> {
    let (tx, rx) = flume::unbounded();
    for i in items {
        tx.send(i).unwrap();
    }
    rx
}
"#,
        r#"
// file: examples/echo.rs
// An example program reads its certificate before it starts anything.
#[tokio::main]
async fn main() {
    let cert = std::fs::read("cert.der").unwrap();
    let listener = tokio::net::TcpListener::bind("0.0.0.0:4433").await.unwrap();
    serve(listener, cert).await;
}
"#,
        r#"
use flume::Sender;

pub struct Waker {
    events: Sender<u8>,
}

impl Waker {
    pub fn new() -> (Self, flume::Receiver<u8>) {
        let (events, rx) = flume::unbounded();
        (Self { events }, rx)
    }

    pub async fn publish(&self, out: &tokio::sync::Mutex<Vec<u8>>, b: u8) {
        out.lock().await.push(b);
        let _ = self.events.send(b);
    }
}
"#,
        r#"
// file: examples/latch.rs
// `main` runs on the program's own thread, not a worker: waiting for the
// user there stalls none of the spawned tasks.
#[tokio::main]
async fn main() {
    demo().await;
}

async fn demo() {
    let zk = connect().await;
    tokio::spawn(watch(zk.clone()));
    println!("press enter to stop");
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    zk.close().await;
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(BlockingCall);

    /// A chain's fix does not nest the blocking call's own fix (which has
    /// parentheses) in another pair, and says which call to offload.
    #[test]
    fn a_chain_fix_does_not_nest_parentheses() {
        let src = r#"
fn wait_done(rx: &std::sync::mpsc::Receiver<()>) {
    rx.recv().unwrap();
}

async fn handler(rx: std::sync::mpsc::Receiver<()>) {
    wait_done(&rx);
}
"#;
        let fixes = crate::testing::fixes(&BlockingCall, Language::Rust, src);
        assert_eq!(fixes.len(), 1, "{fixes:#?}");
        let fix = &fixes[0];
        assert!(
            fix.starts_with("make the helper non-blocking: use the async"),
            "{fix}"
        );
        assert!(
            fix.ends_with("; or run the call of the helper in `tokio::task::spawn_blocking`"),
            "{fix}"
        );
        assert!(!fix.contains("))"), "{fix}");
    }
}
