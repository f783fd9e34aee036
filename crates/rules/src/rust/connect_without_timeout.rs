//! RS021: `TcpStream::connect` with no timeout in service code.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
use unsnarl_model::walk::exprs_under;
use unsnarl_model::*;

pub struct ConnectWithoutTimeout;

pub static META: RuleMeta = RuleMeta {
    id: "RS021",
    name: "connect-without-timeout",
    category: Category::MissingTimeout,
    severity: Severity::High,
    languages: &[Language::Rust],
    summary: "`tokio::net::TcpStream::connect(..).await` not wrapped in `tokio::time::timeout`, or `std::net::TcpStream::connect` instead of `connect_timeout`, in service code.",
    docs: r#"
A TCP connect with no deadline: `tokio::net::TcpStream::connect(addr).await`
outside `tokio::time::timeout(..)` (or async-std's `io::timeout`/`future::timeout`,
also around an `async { .. }` block that connects), or `std::net::TcpStream::connect(addr)`
(use `connect_timeout`). Test code, examples, benches and connects to a
literal loopback address are left alone, and so is an async connect that
a plain function hands on unawaited in the value it returns (`Connect {
inner: Box::pin(TcpStream::connect(addr)) }`): its caller polls it and
sets the deadline. A connect future bound to a local and then awaited
inside a timeout, or raced in `select!` against a sleep (`let t =
sleep(d); select! { s = connect => .., _ = t => Err(Timeout) }`), has
its deadline too. Nor is a connect in a function with a sibling that
takes a deadline (`connect` beside `connect_timeout`, as std's
`TcpStream` has), or in a private helper every caller of the file runs
inside a timeout, or in the branch of an `if let`/`match` on an `Option`
whose other branch connects with one (`if let Some(t) = self.timeout {
connect_timeout(&a, t) } else { connect(a) }`, or a `match` on a setting
named as a timeout where zero means none): a caller who set no timeout
asked for none. Nor is an async connect awaited in the body of a
library's public `async fn` that takes no timeout and bounds none of its
other connects (`pub async fn connect(addr)`): it is a step of the future the caller gets, and the
caller bounds it (`timeout(d, Client::connect(addr))`). A connect in a
private helper, a spawned task or a binary stays reported: no caller
holds that future.

## Why

A connect to a host that drops SYN packets (a firewall, a dead peer behind
a load balancer) waits for the operating system's own timeout, often two
minutes or more, with retries. During that time the caller, and everyone
waiting on it, is stuck; under an outage every request piles up there.

## Example

```rust
use tokio::net::TcpStream;

async fn open(addr: &str) -> std::io::Result<TcpStream> {
    TcpStream::connect(addr).await
}
```

## Fix

Bound the connect with a timeout.

```rust
use std::time::Duration;
use tokio::net::TcpStream;

async fn open(addr: &str) -> std::io::Result<TcpStream> {
    tokio::time::timeout(Duration::from_secs(3), TcpStream::connect(addr))
        .await
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::TimedOut))?
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for ConnectWithoutTimeout {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::non_service_path(cx) || cx.model.is_test {
            return;
        }
        for (e, c) in cx.calls_to(&[
            "tokio::net::TcpStream::connect",
            "async_std::net::TcpStream::connect",
            "std::net::TcpStream::connect",
        ]) {
            let ex = cx.expr(e);
            let fix = match c.target.as_deref() {
                Some("tokio::net::TcpStream::connect") => {
                    "wrap it: `tokio::time::timeout(Duration::from_secs(..), TcpStream::connect(addr)).await`"
                }
                // async-std has its own timer.
                Some("async_std::net::TcpStream::connect") => {
                    "wrap it: `async_std::future::timeout(Duration::from_secs(..), TcpStream::connect(addr)).await`"
                }
                Some("std::net::TcpStream::connect") => {
                    "use `std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(..))`"
                }
                _ => continue,
            };
            let f = cx.func_of(e);
            // In async code a std connect is first a blocking call
            // (`blocking-call-on-runtime` reports it).
            if c.target.as_deref() == Some("std::net::TcpStream::connect") && cx.runs_on_loop(f) {
                continue;
            }
            if common::test_like(cx, f) || common::under_timeout(cx, e) || loopback(cx, c) {
                continue;
            }
            // The connect future is built here and awaited inside a timeout
            // elsewhere in the function (`let fut = connect(..); timeout(d, fut)`).
            if bound_then_timed(cx, e)
                || handed_on_unawaited(cx, e, c)
                || has_timeout_sibling(cx, f)
                || callers_time_it(cx, f)
                || common::chosen_over(cx, e, &|k| k.name.contains("timeout"))
                || public_async_step(cx, f, c)
            {
                continue;
            }
            out.push(cx.finding(
                &META,
                ex.span,
                format!(
                    "`{}` has no timeout: a peer that drops the SYN (a firewall, a dead host) keeps this connect waiting for the OS timeout, minutes, and every caller waits with it",
                    cx.callee_display(c)
                ),
                fix,
            ));
        }
    }
}

/// An async connect whose future this code never awaits: it goes into a
/// value it returns (`Connect { inner: Box::pin(TcpStream::connect(addr))
/// }`, or the future itself as the function's value), so the caller polls
/// it and sets the deadline (`timeout(d, connect(addr)).await`).
fn handed_on_unawaited(cx: &FileCx, e: ExprId, c: &Call) -> bool {
    if c.target.as_deref() == Some("std::net::TcpStream::connect") {
        return false;
    }
    let mut cur = e;
    loop {
        match cx.tree.expr_parent(cur) {
            Parent::Expr(p) => match &cx.expr(p).kind {
                ExprKind::Await(_) => return false,
                ExprKind::Call(_) | ExprKind::Collection { .. } => cur = p,
                _ => return false,
            },
            Parent::Stmt(s) => {
                return matches!(
                    cx.stmt(s).kind,
                    StmtKind::Tail(_) | StmtKind::Return(Some(_))
                ) && !cx.func(cx.func_of(e)).is_async;
            }
            _ => return false,
        }
    }
}

/// The connecting function has a sibling that takes a deadline
/// (`connect` beside `connect_timeout` or `connect_with_timeout` in the
/// same `impl` or module), as std's `TcpStream` has: the plain one is
/// the API for callers who bound it themselves, or want no bound.
fn has_timeout_sibling(cx: &FileCx, f: FuncId) -> bool {
    let func = cx.func(f);
    let timed = [
        format!("{}_timeout", func.name),
        format!("{}_with_timeout", func.name),
    ];
    cx.model.function_ids().any(|g| {
        let sib = cx.func(g);
        g != f && sib.class == func.class && timed.iter().any(|t| sib.name == t.as_str())
    })
}

/// The connecting function is private to its module (no `pub`) and every
/// call of it in the file runs inside a timeout (`timeout(self.timeout,
/// self.tcp_stream()).await`, or `let send = request(..); timeout(d,
/// send)`), or sits in another private function whose calls all do, two
/// levels up: its callers set the deadline.
fn callers_time_it(cx: &FileCx, f: FuncId) -> bool {
    callers_time_it_within(cx, f, 2)
}

fn callers_time_it_within(cx: &FileCx, f: FuncId, depth: u32) -> bool {
    let func = cx.func(f);
    if func.name.is_empty() {
        return false;
    }
    if visibility(cx, func).is_some() {
        return false;
    }
    let mut calls = (0..cx.model.exprs.len() as u32).map(ExprId).filter(|&x| {
        cx.call(x)
            .is_some_and(|c| c.name == func.name && cx.callee_in_file(c) == Some(f))
    });
    let mut any = false;
    calls.all(|x| {
        any = true;
        common::under_timeout(cx, x)
            || bound_then_timed(cx, x)
            || (depth > 0 && callers_time_it_within(cx, cx.func_of(x), depth - 1))
    }) && any
}

/// An async connect awaited in the body of a library's public `async fn`
/// that has no timeout of its own to apply (no parameter named or typed as
/// one, no other connect it bounds itself): the connect is a step of the future the caller gets, and the
/// caller bounds the whole of it with `tokio::time::timeout(d,
/// client.connect())`, which dropping the future enforces. A connect in a
/// task the function spawns, in a binary (`main.rs`, `bin/`), or in a
/// private helper stays reported: no caller holds that future.
fn public_async_step(cx: &FileCx, f: FuncId, c: &Call) -> bool {
    let func = cx.func(f);
    if !func.is_async
        || func.kind == FnKind::Closure
        || func.kind == FnKind::AsyncBlock
        || c.target.as_deref() == Some("std::net::TcpStream::connect")
    {
        return false;
    }
    let path = cx.path.replace('\\', "/");
    if path.ends_with("main.rs") || path.contains("/bin/") || path.starts_with("bin/") {
        return false;
    }
    let public = visibility(cx, func) == Some(Visibility::Public);
    let has_timeout = func.params.iter().any(|p| {
        p.name.to_ascii_lowercase().contains("timeout")
            || p.ty
                .as_ref()
                .is_some_and(|t| t.text.to_ascii_lowercase().contains("timeout"))
    });
    // A function that bounds another of its connects takes the deadlines
    // on itself: the unbounded one is an omission.
    let bounds_others = cx
        .body_calls(f)
        .any(|x| cx.call(x).is_some_and(|k| k.name.contains("timeout")));
    public && !has_timeout && !bounds_others
}

#[derive(PartialEq)]
enum Visibility {
    /// `pub`.
    Public,
    /// `pub(crate)`, `pub(super)`, `pub(in path)`.
    Restricted,
}

/// The `pub` written before a function's name, if any.
fn visibility(cx: &FileCx, func: &Function) -> Option<Visibility> {
    let head = cx.source(Span::new(func.span.start, func.name_span.start));
    let is_word = |ch: char| ch.is_alphanumeric() || ch == '_';
    head.match_indices("pub").find_map(|(i, _)| {
        let before = head[..i].chars().next_back();
        let after = &head[i + 3..];
        if before.is_some_and(is_word) || after.chars().next().is_some_and(is_word) {
            return None;
        }
        Some(if after.trim_start().starts_with('(') {
            Visibility::Restricted
        } else {
            Visibility::Public
        })
    })
}

/// A connect to a literal loopback address.
fn loopback(cx: &FileCx, c: &Call) -> bool {
    c.args.iter().any(|a| {
        exprs_under(cx.model, a.value)
            .into_iter()
            .any(|x| match cx.model.literal(x) {
                Some(Lit::Str(s)) => crate::shared::is_loopback_host(s),
                _ => false,
            })
    })
}

/// The connect future is bound to a local, then awaited inside a timeout
/// (`let fut = connect(..); timeout(d, fut)`) or raced in a `select!`
/// against a sleep (`let t = sleep(d); select! { s = fut => .., _ = t =>
/// Err(Timeout) }`).
fn bound_then_timed(cx: &FileCx, e: ExprId) -> bool {
    let Some(s) = cx.tree.enclosing_stmt(e) else {
        return false;
    };
    let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind else {
        return false;
    };
    let Some(name) = targets
        .first()
        .and_then(|&t| common::binding_name(cx.model, t))
    else {
        return false;
    };
    let f = cx.func_of(e);
    let uses = common::uses_after(cx, f, name, cx.stmt(s).span.end);
    uses.iter().any(|&u| common::under_timeout(cx, u)) || raced_against_sleep(cx, f, &uses)
}

/// One of `uses` is the future of a `select!` arm, and another arm waits
/// on a sleep, directly or through a local bound to one.
fn raced_against_sleep(cx: &FileCx, f: FuncId, uses: &[ExprId]) -> bool {
    // A sleep, or one until a deadline (`sleep_until(deadline)`).
    let is_sleep = |x: ExprId| {
        cx.call(x).is_some_and(|c| {
            common::is_sleep(c) || matches!(c.name.as_str(), "sleep_until" | "delay_until")
        })
    };
    let sleeps = |x: ExprId| {
        let x = cx.model.strip(x);
        is_sleep(x)
            || cx.model.name_of(x).is_some_and(|n| {
                cx.body_stmts(f).iter().any(|&st| {
                    matches!(&cx.stmt(st).kind, StmtKind::Assign { targets, value: Some(v), .. }
                        if targets.first().and_then(|&t| common::binding_name(cx.model, t)) == Some(n)
                            && is_sleep(cx.model.strip(*v)))
                })
            })
    };
    cx.body_stmts(f).iter().any(|&st| {
        let StmtKind::Select { arms, .. } = &cx.stmt(st).kind else {
            return false;
        };
        let futures: Vec<ExprId> = arms
            .iter()
            .filter_map(|a| match a.kind {
                ArmKind::Future { future, .. } => Some(future),
                _ => None,
            })
            .collect();
        futures
            .iter()
            .any(|&fu| uses.iter().any(|&u| cx.contains(fu, u)))
            && futures.iter().any(|&fu| sleeps(fu))
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[
        r#"
use tokio::net::TcpStream;

async fn dial(addr: std::net::SocketAddr) -> std::io::Result<TcpStream> {
    let s = TcpStream::connect(addr).await?; // expect
    s.set_nodelay(true)?;
    Ok(s)
}

fn dial_sync(addr: &str) -> std::io::Result<std::net::TcpStream> {
    std::net::TcpStream::connect(addr) // expect
}

async fn dial_async_std(addr: &str) -> std::io::Result<async_std::net::TcpStream> {
    async_std::net::TcpStream::connect(addr).await // expect
}
"#,
        r#"
use tokio::net::TcpStream;

pub struct Framed {
    pub io: TcpStream,
}

pub(crate) async fn open(addr: &str) -> std::io::Result<Framed> {
    let conn = Box::pin(TcpStream::connect(addr)); // expect
    Ok(Framed { io: conn.await? })
}
"#,
        r#"
use std::net::SocketAddr;
use tokio::net::TcpStream;
use tokio::sync::oneshot;

pub(crate) async fn connect(addr: SocketAddr, stop: oneshot::Receiver<()>) -> Result<TcpStream, Error> {
    let socket = TcpStream::connect(addr); // expect
    tokio::select! {
        socket = socket => Ok(socket?),
        _ = stop => Err(Error::Stopped),
    }
}
"#,
        r#"
use std::time::Duration;
use tokio::net::TcpStream;

pub struct Client { timeout: Duration, addr: String }

impl Client {
    async fn tcp_stream(&self) -> std::io::Result<TcpStream> {
        TcpStream::connect(&self.addr).await // expect
    }

    pub async fn connect(&self) -> std::io::Result<TcpStream> {
        tokio::time::timeout(self.timeout, self.tcp_stream()).await?
    }

    pub async fn connect_plain(&self) -> std::io::Result<TcpStream> {
        self.tcp_stream().await
    }
}
"#,
        r#"
use std::net::{SocketAddr, TcpStream};

pub struct Conn {
    secure: bool,
}

impl Conn {
    /// Neither branch bounds the connect.
    pub fn open(&self, addr: SocketAddr) -> std::io::Result<TcpStream> {
        if self.secure {
            let s = TcpStream::connect(addr)?; // expect
            wrap_tls(s)
        } else {
            TcpStream::connect(addr) // expect
        }
    }
}
"#,
        r#"
use std::time::Duration;
use tokio::net::TcpStream;

// The match is on the scheme, not on a timeout the caller chose: the
// plain branch connects with no deadline at all.
pub async fn open(scheme: &str, addr: &str) -> std::io::Result<TcpStream> {
    match scheme {
        "http" => TcpStream::connect(addr).await, // expect
        _ => tokio::time::timeout(Duration::from_secs(5), TcpStream::connect(addr))
            .await
            .map_err(|_| std::io::ErrorKind::TimedOut.into())
            .and_then(|r| r),
    }
}
"#,
        r#"
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::time::timeout;

async fn raw_request(addr: std::net::SocketAddr) -> std::io::Result<TcpStream> {
    TcpStream::connect(addr).await // expect
}

async fn control_urls(addr: std::net::SocketAddr) -> std::io::Result<TcpStream> {
    raw_request(addr).await
}

pub async fn send(addr: std::net::SocketAddr) -> std::io::Result<TcpStream> {
    let fut = raw_request(addr);
    timeout(Duration::from_secs(5), fut).await?
}

pub async fn discover(addr: std::net::SocketAddr) -> std::io::Result<TcpStream> {
    control_urls(addr).await
}
"#,
        r#"
use tokio::net::TcpStream;

pub struct Client;

impl Client {
    // The reconnect runs in a task no caller holds.
    pub async fn start(addr: String) -> Client {
        tokio::spawn(async move {
            loop {
                if let Ok(stream) = TcpStream::connect(&addr).await { // expect
                    serve(stream).await;
                }
            }
        });
        Client
    }

    pub(crate) async fn open(addr: &str) -> std::io::Result<TcpStream> {
        TcpStream::connect(addr).await // expect
    }
}

async fn serve(_s: TcpStream) {}
"#,
    ],
    pass: &[
        r#"
use tokio::net::TcpStream;

pub struct Connection {
    stream: TcpStream,
}

impl Connection {
    /// Bound it with `tokio::time::timeout(d, Connection::connect(addr))`.
    pub async fn connect(addr: &str) -> std::io::Result<Connection> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Connection { stream })
    }
}
"#,
        r#"
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

pub struct Config {
    pub connect_timeout_ms: u64,
}

pub fn dial(config: &Config, addr: &SocketAddr) -> std::io::Result<TcpStream> {
    // Zero is the documented "use the OS default" setting.
    match config.connect_timeout_ms {
        0 => TcpStream::connect(addr),
        ms => TcpStream::connect_timeout(addr, Duration::from_millis(ms)),
    }
}
"#,
        r#"
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::time::timeout;

async fn raw_request(addr: std::net::SocketAddr) -> std::io::Result<TcpStream> {
    TcpStream::connect(addr).await
}

async fn control_urls(addr: std::net::SocketAddr) -> std::io::Result<TcpStream> {
    raw_request(addr).await
}

pub async fn send(addr: std::net::SocketAddr) -> std::io::Result<TcpStream> {
    let fut = raw_request(addr);
    timeout(Duration::from_secs(5), fut).await?
}

pub async fn discover(addr: std::net::SocketAddr) -> std::io::Result<TcpStream> {
    timeout(Duration::from_secs(10), control_urls(addr)).await?
}
"#,
        r#"
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::time::timeout;

async fn dial(addr: std::net::SocketAddr) -> std::io::Result<TcpStream> {
    let s = timeout(Duration::from_secs(3), TcpStream::connect(addr)).await??;
    Ok(s)
}

async fn local() -> std::io::Result<TcpStream> {
    TcpStream::connect("127.0.0.1:8080").await
}

fn dial_sync(addr: &std::net::SocketAddr) -> std::io::Result<std::net::TcpStream> {
    std::net::TcpStream::connect_timeout(addr, Duration::from_secs(3))
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn connects() {
        let s = tokio::net::TcpStream::connect("example.com:80").await.unwrap();
    }
}
"#,
        r#"
use tokio::net::{TcpStream, ToSocketAddrs};

pub struct Connect<F> {
    inner: std::pin::Pin<Box<F>>,
    max_frame: usize,
}

// A lazy connect: the caller polls it and sets the deadline.
pub fn connect<A: ToSocketAddrs>(addr: A) -> Connect<impl Future<Output = std::io::Result<TcpStream>>> {
    Connect {
        inner: Box::pin(TcpStream::connect(addr)),
        max_frame: 1 << 20,
    }
}
"#,
        r#"
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpStream;

pub async fn connect(addr: SocketAddr, limit: Duration) -> Result<TcpStream, Error> {
    let socket = TcpStream::connect(addr);
    let timeout = tokio::time::sleep(limit);
    tokio::select! {
        socket = socket => Ok(socket?),
        _ = timeout => Err(Error::Timeout(limit)),
    }
}
"#,
        r#"
use async_std::net::{SocketAddr, TcpStream};
use std::time::Duration;

pub async fn connect_timeout(addr: SocketAddr, timeout: Duration) -> std::io::Result<TcpStream> {
    let stream = async_std::io::timeout(timeout, async move { TcpStream::connect(addr).await }).await?;
    Ok(stream)
}
"#,
        r#"
use std::time::Duration;
use tokio::net::TcpStream;

pub async fn open(addr: &str, timeout: Duration) -> std::io::Result<TcpStream> {
    tokio::time::timeout(timeout, async {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(stream)
    })
    .await?
}
"#,
        r#"
use std::time::Duration;
use tokio::net::TcpStream;

pub struct Client { timeout: Duration, addr: String }

impl Client {
    async fn tcp_stream(&self) -> std::io::Result<TcpStream> {
        TcpStream::connect(&self.addr).await
    }

    pub async fn connect(&self) -> std::io::Result<TcpStream> {
        tokio::time::timeout(self.timeout, self.tcp_stream()).await?
    }

    pub async fn connect_plain(&self) -> std::io::Result<TcpStream> {
        tokio::time::timeout(self.timeout, async { self.tcp_stream().await }).await?
    }
}
"#,
        r#"
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

pub struct FtpStream { stream: TcpStream }

impl FtpStream {
    pub fn connect<A: ToSocketAddrs>(addr: A) -> std::io::Result<Self> {
        let stream = TcpStream::connect(addr)?;
        Ok(FtpStream { stream })
    }

    pub fn connect_timeout(addr: SocketAddr, timeout: Duration) -> std::io::Result<Self> {
        let stream = TcpStream::connect_timeout(&addr, timeout)?;
        Ok(FtpStream { stream })
    }
}
"#,
        r#"
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

pub struct Conn {
    timeout: Option<Duration>,
}

impl Conn {
    /// The caller's `None` means "no deadline", as with std's own API.
    pub fn open(&self, addr: SocketAddr) -> std::io::Result<TcpStream> {
        if let Some(t) = self.timeout {
            TcpStream::connect_timeout(&addr, t)
        } else {
            TcpStream::connect(addr)
        }
    }
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(ConnectWithoutTimeout);

    /// Each runtime's connect gets that runtime's timer.
    #[test]
    fn the_fix_uses_the_runtime_of_the_connect() {
        let fixes = crate::testing::fixes(&ConnectWithoutTimeout, Language::Rust, EXAMPLES.fail[0]);
        assert_eq!(fixes.len(), 3, "{fixes:#?}");
        assert!(fixes[0].contains("tokio::time::timeout"), "{fixes:#?}");
        assert!(fixes[1].contains("connect_timeout"), "{fixes:#?}");
        assert!(
            fixes[2].contains("async_std::future::timeout") && !fixes[2].contains("tokio"),
            "{fixes:#?}"
        );
    }
}
