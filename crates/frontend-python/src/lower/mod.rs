//! The lowerer: walks the ruff syntax tree once, with the scope chain of the
//! code being lowered, and fills the file model.
//!
//! Functions and classes live here; statements in [`stmt`], expressions in
//! [`expr`]. Every recursive entry point checks [`Lowerer::depth`] against
//! [`MAX_NESTING`] so pathological nesting is cut off (as an opaque
//! expression) instead of exhausting the stack.

mod expr;
mod stmt;

use crate::path::{ModulePath, join};
use crate::scope::{Binding, Res, Scope, ScopeKind, Scopes};
use crate::span;
use ruff_python_ast::{self as ast, Expr, Parameters, Stmt};
use ruff_text_size::{Ranged, TextRange};
use rustc_hash::FxHashMap as HashMap;
use unsnarl_model::builder::MAX_NESTING;
use unsnarl_model::{
    Block, ExprId, ExprKind, FileModel, FnKind, FuncId, Function, Param, Span, StmtKind, Str,
    TypeDecl, TypeId, TypeRef,
};

pub(crate) struct Lowerer<'a> {
    pub(crate) text: &'a str,
    pub(crate) m: FileModel,
    pub(crate) names: ModulePath,
    pub(crate) scopes: Scopes<'a>,
    /// Every class seen so far (their methods resolve `self.m()`).
    classes: Vec<ClassInfo<'a>>,
    /// Class index by qualified name (the latest definition wins).
    class_index: HashMap<String, usize>,
    /// Qualified-name prefixes of the enclosing definitions: the module,
    /// then each enclosing named function or class.
    qual: Vec<String>,
    fctx: FnCtx,
    /// Current recursion depth of the lowering (statements and expressions).
    pub(crate) depth: u32,
}

/// What the lowerer knows about the function whose body it is in.
#[derive(Clone, Copy)]
struct FnCtx {
    id: FuncId,
    /// Set while lowering a class body directly: `def`s there are methods of
    /// this class, annotated names are its fields.
    class_body: Option<usize>,
    /// Set in `__init__`: `self.x = ...` declares fields of this class.
    init_of: Option<usize>,
    is_test: bool,
}

struct ClassInfo<'a> {
    qualname: String,
    type_id: TypeId,
    /// Names of the functions the class body defines (also under `if`/`try`).
    methods: Vec<&'a str>,
    /// Resolved base classes, in order (`None` when unresolvable).
    bases: Vec<Option<String>>,
}

/// Base classes that define no methods a project could call through
/// `self`: looking a method up past them is safe.
const INERT_BASES: [&str; 7] = [
    "builtins.object",
    "typing.Generic",
    "typing.Protocol",
    "typing_extensions.Protocol",
    "abc.ABC",
    "typing.NamedTuple",
    "enum.Enum",
];

impl<'a> Lowerer<'a> {
    pub(crate) fn new(text: &'a str, m: FileModel, names: ModulePath) -> Lowerer<'a> {
        let is_test = m.is_test;
        Lowerer {
            text,
            qual: vec![names.module.clone()],
            m,
            names,
            scopes: Scopes {
                stack: Vec::new(),
                star_imports: Vec::new(),
            },
            classes: Vec::new(),
            class_index: HashMap::default(),
            fctx: FnCtx {
                id: FuncId(0),
                class_body: None,
                init_of: None,
                is_test,
            },
            depth: 0,
        }
    }

    pub(crate) fn lower_module(mut self, body: &'a [Stmt]) -> FileModel {
        let mut scope = Scope::new(ScopeKind::Module);
        let aliases = self.collect(body, &mut scope);
        self.scopes.stack.push(scope);
        self.resolve_module_aliases(aliases);
        let block = self.lower_block(body);
        self.m.functions[0].body = block;
        self.m
    }

    /// Module-level `X = a.b` assigned exactly once makes `X` an alias of
    /// `a.b` (`Lock = threading.Lock`, `sleep = time.sleep`). Processed in
    /// source order so aliases of aliases resolve.
    fn resolve_module_aliases(&mut self, aliases: Vec<(&'a str, &'a Expr)>) {
        for (name, value) in aliases {
            if self.scopes.stack[0].names.get(name) != Some(&Binding::ModuleVar) {
                continue;
            }
            if let Some(q) = self.static_resolve(value) {
                self.scopes.stack[0]
                    .names
                    .insert(name, Binding::Qualified(q));
            }
        }
    }

    /// The source text of a range (empty if the range is not on character
    /// boundaries, which a recovering parser should never produce).
    pub(crate) fn source(&self, r: TextRange) -> &'a str {
        self.text
            .get(r.start().to_usize()..r.end().to_usize())
            .unwrap_or("")
    }

    pub(crate) fn span_text(&self, s: Span) -> &'a str {
        self.text
            .get(s.start as usize..s.end as usize)
            .unwrap_or("")
    }

    /// The qualified-name prefix for definitions at this point.
    pub(crate) fn prefix(&self) -> &str {
        self.qual.last().map_or("", String::as_str)
    }

    pub(crate) fn lookup(&self, name: &str) -> Res<'_> {
        self.scopes.lookup(name)
    }

    /// The qualified name a `Name`/`Attribute` chain refers to, without
    /// lowering it (`asyncio.Queue`, `os.path.exists`, `builtins.open`).
    pub(crate) fn static_resolve(&self, e: &Expr) -> Option<String> {
        let mut segs: Vec<&str> = Vec::new();
        let mut cur = e;
        loop {
            match cur {
                Expr::Attribute(a) => {
                    if segs.len() as u32 >= MAX_NESTING {
                        return None;
                    }
                    segs.push(a.attr.as_str());
                    cur = &a.value;
                }
                Expr::Name(n) => {
                    let res = self.lookup(&n.id);
                    if !segs.is_empty() && !res.extends() {
                        return None;
                    }
                    let mut q = String::from(res.qualified(&self.m.module, &n.id)?);
                    for s in segs.iter().rev() {
                        q.push('.');
                        q.push_str(s);
                    }
                    return Some(q);
                }
                _ => return None,
            }
        }
    }

    /// `a.b.c` as written, for a `Name`/`Attribute` chain.
    pub(crate) fn dotted(e: &Expr) -> Option<String> {
        let mut segs: Vec<&str> = Vec::new();
        let mut cur = e;
        loop {
            match cur {
                Expr::Attribute(a) => {
                    if segs.len() as u32 >= MAX_NESTING {
                        return None;
                    }
                    segs.push(a.attr.as_str());
                    cur = &a.value;
                }
                Expr::Name(n) => {
                    let mut s = n.id.to_string();
                    for seg in segs.iter().rev() {
                        s.push('.');
                        s.push_str(seg);
                    }
                    return Some(s);
                }
                _ => return None,
            }
        }
    }

    /// A name for an expression that is resolved if possible, else written
    /// out as a dotted chain, else the source text (decorators, handler
    /// types).
    pub(crate) fn describe(&self, e: &Expr) -> String {
        self.static_resolve(e)
            .or_else(|| Self::dotted(e))
            .unwrap_or_else(|| self.source(e.range()).to_string())
    }

    pub(crate) fn lower_block(&mut self, body: &'a [Stmt]) -> Block {
        let mut out = Block::with_capacity(body.len());
        for s in body {
            self.lower_stmt(s, &mut out);
        }
        out
    }

    fn mark_generator(&mut self) {
        let id = self.fctx.id;
        if id.0 != 0 {
            self.m.func_mut(id).is_generator = true;
        }
    }

    // ----- functions -----------------------------------------------------

    /// Lowers a `def`; the caller adds the `FuncDef` statement for
    /// functions that are not methods.
    fn lower_function(&mut self, f: &'a ast::StmtFunctionDef) -> FuncId {
        let class = self.fctx.class_body;
        let mut decorators = Vec::with_capacity(f.decorator_list.len());
        let mut decorator_calls = Vec::new();
        for d in &f.decorator_list {
            let callee = match &d.expression {
                Expr::Call(c) => {
                    decorator_calls.push(self.lower_expr(&d.expression));
                    &*c.func
                }
                e => e,
            };
            decorators.push(Str::from(self.describe(callee)));
        }
        let is_static = decorators
            .iter()
            .any(|d| d == "builtins.staticmethod" || d == "staticmethod");
        let is_fixture = decorators.iter().any(|d| {
            d == "pytest.fixture" || d == "pytest_asyncio.fixture" || d.ends_with(".fixture")
        });
        let receiver = match class {
            Some(_) if !is_static => f
                .parameters
                .posonlyargs
                .iter()
                .chain(&f.parameters.args)
                .next()
                .map(|p| p.parameter.name.as_str()),
            _ => None,
        };
        let (params, param_names) = self.lower_params(&f.parameters, receiver.is_some());
        let returns = f.returns.as_deref().map(|r| self.type_ref(r));

        let name = f.name.as_str();
        let qualname = join(self.prefix(), name);
        // In a class body, `fctx.is_test` is the class's test-ness.
        let is_test =
            self.fctx.is_test || name.starts_with("test_") || name == "test" || is_fixture;
        let mut func = Function::new(
            if class.is_some() {
                FnKind::Method
            } else {
                FnKind::Function
            },
            span(f.range),
        );
        func.name = name.into();
        func.qualname = qualname.clone().into();
        func.is_async = f.is_async;
        func.class = class
            .map(|c| self.classes[c].qualname.clone())
            .map(Into::into);
        func.receiver = receiver.map(Into::into);
        func.params = params;
        func.returns = returns;
        func.decorators = decorators;
        func.decorator_calls = decorator_calls;
        func.name_span = span(f.name.range);
        func.parent = Some(self.fctx.id);
        func.is_test = is_test;
        let fid = self.m.add_function(func);

        let mut scope = Scope::new(ScopeKind::Function);
        if let (Some(r), Some(c)) = (receiver, class) {
            scope.bind(r, Binding::Receiver(c));
        }
        for p in param_names {
            scope.bind(p, Binding::Local);
        }
        let saved = self.fctx;
        self.fctx = FnCtx {
            id: fid,
            class_body: None,
            init_of: class.filter(|_| receiver.is_some() && name == "__init__"),
            is_test,
        };
        self.qual.push(qualname);
        self.collect(&f.body, &mut scope);
        self.scopes.stack.push(scope);
        let body = self.lower_block(&f.body);
        self.scopes.stack.pop();
        self.qual.pop();
        self.fctx = saved;
        self.m.func_mut(fid).body = body;
        fid
    }

    /// Parameters in declaration order (`*args`/`**kwargs` keep their stars
    /// so rules can tell them apart), defaults lowered in the enclosing
    /// scope. With `skip_receiver`, the first positional parameter is the
    /// receiver and is left out (it is `Function::receiver`), so `params[i]`
    /// matches the `i`-th argument of a method call.
    fn lower_params(
        &mut self,
        p: &'a Parameters,
        skip_receiver: bool,
    ) -> (Vec<Param>, Vec<&'a str>) {
        let mut params = Vec::new();
        let mut names = Vec::new();
        let positional = p.posonlyargs.iter().chain(&p.args);
        for (i, pd) in positional.enumerate() {
            if skip_receiver && i == 0 {
                continue;
            }
            let default = pd.default.as_deref().map(|d| self.lower_expr(d));
            params.push(self.param(&pd.parameter, "", default));
            names.push(pd.parameter.name.as_str());
        }
        if let Some(v) = &p.vararg {
            params.push(self.param(v, "*", None));
            names.push(v.name.as_str());
        }
        for pd in &p.kwonlyargs {
            let default = pd.default.as_deref().map(|d| self.lower_expr(d));
            params.push(self.param(&pd.parameter, "", default));
            names.push(pd.parameter.name.as_str());
        }
        if let Some(k) = &p.kwarg {
            params.push(self.param(k, "**", None));
            names.push(k.name.as_str());
        }
        (params, names)
    }

    fn param(&self, p: &ast::Parameter, stars: &str, default: Option<ExprId>) -> Param {
        Param {
            name: format!("{stars}{}", p.name.as_str()).into(),
            ty: p.annotation.as_deref().map(|a| self.type_ref(a)),
            default,
            span: span(p.range),
        }
    }

    /// `lambda args: body` → a closure whose body returns `body`.
    fn lower_lambda(&mut self, l: &'a ast::ExprLambda) -> ExprId {
        let (params, names) = match l.parameters.as_deref() {
            Some(p) => self.lower_params(p, false),
            None => (Vec::new(), Vec::new()),
        };
        let r = span(l.range);
        let mut func = Function::new(FnKind::Closure, r);
        func.params = params;
        func.name_span = Span::new(r.start, r.start.saturating_add(6).min(r.end));
        func.parent = Some(self.fctx.id);
        func.is_test = self.fctx.is_test;
        let fid = self.m.add_function(func);

        let mut scope = Scope::new(ScopeKind::Function);
        for n in names {
            scope.bind(n, Binding::Local);
        }
        let saved = self.fctx;
        self.fctx = FnCtx {
            id: fid,
            class_body: None,
            init_of: None,
            is_test: saved.is_test,
        };
        self.scopes.stack.push(scope);
        let value = self.lower_expr(&l.body);
        self.scopes.stack.pop();
        self.fctx = saved;
        let ret = self
            .m
            .add_stmt(StmtKind::Return(Some(value)), span(l.body.range()));
        self.m.func_mut(fid).body = vec![ret];
        self.m.add_expr(ExprKind::Closure(fid), r)
    }

    // ----- classes -------------------------------------------------------

    /// A class: its `TypeDecl`, a `ClassDef` statement, and the rest of its
    /// body (class attributes, nested classes...) as a `Block` right after,
    /// since that code runs where the class is defined (its assignments are
    /// to class attributes, see `lower_target`). Methods become functions of
    /// their own.
    fn lower_class(&mut self, c: &'a ast::StmtClassDef, out: &mut Block) {
        let name = c.name.as_str();
        let qualname = join(self.prefix(), name);
        let bases: Vec<Option<String>> = c
            .arguments
            .as_deref()
            .map(|a| {
                a.args
                    .iter()
                    .map(|b| match b {
                        Expr::Subscript(s) => self.static_resolve(&s.value),
                        b => self.static_resolve(b),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let r = span(c.range);
        let type_id = self.m.add_type(TypeDecl {
            name: name.into(),
            qualname: qualname.clone().into(),
            fields: Vec::new(),
            bases: bases.iter().flatten().map(|b| b.as_str().into()).collect(),
            span: r,
        });
        let mut methods = Vec::new();
        method_names(&c.body, &mut methods, 0);
        let is_test = self.fctx.is_test
            || name.starts_with("Test")
            || bases
                .iter()
                .flatten()
                .any(|b| b.ends_with("TestCase") || b.ends_with(".TestCase"));
        let ci = self.classes.len();
        self.class_index.insert(qualname.clone(), ci);
        self.classes.push(ClassInfo {
            qualname: qualname.clone(),
            type_id,
            methods,
            bases,
        });
        out.push(self.m.add_stmt(StmtKind::ClassDef(type_id), r));

        let mut scope = Scope::new(ScopeKind::Class);
        self.qual.push(qualname);
        self.collect(&c.body, &mut scope);
        self.scopes.stack.push(scope);
        let saved = self.fctx;
        self.fctx.class_body = Some(ci);
        self.fctx.init_of = None;
        self.fctx.is_test = is_test;
        let body = self.lower_block(&c.body);
        self.fctx = saved;
        self.scopes.stack.pop();
        self.qual.pop();
        if !body.is_empty() {
            out.push(self.m.add_stmt(StmtKind::Block(body), r));
        }
    }

    pub(crate) fn class_qualname(&self, ci: usize) -> &str {
        &self.classes[ci].qualname
    }

    /// The qualified method `name` of class `ci` reached through `self`:
    /// defined in the class, or in a base class of this file found before
    /// any base we cannot see into (which might define it first).
    pub(crate) fn method_target(&self, ci: usize, name: &str) -> Option<String> {
        self.find_method(ci, name, 0)
    }

    fn find_method(&self, ci: usize, name: &str, depth: u32) -> Option<String> {
        let class = self.classes.get(ci)?;
        if class.methods.contains(&name) {
            return Some(join(&class.qualname, name));
        }
        if depth > 16 {
            return None;
        }
        for base in &class.bases {
            let base = base.as_deref()?;
            if INERT_BASES.contains(&base) {
                continue;
            }
            let bi = *self.class_index.get(base)?;
            if bi == ci {
                return None;
            }
            if let Some(t) = self.find_method(bi, name, depth + 1) {
                return Some(t);
            }
            // A base of ours that does not define it: its own bases were
            // searched; go on with our next base (MRO order, simplified).
        }
        None
    }

    /// Records a field of class `ci` (the first declaration wins, unless a
    /// later one knows the type and the first did not).
    fn add_field(&mut self, ci: usize, name: &str, ty: TypeRef, at: Span) {
        let tid = self.classes[ci].type_id;
        let fields = &mut self.m.types[tid.index()].fields;
        match fields.iter_mut().find(|f| f.name == name) {
            Some(f) => {
                if f.ty.resolved.is_none() && ty.resolved.is_some() {
                    f.ty = ty;
                }
            }
            None => fields.push(unsnarl_model::Field {
                name: name.into(),
                ty,
                span: at,
            }),
        }
    }

    /// The type a value gives the field it is assigned to: a constructor or
    /// factory call (`threading.Lock()` → `threading.Lock`), a collection
    /// display (`[]` → `builtins.list`), an annotated parameter of the
    /// current function, or the same through `x or default` / ternaries.
    fn value_type(&self, v: ExprId, depth: u32) -> Option<TypeRef> {
        if depth > 8 {
            return None;
        }
        let builtin = |n: &str| TypeRef {
            text: n.into(),
            resolved: Some(format!("builtins.{n}").into()),
        };
        let e = self.m.expr(v);
        match &e.kind {
            ExprKind::Call(c) => Some(TypeRef {
                text: self.span_text(self.m.expr(c.func).span).into(),
                resolved: c.target.clone(),
            }),
            ExprKind::Collection { kind, .. } | ExprKind::Comprehension { kind, .. } => {
                match kind {
                    unsnarl_model::CollKind::List => Some(builtin("list")),
                    unsnarl_model::CollKind::Dict => Some(builtin("dict")),
                    unsnarl_model::CollKind::Set => Some(builtin("set")),
                    _ => None,
                }
            }
            ExprKind::Name { id, .. } => {
                let f = self.m.func(self.fctx.id);
                f.params
                    .iter()
                    .find(|p| p.name == *id)
                    .and_then(|p| p.ty.clone())
            }
            ExprKind::Logical { right, left, .. } => self
                .value_type(*right, depth + 1)
                .or_else(|| self.value_type(*left, depth + 1)),
            ExprKind::Ternary { then, orelse, .. } => self
                .value_type(*then, depth + 1)
                .or_else(|| self.value_type(*orelse, depth + 1)),
            _ => None,
        }
    }
}

/// Names of the functions a class body defines, also under `if`/`try`
/// (`if sys.version_info >= ...: def m(self): ...`), which are methods too.
fn method_names<'a>(body: &'a [Stmt], out: &mut Vec<&'a str>, depth: u32) {
    if depth > 8 {
        return;
    }
    for s in body {
        match s {
            Stmt::FunctionDef(f) => out.push(f.name.as_str()),
            Stmt::If(i) => {
                method_names(&i.body, out, depth + 1);
                for c in &i.elif_else_clauses {
                    method_names(&c.body, out, depth + 1);
                }
            }
            Stmt::Try(t) => {
                method_names(&t.body, out, depth + 1);
                for h in &t.handlers {
                    let ast::ExceptHandler::ExceptHandler(h) = h;
                    method_names(&h.body, out, depth + 1);
                }
                method_names(&t.orelse, out, depth + 1);
                method_names(&t.finalbody, out, depth + 1);
            }
            _ => {}
        }
    }
}
