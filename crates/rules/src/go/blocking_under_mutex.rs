//! GO021: blocking channel operations, I/O and callbacks while holding a
//! mutex.

use super::common;
use super::flow::{self, Flow};
use super::locks::{self, HeldSet};
use crate::context::FileCx;
use crate::rule::{Examples, Rule, RuleMeta};
use std::collections::BTreeSet;
use unsnarl_model::walk::exprs_under;
use unsnarl_model::*;

pub struct BlockingUnderMutex;

pub static META: RuleMeta = RuleMeta {
    id: "GO021",
    name: "blocking-under-mutex",
    category: Category::CriticalSectionIo,
    severity: Severity::Medium,
    languages: &[Language::Go],
    summary: "A channel send/receive, network/disk I/O, a sleep or wait, or a call of a function value while a mutex is held.",
    docs: r#"
While a `sync.Mutex`/`RWMutex` is held (between `Lock` and `Unlock`, or
after `Lock` with a deferred `Unlock`), the code blocks or runs code it does
not control: a channel send or receive (or a `select` with no `default`),
an HTTP/database/network/file call, `time.Sleep`, `wg.Wait()`, a call of a
function of the file that does one of these (unless that method, called
on the same value, unlocks the held mutex around each of its blocking
calls: `d.mu.Unlock(); time.Sleep(t); d.mu.Lock()`), or a call of a listener (a
function value taken from a collection being ranged over, or a callback
named `onX`/`handler`/`hook`...; functional options applied to a local
value, `for _, opt := range opts { opt(&cfg) }` over a variadic `opts
...Option`, are setters, not listeners, and a range over a literal list
of the file's own functions, `range [...]checkFn{it.checkNAT,
it.checkMangle}`, runs code the file wrote). Reads and writes of a connection are left
out: a per-connection mutex exists to serialize them. So is file I/O on
the locked struct's own files (`os.ReadFile(s.idxPath)` under `s.mu`, a
path built from its fields, through locals or a helper's parameters too,
or a method of `s` doing it, also one in another file of the package that
calls no blocking project function, or of a part of `s`: a field, a local holding
one, or a part built under the lock), or under a package-level mutex named for
its files or folder (`sessionFileMu`, `dirMu`), or one handed out per file
(`flock := getFileLock(absPath)`), or a cross-process file lock kept in a
field (`s.lockfile.Lock()`, `r.flock`): that lock guards the files as well. An empty
`select {}` right after `go panic(e)` only parks the goroutine while the
process crashes, and is left too, as is a blocking call that (re)makes
state the lock guards: its result is stored in a field of the locked
value (`s.conn = c` after `c, err := net.Dial(..)`), directly or in a
method of that value such as `s.dial()` (which may first resolve the
host it dials, `net.LookupHost`). A send to channels that
another function closes under the same mutex (its write lock) is left
alone too, sent to directly or through a local copy (`if ch := r.dst; ch
!= nil { ch <- c }` under `r.RLock()`), also as a `select` case beside a listener's own `done`: the
lock is what keeps the send off a closed channel, and unlocking first
would bring back that panic. So is a handshake on a
channel field of the locked value whose other side never takes that mutex
(`r.quit <- true; <-r.done` in `Stop`, answered by a loop that does not
lock; the other side also reaching the channel through the local it was
made in, `closeErr := make(chan error, 1); z.closeErr = closeErr`, or the
parameter of the function it is handed to, `go w.reading(statusCh)`), or the wait for the reply to a request sent that way (`reply :=
make(chan []Entry, 1); c.snapshot <- reply; return <-reply`), or a wait
on a channel field of another value whose closers and senders never take
it (`si.listener.Close(); <-si.done` under a package
mutex, `si.done` closed by that server's goroutine), or a one-way send on one to such a loop (`t.msg <- kick`, other
senders taking the lock too), or a `s.wg.Wait()` for workers that call
`s.wg.Done()` and never take the mutex: it cannot deadlock, and the lock
keeps two callers from running it at once; likewise a reply on a
request's own channel (`req.reply <- v`) whose requesters all wait for
it without a `select` and without the lock. A mutex named for an operation (`sendMu`, `leaveLock`) that no other
function of the file takes exists to run that operation one at a time:
holding it across the operation's I/O is its purpose. The same goes for
a Prometheus collector's `Collect(ch chan<- prometheus.Metric)`: a mutex
only `Collect` takes in the file runs one scrape at a time, and a send on
`ch` under any lock is taken by the registry, which drains it on a
goroutine of its own and never takes the collector's locks. A writer the
function built over an in-memory buffer (`zw := pgzip.NewWriter(&buf)`,
then `zw.Close()`) waits only for its own workers. `time.Sleep(50)`
(nanoseconds, an untyped constant) is not a wait, nor is a dial with no
remote peer (`udp`, a Unix socket, a loopback address). A send on a
channel the file makes with a buffer (in the function, or for the field
sent on: `make(chan T, 1)` assigned to it or put in the struct literal)
is taken to find room, and so is a one-time send (`if !h.sent { h.sent =
true; h.out <- v }`) on a field the struct literal gets from a local made
with a buffer (`out := make(chan T, 1); &S{out: out}`), and a send on each
channel of a list field (or of a map of lists) that the file only ever
appends channels made with a buffer to (`c.watchers[p] =
append(c.watchers[p], make(chan Event, 1))`: reply channels with room for
their reply). A map entry built under the lock after checking it is absent
(`if _, ok := s.m[k]; !ok { s.m[k] = build(k) }`) counts as state the lock
guards, and a package's `init()` is not reported: nothing else runs yet.
Nor is a call of a function of the file that ends by taking the process
down (`panic(err)`, `os.Exit`, `log.Fatal`) after writing a marker file or
a last report: no one is left waiting on the lock.

## Why

Everything else that needs the lock waits as long as the slow operation
does, so one slow peer stalls every goroutine touching the structure. It is
also the classic Go deadlock: the goroutine holding the lock waits on a
channel whose other side first needs the same lock; a callback that calls
back into the locked type deadlocks on the spot.

## Example

```go
package app

import "sync"

type Hub struct {
	mu   sync.Mutex
	subs []chan Event
}

func (h *Hub) Publish(e Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.subs {
		s <- e
	}
}
```

## Fix

Copy what you need under the lock, release it, then block.

```go
package app

import "sync"

type Hub struct {
	mu   sync.Mutex
	subs []chan Event
}

func (h *Hub) Publish(e Event) {
	h.mu.Lock()
	subs := append([]chan Event(nil), h.subs...)
	h.mu.Unlock()
	for _, s := range subs {
		s <- e
	}
}
```
"#,
    examples: &EXAMPLES,
};

impl Rule for BlockingUnderMutex {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>) {
        if common::skip_file(cx) || cx.model.is_test || !locks::file_takes_locks(cx) {
            return;
        }
        for f in cx.model.function_ids() {
            if f.0 == 0 || common::in_test(cx, f) || in_package_init(cx, f) {
                continue;
            }
            let mut fl = Under {
                f,
                found: Vec::new(),
            };
            flow::run_function(cx, &mut fl, &cx.func(f).body, HeldSet::new());
            let mut seen = BTreeSet::new();
            let collects = collector_channel(cx, f).is_some();
            for Found {
                span,
                what: (what, on_goroutine),
                lock,
                lock_at,
            } in fl.found
            {
                if !seen.insert(span.start) || (collects && locked_only_in(cx, f, lock_at)) {
                    continue;
                }
                // Only a wait on another goroutine can wait for this lock.
                let worst = if on_goroutine {
                    format!("and if the other side needs `{lock}` too, this is a deadlock")
                } else {
                    "so one slow call here stalls them all".to_string()
                };
                out.push(cx.finding(
                    &META,
                    span,
                    format!(
                        "{what} while holding `{lock}` (locked at line {}): every goroutine that needs `{lock}` waits as long as this does, {worst}",
                        common::line_of(cx, lock_at)
                    ),
                    format!(
                        "copy what you need under `{lock}`, unlock, then do the blocking work (and re-lock to publish results if needed)"
                    ),
                ));
            }
        }
    }
}

/// A Prometheus collector's `Collect(ch chan<- prometheus.Metric)`, and
/// the channel's name. The registry drains `ch` on a goroutine of its own
/// while `Collect` runs, and never takes the collector's locks: a send on
/// it under a lock cannot deadlock. The registry may also call `Collect`
/// for concurrent scrapes, and a mutex that only `Collect` takes is there
/// to run one scrape at a time (what the client library advises for a
/// collector that is not safe to run concurrently).
fn collector_channel<'a>(cx: &FileCx<'a>, f: FuncId) -> Option<&'a str> {
    let func = cx.func(f);
    if func.name != "Collect" {
        return None;
    }
    func.params
        .iter()
        .find(|p| {
            p.ty.as_ref().is_some_and(|t| {
                t.text.starts_with("chan") && t.text.ends_with("prometheus.Metric")
            })
        })
        .map(|p| &*p.name)
}

/// The lock taken at `lock_at` is taken by no function of the file other
/// than `f` (and its closures): the same field of the same type, or the
/// same package variable.
fn locked_only_in(cx: &FileCx, f: FuncId, lock_at: Span) -> bool {
    let ops: Vec<locks::LockOp> = cx
        .calls_named(&["Lock", "RLock"])
        .into_iter()
        .filter_map(|(e, _)| locks::lock_op(cx, e))
        .collect();
    let Some(taken) = ops.iter().find(|op| op.span == lock_at) else {
        return false;
    };
    let same = |op: &locks::LockOp| match (&taken.class, &op.class) {
        (Some(a), Some(b)) => a == b,
        _ => op.instance.rsplit('.').next() == taken.instance.rsplit('.').next(),
    };
    ops.iter()
        .filter(|op| same(op))
        .all(|op| common::outermost(cx, cx.func_of(op.call)) == f)
}

struct Under {
    f: FuncId,
    found: Vec<Found>,
}

/// A wait found under a lock.
struct Found {
    span: Span,
    /// What blocks, and whether it waits for another goroutine.
    what: (String, bool),
    /// The lock held, and where it was taken.
    lock: String,
    lock_at: Span,
}

impl Under {
    fn report(&mut self, held: &HeldSet, span: Span, what: (String, bool)) {
        let Some(h) = held.last() else { return };
        self.found.push(Found {
            span,
            what,
            lock: h.op.instance.clone(),
            lock_at: h.op.span,
        });
    }

    /// What blocks in an expression evaluated now, and whether what it
    /// waits for is another goroutine (which may need the lock itself).
    fn blocking(&self, cx: &FileCx, e: ExprId) -> Option<(String, bool)> {
        match &cx.expr(e).kind {
            ExprKind::Send { channel, value } => {
                if collector_channel(cx, self.f)
                    .is_some_and(|ch| cx.model.name_of(*channel) == Some(ch))
                    || buffered_local(cx, self.f, *channel)
                    || buffered_field(cx, *channel, false)
                    || (once_guarded(cx, e) && buffered_field(cx, *channel, true))
                    || ranged_channel(cx, *channel)
                    || returns_token(cx, self.f, *channel, *value)
                {
                    return None;
                }
                Some((
                    format!(
                        "sends on `{}` (blocks until a receiver takes it)",
                        cx.source(cx.expr(*channel).span)
                    ),
                    true,
                ))
            }
            ExprKind::Recv(ch) => {
                if is_done_like(cx, *ch) {
                    return None;
                }
                Some((
                    format!(
                        "receives from `{}` (blocks until a sender shows up)",
                        cx.source(cx.expr(*ch).span)
                    ),
                    true,
                ))
            }
            ExprKind::Call(c) => {
                if locks::lock_op(cx, e).is_some()
                    || common::nanosecond_sleep(cx, c)
                    || local_dial(cx, self.f, c)
                {
                    return None;
                }
                if let Some(entry) = cx.effect(c, Effect::Blocking) {
                    if serializing_io(&entry.what) {
                        return None;
                    }
                    return Some((
                        format!(
                            "`{}` {}",
                            common::short_name(&cx.callee_display(c)),
                            entry.what
                        ),
                        common::waits_for_goroutines(entry),
                    ));
                }
                if let Some(t) = &c.target
                    && let Some(chain) = cx.index.blocking_chain_of(cx.lang, t, cx.file)
                    && chain.steps.len() <= 1
                    && !serializing_io(&chain.site.what)
                    && !cx.callee_in_file(c).is_some_and(|g| crashes(cx, g))
                    && !cx.callee_in_file(c).is_some_and(|g| {
                        cx.body_calls(g).any(|k| {
                            cx.call(k).is_some_and(|k| {
                                *k.target.as_deref().unwrap_or("") == *chain.site.callee
                                    && (local_dial(cx, g, k) || common::nanosecond_sleep(cx, k))
                            })
                        })
                    })
                {
                    let callee = &chain.site.callee;
                    let last = callee.rsplit(['.', '/']).next().unwrap_or(callee);
                    return Some((
                        format!(
                            "`{}` (which calls `{}`) {}",
                            common::short_name(&cx.callee_display(c)),
                            common::short_name(callee),
                            chain.site.what
                        ),
                        cx.kb
                            .find(Effect::Blocking, Some(callee), last)
                            .is_some_and(common::waits_for_goroutines),
                    ));
                }
                if self.is_callback(cx, c) {
                    return Some((
                        format!(
                            "calls the function value `{}` (code this function does not control, which may block or take the same lock)",
                            cx.source(cx.expr(c.func).span)
                        ),
                        false,
                    ));
                }
                None
            }
            _ => None,
        }
    }

    /// A call of a listener: a function value taken from a collection
    /// being ranged over (`for _, fn := range s.listeners { fn(ev) }`), or
    /// a parameter/field of function type named like a listener (`onX`,
    /// `handler`, `callback`, `hook`, `notify`). Other function values run
    /// under a lock on purpose (`once.Do(f)`, `withLock(fn)`, lazy loaders).
    fn is_callback(&self, cx: &FileCx, c: &Call) -> bool {
        let callee = cx.model.strip(c.func);
        if let Some(name) = cx.model.name_of(callee)
            && ranged_over(cx, self.f, name)
        {
            return !applies_options(cx, self.f, name, c)
                && !ranges_over_own_funcs(cx, self.f, name);
        }
        let last = match &cx.expr(callee).kind {
            ExprKind::Name { id, .. } => id.as_str(),
            ExprKind::Attr { name, .. } => name.as_str(),
            _ => return false,
        };
        let lower = last.to_ascii_lowercase();
        let listener_like = (last.starts_with("on") && last[2..].starts_with(char::is_uppercase))
            || (last.starts_with("On") && last[2..].starts_with(char::is_uppercase))
            || [
                "handler",
                "callback",
                "hook",
                "listener",
                "notify",
                "subscriber",
                "observer",
            ]
            .iter()
            .any(|w| lower.contains(w));
        if !listener_like {
            return false;
        }
        match &cx.expr(callee).kind {
            ExprKind::Name { id, resolved: None } => common::param_named(cx, self.f, id)
                .and_then(|p| p.ty.as_ref())
                .is_some_and(|t| t.text.trim_start().starts_with("func")),
            ExprKind::Attr { obj, name, .. } if c.receiver.is_some() => {
                let Some(owner) = cx.sema.type_of(*obj) else {
                    return false;
                };
                cx.model.types.iter().any(|t| {
                    t.qualname == owner
                        && t.fields
                            .iter()
                            .any(|f| f.name == *name && f.ty.text.trim_start().starts_with("func"))
                })
            }
            _ => false,
        }
    }
}

/// A method of a writer this function built over an in-memory buffer
/// (`sw := s2.NewWriter(&bb)` with `var bb bytes.Buffer`; `sw.Close()`):
/// what it waits for is its own workers filling memory, which cannot need
/// the lock.
fn writes_to_memory(cx: &FileCx, f: FuncId, c: &Call) -> bool {
    let Some(w) = c.receiver.and_then(|r| cx.model.name_of(r)) else {
        return false;
    };
    let is_buffer = |e: ExprId| {
        let e = common::strip_ref(cx, e);
        matches!(
            cx.sema.type_of(e),
            Some("bytes.Buffer" | "*bytes.Buffer" | "strings.Builder" | "*strings.Builder")
        ) || cx.call(e).is_some_and(|k| {
            k.name == "new"
                && k.positional(0)
                    .is_some_and(|t| cx.model.dotted(t).as_deref() == Some("bytes.Buffer"))
        })
    };
    let binds = common::bindings(cx, common::outermost(cx, f), w);
    !binds.is_empty()
        && binds.iter().all(|&(_, v)| {
            v.and_then(|v| cx.call(cx.model.strip(v))).is_some_and(|k| {
                k.name.starts_with("New") && k.positional(0).is_some_and(is_buffer)
            })
        })
}

/// `net.Dial("udp", ..)`, a Unix socket or a loopback address: no remote
/// peer to wait for (a UDP dial only binds a socket).
fn local_dial(cx: &FileCx, f: FuncId, c: &Call) -> bool {
    matches!(c.target.as_deref(), Some("net.Dial" | "net.DialTimeout"))
        && common::no_remote_peer(cx, common::outermost(cx, f), c)
}

/// A package's `init()` itself (not a goroutine it starts): it runs once,
/// before `main` and before any goroutine that could contend for the lock.
/// A function of the file that ends by taking the process down
/// (`panic(..)`, `os.Exit`, `log.Fatal..`), such as a `fatalError(err)`
/// that writes a marker file first: what it does under the caller's lock
/// stalls no one for longer than the process lives.
fn crashes(cx: &FileCx, f: FuncId) -> bool {
    cx.func(f)
        .body
        .last()
        .is_some_and(|&s| match cx.stmt(s).kind {
            StmtKind::Expr(e) => cx.call(e).is_some_and(|k| {
                matches!(
                    k.target.as_deref(),
                    Some(
                        "panic"
                            | "os.Exit"
                            | "log.Fatal"
                            | "log.Fatalf"
                            | "log.Fatalln"
                            | "log.Panic"
                            | "log.Panicf"
                            | "log.Panicln"
                    )
                )
            }),
            _ => false,
        })
}

fn in_package_init(cx: &FileCx, f: FuncId) -> bool {
    let func = cx.func(f);
    common::outermost(cx, f) == f && func.name == "init" && func.receiver.is_none()
}

/// The statement right before `s` is `go panic(..)`.
fn after_go_panic(cx: &FileCx, s: StmtId) -> bool {
    let Some(block) = crate::util::containing_block(cx, s) else {
        return false;
    };
    let Some(i) = block.iter().position(|&x| x == s) else {
        return false;
    };
    i > 0
        && matches!(cx.stmt(block[i - 1]).kind, StmtKind::Go(e)
            if cx.call(e).is_some_and(|c| c.name == "panic" && c.receiver.is_none()))
}

/// File I/O on the locked struct's own files: the held mutex is `s.mu`
/// and the file call's path is built from fields of `s`
/// (`os.ReadFile(s.idxPath)`, `os.WriteFile(filepath.Join(s.dir, name),
/// ..)`, directly or through a local), it works on an `*os.File` field of
/// `s` (`s.idx.Sync()`), or it is a method of `s` in this file whose file
/// calls all do the same (`s.writeSummary()`). Such a mutex guards the
/// files too: unlocking around the I/O would let readers see them
/// half-written.
fn guards_its_files(cx: &FileCx, held: &HeldSet, e: ExprId, what: &str) -> bool {
    if !crate::shared::blocking::is_file_io(what) {
        return false;
    }
    let Some(owner) = lock_owner(held) else {
        return false;
    };
    let Some(c) = cx.call(e) else { return false };
    // A package-level mutex named for the files it guards (`sessionFileMu`,
    // `fileLock`): taken to serialize the file I/O itself.
    if !owner.contains('.') && names_files(owner) {
        return true;
    }
    // A cross-process file lock kept in a field (`s.lockfile`, `r.flock`,
    // `m.fileLock`): it exists to serialize the work on the files.
    if held
        .last()
        .and_then(|h| h.op.instance.rsplit('.').next())
        .is_some_and(names_file_lock)
    {
        return true;
    }
    // A lock handed out per file (`flock := getFileLock(absPath)`): it
    // exists to serialize the work on that one file.
    if !owner.contains('.') {
        let binds = common::bindings(cx, cx.func_of(e), owner);
        if !binds.is_empty()
            && binds.iter().all(|(_, v)| {
                v.and_then(|v| cx.call(v))
                    .is_some_and(|g| names_files(&g.name) && !g.args.is_empty())
            })
        {
            return true;
        }
    }
    if is_file_call(cx, c) {
        return on_own_file(cx, cx.func_of(e), c, owner, &[]);
    }
    // `s.writeSummary()`: a method of the locked value, in this file; or
    // `fs.lmb.writeIndex()` (or `lmb := fs.lmb; lmb.writeIndex()`): a
    // method of an object the locked value holds, working on that
    // object's own files (part of the state it guards).
    let caller = cx.func_of(e);
    owner_method(cx, c, owner).is_some_and(|(f, recv)| {
        own_file_method(cx, f, recv, &owned_params(cx, caller, f, c, owner), 1)
    }) || (c.receiver.is_some_and(|r| {
        is_field_of(cx, r, owner)
            || cx
                .model
                .name_of(r)
                .is_some_and(|n| part_of(cx, caller, n, owner))
    }) && cx.callee_in_file(c).is_some_and(|g| {
        cx.func(g)
            .receiver
            .as_deref()
            .is_some_and(|recv| own_file_method(cx, g, recv, &[], 1))
    })) || own_file_helper(cx, caller, c, owner)
        || own_file_method_elsewhere(cx, c, owner)
}

/// `f.setFh()` under `f.m`, the method in another file of the package (a
/// per-platform file calling a shared helper): the index says each of its
/// blocking calls is file I/O on its receiver's own files, and it calls no
/// project function that blocks.
fn own_file_method_elsewhere(cx: &FileCx, c: &Call, owner: &str) -> bool {
    if cx.callee_in_file(c).is_some()
        || c.receiver.and_then(|r| cx.model.dotted(r)).as_deref() != Some(owner)
    {
        return false;
    }
    let Some(i) = c
        .target
        .as_deref()
        .and_then(|t| cx.index.resolve(cx.lang, t, cx.file))
    else {
        return false;
    };
    let s = cx.index.summary(i);
    s.blocking.is_some_and(|b| {
        b.on_receiver_files
            && s.calls.iter().all(|k| {
                k.span == b.span
                    || cx
                        .index
                        .blocking_chain_of(cx.lang, &k.target, cx.file)
                        .is_none()
            })
    })
}

/// A lock named as a file lock: `lockfile`, `flock`, `fileLock`,
/// `file_lock` (not `profileLock`).
fn names_file_lock(name: &str) -> bool {
    let words = words_of(name);
    words
        .iter()
        .any(|w| matches!(w.as_str(), "lockfile" | "flock" | "filelock"))
        || words.windows(2).any(|p| p[0] == "file" && p[1] == "lock")
}

/// A name with the word "file" in it (`sessionFileMu`, `file_lock`,
/// `filesMu`), not merely the letters (`profileMu`).
fn names_files(name: &str) -> bool {
    words_of(name)
        .iter()
        .any(|w| matches!(w.as_str(), "file" | "files" | "dir" | "dirs"))
}

/// The lower-cased words of a camelCase or snake_case name.
fn words_of(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    for ch in name.chars() {
        if ch == '_' || (ch.is_ascii_uppercase() && !word.is_empty()) {
            words.push(std::mem::take(&mut word));
        }
        if ch != '_' {
            word.push(ch.to_ascii_lowercase());
        }
    }
    words.push(word);
    words
}

/// The parameters of `callee` that the call `c` (made in `caller`) fills
/// with values built from `owner`'s fields (`s.write(s.pathFor(key), ..)`,
/// through a local too).
fn owned_params<'a>(
    cx: &FileCx<'a>,
    caller: FuncId,
    callee: FuncId,
    c: &Call,
    owner: &str,
) -> Vec<&'a str> {
    if c.has_spread() {
        return Vec::new();
    }
    cx.func(callee)
        .params
        .iter()
        .zip(&c.args)
        .filter(|(_, a)| built_from_fields(cx, caller, a.value, owner, &[], 3))
        .map(|(p, _)| p.name.as_str())
        .collect()
}

/// `syncAndClose(s.data, s.index)`: a function of this file (not a
/// method) handed `owner`'s file fields, whose every file call works on
/// one of the parameters that received them.
fn own_file_helper(cx: &FileCx, caller: FuncId, c: &Call, owner: &str) -> bool {
    let Some(g) = cx.callee_in_file(c) else {
        return false;
    };
    if cx.func(g).receiver.is_some() {
        return false;
    }
    let owned = owned_params(cx, caller, g, c, owner);
    if owned.is_empty() {
        return false;
    }
    // On an owned parameter, or a path built from one (`tmp :=
    // filepath.Join(dir, key+".tmp")`). `owner` names nothing in `g`.
    let is_owned =
        |e: Option<ExprId>| e.is_some_and(|e| built_from_fields(cx, g, e, "\0", &owned, 3));
    let mut found = false;
    for k in cx.body_calls(g).filter_map(|x| cx.call(x)) {
        if is_file_call(cx, k) {
            if !(is_owned(k.receiver) || is_owned(k.positional(0))) {
                return false;
            }
            found = true;
        }
    }
    found
}

/// The value whose mutex is held: `s` for `s.mu`, `s` for an embedded
/// mutex locked as `s.Lock()`.
fn lock_owner(held: &HeldSet) -> Option<&str> {
    let instance = held.last()?.op.instance.as_str();
    Some(instance.rsplit_once('.').map_or(instance, |(o, _)| o))
}

/// `c` calls a method of `owner` defined in this file (`s.writeSummary()`
/// under `s.mu`): the method and its receiver's name.
fn owner_method<'a>(cx: &FileCx<'a>, c: &Call, owner: &str) -> Option<(FuncId, &'a str)> {
    let f = cx.callee_in_file(c)?;
    let recv = cx.func(f).receiver.as_deref()?;
    (c.receiver.and_then(|r| cx.model.dotted(r)).as_deref() == Some(owner)).then_some((f, recv))
}

/// `e` is a field of `owner` (`s.conn`, `s.cfg.dir` for `s`).
fn is_field_of(cx: &FileCx, e: ExprId, owner: &str) -> bool {
    crate::shared::blocking::is_field_of(cx.model, e, owner)
}

/// The blocking call (re)makes state the lock guards: its result goes into
/// a field of the locked value (`s.conn, err = net.Dial(..)`, or `c, err
/// := net.Dial(..)` then `s.conn = c`), directly or in a method of that
/// value (`s.dial()`) whose every blocking call does so (or resolves the
/// host that call dials, `net.LookupHost`). No reader may see
/// the connection half-made: that is what the lock is for.
fn establishes_guarded_state(cx: &FileCx, held: &HeldSet, e: ExprId) -> bool {
    let Some(owner) = lock_owner(held) else {
        return false;
    };
    let Some(c) = cx.call(e) else { return false };
    if stores_into_field(cx, cx.func_of(e), e, owner) {
        return true;
    }
    let Some((f, recv)) = owner_method(cx, c, owner) else {
        return false;
    };
    let blocking: Vec<ExprId> = cx
        .body_calls(f)
        .filter(|&x| {
            cx.call(x)
                .is_some_and(|k| cx.effect(k, Effect::Blocking).is_some())
        })
        .collect();
    // Resolving the host is the first step of the dial it feeds.
    let resolves = |x: ExprId| {
        cx.call(x).is_some_and(|k| {
            k.target
                .as_deref()
                .is_some_and(|t| t.starts_with("net.Lookup") || t.starts_with("net.Resolve"))
        })
    };
    let stored: Vec<bool> = blocking
        .iter()
        .map(|&x| stores_into_field(cx, f, x, recv))
        .collect();
    stored.iter().any(|&b| b)
        && blocking
            .iter()
            .zip(&stored)
            .all(|(&x, &kept)| kept || resolves(x))
}

/// The value of `call` (in function `f`) is stored in a field of `owner`
/// (or an entry of one it checked for first): assigned there directly, or
/// bound to a local that `f` then assigns to one.
fn stores_into_field(cx: &FileCx, f: FuncId, call: ExprId, owner: &str) -> bool {
    // A field, or the entry of a map field the function looked up before
    // the call (`if _, ok := s.hashes[path]; !ok { s.hashes[path] =
    // newHash(path) }`: check-then-insert, so no key is built twice).
    let call_start = cx.expr(call).span.start;
    let looked_up = |obj: ExprId, index: ExprId| {
        let (map, key) = (cx.source(cx.expr(obj).span), cx.source(cx.expr(index).span));
        cx.body_exprs(f).iter().any(|&x| {
            cx.expr(x).span.end <= call_start
                && matches!(&cx.expr(x).kind, ExprKind::Index { obj: o, index: i }
                    if cx.source(cx.expr(*o).span) == map && cx.source(cx.expr(*i).span) == key)
        })
    };
    let field_of_owner = |t: ExprId| match &cx.expr(t).kind {
        ExprKind::Index { obj, index } => is_field_of(cx, *obj, owner) && looked_up(*obj, *index),
        _ => is_field_of(cx, t, owner),
    };
    let unsnarl_model::walk::Parent::Stmt(s) = cx.tree.expr_parent(call) else {
        return false;
    };
    let StmtKind::Assign {
        targets,
        value: Some(v),
        ..
    } = &cx.stmt(s).kind
    else {
        return false;
    };
    if *v != call {
        return false;
    }
    let flat: Vec<ExprId> = targets
        .iter()
        .flat_map(|&t| match &cx.expr(t).kind {
            ExprKind::Collection { elems, .. } => elems.clone(),
            _ => vec![t],
        })
        .collect();
    // The first result is the value (`c, err := ..`).
    let Some(&first) = flat.first() else {
        return false;
    };
    if field_of_owner(first) {
        return true;
    }
    let Some(local) = cx.model.name_of(first) else {
        return false;
    };
    // Stored before the lock is let go (`mu.Unlock()` in between means the
    // store belongs to another critical section).
    let after = cx.expr(call).span.end;
    let unlocked_before = |at: u32| {
        cx.body_calls(f).any(|k| {
            let sp = cx.expr(k).span;
            sp.start >= after
                && sp.end <= at
                && cx
                    .call(k)
                    .is_some_and(|c| matches!(c.name.as_str(), "Unlock" | "RUnlock"))
                && !matches!(cx.tree.expr_parent(k), unsnarl_model::walk::Parent::Stmt(d)
                    if matches!(cx.stmt(d).kind, StmtKind::Defer(_)))
        })
    };
    // `s.conn = c`, or wrapped: `s.conn = &tracedConn{c}`, `s.rc =
    // rpc.NewClient(c)`, also through a local (`rc := rpc.NewClient(c);
    // s.rc = rc`).
    // (Not `append(s.items, v)`: a collection that grows by what each call
    // read is no connection being remade.)
    let wraps = |v: ExprId, names: &[&str]| {
        cx.model.name_of(v).is_some_and(|n| names.contains(&n))
            || (matches!(
                cx.expr(cx.model.strip(v)).kind,
                ExprKind::Unary { .. } | ExprKind::Collection { .. }
            ) || cx
                .call(cx.model.strip(v))
                .is_some_and(|c| c.name != "append"))
                && exprs_under(cx.model, v)
                    .into_iter()
                    .any(|x| cx.model.name_of(x).is_some_and(|n| names.contains(&n)))
    };
    let mut locals: Vec<&str> = vec![local];
    for &x in cx.body_stmts(f) {
        if cx.stmt(x).span.start < after {
            continue;
        }
        if let StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } = &cx.stmt(x).kind
            && let [t] = targets.as_slice()
            && let Some(n) = cx.model.name_of(*t)
            && !locals.contains(&n)
            && wraps(*v, &locals)
        {
            locals.push(n);
        }
    }
    let holds_local = |v: ExprId| wraps(v, &locals);
    cx.body_stmts(f).iter().any(|&x| {
        matches!(&cx.stmt(x).kind, StmtKind::Assign { targets, value: Some(v), .. }
            if targets.iter().any(|&t| field_of_owner(t)) && holds_local(*v))
            && cx.stmt(x).span.start >= after
            && !unlocked_before(cx.stmt(x).span.start)
    })
}

/// Every file call of the method `f` (receiver `recv`) is on `recv`'s own
/// files, directly or through methods of `recv` it calls, `depth` levels
/// down; and there is at least one.
fn own_file_method(cx: &FileCx, f: FuncId, recv: &str, owned: &[&str], depth: u32) -> bool {
    let mut found = false;
    for k in cx.body_calls(f).filter_map(|x| cx.call(x)) {
        if is_file_call(cx, k) || file_helper_elsewhere(cx, f, k, recv) {
            if !on_own_file(cx, f, k, recv, owned) {
                return false;
            }
            found = true;
        } else if depth > 0
            && k.receiver
                .and_then(|r| cx.model.name_of(r))
                .is_some_and(|r| r == recv || part_of(cx, f, r, recv))
            && let Some(g) = cx.callee_in_file(k)
            && g != f
            && let Some(inner) = cx.func(g).receiver.as_deref()
            && cx
                .index
                .blocking_chain_of(cx.lang, k.target.as_deref().unwrap_or(""), cx.file)
                .is_some()
        {
            if !own_file_method(cx, g, inner, &[], depth - 1) {
                return false;
            }
            found = true;
        }
    }
    found
}

/// The local `name` of `f` holds a part of `owner`: every binding is a
/// field of it (`lmb := fs.lmb`) or a value built here (`mb :=
/// &block{index: i}`, a new part the method adds). Its own files are
/// `owner`'s files too.
fn part_of(cx: &FileCx, f: FuncId, name: &str, owner: &str) -> bool {
    let binds = common::bindings(cx, f, name);
    !binds.is_empty()
        && binds.iter().all(|&(_, v)| {
            v.is_some_and(|v| {
                let v = common::strip_ref(cx, v);
                is_field_of(cx, v, owner)
                    || matches!(
                        cx.expr(v).kind,
                        ExprKind::Collection {
                            kind: CollKind::Struct,
                            ..
                        }
                    )
            })
        })
}

/// A call of a project function that is not a method of `recv` and
/// blocks only by file I/O (`fileutil.Fdatasync(w.tail().File)`): judged
/// by its arguments like a file call.
fn file_helper_elsewhere(cx: &FileCx, f: FuncId, c: &Call, recv: &str) -> bool {
    if c.receiver
        .and_then(|r| cx.model.name_of(r))
        .is_some_and(|r| r == recv || (cx.callee_in_file(c).is_some() && part_of(cx, f, r, recv)))
    {
        return false;
    }
    c.target.as_deref().is_some_and(|t| {
        cx.index
            .blocking_chain_of(cx.lang, t, cx.file)
            .is_some_and(|ch| crate::shared::blocking::is_file_io(&ch.site.what))
    })
}

fn is_file_call(cx: &FileCx, c: &Call) -> bool {
    cx.effect(c, Effect::Blocking)
        .is_some_and(|en| crate::shared::blocking::is_file_io(&en.what))
}

/// A file call (in function `f`) on `owner`'s own file: its path argument
/// is built from fields of `owner` (directly, or through a local of `f`
/// assigned from them), or it is a method of an `*os.File` field of
/// `owner`.
fn on_own_file(cx: &FileCx, f: FuncId, c: &Call, owner: &str, owned: &[&str]) -> bool {
    let field_of_owner = |x: ExprId| is_field_of(cx, x, owner);
    c.positional(0)
        .is_some_and(|arg| built_from_fields(cx, f, arg, owner, owned, 3))
        || c.receiver.is_some_and(|r| {
            field_of_owner(r)
                && cx
                    .sema
                    .type_of(r)
                    .is_some_and(|t| t.trim_start_matches('*') == "os.File")
        })
}

/// `e` is built from fields of `owner` (`filepath.Join(s.dir, name)`), or
/// from locals of `f` that are, `depth` assignments back: `dir :=
/// filepath.Join(s.cfg.Dir, "msgs")`, then `mb.path = filepath.Join(dir,
/// fi.Name())`, then `os.ReadFile(mb.path)`.
///
/// `owned` names parameters of `f` that its caller filled with such a
/// value (`writeKey(s.dir, ..)`, `s.write(s.pathFor(key), ..)`): they count
/// as fields.
fn built_from_fields(
    cx: &FileCx,
    f: FuncId,
    e: ExprId,
    owner: &str,
    owned: &[&str],
    depth: u32,
) -> bool {
    let parts = exprs_under(cx.model, e);
    if parts.iter().any(|&x| {
        is_field_of(cx, x, owner) || cx.model.name_of(x).is_some_and(|n| owned.contains(&n))
    }) {
        return true;
    }
    if depth == 0 {
        return false;
    }
    let from = |v: &Option<ExprId>| {
        v.is_some_and(|v| built_from_fields(cx, f, v, owner, owned, depth - 1))
    };
    parts.into_iter().any(|x| match &cx.expr(x).kind {
        ExprKind::Name { id, .. } => common::bindings(cx, f, id).iter().any(|(_, v)| from(v)),
        // `mb.path` of a local `mb`: what `f` stores there.
        ExprKind::Attr { obj, .. } if cx.model.name_of(*obj).is_some_and(|n| n != owner) => {
            let Some(d) = cx.model.dotted(x) else {
                return false;
            };
            cx.body_stmts(f).iter().any(|&s| {
                matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value, .. }
                    if targets.iter().any(|&t| cx.model.dotted(t).as_deref() == Some(d.as_str()))
                        && from(value))
            })
        }
        _ => false,
    })
}

/// Connection reads/writes and stream copies: what a per-connection write
/// or read mutex exists to serialize.
fn serializing_io(what: &str) -> bool {
    what.contains("connection") || what.contains("stream")
}

/// `name` is the variable of a range over a collection in `f` or an
/// enclosing function.
fn ranged_over(cx: &FileCx, f: FuncId, name: &str) -> bool {
    cx.body_stmts(f).iter().copied().any(|s| {
        matches!(&cx.stmt(s).kind, StmtKind::For { target: Some(t), .. }
            if common::names_in_target(cx, *t).contains(&name))
    })
}

/// `name` ranges over a literal list of functions of this file (`for _,
/// check := range [...]checkFn{it.checkMangle, it.checkNAT}`): each call is
/// code the file wrote, run under the lock by design, not a listener.
fn ranges_over_own_funcs(cx: &FileCx, f: FuncId, name: &str) -> bool {
    let own = |e: ExprId| {
        let last = match &cx.expr(cx.model.strip(e)).kind {
            ExprKind::Name { id, .. } => id.as_str(),
            ExprKind::Attr { name, .. } => name.as_str(),
            _ => return false,
        };
        cx.model.function_ids().any(|g| cx.func(g).name == last)
    };
    cx.body_stmts(f).iter().any(|&s| {
        matches!(&cx.stmt(s).kind, StmtKind::For { target: Some(t), iter, .. }
            if common::names_in_target(cx, *t).contains(&name)
                && matches!(&cx.expr(cx.model.strip(*iter)).kind,
                    ExprKind::Collection { elems, .. } if !elems.is_empty() && elems.iter().all(|&e| own(e))))
    })
}

/// Functional options applied to a value of this function (`for _, opt :=
/// range opts { opt(&cfg) }` over a variadic `opts ...Option`, or a slice
/// of options handed down, `opts []Opt`): by the
/// idiom, an option sets fields of what it is handed and returns; it is
/// not a listener that may block or call back.
fn applies_options(cx: &FileCx, f: FuncId, name: &str, c: &Call) -> bool {
    let [arg] = c.args.as_slice() else {
        return false;
    };
    let of_local = matches!(cx.expr(cx.model.strip(arg.value)).kind,
        ExprKind::Unary { op: UnOp::Ref, operand } if cx.model.name_of(operand).is_some());
    if !of_local {
        return false;
    }
    // `opts ...Option`, or `opts []snapshots.Opt` passed down.
    let options = |coll: &str| {
        common::param_named(cx, f, coll)
            .and_then(|p| p.ty.as_ref())
            .is_some_and(|t| {
                let t = t.text.trim();
                t.starts_with("...")
                    || (t.starts_with("[]") && (t.ends_with("Opt") || t.ends_with("Option")))
            })
    };
    cx.body_stmts(f).iter().any(|&s| {
        matches!(&cx.stmt(s).kind, StmtKind::For { target: Some(t), iter, .. }
            if common::names_in_target(cx, *t).contains(&name)
                && cx.model.name_of(*iter).is_some_and(options))
    })
}

/// `<-ctx.Done()`, `<-done`-style waits on cancellation are still blocking
/// but are how a locked section is aborted; not reported.
fn is_done_like(cx: &FileCx, ch: ExprId) -> bool {
    cx.call(ch)
        .is_some_and(|c| c.name == "Done" || c.target.as_deref() == Some("time.After"))
}

/// The send runs at most once per value: inside `if !h.sent { h.sent =
/// true; .. }` (or `if !h.sent && ..`), the flag (a field) set at the top
/// level of that block.
fn once_guarded(cx: &FileCx, send: ExprId) -> bool {
    let Some(st) = cx.tree.enclosing_stmt(send) else {
        return false;
    };
    cx.tree.stmt_ancestors(st).any(|a| {
        let StmtKind::If { cond, then, .. } = &cx.stmt(a).kind else {
            return false;
        };
        // `!h.sent`, also as the first of `&&` (`!h.sent && h.isClient`).
        let mut c = cx.model.strip(*cond);
        while let ExprKind::Logical {
            op: LogicalOp::And,
            left,
            ..
        } = &cx.expr(c).kind
        {
            c = cx.model.strip(*left);
        }
        let ExprKind::Unary {
            op: UnOp::Not,
            operand,
        } = &cx.expr(c).kind
        else {
            return false;
        };
        let Some(flag) = cx.model.dotted(*operand).filter(|f| f.contains('.')) else {
            return false;
        };
        crate::util::block_contains(cx, then, st)
            && then.iter().any(|&s| {
                matches!(&cx.stmt(s).kind, StmtKind::Assign { targets, value: Some(v), .. }
                    if cx.model.literal(*v) == Some(&Lit::Bool(true))
                        && targets.iter().any(|&t| cx.model.dotted(t).as_deref() == Some(flag.as_str())))
            })
    })
}

/// A struct field channel made with a buffer somewhere in the file
/// (`b.readySema = make(chan bool, len(all))`, or `&Hub{events: make(chan
/// Event, 64)}`; with `through_locals`, also through a local the
/// constructor made it in: `ch := make(chan T, 1); &S{out: ch}`).
fn buffered_field(cx: &FileCx, ch: ExprId, through_locals: bool) -> bool {
    let ExprKind::Attr { name, .. } = &cx.expr(cx.model.strip(ch)).kind else {
        return false;
    };
    let made_buffered = |v: ExprId| {
        cx.call(v).is_some_and(|c| {
            c.target.as_deref() == Some("make")
                && common::makes_chan(cx, c)
                && c.positional(1)
                    .is_some_and(|n| cx.model.int_value(n) != Some(0))
        })
    };
    // Also through a local the constructor made it in (`ch := make(chan T,
    // 1); return &S{out: ch}`).
    let buffered_make = |v: ExprId| {
        made_buffered(v)
            || (through_locals
                && cx
                    .model
                    .name_of(cx.model.strip(v))
                    .is_some_and(|n| cx.model.only_ever_assigned(n, made_buffered)))
    };
    let assigned = cx.model.stmts.iter().any(|st| {
        let StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } = &st.kind
        else {
            return false;
        };
        targets
            .iter()
            .any(|&t| matches!(&cx.expr(t).kind, ExprKind::Attr { name: n, .. } if n == name))
            && buffered_make(*v)
    });
    assigned
        || cx.model.exprs.iter().any(|e| match &e.kind {
            ExprKind::Collection {
                keys,
                elems,
                ty: Some(_),
                ..
            } => keys
                .iter()
                .zip(elems)
                .any(|(k, &v)| k.as_deref() == Some(name.as_str()) && buffered_make(v)),
            _ => false,
        })
}

/// A channel taken from a collection field being ranged over (`for _, ch :=
/// range c.waiters { ch <- v }`) whose elements, everywhere the file
/// appends them, are made with a buffer (reply channels with room for the
/// reply).
/// `mem := <-c.memMu` ... `c.memMu <- mem`: the value sent was received
/// from the same channel in this function, a token given back to a channel
/// used as a lock (a buffered one, or taking the token out would have
/// needed a sender): the slot it came from is free, so the send does not
/// wait.
fn returns_token(cx: &FileCx, f: FuncId, ch: ExprId, value: ExprId) -> bool {
    let (Some(chan), Some(sent)) = (cx.model.dotted(ch), cx.model.name_of(value)) else {
        return false;
    };
    cx.body_stmts(f).iter().any(|&s| {
        let StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } = &cx.stmt(s).kind
        else {
            return false;
        };
        let ExprKind::Recv(from) = &cx.expr(cx.model.strip(*v)).kind else {
            return false;
        };
        cx.model.dotted(*from).as_deref() == Some(chan.as_str())
            && targets.iter().any(|&t| {
                common::names_in_target(cx, t)
                    .first()
                    .is_some_and(|&n| n == sent)
            })
    })
}

fn ranged_channel(cx: &FileCx, ch: ExprId) -> bool {
    if cx.model.name_of(ch).is_none() {
        return false;
    }
    let Some(field) = ranged_field(cx, ch).or_else(|| ranged_list_of_map_field(cx, ch)) else {
        return false;
    };
    let mut appended = 0;
    for (id, c) in cx.calls_to(&["append"]) {
        // `append(c.waiters, ch)`, or into one list of a map of lists:
        // `append(c.watchers[k], ch)`.
        let list = |a: ExprId| match &cx.expr(a).kind {
            ExprKind::Index { obj, .. } => *obj,
            _ => a,
        };
        if !c
            .positional(0)
            .map(list)
            .is_some_and(|a| match &cx.expr(a).kind {
                ExprKind::Attr { name, .. } => *name == field,
                ExprKind::Name {
                    id,
                    resolved: Some(_),
                } => *id == field,
                _ => false,
            })
        {
            continue;
        }
        let Some(v) = c.positional(1) else {
            return false;
        };
        let made = cx.call(v).or_else(|| {
            let n = cx.model.name_of(v)?;
            let g = cx.func_of(id);
            common::bindings(cx, g, n)
                .into_iter()
                .find_map(|(_, val)| val.and_then(|val| cx.call(val)))
        });
        let buffered = made.is_some_and(|m| {
            m.target.as_deref() == Some("make")
                && common::makes_chan(cx, m)
                && m.positional(1)
                    .is_some_and(|n| cx.model.int_value(n) != Some(0))
        });
        if !buffered {
            return false;
        }
        appended += 1;
    }
    appended > 0
}

/// The field a channel comes from: `s.events` itself, a local copy of it
/// (`ch := s.events`), the map it was looked up in (`ch, ok :=
/// s.chans[tag]`), or the field the loop around it ranges over (`for _, c
/// := range s.listeners`).
fn ranged_field(cx: &FileCx, ch: ExprId) -> Option<Str> {
    if let ExprKind::Attr { name, .. } = &cx.expr(ch).kind {
        return Some(name.clone());
    }
    let name = cx.model.name_of(ch)?;
    // `ch, ok := s.chans[tag]` (or `ch := s.chans[tag]`): looked up in the
    // field.
    let looked_up = cx.body_stmts(cx.func_of(ch)).iter().find_map(|&s| {
        let StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } = &cx.stmt(s).kind
        else {
            return None;
        };
        let binds = targets.first().is_some_and(|&t| match &cx.expr(t).kind {
            ExprKind::Collection { elems, .. } => {
                elems.first().and_then(|&e| cx.model.name_of(e)) == Some(name)
            }
            _ => cx.model.name_of(t) == Some(name),
        });
        // Or a copy of the field itself (`if ch := r.dst; ch != nil`).
        let v = cx.model.strip(*v);
        let obj = match &cx.expr(v).kind {
            ExprKind::Index { obj, .. } => *obj,
            ExprKind::Attr { .. } => v,
            _ => return None,
        };
        match &cx.expr(obj).kind {
            ExprKind::Attr { name, .. } if binds => Some(name.clone()),
            _ => None,
        }
    });
    if looked_up.is_some() {
        return looked_up;
    }
    cx.enclosing_stmts(ch)
        .into_iter()
        .find_map(|s| match &cx.stmt(s).kind {
            StmtKind::For {
                target: Some(t),
                iter,
                ..
            } if common::names_in_target(cx, *t).contains(&name) => match &cx.expr(*iter).kind {
                ExprKind::Attr { name, .. } => Some(name.clone()),
                // A package-level list (`for _, w := range waiters`).
                ExprKind::Name {
                    id,
                    resolved: Some(_),
                } => Some(id.clone()),
                _ => None,
            },
            _ => None,
        })
}

/// A channel taken from one list of a map of lists (`for _, ws := range
/// c.watchers { for _, ch := range ws {..} }`, or `ws := c.watchers[k]`):
/// the map field.
fn ranged_list_of_map_field(cx: &FileCx, ch: ExprId) -> Option<Str> {
    let name = cx.model.name_of(ch)?;
    cx.enclosing_stmts(ch)
        .into_iter()
        .find_map(|s| match &cx.stmt(s).kind {
            StmtKind::For {
                target: Some(t),
                iter,
                ..
            } if common::names_in_target(cx, *t).contains(&name) => match &cx.expr(*iter).kind {
                ExprKind::Name { id, resolved: None } => list_of_map_field(cx, *iter, id),
                _ => None,
            },
            _ => None,
        })
}

/// The map field a local list comes from: the value of a range over the
/// field (`for _, ws := range c.watchers`) or an entry looked up in it
/// (`ws := c.watchers[k]`).
fn list_of_map_field(cx: &FileCx, at: ExprId, list: &str) -> Option<Str> {
    let field_of = |e: ExprId| match &cx.expr(cx.model.strip(e)).kind {
        ExprKind::Attr { name, .. } => Some(name.clone()),
        _ => None,
    };
    let ranged = cx
        .enclosing_stmts(at)
        .into_iter()
        .find_map(|s| match &cx.stmt(s).kind {
            StmtKind::For {
                target: Some(t),
                iter,
                ..
            } if common::names_in_target(cx, *t).last() == Some(&list) => field_of(*iter),
            _ => None,
        });
    ranged.or_else(|| {
        let binds = common::bindings(cx, cx.func_of(at), list);
        let [(_, Some(v))] = binds.as_slice() else {
            return None;
        };
        match &cx.expr(cx.model.strip(*v)).kind {
            ExprKind::Index { obj, .. } => field_of(*obj),
            _ => None,
        }
    })
}

/// A send made under a mutex (read or write side) whose write lock is
/// taken by the function that closes those same channels (`for _, c :=
/// range ch.cancels { close(c) }` under `notifyM.Lock()`): the lock is what
/// keeps the send off a closed channel, and unlocking first would bring
/// back the "send on closed channel" panic.
fn fenced_against_close(cx: &FileCx, held: &HeldSet, e: ExprId) -> bool {
    let ExprKind::Send { channel, .. } = &cx.expr(e).kind else {
        return false;
    };
    channel_fenced_against_close(cx, held, *channel)
}

/// [`fenced_against_close`] for the channel a send goes to, also when the
/// send is a `select` case.
fn channel_fenced_against_close(cx: &FileCx, held: &HeldSet, channel: ExprId) -> bool {
    let Some(h) = held.last() else {
        return false;
    };
    let Some(field) = ranged_field(cx, channel) else {
        return false;
    };
    let mutex = h.op.instance.rsplit('.').next().unwrap_or(&h.op.instance);
    // Another function's close: one that sends and then closes its own
    // channels under the lock (a shutdown broadcast) still blocks on a slow
    // listener with the lock held.
    let sender = common::outermost(cx, cx.func_of(channel));
    cx.calls_to(&["close"]).into_iter().any(|(id, c)| {
        let g = cx.func_of(id);
        common::outermost(cx, g) != sender
            && c.positional(0)
                .and_then(|a| ranged_field(cx, a))
                .is_some_and(|closed| closed == field)
            && cx.body_calls(g).any(|l| {
                locks::lock_op(cx, l).is_some_and(|op| {
                    op.kind == locks::OpKind::Lock && op.instance.rsplit('.').next() == Some(mutex)
                })
            })
    })
}

/// A handshake on a channel field of the locked value (`r.quit <- true;
/// <-r.done` under `r.mu` in `Stop`; the receive also from a field of
/// another value, `<-si.done` after `si.listener.Close()`, whose closers
/// never lock), or a one-way send on one (`t.msg <-
/// kick` to a `go t.run()` loop), whose other side, every function of the
/// file receiving from (or sending to) that channel, never takes a mutex
/// of that name: the
/// peer cannot be waiting for the lock, so the handshake cannot deadlock,
/// and the lock is what keeps two callers from running it at once.
///
/// Or a reply on a request's own channel (`cmd.reply <- rows` under
/// `w.mu`) whose every receiver in the file waits for it unconditionally
/// (`w.c <- req; return <-req.reply`, no `select`, no `range`) and never
/// takes that mutex: the requester is already waiting, so the send is
/// taken at once.
fn peer_never_locks(cx: &FileCx, held: &HeldSet, e: ExprId) -> bool {
    let (Some(h), Some(owner)) = (held.last(), lock_owner(held)) else {
        return false;
    };
    if let Some(c) = cx.call(e)
        && c.target.as_deref() == Some("sync.WaitGroup.Wait")
    {
        return workers_never_lock(cx, h, owner, e, c);
    }
    let (ch, is_send) = match &cx.expr(e).kind {
        ExprKind::Send { channel, .. } => (*channel, true),
        ExprKind::Recv(ch) => (*ch, false),
        _ => return false,
    };
    if !is_send && let Some(local) = cx.model.name_of(ch) {
        return awaits_reply_to_own_request(cx, held, e, local);
    }
    let ExprKind::Attr { obj, name, .. } = &cx.expr(ch).kind else {
        return false;
    };
    // A send on another value's channel is a reply; a receive from one
    // (`<-si.done` for a server goroutine of an entry of a map the
    // package's mutex guards) is a handshake like one on the locked value's.
    let reply = is_send && cx.model.dotted(*obj).as_deref() != Some(owner);
    let mutex = h.op.instance.rsplit('.').next().unwrap_or(&h.op.instance);
    // For a reply, a field of that name on a value of another known type
    // (the worker's own `w.c` beside the request's `req.c`) is another
    // channel.
    let request_type = cx.sema.type_of(*obj).filter(|_| reply);
    let on_field = |x: ExprId| {
        matches!(&cx.expr(x).kind, ExprKind::Attr { obj: o, name: n, .. }
            if n == name
                && !matches!((request_type, cx.sema.type_of(*o)), (Some(a), Some(b)) if a != b))
    };
    let here = common::outermost(cx, cx.func_of(e));
    // The field's channel under other names: a local it was made in
    // (`closeErr := make(chan error, 1); z.closeErr = closeErr`), seen by
    // the closures of that function, or the parameter of a function of
    // the file the local is handed to (`go w.reading(statusCh, pipe)`).
    let aliases = if reply {
        Vec::new()
    } else {
        field_aliases(cx, name)
    };
    let on_alias = |x: ExprId| {
        cx.model.name_of(x).is_some_and(|n| {
            let at = common::outermost(cx, cx.func_of(x));
            aliases
                .iter()
                .any(|(g, a)| *a == n && (*g == at || *g == cx.func_of(x)))
        })
    };
    let mut peers: Vec<FuncId> = Vec::new();
    for (i, x) in cx.model.exprs.iter().enumerate() {
        let id = ExprId(i as u32);
        // The other side: receivers of a send, senders to a receive (and
        // whoever closes the channel). Fellow senders queue behind the
        // lock and wait on no one this one waits for.
        let channel = match &x.kind {
            ExprKind::Send { channel, .. } if !is_send => Some(*channel),
            ExprKind::Recv(c) if is_send => Some(*c),
            ExprKind::Call(c) if c.name == "close" => c.positional(0),
            _ => None,
        };
        if let Some(ch) = channel
            && (on_field(ch) || on_alias(ch))
        {
            // Through an alias, the goroutine holding it is the other side
            // (the send may sit in a deferred closure).
            peers.push(if on_field(ch) {
                cx.func_of(id)
            } else {
                goroutine_root(cx, cx.func_of(id))
            });
        }
    }
    for (i, st) in cx.model.stmts.iter().enumerate() {
        let on = |x: ExprId| on_field(x) || on_alias(x);
        let works = match &st.kind {
            StmtKind::Select { arms, .. } => arms.iter().find_map(|a| match a.kind {
                ArmKind::Recv { channel, .. } if is_send && on(channel) => Some(channel),
                ArmKind::Send { channel, .. } if !is_send && on(channel) => Some(channel),
                _ => None,
            }),
            StmtKind::For { iter, .. } if is_send && on(*iter) => Some(*iter),
            _ => None,
        };
        if let Some(ch) = works {
            // A requester that may stop waiting (a timeout case) can
            // leave the reply with nobody to take it.
            if reply {
                return false;
            }
            let g = cx.tree.stmt_func(StmtId(i as u32));
            peers.push(if on_field(ch) {
                g
            } else {
                goroutine_root(cx, g)
            });
        }
    }
    peers.retain(|&g| common::outermost(cx, g) != here);
    none_takes(cx, peers, mutex)
}

/// The function whose goroutine runs `f`: `f` itself when it is a named
/// function or the literal of a `go` statement, else (a deferred or called
/// closure) the function around it.
fn goroutine_root(cx: &FileCx, f: FuncId) -> FuncId {
    let mut g = f;
    while let Some(p) = cx.func(g).parent
        && common::go_stmt_of_closure(cx, g).is_none()
    {
        g = p;
    }
    g
}

/// The locals and parameters that hold the channel of field `field`: a
/// local assigned to it (`x.field = local`), keyed by the outermost
/// function that assigns it (its closures see the local), and the
/// parameter of a function of the file that the local is passed to, keyed
/// by that function.
fn field_aliases<'a>(cx: &FileCx<'a>, field: &str) -> Vec<(FuncId, &'a str)> {
    let mut out: Vec<(FuncId, &'a str)> = Vec::new();
    for (i, st) in cx.model.stmts.iter().enumerate() {
        let StmtKind::Assign {
            targets,
            value: Some(v),
            ..
        } = &st.kind
        else {
            continue;
        };
        let [t] = targets.as_slice() else { continue };
        if !matches!(&cx.expr(*t).kind, ExprKind::Attr { name, .. } if name == field) {
            continue;
        }
        let Some(local) = cx.model.name_of(*v) else {
            continue;
        };
        let f = cx.tree.stmt_func(StmtId(i as u32));
        let outer = common::outermost(cx, f);
        out.push((outer, local));
        for g in cx.with_nested(outer) {
            for c in cx.body_calls(g).filter_map(|e| cx.call(e)) {
                let Some(callee) = cx.callee_in_file(c) else {
                    continue;
                };
                for (k, a) in c.args.iter().enumerate() {
                    if a.name.is_none()
                        && cx.model.name_of(a.value) == Some(local)
                        && let Some(p) = cx.func(callee).params.get(k)
                    {
                        out.push((callee, p.name.as_str()));
                    }
                }
            }
        }
    }
    out
}

/// `<-reply` of a local channel the function has just handed over as a
/// request (`reply := make(chan []Entry, 1); c.snapshot <- reply; return
/// <-reply`) on a channel whose other side never takes the mutex (see
/// [`peer_never_locks`]): that side answers without waiting for the lock.
fn awaits_reply_to_own_request(cx: &FileCx, held: &HeldSet, recv: ExprId, local: &str) -> bool {
    let at = cx.expr(recv).span.start;
    cx.body_exprs(cx.func_of(recv)).iter().any(|&id| {
        let x = cx.expr(id);
        matches!(&x.kind, ExprKind::Send { channel, value }
            if cx.model.name_of(*value) == Some(local)
                && cx.model.name_of(*channel).is_none()
                && x.span.end <= at)
            && peer_never_locks(cx, held, id)
    })
}

/// There are peers, and none of them takes a mutex named `mutex`.
fn none_takes(cx: &FileCx, peers: Vec<FuncId>, mutex: &str) -> bool {
    let mut summaries = locks::Summaries::default();
    !peers.is_empty()
        && peers.into_iter().all(|g| {
            summaries
                .acquires(cx, g)
                .iter()
                .all(|a| a.instance.rsplit('.').next() != Some(mutex))
        })
}

/// The same for `s.wg.Wait()` on a WaitGroup field of the locked value
/// (`Stop` closing `s.quit`, then waiting under `s.mu`): its other side is
/// every function of the file calling `Done` on a field of that name, and
/// when none of them takes a mutex of the held name, the workers cannot be
/// waiting for the lock the waiter holds.
fn workers_never_lock(cx: &FileCx, h: &locks::Held, owner: &str, e: ExprId, c: &Call) -> bool {
    let Some(ExprKind::Attr { obj, name, .. }) = c.receiver.map(|r| &cx.expr(r).kind) else {
        return false;
    };
    if cx.model.dotted(*obj).as_deref() != Some(owner) {
        return false;
    }
    let mutex = h.op.instance.rsplit('.').next().unwrap_or(&h.op.instance);
    let mut workers: Vec<FuncId> = Vec::new();
    for (i, x) in cx.model.exprs.iter().enumerate() {
        if let ExprKind::Call(d) = &x.kind
            && d.name == "Done"
            && d.receiver.is_some_and(
                |r| matches!(&cx.expr(r).kind, ExprKind::Attr { name: n, .. } if n == name),
            )
        {
            workers.push(cx.func_of(ExprId(i as u32)));
        }
    }
    // A worker written inside the waiting function (a `go func` of its
    // own) is a peer too; only the waiter's own body is not.
    workers.retain(|&g| g != cx.func_of(e));
    none_takes(cx, workers, mutex)
}

/// Every held mutex is named for an operation (`sendMu`, `leaveLock`,
/// `joinLock`), is a field of a type declared in this file, and no other
/// function of the file locks it: it exists to run this operation one at
/// a time, and the only goroutines waiting for it are other runs of the
/// same operation, which must wait anyway. A mutex named for data
/// (`mu`, `stateMu`) or taken by another function too is what the rule is
/// about.
fn serializes_only_this(cx: &FileCx, held: &HeldSet, f: FuncId) -> bool {
    let here = common::outermost(cx, f);
    let private = |h: &locks::Held| {
        let (Some(class), Some(path)) = (h.op.class.as_deref(), h.op.recv_path.as_deref()) else {
            return false;
        };
        let Some((ty, field)) = class.rsplit_once('.') else {
            return false;
        };
        if path.is_empty()
            || !named_for_an_operation(field)
            || !cx.model.types.iter().any(|t| t.qualname == ty)
        {
            return false;
        }
        cx.model.exprs.iter().enumerate().all(|(i, x)| {
            let ExprKind::Call(c) = &x.kind else {
                return true;
            };
            if !matches!(c.name.as_str(), "Lock" | "RLock" | "TryLock" | "TryRLock") {
                return true;
            }
            let id = ExprId(i as u32);
            let locks_it = c.receiver.is_some_and(
                |r| matches!(&cx.expr(r).kind, ExprKind::Attr { name, .. } if name == field),
            );
            !locks_it || common::outermost(cx, cx.func_of(id)) == here
        })
    };
    !held.is_empty() && held.iter().all(private)
}

/// A mutex field named after what it serializes, a verb before the
/// mutex word: `sendMtx`, `leaveLock`, `flushMu`, `reload_mu`.
fn named_for_an_operation(field: &str) -> bool {
    const MUTEX_WORDS: &[&str] = &["mutex", "mtx", "lock", "mu"];
    const OPERATIONS: &[&str] = &[
        "send",
        "write",
        "flush",
        "read",
        "leave",
        "join",
        "dial",
        "connect",
        "reconnect",
        "reload",
        "sync",
        "commit",
        "publish",
        "upload",
        "download",
        "fetch",
        "refresh",
        "rotate",
        "compact",
        "snapshot",
        "persist",
        "save",
        "shutdown",
        "stop",
        "start",
        "close",
        "register",
        "resolve",
        "login",
        "auth",
        "handshake",
        "retry",
        "drain",
    ];
    let lower = field.to_ascii_lowercase();
    MUTEX_WORDS.iter().any(|w| {
        lower
            .strip_suffix(w)
            .map(|p| p.trim_end_matches('_'))
            .is_some_and(|op| OPERATIONS.contains(&op))
    })
}

/// A channel made in this function with a buffer (sized for what is sent,
/// more often than not).
/// The callee (a method of the file called on the same value) lets go of
/// the held mutex around each of its blocking calls: it expects it held on
/// entry and does `d.mu.Unlock(); time.Sleep(d); d.mu.Lock()`, so the wait
/// holds nothing.
fn callee_waits_unlocked(cx: &FileCx, held: &HeldSet, c: &Call) -> bool {
    let Some(g) = cx.callee_in_file(c) else {
        return false;
    };
    let (Some((recv, _)), Some(r)) = (
        locks::receiver_of(cx, g),
        c.receiver.and_then(|r| cx.model.dotted(r)),
    ) else {
        return false;
    };
    // The callee's `d.mu` as the caller writes it (`s.db.mu`).
    let as_caller = |inst: &str| -> Option<String> {
        let rest = inst.strip_prefix(recv.as_str())?;
        (rest.is_empty() || rest.starts_with('.')).then(|| format!("{r}{rest}"))
    };
    let dropped: Vec<String> = locks::released_first(cx, g)
        .into_iter()
        .filter(|m| as_caller(m).is_some_and(|m| held.iter().any(|h| h.op.instance == m)))
        .collect();
    if dropped.is_empty() {
        return false;
    }
    // Every blocking call of the callee comes after an unlock of a dropped
    // mutex with no lock of it in between.
    let ops: Vec<locks::LockOp> = cx
        .body_exprs(g)
        .iter()
        .filter_map(|&x| locks::lock_op(cx, x))
        .filter(|op| dropped.contains(&op.instance))
        .collect();
    let mut blocking = cx
        .body_calls(g)
        .filter(|&k| {
            cx.call(k)
                .is_some_and(|kc| cx.effect(kc, Effect::Blocking).is_some())
        })
        .peekable();
    blocking.peek().is_some()
        && blocking.all(|k| {
            let at = cx.expr(k).span.start;
            ops.iter()
                .filter(|op| op.span.start < at)
                .max_by_key(|op| op.span.start)
                .is_some_and(|op| !op.kind.acquires())
        })
}

fn buffered_local(cx: &FileCx, f: FuncId, ch: ExprId) -> bool {
    let Some(name) = cx.model.name_of(ch) else {
        return false;
    };
    common::local_chan(cx, f, name).is_some_and(|c| c.cap != common::ChanCap::Unbuffered)
}

impl Flow for Under {
    type S = HeldSet;
    fn simple(&mut self, cx: &FileCx, s: StmtId, st: &mut HeldSet) {
        if !st.is_empty() && !matches!(cx.stmt(s).kind, StmtKind::Defer(_) | StmtKind::Go(_)) {
            for e in locks::evaluated_exprs(cx, s) {
                if let Some(what) = self.blocking(cx, e)
                    && !guards_its_files(cx, st, e, &what.0)
                    && !establishes_guarded_state(cx, st, e)
                    && !fenced_against_close(cx, st, e)
                    && !peer_never_locks(cx, st, e)
                    && !serializes_only_this(cx, st, self.f)
                    && !cx.call(e).is_some_and(|c| writes_to_memory(cx, self.f, c))
                    && !cx.call(e).is_some_and(|c| callee_waits_unlocked(cx, st, c))
                {
                    self.report(st, cx.expr(e).span, what);
                    break;
                }
            }
        }
        locks::apply(cx, s, st, &mut |_, _| {});
    }
    fn cond(&mut self, cx: &FileCx, e: ExprId, st: &mut HeldSet) {
        if !st.is_empty() {
            for x in exprs_under(cx.model, e) {
                if let Some(what) = self.blocking(cx, x)
                    && !guards_its_files(cx, st, x, &what.0)
                    && !establishes_guarded_state(cx, st, x)
                    && !fenced_against_close(cx, st, x)
                    && !peer_never_locks(cx, st, x)
                    && !serializes_only_this(cx, st, self.f)
                    && !cx.call(x).is_some_and(|c| writes_to_memory(cx, self.f, c))
                {
                    self.report(st, cx.expr(x).span, what);
                    break;
                }
            }
        }
        for x in exprs_under(cx.model, e) {
            locks::apply_expr(cx, x, st, &mut |_, _| {});
        }
    }
    fn select(&mut self, cx: &FileCx, s: StmtId, st: &mut HeldSet) {
        if st.is_empty() {
            return;
        }
        let StmtKind::Select { arms, .. } = &cx.stmt(s).kind else {
            return;
        };
        // `go panic(e); select {}`: the process is crashing, and the empty
        // select only parks this goroutine until it does.
        if arms.is_empty() && after_go_panic(cx, s) {
            return;
        }
        let has_default = arms.iter().any(|a| matches!(a.kind, ArmKind::Default));
        let has_exit = arms
            .iter()
            .any(|a| matches!(a.kind, ArmKind::Recv { channel, .. } if is_done_like(cx, channel)));
        // A `select` waits no longer than any one of its cases would alone:
        // sending to a channel that is closed under this same lock is not
        // reported as a plain send, and a `case <-l.done:` beside it only
        // lets the send give up sooner.
        let fenced_send = arms.iter().any(|a| {
            matches!(a.kind, ArmKind::Send { channel, .. }
                if channel_fenced_against_close(cx, st, channel))
        });
        if has_default || has_exit || fenced_send || serializes_only_this(cx, st, self.f) {
            return;
        }
        let span = cx.stmt(s).span;
        self.report(
            st,
            Span::new(span.start, span.start + 6),
            (
                "waits in a `select` with no `default` case".to_string(),
                true,
            ),
        );
    }
    fn join(&self, a: &HeldSet, b: &HeldSet) -> HeldSet {
        locks::join_held(a, b)
    }
}

pub static EXAMPLES: Examples = Examples {
    language: Language::Go,
    fail: &[
        r#"
package app

import "sync"

type client struct {
	mu    sync.Mutex
	memMu chan *shared
}

// memMu is a one-slot channel used as a lock: waiting for it under c.mu
// is reported, giving the token back is not.
func (c *client) call(v []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	mem, ok := <-c.memMu // expect
	if !ok {
		return
	}
	mem.set(v)
	c.memMu <- mem
}
"#,
        r#"
package app

import (
	"net/http"
	"sync"
	"time"
)

type Hub struct {
	mu      sync.Mutex
	subs    []chan Event
	client  *http.Client
	onEvent func(Event)
}

func (h *Hub) Publish(e Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.subs {
		s <- e // expect
	}
	h.onEvent(e) // expect
}

func (h *Hub) Refresh(url string) error {
	h.mu.Lock()
	resp, err := h.client.Get(url) // expect
	h.mu.Unlock()
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

func (h *Hub) Slow() {
	h.mu.Lock()
	time.Sleep(time.Second) // expect
	h.mu.Unlock()
}
"#,
        r#"
package app

import "sync"

type Queue struct {
	mu    sync.Mutex
	ready chan struct{}
	items []int
}

func (q *Queue) Pop() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	<-q.ready // expect
	it := q.items[0]
	q.items = q.items[1:]
	return it
}

func (q *Queue) Notify(listeners []func(int)) {
	q.mu.Lock()
	for _, fn := range listeners {
		fn(len(q.items)) // expect
	}
	q.mu.Unlock()
}
"#,
        r#"
package app

import (
	"os"
	"sync"
)

type Cache struct {
	mu      sync.Mutex
	entries map[string][]byte
}

func (c *Cache) LoadFile(name, path string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, err := os.ReadFile(path) // expect
	if err != nil {
		return err
	}
	c.entries[name] = b
	return nil
}
"#,
        r#"
package app

import (
	"net/http"
	"sync"
)

type registry struct {
	mu     sync.Mutex
	client *http.Client
	seen   map[string]int
}

func (r *registry) Ping(url string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	resp, err := r.client.Get(url) // expect
	if err != nil {
		return err
	}
	resp.Body.Close()
	r.seen[url]++
	return nil
}
"#,
        r#"
package wal

import (
	"os"
	"sync"
)

var auditLog *os.File

type segment struct {
	mu    sync.Mutex
	index *os.File
}

func flushPair(data, index *os.File) error {
	if err := data.Sync(); err != nil {
		return err
	}
	return index.Sync()
}

func (s *segment) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return flushPair(auditLog, s.index) // expect
}
"#,
        r#"
package amqpish

import "sync"

type Channel struct {
	notifyM sync.RWMutex
	cancels []chan string
}

func (ch *Channel) dispatchCancel(tag string) {
	ch.notifyM.RLock()
	for _, c := range ch.cancels {
		c <- tag // expect
	}
	ch.notifyM.RUnlock()
}

func (ch *Channel) shutdown() {
	ch.notifyM.Lock()
	defer ch.notifyM.Unlock()
	ch.cancels = nil
}
"#,
        r#"
package store

import (
	"os"
	"path/filepath"
	"sync"
)

type block struct {
	path string
	data []byte
}

type fileStore struct {
	mu   sync.Mutex
	dir  string
	blks []*block
}

func (fs *fileStore) Reload(names []string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, n := range names {
		b, err := fs.loadBlock(n) // expect
		if err != nil {
			return err
		}
		fs.blks = append(fs.blks, b)
	}
	return nil
}

func (fs *fileStore) loadBlock(name string) (*block, error) {
	mb := &block{}
	mdir := os.Getenv("SPOOL")
	mb.path = filepath.Join(mdir, name)
	data, err := os.ReadFile(mb.path)
	if err != nil {
		return nil, err
	}
	mb.data = data
	return mb, nil
}
"#,
        r#"
package amqpish

import "sync"

type Channel struct {
	notifyM sync.RWMutex
	closes  []chan error
}

func (ch *Channel) shutdown(e error) {
	ch.notifyM.Lock()
	defer ch.notifyM.Unlock()
	for _, c := range ch.closes {
		c <- e // expect
	}
	for _, c := range ch.closes {
		close(c)
	}
	ch.closes = nil
}
"#,
        r#"
package store

import (
	"os"
	"sync"
)

type Cache struct {
	mu   sync.Mutex
	data map[string]string
}

func (c *Cache) Put(key, path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.data[key] = "x"
	writeSnapshot(path, c.data) // expect
}

func writeSnapshot(path string, data map[string]string) {
	os.WriteFile(path, []byte(data["x"]), 0o600)
}

var stateMu sync.Mutex

func saveState(path string, b []byte) error {
	stateMu.Lock()
	defer stateMu.Unlock()
	return os.WriteFile(path, b, 0o600) // expect
}
"#,
        r#"
package export

import "sync"

type Pump struct {
	mu    sync.Mutex
	items []int
	out   chan int
}

// The consumer needs p.mu too: Push deadlocks against it.
func (p *Pump) consume() {
	for v := range p.out {
		p.mu.Lock()
		p.items = append(p.items, v)
		p.mu.Unlock()
	}
}

func (p *Pump) Push(v int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.out <- v // expect
}
"#,
        r#"
package reporter

import (
	"net/http"
	"sync"
)

type Reporter struct {
	url    string
	sendMu sync.Mutex
	batch  []string
}

func (r *Reporter) Add(s string) {
	r.sendMu.Lock()
	r.batch = append(r.batch, s)
	r.sendMu.Unlock()
}

func (r *Reporter) send() error {
	r.sendMu.Lock()
	defer r.sendMu.Unlock()
	resp, err := http.Post(r.url, "text/plain", nil) // expect
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
"#,
        r#"
package view

import (
	"sync"
	"time"
)

type worker struct {
	mu    sync.Mutex
	views map[string][]int
	cmds  chan *watchReq
}

type watchReq struct {
	name  string
	reply chan []int
}

func (w *worker) serve(req *watchReq) {
	w.mu.Lock()
	defer w.mu.Unlock()
	req.reply <- w.views[req.name] // expect
}

// The requester may give up: then nobody takes the reply.
func (w *worker) Watch(name string) []int {
	req := &watchReq{name: name, reply: make(chan []int)}
	w.cmds <- req
	select {
	case rows := <-req.reply:
		return rows
	case <-time.After(time.Second):
		return nil
	}
}
"#,
        r#"
// file: pz/writer.go
package pz

import (
	"io"
	"sync"
)

type Writer struct {
	dst io.Writer
	wg  sync.WaitGroup
}

func NewWriter(dst io.Writer) *Writer { return &Writer{dst: dst} }

func (w *Writer) Close() error {
	w.wg.Wait()
	return nil
}

// file: app/client.go
package app

import (
	"net"
	"sync"

	"example.com/pz"
)

type client struct {
	mu   sync.Mutex
	conn net.Conn
}

// The compressed stream goes to the connection, under the lock.
func (c *client) send(b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	zw := pz.NewWriter(c.conn)
	zw.Close() // expect
}
"#,
        r#"
package opts

import "sync"

type Event struct{ Key string }

type Store struct {
	l         sync.Mutex
	listeners []func(*Event)
}

func (s *Store) Put(key string, hooks ...func(string)) {
	s.l.Lock()
	defer s.l.Unlock()
	ev := Event{Key: key}
	for _, fn := range s.listeners {
		fn(&ev) // expect
	}
	for _, hook := range hooks {
		hook(key) // expect
	}
}
"#,
        r#"
package natsish

import (
	"net"
	"sync"
)

type Client struct {
	mu   sync.Mutex
	host string
	sent int
}

func (c *Client) resolve() []string {
	addrs, _ := net.LookupHost(c.host)
	return addrs
}

func (c *Client) Status() (int, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sent, c.resolve() // expect
}
"#,
        r#"
package mem

import "sync"

type listener struct {
	alerts chan int
	done   chan struct{}
}

type Alerts struct {
	mtx       sync.Mutex
	listeners map[int]listener
}

// Nothing closes the listeners' channels under mtx: the lock only makes
// every other caller wait for the slowest listener.
func (a *Alerts) Put(v int) {
	a.mtx.Lock()
	defer a.mtx.Unlock()
	for _, l := range a.listeners {
		select { // expect
		case l.alerts <- v:
		case <-l.done:
		}
	}
}
"#,
        r#"
package handshake

import "sync"

type Setup struct {
	mu      sync.Mutex
	written bool
	params  chan<- *Params
}

func NewSetup() (*Setup, <-chan *Params) {
	params := make(chan *Params)
	return &Setup{params: params}, params
}

func (h *Setup) WriteRecord(p *Params) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.written {
		h.written = true
		h.params <- p // expect
	}
}
"#,
        r#"
package pub

import "sync"

type subscriber struct {
	sendCh chan<- []byte
}

type Publisher struct {
	sync.Mutex
	subs map[int]subscriber
}

func (p *Publisher) Subscribe(id int) <-chan []byte {
	p.Lock()
	defer p.Unlock()
	ch := make(chan []byte, 1000)
	p.subs[id] = subscriber{sendCh: ch}
	return ch
}

// Every publish sends: once a slow subscriber's buffer is full, this
// blocks with the lock held, and the subscriber needs it to leave.
func (p *Publisher) Publish(b []byte) {
	p.Lock()
	defer p.Unlock()
	for _, s := range p.subs {
		s.sendCh <- b // expect
	}
}
"#,
        r#"
package timer

import "sync"

type Timer struct {
	mu    sync.Mutex
	count int
	msg   chan int
}

func (t *Timer) run() {
	for n := range t.msg {
		t.mu.Lock()
		t.count += n
		t.mu.Unlock()
	}
}

func (t *Timer) Trigger() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.msg <- 1 // expect
}
"#,
        r#"
package services

import "sync"

type Manager struct {
	mu    sync.Mutex
	wg    sync.WaitGroup
	quit  chan struct{}
	state int
}

// Each worker records its end under m.mu: Stop waits for them while
// holding it, so a worker still running can never finish.
func (m *Manager) Go(work func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.wg.Add(1)
	go func() {
		work()
		m.mu.Lock()
		m.state--
		m.mu.Unlock()
		m.wg.Done()
	}()
}

func (m *Manager) Stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	close(m.quit)
	m.wg.Wait() // expect
}
"#,
        r#"
package fuse

import (
	"net"
	"sync"
)

type fsRoot struct {
	sync.RWMutex
	dst chan<- net.Conn
}

func (r *fsRoot) newConn(c net.Conn) {
	r.RLock()
	if ch := r.dst; ch != nil {
		ch <- c // expect
	}
	r.RUnlock()
}

func (r *fsRoot) Close() {
	if r.dst != nil {
		close(r.dst)
		r.dst = nil
	}
}
"#,
        r#"
package app

import "sync"

type Event struct{ Path string }

type Conn struct {
	watchersLock sync.Mutex
	watchers     map[string][]chan Event
}

// The watcher channels have no room: each send waits for its reader.
func (c *Conn) addWatcher(path string) <-chan Event {
	c.watchersLock.Lock()
	defer c.watchersLock.Unlock()
	ch := make(chan Event)
	c.watchers[path] = append(c.watchers[path], ch)
	return ch
}

func (c *Conn) fire(ev Event) {
	c.watchersLock.Lock()
	defer c.watchersLock.Unlock()
	if watchers := c.watchers[ev.Path]; len(watchers) > 0 {
		for _, ch := range watchers {
			ch <- ev // expect
			close(ch)
		}
		delete(c.watchers, ev.Path)
	}
}

func (c *Conn) invalidateAll() {
	c.watchersLock.Lock()
	defer c.watchersLock.Unlock()
	for path, watchers := range c.watchers {
		for _, ch := range watchers {
			ch <- Event{Path: path} // expect
			close(ch)
		}
	}
	c.watchers = make(map[string][]chan Event)
}
"#,
        r#"
package app

import (
	"os"
	"sync"
)

var tenantLocks sync.Map

func lockFor(tenant string) *sync.Mutex {
	l, _ := tenantLocks.LoadOrStore(tenant, &sync.Mutex{})
	return l.(*sync.Mutex)
}

// Every request of the tenant waits for this write.
func Compress(tenant, path string, data []byte) error {
	l := lockFor(tenant)
	l.Lock()
	err := os.WriteFile(path+".gz", data, 0o644) // expect
	l.Unlock()
	return err
}
"#,
        r#"
package solver

import (
	"net"
	"sync"
)

type solverInfo struct {
	listener net.Listener
	done     chan struct{}
	count    int
}

var (
	solvers   = map[string]*solverInfo{}
	solversMu sync.Mutex
)

func serve(si *solverInfo) {
	solversMu.Lock()
	defer solversMu.Unlock()
	defer close(si.done)
	si.count++
}

func CleanUp(addr string) {
	solversMu.Lock()
	defer solversMu.Unlock()
	si := solvers[addr]
	si.listener.Close()
	<-si.done // expect
}
"#,
        r#"
package cron

import "sync"

type Entry struct{ Name string }

type Cron struct {
	runningMu sync.Mutex
	running   bool
	snapshot  chan chan []Entry
	entries   []Entry
}

func (c *Cron) run() {
	for reply := range c.snapshot {
		c.runningMu.Lock()
		entries := append([]Entry(nil), c.entries...)
		c.runningMu.Unlock()
		reply <- entries
	}
}

func (c *Cron) Entries() []Entry {
	c.runningMu.Lock()
	defer c.runningMu.Unlock()
	if c.running {
		reply := make(chan []Entry, 1)
		c.snapshot <- reply // expect
		return <-reply // expect
	}
	return c.entries
}
"#,
        r#"
// file: filelock/filelock.go
package filelock

import (
	"net/http"
	"os"
	"sync"
)

type Lock struct {
	path  string
	owner string
	m     sync.Mutex
	fh    *os.File
	held  bool
}

// A file named by the caller, not one of the lock's.
func (l *Lock) openShared(name string) error {
	fh, err := os.OpenFile(name, os.O_RDONLY, 0o600)
	if err != nil {
		return err
	}
	l.fh = fh
	return nil
}

// The lock's own file, then a remote owner told over HTTP.
func (l *Lock) announce() error {
	fh, err := os.OpenFile(l.path, os.O_CREATE|os.O_RDONLY, 0o600)
	if err != nil {
		return err
	}
	l.fh = fh
	return http.Post(l.owner, "text/plain", nil)
}

// file: filelock/filelock_unix.go
package filelock

func (l *Lock) LockShared(name string) error {
	l.m.Lock()
	defer l.m.Unlock()
	if l.fh == nil {
		if err := l.openShared(name); err != nil { // expect
			return err
		}
	}
	l.held = true
	return nil
}

func (l *Lock) LockAnnounced() error {
	l.m.Lock()
	defer l.m.Unlock()
	if err := l.announce(); err != nil { // expect
		return err
	}
	l.held = true
	return nil
}
"#,
        r#"
package secrets

import "os"

type Manager struct {
	profileLock sync.Mutex
	path        string
}

func (m *Manager) Lookup(name string) ([]byte, error) {
	m.profileLock.Lock()
	defer m.profileLock.Unlock()
	return os.ReadFile(name) // expect
}
"#,
        r#"
package store

import (
	"net/http"
	"strings"
	"sync"
)

type Set struct {
	mu    sync.Mutex
	alert string
}

// Reports and returns: the request runs under the caller's lock.
func report(err error, url string) {
	http.Post(url, "text/plain", strings.NewReader(err.Error()))
}

func (s *Set) Drop(apply func() error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := apply(); err != nil {
		report(err, s.alert) // expect
	}
}
"#,
        r#"
package stack

import "sync"

type Hooks struct {
	mu    sync.Mutex
	state int
}

func (h *Hooks) Fire(onChange func(int), onClose func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, hook := range []func(){
		func() { onChange(h.state) },
		onClose,
	} {
		hook() // expect
	}
}
"#,
        r#"
package app

import (
	"sync"
	"time"
)

type DB struct {
	mu      sync.Mutex
	pending int
}

func (d *DB) Write(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.settle() // expect
	d.pending += n
}

// Sleeps before it lets go of the lock.
func (d *DB) settle() {
	time.Sleep(time.Millisecond)
	d.mu.Unlock()
	d.flush()
	d.mu.Lock()
}

func (d *DB) flush() { d.pending = 0 }
"#,
        r#"
package gzip

import (
	"io"
	"sync"
)

type reader struct {
	mu       sync.Mutex
	done     bool
	closeErr chan error
	src      io.ReadCloser
}

func (z *reader) start() {
	closeErr := make(chan error)
	z.mu.Lock()
	z.closeErr = closeErr
	z.mu.Unlock()
	go func() {
		z.mu.Lock()
		z.done = true
		z.mu.Unlock()
		closeErr <- z.src.Close()
	}()
}

// The goroutine needs z.mu before it can send: waiting for it under the
// lock deadlocks.
func (z *reader) kill() error {
	z.mu.Lock()
	defer z.mu.Unlock()
	return <-z.closeErr // expect
}
"#,
        r#"
package exporter

import (
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

type Exporter struct {
	mu  sync.Mutex
	url string
	up  prometheus.Gauge
}

func (e *Exporter) SetURL(u string) {
	e.mu.Lock()
	e.url = u
	e.mu.Unlock()
}

// SetURL waits for the whole scrape.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	defer e.mu.Unlock()
	resp, err := http.Get(e.url) // expect
	if err == nil {
		resp.Body.Close()
	}
	ch <- e.up
}
"#,
    ],
    pass: &[
        r#"
package exporter

import (
	"os/exec"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

type Exporter struct {
	sync.Mutex
	up prometheus.Gauge
}

// One scrape at a time: only Collect takes the lock.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	e.Lock()
	defer e.Unlock()
	if err := exec.Command("varnishstat", "-j").Run(); err != nil {
		e.up.Set(0)
	} else {
		e.up.Set(1)
	}
	ch <- e.up
}
"#,
        r#"
package progress

import (
	"io"
	"sync"
)

type writer struct {
	mu     sync.Mutex
	pipe   *io.PipeWriter
	status <-chan error
}

func (w *writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pipe == nil {
		statusCh := make(chan error, 1)
		var r *io.PipeReader
		r, w.pipe = io.Pipe()
		w.status = statusCh
		go w.reading(statusCh, r)
	}
	return w.pipe.Write(p)
}

// The reader never takes w.mu: waiting for it to finish under the lock
// cannot deadlock, and keeps Write out while it ends.
func (w *writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pipe == nil {
		return nil
	}
	err := w.pipe.Close()
	if rerr := <-w.status; err == nil {
		err = rerr
	}
	return err
}

func (w *writer) reading(status chan<- error, r *io.PipeReader) {
	var err error
	defer func() { status <- err }()
	_, err = io.Copy(io.Discard, r)
}
"#,
        r#"
package gzip

import (
	"io"
	"sync"
)

type reader struct {
	mu       sync.Mutex
	stop     chan struct{}
	closeErr chan error
	src      io.ReadCloser
}

func (z *reader) start() {
	z.mu.Lock()
	defer z.mu.Unlock()
	stop := make(chan struct{})
	z.stop = stop
	closeErr := make(chan error, 1)
	z.closeErr = closeErr
	go func() {
		defer func() {
			closeErr <- z.src.Close()
			close(closeErr)
		}()
		<-stop
	}()
}

func (z *reader) kill() error {
	z.mu.Lock()
	defer z.mu.Unlock()
	close(z.stop)
	return <-z.closeErr
}
"#,
        r#"
package app

import (
	"sync"
	"time"
)

type DB struct {
	mu      sync.Mutex
	pending int
}

func (d *DB) Write(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.makeRoom()
	d.pending += n
}

// Called with d.mu held; waits with it released.
func (d *DB) makeRoom() {
	for d.pending > 100 {
		d.mu.Unlock()
		time.Sleep(time.Millisecond)
		d.mu.Lock()
	}
}
"#,
        r#"
package stack

import "sync"

type checkFn func(hook int, pkt *Packet) bool

type Packet struct{ hdr []byte }

type IPTables struct {
	mu     sync.RWMutex
	mangle []byte
	nat    []byte
}

func (it *IPTables) checkMangleRLocked(hook int, pkt *Packet) bool {
	return len(it.mangle) > hook && pkt.hdr != nil
}

func (it *IPTables) checkNATRLocked(hook int, pkt *Packet) bool {
	return len(it.nat) > hook
}

func (it *IPTables) CheckPostrouting(pkt *Packet) bool {
	it.mu.RLock()
	defer it.mu.RUnlock()
	for _, check := range [...]checkFn{
		it.checkMangleRLocked,
		it.checkNATRLocked,
	} {
		if !check(4, pkt) {
			return false
		}
	}
	return true
}
"#,
        r#"
package services

import "sync"

type Manager struct {
	mu    sync.Mutex
	wg    sync.WaitGroup
	quit  chan struct{}
	state int
}

// The workers never take m.mu: Stop can wait for them under it, and the
// lock keeps a Go from adding to the group while Stop waits.
func (m *Manager) Go(work func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.wg.Add(1)
	go func() {
		work()
		m.wg.Done()
	}()
}

func (m *Manager) Stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	close(m.quit)
	m.wg.Wait()
}
"#,
        r#"
package timer

import "sync"

type action int

const (
	kick action = iota
	stop
)

type Timer struct {
	mu      sync.Mutex
	running bool
	msg     chan action
}

func (t *Timer) Start(work func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.running = true
	go t.run(work)
}

func (t *Timer) run(work func()) {
	for a := range t.msg {
		if a == stop {
			return
		}
		work()
	}
}

func (t *Timer) Trigger() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.running {
		t.msg <- kick
	}
}

func (t *Timer) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.running {
		t.msg <- stop
		t.running = false
	}
}
"#,
        r#"
package handshake

import "sync"

type Setup struct {
	mu      sync.Mutex
	written bool
	params  chan<- *Params
}

// The channel has room for the one value ever sent on it.
func NewSetup() (*Setup, <-chan *Params) {
	params := make(chan *Params, 1)
	return &Setup{params: params}, params
}

func (h *Setup) WriteRecord(p *Params) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.written && p != nil {
		h.written = true
		h.params <- p
	}
}
"#,
        r#"
package mem

import "sync"

type listener struct {
	alerts chan int
	done   chan struct{}
}

type Alerts struct {
	mtx       sync.Mutex
	listeners map[int]listener
}

// Listeners that have left are closed under mtx, so Put must send under it;
// a listener's done channel lets the send give up.
func (a *Alerts) gc() {
	a.mtx.Lock()
	defer a.mtx.Unlock()
	for i, l := range a.listeners {
		select {
		case <-l.done:
			delete(a.listeners, i)
			close(l.alerts)
		default:
		}
	}
}

func (a *Alerts) Put(v int) {
	a.mtx.Lock()
	defer a.mtx.Unlock()
	for _, l := range a.listeners {
		select {
		case l.alerts <- v:
		case <-l.done:
		}
	}
}
"#,
        r#"
package store

import (
	"os"
	"path/filepath"
	"sync"
)

type FileStore struct {
	sync.RWMutex
	directory string
	index     map[string]int
}

func (store *FileStore) Put(key string, data []byte) {
	store.Lock()
	defer store.Unlock()
	writeKey(store.directory, key, data)
}

func writeKey(dir, key string, data []byte) {
	tmp := filepath.Join(dir, key+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return
	}
	f.Write(data)
	f.Close()
	os.Rename(tmp, filepath.Join(dir, key))
}

func (store *FileStore) pathFor(key string) string {
	return filepath.Join(store.directory, key+".jwt")
}

func (store *FileStore) Save(key, jwt string) error {
	path := store.pathFor(key)
	store.Lock()
	err := store.write(path, key, jwt)
	store.Unlock()
	return err
}

func (store *FileStore) write(path, key, jwt string) error {
	store.index[key] = len(jwt)
	return os.WriteFile(path, []byte(jwt), 0o600)
}

var sessionFileMu sync.RWMutex

func saveSession(dir, id string, encoded []byte) error {
	sessionFileMu.Lock()
	defer sessionFileMu.Unlock()
	return os.WriteFile(filepath.Join(dir, "session_"+id), encoded, 0o600)
}
"#,
        r#"
package subs

import "sync"

type Delivery struct{ Body []byte }

type consumers struct {
	sync.Mutex
	chans map[string]chan *Delivery
}

func (s *consumers) cancel(tag string) {
	s.Lock()
	defer s.Unlock()
	if ch, ok := s.chans[tag]; ok {
		delete(s.chans, tag)
		close(ch)
	}
}

func (s *consumers) send(tag string, d *Delivery) bool {
	s.Lock()
	defer s.Unlock()
	ch, ok := s.chans[tag]
	if ok {
		ch <- d
	}
	return ok
}
"#,
        r#"
package amqpish

import "sync"

type Channel struct {
	notifyM sync.RWMutex
	cancels []chan string
	closed  bool
}

func (ch *Channel) NotifyCancel(c chan string) chan string {
	ch.notifyM.Lock()
	defer ch.notifyM.Unlock()
	if ch.closed {
		close(c)
	} else {
		ch.cancels = append(ch.cancels, c)
	}
	return c
}

func (ch *Channel) dispatchCancel(tag string) {
	ch.notifyM.Lock()
	for _, c := range ch.cancels {
		c <- tag
	}
	ch.notifyM.Unlock()
}

func (ch *Channel) shutdown() {
	ch.notifyM.Lock()
	defer ch.notifyM.Unlock()
	ch.closed = true
	for _, c := range ch.cancels {
		close(c)
	}
	ch.cancels = nil
}
"#,
        r#"
package store

import (
	"os"
	"path/filepath"
	"sync"
)

type block struct {
	path string
	data []byte
}

type fileStore struct {
	mu   sync.Mutex
	dir  string
	blks []*block
}

func (fs *fileStore) Reload(names []string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, n := range names {
		b, err := fs.loadBlock(n)
		if err != nil {
			return err
		}
		fs.blks = append(fs.blks, b)
	}
	return nil
}

func (fs *fileStore) loadBlock(name string) (*block, error) {
	mb := &block{}
	mdir := filepath.Join(fs.dir, "msgs")
	mb.path = filepath.Join(mdir, name)
	data, err := os.ReadFile(mb.path)
	if err != nil {
		return nil, err
	}
	mb.data = data
	return mb, nil
}
"#,
        r#"
package amqpish

import "sync"

type Channel struct {
	notifyM sync.RWMutex
	tags    []string
	cancels []chan string
	closed  bool
}

func (ch *Channel) NotifyCancel(c chan string) chan string {
	ch.notifyM.Lock()
	defer ch.notifyM.Unlock()
	if ch.closed {
		close(c)
	} else {
		ch.cancels = append(ch.cancels, c)
	}
	return c
}

func (ch *Channel) dispatchCancel(tag string) {
	ch.notifyM.RLock()
	for _, c := range ch.cancels {
		c <- tag
	}
	ch.notifyM.RUnlock()
}

func (ch *Channel) shutdown() {
	ch.notifyM.Lock()
	defer ch.notifyM.Unlock()
	ch.closed = true
	for _, c := range ch.tags {
		println(c)
	}
	for _, c := range ch.cancels {
		close(c)
	}
	ch.cancels = nil
}
"#,
        r#"
package agent

import (
	"net"
	"sync"
)

type countingConn struct {
	net.Conn
	n int
}

type Uplink struct {
	mu   sync.Mutex
	addr string
	conn *countingConn
}

func (u *Uplink) Send(b []byte) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.conn == nil {
		c, err := net.Dial("tcp", u.addr)
		if err != nil {
			return err
		}
		u.conn = &countingConn{Conn: c}
	}
	u.conn.n += len(b)
	_, err := u.conn.Write(b)
	return err
}
"#,
        r#"
package journal

import (
	"os"
	"sync"
)

func datasync(f *os.File) error {
	return f.Sync()
}

type Journal struct {
	mu    sync.Mutex
	files []*os.File
}

func (j *Journal) last() *os.File {
	return j.files[len(j.files)-1]
}

func (j *Journal) flush() error {
	return datasync(j.last())
}

func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.flush()
}
"#,
        r#"
package wal

import (
	"os"
	"sync"
)

type segment struct {
	mu    sync.Mutex
	data  *os.File
	index *os.File
}

func flushPair(data, index *os.File) error {
	if err := data.Sync(); err != nil {
		return err
	}
	return index.Sync()
}

func (s *segment) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return flushPair(s.data, s.index)
}
"#,
        r#"
package app

import (
	"net"
	"sync"
	"time"
)

type sender struct {
	addr string
	mu   sync.Mutex
	conn net.Conn
}

func (s *sender) dial() error {
	c, err := net.DialTimeout("tcp", s.addr, time.Second)
	if err == nil {
		s.conn = c
	}
	return err
}

func (s *sender) Send(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		if err := s.dial(); err != nil {
			return err
		}
	}
	_, err := s.conn.Write(b)
	return err
}
"#,
        r#"
package app

import (
	"io"
	"os"
	"sync"
)

type store struct {
	mu   sync.Mutex
	path string
	size int
}

func (s *store) rebuild() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rebuildLocked()
}

func (s *store) rebuildLocked() error {
	buf, err := s.load()
	s.size = len(buf)
	return err
}

func (s *store) load() ([]byte, error) {
	f, err := os.Open(s.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func (r *Runner) finish(key string, j *job) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := j.err.(*crashErr); ok {
		go panic(e)
		select {}
	}
}
"#,
        r#"
package app

import (
	"os"
	"sync"
)

type segment struct {
	mu      sync.Mutex
	idxPath string
	sumPath string
	count   uint64
}

func (s *segment) writeSummary() error {
	return os.WriteFile(s.sumPath, encode(s.count), 0o600)
}

func (s *segment) Snapshot() ([]byte, []byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	idx, err := os.ReadFile(s.idxPath)
	if err != nil {
		return nil, nil, err
	}
	s.writeSummary()
	sum, err := os.ReadFile(s.sumPath)
	return idx, sum, err
}
"#,
        r#"
package app

import "sync"

// The buffer absorbs the sends: nobody needs the lock to drain it.
type Recorder struct {
	mu     sync.Mutex
	seen   map[string]int
	events chan string
}

func NewRecorder() *Recorder {
	return &Recorder{seen: map[string]int{}, events: make(chan string, 64)}
}

func (r *Recorder) Record(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[name]++
	if r.seen[name] == 1 {
		r.events <- name
	}
}
"#,
        r#"
package app

import (
	"os/exec"
	"sync"
	"time"
)

type Hub struct {
	mu   sync.Mutex
	subs []chan Event
	n    int
}

func (h *Hub) Publish(e Event) {
	h.mu.Lock()
	subs := append([]chan Event(nil), h.subs...)
	h.mu.Unlock()
	for _, s := range subs {
		s <- e
	}
}

func (h *Hub) TryPublish(e Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.subs {
		select {
		case s <- e:
		default:
		}
	}
	h.n++
}

type call struct {
	chans []chan int
	val   int
}

type Group struct {
	mu    sync.Mutex
	calls map[string]*call
	ready chan bool
}

func NewGroup(n int) *Group {
	g := &Group{calls: map[string]*call{}}
	g.ready = make(chan bool, n)
	return g
}

func (g *Group) Wait(key string) <-chan int {
	ch := make(chan int, 1)
	g.mu.Lock()
	c := g.calls[key]
	c.chans = append(c.chans, ch)
	g.mu.Unlock()
	return ch
}

func (g *Group) finish(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.calls[key]
	for _, ch := range c.chans {
		ch <- c.val
	}
	g.ready <- true
}

type Repo struct {
	mu  FileLock
	dir string
}

func (r *Repo) Fetch() error {
	unlock, err := r.mu.Lock()
	if err != nil {
		return err
	}
	defer unlock()
	return exec.Command("git", "-C", r.dir, "fetch").Run()
}

func (h *Hub) WithLock(fn func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fn()
}

func (h *Hub) Later(e Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	go func() { h.subs[0] <- e }()
	done := make(chan int, 1)
	done <- 1
}

// Opening the breaker starts its timer in a goroutine of its own: the sleep
// does not happen under the lock.
type Breaker struct {
	lock  sync.Mutex
	state int
	wait  time.Duration
}

func (b *Breaker) Fail() {
	b.lock.Lock()
	defer b.lock.Unlock()
	b.open()
}

func (b *Breaker) open() {
	b.state = 1
	go b.timer()
}

func (b *Breaker) timer() {
	time.Sleep(b.wait)
	b.lock.Lock()
	b.state = 2
	b.lock.Unlock()
}
"#,
        r#"
package export

import (
	"sync"
	"time"
)

type Interval struct {
	mu         sync.Mutex
	ticker     *time.Ticker
	quit, done chan bool
	export     func()
}

// The loop never takes r.mu: the stop handshake cannot deadlock, and the
// lock keeps two Stops from both sending.
func (r *Interval) loop() {
	for {
		select {
		case <-r.ticker.C:
			r.export()
		case <-r.quit:
			r.ticker.Stop()
			r.done <- true
			return
		}
	}
}

func (r *Interval) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.quit == nil {
		return
	}
	r.quit <- true
	<-r.done
	r.quit = nil
}
"#,
        r#"
package watch

import (
	"os"
	"sync"
)

type hash struct{ n int }

func newHash(path string) *hash {
	entries, _ := os.ReadDir(path)
	return &hash{n: len(entries)}
}

type hashes struct {
	lock   sync.Mutex
	hashes map[string]*hash
}

// Check-then-insert: a directory is never hashed twice.
func (p *hashes) Add(path string) *hash {
	p.lock.Lock()
	defer p.lock.Unlock()
	if _, ok := p.hashes[path]; !ok {
		p.hashes[path] = newHash(path)
	}
	return p.hashes[path]
}

var (
	ttyMu sync.Mutex
	tty   *os.File
)

// Runs once, before any goroutine of the program exists.
func init() {
	ttyMu.Lock()
	defer ttyMu.Unlock()
	tty, _ = os.Open("/dev/tty")
}
"#,
        r#"
package reporter

import (
	"net/http"
	"sync"
)

type Reporter struct {
	url     string
	sendMu  sync.Mutex
	batchMu sync.Mutex
	batch   []string
}

func (r *Reporter) Add(s string) {
	r.batchMu.Lock()
	r.batch = append(r.batch, s)
	r.batchMu.Unlock()
}

// send runs one at a time, so a batch is never posted twice.
func (r *Reporter) send() error {
	r.sendMu.Lock()
	defer r.sendMu.Unlock()
	resp, err := http.Post(r.url, "text/plain", nil)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
"#,
        r#"
package view

import "sync"

type worker struct {
	mu    sync.Mutex
	views map[string][]int
	c     chan *getReq
}

type getReq struct {
	name string
	c    chan []int
}

func (w *worker) loop() {
	for req := range w.c {
		w.serve(req)
	}
}

func (w *worker) serve(req *getReq) {
	w.mu.Lock()
	defer w.mu.Unlock()
	req.c <- append([]int(nil), w.views[req.name]...)
}

// The requester waits for its reply, without the lock.
func (w *worker) Get(name string) []int {
	req := &getReq{name: name, c: make(chan []int)}
	w.c <- req
	return <-req.c
}
"#,
        r#"
package pse

import (
	"sync"
	"time"
)

var (
	sampleMu sync.Mutex
	primed   bool
)

func sample() {
	sampleMu.Lock()
	defer sampleMu.Unlock()
	if !primed {
		collect()
		// 50 nanoseconds: the counters need two reads apart.
		time.Sleep(50)
		primed = true
	}
	collect()
}
"#,
        r#"
package store

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

type segment struct {
	seq  uint32
	path string
}

func (sg *segment) writeIndex() {
	os.WriteFile(sg.path+".idx", []byte{byte(sg.seq)}, 0o640)
}

type Store struct {
	mu   sync.Mutex
	dir  string
	last *segment
}

// Rolls to a new segment: the old segment's index and the new segment's
// file are the store's own files, which mu guards.
func (s *Store) Roll() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	seq := uint32(1)
	if prev := s.last; prev != nil {
		seq = prev.seq + 1
		prev.writeIndex()
	}
	sg := &segment{seq: seq}
	sg.path = filepath.Join(s.dir, fmt.Sprintf("%d.seg", seq))
	if err := os.WriteFile(sg.path, nil, 0o640); err != nil {
		return err
	}
	s.last = sg
	return nil
}
"#,
        r#"
// file: pz/writer.go
package pz

import (
	"io"
	"sync"
)

// A parallel compressor: Write hands blocks to workers, Close waits.
type Writer struct {
	dst io.Writer
	wg  sync.WaitGroup
}

func NewWriter(dst io.Writer) *Writer { return &Writer{dst: dst} }

func (w *Writer) Write(p []byte) (int, error) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		compress(p)
	}()
	return len(p), nil
}

func (w *Writer) Close() error {
	w.wg.Wait()
	return nil
}

// file: app/client.go
package app

import (
	"bytes"
	"sync"

	"example.com/pz"
)

type client struct {
	mu  sync.Mutex
	enc string
}

func (c *client) pack(b []byte) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	var buf bytes.Buffer
	zw := pz.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	c.enc = "pz"
	return buf.Bytes()
}
"#,
        r#"
package metrics

import (
	"net"
	"sync"
)

type reporter struct {
	mu   sync.Mutex
	addr string
	conn net.Conn
}

// A UDP dial only binds a socket: nothing to wait for under the lock.
func (r *reporter) send(b []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.dial()
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write(b)
	return err
}

func (r *reporter) dial() (net.Conn, error) {
	const network = "udp"
	return net.Dial(network, r.addr)
}
"#,
        r#"
package gen

import (
	"os"
	"path/filepath"
	"sync"
)

var dirMu sync.Mutex

// The check and the creation are one step for every goroutine.
func dataDir(root string) (string, error) {
	dirMu.Lock()
	defer dirMu.Unlock()
	dir := filepath.Join(root, "DATA")
	if _, err := os.Stat(dir); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		os.WriteFile(filepath.Join(dir, "README"), []byte("generated\n"), 0o644)
	}
	return dir, nil
}
"#,
        r#"
package bugs

import "sync"

var (
	mu      sync.Mutex
	waiters []chan<- string
)

func Report(msg string) {
	mu.Lock()
	defer mu.Unlock()
	for _, w := range waiters {
		w <- msg
	}
	waiters = nil
}

// Next returns a channel that receives the next report only.
func Next() <-chan string {
	mu.Lock()
	defer mu.Unlock()
	ch := make(chan string, 1)
	waiters = append(waiters, ch)
	return ch
}
"#,
        r#"
package pse

import (
	"sync"
	"time"
)

var (
	queryLock sync.Mutex
	primed    bool
)

// Two reads of the counters, 50 nanoseconds apart.
func prime() {
	collect()
	time.Sleep(50)
	collect()
}

func usage() float64 {
	queryLock.Lock()
	defer queryLock.Unlock()
	if !primed {
		prime()
		primed = true
	}
	return read()
}
"#,
        r#"
package opts

import "sync"

type Info struct{ Labels map[string]string }
type Opt func(*Info) error

type Store struct {
	l     sync.RWMutex
	items map[string]Info
}

func (s *Store) Create(key string, opts ...Opt) error {
	s.l.RLock()
	defer s.l.RUnlock()
	var base Info
	for _, opt := range opts {
		if err := opt(&base); err != nil {
			return err
		}
	}
	_ = base
	return s.create(key, opts)
}

func (s *Store) create(key string, opts []Opt) error {
	s.l.Lock()
	defer s.l.Unlock()
	var base Info
	for _, opt := range opts {
		if err := opt(&base); err != nil {
			return err
		}
	}
	s.items[key] = base
	return nil
}
"#,
        r#"
package natsish

import (
	"net"
	"sync"
	"time"
)

type Client struct {
	mu      sync.Mutex
	servers []string
	conn    net.Conn
	timeout time.Duration
}

// Remakes the connection the mutex guards: resolve, dial, store.
func (c *Client) dialServer(host, port string) error {
	addrs, _ := net.LookupHost(host)
	if len(addrs) == 0 {
		addrs = []string{host}
	}
	d := net.Dialer{Timeout: c.timeout}
	var err error
	for _, a := range addrs {
		c.conn, err = d.Dial("tcp", net.JoinHostPort(a, port))
		if err == nil {
			break
		}
	}
	return err
}

func (c *Client) Connect() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var err error
	for _, s := range c.servers {
		if err = c.dialServer(s, "4222"); err == nil {
			return nil
		}
	}
	return err
}
"#,
        r#"
package rpcish

import (
	"errors"
	"net"
	"net/rpc"
	"sync"
	"time"
)

type Client struct {
	mu   sync.Mutex
	rc   *rpc.Client
	addr string
}

// Lazy connect: concurrent callers must not dial twice.
func (c *Client) dial() (*rpc.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rc != nil {
		return c.rc, nil
	}
	conn, err := net.DialTimeout("tcp", c.addr, 3*time.Second)
	if err != nil {
		return nil, err
	}
	rc := rpc.NewClient(conn)
	if rc == nil {
		conn.Close()
		return nil, errors.New("no client")
	}
	c.rc = rc
	return rc, nil
}
"#,
        r#"
package relay

import (
	"net"
	"sync"
)

type Relay struct {
	mu       sync.Mutex
	upstream *net.UDPAddr
	flows    map[string]*net.UDPConn
}

// A connected UDP socket to a resolved address: no packet is sent.
func (r *Relay) probe() (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	up, err := net.DialUDP("udp", nil, r.upstream)
	if err != nil {
		return "", err
	}
	defer up.Close()
	return up.LocalAddr().String(), nil
}
"#,
        r#"
package fuse

import (
	"net"
	"sync"
)

type fsRoot struct {
	sync.RWMutex
	dst chan<- net.Conn
}

func (r *fsRoot) newConn(c net.Conn) {
	r.RLock()
	if ch := r.dst; ch != nil {
		ch <- c
	}
	r.RUnlock()
}

func (r *fsRoot) Close() {
	r.Lock()
	if r.dst != nil {
		close(r.dst)
		r.dst = nil
	}
	r.Unlock()
}
"#,
        r#"
package app

import "sync"

type Event struct{ Path string }

type Conn struct {
	watchersLock sync.Mutex
	watchers     map[string][]chan Event
}

// Each watcher channel has room for the one event it ever gets.
func (c *Conn) addWatcher(path string) <-chan Event {
	c.watchersLock.Lock()
	defer c.watchersLock.Unlock()
	ch := make(chan Event, 1)
	c.watchers[path] = append(c.watchers[path], ch)
	return ch
}

func (c *Conn) fire(ev Event) {
	c.watchersLock.Lock()
	defer c.watchersLock.Unlock()
	if watchers := c.watchers[ev.Path]; len(watchers) > 0 {
		for _, ch := range watchers {
			ch <- ev
			close(ch)
		}
		delete(c.watchers, ev.Path)
	}
}

func (c *Conn) invalidateAll() {
	c.watchersLock.Lock()
	defer c.watchersLock.Unlock()
	for path, watchers := range c.watchers {
		for _, ch := range watchers {
			ch <- Event{Path: path}
			close(ch)
		}
	}
	c.watchers = make(map[string][]chan Event)
}
"#,
        r#"
package app

import (
	"os"
	"sync"
)

var fileLocks sync.Map

func getFileLock(path string) *sync.Mutex {
	l, _ := fileLocks.LoadOrStore(path, &sync.Mutex{})
	return l.(*sync.Mutex)
}

// One mutex per path: it exists to serialize creating that one file.
func Compress(path string, data []byte) error {
	flock := getFileLock(path)
	flock.Lock()
	err := os.WriteFile(path+".gz", data, 0o644)
	flock.Unlock()
	return err
}
"#,
        r#"
package solver

import (
	"net"
	"net/http"
	"sync"
)

type solverInfo struct {
	listener net.Listener
	done     chan struct{}
	count    int
}

var (
	solvers   = map[string]*solverInfo{}
	solversMu sync.Mutex
)

func serve(si *solverInfo) {
	defer close(si.done)
	_ = http.Serve(si.listener, nil)
}

func CleanUp(addr string) {
	solversMu.Lock()
	defer solversMu.Unlock()
	si := solvers[addr]
	si.count--
	if si.count == 0 && si.listener != nil {
		si.listener.Close()
		<-si.done
		delete(solvers, addr)
	}
}
"#,
        r#"
package cron

import "sync"

type Entry struct{ Name string }

type Cron struct {
	runningMu sync.Mutex
	running   bool
	snapshot  chan chan []Entry
	entries   []Entry
}

func (c *Cron) run() {
	for reply := range c.snapshot {
		reply <- append([]Entry(nil), c.entries...)
	}
}

func (c *Cron) Entries() []Entry {
	c.runningMu.Lock()
	defer c.runningMu.Unlock()
	if c.running {
		reply := make(chan []Entry, 1)
		c.snapshot <- reply
		return <-reply
	}
	return c.entries
}
"#,
        r#"
// file: filelock/filelock.go
package filelock

import (
	"os"
	"sync"
)

type Lock struct {
	path  string
	owner string
	m     sync.Mutex
	fh    *os.File
	held  bool
}

// Opens the lock's own file and keeps the handle, the state `m` guards:
// the platform files call it with `m` held.
func (l *Lock) openHandle() error {
	fh, err := os.OpenFile(l.path, os.O_CREATE|os.O_RDONLY, 0o600)
	if err != nil {
		return err
	}
	l.fh = fh
	return nil
}

// file: filelock/filelock_unix.go
package filelock

func (l *Lock) Lock() error {
	l.m.Lock()
	defer l.m.Unlock()
	if l.held {
		return nil
	}
	if l.fh == nil {
		if err := l.openHandle(); err != nil {
			return err
		}
	}
	l.held = true
	return nil
}
"#,
        r#"
package secrets

import (
	"os"

	"github.com/containers/storage/pkg/lockfile"
)

type Manager struct {
	lockfile lockfile.Locker
}

func (m *Manager) Lookup(name string) ([]byte, error) {
	m.lockfile.Lock()
	defer m.lockfile.Unlock()
	return os.ReadFile(name)
}
"#,
        r#"
package store

import (
	"os"
	"sync"
)

type Set struct {
	mu  sync.Mutex
	dir string
}

// Leaves a marker for the next start to repair the database, then
// takes the process down: nothing waits on the lock after that.
func fatal(err error) {
	os.WriteFile("/var/lib/store/needs-repair", []byte(err.Error()), 0o644)
	panic(err)
}

func (s *Set) Drop(apply func() error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := apply(); err != nil {
		fatal(err)
	}
}
"#,
    ],
};

#[cfg(test)]
mod tests {
    use super::*;
    crate::testing::rule_tests!(BlockingUnderMutex);

    /// Waiting on another goroutine can deadlock on the held lock; an HTTP
    /// call or a sleep only makes everyone wait.
    #[test]
    fn a_mutex_named_for_files_has_the_word_not_just_the_letters() {
        assert!(names_files("sessionFileMu"));
        assert!(names_files("file_lock"));
        assert!(names_files("filesMu"));
        assert!(names_files("FileMu"));
        assert!(!names_files("profileMu"));
        assert!(!names_files("filtersMu"));
        assert!(names_files("dirMu"));
        assert!(names_files("cacheDirLock"));
        assert!(!names_files("directMu"));
    }

    #[test]
    fn deadlock_is_named_only_for_waits_on_other_goroutines() {
        static RULE: BlockingUnderMutex = BlockingUnderMutex;
        let found = crate::testing::messages(&RULE, Language::Go, EXAMPLES.fail[1]);
        let message = |needle: &str| crate::testing::message_with(&found, needle);
        assert!(message("sends on `s`").contains("this is a deadlock"));
        for calm in ["makes an HTTP request", "sleeps"] {
            let m = message(calm);
            assert!(
                !m.contains("deadlock") && m.contains("stalls them all"),
                "{m}"
            );
        }
        let wg = "package app\n\nimport \"sync\"\n\ntype P struct {\n\tmu sync.Mutex\n\twg sync.WaitGroup\n}\n\nfunc (p *P) Stop() {\n\tp.mu.Lock()\n\tdefer p.mu.Unlock()\n\tp.wg.Wait()\n}\n";
        let m = crate::testing::messages(&RULE, Language::Go, wg);
        assert!(
            m[0].contains("waits for other goroutines") && m[0].contains("this is a deadlock"),
            "{m:?}"
        );
    }
}
