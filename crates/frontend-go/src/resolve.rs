//! Name resolution: import bindings, package-level declarations of this
//! file, lexical scopes of locals, and Go's predeclared identifiers.

use unsnarl_model::TypeId;

/// Maps keyed by identifiers: rustc's FxHash, since SipHash showed up in
/// profiles and these keys come from one file.
pub type FxMap<K, V> = rustc_hash::FxHashMap<K, V>;

/// Predeclared functions: calls of them resolve to the bare name.
const BUILTIN_FUNCS: &[&str] = &[
    "append", "cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make", "max",
    "min", "new", "panic", "print", "println", "real", "recover",
];

/// Predeclared types: conversions `int(x)` and type references resolve to
/// the bare name, never to a same-package declaration.
const BUILTIN_TYPES: &[&str] = &[
    "any",
    "bool",
    "byte",
    "comparable",
    "complex128",
    "complex64",
    "error",
    "float32",
    "float64",
    "int",
    "int16",
    "int32",
    "int64",
    "int8",
    "rune",
    "string",
    "uint",
    "uint16",
    "uint32",
    "uint64",
    "uint8",
    "uintptr",
];

/// What a call takes from its callee expression: the called name, the
/// receiver of a method call (an `Attr` whose object is not a package or
/// type, as `is_static` tells) and the resolved target. Shared by both Go
/// parsers so that they build the same calls.
pub fn callee_parts(
    callee: &unsnarl_model::ExprKind,
    is_static: impl Fn(unsnarl_model::ExprId) -> bool,
) -> (
    unsnarl_model::Str,
    Option<unsnarl_model::ExprId>,
    Option<unsnarl_model::Str>,
) {
    use unsnarl_model::{ExprKind, Str};
    match callee {
        ExprKind::Name { id, resolved } => (id.clone(), None, resolved.clone()),
        ExprKind::Attr {
            obj,
            name,
            resolved,
        } => {
            let receiver = (!is_static(*obj)).then_some(*obj);
            (name.clone(), receiver, resolved.clone())
        }
        ExprKind::Path { text, resolved } => {
            let last = text.rsplit('.').next().unwrap_or(text);
            (Str::from(last), None, resolved.clone())
        }
        _ => (Str::default(), None, None),
    }
}

/// Every predeclared function and type name.
pub fn builtins() -> impl Iterator<Item = &'static str> {
    BUILTIN_FUNCS.iter().chain(BUILTIN_TYPES).copied()
}

pub fn is_builtin(name: &str) -> bool {
    BUILTIN_FUNCS.contains(&name) || BUILTIN_TYPES.contains(&name)
}

/// What a package-level identifier of this file declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PkgDecl {
    Func,
    /// A type; the id is filled once its `TypeDecl` exists.
    Type(Option<TypeId>),
    Var,
}

/// What a name declared inside a function is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Local {
    /// A parameter, receiver, result, `:=`/`var`/`const` binding.
    Value,
    /// A type parameter (`[T any]`).
    TypeParam,
    /// A local type declaration, with its `TypeDecl`.
    Type(TypeId),
}

/// Lexical scopes of the function being lowered (and of its enclosing
/// functions: a func literal sees the locals of its parent). Each name maps
/// to its stack of bindings (innermost last); `log` records declarations in
/// order so a scope's bindings can be undone when it closes. Lookups stay
/// O(1) in generated functions with thousands of locals.
#[derive(Default)]
pub struct Scopes<'s> {
    by_name: FxMap<&'s str, Vec<Local>>,
    log: Vec<&'s str>,
    marks: Vec<usize>,
}

impl<'s> Scopes<'s> {
    pub fn push(&mut self) {
        self.marks.push(self.log.len());
    }

    pub fn pop(&mut self) {
        let Some(m) = self.marks.pop() else {
            return;
        };
        for name in self.log.drain(m..) {
            if let Some(stack) = self.by_name.get_mut(name) {
                stack.pop();
            }
        }
    }

    pub fn declare(&mut self, name: &'s str) {
        self.declare_as(name, Local::Value);
    }

    pub fn declare_as(&mut self, name: &'s str, what: Local) {
        // `_` binds nothing, and declaring outside any function scope would
        // make the name a local forever.
        if name != "_" && !name.is_empty() && !self.marks.is_empty() {
            self.by_name.entry(name).or_default().push(what);
            self.log.push(name);
        }
    }

    /// The innermost local of that name.
    pub fn lookup(&self, name: &str) -> Option<&Local> {
        self.by_name.get(name).and_then(|s| s.last())
    }

    pub fn in_function(&self) -> bool {
        !self.marks.is_empty()
    }
}

/// How an identifier in expression or type position resolves.
#[derive(Debug, PartialEq, Eq)]
pub enum Resolution<'a> {
    /// A local variable, parameter, type parameter or local type.
    Local(Local),
    /// An import binding: the import path.
    Package(&'a str),
    /// A same-package declaration (this file or another file of the package).
    Module(Option<PkgDecl>),
    /// Declared by a dot import (`import . "x"`): the import path.
    DotImport(&'a str),
    Builtin,
    /// `_`, or ambiguous between several dot imports.
    Unknown,
}

/// File-level bindings: imports and package-level declarations.
#[derive(Default)]
pub struct FileScope<'s> {
    /// Local name → import path, for named and default imports.
    pub imports: FxMap<String, String>,
    /// Import paths of dot imports.
    pub dot_imports: Vec<String>,
    pub decls: FxMap<&'s str, PkgDecl>,
}

impl FileScope<'_> {
    pub fn resolve<'a>(&'a self, scopes: &Scopes, name: &str) -> Resolution<'a> {
        if name == "_" || name.is_empty() {
            return Resolution::Unknown;
        }
        if let Some(l) = scopes.lookup(name) {
            return Resolution::Local(*l);
        }
        if let Some(d) = self.decls.get(name) {
            return Resolution::Module(Some(*d));
        }
        if let Some(p) = self.imports.get(name) {
            return Resolution::Package(p);
        }
        if is_builtin(name) {
            return Resolution::Builtin;
        }
        // Only exported names can come from a dot import. With one dot
        // import, an exported name not declared here most likely comes from
        // it (ginkgo/gomega style); with several we cannot tell which.
        if !self.dot_imports.is_empty() && starts_upper(name) {
            return match self.dot_imports.as_slice() {
                [one] => Resolution::DotImport(one),
                _ => Resolution::Unknown,
            };
        }
        // Any other unqualified identifier in Go is declared at package
        // level, possibly in another file of the package.
        Resolution::Module(None)
    }
}

fn starts_upper(name: &str) -> bool {
    name.chars().next().is_some_and(char::is_uppercase)
}

/// The name an import path binds by default: its last segment, skipping a
/// major-version suffix (`/v2`, `.v3`) and the usual `go-`/`-go` affixes
/// (`github.com/mattn/go-isatty` → `isatty`).
pub fn default_import_name(path: &str) -> &str {
    let mut segs = path.rsplit('/').filter(|s| !s.is_empty());
    let mut last = segs.next().unwrap_or(path);
    if is_major_version(last)
        && let Some(prev) = segs.next()
    {
        last = prev;
    }
    // `gopkg.in/yaml.v3` → `yaml`, `github.com/nats-io/nats.go` → `nats`,
    // `github.com/satori/go.uuid` → `uuid`.
    if let Some(rest) = last.strip_prefix("go.") {
        last = rest;
    }
    if let Some((head, _)) = last.split_once('.')
        && !head.is_empty()
    {
        last = head;
    }
    if let Some(rest) = last.strip_prefix("go-")
        && !rest.is_empty()
    {
        last = rest;
    }
    if let Some(rest) = last.strip_suffix("-go")
        && !rest.is_empty()
    {
        last = rest;
    }
    last
}

fn is_major_version(seg: &str) -> bool {
    seg.len() > 1 && seg.starts_with('v') && seg[1..].bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names() {
        assert_eq!(default_import_name("net/http"), "http");
        assert_eq!(default_import_name("context"), "context");
        assert_eq!(default_import_name("gopkg.in/yaml.v3"), "yaml");
        assert_eq!(default_import_name("github.com/jackc/pgx/v5"), "pgx");
        assert_eq!(default_import_name("github.com/mattn/go-isatty"), "isatty");
        assert_eq!(default_import_name("github.com/satori/go.uuid"), "uuid");
        assert_eq!(default_import_name("github.com/nats-io/nats.go"), "nats");
        assert_eq!(
            default_import_name("github.com/opentracing/opentracing-go"),
            "opentracing"
        );
        assert_eq!(default_import_name("v2"), "v2");
        assert_eq!(default_import_name(""), "");
    }

    #[test]
    fn scopes_shadow_and_pop() {
        let mut s = Scopes::default();
        s.declare("ignored");
        assert!(s.lookup("ignored").is_none());
        s.push();
        s.declare("x");
        s.push();
        s.declare("y");
        assert!(s.lookup("y").is_some());
        s.pop();
        assert!(s.lookup("y").is_none());
        assert!(s.lookup("x").is_some());
        s.pop();
        assert!(!s.in_function());
    }
}
