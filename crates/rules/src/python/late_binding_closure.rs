//! PY017: a loop variable captured by a callback that runs later.

use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::walk::{Parent, Visitor, walk_block};
use unsnarl_model::*;

pub struct LateBindingClosure;

pub static META: RuleMeta = RuleMeta {
    id: "PY017",
    name: "loop-variable-captured-by-callback",
    category: Category::SharedStateRace,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "A lambda or nested function created in a loop refers to the loop variable and is scheduled to run later (`call_soon`, `call_later`, `Thread(target=...)`, `add_done_callback`, `submit`).",
    docs: r#"
Inside a `for` loop (or a comprehension), a `lambda` or nested `def` that
uses the loop variable without binding it (`lambda: handle(item)`) is
passed to something that calls it later: `loop.call_soon`/`call_later`/
`call_at`/`call_soon_threadsafe`, `threading.Thread(target=...)`,
`threading.Timer`, `future.add_done_callback`, `executor.submit`,
`run_in_executor`, `signal.signal`. A call waited for before the loop
moves on (`await loop.run_in_executor(None, lambda: ..)`, also inside an
awaited `asyncio.wait_for`, or `pool.submit(..).result()`) has run its
callback with this round's value, and is not reported; nor is a thread
joined, with no timeout, later in the same round (`t.start(); ...;
t.join()`, or put in a list that the round then walks joining each,
`for t in threads: t.join()`), nor a job submitted inside a `with
ThreadPoolExecutor(..) as pool:` block within the round: leaving the
block waits for every job.

## Why

Python closures capture variables, not values. By the time the callback
runs the loop has moved on, so every callback sees the variable's latest
value: all the threads process the last item, all the timers fire for the
last key, and the other items are silently skipped.

## Example

```python
import asyncio

def schedule_all(loop, jobs):
    for job in jobs:
        loop.call_soon(lambda: run(job))
```

## Fix

Bind the current value when the callback is created: pass it as an
argument, use `functools.partial`, or a default argument.

```python
import asyncio
import functools

def schedule_all(loop, jobs):
    for job in jobs:
        loop.call_soon(functools.partial(run, job))
```
"#,
    examples: &EXAMPLES,
};

/// Calls that store a callable to run later, with the argument position of
/// the callable (`None`: any positional argument or `target=`).
fn deferred_slot(c: &Call) -> Option<Option<usize>> {
    match c.target.as_deref() {
        Some("threading.Thread") => return Some(None),
        Some("threading.Timer") => return Some(Some(1)),
        Some("signal.signal") => return Some(Some(1)),
        Some("atexit.register") => return Some(Some(0)),
        _ => {}
    }
    match c.name.as_str() {
        "call_soon" | "call_soon_threadsafe" | "add_done_callback" | "submit" => Some(Some(0)),
        "call_later" | "call_at" | "run_in_executor" => Some(Some(1)),
        _ => None,
    }
}

impl Rule for LateBindingClosure {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        let calls = cx.calls_to_or_named(
            &[
                "threading.Thread",
                "threading.Timer",
                "signal.signal",
                "atexit.register",
            ],
            &[
                "call_soon",
                "call_soon_threadsafe",
                "add_done_callback",
                "submit",
                "call_later",
                "call_at",
                "run_in_executor",
            ],
        );
        for (call, c) in calls {
            if matches!(cx.tree.expr_parent(call), Parent::Detached) {
                continue;
            }
            let Some(slot) = deferred_slot(c) else {
                continue;
            };
            if waited_in_place(cx, call) {
                continue;
            }
            let args: Vec<ExprId> = match slot {
                Some(i) => c.positional(i).into_iter().collect(),
                None => c
                    .kwarg("target")
                    .into_iter()
                    .chain(c.positional(1))
                    .collect(),
            };
            for a in args {
                let Some((fid, site)) = callable_of(cx, a) else {
                    continue;
                };
                let loop_vars = loop_vars_around(cx, call);
                if loop_vars.is_empty() {
                    continue;
                }
                let Some(v) = free_loop_var(cx, fid, &loop_vars) else {
                    continue;
                };
                out.push(cx.finding(
                    &META,
                    cx.expr(site).span,
                    format!(
                        "the callback uses the loop variable `{v}`, but it runs after the loop has moved on: closures capture the variable, not its value, so every scheduled callback sees the last `{v}`"
                    ),
                    format!("bind the value now: `functools.partial(f, {v})`, pass it as an argument, or `lambda {v}={v}: ...`"),
                ));
            }
        }
    }
}

/// The deferred call is waited for before the loop moves on: `await
/// loop.run_in_executor(None, lambda: ..)` (also inside an awaited
/// `asyncio.wait_for`), or `pool.submit(lambda: ..).result()`. The
/// callback has run by then, with the variable's value of this round.
fn waited_in_place(cx: &FileCx, call: ExprId) -> bool {
    if cx.is_awaited(call) {
        return true;
    }
    let Parent::Expr(p) = cx.tree.expr_parent(call) else {
        return false;
    };
    match &cx.expr(p).kind {
        // `pool.submit(..).result()`: `call` hangs under the `Attr`.
        ExprKind::Attr { name, .. } if name == "result" => {
            matches!(cx.tree.expr_parent(p), Parent::Expr(r) if cx.call(r).is_some_and(|rc| rc.func == p))
        }
        _ => cx.call(p).is_some_and(|w| {
            w.target.as_deref() == Some("asyncio.wait_for")
                && w.positional(0) == Some(call)
                && cx.is_awaited(p)
        }),
    }
}

/// The function of a callable argument: a lambda, or a nested `def` of the
/// enclosing function named here. Returns the function and where to report.
fn callable_of(cx: &FileCx, a: ExprId) -> Option<(FuncId, ExprId)> {
    let a = cx.model.strip(a);
    match &cx.expr(a).kind {
        ExprKind::Closure(f) => Some((*f, a)),
        ExprKind::Name { id, .. } => {
            let outer = cx.func_of(a);
            let f = cx
                .model
                .function_ids()
                .find(|&f| cx.func(f).parent == Some(outer) && cx.func(f).name == *id)?;
            Some((f, a))
        }
        _ => None,
    }
}

/// Names bound by the loops (and comprehensions) around an expression.
fn loop_vars_around(cx: &FileCx, e: ExprId) -> HashSet<String> {
    let mut out = HashSet::new();
    for a in cx.tree.expr_ancestors(e) {
        if let ExprKind::Comprehension {
            generators, elt, ..
        } = &cx.expr(a).kind
            && cx.contains(*elt, e)
        {
            for g in generators {
                names(cx, g.target, &mut out);
            }
        }
    }
    let enclosing = cx.enclosing_stmts(e);
    for (i, &s) in enclosing.iter().enumerate() {
        if let StmtKind::For {
            target: Some(t),
            body,
            ..
        } = &cx.stmt(s).kind
            && !last_round(cx, body, &enclosing[..i])
            && !joined_in_the_round(cx, body, e)
            && !pool_closed_in_the_round(cx, &enclosing[..i])
        {
            names(cx, *t, &mut out);
        }
    }
    out
}

/// Once the callback is scheduled, the round leaves the loop on every
/// path: some block around the call, inside the loop's body, ends with a
/// `return`, `raise` or `break` (also in both branches of an `if`), and
/// nothing in the body goes on to the next round (`continue`). The
/// callback is the last one, and the variable keeps its value (`t.start();
/// t.join(timeout=5); if t.is_alive(): return False`, ..., `return True`).
/// `inner` are the statements around the call inside the loop, innermost
/// first.
fn last_round(cx: &FileCx, body: &Block, inner: &[StmtId]) -> bool {
    fn leaves(m: &FileModel, block: &[StmtId]) -> bool {
        block.last().is_some_and(|&l| match &m.stmt(l).kind {
            StmtKind::Return(_) | StmtKind::Raise(_) | StmtKind::Break => true,
            StmtKind::If { then, orelse, .. } => leaves(m, then) && leaves(m, orelse),
            _ => false,
        })
    }
    struct Continues(bool);
    impl Visitor for Continues {
        fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
            match m.stmt(id).kind {
                StmtKind::Continue => {
                    self.0 = true;
                    false
                }
                // A `continue` of an inner loop goes on with that loop.
                StmtKind::For { .. } | StmtKind::While { .. } => false,
                _ => true,
            }
        }
    }
    let m = cx.model;
    // The block of each statement around the call that holds the next
    // one in; only `if` and `with` blocks (a `try` may leave early by an
    // error its handler swallows).
    let mut blocks: Vec<&[StmtId]> = vec![body];
    for w in inner.windows(2) {
        let (child, parent) = (w[0], w[1]);
        match &m.stmt(parent).kind {
            StmtKind::If { then, orelse, .. } => {
                if then.contains(&child) {
                    blocks.push(then);
                } else if orelse.contains(&child) {
                    blocks.push(orelse);
                }
            }
            StmtKind::With { body, .. } if body.contains(&child) => blocks.push(body),
            _ => return false,
        }
    }
    let mut v = Continues(false);
    walk_block(m, body, &mut v);
    !v.0 && blocks.iter().any(|b| leaves(m, b))
}

/// Inside the loop's body, the call sits in `with ThreadPoolExecutor(..)
/// as pool:` (or a process pool): leaving that block waits for every job
/// submitted in it, so the round ends only once the callbacks have run.
/// `inner` are the statements around the call inside the loop.
fn pool_closed_in_the_round(cx: &FileCx, inner: &[StmtId]) -> bool {
    inner.iter().any(|&s| {
        matches!(&cx.stmt(s).kind, StmtKind::With { items, .. }
        if items.iter().any(|it| {
            cx.call(cx.model.strip(it.ctx)).is_some_and(|c| {
                c.target.as_deref().is_some_and(|t| {
                    t.ends_with("ThreadPoolExecutor") || t.ends_with("ProcessPoolExecutor")
                })
            })
        }))
    })
}

/// The thread `call` builds (`t = threading.Thread(target=work)`) is
/// joined later in the same round of the loop, directly (`t.start();
/// t.join()`) or by walking a list it was put in (`threads.append((name,
/// t))`, then `for name, t in threads: t.join()`): the round does not
/// move the variable on while the callback runs. A join with a timeout
/// may give up on a thread that then runs on into the next round.
fn joined_in_the_round(cx: &FileCx, body: &Block, call: ExprId) -> bool {
    let Some(c) = cx.call(call) else {
        return false;
    };
    if c.target.as_deref() != Some("threading.Thread") {
        return false;
    }
    let Some(thread) = crate::util::bound_target(cx, call).and_then(|t| cx.model.name_of(t)) else {
        return false;
    };
    let at = cx.expr(call).span.end;
    let later: Vec<StmtId> = walk::stmts_in_block(cx.model, body)
        .into_iter()
        .filter(|&s| cx.stmt(s).span.start >= at)
        .collect();
    // `name.join()` in `block`, from offset `from` on.
    let joins_name = |block: &Block, name: &str, from: u32| {
        walk::exprs_in_block(cx.model, block).into_iter().any(|x| {
            cx.expr(x).span.start >= from
                && cx.call(x).is_some_and(|k| {
                    k.name == "join"
                        && k.args.is_empty()
                        && k.receiver.and_then(|r| cx.model.name_of(r)) == Some(name)
                })
        })
    };
    if joins_name(body, thread, at) {
        return true;
    }
    // The lists the thread was appended to in this round.
    let holders: HashSet<&str> = walk::exprs_in_block(cx.model, body)
        .into_iter()
        .filter_map(|x| cx.call(x))
        .filter(|k| {
            k.name == "append"
                && k.positional(0).is_some_and(|a| {
                    walk::exprs_under(cx.model, a)
                        .into_iter()
                        .any(|n| cx.model.name_of(n) == Some(thread))
                })
        })
        .filter_map(|k| k.receiver.and_then(|r| cx.model.name_of(r)))
        .collect();
    later.iter().any(|&s| match &cx.stmt(s).kind {
        StmtKind::For {
            target: Some(t),
            iter,
            body: walk_body,
            ..
        } => {
            cx.model.name_of(*iter).is_some_and(|l| holders.contains(l)) && {
                let mut bound = HashSet::new();
                names(cx, *t, &mut bound);
                bound.iter().any(|n| joins_name(walk_body, n, 0))
            }
        }
        _ => false,
    })
}

fn names(cx: &FileCx, t: ExprId, out: &mut HashSet<String>) {
    for x in unsnarl_model::walk::exprs_under(cx.model, t) {
        if let Some(n) = cx.model.name_of(x) {
            out.insert(n.to_string());
        }
    }
}

/// A loop variable the function reads without binding it itself.
fn free_loop_var(cx: &FileCx, f: FuncId, vars: &HashSet<String>) -> Option<String> {
    let func = cx.func(f);
    let bound: HashSet<&str> = func
        .params
        .iter()
        .map(|p| p.name.trim_start_matches('*'))
        .collect();
    // Its own defaults are read where it is defined, inside the loop
    // (`def handler(f, conn=connection)` is the fix, not the bug).
    let defaults: Vec<Span> = func
        .params
        .iter()
        .filter_map(|p| p.default.map(|d| cx.expr(d).span))
        .collect();
    let funcs = crate::python::common::func_and_nested(cx, f);
    crate::python::common::exprs_of(cx, &funcs)
        .into_iter()
        .filter_map(|x| match &cx.expr(x).kind {
            ExprKind::Name { id, resolved: None } => Some((x, id)),
            _ => None,
        })
        .filter(|(x, _)| !defaults.iter().any(|d| d.contains(cx.expr(*x).span)))
        .find(|(x, id)| {
            vars.contains(id.as_str())
                && !bound.contains(id.as_str())
                && !crate::python::common::is_store(cx, *x)
                && !assigned_in(cx, f, id)
                && !bound_in_nested(cx, cx.func_of(*x), f, id)
        })
        .map(|(_, id)| id.clone())
        .map(Into::into)
}

/// The name is a parameter or a local of a function nested in `f` on the
/// way to `g`, where it is read (`lambda n, text: search(n, text)`): that
/// `n` is the lambda's own, not the loop's.
fn bound_in_nested(cx: &FileCx, mut g: FuncId, f: FuncId, name: &str) -> bool {
    while g != f {
        let func = cx.func(g);
        if func
            .params
            .iter()
            .any(|p| p.name.trim_start_matches('*') == name)
            || assigned_in(cx, g, name)
        {
            return true;
        }
        match func.parent {
            Some(p) => g = p,
            None => return false,
        }
    }
    false
}

/// True when the function assigns the name itself (a local of its own),
/// also as the name of a caught exception (`except OSError as e:`).
fn assigned_in(cx: &FileCx, f: FuncId, name: &str) -> bool {
    cx.body_exprs(f)
        .iter()
        .copied()
        .any(|x| cx.model.name_of(x) == Some(name) && crate::python::common::is_store(cx, x))
        || cx.body_stmts(f).iter().any(|&s| {
            matches!(&cx.stmt(s).kind, StmtKind::Try { handlers, .. }
                if handlers.iter().any(|h| h.name.as_deref() == Some(name)))
        })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import asyncio
import threading

def schedule(loop, jobs):
    for job in jobs:
        loop.call_soon(lambda: run(job))  # expect

def start_workers(names):
    for i, name in enumerate(names):
        threading.Thread(target=lambda: work(i, name)).start()  # expect

def watch(futures):
    for key, fut in futures.items():
        fut.add_done_callback(lambda f: done(key, f))  # expect
"#,
        r#"
import threading


def search_all(names, query, full):
    results = {}
    threads = []
    for n in names:
        def search_one():
            retry = lambda text: full(n, text.strip())
            results[n] = retry(query)

        threads.append(threading.Thread(target=search_one))  # expect
    for t in threads:
        t.start()
    return results
"#,
        r#"
def delayed(loop, keys):
    for k in keys:
        def fire():
            expire(k)
        loop.call_later(5, fire)  # expect
"#,
        r#"
import asyncio


async def stop_workers(loop, workers):
    joins = []
    for worker in workers:
        joins.append(loop.run_in_executor(None, lambda: worker.process.join(timeout=5)))  # expect
    await asyncio.gather(*joins)
"#,
        r#"
import threading


class ModuleManager:
    def __init__(self, modules):
        self.modules = modules

    def unload_all(self):
        for module in list(self.modules):
            t = threading.Thread(target=lambda: module.unload())  # expect
            t.start()
            t.join(timeout=5)
            if t.is_alive():
                continue
            self.modules.remove(module)
            return True
        return False
"#,
    ],
    pass: &[
        r#"
import threading


def search_all(names, query, full):
    results = {}

    def search_one(name):
        retry = lambda n, text: full(n, text.strip())
        results[name] = retry(name, query)

    threads = [threading.Thread(target=search_one, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results
"#,
        r#"
from concurrent.futures import ThreadPoolExecutor

# `e` inside the worker is the exception it caught, not the loop's `e`.
def download(chunks):
    errors = []

    def fetch(idx, start, end):
        try:
            get_range(idx, start, end)
        except Exception as e:
            errors.append(str(e))

    with ThreadPoolExecutor() as pool:
        for idx, s, e in chunks:
            pool.submit(fetch, idx, s, e)
    return errors
"#,
        r#"
import functools
import threading

def schedule(loop, jobs):
    for job in jobs:
        loop.call_soon(functools.partial(run, job))
        loop.call_soon(lambda job=job: run(job))
        loop.call_soon(run, job)

def start_workers(names):
    for name in names:
        threading.Thread(target=work, args=(name,)).start()

def sort_all(groups):
    for g in groups:
        g.sort(key=lambda x: x.rank)

def after_loop(loop, jobs):
    for job in jobs:
        pass
    loop.call_soon(lambda: run(jobs))
"#,
        r#"
def deregister(registrations, invoke):
    for connection, registration in registrations.items():
        future = invoke(registration, connection)

        def handler(f, captured_connection=connection):
            if f.exception():
                log(captured_connection.remote_address)

        future.add_done_callback(handler)
"#,
        r#"
import asyncio
from concurrent.futures import ThreadPoolExecutor


async def stop_workers(loop, workers):
    for worker in workers:
        await asyncio.wait_for(
            loop.run_in_executor(None, lambda: worker.process.join(timeout=5)),
            timeout=10,
        )
    for worker in workers:
        await loop.run_in_executor(None, lambda: worker.close())


def checksums(paths):
    with ThreadPoolExecutor() as pool:
        return [pool.submit(lambda: digest(path)).result() for path in paths]
"#,
        r#"
import threading


class ModuleManager:
    def __init__(self, modules):
        self.modules = modules

    def unload_module(self, name):
        for module in self.modules:
            if module.name == name:
                t = threading.Thread(target=lambda: module.unload())
                t.start()
                t.join(timeout=5)
                if t.is_alive():
                    print("unload of %s did not complete" % name)
                    return False
                self.modules.remove(module)
                return True
        return False
"#,
        r#"
import threading


def run_steps(steps, agents, run_tool):
    results = {}
    for step_idx, step in enumerate(steps):

        def run_one(agent):
            results[(step_idx, agent)] = run_tool(step, agent)

        threads = []
        for agent in agents:
            t = threading.Thread(target=run_one, args=(agent,), daemon=True)
            threads.append((agent, t))
            t.start()
        for agent, t in threads:
            t.join()
    return results
"#,
        r#"
import concurrent.futures


def run_all(agents, markets, record):
    for agent in agents:

        def predict(market):
            return agent.predict(market)

        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as executor:
            futures = [executor.submit(predict, m) for m in markets]
            for future in concurrent.futures.as_completed(futures):
                record(agent, future.result())
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(LateBindingClosure);
}
