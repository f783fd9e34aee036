//! GO007: a goroutine (or errgroup `Go`) per item of unbounded input.

use super::common;
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use crate::util::is_under;
use unsnarl_model::walk::exprs_in_block;
use unsnarl_model::*;

pub struct GoroutinePerItem;

pub static META: RuleMeta = RuleMeta {
    id: "GO007",
    name: "goroutine-per-item",
    category: Category::UnboundedFanout,
    severity: Severity::High,
    languages: &[Language::Go],
    summary: "A `go` statement (or errgroup `Go` without `SetLimit`) per item of a range over input of unknown size, with no semaphore or worker pool.",
    docs: r#"
A loop over a channel (a stream), or over a slice or map whose size the
code does not control (unless the goroutines provably only compute with
code of this file; an array, a count, a literal list, a slice the file
only makes at a count of its choosing (`make([]processor, n)`, not
`make([]T, len(items))`), or a field the file only fills one element at a
time at a few places outside loops has a size the code fixes), starts one goroutine per item (`go` or `g.Go` of an errgroup with no
`SetLimit`), and nothing in the loop waits for a slot first (a semaphore
channel send, `sem.Acquire`, a `Wait`). A goroutine that takes the slot
itself before its first I/O (a token, `slots <- struct{}{}`, sent on a
channel made with a buffer, also one sized at run time such as
`3*runtime.GOMAXPROCS(0)`, or `sem.Acquire`, directly or as the first thing a function of the file it
calls does, after string and path work if any; also the function the `go`
statement runs itself, `go retainedAt(ref, sem)`) is bounded too. Also left alone: a range that comes from
configuration (a config or options value, `os.Args`, a cobra/pflag flag
such as `cmd.Flags().GetStringSlice("peers")`, or a list built one element
per item of one), goroutines that each
serve a listener (`Serve`, `http.Serve`, a `serve` function value, an
accept loop; also started with an errgroup's `g.Go`), one per request the loop accepts (`for ch := range incoming
{ c, _ := ch.Accept(); go serve(c) }`), that drain one channel shared
by all of them (the loop builds a worker pool), or that live on in a
`for { select { .. } }` until told to stop, or wake on a ticker until
their item is settled (`for range ticker.C`; one worker per partition or
lease: a limit would leave some with none). Neither are a loop that starts
one goroutine and then leaves (`go refill(); break`), nor one stopper per
member the object already runs (`for _, svc := range s.services { go
func() { svc.Stop() }() }`, or `Pause`, `Kill`, `Terminate`, a destructor (`destroy`, `destructValue`), exported or
not, over the receiver's field or a list its own lookup returned, `conns
:= h.userConnections(u)`; also when the goroutine merges what the stop
returns into a map under a mutex): nothing new is opened. A literal that
only calls a function of the file (`go func(id int64) { s.keepAlive(id)
}(id)`) is judged as that function.

## Why

Concurrency then equals the input size. With ten items in development this
is fast; with a million rows, lines or messages in production it is a
million goroutines, sockets and buffers at once: memory blows up, file
descriptors run out, and the service being called sees a self-inflicted
flood.

## Example

```go
package app

func Notify(users []User) {
	for _, u := range users {
		go sendMail(u)
	}
}
```

## Fix

Bound the fan-out: `errgroup` with `SetLimit`, a semaphore channel acquired
before each `go`, or a fixed pool of workers reading a channel.

```go
package app

import "golang.org/x/sync/errgroup"

func Notify(users []User) error {
	var g errgroup.Group
	g.SetLimit(16)
	for _, u := range users {
		g.Go(func() error { return sendMail(u) })
	}
	return g.Wait()
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for GoroutinePerItem {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        // Whether the goroutine may do anything heavy: not provably pure
        // (calls that are not all in this file, or known to block).
        let goroutine_work = |call: ExprId| -> bool {
            let Some(c) = cx.call(call) else { return false };
            match cx.expr(cx.model.strip(c.func)).kind {
                ExprKind::Closure(g) => !common::provably_pure(cx, g, 3),
                _ => match cx.callee_in_file(c) {
                    Some(g) => !common::provably_pure(cx, g, 3),
                    None => {
                        common::io_call(cx, c).is_some()
                            || c.target.as_deref().is_none_or(|t| {
                                is_under(t, &cx.model.module, &['.']) || t.contains('/')
                            })
                    }
                },
            }
        };
        // One finding per loop: `if debug { go a(x) } else { go b(x) }` is
        // one fan-out.
        let mut reported_loops: Vec<StmtId> = Vec::new();
        for (i, st) in cx.model.stmts.iter().enumerate() {
            let s = StmtId(i as u32);
            let f = cx.tree.stmt_func(s);
            if common::in_test(cx, f) {
                continue;
            }
            let (span, group) = match &st.kind {
                StmtKind::Go(_) => (st.span, None),
                StmtKind::Expr(e) => match cx.call(*e) {
                    Some(c) if common::is_group_go(cx, c) && c.name == "Go" => (
                        cx.expr(*e).span,
                        c.receiver.and_then(|r| cx.model.dotted(r)),
                    ),
                    _ => continue,
                },
                _ => continue,
            };
            let Some(&lp) = common::enclosing_loops(cx, s).first() else {
                continue;
            };
            let StmtKind::For { iter, body, .. } = &cx.stmt(lp).kind else {
                continue;
            };
            if reported_loops.contains(&lp) {
                continue;
            }
            if bounded_input(cx, f, *iter)
                || waits_in_loop(cx, body, s)
                || leaves_after_starting(cx, s, lp)
            {
                continue;
            }
            if let Some(g) = &group
                && limited(cx, g)
            {
                continue;
            }
            // A stream (a channel) is unbounded by nature; for a slice or a
            // map, goroutines that provably only compute in this file are
            // left alone (their number is bounded by the cores' work).
            let stream = cx.sema.type_of(*iter) == Some("chan");
            let work = match &st.kind {
                StmtKind::Go(call) => goroutine_work(*call),
                StmtKind::Expr(e) => cx.call(*e).is_some_and(|c| {
                    c.args.iter().any(|a| match cx.expr(a.value).kind {
                        ExprKind::Closure(g) => !common::provably_pure(cx, g, 3),
                        _ => true,
                    })
                }),
                _ => false,
            };
            if !stream && !work {
                continue;
            }
            // A goroutine that first waits for a go-ahead (`<-w.start`) is
            // admitted by a scheduler.
            if let StmtKind::Go(call) = &st.kind
                && let Some(g) = goroutine_fn(cx, *call)
                && first_waits(cx, g)
            {
                continue;
            }
            // A long-lived worker per item (partition, lease): it loops on a
            // `select` until told to stop. A limit would leave items with no
            // worker at all.
            if let StmtKind::Go(call) = &st.kind
                && long_lived_worker(cx, *call)
            {
                continue;
            }
            // A teardown: one stopper per member the object already runs
            // (`for _, svc := range s.services { go func(svc) { svc.Stop()
            // }(svc) }`): nothing new is opened.
            if let StmtKind::Go(call) = &st.kind
                && stops_own_members(cx, f, *iter, *call)
            {
                continue;
            }
            // The loop builds a worker pool: each goroutine drains a channel
            // shared by all of them, so the work is bounded by their count.
            if let StmtKind::Go(call) = &st.kind
                && drains_shared_channel(cx, *call, lp)
            {
                continue;
            }
            // An accept loop over incoming requests (`for ch := range
            // chans { c, _ := ch.Accept(); go serve(c) }`, as after
            // `ln.Accept()`): one handler per accepted peer is the server.
            if unsnarl_model::walk::calls_in_block(cx.model, body)
                .into_iter()
                .any(|e| {
                    cx.call(e)
                        .is_some_and(|c| c.name == "Accept" && c.receiver.is_some())
                })
            {
                continue;
            }
            // One server per configured listener: each goroutine serves for
            // the listener's lifetime, so a limit would leave some unserved.
            if let StmtKind::Go(call) = &st.kind
                && goroutine_serves(cx, *call)
            {
                continue;
            }
            // The same through an errgroup: `g.Go(func() error { return
            // Serve(l, srv) })` per listener.
            if let StmtKind::Expr(e) = &st.kind
                && cx.call(*e).is_some_and(|c| {
                    c.args
                        .iter()
                        .any(|a| match cx.expr(cx.model.strip(a.value)).kind {
                            ExprKind::Closure(g) => serves(cx, g, 2),
                            _ => false,
                        })
                })
            {
                continue;
            }
            let what = if stream {
                "message received from the channel"
            } else {
                "item"
            };
            let input = cx.source(cx.expr(*iter).span);
            reported_loops.push(lp);
            out.push(cx.finding(
                &META,
                span,
                format!(
                    "one goroutine per {what} of `{input}`, with no limit: concurrency grows with the input, and a large input means that many goroutines, connections and buffers at once"
                ),
                match group {
                    Some(g) => format!("call `{g}.SetLimit(n)` before the loop so at most n goroutines run at once"),
                    None => "bound the fan-out: an `errgroup.Group` with `SetLimit(n)`, a semaphore channel (`sem <- struct{}{}` before `go`, `<-sem` when done), or a fixed pool of workers reading a channel".into(),
                },
            ));
        }
    }
}

/// The goroutine waits for a go-ahead before its first I/O: a statement
/// before any that does I/O receives from a channel, acquires, or takes a
/// slot of a semaphore channel (`slots <- struct{}{}` on a buffered
/// channel), or calls a function of this file that starts that way
/// (`out[i] = load(p)`, `load` taking the slot around its read). Work
/// before it that does no I/O (`path := strings.TrimSuffix(..)`, a
/// `defer`) does not matter.
fn first_waits(cx: &FileCx, g: FuncId) -> bool {
    first_waits_deep(cx, g, 1)
}

fn first_waits_deep(cx: &FileCx, g: FuncId, depth: u32) -> bool {
    for &st in &cx.func(g).body {
        if matches!(cx.stmt(st).kind, StmtKind::Defer(_)) {
            continue;
        }
        let (mut waits, mut io) = (false, false);
        unsnarl_model::walk::for_each_stmt_child(cx.model, st, &mut |ch| {
            let unsnarl_model::walk::Child::Expr(e) = ch else {
                // A nested block (`if`, a loop): judged as a whole below.
                io = true;
                return;
            };
            for x in unsnarl_model::walk::exprs_under(cx.model, e) {
                match &cx.expr(x).kind {
                    ExprKind::Recv(_) => waits = true,
                    // A token (`struct{}{}`, `true`), not a result: the
                    // send of a computed value (`errs <- st.Refresh(k)`) is
                    // the goroutine reporting back, after its work.
                    ExprKind::Send { channel, value } => {
                        let token = !unsnarl_model::walk::exprs_under(cx.model, *value)
                            .into_iter()
                            .any(|v| cx.call(v).is_some());
                        if token && slot_channel(cx, g, *channel) {
                            waits = true;
                        } else {
                            io = true;
                        }
                    }
                    ExprKind::Call(c) => {
                        if c.name == "Acquire"
                            || (depth > 0
                                && cx
                                    .callee_in_file(c)
                                    .is_some_and(|h| h != g && first_waits_deep(cx, h, depth - 1)))
                        {
                            waits = true;
                        } else if !pure_call(c) {
                            io = true;
                        }
                    }
                    _ => {}
                }
            }
        });
        if waits {
            return true;
        }
        if io {
            return false;
        }
    }
    false
}

/// A call of the standard library's string, number and path helpers, or
/// a builtin: work that cannot wait for anything.
fn pure_call(c: &Call) -> bool {
    const PURE: &[&str] = &[
        "strings.",
        "strconv.",
        "bytes.",
        "unicode",
        "path.",
        "errors.",
        "math.",
        "sort.",
        "slices.",
        "maps.",
        "fmt.Sprint",
        "fmt.Errorf",
        "path/filepath.Join",
        "path/filepath.Base",
        "path/filepath.Dir",
        "path/filepath.Ext",
        "path/filepath.Clean",
        "path/filepath.Rel",
        "path/filepath.Split",
    ];
    match c.target.as_deref() {
        Some(t) => PURE.iter().any(|p| t.starts_with(p)),
        None => {
            c.receiver.is_none()
                && matches!(
                    c.name.as_str(),
                    "len" | "cap" | "append" | "make" | "new" | "copy" | "delete" | "min" | "max"
                )
        }
    }
}

/// The goroutine of `go_call` ends in an unconditional `for { select { ..
/// } }` (it serves until a case of the `select` stops it) or in a range
/// over a ticker.
fn long_lived_worker(cx: &FileCx, go_call: ExprId) -> bool {
    let Some(g) = goroutine_fn(cx, go_call) else {
        return false;
    };
    let Some(&last) = cx.func(g).body.last() else {
        return false;
    };
    match &cx.stmt(last).kind {
        StmtKind::Loop { body } => body
            .iter()
            .any(|&s| matches!(cx.stmt(s).kind, StmtKind::Select { .. })),
        // `for range ticker.C { .. }`: a watcher that wakes up now and then
        // until its item is settled.
        StmtKind::For { iter, .. } => common::ticker_channel(cx, g, *iter),
        _ => false,
    }
}

/// The goroutine of `go_call` ranges over a channel made before the loop
/// `lp` (or a field): one of a pool of workers taking jobs from it.
fn drains_shared_channel(cx: &FileCx, go_call: ExprId, lp: StmtId) -> bool {
    let Some(g) = goroutine_fn(cx, go_call) else {
        return false;
    };
    let loop_start = cx.stmt(lp).span.start;
    cx.body_stmts(g).iter().any(|&s| {
        let StmtKind::For { iter, .. } = &cx.stmt(s).kind else {
            return false;
        };
        let ch = cx.model.strip(*iter);
        if cx.sema.type_of(ch) != Some("chan") {
            return false;
        }
        match cx.model.name_of(ch) {
            // A local of the spawning function, made before the loop.
            Some(n) => {
                let outer = cx.tree.stmt_func(lp);
                let binds = common::bindings(cx, outer, n);
                !binds.is_empty()
                    && binds
                        .iter()
                        .all(|(b, _)| cx.stmt(*b).span.end <= loop_start)
            }
            None => matches!(cx.expr(ch).kind, ExprKind::Attr { .. }),
        }
    })
}

/// The goroutine of `go_call` runs a server: it (or a function of this
/// file it calls, two levels deep) calls `Serve`/`ListenAndServe` or
/// accepts connections in a loop.
fn goroutine_serves(cx: &FileCx, go_call: ExprId) -> bool {
    // `go srv.Serve(l)`: the goroutine is the server itself.
    cx.call(go_call).is_some_and(is_serve_call)
        || goroutine_fn(cx, go_call).is_some_and(|g| serves(cx, g, 2))
}

/// `srv.Serve(l)`, `srv.ListenAndServe()` and their TLS forms,
/// `http.Serve(l, h)`, and a `serve` function value kept in a field
/// (`l.serve()`, set to `func() error { return srv.Serve(ln) }`).
fn is_serve_call(c: &Call) -> bool {
    (c.receiver.is_some()
        && matches!(
            c.name.as_str(),
            "Serve" | "ServeTLS" | "ListenAndServe" | "ListenAndServeTLS" | "serve"
        ))
        || matches!(
            c.target.as_deref(),
            Some("net/http.Serve" | "net/http.ServeTLS" | "net/http/fcgi.Serve")
        )
}

/// What the goroutine of `go_call` runs: its func literal, or the function
/// of this file it calls, also through a literal that only calls it (`go
/// func(id int64) { s.keepAlive(id) }(id)` runs what `go s.keepAlive(id)`
/// does).
fn goroutine_fn(cx: &FileCx, go_call: ExprId) -> Option<FuncId> {
    let c = cx.call(go_call)?;
    match cx.expr(cx.model.strip(c.func)).kind {
        ExprKind::Closure(g) => Some(only_call_in_file(cx, g).unwrap_or(g)),
        _ => cx.callee_in_file(c),
    }
}

/// The function of this file that a func literal's single statement calls,
/// handing it only values (`e.errHandler(s.serve(..))` also runs `serve`).
fn only_call_in_file(cx: &FileCx, g: FuncId) -> Option<FuncId> {
    let [s] = cx.func(g).body.as_slice() else {
        return None;
    };
    let StmtKind::Expr(e) = cx.stmt(*s).kind else {
        return None;
    };
    let c = cx.call(e)?;
    let plain_args = c.args.iter().all(|a| {
        unsnarl_model::walk::exprs_under(cx.model, a.value)
            .into_iter()
            .all(|x| cx.call(x).is_none())
    });
    plain_args.then(|| cx.callee_in_file(c)).flatten()
}

fn serves(cx: &FileCx, f: FuncId, depth: u32) -> bool {
    cx.with_nested(f).into_iter().any(|g| {
        cx.body_exprs(g).iter().any(|&e| {
            let Some(c) = cx.call(e) else { return false };
            if is_serve_call(c) {
                return true;
            }
            if c.name == "Accept"
                && c.receiver.is_some()
                && cx
                    .tree
                    .enclosing_stmt(e)
                    .is_some_and(|s| !common::enclosing_loops(cx, s).is_empty())
            {
                return true;
            }
            depth > 0
                && cx
                    .callee_in_file(c)
                    .is_some_and(|h| h != f && serves(cx, h, depth - 1))
        })
    })
}

/// A channel made with a buffer, here or at package level: a send on it
/// takes one of its slots. The size may be computed (`make(chan
/// struct{}, 3*runtime.GOMAXPROCS(0))`); only a literal 0 makes no slots.
fn slot_channel(cx: &FileCx, f: FuncId, ch: ExprId) -> bool {
    let Some(name) = cx.model.name_of(ch) else {
        return false;
    };
    let buffered = |c: Option<common::LocalChan>| {
        c.is_some_and(|c| {
            matches!(
                c.cap,
                common::ChanCap::Buffered(_) | common::ChanCap::Unknown
            )
        })
    };
    if buffered(common::local_chan(cx, f, name)) {
        return true;
    }
    let package = common::bindings(cx, FuncId(0), name);
    !package.is_empty()
        && package.iter().all(|(_, v)| {
            v.and_then(|v| cx.call(v)).is_some_and(|c| {
                c.target.as_deref() == Some("make")
                    && common::makes_chan(cx, c)
                    && c.positional(1)
                        .is_some_and(|n| cx.model.int_value(n).is_none_or(|n| n > 0))
            })
        })
}

/// A range over a literal, a constant, a count (`range n`, `range
/// workers`), an array (its length is in its type) or a variable bound to
/// a literal list.
fn bounded_input(cx: &FileCx, f: FuncId, iter: ExprId) -> bool {
    let iter = cx.model.strip(iter);
    match &cx.expr(iter).kind {
        ExprKind::Collection { .. } | ExprKind::Literal(_) => return true,
        ExprKind::Call(c) if matches!(c.target.as_deref(), Some("len" | "min" | "max")) => {
            return true;
        }
        _ => {}
    }
    if cx.model.int_value(iter).is_some() {
        return true;
    }
    if let Some(t) = cx.sema.type_of(iter)
        && (is_int_type(t) || is_array_type(t))
    {
        return true;
    }
    if field_type_text(cx, iter).is_some_and(is_array_type)
        || filled_by_fixed_appends(cx, iter)
        || made_at_count(cx, iter)
        || configured(cx, f, iter, 4)
    {
        return true;
    }
    let Some(name) = cx.model.name_of(iter).or_else(|| {
        cx.model
            .dotted(iter)
            .and_then(|_| match &cx.expr(iter).kind {
                ExprKind::Attr { name, .. } => Some(name.as_str()),
                _ => None,
            })
    }) else {
        return false;
    };
    let lower = name.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "n" | "concurrency" | "parallelism" | "workers"
    ) || lower.starts_with("num")
        || lower.ends_with("count")
        || lower.ends_with("workers")
        || lower.ends_with("size")
        || lower.ends_with("limit")
    {
        return true;
    }
    // A local or package variable bound to a literal collection.
    let mut cur = Some(f);
    while let Some(id) = cur {
        let binds = common::bindings(cx, id, name);
        if !binds.is_empty() {
            return binds.iter().all(|(_, v)| {
                v.is_some_and(|v| {
                    matches!(cx.expr(cx.model.strip(v)).kind, ExprKind::Collection { .. })
                })
            });
        }
        if id.0 == 0 {
            break;
        }
        cur = cx.func(id).parent;
    }
    false
}

/// A slice the file only ever makes at a length it chose, a count that
/// calls nothing but `runtime.NumCPU`/`GOMAXPROCS` (`d.processors =
/// make([]processor, nProcessors)`): a pool of that many, not one slot per
/// item of an input (`make([]result, len(items))` is as long as its input).
fn made_at_count(cx: &FileCx, iter: ExprId) -> bool {
    let Some(d) = cx.model.dotted(iter) else {
        return false;
    };
    cx.model.only_ever_assigned(&d, |v| {
        cx.call(cx.model.strip(v)).is_some_and(|c| {
            c.target.as_deref() == Some("make")
                && !common::makes_chan(cx, c)
                && c.positional(1).is_some_and(|n| {
                    unsnarl_model::walk::exprs_under(cx.model, n)
                        .into_iter()
                        .filter_map(|x| cx.call(x))
                        .all(|c| {
                            matches!(
                                c.target.as_deref(),
                                Some("runtime.NumCPU" | "runtime.GOMAXPROCS")
                            )
                        })
                })
        })
    })
}

/// The range comes from configuration: a path through a config, options
/// or settings value (`c.cfg.Endpoints`, `opts.Peers`), the command line
/// (`os.Args`, `flag.Args()`, a cobra/pflag `cmd.Flags().GetStringSlice(..)`),
/// directly, through locals built from one (`eps :=
/// c.Endpoints()`), copies (`append([]string(nil), c.cfg.Endpoints...)`)
/// or an argument-less method of the file returning one. Its length is
/// what an operator wrote: a few members, not data.
fn configured(cx: &FileCx, f: FuncId, e: ExprId, depth: u32) -> bool {
    let e = cx.model.strip(e);
    if let Some(d) = cx.model.dotted(e).or_else(|| {
        cx.call(e)
            .and_then(|c| c.target.as_deref().map(str::to_string))
    }) {
        let d = d.to_ascii_lowercase();
        if d == "os.args" || d.ends_with("flag.args") {
            return true;
        }
        if d.split(['.', '/']).any(|seg| {
            ["cfg", "config", "conf", "opts", "options", "settings"]
                .iter()
                .any(|w| seg == *w || seg.ends_with("cfg") || seg.ends_with("config"))
        }) {
            return true;
        }
    }
    // A command-line flag's value (`cmd.Flags().GetStringSlice("peers")`,
    // pflag and cobra).
    if let Some(c) = cx.call(e)
        && c.name.starts_with("Get")
        && c.receiver
            .and_then(|r| cx.call(r))
            .is_some_and(|r| matches!(r.name.as_str(), "Flags" | "PersistentFlags"))
    {
        return true;
    }
    if depth == 0 {
        return false;
    }
    match &cx.expr(e).kind {
        ExprKind::Name { id, .. } => {
            // A parameter holds whatever the caller passed.
            if cx.func(f).params.iter().any(|p| p.name == *id) {
                return false;
            }
            // Built empty, then one element per item of a configured range
            // (`for _, ep := range eps { cfgs = append(cfgs, ..) }`).
            let per_configured_item = |s: StmtId, v: ExprId| {
                cx.call(v).is_some_and(|c| {
                    c.name == "append"
                        && c.args.first().and_then(|a| cx.model.name_of(a.value))
                            == Some(id.as_str())
                        && common::enclosing_loops(cx, s).first().is_some_and(|&lp| {
                            matches!(&cx.stmt(lp).kind, StmtKind::For { iter, .. }
                                if configured(cx, f, *iter, depth - 1))
                        })
                })
            };
            let empty = |v: ExprId| matches!(&cx.expr(v).kind, ExprKind::Collection { elems, .. } if elems.is_empty());
            // `eps, err := cmd.Flags().GetStringSlice(..)`: the first result.
            let first_result = |s: StmtId| match &cx.stmt(s).kind {
                StmtKind::Assign {
                    targets,
                    value: Some(v),
                    ..
                } if targets.first().is_some_and(|&t| {
                    common::names_in_target(cx, t).first() == Some(&id.as_str())
                }) =>
                {
                    Some(*v)
                }
                _ => None,
            };
            let binds: Vec<(StmtId, Option<ExprId>)> = common::bindings(cx, f, id)
                .into_iter()
                .map(|(s, v)| (s, v.or_else(|| first_result(s))))
                .collect();
            !binds.is_empty()
                && binds.iter().any(|(_, v)| v.is_some_and(|v| !empty(v)))
                && binds.iter().all(|&(s, v)| {
                    v.is_some_and(|v| {
                        empty(v) || per_configured_item(s, v) || configured(cx, f, v, depth - 1)
                    })
                })
        }
        ExprKind::Call(c) => {
            // `append([]T(nil), src...)`: a copy of `src`.
            if c.name == "append" && c.receiver.is_none() {
                return c
                    .args
                    .iter()
                    .skip(1)
                    .all(|a| configured(cx, f, a.value, depth - 1))
                    && c.args.len() > 1;
            }
            c.args.is_empty()
                && cx.callee_in_file(c).is_some_and(|g| {
                    let returned: Vec<ExprId> = cx
                        .body_stmts(g)
                        .iter()
                        .filter_map(|&s| match cx.stmt(s).kind {
                            StmtKind::Return(Some(v)) => Some(v),
                            _ => None,
                        })
                        .collect();
                    !returned.is_empty()
                        && returned.iter().all(|&v| configured(cx, g, v, depth - 1))
                })
        }
        _ => false,
    }
}

/// A field (`j.copiers`) that the file only ever fills one element at a
/// time, at a few places outside any loop (`j.copiers = append(j.copiers,
/// f)` in `wireIn`, `wireOut`, `wireErr`): it holds at most that many
/// items. Any other assignment to it (a slice from elsewhere, an append in
/// a loop or of a spread) makes its size unknown.
fn filled_by_fixed_appends(cx: &FileCx, iter: ExprId) -> bool {
    const FEW: usize = 8;
    let ExprKind::Attr { name: field, .. } = &cx.expr(iter).kind else {
        return false;
    };
    let is_field =
        |e: ExprId| matches!(&cx.expr(e).kind, ExprKind::Attr { name, .. } if name == field);
    let mut appends = 0;
    for (i, st) in cx.model.stmts.iter().enumerate() {
        let StmtKind::Assign { targets, value, .. } = &st.kind else {
            continue;
        };
        if !targets.iter().any(|&t| is_field(t)) {
            continue;
        }
        let [_] = targets.as_slice() else {
            return false;
        };
        let Some(v) = value else { return false };
        let single_append = cx.call(*v).is_some_and(|c| {
            c.name.as_str() == "append"
                && c.receiver.is_none()
                && c.args.len() == 2
                && !c.has_spread()
                && is_field(c.args[0].value)
        });
        if !single_append || !common::enclosing_loops(cx, StmtId(i as u32)).is_empty() {
            return false;
        }
        appends += 1;
    }
    // Set in a composite literal (`&Job{copiers: list}`): from elsewhere.
    let set_in_literal = cx.model.exprs.iter().any(|e| {
        matches!(&e.kind, ExprKind::Collection { keys, .. }
            if keys.iter().any(|k| k.as_deref() == Some(field.as_str())))
    });
    !set_in_literal && (1..=FEW).contains(&appends)
}

/// The declared type, as written, of a field read as `x.f` where `x` has a
/// struct type of this file (`data [8][]int` gives `[8][]int`).
fn field_type_text<'a>(cx: &FileCx<'a>, e: ExprId) -> Option<&'a str> {
    let ExprKind::Attr { obj, name, .. } = &cx.expr(e).kind else {
        return None;
    };
    let owner = cx.sema.type_of(*obj)?.trim_start_matches('*');
    let decl = cx.model.types.iter().find(|t| t.qualname == owner)?;
    let field = decl.fields.iter().find(|f| f.name == *name)?;
    Some(field.ty.text.as_str())
}

/// `[8]T` or `*[8]T`: an array, whose length is part of its type (a
/// slice, `[]T`, is not).
fn is_array_type(t: &str) -> bool {
    t.trim_start_matches('*')
        .strip_prefix('[')
        .is_some_and(|rest| !rest.starts_with(']'))
}

fn is_int_type(t: &str) -> bool {
    matches!(
        t,
        "int"
            | "int8"
            | "int16"
            | "int32"
            | "int64"
            | "uint"
            | "uint8"
            | "uint16"
            | "uint32"
            | "uint64"
            | "uintptr"
    )
}

/// Something in the loop body waits before (or for) the goroutine: a send
/// on a channel (semaphore), `Acquire`, `Wait`, a receive.
fn waits_in_loop(cx: &FileCx, body: &Block, spawn: StmtId) -> bool {
    exprs_in_block(cx.model, body).into_iter().any(|e| {
        if cx.tree.enclosing_stmt(e) == Some(spawn) {
            return false;
        }
        match &cx.expr(e).kind {
            ExprKind::Send { .. } | ExprKind::Recv(_) => true,
            ExprKind::Call(c) => matches!(c.name.as_str(), "Acquire" | "Wait" | "TryAcquire"),
            _ => false,
        }
    }) || common::stmts_in(cx.model, body)
        .into_iter()
        .any(|s| matches!(cx.stmt(s).kind, StmtKind::Select { .. }))
}

/// `g.SetLimit(...)` somewhere in the file for this group.
fn limited(cx: &FileCx, group: &str) -> bool {
    let last = group.rsplit('.').next().unwrap_or(group);
    cx.calls_named(&["SetLimit"]).iter().any(|(_, c)| {
        c.receiver
            .and_then(|r| cx.model.dotted(r))
            .is_some_and(|d| d.rsplit('.').next() == Some(last))
    })
}

/// The loop walks a collection the method's receiver holds (`s.services`,
/// or a local its own lookup returned)
/// and the goroutine's only calls are stop-like methods (`Stop`,
/// `Shutdown`, `Close`, `Cancel`, `Pause`, `Kill`, `Terminate`, a destructor), signals (`wg.Done`), and what merges
/// a stop's result into memory (`mu.Lock()`, builtins, string helpers).
fn stops_own_members(cx: &FileCx, f: FuncId, iter: ExprId, go_call: ExprId) -> bool {
    let top = common::outermost(cx, f);
    let Some(recv) = cx.func(top).receiver.as_deref() else {
        return false;
    };
    let of_recv = |e: ExprId| {
        cx.model
            .dotted(cx.model.strip(e))
            .is_some_and(|d| d.strip_prefix(recv).is_some_and(|r| r.starts_with('.')))
    };
    // The collection itself, or a local the receiver's own lookup gave
    // (`conns := h.userConnections(user)`).
    let own = of_recv(iter)
        || cx.model.name_of(cx.model.strip(iter)).is_some_and(|n| {
            let b = common::bindings(cx, f, n);
            !b.is_empty()
                && b.iter().all(|(_, v)| {
                    v.and_then(|v| cx.call(cx.model.strip(v)))
                        .and_then(|c| c.receiver)
                        .is_some_and(|r| cx.model.name_of(r) == Some(recv))
                })
        });
    // The literal's calls, or the one call a plain `go p.destroy(res)` makes.
    let calls: Vec<&Call> = match common::go_closure(cx, go_call) {
        Some(g) => cx.body_calls(g).filter_map(|e| cx.call(e)).collect(),
        None => cx.call(go_call).into_iter().collect(),
    };
    // Exported or not (`cc.close(reason)`); also a member's destructor
    // (`handler.destroy(err)`, `p.destructResourceValue(v)`).
    let halts = |c: &Call| {
        let mut name = c.name.to_string();
        if let Some(first) = name.get_mut(..1) {
            first.make_ascii_uppercase();
        }
        common::is_stop_method(&name)
            || matches!(name.as_str(), "Cancel" | "Pause" | "Kill" | "Terminate")
            || name.starts_with("Destroy")
            || name.starts_with("Destruct")
    };
    own && calls.iter().any(|c| halts(c))
        && calls.iter().all(|c| {
            halts(c)
                || matches!(
                    c.name.as_str(),
                    "Done" | "Lock" | "Unlock" | "RLock" | "RUnlock"
                )
                || pure_call(c)
        })
}

/// The `go` statement is followed, in its own block, by a `return` or a
/// `break` of the loop (not one inside a `switch`/`select`, which leaves
/// only that): the loop finds an item and starts one goroutine for it.
fn leaves_after_starting(cx: &FileCx, s: StmtId, lp: StmtId) -> bool {
    let breaks_the_loop = !cx.tree.stmt_ancestors(s).take_while(|&a| a != lp).any(|a| {
        matches!(
            cx.stmt(a).kind,
            StmtKind::Switch { .. } | StmtKind::Select { .. }
        )
    });
    crate::util::stmts_after(cx, s)
        .iter()
        .any(|&x| match cx.stmt(x).kind {
            StmtKind::Return(_) => true,
            StmtKind::Break => breaks_the_loop,
            _ => false,
        })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[
        r#"
package app

import "net/http"

func fetchAll(urls []string) []*http.Response {
	results := make([]*http.Response, len(urls))
	done := make(chan struct{})
	for i := range results {
		go func() { // expect
			results[i], _ = http.Get(urls[i])
			done <- struct{}{}
		}()
	}
	for range urls {
		<-done
	}
	return results
}
"#,
        r#"
package app

import "sync"

type batch struct {
	items []Item
}

func (b *batch) Send() {
	var wg sync.WaitGroup
	for _, it := range b.items {
		wg.Add(1)
		go func(it Item) { // expect
			defer wg.Done()
			upload(it)
		}(it)
	}
	wg.Wait()
}
"#,
        r#"
package app

func Consume(msgs <-chan Msg) {
	for m := range msgs {
		go handle(m) // expect
	}
}
"#,
        r#"
package app

import (
	"context"

	"golang.org/x/sync/errgroup"
)

func Resize(ctx context.Context, paths []string) error {
	g, ctx := errgroup.WithContext(ctx)
	for _, p := range paths {
		g.Go(func() error { return resize(ctx, p) }) // expect
	}
	return g.Wait()
}
"#,
        r#"
package app

func ProcessAll(orders []Order) {
	for _, o := range orders {
		go process(o) // expect
	}
}
"#,
        r#"
package app

import "sync"

func Crawl(links map[string]bool) {
	var wg sync.WaitGroup
	for l := range links {
		wg.Add(1)
		go func(l string) { // expect
			defer wg.Done()
			fetch(l)
		}(l)
	}
	wg.Wait()
}
"#,
        r#"
package app

type Job struct {
	copiers []func() error
}

func (j *Job) Add(srcs []Source) {
	for _, s := range srcs {
		j.copiers = append(j.copiers, s.Copy)
	}
}

func (j *Job) Run() {
	for _, c := range j.copiers {
		go func(c func() error) { c() }(c) // expect
	}
}
"#,
        r#"
package app

import (
	"os"
	"sync"
)

var results = make(chan []byte)

func ReadAll(paths []string) {
	var wg sync.WaitGroup
	for _, p := range paths {
		wg.Add(1)
		go func(p string) { // expect
			b, _ := os.ReadFile(p)
			results <- b
			wg.Done()
		}(p)
	}
	wg.Wait()
}
"#,
        r#"
package cluster

import "context"

type Store interface {
	Keys(ctx context.Context) ([]string, error)
	Refresh(ctx context.Context, key string) error
}

func RefreshAll(ctx context.Context, st Store, cfg struct{ Workers int }) error {
	keys, err := st.Keys(ctx)
	if err != nil {
		return err
	}
	errs := make(chan error, len(keys))
	for _, k := range keys {
		go func(k string) { errs <- st.Refresh(ctx, k) }(k) // expect
	}
	for range keys {
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}
"#,
        r#"
package peers

import (
	"log"
	"net"
	"net/http"
)

type peerListener struct {
	ln    net.Listener
	serve func() error
	sync  func() error
}

type Node struct {
	Peers []*peerListener
	errc  chan error
}

func (n *Node) servePeers() {
	for _, p := range n.Peers {
		l := p.ln
		p.serve = func() error { return http.Serve(l, http.NotFoundHandler()) }
	}
	for _, pl := range n.Peers {
		go func(l *peerListener) { // expect
			log.Printf("serving peers on %s", l.ln.Addr())
			n.errc <- l.sync()
		}(pl)
	}
}
"#,
        r#"
package restore

import (
	"bytes"
	"log"
	"net/http"
	"sync"
	"time"
)

type Consumer struct{ Name string }

type cluster struct {
	mu       sync.RWMutex
	assigned map[string]bool
	api      string
}

func (c *cluster) restored(consumers []*Consumer) {
	for _, o := range consumers {
		name := o.Name
		go func() { // expect
			resp, err := http.Post(c.api+"/assign", "text/plain", bytes.NewBufferString(name))
			if err != nil {
				log.Printf("assign %q: %v", name, err)
				return
			}
			resp.Body.Close()
		}()
	}
}
"#,
        r#"
package refs

import (
	"os"
	"sync"
)

// The slot is taken only after the first read.
func scan(pkgs map[string]bool) {
	slots := make(chan struct{}, 20)
	var wg sync.WaitGroup
	for p := range pkgs {
		wg.Add(1)
		go func(p string) { // expect
			defer wg.Done()
			head, _ := os.ReadFile(p + ".head")
			slots <- struct{}{}
			os.WriteFile(p+".out", head, 0o644)
			<-slots
		}(p)
	}
	wg.Wait()
}
"#,
        r#"
package fetch

import (
	"io"
	"net/http"
	"os"
)

func save(url string, w io.Writer) {
	resp, err := http.Get(url)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	io.Copy(w, resp.Body)
}

func FetchAll(urls []string, verbose bool) {
	for _, u := range urls {
		if verbose {
			go save(u, os.Stdout) // expect
		} else {
			go save(u, io.Discard)
		}
	}
}
"#,
        r#"
package pool

import "net"

func ping(c net.Conn) { c.Write([]byte("ping")) }

func PingAll(conns []net.Conn, mode int) {
	for _, c := range conns {
		switch mode {
		case 1:
			go ping(c) // expect
			break
		}
	}
}
"#,
        r#"
package sup

import "net/http"

type Supervisor struct {
	urls []string
}

// One request per URL the object holds: that is new work per item.
func (s *Supervisor) Ping() {
	for _, u := range s.urls {
		go func(u string) { // expect
			resp, err := http.Get(u)
			if err == nil {
				resp.Body.Close()
			}
		}(u)
	}
}
"#,
        r#"
package tester

import (
	"context"
	"net/http"
	"sync"
	"time"
)

type Client interface {
	KeepAliveOnce(ctx context.Context, id int64) error
}

type leases struct {
	ctx   context.Context
	cli   Client
	wg    sync.WaitGroup
	alive map[int64]time.Time
	urls  []string
}

// One request per lease, all of them in flight at once.
func (s *leases) renewAll() {
	for id := range s.alive {
		s.wg.Add(1)
		go func(id int64) { s.renewOnce(id) }(id) // expect
	}
}

func (s *leases) renewOnce(id int64) {
	defer s.wg.Done()
	s.cli.KeepAliveOnce(s.ctx, id)
}

// Not a stopper: a new connection per URL, merged under a mutex.
func (s *leases) ProbeAll() map[string]int {
	var mu sync.Mutex
	codes := make(map[string]int)
	var wg sync.WaitGroup
	for i := range s.urls {
		wg.Add(1)
		go func(u string) { // expect
			defer wg.Done()
			resp, err := http.Get(u)
			if err != nil {
				return
			}
			resp.Body.Close()
			mu.Lock()
			codes[u] = resp.StatusCode
			mu.Unlock()
		}(s.urls[i])
	}
	wg.Wait()
	return codes
}
"#,
        r#"
package hub

import (
	"net"
	"sync"
)

type Client struct {
	id   string
	conn net.Conn
}

func (c *Client) close(reason string) error {
	_, _ = c.conn.Write([]byte(reason))
	return c.conn.Close()
}

func (c *Client) notify(reason string) error {
	_, err := c.conn.Write([]byte(reason))
	return err
}

type Hub struct {
	mu    sync.RWMutex
	users map[string][]*Client
}

func (h *Hub) userConnections(user string) []*Client {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return append([]*Client(nil), h.users[user]...)
}

func (h *Hub) disconnect(user, reason string) {
	conns := h.userConnections(user)
	for _, c := range conns {
		go func(cc *Client) { // expect
			_ = cc.notify(reason)
		}(c)
	}
}
"#,
        r#"
package app

import "sync"

type Resource struct{ conn Conn }

type Pool struct {
	mu         sync.Mutex
	idle       []*Resource
	destructWG sync.WaitGroup
}

// Each goroutine dials anew: one connection attempt per resource at once.
func (p *Pool) Close() {
	p.mu.Lock()
	for _, res := range p.idle {
		p.destructWG.Add(1)
		go p.refreshResource(res) // expect
	}
	p.idle = nil
	p.mu.Unlock()
	p.destructWG.Wait()
}

func (p *Pool) refreshResource(r *Resource) {
	defer p.destructWG.Done()
	r.conn = dial()
}

type Mux struct{ handlers map[string]Handler }

func (m *Mux) close(err error) {
	var wg sync.WaitGroup
	for _, h := range m.handlers {
		wg.Add(1)
		go func(h Handler) { // expect
			h.reload(err)
			wg.Done()
		}(h)
	}
	wg.Wait()
}
"#,
    ],
    pass: &[
        r#"
package analyze

import (
	"os"
	"path/filepath"
	"runtime"
)

var slots = make(chan struct{}, 3*runtime.GOMAXPROCS(0))

// Every walker first takes a slot of the package's semaphore.
func walk(path string, out chan<- int64) {
	entries, _ := os.ReadDir(path)
	for _, e := range entries {
		go func(p string) {
			slots <- struct{}{}
			info, err := os.Stat(p)
			if err == nil {
				out <- info.Size()
			}
			<-slots
		}(filepath.Join(path, e.Name()))
	}
}
"#,
        r#"
package web

import (
	"net"
	"net/http"

	"golang.org/x/sync/errgroup"
)

func Serve(l net.Listener, server *http.Server) error {
	return server.Serve(l)
}

// One server loop per configured listener, each for the server's lifetime.
func ServeMultiple(listeners []net.Listener, server *http.Server) error {
	errs := new(errgroup.Group)
	for _, l := range listeners {
		l := l
		errs.Go(func() error {
			return Serve(l, server)
		})
	}
	return errs.Wait()
}
"#,
        r#"
package prune

import (
	"context"
	"sync"

	"golang.org/x/sync/semaphore"
)

// Each goroutine takes a slot of the shared semaphore before its scan.
func retainedAt(ref string, out chan<- string, wg *sync.WaitGroup, sem *semaphore.Weighted) {
	sem.Acquire(context.Background(), 1)
	defer sem.Release(1)
	defer wg.Done()
	for _, oid := range scanTree(ref) {
		out <- oid
	}
}

func retainAll(refs []string, out chan<- string, wg *sync.WaitGroup, sem *semaphore.Weighted) {
	for _, ref := range refs {
		wg.Add(1)
		go retainedAt(ref, out, wg, sem)
	}
}
"#,
        r#"
package tcp

import (
	"runtime"
	"sync"
)

type processor struct{ work chan int }

func (p *processor) start(wg *sync.WaitGroup) {
	defer wg.Done()
	for w := range p.work {
		handle(w)
	}
}

type dispatcher struct {
	processors []processor
	wg         sync.WaitGroup
}

func (d *dispatcher) init(nProcessors int) {
	d.processors = make([]processor, nProcessors)
	for i := range d.processors {
		p := &d.processors[i]
		d.wg.Add(1)
		go p.start(&d.wg)
	}
}

func startCPUWorkers(out chan<- int) {
	slots := make([]int, runtime.GOMAXPROCS(0))
	for i := range slots {
		go func() { out <- shard.Scan(i) }()
	}
}
"#,
        r#"
package plugin

import "sync"

type Client interface{ Kill() }

type Manager struct {
	clients []Client
}

func (m *Manager) Start(found <-chan string) {
	for path := range found {
		m.clients = append(m.clients, launch(path))
	}
}

// One killer per plugin process the manager started.
func (m *Manager) Cleanup() {
	var wg sync.WaitGroup
	for _, c := range m.clients {
		wg.Add(1)
		go func(c Client) {
			defer wg.Done()
			c.Kill()
		}(c)
	}
	wg.Wait()
}
"#,
        r#"
package tester

import (
	"context"
	"sync"
	"time"
)

type Stresser interface {
	Close() map[string]int
	Pause() map[string]int
}

type composite struct{ stressers []Stresser }

// One stopper per stresser the composite runs; each merges what its
// stresser reports into a map under a local mutex. Pausing them is the same.
func (cs *composite) Pause() map[string]int {
	var mu sync.Mutex
	ems := make(map[string]int)
	var wg sync.WaitGroup
	wg.Add(len(cs.stressers))
	for _, s := range cs.stressers {
		go func(s Stresser) {
			defer wg.Done()
			for k, v := range s.Pause() {
				mu.Lock()
				ems[k] += v
				mu.Unlock()
			}
		}(s)
	}
	wg.Wait()
	return ems
}

func (cs *composite) Close() map[string]int {
	var mu sync.Mutex
	ems := make(map[string]int)
	var wg sync.WaitGroup
	wg.Add(len(cs.stressers))
	for i := range cs.stressers {
		go func(s Stresser) {
			defer wg.Done()
			errs := s.Close()
			for k, v := range errs {
				mu.Lock()
				ems[k] += v
				mu.Unlock()
			}
		}(cs.stressers[i])
	}
	wg.Wait()
	return ems
}

type Client interface {
	KeepAliveOnce(ctx context.Context, id int64) error
}

type leases struct {
	ctx   context.Context
	cli   Client
	wg    sync.WaitGroup
	alive map[int64]time.Time
}

// One long-lived worker per lease, started through a literal that only
// calls it.
func (s *leases) restartKeepAlives() {
	for id := range s.alive {
		s.wg.Add(1)
		go func(id int64) { s.keepAlive(id) }(id)
	}
}

func (s *leases) keepAlive(id int64) {
	defer s.wg.Done()
	for {
		select {
		case <-time.After(500 * time.Millisecond):
		case <-s.ctx.Done():
			return
		}
		s.cli.KeepAliveOnce(s.ctx, id)
	}
}
"#,
        r#"
package restore

import (
	"bytes"
	"log"
	"net/http"
	"sync"
	"time"
)

type Consumer struct{ Name string }

type cluster struct {
	mu       sync.RWMutex
	assigned map[string]bool
	api      string
}

func (c *cluster) restored(consumers []*Consumer) {
	for _, o := range consumers {
		name := o.Name
		go func() {
			ticker := time.NewTicker(time.Second)
			defer ticker.Stop()
			for range ticker.C {
				c.mu.RLock()
				ok := c.assigned[name]
				c.mu.RUnlock()
				if ok {
					return
				}
				resp, err := http.Post(c.api+"/assign", "text/plain", bytes.NewBufferString(name))
				if err != nil {
					log.Printf("assign %q: %v", name, err)
					continue
				}
				resp.Body.Close()
			}
		}()
	}
}
"#,
        r#"
package peers

import (
	"log"
	"net"
	"net/http"
)

type peerListener struct {
	ln    net.Listener
	serve func() error
	sync  func() error
}

type Node struct {
	Peers []*peerListener
	errc  chan error
}

func (n *Node) servePeers() {
	for _, p := range n.Peers {
		l := p.ln
		p.serve = func() error { return http.Serve(l, http.NotFoundHandler()) }
	}
	for _, pl := range n.Peers {
		go func(l *peerListener) {
			log.Printf("serving peers on %s", l.ln.Addr())
			n.errc <- l.serve()
		}(pl)
	}
}
"#,
        r#"
package lease

import (
	"context"
	"time"
)

type Lease struct{ ID string }

type Keeper interface {
	Renew(ctx context.Context, id string) error
}

func KeepAll(ctx context.Context, k Keeper, leases []Lease) {
	for _, l := range leases {
		go func(l Lease) {
			t := time.NewTicker(10 * time.Second)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					k.Renew(ctx, l.ID)
				}
			}
		}(l)
	}
}
"#,
        r#"
package load

import (
	"net/http"
	"sync"
)

type Target struct {
	Hosts []string
}

func Hammer(t Target, urls []string) {
	jobs := make(chan string)
	var wg sync.WaitGroup
	for _, h := range t.Hosts {
		wg.Add(1)
		go func(host string) {
			defer wg.Done()
			for u := range jobs {
				resp, err := http.Get("http://" + host + u)
				if err == nil {
					resp.Body.Close()
				}
			}
		}(h)
	}
	for _, u := range urls {
		jobs <- u
	}
	close(jobs)
	wg.Wait()
}
"#,
        r#"
package cluster

import (
	"context"
	"sync"
)

type Config struct {
	Members []string
}

type Prober interface {
	Probe(ctx context.Context, member string) error
}

type Client struct {
	mu  sync.Mutex
	cfg Config
	p   Prober
}

func (c *Client) members() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.cfg.Members...)
}

func (c *Client) Healthy(ctx context.Context) bool {
	ms := c.members()
	errs := make(chan error, len(ms))
	for _, m := range ms {
		go func(m string) { errs <- c.p.Probe(ctx, m) }(m)
	}
	for range ms {
		if <-errs == nil {
			return true
		}
	}
	return false
}
"#,
        r#"
package gateway

import (
	"log"
	"net"
	"net/http"
)

type endpoint struct {
	ln   net.Listener
	name string
}

func (e *endpoint) run(h http.Handler) error {
	return (&http.Server{Handler: h}).Serve(e.ln)
}

type Gateway struct {
	endpoints []*endpoint
}

func (g *Gateway) Start(h http.Handler) {
	for _, ep := range g.endpoints {
		go func(ep *endpoint) {
			log.Println(ep.name, ep.run(h))
		}(ep)
	}
}

type mux struct {
	srv *http.Server
	lns []net.Listener
}

func (m *mux) Start() {
	for _, ln := range m.lns {
		go m.srv.Serve(ln)
	}
}

type relay struct{ lns []net.Listener }

func (r *relay) Start() {
	for _, ln := range r.lns {
		go r.acceptAll(ln)
	}
}

func (r *relay) acceptAll(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}
"#,
        r#"
package app

import (
	"os"
	"sync"
)

var openSlots = make(chan struct{}, 8)

func ReadAll(paths []string) [][]byte {
	out := make([][]byte, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		go func(i int, p string) {
			openSlots <- struct{}{}
			defer func() {
				<-openSlots
				wg.Done()
			}()
			out[i], _ = os.ReadFile(p)
		}(i, p)
	}
	wg.Wait()
	return out
}

var diskSlots = make(chan struct{}, 8)

func load(p string) []byte {
	diskSlots <- struct{}{}
	b, _ := os.ReadFile(p)
	<-diskSlots
	return b
}

func LoadAll(paths []string) [][]byte {
	out := make([][]byte, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		go func(i int, p string) {
			out[i] = load(p)
			wg.Done()
		}(i, p)
	}
	wg.Wait()
	return out
}
"#,
        r#"
package app

import "io"

type Job struct {
	In, Out  io.ReadWriter
	src      io.ReadWriter
	copiers  []func() error
	results  chan error
}

func (j *Job) wireIn() {
	j.copiers = append(j.copiers, func() error { _, err := io.Copy(j.src, j.In); return err })
}

func (j *Job) wireOut() {
	j.copiers = append(j.copiers, func() error { _, err := io.Copy(j.Out, j.src); return err })
}

func (j *Job) Run() {
	j.wireIn()
	j.wireOut()
	j.results = make(chan error, len(j.copiers))
	for _, c := range j.copiers {
		go func(c func() error) { j.results <- c() }(c)
	}
}
"#,
        r#"
package app

import "sync"

type sections struct {
	parts [8][]byte
	all   []byte
}

// One goroutine per element of an array: as many as its type says.
func (s *sections) Compress() {
	var wg sync.WaitGroup
	for i := range s.parts {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			s.parts[i] = upload(s.parts[i])
		}(i)
	}
	wg.Wait()
}
"#,
        r#"
package app

func Consume(msgs <-chan Msg) {
	sem := make(chan struct{}, 64)
	for m := range msgs {
		sem <- struct{}{}
		go func(m Msg) {
			defer func() { <-sem }()
			handle(m)
		}(m)
	}
}
"#,
        r#"
package app

import (
	"context"

	"golang.org/x/sync/errgroup"
)

func Resize(ctx context.Context, paths []string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, p := range paths {
		g.Go(func() error { return resize(ctx, p) })
	}
	return g.Wait()
}
"#,
        r#"
package app

import "sync"

func Pool(jobs <-chan Job, workers int) {
	for i := 0; i < workers; i++ {
		go worker(jobs)
	}
	for range workers {
		go worker(jobs)
	}
	for _, name := range []string{"a", "b"} {
		go start(name)
	}
}

func RunGated(work []*Work) {
	for _, w := range work {
		go func(w *Work) {
			if !<-w.start {
				return
			}
			w.Run()
			w.end <- true
		}(w)
	}
}

func square(v int) int { return v * v }

func Squares(vals []int) []int {
	out := make([]int, len(vals))
	var wg sync.WaitGroup
	for i, v := range vals {
		wg.Add(1)
		go func(i, v int) {
			defer wg.Done()
			out[i] = square(v)
		}(i, v)
	}
	wg.Wait()
	return out
}

var shards = []string{"eu", "us"}

func Warm() {
	for _, s := range shards {
		go warm(s)
	}
}
"#,
        r#"
package agent

// One handler per channel the loop accepts: the server pattern.
func Forward(channels <-chan NewChannel, addr string) {
	for ch := range channels {
		channel, _, err := ch.Accept()
		if err != nil {
			continue
		}
		go forwardUnix(channel, addr)
	}
}
"#,
        r#"
package cli

import (
	"net"
	"sync"

	"github.com/spf13/cobra"
)

type target struct{ endpoint string }

// One probe per endpoint the operator listed on the command line.
func healthCmd(cmd *cobra.Command, args []string) {
	eps, _ := cmd.Flags().GetStringSlice("endpoints")
	targets := []*target{}
	for _, ep := range eps {
		targets = append(targets, &target{endpoint: ep})
	}
	var wg sync.WaitGroup
	for _, t := range targets {
		wg.Add(1)
		go func(t *target) {
			defer wg.Done()
			if conn, err := net.Dial("tcp", t.endpoint); err == nil {
				conn.Close()
			}
		}(t)
	}
	wg.Wait()
}
"#,
        r#"
package refs

import (
	"os"
	"strings"
	"sync"
)

func scan(pkgs map[string]bool, needle string) []string {
	slots := make(chan struct{}, 20)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var hits []string
	for p := range pkgs {
		wg.Add(1)
		go func(p string) {
			defer wg.Done()
			path := strings.TrimSuffix(p, "_test") + ".go"
			slots <- struct{}{}
			src, err := os.ReadFile(path)
			<-slots
			if err == nil && strings.Contains(string(src), needle) {
				mu.Lock()
				hits = append(hits, path)
				mu.Unlock()
			}
		}(p)
	}
	wg.Wait()
	return hits
}
"#,
        r#"
package pool

import (
	"net"
	"sync"
)

type Pool struct {
	mu    sync.Mutex
	addr  string
	conns []net.Conn
}

func (p *Pool) refill() {
	c, err := net.Dial("tcp", p.addr)
	if err != nil {
		return
	}
	p.mu.Lock()
	p.conns = append(p.conns, c)
	p.mu.Unlock()
}

// A search: one dead connection found, one refill started.
func (p *Pool) Drop(dead net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, c := range p.conns {
		if c == dead {
			p.conns[i] = p.conns[len(p.conns)-1]
			p.conns = p.conns[:len(p.conns)-1]
			go p.refill()
			break
		}
	}
}
"#,
        r#"
package sup

import "time"

type Service interface {
	Serve()
	Stop()
}

type Supervisor struct {
	services map[int]Service
	timeout  time.Duration
}

// Stops every running service at once: one stopper per member it runs.
func (s *Supervisor) Shutdown() int {
	done := make(chan int, len(s.services))
	for id, svc := range s.services {
		go func(id int, svc Service) {
			svc.Stop()
			done <- id
		}(id, svc)
	}
	left := len(s.services)
	timeout := time.After(s.timeout)
	for left > 0 {
		select {
		case <-done:
			left--
		case <-timeout:
			return left
		}
	}
	return 0
}
"#,
        r#"
package hub

import (
	"net"
	"sync"
)

type Client struct {
	id   string
	conn net.Conn
}

func (c *Client) close(reason string) error {
	_, _ = c.conn.Write([]byte(reason))
	return c.conn.Close()
}

type Hub struct {
	mu    sync.RWMutex
	users map[string][]*Client
}

func (h *Hub) userConnections(user string) []*Client {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return append([]*Client(nil), h.users[user]...)
}

func (h *Hub) disconnect(user, reason string) {
	conns := h.userConnections(user)
	for _, c := range conns {
		go func(cc *Client) {
			_ = cc.close(reason)
		}(c)
	}
}
"#,
        r#"
package app

import "sync"

type Resource struct{ conn Conn }

type Pool struct {
	mu         sync.Mutex
	idle       []*Resource
	destructWG sync.WaitGroup
}

// One destructor per resource the pool already holds: nothing new is opened.
func (p *Pool) Close() {
	p.mu.Lock()
	for _, res := range p.idle {
		p.destructWG.Add(1)
		go p.destructResource(res)
	}
	p.idle = nil
	p.mu.Unlock()
	p.destructWG.Wait()
}

func (p *Pool) destructResource(r *Resource) {
	defer p.destructWG.Done()
	r.conn.Close()
}

type Mux struct{ handlers map[string]Handler }

func (m *Mux) close(err error) {
	var wg sync.WaitGroup
	for _, h := range m.handlers {
		wg.Add(1)
		go func(h Handler) {
			h.destroy(err)
			wg.Done()
		}(h)
	}
	wg.Wait()
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(GoroutinePerItem);
}
