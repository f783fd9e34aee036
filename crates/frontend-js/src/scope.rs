//! Lexical scopes for name resolution.
//!
//! Each function (and the module) gets one [`Scope`]: the set of names it
//! declares anywhere in its body (not in nested functions), each bound to the
//! qualified name it stands for when that is known (an import, a module-level
//! definition, a nested function) or to `None` for a plain local. A name not
//! declared in any enclosing scope may be a well-known global.
//!
//! Only names of things with members of their own (modules, functions,
//! classes, globals) extend to member chains: `fs.readFile` is
//! `fs.readFile`, but for a module variable `const lock = new Mutex()`,
//! `lock.acquire` is left for the semantic pass to resolve by the variable's
//! type (`async-mutex.Mutex.acquire`).

/// What a declared name refers to: its qualified name, and whether member
/// chains on it have qualified names too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bound {
    pub q: String,
    pub extends: bool,
}

impl Bound {
    /// A module, function, class or alias of one: `x.y` is qualified.
    pub fn named(q: String) -> Bound {
        Bound { q, extends: true }
    }

    /// A module-level variable: the name is qualified, its members are not.
    pub fn var(q: String) -> Bound {
        Bound { q, extends: false }
    }
}

/// `Some` for names whose referent is known, `None` for a local whose value
/// we do not track.
pub type Binding = Option<Bound>;

/// Scopes up to this size are searched linearly (most functions declare a
/// handful of names); larger ones (module scopes, big wrappers) are hashed.
const SMALL: usize = 12;

#[derive(Default)]
pub struct Scope<'a> {
    small: Vec<(&'a str, Binding)>,
    map: rustc_hash::FxHashMap<&'a str, Binding>,
}

impl<'a> Scope<'a> {
    pub fn get(&self, name: &str) -> Option<&Binding> {
        if self.map.is_empty() {
            self.small.iter().find(|(n, _)| *n == name).map(|(_, b)| b)
        } else {
            self.map.get(name)
        }
    }

    /// Empties the scope, keeping its storage for reuse.
    pub fn clear(&mut self) {
        self.small.clear();
        self.map.clear();
    }

    fn get_mut(&mut self, name: &str) -> Option<&mut Binding> {
        if self.map.is_empty() {
            self.small
                .iter_mut()
                .find(|(n, _)| *n == name)
                .map(|(_, b)| b)
        } else {
            self.map.get_mut(name)
        }
    }

    fn insert(&mut self, name: &'a str, binding: Binding) {
        if !self.map.is_empty() {
            self.map.insert(name, binding);
        } else if self.small.len() < SMALL {
            self.small.push((name, binding));
        } else {
            self.map.reserve(2 * SMALL);
            self.map.extend(self.small.drain(..));
            self.map.insert(name, binding);
        }
    }

    /// Binds `name` unless it is already bound to something known: the first
    /// informative binding wins, so a block-local `const x = 1` elsewhere in
    /// the function does not erase `const x = require('x')`.
    pub fn bind(&mut self, name: &'a str, binding: Binding) {
        match self.get_mut(name) {
            Some(existing) => {
                if existing.is_none() && binding.is_some() {
                    *existing = binding;
                }
            }
            None => self.insert(name, binding),
        }
    }

    /// Binds `name`, replacing any previous binding (for declarations that
    /// are known to be authoritative, such as imports).
    pub fn set(&mut self, name: &'a str, binding: Binding) {
        match self.get_mut(name) {
            Some(existing) => *existing = binding,
            None => self.insert(name, binding),
        }
    }
}

/// Well-known globals of browsers and Node that resolve to their own name when
/// no declaration or import shadows them (`setTimeout`, `Promise.all`,
/// `process.nextTick`).
pub fn is_global(name: &str) -> bool {
    matches!(
        name,
        "fetch"
            | "setTimeout"
            | "setInterval"
            | "setImmediate"
            | "clearTimeout"
            | "clearInterval"
            | "clearImmediate"
            | "queueMicrotask"
            | "structuredClone"
            | "requestAnimationFrame"
            | "cancelAnimationFrame"
            | "requestIdleCallback"
            | "Promise"
            | "process"
            | "Atomics"
            | "SharedArrayBuffer"
            | "ArrayBuffer"
            | "DataView"
            | "JSON"
            | "console"
            | "require"
            | "XMLHttpRequest"
            | "AbortController"
            | "AbortSignal"
            | "Math"
            | "Date"
            | "Array"
            | "Object"
            | "Map"
            | "Set"
            | "WeakMap"
            | "WeakSet"
            | "WeakRef"
            | "FinalizationRegistry"
            | "Symbol"
            | "Error"
            | "AggregateError"
            | "TypeError"
            | "RangeError"
            | "Number"
            | "String"
            | "Boolean"
            | "BigInt"
            | "RegExp"
            | "Function"
            | "Reflect"
            | "Proxy"
            | "Intl"
            | "Int32Array"
            | "Uint8Array"
            | "Float64Array"
            | "Buffer"
            | "URL"
            | "URLSearchParams"
            | "TextEncoder"
            | "TextDecoder"
            | "WebSocket"
            | "Worker"
            | "MessageChannel"
            | "MessagePort"
            | "BroadcastChannel"
            | "EventTarget"
            | "EventSource"
            | "Event"
            | "Response"
            | "Request"
            | "Headers"
            | "FormData"
            | "Blob"
            | "ReadableStream"
            | "WritableStream"
            | "TransformStream"
            | "performance"
            | "crypto"
            | "navigator"
            | "document"
            | "window"
            | "globalThis"
            | "global"
            | "localStorage"
            | "sessionStorage"
            | "indexedDB"
            | "parseInt"
            | "parseFloat"
            | "isNaN"
            | "isFinite"
            | "encodeURIComponent"
            | "decodeURIComponent"
            | "atob"
            | "btoa"
            | "Deno"
            | "Bun"
    )
}

/// Global objects whose properties are the globals themselves:
/// `window.setTimeout` is `setTimeout`.
pub fn is_global_object(qualified: &str) -> bool {
    matches!(qualified, "window" | "globalThis" | "global")
}
