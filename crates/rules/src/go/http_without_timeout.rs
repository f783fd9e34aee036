//! GO013: HTTP clients and dials with no timeout.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct HttpWithoutTimeout;

pub static META: RuleMeta = RuleMeta {
    id: "GO013",
    name: "http-without-timeout",
    category: Category::MissingTimeout,
    severity: Severity::High,
    languages: &[Language::Go],
    summary: "`http.Client{}` without `Timeout`, `http.DefaultClient`, `http.Get`/`Post`, or `net.Dial` with no deadline, outside tests and where no context bounds the call.",
    docs: r#"
Flags, in non-test code:

- an `http.Client{...}` literal with no `Timeout` field, unless it only
  stands in for a client the caller did not pass (`if hc == nil { hc =
  &http.Client{} }` for a parameter or an exported option field): the
  caller sets the policy by passing its own; or returned by an exported
  factory (`return &http.Client{Transport: t}`, also with an error beside
  it, as an exported field of the struct it returns, or through an
  unexported helper only such factories call), whose callers set it;
  or used only to `Do` requests bound to the function's context
  (`http.NewRequestWithContext(ctx, ..)`, `req.WithContext(ctx)`, the
  older `req.Cancel = ctx.Done()`), or kept in a field that every use in
  the file sends such requests with (`c.client = &http.Client{..}` and
  `c.client.Do(req)`);
  or whose transport limits the
  wait for the response header (`ResponseHeaderTimeout`), which bounds a
  stall without cutting off a long download; or whose transport dials
  only a Unix socket (a daemon of this machine, no remote peer);
- `http.DefaultClient` and the package-level `http.Get`/`Post`/`Head`/
  `PostForm` (which use it) in a function with no context to bound them,
  unless the default client too only stands in for one the caller did not
  pass (as above; also when the option field was first read into a local,
  `hc := o.HTTPClient`, or when the caller's client is returned first,
  `if h != nil { return h }; return http.DefaultClient`);
- `net.Dial` whose connection gets no `SetDeadline` (an exported `Dial`
  with its own parameters that returns the connection, or a struct
  embedding it, leaves that to its callers; one that wraps it in a client
  of its own hides it from them; a `Dial` beside its own `DialContext` on
  the same type leaves the budget to callers too). Dials with no remote
  peer to stall are not reported: a Unix socket to a daemon of this
  machine (`net.Dial("unix", ...)`), a connectionless network (`udp`,
  `ip`: the dial only binds a socket), or a loopback address (`127.0.0.1`,
  `localhost`, a listener's own `ln.Addr()`, also as the format of a
  `fmt.Sprintf("127.0.0.1:%d", port)` or the host of a
  `net.JoinHostPort`); nor are `http.Get`/`Post`
  of a URL on this machine (`"http://localhost:8080/x"`, also as the
  format of a `fmt.Sprintf`).

## Why

Go's default HTTP client waits forever, and so does I/O on a dialed
connection with no deadline (the connect itself ends when the kernel stops
retrying, about two minutes on Linux): a peer that accepts the connection
and then stalls, or a half-open connection, parks the goroutine for good. Each stuck request holds a goroutine and a connection;
under a slow dependency they accumulate until the service falls over.

## Example

```go
package app

import "net/http"

var client = &http.Client{}

func Fetch(url string) (*http.Response, error) {
	return client.Get(url)
}
```

## Fix

Set a total timeout on every client (and pass a context with a deadline on
each request).

```go
package app

import (
	"net/http"
	"time"
)

var client = &http.Client{Timeout: 10 * time.Second}

func Fetch(url string) (*http.Response, error) {
	return client.Get(url)
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for HttpWithoutTimeout {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) || cx.model.is_test || common::tool_build(cx) {
            return;
        }
        for (i, e) in cx.model.exprs.iter().enumerate() {
            let id = ExprId(i as u32);
            let f = cx.func_of(id);
            if common::in_test(cx, f) {
                continue;
            }
            match &e.kind {
                ExprKind::Collection {
                    ty: Some(t), keys, ..
                } if t.resolved.as_deref() == Some("net/http.Client") => {
                    // `var c *http.Client` (the front end's zero value of a
                    // declared type) is a nil pointer, not a client.
                    if keys.iter().any(|k| k.as_deref() == Some("Timeout"))
                        || t.text.starts_with('*')
                        || default_for_missing_client(cx, id)
                        || replaced_by_setter(cx, id)
                        || transport_limits_stalls(cx, cx.func_of(id), e)
                        || returned_by_factory(cx, id)
                        || sends_only_context_bound(cx, id)
                        || dials_only_unix_sockets(cx, id)
                    {
                        continue;
                    }
                    out.push(cx.finding(
                        &META,
                        e.span,
                        "this `http.Client` has no `Timeout`: a server that accepts the connection and then stalls keeps the request (and its goroutine and connection) waiting forever",
                        "set `Timeout` (a total budget for the request, body included), e.g. `&http.Client{Timeout: 10 * time.Second}`",
                    ));
                }
                ExprKind::Attr {
                    resolved: Some(r), ..
                } if r == "net/http.DefaultClient" => {
                    if common::ctx_in_scope(cx, f).is_some()
                        || compared(cx, id)
                        || default_for_missing_client(cx, id)
                        || replaced_by_setter(cx, id)
                    {
                        continue;
                    }
                    out.push(cx.finding(
                        &META,
                        e.span,
                        "`http.DefaultClient` has no timeout: a stalled server keeps this request waiting forever",
                        "use your own `http.Client{Timeout: ...}`, or send requests built with `http.NewRequestWithContext` and a context that has a deadline",
                    ));
                }
                ExprKind::Call(c) => {
                    let Some(entry) = cx.effect(c, Effect::NeedsTimeout) else {
                        continue;
                    };
                    match entry.kind.as_deref() {
                        Some("default-client") => {
                            // Reported as a missing context instead; or a
                            // request to this machine (no remote peer).
                            if common::ctx_in_scope(cx, f).is_some()
                                || c.positional(0)
                                    .is_some_and(|u| common::loopback_url(cx, f, u))
                            {
                                continue;
                            }
                        }
                        Some("dial") => {
                            if deadline_set(cx, id)
                                || thin_wrapper(cx, f)
                                || hands_conn_back(cx, f, id, c)
                                || common::no_remote_peer(cx, f, c)
                                || has_context_sibling(cx, f)
                            {
                                continue;
                            }
                        }
                        _ => continue,
                    }
                    let callee = cx.callee_display(c);
                    let short = common::short_name(&callee);
                    // The kernel gives up connecting after its SYN retries;
                    // it is the connection without a deadline that can wait
                    // for good.
                    let stall = if entry.kind.as_deref() == Some("dial") {
                        "connecting waits as long as the kernel retries (about two minutes on Linux), and the connection gets no deadline, so a peer that stalls after accepting keeps this goroutine waiting forever"
                    } else {
                        "a peer that stalls keeps this goroutine waiting forever"
                    };
                    out.push(cx.finding(
                        &META,
                        e.span,
                        format!("`{short}` {}: {stall}", entry.what),
                        entry.fix.clone(),
                    ));
                }
                _ => {}
            }
        }
    }
}

/// A local client whose only use is `client.Do(req)` with requests bound
/// to a context (`http.NewRequestWithContext(ctx, ..)`, `req =
/// req.WithContext(ctx)`) in a function that has one: the caller's context
/// bounds every request, as it does for `http.DefaultClient`. The same
/// for a client kept in a field (`c.client = &http.Client{Transport: tr}`)
/// when every use of that field in the file is such a `Do` (docker's
/// registry client streams gigabytes under its callers' contexts, which a
/// total `Timeout` would cut off).
fn sends_only_context_bound(cx: &FileCx, lit: ExprId) -> bool {
    let f = cx.func_of(lit);
    let Some(s) = cx.tree.enclosing_stmt(lit) else {
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
    let [t] = targets.as_slice() else {
        return false;
    };
    let value = common::strip_ref(cx, *v);
    if value != lit {
        return false;
    }
    let sends_bound = |u: ExprId| {
        crate::util::method_on(cx, u).is_some_and(|c| {
            c.name == "Do"
                && c.args
                    .first()
                    .and_then(|a| cx.model.name_of(a.value))
                    .is_some_and(|req| {
                        bound_to_context(cx, common::outermost(cx, cx.func_of(u)), req)
                    })
        })
    };
    if let ExprKind::Attr { name: field, .. } = &cx.expr(*t).kind {
        let uses: Vec<ExprId> = (0..cx.model.exprs.len() as u32)
            .map(ExprId)
            .filter(|&u| {
                u != *t && matches!(&cx.expr(u).kind, ExprKind::Attr { name, .. } if name == field)
            })
            .collect();
        return !uses.is_empty() && uses.iter().all(|&u| sends_bound(u));
    }
    if common::ctx_in_scope(cx, f).is_none() {
        return false;
    }
    let Some(client) = cx.model.name_of(*t) else {
        return false;
    };
    let top = common::outermost(cx, f);
    let uses: Vec<ExprId> = common::name_uses(cx, top, client)
        .into_iter()
        .filter(|&u| u != *t)
        .collect();
    !uses.is_empty() && uses.iter().all(|&u| sends_bound(u))
}

/// The client's transport dials a Unix socket and nothing else
/// (`Transport: &http.Transport{DialContext: func(ctx context.Context, _,
/// _ string) (net.Conn, error) { return d.DialContext(ctx, "unix", path)
/// }}`): it talks to a daemon of this machine, like `net.Dial("unix", ..)`,
/// with no remote peer to stall.
fn dials_only_unix_sockets(cx: &FileCx, lit: ExprId) -> bool {
    let mut dials = 0;
    for x in unsnarl_model::walk::exprs_under(cx.model, lit) {
        let ExprKind::Closure(g) = cx.expr(x).kind else {
            continue;
        };
        for h in cx.with_nested(g) {
            for call in cx.body_calls(h) {
                let Some(c) = cx.call(call) else { continue };
                let network = match c.name.as_str() {
                    "DialContext" => c.positional(1),
                    "Dial" | "DialTimeout" => c.positional(0),
                    _ => continue,
                };
                let unix = network.is_some_and(
                    |n| matches!(cx.model.literal(n), Some(Lit::Str(s)) if s.starts_with("unix")),
                );
                if !unix {
                    return false;
                }
                dials += 1;
            }
        }
    }
    dials > 0
}

/// `req, err := http.NewRequestWithContext(ctx, ..)` in `top`, or a plain
/// request given a context later (`req = req.WithContext(ctx)`, or the
/// older `req.Cancel = ctx.Done()`, which the transport honours the same
/// way).
fn bound_to_context(cx: &FileCx, top: FuncId, req: &str) -> bool {
    cx.body_stmts(top).iter().any(|&s| {
        let StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } = &cx.stmt(s).kind
        else {
            return false;
        };
        let Some(&t) = targets.first() else {
            return false;
        };
        let value = cx.call(cx.model.strip(*v));
        if common::names_in_target(cx, t).first() == Some(&req) {
            return value.is_some_and(|c| {
                c.target.as_deref() == Some("net/http.NewRequestWithContext")
                    || (c.receiver.is_some() && matches!(c.name.as_str(), "WithContext" | "Clone"))
            });
        }
        matches!(&cx.expr(t).kind, ExprKind::Attr { obj, name, .. }
            if name == "Cancel" && cx.model.name_of(*obj) == Some(req))
            && value.is_some_and(|c| c.name == "Done" && c.receiver.is_some())
    })
}

/// The client's transport bounds the wait for the server
/// (`Transport: &http.Transport{ResponseHeaderTimeout: ..}`, inline or
/// through a local): a stalled server is cut off after the header
/// timeout, while a large body may take as long as it needs (a total
/// `Timeout` would cut that off).
fn transport_limits_stalls(cx: &FileCx, f: FuncId, client: &Expr) -> bool {
    let ExprKind::Collection { elems, keys, .. } = &client.kind else {
        return false;
    };
    let limits = |e: ExprId| {
        let e = match &cx.expr(e).kind {
            ExprKind::Unary { operand, .. } => *operand,
            _ => e,
        };
        matches!(&cx.expr(e).kind, ExprKind::Collection { keys, .. }
            if keys.iter().any(|k| k.as_deref() == Some("ResponseHeaderTimeout")))
    };
    keys.iter().zip(elems).any(|(k, &v)| {
        k.as_deref() == Some("Transport")
            && (limits(v)
                || cx.model.name_of(v).is_some_and(|n| {
                    common::bindings(cx, f, n)
                        .iter()
                        .any(|(_, b)| b.is_some_and(limits))
                }))
    })
}

/// The literal stands in for a client the caller did not pass: `if hc ==
/// nil { hc = &http.Client{} }`, `if o.Client == nil { return
/// http.Client{Transport: t} }`, or `if h != nil { return h }; return
/// http.DefaultClient`. The caller picks the timeout policy by
/// passing a configured client; the library's default is theirs to
/// replace, and its requests carry the caller's context.
fn default_for_missing_client(cx: &FileCx, lit: ExprId) -> bool {
    // `&http.Client{}`, or an argument handed on (`return
    // b.Doer(http.DefaultClient)`).
    let mut e = lit;
    while let Parent::Expr(p) = cx.tree.expr_parent(e) {
        match &cx.expr(p).kind {
            ExprKind::Unary { .. } => e = p,
            ExprKind::Call(c) if c.args.iter().any(|a| a.value == e) => e = p,
            _ => return false,
        }
    }
    let Parent::Stmt(s) = cx.tree.expr_parent(e) else {
        return false;
    };
    let assigned_to = match &cx.stmt(s).kind {
        StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } if *v == e => targets.first().and_then(|&t| cx.model.dotted(t)),
        StmtKind::Return(Some(v)) if *v == e => None,
        _ => return false,
    };
    // `if c == nil { c = http.DefaultClient }`, or the early return of the
    // caller's client before it: `if c != nil { return c }; return
    // http.DefaultClient`.
    let guard = match cx.tree.stmt_ancestors(s).next().map(|a| &cx.stmt(a).kind) {
        Some(StmtKind::If { cond, then, .. }) if then.contains(&s) => {
            Some((*cond, BinOp::Eq, None))
        }
        _ => None,
    }
    .or_else(|| {
        let prev = crate::util::prev_stmt(cx, s)?;
        match &cx.stmt(prev).kind {
            StmtKind::If { cond, then, orelse } if assigned_to.is_none() && orelse.is_empty() => {
                match then.as_slice() {
                    [r] => match cx.stmt(*r).kind {
                        StmtKind::Return(Some(v)) => Some((*cond, BinOp::NotEq, Some(v))),
                        _ => None,
                    },
                    _ => None,
                }
            }
            _ => None,
        }
    });
    let Some((cond, want, returned)) = guard else {
        return false;
    };
    let ExprKind::Binary { op, left, right } = cx.expr(cond).kind else {
        return false;
    };
    if op != want {
        return false;
    }
    let (checked, null) = if matches!(cx.model.literal(right), Some(Lit::Null)) {
        (left, true)
    } else {
        (right, matches!(cx.model.literal(left), Some(Lit::Null)))
    };
    if returned.is_some_and(|r| cx.model.dotted(r) != cx.model.dotted(checked)) {
        return false;
    }
    // The caller's to set: a parameter, or an exported field (`o.Client`).
    // A private field (`s.client`) is the library's own lazily made client.
    let callers = match &cx.expr(checked).kind {
        ExprKind::Name { id, .. } => {
            cx.tree
                .func_ancestors(cx.model, cx.func_of(lit))
                .any(|f| cx.func(f).params.iter().any(|p| p.name == *id))
                || copied_from_exported_field(cx, cx.func_of(lit), id, s)
        }
        ExprKind::Attr { name, .. } => name.starts_with(|ch: char| ch.is_ascii_uppercase()),
        _ => false,
    };
    // `hc = &http.Client{}`, or for a nil parameter any slot it fills
    // (`if d == nil { b.doer = http.DefaultClient }`).
    null && callers
        && match assigned_to {
            Some(target) => {
                cx.model.dotted(checked).as_deref() == Some(target.as_str())
                    || matches!(cx.expr(checked).kind, ExprKind::Name { .. })
            }
            None => true,
        }
}

/// `name` is a local first set from an exported field (`httpClient :=
/// oa.HTTPClient`), and set otherwise only by the fallback statement
/// `fallback`: the caller's client, read from the options it filled.
fn copied_from_exported_field(cx: &FileCx, f: FuncId, name: &str, fallback: StmtId) -> bool {
    let mut sets = cx
        .body_stmts(f)
        .iter()
        .filter_map(|&st| match &cx.stmt(st).kind {
            StmtKind::Assign { targets, value, .. }
                if st != fallback && targets.iter().any(|&t| cx.model.name_of(t) == Some(name)) =>
            {
                Some(*value)
            }
            _ => None,
        });
    matches!((sets.next(), sets.next()), (Some(Some(v)), None)
        if matches!(&cx.expr(v).kind, ExprKind::Attr { name, .. }
            if name.starts_with(|ch: char| ch.is_ascii_uppercase())))
}

/// The client fills a field that a setter or an option of this file also
/// fills from its parameter (`New` sets `client: http.DefaultClient`, and
/// `func (b *Builder) Doer(d Doer) { b.client = d }`): the library's
/// default, which the caller replaces to choose the timeout policy.
fn replaced_by_setter(cx: &FileCx, lit: ExprId) -> bool {
    let mut e = lit;
    while let Parent::Expr(p) = cx.tree.expr_parent(e) {
        match &cx.expr(p).kind {
            ExprKind::Unary { .. } => e = p,
            ExprKind::Collection { elems, keys, .. } => {
                let field = elems
                    .iter()
                    .zip(keys)
                    .find(|(v, _)| **v == e)
                    .and_then(|(_, k)| k.as_deref());
                return field.is_some_and(|f| set_from_parameter(cx, f));
            }
            _ => return false,
        }
    }
    let Parent::Stmt(s) = cx.tree.expr_parent(e) else {
        return false;
    };
    match &cx.stmt(s).kind {
        StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } if *v == e => match targets.as_slice() {
            [t] => match &cx.expr(*t).kind {
                ExprKind::Attr { name, .. } => set_from_parameter(cx, name),
                _ => false,
            },
            _ => false,
        },
        _ => false,
    }
}

/// Some statement of the file assigns a parameter of its function (or of
/// a function around it, for an option's closure) to field `field`.
fn set_from_parameter(cx: &FileCx, field: &str) -> bool {
    cx.model.stmts.iter().enumerate().any(|(i, st)| {
        let StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } = &st.kind
        else {
            return false;
        };
        let [t] = targets.as_slice() else {
            return false;
        };
        if !matches!(&cx.expr(*t).kind, ExprKind::Attr { name, .. } if name == field) {
            return false;
        }
        let ExprKind::Name { id, .. } = &cx.expr(*v).kind else {
            return false;
        };
        let f = cx.tree.stmt_func(StmtId(i as u32));
        cx.tree
            .func_ancestors(cx.model, f)
            .any(|g| cx.func(g).params.iter().any(|p| p.name == *id))
    })
}

/// A function whose whole body is `return net.Dial(network, addr)` with its
/// own parameters: an API mirroring `net.Dial`, whose callers pick the
/// deadline.
fn thin_wrapper(cx: &FileCx, f: FuncId) -> bool {
    let func = cx.func(f);
    let [only] = func.body.as_slice() else {
        return false;
    };
    let StmtKind::Return(Some(v)) = cx.stmt(*only).kind else {
        return false;
    };
    cx.call(v).is_some_and(|c| passes_own_params(cx, func, c))
}

/// Every argument of `c` is a parameter of `func`, and there is one: the
/// call mirrors `net.Dial` with the caller's own values.
fn passes_own_params(cx: &FileCx, func: &Function, c: &Call) -> bool {
    !c.args.is_empty()
        && c.args.iter().all(|a| {
            cx.model
                .name_of(a.value)
                .is_some_and(|n| func.params.iter().any(|p| p.name == n))
        })
}

/// `return &http.Client{Transport: t}` from an exported function: a
/// factory, like `http.Client`'s own zero value, that hands the client to
/// callers who set their own `Timeout` or bound requests with contexts.
/// Also with an error beside it (`return &http.Client{..}, nil`) or as a
/// field of the struct it returns (`return &Client{Client:
/// &http.Client{..}}, nil`), where callers reach it just the same.
fn returned_by_factory(cx: &FileCx, lit: ExprId) -> bool {
    let mut e = lit;
    while let Parent::Expr(p) = cx.tree.expr_parent(e) {
        let passes = match &cx.expr(p).kind {
            ExprKind::Unary { .. } => true,
            ExprKind::Collection {
                kind: CollKind::Tuple,
                ..
            } => true,
            // Only an exported field: an unexported one hides the client.
            ExprKind::Collection {
                kind: CollKind::Struct,
                elems,
                keys,
                ..
            } => elems.iter().position(|&x| x == e).is_some_and(|i| {
                keys.get(i)
                    .and_then(|k| k.as_deref())
                    .is_some_and(|k| k.starts_with(|c: char| c.is_ascii_uppercase()))
            }),
            _ => false,
        };
        if !passes {
            return false;
        }
        e = p;
    }
    let Parent::Stmt(s) = cx.tree.expr_parent(e) else {
        return false;
    };
    let fid = cx.func_of(lit);
    let exported = |g: FuncId| {
        cx.func(g)
            .name
            .starts_with(|c: char| c.is_ascii_uppercase())
    };
    if !matches!(cx.stmt(s).kind, StmtKind::Return(Some(v)) if v == e) {
        return false;
    }
    if exported(fid) {
        return true;
    }
    // An unexported helper (`newClient(rt)`) whose every caller in the file
    // is an exported factory returning what it made.
    let calls: Vec<ExprId> = (0..cx.model.exprs.len() as u32)
        .map(ExprId)
        .filter(|&x| {
            cx.call(x)
                .is_some_and(|c| cx.callee_in_file(c) == Some(fid))
        })
        .collect();
    !calls.is_empty()
        && calls.iter().all(|&call| {
            let g = cx.func_of(call);
            exported(g) && returns_result_of(cx, g, call)
        })
}

/// `g` returns the value of `call` (first in its results): `return
/// newClient(rt)`, or `c := newClient(rt)` then `return c, nil`.
fn returns_result_of(cx: &FileCx, g: FuncId, call: ExprId) -> bool {
    let first = |v: ExprId| match &cx.expr(v).kind {
        ExprKind::Collection {
            kind: CollKind::Tuple,
            elems,
            ..
        } => elems.first().copied(),
        _ => Some(v),
    };
    let bound = match cx.tree.expr_parent(call) {
        Parent::Stmt(s) => match &cx.stmt(s).kind {
            StmtKind::Return(Some(v)) => return first(*v) == Some(call),
            StmtKind::Assign { targets, .. } => targets.first().and_then(|&t| cx.model.name_of(t)),
            _ => None,
        },
        _ => None,
    };
    let Some(name) = bound else { return false };
    cx.body_stmts(g).iter().any(|&r| {
        matches!(&cx.stmt(r).kind, StmtKind::Return(Some(v))
            if first(*v).and_then(|x| cx.model.name_of(x)) == Some(name))
    })
}

/// The dial sits in an exported `Dial`-style function whose file also
/// offers its `Context` form (`Dial` beside `DialContext` on the same
/// type): like `net.Dial` itself, the plain form leaves the time budget to
/// callers, who are given the context form to set one.
fn has_context_sibling(cx: &FileCx, f: FuncId) -> bool {
    let top = cx.func(common::outermost(cx, f));
    if !top.name.starts_with("Dial") {
        return false;
    }
    let sibling = format!("{}Context", top.name);
    cx.model
        .functions
        .iter()
        .any(|g| g.name == sibling && g.class == top.class)
}

/// An exported `Dial` mirroring `net.Dial` with its own parameters, that
/// returns the connection (`return &Conn{c}, nil`): its callers set the
/// deadlines (often a `DialTimeout` sits beside it).
fn hands_conn_back(cx: &FileCx, f: FuncId, dial: ExprId, c: &Call) -> bool {
    let func = cx.func(f);
    if !func.name.starts_with(|c: char| c.is_ascii_uppercase()) || !passes_own_params(cx, func, c) {
        return false;
    }
    let Parent::Stmt(s) = cx.tree.expr_parent(dial) else {
        return false;
    };
    let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind else {
        return false;
    };
    // `c, err := net.Dial(..)`, or `conn.Conn, err = net.Dial(..)` into an
    // exported field of the value returned.
    let first = targets.first().map(|&t| match &cx.expr(t).kind {
        ExprKind::Collection { elems, .. } => elems.first().copied().unwrap_or(t),
        _ => t,
    });
    let Some(conn) = first.and_then(|t| match &cx.expr(t).kind {
        ExprKind::Attr { obj, name, .. } if name.starts_with(|c: char| c.is_ascii_uppercase()) => {
            cx.model.name_of(*obj)
        }
        _ => cx.model.name_of(t),
    }) else {
        return false;
    };
    // The connection itself, or a struct embedding it (`&Conn{c}`, `Conn{Conn:
    // c}`), whose `SetDeadline` the caller can reach; not a client built on
    // it (`NewClient(c)`), which hides it.
    let is_conn = |e: ExprId| cx.model.name_of(e) == Some(conn);
    let hands_back = |v: ExprId| {
        let v = match &cx.expr(v).kind {
            ExprKind::Unary { operand, .. } => *operand,
            _ => v,
        };
        is_conn(v)
            || matches!(&cx.expr(v).kind, ExprKind::Collection { elems, keys, .. }
                if elems.iter().zip(keys.iter().chain(std::iter::repeat(&None))).any(|(&e, k)| {
                    is_conn(e)
                        && k.as_deref().is_none_or(|k| k.starts_with(|c: char| c.is_ascii_uppercase()))
                }) && (!keys.is_empty() || elems.len() == 1))
    };
    cx.body_stmts(f).iter().any(|&r| {
        matches!(&cx.stmt(r).kind, StmtKind::Return(Some(v)) if match &cx.expr(*v).kind {
            // `return &Conn{c}, nil`
            ExprKind::Collection { kind: CollKind::Tuple, elems, .. } => {
                elems.first().is_some_and(|&e| hands_back(e))
            }
            _ => hands_back(*v),
        })
    })
}

/// `c == http.DefaultClient` and similar checks are not uses.
fn compared(cx: &FileCx, e: ExprId) -> bool {
    matches!(cx.tree.expr_parent(e), Parent::Expr(p)
        if matches!(cx.expr(p).kind, ExprKind::Binary { op: BinOp::Eq | BinOp::NotEq, .. }))
}

/// `conn, err := net.Dial(...)` followed by `conn.SetDeadline`/
/// `SetReadDeadline`/`SetWriteDeadline` in the same function.
fn deadline_set(cx: &FileCx, dial: ExprId) -> bool {
    let f = cx.func_of(dial);
    let top = common::outermost(cx, f);
    cx.with_nested(top).into_iter().any(|g| {
        cx.body_exprs(g).iter().any(|&e| {
            cx.call(e)
                .is_some_and(|c| c.name.starts_with("Set") && c.name.ends_with("Deadline"))
        })
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[
        r#"
// Copyright 2012 Google, Inc. All rights reserved.

// +build ignore linux

package main

import (
	"io"
	"net/http"
	"os"
)

func main() {
	resp, err := http.Get("https://standards-oui.ieee.org/oui/oui.txt") // expect
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	io.Copy(os.Stdout, resp.Body)
}
"#,
        r#"
package ca

import "net/http"

type client struct {
	caURL string
	http  *http.Client
}

func NewClient(caURL string, tr http.RoundTripper) (*client, error) {
	return &client{
		caURL: caURL,
		http: &http.Client{ // expect
			Transport: tr,
		},
	}, nil
}
"#,
        r#"
package app

import (
	"net"
	"net/http"
)

var client = &http.Client{Transport: http.DefaultTransport} // expect

func Status(url string) (int, error) {
	resp, err := http.Get(url) // expect
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return resp.StatusCode, nil
}

func Send(req *Req) (*http.Response, error) {
	return http.DefaultClient.Do(req.HTTP) // expect
}

func Connect(addr string) (net.Conn, error) {
	return net.Dial("tcp", addr) // expect
}
"#,
        r#"
package app

import "net/http"

func fetch(url string, insecure bool) (*http.Response, error) {
	var c *http.Client
	if insecure == false {
		c = &http.Client{} // expect
	}
	return c.Get(url)
}

func (s *Server) Start() {
	if s.client == nil {
		s.client = &http.Client{Transport: &http.Transport{}} // expect
	}
}
"#,
        r#"
package netdefaults

import (
	"net"
	"net/http"
)

func pooledClient() *http.Client {
	return &http.Client{Transport: http.DefaultTransport} // expect
}

func Ping(network, address string) error {
	c, err := net.Dial(network, address) // expect
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Read(make([]byte, 1))
	return err
}
"#,
        r#"
package rpcish

import "net"

type Client struct{ conn net.Conn }

func NewClient(c net.Conn) *Client { return &Client{conn: c} }

func Dial(network, address string) (*Client, error) {
	conn, err := net.Dial(network, address) // expect
	if err != nil {
		return nil, err
	}
	return NewClient(conn), nil
}
"#,
        r#"
package peer

import (
	"context"
	"io"
	"net/http"
)

type Server struct{ rt http.RoundTripper }

func (s *Server) fetch(ctx context.Context, url string) ([]byte, error) {
	cc := &http.Client{Transport: s.rt} // expect
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := cc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}
"#,
        r#"
package lease

import (
	"context"
	"io"
	"net/http"
)

// The caller's context is never attached to the request.
func renew(ctx context.Context, url string, rt http.RoundTripper) ([]byte, error) {
	cc := &http.Client{Transport: rt} // expect
	req, err := http.NewRequest("POST", url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := cc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}
"#,
        r#"
package httpcfg

import "net/http"

func newClient(rt http.RoundTripper) *http.Client {
	return &http.Client{Transport: rt} // expect
}

// The client is used here, not handed to a caller.
func Fetch(url string, rt http.RoundTripper) (*http.Response, error) {
	c := newClient(rt)
	return c.Get(url)
}
"#,
        r#"
package app

import (
	"fmt"
	"net/http"
	"net/url"
)

func SignalCandidate(peer string, candidate string) error {
	resp, err := http.PostForm(fmt.Sprintf("http://%s/candidate", peer), url.Values{"c": {candidate}}) // expect
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
"#,
        r#"
package registry

import (
	"context"
	"net/http"
)

type Client struct {
	client *http.Client
}

func (c *Client) setup(tr *http.Transport) {
	c.client = &http.Client{Transport: tr} // expect
}

func (c *Client) Fetch(ctx context.Context, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	return c.client.Do(req)
}

func (c *Client) Ping(url string) (*http.Response, error) {
	return c.client.Get(url)
}
"#,
        r#"
package client

import (
	"context"
	"net"
	"net/http"
)

// The transport may dial a TCP address too: a remote peer can stall.
func New(network, addr string) *Client {
	hc := &http.Client{ // expect
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				if network == "unix" {
					return d.DialContext(ctx, "unix", addr)
				}
				return d.DialContext(ctx, "tcp", addr)
			},
		},
	}
	return &Client{hc: hc}
}

type Client struct{ hc *http.Client }
"#,
        r#"
package app

import "net/http"

type flow struct {
	client *http.Client
}

// A private field: the library's own client, left without a timeout.
func (f *flow) httpClient() *http.Client {
	hc := f.client
	if hc == nil {
		hc = http.DefaultClient // expect
	}
	return hc
}
"#,
    ],
    pass: &[
        r#"
package safesocket

import (
	"fmt"
	"net"
)

// The local daemon's port on the loopback interface.
func connect(port int) (net.Conn, error) {
	return net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
}

func connectHost(port string) (net.Conn, error) {
	return net.Dial("tcp", net.JoinHostPort("localhost", port))
}
"#,
        r#"
package app

import "net/http"

type Flow struct {
	HTTPClient *http.Client
}

// The default client stands in for the one the caller did not set.
func (f *Flow) client() *http.Client {
	hc := f.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	return hc
}

func ClientOr(h *http.Client) *http.Client {
	if h != nil {
		return h
	}
	return http.DefaultClient
}
"#,
        r#"
package client

import (
	"context"
	"net"
	"net/http"
)

// New talks to the daemon's socket on this machine.
func New(socketPath string) *Client {
	hc := &http.Client{
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", socketPath)
			},
		},
	}
	return &Client{hc: hc}
}

type Client struct{ hc *http.Client }
"#,
        r#"
// Copyright 2012 Google, Inc. All rights reserved.

// +build ignore

// This binary pulls the list of known MAC prefixes and writes them out.
package main

import (
	"io"
	"net/http"
	"os"
)

func main() {
	resp, err := http.Get("https://standards-oui.ieee.org/oui/oui.txt")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	io.Copy(os.Stdout, resp.Body)
}
"#,
        r#"
package ca

import "net/http"

type Client struct {
	CaURL  string
	Client *http.Client
}

func Bootstrap(t http.RoundTripper) (*http.Client, error) {
	return &http.Client{
		Transport: t,
	}, nil
}

func NewClient(caURL string, tr http.RoundTripper) (*Client, error) {
	return &Client{
		CaURL: caURL,
		Client: &http.Client{
			Transport: tr,
		},
	}, nil
}
"#,
        r#"
package netdefaults

import (
	"net"
	"net/http"
	"time"
)

// PooledClient returns a client with its own transport; like http.Client's
// zero value it has no overall Timeout: callers set it.
func PooledClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{TLSHandshakeTimeout: 10 * time.Second},
	}
}

type Conn struct{ net.Conn }

func Dial(network, address string) (*Conn, error) {
	c, err := net.Dial(network, address)
	if err != nil {
		return nil, err
	}
	return &Conn{c}, nil
}

func DialAgain(network, address string) (conn *Conn, err error) {
	conn = new(Conn)
	conn.Conn, err = net.Dial(network, address)
	if err != nil {
		return nil, err
	}
	return conn, nil
}
"#,
        r#"
package fetchkit

import "net/http"

type Sender interface {
	Do(*http.Request) (*http.Response, error)
}

type Fetcher struct {
	sender Sender
	base   string
}

func NewFetcher(base string) *Fetcher {
	return &Fetcher{sender: http.DefaultClient, base: base}
}

func (f *Fetcher) WithHTTPClient(hc *http.Client) *Fetcher {
	if hc == nil {
		return f.WithSender(http.DefaultClient)
	}
	return f.WithSender(hc)
}

func (f *Fetcher) WithSender(s Sender) *Fetcher {
	f.sender = s
	return f
}

type Probe struct {
	http *http.Client
}

type ProbeOption func(*Probe)

func UsingClient(c *http.Client) ProbeOption {
	return func(p *Probe) { p.http = c }
}

func NewProbe(opts ...ProbeOption) *Probe {
	p := &Probe{http: &http.Client{}}
	for _, o := range opts {
		o(p)
	}
	return p
}
"#,
        r#"
//go:build generate

package main

import (
	"net/http"
	"os"
)

func main() {
	res, _ := http.Get(os.Args[1])
	res.Body.Close()
}
"#,
        r#"
package app

import (
	"net"
	"net/http"
	"time"
)

func newBenchClient(header time.Duration) *http.Client {
	tr := &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		ResponseHeaderTimeout: header,
	}
	return &http.Client{Transport: tr}
}

type Builder struct {
	doer Doer
}

func (b *Builder) WithDoer(d Doer) *Builder {
	if d == nil {
		b.doer = http.DefaultClient
	} else {
		b.doer = d
	}
	return b
}
"#,
        r#"
package app

import "net/http"

type Client struct {
	*http.Client
}

func UseClient(hc *http.Client) func(*Client) {
	return func(c *Client) {
		if hc == nil {
			hc = &http.Client{}
		}
		c.Client = hc
	}
}

type Options struct {
	Client *http.Client
}

func (o *Options) client() http.Client {
	if o.Client == nil {
		return http.Client{Transport: defaultTransport}
	}
	return *o.Client
}
"#,
        r#"
package app

import "net"

// Unix sockets to daemons of this machine answer or refuse at once.
func localSyslog() (net.Conn, error) {
	logTypes := []string{"unixgram", "unix"}
	for _, network := range logTypes {
		if conn, err := net.Dial(network, "/dev/log"); err == nil {
			return conn, nil
		}
	}
	return net.Dial("unix", "/var/run/agent.sock")
}

// UDP has no handshake: the dial binds a socket and returns.
func metrics(addr string) (net.Conn, error) {
	const network = "udp"
	return net.Dial(network, addr)
}

// The listener this code just opened on the loopback interface.
func selfCheck() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	addr := ln.Addr().String()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	return conn.Close()
}

func probe() (net.Conn, error) {
	return net.Dial("tcp", "localhost:8125")
}
"#,
        r#"
package app

import (
	"context"
	"net"
	"net/http"
	"time"
)

var client = &http.Client{Timeout: 5 * time.Second}

func Status(ctx context.Context, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return resp.StatusCode, nil
}

func Connect(addr string) (net.Conn, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	return conn, nil
}

// Dial mirrors net.Dial: callers choose the deadline.
func Dial(network, addr string) (net.Conn, error) {
	return net.Dial(network, addr)
}

func Timed(addr string) (net.Conn, error) {
	return net.DialTimeout("tcp", addr, 3*time.Second)
}
"#,
        r#"
// file: app/client_test.go
package app

import (
	"net/http"
	"testing"
)

func TestGet(t *testing.T) {
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}
"#,
        r#"
package peer

import (
	"context"
	"io"
	"net/http"
)

type Server struct{ rt http.RoundTripper }

func (s *Server) fetch(ctx context.Context, url string) ([]byte, error) {
	cc := &http.Client{Transport: s.rt}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req = req.WithContext(ctx)
	resp, err := cc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}
"#,
        r#"
package lease

import (
	"context"
	"io"
	"net/http"
)

func renew(ctx context.Context, url string, rt http.RoundTripper) ([]byte, error) {
	cc := &http.Client{Transport: rt}
	req, err := http.NewRequest("POST", url, nil)
	if err != nil {
		return nil, err
	}
	req.Cancel = ctx.Done()
	resp, err := cc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}
"#,
        r#"
package httpcfg

import "net/http"

func newClient(rt http.RoundTripper) *http.Client {
	return &http.Client{Transport: rt}
}

// Callers bound each request with their own context.
func NewClientFromConfig(follow bool, rt http.RoundTripper) (*http.Client, error) {
	c := newClient(rt)
	if !follow {
		c.CheckRedirect = func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}
	}
	return c, nil
}
"#,
        r#"
package relay

import (
	"context"
	"net"
)

type Dialer struct{ ProxyAddr string }

func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, "tcp", d.ProxyAddr)
	if err != nil {
		return nil, err
	}
	return d.handshake(ctx, c, address)
}

// Dial connects through the relay. Deprecated: use DialContext.
func (d *Dialer) Dial(network, address string) (net.Conn, error) {
	c, err := net.Dial("tcp", d.ProxyAddr)
	if err != nil {
		return nil, err
	}
	return d.handshake(context.Background(), c, address)
}
"#,
        r#"
package app

import (
	"fmt"
	"net/http"
	"net/url"
)

// The twin process of the demo listens on this machine: no remote peer.
func SignalCandidate(port int, candidate string) error {
	resp, err := http.PostForm(fmt.Sprintf("http://localhost:%d/candidate", port), url.Values{"c": {candidate}})
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
"#,
        r#"
package registry

import (
	"context"
	"net/http"
)

type Client struct {
	client *http.Client
}

func (c *Client) setup(tr *http.Transport) {
	c.client = &http.Client{Transport: tr}
}

func (c *Client) Fetch(ctx context.Context, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	return c.client.Do(req)
}

func (c *Client) Upload(ctx context.Context, url string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPut, url, body)
	if err != nil {
		return nil, err
	}
	req = req.WithContext(ctx)
	return c.client.Do(req)
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(HttpWithoutTimeout);

    /// A dial's connect is bounded by the kernel; what waits for good is the
    /// connection without a deadline, and the message says so.
    #[test]
    fn a_dial_is_not_said_to_connect_forever() {
        static RULE: HttpWithoutTimeout = HttpWithoutTimeout;
        let src = "package app\n\nimport \"net\"\n\nfunc Ping(addr string) error {\n\tc, err := net.Dial(\"tcp\", addr)\n\tif err != nil {\n\t\treturn err\n\t}\n\t_, err = c.Write([]byte(\"ping\"))\n\treturn err\n}\n";
        let found = crate::testing::messages(&RULE, Language::Go, src);
        let m = crate::testing::message_with(&found, "connects with no timeout");
        assert!(
            m.contains("about two minutes") && m.contains("no deadline"),
            "{m}"
        );
    }
}
