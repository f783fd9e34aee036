//! PY014: two locks taken in opposite orders, or a non-reentrant lock taken
//! again by its holder.

use crate::context::FileCx;
use crate::python::common::{LockRef, lock_kind};
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::{HashMap, HashSet};
use unsnarl_model::walk::{Child, Visitor, exprs_under, for_each_stmt_child, walk_expr};
use unsnarl_model::*;

pub struct LockOrder;

pub static META: RuleMeta = RuleMeta {
    id: "PY014",
    name: "inconsistent-lock-order",
    category: Category::LockOrder,
    severity: Severity::Critical,
    languages: &[Language::Python],
    summary: "Two locks are taken in opposite orders on two paths (directly or through calls), or a non-reentrant lock is taken again by code that already holds it.",
    docs: r#"
Locks are identified as module globals (`_accounts_lock`) or as attributes
of `self` within a class (`Store._lock`); a condition built on a lock of
the same object (`self.condition = threading.Condition(self.lock)`) is
that lock. The rule records, for every
function of the file, which locks it takes while holding others (directly
nested `with` blocks, or calls to functions of the file that take locks),
and reports:

- a pair of locks taken as A then B on one path and B then A on another;
- a `threading.Lock` (not `RLock`, nor a `Condition` built without a lock
  or around an `RLock()`, also one kept in a field, `Condition(self._lock)`
  after `self._lock = RLock()`, which is re-entrant) taken again while held,
  directly or by a called function. A coroutine or function handed to a
  new task or thread (`create_task(self.loop())`, `to_thread(f)`) is not
  called here: it runs later, in its own turn; nor is a coroutine
  function called without `await` (`spawn(self._connect())` with a
  helper of another module): that only makes the coroutine. Nor is a
  method of the class called on another object of it
  (`self._parent.is_registered(t)` under `self._lock`): it takes that
  object's lock. A call that passes `False` to a parameter of the callee
  (`self._request(.., auth=False)`, or leaves one that defaults to
  `False` or `None` out) does not reach what the callee does
  only under `if auth:` (or `if auth and retry:`, or `self._header() if
  auth else {}`), also when the call is
  made further down (`_relogin` holding its lock and calling `login()`,
  which requests with `allow_relogin=False`); one that passes `True`
  (`self.receive(force=True)`) does not reach what follows `if force:`
  when that branch always raises or returns, nor what runs under `if not
  force:` or in the `else` of `if force:` (`save(tasks, locked=True)`
  skips `else: async with config_lock:`), also where a function hands the flag on as it came
  (`self.connect(force=force)`); one that passes a string
  (`self._post("initialize", ..)`) does not reach what runs only under
  `if method not in ("initialize", ..):`, or under `if not handshake:`
  after `handshake = method in ("initialize", ..)`, nor under `if action ==
  "connect":` when the word passed is another (`self._run("close")`), nor
  in that test's `else`/`elif` arms when it is that one. A lock taken after
  the function checked it is free and would have left otherwise (`if
  self._conn_lock.locked(): return`) is not a re-entry: a path that
  already holds it returns there. Nor is a lock taken a
  second time after its `release` was handed to someone else
  (`waiters.append(lock.release)`): a parking spot that another thread
  opens, nor one a function takes back after releasing it for its caller
  (`self._lock.release(); try: await slow() finally: await
  self._lock.acquire()`).

## Why

Two threads running the two paths at once can each take their first lock
and wait forever for the other's: a deadlock that only shows under load and
never in tests. Re-taking a non-reentrant lock deadlocks the thread against
itself on the first call.

## Example

```python
import threading

accounts_lock = threading.Lock()
ledger_lock = threading.Lock()

def post_payment(entry):
    with accounts_lock:
        with ledger_lock:
            record(entry)

def audit():
    with ledger_lock:
        with accounts_lock:
            check()
```

## Fix

Pick one global order and take the locks in that order everywhere (or
merge them into one lock).

```python
import threading

accounts_lock = threading.Lock()
ledger_lock = threading.Lock()

def post_payment(entry):
    with accounts_lock:
        with ledger_lock:
            record(entry)

def audit():
    with accounts_lock:
        with ledger_lock:
            check()
```
"#,
    examples: &EXAMPLES,
};

/// A lock known by identity.
#[derive(Clone)]
struct Held {
    key: String,
    display: String,
    reentrant: bool,
    /// Taken only after the function saw it free and would have left
    /// otherwise (`if self._lock.locked(): return`): a path that already
    /// holds it returns there instead of blocking on itself.
    checked_free: bool,
}

/// A lock some call takes, the call path to where it is taken, and
/// whether that place runs only once per object (see [`runs_once`]).
type Taken = (Held, Vec<String>, bool);

/// Something a function does while holding locks.
#[derive(Clone)]
enum Event {
    /// A `with` of a lock.
    Acquire {
        lock: Held,
        held: Vec<Held>,
        span: Span,
        /// Parameters of the function whose truth this point needs (`if
        /// auth:` around it).
        under: Vec<String>,
    },
    /// A call of a function of this file.
    Call {
        callee: FuncId,
        held: Vec<Held>,
        span: Span,
        /// Locks known to be free here: the call is in the branch of a
        /// non-blocking probe that took and released them (`if
        /// lock.acquire(False): lock.release(); ...`), so this path runs
        /// only while nobody, this thread included, holds them.
        free: Vec<String>,
        /// As for `Acquire`.
        under: Vec<String>,
        /// Parameters of the callee this call passes a literal `False`
        /// (`self._request(.., auth=False)`): the callee's code under `if
        /// auth:` does not run for it. `!p` for a literal `True`
        /// (`self.receive(force=True)`): nor does its code after `if
        /// force: raise ..`.
        off: Vec<String>,
        /// (callee's parameter, caller's parameter) for each argument
        /// that hands a parameter of the caller on as it is
        /// (`self.connect(force=force)`): what a call of the caller
        /// switches off with it, it switches off in the callee too.
        forwards: Vec<(String, String)>,
    },
}

impl Rule for LockOrder {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        // A lock is only ever taken by a `with` item or an `.acquire()` call
        // on a value typed as a lock: a file with neither holds nothing, and
        // has nothing to walk.
        let is_lock = |e: ExprId| lock_kind(cx, cx.model.strip(e)).is_some_and(is_ordered_kind);
        let may_take_a_lock = cx.model.stmts.iter().any(|s| {
            matches!(&s.kind, StmtKind::With { items, .. } if items.iter().any(|it| is_lock(it.ctx)))
        }) || cx
            .calls_named(&["acquire"])
            .iter()
            .any(|(_, c)| c.receiver.is_some_and(is_lock));
        if !may_take_a_lock {
            return;
        }
        let events: Vec<Vec<Event>> = cx
            .model
            .function_ids()
            .map(|f| collect_events(cx, f))
            .collect();
        if events.iter().all(|e| e.is_empty()) {
            return;
        }
        // Locks each function takes, directly or through calls.
        let mut memo: HashMap<FuncId, Vec<Taken>> = HashMap::new();
        // Edges A -> B: (function, span, how).
        let mut edges: Vec<(String, String, FuncId, Span, String)> = Vec::new();
        let mut reported: HashSet<u32> = HashSet::new();
        for f in cx.model.function_ids() {
            if cx.func(f).is_test {
                continue;
            }
            for ev in &events[f.index()] {
                match ev {
                    Event::Acquire {
                        lock, held, span, ..
                    } => {
                        for h in held {
                            if h.key == lock.key {
                                if !lock.reentrant
                                    && !lock.checked_free
                                    && !release_handed_off(cx, f, *span)
                                    && reported.insert(span.start)
                                {
                                    out.push(reacquire(cx, lock, *span, None));
                                }
                            } else {
                                edges.push((
                                    h.key.clone(),
                                    lock.key.clone(),
                                    f,
                                    *span,
                                    format!(
                                        "{} takes `{}` while holding `{}`",
                                        cx.func_display(f),
                                        lock.display,
                                        h.display
                                    ),
                                ));
                            }
                        }
                    }
                    Event::Call {
                        callee,
                        held,
                        span,
                        free,
                        off,
                        ..
                    } => {
                        if held.is_empty() {
                            continue;
                        }
                        let taken = locks_taken_by_call(
                            cx,
                            *callee,
                            off,
                            &events,
                            &mut memo,
                            &mut Vec::new(),
                        );
                        for (lock, path, _) in taken {
                            if free.contains(&lock.key) {
                                continue;
                            }
                            for h in held {
                                if h.key == lock.key {
                                    if !lock.reentrant
                                        && !lock.checked_free
                                        && reported.insert(span.start)
                                    {
                                        out.push(reacquire(cx, &lock, *span, Some(&path)));
                                    }
                                } else {
                                    edges.push((
                                        h.key.clone(),
                                        lock.key.clone(),
                                        f,
                                        *span,
                                        format!(
                                            "{} holds `{}` and calls {}, which takes `{}`",
                                            cx.func_display(f),
                                            h.display,
                                            path.join(" → "),
                                            lock.display
                                        ),
                                    ));
                                }
                            }
                        }
                    }
                }
            }
        }
        // Opposite pairs.
        for (i, (a, b, _, sa, how_a)) in edges.iter().enumerate() {
            let Some((_, _, _, sb, how_b)) = edges
                .iter()
                .enumerate()
                .find(|(j, (x, y, _, sb, _))| *j != i && x == b && y == a && sb != sa)
                .map(|(_, e)| e)
            else {
                continue;
            };
            if !reported.insert(sa.start) {
                continue;
            }
            let mut f = cx.finding(
                &META,
                *sa,
                format!(
                    "lock order inversion: {how_a}, but {how_b}; two threads on these paths can each take one lock and wait forever for the other"
                ),
                "choose one global order for these locks and take them in that order on every path (or protect both with one lock)",
            );
            f.related.push(Related {
                file: None,
                span: *sb,
                message: "the opposite order is taken here".into(),
            });
            out.push(f);
        }
    }
}

/// Before taking the lock again at `span`, the function handed its
/// `release` to someone else (`waiters.append(lock.release)`): a lock used
/// as a parking spot, taken a second time to sleep until another thread
/// calls that release (releasing a `threading.Lock` from another thread is
/// allowed).
fn release_handed_off(cx: &FileCx, f: FuncId, span: Span) -> bool {
    let Some(taken) = cx
        .body_exprs(f)
        .iter()
        .copied()
        .find(|&x| cx.expr(x).span == span)
    else {
        return false;
    };
    let lock = match cx.call(taken) {
        Some(c) if c.name == "acquire" => c.receiver,
        _ => Some(taken),
    };
    let Some(lock) = lock.and_then(|l| cx.model.dotted(l)) else {
        return false;
    };
    cx.body_exprs(f).iter().any(|&x| {
        cx.expr(x).span.end <= span.start && crate::python::common::hands_over_release(cx, x, &lock)
    })
}

fn reacquire(cx: &FileCx, lock: &Held, span: Span, path: Option<&[String]>) -> Finding {
    let via = match path {
        Some(p) => format!(" through {}", p.join(" → ")),
        None => String::new(),
    };
    cx.finding(
        &META,
        span,
        format!(
            "`{}` is a non-reentrant lock and is already held here; taking it again{via} blocks this thread on itself forever",
            lock.display
        ),
        "split the function into a public one that takes the lock and a `_locked` helper that expects it held, or use `threading.RLock` if re-entry is intended",
    )
}

/// Locks a function takes anywhere (directly or through calls of this
/// file), with the call path to each.
fn locks_taken(
    cx: &FileCx,
    f: FuncId,
    events: &[Vec<Event>],
    memo: &mut HashMap<FuncId, Vec<Taken>>,
    stack: &mut Vec<FuncId>,
) -> Vec<Taken> {
    if let Some(v) = memo.get(&f) {
        return v.clone();
    }
    if stack.contains(&f) || stack.len() > 6 {
        return Vec::new();
    }
    stack.push(f);
    let out = taken_by_events(cx, f, &[], events, memo, stack);
    stack.pop();
    memo.insert(f, out.clone());
    out
}

/// The locks a call of `callee` takes: all of them ([`locks_taken`]), or,
/// when the call passes `False` to the callee's parameters `off`, all but
/// what the callee does only under `if <param>:` for one of them
/// (`self._request(.., auth=False)` never reaches the `if auth: await
/// self._ensure_token()` that takes the token lock).
fn locks_taken_by_call(
    cx: &FileCx,
    callee: FuncId,
    off: &[String],
    events: &[Vec<Event>],
    memo: &mut HashMap<FuncId, Vec<Taken>>,
    stack: &mut Vec<FuncId>,
) -> Vec<Taken> {
    if off.is_empty() {
        return locks_taken(cx, callee, events, memo, stack);
    }
    if stack.contains(&callee) || stack.len() > 6 {
        return Vec::new();
    }
    stack.push(callee);
    let out = taken_by_events(cx, callee, off, events, memo, stack);
    stack.pop();
    out
}

/// The locks `f`'s own events take, and those of the calls it makes,
/// leaving out what runs only under `if <param>:` for a parameter in
/// `off`.
fn taken_by_events(
    cx: &FileCx,
    f: FuncId,
    off: &[String],
    events: &[Vec<Event>],
    memo: &mut HashMap<FuncId, Vec<Taken>>,
    stack: &mut Vec<FuncId>,
) -> Vec<Taken> {
    let name = format!("`{}`", cx.func(f).name);
    let skipped = |under: &[String]| under.iter().any(|u| off.contains(u) || other_word(u, off));
    let mut out: Vec<Taken> = Vec::new();
    for ev in &events[f.index()] {
        match ev {
            Event::Acquire { lock, under, .. } => {
                if !skipped(under) {
                    add_taken(
                        &mut out,
                        (lock.clone(), vec![name.clone()], runs_once(cx, f)),
                    );
                }
            }
            Event::Call {
                callee,
                free,
                under,
                off: own_off,
                forwards,
                ..
            } => {
                if skipped(under) {
                    continue;
                }
                // Flags passed as `False` count two calls down as much as
                // one (`async_login` calling `self._request(..,
                // allow_relogin=False)`), and so do flags handed on as
                // they came (`connect(force=force)`).
                let mut callee_off = own_off.clone();
                for (theirs, mine) in forwards {
                    if off.contains(mine) {
                        callee_off.push(theirs.clone());
                    }
                    if off
                        .iter()
                        .any(|o| o.strip_prefix('!') == Some(mine.as_str()))
                    {
                        callee_off.push(format!("!{theirs}"));
                    }
                }
                for (lock, path, once) in
                    locks_taken_by_call(cx, *callee, &callee_off, events, memo, stack)
                {
                    if !free.contains(&lock.key) {
                        let mut p = vec![name.clone()];
                        p.extend(path);
                        add_taken(&mut out, (lock, p, once));
                    }
                }
            }
        }
    }
    out
}

/// Keeps one path per lock: the first found, unless it ends in a function
/// that runs once per object and a later one does not. The message names
/// the path a reader can follow to the hang: `request → _execute_request →
/// _ensure_auth_initialized` cannot re-enter once credentials are set,
/// `request → _execute_request → _handle_auth_error` can.
fn add_taken(out: &mut Vec<Taken>, t: Taken) {
    match out.iter_mut().find(|(h, ..)| h.key == t.0.key) {
        None => out.push(t),
        Some(old) if old.2 && !t.2 => *old = t,
        Some(_) => {}
    }
}

/// `f` returns at once when a field of `self` is set, and sets it to
/// `True` itself (`if self._initialized: return` ... `self._initialized =
/// True`): a lazy one-time step, which a path taken after the first call
/// passes without reaching its lock.
fn runs_once(cx: &FileCx, f: FuncId) -> bool {
    let Some(flag) = cx
        .func(f)
        .body
        .iter()
        .take(3)
        .find_map(|&s| match &cx.stmt(s).kind {
            StmtKind::If { cond, then, orelse }
                if orelse.is_empty()
                    && then.len() == 1
                    && matches!(cx.stmt(then[0]).kind, StmtKind::Return(None)) =>
            {
                cx.model.dotted(*cond).filter(|d| d.starts_with("self."))
            }
            _ => None,
        })
    else {
        return false;
    };
    cx.body_stmts(f).iter().any(|&st| match &cx.stmt(st).kind {
        StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } => {
            matches!(cx.model.literal(*v), Some(Lit::Bool(true)))
                && targets
                    .iter()
                    .any(|&t| cx.model.dotted(t).as_deref() == Some(flag.as_str()))
        }
        _ => false,
    })
}

/// Parameters of `f` an `if` condition requires to be true: `if auth:`,
/// `if auth and retryable and ..:`. And a string parameter it requires to
/// differ from some literals (`method≠initialize` for `if method not in
/// ("initialize", ..):`, or `if not handshake:` after `handshake = method
/// in ("initialize", ..)`): a call passing one of them switches it off.
fn flag_params(cx: &FileCx, f: FuncId, cond: ExprId) -> Vec<String> {
    let is_param = |id: &str| cx.func(f).params.iter().any(|p| &*p.name == id);
    crate::util::conjuncts(cx.model, cond)
        .into_iter()
        .flat_map(|t| match &cx.expr(cx.model.strip(t)).kind {
            // `if not force:` runs only when `force` is false (`!force`).
            ExprKind::Unary {
                op: UnOp::Not,
                operand,
            } => {
                let operand = cx.model.strip(*operand);
                let Some(id) = cx.model.name_of(operand) else {
                    return excluded_words(cx, operand, BinOp::In, &is_param);
                };
                if is_param(id) {
                    return vec![format!("!{id}")];
                }
                // `not handshake`, the local bound once to a membership test.
                crate::python::common::value_bound_once(cx, f, id)
                    .map_or_else(Vec::new, |v| excluded_words(cx, v, BinOp::In, &is_param))
            }
            ExprKind::Binary {
                op: BinOp::NotIn, ..
            } => excluded_words(cx, t, BinOp::NotIn, &is_param),
            // `if action == "connect":` runs only when `action` is that word.
            ExprKind::Binary {
                op: BinOp::Eq,
                left,
                right,
            } => match (
                cx.model
                    .name_of(cx.model.strip(*left))
                    .filter(|p| is_param(p)),
                cx.model.literal(*right),
            ) {
                (Some(p), Some(Lit::Str(w))) => vec![format!("{p}={w}")],
                _ => Vec::new(),
            },
            _ => cx
                .model
                .name_of(t)
                .filter(|id| is_param(id))
                .map(str::to_string)
                .into_iter()
                .collect(),
        })
        .collect()
}

/// What the other branch of a test of one flag requires: `!p` for `p`,
/// `p` for `!p`. Nothing for a test of several flags (its negation is a
/// disjunction) or of a string parameter (`p≠a`).
fn negation_of_one(flags: &[String]) -> Vec<String> {
    match flags {
        // `if action == "connect": .. elif ..`: the rest runs when it is not.
        [p] if let Some((name, w)) = required_word(p) => vec![format!("{name}≠{w}")],
        [p] if !p.contains('≠') => vec![
            p.strip_prefix('!')
                .map_or_else(|| format!("!{p}"), str::to_string),
        ],
        _ => Vec::new(),
    }
}

/// `p=w`, what `if p == "w":` requires: the parameter and the word.
fn required_word(flag: &str) -> Option<(&str, &str)> {
    flag.split_once('=').filter(|(p, _)| !p.contains('≠'))
}

/// A call that passes `"close"` to `action` (`action≠close` switched off)
/// does not reach what runs under `if action == "connect":`.
fn other_word(flag: &str, off: &[String]) -> bool {
    required_word(flag).is_some_and(|(p, w)| {
        off.iter()
            .filter_map(|o| o.split_once('≠'))
            .any(|(q, given)| q == p && given != w)
    })
}

/// `p in ("a", "b")` (with `op` `In`; `NotIn` alike) for a parameter `p`
/// and string literals: `p≠a`, `p≠b`, what its negation requires.
fn excluded_words(
    cx: &FileCx,
    e: ExprId,
    op: BinOp,
    is_param: &dyn Fn(&str) -> bool,
) -> Vec<String> {
    let ExprKind::Binary {
        op: found,
        left,
        right,
    } = &cx.expr(cx.model.strip(e)).kind
    else {
        return Vec::new();
    };
    let Some(p) = cx
        .model
        .name_of(cx.model.strip(*left))
        .filter(|p| is_param(p))
    else {
        return Vec::new();
    };
    let ExprKind::Collection { elems, keys, .. } = &cx.expr(cx.model.strip(*right)).kind else {
        return Vec::new();
    };
    if *found != op || !keys.is_empty() {
        return Vec::new();
    }
    let words: Option<Vec<String>> = elems
        .iter()
        .map(|&x| match cx.model.literal(x) {
            Some(Lit::Str(w)) => Some(format!("{p}≠{w}")),
            _ => None,
        })
        .collect();
    words.unwrap_or_default()
}

/// The kinds of lock whose acquisition order matters (semaphores and
/// events are not held that way).
fn is_ordered_kind(kind: &str) -> bool {
    matches!(kind, "mutex" | "rlock" | "condition" | "async-mutex")
}

/// Walks a function's body tracking the locks held by `with` blocks.
fn collect_events(cx: &FileCx, f: FuncId) -> Vec<Event> {
    let mut out = Vec::new();
    let mut state = State::default();
    walk(cx, f, &cx.func(f).body, &mut state, &mut out);
    out
}

/// What the walk knows at a point of a function: the locks held, and the
/// locks a non-blocking probe found free.
#[derive(Default)]
struct State {
    held: Vec<Held>,
    free: Vec<String>,
    under: Vec<String>,
    /// Locks the function released without having taken them (its caller
    /// holds them: `self._lock.release()` around a slow step): taking one
    /// back (`finally: await self._lock.acquire()`) is no second hold.
    lent: Vec<String>,
}

/// The lock an `if` condition asks whether it is held (`if
/// self._lock.locked():`).
fn checked_locked(cx: &FileCx, f: FuncId, cond: ExprId) -> Option<String> {
    let c = cx.call(cx.model.strip(cond))?;
    if c.name != "locked" || !c.args.is_empty() {
        return None;
    }
    lock_ref(cx, c.receiver?, f).map(|l| l.key)
}

/// The locks an `if` condition probes without blocking
/// (`lock.acquire(False)`, `acquire(blocking=False)`): its branch runs
/// only if they were free.
fn probed_free(cx: &FileCx, f: FuncId, cond: ExprId) -> Vec<String> {
    exprs_under(cx.model, cond)
        .into_iter()
        .filter_map(|e| {
            let c = cx.call(e)?;
            if c.name != "acquire" {
                return None;
            }
            let arg = c.positional(0).or_else(|| c.kwarg("blocking"))?;
            if !matches!(
                cx.model.literal(arg),
                Some(Lit::Bool(false)) | Some(Lit::Int(0))
            ) {
                return None;
            }
            lock_ref(cx, c.receiver?, f).map(|l| l.key)
        })
        .collect()
}

fn walk(cx: &FileCx, f: FuncId, block: &Block, state: &mut State, out: &mut Vec<Event>) {
    let entry = state.held.len();
    let guards_at_entry = state.under.len();
    let free_at_entry = state.free.len();
    for &s in block {
        // `lock.acquire()` / `lock.release()` as statements.
        if let StmtKind::Expr(e) = cx.stmt(s).kind
            && let Some(c) = cx.call(cx.model.strip(match cx.expr(e).kind {
                ExprKind::Await(inner) => inner,
                _ => e,
            }))
            && matches!(c.name.as_str(), "acquire" | "release")
            && let Some(r) = c.receiver
            && let Some(l) = lock_ref(cx, r, f)
            && is_ordered_kind(&l.kind)
        {
            if c.name == "acquire" {
                if let Some(i) = state.lent.iter().rposition(|k| *k == l.key) {
                    // Taken back for the caller that lent it.
                    state.lent.remove(i);
                    continue;
                }
                let lock = Held {
                    reentrant: reentrant(cx, &l),
                    checked_free: state.free.contains(&l.key),
                    key: l.key,
                    display: l.display,
                };
                out.push(Event::Acquire {
                    lock: lock.clone(),
                    held: state.held.clone(),
                    span: cx.expr(e).span,
                    under: state.under.clone(),
                });
                state.held.push(lock);
            } else if let Some(i) = state.held.iter().rposition(|h| h.key == l.key) {
                state.held.remove(i);
            } else {
                state.lent.push(l.key);
            }
            continue;
        }
        if let StmtKind::With { items, body, .. } = &cx.stmt(s).kind {
            let before = state.held.len();
            for it in items {
                calls_in(cx, f, it.ctx, state, out);
                if let Some(l) = lock_ref(cx, it.ctx, f)
                    && is_ordered_kind(&l.kind)
                {
                    let lock = Held {
                        reentrant: reentrant(cx, &l),
                        checked_free: state.free.contains(&l.key),
                        key: l.key,
                        display: l.display,
                    };
                    out.push(Event::Acquire {
                        lock: lock.clone(),
                        held: state.held.clone(),
                        span: cx.expr(it.ctx).span,
                        under: state.under.clone(),
                    });
                    state.held.push(lock);
                }
            }
            walk(cx, f, body, state, out);
            state.held.truncate(before);
            continue;
        }
        if let StmtKind::If { cond, then, orelse } = &cx.stmt(s).kind {
            calls_in(cx, f, *cond, state, out);
            let probed = probed_free(cx, f, *cond);
            let before = state.free.len();
            state.free.extend(probed);
            let guards = state.under.len();
            let flags = flag_params(cx, f, *cond);
            // `if locked: .. else: async with lock:`: the `else` runs only
            // when the one flag tested is off (`!locked`).
            let negated = negation_of_one(&flags);
            state.under.extend(flags);
            walk(cx, f, then, state, out);
            state.under.truncate(guards);
            state.free.truncate(before);
            // `if force: raise ..`: what follows runs only when `force`
            // is false, so a call passing `force=True` never gets there.
            let exits_on = cx
                .model
                .name_of(cx.model.strip(*cond))
                .filter(|p| cx.func(f).params.iter().any(|q| q.name == *p))
                .filter(|_| crate::util::ends_in_exit(cx.model, then))
                .map(|p| format!("!{p}"));
            state.under.extend(exits_on);
            // `if self._lock.locked(): return`: below, the lock was free.
            if crate::util::ends_in_exit(cx.model, then) {
                state.free.extend(checked_locked(cx, f, *cond));
            }
            let guards = state.under.len();
            state.under.extend(negated);
            walk(cx, f, orelse, state, out);
            state.under.truncate(guards);
            continue;
        }
        for_each_stmt_child(cx.model, s, &mut |c| match c {
            Child::Expr(e) => calls_in(cx, f, e, state, out),
            Child::Block(b) => walk(cx, f, b, state, out),
        });
    }
    state.held.truncate(entry.min(state.held.len()));
    state.under.truncate(guards_at_entry.min(state.under.len()));
    state.free.truncate(free_at_entry.min(state.free.len()));
}

fn calls_in(cx: &FileCx, f: FuncId, e: ExprId, state: &State, out: &mut Vec<Event>) {
    struct V<'a, 'b> {
        cx: &'b FileCx<'a>,
        f: FuncId,
        state: &'b State,
        out: &'b mut Vec<Event>,
    }
    impl Visitor for V<'_, '_> {
        fn enter_expr(&mut self, _m: &FileModel, id: ExprId) -> bool {
            // `self._auth_header() if auth else {}`: the call runs only
            // under `auth`, as in `if auth:`.
            if let ExprKind::Ternary { cond, then, orelse } = self.cx.expr(id).kind {
                let flags = flag_params(self.cx, self.f, cond);
                if !flags.is_empty() {
                    calls_in(self.cx, self.f, cond, self.state, self.out);
                    let under = |extra: Vec<String>| State {
                        held: self.state.held.clone(),
                        free: self.state.free.clone(),
                        under: self.state.under.iter().cloned().chain(extra).collect(),
                        lent: self.state.lent.clone(),
                    };
                    let negated = negation_of_one(&flags);
                    calls_in(self.cx, self.f, then, &under(flags), self.out);
                    calls_in(self.cx, self.f, orelse, &under(negated), self.out);
                    return false;
                }
            }
            // `create_task(self.loop())`, `to_thread(f)`: what is handed to
            // a new task or thread runs later, in its own turn, not under
            // the locks held here.
            if let Some(c) = self.cx.call(id)
                && (crate::python::common::is_task_spawn(self.cx, c)
                    || self.cx.effect(c, Effect::Spawn).is_some()
                    || self.cx.effect(c, Effect::Offload).is_some())
            {
                return false;
            }
            // Calling a coroutine function without awaiting it only makes
            // the coroutine (`spawn(self._connect())`, through a helper
            // of another module too): its body runs wherever that is
            // awaited, in another turn. (An async generator's body runs as
            // the caller iterates it.)
            if let Some(c) = self.cx.call(id)
                && let Some(callee) = self.cx.callee_in_file(c)
                && !on_another_instance(self.cx, id, c, callee)
                && (!self.cx.func(callee).is_async
                    || self.cx.func(callee).is_generator
                    || matches!(self.cx.tree.expr_parent(id),
                        unsnarl_model::walk::Parent::Expr(p)
                            if matches!(self.cx.expr(p).kind, ExprKind::Await(_))))
            {
                // `False` to `p` switches off what runs under `if p:`;
                // `True` what runs after `if p: raise` (`!p`); `"a"` what
                // runs under `if p not in ("a", ..):` (`p≠a`).
                let flag = |p: &str, v: ExprId| match self.cx.model.literal(v) {
                    Some(Lit::Bool(false) | Lit::Null) => Some(p.to_string()),
                    Some(Lit::Bool(true)) => Some(format!("!{p}")),
                    Some(Lit::Str(w)) => Some(format!("{p}≠{w}")),
                    _ => None,
                };
                let received: Vec<&str> = (0..c.args.len())
                    .filter_map(|i| self.cx.param_receiving(callee, c, i))
                    .collect();
                let mut off: Vec<String> = (0..c.args.len())
                    .filter_map(|i| flag(self.cx.param_receiving(callee, c, i)?, c.args[i].value))
                    .collect();
                // A flag left at its default (`def reset(self, with_lock=False)`
                // called as `reset()`) is off as much as one passed `False`.
                if !c.args.iter().any(|a| a.spread) {
                    off.extend(self.cx.func(callee).params.iter().filter_map(|p| {
                        let d = p.default?;
                        (!received.contains(&&*p.name))
                            .then(|| flag(&p.name, d))
                            .flatten()
                    }));
                }
                let forwards = (0..c.args.len())
                    .filter_map(|i| {
                        let mine = self
                            .cx
                            .model
                            .name_of(self.cx.model.strip(c.args[i].value))?;
                        let own = self.cx.func(self.f).params.iter().any(|p| &*p.name == mine);
                        let theirs = self.cx.param_receiving(callee, c, i)?;
                        own.then(|| (theirs.to_string(), mine.to_string()))
                    })
                    .collect();
                self.out.push(Event::Call {
                    callee,
                    held: self.state.held.clone(),
                    free: self.state.free.clone(),
                    span: self.cx.expr(id).span,
                    under: self.state.under.clone(),
                    off,
                    forwards,
                });
            }
            true
        }
    }
    let mut v = V { cx, f, state, out };
    walk_expr(cx.model, e, &mut v);
}

/// A method of the caller's own class called on another object of it
/// (`self._parent.is_registered(t)` in a scope chain): the locks it takes
/// are that object's, which a key per class cannot tell from the caller's
/// own, so the call is not followed.
fn on_another_instance(cx: &FileCx, call: ExprId, c: &Call, callee: FuncId) -> bool {
    let caller = std::iter::successors(Some(cx.func_of(call)), |&f| cx.func(f).parent)
        .find(|&f| cx.func(f).receiver.is_some());
    let (Some(caller), Some(r)) = (caller, c.receiver) else {
        return false;
    };
    let own = cx.func(caller).receiver.as_deref();
    cx.func(callee).class.is_some()
        && cx.func(callee).class == cx.func(caller).class
        && own.is_some()
        && cx.model.name_of(r) != own
}

/// The lock `r` names, keyed by the lock underneath: a condition the
/// file builds on a lock of the same object (`self.condition =
/// threading.Condition(self.lock)`) is that lock, so taking one while
/// holding the other is no order between two locks.
fn lock_ref(cx: &FileCx, r: ExprId, f: FuncId) -> Option<LockRef> {
    let mut l = crate::python::common::lock_ref(cx, r, f)?;
    if l.kind != "condition" {
        return Some(l);
    }
    let Some((class, attr)) = l.key.rsplit_once('.') else {
        return Some(l);
    };
    let under: Vec<String> = crate::python::common::condition_constructions(cx)
        .into_iter()
        .filter(|(target, _)| target.strip_prefix("self.") == Some(attr))
        .filter_map(|(_, c)| {
            let lock = cx
                .model
                .dotted(c.positional(0).or_else(|| c.kwarg("lock"))?)?;
            lock.strip_prefix("self.")
                .filter(|rest| !rest.contains('.'))
                .map(str::to_string)
        })
        .collect();
    if let [lock] = under.as_slice()
        && l.key != l.display
    {
        l.key = format!("{class}.{lock}");
    }
    Some(l)
}

/// Whether a lock can be taken again by the thread that holds it: an
/// `RLock`, or a `threading.Condition` built without a lock (it makes its
/// own `RLock`) or around an `RLock()` (also one held in a field,
/// `Condition(self._lock)` after `self._lock = RLock()`), at every place
/// the file builds the one this name holds.
fn reentrant(cx: &FileCx, l: &crate::python::common::LockRef) -> bool {
    if l.kind == "rlock" {
        return true;
    }
    let attr = l.display.rsplit('.').next().unwrap_or(&l.display);
    if l.kind == "mutex" {
        // Typed `threading.Lock` by an annotation (`_lock: threading.Lock`
        // in the class body) but built as an `RLock` wherever the file
        // builds it: what the thread takes is the one built.
        let built = crate::python::common::constructions(cx, |t| {
            matches!(t, "threading.Lock" | "threading.RLock")
        });
        let mine: Vec<&Call> = built
            .iter()
            .filter(|(target, _)| *target == l.display || target.rsplit('.').next() == Some(attr))
            .map(|&(_, c)| c)
            .collect();
        return !mine.is_empty()
            && mine
                .iter()
                .all(|c| c.target.as_deref() == Some("threading.RLock"));
    }
    if l.kind != "condition" {
        return false;
    }
    // `self._lock`, built as an `RLock` everywhere the file builds it.
    let locks = crate::python::common::constructions(cx, |t| {
        matches!(t, "threading.Lock" | "threading.RLock")
    });
    let rlock_field = |a: ExprId| {
        let Some(d) = cx.model.dotted(cx.model.strip(a)) else {
            return false;
        };
        let mine: Vec<&Call> = locks
            .iter()
            .filter(|(target, _)| *target == d)
            .map(|&(_, c)| c)
            .collect();
        !mine.is_empty()
            && mine
                .iter()
                .all(|c| c.target.as_deref() == Some("threading.RLock"))
    };
    let mut built = 0;
    for (target, c) in crate::python::common::condition_constructions(cx) {
        if c.target.as_deref() != Some("threading.Condition")
            || !(target == l.display || target.rsplit('.').next() == Some(attr))
        {
            continue;
        }
        let own_rlock = match c.positional(0).or_else(|| c.kwarg("lock")) {
            None => true,
            Some(a) => {
                cx.call(cx.model.strip(a))
                    .is_some_and(|k| k.target.as_deref() == Some("threading.RLock"))
                    || rlock_field(a)
            }
        };
        if !own_rlock {
            return false;
        }
        built += 1;
    }
    built > 0
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import threading

a_lock = threading.Lock()
b_lock = threading.Lock()

def one():
    with a_lock:
        with b_lock:  # expect
            work()

def two():
    with b_lock:
        with a_lock:  # expect
            work()
"#,
        r#"
import threading

class Bank:
    def __init__(self):
        self._accounts = threading.Lock()
        self._ledger = threading.Lock()

    def _log(self, entry):
        with self._ledger:
            self.entries.append(entry)

    def transfer(self, entry):
        with self._accounts:
            self._log(entry)  # expect

    def report(self):
        with self._ledger:
            with self._accounts:  # expect
                return list(self.entries)
"#,
        r#"
import threading

src = threading.Lock()
dst = threading.Lock()

def forward():
    src.acquire()
    dst.acquire()  # expect
    try:
        move()
    finally:
        dst.release()
        src.release()

def backward():
    with dst:
        with src:  # expect
            move()
"#,
        r#"
import threading

class Cache:
    def __init__(self):
        self._lock = threading.Lock()
        self._data = {}

    def get(self, k):
        with self._lock:
            return self._data.get(k)

    def get_or_set(self, k, v):
        with self._lock:
            if self.get(k) is None:  # expect
                self._data[k] = v
"#,
        r#"
import threading

class Transactions:
    def __init__(self):
        self._lock = threading.Condition(threading.Lock())
        self._error = None

    def has_error(self):
        with self._lock:
            return self._error is not None

    def check_ready(self):
        with self._lock:
            if self.has_error():  # expect
                raise RuntimeError("failed")
"#,
        r#"
import asyncio

class Reconnector:
    def __init__(self):
        self._lock = asyncio.Lock()

    async def _connect_once(self):
        async with self._lock:
            await self._dial()

    async def on_disconnect(self):
        # Awaited in place: the same task waits for a lock it holds.
        async with self._lock:
            await self._connect_once() # expect
"#,
        r#"
import asyncio

# This token request goes through the authenticated path.
class Api:
    def __init__(self, session):
        self._session = session
        self._token = None
        self._token_lock = asyncio.Lock()

    async def _ensure_token(self):
        async with self._token_lock:
            if self._token is None:
                data = await self._request("POST", "/oauth/token")  # expect
                self._token = data["access_token"]

    async def _request(self, method, path, auth=True):
        if auth:
            await self._ensure_token()
        async with self._session.request(method, path) as resp:
            return await resp.json()
"#,
        r#"
import asyncio


class Gateway:
    def __init__(self, ws):
        self.ws = ws
        self._race_lock = asyncio.Lock()

    async def reconnect(self):
        async with self._race_lock:
            await self.ws.reopen()
            return await self.receive(force=True)  # expect

    async def receive(self, force=False):
        while True:
            msg = await self.ws.receive()
            if msg.closed:
                if force:
                    await self.ws.log_close()
                await self.reconnect()
                continue
            return msg
"#,
        r#"
import asyncio


class Realtime:
    def __init__(self, connect_ws):
        self._connect_ws = connect_ws
        self._conn_lock = asyncio.Lock()
        self._ws = None
        self._configured = False

    async def connect(self):
        async with self._conn_lock:
            self._ws = await self._connect_ws()
            await self.update_session()  # expect
            self._configured = True

    async def update_session(self):
        await self.send_event({"type": "session.update"})

    async def send_event(self, event):
        # Not configured yet while `connect` is still running: re-enters it.
        if not self._configured:
            await self.connect()
        await self._ws.send(event)
"#,
        r#"
import asyncio


class Socket:
    def __init__(self):
        self.lock = asyncio.Lock()
        self.task = None

    async def revive(self):
        async with self.lock:
            if self.task is None or self.task.done():
                await self.open(force=False)  # expect

    async def connect(self, force=False):
        if not force:
            async with self.lock:
                return await self.dial()
        return await self.dial()

    async def open(self, force):
        try:
            return await self.dial()
        except OSError:
            await asyncio.sleep(1)
            return await self.connect(force=force)

    async def dial(self):
        await asyncio.sleep(0)
"#,
        r#"
import threading


# The handshake sends a ping too, which may reconnect under the lock.
class Client:
    def __init__(self, http):
        self._http = http
        self._lock = threading.Lock()
        self._initialized = False

    def initialize(self):
        with self._lock:
            if self._initialized:
                return {}
            result = self._post("initialize", {"capabilities": {}})
            self._post("ping", None)  # expect
            self._initialized = True
            return result

    def _post(self, method, params, _allow_reconnect=True):
        response = self._http.post(json={"method": method, "params": params})
        if response.status_code == 404:
            handshake = method in ("initialize", "notifications/initialized")
            if _allow_reconnect and not handshake:
                self.initialize()
                return self._post(method, params, _allow_reconnect=False)
        return response.json()
"#,
        r#"
import asyncio


# Reconnecting under the request lock goes back into `connect`, which
# takes the lock again.
class Session:
    def __init__(self):
        self._request_lock = asyncio.Lock()

    async def connect(self):
        async with self._request_lock:
            self.connected = True

    async def reconnect(self):
        async with self._request_lock:
            await self._on_owner("reconnect")  # expect

    async def _on_owner(self, action):
        if action == "close":
            await self._teardown()
        else:
            await self.connect()

    async def _teardown(self):
        pass
"#,
    ],
    pass: &[
        r#"
import threading


def sleep_until_woken(waiters):
    # A parking spot: another thread calls the release handed over.
    lock = threading.Lock()
    with lock:
        waiters.append(lock.release)
        try:
            lock.acquire()
        finally:
            waiters.remove(lock.release)
"#,
        r#"
import asyncio

class Client:
    def __init__(self):
        self._relogin_lock = asyncio.Lock()

    async def _request(self, path, *, authenticated=True, allow_relogin=True):
        payload = await self._post(path)
        # The login request passes allow_relogin=False: it never gets here.
        if authenticated and allow_relogin and self._expired(payload):
            await self._relogin()
            return await self._request(path, allow_relogin=False)
        return payload

    async def _relogin(self):
        async with self._relogin_lock:
            await self.async_login()

    async def async_login(self):
        return await self._request("login", authenticated=False, allow_relogin=False)
"#,
        r#"
import asyncio

# The token request passes auth=False: `_request` skips `_ensure_token`.
class Api:
    def __init__(self, session):
        self._session = session
        self._token = None
        self._token_lock = asyncio.Lock()

    async def _ensure_token(self):
        async with self._token_lock:
            if self._token is None:
                data = await self._request("POST", "/oauth/token", auth=False)
                self._token = data["access_token"]

    async def _request(self, method, path, auth=True):
        if auth:
            await self._ensure_token()
        async with self._session.request(method, path) as resp:
            return await resp.json()
"#,
        r#"
import threading

class Container:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._registrations = {}
        self._parent: Container | None = None

    def create_scope(self) -> "Container":
        child = Container()
        child._parent = self
        return child

    # The parent's own lock, not this scope's: child before parent.
    def is_registered(self, interface):
        with self._lock:
            if interface in self._registrations:
                return True
            if self._parent is not None:
                return self._parent.is_registered(interface)
            return False
"#,
        r#"
import asyncio

from .util import spawn

class Reconnector:
    def __init__(self):
        self._lock = asyncio.Lock()

    async def _connect_once(self):
        async with self._lock:
            await self._dial()

    async def on_disconnect(self):
        # Only the coroutine is made here; the new task waits its turn.
        async with self._lock:
            self._task = spawn(self._connect_once())
"#,
        r#"
import threading

class Transactions:
    def __init__(self):
        self._lock = threading.Condition()
        self._error = None

    def has_error(self):
        with self._lock:
            return self._error is not None

    def check_ready(self):
        with self._lock:
            if self.has_error():
                raise RuntimeError("failed")
"#,
        r#"
import asyncio


class Hub:
    def __init__(self):
        self._lock = asyncio.Lock()
        self._members = []
        self._pinger = None

    async def join(self, m):
        async with self._lock:
            self._members.append(m)
            if self._pinger is None:
                self._pinger = asyncio.create_task(self._ping_all())

    async def _ping_all(self):
        while True:
            async with self._lock:
                members = list(self._members)
            for m in members:
                await m.ping()
            await asyncio.sleep(1)
"#,
        r#"
import threading

class Client:
    def __init__(self):
        self._in_callback = threading.Lock()
        self._out = []

    def _write(self):
        with self._in_callback:
            flush(self._out)

    def _queue(self, packet):
        self._out.append(packet)
        # Write now only if nobody (this thread included) is in a callback.
        if self._in_callback.acquire(False):
            self._in_callback.release()
            return self._write()

    def publish(self, packet):
        with self._in_callback:
            self._queue(packet)
"#,
        r#"
import threading

a_lock = threading.Lock()
b_lock = threading.Lock()

def one():
    a_lock.acquire()
    b_lock.acquire()
    try:
        work()
    finally:
        b_lock.release()
        a_lock.release()

def two():
    b_lock.acquire()
    b_lock.release()
    a_lock.acquire()
    a_lock.release()
"#,
        r#"
import threading

a_lock = threading.Lock()
b_lock = threading.Lock()

def one():
    with a_lock:
        with b_lock:
            work()

def two():
    with a_lock:
        with b_lock:
            other()
"#,
        r#"
import threading


class Session:
    # The annotation says Lock; the lock built is re-entrant.
    _exec_lock: threading.Lock

    def __init__(self):
        self._exec_lock = threading.RLock()

    def run(self, code):
        with self._exec_lock:
            return self._run_internal(code)

    def _run_internal(self, code):
        with self._exec_lock:
            return self.backend.execute(code)
"#,
        r#"
import threading

class Cache:
    def __init__(self):
        self._lock = threading.RLock()
        self._data = {}

    def get(self, k):
        with self._lock:
            return self._data.get(k)

    def get_or_set(self, k, v):
        with self._lock:
            if self.get(k) is None:
                self._data[k] = v

def transfer(a, b, amount):
    first, second = sorted((a, b), key=lambda acct: acct.id)
    with first.lock, second.lock:
        move(a, b, amount)
"#,
        r#"
import asyncio


class Gateway:
    def __init__(self, ws):
        self.ws = ws
        self._race_lock = asyncio.Lock()

    async def reconnect(self):
        async with self._race_lock:
            await self.ws.reopen()
            # Reads the greeting itself: a close now is an error, not a
            # reason to reconnect again.
            return await self.receive(force=True)

    async def receive(self, force=False):
        while True:
            msg = await self.ws.receive()
            if msg.closed:
                if force:
                    raise RuntimeError("closed while reconnecting")
                await self.reconnect()
                continue
            return msg
"#,
        r#"
import asyncio


class Realtime:
    def __init__(self, connect_ws):
        self._connect_ws = connect_ws
        self._conn_lock = asyncio.Lock()
        self._ws = None

    async def connect(self):
        # A connect already under way: this call has nothing to do.
        if self._conn_lock.locked():
            return None
        async with self._conn_lock:
            self._ws = await self._connect_ws()
            await self.update_session()

    async def update_session(self):
        await self.send_event({"type": "session.update"})

    async def send_event(self, event):
        if self._ws is None:
            await self.connect()
        await self._ws.send(event)
"#,
        r#"
import asyncio


class Client:
    def __init__(self, http):
        self.http = http
        self.token = None
        self.token_lock = asyncio.Lock()

    async def auth_header(self):
        return {"Authorization": await self.get_token()}

    async def get_token(self):
        async with self.token_lock:
            if self.token is None:
                resp = await self.request("/token", auth=False)
                self.token = resp["token"]
            return self.token

    async def request(self, path, auth=True):
        headers = await self.auth_header() if auth else {}
        return await self.http.get(path, headers=headers)
"#,
        r#"
import asyncio


class Socket:
    def __init__(self):
        self.lock = asyncio.Lock()
        self.task = None

    async def revive(self):
        async with self.lock:
            if self.task is None or self.task.done():
                await self.open(force=True)

    async def connect(self, force=False):
        if not force:
            async with self.lock:
                return await self.dial()
        return await self.dial()

    async def open(self, force):
        try:
            return await self.dial()
        except OSError:
            await asyncio.sleep(1)
            return await self.connect(force=force)

    async def dial(self):
        await asyncio.sleep(0)
"#,
        r#"
import threading


class Client:
    def __init__(self, http):
        self._http = http
        self._lock = threading.Lock()
        self._initialized = False

    def initialize(self):
        with self._lock:
            if self._initialized:
                return {}
            result = self._post("initialize", {"capabilities": {}})
            self._post("notifications/initialized", None)
            self._initialized = True
            return result

    def _post(self, method, params, _allow_reconnect=True):
        response = self._http.post(json={"method": method, "params": params})
        if response.status_code == 404:
            self._initialized = False
            handshake = method in ("initialize", "notifications/initialized")
            if _allow_reconnect and not handshake:
                self.initialize()
                return self._post(method, params, _allow_reconnect=False)
        return response.json()
"#,
        r#"
import threading

class SessionManager:
    def __init__(self):
        self._lock = threading.RLock()
        self._condition = threading.Condition(self._lock)
        self._sessions = {}

    def close(self, sid):
        with self._condition:
            self._sessions.pop(sid, None)
            self._prune()

    def _prune(self):
        # Re-entrant: the condition is built on an `RLock`.
        with self._condition:
            self._condition.notify_all()
"#,
        r#"
import threading

class Fleet:
    def __init__(self):
        self.lock = threading.RLock()
        self.condition = threading.Condition(self.lock)
        self.devices = {}

    def _authenticate(self, token):
        with self.lock:
            return self.devices.get(token)

    def route(self, token):
        # The condition is the same lock as `self.lock`: no order to invert.
        with self.condition:
            self.condition.wait(timeout=1)
            return self._authenticate(token)

    def pair(self, token, device):
        with self.lock:
            self.devices[token] = device
            self.notify()

    def notify(self):
        with self.condition:
            self.condition.notify_all()
"#,
        r#"
import asyncio
import json

config_lock = asyncio.Lock()


async def save_tasks(tasks, locked=False):
    def write():
        with open("tasks.json", "w") as f:
            json.dump(tasks, f)

    if locked:
        write()
    else:
        async with config_lock:
            write()


async def remove_task(name):
    async with config_lock:
        with open("tasks.json") as f:
            tasks = [t for t in json.load(f) if t != name]
        await save_tasks(tasks, locked=True)
"#,
        r#"
import threading


class Pool:
    def __init__(self):
        self._lock = threading.Lock()
        self._conns = []

    def disconnect(self, with_lock=True):
        if with_lock:
            with self._lock:
                self._close_all()
        else:
            self._close_all()

    def reset(self, with_lock=False):
        self.disconnect(with_lock=with_lock)

    def checkout(self):
        with self._lock:
            if not self._conns:
                self.reset()
            return self._conns.pop() if self._conns else None

    def _close_all(self):
        for c in self._conns:
            c.close()
        self._conns.clear()
"#,
        r#"
import asyncio


class Session:
    def __init__(self):
        self._request_lock = asyncio.Lock()
        self._load_lock = asyncio.Lock()

    async def close(self):
        async with self._request_lock:
            # "close" never reaches the connect arm, which loads under the
            # other lock.
            await self._on_owner("close")

    async def recover(self):
        async with self._load_lock:
            await self.close()

    async def _on_owner(self, action):
        if action == "connect":
            await self._load()
        elif action == "close":
            await self._teardown()

    async def _load(self):
        async with self._load_lock:
            pass

    async def _teardown(self):
        pass
"#,
        r#"
import threading
import time


class Connection:
    def __init__(self, connect):
        self._connection_lock = threading.Lock()
        self._connect = connect
        self._conn = None

    def _wait_unlocked(self, delay):
        # Runs with the lock held: let other threads use the connection
        # while this one backs off, then take the lock back.
        self._connection_lock.release()
        try:
            time.sleep(delay)
        finally:
            self._connection_lock.acquire()

    def get(self):
        with self._connection_lock:
            for attempt in range(3):
                try:
                    self._conn = self._conn or self._connect()
                    return self._conn
                except OSError:
                    self._wait_unlocked(2 ** attempt)
            raise ConnectionError("no connection")
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(LockOrder);

    /// The message names the path that can re-enter: not the lazy
    /// initializer that returns early once its flag is set, but the error
    /// handler reached after it.
    #[test]
    fn names_the_path_past_a_one_time_step() {
        static RULE: LockOrder = LockOrder;
        let src = r#"
import asyncio

class Client:
    def __init__(self):
        self._refresh_lock = asyncio.Lock()
        self._ready = False

    async def _ensure_ready(self):
        """Runs once."""
        if self._ready:
            return
        async with self._refresh_lock:
            await self._load()
            self._ready = True

    async def _execute(self, path):
        await self._ensure_ready()
        try:
            return await self._send(path)
        except PermissionError:
            return await self._on_auth_error(path)

    async def _on_auth_error(self, path):
        async with self._refresh_lock:
            await self._refresh_token()
            return await self.request(path)

    async def request(self, path):
        return await self._execute(path)
"#;
        let found = crate::testing::run_example(&RULE, Language::Python, src).0;
        assert_eq!(found.len(), 1, "{found:#?}");
        let m = &found[0].1.message;
        assert!(
            m.contains("`_execute` → `_on_auth_error`") && !m.contains("_ensure_ready"),
            "{m}"
        );
    }
}
