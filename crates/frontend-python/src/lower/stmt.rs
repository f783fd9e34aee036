//! Statements.

use super::Lowerer;
use crate::span;
use ruff_python_ast::{self as ast, ExceptHandler, Expr, Pattern, Singleton, Stmt};
use ruff_text_size::Ranged;
use unsnarl_model::builder::MAX_NESTING;
use unsnarl_model::{
    AssignOp, Block, Case, CollKind, ExprId, ExprKind, Handler, Lit, Span, StmtKind, Str, WithItem,
};

/// `if`/`elif` chains with more `elif`s than this become a subject-less
/// `Switch` (Go's `switch { case c1: ... }`) instead of `If`s nested in
/// `orelse`, so that generated thousand-branch chains do not make the model
/// arbitrarily deep.
const MAX_ELIF_CHAIN: usize = 64;

impl<'a> Lowerer<'a> {
    pub(crate) fn lower_stmt(&mut self, s: &'a Stmt, out: &mut Block) {
        let r = span(s.range());
        if self.depth >= MAX_NESTING {
            let e = self.m.opaque(r);
            out.push(self.m.add_stmt(StmtKind::Expr(e), r));
            return;
        }
        self.depth += 1;
        self.lower_stmt_inner(s, r, out);
        self.depth -= 1;
    }

    fn lower_stmt_inner(&mut self, s: &'a Stmt, r: Span, out: &mut Block) {
        let kind = match s {
            Stmt::FunctionDef(f) => {
                let is_method = self.fctx.class_body.is_some();
                let fid = self.lower_function(f);
                if is_method {
                    return;
                }
                StmtKind::FuncDef(fid)
            }
            Stmt::ClassDef(c) => return self.lower_class(c, out),
            Stmt::Return(ret) => StmtKind::Return(ret.value.as_deref().map(|v| self.lower_expr(v))),
            Stmt::Assign(a) => {
                let value = self.lower_expr(&a.value);
                let targets: Vec<ExprId> = a.targets.iter().map(|t| self.lower_target(t)).collect();
                self.record_fields(&a.targets, None, Some(value));
                StmtKind::Assign {
                    targets,
                    value: Some(value),
                    op: AssignOp::Plain,
                }
            }
            Stmt::AugAssign(a) => {
                let value = self.lower_expr(&a.value);
                let target = self.lower_target(&a.target);
                StmtKind::Assign {
                    targets: vec![target],
                    value: Some(value),
                    op: AssignOp::Augmented(super::expr::bin_op(a.op)),
                }
            }
            Stmt::AnnAssign(a) => {
                let value = a.value.as_deref().map(|v| self.lower_expr(v));
                let target = self.lower_target(&a.target);
                self.record_fields(std::slice::from_ref(&*a.target), Some(&a.annotation), value);
                // `gw: Gateway | None = state["gateway"]`: the annotation
                // types the name where the value says nothing.
                if a.target.is_name_expr() {
                    let t = self.type_ref(&a.annotation);
                    if t.resolved.is_some() {
                        self.m.declared_types.push((target, t));
                    }
                }
                StmtKind::Assign {
                    targets: vec![target],
                    value,
                    op: AssignOp::Declare { mutable: true },
                }
            }
            Stmt::For(f) => {
                let iter = self.lower_expr(&f.iter);
                let target = self.lower_expr(&f.target);
                let body = self.lower_block(&f.body);
                out.push(self.m.add_stmt(
                    StmtKind::For {
                        target: Some(target),
                        iter,
                        body,
                        is_async: f.is_async,
                    },
                    r,
                ));
                // The model's `For` has no `else`: it runs after the loop
                // (when no `break` left it), so it follows the loop, as a
                // block of its own: a `raise` there ends only the path
                // that did not break, not the code after the loop.
                if let (Some(first), Some(last)) = (f.orelse.first(), f.orelse.last()) {
                    let orelse = self.lower_block(&f.orelse);
                    let at = span(ruff_text_size::TextRange::new(first.start(), last.end()));
                    out.push(self.m.add_stmt(StmtKind::Block(orelse), at));
                }
                return;
            }
            Stmt::While(w) => StmtKind::While {
                cond: self.lower_expr(&w.test),
                body: self.lower_block(&w.body),
                orelse: self.lower_block(&w.orelse),
            },
            Stmt::If(i) => self.lower_if(i, r),
            Stmt::With(w) => {
                let items = w
                    .items
                    .iter()
                    .map(|it| WithItem {
                        ctx: self.lower_expr(&it.context_expr),
                        target: it.optional_vars.as_deref().map(|t| self.lower_expr(t)),
                    })
                    .collect();
                StmtKind::With {
                    items,
                    is_async: w.is_async,
                    body: self.lower_block(&w.body),
                }
            }
            Stmt::Match(m) => {
                let subject = self.lower_expr(&m.subject);
                let cases = m.cases.iter().map(|c| self.lower_case(c)).collect();
                StmtKind::Switch {
                    subject: Some(subject),
                    cases,
                }
            }
            // The `from cause` of a raise is dropped: it is almost always the
            // caught exception's name, and `Raise` has no slot for it.
            Stmt::Raise(ra) => StmtKind::Raise(ra.exc.as_deref().map(|e| self.lower_expr(e))),
            Stmt::Try(t) => {
                let body = self.lower_block(&t.body);
                let handlers = t
                    .handlers
                    .iter()
                    .map(|h| {
                        let ExceptHandler::ExceptHandler(h) = h;
                        let mut types = Vec::new();
                        if let Some(ty) = &h.type_ {
                            self.handler_types(ty, &mut types);
                        }
                        Handler {
                            types,
                            is_star: t.is_star,
                            name: h.name.as_ref().map(|n| n.to_string()).map(Into::into),
                            body: self.lower_block(&h.body),
                            span: span(h.range),
                        }
                    })
                    .collect();
                StmtKind::Try {
                    body,
                    handlers,
                    orelse: self.lower_block(&t.orelse),
                    finally: if t.finalbody.is_empty() {
                        None
                    } else {
                        Some(self.lower_block(&t.finalbody))
                    },
                }
            }
            // `assert c, msg` raises when `c` is false; the condition is
            // kept as the `If` condition so rules see it.
            Stmt::Assert(a) => {
                let cond = self.lower_expr(&a.test);
                let msg = a.msg.as_deref().map(|m| self.lower_expr(m));
                let raise = self.m.add_stmt(StmtKind::Raise(msg), r);
                StmtKind::If {
                    cond,
                    then: vec![raise],
                    orelse: Vec::new(),
                }
            }
            Stmt::Global(g) => StmtKind::Global {
                names: g.names.iter().map(|n| Str::from(n.as_str())).collect(),
                nonlocal: false,
            },
            Stmt::Nonlocal(g) => StmtKind::Global {
                names: g.names.iter().map(|n| Str::from(n.as_str())).collect(),
                nonlocal: true,
            },
            // A bare string statement (docstring) does nothing at run time.
            Stmt::Expr(e) if matches!(&*e.value, Expr::StringLiteral(_)) => StmtKind::Pass,
            Stmt::Expr(e) => StmtKind::Expr(self.lower_expr(&e.value)),
            Stmt::Delete(d) => {
                StmtKind::Delete(d.targets.iter().map(|t| self.lower_target(t)).collect())
            }
            Stmt::Break(_) => StmtKind::Break,
            Stmt::Continue(_) => StmtKind::Continue,
            // Imports were bound and recorded by the pre-pass.
            Stmt::Import(_)
            | Stmt::ImportFrom(_)
            | Stmt::TypeAlias(_)
            | Stmt::Pass(_)
            | Stmt::IpyEscapeCommand(_) => StmtKind::Pass,
        };
        out.push(self.m.add_stmt(kind, r));
    }

    /// An assignment target. Directly in a class body, `x = v` sets the
    /// class attribute `C.x`, and is lowered as that attribute: the class
    /// body's names are not variables of the function it is written in.
    fn lower_target(&mut self, t: &'a Expr) -> ExprId {
        let (Some(ci), Expr::Name(n)) = (self.fctx.class_body, t) else {
            return self.lower_expr(t);
        };
        if n.id.is_empty() || self.depth >= MAX_NESTING {
            return self.lower_expr(t);
        }
        let r = span(n.range);
        let qualname = self.class_qualname(ci).to_string();
        let class_name = qualname.rsplit('.').next().unwrap_or(&qualname).to_string();
        let obj = self.m.add_expr(
            ExprKind::Name {
                id: class_name.into(),
                resolved: Some(qualname.clone().into()),
            },
            r,
        );
        self.m.add_expr(
            ExprKind::Attr {
                obj,
                name: n.id.as_str().into(),
                resolved: Some(crate::path::join(&qualname, &n.id).into()),
            },
            r,
        )
    }

    fn lower_if(&mut self, i: &'a ast::StmtIf, r: Span) -> StmtKind {
        let clauses = &i.elif_else_clauses;
        let elifs = clauses.iter().filter(|c| c.test.is_some()).count();
        if elifs > MAX_ELIF_CHAIN {
            let mut cases = Vec::with_capacity(clauses.len() + 1);
            let cond = self.lower_expr(&i.test);
            cases.push(Case {
                patterns: vec![cond],
                body: self.lower_block(&i.body),
                span: r,
            });
            for c in clauses {
                cases.push(Case {
                    patterns: c.test.iter().map(|t| self.lower_expr(t)).collect(),
                    body: self.lower_block(&c.body),
                    span: span(c.range),
                });
            }
            return StmtKind::Switch {
                subject: None,
                cases,
            };
        }
        // `if False:` (or `if 0:`) never runs its body: code generators keep
        // there what only the other twin of a file emitted in sync and async
        // flavours runs (psycopg's `if False:  # ASYNC`), and a finding in
        // it is one nobody can act on.
        let never = match &*i.test {
            Expr::BooleanLiteral(b) => !b.value,
            Expr::NumberLiteral(n) => matches!(&n.value, ast::Number::Int(v) if *v == 0),
            _ => false,
        };
        StmtKind::If {
            cond: self.lower_expr(&i.test),
            then: if never {
                Vec::new()
            } else {
                self.lower_block(&i.body)
            },
            orelse: self.lower_elifs(clauses, r.end),
        }
    }

    /// `elif c: ... else: ...` → an `If` in the `orelse` of the previous one;
    /// a final `else` is the innermost `orelse`.
    fn lower_elifs(&mut self, clauses: &'a [ast::ElifElseClause], end: u32) -> Block {
        let Some((c, rest)) = clauses.split_first() else {
            return Vec::new();
        };
        let Some(test) = &c.test else {
            return self.lower_block(&c.body);
        };
        let r = Span::new(c.range.start().to_u32(), end);
        if self.depth >= MAX_NESTING {
            let e = self.m.opaque(r);
            return vec![self.m.add_stmt(StmtKind::Expr(e), r)];
        }
        self.depth += 1;
        let kind = StmtKind::If {
            cond: self.lower_expr(test),
            then: self.lower_block(&c.body),
            orelse: self.lower_elifs(rest, end),
        };
        self.depth -= 1;
        vec![self.m.add_stmt(kind, r)]
    }

    /// A `case`: its patterns (an or-pattern gives one per alternative; the
    /// wildcard `_` gives none), and its body, under an `If` when there is a
    /// guard.
    fn lower_case(&mut self, c: &'a ast::MatchCase) -> Case {
        let mut patterns = Vec::new();
        match &c.pattern {
            Pattern::MatchOr(o) => {
                for p in &o.patterns {
                    patterns.push(self.lower_pattern(p));
                }
            }
            Pattern::MatchAs(a) if a.pattern.is_none() && a.name.is_none() => {}
            p => patterns.push(self.lower_pattern(p)),
        }
        let mut body = self.lower_block(&c.body);
        if let Some(g) = &c.guard {
            let cond = self.lower_expr(g);
            let at = span(c.range);
            body = vec![self.m.add_stmt(
                StmtKind::If {
                    cond,
                    then: body,
                    orelse: Vec::new(),
                },
                at,
            )];
        }
        Case {
            patterns,
            body,
            span: span(c.range),
        }
    }

    /// A pattern as the expression it matches against: values stay values,
    /// sequences and mappings become collections, class patterns become an
    /// `Other` (never a call: `case Queue():` constructs nothing), captures
    /// become names.
    fn lower_pattern(&mut self, p: &'a Pattern) -> ExprId {
        let r = span(p.range());
        if self.depth >= MAX_NESTING {
            return self.m.opaque(r);
        }
        self.depth += 1;
        let kind = match p {
            Pattern::MatchValue(v) => {
                self.depth -= 1;
                return self.lower_expr(&v.value);
            }
            Pattern::MatchSingleton(s) => ExprKind::Literal(match s.value {
                Singleton::None => Lit::Null,
                Singleton::True => Lit::Bool(true),
                Singleton::False => Lit::Bool(false),
            }),
            Pattern::MatchSequence(s) => ExprKind::Collection {
                kind: CollKind::List,
                elems: s.patterns.iter().map(|q| self.lower_pattern(q)).collect(),
                keys: Vec::new(),
                ty: None,
            },
            Pattern::MatchMapping(m) => {
                let mut elems = Vec::with_capacity(m.patterns.len() + 1);
                let mut keys = Vec::with_capacity(m.patterns.len() + 1);
                for (i, q) in m.patterns.iter().enumerate() {
                    keys.push(match m.keys.get(i) {
                        Some(Expr::StringLiteral(s)) => Some(s.value.to_str().into()),
                        _ => None,
                    });
                    elems.push(self.lower_pattern(q));
                }
                if let Some(rest) = &m.rest {
                    let name = self.name_expr(rest.as_str(), span(rest.range));
                    elems.push(self.m.add_expr(ExprKind::Spread(name), span(rest.range)));
                    keys.push(None);
                }
                ExprKind::Collection {
                    kind: CollKind::Dict,
                    elems,
                    keys,
                    ty: None,
                }
            }
            Pattern::MatchClass(k) => {
                let mut children = vec![self.lower_expr(&k.cls)];
                for q in &k.arguments.patterns {
                    children.push(self.lower_pattern(q));
                }
                for kw in &k.arguments.keywords {
                    children.push(self.lower_pattern(&kw.pattern));
                }
                ExprKind::Other(children)
            }
            Pattern::MatchStar(s) => match &s.name {
                Some(n) => {
                    let name = self.name_expr(n.as_str(), span(n.range));
                    ExprKind::Spread(name)
                }
                None => ExprKind::Other(Vec::new()),
            },
            Pattern::MatchAs(a) => match (&a.pattern, &a.name) {
                (Some(q), _) => {
                    self.depth -= 1;
                    return self.lower_pattern(q);
                }
                (None, Some(n)) => {
                    self.depth -= 1;
                    return self.name_expr(n.as_str(), span(n.range));
                }
                (None, None) => ExprKind::Other(Vec::new()),
            },
            Pattern::MatchOr(o) => {
                ExprKind::Other(o.patterns.iter().map(|q| self.lower_pattern(q)).collect())
            }
        };
        self.depth -= 1;
        self.m.add_expr(kind, r)
    }

    /// The caught types of an `except` clause, flattened: builtin exception
    /// names stay bare (`BaseException`), others resolve through imports
    /// (`asyncio.CancelledError`) or stay as written.
    fn handler_types(&self, ty: &'a Expr, out: &mut Vec<Str>) {
        match ty {
            Expr::Tuple(t) => {
                for e in &t.elts {
                    // Nested tuples are legal but rare; one level of
                    // flattening each keeps this bounded.
                    match e {
                        Expr::Tuple(inner) => {
                            out.extend(inner.elts.iter().map(|x| Str::from(self.handler_type(x))))
                        }
                        e => out.push(self.handler_type(e).into()),
                    }
                }
            }
            e => out.push(self.handler_type(e).into()),
        }
    }

    fn handler_type(&self, e: &'a Expr) -> String {
        if let Expr::Name(n) = e
            && self.lookup(&n.id) == crate::scope::Res::Builtin
        {
            return n.id.to_string();
        }
        self.describe(e)
    }

    /// Fields declared by an assignment: annotated names in a class body
    /// (`lock: asyncio.Lock`), class attributes built by a call
    /// (`_lock = threading.Lock()`), and `self.x = ...` in `__init__`.
    fn record_fields(
        &mut self,
        targets: &'a [Expr],
        annotation: Option<&'a Expr>,
        value: Option<ExprId>,
    ) {
        if let Some(ci) = self.fctx.class_body {
            for t in targets {
                let Expr::Name(n) = t else { continue };
                let ty = match annotation {
                    Some(a) => Some(self.type_ref(a)),
                    None => value.and_then(|v| self.value_type(v, 0)),
                };
                if let Some(ty) = ty {
                    self.add_field(ci, n.id.as_str(), ty, span(n.range));
                }
            }
        } else if let Some(ci) = self.fctx.init_of {
            let receiver = self.m.func(self.fctx.id).receiver.clone();
            for t in targets {
                let Expr::Attribute(a) = t else { continue };
                let Expr::Name(obj) = &*a.value else { continue };
                if receiver.as_deref() != Some(obj.id.as_str()) {
                    continue;
                }
                let ty = match annotation {
                    Some(an) => Some(self.type_ref(an)),
                    None => value.and_then(|v| self.value_type(v, 0)),
                };
                if let Some(ty) = ty {
                    self.add_field(ci, a.attr.as_str(), ty, span(a.range));
                }
            }
        }
    }
}
