//! GO011: a call without a context (`http.Get`, `http.NewRequest`,
//! `db.Query`, `exec.Command`) in a function that has one.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct ContextLessCall;

pub static META: RuleMeta = RuleMeta {
    id: "GO011",
    name: "context-less-call",
    category: Category::ContextSevered,
    severity: Severity::Medium,
    languages: &[Language::Go],
    summary: "`http.Get`/`http.NewRequest`/`db.Query`/`exec.Command` (the variants without a context) in a function that has a context.",
    docs: r#"
A function that receives a `context.Context` (or an `*http.Request`) calls
an API variant that takes none: `http.Get`/`Post`/`Head`/`PostForm`,
`http.NewRequest`, `db.Query`/`QueryRow`/`Exec`/`Begin`/`Prepare`/`Ping`,
`exec.Command`, while a `...Context` variant exists. A call that is handed
a context anyway (pgx's `conn.QueryRow(ctx, sql)`: the same names, with the
context first) is not reported, nor is a request bound to the context
after it was built (`req.WithContext(ctx)`, `req.Clone(ctx)`, or the older
`req.Cancel = ctx.Done()`).

## Why

The context carries the caller's deadline and cancellation. A call made
without it keeps waiting after the client has gone or the deadline has
passed, holding a connection from the pool and a goroutine, and a slow
dependency then exhausts the service.

## Example

```go
package app

import (
	"context"
	"database/sql"
)

func Count(ctx context.Context, db *sql.DB) (int, error) {
	var n int
	err := db.QueryRow("select count(*) from jobs").Scan(&n)
	return n, err
}
```

## Fix

Use the `Context` variant and pass the context along.

```go
package app

import (
	"context"
	"database/sql"
)

func Count(ctx context.Context, db *sql.DB) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, "select count(*) from jobs").Scan(&n)
	return n, err
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for ContextLessCall {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for (i, e) in cx.model.exprs.iter().enumerate() {
            let ExprKind::Call(c) = &e.kind else { continue };
            let Some(entry) = cx.effect(c, Effect::NeedsTimeout) else {
                continue;
            };
            if !matches!(entry.kind.as_deref(), Some("no-context" | "default-client")) {
                continue;
            }
            let f = cx.func_of(ExprId(i as u32));
            if common::in_test(cx, f) {
                continue;
            }
            let Some(ctx) = common::ctx_in_scope(cx, f) else {
                continue;
            };
            // A method that already takes the context (pgx's
            // `conn.QueryRow(ctx, sql)`) is not the context-less variant the
            // name suggests.
            if c.args.iter().any(|a| is_context(cx, a.value))
                || gets_context_later(cx, ExprId(i as u32))
            {
                continue;
            }
            let ctx = ctx.expr();
            let callee = cx.callee_display(c);
            let short = common::short_name(&callee);
            out.push(cx.finding(
                &META,
                e.span,
                format!(
                    "`{short}` {}, although `{ctx}` is available here: when the caller gives up or the deadline passes, this call keeps waiting and holds its connection",
                    entry.what
                ),
                format!("{} (with `{ctx}`)", entry.fix),
            ));
        }
    }
}

/// `req, err := http.NewRequest(...)` followed by `req.WithContext(ctx)`,
/// `req.Clone(ctx)`, the older `req.Cancel = ctx.Done()` (which the
/// transport honours the same way), or a call taking both the request and a
/// context (`client.Do(ctx, req)`): the context is attached after all.
fn gets_context_later(cx: &FileCx, call: ExprId) -> bool {
    let Some(s) = cx.tree.enclosing_stmt(call) else {
        return false;
    };
    let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind else {
        return false;
    };
    let Some(&t) = targets.first() else {
        return false;
    };
    let Some(&req) = common::names_in_target(cx, t).first() else {
        return false;
    };
    let f = common::outermost(cx, cx.func_of(call));
    common::name_uses(cx, f, req).into_iter().any(|u| {
        let Parent::Expr(p) = cx.tree.expr_parent(u) else {
            return false;
        };
        if let ExprKind::Attr { name, .. } = &cx.expr(p).kind {
            return matches!(name.as_str(), "WithContext" | "Clone")
                || (name == "Cancel" && assigned_done_channel(cx, p));
        }
        cx.call(p)
            .is_some_and(|c| c.args.iter().any(|a| is_context(cx, a.value)))
    })
}

/// `target = ctx.Done()`: the field is given a context's done channel.
fn assigned_done_channel(cx: &FileCx, target: ExprId) -> bool {
    let Parent::Stmt(s) = cx.tree.expr_parent(target) else {
        return false;
    };
    let StmtKind::Assign {
        targets,
        value: Some(v),
        ..
    } = &cx.stmt(s).kind
    else {
        return false;
    };
    targets.contains(&target)
        && cx
            .call(cx.model.strip(*v))
            .is_some_and(|c| c.name == "Done" && c.receiver.is_some_and(|r| is_context(cx, r)))
}

/// A context value: typed `context.Context`, or named like one.
fn is_context(cx: &FileCx, e: ExprId) -> bool {
    cx.sema.type_of(e) == Some("context.Context")
        || cx
            .model
            .name_of(e)
            .is_some_and(|n| n == "ctx" || n.ends_with("Ctx"))
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[
        r#"
package app

import (
	"context"
	"net/http"
)

func Proxy(ctx context.Context, url string) (*http.Response, error) {
	return http.Get(url) // expect
}

func Build(ctx context.Context, url string) (*http.Request, error) {
	return http.NewRequest("GET", url, nil) // expect
}

// Cancel is given a channel that has nothing to do with ctx.
func Renew(ctx context.Context, rt http.RoundTripper, url string, stop chan struct{}) (*http.Response, error) {
	cc := &http.Client{Transport: rt}
	req, err := http.NewRequest("POST", url, nil) // expect
	if err != nil {
		return nil, err
	}
	req.Cancel = stop
	return cc.Do(req)
}
"#,
        r#"
package app

import (
	"database/sql"
	"net/http"
	"os/exec"
)

type Store struct {
	db *sql.DB
}

func (s *Store) Handle(w http.ResponseWriter, r *http.Request) {
	rows, err := s.db.Query("select id from users") // expect
	if err != nil {
		return
	}
	defer rows.Close()
	exec.Command("notify", "users").Run() // expect
}
"#,
    ],
    pass: &[
        r#"
package app

import (
	"context"
	"database/sql"
	"net/http"
)

func Proxy(ctx context.Context, c *http.Client, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return nil, err
	}
	return c.Do(req)
}

func Count(ctx context.Context, db *sql.DB) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, "select count(*) from jobs").Scan(&n)
	return n, err
}

func Send(ctx context.Context, c *Client, url string) error {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return err
	}
	_, err = c.Do(ctx, req)
	return err
}

// The older way to bind a request to a context: the transport gives up
// when the done channel closes.
func Renew(ctx context.Context, rt http.RoundTripper, url string) (*http.Response, error) {
	cc := &http.Client{Transport: rt}
	req, err := http.NewRequest("POST", url, nil)
	if err != nil {
		return nil, err
	}
	req.Cancel = ctx.Done()
	return cc.Do(req)
}

func Legacy(db *sql.DB) error {
	_, err := db.Exec("vacuum")
	return err
}
"#,
        r#"
package pool

import "context"

type Row interface{ Scan(dest ...any) error }

// pgx style: the query methods take the context first.
type Conn interface {
	QueryRow(ctx context.Context, sql string, args ...any) Row
}

type Pool struct {
	acquire func(ctx context.Context) (Conn, error)
}

func (p *Pool) Lookup(ctx context.Context, id int) (name string, err error) {
	c, err := p.acquire(ctx)
	if err != nil {
		return "", err
	}
	err = c.QueryRow(ctx, "select name from users where id = $1", id).Scan(&name)
	return
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(ContextLessCall);
}
