//! PY011: a coroutine created and never awaited.

use crate::context::FileCx;
use crate::index::Awaitable;
use crate::python::common::{func_and_nested, is_store, name_refs};
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct MissingAwait;

pub static META: RuleMeta = RuleMeta {
    id: "PY011",
    name: "coroutine-not-awaited",
    category: Category::MissingAwait,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "A call to an `async def` of the project or to a coroutine API is not awaited: dropped, used as a value, or tested for truth.",
    docs: r#"
A call that returns a coroutine (an `async def` of the scanned project,
found across modules and through `self.method()`, or a coroutine API such
as `asyncio.sleep`, `asyncio.wait_for`, `Queue.put`, aiohttp/httpx client
methods; not `gather`, `shield` or `run_in_executor`, whose futures are
already scheduled) whose result is not awaited, returned, or passed on (to a task,
`gather`, `asyncio.run`...; collected by a list or dict comprehension,
`{k: fetch(k) for k in ks}` before `gather(*d.values())`, counts as
passed on): it is a statement on its own, it is stored in a
variable that is only used as a value, or it is tested in an
`if`/`while`/`assert`/`and`/`or`/`not` (the last operand of `and`/`or` is
the value of the whole, `conn or connect(path)`, and is judged as that;
a local that holds a coroutine or `None`, `task = load() if wanted else
None`, is tested for which of the two it is, and `task or _empty()`
hands the coroutine on). A line that already tells the
type checker the coroutine is dropped on purpose (`# type:
ignore[unused-coroutine]`, `# pyright: ignore[reportUnusedCoroutine]`,
typical of code generated for a sync twin) is left alone, and so is a
call of a method that textual's `@work` decorates (calling it starts a
worker that runs the coroutine), or of an `async def` that asyncclick's
`@click.command`/`@click.group` turns into a command object (calling it
runs the coroutine to the end), or that a Twisted-style
`async_to_deferred` wraps (calling it starts the coroutine with
`ensureDeferred` and returns the Deferred), or a
call in a branch that cannot run (the `else` of `if True:`, or of `if not
_IS_SYNC:` where the module sets `_IS_SYNC = False` once), or in the
branch that runs when the callee is not a coroutine function (`await
self.worker(d) if asyncio.iscoroutinefunction(self.worker) else
self.worker(d)`: an override may be a plain function), or when the
receiver is not of the class that makes it one (`ev.wait()` in the
`else` of `if isinstance(ev, asyncio.Event):`), or when a method of the
class stores another callable under the method's name on the instance
(`(self.read_audio, self.save_audio) = utils`), which hides the `async
def` for `self.save_audio(..)`.

## Why

Calling a coroutine function does not run it: it builds a coroutine object.
Dropped, the work silently never happens (Python only warns "coroutine ...
was never awaited" when it is collected). Used as a value, it fails later
with an `AttributeError` far from the cause. Tested for truth, it is always
true: `if await_less_check(user):` lets everyone through, which is why that
shape is reported as critical.

## Example

```python
async def is_admin(user):
    return await lookup_role(user) == "admin"

async def delete_account(user, target):
    if is_admin(user):
        await remove(target)
```

## Fix

Await the call (or hand the coroutine to a task / `gather` on purpose).

```python
async def is_admin(user):
    return await lookup_role(user) == "admin"

async def delete_account(user, target):
    if await is_admin(user):
        await remove(target)
```
"#,
    examples: &EXAMPLES,
};

/// What happens to a value.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Use {
    /// Awaited, passed on, returned, stored: not this rule's business.
    Fine,
    /// Thrown away.
    Dropped,
    /// Tested for truth: always true.
    Truth,
    /// Used as if it were the result.
    Value,
}

/// Coroutine-object methods: using them is using the coroutine on purpose.
const CORO_METHODS: &[&str] = &[
    "send",
    "throw",
    "close",
    "cr_frame",
    "cr_code",
    "cr_running",
    "cr_await",
    "__await__",
    "__anext__",
    "aclose",
    "asend",
    "athrow",
    "__aenter__",
    "__aexit__",
    "__aiter__",
];

impl Rule for MissingAwait {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for (i, e) in cx.model.exprs.iter().enumerate() {
            let ExprKind::Call(c) = &e.kind else { continue };
            let id = ExprId(i as u32);
            // A call whose value is used (an argument, awaited, returned)
            // is fine whatever it returns: no need to ask what it is, which
            // for a project function means asking the project index.
            if matches!(cx.tree.expr_parent(id), Parent::Detached)
                || matches!(direct_use(cx, id), Ok(Use::Fine))
            {
                continue;
            }
            let Some(what) = coroutine_call(cx, c) else {
                continue;
            };
            let (usage, via) = match use_of(cx, id) {
                (Use::Fine, _) => continue,
                // Tests create coroutines on purpose (to test warnings,
                // `asyncio.run`...); only an always-true check is a bug there.
                (u, _) if u != Use::Truth && cx.func(cx.func_of(id)).is_test => continue,
                u => u,
            };
            if checker_silenced(cx.text, e.span)
                || crate::python::common::in_dead_branch(cx, e.span)
                || only_when_not_a_coroutine_function(cx, id, c)
            {
                continue;
            }
            let callee = cx.callee_display(c);
            let via = via.map(|n| format!(" (kept in `{n}`)")).unwrap_or_default();
            // In a sync function `await` is not available: say what is.
            let sync_fix = (!cx.func(cx.func_of(id)).is_async).then(|| {
                if c.target.as_deref() == Some("asyncio.sleep") {
                    "this function is not async: pause with `time.sleep(..)` here, or make it `async def` (and its callers) and `await asyncio.sleep(..)`".to_string()
                } else {
                    format!(
                        "this function is not async: make it `async def` (and its callers) and `await {}`, or run the coroutine from a sync entry point with `asyncio.run(..)`",
                        cx.snippet(e.span)
                    )
                }
            });
            let mut f = match usage {
                Use::Dropped => cx.finding(
                    &META,
                    e.span,
                    format!(
                        "`{callee}` {what}, but the call is not awaited{via}: it only builds a coroutine object, so the work never runs and its errors are never seen"
                    ),
                    sync_fix
                        .clone()
                        .unwrap_or_else(|| format!("`await {}`", cx.snippet(e.span))),
                ),
                Use::Truth => {
                    let mut f = cx.finding(
                        &META,
                        e.span,
                        format!(
                            "`{callee}` {what}, but its result is tested for truth without `await`{via}: a coroutine object is always truthy, so the condition always holds and the check never runs"
                        ),
                        format!("test `await {}`", cx.snippet(e.span)),
                    );
                    f.severity = Severity::Critical;
                    f
                }
                _ => cx.finding(
                    &META,
                    e.span,
                    format!(
                        "`{callee}` {what}, but its result is used as a value without `await`{via}: the code gets a coroutine object instead of the result, and the work never runs"
                    ),
                    sync_fix.unwrap_or_else(|| format!("`await {}`", cx.snippet(e.span))),
                ),
            };
            f.related.clear();
            out.push(f);
        }
    }
}

/// The line the call ends on tells the type checker that the coroutine is
/// dropped on purpose (`# type: ignore[unused-coroutine]` for mypy,
/// `# pyright: ignore[reportUnusedCoroutine]`): code shared with a sync
/// twin (unasync) where the call is only reached when it is not a
/// coroutine. The author has already answered this rule's question.
fn checker_silenced(text: &str, span: Span) -> bool {
    let Some(rest) = text.get(span.end as usize..) else {
        return false;
    };
    let line = rest.split('\n').next().unwrap_or_default();
    line.find('#').is_some_and(|i| {
        let comment = &line[i..];
        comment.contains("unused-coroutine") || comment.contains("reportUnusedCoroutine")
    })
}

/// The call runs only where the code has checked that its callee is not a
/// coroutine function (`await self.worker(d) if
/// asyncio.iscoroutinefunction(self.worker) else self.worker(d)`, or under
/// `if not inspect.iscoroutinefunction(cb):`): an override that may be
/// either kind, called the way it was written. Also the `else` of
/// `isinstance(ev, asyncio.Event)` for `ev.wait()`: an event of another
/// kind (`multiprocessing`'s) whose `wait` blocks instead.
fn only_when_not_a_coroutine_function(cx: &FileCx, id: ExprId, c: &Call) -> bool {
    let Some(callee) = cx.model.dotted(c.func) else {
        return false;
    };
    let receiver = c.receiver.and_then(|r| cx.model.dotted(r));
    // `Some(true)`: the condition holds when `callee` is a coroutine
    // function; `Some(false)`: when it is not.
    let checks = |cond: ExprId| -> Option<bool> {
        let (cond, negated) = match &cx.expr(cond).kind {
            ExprKind::Unary {
                op: UnOp::Not,
                operand,
            } => (*operand, true),
            _ => (cond, false),
        };
        let k = cx.call(cx.model.strip(cond))?;
        // `isinstance(self._can_run, asyncio.Event)`: the receiver is of
        // the class whose method returns the coroutine only where it holds.
        let of_the_class = k.target.as_deref() == Some("builtins.isinstance")
            && receiver.is_some()
            && k.positional(0).and_then(|a| cx.model.dotted(a)) == receiver
            && k.positional(1)
                .and_then(|t| cx.model.resolved(t))
                .zip(c.target.as_deref())
                .is_some_and(|(class, target)| {
                    target
                        .strip_prefix(class)
                        .is_some_and(|rest| rest.starts_with('.'))
                });
        ((matches!(
            k.target.as_deref(),
            Some("asyncio.iscoroutinefunction" | "inspect.iscoroutinefunction")
        ) && k.positional(0).and_then(|a| cx.model.dotted(a)).as_deref()
            == Some(callee.as_str()))
            || of_the_class)
            .then_some(!negated)
    };
    let in_false_arm = cx.tree.expr_ancestors(id).any(|a| match &cx.expr(a).kind {
        ExprKind::Ternary { cond, then, orelse } => match checks(*cond) {
            Some(true) => cx.contains(*orelse, id),
            Some(false) => cx.contains(*then, id),
            None => false,
        },
        _ => false,
    });
    let Some(st) = cx.tree.enclosing_stmt(id) else {
        return in_false_arm;
    };
    in_false_arm
        || cx.tree.stmt_ancestors(st).any(|s| match &cx.stmt(s).kind {
            StmtKind::If { cond, then, orelse } => match checks(*cond) {
                Some(true) => crate::util::block_contains(cx, orelse, st),
                Some(false) => crate::util::block_contains(cx, then, st),
                None => false,
            },
            _ => false,
        })
}

/// Why a call returns a coroutine, if it does.
fn coroutine_call(cx: &FileCx, c: &Call) -> Option<String> {
    let Some(t) = c.target.as_deref() else {
        return coroutine_api(cx, c);
    };
    if let Some(local) = cx.local_function(t) {
        let f = cx.func(local);
        if !f.is_async
            || f.is_generator
            || makes_sync(cx, f)
            || wrapped_by_sync_decorator(cx, f)
            || shadowed_on_instance(cx, c, f)
        {
            return None;
        }
        return Some("is an `async def`".into());
    }
    // A function of the project decides; when the knowledge would not call
    // it a coroutine either, all that matters is whether it is `async`.
    let api = coroutine_api(cx, c);
    if api.is_none() {
        return (cx.index.awaitable(cx.lang, t, cx.file) == Some(Awaitable::Async))
            .then(|| "is an `async def` of this project".into());
    }
    if let Some(i) = cx.index.resolve(cx.lang, t, cx.file) {
        let s = cx.index.summary(i);
        if s.awaitable() == Some(Awaitable::Async) && s.lang == cx.lang {
            return Some("is an `async def` of this project".into());
        }
        return None;
    }
    api
}

/// `self.save(..)` where a method of the class stores another callable in
/// `self.save` (`(self.load, self.save) = utils` in `__init__`): the
/// instance attribute hides the `async def` of the same name.
fn shadowed_on_instance(cx: &FileCx, c: &Call, method: &Function) -> bool {
    let Some(class) = method.class.as_deref() else {
        return false;
    };
    if c.receiver.and_then(|r| cx.model.name_of(cx.model.strip(r))) != Some("self") {
        return false;
    }
    let place = format!("self.{}", c.name);
    cx.model.stmts.iter().any(|st| {
        let StmtKind::Assign { targets, .. } = &st.kind else {
            return false;
        };
        targets.iter().any(|&t| {
            let t = cx.model.strip(t);
            let elems: Vec<ExprId> = match &cx.expr(t).kind {
                ExprKind::Collection { elems, .. } => elems.clone(),
                _ => vec![t],
            };
            elems.into_iter().any(|x| {
                cx.model.dotted(x).as_deref() == Some(place.as_str())
                    && cx.func(cx.func_of(x)).class.as_deref() == Some(class)
            })
        })
    })
}

/// A known API that returns a coroutine. `gather`, `shield` and
/// `run_in_executor` return futures whose work is already scheduled when
/// the call returns: dropping one loses its result, not its work.
fn coroutine_api(cx: &FileCx, c: &Call) -> Option<String> {
    if cx.effect(c, Effect::AsyncApi).is_some()
        && !matches!(
            c.target.as_deref(),
            Some("asyncio.gather" | "asyncio.shield" | "asyncio.AbstractEventLoop.run_in_executor")
        )
        && c.target.is_some()
    {
        return Some("returns a coroutine".into());
    }
    None
}

/// Decorated so that calling it gives no coroutine: by a decorator the
/// knowledge names (`async_to_sync`, textual's `@work`, Twisted-style
/// `async_to_deferred`), or a property or its setter (read or assigned,
/// never called).
fn makes_sync(cx: &FileCx, f: &Function) -> bool {
    f.decorators
        .iter()
        .any(|d| cx.kb.is_sync_decorator(d) || d == "builtins.property" || d.ends_with(".setter"))
}

/// A decorator of this file that returns a plain `def` wrapper (`def
/// runner(coro): def inner(self, *a): ... return
/// loop.run_until_complete(coro(self, *a)); return inner`, or `return
/// update_wrapper(inner, coro)`): calling the
/// decorated method runs that wrapper, which decides what it returns, and
/// may well run the coroutine to its end itself.
fn wrapped_by_sync_decorator(cx: &FileCx, f: &Function) -> bool {
    f.decorators.iter().any(|d| {
        cx.local_function(d).is_some_and(|dec| {
            let returned: Vec<&str> = cx
                .body_stmts(dec)
                .iter()
                .filter(|&&s| cx.tree.stmt_func(s) == dec)
                .filter_map(|&s| match cx.stmt(s).kind {
                    // `return inner`, or `return update_wrapper(inner, f)`.
                    StmtKind::Return(Some(v)) => cx.model.name_of(v).or_else(|| {
                        cx.call(cx.model.strip(v))
                            .filter(|c| c.name == "update_wrapper")
                            .and_then(|c| c.positional(0))
                            .and_then(|a| cx.model.name_of(a))
                    }),
                    _ => None,
                })
                .collect();
            !cx.func(dec).is_async
                && cx.model.function_ids().any(|g| {
                    let inner = cx.func(g);
                    inner.parent == Some(dec)
                        && !inner.is_async
                        && returned.contains(&inner.name.as_str())
                })
        })
    })
}

/// How the value of `e` is used; for a local it was stored in, the most
/// telling use of that local (and its name).
fn use_of(cx: &FileCx, e: ExprId) -> (Use, Option<String>) {
    match direct_use(cx, e) {
        Err(name) => {
            let f = cx.func_of(e);
            let funcs = func_and_nested(cx, f);
            // `task = load() if wanted else None`: a coroutine or nothing,
            // so a truth test of the local asks which (`task or
            // _empty()`, whose value is the coroutine when there is one).
            let or_none = matches!(cx.tree.expr_parent(e), Parent::Expr(p)
                if matches!(cx.expr(p).kind, ExprKind::Ternary { then, orelse, .. }
                    if [then, orelse].iter().any(|&b| b != e && matches!(cx.model.literal(b), Some(Lit::Null)))));
            let uses: Vec<Use> = name_refs(cx, &funcs, &name)
                .into_iter()
                .filter(|&r| !is_store(cx, r))
                .map(|r| match (or_none, cx.tree.expr_parent(r)) {
                    (true, Parent::Expr(p))
                        if matches!(cx.expr(p).kind, ExprKind::Logical { left, .. } if left == r) =>
                    {
                        direct_use(cx, p).unwrap_or(Use::Fine)
                    }
                    _ => match direct_use(cx, r) {
                        Ok(Use::Truth) if or_none => Use::Fine,
                        u => u.unwrap_or(Use::Fine),
                    },
                })
                .collect();
            let u = if uses.contains(&Use::Fine) {
                Use::Fine
            } else if uses.contains(&Use::Truth) {
                Use::Truth
            } else if uses.contains(&Use::Value) {
                Use::Value
            } else {
                Use::Dropped
            };
            (u, Some(name))
        }
        Ok(u) => (u, None),
    }
}

/// The use of `e` by its parent; `Err(name)` when it is assigned to a plain
/// local.
fn direct_use(cx: &FileCx, e: ExprId) -> Result<Use, String> {
    match cx.tree.expr_parent(e) {
        Parent::Stmt(s) => Ok(match &cx.stmt(s).kind {
            StmtKind::Expr(_) => Use::Dropped,
            StmtKind::If { cond, .. } | StmtKind::While { cond, .. } if *cond == e => Use::Truth,
            StmtKind::Assign {
                targets,
                value: Some(v),
                op,
            } if *v == e => {
                if let ([t], AssignOp::Plain | AssignOp::Declare { .. }) = (targets.as_slice(), op)
                    && let Some(n) = cx.model.name_of(*t)
                    && cx.model.resolved(*t).is_none()
                    && cx.func_of(e).0 != 0
                {
                    return Err(n.to_string());
                }
                Use::Fine
            }
            _ => Use::Fine,
        }),
        Parent::Expr(p) => Ok(match &cx.expr(p).kind {
            ExprKind::Call(c) if c.func == e => Use::Value,
            // Handed to code that only looks at the value: printed,
            // logged, converted, serialized.
            ExprKind::Call(c) => {
                let t = c.target.as_deref().unwrap_or("");
                if t == "builtins.bool" {
                    Use::Truth
                } else if matches!(
                    t,
                    "builtins.print"
                        | "builtins.str"
                        | "builtins.repr"
                        | "builtins.len"
                        | "builtins.int"
                        | "builtins.float"
                        | "builtins.format"
                        | "builtins.dict"
                        | "json.dumps"
                ) || cx.effect(c, Effect::Logging).is_some()
                {
                    Use::Value
                } else {
                    Use::Fine
                }
            }
            // The `key: value` pair of a dict comprehension is its element,
            // as the element of a list comprehension is: the coroutines
            // are collected (`{k: fetch(k) for k in ks}`, then
            // `gather(*d.values())`), not used as values.
            ExprKind::Other(_) if dict_comprehension_pair(cx, p) => Use::Fine,
            // f-string interpolation, chained comparisons, slices.
            ExprKind::Other(_) => Use::Value,
            ExprKind::Attr { obj, name, .. } if *obj == e => {
                if CORO_METHODS.contains(&name.as_str()) {
                    Use::Fine
                } else {
                    Use::Value
                }
            }
            ExprKind::Index { obj, .. } if *obj == e => Use::Value,
            ExprKind::Binary { op, .. } => match op {
                BinOp::Is | BinOp::IsNot => Use::Fine,
                _ => Use::Value,
            },
            // The last operand of `a or b` is not tested: it is the value
            // of the whole (`self._conn = conn or connect(path)`).
            ExprKind::Logical { right, .. } if *right == e => return direct_use(cx, p),
            ExprKind::Logical { .. } => Use::Truth,
            ExprKind::Unary { op: UnOp::Not, .. } => Use::Truth,
            ExprKind::Unary { .. } => Use::Value,
            ExprKind::Ternary { cond, .. } if *cond == e => Use::Truth,
            ExprKind::Ternary { .. } | ExprKind::Cast(_) => return direct_use(cx, p),
            _ => Use::Fine,
        }),
        _ => Ok(Use::Fine),
    }
}

/// `p` is the `key: value` pair a dict comprehension is built from.
fn dict_comprehension_pair(cx: &FileCx, p: ExprId) -> bool {
    matches!(cx.tree.expr_parent(p), Parent::Expr(q)
        if matches!(cx.expr(q).kind, ExprKind::Comprehension { elt, .. } if elt == p))
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
class Connection:
    async def set_autocommit(self, value):
        self._autocommit = value

    def _set_autocommit(self, value):
        if self.closed:
            raise TypeError("the connection is closed")
        else:
            self.set_autocommit(value)  # expect
"#,
        r#"
import redis.asyncio as redis


async def get_redis():
    return redis.Redis()


async def handler(key):
    r = await get_redis()
    if r.get(key):  # expect
        return True
    return False
"#,
        r#"
import asyncio

async def has_permission(user, action):
    return await policy_check(user, action)

async def handle(user):
    if has_permission(user, "delete"):  # expect
        await do_delete(user)
    asyncio.sleep(1)  # expect
    notify(user)  # expect

async def notify(user):
    await asyncio.sleep(0)
"#,
        r#"
class Repo:
    async def fetch_user(self, uid):
        return await self.db.fetchrow(uid)

    async def name_of(self, uid):
        user = self.fetch_user(uid)  # expect
        return user.name

    def sync_touch(self, uid):
        self.fetch_user(uid)  # expect
"#,
        r#"
# file: app/auth.py
async def is_admin(user):
    return user.role == "admin"

# file: app/views.py
from .auth import is_admin

async def view(user):
    allowed = is_admin(user)  # expect
    if not allowed:
        raise PermissionError()
"#,
        r#"
import asyncio

async def producer(q: asyncio.Queue, item):
    q.put(item)  # expect

async def load(key):
    return key

async def report(key, log):
    value = load(key)  # expect
    print(f"loaded {value}")
"#,
        r#"
class AsyncClient:
    def __init__(self):
        self._open()  # type: ignore[attr-defined]  # expect

    async def _open(self):
        await self._pool.connect()
"#,
        r#"
from textual.app import App

class Viewer(App):
    async def load(self, path):
        self.text = await self.fetch(path)

    async def fetch(self, path):
        return path

    def on_mount(self):
        self.load("README.md")  # expect
"#,
        r#"
async def gather(*tasks, timeout=None):
    for t in tasks:
        await t

class AsyncPool:
    if True:

        def __del__(self):
            gather(*self._workers, timeout=5.0)  # expect
"#,
        r#"
async def ready(conn):
    return await conn.ping()

def check(conn, cached):
    if cached or ready(conn):  # expect
        return True
    return False
"#,
        r#"
class Api:
    async def _request(self, path):
        return await self._session.get(path)

    async def labels(self, ids):
        # A coroutine object as a dict key's value in a plain pair, not collected.
        return {"first": self._request(f"items/{ids[0]}")["name"]}  # expect
"#,
        r#"
import click

async def show():
    await print_migrations()

@click.command()
def main():
    # Plain click runs a sync callback: the coroutine is never awaited.
    show()  # expect
"#,
        r#"
from functools import wraps


def logged(coro):
    @wraps(coro)
    async def inner(self, *args):
        print("calling", coro.__name__)
        return await coro(self, *args)

    return inner


class Client:
    @logged
    async def close(self):
        await self._session.close()

    def __exit__(self, *exc):
        self.close()  # expect
"#,
    ],
    pass: &[
        r#"
import redis.asyncio as redis


async def get_redis():
    return redis.Redis()


async def handler(rows):
    r = await get_redis()
    # The loop variable `r` of the closure is a row, not the client.

    def summarize(raw):
        out = []
        for r in raw:
            if r.get("ok"):
                out.append(r)
        return out

    await r.set("seen", "1")
    return summarize(rows)
"#,
        r#"
import asyncio
import inspect


# A subclass may override `worker` with a plain function: called as written.
class Pool:
    async def _run(self, data):
        ok = await self.worker(data) if asyncio.iscoroutinefunction(self.worker) else self.worker(data)
        if ok:
            self.done += 1
        if not inspect.iscoroutinefunction(self.on_done):
            if self.on_done(data):
                self.done += 1

    async def worker(self, data):
        return True

    async def on_done(self, data):
        return True
"#,
        r#"
# file: aioamqp-stubs/__init__.pyi
async def connect(host: str = ...) -> None: ...
async def from_url(url: str) -> None: ...

# file: mail/signals.py
class Signal:
    def connect(self, receiver):
        self.receivers.append(receiver)

email_queued = Signal()

# file: mail/apps.py
from mail.signals import email_queued
from store.adapter import PostgresAdapter

# Neither call is the stub package's coroutine of the same name.
def ready(handler, url):
    email_queued.connect(handler)
    return PostgresAdapter.from_url(url)
"#,
        r#"
import asyncio
from functools import update_wrapper


def coro(f):
    def wrapper(*args, **kwargs):
        loop = asyncio.get_event_loop()
        return loop.run_until_complete(f(*args, **kwargs))

    return update_wrapper(wrapper, f)


@coro
async def cli(endpoint):
    await connect(endpoint)


def main():
    cli()
"#,
        r#"
from functools import wraps


def runner(coro):
    @wraps(coro)
    def inner(self, *args):
        if self.mode == "async":
            return coro(self, *args)
        return self._loop.run_until_complete(coro(self, *args))

    return inner


class Client:
    @runner
    async def close(self):
        await self._session.close()

    def __exit__(self, *exc):
        self.close()
"#,
        r#"
import asyncio

async def work(x):
    await asyncio.sleep(x)

async def main(xs):
    await work(1)
    t = asyncio.create_task(work(2))
    coros = [work(x) for x in xs]
    await asyncio.gather(*coros)
    c = work(3)
    await c
    return work(4)

def entry():
    asyncio.run(main([1]))
"#,
        r#"
import asyncio
from contextlib import asynccontextmanager

@asynccontextmanager
async def connection():
    yield 1

async def stream():
    yield 1

async def use():
    async with connection() as c:
        pass
    gen = stream()
    async for x in gen:
        pass
    await gen.aclose()

def sync_helper():
    return 1

async def caller():
    if sync_helper():
        pass
"#,
        r#"
import asyncio

async def fetch(u):
    return u

async def later(loop, urls):
    coro = fetch(urls[0])
    fut = asyncio.ensure_future(coro)
    pending = {fetch(u) for u in urls}
    done, _ = await asyncio.wait([asyncio.create_task(p) for p in pending])
    loop.run_until_complete(fetch("x"))
    return fut
"#,
        r#"
_IS_SYNC = False

class AsyncClient:
    def __init__(self, connect=True):
        if _IS_SYNC and connect:
            self._open()  # type: ignore[unused-coroutine]

    async def _open(self):
        await self._pool.connect()
"#,
        r#"
class Connection:
    async def set_autocommit(self, value):
        self._autocommit = value

    def _set_autocommit(self, value):
        if True:  # ASYNC
            raise TypeError("use `await conn.set_autocommit()`")
        else:
            self.set_autocommit(value)
"#,
        r#"
from myproject.util.twisted import async_to_deferred

class RemoteCommand:
    # The wrapper starts the coroutine with `ensureDeferred` and returns
    # the Deferred: the call below already runs the update.
    @async_to_deferred
    async def remote_update(self, key, value):
        await self.flush(key, value)

    async def flush(self, key, value):
        return key, value

    def on_update(self, key, value):
        self.remote_update(key, value)
"#,
        r#"
from textual import work
from textual.app import App

class Viewer(App):
    # `@work` makes calling the method start a worker that runs it.
    @work(exclusive=True)
    async def load(self, path):
        self.text = await self.fetch(path)

    async def fetch(self, path):
        return path

    def on_mount(self):
        self.load("README.md")
"#,
        r#"
async def gather(*tasks, timeout=None):
    for t in tasks:
        await t

class AsyncPool:
    async def close(self):
        await gather(*self._workers)

    if False:  # ASYNC

        def __del__(self):
            gather(*self._workers, timeout=5.0)
"#,
        r#"
import asyncio

class Streamer:
    def start(self, producer):
        asyncio.get_running_loop().run_in_executor(None, producer)
"#,
        r#"
class Cache:
    def __init__(self, path, connection=None):
        self._connection = connection or open_db(path)

    async def get(self, key):
        async with self._lock:
            db = await self._connection
            return await db.fetch(key)

async def open_db(path):
    return await connect(path)
"#,
        r#"
import asyncio

class Api:
    async def _request(self, path):
        return await self._session.get(path)

    async def details(self, ids):
        pending = {i: self._request(f"items/{i}") for i in ids}
        results = await asyncio.gather(*pending.values(), return_exceptions=True)
        return dict(zip(pending, results))
"#,
        r#"
import asyncclick as click

@click.group()
async def cli():
    await load_settings()

@click.command()
async def show():
    await print_migrations()

def main():
    # A command object: calling it runs the coroutine on a loop of its own.
    cli()
    show()
"#,
        r#"
import asyncio


class Server:
    def __init__(self):
        self.tasks = {}

    def create_task(self, msg_id, coro, timeout=0):
        if timeout > 0:
            coro = asyncio.wait_for(coro, timeout)
        task = asyncio.ensure_future(coro)
        self.tasks[msg_id] = task

        def clean(fut, msg_id=msg_id):
            self.tasks.pop(msg_id, None)

        task.add_done_callback(clean)
        return task
"#,
        r#"
import asyncio


async def load_runtime_entries():
    await asyncio.sleep(0)
    return []


async def load_plugin_entries():
    await asyncio.sleep(0)
    return []


async def _empty():
    return []


async def list_logs(source):
    include_all = not source
    runtime_task = load_runtime_entries() if include_all or source == "runtime" else None
    plugin_task = load_plugin_entries() if include_all or source == "plugin" else None
    runtime_items, plugin_items = await asyncio.gather(
        runtime_task or _empty(),
        plugin_task or _empty(),
    )
    return [*runtime_items, *plugin_items]
"#,
        r#"
import asyncio

class Suspendable:
    def __init__(self, coro, ext_event=None):
        self._coro = coro
        if ext_event is not None:
            self._can_run = ext_event
        else:
            self._can_run = asyncio.Event()
            self._can_run.set()

    def __await__(self):
        while not self._can_run.is_set():
            if isinstance(self._can_run, asyncio.Event):
                yield from self._can_run.wait().__await__()
            else:
                # A `multiprocessing` event: its `wait` blocks.
                self._can_run.wait()
        return (yield from self._coro.__await__())
"#,
        r#"
class Detector:
    def __init__(self, model, utils):
        self.model = model
        (self.get_timestamps, self.save_audio, self.read_audio) = utils

    async def save_audio(self, path, chunk):
        raise NotImplementedError

    def dump(self, path, chunk):
        self.save_audio(path, chunk)
"#,
        r#"
from asyncio import sleep
import threading
# The later import is the one the module's functions see.
from time import sleep


def poll(flag: threading.Event):
    while not flag.is_set():
        sleep(0.5)
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(MissingAwait);

    #[test]
    fn a_sync_function_is_not_told_to_await() {
        let fixes = |src: &str| crate::testing::fixes(&MissingAwait, Language::Python, src);
        let sync = fixes(
            "import asyncio\n\ndef scrape(pages):\n    for p in pages:\n        asyncio.sleep(1.5)\n",
        );
        assert_eq!(sync.len(), 1);
        assert!(sync[0].contains("`time.sleep(..)`"), "{sync:?}");
        let coroutine = fixes(
            "import asyncio\n\nasync def scrape(pages):\n    for p in pages:\n        asyncio.sleep(1.5)\n",
        );
        assert_eq!(coroutine, ["`await asyncio.sleep(1.5)`"]);
    }
}
