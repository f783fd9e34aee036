//! Attributes: decorators of functions (`#[tokio::main]`, `#[test]`,
//! `#[async_trait]`) and `#[cfg(test)]` detection.

use super::Lowerer;
use ra_ap_syntax::ast::{self, AstNode};
use ra_ap_syntax::{SyntaxKind, SyntaxNode};
use unsnarl_model::{Call, ExprId, ExprKind};

/// What a function's outer attributes say.
#[derive(Default)]
pub(super) struct Attrs {
    /// Resolved attribute paths (`tokio::main`, `test`, `async_trait::async_trait`).
    pub decorators: Vec<unsnarl_model::Str>,
    /// Attributes with arguments as calls (`tokio::main(flavor = "current_thread")`
    /// → a call with keyword argument `flavor`).
    pub calls: Vec<ExprId>,
    /// A test attribute (`#[test]`, `#[tokio::test]`, `#[rstest]`...).
    pub is_test: bool,
    /// `#[cfg(test)]`.
    pub cfg_test: bool,
}

/// Last segments of attribute paths that mark a test function.
const TEST_ATTRS: &[&str] = &[
    "test",
    "rstest",
    "test_case",
    "bench",
    "wasm_bindgen_test",
    "quickcheck",
    "proptest",
];

/// Whether `node` carries `#[cfg(test)]` (or `#![cfg(test)]` for files and
/// item lists) among its direct attributes.
pub(crate) fn has_cfg_test(node: &SyntaxNode) -> bool {
    if !super::green::has_child(node, SyntaxKind::ATTR) {
        return false;
    }
    node.children()
        .filter_map(ast::Attr::cast)
        .flat_map(|a| a.skip_cfg_attrs())
        .any(|m| is_cfg_test(&m))
}

fn is_cfg_test(meta: &ast::Meta) -> bool {
    match meta {
        ast::Meta::CfgMeta(c) => c.cfg_predicate().is_some_and(|p| pred_has_test(&p, 0)),
        _ => false,
    }
}

/// `test`, `all(test, ..)`, `any(test, ..)`; not under `not(..)`.
fn pred_has_test(p: &ast::CfgPredicate, depth: u32) -> bool {
    if depth > 16 {
        return false;
    }
    match p {
        ast::CfgPredicate::CfgAtom(a) => {
            a.eq_token().is_none() && a.ident_token().is_some_and(|t| t.text() == "test")
        }
        ast::CfgPredicate::CfgComposite(c) => match c.keyword().as_ref().map(|k| k.text()) {
            Some("all") | Some("any") => c.cfg_predicates().any(|x| pred_has_test(&x, depth + 1)),
            _ => false,
        },
    }
}

impl Lowerer {
    pub(super) fn lower_attrs(&mut self, node: &SyntaxNode) -> Attrs {
        let mut out = Attrs::default();
        if !super::green::has_child(node, SyntaxKind::ATTR) {
            return out;
        }
        for attr in node.children().filter_map(ast::Attr::cast) {
            if attr.excl_token().is_some() {
                continue;
            }
            for meta in attr.skip_cfg_attrs() {
                if is_cfg_test(&meta) {
                    out.cfg_test = true;
                }
                let meta = match meta {
                    ast::Meta::UnsafeMeta(u) => match u.meta() {
                        Some(m) => m,
                        None => continue,
                    },
                    m => m,
                };
                if matches!(meta, ast::Meta::CfgMeta(_)) {
                    out.decorators.push("cfg".into());
                    continue;
                }
                let Some(path) = meta.path() else { continue };
                let rp = self.resolve_path(&path, false);
                if rp.text == "doc" {
                    continue;
                }
                if TEST_ATTRS.contains(&rp.last.as_str()) {
                    out.is_test = true;
                }
                let name = rp.resolved.clone().unwrap_or_else(|| rp.text.clone());
                out.decorators.push(name.into());
                if let ast::Meta::TokenTreeMeta(tm) = &meta
                    && let Some(tt) = tm.token_tree()
                {
                    let span = self.span(meta.syntax());
                    let fspan = self.span(path.syntax());
                    let func = self.m.add_expr(
                        ExprKind::Path {
                            text: rp.text.clone().into(),
                            resolved: rp.resolved.clone().map(Into::into),
                        },
                        fspan,
                    );
                    let args = self.reparse_args(&tt, true);
                    let call = Call {
                        func,
                        receiver: None,
                        name: rp.last.as_str().into(),
                        target: rp.resolved.map(Into::into),
                        args,
                        is_new: false,
                        is_macro: false,
                        effects: unsnarl_model::EffectSet::UNKNOWN,
                    };
                    out.calls
                        .push(self.m.add_expr(ExprKind::Call(Box::new(call)), span));
                }
            }
        }
        out
    }
}
