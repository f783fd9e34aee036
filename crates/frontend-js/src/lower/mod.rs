//! Lowering of the oxc AST into the file model.
//!
//! One [`Lowerer`] walks one program. It keeps a stack of function contexts
//! (which function statements go to, the qualified-name prefix for nested
//! definitions, the class `this` refers to) and a parallel stack of
//! [`Scope`]s for name resolution. Every recursive entry point checks
//! `depth` against [`MAX_NESTING`] and emits an opaque node past it.

mod class;
mod expr;
mod pattern;
mod stmt;

use std::collections::HashMap;
use std::rc::Rc;

use oxc_ast::ast::{
    BindingPattern, Expression, FormalParameters, FunctionBody, PropertyDefinition,
    TSTypeAnnotation,
};
use oxc_span::GetSpan;
use unsnarl_model::builder::MAX_NESTING;
use unsnarl_model::{
    Block, ExprId, ExprKind, FileModel, FnKind, FuncId, Function, Lit, Param, Span, StmtKind, Str,
};

use crate::collect::MODULE_ITSELF;
use crate::paths;
use crate::scope::{Bound, Scope, is_global};

/// Converts an oxc span to a model span (both are byte offsets).
pub(crate) fn sp(s: oxc_span::Span) -> Span {
    Span::new(s.start, s.end)
}

/// What `this` means inside a function being lowered.
#[derive(Clone, Copy)]
pub(crate) enum ThisMode {
    /// Arrow functions (and static blocks) see the enclosing `this`.
    Inherit,
    /// Methods and class fields: an instance (or the class) of `classes[i]`.
    Class(usize),
    /// Plain functions: `this` depends on the call, so nothing is known.
    Dynamic,
}

pub(crate) struct FnCtx {
    pub id: FuncId,
    /// Prefix for the qualified names of definitions nested in this function:
    /// its own qualname, or the nearest named ancestor's for anonymous ones.
    pub ns: Rc<str>,
    /// The class whose members `this.x` refers to, if known.
    pub this_class: Option<usize>,
}

/// The members of a class that `this.m()` can be resolved to.
pub(crate) struct ClassInfo<'a> {
    pub qualname: String,
    pub methods: Vec<&'a str>,
    /// Data fields (declared, constructor parameter properties, assigned in
    /// the constructor): `this.f()` calls whatever the field holds.
    pub fields: Vec<&'a str>,
    /// The superclass, when `extends` names something qualified: calls of
    /// inherited methods (`this.emit()`, `super.init()`) resolve to it.
    pub base: Option<String>,
}

/// The header of a function about to be lowered.
pub(crate) struct FnHead<'a> {
    pub kind: FnKind,
    pub name: String,
    pub qualname: String,
    pub class: Option<String>,
    pub receiver: Option<String>,
    pub this: ThisMode,
    pub span: Span,
    pub name_span: Span,
    /// A named function expression can refer to itself by its name.
    pub own_name: Option<&'a str>,
    pub decorators: Vec<Str>,
    pub decorator_calls: Vec<ExprId>,
}

impl FnHead<'_> {
    pub fn new(kind: FnKind, span: Span, name_span: Span) -> Self {
        FnHead {
            kind,
            name: String::new(),
            qualname: String::new(),
            class: None,
            receiver: None,
            this: ThisMode::Dynamic,
            span,
            name_span,
            own_name: None,
            decorators: Vec::new(),
            decorator_calls: Vec::new(),
        }
    }
}

/// The body of a function being lowered.
pub(crate) enum Body<'b, 'a> {
    Block(&'b FunctionBody<'a>),
    /// An arrow function's expression body: lowered as `return expr`.
    Expr(&'b Expression<'a>),
    /// Declarations without a body (`declare function`, abstract methods,
    /// interface method signatures).
    Empty,
}

pub(crate) struct Lowerer<'a> {
    pub text: &'a str,
    pub m: FileModel,
    /// Directory of the file, for resolving relative specifiers.
    pub module_dir: &'a str,
    pub scopes: Vec<Scope<'a>>,
    /// Emptied scopes kept for reuse (one per function otherwise allocates).
    scope_pool: Vec<Scope<'a>>,
    pub fns: Vec<FnCtx>,
    pub classes: Vec<ClassInfo<'a>>,
    pub depth: u32,
    pub is_test: bool,
    /// Module-level names exported only under another name
    /// (`export default App`, `export { run as start }`): their qualified
    /// name uses the exported name so importers and definitions agree.
    pub export_as: HashMap<&'a str, &'a str>,
    /// Inside a TS `namespace`/`declare module` body: definitions there are
    /// not module-level bindings.
    pub ns_depth: u32,
}

impl<'a> Lowerer<'a> {
    pub fn new(text: &'a str, rel_path: &'a str, m: FileModel) -> Self {
        let is_test = m.is_test;
        let ns: Rc<str> = m.module.as_str().into();
        Lowerer {
            text,
            m,
            module_dir: paths::dir_of(rel_path),
            scopes: vec![Scope::default()],
            scope_pool: Vec::new(),
            fns: vec![FnCtx {
                id: FuncId(0),
                ns,
                this_class: None,
            }],
            classes: Vec::new(),
            depth: 0,
            is_test,
            export_as: HashMap::new(),
            ns_depth: 0,
        }
    }

    pub fn lower_program(mut self, program: &oxc_ast::ast::Program<'a>) -> FileModel {
        // The arenas were reserved from the file's length when the model was
        // made (`FileModel::reserve_nodes`); reserving more here would copy
        // the whole reservation of every file. The surplus is returned below.
        self.m.func_mut(FuncId(0)).is_test = self.is_test;
        self.collect_exports(&program.body);
        self.collect_stmts(&program.body, true, 0);
        let body = self.lower_block(&program.body);
        self.m.func_mut(FuncId(0)).body = body;
        self.m.exprs.shrink_to_fit();
        self.m.stmts.shrink_to_fit();
        self.m
    }

    pub fn cur(&self) -> &FnCtx {
        self.fns.last().expect("the module context is never popped")
    }

    pub fn in_module(&self) -> bool {
        self.fns.len() == 1 && self.ns_depth == 0
    }

    pub fn slice(&self, s: oxc_span::Span) -> &'a str {
        self.text
            .get(s.start as usize..s.end as usize)
            .unwrap_or("")
    }

    /// The qualified name an identifier refers to: the innermost scope that
    /// declares it decides; undeclared well-known globals resolve to
    /// themselves.
    pub fn lookup(&self, name: &str) -> Option<String> {
        self.lookup_ref(name).map(|(q, _)| q.to_string())
    }

    /// [`Self::lookup`] without copying: the qualified name, and whether
    /// member chains on it are qualified too (see [`Bound`]).
    pub fn lookup_ref<'s>(&'s self, name: &'s str) -> Option<(&'s str, bool)> {
        for s in self.scopes.iter().rev() {
            if let Some(b) = s.get(name) {
                return b.as_ref().map(|b| (b.q.as_str(), b.extends));
            }
        }
        is_global(name).then_some((name, true))
    }

    /// The qualified name member chains on `name` extend, if any.
    pub fn lookup_base<'s>(&'s self, name: &'s str) -> Option<&'s str> {
        self.lookup_ref(name).filter(|(_, e)| *e).map(|(q, _)| q)
    }

    pub fn is_declared(&self, name: &str) -> bool {
        self.scopes.iter().any(|s| s.get(name).is_some())
    }

    /// True when `name` is the global of that name (not shadowed).
    pub fn is_unshadowed_global(&self, name: &str) -> bool {
        is_global(name) && !self.is_declared(name)
    }

    /// The binding of `name` in the innermost scope only.
    pub fn local_binding(&self, name: &str) -> Option<String> {
        self.scopes
            .last()
            .and_then(|s| s.get(name))
            .and_then(|b| b.as_ref())
            .map(|b| b.q.clone())
    }

    /// The qualified name of a definition named `name` in the current scope:
    /// `<module>.<exported name>` at module level (the module itself for
    /// `module.exports = name`), `<ns>.<name>` elsewhere.
    pub fn def_qualname(&self, name: &str) -> String {
        let name = if self.in_module() {
            match self.export_as.get(name).copied() {
                Some(MODULE_ITSELF) => return self.m.module.to_string(),
                Some(exported) => exported,
                None => name,
            }
        } else {
            name
        };
        format!("{}.{}", self.cur().ns, name)
    }

    /// The qualified name of a declared function/class: the binding the
    /// collector gave it (so calls and the definition agree), else a fresh one.
    pub fn decl_qualname(&self, name: &str) -> String {
        if self.ns_depth == 0
            && let Some(q) = self.local_binding(name)
        {
            return q;
        }
        self.def_qualname(name)
    }

    /// True for qualified names of this module's own definitions.
    pub fn is_own(&self, q: &str) -> bool {
        let module = self.m.module.as_str();
        q.strip_prefix(module)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
    }

    pub fn lit(&mut self, lit: Lit, span: Span) -> ExprId {
        self.m.add_expr(ExprKind::Literal(lit), span)
    }

    /// Lowers a function of any shape (declaration, expression, arrow,
    /// method, class field) into a new [`Function`] whose parent is the
    /// current function. `prelude` are class field initializers that run at
    /// the start of a constructor.
    #[allow(clippy::too_many_arguments)]
    pub fn lower_function(
        &mut self,
        head: FnHead<'a>,
        is_async: bool,
        is_generator: bool,
        params: Option<&FormalParameters<'a>>,
        returns: Option<&TSTypeAnnotation<'a>>,
        body: Body<'_, 'a>,
        prelude: &[&PropertyDefinition<'a>],
    ) -> FuncId {
        let parent = self.cur().id;
        let this_class = match head.this {
            ThisMode::Inherit => self.cur().this_class,
            ThisMode::Class(i) => Some(i),
            ThisMode::Dynamic => None,
        };
        // An anonymous function takes the namespace of the nearest named
        // one, except the module's: a helper declared inside `w(() => { ..
        // })` (a bundler's module wrapper, a test's callback) is not the
        // module-level name it would otherwise get, which another helper
        // or a module variable of that name already has.
        let ns = if !head.qualname.is_empty() {
            head.qualname.as_str().into()
        } else if *self.cur().ns == *self.m.module.as_str() {
            format!("{}.<anonymous@{}>", self.m.module, head.span.start).into()
        } else {
            Rc::clone(&self.cur().ns)
        };
        let own = head.own_name.map(|n| {
            let b = (!head.qualname.is_empty()).then(|| Bound::named(head.qualname.clone()));
            (n, b)
        });
        let mut f = Function::new(head.kind, head.span);
        f.name = head.name.into();
        f.qualname = head.qualname.into();
        f.is_async = is_async;
        f.is_generator = is_generator;
        f.class = head.class.map(Into::into);
        f.receiver = head.receiver.map(Into::into);
        f.name_span = head.name_span;
        f.parent = Some(parent);
        f.is_test = self.is_test;
        f.decorators = head.decorators;
        f.decorator_calls = head.decorator_calls;
        let fid = self.m.add_function(f);

        self.fns.push(FnCtx {
            id: fid,
            ns,
            this_class,
        });
        let scope = self.scope_pool.pop().unwrap_or_default();
        self.scopes.push(scope);
        self.depth += 1;
        let saved_ns_depth = std::mem::replace(&mut self.ns_depth, 0);

        if let Some((name, binding)) = own {
            self.scopes.last_mut().unwrap().bind(name, binding);
        }
        if let Some(p) = params {
            self.collect_params(p);
        }
        if let Body::Block(b) = &body {
            self.collect_stmts(&b.statements, true, 0);
        }
        let params = params.map(|p| self.lower_params(p)).unwrap_or_default();
        let returns = returns.map(|r| self.type_ref(&r.type_annotation));

        let n = match &body {
            Body::Block(b) => b.statements.len(),
            Body::Expr(_) => 1,
            Body::Empty => 0,
        };
        let mut block: Block = Vec::with_capacity(prelude.len() + n);
        for p in prelude {
            self.lower_field_init(p, &mut block);
        }
        match body {
            Body::Block(b) => self.lower_stmts(&b.statements, &mut block),
            Body::Expr(e) => {
                let v = self.lower_expr(e);
                let s = self.m.add_stmt(StmtKind::Return(Some(v)), sp(e.span()));
                block.push(s);
            }
            Body::Empty => {}
        }

        self.ns_depth = saved_ns_depth;
        self.depth -= 1;
        if let Some(mut s) = self.scopes.pop() {
            s.clear();
            self.scope_pool.push(s);
        }
        self.fns.pop();
        let f = self.m.func_mut(fid);
        f.params = params;
        f.returns = returns;
        f.body = block;
        fid
    }

    fn lower_params(&mut self, ps: &FormalParameters<'a>) -> Vec<Param> {
        let mut out = Vec::with_capacity(ps.items.len() + 1);
        for p in &ps.items {
            let (name, pattern_default) = self.param_name(&p.pattern);
            let ty = p
                .type_annotation
                .as_ref()
                .map(|t| self.type_ref(&t.type_annotation));
            let default = match (&p.initializer, pattern_default) {
                (Some(init), _) => Some(self.lower_expr(init)),
                (None, Some(d)) => Some(self.lower_expr(d)),
                (None, None) => None,
            };
            out.push(Param {
                name: name.into(),
                ty,
                default,
                span: sp(p.span),
            });
        }
        if let Some(rest) = &ps.rest {
            let (name, _) = self.param_name(&rest.rest.argument);
            let ty = rest
                .type_annotation
                .as_ref()
                .map(|t| self.type_ref(&t.type_annotation));
            out.push(Param {
                name: format!("...{name}").into(),
                ty,
                default: None,
                span: sp(rest.span),
            });
        }
        out
    }

    /// A parameter's name: the identifier, or the pattern as written for
    /// destructured parameters (`{ signal, timeout }`), plus a default value
    /// written inside the pattern.
    fn param_name<'b>(&self, pat: &'b BindingPattern<'a>) -> (String, Option<&'b Expression<'a>>) {
        match pat {
            BindingPattern::BindingIdentifier(id) => (id.name.as_str().to_string(), None),
            BindingPattern::AssignmentPattern(a) => (self.param_name(&a.left).0, Some(&a.right)),
            _ => (self.slice(pat.span()).to_string(), None),
        }
    }

    /// The span of the `=>` of an arrow function (its name span), found in
    /// the text between the parameters and the body.
    pub fn arrow_span(&self, params_end: u32, body_start: u32, whole: Span) -> Span {
        let (a, b) = (params_end as usize, body_start as usize);
        if let Some(between) = self.text.get(a..b)
            && let Some(i) = between.find("=>")
        {
            let start = params_end + i as u32;
            return Span::new(start, start + 2);
        }
        whole
    }

    /// The span of the `function` keyword of an anonymous function.
    pub fn keyword_span(&self, whole: Span, keyword: &str) -> Span {
        if let Some(t) = self.text.get(whole.start as usize..whole.end as usize)
            && let Some(i) = t.find(keyword)
        {
            let start = whole.start + i as u32;
            return Span::new(start, start + keyword.len() as u32);
        }
        whole
    }

    /// Runs `f` one nesting level deeper, or returns an opaque node when the
    /// nesting limit is reached.
    pub fn guarded(&mut self, span: Span, f: impl FnOnce(&mut Self) -> ExprId) -> ExprId {
        if self.depth >= MAX_NESTING {
            return self.m.opaque(span);
        }
        self.depth += 1;
        let id = f(self);
        self.depth -= 1;
        id
    }

    /// Adds a statement to the arena and appends it to `out`.
    pub fn push_stmt(&mut self, out: &mut Block, kind: StmtKind, span: Span) {
        let id = self.m.add_stmt(kind, span);
        out.push(id);
    }
}

/// True for expressions whose value is a function or class, which take the
/// name of the binding they are assigned to.
pub(crate) fn is_function_like(mut e: &Expression<'_>) -> bool {
    loop {
        e = match e {
            Expression::ArrowFunctionExpression(_)
            | Expression::FunctionExpression(_)
            | Expression::ClassExpression(_) => return true,
            Expression::ParenthesizedExpression(p) => &p.expression,
            Expression::TSAsExpression(x) => &x.expression,
            Expression::TSSatisfiesExpression(x) => &x.expression,
            _ => return false,
        };
    }
}

/// The last segment of a qualified name (`src/app.api.get` → `get`,
/// `lib/worker` → `worker`).
pub(crate) fn last_segment(q: &str) -> &str {
    q.rsplit(['.', '/']).next().unwrap_or(q)
}
