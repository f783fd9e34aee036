//! The project index: every function of the scanned tree, what it calls and
//! whether it blocks, so rules can reason across functions and files (an
//! async handler calling a sync helper that sleeps three calls down).

use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;
use rustc_hash::FxHashSet as HashSet;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex, OnceLock};
use unsnarl_model::walk::{Visitor, walk_block, walk_expr};
use unsnarl_model::*;

/// A function of the project: file index and function id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FnRef {
    pub file: u32,
    pub func: FuncId,
}

/// A call site inside a function, to a callee named by `target`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CallSite {
    /// Shared with every other call of the same name ([`Names`]).
    pub target: Arc<str>,
    pub span: Span,
}

/// The call targets of every summary, each name stored once: a project
/// calls the same few names (`fmt.Errorf`, `self.log`) from thousands of
/// functions, and the summaries stay in memory for the whole scan.
/// Sharded so the analysis threads rarely wait for each other.
#[derive(Default)]
pub struct Names {
    shards: [Mutex<HashSet<Arc<str>>>; 16],
}

impl Names {
    /// Forgets every name (those in use stay alive where they are used):
    /// once every file is summarized, the table is only weight.
    pub fn clear(&self) {
        for shard in &self.shards {
            *shard.lock().unwrap_or_else(|e| e.into_inner()) = HashSet::default();
        }
    }

    pub fn intern(&self, name: &str) -> Arc<str> {
        let shard = &self.shards[name_hash(name) as usize % 16];
        let mut set = shard.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(known) = set.get(name) {
            return known.clone();
        }
        let new: Arc<str> = name.into();
        set.insert(new.clone());
        new
    }
}

/// A direct blocking call inside a function.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BlockingSite {
    pub callee: Box<str>,
    /// The knowledge's words, shared by every site of the same API.
    pub what: Arc<str>,
    pub fix: Arc<str>,
    pub span: Span,
    /// Go: the function is a method, and this call and every other
    /// blocking call it makes directly are file I/O on paths built from its
    /// receiver's fields (`os.OpenFile(f.path, ..)` in `func (f *Flock)`):
    /// the receiver's own files, which a mutex of the receiver guards too.
    pub on_receiver_files: bool,
}

/// One function's summary as a front end's file gives it, before it is
/// packed into its file's [`FileSummaries`].
#[derive(Clone, Debug)]
pub struct FnSummary {
    pub func: FuncId,
    pub qualname: Box<str>,
    pub lang: Language,
    pub is_async: bool,
    /// A generator (`function*`, `async function*`, `def` with `yield`):
    /// calling it runs none of its body and gives an iterator, not
    /// something to await, even when it is `async`.
    pub is_generator: bool,
    /// A generator whose body has cleanup to run when it is closed: a
    /// `finally` or a `with` (a cursor, a pooled connection). Leaving it
    /// suspended defers that cleanup; one without holds nothing.
    pub has_cleanup: bool,
    /// Calling it gives something to await: `async`, or declared to return
    /// a promise/future (`Promise<T>`, `impl Future`); in JS/TS also a
    /// function whose every `return` gives a promise expression (a known
    /// promise API, `new Promise`, a `.then()` chain), across project calls
    /// (see `returns_via`).
    pub returns_awaitable: bool,
    /// JS/TS: project callees whose results this function returns (every
    /// other `return` gives a promise). When all of them return awaitables,
    /// so does this function; the index settles it across files.
    pub returns_via: Box<[Box<str>]>,
    /// JS/TS: an async function that catches what it awaits, so the promise
    /// calling it gives cannot reject (bar a bug that throws), provided the
    /// project callees in `rejects_via` cannot either; the index settles
    /// that across files. `None`: it may reject.
    pub rejects_via: Option<Box<[Box<str>]>>,
    /// The first blocking call made directly in the body (not offloaded, not
    /// in a nested function). Boxed: most functions block nowhere.
    pub blocking: Option<Box<BlockingSite>>,
    /// Calls whose callee has a qualified name, in source order.
    pub calls: Box<[CallSite]>,
    /// JS/TS: a function with no body (a `.d.ts` declaration, `declare
    /// function`, an interface's method). A package ships one beside each
    /// compiled module under the same name; calls resolve to the one with
    /// the body.
    pub declared_only: bool,
    /// JS/TS: a function declared inside another function. The front end
    /// names one inside an anonymous function from the module (`w(() => {
    /// async function load() {} })` is `mod.load`, as a bundler's module
    /// wrappers have it), but nothing outside that function can call it by
    /// name: other files' lookups skip it.
    pub hidden: bool,
}

/// What the index keeps of one file's functions, packed: every qualified
/// name in one string and every call in one list. Summaries stay in memory
/// for the whole scan; a few blocks per file, instead of two or three small
/// ones per function, take less memory and do not leave long-lived blocks
/// scattered among the short-lived ones of the next files.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FileSummaries {
    fns: Box<[Packed]>,
    names: Box<str>,
    calls: Box<[CallSite]>,
    /// Python: how the file runs coroutines alone, and what it hands on
    /// ([`LoneRuns`]); `None` for the other languages. Boxed: a summary
    /// stays in memory for the whole scan.
    #[serde(default)]
    lone: Option<Box<LoneRuns>>,
}

/// What a Python file's summaries say about running coroutines alone (see
/// [`FileSummaries::set_lone_runs`]).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct LoneRuns {
    /// The calls of the file that run their callee alone on a loop, by
    /// span, sorted.
    spans: Box<[Span]>,
    /// Functions the file hands by name to a call that runs them on a new
    /// loop (`anyio.run(main)`), as written.
    refs: Box<[Box<str>]>,
    /// The names the file hands on as values (an argument, an item of a
    /// list or dict, an assigned or returned value: `tools=[search,
    /// fetch]`), by the hash of their last segment, sorted. A function so
    /// handed on may be run anywhere, so the index does not say it runs
    /// alone.
    value_refs: Box<[u32]>,
    /// The hash of the first segment of the file's module name (its
    /// top-level package), for `value_refs`.
    package: u32,
    /// The calls of `spans` a program's entry point makes (a command of a
    /// command-line app, `main`): `asyncio.run(kernel.run(q))` in `cli.py`,
    /// not a library's `return asyncio.run(self.fetch_async(url))`.
    #[serde(default)]
    entries: Box<[Span]>,
    /// The awaited calls of the file's coroutines (`await kernel.run(q)`,
    /// or the first argument of an awaited `asyncio.wait_for`), by span,
    /// sorted: a coroutine that runs alone and starts nothing keeps its
    /// callee alone there.
    #[serde(default)]
    quiet: Box<[Span]>,
    /// The file's functions that may leave work running on the loop by
    /// themselves (a task they spawn, a server they start), by id, sorted.
    #[serde(default)]
    starting: Box<[u32]>,
    /// The hashes of the method names the file calls on receivers of
    /// unknown type, or hands on as unresolved attributes (`cb=obj.run`),
    /// sorted: any project function of that name may be run from here.
    #[serde(default)]
    open_names: Box<[u32]>,
    /// The hashes of the first segments of the file's module and of every
    /// module it imports, sorted: the project functions its `open_names`
    /// may reach are in those.
    #[serde(default)]
    reach: Box<[u32]>,
    /// The file's functions a decorator registers (`@app.get("/")`,
    /// `@mcp.tool()`): a framework may run them beside anything.
    #[serde(default)]
    registered: Box<[u32]>,
}

/// A function within [`FileSummaries`]: its name and calls end at
/// `name_end` and `calls_end` and start where the previous function's end.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Packed {
    func: FuncId,
    name_end: u32,
    calls_end: u32,
    lang: Language,
    is_async: bool,
    is_generator: bool,
    has_cleanup: bool,
    returns_awaitable: bool,
    /// May reject: [`FnSummary::rejects_via`] is `None`.
    may_reject: bool,
    /// `returns_via`, then `rejects_via`: one block instead of two (the
    /// scalars above leave room for the split in the struct's padding).
    vias: Box<[Box<str>]>,
    returns_via_len: u32,
    blocking: Option<Box<BlockingSite>>,
    declared_only: bool,
    hidden: bool,
}

/// A function's summary, as the index gives it to rules.
#[derive(Clone, Copy, Debug)]
pub struct Summary<'a> {
    pub func: FuncId,
    pub qualname: &'a str,
    pub lang: Language,
    pub is_async: bool,
    pub is_generator: bool,
    /// See [`FnSummary::has_cleanup`].
    pub has_cleanup: bool,
    /// See [`FnSummary::returns_awaitable`]; settled across files.
    pub returns_awaitable: bool,
    pub returns_via: &'a [Box<str>],
    /// Calling it gives a promise that cannot reject: see
    /// [`FnSummary::rejects_via`]; settled across files.
    pub never_rejects: bool,
    pub rejects_via: Option<&'a [Box<str>]>,
    pub blocking: Option<&'a BlockingSite>,
    pub calls: &'a [CallSite],
    /// See [`FnSummary::declared_only`].
    pub declared_only: bool,
    /// See [`FnSummary::hidden`].
    pub hidden: bool,
}

impl Summary<'_> {
    /// Why calling the function gives something to await: `async` (an
    /// async generator gives an iterator instead), or returning a
    /// promise/future.
    pub fn awaitable(&self) -> Option<Awaitable> {
        if self.is_async && !self.is_generator {
            Some(Awaitable::Async)
        } else if self.returns_awaitable {
            Some(Awaitable::Returns)
        } else {
            None
        }
    }
}

impl FileSummaries {
    /// Replaces each call target by the one `names` holds (see
    /// [`crate::Engine::share_names`]).
    pub fn share_names(&mut self, names: &Names) {
        for c in self.calls.iter_mut() {
            c.target = names.intern(&c.target);
        }
    }

    pub fn len(&self) -> usize {
        self.fns.len()
    }

    /// Records the calls of the file that run their callee alone on its
    /// loop, by span: handed to a call that starts a new loop for it
    /// (`asyncio.run(serve(..))`), or awaited by a coroutine that runs
    /// alone and starts nothing (`return await evaluate(args)`); and the
    /// functions handed by name to such a call (`trio.run(main, args)`).
    /// The project index answers from them whether every caller of a
    /// coroutine runs it alone ([`ProjectIndex::runs_alone_elsewhere`]).
    ///
    /// `entries`: those of the runs a program's entry point starts
    /// ([`LoneRuns::entries`]).
    pub fn set_lone_runs(
        &mut self,
        mut spans: Vec<Span>,
        refs: Vec<String>,
        mut entries: Vec<Span>,
    ) {
        spans.sort_unstable();
        spans.dedup();
        entries.sort_unstable();
        entries.dedup();
        let lone = self.lone.get_or_insert_with(Box::default);
        lone.spans = spans.into();
        lone.entries = entries.into();
        lone.refs = refs.into_iter().map(String::into_boxed_str).collect();
    }

    /// Records the awaited calls of the file's coroutines (see
    /// [`LoneRuns::quiet`]) and the functions that may leave work running
    /// by themselves ([`LoneRuns::starting`]).
    pub fn set_awaits_and_starts(&mut self, mut spans: Vec<Span>, mut starting: Vec<u32>) {
        if spans.is_empty() && starting.is_empty() {
            return;
        }
        spans.sort_unstable();
        spans.dedup();
        starting.sort_unstable();
        let lone = self.lone.get_or_insert_with(Box::default);
        lone.quiet = spans.into();
        lone.starting = starting.into();
    }

    /// `x` is in the sorted list `list` of the file's [`LoneRuns`].
    fn lone_lists<T: Ord>(&self, list: impl Fn(&LoneRuns) -> &[T], x: &T) -> bool {
        self.lone
            .as_deref()
            .is_some_and(|l| list(l).binary_search(x).is_ok())
    }

    fn starts_work(&self, f: FuncId) -> bool {
        self.lone_lists(|l| &l.starting, &f.0)
    }

    fn entry_at(&self, span: Span) -> bool {
        self.lone_lists(|l| &l.entries, &span)
    }

    fn quiet_at(&self, span: Span) -> bool {
        self.lone_lists(|l| &l.quiet, &span)
    }

    fn registers(&self, f: FuncId) -> bool {
        self.lone_lists(|l| &l.registered, &f.0)
    }

    fn open_names(&self) -> &[u32] {
        self.lone.as_ref().map_or(&[], |l| &l.open_names)
    }

    /// A function of the top-level package `package` (hashed) may be what
    /// the file calls by the method name `name` (hashed) on a receiver of
    /// unknown type.
    fn may_call_open(&self, package: u32, name: u32) -> bool {
        self.lone.as_ref().is_some_and(|l| {
            l.open_names.binary_search(&name).is_ok() && l.reach.binary_search(&package).is_ok()
        })
    }

    fn runs_alone_at(&self, span: Span) -> bool {
        self.lone_lists(|l| &l.spans, &span)
    }

    fn lone_refs(&self) -> &[Box<str>] {
        self.lone.as_ref().map_or(&[], |l| &l.refs)
    }

    /// The file, of the top-level package `package`, hands on a value named
    /// `name` (both hashed).
    fn hands_on(&self, package: u32, name: u32) -> bool {
        self.lone
            .as_ref()
            .is_some_and(|l| l.package == package && l.value_refs.binary_search(&name).is_ok())
    }

    /// Some function cannot reject provided project callees cannot either
    /// (see [`FnSummary::rejects_via`]): the index has that to settle.
    fn has_rejects_via(&self) -> bool {
        self.fns
            .iter()
            .any(|p| !p.may_reject && p.vias.len() > p.returns_via_len as usize)
    }

    pub fn is_empty(&self) -> bool {
        self.fns.is_empty()
    }

    pub fn get(&self, k: usize) -> Summary<'_> {
        let p = &self.fns[k];
        let (name_start, calls_start) = match k {
            0 => (0, 0),
            _ => (self.fns[k - 1].name_end, self.fns[k - 1].calls_end),
        };
        Summary {
            func: p.func,
            qualname: &self.names[name_start as usize..p.name_end as usize],
            lang: p.lang,
            is_async: p.is_async,
            is_generator: p.is_generator,
            has_cleanup: p.has_cleanup,
            returns_awaitable: p.returns_awaitable,
            returns_via: &p.vias[..p.returns_via_len as usize],
            never_rejects: !p.may_reject && p.vias.len() == p.returns_via_len as usize,
            rejects_via: (!p.may_reject).then(|| &p.vias[p.returns_via_len as usize..]),
            blocking: p.blocking.as_deref(),
            calls: &self.calls[calls_start as usize..p.calls_end as usize],
            declared_only: p.declared_only,
            hidden: p.hidden,
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = Summary<'_>> {
        (0..self.len()).map(|k| self.get(k))
    }
}

impl FromIterator<FnSummary> for FileSummaries {
    fn from_iter<I: IntoIterator<Item = FnSummary>>(sums: I) -> FileSummaries {
        let mut fns = Vec::new();
        let mut names = String::new();
        let mut calls = Vec::new();
        for s in sums {
            names.push_str(&s.qualname);
            calls.extend(s.calls);
            fns.push(Packed {
                func: s.func,
                name_end: u32::try_from(names.len()).expect("a file's names fit in 4 GiB"),
                calls_end: u32::try_from(calls.len()).expect("a file's calls fit in u32"),
                lang: s.lang,
                is_async: s.is_async,
                is_generator: s.is_generator,
                has_cleanup: s.has_cleanup,
                returns_awaitable: s.returns_awaitable,
                may_reject: s.rejects_via.is_none(),
                returns_via_len: u32::try_from(s.returns_via.len())
                    .expect("a function's returns fit in u32"),
                vias: match s.rejects_via {
                    Some(r) if !r.is_empty() => s.returns_via.into_iter().chain(r).collect(),
                    _ => s.returns_via,
                },
                blocking: s.blocking,
                declared_only: s.declared_only,
                hidden: s.hidden,
            });
        }
        FileSummaries {
            fns: fns.into(),
            names: names.into(),
            calls: calls.into(),
            lone: None,
        }
    }
}

/// The block (not nested functions) yields from inside a `with` statement
/// or a `try` with a `finally`: a generator suspended there holds what the
/// exit or the `finally` would release. A `with` closed before the next
/// `yield` (a timeout scope around one read) holds nothing while suspended,
/// and so does a `finally` that only sets flags or logs (`log.debug("stream
/// closed")`).
pub fn has_cleanup(m: &FileModel, kb: &Table, body: &Block) -> bool {
    use unsnarl_model::walk::{exprs_in_block, stmts_in_block};
    let yields_in = |b: &Block| {
        exprs_in_block(m, b)
            .into_iter()
            .any(|e| matches!(m.expr(e).kind, ExprKind::Yield(_)))
    };
    stmts_in_block(m, body)
        .into_iter()
        .any(|s| match &m.stmt(s).kind {
            StmtKind::With { body, .. } => yields_in(body),
            // A `finally` that only sets flags (`self._closed = True`)
            // releases nothing: leaving it pending holds nothing.
            StmtKind::Try {
                body,
                handlers,
                orelse,
                finally: Some(fin),
            } => {
                (yields_in(body)
                    || yields_in(orelse)
                    || handlers.iter().any(|h| yields_in(&h.body)))
                    && {
                        let exprs = exprs_in_block(m, fin);
                        let logs: Vec<Span> = exprs
                            .iter()
                            .filter(|&&e| {
                                matches!(&m.expr(e).kind, ExprKind::Call(c)
                                    if kb.find_for_call(Effect::Logging, c).is_some())
                            })
                            .map(|&e| m.expr(e).span)
                            .collect();
                        exprs.into_iter().any(|e| {
                            matches!(m.expr(e).kind, ExprKind::Call(_) | ExprKind::Await(_))
                                && !logs.iter().any(|l| l.contains(m.expr(e).span))
                        })
                    }
            }
            _ => false,
        })
}

/// Summarizes the functions of one file (run per file, in parallel).
pub fn summarize(m: &FileModel, kb: &Table, lang: Language, names: &Names) -> FileSummaries {
    let mut out = Vec::new();
    let nonblocking = if lang == Language::Python {
        crate::shared::blocking::nonblocking_sockets(m)
    } else {
        Vec::new()
    };
    for fid in m.function_ids() {
        let f = m.func(fid);
        if f.qualname.is_empty() {
            continue;
        }
        let receiver = f.receiver.as_deref().filter(|_| lang == Language::Go);
        let mut v = SummaryVisitor {
            kb,
            names,
            nonblocking: &nonblocking,
            receiver,
            on_receiver_files: receiver.is_some(),
            blocking: None,
            calls: Vec::new(),
            once: if lang == Language::Python {
                runs_once_spans(m, f)
            } else {
                Vec::new()
            },
            is_async: f.is_async,
            loop_tested: Vec::new(),
            no_loop: Vec::new(),
        };
        // `@functools.cache def git_exe():` runs its body once per
        // process: later calls block on nothing and call nothing.
        let runs_once = lang == Language::Python
            && f.params.is_empty()
            && f.decorators
                .iter()
                .any(|d| matches!(d.as_str(), "functools.cache" | "functools.lru_cache"));
        if !runs_once {
            walk_block(m, &f.body, &mut v);
        }
        if let Some(b) = &mut v.blocking {
            b.on_receiver_files = v.on_receiver_files;
        }
        let mut returns_awaitable = (f.is_async && !f.is_generator)
            || f.returns.as_ref().is_some_and(|t| {
                // JS/TS `Promise<T> | undefined`: sometimes no promise at all.
                is_awaitable_type(t) && !(lang.is_js_family() && is_optional_union(&t.text))
            });
        let mut returns_via = Vec::new();
        if !returns_awaitable && lang.is_js_family() && !f.is_generator {
            match js_returned_promises(m, kb, &f.body) {
                Some(via) if via.is_empty() => returns_awaitable = true,
                Some(via) => returns_via = via,
                None => {}
            }
        }
        out.push(FnSummary {
            func: fid,
            qualname: f.qualname.as_str().into(),
            lang,
            is_async: f.is_async,
            is_generator: f.is_generator,
            has_cleanup: f.is_generator && has_cleanup(m, kb, &f.body),
            returns_awaitable,
            returns_via: returns_via.into(),
            rejects_via: match (lang.is_js_family() && !f.is_generator, f.is_async) {
                (true, true) => js_rejects_via(m, &f.body),
                (true, false) => js_plain_rejects_via(m, &f.body),
                (false, _) => None,
            },
            blocking: v.blocking.map(Box::new),
            calls: v.calls.into(),
            declared_only: lang.is_js_family() && f.body.is_empty(),
            hidden: lang.is_js_family() && f.parent.is_some_and(|p| p.0 != 0),
        });
    }
    let mut sums: FileSummaries = out.into_iter().collect();
    if lang == Language::Python {
        let values = values_handed_on(m);
        if !values.is_empty() {
            let lone = sums.lone.get_or_insert_with(Box::default);
            lone.value_refs = values.into();
            lone.package = package_of(&m.module);
        }
        let open = open_method_names(m);
        let registered = registered_functions(m);
        if !open.is_empty() || !registered.is_empty() {
            let first = |q: &str| short_hash(q.split('.').next().unwrap_or(q));
            let mut reach: Vec<u32> = std::iter::once(first(&m.module))
                .chain(m.imports.iter().map(|i| first(&i.target)))
                .collect();
            reach.sort_unstable();
            reach.dedup();
            let lone = sums.lone.get_or_insert_with(Box::default);
            lone.open_names = open.into();
            lone.reach = reach.into();
            lone.registered = registered.into();
        }
    }
    sums
}

/// The hashes of the method names `m` calls on a receiver whose type it
/// does not know (`self.tools.execute(...)` with `self.tools` untyped), or
/// hands on as an unresolved attribute (`callback=runner.run`): a project
/// function of that name may be what runs there.
fn open_method_names(m: &FileModel) -> Vec<u32> {
    let mut out = Vec::new();
    let unresolved_attr = |x: ExprId| match &m.expr(m.strip(x)).kind {
        ExprKind::Attr { name, .. } if m.resolved(m.strip(x)).is_none() => Some(short_hash(name)),
        _ => None,
    };
    for e in &m.exprs {
        match &e.kind {
            ExprKind::Call(c) => {
                if c.target.is_none() && c.receiver.is_some() {
                    out.push(short_hash(&c.name));
                }
                out.extend(c.args.iter().filter_map(|a| unresolved_attr(a.value)));
            }
            ExprKind::Collection { elems, .. } => {
                out.extend(elems.iter().filter_map(|&x| unresolved_attr(x)))
            }
            _ => {}
        }
    }
    for st in &m.stmts {
        if let StmtKind::Assign { value: Some(v), .. } | StmtKind::Return(Some(v)) = &st.kind {
            out.extend(unresolved_attr(*v));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The functions of `m` a decorator hands to something else (a route, a
/// tool, a command, a signal handler), by id, sorted; not those whose only
/// decorators change how they bind (`staticmethod`) or nothing at all.
fn registered_functions(m: &FileModel) -> Vec<u32> {
    const PLAIN: &[&str] = &[
        "staticmethod",
        "classmethod",
        "abstractmethod",
        "abc.abstractmethod",
        "override",
        "typing.override",
        "typing_extensions.override",
    ];
    let mut out: Vec<u32> = m
        .function_ids()
        .filter(|&f| {
            let func = m.func(f);
            // (The model names a builtin decorator in full:
            // `builtins.staticmethod`.)
            func.is_async
                && func
                    .decorators
                    .iter()
                    .any(|d| !PLAIN.contains(&d.trim_start_matches("builtins.")))
        })
        .map(|f| f.0)
        .collect();
    out.sort_unstable();
    out
}

/// The top-level package of the module `module` (`tool` of `tool.server`),
/// hashed; the modules at the top of the scanned tree (`cli`, `tools`: a
/// flat layout) share one.
fn package_of(module: &str) -> u32 {
    short_hash(module.split_once('.').map_or("", |(top, _)| top))
}

/// The hashes of the last segments of the module-level or imported names
/// `m` hands on as values (see `FileSummaries::value_refs`); not the
/// coroutine handed to a call that starts a loop for it (`anyio.run(main)`,
/// a lone run).
fn values_handed_on(m: &FileModel) -> Vec<u32> {
    let mut out = Vec::new();
    let mut note = |x: ExprId| {
        if matches!(
            m.expr(x).kind,
            ExprKind::Name { .. } | ExprKind::Attr { .. }
        ) && let Some(q) = m.resolved(x)
        {
            out.push(short_hash(q.rsplit('.').next().unwrap_or(q)));
        }
    };
    for e in &m.exprs {
        match &e.kind {
            ExprKind::Call(c) => {
                let starts_loop = c.effects.may_have(Effect::SyncOverAsync);
                for (k, a) in c.args.iter().enumerate() {
                    if !(starts_loop && k == 0 && a.name.is_none()) {
                        note(a.value);
                    }
                }
            }
            ExprKind::Collection { elems, .. } => elems.iter().for_each(|&x| note(x)),
            _ => {}
        }
    }
    for st in &m.stmts {
        match &st.kind {
            StmtKind::Assign { value: Some(v), .. } | StmtKind::Return(Some(v)) => note(*v),
            _ => {}
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The parts of `f`'s body that run once per process, the lazy
/// initialisation of a module-level singleton the function declares
/// `global` (or of a factory's variable its closure declares `nonlocal`): the block of `if _client is None:` (or `if not _client:`)
/// that assigns `_client`, and, after `if _config is not None: return
/// _config` (or `if _config: return _config`, or a bare `return`) at the top of the body,
/// the rest of the body when it assigns `_config`. Like a helper memoized
/// with `functools.cache`, it waits once, on the first call.
pub(crate) fn runs_once_per_process(m: &FileModel, f: &Function) -> Vec<Span> {
    let globals: Vec<&str> = f
        .body
        .iter()
        .filter_map(|&st| match &m.stmt(st).kind {
            // `nonlocal _conn` in a factory's closure: once per built app.
            StmtKind::Global { names, .. } => {
                Some(names.iter().map(|n| n.as_str()).collect::<Vec<_>>())
            }
            _ => None,
        })
        .flatten()
        .collect();
    if globals.is_empty() {
        return Vec::new();
    }
    // A flag parameter off by default that forces the work again
    // (`force_reload=False`): the callers that pass it are rare reloads.
    let off_flag = |e: ExprId| {
        m.name_of(m.strip(e)).is_some_and(|n| {
            f.params.iter().any(|p| {
                p.name == n
                    && p.default
                        .is_some_and(|d| matches!(m.literal(d), Some(Lit::Bool(false))))
            })
        })
    };
    let not_off_flag = |e: ExprId| {
        matches!(&m.expr(m.strip(e)).kind, ExprKind::Unary { op: UnOp::Not, operand }
            if off_flag(*operand))
    };
    // `G is None` / `not G` (unset: `want_unset`), or `G is not None` /
    // `G` (set): the global it tests, also as `G is not None and not
    // force_reload` or `G is None or reload`.
    // With whether the test is of truth (`not G`, `G`) or of `None`.
    let tested = |cond: ExprId, want_unset: bool| -> Option<(&str, bool)> {
        let mut cond = m.strip(cond);
        if let ExprKind::Logical { op, left, right } = &m.expr(cond).kind
            && ((!want_unset && *op == LogicalOp::And && not_off_flag(*right))
                || (want_unset && *op == LogicalOp::Or && off_flag(*right)))
        {
            cond = m.strip(*left);
        }
        let (name, by_truth) = match &m.expr(cond).kind {
            ExprKind::Binary { op, left, right }
                if matches!(m.literal(*right), Some(Lit::Null))
                    && ((*op == BinOp::Is) == want_unset)
                    && matches!(op, BinOp::Is | BinOp::IsNot) =>
            {
                (m.name_of(*left), false)
            }
            ExprKind::Unary {
                op: UnOp::Not,
                operand,
            } if want_unset => (m.name_of(*operand), true),
            ExprKind::Name { .. } if !want_unset => (m.name_of(cond), true),
            _ => (None, false),
        };
        let name = name?;
        globals.contains(&name).then_some((name, by_truth))
    };
    // The block always sets the global (not only when a health check
    // passed, `if candidate.is_healthy(): _client = candidate`, which
    // leaves the next call to try again) and never back to what the test
    // reads as unset (`_busy = True` ... `_busy = False` around a purge:
    // a flag of work in progress, not a value made once).
    let stays_set = |block: &[StmtId], g: &str, by_truth: bool| {
        unsnarl_model::walk::stmts_in_block(m, &block.to_vec())
            .into_iter()
            .filter_map(|st| match &m.stmt(st).kind {
                StmtKind::Assign { targets, value, .. }
                    if targets.iter().any(|&t| m.name_of(t) == Some(g)) =>
                {
                    Some(*value)
                }
                _ => None,
            })
            .all(|v| {
                !v.is_some_and(|v| match m.literal(m.strip(v)) {
                    Some(Lit::Null) => true,
                    Some(Lit::Bool(false) | Lit::Int(0)) => by_truth,
                    Some(Lit::Str(s)) => by_truth && s.is_empty(),
                    _ => false,
                })
            })
            && sets_unconditionally(m, block, g)
    };
    let mut once = Vec::new();
    for (k, &st) in f.body.iter().enumerate() {
        let StmtKind::If { cond, then, orelse } = &m.stmt(st).kind else {
            continue;
        };
        if let Some((g, by_truth)) = tested(*cond, true)
            && stays_set(then, g, by_truth)
            && let (Some(&a), Some(&b)) = (then.first(), then.last())
        {
            once.push(Span::new(m.stmt(a).span.start, m.stmt(b).span.end));
        }
        let returns_it = |g: &str| {
            then.len() == 1
                && orelse.is_empty()
                && match &m.stmt(then[0]).kind {
                    StmtKind::Return(Some(v)) => m.name_of(*v) == Some(g),
                    // `if _conn is not None: return` in a setup function.
                    StmtKind::Return(None) => true,
                    _ => false,
                }
        };
        if let Some((g, by_truth)) = tested(*cond, false)
            && returns_it(g)
            && stays_set(&f.body[k + 1..], g, by_truth)
            && let (Some(&a), Some(&b)) = (f.body.get(k + 1), f.body.last())
        {
            once.push(Span::new(m.stmt(a).span.start, m.stmt(b).span.end));
        }
    }
    once
}

/// The stretches of `f`'s body that run once: the lazy set-up of a
/// singleton ([`runs_once_per_process`]) and the blocks that run until the
/// file they create exists ([`runs_until_it_exists`]).
pub(crate) fn runs_once_spans(m: &FileModel, f: &Function) -> Vec<Span> {
    let mut once = runs_once_per_process(m, f);
    once.extend(runs_until_it_exists(m, f));
    once
}

/// Python: the block of `if not new.exists(): shutil.copy2(old, new)` (or
/// `os.path.exists(new)`) that always creates the path its test reads as
/// missing: a one-time migration or cache fill. Once the file is there,
/// later calls only test for it, like a helper memoized with
/// `functools.cache` after its first call.
fn runs_until_it_exists(m: &FileModel, f: &Function) -> Vec<Span> {
    // The path a test finds missing: `not p.exists()`, `not
    // os.path.exists(p)` (or `isfile`/`isdir`).
    let missing = |e: ExprId| -> Option<String> {
        let ExprKind::Unary {
            op: UnOp::Not,
            operand,
        } = &m.expr(m.strip(e)).kind
        else {
            return None;
        };
        let c = m.call(m.strip(*operand))?;
        if !matches!(
            c.name.as_str(),
            "exists" | "is_file" | "is_dir" | "isfile" | "isdir"
        ) {
            return None;
        }
        let path = match c.target.as_deref() {
            Some("os.path.exists" | "os.path.isfile" | "os.path.isdir") => c.positional(0)?,
            _ if c.args.is_empty() => c.receiver?,
            _ => return None,
        };
        m.dotted(path)
    };
    let creates = |st: StmtId, path: &str| -> bool {
        let StmtKind::Expr(e) = m.stmt(st).kind else {
            return false;
        };
        let Some(c) = m.call(m.strip(e)) else {
            return false;
        };
        let made = match c.target.as_deref() {
            Some(
                "shutil.copy" | "shutil.copy2" | "shutil.copyfile" | "shutil.copytree"
                | "shutil.move" | "os.rename" | "os.replace",
            ) => c.positional(1),
            Some("os.makedirs" | "os.mkdir") => c.positional(0),
            Some("builtins.open") => c.positional(0).filter(|_| {
                crate::shared::blocking::open_mode(m, c).is_some_and(|s| s.starts_with(['w', 'x']))
            }),
            _ if matches!(
                c.name.as_str(),
                "write_text" | "write_bytes" | "touch" | "mkdir"
            ) =>
            {
                c.receiver
            }
            _ => None,
        };
        made.and_then(|x| m.dotted(x)).as_deref() == Some(path)
    };
    // Every `if` at any depth of the body (not in nested functions),
    // without collecting them first: this runs for every function.
    fn each_if(m: &FileModel, block: &[StmtId], visit: &mut dyn FnMut(ExprId, &[StmtId])) {
        for &st in block {
            if let StmtKind::If { cond, then, .. } = &m.stmt(st).kind {
                visit(*cond, then);
            }
            unsnarl_model::walk::for_each_stmt_child(m, st, &mut |child| {
                if let unsnarl_model::walk::Child::Block(b) = child {
                    each_if(m, b, visit);
                }
            });
        }
    }
    let mut once = Vec::new();
    each_if(m, &f.body, &mut |cond, then| {
        if crate::util::any_conjunct(m, cond, &mut |t| {
            missing(t).is_some_and(|p| always_does(m, then, &|s| creates(s, &p)))
        }) && let (Some(&a), Some(&b)) = (then.first(), then.last())
        {
            once.push(Span::new(m.stmt(a).span.start, m.stmt(b).span.end));
        }
    });
    once
}

/// Some statement `does` accepts runs on every path through `block` that
/// ends normally: at its top level, or inside a `with` or a `try` body.
pub(crate) fn always_does(m: &FileModel, block: &[StmtId], does: &dyn Fn(StmtId) -> bool) -> bool {
    block.iter().any(|&st| {
        does(st)
            || match &m.stmt(st).kind {
                StmtKind::With { body, .. }
                | StmtKind::Block(body)
                | StmtKind::Try { body, .. } => always_does(m, body, does),
                _ => false,
            }
    })
}

/// `block` assigns `g` on every path that ends normally: at its top level
/// or inside a `with` or a `try` body, in both arms of an `if`, or under
/// an `if` that tests `g` again (double-checked locking: `with _lock: if
/// not settings: settings = load()`), not only under some other test or
/// in a loop.
fn sets_unconditionally(m: &FileModel, block: &[StmtId], g: &str) -> bool {
    block.iter().any(|&st| match &m.stmt(st).kind {
        StmtKind::Assign { targets, .. } => targets.iter().any(|&t| m.name_of(t) == Some(g)),
        StmtKind::With { body, .. } | StmtKind::Block(body) => sets_unconditionally(m, body, g),
        StmtKind::Try { body, .. } => sets_unconditionally(m, body, g),
        StmtKind::If { cond, then, orelse } => {
            (sets_unconditionally(m, then, g) && sets_unconditionally(m, orelse, g))
                || (unsnarl_model::walk::exprs_under(m, *cond)
                    .into_iter()
                    .any(|x| m.name_of(x) == Some(g))
                    && sets_unconditionally(m, then, g))
        }
        _ => false,
    })
}

/// A receive or send (not `sendto`, which may resolve a host name first)
/// on a socket the file made non-blocking: it returns at once or raises.
fn on_nonblocking_socket(m: &FileModel, c: &Call, nonblocking: &[String]) -> bool {
    !nonblocking.is_empty()
        && crate::shared::blocking::returns_at_once_when_nonblocking(m, c)
        && c.receiver
            .and_then(|r| m.dotted(r))
            .is_some_and(|d| nonblocking.contains(&d))
}

/// A TS union type that admits `undefined`/`null`/`void`.
fn is_optional_union(text: &str) -> bool {
    text.contains('|')
        && text
            .split('|')
            .any(|part| matches!(part.trim(), "undefined" | "null" | "void"))
}

/// A declared return type that is a promise/future/coroutine.
fn is_awaitable_type(t: &TypeRef) -> bool {
    let outer = t.resolved.as_deref().unwrap_or(&t.text);
    let head = outer.split('<').next().unwrap_or("").trim();
    let last = head.rsplit(['.', ':']).next().unwrap_or(head);
    matches!(
        last,
        "Promise"
            | "PromiseLike"
            | "Awaitable"
            | "Coroutine"
            | "Future"
            | "BoxFuture"
            | "LocalBoxFuture"
    ) || t.text.starts_with("impl Future")
        || t.text.contains("dyn Future")
}

/// JS/TS: whether every `return <value>` of a body (not of nested
/// functions) gives a promise. `Some(vec![])`: all of them are promise
/// expressions; `Some(callees)`: the others return calls of these project
/// callees (promises if they are); `None`: some return gives something else,
/// or there is no `return <value>` at all.
fn js_returned_promises(m: &FileModel, kb: &Table, body: &Block) -> Option<Vec<Box<str>>> {
    struct Returns(Vec<ExprId>, bool);
    impl Visitor for Returns {
        fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
            match &m.stmt(id).kind {
                StmtKind::Return(Some(v)) => self.0.push(*v),
                StmtKind::Return(None) => self.1 = true,
                _ => {}
            }
            true
        }
        fn enter_expr(&mut self, _m: &FileModel, _id: ExprId) -> bool {
            false
        }
    }
    let mut r = Returns(Vec::new(), false);
    walk_block(m, body, &mut r);
    if r.0.is_empty() || r.1 {
        return None;
    }
    let mut via = Vec::new();
    for v in r.0 {
        let c = m.call(m.strip(v))?;
        let is_promise = (c.is_new && c.target.as_deref() == Some("Promise"))
            || (c.receiver.is_some()
                && matches!(c.name.as_str(), "then" | "catch" | "finally")
                && !c.args.is_empty())
            || kb
                .find(Effect::AsyncApi, c.target.as_deref(), &c.name)
                .is_some_and(|_| c.target.is_some());
        if is_promise {
            continue;
        }
        via.push(c.target.as_deref()?.into());
    }
    Some(via)
}

/// A promise executor with no way to reject: it takes only `resolve`, or
/// names a `reject` it never uses (`new Promise(function (resolve,
/// reject) { conn.once("close", resolve) })`), in its nested callbacks too.
pub(crate) fn executor_never_rejects(m: &FileModel, f: FuncId) -> bool {
    fn mentions(m: &FileModel, body: &Block, name: &str, depth: u32) -> bool {
        unsnarl_model::walk::exprs_in_block(m, body)
            .into_iter()
            .any(|e| match &m.expr(e).kind {
                ExprKind::Name { id, .. } => id.as_str() == name,
                ExprKind::Closure(g) => depth > 8 || mentions(m, &m.func(*g).body, name, depth + 1),
                _ => false,
            })
    }
    let func = m.func(f);
    match func.params.as_slice() {
        [_] => true,
        [_, reject] => !reject.name.is_empty() && !mentions(m, &func.body, &reject.name, 0),
        _ => false,
    }
}

/// JS/TS, for an async function's body: `None` if the promise it gives
/// may reject (an `await` or `for await` outside any `try` with a `catch`, a
/// `throw` outside one, a `return` handing on another call's promise or a
/// field's); else the project callees awaited outside a `try`, which must not
/// reject either. An awaited chain ending in `.catch(handler)` or
/// `.then(ok, onError)` cannot reject, nor a `new Promise((resolve) =>
/// ..)`. As for [`crate::js`]'s own check of a callee in the same file, a
/// bug that throws synchronously is not counted.
fn js_rejects_via(m: &FileModel, body: &Block) -> Option<Box<[Box<str>]>> {
    struct Guard {
        /// How many `try` bodies with a `catch` enclose the walk.
        in_try: u32,
        via: Vec<Box<str>>,
        rejects: bool,
    }
    impl Guard {
        fn awaited(&mut self, m: &FileModel, e: ExprId) {
            let e = m.strip(e);
            if let Some(name) = m.name_of(e) {
                self.rejects |= !js_local_settles(m, name);
                return;
            }
            let Some(c) = m.call(e) else {
                self.rejects = true;
                return;
            };
            match &c.target {
                _ if js_settles_without_rejecting(m, c) => {}
                Some(t) => self.via.push(t.as_str().into()),
                None => self.rejects = true,
            }
        }
    }
    impl Visitor for Guard {
        fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
            match &m.stmt(id).kind {
                StmtKind::Try {
                    body,
                    handlers,
                    orelse,
                    finally,
                } if !handlers.is_empty() => {
                    self.in_try += 1;
                    walk_block(m, body, self);
                    self.in_try -= 1;
                    for h in handlers {
                        walk_block(m, &h.body, self);
                    }
                    walk_block(m, orelse, self);
                    if let Some(f) = finally {
                        walk_block(m, f, self);
                    }
                    false
                }
                StmtKind::Raise(_) if self.in_try == 0 => {
                    self.rejects = true;
                    false
                }
                StmtKind::For { is_async: true, .. } if self.in_try == 0 => {
                    self.rejects = true;
                    false
                }
                // The promise of another call, or one a field holds, becomes
                // this function's result: its rejection with it, `try` or
                // not; a project callee's only if that callee may reject.
                StmtKind::Return(Some(v)) => {
                    match m.call(m.strip(*v)) {
                        Some(c) => match &c.target {
                            _ if js_settles_without_rejecting(m, c) => {}
                            Some(t) => self.via.push(t.as_str().into()),
                            None => self.rejects = true,
                        },
                        None => {
                            self.rejects |=
                                matches!(m.expr(m.strip(*v)).kind, ExprKind::Attr { .. })
                        }
                    }
                    !self.rejects
                }
                _ => !self.rejects,
            }
        }

        fn enter_expr(&mut self, m: &FileModel, id: ExprId) -> bool {
            if let ExprKind::Await(p) = m.expr(id).kind
                && self.in_try == 0
            {
                self.awaited(m, p);
            }
            !self.rejects
        }
    }
    let mut g = Guard {
        in_try: 0,
        via: Vec::new(),
        rejects: false,
    };
    walk_block(m, body, &mut g);
    (!g.rejects).then(|| g.via.into())
}

/// JS/TS: every value the file assigns to `name` (anywhere: a name
/// shadowed elsewhere only adds values), clearing it aside, is a promise
/// that cannot reject (`p = write(req).catch((e) => reject(e))`), so
/// `await name` cannot reject. `false` when the file assigns it nothing
/// else (a parameter, an import).
pub(crate) fn js_local_settles(m: &FileModel, name: &str) -> bool {
    crate::util::every_assigned_value(
        m,
        |t| m.name_of(t) == Some(name),
        |v| {
            m.call(m.strip(v))
                .is_some_and(|c| js_settles_without_rejecting(m, c))
        },
    )
}

/// JS/TS, for a plain (not async) function's body: the promise it gives
/// cannot reject when every `return` hands back one that cannot (see
/// [`js_settles_without_rejecting`]) or the promise of a project callee that
/// cannot either (`Some(those callees)`). A synchronous `throw` reaches the
/// caller as an exception, not as a rejection, so it does not count. `None`
/// when some `return` gives anything else, or there is none.
fn js_plain_rejects_via(m: &FileModel, body: &Block) -> Option<Box<[Box<str>]>> {
    struct Returns {
        via: Vec<Box<str>>,
        any: bool,
        rejects: bool,
    }
    impl Visitor for Returns {
        fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
            if let StmtKind::Return(v) = &m.stmt(id).kind {
                self.any = true;
                // `return true` on the synchronous path (`tryClose` gives
                // `result.then(() => true, () => false)` or a boolean): a
                // literal is no promise.
                if v.is_some_and(|v| m.literal(v).is_some()) {
                    return true;
                }
                match v.and_then(|v| m.call(m.strip(v))) {
                    Some(c) if js_settles_without_rejecting(m, c) => {}
                    Some(Call {
                        target: Some(t), ..
                    }) => self.via.push(t.as_str().into()),
                    _ => self.rejects = true,
                }
            }
            !self.rejects
        }
        fn enter_expr(&mut self, _m: &FileModel, _id: ExprId) -> bool {
            false
        }
    }
    let mut r = Returns {
        via: Vec::new(),
        any: false,
        rejects: false,
    };
    walk_block(m, body, &mut r);
    (r.any && !r.rejects).then(|| r.via.into())
}

/// JS/TS: a promise this call gives cannot reject: a chain ending in
/// `.catch(handler)` or `.then(ok, onError)`, a `new Promise((resolve) =>
/// ..)` (no `reject` to call), `Promise.allSettled(..)`, or
/// `Promise.resolve(value)` of a value no call gives (a call's result may
/// be a promise that rejects, which `resolve` adopts).
pub(crate) fn js_settles_without_rejecting(m: &FileModel, c: &Call) -> bool {
    match c.target.as_deref() {
        Some("Promise") if c.is_new => c.positional(0).is_some_and(|x| {
            matches!(m.expr(m.strip(x)).kind, ExprKind::Closure(f) if executor_never_rejects(m, f))
        }),
        Some("Promise.allSettled") => true,
        Some("Promise.resolve") => c.args.iter().all(|a| {
            !matches!(
                m.expr(m.strip(a.value)).kind,
                ExprKind::Call(_) | ExprKind::Await(_)
            )
        }),
        _ => {
            c.receiver.is_some()
                && match c.name.as_str() {
                    "catch" => !c.args.is_empty(),
                    "then" => c.args.len() >= 2,
                    _ => false,
                }
        }
    }
}

struct SummaryVisitor<'k> {
    kb: &'k Table,
    names: &'k Names,
    /// Sockets the file switches to non-blocking mode (Python).
    nonblocking: &'k [String],
    /// A Go method's receiver name.
    receiver: Option<&'k str>,
    /// Every blocking call so far works on the receiver's own files.
    on_receiver_files: bool,
    blocking: Option<BlockingSite>,
    calls: Vec<CallSite>,
    /// Python: the stretches of the body a lazy module-level singleton
    /// runs once per process (see [`runs_once_per_process`]): a blocking
    /// call there is not the function's.
    once: Vec<Span>,
    is_async: bool,
    /// `if loop.is_running(): ... else: loop.run_until_complete(coro)` and
    /// its `x if loop.is_running() else ...` form: a bridge on either side
    /// of that test knows whether a loop runs, so it is not a call site
    /// that blocks a running loop.
    loop_tested: Vec<Span>,
    /// `try: asyncio.get_running_loop() ... except RuntimeError: <here>`:
    /// no loop runs on this thread there, so no bridge of any kind (also
    /// `run_coroutine_threadsafe(coro, other).result()`) blocks one. Also
    /// the `else` of `if loop == asyncio.get_running_loop():`, where the
    /// loop waited on is another thread's.
    no_loop: Vec<Span>,
}

/// `loop.run_until_complete(..)` or `asyncio.run(..)`: drives a loop on
/// the calling thread, which a test of `is_running` makes safe. (Waiting
/// on a future another thread's loop fills, `fut.result()` after `if
/// other_loop.is_running():`, still blocks the caller.)
fn runs_the_thread_loop(kb: &Table, c: &Call) -> bool {
    kb.find_for_call(Effect::SyncOverAsync, c)
        .is_some_and(|e| c.name == "run_until_complete" || e.kind.as_deref() == Some("new_loop"))
}

/// The condition asks whether a loop is running (`loop.is_running()`).
fn tests_running_loop(m: &FileModel, cond: ExprId) -> bool {
    unsnarl_model::walk::exprs_under(m, cond)
        .into_iter()
        .any(|x| m.call(x).is_some_and(|c| c.name == "is_running"))
}

impl Visitor for SummaryVisitor<'_> {
    /// `go f(args)`: `f` runs in a goroutine of its own, so what it does is
    /// not this function's (it neither blocks nor calls through it); its
    /// arguments and receiver are still evaluated here.
    fn enter_stmt(&mut self, m: &FileModel, id: StmtId) -> bool {
        if let StmtKind::If { cond, .. } = m.stmt(id).kind
            && tests_running_loop(m, cond)
        {
            self.loop_tested.push(m.stmt(id).span);
        }
        let no_loop = crate::util::no_running_loop_handlers(m, id);
        self.loop_tested.extend(no_loop.iter().copied());
        self.no_loop.extend(no_loop);
        if let Some(b) = crate::util::other_loop_block(m, id)
            && let (Some(&first), Some(&last)) = (b.first(), b.last())
        {
            self.no_loop
                .push(m.stmt(first).span.cover(m.stmt(last).span));
        }
        let StmtKind::Go(e) = m.stmt(id).kind else {
            return true;
        };
        if let Some(c) = m.call(e) {
            for x in c
                .receiver
                .iter()
                .copied()
                .chain(c.args.iter().map(|a| a.value))
            {
                walk_expr(m, x, self);
            }
        }
        false
    }

    fn enter_block(&mut self, m: &FileModel, block: &Block) {
        self.loop_tested
            .extend(crate::util::loop_safe_tails(m, block));
    }

    fn enter_expr(&mut self, m: &FileModel, id: ExprId) -> bool {
        if let ExprKind::Ternary { cond, .. } = m.expr(id).kind
            && tests_running_loop(m, cond)
        {
            self.loop_tested.push(m.expr(id).span);
        }
        let Some(c) = m.call(id) else {
            return true;
        };
        if self.kb.find_for_call(Effect::Offload, c).is_some() {
            // Whatever is passed to an offload API runs elsewhere.
            return false;
        }
        let once = self.once.iter().any(|o| o.contains(m.expr(id).span));
        if let Some(e) = self.kb.find_for_call(Effect::Blocking, c)
            && e.transitive()
            && !once
            && !crate::shared::blocking::waits_for_nothing(m, id, c)
            && !on_nonblocking_socket(m, c, self.nonblocking)
        {
            self.on_receiver_files &= self
                .receiver
                .is_some_and(|r| on_receiver_file(m, c, r, &e.what));
            if self.blocking.is_none() {
                self.blocking = Some(BlockingSite {
                    callee: c.target.clone().unwrap_or_else(|| c.name.clone()).into(),
                    what: self.names.intern(&e.what),
                    fix: self.names.intern(&e.fix),
                    span: m.expr(id).span,
                    on_receiver_files: false,
                });
            }
        }
        // A helper called there waits once too (as for a memoized helper,
        // whose body is not walked at all), unless the function awaits it:
        // a coroutine's calls are how it is found to run alone.
        let at = m.expr(id).span;
        if let Some(t) = &c.target
            && (!once || self.is_async)
            && !(runs_the_thread_loop(self.kb, c)
                && self.loop_tested.iter().any(|g| g.contains(at)))
            && !(self.no_loop.iter().any(|g| g.contains(at))
                && self.kb.find_for_call(Effect::SyncOverAsync, c).is_some())
            && !crate::util::waits_on_dedicated_loop(m, c, at)
        {
            self.calls.push(CallSite {
                target: self.names.intern(t),
                span: m.expr(id).span,
            });
        }
        true
    }
}

/// The file call `c` works on a file of the receiver `recv`: its path is
/// built from the receiver's fields (`os.OpenFile(f.path, ..)`,
/// `filepath.Join(s.dir, name)`), or it is a method of one (`s.idx.Sync()`).
fn on_receiver_file(m: &FileModel, c: &Call, recv: &str, what: &str) -> bool {
    use crate::shared::blocking::{is_field_of, is_file_io};
    let field = |x: ExprId| is_field_of(m, x, recv);
    is_file_io(what)
        && (c.positional(0).is_some_and(|a| {
            unsnarl_model::walk::exprs_under(m, a)
                .into_iter()
                .any(field)
        }) || c.receiver.is_some_and(field))
}

/// One step of a blocking chain: the call made in `from`, at `span`.
#[derive(Clone, Debug)]
pub struct ChainStep {
    pub from: FnRef,
    pub span: Span,
    pub callee: Arc<str>,
}

/// How a sync function ends up blocking: the calls through project helpers,
/// then the blocking call itself.
#[derive(Clone, Debug)]
pub struct BlockingChain {
    /// The calls from the starting function down to the function that blocks.
    pub steps: Vec<ChainStep>,
    /// The function making the blocking call and the call itself.
    pub at: FnRef,
    pub site: BlockingSite,
}

impl BlockingChain {
    /// Each step's (file, function, call span), then the blocking call's,
    /// with files named by `file`: how two indexes compare chains.
    fn places<F>(&self, file: impl Fn(u32) -> F) -> Vec<(F, FuncId, Span)> {
        self.steps
            .iter()
            .map(|s| (file(s.from.file), s.from.func, s.span))
            .chain(std::iter::once((
                file(self.at.file),
                self.at.func,
                self.site.span,
            )))
            .collect()
    }
}

/// Every function of the scan.
#[derive(Debug, Default)]
pub struct ProjectIndex {
    /// Every function: where it is, and its summary's place in `sums`.
    fns: Vec<(FnRef, u32)>,
    /// The summaries, per file as the files gave them (not moved into one
    /// list: that would hold two copies at once on a large project).
    sums: Vec<FileSummaries>,
    /// The file number of `sums[0]`.
    first_file: u32,
    by_qualname: NameTable,
    by_last_segment: NameTable,
    /// Qualified names of two or more segments, keyed by their last two: a
    /// dotted call target can only match a name ending with the same two
    /// segments, so resolving it never scans every function sharing a
    /// common last name (`get`, `run`), which would grow with the square of
    /// the project.
    by_tail2: NameTable,
    /// JS/TS module-level functions keyed by each folder above their
    /// module and their name (`src/utils/promise.wait` under
    /// `src/utils.wait` and `src.wait`): what a barrel import can name
    /// (see [`ProjectIndex::through_barrel`]), found without scanning
    /// every function sharing a common name, which grows with the square
    /// of the project.
    by_barrel: NameTable,
    /// For each function (same order as `fns`), how it blocks if it does:
    /// the first link of its chain (chains share their tails, so a big
    /// project does not hold a copy of every chain below every caller).
    /// Worked out on first use: a one-file index is built for every file,
    /// and most files never ask how a function blocks.
    blocking: OnceLock<Resolved>,
    /// JS/TS functions found to return awaitables across calls (see
    /// [`ProjectIndex::settle_js_awaitables`]), by function number; empty
    /// when none. Kept beside the summaries, not written into them: a
    /// one-file index hands its file's summaries on to the project index,
    /// which must see them as the file gave them.
    settled: Vec<bool>,
    /// JS/TS async functions found not to reject across calls (see
    /// [`ProjectIndex::settle_js_rejections`]), kept like `settled`.
    settled_never_rejects: Vec<bool>,
    /// A one-file index (see [`ProjectIndex::for_one_file`]) records every
    /// target rules resolve through it and what they learned.
    log: Option<Mutex<QueryMap>>,
    /// With the results cache, the project index records what each file's
    /// rules ask it, by asking file, in a form that holds across runs (see
    /// [`ProjectIndex::record_lasting`]).
    lasting: Option<LastingRecorder>,
    /// Python: the modules that are packages (an `__init__.py` of the
    /// scan), so that a name found by suffix inside one of them is not
    /// taken for a top-level module of the same name (see
    /// [`ProjectIndex::build_knowing_packages`]).
    python_packages: HashSet<Box<str>>,
    /// Python: modules that are only ever top-level (see
    /// [`ProjectIndex::build_knowing_packages`]).
    python_top_level: HashSet<Box<str>>,
    /// The path of each file, in index order, when the scan gave them
    /// ([`ProjectIndex::set_file_paths`]).
    file_paths: Vec<Box<str>>,
}

/// What the project index told one file's rules, comparable across runs:
/// functions are named by their file's identity ([`LastingRecorder`]'s
/// ids: path and content) and their id in it, not by the scan's file
/// numbers, which move when files come and go.
pub type LastingLog = HashMap<Box<str>, Vec<(Question, Lasting)>>;

/// An answer of [`LastingLog`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Lasting {
    Unresolved,
    /// The function: its file's identity and its id there (which fix its
    /// summary), and whether it returns an awaitable as settled across
    /// files.
    Function {
        file: u64,
        func: FuncId,
        returns_awaitable: bool,
        never_rejects: bool,
    },
    Awaitable(Option<Awaitable>),
    /// Each step of the chain, then the blocking call: file identity,
    /// function, call span.
    Chain(Option<Vec<(u64, FuncId, Span)>>),
    Alone(bool),
}

/// What the index works out once from every call of every summary.
#[derive(Debug, Default)]
struct Resolved {
    /// How each function blocks (see `ProjectIndex::blocking`).
    blocking: Vec<Option<Link>>,
    /// Every call of an async project function: (callee, caller, index of
    /// the call in the caller's calls), sorted by callee.
    async_calls: Vec<(u32, u32, u32)>,
    /// Functions handed by name to a call that runs them on a new loop,
    /// one entry per hand-over, sorted.
    lone_refs: Vec<u32>,
    /// For each function, whether the project runs it alone on its loop
    /// wherever it runs it ([`ProjectIndex::runs_alone_in_project`]).
    alone: Vec<bool>,
    /// For each function, whether it may leave work running on the loop,
    /// itself or through the project functions it calls.
    starting: Vec<bool>,
}

#[derive(Debug)]
struct LastingRecorder {
    /// Each file's identity, by file number.
    ids: Vec<u64>,
    logs: Mutex<HashMap<u32, LastingLog>>,
}

/// What rules asked a one-file index about each target, and what it told
/// them, while they run (see [`QueryLog`] for the packed form kept).
type QueryMap = HashMap<Box<str>, Vec<(Question, Answer)>>;

/// What rules asked a one-file index about each target, and what it told
/// them: kept for every file from stage 1 to stage 3, so packed into three
/// blocks (the targets' text, where each ends, the answers) rather than a
/// map with a string and a list per target (on the Python corpus the map
/// was a quarter of the scan's heap at its peak; valgrind's massif).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct QueryLog {
    /// Every target asked about, one after another, sorted.
    targets: Box<str>,
    /// Per target: where its text ends in `targets` and where its answers
    /// end in `asked`.
    ends: Box<[(u32, u32)]>,
    asked: Box<[(Question, Answer)]>,
}

impl QueryLog {
    fn pack(map: QueryMap) -> QueryLog {
        let mut entries: Vec<_> = map.into_iter().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut targets = String::with_capacity(entries.iter().map(|(t, _)| t.len()).sum());
        let mut ends = Vec::with_capacity(entries.len());
        let mut asked = Vec::with_capacity(entries.iter().map(|(_, a)| a.len()).sum());
        for (t, a) in entries {
            targets.push_str(&t);
            asked.extend(a);
            ends.push((targets.len() as u32, asked.len() as u32));
        }
        QueryLog {
            targets: targets.into_boxed_str(),
            ends: ends.into_boxed_slice(),
            asked: asked.into_boxed_slice(),
        }
    }

    /// Each target with what was asked about it and answered.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[(Question, Answer)])> {
        let starts = std::iter::once((0, 0)).chain(self.ends.iter().copied());
        starts.zip(self.ends.iter()).map(|((t0, a0), &(t1, a1))| {
            (
                &self.targets[t0 as usize..t1 as usize],
                &self.asked[a0 as usize..a1 as usize],
            )
        })
    }

    /// What was asked about `target` and answered.
    pub fn get(&self, target: &str) -> Option<&[(Question, Answer)]> {
        self.iter().find(|(t, _)| *t == target).map(|(_, a)| a)
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

/// The kinds of question rules ask the index about a call target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Question {
    /// Which function it is ([`ProjectIndex::resolve`]): rules may read
    /// anything of its summary.
    Function,
    /// Only whether calling it gives something to await
    /// ([`ProjectIndex::awaitable`]).
    Awaitable,
    /// Only how it blocks ([`ProjectIndex::blocking_chain_of`]).
    Chain,
    /// Whether every run of it starts it alone on its loop
    /// ([`ProjectIndex::runs_alone_elsewhere`]), given whether the asking
    /// file runs it alone itself.
    Alone(bool),
    /// Whether the project runs it alone on its loop wherever it runs it
    /// ([`ProjectIndex::runs_alone_in_project`]).
    AloneInProject,
    /// Whether the project starts it alone on its loop wherever it runs it
    /// ([`ProjectIndex::starts_alone_in_project`]).
    AloneAtStart,
}

/// An answer in a form two indexes can be compared by. Functions are named
/// by their id in the asking file; a function of another file is
/// `Elsewhere` (a one-file index never gives that answer, so it never
/// agrees with the project index about another file's function).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Answer {
    Unresolved,
    Elsewhere,
    Own {
        func: FuncId,
        returns_awaitable: bool,
        never_rejects: bool,
        chain: Option<ChainKey>,
    },
    Awaitable(Option<Awaitable>),
    Chain(Option<ChainKey>),
    Alone(bool),
}

/// Why calling a project function gives something to await.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Awaitable {
    /// `async def`, `async function`, `async fn`.
    Async,
    /// Declared or found to return a promise/future.
    Returns,
}

/// A blocking chain by place: (file, or `None` for the asking file;
/// function; call span) for each step, then for the blocking call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainKey(Vec<(Option<u32>, FuncId, Span)>);

impl ChainKey {
    fn of(c: &BlockingChain, own: u32) -> ChainKey {
        ChainKey(c.places(|f| (f != own).then_some(f)))
    }

    fn is_local(&self) -> bool {
        self.0.iter().all(|(f, _, _)| f.is_none())
    }
}

/// One link of a blocking chain: the function blocks by the call
/// `calls[call]` to function `next`, or directly (`next == DIRECT`).
#[derive(Clone, Copy, Debug)]
struct Link {
    next: u32,
    call: u32,
}

const DIRECT: u32 = u32::MAX;

/// One file's resolved callees (see [`ProjectIndex::resolve_callees`]):
/// the sync ones as (callee, index of the call) with where each function's
/// list starts; the async ones as (callee, caller, index of the call); and
/// the functions its lone runs hand over by name.
struct FileCallees {
    callees: Vec<(u32, u32)>,
    start: Vec<u32>,
    /// Boxed, and `None` when both are empty (every file but some Python
    /// ones): the list of every file's callees is held at once.
    lone: Option<Box<FileLoneCalls>>,
}

/// One file's calls of Python coroutines as (callee, caller, index of the
/// call), and the functions it hands by name to a new loop.
type FileLoneCalls = (Vec<(u32, u32, u32)>, Vec<u32>);

/// Function ids by the hash of a name, sorted by hash then id: one
/// allocation for the whole table and no copy of any name. A lookup gives
/// every function whose name has that hash; callers compare the names.
#[derive(Debug, Default)]
struct NameTable {
    entries: Vec<(u32, u32)>,
    /// Where each bucket of entries starts, a bucket being the entries whose
    /// hashes share their top bits (about one entry per bucket), and then
    /// the end: a lookup searches one bucket instead of the whole table, a
    /// dozen dependent reads fewer on a large project.
    buckets: Vec<u32>,
    /// Hash bits below the bucket's (32 when there is a single bucket).
    shift: u32,
}

impl NameTable {
    fn push(&mut self, name: &str, id: u32) {
        self.entries.push((short_hash(name), id));
    }

    fn seal(&mut self) {
        self.entries.par_sort_unstable();
        let bits = usize::BITS - self.entries.len().leading_zeros();
        self.shift = 32 - bits.min(16);
        let count = self.bucket(u32::MAX) + 1;
        self.buckets = Vec::with_capacity(count + 1);
        let mut at = 0;
        for b in 0..count {
            while at < self.entries.len() && self.bucket(self.entries[at].0) < b {
                at += 1;
            }
            self.buckets.push(at as u32);
        }
        self.buckets.push(self.entries.len() as u32);
    }

    fn bucket(&self, hash: u32) -> usize {
        (u64::from(hash) >> self.shift) as usize
    }

    /// Candidates, in id order.
    fn get(&self, name: &str) -> impl Iterator<Item = u32> + '_ {
        self.get_in(name, 0..u32::MAX)
    }

    /// Candidates whose id is in `ids` (one file's functions), found by
    /// binary search within the hash's bucket: entries of one hash are
    /// sorted by id.
    fn get_in(&self, name: &str, ids: std::ops::Range<u32>) -> impl Iterator<Item = u32> + '_ {
        let h = short_hash(name);
        let b = self.bucket(h);
        let bucket = match (self.buckets.get(b), self.buckets.get(b + 1)) {
            (Some(&from), Some(&to)) => &self.entries[from as usize..to as usize],
            _ => &[],
        };
        let start = bucket.partition_point(|&e| e < (h, ids.start));
        bucket[start..]
            .iter()
            .take_while(move |&&(x, i)| x == h && i < ids.end)
            .map(|&(_, i)| i)
    }
}

/// 32 bits are enough to find candidates (they are compared anyway) and
/// halve the tables.
fn short_hash(name: &str) -> u32 {
    (name_hash(name) >> 32) as u32
}

pub(crate) fn name_hash(name: &str) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(name)
}

/// Longest helper chain followed; deeper chains are not reported.
const MAX_CHAIN: usize = 8;

impl ProjectIndex {
    /// Builds the index from the summaries of every file (in file order:
    /// file numbers are positions in `files`).
    pub fn build(files: Vec<FileSummaries>) -> ProjectIndex {
        ProjectIndex::build_knowing_packages(files, HashSet::default(), HashSet::default())
    }

    /// [`ProjectIndex::build`], told which Python modules of the scan are
    /// packages (`pkg.config` for `pkg/config/__init__.py`). Python finds
    /// `import dotenv` on its path: the project's `pkg/config/dotenv.py`
    /// is `pkg.config.dotenv`, never `dotenv`, except to a file of that
    /// package run as a script (its folder is first on the path). Without
    /// the packages, a suffix match cannot tell that module from a
    /// package root seen from a folder above it (`src.pkg.mod` for
    /// `pkg.mod`).
    ///
    /// `python_top_level`: modules only ever imported top-level, in a
    /// folder whose name is not an identifier (`scx-code-agent/config.py`):
    /// `kubernetes.config.load_config` is never that `config.py`'s.
    pub fn build_knowing_packages(
        files: Vec<FileSummaries>,
        python_packages: HashSet<Box<str>>,
        python_top_level: HashSet<Box<str>>,
    ) -> ProjectIndex {
        let mut ix = ProjectIndex::build_from(0, files);
        ix.python_packages = python_packages;
        ix.python_top_level = python_top_level;
        // Every file's stage 3 asks how functions block, so it is worked out
        // now, in parallel, rather than by the first file to ask (a one-file
        // index leaves it until a rule asks).
        ix.blocking();
        ix
    }

    /// An index of one file's functions, numbered as file `file`, that
    /// records what rules ask it. Rules run against it before the project
    /// index exists; their findings stand if the project index gives the
    /// same [`Answer`] to every recorded target ([`ProjectIndex::answer`]).
    pub fn for_one_file(file: u32, sums: FileSummaries) -> ProjectIndex {
        let mut ix = ProjectIndex::build_from(file, vec![sums]);
        ix.log = Some(Mutex::new(QueryMap::default()));
        ix
    }

    /// What a one-file index was asked (empty for the project index), and
    /// the summaries it was built from, unchanged (for the project index).
    pub fn into_queries(self) -> (QueryLog, FileSummaries) {
        let log = self
            .log
            .map(|l| QueryLog::pack(l.into_inner().unwrap_or_else(|e| e.into_inner())))
            .unwrap_or_default();
        (log, self.sums.into_iter().next().unwrap_or_default())
    }

    /// Makes the index record, for each asking file, what its rules ask
    /// and learn, as a [`LastingLog`]: `ids` holds each file's identity by
    /// file number (equal ids must mean equal summaries: the file's path
    /// and content hash).
    pub fn record_lasting(&mut self, ids: Vec<u64>) {
        self.lasting = Some(LastingRecorder {
            ids,
            logs: Mutex::new(HashMap::default()),
        });
    }

    /// What file `file`'s rules asked since [`ProjectIndex::record_lasting`].
    pub fn take_lasting(&self, file: u32) -> LastingLog {
        self.lasting
            .as_ref()
            .and_then(|r| {
                r.logs
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&file)
            })
            .unwrap_or_default()
    }

    /// Whether this index gives every question of a [`LastingLog`], asked
    /// from file `own`, the answer recorded (false without
    /// [`ProjectIndex::record_lasting`]): then the rules of a file whose
    /// content did not change find what they found when it was recorded.
    pub fn confirms_lasting(&self, log: &LastingLog, lang: Language, own: u32) -> bool {
        let Some(r) = &self.lasting else {
            return false;
        };
        log.iter().all(|(target, asked)| {
            let found = self.resolve_quietly(lang, target, own);
            asked
                .iter()
                .all(|(q, answer)| self.lasting_answer(&r.ids, *q, found) == *answer)
        })
    }

    fn lasting_answer(&self, ids: &[u64], question: Question, found: Option<usize>) -> Lasting {
        let id = |file: u32| ids.get(file as usize).copied().unwrap_or(u64::MAX);
        match question {
            Question::Function => match found {
                None => Lasting::Unresolved,
                Some(i) => Lasting::Function {
                    file: id(self.fns[i].0.file),
                    func: self.fns[i].0.func,
                    returns_awaitable: self.sum(i).returns_awaitable,
                    never_rejects: self.sum(i).never_rejects,
                },
            },
            Question::Awaitable => Lasting::Awaitable(found.and_then(|i| self.awaitable_at(i))),
            Question::Chain => Lasting::Chain(
                found
                    .and_then(|i| self.blocking_chain(i))
                    .map(|c| c.places(id)),
            ),
            Question::Alone(here) => {
                Lasting::Alone(found.is_some_and(|i| self.alone_everywhere(i, here)))
            }
            Question::AloneInProject => Lasting::Alone(found.is_some_and(|i| self.alone_at(i))),
            Question::AloneAtStart => Lasting::Alone(found.is_some_and(|i| self.alone_at_start(i))),
        }
    }

    /// Whether this index gives every question of a one-file index's log,
    /// asked from file `own`, the answer that index gave.
    pub fn confirms(&self, log: &QueryLog, lang: Language, own: u32) -> bool {
        log.iter().all(|(target, asked)| {
            let found = self.resolve_quietly(lang, target, own);
            asked
                .iter()
                .all(|(q, answer)| self.answer(*q, found, own) == *answer)
        })
    }

    /// The answer to `question` given that the target resolved to `found`,
    /// for a call made in file `own`.
    fn answer(&self, question: Question, found: Option<usize>, own: u32) -> Answer {
        match question {
            Question::Awaitable => Answer::Awaitable(found.and_then(|i| self.awaitable_at(i))),
            Question::Chain => Answer::Chain(
                found
                    .and_then(|i| self.blocking_chain(i))
                    .map(|c| ChainKey::of(&c, own)),
            ),
            Question::Alone(here) => {
                Answer::Alone(found.is_some_and(|i| self.alone_everywhere(i, here)))
            }
            Question::AloneInProject => Answer::Alone(found.is_some_and(|i| self.alone_at(i))),
            Question::AloneAtStart => Answer::Alone(found.is_some_and(|i| self.alone_at_start(i))),
            Question::Function => {
                let Some(i) = found else {
                    return Answer::Unresolved;
                };
                let at = self.fns[i].0;
                if at.file != own {
                    return Answer::Elsewhere;
                }
                let chain = self.blocking_chain(i).map(|c| ChainKey::of(&c, own));
                if chain.as_ref().is_some_and(|c| !c.is_local()) {
                    return Answer::Elsewhere;
                }
                Answer::Own {
                    func: at.func,
                    returns_awaitable: self.sum(i).returns_awaitable,
                    never_rejects: self.sum(i).never_rejects,
                    chain,
                }
            }
        }
    }

    /// Whether calling the project function `target` names gives something
    /// to await. For rules that need nothing else of the function: a file
    /// whose targets all say `None` needs no other file's functions.
    pub fn awaitable(&self, lang: Language, target: &str, from: usize) -> Option<Awaitable> {
        let found = self.resolve_quietly(lang, target, from as u32);
        self.record(Question::Awaitable, target, found, from);
        self.awaitable_at(found?)
    }

    fn awaitable_at(&self, i: usize) -> Option<Awaitable> {
        self.sum(i).awaitable()
    }

    /// How the project function `target` names blocks, if it does (see
    /// [`ProjectIndex::awaitable`] for why this is a question of its own).
    pub fn blocking_chain_of(
        &self,
        lang: Language,
        target: &str,
        from: usize,
    ) -> Option<BlockingChain> {
        let found = self.resolve_quietly(lang, target, from as u32);
        self.record(Question::Chain, target, found, from);
        self.blocking_chain(found?)
    }

    /// Whether every run of the coroutine `target` (a function of the
    /// asking file `from`, by its qualified name) starts it alone on a loop:
    /// every call of it in the other files does (see
    /// [`FileSummaries::set_lone_runs`]), and some run does, there or, when
    /// `lone_here`, in the asking file (whose own calls the rule reads
    /// itself). Calls the index cannot resolve (a method on a receiver of
    /// unknown type, a function handed on by value) are not seen.
    pub fn runs_alone_elsewhere(
        &self,
        lang: Language,
        target: &str,
        from: usize,
        lone_here: bool,
    ) -> bool {
        let found = self.resolve_quietly(lang, target, from as u32);
        self.record(Question::Alone(lone_here), target, found, from);
        found.is_some_and(|i| self.alone_everywhere(i, lone_here))
    }

    /// Whether the coroutine `target` names runs alone on its loop in every
    /// run the project shows, however far from it: each of its calls starts
    /// a new loop for it, or is awaited by a coroutine that runs alone in
    /// the same sense and starts nothing that could run beside it; no call
    /// of a receiver of unknown type, no value handed on and no decorator
    /// of the project may run it another way; and some run exists. A
    /// method counts too (`asyncio.run(kernel.run(q))` in a command, the
    /// kernel awaiting its own steps and a registry's `execute`).
    pub fn runs_alone_in_project(&self, lang: Language, target: &str, from: usize) -> bool {
        let found = self.resolve_quietly(lang, target, from as u32);
        self.record(Question::AloneInProject, target, found, from);
        found.is_some_and(|i| self.alone_at(i))
    }

    /// Whether the coroutine `target` names is alone on its loop when it
    /// starts, in every run the project shows: as for
    /// [`ProjectIndex::runs_alone_in_project`], but what the coroutine
    /// itself starts later does not count (a daemon's `start` reads its pid
    /// file, then spawns its server).
    pub fn starts_alone_in_project(&self, lang: Language, target: &str, from: usize) -> bool {
        let found = self.resolve_quietly(lang, target, from as u32);
        self.record(Question::AloneAtStart, target, found, from);
        found.is_some_and(|i| self.alone_at_start(i))
    }

    fn alone_at(&self, i: usize) -> bool {
        self.alone_at_start(i) && !self.resolved().starting.get(i).copied().unwrap_or(true)
    }

    fn alone_at_start(&self, i: usize) -> bool {
        self.resolved().alone.get(i).copied().unwrap_or(false)
    }

    fn alone_everywhere(&self, i: usize, lone_here: bool) -> bool {
        let resolved = self.resolved();
        let own = self.file_of(i);
        // Handed on by value in another file of its package (`tools=[
        // search]`): it may run anywhere. (By name only: a same-named value
        // there counts too.)
        let qualname = self.sum(i).qualname;
        let name = short_hash(last_segment(qualname, Language::Python));
        // (Only module functions are asked about: the module is the
        // qualified name but its last segment.)
        let package = package_of(qualname.rsplit_once('.').map_or("", |(m, _)| m));
        let handed_on = self
            .sums
            .iter()
            .enumerate()
            .any(|(n, f)| self.first_file + n as u32 != own && f.hands_on(package, name));
        if handed_on {
            return false;
        }
        let from = resolved
            .async_calls
            .partition_point(|&(c, _, _)| (c as usize) < i);
        let mut lone = lone_here;
        for &(callee, caller, k) in &resolved.async_calls[from..] {
            if callee as usize != i {
                break;
            }
            let caller = caller as usize;
            let file = self.file_of(caller);
            if file == own {
                continue;
            }
            let span = self.sum(caller).calls[k as usize].span;
            if !self.sums[(file - self.first_file) as usize].runs_alone_at(span) {
                return false;
            }
            lone = true;
        }
        let refs = &resolved.lone_refs;
        lone || refs.binary_search(&(i as u32)).is_ok()
    }

    /// Notes a question (about `target`, which resolved to `found`, asked
    /// from file `from`) with its answer: in a one-file index's log, and in
    /// the asking file's [`LastingLog`] when the project index keeps them.
    fn record(&self, question: Question, target: &str, found: Option<usize>, from: usize) {
        if let Some(r) = &self.lasting {
            let mut logs = r.logs.lock().unwrap_or_else(|e| e.into_inner());
            let log = logs.entry(from as u32).or_default();
            let asked = match log.get_mut(target) {
                Some(asked) => asked,
                None => log.entry(target.into()).or_default(),
            };
            if !asked.iter().any(|(q, _)| *q == question) {
                asked.push((question, self.lasting_answer(&r.ids, question, found)));
            }
        }
        let Some(log) = &self.log else { return };
        let mut log = log.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(asked) = log.get(target)
            && asked.iter().any(|(q, _)| *q == question)
        {
            return;
        }
        let answer = self.answer(question, found, from as u32);
        log.entry(target.into())
            .or_default()
            .push((question, answer));
    }

    fn build_from(first_file: u32, files: Vec<FileSummaries>) -> ProjectIndex {
        let mut ix = ProjectIndex {
            first_file,
            ..ProjectIndex::default()
        };
        for (n, sums) in files.into_iter().enumerate() {
            let file = first_file + n as u32;
            for (k, s) in sums.iter().enumerate() {
                let i = ix.fns.len() as u32;
                ix.by_qualname.push(s.qualname, i);
                ix.by_last_segment.push(last_segment(s.qualname, s.lang), i);
                if let Some(tail) = tail2(s.qualname) {
                    ix.by_tail2.push(tail, i);
                }
                if s.lang.is_js_family() {
                    for key in barrel_keys(s.qualname) {
                        ix.by_barrel.push(&key, i);
                    }
                }
                ix.fns.push((FnRef { file, func: s.func }, k as u32));
            }
            ix.sums.push(sums);
        }
        ix.by_qualname.seal();
        ix.by_last_segment.seal();
        ix.by_tail2.seal();
        ix.by_barrel.seal();
        ix.settle_js_awaitables();
        ix.settle_js_rejections();
        ix
    }

    /// JS/TS: an async function that catches everything but what it awaits
    /// of project callees cannot reject when none of those can (settled to a
    /// fixpoint; a cycle settles nothing).
    fn settle_js_rejections(&mut self) {
        // Most scans (every Python, Go or Rust file's own index) have
        // nothing to settle: look at the packed flags before any summary.
        if !self.sums.iter().any(FileSummaries::has_rejects_via) {
            return;
        }
        let pending: Vec<usize> = (0..self.fns.len())
            .filter(|&i| {
                let s = self.sum(i);
                !s.never_rejects && s.rejects_via.is_some_and(|v| !v.is_empty())
            })
            .collect();
        self.settle_through_calls(
            &pending,
            |s| s.never_rejects,
            |s| s.rejects_via.unwrap_or_default(),
            Self::set_never_rejects,
        );
    }

    fn set_never_rejects(&mut self, i: usize) {
        if self.settled_never_rejects.is_empty() {
            self.settled_never_rejects = vec![false; self.fns.len()];
        }
        self.settled_never_rejects[i] = true;
    }

    /// Settles a fact across calls, to a fixpoint: a function of `pending`
    /// gets it (`set`) once every target its summary lists (`via`) resolves
    /// to another function that has it (`has`). Each pass settles at least
    /// one more function or stops; a cycle settles nothing.
    fn settle_through_calls(
        &mut self,
        pending: &[usize],
        has: fn(&Summary<'_>) -> bool,
        via: for<'s> fn(&Summary<'s>) -> &'s [Box<str>],
        set: fn(&mut ProjectIndex, usize),
    ) {
        for _ in 0..=pending.len().min(MAX_CHAIN * 4) {
            let mut changed = false;
            for &i in pending {
                let s = self.sum(i);
                if has(&s) {
                    continue;
                }
                let all = via(&s).iter().all(|t| {
                    self.resolve_quietly(s.lang, t, self.file_of(i))
                        .is_some_and(|j| j != i && has(&self.sum(j)))
                });
                if all {
                    set(self, i);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// JS/TS: a function returning what awaitable project functions return is
    /// awaitable too (settled to a fixpoint); and a declaration (`.d.ts`)
    /// that says a function returns a promise speaks for its implementation.
    fn settle_js_awaitables(&mut self) {
        let mut by_name: HashSet<Box<str>> = HashSet::default();
        for s in self.sums.iter().flat_map(FileSummaries::iter) {
            if s.lang.is_js_family() && s.returns_awaitable {
                by_name.insert(s.qualname.into());
            }
        }
        for i in 0..self.fns.len() {
            let s = self.sum(i);
            if s.lang.is_js_family() && !s.returns_awaitable && by_name.contains(s.qualname) {
                self.set_returns_awaitable(i);
            }
        }
        let pending: Vec<usize> = (0..self.fns.len())
            .filter(|&i| {
                let s = self.sum(i);
                s.lang.is_js_family() && !s.returns_awaitable && !s.returns_via.is_empty()
            })
            .collect();
        self.settle_through_calls(
            &pending,
            |s| s.returns_awaitable,
            |s| s.returns_via,
            Self::set_returns_awaitable,
        );
    }

    /// The function a call target refers to, if it is in the project, for a
    /// call made in file `from`. An exact qualified name wins (the calling
    /// file's own function first); otherwise a unique function whose name
    /// ends with the target, or whose name the target ends with, at a segment
    /// boundary (module names differ by the package root they are seen
    /// from); when several do, the calling file's own one if it has exactly
    /// one.
    pub fn resolve(&self, lang: Language, target: &str, from: usize) -> Option<usize> {
        let found = self.resolve_quietly(lang, target, from as u32);
        self.record(Question::Function, target, found, from);
        found
    }

    fn file_of(&self, i: usize) -> u32 {
        self.fns[i].0.file
    }

    /// Tells the index the path of each file (in index order), so that of
    /// two functions with one name the one nearer the caller answers.
    pub fn set_file_paths(&mut self, paths: Vec<Box<str>>) {
        self.file_paths = paths;
    }

    /// Of functions `a` and `b`, the one whose file shares more leading
    /// folders with file `from`; `a` when they share as many, or when the
    /// paths are not known.
    fn nearer(&self, from: u32, a: usize, b: usize) -> usize {
        let path = |f: u32| {
            self.file_paths
                .get(f.checked_sub(self.first_file)? as usize)
                .map(|p| &**p)
        };
        let shared = |f: u32| -> Option<usize> {
            let (x, y) = (path(from)?, path(f)?);
            Some(
                x.split('/')
                    .zip(y.split('/'))
                    .take_while(|(p, q)| p == q)
                    .count(),
            )
        };
        match (shared(self.file_of(a)), shared(self.file_of(b))) {
            (Some(sa), Some(sb)) if sb > sa => b,
            _ => a,
        }
    }

    fn resolve_quietly(&self, lang: Language, target: &str, from: u32) -> Option<usize> {
        // A function nested in another answers only its own file.
        let same_family = |i: u32| {
            let s = self.sum(i as usize);
            family(s.lang) == family(lang) && (!s.hidden || self.file_of(i as usize) == from)
        };
        let mut exact: Option<usize> = None;
        for i in self.by_qualname.get(target) {
            if same_family(i) && self.sum(i as usize).qualname == target {
                if self.file_of(i as usize) == from {
                    return Some(i as usize);
                }
                // The module itself over its declaration file; of two
                // bodies, the first.
                // Of two bodies in different files (two services of a
                // monorepo, each with its own `gateway/status.py`), the one
                // nearer the calling file.
                exact = Some(exact.map_or(i as usize, |e| {
                    self.twin(e as u32, i)
                        .map_or_else(|| self.nearer(from, e, i as usize), |t| t as usize)
                }));
            }
        }
        if exact.is_some() {
            return exact;
        }
        // `itertools.count` through `import itertools` is the standard
        // module's, even when the project has an `anyio/itertools.py` with
        // a `count` (which Python names `anyio.itertools.count`).
        let head = target.split(['.', ':', '/']).next().unwrap_or(target);
        if unsnarl_model::knowledge::is_standard_module(lang, head) {
            return None;
        }
        // A bare name is never a project function that happens to share
        // it. Go's front end names every package-level function with its
        // package path, so a bare name is a builtin (`close`, `len`); JS/TS
        // names the project's modules by their paths and a package import
        // by its bare specifier (`pump` for `require('pump')`, which had
        // matched a helper nested in some bundled file).
        if (lang == Language::Go || lang.is_js_family()) && tail2(target).is_none() {
            return None;
        }
        // JS/TS: a name with no folder in it (`xlsx.read` for `import * as
        // xlsx from "xlsx"`), or a scoped package's (`@scope/pkg.fn`), is a
        // package import: the project's modules are named by their paths,
        // and a root-level `xlsx.js` of its own has matched exactly above.
        // It is not `lib/xlsx/xlsx.read` of some other package; at most the
        // re-export of a root-level folder of the project (`./utils` seen
        // from the root: `utils/promise.wait` for `utils.wait`).
        if lang.is_js_family() && target.starts_with('@') {
            return None;
        }
        if lang.is_js_family() && !target.contains('/') {
            return self.through_barrel(lang, target);
        }
        // `requests.Session.close` names the library's method even when the
        // project has a `web/requests.py` with a `Session` of its own. The
        // project answers for it only when it is that library: the function
        // is in a top-level `requests` package, or the calling file is
        // inside the same package (`src/requests/..` in a src layout).
        let library =
            target.contains('.') && unsnarl_model::knowledge::is_library_module(lang, head);
        let in_library = |q: &str| {
            let Some(end) = package_named(q, head) else {
                return false;
            };
            end == head.len() || self.file_inside(from, &q[..end])
        };
        let last = last_segment(target, lang);
        // Python: a function of a top-level `__init__.py` (or of a stub
        // package's, `aioamqp-stubs/__init__.pyi`) has no module in its
        // name (`connect`); only a bare call of the same name can mean it,
        // never `email_queued.connect` or `PostgresAdapter.from_url`.
        let moduleless = |q: &str| lang == Language::Python && !q.contains('.');
        // Python: `P.dotenv.load_dotenv` for `dotenv.load_dotenv` where `P`
        // is a package answers only a file inside `P`.
        let inside_another_package = |q: &str| {
            if lang != Language::Python {
                return false;
            }
            // `kubernetes.config.load_config` is not the `load_config` of a
            // `config.py` in a folder no import can name.
            if !self.python_top_level.is_empty()
                && suffix_at_boundary(target, q)
                && self
                    .python_top_level
                    .contains(q.split('.').next().unwrap_or(q))
            {
                return true;
            }
            if self.python_packages.is_empty() {
                return false;
            }
            // The other way round: `asset_mcp.config.load_config` names the
            // scan's package `asset_mcp.config` (re-exporting it from a
            // module of its own), never a top-level `config.py`.
            if suffix_at_boundary(target, q) {
                let outer = &target[..target.len() - q.len() - 1];
                let head = q.split('.').next().unwrap_or(q);
                return self.python_packages.contains(&*format!("{outer}.{head}"));
            }
            if !suffix_at_boundary(q, target) {
                return false;
            }
            let outer = &q[..q.len() - target.len() - 1];
            self.python_packages.contains(outer) && !self.file_inside(from, outer)
        };
        let dotted = target.contains('.');
        let matches = |i: u32| {
            let s = self.sum(i as usize);
            same_family(i)
                && !(dotted && moduleless(s.qualname))
                && (!library || in_library(s.qualname))
                && ends_with_segment(s.qualname, last, s.lang)
                && (suffix_at_boundary(s.qualname, target)
                    || suffix_at_boundary(target, s.qualname))
                && !inside_another_package(s.qualname)
        };
        let unique = |candidates: &mut dyn Iterator<Item = u32>| -> Result<Option<u32>, ()> {
            let mut found = None;
            for i in candidates.filter(|&i| matches(i)) {
                found = match found {
                    Some(f) if f != i => Some(self.twin(f, i).ok_or(())?), // else ambiguous
                    _ => Some(i),
                };
            }
            Ok(found)
        };
        // The one function among those in `ids` that fits, if exactly one.
        let unique_in = |ids: std::ops::Range<u32>| match tail2(target) {
            // A single name: every function ending with it matches.
            None => unique(&mut self.by_last_segment.get_in(last, ids)),
            // A dotted name: a longer name ends with the same two segments;
            // a shorter one is a single segment, its whole name.
            Some(tail) => unique(
                &mut self
                    .by_tail2
                    .get_in(tail, ids.clone())
                    .chain(self.by_qualname.get_in(last_fine_segment(target), ids)),
            ),
        };
        match unique_in(0..u32::MAX) {
            Ok(None) if lang.is_js_family() => self.through_barrel(lang, target),
            Ok(found) => found.map(|i| i as usize),
            // Several: the calling file's own, if it has exactly one.
            Err(()) => {
                let mine = self.file_fns(from);
                unique_in(mine.start as u32..mine.end as u32)
                    .ok()
                    .flatten()
                    .map(|i| i as usize)
            }
        }
    }

    /// JS/TS: `import { wait } from "./utils"` of a folder whose
    /// `index.ts` re-exports its modules (`export * from "./promise"`): the
    /// one module-level function of that name in a module under the folder
    /// (`src/utils/promise.wait` for `src/utils.wait`), if there is exactly
    /// one. The front end names the folder's index module after the folder.
    fn through_barrel(&self, lang: Language, target: &str) -> Option<usize> {
        let (folder, name) = target.rsplit_once('.')?;
        let prefix = format!("{folder}/");
        let mut found = None;
        for i in self.by_barrel.get(target) {
            let s = self.sum(i as usize);
            let fits = family(s.lang) == family(lang)
                && !s.hidden
                && s.qualname.strip_prefix(&prefix).is_some_and(|rest| {
                    rest.split_once('.')
                        .is_some_and(|(module, n)| n == name && !module.is_empty())
                });
            if fits {
                found = match found {
                    Some(f) if f != i => Some(self.twin(f, i)?),
                    _ => Some(i),
                };
            }
        }
        found.map(|i| i as usize)
    }

    /// Of two functions of the same qualified name, one with a body and one
    /// without (`utils/wait.js` and `utils/wait.d.ts` both define
    /// `utils/wait.wait`), the one with the body: they are one function.
    /// `None` for two different functions.
    fn twin(&self, a: u32, b: u32) -> Option<u32> {
        let (sa, sb) = (self.sum(a as usize), self.sum(b as usize));
        if sa.qualname != sb.qualname {
            return None;
        }
        match (sa.declared_only, sb.declared_only) {
            (true, false) => Some(b),
            (false, true) | (true, true) => Some(a),
            (false, false) => None,
        }
    }

    /// A function of file `file` is named inside the package `prefix`
    /// (`pkg.sub.f` for `pkg.sub`): the file is one of that package's.
    fn file_inside(&self, file: u32, prefix: &str) -> bool {
        self.file_fns(file).any(|k| {
            let mine = self.sum(k).qualname;
            mine.starts_with(prefix) && mine[prefix.len()..].starts_with('.')
        })
    }

    /// The function numbers of file `file` (functions are in file order).
    fn file_fns(&self, file: u32) -> std::ops::Range<usize> {
        self.fns.partition_point(|(r, _)| r.file < file)
            ..self.fns.partition_point(|(r, _)| r.file <= file)
    }

    fn sum(&self, i: usize) -> Summary<'_> {
        let (at, k) = self.fns[i];
        let mut s = self.sums[(at.file - self.first_file) as usize].get(k as usize);
        s.returns_awaitable |= self.settled.get(i).copied().unwrap_or(false);
        s.never_rejects |= self.settled_never_rejects.get(i).copied().unwrap_or(false);
        s
    }

    fn set_returns_awaitable(&mut self, i: usize) {
        if self.settled.is_empty() {
            self.settled = vec![false; self.fns.len()];
        }
        self.settled[i] = true;
    }

    pub fn summary(&self, i: usize) -> Summary<'_> {
        self.sum(i)
    }

    pub fn fn_ref(&self, i: usize) -> FnRef {
        self.fns[i].0
    }

    /// How a project function blocks, directly or through sync helpers.
    pub fn blocking_chain(&self, i: usize) -> Option<BlockingChain> {
        let blocking = self.blocking();
        let mut link = blocking[i]?;
        let mut f = i;
        let mut steps = Vec::new();
        // Links never form a cycle; the bound only guards that.
        while link.next != DIRECT && steps.len() <= self.fns.len() {
            let (from, s) = (&self.fns[f].0, self.sum(f));
            let call = &s.calls[link.call as usize];
            steps.push(ChainStep {
                from: *from,
                span: call.span,
                callee: call.target.clone(),
            });
            f = link.next as usize;
            link = blocking[f]?;
        }
        let (at, s) = (&self.fns[f].0, self.sum(f));
        Some(BlockingChain {
            steps,
            at: *at,
            site: s.blocking?.clone(),
        })
    }

    /// The project functions called by the functions `fns` of one file, as
    /// (callee, index of the call) for sync callees other than the caller,
    /// and where each function's list starts.
    fn resolve_callees(&self, file: u32) -> FileCallees {
        let fns = self.file_fns(file);
        let mut callees = Vec::new();
        let mut async_calls = Vec::new();
        let mut start = Vec::with_capacity(fns.len());
        let lone_refs: Vec<u32> = self.sums[(file - self.first_file) as usize]
            .lone_refs()
            .iter()
            .filter_map(|r| {
                self.resolve_quietly(Language::Python, r, file)
                    .map(|j| j as u32)
            })
            .collect();
        // A file calls the same names over and over (`self.assertEqual`,
        // `log.debug`): each is resolved once.
        let mut resolved: HashMap<&str, Option<usize>> = HashMap::default();
        for i in fns {
            start.push(callees.len() as u32);
            let s = self.sum(i);
            let file = self.file_of(i);
            for (k, c) in s.calls.iter().enumerate() {
                let found = *resolved
                    .entry(&c.target)
                    .or_insert_with(|| self.resolve_quietly(s.lang, &c.target, file));
                match found {
                    Some(j) if j != i && !self.sum(j).is_async => {
                        callees.push((j as u32, k as u32));
                    }
                    // Only Python asks who runs a coroutine.
                    Some(j) if j != i && self.sum(j).lang == Language::Python => {
                        async_calls.push((j as u32, i as u32, k as u32))
                    }
                    _ => {}
                }
            }
        }
        FileCallees {
            callees,
            start,
            lone: (!async_calls.is_empty() || !lone_refs.is_empty())
                .then(|| Box::new((async_calls, lone_refs))),
        }
    }

    /// How each function blocks (see `blocking`), worked out once.
    fn blocking(&self) -> &[Option<Link>] {
        &self.resolved().blocking
    }

    fn resolved(&self) -> &Resolved {
        self.blocking.get_or_init(|| self.compute_blocking())
    }

    /// Resolves, for every sync function, whether it blocks directly or by
    /// calling sync project helpers that do (depth-first, memoized, cycles
    /// cut).
    fn compute_blocking(&self) -> Resolved {
        #[derive(Clone, Copy, PartialEq)]
        enum State {
            Todo,
            Active,
            Done,
        }
        let n = self.fns.len();
        let mut state = vec![State::Todo; n];
        let mut result: Vec<Option<Link>> = vec![None; n];
        // Resolve each function's callees once: (callee, index of the call),
        // function i's in `callees[start[i]..start[i + 1]]` (one list, not
        // one per function: there are hundreds of thousands). Files are
        // resolved in parallel (on the caller's thread pool), then joined.
        let per_file: Vec<FileCallees> = (0..self.sums.len() as u32)
            .into_par_iter()
            .map(|n| self.resolve_callees(self.first_file + n))
            .collect();
        let mut callees: Vec<(u32, u32)> =
            Vec::with_capacity(per_file.iter().map(|f| f.callees.len()).sum());
        let mut start: Vec<u32> = Vec::with_capacity(n + 1);
        let mut async_calls = Vec::new();
        let mut lone_refs = Vec::new();
        for f in per_file {
            let base = callees.len() as u32;
            start.extend(f.start.iter().map(|s| base + s));
            callees.extend(f.callees);
            if let Some(l) = f.lone {
                let (calls, refs) = *l;
                async_calls.extend(calls);
                lone_refs.extend(refs);
            }
        }
        async_calls.sort_unstable();
        lone_refs.sort_unstable();
        start.push(callees.len() as u32);
        let callees_of = |f: usize| &callees[start[f] as usize..start[f + 1] as usize];
        for root in 0..n {
            if state[root] != State::Todo || self.sum(root).is_async {
                continue;
            }
            // Explicit stack: (function, next callee to look at).
            let mut stack = vec![(root, 0usize)];
            state[root] = State::Active;
            while let Some(&(f, cursor)) = stack.last() {
                let depth = stack.len();
                if cursor == 0 && self.sum(f).blocking.is_some() {
                    result[f] = Some(Link {
                        next: DIRECT,
                        call: 0,
                    });
                }
                if result[f].is_some() || cursor >= callees_of(f).len() || depth > MAX_CHAIN {
                    state[f] = State::Done;
                    stack.pop();
                    continue;
                }
                let (g, call) = callees_of(f)[cursor];
                let g = g as usize;
                match state[g] {
                    State::Todo => {
                        // Visit the callee first; this callee is looked at
                        // again (cursor unchanged) once it is done.
                        state[g] = State::Active;
                        stack.push((g, 0));
                        continue;
                    }
                    State::Active => {}
                    State::Done => {
                        if result[g].is_some() {
                            result[f] = Some(Link {
                                next: g as u32,
                                call,
                            });
                        }
                    }
                }
                if let Some(top) = stack.last_mut() {
                    top.1 += 1;
                }
            }
        }
        let starting = self.starting_in_project(n, &callees, &start, &async_calls);
        let alone = self.alone_in_project(&async_calls, &lone_refs, &starting);
        Resolved {
            blocking: result,
            async_calls,
            lone_refs,
            alone,
            starting,
        }
    }

    /// For each function, whether it may leave work running on the loop:
    /// by itself ([`LoneRuns::starting`]), or through a project function
    /// it calls, however deep. Only Python files say; for the others every
    /// entry is `false`.
    fn starting_in_project(
        &self,
        n: usize,
        callees: &[(u32, u32)],
        start: &[u32],
        async_calls: &[(u32, u32, u32)],
    ) -> Vec<bool> {
        let mut starting = vec![false; n];
        let mut work: Vec<usize> = (0..n)
            .filter(|&i| {
                let (at, _) = self.fns[i];
                self.sums[(at.file - self.first_file) as usize].starts_work(at.func)
            })
            .collect();
        if work.is_empty() {
            return starting;
        }
        // (callee, caller) for every call of a project function.
        let mut callers: Vec<(u32, u32)> = async_calls
            .iter()
            .map(|&(callee, caller, _)| (callee, caller))
            .collect();
        for f in 0..n {
            callers.extend(
                callees[start[f] as usize..start[f + 1] as usize]
                    .iter()
                    .map(|&(g, _)| (g, f as u32)),
            );
        }
        callers.sort_unstable();
        while let Some(f) = work.pop() {
            if starting[f] {
                continue;
            }
            starting[f] = true;
            work.extend(paired_with(&callers, f).map(|caller| caller as usize));
        }
        starting
    }

    /// For each function, whether every run of it the project shows leaves
    /// it alone on its loop (see [`ProjectIndex::runs_alone_in_project`]).
    /// The largest set of coroutines each of whose calls is a lone run
    /// ([`FileSummaries::runs_alone_at`]) or an awaited call made by a
    /// member that starts nothing ([`LoneRuns::quiet`]), then only those a
    /// lone run reaches (two coroutines that only await each other run
    /// nowhere).
    fn alone_in_project(
        &self,
        async_calls: &[(u32, u32, u32)],
        lone_refs: &[u32],
        starting: &[bool],
    ) -> Vec<bool> {
        let n = self.fns.len();
        let mut alone = vec![false; n];
        if async_calls.is_empty() && lone_refs.is_empty() {
            return alone;
        }
        // The files calling each method name on receivers of unknown type.
        let mut open: HashMap<u32, Vec<usize>> = HashMap::default();
        for (n, f) in self.sums.iter().enumerate() {
            for &name in f.open_names() {
                open.entry(name).or_default().push(n);
            }
        }
        let handed_on: HashSet<(u32, u32)> = self
            .sums
            .iter()
            .filter_map(|f| f.lone.as_deref())
            .flat_map(|l| l.value_refs.iter().map(|&v| (l.package, v)))
            .collect();
        let candidate = |i: usize| {
            let s = self.sum(i);
            if s.lang != Language::Python || !s.is_async || s.is_generator {
                return false;
            }
            let (at, _) = self.fns[i];
            let name = short_hash(last_segment(s.qualname, Language::Python));
            let package = package_of(s.qualname.rsplit_once('.').map_or("", |(m, _)| m));
            let top = short_hash(s.qualname.split('.').next().unwrap_or(""));
            let called_open = open
                .get(&name)
                .is_some_and(|files| files.iter().any(|&f| self.sums[f].may_call_open(top, name)));
            !called_open
                && !self.sums[(at.file - self.first_file) as usize].registers(at.func)
                && !handed_on.contains(&(package, name))
        };
        let site = |caller: u32, k: u32| {
            let file = self.file_of(caller as usize);
            let span = self.sum(caller as usize).calls[k as usize].span;
            let sums = &self.sums[(file - self.first_file) as usize];
            (sums.entry_at(span), sums.quiet_at(span))
        };
        for &(callee, _, _) in async_calls {
            alone[callee as usize] = candidate(callee as usize);
        }
        for &r in lone_refs {
            alone[r as usize] = candidate(r as usize);
        }
        // Drop every coroutine a call outside the set may run, until none.
        loop {
            let mut changed = false;
            for group in async_calls.chunk_by(|a, b| a.0 == b.0) {
                let callee = group[0].0 as usize;
                if alone[callee]
                    && !group.iter().all(|&(_, caller, k)| {
                        let (root, quiet) = site(caller, k);
                        root || (quiet && alone[caller as usize] && !starting[caller as usize])
                    })
                {
                    alone[callee] = false;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        // Keep those a lone run reaches.
        let mut by_caller: Vec<(u32, u32)> = async_calls
            .iter()
            .map(|&(callee, caller, _)| (caller, callee))
            .collect();
        by_caller.sort_unstable();
        let mut reached = vec![false; n];
        let mut work: Vec<u32> = lone_refs.to_vec();
        work.extend(
            async_calls
                .iter()
                .filter(|&&(_, caller, k)| site(caller, k).0)
                .map(|&(callee, _, _)| callee),
        );
        while let Some(f) = work.pop() {
            let f = f as usize;
            if !alone[f] || reached[f] {
                continue;
            }
            reached[f] = true;
            work.extend(paired_with(&by_caller, f));
        }
        for (a, r) in alone.iter_mut().zip(reached) {
            *a &= r;
        }
        alone
    }
}

/// The second items of the pairs of `sorted` (sorted by their first
/// item) whose first item is `key`: a function's callers, or its callees.
fn paired_with(sorted: &[(u32, u32)], key: usize) -> impl Iterator<Item = u32> + '_ {
    let from = sorted.partition_point(|&(k, _)| (k as usize) < key);
    sorted[from..]
        .iter()
        .take_while(move |&&(k, _)| k as usize == key)
        .map(|&(_, v)| v)
}

/// The end of the first package segment of the dotted name `q` that is
/// `name` and has more segments after it (`cloudoll.web.requests` for
/// `requests` in `cloudoll.web.requests.Session.close`).
fn package_named(q: &str, name: &str) -> Option<usize> {
    let mut at = 0;
    for seg in q.split('.') {
        let end = at + seg.len();
        if seg == name {
            return (end < q.len()).then_some(end);
        }
        at = end + 1;
    }
    None
}

fn family(l: Language) -> Language {
    if l.is_js_family() {
        Language::JavaScript
    } else {
        l
    }
}

fn last_segment(q: &str, lang: Language) -> &str {
    lang.split_last_segment(q).1
}

/// `last_segment(q, lang) == last`, for a `last` without separators,
/// without splitting `q`.
fn ends_with_segment(q: &str, last: &str, lang: Language) -> bool {
    q.strip_suffix(last)
        .is_some_and(|before| before.is_empty() || before.ends_with(lang.path_sep()))
}

/// Where the segment boundaries of a name are, last first: after `.`, `::`
/// or `/`. The separators are ASCII, so a byte scan finds them and every
/// position it gives is a character boundary.
fn boundaries(q: &str) -> impl Iterator<Item = usize> + '_ {
    let b = q.as_bytes();
    (0..b.len())
        .rev()
        .filter(move |&i| match b[i] {
            b'.' | b'/' => true,
            b':' => i > 0 && b[i - 1] == b':',
            _ => false,
        })
        .map(|i| i + 1)
}

/// The last two segments of a name (split at `.`, `::` or `/`), if it has
/// two or more.
fn tail2(q: &str) -> Option<&str> {
    let mut at = boundaries(q);
    at.next()?;
    Some(&q[at.next().unwrap_or(0)..])
}

/// The names a barrel import of a folder above the module of the JS/TS
/// function `qualname` would give it, when it is a module-level function:
/// `a/b.f` and `a.f` for `a/b/c.f`.
fn barrel_keys(qualname: &str) -> impl Iterator<Item = String> + '_ {
    let (path, name) = qualname.rsplit_once('.').unwrap_or(("", ""));
    let module_level = !name.is_empty() && !path.rsplit('/').next().unwrap_or("").contains('.');
    path.char_indices()
        .rev()
        .filter(move |&(_, c)| module_level && c == '/')
        .map(|(at, _)| at)
        .take_while(move |&at| !path[at + 1..].contains('.'))
        .filter(move |&at| at + 1 < path.len())
        .map(move |at| format!("{}.{name}", &path[..at]))
}

/// The last segment of a name, split at any separator.
fn last_fine_segment(q: &str) -> &str {
    &q[boundaries(q).next().unwrap_or(0)..]
}

/// True when `long` ends with `short` and the match starts at a segment
/// boundary (`.`, `::` or `/`).
fn suffix_at_boundary(long: &str, short: &str) -> bool {
    if long.len() <= short.len() || !long.ends_with(short) {
        return false;
    }
    let before = &long[..long.len() - short.len()];
    before.ends_with('.') || before.ends_with("::") || before.ends_with('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A call made in no file of the index.
    const NOWHERE: usize = u32::MAX as usize;

    fn build(files: Vec<Vec<FnSummary>>) -> ProjectIndex {
        ProjectIndex::build(files.into_iter().map(FileSummaries::from_iter).collect())
    }

    #[test]
    fn names_split_at_dots_double_colons_and_slashes() {
        assert_eq!(tail2("a.b.c"), Some("b.c"));
        assert_eq!(tail2("a::b::c"), Some("b::c"));
        assert_eq!(tail2("pkg/x.Y"), Some("x.Y"));
        assert_eq!(tail2("b.c"), Some("b.c"));
        assert_eq!(tail2("c"), None);
        // One colon is not a separator; letters outside ASCII stay whole.
        assert_eq!(tail2("a:b.c"), Some("a:b.c"));
        assert_eq!(tail2("ü.ö.ß"), Some("ö.ß"));
        assert_eq!(last_fine_segment("a::b"), "b");
        assert_eq!(last_fine_segment("ö"), "ö");
        assert_eq!(last_segment("a.b::c", Language::Rust), "c");
        assert_eq!(last_segment("a::b.c", Language::Python), "c");
    }

    /// Bucketed lookups find what a scan of every entry finds, whatever the
    /// table's size (one bucket, a few, or the most buckets there are).
    #[test]
    fn name_table_lookups_agree_with_a_scan_of_every_entry() {
        for size in [0u32, 1, 2, 3, 100, 70_000] {
            let mut t = NameTable::default();
            // Every name twice (a name defined in two files), under two ids.
            for i in 0..size {
                t.push(&format!("mod.f{}", i / 2), i);
            }
            t.seal();
            for probe in (0..size / 2 + 2).step_by(1 + size as usize / 500) {
                let name = format!("mod.f{probe}");
                let h = short_hash(&name);
                let ids = 0..size / 2 + 1;
                let scan = |ids: std::ops::Range<u32>| -> Vec<u32> {
                    let mut v: Vec<u32> = t
                        .entries
                        .iter()
                        .filter(|&&(x, i)| x == h && ids.contains(&i))
                        .map(|&(_, i)| i)
                        .collect();
                    v.sort_unstable();
                    v
                };
                assert_eq!(t.get(&name).collect::<Vec<_>>(), scan(0..u32::MAX));
                assert_eq!(t.get_in(&name, ids.clone()).collect::<Vec<_>>(), scan(ids));
                if probe < size / 2 {
                    assert_eq!(t.get(&name).count(), 2, "{name} in a table of {size}");
                }
            }
        }
    }

    #[test]
    fn packed_summaries_give_back_each_functions_name_and_calls() {
        let packed: FileSummaries = [
            sum("app.first", true, false, &["app.b", "app.c"]),
            sum("app.no_calls", false, true, &[]),
            sum("", false, false, &["app.d"]),
            sum("app.last", false, false, &["app.e"]),
        ]
        .into_iter()
        .collect();
        let got: Vec<(&str, Vec<&str>, bool, bool)> = packed
            .iter()
            .map(|s| {
                let calls = s.calls.iter().map(|c| &*c.target).collect();
                (s.qualname, calls, s.is_async, s.blocking.is_some())
            })
            .collect();
        assert_eq!(
            got,
            [
                ("app.first", vec!["app.b", "app.c"], true, false),
                ("app.no_calls", vec![], false, true),
                ("", vec!["app.d"], false, false),
                ("app.last", vec!["app.e"], false, false),
            ]
        );
    }

    /// A compiled module and its declaration file define the same function
    /// (`dist/utils/wait.js`, `dist/utils/wait.d.ts`): one function, the one
    /// with the body, however the call reaches it (exactly, by suffix, or
    /// through the folder's index); two bodies stay ambiguous.
    #[test]
    fn a_declaration_file_does_not_hide_the_module_it_declares() {
        let declared = |q: &str| FnSummary {
            declared_only: true,
            ..js(q, true, &[])
        };
        let ix = build(vec![
            vec![declared("dist/utils/wait.wait")],
            vec![js("dist/utils/wait.wait", true, &[])],
            vec![
                declared("dist/utils/other.run"),
                declared("dist/utils/other.run"),
            ],
            vec![js("a/x.go", false, &[])],
            vec![js("b/x.go", false, &[])],
        ]);
        let jsl = Language::JavaScript;
        for target in ["dist/utils/wait.wait", "utils/wait.wait", "dist/utils.wait"] {
            assert_eq!(ix.resolve(jsl, target, NOWHERE), Some(1), "{target}");
        }
        assert!(ix.resolve(jsl, "dist/utils.run", NOWHERE).is_some());
        assert_eq!(ix.resolve(jsl, "x.go", NOWHERE), None);
    }

    /// JS/TS: a call through a package import (`xlsx.read`, `@scope/pkg.fn`)
    /// is not a project function whose path ends the same way.
    #[test]
    fn package_imports_resolve_only_exactly() {
        let ix = build(vec![
            vec![js("exceljs/lib/xlsx/xlsx.read", true, &[])],
            vec![js("xlsx.write", true, &[])],
            vec![js("pkgs/scope/pkg.fn", true, &[])],
        ]);
        let jsl = Language::JavaScript;
        assert_eq!(ix.resolve(jsl, "xlsx.read", NOWHERE), None);
        assert_eq!(ix.resolve(jsl, "xlsx.write", NOWHERE), Some(1));
        assert_eq!(ix.resolve(jsl, "@scope/pkg.fn", NOWHERE), None);
        assert_eq!(ix.resolve(jsl, "lib/xlsx/xlsx.read", NOWHERE), Some(0));
        // A root-level folder's re-export still resolves through the folder.
        let barrel = build(vec![vec![js("utils/promise.wait", true, &[])]]);
        assert_eq!(barrel.resolve(jsl, "utils.wait", NOWHERE), Some(0));
    }

    /// A barrel import names a module-level function by any folder above
    /// its module; a method, a nested module with a dot in its name, or a
    /// second function of that name under the folder does not answer.
    #[test]
    fn a_barrel_import_finds_the_one_module_function_under_its_folder() {
        let keys = |q: &str| barrel_keys(q).collect::<Vec<_>>();
        assert_eq!(keys("a/b/c.f"), ["a/b.f", "a.f"]);
        assert_eq!(keys("a.b/c/d.f"), ["a.b/c.f", "a.b.f"]);
        assert!(keys("a/b/c.K.f").is_empty());
        assert!(keys("a/b.min/c.f") == ["a/b.min.f"]);
        assert!(keys("c.f").is_empty());
        let jsl = Language::JavaScript;
        let ix = build(vec![
            vec![js("src/utils/deep/promise.wait", true, &[])],
            vec![js("src/utils/queue.Queue.wait", true, &[])],
            vec![
                js("src/other/a.go", true, &[]),
                js("src/other/b.go", true, &[]),
            ],
        ]);
        assert_eq!(ix.resolve(jsl, "src/utils.wait", NOWHERE), Some(0));
        assert_eq!(ix.resolve(jsl, "src.wait", NOWHERE), Some(0));
        assert_eq!(ix.resolve(jsl, "src/other.go", NOWHERE), None);
        assert_eq!(ix.resolve(jsl, "src/utils.Queue", NOWHERE), None);
    }

    /// A function declared inside another (a bundler's module wrapper names
    /// its helpers from the module: `build/index._`) answers lookups from
    /// its own file only; another file's `build/index._` (an export of a
    /// variable) is not it, exactly or by suffix.
    #[test]
    fn a_nested_function_answers_only_its_own_file() {
        let nested = |q: &str| FnSummary {
            hidden: true,
            is_async: true,
            ..js(q, true, &[])
        };
        let ix = build(vec![
            vec![nested("build/index._")],
            vec![js("build/cli.main", false, &[])],
            vec![js("lib/a.top", true, &[])],
        ]);
        let jsl = Language::JavaScript;
        assert_eq!(ix.resolve(jsl, "build/index._", 0), Some(0));
        assert_eq!(ix.resolve(jsl, "build/index._", 1), None);
        assert_eq!(ix.resolve(jsl, "package/build/index._", 1), None);
        assert_eq!(ix.resolve(jsl, "lib/a.top", 1), Some(2));
    }

    /// A JS function's summary: whether it returns an awaitable, and the
    /// project callees whose results it returns.
    /// A call through an absolute import of a standard module
    /// (`itertools.count`) is not a project function that ends with the
    /// same names (`anyio.itertools.count`); other packages still resolve
    /// by suffix, and an exact name still resolves.
    #[test]
    fn standard_module_calls_resolve_only_to_their_exact_name() {
        let ix = build(vec![vec![
            sum("pkgs.anyio.src.anyio.itertools.count", true, false, &[]),
            sum("itertools.chain", false, false, &[]),
        ]]);
        let py = Language::Python;
        assert_eq!(ix.resolve(py, "itertools.count", NOWHERE), None);
        // From a file of that package (a library the knowledge tables name
        // resolves by suffix only from inside itself).
        assert_eq!(ix.resolve(py, "anyio.itertools.count", 0), Some(0));
        assert_eq!(ix.resolve(py, "itertools.chain", NOWHERE), Some(1));
    }

    /// A call through a library the knowledge tables name
    /// (`requests.Session.close`) is not a project function whose longer
    /// name ends the same way (a `cloudoll/web/requests.py`), unless the
    /// caller is inside that package itself (a src layout of the library).
    #[test]
    fn library_calls_resolve_by_suffix_only_inside_the_library() {
        let ix = build(vec![
            vec![sum("cloudoll.web.requests.Session.close", true, false, &[])],
            vec![sum(
                "bingx_py.http_client.HttpClient.close",
                false,
                false,
                &[],
            )],
            vec![sum("src.redis.client.Redis.close", false, true, &[])],
            vec![sum(
                "src.redis.asyncio.client.Redis.aclose",
                true,
                false,
                &[],
            )],
            vec![sum("tests.test_client.test_close", false, false, &[])],
        ]);
        let py = Language::Python;
        assert_eq!(ix.resolve(py, "requests.Session.close", 1), None);
        assert_eq!(
            ix.resolve(py, "cloudoll.web.requests.Session.close", 1),
            Some(0)
        );
        assert_eq!(ix.resolve(py, "web.requests.Session.close", 1), Some(0));
        assert_eq!(ix.resolve(py, "redis.client.Redis.close", 3), Some(2));
        assert_eq!(ix.resolve(py, "redis.client.Redis.close", 4), None);
    }

    /// Two services of a monorepo each have a `gateway/status.py` (both
    /// `gateway.status`): a call answers to the one of its own service.
    #[test]
    fn of_two_functions_with_one_name_the_nearer_file_answers() {
        let py = Language::Python;
        let mut ix = build(vec![
            vec![sum("gateway.status.read", false, true, &[])],
            vec![sum("gateway.status.read", false, true, &[])],
            vec![sum("main.handler", true, false, &["gateway.status.read"])],
        ]);
        assert_eq!(
            ix.resolve(py, "gateway.status.read", 2),
            Some(0),
            "paths unknown: the first"
        );
        ix.set_file_paths(vec![
            "alpha-svc/gateway/status.py".into(),
            "beta-svc/gateway/status.py".into(),
            "beta-svc/main.py".into(),
        ]);
        assert_eq!(ix.resolve(py, "gateway.status.read", 2), Some(1));
    }

    /// `cloudkit.config.load_config` is the library's (a library the
    /// knowledge does not know), not the `load_config` of a `config.py` in
    /// a folder no import can name
    /// (`scx-code-agent/config.py`, module `config`), which still answers
    /// for `config.load_config`.
    #[test]
    fn a_module_in_an_unimportable_folder_is_only_top_level() {
        let py = Language::Python;
        let build_with = |top_level: &[&str]| {
            ProjectIndex::build_knowing_packages(
                vec![FileSummaries::from_iter([sum(
                    "config.load_config",
                    false,
                    true,
                    &[],
                )])],
                HashSet::default(),
                top_level.iter().map(|m| Box::<str>::from(*m)).collect(),
            )
        };
        let ix = build_with(&["config"]);
        assert_eq!(ix.resolve(py, "cloudkit.config.load_config", 1), None);
        assert_eq!(ix.resolve(py, "config.load_config", 1), Some(0));
        // Without the fact, the suffix answers.
        let unknowing = build_with(&[]);
        assert_eq!(
            unknowing.resolve(py, "cloudkit.config.load_config", 1),
            Some(0)
        );
    }

    /// `from dotenv import load_dotenv` is a top-level module, not the
    /// project's `mcp_strike/config/dotenv.py` (named
    /// `mcp_strike.config.dotenv`, a package's module), except from a file
    /// of that package; a folder that is no package (`src`) is only where
    /// the scan saw the import root from.
    #[test]
    fn a_module_inside_a_package_does_not_answer_for_a_top_level_import() {
        let py = Language::Python;
        // The same files, with and without the packages known (without
        // them, the suffix answers as it did before packages counted).
        let knowing = |names: &[&str], packages: &[&str]| {
            let files = names
                .iter()
                .map(|q| FileSummaries::from_iter([sum(q, false, true, &[])]))
                .collect();
            let packages = packages.iter().map(|p| Box::<str>::from(*p)).collect();
            (
                ProjectIndex::build_knowing_packages(files, packages, HashSet::default()),
                build(
                    names
                        .iter()
                        .map(|q| vec![sum(q, false, true, &[])])
                        .collect(),
                ),
            )
        };
        let (ix, unknowing) = knowing(
            &[
                "mcp_strike.config.dotenv.load_dotenv",
                "mcp_strike.server.main",
                "mcp_strike.config.settings.load",
                "src.shop.orders.place",
                "tests.test_orders.test_place",
            ],
            &["mcp_strike", "mcp_strike.config", "shop"],
        );
        assert_eq!(ix.resolve(py, "dotenv.load_dotenv", 1), None);
        assert_eq!(ix.resolve(py, "dotenv.load_dotenv", 4), None);
        assert_eq!(unknowing.resolve(py, "dotenv.load_dotenv", 1), Some(0));
        assert_eq!(ix.resolve(py, "config.dotenv.load_dotenv", 1), Some(0));
        assert_eq!(
            ix.resolve(py, "mcp_strike.config.dotenv.load_dotenv", 1),
            Some(0)
        );
        // A sibling module, as a script run from that folder finds it.
        assert_eq!(ix.resolve(py, "dotenv.load_dotenv", 2), Some(0));
        // `src` is no package: the import root is below it.
        assert_eq!(ix.resolve(py, "shop.orders.place", 4), Some(3));
        // A longer name into a package of the scan (`shop.orders`, whose
        // `__init__.py` re-exports `place`) is that package's, not a
        // shorter top-level module's elsewhere.
        let (ix, unknowing) = knowing(
            &["orders.place", "shop.api.create", "helpers.util.slugify"],
            &["shop", "shop.orders", "src"],
        );
        assert_eq!(ix.resolve(py, "shop.orders.place", 1), None);
        assert_eq!(unknowing.resolve(py, "shop.orders.place", 1), Some(0));
        assert_eq!(ix.resolve(py, "orders.place", 1), Some(0));
        // `src` is a package somewhere, but holds no `helpers`.
        assert_eq!(ix.resolve(py, "src.helpers.util.slugify", 1), Some(2));
    }

    fn js(q: &str, awaitable: bool, via: &[&str]) -> FnSummary {
        FnSummary {
            lang: Language::JavaScript,
            returns_awaitable: awaitable,
            returns_via: via.iter().map(|v| (*v).into()).collect(),
            ..sum(q, false, false, &[])
        }
    }

    fn sum(q: &str, is_async: bool, blocks: bool, calls: &[&str]) -> FnSummary {
        FnSummary {
            func: FuncId(1),
            qualname: q.into(),
            lang: Language::Python,
            is_async,
            is_generator: false,
            has_cleanup: false,
            returns_awaitable: is_async,
            returns_via: Box::default(),
            rejects_via: None,
            blocking: blocks.then(|| {
                Box::new(BlockingSite {
                    callee: "time.sleep".into(),
                    what: "sleeps".into(),
                    fix: "".into(),
                    span: Span::new(0, 1),
                    on_receiver_files: false,
                })
            }),
            calls: calls
                .iter()
                .map(|c| CallSite {
                    target: (*c).into(),
                    span: Span::new(5, 6),
                })
                .collect(),
            declared_only: false,
            hidden: false,
        }
    }

    #[test]
    fn blocking_propagates_through_sync_helpers_and_stops_at_cycles() {
        let ix = build(vec![vec![
            sum("app.a", false, false, &["app.b"]),
            sum("app.b", false, false, &["app.c", "app.a"]),
            sum("app.c", false, true, &[]),
            sum("app.d", false, false, &["app.e"]),
            sum("app.e", false, false, &["app.d"]),
        ]]);
        let a = ix.resolve(Language::Python, "app.a", NOWHERE).unwrap();
        let chain = ix.blocking_chain(a).expect("a blocks through b and c");
        assert_eq!(chain.steps.len(), 2);
        assert_eq!(&*chain.steps[0].callee, "app.b");
        assert_eq!(&*chain.steps[1].callee, "app.c");
        let d = ix.resolve(Language::Python, "app.d", NOWHERE).unwrap();
        assert!(ix.blocking_chain(d).is_none());
    }

    /// The keyed lookup must give what comparing the target with every
    /// function would: the unique function whose name ends with the target
    /// (or that the target ends with) at a segment boundary, else nothing.
    #[test]
    fn resolve_by_suffix_agrees_with_a_full_scan() {
        let names = [
            "pkg.client.Session.get",
            "other.Session.get",
            "pkg.cache.get",
            "util.helpers.fetch",
            "fetch",
            "pkg.db.connect",
            "src/lib/io.read",
            "tools::net::connect",
        ];
        let ix = build(vec![
            names.iter().map(|q| sum(q, false, false, &[])).collect(),
        ]);
        let targets = [
            "Session.get",
            "client.Session.get",
            "get",
            "cache.get",
            "x.pkg.cache.get",
            "helpers.fetch",
            "app.helpers.fetch",
            "mod.fetch",
            "fetch",
            "db.connect",
            "connect",
            "lib/io.read",
            "io.read",
            "net::connect",
            "nothing.here",
        ];
        for t in targets {
            let last = last_segment(t, Language::Python);
            let by_exact = names.iter().position(|q| *q == t);
            let scanned: Vec<usize> = (0..names.len())
                .filter(|&i| {
                    last_segment(names[i], Language::Python) == last
                        && (suffix_at_boundary(names[i], t) || suffix_at_boundary(t, names[i]))
                        // A function with no module in its name answers
                        // only a bare call.
                        && (!t.contains('.') || names[i].contains('.'))
                })
                .collect();
            // A standard module's name (`io`) resolves only exactly.
            let head = t.split(['.', ':', '/']).next().unwrap_or(t);
            let standard = unsnarl_model::knowledge::is_standard_module(Language::Python, head);
            let want = by_exact.or(match scanned[..] {
                [one] if !standard => Some(one),
                _ => None,
            });
            assert_eq!(ix.resolve(Language::Python, t, NOWHERE), want, "target {t}");
        }
        assert_eq!(
            ix.resolve(Language::Python, "client.Session.get", NOWHERE),
            Some(0)
        );
        assert_eq!(ix.resolve(Language::Python, "Session.get", NOWHERE), None);
        // Only the bare `fetch` is a suffix of it, and a function with no
        // module in its name (a top-level `__init__.py`'s) answers only a
        // bare call; `util.helpers.fetch` is not a suffix either.
        assert_eq!(
            ix.resolve(Language::Python, "app.helpers.fetch", NOWHERE),
            None
        );
        assert_eq!(ix.resolve(Language::Python, "fetch", NOWHERE), Some(4));
    }

    #[test]
    fn js_functions_returning_awaitables_are_settled_across_files() {
        let ix = build(vec![
            vec![
                js("src/a.load", false, &["src/b.fetchUser"]),
                js("src/a.mixed", false, &["src/b.fetchUser", "src/b.plain"]),
            ],
            vec![
                js("src/b.fetchUser", false, &["src/c.get"]),
                js("src/b.plain", false, &[]),
            ],
            vec![js("src/c.get", true, &[])],
        ]);
        let awaitable = |q: &str| {
            let i = ix.resolve(Language::JavaScript, q, NOWHERE).unwrap();
            ix.summary(i).returns_awaitable
        };
        assert!(awaitable("src/b.fetchUser"));
        assert!(awaitable("src/a.load"));
        assert!(!awaitable("src/a.mixed"));
        assert!(!awaitable("src/b.plain"));
    }

    /// An async JS function that catches everything but the awaits of
    /// `via` (`None`: it may reject).
    fn catching(q: &str, returns_via: &[&str], via: Option<&[&str]>) -> FnSummary {
        FnSummary {
            is_async: true,
            rejects_via: via.map(|v| v.iter().map(|t| (*t).into()).collect()),
            ..js(q, true, returns_via)
        }
    }

    #[test]
    fn js_functions_that_cannot_reject_are_settled_across_files() {
        let ix = build(vec![
            vec![
                catching("src/a.onDone", &[], Some(&["src/b.safeWait"])),
                catching(
                    "src/a.mixed",
                    &["src/b.x"],
                    Some(&["src/b.safeWait", "src/b.wait"]),
                ),
                catching("src/a.loop", &[], Some(&["src/a.loop2"])),
                catching("src/a.loop2", &[], Some(&["src/a.loop"])),
            ],
            vec![
                catching("src/b.safeWait", &["src/b.x"], Some(&[])),
                catching("src/b.wait", &[], None),
            ],
        ]);
        let never = |q: &str| {
            let i = ix.resolve(Language::JavaScript, q, NOWHERE).unwrap();
            ix.summary(i).never_rejects
        };
        assert!(never("src/b.safeWait"));
        assert!(never("src/a.onDone"));
        assert!(!never("src/b.wait"));
        assert!(!never("src/a.mixed"));
        // A cycle proves nothing.
        assert!(!never("src/a.loop"));
        // Packed together, the two lists stay apart.
        let i = ix
            .resolve(Language::JavaScript, "src/a.mixed", NOWHERE)
            .unwrap();
        let s = ix.summary(i);
        assert_eq!(s.returns_via, &["src/b.x".into()] as &[Box<str>]);
        assert_eq!(s.rejects_via.unwrap().len(), 2);
        let i = ix
            .resolve(Language::JavaScript, "src/b.safeWait", NOWHERE)
            .unwrap();
        assert_eq!(ix.summary(i).rejects_via.unwrap().len(), 0);
        assert_eq!(ix.summary(i).returns_via.len(), 1);
    }

    #[test]
    fn a_summary_takes_no_more_room_for_what_it_knows_of_rejections() {
        // Summaries stay in memory for the whole scan (the all tree's peak
        // is near its 300 MB target): the rejection facts live in the padding
        // and in the block `returns_via` already had.
        assert!(std::mem::size_of::<Packed>() <= 48);
    }

    #[test]
    fn a_one_file_index_settles_awaitables_for_itself_and_hands_back_its_summaries_unchanged() {
        let file = vec![
            js("src/a.load", false, &["src/a.get"]),
            js("src/a.get", true, &[]),
        ];
        let local = ProjectIndex::for_one_file(3, file.into_iter().collect());
        assert_eq!(
            local.awaitable(Language::JavaScript, "src/a.load", 3),
            Some(Awaitable::Returns)
        );
        let (_, back) = local.into_queries();
        let flags: Vec<(&str, bool)> = back
            .iter()
            .map(|s| (s.qualname, s.returns_awaitable))
            .collect();
        assert_eq!(flags, [("src/a.load", false), ("src/a.get", true)]);
    }

    #[test]
    fn a_one_file_index_works_out_blocking_only_when_asked_and_answers_as_if_eager() {
        let file = || {
            vec![
                sum("app.a.main", true, false, &["app.a.helper"]),
                sum("app.a.helper", false, false, &["app.a.sleepy"]),
                sum("app.a.sleepy", false, true, &[]),
            ]
        };
        let local = ProjectIndex::for_one_file(0, file().into_iter().collect());
        assert!(local.blocking.get().is_none());
        assert!(local.awaitable(Language::Python, "app.a.main", 0).is_some());
        assert!(
            local.blocking.get().is_none(),
            "an awaitable question needs no chains"
        );
        let chain = local
            .blocking_chain_of(Language::Python, "app.a.helper", 0)
            .expect("the helper blocks through sleepy");
        assert_eq!(chain.steps.len(), 1);
        let project = build(vec![file()]);
        assert!(
            project.blocking.get().is_some(),
            "the project index is eager"
        );
        let helper = project.resolve_quietly(Language::Python, "app.a.helper", 0);
        let eager = project.blocking_chain(helper.unwrap()).unwrap();
        assert_eq!(ChainKey::of(&chain, 0), ChainKey::of(&eager, 0));
    }

    #[test]
    fn resolution_by_suffix_at_segment_boundary() {
        let ix = build(vec![vec![sum("examples.app.db.query", false, false, &[])]]);
        assert!(
            ix.resolve(Language::Python, "app.db.query", NOWHERE)
                .is_some()
        );
        assert!(
            ix.resolve(Language::Python, "pp.db.query", NOWHERE)
                .is_none()
        );
        assert!(ix.resolve(Language::Go, "app.db.query", NOWHERE).is_none());
    }

    /// A bare Go name is a builtin: `close(ch)` is not the project's
    /// `block.close` method, though a bare Python name may be.
    #[test]
    fn a_bare_go_name_is_never_resolved_by_suffix() {
        let go_close = FnSummary {
            lang: Language::Go,
            ..sum("example.com/blk.block.close", false, true, &[])
        };
        let ix = build(vec![vec![
            go_close,
            sum("app.util.close", false, false, &[]),
        ]]);
        assert_eq!(ix.resolve(Language::Go, "close", NOWHERE), None);
        assert_eq!(ix.resolve(Language::Python, "close", NOWHERE), Some(1));
        assert_eq!(
            ix.resolve(Language::Go, "example.com/blk.block.close", NOWHERE),
            Some(0)
        );
    }
    #[test]
    fn a_bare_js_name_is_a_package_never_resolved_by_suffix() {
        let js = |q: &str| FnSummary {
            lang: Language::JavaScript,
            ..sum(q, true, false, &[])
        };
        let ix = build(vec![vec![
            js("vendor-bundle.makeStreamMapper.pump"),
            js("lib.copy-stream"),
        ]]);
        // `const pump = require('pump')`: the npm package.
        assert_eq!(ix.resolve(Language::JavaScript, "pump", NOWHERE), None);
        assert_eq!(
            ix.resolve(
                Language::TypeScript,
                "vendor-bundle.makeStreamMapper.pump",
                NOWHERE
            ),
            Some(0)
        );
        assert_eq!(
            ix.resolve(Language::JavaScript, "lib.copy-stream", NOWHERE),
            Some(1)
        );
    }

    #[test]
    fn a_coroutine_is_run_alone_everywhere_only_when_every_other_files_run_is_lone() {
        use Language::Python;
        let server = || -> FileSummaries {
            vec![sum("tool.server.serve", true, true, &[])]
                .into_iter()
                .collect()
        };
        // A file whose one call of `serve` (at 5..6) runs it alone, or not.
        let caller = |q: &str, lone: bool| -> FileSummaries {
            let mut f: FileSummaries = vec![sum(q, false, false, &["tool.server.serve"])]
                .into_iter()
                .collect();
            f.set_lone_runs(
                if lone { vec![Span::new(5, 6)] } else { vec![] },
                vec![],
                vec![],
            );
            f
        };
        let alone = |files: Vec<FileSummaries>, here: bool| {
            ProjectIndex::build(files).runs_alone_elsewhere(Python, "tool.server.serve", 0, here)
        };
        // Only the command line runs it, with `asyncio.run(serve(..))`.
        assert!(alone(vec![server(), caller("tool.cli.main", true)], false));
        // A second file starts it beside other work.
        assert!(!alone(
            vec![
                server(),
                caller("tool.cli.main", true),
                caller("tool.hub.start", false)
            ],
            true
        ));
        // Nothing runs it: only the asking file's own lone run can say so.
        assert!(!alone(vec![server()], false));
        assert!(alone(vec![server()], true));
        // Handed on by value in a third file (`tools=[serve]`): it may run
        // anywhere.
        let mut tools: FileSummaries = vec![sum("tool.agent.tools", false, false, &[])]
            .into_iter()
            .collect();
        tools.lone = Some(Box::new(LoneRuns {
            value_refs: vec![short_hash("serve")].into(),
            package: package_of("tool.agent"),
            ..LoneRuns::default()
        }));
        assert!(!alone(
            vec![server(), caller("tool.cli.main", true), tools],
            false
        ));
        // Handed by name to a new loop (`trio.run(serve)`) by module code.
        let mut by_name: FileSummaries = vec![sum("tool.cli2.main", false, false, &[])]
            .into_iter()
            .collect();
        by_name.set_lone_runs(vec![], vec!["tool.server.serve".into()], vec![]);
        assert!(alone(vec![server(), by_name], false));
        // The one-file index records the question; the project index, which
        // sees the hub's run, gives another answer, so the file is checked
        // again.
        let local = ProjectIndex::for_one_file(0, server());
        assert!(local.runs_alone_elsewhere(Python, "tool.server.serve", 0, true));
        let (asked, _) = local.into_queries();
        let (q, told) = asked.get("tool.server.serve").expect("asked")[0].clone();
        assert_eq!(
            (q, told.clone()),
            (Question::Alone(true), Answer::Alone(true))
        );
        let project = ProjectIndex::build(vec![server(), caller("tool.hub.start", false)]);
        let found = project.resolve_quietly(Python, "tool.server.serve", 0);
        assert_ne!(project.answer(q, found, 0), told);
    }

    #[test]
    fn a_coroutine_runs_alone_in_the_project_when_every_call_chain_starts_at_an_entry_point() {
        use Language::Python;
        let at = Span::new(5, 6);
        let with_id = |mut s: FnSummary, id: u32| {
            s.func = FuncId(id);
            s
        };
        // `def main(q): asyncio.run(Kernel().run(q))`, a program's entry.
        let cli = |entry: bool| {
            let mut f: FileSummaries = vec![sum(
                "tool.cli.main",
                false,
                false,
                &["tool.kernel.Kernel.run"],
            )]
            .into_iter()
            .collect();
            f.set_lone_runs(vec![at], vec![], if entry { vec![at] } else { vec![] });
            f
        };
        // `run` awaits `step`, in a coroutine that starts nothing (or, with
        // `starts`, leaves a task running).
        let kernel = |starts: bool| {
            let mut f: FileSummaries = vec![
                with_id(
                    sum(
                        "tool.kernel.Kernel.run",
                        true,
                        false,
                        &["tool.kernel.Kernel.step"],
                    ),
                    1,
                ),
                with_id(sum("tool.kernel.Kernel.step", true, true, &[]), 2),
            ]
            .into_iter()
            .collect();
            f.set_awaits_and_starts(vec![at], if starts { vec![1] } else { vec![] });
            f
        };
        let alone = |files: Vec<FileSummaries>, q: &str| {
            ProjectIndex::build(files).runs_alone_in_project(Python, q, 0)
        };
        assert!(alone(
            vec![cli(true), kernel(false)],
            "tool.kernel.Kernel.step"
        ));
        assert!(alone(
            vec![cli(true), kernel(false)],
            "tool.kernel.Kernel.run"
        ));
        // A sync wrapper of a library's API is no entry point.
        assert!(!alone(
            vec![cli(false), kernel(false)],
            "tool.kernel.Kernel.step"
        ));
        // What `run` leaves running shares the loop with `step`.
        assert!(!alone(
            vec![cli(true), kernel(true)],
            "tool.kernel.Kernel.step"
        ));
        // Two coroutines that only await each other run nowhere.
        let mut cycle: FileSummaries = vec![
            with_id(sum("tool.loop.a", true, false, &["tool.loop.b"]), 1),
            with_id(sum("tool.loop.b", true, true, &["tool.loop.a"]), 2),
        ]
        .into_iter()
        .collect();
        cycle.set_awaits_and_starts(vec![at], vec![]);
        assert!(!alone(vec![cycle], "tool.loop.b"));
        // A file that calls `.step()` on a receiver of unknown type may run
        // it, if it can reach the package.
        let open = |package: &str| {
            let mut f: FileSummaries = vec![sum("web.app.handle", true, false, &[])]
                .into_iter()
                .collect();
            f.lone = Some(Box::new(LoneRuns {
                open_names: vec![short_hash("step")].into(),
                reach: vec![short_hash(package)].into(),
                ..LoneRuns::default()
            }));
            f
        };
        let q = "tool.kernel.Kernel.step";
        assert!(!alone(vec![cli(true), kernel(false), open("tool")], q));
        assert!(alone(vec![cli(true), kernel(false), open("other")], q));
    }

    #[test]
    fn a_one_file_index_records_what_it_answered_for_the_project_index_to_confirm() {
        use Language::Python;
        let a = vec![
            sum("app.a.main", true, false, &["app.b.helper", "app.a.local"]),
            sum("app.a.local", false, false, &[]),
        ];
        let b = vec![
            sum("app.b.helper", false, true, &[]),
            sum("app.b.plain", false, false, &[]),
        ];
        let local = ProjectIndex::for_one_file(7, a.iter().cloned().collect());
        // Another file's functions are unknown to it.
        assert!(local.blocking_chain_of(Python, "app.b.helper", 7).is_none());
        assert!(local.awaitable(Python, "app.b.plain", 7).is_none());
        assert!(local.resolve(Python, "app.b.plain", 7).is_none());
        // Its own are known.
        assert!(local.awaitable(Python, "app.a.main", 7).is_some());
        let (asked, back) = local.into_queries();
        let names: Vec<&str> = back.iter().map(|s| s.qualname).collect();
        assert_eq!(names, ["app.a.main", "app.a.local"]);
        let answer = |t: &str, q: Question| {
            asked
                .get(t)
                .expect("asked")
                .iter()
                .find(|(x, _)| *x == q)
                .map(|(_, a)| a.clone())
                .expect("asked")
        };
        let project = build(vec![a, b]);
        let now =
            |t: &str, q: Question| project.answer(q, project.resolve_quietly(Python, t, 0), 0);
        // The helper blocks: what the rules were told no longer holds.
        assert_ne!(
            now("app.b.helper", Question::Chain),
            answer("app.b.helper", Question::Chain)
        );
        // A plain function gives nothing to await, as the one-file index said;
        // but which function a target is cannot be confirmed for another file.
        assert_eq!(
            now("app.b.plain", Question::Awaitable),
            answer("app.b.plain", Question::Awaitable)
        );
        assert_ne!(
            now("app.b.plain", Question::Function),
            answer("app.b.plain", Question::Function)
        );
        assert_eq!(
            now("app.a.main", Question::Awaitable),
            answer("app.a.main", Question::Awaitable)
        );
    }

    #[test]
    fn a_call_prefers_the_calling_files_own_function() {
        use Language::Python;
        let ix = build(vec![
            vec![
                sum("app.util.local", false, false, &[]),
                sum("a.util.helper", false, false, &[]),
            ],
            vec![
                sum("app.util.local", false, true, &[]),
                sum("b.util.helper", false, false, &[]),
            ],
        ]);
        // The same module seen twice (a copied tree): each file's own.
        assert_eq!(ix.resolve(Python, "app.util.local", 0), Some(0));
        assert_eq!(ix.resolve(Python, "app.util.local", 1), Some(2));
        assert_eq!(ix.resolve(Python, "app.util.local", NOWHERE), Some(0));
        // Two suffix matches: ambiguous, unless one is the caller's own.
        assert_eq!(ix.resolve(Python, "util.helper", NOWHERE), None);
        assert_eq!(ix.resolve(Python, "util.helper", 1), Some(3));
        assert_eq!(ix.resolve(Python, "helper", 0), Some(1));
    }
}
