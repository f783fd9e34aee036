//! Macro invocations.
//!
//! The parser leaves a macro's input as an opaque token tree. We recover
//! what matters by re-parsing pieces of it as Rust, wrapped in a small
//! snippet (`fn __f(){__m(` + ARGS + `\n);}`), and lowering the snippet's
//! nodes with their offsets mapped back into the file:
//! - `tokio::select!` / `futures::select!` become `StmtKind::Select`, each arm
//!   `pattern = future [, if cond] => handler` parsed piece by piece;
//! - expression-like macros (`println!`, `vec!`, `tokio::join!`, `assert!`...)
//!   become calls with `is_macro` whose arguments are the comma-separated
//!   expressions (none when the input does not parse as such);
//! - `thread_local!` / `lazy_static!` / `task_local!` bodies are lowered as
//!   the `static` items they declare.

use super::expr::{is_literal_token, literal_token};
use super::stmt::Tail;
use super::{Lowerer, ResolvedPath, node_text};
use crate::parse;
use ra_ap_syntax::ast::{self, AstNode, BinaryOp, HasArgList, HasModuleItem};
use ra_ap_syntax::{NodeOrToken, SyntaxElement, SyntaxKind, SyntaxNode, T, TextRange, TextSize};
use unsnarl_model::{
    Arg, ArmKind, Block, Call, ExprId, ExprKind, SelectArm, Span, StmtId, StmtKind,
};

/// Nested re-parses (a macro inside a re-parsed macro...) we follow.
const MAX_REPARSE_DEPTH: u32 = 8;

/// Macros whose input is not run-time expressions.
const NO_ARGS: &[&str] = &[
    "stringify",
    "concat_idents",
    "quote",
    "quote_spanned",
    "parse_quote",
    "cfg",
    "compile_error",
    "env",
    "option_env",
    "include",
    "include_str",
    "include_bytes",
    "asm",
    "global_asm",
    "naked_asm",
    "module_path",
];

/// Macros whose body is a list of `static` items.
const ITEM_MACROS: &[&str] = &["thread_local", "lazy_static", "task_local"];

/// Logging macros, for `#[macro_use] extern crate log/tracing;`.
const LOG_MACROS: &[&str] = &[
    "trace", "debug", "info", "warn", "error", "log", "event", "span",
];

impl Lowerer {
    /// The macro's path, resolved: single names through `macro_rules!`,
    /// imports, std's macros and `#[macro_use]` crates.
    fn macro_path(&mut self, mc: &ast::MacroCall) -> ResolvedPath {
        let Some(path) = mc.path() else {
            return ResolvedPath::unknown();
        };
        let single = path.qualifier().is_none()
            && path
                .segment()
                .is_some_and(|s| s.coloncolon_token().is_none());
        if !single {
            return self.resolve_path(&path, false);
        }
        let name = path
            .segment()
            .and_then(|s| s.name_ref())
            .map(|n| node_text(n.syntax()))
            .unwrap_or_default();
        let resolved = self.scopes.lookup_macro(&name).or_else(|| {
            if !LOG_MACROS.contains(&name.as_str()) {
                return None;
            }
            self.macro_use
                .iter()
                .find(|c| matches!(c.as_str(), "log" | "tracing"))
                .map(|c| format!("{c}::{name}"))
        });
        ResolvedPath {
            text: name.to_string(),
            last: name,
            resolved,
            single: true,
        }
    }

    /// A macro call in expression position.
    pub(super) fn lower_macro_expr(&mut self, mc: &ast::MacroCall) -> ExprId {
        let rp = self.macro_path(mc);
        let span = self.span(mc.syntax());
        if let Some(biased) = select_kind(&rp) {
            let s = self.lower_select(mc, biased, Tail::Value, span);
            return self.stmt_as_expr(s, span);
        }
        self.macro_call_expr(mc, rp)
    }

    /// A macro call in statement position (or a block's tail).
    pub(super) fn lower_macro_stmt(
        &mut self,
        mc: &ast::MacroCall,
        tail: Tail,
        span: Span,
        out: &mut Block,
    ) {
        let rp = self.macro_path(mc);
        if let Some(biased) = select_kind(&rp) {
            out.push(self.lower_select(mc, biased, tail, span));
            return;
        }
        if ITEM_MACROS.contains(&rp.last.as_str()) {
            self.reparse_items(mc, rp.last == "lazy_static", out);
            return;
        }
        let e = self.macro_call_expr(mc, rp);
        let kind = tail.wrap(e);
        out.push(self.m.add_stmt(kind, span));
    }

    /// A macro call in item position (module level, impl, or a block item).
    pub(super) fn lower_item_macro(&mut self, mc: &ast::MacroCall, out: &mut Block) {
        let span = self.item_span(mc.syntax());
        self.lower_macro_stmt(mc, Tail::Discard, span, out);
    }

    fn macro_call_expr(&mut self, mc: &ast::MacroCall, rp: ResolvedPath) -> ExprId {
        let span = self.span(mc.syntax());
        let fspan = mc.path().map(|p| self.span(p.syntax())).unwrap_or(span);
        let func = self.m.add_expr(
            if rp.single {
                ExprKind::Name {
                    id: rp.text.clone().into(),
                    resolved: rp.resolved.clone().map(Into::into),
                }
            } else {
                ExprKind::Path {
                    text: rp.text.clone().into(),
                    resolved: rp.resolved.clone().map(Into::into),
                }
            },
            fspan,
        );
        let name = rp.last.as_str();
        let args = match mc.token_tree() {
            Some(tt) if !NO_ARGS.contains(&name) => match tt_content(&tt) {
                Some((_, SyntaxKind::L_CURLY)) | None => Vec::new(),
                Some((range, _)) if name == "vec" => self.reparse_vec(&tt, range),
                Some((range, _)) if name == "matches" => {
                    // `matches!(expr, PATTERN)`: only the first argument is
                    // an expression.
                    let end = top_level_elems(&tt)
                        .iter()
                        .find(|e| e.kind() == SyntaxKind::COMMA)
                        .map(|c| c.text_range().start())
                        .unwrap_or(range.end());
                    self.reparse_args_range(&tt, TextRange::new(range.start(), end), false)
                }
                Some((range, _)) => self.reparse_args_range(&tt, range, false),
            },
            _ => Vec::new(),
        };
        let call = Call {
            func,
            receiver: None,
            name: rp.last.as_str().into(),
            target: rp.resolved.map(Into::into),
            args,
            is_new: false,
            is_macro: true,
            effects: unsnarl_model::EffectSet::UNKNOWN,
        };
        self.m.add_expr(ExprKind::Call(Box::new(call)), span)
    }

    // ----- re-parsing -----

    /// Parses `prefix + piece + suffix`, where `piece` is the text at
    /// `piece_start` in the tree being lowered, and runs `f` on the root with
    /// spans mapped back to the file. `None` when over budget or (unless
    /// `allow_errors`) when the snippet does not parse cleanly.
    fn reparse<R>(
        &mut self,
        prefix: &str,
        piece: &str,
        piece_start: TextSize,
        suffix: &str,
        allow_errors: bool,
        f: impl FnOnce(&mut Self, &SyntaxNode) -> R,
    ) -> Option<R> {
        if self.reparse_depth >= MAX_REPARSE_DEPTH || piece.len() > self.reparse_budget {
            return None;
        }
        self.reparse_budget -= piece.len();
        let mut snippet = String::with_capacity(prefix.len() + piece.len() + suffix.len());
        snippet.push_str(prefix);
        snippet.push_str(piece);
        snippet.push_str(suffix);
        let parsed = parse::parse_in(&snippet, self.edition);
        if !allow_errors && !parsed.errors.is_empty() {
            return None;
        }
        let shift = i64::from(u32::from(piece_start)) - prefix.len() as i64;
        let len = piece.len() as i64;
        Some(self.in_snippet(shift, prefix.len() as i64, len, |l| f(l, &parsed.root)))
    }

    /// Runs `f` on nodes of a snippet tree: `shift` maps snippet offsets to
    /// offsets of the tree being lowered, and the piece at `start` (snippet
    /// offset) of length `len` is where spans are clipped.
    fn in_snippet<R>(
        &mut self,
        shift: i64,
        start: i64,
        len: i64,
        f: impl FnOnce(&mut Self) -> R,
    ) -> R {
        let (saved_shift, saved_clip) = (self.shift, self.clip);
        let file_start = start + shift + saved_shift;
        let lo = file_start.clamp(i64::from(saved_clip.0), i64::from(saved_clip.1));
        let hi = (file_start + len).clamp(lo, i64::from(saved_clip.1));
        self.shift = saved_shift + shift;
        self.clip = (lo as u32, hi as u32);
        self.reparse_depth += 1;
        let r = f(self);
        self.reparse_depth -= 1;
        self.shift = saved_shift;
        self.clip = saved_clip;
        r
    }

    /// The batched parse of a macro body starting at `range` in the main
    /// tree, if there is one.
    fn batched(&self, range: TextRange) -> Option<(ast::CallExpr, i64)> {
        if self.reparse_depth != 0 || self.shift != 0 {
            return None;
        }
        let b = self.batch.as_ref()?.calls.get(&u32::from(range.start()))?;
        (b.len == u32::from(range.len())).then(|| (b.call.clone(), b.shift))
    }

    /// Whether the body at `range` of the main tree was parsed on its own in
    /// the batch and did not parse as arguments.
    fn batch_failed(&self, range: TextRange) -> bool {
        self.reparse_depth == 0
            && self.shift == 0
            && self.batch.as_ref().is_some_and(|b| {
                b.failed
                    .contains(&(u32::from(range.start()), u32::from(range.len())))
            })
    }

    fn lower_batched<R>(
        &mut self,
        call: &ast::CallExpr,
        shift: i64,
        range: TextRange,
        f: impl FnOnce(&mut Self, Vec<ast::Expr>) -> R,
    ) -> R {
        let exprs: Vec<ast::Expr> = call
            .arg_list()
            .map(|a| a.args().collect())
            .unwrap_or_default();
        let start = i64::from(u32::from(range.start())) - shift;
        self.in_snippet(shift, start, i64::from(u32::from(range.len())), |l| {
            f(l, exprs)
        })
    }

    /// The comma-separated expressions of a token tree as call arguments.
    /// With `keywords`, `name = value` becomes a keyword argument (attribute
    /// arguments such as `flavor = "current_thread"`).
    pub(super) fn reparse_args(&mut self, tt: &ast::TokenTree, keywords: bool) -> Vec<Arg> {
        match tt_content(tt) {
            Some((range, _)) => self.reparse_args_range(tt, range, keywords),
            None => Vec::new(),
        }
    }

    fn reparse_args_range(
        &mut self,
        tt: &ast::TokenTree,
        range: TextRange,
        keywords: bool,
    ) -> Vec<Arg> {
        if range.is_empty() {
            return Vec::new();
        }
        if let Some(args) = self.simple_args(tt, range) {
            return args;
        }
        if let Some((call, shift)) = self.batched(range) {
            return self.lower_batched(&call, shift, range, |l, exprs| {
                exprs.iter().map(|e| l.lower_arg(e, keywords)).collect()
            });
        }
        if self.batch_failed(range) {
            // Parsed on its own in the batch already, with errors: the
            // re-parse below would give nothing.
            return Vec::new();
        }
        if usize::from(range.len()) > self.reparse_budget {
            return Vec::new();
        }
        let piece = text_in(tt.syntax(), range);
        self.reparse(
            "fn __f(){__m(",
            &piece,
            range.start(),
            "\n);}",
            false,
            |l, root| {
                let Some(call) = root.descendants().find_map(ast::CallExpr::cast) else {
                    return Vec::new();
                };
                let exprs: Vec<ast::Expr> = call
                    .arg_list()
                    .map(|a| a.args().collect())
                    .unwrap_or_default();
                exprs.iter().map(|e| l.lower_arg(e, keywords)).collect()
            },
        )
        .unwrap_or_default()
    }

    /// Arguments that are each a single literal or identifier
    /// (`println!("{}", x)`, the common case) are built straight from the
    /// tokens, without re-parsing.
    fn simple_args(&mut self, tt: &ast::TokenTree, range: TextRange) -> Option<Vec<Arg>> {
        let mut toks = Vec::new();
        let mut expect_arg = true;
        for el in top_level_elems(tt) {
            if !range.contains_range(el.text_range()) {
                continue;
            }
            let NodeOrToken::Token(t) = el else {
                return None;
            };
            let k = t.kind();
            if k == SyntaxKind::COMMA && !expect_arg {
                expect_arg = true;
            } else if expect_arg && (k == SyntaxKind::IDENT || k == T![self] || is_literal_token(k))
            {
                toks.push(t);
                expect_arg = false;
            } else {
                return None;
            }
        }
        let mut args = Vec::with_capacity(toks.len());
        for t in toks {
            let span = self.span_range(t.text_range());
            let kind = if is_literal_token(t.kind()) {
                ExprKind::Literal(literal_token(t))
            } else {
                let id = t.text().to_string();
                let resolved = if t.kind() == SyntaxKind::IDENT {
                    self.scopes.lookup_value(&id)
                } else {
                    None
                };
                ExprKind::Name {
                    id: id.into(),
                    resolved: resolved.map(Into::into),
                }
            };
            args.push(Arg {
                name: None,
                value: self.m.add_expr(kind, span),
                spread: false,
            });
        }
        Some(args)
    }

    fn lower_arg(&mut self, e: &ast::Expr, keywords: bool) -> Arg {
        if keywords
            && let ast::Expr::BinExpr(b) = e
            && let (
                Some(BinaryOp::Assignment { op: None }),
                (Some(ast::Expr::PathExpr(p)), Some(rhs)),
            ) = (b.op_kind(), b.sub_exprs())
        {
            let name = p
                .path()
                .filter(|p| p.qualifier().is_none())
                .and_then(|p| p.segment())
                .and_then(|s| s.name_ref())
                .map(|n| node_text(n.syntax()).to_string());
            if let Some(name) = name {
                return Arg {
                    name: Some(name.into()),
                    value: self.lower_expr(&rhs),
                    spread: false,
                };
            }
        }
        Arg {
            name: None,
            value: self.lower_expr(e),
            spread: false,
        }
    }

    /// `vec![a, b]` → args `a, b`; `vec![x; n]` → args `x, n`.
    fn reparse_vec(&mut self, tt: &ast::TokenTree, range: TextRange) -> Vec<Arg> {
        if range.is_empty() {
            return Vec::new();
        }
        // `vec![a, b]` parses like arguments; `vec![x; n]` does not.
        if let Some(args) = self.simple_args(tt, range) {
            return args;
        }
        if let Some((call, shift)) = self.batched(range) {
            return self.lower_batched(&call, shift, range, |l, exprs| {
                exprs.iter().map(|e| l.lower_arg(e, false)).collect()
            });
        }
        if usize::from(range.len()) > self.reparse_budget {
            return Vec::new();
        }
        let piece = text_in(tt.syntax(), range);
        self.reparse(
            "fn __f(){[",
            &piece,
            range.start(),
            "\n];}",
            false,
            |l, root| {
                let Some(arr) = root.descendants().find_map(ast::ArrayExpr::cast) else {
                    return Vec::new();
                };
                let exprs: Vec<ast::Expr> = arr
                    .syntax()
                    .children()
                    .filter_map(ast::Expr::cast)
                    .collect();
                exprs
                    .iter()
                    .map(|e| Arg {
                        name: None,
                        value: l.lower_expr(e),
                        spread: false,
                    })
                    .collect()
            },
        )
        .unwrap_or_default()
    }

    /// One expression out of a token tree piece.
    fn reparse_expr(&mut self, tt: &ast::TokenTree, range: TextRange) -> Option<ExprId> {
        if range.is_empty() {
            return None;
        }
        let piece = text_in(tt.syntax(), range);
        self.reparse(
            "fn __f(){__m(",
            &piece,
            range.start(),
            "\n);}",
            false,
            |l, root| {
                let call = root.descendants().find_map(ast::CallExpr::cast)?;
                let mut args = call.arg_list()?.args();
                let (Some(e), None) = (args.next(), args.next()) else {
                    return None;
                };
                Some(l.lower_expr(&e))
            },
        )
        .flatten()
    }

    /// A pattern out of a token tree piece; its names are bound.
    fn reparse_pat(&mut self, tt: &ast::TokenTree, range: TextRange) -> Option<ExprId> {
        if range.is_empty() {
            return None;
        }
        let piece = text_in(tt.syntax(), range);
        self.reparse(
            "fn __f(){let ",
            &piece,
            range.start(),
            " = ();}",
            false,
            |l, root| {
                let pat = root.descendants().find_map(ast::LetStmt::cast)?.pat()?;
                Some(l.lower_pat(&pat, true))
            },
        )
        .flatten()
    }

    /// A select arm's handler: a `{ block }` or an expression, lowered as
    /// statements into `out`.
    fn reparse_handler(
        &mut self,
        tt: &ast::TokenTree,
        range: TextRange,
        is_block: bool,
        tail: Tail,
        out: &mut Block,
    ) {
        if range.is_empty() {
            return;
        }
        let piece = text_in(tt.syntax(), range);
        let (prefix, suffix) = if is_block {
            ("fn __f()", "")
        } else {
            ("fn __f(){", "\n}")
        };
        self.reparse(prefix, &piece, range.start(), suffix, false, |l, root| {
            if let Some(list) = Self::snippet_fn_body(root) {
                out.extend(l.lower_stmt_list(&list, tail));
            }
        });
    }

    /// `thread_local! { static X: T = e; }` and friends: the statics.
    fn reparse_items(&mut self, mc: &ast::MacroCall, strip_ref: bool, out: &mut Block) {
        let Some(tt) = mc.token_tree() else { return };
        let Some((range, _)) = tt_content(&tt) else {
            return;
        };
        if range.is_empty() || usize::from(range.len()) > self.reparse_budget {
            return;
        }
        let mut piece = text_in(tt.syntax(), range).into_bytes();
        if strip_ref {
            // `static ref X: T = e;` (lazy_static) is not Rust: blank out the
            // `ref`s, keeping every offset in place.
            for el in top_level_elems(&tt) {
                if el.kind() == SyntaxKind::REF_KW {
                    let Some(r) = el.text_range().checked_sub(range.start()) else {
                        continue;
                    };
                    let (a, b) = (usize::from(r.start()), usize::from(r.end()));
                    if let Some(bytes) = piece.get_mut(a..b) {
                        bytes.fill(b' ');
                    }
                }
            }
        }
        let Ok(piece) = String::from_utf8(piece) else {
            return;
        };
        self.reparse("", &piece, range.start(), "\n", true, |l, root| {
            if let Some(file) = ast::SourceFile::cast(root.clone()) {
                let items: Vec<ast::Item> = file.items().collect();
                l.lower_items(&items, out);
            }
        });
    }

    // ----- select! -----

    fn lower_select(
        &mut self,
        mc: &ast::MacroCall,
        biased: bool,
        tail: Tail,
        span: Span,
    ) -> StmtId {
        let mut arms = Vec::new();
        let mut biased = biased;
        if let Some(tt) = mc.token_tree() {
            biased |= self.select_arms(&tt, tail, &mut arms);
        }
        self.m.add_stmt(StmtKind::Select { arms, biased }, span)
    }

    /// Splits a select body into arms:
    /// `[biased;] pat = fut [, if cond] => handler, ... [else => handler]`
    /// (futures' `default =>` / `complete =>` are default arms too).
    /// Returns whether it starts with `biased;`.
    fn select_arms(&mut self, tt: &ast::TokenTree, tail: Tail, arms: &mut Vec<SelectArm>) -> bool {
        let els = top_level_elems(tt);
        let n = els.len();
        let range = |a: usize, b: usize| -> TextRange {
            if b > a {
                TextRange::new(els[a].text_range().start(), els[b - 1].text_range().end())
            } else {
                TextRange::empty(
                    els.get(a)
                        .map_or(tt.syntax().text_range().end(), |e| e.text_range().start()),
                )
            }
        };
        let mut biased = false;
        let mut i = 0;
        if n >= 2 && is_ident(&els[0], "biased") && els[1].kind() == SyntaxKind::SEMICOLON {
            biased = true;
            i = 2;
        }
        while i < n {
            // The first `=` separates pattern and future; a `=>` before any
            // `=` starts a default arm.
            let Some(j) = (i..n).find(|&j| els[j].kind() == SyntaxKind::EQ) else {
                break;
            };
            let is_default = fat_arrow(&els, j);
            let (pieces, h) = if is_default {
                (None, j + 2)
            } else {
                let Some(k) = (j + 1..n).find(|&k| fat_arrow(&els, k)) else {
                    break;
                };
                let cond_at = (j + 1..k).find(|&c| {
                    els[c].kind() == SyntaxKind::COMMA
                        && els.get(c + 1).map(|e| e.kind()) == Some(SyntaxKind::IF_KW)
                });
                let fut = (j + 1, cond_at.unwrap_or(k));
                let cond = cond_at.map(|c| (c + 2, k));
                (Some(((i, j), fut, cond)), k + 2)
            };
            // A `{ block }` handler needs no comma after it.
            let block_handler = h < n && is_brace_tree(&els[h]);
            let hend = if block_handler {
                h + 1
            } else {
                (h.min(n)..n)
                    .find(|&c| els[c].kind() == SyntaxKind::COMMA)
                    .unwrap_or(n)
            };
            let next = match els.get(hend) {
                Some(e) if e.kind() == SyntaxKind::COMMA => hend + 1,
                Some(_) => hend,
                None => n,
            };

            self.scopes.push_block();
            let mut body = Vec::new();
            let kind = match pieces {
                None => ArmKind::Default,
                Some((pat, fut, cond)) => {
                    let fr = range(fut.0, fut.1);
                    let future = match self.reparse_expr(tt, fr) {
                        Some(f) => f,
                        None => {
                            let s = self.span_range(fr);
                            self.m.opaque(s)
                        }
                    };
                    if let Some((cs, ce)) = cond {
                        // `, if cond`: evaluated before the future is polled;
                        // the model has no slot for it, so it leads the body.
                        let cr = range(cs, ce);
                        if let Some(c) = self.reparse_expr(tt, cr) {
                            let s = self.span_range(cr);
                            body.push(self.m.add_stmt(StmtKind::Expr(c), s));
                        }
                    }
                    let pattern = self.reparse_pat(tt, range(pat.0, pat.1));
                    ArmKind::Future { future, pattern }
                }
            };
            if h < hend {
                self.reparse_handler(tt, range(h, hend), block_handler, tail, &mut body);
            }
            self.scopes.pop();
            let end = if hend > i { hend } else { (i + 1).min(n) };
            let span = self.span_range(range(i, end));
            arms.push(SelectArm { kind, body, span });
            if next <= i {
                break;
            }
            i = next;
        }
        biased
    }
}

/// A `tokio`/`futures` select macro: `Some(biased)`.
fn select_kind(rp: &ResolvedPath) -> Option<bool> {
    let r = rp.resolved.as_deref()?;
    let first = r.split("::").next()?;
    if !matches!(first, "tokio" | "futures" | "futures_util") {
        return None;
    }
    match r.rsplit("::").next()? {
        "select" => Some(false),
        "select_biased" => Some(true),
        _ => None,
    }
}

/// The range inside a token tree's delimiters, and its opening delimiter.
fn tt_content(tt: &ast::TokenTree) -> Option<(TextRange, SyntaxKind)> {
    let first = tt.syntax().first_token()?;
    let close = match first.kind() {
        SyntaxKind::L_PAREN => SyntaxKind::R_PAREN,
        SyntaxKind::L_BRACK => SyntaxKind::R_BRACK,
        SyntaxKind::L_CURLY => SyntaxKind::R_CURLY,
        _ => return None,
    };
    let start = first.text_range().end();
    let whole = tt.syntax().text_range();
    let end = match tt.syntax().last_token() {
        Some(last) if last != first && last.kind() == close => last.text_range().start(),
        _ => whole.end(),
    };
    Some((TextRange::new(start, end.max(start)), first.kind()))
}

/// The direct children of a token tree (tokens and nested trees), without
/// trivia and delimiters.
fn top_level_elems(tt: &ast::TokenTree) -> Vec<SyntaxElement> {
    let mut els: Vec<SyntaxElement> = tt
        .syntax()
        .children_with_tokens()
        .filter(|e| !e.kind().is_trivia())
        .collect();
    if els.first().is_some_and(|e| {
        matches!(
            e.kind(),
            SyntaxKind::L_PAREN | SyntaxKind::L_BRACK | SyntaxKind::L_CURLY
        )
    }) {
        els.remove(0);
    }
    if els.last().is_some_and(|e| {
        matches!(
            e.kind(),
            SyntaxKind::R_PAREN | SyntaxKind::R_BRACK | SyntaxKind::R_CURLY
        )
    }) {
        els.pop();
    }
    els
}

/// The text of the tokens of `node` inside `range`.
fn text_in(node: &SyntaxNode, range: TextRange) -> String {
    let mut s = String::with_capacity(usize::from(range.len()));
    for el in node.descendants_with_tokens() {
        if let NodeOrToken::Token(t) = el
            && range.contains_range(t.text_range())
        {
            s.push_str(t.text());
        }
    }
    s
}

/// `=>` in a token tree: `=` immediately followed by `>`.
fn fat_arrow(els: &[SyntaxElement], i: usize) -> bool {
    match (els.get(i), els.get(i + 1)) {
        (Some(a), Some(b)) => {
            a.kind() == SyntaxKind::EQ
                && b.kind() == SyntaxKind::R_ANGLE
                && a.text_range().end() == b.text_range().start()
        }
        _ => false,
    }
}

fn is_ident(el: &SyntaxElement, text: &str) -> bool {
    match el {
        NodeOrToken::Token(t) => t.kind() == SyntaxKind::IDENT && t.text() == text,
        NodeOrToken::Node(_) => false,
    }
}

fn is_brace_tree(el: &SyntaxElement) -> bool {
    match el {
        NodeOrToken::Node(n) => {
            n.kind() == SyntaxKind::TOKEN_TREE
                && n.first_token()
                    .is_some_and(|t| t.kind() == SyntaxKind::L_CURLY)
        }
        NodeOrToken::Token(_) => false,
    }
}
