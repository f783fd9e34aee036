//! The project index: every function of the scanned tree, what it calls and
//! whether it blocks, so rules can reason across functions and files (an
//! async handler calling a sync helper that sleeps three calls down).

use rustc_hash::FxHashMap as HashMap;
use unsnarl_model::walk::{Visitor, walk_block};
use unsnarl_model::*;

/// A function of the project: file index and function id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FnRef {
    pub file: u32,
    pub func: FuncId,
}

/// A call site inside a function, to a callee named by `target`.
#[derive(Clone, Debug)]
pub struct CallSite {
    pub target: Box<str>,
    pub span: Span,
}

/// A direct blocking call inside a function.
#[derive(Clone, Debug)]
pub struct BlockingSite {
    pub callee: Box<str>,
    pub what: Box<str>,
    pub fix: Box<str>,
    pub span: Span,
}

/// What the index keeps of one function.
#[derive(Clone, Debug)]
pub struct FnSummary {
    pub func: FuncId,
    pub qualname: Box<str>,
    pub lang: Language,
    pub is_async: bool,
    /// Calling it gives something to await: `async`, or declared to return
    /// a promise/future (`Promise<T>`, `impl Future`); in JS/TS also a
    /// function whose every `return` gives a promise expression (a known
    /// promise API, `new Promise`, a `.then()` chain), across project calls
    /// (see `returns_via`).
    pub returns_awaitable: bool,
    /// JS/TS: project callees whose results this function returns (every
    /// other `return` gives a promise). When all of them return awaitables,
    /// so does this function; the index settles it across files.
    pub returns_via: Vec<Box<str>>,
    /// The first blocking call made directly in the body (not offloaded, not
    /// in a nested function).
    pub blocking: Option<BlockingSite>,
    /// Calls whose callee has a qualified name, in source order.
    pub calls: Vec<CallSite>,
}

/// Summarizes the functions of one file (run per file, in parallel).
pub fn summarize(m: &FileModel, kb: &Table, lang: Language) -> Vec<FnSummary> {
    let mut out = Vec::new();
    for fid in m.function_ids() {
        let f = m.func(fid);
        if f.qualname.is_empty() {
            continue;
        }
        let mut v = SummaryVisitor {
            kb,
            blocking: None,
            calls: Vec::new(),
        };
        walk_block(m, &f.body, &mut v);
        let mut returns_awaitable = f.is_async
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
            returns_awaitable,
            returns_via,
            blocking: v.blocking,
            calls: v.calls,
        });
    }
    out
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

struct SummaryVisitor<'k> {
    kb: &'k Table,
    blocking: Option<BlockingSite>,
    calls: Vec<CallSite>,
}

impl Visitor for SummaryVisitor<'_> {
    fn enter_expr(&mut self, m: &FileModel, id: ExprId) -> bool {
        let Some(c) = m.call(id) else {
            return true;
        };
        if self
            .kb
            .find(Effect::Offload, c.target.as_deref(), &c.name)
            .is_some()
        {
            // Whatever is passed to an offload API runs elsewhere.
            return false;
        }
        if self.blocking.is_none()
            && let Some(e) = self.kb.find(Effect::Blocking, c.target.as_deref(), &c.name)
            && e.transitive()
        {
            self.blocking = Some(BlockingSite {
                callee: c.target.clone().unwrap_or_else(|| c.name.clone()).into(),
                what: e.what.as_str().into(),
                fix: e.fix.as_str().into(),
                span: m.expr(id).span,
            });
        }
        if let Some(t) = &c.target {
            self.calls.push(CallSite {
                target: t.as_str().into(),
                span: m.expr(id).span,
            });
        }
        true
    }
}

/// One step of a blocking chain: the call made in `from`, at `span`.
#[derive(Clone, Debug)]
pub struct ChainStep {
    pub from: FnRef,
    pub span: Span,
    pub callee: Box<str>,
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

/// Every function of the scan.
#[derive(Debug, Default)]
pub struct ProjectIndex {
    paths: Vec<Box<str>>,
    fns: Vec<(FnRef, FnSummary)>,
    by_qualname: HashMap<Box<str>, Vec<u32>>,
    by_last_segment: HashMap<Box<str>, Vec<u32>>,
    /// Qualified names of two or more segments, keyed by their last two: a
    /// dotted call target can only match a name ending with the same two
    /// segments, so resolving it never scans every function sharing a
    /// common last name (`get`, `run`), which would grow with the square of
    /// the project.
    by_tail2: HashMap<Box<str>, Vec<u32>>,
    /// For each function (same order as `fns`), how it blocks if it does.
    blocking: Vec<Option<BlockingChain>>,
}

/// Longest helper chain followed; deeper chains are not reported.
const MAX_CHAIN: usize = 8;

impl ProjectIndex {
    /// Builds the index from the summaries of every file (in file order).
    pub fn build(files: Vec<(Box<str>, Vec<FnSummary>)>) -> ProjectIndex {
        let mut ix = ProjectIndex::default();
        for (file, (path, sums)) in files.into_iter().enumerate() {
            ix.paths.push(path);
            for s in sums {
                let i = ix.fns.len() as u32;
                ix.by_qualname
                    .entry(s.qualname.clone())
                    .or_default()
                    .push(i);
                let last = last_segment(&s.qualname, s.lang);
                ix.by_last_segment.entry(last.into()).or_default().push(i);
                if let Some(tail) = tail2(&s.qualname) {
                    ix.by_tail2.entry(tail.into()).or_default().push(i);
                }
                ix.fns.push((
                    FnRef {
                        file: file as u32,
                        func: s.func,
                    },
                    s,
                ));
            }
        }
        ix.settle_js_awaitables();
        ix.compute_blocking();
        ix
    }

    /// JS/TS: a function returning what awaitable project functions return is
    /// awaitable too (settled to a fixpoint); and a declaration (`.d.ts`)
    /// that says a function returns a promise speaks for its implementation.
    fn settle_js_awaitables(&mut self) {
        let mut by_name: HashMap<Box<str>, bool> = HashMap::default();
        for (_, s) in &self.fns {
            if s.lang.is_js_family() && s.returns_awaitable {
                by_name.insert(s.qualname.clone(), true);
            }
        }
        for (_, s) in &mut self.fns {
            if s.lang.is_js_family() && by_name.contains_key(&s.qualname) {
                s.returns_awaitable = true;
            }
        }
        let pending: Vec<usize> = (0..self.fns.len())
            .filter(|&i| {
                let s = &self.fns[i].1;
                s.lang.is_js_family() && !s.returns_awaitable && !s.returns_via.is_empty()
            })
            .collect();
        // Each pass settles at least one more function or stops.
        for _ in 0..=pending.len().min(MAX_CHAIN * 4) {
            let mut changed = false;
            for &i in &pending {
                if self.fns[i].1.returns_awaitable {
                    continue;
                }
                let s = &self.fns[i].1;
                let all = s.returns_via.iter().all(|t| {
                    self.resolve(s.lang, t)
                        .is_some_and(|j| j != i && self.fns[j].1.returns_awaitable)
                });
                if all {
                    self.fns[i].1.returns_awaitable = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }

    pub fn path(&self, file: u32) -> &str {
        &self.paths[file as usize]
    }

    /// The function a call target refers to, if it is in the project. An
    /// exact qualified name wins; otherwise a unique function whose name ends
    /// with the target, or whose name the target ends with, at a segment
    /// boundary (module names differ by the package root they are seen from).
    pub fn resolve(&self, lang: Language, target: &str) -> Option<usize> {
        let same_family = |i: &u32| family(self.fns[*i as usize].1.lang) == family(lang);
        if let Some(ids) = self.by_qualname.get(target)
            && let Some(&i) = ids.iter().find(|i| same_family(i))
        {
            return Some(i as usize);
        }
        let last = last_segment(target, lang);
        let matches = |i: &&u32| {
            let s = &self.fns[**i as usize].1;
            same_family(i)
                && last_segment(&s.qualname, s.lang) == last
                && (suffix_at_boundary(&s.qualname, target)
                    || suffix_at_boundary(target, &s.qualname))
        };
        let mut found = None;
        let mut consider = |i: u32| {
            if found.is_some_and(|f| f != i) {
                return false; // ambiguous
            }
            found = Some(i);
            true
        };
        match tail2(target) {
            // A single name: every function ending with it matches.
            None => {
                for i in self.by_last_segment.get(last)?.iter().filter(matches) {
                    if !consider(*i) {
                        return None;
                    }
                }
            }
            // A dotted name: a longer name ends with the same two segments;
            // a shorter one is a single segment, its whole name.
            Some(tail) => {
                let longer = self.by_tail2.get(tail).into_iter().flatten();
                let shorter = self.by_qualname.get(last_fine_segment(target));
                for i in longer.chain(shorter.into_iter().flatten()).filter(matches) {
                    if !consider(*i) {
                        return None;
                    }
                }
            }
        }
        found.map(|i| i as usize)
    }

    pub fn summary(&self, i: usize) -> &FnSummary {
        &self.fns[i].1
    }

    pub fn fn_ref(&self, i: usize) -> FnRef {
        self.fns[i].0
    }

    /// How a project function blocks, directly or through sync helpers.
    pub fn blocking_chain(&self, i: usize) -> Option<&BlockingChain> {
        self.blocking[i].as_ref()
    }

    /// Resolves, for every sync function, whether it blocks directly or by
    /// calling sync project helpers that do (depth-first, memoized, cycles
    /// cut).
    fn compute_blocking(&mut self) {
        #[derive(Clone, Copy, PartialEq)]
        enum State {
            Todo,
            Active,
            Done,
        }
        let n = self.fns.len();
        let mut state = vec![State::Todo; n];
        let mut result: Vec<Option<BlockingChain>> = vec![None; n];
        // Resolve each function's callees once.
        let callees: Vec<Vec<(usize, Span, Box<str>)>> = (0..n)
            .map(|i| {
                let s = &self.fns[i].1;
                s.calls
                    .iter()
                    .filter_map(|c| {
                        let j = self.resolve(s.lang, &c.target)?;
                        (j != i && !self.fns[j].1.is_async).then(|| (j, c.span, c.target.clone()))
                    })
                    .collect()
            })
            .collect();
        for root in 0..n {
            if state[root] != State::Todo || self.fns[root].1.is_async {
                continue;
            }
            // Explicit stack: (function, next callee to look at).
            let mut stack = vec![(root, 0usize)];
            state[root] = State::Active;
            while let Some(&(f, cursor)) = stack.last() {
                let depth = stack.len();
                if cursor == 0
                    && let Some(site) = &self.fns[f].1.blocking
                {
                    result[f] = Some(BlockingChain {
                        steps: Vec::new(),
                        at: self.fns[f].0,
                        site: site.clone(),
                    });
                }
                if result[f].is_some() || cursor >= callees[f].len() || depth > MAX_CHAIN {
                    state[f] = State::Done;
                    stack.pop();
                    continue;
                }
                let (g, span, ref callee) = callees[f][cursor];
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
                        if let Some(chain) = &result[g] {
                            let mut steps = vec![ChainStep {
                                from: self.fns[f].0,
                                span,
                                callee: callee.clone(),
                            }];
                            steps.extend(chain.steps.iter().cloned());
                            result[f] = Some(BlockingChain {
                                steps,
                                at: chain.at,
                                site: chain.site.clone(),
                            });
                        }
                    }
                }
                if let Some(top) = stack.last_mut() {
                    top.1 += 1;
                }
            }
        }
        self.blocking = result;
    }
}

fn family(l: Language) -> Language {
    if l.is_js_family() {
        Language::JavaScript
    } else {
        l
    }
}

fn last_segment(q: &str, lang: Language) -> &str {
    let sep = lang.path_sep();
    q.rsplit(sep).next().unwrap_or(q)
}

/// Where the segment boundaries of a name are: after `.`, `::` or `/`.
fn boundaries(q: &str) -> impl Iterator<Item = usize> + '_ {
    q.char_indices().rev().filter_map(move |(i, c)| match c {
        '.' | '/' => Some(i + 1),
        ':' if q[..i].ends_with(':') => Some(i + 1),
        _ => None,
    })
}

/// The last two segments of a name (split at `.`, `::` or `/`), if it has
/// two or more.
fn tail2(q: &str) -> Option<&str> {
    let start = boundaries(q).nth(1).unwrap_or(0);
    (boundaries(q).next().is_some()).then(|| &q[start..])
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

    fn sum(q: &str, is_async: bool, blocks: bool, calls: &[&str]) -> FnSummary {
        FnSummary {
            func: FuncId(1),
            qualname: q.into(),
            lang: Language::Python,
            is_async,
            returns_awaitable: is_async,
            returns_via: Vec::new(),
            blocking: blocks.then(|| BlockingSite {
                callee: "time.sleep".into(),
                what: "sleeps".into(),
                fix: "".into(),
                span: Span::new(0, 1),
            }),
            calls: calls
                .iter()
                .map(|c| CallSite {
                    target: (*c).into(),
                    span: Span::new(5, 6),
                })
                .collect(),
        }
    }

    #[test]
    fn blocking_propagates_through_sync_helpers_and_stops_at_cycles() {
        let ix = ProjectIndex::build(vec![(
            "a.py".into(),
            vec![
                sum("app.a", false, false, &["app.b"]),
                sum("app.b", false, false, &["app.c", "app.a"]),
                sum("app.c", false, true, &[]),
                sum("app.d", false, false, &["app.e"]),
                sum("app.e", false, false, &["app.d"]),
            ],
        )]);
        let a = ix.resolve(Language::Python, "app.a").unwrap();
        let chain = ix.blocking_chain(a).expect("a blocks through b and c");
        assert_eq!(chain.steps.len(), 2);
        assert_eq!(&*chain.steps[0].callee, "app.b");
        assert_eq!(&*chain.steps[1].callee, "app.c");
        let d = ix.resolve(Language::Python, "app.d").unwrap();
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
        let ix = ProjectIndex::build(vec![(
            "a.py".into(),
            names.iter().map(|q| sum(q, false, false, &[])).collect(),
        )]);
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
                })
                .collect();
            let want = by_exact.or(match scanned[..] {
                [one] => Some(one),
                _ => None,
            });
            assert_eq!(ix.resolve(Language::Python, t), want, "target {t}");
        }
        assert_eq!(ix.resolve(Language::Python, "client.Session.get"), Some(0));
        assert_eq!(ix.resolve(Language::Python, "Session.get"), None);
        // Only the bare `fetch` is a suffix of it; `util.helpers.fetch` is not.
        assert_eq!(ix.resolve(Language::Python, "app.helpers.fetch"), Some(4));
    }

    #[test]
    fn js_functions_returning_awaitables_are_settled_across_files() {
        let js = |q: &str, awaitable: bool, via: &[&str]| FnSummary {
            lang: Language::JavaScript,
            returns_awaitable: awaitable,
            returns_via: via.iter().map(|v| (*v).into()).collect(),
            ..sum(q, false, false, &[])
        };
        let ix = ProjectIndex::build(vec![
            (
                "src/a.js".into(),
                vec![
                    js("src/a.load", false, &["src/b.fetchUser"]),
                    js("src/a.mixed", false, &["src/b.fetchUser", "src/b.plain"]),
                ],
            ),
            (
                "src/b.js".into(),
                vec![
                    js("src/b.fetchUser", false, &["src/c.get"]),
                    js("src/b.plain", false, &[]),
                ],
            ),
            ("src/c.d.ts".into(), vec![js("src/c.get", true, &[])]),
        ]);
        let awaitable = |q: &str| {
            let i = ix.resolve(Language::JavaScript, q).unwrap();
            ix.summary(i).returns_awaitable
        };
        assert!(awaitable("src/b.fetchUser"));
        assert!(awaitable("src/a.load"));
        assert!(!awaitable("src/a.mixed"));
        assert!(!awaitable("src/b.plain"));
    }

    #[test]
    fn resolution_by_suffix_at_segment_boundary() {
        let ix = ProjectIndex::build(vec![(
            "x.py".into(),
            vec![sum("examples.app.db.query", false, false, &[])],
        )]);
        assert!(ix.resolve(Language::Python, "app.db.query").is_some());
        assert!(ix.resolve(Language::Python, "pp.db.query").is_none());
        assert!(ix.resolve(Language::Go, "app.db.query").is_none());
    }
}
