//! GO024: `sync.Cond.Wait()` not inside a `for` loop re-checking the
//! condition.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct CondWaitWithoutLoop;

pub static META: RuleMeta = RuleMeta {
    id: "GO024",
    name: "cond-wait-without-loop",
    category: Category::CondvarMisuse,
    severity: Severity::High,
    languages: &[Language::Go],
    summary: "`cond.Wait()` guarded by an `if` (or nothing) instead of a `for` loop that re-checks the condition.",
    docs: r#"
A `sync.Cond` `Wait` that is not inside a loop re-checking the condition it
waits for.

## Why

`Wait` returns after a `Signal` or `Broadcast`, not when the condition
holds: another goroutine may have taken the item between the wake-up and
this goroutine re-acquiring the lock, and a `Broadcast` wakes waiters whose
condition is still false. Code after an `if`-guarded `Wait` then runs on a
state it did not check: popping from an empty queue, reading a nil result.

## Example

```go
package app

import "sync"

type Queue struct {
	mu    sync.Mutex
	cond  *sync.Cond
	items []int
}

func (q *Queue) Pop() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		q.cond.Wait()
	}
	it := q.items[0]
	q.items = q.items[1:]
	return it
}
```

## Fix

```go
package app

import "sync"

type Queue struct {
	mu    sync.Mutex
	cond  *sync.Cond
	items []int
}

func (q *Queue) Pop() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 {
		q.cond.Wait()
	}
	it := q.items[0]
	q.items = q.items[1:]
	return it
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for CondWaitWithoutLoop {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for (i, e) in cx.model.exprs.iter().enumerate() {
            let id = ExprId(i as u32);
            let Some((cond, "Wait")) = common::cond_call(cx, id) else {
                continue;
            };
            let Some(s) = cx.tree.enclosing_stmt(id) else {
                continue;
            };
            if !common::enclosing_loops(cx, s).is_empty()
                || common::in_test_func(cx, cx.func_of(id))
            {
                continue;
            }
            out.push(cx.finding(
                &META,
                e.span,
                format!(
                    "`{cond}.Wait()` is not in a loop: it returns on any wake-up, not when the condition holds (another goroutine may have consumed the state first, or a `Broadcast` was for someone else), so the code after it runs on an unchecked state"
                ),
                format!("wait in a loop on the condition: `for !condition {{ {cond}.Wait() }}`"),
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
	mu    sync.Mutex
	cond  *sync.Cond
	conns []Conn
}

func (p *Pool) Get() Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.conns) == 0 {
		p.cond.Wait() // expect
	}
	c := p.conns[0]
	p.conns = p.conns[1:]
	return c
}

func (p *Pool) Ready() {
	p.mu.Lock()
	p.cond.Wait() // expect
	p.mu.Unlock()
}
"#],
    pass: &[r#"
package app

import "sync"

type Pool struct {
	mu    sync.Mutex
	cond  *sync.Cond
	conns []Conn
	wg    sync.WaitGroup
}

func (p *Pool) Get() Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.conns) == 0 {
		p.cond.Wait()
	}
	c := p.conns[0]
	p.conns = p.conns[1:]
	return c
}

func (p *Pool) Close() {
	p.wg.Wait()
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(CondWaitWithoutLoop);
}
