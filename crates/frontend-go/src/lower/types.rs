//! Types: declared type references (`TypeRef`), their resolution to
//! qualified names, and type declarations (`TypeDecl` with struct fields).

use super::{Lowerer, span};
use crate::kinds::K;
use crate::resolve::{Local, PkgDecl, Resolution};
use tree_sitter::Node;
use unsnarl_model::{Block, Field, StmtKind, TypeDecl, TypeRef};

impl<'s, 't> Lowerer<'s, 't> {
    /// A type as written plus what it resolves to.
    pub(super) fn type_ref(&self, n: Node<'t>) -> TypeRef {
        TypeRef {
            text: self.text(n).into(),
            resolved: self.resolve_type(n).map(Into::into),
        }
    }

    /// The qualified name of the named type under pointers, parentheses
    /// and generic arguments (`*sync.Mutex` → `sync.Mutex`, `*List[T]` →
    /// `<module>.List`). Slices, maps, channels, functions and literal
    /// struct/interface types have no name: `None`. Iterative, so a
    /// pathological `****...T` cannot exhaust the stack.
    pub(super) fn resolve_type(&self, n: Node<'t>) -> Option<String> {
        let mut cur = n;
        loop {
            match self.k(cur) {
                K::PointerType | K::ParenthesizedType => cur = self.first_kid(cur)?,
                K::GenericType => cur = self.field(cur, self.g.f.type_)?,
                K::TypeIdentifier | K::Identifier => return self.resolve_type_name(self.text(cur)),
                K::QualifiedType => {
                    let pkg = self.text(self.field(cur, self.g.f.package)?);
                    let name = self.text(self.field(cur, self.g.f.name)?);
                    return match self.file.resolve(&self.scopes, pkg) {
                        Resolution::Package(path) => Some(format!("{path}.{name}")),
                        _ => None,
                    };
                }
                _ => return None,
            }
        }
    }

    /// An unqualified type name: a local type, a type parameter (no name),
    /// a predeclared type, or a type of this package.
    fn resolve_type_name(&self, name: &str) -> Option<String> {
        match self.file.resolve(&self.scopes, name) {
            Resolution::Local(Local::Type(t)) => Some(self.m.types[t.index()].qualname.to_string()),
            Resolution::Local(_) | Resolution::Package(_) | Resolution::Unknown => None,
            Resolution::Module(_) => Some(self.module_qual(name)),
            Resolution::DotImport(path) => Some(format!("{path}.{name}")),
            Resolution::Builtin => Some(name.to_string()),
        }
    }

    /// `type T struct {...}` / `type T int` / `type A = B` specs of a type
    /// declaration. Each `type_spec` becomes a `TypeDecl` and a `ClassDef`
    /// statement; aliases declare no new type and lower to `Pass`.
    pub(super) fn type_decl(&mut self, decl: Node<'t>, out: &mut Block) {
        for spec in self.kids(decl) {
            match self.k(spec) {
                K::TypeSpec => {
                    let id = self.type_spec(spec);
                    out.push(self.m.add_stmt(StmtKind::ClassDef(id), span(spec)));
                }
                K::TypeAlias => {
                    if let Some(name) = self.field(spec, self.g.f.name) {
                        let name = self.text(name);
                        self.scopes.declare(name);
                    }
                    out.push(self.m.add_stmt(StmtKind::Pass, span(spec)));
                }
                _ => {}
            }
        }
    }

    fn type_spec(&mut self, spec: Node<'t>) -> unsnarl_model::TypeId {
        let name = self.field(spec, self.g.f.name).map_or("", |n| self.text(n));
        let qualname = format!("{}.{}", self.qual, name);
        let id = self.m.add_type(TypeDecl {
            name: name.into(),
            qualname: qualname.into(),
            fields: Vec::new(),
            bases: Vec::new(),
            span: span(spec),
        });
        // Declared before its fields are read: `type node struct { next *node }`.
        if self.scopes.in_function() {
            self.scopes.declare_as(name, Local::Type(id));
        } else if let Some(d) = self.file.decls.get_mut(name) {
            *d = PkgDecl::Type(Some(id));
        }
        // Type parameters are in scope for the fields only.
        self.scopes.push();
        if let Some(tps) = self.field(spec, self.g.f.type_parameters) {
            self.type_params(tps);
        }
        let fields = match self.field(spec, self.g.f.type_) {
            Some(t) if self.k(t) == K::StructType => self.struct_fields(t),
            _ => Vec::new(),
        };
        self.scopes.pop();
        self.m.types[id.index()].fields = fields;
        id
    }

    /// The fields of a struct type. `a, b int` gives two fields; an
    /// embedded `sync.Mutex` / `*Foo` / `List[T]` is a field named after
    /// the type (`Mutex`, `Foo`, `List`).
    fn struct_fields(&self, st: Node<'t>) -> Vec<Field> {
        let mut out = Vec::new();
        let Some(list) = self
            .kids(st)
            .into_iter()
            .find(|c| self.k(*c) == K::FieldDeclarationList)
        else {
            return out;
        };
        for fd in self.kids(list) {
            if self.k(fd) != K::FieldDeclaration {
                continue;
            }
            let Some(ty) = self.field(fd, self.g.f.type_) else {
                continue;
            };
            let names = self.fields(fd, self.g.f.name);
            if names.is_empty() {
                // Embedded: the type text includes a leading `*`.
                let start = fd.start_byte();
                let text = self.src.get(start..ty.end_byte()).unwrap_or("");
                out.push(Field {
                    name: self.embedded_name(ty).into(),
                    ty: TypeRef {
                        text: text.into(),
                        resolved: self.resolve_type(ty).map(Into::into),
                    },
                    span: span(fd),
                });
                continue;
            }
            let tr = self.type_ref(ty);
            for name in names {
                out.push(Field {
                    name: self.text(name).into(),
                    ty: tr.clone(),
                    span: span(name),
                });
            }
        }
        out
    }

    /// The implicit field name of an embedded type: its unqualified name.
    fn embedded_name(&self, ty: Node<'t>) -> &'s str {
        let mut cur = ty;
        loop {
            match self.k(cur) {
                K::GenericType => match self.field(cur, self.g.f.type_) {
                    Some(t) => cur = t,
                    None => return self.text(cur),
                },
                K::QualifiedType => {
                    return self
                        .field(cur, self.g.f.name)
                        .map_or_else(|| self.text(cur), |n| self.text(n));
                }
                K::PointerType | K::ParenthesizedType => match self.first_kid(cur) {
                    Some(t) => cur = t,
                    None => return self.text(cur),
                },
                _ => return self.text(cur),
            }
        }
    }
}
