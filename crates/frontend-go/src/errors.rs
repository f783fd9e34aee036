//! Syntax errors: the ERROR and MISSING nodes tree-sitter recovered with.

use tree_sitter::Node;
use unsnarl_model::{Span, SyntaxError};

/// More errors than this say nothing new: the file is not Go (or is badly
/// broken) and the list would only grow the model.
const MAX_ERRORS: usize = 100;

/// Collects the syntax errors under `root`, in source order. Iterative (a
/// cursor walk), and only descends into sub-trees that contain an error.
pub fn collect(root: Node, text: &str) -> Vec<SyntaxError> {
    let mut out = Vec::new();
    if !root.has_error() {
        return out;
    }
    let mut cursor = root.walk();
    'walk: loop {
        let node = cursor.node();
        let mut descend = false;
        if node.is_missing() {
            out.push(SyntaxError {
                span: span(node),
                message: format!("missing `{}`", node.kind()),
            });
        } else if node.is_error() {
            out.push(SyntaxError {
                span: span(node),
                message: unexpected(node, text),
            });
        } else {
            descend = node.has_error();
        }
        if out.len() >= MAX_ERRORS {
            break;
        }
        if descend && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                continue 'walk;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    out
}

fn span(node: Node) -> Span {
    Span::new(node.start_byte() as u32, node.end_byte() as u32)
}

/// "unexpected `tok`" with the first token of the erroneous region, cut at
/// a line end and a few dozen characters so messages stay one short line.
fn unexpected(node: Node, text: &str) -> String {
    let region = text.get(node.byte_range()).unwrap_or("");
    let first_line = region.trim_start().lines().next().unwrap_or("").trim_end();
    if first_line.is_empty() {
        return "syntax error: unexpected end of input".to_string();
    }
    let mut end = first_line.len().min(40);
    while !first_line.is_char_boundary(end) {
        end -= 1;
    }
    let ellipsis = if end < first_line.len() { "…" } else { "" };
    format!(
        "syntax error: unexpected `{}{}`",
        &first_line[..end],
        ellipsis
    )
}
