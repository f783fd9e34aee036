//! GO023: `defer mu.Lock()` where `defer mu.Unlock()` was meant.

use super::common;
use super::locks;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct DeferredLock;

pub static META: RuleMeta = RuleMeta {
    id: "GO023",
    name: "deferred-lock",
    category: Category::SemaphoreMisuse,
    severity: Severity::High,
    languages: &[Language::Go],
    summary: "`defer mu.Lock()` (or `RLock`) with no earlier `Unlock` of the same mutex: almost certainly a typo for `defer mu.Unlock()`.",
    docs: r#"
A deferred `Lock`/`RLock` of a mutex that the function has not unlocked
before. (Unlocking for a while and deferring the re-lock, `mu.Unlock();
defer mu.Lock()`, is a legitimate pattern and is not reported.)

## Why

The mutex is never released: the function returns with it held (the
deferred call even locks it a second time, blocking forever if it was
already held). Every later `Lock` hangs.

## Example

```go
package app

import "sync"

var mu sync.Mutex

func Bump(m map[string]int, k string) {
	mu.Lock()
	defer mu.Lock()
	m[k]++
}
```

## Fix

```go
package app

import "sync"

var mu sync.Mutex

func Bump(m map[string]int, k string) {
	mu.Lock()
	defer mu.Unlock()
	m[k]++
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for DeferredLock {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for st in &cx.model.stmts {
            let StmtKind::Defer(e) = st.kind else {
                continue;
            };
            let Some(op) = locks::lock_op(cx, e) else {
                continue;
            };
            if !op.kind.acquires() {
                continue;
            }
            let f = cx.func_of(e);
            let unlocked_before = cx.body_exprs(f).iter().any(|&x| {
                cx.expr(x).span.start < st.span.start
                    && locks::lock_op(cx, x)
                        .is_some_and(|o| !o.kind.acquires() && o.instance == op.instance)
            });
            if unlocked_before {
                continue;
            }
            let un = if op.kind == locks::OpKind::RLock {
                "RUnlock"
            } else {
                "Unlock"
            };
            out.push(cx.finding(
                &META,
                st.span,
                format!(
                    "`defer {}.{}()` locks again at return instead of unlocking: the mutex is never released and the next `Lock` blocks forever",
                    op.instance,
                    if op.kind == locks::OpKind::RLock { "RLock" } else { "Lock" }
                ),
                format!("`defer {}.{un}()`", op.instance),
            ));
        }
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[r#"
package app

import "sync"

type Store struct {
	mu sync.RWMutex
	m  map[string]int
}

func (s *Store) Get(k string) int {
	s.mu.RLock()
	defer s.mu.RLock() // expect
	return s.m[k]
}
"#],
    pass: &[r#"
package app

import "sync"

type Store struct {
	mu sync.Mutex
	m  map[string]int
}

func (s *Store) Get(k string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[k]
}

func (s *Store) slowLocked() {
	s.mu.Unlock()
	defer s.mu.Lock()
	work()
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(DeferredLock);
}
