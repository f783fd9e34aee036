//! PY022: a lock or semaphore acquired without a release on every path.

use crate::context::FileCx;
use crate::python::common::stmts_after;
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::{Parent, Visitor, walk_block};
use unsnarl_model::*;

pub struct AcquireWithoutRelease;

pub static META: RuleMeta = RuleMeta {
    id: "PY022",
    name: "acquire-without-finally",
    category: Category::SemaphoreMisuse,
    severity: Severity::Medium,
    languages: &[Language::Python],
    summary: "`sem.acquire()`/`lock.acquire()` whose `release()` is not in a `finally` (or context manager) covering every path, or is missing.",
    docs: r#"
An explicit `acquire()` on a semaphore, lock or capacity limiter (asyncio,
threading, trio/anyio), where the matching `release()` is not in the
`finally` of a `try` that starts right after the acquire (or registered
first thing in a `with ExitStack() as stack:` there,
`stack.callback(sem.release)`), or there is no release at all. Between the acquire and that `try` may sit only an early
exit that releases first (`if closed: release(); raise`) and statements that
cannot raise (`items = []`, `last = None`, `ctx.event = asyncio.Event()`,
a pop its own test guards, `task = tasks.pop() if tasks else None`, the
size of a field, `n = len(self.items)`); a release that follows the
acquire with nothing but such statements (or a wait on the condition
just acquired, `cond.acquire(); cond.wait(t); cond.release()`), stores of a name into an
attribute or entry of `self` (`self._objects[i] = obj`), a field of
`self` read into a local (`first = not self._started`), counting in a
dict by key (`n = calls.get(key, 0); calls[key] = n - 1; if n <= 1: del
calls[key]`), or counter bumps
(`self.seqnr += 1`, also a module counter read as text first, `job_id =
str(job_counter); job_counter += 1`), or an `if` on an identity test
whose branches hold only such statements (`if module is Heater:
self.heater = module`), in between is fine too. Counter bumps and in-place
updates of a collection or event of `self` with plain values
(`self.pending.append(cmd)`, also of a tuple of names,
`self.clients.append((conn, addr))`, `self.cond.notify_all()`,
`self._idle.clear()`, `self._clients.difference_update(socks)`) cannot raise either, nor does closing a socket
(`self._sock.close()`; a file's `close()` flushes, and may), before the `try` or before
the release, and neither does a blocking acquire of a second lock
(`a.acquire(); b.acquire(); try: ... finally:` releasing both), nor
does reading an environment variable by a literal name
(`os.environ.get("TARGET")`), setting a `contextvars.ContextVar` to
plain values (one of the file, `marker = HELD.set(held | {key})`, or one
whose token the function hands back to its `reset`), making a fresh id (`rid =
f"req_{uuid4()}"`) or a `logging` call (a failing handler is reported
through `handleError`, not raised). A permit
handed to the work a `try` right after it starts (`task =
create_task(work())`, `thread.start()`, with nothing awaited in the
`try`), whose handler releases it when the start fails, is the started
work's to give back. A loop that spins until it gets the lock (`while True: if
lock.acquire(blocking=False): break`) counts as an acquire right before
the statement after it. A try-lock (`try: lock.acquire()` whose every `except` returns
or raises) counts as an acquire right before the statement after that
`try`, or before its `else:` when it has one; so does a conditional
one, `if lock.acquire(False):` with the `try` (or the release itself) in
its branch, also through a flag (`got = lock.acquire(timeout=t)` then `if
got: lock.release()`, or `if got:` with that `try` first in it), or `if not
lock.acquire(False): <defer the work> else:` with the `try` in the
`else` (also as the last alternative of an `or`: `if closed or not
lock.acquire(False):`), or a loop that tries each round, `while pending
and lock.acquire(blocking=False):`, with the `try` in its body. The acquire may also be the last statement of a deadline scope or of
another lock's `with` (`with anyio.fail_after(5): await lock.acquire()`)
with the `try` right after that block. So is a `try` whose catch-all handler (`except BaseException:`)
releases while its body hands `sem.release` on to what keeps the permit
after success (`StreamResponse(release=sem.release)`), or whose
catch-all handler releases and re-raises while another method of the
class releases in its `finally` (a threading server's `process_request`
and `process_request_thread`), or releases in a method the function hands
on as a callback (`future.add_done_callback(self._done)`). So is a `with`
of a guard class of the file that keeps the lock it is handed and releases
it in `__exit__` (`await lock.acquire()` then `with MaybeUnlock(lock) as
guard:`, also when its `defer()` passes the release to a timer). An `acquire` whose result an
`async with` takes (`async with await self._locks.acquire(key):`, a
lookup that hands back the lock) is released by the `with`, and so is
an acquire inside `with` the same lock (taking it back after a
`release()` around a wait), or in a callback the enclosing function hands
on inside such a `with` (`release(); try: time.sleep(0) finally:
acquire()` in a progress callback that lets other writers in), or in a
`@contextmanager` that lends a permit its caller holds (`release(); try:
yield finally: acquire()`), or in a private helper the file only calls
while holding a lock (`async with self._lock: await self._start(t)`,
whose body lets go of the lock around a slow step). Methods that hand the
acquisition to their caller are not reported: a `begin_x` whose class
has an `end_x`/`finish_x` releasing the same lock, `__enter__`/`__aenter__`,
`acquire`/`acquire_*`, `*_acquire` (`semaphore_acquire(sem)`) and their
async twins (`aacquire_lock`). Nor is a method that gives the permit back
only when the step right after the acquire fails (a `try` there whose
`except ShutDown:` releases and re-raises) in a class where another
method, not one it calls itself, releases it without taking it (a bounded
queue's `task_done()`): each permit goes with an item handed on, and its
consumer returns it. Nor is a lock a function makes for itself
(`claim = threading.Lock()`) and mentions only as the receiver of its own
`acquire`/`release`/`locked`, when every acquire of it sits in that
function's own body (nothing runs beside the call to be blocked) or only
tries (`claim.acquire(blocking=False)` picks a winner and never waits).
Nor is a lock the file never releases anywhere and whose `locked()` a
function returns as its state (`return self._closing.locked()`: a
"closing" switch thrown once), or that the file only ever tries, never
enters with `with`, never hands on (its `release` or itself passed to a
call) and never releases under any owner (`if not _exiting.acquire(
blocking=False): return`, then `os._exit(..)`: a latch the first exit
takes). Nor is a lock of `self` that the class's `__init__` acquires and keeps:
built held, it is a signal (a worker releases it when ready, a waiter's
`acquire(timeout=t)` waits for that), not a section to give back.
A receiver known only by its name counts as a limiter
(`self._limiter`) only in a file that releases one: a rate limiter (a
token bucket, a sliding window) has no `release`, and spends what it takes
by design. A class's `acquire` (`instance.Lock.acquire(path)`, a CamelCase
receiver) is a factory that hands back a handle, not a taken lock.

## Why

Any exception or cancellation between the acquire and a plain `release()`
skips the release. A semaphore then loses a permit for good: after enough
errors the service runs with fewer slots, then with none, and every request
waits forever. A lock left held deadlocks the next caller.

## Example

```python
import asyncio

sem = asyncio.Semaphore(10)

async def call(api):
    await sem.acquire()
    result = await api.get()
    sem.release()
    return result
```

## Fix

Use the context manager (or `try`/`finally` right after the acquire).

```python
import asyncio

sem = asyncio.Semaphore(10)

async def call(api):
    async with sem:
        return await api.get()
```
"#,
    examples: &EXAMPLES,
};

fn is_limiter(cx: &FileCx, r: ExprId) -> bool {
    let r = cx.model.strip(r);
    if let Some(t) = cx.sema.type_of(r) {
        return cx.kb.find(Effect::Lock, Some(t), "").is_some();
    }
    cx.model.dotted(r).is_some_and(|d| {
        let last = d.rsplit('.').next().unwrap_or(&d);
        // `instance.Lock.acquire(state_dir)`: a class's own `acquire` is a
        // factory handing back a handle (or `None`), not a taken lock.
        if names_a_class(last) {
            return false;
        }
        let last = last.to_ascii_lowercase();
        let last = last.trim_start_matches('_');
        last == "sem"
            || last.contains("semaphore")
            || last.ends_with("_sem")
            || last == "lock"
            || last.ends_with("_lock")
            || (last.contains("limiter") && releases_a_limiter(cx))
            || last == "mutex"
    })
}

/// `instance_lock.acquire()` after `from . import instance_lock`: a
/// function of a project module (which takes a process-wide lock and hands
/// back its handle), not a method of a lock object.
fn module_function(cx: &FileCx, r: ExprId, c: &Call) -> bool {
    let Some(name) = cx.model.name_of(cx.model.strip(r)) else {
        return false;
    };
    cx.model.imports.iter().any(|i| &*i.local == name)
        && c.target
            .as_deref()
            .is_some_and(|t| cx.index.resolve(cx.lang, t, cx.file).is_some())
}

/// `Lock`, `FileLock`: a CamelCase name is a class (a constant is all
/// capitals, an instance lower case).
fn names_a_class(last: &str) -> bool {
    last.starts_with(|c: char| c.is_ascii_uppercase())
        && last.chars().any(|c| c.is_ascii_lowercase())
}

/// A limiter of unknown type is a capacity limiter (permits taken and given
/// back) only if the file gives one back somewhere: a rate limiter (a token
/// bucket, a sliding window: `self.rate_limiter.acquire()`) has no
/// `release`, and spends what it takes by design.
fn releases_a_limiter(cx: &FileCx) -> bool {
    cx.calls_named(&["release"]).iter().any(|(_, c)| {
        c.receiver
            .and_then(|r| cx.model.dotted(r))
            .is_some_and(|d| d.to_ascii_lowercase().contains("limiter"))
    })
}

/// `sem = asyncio.Semaphore(0)` in the function: a semaphore made with no
/// permit is a signal, not a limit. Its `acquire()` waits for a `release()`
/// made elsewhere (the reply arrived), and nothing is owed back.
fn starts_empty(cx: &FileCx, f: FuncId, name: &str) -> bool {
    let mut bound = crate::python::common::values_bound_to(cx, f, name).peekable();
    bound.peek().is_some()
        && bound.all(|v| {
            v.and_then(|v| cx.call(cx.model.strip(v))).is_some_and(|c| {
                c.name.ends_with("Semaphore")
                    && c.positional(0)
                        .or_else(|| c.kwarg("value"))
                        .is_some_and(|a| matches!(cx.model.literal(a), Some(Lit::Int(0))))
            })
        })
}

/// `self.ready.acquire()` in the class's `__init__`, with no release
/// there: the object is built holding the lock, which makes it a signal, not a critical section (a
/// worker thread releases it once the connection is up, a waiter's
/// `acquire(timeout=t)` waits for that, and re-arming takes it back).
/// Nothing is owed back by the method that acquires it.
fn held_from_construction(cx: &FileCx, f: FuncId, name: &str) -> bool {
    if !name.starts_with("self.") {
        return false;
    }
    let Some(class) = crate::python::common::class_of(cx, f) else {
        return false;
    };
    let calls = |g: FuncId, method: &str| calls_on(cx, g, method, name);
    // Taken and kept: an `__init__` that also releases it (a first
    // reading under the lock) built an ordinary mutex.
    cx.model.function_ids().any(|g| {
        cx.func(g).name == "__init__"
            && cx.func(g).class.as_deref() == Some(class)
            && calls(g, "acquire")
            && !calls(g, "release")
    })
}

/// Nothing in the file ever releases the lock, and its `locked()` is read
/// as state (`return self.closing_lock.locked()` in a `closing`
/// property): taking it is a one-way switch ("closed"), not a section
/// to give back.
fn one_way_flag(cx: &FileCx, name: &str) -> bool {
    let on_it = |method: &str| {
        cx.calls_named(&[method])
            .into_iter()
            .filter(|(_, c)| c.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some(name))
    };
    // Read as the answer of a predicate (`return self._closing.locked()`),
    // not merely tested before taking it.
    let reported = on_it("locked").any(|(e, _)| {
        matches!(cx.tree.expr_parent(e), Parent::Stmt(s)
            if matches!(cx.stmt(s).kind, StmtKind::Return(Some(_))))
    });
    // Or only ever tried, never entered with `with`: a latch that the
    // first of several exits takes (`if not _exiting.acquire(blocking=
    // False): return`, then `os._exit(..)`), which no caller waits on.
    // A lock whose `release` is handed on (`release=turn_lock.release`),
    // that is passed to a helper, or that another object of the same
    // attribute name releases (`executor._idle_semaphore.release()`) may
    // be given back after all: only one nothing can release is a latch.
    let last = name.rsplit('.').next().unwrap_or(name);
    let given_back_or_handed_on = || {
        (0..cx.model.exprs.len() as u32).map(ExprId).any(|x| {
            is_release_of_attr(cx, x, last)
                || cx.call(x).is_some_and(|k| {
                    k.args
                        .iter()
                        .any(|a| cx.model.dotted(a.value).as_deref() == Some(name))
                })
        })
    };
    let latch = || {
        on_it("acquire").all(|(_, c)| crate::python::common::is_try_acquire(cx, c))
            && !cx.model.function_ids().any(|g| {
                cx.body_stmts(g).iter().any(|&s| {
                    matches!(&cx.stmt(s).kind, StmtKind::With { items, .. }
                        if items.iter().any(|it| cx.model.dotted(it.ctx).as_deref() == Some(name)))
                })
            })
            && !given_back_or_handed_on()
    };
    on_it("release").next().is_none() && (reported || latch())
}

/// A lock the function builds for itself and never hands out (`claim =
/// threading.Lock()`, then only the receiver of its own `acquire`,
/// `release` and `locked`): a hold left in place can block only this
/// call's own later acquires when they all sit in its own body (no nested
/// function runs beside it: `lock.acquire(); lock.acquire()` sleeps for
/// good on purpose), and nobody when every acquire, nested functions'
/// included, only tries (`claim.acquire(blocking=False)` picks a winner).
fn private_to_call(cx: &FileCx, f: FuncId, name: &str) -> bool {
    use crate::python::common::{declared_outer, is_store, is_try_acquire, name_refs};
    if name.contains('.') {
        return false;
    }
    // The function that binds the name: this one, or the nearest one
    // around it (a nested function's closure).
    let mut f = f;
    while crate::python::common::values_bound_to(cx, f, name)
        .next()
        .is_none()
    {
        if cx.func(f).params.iter().any(|p| p.name == name) {
            return false;
        }
        let Some(parent) = cx.func(f).parent else {
            return false;
        };
        f = parent;
    }
    // A module's lock may be imported and taken elsewhere.
    if matches!(cx.func(f).kind, FnKind::Module)
        || cx.func(f).params.iter().any(|p| p.name == name)
        || declared_outer(cx, f, name).is_some()
    {
        return false;
    }
    let mut bound = crate::python::common::values_bound_to(cx, f, name).peekable();
    if bound.peek().is_none()
        || !bound.all(|v| {
            v.and_then(|v| cx.call(cx.model.strip(v)))
                .is_some_and(|c| builds_a_lock(cx, c))
        })
    {
        return false;
    }
    let funcs: std::collections::HashSet<FuncId> = cx.with_nested(f).into_iter().collect();
    let (mut nested, mut all_tries) = (false, true);
    for r in name_refs(cx, &funcs, name) {
        if is_store(cx, r) {
            continue;
        }
        let Some(c) = crate::util::method_on(cx, r) else {
            return false;
        };
        match c.name.as_str() {
            "acquire" => all_tries &= is_try_acquire(cx, c),
            "release" | "locked" => {}
            _ => return false,
        }
        nested |= cx.func_of(r) != f;
    }
    !nested || all_tries
}

/// A call that makes a new lock or semaphore: a constructor the knowledge
/// names, a class called `*Lock`/`*Semaphore`, or a factory named for
/// making one (`create_thread_lock()`), not a lookup that may hand back a
/// shared one (`self._lock_for(key)`).
fn builds_a_lock(cx: &FileCx, c: &Call) -> bool {
    if cx
        .effect(c, unsnarl_model::knowledge::Effect::Lock)
        .is_some()
    {
        return true;
    }
    let n = c.name.as_str();
    let lower = n.to_ascii_lowercase();
    (n.starts_with(|ch: char| ch.is_ascii_uppercase())
        && (n.ends_with("Lock") || n.ends_with("Semaphore")))
        || (["create_", "new_", "make_", "allocate_"]
            .iter()
            .any(|p| lower.starts_with(p))
            && (lower.ends_with("lock") || lower.ends_with("semaphore")))
}

/// Methods that hand an acquisition to their caller.
fn delegates(name: &str) -> bool {
    if matches!(
        name,
        "__enter__" | "__aenter__" | "acquire" | "lock" | "__init__"
    ) || name.starts_with("_acquire")
        || name.starts_with("acquire_")
        // `semaphore_acquire(sem)`: a helper named for acquiring.
        || name.ends_with("_acquire")
    {
        return true;
    }
    // The async twin of such a method, named as async twins are
    // (`aacquire_lock` beside `acquire_lock`, `async_acquire`).
    let bare = name.trim_start_matches('_');
    bare.strip_prefix("async_")
        .or_else(|| bare.strip_prefix('a'))
        .is_some_and(|rest| rest == "acquire" || rest.starts_with("acquire_"))
}

/// `begin_commit()` whose class has `finish_commit()` (or `end_commit()`)
/// releasing the same lock: the pair hands the section to the caller,
/// who ends it, as `__enter__`/`__exit__` do.
fn begins_a_paired_section(cx: &FileCx, f: FuncId, lock: &str) -> bool {
    let func = cx.func(f);
    let Some(what) = func.name.trim_start_matches('_').strip_prefix("begin_") else {
        return false;
    };
    cx.model.function_ids().any(|g| {
        let other = cx.func(g);
        other.class == func.class
            && matches!(
                other.name.trim_start_matches('_').split_once('_'),
                Some(("finish" | "end", rest)) if rest == what
            )
            && cx.body_exprs(g).iter().any(|&e| is_release_of(cx, e, lock))
    })
}

/// A permit that outlives the call on purpose: the method gives it back
/// itself only when the step right after the acquire fails (`try: ..
/// except ShutDown: self._sem.release(); raise`), and another method of the class releases it without ever
/// taking it (`task_done()` of a bounded queue, a pool's `_return`): each
/// permit stands for an item handed on, and the consumer returns it.
fn handed_to_another_method(cx: &FileCx, f: FuncId, acquire: ExprId, lock: &str) -> bool {
    let func = cx.func(f);
    if func.class.is_none() {
        return false;
    }
    // The step right after the acquire (or after its `if not ..acquire():
    // raise` guard) is a `try` whose handler gives the permit back.
    let Some(s) = cx.tree.enclosing_stmt(acquire) else {
        return false;
    };
    let released_on_failure = crate::util::next_stmt(cx, s).is_some_and(|n| {
        matches!(&cx.stmt(n).kind, StmtKind::Try { handlers, .. }
        if handlers.iter().any(|h| {
            unsnarl_model::walk::exprs_in_block(cx.model, &h.body)
                .into_iter()
                .any(|e| is_release_of(cx, e, lock))
        }))
    });
    if !released_on_failure {
        return false;
    }
    // Not a teardown that gives back one permit once (`close()`): the
    // permits taken for each item would still leak.
    let teardown = |g: FuncId| {
        matches!(
            cx.func(g).name.trim_start_matches('_'),
            "close"
                | "aclose"
                | "stop"
                | "shutdown"
                | "cleanup"
                | "dispose"
                | "terminate"
                | "reset"
                | "del__"
                | "exit__"
                | "aexit__"
        )
    };
    // A method this one calls to give the permit back (`self.
    // _release_slot(..)` on its own paths) keeps the release here, where
    // every path must reach it: not a hand-off.
    let called: Vec<FuncId> = cx
        .body_calls(f)
        .filter_map(|e| cx.call(e).and_then(|c| cx.callee_in_file(c)))
        .collect();
    cx.model.function_ids().any(|g| {
        g != f
            && cx.func(g).class == func.class
            && !called.contains(&g)
            && !teardown(g)
            && cx.body_exprs(g).iter().any(|&e| is_release_of(cx, e, lock))
            && !calls_on(cx, g, "acquire", lock)
    })
}

/// `g`'s own body calls `method` on the lock `lock` (`self._lock.acquire()`).
fn calls_on(cx: &FileCx, g: FuncId, method: &str, lock: &str) -> bool {
    cx.body_calls(g).any(|e| {
        cx.call(e).is_some_and(|k| {
            k.name == method && k.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some(lock)
        })
    })
}

/// Methods of a class that is itself a synchronization primitive (it
/// defines `release` or a context manager protocol): acquisition and
/// release are split across its methods by design.
fn in_primitive_class(cx: &FileCx, f: FuncId) -> bool {
    let Some(class) = crate::python::common::class_of(cx, f) else {
        return false;
    };
    cx.model.functions.iter().any(|g| {
        g.class.as_deref() == Some(class)
            && matches!(
                g.name.as_str(),
                "release" | "__exit__" | "__aexit__" | "__enter__" | "__aenter__"
            )
    })
}

impl Rule for AcquireWithoutRelease {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for (id, c) in cx.calls_named(&["acquire"]) {
            let e = cx.expr(id);
            if matches!(cx.tree.expr_parent(id), Parent::Detached) {
                continue;
            }
            let Some(r) = c.receiver else { continue };
            if !is_limiter(cx, r) || module_function(cx, r, c) {
                continue;
            }
            let Some(name) = cx.model.dotted(r) else {
                continue;
            };
            let f = cx.func_of(id);
            if starts_empty(cx, f, &name)
                || private_to_call(cx, f, &name)
                || held_from_construction(cx, f, &name)
                || one_way_flag(cx, &name)
            {
                continue;
            }
            let func = cx.func(f);
            if delegates(&func.name)
                || func.is_test
                || in_primitive_class(cx, f)
                || begins_a_paired_section(cx, f, &name)
                || handed_to_another_method(cx, f, id, &name)
            {
                continue;
            }
            let Some(s) = cx.tree.enclosing_stmt(id) else {
                continue;
            };
            // `async with await self._locks.acquire(key):` — this
            // `acquire` hands back the lock the `with` takes and releases.
            if matches!(&cx.stmt(s).kind, StmtKind::With { items, .. }
                if items.iter().any(|it| cx.contains(it.ctx, id)))
            {
                continue;
            }
            // `while True: if lock.acquire(blocking=False): break; await
            // asyncio.sleep(0)`: the loop ends holding the lock, so it is
            // the acquire, right before the statement after the loop.
            let s = match (&cx.stmt(s).kind, cx.tree.stmt_parent(s)) {
                (StmtKind::If { cond, then, orelse }, Parent::Stmt(w))
                    if cx.contains(*cond, id)
                        && orelse.is_empty()
                        && matches!(then.as_slice(), [b] if matches!(cx.stmt(*b).kind, StmtKind::Break))
                        && matches!(cx.stmt(w).kind, StmtKind::While { .. }) =>
                {
                    w
                }
                _ => s,
            };
            let problem = match classify(cx, f, s, id, &name) {
                Some(p) => p,
                None => continue,
            };
            out.push(cx.finding(
                &META,
                e.span,
                format!("`{name}.acquire()` {problem}: an exception or cancellation in between leaks the permit (or leaves the lock held), and after enough failures every caller waits forever"),
                format!("use `with {name}:` / `async with {name}:`, or put `{name}.release()` in the `finally` of a `try` that starts right after the acquire"),
            ));
        }
    }
}

/// What is wrong with the release of an acquisition made in statement `s`.
fn classify(cx: &FileCx, f: FuncId, s: StmtId, acquire: ExprId, name: &str) -> Option<String> {
    // The acquisition's result is returned or kept: someone else releases.
    if matches!(cx.stmt(s).kind, StmtKind::Return(_)) {
        return None;
    }
    // Inside `with <the same lock>:` (`lock.release(); try: await wait()
    // finally: lock.acquire()`): the lock is taken back for the `with`,
    // whose exit releases it on every path.
    if cx.tree.stmt_ancestors(s).any(|a| {
        matches!(&cx.stmt(a).kind, StmtKind::With { items, .. }
            if items.iter().any(|it| cx.model.dotted(it.ctx).as_deref() == Some(name)))
    }) {
        return None;
    }
    // `lock.release(); try: ... finally: lock.acquire()` in a callback the
    // enclosing function hands on under `with lock:` (`conn.backup(..,
    // progress=allow_writes)`): it lets go of the lock while called and
    // takes it back for the `with`, whose exit releases it.
    if cx.tree.stmt_ancestors(s).any(|a| {
        matches!(&cx.stmt(a).kind, StmtKind::Try { finally: Some(fin), .. }
            if body_contains(cx, fin, s)
                && crate::util::prev_stmt(cx, a).is_some_and(|p| release_stmt(cx, p, name).is_some()))
    }) && (handed_on_under_the_lock(cx, f, name)
        || lends_while_yielding(cx, f)
        || crate::python::common::callers_hold_lock(cx, f))
    {
        return None;
    }
    // Inside a `try` whose `finally` releases.
    for a in cx.tree.stmt_ancestors(s) {
        if let StmtKind::Try {
            finally: Some(fin),
            body,
            ..
        } = &cx.stmt(a).kind
            && (releases(cx, fin, name) || released_through_a_list(cx, fin, body, name))
            && body_contains(cx, body, s)
        {
            return None;
        }
    }
    // `acquire()` (or `if not acquire(): return`) followed by try/finally.
    // When only guards follow it to the end of a branch of an `if` (each
    // branch of an `if`/`elif`/`else` acquiring its own way, with
    // `blocking=False` or a timeout), the `try` may follow the whole `if`.
    let (mut from, mut seen) = (s, 0);
    'climb: loop {
        let rest = following(cx, from);
        for &next in rest {
            seen += 1;
            if seen > 8 {
                break 'climb;
            }
            if releasing_try(cx, next, name) {
                return None;
            }
            if hands_over_or_releases_on_failure(cx, next, name)
                || enters_a_releasing_guard(cx, next, name)
            {
                return None;
            }
            // Only a guard, or a statement that cannot raise (`items =
            // []`), may sit between the acquire and the try.
            if !matches!(
                cx.stmt(next).kind,
                StmtKind::If { .. } | StmtKind::Pass | StmtKind::Global { .. }
            ) && !binds_a_constant(cx, next)
                && !bumps_a_counter(cx, next)
                && !updates_own_state(cx, next)
                && !takes_another_lock(cx, next, name)
                && !absorbs_errors(cx, next, name)
                && !sets_a_context_var(cx, next)
                && !logs(cx, next)
                && !collects_a_name(cx, next)
            {
                break 'climb;
            }
        }
        let last = rest.last().copied().unwrap_or(from);
        match cx.tree.stmt_parent(last) {
            Parent::Stmt(p)
                if matches!(&cx.stmt(p).kind, StmtKind::If { then, orelse, .. }
                if then.last() == Some(&last) || orelse.last() == Some(&last)) =>
            {
                from = p
            }
            // `try: await wait_for(lock.acquire(), t); acquired = True
            // except TimeoutError: log(..)`: a handler runs only when the
            // acquire failed, holding nothing; on success the code goes on
            // after that `try`, where its own `try` may start.
            Parent::Stmt(p)
                if matches!(&cx.stmt(p).kind, StmtKind::Try { body, finally: None, handlers, .. }
                if body.last() == Some(&last) && !handlers.is_empty()) =>
            {
                from = p
            }
            // `with anyio.fail_after(5): await lock.acquire()`, or the
            // acquire last under `async with outer:`: leaving a deadline
            // scope that did not fire, or another lock's `with`, raises
            // nothing, so the `try` after it still follows the acquire.
            Parent::Stmt(p)
                if matches!(&cx.stmt(p).kind, StmtKind::With { body, items, .. }
                if body.last() == Some(&last)
                    && items.iter().all(|it| {
                        crate::python::common::is_deadline_scope(cx, it.ctx)
                            || crate::python::common::lock_kind(cx, it.ctx).is_some()
                    })) =>
            {
                from = p
            }
            _ => break,
        }
    }
    // A probe: the release is the very next statement, or follows only
    // statements that cannot raise (`self._objects[i] = obj`).
    let after: Vec<StmtId> = match &cx.stmt(s).kind {
        // `if not lock.acquire(blocking=False): raise Busy()`: the lock is
        // held after the `if`.
        StmtKind::If { cond, then, orelse }
            if orelse.is_empty()
                && matches!(&cx.expr(cx.model.strip(*cond)).kind,
                    ExprKind::Unary { op: UnOp::Not, operand } if cx.model.strip(*operand) == acquire)
                && then.last().is_some_and(|&l| {
                    matches!(cx.stmt(l).kind, StmtKind::Return(_) | StmtKind::Raise(_))
                }) =>
        {
            stmts_after(cx, s).to_vec()
        }
        StmtKind::If { cond, then, .. } if cx.contains(*cond, acquire) => then.clone(),
        // `got = lock.acquire(timeout=t)` then `if got: lock.release()`.
        StmtKind::Assign { targets, .. } => {
            let flag = targets.first().and_then(|&t| cx.model.name_of(t));
            let rest = stmts_after(cx, s);
            match rest.first().map(|&n| &cx.stmt(n).kind) {
                Some(StmtKind::If { cond, then, .. })
                    if flag.is_some() && cx.model.name_of(*cond) == flag =>
                {
                    then.clone()
                }
                _ => rest.to_vec(),
            }
        }
        _ => stmts_after(cx, s).to_vec(),
    };
    let first_after = after.iter().copied().find(|&n| {
        !cannot_raise(cx, n) && !releases_and_leaves(cx, n, name) && !waits_on_it(cx, n, name)
    });
    // `got = lock.acquire(timeout=t)` then `if got: try: .. finally:
    // lock.release()`: the branch that holds it starts its own `try`.
    if first_after.is_some_and(|n| {
        hands_on_the_lock(cx, n, name)
            || release_stmt(cx, n, name).is_some()
            || releasing_try(cx, n, name)
    }) {
        return None;
    }
    // `if sem.acquire(blocking=False):` with the try in the branch, or
    // `if not lock.acquire(False): <defer> else: try: ... finally:
    // release()` with the try in the `else`, the branch that holds it.
    if let StmtKind::If { cond, then, orelse } = &cx.stmt(s).kind
        && cx.contains(*cond, acquire)
    {
        // Also `if closed or not lock.acquire(False):` with the acquire in
        // the last alternative: the `else` runs only once it succeeded.
        let negated = |e: ExprId| {
            matches!(
                cx.expr(cx.model.strip(e)).kind,
                ExprKind::Unary { op: UnOp::Not, .. }
            )
        };
        let negated = match cx.expr(cx.model.strip(*cond)).kind {
            ExprKind::Logical {
                op: LogicalOp::Or,
                right,
                ..
            } => negated(right) && cx.contains(right, acquire),
            _ => negated(*cond),
        };
        let holding = if negated { orelse } else { then };
        if holding.iter().any(|&t| releasing_try(cx, t, name)) {
            return None;
        }
    }
    // `while pending and lock.acquire(blocking=False):` whose body takes
    // the `try` (a try-lock each round, released by that round).
    if let StmtKind::While { cond, body, .. } = &cx.stmt(s).kind
        && cx.contains(*cond, acquire)
        && !matches!(
            cx.expr(cx.model.strip(*cond)).kind,
            ExprKind::Unary { op: UnOp::Not, .. }
        )
        && body.iter().any(|&t| releasing_try(cx, t, name))
    {
        return None;
    }
    let funcs = crate::python::common::func_and_nested(cx, f);
    let release_sites: Vec<ExprId> = crate::python::common::exprs_of(cx, &funcs)
        .into_iter()
        .filter(|&e| is_release_of(cx, e, name))
        .collect();
    if release_sites.is_empty() {
        // Released by another method of the file (start/stop pairs), or a
        // `release` passed as a callback.
        let acquires_in = |g: FuncId| calls_on(cx, g, "acquire", name);
        let attr = name.rsplit('.').next().unwrap_or(name);
        let elsewhere = (0..cx.model.exprs.len() as u32).map(ExprId).any(|x| {
            is_release_of_attr(cx, x, attr)
                && !matches!(cx.tree.expr_parent(x), Parent::Detached)
                && !acquires_in(cx.func_of(x))
        });
        return (!elsewhere).then(|| "is never followed by a `release()`".to_string());
    }
    // Released in a callback (a task's done-callback): ownership moved.
    if release_sites.iter().any(|&r| cx.func_of(r) != f) {
        return None;
    }
    Some("is not immediately followed by a `try` whose `finally` releases it".into())
}

/// `s` is a `try` whose `finally` releases `name`.
fn releasing_try(cx: &FileCx, s: StmtId, name: &str) -> bool {
    match &cx.stmt(s).kind {
        StmtKind::Try {
            finally: Some(fin), ..
        } => releases(cx, fin, name),
        // `with ExitStack() as stack: stack.callback(lock.release); ...`:
        // the stack's exit releases on every path, as a `finally` would.
        StmtKind::With { items, body, .. } => {
            let stacks: Vec<&str> = items
                .iter()
                .filter(|it| {
                    cx.call(cx.model.strip(it.ctx))
                        .is_some_and(|c| c.name == "ExitStack" || c.name == "AsyncExitStack")
                })
                .filter_map(|it| it.target.and_then(|t| cx.model.name_of(t)))
                .collect();
            body.first().is_some_and(|&b| match cx.stmt(b).kind {
                StmtKind::Expr(x) => cx.call(cx.model.strip(x)).is_some_and(|c| {
                    c.name == "callback"
                        && c.receiver
                            .and_then(|r| cx.model.name_of(r))
                            .is_some_and(|r| stacks.contains(&r))
                        && c.positional(0).is_some_and(|a| is_release_of(cx, a, name))
                }),
                _ => false,
            })
        }
        _ => false,
    }
}

/// `if not self.is_done: self._callbacks.append(f); lock.release();
/// return self`: a test of a plain value whose branch does only what
/// cannot raise, then releases and leaves. The path that skips it goes
/// on to the statements after the `if`.
fn releases_and_leaves(cx: &FileCx, s: StmtId, name: &str) -> bool {
    let StmtKind::If { cond, then, orelse } = &cx.stmt(s).kind else {
        return false;
    };
    let cond = match &cx.expr(cx.model.strip(*cond)).kind {
        ExprKind::Unary {
            op: UnOp::Not,
            operand,
        } => *operand,
        _ => *cond,
    };
    let Some((last, body)) = then.split_last() else {
        return false;
    };
    let Some((release, body)) = body.split_last() else {
        return false;
    };
    orelse.is_empty()
        && cx.model.dotted(cond).is_some()
        && matches!(
            cx.stmt(*last).kind,
            StmtKind::Return(_) | StmtKind::Raise(_)
        )
        && release_stmt(cx, *release, name).is_some_and(|c| c.args.is_empty())
        && body.iter().all(|&b| cannot_raise(cx, b))
}

/// `cond.wait(timeout)` (or `wait_for`) on the condition just acquired:
/// a wait on a condition the thread holds does not raise (it gives the
/// lock back while waiting and takes it again before returning).
fn waits_on_it(cx: &FileCx, s: StmtId, name: &str) -> bool {
    let x = match &cx.stmt(s).kind {
        StmtKind::Expr(x) => *x,
        StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } if targets.iter().all(|&t| cx.model.name_of(t).is_some()) => *v,
        _ => return false,
    };
    cx.call(cx.model.strip(x)).is_some_and(|c| {
        matches!(c.name.as_str(), "wait" | "wait_for")
            && c.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some(name)
            && crate::python::common::is_condition(cx, c.receiver.unwrap())
    })
}

/// The statements a probe may hold between an acquire and its release:
/// constant bindings, stores of names into `self`, counter bumps and
/// in-place updates of the object's own state, none of which raises.
fn cannot_raise(cx: &FileCx, s: StmtId) -> bool {
    binds_a_constant(cx, s)
        || stores_a_name(cx, s)
        || bumps_a_counter(cx, s)
        || updates_own_state(cx, s)
        || guarded_plain_steps(cx, s)
        || logs(cx, s)
        || sets_a_context_var(cx, s)
        || reads_own_flag(cx, s)
        || dict_bookkeeping(cx, s)
        || collects_a_name(cx, s)
}

/// `running.add(me)`, `self._waiters.append(fut)`: a name put into a list
/// or set the file only ever makes empty (`running = set()`), which does
/// not raise.
fn collects_a_name(cx: &FileCx, s: StmtId) -> bool {
    let StmtKind::Expr(x) = cx.stmt(s).kind else {
        return false;
    };
    cx.call(cx.model.strip(x)).is_some_and(|c| {
        matches!(c.name.as_str(), "add" | "append")
            && matches!(c.args.as_slice(), [a] if a.name.is_none() && !a.spread
                && matches!(cx.expr(cx.model.strip(a.value)).kind, ExprKind::Name { .. }))
            && c.receiver
                .and_then(|r| cx.model.dotted(r))
                .is_some_and(|d| {
                    cx.model.only_ever_assigned(&d, |v| {
                        crate::python::common::new_empty_list_or_set(cx, v)
                    })
                })
    })
}

/// Counting in a dict by key (`n = open_calls.get(key, 0)`,
/// `open_calls[key] = n - 1`, `if n <= 1: del open_calls[key]`): names,
/// literals and arithmetic, with no call but a `get` of a plain key, which
/// does not raise.
fn dict_bookkeeping(cx: &FileCx, s: StmtId) -> bool {
    let plain = |e: ExprId| {
        unsnarl_model::walk::exprs_under(cx.model, e)
            .into_iter()
            .all(|x| match &cx.expr(x).kind {
                ExprKind::Call(c) => {
                    c.name == "get"
                        && c.receiver.and_then(|r| cx.model.dotted(r)).is_some()
                        && c.args.iter().all(|a| {
                            !a.spread
                                && matches!(
                                    cx.expr(cx.model.strip(a.value)).kind,
                                    ExprKind::Name { .. } | ExprKind::Literal(_)
                                )
                        })
                }
                // `d["k"]` raises `KeyError` when the key is missing.
                ExprKind::Await(_) | ExprKind::Index { .. } => false,
                _ => true,
            })
    };
    let keyed = |t: ExprId| match &cx.expr(cx.model.strip(t)).kind {
        ExprKind::Name { .. } => true,
        ExprKind::Index { obj, index } => {
            cx.model.dotted(*obj).is_some()
                && matches!(
                    cx.expr(cx.model.strip(*index)).kind,
                    ExprKind::Name { .. } | ExprKind::Literal(_)
                )
        }
        _ => false,
    };
    match &cx.stmt(s).kind {
        StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } => targets.iter().all(|&t| keyed(t)) && plain(*v),
        // `del calls[key]` only right after `calls[key] = ..` set it (a
        // missing key raises `KeyError`).
        StmtKind::If { cond, then, orelse } => {
            let stored: Vec<&str> = match crate::util::prev_stmt(cx, s).map(|p| &cx.stmt(p).kind) {
                Some(StmtKind::Assign { targets, .. }) => targets
                    .iter()
                    .map(|&t| cx.source(cx.expr(t).span))
                    .collect(),
                _ => Vec::new(),
            };
            let step = |b: StmtId| match &cx.stmt(b).kind {
                StmtKind::Delete(targets) => targets
                    .iter()
                    .all(|&t| keyed(t) && stored.contains(&cx.source(cx.expr(t).span))),
                _ => dict_bookkeeping(cx, b),
            };
            plain(*cond) && then.iter().chain(orelse).all(|&b| step(b))
        }
        _ => false,
    }
}

/// `first = not self._started`: a local bound to a field of the object
/// read (or negated) as it is, which does not raise.
fn reads_own_flag(cx: &FileCx, s: StmtId) -> bool {
    let StmtKind::Assign {
        targets,
        value: Some(v),
        op: AssignOp::Plain,
    } = &cx.stmt(s).kind
    else {
        return false;
    };
    let mut v = cx.model.strip(*v);
    if let ExprKind::Unary {
        op: UnOp::Not,
        operand,
    } = cx.expr(v).kind
    {
        v = cx.model.strip(operand);
    }
    targets.iter().all(|&t| cx.model.name_of(t).is_some())
        && matches!(cx.expr(v).kind, ExprKind::Attr { .. })
        && cx.model.dotted(v).is_some_and(|d| {
            d.strip_prefix("self.")
                .is_some_and(|rest| !rest.contains('.'))
        })
}

/// `marker = _HELD.set(held | {key})`: setting a `contextvars.ContextVar`
/// of the file to plain values (names, literals, collections of them, a
/// set union of those) only stores a reference.
fn sets_a_context_var(cx: &FileCx, s: StmtId) -> bool {
    let x = match &cx.stmt(s).kind {
        StmtKind::Expr(x) => *x,
        StmtKind::Assign {
            targets,
            value: Some(v),
            op: AssignOp::Plain | AssignOp::Declare { .. },
        } if targets.iter().all(|&t| cx.model.name_of(t).is_some()) => *v,
        _ => return false,
    };
    fn plain(cx: &FileCx, e: ExprId) -> bool {
        match &cx.expr(cx.model.strip(e)).kind {
            ExprKind::Name { .. } | ExprKind::Literal(_) => true,
            ExprKind::Collection { elems, keys, .. } => {
                keys.is_empty() && elems.iter().all(|&x| plain(cx, x))
            }
            ExprKind::Binary {
                op: BinOp::Bit,
                left,
                right,
            } => plain(cx, *left) && plain(cx, *right),
            _ => false,
        }
    }
    let Some(c) = cx.call(cx.model.strip(x)) else {
        return false;
    };
    let Some(var) = c.receiver.and_then(|r| cx.model.dotted(r)) else {
        return false;
    };
    c.name == "set"
        && c.args.len() == 1
        && c.args[0].name.is_none()
        && plain(cx, c.args[0].value)
        && (crate::python::common::constructions(cx, |t| t == "contextvars.ContextVar")
            .iter()
            .any(|(d, _)| *d == var)
            || reset_with_token(cx, s, &var))
}

/// `tok = _CURRENT.set(v)` whose token the function later hands back to
/// the same object's `reset` (`_CURRENT.reset(tok)`): the ContextVar
/// token idiom, whatever module made the variable.
fn reset_with_token(cx: &FileCx, s: StmtId, var: &str) -> bool {
    let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind else {
        return false;
    };
    let Some(tok) = targets.first().and_then(|&t| cx.model.name_of(t)) else {
        return false;
    };
    cx.body_calls(cx.tree.stmt_func(s)).any(|e| {
        cx.call(e).is_some_and(|k| {
            k.name == "reset"
                && k.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some(var)
                && matches!(k.args.as_slice(), [a] if cx.model.name_of(a.value) == Some(tok))
        })
    })
}

/// `logger.info("start %s", request_id)`: the logging module reports a
/// failing handler through `handleError` instead of raising.
fn logs(cx: &FileCx, s: StmtId) -> bool {
    let StmtKind::Expr(x) = cx.stmt(s).kind else {
        return false;
    };
    cx.call(cx.model.strip(x)).is_some_and(|c| {
        c.target
            .as_deref()
            .is_some_and(|t| t.starts_with("logging."))
            && cx.effect(c, Effect::Logging).is_some()
    })
}

/// `if module is HeaterShakerContext: self.heater_shaker = module`: an
/// identity test of names (`is`, `is not`, a bare name or attribute) whose
/// branches hold only statements that cannot raise.
fn guarded_plain_steps(cx: &FileCx, s: StmtId) -> bool {
    let StmtKind::If { cond, then, orelse } = &cx.stmt(s).kind else {
        return false;
    };
    let plain = |e: ExprId| {
        matches!(
            cx.expr(cx.model.strip(e)).kind,
            ExprKind::Name { .. } | ExprKind::Literal(_)
        ) || cx.model.dotted(e).is_some()
    };
    let test = match &cx.expr(cx.model.strip(*cond)).kind {
        ExprKind::Binary {
            op: BinOp::Is | BinOp::IsNot,
            left,
            right,
        } => plain(*left) && plain(*right),
        ExprKind::Unary {
            op: UnOp::Not,
            operand,
        } => plain(*operand),
        _ => plain(*cond),
    };
    test && then.iter().chain(orelse).all(|&b| cannot_raise(cx, b))
}

/// `f` is a `@contextmanager` generator: `release(); try: yield ...
/// finally: acquire()` lends a permit its caller holds for the body of the
/// `with`, and hands it back after.
fn lends_while_yielding(cx: &FileCx, f: FuncId) -> bool {
    let func = cx.func(f);
    func.is_generator
        && func
            .decorators
            .iter()
            .any(|d| d.ends_with("contextmanager"))
}

/// `f` is a function nested in another that mentions it (hands it on)
/// inside `with <name>:` (`with self._db_lock: conn.backup(..,
/// progress=allow_writes)`): it runs while that `with` holds the lock.
fn handed_on_under_the_lock(cx: &FileCx, f: FuncId, name: &str) -> bool {
    let func = cx.func(f);
    let Some(parent) = func.parent else {
        return false;
    };
    cx.body_stmts(parent).iter().any(|&w| {
        matches!(&cx.stmt(w).kind, StmtKind::With { items, body, .. }
            if items.iter().any(|it| cx.model.dotted(it.ctx).as_deref() == Some(name))
                && unsnarl_model::walk::exprs_in_block(cx.model, body)
                    .into_iter()
                    .any(|x| matches!(&cx.expr(x).kind, ExprKind::Name { id, .. } if *id == func.name)))
    })
}

/// The statement is `<name>.release(..)`: that call.
fn release_stmt<'a>(cx: &FileCx<'a>, s: StmtId, name: &str) -> Option<&'a Call> {
    let StmtKind::Expr(x) = cx.stmt(s).kind else {
        return None;
    };
    cx.call(x).filter(|c| {
        c.name == "release" && c.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some(name)
    })
}

/// `acquired.append(message._lock)`: the held lock itself goes into a
/// collection whose owner releases what it holds (a caller's `finally`
/// walks the list).
fn hands_on_the_lock(cx: &FileCx, s: StmtId, name: &str) -> bool {
    let StmtKind::Expr(e) = cx.stmt(s).kind else {
        return false;
    };
    cx.call(e).is_some_and(|c| {
        matches!(c.name.as_str(), "append" | "add" | "put_nowait")
            && c.args.len() == 1
            && cx.model.dotted(c.args[0].value).as_deref() == Some(name)
    })
}

/// `self.items[i] = obj`, `self.last = obj`: stores a name or a constant
/// into an attribute of `self` or an entry of one, under a key that is a
/// name or a constant. On the dicts, lists and plain attributes a class
/// keeps, that does not raise.
fn stores_a_name(cx: &FileCx, s: StmtId) -> bool {
    let StmtKind::Assign {
        targets,
        value: Some(v),
        op: AssignOp::Plain,
    } = &cx.stmt(s).kind
    else {
        return false;
    };
    let simple = |e: ExprId| {
        matches!(
            cx.expr(e).kind,
            ExprKind::Name { .. } | ExprKind::Literal(_)
        )
    };
    let own = |e: ExprId| cx.model.dotted(e).is_some_and(|d| d.starts_with("self."));
    simple(*v)
        && targets.iter().all(|&t| match &cx.expr(t).kind {
            ExprKind::Index { obj, index } => own(*obj) && simple(*index),
            ExprKind::Attr { .. } => own(t),
            _ => false,
        })
}

/// `self.pending.append(item)`, `self.cond.notify_all()`,
/// `self._idle.clear()`: a collection or event of `self` updated in place
/// with plain names or constants, which does not raise (and does not
/// await, so no cancellation lands there either).
fn updates_own_state(cx: &FileCx, s: StmtId) -> bool {
    let StmtKind::Expr(e) = cx.stmt(s).kind else {
        return false;
    };
    let Some(c) = cx.call(e) else { return false };
    matches!(
        c.name.as_str(),
        "append"
            | "appendleft"
            | "add"
            | "discard"
            | "clear"
            | "set"
            | "notify"
            | "notify_all"
            // A set's in-place updates from a local collection.
            | "difference_update"
            | "intersection_update"
            | "symmetric_difference_update"
    ) && c
        .receiver
        .and_then(|r| cx.model.dotted(r))
        .is_some_and(|d| d.starts_with("self."))
        && c.args.iter().all(|a| plain_value(cx, a.value))
        || closes_a_socket(c)
}

/// A name, a constant, or a tuple or list of them (`(client, addr)`).
fn plain_value(cx: &FileCx, e: ExprId) -> bool {
    match &cx.expr(cx.model.strip(e)).kind {
        ExprKind::Name { .. } | ExprKind::Literal(_) => true,
        ExprKind::Collection {
            kind: CollKind::Tuple | CollKind::List,
            elems,
            ..
        } => elems.iter().all(|&x| {
            matches!(
                cx.expr(cx.model.strip(x)).kind,
                ExprKind::Name { .. } | ExprKind::Literal(_)
            )
        }),
        _ => false,
    }
}

/// `self._sock.close()` on a socket: it gives its descriptor back and
/// does not raise (a second close does nothing). A file's `close()`
/// flushes, and may.
fn closes_a_socket(c: &Call) -> bool {
    c.name == "close" && c.args.is_empty() && c.target.as_deref() == Some("socket.socket.close")
}

/// A name the function bumps as a counter somewhere (`job_counter += 1`):
/// it holds a number.
fn counted(cx: &FileCx, e: ExprId) -> bool {
    let Some(name) = cx.model.name_of(e) else {
        return false;
    };
    cx.body_stmts(cx.func_of(e)).iter().any(|&s| {
        bumps_a_counter(cx, s)
            && matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, .. }
                if targets.iter().any(|&t| cx.model.name_of(t) == Some(name)))
    })
}

/// `self.seqnr += 1`, `count += 1`: adds or subtracts a number literal to
/// an attribute of `self` or a name, the counter a lock around it numbers;
/// on the integers a class or a loop keeps, that does not raise.
fn bumps_a_counter(cx: &FileCx, s: StmtId) -> bool {
    let StmtKind::Assign {
        targets,
        value: Some(v),
        op: AssignOp::Augmented(BinOp::Add | BinOp::Sub),
    } = &cx.stmt(s).kind
    else {
        return false;
    };
    matches!(cx.model.literal(*v), Some(Lit::Int(_)))
        && targets.iter().all(|&t| {
            matches!(cx.expr(t).kind, ExprKind::Name { .. })
                || cx.model.dotted(t).is_some_and(|d| d.starts_with("self."))
        })
}

/// `try: previous = set_timeout(t) except Exception as e: log.debug(..)`:
/// a `try` that awaits nothing (no cancellation lands in it), does not
/// touch the lock, and has a handler for every ordinary error that raises
/// nothing, so no error leaves it with the lock held.
fn absorbs_errors(cx: &FileCx, s: StmtId, name: &str) -> bool {
    let StmtKind::Try {
        body,
        handlers,
        orelse,
        finally,
        ..
    } = &cx.stmt(s).kind
    else {
        return false;
    };
    let touches = |b: &Block| {
        unsnarl_model::walk::exprs_in_block(cx.model, b)
            .into_iter()
            .any(|e| cx.model.dotted(e).as_deref() == Some(name))
    };
    handlers
        .iter()
        .any(|h| crate::util::swallows_every_error(cx.model, h))
        && finally.is_none()
        && orelse.is_empty()
        && crate::util::awaits_in_block(cx.model, body).is_empty()
        && !touches(body)
        && handlers.iter().all(|h| {
            crate::util::awaits_in_block(cx.model, &h.body).is_empty()
                && !touches(&h.body)
                && !crate::util::raises_in(cx.model, &h.body)
        })
}

/// `self._rd_lock.acquire()`: a blocking acquire (no timeout, not
/// awaited: nothing can cancel it) of another lock, taken in order before
/// the `try` whose `finally` releases both. It returns only once it holds
/// the lock, and raises nothing in between.
fn takes_another_lock(cx: &FileCx, s: StmtId, name: &str) -> bool {
    let StmtKind::Expr(e) = &cx.stmt(s).kind else {
        return false;
    };
    cx.call(*e).is_some_and(|c| {
        c.name == "acquire"
            && c.args.is_empty()
            && c.receiver
                .and_then(|r| cx.model.dotted(r))
                .is_some_and(|other| other != name)
    })
}

/// `x = None`, `items = []`, `n = 0`, `y = x`, `cbs = self._cbs`, `t: Task |
/// None = None`, `self.events, self.usage = [], {}`: binds local names to a
/// constant, an empty collection, another name or an attribute of `self` (a
/// local's annotation is not evaluated). It cannot raise, so a lock taken
/// before it is still released by a `try` right after it.
fn binds_a_constant(cx: &FileCx, s: StmtId) -> bool {
    let StmtKind::Assign {
        targets,
        value: Some(v),
        op: AssignOp::Plain | AssignOp::Declare { .. },
    } = &cx.stmt(s).kind
    else {
        return false;
    };
    // A read of an attribute of `self` (`errbacks = self._errbacks`) does
    // not raise on the attributes a class sets up.
    let plain = |e: ExprId| match &cx.expr(e).kind {
        ExprKind::Literal(_) | ExprKind::Name { .. } => true,
        ExprKind::Attr { .. } => cx.model.dotted(e).is_some_and(|d| d.starts_with("self.")),
        _ => false,
    };
    // Also a literal of such values under literal keys (`request =
    // {"parameters": data, "state": "starting"}`).
    let simple = |e: ExprId| match &cx.expr(e).kind {
        ExprKind::Collection { elems, keys, .. } => {
            elems.iter().all(|&x| plain(x)) && keys.iter().all(Option::is_some)
        }
        _ => plain(e),
    };
    // A fresh event or empty container (`ctx.event = asyncio.Event()`)
    // stored into a name or a plain attribute: nothing there can raise;
    // nor does reading an environment variable by a literal name
    // (`previous = os.environ.get("NPU_ARCH")`).
    let fresh = |e: ExprId| {
        cx.call(e).is_some_and(|c| {
            (matches!(c.target.as_deref(), Some("os.getenv" | "os.environ.get"))
                && c.positional(0)
                    .is_some_and(|a| matches!(cx.model.literal(a), Some(Lit::Str(_)))))
                // `ret = len(self.attr)`: the size of a field of the object.
                || (c.target.as_deref() == Some("builtins.len")
                    && matches!(c.args.as_slice(), [a] if a.name.is_none()
                        && !a.spread
                        && cx.model.dotted(a.value).is_some_and(|d| d.starts_with("self."))))
                // `job_id = str(job_counter)`: the text of a counter.
                || (c.target.as_deref() == Some("builtins.str")
                    && matches!(c.args.as_slice(), [a] if a.name.is_none()
                        && !a.spread
                        && matches!(cx.expr(a.value).kind, ExprKind::Name { .. })
                        && counted(cx, a.value)))
                || c.args.is_empty()
                    && (crate::python::common::completion_kind(cx, c) == Some("event")
                        || matches!(
                            c.target.as_deref(),
                            Some(
                                "builtins.dict"
                                    | "builtins.list"
                                    | "builtins.set"
                                    | "builtins.object"
                                    | "asyncio.current_task"
                            )
                        ))
        })
    };
    // `self.last_events, self.last_usage = [], {}`: names or attributes of
    // `self` given constants or empty collections, pairwise.
    if let [t] = targets.as_slice()
        && let ExprKind::Collection { elems: ts, .. } = &cx.expr(*t).kind
        && let ExprKind::Collection { elems: vs, .. } = &cx.expr(cx.model.strip(*v)).kind
        && ts.len() == vs.len()
        && !ts.is_empty()
        && ts.iter().all(|&x| {
            matches!(cx.expr(x).kind, ExprKind::Name { .. })
                || cx.model.dotted(x).is_some_and(|d| {
                    d.strip_prefix("self.")
                        .is_some_and(|rest| !rest.contains('.'))
                })
        })
        && vs.iter().all(|&x| match &cx.expr(x).kind {
            ExprKind::Literal(_) => true,
            ExprKind::Collection { elems, .. } => elems.is_empty(),
            _ => false,
        })
    {
        return true;
    }
    // `start = time.time()`: a clock read takes nothing and cannot fail.
    let clock = |e: ExprId| {
        cx.call(e).is_some_and(|c| {
            c.args.is_empty()
                && cx
                    .effect(c, unsnarl_model::knowledge::Effect::Clock)
                    .is_some()
        })
    };
    // `request_id = f"resp_{uuid4()}"`: a fresh id, alone or formatted
    // with names.
    let new_id = |e: ExprId| {
        cx.call(e).is_some_and(|c| {
            c.args.is_empty() && matches!(c.target.as_deref(), Some("uuid.uuid4" | "uuid.uuid1"))
        })
    };
    let fresh_id = |e: ExprId| {
        let e = cx.model.strip(e);
        new_id(e)
            || matches!(&cx.expr(e).kind, ExprKind::Other(parts)
                if cx.source(cx.expr(e).span).starts_with(['f', 'F'])
                    && parts.iter().any(|&x| new_id(x))
                    && parts.iter().all(|&x| new_id(x) || simple(x)))
    };
    // `task = tasks.pop() if tasks else None`: a pop the test of the same
    // list guards cannot find it empty.
    let guarded_pop = |e: ExprId| {
        let ExprKind::Ternary { cond, then, orelse } = &cx.expr(cx.model.strip(e)).kind else {
            return false;
        };
        let list = cx.model.dotted(cx.model.strip(*cond));
        list.is_some()
            && simple(*orelse)
            && cx.call(cx.model.strip(*then)).is_some_and(|c| {
                matches!(c.name.as_str(), "pop" | "popleft")
                    && c.args.is_empty()
                    && c.receiver.and_then(|r| cx.model.dotted(r)) == list
            })
    };
    if (fresh(*v) || clock(*v) || fresh_id(*v) || guarded_pop(*v))
        && targets.iter().all(|&t| {
            matches!(cx.expr(t).kind, ExprKind::Name { .. })
                || (matches!(cx.expr(t).kind, ExprKind::Attr { .. })
                    && cx.model.dotted(t).is_some())
        })
    {
        return true;
    }
    targets
        .iter()
        .all(|&t| matches!(cx.expr(t).kind, ExprKind::Name { .. }))
        && simple(*v)
}

fn is_release_of(cx: &FileCx, e: ExprId, name: &str) -> bool {
    matches!(&cx.expr(e).kind, ExprKind::Attr { obj, name: m, .. }
        if m == "release" && cx.model.dotted(*obj).as_deref() == Some(name))
}

/// `<anything>.<attr>.release`: a release of the same attribute reached
/// through another object (`executor._idle_semaphore.release()`).
fn is_release_of_attr(cx: &FileCx, e: ExprId, attr: &str) -> bool {
    matches!(&cx.expr(e).kind, ExprKind::Attr { obj, name: m, .. }
        if m == "release"
            && cx.model.dotted(*obj).is_some_and(|d| d.rsplit('.').next() == Some(attr)))
}

/// The statements after `s`; for an acquire that ends the branch of an
/// `if` without `else` (`if lock is not None: lock.acquire()`), the
/// statements after that `if`, where its `try` starts. The same for a
/// try-lock: an acquire that ends the body of a `try` whose every handler
/// leaves (`try: lock.acquire() except LockError: return False`), so the
/// code after that `try` runs only with the lock taken.
fn following<'a>(cx: &FileCx<'a>, s: StmtId) -> &'a [StmtId] {
    let rest = stmts_after(cx, s);
    if !rest.is_empty() {
        return rest;
    }
    let Parent::Stmt(p) = cx.tree.stmt_parent(s) else {
        return rest;
    };
    match &cx.stmt(p).kind {
        StmtKind::If { then, orelse, .. } if then.last() == Some(&s) && orelse.is_empty() => {
            stmts_after(cx, p)
        }
        // `try: lock.acquire() except LockError: .. else: try: ..
        // finally: lock.release()`: the `else` runs right after a
        // successful acquire.
        StmtKind::Try {
            body,
            handlers,
            orelse,
            finally: None,
        } if body.last() == Some(&s) && !orelse.is_empty() && !handlers.is_empty() => orelse,
        StmtKind::Try {
            body,
            handlers,
            orelse,
            finally: None,
        } if body.last() == Some(&s)
            && orelse.is_empty()
            && !handlers.is_empty()
            && handlers.iter().all(|h| leaves(cx, &h.body)) =>
        {
            stmts_after(cx, p)
        }
        _ => rest,
    }
}

/// The block ends by leaving: `return`, `raise`, `break` or `continue`.
fn leaves(cx: &FileCx, block: &Block) -> bool {
    block.last().is_some_and(|&l| {
        matches!(
            cx.stmt(l).kind,
            StmtKind::Return(_) | StmtKind::Raise(_) | StmtKind::Break | StmtKind::Continue
        )
    })
}

/// `try: ... Response(release=sem.release) ... except BaseException:
/// sem.release(); raise`: every failure (cancellation included) releases,
/// and on success the permit goes on with what holds its `release`; or the
/// `try` starts the work that will release it (a task, a thread) and
/// releases if the start fails.
fn hands_over_or_releases_on_failure(cx: &FileCx, s: StmtId, name: &str) -> bool {
    let StmtKind::Try { body, handlers, .. } = &cx.stmt(s).kind else {
        return false;
    };
    // Where nothing in the `try` suspends, no cancellation can land in it,
    // and `except Exception:` catches whatever the body can raise.
    let suspends = !crate::util::awaits_in_block(cx.model, body).is_empty();
    let catches_all = |h: &Handler| {
        h.types.is_empty()
            || h.types
                .iter()
                .any(|t| t.as_str() == "BaseException" || (!suspends && t.as_str() == "Exception"))
    };
    // `Response(release=sem.release)`, or the held lock itself as an
    // argument (`_start(root, lock=lock)`): what receives it keeps it.
    let hands_release = handlers
        .iter()
        .any(|h| catches_all(h) && releases(cx, &h.body, name))
        && unsnarl_model::walk::exprs_in_block(cx.model, body)
            .into_iter()
            .any(|e| {
                crate::python::common::hands_over_release(cx, e, name)
                    || passes_the_lock(cx, e, name)
            });
    // `try: task = create_task(work()) ... except Exception: sem.release()`
    // (or `T.start()` of a thread): the permit goes to the work started,
    // which gives it back when done; a failed start gives it back here.
    // Nothing in the `try` suspends, so no cancellation lands in between.
    let hands_to_started_work = handlers.iter().any(|h| releases(cx, &h.body, name))
        && crate::util::awaits_in_block(cx.model, body).is_empty()
        && unsnarl_model::walk::calls_in_block(cx.model, body)
            .into_iter()
            .any(|e| {
                let c = cx.call(e).unwrap();
                crate::python::common::is_task_spawn(cx, c)
                    || (c.name == "start" && c.receiver.is_some() && c.args.is_empty())
            });
    // `except BaseException: sem.release(); raise` around handing the
    // request on (`super().process_request(..)` of a threading server),
    // where another method of the class gives the permit back in a
    // `finally` (`process_request_thread`): every path releases once.
    let released_by_the_class = || {
        let f = cx.tree.stmt_func(s);
        let Some(class) = cx.func(f).class.as_deref() else {
            return false;
        };
        cx.model.function_ids().any(|g| {
            g != f
                && cx.func(g).class.as_deref() == Some(class)
                && cx.body_stmts(g).iter().any(|&t| {
                    matches!(&cx.stmt(t).kind, StmtKind::Try { finally: Some(fin), .. }
                        if releases(cx, fin, name))
                })
        })
    };
    let reraises = |h: &Handler| {
        h.body
            .last()
            .is_some_and(|&l| matches!(cx.stmt(l).kind, StmtKind::Raise(None)))
    };
    let handed_to_the_class = handlers
        .iter()
        .any(|h| catches_all(h) && reraises(h) && releases(cx, &h.body, name))
        && (released_by_the_class() || hands_on_a_releasing_method(cx, s, name));
    hands_release || hands_to_started_work || handed_to_the_class
}

/// The function of `s` hands a method of its class that releases `name`
/// on as a callback (`future.add_done_callback(self._done)`, where `_done`
/// calls `self.slots.release()`): the work started gives the permit back
/// when it ends.
fn hands_on_a_releasing_method(cx: &FileCx, s: StmtId, name: &str) -> bool {
    let f = cx.tree.stmt_func(s);
    let Some(class) = cx.func(f).class.as_deref() else {
        return false;
    };
    let releasing = |method: &str| {
        cx.model.function_ids().any(|g| {
            g != f
                && cx.func(g).class.as_deref() == Some(class)
                && cx.func(g).name == method
                && releases(cx, &cx.func(g).body, name)
        })
    };
    // The method itself, or a lambda calling it (`lambda done:
    // self.complete(done, callback)`).
    let is_it = |x: ExprId| {
        cx.model.dotted(x).is_some_and(|d| {
            d.strip_prefix("self.")
                .is_some_and(|m| !m.contains('.') && releasing(m))
        })
    };
    let names_it = |e: ExprId| match cx.expr(cx.model.strip(e)).kind {
        ExprKind::Closure(g) => cx
            .body_calls(g)
            .any(|k| cx.call(k).is_some_and(|c| is_it(c.func))),
        _ => is_it(e),
    };
    cx.body_calls(f).any(|e| {
        cx.call(e)
            .is_some_and(|c| c.name != "release" && c.args.iter().any(|a| names_it(a.value)))
    })
}

/// `e` is a call given the held lock itself as an argument
/// (`_start(root, lock=lock)`, not `lock.release()`).
fn passes_the_lock(cx: &FileCx, e: ExprId, name: &str) -> bool {
    cx.call(e).is_some_and(|c| {
        c.receiver.and_then(|r| cx.model.dotted(r)).as_deref() != Some(name)
            && c.args
                .iter()
                .any(|a| cx.model.dotted(a.value).as_deref() == Some(name))
    })
}

/// `with MaybeUnlock(lock) as guard:` where `MaybeUnlock` is a class of
/// the file that keeps the lock it is given (`self.lock = lock` in
/// `__init__`) and releases it in `__exit__` (`self.lock.release()`, also
/// under a flag its `defer()` clears to hand the release to a timer): the
/// `with` gives the lock back on every path, like a `finally`.
fn enters_a_releasing_guard(cx: &FileCx, s: StmtId, name: &str) -> bool {
    let StmtKind::With { items, .. } = &cx.stmt(s).kind else {
        return false;
    };
    items.iter().any(|it| {
        let Some(c) = cx.call(cx.model.strip(it.ctx)) else {
            return false;
        };
        let method = |m: &str| {
            cx.model.function_ids().find(|&g| {
                cx.func(g).name == m
                    && cx.func(g).class.as_deref().is_some_and(|k| {
                        Some(k) == c.target.as_deref() || k.rsplit('.').next() == Some(&*c.name)
                    })
            })
        };
        let (Some(init), Some(exit)) = (
            method("__init__"),
            method("__exit__").or_else(|| method("__aexit__")),
        ) else {
            return false;
        };
        // The attribute `__init__` stores the argument the lock is passed as.
        let params: Vec<&str> = cx
            .func(init)
            .params
            .iter()
            .map(|p| p.name.as_str())
            .filter(|&p| p != "self")
            .collect();
        let kept: Vec<String> = cx
            .body_stmts(init)
            .iter()
            .filter_map(|&st| match &cx.stmt(st).kind {
                StmtKind::Assign {
                    targets,
                    value: Some(v),
                    ..
                } => {
                    let i = params
                        .iter()
                        .position(|&p| cx.model.name_of(*v) == Some(p))?;
                    let passed = c.positional(i).or_else(|| c.kwarg(params[i]));
                    (passed.and_then(|a| cx.model.dotted(a)).as_deref() == Some(name))
                        .then(|| targets.iter().find_map(|&t| cx.model.dotted(t)))?
                }
                _ => None,
            })
            .collect();
        cx.body_calls(exit).any(|e| {
            cx.call(e).is_some_and(|r| {
                r.name == "release"
                    && r.receiver
                        .and_then(|x| cx.model.dotted(x))
                        .is_some_and(|d| kept.iter().any(|k| *k == *d && k.starts_with("self.")))
            })
        })
    })
}

/// `held.append((lock, label))` in a `try` body whose `finally` runs `for
/// l, _ in reversed(held): l.release()`: locks taken one by one (sorted ids,
/// a type lock) are collected and released together on every path.
fn released_through_a_list(cx: &FileCx, fin: &Block, body: &Block, name: &str) -> bool {
    let is_name = |e: ExprId| cx.model.dotted(e).as_deref() == Some(name);
    let lists: Vec<String> = unsnarl_model::walk::exprs_in_block(cx.model, body)
        .into_iter()
        .filter_map(|e| {
            let c = cx.call(e)?;
            let arg = c.args.first()?.value;
            let held = is_name(arg)
                || matches!(&cx.expr(arg).kind, ExprKind::Collection { kind: CollKind::Tuple, elems, .. }
                    if elems.first().is_some_and(|&x| is_name(x)));
            (c.name == "append" && held)
                .then(|| c.receiver.and_then(|r| cx.model.dotted(r)))
                .flatten()
        })
        .collect();
    if lists.is_empty() {
        return false;
    }
    fin.iter().any(|&st| {
        let StmtKind::For {
            target: Some(t),
            iter,
            body: each,
            ..
        } = &cx.stmt(st).kind
        else {
            return false;
        };
        // `for l in held`, `for l in reversed(held)`, `for l, _ in ...`.
        let iter = match cx.call(*iter) {
            Some(c) if c.name == "reversed" => c.args.first().map(|a| a.value),
            _ => Some(*iter),
        };
        let over_list = iter
            .and_then(|i| cx.model.dotted(i))
            .is_some_and(|d| lists.contains(&d));
        let var = match &cx.expr(*t).kind {
            ExprKind::Collection { elems, .. } => elems.first().and_then(|&x| cx.model.dotted(x)),
            _ => cx.model.dotted(*t),
        };
        over_list && var.is_some_and(|v| releases(cx, each, &v))
    })
}

fn releases(cx: &FileCx, block: &Block, name: &str) -> bool {
    unsnarl_model::walk::exprs_in_block(cx.model, block)
        .into_iter()
        .any(|e| is_release_of(cx, e, name))
}

fn body_contains(cx: &FileCx, body: &Block, s: StmtId) -> bool {
    struct V(StmtId, bool);
    impl Visitor for V {
        fn enter_stmt(&mut self, _m: &FileModel, id: StmtId) -> bool {
            if id == self.0 {
                self.1 = true;
            }
            !self.1
        }
    }
    let mut v = V(s, false);
    walk_block(cx.model, body, &mut v);
    v.1
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import asyncio
import queue
import threading


class CheckedQueue(queue.Queue):
    def __init__(self, maxsize=0):
        super().__init__(maxsize)
        self._put_lock = threading.Lock()

    def put(self, item, block=True, timeout=None):
        if not block:
            acquired = self._put_lock.acquire(blocking=False)  # expect
        else:
            acquired = self._put_lock.acquire(timeout=timeout)  # expect
        self._check(item)
        try:
            super().put(item, block, timeout)
        finally:
            self._put_lock.release()


class Protocol:
    def __init__(self):
        self._outstanding = {}

    async def receive(self, identifier, fetch):
        semaphore = asyncio.Semaphore(value=1)
        self._waiters[identifier] = semaphore
        await semaphore.acquire()  # expect
        self._outstanding[identifier] = await fetch(identifier)
        semaphore.release()
"#,
        r#"
import asyncio


class CommitFence:
    def __init__(self):
        self._lock = asyncio.Lock()
        self._other = asyncio.Lock()

    async def begin_commit(self):
        await self._lock.acquire()  # expect
        self.pending = True

    def finish_commit(self):
        self._other.release()
"#,
        r#"
import threading


class Future:
    def __init__(self):
        self._lock = threading.Lock()
        self._callbacks = []
        self.is_done = False

    def add_callback(self, f):
        self._lock.acquire()  # expect
        if not self.is_done:
            self._callbacks.append(f)
            self._lock.release()
            return self
        self.notify_late(f)
        self._lock.release()
        return self
"#,
        r#"
import asyncio

sem = asyncio.Semaphore(10)

async def call(api):
    await sem.acquire()  # expect
    result = await api.get()
    sem.release()
    return result
"#,
        r#"
import threading

lock = threading.Lock()

def update(state):
    lock.acquire()  # expect
    state.apply()

def careful(state):
    lock.acquire()  # expect
    state.prepare()
    try:
        state.apply()
    finally:
        lock.release()

def try_lock(state):
    try:
        lock.acquire()  # expect
    except RuntimeError:
        return False
    state.apply()
    lock.release()
    return True

def try_lock_else(state):
    try:
        lock.acquire()  # expect
    except RuntimeError:
        return []
    else:
        result = state.apply()
        lock.release()
        return result

def counted(state):
    lock.acquire()  # expect
    n = 0
    total = state.size()
    try:
        n = state.apply()
    finally:
        lock.release()
    return n, total
"#,
        r#"
from threading import RLock

class Scene:
    def __init__(self):
        self._lock = RLock()
        self._objects = {}

    def drop(self, i):
        self._lock.acquire()  # expect
        del self._objects[i]
        self._lock.release()
"#,
        r#"
import threading

class Queue:
    def __init__(self):
        self._mutex = threading.Lock()
        self._other = threading.Lock()
        self._ready = None

    async def get(self):
        with self._other:
            while not self._items:
                self._mutex.release()
                try:
                    await self._ready.wait()
                finally:
                    self._mutex.acquire()  # expect
            return self._items.pop()
"#,
        r#"
import threading


class Sensor:
    def __init__(self):
        self.seqnr_lock = threading.Lock()
        self.last_seqnr = 0

    def _get_new_seqnr(self, step):
        self.seqnr_lock.acquire()  # expect
        self.last_seqnr += step.size
        self.seqnr_lock.release()
        return str(self.last_seqnr)
"#,
        r#"
import threading

class Heap:
    def __init__(self):
        self._lock = threading.Lock()
        self._pending = []

    def free(self, block):
        if not self._lock.acquire(False):  # expect
            self._pending.append(block)
        else:
            self._free(block)
            self._lock.release()
"#,
        r#"
import threading
import time

update_lock = threading.Lock()

def timing_thread(interval):
    while True:
        acquired = update_lock.acquire(timeout=interval)  # expect
        if acquired:
            publish(time.perf_counter())
            update_lock.release()
"#,
        r#"
import asyncio

class Timed:
    def __init__(self, lock, log):
        self.lock = lock
        self.log = log

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        # Records the time; the lock stays taken.
        self.log.append(self.lock.locked())

async def request(lock, log, send):
    await lock.acquire()  # expect
    with Timed(lock, log):
        return await send()
"#,
        r#"
import json
import threading


def fetch_all(urls, get):
    lock = threading.Lock()
    results = []

    def worker(url):
        body = get(url)
        lock.acquire()  # expect
        results.append(json.loads(body))
        lock.release()

    threads = [threading.Thread(target=worker, args=(u,)) for u in urls]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results
"#,
        r#"
import threading


class Frame:
    def __init__(self):
        self.removed = False
        self._lock = threading.Lock()

    def remove(self):
        # Holds the lock when it is already removed, and returns with it.
        if not self._lock.acquire(blocking=False) or self.removed:  # expect
            return False
        else:
            try:
                self._detach()
            finally:
                self._lock.release()
        return True
"#,
        r#"
import threading


class Executor:
    def __init__(self, builtin):
        self.builtin = builtin
        self._timeout_lock = threading.Lock()

    def run_with_timeout(self, locator, timeout):
        self._timeout_lock.acquire()  # expect
        try:
            previous = self.builtin.run_keyword("Set Timeout", timeout)
        except Exception:
            log.exception("could not set the timeout")
            raise
        try:
            return self.builtin.run_keyword("Get States", locator)
        finally:
            self.builtin.run_keyword("Set Timeout", previous)
            self._timeout_lock.release()
"#,
        r#"
import threading
from concurrent.futures import ThreadPoolExecutor


class Pool:
    def __init__(self, size):
        self.slots = threading.BoundedSemaphore(size)
        self.pool = ThreadPoolExecutor(size)

    def submit(self, fn, *args):
        self.slots.acquire()  # expect
        try:
            future = self.pool.submit(fn, *args)
        except BaseException:
            self.slots.release()
            raise
        future.add_done_callback(self._log)
        return future

    def _log(self, future):
        print("done", future)

    def close(self):
        self.slots.release()
"#,
        r#"
import threading

gate = threading.Lock()

def render(job):
    got = gate.acquire(timeout=5)  # expect
    if got:
        job.run()
        gate.release()
"#,
        r#"
import threading

conversation_locks = {}


def start_turn(conversation_id, build_job, start):
    turn_lock = conversation_locks.setdefault(conversation_id, threading.Lock())
    if not turn_lock.acquire(blocking=False):  # expect
        return 409
    # If building the job raises, the conversation stays busy for good.
    job = build_job(conversation_id)
    start(job, release=turn_lock.release)
    return 202
"#,
        r#"
import threading


class Client:
    def __init__(self, socket):
        self._lock = threading.Lock()
        self._socket = socket

    def _on_reply(self, msg):
        self._reply = msg
        self._lock.release()

    def send(self, msg, encode):
        self._lock.acquire()  # expect
        # If encoding raises, nothing gives the lock back.
        payload = encode(msg)
        self._socket.send(payload)
        if not self._socket.poll(1000):
            self._lock.release()
"#,
        r#"
import asyncio


class Runner:
    def _release_slot(self, execution, case_id):
        execution.slots_held.discard(case_id)
        execution.semaphore.release()

    async def _run_case(self, execution, case):
        await execution.semaphore.acquire()  # expect
        try:
            await self.acquire_launch_slot()
        except BaseException:
            execution.semaphore.release()
            raise
        execution.slots_held.add(case.case_id)
        if execution.cancel_event.is_set():
            self._release_slot(execution, case.case_id)
            return
        # Cancelled here, the permit is never given back.
        await self.launch(case)
        self._release_slot(execution, case.case_id)
"#,
    ],
    pass: &[
        r#"
import socketserver
import threading


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    def __init__(self, addr, handler):
        super().__init__(addr, handler)
        self._connections = threading.BoundedSemaphore(8)

    def process_request(self, request, client_address):
        if not self._connections.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._connections.release()
            raise

    def process_request_thread(self, request, client_address):
        # The request's thread gives the permit back.
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._connections.release()
"#,
        r#"
import asyncio
import inspect
import logging

logger = logging.getLogger(__name__)


class Gate:
    def __init__(self, timeout):
        self._lock = asyncio.Lock()
        self._timeout = timeout

    async def run(self, callback):
        acquired = False
        try:
            await asyncio.wait_for(self._lock.acquire(), timeout=self._timeout)
            acquired = True
        except TimeoutError:
            logger.warning("gate not acquired; running unserialized")
        try:
            result = callback()
            return await result if inspect.isawaitable(result) else result
        finally:
            if acquired:
                self._lock.release()


class CommitFence:
    def __init__(self):
        self._lock = asyncio.Lock()

    async def begin_commit(self, cancel_event=None):
        await self._lock.acquire()
        if cancel_event is not None and cancel_event.is_set():
            self._lock.release()
            return False
        return True

    def finish_commit(self):
        self._lock.release()
"#,
        r#"
import threading
import time


class Future:
    def __init__(self):
        self._lock = threading.Lock()
        self._callbacks = []
        self.is_done = False

    def add_callback(self, f):
        lock = self._lock
        lock.acquire()
        if not self.is_done:
            self._callbacks.append(f)
            lock.release()
            return self
        lock.release()
        f(self)
        return self


def count_submissions(executor, links, save):
    lock = threading.Lock()
    count = 0
    for link in links:
        executor.submit(save, link)
        lock.acquire()
        count += 1
        lock.release()
    return count


_busy = False


def build(sem, work):
    if not sem.acquire(blocking=False):
        raise RuntimeError("busy")
    global _busy
    _busy = True
    events, usage = [], {}
    start = time.time()
    try:
        return work(), time.time() - start
    finally:
        sem.release()


async def claim_all(messages):
    acquired = []

    async def claim(message):
        if message.done:
            return False
        await message.lock.acquire()
        if message.done:
            message.lock.release()
            return False
        acquired.append(message.lock)
        return True

    try:
        for m in messages:
            await claim(m)
    finally:
        for lock in acquired:
            lock.release()
"#,
        r#"
import socket
import threading


class Server:
    def __init__(self):
        self._lock = threading.Lock()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._clients = []

    def accept_one(self):
        conn, addr = self._sock.accept()
        self._lock.acquire()
        self._clients.append((conn, addr))
        self._lock.release()

    def stop(self):
        self._lock.acquire()
        # Closing a socket gives its descriptor back and does not raise.
        self._sock.close()
        self._lock.release()
"#,
        r#"
import asyncio

class MaybeUnlock:
    def __init__(self, lock):
        self.lock = lock
        self._unlock = True

    def __enter__(self):
        return self

    def defer(self):
        self._unlock = False

    def __exit__(self, *exc):
        if self._unlock:
            self.lock.release()

async def request(lock, loop, send):
    await lock.acquire()
    with MaybeUnlock(lock) as maybe_lock:
        response = await send()
        if response.status == 429:
            # Keep the bucket locked until the rate limit resets.
            maybe_lock.defer()
            loop.call_later(response.retry_after, lock.release)
        return response
"#,
        r#"
import asyncio


async def semaphore_acquire(sem: asyncio.Semaphore) -> bool:
    # Hands the permit to its caller, which releases it.
    await sem.acquire()
    return True
"#,
        r#"
import asyncio


class Lister:
    def __init__(self, parallelism):
        self.semaphore = asyncio.Semaphore(parallelism)
        self.tasks = set()

    async def list_all(self, client, prefixes):
        for folder in prefixes:
            await self.semaphore.acquire()
            try:
                # The task gives the permit back when it is done.
                task = asyncio.create_task(self._list(client, folder))
                self.tasks.add(task)
                task.add_done_callback(self._done)
            except Exception:
                self.semaphore.release()
                raise

    def _done(self, task):
        self.tasks.discard(task)
        self.semaphore.release()
"#,
        r#"
import threading


class Socket:
    def __init__(self):
        self._wr_lock = threading.Lock()
        self._rd_lock = threading.Lock()

    def close(self):
        self._wr_lock.acquire()
        self._rd_lock.acquire()
        try:
            self._close_socket()
        finally:
            self._rd_lock.release()
            self._wr_lock.release()
"#,
        r#"
class Client:
    def __init__(self, rate_limiter):
        self.rate_limiter = rate_limiter

    def get(self, path):
        # A sliding-window rate limiter: `acquire` waits for a slot in the
        # window and records a hit; there is nothing to give back.
        self.rate_limiter.acquire()
        return self._session.get(self._base + path, timeout=10)
"#,
        r#"
import asyncio
import threading

class Runner:
    def arm(self, ctx):
        # Nothing between the acquire and the release can raise.
        ctx.lock.acquire()
        ctx.event = asyncio.Event()
        ctx.lock.release()

    async def on_update(self, chat_id):
        # `acquire` here only looks the chat's lock up; `async with` takes it.
        async with await self._chat_lock.acquire(chat_id):
            await self._apply(chat_id)
"#,
        r#"
import asyncio

class Fetcher:
    async def fetch_stream(self, wrapper, request, callback):
        # The permit goes with the response on success (its `release`
        # handed over); any failure, cancellation included, releases it.
        await self._stream_semaphore.acquire()
        response = None
        try:
            stream = await wrapper.open_stream(request)
            response = StreamResponse(stream, release=self._stream_semaphore.release)
            await callback(response)
        except BaseException:
            if response is not None:
                await response.aclose()
            else:
                self._stream_semaphore.release()
            raise
"#,
        r#"
import asyncio

class Router:
    def __init__(self):
        self.command_received = asyncio.Condition()
        self.commands = []

    # Nothing between the acquire and the release can raise or suspend.
    async def got_command(self, command):
        await self.command_received.acquire()
        self.commands.append(command)
        self.command_received.notify_all()
        self.command_received.release()
"#,
        r#"
import asyncio
import queue
import threading
from time import monotonic


class SkipRepeatsQueue(queue.Queue):
    def __init__(self, maxsize=0):
        super().__init__(maxsize)
        self._put_lock = threading.Lock()

    def put(self, item, block=True, timeout=None):
        if not block:
            acquired = self._put_lock.acquire(blocking=False)
        elif timeout is None:
            acquired = self._put_lock.acquire()
        else:
            deadline = monotonic() + timeout
            acquired = self._put_lock.acquire(timeout=timeout)
            if acquired:
                timeout = max(0.0, deadline - monotonic())
        if not acquired:
            raise queue.Full
        try:
            super().put(item, block, timeout)
        finally:
            self._put_lock.release()


class Protocol:
    def __init__(self):
        self._outstanding = {}

    async def receive(self, identifier, timeout):
        semaphore = asyncio.Semaphore(value=0)
        self._outstanding[identifier] = semaphore
        try:
            async with asyncio.timeout(timeout):
                await semaphore.acquire()
        finally:
            del self._outstanding[identifier]

    def message_received(self, identifier):
        self._outstanding[identifier].release()
"#,
        r#"
import threading

class Queue:
    def __init__(self):
        self._mutex = threading.Lock()
        self._ready = None

    async def get(self):
        with self._mutex:
            while not self._items:
                self._mutex.release()
                try:
                    await self._ready.wait()
                finally:
                    self._mutex.acquire()
            return self._items.pop()
"#,
        r#"
import asyncio
import threading

sem = asyncio.Semaphore(10)
lock = threading.Lock()

async def call(api):
    async with sem:
        return await api.get()

async def manual(api):
    await sem.acquire()
    try:
        return await api.get()
    finally:
        sem.release()

def nonblocking(state):
    if lock.acquire(blocking=False):
        try:
            state.apply()
        finally:
            lock.release()

def is_owned(lock2: threading.Lock):
    if lock2.acquire(False):
        lock2.release()
        return False
    return True

def maybe_locked(parse, text, lock=None):
    if lock is not None:
        lock.acquire()
    try:
        return parse(text)
    finally:
        if lock is not None:
            lock.release()

def try_lock(state):
    try:
        lock.acquire()
    except RuntimeError:
        return False
    try:
        state.apply()
    finally:
        lock.release()
    return True

def try_lock_else(state):
    try:
        lock.acquire()
    except RuntimeError:
        return []
    else:
        try:
            return state.apply()
        finally:
            lock.release()

def guarded(state):
    if not lock.acquire(timeout=5):
        raise TimeoutError()
    try:
        state.apply()
    finally:
        lock.release()

async def receive(conn):
    await sem.acquire()
    if conn.closed:
        sem.release()
        raise ConnectionError()
    frames = []
    last: bytes | None = None
    try:
        async for frame in conn:
            frames.append(frame)
            last = frame
    finally:
        sem.release()
    return frames, last
"#,
        r#"
import asyncio

class Limiter:
    def __init__(self):
        self._sem = asyncio.Semaphore(4)

    async def __aenter__(self):
        await self._sem.acquire()
        return self

    async def __aexit__(self, *exc):
        self._sem.release()

    async def spawn(self, coro):
        await self._sem.acquire()
        t = asyncio.create_task(coro)
        t.add_done_callback(lambda _: self._sem.release())
        return t

    def start(self):
        self._sem.acquire()

    def stop(self):
        self._sem.release()
"#,
        r#"
import threading

class NamedLocks:
    def __init__(self):
        self._held = {}

    async def aacquire_lock(self, key):
        lock = threading.Lock()
        lock.acquire()
        self._held[key] = lock

    def release_lock(self, key):
        self._held.pop(key).release()
"#,
        r#"
from threading import RLock

class Scene:
    def __init__(self):
        self._lock = RLock()
        self._objects = {}
        self._errbacks = []
        self.exception = None

    def put(self, i, obj):
        self._lock.acquire()
        self._objects[i] = obj
        self._lock.release()

    def forget(self, ids):
        self._lock.acquire()
        self._gone.difference_update(ids)
        self._lock.release()

    def failure(self, exception):
        lock = self._lock
        lock.acquire()
        self.exception = exception
        errbacks = self._errbacks
        self._errbacks = None
        lock.release()
        for f in errbacks:
            f(exception)
"#,
        r#"
import threading


class Sensor:
    def __init__(self):
        self.seqnr_lock = threading.Lock()
        self.last_seqnr = 0

    def _get_new_seqnr(self):
        self.seqnr_lock.acquire()
        self.last_seqnr += 1
        self.seqnr_lock.release()
        return str(self.last_seqnr)
"#,
        r#"
import threading

class Heap:
    def __init__(self):
        self._lock = threading.Lock()
        self._pending = []

    def free(self, block):
        # A signal handler may call this while the lock is held.
        if not self._lock.acquire(False):
            self._pending.append(block)
        else:
            try:
                self._free(block)
            finally:
                self._lock.release()
"#,
        r#"
import threading
import time

update_lock = threading.Lock()

def timing_thread(interval):
    while True:
        # The lock is an interruptible sleep: a subscriber releases it to wake us.
        acquired = update_lock.acquire(timeout=interval)
        if acquired:
            update_lock.release()
        publish(time.perf_counter())
"#,
        r#"
import threading


def sleep_forever():
    lock = threading.Lock()
    lock.acquire()
    lock.acquire()
"#,
        r#"
import asyncio
import threading


async def run_in_thread(func, *args):
    claim = threading.Lock()

    def run():
        if claim.acquire(blocking=False):
            return func(*args)

    worker = asyncio.get_running_loop().run_in_executor(None, run)
    try:
        return await asyncio.shield(worker)
    except asyncio.CancelledError:
        if not claim.acquire(blocking=False):
            await asyncio.wait([worker])
        raise
"#,
        r#"
import threading


class Frame:
    def __init__(self):
        self.removed = False
        self._lock = threading.Lock()

    def remove(self):
        if self.removed or not self._lock.acquire(blocking=False):
            return False
        else:
            try:
                self._detach()
            finally:
                self._lock.release()
        return True
"#,
        r#"
import threading

_run_lock = threading.Lock()


def launch(root, **options):
    _run_lock.acquire()
    try:
        session = _spawn(root, lock=_run_lock, **options)
        if not session.running:
            _run_lock.release()
        return session
    except BaseException:
        _run_lock.release()
        raise
"#,
        r#"
import queue
import threading


class Outbox:
    def __init__(self, size):
        self._slots = threading.BoundedSemaphore(size)
        self._queue = queue.Queue()

    def offer(self, item):
        if not self._slots.acquire(blocking=False):
            return False
        try:
            self._queue.put_nowait(item)
        except Exception:
            self._slots.release()
            raise
        return True

    def _drain(self):
        while True:
            item = self._queue.get()
            try:
                self._deliver(item)
            finally:
                self._slots.release()
"#,
        r#"
import asyncio


async def run_node(scheduler, node):
    await node.run()
    while True:
        if scheduler.lock.acquire(blocking=False):
            break
        await asyncio.sleep(0)
    try:
        scheduler.completed(node)
    finally:
        scheduler.lock.release()
"#,
        r#"
import os
import threading
from contextlib import contextmanager

_session_lock = threading.Lock()


@contextmanager
def collect(target):
    if not _session_lock.acquire(blocking=False):
        raise RuntimeError("nested collection is unsupported")
    session = None
    previous = os.environ.get("NPU_ARCH")
    try:
        session = start_session(target)
        os.environ["NPU_ARCH"] = target
        yield session
    finally:
        if previous is None:
            os.environ.pop("NPU_ARCH", None)
        _session_lock.release()
"#,
        r#"
import threading


class Executor:
    def __init__(self, builtin):
        self.builtin = builtin
        self._timeout_lock = threading.Lock()

    def run_with_timeout(self, locator, timeout):
        self._timeout_lock.acquire()
        previous = None
        try:
            previous = self.builtin.run_keyword("Set Timeout", timeout)
        except Exception as e:
            log.debug(f"could not set the timeout: {e}")
        try:
            return self.builtin.run_keyword("Get States", locator)
        finally:
            if previous is not None:
                self.builtin.run_keyword("Set Timeout", previous)
            self._timeout_lock.release()
"#,
        r#"
import threading
from concurrent.futures import ThreadPoolExecutor


class PoolFull(Exception):
    pass


class Pool:
    def __init__(self, size):
        self.slots = threading.BoundedSemaphore(size)
        self.pool = ThreadPoolExecutor(size)
        self.futures = set()

    def submit(self, fn, *args):
        if not self.slots.acquire(blocking=False):
            raise PoolFull("no free slot")
        try:
            future = self.pool.submit(fn, *args)
        except BaseException:
            self.slots.release()
            raise
        self.futures.add(future)
        future.add_done_callback(lambda done: self._done(done, fn))
        return future

    def _done(self, future, fn):
        self.futures.discard(future)
        self.slots.release()
"#,
        r#"
import threading

gate = threading.Lock()

def render(job):
    got = gate.acquire(timeout=5)
    if got:
        try:
            job.run()
        finally:
            gate.release()
    else:
        job.skip()
"#,
        r#"
from . import instance

def serve(state_dir):
    lock = instance.Lock.acquire(state_dir)
    if lock is None:
        raise RuntimeError("already running")
    previous = instance.install_handlers()
    try:
        instance.run(state_dir)
    finally:
        instance.restore(previous)
        lock.release()
"#,
        r#"
import threading


class Backend:
    def __init__(self):
        self._lock = threading.Lock()
        self._pending = set()
        self._depth = 0

    def flush(self, client):
        while self._pending and self._lock.acquire(blocking=False):
            self._depth += 1
            try:
                while self._pending:
                    client.unsubscribe(self._pending.pop())
            finally:
                self._depth -= 1
                self._lock.release()
"#,
        r#"
# Only a counter read and bumped between the acquire and the release.
import threading

jc_lock = threading.Lock()
job_counter = 0


def next_job_name():
    global job_counter
    jc_lock.acquire()
    job_id = str(job_counter)
    job_counter += 1
    jc_lock.release()
    return job_id
"#,
        r#"
# Only an identity test and a store between the acquire and the release.
import threading


class Deck:
    def __init__(self):
        self._lock = threading.Lock()
        self.heater = None

    def set_module(self, module):
        self._lock.acquire(blocking=True)
        if module is not None:
            self.heater = module
        self._lock.release()
"#,
        r#"
import threading
import time

class Store:
    def __init__(self, conn):
        self._db_lock = threading.Lock()
        self._conn = conn

    def backup(self, target):
        def allow_writes(status, remaining, total):
            # Runs under the `with` below: lets queued writers in, then
            # takes the lock back for it.
            self._db_lock.release()
            try:
                time.sleep(0)
            finally:
                self._db_lock.acquire()

        with self._db_lock:
            self._conn.backup(target, pages=128, progress=allow_writes)
"#,
        r#"
import asyncio
import logging
from uuid import uuid4

logger = logging.getLogger(__name__)

class Adapter:
    def __init__(self):
        self._semaphore = asyncio.Semaphore(10)

    async def handle(self, request):
        await self._semaphore.acquire()
        request_id = f"resp_{uuid4()}"
        logger.info("start request_id=%s", request_id)
        try:
            return await request.json()
        finally:
            self._semaphore.release()
"#,
        r#"
import threading
from contextlib import contextmanager

class Service:
    def __init__(self):
        self.slots = threading.BoundedSemaphore(8)

    @contextmanager
    def long_wait(self):
        # The caller holds a slot; lend it out while this request waits.
        self.slots.release()
        try:
            yield 30.0
        finally:
            self.slots.acquire()
"#,
        r#"
import threading
from contextlib import ExitStack

_slots = threading.BoundedSemaphore(2)

def execute(request):
    if not _slots.acquire(blocking=False):
        raise RuntimeError("workers are busy")
    with ExitStack() as cleanup:
        cleanup.callback(_slots.release)
        return run_child(request)
"#,
        r#"
import contextvars
import threading

_HELD = contextvars.ContextVar("held", default=frozenset())
_LOCKS = {}


def run_step(key, step):
    held = _HELD.get()
    lock = _LOCKS.setdefault(key, threading.RLock())
    lock.acquire()
    marker = _HELD.set(held | {key})
    try:
        return step()
    finally:
        _HELD.reset(marker)
        lock.release()
"#,
        r#"
import threading


class Gateway:
    def __init__(self):
        self.history_cond = threading.Condition()
        self.history_buf = []

    def query_history(self, timeout):
        self.history_cond.acquire()
        self.history_cond.wait(timeout)
        self.history_cond.release()
        return list(self.history_buf)
"#,
        r#"
import threading
from contextlib import contextmanager


class LockTable:
    def __init__(self):
        self._guard = threading.Lock()
        self._locks = {}

    @contextmanager
    def holding(self, kind, ids):
        held = []
        try:
            with self._guard:
                kind_lock = self._locks.setdefault(kind, threading.RLock())
            kind_lock.acquire()
            held.append((kind_lock, kind))
            for i in sorted(ids):
                with self._guard:
                    id_lock = self._locks.setdefault(i, threading.RLock())
                id_lock.acquire()
                self.note(i)
                held.append((id_lock, i))
            yield
        finally:
            for lock, _label in reversed(held):
                lock.release()

    def note(self, i):
        pass
"#,
        r#"
import threading


class TerminationHandler:
    def __init__(self):
        self._started = False
        self._started_lock = threading.Lock()

    def claim(self):
        self._started_lock.acquire()
        first = not self._started
        self._started = True
        self._started_lock.release()
        return first
"#,
        r#"
# file: app/instance_lock.py
import fcntl


def acquire():
    fh = open("/tmp/app.lock", "w")
    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fh

# file: app/server.py
_HELD = None


def main():
    global _HELD
    from . import instance_lock
    _HELD = instance_lock.acquire()
    serve()


def serve():
    pass
"#,
        r#"
import threading

open_calls = {}
open_calls_lock = threading.Lock()


def leave(key):
    open_calls_lock.acquire()
    current = open_calls.get(key, 0)
    open_calls[key] = current - 1
    if current <= 1:
        del open_calls[key]
    open_calls_lock.release()
"#,
        r#"
import threading


class Robot:
    def __init__(self, port):
        self.port = port
        # Built held: the reader thread releases it once the link is up.
        self.connected = threading.Lock()
        self.connected.acquire()

    def wait_until_connected(self, timeout=60):
        if not self.connected.acquire(timeout=timeout):
            raise TimeoutError("no link")

    def reader(self):
        while True:
            line = self.port.readline()
            if line == b"READY":
                self.connected.release()
            elif line == b"LOST" and not self.connected.locked():
                self.connected.acquire()
"#,
        r#"
import threading

thread_lock = threading.Lock()


def next_task(tasks):
    thread_lock.acquire()
    # The test of the list guards the pop: nothing here raises.
    task = tasks.pop() if tasks else None
    thread_lock.release()
    return task
"#,
        r#"
import threading


class Service:
    def __init__(self, sessions):
        self.sessions = sessions
        self.create_lock = threading.Lock()

    def start(self, data):
        if not self.create_lock.acquire(blocking=False):
            raise RuntimeError("another start is running")
        # A literal of names cannot raise before the `try`.
        request = {"parameters": data, "state": "starting", "error": None}
        try:
            return self.sessions.start(request)
        finally:
            self.create_lock.release()
"#,
        r#"
import asyncio


class Tasks:
    def __init__(self):
        self._closing = asyncio.Lock()

    @property
    def closing(self):
        return self._closing.locked()

    async def close(self):
        # Thrown once and never released: "closed" from here on.
        await self._closing.acquire()
"#,
        r#"
import threading


class ThreadedList:
    def __init__(self):
        self.lock = threading.Lock()
        self.items = []

    def __len__(self):
        self.lock.acquire()
        # The size of a field: nothing here raises.
        ret = len(self.items)
        self.lock.release()
        return ret
"#,
        r#"
import anyio


class Runtime:
    def __init__(self):
        self._lock = anyio.Lock()

    async def call(self, request):
        # Only the wait is bounded; the release follows in the `finally`.
        with anyio.fail_after(5):
            await self._lock.acquire()
        try:
            return await request()
        finally:
            self._lock.release()
"#,
        r#"
import atexit
import os
import threading
import time

# Taken by whichever exit comes first, and never given back.
_exiting = threading.Lock()


def leave_after_grace(signum):
    time.sleep(2)
    if not _exiting.acquire(blocking=False):
        return
    atexit._run_exitfuncs()
    os._exit(128 + signum)


def on_server_exit():
    if not _exiting.acquire(blocking=False):
        threading.Event().wait()
"#,
        r#"
import threading

from .transport import CURRENT_TOOL

_slots = threading.BoundedSemaphore(8)


def call_tool(name, handler, args):
    if not _slots.acquire(timeout=30):
        raise RuntimeError("busy")
    # A ContextVar made in another module: the token goes back to its reset.
    tok = CURRENT_TOOL.set(name)
    try:
        return handler(args)
    finally:
        CURRENT_TOOL.reset(tok)
        _slots.release()
"#,
        r#"
import asyncio


class Executor:
    def __init__(self):
        self._lock = asyncio.Lock()
        self._free = []

    async def _start_instance(self, spec):
        # Called with the lock held: let others in during the slow start.
        self._lock.release()
        try:
            instance = await spec.start()
        finally:
            await self._lock.acquire()
        self._free.append(instance)

    async def acquire_for(self, spec):
        async with self._lock:
            if not self._free:
                await self._start_instance(spec)
            return self._free.pop()
"#,
        r#"
from queue import Queue, ShutDown
from threading import Semaphore


class SyncQueue:
    def __init__(self, maxsize):
        self._sem = Semaphore(value=maxsize)
        self._queue = Queue(maxsize=maxsize)

    def put(self, item, block=True, timeout=None):
        if not self._sem.acquire(blocking=block, timeout=timeout):
            raise TimeoutError()
        try:
            self._queue.put_nowait(item)
        except ShutDown:
            self._sem.release()
            raise

    def get(self):
        return self._queue.get()

    def task_done(self):
        self._queue.task_done()
        self._sem.release()
"#,
        r#"
import threading


class Pool:
    def __init__(self):
        self._turn_lock = threading.Lock()

    def reconnect(self, name):
        # Refuse while a turn runs; the lock is only probed.
        if not self._turn_lock.acquire(blocking=False):
            raise RuntimeError(f"{name} has an active turn")
        self._turn_lock.release()
        self._open(name)
"#,
        r#"
import asyncio
import time


async def run_all(jobs, limit):
    semaphore = asyncio.Semaphore(limit)
    running = set()

    async def run_one(job):
        try:
            await semaphore.acquire()
        except asyncio.CancelledError:
            return None
        me = asyncio.current_task()
        running.add(me)
        began = time.monotonic()
        error, cancelled = None, False
        try:
            await job.run()
        finally:
            running.discard(me)
            semaphore.release()
        return time.monotonic() - began

    return await asyncio.gather(*(run_one(j) for j in jobs))
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(AcquireWithoutRelease);
}
