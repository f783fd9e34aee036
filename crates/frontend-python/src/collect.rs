//! The binding pre-pass. In Python a name assigned anywhere in a function is
//! local to all of it (even before the assignment), so each scope's bindings
//! are collected before its body is lowered: parameters, assignment and loop
//! targets, `with ... as`, `except ... as`, imports, nested `def`/`class`,
//! match captures, `global`/`nonlocal`. Nested function and class bodies
//! are not entered (they are scopes of their own). Imports are recorded in
//! the file model here, once.

use crate::lower::Lowerer;
use crate::path::join;
use crate::scope::{Binding, Scope, ScopeKind};
use crate::span;
use ruff_python_ast::{self as ast, ExceptHandler, Expr, Pattern, Stmt};
use ruff_text_size::Ranged;
use rustc_hash::FxHashMap as HashMap;
use unsnarl_model::builder::MAX_NESTING;
use unsnarl_model::{Import, Str};

struct Collector<'a, 's> {
    scope: &'s mut Scope<'a>,
    /// What a plain assignment binds: `ModuleVar` at module level, else `Local`.
    assigned: Binding,
    is_module: bool,
    /// Module level only: `X = <name or attribute chain>` candidates for
    /// aliases, and how often each name is assigned.
    aliases: Vec<(&'a str, &'a Expr)>,
    counts: HashMap<&'a str, u32>,
    /// Module level only: names bound by an import statement of the
    /// module's own body (not inside an `if`, `try` or loop).
    top_imports: Vec<&'a str>,
}

impl<'a> Lowerer<'a> {
    /// Binds into `scope` everything `body` binds. At module level, returns
    /// the names assigned exactly once from a name/attribute chain (alias
    /// candidates, see `resolve_module_aliases`).
    pub(crate) fn collect(
        &mut self,
        body: &'a [Stmt],
        scope: &mut Scope<'a>,
    ) -> Vec<(&'a str, &'a Expr)> {
        let is_module = scope.kind == ScopeKind::Module;
        let mut c = Collector {
            scope,
            assigned: if is_module {
                Binding::ModuleVar
            } else {
                Binding::Local
            },
            is_module,
            aliases: Vec::new(),
            counts: HashMap::default(),
            top_imports: Vec::new(),
        };
        self.collect_block(&mut c, body, 0);
        let Collector {
            aliases, counts, ..
        } = c;
        aliases
            .into_iter()
            .filter(|(n, _)| counts.get(n) == Some(&1))
            .collect()
    }

    fn collect_block(&mut self, c: &mut Collector<'a, '_>, body: &'a [Stmt], depth: u32) {
        if depth >= MAX_NESTING {
            return;
        }
        for s in body {
            self.collect_stmt(c, s, depth + 1);
        }
    }

    fn collect_stmt(&mut self, c: &mut Collector<'a, '_>, s: &'a Stmt, depth: u32) {
        match s {
            Stmt::FunctionDef(f) => {
                // The caller pushed this scope's own prefix already.
                let q = join(self.prefix(), f.name.as_str());
                c.scope.bind(f.name.as_str(), Binding::Qualified(q));
            }
            Stmt::ClassDef(k) => {
                let q = join(self.prefix(), k.name.as_str());
                c.scope.bind(k.name.as_str(), Binding::Qualified(q));
            }
            Stmt::Assign(a) => {
                for t in &a.targets {
                    c.target(t);
                }
                if c.is_module
                    && let [Expr::Name(n)] = a.targets.as_slice()
                    && matches!(&*a.value, Expr::Name(_) | Expr::Attribute(_))
                {
                    c.aliases.push((n.id.as_str(), &a.value));
                }
            }
            Stmt::AugAssign(a) => c.target(&a.target),
            Stmt::AnnAssign(a) => c.target(&a.target),
            Stmt::TypeAlias(a) => c.target(&a.name),
            Stmt::Delete(d) => {
                for t in &d.targets {
                    c.target(t);
                }
            }
            Stmt::For(f) => {
                c.target(&f.target);
                self.collect_block(c, &f.body, depth);
                self.collect_block(c, &f.orelse, depth);
            }
            Stmt::While(w) => {
                self.collect_block(c, &w.body, depth);
                self.collect_block(c, &w.orelse, depth);
            }
            Stmt::If(i) => {
                let mut branches = Vec::with_capacity(1 + i.elif_else_clauses.len());
                let start = self.m.imports.len();
                self.collect_block(c, &i.body, depth);
                branches.push(start..self.m.imports.len());
                for clause in &i.elif_else_clauses {
                    let start = self.m.imports.len();
                    self.collect_block(c, &clause.body, depth);
                    branches.push(start..self.m.imports.len());
                }
                if !names_the_interpreter(&self.text[i.test.range()]) {
                    self.unbind_alternative_imports(c, &branches);
                }
            }
            Stmt::With(w) => {
                for item in &w.items {
                    if let Some(v) = &item.optional_vars {
                        c.target(v);
                    }
                }
                self.collect_block(c, &w.body, depth);
            }
            Stmt::Match(m) => {
                for case in &m.cases {
                    c.pattern(&case.pattern, 0);
                    self.collect_block(c, &case.body, depth);
                }
            }
            Stmt::Try(t) => {
                self.collect_block(c, &t.body, depth);
                for h in &t.handlers {
                    let ExceptHandler::ExceptHandler(h) = h;
                    if let Some(n) = &h.name {
                        c.bind(n.as_str());
                    }
                    self.collect_block(c, &h.body, depth);
                }
                self.collect_block(c, &t.orelse, depth);
                self.collect_block(c, &t.finalbody, depth);
            }
            Stmt::Import(i) => {
                for alias in &i.names {
                    let full = alias.name.as_str();
                    let (local, target) = match &alias.asname {
                        Some(asname) => (asname.as_str(), full.to_string()),
                        // `import a.b.c` binds `a`, the top-level package.
                        None => {
                            let top = full.split('.').next().unwrap_or(full);
                            (top, top.to_string())
                        }
                    };
                    self.add_import(c, local, target, alias, depth);
                }
            }
            Stmt::ImportFrom(i) => {
                let from = i.module.as_ref().map_or("", |m| m.as_str());
                let base = if i.level > 0 {
                    join(self.names.relative_base(i.level), from)
                } else {
                    from.to_string()
                };
                for alias in &i.names {
                    let name = alias.name.as_str();
                    if name == "*" {
                        if !self.scopes.star_imports.contains(&base) {
                            self.scopes.star_imports.push(base.clone());
                        }
                        self.m.imports.push(Import {
                            local: "*".into(),
                            target: base.clone().into(),
                            span: span(alias.range),
                        });
                        continue;
                    }
                    let local = alias.asname.as_ref().map_or(name, |a| a.as_str());
                    self.add_import(c, local, join(&base, name), alias, depth);
                }
            }
            Stmt::Global(g) => {
                for n in &g.names {
                    c.scope.bind(n.as_str(), Binding::Global);
                    // `global x` in a function creates the module variable
                    // even when no module-level code assigns it.
                    if let Some(module) = self.scopes.stack.first_mut()
                        && !c.is_module
                    {
                        module.bind(n.as_str(), Binding::ModuleVar);
                    }
                }
            }
            Stmt::Nonlocal(g) => {
                for n in &g.names {
                    c.scope.bind(n.as_str(), Binding::Nonlocal);
                }
            }
            Stmt::Return(_)
            | Stmt::Raise(_)
            | Stmt::Assert(_)
            | Stmt::Expr(_)
            | Stmt::Pass(_)
            | Stmt::Break(_)
            | Stmt::Continue(_)
            | Stmt::IpyEscapeCommand(_) => {}
        }
    }

    /// `if BUILD_REST: from builtins import open as file_open` / `else: from
    /// aiofiles import open as file_open`: the branches of one `if` import
    /// different things under one name, and which runs is decided when the
    /// program runs, so the name stands for neither (it is left a plain
    /// variable). `try`/`except ImportError` fallbacks keep the first
    /// import: they name the same API.
    fn unbind_alternative_imports(
        &mut self,
        c: &mut Collector<'a, '_>,
        branches: &[std::ops::Range<usize>],
    ) {
        if branches.len() < 2 {
            return;
        }
        let mut ambiguous: Vec<Str> = Vec::new();
        for (k, b) in branches.iter().enumerate() {
            for other in &branches[k + 1..] {
                for x in &self.m.imports[b.clone()] {
                    if x.local.as_str() != "*"
                        && self.m.imports[other.clone()]
                            .iter()
                            .any(|y| y.local == x.local && y.target != x.target)
                    {
                        ambiguous.push(x.local.clone());
                    }
                }
            }
        }
        for name in ambiguous {
            if let Some((&key, _)) = c.scope.names.get_key_value(name.as_str()) {
                c.scope.names.insert(key, c.assigned.clone());
            }
        }
    }

    fn add_import(
        &mut self,
        c: &mut Collector<'a, '_>,
        local: &'a str,
        target: String,
        alias: &ast::Alias,
        depth: u32,
    ) {
        if local.is_empty() || target.is_empty() {
            // An import the parser recovered from (`import` with no name).
            return;
        }
        self.m.imports.push(Import {
            local: local.into(),
            target: target.clone().into(),
            span: span(alias.range),
        });
        // Two imports of one name in the module's own body, neither under
        // an `if` or a `try` (`from asyncio import sleep`, later `from time
        // import sleep`): both always run, in order, before any function of
        // the module is called, so the later one is what the name means.
        // Otherwise the first import stands (fallbacks name the same API).
        if c.is_module && depth == 1 {
            if c.top_imports.contains(&local) {
                if let Some((&key, _)) = c.scope.names.get_key_value(local) {
                    c.scope.names.insert(key, Binding::Qualified(target));
                }
                return;
            }
            c.top_imports.push(local);
        }
        c.scope.bind(local, Binding::Qualified(target));
    }
}

/// An `if` that picks by interpreter or platform (`sys.version_info <
/// (3, 11)`, `sys.platform == "win32"`, `PY3`, `TYPE_CHECKING`): its branches
/// import the same API from where this interpreter has it (`asyncio.timeout`
/// or its backport), so the first import stands for both.
fn names_the_interpreter(test: &str) -> bool {
    [
        "version",
        "platform",
        "TYPE_CHECKING",
        "PY2",
        "PY3",
        "PYPY",
        "os.name",
        "implementation",
    ]
    .iter()
    .any(|w| test.contains(w))
}

impl<'a> Collector<'a, '_> {
    fn bind(&mut self, name: &'a str) {
        if name.is_empty() {
            return;
        }
        if self.is_module {
            *self.counts.entry(name).or_insert(0) += 1;
        }
        self.scope.bind(name, self.assigned.clone());
    }

    fn target(&mut self, t: &'a Expr) {
        target_names(t, 0, &mut |n| self.bind(n));
    }

    /// The names a match pattern captures.
    fn pattern(&mut self, p: &'a Pattern, depth: u32) {
        if depth >= MAX_NESTING {
            return;
        }
        match p {
            Pattern::MatchValue(_) | Pattern::MatchSingleton(_) => {}
            Pattern::MatchSequence(s) => {
                for q in &s.patterns {
                    self.pattern(q, depth + 1);
                }
            }
            Pattern::MatchMapping(m) => {
                for q in &m.patterns {
                    self.pattern(q, depth + 1);
                }
                if let Some(rest) = &m.rest {
                    self.bind(rest.as_str());
                }
            }
            Pattern::MatchClass(k) => {
                for q in &k.arguments.patterns {
                    self.pattern(q, depth + 1);
                }
                for kw in &k.arguments.keywords {
                    self.pattern(&kw.pattern, depth + 1);
                }
            }
            Pattern::MatchStar(s) => {
                if let Some(n) = &s.name {
                    self.bind(n.as_str());
                }
            }
            Pattern::MatchAs(a) => {
                if let Some(q) = &a.pattern {
                    self.pattern(q, depth + 1);
                }
                if let Some(n) = &a.name {
                    self.bind(n.as_str());
                }
            }
            Pattern::MatchOr(o) => {
                for q in &o.patterns {
                    self.pattern(q, depth + 1);
                }
            }
        }
    }
}

/// Calls `f` with each name an assignment target binds (`a`, `a, (b, *c)`);
/// attributes and subscripts bind nothing.
pub(crate) fn target_names<'a>(t: &'a Expr, depth: u32, f: &mut dyn FnMut(&'a str)) {
    if depth >= MAX_NESTING {
        return;
    }
    match t {
        Expr::Name(n) => f(n.id.as_str()),
        Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
            for e in elts {
                target_names(e, depth + 1, f);
            }
        }
        Expr::Starred(s) => target_names(&s.value, depth + 1, f),
        _ => {}
    }
}
