//! Binding patterns and assignment targets. Destructuring lowers to a
//! collection of the bound names (`{ a, b: c }` → `Dict{a: a, b: c}`,
//! `[x, ...rest]` → `List[x, ...rest]`); a default value is kept next to
//! its name as `Other[name, default]` so calls in defaults are not lost.

use oxc_ast::ast::{
    AssignmentTarget, AssignmentTargetMaybeDefault, AssignmentTargetProperty, BindingPattern,
    Expression, ForStatementLeft, SimpleAssignmentTarget,
};
use oxc_span::GetSpan;
use unsnarl_model::{CollKind, ExprId, ExprKind, Str};

use super::{Lowerer, is_function_like, sp};
use crate::collect::static_key;

impl<'a> Lowerer<'a> {
    pub fn lower_binding_pattern(&mut self, pat: &BindingPattern<'a>) -> ExprId {
        let span = sp(pat.span());
        self.guarded(span, |l| match pat {
            BindingPattern::BindingIdentifier(id) => l.name_expr(id.name.as_str(), span),
            BindingPattern::AssignmentPattern(a) => {
                let target = l.lower_binding_pattern(&a.left);
                let default = l.lower_expr(&a.right);
                l.m.add_expr(ExprKind::Other(vec![target, default]), span)
            }
            BindingPattern::ObjectPattern(o) => {
                let mut elems = Vec::with_capacity(o.properties.len() + 1);
                let mut keys = Vec::with_capacity(o.properties.len() + 1);
                for p in &o.properties {
                    let key = if p.computed { None } else { static_key(&p.key) };
                    elems.push(l.lower_binding_pattern(&p.value));
                    keys.push(key.map(Str::from));
                }
                if let Some(r) = &o.rest {
                    let inner = l.lower_binding_pattern(&r.argument);
                    elems.push(l.m.add_expr(ExprKind::Spread(inner), sp(r.span)));
                    keys.push(None);
                }
                l.m.add_expr(dict(elems, keys), span)
            }
            BindingPattern::ArrayPattern(a) => {
                let mut elems = Vec::with_capacity(a.elements.len() + 1);
                for p in a.elements.iter().flatten() {
                    elems.push(l.lower_binding_pattern(p));
                }
                if let Some(r) = &a.rest {
                    let inner = l.lower_binding_pattern(&r.argument);
                    elems.push(l.m.add_expr(ExprKind::Spread(inner), sp(r.span)));
                }
                l.m.add_expr(list(elems), span)
            }
        })
    }

    pub fn lower_assign_target(&mut self, t: &AssignmentTarget<'a>) -> ExprId {
        let span = sp(t.span());
        self.guarded(span, |l| {
            if let Some(simple) = t.as_simple_assignment_target() {
                return l.lower_simple_target(simple);
            }
            match t {
                AssignmentTarget::ArrayAssignmentTarget(a) => {
                    let mut elems = Vec::with_capacity(a.elements.len() + 1);
                    for el in a.elements.iter().flatten() {
                        elems.push(l.lower_maybe_default(el));
                    }
                    if let Some(r) = &a.rest {
                        let inner = l.lower_assign_target(&r.target);
                        elems.push(l.m.add_expr(ExprKind::Spread(inner), sp(r.span)));
                    }
                    l.m.add_expr(list(elems), span)
                }
                AssignmentTarget::ObjectAssignmentTarget(o) => {
                    let mut elems = Vec::with_capacity(o.properties.len() + 1);
                    let mut keys = Vec::with_capacity(o.properties.len() + 1);
                    for p in &o.properties {
                        match p {
                            AssignmentTargetProperty::AssignmentTargetPropertyIdentifier(p) => {
                                let name = p.binding.name.as_str();
                                let mut id = l.name_expr(name, sp(p.binding.span));
                                if let Some(init) = &p.init {
                                    let d = l.lower_expr(init);
                                    id = l.m.add_expr(ExprKind::Other(vec![id, d]), sp(p.span));
                                }
                                elems.push(id);
                                keys.push(Some(Str::from(name)));
                            }
                            AssignmentTargetProperty::AssignmentTargetPropertyProperty(p) => {
                                let key = if p.computed {
                                    None
                                } else {
                                    static_key(&p.name)
                                };
                                elems.push(l.lower_maybe_default(&p.binding));
                                keys.push(key.map(Str::from));
                            }
                        }
                    }
                    if let Some(r) = &o.rest {
                        let inner = l.lower_assign_target(&r.target);
                        elems.push(l.m.add_expr(ExprKind::Spread(inner), sp(r.span)));
                        keys.push(None);
                    }
                    l.m.add_expr(dict(elems, keys), span)
                }
                _ => l.m.opaque(span),
            }
        })
    }

    fn lower_maybe_default(&mut self, t: &AssignmentTargetMaybeDefault<'a>) -> ExprId {
        match t {
            AssignmentTargetMaybeDefault::AssignmentTargetWithDefault(d) => {
                let target = self.lower_assign_target(&d.binding);
                let default = self.lower_expr(&d.init);
                self.m
                    .add_expr(ExprKind::Other(vec![target, default]), sp(d.span))
            }
            other => match other.as_assignment_target() {
                Some(t) => self.lower_assign_target(t),
                None => self.m.opaque(sp(other.span())),
            },
        }
    }

    pub fn lower_simple_target(&mut self, t: &SimpleAssignmentTarget<'a>) -> ExprId {
        let span = sp(t.span());
        match t {
            SimpleAssignmentTarget::AssignmentTargetIdentifier(id) => {
                self.name_expr(id.name.as_str(), span)
            }
            SimpleAssignmentTarget::TSAsExpression(x) => self.cast(&x.expression, span),
            SimpleAssignmentTarget::TSSatisfiesExpression(x) => self.cast(&x.expression, span),
            SimpleAssignmentTarget::TSNonNullExpression(x) => self.cast(&x.expression, span),
            SimpleAssignmentTarget::TSTypeAssertion(x) => self.cast(&x.expression, span),
            other => match other.as_member_expression() {
                Some(m) => self.guarded(span, |l| l.lower_member(m, span)),
                None => self.m.opaque(span),
            },
        }
    }

    fn cast(&mut self, e: &Expression<'a>, span: unsnarl_model::Span) -> ExprId {
        let inner = self.lower_expr(e);
        self.m.add_expr(ExprKind::Cast(inner), span)
    }

    pub fn lower_for_left(&mut self, left: &ForStatementLeft<'a>) -> ExprId {
        match left {
            ForStatementLeft::VariableDeclaration(v) => match v.declarations.first() {
                Some(d) => self.lower_binding_pattern(&d.id),
                None => self.m.opaque(sp(v.span)),
            },
            other => match other.as_assignment_target() {
                Some(t) => self.lower_assign_target(t),
                None => self.m.opaque(sp(other.span())),
            },
        }
    }

    /// The qualified name a function/object value takes from the target it
    /// is assigned to: `exports.run = ...` / `module.exports.run = ...` →
    /// `<module>.run`; `module.exports = ...` → `<module>` (an object's
    /// members are `<module>.<key>`, a function is the module itself, as
    /// `require` sees it); `Foo.prototype.bar = function` →
    /// `<module>.Foo.bar`; a module-level `let handler; handler = () => {}`
    /// → `<module>.handler`.
    pub fn assign_hint(
        &self,
        left: &AssignmentTarget<'a>,
        right: &Expression<'a>,
    ) -> Option<String> {
        let is_object = matches!(right, Expression::ObjectExpression(_));
        if !is_object && !is_function_like(right) {
            return None;
        }
        if let AssignmentTarget::AssignmentTargetIdentifier(id) = left {
            let q = self.lookup(id.name.as_str())?;
            return self.is_own(&q).then_some(q);
        }
        let m = left.as_member_expression()?;
        let prop = m.static_property_name()?;
        let obj = m.object();
        let cjs_module = !self.is_declared("module");
        if cjs_module && prop == "exports" && obj.is_specific_id("module") {
            // `module.exports = { ... }` names the members `<module>.<key>`;
            // `module.exports = function` is the module itself.
            return Some(self.m.module.to_string());
        }
        let on_exports = (obj.is_specific_id("exports") && !self.is_declared("exports"))
            || (cjs_module && obj.is_specific_member_access("module", "exports"));
        if on_exports {
            return Some(format!("{}.{prop}", self.m.module));
        }
        let q = self.member_chain_target(m)?;
        // Only definitions of this module are named here: assigning into an
        // imported object does not define that library's function.
        self.is_own(&q).then(|| q.replace(".prototype.", "."))
    }
}

fn dict(elems: Vec<ExprId>, keys: Vec<Option<Str>>) -> ExprKind {
    ExprKind::Collection {
        kind: CollKind::Dict,
        elems,
        keys,
        ty: None,
    }
}

fn list(elems: Vec<ExprId>) -> ExprKind {
    ExprKind::Collection {
        kind: CollKind::List,
        elems,
        keys: Vec::new(),
        ty: None,
    }
}
