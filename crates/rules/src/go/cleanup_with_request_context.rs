//! GO012: deferred cleanup (`Rollback`, `Close`, `Release`, `Unlock`...)
//! given the request's context, which is cancelled when it runs.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct CleanupWithRequestContext;

pub static META: RuleMeta = RuleMeta {
    id: "GO012",
    name: "cleanup-with-request-context",
    category: Category::AwaitInCleanup,
    severity: Severity::Medium,
    languages: &[Language::Go],
    summary: "A deferred cleanup call (`Rollback`, `Close`, `Release`, `Unlock`, `Shutdown`...) is passed the function's own context, which may already be cancelled when it runs.",
    docs: r#"
`defer x.Rollback(ctx)` (or `Close`, `Release`, `Unlock`, `Shutdown`,
`Abort`, `Delete`... of a remote resource), directly or inside a deferred
func literal, where `ctx` is the context the function received (or one
derived from it).

## Why

Deferred cleanup runs exactly when things went wrong: after an error, a
timeout or a cancellation. By then the request's context is often done, so
the cleanup call fails immediately with `context canceled` and the
transaction stays open, the lease stays held, the remote lock is never
released, until some server-side timeout frees it.

## Example

```go
package app

import "context"

func Transfer(ctx context.Context, db DB, from, to string, amt int) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if err := move(ctx, tx, from, to, amt); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
```

## Fix

Give the cleanup its own small budget, detached from the request's
cancellation (`context.WithoutCancel`, Go 1.21+).

```go
package app

import (
	"context"
	"time"
)

func Transfer(ctx context.Context, db DB, from, to string, amt int) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		tx.Rollback(cctx)
	}()
	if err := move(ctx, tx, from, to, amt); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
```
"#,
    examples: &EXAMPLES,
};

const CLEANUP: &[&str] = &[
    "Rollback",
    "Close",
    "Release",
    "Unlock",
    "Shutdown",
    "Stop",
    "Abort",
    "Cleanup",
    "Delete",
    "Remove",
    "Unsubscribe",
    "Deregister",
    "Unregister",
    "Disconnect",
    "Discard",
    "Nack",
    "Cancel",
];

impl Rule for CleanupWithRequestContext {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for st in &cx.model.stmts {
            let StmtKind::Defer(call) = st.kind else {
                continue;
            };
            let f = cx.func_of(call);
            let Some(common::CtxSource::Param(ctx)) = common::ctx_in_scope(cx, f) else {
                continue;
            };
            let mut calls = vec![call];
            if let Some(g) = common::go_closure(cx, call) {
                calls = cx
                    .body_exprs(g)
                    .iter()
                    .copied()
                    .filter(|&e| cx.call(e).is_some())
                    .collect();
                // A closure that builds its own context is the fix.
                if calls.iter().any(|&e| {
                    cx.call(e).is_some_and(|c| {
                        matches!(
                            c.target.as_deref(),
                            Some(
                                "context.WithoutCancel"
                                    | "context.Background"
                                    | "context.TODO"
                                    | "context.WithTimeout"
                                    | "context.WithDeadline"
                            )
                        )
                    })
                }) {
                    continue;
                }
            }
            for e in calls {
                let Some(c) = cx.call(e) else { continue };
                if c.receiver.is_none() || !CLEANUP.contains(&c.name.as_str()) {
                    continue;
                }
                let Some(arg) = c.args.iter().find(|a| is_request_ctx(cx, f, a.value, &ctx)) else {
                    continue;
                };
                let written = cx.source(cx.expr(arg.value).span);
                let callee = cx.source(cx.expr(c.func).span);
                out.push(cx.finding(
                    &META,
                    cx.expr(e).span,
                    format!(
                        "deferred `{callee}` gets `{written}`, the function's own context: on the paths where cleanup matters (error, timeout, cancellation) it is already done, so this call fails at once and the resource stays held"
                    ),
                    format!(
                        "run the cleanup with its own budget: `cctx, cancel := context.WithTimeout(context.WithoutCancel({ctx}), 2*time.Second); defer cancel()` inside a deferred func, and pass `cctx`"
                    ),
                ));
            }
        }
    }
}

/// The function's context parameter, or a variable derived from it in the
/// function (`ctx, cancel := context.WithTimeout(ctx, ...)`).
fn is_request_ctx(cx: &FileCx, f: FuncId, e: ExprId, param: &str) -> bool {
    let Some(name) = cx.model.name_of(e) else {
        return false;
    };
    if name == param {
        return true;
    }
    let top = common::outermost(cx, f);
    let binds = common::bindings(cx, top, name);
    !binds.is_empty()
        && binds.iter().all(|(_, v)| {
            v.and_then(|v| cx.call(v)).is_some_and(|c| {
                matches!(
                    c.target.as_deref(),
                    Some(
                        "context.WithTimeout"
                            | "context.WithDeadline"
                            | "context.WithCancel"
                            | "context.WithValue"
                    )
                ) && c.positional(0).and_then(|a| cx.model.name_of(a)) == Some(param)
            })
        })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[
        r#"
package app

import "context"

func Move(ctx context.Context, db DB, id string) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) // expect
	if err := tx.Exec(ctx, "update t set x = 1 where id = $1", id); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
"#,
        r#"
package app

import (
	"context"
	"time"
)

func Job(ctx context.Context, locks Locker, key string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	lease, err := locks.Acquire(ctx, key)
	if err != nil {
		return err
	}
	defer func() {
		lease.Release(ctx) // expect
	}()
	return work(ctx)
}
"#,
    ],
    pass: &[r#"
package app

import (
	"context"
	"time"
)

func Move(ctx context.Context, db DB, id string) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		tx.Rollback(cctx)
	}()
	return tx.Commit(ctx)
}

func Read(ctx context.Context, f File) error {
	defer f.Close()
	defer cancelWatch()
	return f.Read(ctx)
}
"#],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(CleanupWithRequestContext);
}
