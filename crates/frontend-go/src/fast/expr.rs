//! Expressions.
//!
//! ## Nesting
//!
//! The tree-sitter lowering cuts off sub-trees deeper than `MAX_NESTING`;
//! this parser must give up on any file where that would happen. Recursive
//! constructs count frames as they go (`enter`), but left-nested chains
//! (`a + b + c`, `a.b.c()`) are built in a loop: their first operand ends up
//! deeper the longer the chain gets. So each element of a chain is parsed
//! as if it were the root, its high-water mark is recorded, and when the
//! chain is complete the deepest element, pushed down by the operators
//! above it, is checked (`Chain`).

use super::dotted;
use super::lexer::T;
use super::types::{TyId, TyK};
use super::{Bail, Ex, Parser, R};
use crate::literal;
use crate::resolve::{Local, PkgDecl, Resolution};
use unsnarl_model::builder::MAX_NESTING;
use unsnarl_model::{Arg, BinOp, Call, CollKind, ExprId, ExprKind, Lit, LogicalOp, TypeRef, UnOp};

/// How tree-sitter reads `B[...]`.
enum Br {
    Slice,
    Index,
    /// Type arguments of a call: skipped.
    TypeArgs,
    /// `G[A](v)`.
    Conversion,
    /// `G[A]{...}`.
    Composite,
    /// `G[A, B]` as a value.
    TypeInst,
    /// `G[A][B]` as a value (an instantiation of a generic type).
    TypeInst2,
}

/// A value `B[A]`: an index (score `index`) or an instantiation (`inst`),
/// the higher; tree-sitter was seen to prefer the instantiation on ties.
fn value_reading(index: Option<i32>, inst: Option<i32>) -> Br {
    match (index, inst) {
        (Some(i), Some(t)) if t >= i => Br::TypeInst,
        (Some(_), _) => Br::Index,
        (None, Some(_)) => Br::TypeInst,
        (None, None) => Br::Index,
    }
}

/// An element of a statement-level binary chain, recorded for `cut_chain`:
/// its tokens, its height (nesting frames below where it was parsed) and
/// the operator before it (`Eof` for the first).
#[derive(Clone, Copy)]
pub(super) struct Elem {
    start: u32,
    end: u32,
    rel: u32,
    op: T,
}

/// The deepest point of a left-nested chain being built.
struct Chain {
    saved: u32,
    /// max over elements of (their high-water mark - their offset class).
    best: i64,
    /// Operators so far.
    k: u32,
}

impl<'s> Parser<'s, '_> {
    fn chain_start(&mut self) -> Chain {
        let c = Chain {
            saved: self.hwm,
            best: i64::MIN,
            k: 0,
        };
        self.hwm = self.depth;
        c
    }

    /// Records the element just parsed (its high-water mark is `self.hwm`),
    /// which sits `k - c` levels below where it was parsed once the chain
    /// has `k` operators.
    fn chain_elem(&mut self, ch: &mut Chain, c: u32) {
        ch.best = ch.best.max(self.hwm as i64 - c as i64);
        self.hwm = self.depth;
    }

    fn chain_end(&mut self, ch: Chain) -> R<()> {
        // `hwm` counts frames entered: `limit` of them is the most
        // `enter` allows.
        let deepest = ch.best + ch.k as i64;
        if deepest > self.limit as i64 {
            return Err(Bail);
        }
        self.hwm = ch.saved.max(deepest.max(0) as u32);
        Ok(())
    }

    /// An expression (`expr(n)` of the tree-sitter lowering).
    pub(super) fn expr(&mut self) -> R<Ex> {
        self.binary(1)
    }

    /// An expression list: its only element, or a `Tuple` of them.
    pub(super) fn expr_list(&mut self) -> R<Ex> {
        let first = self.expr()?;
        if self.k() != T::Comma {
            return Ok(first);
        }
        let mut elems = vec![first.id];
        let mut e = first.e;
        while self.eat(T::Comma) {
            let x = self.expr()?;
            elems.push(x.id);
            e = x.e;
        }
        Ok(self.tuple(elems, first.s, e))
    }

    pub(super) fn tuple(&mut self, elems: Vec<ExprId>, s: u32, e: u32) -> Ex {
        self.add_expr(
            ExprKind::Collection {
                kind: CollKind::Tuple,
                elems,
                keys: Vec::new(),
                ty: None,
            },
            s,
            e,
        )
    }

    fn binary(&mut self, min_prec: u8) -> R<Ex> {
        // A chain that is the whole expression of a statement (no other
        // chain is being built) knows its true depth: when it turns out
        // deeper than the tree-sitter lowering goes, it is rebuilt with
        // the same cut-offs (`cut_chain`) instead of giving up.
        let root = self.chains_open == 0;
        let mark = root.then(|| self.mark());
        if root {
            self.chain_rec.clear();
        }
        self.chains_open += 1;
        let r = self.binary_chain(min_prec, root);
        self.chains_open -= 1;
        match (r, mark) {
            (Err(Bail), Some(mark)) if std::mem::take(&mut self.cut_pending) => {
                self.rollback(mark);
                let elems = std::mem::take(&mut self.chain_rec);
                let r = self.cut_chain(&elems);
                self.chain_rec = elems;
                r
            }
            (r, _) => r,
        }
    }

    fn binary_chain(&mut self, min_prec: u8, root: bool) -> R<Ex> {
        let mut ch = self.chain_start();
        let start = self.p as u32;
        let mut x = self.unary()?;
        if root {
            let rel = self.hwm - self.depth;
            self.chain_rec.push(Elem {
                start,
                end: self.p as u32,
                rel,
                op: T::Eof,
            });
        }
        self.chain_elem(&mut ch, 0);
        loop {
            let prec = binary_prec(self.k());
            if prec < min_prec {
                break;
            }
            let op = self.next().kind;
            let start = self.p as u32;
            let y = self.binary(prec + 1)?;
            if root {
                let rel = self.hwm - self.depth;
                self.chain_rec.push(Elem {
                    start,
                    end: self.p as u32,
                    rel,
                    op,
                });
            }
            ch.k += 1;
            let c = ch.k - 1;
            self.chain_elem(&mut ch, c);
            let kind = binary_kind(op, x.id, y.id);
            x = self.add_expr(kind, x.s, y.e);
        }
        if root && ch.best + ch.k as i64 > self.limit as i64 {
            self.cut_pending = true;
        }
        self.chain_end(ch)?;
        Ok(x)
    }

    /// Rebuilds a statement-level chain `e0 op1 e1 ... opk ek` (recorded
    /// in `elems`) with the cut-offs of the tree-sitter lowering: a node
    /// at depth `MAX_NESTING` or more is an empty `Other` spanning it. The
    /// left spine is cut from the first operator that deep; elements are
    /// cut whole or lowered at their true depth (one cut inside an element
    /// gives up).
    fn cut_chain(&mut self, elems: &[Elem]) -> R<Ex> {
        let max = MAX_NESTING as i64;
        let l = self.depth as i64;
        let k = elems.len() as i64 - 1;
        let span_of = |this: &Self, e: &Elem| {
            (
                this.toks[e.start as usize].start,
                this.toks[e.end as usize - 1].end,
            )
        };
        // Operator i sits at depth l + k - i; element 0 at l + k, element
        // i >= 1 at l + k - i + 1.
        let cut_ops = l + k - max;
        let (mut x, mut i) = if cut_ops >= 1 {
            let (s, _) = span_of(self, &elems[0]);
            let (_, e) = span_of(self, &elems[cut_ops as usize]);
            (
                self.add_expr(ExprKind::Other(Vec::new()), s, e),
                cut_ops + 1,
            )
        } else {
            (self.cut_elem(&elems[0], l + k, true)?, 1)
        };
        while i <= k {
            let e = &elems[i as usize];
            let y = self.cut_elem(e, l + k - i + 1, false)?;
            let kind = binary_kind(e.op, x.id, y.id);
            x = self.add_expr(kind, x.s, y.e);
            i += 1;
        }
        self.p = elems[k as usize].end as usize;
        Ok(x)
    }

    fn cut_elem(&mut self, e: &Elem, depth: i64, first: bool) -> R<Ex> {
        let max = MAX_NESTING as i64;
        if depth >= max {
            let s = self.toks[e.start as usize].start;
            let end = self.toks[e.end as usize - 1].end;
            return Ok(self.add_expr(ExprKind::Other(Vec::new()), s, end));
        }
        if depth + e.rel as i64 > max {
            return Err(Bail);
        }
        self.p = e.start as usize;
        let saved = std::mem::replace(&mut self.depth, depth as u32);
        let saved_limit = std::mem::replace(&mut self.limit, MAX_NESTING);
        self.chains_open += 1;
        let r = if first {
            self.unary()
        } else {
            self.binary(binary_prec(e.op) + 1)
        };
        self.chains_open -= 1;
        self.depth = saved;
        self.limit = saved_limit;
        let x = r?;
        if self.p != e.end as usize {
            return Err(Bail);
        }
        Ok(x)
    }

    pub(super) fn unary(&mut self) -> R<Ex> {
        let t = self.tok();
        let op = match t.kind {
            T::Add | T::Xor => UnOp::Other,
            T::Sub => UnOp::Neg,
            T::Not => UnOp::Not,
            T::Mul => UnOp::Deref,
            T::And => UnOp::Ref,
            T::Arrow => {
                if self.kn(1) == T::Chan {
                    // `<-chan T(x)`: a conversion Go reads specially.
                    return Err(Bail);
                }
                UnOp::Other
            }
            _ => return self.primary(),
        };
        if t.kind == T::Mul && self.pointer_conversion() {
            return self.primary();
        }
        self.next();
        self.enter()?;
        let x = self.unary();
        self.leave();
        let x = x?;
        let kind = if t.kind == T::Arrow {
            ExprKind::Recv(x.id)
        } else {
            ExprKind::Unary { op, operand: x.id }
        };
        Ok(self.add_expr(kind, t.start, x.e))
    }

    /// `*(T)(v)` with `T` a type that is not an expression: tree-sitter
    /// reads a conversion to the pointer type `*(T)`, not a dereference.
    fn pointer_conversion(&mut self) -> bool {
        if self.kn(1) != T::LParen {
            return false;
        }
        let close = self.partner(self.p + 1);
        if self.kat(close + 1) != T::LParen {
            return false;
        }
        match self.type_spanning(self.p + 1, close + 1) {
            Some(t) => self.paren_is_type(t, close),
            None => false,
        }
    }

    /// An operand with its postfix operators (selectors, index, slice,
    /// calls, type assertions).
    fn primary(&mut self) -> R<Ex> {
        self.chains_open += 1;
        let r = self.primary_chain();
        self.chains_open -= 1;
        r
    }

    fn primary_chain(&mut self) -> R<Ex> {
        let mut ch = self.chain_start();
        self.enter()?;
        let r = self.operand();
        self.leave();
        let (mut x, mut plain) = r?;
        self.chain_elem(&mut ch, 0);
        loop {
            match self.k() {
                T::Period => match self.kn(1) {
                    T::Ident => {
                        self.next();
                        let f = self.next();
                        let name = self.txt(f);
                        let resolved = self.attr_resolved(x.id, name);
                        x = self.add_expr(
                            ExprKind::Attr {
                                obj: x.id,
                                name: name.into(),
                                resolved: resolved.map(Into::into),
                            },
                            x.s,
                            f.end,
                        );
                        ch.k += 1;
                    }
                    T::LParen if self.kn(2) == T::Type => {
                        // `x.(type)`: only as a type switch guard, which
                        // ends the expression.
                        if !self.guard_ok || self.guard.is_some() {
                            return Err(Bail);
                        }
                        self.next();
                        self.next();
                        self.next();
                        self.expect(T::RParen)?;
                        self.guard = Some(x);
                        break;
                    }
                    T::LParen => {
                        self.next();
                        self.next();
                        self.parse_type()?;
                        let rp = self.expect(T::RParen)?;
                        x = self.add_expr(ExprKind::Cast(x.id), x.s, rp.end);
                        ch.k += 1;
                    }
                    _ => return Err(Bail),
                },
                T::LBrack => {
                    ch.k += 1;
                    let c = ch.k;
                    self.depth += 1;
                    let saved_lit = std::mem::replace(&mut self.no_lit, false);
                    let r = self.index_or_slice(x);
                    self.no_lit = saved_lit;
                    self.depth -= 1;
                    match r? {
                        Some(nx) => {
                            x = nx;
                            self.chain_elem(&mut ch, c);
                        }
                        None => {
                            // Type arguments of a call: no node.
                            ch.k -= 1;
                            self.hwm = self.depth;
                            if self.k() != T::LParen {
                                return Err(Bail);
                            }
                        }
                    }
                }
                T::LParen => {
                    ch.k += 1;
                    let c = ch.k;
                    self.depth += 1;
                    let saved_lit = std::mem::replace(&mut self.no_lit, false);
                    let special = plain.is_some_and(|i| matches!(self.ti(i), "new" | "make"));
                    let r = self.call_args(special);
                    self.no_lit = saved_lit;
                    self.depth -= 1;
                    let (args, end) = r?;
                    self.chain_elem(&mut ch, c);
                    x = self.make_call(x, args, x.s, end);
                }
                _ => break,
            }
            plain = None;
        }
        self.chain_end(ch)?;
        Ok(x)
    }

    /// `x[i]`, `x[a:b:c]`, or `x[T1, T2]` before a call (`None`: the type
    /// arguments were skipped).
    fn index_or_slice(&mut self, x: Ex) -> R<Option<Ex>> {
        let open = self.p;
        let close = self.partner(open);
        match self.bracket(open, None)? {
            Br::Slice => {
                self.next();
                let mut parts = vec![x.id];
                if self.k() != T::Colon {
                    parts.push(self.expr()?.id);
                }
                self.expect(T::Colon)?;
                if !matches!(self.k(), T::RBrack | T::Colon) {
                    parts.push(self.expr()?.id);
                }
                if self.eat(T::Colon) {
                    parts.push(self.expr()?.id);
                }
                let rb = self.expect(T::RBrack)?;
                Ok(Some(self.add_expr(ExprKind::Other(parts), x.s, rb.end)))
            }
            Br::Index => {
                self.next();
                let index = self.expr()?;
                let rb = self.expect(T::RBrack)?;
                Ok(Some(self.add_expr(
                    ExprKind::Index {
                        obj: x.id,
                        index: index.id,
                    },
                    x.s,
                    rb.end,
                )))
            }
            Br::TypeArgs => {
                self.p = close + 1;
                Ok(None)
            }
            Br::Conversion | Br::Composite | Br::TypeInst | Br::TypeInst2 => Err(Bail),
        }
    }

    /// How tree-sitter reads `B[...]` at the bracket `open`, in the context
    /// that follows the closing bracket. `base` is the score of `B` as a
    /// type when `B` can be the base of a generic type (an identifier or
    /// `pkg.Name`: -1 or 0), else `None`.
    ///
    /// The grammar is ambiguous here and tree-sitter keeps the reading with
    /// the highest total dynamic precedence (`index_expression` +1,
    /// `generic_type` +1, `type_arguments` +2, type conversions and
    /// instantiations -1, a type name used as a type -1). Ties go the way
    /// tree-sitter was seen to break them; where that is not known the
    /// file goes to tree-sitter.
    fn bracket(&mut self, open: usize, base: Option<i32>) -> R<Br> {
        let close = self.partner(open);
        if close == open + 1 {
            return Err(Bail);
        }
        if self.has_top(open + 1, close, T::Colon) {
            return Ok(Br::Slice);
        }
        let Some(types) = self.type_list(open + 1, close) else {
            // Not types: an index (or a syntax error, found when parsing).
            return Ok(Br::Index);
        };
        let tsum: i32 = types.iter().map(|&t| self.t_score(t)).sum();
        // The score as an index expression, when it can be one.
        let index = match types.as_slice() {
            [one] if self.expressible(*one) => Some(1 + self.e_score(*one)),
            _ => None,
        };
        match self.kat(close + 1) {
            T::LParen => {
                let (n, variadic) = self.count_args(close + 1);
                if base.is_some() && n == 1 && !variadic {
                    // A conversion to the generic type: 2 + tsum, never
                    // below the other readings, and preferred on ties.
                    return Ok(Br::Conversion);
                }
                match index {
                    Some(i) if i >= 2 + tsum => Ok(Br::Index),
                    _ => Ok(Br::TypeArgs),
                }
            }
            T::LBrace if base.is_some() && !self.no_lit => Ok(Br::Composite),
            T::LBrack if base.is_some() => {
                let b = base.unwrap_or(0);
                match self.second_bracket(close + 1, b, tsum, index)? {
                    Some(br) => Ok(br),
                    None => Ok(value_reading(index, Some(-1 + b + tsum))),
                }
            }
            _ => Ok(value_reading(index, base.map(|b| -1 + b + tsum))),
        }
    }

    /// `G[A1][A2]` where both lists are types: `G[A1]` can be a generic
    /// type instantiated again (`type_instantiation_expression` of a
    /// `generic_type`), which competes with two index expressions.
    /// `None` when the second bracket does not change the reading.
    fn second_bracket(
        &mut self,
        open2: usize,
        base: i32,
        tsum1: i32,
        index1: Option<i32>,
    ) -> R<Option<Br>> {
        let close2 = self.partner(open2);
        if close2 == open2 + 1 || self.has_top(open2 + 1, close2, T::Colon) {
            return Ok(None);
        }
        let Some(types2) = self.type_list(open2 + 1, close2) else {
            return Ok(None);
        };
        let tsum2: i32 = types2.iter().map(|&t| self.t_score(t)).sum();
        let index2 = match types2.as_slice() {
            [one] if self.expressible(*one) => Some(1 + self.e_score(*one)),
            _ => None,
        };
        let ii = index1.zip(index2).map(|(a, b)| a + b);
        let ti2 = 2 + tsum1 + tsum2;
        let ti1i = index2.map(|b| -1 + base + tsum1 + b);
        let best = ti2
            .max(ii.unwrap_or(i32::MIN))
            .max(ti1i.unwrap_or(i32::MIN));
        let after = self.kat(close2 + 1);
        if matches!(after, T::LParen | T::LBrack) || (after == T::LBrace && !self.no_lit) {
            // Calls and further brackets bring more readings.
            return if ti2 == best { Err(Bail) } else { Ok(None) };
        }
        if ti2 == best {
            // Seen: a tie with two indexes goes to the instantiation.
            return if ti1i == Some(best) {
                Err(Bail)
            } else {
                Ok(Some(Br::TypeInst2))
            };
        }
        Ok(None)
    }

    /// The types of `[from, to)` when it is a comma-separated list of types
    /// (no unions: tree-sitter reads `a|b` as an expression there).
    fn type_list(&mut self, from: usize, to: usize) -> Option<Vec<super::TyId>> {
        let saved = self.p;
        self.p = from;
        let mut out = Vec::new();
        let ok = loop {
            match self.parse_type() {
                Ok(t) => out.push(t),
                Err(_) => break false,
            }
            if self.p == to {
                break true;
            }
            if !self.eat(T::Comma) {
                break false;
            }
            if self.p == to {
                break true;
            }
        };
        self.p = saved;
        ok.then_some(out)
    }

    /// The dynamic precedence of a type read as a type.
    pub(super) fn t_score(&self, t: super::TyId) -> i32 {
        let ty = self.tys[t.ix()];
        match ty.kind {
            TyK::Name => -1,
            TyK::Qualified | TyK::Func | TyK::Struct | TyK::Interface => 0,
            TyK::Pointer
            | TyK::Paren
            | TyK::Slice
            | TyK::Array
            | TyK::ImplicitArray
            | TyK::Chan
            | TyK::Negated => self.t_score(TyId(ty.a)),
            TyK::Map => 3 + self.t_score(TyId(ty.a)) + self.t_score(TyId(ty.b)),
            TyK::Generic => {
                3 + self
                    .ty_list(ty.b)
                    .into_iter()
                    .flat_map(|e| self.elem_members(e))
                    .map(|m| self.t_score(m))
                    .sum::<i32>()
            }
            TyK::Union => self
                .ty_list(ty.b)
                .into_iter()
                .map(|m| self.t_score(m))
                .sum(),
        }
    }

    /// The dynamic precedence of an expressible type read as an
    /// expression (the better of its readings).
    pub(super) fn e_score(&self, t: super::TyId) -> i32 {
        let ty = self.tys[t.ix()];
        match ty.kind {
            TyK::Pointer | TyK::Paren => self.e_score(TyId(ty.a)),
            TyK::Generic => {
                let args = self.ty_list(ty.b);
                let base = if self.tys[ty.a as usize].kind == TyK::Name {
                    -1
                } else {
                    0
                };
                let tsum: i32 = args.iter().map(|&a| self.t_score(a)).sum();
                let inst = -1 + base + tsum;
                match args.as_slice() {
                    [one] if self.expressible(*one) => inst.max(1 + self.e_score(*one)),
                    _ => inst,
                }
            }
            _ => 0,
        }
    }

    /// Whether a token of kind `k` appears in `[from, to)` outside nested
    /// brackets.
    pub(super) fn has_top(&self, from: usize, to: usize, k: T) -> bool {
        let mut j = from;
        while j < to {
            let kind = self.toks[j].kind;
            if kind == k {
                return true;
            }
            j = match kind {
                T::LParen | T::LBrack | T::LBrace => self.partner(j) + 1,
                _ => j + 1,
            };
        }
        false
    }

    /// The arguments of a call, from `(`; `special` for `new`/`make`, whose
    /// first argument is a type.
    fn call_args(&mut self, special: bool) -> R<(Vec<Arg>, u32)> {
        let lp = self.expect(T::LParen)?;
        let _ = lp;
        let mut args = Vec::new();
        if special && self.k() != T::RParen {
            let t = self.parse_type()?;
            if !matches!(self.k(), T::Comma | T::RParen) {
                return Err(Bail);
            }
            let value = self.nested(|this| Ok(this.type_path(t)))?;
            args.push(Arg {
                name: None,
                value: value.id,
                spread: false,
            });
            if !self.eat(T::Comma) {
                let rp = self.expect(T::RParen)?;
                return Ok((args, rp.end));
            }
        }
        while self.k() != T::RParen {
            let v = self.expr()?;
            let spread = self.eat(T::Ellipsis);
            args.push(Arg {
                name: None,
                value: v.id,
                spread,
            });
            if !self.eat(T::Comma) {
                break;
            }
        }
        let rp = self.expect(T::RParen)?;
        Ok((args, rp.end))
    }

    /// An operand, and the token of a lone identifier (for `new`/`make`).
    fn operand(&mut self) -> R<(Ex, Option<usize>)> {
        let t = self.tok();
        let lit = match t.kind {
            T::Ident => return self.ident_operand(),
            T::Int => literal::int(self.txt(t)),
            T::Float => literal::float(self.txt(t)),
            T::Imag => Lit::Other,
            T::Rune => literal::rune(self.txt(t)),
            T::Str => literal::interpreted_string(self.txt(t)),
            T::RawStr => literal::raw_string(self.txt(t)),
            T::LParen => return Ok((self.paren_operand()?, None)),
            T::Func => return Ok((self.func_operand()?, None)),
            T::LBrack | T::Map | T::Chan | T::Struct | T::Interface => {
                return Ok((self.type_operand()?, None));
            }
            T::Mul => {
                // `*(T)(v)` (see `pointer_conversion`).
                self.parse_type()?;
                return Ok((self.conversion(t.start)?, None));
            }
            _ => return Err(Bail),
        };
        self.next();
        Ok((self.add_expr(ExprKind::Literal(lit), t.start, t.end), None))
    }

    /// The identifier at token `i` in an expression: a `Name`, or the
    /// literal tree-sitter reads `nil`, `true`, `false` and `iota` as.
    pub(super) fn word_expr(&mut self, i: usize) -> Ex {
        let t = self.toks[i];
        match literal_word(self.txt(t)) {
            Some(kind) => self.add_expr(kind, t.start, t.end),
            None => self.name_expr(i),
        }
    }

    fn ident_operand(&mut self) -> R<(Ex, Option<usize>)> {
        let i = self.p;
        let t = self.tok();
        if let Some(kind) = literal_word(self.txt(t)) {
            self.next();
            return Ok((self.add_expr(kind, t.start, t.end), None));
        }
        // `T{`, `pkg.T{`, `G[A]{`, `G[A](v)`, `G[A, B]`: the identifier is
        // (part of) a type.
        let base_end = if self.kn(1) == T::Period && self.kn(2) == T::Ident {
            i + 2
        } else {
            i
        };
        match self.kat(base_end + 1) {
            T::LBrace if !self.no_lit => {
                let ty = self.parse_type()?;
                let s = self.tys[ty.ix()].start;
                return Ok((self.composite(ty, s)?, None));
            }
            T::LBrack => {
                if let Some(x) = self.generic_operand(base_end + 1)? {
                    return Ok((x, None));
                }
            }
            _ => {}
        }
        self.next();
        Ok((self.name_expr(i), Some(i)))
    }

    /// `G[A...]` followed by `(v)` (a conversion to a generic type), `{`
    /// (a composite literal) or anything but a call (an instantiation),
    /// the way tree-sitter reads them; `None` when it is an index or a
    /// call with type arguments (the postfix loop handles those).
    fn generic_operand(&mut self, open: usize) -> R<Option<Ex>> {
        let close = self.partner(open);
        let base = if open == self.p + 1 { -1 } else { 0 };
        let start = self.tok().start;
        match self.bracket(open, Some(base))? {
            Br::Slice | Br::Index | Br::TypeArgs => Ok(None),
            Br::Conversion => {
                let ty = self.parse_type()?;
                self.expect(T::LParen)?;
                let saved_lit = std::mem::replace(&mut self.no_lit, false);
                let operand = self.expr();
                self.no_lit = saved_lit;
                let operand = operand?;
                self.eat(T::Comma);
                let rp = self.expect(T::RParen)?;
                Ok(Some(self.generic_conversion(ty, operand, start, rp.end)?))
            }
            Br::Composite => {
                let ty = self.parse_type()?;
                Ok(Some(self.composite(ty, start)?))
            }
            Br::TypeInst2 => {
                let ty = self.parse_type()?;
                if self.p != close + 1 {
                    return Err(Bail);
                }
                let close2 = self.partner(self.p);
                self.next();
                loop {
                    self.parse_type()?;
                    if !self.eat(T::Comma) || self.p == close2 {
                        break;
                    }
                }
                let rb = self.expect(T::RBrack)?;
                let x = self.type_name_expr(ty);
                Ok(Some(Ex {
                    id: x.id,
                    s: start,
                    e: rb.end,
                }))
            }
            Br::TypeInst => {
                let ty = self.parse_type()?;
                if self.p != close + 1 {
                    return Err(Bail);
                }
                let base = TyId(self.tys[ty.ix()].a);
                let x = self.type_name_expr(base);
                let end = self.tys[ty.ix()].end;
                Ok(Some(Ex {
                    id: x.id,
                    s: start,
                    e: end,
                }))
            }
        }
    }

    /// The number of arguments in the parentheses at `open`, and whether
    /// one is spread (`xs...`).
    fn count_args(&self, open: usize) -> (usize, bool) {
        let close = self.partner(open);
        if close == open + 1 {
            return (0, false);
        }
        let mut n = 1;
        let mut variadic = false;
        let mut j = open + 1;
        while j < close {
            match self.toks[j].kind {
                T::LParen | T::LBrack | T::LBrace => j = self.partner(j),
                T::Comma if j + 1 < close => n += 1,
                T::Ellipsis => variadic = true,
                _ => {}
            }
            j += 1;
        }
        (n, variadic)
    }

    /// `G[A](v)`: a call of the instantiated function or type, or, when
    /// `G` or `A` is a value, a call of an element (`handlers[i](v)`).
    fn generic_conversion(&mut self, ty: TyId, operand: Ex, s: u32, e: u32) -> R<Ex> {
        let arg = Arg {
            name: None,
            value: operand.id,
            spread: false,
        };
        let t = self.tys[ty.ix()];
        let base = TyId(t.a);
        if self.generic_is_instantiation(ty) {
            let func = self.type_name_expr(base);
            return Ok(self.make_call(func, vec![arg], s, e));
        }
        let obj = self.nested(|this| Ok(this.type_path(base)))?;
        let first = self.ty_list(t.b)[0];
        let member = self.elem_members(first)[0];
        let m = self.tys[member.ix()];
        let index = if m.kind == TyK::Name {
            let id = self.name_at(m.start, m.end);
            Ex {
                id,
                s: m.start,
                e: m.end,
            }
        } else {
            self.nested(|this| Ok(this.type_path(member)))?
        };
        let func = self.add_expr(
            ExprKind::Index {
                obj: obj.id,
                index: index.id,
            },
            t.start,
            t.end,
        );
        Ok(self.make_call(func, vec![arg], s, e))
    }

    fn generic_is_instantiation(&self, ty: TyId) -> bool {
        let t = self.tys[ty.ix()];
        let base = self.tys[t.a as usize];
        if base.kind == TyK::Name {
            match self.res(self.slice(base.start, base.end)) {
                Resolution::Module(Some(PkgDecl::Func | PkgDecl::Type(_)))
                | Resolution::Local(Local::Type(_)) => return true,
                Resolution::Local(_) | Resolution::Module(Some(PkgDecl::Var)) => return false,
                _ => {}
            }
        }
        self.ty_list(t.b).into_iter().all(|elem| {
            self.elem_members(elem).into_iter().all(|m| {
                let m = self.tys[m.ix()];
                m.kind != TyK::Name
                    || !matches!(
                        self.res(self.slice(m.start, m.end)),
                        Resolution::Local(Local::Value)
                            | Resolution::Module(Some(PkgDecl::Var | PkgDecl::Func))
                    )
            })
        })
    }

    /// A named type used as a callee: `T` → Name, `pkg.T` → Attr on the
    /// package name, `T[A]` → T; other types → Path.
    fn type_name_expr(&mut self, t: TyId) -> Ex {
        let ty = self.tys[t.ix()];
        match ty.kind {
            TyK::Name => {
                let id = self.name_at(ty.start, ty.end);
                Ex {
                    id,
                    s: ty.start,
                    e: ty.end,
                }
            }
            TyK::Generic if self.tys[ty.a as usize].kind != TyK::Generic => {
                self.type_name_expr(TyId(ty.a))
            }
            TyK::Qualified => {
                let pkg = self.toks[ty.a as usize];
                let obj = self.name_at(pkg.start, pkg.end);
                let name = self.ti(ty.b as usize);
                let resolved = self.attr_resolved(obj, name);
                self.add_expr(
                    ExprKind::Attr {
                        obj,
                        name: name.into(),
                        resolved: resolved.map(Into::into),
                    },
                    ty.start,
                    ty.end,
                )
            }
            _ => self.type_path(t),
        }
    }

    /// A type in value position.
    pub(super) fn type_path(&mut self, t: TyId) -> Ex {
        let TypeRef { text, resolved } = self.type_ref(t);
        let ty = self.tys[t.ix()];
        self.add_expr(ExprKind::Path { text, resolved }, ty.start, ty.end)
    }

    /// `(x)` or a parenthesized type being converted to (`([]T)(v)`).
    fn paren_operand(&mut self) -> R<Ex> {
        let open = self.p;
        let close = self.partner(open);
        if let Some(t) = self.type_spanning(open, close + 1)
            && self.paren_is_type(t, close)
        {
            self.p = close + 1;
            let s = self.toks[open].start;
            return self.conversion(s);
        }
        let lp = self.next();
        let saved_lit = std::mem::replace(&mut self.no_lit, false);
        let inner = self.expr();
        self.no_lit = saved_lit;
        let inner = inner?;
        let rp = self.expect(T::RParen)?;
        Ok(Ex {
            id: inner.id,
            s: lp.start,
            e: rp.end,
        })
    }

    /// Whether `(...)` (read as the type `t`, ending at token `close`) is
    /// a parenthesized type being converted to rather than an expression:
    /// always when it is not an expression, and when a call follows and the
    /// conversion scores at least as high (`(*G[T])(v)`; `(*T)(v)` stays a
    /// call).
    fn paren_is_type(&self, t: super::TyId, close: usize) -> bool {
        if !self.expressible(t) {
            return true;
        }
        self.kat(close + 1) == T::LParen && self.t_score(t) > self.e_score(t)
    }

    /// `T(v)` for an unnamed type `T` already parsed (from `s`): a cast.
    fn conversion(&mut self, s: u32) -> R<Ex> {
        self.expect(T::LParen)?;
        let saved_lit = std::mem::replace(&mut self.no_lit, false);
        let operand = self.expr();
        self.no_lit = saved_lit;
        let operand = operand?;
        self.eat(T::Comma);
        let rp = self.expect(T::RParen)?;
        Ok(self.add_expr(ExprKind::Cast(operand.id), s, rp.end))
    }

    /// A func literal, or a function type being converted to.
    fn func_operand(&mut self) -> R<Ex> {
        let start = self.p;
        self.parse_type()?;
        if self.k() == T::LBrace {
            self.p = start;
            return self.func_literal();
        }
        self.conversion(self.toks[start].start)
    }

    /// `[]T{...}`, `map[K]V(m)`, `struct{}{}`...
    fn type_operand(&mut self) -> R<Ex> {
        self.implicit_ok = true;
        let ty = self.parse_type()?;
        let s = self.tys[ty.ix()].start;
        match self.k() {
            T::LParen if self.tys[ty.ix()].kind != TyK::ImplicitArray => self.conversion(s),
            T::LBrace => self.composite(ty, s),
            _ => Err(Bail),
        }
    }

    /// A composite literal of type `ty` (starting at `s`), at `{`.
    fn composite(&mut self, ty: TyId, s: u32) -> R<Ex> {
        self.literal_value(Some(ty), s)
    }

    /// A literal value `{...}` typed by `ty` when known (the composite
    /// type, or the element type of the enclosing literal).
    fn literal_value(&mut self, ty: Option<TyId>, s: u32) -> R<Ex> {
        let shape = ty.map(|t| self.shape(t));
        let elem_ty = match shape.map(|t| (t.kind, t)) {
            Some((TyK::Slice | TyK::Array | TyK::ImplicitArray, t)) => Some(TyId(t.a)),
            Some((TyK::Map, t)) => Some(TyId(t.b)),
            _ => None,
        };
        self.expect(T::LBrace)?;
        let saved_lit = std::mem::replace(&mut self.no_lit, false);
        let r = self.literal_elements(elem_ty);
        self.no_lit = saved_lit;
        let (elems, mut keys, keyed) = r?;
        let rb = self.expect(T::RBrace)?;
        if !keyed {
            keys.clear();
        }
        let kind = match shape.map(|t| t.kind) {
            Some(TyK::Map) => CollKind::Dict,
            Some(TyK::Slice | TyK::Array | TyK::ImplicitArray) => CollKind::List,
            Some(_) => CollKind::Struct,
            None if keyed => CollKind::Struct,
            None => CollKind::List,
        };
        let ty = ty.map(|t| self.type_ref(t));
        Ok(self.add_expr(
            ExprKind::Collection {
                kind,
                elems,
                keys,
                ty: ty.map(Box::new),
            },
            s,
            rb.end,
        ))
    }

    #[allow(clippy::type_complexity)]
    fn literal_elements(
        &mut self,
        elem_ty: Option<TyId>,
    ) -> R<(Vec<ExprId>, Vec<Option<unsnarl_model::Str>>, bool)> {
        let mut elems = Vec::new();
        let mut keys = Vec::new();
        let mut keyed = false;
        while self.k() != T::RBrace {
            if let Some(colon) = self.key_colon(self.p) {
                // The key is not lowered: only its text is kept.
                let from = self.p;
                if colon == from {
                    return Err(Bail);
                }
                let first = self.toks[from];
                let text = if colon == from + 1 && matches!(first.kind, T::Str | T::RawStr) {
                    self.string_value(first).ok_or(Bail)?
                } else {
                    let last = self.toks[colon - 1];
                    self.slice(first.start, last.end).to_string()
                };
                self.p = colon + 1;
                keyed = true;
                keys.push(Some(text.into()));
            } else {
                keys.push(None);
            }
            elems.push(self.element(elem_ty)?.id);
            if !self.eat(T::Comma) {
                break;
            }
        }
        Ok((elems, keys, keyed))
    }

    /// The `:` of a keyed element starting at token `from`, if it is one.
    fn key_colon(&self, from: usize) -> Option<usize> {
        let mut j = from;
        loop {
            match self.toks[j].kind {
                T::LParen | T::LBrack | T::LBrace => j = self.partner(j) + 1,
                T::Colon => return Some(j),
                T::Comma | T::RBrace | T::Semi | T::Eof => return None,
                _ => j += 1,
            }
        }
    }

    /// An element of a literal value: an expression, or a nested literal
    /// value whose type is elided.
    fn element(&mut self, elem_ty: Option<TyId>) -> R<Ex> {
        if self.k() == T::LBrace {
            let s = self.tok().start;
            return self.nested(|this| this.literal_value(elem_ty, s));
        }
        self.expr()
    }

    // ----- names and calls -----

    /// The identifier at token `i` as a `Name`.
    pub(super) fn name_expr(&mut self, i: usize) -> Ex {
        let t = self.toks[i];
        let id = self.name_at(t.start, t.end);
        Ex {
            id,
            s: t.start,
            e: t.end,
        }
    }

    fn name_at(&mut self, s: u32, e: u32) -> ExprId {
        let id = self.slice(s, e);
        let resolved = self.resolve_name(id);
        self.m.add_expr(
            ExprKind::Name {
                id: id.into(),
                resolved: resolved.map(Into::into),
            },
            unsnarl_model::Span::new(s, e),
        )
    }

    /// What an unqualified identifier refers to, as a qualified name.
    pub(super) fn resolve_name(&self, id: &str) -> Option<String> {
        match self.res(id) {
            Resolution::Local(Local::Type(t)) => Some(self.m.types[t.index()].qualname.to_string()),
            Resolution::Local(_) | Resolution::Unknown => None,
            Resolution::Package(path) => Some(path.to_string()),
            Resolution::Module(_) => Some(self.module_qual(id)),
            Resolution::DotImport(path) => Some(dotted(path, id)),
            Resolution::Builtin => Some(id.to_string()),
        }
    }

    /// Whether a lowered expression names a package or a type.
    fn is_static(&self, e: ExprId) -> bool {
        match &self.m.expr(e).kind {
            ExprKind::Name {
                id,
                resolved: Some(_),
            } => matches!(
                self.res(id),
                Resolution::Package(_)
                    | Resolution::Module(Some(PkgDecl::Type(_)))
                    | Resolution::Local(Local::Type(_))
            ),
            _ => false,
        }
    }

    fn attr_resolved(&self, obj: ExprId, name: &str) -> Option<String> {
        match &self.m.expr(obj).kind {
            ExprKind::Name {
                resolved: Some(r), ..
            } if self.is_static(obj) => Some(dotted(r, name)),
            ExprKind::Attr {
                resolved: Some(r), ..
            } => Some(dotted(r, name)),
            _ => None,
        }
    }

    /// The call node: name, receiver and target from the callee.
    fn make_call(&mut self, func: Ex, args: Vec<Arg>, s: u32, e: u32) -> Ex {
        let mut head = func.id;
        if let ExprKind::Index { obj, index } = &self.m.expr(head).kind
            && self.is_instantiation(*obj, *index)
        {
            head = *obj;
        }
        let (name, receiver, target) =
            crate::resolve::callee_parts(&self.m.expr(head).kind, |e| self.is_static(e));
        self.add_expr(
            ExprKind::Call(Box::new(Call {
                func: func.id,
                receiver,
                name,
                target,
                args,
                is_new: false,
                is_macro: false,
                effects: unsnarl_model::EffectSet::UNKNOWN,
            })),
            s,
            e,
        )
    }

    fn is_instantiation(&self, obj: ExprId, index: ExprId) -> bool {
        if let ExprKind::Name { id, .. } = &self.m.expr(obj).kind
            && self.res(id) == Resolution::Module(Some(PkgDecl::Func))
        {
            return true;
        }
        if self.m.resolved(obj).is_none() {
            return false;
        }
        match &self.m.expr(index).kind {
            ExprKind::Path { .. } => true,
            ExprKind::Name { id, .. } => matches!(
                self.res(id),
                Resolution::Builtin
                    | Resolution::Module(Some(PkgDecl::Type(_)))
                    | Resolution::Local(Local::Type(_) | Local::TypeParam)
            ),
            ExprKind::Attr { resolved, .. } => resolved.is_some(),
            _ => false,
        }
    }
}

fn literal_word(s: &str) -> Option<ExprKind> {
    Some(match s {
        "nil" => ExprKind::Literal(Lit::Null),
        "true" => ExprKind::Literal(Lit::Bool(true)),
        "false" => ExprKind::Literal(Lit::Bool(false)),
        "iota" => ExprKind::Other(Vec::new()),
        _ => return None,
    })
}

fn binary_prec(k: T) -> u8 {
    match k {
        T::LOr => 1,
        T::LAnd => 2,
        T::Eql | T::Neq | T::Lss | T::Leq | T::Gtr | T::Geq => 3,
        T::Add | T::Sub | T::Or | T::Xor => 4,
        T::Mul | T::Quo | T::Rem | T::Shl | T::Shr | T::And | T::AndNot => 5,
        _ => 0,
    }
}

fn binary_kind(op: T, left: ExprId, right: ExprId) -> ExprKind {
    let logical = match op {
        T::LAnd => Some(LogicalOp::And),
        T::LOr => Some(LogicalOp::Or),
        _ => None,
    };
    if let Some(op) = logical {
        return ExprKind::Logical { op, left, right };
    }
    let op = match op {
        T::Add => BinOp::Add,
        T::Sub => BinOp::Sub,
        T::Mul => BinOp::Mul,
        T::Quo => BinOp::Div,
        T::Rem => BinOp::Rem,
        T::Shl | T::Shr | T::And | T::Or | T::Xor | T::AndNot => BinOp::Bit,
        T::Eql => BinOp::Eq,
        T::Neq => BinOp::NotEq,
        T::Lss => BinOp::Lt,
        T::Leq => BinOp::LtE,
        T::Gtr => BinOp::Gt,
        T::Geq => BinOp::GtE,
        _ => BinOp::Other,
    };
    ExprKind::Binary { op, left, right }
}
