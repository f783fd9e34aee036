//! Blocks and statements, including control flow written as expressions.

use super::Lowerer;
use super::expr::{assign_op, is_async_like};
use super::pat::pat_is_mut;
use ra_ap_syntax::AstNode;
use ra_ap_syntax::ast::{self, BinaryOp, HasLoopBody};
use unsnarl_model::{AssignOp, Block, Case, ExprId, ExprKind, Span, StmtId, StmtKind};

/// What becomes of a block's tail expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Tail {
    /// The block's value is discarded (statement position, loop bodies): the
    /// tail is a final `StmtKind::Expr`.
    Discard,
    /// The block is (a branch of) a block expression whose value is used
    /// (`let x = match ..`): the tail is a final `StmtKind::Tail`.
    Value,
    /// The block is (the tail of) a function, closure or async body: its
    /// value is returned, so the tail is `StmtKind::Return(Some(..))`, also
    /// through the branches of a tail `if`/`match`/block.
    Return,
}

impl Tail {
    /// The statement holding a block's tail expression.
    pub(super) fn wrap(self, e: ExprId) -> StmtKind {
        match self {
            Tail::Discard => StmtKind::Expr(e),
            Tail::Value => StmtKind::Tail(e),
            Tail::Return => StmtKind::Return(Some(e)),
        }
    }
}

impl Lowerer {
    /// A `{ ... }` block: its statements in a new scope.
    pub(super) fn lower_block_expr(&mut self, b: &ast::BlockExpr, tail: Tail) -> Block {
        match b.stmt_list() {
            Some(list) => self.lower_stmt_list(&list, tail),
            None => Vec::new(),
        }
    }

    pub(super) fn lower_stmt_list(&mut self, list: &ast::StmtList, tail: Tail) -> Block {
        let mut out = Vec::new();
        if !self.enter() {
            let e = self.opaque(list.syntax());
            let span = self.span(list.syntax());
            out.push(self.m.add_stmt(StmtKind::Expr(e), span));
            return out;
        }
        self.scopes.push_block();
        // One pass over the children: the statements, and the tail
        // expression (the one child that is an expression, not a statement).
        let mut stmts: Vec<ast::Stmt> = Vec::new();
        let mut tail_expr = None;
        for c in list.syntax().children() {
            if let Some(s) = ast::Stmt::cast(c.clone()) {
                stmts.push(s);
            } else if tail_expr.is_none() {
                tail_expr = ast::Expr::cast(c);
            }
        }
        // Items of a block are visible in the whole block.
        let items: Vec<ast::Item> = stmts
            .iter()
            .filter_map(|s| match s {
                ast::Stmt::Item(i) => Some(i.clone()),
                _ => None,
            })
            .collect();
        self.declare_items(&items);
        for s in &stmts {
            self.lower_stmt(s, &mut out);
        }
        if let Some(t) = tail_expr {
            let span = self.span(t.syntax());
            self.lower_expr_stmt(&t, tail, span, &mut out);
        }
        self.scopes.pop();
        self.leave();
        out
    }

    fn lower_stmt(&mut self, s: &ast::Stmt, out: &mut Block) {
        match s {
            ast::Stmt::LetStmt(l) => self.lower_let(l, out),
            ast::Stmt::ExprStmt(es) => {
                if let Some(e) = es.expr() {
                    let span = self.span(es.syntax());
                    self.lower_expr_stmt(&e, Tail::Discard, span, out);
                }
            }
            ast::Stmt::Item(i) => self.lower_item(i, out),
        }
    }

    fn lower_let(&mut self, l: &ast::LetStmt, out: &mut Block) {
        let span = self.span(l.syntax());
        let value = l.initializer().map(|e| self.lower_expr(&e));
        let else_body = l
            .let_else()
            .and_then(|le| le.block_expr())
            .map(|b| self.lower_block_expr(&b, Tail::Discard));
        let mutable = l.pat().is_some_and(|p| pat_is_mut(&p));
        // The pattern binds after the initializer (`let x = x + 1`) and the
        // else branch (which cannot see the bindings).
        let target = match l.pat() {
            Some(p) => self.lower_pat(&p, true),
            None => self.opaque(l.syntax()),
        };
        // `let x: T = ..`: the declared type of a plain binding.
        if let Some(ty) = l.ty()
            && matches!(self.m.expr(target).kind, ExprKind::Name { .. })
        {
            let t = self.type_ref(&ty);
            self.m.declared_types.push((target, t));
        }
        out.push(self.m.add_stmt(
            StmtKind::Assign {
                targets: vec![target],
                value,
                op: AssignOp::Declare { mutable },
            },
            span,
        ));
        if let Some(body) = else_body {
            // `let PAT = v else { .. }`: the else block runs when the pattern
            // does not match; the model has no slot for it on `Assign`, so it
            // follows as an `if` on an opaque condition.
            let else_span = l
                .let_else()
                .map(|le| self.span(le.syntax()))
                .unwrap_or(span);
            let cond = self.m.opaque(else_span);
            out.push(self.m.add_stmt(
                StmtKind::If {
                    cond,
                    then: body,
                    orelse: Vec::new(),
                },
                else_span,
            ));
        }
    }

    /// An expression in statement position (or a block's tail).
    pub(super) fn lower_expr_stmt(
        &mut self,
        e: &ast::Expr,
        tail: Tail,
        span: Span,
        out: &mut Block,
    ) {
        if !self.enter() {
            let x = self.opaque(e.syntax());
            out.push(self.m.add_stmt(StmtKind::Expr(x), span));
            return;
        }
        self.lower_expr_stmt_inner(e, tail, span, out);
        self.leave();
    }

    pub(super) fn lower_expr_stmt_inner(
        &mut self,
        e: &ast::Expr,
        tail: Tail,
        span: Span,
        out: &mut Block,
    ) {
        let kind = match e {
            ast::Expr::IfExpr(i) => return out.push(self.lower_if(i, tail, span)),
            ast::Expr::MatchExpr(m) => {
                let subject = m.expr().map(|x| self.lower_expr(&x));
                let mut cases = Vec::new();
                if let Some(list) = m.match_arm_list() {
                    for arm in list.arms() {
                        cases.push(self.lower_arm(&arm, tail));
                    }
                }
                StmtKind::Switch { subject, cases }
            }
            ast::Expr::LoopExpr(l) => StmtKind::Loop {
                body: self.loop_body(l.loop_body()),
            },
            ast::Expr::WhileExpr(w) => {
                self.scopes.push_block();
                let cond = self.lower_opt_expr(w.condition(), w.syntax());
                let body = self.loop_body(w.loop_body());
                self.scopes.pop();
                StmtKind::While {
                    cond,
                    body,
                    orelse: Vec::new(),
                }
            }
            ast::Expr::ForExpr(f) => {
                let iter = self.lower_opt_expr(f.iterable(), f.syntax());
                self.scopes.push_block();
                let target = f.pat().map(|p| self.lower_pat(&p, true));
                let body = self.loop_body(f.loop_body());
                self.scopes.pop();
                StmtKind::For {
                    target,
                    iter,
                    body,
                    is_async: false,
                }
            }
            ast::Expr::BlockExpr(b) if !is_async_like(b) => {
                StmtKind::Block(self.lower_block_expr(b, tail))
            }
            ast::Expr::ParenExpr(p) if tail == Tail::Discard => match p.expr() {
                Some(inner) => return self.lower_expr_stmt_inner(&inner, tail, span, out),
                None => return,
            },
            ast::Expr::ReturnExpr(r) => StmtKind::Return(r.expr().map(|x| self.lower_expr(&x))),
            ast::Expr::BreakExpr(b) => {
                // `break value`: the value is evaluated, then the loop exits.
                if let Some(v) = b.expr() {
                    let x = self.lower_expr(&v);
                    let vspan = self.span(v.syntax());
                    out.push(self.m.add_stmt(StmtKind::Expr(x), vspan));
                }
                StmtKind::Break
            }
            ast::Expr::ContinueExpr(_) => StmtKind::Continue,
            ast::Expr::BinExpr(b) if matches!(b.op_kind(), Some(BinaryOp::Assignment { .. })) => {
                let Some(BinaryOp::Assignment { op }) = b.op_kind() else {
                    return;
                };
                let (lhs, rhs) = b.sub_exprs();
                let value = self.lower_opt_expr(rhs, b.syntax());
                let target = self.lower_opt_expr(lhs, b.syntax());
                StmtKind::Assign {
                    targets: vec![target],
                    value: Some(value),
                    op: assign_op(op),
                }
            }
            ast::Expr::MacroExpr(m) => {
                if let Some(mc) = m.macro_call() {
                    self.lower_macro_stmt(&mc, tail, span, out);
                }
                return;
            }
            _ => {
                let x = self.lower_expr(e);
                tail.wrap(x)
            }
        };
        out.push(self.m.add_stmt(kind, span));
    }

    fn loop_body(&mut self, b: Option<ast::BlockExpr>) -> Block {
        match b {
            Some(b) => self.lower_block_expr(&b, Tail::Discard),
            None => Vec::new(),
        }
    }

    fn lower_if(&mut self, i: &ast::IfExpr, tail: Tail, span: Span) -> StmtId {
        // `if let` bindings are visible in the then-branch only.
        self.scopes.push_block();
        let cond = self.lower_opt_expr(i.condition(), i.syntax());
        let then = match i.then_branch() {
            Some(b) => self.lower_block_expr(&b, tail),
            None => Vec::new(),
        };
        self.scopes.pop();
        let orelse = match i.else_branch() {
            Some(ast::ElseBranch::Block(b)) => self.lower_block_expr(&b, tail),
            Some(ast::ElseBranch::IfExpr(elif)) => {
                let espan = self.span(elif.syntax());
                if self.enter() {
                    let s = self.lower_if(&elif, tail, espan);
                    self.leave();
                    vec![s]
                } else {
                    let x = self.opaque(elif.syntax());
                    vec![self.m.add_stmt(StmtKind::Expr(x), espan)]
                }
            }
            None => Vec::new(),
        };
        self.m.add_stmt(StmtKind::If { cond, then, orelse }, span)
    }

    fn lower_arm(&mut self, arm: &ast::MatchArm, tail: Tail) -> Case {
        let span = self.span(arm.syntax());
        self.scopes.push_block();
        let patterns = self.case_patterns(arm.pat());
        let guard = arm.guard().map(|g| (self.span(g.syntax()), g.condition()));
        let guard = guard.map(|(gspan, c)| (gspan, self.lower_opt_expr(c, arm.syntax())));
        let mut body = Vec::new();
        match arm.expr() {
            Some(ast::Expr::BlockExpr(b)) if !is_async_like(&b) && b.modifier().is_none() => {
                body = self.lower_block_expr(&b, tail);
            }
            Some(e) => {
                let espan = self.span(e.syntax());
                self.lower_expr_stmt(&e, tail, espan, &mut body);
            }
            None => {}
        }
        self.scopes.pop();
        if let Some((gspan, cond)) = guard {
            // `pat if cond => body`: the body runs only when the guard holds.
            let s = self.m.add_stmt(
                StmtKind::If {
                    cond,
                    then: body,
                    orelse: Vec::new(),
                },
                gspan.cover(span),
            );
            body = vec![s];
        }
        Case {
            patterns,
            body,
            span,
        }
    }

    /// Wraps a statement kind into an expression position (`let x = if ..`).
    pub(super) fn stmt_as_expr(&mut self, s: StmtId, span: Span) -> ExprId {
        self.m.add_expr(ExprKind::Block(vec![s]), span)
    }
}
