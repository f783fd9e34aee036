//! Types: parsed into a small per-file arena (the model keeps only their
//! text and what they resolve to), declared type references, and type
//! declarations with their struct fields.

use super::dotted;
use super::lexer::T;
use super::{Bail, Parser, R, TYPE_LIMIT};
use crate::resolve::{Local, Resolution};
use unsnarl_model::{Block, Field, Span, StmtKind, TypeDecl, TypeRef};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TyId(pub u32);

impl TyId {
    #[inline]
    pub fn ix(self) -> usize {
        self.0 as usize
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TyK {
    /// `T` (`a`, `b` unused).
    Name,
    /// `pkg.T`: `a` is the token index of `pkg`, `b` of `T`.
    Qualified,
    /// `G[A, B]`: `a` the base, `b` the start of its argument list.
    Generic,
    /// `*T`, `(T)`, `[]T`, `[N]T`, `[...]T`, `chan T`, `~T`: `a` the inner.
    Pointer,
    Paren,
    Slice,
    Array,
    ImplicitArray,
    Chan,
    Negated,
    /// `map[K]V`: `a` the key, `b` the value.
    Map,
    Func,
    Struct,
    Interface,
    /// `A | B` (in constraints and type arguments): `b` the member list.
    Union,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Ty {
    pub kind: TyK,
    pub start: u32,
    pub end: u32,
    pub a: u32,
    pub b: u32,
}

/// The first token kinds of a type.
pub(crate) fn starts_type(k: T) -> bool {
    matches!(
        k,
        T::Ident
            | T::Mul
            | T::LBrack
            | T::LParen
            | T::Func
            | T::Map
            | T::Chan
            | T::Struct
            | T::Interface
            | T::Arrow
    )
}

impl<'s> Parser<'s, '_> {
    pub(super) fn add_ty(&mut self, kind: TyK, start: u32, end: u32, a: u32, b: u32) -> TyId {
        let id = TyId(self.tys.len() as u32);
        self.tys.push(Ty {
            kind,
            start,
            end,
            a,
            b,
        });
        id
    }

    /// The ids of a list stored at `at` in `ty_lists`.
    pub(super) fn ty_list(&self, at: u32) -> Vec<TyId> {
        let at = at as usize;
        let n = self.ty_lists[at].0 as usize;
        self.ty_lists[at + 1..at + 1 + n].to_vec()
    }

    fn store_list(&mut self, items: &[TyId]) -> u32 {
        let at = self.ty_lists.len() as u32;
        self.ty_lists.push(TyId(items.len() as u32));
        self.ty_lists.extend_from_slice(items);
        at
    }

    /// The member types of a type argument / constraint element.
    pub(super) fn elem_members(&self, elem: TyId) -> Vec<TyId> {
        let t = self.tys[elem.ix()];
        if t.kind == TyK::Union {
            self.ty_list(t.b)
        } else {
            vec![elem]
        }
    }

    pub(super) fn ty_text(&self, t: TyId) -> &'s str {
        let t = self.tys[t.ix()];
        self.slice(t.start, t.end)
    }

    /// A type.
    pub(super) fn parse_type(&mut self) -> R<TyId> {
        if self.tdepth >= TYPE_LIMIT {
            return Err(Bail);
        }
        self.tdepth += 1;
        let r = self.type_inner();
        self.tdepth -= 1;
        r
    }

    fn type_inner(&mut self) -> R<TyId> {
        let t = self.tok();
        // `[...]T` only as the type of a composite literal.
        let implicit_ok = std::mem::take(&mut self.implicit_ok);
        match t.kind {
            T::Ident => {
                let base = if self.kn(1) == T::Period && self.kn(2) == T::Ident {
                    let pkg = self.p;
                    let name = pkg + 2;
                    self.p = name + 1;
                    let end = self.toks[name].end;
                    self.add_ty(TyK::Qualified, t.start, end, pkg as u32, name as u32)
                } else {
                    self.next();
                    self.add_ty(TyK::Name, t.start, t.end, 0, 0)
                };
                if self.k() == T::LBrack {
                    return self.type_args(base);
                }
                Ok(base)
            }
            T::Mul => {
                self.next();
                let inner = self.parse_type()?;
                let end = self.tys[inner.ix()].end;
                Ok(self.add_ty(TyK::Pointer, t.start, end, inner.0, 0))
            }
            T::Tilde => {
                self.next();
                let inner = self.parse_type()?;
                let end = self.tys[inner.ix()].end;
                Ok(self.add_ty(TyK::Negated, t.start, end, inner.0, 0))
            }
            T::LParen => {
                self.next();
                let inner = self.parse_type()?;
                let end = self.expect(T::RParen)?.end;
                Ok(self.add_ty(TyK::Paren, t.start, end, inner.0, 0))
            }
            T::LBrack => {
                let close = self.partner(self.p);
                let kind = if close == self.p + 1 {
                    TyK::Slice
                } else if self.kn(1) == T::Ellipsis && close == self.p + 2 {
                    if !implicit_ok {
                        return Err(Bail);
                    }
                    TyK::ImplicitArray
                } else {
                    // The length is an expression the model never looks
                    // at: skipped, after a check that it is one.
                    let open = self.p;
                    for k in [T::Comma, T::Colon, T::Semi, T::Ellipsis] {
                        if self.has_top(open + 1, close, k) {
                            return Err(Bail);
                        }
                    }
                    TyK::Array
                };
                self.p = close + 1;
                let elem = self.parse_type()?;
                let end = self.tys[elem.ix()].end;
                Ok(self.add_ty(kind, t.start, end, elem.0, 0))
            }
            T::Map => {
                self.next();
                self.expect(T::LBrack)?;
                let key = self.parse_type()?;
                self.expect(T::RBrack)?;
                let value = self.parse_type()?;
                let end = self.tys[value.ix()].end;
                Ok(self.add_ty(TyK::Map, t.start, end, key.0, value.0))
            }
            T::Chan => {
                self.next();
                self.eat(T::Arrow);
                let inner = self.parse_type()?;
                let end = self.tys[inner.ix()].end;
                Ok(self.add_ty(TyK::Chan, t.start, end, inner.0, 0))
            }
            T::Arrow => {
                self.next();
                self.expect(T::Chan)?;
                let inner = self.parse_type()?;
                let end = self.tys[inner.ix()].end;
                Ok(self.add_ty(TyK::Chan, t.start, end, inner.0, 0))
            }
            T::Func => {
                self.next();
                self.params(false)?;
                let mut end = self.toks[self.p - 1].end;
                if self.k() == T::LParen {
                    self.params(false)?;
                    end = self.toks[self.p - 1].end;
                } else if starts_type(self.k()) {
                    let r = self.parse_type()?;
                    end = self.tys[r.ix()].end;
                }
                Ok(self.add_ty(TyK::Func, t.start, end, 0, 0))
            }
            T::Struct => {
                let end = self.struct_body(None)?;
                Ok(self.add_ty(TyK::Struct, t.start, end, 0, 0))
            }
            T::Interface => {
                let end = self.interface_body()?;
                Ok(self.add_ty(TyK::Interface, t.start, end, 0, 0))
            }
            _ => Err(Bail),
        }
    }

    /// `[A, B]` after a type name: a generic type.
    fn type_args(&mut self, base: TyId) -> R<TyId> {
        let start = self.tys[base.ix()].start;
        self.expect(T::LBrack)?;
        let mut args = Vec::new();
        loop {
            args.push(self.type_elem()?);
            if !self.eat(T::Comma) || self.k() == T::RBrack {
                break;
            }
        }
        let end = self.expect(T::RBrack)?.end;
        let list = self.store_list(&args);
        Ok(self.add_ty(TyK::Generic, start, end, base.0, list))
    }

    /// A type argument or constraint: `T`, `~T`, `A | ~B`.
    pub(super) fn type_elem(&mut self) -> R<TyId> {
        let first = self.elem_member()?;
        if self.k() != T::Or {
            return Ok(first);
        }
        let mut members = vec![first];
        while self.eat(T::Or) {
            members.push(self.elem_member()?);
        }
        let start = self.tys[first.ix()].start;
        let end = self.tys[members.last().unwrap().ix()].end;
        let list = self.store_list(&members);
        Ok(self.add_ty(TyK::Union, start, end, 0, list))
    }

    fn elem_member(&mut self) -> R<TyId> {
        self.parse_type()
    }

    /// `struct { ... }` from the `struct` keyword: its end. With `fields`,
    /// the fields are recorded as the model wants them.
    pub(super) fn struct_body(&mut self, mut fields: Option<&mut Vec<Field>>) -> R<u32> {
        self.expect(T::Struct)?;
        self.expect(T::LBrace)?;
        while self.k() != T::RBrace {
            self.field_decl(fields.as_deref_mut())?;
            self.semi()?;
        }
        Ok(self.next().end)
    }

    fn field_decl(&mut self, fields: Option<&mut Vec<Field>>) -> R<()> {
        let start = self.tok().start;
        let embedded = match self.k() {
            T::Mul => true,
            T::Ident => match self.kn(1) {
                T::Period | T::Semi | T::RBrace | T::Str | T::RawStr => true,
                T::LBrack => {
                    let close = self.partner(self.p + 1);
                    !(close == self.p + 2 || starts_type(self.kat(close + 1)))
                }
                _ => false,
            },
            _ => return Err(Bail),
        };
        if embedded {
            let star = self.eat(T::Mul);
            let _ = star;
            if self.k() != T::Ident {
                return Err(Bail);
            }
            let ty = self.parse_type()?;
            if !matches!(
                self.tys[ty.ix()].kind,
                TyK::Name | TyK::Qualified | TyK::Generic
            ) {
                return Err(Bail);
            }
            let mut end = self.tys[ty.ix()].end;
            if matches!(self.k(), T::Str | T::RawStr) {
                end = self.next().end;
            }
            if let Some(fields) = fields {
                let text = self.slice(start, self.tys[ty.ix()].end).to_string();
                fields.push(Field {
                    name: self.embedded_name(ty).into(),
                    ty: TypeRef {
                        text: text.into(),
                        resolved: self.resolve_type(ty).map(Into::into),
                    },
                    span: Span::new(start, end),
                });
            }
            return Ok(());
        }
        let mut names = vec![self.expect(T::Ident)?];
        while self.eat(T::Comma) {
            names.push(self.expect(T::Ident)?);
        }
        let ty = self.parse_type()?;
        if matches!(self.k(), T::Str | T::RawStr) {
            self.next();
        }
        if let Some(fields) = fields {
            let tr = self.type_ref(ty);
            for n in names {
                fields.push(Field {
                    name: self.txt(n).into(),
                    ty: tr.clone(),
                    span: Span::new(n.start, n.end),
                });
            }
        }
        Ok(())
    }

    /// `interface { ... }` from the keyword: its end.
    fn interface_body(&mut self) -> R<u32> {
        self.expect(T::Interface)?;
        self.expect(T::LBrace)?;
        while self.k() != T::RBrace {
            if self.k() == T::Ident && self.kn(1) == T::LParen {
                self.next();
                self.params(false)?;
                if self.k() == T::LParen {
                    self.params(false)?;
                } else if starts_type(self.k()) {
                    self.parse_type()?;
                }
            } else {
                self.type_elem()?;
            }
            self.semi()?;
        }
        Ok(self.next().end)
    }

    // ----- resolution -----

    /// A type as written plus what it resolves to.
    pub(super) fn type_ref(&self, t: TyId) -> TypeRef {
        TypeRef {
            text: self.ty_text(t).into(),
            resolved: self.resolve_type(t).map(Into::into),
        }
    }

    /// The qualified name of the named type under pointers, parentheses and
    /// type arguments (see the tree-sitter lowering's `resolve_type`).
    pub(super) fn resolve_type(&self, t: TyId) -> Option<String> {
        let mut cur = t;
        loop {
            let ty = self.tys[cur.ix()];
            match ty.kind {
                TyK::Pointer | TyK::Paren => cur = TyId(ty.a),
                TyK::Generic => cur = TyId(ty.a),
                TyK::Name => return self.resolve_type_name(self.slice(ty.start, ty.end)),
                TyK::Qualified => {
                    let pkg = self.ti(ty.a as usize);
                    let name = self.ti(ty.b as usize);
                    return match self.res(pkg) {
                        Resolution::Package(path) => Some(dotted(path, name)),
                        _ => None,
                    };
                }
                _ => return None,
            }
        }
    }

    pub(super) fn resolve_type_name(&self, name: &str) -> Option<String> {
        match self.res(name) {
            Resolution::Local(Local::Type(t)) => Some(self.m.types[t.index()].qualname.to_string()),
            Resolution::Local(_) | Resolution::Package(_) | Resolution::Unknown => None,
            Resolution::Module(_) => Some(self.module_qual(name)),
            Resolution::DotImport(path) => Some(dotted(path, name)),
            Resolution::Builtin => Some(name.to_string()),
        }
    }

    /// The implicit field name of an embedded type.
    fn embedded_name(&self, t: TyId) -> &'s str {
        let mut cur = t;
        loop {
            let ty = self.tys[cur.ix()];
            match ty.kind {
                TyK::Generic | TyK::Pointer | TyK::Paren => cur = TyId(ty.a),
                TyK::Qualified => return self.ti(ty.b as usize),
                _ => return self.slice(ty.start, ty.end),
            }
        }
    }

    /// The type under pointers and parentheses (a composite literal's
    /// shape).
    pub(super) fn shape(&self, t: TyId) -> Ty {
        let mut cur = t;
        loop {
            let ty = self.tys[cur.ix()];
            match ty.kind {
                TyK::Pointer | TyK::Paren => cur = TyId(ty.a),
                _ => return ty,
            }
        }
    }

    /// Whether a type can also be read as an expression (`T`, `pkg.T`,
    /// `*T`, `(T)`, `G[T]`): tree-sitter then prefers the expression.
    pub(super) fn expressible(&self, t: TyId) -> bool {
        let ty = self.tys[t.ix()];
        match ty.kind {
            TyK::Name | TyK::Qualified => true,
            TyK::Pointer | TyK::Paren => self.expressible(TyId(ty.a)),
            TyK::Generic => {
                let args = self.ty_list(ty.b);
                self.expressible(TyId(ty.a)) && args.len() == 1 && self.expressible(args[0])
            }
            _ => false,
        }
    }

    /// Tries to read a type from token `from` that ends right before token
    /// `to`; restores the position. Returns the type when it does.
    pub(super) fn type_spanning(&mut self, from: usize, to: usize) -> Option<TyId> {
        let saved = self.p;
        self.p = from;
        let r = self.parse_type();
        let ok = self.p == to;
        self.p = saved;
        match r {
            Ok(t) if ok => Some(t),
            _ => None,
        }
    }

    // ----- declarations -----

    /// `type T ...` / `type ( ... )`.
    pub(super) fn type_decl(&mut self, out: &mut Block) -> R<()> {
        self.expect(T::Type)?;
        if self.eat(T::LParen) {
            while self.k() != T::RParen {
                self.type_spec(out)?;
                self.semi()?;
            }
            self.next();
            Ok(())
        } else {
            self.type_spec(out)
        }
    }

    fn type_spec(&mut self, out: &mut Block) -> R<()> {
        let name_tok = self.expect(T::Ident)?;
        let name = self.txt(name_tok);
        let start = name_tok.start;
        // `[` starts type parameters or an array type.
        let has_tparams = self.k() == T::LBrack && self.is_type_param_list();
        let alias = if has_tparams {
            let close = self.partner(self.p);
            self.kat(close + 1) == T::Assign
        } else {
            self.k() == T::Assign
        };
        if alias {
            self.scopes.push();
            if has_tparams {
                self.type_params()?;
            }
            self.expect(T::Assign)?;
            let t = self.parse_type();
            self.scopes.pop();
            let t = t?;
            let end = self.tys[t.ix()].end;
            self.scopes.declare(name);
            self.add_stmt(out, StmtKind::Pass, start, end);
            return Ok(());
        }
        let qualname = dotted(&self.qual, name);
        let id = self.m.add_type(TypeDecl {
            name: name.into(),
            qualname: qualname.into(),
            fields: Vec::new(),
            bases: Vec::new(),
            span: Span::new(start, name_tok.end),
        });
        if self.scopes.in_function() {
            self.scopes.declare_as(name, Local::Type(id));
        }
        self.scopes.push();
        let r = (|| {
            if has_tparams {
                self.type_params()?;
            }
            if self.k() == T::Struct {
                let mut fields = Vec::new();
                let end = self.struct_body(Some(&mut fields))?;
                Ok((end, fields))
            } else {
                let t = self.parse_type()?;
                Ok((self.tys[t.ix()].end, Vec::new()))
            }
        })();
        self.scopes.pop();
        let (end, fields) = r?;
        let decl = &mut self.m.types[id.index()];
        decl.fields = fields;
        decl.span.end = end;
        self.add_stmt(out, StmtKind::ClassDef(id), start, end);
        Ok(())
    }

    /// At `[` after a type name: type parameters (`[T any]`, `[K, V any]`)
    /// rather than an array length (`[N]`, `[N * 2]`, `[P *C]` as Go reads
    /// it).
    fn is_type_param_list(&self) -> bool {
        if self.kn(1) != T::Ident {
            return false;
        }
        matches!(
            self.kn(2),
            T::Comma
                | T::Ident
                | T::Interface
                | T::Tilde
                | T::LBrack
                | T::Func
                | T::Map
                | T::Chan
                | T::Struct
                | T::Arrow
        )
    }
}
