//! GO009: `context.Background()`/`TODO()` where a context is available.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct BackgroundContext;

pub static META: RuleMeta = RuleMeta {
    id: "GO009",
    name: "background-context",
    category: Category::ContextSevered,
    severity: Severity::Medium,
    languages: &[Language::Go],
    summary: "`context.Background()`/`context.TODO()` in a function that has a context (a `ctx` parameter or the request's), or in a helper whose callers pass one.",
    docs: r#"
A new root context (`context.Background()`, `context.TODO()`) created in a
function that already receives a `context.Context` (or an `*http.Request`),
or in a function of the file that contexts flow into from its callers.
`main`, `init` and tests may create root contexts; so may shutdown code that
runs once the request's context is already done, a func literal kept to
run later (stored in a struct or field, returned, or handed to a function
of the file that stores it or to another package's constructor, `New..`), a helper its callers only start with
`go`, cleanup on an error path that returns the error, given a fresh
root bounded right there (`if err != nil { dctx, cancel :=
context.WithTimeout(context.Background(), d); undo(dctx); return err }`:
the caller's context may be why it failed), and a helper that starts a
goroutine of its own and gives it a fresh root bounded right there (`go func() { ctx, cancel :=
context.WithTimeout(context.Background(), d) .. }()`): cleanup that has
to outlive its caller, whose context may be why it runs (cancelled). A function that sends a request it was given (`req.WithContext(..)`,
`rt.RoundTrip(req)`), or is a client's own `RoundTrip(req)`/`Do(req)`
returning an `*http.Response`, is a client, not a handler: that request's
context is not one it received. Nor is a root whose `cancel` a goroutine of the
function calls when the client goes away (`case <-closed: cancel()` with
`closed := cn.CloseNotify()`, or on a context's `Done()`): the
cancellation is carried over by hand. Nor is a root whose `cancel` the function keeps in
a field (`r.cancel = cancel`, `&pipe{cancel: cancel}`) or returns as a
closer (`return r, w, cancel`): it is the object's own "closed" signal.
Nor is a root handed to a
constructor whose object the function stores in a field (`f.svc, err =
storage.NewService(context.Background(), opts...)`): the object outlives
the call that happened to build it.

## Why

Cancellation and deadlines in Go travel only through the context. A fresh
root context in the middle of a call chain cuts it: when the client goes
away or the deadline passes, everything below keeps running, holding
connections and goroutines, and request-scoped values (trace ids,
credentials) are lost.

## Example

```go
package app

import (
	"context"
	"database/sql"
)

func Load(ctx context.Context, db *sql.DB, id int) (*sql.Rows, error) {
	return db.QueryContext(context.Background(), "select * from t where id = $1", id)
}
```

## Fix

Pass the context you were given (or `context.WithoutCancel(ctx)` for work
that must outlive the request but keep its values).

```go
package app

import (
	"context"
	"database/sql"
)

func Load(ctx context.Context, db *sql.DB, id int) (*sql.Rows, error) {
	return db.QueryContext(ctx, "select * from t where id = $1", id)
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for BackgroundContext {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) || cx.model.is_test {
            return;
        }
        for (id, c) in cx.calls_to(&["context.Background", "context.TODO"]) {
            let e = cx.expr(id);
            let which = match c.target.as_deref() {
                Some("context.Background") => "context.Background()",
                Some("context.TODO") => "context.TODO()",
                _ => continue,
            };
            let f = cx.func_of(id);
            if common::in_test(cx, f)
                || common::is_entry_point(cx, f)
                || after_done(cx, id)
                || detached_on_purpose(cx, id)
                || error_branch_cleanup(cx, id)
                || nil_ctx_default(cx, id)
            {
                continue;
            }
            if let Some(ctx) = common::ctx_in_scope(cx, f) {
                let c = ctx.expr();
                out.push(cx.finding(
                    &META,
                    e.span,
                    format!(
                        "{which} here ignores `{c}`, which {} received: cancelling the request or hitting its deadline no longer stops this work, and request values are dropped",
                        cx.func_display(common::outermost(cx, f))
                    ),
                    // `context.WithoutCancel` came with Go 1.21.
                    match common::go_version(cx) {
                        Some((1, minor)) if minor < 21 => format!(
                            "pass `{c}` instead (work that must outlive the request needs `{c}`'s values without its cancellation: `context.WithoutCancel`, from Go 1.21)"
                        ),
                        _ => format!(
                            "pass `{c}` instead (or `context.WithoutCancel({c})` for work that must outlive the request)"
                        ),
                    },
                ));
                continue;
            }
            // A helper without a context whose callers in this file have one.
            // Not when the root is made inside a goroutine the helper starts
            // and bounded there (`go func() { ctx, cancel :=
            // context.WithTimeout(context.Background(), d) .. }()`): cleanup
            // that must outlive the caller, whose context is often the
            // very reason for it (already cancelled).
            if started_with_own_deadline(cx, id, f) || in_escaping_closure(cx, f) {
                continue;
            }
            let top = common::outermost(cx, f);
            let q = &cx.func(top).qualname;
            if q.is_empty() {
                continue;
            }
            let caller = cx.model.function_ids().find(|&g| {
                g != top
                    && common::ctx_in_scope(cx, g).is_some()
                    && cx.body_exprs(g).iter().any(|&x| {
                        // `go m.unpublish(k)`: started detached on purpose,
                        // it may outlive the caller's context.
                        let started = matches!(cx.tree.expr_parent(x),
                            Parent::Stmt(s) if matches!(cx.stmt(s).kind, StmtKind::Go(_)));
                        !started
                            && cx
                                .call(x)
                                .is_some_and(|k| cx.callee_in_file(k) == Some(top))
                    })
            });
            if let Some(g) = caller {
                out.push(cx.finding(
                    &META,
                    e.span,
                    format!(
                        "{which} in {}, which {} calls with a context in hand: the caller's cancellation and deadline stop at this call",
                        cx.func_display(top),
                        cx.func_display(common::outermost(cx, g))
                    ),
                    format!(
                        "give {} a `ctx context.Context` parameter and pass the caller's context down",
                        cx.func_display(top)
                    ),
                ));
            }
        }
    }
}

/// `f` is (inside) a func literal kept to run later: what its enclosing
/// function's callers hold is gone by then.
fn in_escaping_closure(cx: &FileCx, f: FuncId) -> bool {
    cx.tree
        .func_ancestors(cx.model, f)
        .take_while(|&g| cx.func(g).kind == FnKind::Closure)
        .any(|g| common::escapes(cx, g))
}

/// Shutdown and cleanup code may start from a fresh root: a deferred
/// function, code after `<-ctx.Done()` (or in its `select` case), and
/// arguments of `Shutdown`/`Close`/`Stop` calls (directly or through a
/// `WithTimeout` built for them).
fn after_done(cx: &FileCx, e: ExprId) -> bool {
    let f = cx.func_of(e);
    // In a deferred closure.
    if cx
        .tree
        .func_ancestors(cx.model, f)
        .any(|g| match cx.tree.func_site(g) {
            Parent::Expr(site) => cx
                .tree
                .enclosing_stmt(site)
                .is_some_and(|s| matches!(cx.stmt(s).kind, StmtKind::Defer(_))),
            _ => false,
        })
    {
        return true;
    }
    if let Some(s) = cx.tree.enclosing_stmt(e)
        && matches!(cx.stmt(s).kind, StmtKind::Defer(_))
    {
        return true;
    }
    // After a wait on a Done channel earlier in the function (or in a
    // select case on it).
    let start = cx.expr(e).span.start;
    let top = common::outermost(cx, f);
    let done_before = cx.with_nested(top).into_iter().any(|g| {
        cx.body_exprs(g)
            .iter()
            .copied()
            .any(|x| is_done_call(cx, x) && cx.expr(x).span.start < start)
    }) || cx.model.stmts.iter().any(|st| {
        matches!(&st.kind, StmtKind::Select { arms, .. } if arms.iter().any(|a| {
            matches!(a.kind, ArmKind::Recv { channel, .. } if is_done_call(cx, channel))
                && a.span.start < start && a.span.end > start
        }))
    });
    if done_before {
        return true;
    }
    // Used for shutting something down.
    let mut cur = e;
    for _ in 0..4 {
        let Parent::Expr(p) = cx.tree.expr_parent(cur) else {
            break;
        };
        if let Some(c) = cx.call(p)
            && (common::is_stop_method(&c.name) || c.name == "Drain")
        {
            return true;
        }
        cur = p;
    }
    // `sctx, cancel := context.WithTimeout(context.Background(), d)` used
    // only by a shutdown call.
    if let Parent::Expr(p) = cx.tree.expr_parent(e)
        && let Some(c) = cx.call(p)
        && matches!(
            c.target.as_deref(),
            Some("context.WithTimeout" | "context.WithDeadline")
        )
        && let Some(s) = cx.tree.enclosing_stmt(p)
        && let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind
        && let Some(&t) = targets.first()
        && let Some(&name) = common::names_in_target(cx, t).first()
    {
        let uses = common::name_uses(cx, top, name);
        let shutdown_only = !uses.is_empty()
            && uses.iter().all(|&u| {
                matches!(cx.tree.expr_parent(u), Parent::Expr(q)
                    if cx.call(q).is_some_and(|c| common::is_stop_method(&c.name) || c.name == "Drain"))
                    || cx.tree.enclosing_stmt(u) == Some(s)
            });
        return shutdown_only;
    }
    false
}

/// `if ctx == nil { ctx = context.Background() }`: the default for a nil
/// context, where there is no live context to ignore.
fn nil_ctx_default(cx: &FileCx, e: ExprId) -> bool {
    let Parent::Stmt(s) = cx.tree.expr_parent(e) else {
        return false;
    };
    let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind else {
        return false;
    };
    let Some(ctx) = targets.first().and_then(|&t| cx.model.name_of(t)) else {
        return false;
    };
    cx.tree.stmt_ancestors(s).next().is_some_and(|p| {
        matches!(&cx.stmt(p).kind, StmtKind::If { cond, .. }
            if matches!(&cx.expr(*cond).kind, ExprKind::Binary { op: BinOp::Eq, left, right }
                if cx.model.name_of(*left) == Some(ctx)
                    && matches!(cx.model.literal(*right), Some(Lit::Null))))
    })
}

/// Uses of a root context that are not a severed chain: comparisons
/// (`ctx != context.Background()`), the lifetime context of a long-lived
/// object stored in a field (`c.ctx, c.cancel =
/// context.WithCancel(context.Background())`, or `f.svc, err =
/// storage.NewService(context.Background(), ..)`: the object outlives the
/// call), and a context type built around it (`&valuesOnly{Context:
/// context.Background(), ...}`).
fn detached_on_purpose(cx: &FileCx, e: ExprId) -> bool {
    let mut cur = e;
    let mut constructed = false;
    loop {
        match cx.tree.expr_parent(cur) {
            Parent::Expr(p) => match &cx.expr(p).kind {
                ExprKind::Binary {
                    op: BinOp::Eq | BinOp::NotEq,
                    ..
                } => return true,
                ExprKind::Collection {
                    kind: CollKind::Struct,
                    ..
                } => return true,
                ExprKind::Call(c)
                    if c.func != cur
                        && c.target
                            .as_deref()
                            .is_some_and(|t| t == "context.WithValue" || derives_cancel(t)) =>
                {
                    cur = p;
                }
                // A constructor (`storage.NewService(context.Background(),
                // opts...)`): judged by where the object it builds goes.
                ExprKind::Call(c) if c.func != cur && c.name.starts_with("New") => {
                    constructed = true;
                    cur = p;
                }
                _ => return false,
            },
            Parent::Stmt(s) => {
                return matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, .. }
                if targets.iter().any(|&t| {
                    let elems: Vec<ExprId> = match &cx.expr(t).kind {
                        ExprKind::Collection { elems, .. } => elems.clone(),
                        _ => vec![t],
                    };
                    elems.iter().any(|&x| matches!(cx.expr(x).kind, ExprKind::Attr { .. }))
                })) || cancel_bridged(cx, s)
                    || cancel_kept_in_field(cx, s)
                    || (constructed && product_kept_in_field(cx, s));
            }
            _ => return false,
        }
    }
}

/// `ctx, cancel := context.WithCancel(context.Background())` whose
/// `cancel` the function then stores in a field (`r.cancel = cancel`, or
/// in a struct literal it builds), or returns as the closer: the root of a
/// lifetime the object owns (background readers that `Close` stops, a
/// pipe's "closed" signal), which must outlive the call that happened to
/// start it.
fn cancel_kept_in_field(cx: &FileCx, s: StmtId) -> bool {
    let StmtKind::Assign {
        targets,
        value: Some(v),
        ..
    } = &cx.stmt(s).kind
    else {
        return false;
    };
    // The second value is a `cancel` only when a `With..` call made it.
    if !cx
        .call(cx.model.strip(*v))
        .and_then(|c| c.target.as_deref())
        .is_some_and(derives_cancel)
    {
        return false;
    }
    let Some(cancel) = targets.iter().find_map(|&t| match &cx.expr(t).kind {
        ExprKind::Collection { elems, .. } => elems.get(1).and_then(|&c| cx.model.name_of(c)),
        _ => None,
    }) else {
        return false;
    };
    kept_after(cx, s, cancel, true)
}

/// A `context` function that gives a child and its `cancel`.
fn derives_cancel(target: &str) -> bool {
    matches!(
        target,
        "context.WithCancel"
            | "context.WithTimeout"
            | "context.WithDeadline"
            | "context.WithCancelCause"
    )
}

/// `pr, pctx, done := progress.NewContext(context.Background())` whose
/// products the function then keeps in a field (`c.progressCtx = pctx`,
/// or a struct literal it builds): a long-lived object's own context.
fn product_kept_in_field(cx: &FileCx, s: StmtId) -> bool {
    let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind else {
        return false;
    };
    targets
        .iter()
        .flat_map(|&t| common::names_in_target(cx, t))
        .filter(|n| !matches!(*n, "err" | "_"))
        .any(|n| kept_after(cx, s, n, false))
}

/// The local `name`, bound at `s`, is later stored in a field (`r.f =
/// name`), put in a struct literal (`&pipe{cancel: name}`) or, when
/// `returned` counts, handed back (`return r, w, name`).
fn kept_after(cx: &FileCx, s: StmtId, name: &str, returned: bool) -> bool {
    let start = cx.stmt(s).span.start;
    let f = cx.tree.stmt_func(s);
    let is_name = |e: ExprId| cx.model.name_of(cx.model.strip(e)) == Some(name);
    let kept_in_literal = cx.body_exprs(f).iter().any(|&e| {
        cx.expr(e).span.start > start
            && matches!(&cx.expr(e).kind, ExprKind::Collection { kind: CollKind::Struct, elems, .. }
                if elems.iter().any(|&x| is_name(x)))
    });
    kept_in_literal
        || cx.body_stmts(f).iter().any(|&st| {
            cx.stmt(st).span.start > start
                && match &cx.stmt(st).kind {
                    StmtKind::Assign {
                        targets,
                        value: Some(v),
                        ..
                    } => {
                        is_name(*v)
                            && targets
                                .iter()
                                .any(|&t| matches!(cx.expr(t).kind, ExprKind::Attr { .. }))
                    }
                    StmtKind::Return(Some(v)) if returned => {
                        is_name(*v)
                            || matches!(&cx.expr(cx.model.strip(*v)).kind,
                                ExprKind::Collection { kind: CollKind::Tuple, elems, .. }
                                    if elems.iter().any(|&x| is_name(x)))
                    }
                    _ => false,
                }
        })
}

/// `ctx, cancel := context.WithCancel(context.Background())` whose
/// `cancel` a goroutine of the function calls when the client goes away
/// (`select { case <-closed: cancel() }` with `closed :=
/// cn.CloseNotify()`, or `<-r.Context().Done()`): the request's
/// cancellation is carried over by hand, the idiom from before requests
/// had contexts.
fn cancel_bridged(cx: &FileCx, s: StmtId) -> bool {
    let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind else {
        return false;
    };
    let Some(&t) = targets.first() else {
        return false;
    };
    let ExprKind::Collection { elems, .. } = &cx.expr(t).kind else {
        return false;
    };
    let Some(cancel) = elems.get(1).and_then(|&x| cx.model.name_of(x)) else {
        return false;
    };
    let made = elems.first().and_then(|&x| cx.model.name_of(x));
    let top = common::outermost(cx, cx.tree.stmt_func(s));
    let notifies = |ch: ExprId| {
        // The client's signal, not the new context's own `Done()`.
        let is_signal = |e: ExprId| {
            cx.call(cx.model.strip(e)).is_some_and(|c| {
                matches!(c.name.as_str(), "CloseNotify" | "Done")
                    && c.receiver
                        .and_then(|r| cx.model.name_of(r))
                        .is_none_or(|r| Some(r) != made)
            })
        };
        is_signal(ch)
            || cx.model.name_of(ch).is_some_and(|n| {
                common::bindings(cx, top, n)
                    .iter()
                    .any(|&(_, v)| v.is_some_and(is_signal))
            })
    };
    cx.model.function_ids().any(|g| {
        cx.func(g).kind == FnKind::Closure
            && common::outermost(cx, g) == top
            && common::go_stmt_of_closure(cx, g).is_some()
            && cx.body_calls(g).any(|e| {
                cx.call(e).is_some_and(|c| {
                    c.receiver.is_none() && cx.model.name_of(c.func) == Some(cancel)
                })
            })
            && cx.body_stmts(g).iter().any(|&st| match &cx.stmt(st).kind {
                StmtKind::Select { arms, .. } => arms
                    .iter()
                    .any(|a| matches!(a.kind, ArmKind::Recv { channel, .. } if notifies(channel))),
                _ => false,
            })
    })
}

/// Cleanup on an error path with a budget of its own: `dctx, cancel :=
/// context.WithTimeout(context.Background(), d)` inside `if err != nil {
/// .. return .. }`. The caller's context may be the very reason the call
/// failed (cancelled, past its deadline), and the undo must still run,
/// bounded by its own timeout (what GO012 asks for).
fn error_branch_cleanup(cx: &FileCx, e: ExprId) -> bool {
    // `context.WithTimeout`, or a project's own wrapper of it
    // (containerd's `timeout.WithContext(ctx, d)`).
    let bounded = matches!(cx.tree.expr_parent(e), Parent::Expr(p)
    if cx.call(p).is_some_and(|c| c.func != e && (matches!(
        c.target.as_deref(),
        Some("context.WithTimeout" | "context.WithDeadline")
    ) || c.name.contains("Timeout")
        || c.name.contains("Deadline")
        || c.target.as_deref().is_some_and(|t| t.ends_with("timeout.WithContext")))));
    if !bounded {
        return false;
    }
    let Some(s) = cx.tree.enclosing_stmt(e) else {
        return false;
    };
    cx.tree.stmt_ancestors(s).any(|a| match &cx.stmt(a).kind {
        StmtKind::If { cond, then, .. } => {
            let checks_err = unsnarl_model::walk::exprs_under(cx.model, *cond)
                .into_iter()
                .any(|x| matches!(&cx.expr(x).kind, ExprKind::Name { id, .. } if id == "err"));
            let returns = then
                .iter()
                .any(|&t| matches!(cx.stmt(t).kind, StmtKind::Return(_)));
            let inside = then
                .iter()
                .any(|&t| t == s || cx.tree.stmt_ancestors(s).any(|x| x == t));
            checks_err && returns && inside
        }
        _ => false,
    })
}

/// `context.Background()` handed straight to `WithTimeout`/`WithDeadline`
/// in a func literal run by a `go` statement.
fn started_with_own_deadline(cx: &FileCx, e: ExprId, f: FuncId) -> bool {
    let in_go = cx.func(f).kind == FnKind::Closure
        && matches!(cx.tree.func_site(f), Parent::Expr(site)
            if matches!(cx.tree.expr_parent(site), Parent::Expr(call)
                if cx.call(call).is_some_and(|c| c.func == site)
                    && matches!(cx.tree.expr_parent(call), Parent::Stmt(s)
                        if matches!(cx.stmt(s).kind, StmtKind::Go(_)))));
    in_go
        && matches!(cx.tree.expr_parent(e), Parent::Expr(p)
        if cx.call(p).is_some_and(|c| c.func != e && matches!(
            c.target.as_deref(),
            Some("context.WithTimeout" | "context.WithDeadline")
        )))
}

fn is_done_call(cx: &FileCx, e: ExprId) -> bool {
    cx.call(e)
        .is_some_and(|c| c.name == "Done" && c.args.is_empty())
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

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	user, err := s.users.Get(context.Background(), r.URL.Query().Get("id")) // expect
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	render(w, user)
}
"#,
        r#"
package app

import "context"

func publish(topic string, msg []byte) error {
	return client.Publish(context.TODO(), topic, msg) // expect
}

func Handle(ctx context.Context, ev Event) error {
	if err := validate(ctx, ev); err != nil {
		return err
	}
	return publish(ev.Topic, ev.Body)
}
"#,
        r#"
package app

import "context"

func Sync(ctx context.Context, ids []string) {
	go func() {
		refresh(context.Background(), ids) // expect
	}()
}
"#,
        r#"
package app

import (
	"context"
	"net/http"
	"time"
)

func (m *Manager) publish(ctx context.Context, k string) func() {
	m.store.Put(ctx, k)
	return func() { m.unpublish(k) }
}

func (m *Manager) Issue(ctx context.Context, k string) {
	m.unpublish(k)
}

func (m *Manager) unpublish(k string) {
	cctx, cancel := context.WithTimeout(context.Background(), time.Minute) // expect
	defer cancel()
	m.store.Delete(cctx, k)
}

func Handle(w http.ResponseWriter, r *http.Request) {
	retry(func() error {
		return load(context.Background()) // expect
	})
}
"#,
        r#"
package pg

import (
	"context"
	"net"
	"time"
)

type Conn struct {
	nc net.Conn
}

func (c *Conn) cancelRequest(ctx context.Context) error {
	var d net.Dialer
	cc, err := d.DialContext(ctx, "tcp", c.nc.RemoteAddr().String())
	if err != nil {
		return err
	}
	return cc.Close()
}

func (c *Conn) asyncClose() {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second) // expect
	defer cancel()
	c.cancelRequest(ctx)
	c.nc.Close()
}

func (c *Conn) Send(ctx context.Context, b []byte) error {
	if _, err := c.nc.Write(b); err != nil {
		c.asyncClose()
		return err
	}
	return nil
}
"#,
        r#"
package proxy

import (
	"context"
	"net/http"
	"time"
)

// A watchdog cancels after a minute, but the client going away is lost.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, in *http.Request) {
	ctx, cancel := context.WithCancel(context.Background()) // expect
	defer cancel()
	go func() {
		select {
		case <-time.After(time.Minute):
			cancel()
		}
	}()
	out := in.Clone(in.Context())
	p.forward(w, out.WithContext(ctx))
}
"#,
        r#"
package mgr

import (
	"context"
	"time"
)

type Shim interface {
	Create(ctx context.Context) error
}

func Recreate(ctx context.Context, s Shim) error {
	cctx, cancel := context.WithTimeout(context.Background(), time.Minute) // expect
	defer cancel()
	return s.Create(cctx)
}

func Retry(ctx context.Context, s Shim) error {
	if err := s.Create(ctx); err != nil {
		return s.Create(context.Background()) // expect
	}
	return nil
}
"#,
        r#"
package reader

import (
	"context"
	"net"
)

type Reader struct{ addr string }

func (r *Reader) Fetch(ctx context.Context) ([]byte, error) {
	return r.fetchOnce()
}

func (r *Reader) fetchOnce() ([]byte, error) {
	ctx, cancel := context.WithCancel(context.Background()) // expect
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", r.addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	buf := make([]byte, 512)
	n, err := c.Read(buf)
	return buf[:n], err
}
"#,
        r#"
package testutils

import (
	"context"
	"net/http"
	"time"
)

type FakeClient struct {
	Resp chan *http.Response
	Reqs chan *http.Request
}

func (fc *FakeClient) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	fc.Reqs <- req
	ctx, cancel := context.WithTimeout(context.Background(), time.Second) // expect
	defer cancel()
	select {
	case r := <-fc.Resp:
		w.WriteHeader(r.StatusCode)
	case <-ctx.Done():
		w.WriteHeader(http.StatusGatewayTimeout)
	}
}
"#,
        r#"
package drive

import "context"

func (f *Fs) refresh(ctx context.Context) error {
	svc, err := storage.NewService(context.Background(), f.opts...) // expect
	if err != nil {
		return err
	}
	return svc.Ping(ctx)
}
"#,
        r#"
package progress

import "context"

func Fetch(ctx context.Context) error {
	cctx, cancel := context.WithCancel(context.Background()) // expect
	defer cancel()
	return get(cctx)
}
"#,
    ],
    pass: &[
        r#"
package pg

import (
	"context"
	"net"
	"time"
)

type Conn struct {
	nc net.Conn
}

func (c *Conn) cancelRequest(ctx context.Context) error {
	var d net.Dialer
	cc, err := d.DialContext(ctx, "tcp", c.nc.RemoteAddr().String())
	if err != nil {
		return err
	}
	return cc.Close()
}

func (c *Conn) asyncClose() {
	go func() {
		defer c.nc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		c.cancelRequest(ctx)
	}()
}

func (c *Conn) Send(ctx context.Context, b []byte) error {
	if _, err := c.nc.Write(b); err != nil {
		c.asyncClose()
		return err
	}
	return nil
}
"#,
        r#"
package app

import (
	"context"
	"net/http"
	"time"
)

type resources struct {
	destroy func(v interface{})
}

func newResources(destroy func(v interface{})) *resources {
	return &resources{destroy: destroy}
}

func Open(ctx context.Context, dsn string) *Pool {
	p := &Pool{dsn: dsn}
	p.r = newResources(func(v interface{}) {
		cctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		v.(*Conn).Flush(cctx)
	})
	p.onIdle = func() {
		p.ping(context.Background())
	}
	return p
}

func (m *Manager) publish(ctx context.Context, k string) func() {
	m.store.Put(ctx, k)
	return func() { go m.unpublish(k) }
}

func (m *Manager) unpublish(k string) {
	cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m.store.Delete(cctx, k)
}

func (s *sender) post(req *http.Request) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req = req.WithContext(ctx)
	resp, err := s.rt.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	return err
}
"#,
        r#"
package app

import "context"

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run(ctx)
}

func init() {
	go warm(context.Background())
}
"#,
        r#"
package app

import (
	"context"
	"net/http"
	"time"
)

func Serve(ctx context.Context, srv *http.Server) error {
	go srv.ListenAndServe()
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

func Commit(ctx context.Context, tx Tx) error {
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		tx.Rollback(cctx)
	}()
	return tx.Commit(ctx)
}
"#,
        r#"
package app

import "context"

type Client struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func Dial(ctx context.Context, addr string) (*Client, error) {
	c := &Client{}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	if ctx == context.Background() {
		return c, nil
	}
	return c, connect(ctx, addr)
}

func Load(id string) (Item, error) {
	return LoadContext(context.Background(), id)
}

func LoadContext(ctx context.Context, id string) (Item, error) {
	return fetch(ctx, id)
}
"#,
        r#"
package proxy

import (
	"context"
	"net/http"
)

// The client's disconnect is carried over to the upstream request by hand.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, in *http.Request) {
	done := make(chan struct{})
	defer close(done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if cn, ok := w.(http.CloseNotifier); ok {
		closed := cn.CloseNotify()
		go func() {
			select {
			case <-closed:
				cancel()
			case <-done:
			}
		}()
	}
	out := in.Clone(in.Context())
	p.forward(w, out.WithContext(ctx))
}
"#,
        r#"
package mgr

import (
	"context"
	"fmt"
	"time"
)

type Shim interface {
	Create(ctx context.Context) error
	Delete(ctx context.Context) error
}

func Create(ctx context.Context, s Shim) error {
	if err := s.Create(ctx); err != nil {
		dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		s.Delete(dctx)
		return fmt.Errorf("create: %w", err)
	}
	return nil
}

func withCleanupTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, time.Minute)
}

func Start(ctx context.Context, s Shim) error {
	err := s.Create(ctx)
	if err != nil {
		dctx, cancel := withCleanupTimeout(context.Background())
		defer cancel()
		s.Delete(dctx)
		return err
	}
	return nil
}
"#,
        r#"
package reader

import (
	"context"
	"sync"
)

type Reader struct {
	mu      sync.Mutex
	cancel  context.CancelFunc
	started bool
	wg      sync.WaitGroup
	msgs    chan []byte
}

func (r *Reader) Fetch(ctx context.Context) ([]byte, error) {
	r.mu.Lock()
	if !r.started {
		r.started = true
		r.start([]int{0, 1, 2})
	}
	r.mu.Unlock()
	select {
	case m := <-r.msgs:
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// The readers prefetch for later calls: their lifetime is the reader's,
// ended by Close, not the first caller's.
func (r *Reader) start(partitions []int) {
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.wg.Add(len(partitions))
	for _, p := range partitions {
		go func(p int) {
			defer r.wg.Done()
			r.run(ctx, p)
		}(p)
	}
}

func (r *Reader) run(ctx context.Context, p int) {
	<-ctx.Done()
}

func (r *Reader) Close() error {
	r.cancel()
	r.wg.Wait()
	return nil
}
"#,
        r#"
package dbpool

import (
	"context"
	"time"

	"example.com/respool"
)

type Conn interface {
	Close(ctx context.Context) error
	Done() <-chan struct{}
}

// The destructor runs when the pool drops a connection, long after
// Connect's context (meant for the first dial) is gone.
func Connect(ctx context.Context, max int) (*respool.Pool, error) {
	p := respool.New(
		func(v interface{}) {
			cctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			c := v.(Conn)
			c.Close(cctx)
			select {
			case <-c.Done():
			case <-cctx.Done():
			}
			cancel()
		},
		max,
	)
	if err := p.Warm(ctx); err != nil {
		return nil, err
	}
	return p, nil
}
"#,
        r#"
package run

import (
	"context"
	"net/http"
)

type Runner struct{ url string }

// A nil ctx means Background, as callers of the context package expect.
func (r *Runner) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	req, err := http.NewRequestWithContext(ctx, "GET", r.url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
"#,
        r#"
package testutils

import (
	"context"
	"net/http"
	"time"
)

type FakeClient struct {
	Resp chan *http.Response
	Reqs chan *http.Request
}

func (fc *FakeClient) Do(req *http.Request) (*http.Response, error) {
	fc.Reqs <- req
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	select {
	case r := <-fc.Resp:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
"#,
        r#"
package drive

import "context"

func NewFs(ctx context.Context, name string) (*Fs, error) {
	f := &Fs{name: name}
	var err error
	f.svc, err = storage.NewService(context.Background(), f.opts...)
	if err != nil {
		return nil, err
	}
	return f, f.svc.Ping(ctx)
}
"#,
        r#"
package progress

import (
	"context"
	"io"
)

type reader struct {
	ctx context.Context
}

type cancelReadCloser struct {
	cancel func()
	pR     *io.PipeReader
}

func NewContext(ctx context.Context) (*reader, func()) {
	r, closer := pipe()
	go watch(ctx, r)
	return r, closer
}

func pipe() (*reader, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	r := &reader{ctx: ctx}
	return r, cancel
}

func NewCancelReadCloser(ctx context.Context, in io.ReadCloser) io.ReadCloser {
	pR, _ := io.Pipe()
	doneCtx, cancel := context.WithCancel(context.Background())
	p := &cancelReadCloser{cancel: cancel, pR: pR}
	go func() {
		select {
		case <-ctx.Done():
		case <-doneCtx.Done():
		}
	}()
	return p
}

type call struct {
	progressCtx context.Context
}

func (g *Group) Do(ctx context.Context, key string) error {
	c := g.newCall()
	return c.wait(ctx)
}

func (g *Group) newCall() *call {
	c := &call{}
	pr, pctx, closeWriter := NewContext(context.Background())
	c.progressCtx = pctx
	go drain(pr, closeWriter)
	return c
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(BackgroundContext);

    /// `context.WithoutCancel` is offered as code only where the file's Go
    /// version has it.
    #[test]
    fn without_cancel_is_offered_from_go_1_21() {
        static RULE: BackgroundContext = BackgroundContext;
        let fix = |version: &str| -> String {
            let src = format!("//go:build {version}\n\n{}", EXAMPLES.fail[0].trim_start());
            let found = crate::testing::run_example(&RULE, Language::Go, &src).0;
            assert_eq!(found.len(), 1, "{version}");
            found[0].1.fix.clone()
        };
        assert!(fix("go1.22").contains("`context.WithoutCancel(r.Context())`"));
        let old = fix("go1.20");
        assert!(
            old.contains("from Go 1.21") && !old.contains("WithoutCancel(r"),
            "{old}"
        );
    }
}
