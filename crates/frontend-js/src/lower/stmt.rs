//! Statements.

use oxc_ast::ast::{
    Declaration, ExportDefaultDeclarationKind, Expression, ForStatementInit, Function,
    ModuleDeclaration, Statement, TSModuleBlock, TSNamespaceDeclaration,
    TSNamespaceDeclarationBody, VariableDeclaration, VariableDeclarationKind,
};
use oxc_span::GetSpan;
use unsnarl_model::builder::MAX_NESTING;
use unsnarl_model::{
    AssignOp, Block, Case, ExprKind, FnKind, Handler, Lit, Span, StmtKind, WithItem,
};

use super::expr::{assign_op, update_op};
use super::{Body, FnHead, Lowerer, ThisMode, is_function_like, sp};
use crate::paths::resolve_specifier;

impl<'a> Lowerer<'a> {
    /// Lowers a statement list into a new block (sized for the usual one
    /// model statement per source statement).
    pub fn lower_block(&mut self, stmts: &[Statement<'a>]) -> Block {
        let mut b = Vec::with_capacity(stmts.len());
        self.lower_stmts(stmts, &mut b);
        b
    }

    /// Lowers a statement list into `out`.
    pub fn lower_stmts(&mut self, stmts: &[Statement<'a>], out: &mut Block) {
        for (i, s) in stmts.iter().enumerate() {
            if let Statement::VariableDeclaration(v) = s
                && matches!(
                    v.kind,
                    VariableDeclarationKind::Using | VariableDeclarationKind::AwaitUsing
                )
            {
                // `using x = r` disposes `r` when the block ends: the rest of
                // the block is the body of a context manager.
                self.lower_using(v, &stmts[i + 1..], out);
                return;
            }
            if is_overload_signature(stmts, i) {
                continue;
            }
            self.lower_stmt(s, out);
        }
    }

    fn lower_using(
        &mut self,
        v: &VariableDeclaration<'a>,
        rest: &[Statement<'a>],
        out: &mut Block,
    ) {
        let span = sp(v.span);
        if self.depth >= MAX_NESTING {
            let e = self.m.opaque(span);
            self.push_stmt(out, StmtKind::Expr(e), span);
            return;
        }
        self.depth += 1;
        let mut items = Vec::with_capacity(v.declarations.len());
        for d in &v.declarations {
            let ctx = match &d.init {
                Some(init) => self.lower_expr(init),
                None => self.m.opaque(sp(d.span)),
            };
            let target = Some(self.lower_binding_pattern(&d.id));
            items.push(WithItem { ctx, target });
        }
        let mut body = Vec::new();
        self.lower_stmts(rest, &mut body);
        self.depth -= 1;
        let end = rest.last().map_or(span.end, |s| s.span().end);
        self.push_stmt(
            out,
            StmtKind::With {
                items,
                is_async: v.kind == VariableDeclarationKind::AwaitUsing,
                body,
            },
            Span::new(span.start, end),
        );
    }

    /// Lowers a statement used as a body (`if (c) stmt`, loop bodies): a
    /// block's statements directly, anything else as a one-statement block.
    fn lower_body(&mut self, s: &Statement<'a>) -> Block {
        match s {
            Statement::BlockStatement(bs) => self.lower_block(&bs.body),
            other => {
                let mut b = Vec::with_capacity(1);
                self.lower_stmt(other, &mut b);
                b
            }
        }
    }

    pub fn lower_stmt(&mut self, s: &Statement<'a>, out: &mut Block) {
        let span = sp(s.span());
        if self.depth >= MAX_NESTING {
            let e = self.m.opaque(span);
            self.push_stmt(out, StmtKind::Expr(e), span);
            return;
        }
        self.depth += 1;
        self.lower_stmt_inner(s, span, out);
        self.depth -= 1;
    }

    fn lower_stmt_inner(&mut self, s: &Statement<'a>, span: Span, out: &mut Block) {
        let kind = match s {
            Statement::BlockStatement(b) => StmtKind::Block(self.lower_block(&b.body)),
            Statement::BreakStatement(_) => StmtKind::Break,
            Statement::ContinueStatement(_) => StmtKind::Continue,
            Statement::DebuggerStatement(_) | Statement::EmptyStatement(_) => return,
            Statement::DoWhileStatement(d) => {
                let body = self.lower_body(&d.body);
                let cond = self.lower_expr(&d.test);
                StmtKind::While {
                    cond,
                    body,
                    orelse: Vec::new(),
                }
            }
            Statement::ExpressionStatement(e) => {
                return self.lower_expr_stmt(&e.expression, span, out);
            }
            Statement::ForInStatement(f) => {
                let iter = self.lower_expr(&f.right);
                let target = Some(self.lower_for_left(&f.left));
                let body = self.lower_body(&f.body);
                StmtKind::For {
                    target,
                    iter,
                    body,
                    is_async: false,
                }
            }
            Statement::ForOfStatement(f) => {
                let iter = self.lower_expr(&f.right);
                let target = Some(self.lower_for_left(&f.left));
                let body = self.lower_body(&f.body);
                StmtKind::For {
                    target,
                    iter,
                    body,
                    is_async: f.r#await,
                }
            }
            Statement::ForStatement(f) => {
                // `for (init; cond; step) body` → `init; while (cond) { body; step }`.
                match &f.init {
                    Some(ForStatementInit::VariableDeclaration(v)) => self.lower_var_decl(v, out),
                    Some(init) => {
                        if let Some(e) = init.as_expression() {
                            self.lower_expr_stmt(e, sp(e.span()), out);
                        }
                    }
                    None => {}
                }
                let cond = match &f.test {
                    Some(t) => self.lower_expr(t),
                    None => self.lit(Lit::Bool(true), span),
                };
                let mut body = self.lower_body(&f.body);
                if let Some(u) = &f.update {
                    self.lower_expr_stmt(u, sp(u.span()), &mut body);
                }
                StmtKind::While {
                    cond,
                    body,
                    orelse: Vec::new(),
                }
            }
            Statement::IfStatement(i) => {
                let cond = self.lower_expr(&i.test);
                let then = self.lower_body(&i.consequent);
                let orelse = match &i.alternate {
                    Some(a) => self.lower_body(a),
                    None => Vec::new(),
                };
                StmtKind::If { cond, then, orelse }
            }
            Statement::LabeledStatement(l) => return self.lower_stmt(&l.body, out),
            Statement::ReturnStatement(r) => {
                StmtKind::Return(r.argument.as_ref().map(|a| self.lower_expr(a)))
            }
            Statement::SwitchStatement(sw) => {
                let subject = Some(self.lower_expr(&sw.discriminant));
                let mut cases = Vec::with_capacity(sw.cases.len());
                for c in &sw.cases {
                    let patterns = c
                        .test
                        .as_ref()
                        .map(|t| self.lower_expr(t))
                        .into_iter()
                        .collect();
                    let body = self.lower_block(&c.consequent);
                    cases.push(Case {
                        patterns,
                        body,
                        span: sp(c.span),
                    });
                }
                StmtKind::Switch { subject, cases }
            }
            Statement::ThrowStatement(t) => StmtKind::Raise(Some(self.lower_expr(&t.argument))),
            Statement::TryStatement(t) => {
                let body = self.lower_block(&t.block.body);
                let handlers = match &t.handler {
                    Some(h) => {
                        let name =
                            h.param
                                .as_ref()
                                .map(|p| match p.pattern.get_identifier_name() {
                                    Some(n) => n.as_str().to_string(),
                                    None => self.slice(p.pattern.span()).to_string(),
                                });
                        let hb = self.lower_block(&h.body.body);
                        vec![Handler {
                            types: Vec::new(),
                            is_star: false,
                            name: name.map(Into::into),
                            body: hb,
                            span: sp(h.span),
                        }]
                    }
                    None => Vec::new(),
                };
                let finally = t.finalizer.as_ref().map(|f| self.lower_block(&f.body));
                StmtKind::Try {
                    body,
                    handlers,
                    orelse: Vec::new(),
                    finally,
                }
            }
            Statement::WhileStatement(w) => {
                let cond = self.lower_expr(&w.test);
                let body = self.lower_body(&w.body);
                StmtKind::While {
                    cond,
                    body,
                    orelse: Vec::new(),
                }
            }
            Statement::WithStatement(w) => {
                // JS `with (obj) body` is not a context manager: evaluate the
                // object, then the body.
                let obj = self.lower_expr(&w.object);
                self.push_stmt(out, StmtKind::Expr(obj), sp(w.object.span()));
                StmtKind::Block(self.lower_body(&w.body))
            }
            Statement::VariableDeclaration(v) => return self.lower_var_decl(v, out),
            Statement::FunctionDeclaration(f) => return self.lower_fn_decl(f, false, out),
            Statement::ClassDeclaration(c) => {
                let name = c.id.as_ref().map_or("default", |i| i.name.as_str());
                let qualname = self.decl_qualname(name);
                self.lower_class(c, name.to_string(), qualname, Some(out));
                return;
            }
            Statement::TSInterfaceDeclaration(i) => return self.lower_interface(i),
            Statement::TSTypeAliasDeclaration(_)
            | Statement::TSEnumDeclaration(_)
            | Statement::TSImportEqualsDeclaration(_) => return,
            Statement::TSNamespaceDeclaration(n) => return self.lower_namespace(n, out),
            Statement::TSExternalModuleDeclaration(d) => {
                if let Some(body) = &d.body {
                    let ns = resolve_specifier(d.id.value.as_str(), self.module_dir);
                    self.lower_ns_body(ns, body, span, out);
                }
                return;
            }
            Statement::TSGlobalDeclaration(g) => {
                let ns = self.cur().ns.to_string();
                return self.lower_ns_body(ns, &g.body, span, out);
            }
            _ => match s.as_module_declaration() {
                Some(md) => return self.lower_module_decl(md, span, out),
                None => return,
            },
        };
        self.push_stmt(out, kind, span);
    }

    /// An expression statement: assignments and `x++` become `Assign`
    /// statements; anything else an `Expr` statement.
    fn lower_expr_stmt(&mut self, e: &Expression<'a>, span: Span, out: &mut Block) {
        let kind = match e {
            Expression::AssignmentExpression(a) => {
                let hint = self.assign_hint(&a.left, &a.right);
                let value = self.lower_value(&a.right, hint.as_deref());
                let target = self.lower_assign_target(&a.left);
                StmtKind::Assign {
                    targets: vec![target],
                    value: Some(value),
                    op: assign_op(a.operator),
                }
            }
            Expression::UpdateExpression(u) => {
                let target = self.lower_simple_target(&u.argument);
                let one = self.lit(Lit::Int(1), span);
                StmtKind::Assign {
                    targets: vec![target],
                    value: Some(one),
                    op: AssignOp::Augmented(update_op(u.operator)),
                }
            }
            Expression::ParenthesizedExpression(p) => {
                return self.lower_expr_stmt(&p.expression, span, out);
            }
            other => StmtKind::Expr(self.lower_expr(other)),
        };
        self.push_stmt(out, kind, span);
    }

    pub fn lower_var_decl(&mut self, v: &VariableDeclaration<'a>, out: &mut Block) {
        let mutable = matches!(
            v.kind,
            VariableDeclarationKind::Var | VariableDeclarationKind::Let
        );
        let single = v.declarations.len() == 1;
        for d in &v.declarations {
            let hint = match (&d.id.get_identifier_name(), &d.init) {
                (Some(n), Some(init)) if is_function_like(init) => self.local_binding(n.as_str()),
                (Some(n), Some(Expression::ObjectExpression(_))) if !mutable => {
                    // Object literals bound at module level name their methods
                    // `<module>.<var>.<key>`, as calls through them resolve.
                    self.local_binding(n.as_str())
                        .filter(|q| self.in_module() && self.is_own(q))
                }
                _ => None,
            };
            let value = d
                .init
                .as_ref()
                .map(|i| self.lower_value(i, hint.as_deref()));
            let target = self.lower_binding_pattern(&d.id);
            let span = if single { sp(v.span) } else { sp(d.span) };
            self.push_stmt(
                out,
                StmtKind::Assign {
                    targets: vec![target],
                    value,
                    op: AssignOp::Declare { mutable },
                },
                span,
            );
        }
    }

    /// A function declaration: a [`Function`] plus a `FuncDef` statement.
    fn lower_fn_decl(&mut self, f: &Function<'a>, default_export: bool, out: &mut Block) {
        let (name, name_span) = match &f.id {
            Some(id) => (id.name.as_str(), sp(id.span)),
            None => ("default", self.keyword_span(sp(f.span), "function")),
        };
        let qualname = if default_export && f.id.is_none() {
            format!("{}.default", self.m.module)
        } else {
            self.decl_qualname(name)
        };
        let mut head = FnHead::new(FnKind::Function, sp(f.span), name_span);
        head.name = name.to_string();
        head.qualname = qualname;
        head.this = ThisMode::Dynamic;
        let body = match &f.body {
            Some(b) => Body::Block(b),
            None => Body::Empty,
        };
        let fid = self.lower_function(
            head,
            f.r#async,
            f.generator,
            Some(&f.params),
            f.return_type.as_deref(),
            body,
            &[],
        );
        self.push_stmt(out, StmtKind::FuncDef(fid), sp(f.span));
    }

    fn lower_module_decl(&mut self, md: &ModuleDeclaration<'a>, span: Span, out: &mut Block) {
        match md {
            ModuleDeclaration::ExportDeclaration(e) => self.lower_declaration(&e.declaration, out),
            ModuleDeclaration::ExportDefaultDeclaration(e) => match &e.declaration {
                ExportDefaultDeclarationKind::FunctionDeclaration(f) => {
                    self.lower_fn_decl(f, true, out)
                }
                ExportDefaultDeclarationKind::ClassDeclaration(c) => {
                    let (name, qualname) = match &c.id {
                        Some(id) => (id.name.as_str(), self.decl_qualname(id.name.as_str())),
                        None => ("default", format!("{}.default", self.m.module)),
                    };
                    self.lower_class(c, name.to_string(), qualname, Some(out));
                }
                ExportDefaultDeclarationKind::TSInterfaceDeclaration(i) => self.lower_interface(i),
                other => {
                    if let Some(x) = other.as_expression() {
                        let q = format!("{}.default", self.m.module);
                        self.lower_default_export(x, q, span, out);
                    }
                }
            },
            // `export = <expr>` is CommonJS's `module.exports = <expr>`: the
            // value is the module itself.
            ModuleDeclaration::TSExportAssignment(e) => {
                let q = self.m.module.clone();
                self.lower_default_export(&e.expression, q.to_string(), span, out)
            }
            // Imports and re-exports bind names (see `collect`) but run no
            // code worth modelling.
            _ => {}
        }
    }

    fn lower_declaration(&mut self, d: &Declaration<'a>, out: &mut Block) {
        self.lower_stmt(d.as_statement(), out);
    }

    /// `export default <expr>` / `export = <expr>`: the value is bound to the
    /// module's export `q` (not discarded, so not an `Expr` statement).
    fn lower_default_export(&mut self, e: &Expression<'a>, q: String, span: Span, out: &mut Block) {
        let value = self.lower_value(e, Some(&q));
        let target = self.m.add_expr(
            ExprKind::Name {
                id: "default".into(),
                resolved: Some(q.into()),
            },
            span,
        );
        self.push_stmt(
            out,
            StmtKind::Assign {
                targets: vec![target],
                value: Some(value),
                op: AssignOp::Declare { mutable: false },
            },
            span,
        );
    }

    fn lower_namespace(&mut self, n: &TSNamespaceDeclaration<'a>, out: &mut Block) {
        if self.depth >= MAX_NESTING {
            return;
        }
        let ns = format!("{}.{}", self.cur().ns, n.id.name.as_str());
        match &n.body {
            TSNamespaceDeclarationBody::TSModuleBlock(b) => {
                self.lower_ns_body(ns, b, sp(n.span), out)
            }
            TSNamespaceDeclarationBody::TSNamespaceDeclaration(inner) => {
                // `namespace A.B {}`: the inner declaration nests under `A`.
                let saved = std::mem::replace(&mut self.fns.last_mut().unwrap().ns, ns.into());
                self.ns_depth += 1;
                self.depth += 1;
                self.lower_namespace(inner, out);
                self.depth -= 1;
                self.ns_depth -= 1;
                self.fns.last_mut().unwrap().ns = saved;
            }
        }
    }

    /// The body of a namespace or `declare module 'x'`: lowered in place as a
    /// block, with definitions named under `ns`.
    fn lower_ns_body(&mut self, ns: String, b: &TSModuleBlock<'a>, span: Span, out: &mut Block) {
        let saved = std::mem::replace(&mut self.fns.last_mut().unwrap().ns, ns.into());
        self.ns_depth += 1;
        let mut body = Vec::new();
        self.lower_stmts(&b.body, &mut body);
        self.ns_depth -= 1;
        self.fns.last_mut().unwrap().ns = saved;
        if !body.is_empty() {
            self.push_stmt(out, StmtKind::Block(body), span);
        }
    }
}

/// The function declared by a statement (possibly exported).
fn declared_function<'b, 'a>(s: &'b Statement<'a>) -> Option<&'b Function<'a>> {
    match s {
        Statement::FunctionDeclaration(f) => Some(f),
        Statement::ExportDeclaration(e) => match &e.declaration {
            Declaration::FunctionDeclaration(f) => Some(f),
            _ => None,
        },
        Statement::ExportDefaultDeclaration(e) => match &e.declaration {
            ExportDefaultDeclarationKind::FunctionDeclaration(f) => Some(f),
            _ => None,
        },
        _ => None,
    }
}

/// TS overload signatures (`function f(a: string): void;` followed by more
/// signatures and the implementation) are skipped: the implementation is the
/// function, and one definition per name keeps the project index simple.
fn is_overload_signature(stmts: &[Statement<'_>], i: usize) -> bool {
    let Some(f) = declared_function(&stmts[i]) else {
        return false;
    };
    if f.body.is_some() {
        return false;
    }
    let Some(name) = f.id.as_ref().map(|id| id.name.as_str()) else {
        return false;
    };
    for s in &stmts[i + 1..] {
        let Some(g) = declared_function(s) else {
            return false;
        };
        if g.id.as_ref().map(|id| id.name.as_str()) != Some(name) {
            return false;
        }
        if g.body.is_some() {
            return true;
        }
    }
    false
}
