//! Annotations to [`TypeRef`]s: the text as written, and the qualified name
//! of the interesting type inside it, with `Optional`/`Union[..., None]`/
//! `X | None`/`Annotated`/`Final`/`ClassVar` peeled and generic arguments
//! dropped (`Optional[asyncio.Queue[int]]` → `asyncio.Queue`). Builtin types
//! resolve like builtin calls do (`dict` → `builtins.dict`), so a field typed
//! by annotation and one built by `dict()` agree.

use crate::lower::Lowerer;
use ruff_python_ast::{Expr, Operator};
use ruff_text_size::Ranged;
use unsnarl_model::TypeRef;

/// How deep annotations are followed (string annotations re-parsed, nested
/// wrappers); real annotations are shallow.
const MAX_TYPE_DEPTH: u32 = 16;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Wrapper {
    /// The first argument is the type (`Optional[T]`, `Annotated[T, ...]`).
    First,
    /// A union: the type is its one member that is not `None`.
    Union,
}

fn wrapper(name: &str) -> Option<Wrapper> {
    let last = name.rsplit('.').next().unwrap_or(name);
    match last {
        "Optional" | "Annotated" | "Final" | "ClassVar" | "Required" | "NotRequired"
        | "ReadOnly" | "InitVar" => Some(Wrapper::First),
        "Union" => Some(Wrapper::Union),
        _ => None,
    }
}

fn is_none(e: &Expr) -> bool {
    match e {
        Expr::NoneLiteral(_) => true,
        Expr::Name(n) => n.id.as_str() == "None",
        Expr::StringLiteral(s) => s.value.to_str().trim() == "None",
        _ => false,
    }
}

impl Lowerer<'_> {
    pub(crate) fn type_ref(&self, ann: &Expr) -> TypeRef {
        let text = match ann {
            Expr::StringLiteral(s) => s.value.to_str().trim().to_string(),
            _ => self.source(ann.range()).to_string(),
        };
        TypeRef {
            text: text.into(),
            resolved: self.resolve_type(ann, 0).map(Into::into),
        }
    }

    fn resolve_type(&self, e: &Expr, depth: u32) -> Option<String> {
        if depth > MAX_TYPE_DEPTH {
            return None;
        }
        match e {
            Expr::StringLiteral(s) => {
                // A forward reference: parse the string as an expression.
                let parsed = ruff_python_parser::parse_expression(s.value.to_str()).ok()?;
                self.resolve_type(parsed.expr(), depth + 1)
            }
            Expr::Name(_) | Expr::Attribute(_) => self.static_resolve(e),
            Expr::Subscript(s) => {
                let base = self.static_resolve(&s.value);
                // Unimported `Optional` still reads as the wrapper.
                let shape = match &base {
                    Some(b) => wrapper(b),
                    None => Self::dotted(&s.value).as_deref().and_then(wrapper),
                };
                match shape {
                    None => base,
                    Some(Wrapper::First) => {
                        let first = match &*s.slice {
                            Expr::Tuple(t) => t.elts.first()?,
                            e => e,
                        };
                        self.resolve_type(first, depth + 1)
                    }
                    Some(Wrapper::Union) => {
                        let members: &[Expr] = match &*s.slice {
                            Expr::Tuple(t) => &t.elts,
                            e => std::slice::from_ref(e),
                        };
                        self.union_member(members.iter(), depth)
                    }
                }
            }
            Expr::BinOp(b) if b.op == Operator::BitOr => {
                let mut members = Vec::new();
                flatten_union(e, &mut members, 0);
                self.union_member(members.into_iter(), depth)
            }
            _ => None,
        }
    }

    /// The type of a union that is `T | None`: `T`; no single type
    /// otherwise.
    fn union_member<'e>(
        &self,
        members: impl Iterator<Item = &'e Expr>,
        depth: u32,
    ) -> Option<String> {
        let mut found = None;
        for m in members {
            if is_none(m) {
                continue;
            }
            if found.is_some() {
                return None;
            }
            found = Some(m);
        }
        self.resolve_type(found?, depth + 1)
    }
}

fn flatten_union<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>, depth: u32) {
    match e {
        Expr::BinOp(b) if b.op == Operator::BitOr && depth < MAX_TYPE_DEPTH => {
            flatten_union(&b.left, out, depth + 1);
            flatten_union(&b.right, out, depth + 1);
        }
        e => out.push(e),
    }
}
