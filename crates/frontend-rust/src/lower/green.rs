//! Allocation-free reads from the green tree.
//!
//! Every step through rowan's typed/red API (`node.name()`,
//! `fn.async_token()`, iterating children) allocates a cursor node, and a
//! token lookup scans all children, whitespace included. Reading the green
//! node behind a `SyntaxNode` allocates nothing, so the hot lookups —
//! identifier text, token presence, paths, type text, item starts — go
//! through here.

use ra_ap_syntax::{SmolStr, SyntaxKind, SyntaxNode, TextSize};
use rowan::{GreenNodeData, NodeOrToken};

#[inline]
pub(super) fn raw(k: SyntaxKind) -> rowan::SyntaxKind {
    rowan::SyntaxKind(k.into())
}

/// Whether `node` has a direct token child of `kind` (`async`, `mut`, `!`).
pub(super) fn has_token(node: &SyntaxNode, kind: SyntaxKind) -> bool {
    let k = raw(kind);
    node.green()
        .children()
        .any(|c| matches!(c, NodeOrToken::Token(t) if t.kind() == k))
}

/// Whether `node` has a direct child node of `kind`.
pub(super) fn has_child(node: &SyntaxNode, kind: SyntaxKind) -> bool {
    let k = raw(kind);
    node.green()
        .children()
        .any(|c| matches!(c, NodeOrToken::Node(n) if n.kind() == k))
}

/// The text of the first token under a green node (the identifier of a
/// `NAME`/`NAME_REF`).
pub(super) fn first_token_text(g: &GreenNodeData) -> Option<&str> {
    let mut cur = g;
    // Names are one or two levels deep; the bound only guards odd trees.
    for _ in 0..64 {
        match cur.children().next()? {
            NodeOrToken::Token(t) => return Some(t.text()),
            NodeOrToken::Node(n) => cur = n,
        }
    }
    None
}

/// The first direct child node of `kind`.
pub(super) fn child(g: &GreenNodeData, kind: SyntaxKind) -> Option<&GreenNodeData> {
    let k = raw(kind);
    g.children().find_map(|c| match c {
        NodeOrToken::Node(n) if n.kind() == k => Some(n),
        _ => None,
    })
}

/// The identifier text of a node's `NAME` child (`fn foo` → `foo`).
pub(super) fn name_of(node: &SyntaxNode) -> Option<SmolStr> {
    child(node.green(), SyntaxKind::NAME)
        .and_then(first_token_text)
        .map(SmolStr::new)
}

/// Where an item starts once its attributes and doc comments are skipped.
pub(super) fn start_after_attrs(node: &SyntaxNode) -> TextSize {
    let (attr, comment, ws) = (
        raw(SyntaxKind::ATTR),
        raw(SyntaxKind::COMMENT),
        raw(SyntaxKind::WHITESPACE),
    );
    let mut off = node.text_range().start();
    for c in node.green().children() {
        let k = c.kind();
        if k != attr && k != comment && k != ws {
            break;
        }
        off += c.text_len();
    }
    off
}

/// Segments of a path (`a::b::C`), read from the green tree; `None` when
/// a segment is not a plain name (`<T as Trait>::f`, errors), for the caller
/// to fall back to the typed API. The flag is a leading `::`.
pub(super) fn path_segments(g: &GreenNodeData) -> Option<(Vec<SmolStr>, bool)> {
    let (path_k, seg_k, name_ref_k, colon2) = (
        raw(SyntaxKind::PATH),
        raw(SyntaxKind::PATH_SEGMENT),
        raw(SyntaxKind::NAME_REF),
        raw(SyntaxKind::COLON2),
    );
    let mut segs = Vec::with_capacity(4);
    let mut global = false;
    let mut cur = g;
    loop {
        let mut qualifier = None;
        let mut segment = None;
        for c in cur.children() {
            if let NodeOrToken::Node(n) = c {
                if n.kind() == path_k {
                    qualifier = Some(n);
                } else if n.kind() == seg_k {
                    segment = Some(n);
                }
            }
        }
        let segment = segment?;
        let mut name = None;
        for c in segment.children() {
            match c {
                NodeOrToken::Token(t) if t.kind() == colon2 && qualifier.is_none() => global = true,
                NodeOrToken::Node(n) if n.kind() == name_ref_k => name = first_token_text(n),
                _ => {}
            }
        }
        segs.push(SmolStr::new(name?));
        match qualifier {
            Some(q) => cur = q,
            None => break,
        }
    }
    segs.reverse();
    Some((segs, global))
}

/// The text of a subtree without comments, whitespace runs collapsed to
/// one space (for types as written, which may span lines).
pub(super) fn text_without_trivia(g: &GreenNodeData) -> String {
    let (comment, ws) = (raw(SyntaxKind::COMMENT), raw(SyntaxKind::WHITESPACE));
    // The node's whole text bounds what is kept of it: one allocation, no
    // growing (this runs for every type and path written in a file).
    let mut out = String::with_capacity(u32::from(g.text_len()) as usize);
    let mut stack = Vec::with_capacity(8);
    stack.push(g.children());
    while let Some(top) = stack.last_mut() {
        match top.next() {
            None => {
                stack.pop();
            }
            Some(NodeOrToken::Node(n)) => stack.push(n.children()),
            Some(NodeOrToken::Token(t)) => {
                if t.kind() == comment {
                } else if t.kind() == ws {
                    if !out.is_empty() && !out.ends_with(' ') {
                        out.push(' ');
                    }
                } else {
                    out.push_str(t.text());
                }
            }
        }
    }
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    out
}
