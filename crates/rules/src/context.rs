//! What a rule sees of one file, and the questions rules keep asking of it.

use crate::index::{ProjectIndex, name_hash};
use crate::rule::RuleMeta;
use crate::semantic::Semantic;
use std::cell::{OnceCell, RefCell};
use unsnarl_model::walk::{Parent, Tree, exprs_in_block_into, stmts_in_block_into};
use unsnarl_model::*;

/// One file, ready for the rules.
pub struct FileCx<'a> {
    /// Index of the file in the scan (for related locations in other files).
    pub file: usize,
    pub path: &'a str,
    pub text: &'a str,
    pub lang: Language,
    pub model: &'a FileModel,
    pub tree: &'a Tree,
    pub sema: &'a Semantic,
    pub kb: &'a Table,
    pub index: &'a ProjectIndex,
    /// Facts about the file that rules work out on first use and share.
    pub(crate) caches: FileCaches,
}

/// What several rules ask of one file, each built the first time a rule
/// asks and kept for the others. A new cache goes here, so every place that
/// makes a [`FileCx`] starts it empty with `FileCaches::default()`.
#[derive(Default)]
pub(crate) struct FileCaches {
    /// The file's named functions as (hash of the qualified name, id),
    /// sorted, built the first time a rule looks one up (see
    /// [`FileCx::local_function`]).
    pub(crate) by_qualname: OnceCell<Box<[(u64, FuncId)]>>,
    /// The functions nested directly in each function, built the first time
    /// a rule asks (see [`FileCx::with_nested`]).
    pub(crate) children: OnceCell<Box<[Vec<FuncId>]>>,
    /// JS/TS: the file's request and event handlers, found once for the
    /// several rules that ask (see [`crate::js::common::handlers`]).
    pub(crate) js_handlers: OnceCell<crate::js::common::Handlers>,
    /// JS/TS: the functions that declare a local from a promise (see
    /// [`crate::js::common::promise_bindings`]).
    pub(crate) js_promise_declarers: OnceCell<std::collections::HashSet<FuncId>>,
    /// Go: whether the file is generated or excluded from every build
    /// (see [`crate::go::common::skip_file`]).
    pub(crate) go_skip: OnceCell<bool>,
    /// Rust: whether the file's path is test or benchmark code (see
    /// [`crate::rust::common::test_like`], which rules ask per call).
    pub(crate) rust_test_path: OnceCell<bool>,
    /// Every call of the file by the hash of its callee's last segment and
    /// of its resolved target, and the file's awaits, built the first time
    /// a rule asks (see [`FileCx::calls_named`], [`FileCx::calls_to`] and
    /// [`FileCx::awaits`]).
    pub(crate) calls: OnceCell<CallIndex>,
    /// Each function's body expressions in source order, walked the first
    /// time a rule asks for that function (see [`FileCx::body_exprs`]).
    pub(crate) body_exprs: PerFunction<ExprId>,
    /// The same for statements (see [`FileCx::body_stmts`]).
    pub(crate) body_stmts: PerFunction<StmtId>,
    /// Where a body's expressions and statements are collected before
    /// their list is kept at its exact size: one buffer that grows to the
    /// largest body, instead of a growing list per body.
    scratch_exprs: RefCell<Vec<ExprId>>,
    scratch_stmts: RefCell<Vec<StmtId>>,
}

/// The file's calls as (hash, id) pairs sorted by hash, then id: rules
/// look for a few callee names or targets, and finding them here instead of
/// scanning every expression (and following each call's box to read its
/// name) was a large share of the rules' time.
///
/// The same pass lists the file's `await` expressions, which a few rules
/// start from.
#[derive(Default)]
pub(crate) struct CallIndex {
    by_name: Box<[(u64, ExprId)]>,
    by_target: Box<[(u64, ExprId)]>,
    awaits: Box<[ExprId]>,
}

/// A list per function of the file, each worked out the first time a rule
/// asks for it.
type PerFunction<T> = OnceCell<Box<[OnceCell<Box<[T]>>]>>;

impl<'a> FileCx<'a> {
    /// A finding of `rule` at `span` with the rule's default severity.
    pub fn finding(
        &self,
        rule: &'static RuleMeta,
        span: Span,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> Finding {
        Finding {
            rule: rule.id,
            category: rule.category,
            severity: rule.severity,
            span,
            message: message.into(),
            fix: fix.into(),
            related: Vec::new(),
        }
    }

    /// The 1-based line where `span` starts, for messages.
    pub fn line_of(&self, span: Span) -> usize {
        self.text[..(span.start as usize).min(self.text.len())]
            .bytes()
            .filter(|&b| b == b'\n')
            .count()
            + 1
    }

    pub fn expr(&self, id: ExprId) -> &'a Expr {
        self.model.expr(id)
    }

    pub fn stmt(&self, id: StmtId) -> &'a Stmt {
        self.model.stmt(id)
    }

    pub fn func(&self, id: FuncId) -> &'a Function {
        self.model.func(id)
    }

    pub fn call(&self, id: ExprId) -> Option<&'a Call> {
        self.model.call(id)
    }

    /// The calls whose callee's last segment (`Call::name`) is one of
    /// `names`, detached ones included, in source order (by id): what a scan
    /// of every expression for those names finds.
    pub fn calls_named(&self, names: &[&str]) -> Vec<(ExprId, &'a Call)> {
        let index = self.call_index();
        self.calls_matching(&index.by_name, names, |c| Some(c.name.as_str()))
    }

    /// The calls whose resolved target (`Call::target`) is one of
    /// `targets`, detached ones included, in source order (by id).
    pub fn calls_to(&self, targets: &[&str]) -> Vec<(ExprId, &'a Call)> {
        let index = self.call_index();
        self.calls_matching(&index.by_target, targets, |c| c.target.as_deref())
    }

    /// The calls with one of `targets` or one of `names` (each call once),
    /// in source order: for rules that look for both kinds.
    pub fn calls_to_or_named(&self, targets: &[&str], names: &[&str]) -> Vec<(ExprId, &'a Call)> {
        let mut calls = self.calls_to(targets);
        calls.extend(self.calls_named(names));
        calls.sort_unstable_by_key(|&(id, _)| id);
        calls.dedup_by_key(|&mut (id, _)| id);
        calls
    }

    /// The file's `await` expressions, in source order (by id).
    pub fn awaits(&self) -> &[ExprId] {
        &self.call_index().awaits
    }

    fn call_index(&self) -> &CallIndex {
        self.caches.calls.get_or_init(|| {
            let mut by_name = Vec::new();
            let mut by_target = Vec::new();
            let mut awaits = Vec::new();
            for (i, e) in self.model.exprs.iter().enumerate() {
                let id = ExprId(i as u32);
                let c = match &e.kind {
                    ExprKind::Call(c) => c,
                    ExprKind::Await(_) => {
                        awaits.push(id);
                        continue;
                    }
                    _ => continue,
                };
                by_name.push((name_hash(&c.name), id));
                if let Some(t) = &c.target {
                    by_target.push((name_hash(t), id));
                }
            }
            by_name.sort_unstable();
            by_target.sort_unstable();
            CallIndex {
                by_name: by_name.into(),
                by_target: by_target.into(),
                awaits: awaits.into(),
            }
        })
    }

    fn calls_matching(
        &self,
        table: &[(u64, ExprId)],
        keys: &[&str],
        key_of: impl Fn(&Call) -> Option<&str>,
    ) -> Vec<(ExprId, &'a Call)> {
        let mut out = Vec::new();
        for (k, key) in keys.iter().enumerate() {
            if keys[..k].contains(key) {
                continue;
            }
            let h = name_hash(key);
            let start = table.partition_point(|&(x, _)| x < h);
            for &(_, id) in table[start..].iter().take_while(|&&(x, _)| x == h) {
                if let Some(c) = self.model.call(id)
                    && key_of(c) == Some(key)
                {
                    out.push((id, c));
                }
            }
        }
        if keys.len() > 1 {
            out.sort_unstable_by_key(|&(id, _)| id);
        }
        out
    }

    /// The function of this file with this qualified name; when several
    /// share it, the last one defined (the one a module-level name is bound
    /// to after the file has run).
    pub fn local_function(&self, qualname: &str) -> Option<FuncId> {
        self.local_functions(qualname).last()
    }

    /// Every function of this file with this qualified name, by id (none
    /// for the empty name), found through a table built on first use: rules
    /// ask per call, and a scan of every function each time grew with the
    /// square of the file.
    pub fn local_functions<'s>(&'s self, qualname: &'s str) -> impl Iterator<Item = FuncId> + 's {
        let by_hash = self.caches.by_qualname.get_or_init(|| {
            let mut v: Vec<(u64, FuncId)> = self
                .model
                .function_ids()
                .filter(|&f| !self.func(f).qualname.is_empty())
                .map(|f| (name_hash(&self.func(f).qualname), f))
                .collect();
            v.sort_unstable();
            v.into()
        });
        let h = name_hash(qualname);
        let start = by_hash.partition_point(|&(k, _)| k < h);
        by_hash[start..]
            .iter()
            .take_while(move |&&(k, _)| k == h)
            .filter(move |&&(_, f)| self.func(f).qualname == qualname)
            .map(|&(_, f)| f)
    }

    /// Every expression of function `f`'s body (not of the functions
    /// nested in it), in source order: what
    /// [`unsnarl_model::walk::exprs_in_block`] gives for the body. Each body
    /// is walked once, the first time a rule asks for it: several rules ask
    /// for the same functions, and walking a body again per rule was the
    /// largest single cost of the rules.
    pub fn body_exprs(&self, f: FuncId) -> &[ExprId] {
        self.per_function(
            &self.caches.body_exprs,
            &self.caches.scratch_exprs,
            f,
            |out| exprs_in_block_into(self.model, &self.func(f).body, out),
        )
    }

    /// Every statement of function `f`'s body, nested ones included, in
    /// source order (not of nested functions): what
    /// [`unsnarl_model::walk::stmts_in_block`] gives for the body, walked
    /// once per function like [`FileCx::body_exprs`].
    pub fn body_stmts(&self, f: FuncId) -> &[StmtId] {
        self.per_function(
            &self.caches.body_stmts,
            &self.caches.scratch_stmts,
            f,
            |out| stmts_in_block_into(self.model, &self.func(f).body, out),
        )
    }

    /// The list `cache` keeps for function `f`, made by `collect` the
    /// first time it is asked for (none for a function the file does not
    /// have).
    fn per_function<'c, T: Copy>(
        &self,
        cache: &'c PerFunction<T>,
        scratch: &RefCell<Vec<T>>,
        f: FuncId,
        collect: impl FnOnce(&mut Vec<T>),
    ) -> &'c [T] {
        let cells = cache.get_or_init(|| {
            (0..self.model.functions.len())
                .map(|_| OnceCell::new())
                .collect()
        });
        match cells.get(f.index()) {
            Some(cell) => cell.get_or_init(|| {
                let mut buf = scratch.borrow_mut();
                buf.clear();
                collect(&mut buf);
                Box::from(&buf[..])
            }),
            None => &[],
        }
    }

    /// The call expressions of function `f`'s body (not of nested
    /// functions), in source order (see [`FileCx::body_exprs`]).
    pub fn body_calls(&self, f: FuncId) -> impl Iterator<Item = ExprId> + '_ {
        self.body_exprs(f)
            .iter()
            .copied()
            .filter(|&e| matches!(self.expr(e).kind, ExprKind::Call(_)))
    }

    /// `f` first, then every function nested in it at any depth (closures,
    /// local functions), by id.
    pub fn with_nested(&self, f: FuncId) -> Vec<FuncId> {
        let children = self.caches.children.get_or_init(|| {
            let mut c = vec![Vec::new(); self.model.functions.len()];
            for g in self.model.function_ids() {
                if let Some(p) = self.func(g).parent
                    && let Some(siblings) = c.get_mut(p.index())
                {
                    siblings.push(g);
                }
            }
            c.into_boxed_slice()
        });
        let mut out = vec![f];
        let mut next = 0;
        // Parents form a tree; the bound only guards against a malformed
        // model looping forever.
        while next < out.len() && out.len() <= children.len() {
            out.extend_from_slice(children.get(out[next].index()).map_or(&[][..], |c| c));
            next += 1;
        }
        out[1..].sort_unstable();
        out
    }

    /// The function of this file a call runs, when its resolved target
    /// names one.
    pub fn callee_in_file(&self, c: &Call) -> Option<FuncId> {
        self.local_function(c.target.as_deref()?)
    }

    /// The parameter of `f` that receives argument `i` of `c`, a call of
    /// `f`: by keyword, or by position after the receiver parameter of a
    /// method called on an object (`self` in `self.record(exc)`). `None`
    /// after a spread argument (`*args`), which moves every position.
    pub fn param_receiving(&self, f: FuncId, c: &Call, i: usize) -> Option<&'a str> {
        let func = self.func(f);
        let arg = c.args.get(i)?;
        if let Some(k) = &arg.name {
            return func
                .params
                .iter()
                .find(|p| p.name == *k)
                .map(|p| p.name.as_str());
        }
        if c.args[..i].iter().any(|a| a.spread) || arg.spread {
            return None;
        }
        let skip = usize::from(
            c.receiver.is_some()
                && func.receiver.is_some()
                && func.params.first().map(|p| &p.name) == func.receiver.as_ref(),
        );
        func.params.get(i + skip).map(|p| p.name.as_str())
    }

    /// The source text of a span.
    pub fn source(&self, span: Span) -> &'a str {
        self.text
            .get(span.start as usize..span.end as usize)
            .unwrap_or("")
    }

    /// The first line of the code at `span`, trimmed and cut to about 60
    /// characters, for quoting in messages.
    pub fn snippet(&self, span: Span) -> String {
        // An expression written over several lines reads as one: whitespace
        // runs become one space, none just inside brackets.
        let full = self.source(span);
        let head = &full[..full.floor_char_boundary(240)];
        let mut joined = String::with_capacity(head.len());
        for word in head.split_whitespace() {
            // `f(\n  a,\n)` reads `f(a,)`; `xs\n  .filter(..)` reads
            // `xs.filter(..)`; braces keep their spaces (`{ a: 1 }`).
            let glue = !joined.is_empty()
                && !joined.ends_with(['(', '['])
                && !word.starts_with([')', ']', ',', '.'])
                && !word.starts_with("?.");
            if glue {
                joined.push(' ');
            }
            joined.push_str(word);
        }
        let s = joined.as_str();
        if s.len() <= 60 && head.len() == full.len() {
            return s.to_string();
        }
        let mut cut = &s[..s.floor_char_boundary(57)];
        // Not in the middle of a string literal: an odd count of one kind
        // of quote means the cut opened one, so stop before it.
        for q in ['"', '\'', '`'] {
            if cut.matches(q).count() % 2 == 1
                && let Some(i) = cut.rfind(q)
            {
                cut = cut[..i].trim_end();
            }
        }
        format!("{cut}...")
    }

    /// A short rendering of a callee for messages: the resolved name when
    /// known, else the callee as written.
    pub fn callee_display(&self, c: &Call) -> String {
        match &c.target {
            Some(t) => t.to_string(),
            None => {
                let s = self.source(self.expr(c.func).span);
                s.split_whitespace().collect::<Vec<_>>().join(" ")
            }
        }
    }

    /// The knowledge entry of `effect` for a call, if any.
    pub fn effect(&self, c: &Call, effect: Effect) -> Option<&'a Entry> {
        self.kb.find_for_call(effect, c)
    }

    /// True when code in `f` runs on an event loop / async runtime thread,
    /// where blocking stalls every other task: async functions and async
    /// blocks. Closures handed to an offload API are not.
    pub fn runs_on_loop(&self, f: FuncId) -> bool {
        let func = self.func(f);
        func.is_async && !self.is_offloaded(f)
    }

    /// True when `f` is a closure passed to an offload API
    /// (`asyncio.to_thread`, `spawn_blocking`, `run_in_executor`...).
    pub fn is_offloaded(&self, f: FuncId) -> bool {
        let Parent::Expr(site) = self.tree.func_site(f) else {
            return false;
        };
        let mut cur = site;
        // The closure may be wrapped (`functools.partial(...)`, a cast).
        for _ in 0..3 {
            match self.tree.expr_parent(cur) {
                Parent::Expr(p) => {
                    if let Some(c) = self.call(p)
                        && let Some(e) = self.effect(c, Effect::Offload)
                    {
                        return match e.arg {
                            None => true,
                            Some(i) => c.positional(i).is_some_and(|a| self.contains(a, site)),
                        };
                    }
                    cur = p;
                }
                _ => return false,
            }
        }
        false
    }

    /// True when `inner` is `outer` or inside it.
    pub fn contains(&self, outer: ExprId, inner: ExprId) -> bool {
        if outer == inner {
            return true;
        }
        self.tree.expr_ancestors(inner).any(|a| a == outer)
    }

    /// True when the value of expression `e` is discarded: it is an
    /// expression statement (looking through `void`-less wrappers such as
    /// casts).
    pub fn is_discarded(&self, e: ExprId) -> bool {
        let mut cur = e;
        loop {
            match self.tree.expr_parent(cur) {
                Parent::Stmt(s) => {
                    return matches!(self.stmt(s).kind, StmtKind::Expr(x) if x == cur);
                }
                Parent::Expr(p) if matches!(self.expr(p).kind, ExprKind::Cast(_)) => cur = p,
                _ => return false,
            }
        }
    }

    /// True when `e` is directly awaited.
    pub fn is_awaited(&self, e: ExprId) -> bool {
        let mut cur = e;
        loop {
            match self.tree.expr_parent(cur) {
                Parent::Expr(p) => match self.expr(p).kind {
                    ExprKind::Await(_) => return true,
                    ExprKind::Cast(_) | ExprKind::Try(_) => cur = p,
                    _ => return false,
                },
                _ => return false,
            }
        }
    }

    /// Statements enclosing the expression, innermost first.
    pub fn enclosing_stmts(&self, e: ExprId) -> Vec<StmtId> {
        match self.tree.enclosing_stmt(e) {
            Some(s) => std::iter::once(s)
                .chain(self.tree.stmt_ancestors(s))
                .collect(),
            None => Vec::new(),
        }
    }

    /// True when the expression sits inside a loop body of its function.
    pub fn in_loop(&self, e: ExprId) -> bool {
        self.enclosing_stmts(e).into_iter().any(|s| {
            matches!(
                self.stmt(s).kind,
                StmtKind::For { .. } | StmtKind::While { .. } | StmtKind::Loop { .. }
            )
        })
    }

    /// The function owning an expression.
    pub fn func_of(&self, e: ExprId) -> FuncId {
        self.tree.expr_func(e)
    }

    /// The function as an async one, for messages: "async `fetch`", or "an
    /// async anonymous function" (not "async an anonymous function").
    pub fn async_func_display(&self, f: FuncId) -> String {
        let func = self.func(f);
        if func.name.is_empty() && func.kind != FnKind::Module {
            "an async anonymous function".into()
        } else {
            format!("async {}", self.func_display(f))
        }
    }

    /// The name of the function for messages.
    pub fn func_display(&self, f: FuncId) -> String {
        let func = self.func(f);
        if !func.name.is_empty() {
            format!("`{}`", func.name)
        } else if func.kind == FnKind::Module {
            "module code".into()
        } else {
            "an anonymous function".into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Engine, all_rules, testing};

    /// Runs `check` on the context of a Python file.
    fn with_cx(text: &str, path: &str, check: impl FnOnce(&FileCx)) {
        with_cx_in(Language::Python, text, path, check)
    }

    /// The calls a full scan of the file's expressions finds with
    /// `keep`, in source order.
    fn scanned<'m>(cx: &FileCx<'m>, keep: impl Fn(&Call) -> bool) -> Vec<(ExprId, &'m Call)> {
        (0..cx.model.exprs.len())
            .map(|i| ExprId(i as u32))
            .filter_map(|id| cx.model.call(id).map(|c| (id, c)))
            .filter(|&(_, c)| keep(c))
            .collect()
    }

    fn ids(calls: &[(ExprId, &Call)]) -> Vec<ExprId> {
        calls.iter().map(|&(id, _)| id).collect()
    }

    #[test]
    fn calls_by_name_and_target_are_what_a_scan_finds() {
        let text = "import asyncio, threading\nfrom asyncio import gather\n\nasync def f(q, lock):\n    await asyncio.gather(a(), b())\n    t = threading.Thread(target=g)\n    t.start()\n    q.put(1)\n    async with lock:\n        await gather(c())\n    q.put(2)\n\ndef g():\n    lock.acquire()\n    lock.acquire()\n";
        with_cx(text, "pkg/m.py", |cx| {
            for names in [
                &["put"][..],
                &["acquire", "put"],
                &["put", "acquire", "put"],
                &["start", "nothing"],
                &["nothing"],
                &[],
            ] {
                let got = ids(&cx.calls_named(names));
                let want = ids(&scanned(cx, |c| names.contains(&c.name.as_str())));
                assert_eq!(got, want, "{names:?}");
            }
            assert_eq!(cx.calls_named(&["put"]).len(), 2);
            assert_eq!(cx.calls_named(&["acquire", "put"]).len(), 4);
            for targets in [
                &["asyncio.gather"][..],
                &["threading.Thread", "asyncio.gather"],
                &["asyncio.sleep"],
            ] {
                let got = ids(&cx.calls_to(targets));
                let want = ids(&scanned(cx, |c| {
                    c.target.as_deref().is_some_and(|t| targets.contains(&t))
                }));
                assert_eq!(got, want, "{targets:?}");
            }
            // A call found by its target and by its name comes once.
            let both =
                cx.calls_to_or_named(&["threading.Thread", "asyncio.gather"], &["put", "gather"]);
            let want = ids(&scanned(cx, |c| {
                c.target
                    .as_deref()
                    .is_some_and(|t| ["threading.Thread", "asyncio.gather"].contains(&t))
                    || ["put", "gather"].contains(&c.name.as_str())
            }));
            assert_eq!(ids(&both), want);
            assert_eq!(both.len(), 5);
            // Both spellings of the import resolve to the same target.
            assert_eq!(cx.calls_to(&["asyncio.gather"]).len(), 2);
            assert_eq!(
                cx.calls_to(&["threading.Thread", "asyncio.gather"]).len(),
                3
            );
        });
    }

    #[test]
    fn awaits_are_what_a_scan_finds() {
        let text = "async function f(q) {\n  await q.get();\n  for (const x of q) { await null; }\n  const v = await (await fetch(u)).json();\n  return () => q.put(1);\n}\nfunction g() { return 1; }\n";
        with_cx_in(Language::JavaScript, text, "src/m.js", |cx| {
            let want: Vec<ExprId> = (0..cx.model.exprs.len())
                .map(|i| ExprId(i as u32))
                .filter(|&id| matches!(cx.expr(id).kind, ExprKind::Await(_)))
                .collect();
            assert_eq!(cx.awaits(), &want[..]);
            assert_eq!(cx.awaits().len(), 4);
        });
        with_cx_in(
            Language::JavaScript,
            "function g() { return 1; }\n",
            "src/n.js",
            |cx| {
                assert!(cx.awaits().is_empty());
            },
        );
    }

    /// Runs `check` on the context of a file of `lang`.
    fn with_cx_in(lang: Language, text: &str, path: &str, check: impl FnOnce(&FileCx)) {
        let engine = Engine::new(all_rules().to_vec(), Knowledge::builtin());
        let model = testing::lower(lang, text, path);
        let (p, sums) = engine.prepare(model, lang);
        let index = ProjectIndex::build(vec![sums]);
        let tree = Tree::build(&p.model);
        check(&FileCx {
            file: 0,
            path,
            text,
            lang,
            model: &p.model,
            tree: &tree,
            sema: &p.sema,
            kb: engine.knowledge.table(lang),
            index: &index,
            caches: FileCaches::default(),
        });
    }

    /// The statements under `st` (not itself), depth first, in source
    /// order, through nested blocks but not nested functions: written
    /// without the walker `body_stmts` uses.
    fn nested_stmts(m: &FileModel, st: StmtId) -> Vec<StmtId> {
        use unsnarl_model::walk::{Child, for_each_expr_child, for_each_stmt_child};
        fn in_block(m: &FileModel, b: &Block, out: &mut Vec<StmtId>) {
            for &s in b {
                out.push(s);
                out.extend(nested_stmts(m, s));
            }
        }
        fn in_expr(m: &FileModel, e: ExprId, out: &mut Vec<StmtId>) {
            if let ExprKind::Block(b) = &m.expr(e).kind {
                in_block(m, b, out);
            } else {
                for_each_expr_child(m, e, &mut |c| in_expr(m, c, out));
            }
        }
        let mut out = Vec::new();
        for_each_stmt_child(m, st, &mut |c| match c {
            Child::Expr(e) => in_expr(m, e, &mut out),
            Child::Block(b) => in_block(m, b, &mut out),
        });
        out
    }

    #[test]
    fn snippets_are_short_and_never_end_inside_a_string() {
        let text = "x = 1\ny = load_everything_from('a-module-name-that-is-rather-long-indeed', 1)\nz = short()\n";
        with_cx(text, "a.py", |cx| {
            let at = |needle: &str| {
                let start = text.find(needle).unwrap() as u32;
                Span::new(start, text.len() as u32)
            };
            assert_eq!(cx.snippet(at("short()")), "short()");
            let long = cx.snippet(at("load_everything"));
            assert!(long.ends_with("..."), "{long}");
            assert_eq!(long, "load_everything_from(...");
            assert!(long.len() <= 60, "{long}");
        });
    }

    #[test]
    fn a_snippet_of_several_lines_reads_as_one() {
        let text = "for s in Subscription(\n    topic,\n    group\n):\n    pass\n";
        with_cx(text, "a.py", |cx| {
            let start = text.find("Subscription").unwrap() as u32;
            let end = text.find("):").unwrap() as u32 + 1;
            assert_eq!(
                cx.snippet(Span::new(start, end)),
                "Subscription(topic, group)"
            );
        });
    }

    #[test]
    fn body_expressions_are_those_a_walk_of_each_body_finds_in_every_language() {
        use unsnarl_model::walk::{calls_in_block, exprs_in_block};
        let files = [
            (
                Language::Python,
                "a.py",
                "import asyncio\nasync def f(x):\n    g = lambda y: y + h(x)\n    await asyncio.sleep(x)\n    return [k(i) for i in x]\nclass C:\n    def m(self):\n        def inner():\n            return self.n()\n        return inner\n",
            ),
            (
                Language::JavaScript,
                "a.js",
                "async function f(a) { const g = (b) => b + h(a); await sleep(a); return a.map(x => k(x)); }\nclass C { m() { return () => this.n(); } }\n",
            ),
            (
                Language::Go,
                "a.go",
                "package p\nfunc f(a int) int { g := func(b int) int { return b + h(a) }; go g(1); return k(a) }\n",
            ),
            (
                Language::Rust,
                "a.rs",
                "async fn f(a: u32) -> u32 { let g = |b: u32| b + h(a); tokio::spawn(async move { k(a).await }); g(1) }\n",
            ),
        ];
        for (lang, path, text) in files {
            with_cx_in(lang, text, path, |cx| {
                assert!(
                    cx.model.functions.len() > 2,
                    "{path}: nested functions to tell apart"
                );
                for f in cx.model.function_ids() {
                    let body = &cx.func(f).body;
                    assert_eq!(
                        cx.body_exprs(f),
                        exprs_in_block(cx.model, body),
                        "{path} {f:?}"
                    );
                    assert_eq!(
                        cx.body_calls(f).collect::<Vec<_>>(),
                        calls_in_block(cx.model, body),
                        "{path} {f:?}"
                    );
                    let mut stmts = Vec::new();
                    for &st in body {
                        stmts.push(st);
                        stmts.extend(nested_stmts(cx.model, st));
                    }
                    assert_eq!(cx.body_stmts(f), stmts, "{path} {f:?}");
                }
                let past_the_end = FuncId(cx.model.functions.len() as u32);
                assert!(cx.body_exprs(past_the_end).is_empty());
            });
        }
    }

    #[test]
    fn prepared_calls_carry_their_effects_and_answer_as_the_table_does() {
        let text = "import asyncio, time, threading\n\nasync def f(q):\n    time.sleep(1)\n    asyncio.create_task(g())\n    lock = threading.Lock()\n    await asyncio.sleep(1)\n    q.put_nowait(1)\n    print(len(q))\n\nasync def g():\n    pass\n";
        with_cx(text, "app.py", |cx| {
            let calls: Vec<&Call> = (0..cx.model.exprs.len() as u32)
                .filter_map(|i| cx.call(ExprId(i)))
                .collect();
            assert!(calls.len() >= 7, "{}", calls.len());
            let mut found = 0;
            for c in calls {
                assert_ne!(c.effects, EffectSet::UNKNOWN, "{:?}", c.target);
                for e in Effect::ALL {
                    let direct = cx.kb.find(e, c.target.as_deref(), &c.name);
                    assert_eq!(
                        cx.effect(c, e).is_some(),
                        direct.is_some(),
                        "{e:?} {:?}",
                        c.target
                    );
                    found += usize::from(direct.is_some());
                }
            }
            // sleep (blocking), create_task (spawn), Lock, asyncio.sleep.
            assert!(found >= 4, "{found}");
        });
    }

    #[test]
    fn a_go_file_takes_locks_only_with_a_lock_or_rlock_call_without_arguments() {
        let takes = |body: &str| {
            let text = format!(
                "package p\n\nimport \"sync\"\n\nvar mu sync.Mutex\n\nfunc f(l Locker) {{\n{body}\n}}\n"
            );
            let mut out = false;
            with_cx_in(Language::Go, &text, "p/p.go", |cx| {
                out = crate::go::locks::file_takes_locks(cx);
            });
            out
        };
        assert!(takes("mu.Lock()\nmu.Unlock()"));
        assert!(takes("mu.RLock()"));
        assert!(!takes("mu.Unlock()"));
        assert!(!takes("l.Lock(ctx)"));
        assert!(!takes("unlockAll()"));
    }

    #[test]
    fn local_functions_are_found_by_qualified_name_and_the_last_definition_wins() {
        let text = "def f():\n    pass\n\nclass C:\n    def m(self):\n        f()\n\ndef f():\n    return 1\n\nlambda: 0\n";
        with_cx(text, "pkg/mod.py", |cx| {
            let named = |q: &str| {
                cx.model
                    .function_ids()
                    .filter(|&f| cx.func(f).qualname == q)
                    .collect::<Vec<_>>()
            };
            let fs = named("pkg.mod.f");
            assert_eq!(fs.len(), 2, "two definitions of f");
            assert_eq!(cx.local_function("pkg.mod.f"), fs.last().copied());
            assert_eq!(
                cx.local_function("pkg.mod.C.m"),
                named("pkg.mod.C.m").first().copied()
            );
            assert!(cx.local_function("pkg.mod.C.m").is_some());
            for missing in [
                "",
                "pkg.mod",
                "pkg.mod.g",
                "pkg.mod.C",
                "pkg.mod.f.x",
                "zzz",
            ] {
                assert_eq!(cx.local_function(missing), None, "{missing:?}");
            }
            let call = cx
                .model
                .exprs
                .iter()
                .find_map(|e| match &e.kind {
                    ExprKind::Call(c) if c.name == "f" => Some(c),
                    _ => None,
                })
                .expect("the call of f");
            assert_eq!(cx.callee_in_file(call), fs.last().copied());
        });
    }

    #[test]
    fn nested_functions_are_every_function_below_at_any_depth() {
        let text = "def outer():\n    def mid():\n        def inner():\n            pass\n        return inner\n    cb = lambda: mid()\n    return cb\n\ndef other():\n    pass\n";
        with_cx(text, "m.py", |cx| {
            let id = |name: &str| {
                cx.model
                    .function_ids()
                    .find(|&f| cx.func(f).name == name)
                    .unwrap_or_else(|| panic!("no function {name}"))
            };
            let (outer, mid, inner, other) = (id("outer"), id("mid"), id("inner"), id("other"));
            let lambda = cx
                .model
                .function_ids()
                .find(|&f| cx.func(f).kind == FnKind::Closure)
                .expect("the lambda");
            let mut below_outer = [mid, inner, lambda];
            below_outer.sort();
            assert_eq!(cx.with_nested(outer)[0], outer);
            assert_eq!(cx.with_nested(outer)[1..], below_outer[..]);
            assert_eq!(cx.with_nested(mid), vec![mid, inner]);
            assert_eq!(cx.with_nested(inner), vec![inner]);
            assert_eq!(cx.with_nested(other), vec![other]);
            let module = FuncId(0);
            assert_eq!(cx.with_nested(module).len(), cx.model.functions.len());
        });
    }
}
