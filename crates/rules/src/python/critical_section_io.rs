//! PY013: I/O, logging or callbacks run while a thread lock is held.

use crate::context::FileCx;
use crate::python::common::{LockRef, is_thread_lock, lock_kind, lock_ref};
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::{Parent, Visitor, walk_block};
use unsnarl_model::*;

pub struct CriticalSectionIo;

pub static META: RuleMeta = RuleMeta {
    id: "PY013",
    name: "io-under-thread-lock",
    category: Category::CriticalSectionIo,
    severity: Severity::Medium,
    languages: &[Language::Python],
    summary: "Blocking I/O, logging, or a caller-supplied callback runs inside `with <threading lock>:`.",
    docs: r#"
Inside `with lock:` where `lock` is a `threading.Lock`/`RLock`/`Condition`/
`Semaphore`: a blocking I/O call (files, sockets, HTTP, subprocess,
database, sleep), a logging call, or a call of a callback (a callable
parameter, a registered listener or hook; not an item of a collection the
file fills with weak references, `observers.append(weakref.ref(self))`,
where `r()` only dereferences; nor a callback handed a field of the
object, `func(self._conn)`, which lends it the resource the lock
guards). A block that holds nothing but
I/O calls (`with send_lock: sock.sendall(frame)`), or nothing but
`print` or logging calls (a multi-line report kept together), is left
alone: that lock exists to keep the writes from interleaving. So is a
value built once under the lock (`if self._model is None: self._model =
load(path)`, also committed with others, `_extent, _ui = extent, dev`, or after an early return once it is done, `if
self.initialized: return`, or `if _options and not force: return
_options`, also with an expiry, `if _token["value"] and now <
_token["expires_at"]: return _token["value"]`, the block then setting
`self.initialized = True` or the value from a call or a local, or a
slot keyed by what built it, `if _model is not None and _model[0] ==
key: return _model[1]` then `_model = (key, model)`; also a
warn-once latch, `if _failure_logged.is_set(): return` then
`_failure_logged.set()`): every waiter needs it, and building it
twice is what the lock prevents. A one-line append to a log file (see
PY002) waits for nothing and is not reported either. A cache filled per key under one lock (`if name not in
cache:`) still holds up the threads that want other keys, and is
reported. So is a semaphore the file
builds with room for more than one holder (`self.sem =
threading.Semaphore(limit)`): it caps how many threads do the work at
once, and the work under it is what it caps. So is a block that changes
nothing but its own locals and the outside world (every assignment binds a
local or an item of one, `data["count"] = n`, no `append`/`update`/`pop`... on
anything but a local or its items): its lock guards
the I/O itself, a file's read-modify-write or a socket's frames. So is a log call that runs
only when its level is enabled (`if log.isEnabledFor(logging.DEBUG):`,
or `log.debug(..)`, which makes that check itself, off in production) or
only on a failure (in an `except` handler inside the block or around it,
or right before a `raise`) or in a branch of an `if` inside the block (a
state change, an overwrite: a case that arises now and then, not every
time the lock is taken; also after an `if` that handles a case and
returns, `if task.pending: task.state = "cancelled"; return True`, whose
`else` the rest of the block is, but not after a bare guard, `if task is
None: return`), or next to a blocking call or a callback in
the same block (that call is the one reported: it is what holds the
lock long), or next to a call of a project function that blocks
(`self._persist(entries)` writing the file it guards), or next to a call on the object's connection, directly or
in a method of the file (`self.sock.connect(..)`, `self._serial.close()`,
`self._client.search(..)` on the object's client or session,
a `self._send(..)` that writes to `self.sock`): the lock serializes that
exchange, and the log line adds nothing to the wait. Removing files only
on a failure (`except BaseException: shutil.rmtree(tmp,
ignore_errors=True); raise`) undoes the block's half-done work before
the next holder can see it, once per failure, and is left alone too,
as is a block that also takes a lock on a file for other processes
(`with self._lock, FileLock(path + ".lock"):`, or `fcntl.flock(fh,
LOCK_EX)` inside, also in a helper of the file the block calls,
`_acquire_flock(fd, timeout)`): the file is the shared state, and reading, merging
and writing it under both locks is the critical section,
and I/O or logging under a lock that some block of the file holds while
it waits for other threads' work (`Thread.join`, `Queue.join`,
`Event.wait`, `Future.result`; `with self._op_lock: self._thread.join()`
in `stop()`): that lock serializes whole operations on purpose, and its
waiters expect to wait that long, in `start()` as much as in `stop()`. Nor is a call whose result goes straight into an attribute of the
object (`self.logfile = open(path, "a")`, `self.conn = connect()`, or
unpacked into several, `self.out, self.err = proc.communicate()`, or
through a local the block then stores there, `conn = connect(p)` ...
`self._conn = conn`, also inside a `try` that closes it on failure): it remakes the state the lock guards. Nor is the sleep of a rate limiter,
which waits out the rest of an interval measured from a clock the block
read before it and restarts the interval from the clock after it
(`hold = period - (time.perf_counter() - last[0])`, `time.sleep(hold)`,
`last[0] = time.perf_counter()`): spacing callers out is the lock's job.
Nor is a query on a DB-API connection
or cursor (`sqlite3`, `psycopg`, `pymysql`, `MySQLdb`): two threads may
not use one connection at once, so code that shares it has to hold a
lock around each query, and the query cannot move out; nor is the
connection opened in the block that then queries it under the same lock
(`conn = sqlite3.connect(path)`, or `with sqlite3.connect(path) as
conn:`, then `conn.execute(..)`): the lock guards the whole session. Nor is a lock the
function builds afresh on every call and uses only in its own `with`
(`lock = threading.Lock()` then `with lock:`): no other thread can take
it, so nobody waits (it guards nothing, a mistake of another kind).

## Why

Every other thread that needs the lock waits for the whole I/O operation:
a slow disk, DNS or peer turns the critical section into a global stall,
and a hung one into a global hang. Logging handlers take their own locks
and may write to the network. Callbacks are unknown code: they can block,
take other locks in another order (a deadlock), or call back into this
object and try to take the same lock.

## Example

```python
import logging
import threading

log = logging.getLogger(__name__)
_lock = threading.Lock()
_config = {}

def reload(path):
    with _lock:
        with open(path) as f:
            _config.update(parse(f.read()))
        log.info("config reloaded")
```

## Fix

Do the slow or foreign work outside the lock; hold the lock only to read or
swap the shared state.

```python
import logging
import threading

log = logging.getLogger(__name__)
_lock = threading.Lock()
_config = {}

def reload(path):
    with open(path) as f:
        fresh = parse(f.read())
    with _lock:
        _config.clear()
        _config.update(fresh)
    log.info("config reloaded")
```
"#,
    examples: &EXAMPLES,
};

/// Names of collections of callbacks.
fn is_callback_name(n: &str) -> bool {
    let n = n.trim_start_matches('_').to_ascii_lowercase();
    n.contains("callback")
        || n.contains("listener")
        || n.contains("hook")
        || n.contains("observer")
        || n.contains("subscriber")
        || n.starts_with("on_")
        || n == "cb"
        || n == "fn"
        || n == "func"
        || n.ends_with("_cb")
}

impl Rule for CriticalSectionIo {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        let blocks = thread_lock_blocks(cx);
        let whole_operation_locks = locks_held_for_whole_operations(cx, &blocks);
        for (fid, w, lock) in blocks {
            if !cx.func(fid).is_test {
                check_with(cx, fid, w, &lock, &whole_operation_locks, out);
            }
        }
    }
}

/// Every `with <thread lock>:` of the file: its function, the statement and
/// the lock.
fn thread_lock_blocks(cx: &FileCx) -> Vec<(FuncId, StmtId, LockRef)> {
    let mut out = Vec::new();
    for fid in cx.model.function_ids() {
        let mut v = WithFinder(Vec::new());
        walk_block(cx.model, &cx.func(fid).body, &mut v);
        for w in v.0 {
            let StmtKind::With { items, .. } = &cx.stmt(w).kind else {
                continue;
            };
            if let Some(lock) = items
                .iter()
                .filter_map(|it| lock_ref(cx, it.ctx, fid))
                .find(|l| is_thread_lock(&l.kind))
            {
                out.push((fid, w, lock));
            }
        }
    }
    out
}

/// The call opens a connection the block then queries under the same lock
/// (`conn = sqlite3.connect(path)`, `conn.execute(..)`): the lock guards
/// the whole session, connection included, as it guards each query.
fn opens_the_guarded_session(cx: &FileCx, call: ExprId, body: &Block) -> bool {
    // `conn = sqlite3.connect(p)`, or `with sqlite3.connect(p) as conn:`.
    let Some(conn) = crate::util::bound_target(cx, call).and_then(|t| cx.model.name_of(t)) else {
        return false;
    };
    unsnarl_model::walk::calls_in_block(cx.model, body)
        .into_iter()
        .any(|e| {
            cx.call(e).is_some_and(|k| {
                k.receiver.and_then(|r| cx.model.name_of(r)) == Some(conn)
                    && cx.effect(k, Effect::Blocking).is_some_and(|b| b.exclusive)
            })
        })
}

/// The lock is a local the function builds on each call (`lock =
/// threading.Lock()`) and uses only in `with` statements: no other thread
/// can ever hold it, so nobody waits for what runs under it. (Such a lock
/// guards nothing, which is a different mistake.)
fn private_to_the_call(cx: &FileCx, fid: FuncId, w: StmtId) -> bool {
    let StmtKind::With { items, .. } = &cx.stmt(w).kind else {
        return false;
    };
    items.iter().any(|it| {
        let ExprKind::Name { id, resolved: None } = &cx.expr(it.ctx).kind else {
            return false;
        };
        let mut stores = 0;
        let funcs = crate::python::common::func_and_nested(cx, fid);
        crate::python::common::name_refs(cx, &funcs, id)
            .into_iter()
            .all(|r| match cx.tree.expr_parent(r) {
                Parent::Stmt(s) => match &cx.stmt(s).kind {
                    StmtKind::Assign {
                        targets,
                        value: Some(v),
                        ..
                    } if targets.as_slice() == [r] => {
                        stores += 1;
                        cx.call(*v).is_some() && lock_kind(cx, *v).is_some()
                    }
                    StmtKind::With { items, .. } => {
                        items.iter().any(|i| i.ctx == r) && cx.func_of(r) == fid
                    }
                    _ => false,
                },
                _ => false,
            })
            && stores == 1
    })
}

/// The keys of the thread locks the file holds, in some block, across a
/// wait for other threads' work (`with self._op_lock: self._thread.join()`
/// in `stop()`): such a lock serializes whole operations (start, stop), and
/// every thread that takes it already expects to wait that long, in its
/// other blocks too.
fn locks_held_for_whole_operations(
    cx: &FileCx,
    blocks: &[(FuncId, StmtId, LockRef)],
) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for (_, w, lock) in blocks {
        if let StmtKind::With { body, .. } = &cx.stmt(*w).kind
            && !keys.contains(&lock.key)
            && waits_for_other_threads(cx, body)
        {
            keys.push(lock.key.clone());
        }
    }
    keys
}

struct WithFinder(Vec<StmtId>);

impl Visitor for WithFinder {
    fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
        if matches!(
            m.stmt(id).kind,
            StmtKind::With {
                is_async: false,
                ..
            }
        ) {
            self.0.push(id);
        }
        true
    }
}

/// The block also takes a lock on a file, for other processes
/// (`with self._lock, FileLock(path + ".lock"):`, or
/// `fcntl.flock(fh, fcntl.LOCK_EX)` inside, or in a helper it calls): the file is the shared state,
/// and its read-modify-write under both locks is the critical section.
fn takes_a_file_lock(cx: &FileCx, w: StmtId, body: &Block) -> bool {
    let StmtKind::With { items, .. } = &cx.stmt(w).kind else {
        return false;
    };
    let file_lock = |name: &str| {
        let n = name.to_ascii_lowercase();
        n.ends_with("filelock") || n.contains("interprocesslock")
    };
    items.iter().any(|it| {
        cx.call(cx.model.strip(it.ctx))
            .is_some_and(|c| file_lock(&c.name) || c.target.as_deref().is_some_and(file_lock))
    }) || unsnarl_model::walk::calls_in_block(cx.model, body)
        .into_iter()
        .any(|e| {
            cx.call(e).is_some_and(|c| {
                locks_os_file(c)
                    || cx.callee_in_file(c).is_some_and(|g| {
                        cx.body_calls(g)
                            .any(|k| cx.call(k).is_some_and(locks_os_file))
                    })
            })
        })
}

/// An OS lock on an open file (`fcntl.flock`, `fcntl.lockf`,
/// `msvcrt.locking`), taken here or by a helper of the file the block calls
/// (`lock_fd = _lock(fd, path)`).
fn locks_os_file(c: &Call) -> bool {
    matches!(
        c.target.as_deref(),
        Some("fcntl.flock" | "fcntl.lockf" | "msvcrt.locking")
    )
}

fn check_with(
    cx: &FileCx,
    fid: FuncId,
    w: StmtId,
    lock: &LockRef,
    whole_operation_locks: &[String],
    out: &mut Vec<Finding>,
) {
    let StmtKind::With { body, .. } = &cx.stmt(w).kind else {
        return;
    };
    if serializes_io(cx, body)
        || takes_a_file_lock(cx, w, body)
        || guards_only_io(cx, fid, body)
        || limits_concurrency(cx, lock)
        || private_to_the_call(cx, fid, w)
    {
        return;
    }
    let whole_operation = whole_operation_locks.contains(&lock.key);
    let loop_vars = callback_loop_vars(cx, body);
    let mut reported = 0;
    let offences: Vec<(ExprId, &Call, String)> =
        unsnarl_model::walk::calls_in_block(cx.model, body)
            .into_iter()
            .filter_map(|call| {
                let c = cx.call(call)?;
                Some((call, c, offence(cx, fid, c, &loop_vars)?))
            })
            .collect();
    // A log line next to I/O or a callback under the same lock is not what
    // keeps the other threads waiting: the heavier call is reported, and
    // moving it out is the fix.
    let heavier = offences
        .iter()
        .any(|&(_, c, _)| cx.effect(c, Effect::Logging).is_none())
        || talks_to_a_device(cx, body)
        || calls_a_blocking_helper(cx, w, body);
    for (call, c, what) in offences {
        if reported >= 3 {
            break;
        }
        if whole_operation
            && (cx.effect(c, Effect::Logging).is_some() || cx.effect(c, Effect::Blocking).is_some())
        {
            continue;
        }
        // A one-line append to a log file, a kernel file read, a package's
        // own data: nothing to wait for, under the lock or not.
        if remakes_guarded_state(cx, call)
            || undoes_on_failure(cx, call, c)
            || paces_callers(cx, call, body)
            || fills_once(cx, call, w)
            || (cx.effect(c, Effect::Blocking).is_some()
                && crate::shared::blocking::waits_for_nothing(cx.model, call, c))
        {
            continue;
        }
        // A DB-API connection shared by threads must be used under a lock:
        // the call cannot move out of the block, and the lock is its guard.
        if cx.effect(c, Effect::Blocking).is_some_and(|e| e.exclusive)
            || opens_the_guarded_session(cx, call, body)
        {
            continue;
        }
        if cx.effect(c, Effect::Logging).is_some()
            && (heavier
                || c.name == "debug"
                || on_error_path(cx, call)
                || in_branch_under(cx, call, w))
        {
            continue;
        }
        reported += 1;
        let mut f = cx.finding(
            &META,
            cx.expr(call).span,
            format!(
                "`{}` {what} while `{}` is held: every thread that needs the lock waits for it, and a hang here hangs them all",
                cx.callee_display(c),
                lock.display
            ),
            "move it out of the `with` block: compute or fetch before taking the lock, log and notify after releasing it; hold the lock only to read or swap the shared state",
        );
        f.related.push(Related {
            file: None,
            span: cx.stmt(w).span,
            message: format!("`{}` taken here", lock.display),
        });
        out.push(f);
    }
}

/// A rate limiter: the sleep `call` waits out the rest of an interval
/// measured from a clock read earlier in the block, and the block reads
/// the clock again after it to start the next interval (`hold = period -
/// (perf_counter() - last[0])`, `time.sleep(hold)`, ..., `last[0] =
/// perf_counter()`). Spacing the callers out is what the lock is for.
fn paces_callers(cx: &FileCx, call: ExprId, body: &Block) -> bool {
    let Some(c) = cx.call(call) else {
        return false;
    };
    let Some(Some(delay)) = crate::python::common::sleep_arg(c) else {
        return false;
    };
    let at = cx.expr(call).span;
    let clock = |e: ExprId| {
        cx.call(e)
            .is_some_and(|k| cx.effect(k, Effect::Clock).is_some())
    };
    // The delay is worked out from the clock: written there, or through
    // locals the block assigned from it (`elapsed = now() - last`, `hold =
    // period - elapsed`), a few steps back.
    let stmts = unsnarl_model::walk::stmts_in_block(cx.model, body);
    let assigned_from = |n: &str| -> Vec<ExprId> {
        stmts
            .iter()
            .filter_map(|&s| match &cx.stmt(s).kind {
                StmtKind::Assign {
                    targets,
                    value: Some(v),
                    ..
                } if targets.iter().any(|&t| cx.model.name_of(t) == Some(n)) => Some(*v),
                _ => None,
            })
            .collect()
    };
    let mut frontier = vec![delay];
    let mut read_before = false;
    for _ in 0..4 {
        let mut next = Vec::new();
        for x in frontier {
            for e in unsnarl_model::walk::exprs_under(cx.model, x) {
                if clock(e) && cx.expr(e).span.end <= at.start {
                    read_before = true;
                }
                if let Some(n) = cx.model.name_of(e) {
                    next.extend(assigned_from(n));
                }
            }
        }
        if read_before || next.is_empty() {
            break;
        }
        frontier = next;
    }
    let restarted_after = stmts.iter().any(|&s| {
        matches!(&cx.stmt(s).kind, StmtKind::Assign { value: Some(v), .. }
                if cx.stmt(s).span.start >= at.end && clock(cx.model.strip(*v)))
    });
    read_before && restarted_after
}

/// The call sits in a branch of an `if` inside the `with` `w` (a state
/// change, an overwrite, `if log.isEnabledFor(DEBUG):`): it runs when that
/// case arises, not every time the lock is taken.
///
/// Or it follows, in the block, an `if` that handles a case and returns
/// (`if task.pending: task.cancel(); return True`): what comes after is
/// that `if`'s `else`, written without one. A bare guard (`if task is
/// None: return`) handles no case: what follows it is the usual path.
fn in_branch_under(cx: &FileCx, call: ExprId, w: StmtId) -> bool {
    let Some(st) = cx.tree.enclosing_stmt(call) else {
        return false;
    };
    let handles_a_case_and_returns = |s: StmtId| {
        matches!(&cx.stmt(s).kind, StmtKind::If { then, orelse, .. }
            if orelse.is_empty()
                && then.len() >= 2
                && then.last().is_some_and(|&l| matches!(cx.stmt(l).kind, StmtKind::Return(_))))
    };
    let under_if = cx
        .tree
        .stmt_ancestors(st)
        .take_while(|&a| a != w)
        .any(|a| matches!(cx.stmt(a).kind, StmtKind::If { .. }));
    under_if
        || std::iter::once(st)
            .chain(cx.tree.stmt_ancestors(st))
            .take_while(|&a| a != w)
            .any(|a| {
                crate::util::containing_block(cx, a).is_some_and(|b| {
                    b.iter()
                        .take_while(|&&x| x != a)
                        .any(|&x| handles_a_case_and_returns(x))
                })
            })
}

/// A removal of files in a handler that then raises, or before a `raise`
/// (`except BaseException: shutil.rmtree(tmp, ignore_errors=True);
/// raise`): it undoes the block's half-done work once per failure, and the
/// next holder must not find that work half there.
fn undoes_on_failure(cx: &FileCx, call: ExprId, c: &Call) -> bool {
    matches!(
        c.target.as_deref(),
        Some(
            "shutil.rmtree"
                | "os.remove"
                | "os.unlink"
                | "os.rmdir"
                | "pathlib.Path.unlink"
                | "pathlib.Path.rmdir"
        )
    ) && on_error_path(cx, call)
}

/// The log call reports a failure: it sits in an `except` handler (inside
/// the `with`, or around it), or its block ends by raising
/// (`log.warning(..); raise`).
/// It runs once per failure, not on the path the lock usually guards.
fn on_error_path(cx: &FileCx, call: ExprId) -> bool {
    let Some(st) = cx.tree.enclosing_stmt(call) else {
        return false;
    };
    let raises_after = std::iter::once(st)
        .chain(crate::util::stmts_after(cx, st).iter().copied())
        .last()
        .is_some_and(|l| matches!(cx.stmt(l).kind, StmtKind::Raise(_)));
    // In a handler inside the `with`, or with the whole `with` inside one
    // (`except Exception: with state.condition: log.exception(..)`).
    raises_after || crate::util::in_except_handler(cx, call)
}

/// The block calls a sync function of the project that blocks, directly or
/// further down (`self._persist(entries)` writing a temporary file and
/// renaming it): that call is what holds the lock long, not a log line
/// beside it.
/// Not one only a branch that then leaves runs (`if full: session.close();
/// raise ..`): the path that logs does not wait for it.
fn calls_a_blocking_helper(cx: &FileCx, w: StmtId, body: &Block) -> bool {
    unsnarl_model::walk::calls_in_block(cx.model, body)
        .into_iter()
        .filter(|&e| !in_a_leaving_branch(cx, e, w))
        .filter_map(|e| cx.call(e)?.target.as_deref())
        .any(|t| cx.index.blocking_chain_of(cx.lang, t, cx.file).is_some())
}

/// `e` sits, inside statement `w`, in a branch of an `if` that ends by
/// returning or raising.
fn in_a_leaving_branch(cx: &FileCx, e: ExprId, w: StmtId) -> bool {
    let holds = |b: &Block| {
        cx.tree
            .enclosing_stmt(e)
            .is_some_and(|st| crate::util::block_contains(cx, b, st))
    };
    cx.enclosing_stmts(e)
        .into_iter()
        .take_while(|&s| s != w)
        .any(|s| match &cx.stmt(s).kind {
            StmtKind::If { then, orelse, .. } => [then, orelse]
                .into_iter()
                .any(|b| holds(b) && crate::util::ends_in_exit(cx.model, b)),
            _ => false,
        })
}

/// The block talks to a connection of its object, directly or through a
/// method of the file: a call on a receiver named for a socket, serial
/// port or connection (`self.sock.connect(..)`, `self._serial.close()`),
/// whose type the scan may not know. The lock then serializes that
/// exchange; a log line beside it adds nothing to the wait.
fn talks_to_a_device(cx: &FileCx, body: &Block) -> bool {
    fn on_connection(cx: &FileCx, c: &Call) -> bool {
        c.receiver
            .and_then(|r| cx.model.dotted(r))
            .is_some_and(|d| {
                let last = d.rsplit('.').next().unwrap_or(&d).trim_start_matches('_');
                matches!(
                    last,
                    "sock" | "socket" | "serial" | "ser" | "conn" | "connection" | "telnet" | "tn"
                ) || (d.starts_with("self.") && matches!(last, "client" | "session"))
            })
    }
    unsnarl_model::walk::calls_in_block(cx.model, body)
        .into_iter()
        .filter_map(|e| cx.call(e))
        .any(|c| {
            on_connection(cx, c)
                || cx.callee_in_file(c).is_some_and(|g| {
                    cx.body_calls(g)
                        .any(|k| cx.call(k).is_some_and(|k| on_connection(cx, k)))
                })
        })
}

/// The lock is a semaphore the file builds with room for more than one
/// holder (`self.semaphore = threading.Semaphore(self.upper_limit)`): it
/// caps how many threads do the work at once, and the work under it is
/// what it caps. (`Semaphore()` or `Semaphore(1)` is a mutex.)
fn limits_concurrency(cx: &FileCx, lock: &LockRef) -> bool {
    if lock.kind != "semaphore" {
        return false;
    }
    let mut builds = cx.model.stmts.iter().filter_map(|st| match &st.kind {
        StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } if targets
            .iter()
            .any(|&t| cx.model.dotted(t).as_deref() == Some(lock.display.as_str())) =>
        {
            cx.call(cx.model.strip(*v))
        }
        _ => None,
    });
    let mut any = false;
    let all_wide = builds.all(|c| {
        any = true;
        matches!(
            c.target.as_deref(),
            Some("threading.Semaphore" | "threading.BoundedSemaphore")
        ) && c
            .positional(0)
            .or_else(|| c.kwarg("value"))
            .is_some_and(|n| !matches!(cx.model.literal(n), Some(Lit::Int(0 | 1))))
    });
    any && all_wide
}

/// The block is nothing but blocking I/O calls (`with send_lock:
/// sock.sendall(frame)`): the lock is there to keep those operations from
/// interleaving (frames on a socket, lines in a file), so there is no
/// shared state to take the I/O away from.
/// Also a block of nothing but `print` calls (`with _print_lock:
/// print(line, file=out, flush=True)`), or of logging calls (with the
/// logger they use looked up there: `with self.log_lock: log =
/// logging.getLogger(name); log.warning("-" * 60); log.warning(tb)`): the
/// lock keeps one thread's lines together.
fn serializes_io(cx: &FileCx, body: &Block) -> bool {
    !body.is_empty()
        && body.iter().all(|&s| match &cx.stmt(s).kind {
            StmtKind::Expr(e) => cx.call(*e).is_some_and(|c| {
                cx.effect(c, Effect::Blocking).is_some()
                    || cx.effect(c, Effect::Logging).is_some()
                    || c.target.as_deref() == Some("builtins.print")
            }),
            StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } => {
                targets.iter().all(|&t| cx.model.name_of(t).is_some())
                    && cx
                        .call(*v)
                        .is_some_and(|c| c.target.as_deref() == Some("logging.getLogger"))
            }
            _ => false,
        })
        && body
            .iter()
            .any(|&s| matches!(cx.stmt(s).kind, StmtKind::Expr(_)))
}

/// The block changes no state but its own locals and the outside world:
/// every assignment binds a local name, no method that changes a
/// collection or object in place is called on anything but a local, and
/// there is blocking I/O. The lock then guards the I/O itself: a file's
/// read-modify-write (`with lock: n = int(open(p).read()); open(p,
/// "w").write(str(n + 1))`), the frames written to one socket (`with
/// send_lock: try: sock.send(data) except OSError: raise Closed()`). No
/// shared state could be computed outside it.
fn guards_only_io(cx: &FileCx, f: FuncId, body: &Block) -> bool {
    const MUTATORS: &[&str] = &[
        "append",
        "appendleft",
        "extend",
        "insert",
        "update",
        "pop",
        "popitem",
        "popleft",
        "clear",
        "add",
        "discard",
        "remove",
        "setdefault",
        "put",
        "put_nowait",
        "set",
    ];
    // A local, or an item of a local the function binds itself
    // (`data["entries"]` of the `data` just loaded from the file; not of a
    // list an enclosing function shares between threads).
    fn is_local(cx: &FileCx, f: FuncId, e: ExprId) -> bool {
        match &cx.expr(cx.model.strip(e)).kind {
            ExprKind::Name { resolved: None, id } => id != "self" && id != "cls",
            ExprKind::Index { obj, .. } => match &cx.expr(cx.model.strip(*obj)).kind {
                ExprKind::Name { resolved: None, id } => {
                    crate::python::common::values_bound_to(cx, f, id)
                        .next()
                        .is_some()
                }
                _ => is_local(cx, f, *obj),
            },
            _ => false,
        }
    }
    let local_target = |t: ExprId| {
        matches!(cx.expr(t).kind, ExprKind::Index { .. }) && is_local(cx, f, t)
            || unsnarl_model::walk::exprs_under(cx.model, t)
                .into_iter()
                .all(|x| match &cx.expr(x).kind {
                    ExprKind::Name { resolved, id } => resolved.is_none() && id != "self",
                    ExprKind::Collection { .. } | ExprKind::Spread(_) => true,
                    _ => false,
                })
    };
    let stmts = unsnarl_model::walk::stmts_in_block(cx.model, body);
    let writes_shared = stmts.iter().any(|&s| match &cx.stmt(s).kind {
        StmtKind::Assign { targets, .. } => !targets.iter().all(|&t| local_target(t)),
        StmtKind::Global { .. } | StmtKind::FuncDef(_) | StmtKind::ClassDef(_) => true,
        _ => false,
    });
    if writes_shared {
        return false;
    }
    let calls = unsnarl_model::walk::calls_in_block(cx.model, body);
    let mutates = calls.iter().any(|&e| {
        cx.call(e).is_some_and(|c| {
            MUTATORS.contains(&c.name.as_str()) && !c.receiver.is_some_and(|r| is_local(cx, f, r))
        })
    });
    !mutates
        && calls.iter().any(|&e| {
            cx.call(e)
                .is_some_and(|c| cx.effect(c, Effect::Blocking).is_some())
        })
}

/// The block waits for other threads' work (`Thread.join`, `Queue.join`,
/// `Event.wait`, `Future.result`): the lock is held on purpose for a whole
/// operation (one crawl, one flush at a time), and other threads already
/// wait that long for it; a log line or a read in it adds nothing. A
/// `Condition.wait` releases the lock, so it is no such sign.
fn waits_for_other_threads(cx: &FileCx, body: &Block) -> bool {
    unsnarl_model::walk::calls_in_block(cx.model, body)
        .into_iter()
        .any(|e| {
            cx.call(e).is_some_and(|c| {
                let t = c.target.as_deref().unwrap_or("");
                cx.effect(c, Effect::Blocking).is_some()
                    && (t.starts_with("threading.")
                        || t.starts_with("queue.")
                        || t.starts_with("concurrent.futures."))
                    && !t.starts_with("threading.Condition")
            })
        })
}

/// The call's result goes straight into an attribute of the object, or
/// into several (`self.logfile = open(self.path, "a")`, `self.conn =
/// connect(..)`, `self.out, self.err = proc.communicate()`): it
/// remakes the state the lock guards, and no other thread may see it half
/// made. That is what the lock is for.
fn remakes_guarded_state(cx: &FileCx, call: ExprId) -> bool {
    let unsnarl_model::walk::Parent::Stmt(s) = cx.tree.expr_parent(call) else {
        return false;
    };
    let own_attr = |t: ExprId| {
        matches!(&cx.expr(t).kind,
            ExprKind::Attr { obj, .. } if cx.model.name_of(*obj) == Some("self"))
    };
    // Also unpacked into several (`self.out, self.err = p.communicate()`).
    let own_attrs = |t: ExprId| match &cx.expr(t).kind {
        ExprKind::Collection { elems, .. } => {
            !elems.is_empty() && elems.iter().all(|&x| own_attr(x))
        }
        _ => own_attr(t),
    };
    let StmtKind::Assign {
        targets,
        value: Some(v),
        ..
    } = &cx.stmt(s).kind
    else {
        return false;
    };
    if *v != call || targets.is_empty() {
        return false;
    }
    if targets.iter().all(|&t| own_attrs(t)) {
        return true;
    }
    // Through a local set up first (`conn = sqlite3.connect(p)`, its
    // pragmas, then `self._conn = conn`, also inside a `try` that closes
    // it on failure).
    let [t] = targets.as_slice() else {
        return false;
    };
    let Some(local) = cx.model.name_of(*t) else {
        return false;
    };
    let after: Block = crate::util::stmts_after(cx, s).to_vec();
    unsnarl_model::walk::stmts_in_block(cx.model, &after)
        .into_iter()
        .any(|later| {
            matches!(&cx.stmt(later).kind, StmtKind::Assign { targets, value: Some(v), .. }
            if cx.model.name_of(*v) == Some(local) && targets.iter().all(|&t| own_attrs(t)))
        })
}

/// The call is in the lazy set-up the lock exists for: under an `if`
/// inside the block that tests the value the branch then sets (`if
/// self._model is None: ...; self._model = load(path)`, `if not
/// _client:`). Every thread that waits needs that value, and building it
/// twice is what the lock prevents. (A cache filled per key under one
/// lock, `if name not in cache:`, still holds up the threads that want
/// other keys, and is reported.)
fn fills_once(cx: &FileCx, call: ExprId, w: StmtId) -> bool {
    let m = cx.model;
    // What the test finds missing.
    let missing = |cond: ExprId| crate::python::common::tested_as_missing(cx, cond);
    // Built by a call, or a local the branch built (`stream = open(path,
    // "w")`, then `self._stream = stream`); not a flag set to `True`: `if
    // not self._active: self._active = True; self._on_start()` runs on
    // every activation.
    // Also one of several committed together (`_extent, _ui = extent,
    // dev`), each from a call or a local.
    let made = |v: ExprId| cx.call(m.strip(v)).is_some() || m.name_of(m.strip(v)).is_some();
    let sets = |block: &[StmtId], what: &str| {
        crate::index::always_does(m, block, &|st| match &cx.stmt(st).kind {
            StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } => {
                (made(*v)
                    && targets
                        .iter()
                        .any(|&t| m.dotted(t).as_deref() == Some(what)))
                    || match (targets.as_slice(), &cx.expr(m.strip(*v)).kind) {
                        ([t], ExprKind::Collection { elems: vs, .. }) => {
                            matches!(&cx.expr(*t).kind, ExprKind::Collection { elems: ts, .. }
                            if ts.len() == vs.len()
                                && ts.iter().zip(vs).any(|(&t, &v)| {
                                    m.dotted(t).as_deref() == Some(what) && made(v)
                                }))
                        }
                        _ => false,
                    }
            }
            _ => false,
        })
    };
    // Kept beyond the call: a field, or a module name the function
    // declares `global` (a local tested for `None` is not made once).
    let f = cx.func(cx.func_of(call));
    let lasting = |what: &str| {
        what.contains('.')
            || f.body.iter().any(|&st| {
                matches!(&cx.stmt(st).kind, StmtKind::Global { names, .. }
                    if names.iter().any(|n| n == what))
            })
    };
    let under_test = cx
        .enclosing_stmts(call)
        .into_iter()
        .take_while(|&s| s != w)
        .any(|s| match &cx.stmt(s).kind {
            StmtKind::If { cond, then, .. } => {
                missing(*cond).is_some_and(|what| lasting(&what) && sets(then, &what))
            }
            _ => false,
        });
    under_test || after_done_return(cx, call, w, &lasting)
}

/// The call comes after an early return of the lock block on a value it
/// fills once (`with self.lock: if self.initialized: return; ...;
/// self.initialized = True`, or `if self._index is not None: return; ...;
/// self._index = build()`, `if _options and not force: return _options`),
/// and the rest of the block always fills it: a flag named for being set
/// up or done once (`initialized`, `loaded`, `ready`, `warned`) set to
/// `True`, an event named so that is `set()` (`if logged.is_set():
/// return; logged.set()`), or a value set from a call.
fn after_done_return(cx: &FileCx, call: ExprId, w: StmtId, lasting: &dyn Fn(&str) -> bool) -> bool {
    let m = cx.model;
    let StmtKind::With { body, .. } = &cx.stmt(w).kind else {
        return false;
    };
    let at = cx.expr(call).span;
    // What the test finds present, and whether it is a flag (a truth test).
    // `if _options and not force: return _options`, `if not force and
    // _token["value"] and now < _token["expires_at"]`: the first term
    // that tests a value for presence; the others only force a rebuild or
    // check its age.
    let present = |m: &FileModel, cond: ExprId| -> Option<(String, bool)> {
        crate::util::conjuncts(m, cond)
            .into_iter()
            .find_map(|term| match &m.expr(term).kind {
                ExprKind::Binary { op, left, right }
                    if *op == BinOp::IsNot && matches!(m.literal(*right), Some(Lit::Null)) =>
                {
                    Some((m.keyed_place(*left)?, false))
                }
                ExprKind::Name { .. } | ExprKind::Attr { .. } | ExprKind::Index { .. } => {
                    Some((m.keyed_place(term)?, true))
                }
                // `if _failure_logged.is_set(): return`: an event as the flag.
                ExprKind::Call(c) if c.name == "is_set" && c.args.is_empty() => {
                    Some((m.keyed_place(c.receiver?)?, true))
                }
                _ => None,
            })
    };
    // A module-level name (an event set in place) or an entry of a
    // module-level dict (`_token["value"]`) lasts too.
    let module = crate::python::common::module_vars(m);
    let lasting = |what: &str| {
        lasting(what)
            || module.contains(what)
            || what
                .split_once('[')
                .is_some_and(|(root, _)| module.contains(root))
    };
    let named_for_setup = |what: &str| {
        let last = what.rsplit('.').next().unwrap_or(what).to_ascii_lowercase();
        [
            "init",
            "loaded",
            "ready",
            "setup",
            "built",
            "started",
            "logged",
            "warned",
            "bootstrap",
            "configured",
            "prepared",
            "installed",
            "registered",
        ]
        .iter()
        .any(|w| last.contains(w))
    };
    body.iter().enumerate().any(|(k, &st)| {
        let StmtKind::If { cond, then, orelse } = &cx.stmt(st).kind else {
            return false;
        };
        let returns = orelse.is_empty()
            && then.len() == 1
            && matches!(cx.stmt(then[0]).kind, StmtKind::Return(_));
        if !returns || cx.stmt(st).span.end > at.start {
            return false;
        }
        let Some((what, flag)) = present(m, *cond) else {
            return false;
        };
        lasting(&what)
            && crate::index::always_does(m, &body[k + 1..], &|s| {
                let sets_event = || match cx.stmt(s).kind {
                    StmtKind::Expr(x) => cx.call(x).is_some_and(|c| {
                        c.name == "set"
                            && c.args.is_empty()
                            && c.receiver.and_then(|r| m.keyed_place(r)).as_deref()
                                == Some(what.as_str())
                    }),
                    _ => false,
                };
                (flag && named_for_setup(&what) && sets_event())
                    || matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(v), .. }
                if targets.iter().any(|&t| m.keyed_place(t).as_deref() == Some(what.as_str()))
                    && ((flag
                        && named_for_setup(&what)
                        && matches!(m.literal(*v), Some(Lit::Bool(true))))
                        || cx.call(m.strip(*v)).is_some()
                        || m.name_of(*v).is_some()
                        // `_model = (key, model)`: a slot keyed by what built it.
                        || matches!(&cx.expr(m.strip(*v)).kind, ExprKind::Collection { kind: CollKind::Tuple, elems, .. }
                            if elems.iter().any(|&x| m.name_of(x).is_some() || cx.call(m.strip(x)).is_some()))))
            })
    })
}

/// Loop variables of `for cb in self._callbacks:` inside the block. A
/// collection the file fills with weak references
/// (`observers.append(weakref.ref(self))`) holds no callbacks: calling an
/// item (`obs = r()`) only dereferences it.
fn callback_loop_vars(cx: &FileCx, body: &Block) -> Vec<String> {
    struct V<'c, 'a>(&'c FileCx<'a>, Vec<String>);
    impl Visitor for V<'_, '_> {
        fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
            if let StmtKind::For {
                target: Some(t),
                iter,
                ..
            } = &m.stmt(id).kind
                && let Some(n) = m.name_of(*t)
                && let Some(d) = m.dotted(*iter)
                && let last = d.rsplit('.').next().unwrap_or(&d)
                && is_callback_name(last)
                && !holds_weak_references(self.0, last)
            {
                self.1.push(n.to_string());
            }
            true
        }
    }
    let mut v = V(cx, Vec::new());
    walk_block(cx.model, body, &mut v);
    v.1
}

/// The file adds weak references to collections named `name`
/// (`src.observers.append(weakref.ref(self))`).
fn holds_weak_references(cx: &FileCx, name: &str) -> bool {
    cx.calls_named(&["append", "add"])
        .into_iter()
        .any(|(_, c)| {
            c.receiver
                .and_then(|r| cx.model.dotted(r))
                .is_some_and(|d| d.rsplit('.').next() == Some(name))
                && c.positional(0).and_then(|a| cx.call(a)).is_some_and(|k| {
                    matches!(
                        k.target.as_deref(),
                        Some("weakref.ref" | "weakref.WeakMethod")
                    )
                })
        })
}

/// What is wrong with calling `c` under the lock.
fn offence(cx: &FileCx, fid: FuncId, c: &Call, loop_vars: &[String]) -> Option<String> {
    if let Some(e) = cx.effect(c, Effect::Blocking) {
        let t = c.target.as_deref().unwrap_or("");
        // Waits on threading primitives are lock-order / condition
        // business, not I/O.
        if t.starts_with("threading.")
            || t.starts_with("concurrent.futures.")
            || t.starts_with("queue.")
            || t.starts_with("multiprocessing.")
        {
            return None;
        }
        return Some(e.what.clone());
    }
    if let Some(e) = cx.effect(c, Effect::Logging) {
        return Some(e.what.clone());
    }
    if c.receiver.is_none()
        && let Some(n) = cx.model.name_of(c.func)
    {
        let f = cx.func(fid);
        let is_param = f
            .params
            .iter()
            .any(|p| p.name == n && p.ty.as_ref().is_none_or(|t| t.text.contains("Callable")));
        // `func(self._conn)`: the caller's code is handed the resource the
        // lock guards (`_with_connection(func)`); running it under the lock
        // is what the method is for.
        let lends_guarded = c.args.iter().any(|a| {
            cx.model
                .dotted(a.value)
                .is_some_and(|d| d.strip_prefix("self.").is_some_and(|r| !r.contains('.')))
        });
        if ((is_param && is_callback_name(n)) || loop_vars.iter().any(|v| v == n)) && !lends_guarded
        {
            return Some("calls a caller-supplied callback (unknown code that may block or take other locks)".into());
        }
    }
    if c.target.is_none()
        && let Some(r) = c.receiver
        && cx.model.name_of(r).is_some_and(|n| n == "self")
        && is_callback_name(&c.name)
    {
        return Some(
            "calls a registered callback (unknown code that may block or take other locks)".into(),
        );
    }
    None
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import logging
import threading

log = logging.getLogger(__name__)

class Heartbeater:
    def __init__(self):
        self._op_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._beats = []

    def beat(self, now):
        with self._state_lock:
            self._beats.append(now)
            log.info("beat at %s", now)  # expect

    def stop(self):
        with self._op_lock:
            self._thread.join()
"#,
        r#"
import logging
import threading

log = logging.getLogger(__name__)


class Journal:
    def __init__(self):
        self.lock = threading.Lock()
        self.items = []

    def record(self, item):
        with self.lock:
            # A bare guard: every real record takes this path.
            if item is None:
                return
            self.items.append(item)
            log.info("recorded %s", item)  # expect
"#,
        r#"
import threading

import requests


class Prices:
    def __init__(self, url):
        self.lock = threading.Lock()
        self.url = url
        self.closed = False
        self.table = {}

    def refresh(self):
        with self.lock:
            # Every reader waits here while the refresh waits on the server.
            if self.closed:
                return
            self.table = requests.get(self.url, timeout=30).json()  # expect

    def price(self, item):
        with self.lock:
            return self.table.get(item)
"#,
        r#"
import threading

_lock = threading.Lock()
_templates = {}


def template(name):
    with _lock:
        if name not in _templates:
            # Threads that want other templates wait for this file too.
            with open(f"templates/{name}.html") as f:  # expect
                _templates[name] = f.read()
        return _templates[name]
"#,
        r#"
import threading
import time

_lock = threading.Lock()
_last_sync = [0.0]


def sync_if_due(client, interval):
    with _lock:
        if time.monotonic() - _last_sync[0] > interval:
            client.push()
            # Waits for the remote side with every other caller queued.
            time.sleep(client.settle_seconds)  # expect
        _last_sync[0] = time.monotonic()
"#,
        r#"
import os
import threading

class Counters:
    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        self.totals = {}

    def incr(self, key, amount=1):
        with self.lock:
            with open(os.path.join(self.path, key)) as fh:  # expect
                value = int(fh.read()) + amount
            self.totals[key] = value

    def record(self, key, amount):
        with self.lock:
            with open(os.path.join(self.path, key), "w") as fh:  # expect
                fh.write(str(amount))
            self.totals.setdefault(key, []).append(amount)
"#,
        r#"
import logging
import threading

logger = logging.getLogger(__name__)

class Registry:
    def __init__(self):
        self.items = {}
        self._lock = threading.RLock()
        self._ready = threading.Condition(self._lock)

    def add(self, key, value):
        with self._ready:
            while key in self.items:
                self._ready.wait()
            self.items[key] = value
            logger.warning("registered %s", key)  # expect
"#,
        r#"
import logging
import threading
import requests

log = logging.getLogger(__name__)
lock = threading.Lock()
cache = {}

def refresh(key):
    with lock:
        resp = requests.get("https://api.example/" + key, timeout=5)  # expect
        cache[key] = resp.json()
        log.info("refreshed %s", key)
"#,
        r#"
import threading

class Bus:
    def __init__(self):
        self._lock = threading.RLock()
        self._listeners = []

    def publish(self, event):
        with self._lock:
            for listener in self._listeners:
                listener(event)  # expect

    def update(self, value, on_change):
        with self._lock:
            self.value = value
            on_change(value)  # expect
"#,
        r#"
import socket
import threading

_send_lock = threading.Lock()
_sent = 0

def send_counted(sock: socket.socket, data: bytes):
    global _sent
    with _send_lock:
        sock.sendall(data)  # expect
        _sent += 1
"#,
        r#"
import logging
import threading

log = logging.getLogger(__name__)

class Registry:
    def __init__(self):
        self._lock = threading.Lock()
        self._items = {}

    def put(self, key, value):
        with self._lock:
            self._items[key] = value
            log.info("stored %s (%d items)", key, len(self._items))  # expect
"#,
        r#"
import os
import sys
import threading

class ErrorLogSink:
    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        self.logfile = None

    def reopen(self):
        with self.lock:
            if self.logfile is not None:
                self.logfile.close()
            with open(self.path + ".old") as old:  # expect
                self.logfile = old
            os.dup2(self.logfile.fileno(), sys.stderr.fileno())
"#,
        r#"
import logging
import threading

log = logging.getLogger(__name__)

class Sender:
    def __init__(self):
        self.lock = threading.Lock()
        self.pending = []

    def send(self, msg):
        with self.lock:
            self.pending.append(msg)
            log.info("queued %r", msg)  # expect
"#,
        r#"
import subprocess
import threading

class Check:
    def __init__(self, args, timeout):
        self.args = args
        self.timeout = timeout
        self.lock = threading.Lock()
        self.results = []

    def run(self):
        with self.lock:
            proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            out, err = proc.communicate(timeout=self.timeout)  # expect
            self.results.append((out, err))
"#,
        r#"
import json
import sqlite3
import threading

# The query needs the lock; the snapshot file written beside it does not.
class TraceStore:
    def __init__(self, path):
        self._conn = sqlite3.connect(path, check_same_thread=False)
        self._lock = threading.Lock()
        self._last_hash = None

    def append(self, record, digest):
        with self._lock:
            self._last_hash = digest
            self._conn.execute("insert into t values (?, ?)", (record, digest))
            self._conn.commit()
            with open("last.json", "w") as f:  # expect
                json.dump({"hash": digest}, f)
"#,
        r#"
import json
import threading

_lock = threading.Lock()
_seen = {"entries": []}

# The module's own table changes under the lock: the file read waits
# with it.
def record(path, entry):
    with _lock:
        with open(path) as f:  # expect
            data = json.load(f)
        _seen["entries"].append(entry)
        data["entries"].append(entry)
"#,
        r#"
import os
import threading
import time

def crawl(urls, delay, fetch):
    lock = threading.Lock()
    last = [0.0]

    def one(url):
        # `last` is the crawl's, shared by every worker thread; each line
        # is forced to disk before the lock is let go.
        with lock:
            with open("crawl.log", "a") as f:  # expect
                f.write(url + "\n")
                os.fsync(f.fileno())
            last[0] = time.time()
        return fetch(url)

    return [one(u) for u in urls]
"#,
        r#"
import threading

_lock = threading.Lock()
_lines = []

def say(line):
    with _lock:
        _lines.append(line)
        print(line, flush=True)  # expect
"#,
        r#"
import threading

import requests

class Downloader:
    def __init__(self):
        self.session = requests.Session()
        self.done = []
        # One holder at a time: a mutex by another name.
        self.semaphore = threading.Semaphore(1)

    def fetch(self, url):
        with self.semaphore:
            body = self.session.get(url, timeout=30).content  # expect
            self.done.append(url)
        return body
"#,
        r#"
import logging
import threading
import time

logger = logging.getLogger(__name__)


class Sessions:
    def __init__(self, limit):
        self.limit = limit
        self.sessions = {}
        self._lock = threading.Lock()

    def create(self, name, session):
        with self._lock:
            if len(self.sessions) >= self.limit:
                self._close(session)
                raise RuntimeError("too many sessions")
            self.sessions[name] = session
            logger.info("session %s created", name)  # expect
            return session

    def _close(self, session):
        session.send_eof()
        time.sleep(0.5)
"#,
        r#"
# The lock is built per call but handed to the worker threads: they share it.
import threading


class Loader:
    def run_all(self, paths):
        lock = threading.Lock()

        def work(p):
            with lock:
                data = open(p).read()  # expect
                self.results.append(data)

        threads = [threading.Thread(target=work, args=(p,)) for p in paths]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
"#,
    ],
    pass: &[
        r#"
import sqlite3
import threading


class Store:
    def __init__(self, path):
        self.path = path
        self._conn = None
        self._lock = threading.Lock()

    def reopen(self):
        with self._lock:
            if self._conn is not None:
                self._conn.close()
            conn = sqlite3.connect(self.path, check_same_thread=False, timeout=5.0)
            conn.execute("PRAGMA journal_mode=WAL")
            self._conn = conn
"#,
        r#"
import threading
import time

import httpx

_TOKEN = {"value": None, "expires_at": 0.0}
_TOKEN_LOCK = threading.Lock()


def app_token(force=False):
    now = time.time()
    with _TOKEN_LOCK:
        # Every waiter needs this token; fetching it twice is what the
        # lock prevents.
        if not force and _TOKEN["value"] and now < _TOKEN["expires_at"]:
            return _TOKEN["value"]
        response = httpx.post("https://id.example/token", timeout=20)
        payload = response.json()
        token = payload["access_token"]
        _TOKEN["value"] = token
        _TOKEN["expires_at"] = now + payload.get("expires_in", 3600) - 60
        return token
"#,
        r#"
import sys
import threading


class Log:
    def __init__(self, log_file):
        self._log_file = log_file
        self._lock = threading.Lock()
        self.__stream = None

    @property
    def _stream(self):
        stream = self.__stream
        if stream is None:
            with self._lock:
                if self.__stream is None:
                    stream = sys.stderr
                    if self._log_file:
                        stream = open(self._log_file, "w")
                    self.__stream = stream
                    return stream
        return stream
"#,
        r#"
import shutil
import tempfile
import threading

_extract_lock = threading.Lock()
_cache = {}


def extract(archive, key):
    with _extract_lock:
        if key in _cache:
            return _cache[key]
        tmp = tempfile.mkdtemp()
        try:
            unpack(archive, tmp)
        except BaseException:
            # Only on failure: the next holder must not find half a tree.
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        _cache[key] = tmp
        return tmp
"#,
        r#"
import json
import threading

_lock = threading.RLock()
_options = None


def get_options(force=False):
    global _options
    if _options and not force:
        return _options
    with _lock:
        # Built once: every waiting thread needs these options.
        if _options and not force:
            return _options
        with open("config.json", encoding="utf-8") as f:
            _options = json.load(f)
        return _options
"#,
        r#"
import json
import threading


class AuditTrail:
    def __init__(self, path):
        self.lock = threading.Lock()
        self.path = path
        self.recent = []

    def record(self, entry):
        # One line appended to a local log, in order with its in-memory
        # copy: what a logging handler does under its own lock.
        with self.lock:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")
            self.recent.append(entry)
            del self.recent[:-100]
"#,
        r#"
import logging
import threading

log = logging.getLogger(__name__)


class Tasks:
    def __init__(self):
        self.lock = threading.Lock()
        self.tasks = {}

    def cancel(self, tid):
        with self.lock:
            task = self.tasks.get(tid)
            if task is None:
                return False
            if task.pending:
                task.state = "cancelled"
                return True
            # Only a running task gets here: a case that arises now and then.
            task.cancel_requested = True
            log.info("asked running task %s to stop", tid)
            return True
"#,
        r#"
import marshal
import threading


class Tokenizer:
    def __init__(self, path):
        self.lock = threading.RLock()
        self.path = path
        self.initialized = False

    def initialize(self):
        # Loaded once: every thread that waits needs the table before it
        # can do anything, and loading it twice is what the lock prevents.
        with self.lock:
            if self.initialized:
                return
            with open(self.path, "rb") as f:
                self.freq = marshal.load(f)
            self.initialized = True

    def tokenize(self, text):
        if not self.initialized:
            self.initialize()
        return [w for w in text.split() if w in self.freq]
"#,
        r#"
import threading


class Model:
    def __init__(self, path):
        self.path = path
        self._lock = threading.Lock()
        self._weights = None

    def weights(self):
        with self._lock:
            if self._weights is None:
                with open(self.path, "rb") as f:
                    self._weights = f.read()
            return self._weights
"#,
        r#"
import logging
import threading
import traceback


class Workers:
    def __init__(self):
        self.log_lock = threading.Lock()

    def report(self, name, args):
        # The lock keeps one thread's multi-line report together.
        with self.log_lock:
            log = logging.getLogger("Error." + name)
            log.warning("-" * 60)
            log.warning("Unexpected error in %s with %s", name, args)
            log.warning(traceback.format_exc())
"#,
        r#"
import threading
import time
from functools import wraps


def rate_limit(per_second):
    period = 1.0 / per_second
    last = [time.perf_counter()]
    lock = threading.Lock()

    def decorate(func):
        @wraps(func)
        def limited(*args, **kwargs):
            with lock:
                elapsed = time.perf_counter() - last[0]
                hold = period - elapsed
                if hold > 0:
                    time.sleep(hold)
                last[0] = time.perf_counter()
            return func(*args, **kwargs)

        return limited

    return decorate
"#,
        r#"
import threading

import requests

class Downloader:
    def __init__(self, upper_limit):
        self.session = requests.Session()
        self.done = []
        # At most `upper_limit` downloads at once.
        self.semaphore = threading.Semaphore(upper_limit)

    def fetch(self, url):
        with self.semaphore:
            body = self.session.get(url, timeout=30).content
            self.done.append(url)
        return body
"#,
        r#"
import json
import threading

class AuditLog:
    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()

    def add(self, entry):
        # One file's read-modify-write: the lock guards the file itself.
        with self.lock:
            with open(self.path) as f:
                data = json.load(f)
            data["entries"].append(entry)
            data["count"] = len(data["entries"])
            with open(self.path, "w") as f:
                json.dump(data, f)
"#,
        r#"
import sys
import threading

_print_lock = threading.Lock()

def toast(message, out=sys.stderr):
    # Threads print whole lines, one at a time.
    with _print_lock:
        print(message, file=out, flush=True)
"#,
        r#"
import threading
import weakref

_lock = threading.RLock()


class Node:
    def __init__(self):
        self.observers = []
        self.sources = []

    def track(self, src):
        with _lock:
            src.observers.append(weakref.ref(self))
            self.sources.append(src)

    def dispose(self):
        with _lock:
            # Weak references: calling one only dereferences it.
            for r in self.observers:
                obs = r()
                if obs is not None:
                    obs.sources.remove(self)
"#,
        r#"
import sqlite3
import threading

# One connection shared by threads: every query must hold the lock.
class TraceStore:
    def __init__(self, path):
        self._conn = sqlite3.connect(path, check_same_thread=False)
        self._lock = threading.Lock()
        self._last_hash = None

    def append(self, record, digest):
        with self._lock:
            self._last_hash = digest
            cur = self._conn.execute("insert into t values (?, ?)", (record, digest))
            self._conn.commit()
            return cur.lastrowid
"#,
        r#"
import logging
import threading

LOGGER = logging.getLogger(__name__)

class CircuitBreaker:
    def __init__(self):
        self._lock = threading.Lock()
        self.failures = 0
        self.state = "closed"

    def record_failure(self):
        with self._lock:
            self.failures += 1
            # Logged only when the state changes, not on every call.
            if self.state == "half-open":
                LOGGER.warning("recovery failed, reopening")
                self.state = "open"
            elif self.failures >= 5 and self.state == "closed":
                LOGGER.error("open after %d failures", self.failures)
                self.state = "open"
"#,
        r#"
import logging
import socket
import threading

log = logging.getLogger(__name__)


class Controller:
    def __init__(self, host, port):
        self.host, self.port = host, port
        self.lock = threading.Lock()
        self.sock = None
        self.connected = False

    def connect(self):
        with self.lock:
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.sock.connect((self.host, self.port))
            self.connected = True
            log.info("connected to %s:%s", self.host, self.port)

    def status(self, zone):
        with self.lock:
            reply = self._exchange(b"STATUS %d" % zone)
            if reply is None:
                self.connected = False
                log.warning("no status for zone %s", zone)
            return reply

    def _exchange(self, frame):
        self.sock.sendall(frame)
        return self.sock.recv(64) or None
"#,
        r#"
import logging
import threading

log = logging.getLogger(__name__)

class Heartbeater:
    def __init__(self):
        self._op_lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self):
        with self._op_lock:
            thread = threading.Thread(target=self._run, daemon=True)
            thread.start()
            log.debug("started heartbeater %s", thread.name)
            self._thread = thread

    def stop(self):
        with self._op_lock:
            self._thread.join()
            self._thread = None
"#,
        r#"
import logging
import threading

log = logging.getLogger(__name__)

class Sender:
    def __init__(self):
        self.lock = threading.Lock()
        self.pending = []
        self.closed = False

    # The log lines run only when something failed.
    def send(self, msg):
        with self.lock:
            if self.closed:
                log.warning("closed; dropping %r", msg)
                raise ConnectionError("closed")
            try:
                self.pending.append(msg.encode())
            except UnicodeError:
                log.exception("cannot encode %r", msg)
"#,
        r#"
import os
import socket
import threading

class Counters:
    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()

    def incr(self, key, amount=1):
        filename = os.path.join(self.path, key)
        with self.lock:
            try:
                with open(filename) as fh:
                    value = int(fh.read()) + amount
            except Exception:
                value = amount
            with open(filename, "w") as fh:
                fh.write(str(value))
        return value


class Connection:
    def __init__(self, addr):
        self.sock = socket.create_connection(addr, timeout=3)
        self.send_lock = threading.Lock()

    def send(self, data):
        with self.send_lock:
            try:
                self.sock.sendall(data)
            except OSError as e:
                raise ConnectionError(f"send failed: {e}")
"#,
        r#"
import os
import sys
import threading

class ErrorLogSink:
    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        self.logfile = None

    def reopen(self):
        with self.lock:
            if self.logfile is not None:
                self.logfile.close()
            self.logfile = open(self.path, "a+")
            os.dup2(self.logfile.fileno(), sys.stderr.fileno())
"#,
        r#"
import logging
import queue
import threading

logger = logging.getLogger(__name__)

class Crawler:
    def __init__(self, workers=4):
        self.workers = workers
        self.todo = queue.Queue()
        self._oplock = threading.RLock()

    def _run(self):
        while self.todo.get() is not None:
            self.todo.task_done()
        self.todo.task_done()

    def crawl(self, root):
        with self._oplock:
            threads = [threading.Thread(target=self._run) for _ in range(self.workers)]
            for t in threads:
                t.start()
            logger.debug("queueing %s", root)
            self.todo.put(root)
            self.todo.join()
            for t in threads:
                self.todo.put(None)
"#,
        r#"
import os
import threading

class Reaper:
    def __init__(self):
        self._lock = threading.Lock()
        self._children = {}

    def reap(self):
        with self._lock:
            for pid in list(self._children):
                done, _ = os.waitpid(pid, os.WNOHANG)
                if done:
                    del self._children[pid]
"#,
        r#"
import logging
import threading

log = logging.getLogger(__name__)

class Cache:
    def __init__(self):
        self._lock = threading.Lock()
        self._items = {}

    def put(self, key, value):
        with self._lock:
            self._items[key] = value
            if log.isEnabledFor(logging.DEBUG):
                log.debug("stored %s", key)

    def drop(self, key):
        with self._lock:
            self._items.pop(key, None)
            log.debug("dropped %s", key)
"#,
        r#"
import socket
import threading

_send_lock = threading.Lock()

def send(sock: socket.socket, data: bytes):
    # Frames from several threads must not interleave on the socket.
    with _send_lock:
        sock.sendall(data)
"#,
        r#"
import logging
import threading

log = logging.getLogger(__name__)
lock = threading.Lock()
cache = {}

def refresh(key, fetch):
    value = fetch(key)
    with lock:
        cache[key] = value
        n = len(cache)
    log.info("refreshed %s (%d keys)", key, n)
"#,
        r#"
import threading

class Queue:
    def __init__(self):
        self._cond = threading.Condition()
        self._items = []

    def get(self):
        with self._cond:
            while not self._items:
                self._cond.wait()
            return self._items.pop(0)

def not_a_lock(path):
    with open(path) as f:
        print(f.read())
"#,
        r#"
import subprocess
import threading

class Check:
    def __init__(self, args, timeout):
        self.args = args
        self.timeout = timeout
        self.lock = threading.Lock()
        self.out = self.err = None

    def run(self):
        with self.lock:
            proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            self.out, self.err = proc.communicate(timeout=self.timeout)
            self.return_code = proc.returncode
            return self.return_code == 0
"#,
        r#"
import logging
import threading

log = logging.getLogger(__name__)

class Rpc:
    def __init__(self):
        self.condition = threading.Condition()
        self.aborted = False

    def handle(self, behavior, request):
        try:
            return behavior(request)
        except Exception:
            with self.condition:
                log.exception("unexpected error in %r", behavior)
                self.aborted = True
"#,
        r#"
import logging
import threading

logger = logging.getLogger(__name__)


class MemoryStore:
    def __init__(self, sdk):
        self._lock = threading.Lock()
        self._client = sdk.MemoryClient()

    def search(self, query, top_k):
        with self._lock:
            logger.info("searching top_k=%s", top_k)
            results = self._client.search_memories(query=query, top_k=top_k)
        return results
"#,
        r#"
import logging
import threading

logger = logging.getLogger(__name__)
_scorer_lock = threading.Lock()
_failure_logged = threading.Event()


def log_failure_once(error):
    if _failure_logged.is_set():
        return
    with _scorer_lock:
        if _failure_logged.is_set():
            return
        _failure_logged.set()
        logger.warning("rerank disabled for this process: %s", error)
"#,
        r#"
import logging
import os
import tempfile
import threading

logger = logging.getLogger(__name__)


class PolicyStore:
    def __init__(self, path):
        self.path = path
        self.entries = []
        self._lock = threading.Lock()

    def add(self, rule):
        with self._lock:
            entries = self.entries + [rule]
            self._persist(entries)
            logger.info("policy: added %s", rule)

    def _persist(self, entries):
        directory = os.path.dirname(self.path) or "."
        with tempfile.NamedTemporaryFile("w", dir=directory, delete=False) as f:
            f.write("\n".join(entries))
        os.replace(f.name, self.path)
        self.entries = entries
"#,
        r#"
# A lock built on each call guards nothing, but nobody waits for it either.
import threading

import yaml


class Network:
    def save_profile(self, config_path, profile):
        lock = threading.Lock()
        with lock:
            with open(config_path) as f:
                data = yaml.safe_load(f) or {}
            data["profile"] = profile
            with open(config_path, "w") as f:
                yaml.safe_dump(data, f)
            self.profile = profile
"#,
        r#"
# The connection is set up through a local and stored inside a `try` that
# closes it on failure: it remakes the state the lock guards.
import sqlite3
import threading


class VectorStore:
    def __init__(self, path):
        self.path = path
        self._conn = None
        self._lock = threading.RLock()

    def open(self):
        with self._lock:
            conn = sqlite3.connect(self.path, check_same_thread=False)
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                self._conn = conn
                self._ready = True
            except Exception:
                conn.close()
                self._conn = None
                raise
"#,
        r#"
# One locked session: connect, configure, hand out, close.
import sqlite3
import threading
from contextlib import contextmanager


class Store:
    def __init__(self, path):
        self.path = path
        self._lock = threading.RLock()

    @contextmanager
    def connect(self):
        with self._lock:
            conn = sqlite3.connect(self.path, timeout=10.0)
            try:
                conn.execute("PRAGMA journal_mode=WAL;")
                self.opened = True
                yield conn
            finally:
                conn.close()
"#,
        r#"
# The session opened with `with ... as conn` under the lock, then queried.
import sqlite3
import threading

_lock = threading.Lock()


def record_hit(path, key, counts):
    with _lock:
        with sqlite3.connect(path, timeout=2.0) as conn:
            conn.execute("UPDATE hits SET n = n + 1 WHERE k = ?", (key,))
        counts[key] = counts.get(key, 0) + 1
"#,
        r#"
import threading
import time

_ui = None
_extent = None
_ui_lock = threading.Lock()

def get_device():
    global _ui, _extent
    if _ui is None:
        with _ui_lock:
            if _ui is None:
                extent = read_layout()
                dev = open_device()
                time.sleep(0.2)
                _extent, _ui = extent, dev
    return _ui
"#,
        r#"
import logging
import threading
import time

logger = logging.getLogger(__name__)


class OcrService:
    def __init__(self):
        self._bootstrap_lock = threading.Lock()
        self._engine_bootstrapped = False

    def _bootstrap_engine_once(self):
        if self._engine_bootstrapped:
            return
        with self._bootstrap_lock:
            if self._engine_bootstrapped:
                return
            started = time.perf_counter()
            load_engine()
            self._engine_bootstrapped = True
            logger.info("engine ready in %.2f s", time.perf_counter() - started)


def load_engine():
    pass
"#,
        r#"
import json
import os
import threading

from filelock import FileLock


class Memory:
    def __init__(self, path):
        self.path = path
        self._lock = threading.Lock()
        self._data = {}

    def _mutate(self, fn):
        with self._lock, FileLock(self.path + ".lock"):
            if os.path.exists(self.path):
                with open(self.path) as f:
                    self._data = json.load(f)
            fn(self._data)
            tmp = f"{self.path}.{os.getpid()}.tmp"
            with open(tmp, "w") as f:
                json.dump(self._data, f)
            os.replace(tmp, self.path)

    def set(self, key, value):
        self._mutate(lambda d: d.__setitem__(key, value))
"#,
        r#"
import sys
import threading

_MODEL_LOCK = threading.Lock()
_model = None


def get_model(name, device, load):
    global _model
    key = (name, device)
    with _MODEL_LOCK:
        if _model is not None and _model[0] == key:
            return _model[1]
        _model = None
        model = load(name, device=device)
        _model = (key, model)
        print(f"loaded {name} on {device}", file=sys.stderr)
        return model
"#,
        r#"
import fcntl
import json
import os
import threading


def _acquire_flock(fd):
    fcntl.flock(fd, fcntl.LOCK_EX)


class AuditLog:
    def __init__(self, path):
        self.path = path
        self._lock = threading.Lock()
        self._count = 0

    def append(self, entry):
        with self._lock:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND)
            try:
                _acquire_flock(fd)
                os.write(fd, (json.dumps(entry) + "\n").encode())
                self._count += 1
            finally:
                os.close(fd)
"#,
        r#"
import threading

import ldap3


class Directory:
    def __init__(self, server):
        self._server = server
        self._lock = threading.Lock()
        self._conn = ldap3.Connection(server, auto_bind=True)

    def _with_connection(self, func):
        with self._lock:
            return func(self._conn)

    def search(self, base, query):
        return self._with_connection(lambda conn: conn.search(base, query))
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(CriticalSectionIo);

    #[test]
    fn print_is_described_as_output_not_as_logging() {
        let found = crate::testing::messages(
            &CriticalSectionIo,
            Language::Python,
            r#"
import logging
import threading

lock = threading.Lock()
log = logging.getLogger(__name__)

def report(stats):
    with lock:
        print(stats)
        log.info("reported")
        if log.isEnabledFor(logging.DEBUG):
            child = logging.getLogger("stats")
"#,
        );
        assert_eq!(found.len(), 2, "{found:#?}");
        assert!(
            found[0].contains("prints to standard output"),
            "{}",
            found[0]
        );
        assert!(found[1].contains("writes log output"), "{}", found[1]);
    }
}
