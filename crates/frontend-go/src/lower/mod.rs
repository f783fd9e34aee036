//! The lowering of a tree-sitter-go tree into the file model: the file and
//! its declarations here, statements, expressions and types in submodules.

mod expr;
mod stmt;
mod types;

use crate::kinds::{Grammar, K};
use crate::literal;
use crate::resolve::{FileScope, Local, PkgDecl, Scopes, default_import_name};
use std::cell::RefCell;
use tree_sitter::{Node, TreeCursor};
use unsnarl_model::builder::MAX_NESTING;
use unsnarl_model::{
    Block, ExprId, FileModel, FnKind, FuncId, Function, Import, Lit, Param, Span, StmtKind, TypeRef,
};

pub struct Lowerer<'s, 't> {
    g: &'static Grammar,
    src: &'s str,
    m: FileModel,
    file: FileScope<'s>,
    scopes: Scopes<'s>,
    /// Current recursion depth of the lowering, bounded by `MAX_NESTING`.
    depth: u32,
    /// The function whose body is being lowered.
    cur_fn: FuncId,
    /// Prefix for names declared in the current function (local types):
    /// the qualified name of the nearest named function, or the module.
    qual: String,
    /// An ERROR node lowered as the body of the function before it (see
    /// `orphan_body`), to be skipped by its parent's loop.
    adopted_error: Option<usize>,
    /// One cursor for all child iterations: a fresh cursor per node would
    /// allocate its stack every time.
    cursor: RefCell<TreeCursor<'t>>,
}

pub fn span(n: Node) -> Span {
    Span::new(n.start_byte() as u32, n.end_byte() as u32)
}

/// Whether `name` follows the `go test` naming of tests, benchmarks, fuzz
/// targets and examples: the prefix followed by nothing or by a character
/// that is not a lowercase letter (`TestFoo`, `Test_foo`, not `Testify`).
pub fn is_test_func_name(name: &str) -> bool {
    ["Test", "Benchmark", "Fuzz", "Example"].iter().any(|p| {
        name.strip_prefix(p)
            .is_some_and(|rest| !rest.chars().next().is_some_and(char::is_lowercase))
    })
}

impl<'s, 't> Lowerer<'s, 't> {
    pub fn new(src: &'s str, m: FileModel, root: Node<'t>) -> Lowerer<'s, 't> {
        let qual = m.module.clone();
        Lowerer {
            g: Grammar::get(),
            src,
            m,
            file: FileScope::default(),
            scopes: Scopes::default(),
            depth: 0,
            cur_fn: FuncId(0),
            qual: qual.to_string(),
            adopted_error: None,
            cursor: RefCell::new(root.walk()),
        }
    }

    pub fn finish(self) -> FileModel {
        self.m
    }

    // ----- small helpers -----

    fn k(&self, n: Node<'t>) -> K {
        self.g.k(n)
    }

    fn text(&self, n: Node<'t>) -> &'s str {
        self.src.get(n.byte_range()).unwrap_or("")
    }

    /// Named children without comments (which can appear anywhere). Not
    /// `is_extra()`: tokens skipped by error recovery are extra ERROR nodes
    /// whose contents we still want.
    fn kids(&self, n: Node<'t>) -> Vec<Node<'t>> {
        let mut out = Vec::new();
        self.each_child(n, |c| {
            if c.is_named() && self.k(c) != K::Comment {
                out.push(c);
            }
            true
        });
        out
    }

    fn first_kid(&self, n: Node<'t>) -> Option<Node<'t>> {
        let mut found = None;
        self.each_child(n, |c| {
            if c.is_named() && self.k(c) != K::Comment {
                found = Some(c);
                return false;
            }
            true
        });
        found
    }

    /// Calls `f` on each child (named or not) of `n` until it returns
    /// false. A single pass with the shared cursor: `named_children` would
    /// count the named children first.
    fn each_child(&self, n: Node<'t>, mut f: impl FnMut(Node<'t>) -> bool) {
        let Ok(mut c) = self.cursor.try_borrow_mut() else {
            // Not reachable (no callback re-enters), but never panic.
            let mut c = n.walk();
            return walk_children(&mut c, n, f);
        };
        walk_children(&mut c, n, &mut f);
    }

    fn field(&self, n: Node<'t>, id: u16) -> Option<Node<'t>> {
        n.child_by_field_id(id)
    }

    /// All named children carrying field `id` (e.g. the names of
    /// `a, b int`; commas can carry the field too and are skipped).
    fn fields(&self, n: Node<'t>, id: u16) -> Vec<Node<'t>> {
        let mut out = Vec::new();
        let Ok(mut c) = self.cursor.try_borrow_mut() else {
            return out;
        };
        c.reset(n);
        if c.goto_first_child() {
            loop {
                let node = c.node();
                if c.field_id().is_some_and(|f| f.get() == id)
                    && node.is_named()
                    && self.k(node) != K::Comment
                {
                    out.push(node);
                }
                if !c.goto_next_sibling() {
                    break;
                }
            }
        }
        out
    }

    /// Whether an anonymous token of that text is a direct child of `n`
    /// (`:=` vs `=` in range clauses and receive statements).
    fn has_token(&self, n: Node<'t>, tok: &str) -> bool {
        let mut found = false;
        self.each_child(n, |c| {
            found = !c.is_named() && c.kind() == tok;
            !found
        });
        found
    }

    /// Runs `f` one level deeper, or returns `None` when the nesting bound
    /// is reached (the caller then emits an opaque node).
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> Option<T> {
        if self.depth >= MAX_NESTING {
            return None;
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        Some(r)
    }

    fn module_qual(&self, name: &str) -> String {
        format!("{}.{}", self.m.module, name)
    }

    // ----- the file -----

    pub fn lower_file(&mut self, root: Node<'t>) {
        self.collect_file_scope(root);
        let mut body = Block::new();
        self.top_level(root, &mut body);
        self.m.functions[0].body = body;
    }

    /// Top-level declarations, in order. Also used for ERROR nodes at the
    /// top level, whose children are whatever the parser recovered.
    fn top_level(&mut self, n: Node<'t>, body: &mut Block) {
        for c in self.kids(n) {
            if self.adopted_error == Some(c.id()) {
                continue;
            }
            match self.k(c) {
                K::PackageClause | K::ImportDeclaration => {}
                K::FunctionDeclaration | K::MethodDeclaration => {
                    let id = self.func_decl(c);
                    body.push(self.m.add_stmt(StmtKind::FuncDef(id), span(c)));
                }
                K::Error => {
                    if self.nested(|this| this.top_level(c, body)).is_none() {
                        let e = self.m.opaque(span(c));
                        body.push(self.m.add_stmt(StmtKind::Expr(e), span(c)));
                    }
                }
                _ => self.stmt(c, body),
            }
        }
    }

    /// Imports and package-level names, before any lowering: Go allows
    /// using a package-level declaration before (above) it.
    fn collect_file_scope(&mut self, root: Node<'t>) {
        let mut tops = self.kids(root);
        // What the parser could not fit into a declaration still counts.
        let errors: Vec<Node<'t>> = tops
            .iter()
            .filter(|c| self.k(**c) == K::Error)
            .flat_map(|c| self.kids(*c))
            .collect();
        tops.extend(errors);
        for c in tops {
            match self.k(c) {
                K::ImportDeclaration => self.imports(c),
                K::FunctionDeclaration => {
                    if let Some(name) = self.field(c, self.g.f.name) {
                        self.file.decls.insert(self.text(name), PkgDecl::Func);
                    }
                }
                K::TypeDeclaration => {
                    for spec in self.kids(c) {
                        if let Some(name) = self.field(spec, self.g.f.name) {
                            self.file.decls.insert(self.text(name), PkgDecl::Type(None));
                        }
                    }
                }
                K::VarDeclaration | K::ConstDeclaration => {
                    let mut specs = self.kids(c);
                    if specs.len() == 1 && self.k(specs[0]) == K::VarSpecList {
                        specs = self.kids(specs[0]);
                    }
                    for spec in specs {
                        for name in self.fields(spec, self.g.f.name) {
                            let name = self.text(name);
                            if name != "_" {
                                self.file.decls.insert(name, PkgDecl::Var);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn imports(&mut self, decl: Node<'t>) {
        let mut specs = self.kids(decl);
        if specs.len() == 1 && self.k(specs[0]) == K::ImportSpecList {
            specs = self.kids(specs[0]);
        }
        for spec in specs {
            if self.k(spec) != K::ImportSpec {
                continue;
            }
            let Some(path_node) = self.field(spec, self.g.f.path) else {
                continue;
            };
            let path = match self.string_value(path_node) {
                Some(p) if !p.is_empty() => p,
                _ => continue,
            };
            let local = match self.field(spec, self.g.f.name) {
                None => default_import_name(&path).to_string(),
                Some(n) => match self.k(n) {
                    K::BlankIdentifier => continue,
                    K::Dot => {
                        self.file.dot_imports.push(path.clone());
                        "*".to_string()
                    }
                    _ => self.text(n).to_string(),
                },
            };
            if local != "*" {
                self.file.imports.insert(local.clone(), path.clone());
            }
            self.m.imports.push(Import {
                local: local.into(),
                target: path.into(),
                span: span(spec),
            });
        }
    }

    /// The value of a string literal node.
    fn string_value(&self, n: Node<'t>) -> Option<String> {
        let lit = match self.k(n) {
            K::InterpretedStringLiteral => literal::interpreted_string(self.text(n)),
            K::RawStringLiteral => literal::raw_string(self.text(n)),
            _ => return None,
        };
        match lit {
            Lit::Str(s) => Some(s.to_string()),
            _ => None,
        }
    }

    // ----- functions -----

    /// A `func` or method declaration: a new [`Function`] whose parent is
    /// the module.
    fn func_decl(&mut self, n: Node<'t>) -> FuncId {
        let g = self.g;
        let f = &g.f;
        let is_method = self.k(n) == K::MethodDeclaration;
        let name_node = self.field(n, f.name);
        let name = name_node.map_or("", |n| self.text(n));
        let mut func = Function::new(
            if is_method {
                FnKind::Method
            } else {
                FnKind::Function
            },
            span(n),
        );
        func.name = name.into();
        func.name_span = name_node.map_or_else(|| head_span(n), span);
        func.parent = Some(self.cur_fn);
        let recv = if is_method {
            self.field(n, f.receiver).and_then(|r| self.receiver(r))
        } else {
            None
        };
        match &recv {
            Some(r) => {
                let class = self.module_qual(r.type_name);
                func.qualname = format!("{class}.{name}").into();
                func.class = Some(class.into());
                func.receiver = r.name.map(Into::into);
            }
            None if is_method => {
                // A receiver we could not make sense of (syntax error).
                func.qualname = self.module_qual(name).into();
            }
            None => {
                func.qualname = self.module_qual(name).into();
                func.is_test = self.m.is_test && is_test_func_name(name);
            }
        }
        let qual = func.qualname.clone();
        let id = self.m.add_function(func);
        self.in_function(id, Some(qual.to_string()), |this| {
            if let Some(r) = &recv {
                if let Some(name) = r.name {
                    this.scopes.declare(name);
                }
                for tp in &r.type_params {
                    this.scopes.declare_as(tp, Local::TypeParam);
                }
            }
            if let Some(tps) = this.field(n, f.type_parameters) {
                this.type_params(tps);
            }
            this.signature_and_body(id, n);
        });
        id
    }

    /// A func literal: a [`FnKind::Closure`] child of the current function.
    fn func_literal(&mut self, n: Node<'t>) -> ExprId {
        let mut func = Function::new(FnKind::Closure, span(n));
        func.name_span = n.child(0).map_or_else(|| head_span(n), span);
        func.parent = Some(self.cur_fn);
        // Code inside a test function is test code too.
        func.is_test = self.m.functions[self.cur_fn.index()].is_test;
        let id = self.m.add_function(func);
        self.in_function(id, None, |this| this.signature_and_body(id, n));
        self.m
            .add_expr(unsnarl_model::ExprKind::Closure(id), span(n))
    }

    /// Runs `f` with `id` as the current function, in a fresh scope nested
    /// in the current one (closures see their parent's locals).
    fn in_function(&mut self, id: FuncId, qual: Option<String>, f: impl FnOnce(&mut Self)) {
        let saved_fn = std::mem::replace(&mut self.cur_fn, id);
        let saved_qual = qual.map(|q| std::mem::replace(&mut self.qual, q));
        self.scopes.push();
        f(self);
        self.scopes.pop();
        self.cur_fn = saved_fn;
        if let Some(q) = saved_qual {
            self.qual = q;
        }
    }

    /// Parameters, results and body of a function declaration or literal.
    fn signature_and_body(&mut self, id: FuncId, n: Node<'t>) {
        let g = self.g;
        let f = &g.f;
        let params = self
            .field(n, f.parameters)
            .map(|p| self.params(p))
            .unwrap_or_default();
        let returns = self.field(n, f.result).map(|r| self.result(r));
        let body = match self.field(n, f.body) {
            Some(b) => self.nested(|this| this.block(b)).unwrap_or_else(|| {
                let e = opaque_stmt(&mut self.m, span(b));
                vec![e]
            }),
            None if self.k(n) != K::FuncLiteral => self.orphan_body(n),
            None => Block::new(),
        };
        let func = self.m.func_mut(id);
        func.params = params;
        func.returns = returns;
        func.body = body;
    }

    /// A file cut off inside a function body parses as a body-less
    /// declaration followed by an ERROR node starting with `{` that holds
    /// the statements: lower them as the function's body.
    fn orphan_body(&mut self, n: Node<'t>) -> Block {
        let mut out = Block::new();
        let Some(next) = n.next_sibling() else {
            return out;
        };
        let opens_block = next.child(0).is_some_and(|t| t.kind() == "{");
        if self.k(next) != K::Error || !opens_block {
            return out;
        }
        let func = self.m.func_mut(self.cur_fn);
        func.span = func.span.cover(span(next));
        self.scopes.push();
        if self
            .nested(|this| this.stmt_inner(next, &mut out))
            .is_none()
        {
            out.push(opaque_stmt(&mut self.m, span(next)));
        }
        self.scopes.pop();
        // Set last: functions recovered inside may have adopted their own.
        self.adopted_error = Some(next.id());
        out
    }

    /// The parameters of a `parameter_list`, declared in the current scope.
    fn params(&mut self, list: Node<'t>) -> Vec<Param> {
        let mut out = Vec::new();
        let mut names_seen: Vec<&'s str> = Vec::new();
        for p in self.kids(list) {
            match self.k(p) {
                K::ParameterDeclaration => {
                    let ty = self.field(p, self.g.f.type_).map(|t| self.type_ref(t));
                    let names = self.fields(p, self.g.f.name);
                    if names.is_empty() {
                        out.push(Param {
                            name: String::new().into(),
                            ty,
                            default: None,
                            span: span(p),
                        });
                        continue;
                    }
                    for name in names {
                        let text = self.text(name);
                        names_seen.push(text);
                        out.push(Param {
                            name: text.into(),
                            ty: ty.clone(),
                            default: None,
                            span: span(name),
                        });
                    }
                }
                K::VariadicParameterDeclaration => {
                    let name = self.field(p, self.g.f.name);
                    // `...T` as written: the parameter is a slice of T.
                    let start = name.map_or(p.start_byte(), |n| n.end_byte());
                    let text = self.src.get(start..p.end_byte()).unwrap_or("").trim();
                    let name = name.map_or("", |n| self.text(n));
                    names_seen.push(name);
                    out.push(Param {
                        name: name.into(),
                        ty: Some(TypeRef {
                            text: text.into(),
                            resolved: None,
                        }),
                        default: None,
                        span: span(p),
                    });
                }
                _ => {}
            }
        }
        // Declared after all types are read: a parameter's type never
        // refers to another parameter.
        for name in names_seen {
            self.scopes.declare(name);
        }
        out
    }

    /// The declared result: a single type, or a parameter list (resolved
    /// when it has a single entry). Named results are declared as locals.
    fn result(&mut self, r: Node<'t>) -> TypeRef {
        if self.k(r) != K::ParameterList {
            return self.type_ref(r);
        }
        let params = self.params(r);
        let resolved = match params.as_slice() {
            [one] => one.ty.as_ref().and_then(|t| t.resolved.clone()),
            _ => None,
        };
        TypeRef {
            text: self.text(r).into(),
            resolved,
        }
    }

    fn type_params(&mut self, list: Node<'t>) {
        for decl in self.kids(list) {
            for name in self.fields(decl, self.g.f.name) {
                let name = self.text(name);
                self.scopes.declare_as(name, Local::TypeParam);
            }
        }
    }

    /// The receiver of a method: its name, base type name and the type
    /// parameters it binds (`func (l *List[T])`).
    fn receiver(&self, list: Node<'t>) -> Option<Receiver<'s>> {
        let decl = self
            .kids(list)
            .into_iter()
            .find(|c| self.k(*c) == K::ParameterDeclaration)?;
        let name = self.field(decl, self.g.f.name).map(|n| self.text(n));
        let mut ty = self.field(decl, self.g.f.type_)?;
        let mut type_params = Vec::new();
        loop {
            match self.k(ty) {
                K::PointerType | K::ParenthesizedType => ty = self.first_kid(ty)?,
                K::GenericType => {
                    if let Some(args) = self.field(ty, self.g.f.type_arguments) {
                        let mut c = args.walk();
                        for elem in args.named_children(&mut c) {
                            let mut c2 = elem.walk();
                            for id in elem.named_children(&mut c2) {
                                type_params.push(self.text(id));
                            }
                        }
                    }
                    ty = self.field(ty, self.g.f.type_)?;
                }
                K::TypeIdentifier | K::Identifier => break,
                _ => return None,
            }
        }
        Some(Receiver {
            name: name.filter(|n| !n.is_empty()),
            type_name: self.text(ty),
            type_params,
        })
    }
}

struct Receiver<'s> {
    name: Option<&'s str>,
    type_name: &'s str,
    type_params: Vec<&'s str>,
}

fn walk_children<'t>(c: &mut TreeCursor<'t>, n: Node<'t>, mut f: impl FnMut(Node<'t>) -> bool) {
    c.reset(n);
    if !c.goto_first_child() {
        return;
    }
    while f(c.node()) && c.goto_next_sibling() {}
}

/// The `func` keyword (or the node's first token) for anonymous heads.
fn head_span(n: Node) -> Span {
    let s = n.start_byte() as u32;
    Span::new(s, s + 4.min(n.end_byte() as u32 - s))
}

fn opaque_stmt(m: &mut FileModel, sp: Span) -> unsnarl_model::StmtId {
    let e = m.opaque(sp);
    m.add_stmt(StmtKind::Expr(e), sp)
}
