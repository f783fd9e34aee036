//! Declaration collection: before a function (or the module) is lowered, the
//! names it declares anywhere in its body are bound in its scope, because JS
//! hoists functions and `var`s and a local declared after a use still
//! shadows an import of the same name.
//!
//! Bindings carry what the name refers to when that is known: imports
//! (ESM, `require`, TS `import x = require()`), aliases of imported values
//! (`const { readFile } = fs.promises`), module-level definitions
//! (`<module>.<name>`) and nested functions (`<outer>.<name>`).

use oxc_ast::ast::{
    Argument, BindingPattern, CallExpression, Declaration, ExportDefaultDeclarationKind,
    Expression, ForStatementInit, ForStatementLeft, FormalParameters, ImportDeclarationSpecifier,
    MemberExpression, ModuleDeclaration, ObjectPattern, ObjectPropertyKind, PropertyKey, Statement,
    TSModuleReference, TSTypeName, VariableDeclaration, VariableDeclarationKind,
};
use std::collections::HashSet;
use unsnarl_model::builder::MAX_NESTING;
use unsnarl_model::{Import, Span};

use crate::lower::{Lowerer, is_function_like, sp};
use crate::paths::resolve_specifier;
use crate::scope::{Binding, Bound, is_global_object};

impl<'a> Lowerer<'a> {
    /// Binds every name a parameter list declares (as plain locals).
    pub fn collect_params(&mut self, ps: &FormalParameters<'a>) {
        for p in &ps.items {
            self.bind_pattern_names(&p.pattern, false, 0);
        }
        if let Some(rest) = &ps.rest {
            self.bind_pattern_names(&rest.rest.argument, false, 0);
        }
    }

    /// Binds the declarations of a statement list in the current scope.
    /// `top` is true for the statements directly in the function/module
    /// body (not in nested blocks).
    pub fn collect_stmts(&mut self, stmts: &[Statement<'a>], top: bool, depth: u32) {
        for s in stmts {
            self.collect_stmt(s, top, depth);
        }
    }

    fn collect_stmt(&mut self, s: &Statement<'a>, top: bool, depth: u32) {
        if depth >= MAX_NESTING {
            return;
        }
        let d = depth + 1;
        match s {
            Statement::VariableDeclaration(v) => self.collect_var(v, top),
            Statement::FunctionDeclaration(f) => {
                if let Some(id) = &f.id {
                    let b = self.definition_binding(id.name.as_str(), top);
                    self.scope_bind(id.name.as_str(), b);
                }
            }
            Statement::ClassDeclaration(c) => {
                if let Some(id) = &c.id {
                    let b = self.definition_binding(id.name.as_str(), top);
                    self.scope_bind(id.name.as_str(), b);
                }
            }
            Statement::TSInterfaceDeclaration(i) => self.collect_type_name(i.id.name.as_str(), top),
            Statement::TSTypeAliasDeclaration(t) => self.collect_type_name(t.id.name.as_str(), top),
            Statement::TSEnumDeclaration(e) => self.collect_type_name(e.id.name.as_str(), top),
            Statement::TSNamespaceDeclaration(n) => self.collect_type_name(n.id.name.as_str(), top),
            Statement::TSImportEqualsDeclaration(i) => {
                let target = match &i.module_reference {
                    TSModuleReference::ExternalModuleReference(r) => Some(resolve_specifier(
                        r.expression.value.as_str(),
                        self.module_dir,
                    )),
                    TSModuleReference::IdentifierReference(r) => self.lookup(r.name.as_str()),
                    TSModuleReference::QualifiedName(q) => {
                        let left = self.type_name_target(&q.left, 0);
                        left.map(|l| format!("{l}.{}", q.right.name.as_str()))
                    }
                };
                let name = i.id.name.as_str();
                if let Some(t) = &target {
                    self.record_import(name, t.clone(), sp(i.span));
                }
                self.scope_set(name, target.map(Bound::named));
            }
            Statement::ImportDeclaration(_)
            | Statement::ExportNamedDeclaration(_)
            | Statement::ExportDeclaration(_)
            | Statement::ExportDefaultDeclaration(_) => {
                if let Some(md) = s.as_module_declaration() {
                    self.collect_module_decl(md, d);
                }
            }
            Statement::BlockStatement(b) => self.collect_stmts(&b.body, false, d),
            Statement::IfStatement(i) => {
                self.collect_stmt(&i.consequent, false, d);
                if let Some(alt) = &i.alternate {
                    self.collect_stmt(alt, false, d);
                }
            }
            Statement::ForStatement(f) => {
                if let Some(ForStatementInit::VariableDeclaration(v)) = &f.init {
                    self.collect_var(v, false);
                }
                self.collect_stmt(&f.body, false, d);
            }
            Statement::ForInStatement(f) => {
                if let ForStatementLeft::VariableDeclaration(v) = &f.left {
                    self.collect_var(v, false);
                }
                self.collect_stmt(&f.body, false, d);
            }
            Statement::ForOfStatement(f) => {
                if let ForStatementLeft::VariableDeclaration(v) = &f.left {
                    self.collect_var(v, false);
                }
                self.collect_stmt(&f.body, false, d);
            }
            Statement::WhileStatement(w) => self.collect_stmt(&w.body, false, d),
            Statement::DoWhileStatement(w) => self.collect_stmt(&w.body, false, d),
            Statement::LabeledStatement(l) => self.collect_stmt(&l.body, top, d),
            Statement::WithStatement(w) => self.collect_stmt(&w.body, false, d),
            Statement::TryStatement(t) => {
                self.collect_stmts(&t.block.body, false, d);
                if let Some(h) = &t.handler {
                    if let Some(p) = &h.param {
                        self.bind_pattern_names(&p.pattern, false, 0);
                    }
                    self.collect_stmts(&h.body.body, false, d);
                }
                if let Some(f) = &t.finalizer {
                    self.collect_stmts(&f.body, false, d);
                }
            }
            Statement::SwitchStatement(sw) => {
                for c in &sw.cases {
                    self.collect_stmts(&c.consequent, false, d);
                }
            }
            _ => {}
        }
    }

    fn collect_module_decl(&mut self, md: &ModuleDeclaration<'a>, depth: u32) {
        match md {
            ModuleDeclaration::ImportDeclaration(imp) => {
                let source = imp.source.value.as_str();
                let module = resolve_specifier(source, self.module_dir);
                let relative = source.starts_with('.');
                let Some(specs) = &imp.specifiers else { return };
                for spec in specs {
                    let (local, target, span) = match spec {
                        ImportDeclarationSpecifier::ImportSpecifier(s) => (
                            s.local.name.as_str(),
                            format!("{module}.{}", s.imported.name().as_str()),
                            s.span,
                        ),
                        // A package's default export is, by CommonJS interop,
                        // the package object itself (`import fs from 'fs'`,
                        // `import axios from 'axios'`); a project module's is
                        // its `default` export.
                        ImportDeclarationSpecifier::ImportDefaultSpecifier(s) => (
                            s.local.name.as_str(),
                            if relative {
                                format!("{module}.default")
                            } else {
                                module.clone()
                            },
                            s.span,
                        ),
                        ImportDeclarationSpecifier::ImportNamespaceSpecifier(s) => {
                            (s.local.name.as_str(), module.clone(), s.span)
                        }
                    };
                    self.record_import(local, target.clone(), sp(span));
                    self.scope_set(local, Some(Bound::named(target)));
                }
            }
            ModuleDeclaration::ExportDeclaration(e) => {
                self.collect_stmt(e.declaration.as_statement(), true, depth);
            }
            ModuleDeclaration::ExportDefaultDeclaration(e) => match &e.declaration {
                ExportDefaultDeclarationKind::FunctionDeclaration(f) => {
                    if let Some(id) = &f.id {
                        let b = self.definition_binding(id.name.as_str(), true);
                        self.scope_bind(id.name.as_str(), b);
                    }
                }
                ExportDefaultDeclarationKind::ClassDeclaration(c) => {
                    if let Some(id) = &c.id {
                        let b = self.definition_binding(id.name.as_str(), true);
                        self.scope_bind(id.name.as_str(), b);
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }

    /// The binding of a function/class/type defined in the current scope.
    fn definition_binding(&self, name: &str, top: bool) -> Binding {
        if self.in_module() && !top {
            // Block-scoped definitions inside module-level blocks are not
            // module state; they are locals of the module code.
            return None;
        }
        Some(Bound::named(self.def_qualname(name)))
    }

    fn collect_type_name(&mut self, name: &'a str, top: bool) {
        // Types matter at module level (annotations resolve through them);
        // local type names are not worth a binding.
        if self.in_module() && top {
            let q = self.def_qualname(name);
            self.scope_bind(name, Some(Bound::named(q)));
        }
    }

    fn collect_var(&mut self, v: &VariableDeclaration<'a>, top: bool) {
        let is_const = matches!(
            v.kind,
            VariableDeclarationKind::Const
                | VariableDeclarationKind::Using
                | VariableDeclarationKind::AwaitUsing
        );
        // `var` is function-scoped: at module level it is module state
        // wherever it is written.
        let module_level = self.in_module() && (top || v.kind == VariableDeclarationKind::Var);
        for d in &v.declarations {
            let source = d.init.as_ref().and_then(|init| self.chain_target(init, 0));
            // Imports (`require`) bind for any declaration kind; aliases of
            // resolved values only for `const`, which cannot be reassigned.
            let source = source.filter(|(_, from_require)| *from_require || is_const);
            match (&d.id, source) {
                (BindingPattern::BindingIdentifier(id), source) => {
                    let name = id.name.as_str();
                    let function_like = d.init.as_ref().is_some_and(is_function_like);
                    let binding = if let Some((target, from_require)) = source {
                        if from_require {
                            self.record_import(name, target.clone(), sp(d.span));
                        }
                        Some(Bound::named(target))
                    } else if function_like && (module_level || !self.in_module()) {
                        Some(Bound::named(self.def_qualname(name)))
                    } else if module_level {
                        // An object literal's members are named through it
                        // (`api.get` → `<module>.api.get`); other module
                        // variables are typed by the semantic pass.
                        let object = matches!(d.init, Some(Expression::ObjectExpression(_)));
                        let q = self.def_qualname(name);
                        Some(if object && is_const {
                            Bound::named(q)
                        } else {
                            Bound::var(q)
                        })
                    } else {
                        None
                    };
                    self.scope_bind(name, binding);
                }
                (BindingPattern::ObjectPattern(op), Some((target, from_require))) => {
                    self.bind_destructured(op, &target, from_require, 0);
                }
                (pat, _) => self.bind_pattern_names(pat, module_level, 0),
            }
        }
    }

    /// `const { a, b: c, d: { e } } = <target>` binds `a` → `target.a`,
    /// `c` → `target.b`, `e` → `target.d.e`.
    fn bind_destructured(
        &mut self,
        op: &ObjectPattern<'a>,
        target: &str,
        from_require: bool,
        depth: u32,
    ) {
        if depth >= MAX_NESTING {
            return;
        }
        for p in &op.properties {
            let key = if p.computed { None } else { static_key(&p.key) };
            let Some(key) = key else {
                self.bind_pattern_names(&p.value, false, depth + 1);
                continue;
            };
            let sub = format!("{target}.{key}");
            let mut value = &p.value;
            if let BindingPattern::AssignmentPattern(a) = value {
                value = &a.left;
            }
            match value {
                BindingPattern::BindingIdentifier(id) => {
                    if from_require {
                        self.record_import(id.name.as_str(), sub.clone(), sp(p.span));
                    }
                    self.scope_bind(id.name.as_str(), Some(Bound::named(sub)));
                }
                BindingPattern::ObjectPattern(inner) => {
                    self.bind_destructured(inner, &sub, from_require, depth + 1)
                }
                other => self.bind_pattern_names(other, false, depth + 1),
            }
        }
        if let Some(rest) = &op.rest {
            self.bind_pattern_names(&rest.argument, false, depth + 1);
        }
    }

    /// Binds every identifier of a pattern: as module-level definitions when
    /// `module_level` is set, else as plain locals.
    pub fn bind_pattern_names(&mut self, pat: &BindingPattern<'a>, module_level: bool, depth: u32) {
        if depth >= MAX_NESTING {
            return;
        }
        match pat {
            BindingPattern::BindingIdentifier(id) => {
                let name = id.name.as_str();
                let b = module_level.then(|| Bound::var(self.def_qualname(name)));
                self.scope_bind(name, b);
            }
            BindingPattern::AssignmentPattern(a) => {
                self.bind_pattern_names(&a.left, module_level, depth + 1)
            }
            BindingPattern::ObjectPattern(o) => {
                for p in &o.properties {
                    self.bind_pattern_names(&p.value, module_level, depth + 1);
                }
                if let Some(r) = &o.rest {
                    self.bind_pattern_names(&r.argument, module_level, depth + 1);
                }
            }
            BindingPattern::ArrayPattern(a) => {
                for p in a.elements.iter().flatten() {
                    self.bind_pattern_names(p, module_level, depth + 1);
                }
                if let Some(r) = &a.rest {
                    self.bind_pattern_names(&r.argument, module_level, depth + 1);
                }
            }
        }
    }

    fn scope_bind(&mut self, name: &'a str, b: Binding) {
        self.scopes.last_mut().unwrap().bind(name, b);
    }

    fn scope_set(&mut self, name: &'a str, b: Binding) {
        self.scopes.last_mut().unwrap().set(name, b);
    }

    pub fn record_import(&mut self, local: &str, target: String, span: Span) {
        self.m.imports.push(Import {
            local: local.into(),
            target: target.into(),
            span,
        });
    }

    /// What an expression evaluates to, as a qualified name, from the AST
    /// alone (used before the expression is lowered): an identifier's
    /// binding, a member chain on it, `require('x')`, `await import('x')`.
    /// The flag tells whether the chain starts at a module load.
    pub fn chain_target(&self, e: &Expression<'a>, depth: u32) -> Option<(String, bool)> {
        if depth >= MAX_NESTING {
            return None;
        }
        match e {
            Expression::Identifier(id) => self
                .lookup_base(id.name.as_str())
                .map(|t| (t.to_string(), false)),
            Expression::StaticMemberExpression(m) => {
                let (base, req) = self.chain_target(&m.object, depth + 1)?;
                let prop = m.property.name.as_str();
                if is_global_object(&base) && crate::scope::is_global(prop) {
                    return Some((prop.to_string(), req));
                }
                Some((format!("{base}.{prop}"), req))
            }
            Expression::CallExpression(c) => {
                let spec = self.require_specifier(c)?;
                Some((resolve_specifier(spec, self.module_dir), true))
            }
            Expression::AwaitExpression(a) => match &a.argument {
                Expression::ImportExpression(i) => {
                    let spec = string_value(&i.source)?;
                    Some((resolve_specifier(spec, self.module_dir), true))
                }
                _ => None,
            },
            Expression::ParenthesizedExpression(p) => self.chain_target(&p.expression, depth + 1),
            Expression::TSAsExpression(x) => self.chain_target(&x.expression, depth + 1),
            Expression::TSSatisfiesExpression(x) => self.chain_target(&x.expression, depth + 1),
            Expression::TSNonNullExpression(x) => self.chain_target(&x.expression, depth + 1),
            Expression::TSTypeAssertion(x) => self.chain_target(&x.expression, depth + 1),
            _ => None,
        }
    }

    /// The member-expression form of [`Self::chain_target`] (assignment
    /// targets are member expressions, not expressions).
    pub fn member_chain_target(&self, m: &MemberExpression<'a>) -> Option<String> {
        match m {
            MemberExpression::StaticMemberExpression(s) => {
                let (base, _) = self.chain_target(&s.object, 0)?;
                Some(format!("{base}.{}", s.property.name.as_str()))
            }
            _ => None,
        }
    }

    /// The specifier of a `require('x')` call of the global `require`.
    pub fn require_specifier(&self, c: &CallExpression<'a>) -> Option<&'a str> {
        let Expression::Identifier(callee) = &c.callee else {
            return None;
        };
        if callee.name.as_str() != "require" || !self.is_unshadowed_global("require") {
            return None;
        }
        match c.arguments.first()? {
            Argument::SpreadElement(_) => None,
            a => string_value(a.to_expression()),
        }
    }

    pub fn type_name_target(&self, n: &TSTypeName<'a>, depth: u32) -> Option<String> {
        if depth >= MAX_NESTING {
            return None;
        }
        match n {
            TSTypeName::IdentifierReference(id) => self.lookup(id.name.as_str()),
            TSTypeName::QualifiedName(q) => {
                let left = self.type_name_target(&q.left, depth + 1)?;
                Some(format!("{left}.{}", q.right.name.as_str()))
            }
            TSTypeName::ThisExpression(_) => None,
        }
    }

    /// Finds module-level names that are exported only under another name
    /// (`export default App`, `export { run as start }`,
    /// `module.exports = { start: run }`), so their definitions are named
    /// as importers will name them.
    pub fn collect_exports(&mut self, body: &[Statement<'a>]) {
        let mut as_self: HashSet<&'a str> = HashSet::new();
        for s in body {
            match s {
                Statement::ExportNamedDeclaration(e) => {
                    for spec in &e.specifiers {
                        let (Some(local), exported) =
                            (spec.local.identifier_name(), spec.exported.name())
                        else {
                            continue;
                        };
                        let (local, exported) = (local.as_str(), exported.as_str());
                        if local == exported {
                            as_self.insert(local);
                        } else {
                            self.export_as.entry(local).or_insert(exported);
                        }
                    }
                }
                Statement::ExportDeclaration(e) => {
                    if let Some(id) = declaration_name(&e.declaration) {
                        as_self.insert(id);
                    }
                    if let Declaration::VariableDeclaration(v) = &e.declaration {
                        for d in &v.declarations {
                            for id in d.id.get_binding_identifiers() {
                                as_self.insert(id.name.as_str());
                            }
                        }
                    }
                }
                Statement::ExportDefaultDeclaration(e) => {
                    let name = match &e.declaration {
                        ExportDefaultDeclarationKind::FunctionDeclaration(f) => {
                            f.id.as_ref().map(|i| i.name.as_str())
                        }
                        ExportDefaultDeclarationKind::ClassDeclaration(c) => {
                            c.id.as_ref().map(|i| i.name.as_str())
                        }
                        k => match k.as_expression() {
                            Some(Expression::Identifier(i)) => Some(i.name.as_str()),
                            _ => None,
                        },
                    };
                    if let Some(n) = name {
                        self.export_as.entry(n).or_insert("default");
                    }
                }
                // `export = X` (TS) is CommonJS's `module.exports = X`.
                Statement::TSExportAssignment(e) => {
                    if let Expression::Identifier(i) = &e.expression {
                        self.export_as
                            .entry(i.name.as_str())
                            .or_insert(MODULE_ITSELF);
                    }
                }
                Statement::ExpressionStatement(es) => {
                    self.collect_cjs_export(&es.expression, &mut as_self)
                }
                _ => {}
            }
        }
        for n in as_self {
            self.export_as.remove(n);
        }
    }

    /// CommonJS exports: `module.exports = { a, b: c }`, `exports.b = c`,
    /// `module.exports.b = c`, and `module.exports = X`, which makes `X` the
    /// module itself (`require('./x')` is `X`).
    fn collect_cjs_export(&mut self, e: &Expression<'a>, as_self: &mut HashSet<&'a str>) {
        let Expression::AssignmentExpression(a) = e else {
            return;
        };
        let Some(m) = a.left.as_member_expression() else {
            return;
        };
        let Some(prop) = m.static_property_name() else {
            return;
        };
        let obj = m.object();
        let is_module_exports = prop == "exports" && obj.is_specific_id("module");
        if is_module_exports {
            if let Expression::Identifier(v) = &a.right {
                self.export_as
                    .entry(v.name.as_str())
                    .or_insert(MODULE_ITSELF);
                return;
            }
            let Expression::ObjectExpression(o) = &a.right else {
                return;
            };
            for p in &o.properties {
                let ObjectPropertyKind::ObjectProperty(p) = p else {
                    continue;
                };
                let (Some(key), Expression::Identifier(v)) = (static_key(&p.key), &p.value) else {
                    continue;
                };
                if p.computed {
                    continue;
                }
                if key == v.name.as_str() {
                    as_self.insert(v.name.as_str());
                } else {
                    self.export_as.entry(v.name.as_str()).or_insert(key);
                }
            }
            return;
        }
        let on_exports =
            obj.is_specific_id("exports") || obj.is_specific_member_access("module", "exports");
        if on_exports && let Expression::Identifier(v) = &a.right {
            if v.name.as_str() == prop {
                as_self.insert(v.name.as_str());
            } else {
                self.export_as.entry(v.name.as_str()).or_insert(prop);
            }
        }
    }
}

/// The `export_as` entry of a definition that is the module's whole export
/// (`module.exports = X`): its qualified name is the module's.
pub(crate) const MODULE_ITSELF: &str = "";

/// The name a non-computed property key spells (`a`, `'a'`, `1`).
pub(crate) fn static_key<'a>(k: &PropertyKey<'a>) -> Option<&'a str> {
    match k {
        PropertyKey::StaticIdentifier(i) => Some(i.name.as_str()),
        PropertyKey::StringLiteral(s) => Some(s.value.as_str()),
        _ => None,
    }
}

/// The value of a string literal or a template literal without
/// substitutions.
pub(crate) fn string_value<'a>(e: &Expression<'a>) -> Option<&'a str> {
    match e {
        Expression::StringLiteral(s) => Some(s.value.as_str()),
        Expression::TemplateLiteral(t) if t.expressions.is_empty() => t
            .quasis
            .first()
            .and_then(|q| q.value.cooked.as_ref().map(|c| c.as_str())),
        _ => None,
    }
}

fn declaration_name<'a>(d: &Declaration<'a>) -> Option<&'a str> {
    match d {
        Declaration::FunctionDeclaration(f) => f.id.as_ref().map(|i| i.name.as_str()),
        Declaration::ClassDeclaration(c) => c.id.as_ref().map(|i| i.name.as_str()),
        Declaration::TSInterfaceDeclaration(i) => Some(i.id.name.as_str()),
        Declaration::TSTypeAliasDeclaration(t) => Some(t.id.name.as_str()),
        Declaration::TSEnumDeclaration(e) => Some(e.id.name.as_str()),
        _ => None,
    }
}
