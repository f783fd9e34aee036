//! PY026: awaiting a network peer with no deadline.

use crate::context::FileCx;
use crate::python::common::{is_none, under_deadline};
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::HashSet;
use unsnarl_model::walk::Parent;
use unsnarl_model::*;

pub struct NetworkAwaitWithoutDeadline;

pub static META: RuleMeta = RuleMeta {
    id: "PY026",
    name: "network-await-without-deadline",
    category: Category::MissingTimeout,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "An awaited aiohttp request, `asyncio.open_connection` or stream read with no timeout in the call, the session, or an enclosing `asyncio.timeout`/`wait_for`.",
    docs: r#"
Awaits that wait on a network peer with nothing bounding them:

- aiohttp requests (`session.get/post/...`) whose timeout does not bound
  a stalled response: `timeout=None` on the call (which switches aiohttp's
  limit off), or a `ClientTimeout` with only `connect`/`sock_connect` (on
  the call or on a session this file builds);
- aiohttp requests with no `timeout=` on a session this file builds
  without one (or `aiohttp.request(...)`): aiohttp then applies its
  default, 5 minutes in total, far longer than any caller waits (reported
  at low severity: bounded, only too late);
- `asyncio.open_connection(...)` (not `open_unix_connection`: a local
  socket's connect completes or fails at once; nor `sock=` a socket
  already connected, without `ssl`: it only wraps it) and `StreamReader.read/readline/
  readexactly/readuntil` (also on a connection opened under
  `asyncio.wait_for`, whose deadline ends with the connect; not in a
  framing helper that reads a stream its caller passes in, as a parameter
  or to the constructor of its class
  (`self.reader`, set only from an `__init__` parameter): the caller owns
  that connection and its deadline; a server handler's reader is always
  checked; nor a reader the file builds itself, `asyncio.StreamReader()`,
  in a file that connects one to a pipe with `connect_read_pipe`, nor the
  stdout or stderr of a child the file starts with
  `create_subprocess_exec`: it reads standard input or a local process,
  where waiting for the next line is the point).

A call in one branch of an `if` whose other branch makes the same call
under a deadline (`if self.timeout: .. wait_for(open_connection(..),
self.timeout) else: .. open_connection(..)`) is not reported either: the
timeout is configurable, and `None` is the caller's choice.

A request is matched to the session bound to its receiver's name in the
same function (when the function binds that name to several, the one
whose `async with` encloses the request), else, for a module variable (`global SESSION` in the
function that builds it), to the sessions assigned to that variable,
else to the weakest session of the file; a session the
function receives as a parameter is the caller's, with the caller's
configuration, and is not reported (unless the file's own code calls
that function with a session it built); in a file that
builds no session, the session comes from elsewhere with a configuration
we cannot see, and is not reported. An enclosing `async with asyncio.timeout(...)` (or `asyncio.timeout_at`,
`async_timeout`, anyio/trio `fail_after`/`move_on_after`, or a context
manager of the project named as a timeout and given a duration, such as
`from .utils import asyncio_timeout`, which a utility module picks by
Python version) or an `asyncio.wait_for(..., t)` counts as a deadline. So does a private coroutine of the file whose every use is a call run
under one (`await asyncio.wait_for(self._roundtrip(pdu), self.timeout)`),
or made only by such private coroutines, up to three calls up; in a
program (a file with an `if __name__ == "__main__":` block) its module
functions count as its own too (`await asyncio.wait_for(handle_handshake(
reader, writer), timeout=HANDSHAKE_TIMEOUT)`). So does an owner that
closes the connection: a server handler that stores its writer on an
object (`sess.writer = writer`) whose writer another method closes
(`sess.writer.close()` in `unregister`) reads only as long as the owner
lets it.
So does the loop of a background listener its object owns: a read in a
loop of a coroutine the file starts as a task kept on the object
(`self._recv_task = asyncio.create_task(self._recv_loop())`) that a
method cancels, or in a helper only such loops call; waiting for the
peer's next message is its job, the requests made on the connection
carry their own deadlines, and the owner ends it. A listener that is
only awaited, never cancelled, stays reported.

## Why

An await with no deadline is a promise to wait forever. Peers hang half
open, load balancers drop connections silently, and a slow dependency
makes every request that touches it pile up behind it, holding its memory
and connections, until the service runs out of both.

## Example

```python
import asyncio

async def read_banner(host):
    reader, writer = await asyncio.open_connection(host, 25)
    banner = await reader.readline()
    writer.close()
    return banner
```

## Fix

Put one deadline around the whole operation.

```python
import asyncio

async def read_banner(host):
    async with asyncio.timeout(5):
        reader, writer = await asyncio.open_connection(host, 25)
        banner = await reader.readline()
    writer.close()
    return banner
```
"#,
    examples: &EXAMPLES,
};

const AIOHTTP_REQUESTS: &[&str] = &[
    "aiohttp.ClientSession.get",
    "aiohttp.ClientSession.post",
    "aiohttp.ClientSession.put",
    "aiohttp.ClientSession.patch",
    "aiohttp.ClientSession.delete",
    "aiohttp.ClientSession.head",
    "aiohttp.ClientSession.options",
    "aiohttp.ClientSession.request",
    "aiohttp.ClientSession.ws_connect",
    "aiohttp.request",
];

/// Connections opened over the network. A Unix socket's connect is not one:
/// the kernel completes it as soon as the listener's backlog takes it, or
/// refuses it at once; the reads that follow are what can wait on the peer.
const CONNECTIONS: &[&str] = &["asyncio.open_connection"];

const STREAM_READS: &[&str] = &["read", "readline", "readexactly", "readuntil"];

impl Rule for NetworkAwaitWithoutDeadline {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        // The calls that can be reported: aiohttp requests, connections
        // opened, stream reads (the checks below tell them apart).
        let candidates =
            cx.calls_to_or_named(&[AIOHTTP_REQUESTS, CONNECTIONS].concat(), STREAM_READS);
        if candidates.is_empty() {
            return;
        }
        let sessions = sessions(cx);
        let readers = stream_readers(cx);
        for (id, c) in candidates {
            let e = cx.expr(id);
            if matches!(cx.tree.expr_parent(id), Parent::Detached) {
                continue;
            }
            let f = cx.func_of(id);
            if !cx.func(f).is_async || cx.func(f).is_test {
                continue;
            }
            // Awaited directly or used as `async with session.get(...)`.
            let awaited = cx.is_awaited(id) || is_async_with_ctx(cx, id);
            if !awaited
                || under_deadline(cx, id, false)
                || c.args.iter().any(|a| a.spread)
                || bounded_in_other_branch(cx, id, c)
            {
                continue;
            }
            let t = c.target.as_deref().unwrap_or("");
            let limit = if AIOHTTP_REQUESTS.contains(&t) {
                match request_limit(cx, c, t, &sessions) {
                    Limit::Set => continue,
                    gap => gap,
                }
            } else if c.kwarg("timeout").is_some_and(|t| !is_none(cx, t)) {
                continue;
            } else if CONNECTIONS.contains(&t) {
                // `open_connection(sock=s)` with no TLS wraps a socket
                // already connected: there is no peer to wait for.
                if c.kwarg("sock").is_some() && c.kwarg("ssl").is_none_or(|v| is_none(cx, v)) {
                    continue;
                }
                Limit::Missing("opening a connection")
            } else if STREAM_READS.contains(&c.name.as_str())
                && c.receiver.is_some_and(|r| is_reader(cx, r, &readers))
                && !is_read_wrapper(cx.func(f))
                && !c.receiver.is_some_and(|r| {
                    is_helper_param(cx, f, r, &readers) || is_constructor_param(cx, f, r)
                })
                && !owner_closes_writer(cx, f)
                && !c
                    .receiver
                    .is_some_and(|r| reads_a_pipe(cx, r) || reads_a_child(cx, r))
            {
                Limit::Missing("reading from a stream")
            } else {
                continue;
            };
            // Last, as they read the whole file: the callers of `f`, and
            // the task that runs it.
            if only_run_under_deadline(cx, f)
                || (matches!(limit, Limit::Missing("reading from a stream"))
                    && background_listener(cx, f, id))
            {
                continue;
            }
            let code = cx.snippet(e.span);
            const STALL: &str = "if the peer stops answering this task waits forever, holding its connection, and so does everything awaiting it";
            let (message, fix) = match limit {
                // A connect does end on its own, only much too late: the
                // kernel gives up on a host that never answers after its SYN
                // retries (about two minutes with Linux's defaults), and
                // asyncio bounds a TLS handshake at 60 s.
                Limit::Missing(what @ "opening a connection") => (
                    format!(
                        "`{code}` is {what} with no deadline: if the host never answers, this task waits until the operating system gives up on the connect (about two minutes on Linux, plus up to 60 s for a TLS handshake), and so does everything awaiting it"
                    ),
                    "wrap the operation in `async with asyncio.timeout(...)` (one budget for the whole exchange) or `asyncio.wait_for(..., timeout)`",
                ),
                Limit::Missing(what) => (
                    format!("`{code}` is {what} with no deadline: {STALL}"),
                    "wrap the operation in `async with asyncio.timeout(...)` (one budget for the whole exchange) or `asyncio.wait_for(..., timeout)`",
                ),
                Limit::AiohttpDefault => (
                    format!(
                        "`{code}` is an aiohttp request with no timeout of its own, on a session built without one: it gets aiohttp's default of 5 minutes in total, so a peer that stalls holds this task and its connection for 5 minutes, and everything awaiting it waits as long"
                    ),
                    "pass a `timeout=aiohttp.ClientTimeout(total=...)` that fits the caller's budget to the session or the call, or wrap the exchange in `async with asyncio.timeout(...)`",
                ),
                Limit::Off(whose) => (
                    format!("`{code}` has no deadline ({whose} turns aiohttp's off): {STALL}"),
                    "give the timeout a `total` (or `sock_read`) that fits the caller's budget, or wrap the exchange in `async with asyncio.timeout(...)`",
                ),
                Limit::ConnectOnly(whose) => (
                    format!(
                        "`{code}` is an aiohttp request whose timeout ({whose}) bounds only connecting, with no `total` or `sock_read`: once connected, {STALL}"
                    ),
                    "give the `ClientTimeout` a `total` (or `sock_read`) as well, or wrap the exchange in `async with asyncio.timeout(...)`",
                ),
                Limit::Set => continue,
            };
            let mut finding = cx.finding(&META, e.span, message, fix);
            if limit == Limit::AiohttpDefault {
                // Bounded, only far too late for most callers: of 237 read
                // over the precision rounds, 212 were judged debatable.
                finding.severity = Severity::Low;
            }
            out.push(finding);
        }
    }
}

/// A private coroutine of the file (or a module function of a program, a
/// file with a `__main__` block) whose every use is a call that runs
/// under a deadline (`await asyncio.wait_for(self._roundtrip(pdu),
/// self.timeout)`), or sits in a private coroutine that is only run so,
/// up to three calls up (`request()` → `wait_for(self._send_and_read())`
/// → `self._read_body()`): the whole exchange it makes has one.
fn only_run_under_deadline(cx: &FileCx, f: FuncId) -> bool {
    only_run_under_deadline_within(cx, f, 3)
}

fn only_run_under_deadline_within(cx: &FileCx, f: FuncId, depth: u32) -> bool {
    let func = cx.func(f);
    let name = &func.name;
    // A private function, or a module function of a program (a file with
    // a `__main__` block) rather than of a library others import.
    let own = (name.starts_with('_') && !name.starts_with("__"))
        || (func.class.is_none()
            && func.parent.is_none_or(|p| p.0 == 0)
            && crate::python::common::main_guard(cx).is_some());
    if !own {
        return false;
    }
    let mut calls = 0;
    for (i, x) in cx.model.exprs.iter().enumerate() {
        let named = match &x.kind {
            ExprKind::Name { id, .. } => id == name,
            ExprKind::Attr { name: n, .. } => n == name,
            _ => false,
        };
        if !named {
            continue;
        }
        let id = ExprId(i as u32);
        let call = match cx.tree.expr_parent(id) {
            Parent::Expr(p) if cx.call(p).is_some_and(|c| c.func == id) => p,
            _ => return false,
        };
        match cx.call(call).and_then(|c| cx.callee_in_file(c)) {
            Some(g) if g == f => {}
            // Another function of the same name (each helper's own nested
            // `async def _do():`).
            Some(_) => continue,
            None => return false,
        }
        let caller = cx.func_of(call);
        if !under_deadline(cx, call, false)
            && (depth == 0 || caller == f || !only_run_under_deadline_within(cx, caller, depth - 1))
        {
            return false;
        }
        calls += 1;
    }
    calls > 0
}

/// The read is the listening step of a background reader its object owns:
/// it sits in a loop of a coroutine the file starts as a task kept on the
/// object (`self._recv_task = asyncio.create_task(self._recv_loop())`) that
/// a method cancels (`self._recv_task.cancel()`, or a loop cancelling the
/// tasks it lists), or in a private helper only such loops call. Waiting
/// for the peer's next message is that task's job: requests on the
/// connection carry their own deadlines, and the owner ends the listener.
/// A listener nobody cancels (only awaited) stays reported.
fn background_listener(cx: &FileCx, f: FuncId, read: ExprId) -> bool {
    let in_loop = |e: ExprId| {
        cx.tree
            .enclosing_stmt(e)
            .is_some_and(|s| crate::python::common::enclosing_loop(cx, s).is_some())
    };
    if in_loop(read) && owned_cancelled_task(cx, f) {
        return true;
    }
    // `receive_once` called only from loops of owned listeners.
    let name = &cx.func(f).name;
    if !name.starts_with('_') && cx.func(f).class.is_none() {
        return false;
    }
    let callers: Vec<ExprId> = cx
        .calls_named(&[name.as_str()])
        .iter()
        .filter(|(_, c)| cx.callee_in_file(c) == Some(f))
        .map(|&(e, _)| e)
        .collect();
    !callers.is_empty()
        && callers
            .iter()
            .all(|&e| in_loop(e) && owned_cancelled_task(cx, cx.func_of(e)))
}

/// The file starts `f` as a task kept in an attribute of the object
/// (`self.X = create_task(self.f(..))`) and some function cancels it: calls
/// `cancel()` on `self.X`, or cancels tasks while naming `self.X` (`for t
/// in (self._ping, self.X): t.cancel()`).
fn owned_cancelled_task(cx: &FileCx, f: FuncId) -> bool {
    let name = &cx.func(f).name;
    let mut slots: Vec<String> = Vec::new();
    for (i, x) in cx.model.exprs.iter().enumerate() {
        let ExprKind::Call(c) = &x.kind else { continue };
        if !crate::python::common::is_task_spawn(cx, c) {
            continue;
        }
        let runs_f = c.positional(0).is_some_and(|a| {
            cx.call(cx.model.strip(a))
                .is_some_and(|k| k.name == *name && cx.callee_in_file(k) == Some(f))
        });
        if !runs_f {
            continue;
        }
        if let Parent::Stmt(s) = cx.tree.expr_parent(ExprId(i as u32))
            && let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind
        {
            slots.extend(
                targets
                    .iter()
                    .filter_map(|&t| cx.model.dotted(t))
                    .filter(|d| d.starts_with("self.")),
            );
        }
    }
    !slots.is_empty()
        && cx.model.function_ids().any(|g| {
            let direct = slots.iter().any(|slot| {
                crate::python::common::cancels_of(cx, g, slot)
                    .next()
                    .is_some()
            });
            direct
                || (cx
                    .body_calls(g)
                    .filter_map(|e| cx.call(e))
                    .any(|c| c.name == "cancel" && c.receiver.is_some())
                    && crate::python::common::exprs_of(cx, &[g].into_iter().collect())
                        .into_iter()
                        .any(|e| cx.model.dotted(e).is_some_and(|d| slots.contains(&d))))
        })
}

/// The call sits in one branch of an `if` whose other branch makes the
/// same call under a deadline (`if self.timeout: await
/// asyncio.wait_for(open_connection(..), self.timeout) else: await
/// open_connection(..)`): going without one is the configuration's choice,
/// made by whoever set the timeout to `None`.
fn bounded_in_other_branch(cx: &FileCx, call: ExprId, c: &Call) -> bool {
    let Some(target) = c.target.as_deref() else {
        return false;
    };
    let Some(s) = cx.tree.enclosing_stmt(call) else {
        return false;
    };
    let Some(parent) = cx.tree.stmt_ancestors(s).next() else {
        return false;
    };
    let StmtKind::If { then, orelse, .. } = &cx.stmt(parent).kind else {
        return false;
    };
    let other = if then.contains(&s) {
        orelse
    } else if orelse.contains(&s) {
        then
    } else {
        return false;
    };
    unsnarl_model::walk::exprs_in_block(cx.model, other)
        .into_iter()
        .any(|x| {
            cx.call(x)
                .is_some_and(|k| k.target.as_deref() == Some(target))
                && under_deadline(cx, x, false)
        })
}

/// What bounds an awaited network call.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Limit {
    /// A deadline we can see, or a configuration we cannot (a value from
    /// elsewhere).
    Set,
    /// Nothing at all (`what` is the operation).
    Missing(&'static str),
    /// aiohttp's default `ClientTimeout(total=300, sock_connect=30)`.
    AiohttpDefault,
    /// A timeout that turns aiohttp's limit off (`whose` names it).
    Off(&'static str),
    /// A `ClientTimeout` with only `connect`/`sock_connect`.
    ConnectOnly(&'static str),
}

/// The limit of an aiohttp request: its own `timeout=` (where `None` means
/// no limit at all, unlike on a session), else its session's.
/// `aiohttp.request` makes its own session with the default.
fn request_limit(cx: &FileCx, c: &Call, target: &str, sessions: &Sessions) -> Limit {
    match c.kwarg("timeout") {
        Some(t) if is_none(cx, t) => Limit::Off("`timeout=None`"),
        Some(t) => client_timeout_limit(cx, t, Owner::Call),
        None if target == "aiohttp.request" => Limit::AiohttpDefault,
        None => sessions.limit_for(cx, c),
    }
}

/// The `aiohttp.ClientSession(...)` this file builds, with their limits.
struct Sessions {
    /// Per session: the function that builds it, the name it is bound to
    /// (`async with ... as s`, `s = ...`), its limit, and the `with`
    /// statement that binds it, if one does.
    built: Vec<(FuncId, Option<Str>, Limit, Option<StmtId>)>,
    /// Per module variable a session is assigned to (`global S; S =
    /// ClientSession(...)`), the weakest limit assigned to it.
    globals: Vec<(Str, Limit)>,
    /// The weakest limit of them all (`Set` when there are none).
    weakest: Limit,
}

impl Sessions {
    /// The limit of the session a request is made on: the one bound to the
    /// receiver's name in the same function when there is one, else the
    /// weakest of the file; a parameter is the caller's session, with its
    /// configuration, unless the file passes one of its own there. A session handed in from elsewhere, in a file
    /// that builds none, has a configuration we cannot see: `Set`.
    fn limit_for(&self, cx: &FileCx, c: &Call) -> Limit {
        if let Some(ExprKind::Name { id, .. }) = c.receiver.map(|r| &cx.expr(r).kind) {
            let f = cx.func_of(c.func);
            let own: Vec<_> = self
                .built
                .iter()
                .filter(|(g, name, _, _)| *g == f && name.as_deref() == Some(id.as_str()))
                .collect();
            if let [(_, _, limit, _)] = own.as_slice() {
                return *limit;
            }
            // Several under that name: the `async with` around the call
            // (the innermost) says which one it is.
            let at = cx.expr(c.func).span;
            if let Some((_, _, limit, _)) = own
                .iter()
                .filter(|(_, _, _, w)| w.is_some_and(|w| cx.stmt(w).span.contains(at)))
                .max_by_key(|(_, _, _, w)| w.map(|w| cx.stmt(w).span.start))
            {
                return *limit;
            }
            // A module variable holds whatever its assignments built,
            // whichever function made them.
            if let Some(ExprKind::Name {
                resolved: Some(r), ..
            }) = c.receiver.map(|r| &cx.expr(r).kind)
                && let Some((_, limit)) = self.globals.iter().find(|(g, _)| g == r)
            {
                return *limit;
            }
            // A session the caller passes in (`websession:
            // aiohttp.ClientSession`) has the caller's configuration,
            // whatever this file builds for its own fallback, unless the
            // file's own code calls this function with a session it built.
            if cx.func(f).params.iter().any(|p| p.name == *id) && !self.passed_to(cx, f) {
                return Limit::Set;
            }
        }
        self.weakest
    }

    /// Some call of `f` in this file passes a session the file built, by
    /// the name the calling function bound it to (`async with
    /// ClientSession() as session: await fetch(session)`).
    fn passed_to(&self, cx: &FileCx, f: FuncId) -> bool {
        cx.calls_named(&[cx.func(f).name.as_str()])
            .into_iter()
            .any(|(e, c)| {
                let caller = cx.func_of(e);
                c.args.iter().any(|a| {
                    cx.model.name_of(a.value).is_some_and(|n| {
                        self.built
                            .iter()
                            .any(|(g, name, _, _)| *g == caller && name.as_deref() == Some(n))
                    })
                })
            })
    }
}

/// A session given `timeout=None` or nothing gets aiohttp's default.
fn sessions(cx: &FileCx) -> Sessions {
    let mut built = Vec::new();
    let mut globals: Vec<(Str, Limit)> = Vec::new();
    let mut weakest = Limit::Set;
    for (id, c) in cx.calls_to(&["aiohttp.ClientSession"]) {
        let limit = match c.kwarg("timeout") {
            _ if c.args.iter().any(|a| a.spread) => Limit::Set,
            Some(t) if !is_none(cx, t) => client_timeout_limit(cx, t, Owner::Session),
            _ => Limit::AiohttpDefault,
        };
        weakest = weaker(weakest, limit);
        if let Some(g) = crate::util::bound_target(cx, id).and_then(|t| module_variable(cx, t)) {
            match globals.iter_mut().find(|(n, _)| *n == g) {
                Some((_, l)) => *l = weaker(*l, limit),
                None => globals.push((g, limit)),
            }
        }
        let with_stmt = match cx.tree.expr_parent(id) {
            unsnarl_model::walk::Parent::Stmt(w)
                if matches!(cx.stmt(w).kind, StmtKind::With { .. }) =>
            {
                Some(w)
            }
            _ => None,
        };
        built.push((cx.func_of(id), bound_name(cx, id), limit, with_stmt));
    }
    Sessions {
        built,
        globals,
        weakest,
    }
}

/// The weaker of two limits: no limit, or a connect-only one, wins.
fn weaker(a: Limit, b: Limit) -> Limit {
    match (a, b) {
        (Limit::Off(_) | Limit::ConnectOnly(_), _) | (_, Limit::Set) => a,
        _ => b,
    }
}

/// The module variable an assignment target names (`S` at module level,
/// or in a function that declares `global S`), fully qualified.
fn module_variable(cx: &FileCx, target: ExprId) -> Option<Str> {
    let ExprKind::Name {
        id,
        resolved: Some(r),
    } = &cx.expr(target).kind
    else {
        return None;
    };
    let qualified = if cx.model.module.is_empty() {
        id.to_string()
    } else {
        format!("{}.{id}", cx.model.module)
    };
    (r.as_str() == qualified).then(|| r.clone())
}

/// The name a value is bound to: `async with <value> as name` or
/// `name = <value>`.
fn bound_name(cx: &FileCx, value: ExprId) -> Option<Str> {
    match &cx.expr(crate::util::bound_target(cx, value)?).kind {
        ExprKind::Name { id, .. } => Some(id.clone()),
        _ => None,
    }
}

/// Whose `timeout=` it is.
#[derive(Clone, Copy)]
enum Owner {
    Call,
    Session,
}

/// What a `timeout=` value bounds: an `aiohttp.ClientTimeout(...)` built
/// in the call or bound to a name by one assignment in this file. Anything
/// else (a number, a value from elsewhere) counts as set.
fn client_timeout_limit(cx: &FileCx, value: ExprId, owner: Owner) -> Limit {
    let Some(c) = client_timeout_call(cx, value) else {
        return Limit::Set;
    };
    let bounds = |a: Option<ExprId>| a.is_some_and(|a| !is_none(cx, a));
    if c.args.iter().any(|a| a.spread)
        || bounds(c.positional(0))
        || bounds(c.kwarg("total"))
        || bounds(c.kwarg("sock_read"))
    {
        Limit::Set
    } else if bounds(c.kwarg("connect")) || bounds(c.kwarg("sock_connect")) {
        Limit::ConnectOnly(match owner {
            Owner::Call => "the call's",
            Owner::Session => "the session's",
        })
    } else {
        Limit::Off(match owner {
            Owner::Call => "the call's empty `ClientTimeout`",
            Owner::Session => "the session's empty `ClientTimeout`",
        })
    }
}

fn client_timeout_call<'a>(cx: &FileCx<'a>, value: ExprId) -> Option<&'a Call> {
    const CLIENT_TIMEOUT: &[&str] = &["aiohttp.ClientTimeout"];
    if let Some(c) = cx.call(value) {
        return (c.target.as_deref() == Some(CLIENT_TIMEOUT[0])).then_some(c);
    }
    let ExprKind::Name { id, .. } = &cx.expr(value).kind else {
        return None;
    };
    let mut bound = cx
        .calls_to(CLIENT_TIMEOUT)
        .into_iter()
        .filter(|&(call, _)| bound_name(cx, call).is_some_and(|n| n == *id));
    match (bound.next(), bound.next()) {
        (Some((_, c)), None) => Some(c),
        _ => None,
    }
}

fn is_async_with_ctx(cx: &FileCx, id: ExprId) -> bool {
    matches!(cx.tree.expr_parent(id), Parent::Stmt(s)
        if matches!(&cx.stmt(s).kind, StmtKind::With { items, is_async: true, .. }
            if items.iter().any(|it| it.ctx == id)))
}

/// Names bound to stream readers: the first of `reader, writer = await
/// asyncio.open_connection(...)`, and the first parameter of handlers
/// given to `asyncio.start_server`.
fn stream_readers(cx: &FileCx) -> HashSet<String> {
    let mut out = HashSet::new();
    let servers: &[&str] = &["asyncio.start_server", "asyncio.start_unix_server"];
    let opens: &[&str] = &["asyncio.open_connection", "asyncio.open_unix_connection"];
    for (id, c) in cx.calls_to(&[opens, servers].concat()) {
        match c.target.as_deref() {
            Some("asyncio.open_connection" | "asyncio.open_unix_connection") => {
                let Parent::Expr(mut aw) = cx.tree.expr_parent(id) else {
                    continue;
                };
                // `await asyncio.wait_for(asyncio.open_connection(..), t)`:
                // the deadline bounds the connect, not the reads after it.
                if cx.call(aw).is_some_and(|w| {
                    w.target.as_deref() == Some("asyncio.wait_for") && w.positional(0) == Some(id)
                }) {
                    let Parent::Expr(up) = cx.tree.expr_parent(aw) else {
                        continue;
                    };
                    aw = up;
                }
                let Parent::Stmt(s) = cx.tree.expr_parent(aw) else {
                    continue;
                };
                if let StmtKind::Assign { targets, .. } = &cx.stmt(s).kind
                    && let [t] = targets.as_slice()
                    && let ExprKind::Collection { elems, .. } = &cx.expr(*t).kind
                    && let Some(n) = elems.first().and_then(|&r| cx.model.dotted(r))
                {
                    out.insert(n);
                }
            }
            Some("asyncio.start_server" | "asyncio.start_unix_server") => {
                let Some(h) = c.positional(0) else { continue };
                let Some(name) = cx
                    .model
                    .resolved(h)
                    .map(str::to_string)
                    .or_else(|| cx.model.dotted(h))
                else {
                    continue;
                };
                if let Some(f) = cx
                    .model
                    .function_ids()
                    .find(|&f| cx.func(f).qualname == name || cx.func(f).name == name)
                    && let Some(p) = cx.func(f).params.first()
                {
                    out.insert(p.name.to_string());
                }
            }
            _ => {}
        }
    }
    out
}

/// A server handler that hands its connection's writer to an object
/// (`sess.writer = writer`) whose owner closes it elsewhere in the file
/// (`sess.writer.close()` in `unregister` or `__aexit__`): closing the
/// writer ends any read still pending on the connection, so the session's
/// reads last as long as the owner lets them.
fn owner_closes_writer(cx: &FileCx, f: FuncId) -> bool {
    let Some(writer) = cx.func(f).params.get(1).map(|p| p.name.as_str()) else {
        return false;
    };
    let fields: Vec<&str> = cx
        .body_stmts(f)
        .iter()
        .filter_map(|&s| match &cx.stmt(s).kind {
            StmtKind::Assign {
                targets,
                value: Some(v),
                ..
            } if cx.model.name_of(*v) == Some(writer) => {
                targets.iter().find_map(|&t| match &cx.expr(t).kind {
                    ExprKind::Attr { name, .. } => Some(name.as_str()),
                    _ => None,
                })
            }
            _ => None,
        })
        .collect();
    !fields.is_empty()
        && cx.model.exprs.iter().enumerate().any(|(i, e)| {
            matches!(&e.kind, ExprKind::Call(c)
                if c.name == "close"
                    && cx.func_of(ExprId(i as u32)) != f
                    && c.receiver.is_some_and(|r| matches!(&cx.expr(r).kind,
                        ExprKind::Attr { name, .. } if fields.contains(&name.as_str()))))
        })
}

/// A method that is itself a read primitive (`receive`, `read_frame`):
/// the deadline belongs to its caller.
fn is_read_wrapper(f: &Function) -> bool {
    f.class.is_some()
        && matches!(
            f.name.trim_start_matches('_'),
            "receive"
                | "recv"
                | "read"
                | "readline"
                | "readexactly"
                | "readuntil"
                | "receive_some"
                | "recv_into"
                | "read_frame"
        )
}

/// The reader is a parameter of the function (`async def read_line(stream:
/// StreamReader)`), not the connection a server handler was given: a
/// framing helper, whose callers own the connection and its deadline (one
/// budget for the whole exchange), or feed it a subprocess pipe.
fn is_helper_param(cx: &FileCx, f: FuncId, r: ExprId, readers: &HashSet<String>) -> bool {
    cx.model
        .name_of(r)
        .is_some_and(|n| !readers.contains(n) && cx.func(f).params.iter().any(|p| p.name == n))
}

/// The reader is `self.reader`, set only from a parameter of the class's
/// `__init__`: a framing class around a stream its creator passes in, who
/// owns the connection and its deadline (as for a helper's parameter).
fn is_constructor_param(cx: &FileCx, f: FuncId, r: ExprId) -> bool {
    let Some(d) = cx.model.dotted(r) else {
        return false;
    };
    let (Some(attr), Some(class)) = (d.strip_prefix("self."), cx.func(f).class.as_ref()) else {
        return false;
    };
    if attr.contains('.') {
        return false;
    }
    let Some(init) = cx
        .model
        .function_ids()
        .find(|&g| cx.func(g).name == "__init__" && cx.func(g).class.as_ref() == Some(class))
    else {
        return false;
    };
    let params = &cx.func(init).params;
    let is_it = |t: ExprId| cx.model.dotted(t).as_deref() == Some(d.as_str());
    let mut from_param = false;
    for st in &cx.model.stmts {
        let StmtKind::Assign { targets, value, .. } = &st.kind else {
            continue;
        };
        for &t in targets {
            if is_it(t) {
                let param = value
                    .and_then(|v| cx.model.name_of(v))
                    .is_some_and(|n| n != "self" && params.iter().any(|p| p.name == n));
                if !param {
                    return false;
                }
                from_param = true;
            } else if let ExprKind::Collection { elems, .. } = &cx.expr(t).kind
                && elems.iter().any(|&e| is_it(e))
            {
                // `self.reader, _ = await asyncio.open_connection(..)`.
                return false;
            }
        }
    }
    from_param
}

/// A reader the file builds itself (`asyncio.StreamReader()`; every other
/// assignment of it a `None`) in a file that connects one to a pipe
/// (`loop.connect_read_pipe(lambda: protocol, sys.stdin)`): it reads what a
/// local process or the user writes, no network peer, and waiting for the
/// next line of input is its job.
fn reads_a_pipe(cx: &FileCx, r: ExprId) -> bool {
    let Some(d) = cx.model.dotted(r) else {
        return false;
    };
    let built = |v: ExprId| {
        cx.call(cx.model.strip(v))
            .is_some_and(|c| c.target.as_deref() == Some("asyncio.StreamReader"))
    };
    !cx.calls_named(&["connect_read_pipe"]).is_empty() && only_assigned(cx, &d, built)
}

/// `d` is assigned a value `made` accepts, and besides only reset to `None`
/// (`self.stdin = None` in `__init__`).
fn only_assigned(cx: &FileCx, d: &str, made: impl Fn(ExprId) -> bool) -> bool {
    let values: Vec<Option<ExprId>> = cx.model.values_assigned_to(d).collect();
    values.iter().any(|v| v.is_some_and(&made))
        && values
            .iter()
            .all(|v| v.is_some_and(|v| made(v) || is_none(cx, v)))
}

/// The stdout or stderr pipe of a child process the file starts
/// (`proc.stdout`, or `self._stdout = self._process.stdout` after `await
/// asyncio.create_subprocess_exec(..)`, every other assignment a `None`):
/// a local process, no network peer; waiting for its next output is the
/// point, and killing the child ends the read.
fn reads_a_child(cx: &FileCx, r: ExprId) -> bool {
    let pipe = |v: ExprId| {
        matches!(&cx.expr(cx.model.strip(v)).kind, ExprKind::Attr { obj, name, .. }
            if matches!(name.as_str(), "stdout" | "stderr")
                && cx.sema.type_of(*obj) == Some("asyncio.subprocess.Process"))
    };
    if pipe(r) {
        return true;
    }
    cx.model
        .dotted(r)
        .is_some_and(|d| only_assigned(cx, &d, pipe))
}

fn is_reader(cx: &FileCx, r: ExprId, readers: &HashSet<String>) -> bool {
    if cx.sema.type_of(r) == Some("asyncio.StreamReader") {
        return true;
    }
    cx.model.dotted(r).is_some_and(|d| readers.contains(&d))
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import asyncio

async def read_banner(host):
    reader, writer = await asyncio.open_connection(host, 25)  # expect
    banner = await reader.readline()  # expect
    writer.close()
    return banner

async def ask_worker(path, request):
    reader, writer = await asyncio.open_unix_connection(path)
    writer.write(request)
    await writer.drain()
    reply = await reader.readline()  # expect
    writer.close()
    return reply
"#,
        r#"
import aiohttp

async def fetch(url):
    async with aiohttp.ClientSession() as session:
        async with session.get(url) as resp:  # expect
            return await resp.text()

async def handler(client, url):
    data = await client.get(url)
    return data
"#,
        r#"
import aiohttp

CONNECT_ONLY = aiohttp.ClientTimeout(connect=5)

async def poll(url):
    async with aiohttp.ClientSession(timeout=CONNECT_ONLY) as session:
        async with session.get(url) as resp:  # expect
            return await resp.json()

async def no_limit(url):
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
        return await session.get(url, timeout=None)  # expect

async def one_shot(url):
    async with aiohttp.request("GET", url) as resp:  # expect
        return await resp.read()
"#,
        r#"
import asyncio

async def handle(reader, writer):
    line = await reader.readline()  # expect
    writer.write(line)

async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
    data = await reader.read(1024)  # expect
    writer.write(data)

async def main():
    server = await asyncio.start_server(handle, "0.0.0.0", 8000)
    other = await asyncio.start_server(echo, "0.0.0.0", 8001)
"#,
        r#"
import asyncio

class FrameClient:
    def __init__(self, host, port, reader: asyncio.StreamReader):
        self.host = host
        self.port = port
        self.reader = reader

    async def reconnect(self):
        self.reader, _ = await asyncio.open_connection(self.host, self.port)  # expect

    async def get_frame(self):
        header = await self.reader.readexactly(7)  # expect
        return header
"#,
        r#"
import asyncio

class ControlServer:
    async def __aenter__(self):
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc):
        # Closing the server does not close accepted connections.
        self._server.close()

    async def _handle(self, reader, writer):
        self.last_writer = writer
        while True:
            frame = await reader.readexactly(8)  # expect
            self.on_frame(frame)
"#,
        r#"
# With TLS the handshake still waits on the peer.
import asyncio
import socket


async def connect(addr, ctx):
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)
    await asyncio.wait_for(loop.sock_connect(sock, addr), timeout=5)
    return await asyncio.open_connection(sock=sock, ssl=ctx)  # expect
"#,
        r#"
import asyncio
import sys


class Bridge:
    async def pump(self, host, port):
        loop = asyncio.get_running_loop()
        stdin = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
        reader, writer = await asyncio.open_connection(host, port)  # expect
        while line := await stdin.readline():
            writer.write(line)
            await writer.drain()
            reply = await reader.readline()  # expect
            sys.stdout.write(reply.decode())
"#,
        r#"
import asyncio

from .utils import asyncio_timeout


async def verify(host):
    async with asyncio_timeout(None):
        reader, writer = await asyncio.open_connection(host, 8081)  # expect
    writer.close()
"#,
        r#"
import aiohttp

# The helper's session comes from this file, built without a timeout.
async def fetch(session: aiohttp.ClientSession, url):
    async with session.get(url) as resp:  # expect
        return await resp.json()

async def main():
    async with aiohttp.ClientSession() as session:
        return await fetch(session, "http://example.org/get")
"#,
        r#"
import asyncio

# One caller skips the deadline: that exchange can wait forever.
class Probe:
    async def _hello(self, host):
        reader, writer = await asyncio.open_connection(host, 25)  # expect
        return await asyncio.wait_for(reader.readline(), 5)

    async def check(self, host):
        return await asyncio.wait_for(self._hello(host), 10)

    async def check_slow(self, host):
        return await self._hello(host)
"#,
        r#"
import asyncio

class Bridge:
    async def connect(self, host, port):
        async with asyncio.timeout(10):
            self._reader, self._writer = await asyncio.open_connection(host, port)
        self._reader_future = asyncio.ensure_future(self._reader_loop())

    async def reset(self):
        # Waits for the listener but never stops it: a silent peer hangs reset().
        self._resetting = True
        await self._reader_future

    async def _reader_loop(self):
        while not self._resetting:
            data = await self._reader.read(100)  # expect
            self._handle(data)
"#,
        r#"
import asyncio

async def query_status(host):
    # The deadline bounds the connect only; the reply can take forever.
    reader, writer = await asyncio.wait_for(asyncio.open_connection(host, 8888), 5)
    writer.write(b"STATUS\r\n")
    await writer.drain()
    line = await reader.readline()  # expect
    writer.close()
    return line
"#,
        r#"
# The module's session is rebuilt at login without a timeout; the file's
# other session, with one, does not bound it.
import aiohttp

SESSION = None


async def login():
    global SESSION
    SESSION = aiohttp.ClientSession()


async def search(url):
    async with SESSION.get(url) as resp:  # expect
        return await resp.text()


async def ping(url):
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as s:
        return await s.get(url)
"#,
    ],
    pass: &[
        r#"
import asyncio

HANDSHAKE_TIMEOUT = 10


async def handle_handshake(reader, writer):
    header = await reader.readexactly(64)
    return header


async def handle_client(reader, writer):
    # The whole handshake runs under one deadline.
    header = await asyncio.wait_for(handle_handshake(reader, writer), timeout=HANDSHAKE_TIMEOUT)
    writer.write(header)


async def main():
    server = await asyncio.start_server(handle_client, "0.0.0.0", 4433)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
"#,
        r#"
import asyncio

# The body is read by a helper of a helper that `request` bounds as a whole.
class ProxyCarrier:
    async def connect(self, host, port):
        self._reader, self._writer = await asyncio.wait_for(
            asyncio.open_connection(host, port), 10
        )

    async def request(self, payload, timeout=10):
        return await asyncio.wait_for(self._send_and_read(payload), timeout)

    async def _send_and_read(self, payload):
        self._writer.write(payload)
        await self._writer.drain()
        length = int((await self._reader.readline()).split()[1])
        return await self._read_body(length)

    async def _read_body(self, length):
        return await self._reader.readexactly(length)
"#,
        r#"
import asyncio

class ElectrumClient:
    async def connect(self, host, port):
        async with asyncio.timeout(10):
            self._reader, self._writer = await asyncio.open_connection(host, port)
        self._recv_task = asyncio.create_task(self._recv_loop())

    async def close(self):
        # The owner ends the listener; requests carry their own deadlines.
        for task in (self._recv_task,):
            if task:
                task.cancel()
        self._writer.close()

    async def _recv_loop(self):
        # A background listener: waiting for the next push is its job.
        while True:
            data = await self._reader.read(65536)
            if not data:
                break
            self._dispatch(data)

    async def call(self, method, timeout=30):
        fut = self._send(method)
        return await asyncio.wait_for(fut, timeout)
"#,
        r#"
import asyncio

# Every exchange runs under the client's timeout.
class ModbusClient:
    def __init__(self, host, port, timeout=5.0):
        self.host, self.port, self.timeout = host, port, timeout
        self._lock = asyncio.Lock()

    async def _roundtrip(self, pdu):
        reader, writer = await asyncio.open_connection(self.host, self.port)
        writer.write(pdu)
        header = await reader.readexactly(7)
        return header + await reader.readexactly(header[5] - 1)

    async def request(self, pdu):
        async with self._lock:
            return await asyncio.wait_for(self._roundtrip(pdu), self.timeout)
"#,
        r#"
import asyncio


class Connection:
    def __init__(self, host, port, timeout=None):
        self.host, self.port, self.timeout = host, port, timeout

    async def connect(self):
        if self.timeout:
            self.reader, self.writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port), self.timeout
            )
        else:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        return self
"#,
        r#"
import aiohttp

# The caller's session has the caller's timeout; the fallback session is
# this file's own (reported on its own request when it has no timeout).
async def get_request(url, websession: aiohttp.ClientSession | None = None):
    if websession is not None:
        async with websession.get(url) as r:
            return await r.json()
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
        async with session.get(url) as r:
            return await r.json()

async def post_request(url, data, websession=None):
    async with aiohttp.ClientSession() as own:
        pass
    async with websession.post(url, json=data) as r:
        return await r.json()
"#,
        r#"
import asyncio

from .utils import asyncio_timeout

SOCKET_TIMEOUT = 10


async def verify(host):
    async with asyncio_timeout(SOCKET_TIMEOUT):
        reader, writer = await asyncio.open_connection(host, 8081)
    writer.close()
"#,
        r#"
import asyncio
import sys


class IrcCat:
    def __init__(self):
        self.async_stdin = None

    async def process_stdin(self):
        loop = asyncio.get_running_loop()
        self.async_stdin = asyncio.StreamReader()
        reader_protocol = asyncio.StreamReaderProtocol(self.async_stdin)
        await loop.connect_read_pipe(lambda: reader_protocol, sys.stdin)
        while True:
            line = await self.async_stdin.readline()
            if not line:
                break
            await self.send(line.decode("utf-8"))
"#,
        r#"
import asyncio

async def ask_worker(path, request, timeout):
    reader, writer = await asyncio.open_unix_connection(path)
    writer.write(request)
    await writer.drain()
    reply = await asyncio.wait_for(reader.readline(), timeout)
    writer.close()
    return reply
"#,
        r#"
import asyncio

class FrameReader:
    def __init__(self, reader: asyncio.StreamReader):
        self.reader = reader
        self.lock = asyncio.Lock()

    async def get_frame(self):
        async with self.lock:
            header = await self.reader.readexactly(7)
            size = int.from_bytes(header[3:7], "big")
            body = await self.reader.readexactly(size + 1)
        return header + body
"#,
        r#"
import asyncio

# Framing helpers: the reader comes from the caller, which owns the
# connection and gives the whole exchange one deadline.
async def read_line(stream: asyncio.StreamReader) -> bytes:
    line = await stream.readline()
    return line.rstrip(b"\r\n")

async def read_frame(stream: asyncio.StreamReader) -> bytes:
    size = int.from_bytes(await stream.readexactly(4), "big")
    return await stream.readexactly(size)

async def handshake(host):
    async with asyncio.timeout(10):
        reader, writer = await asyncio.open_connection(host, 80)
        return await read_line(reader)
"#,
        r#"
import asyncio

async def read_banner(host):
    async with asyncio.timeout(5):
        reader, writer = await asyncio.open_connection(host, 25)
        banner = await reader.readline()
    return banner

async def wrapped(host):
    return await asyncio.wait_for(asyncio.open_connection(host, 25), timeout=3)
"#,
        r#"
import aiohttp

TIMEOUT = aiohttp.ClientTimeout(total=10)

async def fetch(url):
    async with aiohttp.ClientSession(timeout=TIMEOUT) as session:
        async with session.get(url) as resp:
            return await resp.text()

async def per_call(session, url):
    return await session.get(url, timeout=5)

async def read_bounded(url):
    slow_reads = aiohttp.ClientTimeout(connect=2, sock_read=10)
    async with aiohttp.ClientSession(timeout=slow_reads) as session:
        return await session.get(url)

async def call_overrides(url):
    async with aiohttp.ClientSession() as session:
        return await session.get(url, timeout=aiohttp.ClientTimeout(total=3))
"#,
        r#"
import httpx

async def handler(client, url):
    return await client.get(url)

async def cache_lookup(cache, key):
    return await cache.get(key)
"#,
        r#"
import asyncio

class ControlServer:
    def __init__(self):
        self._sessions = {}

    async def __aenter__(self):
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self

    def unregister(self, run_id):
        sess = self._sessions.pop(run_id, None)
        if sess is not None:
            sess.writer.close()

    async def _handle(self, reader, writer):
        run_id = (await asyncio.wait_for(reader.readline(), timeout=5.0)).strip()
        sess = self._sessions[run_id]
        sess.writer = writer
        while True:
            # Ends when unregister() closes the writer.
            frame = await reader.readexactly(8)
            sess.on_frame(frame)
"#,
        r#"
# The socket is connected already: opening streams on it waits for nothing.
import asyncio
import socket


async def connect(addr, ctx):
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)
    await asyncio.wait_for(loop.sock_connect(sock, addr), timeout=5)
    return await asyncio.open_connection(sock=sock)
"#,
        r#"
# The module's session is built at login with a timeout; the file's other
# session, without one, is not the one these requests use.
import aiohttp
from typing import Optional

SEARCH_SESSION: Optional[aiohttp.ClientSession] = None


async def login():
    global SEARCH_SESSION
    if SEARCH_SESSION:
        await SEARCH_SESSION.close()
    timeout = aiohttp.ClientTimeout(total=30, sock_read=10)
    SEARCH_SESSION = aiohttp.ClientSession(timeout=timeout)


async def search(url, params):
    async with SEARCH_SESSION.get(url, params=params) as resp:
        return await resp.text()


async def token(url):
    async with aiohttp.ClientSession() as s:
        async with s.post(url, timeout=aiohttp.ClientTimeout(total=10)) as resp:
            return await resp.json()
"#,
        r#"
import asyncio

import aiohttp

async def api_post(session: aiohttp.ClientSession, url, body, timeout_ms):
    # The whole exchange runs under `wait_for`.
    async def _do():
        async with session.post(url, data=body) as response:
            return await response.text()
    return await asyncio.wait_for(_do(), timeout=timeout_ms / 1000)

async def api_get(session: aiohttp.ClientSession, url, timeout_ms):
    async def _do():
        async with session.get(url) as response:
            return await response.text()
    return await asyncio.wait_for(_do(), timeout=timeout_ms / 1000)

class Channel:
    async def connect(self):
        # The deadlines come from `wait_for` above, not from aiohttp.
        no_timeout = aiohttp.ClientTimeout(total=None)
        self._session = aiohttp.ClientSession(timeout=no_timeout)

    async def send(self, url, body):
        return await api_post(self._session, url, body, 15000)
"#,
        r#"
import aiohttp


async def api_available(url, backup_url):
    timeout = aiohttp.ClientTimeout(total=2.0)
    async with aiohttp.ClientSession() as session:
        async with session.get(url, timeout=timeout) as response:
            if response.status == 200:
                return True
    backup_timeout = aiohttp.ClientTimeout(total=3.0)
    async with aiohttp.ClientSession(timeout=backup_timeout) as session:
        async with session.get(backup_url) as response:
            return response.status == 200
"#,
        r#"
import asyncio


class ManagedProcess:
    def __init__(self, argv):
        self.argv = argv
        self._process = None
        self._stdout_reader: asyncio.StreamReader | None = None

    async def start(self):
        self._process = await asyncio.create_subprocess_exec(
            *self.argv, stdout=asyncio.subprocess.PIPE
        )
        self._stdout_reader = self._process.stdout

    async def read_stdout(self, n=-1):
        if not self._stdout_reader:
            raise RuntimeError("not started")
        return await self._stdout_reader.read(n)
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(NetworkAwaitWithoutDeadline);

    /// Each kind of gap says what the request actually waits: forever
    /// when nothing bounds a stalled response, aiohttp's 5 minutes (at a
    /// lower severity) when the default applies.
    #[test]
    fn messages_say_how_long_the_request_can_wait() {
        static RULE: NetworkAwaitWithoutDeadline = NetworkAwaitWithoutDeadline;
        let (found, _) = crate::testing::run_example(&RULE, Language::Python, EXAMPLES.fail[2]);
        let by_line: Vec<(u32, Severity, &str)> = found
            .iter()
            .map(|((_, line), f)| (*line, f.severity, f.message.as_str()))
            .collect();
        assert_eq!(by_line.len(), 3, "{by_line:?}");
        let (_, sev, msg) = by_line[0];
        assert_eq!(sev, Severity::High);
        assert!(
            msg.contains("the session's")
                && msg.contains("bounds only connecting")
                && msg.contains("forever"),
            "{msg}"
        );
        let (_, sev, msg) = by_line[1];
        assert_eq!(sev, Severity::High);
        assert!(
            msg.contains("`timeout=None` turns aiohttp's off") && msg.contains("forever"),
            "{msg}"
        );
        let (_, sev, msg) = by_line[2];
        assert_eq!(sev, Severity::Low);
        assert!(
            msg.contains("5 minutes") && !msg.contains("forever"),
            "{msg}"
        );
    }
}
