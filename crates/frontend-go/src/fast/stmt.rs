//! Statements.

use super::lexer::T;
use super::{Bail, Ex, Parser, R};
use unsnarl_model::{
    ArmKind, AssignOp, BinOp, Block, Case, CollKind, ExprKind, Lit, SelectArm, Span, StmtKind,
};

/// A simple statement of a control clause header, before it is known to
/// be the init statement or the condition.
enum Simple {
    /// Lowered into the output block; its end.
    Stmt(u32),
    /// A lone expression, not yet lowered as a statement.
    Expr(Ex),
    /// `lhs = range` (for loops): the target.
    Range(Ex),
}

/// The end of the statements of a clause: of the last statement (and
/// whether it was a label on nothing, after which tree-sitter takes no
/// terminator).
type ListEnd = Option<(u32, bool)>;

impl<'s> Parser<'s, '_> {
    /// A `{ ... }` block in its own scope; its statements and the end of
    /// the closing brace.
    pub(super) fn block(&mut self) -> R<(Block, u32)> {
        self.expect(T::LBrace)?;
        let mut out = Block::new();
        let saved_lit = std::mem::replace(&mut self.no_lit, false);
        self.scopes.push();
        let r = self.stmt_list(&mut out);
        self.scopes.pop();
        self.no_lit = saved_lit;
        r?;
        let rb = self.expect(T::RBrace)?;
        Ok((out, rb.end))
    }

    /// Statements up to `}` / `case` / `default`.
    fn stmt_list(&mut self, out: &mut Block) -> R<ListEnd> {
        let mut last = None;
        loop {
            while self.k() == T::Semi {
                self.next();
            }
            if matches!(self.k(), T::RBrace | T::Case | T::Default | T::Eof) {
                break;
            }
            last = Some(self.stmt_ex(out)?);
            match self.k() {
                T::Semi => {
                    self.next();
                }
                T::RBrace | T::Case | T::Default => break,
                _ => return Err(Bail),
            }
        }
        Ok(last)
    }

    /// Lowers one statement (one `nested` frame).
    pub(super) fn stmt(&mut self, out: &mut Block) -> R<u32> {
        Ok(self.stmt_ex(out)?.0)
    }

    fn stmt_ex(&mut self, out: &mut Block) -> R<(u32, bool)> {
        self.enter()?;
        let r = self.stmt_inner(out);
        self.leave();
        r
    }

    fn stmt_inner(&mut self, out: &mut Block) -> R<(u32, bool)> {
        let t = self.tok();
        let end = match t.kind {
            T::Var | T::Const => self.var_decl(out)?,
            T::Type => {
                self.type_decl(out)?;
                self.toks[self.p - 1].end
            }
            T::Return => {
                self.next();
                if super::starts_expr(self.k()) {
                    let v = self.expr_list()?;
                    self.add_stmt(out, StmtKind::Return(Some(v.id)), t.start, v.e);
                    v.e
                } else {
                    self.add_stmt(out, StmtKind::Return(None), t.start, t.end);
                    t.end
                }
            }
            T::Go | T::Defer => {
                self.next();
                let e = self.expr()?;
                let kind = if t.kind == T::Go {
                    StmtKind::Go(e.id)
                } else {
                    StmtKind::Defer(e.id)
                };
                self.add_stmt(out, kind, t.start, e.e);
                e.e
            }
            T::If => self.if_stmt(out)?,
            T::For => self.for_stmt(out)?,
            T::Switch => self.switch_stmt(out)?,
            T::Select => self.select_stmt(out)?,
            T::Break | T::Continue => {
                self.next();
                let end = if self.k() == T::Ident {
                    self.next().end
                } else {
                    t.end
                };
                let kind = if t.kind == T::Break {
                    StmtKind::Break
                } else {
                    StmtKind::Continue
                };
                self.add_stmt(out, kind, t.start, end);
                end
            }
            T::Goto => {
                self.next();
                let label = self.expect(T::Ident)?;
                self.add_stmt(out, StmtKind::Pass, t.start, label.end);
                label.end
            }
            T::Fallthrough => {
                self.next();
                self.add_stmt(out, StmtKind::Pass, t.start, t.end);
                t.end
            }
            T::LBrace => {
                let (b, end) = self.block()?;
                self.add_stmt(out, StmtKind::Block(b), t.start, end);
                end
            }
            T::Ident if self.kn(1) == T::Colon => {
                // A label: only a jump target; the statement is what runs.
                self.next();
                let colon = self.next();
                let semi = self.tok();
                return match semi.kind {
                    T::RBrace | T::Case | T::Default => Ok((colon.end, true)),
                    // `L: ;`: a label on an empty statement (the `;` is
                    // also the separator, left to the caller).
                    T::Semi if semi.end > semi.start => Ok((semi.end, false)),
                    T::Semi | T::Eof => Err(Bail),
                    // `L1: L2:`: tree-sitter reads the second label oddly.
                    T::Ident if self.kn(1) == T::Colon => Err(Bail),
                    _ => self.stmt_ex(out),
                };
            }
            _ => match self.simple(out, false, false)? {
                Simple::Stmt(end) => end,
                _ => return Err(Bail),
            },
        };
        Ok((end, false))
    }

    /// The token index of `:=` after `a, b, c` at the current token.
    fn define_list(&self) -> Option<usize> {
        let mut j = self.p;
        let name = |j: usize| self.kat(j) == T::Ident;
        if !name(j) {
            return None;
        }
        loop {
            j += 1;
            match self.kat(j) {
                T::Comma => {
                    j += 1;
                    if !name(j) {
                        return None;
                    }
                }
                T::Define => return Some(j),
                _ => return None,
            }
        }
    }

    /// The identifier tokens from the current one up to `:=` at `def`.
    fn names_before(&self, def: usize) -> Vec<usize> {
        (self.p..def).step_by(2).collect()
    }

    /// Declares identifiers (`nil`, `iota`... are literals to
    /// tree-sitter, which declares nothing for them).
    fn declare_tokens(&mut self, names: &[usize]) {
        for &n in names {
            let name = self.ti(n);
            if !super::is_literal_word(name) {
                self.scopes.declare(name);
            }
        }
    }

    /// The targets of a declaration: one name, or a tuple of them spanning
    /// `s..e`. Each name is one frame deeper. In expression lists (`:=`,
    /// `range`) tree-sitter reads `nil`, `iota`... as literals; in `var`
    /// and `const` specs as names.
    fn names_target(&mut self, names: &[usize], s: u32, e: u32, spec: bool) -> R<Ex> {
        let one = |this: &mut Self, n: usize| {
            this.nested(|this| {
                Ok(if spec {
                    this.name_expr(n)
                } else {
                    this.word_expr(n)
                })
            })
        };
        if let [n] = names {
            return one(self, *n);
        }
        let mut elems = Vec::with_capacity(names.len());
        for &n in names {
            elems.push(one(self, n)?.id);
        }
        Ok(self.tuple(elems, s, e))
    }

    /// A simple statement. With `bare_ok`, a lone expression is returned
    /// instead of lowered; with `range_ok`, `lhs = range` / `lhs := range`
    /// stops before the range expression.
    fn simple(&mut self, out: &mut Block, bare_ok: bool, range_ok: bool) -> R<Simple> {
        let start = self.tok().start;
        if let Some(def) = self.define_list() {
            if self.kat(def + 1) == T::Range {
                return Err(Bail);
            }
            let names = self.names_before(def);
            let last = self.toks[def - 1].end;
            self.p = def + 1;
            let value = self.expr_list()?;
            self.declare_tokens(&names);
            let target = self.names_target(&names, start, last, false)?;
            self.add_stmt(
                out,
                StmtKind::Assign {
                    targets: vec![target.id],
                    value: Some(value.id),
                    op: AssignOp::Declare { mutable: true },
                },
                start,
                value.e,
            );
            return Ok(Simple::Stmt(value.e));
        }
        let fn_start = self.m.functions.len();
        let expr_start = self.m.exprs.len();
        let first = self.expr()?;
        let mut list = Vec::new();
        if self.k() == T::Comma {
            list.push(first);
            while self.eat(T::Comma) {
                list.push(self.expr()?);
            }
        }
        let single = list.is_empty();
        if single {
            list.push(first);
        }
        let lhs = |this: &mut Self, list: &[Ex]| -> Ex {
            match list {
                [one] => *one,
                _ => {
                    let s = list[0].s;
                    let e = list[list.len() - 1].e;
                    this.tuple(list.iter().map(|x| x.id).collect(), s, e)
                }
            }
        };
        let k = self.k();
        if let Some(op) = assign_op(k) {
            let op_tok = self.next();
            if self.k() == T::Range {
                if !range_ok || op_tok.kind != T::Assign {
                    return Err(Bail);
                }
                self.next();
                return Ok(Simple::Range(lhs(self, &list)));
            }
            let rhs_fn = self.m.functions.len();
            let value = self.expr_list()?;
            let end_fn = self.m.functions.len();
            self.rotate_functions(fn_start, rhs_fn, end_fn, expr_start);
            let target = lhs(self, &list);
            self.add_stmt(
                out,
                StmtKind::Assign {
                    targets: vec![target.id],
                    value: Some(value.id),
                    op,
                },
                start,
                value.e,
            );
            return Ok(Simple::Stmt(value.e));
        }
        if !single {
            return Err(Bail);
        }
        match k {
            T::Inc | T::Dec => {
                let t = self.next();
                let one = self.add_expr(ExprKind::Literal(Lit::Int(1)), t.start, t.end);
                let op = if k == T::Inc { BinOp::Add } else { BinOp::Sub };
                self.add_stmt(
                    out,
                    StmtKind::Assign {
                        targets: vec![first.id],
                        value: Some(one.id),
                        op: AssignOp::Augmented(op),
                    },
                    start,
                    t.end,
                );
                Ok(Simple::Stmt(t.end))
            }
            T::Arrow => {
                self.next();
                let value = self.expr()?;
                let send = self.add_expr(
                    ExprKind::Send {
                        channel: first.id,
                        value: value.id,
                    },
                    start,
                    value.e,
                );
                self.add_stmt(out, StmtKind::Expr(send.id), start, value.e);
                Ok(Simple::Stmt(value.e))
            }
            T::Define => Err(Bail),
            _ if bare_ok => Ok(Simple::Expr(first)),
            _ => {
                self.add_stmt(out, StmtKind::Expr(first.id), first.s, first.e);
                Ok(Simple::Stmt(first.e))
            }
        }
    }

    /// `var`/`const` declarations; their end.
    fn var_decl(&mut self, out: &mut Block) -> R<u32> {
        let t = self.next();
        let is_const = t.kind == T::Const;
        let first_out = out.len();
        let (count, end) = if self.eat(T::LParen) {
            let mut count = 0;
            while self.k() != T::RParen {
                self.var_spec(is_const, out)?;
                count += 1;
                self.semi()?;
            }
            (count, self.next().end)
        } else {
            (1, self.var_spec(is_const, out)?)
        };
        if count == 1 {
            // A lone spec is the whole statement.
            for &s in &out[first_out..] {
                self.m.stmts[s.index()].span = Span::new(t.start, end);
            }
        }
        Ok(end)
    }

    /// `a, b T = x, y` / `c = iota` / `d`; its end.
    fn var_spec(&mut self, is_const: bool, out: &mut Block) -> R<u32> {
        let first = self.expect(T::Ident)?;
        let mut names = vec![self.p - 1];
        while self.eat(T::Comma) {
            self.expect(T::Ident)?;
            names.push(self.p - 1);
        }
        let ty = if matches!(self.k(), T::Assign | T::Semi | T::RParen) {
            None
        } else {
            Some(self.parse_type()?)
        };
        let op = AssignOp::Declare { mutable: !is_const };
        if self.eat(T::Assign) {
            let value = self.expr_list()?;
            for &n in &names {
                let name = self.ti(n);
                self.scopes.declare(name);
            }
            let target = self.names_target(&names, first.start, value.e, true)?;
            self.add_stmt(
                out,
                StmtKind::Assign {
                    targets: vec![target.id],
                    value: Some(value.id),
                    op,
                },
                first.start,
                value.e,
            );
            return Ok(value.e);
        }
        if ty.is_none() != is_const {
            // `var x` without a type, `const x T` without a value.
            return Err(Bail);
        }
        let end = match ty {
            Some(t) => self.tys[t.ix()].end,
            None => self.toks[*names.last().unwrap()].end,
        };
        for &n in &names {
            let name = self.ti(n);
            self.scopes.declare(name);
            let target = self.nested(|this| Ok(this.name_expr(n)))?;
            let value = match ty {
                Some(t) if !is_const => {
                    let tr = self.type_ref(t);
                    let ty_node = self.tys[t.ix()];
                    Some(
                        self.add_expr(
                            ExprKind::Collection {
                                kind: CollKind::Struct,
                                elems: Vec::new(),
                                keys: Vec::new(),
                                ty: Some(Box::new(tr)),
                            },
                            ty_node.start,
                            ty_node.end,
                        )
                        .id,
                    )
                }
                _ => None,
            };
            self.add_stmt(
                out,
                StmtKind::Assign {
                    targets: vec![target.id],
                    value,
                    op,
                },
                first.start,
                end,
            );
        }
        Ok(end)
    }

    /// `if [init;] cond {} [else ...]`: with an init statement, a `Block`
    /// of the init and the `If`.
    fn if_stmt(&mut self, out: &mut Block) -> R<u32> {
        let t = self.expect(T::If)?;
        self.scopes.push();
        let r = self.if_rest(t.start);
        self.scopes.pop();
        let (init, s, end) = r?;
        match init {
            Some(mut inner) => {
                inner.push(s);
                self.add_stmt(out, StmtKind::Block(inner), t.start, end);
            }
            None => out.push(s),
        }
        Ok(end)
    }

    #[allow(clippy::type_complexity)]
    fn if_rest(&mut self, start: u32) -> R<(Option<Block>, unsnarl_model::StmtId, u32)> {
        let saved_lit = std::mem::replace(&mut self.no_lit, true);
        let mut inner = Block::new();
        let head = (|| {
            let first = self.nested(|this| this.simple(&mut inner, true, false))?;
            if self.k() == T::Semi {
                self.next();
                if let Simple::Expr(x) = first {
                    self.add_stmt(&mut inner, StmtKind::Expr(x.id), x.s, x.e);
                }
                Ok((true, self.expr()?))
            } else {
                match first {
                    Simple::Expr(x) => Ok((false, x)),
                    _ => Err(Bail),
                }
            }
        })();
        self.no_lit = saved_lit;
        let (has_init, cond) = head?;
        let (then, mut end) = self.block()?;
        let mut orelse = Block::new();
        if self.eat(T::Else) {
            match self.k() {
                T::If => end = self.stmt(&mut orelse)?,
                T::LBrace => {
                    let (b, e) = self.block()?;
                    orelse = b;
                    end = e;
                }
                _ => return Err(Bail),
            }
        }
        let s = self.m.add_stmt(
            StmtKind::If {
                cond: cond.id,
                then,
                orelse,
            },
            Span::new(start, end),
        );
        Ok((has_init.then_some(inner), s, end))
    }

    /// The `for` forms: `Loop`, `While` (with the init in a `Block` and the
    /// post statement at the end of the body), `For` over a range.
    fn for_stmt(&mut self, out: &mut Block) -> R<u32> {
        let t = self.expect(T::For)?;
        self.scopes.push();
        let r = self.for_rest(t.start, out);
        self.scopes.pop();
        r
    }

    fn for_rest(&mut self, start: u32, out: &mut Block) -> R<u32> {
        let saved_lit = std::mem::replace(&mut self.no_lit, true);
        let head = self.for_head();
        self.no_lit = saved_lit;
        match head? {
            ForHead::Loop => {
                let (body, end) = self.block()?;
                self.add_stmt(out, StmtKind::Loop { body }, start, end);
                Ok(end)
            }
            ForHead::Cond(cond) => {
                let (body, end) = self.block()?;
                self.add_stmt(
                    out,
                    StmtKind::While {
                        cond: cond.id,
                        body,
                        orelse: Block::new(),
                    },
                    start,
                    end,
                );
                Ok(end)
            }
            ForHead::Range(target, iter) => {
                let (body, end) = self.block()?;
                self.add_stmt(
                    out,
                    StmtKind::For {
                        target: target.map(|t| t.id),
                        iter: iter.id,
                        body,
                        is_async: false,
                    },
                    start,
                    end,
                );
                Ok(end)
            }
            ForHead::Clause {
                prefix,
                cond,
                post,
                post_fn,
                post_expr,
            } => {
                let body_fn = self.m.functions.len();
                let (mut body, end) = self.block()?;
                let end_fn = self.m.functions.len();
                // The post statement is lowered after the body.
                self.rotate_functions(post_fn, body_fn, end_fn, post_expr);
                body.extend(post);
                let kind = match cond {
                    Some(c) => StmtKind::While {
                        cond: c.id,
                        body,
                        orelse: Block::new(),
                    },
                    None => StmtKind::Loop { body },
                };
                if prefix.is_empty() {
                    self.add_stmt(out, kind, start, end);
                } else {
                    let mut prefix = prefix;
                    let lp = self.m.add_stmt(kind, Span::new(start, end));
                    prefix.push(lp);
                    self.add_stmt(out, StmtKind::Block(prefix), start, end);
                }
                Ok(end)
            }
        }
    }

    fn for_head(&mut self) -> R<ForHead> {
        match self.k() {
            T::LBrace => return Ok(ForHead::Loop),
            T::Range => {
                self.next();
                let iter = self.expr()?;
                return Ok(ForHead::Range(None, iter));
            }
            _ => {}
        }
        if let Some(def) = self.define_list()
            && self.kat(def + 1) == T::Range
        {
            let names = self.names_before(def);
            let s = self.tok().start;
            let e = self.toks[def - 1].end;
            self.p = def + 2;
            let iter = self.expr()?;
            self.declare_tokens(&names);
            let target = self.names_target(&names, s, e, false)?;
            return Ok(ForHead::Range(Some(target), iter));
        }
        let mut prefix = Block::new();
        if self.k() == T::Semi {
            self.next();
        } else {
            match self.nested(|this| this.simple(&mut prefix, true, true))? {
                Simple::Range(target) => {
                    let iter = self.expr()?;
                    return Ok(ForHead::Range(Some(target), iter));
                }
                Simple::Expr(x) if self.k() == T::LBrace => return Ok(ForHead::Cond(x)),
                Simple::Expr(x) => {
                    self.expect(T::Semi)?;
                    self.add_stmt(&mut prefix, StmtKind::Expr(x.id), x.s, x.e);
                }
                Simple::Stmt(_) => {
                    self.expect(T::Semi)?;
                }
            }
        }
        let cond = if self.k() != T::Semi {
            Some(self.expr()?)
        } else {
            None
        };
        self.expect(T::Semi)?;
        let post_fn = self.m.functions.len();
        let post_expr = self.m.exprs.len();
        let mut post = Block::new();
        if self.k() != T::LBrace {
            match self.nested(|this| this.simple(&mut post, true, false))? {
                Simple::Expr(x) => self.add_stmt(&mut post, StmtKind::Expr(x.id), x.s, x.e),
                Simple::Stmt(_) => {}
                Simple::Range(_) => return Err(Bail),
            }
        }
        Ok(ForHead::Clause {
            prefix,
            cond,
            post,
            post_fn,
            post_expr,
        })
    }

    /// Expression and type switches. An init statement wraps the switch in
    /// a `Block`; a type switch's subject is the asserted value as a
    /// `Cast`, its cases have the types as `Path` patterns.
    fn switch_stmt(&mut self, out: &mut Block) -> R<u32> {
        let t = self.expect(T::Switch)?;
        self.scopes.push();
        let saved = (self.no_lit, self.guard_ok, self.guard.take());
        let r = self.switch_rest(t.start, out);
        self.no_lit = saved.0;
        self.guard_ok = saved.1;
        self.guard = saved.2;
        self.scopes.pop();
        r
    }

    fn switch_rest(&mut self, start: u32, out: &mut Block) -> R<u32> {
        self.no_lit = true;
        let mut prefix = Block::new();
        let mut subject: Option<Subject> = None;
        if self.k() != T::LBrace {
            let mut init_done = false;
            if self.k() == T::Semi {
                self.next();
                init_done = true;
            } else {
                let part = self.nested(|this| this.switch_part(&mut prefix))?;
                if self.k() == T::Semi {
                    self.next();
                    match part {
                        Part::Expr(x) => self.add_stmt(&mut prefix, StmtKind::Expr(x.id), x.s, x.e),
                        Part::Stmt => {}
                        Part::Guard(..) => return Err(Bail),
                    }
                    init_done = true;
                } else {
                    subject = Some(match part {
                        Part::Expr(x) => Subject::Tag(x),
                        Part::Guard(alias, x) => Subject::Guard(alias, x),
                        Part::Stmt => return Err(Bail),
                    });
                }
            }
            if init_done && self.k() != T::LBrace {
                let part = self.nested(|this| this.switch_part(&mut prefix))?;
                subject = Some(match part {
                    Part::Expr(x) => Subject::Tag(x),
                    Part::Guard(alias, x) => Subject::Guard(alias, x),
                    Part::Stmt => return Err(Bail),
                });
            }
        }
        self.no_lit = false;
        self.guard_ok = false;
        let is_type = matches!(subject, Some(Subject::Guard(..)));
        let (subject_id, alias) = match subject {
            None => (None, Vec::new()),
            Some(Subject::Tag(x)) => (Some(x.id), Vec::new()),
            Some(Subject::Guard(alias, x)) => {
                let c = self.add_expr(ExprKind::Cast(x.id), x.s, x.e);
                (Some(c.id), alias)
            }
        };
        self.expect(T::LBrace)?;
        let mut cases = Vec::new();
        while self.k() != T::RBrace {
            let ct = self.tok();
            self.scopes.push();
            let r = self.switch_case(is_type, &alias);
            self.scopes.pop();
            let (patterns, body, end) = r?;
            cases.push(Case {
                patterns,
                body,
                span: Span::new(ct.start, end),
            });
        }
        let rb = self.next();
        let kind = StmtKind::Switch {
            subject: subject_id,
            cases,
        };
        if prefix.is_empty() {
            self.add_stmt(out, kind, start, rb.end);
        } else {
            let s = self.m.add_stmt(kind, Span::new(start, rb.end));
            prefix.push(s);
            self.add_stmt(out, StmtKind::Block(prefix), start, rb.end);
        }
        Ok(rb.end)
    }

    #[allow(clippy::type_complexity)]
    fn switch_case(
        &mut self,
        is_type: bool,
        alias: &[usize],
    ) -> R<(Vec<unsnarl_model::ExprId>, Block, u32)> {
        self.declare_tokens(alias);
        let mut patterns = Vec::new();
        if self.eat(T::Case) {
            loop {
                if is_type {
                    let ty = self.parse_type()?;
                    let node = self.tys[ty.ix()];
                    if self.ty_text(ty) == "nil" {
                        let e = self.add_expr(ExprKind::Literal(Lit::Null), node.start, node.end);
                        patterns.push(e.id);
                    } else {
                        patterns.push(self.nested(|this| Ok(this.type_path(ty)))?.id);
                    }
                } else {
                    patterns.push(self.expr()?.id);
                }
                if !self.eat(T::Comma) {
                    break;
                }
            }
        } else {
            self.expect(T::Default)?;
        }
        let colon = self.expect(T::Colon)?;
        let mut body = Block::new();
        let last = self.stmt_list(&mut body)?;
        Ok((patterns, body, self.clause_end(colon.end, last)))
    }

    /// One part of a switch header: an init statement (lowered into
    /// `prefix`), an expression, or a type switch guard.
    fn switch_part(&mut self, prefix: &mut Block) -> R<Part> {
        self.guard_ok = true;
        self.guard = None;
        let r = self.switch_part_inner(prefix);
        self.guard_ok = false;
        let part = r?;
        if self.guard.is_some() && !matches!(part, Part::Guard(..)) {
            return Err(Bail);
        }
        self.guard = None;
        Ok(part)
    }

    fn switch_part_inner(&mut self, prefix: &mut Block) -> R<Part> {
        let start = self.tok().start;
        if let Some(def) = self.define_list() {
            let names = self.names_before(def);
            let last = self.toks[def - 1].end;
            self.p = def + 1;
            let value = self.expr_list()?;
            if let Some(g) = self.guard {
                if names.len() != 1 || g.id != value.id || g.e != value.e {
                    return Err(Bail);
                }
                return Ok(Part::Guard(names, g));
            }
            self.declare_tokens(&names);
            let target = self.names_target(&names, start, last, false)?;
            self.add_stmt(
                prefix,
                StmtKind::Assign {
                    targets: vec![target.id],
                    value: Some(value.id),
                    op: AssignOp::Declare { mutable: true },
                },
                start,
                value.e,
            );
            return Ok(Part::Stmt);
        }
        match self.simple(prefix, true, false)? {
            Simple::Expr(x) => match self.guard {
                Some(g) if g.id == x.id && g.e == x.e => Ok(Part::Guard(Vec::new(), g)),
                Some(_) => Err(Bail),
                None => Ok(Part::Expr(x)),
            },
            Simple::Stmt(_) => Ok(Part::Stmt),
            Simple::Range(_) => Err(Bail),
        }
    }

    /// `select { case ...: }`.
    fn select_stmt(&mut self, out: &mut Block) -> R<u32> {
        let t = self.expect(T::Select)?;
        self.expect(T::LBrace)?;
        let mut arms = Vec::new();
        while self.k() != T::RBrace {
            let ct = self.tok();
            self.scopes.push();
            let r = self.select_arm();
            self.scopes.pop();
            let (kind, body, end) = r?;
            arms.push(SelectArm {
                kind,
                body,
                span: Span::new(ct.start, end),
            });
        }
        let rb = self.next();
        self.add_stmt(
            out,
            StmtKind::Select {
                arms,
                biased: false,
            },
            t.start,
            rb.end,
        );
        Ok(rb.end)
    }

    fn select_arm(&mut self) -> R<(ArmKind, Block, u32)> {
        let kind = if self.eat(T::Default) {
            ArmKind::Default
        } else {
            self.expect(T::Case)?;
            self.comm_clause()?
        };
        let colon = self.expect(T::Colon)?;
        let mut body = Block::new();
        let last = self.stmt_list(&mut body)?;
        Ok((kind, body, self.clause_end(colon.end, last)))
    }

    /// `v, ok := <-ch` / `x = <-ch` / `<-ch` / `ch <- v`.
    fn comm_clause(&mut self) -> R<ArmKind> {
        if let Some(def) = self.define_list() {
            let names = self.names_before(def);
            let s = self.tok().start;
            let e = self.toks[def - 1].end;
            self.p = def + 1;
            let channel = self.recv_operand()?;
            self.declare_tokens(&names);
            let binding = self.names_target(&names, s, e, false)?;
            return Ok(ArmKind::Recv {
                channel: channel.id,
                binding: Some(binding.id),
            });
        }
        let mut j = self.p;
        while self.kat(j) == T::LParen {
            j += 1;
        }
        if self.kat(j) == T::Arrow {
            let channel = self.recv_operand()?;
            return Ok(ArmKind::Recv {
                channel: channel.id,
                binding: None,
            });
        }
        let first = self.expr()?;
        let mut list = vec![first];
        while self.eat(T::Comma) {
            list.push(self.expr()?);
        }
        match self.k() {
            T::Arrow if list.len() == 1 => {
                self.next();
                let value = self.expr()?;
                Ok(ArmKind::Send {
                    channel: first.id,
                    value: value.id,
                })
            }
            T::Assign => {
                self.next();
                let channel = self.recv_operand()?;
                let binding = match list.as_slice() {
                    [one] => *one,
                    _ => {
                        let s = list[0].s;
                        let e = list[list.len() - 1].e;
                        self.tuple(list.iter().map(|x| x.id).collect(), s, e)
                    }
                };
                Ok(ArmKind::Recv {
                    channel: channel.id,
                    binding: Some(binding.id),
                })
            }
            _ => Err(Bail),
        }
    }

    /// A receive expression `<-ch` (possibly parenthesized): the channel.
    fn recv_operand(&mut self) -> R<Ex> {
        let mut parens = 0;
        while self.eat(T::LParen) {
            parens += 1;
        }
        self.expect(T::Arrow)?;
        let saved_lit = std::mem::replace(&mut self.no_lit, false);
        let x = self.unary();
        self.no_lit = saved_lit;
        let x = x?;
        for _ in 0..parens {
            self.expect(T::RParen)?;
        }
        if self.k() != T::Colon {
            return Err(Bail);
        }
        Ok(x)
    }

    /// The end of a case clause's span: tree-sitter's statement list takes
    /// the terminator after its last statement (a `;`, or a run of
    /// newlines), and empty statements after that.
    fn clause_end(&self, colon_end: u32, last: super::stmt::ListEnd) -> u32 {
        let b = self.src.as_bytes();
        let (mut end, mut after_stmt) = match last {
            Some((e, true)) => return e,
            Some((e, false)) => (e as usize, true),
            None => (colon_end as usize, false),
        };
        let mut i = end;
        loop {
            // Whitespace and comments; a newline is a terminator only right
            // after a statement.
            while i < b.len() {
                match b[i] {
                    b' ' | b'\t' | b'\r' | 0x0b | 0x0c => i += 1,
                    b'\n' if !after_stmt => i += 1,
                    b'/' if b.get(i + 1) == Some(&b'/') => {
                        while i < b.len() && b[i] != b'\n' {
                            i += 1;
                        }
                    }
                    b'/' if b.get(i + 1) == Some(&b'*') => {
                        i += 2;
                        while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                            i += 1;
                        }
                        i += 2;
                    }
                    _ => break,
                }
            }
            match b.get(i) {
                Some(b'\n') if after_stmt => {
                    while i < b.len() && b[i] == b'\n' {
                        i += 1;
                    }
                    end = i;
                    after_stmt = false;
                }
                Some(b';') => {
                    i += 1;
                    end = i;
                    // A `;` after a terminator is an empty statement.
                    after_stmt = !after_stmt;
                }
                _ => break,
            }
        }
        end as u32
    }
}

enum ForHead {
    Loop,
    Cond(Ex),
    Range(Option<Ex>, Ex),
    Clause {
        prefix: Block,
        cond: Option<Ex>,
        post: Block,
        post_fn: usize,
        post_expr: usize,
    },
}

enum Part {
    Stmt,
    Expr(Ex),
    Guard(Vec<usize>, Ex),
}

enum Subject {
    Tag(Ex),
    Guard(Vec<usize>, Ex),
}

fn assign_op(k: T) -> Option<AssignOp> {
    let bin = match k {
        T::Assign => return Some(AssignOp::Plain),
        T::AddAssign => BinOp::Add,
        T::SubAssign => BinOp::Sub,
        T::MulAssign => BinOp::Mul,
        T::QuoAssign => BinOp::Div,
        T::RemAssign => BinOp::Rem,
        T::AndAssign
        | T::OrAssign
        | T::XorAssign
        | T::ShlAssign
        | T::ShrAssign
        | T::AndNotAssign => BinOp::Bit,
        _ => return None,
    };
    Some(AssignOp::Augmented(bin))
}
