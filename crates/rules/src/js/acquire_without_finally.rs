//! JS016: an async mutex or semaphore acquired without a `release()` in a
//! `finally`.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct AcquireWithoutFinally;

pub static META: RuleMeta = RuleMeta {
    id: "JS016",
    name: "release-not-in-finally",
    category: Category::SemaphoreMisuse,
    severity: Severity::Medium,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "`await mutex.acquire()` / `await semaphore.acquire()` whose release is not in a `finally` (or never happens): an exception between them keeps the lock forever.",
    docs: r#"
An async mutex or semaphore taken with `await x.acquire()` (`async-mutex`,
`await-semaphore` and similar), where the function either never calls the
release, or calls it on the normal path only while something between the
acquire and the release can throw or reject. A guard bound with `using` or
`await using` (or TypeScript's compiled form of it) is disposed on every
exit and is not reported.

## Why

If an awaited call or any code between `acquire()` and `release()` throws,
the release is skipped and the permit is never given back. For a mutex every
later caller waits forever; for a semaphore the capacity shrinks with every
failure until the service deadlocks. The failure that caused it is long gone
by the time everything hangs.

## Example

```javascript
import { Semaphore } from "async-mutex";

const uploads = new Semaphore(4);

export async function upload(file) {
  const [, release] = await uploads.acquire();
  await storage.put(file.name, file.data);
  release();
}
```

## Fix

Release in `finally` (or use `runExclusive`, which does it for you).

```javascript
import { Semaphore } from "async-mutex";

const uploads = new Semaphore(4);

export async function upload(file) {
  const [, release] = await uploads.acquire();
  try {
    await storage.put(file.name, file.data);
  } finally {
    release();
  }
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for AcquireWithoutFinally {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for &e in cx.awaits() {
            let ex = cx.expr(e);
            let ExprKind::Await(inner) = ex.kind else {
                continue;
            };
            let Some(c) = cx.call(cx.model.strip(inner)) else {
                continue;
            };
            if c.name != "acquire" || !c.args.is_empty() {
                continue;
            }
            let Some(recv) = c.receiver else { continue };
            let Some(lock) = lock_name(cx, recv) else {
                continue;
            };
            if disposed_on_exit(cx, e) {
                continue;
            }
            let f = cx.func_of(e);
            let handle = release_handle(cx, e);
            if handle_escapes(cx, f, handle.as_deref()) {
                continue;
            }
            let releases: Vec<ExprId> = cx
                .with_nested(f)
                .into_iter()
                .flat_map(|g| common::calls_of(cx, g))
                .filter(|&x| is_release(cx, x, &lock, handle.as_deref()))
                .collect();
            let msg = if releases.is_empty() {
                format!(
                    "`{lock}` is acquired here but never released in this function: the permit is lost, and once all permits are gone every caller waits forever"
                )
            } else if releases.iter().any(|&r| in_finally(cx, r)) {
                continue;
            } else if can_throw_between(cx, f, ex.span.end, &releases) {
                format!(
                    "`{lock}` is released only on the normal path: if anything between this `acquire()` and the `release()` throws or rejects, the permit is never given back and later callers wait forever"
                )
            } else {
                continue;
            };
            out.push(cx.finding(
                &META,
                ex.span,
                msg,
                "put the work in `try { ... } finally { release(); }`, or use `runExclusive(async () => ...)`",
            ));
        }
    }
}

/// `using guard = await m.acquire()` (or `await using`): the guard is
/// disposed on every exit of its block. Also what TypeScript compiles that
/// to, `__addDisposableResource(env, await m.acquire(), ..)`, whose `finally`
/// disposes `env`.
fn disposed_on_exit(cx: &FileCx, acquire: ExprId) -> bool {
    match cx.tree.expr_parent(acquire) {
        Parent::Stmt(s) => matches!(&cx.stmt(s).kind, StmtKind::With { items, .. }
            if items.iter().any(|it| it.ctx == acquire)),
        Parent::Expr(p) => cx
            .call(p)
            .is_some_and(|c| c.name.starts_with("__addDisposableResource") && c.receiver.is_none()),
        _ => false,
    }
}

fn lock_name(cx: &FileCx, recv: ExprId) -> Option<String> {
    let name = cx.model.dotted(recv)?;
    let typed = cx
        .sema
        .type_of(recv)
        .and_then(|t| cx.kb.find(Effect::Lock, Some(t), ""))
        .is_some();
    let lower = name
        .rsplit('.')
        .next()
        .unwrap_or(&name)
        .to_ascii_lowercase();
    let named = lower.ends_with("mutex")
        || lower.ends_with("lock")
        || lower.ends_with("semaphore")
        || lower.ends_with("sem")
        || lower.ends_with("limiter")
        || lower == "uploads";
    (typed || named).then_some(name)
}

/// The name the release function is bound to: `const release = await
/// m.acquire()`, `const [, release] = await s.acquire()`.
fn release_handle(cx: &FileCx, await_e: ExprId) -> Option<String> {
    let Parent::Stmt(s) = cx.tree.expr_parent(await_e) else {
        return None;
    };
    let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind else {
        return None;
    };
    let t = *targets.first()?;
    match &cx.expr(t).kind {
        ExprKind::Name { id, .. } => Some(id.to_string()),
        ExprKind::Collection { elems, .. } => elems
            .last()
            .and_then(|&x| cx.model.name_of(x))
            .map(str::to_string),
        _ => None,
    }
}

/// The release function is handed on (returned, stored, passed): someone
/// else releases.
fn handle_escapes(cx: &FileCx, f: FuncId, handle: Option<&str>) -> bool {
    let Some(h) = handle else { return false };
    cx.with_nested(f).into_iter().any(|g| {
        common::exprs_of(cx, g).any(|x| {
            cx.model.name_of(x) == Some(h)
                && !matches!(cx.tree.expr_parent(x), Parent::Expr(p) if cx.call(p).is_some_and(|c| c.func == x))
                && !matches!(cx.tree.expr_parent(x), Parent::Stmt(s) if matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, .. } if targets.contains(&x)))
                && !is_in_binding_pattern(cx, x)
        })
    })
}

fn is_in_binding_pattern(cx: &FileCx, x: ExprId) -> bool {
    matches!(cx.tree.expr_parent(x), Parent::Expr(p) if matches!(cx.expr(p).kind, ExprKind::Collection { .. })
        && matches!(cx.tree.expr_parent(p), Parent::Stmt(s) if matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, .. } if targets.contains(&p))))
}

fn is_release(cx: &FileCx, e: ExprId, lock: &str, handle: Option<&str>) -> bool {
    let c = cx.call(e).unwrap();
    match c.receiver {
        None => handle.is_some_and(|h| c.name == h),
        Some(r) => {
            matches!(c.name.as_str(), "release" | "unlock")
                && cx.model.dotted(r).as_deref() == Some(lock)
        }
    }
}

fn in_finally(cx: &FileCx, e: ExprId) -> bool {
    let Some(s) = common::stmt_of(cx, e) else {
        return false;
    };
    cx.tree.stmt_ancestors(s).any(|a| {
        matches!(&cx.stmt(a).kind, StmtKind::Try { finally: Some(fin), .. } if common::block_contains(cx, fin, s))
    }) || cx.tree.expr_ancestors(e).any(|a| cx.call(a).is_some_and(|c| c.name == "finally"))
        || matches!(cx.tree.func_site(cx.func_of(e)), Parent::Expr(site)
            if cx.tree.expr_parent(site) != Parent::Detached
                && matches!(cx.tree.expr_parent(site), Parent::Expr(p) if cx.call(p).is_some_and(|c| c.name == "finally")))
}

/// Some await or call between the acquire and the first release.
fn can_throw_between(cx: &FileCx, f: FuncId, after: u32, releases: &[ExprId]) -> bool {
    let first = releases
        .iter()
        .map(|&r| cx.expr(r).span.start)
        .min()
        .unwrap_or(u32::MAX);
    common::exprs_of(cx, f).any(|x| {
        let sp = cx.expr(x).span;
        sp.start >= after
            && sp.end <= first
            && (matches!(cx.expr(x).kind, ExprKind::Await(_)) || cx.call(x).is_some())
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[r#"
import { Mutex, Semaphore } from "async-mutex";
const mutex = new Mutex();
const sem = new Semaphore(5);

async function update(key, value) {
  const release = await mutex.acquire(); // expect
  state[key] = transform(value);
  release();
}

async function work(job) {
  const [, release] = await sem.acquire(); // expect
  await job.run();
}

// Not a `using`: the release is skipped if transform throws.
export async function compute(key, value) {
  await mutex.acquire(); // expect
  state[key] = await transform(value);
  mutex.release();
}
"#],
    pass: &[
        r#"
import { Mutex, Semaphore } from "async-mutex";
const mutex = new Mutex();
const sem = new Semaphore(5);

async function update(key, value) {
  const release = await mutex.acquire();
  try {
    state[key] = transform(value);
  } finally {
    release();
  }
}

async function work(job) {
  const [, release] = await sem.acquire();
  return job.run().finally(release);
}

async function lease() {
  const release = await mutex.acquire();
  return release;
}

async function quick(key) {
  const release = await mutex.acquire();
  counter += 1;
  release();
}
"#,
        r#"
import { Mutex } from "./mutex.js";
const mutex = new Mutex();

// The guard is disposed on every exit of the block.
export async function update(key, value) {
  using _guard = await mutex.acquire();
  state[key] = await transform(value);
}

// What TypeScript emits for the same `using`.
export async function updateCompiled(key, value) {
  const env_1 = { stack: [], error: void 0, hasError: false };
  try {
    const _guard = __addDisposableResource(env_1, await mutex.acquire(), false);
    state[key] = await transform(value);
  } catch (e_1) {
    env_1.error = e_1;
    env_1.hasError = true;
  } finally {
    __disposeResources(env_1);
  }
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(AcquireWithoutFinally);
}
