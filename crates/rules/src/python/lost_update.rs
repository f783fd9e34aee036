//! PY015: shared state read before an `await` and written back after it.

use crate::context::FileCx;
use crate::python::common::{module_vars, shared_state, updated_in_place};
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::walk::{Parent, exprs_under};
use unsnarl_model::*;

pub struct LostUpdate;

pub static META: RuleMeta = RuleMeta {
    id: "PY015",
    name: "update-across-await",
    category: Category::SharedStateRace,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "A coroutine reads module-level or `self` state, awaits, then writes back a value computed from the stale read (lost update).",
    docs: r#"
In an `async def`: `self.total += await fetch()`, `count = count + await
f()`, or a read of shared state into a local (`v = self.balance`)
followed, after an `await`, by a write of a value computed from that local
(`self.balance = v - amount`). Shared state is a module-level variable or
an attribute of `self`. Updates inside `async with <asyncio.Lock>` (or
after `await lock.acquire()`) are not reported, nor are those of a private
helper the file only ever calls while holding a lock (`async with
self._login_lock: await self._do_login()`, up to three calls up), nor is a
restore: the function saved the state, overrode it
itself, and puts the saved value back (`saved = self.flag; self.flag =
False; ...; finally: self.flag = saved`), or puts the saved value back
unchanged in a `finally` or `except` block after a callee or a setter
overrode it (`saved = self.command; try: await sub.reinvoke(self)
finally: self.command = saved`). Nor is `|=`/`-=` on a set or dict (or
`+=` on a list, a bytearray or a deque) that the file only ever sets to a fresh container
(`self.nets = set()`, `self._buffer = bytearray()`; writing an entry, `self.nets[k] = v`, keeps the
object): the operator changes that one object in place, so
other tasks' additions stay in it. Nor is an update whose every await
is of a coroutine of the file that never suspends (`self.cost += await
self.price(reply)`, where `price` awaits nothing and no override in the
file does): it runs to its end in one step, and no other task runs
between the read and the write. Nor is a copy that cannot reach the
write: read in a branch that returns, in another arm of the same
`if`/`elif` chain, or rebound on the way (`for entry in entries:` before
`self._cache[entry.id] = entry`). Nor is a write that merges the old copy
with the state read again after the await (`self.seen = max(saved,
self.seen)`, `self.error = preferred(first, self.error)`): other tasks'
updates are kept. Nor is a write to the calling task's
own entry (`task = asyncio.current_task()`, then `self._borrowers[task]
= held + count`): no other task uses that key. Nor is the same object
written back unchanged (`registry = self._registry; ...;
self._registry = registry`) when nothing else in the file but `__init__`
ever assigns it, nor a write reached from the read only past awaits
that sit in a branch which leaves the function (`if exhausted: await
warn(); return False`). Nor is a lazy fill whose fetch takes nothing from the call
(`self._creds = self._creds or await self._get_creds(self.settings.app_id,
SCOPE)`, no parameter or local among its arguments): a task that filled
the slot meanwhile fetched the same thing. A fill that makes a resource
(`self._con = self._con or await pool.acquire()`, `connect()`, `open_*`)
is still reported: the overwritten one leaks. Nor is state written only inside the object's
one task: every write of it is in `__init__`, in the class's `async def
run(self)` or in a private method the file calls only from there (its
public methods only queue work for that task).

## Why

Every `await` lets other tasks run. Two tasks that both read the value,
both suspend, and both write back compute from the same old value: one
update is silently lost. `x += await f()` has the same gap, because Python
reads `x` before evaluating the awaited operand.

## Example

```python
class Wallet:
    async def withdraw(self, amount):
        balance = self.balance
        await self.audit.record("withdraw", amount)
        self.balance = balance - amount
```

## Fix

Do the read-modify-write with no `await` in between (or hold an
`asyncio.Lock` across the whole transition).

```python
class Wallet:
    async def withdraw(self, amount):
        await self.audit.record("withdraw", amount)
        self.balance -= amount
```
"#,
    examples: &EXAMPLES,
};

impl Rule for LostUpdate {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        let globals = module_vars(cx.model);
        // Statements of each async function, in id order.
        let mut by_func: std::collections::HashMap<FuncId, Vec<StmtId>> =
            std::collections::HashMap::new();
        for s in 0..cx.model.stmts.len() as u32 {
            let s = StmtId(s);
            if !matches!(cx.tree.stmt_parent(s), Parent::Detached)
                && cx.func(cx.tree.stmt_func(s)).is_async
            {
                by_func.entry(cx.tree.stmt_func(s)).or_default().push(s);
            }
        }
        for s in 0..cx.model.stmts.len() as u32 {
            let s = StmtId(s);
            if matches!(cx.tree.stmt_parent(s), Parent::Detached) {
                continue;
            }
            let f = cx.tree.stmt_func(s);
            if !cx.func(f).is_async {
                continue;
            }
            let StmtKind::Assign {
                targets,
                value: Some(v),
                op,
            } = &cx.stmt(s).kind
            else {
                continue;
            };
            let [t] = targets.as_slice() else { continue };
            let Some(key) = shared_state(cx, &globals, *t) else {
                continue;
            };
            if crate::python::common::under_lock(cx, s)
                || crate::python::common::callers_hold_lock(cx, f)
                || stream_read_side(cx, f)
            {
                continue;
            }
            // Every await in the value is of a coroutine of the file that
            // never suspends: nothing runs between the read and the write.
            let value_awaits = first_await(cx, *v).filter(|_| {
                !exprs_under(cx.model, *v)
                    .into_iter()
                    .all(|x| match cx.expr(x).kind {
                        ExprKind::Await(inner) => {
                            crate::python::common::runs_in_one_step(cx, inner)
                        }
                        _ => true,
                    })
            });
            let msg = if let (AssignOp::Augmented(bin), Some(_)) = (op, value_awaits) {
                if updated_in_place(cx, &globals, &key, *bin) {
                    continue;
                }
                Some(format!(
                    "`{key}` is read, then the operand is awaited, then the sum is written: tasks that run during the await update `{key}` and this write erases their updates"
                ))
            } else if let Some(aw) = value_awaits
                && reads_before(cx, &globals, *v, &key, aw)
            {
                Some(format!(
                    "`{key}` is read, then an await suspends this task, then `{key}` is written from the old read: updates made by other tasks meanwhile are lost"
                ))
            } else {
                let stmts = by_func.get(&f).map_or(&[][..], Vec::as_slice);
                stale_local(cx, &globals, f, stmts, s, *v, &key).map(|(local, _)| {
                    format!(
                        "`{key}` is copied into `{local}`, this task awaits, then `{key}` is written from `{local}`: any update another task made during the await is lost"
                    )
                })
            };
            // (Asked only of a write about to be reported: it scans the
            // function's assignments.)
            let Some(msg) = msg.filter(|_| {
                !keyed_by_current_task(cx, f, *t)
                    && !fills_if_empty(cx, f, *v, &key)
                    && !written_only_by_the_run_task(cx, &globals, &key, f)
            }) else {
                continue;
            };
            out.push(cx.finding(
                &META,
                cx.stmt(s).span,
                msg,
                format!(
                    "do the read-modify-write of `{key}` with no await in between (await first, then update in one statement), or hold an `asyncio.Lock` across the whole update"
                ),
            ));
        }
    }
}

/// `self._credentials = self._credentials or await self._get_credentials(
/// self.settings.app_id, SCOPE)`: a lazy fill whose fetch takes nothing
/// from this call (no parameter or local of the function among its
/// arguments). A task that filled the slot meanwhile fetched the same
/// thing, so writing this task's copy over it loses nothing.
fn fills_if_empty(cx: &FileCx, f: FuncId, v: ExprId, key: &str) -> bool {
    let ExprKind::Logical {
        op: LogicalOp::Or,
        left,
        right,
    } = &cx.expr(cx.model.strip(v)).kind
    else {
        return false;
    };
    let ExprKind::Await(inner) = cx.expr(cx.model.strip(*right)).kind else {
        return false;
    };
    let Some(call) = cx.call(cx.model.strip(inner)) else {
        return false;
    };
    let of_the_call = |x: ExprId| {
        matches!(&cx.expr(x).kind, ExprKind::Name { .. })
            && cx.model.name_of(x).is_some_and(|n| {
                n != "self"
                    && (cx.func(f).params.iter().any(|p| p.name == n)
                        || crate::python::common::values_bound_to(cx, f, n)
                            .next()
                            .is_some())
            })
    };
    // A fetch, not a resource each call makes anew (`pool.acquire()`,
    // `connect()`): two racing fills would each hold one, and the
    // overwritten one leaks.
    let name = call.name.trim_start_matches('_').to_ascii_lowercase();
    let makes_a_resource = [
        "acquire", "connect", "open", "create", "start", "spawn", "new",
    ]
    .iter()
    .any(|w| name.starts_with(w))
        || name.ends_with("session")
        || name.ends_with("connection");
    cx.model.dotted(*left).as_deref() == Some(key)
        && !makes_a_resource
        && call.args.iter().all(|a| {
            exprs_under(cx.model, a.value)
                .into_iter()
                .all(|x| !of_the_call(x))
        })
}

/// The entry written is the current task's own (`task =
/// asyncio.current_task()`, then `self._borrowers[task] = n + count`):
/// no other task reads or writes that key, so none of its updates can be
/// lost in between.
fn keyed_by_current_task(cx: &FileCx, f: FuncId, target: ExprId) -> bool {
    let ExprKind::Index { index, .. } = cx.expr(cx.model.strip(target)).kind else {
        return false;
    };
    let Some(name) = cx.model.name_of(cx.model.strip(index)) else {
        return false;
    };
    // `asyncio.current_task()`, `threading.get_ident()`, a library's
    // `current_async_task_ident()`.
    let identifies_caller = |c: &Call| {
        let n = c.name.as_str();
        matches!(
            n,
            "current_task" | "get_current_task" | "get_ident" | "current_thread"
        ) || (n.starts_with("current_") && (n.contains("task") || n.contains("thread")))
    };
    let mut bound = crate::python::common::values_bound_to(cx, f, name).peekable();
    bound.peek().is_some()
        && bound.all(|v| {
            v.and_then(|v| cx.call(cx.model.strip(v)))
                .is_some_and(identifies_caller)
        })
}

/// A read-side method (`read`, `receive`, `__anext__`, ...) of an async
/// stream (a class with `__anext__`): a stream has one reader at a time
/// (asyncio's own streams refuse a second concurrent read), so its buffer
/// is not state that tasks race on.
fn stream_read_side(cx: &FileCx, f: FuncId) -> bool {
    let func = cx.func(f);
    let Some(class) = func.class.as_deref() else {
        return false;
    };
    let name = func.name.trim_start_matches('_');
    let reads = name == "anext__"
        || ["read", "recv", "receive", "fill", "next"]
            .iter()
            .any(|p| name.starts_with(p));
    reads
        && cx
            .model
            .functions
            .iter()
            .any(|g| g.class.as_deref() == Some(class) && g.name.as_str() == "__anext__")
}

/// The span of the first await inside an expression.
fn first_await(cx: &FileCx, e: ExprId) -> Option<Span> {
    exprs_under(cx.model, e)
        .into_iter()
        .filter(|&x| matches!(cx.expr(x).kind, ExprKind::Await(_)))
        .map(|x| cx.expr(x).span)
        .min_by_key(|s| s.start)
}

/// True when `e` reads `key` before the await at `aw`.
fn reads_before(cx: &FileCx, globals: &HashSet<String>, e: ExprId, key: &str, aw: Span) -> bool {
    exprs_under(cx.model, e).into_iter().any(|x| {
        cx.expr(x).span.end <= aw.start
            && matches!(
                cx.expr(x).kind,
                ExprKind::Name { .. } | ExprKind::Attr { .. }
            )
            && shared_state(cx, globals, x).as_deref() == Some(key)
    })
}

/// `v = <read of key>` earlier in the function, an await between it and
/// `s`, and `v` used in the written value.
fn stale_local(
    cx: &FileCx,
    globals: &HashSet<String>,
    f: FuncId,
    stmts: &[StmtId],
    s: StmtId,
    value: ExprId,
    key: &str,
) -> Option<(String, StmtId)> {
    let used: HashSet<&str> = exprs_under(cx.model, value)
        .into_iter()
        .filter_map(|x| cx.model.name_of(x))
        .collect();
    if used.is_empty() || merges_a_fresh_read(cx, globals, value, key) {
        return None;
    }
    let write_at = cx.stmt(s).span.start;
    let body = &cx.func(f).body;
    let awaits = crate::util::awaits_in_block(cx.model, body);
    for &r in stmts {
        if cx.stmt(r).span.end > write_at {
            continue;
        }
        let StmtKind::Assign {
            targets,
            value: Some(rv),
            op: AssignOp::Plain | AssignOp::Declare { .. },
        } = &cx.stmt(r).kind
        else {
            continue;
        };
        let [t] = targets.as_slice() else { continue };
        let Some(local) = cx.model.name_of(*t) else {
            continue;
        };
        if !used.contains(local) || cx.model.resolved(*t).is_some() {
            continue;
        }
        // The local is a snapshot of the state (not a call result).
        let rv = cx.model.strip(*rv);
        let is_snapshot = matches!(
            cx.expr(rv).kind,
            ExprKind::Name { .. } | ExprKind::Attr { .. } | ExprKind::Index { .. }
        ) && shared_state(cx, globals, rv).as_deref() == Some(key);
        if !is_snapshot {
            continue;
        }
        let read_end = cx.stmt(r).span.end;
        // `if cached: entry = self._cache[k]; return [entry]`: the copy
        // never reaches a write outside that branch.
        if read_in_leaving_branch(cx, f, r, s) || in_exclusive_branches(cx, f, r, s) {
            continue;
        }
        // `saved = self.flag; self.flag = False; ...; self.flag = saved`:
        // the function overrode the state itself and puts the saved value
        // back, a restore rather than an update.
        let overridden = stmts.iter().any(|&o| {
            let sp = cx.stmt(o).span;
            o != s
                && sp.start >= read_end
                && sp.end <= write_at
                && matches!(&cx.stmt(o).kind, StmtKind::Assign { targets, .. }
                    if targets.iter().any(|&t| shared_state(cx, globals, t).as_deref() == Some(key)))
        });
        // `finally: self.command = saved`: the saved value put back as it
        // was, on the way out, whoever overrode it in between (a setter, an
        // awaited callee).
        let restored_on_exit =
            cx.model.name_of(cx.model.strip(value)) == Some(local) && in_cleanup(cx, s);
        // `registry = self._registry; ...; self._registry = registry`: the
        // same object written back, where nothing else in the file but
        // `__init__` ever replaces it: no other task's write to lose.
        // (The local itself never changes after the read, not even after
        // the write in a loop: `n += 1` makes it a new value.)
        let written_back_unreplaced = cx.model.name_of(cx.model.strip(value)) == Some(local)
            && !reassigned_between(cx, stmts, local, read_end, u32::MAX)
            && only_set_up_elsewhere(cx, globals, key, s);
        if awaits
            .iter()
            .any(|a| a.start >= read_end && a.end <= write_at && !leaves_before(cx, f, *a, s))
            && !written_back_unreplaced
            && !overridden
            && !restored_on_exit
            && !reassigned_between(cx, stmts, local, read_end, write_at)
            && !crate::python::common::under_lock(cx, r)
        {
            return Some((local.to_string(), r));
        }
    }
    None
}

/// The object's state is written only inside its one task: the class has
/// an `async def run(self)` (started once as the object's task, its
/// public methods only queue work for it), and every write of `key` in
/// the file is in `__init__`, in `run`, or in a private method the file
/// calls only from those (through others, a few calls down). No other
/// task runs that code, so none can update the state during the await.
fn written_only_by_the_run_task(
    cx: &FileCx,
    globals: &HashSet<String>,
    key: &str,
    f: FuncId,
) -> bool {
    let Some(class) = cx.func(f).class.as_ref() else {
        return false;
    };
    let Some(run) = cx.model.function_ids().find(|&g| {
        let func = cx.func(g);
        func.is_async && func.name == "run" && func.class.as_ref() == Some(class)
    }) else {
        return false;
    };
    fn reached_from(cx: &FileCx, g: FuncId, run: FuncId, depth: u32) -> bool {
        g == run
            || (depth > 0
                && crate::python::common::private_helper_called_only(cx, g, |call| {
                    reached_from(cx, cx.func_of(call), run, depth - 1)
                }))
    }
    reached_from(cx, f, run, 3)
        && every_write_of(cx, globals, key, |o| {
            let g = cx.tree.stmt_func(o);
            cx.func(g).name == "__init__" || reached_from(cx, g, run, 3)
        })
}

/// Every assignment of the state `key` in the file passes `ok`.
fn every_write_of(
    cx: &FileCx,
    globals: &HashSet<String>,
    key: &str,
    ok: impl Fn(StmtId) -> bool,
) -> bool {
    (0..cx.model.stmts.len() as u32).map(StmtId).all(|o| {
        !matches!(&cx.stmt(o).kind, StmtKind::Assign { targets, .. }
            if targets.iter().any(|&t| shared_state(cx, globals, t).as_deref() == Some(key)))
            || ok(o)
    })
}

/// The await at `a` sits in a branch that ends by leaving the function
/// (`if exhausted: await warn(); return False`) and does not hold the
/// write `s`: no path from the read to the write passes it.
fn leaves_before(cx: &FileCx, f: FuncId, a: Span, s: StmtId) -> bool {
    in_leaving_branch(cx, f, s, |b| {
        crate::util::block_span_contains(cx.model, b, a)
    })
}

/// The read `r` sits in a branch of an `if` that ends by leaving the
/// function (or loop round), and the write `s` is outside that branch.
fn read_in_leaving_branch(cx: &FileCx, f: FuncId, r: StmtId, s: StmtId) -> bool {
    in_leaving_branch(cx, f, s, |b| crate::util::block_contains(cx, b, r))
}

/// A branch of an `if` of `f` that holds what `holds` asks about, ends by
/// leaving (the function or the loop round), and does not hold `s`.
fn in_leaving_branch(cx: &FileCx, f: FuncId, s: StmtId, holds: impl Fn(&Block) -> bool) -> bool {
    cx.body_stmts(f).iter().any(|&st| {
        let StmtKind::If { then, orelse, .. } = &cx.stmt(st).kind else {
            return false;
        };
        [then, orelse].into_iter().any(|b| {
            holds(b)
                && crate::util::ends_in_exit(cx.model, b)
                && !crate::util::block_contains(cx, b, s)
        })
    })
}

/// The read `r` and the write `s` sit in different branches of one `if`
/// (two arms of an `if`/`elif` chain): no run does both.
fn in_exclusive_branches(cx: &FileCx, f: FuncId, r: StmtId, s: StmtId) -> bool {
    cx.body_stmts(f).iter().any(|&st| {
        let StmtKind::If { then, orelse, .. } = &cx.stmt(st).kind else {
            return false;
        };
        let (rt, ro) = (
            crate::util::block_contains(cx, then, r),
            crate::util::block_contains(cx, orelse, r),
        );
        let (st_, so) = (
            crate::util::block_contains(cx, then, s),
            crate::util::block_contains(cx, orelse, s),
        );
        (rt && so && !st_) || (ro && st_ && !so)
    })
}

/// Apart from `s`, only `__init__` assigns the state `key` anywhere in
/// the file.
fn only_set_up_elsewhere(cx: &FileCx, globals: &HashSet<String>, key: &str, s: StmtId) -> bool {
    every_write_of(cx, globals, key, |o| {
        o == s || cx.func(cx.tree.stmt_func(o)).name == "__init__"
    })
}

/// The written value combines the old copy with the state read again
/// now (`self.seen = max(saved, self.seen)`, `min(..)`, or a helper that
/// picks between them, `self.error = preferred(first, self.error)`): what
/// other tasks wrote meanwhile is merged in, not overwritten.
fn merges_a_fresh_read(cx: &FileCx, globals: &HashSet<String>, value: ExprId, key: &str) -> bool {
    cx.call(cx.model.strip(value)).is_some_and(|c| {
        c.receiver.is_none()
            && c.args
                .iter()
                .any(|a| shared_state(cx, globals, a.value).as_deref() == Some(key))
    })
}

/// `s` sits in a `finally` block or an `except` handler of its function.
fn in_cleanup(cx: &FileCx, s: StmtId) -> bool {
    let f = cx.tree.stmt_func(s);
    cx.tree
        .stmt_ancestors(s)
        .take_while(|&a| cx.tree.stmt_func(a) == f)
        .any(|a| match &cx.stmt(a).kind {
            StmtKind::Try {
                handlers, finally, ..
            } => {
                let within = |b: &Block| crate::util::block_contains(cx, b, s);
                finally.as_ref().is_some_and(within) || handlers.iter().any(|h| within(&h.body))
            }
            _ => false,
        })
}

/// True when `local` is assigned again between two offsets, alone or as
/// one of several (`url, generation = await discovery.resolve()`).
fn reassigned_between(cx: &FileCx, stmts: &[StmtId], local: &str, from: u32, to: u32) -> bool {
    let binds = |t: ExprId| match &cx.expr(t).kind {
        ExprKind::Collection { elems, .. } => elems
            .iter()
            .any(|&e| cx.model.name_of(cx.model.strip(e)) == Some(local)),
        _ => cx.model.name_of(t) == Some(local),
    };
    stmts.iter().any(|&r| {
        let sp = cx.stmt(r).span;
        match &cx.stmt(r).kind {
            StmtKind::Assign { targets, .. } => {
                sp.start >= from && sp.end <= to && targets.iter().any(|&t| binds(t))
            }
            // `for entry in entries:` rebinds the local, also around the
            // write itself.
            StmtKind::For {
                target: Some(t), ..
            } => sp.start >= from && sp.start <= to && binds(*t),
            _ => false,
        }
    })
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
class Wallet:
    async def withdraw(self, amount):
        balance = self.balance
        await self.audit.record(amount)
        self.balance = balance - amount  # expect

    async def deposit(self, source):
        self.balance += await source.collect()  # expect
"#,
        r#"
stats = {"total": 0}
hits = 0

async def record(order):
    current = stats["total"]
    price = await fetch_price(order)
    stats["total"] = current + price  # expect

async def count(req):
    global hits
    hits = hits + await weight(req)  # expect
"#,
        r#"
class Feed:
    def __init__(self, source):
        self.source = source
        self.offset = 0

    async def advance(self, n):
        start = self.offset
        await self.source.skip(n)
        self.offset = start + n  # expect
"#,
        r#"
class Context:
    def __init__(self, command):
        self.command = command
        self.depth = 0

    async def reinvoke(self, sub):
        depth = self.depth
        try:
            await sub.invoke(self)
        finally:
            self.depth = depth + 1  # expect
"#,
        r#"
# Another task may put a new set there meanwhile: this write drops it.
V4 = "https://www.example.com/ips-v4"


class Remotes:
    def __init__(self):
        self._nets = set()

    async def setup(self, client):
        async with client.get(V4) as response:
            self._nets |= parse(await response.text())  # expect

    async def refresh(self, client):
        self._nets = parse(await fetch(client))
"#,
        r#"
import asyncio


class Api:
    def __init__(self, session):
        self._session = session
        self._login_lock = asyncio.Lock()
        self._attempts = 0

    async def _do_login(self):
        attempts = self._attempts
        await self._session.post("https://api.example/login")
        self._attempts = attempts + 1  # expect

    async def login(self):
        async with self._login_lock:
            await self._do_login()

    async def relogin(self):
        await self._do_login()
"#,
        r#"
import asyncio


class Limiter:
    def __init__(self, sem):
        self._sem = sem
        self._borrowers = {}

    async def acquire(self, owner, count=1):
        try:
            held = self._borrowers[owner]
        except KeyError:
            pass
        else:
            await asyncio.sleep(0)
            self._borrowers[owner] = held + count  # expect
            return True
        await self._sem.acquire()
        self._borrowers[owner] = count
        return True
"#,
        r#"
class Callback:
    def __init__(self, port):
        self.port = port

    async def bind(self, site):
        port = self.port
        for _ in range(5):
            try:
                await site.start(port)
                self.port = port  # expect
                break
            except OSError:
                port += 1
"#,
        r#"
class Pool:
    async def session_for(self, url):
        # Filled from this call's own argument: another caller's session
        # for another URL is overwritten.
        self._session = self._session or await open_session(url)  # expect
        return self._session
"#,
        r#"
class Engine:
    async def _acquire(self):
        # Two racing fills each take a pool connection; one leaks.
        self._global_con = self._global_con or await self._pool.acquire()  # expect
        return self._global_con
"#,
    ],
    pass: &[
        r#"
class Agent:
    def __init__(self, llm):
        self.llm = llm
        self.cost = 0.0

    async def step(self, prompt):
        reply = await self.llm.complete(prompt)
        # The awaited helper never suspends: nothing runs between the read
        # of `self.cost` and the write.
        self.cost += await self.price(reply)
        return reply

    async def price(self, reply):
        return reply.usage.tokens * 0.000002
"#,
        r#"
# The value written back is the fresh one the await returned, not the copy.
class Client:
    async def request(self, endpoint):
        url = self.gateway_url
        if self._discovery is not None:
            url, generation = await self._discovery.resolve()
            self.gateway_url = url
        return await self._session.get(f"{url}/{endpoint}")
"#,
        r#"
import asyncio


class Api:
    def __init__(self, session):
        self._session = session
        self._login_lock = asyncio.Lock()
        self._attempts = 0

    async def _do_login(self):
        attempts = self._attempts
        await self._session.post("https://api.example/login")
        self._attempts = attempts + 1

    async def login(self):
        async with self._login_lock:
            await self._do_login()

    async def request(self, path):
        resp = await self._session.get(path)
        if resp.status == 401:
            async with self._login_lock:
                await self._do_login()
        return resp
"#,
        r#"
class LineStream:
    def __init__(self, sock):
        self._sock = sock
        self._buf = b""

    async def readline(self):
        while b"\n" not in self._buf:
            self._buf += await self._sock.recv(4096)
        line, _, self._buf = self._buf.partition(b"\n")
        return line

    def __aiter__(self):
        return self

    async def __anext__(self):
        line = await self.readline()
        if not line:
            raise StopAsyncIteration
        return line
"#,
        r#"
import asyncio

class Wallet:
    def __init__(self):
        self._lock = asyncio.Lock()

    async def withdraw(self, amount):
        await self.audit.record(amount)
        self.balance -= amount

    async def locked(self, amount):
        async with self._lock:
            balance = self.balance
            await self.audit.record(amount)
            self.balance = balance - amount

    async def reset(self):
        old = self.balance
        await self.audit.record(old)
        self.balance = 0
"#,
        r#"
async def local_only(items):
    total = 0
    for it in items:
        total += await price(it)
    return total

stats = {"total": 0}

async def handle(order):
    amount = await fetch_amount(order)
    stats["total"] += amount
"#,
        r#"
class Feed:
    def __init__(self, source):
        self.source = source
        self.auto_commit = True

    # Overrides the flag while it commits by hand, then puts it back.
    async def batches(self, size):
        saved_auto_commit = self.auto_commit
        self.auto_commit = False
        batch = []
        try:
            async for item in self.source:
                batch.append(item)
                if len(batch) >= size:
                    yield list(batch)
                    await self.source.commit(batch[-1])
                    batch.clear()
        finally:
            self.auto_commit = saved_auto_commit
"#,
        r#"
class Context:
    def __init__(self, command):
        self.command = command

    async def reinvoke(self, sub):
        saved = self.command
        try:
            await sub.invoke(self)
        finally:
            self.command = saved
"#,
        r#"
# The one set is only ever changed in place: nothing is lost.
V4 = "https://www.example.com/ips-v4"


class Remotes:
    def __init__(self):
        self._nets = set()

    async def setup(self, client):
        async with client.get(V4) as response:
            self._nets |= parse(await response.text())
"#,
        r#"
import asyncio


class Limiter:
    def __init__(self, sem):
        self._sem = sem
        self._borrowers = {}

    async def acquire(self, count=1):
        task = asyncio.current_task()
        try:
            held = self._borrowers[task]
        except KeyError:
            pass
        else:
            await asyncio.sleep(0)
            # Only this task ever touches its own entry.
            self._borrowers[task] = held + count
            return True
        await self._sem.acquire()
        self._borrowers[task] = count
        return True
"#,
        r#"
# The old copy is merged with the value read again after the await.
class Session:
    async def read_items(self):
        overhead = self._read_overhead
        items = await self.get_items()
        self._read_overhead = max(overhead, self._read_overhead)
        return items
"#,
        r#"
class HostMap:
    def __init__(self):
        self._hosts: dict[int, str] = {}

    async def refresh(self, client):
        # One dict, changed in place; entry writes keep it too.
        self._hosts |= {h.id: h.name for h in await client.list_hosts()}

    def add(self, host):
        self._hosts[host.id] = host.name
"#,
        r#"
class SkillTools:
    def __init__(self, registry):
        self._tool_registry = registry

    async def refresh_skills(self, loader):
        registry = self._tool_registry
        skills = await loader.load_all()
        registry.register_many(skills)
        self._tool_registry = registry
"#,
        r#"
class Recovery:
    MAX_RETRIES = 3

    async def retry_truncated(self, warn):
        retries = self._retries
        if retries >= self.MAX_RETRIES:
            await warn("retries exhausted")
            return False
        self._retries = retries + 1
        return True
"#,
        r#"
import asyncio


class StreamConsumer:
    def __init__(self, adapter):
        self.adapter = adapter
        self._queue = asyncio.Queue()
        self._last_sent_text = ""

    def on_delta(self, text):
        self._queue.put_nowait(text)

    async def run(self):
        while True:
            text = await self._queue.get()
            if text is None:
                return
            await self._send_chunk(text)

    async def _send_chunk(self, text):
        previous = self._last_sent_text
        result = await self.adapter.send(text)
        if result.success:
            self._last_sent_text = previous + text
"#,
        r#"
import asyncio


class FrameReader:
    def __init__(self, reader: asyncio.StreamReader):
        self._reader = reader
        self._buffer = bytearray()

    async def read_exactly(self, n):
        while len(self._buffer) < n:
            self._buffer += await self._reader.read(4096)
        data = self._buffer[:n]
        del self._buffer[:n]
        return bytes(data)
"#,
        r#"
class Memory:
    def __init__(self, store):
        self._store = store
        self._cache = {}

    async def episodes(self, entry_id=None):
        if entry_id and entry_id in self._cache:
            entry = self._cache[entry_id]
            entry.touch()
            return [entry]
        entries = await self._query()
        for entry in entries:
            self._cache[entry.entry_id] = entry
        return entries

    async def _query(self):
        return await self._store.fetch_all()

    async def store(self, entry):
        self._cache[entry.entry_id] = entry
        await self._store.save(entry)
"#,
        r#"
import random


class Activity:
    def __init__(self, handler):
        self.knowledge = {}
        self.handler = handler

    async def run(self, cmd, arg):
        if cmd == "text":
            if arg in self.knowledge:
                arg = self.knowledge[arg]
            await self.handler.say(arg)
        elif cmd == "random":
            self.knowledge[arg[0]] = random.choice(arg[1])
            await self.handler.done(cmd)

    async def store(self, key, value):
        self.knowledge[key] = value
        await self.handler.done("store")
"#,
        r#"
import asyncio


def preferred(a, b):
    return a if a is not None and (b is None or a.rank > b.rank) else b


class Client:
    def __init__(self):
        self.last_error = None

    async def connect(self, url):
        if await self._try("http", url):
            return True
        first = self.last_error
        if await self._try("sse", url):
            return True
        # Merged with the error read now: nothing recorded meanwhile is lost.
        self.last_error = preferred(first, self.last_error)
        return False

    async def _try(self, kind, url):
        await asyncio.sleep(0)
        self.last_error = None
        return False
"#,
        r#"
SCOPE = "https://api.botframework.com/.default"


class Adapter:
    def __init__(self, settings):
        self.settings = settings
        self._credentials = None

    async def process(self, request):
        self._credentials = self._credentials or await self._get_app_credentials(
            self.settings.app_id, SCOPE
        )
        return await self._send(request, self._credentials)
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(LostUpdate);
}
