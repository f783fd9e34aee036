//! The Go front end: parses a file and lowers it into the language-neutral
//! file model.
//!
//! Two paths produce the same model: a hand-written parser that builds the
//! model directly (`fast`, the default), and tree-sitter-go with a lowering
//! of its syntax tree (`lower`), which every file the fast parser does not
//! take goes to: files with syntax errors (tree-sitter recovers from them
//! and reports them), and the rare shapes the fast parser leaves alone.
//!
//! Conventions (see `crates/model/src/ir.rs` for the model itself):
//! - the module is the package directory of the file (`cmd/server/main.go`
//!   → `cmd/server`, a file at the root → `.`); package-level functions are
//!   `<module>.<Func>`, methods `<module>.<Type>.<Method>`, types
//!   `<module>.<Type>`;
//! - calls through an import resolve to `<import path>.<Name>`
//!   (`http.Get` → `net/http.Get`), unqualified calls of non-local names to
//!   `<module>.<name>`, predeclared functions and types to their bare name;
//!   method calls on values keep a receiver and no target;
//! - declared types of parameters, results, struct fields and `var`s are
//!   recorded with the named type they resolve to (`*sync.Mutex` →
//!   `sync.Mutex`).

mod errors;
mod fast;
mod kinds;
mod literal;
mod lower;
mod resolve;

use std::cell::RefCell;
use tree_sitter::{Parser, Tree};
use unsnarl_model::{FileModel, SourceInput, Span};

/// Lowers one Go file. Never panics; syntax errors are recorded in
/// `syntax_errors` and the recovered tree is lowered anyway.
pub fn lower(input: &SourceInput) -> FileModel {
    let mut m = match lower_fast(input) {
        Some(m) => m,
        None => lower_tree_sitter(input),
    };
    // Test support outside `_test.go` files (`testutil`, a package's `test`
    // helpers): only tests import the standard `testing` packages (and
    // `httptest`, or the `go-testing-interface` stand-in for `testing`), and
    // importing them in a program registers the test flags.
    m.is_test |= m.imports.iter().any(|i| {
        matches!(
            i.target.as_str(),
            "testing" | "net/http/httptest" | "github.com/mitchellh/go-testing-interface"
        ) || i.target.starts_with("testing/")
    });
    m
}

/// The fast path alone: `None` when the file has a syntax error or a shape
/// the fast parser leaves to tree-sitter. (Public for the differential
/// tests and benchmarks.)
#[doc(hidden)]
pub fn lower_fast(input: &SourceInput) -> Option<FileModel> {
    fast::lower(input.text, new_model(input))
}

/// Where the fast path gives up on a file (a byte offset), or `None`
/// when it takes it. (For the differential tools.)
#[doc(hidden)]
pub fn fast_bail_offset(input: &SourceInput) -> Option<u32> {
    fast::bail_offset(input.text, new_model(input))
}

/// The tree-sitter path alone. (Public for the differential tests and
/// benchmarks.)
#[doc(hidden)]
pub fn lower_tree_sitter(input: &SourceInput) -> FileModel {
    let text = input.text;
    let mut m = new_model(input);
    let Some(tree) = parse(text) else {
        return m;
    };
    let root = tree.root_node();
    if m.module == "." {
        // A file at the scan root: name its package by the package clause
        // (`package ingest`), which is also the last segment of the import
        // path other packages use for it.
        if let Some(name) = package_name(root, text) {
            m.module = name.into();
        }
    }
    m.syntax_errors = errors::collect(root, text);
    let mut l = lower::Lowerer::new(text, m, root);
    l.lower_file(root);
    l.finish()
}

/// tree-sitter's syntax tree of `text` as an indented outline with byte
/// ranges and field names (a debugging aid for the differential tools).
#[doc(hidden)]
pub fn tree_sitter_outline(text: &str) -> String {
    fn walk(n: tree_sitter::Node, text: &str, depth: usize, field: Option<&str>, out: &mut String) {
        if !n.is_named() && !n.is_missing() {
            return;
        }
        out.push_str(&"  ".repeat(depth));
        if let Some(f) = field {
            out.push_str(f);
            out.push_str(": ");
        }
        out.push_str(n.kind());
        out.push_str(&format!(" [{}..{}]", n.start_byte(), n.end_byte()));
        if n.child_count() == 0 || n.kind().ends_with("identifier") {
            out.push_str(&format!(" `{}`", text.get(n.byte_range()).unwrap_or("")));
        }
        if n.is_missing() {
            out.push_str(" MISSING");
        }
        out.push('\n');
        let mut c = n.walk();
        if c.goto_first_child() {
            loop {
                let fname = c.field_name();
                walk(c.node(), text, depth + 1, fname, out);
                if !c.goto_next_sibling() {
                    break;
                }
            }
        }
    }
    let mut out = String::new();
    if let Some(tree) = parse(text) {
        walk(tree.root_node(), text, 0, None, &mut out);
    }
    out
}

/// An empty model for the file: its module, test and generated flags.
fn new_model(input: &SourceInput) -> FileModel {
    let text = input.text;
    let mut m = FileModel::new(module_name(input.rel_path), Span::new(0, text.len() as u32));
    m.reserve_nodes(text.len(), 10, 44);
    m.is_test = input.rel_path.ends_with("_test.go") || in_test_support_dir(input.rel_path);
    m.is_generated = is_generated(text);
    m
}

/// A file of a package whose directory names it as test support
/// (`fakes/testing/server.go` of a client library: a fake server its users'
/// tests start, `internal/testutil`): what it starts dies with a test
/// binary. (Test support elsewhere is told by its imports, see [`lower`].)
fn in_test_support_dir(rel_path: &str) -> bool {
    let mut dirs = rel_path.split('/').rev().skip(1);
    dirs.next().is_some_and(|d| {
        matches!(
            d,
            "testing" | "testutil" | "testutils" | "testhelper" | "testhelpers" | "testsupport"
        )
    })
}

thread_local! {
    /// Creating a parser and loading the grammar costs more than parsing a
    /// small file, so each worker thread keeps one.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

fn new_parser() -> Option<Parser> {
    let mut p = Parser::new();
    p.set_language(&kinds::Grammar::get().language).ok()?;
    Some(p)
}

fn parse(text: &str) -> Option<Tree> {
    PARSER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut slot) => {
            if slot.is_none() {
                *slot = new_parser();
            }
            slot.as_mut()?.parse(text, None)
        }
        // Re-entered on this thread (cannot happen today): parse with a
        // fresh parser rather than fail.
        Err(_) => new_parser()?.parse(text, None),
    })
}

/// The name in the file's `package` clause.
fn package_name(root: tree_sitter::Node, text: &str) -> Option<String> {
    let mut cursor = root.walk();
    let clause = root
        .children(&mut cursor)
        .find(|n| n.kind() == "package_clause")?;
    let mut cursor = clause.walk();
    let ident = clause
        .children(&mut cursor)
        .find(|n| n.kind() == "package_identifier")?;
    text.get(ident.byte_range()).map(str::to_string)
}

/// The package directory of a file: `cmd/server/main.go` → `cmd/server`,
/// `main.go` → `.` (replaced by the package name once parsed).
pub fn module_name(rel_path: &str) -> String {
    let mut p = rel_path;
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    match p.rfind('/') {
        Some(i) if i > 0 => p[..i].to_string(),
        _ => ".".to_string(),
    }
}

/// Go's generated-file convention: a line `// Code generated ... DO NOT
/// EDIT.` before the package clause (that is, among the comments and blank
/// lines at the top of the file).
pub fn is_generated(text: &str) -> bool {
    let mut in_block = false;
    for line in text.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if in_block {
            if line.contains("*/") {
                in_block = false;
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("// Code generated ")
            && rest.ends_with(" DO NOT EDIT.")
        {
            return true;
        }
        let t = line.trim();
        if t.is_empty() || t.starts_with("//") {
            continue;
        }
        if let Some(rest) = t.strip_prefix("/*") {
            in_block = !rest.contains("*/");
            continue;
        }
        // The package clause or any code: too late for the marker.
        return false;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names() {
        assert_eq!(module_name("cmd/server/main.go"), "cmd/server");
        assert_eq!(module_name("main.go"), ".");
        assert_eq!(module_name("./pkg/store/db.go"), "pkg/store");
        assert_eq!(module_name("/x.go"), ".");
    }

    #[test]
    fn files_importing_testing_are_test_code() {
        let model = |rel_path: &str, text: &str| {
            lower(&SourceInput {
                text,
                rel_path,
                language: unsnarl_model::Language::Go,
            })
        };
        let helper = "package testutil\n\nimport (\n\t\"net\"\n\t\"testing\"\n)\n\nfunc Dial(t *testing.T) net.Conn { c, _ := net.Dial(\"tcp\", \"x\"); return c }\n";
        assert!(model("internal/testutil/net.go", helper).is_test);
        let fstest = "package fakes\n\nimport \"testing/fstest\"\n\nvar FS = fstest.MapFS{}\n";
        assert!(model("fakes/fs.go", fstest).is_test);
        let shim = "package plugintest\n\nimport testing \"github.com/mitchellh/go-testing-interface\"\n\nfunc Serve(t testing.T) {}\n";
        assert!(model("plugin/testing.go", shim).is_test);
        let program =
            "package main\n\nimport \"net\"\n\nfunc main() { net.Dial(\"tcp\", \"x\") }\n";
        assert!(!model("cmd/main.go", program).is_test);
        assert!(model("cmd/main_test.go", program).is_test);
        // A fake server in a package's `testing` directory, importing
        // nothing of the standard test packages.
        let fake = "package testing\n\nimport \"net/http\"\n\nfunc Start() { go http.ListenAndServe(\":0\", nil) }\n";
        assert!(model("client/testing/server.go", fake).is_test);
        assert!(!model("client/server.go", fake).is_test);
        assert!(!model("testing/cmd/server.go", fake).is_test);
    }

    #[test]
    fn generated_marker() {
        assert!(is_generated(
            "// Code generated by protoc-gen-go. DO NOT EDIT.\n\npackage x\n"
        ));
        assert!(is_generated(
            "// Copyright x\n\n/* block\n */\n// Code generated  DO NOT EDIT.\r\npackage x\n"
        ));
        assert!(!is_generated(
            "package x\n// Code generated by hand. DO NOT EDIT.\n"
        ));
        assert!(!is_generated("// Code generated DO NOT EDIT.\npackage x\n"));
        assert!(!is_generated(
            "// Code generated by x. DO NOT EDIT\npackage x\n"
        ));
        assert!(!is_generated(""));
    }
}
