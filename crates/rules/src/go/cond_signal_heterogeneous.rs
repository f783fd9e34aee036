//! GO025: `cond.Signal()` on a condition variable whose waiters wait for
//! different things.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::{BTreeMap, BTreeSet};
use unsnarl_model::*;

pub struct CondSignalHeterogeneous;

pub static META: RuleMeta = RuleMeta {
    id: "GO025",
    name: "cond-signal-heterogeneous",
    category: Category::CondvarMisuse,
    severity: Severity::High,
    languages: &[Language::Go],
    summary: "`Signal()` on a `sync.Cond` whose waiters loop on different conditions (e.g. \"not empty\" and \"not full\" on one cond).",
    docs: r#"
One `sync.Cond` is waited on in loops with different conditions (say, "the
queue is not empty" for consumers and "the queue is not full" for
producers), and some code wakes it with `Signal()`.

## Why

`Signal` wakes one waiter, any of them. If it wakes a producer when an item
was added for a consumer, the producer re-checks, finds its condition still
false and waits again: the wake-up is lost, and the consumer that could
have proceeded sleeps on. With the right timing every goroutine ends up
waiting: a deadlock.

## Example

```go
package app

import "sync"

type Buffer struct {
	mu    sync.Mutex
	cond  *sync.Cond
	items []int
	max   int
}

func (b *Buffer) Put(v int) {
	b.mu.Lock()
	for len(b.items) == b.max {
		b.cond.Wait()
	}
	b.items = append(b.items, v)
	b.cond.Signal()
	b.mu.Unlock()
}

func (b *Buffer) Take() int {
	b.mu.Lock()
	for len(b.items) == 0 {
		b.cond.Wait()
	}
	v := b.items[0]
	b.items = b.items[1:]
	b.cond.Signal()
	b.mu.Unlock()
	return v
}
```

## Fix

Use one condition variable per condition (`notEmpty`, `notFull`), or
`Broadcast`.

```go
package app

import "sync"

type Buffer struct {
	mu       sync.Mutex
	notFull  *sync.Cond
	notEmpty *sync.Cond
	items    []int
	max      int
}

func (b *Buffer) Put(v int) {
	b.mu.Lock()
	for len(b.items) == b.max {
		b.notFull.Wait()
	}
	b.items = append(b.items, v)
	b.notEmpty.Signal()
	b.mu.Unlock()
}

func (b *Buffer) Take() int {
	b.mu.Lock()
	for len(b.items) == 0 {
		b.notEmpty.Wait()
	}
	v := b.items[0]
	b.items = b.items[1:]
	b.notFull.Signal()
	b.mu.Unlock()
	return v
}
```
"#,
    examples: &EXAMPLES,
};

/// A condition variable across methods: `<receiver type>.<field>` when it
/// hangs off the receiver, else as written.
fn cond_key(cx: &FileCx, e: ExprId, written: &str) -> String {
    let f = common::outermost(cx, cx.func_of(e));
    if let (Some(r), Some(c)) = (&cx.func(f).receiver, &cx.func(f).class)
        && let Some(rest) = written.strip_prefix(r.as_str())
        && rest.starts_with('.')
    {
        return format!("{c}{rest}");
    }
    let root = written.split('.').next().unwrap_or(written);
    match common::name_scope(cx, cx.func_of(e), root) {
        common::NameScope::Package => written.to_string(),
        // A local (or a parameter): the same name in another function is
        // another condition variable.
        _ => format!("{}#{written}", f.0),
    }
}

impl Rule for CondSignalHeterogeneous {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        let mut preds: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut signals: Vec<(ExprId, String, String)> = Vec::new();
        for i in 0..cx.model.exprs.len() {
            let id = ExprId(i as u32);
            let Some((cond, m)) = common::cond_call(cx, id) else {
                continue;
            };
            if common::in_test_func(cx, cx.func_of(id)) {
                continue;
            }
            let key = cond_key(cx, id, &cond);
            match m {
                "Wait" => {
                    let Some(s) = cx.tree.enclosing_stmt(id) else {
                        continue;
                    };
                    let Some(&lp) = common::enclosing_loops(cx, s).first() else {
                        continue;
                    };
                    let StmtKind::While { cond: c, .. } = cx.stmt(lp).kind else {
                        continue;
                    };
                    // Normalize the receiver name away.
                    let f = common::outermost(cx, cx.func_of(id));
                    let mut text: String = cx
                        .source(cx.expr(c).span)
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ");
                    if let Some(r) = &cx.func(f).receiver {
                        text = text.replace(&format!("{r}."), "self.");
                    }
                    preds.entry(key).or_default().insert(text);
                }
                "Signal" => signals.push((id, key, cond)),
                _ => {}
            }
        }
        for (id, key, cond) in signals {
            let Some(p) = preds.get(&key) else { continue };
            if p.len() < 2 {
                continue;
            }
            let list: Vec<String> = p.iter().map(|s| format!("`{s}`")).collect();
            out.push(cx.finding(
                &META,
                cx.expr(id).span,
                format!(
                    "`{cond}.Signal()` wakes one waiter, but goroutines wait on `{cond}` for different conditions ({}): the wake-up can go to one whose condition is still false, which waits again, and the one that could proceed never wakes",
                    list.join(", ")
                ),
                format!("use one `sync.Cond` per condition (e.g. `notEmpty` and `notFull` on the same mutex), or `{cond}.Broadcast()`"),
            ));
        }
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[r#"
package app

import "sync"

type Buffer struct {
	mu    sync.Mutex
	cond  *sync.Cond
	items []int
	max   int
}

func (b *Buffer) Put(v int) {
	b.mu.Lock()
	for len(b.items) == b.max {
		b.cond.Wait()
	}
	b.items = append(b.items, v)
	b.cond.Signal() // expect
	b.mu.Unlock()
}

func (buf *Buffer) Take() int {
	buf.mu.Lock()
	for len(buf.items) == 0 {
		buf.cond.Wait()
	}
	v := buf.items[0]
	buf.items = buf.items[1:]
	buf.cond.Signal() // expect
	buf.mu.Unlock()
	return v
}
"#],
    pass: &[r#"
package app

import "sync"

type Queue struct {
	mu    sync.Mutex
	cond  *sync.Cond
	items []int
}

func (q *Queue) Put(v int) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.cond.Signal()
	q.mu.Unlock()
}

func (q *Queue) Take() int {
	q.mu.Lock()
	for len(q.items) == 0 {
		q.cond.Wait()
	}
	v := q.items[0]
	q.items = q.items[1:]
	q.mu.Unlock()
	return v
}

func (r *Queue) TakeTwo() (int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.items) == 0 {
		r.cond.Wait()
	}
	return r.items[0], 0
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(CondSignalHeterogeneous);
}
