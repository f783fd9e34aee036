//! Expressions.

use super::{Lowerer, span};
use crate::kinds::K;
use crate::literal;
use crate::resolve::{Local, PkgDecl, Resolution};
use tree_sitter::Node;
use unsnarl_model::{
    Arg, BinOp, Call, CollKind, ExprId, ExprKind, Lit, LogicalOp, Span, TypeRef, UnOp,
};

impl<'s, 't> Lowerer<'s, 't> {
    /// Lowers an expression, or an opaque node past the nesting bound.
    pub(super) fn expr(&mut self, n: Node<'t>) -> ExprId {
        match self.nested(|this| this.expr_inner(n)) {
            Some(e) => e,
            None => self.m.opaque(span(n)),
        }
    }

    /// An optional child expression; a missing one (syntax error) becomes
    /// an opaque node spanning `parent`.
    pub(super) fn opt_expr(&mut self, n: Option<Node<'t>>, parent: Node<'t>) -> ExprId {
        match n {
            Some(n) => self.expr(n),
            None => self.m.opaque(span(parent)),
        }
    }

    /// An `expression_list`: its only element, or a `Tuple` of them.
    pub(super) fn expr_list(&mut self, n: Node<'t>) -> ExprId {
        if self.k(n) != K::ExpressionList {
            return self.expr(n);
        }
        let kids = self.kids(n);
        if let [one] = kids.as_slice() {
            return self.expr(*one);
        }
        let elems = kids.into_iter().map(|e| self.expr(e)).collect();
        self.collection(CollKind::Tuple, elems, Vec::new(), None, span(n))
    }

    fn collection(
        &mut self,
        kind: CollKind,
        elems: Vec<ExprId>,
        keys: Vec<Option<unsnarl_model::Str>>,
        ty: Option<TypeRef>,
        sp: Span,
    ) -> ExprId {
        self.m.add_expr(
            ExprKind::Collection {
                kind,
                elems,
                keys,
                ty: ty.map(Box::new),
            },
            sp,
        )
    }

    fn expr_inner(&mut self, n: Node<'t>) -> ExprId {
        let sp = span(n);
        if n.is_missing() {
            return self.m.opaque(sp);
        }
        let g = self.g;
        let f = &g.f;
        let kind = match self.k(n) {
            K::Identifier | K::FieldIdentifier | K::PackageIdentifier => {
                return self.name(n);
            }
            K::ParenthesizedExpression | K::LiteralElement => {
                return match self.first_kid(n) {
                    Some(inner) => self.expr(inner),
                    None => self.m.opaque(sp),
                };
            }
            K::ExpressionList => return self.expr_list(n),
            K::SelectorExpression => {
                let obj = self.opt_expr(self.field(n, f.operand), n);
                let name = self.field(n, f.field).map_or("", |x| self.text(x));
                let resolved = self.attr_resolved(obj, name);
                ExprKind::Attr {
                    obj,
                    name: name.into(),
                    resolved: resolved.map(Into::into),
                }
            }
            K::CallExpression => return self.call(n),
            K::TypeConversionExpression => return self.conversion(n),
            K::TypeInstantiationExpression => {
                return match self.field(n, f.type_) {
                    Some(t) => self.type_name_expr(t),
                    None => self.m.opaque(sp),
                };
            }
            K::IndexExpression => {
                let obj = self.opt_expr(self.field(n, f.operand), n);
                let index = self.opt_expr(self.field(n, f.index), n);
                ExprKind::Index { obj, index }
            }
            K::SliceExpression => {
                let mut parts = Vec::new();
                for id in [f.operand, f.start, f.end, f.capacity] {
                    if let Some(c) = self.field(n, id) {
                        parts.push(self.expr(c));
                    }
                }
                ExprKind::Other(parts)
            }
            K::TypeAssertionExpression => {
                ExprKind::Cast(self.opt_expr(self.field(n, f.operand), n))
            }
            K::CompositeLiteral => return self.composite(n),
            K::LiteralValue => return self.literal_value(n, None),
            K::FuncLiteral => return self.func_literal(n),
            K::UnaryExpression => {
                let operand = self.opt_expr(self.field(n, f.operand), n);
                let op = self.field(n, f.operator).map_or("", |o| o.kind());
                match op {
                    "<-" => ExprKind::Recv(operand),
                    _ => ExprKind::Unary {
                        op: match op {
                            "!" => UnOp::Not,
                            "-" => UnOp::Neg,
                            "*" => UnOp::Deref,
                            "&" => UnOp::Ref,
                            _ => UnOp::Other,
                        },
                        operand,
                    },
                }
            }
            K::BinaryExpression => {
                let left = self.opt_expr(self.field(n, f.left), n);
                let right = self.opt_expr(self.field(n, f.right), n);
                let op = self.field(n, f.operator).map_or("", |o| o.kind());
                binary(op, left, right)
            }
            K::IntLiteral => ExprKind::Literal(literal::int(self.text(n))),
            K::FloatLiteral => ExprKind::Literal(literal::float(self.text(n))),
            K::ImaginaryLiteral => ExprKind::Literal(Lit::Other),
            K::RuneLiteral => ExprKind::Literal(literal::rune(self.text(n))),
            K::InterpretedStringLiteral => {
                ExprKind::Literal(literal::interpreted_string(self.text(n)))
            }
            K::RawStringLiteral => ExprKind::Literal(literal::raw_string(self.text(n))),
            K::Nil => ExprKind::Literal(Lit::Null),
            K::True => ExprKind::Literal(Lit::Bool(true)),
            K::False => ExprKind::Literal(Lit::Bool(false)),
            K::Iota => ExprKind::Other(Vec::new()),
            K::VariadicArgument => match self.first_kid(n) {
                Some(inner) => ExprKind::Spread(self.expr(inner)),
                None => return self.m.opaque(sp),
            },
            // Types as values: `make(chan T, n)`, `new(sync.Mutex)`, type
            // switch cases.
            K::TypeIdentifier
            | K::QualifiedType
            | K::GenericType
            | K::PointerType
            | K::ParenthesizedType
            | K::StructType
            | K::InterfaceType
            | K::ArrayType
            | K::ImplicitLengthArrayType
            | K::SliceType
            | K::MapType
            | K::ChannelType
            | K::FunctionType
            | K::NegatedType => return self.type_path(n),
            // ERROR nodes and anything unexpected: keep the children so a
            // walk still sees nested calls.
            _ => {
                let mut kids = self.kids(n);
                kids.retain(|c| super::stmt::is_expr_kind(self.k(*c)) || self.k(*c) == K::Error);
                let children = kids.into_iter().map(|c| self.expr(c)).collect();
                ExprKind::Other(children)
            }
        };
        self.m.add_expr(kind, sp)
    }

    /// An identifier in expression position.
    fn name(&mut self, n: Node<'t>) -> ExprId {
        let id = self.text(n);
        let resolved = self.resolve_name(id);
        self.m.add_expr(
            ExprKind::Name {
                id: id.into(),
                resolved: resolved.map(Into::into),
            },
            span(n),
        )
    }

    /// What an unqualified identifier refers to, as a qualified name.
    fn resolve_name(&self, id: &str) -> Option<String> {
        match self.file.resolve(&self.scopes, id) {
            Resolution::Local(Local::Type(t)) => Some(self.m.types[t.index()].qualname.to_string()),
            Resolution::Local(_) | Resolution::Unknown => None,
            Resolution::Package(path) => Some(path.to_string()),
            Resolution::Module(_) => Some(self.module_qual(id)),
            Resolution::DotImport(path) => Some(format!("{path}.{id}")),
            Resolution::Builtin => Some(id.to_string()),
        }
    }

    /// Whether a lowered expression names a package or a type (so a
    /// selector on it is a qualified name, not a field or method of a
    /// value).
    fn is_static(&self, e: ExprId) -> bool {
        match &self.m.expr(e).kind {
            ExprKind::Name {
                id,
                resolved: Some(_),
            } => matches!(
                self.file.resolve(&self.scopes, id),
                Resolution::Package(_)
                    | Resolution::Module(Some(PkgDecl::Type(_)))
                    | Resolution::Local(Local::Type(_))
            ),
            _ => false,
        }
    }

    /// `pkg.Name` → `<import path>.Name`; chains through a package
    /// (`http.DefaultClient.Do`) keep resolving; `T.Method` on a type of
    /// this file → `<module>.T.Method`. Selectors on values do not resolve:
    /// their type is the semantic pass's business.
    fn attr_resolved(&self, obj: ExprId, name: &str) -> Option<String> {
        match &self.m.expr(obj).kind {
            ExprKind::Name {
                resolved: Some(r), ..
            } if self.is_static(obj) => Some(format!("{r}.{name}")),
            ExprKind::Attr {
                resolved: Some(r), ..
            } => Some(format!("{r}.{name}")),
            _ => None,
        }
    }

    /// A call. `make`/`new` type arguments come out as `Path`s.
    fn call(&mut self, n: Node<'t>) -> ExprId {
        let g = self.g;
        let f = &g.f;
        let func = self.opt_expr(self.field(n, f.function), n);
        let args = self
            .field(n, f.arguments)
            .map(|a| self.args(a))
            .unwrap_or_default();
        self.make_call(func, args, span(n))
    }

    fn args(&mut self, list: Node<'t>) -> Vec<Arg> {
        self.kids(list)
            .into_iter()
            .map(|a| {
                if self.k(a) == K::VariadicArgument {
                    let value = match self.first_kid(a) {
                        Some(inner) => self.expr(inner),
                        None => self.m.opaque(span(a)),
                    };
                    Arg {
                        name: None,
                        value,
                        spread: true,
                    }
                } else {
                    Arg {
                        name: None,
                        value: self.expr(a),
                        spread: false,
                    }
                }
            })
            .collect()
    }

    /// Builds the call node: name, receiver and target come from the
    /// lowered callee.
    fn make_call(&mut self, func: ExprId, args: Vec<Arg>, sp: Span) -> ExprId {
        let mut head = func;
        // `f[int](x)` / `pkg.F[T](x)`: an explicit instantiation, unless
        // it is a call of a slice or map element (`handlers[i](x)`).
        if let ExprKind::Index { obj, index } = &self.m.expr(head).kind
            && self.is_instantiation(*obj, *index)
        {
            head = *obj;
        }
        let (name, receiver, target) =
            crate::resolve::callee_parts(&self.m.expr(head).kind, |e| self.is_static(e));
        self.m.add_expr(
            ExprKind::Call(Box::new(Call {
                func,
                receiver,
                name,
                target,
                args,
                is_new: false,
                is_macro: false,
                effects: unsnarl_model::EffectSet::UNKNOWN,
            })),
            sp,
        )
    }

    /// Whether `obj[index]` in callee position instantiates a generic
    /// function. The grammar cannot tell; a function declared in this file
    /// can only be indexed that way, otherwise the index must look like a
    /// type (a predeclared or package type, a type expression, a type of a
    /// package).
    fn is_instantiation(&self, obj: ExprId, index: ExprId) -> bool {
        if let ExprKind::Name { id, .. } = &self.m.expr(obj).kind
            && self.file.resolve(&self.scopes, id) == Resolution::Module(Some(PkgDecl::Func))
        {
            return true;
        }
        if self.m.resolved(obj).is_none() {
            return false;
        }
        match &self.m.expr(index).kind {
            ExprKind::Path { .. } => true,
            ExprKind::Name { id, .. } => matches!(
                self.file.resolve(&self.scopes, id),
                Resolution::Builtin
                    | Resolution::Module(Some(PkgDecl::Type(_)))
                    | Resolution::Local(Local::Type(_) | Local::TypeParam)
            ),
            ExprKind::Attr { resolved, .. } => resolved.is_some(),
            _ => false,
        }
    }

    /// `T(x)` where T is written as a type. Named (possibly generic)
    /// types look like calls and lower like `MyType(x)` does (a call of the
    /// type, as the grammar cannot tell `f[int](x)` from a conversion);
    /// conversions to unnamed types (`[]byte(s)`, `(*T)(p)`) are casts.
    fn conversion(&mut self, n: Node<'t>) -> ExprId {
        let g = self.g;
        let f = &g.f;
        let operand = self.opt_expr(self.field(n, f.operand), n);
        let ty = self.field(n, f.type_);
        match ty.map(|t| (t, self.k(t))) {
            Some((t, K::GenericType)) if !self.generic_is_instantiation(t) => {
                // `handlers[i](x)`: a call of an element.
                let base = self.field(t, f.type_);
                let obj = self.opt_expr(base, t);
                let arg = self
                    .field(t, f.type_arguments)
                    .and_then(|a| self.first_kid(a))
                    .and_then(|e| self.first_kid(e));
                let index = match arg {
                    Some(a) if self.k(a) == K::TypeIdentifier => self.name(a),
                    Some(a) => self.expr(a),
                    None => self.m.opaque(span(t)),
                };
                let func = self.m.add_expr(ExprKind::Index { obj, index }, span(t));
                let args = vec![Arg {
                    name: None,
                    value: operand,
                    spread: false,
                }];
                self.make_call(func, args, span(n))
            }
            Some((t, K::GenericType | K::TypeIdentifier | K::QualifiedType)) => {
                let func = self.type_name_expr(t);
                let args = vec![Arg {
                    name: None,
                    value: operand,
                    spread: false,
                }];
                self.make_call(func, args, span(n))
            }
            _ => self.m.add_expr(ExprKind::Cast(operand), span(n)),
        }
    }

    /// Whether `X[A](v)`, which the grammar parses as a conversion to a
    /// generic type, instantiates a generic function or type rather than
    /// indexing a slice or map of functions (`handlers[i](v)`).
    fn generic_is_instantiation(&self, g: Node<'t>) -> bool {
        let f = &self.g.f;
        if let Some(base) = self.field(g, f.type_)
            && self.k(base) == K::TypeIdentifier
        {
            match self.file.resolve(&self.scopes, self.text(base)) {
                Resolution::Module(Some(PkgDecl::Func | PkgDecl::Type(_)))
                | Resolution::Local(Local::Type(_)) => return true,
                Resolution::Local(_) | Resolution::Module(Some(PkgDecl::Var)) => return false,
                _ => {}
            }
        }
        let Some(args) = self.field(g, f.type_arguments) else {
            return true;
        };
        self.kids(args).into_iter().all(|elem| {
            self.kids(elem).into_iter().all(|t| {
                self.k(t) != K::TypeIdentifier
                    || !matches!(
                        self.file.resolve(&self.scopes, self.text(t)),
                        Resolution::Local(Local::Value)
                            | Resolution::Module(Some(PkgDecl::Var | PkgDecl::Func))
                    )
            })
        })
    }

    /// A named type used as a callee: `T` → Name, `pkg.T` → Attr on the
    /// package name, `T[A]` → T. Other types → Path.
    fn type_name_expr(&mut self, t: Node<'t>) -> ExprId {
        let g = self.g;
        let f = &g.f;
        match self.k(t) {
            K::TypeIdentifier | K::Identifier => self.name(t),
            K::GenericType => match self.field(t, f.type_) {
                Some(inner) if self.k(inner) != K::GenericType => self.type_name_expr(inner),
                _ => self.type_path(t),
            },
            K::QualifiedType => {
                let (Some(pkg), Some(name)) = (self.field(t, f.package), self.field(t, f.name))
                else {
                    return self.type_path(t);
                };
                let obj = self.name(pkg);
                let name = self.text(name);
                let resolved = self.attr_resolved(obj, name);
                self.m.add_expr(
                    ExprKind::Attr {
                        obj,
                        name: name.into(),
                        resolved: resolved.map(Into::into),
                    },
                    span(t),
                )
            }
            _ => self.type_path(t),
        }
    }

    /// A type in value position: `Path { text, resolved }`.
    fn type_path(&mut self, t: Node<'t>) -> ExprId {
        let TypeRef { text, resolved } = self.type_ref(t);
        self.m.add_expr(ExprKind::Path { text, resolved }, span(t))
    }

    /// `T{...}`: `Collection` of kind Dict for maps, List for slices and
    /// arrays, Struct otherwise, with the type.
    fn composite(&mut self, n: Node<'t>) -> ExprId {
        let g = self.g;
        let f = &g.f;
        let ty = self.field(n, f.type_);
        match self.field(n, f.body) {
            Some(body) => self.literal_value_in(body, ty, span(n)),
            None => self.m.opaque(span(n)),
        }
    }

    /// A literal value `{...}`, typed by `ty` when known (the composite
    /// type, or the element type of the enclosing literal for elided
    /// types: `[]T{{...}}`).
    fn literal_value(&mut self, body: Node<'t>, ty: Option<Node<'t>>) -> ExprId {
        self.literal_value_in(body, ty, span(body))
    }

    fn literal_value_in(&mut self, body: Node<'t>, ty: Option<Node<'t>>, sp: Span) -> ExprId {
        let g = self.g;
        let f = &g.f;
        // The type under pointers: `[]*T{{...}}` elides `&T`.
        let mut shape = ty;
        while let Some(t) = shape {
            match self.k(t) {
                K::PointerType | K::ParenthesizedType => shape = self.first_kid(t),
                _ => break,
            }
        }
        let shape_kind = shape.map(|t| self.k(t));
        let elem_ty = match (shape, shape_kind) {
            (Some(t), Some(K::SliceType | K::ArrayType | K::ImplicitLengthArrayType)) => {
                self.field(t, f.element)
            }
            (Some(t), Some(K::MapType)) => self.field(t, f.value),
            _ => None,
        };
        let mut elems = Vec::new();
        let mut keys = Vec::new();
        let mut keyed = false;
        for c in self.kids(body) {
            match self.k(c) {
                K::KeyedElement => {
                    keyed = true;
                    keys.push(self.field(c, f.key).map(|k| self.key_text(k).into()));
                    let v = self.field(c, f.value);
                    elems.push(self.element(v, elem_ty, c));
                }
                K::LiteralElement => {
                    keys.push(None);
                    elems.push(self.element(Some(c), elem_ty, c));
                }
                _ => {}
            }
        }
        if !keyed {
            keys.clear();
        }
        let kind = match shape_kind {
            Some(K::MapType) => CollKind::Dict,
            Some(K::SliceType | K::ArrayType | K::ImplicitLengthArrayType) => CollKind::List,
            Some(_) => CollKind::Struct,
            // Elided and untyped: keyed elements suggest a struct.
            None if keyed => CollKind::Struct,
            None => CollKind::List,
        };
        let ty = ty.map(|t| self.type_ref(t));
        self.collection(kind, elems, keys, ty, sp)
    }

    /// An element of a literal value: an expression, or a nested literal
    /// value whose type is elided.
    fn element(
        &mut self,
        le: Option<Node<'t>>,
        elem_ty: Option<Node<'t>>,
        parent: Node<'t>,
    ) -> ExprId {
        let Some(le) = le else {
            return self.m.opaque(span(parent));
        };
        let inner = if self.k(le) == K::LiteralElement {
            self.first_kid(le)
        } else {
            Some(le)
        };
        match inner {
            Some(v) if self.k(v) == K::LiteralValue => self
                .nested(|this| this.literal_value(v, elem_ty))
                .unwrap_or_else(|| self.m.opaque(span(v))),
            Some(v) => self.expr(v),
            None => self.m.opaque(span(le)),
        }
    }

    /// The key of a keyed element as text: a field name, a string key's
    /// value, or the key's source text for other expressions.
    fn key_text(&self, k: Node<'t>) -> String {
        let inner = if self.k(k) == K::LiteralElement {
            self.first_kid(k).unwrap_or(k)
        } else {
            k
        };
        self.string_value(inner)
            .unwrap_or_else(|| self.text(inner).to_string())
    }
}

fn binary(op: &str, left: ExprId, right: ExprId) -> ExprKind {
    let logical = match op {
        "&&" => Some(LogicalOp::And),
        "||" => Some(LogicalOp::Or),
        _ => None,
    };
    if let Some(op) = logical {
        return ExprKind::Logical { op, left, right };
    }
    let op = match op {
        "+" => BinOp::Add,
        "-" => BinOp::Sub,
        "*" => BinOp::Mul,
        "/" => BinOp::Div,
        "%" => BinOp::Rem,
        "<<" | ">>" | "&" | "|" | "^" | "&^" => BinOp::Bit,
        "==" => BinOp::Eq,
        "!=" => BinOp::NotEq,
        "<" => BinOp::Lt,
        "<=" => BinOp::LtE,
        ">" => BinOp::Gt,
        ">=" => BinOp::GtE,
        _ => BinOp::Other,
    };
    ExprKind::Binary { op, left, right }
}
