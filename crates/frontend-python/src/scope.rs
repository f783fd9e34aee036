//! Scopes and name lookup, following Python's rules closely enough for
//! resolution: a name bound anywhere in a function is local to the whole
//! function; class bodies are not visible from the methods inside them;
//! `global`/`nonlocal` redirect the lookup; unbound names fall back to the
//! builtins.

use std::collections::HashMap;
use unsnarl_model::Str;

/// What a name is bound to in one scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Binding {
    /// A parameter or a local variable: shadows everything outside.
    Local,
    /// An import, a `def`, a `class`, or a module-level alias
    /// (`Lock = threading.Lock`): the qualified name it stands for.
    Qualified(String),
    /// A module-level variable: the name resolves to `<module>.<name>`, but
    /// attributes of it do not (they are attributes of a value).
    ModuleVar,
    /// The receiver parameter (`self`/`cls`) of a method of the class with
    /// this index in the lowerer's class table.
    Receiver(usize),
    /// `global x`: look the name up in the module scope.
    Global,
    /// `nonlocal x`: look the name up in the enclosing functions.
    Nonlocal,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScopeKind {
    Module,
    Function,
    Class,
    Comprehension,
}

pub(crate) struct Scope<'a> {
    pub kind: ScopeKind,
    pub names: rustc_hash::FxHashMap<&'a str, Binding>,
}

impl<'a> Scope<'a> {
    pub fn new(kind: ScopeKind) -> Scope<'a> {
        Scope {
            kind,
            names: HashMap::default(),
        }
    }

    /// Binds `name` unless it is already bound more specifically: a
    /// qualified binding (import, def, class) wins over a plain assignment of
    /// the same name (`try: import json / except ImportError: json = None`),
    /// and `global`/`nonlocal` declarations win over assignments.
    pub fn bind(&mut self, name: &'a str, b: Binding) {
        match self.names.get_mut(name) {
            None => {
                self.names.insert(name, b);
            }
            Some(old) => {
                let upgrade = match (&*old, &b) {
                    (Binding::Global | Binding::Nonlocal | Binding::Receiver(_), _) => false,
                    (_, Binding::Global | Binding::Nonlocal) => true,
                    (Binding::Local | Binding::ModuleVar, Binding::Qualified(_)) => true,
                    _ => false,
                };
                if upgrade {
                    *old = b;
                }
            }
        }
    }
}

/// How a name resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Res<'s> {
    Qualified(&'s str),
    ModuleVar,
    Receiver(usize),
    Local,
    /// An unshadowed builtin (`open`, `len`, `ValueError`).
    Builtin,
    /// Not bound anywhere, but the file has exactly one `from m import *`:
    /// the name most likely comes from `m`.
    Star(&'s str),
    Unknown,
}

impl Res<'_> {
    /// The qualified name of what `name` refers to, if it refers to
    /// something with one.
    pub fn qualified(self, module: &str, name: &str) -> Option<Str> {
        // Built in place: most qualified names fit the inline string, and
        // every name reference of a file asks.
        let join = |prefix: &str| {
            let mut q = Str::with_capacity(prefix.len() + 1 + name.len());
            q.push_str(prefix);
            if !prefix.is_empty() && !name.is_empty() {
                q.push('.');
            }
            q.push_str(name);
            q
        };
        match self {
            Res::Qualified(q) => Some(q.into()),
            Res::ModuleVar => Some(join(module)),
            Res::Builtin => Some(join("builtins")),
            Res::Star(m) => Some(join(m)),
            Res::Receiver(_) | Res::Local | Res::Unknown => None,
        }
    }

    /// Whether attribute chains on the name resolve too: attributes of
    /// modules, classes and functions have qualified names, attributes of
    /// variables do not.
    pub fn extends(self) -> bool {
        matches!(self, Res::Qualified(_) | Res::Builtin | Res::Star(_))
    }
}

/// The scope chain of the code being lowered: the module scope first.
pub(crate) struct Scopes<'a> {
    pub stack: Vec<Scope<'a>>,
    /// Targets of `from m import *` anywhere in the file.
    pub star_imports: Vec<String>,
}

impl<'a> Scopes<'a> {
    pub fn lookup(&self, name: &str) -> Res<'_> {
        let innermost = self.stack.len().wrapping_sub(1);
        let mut only_module = false;
        for (i, s) in self.stack.iter().enumerate().rev() {
            if only_module && s.kind != ScopeKind::Module {
                continue;
            }
            // A class body's names are visible in the class body only, not
            // in the methods and comprehensions nested inside it.
            if s.kind == ScopeKind::Class && i != innermost {
                continue;
            }
            match s.names.get(name) {
                None | Some(Binding::Nonlocal) => {}
                Some(Binding::Global) => only_module = true,
                Some(Binding::Local) => return Res::Local,
                Some(Binding::ModuleVar) => return Res::ModuleVar,
                Some(Binding::Receiver(c)) => return Res::Receiver(*c),
                Some(Binding::Qualified(q)) => return Res::Qualified(q),
            }
        }
        if is_builtin(name) {
            Res::Builtin
        } else if let [star] = self.star_imports.as_slice()
            // Module dunders (`__name__`, `__file__`) are the module's own.
            && !(name.starts_with("__") && name.ends_with("__"))
        {
            Res::Star(star)
        } else {
            Res::Unknown
        }
    }

    /// The scope a walrus target binds in: the innermost function (or the
    /// module), skipping comprehension and class scopes.
    pub fn walrus_scope_mut(&mut self) -> &mut Scope<'a> {
        let i = self
            .stack
            .iter()
            .rposition(|s| matches!(s.kind, ScopeKind::Function | ScopeKind::Module))
            .unwrap_or(0);
        &mut self.stack[i]
    }
}

/// Python's builtin names (3.13), sorted for binary search. `True`, `False`,
/// `None` and `Ellipsis` are literals in the syntax tree and not listed.
const BUILTINS: &[&str] = &[
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "BaseException",
    "BaseExceptionGroup",
    "BlockingIOError",
    "BrokenPipeError",
    "BufferError",
    "BytesWarning",
    "ChildProcessError",
    "ConnectionAbortedError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "DeprecationWarning",
    "EOFError",
    "EncodingWarning",
    "EnvironmentError",
    "Exception",
    "ExceptionGroup",
    "FileExistsError",
    "FileNotFoundError",
    "FloatingPointError",
    "FutureWarning",
    "GeneratorExit",
    "IOError",
    "ImportError",
    "ImportWarning",
    "IndentationError",
    "IndexError",
    "InterruptedError",
    "IsADirectoryError",
    "KeyError",
    "KeyboardInterrupt",
    "LookupError",
    "MemoryError",
    "ModuleNotFoundError",
    "NameError",
    "NotADirectoryError",
    "NotImplemented",
    "NotImplementedError",
    "OSError",
    "OverflowError",
    "PendingDeprecationWarning",
    "PermissionError",
    "ProcessLookupError",
    "PythonFinalizationError",
    "RecursionError",
    "ReferenceError",
    "ResourceWarning",
    "RuntimeError",
    "RuntimeWarning",
    "StopAsyncIteration",
    "StopIteration",
    "SyntaxError",
    "SyntaxWarning",
    "SystemError",
    "SystemExit",
    "TabError",
    "TimeoutError",
    "TypeError",
    "UnboundLocalError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "UnicodeError",
    "UnicodeTranslateError",
    "UnicodeWarning",
    "UserWarning",
    "ValueError",
    "Warning",
    "ZeroDivisionError",
    "__build_class__",
    "__debug__",
    "__import__",
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "copyright",
    "credits",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "exit",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "license",
    "list",
    "locals",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "quit",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
];

pub(crate) fn is_builtin(name: &str) -> bool {
    BUILTINS.binary_search(&name).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_are_sorted_for_binary_search() {
        assert!(BUILTINS.windows(2).all(|w| w[0] < w[1]));
        for n in ["open", "print", "len", "BaseException", "__import__", "zip"] {
            assert!(is_builtin(n), "{n}");
        }
        for n in ["", "None", "True", "self", "sleep", "Open"] {
            assert!(!is_builtin(n), "{n}");
        }
    }

    #[test]
    fn qualified_bindings_win_over_assignments_and_declarations_over_both() {
        let mut s = Scope::new(ScopeKind::Module);
        s.bind("json", Binding::ModuleVar);
        s.bind("json", Binding::Qualified("json".into()));
        s.bind("json", Binding::ModuleVar);
        assert_eq!(s.names["json"], Binding::Qualified("json".into()));
        s.bind("x", Binding::Local);
        s.bind("x", Binding::Global);
        s.bind("x", Binding::Qualified("q".into()));
        assert_eq!(s.names["x"], Binding::Global);
        s.bind("self", Binding::Receiver(0));
        s.bind("self", Binding::Local);
        assert_eq!(s.names["self"], Binding::Receiver(0));
    }
}
