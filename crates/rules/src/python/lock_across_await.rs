//! PY004: a lock held while the coroutine is suspended at an `await`.

use crate::context::FileCx;
use crate::python::common::{is_none, lock_kind, written_text};
use crate::rule::{Examples, Rule, RuleMeta};
use unsnarl_model::walk::{Visitor, walk_block};
use unsnarl_model::*;

pub struct LockAcrossAwait;

pub static META: RuleMeta = RuleMeta {
    id: "PY004",
    name: "lock-held-across-await",
    category: Category::LockAcrossAwait,
    severity: Severity::High,
    languages: &[Language::Python],
    summary: "A `threading` lock is held across an `await`, or an asyncio lock is held across network/disk I/O.",
    docs: r#"
Two shapes:

- a `threading.Lock`/`RLock`/`Condition`/`Semaphore` taken with `with` in a
  coroutine whose body awaits: the lock stays held while the coroutine is
  suspended (an `await` of a coroutine of the file that has no `await` of
  its own, `await self._connect()`, does not suspend, nor does a `put` on
  an asyncio queue the file only builds without a `maxsize`, also one of
  a table of them, `{p: asyncio.Queue() for p in priorities}`), or taken
  with `lock.acquire()` and awaited under before `release()` (an `if`
  whose branches each release before they await does not count, nor a
  lock the file only ever tries, `acquire(blocking=False)`, answering
  "busy" instead of waiting);
- an `asyncio.Lock` (or anyio/trio lock) taken with `async with` whose body
  awaits network or disk I/O (HTTP clients, database drivers, streams). A
  send lock, whose body only writes to one stream (`writer.write(frame);
  await writer.drain()`, or `await loop.sock_sendall(sock, frame)` on one
  socket), and a receive lock, whose body only reads from
  one stream (`await reader.readexactly(n)`), are left alone: keeping
  frames whole is what they are for (a file opened to append,
  `async with aiofiles.open(path, "a") as f: await f.write(line)`, is
  such a stream too, and so is one opened to be rewritten whole, `"w"`,
  a state snapshot). So is a lock picked by a key from a table of
  locks (`async with self._locks[user_id]:`, or through a getter of the
  file, `self._get_lock(self._user_locks, user.id)`): only tasks on the
  same key take turns, and the I/O for that key is what it orders. So is a single-flight section
  (`if lock.locked(): return` right before `async with lock:`): other
  tasks skip it instead of waiting; and so is a double-checked set-up
  whose body is one `if` that fills the slot it tests (`if self._pool is
  None: self._pool = await create_pool(..)`, one such step after another,
  perhaps then handing it back, `return self._pool`, or sets the event it tests,
  `if not self._ready.is_set(): ... self._ready.set()`, or moves on the expiry it
  tests, `if time.monotonic() >= self._expires_at: ... self._expires_at =
  time.monotonic() + 300`), or that begins (perhaps
  after reading the time into a local) by checking again and leaving when
  another task already did the work (`if self._jwks and now -
  self._at < ttl: return self._jwks`): only the first task waits
  for the I/O, the rest find the slot filled. So is a lock around calls on one
  object that runs one operation at a time (a single `asyncpg.Connection`,
  which fails a second concurrent call; the knowledge marks such methods
  `exclusive`), or a lock kept on a connection object
  (`adapt_connection._execute_mutex`): sharing it takes the lock. Opening and querying a local
  SQLite file through aiosqlite (also as a SQLAlchemy engine the file builds
  with `create_async_engine("sqlite+aiosqlite:///..")`) wait for no peer and are not counted as I/O here. So is a lock around one request that
  has a deadline (its own `timeout=`, or a timeout scope around it) and
  nothing else but locals: it takes a device's requests one at a time, and
  it is already what the fix below asks for. So is a lock whose body
  also pauses at its own level (`await asyncio.sleep(0.1)` next to the
  request, also under an `if`, `if wait > 0: await asyncio.sleep(wait)`): it paces the requests to one peer, which is its purpose. So
  is a lock whose creation or `async with` line carries a comment saying
  why it makes callers take turns (`self._lock = asyncio.Lock()  # the
  gateway handles one request at a time`, or in the comment lines above, naming
  serial or sequential use, concurrency, a race, one at a time; not a
  `# BUG`/`# TODO` note): the I/O inside is documented design, the fix's
  own escape hatch. So is a lock that some block holds across a
  read-modify-write of one key of a store (`subs = await
  store.get(KEY)` ... `await store.set(KEY, subs)`), in that block and
  in the others that read the key: the lock makes the update atomic.

A thread lock that only test coroutines take, in a test file that starts
no task (a lock serializing the methods of an `IsolatedAsyncioTestCase`,
each run on a loop of its own, one after another), is left alone too.

## Why

A thread lock held across an `await` is a deadlock waiting to happen: while
the holder is suspended, another task on the same loop reaches `with lock:`
and blocks the loop thread itself, so the holder can never resume to release
it. A re-entrant thread lock (`threading.RLock`) fails the other way: the
loop's thread already owns it, so the second task walks in and the two
tasks interleave inside the section the lock was meant to protect (it is
reported as high rather than critical).
An asyncio lock across I/O does not deadlock by itself, but every other
task that needs the lock now waits for the full network round trip: the
lock turns concurrent requests into a queue, and a slow peer stalls them all.

## Example

```python
import threading

state_lock = threading.Lock()

async def refresh(client):
    with state_lock:
        data = await client.fetch()
        apply(data)
```

## Fix

Do the I/O outside the critical section: read what you need under the
lock, await without it, then take the lock again to write (checking that
the state did not change meanwhile).

```python
import threading

state_lock = threading.Lock()

async def refresh(client):
    data = await client.fetch()
    with state_lock:
        apply(data)
```
"#,
    examples: &EXAMPLES,
};

/// The message, fix and severity for thread lock `lock` of `kind` held
/// across an await, where another task `takes` it (`reaches `with l:``).
/// A re-entrant lock does not deadlock the loop's thread: a second task
/// there takes it again at once, which is its own bug (the tasks are not
/// kept apart).
fn thread_lock_text(lock: &str, kind: &str, takes: &str) -> (String, &'static str, Severity) {
    if kind == "rlock" {
        return (
            format!(
                "re-entrant thread lock `{lock}` is held across an `await`: another task on the event loop's thread that {takes} gets it at once (that thread already owns it), so the lock does not keep the tasks apart while this coroutine is suspended, and a worker thread that wants it waits until the coroutine resumes"
            ),
            "guard what the tasks share with an `asyncio.Lock` (a thread lock cannot tell two tasks of one thread apart), or finish the awaits before taking the lock",
            Severity::High,
        );
    }
    (
        format!(
            "thread lock `{lock}` is held across an `await`: while this coroutine is suspended, another task that {takes} blocks the event loop thread, and the holder can never resume to release it (deadlock)"
        ),
        "finish the awaits before taking the lock (copy what you need, release, await, re-acquire to write), or use an `asyncio.Lock` if the critical section must span the await",
        Severity::Critical,
    )
}

/// Lock kinds of the knowledge table that are thread locks.
fn is_thread_lock(kind: &str) -> bool {
    matches!(kind, "mutex" | "rlock" | "condition" | "semaphore")
}

fn is_async_lock(kind: &str) -> bool {
    matches!(kind, "async-mutex" | "async-condition")
}

impl Rule for LockAcrossAwait {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        for fid in cx.model.function_ids() {
            if !cx.func(fid).is_async {
                continue;
            }
            let mut v = WithFinder(Vec::new());
            walk_block(cx.model, &cx.func(fid).body, &mut v);
            for w in v.0 {
                check_with(cx, w, out);
            }
            check_explicit_acquires(cx, fid, out);
        }
    }
}

/// `lock.acquire()` on a thread lock, then an await before the matching
/// `release()` (also through `try: ... finally: lock.release()`).
fn check_explicit_acquires(cx: &FileCx, fid: FuncId, out: &mut Vec<Finding>) {
    for call in cx.body_calls(fid) {
        let Some(c) = cx.call(call) else { continue };
        if c.name != "acquire" || cx.is_awaited(call) {
            continue;
        }
        let Some(r) = c.receiver else { continue };
        let Some(kind) = lock_kind(cx, r) else {
            continue;
        };
        if !is_thread_lock(kind) {
            continue;
        }
        let Some(name) = cx.model.dotted(r) else {
            continue;
        };
        if only_tried(cx, &name) {
            continue;
        }
        let Some(s) = cx.tree.enclosing_stmt(call) else {
            continue;
        };
        let rest = crate::python::common::stmts_after(cx, s);
        let Held::Awaits(aw) = awaits_while_held(cx, rest, &name) else {
            continue;
        };
        let (message, fix, severity) = thread_lock_text(&name, kind, &format!("acquires `{name}`"));
        let mut f = cx.finding(&META, cx.expr(call).span, message, fix);
        f.severity = severity;
        f.related.push(Related {
            file: None,
            span: aw,
            message: "suspends here with the lock held".into(),
        });
        out.push(f);
    }
}

/// Every acquisition of the lock in the file is a try-lock
/// (`lock.acquire(blocking=False)`, `acquire(False)`, `acquire(timeout=0)`)
/// and no `with lock:` takes it: a task that finds it held answers
/// "busy" at once instead of blocking the loop's thread.
fn only_tried(cx: &FileCx, name: &str) -> bool {
    let mut any = false;
    for (_, c) in cx.calls_named(&["acquire"]) {
        if c.receiver.and_then(|r| cx.model.dotted(r)).as_deref() != Some(name) {
            continue;
        }
        if !crate::python::common::is_try_acquire(cx, c) {
            return false;
        }
        any = true;
    }
    any && !cx.model.stmts.iter().any(|st| {
        matches!(&st.kind, StmtKind::With { items, .. }
            if items.iter().any(|it| cx.model.dotted(it.ctx).as_deref() == Some(name)))
    })
}

/// What follows a manual `acquire()`, statement by statement.
enum Held {
    /// An await while the lock is held (where it is).
    Awaits(Span),
    /// Released (or handed to a `try`) before any await.
    Released,
    /// Neither, by the end of the block.
    Open,
}

/// Walks the statements after `lock.acquire()` until the lock is
/// released. An `if` whose branches each release before they await
/// (`if hit: lock.release(); await use(hit) else: ...; lock.release()`)
/// does not hold it across their awaits.
fn awaits_while_held(cx: &FileCx, block: &[StmtId], name: &str) -> Held {
    for &next in block {
        let releases_here = matches!(cx.stmt(next).kind, StmtKind::Expr(e)
            if cx.call(e).is_some_and(|rc| rc.name == "release"
                && rc.receiver.and_then(|x| cx.model.dotted(x)).as_deref() == Some(name)));
        if releases_here {
            return Held::Released;
        }
        match &cx.stmt(next).kind {
            StmtKind::If { then, orelse, .. } => {
                match (
                    awaits_while_held(cx, then, name),
                    awaits_while_held(cx, orelse, name),
                ) {
                    (Held::Awaits(a), _) | (_, Held::Awaits(a)) => return Held::Awaits(a),
                    (Held::Released, Held::Released) => return Held::Released,
                    _ => {}
                }
            }
            StmtKind::Try { body, .. } => {
                return match crate::util::awaits_in_block(cx.model, body).first() {
                    Some(&a) => Held::Awaits(a),
                    None => Held::Released,
                };
            }
            _ => {
                if let Some(&a) = crate::util::awaits_in_block(cx.model, &vec![next]).first() {
                    return Held::Awaits(a);
                }
            }
        }
    }
    Held::Open
}

struct WithFinder(Vec<StmtId>);

impl Visitor for WithFinder {
    fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
        if matches!(m.stmt(id).kind, StmtKind::With { .. }) {
            self.0.push(id);
        }
        true
    }
}

/// Every function of the file that takes the thread lock `lock` is a
/// test coroutine, and the file starts no task anywhere (`with
/// ARIZE_LOCK:` in the methods of an `IsolatedAsyncioTestCase`): each test
/// runs on a loop of its own, one after another, so no other task on its
/// loop can wait for the lock.
fn only_in_lone_tests(cx: &FileCx, lock: &str) -> bool {
    let mut any = false;
    for fid in cx.model.function_ids() {
        let starts = cx
            .body_calls(fid)
            .any(|e| crate::python::common::starts_tasks_at(cx, e, cx.call(e).unwrap(), false));
        if starts {
            return false;
        }
        let takes_it = cx.body_stmts(fid).iter().any(|&s| {
            matches!(&cx.stmt(s).kind, StmtKind::With { items, .. }
                if items.iter().any(|it| cx.model.dotted(it.ctx).as_deref() == Some(lock)))
        });
        if takes_it {
            let func = cx.func(fid);
            if !func.is_test || !func.is_async {
                return false;
            }
            any = true;
        }
    }
    any
}

fn check_with(cx: &FileCx, w: StmtId, out: &mut Vec<Finding>) {
    let StmtKind::With {
        items,
        is_async,
        body,
    } = &cx.stmt(w).kind
    else {
        return;
    };
    for it in items {
        let Some(kind) = lock_kind(cx, it.ctx) else {
            continue;
        };
        let lock = cx.model.dotted(it.ctx).unwrap_or_else(|| "lock".into());
        let awaits = body_awaits(cx, body);
        if is_thread_lock(kind) && !is_async && !only_in_lone_tests(cx, &lock) {
            // `await self._connect()` of a coroutine of the file with no
            // `await` of its own runs to its end without suspending.
            if let Some(&first) = awaits.iter().find(|&&a| !never_suspends(cx, a)) {
                let (message, fix, severity) =
                    thread_lock_text(&lock, kind, &format!("reaches `with {lock}:`"));
                let mut f = cx.finding(&META, cx.expr(it.ctx).span, message, fix);
                f.severity = severity;
                f.related.push(Related {
                    file: None,
                    span: cx.expr(first).span,
                    message: "suspends here with the lock held".into(),
                });
                out.push(f);
            }
        } else if is_async_lock(kind)
            && *is_async
            && !chosen_per_key(cx, it.ctx)
            && !rechecks_first(cx, body)
            && !serializes_one_stream(cx, &awaits)
            && !serializes_one_connection(cx, &awaits)
            && !a_connections_own(&lock)
            && !skipped_when_held(cx, w, &lock)
            && !one_bounded_request(cx, body, &awaits)
            && !paces_requests(cx, body)
            && !guards_a_read_modify_write(cx, &lock)
            && let Some(&io) = awaits.iter().find(|&&a| awaits_io(cx, a))
            // Last: it reads the file's source around the lock.
            && !documented_lock(cx, w, &lock)
        {
            let mut f = cx.finding(
                &META,
                cx.expr(it.ctx).span,
                format!(
                    "`{lock}` is held while awaiting I/O (`{}`): every task that needs the lock waits for the whole round trip, and a slow or hung peer stalls them all",
                    cx.snippet(cx.expr(io).span)
                ),
                "narrow the critical section: read the state under the lock, do the I/O outside it, then re-acquire to apply the result (re-checking the state); if the I/O must be inside, bound it with `asyncio.timeout`",
            );
            f.related.push(Related {
                file: None,
                span: cx.expr(io).span,
                message: "awaits I/O with the lock held".into(),
            });
            out.push(f);
        }
    }
}

/// The lock is a field of a connection object (`async with
/// adapt_connection._execute_mutex:`, the mutex SQLAlchemy's async
/// adapters keep on each connection): it makes the users of that one
/// connection take turns, which a driver that runs one operation at a
/// time requires.
fn a_connections_own(lock: &str) -> bool {
    let Some((owner, _)) = lock.rsplit_once('.') else {
        return false;
    };
    let last = owner
        .rsplit('.')
        .next()
        .unwrap_or(owner)
        .trim_start_matches('_')
        .to_ascii_lowercase();
    last == "conn" || last.ends_with("connection")
}

/// Some `async with` of the same lock reads a key of a store and writes
/// the same key back (`subs = await store.get(KEY)` ... `await
/// store.set(KEY, subs)`): the lock makes that read-modify-write atomic,
/// which no narrower section can, and its other holders read what it
/// guards. Moving the I/O out would bring back lost updates.
fn guards_a_read_modify_write(cx: &FileCx, lock: &str) -> bool {
    // (receiver, key) of the awaited reads and writes of a block.
    let accesses = |body: &Block, names: &[&str]| -> Vec<(String, String)> {
        body_awaits(cx, body)
            .into_iter()
            .filter_map(|a| cx.call(a))
            .filter(|c| names.contains(&c.name.as_str()))
            .filter_map(|c| {
                let recv = cx.model.dotted(c.receiver?)?;
                let key = cx.snippet(cx.expr(c.positional(0)?).span).to_string();
                Some((recv.to_string(), key))
            })
            .collect()
    };
    cx.model.stmts.iter().any(|st| {
        let StmtKind::With {
            items,
            body,
            is_async: true,
        } = &st.kind
        else {
            return false;
        };
        if !items
            .iter()
            .any(|it| cx.model.dotted(it.ctx).as_deref() == Some(lock))
        {
            return false;
        }
        let reads = accesses(body, &["get", "read", "load", "fetch"]);
        !reads.is_empty()
            && accesses(body, &["set", "put", "save", "write", "store", "update"])
                .iter()
                .any(|w| reads.contains(w))
    })
}

/// The code says why the lock spans the I/O, in a comment beside or right
/// above the lock's creation or the `async with` (`self._lock =
/// asyncio.Lock()  # the gateway takes one request at a time`): the
/// serialization is the design, which is the fix this rule asks for when
/// the I/O must stay inside.
fn documented_lock(cx: &FileCx, w: StmtId, lock: &str) -> bool {
    let made_at = cx.model.stmts.iter().filter_map(|st| match &st.kind {
        StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } if cx.call(*v).is_some()
            && targets
                .iter()
                .any(|&t| cx.model.dotted(t).as_deref() == Some(lock)) =>
        {
            Some(st.span)
        }
        _ => None,
    });
    let with_line = {
        let sp = cx.stmt(w).span;
        let end = cx.text[sp.start as usize..]
            .find(':')
            .map_or(sp.start, |i| sp.start + i as u32);
        Span::new(sp.start, end)
    };
    // About taking turns: serial, sequential, concurrent, one at a time,
    // a race, exclusive use.
    const WHY: &[&str] = &[
        "serial",
        "sequen",
        "concurren",
        "one at a time",
        "one-at-a-time",
        "at once",
        "race",
        "exclusive",
        "in flight",
        "in-flight",
        "simultaneous",
        "parallel",
        "single",
        "only one",
        "one request",
    ];
    std::iter::once(with_line).chain(made_at).any(|sp| {
        crate::util::explaining_comment(cx.text, sp).is_some_and(|c| {
            let c = c.to_ascii_lowercase();
            WHY.iter().any(|w| c.contains(w))
        })
    })
}

/// `if lock.locked(): return` right before `async with lock:`: a
/// single-flight section that other tasks skip instead of waiting for (no
/// await between the check and the acquire lets another task take it).
fn skipped_when_held(cx: &FileCx, w: StmtId, lock: &str) -> bool {
    let Some(prev) = crate::util::prev_stmt(cx, w) else {
        return false;
    };
    let StmtKind::If { cond, then, .. } = &cx.stmt(prev).kind else {
        return false;
    };
    let checks_held = cx.call(cx.model.strip(*cond)).is_some_and(|c| {
        c.name == "locked"
            && c.args.is_empty()
            && c.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some(lock)
    });
    checks_held
        && then
            .last()
            .is_some_and(|&l| matches!(cx.stmt(l).kind, StmtKind::Return(_)))
}

/// A lock picked by a key from a table of locks (`self._locks[user_id]`,
/// `self._get_lock(self._user_locks, user.id)`): only the tasks working
/// on the same key take turns, and making that key's read, write and
/// cache update one step is what it is for.
fn chosen_per_key(cx: &FileCx, lock: ExprId) -> bool {
    let lock = cx.model.strip(lock);
    let keyed = |k: ExprId| cx.model.literal(k).is_none();
    if let ExprKind::Index { index, .. } = &cx.expr(lock).kind {
        return keyed(*index);
    }
    cx.call(lock)
        .is_some_and(|c| cx.callee_in_file(c).is_some() && c.args.iter().any(|a| keyed(a.value)))
}

/// A send lock or a receive lock: every I/O the body awaits writes to one
/// stream (`self.writer.write(frame); await self.writer.drain()`), or every
/// one reads from one stream (`await self.reader.readexactly(n)`). Frames
/// must not interleave and `drain()` must not run twice at once: the I/O
/// under the lock is what the lock protects. (Reads and writes together
/// are a round trip under the lock, still reported.)
fn serializes_one_stream(cx: &FileCx, awaits: &[ExprId]) -> bool {
    #[derive(PartialEq)]
    enum Way {
        Write,
        Read,
    }
    // `async with aiofiles.open(path, "a") as f: await f.write(line)`:
    // opening a file to append to it (or to rewrite it whole) is part of
    // writing one stream (a log, a JSON-lines file, a state snapshot); the
    // lock keeps each record whole.
    let rest: Vec<ExprId> = awaits
        .iter()
        .copied()
        .filter(|&a| !cx.call(a).is_some_and(|c| opens_to_write(cx, c)))
        .collect();
    // The opened file's own writes are no I/O the knowledge names.
    let appends_only = rest.len() < awaits.len() && !rest.iter().any(|&a| awaits_io(cx, a));
    appends_only
        || all_io_on_one(cx, &rest, |c| match c.name.as_str() {
            "drain" | "write" | "writelines" | "send" | "sendall" | "send_bytes" | "send_text"
            | "send_json" | "flush" | "sock_sendall" | "sock_sendto" => Some(Way::Write),
            "read" | "readexactly" | "readuntil" | "readline" | "recv" | "recv_bytes"
            | "receive" | "receive_bytes" | "receive_text" | "receive_json" | "sock_recv"
            | "sock_recv_into" | "sock_recvfrom" => Some(Way::Read),
            _ => None,
        })
}

/// `aiofiles.open(path, "a")`, `anyio.open_file(path, mode="a")`: a local
/// file opened to append, or to rewrite whole (`"w"`: a state snapshot
/// the lock keeps two writers from interleaving).
fn opens_to_write(cx: &FileCx, c: &Call) -> bool {
    matches!(
        c.target.as_deref(),
        Some("aiofiles.open" | "anyio.open_file")
    ) && c
        .positional(1)
        .or_else(|| c.kwarg("mode"))
        .is_some_and(|m| matches!(cx.model.literal(m), Some(Lit::Str(s)) if s.starts_with('a') || s.starts_with('w')))
}

/// Every I/O the body awaits is a call on one and the same receiver, each
/// of one kind (`kind` gives it, `None` for a call that does not fit):
/// there is such I/O, and nothing else is awaited on anything else.
fn all_io_on_one<K: PartialEq>(
    cx: &FileCx,
    awaits: &[ExprId],
    kind: impl Fn(&Call) -> Option<K>,
) -> bool {
    let mut one: Option<(String, K)> = None;
    for &a in awaits {
        if !awaits_io(cx, a) {
            continue;
        }
        let Some(c) = cx.call(cx.model.strip(a)) else {
            return false;
        };
        // `loop.sock_sendall(sock, frame)`: the stream is the socket the
        // loop is handed, not the loop.
        let stream = if c.name.starts_with("sock_") {
            c.positional(0)
        } else {
            c.receiver
        };
        let (Some(k), Some(r)) = (kind(c), stream.and_then(|r| cx.model.dotted(r))) else {
            return false;
        };
        if one.as_ref().is_some_and(|(o, ok)| *o != r || *ok != k) {
            return false;
        }
        one = Some((r, k));
    }
    one.is_some()
}

/// The lock holds one request with a deadline and nothing else: the body
/// awaits once, that await is I/O bounded by a `timeout=` of its own or a
/// timeout scope around it, and every other statement binds a local
/// (`response = await session.post(url, timeout=t)` under `async with
/// self._send_mutex:`). Such a lock serializes the requests to one peer (a
/// device that takes one at a time); there is no shared state to narrow
/// the section around, and the deadline the fix asks for is there.
fn one_bounded_request(cx: &FileCx, body: &Block, awaits: &[ExprId]) -> bool {
    let [io] = awaits else {
        return false;
    };
    let Some(c) = cx.call(cx.model.strip(*io)) else {
        return false;
    };
    let bounded = c.kwarg("timeout").is_some_and(|t| !is_none(cx, t))
        || crate::python::common::under_deadline(cx, *io, false);
    let only_locals = body.iter().all(|&s| match &cx.stmt(s).kind {
        StmtKind::Expr(e) => matches!(cx.expr(*e).kind, ExprKind::Await(_)),
        StmtKind::Assign { targets, .. } => targets
            .iter()
            .all(|&t| matches!(cx.expr(t).kind, ExprKind::Name { .. })),
        _ => false,
    });
    bounded && only_locals && awaits_io(cx, *io)
}

/// The body pauses at its own level (`await asyncio.sleep(0.1)` before
/// or after the request): the lock spaces out the requests to one peer (a
/// device that drops requests that come too close together), and taking
/// the I/O out of it would undo the pacing. A sleep inside a loop (a retry
/// under the lock) does not count; one under an `if` does (`if wait > 0:
/// await asyncio.sleep(wait)`, keeping a floor between requests).
fn paces_requests(cx: &FileCx, body: &Block) -> bool {
    body.iter().any(|&s| {
        if let StmtKind::If { then, orelse, .. } = &cx.stmt(s).kind {
            return paces_requests(cx, then) || paces_requests(cx, orelse);
        }
        let StmtKind::Expr(e) = cx.stmt(s).kind else {
            return false;
        };
        let ExprKind::Await(inner) = cx.expr(e).kind else {
            return false;
        };
        cx.call(cx.model.strip(inner)).is_some_and(|c| {
            crate::python::common::sleep_arg(c).is_some()
                && !crate::python::common::is_zero_sleep(cx, c)
        })
    })
}

/// Every I/O the body awaits is a call on one object that runs one
/// operation at a time (`await self._connection.fetch(q)` on a single
/// `asyncpg.Connection`, which fails a second concurrent call): the lock is
/// what lets tasks share that object, and the wait is the object's own.
fn serializes_one_connection(cx: &FileCx, awaits: &[ExprId]) -> bool {
    all_io_on_one(cx, awaits, |c| {
        cx.effect(c, Effect::AsyncApi)
            .is_some_and(|e| e.exclusive)
            .then_some(())
    })
}

/// The body starts (after reading locals for it, `now = time.monotonic()`)
/// by re-checking the state and leaving when another task
/// already did the work (`if self._token_valid(): return self._token`): a
/// deliberate single-flight, where waiting for the holder's I/O is the
/// point (the fix for a cache stampede).
fn rechecks_first(cx: &FileCx, body: &Block) -> bool {
    // After locals it reads for the check (`now = time.monotonic()`).
    let Some(k) = body.iter().position(|&s| {
        !matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(v), .. }
            if targets.iter().all(|&t| cx.model.name_of(t).is_some())
                && !unsnarl_model::walk::exprs_under(cx.model, *v)
                    .into_iter()
                    .any(|x| matches!(cx.expr(x).kind, ExprKind::Await(_))))
    }) else {
        return false;
    };
    let StmtKind::If { then, orelse, .. } = &cx.stmt(body[k]).kind else {
        return false;
    };
    then.last().is_some_and(|&l| match cx.stmt(l).kind {
        // Handing back what another task made.
        StmtKind::Return(Some(_)) => true,
        // Leaving first thing (the locals read would be a guard on one,
        // `conn = self._conn; if conn is None: raise`).
        StmtKind::Return(None) | StmtKind::Raise(_) | StmtKind::Continue | StmtKind::Break => {
            k == 0
        }
        _ => false,
    }) || (k == 0 && orelse.is_empty() && set_up_steps_only(cx, body))
}

/// The body is one or more set-up steps, each an `if` that fills the slot
/// it tests (`if self._real is None: self._real = make()`, then `if not
/// self._connected: await self._real.connect(); self._connected = True`),
/// perhaps ending by handing a slot back (`return self._ws`).
fn set_up_steps_only(cx: &FileCx, body: &Block) -> bool {
    let steps = match body.split_last() {
        Some((&r, rest))
            if matches!(cx.stmt(r).kind, StmtKind::Return(Some(v))
                if cx.model.dotted(v).is_some_and(|d| d.starts_with("self."))) =>
        {
            rest
        }
        _ => body.as_slice(),
    };
    !steps.is_empty()
        && steps.iter().all(|&st| {
            matches!(&cx.stmt(st).kind, StmtKind::If { cond, then, orelse }
                if orelse.is_empty() && fills_what_it_tests(cx, *cond, then))
        })
}

/// `if self._pool is None: self._pool = await create_pool(..)` (or `if
/// not self._client:`): the body fills the slot it tests, so only the
/// first task waits for the I/O and the rest find it filled (a
/// double-checked lazy set-up).
///
/// Also a refresh on an expiry the branch moves on (`if time.monotonic() >=
/// self._expires_at: ... self._expires_at = time.monotonic() + 300`, on
/// every path the branch takes or in some of them): a field of the object
/// the test reads and the branch assigns. Or an event the test reads and
/// the branch sets (`if not self._ready.is_set(): ... self._ready.set()`).
fn fills_what_it_tests(cx: &FileCx, cond: ExprId, then: &Block) -> bool {
    let assigned = |slot: &str| {
        unsnarl_model::walk::stmts_in_block(cx.model, then)
            .into_iter()
            .any(|st| {
                matches!(&cx.stmt(st).kind, StmtKind::Assign { targets, .. }
                    if targets.iter().any(|&t| cx.model.dotted(t).as_deref() == Some(slot)))
            })
    };
    if let Some(tested) = crate::python::common::tested_as_missing(cx, cond) {
        return assigned(&tested);
    }
    // `if not self._ready.is_set(): ... self._ready.set()`: the event
    // the test reads is the slot, and the branch fills it.
    let calls_on = |name: &str, block_or_cond: &[ExprId]| -> Vec<String> {
        block_or_cond
            .iter()
            .filter_map(|&x| cx.call(x))
            .filter(|k| k.name == name && k.args.is_empty())
            .filter_map(|k| k.receiver.and_then(|r| cx.model.dotted(r)))
            .filter(|d| d.starts_with("self."))
            .collect()
    };
    let tested_events = calls_on("is_set", &unsnarl_model::walk::exprs_under(cx.model, cond));
    if !tested_events.is_empty() {
        let set = calls_on("set", &unsnarl_model::walk::calls_in_block(cx.model, then));
        return tested_events.iter().any(|ev| set.contains(ev));
    }
    unsnarl_model::walk::exprs_under(cx.model, cond)
        .into_iter()
        .filter_map(|x| match cx.expr(x).kind {
            ExprKind::Attr { .. } => cx.model.dotted(x).filter(|d| d.starts_with("self.")),
            _ => None,
        })
        .any(|slot| assigned(&slot))
}

/// The awaited expressions in a `with` body (`await X` gives X; `async with
/// X` and `async for _ in X` give X), not counting waits on a condition
/// (`await cond.wait()` releases the lock).
fn body_awaits(cx: &FileCx, body: &Block) -> Vec<ExprId> {
    struct V(Vec<ExprId>);
    impl Visitor for V {
        fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
            match &m.stmt(id).kind {
                StmtKind::With {
                    items,
                    is_async: true,
                    ..
                } => self.0.extend(items.iter().map(|i| i.ctx)),
                StmtKind::For {
                    iter,
                    is_async: true,
                    ..
                } => self.0.push(*iter),
                _ => {}
            }
            true
        }
        fn enter_expr(&mut self, m: &FileModel, id: ExprId) -> bool {
            if let ExprKind::Await(inner) = m.expr(id).kind {
                self.0.push(m.strip(inner));
            }
            true
        }
    }
    let mut v = V(Vec::new());
    walk_block(cx.model, body, &mut v);
    v.0.retain(|&a| {
        !cx.call(a).is_some_and(|c| {
            matches!(
                c.name.as_str(),
                "wait" | "wait_for" | "notify" | "notify_all"
            )
        })
    });
    v.0
}

/// An awaited call of a coroutine function of the file whose body has no
/// `await`, `async with` or `async for`: it finishes in one step. So does
/// a `put` on an asyncio queue the file only ever builds unbounded
/// (`results = asyncio.Queue()`, also in a table of them): it is never
/// full, so it never waits.
fn never_suspends(cx: &FileCx, awaited: ExprId) -> bool {
    let Some(c) = cx.call(awaited) else {
        return false;
    };
    // Also one picked from a table of them (`await self._queues[p].put(job)`
    // with `self._queues = {p: asyncio.Queue() for p in Priority}`): the
    // awaited `put` is an asyncio queue's.
    let from_table = c
        .receiver
        .is_some_and(|r| matches!(cx.expr(cx.model.strip(r)).kind, ExprKind::Index { .. }));
    if c.name == "put"
        && (from_table
            || c.target
                .as_deref()
                .is_some_and(|t| t.ends_with("Queue.put") && t.starts_with("asyncio.")))
        && crate::receiver_unbounded(cx.model, cx.kb, c)
    {
        return true;
    }
    cx.callee_in_file(c)
        .is_some_and(|g| crate::python::common::never_suspends(cx, g))
}

/// `await conn.execute(..)` on a connection of a SQLAlchemy engine the file
/// only ever builds over SQLite (`self._engine =
/// create_async_engine(f"sqlite+aiosqlite:///{path}")`, then `async with
/// self._engine.begin() as conn:`): a local file, like aiosqlite itself.
fn on_sqlite_engine(cx: &FileCx, awaited: ExprId, c: &Call) -> bool {
    let engine_of = |x: ExprId| {
        let k = cx.call(cx.model.strip(x))?;
        matches!(k.name.as_str(), "begin" | "connect")
            .then(|| k.receiver.and_then(|r| cx.model.dotted(r)))
            .flatten()
    };
    let Some(recv) = c.receiver.map(|r| cx.model.strip(r)) else {
        return false;
    };
    let engine = match cx.model.name_of(recv) {
        Some(conn) => {
            let f = cx.func_of(awaited);
            unsnarl_model::walk::stmts_in_block(cx.model, &cx.func(f).body)
                .into_iter()
                .find_map(|s| match &cx.stmt(s).kind {
                    StmtKind::With { items, .. } => items.iter().find_map(|it| {
                        (it.target.and_then(|t| cx.model.name_of(t)) == Some(conn))
                            .then(|| engine_of(it.ctx))
                            .flatten()
                    }),
                    _ => None,
                })
        }
        None => None,
    };
    let Some(engine) = engine else {
        return false;
    };
    crate::util::every_assigned_value(
        cx.model,
        |t| cx.model.dotted(t).as_deref() == Some(engine.as_str()),
        |v| {
            cx.call(cx.model.strip(v)).is_some_and(|k| {
                k.name == "create_async_engine"
                    && k.positional(0)
                        .and_then(|u| written_text(cx, u))
                        .is_some_and(|u| u.starts_with("sqlite"))
            })
        },
    )
}

/// True when an awaited expression is network or disk I/O.
fn awaits_io(cx: &FileCx, awaited: ExprId) -> bool {
    let Some(c) = cx.call(awaited) else {
        return false;
    };
    if let Some(e) = cx.effect(c, Effect::AsyncApi) {
        return e.kind.as_deref() == Some("io");
    }
    if on_sqlite_engine(cx, awaited, c) {
        return false;
    }
    // `await queue.put(value)`: a hand-off to another task, not a peer.
    crate::util::is_io_method_call(c) && !crate::python::common::on_a_queue(cx, c)
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Python,
    fail: &[
        r#"
import threading

lock = threading.Lock()

async def update(client):
    with lock:  # expect
        value = await client.get("/v")
"#,
        r#"
# file: tests/test_provider.py
import asyncio
import threading
import unittest

TRACE_LOCK = threading.Lock()


class TestProvider(unittest.IsolatedAsyncioTestCase):
    async def test_two_at_once(self):
        await asyncio.gather(self._ask("a"), self._ask("b"))

    async def _ask(self, q):
        with TRACE_LOCK:  # expect
            return await self.agent.chat(q)
"#,
        r#"
import threading

lock = threading.Lock()

async def update(client):
    lock.acquire()  # expect
    try:
        value = await client.get("/v")
    finally:
        lock.release()
"#,
        r#"
import threading


class Router:
    def __init__(self):
        self._mutex = threading.Lock()
        self._members = {}

    async def route(self, key, message):
        self._mutex.acquire()  # expect
        if key in self._members:
            self._mutex.release()
            await self._members[key].send(message)
        else:
            # This branch awaits before it lets go.
            member = await self.connect(key)
            self._members[key] = member
            self._mutex.release()
"#,
        r#"
import asyncio

class Cache:
    def __init__(self, session):
        self._lock = asyncio.Lock()
        self._session = session

    async def refresh(self):
        async with self._lock:  # expect
            resp = await self._session.get("https://api.example/data")
            self.data = await resp.json()
"#,
        r#"
import asyncio
import aiohttp

lock = asyncio.Lock()

async def pull(url):
    async with aiohttp.ClientSession() as s:
        async with lock:  # expect
            async with s.get(url) as r:
                return await r.text()
"#,
        r#"
import asyncio
import aiohttp


class Probe:
    def __init__(self):
        self._lock = asyncio.Lock()
        self._session = aiohttp.ClientSession()
        self._base = None

    async def health(self):
        async with self._lock:  # expect
            # A guard on a local, not a re-check of work another task did.
            base = self._base
            if base is None:
                raise RuntimeError("not started")
            resp = await self._session.get(base + "/health")
            return await resp.json()
"#,
        r#"
import asyncio


class Link:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader = reader
        self.writer = writer
        self.lock = asyncio.Lock()

    async def call(self, request: bytes) -> bytes:
        async with self.lock:  # expect
            self.writer.write(request)
            await self.writer.drain()
            return await self.reader.readline()
"#,
        r#"
import asyncio


class Queue:
    def __init__(self, pool):
        self.pool = pool
        self._dequeue_lock = asyncio.Lock()
        self._jobs = asyncio.Queue()

    async def _dequeue(self):
        if self._dequeue_lock.locked():
            log_busy()
        async with self._dequeue_lock:  # expect
            async with self.pool.connection() as conn:
                rows = await conn.fetch("UPDATE jobs SET status = 'active' RETURNING job")
                for row in rows:
                    self._jobs.put_nowait(row[0])
"#,
        r#"
import asyncio


class Camera:
    def __init__(self, session, url):
        self._session = session
        self._url = url
        self._send_mutex = asyncio.Lock()

    async def send(self, body):
        async with self._send_mutex:  # expect
            response = await self._session.post(url=self._url, json=body)
        return await response.text()

    async def refresh(self, body):
        async with asyncio.timeout(15):
            async with self._send_mutex:  # expect
                self.state = await self._session.post(url=self._url, json=body, timeout=10)
"#,
        r#"
import asyncio

import asyncpg


class Jobs:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool
        self._lock = asyncio.Lock()

    async def fetch(self, query: str) -> list:
        async with self._lock:  # expect
            return await self._pool.fetch(query)
"#,
        r#"
import asyncio


class Relay:
    def __init__(self, session):
        self._session = session
        self._lock = asyncio.Lock()

    async def switch(self, path):
        async with self._lock:  # expect
            for _ in range(3):
                response = await self._session.get(path)
                if response.status == 200:
                    return response
                await asyncio.sleep(1)
"#,
        r#"
import asyncio

import aiohttp


class Gateway:
    def __init__(self, url):
        self._url = url
        self._session = aiohttp.ClientSession()
        self._lock = asyncio.Lock()
        self.calls = 0

    async def call(self, payload):
        async with self._lock:  # expect
            self.calls += 1
            async with self._session.post(self._url, json=payload) as resp:
                return await resp.json()
"#,
        r#"
import asyncio

import asyncpg


class Sessions:
    def __init__(self, dsn):
        self._dsn = dsn
        self._pool = None
        self._conn = None
        self._pool_lock = asyncio.Lock()

    async def _ensure_pool(self):
        async with self._pool_lock:  # expect
            if self._pool is None:
                self._conn = await asyncpg.connect(self._dsn)
        return self._pool
"#,
        r#"
import threading


class Mailer:
    def __init__(self, smtp):
        self._lock = threading.RLock()
        self._smtp = smtp

    async def send_all(self, messages):
        with self._lock:  # expect
            await self._smtp.connect()
            for m in messages:
                await self._smtp.send(m)
            await self._smtp.quit()
"#,
    ],
    pass: &[
        r#"
import threading

_foreground = threading.Lock()


async def run_command(client, command):
    # One at a time; a second caller is told "busy", it never waits.
    if not _foreground.acquire(blocking=False):
        return {"status": "busy"}
    try:
        return await client.run(command)
    finally:
        _foreground.release()
"#,
        r#"
import asyncio
import time

import httpx


class KeyCache:
    def __init__(self, ttl):
        self._ttl = ttl
        self._keys = None
        self._fetched_at = 0.0
        self._lock = asyncio.Lock()

    async def get(self, url):
        now = time.monotonic()
        if self._keys is not None and now - self._fetched_at < self._ttl:
            return self._keys
        async with self._lock:
            now = time.monotonic()
            if self._keys is not None and now - self._fetched_at < self._ttl:
                return self._keys
            async with httpx.AsyncClient(timeout=10.0) as client:
                resp = await client.get(url)
                self._keys = resp.json()
                self._fetched_at = now
                return self._keys
"#,
        r#"
import asyncio

import aiosqlite


class History:
    def __init__(self, path):
        self._path = path
        self._lock = asyncio.Lock()
        self._connection: aiosqlite.Connection | None = None

    async def _connection_locked(self) -> aiosqlite.Connection:
        if self._connection is not None:
            return self._connection
        connection = await aiosqlite.connect(self._path)
        await connection.execute("CREATE TABLE IF NOT EXISTS history (a, b)")
        await connection.commit()
        self._connection = connection
        return connection

    async def save(self, rows):
        async with self._lock:
            connection = await self._connection_locked()
            try:
                await connection.execute("BEGIN")
                await connection.executemany("INSERT INTO history VALUES (?, ?)", rows)
                await connection.commit()
            except Exception:
                await connection.rollback()
                raise

    async def append(self, row):
        # Opening the local file is no network wait either.
        async with self._lock:
            async with aiosqlite.connect(self._path) as db:
                await db.execute("INSERT INTO history VALUES (?, ?)", row)
                await db.commit()
"#,
        r#"
import asyncio

import asyncpg


class Sessions:
    def __init__(self, dsn):
        self._dsn = dsn
        self._pool = None
        self._pool_lock = asyncio.Lock()

    async def _ensure_pool(self):
        if self._pool is None:
            async with self._pool_lock:
                if self._pool is None:
                    self._pool = await asyncpg.create_pool(self._dsn, max_size=5)
        return self._pool
"#,
        r#"
# file: tests/test_provider.py
import threading
import unittest

# Serializes the tests that share the tracing exporter.
TRACE_LOCK = threading.Lock()


class TestProvider(unittest.IsolatedAsyncioTestCase):
    async def test_chat(self):
        with TRACE_LOCK:
            reply = await self.agent.chat("2 + 2?")
            self.assertEqual(reply, "4")

    async def test_stream(self):
        with TRACE_LOCK:
            chunks = [c async for c in self.agent.stream("hi")]
            self.assertTrue(chunks)
"#,
        r#"
import asyncio

import aiohttp


class Gateway:
    def __init__(self, url):
        self._url = url
        self._session = aiohttp.ClientSession()
        self._lock = asyncio.Lock()  # the gateway handles one request at a time

    async def call(self, payload):
        async with self._lock:
            async with self._session.post(self._url, json=payload) as resp:
                return await resp.json()
"#,
        r#"
import asyncio
import threading

lock = threading.Lock()
results = asyncio.Queue()

# The queue has no maxsize, so the put never waits with the lock held.
async def publish(item):
    with lock:
        await results.put(item)
"#,
        r#"
import socket
import threading

class IO:
    def __init__(self, host):
        self._lock = threading.Lock()
        self._host = host
        self._socket = None

    # Declared async, but it never awaits: the lock is never held across
    # a suspension.
    async def _connect(self):
        self._socket = socket.create_connection((self._host, 5672), timeout=5)

    async def run(self):
        with self._lock:
            await self._connect()
"#,
        r#"
import asyncio


class Relay:
    def __init__(self, session, host):
        self._session = session
        self._host = host
        self._lock = asyncio.Lock()

    async def request(self, path):
        async with self._lock:
            response = await self._session.request("GET", f"{self._host}/{path}")
            await asyncio.sleep(0.1)
            return response
"#,
        r#"
import asyncio

import asyncpg


class AsyncpgDriver:
    def __init__(self, connection: asyncpg.Connection) -> None:
        self._connection = connection
        self._lock = asyncio.Lock()

    async def fetch(self, query: str, *args: object) -> list[dict]:
        async with self._lock:
            return [dict(x) for x in await self._connection.fetch(query, *args)]

    async def notify(self, channel: str, payload: str) -> None:
        async with self._lock:
            await self._connection.execute("SELECT pg_notify($1, $2)", channel, payload)
"#,
        r#"
import asyncio

import aiohttp


class Camera:
    def __init__(self, session, url):
        self._session = session
        self._url = url
        self._timeout = aiohttp.ClientTimeout(total=10)
        self._send_mutex = asyncio.Lock()

    async def send(self, body):
        async with asyncio.timeout(15):
            async with self._send_mutex:
                response = await self._session.post(url=self._url, json=body, timeout=self._timeout)
            return await response.text()

    async def download(self, params):
        async with self._send_mutex:
            dl_timeout = aiohttp.ClientTimeout(connect=10, sock_read=10)
            response = await self._session.get(url=self._url, params=params, timeout=dl_timeout)
        return response
"#,
        r#"
import asyncio


class Queue:
    def __init__(self, pool):
        self.pool = pool
        self._dequeue_lock = asyncio.Lock()
        self._jobs = asyncio.Queue()

    async def _dequeue(self):
        # Single flight: other callers skip the poll instead of waiting.
        if self._dequeue_lock.locked():
            return
        async with self._dequeue_lock:
            async with self.pool.connection() as conn:
                rows = await conn.fetch("UPDATE jobs SET status = 'active' RETURNING job")
                for row in rows:
                    self._jobs.put_nowait(row[0])
"#,
        r#"
import asyncio


class Link:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader = reader
        self.writer = writer
        self.out_lock = asyncio.Lock()

    async def send_frame(self, frame: bytes) -> None:
        async with self.out_lock:
            self.writer.write(len(frame).to_bytes(4, "big"))
            self.writer.write(frame)
            await self.writer.drain()
"#,
        r#"
import asyncio
import struct


class FrameReader:
    def __init__(self, reader: asyncio.StreamReader):
        self.reader = reader
        self.lock = asyncio.Lock()

    async def read_frame(self) -> bytes:
        async with self.lock:
            header = await self.reader.readexactly(4)
            (length,) = struct.unpack(">I", header)
            return await self.reader.readexactly(length)
"#,
        r#"
import threading

lock = threading.Lock()

async def update(client):
    value = await client.get("/v")
    with lock:
        apply(value)
"#,
        r#"
import asyncio

class Counter:
    def __init__(self):
        self._lock = asyncio.Lock()
        self._cond = asyncio.Condition()
        self.n = 0

    async def incr(self):
        async with self._lock:
            self.n += 1
            await asyncio.sleep(0)

    async def wait_positive(self):
        async with self._cond:
            await self._cond.wait_for(lambda: self.n > 0)
"#,
        r#"
import asyncio

class Tokens:
    def __init__(self, session):
        self._lock = asyncio.Lock()
        self._session = session
        self._token = None

    async def token(self):
        async with self._lock:
            if self._token is not None:
                return self._token
            resp = await self._session.post("https://idp.example/token")
            self._token = (await resp.json())["access_token"]
            return self._token
"#,
        r#"
import threading

lock = threading.Lock()

def sync_update():
    with lock:
        apply(1)

async def short(client):
    lock.acquire()
    try:
        apply(2)
    finally:
        lock.release()
    await client.get("/after")


class Members:
    def __init__(self):
        self._mutex = threading.Lock()
        self._members = {}

    async def on_message(self, key, message):
        # Each branch lets go of the lock before it awaits.
        self._mutex.acquire()
        if key in self._members:
            member = self._members[key]
            self._mutex.release()
            await member.continue_with(message)
        else:
            member = Member(key)
            self._members[key] = member
            self._mutex.release()
            await member.start(message)

async def not_a_lock(path):
    with open(path) as f:
        await something(f)
"#,
        r#"
import asyncio
import json

import aiofiles


class Recorder:
    def __init__(self, path):
        self.path = path
        self.lock = asyncio.Lock()

    async def record(self, item):
        line = json.dumps(item) + "\n"
        async with self.lock:
            async with aiofiles.open(self.path, "a", encoding="utf-8") as f:
                await f.write(line)
"#,
        r#"
import asyncio


class RoleStore:
    def __init__(self, db):
        self.db = db
        self._user_locks = {}

    @staticmethod
    def _get_lock(locks, key):
        lock = locks.get(key)
        if lock is None:
            lock = asyncio.Lock()
            locks[key] = lock
        return lock

    async def grant(self, user, role):
        async with self._get_lock(self._user_locks, user.id):
            if role not in user.roles:
                await self.db.post("/grants", json={"user": user.id, "role": role})
                user.roles.append(role)
"#,
        r#"
import asyncio
import json


class FleetRepo:
    def __init__(self, db):
        self.db = db
        # The backbone is one process: this serializes the history's
        # read-modify-write, which a transaction alone does not.
        self._resume_lock = asyncio.Lock()

    async def add_resume(self, snapshot_id, run):
        async with self._resume_lock:
            row = await self.db.fetchrow("SELECT resumes FROM snapshots WHERE id = $1", snapshot_id)
            resumes = json.loads(row["resumes"]) + [run]
            await self.db.execute("UPDATE snapshots SET resumes = $1 WHERE id = $2", json.dumps(resumes), snapshot_id)
"#,
        r#"
import asyncio
import aiosqlite


class ClaimStore:
    def __init__(self, path):
        self.path = path
        self.write_lock = asyncio.Lock()

    async def claim(self, key, owner):
        async with self.write_lock, aiosqlite.connect(self.path) as db:
            await db.execute("BEGIN IMMEDIATE")
            row = await (
                await db.execute("SELECT owner FROM claims WHERE key = ?", (key,))
            ).fetchone()
            if row is None:
                await db.execute("INSERT INTO claims VALUES (?, ?)", (key, owner))
            await db.commit()
            return row

    async def owner_of(self, key):
        async with self.write_lock:
            async with aiosqlite.connect(self.path) as db:
                cursor = await db.execute("SELECT owner FROM claims WHERE key = ?", (key,))
                row = await cursor.fetchone()
                return row[0] if row else None
"#,
        r#"
import asyncio
from typing import Dict
from uuid import UUID


class Observable:
    _queues: Dict[UUID, asyncio.Queue]

    def __init__(self):
        self._queues = {}
        self._queue_lock = asyncio.Lock()

    async def notify(self, value):
        async with self._queue_lock:
            for queue in self._queues.values():
                await queue.put(value)
"#,
        r#"
# Checked again under the lock: the first task refreshes, the rest find
# the expiry moved on.
import asyncio
import time


class OAuth:
    def __init__(self, client):
        self.client = client
        self._lock = asyncio.Lock()
        self._expires_at = 0.0
        self._discovery = {}

    async def endpoint(self, name):
        if time.monotonic() >= self._expires_at:
            async with self._lock:
                if time.monotonic() >= self._expires_at:
                    response = await self.client.get("https://example.org/.well-known")
                    self._discovery = response.json()
                    self._expires_at = time.monotonic() + 300
        return self._discovery.get(name)
"#,
        r#"
# The lock makes the read-modify-write of one key atomic; the loader
# reads under it too.
import asyncio

mutex = asyncio.Lock()
KEY = "subscribes"


async def load(store, start):
    async with mutex:
        subs = await store.get(KEY)
        for sub in subs or []:
            start(sub)


async def add(store, sub):
    async with mutex:
        subs = await store.get(KEY) or []
        subs.append(sub)
        await store.set(KEY, subs)
"#,
        r#"
# A send lock on one raw socket: frames must not interleave.
import asyncio
import socket


class Channel:
    def __init__(self, sock: socket.socket):
        self._socket: socket.socket = sock
        self._write_lock = asyncio.Lock()

    async def send(self, framed):
        connection = self._socket
        async with self._write_lock:
            await asyncio.get_running_loop().sock_sendall(connection, framed)
"#,
        r#"
import asyncio


class PipeClient:
    def __init__(self, proc):
        self._proc = proc
        # Ensure one-at-a-time request/response over pipes
        self._lock = asyncio.Lock()

    async def call(self, line):
        async with self._lock:
            self._proc.stdin.write(line)
            await self._proc.stdin.drain()
            return await self._proc.stdout.readline()
"#,
        r#"
# The lock keeps two rewrites of the state file from interleaving.
import asyncio
import json

import aiofiles

lock = asyncio.Lock()
STATE = {}


async def save_state():
    async with lock:
        async with aiofiles.open("state.json", "w") as f:
            await f.write(json.dumps(STATE))
"#,
        r#"
import asyncio

import httpx

class AsyncAdaptConnection:
    def __init__(self):
        self._execute_mutex = asyncio.Lock()

class AsyncAdaptCursor:
    def __init__(self, adapt_connection: AsyncAdaptConnection):
        self._adapt_connection = adapt_connection
        self._client = httpx.AsyncClient(timeout=30)

    async def execute(self, url, query):
        adapt_connection = self._adapt_connection
        async with adapt_connection._execute_mutex:
            response = await self._client.post(url, content=query)
            self._rows = await self._client.get(response.json()["next"])
"#,
        r#"
import asyncio

import httpx

MIN_INTERVAL = 1.0
_send_lock = asyncio.Lock()
_last_send_at = 0.0
_client = httpx.AsyncClient(timeout=10)


async def post_throttled(url, payload):
    global _last_send_at
    async with _send_lock:
        wait = MIN_INTERVAL - (asyncio.get_running_loop().time() - _last_send_at)
        if wait > 0:
            await asyncio.sleep(wait)
        resp = await _client.post(url, json=payload)
        _last_send_at = asyncio.get_running_loop().time()
        return resp
"#,
        r#"
import asyncio
import time

from sqlalchemy import insert, select, update
from sqlalchemy.ext.asyncio import create_async_engine


class Repository:
    def __init__(self, path):
        self._path = path
        self._write_lock = asyncio.Lock()
        self._engine = None

    async def init(self):
        self._engine = create_async_engine(f"sqlite+aiosqlite:///{self._path}")

    async def add_answer(self, answers, question_id, text):
        async with self._write_lock:
            async with self._engine.begin() as conn:
                row = (await conn.execute(select(answers).where(answers.c.text == text))).first()
                if row:
                    await conn.execute(update(answers).values(same=row.same + 1))
                else:
                    await conn.execute(insert(answers).values(text=text, at=int(time.time())))
"#,
        r#"
import asyncio
import asyncpg


class Store:
    def __init__(self, dsn):
        self.dsn = dsn
        self._pool = None
        self._init_lock = asyncio.Lock()
        self._ready = asyncio.Event()

    async def _ensure_ready(self):
        # Only the first task does the set-up; the rest find it done.
        async with self._init_lock:
            if not self._ready.is_set():
                self._pool = await asyncpg.create_pool(dsn=self.dsn)
                async with self._pool.acquire() as conn:
                    await conn.execute("CREATE TABLE IF NOT EXISTS items (id int)")
                self._ready.set()
"#,
        r#"
import asyncio
import websockets


class Client:
    def __init__(self, url):
        self.url = url
        self._ws = None
        self._ws_lock = asyncio.Lock()

    async def _connection(self):
        # One shared connection, made by the first task that needs it.
        async with self._ws_lock:
            if self._ws is None or self._ws.closed:
                self._ws = await websockets.connect(self.url)
            return self._ws
"#,
        r#"
import asyncio


class JobQueue:
    def __init__(self, priorities):
        self._lock = asyncio.Lock()
        self._pending = {}
        # Unbounded queues: a put never waits.
        self._queues = {p: asyncio.Queue() for p in priorities}

    async def add_job(self, job):
        async with self._lock:
            future = asyncio.get_running_loop().create_future()
            self._pending[job.id] = future
            await self._queues[job.priority].put(job)
            return future
"#,
        r#"
import asyncio


class Client:
    def __init__(self, make_client):
        self._make_client = make_client
        self._real = None
        self._connected = False
        self._lock = asyncio.Lock()

    async def _ensure_connected(self):
        # Two set-up steps, each done once by the first task.
        async with self._lock:
            if self._real is None:
                self._real = self._make_client()
            if not self._connected:
                await self._real.connect()
                self._connected = True
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(LockAcrossAwait);

    /// A re-entrant lock is reported for what it does: it lets a second
    /// task of the loop's thread in, rather than deadlocking it.
    #[test]
    fn rlock_is_reported_as_not_keeping_tasks_apart() {
        static RULE: LockAcrossAwait = LockAcrossAwait;
        let rlock = EXAMPLES
            .fail
            .iter()
            .find(|ex| ex.contains("threading.RLock()") && ex.contains("class Mailer"))
            .unwrap();
        let findings: Vec<Finding> = crate::testing::run_example(&RULE, Language::Python, rlock)
            .0
            .into_iter()
            .map(|(_, f)| f)
            .collect();
        assert_eq!(findings.len(), 1, "{findings:#?}");
        assert!(
            findings[0]
                .message
                .starts_with("re-entrant thread lock `self._lock`")
        );
        assert!(!findings[0].message.contains("deadlock"));
        assert_eq!(findings[0].severity, Severity::High);
        let plain = crate::testing::run_example(&RULE, Language::Python, EXAMPLES.fail[0]).0;
        assert!(plain.iter().all(|(_, f)| f.severity == Severity::Critical));
    }
}
