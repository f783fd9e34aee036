//! Small questions about the model that rules of several languages ask.

use crate::context::FileCx;
use unsnarl_model::walk::{Parent, Visitor, walk_block};
use unsnarl_model::*;

/// How many times `word` occurs in `text` as a whole identifier (not as
/// part of a longer one: `start` is not counted in `restart` or `$start`).
pub fn word_count(text: &str, word: &str) -> usize {
    let b = text.as_bytes();
    let n = word.len();
    let is_word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    text.match_indices(word)
        .filter(|&(i, _)| {
            (i == 0 || !is_word(b[i - 1])) && b.get(i + n).is_none_or(|&c| !is_word(c))
        })
        .count()
}

/// Every value the file assigns to what `is_target` accepts (by `=` in a
/// statement or inside an expression), clearing it to `null`/`undefined`/
/// `None` aside, passes `ok`, and there is at least one: what the name or
/// field can hold, wherever it is read.
pub fn every_assigned_value(
    m: &FileModel,
    is_target: impl Fn(ExprId) -> bool,
    ok: impl Fn(ExprId) -> bool,
) -> bool {
    let cleared = |v: ExprId| matches!(m.literal(m.strip(v)), Some(Lit::Null));
    let mut any = false;
    let statements = m.stmts.iter().filter_map(|st| match &st.kind {
        StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } if targets.iter().any(|&t| is_target(t)) => Some(*v),
        _ => None,
    });
    let expressions = m.exprs.iter().filter_map(|ex| match &ex.kind {
        ExprKind::AssignExpr { target, value, .. } if is_target(*target) => Some(*value),
        _ => None,
    });
    for v in statements.chain(expressions) {
        if cleared(v) {
            continue;
        }
        if !ok(v) {
            return false;
        }
        any = true;
    }
    any
}

/// `name` is a name inside `prefix`: `prefix` then one of `seps` then more
/// (`asyncio.sleep` under `asyncio`). Asked per import or per call, so it
/// builds no string.
pub fn is_under(name: &str, prefix: &str, seps: &[char]) -> bool {
    name.strip_prefix(prefix)
        .is_some_and(|rest| rest.len() > 1 && rest.starts_with(seps))
}

/// `name` is `prefix` itself or a name inside it (see [`is_under`]).
pub fn is_or_under(name: &str, prefix: &str, seps: &[char]) -> bool {
    name == prefix || is_under(name, prefix, seps)
}

/// True when every path through `block` ends by raising (or by a call that
/// never returns, such as `sys.exit`).
pub fn always_raises(m: &FileModel, block: &Block) -> bool {
    for &s in block {
        if stmt_always_raises(m, s) {
            return true;
        }
        // `if throttled: continue` before the `raise`: that path leaves
        // the block without raising.
        if may_jump_out(m, s) {
            return false;
        }
    }
    false
}

/// No path through `block` leaves it early: no `return`, and no `break` or
/// `continue` out of it.
pub fn falls_through(m: &FileModel, block: &[StmtId]) -> bool {
    !block.iter().any(|&s| may_jump_out(m, s))
}

/// A `return`, or a `break`/`continue` that leaves `s`, somewhere in `s`
/// (not in nested functions, which the walk does not enter). A `break`
/// inside a nested `switch`/`select` leaves only that statement.
fn may_jump_out(m: &FileModel, s: StmtId) -> bool {
    struct V {
        loops: usize,
        switches: usize,
        found: bool,
    }
    impl Visitor for V {
        fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
            match m.stmt(id).kind {
                StmtKind::Return(_) => self.found = true,
                StmtKind::Continue if self.loops == 0 => self.found = true,
                StmtKind::Break if self.loops + self.switches == 0 => self.found = true,
                StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::Loop { .. } => {
                    self.loops += 1
                }
                StmtKind::Switch { .. } | StmtKind::Select { .. } => self.switches += 1,
                _ => {}
            }
            !self.found
        }
        fn exit_stmt(&mut self, m: &FileModel, id: StmtId) {
            match m.stmt(id).kind {
                StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::Loop { .. } => {
                    self.loops -= 1
                }
                StmtKind::Switch { .. } | StmtKind::Select { .. } => self.switches -= 1,
                _ => {}
            }
        }
    }
    let mut v = V {
        loops: 0,
        switches: 0,
        found: false,
    };
    unsnarl_model::walk::walk_stmt(m, s, &mut v);
    v.found
}

/// Python: `sys.exit(..)`, `os._exit(..)`, `exit()`, `quit()`, or an
/// `os.exec*` that replaces the process with a new program: the call ends
/// the process (or raises `SystemExit` on its way out).
pub fn ends_the_process(c: &Call) -> bool {
    matches!(
        c.target.as_deref(),
        Some(
            "sys.exit"
                | "os._exit"
                | "builtins.exit"
                | "builtins.quit"
                | "os.execv"
                | "os.execve"
                | "os.execl"
                | "os.execle"
                | "os.execlp"
                | "os.execlpe"
                | "os.execvp"
                | "os.execvpe"
        )
    )
}

fn stmt_always_raises(m: &FileModel, s: StmtId) -> bool {
    match &m.stmt(s).kind {
        StmtKind::Raise(_) => true,
        StmtKind::Expr(e) => m
            .call(*e)
            .is_some_and(|c| ends_the_process(c) || c.target.as_deref() == Some("os.abort")),
        StmtKind::If { then, orelse, .. } => always_raises(m, then) && always_raises(m, orelse),
        StmtKind::With { body, .. } | StmtKind::Block(body) => always_raises(m, body),
        StmtKind::Try {
            body,
            handlers,
            orelse,
            finally,
        } => {
            if finally.as_ref().is_some_and(|f| always_raises(m, f)) {
                return true;
            }
            (always_raises(m, body) || always_raises(m, orelse))
                && handlers.iter().all(|h| always_raises(m, &h.body))
        }
        _ => false,
    }
}

/// What the block's awaits wait on (`x` of each `await x`), in order, when
/// every suspension of the block is such an `await` (none is an `async
/// for`/`async with` or a `select`); `None` otherwise.
pub fn awaited_values(m: &FileModel, block: &Block) -> Option<Vec<ExprId>> {
    let awaited: Vec<ExprId> = unsnarl_model::walk::exprs_in_block(m, block)
        .into_iter()
        .filter_map(|e| match m.expr(e).kind {
            ExprKind::Await(inner) => Some(inner),
            _ => None,
        })
        .collect();
    (awaited.len() == awaits_in_block(m, block).len()).then_some(awaited)
}

/// A Python handler for every ordinary error (`except Exception`,
/// `BaseException` or bare) with no `raise` in it: what it catches stops
/// there.
pub fn swallows_every_error(m: &FileModel, h: &Handler) -> bool {
    let any_error = h.types.is_empty()
        || h.types.iter().any(|t| {
            matches!(
                t.as_str(),
                "Exception" | "BaseException" | "builtins.Exception" | "builtins.BaseException"
            )
        });
    any_error && !raises_in(m, &h.body)
}

/// Some statement of the block, nested or not, is a `raise`.
pub fn raises_in(m: &FileModel, block: &Block) -> bool {
    unsnarl_model::walk::stmts_in_block(m, block)
        .into_iter()
        .any(|x| matches!(m.stmt(x).kind, StmtKind::Raise(_)))
}

/// The await expressions of a block (not in nested functions), in order.
/// Rust/JS `for await` and Python `async for`/`async with` count as awaits.
pub fn awaits_in_block(m: &FileModel, block: &Block) -> Vec<Span> {
    struct V(Vec<Span>);
    impl Visitor for V {
        fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
            match &m.stmt(id).kind {
                StmtKind::For { is_async: true, .. } | StmtKind::With { is_async: true, .. } => {
                    self.0.push(m.stmt(id).span)
                }
                StmtKind::Select { .. } => self.0.push(m.stmt(id).span),
                _ => {}
            }
            true
        }
        fn enter_expr(&mut self, m: &FileModel, id: ExprId) -> bool {
            if matches!(m.expr(id).kind, ExprKind::Await(_)) {
                self.0.push(m.expr(id).span);
            }
            true
        }
    }
    let mut v = V(Vec::new());
    walk_block(m, block, &mut v);
    v.0
}

/// How a queue constructor call is bounded, per its knowledge entry:
/// `Some(reason)` when it is unbounded.
pub fn unbounded_reason(m: &FileModel, c: &Call, entry: &Entry) -> Option<String> {
    let bound = queue_bound(c, entry);
    match entry.unbounded? {
        Unbounded::Always => Some("it has no capacity limit".into()),
        Unbounded::MissingOrNonPositive => match bound {
            None => Some("no bound is given".into()),
            Some(b) => match m.int_value(b) {
                Some(v) if v <= 0 => Some(format!("a bound of {v} means unbounded")),
                _ => None,
            },
        },
        Unbounded::Huge => {
            let huge = entry.huge.unwrap_or(10_000);
            let b = bound?;
            if is_infinite(m, b) {
                return Some("its buffer is infinite".into());
            }
            match m.int_value(b) {
                Some(v) if v >= huge => Some(format!("a buffer of {v} is unbounded in practice")),
                _ => None,
            }
        }
    }
}

/// The argument a queue constructor call gives its bound in, where its
/// knowledge entry says it goes (`maxsize=` or the first positional).
pub fn queue_bound(c: &Call, entry: &Entry) -> Option<ExprId> {
    entry
        .keyword
        .as_deref()
        .and_then(|k| c.kwarg(k))
        .or_else(|| entry.arg.and_then(|i| c.positional(i)))
}

/// `math.inf`, `float('inf')`, `sys.maxsize`.
fn is_infinite(m: &FileModel, e: ExprId) -> bool {
    if matches!(
        m.resolved(e),
        Some("math.inf" | "sys.maxsize" | "numpy.inf")
    ) {
        return true;
    }
    m.call(e).is_some_and(|c| {
        c.target.as_deref() == Some("builtins.float")
            && c.positional(0)
                .and_then(|a| match m.literal(a) {
                    Some(Lit::Str(s)) => Some(
                        s.trim()
                            .trim_start_matches(['+', '-'])
                            .eq_ignore_ascii_case("inf"),
                    ),
                    _ => None,
                })
                .unwrap_or(false)
    })
}

/// Methods that, on a receiver of unknown type, almost always talk to a
/// network peer or a database.
const IO_METHODS: &[&str] = &[
    "get",
    "post",
    "put",
    "patch",
    "delete",
    "head",
    "request",
    "fetch",
    "fetchrow",
    "fetchval",
    "fetchall",
    "fetchone",
    "execute",
    "executemany",
    "query",
    "send",
    "send_json",
    "recv",
    "receive",
    "read",
    "readline",
    "readexactly",
    "connect",
    "publish",
    "call",
    "upload",
    "download",
    "findOne",
    "findMany",
    "findUnique",
    "insertOne",
    "updateOne",
    "create",
];

/// True for a method call on an unknown receiver whose name is one of the
/// usual I/O verbs (`client.get(...)`, `db.query(...)`).
pub fn is_io_method_call(c: &Call) -> bool {
    c.target.is_none() && c.receiver.is_some() && IO_METHODS.contains(&c.name.as_str())
}

/// `name` is the variadic parameter (`*args` in Python, `...args` in
/// JS/TS; the front ends keep the prefix on the parameter's name) of `f`
/// or of a function `f` is nested in: the arguments its caller wrote out.
pub fn variadic_param_in_scope(cx: &FileCx, f: FuncId, name: &str) -> bool {
    let mut cur = Some(f);
    while let Some(g) = cur {
        if cx.func(g).params.iter().any(|p| {
            p.name.strip_prefix("...") == Some(name)
                || p.name.strip_prefix('*') == Some(name)
                || p.name.strip_prefix("**") == Some(name)
        }) {
            return true;
        }
        cur = cx.func(g).parent;
    }
    false
}

/// The statement directly before `s` in its block, if any.
pub fn prev_stmt(cx: &FileCx, s: StmtId) -> Option<StmtId> {
    let block = containing_block(cx, s)?;
    let i = block.iter().position(|&x| x == s)?;
    i.checked_sub(1).and_then(|j| block.get(j).copied())
}

/// The statement directly after `s` in its block, if any.
pub fn next_stmt(cx: &FileCx, s: StmtId) -> Option<StmtId> {
    let block = containing_block(cx, s)?;
    let i = block.iter().position(|&x| x == s)?;
    block.get(i + 1).copied()
}

/// The statements after `s` in its block.
pub fn stmts_after<'a>(cx: &FileCx<'a>, s: StmtId) -> &'a [StmtId] {
    match containing_block(cx, s) {
        Some(b) => match b.iter().position(|&x| x == s) {
            Some(i) => &b[i + 1..],
            None => &[],
        },
        None => &[],
    }
}

/// True when `s` is one of `block`'s statements or nested in one.
pub fn block_contains(cx: &FileCx, block: &Block, s: StmtId) -> bool {
    block.contains(&s) || cx.tree.stmt_ancestors(s).any(|a| block.contains(&a))
}

/// The expression runs in an `except` handler (of a `try` of its function
/// around it): it runs only when something failed.
pub fn in_except_handler(cx: &FileCx, e: ExprId) -> bool {
    cx.tree.enclosing_stmt(e).is_some_and(|st| {
        cx.tree.stmt_ancestors(st).any(|a| {
            matches!(&cx.stmt(a).kind, StmtKind::Try { handlers, .. }
                if handlers.iter().any(|h| block_contains(cx, &h.body, st)))
        })
    })
}

/// The expression runs in the body of a `try` of its function one of
/// whose handlers catches a type `catches` accepts (a bare `except:`
/// catches everything): a failure there is handled in the function.
pub fn in_try_body_catching(cx: &FileCx, e: ExprId, catches: impl Fn(&str) -> bool) -> bool {
    in_try_body_handling(cx, e, |h| {
        h.types.is_empty() || h.types.iter().any(|t| catches(t))
    })
}

/// The expression runs in the body of a `try` of its function one of
/// whose handlers passes `handles`.
pub fn in_try_body_handling(cx: &FileCx, e: ExprId, handles: impl Fn(&Handler) -> bool) -> bool {
    cx.tree.enclosing_stmt(e).is_some_and(|st| {
        std::iter::once(st)
            .chain(cx.tree.stmt_ancestors(st))
            .any(|a| {
                matches!(&cx.stmt(a).kind, StmtKind::Try { body, handlers, .. }
                    if block_contains(cx, body, st) && handlers.iter().any(&handles))
            })
    })
}

/// The call `e` sits in the `finally` block of a `try`.
pub fn in_finally_block(cx: &FileCx, e: ExprId) -> bool {
    cx.tree.enclosing_stmt(e).is_some_and(|st| {
        cx.tree.stmt_ancestors(st).any(|a| {
            matches!(&cx.stmt(a).kind, StmtKind::Try { finally: Some(f), .. }
                if block_contains(cx, f, st))
        })
    })
}

/// The block (of a statement or of a function body) that holds `s`.
pub fn containing_block<'a>(cx: &FileCx<'a>, s: StmtId) -> Option<&'a Block> {
    let holds = |b: &Block| b.contains(&s);
    match cx.tree.stmt_parent(s) {
        Parent::Function(f) => Some(&cx.func(f).body).filter(|b| holds(b)),
        Parent::Stmt(p) => {
            let mut found = None;
            unsnarl_model::walk::for_each_stmt_child(cx.model, p, &mut |c| {
                if let unsnarl_model::walk::Child::Block(b) = c
                    && found.is_none()
                    && b.contains(&s)
                {
                    found = Some(b);
                }
            });
            found
        }
        Parent::Expr(e) => match &cx.expr(e).kind {
            ExprKind::Block(b) => Some(b).filter(|b| holds(b)),
            _ => None,
        },
        Parent::Detached => None,
    }
}

/// The checks right after the `sleep` statement of function `f` (the run
/// of statements holding a call `is_check` accepts that starts with the
/// statement after it) each repeat, word for word, the latest check made
/// before the sleep on the same subject (its first argument): they assert
/// that nothing changed across the wait (`assert(pool.size == 2);
/// sleep(500); assert(pool.size == 2)`), which a slow machine cannot make
/// fail; at worst the wait is too short to catch a regression. A check
/// that expects something new (`DROP == 1` after `DROP == 0`, or back to
/// `size == 1` after `size == 2`) depends on the wait.
pub fn repeats_earlier_check(
    cx: &FileCx,
    f: FuncId,
    sleep: StmtId,
    is_check: impl Fn(ExprId) -> bool,
) -> bool {
    let at = cx.stmt(sleep).span;
    // Each check statement, with the subject of its first check call.
    let mut checks: Vec<(StmtId, String)> = Vec::new();
    for e in cx.body_calls(f) {
        if !is_check(e) {
            continue;
        }
        let Some(s) = cx.tree.enclosing_stmt(e) else {
            continue;
        };
        if checks.iter().any(|(x, _)| *x == s) {
            continue;
        }
        let subject = cx.call(e).and_then(|c| c.args.first()).map_or_else(
            || squeezed_source(cx, cx.expr(e).span),
            |a| squeezed_source(cx, cx.expr(a.value).span),
        );
        // `assert!(!x)` and `assert!(x)` check the same subject.
        let subject = subject.trim_start_matches('!').to_string();
        checks.push((s, subject));
    }
    checks.sort_by_key(|(s, _)| cx.stmt(*s).span.start);
    let is_check_stmt = |s: StmtId| checks.iter().any(|(x, _)| *x == s);
    // The check comes right after the sleep: nothing in between could
    // have produced a new value under the same words (`id` read again).
    let Some(first_after) = next_stmt(cx, sleep).filter(|&s| is_check_stmt(s)) else {
        return false;
    };
    let run = std::iter::once(first_after)
        .chain(stmts_after(cx, first_after).iter().copied())
        .take_while(|&s| is_check_stmt(s));
    let mut any = false;
    for s in run {
        let subject = &checks.iter().find(|(x, _)| *x == s).unwrap().1;
        let latest_before = checks
            .iter()
            .rev()
            .find(|(x, subj)| cx.stmt(*x).span.end <= at.start && subj == subject);
        match latest_before {
            Some((x, _))
                if squeezed_source(cx, cx.stmt(*x).span)
                    == squeezed_source(cx, cx.stmt(s).span) =>
            {
                any = true
            }
            _ => return false,
        }
    }
    any
}

/// `e` sits under a test that calls a method named `method`: in a branch
/// of an `if`, or of a conditional expression, whose condition does
/// (`if task.cancelling() == 1:`, `c if loop.is_running() else ..`).
pub fn under_test_calling(cx: &FileCx, e: ExprId, method: &str) -> bool {
    let calls_it = |cond: ExprId| {
        unsnarl_model::walk::exprs_under(cx.model, cond)
            .into_iter()
            .any(|x| cx.call(x).is_some_and(|c| c.name == method))
    };
    cx.tree.expr_ancestors(e).any(
        |a| matches!(cx.expr(a).kind, ExprKind::Ternary { cond, .. } if a != e && calls_it(cond)),
    ) || cx
        .enclosing_stmts(e)
        .into_iter()
        .any(|s| matches!(cx.stmt(s).kind, StmtKind::If { cond, .. } if calls_it(cond)))
}

/// `try: loop = asyncio.get_running_loop() ... except RuntimeError:
/// asyncio.run(coro)`: the spans of the handlers of `s` that run only when
/// no loop runs on the thread (those catching `RuntimeError`, a parent of
/// it, or everything), for a `try` whose first statement asks for the
/// running loop (or for the thread's loop, `get_event_loop()`). Empty for any other statement.
pub fn no_running_loop_handlers(m: &FileModel, s: StmtId) -> Vec<Span> {
    let StmtKind::Try { body, handlers, .. } = &m.stmt(s).kind else {
        return Vec::new();
    };
    let probe = body.first().and_then(|&b| match &m.stmt(b).kind {
        StmtKind::Expr(e) => Some(*e),
        StmtKind::Assign { value: Some(v), .. } => Some(*v),
        _ => None,
    });
    // Also a call on the loop it hands back, `asyncio.get_running_loop()
    // .create_task(close)`: the probe raises before that call runs.
    // `get_event_loop()` hands back the running loop whenever one runs,
    // so when it raises, none does either.
    let asks = |e: ExprId| {
        m.call(m.strip(e)).is_some_and(|c| {
            matches!(c.name.as_str(), "get_running_loop" | "get_event_loop") && c.args.is_empty()
        })
    };
    if !probe.is_some_and(|e| {
        asks(e)
            || m.call(m.strip(e))
                .and_then(|c| c.receiver)
                .is_some_and(asks)
    }) {
        return Vec::new();
    }
    handlers
        .iter()
        .filter(|h| {
            h.types.is_empty()
                || h.types.iter().any(|t| {
                    matches!(
                        t.rsplit('.').next(),
                        Some("RuntimeError" | "Exception" | "BaseException")
                    )
                })
        })
        .map(|h| h.span)
        .collect()
}

/// The span of the innermost function (not the module) around `at`.
pub fn enclosing_function_span(m: &FileModel, at: Span) -> Option<Span> {
    m.function_ids()
        .map(|f| m.func(f))
        .filter(|f| f.kind != FnKind::Module && f.span.contains(at))
        .map(|f| f.span)
        .min_by_key(|s| s.end - s.start)
}

/// `asyncio.run_coroutine_threadsafe(coro, loop).result(..)` (also
/// through a local holding the future) where `loop` is a loop this file
/// makes for the purpose (every value it assigns to that name or field is
/// `asyncio.new_event_loop()`, or `None`; for `self.t.loop`, every value
/// it assigns to a field `loop` of its own objects): a loop of its own thread, not
/// the caller's, so waiting on it cannot be waiting on oneself.
pub fn waits_on_dedicated_loop(m: &FileModel, c: &Call, at: Span) -> bool {
    if c.name != "result" {
        return false;
    }
    let Some(r) = c.receiver.map(|r| m.strip(r)) else {
        return false;
    };
    // The innermost function around the call: its locals.
    let Some(scope) = enclosing_function_span(m, at) else {
        return false;
    };
    let local_value = |name: &str| local_value_in(m, scope, name);
    let fut = match m.name_of(r) {
        Some(n) => match local_value(n) {
            Some(v) => v,
            None => return false,
        },
        None => r,
    };
    // Or a method of the file that schedules and hands the future back
    // (`self._invoke_on_background_thread(coro).result()`, whose body
    // ends `return asyncio.run_coroutine_threadsafe(.., loop=self._loop)`).
    let fut = m
        .call(fut)
        .filter(|k| k.name != "run_coroutine_threadsafe")
        .and_then(|k| scheduled_by_method(m, k))
        .unwrap_or(fut);
    let Some(schedule) = m.call(fut).filter(|k| k.name == "run_coroutine_threadsafe") else {
        return false;
    };
    let Some(mut lp) = schedule.positional(1).or_else(|| schedule.kwarg("loop")) else {
        return false;
    };
    // `loop = _tool_loop` first, under a lock.
    if let Some(v) = m.name_of(lp).and_then(local_value) {
        lp = v;
    }
    // `loop = _ensure_sync_loop()`: a helper of the file that hands back
    // the module's own loop (`return _SYNC_LOOP`), or `None`.
    if let Some(k) = m
        .call(lp)
        .filter(|k| k.receiver.is_none() && k.args.is_empty())
    {
        return returns_dedicated_loop(m, &k.name);
    }
    let Some(lp) = m.dotted(lp) else {
        return false;
    };
    // A parameter (`async def handler(loop):`) is the caller's loop,
    // whatever other functions of the file bind to the same name.
    let is_param = !lp.contains('.')
        && m.function_ids().map(|f| m.func(f)).any(|f| {
            f.kind != FnKind::Module && f.span.contains(at) && f.params.iter().any(|p| p.name == lp)
        });
    if is_param {
        return false;
    }
    // `self.t.loop`, a field of an object the file defines (a thread
    // subclass that sets `self.loop = asyncio.new_event_loop()` in its
    // `__init__`): judged by what the file assigns to that field.
    let lp = match lp.rsplit_once('.') {
        Some((owner, field))
            if owner.contains('.') && m.values_assigned_to(&lp).next().is_none() =>
        {
            format!("self.{field}")
        }
        _ => lp,
    };
    dedicated_loop(m, &lp)
}

/// The `run_coroutine_threadsafe(..)` call a method of the file called on
/// `self` hands back: its one `return` gives it, directly or through a
/// local bound to it once.
fn scheduled_by_method(m: &FileModel, k: &Call) -> Option<ExprId> {
    if k.receiver.is_none_or(|r| m.name_of(r) != Some("self")) {
        return None;
    }
    let h = m
        .function_ids()
        .map(|f| m.func(f))
        .find(|f| f.kind != FnKind::Module && f.name == k.name && !f.is_async)?;
    let returned: Vec<ExprId> = m
        .stmts
        .iter()
        .filter(|st| enclosing_function_span(m, st.span) == Some(h.span))
        .filter_map(|st| match st.kind {
            StmtKind::Return(Some(v)) => Some(m.strip(v)),
            _ => None,
        })
        .collect();
    let [v] = returned.as_slice() else {
        return None;
    };
    let v = m
        .name_of(*v)
        .and_then(|n| local_value_in(m, h.span, n))
        .unwrap_or(*v);
    m.call(v)
        .filter(|c| c.name == "run_coroutine_threadsafe")
        .map(|_| v)
}

/// Every `return` of the file's function `name` hands back `None` or a
/// module variable holding a loop the file made for its own thread.
fn returns_dedicated_loop(m: &FileModel, name: &str) -> bool {
    let Some(h) = m
        .function_ids()
        .map(|f| m.func(f))
        .find(|f| f.kind != FnKind::Module && f.name == name && !f.is_async)
    else {
        return false;
    };
    let returned: Vec<Option<ExprId>> = m
        .stmts
        .iter()
        .filter(|st| enclosing_function_span(m, st.span) == Some(h.span))
        .filter_map(|st| match st.kind {
            StmtKind::Return(v) => Some(v),
            _ => None,
        })
        .collect();
    !returned.is_empty()
        && returned.iter().all(|v| match v {
            None => true,
            Some(v) if matches!(m.literal(*v), Some(Lit::Null)) => true,
            Some(v) => m
                .name_of(m.strip(*v))
                .is_some_and(|n| !h.params.iter().any(|p| p.name == n) && dedicated_loop(m, n)),
        })
}

/// Every value the file assigns to `lp` (a name or field) is `None` or a
/// new event loop (`asyncio.new_event_loop()`, directly or through a local
/// of the function that assigns it), and one is.
fn dedicated_loop(m: &FileModel, lp: &str) -> bool {
    let mut made = false;
    let all = m.values_assigned_to(lp).all(|v| match v {
        None => true,
        Some(v) if matches!(m.literal(v), Some(Lit::Null)) => true,
        Some(v) => {
            let new_loop = |x: ExprId| {
                m.call(m.strip(x))
                    .is_some_and(|k| k.target.as_deref() == Some("asyncio.new_event_loop"))
            };
            // `self._loop = loop`, where the function made `loop =
            // asyncio.new_event_loop()` for its thread.
            let fresh = new_loop(v)
                || m.name_of(m.strip(v)).is_some_and(|n| {
                    enclosing_function_span(m, m.expr(v).span)
                        .and_then(|sc| local_value_in(m, sc, n))
                        .is_some_and(new_loop)
                });
            made |= fresh;
            fresh
        }
    });
    made && all
}

/// The one value a function (its span) assigns to the local `name`, if
/// it assigns exactly one.
pub fn local_value_in(m: &FileModel, scope: Span, name: &str) -> Option<ExprId> {
    let values: Vec<Option<ExprId>> = m
        .stmts
        .iter()
        .filter(|st| scope.contains(st.span))
        .filter_map(|st| match &st.kind {
            StmtKind::Assign { targets, value, .. }
                if targets.iter().any(|&t| m.name_of(t) == Some(name)) =>
            {
                Some(*value)
            }
            _ => None,
        })
        .collect();
    match values.as_slice() {
        [Some(v)] => Some(m.strip(*v)),
        _ => None,
    }
}

/// `if loop is not None and loop.is_running(): return pool.submit(..)`
/// with no `else`: the statements of `block` after that test run only
/// where no loop runs on the thread. Their span, if `block` has such a
/// test.
///
/// Also when the test is in a `try` that probes for the loop (`try: loop =
/// asyncio.get_event_loop(); if loop.is_running(): return True; except
/// RuntimeError: pass`): after that `try`, too, no loop runs; and after a
/// `try` whose probe for the running loop leaves when it finds one (`try:
/// asyncio.get_running_loop(); return None except RuntimeError: pass`),
/// or that sets a flag the block then tests and leaves on (`try: loop =
/// asyncio.get_running_loop() except RuntimeError: loop = None`, then `if
/// loop is not None: loop.create_task(coro); return`). And after
/// `nest_asyncio.apply()` (also in such a `try`): the patched loop lets a
/// bridge run a nested loop on its thread, so none blocks it.
pub fn after_running_loop_exit(m: &FileModel, block: &Block) -> Option<Span> {
    let exits = |s: StmtId| match &m.stmt(s).kind {
        StmtKind::If { cond, then, orelse } => {
            orelse.is_empty() && requires_running_loop(m, *cond) && ends_by_leaving(m, then)
        }
        StmtKind::Expr(e) => m.call(*e).is_some_and(|c| {
            c.name == "apply" && c.target.as_deref() == Some("nest_asyncio.apply")
        }),
        _ => false,
    };
    // `try: asyncio.get_running_loop(); return None except RuntimeError:
    // pass`: the probe leaves whenever a loop runs.
    let probe_leaves = |s: StmtId| {
        matches!(&m.stmt(s).kind, StmtKind::Try { body, .. } if ends_by_leaving(m, body))
            && !no_running_loop_handlers(m, s).is_empty()
    };
    // `try: loop = asyncio.get_running_loop() except RuntimeError: loop =
    // None`, then `if loop is not None: loop.create_task(..); return`.
    let probed_flag = |s: StmtId| match probe_targets(m, s)? {
        [t] => m.name_of(*t),
        _ => None,
    };
    let mut flags: Vec<&str> = Vec::new();
    let leaves_when_flagged = |s: StmtId, flags: &[&str]| match &m.stmt(s).kind {
        StmtKind::If { cond, then, orelse } if orelse.is_empty() && ends_by_leaving(m, then) => {
            let cond = m.strip(*cond);
            let flag = match &m.expr(cond).kind {
                ExprKind::Binary {
                    op: BinOp::IsNot,
                    left,
                    right,
                } if matches!(m.literal(*right), Some(Lit::Null)) => m.name_of(*left),
                _ => m.name_of(cond),
            };
            flag.is_some_and(|f| flags.contains(&f))
        }
        _ => false,
    };
    let i = block.iter().position(|&s| {
        let found = exits(s)
            || probe_leaves(s)
            || leaves_when_flagged(s, &flags)
            || matches!(&m.stmt(s).kind, StmtKind::Try { body, .. } if body.iter().any(|&t| exits(t)));
        flags.extend(probed_flag(s));
        found
    })?;
    let rest = &block[i + 1..];
    Some(Span::new(
        m.stmt(*rest.first()?).span.start,
        m.stmt(*rest.last()?).span.end,
    ))
}

/// One of the terms an `and` chain requires is `x.is_running()`.
fn requires_running_loop(m: &FileModel, cond: ExprId) -> bool {
    any_conjunct(m, cond, &mut |t| {
        m.call(t).is_some_and(|c| c.name == "is_running")
    })
}

/// Some term of [`conjuncts`] passes `test`, walked without collecting
/// them (this runs on every `if` of every function the index summarizes).
pub fn any_conjunct(m: &FileModel, cond: ExprId, test: &mut impl FnMut(ExprId) -> bool) -> bool {
    let cond = m.strip(cond);
    match &m.expr(cond).kind {
        ExprKind::Logical {
            op: LogicalOp::And,
            left,
            right,
        } => any_conjunct(m, *left, test) || any_conjunct(m, *right, test),
        _ => test(cond),
    }
}

/// The last statement of `block` returns or raises, also at the end of a
/// `with` or of both branches of an `if`: no path falls out of it.
fn ends_by_leaving(m: &FileModel, block: &Block) -> bool {
    block.last().is_some_and(|&l| match &m.stmt(l).kind {
        StmtKind::Return(_) | StmtKind::Raise(_) => true,
        StmtKind::With { body, .. } => ends_by_leaving(m, body),
        StmtKind::If { then, orelse, .. } => ends_by_leaving(m, then) && ends_by_leaving(m, orelse),
        // `try: ..; return except Exception: log(..); return`.
        StmtKind::Try {
            body,
            handlers,
            orelse,
            ..
        } => {
            orelse.is_empty()
                && ends_by_leaving(m, body)
                && handlers.iter().all(|h| ends_by_leaving(m, &h.body))
        }
        _ => false,
    })
}

/// The bodies of the `try` statements of `block` whose handler for a
/// `RuntimeError` applies `nest_asyncio` (`try: loop.run_until_complete(c)
/// except RuntimeError as e: if "already running" in str(e):
/// nest_asyncio.apply(); ..`): on a running loop the bridge raises at once
/// and the handler patches the loop and runs it again.
fn rescued_by_nest_asyncio(m: &FileModel, block: &Block) -> Vec<Span> {
    // Most files never import it: skip their handlers' calls (this runs on
    // every block the project index summarizes).
    if !m
        .imports
        .iter()
        .any(|i| i.target.starts_with("nest_asyncio"))
    {
        return Vec::new();
    }
    let applies = |b: &Block| {
        unsnarl_model::walk::calls_in_block(m, b)
            .into_iter()
            .any(|x| m.call(x).and_then(|c| c.target.as_deref()) == Some("nest_asyncio.apply"))
    };
    block
        .iter()
        .filter_map(|&s| match &m.stmt(s).kind {
            StmtKind::Try { body, handlers, .. }
                if handlers.iter().any(|h| {
                    (h.types.is_empty()
                        || h.types.iter().any(|t| {
                            matches!(
                                t.rsplit('.').next(),
                                Some("RuntimeError" | "Exception" | "BaseException")
                            )
                        }))
                        && applies(&h.body)
                }) =>
            {
                Some(
                    m.stmt(*body.first()?)
                        .span
                        .cover(m.stmt(*body.last()?).span),
                )
            }
            _ => None,
        })
        .collect()
}

/// The parts of `block` where no bridge blocks a running loop: after
/// [`after_running_loop_exit`], and in a `try` that [`rescued_by_nest_asyncio`].
pub fn loop_safe_tails(m: &FileModel, block: &Block) -> impl Iterator<Item = Span> {
    after_running_loop_exit(m, block)
        .into_iter()
        .chain(rescued_by_nest_asyncio(m, block))
}

/// A call in [`loop_safe_tails`] of a block of its function.
pub fn after_running_loop_test(cx: &FileCx, e: ExprId) -> bool {
    struct Tails<'a>(&'a mut Vec<Span>);
    impl unsnarl_model::walk::Visitor for Tails<'_> {
        fn enter_block(&mut self, m: &FileModel, block: &Block) {
            self.0.extend(loop_safe_tails(m, block));
        }
    }
    let mut tails = Vec::new();
    let f = cx.func_of(e);
    unsnarl_model::walk::walk_block(cx.model, &cx.func(f).body, &mut Tails(&mut tails));
    let at = cx.expr(e).span;
    tails.iter().any(|t| t.contains(at))
}

/// A call inside a handler of [`no_running_loop_handlers`]: it runs only
/// when the thread has no running loop.
pub fn only_without_running_loop(cx: &FileCx, e: ExprId) -> bool {
    let at = cx.expr(e).span;
    let stmts = cx.enclosing_stmts(e);
    stmts.iter().any(|&s| {
        no_running_loop_handlers(cx.model, s)
            .iter()
            .any(|h| h.contains(at))
    }) || stmts
        .iter()
        .any(|&s| in_no_loop_branch(cx, s, at) || in_not_running_branch(cx.model, s, at))
}

/// `if asyncio.get_event_loop().is_running(): ... else: <at>`, or `if not
/// asyncio.get_event_loop().is_running(): <at>` (or the
/// loop first bound to a local, `loop = asyncio.get_event_loop(); if
/// loop.is_running():`): the thread's own loop is not running in the
/// `else`.
fn in_not_running_branch(m: &FileModel, s: StmtId, at: Span) -> bool {
    let StmtKind::If { cond, then, orelse } = &m.stmt(s).kind else {
        return false;
    };
    let asks_for_it = |r: ExprId| {
        m.call(m.strip(r)).is_some_and(|c| {
            matches!(c.name.as_str(), "get_event_loop" | "get_running_loop") && c.args.is_empty()
        })
    };
    let own_loop = |r: ExprId| {
        asks_for_it(r)
            || m.name_of(m.strip(r)).is_some_and(|n| {
                enclosing_function_span(m, m.stmt(s).span)
                    .and_then(|sc| local_value_in(m, sc, n))
                    .is_some_and(asks_for_it)
            })
    };
    let asks = |e: ExprId| {
        m.call(m.strip(e)).is_some_and(|c| {
            c.name == "is_running" && c.args.is_empty() && c.receiver.is_some_and(own_loop)
        })
    };
    // `if not asyncio.get_event_loop().is_running(): <at>` too.
    match &m.expr(m.strip(*cond)).kind {
        ExprKind::Unary {
            op: UnOp::Not,
            operand,
        } => asks(*operand) && block_span_contains(m, then, at),
        _ => asks(*cond) && block_span_contains(m, orelse, at),
    }
}

/// The block of `s` that runs only when the running loop is not the one
/// compared with it: the `else` of `if loop == asyncio.get_running_loop():`
/// (or `is`), the body of `if loop is not asyncio.get_running_loop():`. A
/// bridge there waits on another thread's loop, not the caller's.
pub fn other_loop_block(m: &FileModel, s: StmtId) -> Option<&Block> {
    let StmtKind::If { cond, then, orelse } = &m.stmt(s).kind else {
        return None;
    };
    let ExprKind::Binary { op, left, right } = &m.expr(m.strip(*cond)).kind else {
        return None;
    };
    let running = |e: ExprId| {
        m.call(m.strip(e))
            .is_some_and(|c| c.name == "get_running_loop" && c.args.is_empty())
    };
    if !(running(*left) || running(*right)) {
        return None;
    }
    match op {
        BinOp::Eq | BinOp::Is => Some(orelse),
        BinOp::NotEq | BinOp::IsNot => Some(then),
        _ => None,
    }
}

/// `e` sits in an [`other_loop_block`] of its function.
pub fn waits_on_other_loop(cx: &FileCx, e: ExprId) -> bool {
    let at = cx.expr(e).span;
    cx.enclosing_stmts(e).iter().any(|&s| {
        other_loop_block(cx.model, s).is_some_and(|b| block_span_contains(cx.model, b, at))
    })
}

/// `at` lies within the source of `block`'s statements (false for an
/// empty block).
pub fn block_span_contains(m: &FileModel, block: &Block, at: Span) -> bool {
    match (block.first(), block.last()) {
        (Some(&a), Some(&b)) => Span::new(m.stmt(a).span.start, m.stmt(b).span.end).contains(at),
        _ => false,
    }
}

/// `try: loop = asyncio.get_running_loop() except RuntimeError: loop =
/// None`, then `if loop is not None: ... else: <at>` (or `if loop is None:
/// <at>`, also as one term of an `and`): the flag the `try` sets says no
/// loop runs on the thread in the branch that holds `at`.
fn in_no_loop_branch(cx: &FileCx, s: StmtId, at: Span) -> bool {
    let m = cx.model;
    let StmtKind::If { cond, then, orelse } = &m.stmt(s).kind else {
        return false;
    };
    let cond = m.strip(*cond);
    // (the flag, whether the `then` branch is the one without a loop)
    let flag_test = |cond: ExprId| match &m.expr(cond).kind {
        ExprKind::Binary {
            op: op @ (BinOp::Is | BinOp::IsNot),
            left,
            right,
        } if matches!(m.literal(*right), Some(Lit::Null)) => (m.name_of(*left), *op == BinOp::Is),
        ExprKind::Unary {
            op: UnOp::Not,
            operand,
        } => (m.name_of(*operand), true),
        _ => (m.name_of(cond), false),
    };
    // `if running is None and not loop.is_closed():` tests the flag too,
    // for its `then` branch.
    let terms = conjuncts(m, cond);
    let (flag, then_without) = match terms.as_slice() {
        [_, _, ..] => match terms
            .iter()
            .map(|&t| flag_test(m.strip(t)))
            .find(|&(f, then_without)| f.is_some() && then_without)
        {
            Some(found) => found,
            None => return false,
        },
        _ => flag_test(cond),
    };
    let Some(flag) = flag else { return false };
    let branch = if then_without { then } else { orelse };
    if !block_span_contains(m, branch, at) {
        return false;
    }
    // The flag's only values: the running loop, or `None` in the handler
    // that catches its absence.
    let f = cx.tree.stmt_func(s);
    let before = m.stmt(s).span.start;
    let probed = cx.body_stmts(f).iter().any(|&t| {
        m.stmt(t).span.end <= before
            && probe_targets(m, t)
                .is_some_and(|targets| targets.iter().any(|&x| m.name_of(x) == Some(flag)))
    });
    probed
        && every_assigned_value(
            m,
            |t| m.name_of(t) == Some(flag) && cx.func_of(t) == f,
            |v| {
                m.call(m.strip(v))
                    .is_some_and(|c| c.name == "get_running_loop" && c.args.is_empty())
            },
        )
}

/// The targets of `flag = asyncio.get_running_loop()`, when `s` is a
/// `try` that starts with it and catches its absence (see
/// [`no_running_loop_handlers`]).
fn probe_targets(m: &FileModel, s: StmtId) -> Option<&[ExprId]> {
    let StmtKind::Try { body, .. } = &m.stmt(s).kind else {
        return None;
    };
    if no_running_loop_handlers(m, s).is_empty() {
        return None;
    }
    match &m.stmt(*body.first()?).kind {
        StmtKind::Assign { targets, .. } => Some(targets),
        _ => None,
    }
}

/// The terms an `and` chain requires to be true (`a and b and c`: `a`,
/// `b`, `c`; any other condition is its own one term), parentheses
/// stripped.
pub fn conjuncts(m: &FileModel, cond: ExprId) -> Vec<ExprId> {
    let mut terms = Vec::new();
    any_conjunct(m, cond, &mut |t| {
        terms.push(t);
        false
    });
    terms
}

/// The single target a value is bound to: `with <value> as t` (also
/// `async with`) or `t = <value>`.
pub fn bound_target(cx: &FileCx, value: ExprId) -> Option<ExprId> {
    let unsnarl_model::walk::Parent::Stmt(s) = cx.tree.expr_parent(value) else {
        return None;
    };
    match &cx.stmt(s).kind {
        StmtKind::With { items, .. } => {
            items
                .iter()
                .find(|it| it.ctx == value || cx.model.strip(it.ctx) == value)?
                .target
        }
        StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } if *v == value => match targets.as_slice() {
            [t] => Some(*t),
            _ => None,
        },
        _ => None,
    }
}

/// Every assignment of the file with a target `is_target` accepts: the
/// statement and the value.
pub fn assignments(cx: &FileCx, is_target: impl Fn(ExprId) -> bool) -> Vec<(StmtId, ExprId)> {
    cx.model
        .stmts
        .iter()
        .enumerate()
        .filter_map(|(i, st)| match &st.kind {
            StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } if targets.iter().any(|&t| is_target(t)) => Some((StmtId(i as u32), *v)),
            _ => None,
        })
        .collect()
}

/// The source of `span` with its whitespace removed: how two statements
/// are compared word for word.
pub fn squeezed_source(cx: &FileCx, span: Span) -> String {
    cx.source(span)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
}

/// The call `x` takes part in, with its id: as the receiver of a method
/// (`x.m(..)`: `x` hangs under the callee's `Attr`), or as a direct child
/// (an argument, the callee itself).
pub fn call_around<'a>(cx: &FileCx<'a>, x: ExprId) -> Option<(ExprId, &'a Call)> {
    let parent = match cx.tree.expr_parent(x) {
        Parent::Expr(a) if matches!(cx.expr(a).kind, ExprKind::Attr { .. }) => {
            cx.tree.expr_parent(a)
        }
        p => p,
    };
    let Parent::Expr(p) = parent else { return None };
    cx.call(p).map(|c| (p, c))
}

/// The method call made on `x` (`x.recv()`), if `x` is its receiver.
pub fn method_on<'a>(cx: &FileCx<'a>, x: ExprId) -> Option<&'a Call> {
    call_around(cx, x)
        .map(|(_, c)| c)
        .filter(|c| c.receiver == Some(x))
}

/// Every way through the block ends in a `return` or a `throw`: it cannot
/// run off its end. (A loop at the end counts as running off it, which
/// errs toward "not always a promise".)
pub fn ends_in_exit(m: &FileModel, block: &Block) -> bool {
    let Some(&last) = block.last() else {
        return false;
    };
    match &m.stmt(last).kind {
        StmtKind::Return(_) | StmtKind::Raise(_) => true,
        StmtKind::If { then, orelse, .. } => ends_in_exit(m, then) && ends_in_exit(m, orelse),
        StmtKind::Block(b) => ends_in_exit(m, b),
        // With a `default`, and each case ending in an exit (an empty one
        // falls through to the next).
        StmtKind::Switch { cases, .. } => {
            cases.iter().any(|c| c.patterns.is_empty())
                && cases.last().is_some_and(|c| ends_in_exit(m, &c.body))
                && cases
                    .iter()
                    .all(|c| c.body.is_empty() || ends_in_exit(m, &c.body))
        }
        StmtKind::Try {
            body,
            handlers,
            finally,
            ..
        } => {
            finally.as_ref().is_some_and(|f| ends_in_exit(m, f))
                || (ends_in_exit(m, body) && handlers.iter().all(|h| ends_in_exit(m, &h.body)))
        }
        _ => false,
    }
}

/// A comment that explains the code at `span`: one trailing its last line
/// (`x = Lock()  # one request at a time`) or the comment lines right
/// above its first, of three words or more. Tool directives (`# noqa`, `# type:`,
/// `# pragma`, `# pylint:`) are not explanations, nor are notes of a
/// defect (`# BUG:`, `# TODO`, `# FIXME`, `# XXX`, `# HACK`).
pub fn explaining_comment(text: &str, span: Span) -> Option<&str> {
    let (start, end) = (span.start as usize, span.end as usize);
    let line_start = text.get(..start)?.rfind('\n').map_or(0, |i| i + 1);
    let line_end = text.get(end..)?.find('\n').map_or(text.len(), |i| end + i);
    let trailing = text[end..line_end]
        .find('#')
        .map(|i| &text[end + i + 1..line_end]);
    // The whole run of comment lines right above (a reason may take two
    // lines: `# this serializes the history's` / `# read-modify-write`).
    let before = &text[..line_start.saturating_sub(1)];
    let mut first = None;
    let mut cut = before.len();
    for line in before.rsplit('\n') {
        if !line.trim_start().starts_with('#') {
            break;
        }
        cut -= line.len();
        first = Some(cut);
        cut = cut.saturating_sub(1);
    }
    let above = first.map(|i| {
        let run = before[i..].trim_start();
        &run[1..]
    });
    [trailing, above]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|c| {
            let lower = c.to_ascii_lowercase();
            c.split_whitespace().count() >= 3
                && ![
                    "noqa", "type:", "pragma", "pylint:", "pyright:", "fmt:", "mypy:", "bug",
                    "todo", "fixme", "xxx", "hack",
                ]
                .iter()
                .any(|d| lower.starts_with(d))
        })
}

/// The spans of statements no path reaches: those after a `return`,
/// `raise`/`throw`, `break` or `continue` in the same block (`raise
/// Error(..) from e` followed by a `return` nobody deleted). A function
/// definition there is kept: JavaScript hoists declarations, so a helper
/// written below the `return` is called from above it.
pub fn unreachable_spans(m: &FileModel) -> Vec<Span> {
    struct Dead(Vec<Span>);
    impl Visitor for Dead {
        fn enter_block(&mut self, m: &FileModel, block: &Block) {
            let Some(end) = block.iter().position(|&s| {
                matches!(
                    m.stmt(s).kind,
                    StmtKind::Return(_) | StmtKind::Raise(_) | StmtKind::Break | StmtKind::Continue
                )
            }) else {
                return;
            };
            self.0.extend(
                block[end + 1..]
                    .iter()
                    .filter(|&&s| {
                        !matches!(m.stmt(s).kind, StmtKind::FuncDef(_) | StmtKind::ClassDef(_))
                    })
                    .map(|&s| m.stmt(s).span),
            );
        }
    }
    let mut dead = Dead(Vec::new());
    for f in m.function_ids() {
        walk_block(m, &m.func(f).body, &mut dead);
    }
    dead.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_under_a_prefix_start_at_a_separator() {
        assert!(is_under("pika.channel", "pika", &['.']));
        assert!(is_under("node:fs/promises", "node:fs", &['.', '/']));
        assert!(!is_under("pika", "pika", &['.']));
        assert!(!is_under("pikachu.x", "pika", &['.']));
        assert!(!is_under("pika.", "pika", &['.']));
        assert!(!is_under("http/x", "http", &['.']));
        assert!(is_or_under("pika", "pika", &['.']));
        assert!(is_or_under("aio_pika.abc", "aio_pika", &['.']));
        assert!(!is_or_under("aio_pika", "pika", &['.']));
    }

    /// Whether the handler of the first `try` in function `f` always raises.
    fn handler_raises(lang: Language, src: &str) -> bool {
        let m = crate::testing::lower(lang, src, "t");
        let f = m.function_ids().find(|&f| m.func(f).name == "f").unwrap();
        let handler = unsnarl_model::walk::stmts_in_block(&m, &m.func(f).body)
            .into_iter()
            .find_map(|s| match &m.stmt(s).kind {
                StmtKind::Try { handlers, .. } => Some(handlers[0].body.clone()),
                _ => None,
            })
            .unwrap();
        always_raises(&m, &handler)
    }

    #[test]
    fn a_path_that_leaves_first_does_not_raise() {
        let py = |handler: &str| {
            let src = format!(
                "def f(xs):\n    for x in xs:\n        try:\n            g(x)\n        except E as e:\n{handler}"
            );
            handler_raises(Language::Python, &src)
        };
        assert!(py("            log(e)\n            raise\n"));
        assert!(py(
            "            if e.code:\n                raise\n            raise E()\n"
        ));
        assert!(!py("            log(e)\n"));
        assert!(!py(
            "            if e.throttled:\n                continue\n            raise\n"
        ));
        assert!(!py(
            "            if e.ok:\n                return 1\n            raise\n"
        ));
        // A loop's own `break`/`continue` leaves that loop, not the handler.
        assert!(py(
            "            for y in xs:\n                if y:\n                    break\n            raise\n"
        ));

        let js = |handler: &str| {
            let src = format!(
                "async function f(k) {{ while (true) {{ try {{ await g(); }} catch (e) {{ {handler} }} }} }}"
            );
            handler_raises(Language::JavaScript, &src)
        };
        assert!(js("throw e;"));
        assert!(!js("if (e.moved) { continue; } throw e;"));
        assert!(js("switch (k) { case 1: break; } throw e;"));
    }
}
