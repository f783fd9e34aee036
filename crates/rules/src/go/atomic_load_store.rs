//! GO017: an atomic `Load` followed by a `Store` computed from it.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::exprs_under;
use unsnarl_model::*;

pub struct AtomicLoadStore;

pub static META: RuleMeta = RuleMeta {
    id: "GO017",
    name: "atomic-load-then-store",
    category: Category::Atomicity,
    severity: Severity::High,
    languages: &[Language::Go],
    summary: "`x.Store(f(x.Load()))` (or `atomic.StoreInt64(&x, atomic.LoadInt64(&x)+n)`): a read-modify-write split into two atomic steps.",
    docs: r#"
An atomic value is stored with a value computed from an earlier `Load` of
the same variable, in one expression or through a local variable, outside
a compare-and-swap loop and without a lock.

## Why

Each step is atomic; the pair is not. Two goroutines can both load the same
old value and both store their update, so one update is lost (a counter
that under-counts, a balance that creates or destroys money). Atomics make
single steps safe; an update that depends on the current value needs
`Add`, `CompareAndSwap` in a loop, or a mutex.

## Example

```go
package app

import "sync/atomic"

type Stats struct {
	hits atomic.Int64
}

func (s *Stats) Hit() {
	s.hits.Store(s.hits.Load() + 1)
}
```

## Fix

Use the atomic read-modify-write operation (`Add`), or a CAS loop for other
updates.

```go
package app

import "sync/atomic"

type Stats struct {
	hits atomic.Int64
}

func (s *Stats) Hit() {
	s.hits.Add(1)
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for AtomicLoadStore {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for (i, e) in cx.model.exprs.iter().enumerate() {
            let id = ExprId(i as u32);
            let Some((var, value)) = store(cx, id) else {
                continue;
            };
            let f = cx.func_of(id);
            if has_cas(cx, f) || locked_before(cx, f, id) || common::in_test_func(cx, f) {
                continue;
            }
            // The stored value reads the same variable: directly, or through
            // a local assigned from a Load of it.
            let direct = exprs_under(cx.model, value)
                .into_iter()
                .any(|x| load_of(cx, x).as_deref() == Some(var.as_str()));
            let via_local = !direct
                && exprs_under(cx.model, value).into_iter().any(|x| {
                    let Some(n) = cx.model.name_of(x) else {
                        return false;
                    };
                    // The last binding of the local before the store.
                    let last = common::bindings(cx, f, n)
                        .into_iter()
                        .filter(|(s, _)| cx.stmt(*s).span.start < e.span.start)
                        .max_by_key(|(s, _)| cx.stmt(*s).span.start);
                    last.is_some_and(|(_, v)| {
                        v.is_some_and(|v| {
                            exprs_under(cx.model, v)
                                .into_iter()
                                .any(|y| load_of(cx, y).as_deref() == Some(var.as_str()))
                        })
                    })
                });
            if !direct && !via_local {
                continue;
            }
            out.push(cx.finding(
                &META,
                e.span,
                format!(
                    "`{var}` is stored with a value computed from an earlier load of it: another goroutine can update `{var}` between the load and the store, and that update is lost"
                ),
                format!(
                    "make it one atomic step: `{var}.Add(delta)` (or `atomic.AddInt64`), a `CompareAndSwap` retry loop, or a mutex around the whole update (and around every other field of the same invariant)"
                ),
            ));
        }
    }
}

/// An atomic store: `x.Store(v)` on an atomic type (or an unknown type
/// whose `Load` is also called), or `atomic.StoreT(&x, v)`. Returns the
/// variable as written and the stored value.
fn store(cx: &FileCx, e: ExprId) -> Option<(String, ExprId)> {
    let c = cx.call(e)?;
    if let Some(t) = c.target.as_deref()
        && let Some(fname) = t.strip_prefix("sync/atomic.Store")
        && !fname.contains('.')
    {
        let var = cx.model.dotted(c.positional(0)?)?;
        return Some((var, c.positional(1)?));
    }
    if c.name != "Store" || c.args.len() != 1 {
        return None;
    }
    let recv = c.receiver?;
    match c.target.as_deref() {
        Some(t) if t.starts_with("sync/atomic.") => {}
        None => {}
        _ => return None,
    }
    Some((cx.model.dotted(recv)?, c.positional(0)?))
}

/// The variable an atomic load reads: `x.Load()` or `atomic.LoadT(&x)`.
fn load_of(cx: &FileCx, e: ExprId) -> Option<String> {
    let c = cx.call(e)?;
    if let Some(t) = c.target.as_deref()
        && let Some(fname) = t.strip_prefix("sync/atomic.Load")
        && !fname.contains('.')
    {
        return cx.model.dotted(c.positional(0)?);
    }
    if c.name != "Load" || !c.args.is_empty() {
        return None;
    }
    match c.target.as_deref() {
        Some(t) if t.starts_with("sync/atomic.") => {}
        None => {}
        _ => return None,
    }
    cx.model.dotted(c.receiver?)
}

/// A compare-and-swap anywhere in the function: the load/store is part of
/// a hand-written protocol, not a plain update.
fn has_cas(cx: &FileCx, f: FuncId) -> bool {
    cx.body_exprs(f).iter().any(|&e| {
        cx.call(e)
            .is_some_and(|c| c.name.starts_with("CompareAndSwap"))
    })
}

/// A `Lock()` earlier in the function: the update is serialized by it.
fn locked_before(cx: &FileCx, f: FuncId, e: ExprId) -> bool {
    let at = cx.expr(e).span.start;
    cx.body_exprs(f).iter().any(|&x| {
        cx.expr(x).span.start < at
            && cx
                .call(x)
                .is_some_and(|c| c.name == "Lock" && c.args.is_empty())
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[r#"
package app

import "sync/atomic"

type Account struct {
	balance atomic.Int64
}

var served int64

func Transfer(a, b *Account, amt int64) {
	a.balance.Store(a.balance.Load() - amt) // expect
	b.balance.Store(b.balance.Load() + amt) // expect
}

func Serve() {
	atomic.StoreInt64(&served, atomic.LoadInt64(&served)+1) // expect
}

func Double(a *Account) {
	v := a.balance.Load()
	a.balance.Store(v * 2) // expect
}
"#],
    pass: &[r#"
package app

import (
	"sync"
	"sync/atomic"
)

type Account struct {
	balance atomic.Int64
	mu      sync.Mutex
	plain   int64
}

func Deposit(a *Account, amt int64) {
	a.balance.Add(amt)
}

func Double(a *Account) {
	for {
		v := a.balance.Load()
		if a.balance.CompareAndSwap(v, v*2) {
			return
		}
	}
}

func Reset(a, b *Account) {
	a.balance.Store(b.balance.Load())
	a.balance.Store(0)
}

func Cache(a *Account, find func() int64) int64 {
	v := a.balance.Load()
	if v != 0 {
		return v
	}
	v = find()
	a.balance.Store(v)
	return v
}

func Locked(a *Account) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.balance.Store(a.balance.Load() + 1)
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(AtomicLoadStore);
}
