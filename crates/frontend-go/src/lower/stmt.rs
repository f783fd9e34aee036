//! Statements.

use super::{Lowerer, span};
use crate::kinds::K;
use tree_sitter::Node;
use unsnarl_model::{
    ArmKind, AssignOp, BinOp, Block, Case, CollKind, ExprId, ExprKind, Lit, SelectArm, Span,
    StmtKind, TypeRef,
};

impl<'s, 't> Lowerer<'s, 't> {
    /// A `{ ... }` block in its own scope.
    pub(super) fn block(&mut self, n: Node<'t>) -> Block {
        let mut out = Block::new();
        self.scopes.push();
        self.stmts_in(n, &mut out);
        self.scopes.pop();
        out
    }

    /// The statements directly in `n` (a block, a case clause, a statement
    /// list), in order.
    fn stmts_in(&mut self, n: Node<'t>, out: &mut Block) {
        for c in self.kids(n) {
            match self.k(c) {
                K::StatementList => {
                    for s in self.kids(c) {
                        self.stmt(s, out);
                    }
                }
                _ => self.stmt(c, out),
            }
        }
    }

    /// Lowers one statement into zero or more model statements.
    pub(super) fn stmt(&mut self, n: Node<'t>, out: &mut Block) {
        if self.adopted_error == Some(n.id()) {
            return;
        }
        if self.nested(|this| this.stmt_inner(n, out)).is_none() {
            let e = self.m.opaque(span(n));
            out.push(self.m.add_stmt(StmtKind::Expr(e), span(n)));
        }
    }

    fn push(&mut self, out: &mut Block, kind: StmtKind, sp: Span) {
        out.push(self.m.add_stmt(kind, sp));
    }

    pub(super) fn stmt_inner(&mut self, n: Node<'t>, out: &mut Block) {
        let sp = span(n);
        let g = self.g;
        let f = &g.f;
        match self.k(n) {
            K::ExpressionStatement => {
                if let Some(e) = self.first_kid(n) {
                    let e = self.expr(e);
                    self.push(out, StmtKind::Expr(e), sp);
                }
            }
            K::SendStatement => {
                let e = self.send(n);
                self.push(out, StmtKind::Expr(e), sp);
            }
            K::IncStatement | K::DecStatement => {
                let Some(target) = self.first_kid(n) else {
                    return;
                };
                let target = self.expr(target);
                // The value is the implicit 1, spanning the `++`/`--` token.
                let tok = n.child(n.child_count().saturating_sub(1)).map_or(sp, span);
                let one = self.m.add_expr(ExprKind::Literal(Lit::Int(1)), tok);
                let op = if self.k(n) == K::IncStatement {
                    BinOp::Add
                } else {
                    BinOp::Sub
                };
                self.push(
                    out,
                    StmtKind::Assign {
                        targets: vec![target],
                        value: Some(one),
                        op: AssignOp::Augmented(op),
                    },
                    sp,
                );
            }
            K::AssignmentStatement => {
                let op = self
                    .field(n, f.operator)
                    .map_or(AssignOp::Plain, |o| assign_op(o.kind()));
                let value = self.field(n, f.right).map(|r| self.expr_list(r));
                let target = self.field(n, f.left).map(|l| self.expr_list(l));
                self.push(
                    out,
                    StmtKind::Assign {
                        targets: target.into_iter().collect(),
                        value,
                        op,
                    },
                    sp,
                );
            }
            K::ShortVarDeclaration => {
                // The value is evaluated before the names exist:
                // `x := x + 1` in an inner scope reads the outer `x`.
                let value = self.field(n, f.right).map(|r| self.expr_list(r));
                let target = self.field(n, f.left).map(|l| {
                    self.declare_names(l);
                    self.expr_list(l)
                });
                self.push(
                    out,
                    StmtKind::Assign {
                        targets: target.into_iter().collect(),
                        value,
                        op: AssignOp::Declare { mutable: true },
                    },
                    sp,
                );
            }
            K::VarDeclaration | K::ConstDeclaration => self.var_decl(n, out),
            K::TypeDeclaration => self.type_decl(n, out),
            K::ReturnStatement => {
                let value = self.first_kid(n).map(|l| self.expr_list(l));
                self.push(out, StmtKind::Return(value), sp);
            }
            K::GoStatement | K::DeferStatement => {
                let Some(call) = self.first_kid(n) else {
                    return;
                };
                let call = self.expr(call);
                let kind = if self.k(n) == K::GoStatement {
                    StmtKind::Go(call)
                } else {
                    StmtKind::Defer(call)
                };
                self.push(out, kind, sp);
            }
            K::IfStatement => self.if_stmt(n, out),
            K::ForStatement => self.for_stmt(n, out),
            K::ExpressionSwitchStatement | K::TypeSwitchStatement => self.switch(n, out),
            K::SelectStatement => self.select(n, out),
            K::LabeledStatement => {
                // The label is only a jump target; the statement is what runs.
                for c in self.kids(n) {
                    if self.k(c) != K::LabelName {
                        self.stmt(c, out);
                    }
                }
            }
            K::BreakStatement => self.push(out, StmtKind::Break, sp),
            K::ContinueStatement => self.push(out, StmtKind::Continue, sp),
            K::FallthroughStatement | K::GotoStatement => self.push(out, StmtKind::Pass, sp),
            K::Block => {
                let b = self.block(n);
                self.push(out, StmtKind::Block(b), sp);
            }
            K::StatementList => self.stmts_in(n, out),
            K::EmptyStatement => {}
            K::FunctionDeclaration | K::MethodDeclaration => {
                // Only reachable through error recovery (Go has no nested
                // named functions), but the function is still worth keeping.
                let id = self.func_decl(n);
                self.push(out, StmtKind::FuncDef(id), sp);
            }
            K::Error => {
                // Lower whatever the parser recovered inside the error.
                for c in self.kids(n) {
                    self.stmt(c, out);
                }
            }
            k if is_expr_kind(k) => {
                let e = self.expr(n);
                self.push(out, StmtKind::Expr(e), sp);
            }
            _ => {}
        }
    }

    /// Declares the identifiers of a `:=` / range / receive left-hand side.
    fn declare_names(&mut self, list: Node<'t>) {
        for c in self.kids(list) {
            if self.k(c) == K::Identifier {
                let name = self.text(c);
                self.scopes.declare(name);
            }
        }
    }

    /// `ch <- v`.
    pub(super) fn send(&mut self, n: Node<'t>) -> ExprId {
        let g = self.g;
        let f = &g.f;
        let channel = self.opt_expr(self.field(n, f.channel), n);
        let value = self.opt_expr(self.field(n, f.value), n);
        self.m.add_expr(ExprKind::Send { channel, value }, span(n))
    }

    /// `var`/`const` declarations (single spec or parenthesized list).
    fn var_decl(&mut self, n: Node<'t>, out: &mut Block) {
        let is_const = self.k(n) == K::ConstDeclaration;
        let mut specs = self.kids(n);
        if specs.len() == 1 && self.k(specs[0]) == K::VarSpecList {
            specs = self.kids(specs[0]);
        }
        let single = specs.len() == 1;
        for spec in specs {
            if !matches!(self.k(spec), K::VarSpec | K::ConstSpec) {
                continue;
            }
            // A lone spec is the whole statement; in a list each spec is.
            let sp = if single { span(n) } else { span(spec) };
            self.var_spec(spec, is_const, sp, out);
        }
    }

    /// `var a, b T = x, y` / `const c = iota`. Without a value, each `var`
    /// name gets the zero value of its type: an empty struct-kind
    /// `Collection` carrying the type.
    fn var_spec(&mut self, spec: Node<'t>, is_const: bool, sp: Span, out: &mut Block) {
        let g = self.g;
        let f = &g.f;
        let names = self.fields(spec, f.name);
        let ty = self.field(spec, f.type_);
        let op = AssignOp::Declare { mutable: !is_const };
        match self.field(spec, f.value) {
            Some(v) => {
                let value = self.expr_list(v);
                for name in &names {
                    let name = self.text(*name);
                    self.scopes.declare(name);
                }
                let target = self.names_target(&names, span(spec));
                self.push(
                    out,
                    StmtKind::Assign {
                        targets: vec![target],
                        value: Some(value),
                        op,
                    },
                    sp,
                );
            }
            None => {
                for name in names {
                    let text = self.text(name);
                    self.scopes.declare(text);
                    let target = self.expr(name);
                    let value = match ty {
                        Some(t) if !is_const => Some(self.zero_value(t)),
                        _ => None,
                    };
                    self.push(
                        out,
                        StmtKind::Assign {
                            targets: vec![target],
                            value,
                            op,
                        },
                        sp,
                    );
                }
            }
        }
    }

    /// The zero value of type `t`.
    fn zero_value(&mut self, t: Node<'t>) -> ExprId {
        let ty: TypeRef = self.type_ref(t);
        self.m.add_expr(
            ExprKind::Collection {
                kind: CollKind::Struct,
                elems: Vec::new(),
                keys: Vec::new(),
                ty: Some(Box::new(ty)),
            },
            span(t),
        )
    }

    /// One name, or a tuple of names.
    fn names_target(&mut self, names: &[Node<'t>], sp: Span) -> ExprId {
        if let [one] = names {
            return self.expr(*one);
        }
        let elems = names.iter().map(|n| self.expr(*n)).collect();
        self.m.add_expr(
            ExprKind::Collection {
                kind: CollKind::Tuple,
                elems,
                keys: Vec::new(),
                ty: None,
            },
            sp,
        )
    }

    /// `if [init;] cond {} [else ...]`. An init statement is scoped to the
    /// `if`, so it lowers as `Block[init, If]`.
    fn if_stmt(&mut self, n: Node<'t>, out: &mut Block) {
        let g = self.g;
        let f = &g.f;
        let Some(init) = self.field(n, f.initializer) else {
            let s = self.if_core(n);
            out.push(s);
            return;
        };
        self.scopes.push();
        let mut inner = Block::new();
        self.stmt(init, &mut inner);
        let s = self.if_core(n);
        inner.push(s);
        self.scopes.pop();
        self.push(out, StmtKind::Block(inner), span(n));
    }

    fn if_core(&mut self, n: Node<'t>) -> unsnarl_model::StmtId {
        let g = self.g;
        let f = &g.f;
        let cond = self.opt_expr(self.field(n, f.condition), n);
        let then = self
            .field(n, f.consequence)
            .map(|b| self.block(b))
            .unwrap_or_default();
        let mut orelse = Block::new();
        if let Some(alt) = self.field(n, f.alternative) {
            match self.k(alt) {
                K::Block => orelse = self.block(alt),
                _ => self.stmt(alt, &mut orelse),
            }
        }
        self.m
            .add_stmt(StmtKind::If { cond, then, orelse }, span(n))
    }

    /// The three `for` forms plus `range`.
    fn for_stmt(&mut self, n: Node<'t>, out: &mut Block) {
        let g = self.g;
        let f = &g.f;
        let sp = span(n);
        let body_node = self.field(n, f.body);
        let clause = self.kids(n).into_iter().find(|c| Some(*c) != body_node);
        self.scopes.push();
        match clause.map(|c| (c, self.k(c))) {
            None => {
                let body = self.opt_block(body_node);
                self.push(out, StmtKind::Loop { body }, sp);
            }
            Some((c, K::ForClause)) => {
                let mut prefix = Block::new();
                if let Some(init) = self.field(c, f.initializer) {
                    self.stmt(init, &mut prefix);
                }
                let cond = self.field(c, f.condition).map(|e| self.expr(e));
                let mut body = self.opt_block(body_node);
                // The post statement runs after each iteration of the body.
                if let Some(update) = self.field(c, f.update) {
                    self.stmt(update, &mut body);
                }
                let kind = match cond {
                    Some(cond) => StmtKind::While {
                        cond,
                        body,
                        orelse: Block::new(),
                    },
                    None => StmtKind::Loop { body },
                };
                if prefix.is_empty() {
                    self.push(out, kind, sp);
                } else {
                    let lp = self.m.add_stmt(kind, sp);
                    prefix.push(lp);
                    self.push(out, StmtKind::Block(prefix), sp);
                }
            }
            Some((c, K::RangeClause)) => {
                let iter = self.opt_expr(self.field(c, f.right), c);
                let target = self.field(c, f.left).map(|l| {
                    if self.has_token(c, ":=") {
                        self.declare_names(l);
                    }
                    self.expr_list(l)
                });
                let body = self.opt_block(body_node);
                self.push(
                    out,
                    StmtKind::For {
                        target,
                        iter,
                        body,
                        is_async: false,
                    },
                    sp,
                );
            }
            Some((c, _)) => {
                let cond = self.expr(c);
                let body = self.opt_block(body_node);
                self.push(
                    out,
                    StmtKind::While {
                        cond,
                        body,
                        orelse: Block::new(),
                    },
                    sp,
                );
            }
        }
        self.scopes.pop();
    }

    fn opt_block(&mut self, b: Option<Node<'t>>) -> Block {
        b.map(|b| self.block(b)).unwrap_or_default()
    }

    /// Expression and type switches. The init statement wraps the switch
    /// in a `Block` like `if`. Type switch cases have the types as `Path`
    /// patterns; the subject is the asserted value (as a `Cast`).
    fn switch(&mut self, n: Node<'t>, out: &mut Block) {
        let g = self.g;
        let f = &g.f;
        let sp = span(n);
        let is_type = self.k(n) == K::TypeSwitchStatement;
        self.scopes.push();
        let mut prefix = Block::new();
        if let Some(init) = self.field(n, f.initializer) {
            self.stmt(init, &mut prefix);
        }
        let subject = self.field(n, f.value).map(|v| {
            let e = self.expr(v);
            if is_type {
                self.m.add_expr(ExprKind::Cast(e), span(v))
            } else {
                e
            }
        });
        let alias = if is_type {
            self.field(n, f.alias)
        } else {
            None
        };
        let mut cases = Vec::new();
        for c in self.kids(n) {
            let patterns_field = match self.k(c) {
                K::ExpressionCase => f.value,
                K::TypeCase => f.type_,
                K::DefaultCase => 0,
                _ => continue,
            };
            self.scopes.push();
            if let Some(a) = alias {
                self.declare_names(a);
            }
            let patterns: Vec<ExprId> = if patterns_field == 0 {
                Vec::new()
            } else if is_type {
                let types = self.fields(c, patterns_field);
                types
                    .into_iter()
                    .map(|t| {
                        // `case nil:` is the nil interface, not a type.
                        if self.text(t) == "nil" {
                            self.m.add_expr(ExprKind::Literal(Lit::Null), span(t))
                        } else {
                            self.expr(t)
                        }
                    })
                    .collect()
            } else {
                match self.field(c, patterns_field) {
                    Some(list) => self.kids(list).into_iter().map(|e| self.expr(e)).collect(),
                    None => Vec::new(),
                }
            };
            let mut body = Block::new();
            for s in self.kids(c) {
                if self.k(s) == K::StatementList {
                    self.stmts_in(s, &mut body);
                }
            }
            self.scopes.pop();
            cases.push(Case {
                patterns,
                body,
                span: span(c),
            });
        }
        self.scopes.pop();
        let kind = StmtKind::Switch { subject, cases };
        if prefix.is_empty() {
            self.push(out, kind, sp);
        } else {
            let s = self.m.add_stmt(kind, sp);
            prefix.push(s);
            self.push(out, StmtKind::Block(prefix), sp);
        }
    }

    /// `select { case v := <-ch: ... case ch <- v: ... default: ... }`.
    fn select(&mut self, n: Node<'t>, out: &mut Block) {
        let g = self.g;
        let f = &g.f;
        let mut arms = Vec::new();
        for c in self.kids(n) {
            self.scopes.push();
            let kind = match self.k(c) {
                K::DefaultCase => Some(ArmKind::Default),
                K::CommunicationCase => self.field(c, f.communication).map(|comm| {
                    if self.k(comm) == K::SendStatement {
                        let channel = self.opt_expr(self.field(comm, f.channel), comm);
                        let value = self.opt_expr(self.field(comm, f.value), comm);
                        ArmKind::Send { channel, value }
                    } else {
                        self.recv_arm(comm)
                    }
                }),
                _ => None,
            };
            if let Some(kind) = kind {
                let mut body = Block::new();
                for s in self.kids(c) {
                    if self.k(s) == K::StatementList {
                        self.stmts_in(s, &mut body);
                    }
                }
                arms.push(SelectArm {
                    kind,
                    body,
                    span: span(c),
                });
            }
            self.scopes.pop();
        }
        self.push(
            out,
            StmtKind::Select {
                arms,
                biased: false,
            },
            span(n),
        );
    }

    /// `case [v[, ok] :=|=] <-ch:`: the channel is the operand of the
    /// receive; the binding is the left-hand side, if any.
    fn recv_arm(&mut self, comm: Node<'t>) -> ArmKind {
        let g = self.g;
        let f = &g.f;
        let mut right = self.field(comm, f.right);
        // Look through parentheses: `case <-(ch):` / `case (<-ch):`.
        while let Some(r) = right {
            if self.k(r) != K::ParenthesizedExpression {
                break;
            }
            right = self.first_kid(r);
        }
        let channel = match right {
            Some(r)
                if self.k(r) == K::UnaryExpression
                    && self.field(r, f.operator).is_some_and(|o| o.kind() == "<-") =>
            {
                self.opt_expr(self.field(r, f.operand), r)
            }
            Some(r) => self.expr(r),
            None => self.m.opaque(span(comm)),
        };
        let binding = self.field(comm, f.left).map(|l| {
            if self.has_token(comm, ":=") {
                self.declare_names(l);
            }
            self.expr_list(l)
        });
        ArmKind::Recv { channel, binding }
    }
}

fn assign_op(op: &str) -> AssignOp {
    let bin = match op {
        "+=" => BinOp::Add,
        "-=" => BinOp::Sub,
        "*=" => BinOp::Mul,
        "/=" => BinOp::Div,
        "%=" => BinOp::Rem,
        "&=" | "|=" | "^=" | "<<=" | ">>=" | "&^=" => BinOp::Bit,
        _ => return AssignOp::Plain,
    };
    AssignOp::Augmented(bin)
}

/// Kinds that are expressions (an expression statement inside an ERROR
/// node comes without its `expression_statement` wrapper).
pub(super) fn is_expr_kind(k: K) -> bool {
    matches!(
        k,
        K::UnaryExpression
            | K::BinaryExpression
            | K::SelectorExpression
            | K::IndexExpression
            | K::SliceExpression
            | K::CallExpression
            | K::TypeAssertionExpression
            | K::TypeConversionExpression
            | K::TypeInstantiationExpression
            | K::Identifier
            | K::CompositeLiteral
            | K::FuncLiteral
            | K::RawStringLiteral
            | K::InterpretedStringLiteral
            | K::IntLiteral
            | K::FloatLiteral
            | K::ImaginaryLiteral
            | K::RuneLiteral
            | K::Nil
            | K::True
            | K::False
            | K::Iota
            | K::ParenthesizedExpression
    )
}
