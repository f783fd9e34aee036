//! The file model: a small, language-neutral tree that every front end lowers
//! its syntax tree into, and that every rule reads.
//!
//! It keeps only what matters for concurrency: functions (async or not),
//! statements that shape control flow (branches, loops, try/with, select,
//! defer, go), and expressions down to calls, awaits, names and literals.
//! Everything else is lowered to [`ExprKind::Other`] with its children, so a
//! walk never misses a nested call.
//!
//! Nodes live in two arenas (`stmts`, `exprs`) addressed by [`StmtId`] and
//! [`ExprId`]; a [`Block`] is a list of statement ids. Spans are byte offsets
//! into the source text.
//!
//! ## Names and qualified names
//!
//! A front end resolves what a call refers to through the file's imports and
//! writes it into [`Call::target`] as a *qualified name* in the language's own
//! spelling:
//!
//! | language | qualified name examples |
//! |---|---|
//! | Python | `time.sleep`, `asyncio.Queue`, `pkg.mod.func`, `pkg.mod.Class.method` |
//! | JS/TS | `fs.readFileSync`, `fs/promises.readFile`, `child_process.execSync`, `./lib/db.query` (project module path without extension) |
//! | Go | `time.Sleep`, `net/http.Get`, `sync.Mutex.Lock`, `<import path>.Func` |
//! | Rust | `std::thread::sleep`, `tokio::spawn`, `crate::db::query` |
//!
//! A method call on a receiver whose type is known (from a constructor call,
//! an annotation or a struct field) is resolved by the semantic pass to
//! `<type>.<method>` (`::` in Rust), e.g. `queue.Queue.get`,
//! `std::sync::Mutex::lock`.

use crate::span::Span;
use serde::{Deserialize, Serialize};

/// The string type of names in the model (identifiers, qualified names,
/// types as written). Most are shorter than 24 bytes and are stored inline,
/// so lowering a file does not make one heap allocation per name: measured
/// as a large share of lowering time and of the memory the kept models take.
pub type Str = compact_str::CompactString;
pub use compact_str::{ToCompactString, format_compact};

macro_rules! id_type {
    ($name:ident) => {
        #[derive(
            Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
        )]
        pub struct $name(pub u32);
        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}
id_type!(StmtId);
id_type!(ExprId);
id_type!(FuncId);
id_type!(TypeId);

/// The languages unsnarl understands. TypeScript shares the JavaScript front
/// end and rules; it is kept apart so reports can say which it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Language {
    Python,
    JavaScript,
    TypeScript,
    Go,
    Rust,
}

impl Language {
    pub const ALL: [Language; 5] = [
        Language::Python,
        Language::JavaScript,
        Language::TypeScript,
        Language::Go,
        Language::Rust,
    ];

    /// The language of a file, from its extension.
    pub fn from_extension(ext: &str) -> Option<Language> {
        Some(match ext {
            "py" | "pyi" => Language::Python,
            "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
            "ts" | "mts" | "cts" | "tsx" => Language::TypeScript,
            "go" => Language::Go,
            "rs" => Language::Rust,
            _ => return None,
        })
    }

    pub fn slug(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::JavaScript => "javascript",
            Language::TypeScript => "typescript",
            Language::Go => "go",
            Language::Rust => "rust",
        }
    }

    pub fn from_slug(s: &str) -> Option<Language> {
        Language::ALL.into_iter().find(|l| l.slug() == s)
    }

    /// JavaScript and TypeScript share rules and knowledge.
    pub fn is_js_family(self) -> bool {
        matches!(self, Language::JavaScript | Language::TypeScript)
    }

    /// The separator between segments of a qualified name.
    pub fn path_sep(self) -> &'static str {
        match self {
            Language::Rust => "::",
            _ => ".",
        }
    }

    /// A qualified name split before its last segment: `("a.b", "c")` for
    /// `a.b.c`, `("", "c")` for `c`.
    pub fn split_last_segment(self, q: &str) -> (&str, &str) {
        // A `char` needle is a byte search; a one-byte `&str` needle would
        // go through the general substring searcher.
        let found = match self {
            Language::Rust => q.rfind("::").map(|i| (i, 2)),
            _ => q.rfind('.').map(|i| (i, 1)),
        };
        match found {
            Some((i, n)) => (&q[..i], &q[i + n..]),
            None => ("", q),
        }
    }

    /// The comment leader used in suppressions and fixture expectations.
    pub fn line_comment(self) -> &'static str {
        match self {
            Language::Python => "#",
            _ => "//",
        }
    }
}

/// A list of statements executed in order (a lexical block).
pub type Block = Vec<StmtId>;

/// Everything a front end learned about one source file.
#[derive(Debug, Default)]
pub struct FileModel {
    /// The qualified name of this module: Python dotted module
    /// (`pkg.sub.mod`), JS/TS project path without extension (`src/lib/db`),
    /// Go import path or directory (`example.com/app/store`), Rust module path
    /// (`crate::db`). Functions defined here are named `<module><sep><name>`.
    pub module: Str,
    pub imports: Vec<Import>,
    /// `functions[0]` is the module's top-level code (kind [`FnKind::Module`]).
    pub functions: Vec<Function>,
    pub stmts: Vec<Stmt>,
    pub exprs: Vec<Expr>,
    /// Classes, structs, impl targets: their fields with declared types.
    pub types: Vec<TypeDecl>,
    /// Syntax errors the parser recovered from. The rest of the file is still
    /// lowered and analyzed.
    pub syntax_errors: Vec<SyntaxError>,
    /// Types declared on bindings, where the language writes them apart from
    /// the value: Rust `let x: T = ..`, `static X: T = ..`, `const X: T = ..`.
    /// Each entry is the bound name expression (an `Assign` target) and the
    /// declared type. Front ends that have no such annotations leave it empty.
    pub declared_types: Vec<(ExprId, TypeRef)>,
    /// True for test files (`test_*.py`, `*_test.go` and Go test helpers
    /// that import `testing`, `*.test.ts`; Rust files under `tests/` or code
    /// under `#[cfg(test)]` is marked per function).
    pub is_test: bool,
    /// True when the file says it is generated (`Code generated ... DO NOT EDIT.`).
    pub is_generated: bool,
}

/// An import binding: `local` in this file refers to `target` (qualified).
#[derive(Debug, Clone)]
pub struct Import {
    /// The name bound in this file (`t` for `import time as t`; `*` for a glob).
    pub local: Str,
    /// What it refers to (`time`, `asyncio.create_task`, `fs/promises`,
    /// `std::sync::Mutex`, `net/http`).
    pub target: Str,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FnKind {
    /// Top-level module code.
    Module,
    /// A named function (`def`, `function`, `func`, `fn`).
    Function,
    /// A function defined in a class / impl / with a Go receiver.
    Method,
    /// Anonymous: lambda, arrow function, closure, Go func literal.
    Closure,
    /// A Rust `async { }` block or an async closure body.
    AsyncBlock,
}

#[derive(Debug, Clone)]
pub struct Function {
    /// The declared name, or empty for anonymous functions.
    pub name: Str,
    /// Fully qualified name for the project index (`pkg.mod.Class.method`);
    /// empty for anonymous functions.
    pub qualname: Str,
    pub kind: FnKind,
    /// `async def`, `async function`, `async fn`, `async {}`/`async move {}`.
    pub is_async: bool,
    /// Python generator / JS `function*` (async generators too).
    pub is_generator: bool,
    /// Enclosing class / impl self type / Go receiver type (qualified when
    /// known, else as written).
    pub class: Option<Str>,
    /// The receiver parameter's name, for methods (`self`, Go's `s` in
    /// `func (s *Server)`); JS `this` is implicit and recorded as `this`.
    pub receiver: Option<Str>,
    pub params: Vec<Param>,
    /// Declared return type, as written (`Promise<User>`, `error`).
    pub returns: Option<TypeRef>,
    /// Decorators (Python) and attributes (Rust `#[tokio::main]`), resolved to
    /// qualified names where possible. Arguments of decorator calls are kept in
    /// `decorator_calls`.
    pub decorators: Vec<Str>,
    pub decorator_calls: Vec<ExprId>,
    pub body: Block,
    pub span: Span,
    /// Span of the name (or of the `fn`/`=>` token for anonymous functions).
    pub name_span: Span,
    pub parent: Option<FuncId>,
    /// Test code: a test function, or code inside a test module.
    pub is_test: bool,
}

impl Function {
    pub fn new(kind: FnKind, span: Span) -> Function {
        Function {
            name: Str::default(),
            qualname: Str::default(),
            kind,
            is_async: false,
            is_generator: false,
            class: None,
            receiver: None,
            params: Vec::new(),
            returns: None,
            decorators: Vec::new(),
            decorator_calls: Vec::new(),
            body: Vec::new(),
            span,
            name_span: span,
            parent: None,
            is_test: false,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Param {
    pub name: Str,
    pub ty: Option<TypeRef>,
    pub default: Option<ExprId>,
    pub span: Span,
}

/// A type as written in the source, plus the qualified type it resolves to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TypeRef {
    /// As written, e.g. `*sync.Mutex`, `Arc<Mutex<State>>`, `asyncio.Queue[int]`.
    pub text: Str,
    /// The qualified name of the outermost *interesting* type, with pointers,
    /// references and smart-pointer wrappers (`Arc`, `Rc`, `Box`) peeled and
    /// generic arguments dropped: `sync.Mutex`, `std::sync::Mutex`,
    /// `asyncio.Queue`.
    pub resolved: Option<Str>,
}

/// A class, struct or impl target with its fields.
#[derive(Debug, Clone)]
pub struct TypeDecl {
    pub name: Str,
    pub qualname: Str,
    pub fields: Vec<Field>,
    /// Python: the base classes that resolve to a qualified name
    /// (`logging.handlers.QueueHandler`); empty for the other languages.
    pub bases: Vec<Str>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Field {
    pub name: Str,
    pub ty: TypeRef,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct SyntaxError {
    pub span: Span,
    pub message: String,
}

#[derive(Debug, Clone)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum StmtKind {
    /// An expression evaluated for its effect; its value is discarded.
    Expr(ExprId),
    /// A Rust block's tail expression (no `;`): the value of the enclosing
    /// `ExprKind::Block`, not discarded. (A function's, closure's or async
    /// block's own tail expression is lowered as `Return`.)
    Tail(ExprId),
    /// `a = b`, `let a = b`, `a += b`, `x := f()`, `const {a, b} = f()`.
    /// `value` is `None` for declarations without initializer.
    Assign {
        targets: Vec<ExprId>,
        value: Option<ExprId>,
        op: AssignOp,
    },
    If {
        cond: ExprId,
        then: Block,
        orelse: Block,
    },
    /// `while cond`, Rust `while let` (cond is [`ExprKind::Let`]), Go
    /// `for cond {}`. A C-style `for (init; cond; step)` lowers `init` as a
    /// preceding statement and puts `step` at the end of `body`.
    While {
        cond: ExprId,
        body: Block,
        orelse: Block,
    },
    /// Iteration over a collection: Python `for x in xs`, JS `for..of`/`for..in`,
    /// Go `for k, v := range xs`, Rust `for x in xs`.
    For {
        target: Option<ExprId>,
        iter: ExprId,
        body: Block,
        /// `async for` / `for await`.
        is_async: bool,
    },
    /// An unconditional loop: Rust `loop {}`, Go `for {}`.
    Loop {
        body: Block,
    },
    Try {
        body: Block,
        handlers: Vec<Handler>,
        orelse: Block,
        finally: Option<Block>,
    },
    /// Python `with`/`async with`. `items` are the context expressions.
    With {
        items: Vec<WithItem>,
        is_async: bool,
        body: Block,
    },
    Return(Option<ExprId>),
    /// Python `raise`, JS `throw`. (Go `panic(...)` stays a call.)
    Raise(Option<ExprId>),
    Break,
    Continue,
    /// Go `defer f(...)`: the call runs when the function returns.
    Defer(ExprId),
    /// Go `go f(...)`: the call runs in a new goroutine.
    Go(ExprId),
    /// Go `select {}` and Rust `tokio::select!`/`futures::select!`.
    Select {
        arms: Vec<SelectArm>,
        biased: bool,
    },
    /// `switch`/`match` (Python `match`, Rust `match`, Go `switch`/type switch).
    Switch {
        subject: Option<ExprId>,
        cases: Vec<Case>,
    },
    /// A nested lexical block (`{ ... }` in Rust/JS/Go). Matters for the
    /// lifetime of Rust guards and JS `let`/`const`.
    Block(Block),
    /// A nested function definition (Python `def` inside a function, JS
    /// function declaration, Rust nested `fn`). Closures appear as expressions.
    FuncDef(FuncId),
    /// A class definition: its methods are separate functions.
    ClassDef(TypeId),
    /// Python `del x`, `del d[k]`, `del self.items[0]`: the targets are
    /// unbound or removed from their collection.
    Delete(Vec<ExprId>),
    /// Python `global x` / `nonlocal x`.
    Global {
        names: Vec<Str>,
        nonlocal: bool,
    },
    /// Go `mu.Lock()` style labeled statements, `pass`, type declarations...
    Pass,
}

impl StmtKind {
    /// A short name of the statement's kind (`"assign"`, `"for"`, `"del"`),
    /// for tests and dumps.
    pub fn short_name(&self) -> &'static str {
        match self {
            StmtKind::Expr(_) => "expr",
            StmtKind::Tail(_) => "tail",
            StmtKind::Assign { .. } => "assign",
            StmtKind::If { .. } => "if",
            StmtKind::While { .. } => "while",
            StmtKind::For { .. } => "for",
            StmtKind::Loop { .. } => "loop",
            StmtKind::Try { .. } => "try",
            StmtKind::With { .. } => "with",
            StmtKind::Return(_) => "return",
            StmtKind::Raise(_) => "raise",
            StmtKind::Break => "break",
            StmtKind::Continue => "continue",
            StmtKind::Defer(_) => "defer",
            StmtKind::Go(_) => "go",
            StmtKind::Select { .. } => "select",
            StmtKind::Switch { .. } => "switch",
            StmtKind::Block(_) => "block",
            StmtKind::FuncDef(_) => "funcdef",
            StmtKind::ClassDef(_) => "classdef",
            StmtKind::Delete(_) => "del",
            StmtKind::Global { .. } => "global",
            StmtKind::Pass => "pass",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssignOp {
    /// `=`, Go `=`.
    Plain,
    /// A declaration that introduces new bindings: `let`, `const`, `var`,
    /// Go `:=`, Python annotated assignment.
    Declare { mutable: bool },
    /// `+=`, `-=`, `|=`, ... (read-modify-write).
    Augmented(BinOp),
}

#[derive(Debug, Clone)]
pub struct Handler {
    /// The caught types, resolved to qualified names where possible
    /// (`asyncio.CancelledError`, `BaseException`); empty for bare `except:`
    /// and for JS `catch`.
    pub types: Vec<Str>,
    /// Python `except*` (exception groups).
    pub is_star: bool,
    pub name: Option<Str>,
    pub body: Block,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct WithItem {
    pub ctx: ExprId,
    pub target: Option<ExprId>,
}

#[derive(Debug, Clone)]
pub struct SelectArm {
    pub kind: ArmKind,
    pub body: Block,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum ArmKind {
    /// Go `case v := <-ch:` / `case <-ctx.Done():`. `channel` is the channel
    /// expression; `binding` the assigned target if any.
    Recv {
        channel: ExprId,
        binding: Option<ExprId>,
    },
    /// Go `case ch <- v:`.
    Send { channel: ExprId, value: ExprId },
    /// Go `default:` / tokio `else =>`.
    Default,
    /// A tokio/futures select arm `pattern = future => body`: the future
    /// expression (awaited implicitly) and the pattern.
    Future {
        future: ExprId,
        pattern: Option<ExprId>,
    },
}

#[derive(Debug, Clone)]
pub struct Case {
    /// Patterns or values; empty for `default`/`_`.
    pub patterns: Vec<ExprId>,
    pub body: Block,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum ExprKind {
    /// An identifier. `resolved` is the qualified name it refers to through
    /// imports or module-level definitions (`time` -> `time`, `sleep` ->
    /// `time.sleep` after `from time import sleep`), `None` for locals and
    /// unknown names.
    Name {
        id: Str,
        resolved: Option<Str>,
    },
    /// `obj.name` (also Rust `a::b` paths and Go `pkg.Name` selectors).
    /// `resolved` is set when the whole chain resolves to a qualified name
    /// (`os.path.exists`, `std::sync::atomic::Ordering::Relaxed`).
    Attr {
        obj: ExprId,
        name: Str,
        resolved: Option<Str>,
    },
    /// A Rust path that is not a method chain (`Ordering::Relaxed`), already
    /// resolved through `use`. Same shape as a resolved `Name`.
    Path {
        text: Str,
        resolved: Option<Str>,
    },
    /// Boxed: calls are common but large, and every other expression
    /// would pay for their size.
    Call(Box<Call>),
    /// `await x` / `x.await`.
    Await(ExprId),
    Literal(Lit),
    Unary {
        op: UnOp,
        operand: ExprId,
    },
    Binary {
        op: BinOp,
        left: ExprId,
        right: ExprId,
    },
    /// `and`/`or`/`&&`/`||`/`??`.
    Logical {
        op: LogicalOp,
        left: ExprId,
        right: ExprId,
    },
    /// `a if c else b`, `c ? a : b`.
    Ternary {
        cond: ExprId,
        then: ExprId,
        orelse: ExprId,
    },
    /// List/tuple/set/array literals, object/dict/struct literals (values in
    /// `elems`, keys in `keys` when present: `keys.len() == elems.len()` for
    /// dicts/objects, empty otherwise).
    Collection {
        kind: CollKind,
        elems: Vec<ExprId>,
        keys: Vec<Option<Str>>,
        /// For Go composite literals / Rust struct literals: the type
        /// (boxed to keep every expression small).
        ty: Option<Box<TypeRef>>,
    },
    /// Comprehensions and generator expressions: `[f(x) for x in xs if c]`.
    Comprehension {
        kind: CollKind,
        elt: ExprId,
        generators: Vec<ComprehensionFor>,
    },
    /// `a[i]`.
    Index {
        obj: ExprId,
        index: ExprId,
    },
    /// A lambda / arrow / closure / Go func literal / async block: the body
    /// is a separate [`Function`].
    Closure(FuncId),
    /// A Rust block in expression position (`let x = { ... }`, `if`/`match`
    /// used as a value, `unsafe {}`): the statements, with the tail
    /// expression as a final `StmtKind::Expr`.
    Block(Block),
    /// Rust `let PAT = VALUE` inside `if let`/`while let`.
    Let {
        pattern: ExprId,
        value: ExprId,
    },
    /// Go `<-ch`.
    Recv(ExprId),
    /// Go `ch <- v` (a statement in Go, an expression here so it can appear
    /// in select arms and expression statements uniformly).
    Send {
        channel: ExprId,
        value: ExprId,
    },
    /// An assignment used as an expression: JS `a = b` in an expression,
    /// Python walrus `(a := b)`.
    AssignExpr {
        target: ExprId,
        value: ExprId,
        op: AssignOp,
    },
    /// `*xs`, `...xs`.
    Spread(ExprId),
    /// `yield x` / `yield from x` / `yield* x`.
    Yield(Option<ExprId>),
    /// `x?` in Rust (propagates errors; the value passes through).
    Try(ExprId),
    /// `x as T`, `x!` (TS), `x satisfies T`, type assertions: the value
    /// passes through unchanged.
    Cast(ExprId),
    /// Anything else, with its sub-expressions so walks stay complete.
    Other(Vec<ExprId>),
}

#[derive(Debug, Clone)]
pub struct ComprehensionFor {
    pub target: ExprId,
    pub iter: ExprId,
    pub conds: Vec<ExprId>,
    pub is_async: bool,
}

#[derive(Debug, Clone)]
pub struct Call {
    /// The callee expression as written (a `Name`, `Attr`, `Path`, or any
    /// expression for calls of computed values).
    pub func: ExprId,
    /// For method calls (`recv.method(...)`), the receiver expression.
    pub receiver: Option<ExprId>,
    /// The last segment of the callee name (`sleep` in `time.sleep`,
    /// `lock` in `m.lock()`), empty for computed callees.
    pub name: Str,
    /// What the callee resolves to, qualified (see the module docs). Set by
    /// the front end for imported/module-level names and by the semantic pass
    /// for methods of receivers with a known type.
    pub target: Option<Str>,
    pub args: Vec<Arg>,
    /// `new X(...)` in JS/TS.
    pub is_new: bool,
    /// A Rust macro invocation (`println!`, `tokio::select!` is lowered to a
    /// `Select` statement instead).
    pub is_macro: bool,
    /// The knowledge effects of the callee, filled in by the engine once the
    /// target is final; front ends leave it [`EffectSet::UNKNOWN`].
    pub effects: crate::knowledge::EffectSet,
}

impl Call {
    /// The value passed for keyword argument `name`.
    pub fn kwarg(&self, name: &str) -> Option<ExprId> {
        self.args
            .iter()
            .find(|a| a.name.as_deref() == Some(name))
            .map(|a| a.value)
    }

    /// The `i`-th positional argument (keyword arguments are skipped).
    pub fn positional(&self, i: usize) -> Option<ExprId> {
        self.args
            .iter()
            .filter(|a| a.name.is_none() && !a.spread)
            .nth(i)
            .map(|a| a.value)
    }

    pub fn has_spread(&self) -> bool {
        self.args.iter().any(|a| a.spread)
    }
}

#[derive(Debug, Clone)]
pub struct Arg {
    /// Keyword name (Python `maxsize=10`); `None` for positional.
    pub name: Option<Str>,
    pub value: ExprId,
    /// `*args` / `...args`.
    pub spread: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Lit {
    /// Integers that fit in 64 bits (larger ones are `Other`).
    Int(i64),
    Float(f64),
    Str(Str),
    Bool(bool),
    /// `None`, `null`, `undefined`, `nil`, `()`.
    Null,
    /// Template strings, byte strings, regexes, `...`.
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    Not,
    Neg,
    /// Rust `*x`, Go `*p`.
    Deref,
    /// Rust `&x`/`&mut x`, Go `&x`.
    Ref,
    /// JS `void x`: an explicit discard.
    Void,
    /// JS `typeof`/`delete`, `~`, `+x`...
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    /// Bitwise and shifts.
    Bit,
    Eq,
    NotEq,
    Lt,
    LtE,
    Gt,
    GtE,
    /// Python `is`/`is not`, JS `===`/`!==` (strict), `instanceof`.
    Is,
    IsNot,
    /// Python `in`/`not in`, JS `in`.
    In,
    NotIn,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogicalOp {
    And,
    Or,
    /// JS `??`.
    Coalesce,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollKind {
    List,
    Tuple,
    Set,
    /// Python dict, JS object literal, Go map literal.
    Dict,
    /// Go composite literal / Rust struct literal.
    Struct,
    /// A generator expression.
    Generator,
}

#[cfg(test)]
mod size {
    /// Every expression of a scan is kept in memory until its rules have
    /// run, so its size is most of a scan's peak memory: large payloads are
    /// boxed (calls, struct-literal types) and this guards against growth.
    #[test]
    fn expressions_stay_small() {
        assert!(std::mem::size_of::<super::Expr>() <= 72);
    }
}

#[cfg(test)]
mod names {
    use super::Language;

    #[test]
    fn the_last_segment_is_split_at_the_languages_separator() {
        let py = Language::Python;
        assert_eq!(py.split_last_segment("a.b.c"), ("a.b", "c"));
        assert_eq!(py.split_last_segment("c"), ("", "c"));
        assert_eq!(py.split_last_segment("a::b"), ("", "a::b"));
        assert_eq!(Language::Go.split_last_segment("ö.ß"), ("ö", "ß"));
        let rs = Language::Rust;
        assert_eq!(
            rs.split_last_segment("std::sync::Mutex"),
            ("std::sync", "Mutex")
        );
        assert_eq!(rs.split_last_segment("a.b"), ("", "a.b"));
    }
}
