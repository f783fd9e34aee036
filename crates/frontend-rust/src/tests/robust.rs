//! Robustness: syntax errors, truncated and garbage input, deep nesting,
//! empty files, the public entry point.

use super::util::*;
use unsnarl_model::{FileModel, Language, SourceInput};

const SAMPLE: &str = include_str!("../../tests_data/sample.rs");

/// Runs `f` on a thread with the pipeline's 256 MiB stack.
fn on_big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn empty_and_trivial_files() {
    for text in [
        "",
        "   \n\t",
        "// just a comment\n",
        "/* unterminated",
        "#![allow(unused)]",
    ] {
        let m = lower(text);
        assert_eq!(m.functions.len(), 1, "{text:?}");
        assert!(m.functions[0].body.is_empty());
        assert_eq!(m.module, "crate");
    }
    assert!(!lower("/* unterminated").syntax_errors.is_empty());
}

#[test]
fn syntax_errors_are_recorded_and_the_rest_lowered() {
    let text = "fn broken( { let x = ; g(); }\nfn fine() { k(); }\nstruct S { a: }\nfn after() -> u8 { 1 }";
    let m = lower(text);
    assert!(!m.syntax_errors.is_empty());
    for e in &m.syntax_errors {
        assert!(!e.message.is_empty());
        assert!(e.span.end as usize <= text.len());
    }
    assert_eq!(target(&m, "k"), None);
    func(&m, "fine");
    func(&m, "after");
    assert!(calls(&m).iter().any(|(_, c)| c.name == "k"));
}

#[test]
fn code_from_before_2024_may_use_gen_as_a_name() {
    // `gen` is reserved only since the 2024 edition.
    let text = "mod gen;\nuse gen::Gen;\nfn f(gen: &mut Gen) -> bool {\n    let gen2 = rng.gen();\n    assert!(rng.gen::<bool>());\n    handle.lock();\n    gen2\n}\n";
    let m = lower(text);
    assert!(m.syntax_errors.is_empty(), "{:?}", m.syntax_errors);
    func(&m, "f");
    assert!(calls(&m).iter().any(|(_, c)| c.name == "gen"));
    assert!(calls(&m).iter().any(|(_, c)| c.name == "lock"));
    // Still an error under every edition: reported, not hidden by the retry.
    assert!(!lower("fn f(gen: u8) { let = ; }").syntax_errors.is_empty());
    // 2024 code that needs the newer edition keeps parsing under it.
    let m = lower("fn f() { let it = gen { yield 1; }; }");
    assert!(m.syntax_errors.is_empty(), "{:?}", m.syntax_errors);
}

#[test]
fn code_of_the_2015_edition_may_use_try_as_a_name() {
    // `try` is reserved only since the 2018 edition; crates that never set
    // an edition define and call their own `try!` (autocfg does).
    let text = "macro_rules! try {\n    ($e:expr) => { match $e { Ok(v) => v, Err(e) => return Err(e) } };\n}\nfn f(cmd: &mut Command) -> Result<u8, Error> {\n    let out = try!(cmd.output());\n    state.lock();\n    Ok(out)\n}\n";
    let m = lower(text);
    assert!(m.syntax_errors.is_empty(), "{:?}", m.syntax_errors);
    func(&m, "f");
    assert!(calls(&m).iter().any(|(_, c)| c.name == "output"));
    assert!(calls(&m).iter().any(|(_, c)| c.name == "lock"));
    // 2018+ code keeps its keywords: `async fn` parses under the first edition.
    let m = lower("async fn g() { let v = try_get().await; }");
    assert!(m.syntax_errors.is_empty(), "{:?}", m.syntax_errors);
}

#[test]
fn crlf_files_parse_as_rustc_reads_them() {
    // A string continued with `\` at the end of a CRLF line (vcpkg's
    // lib.rs): rustc reads CRLF as LF; rust-analyzer's lexer alone does not.
    let text = "fn f(m: &Mutex<u8>) -> String {\r\n    let g = m.lock();\r\n    \"no vcpkg \\\r\n        found\".to_string()\r\n}\r\n";
    let m = crate::lower(&SourceInput {
        text,
        rel_path: "src/lib.rs",
        language: Language::Rust,
    });
    assert!(m.syntax_errors.is_empty(), "{:?}", m.syntax_errors);
    // Spans are offsets into the file as it is.
    let (lock, _) = calls(&m)
        .into_iter()
        .find(|(_, c)| c.name == "lock")
        .unwrap();
    let span = m.expr(lock).span;
    assert_eq!(&text[span.start as usize..span.end as usize], "m.lock()");
}

#[test]
fn missing_pieces_become_opaque() {
    // Each of these leaves a sub-expression missing in the recovered tree.
    for text in [
        "fn f() { if { } }",
        "fn f() { let x = a.; }",
        "fn f() { while }",
        "fn f() { for in x {} }",
        "fn f() { match { } }",
        "fn f() { x = ; }",
        "fn f() { g(,); }",
        "fn f() { a[]; }",
        "fn f() { S { a: , }; }",
        "fn f() { |x| ; }",
        "fn f() { tokio::select! { = => , } }",
        "fn f() { tokio::select! { x = => {} } }",
        "fn f() { tokio::select! { biased; } }",
        "fn f() { tokio::select! { x = a => } }",
        "impl { fn m() {} }",
        "fn () {}",
        "use ;",
        "use a::{b, ;",
        "mod { fn x() {} }",
        "#[] fn f() {}",
        "#[tokio::main(] fn f() {}",
        "fn f() { vec![1; ]; }",
        "thread_local! { static X: u8 = ; }",
    ] {
        let m = lower(text);
        assert!(!m.syntax_errors.is_empty() || text.contains('!'), "{text}");
    }
}

#[test]
fn every_prefix_of_a_file_lowers() {
    let text = format!("{SAMPLE}\nfn ünï() {{ let s = \"✓ é\"; }}\n");
    let mut cut = 0;
    while cut <= text.len() {
        if text.is_char_boundary(cut) {
            lower_at("src/x.rs", &text[..cut]);
        }
        cut += 3;
    }
}

#[test]
fn garbage_lowers() {
    // A tiny deterministic generator of token soup.
    const TOKENS: &[&str] = &[
        "fn", "f", "(", ")", "{", "}", "[", "]", "<", ">", "=", "=>", ";", ",", "::", ".", "let",
        "if", "else", "match", "async", "move", "|", "await", "?", "!", "tokio", "select", "vec",
        "impl", "struct", "mod", "use", "*", "self", "Self", "super", "crate", "#", "'a", "\"s\"",
        "1", "é", "loop", "break", "return", "as", "&", "mut", "for", "in", "while", "_", "..",
        "@", "dyn",
    ];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..300 {
        let mut text = String::new();
        for _ in 0..60 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            text.push_str(TOKENS[(state % TOKENS.len() as u64) as usize]);
            text.push(' ');
        }
        lower(&text);
    }
}

fn deep_cases(n: usize) -> Vec<(&'static str, String)> {
    vec![
        (
            "parens",
            format!("fn f() {{ let x = {}1{}; }}", "(".repeat(n), ")".repeat(n)),
        ),
        (
            "unclosed parens",
            format!("fn f() {{ let x = {}", "(".repeat(n)),
        ),
        (
            "brackets",
            format!("fn f() {{ let x = {}1{}; }}", "[".repeat(n), "]".repeat(n)),
        ),
        (
            "blocks",
            format!("fn f() {}{}", "{".repeat(n), "}".repeat(n)),
        ),
        ("unclosed blocks", format!("fn f() {}", "{".repeat(n))),
        (
            "generic types",
            format!("struct S {{ f: {}u8{} }}", "Vec<".repeat(n), ">".repeat(n)),
        ),
        (
            "closures",
            format!("fn f() {{ let c = {}1; }}", "|| ".repeat(n)),
        ),
        (
            "negations",
            format!("fn f() {{ let x = {}1; }}", "-".repeat(n)),
        ),
        (
            "sums",
            format!("fn f() {{ let x = 1{}; }}", " + 1".repeat(n)),
        ),
        (
            "method chain",
            format!("fn f() {{ a{}; }}", ".b()".repeat(n)),
        ),
        (
            "else-if chain",
            format!("fn f() {{ if a {{}}{} }}", " else if a {}".repeat(n)),
        ),
        (
            "modules",
            format!("{}fn x() {{}}{}", "mod m { ".repeat(n), "}".repeat(n)),
        ),
        (
            "patterns",
            format!("fn f() {{ let {}x{} = 1; }}", "(".repeat(n), ")".repeat(n)),
        ),
        (
            "macros",
            format!(
                "fn f() {{ let v = {}1{}; }}",
                "vec![".repeat(n),
                "]".repeat(n)
            ),
        ),
        (
            "async blocks",
            format!("fn f() {{ {}1{} }}", "async { ".repeat(n), " }".repeat(n)),
        ),
        ("paths", format!("fn f() {{ {}x(); }}", "a::".repeat(n))),
        (
            "use trees",
            format!("use {}x{};", "a::{".repeat(n), "}".repeat(n)),
        ),
        ("refs", format!("fn f(x: {}u8) {{}}", "&".repeat(n))),
    ]
}

#[test]
fn ten_thousand_nesting_levels_on_a_big_stack() {
    on_big_stack(|| {
        for (name, text) in deep_cases(10_000) {
            let m = lower_at("src/deep.rs", &text);
            // Bounded: the cut-off keeps the model small.
            assert!(m.exprs.len() < 20_000, "{name}: {} exprs", m.exprs.len());
            assert!(m.stmts.len() < 20_000, "{name}: {} stmts", m.stmts.len());
        }
    });
}

#[test]
fn public_entry_point() {
    on_big_stack(|| {
        let text = format!(
            "fn f() {{ let x = {}1{}; }}",
            "(".repeat(10_000),
            ")".repeat(10_000)
        );
        let m: FileModel = crate::lower(&SourceInput {
            text: &text,
            rel_path: "src/deep.rs",
            language: Language::Rust,
        });
        assert_eq!(m.module, "crate::deep");
        assert!(m.syntax_errors.is_empty());
        assert_eq!(m.functions.len(), 2);
    });
}

#[test]
fn a_large_file_lowers() {
    let mut text = String::new();
    for i in 0..2_000 {
        text.push_str(&format!(
            "pub async fn f{i}(x: u32) -> u32 {{ let g = STATE.lock().unwrap(); tokio::time::sleep(d).await; x + {i} }}\n"
        ));
    }
    let m = lower(&text);
    assert_eq!(m.functions.len(), 2_001);
    assert_eq!(
        calls(&m).iter().filter(|(_, c)| c.name == "sleep").count(),
        2_000
    );
}

#[test]
fn sample_file_spans_point_at_their_code() {
    let m = lower_at("src/server/conn.rs", SAMPLE);
    assert!(m.syntax_errors.is_empty(), "{:?}", m.syntax_errors);
    for (id, c) in calls(&m) {
        let span = m.expr(id).span;
        let text = text_of(SAMPLE, span);
        assert!(
            text.contains(c.name.as_str()),
            "call {} has span text {text:?}",
            c.name
        );
    }
}

/// The benchmark's stages (`crate::run_stage`) run on any text: the tree
/// stage reports the syntax errors `lower` records, and each stage's count
/// follows the text.
#[test]
fn benchmark_stages_follow_the_text() {
    use crate::{Stage, run_stage};
    let small = "fn f() { g(1); }";
    let larger = "fn f() { g(1); }\nasync fn h(x: u8) -> u8 { x.await }\n";
    for text in [small, larger] {
        // `fn`, ` `, `f`, `(`, `)`, ` `, `{`, ... : one token per lexeme.
        assert!(run_stage(text, Stage::Lex) >= 10, "{text}");
        assert!(run_stage(text, Stage::Parse) > 0, "{text}");
        assert_eq!(run_stage(text, Stage::Tree), 0, "{text}");
    }
    assert!(run_stage(larger, Stage::Lex) > run_stage(small, Stage::Lex));
    assert!(run_stage(larger, Stage::Parse) > run_stage(small, Stage::Parse));
    for broken in [
        "fn broken( { let x = ; }",
        "/* unterminated",
        "struct S { a: }",
    ] {
        assert_eq!(
            run_stage(broken, Stage::Tree),
            lower(broken).syntax_errors.len(),
            "{broken}"
        );
        assert!(run_stage(broken, Stage::Tree) > 0, "{broken}");
    }
}
