//! Parsing a text into a rust-analyzer syntax tree.
//!
//! This mirrors `ra_ap_syntax::SourceFile::parse` but builds the green tree
//! ourselves instead of going through `ra_ap_syntax::Parse`: dropping a
//! `Parse` sends the tree to a background "ParseNodeDropper" thread that runs
//! with the default 2 MiB stack, and freeing a deeply nested tree (ten
//! thousand nested blocks or generic types) recurses deep enough to overflow
//! it and abort the process. A tree built here is freed on the caller's thread,
//! which the pipeline gives a 256 MiB stack.
//!
//! We also do not use rowan's `GreenNodeBuilder`: its node cache rehashes
//! whole subtrees (recursively) whenever its table grows, which makes
//! building a deeply nested tree quadratic — seconds for ten thousand nested
//! generic types. [`Builder`] assembles green nodes directly and shares
//! short tokens and small nodes through caches keyed by kind, text and the
//! identity of the children, which never hash a subtree twice. Most tokens
//! are punctuation, keywords and indentation: sharing them cut the CPU time
//! on the benchmark's Rust corpus by about 15% and its peak memory by about
//! a third.

use ra_ap_syntax::{Edition, NodeOrToken, SyntaxKind, SyntaxNode};
use rowan::{GreenNode, GreenToken};
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::{Hash, Hasher};

/// A parsed text: the root node (`SOURCE_FILE`) and the parser's and lexer's
/// errors as `(start, end, message)` byte ranges into the text.
pub(crate) struct Parsed {
    pub root: SyntaxNode,
    pub errors: Vec<(u32, u32, String)>,
    /// The `(..)`/`[..]` bodies of macro calls, recorded while building the
    /// tree (see `lower/batch.rs`, which re-parses them together).
    pub macro_bodies: Vec<MacroBody>,
    /// The edition the text parsed under (macro bodies are re-parsed with it).
    pub edition: Edition,
}

/// The inside of a macro call's token tree, without its delimiters.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MacroBody {
    pub start: u32,
    pub end: u32,
    /// Only names and literals separated by commas (`println!("{}", x)`):
    /// lowered straight from the tokens, not worth re-parsing.
    pub simple: bool,
    /// A `%` or `?` where an argument starts (`info!(user = %id, ?req)`,
    /// tracing's field syntax): no Rust expression starts with either, so
    /// the body cannot parse as arguments, and re-parsing it is wasted.
    pub not_arguments: bool,
}

/// The edition we parse with first. It knows `async` closures, `gen` blocks
/// and let chains, and nearly all older code parses the same under it.
pub(crate) const EDITION: Edition = Edition::Edition2024;

/// The editions tried, in order, when a file does not parse under
/// [`EDITION`], each only if the text uses a word that edition reads as a
/// name: `gen` is a keyword only since 2024 (2015-2021 code calls
/// `rng.gen()`, `mod gen;`), `try`, `async`, `await` and `dyn` only since
/// 2018 (2015 code defines and calls `try!`).
const OLDER_EDITIONS: [(Edition, &[&str]); 2] = [
    (Edition::Edition2021, &["gen"]),
    (Edition::Edition2015, &["try", "async", "await", "dyn"]),
];

/// Parses a whole file: under [`EDITION`], and again under an older edition
/// when that fails and the text uses a word the older one does not reserve;
/// the parse with the fewest errors wins (a manifest's `edition` is not
/// read: the tree may be a bare directory, and the retries cost only files
/// with errors).
pub(crate) fn parse(text: &str) -> Parsed {
    let mut best = parse_in(text, EDITION);
    for (edition, words) in OLDER_EDITIONS {
        if best.errors.is_empty() {
            break;
        }
        if !words.iter().any(|w| mentions_word(text, w)) {
            continue;
        }
        let older = parse_in(text, edition);
        if older.errors.len() < best.errors.len() {
            best = older;
        }
    }
    best
}

/// `word` as a whole word somewhere in the text.
fn mentions_word(text: &str, word: &str) -> bool {
    let b = text.as_bytes();
    let n = word.len();
    let is_word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    text.match_indices(word)
        .any(|(i, _)| (i == 0 || !is_word(b[i - 1])) && b.get(i + n).is_none_or(|&c| !is_word(c)))
}

/// Parses a text under one edition.
pub(crate) fn parse_in(text: &str, edition: Edition) -> Parsed {
    let lexed = ra_ap_parser::LexedStr::new(edition, text);
    let input = lexed.to_input(edition);
    let output = ra_ap_parser::TopEntryPoint::SourceFile.parse(&input);

    let mut builder = Builder::default();
    let mut errors = Vec::new();
    lexed.intersperse_trivia(&output, &mut |step| match step {
        ra_ap_parser::StrStep::Token { kind, text } => builder.token(kind, text),
        ra_ap_parser::StrStep::Enter { kind } => builder.start_node(kind),
        ra_ap_parser::StrStep::Exit => builder.finish_node(),
        ra_ap_parser::StrStep::Error { msg, pos } => {
            let pos = clamp_u32(pos);
            errors.push((pos, pos, msg.to_owned()));
        }
    });
    for (i, msg) in lexed.errors() {
        let r = lexed.text_range(i);
        errors.push((clamp_u32(r.start), clamp_u32(r.end), msg.to_owned()));
    }
    let macro_bodies = std::mem::take(&mut builder.macro_bodies);
    let green = builder.finish();
    Parsed {
        root: SyntaxNode::new_root(green),
        errors,
        macro_bodies,
        edition,
    }
}

/// The parser's stages without a tree, for the benchmark that splits the
/// front end's cost: lexing alone (`parse = false`), or lexing and the
/// parser's event stream (no tree built). Returns the number of tokens or
/// events, so that the work cannot be optimized away.
pub(crate) fn lex_and_parse_only(text: &str, parse: bool) -> usize {
    let lexed = ra_ap_parser::LexedStr::new(EDITION, text);
    if !parse {
        return lexed.len();
    }
    let input = lexed.to_input(EDITION);
    ra_ap_parser::TopEntryPoint::SourceFile
        .parse(&input)
        .iter()
        .count()
}

fn raw(kind: SyntaxKind) -> rowan::SyntaxKind {
    rowan::SyntaxKind(kind.into())
}

fn clamp_u32(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

type Element = NodeOrToken<GreenNode, GreenToken>;

/// Builds a green tree from start/token/finish events.
#[derive(Default)]
struct Builder {
    /// Open nodes: their kind and where their children start in `children`.
    parents: Vec<(SyntaxKind, usize)>,
    children: Vec<Element>,
    /// Text offset of the next token.
    offset: u32,
    /// The macro call token tree being recorded, if any.
    body: Option<BodyRec>,
    macro_bodies: Vec<MacroBody>,
    /// Short tokens already made, by a hash of (kind, text): punctuation,
    /// keywords, indentation and common names repeat thousands of times in
    /// a file, and sharing one green token is cheaper than allocating (and
    /// later freeing) each. A hash collision just makes a new token.
    short_tokens: FxHashMap<u64, GreenToken>,
    /// Small nodes already made, by a hash of their kind and the identity of
    /// their children (`self`, `x.len()`, `Some(v)` as a pattern): with the
    /// tokens shared, equal small subtrees have the very same children, so
    /// no subtree is hashed twice (no deep rehashing, unlike rowan's
    /// `NodeCache`).
    small_nodes: FxHashMap<u64, GreenNode>,
}

/// Nodes with up to this many children are shared (see
/// `Builder::small_nodes`).
const SHARED_NODE_MAX_CHILDREN: usize = 3;

/// Tokens up to this many bytes are shared (see `Builder::short_tokens`).
const SHARED_TOKEN_MAX: usize = 16;

/// State while the direct token tree of a `MACRO_CALL` is being built.
struct BodyRec {
    /// `parents.len()` inside the token tree.
    depth: usize,
    open: Option<SyntaxKind>,
    start: u32,
    /// Start and kind of the last non-trivia direct token.
    last: Option<(u32, SyntaxKind)>,
    simple: bool,
    expect_arg: bool,
    /// See [`MacroBody::not_arguments`].
    not_arguments: bool,
    /// The next direct token starts an argument (or a `name = value`
    /// value): it follows the opening delimiter, a `,` or a `=`.
    at_arg_start: bool,
}

impl Builder {
    fn start_node(&mut self, kind: SyntaxKind) {
        if let Some(rec) = &mut self.body {
            if self.parents.len() == rec.depth {
                // A nested `(..)` inside the body: an operand.
                rec.simple = false;
                rec.at_arg_start = false;
            }
        } else if kind == SyntaxKind::TOKEN_TREE
            && self
                .parents
                .last()
                .is_some_and(|(k, _)| *k == SyntaxKind::MACRO_CALL)
        {
            self.body = Some(BodyRec {
                depth: self.parents.len() + 1,
                open: None,
                start: self.offset,
                last: None,
                simple: true,
                expect_arg: true,
                not_arguments: false,
                at_arg_start: true,
            });
        }
        self.parents.push((kind, self.children.len()));
    }

    fn token(&mut self, kind: SyntaxKind, text: &str) {
        let start = self.offset;
        self.offset = self.offset.saturating_add(clamp_u32(text.len()));
        if let Some(rec) = &mut self.body
            && self.parents.len() == rec.depth
            && !kind.is_trivia()
        {
            if rec.open.is_none() {
                rec.open = Some(kind);
                rec.start = self.offset;
            } else {
                if let Some((_, k)) = rec.last {
                    track_simple(rec, k);
                }
                if rec.at_arg_start && matches!(kind, SyntaxKind::PERCENT | SyntaxKind::QUESTION) {
                    rec.not_arguments = true;
                }
                rec.at_arg_start = matches!(kind, SyntaxKind::COMMA | SyntaxKind::EQ);
                rec.last = Some((start, kind));
            }
        }
        let token = if text.len() <= SHARED_TOKEN_MAX {
            let mut h = FxHasher::default();
            (kind as u16).hash(&mut h);
            text.hash(&mut h);
            let slot = self
                .short_tokens
                .entry(h.finish())
                .or_insert_with(|| GreenToken::new(raw(kind), text));
            if slot.kind() == raw(kind) && slot.text() == text {
                slot.clone()
            } else {
                GreenToken::new(raw(kind), text)
            }
        } else {
            GreenToken::new(raw(kind), text)
        };
        self.children.push(NodeOrToken::Token(token));
    }

    fn finish_node(&mut self) {
        if let Some(rec) = &self.body
            && self.parents.len() == rec.depth
        {
            self.close_body();
        }
        // Unbalanced events cannot come out of the parser; ignore rather
        // than panic if they ever do.
        let Some((kind, first)) = self.parents.pop() else {
            return;
        };
        let first = first.min(self.children.len());
        let kids = &self.children[first..];
        let node = if kids.len() <= SHARED_NODE_MAX_CHILDREN {
            let mut h = FxHasher::default();
            (kind as u16).hash(&mut h);
            for k in kids {
                element_ptr(borrowed(k)).hash(&mut h);
            }
            let key = h.finish();
            let same = |n: &GreenNode| {
                n.kind() == raw(kind)
                    && n.children().len() == kids.len()
                    && n.children()
                        .zip(kids)
                        .all(|(a, b)| element_ptr(a) == element_ptr(borrowed(b)))
            };
            match self.small_nodes.get(&key) {
                Some(n) if same(n) => {
                    let n = n.clone();
                    self.children.truncate(first);
                    n
                }
                _ => {
                    let n = GreenNode::new(raw(kind), self.children.drain(first..));
                    self.small_nodes.insert(key, n.clone());
                    n
                }
            }
        } else {
            GreenNode::new(raw(kind), self.children.drain(first..))
        };
        self.children.push(NodeOrToken::Node(node));
    }

    fn close_body(&mut self) {
        let Some(mut rec) = self.body.take() else {
            return;
        };
        let close = match rec.open {
            Some(SyntaxKind::L_PAREN) => SyntaxKind::R_PAREN,
            Some(SyntaxKind::L_BRACK) => SyntaxKind::R_BRACK,
            _ => return,
        };
        let end = match rec.last {
            Some((at, k)) if k == close => at,
            Some((_, k)) => {
                track_simple(&mut rec, k);
                self.offset
            }
            None => self.offset,
        };
        if end > rec.start {
            self.macro_bodies.push(MacroBody {
                start: rec.start,
                end,
                simple: rec.simple,
                not_arguments: rec.not_arguments,
            });
        }
    }

    fn finish(mut self) -> GreenNode {
        while !self.parents.is_empty() {
            self.finish_node();
        }
        match self.children.pop() {
            Some(NodeOrToken::Node(n)) if self.children.is_empty() => n,
            // Not a single root: wrap whatever there is.
            Some(last) => {
                self.children.push(last);
                GreenNode::new(raw(SyntaxKind::SOURCE_FILE), self.children.drain(..))
            }
            None => GreenNode::new(raw(SyntaxKind::SOURCE_FILE), std::iter::empty()),
        }
    }
}

fn borrowed(e: &Element) -> NodeOrToken<&rowan::GreenNodeData, &rowan::GreenTokenData> {
    match e {
        NodeOrToken::Node(n) => NodeOrToken::Node(n),
        NodeOrToken::Token(t) => NodeOrToken::Token(t),
    }
}

/// The address of a green child: equal for shared children.
fn element_ptr(e: NodeOrToken<&rowan::GreenNodeData, &rowan::GreenTokenData>) -> usize {
    match e {
        NodeOrToken::Node(n) => n as *const _ as usize,
        NodeOrToken::Token(t) => t as *const _ as usize,
    }
}

/// The `name, "lit", name` state machine for a body's direct tokens.
fn track_simple(rec: &mut BodyRec, kind: SyntaxKind) {
    if !rec.simple {
        return;
    }
    let is_arg = matches!(
        kind,
        SyntaxKind::IDENT
            | SyntaxKind::SELF_KW
            | SyntaxKind::INT_NUMBER
            | SyntaxKind::FLOAT_NUMBER
            | SyntaxKind::STRING
            | SyntaxKind::BYTE_STRING
            | SyntaxKind::C_STRING
            | SyntaxKind::CHAR
            | SyntaxKind::BYTE
            | SyntaxKind::TRUE_KW
            | SyntaxKind::FALSE_KW
    );
    if kind == SyntaxKind::COMMA && !rec.expect_arg {
        rec.expect_arg = true;
    } else if rec.expect_arg && is_arg {
        rec.expect_arg = false;
    } else {
        rec.simple = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shared tokens and small nodes must not change what the tree says:
    /// every token sits at its own place in the text, and equal subtrees
    /// that occur twice are one green node.
    #[test]
    fn shared_tokens_and_nodes_keep_every_token_at_its_place() {
        let text = concat!(
            include_str!("../tests_data/sample.rs"),
            "\nfn twice(x: u8) { self.a(); self.a(); let v = Some(x); let w = Some(x); }\n",
        );
        let p = parse(text);
        assert_eq!(p.root.to_string(), text);
        let mut tokens = 0;
        for t in p
            .root
            .descendants_with_tokens()
            .filter_map(|e| e.into_token())
        {
            let r = t.text_range();
            assert_eq!(
                &text[usize::from(r.start())..usize::from(r.end())],
                t.text()
            );
            tokens += 1;
        }
        assert!(tokens > 500, "{tokens}");
        let calls: Vec<_> = p
            .root
            .descendants()
            .filter(|n| n.kind() == SyntaxKind::CALL_EXPR && n.text() == "Some(x)")
            .collect();
        assert_eq!(calls.len(), 2);
        assert_ne!(calls[0].text_range(), calls[1].text_range());
        assert!(std::ptr::eq(calls[0].green(), calls[1].green()));
    }
}
