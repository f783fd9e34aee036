//! Name resolution: the scopes of a file (modules, blocks, function bodies)
//! and how a path is turned into a qualified name.
//!
//! This is a purely syntactic approximation of rustc's resolution, good
//! enough for the calls and types the rules care about:
//! - items and `use` bindings of a module or block are visible in the whole
//!   module/block (they are declared before its statements are lowered);
//! - `let`, parameter and pattern bindings shadow from their declaration on,
//!   and make the name unresolved (a local is not a qualified thing);
//! - lookups stop at the nearest enclosing module (an inline `mod` does not
//!   see its parent's names), except through `use super::*` style globs into
//!   modules of this file, and for `macro_rules!` macros, which are textually
//!   scoped;
//! - a multi-segment path whose first segment is unknown and lowercase is a
//!   crate path (`tokio::spawn`); unknown capitalized first segments are
//!   generic parameters or glob-imported types and stay unresolved.

use ra_ap_syntax::SmolStr;
use rustc_hash::FxHashMap as HashMap;

#[derive(Clone, Debug)]
pub(crate) enum Binding {
    /// A local variable, parameter or pattern binding.
    Local,
    /// An item or import, with its qualified name.
    Item(String),
}

#[derive(Debug, Default)]
pub(crate) struct Scope {
    names: HashMap<SmolStr, Binding>,
    macros: HashMap<SmolStr, String>,
    /// Targets of glob imports (`use super::*` → the parent module path).
    globs: Vec<String>,
    /// The module path, for module scopes.
    module: Option<String>,
}

#[derive(Debug, Default)]
pub(crate) struct Scopes {
    stack: Vec<Scope>,
    /// Bindings of every module scope of this file seen so far, by module
    /// path, for resolving through globs (`use super::*`).
    module_names: HashMap<String, HashMap<SmolStr, String>>,
}

impl Scopes {
    pub fn push_module(&mut self, path: &str) {
        self.stack.push(Scope {
            module: Some(path.to_string()),
            ..Scope::default()
        });
    }

    pub fn push_block(&mut self) {
        self.stack.push(Scope::default());
    }

    pub fn pop(&mut self) {
        self.stack.pop();
    }

    pub fn bind_local(&mut self, name: &str) {
        if let Some(s) = self.stack.last_mut() {
            s.names.insert(SmolStr::new(name), Binding::Local);
        }
    }

    pub fn bind_item(&mut self, name: &str, qualified: String) {
        if let Some(s) = self.stack.last_mut() {
            if let Some(m) = &s.module {
                self.module_names
                    .entry(m.clone())
                    .or_default()
                    .insert(SmolStr::new(name), qualified.clone());
            }
            s.names.insert(SmolStr::new(name), Binding::Item(qualified));
        }
    }

    pub fn bind_macro(&mut self, name: &str, qualified: String) {
        if let Some(s) = self.stack.last_mut() {
            s.macros.insert(SmolStr::new(name), qualified);
        }
    }

    pub fn add_glob(&mut self, target: String) {
        if let Some(s) = self.stack.last_mut() {
            s.globs.push(target);
        }
    }

    /// Scopes visible from the innermost one: up to and including the
    /// nearest module scope.
    fn visible(&self) -> impl Iterator<Item = &Scope> {
        let mut done = false;
        self.stack.iter().rev().take_while(move |s| {
            if done {
                return false;
            }
            done = s.module.is_some();
            true
        })
    }

    /// Resolves a name in the value namespace: locals shadow (→ `None`).
    pub fn lookup_value(&self, name: &str) -> Option<String> {
        for s in self.visible() {
            match s.names.get(name) {
                Some(Binding::Local) => return None,
                Some(Binding::Item(q)) => return Some(q.clone()),
                None => {}
            }
        }
        self.lookup_globs(name)
            .or_else(|| prelude(name).map(str::to_string))
    }

    /// Resolves a name in the type/module namespace: locals are skipped.
    pub fn lookup_type(&self, name: &str) -> Option<String> {
        for s in self.visible() {
            if let Some(Binding::Item(q)) = s.names.get(name) {
                return Some(q.clone());
            }
        }
        self.lookup_globs(name)
            .or_else(|| prelude(name).map(str::to_string))
    }

    fn lookup_globs(&self, name: &str) -> Option<String> {
        for s in self.visible() {
            for g in &s.globs {
                if let Some(q) = self.module_names.get(g).and_then(|m| m.get(name)) {
                    return Some(q.clone());
                }
            }
        }
        None
    }

    /// Resolves a macro name: `macro_rules!` are textually scoped, so all
    /// enclosing scopes are searched; then `use` bindings; then std's macros.
    pub fn lookup_macro(&self, name: &str) -> Option<String> {
        for s in self.stack.iter().rev() {
            if let Some(q) = s.macros.get(name) {
                return Some(q.clone());
            }
        }
        if let Some(q) = self.lookup_type(name) {
            return Some(q);
        }
        if STD_MACROS.contains(&name) {
            return Some(format!("std::{name}"));
        }
        None
    }
}

/// Crates whose items are used under the path of a crate that re-exports
/// them: the knowledge tables and rules name only the re-export.
const REEXPORTED: &[(&str, &str)] = &[
    ("core", "std"),
    ("alloc", "std"),
    // The `futures` facade re-exports its parts at these paths.
    ("futures_channel", "futures::channel"),
    ("futures_executor", "futures::executor"),
    ("futures_util", "futures"),
];

/// Rewrites a path into a re-exported crate (`core::`, `alloc::`,
/// `futures_channel::`...) to the re-export's path (`std::`,
/// `futures::channel::`), so the knowledge tables need only one spelling.
pub(crate) fn normalize_crate(path: String) -> String {
    for (krate, facade) in REEXPORTED {
        if let Some(rest) = path.strip_prefix(krate)
            && (rest.is_empty() || rest.starts_with("::"))
        {
            return format!("{facade}{rest}");
        }
    }
    path
}

/// The parent of a module path (`crate::a::b` → `crate::a`; `crate` stays).
pub(crate) fn parent_module(path: &str) -> &str {
    match path.rfind("::") {
        Some(i) => &path[..i],
        None => path,
    }
}

/// Names of the std prelude (editions 2021/2024) that matter for calls and
/// types, with their qualified names.
pub(crate) fn prelude(name: &str) -> Option<&'static str> {
    Some(match name {
        "Option" => "std::option::Option",
        "Some" => "std::option::Option::Some",
        "None" => "std::option::Option::None",
        "Result" => "std::result::Result",
        "Ok" => "std::result::Result::Ok",
        "Err" => "std::result::Result::Err",
        "Vec" => "std::vec::Vec",
        "String" => "std::string::String",
        "Box" => "std::boxed::Box",
        "drop" => "std::mem::drop",
        "Default" => "std::default::Default",
        "Clone" => "std::clone::Clone",
        "ToString" => "std::string::ToString",
        "ToOwned" => "std::borrow::ToOwned",
        "Iterator" => "std::iter::Iterator",
        "IntoIterator" => "std::iter::IntoIterator",
        "Future" => "std::future::Future",
        "IntoFuture" => "std::future::IntoFuture",
        "Send" => "std::marker::Send",
        "Sync" => "std::marker::Sync",
        "Fn" => "std::ops::Fn",
        "FnMut" => "std::ops::FnMut",
        "FnOnce" => "std::ops::FnOnce",
        "From" => "std::convert::From",
        "Into" => "std::convert::Into",
        _ => return None,
    })
}

/// Macros every crate can use without importing them.
const STD_MACROS: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "cfg",
    "column",
    "compile_error",
    "concat",
    "dbg",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "env",
    "eprint",
    "eprintln",
    "file",
    "format",
    "format_args",
    "include",
    "include_bytes",
    "include_str",
    "line",
    "matches",
    "module_path",
    "option_env",
    "panic",
    "print",
    "println",
    "stringify",
    "thread_local",
    "todo",
    "unimplemented",
    "unreachable",
    "vec",
    "write",
    "writeln",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locals_shadow_items_and_modules_bound_lookups() {
        let mut s = Scopes::default();
        s.push_module("crate");
        s.bind_item("sleep", "std::thread::sleep".into());
        s.push_block();
        assert_eq!(
            s.lookup_value("sleep").as_deref(),
            Some("std::thread::sleep")
        );
        s.bind_local("sleep");
        assert_eq!(s.lookup_value("sleep"), None);
        assert_eq!(
            s.lookup_type("sleep").as_deref(),
            Some("std::thread::sleep")
        );
        s.pop();
        s.push_module("crate::inner");
        assert_eq!(s.lookup_value("sleep"), None);
        s.add_glob("crate".into());
        assert_eq!(
            s.lookup_value("sleep").as_deref(),
            Some("std::thread::sleep")
        );
        assert_eq!(
            s.lookup_value("Some").as_deref(),
            Some("std::option::Option::Some")
        );
        assert_eq!(s.lookup_macro("println").as_deref(), Some("std::println"));
        assert_eq!(s.lookup_macro("info"), None);
    }

    #[test]
    fn normalizes_reexported_crates() {
        assert_eq!(normalize_crate("core::mem::drop".into()), "std::mem::drop");
        assert_eq!(normalize_crate("alloc::sync::Arc".into()), "std::sync::Arc");
        assert_eq!(normalize_crate("corex::a".into()), "corex::a");
        assert_eq!(normalize_crate("core".into()), "std");
        assert_eq!(
            normalize_crate("futures_channel::oneshot::channel".into()),
            "futures::channel::oneshot::channel"
        );
        assert_eq!(
            normalize_crate("futures_util::future::FutureExt".into()),
            "futures::future::FutureExt"
        );
        assert_eq!(
            normalize_crate("futures_executor::block_on".into()),
            "futures::executor::block_on"
        );
        assert_eq!(
            normalize_crate("futures_utils::x".into()),
            "futures_utils::x"
        );
        assert_eq!(parent_module("crate::a::b"), "crate::a");
        assert_eq!(parent_module("crate"), "crate");
    }
}
