//! Declared types: their text as written and the qualified name of the
//! interesting type inside (`Arc<Mutex<T>>` → `std::sync::Mutex`).

use super::Lowerer;
use ra_ap_syntax::SyntaxNode;
use ra_ap_syntax::ast::{self, AstNode, HasGenericArgs};
use unsnarl_model::TypeRef;

/// Wrappers peeled to reach the interesting type: smart pointers and
/// `Option`/`Result`-like containers of one value. Matched on the last
/// segment so that `std::sync::Arc`, `Arc` and `alloc::rc::Rc` all peel.
const PEELED: &[&str] = &[
    "Arc",
    "Rc",
    "Box",
    "Option",
    "Result",
    "Pin",
    "Weak",
    "ManuallyDrop",
    // Lazily initialized statics deref to the value they hold.
    "Lazy",
    "LazyLock",
    "LazyCell",
];

/// Deepest type nesting we follow when peeling.
const MAX_TYPE_DEPTH: u32 = 32;

/// A type's text as written, with comments dropped and whitespace runs
/// collapsed to one space (types can span lines).
pub(crate) fn type_text(node: &SyntaxNode) -> String {
    super::green::text_without_trivia(node.green())
}

impl Lowerer {
    pub(super) fn type_ref(&mut self, ty: &ast::Type) -> TypeRef {
        TypeRef {
            text: type_text(ty.syntax()).into(),
            resolved: self.resolve_type_peeled(ty, 0).map(Into::into),
        }
    }

    /// The qualified name of a type path, generic arguments dropped and
    /// nothing peeled (for impl targets and `<T>::f` anchors).
    pub(super) fn resolve_type_name(&mut self, ty: &ast::Type) -> Option<String> {
        let mut ty = ty.clone();
        for _ in 0..MAX_TYPE_DEPTH {
            match ty {
                ast::Type::RefType(r) => ty = r.ty()?,
                ast::Type::ParenType(p) => ty = p.ty()?,
                ast::Type::PathType(p) => {
                    let path = p.path()?;
                    return self.resolve_path(&path, false).resolved;
                }
                _ => return None,
            }
        }
        None
    }

    fn resolve_type_peeled(&mut self, ty: &ast::Type, depth: u32) -> Option<String> {
        if depth > MAX_TYPE_DEPTH {
            return None;
        }
        match ty {
            ast::Type::RefType(r) => self.resolve_type_peeled(&r.ty()?, depth + 1),
            ast::Type::PtrType(p) => self.resolve_type_peeled(&p.ty()?, depth + 1),
            ast::Type::ParenType(p) => self.resolve_type_peeled(&p.ty()?, depth + 1),
            ast::Type::PathType(p) => {
                let path = p.path()?;
                let rp = self.resolve_path(&path, false);
                if PEELED.contains(&rp.last.as_str()) {
                    let first_ty =
                        path.segment()
                            .and_then(|s| s.generic_arg_list())
                            .and_then(|gl| {
                                gl.generic_args().find_map(|a| match a {
                                    ast::GenericArg::TypeArg(t) => t.ty(),
                                    _ => None,
                                })
                            });
                    if let Some(inner) = first_ty {
                        return self.resolve_type_peeled(&inner, depth + 1);
                    }
                }
                let q = rp.resolved?;
                match self.aliases.get(&q) {
                    Some(alias) => alias.clone(),
                    None => Some(q),
                }
            }
            ast::Type::DynTraitType(d) => self.first_bound(d.type_bound_list()),
            ast::Type::ImplTraitType(i) => self.first_bound(i.type_bound_list()),
            _ => None,
        }
    }

    /// `dyn Trait + Send` / `impl Future<Output = T>`: the first trait bound.
    fn first_bound(&mut self, bounds: Option<ast::TypeBoundList>) -> Option<String> {
        let bound = bounds?.bounds().find_map(|b| match b.ty() {
            Some(ast::Type::PathType(p)) => p.path(),
            _ => None,
        })?;
        self.resolve_path(&bound, false).resolved
    }
}
