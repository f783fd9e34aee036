//! Expressions.

use super::stmt::Tail;
use super::{Lowerer, node_text};
use ra_ap_syntax::ast::{
    self, ArithOp, AstNode, AstToken, BinaryOp, CmpOp, HasArgList, HasModuleItem, LogicOp,
    Ordering, UnaryOp,
};
use ra_ap_syntax::{SyntaxKind, SyntaxNode, T, TextRange};
use unsnarl_model::{
    Arg, AssignOp, BinOp, Call, CollKind, ExprId, ExprKind, FnKind, Function, Lit, LogicalOp, Str,
    TypeRef, UnOp,
};

impl Lowerer {
    pub(super) fn lower_expr(&mut self, e: &ast::Expr) -> ExprId {
        if !self.enter() {
            return self.opaque(e.syntax());
        }
        let id = self.lower_expr_inner(e);
        self.leave();
        id
    }

    /// Lowers an optional sub-expression; a missing one (syntax error)
    /// becomes an opaque node spanning `parent`.
    pub(super) fn lower_opt_expr(&mut self, e: Option<ast::Expr>, parent: &SyntaxNode) -> ExprId {
        match e {
            Some(e) => self.lower_expr(&e),
            None => self.opaque(parent),
        }
    }

    /// `Other` with every direct sub-expression, so walks stay complete.
    fn other_children(&mut self, node: &SyntaxNode) -> ExprKind {
        let kids: Vec<ast::Expr> = node.children().filter_map(ast::Expr::cast).collect();
        ExprKind::Other(kids.iter().map(|k| self.lower_expr(k)).collect())
    }

    fn lower_expr_inner(&mut self, e: &ast::Expr) -> ExprId {
        let span = self.span(e.syntax());
        let kind = match e {
            ast::Expr::PathExpr(p) => return self.lower_path_expr(p),
            ast::Expr::CallExpr(c) => ExprKind::Call(Box::new(self.lower_call(c))),
            ast::Expr::MethodCallExpr(mc) => ExprKind::Call(Box::new(self.lower_method_call(mc))),
            ast::Expr::FieldExpr(f) => {
                let obj = self.lower_opt_expr(f.expr(), f.syntax());
                let name = f
                    .name_ref()
                    .map(|n| node_text(n.syntax()).to_string())
                    .or_else(|| f.index_token().map(|t| t.text().to_string()))
                    .unwrap_or_default();
                ExprKind::Attr {
                    obj,
                    name: name.into(),
                    resolved: None,
                }
            }
            ast::Expr::AwaitExpr(a) => ExprKind::Await(self.lower_opt_expr(a.expr(), a.syntax())),
            ast::Expr::TryExpr(t) => ExprKind::Try(self.lower_opt_expr(t.expr(), t.syntax())),
            ast::Expr::PrefixExpr(p) => {
                let op = match p.op_kind() {
                    Some(UnaryOp::Deref) => UnOp::Deref,
                    Some(UnaryOp::Not) => UnOp::Not,
                    Some(UnaryOp::Neg) => UnOp::Neg,
                    None => UnOp::Other,
                };
                ExprKind::Unary {
                    op,
                    operand: self.lower_opt_expr(p.expr(), p.syntax()),
                }
            }
            ast::Expr::RefExpr(r) => ExprKind::Unary {
                op: UnOp::Ref,
                operand: self.lower_opt_expr(r.expr(), r.syntax()),
            },
            ast::Expr::BinExpr(b) => self.lower_bin(b),
            ast::Expr::Literal(l) => ExprKind::Literal(literal(l)),
            ast::Expr::ParenExpr(p) => return self.lower_opt_expr(p.expr(), p.syntax()),
            ast::Expr::TupleExpr(t) => {
                let fields: Vec<ast::Expr> = t.fields().collect();
                if fields.is_empty() {
                    ExprKind::Literal(Lit::Null)
                } else {
                    ExprKind::Collection {
                        kind: CollKind::Tuple,
                        elems: fields.iter().map(|f| self.lower_expr(f)).collect(),
                        keys: Vec::new(),
                        ty: None,
                    }
                }
            }
            ast::Expr::ArrayExpr(a) => {
                if a.semicolon_token().is_some() {
                    // `[x; N]`: not a list of elements.
                    self.other_children(a.syntax())
                } else {
                    let elems: Vec<ast::Expr> = a.exprs().collect();
                    ExprKind::Collection {
                        kind: CollKind::List,
                        elems: elems.iter().map(|x| self.lower_expr(x)).collect(),
                        keys: Vec::new(),
                        ty: None,
                    }
                }
            }
            ast::Expr::RecordExpr(r) => self.lower_record(r),
            ast::Expr::IndexExpr(i) => {
                let obj = self.lower_opt_expr(i.base(), i.syntax());
                let index = self.lower_opt_expr(i.index(), i.syntax());
                ExprKind::Index { obj, index }
            }
            ast::Expr::CastExpr(c) => ExprKind::Cast(self.lower_opt_expr(c.expr(), c.syntax())),
            ast::Expr::ClosureExpr(c) => return self.lower_closure(c),
            ast::Expr::BlockExpr(b) => {
                if is_async_like(b) {
                    return self.lower_async_block(b);
                }
                ExprKind::Block(self.lower_block_expr(b, Tail::Value))
            }
            ast::Expr::IfExpr(_)
            | ast::Expr::MatchExpr(_)
            | ast::Expr::LoopExpr(_)
            | ast::Expr::WhileExpr(_)
            | ast::Expr::ForExpr(_) => {
                // Control flow used as a value: a block of that one statement
                // whose branches end in the value (a final `Tail`).
                let mut out = Vec::new();
                self.lower_expr_stmt_inner(e, Tail::Value, span, &mut out);
                ExprKind::Block(out)
            }
            ast::Expr::ReturnExpr(_)
            | ast::Expr::BreakExpr(_)
            | ast::Expr::ContinueExpr(_)
            | ast::Expr::RangeExpr(_)
            | ast::Expr::BecomeExpr(_)
            | ast::Expr::YeetExpr(_)
            | ast::Expr::AsmExpr(_)
            | ast::Expr::FormatArgsExpr(_)
            | ast::Expr::OffsetOfExpr(_)
            | ast::Expr::IncludeBytesExpr(_) => self.other_children(e.syntax()),
            ast::Expr::LetExpr(l) => {
                let value = self.lower_opt_expr(l.expr(), l.syntax());
                let pattern = match l.pat() {
                    Some(p) => self.lower_pat(&p, true),
                    None => self.opaque(l.syntax()),
                };
                ExprKind::Let { pattern, value }
            }
            ast::Expr::MacroExpr(m) => match m.macro_call() {
                Some(mc) => return self.lower_macro_expr(&mc),
                None => ExprKind::Other(Vec::new()),
            },
            ast::Expr::UnderscoreExpr(_) => ExprKind::Name {
                id: "_".into(),
                resolved: None,
            },
            ast::Expr::YieldExpr(y) => ExprKind::Yield(y.expr().map(|x| self.lower_expr(&x))),
        };
        self.m.add_expr(kind, span)
    }

    pub(super) fn lower_path_expr(&mut self, p: &ast::PathExpr) -> ExprId {
        let span = self.span(p.syntax());
        let Some(path) = p.path() else {
            return self.m.opaque(span);
        };
        let rp = self.resolve_path(&path, true);
        let kind = if rp.single {
            ExprKind::Name {
                id: rp.last.as_str().into(),
                resolved: rp.resolved.map(Into::into),
            }
        } else {
            ExprKind::Path {
                text: rp.text.into(),
                resolved: rp.resolved.map(Into::into),
            }
        };
        self.m.add_expr(kind, span)
    }

    fn lower_call(&mut self, c: &ast::CallExpr) -> Call {
        let (func, name, target) = match c.expr() {
            Some(ast::Expr::PathExpr(p)) => {
                let func = self.lower_path_expr(&p);
                let (name, target) = match &self.m.expr(func).kind {
                    ExprKind::Name { id, resolved } => (id.clone(), resolved.clone()),
                    ExprKind::Path { text, resolved } => (
                        text.rsplit("::").next().unwrap_or_default().into(),
                        resolved.clone(),
                    ),
                    _ => (Str::default(), None),
                };
                (func, name, target)
            }
            callee => (
                self.lower_opt_expr(callee, c.syntax()),
                Str::default(),
                None,
            ),
        };
        let args = self.lower_args(c.arg_list());
        Call {
            func,
            receiver: None,
            name,
            target,
            args,
            is_new: false,
            is_macro: false,
            effects: unsnarl_model::EffectSet::UNKNOWN,
        }
    }

    fn lower_method_call(&mut self, mc: &ast::MethodCallExpr) -> Call {
        let recv = self.lower_opt_expr(mc.receiver(), mc.syntax());
        let name = mc
            .name_ref()
            .map(|n| node_text(n.syntax()).to_string())
            .unwrap_or_default();
        let start = mc
            .receiver()
            .map(|r| r.syntax().text_range().start())
            .unwrap_or(mc.syntax().text_range().start());
        let end = mc
            .name_ref()
            .map(|n| n.syntax().text_range().end())
            .unwrap_or(mc.syntax().text_range().end());
        let attr_span = self.span_range(TextRange::new(start, end.max(start)));
        let func = self.m.add_expr(
            ExprKind::Attr {
                obj: recv,
                name: name.clone().into(),
                resolved: None,
            },
            attr_span,
        );
        let args = self.lower_args(mc.arg_list());
        Call {
            func,
            receiver: Some(recv),
            name: name.into(),
            target: None,
            args,
            is_new: false,
            is_macro: false,
            effects: unsnarl_model::EffectSet::UNKNOWN,
        }
    }

    pub(super) fn lower_args(&mut self, list: Option<ast::ArgList>) -> Vec<Arg> {
        let Some(list) = list else {
            return Vec::new();
        };
        let exprs: Vec<ast::Expr> = list.args().collect();
        exprs
            .iter()
            .map(|a| Arg {
                name: None,
                value: self.lower_expr(a),
                spread: false,
            })
            .collect()
    }

    fn lower_bin(&mut self, b: &ast::BinExpr) -> ExprKind {
        let Some(op) = b.op_kind() else {
            return self.other_children(b.syntax());
        };
        let (lhs, rhs) = b.sub_exprs();
        let left = self.lower_opt_expr(lhs, b.syntax());
        let right = self.lower_opt_expr(rhs, b.syntax());
        match op {
            BinaryOp::LogicOp(l) => ExprKind::Logical {
                op: match l {
                    LogicOp::And => LogicalOp::And,
                    LogicOp::Or => LogicalOp::Or,
                },
                left,
                right,
            },
            BinaryOp::ArithOp(a) => ExprKind::Binary {
                op: arith(a),
                left,
                right,
            },
            BinaryOp::CmpOp(c) => ExprKind::Binary {
                op: match c {
                    CmpOp::Eq { negated: false } => BinOp::Eq,
                    CmpOp::Eq { negated: true } => BinOp::NotEq,
                    CmpOp::Ord {
                        ordering: Ordering::Less,
                        strict: true,
                    } => BinOp::Lt,
                    CmpOp::Ord {
                        ordering: Ordering::Less,
                        strict: false,
                    } => BinOp::LtE,
                    CmpOp::Ord {
                        ordering: Ordering::Greater,
                        strict: true,
                    } => BinOp::Gt,
                    CmpOp::Ord {
                        ordering: Ordering::Greater,
                        strict: false,
                    } => BinOp::GtE,
                },
                left,
                right,
            },
            BinaryOp::Assignment { op } => ExprKind::AssignExpr {
                target: left,
                value: right,
                op: assign_op(op),
            },
        }
    }

    fn lower_record(&mut self, r: &ast::RecordExpr) -> ExprKind {
        let ty = r.path().map(|p| {
            let rp = self.resolve_path(&p, false);
            TypeRef {
                text: rp.text.into(),
                resolved: rp.resolved.map(Into::into),
            }
        });
        let mut elems = Vec::new();
        let mut keys = Vec::new();
        if let Some(list) = r.record_expr_field_list() {
            for f in list.fields() {
                let key = f
                    .field_name()
                    .map(|n| unsnarl_model::Str::from(node_text(n.syntax()).as_str()));
                let value = self.lower_opt_expr(f.expr(), f.syntax());
                elems.push(value);
                keys.push(key);
            }
            if let Some(spread) = list.spread() {
                let inner = self.lower_expr(&spread);
                let span = self.span(spread.syntax());
                elems.push(self.m.add_expr(ExprKind::Spread(inner), span));
                keys.push(None);
            }
        }
        ExprKind::Collection {
            kind: CollKind::Struct,
            elems,
            keys,
            ty: ty.map(Box::new),
        }
    }

    pub(super) fn lower_closure(&mut self, c: &ast::ClosureExpr) -> ExprId {
        let span = self.span(c.syntax());
        let is_async = c.async_token().is_some();
        let mut f = Function::new(
            if is_async {
                FnKind::AsyncBlock
            } else {
                FnKind::Closure
            },
            span,
        );
        f.is_async = is_async;
        f.is_generator = c.gen_token().is_some();
        f.parent = Some(self.ctx.func);
        f.is_test = self.ctx.in_test;
        // The head: `async move |a, b|` up to the end of the parameter list.
        let head_end = c
            .param_list()
            .map(|p| p.syntax().text_range().end())
            .unwrap_or(c.syntax().text_range().end());
        f.name_span = self.span_range(TextRange::new(c.syntax().text_range().start(), head_end));
        f.returns = c.ret_type().and_then(|r| r.ty()).map(|t| self.type_ref(&t));
        let fid = self.m.add_function(f);

        let saved = self.ctx.clone();
        self.ctx.func = fid;
        self.scopes.push_block();
        let params = match c.param_list() {
            Some(pl) => self.lower_params(&pl),
            None => Vec::new(),
        };
        let body = match c.body() {
            Some(ast::Expr::BlockExpr(b)) if !is_async_like(&b) => {
                self.lower_block_expr(&b, Tail::Return)
            }
            Some(e) => {
                let value = self.lower_expr(&e);
                let span = self.span(e.syntax());
                vec![
                    self.m
                        .add_stmt(unsnarl_model::StmtKind::Return(Some(value)), span),
                ]
            }
            None => Vec::new(),
        };
        self.scopes.pop();
        self.ctx = saved;
        let f = self.m.func_mut(fid);
        f.params = params;
        f.body = body;
        self.m.add_expr(ExprKind::Closure(fid), span)
    }

    /// `async {}` / `async move {}` (and `gen` blocks): a separate function
    /// run when the future is polled.
    pub(super) fn lower_async_block(&mut self, b: &ast::BlockExpr) -> ExprId {
        let span = self.span(b.syntax());
        let is_async = b.async_token().is_some();
        // A `gen {}` block (not async) is a lazily run body like a closure.
        let kind = if is_async {
            FnKind::AsyncBlock
        } else {
            FnKind::Closure
        };
        let mut f = Function::new(kind, span);
        f.is_async = is_async;
        f.is_generator = b.gen_token().is_some();
        f.parent = Some(self.ctx.func);
        f.is_test = self.ctx.in_test;
        let head: Vec<_> = [b.async_token(), b.gen_token(), b.move_token()]
            .into_iter()
            .flatten()
            .collect();
        if let (Some(first), Some(last)) = (
            head.iter().map(|t| t.text_range().start()).min(),
            head.iter().map(|t| t.text_range().end()).max(),
        ) {
            f.name_span = self.span_range(TextRange::new(first, last));
        }
        let fid = self.m.add_function(f);
        let saved = self.ctx.clone();
        self.ctx.func = fid;
        let body = self.lower_block_expr(b, Tail::Return);
        self.ctx = saved;
        self.m.func_mut(fid).body = body;
        self.m.add_expr(ExprKind::Closure(fid), span)
    }

    /// Lowers a fn-like snippet's body (used by re-parsed macro pieces).
    pub(super) fn snippet_fn_body(root: &SyntaxNode) -> Option<ast::StmtList> {
        let file = ast::SourceFile::cast(root.clone())?;
        file.items().find_map(|i| match i {
            ast::Item::Fn(f) => f.body()?.stmt_list(),
            _ => None,
        })
    }
}

/// Blocks that run later as a separate body: `async {}`, `gen {}`.
pub(super) fn is_async_like(b: &ast::BlockExpr) -> bool {
    b.async_token().is_some() || b.gen_token().is_some()
}

fn arith(a: ArithOp) -> BinOp {
    match a {
        ArithOp::Add => BinOp::Add,
        ArithOp::Sub => BinOp::Sub,
        ArithOp::Mul => BinOp::Mul,
        ArithOp::Div => BinOp::Div,
        ArithOp::Rem => BinOp::Rem,
        ArithOp::Shl | ArithOp::Shr | ArithOp::BitXor | ArithOp::BitOr | ArithOp::BitAnd => {
            BinOp::Bit
        }
    }
}

pub(super) fn assign_op(op: Option<ArithOp>) -> AssignOp {
    match op {
        None => AssignOp::Plain,
        Some(a) => AssignOp::Augmented(arith(a)),
    }
}

/// A literal's value. Reads the token directly (`ast::Literal::kind` panics
/// on tokens it does not expect).
pub(super) fn literal(l: &ast::Literal) -> Lit {
    match l
        .syntax()
        .children_with_tokens()
        .filter_map(|c| c.into_token())
        .find(|t| !t.kind().is_trivia())
    {
        Some(tok) => literal_token(tok),
        None => Lit::Other,
    }
}

/// Whether a token is a literal (`1`, `"s"`, `'c'`, `true`...).
pub(super) fn is_literal_token(kind: SyntaxKind) -> bool {
    matches!(
        kind,
        SyntaxKind::INT_NUMBER
            | SyntaxKind::FLOAT_NUMBER
            | SyntaxKind::STRING
            | SyntaxKind::BYTE_STRING
            | SyntaxKind::C_STRING
            | SyntaxKind::CHAR
            | SyntaxKind::BYTE
            | T![true]
            | T![false]
    )
}

/// A literal token's value.
pub(super) fn literal_token(tok: ra_ap_syntax::SyntaxToken) -> Lit {
    match tok.kind() {
        SyntaxKind::INT_NUMBER => ast::IntNumber::cast(tok)
            .and_then(|n| n.value().ok())
            .and_then(|v| i64::try_from(v).ok())
            .map_or(Lit::Other, Lit::Int),
        SyntaxKind::FLOAT_NUMBER => ast::FloatNumber::cast(tok)
            .and_then(|n| n.value_string().parse::<f64>().ok())
            .map_or(Lit::Other, Lit::Float),
        SyntaxKind::STRING => {
            let value =
                ast::String::cast(tok.clone()).and_then(|s| s.value().ok().map(|v| v.into_owned()));
            Lit::Str(value.unwrap_or_else(|| tok.text().to_string()).into())
        }
        SyntaxKind::CHAR => ast::Char::cast(tok)
            .and_then(|c| c.value().ok())
            .map_or(Lit::Other, |c| Lit::Str(c.to_string().into())),
        SyntaxKind::BYTE => ast::Byte::cast(tok)
            .and_then(|b| b.value().ok())
            .map_or(Lit::Other, |b| Lit::Int(i64::from(b))),
        T![true] => Lit::Bool(true),
        T![false] => Lit::Bool(false),
        _ => Lit::Other,
    }
}
