//! Items: functions, impls, traits, structs, modules, `use`, consts and
//! statics.

use super::green::{has_child, has_token};
use super::stmt::Tail;
use super::{Lowerer, node_text};
use crate::resolve::normalize_crate;
use ra_ap_syntax::ast::{self, AstNode, HasAttrs, HasModuleItem, HasName};
use ra_ap_syntax::{SmolStr, SyntaxKind};
use unsnarl_model::{
    AssignOp, Block, ExprKind, Field, FnKind, FuncId, Function, Import, StmtKind, TypeDecl,
};

/// How deep `use a::{b::{c, ..}}` trees are followed.
const MAX_USE_DEPTH: u32 = 64;

impl Lowerer {
    /// Declares the items of a module or block in the innermost scope, before
    /// any of them is lowered (items are visible in their whole scope).
    pub(super) fn declare_items(&mut self, items: &[ast::Item]) {
        for item in items {
            let name = match item {
                ast::Item::Fn(x) => x.name(),
                ast::Item::Struct(x) => x.name(),
                ast::Item::Enum(x) => x.name(),
                ast::Item::Union(x) => x.name(),
                ast::Item::Trait(x) => x.name(),
                ast::Item::TypeAlias(x) => x.name(),
                ast::Item::Const(x) => x.name(),
                ast::Item::Static(x) => x.name(),
                ast::Item::Module(x) => x.name(),
                ast::Item::MacroRules(x) => {
                    if let Some(n) = x.name() {
                        let n = node_text(n.syntax());
                        let q = self.qualify(&n);
                        self.scopes.bind_macro(&n, q);
                    }
                    None
                }
                ast::Item::ExternCrate(x) => {
                    self.declare_extern_crate(x);
                    None
                }
                _ => None,
            };
            let Some(name) = name else { continue };
            let name = node_text(name.syntax());
            if name == "_" {
                continue;
            }
            let q = self.qualify(&name);
            if matches!(
                item,
                ast::Item::Struct(_)
                    | ast::Item::Enum(_)
                    | ast::Item::Union(_)
                    | ast::Item::Trait(_)
            ) {
                self.declared_types.insert(q.clone());
            }
            self.scopes.bind_item(&name, q);
        }
        for item in items {
            if let ast::Item::Use(u) = item
                && let Some(tree) = u.use_tree()
            {
                self.use_tree(&tree, &[], false, 0);
            }
        }
        // Aliases last: they may name imported types.
        for item in items {
            if let ast::Item::TypeAlias(ta) = item
                && let (Some(n), Some(ty)) = (ta.name(), ta.ty())
            {
                let q = self.qualify(&node_text(n.syntax()));
                let r = self.type_ref(&ty).resolved;
                self.aliases.insert(q, r.map(Into::into));
            }
        }
    }

    fn declare_extern_crate(&mut self, x: &ast::ExternCrate) {
        let Some(nr) = x.name_ref() else { return };
        let krate = node_text(nr.syntax()).to_string();
        let local = match x.rename() {
            Some(r) if r.underscore_token().is_some() => "_".to_string(),
            Some(r) => r
                .name()
                .map(|n| node_text(n.syntax()).to_string())
                .unwrap_or(krate.clone()),
            None => krate.clone(),
        };
        let target = normalize_crate(krate.clone());
        if x.attrs()
            .any(|a| a.simple_name().as_deref() == Some("macro_use"))
        {
            self.macro_use.push(target.clone());
        }
        let span = self.span(x.syntax());
        self.m.imports.push(Import {
            local: local.clone().into(),
            target: target.clone().into(),
            span,
        });
        if local != "_" {
            self.scopes.bind_item(&local, target);
        }
    }

    /// Expands one `use` tree (recursively through `{..}` lists) into
    /// import bindings.
    fn use_tree(&mut self, tree: &ast::UseTree, prefix: &[SmolStr], global: bool, depth: u32) {
        if depth > MAX_USE_DEPTH {
            return;
        }
        let mut segs = prefix.to_vec();
        let mut global = global;
        if let Some(path) = tree.path() {
            let mut own = Vec::new();
            let mut cur = Some(path);
            while let Some(p) = cur {
                let Some(seg) = p.segment() else { return };
                let Some(nr) = seg.name_ref() else { return };
                own.push(node_text(nr.syntax()));
                let q = p.qualifier();
                if q.is_none() && seg.coloncolon_token().is_some() && segs.is_empty() {
                    global = true;
                }
                cur = q;
            }
            own.reverse();
            segs.extend(own);
        } else if segs.is_empty() && tree.coloncolon_token().is_some() {
            global = true;
        }
        if let Some(list) = tree.use_tree_list() {
            for t in list.use_trees() {
                self.use_tree(&t, &segs, global, depth + 1);
            }
            return;
        }
        let span = self.span(tree.syntax());
        if tree.star_token().is_some() {
            if let Some(target) = self.qualify_use(&segs, global) {
                self.m.imports.push(Import {
                    local: "*".into(),
                    target: target.clone().into(),
                    span,
                });
                self.scopes.add_glob(target);
            }
            return;
        }
        // `use a::b::{self}` imports `b`.
        if segs.last().is_some_and(|s| s == "self") {
            segs.pop();
        }
        let Some(last) = segs.last().cloned() else {
            return;
        };
        let local = match tree.rename() {
            Some(r) if r.underscore_token().is_some() => SmolStr::new_static("_"),
            Some(r) => r.name().map(|n| node_text(n.syntax())).unwrap_or(last),
            None => last,
        };
        let Some(target) = self.qualify_use(&segs, global) else {
            return;
        };
        self.m.imports.push(Import {
            local: local.as_str().into(),
            target: target.clone().into(),
            span,
        });
        if local != "_" {
            self.scopes.bind_item(&local, target);
        }
    }

    /// The qualified name of a `use` path: like an expression path, except
    /// that an unknown first segment is always a crate name.
    fn qualify_use(&mut self, segs: &[SmolStr], global: bool) -> Option<String> {
        let (first, rest) = segs.split_first()?;
        let mut out = if global {
            first.to_string()
        } else {
            match first.as_str() {
                "crate" => "crate".to_string(),
                "self" => self.ctx.module.clone(),
                "super" => crate::resolve::parent_module(&self.ctx.module).to_string(),
                "Self" => self.ctx.self_ty.clone()?,
                name => self
                    .scopes
                    .lookup_type(name)
                    .unwrap_or_else(|| name.to_string()),
            }
        };
        let mut rest = rest;
        // `super::super::x`
        if first == "super" && !global {
            while let Some((s, r)) = rest.split_first() {
                if s != "super" {
                    break;
                }
                out = crate::resolve::parent_module(&out).to_string();
                rest = r;
            }
        }
        for r in rest {
            out.push_str("::");
            out.push_str(r);
        }
        Some(normalize_crate(out))
    }

    pub(super) fn lower_item(&mut self, item: &ast::Item, out: &mut Block) {
        if !self.enter() {
            return;
        }
        let span = self.item_span(item.syntax());
        match item {
            ast::Item::Fn(f) => {
                if let Some(fid) = self.lower_fn(f, None) {
                    out.push(self.m.add_stmt(StmtKind::FuncDef(fid), span));
                }
            }
            ast::Item::Struct(s) => {
                let fields = s
                    .field_list()
                    .map(|fl| self.fields(&fl))
                    .unwrap_or_default();
                self.add_type_decl(s.name(), fields, span, out);
            }
            ast::Item::Union(u) => {
                let fields = u
                    .record_field_list()
                    .map(|fl| self.fields(&ast::FieldList::RecordFieldList(fl)))
                    .unwrap_or_default();
                self.add_type_decl(u.name(), fields, span, out);
            }
            ast::Item::Enum(e) => self.add_type_decl(e.name(), Vec::new(), span, out),
            ast::Item::Trait(t) => {
                let q = t.name().map(|n| self.qualify(&node_text(n.syntax())));
                self.add_type_decl(t.name(), Vec::new(), span, out);
                if let (Some(q), Some(list)) = (q, t.assoc_item_list()) {
                    let saved = self.ctx.in_test;
                    self.ctx.in_test |= super::attrs::has_cfg_test(t.syntax());
                    self.lower_assoc_items(&list, &q, out);
                    self.ctx.in_test = saved;
                }
            }
            ast::Item::Impl(i) => self.lower_impl(i, out),
            ast::Item::Module(m) => self.lower_inline_module(m, out),
            ast::Item::Const(c) => {
                let value = c.body();
                let ty = c.ty();
                self.lower_global(c.name(), ty, value, false, span, out);
            }
            ast::Item::Static(s) => {
                let value = s.body();
                let ty = s.ty();
                self.lower_global(s.name(), ty, value, s.mut_token().is_some(), span, out);
            }
            ast::Item::MacroCall(mc) => self.lower_item_macro(mc, out),
            ast::Item::Use(_)
            | ast::Item::ExternCrate(_)
            | ast::Item::TypeAlias(_)
            | ast::Item::MacroRules(_)
            | ast::Item::MacroDef(_)
            | ast::Item::ExternBlock(_)
            | ast::Item::AsmExpr(_) => {}
        }
        self.leave();
    }

    fn fields(&mut self, fl: &ast::FieldList) -> Vec<Field> {
        match fl {
            ast::FieldList::RecordFieldList(r) => r
                .fields()
                .filter_map(|f| {
                    let name = node_text(f.name()?.syntax()).to_string();
                    let ty = self.type_ref(&f.ty()?);
                    Some(Field {
                        name: name.into(),
                        ty,
                        span: self.span(f.syntax()),
                    })
                })
                .collect(),
            ast::FieldList::TupleFieldList(t) => t
                .fields()
                .enumerate()
                .filter_map(|(i, f)| {
                    let ty = self.type_ref(&f.ty()?);
                    Some(Field {
                        name: i.to_string().into(),
                        ty,
                        span: self.span(f.syntax()),
                    })
                })
                .collect(),
        }
    }

    fn add_type_decl(
        &mut self,
        name: Option<ast::Name>,
        fields: Vec<Field>,
        span: unsnarl_model::Span,
        out: &mut Block,
    ) {
        let Some(name) = name else { return };
        let name = node_text(name.syntax()).to_string();
        let qualname = self.qualify(&name);
        self.declared_types.insert(qualname.clone());
        let tid = self.m.add_type(TypeDecl {
            name: name.into(),
            qualname: qualname.into(),
            fields,
            bases: Vec::new(),
            span,
        });
        out.push(self.m.add_stmt(StmtKind::ClassDef(tid), span));
    }

    /// `const`/`static` items: `Assign Declare` of the (resolved) name.
    fn lower_global(
        &mut self,
        name: Option<ast::Name>,
        ty: Option<ast::Type>,
        value: Option<ast::Expr>,
        mutable: bool,
        span: unsnarl_model::Span,
        out: &mut Block,
    ) {
        let (id, resolved, nspan) = match &name {
            Some(n) => {
                let id = node_text(n.syntax()).to_string();
                let resolved = (id != "_").then(|| self.qualify(&id));
                (id, resolved, self.span(n.syntax()))
            }
            None => ("_".to_string(), None, span),
        };
        let value = value.map(|v| self.lower_expr(&v));
        let target = self.m.add_expr(
            ExprKind::Name {
                id: id.into(),
                resolved: resolved.map(Into::into),
            },
            nspan,
        );
        if let Some(ty) = ty {
            let t = self.type_ref(&ty);
            self.m.declared_types.push((target, t));
        }
        out.push(self.m.add_stmt(
            StmtKind::Assign {
                targets: vec![target],
                value,
                op: AssignOp::Declare { mutable },
            },
            span,
        ));
    }

    fn lower_inline_module(&mut self, m: &ast::Module, out: &mut Block) {
        let (Some(name), Some(list)) = (m.name(), m.item_list()) else {
            // `mod foo;` only declares a name (done in `declare_items`).
            return;
        };
        let path = self.qualify(&node_text(name.syntax()));
        let saved = self.ctx.clone();
        self.ctx.module = path.clone();
        self.ctx.item_prefix = path.clone();
        self.ctx.self_ty = None;
        self.ctx.in_test = saved.in_test
            || super::attrs::has_cfg_test(m.syntax())
            || super::attrs::has_cfg_test(list.syntax());
        self.scopes.push_module(&path);
        let items: Vec<ast::Item> = list.items().collect();
        // A module's items are flattened into the enclosing body: a module
        // is a namespace, not a block that runs.
        self.lower_items(&items, out);
        self.scopes.pop();
        self.ctx = saved;
    }

    fn lower_impl(&mut self, i: &ast::Impl, out: &mut Block) {
        let span = self.item_span(i.syntax());
        let Some(self_ty) = i.self_ty() else { return };
        let class = self.resolve_type_name(&self_ty).unwrap_or_else(|| {
            let text = super::types::type_text(self_ty.syntax());
            let bare = text.split('<').next().unwrap_or(&text).trim().to_string();
            self.qualify(&bare)
        });
        if !self.declared_types.contains(&class) {
            // An impl of a type declared elsewhere: the impl is where this
            // file "defines" the class, so it gets the TypeDecl.
            let name = class.rsplit("::").next().unwrap_or(&class).to_string();
            self.declared_types.insert(class.clone());
            let tid = self.m.add_type(TypeDecl {
                name: name.into(),
                qualname: class.clone().into(),
                fields: Vec::new(),
                bases: Vec::new(),
                span,
            });
            out.push(self.m.add_stmt(StmtKind::ClassDef(tid), span));
        }
        if let Some(list) = i.assoc_item_list() {
            // `#[cfg(test)] impl Foo { .. }`: test helpers.
            let saved = self.ctx.in_test;
            self.ctx.in_test |= super::attrs::has_cfg_test(i.syntax());
            self.lower_assoc_items(&list, &class, out);
            self.ctx.in_test = saved;
        }
    }

    /// Methods and associated consts of an impl or trait.
    fn lower_assoc_items(&mut self, list: &ast::AssocItemList, class: &str, out: &mut Block) {
        let saved_self = self.ctx.self_ty.replace(class.to_string());
        for item in list.assoc_items() {
            match item {
                ast::AssocItem::Fn(f) => {
                    // Methods are reached through their class, not through a
                    // `FuncDef` statement.
                    self.lower_fn(&f, Some(class));
                }
                ast::AssocItem::Const(c) => {
                    let span = self.item_span(c.syntax());
                    let value = c.body().map(|v| self.lower_expr(&v));
                    if let Some(n) = c.name() {
                        let id = node_text(n.syntax()).to_string();
                        let resolved = Some(format!("{class}::{id}"));
                        let nspan = self.span(n.syntax());
                        let target = self.m.add_expr(
                            ExprKind::Name {
                                id: id.into(),
                                resolved: resolved.map(Into::into),
                            },
                            nspan,
                        );
                        out.push(self.m.add_stmt(
                            StmtKind::Assign {
                                targets: vec![target],
                                value,
                                op: AssignOp::Declare { mutable: false },
                            },
                            span,
                        ));
                    }
                }
                ast::AssocItem::MacroCall(mc) => self.lower_item_macro(&mc, out),
                ast::AssocItem::TypeAlias(_) => {}
            }
        }
        self.ctx.self_ty = saved_self;
    }

    /// A function with a body (declarations without one, in traits and
    /// `extern` blocks, are skipped: they have no code to analyze). `class`
    /// is the qualified impl/trait type for methods.
    pub(super) fn lower_fn(&mut self, f: &ast::Fn, class: Option<&str>) -> Option<FuncId> {
        let body = f.body()?;
        let node = f.syntax();
        let name_node = f.name();
        let name = name_node
            .as_ref()
            .map(|n| node_text(n.syntax()))
            .unwrap_or_default();
        let qualname = match class {
            Some(c) => format!("{c}::{name}"),
            None => self.qualify(&name),
        };
        let mut func = Function::new(
            if class.is_some() {
                FnKind::Method
            } else {
                FnKind::Function
            },
            self.item_span(f.syntax()),
        );
        func.name = name.as_str().into();
        func.qualname = qualname.clone().into();
        func.is_async = has_token(node, SyntaxKind::ASYNC_KW);
        func.is_generator = has_token(node, SyntaxKind::GEN_KW);
        func.class = class.map(Into::into);
        func.parent = Some(self.ctx.func);
        if let Some(n) = &name_node {
            func.name_span = self.span(n.syntax());
        }
        let attrs = self.lower_attrs(node);
        func.is_test = self.ctx.in_test || attrs.is_test || attrs.cfg_test;
        func.decorators = attrs.decorators;
        func.decorator_calls = attrs.calls;
        let param_list = f.param_list();
        if param_list
            .as_ref()
            .is_some_and(|p| has_child(p.syntax(), SyntaxKind::SELF_PARAM))
        {
            func.receiver = Some("self".into());
        }
        let is_test = func.is_test;
        let fid = self.m.add_function(func);

        let saved = self.ctx.clone();
        self.ctx.func = fid;
        self.ctx.item_prefix = qualname;
        self.ctx.in_test = is_test;
        self.scopes.push_block();
        let params = match &param_list {
            Some(pl) => self.lower_params(pl),
            None => Vec::new(),
        };
        let returns = f.ret_type().and_then(|r| r.ty()).map(|t| self.type_ref(&t));
        let block = self.lower_block_expr(&body, Tail::Return);
        self.scopes.pop();
        self.ctx = saved;
        let func = self.m.func_mut(fid);
        func.params = params;
        func.returns = returns;
        func.body = block;
        Some(fid)
    }
}
