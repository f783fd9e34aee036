//! RS004: a blocking lock guard (or `RefCell` borrow) alive across `.await`.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::{Visitor, exprs_under, walk_block};
use unsnarl_model::*;

pub struct GuardAcrossAwait;

pub static META: RuleMeta = RuleMeta {
    id: "RS004",
    name: "guard-across-await",
    category: Category::LockAcrossAwait,
    severity: Severity::High,
    languages: &[Language::Rust],
    summary: "A `std::sync`/`parking_lot` `Mutex`/`RwLock` guard or a `RefCell` borrow is still alive at an `.await`.",
    docs: r#"
In an `async fn` or `async` block, a guard from `lock()`, `read()`,
`write()` of a `std::sync` or `parking_lot` lock (or a `RefCell` borrow)
that is still in scope when the code reaches `.await`: bound with `let`
and not dropped (`drop(guard)` or the end of an inner block) before the
await, a temporary in a statement that also awaits, or a temporary in an
`if let`/`while let`/`match` scrutinee whose body awaits.

## Why

While the task is suspended, the guard stays held. Another task on the same
worker thread that calls `lock()` blocks the thread itself, so the holder
may never be polled again to release it: the runtime deadlocks. Even without
a deadlock, every contender waits for the full await. (Holding a std guard
also makes the future `!Send`, so it cannot be spawned on a multi-threaded
runtime.)

## Example

```rust
use std::sync::Mutex;

async fn refresh(state: &Mutex<State>) {
    let mut guard = state.lock().unwrap();
    let fresh = fetch_remote(&guard.key).await;
    guard.value = fresh;
}
```

## Fix

Copy what you need out under the lock, drop the guard, await, then lock
again to write (checking that the state did not change meanwhile).

```rust
use std::sync::Mutex;

async fn refresh(state: &Mutex<State>) {
    let key = { state.lock().unwrap().key.clone() };
    let fresh = fetch_remote(&key).await;
    let mut guard = state.lock().unwrap();
    if guard.key == key {
        guard.value = fresh;
    }
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for GuardAcrossAwait {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for fid in cx.model.function_ids() {
            if !cx.runs_on_loop(fid) || super::common::test_like(cx, fid) {
                continue;
            }
            let awaits = await_points(cx, &cx.func(fid).body);
            if awaits.is_empty() {
                continue;
            }
            let mut blocks = BlockFinder(Vec::new());
            blocks.0.push(cx.func(fid).body.clone());
            walk_block(cx.model, &cx.func(fid).body, &mut blocks);
            for block in &blocks.0 {
                check_block(cx, block, &awaits, out);
            }
        }
    }
}

/// Every statement block of a function (nested ones included).
struct BlockFinder(Vec<Block>);

impl Visitor for BlockFinder {
    fn enter_block(&mut self, _m: &FileModel, block: &Block) {
        self.0.push(block.clone());
    }
    fn enter_expr(&mut self, m: &FileModel, id: ExprId) -> bool {
        if let ExprKind::Block(b) = &m.expr(id).kind {
            self.0.push(b.clone());
        }
        true
    }
}

/// Spans of the suspension points of a function: `.await` and `select!`.
fn await_points(cx: &FileCx, body: &Block) -> Vec<Span> {
    struct V(Vec<Span>);
    impl Visitor for V {
        fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
            if matches!(m.stmt(id).kind, StmtKind::Select { .. }) {
                self.0.push(m.stmt(id).span);
            }
            true
        }
        fn enter_expr(&mut self, m: &FileModel, id: ExprId) -> bool {
            match &m.expr(id).kind {
                ExprKind::Await(_) => self.0.push(m.expr(id).span),
                // `tokio::join!(..)` / `try_join!` await their futures.
                ExprKind::Call(c) if super::locks::is_join_macro(c) => self.0.push(m.expr(id).span),
                _ => {}
            }
            true
        }
    }
    let mut v = V(Vec::new());
    walk_block(cx.model, body, &mut v);
    v.0
}

/// A call taking a blocking guard: `lock`/`read`/`write`/`borrow*` on a value
/// whose type is a std/parking_lot lock or a `RefCell`.
fn guard_call(cx: &FileCx, e: ExprId) -> Option<&'static str> {
    let c = cx.call(e)?;
    let method = c.name.as_str();
    if !matches!(
        method,
        "lock"
            | "read"
            | "write"
            | "borrow"
            | "borrow_mut"
            | "try_lock"
            | "try_read"
            | "try_write"
            | "upgradable_read"
    ) {
        return None;
    }
    let recv = c.receiver?;
    let Some(ty) = cx.sema.type_of(recv) else {
        // A lock of unknown type: `x.lock().unwrap()` / `x.write().expect(..)`
        // with no arguments is std's `Mutex`/`RwLock` (tokio's `lock()` is
        // awaited, parking_lot's is not unwrapped).
        if !c.args.is_empty() || !unwrapped(cx, e) {
            return None;
        }
        return match method {
            "lock" => Some("mutex guard"),
            "read" => Some("read guard"),
            "write" => Some("write guard"),
            _ => None,
        };
    };
    let kind = cx.kb.find(Effect::Lock, Some(ty), "")?.kind.as_deref()?;
    match (kind, method) {
        ("mutex", "lock" | "try_lock") => Some("mutex guard"),
        ("rwlock", "read" | "try_read" | "upgradable_read") => Some("read guard"),
        ("rwlock", "write" | "try_write") => Some("write guard"),
        ("refcell", "borrow" | "borrow_mut") => Some("RefCell borrow"),
        _ => None,
    }
}

/// The call's value is unwrapped right away: `.unwrap()` / `.expect(..)`.
fn unwrapped(cx: &FileCx, e: ExprId) -> bool {
    let unsnarl_model::walk::Parent::Expr(a) = cx.tree.expr_parent(e) else {
        return false;
    };
    if !matches!(cx.expr(a).kind, ExprKind::Attr { .. }) {
        return false;
    }
    let unsnarl_model::walk::Parent::Expr(p) = cx.tree.expr_parent(a) else {
        return false;
    };
    cx.call(p)
        .is_some_and(|c| c.receiver == Some(e) && matches!(c.name.as_str(), "unwrap" | "expect"))
}

/// The guard call a `let` initializer evaluates to, looking through
/// `.unwrap()`, `.expect(..)` and `?` (so the binding *is* the guard).
fn bound_guard(cx: &FileCx, mut e: ExprId) -> Option<(ExprId, &'static str)> {
    loop {
        e = cx.model.strip(e);
        if let Some(kind) = guard_call(cx, e) {
            return Some((e, kind));
        }
        match &cx.expr(e).kind {
            ExprKind::Try(inner) => e = *inner,
            ExprKind::Call(c)
                if matches!(c.name.as_str(), "unwrap" | "expect" | "unwrap_or_else") =>
            {
                e = c.receiver?;
            }
            _ => return None,
        }
    }
}

fn check_block(cx: &FileCx, block: &Block, awaits: &[Span], out: &mut Vec<Finding>) {
    let Some(&last) = block.last() else { return };
    let block_end = cx.stmt(last).span.end;
    for (i, &s) in block.iter().enumerate() {
        match &cx.stmt(s).kind {
            StmtKind::Assign {
                targets,
                value: Some(v),
                op: AssignOp::Declare { .. },
            } => {
                if let Some((call, kind)) = bound_guard(cx, *v) {
                    // `let g = ..`, `let mut g = ..`, `let Ok(g) = .. else {..}`.
                    let name = targets
                        .first()
                        .and_then(|t| super::common::binding_name(cx.model, *t))
                        .unwrap_or("_");
                    if name == "_" {
                        continue; // `let _ = m.lock()` drops at once
                    }
                    let start = cx.stmt(s).span.end;
                    let end = drop_point(cx, &block[i + 1..], name).unwrap_or(block_end);
                    if let Some(a) = awaits.iter().find(|a| a.start >= start && a.end <= end) {
                        report(cx, call, kind, &format!("`{name}`"), *a, out);
                    }
                } else {
                    temporaries(cx, *v, s, awaits, out);
                }
            }
            StmtKind::Expr(e) | StmtKind::Tail(e) | StmtKind::Return(Some(e)) => {
                temporaries(cx, *e, s, awaits, out)
            }
            StmtKind::If { cond, then, .. } => {
                if let ExprKind::Let { value, .. } = cx.expr(*cond).kind {
                    scrutinee(cx, value, then, awaits, out);
                }
            }
            StmtKind::While { cond, body, .. } => {
                if let ExprKind::Let { value, .. } = cx.expr(*cond).kind {
                    scrutinee(cx, value, body, awaits, out);
                }
            }
            StmtKind::Switch {
                subject: Some(subject),
                cases,
            } => {
                for c in cases {
                    scrutinee(cx, *subject, &c.body, awaits, out);
                }
            }
            _ => {}
        }
    }
}

/// Where a bound guard is dropped by `drop(name)` in the rest of its block.
fn drop_point(cx: &FileCx, rest: &[StmtId], name: &str) -> Option<u32> {
    for &s in rest {
        for e in unsnarl_model::walk::exprs_in_block(cx.model, &vec![s]) {
            if let Some(c) = cx.call(e)
                && c.name == "drop"
                && c.receiver.is_none()
                && c.positional(0).and_then(|a| cx.model.name_of(a)) == Some(name)
            {
                return Some(cx.expr(e).span.start);
            }
        }
    }
    None
}

/// A guard temporary inside a statement that also awaits after it. Only
/// the statement's own temporaries: one in a statement nested in it (an
/// arm or a loop body of `let x = match ..`/`loop {..}`) is dropped at the
/// end of that statement, and its block is checked on its own.
fn temporaries(cx: &FileCx, root: ExprId, s: StmtId, awaits: &[Span], out: &mut Vec<Finding>) {
    let stmt = cx.stmt(s).span;
    for e in exprs_under(cx.model, root) {
        if cx.tree.enclosing_stmt(e) != Some(s) {
            continue;
        }
        if let Some(kind) = guard_call(cx, e) {
            let after = cx.expr(e).span.end;
            if let Some(a) = awaits
                .iter()
                .find(|a| a.start >= after && a.end <= stmt.end)
            {
                report(cx, e, kind, "a temporary", *a, out);
                return;
            }
        }
    }
}

/// A guard temporary in an `if let`/`while let`/`match` scrutinee lives
/// through the body.
fn scrutinee(cx: &FileCx, value: ExprId, body: &Block, awaits: &[Span], out: &mut Vec<Finding>) {
    let (Some(&first), Some(&last)) = (body.first(), body.last()) else {
        return;
    };
    let range = Span::new(cx.stmt(first).span.start, cx.stmt(last).span.end);
    for e in exprs_under(cx.model, value) {
        if let Some(kind) = guard_call(cx, e)
            && let Some(a) = awaits.iter().find(|a| range.contains(**a))
        {
            report(cx, e, kind, "the scrutinee's temporary", *a, out);
            return;
        }
    }
}

fn report(cx: &FileCx, call: ExprId, kind: &str, holder: &str, at: Span, out: &mut Vec<Finding>) {
    let span = cx.expr(call).span;
    // Nested blocks are scanned both on their own and as part of the
    // statement that holds them: report each guard once.
    if out.iter().any(|f| f.rule == META.id && f.span == span) {
        return;
    }
    let mut f = cx.finding(
        &META,
        span,
        format!(
            "this {kind} ({holder}) is still held at an `.await`: while the task is suspended, another task locking it blocks the worker thread, which can deadlock the runtime"
        ),
        "copy what you need out of the guard in an inner block (or `drop(guard)`) before awaiting, then lock again to write; if the lock must span the await, use `tokio::sync::Mutex`",
    );
    f.related.push(Related {
        file: None,
        span: at,
        message: "suspends here with the guard held".into(),
    });
    out.push(f);
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[
        r#"
use std::sync::Mutex;

static STATE: Mutex<u64> = Mutex::new(0);

async fn bump() {
    let mut g = STATE.lock().unwrap(); // expect
    let v = fetch().await;
    *g += v;
}
"#,
        r#"
use std::sync::Mutex;

static STATE: Mutex<u64> = Mutex::new(0);

async fn joined() {
    let g = STATE.lock().unwrap(); // expect
    tokio::join!(fetch(*g), fetch(*g + 1));
}
"#,
        r#"
use std::sync::Mutex;

async fn untyped(state: &AppState) {
    let mut sessions = state.sessions.lock().unwrap(); // expect
    sessions.insert(1, refresh_token().await);
}

async fn with_let_else(m: &Mutex<Vec<u32>>) {
    let Ok(mut g) = m.lock() else { return }; // expect
    g.push(1);
    flush().await;
}
"#,
        r#"
use std::sync::{Arc, RwLock};

struct Cache {
    map: Arc<RwLock<Map>>,
}

impl Cache {
    async fn refresh(&self) {
        let r = self.map.read().unwrap(); // expect
        for k in r.keys() {
            load(k).await;
        }
    }

    async fn one(&self, k: u32) {
        if let Some(v) = self.map.read().unwrap().get(&k) { // expect
            send(v).await;
        }
    }
}
"#,
    ],
    pass: &[
        r#"
use std::sync::Mutex;

static STATE: Mutex<u64> = Mutex::new(0);

async fn joined() {
    let n = { *STATE.lock().unwrap() };
    tokio::join!(fetch(n), fetch(n + 1));
}

async fn bump() {
    let key = { *STATE.lock().unwrap() };
    let v = fetch(key).await;
    {
        let mut g = STATE.lock().unwrap();
        *g += v;
    }
    let g2 = STATE.lock().unwrap();
    let copy = *g2;
    drop(g2);
    tokio::time::sleep(std::time::Duration::from_millis(copy)).await;
}

async fn take(slots: &Mutex<Vec<u64>>, fifo: bool) -> u64 {
    let got = loop {
        let next = match fifo {
            true => slots.lock().unwrap().pop(),
            false => slots.lock().unwrap().first().copied(),
        };
        let checked = recycle(next).await;
        if let Some(v) = checked {
            break v;
        }
    };
    got
}

async fn respond(stats: &Mutex<Vec<u64>>, r: Result<u64, u64>) -> u64 {
    let sent = match r {
        Ok(v) => publish(v).await,
        Err(e) => {
            stats.lock().unwrap().push(e);
            publish(0).await
        }
    };
    sent
}
"#,
        r#"
use tokio::sync::Mutex;

async fn fine(m: &Mutex<u64>) {
    let mut g = m.lock().await;
    *g += 1;
    tick().await;
}

fn sync_code(m: &std::sync::Mutex<u64>) {
    let g = m.lock().unwrap();
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(GuardAcrossAwait);
}
