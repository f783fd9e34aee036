//! JS001: a promise created in statement position and left floating.

use super::common;
use super::rejection::{
    guarded_callee, is_chain_link, local_callee, resolve_only_deferred, resolve_only_promise,
};
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::*;

pub struct FloatingPromise;

pub static META: RuleMeta = RuleMeta {
    id: "JS001",
    name: "floating-promise",
    category: Category::OrphanTask,
    severity: Severity::High,
    languages: &[Language::JavaScript, Language::TypeScript],
    summary: "A promise-returning call is made as a statement without `await`, `return`, `void` or a rejection handler; or a `.then()` chain has no `.catch()`.",
    docs: r#"
A call of an `async` function of the project (or one declared to return a
`Promise`, in source or in a `.d.ts`, or one that returns a promise
expression, across imports and `require`), or of a known promise API
(`fetch`, `fs/promises`, database and HTTP clients), used as a statement:
nobody awaits it, returns it or handles its rejection. Also `.then(onFulfilled)` chains with no `.catch()` and no
rejection callback, and async IIFEs (`(async () => { ... })()`) whose awaits
can reject with nothing to catch it (not in test code, where such an IIFE
runs a scripted peer or a consumer beside the test and a rejection is an
unhandled rejection of the test process, which the run reports; and not at the top level of a script,
where the IIFE, a `.then` chain, or a call like `main()`
is the program and a rejection ends it like a throw: a `#!` file, or a
file that exports nothing and is a test, sits in `examples/`,
`scripts/`, `bin/` or `benchmark/`, or is an `example.js` or `demo.js` outside `src/`,
`lib/` and `dist/`; also in such a script's signal handler,
`process.once('SIGINT', ..)`, where the process is on its way out). A `.catch()` given no handler handles
nothing and is reported too. Nor is a call given a Node-style callback
(a function whose first parameter is `err`, `error` or a name ending in
one, `joinError`, or one a helper makes: `sendCallback(res)`): it uses the
callback form of a dual API, which returns no promise to handle or one
whose outcome the callback also gets. Write `void promise` to discard one on purpose.
Not reported: a test's chain whose `.then` calls the test's own callback,
or hands it to a helper (`.then(() => done())`, `.then(() => finish(conn,
done))`: a rejection leaves `done` uncalled and the runner
fails the test), or ends a tap-style test (`tap.test('x', function (t) {
p.then(() => { client.bind(dn, pw, () => { ..; t.end() }) }) })`, also
from a callback the step hands on), or an assertion of a test that planned its count
(`t.plan(2)` ... `.then(() => t.assert.ok(..))`, or an async helper handed
that context, `publish(t, client, packet)`: a skipped assertion fails
the plan), type-level test files (`*.test-d.ts`, `*.tst.ts`, or a
file whose opening comment says it is checked with `tsc --noEmit`),
which the type checker reads and nothing runs, and chains on a deferred
that the file's classes settle only by resolving (`this.done.resolve(err)`
and never `.reject(..)`, read as `this.done` or as `feed.done`): it
cannot reject. Nor is a chain on a local that the function's body last
set, unconditionally, to a chain handling rejection (`promise =
promise.then(onOk, onErr); .. promise.finally(cb)`), nor `Promise.all`,
alone or chained, of promises that each handle their rejection (an array
of such chains, `items.map(i => load(i).catch(log))` also with a block
body and kept in a local, or a local array whose every `push` is one):
every element fulfills, so the whole does. The same holds for a `Map`
of deferreds that the file fills only with `new Promise(resolve => ..)`:
chains on what `map.get(k)` gives and `Promise.all([...map.values()])`.
A chain of Cypress commands (`cy.visit(url).get(sel).then(..)`) is no
promise, and Cypress reports its failures as the test's. A `new Promise(..)` statement
whose executor takes no `reject` (`new Promise(async (resolve) => { try {
.. } catch (e) { .. } resolve() })`) is not reported either, unless the
executor is async and awaits outside a `try`: then its own promise
rejects unhandled. Nor a chain on `Atomics.waitAsync(..).value`, which settles with `"ok"`
or `"timed-out"` and never rejects, nor anything in a file that installs
`process.on("unhandledRejection", ..)`: the program routes every such
rejection to its own handler. A
local or field the file only ever sets to a promise that cannot reject
(`Promise.resolve()`, `Promise.allSettled(..)`, `new Promise(resolve =>
..)`, also one naming a `reject` it never calls; clearing it to `null` aside, read through `this` or through
another object of the class, `client.drainPromise`) starts no rejecting
chain either. Nor does a call of an async function of the project, in
this file or another, that catches what it awaits: every `await` sits in
a `try` with a `catch`, or awaits another such function or a waiter with
no `reject` (`new Promise((resolve) => (this.wake = resolve))`) or a
`timers/promises` timer given no abort signal (`await wait(ms)`) or
`Promise.allSettled(..)` or a local the file only ever sets to a handled
promise (`await written` where `written = write(req).catch(reject)`),
and it throws outside none and hands on no
promise but one that cannot reject (a background watcher whose `catch`
logs or cleans up, sleeping through a helper `sleep(ms)` that returns a
`new Promise((resolve) => ..)`). The same goes for a plain function of
the project whose every `return` gives such a promise (`return
Promise.resolve()` after an in-memory update), that of such a function,
or a literal (`tryClose` gives `result.then(() => true, () => false)`,
or `true` when `close` is synchronous), or a field the file attaches a
rejection handler to (`initialize() { .. return this.stub }` beside
`this.stub.then(ok, onErr)`: a promise with a handler never goes
unhandled, whoever drops it),
and for a chain on either that only adds `.finally(..)` or an empty
`.then()`.

## Why

A floating promise runs unobserved: when it rejects, Node raises an
`unhandledRejection`, which terminates the process by default since Node 15
— at some later tick, far from the code that caused it. When it succeeds
late, the caller has already moved on (responded, closed the connection,
ended the test), so its work lands out of order or not at all. In a
browser page or worker (a file using `document`, `window` or
`importScripts` and nothing of Node's), the rejection is only logged to the
console: nothing crashes, but the error is lost, so the finding there is of
medium severity.

## Example

```javascript
async function auditLog(req) {
  await fetch("https://audit.example/log", { method: "POST" });
}

function handle(req) {
  auditLog(req);
  return process(req);
}
```

## Fix

Await it (or return it); collect concurrent work with `Promise.allSettled`
when one failure must not hide the others; mark a deliberate fire-and-forget
with `void` and a `.catch`.

```javascript
async function auditLog(req) {
  await fetch("https://audit.example/log", { method: "POST" });
}

async function handle(req) {
  const [audit, result] = await Promise.allSettled([auditLog(req), process(req)]);
  if (result.status === "rejected") throw result.reason;
  return result.value;
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for FloatingPromise {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        // The program routes every unhandled rejection to a handler of its
        // own (`process.on("unhandledRejection", ..)`): none goes unseen.
        if common::skip_file(cx) || common::routes_unhandled_rejections(cx) {
            return;
        }
        let start = out.len();
        self.find(cx, out);
        // In a browser an unhandled rejection is logged to the console and
        // the page goes on: the failure is lost, nothing crashes.
        if out.len() > start && common::browser_only(cx) {
            for f in &mut out[start..] {
                f.message = f
                    .message
                    .replace(
                        ", and that can crash the process",
                        ", which the browser only logs to the console",
                    )
                    .replace(
                        " that can crash the process",
                        " that the browser only logs to the console",
                    );
                f.severity = Severity::Medium;
            }
        }
    }
}

/// The call is a statement of a script's top level: the program itself,
/// where a rejection ends the process with the stack and a non-zero code,
/// as a top-level throw does. A script starts with `#!`, or exports nothing
/// and is a test file or sits in a folder of runnable programs
/// (`examples/`, `scripts/`, `bin/`).
///
/// So is a program's signal handler (`process.once('SIGINT', ..)`), where
/// the process is on its way out.
fn whole_program(cx: &FileCx, id: ExprId) -> bool {
    if !common::program_script(cx) {
        return false;
    }
    let f = cx.func_of(id);
    f.0 == 0
        || std::iter::once(f)
            .chain(cx.tree.func_ancestors(cx.model, f))
            .any(|g| signal_handler(cx, g))
}

/// `g` is the handler of `process.on('SIGTERM', g)` (or `once`).
fn signal_handler(cx: &FileCx, g: FuncId) -> bool {
    common::closure_call_site(cx, g).is_some_and(|(site, _)| {
        cx.call(site).is_some_and(|c| {
            matches!(c.name.as_str(), "on" | "once")
                && c.receiver.and_then(|r| cx.model.name_of(r)) == Some("process")
                && c.positional(0).is_some_and(
                    |a| matches!(cx.model.literal(a), Some(Lit::Str(s)) if s.starts_with("SIG")),
                )
        })
    })
}

impl FloatingPromise {
    fn find(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for (i, e) in cx.model.exprs.iter().enumerate() {
            let ExprKind::Call(c) = &e.kind else { continue };
            let id = ExprId(i as u32);
            if !cx.is_discarded(id) {
                continue;
            }
            // Comments that waive the finding are read only for a call that
            // would be reported: reading lines back is the costly part.
            let waived = || {
                common::eslint_disabled(cx, e.span, "no-floating-promises")
                    || common::eslint_disabled(cx, e.span, "catch-or-return")
                    || says_cannot_fail(cx, e.span)
            };
            if let Some(f) = check_chain(cx, id, c) {
                if !waived() && !completes_test(cx, id, c) && !whole_program(cx, id) {
                    out.push(f);
                }
                continue;
            }
            if let ExprKind::Closure(f) = cx.expr(cx.model.strip(c.func)).kind {
                // An async IIFE: only a problem when something in it can
                // reject; and not when it is the program itself (a script's
                // top level, `#!`): a rejection there ends the process with
                // the stack and a non-zero code, as a top-level throw does.
                // In a test, it runs a scripted peer or a consumer beside
                // the test body; a rejection there is an unhandled
                // rejection of the test process, which the run reports
                // (Node exits on one by default), not a silent loss.
                let ends_visibly = whole_program(cx, id) || common::in_test(cx, cx.func_of(id));
                if cx.func(f).is_async
                    && !ends_visibly
                    && common::unguarded_await(cx, f).is_some()
                    && !waived()
                {
                    out.push(cx.finding(
                        &META,
                        e.span,
                        "this async IIFE is called without `.catch()`: if an `await` in it rejects, the error becomes an unhandled rejection that can crash the process",
                        "wrap its body in `try`/`catch`, or append `.catch(handleError)` to the call",
                    ));
                }
                continue;
            }
            // `Promise.reject(err)` as a statement reports an error as an
            // unhandled rejection on purpose; `Promise.resolve()` does nothing.
            if matches!(
                c.target.as_deref(),
                Some("Promise.reject" | "Promise.resolve")
            ) {
                continue;
            }
            // `p.catch()` with no handler: the promise it returns rejects
            // with the same error, and nothing handles that one.
            if c.name == "catch"
                && c.args.is_empty()
                && let Some(r) = c.receiver
                && !cx
                    .call(cx.model.strip(r))
                    .is_some_and(|rc| guarded_callee(cx, rc))
                && let Some(what) = common::promise_expr(cx, r)
            {
                if !waived() {
                    out.push(cx.finding(
                        &META,
                        e.span,
                        format!(
                            "`.catch()` is given no handler, so it handles nothing: `{}` ({what}) still rejects unhandled, and that can crash the process",
                            cx.snippet(cx.expr(r).span)
                        ),
                        "pass the handler: `.catch((err) => log(err))` (or `.catch(() => {})` to ignore the failure on purpose)",
                    ));
                }
                continue;
            }
            // `new Promise(async (resolve) => { try { .. } catch (e) { .. }
            // resolve() })`: an executor with no `reject` to call. (An
            // async executor's own promise, which nothing handles, rejects
            // on an `await` outside a `try`: that one still counts.)
            if c.is_new
                && c.target.as_deref() == Some("Promise")
                && c.positional(0)
                    .and_then(|a| common::callback_fn(cx, a))
                    .is_some_and(|exec| {
                        crate::index::executor_never_rejects(cx.model, exec)
                            && (!cx.func(exec).is_async
                                || common::unguarded_await(cx, exec).is_none())
                    })
            {
                continue;
            }
            if guarded_callee(cx, c) || settles_elsewhere(cx, c) || all_of_handled(cx, c) {
                continue;
            }
            if let Some(what) = common::promise_call(cx, c)
                && !waived()
                && !whole_program(cx, id)
                && !completes_test(cx, id, c)
            {
                out.push(cx.finding(
                    &META,
                    e.span,
                    format!(
                        "`{}` returns a promise ({what}) that is neither awaited, returned nor given a rejection handler: a rejection becomes an unhandled rejection that can crash the process later, and the caller continues before the work is done",
                        callee_text(cx, c)
                    ),
                    "`await` it (or `return` it); if it really must run in the background, write `void promise.catch(handleError)`",
                ));
            }
        }
    }
}

/// The comment right above the statement says it cannot fail ("should not
/// error", "never rejects"): the author considered it.
fn says_cannot_fail(cx: &FileCx, span: Span) -> bool {
    let before = &cx.text[..(span.start as usize).min(cx.text.len())];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let above = &before[..line_start.saturating_sub(1).min(before.len())];
    let prev = above
        .rsplit('\n')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    prev.starts_with("//")
        && [
            "should not error",
            "should not reject",
            "should not throw",
            "never rejects",
            "never throws",
            "cannot reject",
            "can't reject",
            "won't reject",
        ]
        .iter()
        .any(|w| prev.contains(w))
}

/// The call is handed the `resolve`/`reject` of an enclosing promise (or a
/// completion callback): its outcome is routed through them.
fn settles_elsewhere(cx: &FileCx, c: &Call) -> bool {
    // A Node-style callback (`(err, value) => ..`) last: the callback form
    // of a dual API (`load(key, opts, cb)` returns a promise only without
    // one).
    common::node_callback_last(cx, c)
        || c.args.iter().any(|a| {
            let text = cx.source(cx.expr(a.value).span);
            let last = text.rsplit('.').next().unwrap_or(text);
            matches!(last, "resolve" | "reject" | "callback" | "cb" | "done")
        })
}

/// `resolved` (or `this.settled`, or `client.settled` where the class sets
/// `this.settled`) where every assignment of it in the file but a `null`
/// gives a promise that cannot reject: `Promise.resolve(...)`,
/// `Promise.allSettled(...)`, or `new Promise(resolve => ...)` with no
/// `reject` parameter.
/// A local whose last assignment before this use, a statement of the
/// function's own body (so it always ran), gives it a chain that handles
/// rejection (`promise = promise.then(onOk, onErr)`, `p = p.catch(log)`):
/// what is chained onto it afterwards starts from a promise that cannot
/// reject.
fn reassigned_handled(cx: &FileCx, r: ExprId) -> bool {
    let r = cx.model.strip(r);
    let Some(name) = cx.model.name_of(r) else {
        return false;
    };
    let f = cx.func_of(r);
    let at = cx.expr(r).span.start;
    let last = cx
        .func(f)
        .body
        .iter()
        .copied()
        .filter(|&s| cx.stmt(s).span.end <= at)
        .filter_map(|s| match &cx.stmt(s).kind {
            StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } if targets.iter().any(|&t| cx.model.name_of(t) == Some(name)) => Some(*v),
            StmtKind::Expr(e) => match &cx.expr(*e).kind {
                ExprKind::AssignExpr { target, value, .. }
                    if cx.model.name_of(*target) == Some(name) =>
                {
                    Some(*value)
                }
                _ => None,
            },
            _ => None,
        })
        .last();
    // No other assignment in the function between that one and this use.
    let after = last.map_or(u32::MAX, |v| cx.expr(v).span.end);
    let between = |sp: unsnarl_model::Span| sp.start > after && sp.start < at;
    let later = cx.model.exprs.iter().enumerate().any(|(i, e)| {
        matches!(&e.kind, ExprKind::AssignExpr { target, .. } if cx.model.name_of(*target) == Some(name))
            && cx.func_of(ExprId(i as u32)) == f
            && between(e.span)
    }) || cx.model.stmts.iter().enumerate().any(|(i, st)| {
        matches!(&st.kind, StmtKind::Assign { targets, .. }
            if targets.iter().any(|&t| cx.model.name_of(t) == Some(name)))
            && cx.tree.stmt_func(StmtId(i as u32)) == f
            && between(st.span)
    });
    last.is_some_and(|v| handled_chain(cx, v)) && !later
}

fn resolved_promise_var(cx: &FileCx, r: ExprId) -> bool {
    let Some(name) = cx.model.dotted(r) else {
        return false;
    };
    if resolve_only_deferred(cx, &name) {
        return true;
    }
    // `Promise.resolve()`, or the `resolve()` of a promise constructor kept
    // under another name (`NativePromise.resolve()`).
    let cannot_reject = |v: ExprId| {
        resolve_only_promise(cx, v)
            || cx.call(cx.model.strip(v)).is_some_and(|c| {
                c.name == "get"
                    && c.receiver
                        .and_then(|r| cx.model.dotted(r))
                        .is_some_and(|m| map_of_resolving(cx, &m))
            })
            || cx.call(cx.model.strip(v)).is_some_and(|c| {
                matches!(
                    c.target.as_deref(),
                    Some("Promise.resolve" | "Promise.allSettled")
                ) || (c.name == "resolve"
                    && c.receiver
                        .and_then(|r| cx.model.dotted(r))
                        .is_some_and(|d| d.ends_with("Promise")))
            })
    };
    // The same field set through `this` by its class (`client.drainPromise`
    // read where the class sets `this.drainPromise`).
    let own_field = name
        .rsplit_once('.')
        .map(|(_, field)| format!("this.{field}"));
    let is_it = |t: ExprId| {
        let d = cx.model.dotted(t);
        d.as_deref() == Some(name.as_str()) || (d.is_some() && d == own_field)
    };
    // `this.queue = this.queue.then(() => new Promise(resolve => ..))`: a
    // link added to itself whose step only gives a promise that cannot
    // reject either.
    let extends_itself = |v: ExprId| {
        cx.call(cx.model.strip(v)).is_some_and(|c| {
            c.name == "then"
                && c.args.len() == 1
                && c.receiver.is_some_and(is_it)
                && common::callback_fn(cx, c.args[0].value).is_some_and(|f| {
                    let returns: Vec<ExprId> = cx
                        .body_stmts(f)
                        .iter()
                        .filter_map(|&st| match cx.stmt(st).kind {
                            StmtKind::Return(Some(r)) => Some(r),
                            _ => None,
                        })
                        .collect();
                    !returns.is_empty() && returns.iter().all(|&r| resolve_only_promise(cx, r))
                })
        })
    };
    // Clearing it (`this.pending = null`) stores no promise.
    crate::util::every_assigned_value(cx.model, is_it, |v| cannot_reject(v) || extends_itself(v))
}

/// A `Map` of deferreds that only ever resolve: every `map.set(k, v)` of
/// the file stores a `new Promise(resolve => ..)`, directly or through a
/// local bound only to one (or to what the map already held:
/// `let p = map.get(k); if (!p) { p = new Promise(r => ..); map.set(k, p) }`).
fn map_of_resolving(cx: &FileCx, map: &str) -> bool {
    let from_map = |v: ExprId| {
        cx.call(cx.model.strip(v)).is_some_and(|g| {
            g.name == "get" && g.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some(map)
        })
    };
    let mut any = false;
    for (i, x) in cx.model.exprs.iter().enumerate() {
        let ExprKind::Call(c) = &x.kind else { continue };
        if c.name != "set" || c.receiver.and_then(|r| cx.model.dotted(r)).as_deref() != Some(map) {
            continue;
        }
        let Some(v) = c.positional(1) else {
            return false;
        };
        let f = cx.func_of(ExprId(i as u32));
        let ok = resolve_only_promise(cx, v)
            || cx.model.name_of(cx.model.strip(v)).is_some_and(|n| {
                only_ever_set_to(cx, f, n, |w| resolve_only_promise(cx, w) || from_map(w))
            });
        if !ok {
            return false;
        }
        any = true;
    }
    any
}

/// A chain whose fulfilment handler takes the error (`.then((err) => { if
/// (err) .. })`): the promise reports failure by resolving with it.
fn resolves_with_error(cx: &FileCx, c: &Call) -> bool {
    c.name == "then"
        && c.args.len() == 1
        && c.positional(0)
            .and_then(|a| common::callback_fn(cx, a))
            .and_then(|f| cx.func(f).params.first())
            .is_some_and(|p| matches!(p.name.as_str(), "err" | "error"))
}

/// `Atomics.waitAsync(..).value`, or `result.value` for a local `result`
/// only ever set to one: the promise settles with `"ok"` or `"timed-out"`
/// and has no way to reject.
fn wait_async_value(cx: &FileCx, r: ExprId) -> bool {
    let r = cx.model.strip(r);
    let ExprKind::Attr {
        obj: value, name, ..
    } = &cx.expr(r).kind
    else {
        return false;
    };
    if name.as_str() != "value" {
        return false;
    }
    let is_wait_async = |v: ExprId| {
        cx.call(cx.model.strip(v))
            .is_some_and(|c| c.target.as_deref() == Some("Atomics.waitAsync"))
    };
    if is_wait_async(*value) {
        return true;
    }
    let Some(name) = cx.model.name_of(*value) else {
        return false;
    };
    only_ever_set_to(cx, cx.func_of(r), name, is_wait_async)
}

/// The function assigns the local `name` at least once, and every time to
/// a value `is` accepts.
fn only_ever_set_to(cx: &FileCx, f: FuncId, name: &str, is: impl Fn(ExprId) -> bool) -> bool {
    let mut assigned = false;
    for s in common::stmts_of(cx, f) {
        if let StmtKind::Assign { targets, value, .. } = &cx.stmt(s).kind
            && targets.iter().any(|&t| cx.model.name_of(t) == Some(name))
        {
            if !value.is_some_and(&is) {
                return false;
            }
            assigned = true;
        }
    }
    assigned
}

/// Every link of the chain starting at `id` is `.finally(...)`, or a
/// `.then()` with no callback (which passes the value on, and cannot throw).
fn only_finally(cx: &FileCx, id: ExprId) -> bool {
    let mut cur = cx.call(id);
    while let Some(c) = cur {
        if !is_chain_link(c) {
            return true;
        }
        if c.name != "finally" && !(c.name == "then" && c.args.is_empty()) {
            return false;
        }
        cur = c.receiver.and_then(|r| cx.call(cx.model.strip(r)));
    }
    true
}

/// The root of a chain is a promise that only ever resolves: a sleep
/// (`sleep(ms)`, `delay(ms)`, `timers/promises.setTimeout`) or a function
/// of this file that returns a `new Promise` whose executor takes no
/// `reject`.
fn never_rejects(cx: &FileCx, c: &Call) -> bool {
    let l = c.name.to_ascii_lowercase();
    // Called bare or through its module (`require_utils.sleep(ms)` in
    // CommonJS output is `sleep(ms)` in the ES module build).
    let through_module = c.receiver.is_none_or(|r| {
        matches!(
            &cx.expr(cx.model.strip(r)).kind,
            ExprKind::Name {
                resolved: Some(_),
                ..
            }
        )
    });
    if through_module && (l.ends_with("sleep") || l.ends_with("delay")) {
        return true;
    }
    if c.target.as_deref() == Some("timers/promises.setTimeout") {
        return true;
    }
    let Some(f) = local_callee(cx, c) else {
        // A plain function of another file of the project whose every
        // `return` gives a promise that cannot reject (`return new
        // Promise(res => requestIdleCallback(res))`, or a wait helper's).
        return c.target.as_deref().is_some_and(|t| {
            cx.index.resolve(cx.lang, t, cx.file).is_some_and(|i| {
                let s = cx.index.summary(i);
                !s.is_async && s.never_rejects
            })
        });
    };
    if cx.func(f).is_async {
        return false;
    }
    let mut any = false;
    for s in common::stmts_of(cx, f) {
        if let StmtKind::Return(Some(v)) = cx.stmt(s).kind {
            if !resolve_only_promise(cx, v) {
                return false;
            }
            any = true;
        }
    }
    any
}

/// A chain that handles rejection at its end: `p.then(ok, onErr)`,
/// `p.catch(log)`. It cannot reject (bar a throwing handler).
fn handled_chain(cx: &FileCx, e: ExprId) -> bool {
    cx.call(cx.model.strip(e)).is_some_and(|c| {
        is_chain_link(c)
            && ((c.name == "then" && c.args.len() >= 2)
                || (c.name == "catch" && !c.args.is_empty()))
    })
}

/// `Promise.all(xs)` (or a library's `all`) over promises that each handle
/// their own rejection: an array literal of such chains, `items.map(i =>
/// f(i).catch(log))`, or a local array made empty whose every `push` is
/// one. Each element fulfills, so the combined promise does too.
fn all_of_handled(cx: &FileCx, c: &Call) -> bool {
    if c.name != "all" || c.receiver.is_none() {
        return false;
    }
    let Some(arg) = c.positional(0).map(|a| cx.model.strip(a)) else {
        return false;
    };
    // `[...deferreds.values()]` of a map of resolving deferreds counts too.
    let resolving_values = |x: ExprId| {
        matches!(cx.expr(x).kind, ExprKind::Spread(inner)
        if cx.call(cx.model.strip(inner)).is_some_and(|k| {
            k.name == "values"
                && k.receiver
                    .and_then(|r| cx.model.dotted(r))
                    .is_some_and(|m| map_of_resolving(cx, &m))
        }))
    };
    let literal_of_handled = |v: ExprId| {
        matches!(&cx.expr(cx.model.strip(v)).kind, ExprKind::Collection { kind: CollKind::List, elems, .. }
            if elems.iter().all(|&x| handled_chain(cx, x) || resolving_values(x)))
    };
    let spread_of_resolving = |v: ExprId| {
        matches!(&cx.expr(cx.model.strip(v)).kind, ExprKind::Collection { kind: CollKind::List, elems, .. }
            if !elems.is_empty() && elems.iter().all(|&x| resolving_values(x)))
    };
    if literal_of_handled(arg) {
        return true;
    }
    // `items.map(i => f(i).catch(log))`, or a callback with a block body
    // whose every `return` gives such a chain.
    let map_of_handled = |v: ExprId| {
        let Some(m) = cx.call(cx.model.strip(v)).filter(|m| m.name == "map") else {
            return false;
        };
        let Some(cb) = m.positional(0).and_then(|a| common::callback_fn(cx, a)) else {
            return false;
        };
        let returns: Vec<Option<ExprId>> = common::stmts_of(cx, cb)
            .filter_map(|s| match cx.stmt(s).kind {
                StmtKind::Return(v) => Some(v),
                _ => None,
            })
            .collect();
        !returns.is_empty()
            && returns
                .iter()
                .all(|v| v.is_some_and(|v| handled_chain(cx, v)))
    };
    if cx.call(arg).is_some() {
        return map_of_handled(arg);
    }
    // `const dl = []; ... dl.push(call().then(ok, err)); ... all(dl)`.
    let Some(name) = cx.model.name_of(arg) else {
        return false;
    };
    if cx.model.resolved(arg).is_some() {
        return false;
    }
    let f = cx.func_of(arg);
    // `const ps = items.map(s => { ..; return s.delete().catch(keep) })`.
    let set_to_map = only_ever_set_to(cx, f, name, map_of_handled)
        || only_ever_set_to(cx, f, name, spread_of_resolving);
    if !set_to_map && !only_ever_set_to(cx, f, name, literal_of_handled) {
        return false;
    }
    // Pushes may sit in callbacks of the function (`items.forEach(i =>
    // dl.push(..))`).
    let exprs: Vec<ExprId> = cx
        .with_nested(f)
        .into_iter()
        .flat_map(|g| cx.body_exprs(g).iter().copied())
        .collect();
    let mut pushed = false;
    for e in &exprs {
        let Some(k) = cx.call(*e) else { continue };
        if k.receiver.and_then(|r| cx.model.name_of(r)) != Some(name) {
            continue;
        }
        match k.name.as_str() {
            "push" | "unshift" => {
                if !k.args.iter().all(|a| handled_chain(cx, a.value)) {
                    return false;
                }
                pushed = true;
            }
            "map" | "forEach" | "filter" | "slice" | "includes" | "indexOf" => {}
            _ => return false,
        }
    }
    // Handed to other code, it could receive anything.
    let handed_on = exprs.iter().any(|&e| {
        cx.call(e).is_some_and(|k| {
            k.name != "all"
                && k.args
                    .iter()
                    .any(|a| cx.model.name_of(cx.model.strip(a.value)) == Some(name))
        })
    });
    (pushed || set_to_map) && !handed_on
}

fn callee_text(cx: &FileCx, c: &Call) -> String {
    let s = cx.source(cx.expr(c.func).span);
    let s: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.len() > 60 {
        format!("{}…", &s[..s.floor_char_boundary(57)])
    } else {
        s
    }
}

/// A `.then(...)` / `.finally(...)` chain used as a statement with no
/// rejection handler anywhere in it.
/// A test's chain that ends by calling the test's own callback (`(t, done)
/// => { p.then(() => done()) }`) or ending a tap-style test (`t.end()`):
/// if the promise rejects, the test never ends and the runner fails it, so
/// the rejection is not lost.
fn completes_test(cx: &FileCx, id: ExprId, c: &Call) -> bool {
    let outer = cx.func_of(id);
    if !common::in_test(cx, outer) {
        return false;
    }
    let callbacks: Vec<&str> = cx
        .tree
        .func_ancestors(cx.model, outer)
        .flat_map(|f| cx.func(f).params.iter().map(|p| p.name.as_str()))
        .collect();
    let is_callback = |e: ExprId| cx.model.name_of(e).is_some_and(|n| callbacks.contains(&n));
    // A test context that counts its assertions (`t.plan(2)`): an assertion
    // a rejection skips fails the test as surely as a missed `done`.
    let planned: Vec<&str> = cx
        .tree
        .func_ancestors(cx.model, outer)
        .flat_map(|f| {
            cx.func(f)
                .params
                .iter()
                .map(|p| p.name.as_str())
                .filter(move |&p| {
                    cx.body_calls(f).any(|e| {
                        let k = cx.call(e).unwrap();
                        k.name == "plan" && k.receiver.and_then(|r| cx.model.name_of(r)) == Some(p)
                    })
                })
        })
        .collect();
    let asserts_on_plan = |k: &Call| {
        k.receiver
            .and_then(|r| common::root_name(cx, r))
            .is_some_and(|n| planned.contains(&n))
    };
    // A helper handed the planned context (`publish(t, client, packet)`)
    // asserts on it: a rejection skips those assertions and fails the plan.
    if c.args.iter().any(|a| {
        cx.model
            .name_of(a.value)
            .is_some_and(|n| planned.contains(&n))
    }) {
        return true;
    }
    // The context of a tap-style test (`tap.test('x', function (t) {..})`),
    // which the test ends itself with `t.end()`.
    let contexts: Vec<&str> = cx
        .tree
        .func_ancestors(cx.model, outer)
        .filter(|&f| {
            common::closure_call_site(cx, f)
                .is_some_and(|(site, _)| cx.call(site).is_some_and(|k| k.name == "test"))
        })
        .filter_map(|f| cx.func(f).params.first().map(|p| p.name.as_str()))
        .collect();
    let ends_test = |k: &Call| {
        k.name == "end"
            && k.args.is_empty()
            && k.receiver
                .and_then(|r| cx.model.name_of(r))
                .is_some_and(|n| contexts.contains(&n))
    };
    let mut cur = Some(c);
    while let Some(call) = cur {
        if call.name == "then"
            && call.args.first().is_some_and(|a| {
                // `done`, or a planned assertion handed as the step
                // (`.then(t.pass.bind(t))`, `.then(t.pass)`).
                if is_callback(a.value)
                    || common::root_name(cx, a.value).is_some_and(|n| planned.contains(&n))
                {
                    return true;
                }
                let ExprKind::Closure(f) = cx.expr(cx.model.strip(a.value)).kind else {
                    return false;
                };
                // `done()`, `finish(conn, done)` (a helper handed it), a
                // planned assertion or `t.end()`, also in a callback the
                // step hands on (`client.bind(dn, pw, (err) => { ..;
                // t.end() })`) or an arrow's value (`res =>
                // t.assert.ok(res)`): it runs only if the step does.
                cx.with_nested(f).into_iter().any(|g| {
                    cx.body_calls(g).any(|e| {
                        cx.call(e).is_some_and(|k| {
                            is_callback(k.func)
                                || k.args.iter().any(|a| is_callback(a.value))
                                || asserts_on_plan(k)
                                || ends_test(k)
                        })
                    })
                })
            })
        {
            return true;
        }
        cur = call.receiver.and_then(|r| cx.call(cx.model.strip(r)));
    }
    false
}

/// `cy.visit(url).get(sel).then(..)`: a chain of Cypress commands, which
/// Cypress queues and whose failures it reports as the test's, not a
/// promise (its `.then` takes no rejection handler at all).
fn cypress_chain(cx: &FileCx, c: &Call) -> bool {
    let mut cur = c.receiver;
    while let Some(r) = cur.map(|r| cx.model.strip(r)) {
        if cx.model.name_of(r) == Some("cy") {
            return true;
        }
        cur = cx.call(r).and_then(|k| k.receiver);
    }
    false
}

fn check_chain(cx: &FileCx, id: ExprId, c: &Call) -> Option<Finding> {
    if !matches!(c.name.as_str(), "then" | "finally")
        || c.receiver.is_none()
        || own_then_method(cx, c)
        || cypress_chain(cx, c)
    {
        return None;
    }
    let mut cur = Some((id, c));
    while let Some((cid, call)) = cur {
        match call.name.as_str() {
            "catch" if !call.args.is_empty() => return None,
            "then" if call.args.len() >= 2 => return None,
            _ => {}
        }
        // A local or field only ever assigned a promise that cannot reject.
        if call.receiver.is_some_and(|r| {
            resolved_promise_var(cx, r) || reassigned_handled(cx, r) || wait_async_value(cx, r)
        }) || resolves_with_error(cx, call)
        {
            return None;
        }
        // `Promise.allSettled(...)` and `Promise.resolve(x)` never reject,
        // nor does an async function of the project that catches everything
        // (only a throwing callback could, and `finally` callbacks rarely do).
        if matches!(
            call.target.as_deref(),
            Some("Promise.allSettled" | "Promise.resolve")
        ) || (!is_chain_link(call) && never_rejects(cx, call))
            || all_of_handled(cx, call)
            // `new Promise(resolve => ..).then(..)`: nothing can reject it.
            || (call.is_new && resolve_only_promise(cx, cid))
            || (guarded_callee(cx, call) && only_finally(cx, id))
        {
            return None;
        }
        cur = call
            .receiver
            .map(|r| cx.model.strip(r))
            .and_then(|r| cx.call(r).map(|rc| (r, rc)));
    }
    Some(cx.finding(
        &META,
        cx.expr(id).span,
        "this promise chain has no rejection handler (`.catch()` or a second `.then` argument): if any step rejects, the error surfaces as an unhandled rejection that can crash the process",
        "end the chain with `.catch(err => ...)`, or `await` it inside a `try`",
    ))
}

/// `this.then(step)` in a class or prototype of this file that defines a
/// `then` of its own (`Breeze.prototype.then = function (next) { ..
/// }`): a step queue or builder that only looks like a promise, whose
/// `then` returns the object and rejects nothing.
fn own_then_method(cx: &FileCx, c: &Call) -> bool {
    let mut base = c;
    while let Some(inner) = base
        .receiver
        .and_then(|r| cx.call(cx.model.strip(r)))
        .filter(|k| k.receiver.is_some())
    {
        base = inner;
    }
    base.receiver
        .is_some_and(|r| cx.model.name_of(cx.model.strip(r)) == Some("this"))
        && matches!(base.name.as_str(), "then" | "finally")
        && common::functions_ending_with(cx, &base.name)
            .next()
            .is_some()
}

pub static EXAMPLES: Examples = Examples {
    language: Language::JavaScript,
    fail: &[
        r#"
// file: src/utils/promise.ts
export function idleThenFetch(url) {
  return new Promise((res) => requestIdleCallback(() => res())).then(() => fetch(url));
}

// file: src/utils/index.ts
export * from "./promise.ts";

// file: src/buffer.ts
import { idleThenFetch } from "./utils/index.ts";

export class ChangeBuffer {
  add(url) {
    idleThenFetch(url).then((r) => this.store(r)); // expect
  }
}
"#,
        r#"
// file: src/utils.ts
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    signal.addEventListener("abort", () => reject(new Error("aborted")));
    setTimeout(resolve, ms);
  });
}

// file: src/downloader.ts
import { sleep } from "./utils";

export class KeyDownloader {
  private stopped = false;
  private abort = new AbortController();

  public onKeyRequested(): void {
    this.downloadLoop(); // expect
  }

  private async downloadLoop(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.fetchNext();
      } catch (e) {
        console.warn("download failed, backing off", e);
        await sleep(5000, this.abort.signal);
      }
    }
  }

  private async fetchNext(): Promise<void> {}
}
"#,
        r#"
async function decryptAll(events) {
  await Promise.all(events.map((e) => e.decrypt()));
}

class Capabilities {
  start() {
    this.poll().then(); // expect
  }

  poll = async () => {
    await this.fetchCapabilities();
    this.timer = setTimeout(this.poll, 60000);
  };
}

function onSync(events) {
  decryptAll(events); // expect
}
"#,
        r#"
// file: src/worker.js
function makeDeferred() {
  let fns = {};
  const p = new Promise((resolve, reject) => {
    fns = { resolve, reject };
  });
  return Object.assign(p, fns);
}

class Worker {
  constructor(bus) {
    this.bus = bus;
    this.finished = makeDeferred();
  }

  stop(err) {
    Promise.allSettled(this.bus.drains()).then(() => {
      this.finished.reject(err);
    });
    return this.finished;
  }

  watch(sub) {
    sub.onError = (err) => {
      this.stop(err); // expect
    };
    sub.onGone = () => {
      this.stop(new Error("subscription gone")).catch(); // expect
    };
    this.finished.then(() => sub.unsubscribe()); // expect
  }
}

function report(conn) {
  conn.closed().then((err) => {
    if (err) {
      console.error(`connection closed: ${err.message}`);
    }
  });
}
// file: src/worker.d.ts
export declare class Worker {
    constructor(bus: any);
    stop(err?: Error): Promise<Error | null>;
    watch(sub: any): void;
}
"#,
        r#"
class KeyWatcher {
  constructor(paths) {
    this.loaded = Promise.all(paths.map((p) => readFile(p)));
    this.loaded.then(([cert, key]) => this.apply(cert, key)); // expect
  }
}

class Client {
  constructor(backend) {
    this.ready = new Promise((resolve, reject) => {
      backend.once("ready", resolve);
      backend.once("error", reject);
    });
  }
  onReady(cb) {
    this.ready.then(() => cb()); // expect
  }
}
"#,
        r#"
// file: test/lookup.test.js
const test = require("node:test");

test("done is called before the chain settles", (t, done) => {
  lookup("abc").then((n) => { // expect
    assert.strictEqual(n, 3);
  });
  done();
});
"#,
        r#"
async function auditLog(req) {
  await fetch("/audit");
}

function handle(req) {
  auditLog(req); // expect
  fetch("/ping"); // expect
  return process(req);
}
"#,
        r#"
import { writeFile } from "node:fs/promises";

export function save(data) {
  writeFile("/tmp/out.json", JSON.stringify(data)); // expect
}
"#,
        r#"
const nodemailer = require("nodemailer");
const User = require("./models/user");

const transporter = nodemailer.createTransport({ host: "smtp.example" });

function onSignup(user) {
  transporter.sendMail({ to: user.email, subject: "Welcome" }); // expect
  User.updateOne({ _id: user.id }, { welcomed: true }); // expect
  Object.create(null);
}
"#,
        r#"
function load() {
  fetch("/data").then(r => r.json()).then(show); // expect
  fetch("/more").then(r => r.json()).finally(done); // expect
}
"#,
        r#"
async function main() {
  await migrate();
}

(async () => { // expect
  await main();
})();
"#,
        r#"
// file: src/db.ts
export async function saveUser(u: User): Promise<void> {
  await db.insert(u);
}
// file: src/handler.ts
import { saveUser } from "./db";

export function onSignup(u: User) {
  saveUser(u); // expect
}
"#,
        r#"
// file: test/reply.test.js
const { test } = require("node:test");

test("reply resolves", (t) => {
  const reply = makeReply();
  reply.send("ok").then(() => { // expect
    t.assert.ok("resolved");
  });
});
"#,
        r#"
async function closeAll(conn) {
  await conn.drain();
  throw new Error("drain failed");
}

function onError(conn) {
  closeAll(conn).catch(); // expect
  fetch("/beacon").then(() => {}).catch(); // expect
  closeAll(conn).catch(() => {});
}
"#,
        r#"
async function getUser(id) {
  return db.users.get(id);
}

function touch(id) {
  getUser(id); // expect
}
"#,
        r#"
function deferred() {
  let settle = {};
  const p = new Promise((resolve, reject) => {
    settle = { resolve, reject };
  });
  return Object.assign(p, settle);
}

class Feed {
  constructor() {
    this.done = deferred();
  }
  stop(err) {
    if (err) this.done.reject(err);
    else this.done.resolve();
  }
}

async function watch(bus, subject) {
  const feed = new Feed();
  const sub = await bus.subscribe(subject, (m) => feed.push(m));
  feed.done.then(() => { // expect
    sub.unsubscribe();
  });
  return feed;
}
"#,
        r#"
// file: examples/publisher.js
const broker = require("../lib/client");

// A module others import: its IIFE runs at import time.
(async () => { // expect
  const conn = await broker.open("tcp://localhost:4000");
  await conn.channel();
})();

module.exports = { broker };
"#,
        r#"
// file: shared/load.js
export function loadBody(data, key, options, callback) {
  if (!callback) {
    return new Promise((resolve, reject) => {
      loadBody(data, key, options, (err, v) => (err ? reject(err) : resolve(v)));
    });
  }
  setImmediate(() => callback(null, data[key]));
}

// file: mailer/preload.js
import { loadBody } from "../shared/load.js";

export function warm(data) {
  loadBody(data, "html", {}); // expect
}
"#,
        r#"
// file: lib/burst.js
const Throttle = require("./throttle");

const throttle = new Throttle({ tokens: 2 });
throttle.run(async () => "x").then((x) => process.stdout.write(x)); // expect

module.exports = throttle;

// file: lib/throttle.js
module.exports = class Throttle {
  async run(fn) {
    return fn();
  }
};
"#,
        r#"
function fromPromise(promise, push) {
  promise = promise.then(function (value) {
    setImmediate(function () { push(null, value); });
    return null;
  });
  if (typeof promise.finally === "function") {
    promise.finally(function () { // expect
      setImmediate(function () { push(null, null); });
    });
  }
}
module.exports = fromPromise;
"#,
        r#"
function runAll(session, conn, procs) {
  const dl = [];
  for (const p of procs) {
    dl.push(session.call(p).then((res) => console.log("ok", res)));
  }
  Promise.all(dl).then(() => { // expect
    conn.close();
  });
}
"#,
        r#"
const fs = require("fs");

function load(path, run) {
  new Promise((resolve, reject) => { // expect
    fs.readFile(path, (err, data) => (err ? reject(err) : resolve(data)));
  }).then((data) => run(data));
}
"#,
        r#"
class Pool {
  destroy(resource) {
    return this.destroyer(resource).then(() => {
      this.pending -= 1;
    });
  }

  reap(idle) {
    for (const r of idle) {
      this.destroy(r); // expect
    }
  }
}
"#,
        r#"
class Client {
  send(msg) {
    this.inFlight += 1;
    if (!this.drainPromise) {
      this.drainPromise = this.socket.flushAsync();
    }
    this.socket.send(msg, () => {
      this.inFlight -= 1;
      if (this.inFlight === 0 && this.drainResolve) {
        this.drainResolve();
        this.drainPromise = null;
      }
    });
  }
}

function whenDrained(client, done) {
  client.drainPromise.then(done); // expect
}
"#,
        r#"
const { listen } = require("./listen");

const channels = new Map();
function onclose() {
  for (const [name, listeners] of channels) {
    channels.delete(name);
    Promise.all(listeners.map((l) => listen(name, l))); // expect
  }
}
module.exports = { onclose };

// file: listen.js
async function listen(name, l) {
  await l.connection.query(`listen ${name}`);
}
module.exports = { listen };
"#,
        r#"
const fsp = require("fs/promises");

function waitFor(path, done) {
  const result = { value: fsp.readFile(path) };
  result.value.then((res) => done(null, res)); // expect
}
module.exports = { waitFor };
"#,
        r#"
export function deleteFiles(files, opts, cb) {
  const deletions = files.map((file) => {
    const o = { ...opts, ifGenerationMatch: file.generation };
    return file.delete(o);
  });
  Promise.all(deletions).then((results) => cb(results)); // expect
}
"#,
        r#"
export class EventStream {
  tapped = new Map();

  tap(runId, url) {
    let p = this.tapped.get(runId);
    if (p === undefined) {
      p = fetch(url);
      this.tapped.set(runId, p);
    }
    return p;
  }

  sendEnd(runId, payload) {
    const p = this.tapped.get(runId);
    if (p !== undefined) p.then(() => this.send(payload)); // expect
  }

  finish() {
    const pending = [...this.tapped.values()];
    Promise.all(pending).finally(() => this.close()); // expect
  }
}
"#,
        r#"
// file: src/kill.js
import { setTimeout } from "node:timers/promises";
import { finished } from "node:stream/promises";

export const killAfter = async (kill, delay, signal) => {
  await setTimeout(delay, undefined, { signal });
  kill("SIGKILL");
};

export const drain = async (stream) => {
  await finished(stream);
};

export const onDone = async (stream, out) => {
  try {
    await finished(stream);
    out.end();
  } catch (error) {
    await drain(stream);
    out.destroy(error);
  }
};
// file: src/run.js
import { killAfter, onDone } from "./kill.js";

export function stop(proc, stream, out, signal) {
  proc.kill("SIGTERM");
  killAfter((s) => proc.kill(s), 5000, signal); // expect
  onDone(stream, out); // expect
}
"#,
        r#"
class Pool {
  constructor() {
    this.status = "open";
    this.pending = [];
    this.bgHandler(); // expect
  }

  async bgHandler() {
    while (this.status === "open") {
      const request = this.pending.shift();
      if (request) {
        try {
          await this.serve(request);
        } catch (err) {
          request.fail(err);
        }
      } else {
        await new Promise((resolve, reject) => {
          this.wake = resolve;
          this.abort = reject;
        });
      }
    }
    this.closed();
  }
}
"#,
        r#"
export function handle(request) {
  return new Promise((_resolve, _reject) => {
    let written = undefined;
    const reject = async (err) => {
      await written;
      _reject(err);
    };
    const req = send(request, _resolve);
    written = writeBody(req, request.body);
    if (request.signal?.aborted) {
      reject(new Error("aborted")); // expect
    }
  });
}
"#,
        r#"
// file: test/qos1.test.js
const { test } = require("node:test");

async function publish(t, client, packet) {
  client.write(packet);
  const ack = await client.next();
  t.assert.equal(ack.messageId, packet.messageId);
}

test("publishes are acked", async (t) => {
  const client = await connect();
  publish(t, client, { topic: "a", messageId: 1 }); // expect
});
"#,
        r#"
// file: src/server.js
export function connectionHandler(socket) {
  (async () => { // expect
    for await (let rpc of socket.procedure("login")) {
      await rpc.end();
    }
  })();
}
"#,
        r#"
// file: test/client.test.js
const tap = require("tap");
const getPort = require("get-port");

tap.test("bind is refused", function (t) {
  getPort().then(function (port) { // expect
    const client = connect(port);
    client.bind("cn=root", "secret", function (err) {
      t.ok(err);
    });
  });
  t.end();
});
"#,
        r#"
// file: example.js
// A module others load: its top-level call is not the program.
const Redis = require("./index");

async function main() {
  const redis = new Redis();
  await redis.set("foo", "bar");
  console.log(await redis.get("foo"));
}

main(); // expect

module.exports = main;
"#,
        r#"
// A link that can throw: the queue may hold a rejected promise.
class Client {
  constructor() {
    this._dispatchPromise = Promise.resolve();
  }

  enqueue(msg) {
    this._dispatchPromise = this._dispatchPromise.then(() => this.handle(msg));
  }

  close(event) {
    this._dispatchPromise.then(() => this.onClose(event)); // expect
  }
}
"#,
        r#"
// file: bin.js
#!/usr/bin/env node
const node = createNode();
node.on("close", function () {
  stop(node); // expect
});

async function stop(n) {
  await n.close();
}
"#,
        r#"
// file: test/open.test.js
const test = require("tape");

test("opens", function (t) {
  db.open().then(t.pass.bind(t)); // expect
  t.end();
});
"#,
        r#"
function disconnect(client) {
  return new Promise(function (resolve, reject) {
    client.once("close", resolve);
    client.once("error", reject);
    client.end();
  });
}

function shutdown(client) {
  disconnect(client).then(() => console.log("closed")); // expect
}
"#,
        r#"
// The file's own `then` is a step queue's; `fetch(..)` is a real promise.
function Flow() {
  this.steps = [];
}

Flow.prototype.then = function (next) {
  this.steps.push(["then", next]);
  return this;
};

function load(url, render) {
  fetch(url).then(render); // expect
}
"#,
        r#"
class Route {
  // The async executor's own promise rejects when the handler does.
  handle(request, response) {
    new Promise(async (resolve) => { // expect
      await this.handler(request, response);
      resolve();
    });
  }
}
module.exports = Route;
"#,
        r#"
// file: build/src/client.d.ts
export declare class Client {
    initialize(): Promise<{ [name: string]: Function }>;
}
// file: build/src/client.js
"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.Client = void 0;
// Nothing handles the stub's rejection: dropping it leaves it unhandled.
class Client {
  initialize() {
    if (this.stub) {
      return this.stub;
    }
    this.stub = this._gax.createStub(this._opts);
    this.calls = this.stub.then((stub) => stub);
    return this.stub;
  }

  list(request) {
    this.initialize(); // expect
    return this.calls.then((c) => c.list(request));
  }
}
exports.Client = Client;
"#,
    ],
    pass: &[
        r#"
// The callback form of the database's dual API, made by a helper.
function sendCallback(res) {
  return (err, body) => (err ? res.status(500).end() : res.json(body));
}

function tempView(app) {
  app.post("/:db/_temp_view", (req, res) => {
    req.db.query(req.body, req.query, sendCallback(res));
  });
}

module.exports = { tempView };
"#,
        r#"
// The callback form of a dual API: no promise comes back.
class Consumer {
  metadata(options, callback) {
    if (!callback) {
      return new Promise((resolve, reject) => this.metadata(options, (e, v) => (e ? reject(e) : resolve(v))));
    }
    this.connection.send(options, callback);
  }

  #join(options) {
    this.metadata(options, (metadataError, metadata) => {
      if (metadataError) {
        this.emit("error", metadataError);
        return;
      }
      this.assign(metadata);
    });
  }
}

module.exports = { Consumer };
"#,
        r#"
// file: cypress/e2e/basic.test.ts
// Cypress commands, queued and checked by Cypress: no promise.
describe("basic", () => {
  it("loads", () => {
    cy.visit("/").get(".chart").then(($el) => {
      expect($el).to.exist;
    });
  });
});
"#,
        r#"
// file: build/src/client.d.ts
export declare class ServiceManagerClient {
    initialize(): Promise<{ [name: string]: Function }>;
    listServices(request: object): Promise<object>;
}
// file: build/src/client.js
"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.ServiceManagerClient = void 0;
// The stub promise has a rejection handler of its own: `initialize()`
// hands out that same promise, so dropping it cannot go unhandled.
class ServiceManagerClient {
  initialize() {
    if (this.stub) {
      return this.stub;
    }
    this.stub = this._gax.createStub(this._opts);
    for (const methodName of ["listServices", "getService"]) {
      this.innerApiCalls[methodName] = this.stub.then(
        (stub) => (...args) => stub[methodName](...args),
        (err) => () => {
          throw err;
        },
      );
    }
    return this.stub;
  }

  listServices(request) {
    this.initialize();
    return this.innerApiCalls.listServices(request);
  }
}
exports.ServiceManagerClient = ServiceManagerClient;
"#,
        r#"
// file: src/try-close.js
import { isPromiseLike } from "./util";

// Settles as true or false, and returns a boolean when `close` is sync.
export function tryClose(value) {
  try {
    const result = value.close();
    if (isPromiseLike(result)) {
      return result.then(() => true, () => false);
    }
    return true;
  } catch {
    return false;
  }
}
// file: src/try-close.d.ts
export declare function tryClose(value: {
    close(): PromiseLike<void>;
}): Promise<boolean>;
export declare function tryClose(value: {
    close(): void;
}): boolean;
// file: src/duplex.js
import { tryClose } from "./try-close.js";

export class Duplex {
  async dispose() {
    for (const controller of this.controllers) {
      tryClose(controller);
    }
    await this.options.dispose?.();
  }
}
"#,
        r#"
class Route {
  // The executor has no `reject`, and catches what it awaits.
  handle(request, response) {
    new Promise(async (resolve) => {
      try {
        await this.handler(request, response);
      } catch (error) {
        response.throw(error);
      }
      resolve();
    });
  }
}
module.exports = Route;
"#,
        r#"
const { MongoClient } = require("mongodb");

// A node-style callback last: the driver reports through it, no promise.
function Store(url, opts) {
  const self = this;
  function setupDB(err, db) {
    if (err) return self.emit("error", err);
    self.db = db;
  }
  MongoClient.connect(url, opts, setupDB);
  MongoClient.connect(url, (err, client) => setupDB(err, client));
}
"#,
        r#"
// A step queue that only looks like a promise.
function Flow(method) {
  this.steps = [];
  if (typeof method === "function") {
    this.then(method);
  }
}

Flow.prototype.then = function (next) {
  this.steps.push(["then", next]);
  return this;
};
"#,
        r#"
// file: src/utils/promise.ts
export function promiseWait(ms = 0) {
  return new Promise((res) => setTimeout(res, ms));
}

export function requestIdlePromise(timeout = 10000) {
  if (typeof requestIdleCallback === "function") {
    return new Promise((res) => requestIdleCallback(() => res(), { timeout }));
  }
  return promiseWait(0);
}

// file: src/utils/index.ts
export * from "./promise.ts";

// file: src/buffer.ts
import { requestIdlePromise } from "./utils/index.ts";

export class ChangeBuffer {
  add(task) {
    this.tasks.add(task);
    if (this.tasks.size <= 1) {
      requestIdlePromise().then(() => this.processTasks());
    }
  }
}
"#,
        r#"
// file: src/utils.ts
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, ms);
  });
}

// file: src/store/memory.ts
export class MemoryStore {
  private members = new Map<string, string[]>();

  public clearMembers(roomId: string): Promise<void> {
    this.members.delete(roomId);
    return Promise.resolve();
  }
}

// file: src/downloader.ts
import { sleep } from "./utils";
import { MemoryStore } from "./store/memory";

export class KeyDownloader {
  private stopped = false;
  private store = new MemoryStore();

  public onKeyRequested(roomId: string): void {
    this.store.clearMembers(roomId);
    this.downloadLoop();
  }

  private async downloadLoop(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.fetchNext();
      } catch (e) {
        console.warn("download failed, backing off", e);
        await sleep(5000);
      }
    }
  }

  private async fetchNext(): Promise<void> {}
}
"#,
        r#"
async function decryptBoth(event, edit) {
  await Promise.allSettled([event.decrypt(), edit.decrypt()]);
}

async function pause(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

class Capabilities {
  start() {
    this.poll().then();
  }

  poll = async () => {
    try {
      await this.fetchCapabilities();
    } catch (e) {
      console.warn("capabilities fetch failed", e);
    }
    this.timer = setTimeout(this.poll, 60000);
  };
}

function onSync(event, edit) {
  decryptBoth(event, edit);
  pause(10).finally(() => console.log("settled"));
}
"#,
        r#"
class Client {
  send(msg) {
    this.inFlight += 1;
    if (!this.drainPromise) {
      this.drainPromise = new Promise((resolve) => {
        this.drainResolve = resolve;
      });
    }
    this.socket.send(msg, () => {
      this.inFlight -= 1;
      if (this.inFlight === 0 && this.drainResolve) {
        this.drainResolve();
        this.drainPromise = null;
      }
    });
  }
}

function whenDrained(client, done) {
  client.drainPromise.then(done);
}
"#,
        r#"
function runAll(session, conn, procs) {
  const dl = [];
  for (const p of procs) {
    dl.push(session.call(p).then(
      (res) => console.log("ok", res),
      (err) => console.log("failed", err),
    ));
  }
  Promise.all(dl).then(() => {
    console.log("all finished");
    conn.close();
  });
}

class Pool {
  destroy(resource) {
    return this.destroyer(resource)
      .catch((err) => this.log("destroy failed", err))
      .then(() => {
        this.pending -= 1;
      });
  }

  reap(idle) {
    for (const r of idle) {
      this.destroy(r);
    }
  }
}

function enqueue(queue, job, run) {
  new Promise((internalResolve) => {
    job.start = internalResolve;
    queue.push(job);
  }).then(() => run(job));
}

function consumeAll(limiters, key) {
  const promises = [];
  limiters.forEach((l) => {
    promises.push(l.consume(key).catch((err) => ({ err })));
  });
  Promise.all(promises).then((res) => report(res));
}

function warmAll(cache, keys) {
  Promise.all(keys.map((k) => cache.load(k).catch((err) => console.warn(k, err)))).then(() => {
    console.log("cache warm");
  });
}
"#,
        r#"
// The chain handles rejection (`.then(onOk, onErr)`) before `finally` is
// added to it.
function fromPromise(promise, push) {
  promise = promise.then(function (value) {
    setImmediate(function () { push(null, value); });
    return null;
  }, function (err) {
    setImmediate(function () { push(err); });
    return null;
  });
  if (typeof promise.finally === "function") {
    promise.finally(function () {
      setImmediate(function () { push(null, null); });
    });
  }
}
module.exports = fromPromise;
"#,
        r#"
// file: src/worker.js
function makeDeferred() {
  let fns = {};
  const p = new Promise((resolve, reject) => {
    fns = { resolve, reject };
  });
  return Object.assign(p, fns);
}

class Worker {
  constructor(bus) {
    this.bus = bus;
    this.finished = makeDeferred();
  }

  stop(err) {
    Promise.allSettled(this.bus.drains()).then(() => {
      this.finished.resolve(err ? err : null);
    });
    return this.finished;
  }

  watch(sub) {
    sub.onError = (err) => {
      this.stop(err);
    };
    sub.onGone = () => {
      this.stop(new Error("subscription gone")).catch();
    };
    this.finished.then(() => sub.unsubscribe());
  }
}

function report(conn) {
  conn.closed().then((err) => {
    if (err) {
      console.error(`connection closed: ${err.message}`);
    }
  });
}
// file: src/worker.d.ts
export declare class Worker {
    constructor(bus: any);
    stop(err?: Error): Promise<Error | null>;
    watch(sub: any): void;
}
"#,
        r#"
class KeyWatcher {
  constructor(paths) {
    this.loaded = Promise.allSettled(paths.map((p) => readFile(p)));
    this.loaded.then((results) => this.apply(results));
  }
}

class Client {
  constructor(backend) {
    this.ready = new Promise((resolve) => {
      backend.once("ready", resolve);
    });
  }
  onReady(cb) {
    this.ready.then(() => cb());
  }
}
"#,
        r#"#!/usr/bin/env node
const { openStore } = require("./store");

(async () => {
  const store = await openStore(process.argv[2]);
  for await (const row of store.rows()) {
    console.log(row.id);
  }
})();
"#,
        r#"#!/usr/bin/env node
const { connect } = require("./client");

const times = [];

(async () => {
  const conn = await connect(process.argv[2]);
  const t0 = Date.now();
  await conn.ping();
  times.push(Date.now() - t0);
  await conn.close();
})().then(() => {
  console.log(times.join("\n"));
});
"#,
        r#"
// file: test/reply.test.js
const { test } = require("node:test");

test("reply resolves", (t) => {
  t.plan(1);
  const reply = makeReply();
  reply.send("ok").then(() => {
    t.assert.ok("resolved");
  });
});
"#,
        r#"
// file: test/lookup.test.js
const test = require("node:test");

test("lookup measures the key", (t, done) => {
  lookup("abc").then((n) => {
    assert.strictEqual(n, 3);
    done();
  });
});

test("the event arrives", (t, done) => {
  server.ready.then(done);
});
// file: test/types/api.tst.ts
import { expect } from "tstyche";

expect(fetchUser("id")).type.toBe<Promise<User>>();
fetchUser("id").then((u) => u.name);
"#,
        r#"
async function auditLog(req) {
  await fetch("/audit");
}

async function handle(req) {
  await auditLog(req);
  void auditLog(req).catch(console.error);
  const p = auditLog(req);
  await p;
  return auditLog(req);
}
"#,
        r#"
function load() {
  fetch("/data").then(r => r.json()).then(show).catch(report);
  fetch("/more").then(show, report);
  fetch("/x").catch(report);
}
"#,
        r#"
(async () => {
  try {
    await main();
  } catch (err) {
    console.error(err);
    process.exitCode = 1;
  }
})();

(async () => {
  await main();
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
"#,
        r#"
async function drain(queue) {
  try {
    await queue.flush();
  } catch (err) {
    console.error(err);
  }
}

async function readAll(reader, onDone, onError) {
  try {
    onDone(await reader.read());
  } catch (e) {
    onError(e);
  }
}

function bodyPromise(reader) {
  return new Promise((resolve, reject) => {
    readAll(reader, resolve, reject);
  });
}

let resolved;
function setImmediateish(cb) {
  if (!resolved) resolved = Promise.resolve();
  resolved.then(() => cb());
}

const NativePromise = globalThis.Promise;
const settled = NativePromise.resolve();
function microtask(fn) {
  settled.then(fn);
}

function close(dispatcher, onClosed) {
  // Should not error.
  dispatcher.close().then(() => queueMicrotask(onClosed));
}

function reportLater(err, results) {
  Promise.reject(err);
  drain(results);
  Promise.allSettled(results).then(log);
  // eslint-disable-next-line @typescript-eslint/no-floating-promises
  fetch("/beacon").then(log);
}
"#,
        r#"
const noop = () => {};

class Loader {
  cancel() {
    const pending = this.pending;
    return pending ? pending.then(noop).catch(noop) : Promise.resolve();
  }

  refetch(url, opts) {
    let p = fetch(url);
    if (!opts.throwOnError) {
      p = p.catch(noop);
    }
    return p;
  }

  reset(url) {
    this.cancel();
    this.refetch(url, {});
  }
}

function nextRow(cursor, cb) {
  return cursor.read().then((row) => cb(null, row), (err) => cb(err));
}

function pump(cursor, onRow) {
  nextRow(cursor, (err, row) => onRow(err, row));
}
"#,
        r#"
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function whenOnline(isOnline) {
  return new Promise((resolve) => {
    window.addEventListener("online", () => isOnline() && resolve());
  }).then(() => console.log("back online"));
}

function scheduleRetry(ms, attempt) {
  sleep(ms).then(() => attempt());
  whenOnline(() => navigator.onLine).then(attempt);
}
"#,
        r#"
const utils = require("./utils.cjs");

function scheduleRetry(ms, attempt) {
  utils.sleep(ms).then(() => attempt());
}
"#,
        r#"
function notAsync() {
  return 1;
}

function caller() {
  notAsync();
  [1, 2, 3].map(x => x * 2);
}
"#,
        r#"
function deferred() {
  let settle = {};
  const p = new Promise((resolve, reject) => {
    settle = { resolve, reject };
  });
  return Object.assign(p, settle);
}

class Feed {
  constructor() {
    // settled only by resolving, with the error (if any) as the value
    this.done = deferred();
  }
  stop(err) {
    this.done.resolve(err);
  }
}

async function watch(bus, subject) {
  const feed = new Feed();
  const sub = await bus.subscribe(subject, (m) => feed.push(m));
  feed.done.then(() => {
    sub.unsubscribe();
  });
  return feed;
}
"#,
        r#"
// file: examples/publish.js
const broker = require("../lib/client");

(async () => {
  const conn = await broker.open("tcp://localhost:4000");
  const chan = await conn.channel();
  chan.publish("jobs", "hello");
})();
"#,
        r#"
// file: test/https.test.js
const { test } = require("node:test");
const dns = require("node:dns/promises");

async function setup() {
  const cert = await buildCertificate();
  const { address } = await dns.lookup("localhost");
  test("serves over https", async () => {
    await check(address, cert);
  });
}

setup();
"#,
        r#"
// file: shared/load.js
export function loadBody(data, key, options, callback) {
  if (!callback) {
    return new Promise((resolve, reject) => {
      loadBody(data, key, options, (err, v) => (err ? reject(err) : resolve(v)));
    });
  }
  setImmediate(() => callback(null, data[key]));
}

// file: mailer/message.js
import { loadBody } from "../shared/load.js";

export function resolveHtml(data, done) {
  loadBody(data, "html", {}, (err, value) => {
    if (err) {
      return done(err);
    }
    done(null, value);
  });
}
"#,
        r#"
// file: test/child/burst.js
// Run as a child process by the throttle test, which compares its output.
const Throttle = require("../../lib/throttle");

const throttle = new Throttle({ tokens: 2 });
throttle.run(async () => "x").then((x) => process.stdout.write(x));
throttle.run(async () => "y").then((x) => process.stdout.write(x));

// file: lib/throttle.js
module.exports = class Throttle {
  async run(fn) {
    return fn();
  }
};
"#,
        r#"
// file: test/bus.test.js
const assert = require("assert");
const { openBus } = require("../bus");

function finish(bus, done, err) {
  bus.close().then(() => done(err), (e) => done(e));
}

describe("bus", function () {
  // `done` goes to a helper: a rejection leaves it uncalled, and the runner
  // fails the test on its timeout.
  it("answers a call", function (done) {
    const bus = openBus();
    bus.call({ ping: 1 }).then((reply) => {
      try {
        assert.strictEqual(reply.pong, 1);
        finish(bus, done);
      } catch (err) {
        finish(bus, done, err);
      }
    });
  });
});

// file: bus.js
class Bus {
  async call(msg) {
    return { pong: msg.ping };
  }
  async close() {}
}
exports.openBus = () => new Bus();
"#,
        r#"
const { listen } = require("./listen");

const channels = new Map();
function onclose() {
  for (const [name, listeners] of channels) {
    channels.delete(name);
    // Each resubscription handles its own failure.
    Promise.all(listeners.map((l) => listen(name, l).catch(() => { /* noop */ })));
  }
}
module.exports = { onclose };

// file: listen.js
async function listen(name, l) {
  await l.connection.query(`listen ${name}`);
}
module.exports = { listen };
"#,
        r#"
const { parentPort } = require("worker_threads");
const { start } = require("./transport");

process.on("unhandledRejection", (err) => {
  parentPort.postMessage({ code: "ERROR", err });
  process.exit(1);
});

start().then(() => parentPort.postMessage({ code: "READY" }));
"#,
        r#"
function waitFor(state, index, expected, done) {
  const current = Atomics.load(state, index);
  if (current === expected) return done(null, "ok");
  const result = Atomics.waitAsync(state, index, current, 1000);
  if (result.async) {
    result.value.then((res) => done(null, res));
  } else {
    setImmediate(done, null, "not-equal");
  }
}
module.exports = { waitFor };
"#,
        r#"
// Every element carries its own catch: the error comes back as a value.
export function deleteFiles(files, opts, cb) {
  const deletions = files.map((file) => {
    const o = { ...opts, ifGenerationMatch: file.generation };
    return file.delete(o).catch((err) => err);
  });
  Promise.all(deletions).then((results) => cb(results.filter((r) => r instanceof Error)));
}
"#,
        r#"
// Deferreds kept in a map only ever resolve: chains on them cannot reject.
export class EventStream {
  tapped = new Map();

  tap(runId) {
    let p = this.tapped.get(runId);
    if (p === undefined) {
      p = new Promise((resolve) => {
        this.release = resolve;
      });
      this.tapped.set(runId, p);
    }
    return p;
  }

  sendEnd(runId, payload) {
    const p = this.tapped.get(runId);
    if (p !== undefined) p.then(() => this.send(payload));
  }

  finish() {
    const pending = [...this.tapped.values()];
    Promise.all(pending).finally(() => this.close());
  }
}
"#,
        r#"
// file: src/kill.js
import { setTimeout } from "node:timers/promises";
import { finished } from "node:stream/promises";

export const killAfter = async (kill, delay, signal) => {
  try {
    await setTimeout(delay, undefined, { signal });
    kill("SIGKILL");
  } catch {}
};

export const drain = async (stream) => {
  try {
    await finished(stream);
  } catch {}
};

export const onDone = async (stream, out) => {
  try {
    await finished(stream);
    out.end();
  } catch (error) {
    await drain(stream);
    out.destroy(error);
  }
};
// file: src/run.js
import { killAfter, onDone } from "./kill.js";

export function stop(proc, stream, out, signal) {
  proc.kill("SIGTERM");
  killAfter((s) => proc.kill(s), 5000, signal);
  onDone(stream, out);
}
"#,
        r#"
class Pool {
  constructor() {
    this.status = "open";
    this.pending = [];
    this.bgHandler();
  }

  async bgHandler() {
    while (this.status === "open") {
      const request = this.pending.shift();
      if (request) {
        try {
          await this.serve(request);
        } catch (err) {
          request.fail(err);
        }
      } else {
        await new Promise((resolve) => {
          this.wake = resolve;
        });
      }
    }
    this.closed();
  }
}
"#,
        r#"
export function handle(request) {
  return new Promise((_resolve, _reject) => {
    let written = undefined;
    const reject = async (err) => {
      await written;
      _reject(err);
    };
    if (request.signal?.aborted) {
      reject(new Error("aborted"));
      return;
    }
    const req = send(request, _resolve);
    req.on("error", (err) => reject(err));
    written = writeBody(req, request.body).catch((e) => _reject(e));
  });
}
"#,
        r#"
// file: test/qos1.test.js
const { test } = require("node:test");

async function publish(t, client, packet) {
  client.write(packet);
  const ack = await client.next();
  t.assert.equal(ack.messageId, packet.messageId);
}

test("publishes are acked", async (t) => {
  t.plan(2);
  const client = await connect();
  publish(t, client, { topic: "a", messageId: 1 });
  publish(t, client, { topic: "b", messageId: 2 });
});
"#,
        r#"
// file: test/integration.test.js
const { test } = require("node:test");

function connectionHandler(socket) {
  (async () => {
    for await (let rpc of socket.procedure("login")) {
      rpc.end();
    }
  })();
}

test("login", async () => {
  const server = await startServer(connectionHandler);
  await server.close();
});
"#,
        r#"
// file: test/client.test.js
const tap = require("tap");
const getPort = require("get-port");

tap.test("bind is refused", function (t) {
  getPort().then(function (port) {
    const client = connect(port);
    client.bind("cn=root", "secret", function (err) {
      t.ok(err);
      // A rejection skips this: the test never ends and tap fails it.
      t.end();
    });
  });
});
"#,
        r#"
// file: example.js
// The package's demo script: `main()` is the whole program.
const Redis = require("./index");

async function main() {
  const redis = new Redis();
  await redis.set("foo", "bar");
  console.log(await redis.get("foo"));
}

main();
"#,
        r#"
// Each link only waits for a promise that resolves: the queue never rejects.
class Client {
  constructor() {
    this._dispatchPromise = Promise.resolve();
  }

  enqueue(msg) {
    this._dispatchPromise = this._dispatchPromise.then(() => new Promise((resolve) => {
      this.handle(msg, resolve);
    }));
  }

  close(event) {
    this._dispatchPromise.then(() => this.onClose(event));
  }
}
"#,
        r#"
// file: benchmark/run.js
// A benchmark script's top level is the program.
const { Bench } = require("tinybench");

const bench = new Bench();
bench.add("inject", () => inject(dispatch, { url: "/" }));
bench.run().then(() => console.table(bench.table()));
"#,
        r#"
// file: test/inject.test.js
// The completion callback or a planned assertion runs only if the step does.
const { test } = require("node:test");

test("request ids repeat", (t, done) => {
  const chain = inject(dispatch).get("/");
  chain.then((res) => {
    chain.then((rep) => {
      assert.strictEqual(res.id, rep.id);
      done();
    });
  });
});

test("payload", (t, done) => {
  t.plan(1);
  inject(dispatch).get("/hello").end()
    .then((res) => t.assert.strictEqual(res.payload, "hello"))
    .finally(done);
});
"#,
        r#"
// file: bin.js
#!/usr/bin/env node
const nodes = start();
process.once("SIGINT", function () {
  for (const node of nodes) {
    stop(node);
  }
});

async function stop(n) {
  await n.close();
}
"#,
        r#"
// file: test/open.test.js
const test = require("tape");

test("opens", function (t) {
  t.plan(1);
  db.open().then(t.pass.bind(t));
});
"#,
        r#"
function disconnect(client) {
  return new Promise(function (resolve, reject) {
    client.once("close", resolve);
    client.end();
  });
}

function shutdown(client) {
  disconnect(client).then(() => console.log("closed"));
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(FloatingPromise);

    /// In a page's script an unhandled rejection is logged, not fatal: the
    /// finding says so and is of medium severity; the same code in Node
    /// keeps the crash.
    #[test]
    fn browser_code_is_told_the_error_is_lost_not_that_it_crashes() {
        static RULE: FloatingPromise = FloatingPromise;
        let page = r#"
async function save(form) {
  await fetch("/save", { method: "POST", body: new FormData(form) });
}
document.querySelector("form").addEventListener("submit", (ev) => {
  save(ev.target);
});
"#;
        let node = format!("const fs = require(\"fs\");\n{page}");
        let (found, _) = crate::testing::run_example(&RULE, Language::JavaScript, page);
        assert_eq!(found.len(), 1, "{found:?}");
        let f = &found[0].1;
        assert!(
            f.message.contains("the browser only logs to the console"),
            "{}",
            f.message
        );
        assert!(!f.message.contains("crash"), "{}", f.message);
        assert_eq!(f.severity, Severity::Medium);
        let (found, _) = crate::testing::run_example(&RULE, Language::JavaScript, &node);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].1.message.contains("can crash the process"));
        assert_eq!(found[0].1.severity, META.severity);
        // A service worker: `self` is its global scope.
        let worker = r#"
async function tell(client, msg) {
  await client.postMessage(msg);
}
self.addEventListener("fetch", (event) => {
  tell(event.source, "seen");
});
"#;
        let (found, _) = crate::testing::run_example(&RULE, Language::JavaScript, worker);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].1.severity, Severity::Medium);
        // `const self = this` is a local, not a worker's global.
        let aliased = format!("const self = this;\n{worker}");
        let (found, _) = crate::testing::run_example(&RULE, Language::JavaScript, &aliased);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].1.severity, META.severity);
    }
}
