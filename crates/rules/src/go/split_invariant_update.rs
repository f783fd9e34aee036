//! GO034: the two halves of one invariant (a transfer between two
//! balances) updated by separate atomics or under different locks.

use super::common;
use super::flow::{self, Flow};
use super::locks::{self, HeldSet};
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::exprs_under;
use unsnarl_model::*;

pub struct SplitInvariantUpdate;

pub static META: RuleMeta = RuleMeta {
    id: "GO034",
    name: "split-invariant-update",
    category: Category::Atomicity,
    severity: Severity::High,
    languages: &[Language::Go],
    summary: "A value moved between two objects (`a.x -= n` and `b.x += n`, or `a.x.Add(-n)` and `b.x.Add(n)`) with each half under its own lock or atomic.",
    docs: r#"
One function takes an amount away from a field of one object and adds the
same amount to the same field of another (a transfer), and the two updates
are not covered by one lock: each is a separate atomic operation, or each
happens under a different mutex (or no mutex).

## Why

The invariant is the sum, and no single lock protects it. A reader (an
audit, a balance check, a snapshot) that runs between the two steps sees
money that has left one account and not yet arrived in the other; a
failure between them loses it for good. Each step is safe; the transfer is
not.

## Example

```go
package app

import "sync/atomic"

type Account struct {
	balance atomic.Int64
}

func Transfer(from, to *Account, amt int64) {
	from.balance.Add(-amt)
	to.balance.Add(amt)
}
```

## Fix

One lock spanning the whole transfer (and every reader of the invariant).

```go
package app

import "sync"

type Account struct {
	balance int64
}

var ledgerMu sync.Mutex

func Transfer(from, to *Account, amt int64) {
	ledgerMu.Lock()
	defer ledgerMu.Unlock()
	from.balance -= amt
	to.balance += amt
}
```
"#,
    examples: &EXAMPLES,
};

/// One half of a transfer: `root.field` changed by `sign * amount`.
#[derive(Clone, Debug)]
struct Update {
    root: String,
    field: String,
    negative: bool,
    amount: String,
    held: Vec<String>,
    atomic: bool,
    span: Span,
}

impl Rule for SplitInvariantUpdate {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for f in cx.model.function_ids() {
            if f.0 == 0 || common::in_test_func(cx, f) {
                continue;
            }
            let mut fl = Collect {
                updates: Vec::new(),
            };
            flow::run_function(cx, &mut fl, &cx.func(f).body, HeldSet::new());
            let ups = fl.updates;
            for (i, a) in ups.iter().enumerate() {
                for b in &ups[i + 1..] {
                    if a.field != b.field
                        || a.root == b.root
                        || a.negative == b.negative
                        || a.amount != b.amount
                        || a.held.iter().any(|h| b.held.contains(h))
                    {
                        continue;
                    }
                    // Plain updates with no lock at all are a data race,
                    // reported elsewhere when goroutines are involved.
                    if !a.atomic && !b.atomic && a.held.is_empty() && b.held.is_empty() {
                        continue;
                    }
                    let how = if a.atomic || b.atomic {
                        "two separate atomic operations"
                    } else {
                        "two different locks"
                    };
                    out.push(cx.finding(
                        &META,
                        b.span,
                        format!(
                            "`{}` moves between `{}.{f}` and `{}.{f}` in {how}: between the two steps the sum is wrong for any reader, and a failure in between loses it",
                            a.amount,
                            a.root,
                            b.root,
                            f = a.field
                        ),
                        "take one lock around both updates (and around every reader of the pair), or keep both fields under a single owner",
                    ));
                }
            }
        }
    }
}

struct Collect {
    updates: Vec<Update>,
}

fn split_dotted(d: &str) -> Option<(String, String)> {
    let (root, field) = d.rsplit_once('.')?;
    Some((root.to_string(), field.to_string()))
}

impl Flow for Collect {
    type S = HeldSet;
    fn simple(&mut self, cx: &FileCx, s: StmtId, st: &mut HeldSet) {
        let held: Vec<String> = st.iter().map(|h| h.op.instance.clone()).collect();
        match &cx.stmt(s).kind {
            StmtKind::Assign {
                targets,
                value: Some(v),
                op: AssignOp::Augmented(op @ (BinOp::Add | BinOp::Sub)),
            } => {
                if let [t] = targets.as_slice()
                    && let Some(d) = cx.model.dotted(*t)
                    && let Some((root, field)) = split_dotted(&d)
                {
                    self.updates.push(Update {
                        root,
                        field,
                        negative: *op == BinOp::Sub,
                        amount: cx.source(cx.expr(*v).span).trim().to_string(),
                        held: held.clone(),
                        atomic: false,
                        span: cx.stmt(s).span,
                    });
                }
            }
            StmtKind::Expr(e) => {
                for x in exprs_under(cx.model, *e) {
                    let Some(c) = cx.call(x) else { continue };
                    let typed_atomic = c
                        .target
                        .as_deref()
                        .is_some_and(|t| t.starts_with("sync/atomic."));
                    if c.name != "Add" || c.args.len() != 1 || !(typed_atomic || c.target.is_none())
                    {
                        continue;
                    }
                    let Some(d) = c.receiver.and_then(|r| cx.model.dotted(r)) else {
                        continue;
                    };
                    let Some((root, field)) = split_dotted(&d) else {
                        continue;
                    };
                    let Some(arg) = c.positional(0) else { continue };
                    let text = cx.source(cx.expr(arg).span).trim().to_string();
                    let (negative, amount) = match text.strip_prefix('-') {
                        Some(rest) => (true, rest.trim().to_string()),
                        None => (false, text),
                    };
                    self.updates.push(Update {
                        root,
                        field,
                        negative,
                        amount,
                        held: held.clone(),
                        atomic: true,
                        span: cx.stmt(s).span,
                    });
                }
            }
            _ => {}
        }
        locks::apply(cx, s, st, &mut |_, _| {});
    }
    fn cond(&mut self, cx: &FileCx, e: ExprId, st: &mut HeldSet) {
        for x in exprs_under(cx.model, e) {
            locks::apply_expr(cx, x, st, &mut |_, _| {});
        }
    }
    fn join(&self, a: &HeldSet, b: &HeldSet) -> HeldSet {
        locks::join_held(a, b)
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[
        r#"
package app

import "sync/atomic"

type Account struct {
	balance atomic.Int64
}

func Transfer(from, to *Account, amt int64) {
	from.balance.Add(-amt)
	to.balance.Add(amt) // expect
}
"#,
        r#"
package app

import "sync"

type Account struct {
	mu      sync.Mutex
	balance int64
}

func Transfer(from, to *Account, amt int64) {
	from.mu.Lock()
	from.balance -= amt
	from.mu.Unlock()
	to.mu.Lock()
	to.balance += amt // expect
	to.mu.Unlock()
}
"#,
    ],
    pass: &[r#"
package app

import "sync"

type Account struct {
	mu      sync.Mutex
	balance int64
	hits    int64
}

var ledgerMu sync.Mutex

func Transfer(from, to *Account, amt int64) {
	ledgerMu.Lock()
	defer ledgerMu.Unlock()
	from.balance -= amt
	to.balance += amt
}

func Ordered(a, b *Account, amt int64) {
	a.mu.Lock()
	b.mu.Lock()
	a.balance -= amt
	b.balance += amt
	b.mu.Unlock()
	a.mu.Unlock()
}

func Stats(a, b *Account) {
	a.mu.Lock()
	a.hits += 1
	a.mu.Unlock()
	b.mu.Lock()
	b.hits += 2
	b.mu.Unlock()
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(SplitInvariantUpdate);
}
