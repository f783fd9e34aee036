//! GO019: two mutexes locked in opposite orders on two paths.

use super::common;
use super::locks;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::BTreeSet;
use unsnarl_model::*;

pub struct LockOrderInversion;

pub static META: RuleMeta = RuleMeta {
    id: "GO019",
    name: "lock-order-inversion",
    category: Category::LockOrder,
    severity: Severity::Critical,
    languages: &[Language::Go],
    summary: "Two mutexes are acquired in opposite orders on two paths (directly or through calls), a deadlock cycle.",
    docs: r#"
Builds the lock graph of the file: an edge A → B whenever mutex B is
locked (directly, or inside a function of the file called at that point)
while A is held. Mutexes are identified by package variable or by
`Type.field`. A cycle A → B → A is reported at both acquisitions, each
finding pointing at the other path. Locking a value the statement just before
built (`v = &entry{}; v.Lock()`) adds no edge: no other goroutine can
hold it yet, so that acquisition never waits.

## Why

If one goroutine holds A and waits for B while another holds B and waits
for A, neither can proceed, ever. Both paths work in isolation and in
tests; under concurrent load they eventually interleave and the program
hangs with both goroutines parked in `Lock`.

## Example

```go
package app

import "sync"

var (
	accountsMu sync.Mutex
	ledgerMu   sync.Mutex
)

func Credit() {
	accountsMu.Lock()
	defer accountsMu.Unlock()
	ledgerMu.Lock()
	defer ledgerMu.Unlock()
}

func Audit() {
	ledgerMu.Lock()
	defer ledgerMu.Unlock()
	accountsMu.Lock()
	defer accountsMu.Unlock()
}
```

## Fix

Pick one global order (document it) and take the locks in that order
everywhere, or restructure so no path holds both.

```go
package app

import "sync"

var (
	accountsMu sync.Mutex
	ledgerMu   sync.Mutex
)

func Credit() {
	accountsMu.Lock()
	defer accountsMu.Unlock()
	ledgerMu.Lock()
	defer ledgerMu.Unlock()
}

func Audit() {
	accountsMu.Lock()
	defer accountsMu.Unlock()
	ledgerMu.Lock()
	defer ledgerMu.Unlock()
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for LockOrderInversion {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        let (_, edges) = locks::lock_graph(cx);
        let mut reported = BTreeSet::new();
        for e in &edges {
            let Some(back) = edges.iter().find(|b| b.from == e.to && b.to == e.from) else {
                continue;
            };
            if !reported.insert((e.at.start, e.at.end)) {
                continue;
            }
            let short = |s: &str| common::short_name(s).to_string();
            let path = |x: &locks::Edge| -> String {
                let mut p = format!(
                    "{} locks `{}` (line {})",
                    cx.func_display(x.func),
                    short(&x.from),
                    common::line_of(cx, x.held_at)
                );
                for (sp, name) in &x.via {
                    p.push_str(&format!(
                        ", calls `{name}` (line {})",
                        common::line_of(cx, *sp)
                    ));
                }
                p.push_str(&format!(", then `{}`", short(&x.to)));
                if x.via.is_empty() {
                    p.push_str(&format!(" (line {})", common::line_of(cx, x.at)));
                }
                p
            };
            let mut f = cx.finding(
                &META,
                e.at,
                format!(
                    "lock order inversion: {}; but {}. Two goroutines taking these paths at once deadlock, each holding the lock the other waits for",
                    path(e),
                    path(back)
                ),
                format!(
                    "take `{}` and `{}` in one fixed order on every path (document it), or avoid holding both at once",
                    short(&e.from),
                    short(&e.to)
                ),
            );
            f.related.push(unsnarl_model::Related {
                file: None,
                span: back.at,
                message: "the opposite acquisition order".into(),
            });
            out.push(f);
        }
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[
        r#"
package app

import "sync"

var (
	accountsMu sync.Mutex
	ledgerMu   sync.Mutex
)

func Credit() {
	accountsMu.Lock()
	defer accountsMu.Unlock()
	ledgerMu.Lock() // expect
	defer ledgerMu.Unlock()
}

func Audit() {
	ledgerMu.Lock()
	defer ledgerMu.Unlock()
	accountsMu.Lock() // expect
	defer accountsMu.Unlock()
}
"#,
        r#"
package app

import "sync"

type Cache struct {
	mu    sync.Mutex
	store *Store
	items map[string]string
}

type Store struct {
	mu    sync.Mutex
	cache *Cache
}

func (c *Cache) Refresh() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.store.flush() // expect
}

func (s *Store) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
}

func (s *Store) Evict() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cache.mu.Lock() // expect
	s.cache.items = nil
	s.cache.mu.Unlock()
}
"#,
    ],
    pass: &[
        r#"
package pool

import "sync"

type Pool struct {
	sync.Mutex
	vals map[string]*entry
}

type entry struct {
	sync.RWMutex
	value any
	refs  int
}

// The new entry is locked before anyone else can see it; later callers
// take the pool's lock first and release it before waiting on an entry.
func (p *Pool) LoadOrNew(key string, build func() any) any {
	p.Lock()
	if e, ok := p.vals[key]; ok {
		e.refs++
		p.Unlock()
		e.RLock()
		defer e.RUnlock()
		return e.value
	}
	e := &entry{refs: 1}
	e.Lock()
	p.vals[key] = e
	p.Unlock()
	e.value = build()
	if e.value == nil {
		p.Lock()
		delete(p.vals, key)
		p.Unlock()
	}
	e.Unlock()
	return e.value
}
"#,
        r#"
package app

import "sync"

var (
	accountsMu sync.Mutex
	ledgerMu   sync.Mutex
)

func Credit() {
	accountsMu.Lock()
	defer accountsMu.Unlock()
	ledgerMu.Lock()
	defer ledgerMu.Unlock()
}

func Audit() {
	accountsMu.Lock()
	ledgerMu.Lock()
	ledgerMu.Unlock()
	accountsMu.Unlock()
}

func Sequential() {
	ledgerMu.Lock()
	ledgerMu.Unlock()
	accountsMu.Lock()
	accountsMu.Unlock()
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(LockOrderInversion);
}
