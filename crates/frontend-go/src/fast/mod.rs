//! The fast path: a hand-written recursive-descent Go parser that builds
//! the file model directly, with no syntax tree in between.
//!
//! It produces exactly what the tree-sitter path (`crate::lower`) produces
//! for the same file, conventions, spans and ordering included, and where
//! the two grammars disagree it follows what tree-sitter-go builds (which
//! shape `X[T](v)` takes, `new`/`make` type arguments, case spans that
//! include the newline after the last statement...). It only takes files it
//! understands completely: on any syntax error, on nesting that the
//! tree-sitter lowering would cut off at `MAX_NESTING`, or on anything
//! unusual, it gives up (`None`) and the caller lowers the file with
//! tree-sitter, whose error recovery is better.
//!
//! Most of the model is built in source order. Where the tree-sitter
//! lowering goes out of order, so does this parser: `x := v` lowers `v`
//! before the names exist (a lookahead finds the identifier list first),
//! the post statement of a `for` clause is lowered after the body, and
//! function ids are renumbered when closures end up created in the other
//! order.

mod expr;
mod lexer;
mod stmt;
mod types;

use crate::resolve::{FxMap, Local, PkgDecl, Resolution, Scopes, builtins, default_import_name};
use lexer::{T, Tok, Tokens};
use std::cell::RefCell;
use unsnarl_model::builder::MAX_NESTING;
use unsnarl_model::{
    Block, ExprId, ExprKind, FileModel, FnKind, FuncId, Function, Import, Lit, Param, Span,
    StmtKind, TypeRef,
};

/// Gives up on the file (it goes to tree-sitter).
#[derive(Debug)]
pub(crate) struct Bail;
type R<T> = Result<T, Bail>;

/// How deep the tree-sitter lowering may nest before it cuts off sub-trees;
/// this parser gives up a little earlier, so that its own count (which may
/// run slightly ahead) never lets a cut-off file through.
const LIMIT: u32 = MAX_NESTING - 8;

/// The most names tree-sitter keeps in one parameter declaration (`a, b,
/// ... int`); earlier identifiers of a longer list become unnamed
/// parameters of that type (the limit of its parallel parses).
const MAX_GROUP: usize = 9;

/// How deeply types may nest (they do not count towards `MAX_NESTING` in
/// the tree-sitter lowering, but they recurse here).
const TYPE_LIMIT: u32 = 100;

/// A parsed expression: the model node and the extent of its syntax
/// (which includes parentheses the model looks through).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ex {
    pub id: ExprId,
    pub s: u32,
    pub e: u32,
}

pub(crate) use types::{Ty, TyId, TyK};

thread_local! {
    /// Token buffers reused across files on a worker thread.
    static TOKENS: RefCell<Tokens> = RefCell::new(Tokens::default());
}

/// Lowers `m` (already named, flagged test/generated) from `src`, or
/// `None` when the file should go to tree-sitter.
pub(crate) fn lower(src: &str, m: FileModel) -> Option<FileModel> {
    TOKENS.with(|cell| {
        let mut fresh = Tokens::default();
        let mut guard = cell.try_borrow_mut();
        let tokens: &mut Tokens = match guard.as_mut() {
            Ok(t) => t,
            Err(_) => &mut fresh,
        };
        lexer::lex(src, tokens).ok()?;
        // The arenas were reserved from the file's length when the model
        // was made (`FileModel::reserve_nodes`): reserving again from the
        // token count would copy the whole reservation of every file.
        let mut p = Parser::new(src, m, tokens);
        p.file().ok()?;
        Some(p.m)
    })
}

/// Where the fast parser gives up on a file (the byte offset of the token
/// it was at), for the differential tools; `None` when it takes the file.
pub(crate) fn bail_offset(src: &str, m: FileModel) -> Option<u32> {
    let mut tokens = Tokens::default();
    if lexer::lex(src, &mut tokens).is_err() {
        return Some(0);
    }
    let mut p = Parser::new(src, m, &tokens);
    match p.file() {
        Ok(()) => None,
        Err(_) => Some(p.tok().start),
    }
}

pub(crate) struct Parser<'s, 'k> {
    src: &'s str,
    toks: &'k [Tok],
    pair: &'k [u32],
    /// The current token.
    p: usize,
    pub(crate) m: FileModel,
    /// Package-level names: declarations of this file, imports and
    /// predeclared identifiers, in that order of precedence (see
    /// `FileScope::resolve`, which this mirrors with one lookup).
    globals: FxMap<&'s str, Global>,
    import_paths: Vec<String>,
    dot_imports: Vec<String>,
    scopes: Scopes<'s>,
    /// The nesting depth the tree-sitter lowering would be at (its count
    /// of `nested` frames), and the highest it reached in the expression
    /// being parsed (see `expr.rs` for chains).
    depth: u32,
    hwm: u32,
    tdepth: u32,
    cur_fn: FuncId,
    /// The qualified name local types are declared under.
    qual: String,
    tys: Vec<Ty>,
    /// Type argument lists of generic types: a count, then the ids.
    ty_lists: Vec<TyId>,
    /// Control clause headers: `T {` is not a composite literal there.
    no_lit: bool,
    /// Set while parsing a switch header, where `x.(type)` may appear.
    guard_ok: bool,
    /// The `x.(type)` guard seen: the operand expression.
    guard: Option<Ex>,
    /// The next type parsed may be `[...]T` (a composite literal's).
    implicit_ok: bool,
    /// The nesting depth at which to give up (`LIMIT`, or exactly
    /// `MAX_NESTING` while rebuilding a cut chain).
    limit: u32,
    /// Binary and postfix chains being built (0: the next binary chain is
    /// a statement's whole expression).
    chains_open: u32,
    /// The elements of the statement-level chain being built.
    chain_rec: Vec<expr::Elem>,
    /// Set when a statement-level chain is too deep: rebuild it.
    cut_pending: bool,
}

/// Arena lengths to roll back to.
#[derive(Clone, Copy)]
pub(crate) struct Mark {
    exprs: usize,
    stmts: usize,
    functions: usize,
    types: usize,
    p: usize,
    hwm: u32,
}

/// What a package-level name is.
#[derive(Clone, Copy)]
enum Global {
    Decl(PkgDecl),
    /// An import, by index into `import_paths`.
    Import(usize),
    Builtin,
}

/// `a.b` in one allocation.
pub(crate) fn dotted(a: &str, b: &str) -> String {
    let mut s = String::with_capacity(a.len() + 1 + b.len());
    s.push_str(a);
    s.push('.');
    s.push_str(b);
    s
}

/// The receiver of a method, as the tree-sitter lowering reads it.
struct Receiver<'s> {
    name: Option<&'s str>,
    type_name: &'s str,
    type_params: Vec<&'s str>,
}

/// One entry of a parameter list before grouping.
#[derive(Clone, Copy)]
enum Item {
    /// A lone identifier: a parameter name or a type name.
    Bare(usize),
    /// `name T`.
    Named(usize, TyId),
    /// `[name] ...T`: the name token, the start, the type.
    Variadic(Option<usize>, u32, TyId),
    /// A type.
    Type(TyId),
}

/// What a parameter list declares, in order.
struct ParamDecl {
    names: Vec<usize>,
    ty: TyId,
    variadic: bool,
    start: u32,
}

impl<'s, 'k> Parser<'s, 'k> {
    fn new(src: &'s str, m: FileModel, tokens: &'k Tokens) -> Parser<'s, 'k> {
        let qual = m.module.clone();
        Parser {
            src,
            toks: &tokens.toks,
            pair: &tokens.pair,
            p: 0,
            m,
            globals: FxMap::default(),
            import_paths: Vec::new(),
            dot_imports: Vec::new(),
            scopes: Scopes::default(),
            depth: 0,
            hwm: 0,
            tdepth: 0,
            cur_fn: FuncId(0),
            qual: qual.to_string(),
            tys: Vec::new(),
            ty_lists: Vec::new(),
            no_lit: false,
            guard_ok: false,
            guard: None,
            implicit_ok: false,
            limit: LIMIT,
            chains_open: 0,
            chain_rec: Vec::new(),
            cut_pending: false,
        }
    }

    // ----- tokens -----

    #[inline]
    fn k(&self) -> T {
        self.toks[self.p].kind
    }

    #[inline]
    fn kn(&self, n: usize) -> T {
        self.toks.get(self.p + n).map_or(T::Eof, |t| t.kind)
    }

    #[inline]
    fn kat(&self, i: usize) -> T {
        self.toks.get(i).map_or(T::Eof, |t| t.kind)
    }

    #[inline]
    fn tok(&self) -> Tok {
        self.toks[self.p]
    }

    #[inline]
    fn next(&mut self) -> Tok {
        let t = self.toks[self.p];
        if self.p + 1 < self.toks.len() {
            self.p += 1;
        }
        t
    }

    #[inline]
    fn expect(&mut self, k: T) -> R<Tok> {
        if self.k() == k {
            Ok(self.next())
        } else {
            Err(Bail)
        }
    }

    #[inline]
    fn eat(&mut self, k: T) -> bool {
        if self.k() == k {
            self.next();
            true
        } else {
            false
        }
    }

    #[inline]
    fn txt(&self, t: Tok) -> &'s str {
        &self.src[t.start as usize..t.end as usize]
    }

    #[inline]
    fn ti(&self, i: usize) -> &'s str {
        self.txt(self.toks[i])
    }

    fn slice(&self, s: u32, e: u32) -> &'s str {
        &self.src[s as usize..e as usize]
    }

    /// The partner of the bracket at token `i`.
    #[inline]
    fn partner(&self, i: usize) -> usize {
        self.pair[i] as usize
    }

    /// A statement or declaration separator: `;` (written or inserted),
    /// or nothing before a closing brace / parenthesis / end of input.
    fn semi(&mut self) -> R<()> {
        match self.k() {
            T::Semi => {
                self.next();
                Ok(())
            }
            T::RParen | T::RBrace | T::Eof => Ok(()),
            _ => Err(Bail),
        }
    }

    // ----- nesting -----

    pub(crate) fn mark(&self) -> Mark {
        Mark {
            exprs: self.m.exprs.len(),
            stmts: self.m.stmts.len(),
            functions: self.m.functions.len(),
            types: self.m.types.len(),
            p: self.p,
            hwm: self.hwm,
        }
    }

    /// Forgets everything built since `mark` (scopes are balanced by then).
    pub(crate) fn rollback(&mut self, mark: Mark) {
        self.m.exprs.truncate(mark.exprs);
        self.m.stmts.truncate(mark.stmts);
        self.m.functions.truncate(mark.functions);
        self.m.types.truncate(mark.types);
        self.p = mark.p;
        self.hwm = mark.hwm;
        self.guard = None;
    }

    /// One `nested` frame of the tree-sitter lowering.
    #[inline]
    fn enter(&mut self) -> R<()> {
        if self.depth >= self.limit {
            return Err(Bail);
        }
        self.depth += 1;
        if self.depth > self.hwm {
            self.hwm = self.depth;
        }
        Ok(())
    }

    #[inline]
    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Runs `f` one frame deeper.
    #[inline]
    fn nested<X>(&mut self, f: impl FnOnce(&mut Self) -> R<X>) -> R<X> {
        self.enter()?;
        let r = f(self);
        self.leave();
        r
    }

    // ----- the model -----

    fn module_qual(&self, name: &str) -> String {
        dotted(&self.m.module, name)
    }

    /// How an identifier resolves (`FileScope::resolve` of the tree-sitter
    /// path).
    pub(crate) fn res(&self, name: &str) -> Resolution<'_> {
        if name == "_" || name.is_empty() {
            return Resolution::Unknown;
        }
        if let Some(l) = self.scopes.lookup(name) {
            return Resolution::Local(*l);
        }
        match self.globals.get(name) {
            Some(Global::Decl(d)) => return Resolution::Module(Some(*d)),
            Some(Global::Import(i)) => return Resolution::Package(&self.import_paths[*i]),
            Some(Global::Builtin) => return Resolution::Builtin,
            None => {}
        }
        if !self.dot_imports.is_empty() && name.chars().next().is_some_and(char::is_uppercase) {
            return match self.dot_imports.as_slice() {
                [one] => Resolution::DotImport(one),
                _ => Resolution::Unknown,
            };
        }
        Resolution::Module(None)
    }

    fn add_expr(&mut self, kind: ExprKind, s: u32, e: u32) -> Ex {
        let id = self.m.add_expr(kind, Span::new(s, e));
        Ex { id, s, e }
    }

    fn add_stmt(&mut self, out: &mut Block, kind: StmtKind, s: u32, e: u32) {
        out.push(self.m.add_stmt(kind, Span::new(s, e)));
    }

    // ----- the file -----

    fn file(&mut self) -> R<()> {
        self.expect(T::Package)?;
        let name = self.expect(T::Ident)?;
        if self.m.module == "." {
            // See `crate::lower`: a file at the scan root is named by its
            // package clause.
            self.m.module = self.txt(name).into();
            self.qual = self.m.module.to_string();
        }
        self.semi()?;
        for b in builtins() {
            self.globals.insert(b, Global::Builtin);
        }
        while self.k() == T::Import {
            self.import_decl()?;
            self.semi()?;
        }
        self.prescan()?;
        let mut body = Block::new();
        while self.k() != T::Eof {
            match self.k() {
                T::Func => {
                    let start = self.tok().start;
                    let id = self.func_decl()?;
                    let end = self.m.func(id).span.end;
                    self.add_stmt(&mut body, StmtKind::FuncDef(id), start, end);
                }
                T::Var | T::Const | T::Type => {
                    self.stmt(&mut body)?;
                }
                _ => return Err(Bail),
            }
            self.semi()?;
        }
        self.m.functions[0].body = body;
        Ok(())
    }

    fn import_decl(&mut self) -> R<()> {
        self.expect(T::Import)?;
        if self.eat(T::LParen) {
            while self.k() != T::RParen {
                self.import_spec()?;
                self.semi()?;
            }
            self.next();
            Ok(())
        } else {
            self.import_spec()
        }
    }

    fn import_spec(&mut self) -> R<()> {
        let first = self.tok();
        let name = match first.kind {
            T::Ident | T::Period => Some(self.next()),
            _ => None,
        };
        let path_tok = self.next();
        let path = match self.string_value(path_tok) {
            Some(p) => p,
            None => return Err(Bail),
        };
        if path.is_empty() {
            return Ok(());
        }
        let local = match name {
            None => default_import_name(&path).to_string(),
            Some(n) if n.kind == T::Period => {
                self.dot_imports.push(path.clone());
                "*".to_string()
            }
            Some(n) if self.txt(n) == "_" => return Ok(()),
            Some(n) => self.txt(n).to_string(),
        };
        if local != "*" {
            // The local name borrows from the source when written there.
            let key: &'s str = match name {
                Some(n) => self.txt(n),
                None => match self.src.find(local.as_str()) {
                    Some(at) => &self.src[at..at + local.len()],
                    None => return Err(Bail),
                },
            };
            self.globals
                .insert(key, Global::Import(self.import_paths.len()));
            self.import_paths.push(path.clone());
        }
        self.m.imports.push(Import {
            local: local.into(),
            target: path.into(),
            span: Span::new(first.start, path_tok.end),
        });
        Ok(())
    }

    /// The value of a string literal token.
    fn string_value(&self, t: Tok) -> Option<String> {
        let lit = match t.kind {
            T::Str => crate::literal::interpreted_string(self.txt(t)),
            T::RawStr => crate::literal::raw_string(self.txt(t)),
            _ => return None,
        };
        match lit {
            Lit::Str(s) => Some(s.to_string()),
            _ => None,
        }
    }

    /// Package-level names of this file, before anything is lowered (Go
    /// allows using them above their declaration): functions, types,
    /// variables and constants.
    fn prescan(&mut self) -> R<()> {
        let toks = self.toks;
        let mut i = self.p;
        while i < toks.len() {
            match toks[i].kind {
                T::LParen | T::LBrack | T::LBrace => i = self.partner(i) + 1,
                T::Func => {
                    if toks[i + 1].kind == T::Ident {
                        self.globals
                            .insert(self.ti(i + 1), Global::Decl(PkgDecl::Func));
                    }
                    i += 1;
                }
                T::Type | T::Var | T::Const => {
                    let kind = toks[i].kind;
                    let specs = if toks[i + 1].kind == T::LParen {
                        let close = self.partner(i + 1);
                        let mut starts = vec![i + 2];
                        let mut j = i + 2;
                        while j < close {
                            match toks[j].kind {
                                T::LParen | T::LBrack | T::LBrace => j = self.partner(j),
                                T::Semi => starts.push(j + 1),
                                _ => {}
                            }
                            j += 1;
                        }
                        i = close + 1;
                        starts
                    } else {
                        i += 1;
                        vec![i]
                    };
                    for mut j in specs {
                        if kind == T::Type {
                            if toks[j].kind == T::Ident {
                                self.globals
                                    .insert(self.ti(j), Global::Decl(PkgDecl::Type(None)));
                            }
                            continue;
                        }
                        while toks[j].kind == T::Ident {
                            let name = self.ti(j);
                            if name != "_" {
                                self.globals.insert(name, Global::Decl(PkgDecl::Var));
                            }
                            if toks[j + 1].kind != T::Comma {
                                break;
                            }
                            j += 2;
                        }
                    }
                }
                T::Eof => break,
                _ => i += 1,
            }
        }
        Ok(())
    }

    // ----- functions -----

    fn func_decl(&mut self) -> R<FuncId> {
        let ftok = self.expect(T::Func)?;
        let is_method = self.k() == T::LParen;
        let recv = if is_method { self.receiver()? } else { None };
        let name_tok = self.expect(T::Ident)?;
        let name = self.txt(name_tok);
        let mut func = Function::new(
            if is_method {
                FnKind::Method
            } else {
                FnKind::Function
            },
            Span::new(ftok.start, name_tok.end),
        );
        func.name = name.into();
        func.name_span = Span::new(name_tok.start, name_tok.end);
        func.parent = Some(self.cur_fn);
        match &recv {
            Some(r) => {
                let class = self.module_qual(r.type_name);
                func.qualname = dotted(&class, name).into();
                func.class = Some(class.into());
                func.receiver = r.name.map(Into::into);
            }
            None if is_method => {
                // `func () m()`: a receiver list without a receiver.
                func.qualname = self.module_qual(name).into();
            }
            None => {
                func.qualname = self.module_qual(name).into();
                func.is_test = self.m.is_test && crate::lower::is_test_func_name(name);
            }
        }
        let qual = func.qualname.clone();
        let id = self.m.add_function(func);
        let saved_fn = std::mem::replace(&mut self.cur_fn, id);
        let saved_qual = std::mem::replace(&mut self.qual, qual.to_string());
        self.scopes.push();
        let r = (|| {
            if let Some(r) = &recv {
                if let Some(name) = r.name {
                    self.scopes.declare(name);
                }
                for tp in &r.type_params {
                    self.scopes.declare_as(tp, Local::TypeParam);
                }
            }
            if !is_method && self.k() == T::LBrack {
                self.type_params()?;
            }
            self.signature_and_body(id, true)
        })();
        self.scopes.pop();
        self.cur_fn = saved_fn;
        self.qual = saved_qual;
        r?;
        Ok(id)
    }

    /// Parameters, results and body of the current function `id`. The
    /// body is optional for declarations (assembly functions).
    fn signature_and_body(&mut self, id: FuncId, body_optional: bool) -> R<()> {
        let params = self.params(true)?;
        let mut end = self.toks[self.p - 1].end;
        let returns = if self.k() == T::LParen {
            let start = self.tok().start;
            let ps = self.params(true)?;
            end = self.toks[self.p - 1].end;
            let resolved = match ps.as_slice() {
                [one] => one.ty.as_ref().and_then(|t| t.resolved.clone()),
                _ => None,
            };
            Some(TypeRef {
                text: self.slice(start, end).into(),
                resolved,
            })
        } else if types::starts_type(self.k()) {
            let t = self.parse_type()?;
            end = self.tys[t.ix()].end;
            Some(self.type_ref(t))
        } else {
            None
        };
        let body = if self.k() == T::LBrace {
            let b = self.nested(|this| this.block())?;
            end = b.1;
            b.0
        } else if body_optional {
            Block::new()
        } else {
            return Err(Bail);
        };
        let func = self.m.func_mut(id);
        func.params = params;
        func.returns = returns;
        func.body = body;
        func.span.end = end;
        Ok(())
    }

    /// A func literal (the current token is `func`).
    fn func_literal(&mut self) -> R<Ex> {
        let ftok = self.expect(T::Func)?;
        let mut func = Function::new(FnKind::Closure, Span::new(ftok.start, ftok.end));
        func.name_span = Span::new(ftok.start, ftok.end);
        func.parent = Some(self.cur_fn);
        func.is_test = self.m.functions[self.cur_fn.index()].is_test;
        let id = self.m.add_function(func);
        let saved_fn = std::mem::replace(&mut self.cur_fn, id);
        let saved_lit = std::mem::replace(&mut self.no_lit, false);
        self.scopes.push();
        let r = self.signature_and_body(id, false);
        self.scopes.pop();
        self.cur_fn = saved_fn;
        self.no_lit = saved_lit;
        r?;
        let end = self.m.func(id).span.end;
        Ok(self.add_expr(ExprKind::Closure(id), ftok.start, end))
    }

    /// `[T any, K comparable]`: the names are declared as type parameters.
    fn type_params(&mut self) -> R<()> {
        self.expect(T::LBrack)?;
        loop {
            let mut names = vec![self.expect(T::Ident)?];
            while self.k() == T::Comma && self.kn(1) == T::Ident && self.kn(2) != T::RBrack {
                // `K, V any` (another name) vs `K any, V any` (a constraint
                // follows): a name is followed by `,` or a type.
                if !matches!(self.kn(2), T::Comma | T::Tilde) && !types::starts_type(self.kn(2)) {
                    break;
                }
                self.next();
                names.push(self.next());
            }
            self.type_elem()?;
            for n in names {
                let name = self.txt(n);
                self.scopes.declare_as(name, Local::TypeParam);
            }
            if self.eat(T::Comma) {
                if self.k() == T::RBrack {
                    break;
                }
                continue;
            }
            break;
        }
        self.expect(T::RBrack)?;
        Ok(())
    }

    /// A method receiver `(name *T[P])`.
    fn receiver(&mut self) -> R<Option<Receiver<'s>>> {
        self.expect(T::LParen)?;
        if self.eat(T::RParen) {
            return Ok(None);
        }
        let name = if self.k() == T::Ident && matches!(self.kn(1), T::Ident | T::Mul | T::LParen) {
            Some(self.next())
        } else {
            None
        };
        let ty = self.parse_type()?;
        self.eat(T::Comma);
        self.expect(T::RParen)?;
        let mut cur = ty;
        let mut type_params = Vec::new();
        loop {
            let t = self.tys[cur.ix()];
            match t.kind {
                TyK::Pointer | TyK::Paren => cur = TyId(t.a),
                TyK::Generic => {
                    for elem in self.ty_list(t.b) {
                        for member in self.elem_members(elem) {
                            let m = self.tys[member.ix()];
                            type_params.push(self.slice(m.start, m.end));
                        }
                    }
                    cur = TyId(t.a);
                }
                TyK::Name => break,
                _ => return Err(Bail),
            }
        }
        let t = self.tys[cur.ix()];
        Ok(Some(Receiver {
            name: name.map(|n| self.txt(n)).filter(|n| !n.is_empty()),
            type_name: self.slice(t.start, t.end),
            type_params,
        }))
    }

    /// A parameter list `(...)`. With `lower`, its parameters as the model
    /// records them, declared (after all types are read) in the current
    /// scope; otherwise only checked.
    fn params(&mut self, lower: bool) -> R<Vec<Param>> {
        self.expect(T::LParen)?;
        let mut items: Vec<Item> = Vec::new();
        while self.k() != T::RParen {
            let item = self.param_item()?;
            items.push(item);
            if !self.eat(T::Comma) {
                break;
            }
        }
        self.expect(T::RParen)?;
        let decls = self.group_params(&items)?;
        if !lower {
            return Ok(Vec::new());
        }
        let mut out = Vec::with_capacity(items.len());
        let mut seen: Vec<&'s str> = Vec::new();
        for d in &decls {
            let t = self.tys[d.ty.ix()];
            if d.variadic {
                let name = d.names.first().map(|&n| self.toks[n]);
                let from = name.map_or(d.start, |n| n.end);
                let text = self.slice(from, t.end).trim();
                let name = name.map_or("", |n| self.txt(n));
                seen.push(name);
                out.push(Param {
                    name: name.into(),
                    ty: Some(TypeRef {
                        text: text.into(),
                        resolved: None,
                    }),
                    default: None,
                    span: Span::new(d.start, t.end),
                });
                continue;
            }
            let ty = self.type_ref(d.ty);
            if d.names.is_empty() {
                out.push(Param {
                    name: String::new().into(),
                    ty: Some(ty),
                    default: None,
                    span: Span::new(t.start, t.end),
                });
                continue;
            }
            for &n in &d.names {
                let nt = self.toks[n];
                let text = self.txt(nt);
                seen.push(text);
                out.push(Param {
                    name: text.into(),
                    ty: Some(ty.clone()),
                    default: None,
                    span: Span::new(nt.start, nt.end),
                });
            }
        }
        for name in seen {
            self.scopes.declare(name);
        }
        Ok(out)
    }

    fn param_item(&mut self) -> R<Item> {
        match self.k() {
            T::Ident => {
                let i = self.p;
                match self.kn(1) {
                    T::Period => Ok(Item::Type(self.parse_type()?)),
                    T::Comma | T::RParen => {
                        self.next();
                        Ok(Item::Bare(i))
                    }
                    T::Ellipsis => {
                        self.next();
                        let start = self.next().start;
                        let _ = start;
                        let ty = self.parse_type()?;
                        Ok(Item::Variadic(Some(i), self.toks[i].start, ty))
                    }
                    T::LBrack => {
                        // `a []T` / `a [N]T` (a name and an array type)
                        // or `G[T]` (a generic type).
                        let close = self.partner(i + 1);
                        if close == i + 2 || types::starts_type(self.kat(close + 1)) {
                            self.next();
                            Ok(Item::Named(i, self.parse_type()?))
                        } else {
                            Ok(Item::Type(self.parse_type()?))
                        }
                    }
                    k if types::starts_type(k) => {
                        self.next();
                        Ok(Item::Named(i, self.parse_type()?))
                    }
                    _ => Err(Bail),
                }
            }
            T::Ellipsis => {
                let start = self.next().start;
                let ty = self.parse_type()?;
                Ok(Item::Variadic(None, start, ty))
            }
            _ => Ok(Item::Type(self.parse_type()?)),
        }
    }

    /// Groups list entries into declarations the way Go (and tree-sitter)
    /// does: in a list with any `name T` entry, lone identifiers are names
    /// sharing the next type; otherwise every entry is a type.
    fn group_params(&mut self, items: &[Item]) -> R<Vec<ParamDecl>> {
        let named = items
            .iter()
            .any(|i| matches!(i, Item::Named(..) | Item::Variadic(Some(_), ..)));
        let mut out = Vec::with_capacity(items.len());
        if named {
            let mut pending: Vec<usize> = Vec::new();
            for item in items {
                match *item {
                    Item::Bare(i) => pending.push(i),
                    Item::Named(i, ty) => {
                        pending.push(i);
                        // tree-sitter keeps at most 9 names in one
                        // declaration: the ones before are read as types.
                        if pending.len() > MAX_GROUP {
                            let extra = pending.len() - MAX_GROUP;
                            for &n in &pending[..extra] {
                                let t = self.toks[n];
                                let ty = self.add_ty(TyK::Name, t.start, t.end, 0, 0);
                                out.push(ParamDecl {
                                    names: Vec::new(),
                                    ty,
                                    variadic: false,
                                    start: t.start,
                                });
                            }
                            pending.drain(..extra);
                        }
                        let start = self.toks[pending[0]].start;
                        out.push(ParamDecl {
                            names: std::mem::take(&mut pending),
                            ty,
                            variadic: false,
                            start,
                        });
                    }
                    Item::Variadic(Some(i), start, ty) if pending.is_empty() => {
                        out.push(ParamDecl {
                            names: vec![i],
                            ty,
                            variadic: true,
                            start,
                        });
                    }
                    _ => return Err(Bail),
                }
            }
            if !pending.is_empty() {
                return Err(Bail);
            }
        } else {
            for item in items {
                match *item {
                    Item::Bare(i) => {
                        let t = self.toks[i];
                        let ty = self.add_ty(TyK::Name, t.start, t.end, 0, 0);
                        out.push(ParamDecl {
                            names: Vec::new(),
                            ty,
                            variadic: false,
                            start: t.start,
                        });
                    }
                    Item::Type(ty) => out.push(ParamDecl {
                        names: Vec::new(),
                        ty,
                        variadic: false,
                        start: self.tys[ty.ix()].start,
                    }),
                    Item::Variadic(None, start, ty) => out.push(ParamDecl {
                        names: Vec::new(),
                        ty,
                        variadic: true,
                        start,
                    }),
                    _ => return Err(Bail),
                }
            }
        }
        Ok(out)
    }

    /// Renumbers functions `[a, c)` so that those created from `b` on come
    /// first: the tree-sitter lowering creates them in that order when it
    /// lowers a later part of a statement first (the right-hand side of an
    /// assignment, a `for` body before its post statement). `exprs_from`
    /// is the first expression created for the earlier part.
    fn rotate_functions(&mut self, a: usize, b: usize, c: usize, exprs_from: usize) {
        if a == b || b == c {
            return;
        }
        let map = |id: FuncId| -> FuncId {
            let i = id.index();
            if i < a || i >= c {
                id
            } else if i >= b {
                FuncId((i - b + a) as u32)
            } else {
                FuncId((i + (c - b)) as u32)
            }
        };
        self.m.functions[a..c].rotate_left(b - a);
        for f in &mut self.m.functions[a..c] {
            if let Some(p) = f.parent {
                f.parent = Some(map(p));
            }
        }
        for e in &mut self.m.exprs[exprs_from..] {
            if let ExprKind::Closure(f) = &mut e.kind {
                *f = map(*f);
            }
        }
    }
}

/// The first token kinds of an expression.
pub(crate) fn starts_expr(k: T) -> bool {
    matches!(
        k,
        T::Ident
            | T::Int
            | T::Float
            | T::Imag
            | T::Rune
            | T::Str
            | T::RawStr
            | T::LParen
            | T::LBrack
            | T::Func
            | T::Map
            | T::Chan
            | T::Struct
            | T::Interface
            | T::Add
            | T::Sub
            | T::Not
            | T::Xor
            | T::Mul
            | T::And
            | T::Arrow
    )
}

/// Identifiers tree-sitter reads as literals in expressions.
pub(crate) fn is_literal_word(s: &str) -> bool {
    matches!(s, "nil" | "true" | "false" | "iota")
}
