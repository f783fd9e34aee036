//! Expressions.

use oxc_ast::ast::{
    Argument, ArrayExpressionElement, ArrowFunctionBody, ArrowFunctionExpression,
    AssignmentOperator, BinaryOperator, ChainElement, Expression, Function, JSXAttributeItem,
    JSXAttributeValue, JSXChild, JSXElement, LogicalOperator, MemberExpression, ObjectExpression,
    ObjectPropertyKind, PropertyKind, UnaryOperator, UpdateOperator,
};
use oxc_span::GetSpan;
use unsnarl_model::builder::MAX_NESTING;
use unsnarl_model::{
    Arg, AssignOp, BinOp, Call, CollKind, ExprId, ExprKind, FnKind, Lit, LogicalOp, Span, Str, UnOp,
};

use super::{Body, FnHead, Lowerer, ThisMode, last_segment, sp};
use crate::collect::static_key;
use crate::paths::resolve_specifier;
use crate::scope::{is_global, is_global_object};

impl<'a> Lowerer<'a> {
    pub fn lower_expr(&mut self, e: &Expression<'a>) -> ExprId {
        self.lower_value(e, None)
    }

    /// Lowers an expression; `hint` is the qualified name a function, class
    /// or object literal value takes from the binding it is assigned to
    /// (`const run = async () => {}` at module level → `<module>.run`).
    pub fn lower_value(&mut self, e: &Expression<'a>, hint: Option<&str>) -> ExprId {
        let span = sp(e.span());
        if self.depth >= MAX_NESTING {
            return self.m.opaque(span);
        }
        self.depth += 1;
        let id = self.lower_expr_inner(e, hint, span);
        self.depth -= 1;
        id
    }

    fn lower_expr_inner(&mut self, e: &Expression<'a>, hint: Option<&str>, span: Span) -> ExprId {
        let kind = match e {
            Expression::BooleanLiteral(b) => ExprKind::Literal(Lit::Bool(b.value)),
            Expression::NullLiteral(_) => ExprKind::Literal(Lit::Null),
            Expression::NumericLiteral(n) => ExprKind::Literal(number(n.value)),
            Expression::BigIntLiteral(_) | Expression::RegExpLiteral(_) => {
                ExprKind::Literal(Lit::Other)
            }
            Expression::StringLiteral(s) => ExprKind::Literal(Lit::Str(s.value.as_str().into())),
            Expression::TemplateLiteral(t) => {
                if t.expressions.is_empty() {
                    // A template without substitutions is just a string.
                    let s = t
                        .quasis
                        .first()
                        .and_then(|q| q.value.cooked.as_ref().map(|c| c.as_str()))
                        .unwrap_or("");
                    ExprKind::Literal(Lit::Str(s.into()))
                } else {
                    let kids = t.expressions.iter().map(|x| self.lower_expr(x)).collect();
                    ExprKind::Other(kids)
                }
            }
            Expression::Identifier(id) => return self.name_expr(id.name.as_str(), span),
            Expression::Super(_) => name_kind("super"),
            Expression::ThisExpression(_) => name_kind("this"),
            Expression::ArrayExpression(a) => {
                let mut elems = Vec::with_capacity(a.elements.len());
                for el in &a.elements {
                    let id = match el {
                        ArrayExpressionElement::SpreadElement(s) => {
                            let inner = self.lower_expr(&s.argument);
                            self.m.add_expr(ExprKind::Spread(inner), sp(s.span))
                        }
                        ArrayExpressionElement::Elision(h) => self.lit(Lit::Null, sp(h.span)),
                        other => self.lower_expr(other.to_expression()),
                    };
                    elems.push(id);
                }
                ExprKind::Collection {
                    kind: CollKind::List,
                    elems,
                    keys: Vec::new(),
                    ty: None,
                }
            }
            Expression::ArrowFunctionExpression(a) => {
                ExprKind::Closure(self.lower_arrow(a, hint, None))
            }
            Expression::FunctionExpression(f) => {
                ExprKind::Closure(self.lower_fn_expr(f, hint, None))
            }
            Expression::ClassExpression(c) => {
                let (name, qualname) = match (&c.id, hint) {
                    (_, Some(h)) => (
                        c.id.as_ref()
                            .map_or_else(|| last_segment(h).to_string(), |i| i.name.to_string()),
                        h.to_string(),
                    ),
                    (Some(id), None) => (id.name.to_string(), self.def_qualname(id.name.as_str())),
                    (None, None) => (String::new(), String::new()),
                };
                let (_, statics) = self.lower_class(c, name, qualname, None);
                ExprKind::Other(statics)
            }
            Expression::AssignmentExpression(a) => {
                let hint = self.assign_hint(&a.left, &a.right);
                let value = self.lower_value(&a.right, hint.as_deref());
                let target = self.lower_assign_target(&a.left);
                ExprKind::AssignExpr {
                    target,
                    value,
                    op: assign_op(a.operator),
                }
            }
            Expression::AwaitExpression(a) => ExprKind::Await(self.lower_expr(&a.argument)),
            Expression::BinaryExpression(b) => {
                let left = self.lower_expr(&b.left);
                let right = self.lower_expr(&b.right);
                ExprKind::Binary {
                    op: bin_op(b.operator),
                    left,
                    right,
                }
            }
            Expression::CallExpression(c) => {
                return self.lower_call(&c.callee, &c.arguments, span, false);
            }
            Expression::NewExpression(n) => {
                return self.lower_call(&n.callee, &n.arguments, span, true);
            }
            Expression::ChainExpression(c) => match &c.expression {
                ChainElement::CallExpression(call) => {
                    return self.lower_call(&call.callee, &call.arguments, span, false);
                }
                ChainElement::TSNonNullExpression(n) => {
                    ExprKind::Cast(self.lower_expr(&n.expression))
                }
                other => match other.as_member_expression() {
                    Some(m) => return self.lower_member(m, span),
                    None => ExprKind::Other(Vec::new()),
                },
            },
            Expression::ConditionalExpression(c) => {
                let cond = self.lower_expr(&c.test);
                let then = self.lower_expr(&c.consequent);
                let orelse = self.lower_expr(&c.alternate);
                ExprKind::Ternary { cond, then, orelse }
            }
            Expression::ImportExpression(i) => {
                // `import('x')` loads a module asynchronously: a call of the
                // pseudo-function `import`.
                let func = self.m.add_expr(
                    ExprKind::Name {
                        id: "import".into(),
                        resolved: Some("import".into()),
                    },
                    Span::new(span.start, span.start + 6),
                );
                let mut args = vec![Arg {
                    name: None,
                    value: self.lower_expr(&i.source),
                    spread: false,
                }];
                if let Some(o) = &i.options {
                    args.push(Arg {
                        name: None,
                        value: self.lower_expr(o),
                        spread: false,
                    });
                }
                ExprKind::Call(Box::new(Call {
                    func,
                    receiver: None,
                    name: "import".into(),
                    target: Some("import".into()),
                    args,
                    is_new: false,
                    is_macro: false,
                    effects: unsnarl_model::EffectSet::UNKNOWN,
                }))
            }
            Expression::LogicalExpression(l) => {
                let left = self.lower_expr(&l.left);
                let right = self.lower_expr(&l.right);
                let op = match l.operator {
                    LogicalOperator::And => LogicalOp::And,
                    LogicalOperator::Or => LogicalOp::Or,
                    LogicalOperator::Coalesce => LogicalOp::Coalesce,
                };
                ExprKind::Logical { op, left, right }
            }
            Expression::ObjectExpression(o) => self.lower_object(o, hint),
            Expression::ParenthesizedExpression(p) => {
                return self.lower_value(&p.expression, hint);
            }
            Expression::SequenceExpression(s) => {
                ExprKind::Other(s.expressions.iter().map(|x| self.lower_expr(x)).collect())
            }
            Expression::TaggedTemplateExpression(t) => {
                // A tagged template calls its tag with the strings array and
                // the substitutions: `sql\`...${x}\`` → `sql(<strings>, x)`.
                let func = self.lower_expr(&t.tag);
                let (name, receiver) = self.callee_parts(func);
                let target = self.value_of(func);
                let strings = self.lit(Lit::Other, sp(t.quasi.span));
                let mut args = vec![Arg {
                    name: None,
                    value: strings,
                    spread: false,
                }];
                for x in &t.quasi.expressions {
                    let value = self.lower_expr(x);
                    args.push(Arg {
                        name: None,
                        value,
                        spread: false,
                    });
                }
                ExprKind::Call(Box::new(Call {
                    func,
                    receiver,
                    name: name.into(),
                    target: target.map(Into::into),
                    args,
                    is_new: false,
                    is_macro: false,
                    effects: unsnarl_model::EffectSet::UNKNOWN,
                }))
            }
            Expression::UnaryExpression(u) => {
                let operand = self.lower_expr(&u.argument);
                let op = match u.operator {
                    UnaryOperator::LogicalNot => UnOp::Not,
                    UnaryOperator::UnaryNegation => UnOp::Neg,
                    UnaryOperator::Void => UnOp::Void,
                    _ => UnOp::Other,
                };
                ExprKind::Unary { op, operand }
            }
            Expression::UpdateExpression(u) => {
                let target = self.lower_simple_target(&u.argument);
                let one = self.lit(Lit::Int(1), span);
                ExprKind::AssignExpr {
                    target,
                    value: one,
                    op: AssignOp::Augmented(update_op(u.operator)),
                }
            }
            Expression::YieldExpression(y) => {
                ExprKind::Yield(y.argument.as_ref().map(|a| self.lower_expr(a)))
            }
            Expression::PrivateInExpression(p) => {
                let left = self.m.add_expr(
                    ExprKind::Name {
                        id: format!("#{}", p.left.name.as_str()).into(),
                        resolved: None,
                    },
                    sp(p.left.span),
                );
                let right = self.lower_expr(&p.right);
                ExprKind::Binary {
                    op: BinOp::In,
                    left,
                    right,
                }
            }
            Expression::ImportMeta(_) | Expression::NewTarget(_) => ExprKind::Other(Vec::new()),
            Expression::JSXElement(el) => self.lower_jsx_element(el),
            Expression::JSXFragment(f) => {
                let mut kids = Vec::new();
                self.lower_jsx_children(&f.children, &mut kids);
                ExprKind::Other(kids)
            }
            Expression::TSAsExpression(x) => ExprKind::Cast(self.lower_value(&x.expression, hint)),
            Expression::TSSatisfiesExpression(x) => {
                ExprKind::Cast(self.lower_value(&x.expression, hint))
            }
            Expression::TSTypeAssertion(x) => ExprKind::Cast(self.lower_value(&x.expression, hint)),
            Expression::TSNonNullExpression(x) => ExprKind::Cast(self.lower_expr(&x.expression)),
            Expression::TSInstantiationExpression(x) => {
                ExprKind::Cast(self.lower_expr(&x.expression))
            }
            Expression::V8IntrinsicExpression(v) => ExprKind::Other(
                self.lower_args(&v.arguments)
                    .into_iter()
                    .map(|a| a.value)
                    .collect(),
            ),
            Expression::StaticMemberExpression(_)
            | Expression::ComputedMemberExpression(_)
            | Expression::PrivateFieldExpression(_) => {
                let m = e.as_member_expression().expect("member expression variant");
                return self.lower_member(m, span);
            }
        };
        self.m.add_expr(kind, span)
    }

    /// An identifier use: resolved through scopes, imports and globals.
    pub fn name_expr(&mut self, name: &str, span: Span) -> ExprId {
        if name == "undefined" && !self.is_declared("undefined") {
            return self.lit(Lit::Null, span);
        }
        let resolved = self.lookup(name);
        self.m.add_expr(
            ExprKind::Name {
                id: name.into(),
                resolved: resolved.map(Into::into),
            },
            span,
        )
    }

    pub fn lower_member(&mut self, m: &MemberExpression<'a>, span: Span) -> ExprId {
        match m {
            MemberExpression::StaticMemberExpression(s) => {
                let obj = self.lower_expr(&s.object);
                let name = s.property.name.as_str();
                let is_this = matches!(s.object, Expression::ThisExpression(_));
                self.attr(obj, name, is_this, span)
            }
            MemberExpression::PrivateFieldExpression(p) => {
                let obj = self.lower_expr(&p.object);
                let name = format!("#{}", p.field.name.as_str());
                let is_this = matches!(p.object, Expression::ThisExpression(_));
                self.attr(obj, &name, is_this, span)
            }
            MemberExpression::ComputedMemberExpression(c) => {
                let obj = self.lower_expr(&c.object);
                let index = self.lower_expr(&c.expression);
                self.m.add_expr(ExprKind::Index { obj, index }, span)
            }
        }
    }

    /// `obj.name`, resolved when `obj` resolves (`fs.promises.readFile`) or
    /// when it is `this.m` for a method `m` of the enclosing class.
    pub fn attr(&mut self, obj: ExprId, name: &str, is_this: bool, span: Span) -> ExprId {
        let resolved = if is_this {
            self.cur().this_class.and_then(|c| {
                let class = &self.classes[c];
                (class.methods.contains(&name) && !class.qualname.is_empty())
                    .then(|| format!("{}.{name}", class.qualname))
            })
        } else {
            self.qualify_member(obj, name)
        };
        self.m.add_expr(
            ExprKind::Attr {
                obj,
                name: name.into(),
                resolved: resolved.map(Into::into),
            },
            span,
        )
    }

    /// `obj.name` qualified, when member chains on the lowered `obj`
    /// extend: a module, function, class, global or loaded module (not a
    /// variable).
    fn qualify_member(&self, obj: ExprId, name: &str) -> Option<String> {
        let join = |base: &str| {
            if is_global_object(base) && is_global(name) {
                return name.to_string();
            }
            let mut q = String::with_capacity(base.len() + 1 + name.len());
            q.push_str(base);
            q.push('.');
            q.push_str(name);
            q
        };
        match &self.m.expr(self.m.strip(obj)).kind {
            ExprKind::Name {
                id,
                resolved: Some(_),
            } => self.lookup_base(id).map(join),
            ExprKind::Name { .. } => None,
            ExprKind::Attr { resolved, .. } => resolved.as_deref().map(join),
            _ => self.value_of(obj).as_deref().map(join),
        }
    }

    /// `this.m()` of a method the class does not define, or `super.m()`: the
    /// superclass's method, when the superclass is known.
    fn inherited_target(&self, callee: &Expression<'a>, name: &str) -> Option<String> {
        let Expression::StaticMemberExpression(m) = callee else {
            return None;
        };
        let on_super = match m.object {
            Expression::Super(_) => true,
            Expression::ThisExpression(_) => false,
            _ => return None,
        };
        let class = &self.classes[self.cur().this_class?];
        let base = class.base.as_deref()?;
        let own = class.methods.contains(&name) || class.fields.contains(&name);
        (on_super || !own).then(|| format!("{base}.{name}"))
    }

    /// The qualified value of a lowered expression: a resolved name or
    /// attribute, or a module loaded by `require('x')`/`await import('x')`.
    pub fn value_of(&self, id: ExprId) -> Option<String> {
        match &self.m.expr(self.m.strip(id)).kind {
            ExprKind::Name { resolved, .. } | ExprKind::Attr { resolved, .. } => {
                resolved.as_deref().map(str::to_string)
            }
            ExprKind::Call(c) => self.loaded_module(c),
            ExprKind::Await(inner) => match &self.m.expr(*inner).kind {
                ExprKind::Call(c) if c.name == "import" => self.loaded_module(c),
                _ => None,
            },
            _ => None,
        }
    }

    /// The module a `require('x')` or `import('x')` call loads.
    fn loaded_module(&self, c: &Call) -> Option<String> {
        let loader = match c.target.as_deref() {
            Some("require") => c.name == "require",
            Some("import") => c.name == "import",
            _ => false,
        };
        if !loader || c.is_new {
            return None;
        }
        match self.m.literal(c.positional(0)?) {
            Some(Lit::Str(s)) => Some(resolve_specifier(s, self.module_dir)),
            _ => None,
        }
    }

    pub fn lower_call(
        &mut self,
        callee: &Expression<'a>,
        arguments: &[Argument<'a>],
        span: Span,
        is_new: bool,
    ) -> ExprId {
        // `(0, obj.fn)(...)`: the transpilers' spelling of an unbound call.
        let callee = match callee {
            Expression::SequenceExpression(s)
                if s.expressions.len() == 2
                    && matches!(s.expressions[0], Expression::NumericLiteral(_)) =>
            {
                &s.expressions[1]
            }
            c => c,
        };
        let func = self.lower_expr(callee);
        let (name, receiver) = self.callee_parts(func);
        let target = self
            .value_of(func)
            .or_else(|| self.inherited_target(callee, &name));
        let args = self.lower_args(arguments);
        self.m.add_expr(
            ExprKind::Call(Box::new(Call {
                func,
                receiver,
                name: name.into(),
                target: target.map(Into::into),
                args,
                is_new,
                is_macro: false,
                effects: unsnarl_model::EffectSet::UNKNOWN,
            })),
            span,
        )
    }

    fn lower_args(&mut self, arguments: &[Argument<'a>]) -> Vec<Arg> {
        arguments
            .iter()
            .map(|a| match a {
                Argument::SpreadElement(s) => Arg {
                    name: None,
                    value: self.lower_expr(&s.argument),
                    spread: true,
                },
                other => Arg {
                    name: None,
                    value: self.lower_expr(other.to_expression()),
                    spread: false,
                },
            })
            .collect()
    }

    /// The callee's last name segment and, for method calls, the receiver.
    pub fn callee_parts(&self, func: ExprId) -> (String, Option<ExprId>) {
        match &self.m.expr(self.m.strip(func)).kind {
            ExprKind::Name { id, .. } => (id.to_string(), None),
            ExprKind::Attr { obj, name, .. } => (name.to_string(), Some(*obj)),
            ExprKind::Index { obj, index } => match self.m.literal(*index) {
                Some(Lit::Str(s)) => (s.to_string(), Some(*obj)),
                _ => (String::new(), Some(*obj)),
            },
            _ => (String::new(), None),
        }
    }

    fn lower_object(&mut self, o: &ObjectExpression<'a>, hint: Option<&str>) -> ExprKind {
        let mut elems = Vec::with_capacity(o.properties.len());
        let mut keys = Vec::with_capacity(o.properties.len());
        for p in &o.properties {
            match p {
                ObjectPropertyKind::ObjectProperty(p) => {
                    let key = if p.computed { None } else { static_key(&p.key) };
                    let sub = hint.zip(key).map(|(h, k)| format!("{h}.{k}"));
                    let is_method = p.method || p.kind != PropertyKind::Init;
                    let value = match &p.value {
                        Expression::FunctionExpression(f) if is_method => {
                            let k = key.map(|k| (k, sp(p.key.span())));
                            let fid = self.lower_fn_expr(f, sub.as_deref(), k);
                            self.m.add_expr(ExprKind::Closure(fid), sp(p.span))
                        }
                        v => self.lower_value(v, sub.as_deref()),
                    };
                    elems.push(value);
                    keys.push(key.map(Str::from));
                }
                ObjectPropertyKind::SpreadProperty(s) => {
                    let inner = self.lower_expr(&s.argument);
                    elems.push(self.m.add_expr(ExprKind::Spread(inner), sp(s.span)));
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

    /// A `function` expression (also object-literal methods, whose name is
    /// the key).
    pub fn lower_fn_expr(
        &mut self,
        f: &Function<'a>,
        hint: Option<&str>,
        key: Option<(&str, Span)>,
    ) -> unsnarl_model::FuncId {
        let id_name = f.id.as_ref().map(|i| i.name.as_str());
        let name = id_name
            .or(key.map(|k| k.0))
            .or(hint.map(last_segment))
            .unwrap_or("")
            .to_string();
        let qualname = match (hint, id_name) {
            (Some(h), _) => h.to_string(),
            (None, Some(n)) => format!("{}.{n}", self.cur().ns),
            (None, None) => String::new(),
        };
        let name_span = match (&f.id, key) {
            (Some(id), _) => sp(id.span),
            (None, Some((_, key_span))) => key_span,
            (None, None) => self.keyword_span(sp(f.span), "function"),
        };
        let mut head = FnHead::new(FnKind::Closure, sp(f.span), name_span);
        head.name = name;
        head.qualname = qualname;
        head.own_name = id_name;
        let body = match &f.body {
            Some(b) => Body::Block(b),
            None => Body::Empty,
        };
        self.lower_function(
            head,
            f.r#async,
            f.generator,
            Some(&f.params),
            f.return_type.as_deref(),
            body,
            &[],
        )
    }

    /// An arrow function. `this_mode` overrides the inherited `this` (class
    /// fields bind it to the instance).
    pub fn lower_arrow(
        &mut self,
        a: &ArrowFunctionExpression<'a>,
        hint: Option<&str>,
        method: Option<FnHead<'a>>,
    ) -> unsnarl_model::FuncId {
        let body = match &a.body {
            ArrowFunctionBody::FunctionBody(b) => Body::Block(b),
            other => match other.as_expression() {
                Some(e) => Body::Expr(e),
                None => Body::Empty,
            },
        };
        let body_start = match &body {
            Body::Block(b) => b.span.start,
            Body::Expr(e) => e.span().start,
            Body::Empty => a.span.end,
        };
        let head = match method {
            Some(h) => h,
            None => {
                let params_end = a
                    .return_type
                    .as_ref()
                    .map_or(a.params.span.end, |r| r.span.end);
                let name_span = self.arrow_span(params_end, body_start, sp(a.span));
                let mut head = FnHead::new(FnKind::Closure, sp(a.span), name_span);
                head.this = ThisMode::Inherit;
                if let Some(h) = hint {
                    head.name = last_segment(h).to_string();
                    head.qualname = h.to_string();
                }
                head
            }
        };
        self.lower_function(
            head,
            a.r#async,
            false,
            Some(&a.params),
            a.return_type.as_deref(),
            body,
            &[],
        )
    }

    fn lower_jsx_element(&mut self, el: &JSXElement<'a>) -> ExprKind {
        let mut kids = Vec::new();
        for attr in &el.opening_element.attributes {
            match attr {
                JSXAttributeItem::Attribute(a) => match &a.value {
                    Some(JSXAttributeValue::ExpressionContainer(c)) => {
                        if let Some(x) = c.expression.as_expression() {
                            kids.push(self.lower_expr(x));
                        }
                    }
                    Some(JSXAttributeValue::Element(inner)) => {
                        let id = self.guarded(sp(inner.span), |l| {
                            let k = l.lower_jsx_element(inner);
                            l.m.add_expr(k, sp(inner.span))
                        });
                        kids.push(id);
                    }
                    Some(JSXAttributeValue::Fragment(f)) => {
                        let id = self.guarded(sp(f.span), |l| {
                            let mut k = Vec::new();
                            l.lower_jsx_children(&f.children, &mut k);
                            l.m.add_expr(ExprKind::Other(k), sp(f.span))
                        });
                        kids.push(id);
                    }
                    Some(JSXAttributeValue::StringLiteral(_)) | None => {}
                },
                JSXAttributeItem::SpreadAttribute(s) => {
                    let inner = self.lower_expr(&s.argument);
                    kids.push(self.m.add_expr(ExprKind::Spread(inner), sp(s.span)));
                }
            }
        }
        self.lower_jsx_children(&el.children, &mut kids);
        ExprKind::Other(kids)
    }

    fn lower_jsx_children(&mut self, children: &[JSXChild<'a>], kids: &mut Vec<ExprId>) {
        for c in children {
            match c {
                JSXChild::Text(_) => {}
                JSXChild::Element(inner) => {
                    let id = self.guarded(sp(inner.span), |l| {
                        let k = l.lower_jsx_element(inner);
                        l.m.add_expr(k, sp(inner.span))
                    });
                    kids.push(id);
                }
                JSXChild::Fragment(f) => {
                    let id = self.guarded(sp(f.span), |l| {
                        let mut k = Vec::new();
                        l.lower_jsx_children(&f.children, &mut k);
                        l.m.add_expr(ExprKind::Other(k), sp(f.span))
                    });
                    kids.push(id);
                }
                JSXChild::ExpressionContainer(c) => {
                    if let Some(x) = c.expression.as_expression() {
                        kids.push(self.lower_expr(x));
                    }
                }
                JSXChild::Spread(s) => {
                    let inner = self.lower_expr(&s.expression);
                    kids.push(self.m.add_expr(ExprKind::Spread(inner), sp(s.span)));
                }
            }
        }
    }
}

fn name_kind(id: &str) -> ExprKind {
    ExprKind::Name {
        id: id.into(),
        resolved: None,
    }
}

/// JS numbers are doubles; integral values are reported as integers so that
/// rules can read bounds and delays (`new Semaphore(10)`, `setTimeout(f, 1000)`).
fn number(v: f64) -> Lit {
    if v.fract() == 0.0 && v.abs() <= 9_007_199_254_740_992.0 {
        Lit::Int(v as i64)
    } else {
        Lit::Float(v)
    }
}

pub(crate) fn assign_op(op: AssignmentOperator) -> AssignOp {
    use AssignmentOperator as A;
    let bin = match op {
        A::Assign => return AssignOp::Plain,
        A::Addition => BinOp::Add,
        A::Subtraction => BinOp::Sub,
        A::Multiplication => BinOp::Mul,
        A::Division => BinOp::Div,
        A::Remainder => BinOp::Rem,
        A::ShiftLeft
        | A::ShiftRight
        | A::ShiftRightZeroFill
        | A::BitwiseOR
        | A::BitwiseXOR
        | A::BitwiseAnd => BinOp::Bit,
        // `**=`, `||=`, `&&=`, `??=`: still read-modify-write.
        A::Exponential | A::LogicalOr | A::LogicalAnd | A::LogicalNullish => BinOp::Other,
    };
    AssignOp::Augmented(bin)
}

pub(crate) fn update_op(op: UpdateOperator) -> BinOp {
    match op {
        UpdateOperator::Increment => BinOp::Add,
        UpdateOperator::Decrement => BinOp::Sub,
    }
}

fn bin_op(op: BinaryOperator) -> BinOp {
    use BinaryOperator as B;
    match op {
        B::Equality => BinOp::Eq,
        B::Inequality => BinOp::NotEq,
        B::StrictEquality | B::Instanceof => BinOp::Is,
        B::StrictInequality => BinOp::IsNot,
        B::LessThan => BinOp::Lt,
        B::LessEqualThan => BinOp::LtE,
        B::GreaterThan => BinOp::Gt,
        B::GreaterEqualThan => BinOp::GtE,
        B::Addition => BinOp::Add,
        B::Subtraction => BinOp::Sub,
        B::Multiplication => BinOp::Mul,
        B::Division => BinOp::Div,
        B::Remainder => BinOp::Rem,
        B::ShiftLeft
        | B::ShiftRight
        | B::ShiftRightZeroFill
        | B::BitwiseOR
        | B::BitwiseXOR
        | B::BitwiseAnd => BinOp::Bit,
        B::In => BinOp::In,
        B::Exponential => BinOp::Other,
    }
}
