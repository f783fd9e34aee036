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
//! lowered straight from their tokens).
//!
//! A body with a parse error in it fails alone too when the parser came to
//! it at a clean statement start (past the `;` after the body before it,
//! at the function body's level). But an error in one body can leave the
//! parser confused about the next, so a body near an error that the parser
//! did not come to cleanly is not judged from that parse: those bodies are
//! parsed again in a second snippet where each is a function of its own,
//! `fn __f(){__m(BODY\n);}fn __f(){...}`, exactly the snippet the one-by-one
//! path would parse: a body is a balanced token tree, so each function ends
//! at its own closing brace and one body's errors stay in its function.
//! Bodies that parse there are lowered from it; the others are known not to
//! parse as arguments, and the one-by-one path does not parse them again
//! (it may still try another form, as for `vec![x; n]`). Tracing macros
//! (`info!(target: "t", user = %id, "msg")`) do not parse as arguments and
//! are common: parsing each on its own again cost a tenth of the Rust
//! corpus's time. A body with tracing's `%`/`?` sigil where an argument
//! starts is known to fail before any parse (the tree builder flags it) and
//! stays out of the snippet.

use crate::parse::{self, MacroBody};
use ra_ap_syntax::AstNode;
use ra_ap_syntax::ast::{self, HasArgList, HasModuleItem};
use ra_ap_syntax::{Edition, NodeOrToken, SyntaxKind, SyntaxNode};
use rustc_hash::{FxHashMap, FxHashSet};

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
    /// Keep the snippet trees alive for the calls below.
    _roots: Vec<SyntaxNode>,
    /// By the file offset where the macro body starts.
    pub calls: FxHashMap<u32, BatchedCall>,
    /// Bodies that do not parse as arguments on their own, as (file offset,
    /// length).
    pub failed: FxHashSet<(u32, u32)>,
}

#[derive(Clone, Copy)]
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
    let mut failed = FxHashSet::default();
    for b in bodies.iter().filter(|b| !b.simple) {
        let Some(body) = text.get(b.start as usize..b.end as usize) else {
            continue;
        };
        if b.not_arguments {
            failed.insert((b.start, body.len() as u32));
            continue;
        }
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
    let mut batch = ArgBatch {
        _roots: Vec::new(),
        calls: FxHashMap::default(),
        failed,
    };
    if pieces.is_empty() {
        return (!batch.failed.is_empty()).then_some(batch);
    }
    *budget = budget.saturating_sub(snippet.len());
    snippet.push('}');
    let parsed = parse::parse_in(&snippet, edition);
    mark_dirty(&mut pieces, &parsed.errors);
    let list = super::Lowerer::snippet_fn_body(&parsed.root);
    if let Some(list) = &list {
        take_calls(&mut batch, &pieces, list.statements());
    }
    let ended = list.map_or_else(|| vec![false; pieces.len()], |l| ended_exactly(&pieces, &l));
    // A dirty piece the parser entered at a clean statement start (the
    // first, or after a piece that left the parser at one) has the error in
    // its own tokens: alone, it parses the same way and fails the same way.
    // Only the others need a parse of their own.
    let mut unsure = Vec::new();
    for (k, p) in pieces.iter().enumerate() {
        if !p.dirty {
            continue;
        }
        if k == 0 || ended[k - 1] {
            batch.failed.insert((p.file, p.len));
        } else {
            unsure.push(*p);
        }
    }
    batch._roots.push(parsed.root);
    isolate_dirty(text, &unsure, edition, budget, &mut batch);
    Some(batch)
}

/// For each piece, whether the parser is back at the start of a statement
/// of the snippet's function body once past the piece: the `;` the snippet
/// put after the body ends a statement of that body, or is one (after
/// an error the parser may have skipped `)` and stopped at the `;`). The
/// next piece is then parsed as it would be alone.
fn ended_exactly(pieces: &[Piece], list: &ast::StmtList) -> Vec<bool> {
    // Where the body's own `;`s are, in one pass over its children (a
    // lookup by offset per piece would scan the children each time).
    let mut ends: FxHashSet<u32> = FxHashSet::default();
    for child in list.syntax().children_with_tokens() {
        let semi = match child {
            NodeOrToken::Token(t) => Some(t),
            NodeOrToken::Node(n) => n.last_token(),
        };
        if let Some(t) = semi.filter(|t| t.kind() == SyntaxKind::SEMICOLON) {
            ends.insert(u32::from(t.text_range().start()));
        }
    }
    pieces
        .iter()
        .map(|p| ends.contains(&(p.snippet + p.len + (CLOSE.len() as u32 - 1))))
        .collect()
}

/// Marks the pieces an error of the snippet may come from: the one whose
/// `__m(BODY\n);` holds it, and the next one when it is in that one's
/// opening `__m(`.
fn mark_dirty(pieces: &mut [Piece], errors: &[(u32, u32, String)]) {
    for (start, _, _) in errors {
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
}

/// Records the `__m(..)` calls of the clean pieces among `stmts`, found by
/// where their argument list opens.
fn take_calls(batch: &mut ArgBatch, pieces: &[Piece], stmts: impl Iterator<Item = ast::Stmt>) {
    let by_snippet: FxHashMap<u32, usize> = pieces
        .iter()
        .enumerate()
        .map(|(i, p)| (p.snippet, i))
        .collect();
    for s in stmts {
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
            batch.calls.insert(
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

/// Parses `pieces` again, each in a function of its own (see the module
/// docs), and records each as a call or as failed.
fn isolate_dirty(
    text: &str,
    pieces: &[Piece],
    edition: Edition,
    budget: &mut usize,
    batch: &mut ArgBatch,
) {
    let mut snippet = String::new();
    let mut isolated: Vec<Piece> = Vec::new();
    for p in pieces {
        let Some(body) = text.get(p.file as usize..(p.file + p.len) as usize) else {
            continue;
        };
        if snippet.len() + body.len() > *budget {
            break;
        }
        snippet.push_str(PREFIX);
        snippet.push_str(OPEN);
        let at = snippet.len() as u32;
        snippet.push_str(body);
        snippet.push_str(CLOSE);
        snippet.push('}');
        isolated.push(Piece {
            file: p.file,
            snippet: at,
            len: p.len,
            dirty: false,
        });
    }
    if isolated.is_empty() {
        return;
    }
    *budget = budget.saturating_sub(snippet.len());
    let parsed = parse::parse_in(&snippet, edition);
    // Each error belongs to the function it is in: the last piece opened
    // before it.
    // (An error in a function's opening `fn __f(){__m(` would be the
    // previous one's spilling over: both are marked.)
    let opening = (PREFIX.len() + OPEN.len()) as u32;
    for (start, _, _) in &parsed.errors {
        let i = isolated.partition_point(|p| p.snippet <= *start);
        if i > 0 {
            isolated[i - 1].dirty = true;
        }
        if i < isolated.len() && isolated[i].snippet - opening <= *start {
            isolated[i].dirty = true;
        }
    }
    for p in isolated.iter().filter(|p| p.dirty) {
        batch.failed.insert((p.file, p.len));
    }
    if let Some(file) = ast::SourceFile::cast(parsed.root.clone()) {
        let stmts = file.items().filter_map(|i| match i {
            ast::Item::Fn(f) => f.body()?.stmt_list(),
            _ => None,
        });
        take_calls(batch, &isolated, stmts.flat_map(|l| l.statements()));
    }
    batch._roots.push(parsed.root);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bodies a batch lowers from a parse, and those it knows fail, as
    /// texts.
    fn outcome(text: &str) -> (Vec<&str>, Vec<&str>) {
        let p = parse::parse(text);
        let batch = build(text, &p.macro_bodies, p.edition, &mut 100_000).unwrap();
        let at = |start: u32, len: u32| &text[start as usize..(start + len) as usize];
        let mut ok: Vec<_> = batch
            .calls
            .iter()
            .map(|(&s, c)| (s, at(s, c.len)))
            .collect();
        let mut failed: Vec<_> = batch.failed.iter().map(|&(s, l)| (s, at(s, l))).collect();
        ok.sort();
        failed.sort();
        (
            ok.into_iter().map(|(_, t)| t).collect(),
            failed.into_iter().map(|(_, t)| t).collect(),
        )
    }

    #[test]
    fn a_body_beside_one_that_does_not_parse_is_still_lowered_and_the_bad_one_is_known() {
        // Field syntax of tracing macros is not Rust expression syntax.
        let text = "fn f() { a!(b(1), 2); info!(user = %id, \"x {}\", c(2)); assert_eq!(d(3), 4); e!(g(); 1); h!(k(5)) }";
        let (ok, failed) = outcome(text);
        assert_eq!(ok, ["b(1), 2", "d(3), 4", "k(5)"]);
        assert_eq!(failed, ["user = %id, \"x {}\", c(2)", "g(); 1"]);
    }

    #[test]
    fn each_isolated_body_parses_as_it_would_alone() {
        // Whatever a bad body does to the parser, the next one parses as it
        // would on its own: compare with one-body snippets.
        let bodies = [
            "user = %id, \"x\"",
            "a(1), 2",
            "x =>",
            "b(2)",
            "1 + , 2",
            "c(3).await",
            "if x { y } else",
            "d(4)",
            "target: \"t\", ?v",
            "a; b",
            "e(5)",
            "let x = 1",
            "fn",
            "f(6)",
            "|x|",
            "1 2 3",
            "g(7)",
            "match x { 1 => }",
            "struct S;",
            "h(8), [1, 2]",
            "x as",
            "return",
            "k(9)",
            "impl X for Y {}",
            "&mut",
            "m(10)",
            ", , ,",
            "n(11)",
            "%x",
            "p(12)",
            "a = ?b, c(1)",
            "q(13)",
            "x, %y.z()",
            "r(14)",
            "a? + b, c?",
            "s(15)",
            "(a >> b) % c, 0",
            "t(16)",
            "[a][0]? , x = {y} % z",
            "u(17)",
        ];
        let text: String = std::iter::once("fn f() {".to_string())
            .chain(bodies.iter().map(|b| format!(" m!({b});")))
            .chain(std::iter::once(" }".to_string()))
            .collect();
        let (ok, failed) = outcome(&text);
        for b in bodies {
            let alone = parse::parse_in(&format!("{PREFIX}{OPEN}{b}{CLOSE}}}"), EDITION_FOR_TESTS);
            let parses = alone.errors.is_empty();
            assert_eq!(ok.contains(&b), parses, "{b}");
            assert_eq!(failed.contains(&b), !parses, "{b}");
        }
    }

    const EDITION_FOR_TESTS: Edition = parse::EDITION;

    /// The macro bodies a parse recorded, as texts, each with one of its
    /// flags.
    fn recorded<'t>(
        text: &'t str,
        p: &parse::Parsed,
        flag: fn(&MacroBody) -> bool,
    ) -> Vec<(&'t str, bool)> {
        p.macro_bodies
            .iter()
            .map(|b| (&text[b.start as usize..b.end as usize], flag(b)))
            .collect()
    }

    #[test]
    fn tracing_fields_are_known_not_to_parse_without_a_parse() {
        let text = "fn f() { info!(user = %id, \"x\"); debug!(?req, n = m.len()); warn!(a = b?, c); assert_eq!((a >> s) % n, 0) }";
        let p = parse::parse(text);
        assert_eq!(
            recorded(text, &p, |b| b.not_arguments),
            vec![
                ("user = %id, \"x\"", true),
                ("?req, n = m.len()", true),
                ("a = b?, c", false),
                ("(a >> s) % n, 0", false),
            ]
        );
        let (ok, failed) = outcome(text);
        assert_eq!(ok, ["a = b?, c", "(a >> s) % n, 0"]);
        assert_eq!(failed, ["user = %id, \"x\"", "?req, n = m.len()"]);
        // Only `warn!`'s and `assert_eq!`'s bodies went into the snippet.
        let mut budget = 1000;
        build(text, &p.macro_bodies, p.edition, &mut budget).unwrap();
        let piece = |b: &str| OPEN.len() + b.len() + CLOSE.len();
        assert_eq!(
            1000 - budget,
            PREFIX.len() + piece("a = b?, c") + piece("(a >> s) % n, 0")
        );

        // With nothing left to parse, the batch still says they fail.
        let text = "fn f() { info!(user = %id, \"x\") }";
        let p = parse::parse(text);
        let mut budget = 1000;
        let batch = build(text, &p.macro_bodies, p.edition, &mut budget).unwrap();
        assert_eq!(budget, 1000);
        assert_eq!(batch.failed.len(), 1);
    }

    #[test]
    fn records_bodies_and_batches_the_non_simple_ones() {
        let text = "fn f() { println!(\"{}\", x); assert_eq!(a(1), 2); v = vec![g(); 3]; m! { h() } w!(); }";
        let p = parse::parse(text);
        assert_eq!(
            recorded(text, &p, |b| b.simple),
            vec![("\"{}\", x", true), ("a(1), 2", false), ("g(); 3", false)]
        );
        let mut budget = 1000;
        let batch = build(text, &p.macro_bodies, p.edition, &mut budget).unwrap();
        // `vec![g(); 3]` does not parse as arguments, on its own either: it
        // is known to fail (the one-by-one path tries it as an array).
        assert_eq!(batch.calls.len(), 1);
        let vec_body = text.find("g(); 3").unwrap() as u32;
        assert!(batch.failed.contains(&(vec_body, 6)));
        let at = text.find("a(1)").unwrap() as u32;
        let c = &batch.calls[&at];
        assert_eq!(c.len, 7);
        assert!(budget < 1000);
    }
}
