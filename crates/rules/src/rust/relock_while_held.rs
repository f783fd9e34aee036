//! RS012: a lock taken again while its own guard is alive (self-deadlock,
//! recursive read lock).

use super::common::line_of;
use super::locks::{Mode, Nesting, Root, describe, fn_label, nestings};
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::*;

pub struct RelockWhileHeld;

pub static META: RuleMeta = RuleMeta {
    id: "RS012",
    name: "relock-while-held",
    category: Category::LockOrder,
    severity: Severity::Critical,
    languages: &[Language::Rust],
    summary: "A `Mutex`/`RwLock` locked again (directly or in a called method) while a guard of the same lock is still alive; includes a `read()` while a read guard is held.",
    docs: r#"
While a guard of a lock is alive (bound with `let` and not yet dropped, or a
temporary in the current statement or scrutinee), the same lock is taken
again: in the same function, in a closure run in place (`iter().map(|k|
self.get(k))`), or in a method of `self` (or a function of the same file)
called meanwhile. Same lock means the same `static`, the same field of
`self` reached through `self.method()` calls, or the same local lock.
`parking_lot::ReentrantMutex` is exempt, and so is a temporary guard
handed by value to a function of the file that drops it before locking
again (`self.take(self.idle.lock().unwrap())` with `drop(idle)` in
`take`): from the call on, the callee owns it.

## Why

`std` and `parking_lot` mutexes are not reentrant: the second `lock()`
waits for a guard its own thread holds, forever (std may also panic). A
nested `read()` looks harmless, but as soon as a writer queues between the
two reads, the second read waits behind the writer, which waits for the
first read: a deadlock that only happens under write load.

## Example

```rust
use parking_lot::RwLock;
use std::collections::HashMap;

struct Prices {
    map: RwLock<HashMap<String, u64>>,
}

impl Prices {
    fn get(&self, k: &str) -> u64 {
        self.map.read().get(k).copied().unwrap_or(0)
    }

    fn total(&self) -> u64 {
        let g = self.map.read();
        g.keys().map(|k| self.get(k)).sum()
    }
}
```

## Fix

Split the method into a public one that locks and a private helper that
works on the data the caller already holds.

```rust
use parking_lot::RwLock;
use std::collections::HashMap;

struct Prices {
    map: RwLock<HashMap<String, u64>>,
}

impl Prices {
    fn get(&self, k: &str) -> u64 {
        Self::get_in(&self.map.read(), k)
    }

    fn get_in(map: &HashMap<String, u64>, k: &str) -> u64 {
        map.get(k).copied().unwrap_or(0)
    }

    fn total(&self) -> u64 {
        let g = self.map.read();
        g.keys().map(|k| Self::get_in(&g, k)).sum()
    }
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for RelockWhileHeld {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if cx.model.is_generated {
            return;
        }
        let mut seen: HashSet<Span> = HashSet::new();
        for n in nestings(cx) {
            if !is_relock(&n) || !seen.insert(n.at) {
                continue;
            }
            out.push(finding(cx, &n));
        }
    }
}

fn is_relock(n: &Nesting) -> bool {
    if n.outer.id.is_none()
        || n.outer.id != n.inner.id
        || n.outer.root != n.inner.root
        || n.outer.reentrant
        || n.inner.reentrant
    {
        return false;
    }
    match n.outer.root {
        Some(Root::Static) => true,
        Some(Root::SelfField) => n.same_instance,
        Some(Root::Local) => n.via.is_empty(),
        _ => false,
    }
}

fn finding(cx: &FileCx, n: &Nesting) -> Finding {
    let held = format!(
        "{} holds a guard of `{}` from line {}",
        fn_label(cx, n.func),
        n.outer.text,
        line_of(cx, n.outer.span)
    );
    let again = match n.via.first() {
        Some((_, callee)) => format!("`{}` {} again", short(callee), describe(&n.inner)),
        None => format!("it {} again here", describe(&n.inner)),
    };
    let (why, fix) = if n.outer.mode == Mode::Read && n.inner.mode == Mode::Read {
        (
            "a recursive read: once a writer queues between the two reads, the second read waits behind the writer, which waits for the first read, so the thread deadlocks (std's `RwLock` may also panic)",
            "work on the data of the guard you already hold (pass `&*guard` to a helper that does not lock), or drop the first guard before calling; `parking_lot`'s `read_recursive` is the explicit escape hatch",
        )
    } else {
        (
            "the lock is not reentrant, so the thread waits for a guard it holds itself and never wakes (std may panic instead)",
            "split the method into a public one that locks and a private `*_locked` helper that takes the guarded data, or drop the guard before the call",
        )
    };
    let mut f = cx.finding(&META, n.at, format!("{held} and {again}: {why}"), fix);
    f.related.push(Related {
        file: None,
        span: n.outer.span,
        message: format!("first {}", describe(&n.outer)),
    });
    if !n.via.is_empty() {
        f.related.push(Related {
            file: None,
            span: n.inner.span,
            message: format!("{} again", describe(&n.inner)),
        });
    }
    f
}

fn short(q: &str) -> String {
    let parts: Vec<&str> = q.rsplit("::").take(2).collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("::")
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Rust,
    fail: &[
        r#"
use std::sync::Mutex;

struct Cache {
    items: Mutex<Vec<u32>>,
}

impl Cache {
    fn len(&self) -> usize {
        self.items.lock().unwrap().len()
    }

    fn push(&self, v: u32) {
        let mut g = self.items.lock().unwrap();
        if self.len() > 10 { // expect
            g.clear();
        }
        g.push(v);
    }
}
"#,
        r#"
use std::sync::RwLock;

static CONFIG: RwLock<Vec<String>> = RwLock::new(Vec::new());

fn names() -> Vec<String> {
    let cfg = CONFIG.read().unwrap();
    let again = CONFIG.read().unwrap(); // expect
    cfg.iter().chain(again.iter()).cloned().collect()
}

fn update() {
    let g = CONFIG.read().unwrap();
    if g.is_empty() {
        CONFIG.write().unwrap().push("x".into()); // expect
    }
}
"#,
        r#"
use parking_lot::RwLock;
use std::collections::HashMap;

struct Store {
    map: RwLock<HashMap<u64, u64>>,
}

impl Store {
    fn get(&self, k: &u64) -> u64 {
        *self.map.read().get(k).unwrap_or(&0)
    }

    fn total(&self) -> u64 {
        let g = self.map.read();
        g.keys().map(|k| self.get(k)).sum() // expect
    }
}
"#,
        r#"
use std::sync::{Mutex, MutexGuard};

struct Pool {
    idle: Mutex<Vec<u32>>,
}

impl Pool {
    pub fn try_get(&self) -> Option<u32> {
        self.take(self.idle.lock().unwrap()) // expect
    }

    fn take(&self, mut idle: MutexGuard<'_, Vec<u32>>) -> Option<u32> {
        let conn = idle.pop()?;
        let mut again = self.idle.lock().unwrap();
        again.push(conn + 1);
        Some(conn)
    }
}
"#,
    ],
    pass: &[
        r#"
use std::sync::{Mutex, MutexGuard};

struct Pool {
    idle: Mutex<Vec<u32>>,
}

impl Pool {
    pub fn try_get(&self) -> Option<u32> {
        self.take(self.idle.lock().unwrap())
    }

    fn take(&self, mut idle: MutexGuard<'_, Vec<u32>>) -> Option<u32> {
        let conn = idle.pop()?;
        // The guard came in by value: it is gone before the relock.
        drop(idle);
        let mut again = self.idle.lock().unwrap();
        again.push(conn + 1);
        Some(conn)
    }
}
"#,
        r#"
use std::sync::Mutex;

struct Cache {
    items: Mutex<Vec<u32>>,
}

impl Cache {
    fn len(&self) -> usize {
        self.items.lock().unwrap().len()
    }

    fn push(&self, v: u32) {
        if self.len() > 10 {
            self.items.lock().unwrap().clear();
        }
        let mut g = self.items.lock().unwrap();
        g.push(v);
        drop(g);
        let n = self.len();
    }

    fn merge(&self, other: &Cache) {
        let mut mine = self.items.lock().unwrap();
        let theirs = other.items.lock().unwrap();
        mine.extend(theirs.iter());
    }
}

fn scoped(m: &Mutex<u32>) {
    {
        let mut g = m.lock().unwrap();
        *g += 1;
    }
    let g = m.lock().unwrap();
}

fn reentrant(m: &parking_lot::ReentrantMutex<u32>) {
    let a = m.lock();
    let b = m.lock();
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(RelockWhileHeld);
}
