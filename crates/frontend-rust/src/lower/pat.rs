//! Patterns (in `let`, `if let`, `match`, `for`, parameters): lowered to
//! expressions — a binding is a `Name`, a tuple a `Collection(Tuple)`, a
//! path (`None`, `State::Idle`) a resolved `Name`/`Path`, and enum/struct
//! patterns `Other([path, sub-patterns...])`.

use super::{Lowerer, green, node_text};
use ra_ap_syntax::ast::{self, AstNode, HasName};
use ra_ap_syntax::{SyntaxKind, SyntaxNode};
use unsnarl_model::{CollKind, ExprId, ExprKind, Param, UnOp};

impl Lowerer {
    /// Lowers a pattern; with `bind`, the names it binds become locals of the
    /// innermost scope.
    pub(super) fn lower_pat(&mut self, p: &ast::Pat, bind: bool) -> ExprId {
        if !self.enter() {
            return self.opaque(p.syntax());
        }
        let id = self.lower_pat_inner(p, bind);
        self.leave();
        id
    }

    fn lower_pat_inner(&mut self, p: &ast::Pat, bind: bool) -> ExprId {
        let span = self.span(p.syntax());
        let kind = match p {
            ast::Pat::IdentPat(ip) => {
                let node = ip.syntax();
                let name = green::name_of(node).unwrap_or_default();
                let sub = ip.pat();
                let plain = sub.is_none()
                    && !green::has_token(node, SyntaxKind::MUT_KW)
                    && !green::has_token(node, SyntaxKind::REF_KW);
                // An identifier pattern naming a constant, unit struct or
                // unit variant in scope (`None`, `MAX`) matches it instead of
                // binding. Only capitalized names qualify: functions and
                // modules cannot be patterns.
                let resolved = if plain && name.starts_with(|c: char| c.is_uppercase()) {
                    self.scopes.lookup_value(&name)
                } else {
                    None
                };
                if resolved.is_none() && bind {
                    // `x @ Some(y)` binds `x` and `y`; the sub-pattern itself
                    // is not kept (the binding is what matters).
                    if let Some(sub) = &sub {
                        bind_names(self, sub);
                    }
                    self.scopes.bind_local(&name);
                }
                ExprKind::Name {
                    id: name.as_str().into(),
                    resolved: resolved.map(Into::into),
                }
            }
            ast::Pat::WildcardPat(_) => ExprKind::Name {
                id: "_".into(),
                resolved: None,
            },
            ast::Pat::TuplePat(t) => {
                let fields: Vec<ast::Pat> = t.fields().collect();
                ExprKind::Collection {
                    kind: CollKind::Tuple,
                    elems: fields.iter().map(|f| self.lower_pat(f, bind)).collect(),
                    keys: Vec::new(),
                    ty: None,
                }
            }
            ast::Pat::SlicePat(s) => {
                let pats: Vec<ast::Pat> = s.pats().collect();
                ExprKind::Collection {
                    kind: CollKind::List,
                    elems: pats.iter().map(|f| self.lower_pat(f, bind)).collect(),
                    keys: Vec::new(),
                    ty: None,
                }
            }
            ast::Pat::ParenPat(pp) => match pp.pat() {
                Some(inner) => return self.lower_pat(&inner, bind),
                None => ExprKind::Other(Vec::new()),
            },
            ast::Pat::RefPat(r) => match r.pat() {
                Some(inner) => ExprKind::Unary {
                    op: UnOp::Ref,
                    operand: self.lower_pat(&inner, bind),
                },
                None => ExprKind::Other(Vec::new()),
            },
            ast::Pat::BoxPat(b) => ExprKind::Other(
                b.pat()
                    .map(|i| self.lower_pat(&i, bind))
                    .into_iter()
                    .collect(),
            ),
            ast::Pat::PathPat(pp) => match pp.path() {
                Some(path) => return self.lower_path_node(&path, p.syntax()),
                None => ExprKind::Other(Vec::new()),
            },
            ast::Pat::TupleStructPat(ts) => {
                let mut kids = Vec::new();
                if let Some(path) = ts.path() {
                    kids.push(self.lower_path_node(&path, path.syntax()));
                }
                let fields: Vec<ast::Pat> = ts.fields().collect();
                kids.extend(fields.iter().map(|f| self.lower_pat(f, bind)));
                ExprKind::Other(kids)
            }
            ast::Pat::RecordPat(rp) => {
                let mut kids = Vec::new();
                if let Some(path) = rp.path() {
                    kids.push(self.lower_path_node(&path, path.syntax()));
                }
                if let Some(list) = rp.record_pat_field_list() {
                    let fields: Vec<ast::Pat> = list.fields().filter_map(|f| f.pat()).collect();
                    kids.extend(fields.iter().map(|f| self.lower_pat(f, bind)));
                }
                ExprKind::Other(kids)
            }
            ast::Pat::LiteralPat(lp) => {
                let lit = lp
                    .literal()
                    .map(|l| super::expr::literal(&l))
                    .unwrap_or(unsnarl_model::Lit::Other);
                if lp.minus_token().is_some() {
                    let inner = self.m.add_expr(ExprKind::Literal(lit), span);
                    ExprKind::Unary {
                        op: UnOp::Neg,
                        operand: inner,
                    }
                } else {
                    ExprKind::Literal(lit)
                }
            }
            ast::Pat::OrPat(op) => {
                let pats: Vec<ast::Pat> = op.pats().collect();
                ExprKind::Other(pats.iter().map(|f| self.lower_pat(f, bind)).collect())
            }
            ast::Pat::RangePat(_) => {
                let pats: Vec<ast::Pat> =
                    p.syntax().children().filter_map(ast::Pat::cast).collect();
                ExprKind::Other(pats.iter().map(|f| self.lower_pat(f, bind)).collect())
            }
            ast::Pat::RestPat(_)
            | ast::Pat::MacroPat(_)
            | ast::Pat::ConstBlockPat(_)
            | ast::Pat::DerefPat(_)
            | ast::Pat::NotNull(_) => ExprKind::Other(Vec::new()),
        };
        self.m.add_expr(kind, span)
    }

    /// A path in a pattern or a type position, lowered like a path
    /// expression (a `Name` for one segment, else a `Path`).
    fn lower_path_node(&mut self, path: &ast::Path, node: &SyntaxNode) -> ExprId {
        let span = self.span(node);
        let rp = self.resolve_path(path, true);
        let kind = if rp.single {
            ExprKind::Name {
                id: rp.last.as_str().into(),
                resolved: rp.resolved.map(Into::into),
            }
        } else {
            ExprKind::Path {
                text: rp.text.into(),
                resolved: rp.resolved.map(Into::into),
            }
        };
        self.m.add_expr(kind, span)
    }

    /// The patterns of a `match` arm: an or-pattern is several patterns; a
    /// lone `_` is the default case (no patterns).
    pub(super) fn case_patterns(&mut self, p: Option<ast::Pat>) -> Vec<ExprId> {
        match p {
            None | Some(ast::Pat::WildcardPat(_)) => Vec::new(),
            Some(ast::Pat::OrPat(op)) => {
                let pats: Vec<ast::Pat> = op.pats().collect();
                pats.iter().map(|x| self.lower_pat(x, true)).collect()
            }
            Some(p) => vec![self.lower_pat(&p, true)],
        }
    }

    /// Function and closure parameters (without `self`, which is the
    /// function's receiver); their names become locals.
    pub(super) fn lower_params(&mut self, pl: &ast::ParamList) -> Vec<Param> {
        let mut out = Vec::new();
        if pl.self_param().is_some() {
            self.scopes.bind_local("self");
        }
        for p in pl.params() {
            let name = match p.pat() {
                Some(ast::Pat::IdentPat(ip)) => ip
                    .name()
                    .map(|n| node_text(n.syntax()).to_string())
                    .unwrap_or_default(),
                Some(pat) => super::types::type_text(pat.syntax()),
                None => String::new(),
            };
            if let Some(pat) = p.pat() {
                bind_names(self, &pat);
            }
            let ty = p.ty().map(|t| self.type_ref(&t));
            out.push(Param {
                name: name.into(),
                ty,
                default: None,
                span: self.span(p.syntax()),
            });
        }
        out
    }
}

/// Whether a pattern binds any name mutably (`let mut x`, `let (mut a, b)`).
pub(super) fn pat_is_mut(p: &ast::Pat) -> bool {
    p.syntax()
        .descendants()
        .filter_map(ast::IdentPat::cast)
        .any(|ip| ip.mut_token().is_some())
}

/// Binds the names of a parameter pattern without lowering it.
fn bind_names(l: &mut Lowerer, p: &ast::Pat) {
    for ip in p.syntax().descendants().filter_map(ast::IdentPat::cast) {
        if let Some(n) = ip.name() {
            l.scopes.bind_local(&node_text(n.syntax()));
        }
    }
}
