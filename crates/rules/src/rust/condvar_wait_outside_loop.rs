//! RS018: `Condvar::wait` not re-checked in a loop.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct CondvarWaitOutsideLoop;

pub static META: RuleMeta = RuleMeta {
    id: "RS018",
    name: "condvar-wait-outside-loop",
    category: Category::CondvarMisuse,
    severity: Severity::High,
    languages: &[Language::Rust],
    summary: "`Condvar::wait`/`wait_timeout` called outside a `while`/`loop` that re-checks the condition (and not `wait_while`).",
    docs: r#"
A `std::sync::Condvar` (or `parking_lot::Condvar`) `wait`, `wait_timeout`,
`wait_for` or `wait_until` that is not inside a `while` or `loop` of its
function: guarded by an `if`, or not guarded at all. `wait_while` and
`wait_timeout_while` carry their predicate and are fine.

## Why

A condition variable can wake up without a notification (spurious wakeup),
and between the notification and this thread re-taking the mutex another
thread may consume the state it was waiting for. Code that waits once and
then proceeds acts on a condition that may not hold: it pops from an empty
queue, reads a result that is not there, or misses the notification that
came before it started waiting and sleeps forever.

## Example

```rust
use std::sync::{Condvar, Mutex};

fn take(queue: &Mutex<Vec<u32>>, ready: &Condvar) -> u32 {
    let mut q = queue.lock().unwrap();
    if q.is_empty() {
        q = ready.wait(q).unwrap();
    }
    q.pop().unwrap()
}
```

## Fix

Re-check the condition in a loop, or let `wait_while` do it.

```rust
use std::sync::{Condvar, Mutex};

fn take(queue: &Mutex<Vec<u32>>, ready: &Condvar) -> u32 {
    let mut q = ready
        .wait_while(queue.lock().unwrap(), |q| q.is_empty())
        .unwrap();
    q.pop().unwrap()
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for CondvarWaitOutsideLoop {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for i in 0..cx.model.exprs.len() {
            let e = ExprId(i as u32);
            let Some(m) = common::condvar_wait(cx, e) else {
                continue;
            };
            if m.contains("while") || common::test_like(cx, cx.func_of(e)) {
                continue;
            }
            let Some(s) = cx.tree.enclosing_stmt(e) else {
                continue;
            };
            let in_loop = std::iter::once(s)
                .chain(cx.tree.stmt_ancestors(s))
                .any(|a| {
                    matches!(
                        cx.stmt(a).kind,
                        StmtKind::While { .. } | StmtKind::Loop { .. }
                    )
                });
            if in_loop || wrapper(cx, e) {
                continue;
            }
            let guarded = std::iter::once(s)
                .chain(cx.tree.stmt_ancestors(s))
                .any(|a| matches!(cx.stmt(a).kind, StmtKind::If { .. }));
            // A timed wait that nothing guards is a bounded sleep that a
            // notification may cut short; only an `if`-guarded one is the
            // bug.
            if m != "wait" && !guarded {
                continue;
            }
            let how = if guarded {
                "is guarded by an `if`, not a loop"
            } else {
                "is not in a loop that re-checks the condition"
            };
            out.push(cx.finding(
                &META,
                cx.expr(e).span,
                format!(
                    "this `{m}` {how}: after a spurious wakeup, or when another thread took the state between the notify and this wakeup, the code below runs with the condition false"
                ),
                "wait in a loop that re-checks the predicate (`while !ready { g = cv.wait(g).unwrap(); }`), or use `cv.wait_while(guard, |s| !ready(s))`",
            ));
        }
    }
}

/// A wrapper around the condvar API (`fn wait(&self, guard)` forwarding to
/// the inner condvar, a parker): its caller owns the predicate loop.
fn wrapper(cx: &FileCx, e: ExprId) -> bool {
    let f = common::outermost(cx, cx.func_of(e));
    let func = cx.func(f);
    let n = func.name.to_ascii_lowercase();
    if n.contains("wait") || n.contains("park") || n.contains("sleep") {
        return true;
    }
    // The guard comes in as a parameter.
    let Some(c) = cx.call(e) else { return false };
    let Some(g) = c.positional(0) else {
        return false;
    };
    let g = match &cx.expr(cx.model.strip(g)).kind {
        ExprKind::Unary { operand, .. } => *operand,
        _ => g,
    };
    let root = cx.model.dotted(g).unwrap_or_default();
    let root = root.split('.').next().unwrap_or("");
    func.params.iter().any(|p| p.name == root)
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[r#"
use std::sync::{Arc, Condvar, Mutex};
use std::thread;

fn main() {
    let pair = Arc::new((Mutex::new(false), Condvar::new()));
    let pair2 = Arc::clone(&pair);
    thread::spawn(move || {
        let (lock, cvar) = &*pair2;
        *lock.lock().unwrap() = true;
        cvar.notify_one();
    });
    let (lock, cvar) = &*pair;
    let mut started = lock.lock().unwrap();
    if !*started {
        started = cvar.wait(started).unwrap(); // expect
    }
}

struct Slot {
    value: Mutex<Option<u32>>,
    filled: Condvar,
}

impl Slot {
    fn get(&self) -> u32 {
        let g = self.value.lock().unwrap();
        let g = self.filled.wait(g).unwrap(); // expect
        g.unwrap()
    }
}
"#],
    pass: &[r#"
use std::sync::{Condvar, Mutex};
use std::time::Duration;

struct Slot {
    value: Mutex<Option<u32>>,
    filled: Condvar,
}

impl Slot {
    fn get(&self) -> u32 {
        let mut g = self.value.lock().unwrap();
        while g.is_none() {
            g = self.filled.wait(g).unwrap();
        }
        g.unwrap()
    }

    fn get2(&self) -> u32 {
        let g = self.filled.wait_while(self.value.lock().unwrap(), |v| v.is_none()).unwrap();
        g.unwrap()
    }

    fn get3(&self) -> Option<u32> {
        let mut g = self.value.lock().unwrap();
        loop {
            if let Some(v) = *g {
                return Some(v);
            }
            let (ng, t) = self.filled.wait_timeout(g, Duration::from_secs(1)).unwrap();
            if t.timed_out() {
                return None;
            }
            g = ng;
        }
    }
}

fn child(c: &mut std::process::Child) {
    let status = c.wait();
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(CondvarWaitOutsideLoop);
}
