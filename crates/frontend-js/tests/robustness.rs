//! Files that are not ordinary: empty, broken, deeply nested, generated,
//! tests; module naming from paths.

mod common;
use common::*;
use unsnarl_model::builder::MAX_NESTING;
use unsnarl_model::{Language, SourceInput};

#[test]
fn empty_and_trivial_files() {
    for src in [
        "",
        "   \n\n",
        "// just a comment\n/* and another */",
        "'use strict';",
        "#!/usr/bin/env node\n",
        ";;;",
    ] {
        let m = js(src);
        assert_eq!(m.functions.len(), 1, "{src:?}");
        assert!(m.functions[0].body.is_empty(), "{src:?}");
        assert!(m.syntax_errors.is_empty(), "{src:?}");
        assert_eq!(m.functions[0].span.end as usize, src.len());
    }
}

#[test]
fn recoverable_syntax_errors_keep_the_rest_of_the_file() {
    let m = js("const x;\nfunction f() { await g(); }\nh();");
    assert!(!m.syntax_errors.is_empty());
    assert!(m.syntax_errors.iter().all(|e| !e.message.is_empty()));
    call(&m, "g");
    call(&m, "h");
    assert_eq!(m.syntax_errors[0].span.start, 6, "{:?}", m.syntax_errors);
}

#[test]
fn unrecoverable_syntax_errors_are_reported() {
    for src in [
        "function f( {\n  foo();\n}\n",
        ")))",
        "let s = `abc",
        "class {",
        "if (a) {\n b();\n",
    ] {
        let m = js(src);
        assert!(!m.syntax_errors.is_empty(), "{src:?}");
        assert_eq!(m.functions.len(), 1);
        assert!(
            m.syntax_errors
                .iter()
                .all(|e| e.span.end as usize <= src.len())
        );
    }
}

#[test]
fn typescript_syntax_in_a_js_file_is_an_error_not_a_crash() {
    let m = js("function f(x: number): string { return g(x); }");
    assert!(!m.syntax_errors.is_empty());
}

#[test]
fn top_level_return_and_await() {
    let m = lower_at("bin/cli.cjs", "if (!ok) return;\nmain();");
    assert!(m.syntax_errors.is_empty(), "{:?}", m.syntax_errors);
    assert_eq!(module_kinds(&m), ["if", "expr"]);
    let m = lower_at("scripts/run.mjs", "await main();");
    assert!(m.syntax_errors.is_empty(), "{:?}", m.syntax_errors);
    assert_eq!(module_kinds(&m), ["expr"]);
}

#[test]
fn arbitrary_bytes_do_not_panic() {
    let samples = [
        "\u{0}\u{1}\u{2}",
        "a\u{feff}b",
        "<<<<>>>>",
        "function",
        "async () =>",
        "class A extends",
        "x = {a: [1, {b: (2",
        "`${`${`${",
        "/* unterminated",
        "import { from 'x'",
        "export default",
        "label: label: label:",
        "for await (x of y) {}",
        "new new new X",
        "a?.[b]?.(c)?.d",
        "({ ...a, ...b, [c]: d, get e() {}, set f(v) {}, async *g() {} })",
        "\u{2028}\u{2029}",
        "😀 = 1",
    ];
    for s in samples {
        for path in ["x.js", "x.ts", "x.tsx", "x.d.ts", "x.mjs", "x.cjs"] {
            let _ = lower_at(path, s);
        }
    }
    // Every prefix of a realistic file (truncated files).
    let src = "import fs from 'fs';\nexport class A { async m(x: number) { for await (const y of z) { await fs.promises.readFile(`${y}`); } } }\nconst f = async ({ a = 1 }) => <div onClick={() => a}>{a}</div>;";
    for end in (0..=src.len()).filter(|&i| src.is_char_boundary(i)) {
        let _ = lower_at("x.tsx", &src[..end]);
    }
}

/// Found by the `js` fuzz target: a `#__PURE__` comment before a labeled
/// statement panicked in oxc's parser (a debug assertion).
#[test]
fn a_pure_annotation_before_a_label_does_not_panic() {
    for src in [
        "//#__PURE__\r:",
        "/* #__PURE__ */ x:\n",
        "/* @__PURE__ */ outer: for (;;) { break outer; }\n",
        "// @__PURE__\nlabel: { f(); }\n",
    ] {
        for path in ["x.js", "x.jsx", "x.ts", "x.tsx"] {
            let _ = lower_at(path, src);
        }
    }
    // The annotation is defused without moving anything.
    let m = js("const a = /* @__PURE__ */ make();\nlater();\n");
    call(&m, "make");
    call(&m, "later");
    assert!(m.syntax_errors.is_empty());
}

fn nesting_model(src: String, path: &'static str) -> unsnarl_model::FileModel {
    on_big_stack(move || lower_at(path, &src))
}

#[test]
fn ten_thousand_nested_parentheses() {
    let n = 10_000;
    let src = format!("f({}x{});", "(".repeat(n), ")".repeat(n));
    let m = nesting_model(src, "deep.js");
    assert!(m.syntax_errors.is_empty());
    call(&m, "f");
}

#[test]
fn ten_thousand_nested_brackets_and_calls() {
    let n = 10_000;
    let src = format!("const a = {}1{};", "[".repeat(n), "]".repeat(n));
    let m = nesting_model(src, "deep.js");
    assert!(
        m.exprs.len() < 2 * MAX_NESTING as usize,
        "bounded: {}",
        m.exprs.len()
    );
    let src = format!("{}x{};", "f(".repeat(n), ")".repeat(n));
    let m = nesting_model(src, "deep.js");
    assert!(
        m.exprs.len() < 3 * MAX_NESTING as usize,
        "bounded: {}",
        m.exprs.len()
    );
}

#[test]
fn ten_thousand_nested_blocks_functions_and_objects() {
    let n = 10_000;
    let cases = [
        format!("{}x();{}", "{".repeat(n), "}".repeat(n)),
        format!("{}x();{}", "if (a) {".repeat(n), "}".repeat(n)),
        format!("{}x(){}", "() => ".repeat(n), ""),
        format!("{}x();{}", "function f() {".repeat(n), "}".repeat(n)),
        format!("x = {}1{};", "{a: ".repeat(n), "}".repeat(n)),
        format!("x = {}1{};", "-".repeat(n), ""),
        format!("x = a{};", ".b".repeat(n)),
        format!("x = 1{};", " + 1".repeat(n)),
        format!("x = {}y{};", "a ? b : ".repeat(n), ""),
        format!("const {}x{} = o;", "{a: ".repeat(n), "}".repeat(n)),
        format!("let x: {}T{};", "Array<".repeat(n), ">".repeat(n)),
        format!("x = {}{};", "<div>".repeat(n), "</div>".repeat(n)),
        format!(
            "class A {{ m() {{ {}x(); {} }} }}",
            "while (a) {".repeat(n),
            "}".repeat(n)
        ),
        format!("{}x();", "using a = b; ".repeat(n)),
        format!("x = y{};", " as T".repeat(n)),
        format!("namespace a{} {{ f(); }}", ".a".repeat(n)),
        format!("x = {}1{};", "`${".repeat(n), "}`".repeat(n)),
        format!("function f({}a{}) {{}}", "{a: ".repeat(n), "}".repeat(n)),
        format!(
            "try {{}} catch {{ {} }}",
            "try { x(); } catch { ".repeat(n) + &"}".repeat(n)
        ),
    ];
    for (i, src) in cases.into_iter().enumerate() {
        let path = if i == 11 || i == 10 {
            "deep.tsx"
        } else {
            "deep.ts"
        };
        let m = nesting_model(src, path);
        // Bounded work: the lowered model does not grow with the nesting.
        assert!(
            m.exprs.len() + m.stmts.len() + m.functions.len() < 8 * MAX_NESTING as usize,
            "case {i}: {} exprs",
            m.exprs.len()
        );
    }
}

#[test]
fn many_sibling_statements_are_not_nesting() {
    let src = "f();\n".repeat(20_000);
    let m = js(&src);
    assert_eq!(m.functions[0].body.len(), 20_000);
}

#[test]
fn test_files() {
    for path in [
        "src/a.test.ts",
        "src/a.spec.js",
        "src/__tests__/a.js",
        "test/a.js",
        "packages/x/tests/b.ts",
    ] {
        let m = lower_at(
            path,
            "it('works', async () => { await f(); });\nfunction helper() {}",
        );
        assert!(m.is_test, "{path}");
        assert!(m.functions.iter().all(|f| f.is_test), "{path}");
    }
    for path in [
        "src/a.ts",
        "src/testing.ts",
        "src/attest/a.js",
        "src/test.ts",
    ] {
        let m = lower_at(path, "function f() {}");
        assert!(!m.is_test, "{path}");
        assert!(m.functions.iter().all(|f| !f.is_test), "{path}");
    }
}

#[test]
fn generated_files() {
    for src in [
        "// @generated\nexport const x = 1;",
        "/* eslint-disable */\n/**\n * @generated by protoc-gen-ts\n */\nfoo();",
        "// Code generated by sqlc. DO NOT EDIT.\nfoo();",
    ] {
        assert!(js(src).is_generated, "{src}");
    }
    for src in [
        "foo();\n// @generated",
        "// Code generated by hand, edit freely\nfoo();",
        "const s = '@generated';",
    ] {
        assert!(!js(src).is_generated, "{src}");
    }
}

#[test]
fn module_names_from_paths() {
    assert_eq!(lower_at("src/db/index.ts", "").module, "src/db");
    assert_eq!(lower_at("src/lib/db.mjs", "").module, "src/lib/db");
    assert_eq!(lower_at("types/api.d.ts", "").module, "types/api");
    assert_eq!(lower_at("App.jsx", "").module, "App");
    let m = lower_at("src/db/index.ts", "export async function query() {}");
    assert_eq!(func(&m, "query").qualname, "src/db.query");
}

#[test]
fn unknown_extensions_fall_back_on_the_language() {
    let m = unsnarl_frontend_js::lower(&unsnarl_model::SourceInput {
        text: "const x: number = f();",
        rel_path: "bin/tool",
        language: unsnarl_model::Language::TypeScript,
    });
    assert!(m.syntax_errors.is_empty(), "{:?}", m.syntax_errors);
    assert_eq!(m.module, "bin/tool");
}

#[test]
fn large_file() {
    let mut src = String::new();
    for i in 0..3000 {
        src.push_str(&format!(
            "export async function f{i}(a) {{ const r = await fetch(`/x/${{a}}`); if (!r.ok) throw new Error('x'); return r.json(); }}\n"
        ));
    }
    let m = js(&src);
    assert_eq!(m.functions.len(), 3001);
    assert_eq!(targets(&m, "fetch").len(), 3000);
}

/// The parser's arena is reused by a thread from one file to the next: what
/// a file lowers to must not depend on what the thread lowered before it.
#[test]
fn files_lowered_in_turn_on_one_thread_lower_as_on_a_fresh_one() {
    let big: String = (0..5_000)
        .map(|i| {
            format!("export async function g{i}(a) {{ await h(a, [1, 2], {{ k: `${{a}}` }}); }}\n")
        })
        .collect();
    let files: Vec<(&'static str, String)> = vec![
        (
            "src/a.js",
            "const m = new Mutex();\nasync function f() { await m.lock(); g(); }\n".into(),
        ),
        ("src/big.js", big),
        (
            "src/b.ts",
            "export class C { async run(x: Promise<number>) { return await x; } }\n".into(),
        ),
        ("src/broken.js", "function ( {\n".into()),
        (
            "src/a.js",
            "const m = new Mutex();\nasync function f() { await m.lock(); g(); }\n".into(),
        ),
    ];
    let fresh: Vec<String> = files
        .iter()
        .map(|(p, s)| {
            let (p, s) = (*p, s.clone());
            std::thread::spawn(move || dump(&lower_at(p, &s)))
                .join()
                .unwrap()
        })
        .collect();
    let in_turn: Vec<String> =
        std::thread::spawn(move || files.iter().map(|(p, s)| dump(&lower_at(p, s))).collect())
            .join()
            .unwrap();
    assert_eq!(fresh, in_turn);
}

/// The benchmark's parser-only entry point parses as `lower` does (same
/// dialect per extension, same options): the same syntax errors.
#[test]
fn parse_only_counts_the_errors_lower_records() {
    for (path, text, broken) in [
        ("src/a.js", "async function f() { await g(); }\n", false),
        ("src/b.ts", "const x: number = 1;\n", false),
        // TypeScript syntax is an error in a .js file, JSX is not.
        ("src/c.js", "const x: number = 1;\n", true),
        ("src/d.js", "const e = <div>{x}</div>;\n", false),
        ("src/e.cjs", "return 1;\n", false),
        ("src/f.ts", "function (\n", true),
    ] {
        let language = if path.ends_with(".ts") {
            Language::TypeScript
        } else {
            Language::JavaScript
        };
        let input = SourceInput {
            text,
            rel_path: path,
            language,
        };
        let errors = unsnarl_frontend_js::parse_only(&input);
        assert_eq!(errors, lower_at(path, text).syntax_errors.len(), "{path}");
        assert_eq!(errors > 0, broken, "{path}");
    }
}
