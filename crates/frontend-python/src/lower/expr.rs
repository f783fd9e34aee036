//! Expressions.

use super::Lowerer;
use crate::scope::{Binding, Res, Scope, ScopeKind};
use crate::span;
use ruff_python_ast::{
    self as ast, ArgOrKeyword, BoolOp, CmpOp, Expr, InterpolatedStringElement,
    InterpolatedStringElements, Number, Operator, UnaryOp,
};
use ruff_text_size::Ranged;
use unsnarl_model::builder::MAX_NESTING;
use unsnarl_model::{
    Arg, AssignOp, BinOp, Call, CollKind, ComprehensionFor, ExprId, ExprKind, Lit, LogicalOp, Span,
    Str, UnOp,
};

/// `a or b or c ...` with more operands than this is lowered as one `Other`
/// node rather than a left-nested chain of `Logical`s, to keep the model's
/// depth bounded.
const MAX_BOOL_CHAIN: usize = 32;

pub(crate) fn bin_op(op: Operator) -> BinOp {
    match op {
        Operator::Add => BinOp::Add,
        Operator::Sub => BinOp::Sub,
        Operator::Mult => BinOp::Mul,
        Operator::Div | Operator::FloorDiv => BinOp::Div,
        Operator::Mod => BinOp::Rem,
        Operator::LShift
        | Operator::RShift
        | Operator::BitOr
        | Operator::BitXor
        | Operator::BitAnd => BinOp::Bit,
        Operator::Pow | Operator::MatMult => BinOp::Other,
    }
}

fn cmp_op(op: CmpOp) -> BinOp {
    match op {
        CmpOp::Eq => BinOp::Eq,
        CmpOp::NotEq => BinOp::NotEq,
        CmpOp::Lt => BinOp::Lt,
        CmpOp::LtE => BinOp::LtE,
        CmpOp::Gt => BinOp::Gt,
        CmpOp::GtE => BinOp::GtE,
        CmpOp::Is => BinOp::Is,
        CmpOp::IsNot => BinOp::IsNot,
        CmpOp::In => BinOp::In,
        CmpOp::NotIn => BinOp::NotIn,
    }
}

/// The body of a comprehension: one element, or a dict's key and value.
enum Elt<'a> {
    One(&'a Expr),
    KeyValue(&'a Expr, &'a Expr),
}

impl<'a> Lowerer<'a> {
    pub(crate) fn lower_expr(&mut self, e: &'a Expr) -> ExprId {
        if self.depth >= MAX_NESTING {
            return self.m.opaque(span(e.range()));
        }
        self.depth += 1;
        let id = self.lower_expr_inner(e);
        self.depth -= 1;
        id
    }

    fn lower_exprs(&mut self, es: &'a [Expr]) -> Vec<ExprId> {
        es.iter().map(|e| self.lower_expr(e)).collect()
    }

    fn lower_expr_inner(&mut self, e: &'a Expr) -> ExprId {
        let r = span(e.range());
        let kind = match e {
            Expr::BoolOp(b) => return self.lower_bool_op(b, r),
            Expr::Named(n) => {
                // The walrus binds in the enclosing function even inside a
                // comprehension.
                if let Expr::Name(t) = &*n.target {
                    let ws = self.scopes.walrus_scope_mut();
                    let b = if ws.kind == ScopeKind::Module {
                        Binding::ModuleVar
                    } else {
                        Binding::Local
                    };
                    ws.bind(t.id.as_str(), b);
                }
                let value = self.lower_expr(&n.value);
                let target = self.lower_expr(&n.target);
                ExprKind::AssignExpr {
                    target,
                    value,
                    op: AssignOp::Plain,
                }
            }
            Expr::BinOp(b) => ExprKind::Binary {
                op: bin_op(b.op),
                left: self.lower_expr(&b.left),
                right: self.lower_expr(&b.right),
            },
            Expr::UnaryOp(u) => ExprKind::Unary {
                op: match u.op {
                    UnaryOp::Not => UnOp::Not,
                    UnaryOp::USub => UnOp::Neg,
                    UnaryOp::UAdd | UnaryOp::Invert => UnOp::Other,
                },
                operand: self.lower_expr(&u.operand),
            },
            Expr::Lambda(l) => return self.lower_lambda(l),
            Expr::If(i) => ExprKind::Ternary {
                cond: self.lower_expr(&i.test),
                then: self.lower_expr(&i.body),
                orelse: self.lower_expr(&i.orelse),
            },
            Expr::Dict(d) => self.lower_dict(d),
            Expr::Set(s) => collection(CollKind::Set, self.lower_exprs(&s.elts)),
            Expr::List(l) => collection(CollKind::List, self.lower_exprs(&l.elts)),
            Expr::Tuple(t) => collection(CollKind::Tuple, self.lower_exprs(&t.elts)),
            Expr::ListComp(c) => {
                return self.lower_comprehension(
                    CollKind::List,
                    Elt::One(&c.elt),
                    &c.generators,
                    r,
                );
            }
            Expr::SetComp(c) => {
                return self.lower_comprehension(CollKind::Set, Elt::One(&c.elt), &c.generators, r);
            }
            Expr::Generator(c) => {
                return self.lower_comprehension(
                    CollKind::Generator,
                    Elt::One(&c.elt),
                    &c.generators,
                    r,
                );
            }
            Expr::DictComp(c) => {
                let elt = match c.key.as_deref() {
                    Some(k) => Elt::KeyValue(k, &c.value),
                    None => Elt::One(&c.value),
                };
                return self.lower_comprehension(CollKind::Dict, elt, &c.generators, r);
            }
            Expr::Await(a) => ExprKind::Await(self.lower_expr(&a.value)),
            Expr::Yield(y) => {
                self.mark_generator();
                ExprKind::Yield(y.value.as_deref().map(|v| self.lower_expr(v)))
            }
            Expr::YieldFrom(y) => {
                self.mark_generator();
                ExprKind::Yield(Some(self.lower_expr(&y.value)))
            }
            Expr::Compare(c) => match (&*c.ops, &*c.comparators) {
                ([op], [right]) => ExprKind::Binary {
                    op: cmp_op(*op),
                    left: self.lower_expr(&c.left),
                    right: self.lower_expr(right),
                },
                // A chain `a < b < c` evaluates `b` once; its operands are
                // kept, each once, under an `Other`.
                (_, comparators) => {
                    let mut children = vec![self.lower_expr(&c.left)];
                    children.extend(comparators.iter().map(|x| self.lower_expr(x)));
                    ExprKind::Other(children)
                }
            },
            Expr::Call(c) => return self.lower_call(c, r),
            Expr::FString(f) => {
                let mut children = Vec::new();
                for el in f.value.elements() {
                    self.interpolations(el, &mut children);
                }
                ExprKind::Other(children)
            }
            Expr::TString(t) => {
                let mut children = Vec::new();
                for el in t.value.elements() {
                    self.interpolations(el, &mut children);
                }
                ExprKind::Other(children)
            }
            Expr::StringLiteral(s) => ExprKind::Literal(Lit::Str(s.value.to_str().into())),
            Expr::BytesLiteral(_) | Expr::EllipsisLiteral(_) => ExprKind::Literal(Lit::Other),
            Expr::NumberLiteral(n) => ExprKind::Literal(match &n.value {
                Number::Int(i) => match i.as_i64() {
                    Some(v) => Lit::Int(v),
                    None => Lit::Other,
                },
                Number::Float(f) => Lit::Float(*f),
                Number::Complex { .. } => Lit::Other,
            }),
            Expr::BooleanLiteral(b) => ExprKind::Literal(Lit::Bool(b.value)),
            Expr::NoneLiteral(_) => ExprKind::Literal(Lit::Null),
            Expr::Attribute(a) => self.lower_attr(a),
            Expr::Subscript(s) => ExprKind::Index {
                obj: self.lower_expr(&s.value),
                index: self.lower_expr(&s.slice),
            },
            Expr::Starred(s) => ExprKind::Spread(self.lower_expr(&s.value)),
            Expr::Name(n) => return self.name_expr(n.id.as_str(), r),
            Expr::Slice(s) => {
                let parts = [&s.lower, &s.upper, &s.step];
                ExprKind::Other(
                    parts
                        .into_iter()
                        .flatten()
                        .map(|p| self.lower_expr(p))
                        .collect(),
                )
            }
            Expr::IpyEscapeCommand(_) => ExprKind::Other(Vec::new()),
        };
        self.m.add_expr(kind, r)
    }

    /// A name, resolved through the scope chain. Names the parser invented
    /// while recovering from an error (empty) are opaque.
    pub(crate) fn name_expr(&mut self, id: &str, r: Span) -> ExprId {
        if id.is_empty() {
            return self.m.opaque(r);
        }
        let resolved = self.lookup(id).qualified(&self.m.module, id);
        self.m.add_expr(
            ExprKind::Name {
                id: id.into(),
                resolved,
            },
            r,
        )
    }

    /// `obj.name`, resolved when `obj` is (a chain on) a module, class,
    /// function or builtin (`os.path.exists`, `asyncio.Queue`), and for a
    /// method of the enclosing class through `self`/`cls` (`self.tick`, a
    /// bound method passed as a callback: `pkg.mod.Clock.tick`).
    fn lower_attr(&mut self, a: &'a ast::ExprAttribute) -> ExprKind {
        let obj = self.lower_expr(&a.value);
        let attr = a.attr.as_str();
        let extend = |base: Option<Str>| {
            base.filter(|_| !attr.is_empty()).map(|mut q| {
                q.push('.');
                q.push_str(attr);
                q
            })
        };
        let resolved = match &*a.value {
            Expr::Name(n) => match self.lookup(&n.id) {
                Res::Receiver(ci) => self.method_target(ci, attr).map(Str::from),
                res if res.extends() => extend(res.qualified(&self.m.module, &n.id)),
                _ => None,
            },
            Expr::Attribute(_) => match &self.m.expr(obj).kind {
                ExprKind::Attr { resolved, .. } => extend(resolved.clone()),
                _ => None,
            },
            _ => None,
        };
        ExprKind::Attr {
            obj,
            name: attr.into(),
            resolved,
        }
    }

    fn lower_call(&mut self, c: &'a ast::ExprCall, r: Span) -> ExprId {
        let func = self.lower_expr(&c.func);
        // What the callee resolved to is the target: an import, a module
        // definition, or (`self.m()`) a method of the class.
        // `Queue[int]()`, `create_memory_object_stream[bytes](n)`: a generic
        // parameterized with a type is still a call of the generic.
        let callee = match (&self.m.expr(func).kind, c.func.as_ref()) {
            (ExprKind::Index { obj, .. }, Expr::Subscript(sub)) if names_a_type(&sub.slice) => *obj,
            _ => func,
        };
        let (receiver, name, target) = match &self.m.expr(callee).kind {
            ExprKind::Attr {
                obj,
                name,
                resolved,
            } => (Some(*obj), name.clone(), resolved.clone()),
            ExprKind::Name { id, resolved } => (None, id.clone(), resolved.clone()),
            _ => (None, Str::default(), None),
        };
        let mut args = Vec::with_capacity(c.arguments.len());
        for a in c.arguments.iter_source_order() {
            args.push(match a {
                ArgOrKeyword::Arg(Expr::Starred(s)) => Arg {
                    name: None,
                    value: self.lower_expr(&s.value),
                    spread: true,
                },
                ArgOrKeyword::Arg(e) => Arg {
                    name: None,
                    value: self.lower_expr(e),
                    spread: false,
                },
                ArgOrKeyword::Keyword(k) => match &k.arg {
                    Some(n) => Arg {
                        name: Some(n.as_str().into()),
                        value: self.lower_expr(&k.value),
                        spread: false,
                    },
                    None => Arg {
                        name: Some("**".into()),
                        value: self.lower_expr(&k.value),
                        spread: true,
                    },
                },
            });
        }
        // `typing.cast(T, x)` is `x` at run time: a cast, so that what the
        // rules know of `x` (a task kept elsewhere, a bare future) holds
        // through it.
        if matches!(
            target.as_deref(),
            Some("typing.cast" | "typing_extensions.cast")
        ) && let [
            Arg {
                name: None,
                spread: false,
                ..
            },
            Arg {
                name: None,
                spread: false,
                value,
            },
        ] = args.as_slice()
        {
            return self.m.add_expr(ExprKind::Cast(*value), r);
        }
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
            r,
        )
    }

    /// `a and b and c` → left-nested `Logical`s.
    fn lower_bool_op(&mut self, b: &'a ast::ExprBoolOp, r: Span) -> ExprId {
        let values = self.lower_exprs(&b.values);
        if values.len() < 2 || values.len() > MAX_BOOL_CHAIN {
            return self.m.add_expr(ExprKind::Other(values), r);
        }
        let op = match b.op {
            BoolOp::And => LogicalOp::And,
            BoolOp::Or => LogicalOp::Or,
        };
        let mut left = values[0];
        for &right in &values[1..] {
            let at = Span::new(r.start, self.m.expr(right).span.end);
            left = self.m.add_expr(ExprKind::Logical { op, left, right }, at);
        }
        // The outermost node spans the whole expression.
        self.m.expr_mut(left).span = r;
        left
    }

    /// Dict displays: string keys are kept in `keys`, `**spread` entries
    /// become `Spread` values; a computed key that might do something (a
    /// call...) is kept with its value under an `Other`.
    fn lower_dict(&mut self, d: &'a ast::ExprDict) -> ExprKind {
        let mut elems = Vec::with_capacity(d.items.len());
        let mut keys = Vec::with_capacity(d.items.len());
        for item in &d.items {
            match &item.key {
                None => {
                    let v = self.lower_expr(&item.value);
                    let at = span(item.value.range());
                    elems.push(self.m.add_expr(ExprKind::Spread(v), at));
                    keys.push(None);
                }
                Some(Expr::StringLiteral(s)) => {
                    elems.push(self.lower_expr(&item.value));
                    keys.push(Some(s.value.to_str().into()));
                }
                Some(k) if k.is_literal_expr() || Self::dotted(k).is_some() => {
                    elems.push(self.lower_expr(&item.value));
                    keys.push(None);
                }
                Some(k) => {
                    let kid = self.lower_expr(k);
                    let vid = self.lower_expr(&item.value);
                    let at = Span::new(
                        k.range().start().to_u32(),
                        item.value.range().end().to_u32(),
                    );
                    elems.push(self.m.add_expr(ExprKind::Other(vec![kid, vid]), at));
                    keys.push(None);
                }
            }
        }
        ExprKind::Collection {
            kind: CollKind::Dict,
            elems,
            keys,
            ty: None,
        }
    }

    /// Comprehensions get a scope of their own for their targets; the first
    /// iterable is evaluated outside it, as in Python.
    fn lower_comprehension(
        &mut self,
        kind: CollKind,
        elt: Elt<'a>,
        generators: &'a [ast::Comprehension],
        r: Span,
    ) -> ExprId {
        let first_iter = generators.first().map(|g| self.lower_expr(&g.iter));
        let mut scope = Scope::new(ScopeKind::Comprehension);
        for g in generators {
            crate::collect::target_names(&g.target, 0, &mut |n| scope.bind(n, Binding::Local));
        }
        self.scopes.stack.push(scope);
        let mut gens = Vec::with_capacity(generators.len());
        for (i, g) in generators.iter().enumerate() {
            let iter = match (i, first_iter) {
                (0, Some(it)) => it,
                _ => self.lower_expr(&g.iter),
            };
            gens.push(ComprehensionFor {
                target: self.lower_expr(&g.target),
                iter,
                conds: self.lower_exprs(&g.ifs),
                is_async: g.is_async,
            });
        }
        let elt = match elt {
            Elt::One(e) => self.lower_expr(e),
            Elt::KeyValue(k, v) => {
                let kid = self.lower_expr(k);
                let vid = self.lower_expr(v);
                let at = Span::new(k.range().start().to_u32(), v.range().end().to_u32());
                self.m.add_expr(ExprKind::Other(vec![kid, vid]), at)
            }
        };
        self.scopes.stack.pop();
        self.m.add_expr(
            ExprKind::Comprehension {
                kind,
                elt,
                generators: gens,
            },
            r,
        )
    }

    /// The expressions interpolated into an f-/t-string, including those
    /// nested in format specs (`f"{x:{width}}"`).
    fn interpolations(&mut self, el: &'a InterpolatedStringElement, out: &mut Vec<ExprId>) {
        let InterpolatedStringElement::Interpolation(i) = el else {
            return;
        };
        out.push(self.lower_expr(&i.expression));
        if let Some(spec) = &i.format_spec {
            if self.depth >= MAX_NESTING {
                return;
            }
            self.depth += 1;
            self.spec_interpolations(&spec.elements, out);
            self.depth -= 1;
        }
    }

    fn spec_interpolations(&mut self, els: &'a InterpolatedStringElements, out: &mut Vec<ExprId>) {
        for el in els.iter() {
            self.interpolations(el, out);
        }
    }
}

fn collection(kind: CollKind, elems: Vec<ExprId>) -> ExprKind {
    ExprKind::Collection {
        kind,
        elems,
        keys: Vec::new(),
        ty: None,
    }
}

/// A subscript that spells a type: `int`, `bytes`, `Item`, `mod.Item`,
/// `dict[str, int]`, or a tuple of those. A lookup key (`handlers[kind]`,
/// `table[0]`) is not one.
fn names_a_type(e: &Expr) -> bool {
    match e {
        Expr::Name(n) => {
            let id = n.id.as_str();
            id.starts_with(|c: char| c.is_ascii_uppercase())
                || matches!(
                    id,
                    "int"
                        | "str"
                        | "bytes"
                        | "float"
                        | "bool"
                        | "dict"
                        | "list"
                        | "set"
                        | "tuple"
                        | "object"
                        | "type"
                        | "complex"
                        | "bytearray"
                        | "frozenset"
                )
        }
        Expr::Attribute(a) => a
            .attr
            .as_str()
            .starts_with(|c: char| c.is_ascii_uppercase()),
        Expr::Subscript(s) => names_a_type(&s.value),
        Expr::Tuple(t) => !t.elts.is_empty() && t.elts.iter().all(names_a_type),
        Expr::NoneLiteral(_) => true,
        _ => false,
    }
}
