//! Batched re-parsing of macro arguments.
//!
//! Most macro calls (`format!`, `assert_eq!`, `write!`, `vec!`...) take
//! comma-separated expressions that we re-parse to lower. Parsing each one on
//! its own costs a fixed overhead that dominated lowering, so before lowering
//! a file we take the bodies of all its `(..)`/`[..]` macro calls (recorded
//! by the parser's tree builder), parse them together as one snippet
//! `fn __f(){__m(BODY1\n);__m(BODY2\n);...}`, and remember, for each body that
//! parsed cleanly, its `__m(..)` call and the offset shift back to the file.
//! Bodies that are plain lists of names and literals are skipped (they are
//! lowered straight from their tokens), and bodies with parse errors are left
//! to the one-by-one path (which may try another form, as for `vec![x; n]`).

use crate::parse::{self, MacroBody};
use ra_ap_syntax::ast::{self, HasArgList};
use ra_ap_syntax::{Edition, SyntaxNode};
use rustc_hash::FxHashMap;

const PREFIX: &str = "fn __f(){";
const OPEN: &str = "__m(";
const CLOSE: &str = "\n);";

/// A macro body parsed in the batch.
pub(super) struct BatchedCall {
    pub call: ast::CallExpr,
    /// File offset minus snippet offset.
    pub shift: i64,
    pub len: u32,
}

pub(super) struct ArgBatch {
    /// Keeps the snippet tree alive for the calls below.
    _root: SyntaxNode,
    /// By the file offset where the macro body starts.
    pub calls: FxHashMap<u32, BatchedCall>,
}

struct Piece {
    file: u32,
    snippet: u32,
    len: u32,
    dirty: bool,
}

/// Builds the batch for a file from the macro bodies its parse recorded,
/// spending at most `budget` bytes.
pub(super) fn build(
    text: &str,
    bodies: &[MacroBody],
    edition: Edition,
    budget: &mut usize,
) -> Option<ArgBatch> {
    let mut snippet = String::from(PREFIX);
    let mut pieces: Vec<Piece> = Vec::new();
    for b in bodies.iter().filter(|b| !b.simple) {
        let Some(body) = text.get(b.start as usize..b.end as usize) else {
            continue;
        };
        if snippet.len() + body.len() > *budget {
            break;
        }
        snippet.push_str(OPEN);
        let at = snippet.len() as u32;
        snippet.push_str(body);
        snippet.push_str(CLOSE);
        pieces.push(Piece {
            file: b.start,
            snippet: at,
            len: body.len() as u32,
            dirty: false,
        });
    }
    if pieces.is_empty() {
        return None;
    }
    *budget = budget.saturating_sub(snippet.len());
    snippet.push('}');
    let parsed = parse::parse_in(&snippet, edition);
    for (start, _, _) in &parsed.errors {
        // The piece whose `__m(BODY\n);` holds the error.
        let i = pieces.partition_point(|p| p.snippet <= *start);
        if i > 0 {
            let p = &mut pieces[i - 1];
            if *start <= p.snippet + p.len + CLOSE.len() as u32 {
                p.dirty = true;
            }
        }
        if i < pieces.len() && pieces[i].snippet - (OPEN.len() as u32) <= *start {
            pieces[i].dirty = true;
        }
    }
    let by_snippet: FxHashMap<u32, usize> = pieces
        .iter()
        .enumerate()
        .map(|(i, p)| (p.snippet, i))
        .collect();
    let mut calls = FxHashMap::default();
    if let Some(list) = super::Lowerer::snippet_fn_body(&parsed.root) {
        for s in list.statements() {
            let ast::Stmt::ExprStmt(es) = s else { continue };
            let Some(ast::Expr::CallExpr(call)) = es.expr() else {
                continue;
            };
            let Some(open) = call.arg_list().and_then(|a| a.l_paren_token()) else {
                continue;
            };
            let at = u32::from(open.text_range().end());
            let Some(&i) = by_snippet.get(&at) else {
                continue;
            };
            let p = &pieces[i];
            if !p.dirty {
                calls.insert(
                    p.file,
                    BatchedCall {
                        call,
                        shift: i64::from(p.file) - i64::from(p.snippet),
                        len: p.len,
                    },
                );
            }
        }
    }
    Some(ArgBatch {
        _root: parsed.root,
        calls,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_bodies_and_batches_the_non_simple_ones() {
        let text = "fn f() { println!(\"{}\", x); assert_eq!(a(1), 2); v = vec![g(); 3]; m! { h() } w!(); }";
        let p = parse::parse(text);
        let bodies: Vec<(&str, bool)> = p
            .macro_bodies
            .iter()
            .map(|b| (&text[b.start as usize..b.end as usize], b.simple))
            .collect();
        assert_eq!(
            bodies,
            vec![("\"{}\", x", true), ("a(1), 2", false), ("g(); 3", false)]
        );
        let mut budget = 1000;
        let batch = build(text, &p.macro_bodies, p.edition, &mut budget).unwrap();
        // `vec![g(); 3]` does not parse as arguments: left to the one-by-one path.
        assert_eq!(batch.calls.len(), 1);
        let at = text.find("a(1)").unwrap() as u32;
        let c = &batch.calls[&at];
        assert_eq!(c.len, 7);
        assert!(budget < 1000);
    }
}
