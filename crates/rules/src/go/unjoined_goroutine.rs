//! GO001: a goroutine nobody joins and whose failures reach nobody.

use super::common::{self, ChanUse};
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::{self, Visitor, walk_block};
use unsnarl_model::*;

pub struct UnjoinedGoroutine;

pub static META: RuleMeta = RuleMeta {
    id: "GO001",
    name: "unjoined-goroutine",
    category: Category::OrphanTask,
    severity: Severity::High,
    languages: &[Language::Go],
    summary: "A `go` statement starts a goroutine that does I/O, signals no WaitGroup, channel or errgroup, and reports its errors to nobody.",
    docs: r#"
A goroutine started with `go` that does I/O (a network, database or file
call, or a call named like one; reading a property of a JavaScript value in
a WebAssembly program, `js.Global().Get("document")`, is not, nor is a
function named like I/O, `notifyRequest`, that only hands values to
callbacks returning nothing, a field `onRequest func(Args)`) and whose body (a func literal, or a function of
the scanned file) has no way to tell anyone it finished or failed: no
`wg.Done()`, no send on or close of a channel, no `recover()`, and no
handling of the errors it produces (they are discarded, not logged,
returned on a channel or handed to an error callback the function was
given, `onErr(srv.Serve(l))`, or configured on the object, `cb :=
c.Opts.AsyncErrorCB; cb(c, err)`). A function of another file started
right after a `wg.Add(n)` that counts it (`wg.Add(2); go watch(c); go
readLoop(c)`) is taken to call `Done`. A goroutine per accepted connection that
closes it (`conn, _ := ln.Accept(); go func() { serve(conn);
conn.Close() }()`, also through a value wrapping it, `go
s.handleConn(newConn(c, s))` with a `handleConn` whose deferred cleanup
closes it) ends with its connection and is not reported; nor is
a goroutine working on a connection it is handed that its
owner closes (the spawning function or a cleanup closure it returns calls
`Close` on it, or a method closes every element of the field it is kept
in, or that a method of the type closes when the goroutine works on
fields of the receiver: `go io.Copy(r.in, r.out)` with a `stop` closing
`r.in` and `r.out`), or, for a goroutine looping until its I/O fails (`io.Copy` is such
a loop: one half of a proxy), one it captures or
a value built from it (`f := &framer{conn: c}`): it ends when the
connection does. A goroutine pumping a connection it was handed (a
parameter, typed like a connection or a stream, of a function around the
`go`: `s ssh.Session`, `stream *Stream`, `net.Conn`) with `io.Copy` or with
a loop that returns on an error ends when whoever handed it closes it, and
is not reported either; nor is one that closes what it was handed on its
way out (`io.Copy(stream, stream); stream.Close()`, a read loop under
`defer h.sess.Close()`): every other user of the connection sees it end.
A loop that ignores its write errors (`for { conn.Write(ping);
time.Sleep(d) }`) never ends and is still reported. Nor is a goroutine with no loop of its own writing to or reading from
a command's pipe (`stdin, _ := cmd.StdinPipe(); go func() { defer
stdin.Close(); stdin.Write(data) }()`) when the function then waits for
the command (`cmd.Run()`, `Wait`, `Output`, `CombinedOutput`): waiting
closes the pipes once the command exits, so its I/O ends there. Nor is
`go io.Copy(os.Stderr, stderr)` of a command's pipe (`cmd.StderrPipe()`,
`StdoutPipe()`) to this process's own output: it ends when the child
exits, and a failed write to our own stderr has nowhere better to go. Nor is a daemon the package starts in `init()` that
loops for the life of the process (`for range ticker.C { flush() }`), or
a server that `main` starts, directly or through a helper of the file
only it calls: the process
exiting is its shutdown. Finite work started by `main` is still reported.
Goroutines of tests are left alone: anything a `_test.go` file starts (a
`Test` function, a helper, a fixture server its `init()` starts, a Ginkgo
spec) dies with the test binary, and no shutdown waits for it.

## Why

Nothing waits for the goroutine, so the program cannot know when its work is
done or make shutdown wait for it; its errors are silently dropped; a panic
in it kills the whole process with no request context. Under load such
goroutines accumulate when they block.

## Example

```go
package app

import "net/http"

func Start() {
	go http.ListenAndServe(":8080", nil)
}
```

## Fix

Join it (errgroup, WaitGroup) or report its result on a channel or to a
logger. A goroutine that runs until shutdown (a server, an endless loop)
cannot be waited for right away: give its owner a way to stop it and a
done channel or WaitGroup to wait on after stopping it; the finding's fix
says which of the two it found.

```go
package app

import (
	"log"
	"net/http"
)

func Start() {
	go func() {
		if err := http.ListenAndServe(":8080", nil); err != nil {
			log.Printf("http server stopped: %v", err)
		}
	}()
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for UnjoinedGoroutine {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) {
            return;
        }
        for (i, s) in cx.model.stmts.iter().enumerate() {
            let StmtKind::Go(call_expr) = s.kind else {
                continue;
            };
            let Some(c) = cx.call(call_expr) else {
                continue;
            };
            // A goroutine left behind by a test (a test function, a helper,
            // a fixture server of a `_test.go` file) dies with the test
            // binary; production code is what matters. (Test functions of
            // other files, such as Ginkgo specs, are told apart by name.)
            if cx.model.is_test
                || common::in_test_func(cx, cx.func_of(call_expr))
                || common::in_test_helper(cx, cx.func_of(call_expr))
            {
                continue;
            }
            // What the goroutine runs: a func literal, a function of this
            // file, or a callee we only know by name. Function values
            // (`go fn()`) are not judged.
            let (signals, io, body) = match cx.expr(cx.model.strip(c.func)).kind {
                ExprKind::Closure(f) => (func_signals(cx, f), common::does_io(cx, f, 3), Some(f)),
                ExprKind::Name { resolved: None, .. } => continue,
                ExprKind::Name { .. } | ExprKind::Attr { .. } => match cx.callee_in_file(c) {
                    Some(f) => (func_signals(cx, f), common::does_io(cx, f, 3), Some(f)),
                    None => (
                        named_goroutine(cx, c) || counted_by_add(cx, StmtId(i as u32)),
                        common::io_call(cx, c),
                        None,
                    ),
                },
                _ => continue,
            };
            if signals
                || package_daemon(cx, call_expr, body)
                || process_lifetime_server(cx, call_expr, c, body)
                || connection_scoped(cx, call_expr, c)
                || ends_with_a_closed_connection(cx, call_expr, c)
                || owner_closes_its_fields(cx, call_expr, c)
                || pumps_a_handed_connection(cx, call_expr, c)
                || feeds_waited_command(cx, call_expr, c)
                || forwards_command_output(cx, call_expr, c)
            {
                continue;
            }
            // Goroutines that do no I/O (computations, bookkeeping, runtime
            // daemons) are not reported: the rule is about lost work and
            // lost errors.
            let Some(io) = io else { continue };
            out.push(cx.finding(
                &META,
                s.span,
                format!(
                    "this goroutine does I/O ({io}) but is joined by nothing (no WaitGroup, errgroup or channel signals its end) and its errors and panics reach nobody: the program cannot wait for it on shutdown, and its failures vanish"
                ),
                if serves(cx, c, body) {
                    "it runs until shutdown, so a `Wait` right after it would block: give its owner a way to stop it (`Shutdown`/`Close`, a context) and a done channel or WaitGroup to wait on after stopping it, and pass its error to a logger or an error channel the owner reads"
                } else {
                    "run it in an `errgroup.Group` (`g.Go(func() error {...})` + `g.Wait()`), or `wg.Add(1)` before `go` with `defer wg.Done()` inside, and send its error on a channel or log it"
                },
            ));
        }
    }
}

/// A daemon the package starts in `init()` that runs for the life of the
/// process (`for { .. }`, `for range ticker.C { flush() }`): there is no
/// owner to join it, and the program drains its work another way on exit.
fn package_daemon(cx: &FileCx, go_call: ExprId, body: Option<FuncId>) -> bool {
    let outer = cx.func(common::outermost(cx, cx.func_of(go_call)));
    outer.name == "init" && outer.receiver.is_none() && body.is_some_and(|f| endless_loop(cx, f))
}

/// A server started for the life of the process by `main`, directly or
/// through a helper of the file that only it calls: the process exiting is
/// its shutdown, and a failure to listen is already fatal there. Finite
/// work started by `main` is still reported (`main` returning cuts it
/// off).
fn process_lifetime_server(cx: &FileCx, go_call: ExprId, c: &Call, body: Option<FuncId>) -> bool {
    let top = common::outermost(cx, cx.func_of(go_call));
    // `go http.ListenAndServe(addr, nil)` straight from `main` drops the
    // error that says the server never started: still reported there.
    let direct_serve_in_main = serve_call(cx, c, None).is_some();
    if direct_serve_in_main {
        return false;
    }
    let entry = |f: FuncId| {
        let func = cx.func(f);
        func.receiver.is_none() && func.kind == FnKind::Function && func.name == "main"
    };
    let started_by_entry = entry(top) || {
        let name = &cx.func(top).name;
        let callers: Vec<FuncId> = cx
            .model
            .function_ids()
            .filter(|&g| {
                g != top
                    && cx.body_calls(g).any(|e| {
                        cx.call(e).is_some_and(|k| {
                            cx.callee_in_file(k) == Some(top)
                                || (k.receiver.is_none() && k.name == *name)
                        })
                    })
            })
            .collect();
        !callers.is_empty() && callers.iter().all(|&g| entry(common::outermost(cx, g)))
    };
    if !started_by_entry {
        return false;
    }
    // It serves: here, or (a function of another file) by the index.
    let serving = |t: &str| {
        let last = t.rsplit(['.', '/']).next().unwrap_or(t);
        matches!(
            last,
            "Serve" | "ServeTLS" | "ListenAndServe" | "ListenAndServeTLS"
        )
    };
    serves(cx, c, body)
        || c.target.as_deref().is_some_and(|t| {
            cx.index.resolve(cx.lang, t, cx.file).is_some_and(|i| {
                cx.index
                    .summary(i)
                    .calls
                    .iter()
                    .any(|site| serving(&site.target))
            })
        })
}

/// The goroutine runs until shutdown rather than finishing a piece of
/// work: it serves (`Serve`, `ListenAndServe`) or loops with no end of its
/// own (`for { ... }`, `for range ticker.C`). Joining it right away would
/// block; it needs stopping first.
fn serves(cx: &FileCx, c: &Call, body: Option<FuncId>) -> bool {
    serve_call(cx, c, body).is_some() || body.is_some_and(|f| endless_loop(cx, f))
}

/// `f` loops with no end of its own: `for { .. }`, or `for range ticker.C`.
fn endless_loop(cx: &FileCx, f: FuncId) -> bool {
    cx.body_stmts(f).iter().any(|&s| match &cx.stmt(s).kind {
        StmtKind::Loop { .. } => true,
        StmtKind::For { iter, .. } => common::ticker_channel(cx, f, *iter),
        _ => false,
    })
}

/// The serving call a goroutine makes (`srv.Serve(l)`, `ListenAndServe`):
/// the `go` statement's own call or one in the goroutine's body.
fn serve_call<'a>(cx: &FileCx<'a>, c: &'a Call, body: Option<FuncId>) -> Option<&'a Call> {
    let is_serve = |c: &Call| {
        matches!(
            c.name.as_str(),
            "Serve" | "ServeTLS" | "ListenAndServe" | "ListenAndServeTLS" | "RunServer"
        )
    };
    if is_serve(c) {
        return Some(c);
    }
    cx.body_calls(body?)
        .filter_map(|e| cx.call(e))
        .find(|c| is_serve(c))
}

/// The goroutine works on a connection it is handed (`go pump(a, b)`,
/// `go echo(c2)`) that its owner closes: the spawning function (or a
/// cleanup closure it returns) calls `Close` on it, or keeps it in a field
/// (`p.conns = append(p.conns, a, b)`) whose elements a method of the file
/// closes. Closing the connection fails the goroutine's next read or write,
/// so it ends with it.
fn ends_with_a_closed_connection(cx: &FileCx, go_call: ExprId, c: &Call) -> bool {
    let outer = common::outermost(cx, cx.func_of(go_call));
    let mut handed: Vec<&str> = c
        .args
        .iter()
        .filter_map(|a| cx.model.name_of(a.value))
        .collect();
    // A func literal looping until its I/O fails: its captured variables
    // (`f` in `go func() { for { f.WritePing(nil) ... } }()`), and what the
    // spawner built them from (`f := &framer{conn: c}`: closing `c` ends
    // `f`'s writes too). `io.Copy` is such a loop (one half of a proxy:
    // it copies until a side is closed). A one-shot goroutine may finish
    // its own work (and drop its error) whatever the spawner closes.
    if let ExprKind::Closure(g) = cx.expr(cx.model.strip(c.func)).kind
        && (cx
            .body_stmts(g)
            .iter()
            .any(|&s| matches!(cx.stmt(s).kind, StmtKind::Loop { .. }))
            || copies_a_stream(cx, g))
    {
        // The functions between the spawner and the outermost one: a
        // variable may be bound in any of them (`c, _ := ln.Accept()` in
        // an accept loop that itself runs in a goroutine).
        let mut chain = vec![cx.func_of(go_call)];
        while let Some(&last) = chain.last()
            && last != outer
            && let Some(p) = cx.func(last).parent
        {
            chain.push(p);
        }
        let bound = |n: &str| -> Vec<(StmtId, Option<ExprId>)> {
            chain
                .iter()
                .flat_map(|&f| common::bindings(cx, f, n))
                .collect()
        };
        let captured: Vec<&str> = cx
            .with_nested(g)
            .into_iter()
            .flat_map(|h| cx.body_exprs(h).iter().copied())
            .filter_map(|e| cx.model.name_of(e))
            .filter(|n| !bound(n).is_empty())
            .collect();
        for n in captured {
            handed.push(n);
            for (_, v) in bound(n) {
                if let Some(v) = v {
                    handed.extend(
                        unsnarl_model::walk::exprs_under(cx.model, v)
                            .into_iter()
                            .filter_map(|x| cx.model.name_of(x)),
                    );
                }
            }
        }
        handed.extend(
            cx.func(outer)
                .params
                .iter()
                .map(|p| p.name.as_str())
                .filter(|p| {
                    cx.with_nested(g).into_iter().any(|h| {
                        cx.body_exprs(h)
                            .iter()
                            .any(|&e| cx.model.name_of(e) == Some(*p))
                    })
                }),
        );
    }
    if handed.is_empty() {
        return false;
    }
    let closes = |e: ExprId, names: &[&str]| closes_one_of(cx, e, names);
    // The owner's closes, not the goroutine's own (`io.Copy(buf, r);
    // r.Close()` ends only if someone else closes the writer).
    let own: Vec<FuncId> = match cx.expr(cx.model.strip(c.func)).kind {
        ExprKind::Closure(g) => cx.with_nested(g),
        _ => Vec::new(),
    };
    let in_owner: Vec<ExprId> = cx
        .with_nested(outer)
        .into_iter()
        .filter(|g| !own.contains(g))
        .flat_map(|g| cx.body_calls(g).collect::<Vec<_>>())
        .collect();
    if in_owner.iter().any(|&e| closes(e, &handed)) {
        return true;
    }
    // Kept in a field the type closes element by element (also by an
    // accept loop the spawner runs in a goroutine of its own).
    let fields: Vec<&str> = cx
        .with_nested(outer)
        .into_iter()
        .flat_map(|g| cx.body_stmts(g).iter().copied())
        .filter_map(|s| match &cx.stmt(s).kind {
            StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } => {
                let k = cx.call(*v)?;
                let keeps = k.name.as_str() == "append"
                    && k.args.get(1..).unwrap_or_default().iter().any(|a| {
                        cx.model
                            .name_of(a.value)
                            .is_some_and(|n| handed.contains(&n))
                    });
                match (&cx.expr(*targets.first()?).kind, keeps) {
                    (ExprKind::Attr { name, .. }, true) => Some(name.as_str()),
                    _ => None,
                }
            }
            _ => None,
        })
        .collect();
    !fields.is_empty()
        && cx.model.stmts.iter().any(|st| match &st.kind {
            StmtKind::For { target: Some(t), iter, body, .. } => {
                matches!(&cx.expr(*iter).kind, ExprKind::Attr { name, .. } if fields.contains(&name.as_str()))
                    && {
                        let item = common::names_in_target(cx, *t);
                        unsnarl_model::walk::calls_in_block(cx.model, body)
                            .into_iter()
                            .any(|e| closes(e, &item))
                    }
            }
            _ => false,
        })
}

/// `e` is `x.Close()` on one of the variables `names`.
fn closes_one_of(cx: &FileCx, e: ExprId, names: &[&str]) -> bool {
    cx.call(e).is_some_and(|k| {
        k.name == "Close"
            && k.receiver
                .and_then(|r| cx.model.name_of(r))
                .is_some_and(|n| names.contains(&n))
    })
}

/// The goroutine works on connections kept in fields of the method's
/// receiver (`go io.Copy(r.in, r.out)`, `go func() { s.conn.Write(buf)
/// }()`), and a method of the type closes every one of those fields
/// (`Close`/`stop`: `s.conn.Close()`): the owner's teardown fails the
/// goroutine's I/O, so it ends with the object.
fn owner_closes_its_fields(cx: &FileCx, go_call: ExprId, c: &Call) -> bool {
    let outer = common::outermost(cx, cx.func_of(go_call));
    let Some(recv) = cx.func(outer).receiver.as_deref() else {
        return false;
    };
    let field_of_recv = |e: ExprId| match &cx.expr(cx.model.strip(e)).kind {
        ExprKind::Attr { obj, name, .. } if cx.model.name_of(*obj) == Some(recv) => {
            Some(name.as_str())
        }
        _ => None,
    };
    // What the goroutine does I/O on: the fields it is handed, or the
    // fields its func literal calls methods of.
    let mut fields: Vec<&str> = c
        .args
        .iter()
        .filter_map(|a| field_of_recv(a.value))
        .collect();
    let body = match cx.expr(cx.model.strip(c.func)).kind {
        ExprKind::Closure(g) => Some(g),
        _ => None,
    };
    if let Some(g) = body {
        fields.extend(
            cx.with_nested(g)
                .into_iter()
                .flat_map(|h| cx.body_calls(h).collect::<Vec<_>>())
                .filter_map(|e| cx.call(e)?.receiver)
                .filter_map(field_of_recv),
        );
    }
    fields.sort_unstable();
    fields.dedup();
    let closed_elsewhere = |field: &str| {
        cx.model.function_ids().any(|f| {
            Some(f) != body
                && f != outer
                && cx.func(f).receiver.as_deref().is_some_and(|r| {
                    cx.body_calls(f).any(|e| {
                        cx.call(e).is_some_and(|k| {
                            k.name == "Close"
                                && k.receiver.is_some_and(|x| {
                                    matches!(&cx.expr(x).kind, ExprKind::Attr { obj, name, .. }
                                        if name == field && cx.model.name_of(*obj) == Some(r))
                                })
                        })
                    })
                })
        })
    };
    !fields.is_empty() && fields.iter().all(|f| closed_elsewhere(f))
}

/// A `go f(args)` of a named function: joined when the function (if it is in
/// this file) signals, or when a WaitGroup, channel or context-aware value
/// is handed to it.
/// `wg.Add(3)` right before the `go` statements it counts (`go watch(c)`,
/// `go readLoop(c)`, each a function of another file): the goroutine is
/// joined through that WaitGroup, and its body, out of sight here, is
/// trusted to call `Done`.
fn counted_by_add(cx: &FileCx, s: StmtId) -> bool {
    let Some(block) = crate::util::containing_block(cx, s) else {
        return false;
    };
    let Some(at) = block.iter().position(|&x| x == s) else {
        return false;
    };
    let mut started = 1;
    for &p in block[..at].iter().rev() {
        match &cx.stmt(p).kind {
            StmtKind::Go(_) => started += 1,
            StmtKind::Expr(e) => {
                return common::wg_call(cx, *e).is_some_and(|(_, m)| m == "Add")
                    && cx
                        .call(*e)
                        .and_then(|c| c.positional(0))
                        .is_some_and(|n| cx.model.int_value(n).is_none_or(|k| k >= started));
            }
            _ => return false,
        }
    }
    false
}

fn named_goroutine(cx: &FileCx, c: &Call) -> bool {
    // A method value `go s.run()`, or a function of another file: trust
    // arguments that carry a join or a result channel.
    c.args.iter().any(|a| {
        let e = cx.model.strip(a.value);
        let ty = cx.sema.type_of(e).unwrap_or("");
        ty.ends_with("WaitGroup")
            || ty.contains("chan")
            || cx.model.dotted(e).is_some_and(|n| {
                let n = n.to_ascii_lowercase();
                n.contains("wg")
                    || n.ends_with("ch")
                    || n.contains("chan")
                    || n.ends_with("done")
                    || n.contains("errs")
            })
    }) || c.receiver.is_some()
}

/// True when the goroutine's function, or a func literal inside it (a
/// deferred `func() { <-sem }()`), tells someone it ended or failed, or
/// hands its result to the spawning function through a captured variable.
fn func_signals(cx: &FileCx, f: FuncId) -> bool {
    signals_deep(cx, f, 2)
}

/// Like [`func_signals`], following calls of functions of the file a few
/// levels down (`go c.readLoop()` whose cleanup closes `c.readerDone`).
fn signals_deep(cx: &FileCx, f: FuncId, depth: u32) -> bool {
    cx.with_nested(f).into_iter().any(|g| {
        body_signals(cx, &cx.func(g).body)
            || (cx.func(f).kind == FnKind::Closure && assigns_captured(cx, f, g))
            || (depth > 0
                && cx
                    .body_exprs(g)
                    .iter()
                    .copied()
                    .filter_map(|e| cx.call(e))
                    .filter_map(|c| cx.callee_in_file(c))
                    .any(|h| h != f && signals_deep(cx, h, depth - 1)))
    })
}

/// `result = compute()` where `result` belongs to the function that started
/// the goroutine: its outcome is read there (correctly or not).
fn assigns_captured(cx: &FileCx, goroutine: FuncId, g: FuncId) -> bool {
    cx.body_stmts(g).iter().copied().any(|s| {
        let StmtKind::Assign { targets, op, .. } = &cx.stmt(s).kind else {
            return false;
        };
        if matches!(op, AssignOp::Declare { .. }) {
            return false;
        }
        targets.iter().any(|&t| {
            common::names_in_target(cx, t).into_iter().any(|n| {
                matches!(common::name_scope(cx, g, n), common::NameScope::Captured(owner)
                    if owner != goroutine
                        && !cx.tree.func_ancestors(cx.model, owner).any(|a| a == goroutine))
            })
        })
    })
}

/// True when a goroutine body tells someone it ended or failed.
fn body_signals(cx: &FileCx, body: &Block) -> bool {
    struct V {
        signals: bool,
        sends: Vec<ExprId>,
    }
    impl Visitor for V {
        fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
            if matches!(m.stmt(id).kind, StmtKind::Select { .. }) {
                self.signals = true;
            }
            !self.signals
        }
        fn enter_expr(&mut self, m: &FileModel, id: ExprId) -> bool {
            match &m.expr(id).kind {
                ExprKind::Send { channel, .. } => self.sends.push(*channel),
                ExprKind::Recv(_) => self.signals = true,
                ExprKind::Call(c) => {
                    let name = c.name.as_str();
                    let target = c.target.as_deref().unwrap_or("");
                    if matches!(
                        name,
                        "Done"
                            | "close"
                            | "recover"
                            | "Go"
                            | "Signal"
                            | "Broadcast"
                            | "finish"
                            | "Finish"
                            | "complete"
                            | "Complete"
                            // `pw.CloseWithError(err)`: the pipe's reader gets
                            // the error, and its EOF says the writer is done.
                            | "CloseWithError"
                    ) || [
                        "Log", "Print", "Warn", "Error", "Info", "Debug", "Fatal", "Panic",
                        "Report",
                    ]
                    .iter()
                    .any(|p| name.starts_with(p))
                        || target.starts_with("log.")
                        || target.starts_with("log/slog.")
                        || target.starts_with("fmt.Print")
                        || target.starts_with("fmt.Fprint")
                        || matches!(
                            name,
                            "Error"
                                | "Errorf"
                                | "Fatal"
                                | "Fatalf"
                                | "Warn"
                                | "Warnf"
                                | "Info"
                                | "Infof"
                                | "Println"
                                | "Printf"
                                | "Panic"
                        )
                    {
                        self.signals = true;
                    }
                }
                _ => {}
            }
            !self.signals
        }
    }
    let mut v = V {
        signals: false,
        sends: Vec::new(),
    };
    walk_block(cx.model, body, &mut v);
    // `onErr(srv.Serve(l))`: the error goes to a callback the owner gave.
    v.signals |= walk::exprs_in_block(cx.model, body)
        .into_iter()
        .any(|e| cx.call(e).is_some_and(|c| error_callback(cx, c)));
    // A result sent on a channel reaches someone only if the channel is
    // received from (or handed on); a local channel nobody reads is no join.
    v.signals |= v.sends.iter().any(|&ch| has_receiver(cx, ch));
    // A goroutine that ranges over a channel is a consumer: the producer
    // closing the channel is its lifecycle.
    v.signals
        || body.iter().any(|&s| {
            matches!(&cx.stmt(s).kind, StmtKind::For { iter, .. }
                if cx.sema.type_of(*iter).is_some_and(|t| t.contains("chan")))
        })
}

/// The first name each assignment of `f` binds from a call `pick` accepts,
/// with what `pick` made of the call (`conn, err := ln.Accept()` gives
/// `conn`).
fn bound_by_calls<'a, T>(
    cx: &FileCx<'a>,
    f: FuncId,
    pick: impl Fn(&'a Call) -> Option<T>,
) -> Vec<(&'a str, T)> {
    cx.body_stmts(f)
        .iter()
        .filter_map(|&s| match &cx.stmt(s).kind {
            StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } => {
                let made = pick(cx.call(*v)?)?;
                let name = common::names_in_target(cx, *targets.first()?)
                    .first()
                    .copied()?;
                Some((name, made))
            }
            _ => None,
        })
        .collect()
}

/// `c, err := ln.Accept(); go func() { serve(c); c.Close() }()` (or `go
/// handle(c)` with a `handle` of this file that closes its connection): a
/// goroutine per accepted connection, which ends when the connection does
/// and reports to its peer by closing it; the accept loop's owner stops it.
fn connection_scoped(cx: &FileCx, go_call: ExprId, c: &Call) -> bool {
    let outer = cx.func_of(go_call);
    // `conn, err := ln.Accept()`: the connection.
    let accepted: Vec<&str> =
        bound_by_calls(cx, outer, |k| k.name.starts_with("Accept").then_some(()))
            .into_iter()
            .map(|(n, ())| n)
            .collect();
    if accepted.is_empty() {
        return false;
    }
    // A value wrapping the connection is the connection too (`conn :=
    // newConn(s, c)`, `conn = ext.NewConn(conn)`).
    let wraps = |e: ExprId, names: &[&str]| {
        cx.call(cx.model.strip(e)).is_some_and(|k| {
            k.args.iter().any(|a| {
                cx.model
                    .name_of(a.value)
                    .is_some_and(|n| names.contains(&n))
            })
        })
    };
    let mut accepted = accepted;
    for _ in 0..3 {
        let more: Vec<&str> = cx
            .body_stmts(outer)
            .iter()
            .filter_map(|&s| match &cx.stmt(s).kind {
                StmtKind::Assign {
                    targets,
                    value: Some(v),
                    ..
                } if wraps(*v, &accepted) => targets
                    .first()
                    .and_then(|&t| common::names_in_target(cx, t).first().copied()),
                _ => None,
            })
            .filter(|n| !accepted.contains(n))
            .collect();
        if more.is_empty() {
            break;
        }
        accepted.extend(more);
    }
    fn closes(cx: &FileCx, f: FuncId, names: &[&str], depth: u32) -> bool {
        cx.body_stmts(f).iter().any(|&s| {
            // (Also `_ = conn.Close()`, `err = conn.Close()`, and in a
            // deferred cleanup closure.)
            let e = match cx.stmt(s).kind {
                StmtKind::Expr(e) | StmtKind::Defer(e) => e,
                StmtKind::Assign { value: Some(v), .. } => v,
                _ => return false,
            };
            if let (StmtKind::Defer(_), Some(k), true) = (&cx.stmt(s).kind, cx.call(e), depth == 0)
                && let ExprKind::Closure(g) = cx.expr(cx.model.strip(k.func)).kind
                && closes(cx, g, names, depth + 1)
            {
                return true;
            }
            closes_one_of(cx, e, names)
        })
    }
    let closes = |f: FuncId, names: &[&str]| closes(cx, f, names, 0);
    match cx.expr(cx.model.strip(c.func)).kind {
        ExprKind::Closure(f) => closes(f, &accepted),
        _ => cx.callee_in_file(c).is_some_and(|f| {
            let params = &cx.func(f).params;
            let handed: Vec<&str> = c
                .args
                .iter()
                .enumerate()
                .filter(|(_, a)| {
                    cx.model
                        .name_of(a.value)
                        .is_some_and(|n| accepted.contains(&n))
                        || wraps(a.value, &accepted)
                })
                .filter_map(|(i, _)| params.get(i).map(|p| p.name.as_str()))
                .collect();
            !handed.is_empty() && closes(f, &handed)
        }),
    }
}

/// A goroutine pumping a connection it was handed until the connection
/// fails (a loop of its own that leaves on an error, or `io.Copy`) ends with that connection, and
/// when it closes the connection on its way out every other user of it
/// learns that it stopped: `go func() { io.Copy(stream, stream);
/// stream.Close() }()` in a handler given `stream`, `go h.respond()` whose
/// read loop runs under `defer h.sess.Close()`, or `go func() { io.Copy(pty,
/// s) }()` in a handler given `s ssh.Session` (whoever handed it closes
/// it). "Handed" means a parameter of a function around the `go`
/// statement, or a field of the method's receiver: a pipe or connection
/// the spawner made itself (`r, w := io.Pipe()`) ends only when the
/// spawner ends it, which is what the rule checks for.
fn pumps_a_handed_connection(cx: &FileCx, go_call: ExprId, c: &Call) -> bool {
    let (body, literal) = match cx.expr(cx.model.strip(c.func)).kind {
        ExprKind::Closure(g) => (g, true),
        _ => match cx.callee_in_file(c) {
            Some(f) => (f, false),
            None => return false,
        },
    };
    // A loop that leaves when its I/O fails (one that ignores the error,
    // `for { conn.Write(ping) }`, outlives the connection), or a copy.
    let kinds = || cx.body_stmts(body).iter().map(|&s| &cx.stmt(s).kind);
    let pumps = (kinds().any(|k| {
        matches!(
            k,
            StmtKind::Loop { .. } | StmtKind::While { .. } | StmtKind::For { .. }
        )
    }) && kinds().any(|k| matches!(k, StmtKind::Return(_) | StmtKind::Break)))
        || copies_a_stream(cx, body);
    if !pumps {
        return false;
    }
    // The parameters of the functions around a func literal (up to the
    // outermost), and the receiver of the method the goroutine belongs to.
    let mut params: Vec<&Param> = Vec::new();
    let receiver = if literal {
        let outer = common::outermost(cx, cx.func_of(go_call));
        let mut f = cx.func_of(go_call);
        loop {
            params.extend(cx.func(f).params.iter());
            match cx.func(f).parent {
                Some(p) if f != outer => f = p,
                _ => break,
            }
        }
        cx.func(outer).receiver.as_deref()
    } else {
        cx.func(body).receiver.as_deref()
    };
    let handed = |e: ExprId| match &cx.expr(cx.model.strip(e)).kind {
        ExprKind::Attr { obj, .. } => receiver.is_some() && cx.model.name_of(*obj) == receiver,
        _ => cx
            .model
            .name_of(e)
            .is_some_and(|n| params.iter().any(|p| p.name == n)),
    };
    let closes_handed = cx.body_stmts(body).iter().any(|&s| match cx.stmt(s).kind {
        StmtKind::Expr(e) | StmtKind::Defer(e) => cx
            .call(e)
            .is_some_and(|k| k.name == "Close" && k.receiver.is_some_and(handed)),
        _ => false,
    });
    // A connection-typed parameter the func literal uses: its I/O ends
    // when the caller that handed it closes it.
    let uses_handed_connection = literal
        && params.iter().any(|p| {
            p.ty.as_ref().is_some_and(|t| connection_type(&t.text))
                && cx
                    .body_exprs(body)
                    .iter()
                    .any(|&e| cx.model.name_of(e) == Some(p.name.as_str()))
        });
    closes_handed || uses_handed_connection
}

/// `g` calls `io.Copy`/`io.CopyBuffer`: a loop that runs until one side
/// of the copy is closed.
fn copies_a_stream(cx: &FileCx, g: FuncId) -> bool {
    cx.body_calls(g).any(|e| {
        cx.call(e)
            .is_some_and(|k| matches!(k.target.as_deref(), Some("io.Copy" | "io.CopyBuffer")))
    })
}

/// A type written like a connection or a byte stream: `net.Conn`,
/// `*spdystream.Stream`, `ssh.Session`, `*websocket.Conn`, `io.ReadWriter`.
fn connection_type(text: &str) -> bool {
    let last = text.rsplit(['.', '*']).next().unwrap_or(text);
    ["Conn", "Stream", "Session", "Socket"]
        .iter()
        .any(|w| last.contains(w))
        || (text.trim_start_matches('*').starts_with("io.")
            && matches!(
                last,
                "Reader"
                    | "Writer"
                    | "ReadWriter"
                    | "ReadCloser"
                    | "WriteCloser"
                    | "ReadWriteCloser"
            ))
}

/// `stdin, _ := cmd.StdinPipe(); go func() { defer stdin.Close();
/// stdin.Write(data) }(); cmd.Run()`: a goroutine with no loop of its own
/// working on a pipe of a command that the spawning function then waits
/// for (`Run`, `Wait`, `Output`, `CombinedOutput`). Waiting closes the
/// pipes once the command exits, so the goroutine's I/O ends with the
/// command, and a failed write shows in the command's result.
fn feeds_waited_command(cx: &FileCx, go_call: ExprId, c: &Call) -> bool {
    let ExprKind::Closure(g) = cx.expr(cx.model.strip(c.func)).kind else {
        return false;
    };
    let outer = cx.func_of(go_call);
    let go_at = cx.expr(go_call).span.start;
    // Each pipe and the command it belongs to.
    let pipes: Vec<(&str, String)> = bound_by_calls(cx, outer, |k| {
        matches!(k.name.as_str(), "StdinPipe" | "StdoutPipe" | "StderrPipe")
            .then(|| cx.model.dotted(k.receiver?))
            .flatten()
    });
    if pipes.is_empty() {
        return false;
    }
    let body = cx.body_stmts(g);
    let loops = body.iter().any(|&s| {
        matches!(
            cx.stmt(s).kind,
            StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::Loop { .. }
        )
    });
    let used: Vec<&String> = pipes
        .iter()
        .filter(|(p, _)| {
            cx.body_exprs(g)
                .iter()
                .any(|&e| cx.model.name_of(e) == Some(*p))
        })
        .map(|(_, cmd)| cmd)
        .collect();
    !loops
        && !used.is_empty()
        && used.iter().all(|cmd| {
            cx.body_calls(outer).any(|e| {
                cx.expr(e).span.start > go_at
                    && cx.call(e).is_some_and(|k| {
                        matches!(
                            k.name.as_str(),
                            "Run" | "Wait" | "Output" | "CombinedOutput"
                        ) && k.receiver.and_then(|r| cx.model.dotted(r)).as_ref() == Some(*cmd)
                    })
            })
        })
}

/// `go io.Copy(os.Stderr, stderr)` with `stderr` a pipe of a command
/// (`cmd.StderrPipe()`, bound in a function around the `go`): it passes
/// the child's output through to this process's own, and ends when the
/// child exits and the pipe reaches EOF. A failed write to our own stderr
/// has no better place to be reported.
fn forwards_command_output(cx: &FileCx, go_call: ExprId, c: &Call) -> bool {
    let copy = match cx.expr(cx.model.strip(c.func)).kind {
        ExprKind::Closure(g) => match cx.func(g).body.as_slice() {
            [s] => match cx.stmt(*s).kind {
                StmtKind::Expr(e) => cx.call(e),
                _ => None,
            },
            _ => None,
        },
        _ => Some(c),
    };
    let Some(copy) = copy.filter(|k| k.target.as_deref() == Some("io.Copy")) else {
        return false;
    };
    let to_own_output = copy
        .positional(0)
        .and_then(|d| cx.model.dotted(d))
        .is_some_and(|d| d == "os.Stdout" || d == "os.Stderr");
    let Some(pipe) = copy.positional(1).and_then(|p| cx.model.name_of(p)) else {
        return false;
    };
    to_own_output
        && std::iter::successors(Some(cx.func_of(go_call)), |&f| cx.func(f).parent).any(|f| {
            bound_by_calls(cx, f, |k| {
                matches!(k.name.as_str(), "StdoutPipe" | "StderrPipe").then_some(())
            })
            .iter()
            .any(|(n, _)| *n == pipe)
        })
}

/// A call of a function value the enclosing code was handed, typed to take
/// an error (`onErr func(error)`, a parameter of this or an outer function).
fn error_callback(cx: &FileCx, c: &Call) -> bool {
    if configured_error_hook(cx, c) {
        return true;
    }
    let Some(name) = cx.model.name_of(cx.model.strip(c.func)) else {
        return false;
    };
    cx.tree
        .func_ancestors(cx.model, cx.func_of(c.func))
        .flat_map(|f| cx.func(f).params.iter())
        .any(|p| {
            p.name == name
                && p.ty.as_ref().is_some_and(|t| {
                    let t = t.text.as_str();
                    t.starts_with("func(") && t.contains("error")
                })
        })
}

/// An error handed to a hook configured on the object (`cb :=
/// c.Opts.AsyncErrorCB; cb(c, err)`, `s.OnError(err)`): a field holding a
/// function named for errors or events (`On..`, `..Err..`, `..CB`,
/// `..Callback`, `..Handler`), called with an `err`.
fn configured_error_hook(cx: &FileCx, c: &Call) -> bool {
    let passes_err = c.args.iter().any(|a| {
        cx.model
            .name_of(a.value)
            .is_some_and(|n| n == "err" || n.ends_with("Err"))
    });
    if !passes_err {
        return false;
    }
    let hook_field = |e: ExprId| match &cx.expr(cx.model.strip(e)).kind {
        ExprKind::Attr { name, .. } => {
            let n = name.as_str();
            n.starts_with("On")
                || n.contains("Err")
                || n.ends_with("CB")
                || n.ends_with("Callback")
                || n.ends_with("Handler")
        }
        _ => false,
    };
    let callee = cx.model.strip(c.func);
    if hook_field(callee) {
        return true;
    }
    // A local bound to such a field (`if cb := c.Opts.AsyncErrorCB; cb != nil`).
    let Some(name) = cx.model.name_of(callee) else {
        return false;
    };
    let f = cx.func_of(c.func);
    cx.body_stmts(f).iter().any(|&s| {
        matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(v), .. }
            if targets.iter().any(|&t| cx.model.name_of(t) == Some(name)) && hook_field(*v))
    })
}

/// Whether a channel sent on by a goroutine is received by anyone: true
/// unless it is a local channel whose every other use is a send, a close or
/// `len`/`cap`.
fn has_receiver(cx: &FileCx, ch: ExprId) -> bool {
    let Some(name) = cx.model.name_of(ch) else {
        return true;
    };
    let Some(made) = common::local_chan(cx, cx.func_of(ch), name) else {
        return true;
    };
    common::name_uses(cx, made.func, name).into_iter().any(|u| {
        !matches!(
            common::chan_use(cx, u),
            ChanUse::Send | ChanUse::Close | ChanUse::Inspect
        )
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[
        r#"
package app

import "net/http"

func Start() {
	go http.ListenAndServe(":8080", nil) // expect
}
"#,
        r#"
package app

func (s *Server) Kick(id string) {
	go func() { // expect
		s.store.Delete(id)
	}()
}
"#,
        r#"
package app

func flush(items []string) error {
	return upload(items)
}

func Save(items []string) {
	go flush(items) // expect
}
"#,
        r#"
package app

func FetchAll(urls []string) []Result {
	out := make(chan Result)
	for _, u := range urls {
		go func() { out <- fetch(u) }() // expect
	}
	return nil
}
"#,
        r#"
// file: app/server.go
package app

import (
	"context"
	"net"
	"net/http"
)

type Node struct{ srv *http.Server }

func (n *Node) Start(l net.Listener) {
	go func() { // expect
		n.srv.Serve(l)
	}()
}

func (n *Node) Stop(ctx context.Context) {
	n.srv.Shutdown(ctx)
}
"#,
        r#"
package app

import (
	"io"
	"net"
)

func echo(rw io.ReadWriter) error {
	_, err := io.Copy(rw, rw)
	return err
}

func startEcho() net.Conn {
	c1, c2 := net.Pipe()
	go echo(c2) // expect
	return c1
}
"#,
        r#"
package app

import (
	"net"
	"os"
)

func serve(c net.Conn) {
	defer c.Close()
	go func() { // expect
		os.WriteFile("/var/log/peer", []byte(c.RemoteAddr().String()), 0o644)
	}()
	echo(c)
}
"#,
        r#"
package admin

import (
	"net"
	"net/http"
)

type Console struct {
	lis net.Listener
	web *http.Server
}

func (c *Console) Start(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	c.lis = l
	c.web = &http.Server{Handler: http.NewServeMux()}
	go func() { // expect
		c.web.Serve(c.lis)
	}()
	return nil
}

func (c *Console) Stop() error {
	return c.lis.Close()
}
"#,
        r#"
// file: mq/client.go
package mq

import (
	"net"
	"sync"
)

type client struct {
	conn    net.Conn
	workers sync.WaitGroup
	stop    chan struct{}
}

func (c *client) start() {
	c.stop = make(chan struct{})
	c.workers.Add(1)
	go watch(c)
	go readLoop(c) // expect
}

func (c *client) Disconnect() {
	close(c.stop)
	c.conn.Close()
	c.workers.Wait()
}
// file: mq/loops.go
package mq

func watch(c *client) {
	defer c.workers.Done()
	<-c.stop
}

func readLoop(c *client) {
	// no Done: the Add above counts only watch
	buf := make([]byte, 4096)
	for {
		if _, err := c.conn.Read(buf); err != nil {
			return
		}
	}
}
"#,
        r#"
package wire

import (
	"net"
	"sync"
)

type Session struct {
	mu   sync.Mutex
	conn net.Conn
	out  []byte
}

func (s *Session) Flush() {
	buf := s.out
	s.out = nil
	go func() { // expect
		_, err := s.conn.Write(buf)
		if err != nil {
			s.conn.Close()
		}
	}()
}

func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out = nil
	return nil
}
"#,
        r#"
package login

import (
	"bytes"
	"io"
	"os/exec"
)

// The copier closes its own end; nothing closes the writer, so the copy
// never sees EOF and the goroutine outlives the command.
func run(name string) error {
	cmd := exec.Command(name)
	r, w := io.Pipe()
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		return err
	}
	var buf bytes.Buffer
	go func() { // expect
		io.Copy(&buf, r)
		r.Close()
	}()
	return cmd.Wait()
}
"#,
        r#"
package bridge

import (
	"net"
	"reflect"
)

type Conn struct{ nc net.Conn }

func (c *Conn) publish(v interface{}) error {
	_, err := c.nc.Write([]byte("x"))
	return err
}

func (c *Conn) BindSend(ch interface{}) {
	go pump(c, reflect.ValueOf(ch)) // expect
}

func pump(c *Conn, ch reflect.Value) {
	for {
		v, ok := ch.Recv()
		if !ok {
			return
		}
		if err := c.publish(v.Interface()); err != nil {
			return
		}
	}
}
"#,
        r#"
// file: cmd/upload/main.go
package main

import (
	"net/http"
	"os"
)

func upload(path string) {
	f, _ := os.Open(path)
	defer f.Close()
	http.Post("https://store.example/put", "application/octet-stream", f)
}

func main() {
	go upload(os.Args[1]) // expect
	println("uploading")
}
"#,
        r#"
// file: cmd/demo/main.go
package main

import (
	"log"
	"net/http"
)

func main() {
	go http.ListenAndServe("localhost:8080", nil) // expect
	log.Println("serving")
	select {}
}
"#,
        r#"
// file: pool/echo.go
package pool

import (
	"net"
)

const address = "127.0.0.1:7777"

func init() {
	go simpleTCPServer()
}

func simpleTCPServer() {
	l, err := net.Listen("tcp", address)
	if err != nil {
		return
	}
	defer l.Close()
	for {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		go func() { // expect
			buffer := make([]byte, 256)
			conn.Read(buffer)
		}()
	}
}
"#,
        r#"
//go:build js && wasm

package main

import (
	"net/http"
	"syscall/js"
)

func main() {
	js.Global().Set("start", js.FuncOf(func(_ js.Value, _ []js.Value) interface{} {
		go func() { // expect
			doc := js.Global().Get("document")
			resp, _ := http.Get("/offer")
			render(doc, resp)
		}()
		return js.Undefined()
	}))
	select {}
}
"#,
        r#"
package smtp

import "net"

type Server struct{ conns map[*Conn]struct{} }

type Conn struct{ net.Conn }

func newConn(c net.Conn, s *Server) *Conn { return &Conn{c} }

func (s *Server) Serve(l net.Listener) error {
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		go s.handleConn(newConn(c, s)) // expect
	}
}

func (s *Server) handleConn(c *Conn) {
	s.conns[c] = struct{}{}
	defer func() {
		delete(s.conns, c)
	}()
	c.Write([]byte("220 ready\r\n"))
}
"#,
        r#"
package verify

import (
	"os/exec"
	"strings"
)

// The command is started and left: nothing waits for it, so nothing ends
// the writer either.
func feed(name string, lines []string) error {
	cmd := exec.Command(name)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { // expect
		defer stdin.Close()
		stdin.Write([]byte(strings.Join(lines, "\n")))
	}()
	return nil
}
"#,
        r#"
package api

import "net/http"

type handler struct {
	onRequest func(string) error
}

func (h *handler) notifyRequest(req *http.Request) {
	_ = h.onRequest(req.URL.Path)
}

func (h *handler) ServeHTTP(res http.ResponseWriter, req *http.Request) {
	go h.notifyRequest(req) // expect
	res.WriteHeader(http.StatusOK)
}
"#,
        r#"
package poll

import "net/http"

// The loop's I/O is not on anything handed to it that can be closed: a
// URL string never fails the requests, so nothing ends the goroutine.
func Watch(url string) {
	go func() { // expect
		for {
			resp, err := http.Get(url)
			if err == nil {
				resp.Body.Close()
			}
		}
	}()
}
"#,
    ],
    pass: &[
        r#"
package aetest

import (
	"bufio"
	"io"
	"os"
	"os/exec"
)

type instance struct {
	child   *exec.Cmd
	started chan error
}

// Once the child reports its address, the rest of its stderr is passed
// through to ours.
func (i *instance) startChild(args []string) error {
	i.child = exec.Command("dev_appserver", args...)
	stderr, err := i.child.StderrPipe()
	if err != nil {
		return err
	}
	if err := i.child.Start(); err != nil {
		return err
	}
	go func() {
		s := bufio.NewScanner(stderr)
		for s.Scan() {
			if s.Text() == "ready" {
				go io.Copy(os.Stderr, stderr)
				break
			}
		}
		i.started <- s.Err()
	}()
	return <-i.started
}
"#,
        r#"
package wire

import (
	"net"
	"sync"
)

type Session struct {
	mu   sync.Mutex
	conn net.Conn
	out  []byte
}

func (s *Session) Flush() {
	buf := s.out
	s.out = nil
	go func() {
		_, err := s.conn.Write(buf)
		if err != nil {
			s.conn.Close()
		}
	}()
}

func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn.Close()
}
"#,
        r#"
// file: mq/client.go
package mq

import (
	"net"
	"sync"
)

type client struct {
	conn    net.Conn
	workers sync.WaitGroup
	stop    chan struct{}
}

func (c *client) start() {
	c.stop = make(chan struct{})
	c.workers.Add(2)
	go watch(c)
	go readLoop(c)
}

func (c *client) Disconnect() {
	close(c.stop)
	c.conn.Close()
	c.workers.Wait()
}
// file: mq/loops.go
package mq

func watch(c *client) {
	defer c.workers.Done()
	<-c.stop
}

func readLoop(c *client) {
	defer c.workers.Done()
	buf := make([]byte, 4096)
	for {
		if _, err := c.conn.Read(buf); err != nil {
			return
		}
	}
}
"#,
        r#"
// file: admin/console_test.go
package admin

import (
	"net"
	"net/http"
)

type Console struct {
	lis net.Listener
	web *http.Server
}

func (c *Console) Start(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	c.lis = l
	c.web = &http.Server{Handler: http.NewServeMux()}
	go func() {
		c.web.Serve(c.lis)
	}()
	return nil
}

func (c *Console) Stop() error {
	return c.lis.Close()
}
"#,
        r#"
package feed

import (
	"io"
	"os"
)

func Follow(path string) io.Reader {
	r, w := io.Pipe()
	go func() {
		f, err := os.Open(path)
		if err != nil {
			w.CloseWithError(err)
			return
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		w.CloseWithError(err)
	}()
	return r
}
"#,
        r#"
// file: hub/hub.go
package hub

import (
	"errors"
	"io"

	"example.com/chanx"
)

type Pipe interface {
	io.ReadWriteCloser
}

type Pending interface {
	Accept() (Pipe, <-chan string, error)
}

type Peer interface {
	Subscribe(topic string) <-chan Pending
}

type Creds interface{}

// The dispatcher only accepts each pending pipe and hands it to a goroutine
// of its own, which closes the pipe when done; it ends when the peer closes
// the channel.
func Route(p Peer, cr Creds) error {
	pending := p.Subscribe("relay")
	if pending == nil {
		return errors.New("already routed")
	}
	go func() {
		for req := range pending {
			pipe, notes, err := req.Accept()
			if err != nil {
				continue
			}
			go chanx.Drain(notes)
			go func() {
				Answer(cr, pipe)
				pipe.Close()
			}()
		}
	}()
	return nil
}
// file: hub/answer.go
package hub

import "io"

// Answer echoes frames on one pipe until it is closed.
func Answer(cr Creds, p Pipe) error {
	var frame [16]byte
	for {
		if _, err := io.ReadFull(p, frame[:]); err != nil {
			return err
		}
		if _, err := p.Write(frame[:]); err != nil {
			return err
		}
	}
}
"#,
        r#"
package app

import (
	"net"
	"time"
)

func pingEchoServer(c net.Conn) {
	defer c.Close()
	f := &framer{conn: c}
	go func() {
		for {
			if _, err := f.WritePing(nil); err != nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	echo(c)
}
"#,
        r#"
package app

import (
	"io"
	"net"
)

type relay struct {
	conns []net.Conn
}

func (p *relay) pump(dst, src net.Conn) {
	io.Copy(dst, src)
}

func (p *relay) start(a, b net.Conn) {
	p.conns = append(p.conns, a, b)
	go p.pump(a, b)
	go p.pump(b, a)
}

func (p *relay) stop() {
	for _, c := range p.conns {
		c.Close()
	}
}

func echo(rw io.ReadWriter) error {
	_, err := io.Copy(rw, rw)
	return err
}

func startEcho() (net.Conn, func()) {
	c1, c2 := net.Pipe()
	go echo(c2)
	return c1, func() {
		c1.Close()
		c2.Close()
	}
}
"#,
        r#"
// file: app/server_test.go
package app

import (
	"net"
	"net/http"
	"testing"
)

type fixture struct{ srv *http.Server }

func startFixture(t *testing.T) *fixture {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	f := &fixture{srv: &http.Server{Handler: newMux()}}
	go func() {
		f.srv.Serve(l)
	}()
	return f
}

func (f *fixture) teardown() {
	f.srv.Close()
}
"#,
        r#"
package app

import (
	"io"
	"net"
	"net/http"
)

// The server's error goes to the callback its owner passed in.
func serve(l net.Listener, h http.Handler, onErr func(error)) *http.Server {
	srv := &http.Server{Handler: h}
	go func() { onErr(srv.Serve(l)) }()
	return srv
}

// One goroutine per accepted connection, ended by the connection's close.
func acceptLoop(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			io.Copy(conn, conn)
			conn.Close()
		}()
	}
}

func echo(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go handle(conn)
	}
}

func handle(c net.Conn) {
	defer c.Close()
	io.Copy(c, c)
}
"#,
        r#"
package app

import "sync"

func Run(jobs []string) {
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func(j string) {
			defer wg.Done()
			process(j)
		}(j)
	}
	wg.Wait()
}
"#,
        r#"
package app

import "log"

func Serve(srv Server) {
	go func() {
		if err := srv.ListenAndServe(); err != nil {
			log.Printf("server: %v", err)
		}
	}()
}

func Fetch(u string) <-chan Result {
	out := make(chan Result, 1)
	go func() {
		out <- fetch(u)
	}()
	return out
}
"#,
        r#"
package app

type Conn struct {
	done chan struct{}
	conn Transport
}

func (c *Conn) Start() {
	go c.readLoop()
}

func (c *Conn) readLoop() {
	defer c.cleanup()
	for {
		if _, err := c.conn.Read(); err != nil {
			return
		}
	}
}

func (c *Conn) cleanup() {
	close(c.done)
}

func worker(jobs <-chan int, wg *sync.WaitGroup) {
	defer wg.Done()
	for j := range jobs {
		handle(j)
	}
}

func Pool(jobs <-chan int, wg *sync.WaitGroup) {
	go worker(jobs, wg)
}
"#,
        r#"
package app

import (
	"sync"
	"sync/atomic"
)

type Cache struct {
	size    int64
	entries sync.Map
}

// Named like I/O, but its whole body is in view and touches only memory.
func (c *Cache) deleteRandomKey() bool {
	atomic.AddInt64(&c.size, -1)
	found := false
	c.entries.Range(func(key, value interface{}) bool {
		found = true
		c.entries.Delete(key)
		return false
	})
	return found
}

func (c *Cache) Evict() {
	go c.deleteRandomKey()
}
"#,
        r#"
package fwd

import (
	"io"
	"net"
)

// A forwarder whose accept loop runs in a goroutine of its own: each
// proxy half closes both ends when its copy stops, ending the other.
func forward(ln net.Listener, open func() (net.Conn, error)) {
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				ch, err := open()
				if err != nil {
					c.Close()
					return
				}
				go func() {
					defer ch.Close()
					defer c.Close()
					io.Copy(ch, c)
				}()
				go func() {
					defer ch.Close()
					defer c.Close()
					io.Copy(c, ch)
				}()
			}()
		}
	}()
}

// One half of a proxy: whichever copy ends first closes both sides.
func serve(in net.Conn, addr string) {
	out, err := net.Dial("tcp", addr)
	if err != nil {
		in.Close()
		return
	}
	go func() {
		io.Copy(in, out)
		in.Close()
		out.Close()
	}()
	io.Copy(out, in)
	out.Close()
	in.Close()
}
"#,
        r#"
package proxy

import "net"

type relay struct {
	ln     net.Listener
	target string
	conns  []net.Conn
}

func (r *relay) start() {
	go func() {
		for {
			a, err := r.ln.Accept()
			if err != nil {
				return
			}
			b, err := net.Dial("tcp", r.target)
			if err != nil {
				continue
			}
			r.conns = append(r.conns, a, b)
			go r.pump(a, b)
		}
	}()
}

func (r *relay) pump(src, dst net.Conn) {
	buf := make([]byte, 4096)
	for {
		n, err := src.Read(buf)
		if err != nil {
			return
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}

func (r *relay) stop() {
	r.ln.Close()
	for _, c := range r.conns {
		c.Close()
	}
}
"#,
        r#"
package logx

import (
	"bufio"
	"os"
	"sync"
	"time"
)

type logger struct {
	mu  sync.Mutex
	out *bufio.Writer
	f   *os.File
}

var std logger

// Flushes every 30 s for the life of the process; Flush drains on exit.
func init() {
	go std.flushDaemon()
}

func (l *logger) flushDaemon() {
	for range time.NewTicker(30 * time.Second).C {
		l.lockAndFlush()
	}
}

func (l *logger) lockAndFlush() {
	l.mu.Lock()
	l.out.Flush()
	l.f.Sync()
	l.mu.Unlock()
}

func Flush() { std.lockAndFlush() }
"#,
        r#"
// file: stream/say_test.go
package stream_test

import (
	"net"
	"time"

	. "github.com/onsi/ginkgo"
)

var _ = Describe("Say", func() {
	It("sees output written later", func() {
		conn, _ := net.Dial("tcp", addr)
		go func() {
			time.Sleep(10 * time.Millisecond)
			conn.Write([]byte("def"))
		}()
		Eventually(conn).Should(Say("def"))
	})
})
"#,
        r#"
// file: store/pool_test.go
package store_test

import (
	"net"
	"time"

	. "gopkg.in/check.v1"
)

type S struct{}

var _ = Suite(&S{})

func (s *S) TestPoolLimitWaits(c *C) {
	conn, err := net.Dial("tcp", "localhost:40001")
	c.Assert(err, IsNil)
	go func() {
		time.Sleep(time.Second)
		conn.Write([]byte("release"))
	}()
	c.Assert(ping(conn), IsNil)
}
"#,
        r#"
package bridge

import (
	"net"
	"reflect"
)

type Options struct {
	AsyncErrorCB func(c *Conn, err error)
}

type Conn struct {
	nc   net.Conn
	Opts Options
}

func (c *Conn) publish(v interface{}) error {
	_, err := c.nc.Write([]byte("x"))
	return err
}

func (c *Conn) BindSend(ch interface{}) {
	go pump(c, reflect.ValueOf(ch))
}

// Its failure goes to the error callback configured on the connection.
func pump(c *Conn, ch reflect.Value) {
	for {
		v, ok := ch.Recv()
		if !ok {
			return
		}
		if err := c.publish(v.Interface()); err != nil {
			if cb := c.Opts.AsyncErrorCB; cb != nil {
				cb(c, err)
			}
			return
		}
	}
}
"#,
        r#"
// file: cmd/chaos/main.go
package main

import (
	"log"
	"time"
)

// The admin server lives as long as the process.
func main() {
	go startAdminServer(9000)
	for i := 0; i < 10; i++ {
		log.Println("scenario step", i)
		time.Sleep(time.Second)
	}
}

// file: cmd/chaos/server.go
package main

import (
	"log"
	"net"
	"net/http"
	"strconv"
)

func startAdminServer(port int) {
	l, err := net.Listen("tcp", ":"+strconv.Itoa(port))
	if err != nil {
		log.Fatal("listen:", err)
	}
	http.Serve(l, nil)
}
"#,
        r#"
// file: kvs/fixture_test.go
package kvs_test

import (
	"log"
	"net"
	"net/http"
	"os"
	"testing"
)

var addrs []string

// Fixture servers for the whole test binary; os.Exit ends them.
func startFixtureServers(n int) {
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			log.Fatal("listen error:", err)
		}
		addrs = append(addrs, l.Addr().String())
		go http.Serve(l, nil)
	}
}

func TestMain(m *testing.M) {
	startFixtureServers(3)
	os.Exit(m.Run())
}
"#,
        r#"
package fixture

import "net"

// Each connection is answered, then closed by its own goroutine.
func replayServer(ln net.Listener, replies [][]byte) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			for _, r := range replies {
				_, _ = c.Write(r)
			}
			_ = c.Close()
		}()
	}
}
"#,
        r#"
// file: pool/channel_test.go
package pool

import (
	"net"
	"testing"
)

const address = "127.0.0.1:7777"

func init() {
	go simpleTCPServer()
}

func simpleTCPServer() {
	l, err := net.Listen("tcp", address)
	if err != nil {
		return
	}
	defer l.Close()
	for {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			buffer := make([]byte, 256)
			conn.Read(buffer)
		}()
	}
}

func TestPool(t *testing.T) {}
"#,
        r#"
//go:build js && wasm

package main

import "syscall/js"

func getElementByID(id string) js.Value {
	return js.Global().Get("document").Call("getElementById", id)
}

// Reading properties of JavaScript values is an object lookup, not I/O.
func main() {
	js.Global().Set("start", js.FuncOf(func(_ js.Value, _ []js.Value) interface{} {
		go func() {
			el := getElementByID("remoteSessionDescription")
			sd := el.Get("value").String()
			render(sd)
		}()
		return js.Undefined()
	}))
	select {}
}
"#,
        r#"
package smtp

import "net"

type Server struct{ conns map[*Conn]struct{} }

type Conn struct{ net.Conn }

func newConn(c net.Conn, s *Server) *Conn { return &Conn{c} }

func (s *Server) Serve(l net.Listener) error {
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		go s.handleConn(newConn(c, s))
	}
}

func (s *Server) handleConn(c *Conn) {
	s.conns[c] = struct{}{}
	defer func() {
		c.Close()
		delete(s.conns, c)
	}()
	c.Write([]byte("220 ready\r\n"))
}
"#,
        r#"
package verify

import "os/exec"

// Run waits for the command and then closes its stdin pipe: the writer
// ends with the command, and a failed write shows in its exit status.
func check(path string, data []byte) (bool, error) {
	cmd := exec.Command(path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return false, err
	}
	go func() {
		defer stdin.Close()
		stdin.Write(data)
	}()
	if err := cmd.Run(); err != nil {
		return false, nil
	}
	return true, nil
}
"#,
        r#"
package api

import (
	"net/http"
	"time"
)

type handler struct {
	onRequest func(RequestArgs)
}

func (h *handler) notifyRequest(took time.Duration, req *http.Request, status int) {
	if h.onRequest != nil {
		h.onRequest(RequestArgs{Path: req.URL.Path, Status: status, TimeInMS: int(took.Milliseconds())})
	}
}

func (h *handler) ServeHTTP(res http.ResponseWriter, req *http.Request) {
	start := time.Now()
	go h.notifyRequest(time.Since(start), req, http.StatusOK)
	res.WriteHeader(http.StatusOK)
}
"#,
        r#"
package mirror

import "io"

type Stream interface {
	io.ReadWriteCloser
	Headers() (map[string]string, error)
}

// Both halves end with the stream the caller handed in; the copier
// closes it on the way out, which every other user of it sees.
func Mirror(stream Stream) {
	go func() {
		io.Copy(stream, stream)
		stream.Close()
	}()
	go func() {
		for {
			if _, err := stream.Headers(); err != nil {
				return
			}
		}
	}()
}
"#,
        r#"
package beat

import "io"

type Session interface {
	Accept() (io.ReadWriter, error)
	Close() error
}

type Beat struct{ sess Session }

func (b *Beat) Start(s Session) {
	b.sess = s
	go b.answer()
}

// Runs until the session fails, and closes the session when it stops.
func (b *Beat) answer() {
	defer b.sess.Close()
	st, err := b.sess.Accept()
	if err != nil {
		return
	}
	buf := make([]byte, 4)
	for {
		if _, err := io.ReadFull(st, buf); err != nil {
			return
		}
		if _, err := st.Write(buf); err != nil {
			return
		}
	}
}
"#,
        r#"
package shell

import (
	"io"
	"os"

	"example.com/sshd"
)

func Serve() {
	sshd.Handle(func(s sshd.Session) {
		f, _ := os.Create("/tmp/typed")
		// stdin: ends when the server closes the session after this returns
		go func() {
			io.Copy(f, s)
		}()
		io.Copy(s, os.Stdin)
	})
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(UnjoinedGoroutine);

    #[test]
    fn a_server_is_stopped_before_it_is_waited_for() {
        let fixes = crate::testing::fixes(
            &UnjoinedGoroutine,
            Language::Go,
            r#"
package app

import (
	"net"
	"net/http"
	"os"
	"time"
)

func Start() {
	go http.ListenAndServe(":8080", nil)
}

func KeepAlive(conn net.Conn) {
	go func() {
		for {
			conn.Write([]byte("ping"))
			time.Sleep(30 * time.Second)
		}
	}()
}

func Flusher(f *os.File) {
	go func() {
		for range time.NewTicker(time.Second).C {
			f.Sync()
		}
	}()
}

func Save(path string, data []byte) {
	go func() {
		os.WriteFile(path, data, 0o644)
	}()
}
"#,
        );
        assert_eq!(fixes.len(), 4, "{fixes:#?}");
        for server in &fixes[..3] {
            assert!(server.contains("runs until shutdown"), "{server}");
            assert!(!server.contains("errgroup"), "{server}");
        }
        assert!(fixes[3].contains("errgroup"), "{}", fixes[3]);
    }
}
