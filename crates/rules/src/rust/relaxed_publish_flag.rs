//! RS014: a flag published or checked with `Ordering::Relaxed` while it
//! guards other data.

use super::common::{self, AtomicOp};
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::walk::{Child, exprs_in_block, exprs_under, for_each_stmt_child};
use unsnarl_model::*;

pub struct RelaxedPublishFlag;

pub static META: RuleMeta = RuleMeta {
    id: "RS014",
    name: "relaxed-publish-flag",
    category: Category::MemoryOrdering,
    severity: Severity::High,
    languages: &[Language::Rust],
    summary: "A flag stored with `Ordering::Relaxed` right after writing the data it announces, or loaded with `Relaxed` before reading that data.",
    docs: r#"
The publish/consume shape with `Ordering::Relaxed` on the flag: a thread
writes some data (another atomic, a `static mut`, a raw pointer) and then
sets a flag with `flag.store(true, Ordering::Relaxed)`; or a thread checks
`if flag.load(Ordering::Relaxed)` (or spins `while !flag.load(Relaxed)`)
and then reads data another thread wrote before setting that flag.

## Why

`Relaxed` makes the flag itself atomic but orders nothing around it: the
CPU and the compiler may make the flag visible before the data, or let the
reader read the data before the flag. On x86 this mostly works, on ARM it
does not: the reader sees `ready == true` and stale or half-written data.
A publication needs a `Release` store paired with an `Acquire` load.

## Example

```rust
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

static DATA: AtomicU64 = AtomicU64::new(0);
static READY: AtomicBool = AtomicBool::new(false);

fn publish(v: u64) {
    DATA.store(v, Ordering::Relaxed);
    READY.store(true, Ordering::Relaxed);
}

fn consume() -> Option<u64> {
    if READY.load(Ordering::Relaxed) {
        return Some(DATA.load(Ordering::Relaxed));
    }
    None
}
```

## Fix

Store the flag with `Release` and load it with `Acquire` (the data itself
may stay `Relaxed`); or publish through a channel, a `Mutex` or `OnceLock`.

```rust
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

static DATA: AtomicU64 = AtomicU64::new(0);
static READY: AtomicBool = AtomicBool::new(false);

fn publish(v: u64) {
    DATA.store(v, Ordering::Relaxed);
    READY.store(true, Ordering::Release);
}

fn consume() -> Option<u64> {
    if READY.load(Ordering::Acquire) {
        return Some(DATA.load(Ordering::Relaxed));
    }
    None
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for RelaxedPublishFlag {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        let muts = common::static_muts(cx);
        // Flags stored somewhere in the file (any ordering), by key tail.
        let mut stored: HashSet<String> = HashSet::new();
        for i in 0..cx.model.exprs.len() {
            if let Some(op) = common::atomic_op(cx, ExprId(i as u32))
                && op.method == "store"
            {
                stored.insert(common::key_tail(&op.key).to_string());
            }
        }
        let mut seen = HashSet::new();
        for f in cx.model.function_ids() {
            if common::test_like(cx, f) {
                continue;
            }
            let mut blocks = vec![cx.func(f).body.clone()];
            for s in cx.body_stmts(f).iter().copied() {
                for_each_stmt_child(cx.model, s, &mut |ch| {
                    if let Child::Block(b) = ch {
                        blocks.push(b.clone());
                    }
                });
            }
            for b in &blocks {
                publish_side(cx, b, &muts, &mut seen, out);
                consume_side(cx, b, &muts, &stored, &mut seen, out);
            }
        }
    }
}

/// A relaxed store of a flag after writes of other shared data in the same
/// block.
fn publish_side(
    cx: &FileCx,
    block: &Block,
    muts: &HashSet<String>,
    seen: &mut HashSet<ExprId>,
    out: &mut Vec<Finding>,
) {
    let mut written: Vec<String> = Vec::new();
    for &s in block {
        let exprs = exprs_in_block(cx.model, &vec![s]);
        for &e in &exprs {
            if let Some(op) = common::atomic_op(cx, e)
                && op.method == "store"
                && op.ordering == Some("Relaxed")
                && is_flag(cx, &op)
                && let Some(data) = written.iter().find(|w| **w != op.key)
                && seen.insert(e)
            {
                out.push(cx.finding(
                    &META,
                    cx.expr(e).span,
                    format!(
                        "`{}` is set with `Ordering::Relaxed` right after writing `{data}`: a reader that sees the flag may still see the old `{data}`, because `Relaxed` orders nothing around the flag (it breaks on ARM and under compiler reordering)",
                        op.key
                    ),
                    format!(
                        "store the flag with `Ordering::Release` and load it with `Ordering::Acquire` (`{}.store(.., Ordering::Release)`), or publish through a channel, a `Mutex` or `OnceLock`",
                        op.key
                    ),
                ));
            }
        }
        for &e in &exprs {
            if let Some(w) = write_of(cx, e, muts) {
                written.push(w);
            }
        }
    }
}

/// A relaxed load of a flag guarding reads of other shared data: the body
/// of `if flag.load(Relaxed)`, or what follows `while !flag.load(Relaxed)`.
fn consume_side(
    cx: &FileCx,
    block: &Block,
    muts: &HashSet<String>,
    stored: &HashSet<String>,
    seen: &mut HashSet<ExprId>,
    out: &mut Vec<Finding>,
) {
    for (i, &s) in block.iter().enumerate() {
        let (cond, guarded): (ExprId, Vec<ExprId>) = match &cx.stmt(s).kind {
            StmtKind::If { cond, then, .. } => (*cond, exprs_in_block(cx.model, then)),
            StmtKind::While { cond, body, .. } if is_spin(cx, body) => {
                (*cond, exprs_in_block(cx.model, &block[i + 1..].to_vec()))
            }
            _ => continue,
        };
        for e in exprs_under(cx.model, cond) {
            let Some(op) = common::atomic_op(cx, e) else {
                continue;
            };
            if op.method != "load"
                || op.ordering != Some("Relaxed")
                || !is_flag(cx, &op)
                || !stored.contains(common::key_tail(&op.key))
            {
                continue;
            }
            let Some(data) = guarded
                .iter()
                .find_map(|&g| read_of(cx, g, muts).filter(|k| *k != op.key))
            else {
                continue;
            };
            if !seen.insert(e) {
                continue;
            }
            out.push(cx.finding(
                &META,
                cx.expr(e).span,
                format!(
                    "`{}` is checked with `Ordering::Relaxed` and then `{data}` is read as if the flag published it: without an `Acquire` load the read may see data older than the flag",
                    op.key
                ),
                format!(
                    "load the flag with `Ordering::Acquire` (`{}.load(Ordering::Acquire)`) paired with a `Release` store, or use a channel, a `Mutex` or `OnceLock`",
                    op.key
                ),
            ));
        }
    }
}

/// A boolean flag: typed `AtomicBool`, or stored a `true`/`false` literal.
fn is_flag(cx: &FileCx, op: &AtomicOp) -> bool {
    if cx
        .sema
        .type_of(op.recv)
        .is_some_and(|t| t.ends_with("AtomicBool"))
    {
        return true;
    }
    let c = cx.call(op.call).expect("a call");
    if op.method == "store" {
        return c
            .positional(0)
            .is_some_and(|v| matches!(cx.model.literal(v), Some(Lit::Bool(_))));
    }
    let t = common::key_tail(&op.key).to_ascii_lowercase();
    [
        "ready",
        "done",
        "init",
        "published",
        "available",
        "flag",
        "set",
    ]
    .iter()
    .any(|w| t.contains(w))
}

/// A spin-wait body: empty, or only hints/yields/sleeps.
fn is_spin(cx: &FileCx, body: &Block) -> bool {
    body.iter().all(|&s| match &cx.stmt(s).kind {
        StmtKind::Expr(e) => cx.call(common::unwrap_value(cx, *e)).is_some_and(|c| {
            matches!(
                c.name.as_str(),
                "spin_loop" | "yield_now" | "spin_loop_hint" | "sleep" | "park" | "park_timeout"
            )
        }),
        StmtKind::Pass | StmtKind::Continue => true,
        _ => false,
    })
}

/// The shared location an expression writes: another atomic's store/RMW, a
/// `static mut`, a write through a raw pointer.
fn write_of(cx: &FileCx, e: ExprId, muts: &HashSet<String>) -> Option<String> {
    if let Some(op) = common::atomic_op(cx, e)
        && op.method != "load"
    {
        return Some(op.key);
    }
    if let Some(s) = stmt_assign_target(cx, e)
        && let Some(r) = common::static_mut_root(cx, s, muts)
    {
        return Some(r.rsplit("::").next().unwrap_or(&r).to_string());
    }
    let c = cx.call(e)?;
    if matches!(
        c.target.as_deref(),
        Some("std::ptr::write" | "core::ptr::write" | "std::ptr::write_volatile")
    ) {
        return Some(common::text(cx, c.positional(0)?));
    }
    None
}

/// When `e` is the target of an assignment statement, the target.
fn stmt_assign_target(cx: &FileCx, e: ExprId) -> Option<ExprId> {
    let s = cx.tree.enclosing_stmt(e)?;
    match &cx.stmt(s).kind {
        StmtKind::Assign { targets, .. } if targets.first() == Some(&e) => Some(e),
        _ => None,
    }
}

/// The shared location an expression reads: another atomic's load, a
/// `static mut`.
fn read_of(cx: &FileCx, e: ExprId, muts: &HashSet<String>) -> Option<String> {
    if let Some(op) = common::atomic_op(cx, e)
        && op.method == "load"
    {
        return Some(op.key);
    }
    if let ExprKind::Name {
        resolved: Some(r), ..
    } = &cx.expr(e).kind
        && muts.contains(r.as_str())
    {
        return Some(r.rsplit("::").next().unwrap_or(r).to_string());
    }
    None
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[
        r#"
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

static LEN: AtomicUsize = AtomicUsize::new(0);
static READY: AtomicBool = AtomicBool::new(false);

fn producer(n: usize) {
    LEN.store(n, Ordering::Relaxed);
    READY.store(true, Ordering::Relaxed); // expect
}

fn consumer() -> usize {
    while !READY.load(Ordering::Relaxed) { // expect
        std::hint::spin_loop();
    }
    LEN.load(Ordering::Relaxed)
}
"#,
        r#"
use std::sync::atomic::{AtomicBool, Ordering};

static mut CONFIG: Option<Config> = None;
static LOADED: AtomicBool = AtomicBool::new(false);

fn load(c: Config) {
    unsafe {
        CONFIG = Some(c);
    }
    LOADED.store(true, Ordering::Relaxed); // expect
}
"#,
    ],
    pass: &[r#"
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

static COUNT: AtomicU64 = AtomicU64::new(0);
static DATA: AtomicU64 = AtomicU64::new(0);
static READY: AtomicBool = AtomicBool::new(false);
static STOP: AtomicBool = AtomicBool::new(false);

fn publish(payload: u64) {
    COUNT.fetch_add(1, Ordering::Relaxed);
    DATA.store(payload, Ordering::Relaxed);
    READY.store(true, Ordering::Release);
}

fn read() {
    if READY.load(Ordering::Acquire) {
        use_it(DATA.load(Ordering::Relaxed));
    }
}

fn worker() {
    while !STOP.load(Ordering::Relaxed) {
        COUNT.fetch_add(1, Ordering::Relaxed);
    }
}

fn stop() {
    STOP.store(true, Ordering::Relaxed);
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(RelaxedPublishFlag);
}
