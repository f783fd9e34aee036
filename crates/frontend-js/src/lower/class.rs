//! Classes and interfaces: a [`TypeDecl`] with the fields and their types,
//! one `Method` function per method / function-valued field, field
//! initializers run at the start of the constructor, static members and
//! static blocks after the class definition.

use oxc_ast::ast::{
    Class, ClassElement, Decorator, Expression, MethodDefinition, MethodDefinitionKind,
    PropertyDefinition, PropertyKey, Statement, TSInterfaceDeclaration, TSSignature,
};
use oxc_span::GetSpan;
use unsnarl_model::{
    AssignOp, Block, ExprId, ExprKind, Field, FnKind, FuncId, StmtKind, Str, TypeDecl, TypeId,
    TypeRef,
};

use super::{Body, ClassInfo, FnHead, Lowerer, ThisMode, sp};
use crate::collect::static_key;

impl<'a> Lowerer<'a> {
    /// Lowers a class. With `out` (a declaration), a `ClassDef` statement and
    /// the static initializers are appended to it; without (a class
    /// expression), the static initializer values are returned so the caller
    /// can keep them as children.
    pub fn lower_class(
        &mut self,
        c: &Class<'a>,
        name: String,
        qualname: String,
        out: Option<&mut Block>,
    ) -> (TypeId, Vec<ExprId>) {
        let class_span = sp(c.span);
        let methods = c
            .body
            .body
            .iter()
            .filter_map(|el| match el {
                ClassElement::MethodDefinition(md) => self.member_name(&md.key, md.computed),
                ClassElement::PropertyDefinition(p)
                    if p.value.as_ref().is_some_and(is_fn_value) =>
                {
                    self.member_name(&p.key, p.computed)
                }
                _ => None,
            })
            .collect();
        let fields = self.data_field_names(c);
        let base = c
            .heritage
            .as_ref()
            .and_then(|h| self.chain_target(&h.expression, 0))
            .map(|(t, _)| t);
        let cidx = self.classes.len();
        self.classes.push(ClassInfo {
            qualname: qualname.clone(),
            methods,
            fields,
            base,
        });
        let tid = self.m.add_type(TypeDecl {
            name: name.clone().into(),
            qualname: qualname.clone().into(),
            fields: Vec::new(),
            bases: Vec::new(),
            span: class_span,
        });
        let mut out = out;
        if let Some(o) = out.as_deref_mut() {
            self.push_stmt(o, StmtKind::ClassDef(tid), class_span);
        }
        let class_opt = (!qualname.is_empty()).then(|| qualname.clone());
        let name_span =
            c.id.as_ref()
                .map_or_else(|| self.keyword_span(class_span, "class"), |i| sp(i.span));

        // Fields first: their initializers are part of the constructor.
        let mut fields = Vec::new();
        let mut instance_inits: Vec<&PropertyDefinition<'a>> = Vec::new();
        let mut statics: Vec<&PropertyDefinition<'a>> = Vec::new();
        let mut has_ctor = false;
        for el in &c.body.body {
            match el {
                ClassElement::PropertyDefinition(p) => {
                    if p.value.as_ref().is_some_and(is_fn_value) {
                        continue;
                    }
                    let Some(fname) = self.member_name(&p.key, p.computed) else {
                        continue;
                    };
                    let ty = match (&p.type_annotation, &p.value) {
                        (Some(t), _) => self.type_ref(&t.type_annotation),
                        (None, Some(v)) => self.inferred_type(v),
                        (None, None) => TypeRef::default(),
                    };
                    if !p.r#static {
                        fields.push(Field {
                            name: fname.into(),
                            ty,
                            span: sp(p.span),
                        });
                    }
                    if p.value.is_some() {
                        if p.r#static {
                            statics.push(p);
                        } else {
                            instance_inits.push(p);
                        }
                    }
                }
                ClassElement::AccessorProperty(a) => {
                    if let Some(fname) = self.member_name(&a.key, a.computed)
                        && !a.r#static
                    {
                        let ty = match &a.type_annotation {
                            Some(t) => self.type_ref(&t.type_annotation),
                            None => TypeRef::default(),
                        };
                        fields.push(Field {
                            name: fname.into(),
                            ty,
                            span: sp(a.span),
                        });
                    }
                }
                ClassElement::MethodDefinition(md)
                    if md.kind == MethodDefinitionKind::Constructor =>
                {
                    // `constructor(private readonly db: Db)` declares a field.
                    for p in &md.value.params.items {
                        if p.accessibility.is_none() && !p.readonly && !p.r#override {
                            continue;
                        }
                        let Some(pname) = p.pattern.get_identifier_name() else {
                            continue;
                        };
                        let ty = match &p.type_annotation {
                            Some(t) => self.type_ref(&t.type_annotation),
                            None => TypeRef::default(),
                        };
                        fields.push(Field {
                            name: pname.as_str().into(),
                            ty,
                            span: sp(p.span),
                        });
                    }
                    has_ctor |= md.value.body.is_some();
                }
                _ => {}
            }
        }

        let mut ctor = None;
        for (i, el) in c.body.body.iter().enumerate() {
            match el {
                ClassElement::MethodDefinition(md) => {
                    if md.value.body.is_none() && has_later_impl(&c.body.body, i, md) {
                        continue;
                    }
                    let is_ctor = md.kind == MethodDefinitionKind::Constructor;
                    let prelude: &[&PropertyDefinition<'a>] = if is_ctor && md.value.body.is_some()
                    {
                        &instance_inits
                    } else {
                        &[]
                    };
                    let fid = self.lower_method(md, &qualname, &class_opt, cidx, prelude);
                    if is_ctor && md.value.body.is_some() {
                        ctor = Some(fid);
                    }
                }
                ClassElement::PropertyDefinition(p)
                    if p.value.as_ref().is_some_and(is_fn_value) =>
                {
                    self.lower_fn_field(p, &qualname, &class_opt, cidx);
                }
                _ => {}
            }
        }
        if !has_ctor && !instance_inits.is_empty() {
            // Field initializers run on construction: give them the implicit
            // constructor as their function.
            let mut head = FnHead::new(FnKind::Method, class_span, name_span);
            head.name = "constructor".into();
            head.qualname = method_qualname(&qualname, "constructor");
            head.class = class_opt.clone();
            head.receiver = Some("this".into());
            head.this = ThisMode::Class(cidx);
            let fid =
                self.lower_function(head, false, false, None, None, Body::Empty, &instance_inits);
            ctor = Some(fid);
        }
        if let Some(fid) = ctor {
            self.fields_from_ctor(fid, &mut fields);
        }
        self.m.types[tid.index()].fields = fields;

        // Static initializers and blocks run once, when the class is defined,
        // in the enclosing function, with `this` = the class.
        let saved_this = self.fns.last().unwrap().this_class;
        self.fns.last_mut().unwrap().this_class = Some(cidx);
        let mut static_values = Vec::new();
        for p in &statics {
            let Some(v) = &p.value else { continue };
            let value = self.lower_expr(v);
            match out.as_deref_mut() {
                Some(o) => {
                    let fname = self.member_name(&p.key, p.computed).unwrap_or("");
                    let owner = if name.is_empty() {
                        "this"
                    } else {
                        name.as_str()
                    };
                    let obj = self.m.add_expr(
                        ExprKind::Name {
                            id: owner.into(),
                            resolved: class_opt.clone().map(Into::into),
                        },
                        name_span,
                    );
                    let target = self.m.add_expr(
                        ExprKind::Attr {
                            obj,
                            name: fname.into(),
                            resolved: class_opt
                                .as_ref()
                                .map(|q| format!("{q}.{fname}"))
                                .map(Into::into),
                        },
                        sp(p.key.span()),
                    );
                    self.push_stmt(
                        o,
                        StmtKind::Assign {
                            targets: vec![target],
                            value: Some(value),
                            op: AssignOp::Plain,
                        },
                        sp(p.span),
                    );
                }
                None => static_values.push(value),
            }
        }
        if let Some(o) = out {
            for el in &c.body.body {
                if let ClassElement::StaticBlock(b) = el {
                    let mut body = Vec::new();
                    self.lower_stmts(&b.body, &mut body);
                    self.push_stmt(o, StmtKind::Block(body), sp(b.span));
                }
            }
        }
        self.fns.last_mut().unwrap().this_class = saved_this;
        (tid, static_values)
    }

    fn lower_method(
        &mut self,
        md: &MethodDefinition<'a>,
        class_qual: &str,
        class_opt: &Option<String>,
        cidx: usize,
        prelude: &[&PropertyDefinition<'a>],
    ) -> FuncId {
        let name = match self.member_name(&md.key, md.computed) {
            Some(n) => n.to_string(),
            None => format!("[{}]", self.slice(md.key.span())),
        };
        let (decorators, decorator_calls) = self.lower_decorators(&md.decorators);
        let mut head = FnHead::new(FnKind::Method, sp(md.span), sp(md.key.span()));
        head.qualname = method_qualname(class_qual, &name);
        head.name = name;
        head.class = class_opt.clone();
        head.receiver = Some("this".into());
        head.this = ThisMode::Class(cidx);
        head.decorators = decorators;
        head.decorator_calls = decorator_calls;
        let f = &md.value;
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
            prelude,
        )
    }

    /// `handle = async () => {...}` / `handle = function () {...}`: a method
    /// bound to the instance.
    fn lower_fn_field(
        &mut self,
        p: &PropertyDefinition<'a>,
        class_qual: &str,
        class_opt: &Option<String>,
        cidx: usize,
    ) {
        let Some(name) = self.member_name(&p.key, p.computed) else {
            return;
        };
        let (decorators, decorator_calls) = self.lower_decorators(&p.decorators);
        let mut head = FnHead::new(FnKind::Method, sp(p.span), sp(p.key.span()));
        head.name = name.to_string();
        head.qualname = method_qualname(class_qual, name);
        head.class = class_opt.clone();
        head.receiver = Some("this".into());
        head.this = ThisMode::Class(cidx);
        head.decorators = decorators;
        head.decorator_calls = decorator_calls;
        match p.value.as_ref().map(strip_value) {
            Some(Expression::ArrowFunctionExpression(a)) => {
                self.lower_arrow(a, None, Some(head));
            }
            Some(Expression::FunctionExpression(f)) => {
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
                );
            }
            _ => {}
        }
    }

    /// `this.x = <init>` at the start of a constructor.
    pub fn lower_field_init(&mut self, p: &PropertyDefinition<'a>, out: &mut Block) {
        let Some(v) = &p.value else { return };
        let Some(name) = self.member_name(&p.key, p.computed) else {
            return;
        };
        let value = self.lower_expr(v);
        let key_span = sp(p.key.span());
        let this = self.m.add_expr(
            ExprKind::Name {
                id: "this".into(),
                resolved: None,
            },
            key_span,
        );
        let target = self.attr(this, name, true, key_span);
        self.push_stmt(
            out,
            StmtKind::Assign {
                targets: vec![target],
                value: Some(value),
                op: AssignOp::Plain,
            },
            sp(p.span),
        );
    }

    /// Decorators of a method: the resolved (or written) name of each, and
    /// the lowered calls of decorator factories (`@Get('/x')`).
    fn lower_decorators(&mut self, decs: &[Decorator<'a>]) -> (Vec<Str>, Vec<ExprId>) {
        let mut names = Vec::with_capacity(decs.len());
        let mut calls = Vec::new();
        for d in decs {
            match &d.expression {
                Expression::CallExpression(call) => {
                    let id = self.lower_expr(&d.expression);
                    let name = self
                        .m
                        .call(id)
                        .and_then(|c| c.target.clone())
                        .unwrap_or_else(|| self.slice(call.callee.span()).into());
                    names.push(Str::from(name));
                    calls.push(id);
                }
                other => {
                    let name = self
                        .chain_target(other, 0)
                        .map(|(t, _)| t)
                        .unwrap_or_else(|| self.slice(other.span()).to_string());
                    names.push(name.into());
                }
            }
        }
        (names, calls)
    }

    /// The type a field gets from `new X(...)`: `X` as written, resolved
    /// like the constructor call.
    fn inferred_type(&self, v: &Expression<'a>) -> TypeRef {
        match strip_value(v) {
            Expression::NewExpression(n) => TypeRef {
                text: self.slice(n.callee.span()).into(),
                resolved: self
                    .chain_target(&n.callee, 0)
                    .map(|(t, _)| t)
                    .map(Into::into),
            },
            _ => TypeRef::default(),
        }
    }

    /// Fields assigned in the constructor body (`this.queue = []`,
    /// `this.lock = new Mutex()`) that the class body did not declare.
    fn fields_from_ctor(&self, ctor: FuncId, fields: &mut Vec<Field>) {
        for &s in &self.m.func(ctor).body {
            let StmtKind::Assign { targets, value, .. } = &self.m.stmt(s).kind else {
                continue;
            };
            let [t] = targets.as_slice() else { continue };
            let ExprKind::Attr { obj, name, .. } = &self.m.expr(*t).kind else {
                continue;
            };
            if self.m.name_of(*obj) != Some("this") || fields.iter().any(|f| f.name == *name) {
                continue;
            }
            let ty = match value.and_then(|v| self.m.call(self.m.strip(v))) {
                Some(c) if c.is_new => {
                    let fs = self.m.expr(c.func).span;
                    TypeRef {
                        text: self
                            .text
                            .get(fs.start as usize..fs.end as usize)
                            .unwrap_or("")
                            .into(),
                        resolved: c.target.clone(),
                    }
                }
                _ => TypeRef::default(),
            };
            fields.push(Field {
                name: name.clone(),
                ty,
                span: self.m.stmt(s).span,
            });
        }
    }

    /// Names of the data fields of a class: declared properties, constructor
    /// parameter properties, and `this.x = ...` statements of the constructor.
    fn data_field_names(&self, c: &Class<'a>) -> Vec<&'a str> {
        let mut out = Vec::new();
        for el in &c.body.body {
            match el {
                ClassElement::PropertyDefinition(p)
                    if !p.value.as_ref().is_some_and(is_fn_value) =>
                {
                    out.extend(self.member_name(&p.key, p.computed));
                }
                ClassElement::AccessorProperty(a) => {
                    out.extend(self.member_name(&a.key, a.computed))
                }
                ClassElement::MethodDefinition(md)
                    if md.kind == MethodDefinitionKind::Constructor =>
                {
                    for p in &md.value.params.items {
                        if p.accessibility.is_some() || p.readonly || p.r#override {
                            out.extend(p.pattern.get_identifier_name().map(|n| n.as_str()));
                        }
                    }
                    let Some(body) = &md.value.body else { continue };
                    for s in &body.statements {
                        if let Statement::ExpressionStatement(es) = s
                            && let Expression::AssignmentExpression(a) = &es.expression
                            && let Some(m) = a.left.as_member_expression()
                            && matches!(m.object(), Expression::ThisExpression(_))
                            && let Some(n) = m.static_property_name()
                        {
                            out.push(n);
                        }
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// The name of a class member: identifier, string key, or `#private`
    /// (with its `#`, so `this.#x` and `this.x` stay distinct).
    fn member_name(&self, key: &PropertyKey<'a>, computed: bool) -> Option<&'a str> {
        match key {
            PropertyKey::PrivateIdentifier(p) if !computed => Some(self.slice(p.span)),
            k => member_key(k, computed),
        }
    }

    /// An interface: a [`TypeDecl`] with its property signatures as fields,
    /// and its method signatures as body-less methods (their return types
    /// tell the project index which calls return promises).
    pub fn lower_interface(&mut self, i: &TSInterfaceDeclaration<'a>) {
        let name = i.id.name.as_str();
        let qualname = self.decl_qualname(name);
        let mut fields = Vec::new();
        for sig in &i.body.body {
            match sig {
                TSSignature::TSPropertySignature(p) => {
                    let Some(fname) = self.member_name(&p.key, p.computed) else {
                        continue;
                    };
                    let ty = match &p.type_annotation {
                        Some(t) => self.type_ref(&t.type_annotation),
                        None => TypeRef::default(),
                    };
                    fields.push(Field {
                        name: fname.into(),
                        ty,
                        span: sp(p.span),
                    });
                }
                TSSignature::TSMethodSignature(ms) => {
                    let Some(mname) = self.member_name(&ms.key, ms.computed) else {
                        continue;
                    };
                    let mut head = FnHead::new(FnKind::Method, sp(ms.span), sp(ms.key.span()));
                    head.name = mname.to_string();
                    head.qualname = method_qualname(&qualname, mname);
                    head.class = Some(qualname.clone());
                    head.receiver = Some("this".into());
                    self.lower_function(
                        head,
                        false,
                        false,
                        Some(&ms.params),
                        ms.return_type.as_deref(),
                        Body::Empty,
                        &[],
                    );
                }
                _ => {}
            }
        }
        self.m.add_type(TypeDecl {
            name: name.into(),
            qualname: qualname.into(),
            fields,
            bases: Vec::new(),
            span: sp(i.span),
        });
    }
}

/// The name of a class member for comparisons (`#x` without its `#`).
fn member_key<'a>(key: &PropertyKey<'a>, computed: bool) -> Option<&'a str> {
    match key {
        _ if computed => None,
        PropertyKey::PrivateIdentifier(p) => Some(p.name.as_str()),
        k => static_key(k),
    }
}

fn method_qualname(class_qual: &str, name: &str) -> String {
    if class_qual.is_empty() {
        String::new()
    } else {
        format!("{class_qual}.{name}")
    }
}

/// A field value that is a function: the field is a method.
fn is_fn_value(v: &Expression<'_>) -> bool {
    matches!(
        strip_value(v),
        Expression::ArrowFunctionExpression(_) | Expression::FunctionExpression(_)
    )
}

fn strip_value<'b, 'a>(mut v: &'b Expression<'a>) -> &'b Expression<'a> {
    loop {
        v = match v {
            Expression::ParenthesizedExpression(p) => &p.expression,
            Expression::TSAsExpression(x) => &x.expression,
            Expression::TSSatisfiesExpression(x) => &x.expression,
            _ => return v,
        };
    }
}

/// A method overload signature followed by its implementation.
fn has_later_impl(elems: &[ClassElement<'_>], i: usize, md: &MethodDefinition<'_>) -> bool {
    let key = member_key(&md.key, md.computed);
    key.is_some()
        && elems[i + 1..].iter().any(|el| match el {
            ClassElement::MethodDefinition(m) => {
                m.value.body.is_some() && member_key(&m.key, m.computed) == key
            }
            _ => false,
        })
}
