//! RS007: a task or thread spawned per item of an unbounded input.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::walk::{exprs_in_block, exprs_under};
use unsnarl_model::*;

pub struct SpawnPerItem;

pub static META: RuleMeta = RuleMeta {
    id: "RS007",
    name: "spawn-per-item",
    category: Category::UnboundedFanout,
    severity: Severity::High,
    languages: &[Language::Rust],
    summary: "`tokio::spawn`/`std::thread::spawn` per item of a collection or stream with no `Semaphore`/`buffer_unordered` cap, or `join_all` over an unbounded iterator.",
    docs: r#"
A task or thread is started for every item of an input whose size the code
does not control: a `for` loop over a collection, a stream or an iterator
(not a numeric range, not a literal list, not a list from the command line:
`std::env::args()`, clap's `get_many`/`values_of`, nor one read from the
program's configuration: `self.config.listeners`, `v4_config.clone()`,
one server per configured entry) with `tokio::spawn`,
`std::thread::spawn`, `spawn_blocking` or `Handle::spawn` in its body, the
same in an iterator `.map(|x| tokio::spawn(..))`, or `join_all` /
`try_join_all` over `items.iter().map(..)`. Not flagged: a `Semaphore`
permit taken in the loop or inside the task, `buffer_unordered(n)` /
`buffered(n)` in the function, handles awaited inside the loop body (one at
a time), `JoinSet`/scoped spawns, chunked inputs (`.chunks(n)`), a task
whose async block never awaits (it ends in its first poll, so no two run
at once), and a
`join_all` whose per-item future only awaits the item itself (`|rx| async
move { rx.await }`): those futures are already under way, joining them
starts nothing. Nor is a `join_all` over objects the struct already holds
whose per-item future is the item's own method (`self.consumers
.values_mut().map(|c| c.get_stats())`): each object exists with its
connection already open, and there are as many as the struct keeps.
Example and bench programs (files under `examples/` or `benches/`, but
not a project with a `src/` of its own kept there, and benchmark binaries
such as `src/bin/perf-producer.rs`) are not reported: they
run once and exit, and what they start is a demonstration.

## Why

The number of concurrent tasks becomes whatever the input size is: ten in
development, a million in production. Each one holds memory, sockets and
file descriptors, and all of them hit the downstream service at once, which
then slows down or fails for everyone (you become the thundering herd).

## Example

```rust
async fn fetch_all(urls: Vec<String>) {
    let mut handles = Vec::new();
    for url in urls {
        handles.push(tokio::spawn(async move { fetch(&url).await }));
    }
    for h in handles {
        let _ = h.await;
    }
}
```

## Fix

Cap the number of operations in flight: a stream with `buffer_unordered`,
or a `Semaphore` permit held by each task.

```rust
use futures::stream::{self, StreamExt};

async fn fetch_all(urls: Vec<String>) {
    let results: Vec<_> = stream::iter(urls)
        .map(|url| async move { fetch(&url).await })
        .buffer_unordered(16)
        .collect()
        .await;
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for SpawnPerItem {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        // Example and bench programs run once and exit: their spawns,
        // queues and retries are demonstrations, not a service's.
        if super::common::non_service_path(cx) {
            return;
        }
        let mut seen = HashSet::new();
        for (i, st) in cx.model.stmts.iter().enumerate() {
            let s = StmtId(i as u32);
            let StmtKind::For { iter, body, .. } = &st.kind else {
                continue;
            };
            let f = cx.tree.stmt_func(s);
            if common::test_like(cx, f) || bounded_iter(cx, *iter) || capped_fn(cx, f) {
                continue;
            }
            let exprs = exprs_in_block(cx.model, body);
            // Handles awaited or joined in the loop body: one at a time.
            if exprs.iter().any(|&e| {
                matches!(cx.expr(e).kind, ExprKind::Await(_))
                    || cx.call(e).is_some_and(|c| {
                        matches!(
                            c.name.as_str(),
                            "join" | "join_next" | "acquire" | "acquire_owned"
                        )
                    })
            }) {
                continue;
            }
            for e in exprs {
                if let Some(kind) = unscoped_spawn(cx, e)
                    && !task_takes_permit(cx, e)
                    && !(kind == "task" && never_suspends(cx, e))
                    && seen.insert(e)
                {
                    out.push(report(cx, e, kind, &common::text(cx, *iter)));
                }
            }
        }
        // `items.iter().map(|x| tokio::spawn(..))` and
        // `join_all(items.iter().map(..))`.
        for (i, ex) in cx.model.exprs.iter().enumerate() {
            let e = ExprId(i as u32);
            let ExprKind::Call(c) = &ex.kind else {
                continue;
            };
            let f = cx.func_of(e);
            if common::test_like(cx, f) {
                continue;
            }
            if c.name == "map"
                && let Some(recv) = c.receiver
                && let Some(cl) = c.positional(0).and_then(|a| common::closure_fn(cx, a))
                && !bounded_chain(cx, recv)
                && !capped_fn(cx, f)
            {
                for s in &cx.func(cl).body {
                    let StmtKind::Return(Some(v)) = &cx.stmt(*s).kind else {
                        continue;
                    };
                    let v = common::unwrap_value(cx, *v);
                    if let Some(kind) = unscoped_spawn(cx, v)
                        && !task_takes_permit(cx, v)
                        && !(kind == "task" && never_suspends(cx, v))
                        && seen.insert(v)
                    {
                        out.push(report(cx, v, kind, &common::text(cx, chain_base(cx, recv))));
                    }
                }
            }
            // `join_all(items.iter().map(f))`, and
            // `items.iter().map(f).collect::<FuturesUnordered<_>>()`.
            let mapped =
                if matches!(c.name.as_str(), "join_all" | "try_join_all") && c.receiver.is_none() {
                    c.positional(0)
                } else if c.name == "collect" && cx.source(ex.span).contains("FuturesUnordered") {
                    c.receiver
                } else {
                    None
                };
            if let Some(arg) = mapped
                && let Some(m) = cx.call(arg)
                && m.name == "map"
                && let Some(recv) = m.receiver
                && !bounded_chain(cx, recv)
                && !capped_fn(cx, f)
                && !m
                    .positional(0)
                    .and_then(|a| common::closure_fn(cx, a))
                    .is_some_and(|cl| fn_takes_permit(cx, cl))
                && !m.positional(0).is_some_and(|a| only_awaits_item(cx, a))
                && !m
                    .positional(0)
                    .is_some_and(|a| asks_held_objects(cx, a, recv))
                && seen.insert(e)
            {
                let what = if c.name == "collect" {
                    "`FuturesUnordered`"
                } else {
                    c.name.as_str()
                };
                out.push(cx.finding(
                    &META,
                    ex.span,
                    format!(
                        "{} runs one future per item of `{}` all at once, with nothing capping how many are in flight: whatever each one holds or sends (a request, a connection, a buffer) is multiplied by the size of the input",
                        if c.name == "collect" { what.to_string() } else { format!("`{what}`") },
                        common::text(cx, chain_base(cx, recv))
                    ),
                    "bound the concurrency: `futures::stream::iter(items).map(..).buffered(n)` (results in order, as `join_all` gives them) or `.buffer_unordered(n)`, or a `tokio::sync::Semaphore` permit per future",
                ));
            }
        }
    }
}

fn report(cx: &FileCx, e: ExprId, kind: &str, input: &str) -> Finding {
    let c = cx.call(e).expect("a spawn call");
    cx.finding(
        &META,
        cx.expr(e).span,
        format!(
            "`{}` starts a {kind} per item of `{input}` with nothing capping how many run at once: a large input starts that many {kind}s together, exhausting memory and file descriptors and flooding whatever they call",
            cx.callee_display(c)
        ),
        // Threads get no async tools.
        if kind == "thread" {
            "cap the concurrency: a fixed pool of worker threads fed by a bounded channel (`std::sync::mpsc::sync_channel`), or `std::thread::scope` over chunks of the input"
        } else {
            "cap the concurrency: a `tokio::sync::Semaphore` permit (`acquire_owned`) held by each task, `futures::stream::iter(..).buffer_unordered(n)`, or a fixed pool of workers fed by a bounded channel"
        },
    )
}

/// A spawn that is not owned by a scope or set: `tokio::spawn`,
/// `thread::spawn`, `spawn_blocking`, `Handle::spawn`... ("task"/"thread").
fn unscoped_spawn(cx: &FileCx, e: ExprId) -> Option<&'static str> {
    let c = cx.call(e)?;
    if cx.effect(c, Effect::ScopedSpawn).is_some() {
        return None;
    }
    let entry = cx.effect(c, Effect::Spawn)?;
    Some(if entry.kind.as_deref() == Some("thread") {
        "thread"
    } else {
        "task"
    })
}

/// The spawned async block never suspends: no `.await`, and no macro that
/// awaits for it (`select!`, `join!`). Each task runs to its end in its
/// first poll (`async move { let _ = tx.send(id); }` on a broadcast
/// channel), so the tasks never run at the same time and hold nothing
/// while others start.
fn never_suspends(cx: &FileCx, spawn: ExprId) -> bool {
    let Some(f) = common::spawned_fn(cx, spawn) else {
        return false;
    };
    cx.func(f).is_async
        && !cx.body_exprs(f).iter().any(|&e| match &cx.expr(e).kind {
            ExprKind::Await(_) => true,
            ExprKind::Call(c) => {
                c.is_macro && (c.name.contains("select") || c.name.contains("join"))
            }
            _ => false,
        })
}

/// The spawned body takes a semaphore permit before working.
fn task_takes_permit(cx: &FileCx, spawn: ExprId) -> bool {
    common::spawned_fn(cx, spawn).is_some_and(|f| fn_takes_permit(cx, f))
        || cx.call(spawn).is_some_and(|c| {
            c.args.iter().any(|a| {
                exprs_under(cx.model, a.value)
                    .iter()
                    .any(|&x| is_permit_call(cx, x))
            })
        })
}

fn fn_takes_permit(cx: &FileCx, f: FuncId) -> bool {
    let mut fns = vec![f];
    let mut i = 0;
    while i < fns.len() {
        for &e in cx.body_exprs(fns[i]) {
            if is_permit_call(cx, e) {
                return true;
            }
            if let ExprKind::Closure(g) = cx.expr(e).kind {
                fns.push(g);
            }
        }
        i += 1;
    }
    false
}

fn is_permit_call(cx: &FileCx, e: ExprId) -> bool {
    cx.call(e).is_some_and(|c| {
        c.name.starts_with("acquire")
            || c.name.starts_with("try_acquire")
            || c.target
                .as_deref()
                .is_some_and(|t| t.contains("Semaphore") || t.contains("RateLimiter"))
    })
}

/// The function bounds its fan-out: a semaphore, `buffer_unordered`,
/// `buffered`, a `JoinSet` length check...
fn capped_fn(cx: &FileCx, f: FuncId) -> bool {
    let top = common::outermost(cx, f);
    let span = cx.func(top).span;
    cx.model.exprs.iter().any(|e| {
        span.contains(e.span)
            && match &e.kind {
                ExprKind::Call(c) => {
                    matches!(
                        c.name.as_str(),
                        "buffer_unordered"
                            | "buffered"
                            | "for_each_concurrent"
                            | "try_for_each_concurrent"
                            | "try_buffer_unordered"
                            | "try_buffered"
                    ) || c.target.as_deref().is_some_and(|t| t.contains("Semaphore"))
                }
                ExprKind::Path { text, .. } => text.contains("Semaphore"),
                ExprKind::Name { id, .. } => id == "Semaphore",
                _ => false,
            }
    })
}

/// The per-item future only awaits the item itself (`|rx| async move {
/// rx.await }`, a named closure doing the same): the items are futures
/// already under way (replies to requests sent earlier, handles of tasks
/// already spawned), so joining them starts nothing.
fn only_awaits_item(cx: &FileCx, f: ExprId) -> bool {
    let f = cx.model.strip(f);
    let closure = common::closure_fn(cx, f)
        .or_else(|| common::declared_value(cx, f).and_then(|v| common::closure_fn(cx, v)));
    let Some(closure) = closure else {
        return false;
    };
    let items: Vec<&str> = cx
        .func(closure)
        .params
        .iter()
        // A pattern parameter's name is its text (`(_, rx)`): its words.
        .flat_map(|p| {
            p.name
                .split(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
        })
        .filter(|n| !n.is_empty() && *n != "_" && *n != "mut")
        .collect();
    let awaited: Vec<ExprId> = cx
        .with_nested(closure)
        .into_iter()
        .flat_map(|g| cx.body_exprs(g).iter().copied())
        .filter_map(|e| match cx.expr(e).kind {
            ExprKind::Await(inner) => Some(inner),
            _ => None,
        })
        .collect();
    !awaited.is_empty()
        && awaited.iter().all(|&a| {
            cx.model
                .name_of(cx.model.strip(a))
                .is_some_and(|n| items.contains(&n))
        })
}

/// The items are objects the struct already holds (`self.consumers`) and
/// each future is a call of the item's own method (`|c| c.get_stats()`):
/// every such object already exists with whatever it holds (a connection,
/// a worker), so asking them all at once adds one request each to
/// resources open anyway, and there are as many as the struct keeps.
fn asks_held_objects(cx: &FileCx, f: ExprId, recv: ExprId) -> bool {
    let held = cx
        .model
        .dotted(chain_base(cx, recv))
        .is_some_and(|b| b.starts_with("self."));
    let Some(closure) = common::closure_fn(cx, cx.model.strip(f)) else {
        return false;
    };
    let [param] = cx.func(closure).params.as_slice() else {
        return false;
    };
    let body = cx.body_exprs(closure);
    // The closure's value: one call whose receiver is the parameter.
    let returns_own_method = body.iter().any(|&e| {
        cx.call(e).is_some_and(|c| {
            c.receiver
                .and_then(|r| cx.model.name_of(cx.model.strip(r)))
                .is_some_and(|n| n == param.name.as_str())
                && matches!(
                    cx.tree.expr_parent(e),
                    walk::Parent::Function(_) | walk::Parent::Stmt(_)
                )
        })
    });
    held && returns_own_method && body.iter().filter(|&&e| cx.call(e).is_some()).count() == 1
}

/// The first receiver of a method chain (`items` in `items.iter().map(..)`).
fn chain_base(cx: &FileCx, mut e: ExprId) -> ExprId {
    for _ in 0..16 {
        match cx.call(e) {
            Some(c) if c.receiver.is_some() => e = c.receiver.expect("checked"),
            _ => break,
        }
    }
    e
}

/// A value taken from the command line: a chain over `std::env::args()`,
/// or clap's `matches.get_many(..)` / `values_of(..)`. Its size is what the
/// operator typed, not input data.
fn from_command_line(cx: &FileCx, e: ExprId) -> bool {
    let mut cur = cx.model.strip(e);
    for _ in 0..16 {
        let Some(c) = cx.call(cur) else { return false };
        if matches!(
            c.target.as_deref(),
            Some("std::env::args" | "std::env::args_os")
        ) || (c.receiver.is_some() && matches!(c.name.as_str(), "get_many" | "values_of"))
        {
            return true;
        }
        match c.receiver {
            Some(r) => cur = cx.model.strip(r),
            None => return false,
        }
    }
    false
}

/// A collection read from the program's configuration (`for (_, c) in
/// v4_config.clone()`, `self.config.listeners`): one server or worker per
/// configured entry, as many as the operator wrote, not one per item of
/// data.
fn from_configuration(text: &str) -> bool {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| matches!(w, "config" | "configs" | "cfg" | "conf" | "settings"))
}

/// A chain whose base is a bounded iterable.
fn bounded_chain(cx: &FileCx, e: ExprId) -> bool {
    let mut cur = e;
    for _ in 0..16 {
        if bounded_iter(cx, cur) {
            return true;
        }
        match cx.call(cur) {
            Some(c) if c.receiver.is_some() => {
                if matches!(
                    c.name.as_str(),
                    "take" | "chunks" | "chunks_exact" | "step_by"
                ) {
                    return true;
                }
                cur = c.receiver.expect("checked");
            }
            _ => break,
        }
    }
    bounded_iter(cx, cur)
}

/// A literal list: `[a, b, c]`, `vec![a, b]`, `&[..]`.
fn literal_list(cx: &FileCx, e: ExprId) -> bool {
    let e = cx.model.strip(e);
    match &cx.expr(e).kind {
        ExprKind::Collection {
            kind: CollKind::List | CollKind::Tuple,
            ..
        } => true,
        ExprKind::Unary { operand, .. } => literal_list(cx, *operand),
        ExprKind::Call(c) => c.is_macro && c.name == "vec" && !c.args.is_empty(),
        _ => false,
    }
}

/// Inputs whose size the code controls: numeric ranges (worker pools),
/// literal arrays and `vec![..]` literals, `.chunks(n)`, `.take(n)`.
fn bounded_iter(cx: &FileCx, e: ExprId) -> bool {
    let e = cx.model.strip(e);
    if from_configuration(cx.source(cx.expr(e).span)) {
        return true;
    }
    match &cx.expr(e).kind {
        ExprKind::Collection {
            kind: CollKind::List | CollKind::Tuple,
            ..
        } => true,
        ExprKind::Other(_) => {
            // Ranges (`0..n`, `1..=workers`) and `[x; n]` arrays.
            let t = cx.source(cx.expr(e).span);
            t.contains("..") || t.trim_start().starts_with('[')
        }
        ExprKind::Name { id, resolved } => {
            // A local (or constant) bound to a literal list:
            // `let styles = [..];`, `const HOSTS: [&str; 3] = [..]`.
            let decl = if resolved.is_none() {
                common::declaration_of(cx, id, e)
            } else {
                cx.model
                    .stmts
                    .iter()
                    .position(|st| {
                        matches!(&st.kind, StmtKind::Assign { targets, op: AssignOp::Declare { .. }, .. }
                        if targets.iter().any(|&t| matches!(&cx.expr(t).kind, ExprKind::Name { resolved: r, .. } if r == resolved)))
                    })
                    .map(|i| StmtId(i as u32))
            };
            if let Some(d) = decl
                && let StmtKind::Assign { value: Some(v), .. } = &cx.stmt(d).kind
                && (literal_list(cx, *v) || from_command_line(cx, *v))
            {
                return true;
            }
            if resolved.is_some() {
                return false;
            }
            // The variable of an enclosing `for chunk in items.chunks(n)`.
            cx.enclosing_stmts(e)
                .into_iter()
                .any(|s| match &cx.stmt(s).kind {
                    StmtKind::For {
                        target: Some(t),
                        iter,
                        ..
                    } => {
                        cx.model.name_of(*t) == Some(id.as_str())
                            && !cx.contains(*iter, e)
                            && bounded_chain(cx, *iter)
                    }
                    _ => false,
                })
        }
        ExprKind::Unary { operand, .. } => bounded_iter(cx, *operand),
        ExprKind::Call(c) => {
            if c.is_macro && c.name == "vec" {
                return true;
            }
            if matches!(
                c.name.as_str(),
                "take" | "chunks" | "chunks_exact" | "step_by"
            ) {
                return true;
            }
            if matches!(
                c.name.as_str(),
                "iter"
                    | "into_iter"
                    | "iter_mut"
                    | "enumerate"
                    | "zip"
                    | "drain"
                    | "cloned"
                    | "copied"
                    | "rev"
            ) && let Some(r) = c.receiver
            {
                return bounded_iter(cx, r);
            }
            false
        }
        _ => false,
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[
        r#"
async fn announce(due: Vec<u64>, tx: tokio::sync::mpsc::Sender<u64>) {
    for id in due {
        let tx = tx.clone();
        tokio::spawn(async move { // expect
            let _ = tx.send(id).await;
        });
    }
}
"#,
        r#"
async fn sync_all(items: Vec<Item>) {
    let mut handles = Vec::new();
    for item in items {
        handles.push(tokio::spawn(async move { push(item).await })); // expect
    }
    for h in handles {
        h.await.unwrap();
    }
}

fn resize_all(paths: Vec<std::path::PathBuf>) {
    let handles: Vec<_> = paths
        .into_iter()
        .map(|p| std::thread::spawn(move || resize(p))) // expect
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}
"#,
        r#"
use futures::future::join_all;
use futures::stream::{FuturesUnordered, StreamExt};

async fn notify(users: &[User]) {
    join_all(users.iter().map(|u| send_mail(u))).await; // expect
    let mut pending = users // expect
        .iter()
        .map(|u| send_mail(u))
        .collect::<FuturesUnordered<_>>();
    while let Some(_r) = pending.next().await {}
}
"#,
        r#"
pub async fn fetch_all(client: &Client, urls: Vec<String>) -> Vec<Page> {
    let fetch = |url: String| async move { client.get(url).await };
    futures::future::join_all(urls.into_iter().map(fetch)).await // expect
}
"#,
        r#"
use futures::future;

async fn send(topic: &str, payload: &[u8]) -> Result<(), String> {
    let _ = (topic, payload);
    Ok(())
}

async fn recv() -> Vec<u8> {
    vec![]
}

async fn recv_batch() -> Vec<Vec<u8>> {
    vec![]
}

#[tokio::main]
async fn main() {
    let output_topics: Vec<String> = std::env::args().skip(1).collect();
    loop {
        // One send per message of a broker-sized batch.
        let batch = recv_batch().await;
        let topic = &output_topics[0];
        future::try_join_all(batch.iter().map(|m| send(topic, m))) // expect
            .await
            .expect("delivery failed");
    }
}
"#,
        r#"
use futures::future::try_join_all;
use std::collections::BTreeMap;

pub struct Multi {
    consumers: BTreeMap<String, Consumer>,
    pending: Vec<String>,
}

impl Multi {
    // Each topic name gets a new connection and subscription.
    pub async fn subscribe_pending(&mut self) -> Result<Vec<Consumer>, Error> {
        try_join_all(self.pending.iter().map(|t| Consumer::connect(t))).await // expect
    }
}
"#,
        r#"
use std::thread;

pub struct Broker;

impl Broker {
    // One thread per client in the request: the data decides how many.
    pub fn start(&self, clients: Vec<Client>) -> Vec<thread::JoinHandle<()>> {
        let mut handles = Vec::new();
        for client in clients {
            handles.push(thread::spawn(move || serve(client))); // expect
        }
        handles
    }
}
"#,
    ],
    pass: &[
        r#"
use futures::future::try_join_all;
use std::collections::BTreeMap;

pub struct Multi {
    consumers: BTreeMap<String, Consumer>,
}

impl Multi {
    // One request to each consumer the struct already holds open.
    pub async fn get_stats(&mut self) -> Result<Vec<Stats>, Error> {
        try_join_all(self.consumers.values_mut().map(|c| c.get_stats())).await
    }
}
"#,
        r#"
use futures::future;

async fn send(topic: &str, payload: &[u8]) -> Result<(), String> {
    let _ = (topic, payload);
    Ok(())
}

async fn recv() -> Vec<u8> {
    vec![]
}

async fn recv_batch() -> Vec<Vec<u8>> {
    vec![]
}

#[tokio::main]
async fn main() {
    let output_topics: Vec<String> = std::env::args().skip(1).collect();
    loop {
        // One send per topic the operator named on the command line.
        let m = recv().await;
        future::try_join_all(output_topics.iter().map(|t| send(t, &m)))
            .await
            .expect("delivery failed");
    }
}
"#,
        r#"
use futures::future;
use tokio::sync::oneshot;

pub async fn gather(
    receivers: Vec<(String, oneshot::Receiver<Result<u64, String>>)>,
) -> Result<u64, String> {
    let wait_one = |(_, rx): (String, oneshot::Receiver<Result<u64, String>>)| async move {
        rx.await.map_err(|_| "dropped".to_string())?
    };
    let all = future::try_join_all(receivers.into_iter().map(wait_one)).await?;
    Ok(all.into_iter().sum())
}

pub async fn reap(handles: Vec<tokio::task::JoinHandle<()>>) {
    future::join_all(handles.into_iter().map(|h| async move { h.await.ok() })).await;
}
"#,
        r#"
use std::sync::Arc;
use tokio::sync::Semaphore;

async fn capped(urls: Vec<String>) {
    let sem = Arc::new(Semaphore::new(16));
    let mut handles = Vec::new();
    for url in urls {
        let permit = sem.clone().acquire_owned().await.unwrap();
        handles.push(tokio::spawn(async move {
            let _p = permit;
            fetch(&url).await
        }));
    }
}

async fn workers(rx: async_channel::Receiver<Job>) {
    let mut handles = Vec::new();
    for _ in 0..8 {
        let rx = rx.clone();
        handles.push(tokio::spawn(async move {
            while let Ok(job) = rx.recv().await {
                job.run().await;
            }
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
}

async fn sequential(items: Vec<Item>) {
    for item in items {
        tokio::spawn(async move { push(item).await }).await.unwrap();
    }
}

async fn set(items: Vec<Item>) {
    let mut set = tokio::task::JoinSet::new();
    for item in items {
        set.spawn(push(item));
    }
    while let Some(r) = set.join_next().await {
        r.unwrap();
    }
}

async fn named_list() {
    let hosts = ["a", "b", "c"];
    let mut hs = Vec::new();
    for h in hosts {
        hs.push(tokio::spawn(load(h)));
    }
    for h in hs {
        h.await.unwrap();
    }
}

async fn announce(due: Vec<u64>, tx: tokio::sync::broadcast::Sender<u64>) {
    for id in due {
        let tx = tx.clone();
        tokio::spawn(async move {
            if let Err(e) = tx.send(id) {
                eprintln!("{e}");
            }
        });
    }
}

async fn fixed() {
    let hs: Vec<_> = ["a", "b", "c"].into_iter().map(|n| tokio::spawn(load(n))).collect();
    for h in hs {
        h.await.unwrap();
    }
}
"#,
        r#"
use futures::stream::{self, StreamExt};

async fn fetch_all(urls: Vec<String>) {
    let results: Vec<_> = stream::iter(urls)
        .map(|url| async move { fetch(&url).await })
        .buffer_unordered(16)
        .collect()
        .await;
}

async fn semaphore_in_task(urls: Vec<String>, sem: std::sync::Arc<tokio::sync::Semaphore>) {
    let tasks = urls.into_iter().map(|u| {
        let permit = sem.clone();
        tokio::spawn(async move { let _p = permit.acquire_owned().await.unwrap(); fetch(&u).await })
    });
}

async fn chunked(items: Vec<Item>) {
    for chunk in items.chunks(50) {
        futures::future::join_all(chunk.iter().map(|i| push_ref(i))).await;
    }
}
"#,
        r#"
use std::thread;

pub struct Broker {
    config: Config,
}

impl Broker {
    // One server thread per listener the operator configured.
    pub fn start(&self) -> Vec<thread::JoinHandle<()>> {
        let mut handles = Vec::new();
        for (_, listener) in self.config.listeners.clone() {
            handles.push(thread::spawn(move || serve(listener)));
        }
        handles
    }
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(SpawnPerItem);

    /// A thread per item is capped with threads' tools, not tokio's.
    #[test]
    fn fixes_fit_threads_and_tasks() {
        let found = crate::testing::fail_findings(&SpawnPerItem, &EXAMPLES);
        let thread = found
            .iter()
            .find(|f| f.message.contains("a thread per item"))
            .expect("a thread finding");
        assert!(
            !thread.fix.contains("tokio") && thread.fix.contains("worker threads"),
            "{}",
            thread.fix
        );
        let task = found
            .iter()
            .find(|f| f.message.contains("a task per item"))
            .expect("a task finding");
        assert!(task.fix.contains("Semaphore"), "{}", task.fix);
    }
}
