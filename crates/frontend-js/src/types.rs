//! TypeScript annotations → [`TypeRef`]: the text as written, and the
//! qualified name of the interesting outer type (`Mutex | null` →
//! `async-mutex.Mutex`, `Promise<User>` → `Promise`, `Job[]` → `Array`).

use oxc_ast::ast::{TSType, TSTypeName, TSTypeOperatorOperator, TSTypeReference};
use oxc_span::GetSpan;
use unsnarl_model::TypeRef;
use unsnarl_model::builder::MAX_NESTING;

use crate::lower::Lowerer;

impl<'a> Lowerer<'a> {
    pub fn type_ref(&self, ty: &TSType<'a>) -> TypeRef {
        TypeRef {
            text: self.slice(ty.span()).into(),
            resolved: self.resolve_type(ty, 0).map(Into::into),
        }
    }

    fn resolve_type(&self, ty: &TSType<'a>, depth: u32) -> Option<String> {
        if depth >= MAX_NESTING {
            return None;
        }
        match ty {
            TSType::TSTypeReference(r) => self.resolve_type_ref(r, depth),
            // `T | null | undefined` is a `T` that may be missing; a real
            // union of several types has no single outer type.
            TSType::TSUnionType(u) => {
                let mut found = None;
                for t in &u.types {
                    if matches!(t, TSType::TSNullKeyword(_) | TSType::TSUndefinedKeyword(_)) {
                        continue;
                    }
                    if found.is_some() {
                        return None;
                    }
                    found = Some(t);
                }
                self.resolve_type(found?, depth + 1)
            }
            TSType::TSParenthesizedType(p) => self.resolve_type(&p.type_annotation, depth + 1),
            TSType::TSTypeOperatorType(o) if o.operator == TSTypeOperatorOperator::Readonly => {
                self.resolve_type(&o.type_annotation, depth + 1)
            }
            TSType::TSArrayType(_) => Some("Array".to_string()),
            TSType::JSDocNullableType(t) => self.resolve_type(&t.type_annotation, depth + 1),
            TSType::JSDocNonNullableType(t) => self.resolve_type(&t.type_annotation, depth + 1),
            _ => None,
        }
    }

    fn resolve_type_ref(&self, r: &TSTypeReference<'a>, depth: u32) -> Option<String> {
        if let TSTypeName::IdentifierReference(id) = &r.type_name {
            let name = id.name.as_str();
            if !self.is_declared(name) {
                match name {
                    // A thenable is awaited like a promise.
                    "PromiseLike" => return Some("Promise".to_string()),
                    // Utility wrappers that keep the wrapped type's identity.
                    "Readonly" | "Required" | "Partial" | "NonNullable" => {
                        let inner = r.type_arguments.as_ref()?.params.first()?;
                        return self.resolve_type(inner, depth + 1);
                    }
                    _ => {}
                }
            }
        }
        self.type_name_target(&r.type_name, depth + 1)
    }
}
