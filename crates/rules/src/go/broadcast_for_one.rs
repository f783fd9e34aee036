//! GO031: `cond.Broadcast()` after adding a single item.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct BroadcastForOne;

pub static META: RuleMeta = RuleMeta {
    id: "GO031",
    name: "broadcast-for-one",
    category: Category::ThunderingHerd,
    severity: Severity::Medium,
    languages: &[Language::Go],
    summary: "`cond.Broadcast()` right after appending one item (or sending one value's worth of state), waking every waiter for a single unit of work.",
    docs: r#"
A function appends exactly one item to a slice (`q.items = append(q.items,
x)`) and then wakes all waiters of a `sync.Cond` with `Broadcast`, with no
other state change that every waiter would need to see (closing, resizing,
a flag).

## Why

All waiters wake, contend for the mutex, re-check the condition; one gets
the item and the rest go back to sleep. With many waiters every item costs
a burst of wake-ups and lock contention (a thundering herd), and latency
grows with the number of idle workers.

## Example

```go
package app

import "sync"

type Queue struct {
	mu    sync.Mutex
	cond  *sync.Cond
	items []Job
}

func (q *Queue) Push(j Job) {
	q.mu.Lock()
	q.items = append(q.items, j)
	q.mu.Unlock()
	q.cond.Broadcast()
}
```

## Fix

Wake one waiter per item when the waiters are interchangeable.

```go
package app

import "sync"

type Queue struct {
	mu    sync.Mutex
	cond  *sync.Cond
	items []Job
}

func (q *Queue) Push(j Job) {
	q.mu.Lock()
	q.items = append(q.items, j)
	q.mu.Unlock()
	q.cond.Signal()
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for BroadcastForOne {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for (i, e) in cx.model.exprs.iter().enumerate() {
            let id = ExprId(i as u32);
            let Some((cond, "Broadcast")) = common::cond_call(cx, id) else {
                continue;
            };
            let f = cx.func_of(id);
            let stmts = cx.body_stmts(f);
            let mut appends_one = 0;
            let mut other_writes = 0;
            for s in stmts {
                let StmtKind::Assign { targets, value, .. } = &cx.stmt(*s).kind else {
                    continue;
                };
                let single_append = value.and_then(|v| cx.call(v)).is_some_and(|c| {
                    c.target.as_deref() == Some("append") && c.args.len() == 2 && !c.has_spread()
                });
                let field_write = targets.iter().any(|&t| {
                    matches!(
                        cx.expr(t).kind,
                        ExprKind::Attr { .. } | ExprKind::Index { .. }
                    )
                });
                if single_append && field_write {
                    if common::enclosing_loops(cx, *s).is_empty() {
                        appends_one += 1;
                    } else {
                        other_writes += 1;
                    }
                } else if field_write {
                    other_writes += 1;
                }
            }
            if appends_one != 1 || other_writes > 0 {
                continue;
            }
            out.push(cx.finding(
                &META,
                e.span,
                format!(
                    "`{cond}.Broadcast()` wakes every waiter for one new item: all of them contend for the lock, one wins and the rest go back to sleep"
                ),
                format!("use `{cond}.Signal()` to wake one waiter per item (keep `Broadcast` for state every waiter must see, such as closing)"),
            ));
        }
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[r#"
package app

import "sync"

type Pool struct {
	mu   sync.Mutex
	cond *sync.Cond
	free []Conn
}

func (p *Pool) Put(c Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free = append(p.free, c)
	p.cond.Broadcast() // expect
}
"#],
    pass: &[r#"
package app

import "sync"

type Pool struct {
	mu     sync.Mutex
	cond   *sync.Cond
	free   []Conn
	closed bool
}

func (p *Pool) Put(c Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free = append(p.free, c)
	p.cond.Signal()
}

func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cond.Broadcast()
}

func (p *Pool) PutAll(cs []Conn) {
	p.mu.Lock()
	p.free = append(p.free, cs...)
	p.mu.Unlock()
	p.cond.Broadcast()
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(BroadcastForOne);
}
