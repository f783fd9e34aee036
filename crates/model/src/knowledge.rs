//! API knowledge as data: which callees block, spawn, offload, lock, build
//! queues, return awaitables... one TOML table per language under
//! `knowledge/` at the repository root, extensible from user config.
//!
//! A table lists entries per *effect*; each entry names the callees it covers
//! by qualified name (see [`crate::ir`]), with three pattern forms:
//!
//! - `time.sleep`: exactly that callee;
//! - `requests.*`: any callee under that prefix (`requests.get`,
//!   `requests.Session.post`); `fs.*Sync`: any callee with that prefix and
//!   suffix (`fs.readFileSync`);
//! - `*.create_task`: a method of that name on a receiver whose type is
//!   unknown (a call whose target could not be resolved); a call resolved to
//!   some other type's method does not match. Use only for distinctive names.

use crate::ir::Language;
use rustc_hash::FxHashMap as HashMap;
use rustc_hash::FxHashSet as HashSet;
use serde::Deserialize;

/// What a callee does, as far as concurrency rules care.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Effect {
    /// Blocks the calling thread on I/O, a sleep, a lock or a wait.
    Blocking,
    /// Burns CPU for long enough to stall an event loop.
    CpuHeavy,
    /// Starts a task/thread/goroutine that outlives the call; returns a
    /// handle (or nothing) that must be kept to join or observe it.
    Spawn,
    /// Starts a task owned by a scope (TaskGroup, nursery, JoinSet, errgroup).
    ScopedSpawn,
    /// Runs a callable argument on another thread (`to_thread`,
    /// `spawn_blocking`): blocking code inside it is fine.
    Offload,
    /// Blocks the current thread until async work completes (`block_on`,
    /// `run_until_complete`).
    SyncOverAsync,
    /// Returns an awaitable (coroutine, promise, future) that must be awaited.
    AsyncApi,
    /// Builds a queue or channel; the entry says where its bound is.
    Queue,
    /// Builds a lock / semaphore / condition; the entry's `kind` says which.
    Lock,
    /// Makes a network or external call that can wait forever without a
    /// timeout (the entry's `keyword`/`arg` name the timeout parameter).
    NeedsTimeout,
    /// Emits log output or other I/O that should not run under a lock.
    Logging,
    /// Acknowledges a delivered message to its broker (`ack`, `basic_ack`,
    /// `Ack`): from then on the broker will not deliver it again.
    Ack,
    /// Changes state on another service in a way that is not safe to repeat
    /// (an HTTP POST/PATCH, a payment) unless it carries an idempotency key.
    NonIdempotent,
    /// Runs an operation again when it fails: a retry decorator or helper
    /// (`tenacity.retry`, `p-retry`), or an iterator of attempts
    /// (`tenacity.Retrying`).
    Retry,
    /// Fills the queue it is given without ever waiting for room
    /// (`logging.handlers.QueueHandler` uses `put_nowait`): a bound on that
    /// queue turns a burst into errors or drops, so it is unbounded by
    /// design.
    NowaitProducer,
    /// Builds a one-shot result slot that another task or thread fills
    /// (`asyncio.Future()`, `loop.create_future()`, `threading.Event()`):
    /// no work of its own runs behind it. The entry's `kind` says which
    /// (`future`, `thread-future`, `event`).
    Completion,
    /// Reads a clock (`time.monotonic()`, `loop.time()`): code that works
    /// out a delay from it is pacing its callers, not guessing a wait.
    Clock,
    /// Opens a scope that cancels what it wraps after a given time
    /// (`asyncio.timeout(5)`, `trio.fail_after(5)`): the entry's `arg` and
    /// `keyword` say where the duration is; `None` there means no limit.
    Deadline,
}

impl Effect {
    pub const ALL: [Effect; 18] = [
        Effect::Blocking,
        Effect::CpuHeavy,
        Effect::Spawn,
        Effect::ScopedSpawn,
        Effect::Offload,
        Effect::SyncOverAsync,
        Effect::AsyncApi,
        Effect::Queue,
        Effect::Lock,
        Effect::NeedsTimeout,
        Effect::Logging,
        Effect::Ack,
        Effect::NonIdempotent,
        Effect::Retry,
        Effect::NowaitProducer,
        Effect::Completion,
        Effect::Clock,
        Effect::Deadline,
    ];

    /// The table key of the effect (`blocking`, `cpu_heavy`, ...), also used
    /// by `[knowledge.<lang>]` in user config.
    pub fn key(self) -> &'static str {
        match self {
            Effect::Blocking => "blocking",
            Effect::CpuHeavy => "cpu_heavy",
            Effect::Spawn => "spawn",
            Effect::ScopedSpawn => "scoped_spawn",
            Effect::Offload => "offload",
            Effect::SyncOverAsync => "sync_over_async",
            Effect::AsyncApi => "async_api",
            Effect::Queue => "queue",
            Effect::Lock => "lock",
            Effect::NeedsTimeout => "needs_timeout",
            Effect::Logging => "logging",
            Effect::Ack => "ack",
            Effect::NonIdempotent => "non_idempotent",
            Effect::Retry => "retry",
            Effect::NowaitProducer => "nowait_producer",
            Effect::Completion => "completion",
            Effect::Clock => "clock",
            Effect::Deadline => "deadline",
        }
    }

    pub fn from_key(key: &str) -> Option<Effect> {
        Effect::ALL.into_iter().find(|e| e.key() == key)
    }
}

/// The effects the knowledge table has an entry for, for one call.
///
/// Rules ask each call about several effects and most calls have none, so
/// the engine computes the set once per call (after the semantic pass has
/// settled the call's target) and a lookup of an absent effect is one bit
/// test. A call whose set was never computed reports every effect as
/// possible, and the table is asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EffectSet(u32);

impl EffectSet {
    /// Not computed: every effect may be present.
    pub const UNKNOWN: EffectSet = EffectSet(1 << 31);
    pub const EMPTY: EffectSet = EffectSet(0);

    fn bit(e: Effect) -> u32 {
        1 << (e as u32)
    }

    pub fn with(self, e: Effect) -> EffectSet {
        EffectSet(self.0 | Self::bit(e))
    }

    pub fn without(self, e: Effect) -> EffectSet {
        EffectSet(self.0 & !Self::bit(e))
    }

    /// False only when the set is known and lacks `e`.
    pub fn may_have(self, e: Effect) -> bool {
        self.0 & (Self::UNKNOWN.0 | Self::bit(e)) != 0
    }
}

impl Default for EffectSet {
    fn default() -> EffectSet {
        EffectSet::UNKNOWN
    }
}

/// When a queue constructor builds an unbounded queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unbounded {
    /// Always unbounded (`unbounded_channel()`).
    Always,
    /// Unbounded when the bound argument is missing or `<= 0`
    /// (`asyncio.Queue()`, `asyncio.Queue(0)`).
    MissingOrNonPositive,
    /// Bounded only if the bound is a constant below `huge`
    /// (Go `make(chan T, N)`).
    Huge,
}

/// One knowledge entry.
#[derive(Clone, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Callee patterns.
    pub calls: Vec<String>,
    /// What the call does, as a phrase: "sleeps the calling thread".
    #[serde(default)]
    pub what: String,
    /// The fix in this language: "await asyncio.sleep(...) instead".
    #[serde(default)]
    pub fix: String,
    /// Offload: index of the callable argument (`None` = every closure argument).
    /// Queue: positional index of the bound. NeedsTimeout: positional index
    /// of a timeout/context argument. Blocking: positional index of the
    /// flag named by `keyword`. Deadline: positional index of the duration.
    #[serde(default)]
    pub arg: Option<usize>,
    /// Queue: keyword of the bound (`maxsize`). NeedsTimeout: keyword of the
    /// timeout (`timeout`). Blocking: the flag that, passed as a literal
    /// `False`, makes the call return at once instead of waiting
    /// (`block` of `queue.Queue.get`, `wait` of `Executor.shutdown`).
    /// Deadline: keyword of the duration (`delay` of `asyncio.timeout`).
    #[serde(default)]
    pub keyword: Option<String>,
    /// Queue: when the queue is unbounded.
    #[serde(default)]
    pub unbounded: Option<Unbounded>,
    /// Queue with `Unbounded::Huge`: the smallest constant bound considered huge.
    #[serde(default)]
    pub huge: Option<i128>,
    /// Lock: `mutex`, `rlock`, `rwlock`, `async-mutex`, `semaphore`,
    /// `condition`... Spawn: `task`, `thread`, `process`. Completion:
    /// `future`, `thread-future`, `event`.
    #[serde(default)]
    pub kind: Option<String>,
    /// Blocking: `false` when only a direct call counts, not a call of a
    /// project helper that makes it (short critical sections).
    #[serde(default)]
    pub transitive: Option<bool>,
    /// Blocking: the call waits only on a bounded receiver (`q.put(x)` on a
    /// queue built with no `maxsize` returns at once).
    #[serde(default)]
    pub only_when_bounded: bool,
    /// Blocking: flags that make the call return at once when an argument
    /// names one (`os.waitpid(pid, os.WNOHANG)`, `getaddrinfo(host, port,
    /// flags=socket.AI_NUMERICHOST)`).
    #[serde(default)]
    pub unless_flag: Vec<String>,
    /// Blocking: keywords that, given a literal `True`, make the call
    /// return without waiting (`local_files_only=True` of
    /// `hf_hub_download` only looks in the local cache).
    #[serde(default)]
    pub unless_true: Vec<String>,
    /// Callees that a `prefix*` pattern of `calls` covers but this entry
    /// does not (`fs/promises.FileHandle.readLines` returns a readline
    /// interface, not a promise).
    #[serde(default)]
    pub except: Vec<String>,
    /// Async API: a method of an object that runs one operation at a time
    /// (a second concurrent call on one `asyncpg.Connection` fails with
    /// "another operation is in progress"): a lock around its calls is what
    /// lets several tasks share it. Blocking: the same for threads (a
    /// DB-API connection or cursor), so a thread lock around the call is
    /// what makes it correct.
    #[serde(default)]
    pub exclusive: bool,
}

impl Entry {
    /// Whether a helper making this call counts as making it too.
    pub fn transitive(&self) -> bool {
        self.transitive.unwrap_or(true)
    }
}

/// The raw shape of a knowledge TOML file.
#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct TableFile {
    #[serde(default)]
    blocking: Vec<Entry>,
    #[serde(default)]
    cpu_heavy: Vec<Entry>,
    #[serde(default)]
    spawn: Vec<Entry>,
    #[serde(default)]
    scoped_spawn: Vec<Entry>,
    #[serde(default)]
    offload: Vec<Entry>,
    #[serde(default)]
    sync_over_async: Vec<Entry>,
    #[serde(default)]
    async_api: Vec<Entry>,
    #[serde(default)]
    queue: Vec<Entry>,
    #[serde(default)]
    lock: Vec<Entry>,
    #[serde(default)]
    needs_timeout: Vec<Entry>,
    #[serde(default)]
    ack: Vec<Entry>,
    #[serde(default)]
    non_idempotent: Vec<Entry>,
    #[serde(default)]
    retry: Vec<Entry>,
    #[serde(default)]
    logging: Vec<Entry>,
    #[serde(default)]
    nowait_producer: Vec<Entry>,
    #[serde(default)]
    completion: Vec<Entry>,
    #[serde(default)]
    clock: Vec<Entry>,
    #[serde(default)]
    deadline: Vec<Entry>,
    /// Callee → the type of the value it returns (`sqlite3.connect` →
    /// `sqlite3.Connection`), for resolving later method calls.
    #[serde(default)]
    returns: HashMap<String, String>,
    /// A type the tables give a value → the declared type it is a kind
    /// of (`flume::UnboundedSender` → `flume::Sender`), so a field declared
    /// with the wider type takes the narrower one when every value stored
    /// in it has it.
    #[serde(default)]
    narrows: HashMap<String, String>,
    /// A library class → its attributes that are one lock: the lock first,
    /// then the conditions it builds on it (`queue.Queue` → `mutex`,
    /// `not_empty`, ...), so a subclass holding any of them holds all.
    #[serde(default)]
    shared_lock: HashMap<String, Vec<String>>,
    /// A library class → the methods it calls only while holding its own
    /// lock (`queue.Queue` runs `_put` and `_get` under `mutex`), so a
    /// subclass overriding them holds that lock there.
    #[serde(default)]
    locked_hooks: HashMap<String, Vec<String>>,
    /// Decorators that turn a coroutine function into a plain callable
    /// which runs or starts the coroutine itself (`asgiref`'s
    /// `async_to_sync`, textual's `@work`): calling the decorated function
    /// gives no coroutine to await. `*suffix` matches any name ending so.
    #[serde(default)]
    sync_decorators: Vec<String>,
}

/// The knowledge of one language family.
#[derive(Debug, Default, Clone)]
pub struct Table {
    entries: Vec<(Effect, Entry)>,
    exact: HashMap<String, Vec<usize>>,
    /// `prefix*suffix` patterns.
    prefix: Vec<(String, String, usize)>,
    /// Indices into `prefix` by the pattern's first name segment, so a
    /// lookup only tries the patterns of the target's package.
    prefix_by_head: HashMap<String, Vec<usize>>,
    /// Patterns whose prefix has no separator, tried for every target (the
    /// built-in tables have none; user configuration may add some).
    prefix_unscoped: Vec<usize>,
    /// The first name segment of every exact and prefix pattern: a target
    /// whose first segment is not here matches neither kind, which is the
    /// answer for most calls of a project (its own functions), found with
    /// one lookup of a short name.
    heads: HashSet<String>,
    method: HashMap<String, Vec<usize>>,
    returns: HashMap<String, String>,
    narrows: HashMap<String, String>,
    shared_lock: HashMap<String, Vec<String>>,
    locked_hooks: HashMap<String, Vec<String>>,
    sync_decorators: Vec<String>,
}

impl Table {
    fn parse(text: &str) -> Result<Table, String> {
        let file: TableFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut t = Table {
            returns: file.returns,
            narrows: file.narrows,
            shared_lock: file.shared_lock,
            locked_hooks: file.locked_hooks,
            sync_decorators: file.sync_decorators,
            ..Table::default()
        };
        let groups = [
            (Effect::Blocking, file.blocking),
            (Effect::CpuHeavy, file.cpu_heavy),
            (Effect::Spawn, file.spawn),
            (Effect::ScopedSpawn, file.scoped_spawn),
            (Effect::Offload, file.offload),
            (Effect::SyncOverAsync, file.sync_over_async),
            (Effect::AsyncApi, file.async_api),
            (Effect::Queue, file.queue),
            (Effect::Lock, file.lock),
            (Effect::NeedsTimeout, file.needs_timeout),
            (Effect::Logging, file.logging),
            (Effect::Ack, file.ack),
            (Effect::NonIdempotent, file.non_idempotent),
            (Effect::Retry, file.retry),
            (Effect::NowaitProducer, file.nowait_producer),
            (Effect::Completion, file.completion),
            (Effect::Clock, file.clock),
            (Effect::Deadline, file.deadline),
        ];
        for (effect, entries) in groups {
            for e in entries {
                t.push(effect, e);
            }
        }
        Ok(t)
    }

    fn push(&mut self, effect: Effect, entry: Entry) {
        let idx = self.entries.len();
        for pat in &entry.calls {
            if let Some(m) = pat.strip_prefix("*.").or_else(|| pat.strip_prefix("*::")) {
                self.method.entry(m.to_string()).or_default().push(idx);
            } else if let Some((p, sfx)) = pat.split_once('*') {
                let group = if p.contains(['.', ':']) {
                    let h = head(p).to_string();
                    self.heads.insert(h.clone());
                    self.prefix_by_head.entry(h).or_default()
                } else {
                    &mut self.prefix_unscoped
                };
                group.push(self.prefix.len());
                self.prefix.push((p.to_string(), sfx.to_string(), idx));
            } else {
                self.heads.insert(head(pat).to_string());
                self.exact.entry(pat.clone()).or_default().push(idx);
            }
        }
        self.entries.push((effect, entry));
    }

    /// The entry of `effect` covering a call to `target` (resolved qualified
    /// name, if any) whose last name segment is `method`.
    pub fn find(&self, effect: Effect, target: Option<&str>, method: &str) -> Option<&Entry> {
        self.candidates(target, method)
            .find(|&i| self.entries[i].0 == effect)
            .map(|i| &self.entries[i].1)
    }

    /// [`Table::find`] for a call whose [`EffectSet`] may already say the
    /// answer is none.
    pub fn find_for_call(&self, effect: Effect, call: &crate::ir::Call) -> Option<&Entry> {
        if !call.effects.may_have(effect) {
            return None;
        }
        self.find(effect, call.target.as_deref(), &call.name)
    }

    /// The effects [`Table::find`] has an entry for, for this callee.
    pub fn effect_set(&self, target: Option<&str>, method: &str) -> EffectSet {
        self.candidates(target, method)
            .fold(EffectSet::EMPTY, |set, i| set.with(self.entries[i].0))
    }

    /// The entries that may cover a callee, best first: exact patterns, then
    /// prefix patterns (for a resolved target), or the method's `*.name`
    /// patterns (for an unresolved one).
    fn candidates<'s>(
        &'s self,
        target: Option<&'s str>,
        method: &'s str,
    ) -> impl Iterator<Item = usize> + 's {
        let (exact, prefixed, by_method) = match target {
            Some(target) => {
                let h = head(target);
                if self.prefix_unscoped.is_empty() && !self.heads.contains(h) {
                    (None, None, None)
                } else {
                    let prefixed = (self.prefix_by_head.get(h).into_iter().flatten())
                        .chain(&self.prefix_unscoped)
                        .map(|&i| &self.prefix[i])
                        .filter(move |(p, sfx, i)| {
                            target.len() >= p.len() + sfx.len()
                                && target.starts_with(p.as_str())
                                && target.ends_with(sfx.as_str())
                                && !self.entries[*i].1.except.iter().any(|x| x == target)
                        })
                        .map(|(_, _, i)| *i);
                    (self.exact.get(target), Some(prefixed), None)
                }
            }
            None if !method.is_empty() => (None, None, self.method.get(method)),
            None => (None, None, None),
        };
        let listed = |ids: Option<&'s Vec<usize>>| ids.into_iter().flatten().copied();
        listed(exact)
            .chain(prefixed.into_iter().flatten())
            .chain(listed(by_method))
    }

    /// The callee names (last segments) of every pattern of `effect`
    /// (`*.ack` and `aio_pika.IncomingMessage.ack` give `ack`), for rules
    /// that start from the calls with that effect; `None` when a pattern
    /// ends in `*` and so covers any name.
    pub fn names_of(&self, effect: Effect) -> Option<Vec<&str>> {
        let mut names = Vec::new();
        for (e, entry) in &self.entries {
            if *e != effect {
                continue;
            }
            for pat in &entry.calls {
                let last = pat.rsplit(['.', ':']).next().unwrap_or(pat);
                if last.contains('*') || last.is_empty() {
                    return None;
                }
                names.push(last);
            }
        }
        names.sort_unstable();
        names.dedup();
        Some(names)
    }

    /// Every effect known for a callee.
    pub fn effects(&self, target: Option<&str>, method: &str) -> Vec<(Effect, &Entry)> {
        Effect::ALL
            .into_iter()
            .filter_map(|e| self.find(e, target, method).map(|en| (e, en)))
            .collect()
    }

    /// The type returned by a known callee.
    pub fn returns(&self, target: &str) -> Option<&str> {
        self.returns.get(target).map(String::as_str)
    }

    /// The declared type that `ty` is a narrower kind of, if any.
    pub fn narrows(&self, ty: &str) -> Option<&str> {
        self.narrows.get(ty).map(String::as_str)
    }

    /// The attributes of library class `class` that are one lock (the lock,
    /// then the conditions built on it), if the tables name any.
    pub fn shared_lock(&self, class: &str) -> Option<&[String]> {
        self.shared_lock.get(class).map(Vec::as_slice)
    }

    /// Every [`shared_lock`](Self::shared_lock) group (for an object of
    /// unknown class whose attributes name one).
    pub fn shared_lock_groups(&self) -> impl Iterator<Item = &[String]> {
        self.shared_lock.values().map(Vec::as_slice)
    }

    /// Whether library class `class` calls its method `method` only while
    /// holding the lock of its [`shared_lock`](Self::shared_lock) group.
    pub fn is_locked_hook(&self, class: &str, method: &str) -> bool {
        self.locked_hooks
            .get(class)
            .is_some_and(|m| m.iter().any(|x| x == method))
    }

    /// Whether decorator `name` (resolved) makes the coroutine function it
    /// decorates a plain callable that runs or starts the coroutine.
    pub fn is_sync_decorator(&self, name: &str) -> bool {
        self.sync_decorators
            .iter()
            .any(|p| match p.strip_prefix('*') {
                Some(suffix) => name.ends_with(suffix),
                None => name == p,
            })
    }

    /// Whether some callee returns values of type `ty` (`fetch` gives a
    /// `Response`): its `ty.method` patterns are instance methods.
    pub fn is_returned_type(&self, ty: &str) -> bool {
        self.returns.values().any(|t| t == ty)
    }

    /// Whether the table knows any narrower types (only Rust's does).
    pub fn has_narrowing(&self) -> bool {
        !self.narrows.is_empty()
    }

    /// Adds user-declared callees for an effect (from `[knowledge.<lang>]`).
    pub fn extend(&mut self, effect: Effect, calls: Vec<String>) {
        let entry = Entry {
            what: format!(
                "is declared `{}` in the unsnarl configuration",
                effect.key()
            ),
            calls,
            ..Entry::default()
        };
        self.push(effect, entry);
    }
}

/// A name's first segment (before the first `.` or `:`).
fn head(name: &str) -> &str {
    name.split(['.', ':']).next().unwrap_or(name)
}

const PYTHON: &str = include_str!("../../../knowledge/python.toml");
const JAVASCRIPT: &str = include_str!("../../../knowledge/javascript.toml");
const GO: &str = include_str!("../../../knowledge/go.toml");
const RUST: &str = include_str!("../../../knowledge/rust.toml");
const PYTHON_STANDARD_MODULES: &str =
    include_str!("../../../knowledge/python-standard-modules.txt");

/// Whether `head`, the first segment of a qualified name, is a top-level
/// module of `lang`'s standard library (listed in
/// `knowledge/python-standard-modules.txt` for Python; no list for the
/// other languages yet). A call through an absolute import of such a module
/// is a call of the standard library, not of a project module that ends
/// with the same name.
pub fn is_standard_module(lang: Language, head: &str) -> bool {
    static PYTHON: std::sync::LazyLock<HashSet<&'static str>> = std::sync::LazyLock::new(|| {
        PYTHON_STANDARD_MODULES
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect()
    });
    lang == Language::Python && PYTHON.contains(head)
}

/// Whether `head` is a top-level module that `lang`'s built-in knowledge
/// table names (`requests`, `aiohttp`, `time`): a library the project
/// imports. A call through it (`requests.Session.close`) is the library's,
/// not a project function whose longer name ends the same way
/// (`cloudoll.web.requests.Session.close`). Python only: the other front
/// ends name a package import so that it cannot end like a project path.
pub fn is_library_module(lang: Language, head: &str) -> bool {
    static PYTHON_HEADS: std::sync::LazyLock<HashSet<String>> =
        std::sync::LazyLock::new(|| Table::parse(PYTHON).map(|t| t.heads).unwrap_or_default());
    lang == Language::Python && PYTHON_HEADS.contains(head)
}

/// The knowledge tables of every language.
#[derive(Debug, Clone)]
pub struct Knowledge {
    python: Table,
    javascript: Table,
    go: Table,
    rust: Table,
}

impl Knowledge {
    /// The built-in tables. They are part of the binary and are checked by
    /// tests, so a parse failure here is a bug in unsnarl itself.
    pub fn builtin() -> Knowledge {
        let load = |name: &str, text: &str| {
            Table::parse(text).unwrap_or_else(|e| panic!("built-in knowledge/{name}.toml: {e}"))
        };
        Knowledge {
            python: load("python", PYTHON),
            javascript: load("javascript", JAVASCRIPT),
            go: load("go", GO),
            rust: load("rust", RUST),
        }
    }

    pub fn table(&self, lang: Language) -> &Table {
        match lang {
            Language::Python => &self.python,
            Language::JavaScript | Language::TypeScript => &self.javascript,
            Language::Go => &self.go,
            Language::Rust => &self.rust,
        }
    }

    pub fn table_mut(&mut self, lang: Language) -> &mut Table {
        match lang {
            Language::Python => &mut self.python,
            Language::JavaScript | Language::TypeScript => &mut self.javascript,
            Language::Go => &mut self.go,
            Language::Rust => &mut self.rust,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_modules_are_read_from_the_list() {
        for m in ["itertools", "asyncio", "os", "_thread", "concurrent"] {
            assert!(is_standard_module(Language::Python, m), "{m}");
        }
        // Not modules (comment words, submodules, third-party packages),
        // and no list for the other languages.
        for m in ["#", "Top-level", "asyncio.tasks", "anyio", "requests", ""] {
            assert!(!is_standard_module(Language::Python, m), "{m}");
        }
        assert!(!is_standard_module(Language::Go, "os"));
    }

    #[test]
    fn builtin_tables_parse() {
        let k = Knowledge::builtin();
        assert!(
            k.table(Language::Python)
                .find(Effect::Blocking, Some("time.sleep"), "sleep")
                .is_some()
        );
    }

    #[test]
    fn a_calls_effect_set_holds_exactly_the_effects_find_answers() {
        let mut k = Knowledge::builtin();
        // A user pattern without a package, tried for every target.
        k.table_mut(Language::Python)
            .extend(Effect::Logging, vec!["audit*".into()]);
        let mut checked = 0;
        for lang in [
            Language::Python,
            Language::JavaScript,
            Language::Go,
            Language::Rust,
        ] {
            let t = k.table(lang);
            // Targets made from every pattern: the pattern's text, a callee
            // under it, one beside it, and its method name alone.
            let mut targets: Vec<String> = Vec::new();
            for (_, e) in &t.entries {
                for p in &e.calls {
                    let plain = p.replace('*', "x");
                    targets.push(plain.clone());
                    targets.push(format!("{plain}.y"));
                    targets.push(format!("{plain}z"));
                    targets.push(format!("other.{plain}"));
                    targets.push(p.trim_start_matches("*.").to_string());
                }
            }
            targets.extend(["", "app.run", "audit_log", "self.lock"].map(String::from));
            for target in &targets {
                let method = target.rsplit(['.', ':', '/']).next().unwrap_or("");
                for resolved in [Some(target.as_str()), None] {
                    let set = t.effect_set(resolved, method);
                    for effect in Effect::ALL {
                        let found = t.find(effect, resolved, method).is_some();
                        assert_eq!(
                            set.may_have(effect),
                            found,
                            "{lang:?} {effect:?} {resolved:?} {method:?}"
                        );
                        checked += usize::from(found);
                    }
                }
            }
        }
        // The targets do reach entries, of every language.
        assert!(checked > 1000, "{checked}");
    }

    #[test]
    fn an_unknown_effect_set_asks_the_table_and_a_known_one_answers_alone() {
        assert!(
            Effect::ALL
                .into_iter()
                .all(|e| EffectSet::UNKNOWN.may_have(e))
        );
        assert!(
            Effect::ALL
                .into_iter()
                .all(|e| !EffectSet::EMPTY.may_have(e))
        );
        let set = EffectSet::EMPTY.with(Effect::Lock);
        assert!(set.may_have(Effect::Lock));
        assert!(!set.may_have(Effect::Blocking));
    }

    #[test]
    fn patterns_match_exact_prefix_and_method() {
        let t = Table::parse(
            r#"
            [[blocking]]
            calls = ["time.sleep", "requests.*", "*.acquire_blocking", "fs.*Sync", "legacy*"]
            "#,
        )
        .unwrap();
        assert!(
            t.find(Effect::Blocking, Some("time.sleep"), "sleep")
                .is_some()
        );
        assert!(
            t.find(Effect::Blocking, Some("time.sleeper"), "sleeper")
                .is_none()
        );
        assert!(
            t.find(Effect::Blocking, Some("requests.Session.get"), "get")
                .is_some()
        );
        assert!(t.find(Effect::Blocking, None, "acquire_blocking").is_some());
        assert!(
            t.find(
                Effect::Blocking,
                Some("app.Pool.acquire_blocking"),
                "acquire_blocking"
            )
            .is_none()
        );
        assert!(t.find(Effect::Spawn, Some("time.sleep"), "sleep").is_none());
        assert!(
            t.find(Effect::Blocking, Some("fs.readFileSync"), "readFileSync")
                .is_some()
        );
        assert!(
            t.find(Effect::Blocking, Some("fs.readFile"), "readFile")
                .is_none()
        );
        // A prefix without a separator applies to any package.
        assert!(
            t.find(Effect::Blocking, Some("legacy_db.query"), "query")
                .is_some()
        );
        assert!(
            t.find(Effect::Blocking, Some("app.legacy_db.query"), "query")
                .is_none()
        );
    }

    /// Without package-less prefixes, a target is looked up only when its
    /// first segment starts some pattern; the answers are the same.
    #[test]
    fn targets_are_found_through_the_first_segment_of_patterns() {
        let t = Table::parse(
            r#"
            [[blocking]]
            calls = ["time.sleep", "requests.*", "open", "std::fs::*"]
            "#,
        )
        .unwrap();
        let blocks = |target: &str| t.find(Effect::Blocking, Some(target), "").is_some();
        assert!(blocks("time.sleep"));
        assert!(blocks("requests.Session.get"));
        assert!(blocks("open"));
        assert!(blocks("std::fs::read"));
        assert!(!blocks("app.time.sleep"));
        assert!(!blocks("timer.sleep"));
        assert!(!blocks("opener"));
        assert!(!blocks("std::thread::sleep"));
    }

    #[test]
    fn unknown_keys_are_rejected() {
        assert!(Table::parse("[[blocking]]\ncalls = []\nwhat = ''\nbogus = 1").is_err());
    }
}
