//! The binary, end to end: exit codes, usage errors, configuration,
//! `rules`/`rule`, and inputs that must never crash a run.
//!
//! Findings need a front end that lowers code; the application logic around
//! findings (selection, suppressions, thresholds, formats) is tested
//! in-process with a toy front end in `tests/findings.rs`. Parts here that
//! need real findings run once the real front ends are in
//! (`common::frontend_ready`).

mod common;

use common::{Tree, bin, frontend_ready};
use unsnarl_model::Language;

#[test]
fn no_subcommand_is_a_usage_error() {
    let t = Tree::new();
    let o = bin(t.path(), &[]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(o.stderr.contains("Usage"), "{o:?}");
}

#[test]
fn unknown_flags_and_bad_values_are_usage_errors() {
    let t = Tree::new();
    assert_eq!(bin(t.path(), &["check", "--bogus"]).code, 2);
    assert_eq!(bin(t.path(), &["check", "--format", "xml"]).code, 2);
    assert_eq!(bin(t.path(), &["check", "--fail-on", "severe"]).code, 2);
    assert_eq!(bin(t.path(), &["check", "-j", "0"]).code, 2);
    let o = bin(t.path(), &["--version"]);
    assert_eq!(o.code, 0);
    assert!(o.stdout.starts_with("unsnarl "));
}

#[test]
fn a_clean_tree_exits_0_with_a_summary() {
    let t = Tree::new();
    t.write("a.py", "x = 1\n").write("b.go", "package b\n");
    let o = bin(t.path(), &["check"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(o.stdout.starts_with("Scanned 2 files in "), "{o:?}");
    assert!(o.stdout.contains("no findings."), "{o:?}");
    let o = bin(t.path(), &["check", "--quiet"]);
    assert_eq!(o.code, 0);
    assert_eq!(o.stdout, "");
}

#[test]
fn a_nonexistent_path_exits_2_naming_it() {
    let t = Tree::new();
    t.write("a.py", "x = 1\n");
    let o = bin(t.path(), &["check", "a.py", "no/such/dir"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr.contains("path does not exist: no/such/dir"),
        "{o:?}"
    );
}

#[test]
fn unknown_select_or_ignore_values_exit_2_with_the_valid_ones() {
    let t = Tree::new();
    let o = bin(t.path(), &["check", "--select", "blocking-in-async,nope"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr
            .contains("unknown rule or category \"nope\" in --select"),
        "{o:?}"
    );
    assert!(
        o.stderr.contains("orphan-task"),
        "lists the categories: {o:?}"
    );
    assert!(o.stderr.contains("PY002"), "lists the rules: {o:?}");
    let o = bin(t.path(), &["check", "--ignore", "PY9999"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("\"PY9999\" in --ignore"), "{o:?}");
}

#[test]
fn rules_lists_every_rule_in_text_and_json() {
    let t = Tree::new();
    let o = bin(t.path(), &["rules"]);
    assert_eq!(o.code, 0);
    for r in unsnarl_rules::all_rules() {
        let m = r.meta();
        let line = o
            .stdout
            .lines()
            .find(|l| l.starts_with(m.id))
            .unwrap_or_else(|| panic!("{} missing", m.id));
        assert!(
            line.contains(m.name)
                && line.contains(m.category.slug())
                && line.contains(m.severity.slug())
        );
    }
    let o = bin(t.path(), &["rules", "--format", "json"]);
    assert_eq!(o.code, 0);
    let v = o.json();
    let arr = v.as_array().unwrap();
    assert_eq!(arr.len(), unsnarl_rules::all_rules().len());
    for key in ["id", "name", "category", "severity", "languages", "summary"] {
        assert!(arr[0].get(key).is_some(), "missing {key}");
    }
}

#[test]
fn rule_prints_documentation_by_id_or_name() {
    let t = Tree::new();
    let m = unsnarl_rules::all_rules()[0].meta();
    for key in [
        m.id.to_string(),
        m.id.to_ascii_lowercase(),
        m.name.to_string(),
    ] {
        let o = bin(t.path(), &["rule", &key]);
        assert_eq!(o.code, 0, "{key}: {o:?}");
        assert!(
            o.stdout.starts_with(&format!("{} {}\n", m.id, m.name)),
            "{o:?}"
        );
        assert!(o.stdout.contains(m.summary));
        assert!(o.stdout.contains("## Why"));
    }
    let o = bin(t.path(), &["rule", m.id, "--format", "json"]);
    assert_eq!(o.code, 0);
    let v = o.json();
    assert_eq!(v["id"], m.id);
    assert_eq!(v["category"], m.category.slug());
    assert!(v["docs"].as_str().unwrap().contains("## Fix"));
}

#[test]
fn an_unknown_rule_exits_2_with_close_ids() {
    let t = Tree::new();
    let m = unsnarl_rules::all_rules()[0].meta();
    let typo = format!("{}9", m.id);
    let o = bin(t.path(), &["rule", &typo]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr
            .contains(&format!("no rule \"{typo}\"; did you mean: {}", m.id)),
        "{o:?}"
    );
    let o = bin(t.path(), &["rule", "BOGUS"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("did you mean"), "{o:?}");
}

// ---- configuration ----

fn config_error(file: &str, content: &str, scan_from: &str, expect: &str) {
    let t = Tree::new();
    t.write(file, content).write("src/pkg/a.py", "x = 1\n");
    let o = bin(&t.join(scan_from), &["check", "."]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr.contains(expect),
        "expected {expect:?} in:\n{}",
        o.stderr
    );
}

#[test]
fn config_unknown_key_names_file_line_key_and_allowed_keys() {
    config_error(
        "unsnarl.toml",
        "fail-on = \"high\"\n\nselct = [\"blocking-in-async\"]\n",
        "",
        "error: unsnarl.toml:3: unknown key \"selct\"; expected one of: select, ignore, exclude, fail-on",
    );
}

#[test]
fn config_is_discovered_upward_from_the_scanned_path() {
    // The error names the file as seen from the current directory.
    config_error(
        "unsnarl.toml",
        "selct = 1\n",
        "src/pkg",
        "../../unsnarl.toml:1: unknown key \"selct\"",
    );
    config_error(
        ".unsnarl.toml",
        "\nthreads = \"many\"\n",
        "src",
        "../.unsnarl.toml:2: key \"threads\" must be an integer, found string",
    );
    config_error(
        "pyproject.toml",
        "[project]\nname = \"x\"\n\n[tool.unsnarl]\nfail_on = \"high\"\n",
        "",
        "pyproject.toml:5: unknown key \"tool.unsnarl.fail_on\"",
    );
}

#[test]
fn config_wrong_type_and_unknown_rule_and_syntax_errors_exit_2() {
    config_error(
        "unsnarl.toml",
        "select = \"blocking-in-async\"\nfail-on = 3\n",
        "",
        "unsnarl.toml:2: key \"fail-on\" must be a string, found integer",
    );
    config_error(
        "unsnarl.toml",
        "select = [\n  \"blocking-in-async\",\n  \"made-up-rule\",\n]\n",
        "",
        "unsnarl.toml:3: invalid value \"made-up-rule\" for key \"select\"; expected a category (orphan-task",
    );
    config_error(
        "unsnarl.toml",
        "select = [\"a\"\nignore = []\n",
        "",
        "unsnarl.toml:2: invalid TOML",
    );
    config_error(
        "unsnarl.toml",
        "[knowledge.python]\nblockin = [\"x.y\"]\n",
        "",
        "unsnarl.toml:2: unknown key \"knowledge.python.blockin\"; expected one of: blocking, cpu_heavy",
    );
}

#[test]
fn config_unknown_category_or_rule_names_the_closest_ones() {
    config_error(
        "unsnarl.toml",
        "select = [\"orphan-taks\"]\n",
        "",
        "unsnarl.toml:1: invalid value \"orphan-taks\" for key \"select\"; did you mean \"orphan-task\"? expected a category",
    );
    config_error(
        "unsnarl.toml",
        "\nignore = [\"PY00\"]\n",
        "",
        "unsnarl.toml:2: invalid value \"PY00\" for key \"ignore\"; did you mean",
    );
    config_error(
        "unsnarl.toml",
        "[per-file-ignores]\n\"tests/**\" = [\"blocking-in-asink\"]\n",
        "",
        "unsnarl.toml:2: invalid value \"blocking-in-asink\" for key \"per-file-ignores.\"tests/**\"\"; did you mean \"blocking-in-async\"?",
    );
    config_error(
        "unsnarl.toml",
        "file-timeout = \"10s\"\n",
        "",
        "unsnarl.toml:1: key \"file-timeout\" must be a number of seconds, found string",
    );
    config_error(
        "unsnarl.toml",
        "threads = 2\nthreads = 3\n",
        "",
        "unsnarl.toml:2: invalid TOML: duplicate key",
    );
    config_error(
        "unsnarl.toml",
        "fail-on = high\n",
        "",
        "unsnarl.toml:1: invalid TOML: string values must be quoted",
    );
    config_error(
        "pyproject.toml",
        "[tool.unsnarl]\nselect = [\"PY002\", 7]\n",
        "",
        "pyproject.toml:2: key \"tool.unsnarl.select\" must be an array of strings, found integer",
    );
    config_error(
        "unsnarl.toml",
        "format = \"xml\"\n",
        "",
        "unsnarl.toml:1: invalid value \"xml\" for key \"format\"; expected one of: text, concise, json, sarif, github",
    );
}

#[test]
fn a_config_that_is_not_a_regular_file_is_an_error_not_a_hang() {
    let t = Tree::new();
    t.write("a.py", "x = 1\n");
    let st = std::process::Command::new("mkfifo")
        .arg(t.join("fifo.toml"))
        .status()
        .expect("mkfifo");
    assert!(st.success());
    let o = bin(t.path(), &["check", "--config", "fifo.toml"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr
            .contains("fifo.toml: cannot read: not a regular file"),
        "{o:?}"
    );
    let o = bin(t.path(), &["check", "--config", "/dev/zero"]);
    assert_eq!(o.code, 2, "{o:?}");
    t.write("big.toml", "# x\n".repeat(3_000_000));
    let o = bin(t.path(), &["check", "--config", "big.toml"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(o.stderr.contains("larger than 10 MiB"), "{o:?}");
    t.write("latin1.toml", b"# caf\xe9\n");
    let o = bin(t.path(), &["check", "--config", "latin1.toml"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(o.stderr.contains("latin1.toml: cannot read"), "{o:?}");
}

#[test]
fn unknown_codes_on_the_command_line_suggest_the_closest() {
    let t = Tree::new();
    let o = bin(t.path(), &["check", "--select", "blocking-in-asyn"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr
            .contains("\"blocking-in-asyn\" in --select; did you mean \"blocking-in-async\"?"),
        "{o:?}"
    );
}

#[test]
fn config_values_apply_and_flags_win() {
    let t = Tree::new();
    t.write("pyproject.toml", "[tool.unsnarl]\nformat = \"json\"\n")
        .write("a.py", "x = 1\n");
    let o = bin(t.path(), &["check"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert_eq!(o.json()["summary"]["files_scanned"], 1);
    let o = bin(t.path(), &["check", "--format", "text"]);
    // (The first run's results are in the cache: the format does not matter.)
    assert!(
        o.stdout.starts_with("Scanned 1 file (1 from the cache) in"),
        "{o:?}"
    );
    // --no-config and --config bypass discovery.
    t.write("unsnarl.toml", "bogus = 1\n");
    assert_eq!(bin(t.path(), &["check"]).code, 2);
    assert_eq!(bin(t.path(), &["check", "--no-config"]).code, 0);
    t.write("other.toml", "format = \"github\"\n");
    let o = bin(t.path(), &["check", "--config", "other.toml"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert_eq!(o.stdout, "");
    let o = bin(t.path(), &["check", "--config", "missing.toml"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("missing.toml: cannot read"), "{o:?}");
}

#[test]
fn config_exclude_and_threads_apply() {
    let t = Tree::new();
    t.write("unsnarl.toml", "exclude = [\"gen/\"]\nthreads = 1\n")
        .write("a.py", "x = 1\n")
        .write("gen/b.py", "x = 1\n");
    let o = bin(t.path(), &["check", "--format", "json"]);
    assert_eq!(o.json()["summary"]["files_scanned"], 1, "{o:?}");
    // The flag replaces the config's list.
    let o = bin(
        t.path(),
        &["check", "--format", "json", "--exclude", "a.py"],
    );
    assert_eq!(o.json()["summary"]["files_scanned"], 1, "{o:?}");
    let o = bin(
        t.path(),
        &["check", "--format", "json", "--exclude", "a.py,gen"],
    );
    assert_eq!(o.json()["summary"]["files_scanned"], 0, "{o:?}");
}

// ---- walking ----

#[test]
fn ignore_files_are_honored_outside_git_and_hidden_and_dependency_folders_skipped() {
    let t = Tree::new();
    t.write(".gitignore", "build/\n")
        .write(".ignore", "*.gen.py\n")
        .write("build/x.py", "x = 1\n")
        .write("a.gen.py", "x = 1\n")
        .write(".hidden/y.py", "x = 1\n")
        .write("node_modules/lib/z.js", "x = 1\n")
        .write("src/ok.py", "x = 1\n")
        .write("src/README.md", "not source\n");
    let o = bin(t.path(), &["check", "--format", "json"]);
    let v = o.json();
    assert_eq!(v["summary"]["files_scanned"], 1, "{o:?}");
    // An explicitly named file is scanned whatever the ignore files say.
    let o = bin(t.path(), &["check", "--format", "json", "build/x.py"]);
    assert_eq!(o.json()["summary"]["files_scanned"], 1, "{o:?}");
}

#[test]
fn go_files_the_go_tool_ignores_are_skipped_unless_they_are_the_root() {
    let t = Tree::new();
    let leak = "package p\n\nimport \"time\"\n\nfunc Leak() int {\n\tch := make(chan int)\n\tgo func() { ch <- 1 }()\n\tselect {\n\tcase v := <-ch:\n\t\treturn v\n\tcase <-time.After(time.Second):\n\t\treturn 0\n\t}\n}\n";
    t.write("p/p.go", "package p\n")
        .write("p/testdata/leak.go", leak)
        .write("_examples/leak.go", leak)
        .write("p/_gen.go", leak)
        .write("py/testdata/x.py", "x = 1\n");
    let o = bin(t.path(), &["check", "--format", "json"]);
    let v = o.json();
    assert_eq!(v["summary"]["files_scanned"], 2, "{o:?}");
    assert_eq!(v["findings"].as_array().map(Vec::len), Some(0), "{o:?}");
    // The same files given as the root of the scan are scanned.
    let o = bin(t.path(), &["check", "--format", "json", "p/testdata"]);
    let v = o.json();
    assert_eq!(v["summary"]["files_scanned"], 1, "{o:?}");
    assert_eq!(v["summary"]["findings_total"], 2, "{o:?}");
}

#[test]
fn exclude_globs_repeat_and_split_on_commas() {
    let t = Tree::new();
    t.write("a/x.py", "")
        .write("b/y.py", "")
        .write("c/z.py", "")
        .write("d/w.py", "");
    let o = bin(
        t.path(),
        &[
            "check",
            "--format",
            "json",
            "--exclude",
            "a",
            "--exclude",
            "b/,c/*.py",
        ],
    );
    assert_eq!(o.json()["summary"]["files_scanned"], 1, "{o:?}");
}

#[test]
fn an_explicit_non_source_file_is_reported_as_skipped() {
    let t = Tree::new();
    t.write("notes.txt", "hello");
    let o = bin(t.path(), &["check", "notes.txt"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stderr.contains("note: skipped notes.txt: not a Python"),
        "{o:?}"
    );
}

#[test]
fn paths_are_relative_to_the_current_directory_or_as_given() {
    let t = Tree::new();
    t.write("proj/sub/a.py", "\0binary")
        .write("other/b.py", "\0binary");
    let o = bin(
        &t.join("proj"),
        &["check", "--format", "json", ".", "../other"],
    );
    let v = o.json();
    let paths = &v["summary"]["files_skipped"]["by_reason"]["binary"]["paths"];
    assert_eq!(
        paths,
        &serde_json::json!(["../other/b.py", "sub/a.py"]),
        "{o:?}"
    );
    let abs = t.join("other/b.py");
    let o = bin(
        &t.join("proj"),
        &["check", "--format", "json", abs.to_str().unwrap()],
    );
    let v = o.json();
    assert_eq!(
        v["summary"]["files_skipped"]["by_reason"]["binary"]["paths"][0],
        abs.to_str().unwrap()
    );
}

// ---- bad input never panics ----

fn no_panic(o: &common::Out) {
    assert!(!o.stderr.contains("panicked"), "{o:?}");
    assert!(o.code == 0 || o.code == 1, "{o:?}");
}

#[test]
fn invalid_utf8_is_an_error_for_that_file_only() {
    let t = Tree::new();
    t.write("bad.py", b"x = '\xff\xfe'\n")
        .write("good.py", "x = 1\n");
    let o = bin(t.path(), &["check"]);
    no_panic(&o);
    assert!(o.stderr.contains("error: bad.py: not valid UTF-8"), "{o:?}");
    assert!(
        o.stdout.contains("Scanned 1 file") && o.stdout.contains("1 file could not be read"),
        "{o:?}"
    );
    let v = bin(t.path(), &["check", "--format", "json"]).json();
    assert_eq!(v["errors"][0]["kind"], "invalid-utf8");
    assert_eq!(v["errors"][0]["path"], "bad.py");
    assert_eq!(v["summary"]["files_with_errors"], 1);
}

#[test]
fn an_unreadable_file_is_an_error_not_a_crash() {
    let t = Tree::new();
    t.write("secret.py", "x = 1\n").write("ok.py", "x = 1\n");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(t.join("secret.py"), std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read(t.join("secret.py")).is_ok() {
        // Root reads anything: use a file whose reads fail for everyone
        // (reading /proc/self/mem at offset 0 is an I/O error).
        match unsnarl::walk::load(std::path::Path::new("/proc/self/mem")) {
            unsnarl::walk::Load::Problem(unsnarl::walk::ProblemKind::Unreadable, _) => {}
            other => panic!("{other:?}"),
        }
        return;
    }
    let o = bin(t.path(), &["check", "--format", "json"]);
    no_panic(&o);
    let v = o.json();
    assert_eq!(v["errors"][0]["path"], "secret.py", "{o:?}");
    assert_eq!(v["errors"][0]["kind"], "unreadable");
    assert_eq!(v["summary"]["files_scanned"], 1);
}

#[test]
fn a_binary_file_with_a_source_extension_is_skipped() {
    let t = Tree::new();
    t.write("blob.py", b"\x7fELF\0\0\0\x01binary");
    let o = bin(t.path(), &["check"]);
    no_panic(&o);
    assert!(o.stderr.contains("note: skipped blob.py: binary"), "{o:?}");
    assert!(o.stdout.contains("1 file skipped (1 binary)"), "{o:?}");
}

#[test]
fn an_empty_file_is_scanned() {
    let t = Tree::new();
    for ext in ["py", "js", "ts", "go", "rs"] {
        t.write(&format!("empty.{ext}"), "");
    }
    let o = bin(t.path(), &["check"]);
    no_panic(&o);
    assert!(o.stdout.starts_with("Scanned 5 files"), "{o:?}");
}

#[test]
fn a_file_with_syntax_errors_is_still_analyzed() {
    let t = Tree::new();
    t.write("broken.py", "def f(:\n    return )\n")
        .write("broken.js", "function (\n")
        .write("broken.go", "package x\nfunc {\n")
        .write("broken.rs", "fn main( {\n");
    let o = bin(t.path(), &["check", "--format", "json"]);
    no_panic(&o);
    let v = o.json();
    assert_eq!(v["summary"]["files_scanned"], 4, "{o:?}");
    let with_errors = v["summary"]["files_with_syntax_errors"].as_u64().unwrap();
    if frontend_ready(Language::Python) {
        let listed: Vec<&str> = v["summary"]["syntax_errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["path"].as_str().unwrap())
            .collect();
        assert!(listed.contains(&"broken.py"), "{listed:?}");
        let o = bin(t.path(), &["check", "broken.py"]);
        assert!(o.stderr.contains("warning: broken.py:1:"), "{o:?}");
        assert!(o.stdout.contains("1 file with syntax errors"), "{o:?}");
    } else {
        assert_eq!(with_errors, 0);
    }
}

#[test]
fn a_5_mb_minified_bundle_is_skipped_with_a_notice() {
    let t = Tree::new();
    let line = "var a=1;".repeat(5 * 1024 * 1024 / 8);
    t.write("bundle.js", &line);
    let o = bin(t.path(), &["check"]);
    no_panic(&o);
    assert!(
        o.stderr
            .contains("note: skipped bundle.js: larger than 2 MiB"),
        "{o:?}"
    );
    // Below the size limit, a long line in a big file is minified code.
    let t = Tree::new();
    t.write("app.js", "var a=1;".repeat(150 * 1024 / 8))
        .write("vendor.min.js", "var a=1;\n");
    let o = bin(t.path(), &["check", "--format", "json"]);
    let v = o.json();
    assert_eq!(
        v["summary"]["files_skipped"]["by_reason"]["minified"]["count"], 2,
        "{o:?}"
    );
    let o = bin(t.path(), &["check"]);
    assert!(o.stderr.contains("note: skipped app.js: minified"), "{o:?}");
}

#[test]
fn deeply_nested_parentheses_do_not_crash_any_front_end() {
    let t = Tree::new();
    // 100 openings a line: one 20,000-byte line would make the file minified
    // (and skipped). No language ends a statement at a line ending in `(`.
    let opens = |open: &str| format!("{}\n", open.repeat(100)).repeat(100);
    let nest = |open: &str, close: &str| format!("{}1{}", opens(open), close.repeat(10_000));
    t.write("deep.py", format!("x = {}\n", nest("(", ")")))
        .write("deep.js", format!("let x = {};\n", nest("(", ")")))
        .write("deep.ts", format!("let x: number = {};\n", nest("(", ")")))
        .write(
            "deep.go",
            format!("package p\n\nvar x = {}\n", nest("(", ")")),
        )
        .write(
            "deep.rs",
            format!("fn f() -> i32 {{ {} }}\n", nest("(", ")")),
        )
        .write("unclosed.py", format!("x = {}\n", opens("(")))
        .write("brackets.js", format!("x = {};\n", nest("[", "]")));
    let o = bin(t.path(), &["check", "--format", "json"]);
    no_panic(&o);
    let v = o.json();
    assert_eq!(v["summary"]["internal_errors"], 0, "{o:?}");
    assert_eq!(v["summary"]["files_scanned"], 7, "{o:?}");
}

#[test]
fn a_symlink_loop_neither_hangs_nor_fails_the_run() {
    let t = Tree::new();
    t.write("a/x.py", "x = 1\n");
    std::os::unix::fs::symlink("..", t.join("a/loop")).unwrap();
    std::os::unix::fs::symlink("self.py", t.join("self.py")).unwrap();
    std::os::unix::fs::symlink(t.join("a/x.py"), t.join("link.py")).unwrap();
    let o = bin(t.path(), &["check", "--format", "json"]);
    no_panic(&o);
    let v = o.json();
    assert_eq!(v["summary"]["files_scanned"], 1, "{o:?}");
    assert_eq!(
        v["summary"]["files_skipped"]["by_reason"]["symlink"]["count"], 2,
        "{o:?}"
    );
}

#[test]
fn a_fifo_is_skipped_without_being_opened() {
    let t = Tree::new();
    t.write("a.py", "x = 1\n");
    let st = std::process::Command::new("mkfifo")
        .arg(t.join("pipe.py"))
        .status()
        .expect("mkfifo");
    assert!(st.success());
    let o = bin(t.path(), &["check", "--format", "json"]);
    no_panic(&o);
    let v = o.json();
    assert_eq!(v["summary"]["files_scanned"], 1, "{o:?}");
    assert_eq!(
        v["summary"]["files_skipped"]["by_reason"]["not-a-regular-file"]["paths"][0],
        "pipe.py"
    );
    // Named explicitly, too.
    let o = bin(t.path(), &["check", "pipe.py"]);
    no_panic(&o);
    assert!(
        o.stderr
            .contains("note: skipped pipe.py: not a regular file"),
        "{o:?}"
    );
}

// ---- output ----

fn strip_elapsed(json: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(json).unwrap();
    if v.get("summary").is_some() {
        v["summary"]["elapsed_ms"] = serde_json::json!(0);
        // The second run reads the first one's results from the cache.
        v["summary"]["files_cached"] = serde_json::json!(0);
    }
    serde_json::to_string_pretty(&v).unwrap()
}

#[test]
fn json_and_sarif_are_identical_for_one_and_four_threads() {
    let t = Tree::new();
    for i in 0..40 {
        t.write(&format!("pkg{}/m{i}.py", i % 5), format!("import asyncio\nimport time\n\nq = asyncio.Queue()\n\nasync def h{i}():\n    time.sleep(1)\n"));
        t.write(
            &format!("web/f{i}.js"),
            "const fs = require('fs');\nasync function h() { fs.readFileSync('x'); }\n",
        );
    }
    t.write("bad.py", b"\xff").write("bin.go", "\0");
    for format in ["json", "sarif"] {
        let one = bin(t.path(), &["check", "--format", format, "-j1"]);
        let four = bin(t.path(), &["check", "--format", format, "-j4"]);
        assert_eq!(
            strip_elapsed(&one.stdout),
            strip_elapsed(&four.stdout),
            "{format}"
        );
        let again = bin(t.path(), &["check", "--format", format, "-j4"]);
        assert_eq!(
            strip_elapsed(&four.stdout),
            strip_elapsed(&again.stdout),
            "{format}"
        );
    }
}

/// The report with the one field that may differ between identical runs
/// (`"elapsed_ms": N`) masked, and nothing else touched: the rest must be
/// byte-identical.
fn mask_elapsed(out: &str) -> String {
    const KEY: &str = "\"elapsed_ms\": ";
    match out.find(KEY) {
        None => out.to_string(),
        Some(i) => {
            let rest = &out[i + KEY.len()..];
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            format!("{}{KEY}0{}", &out[..i], &rest[digits..])
        }
    }
}

/// `(path, line, column, rule)` of each finding, in report order.
fn finding_keys(v: &serde_json::Value) -> Vec<(String, u64, u64, String)> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
                f["column"].as_u64().unwrap(),
                f["rule"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn reports_on_examples_and_fixtures_are_byte_identical_across_threads_and_runs() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for target in ["examples", "tests/fixtures"] {
        for format in ["json", "sarif"] {
            let run = |j: &str| {
                let o = bin(
                    repo,
                    &[
                        "check",
                        "--no-config",
                        "--no-cache",
                        "--format",
                        format,
                        j,
                        target,
                    ],
                );
                assert!(o.code == 0 || o.code == 1, "{target} {format} {j}: {o:?}");
                o.stdout
            };
            let one = mask_elapsed(&run("-j1"));
            let four = mask_elapsed(&run("-j4"));
            let again = mask_elapsed(&run("-j4"));
            let one_again = mask_elapsed(&run("-j1"));
            assert!(one == four, "{target} {format}: -j1 and -j4 differ");
            assert!(four == again, "{target} {format}: two -j4 runs differ");
            assert!(one == one_again, "{target} {format}: two -j1 runs differ");
            if format == "json" {
                let v: serde_json::Value = serde_json::from_str(&one).unwrap();
                let keys = finding_keys(&v);
                if frontend_ready(Language::Python) {
                    assert!(!keys.is_empty(), "{target}: no findings at all?");
                }
                let mut sorted = keys.clone();
                sorted.sort();
                assert_eq!(
                    keys, sorted,
                    "{target}: findings not sorted by path, line, column, rule"
                );
            }
        }
    }
}

#[test]
fn json_summary_has_every_documented_key() {
    let t = Tree::new();
    t.write("a.py", "x = 1\n");
    let v = bin(t.path(), &["check", "--format", "json"]).json();
    for key in [
        "version", "tool", "findings", "summary", "errors", "warnings",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    let s = &v["summary"];
    for key in [
        "files_scanned",
        "files_with_syntax_errors",
        "syntax_errors",
        "files_skipped",
        "files_with_errors",
        "internal_errors",
        "suppressed",
        "baselined",
        "baseline_stale",
        "unchanged",
        "findings_by_severity",
        "findings_total",
        "elapsed_ms",
    ] {
        assert!(s.get(key).is_some(), "missing summary.{key}");
    }
    for sev in ["critical", "high", "medium", "low"] {
        assert_eq!(s["findings_by_severity"][sev], 0);
    }
}

#[test]
fn sarif_lists_every_selected_rule() {
    let t = Tree::new();
    t.write("a.py", "x = 1\n");
    let v = bin(t.path(), &["check", "--format", "sarif"]).json();
    assert_eq!(v["version"], "2.1.0");
    let rules = v["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), unsnarl_rules::all_rules().len());
    let r = &rules[0];
    for key in [
        "id",
        "name",
        "shortDescription",
        "fullDescription",
        "help",
        "defaultConfiguration",
        "properties",
    ] {
        assert!(r.get(key).is_some(), "rule lacks {key}");
    }
    assert!(r["help"]["markdown"].as_str().unwrap().contains("## Why"));
    assert_eq!(v["runs"][0]["invocations"][0]["executionSuccessful"], true);
    let m = unsnarl_rules::all_rules()[0].meta();
    let v = bin(t.path(), &["check", "--format", "sarif", "--select", m.id]).json();
    assert_eq!(
        v["runs"][0]["tool"]["driver"]["rules"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn statistics_needs_text_or_json() {
    let t = Tree::new();
    let o = bin(t.path(), &["check", "--statistics", "--format", "sarif"]);
    assert_eq!(o.code, 2);
    let o = bin(t.path(), &["check", "--statistics", "--format", "json"]);
    assert_eq!(o.code, 0);
    assert!(o.json()["statistics"].as_array().unwrap().is_empty());
}

// ---- with the real front ends ----

#[test]
fn real_findings_set_the_exit_code() {
    if !frontend_ready(Language::Python) {
        return;
    }
    let t = Tree::new();
    t.write(
        "app.py",
        "import asyncio\nimport time\n\nasync def handler():\n    time.sleep(1)\n",
    );
    let o = bin(t.path(), &["check", "--format", "json"]);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(
        common::places(&o.json()).contains(&"app.py:5:PY002".to_string()),
        "{o:?}"
    );
    let o = bin(t.path(), &["check", "--ignore", "blocking-in-async"]);
    assert_eq!(o.code, 0, "{o:?}");
    t.write("app.py", "import asyncio\nimport time\n\nasync def handler():\n    time.sleep(1)  # unsnarl: ignore[PY002]\n");
    assert_eq!(bin(t.path(), &["check"]).code, 0);
}

#[test]
fn debug_model_dumps_the_model_of_one_file() {
    let t = Tree::new();
    t.write("pkg/mod.py", "import time\n\ndef f():\n    time.sleep(1)\n")
        .write("notes.txt", "x");
    let o = bin(t.path(), &["debug-model", "pkg/mod.py"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(o.stdout.contains("<module>"), "{o:?}");
    if frontend_ready(Language::Python) {
        assert!(o.stdout.contains("time.sleep"), "{o:?}");
    }
    let o = bin(t.path(), &["debug-model", "notes.txt"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("notes.txt: not a Python"), "{o:?}");
    let o = bin(t.path(), &["debug-model", "missing.py"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("missing.py"), "{o:?}");
}

#[test]
fn generate_docs_writes_the_rules_reference() {
    let t = Tree::new();
    let o = bin(t.path(), &["generate-docs", "--output", "-"]);
    assert_eq!(o.code, 0);
    assert_eq!(o.stdout, unsnarl::docs::rules_markdown());
    let o = bin(t.path(), &["generate-docs"]);
    assert_eq!(o.code, 0, "{o:?}");
    let written = std::fs::read_to_string(t.join("docs/rules.md")).unwrap();
    assert_eq!(written, unsnarl::docs::rules_markdown());
}

#[test]
fn a_memory_budget_too_small_to_keep_models_gives_the_same_reports() {
    // With no room to keep models between the passes, every file is read
    // and lowered again for the rules: slower, but the same results, cross-
    // file findings (helper chains, related locations) included.
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for target in ["examples", "tests/fixtures"] {
        for format in ["json", "sarif"] {
            let run = |budget: &str| {
                let o = bin(
                    repo,
                    &[
                        "check",
                        "--no-config",
                        "--no-cache",
                        "--format",
                        format,
                        "--memory-budget",
                        budget,
                        target,
                    ],
                );
                assert!(o.code == 0 || o.code == 1, "{target} {format}: {o:?}");
                mask_elapsed(&o.stdout)
            };
            assert!(
                run("0") == run("1024"),
                "{target} {format}: reports differ with and without kept models"
            );
        }
    }
}

#[test]
fn memory_budget_must_be_a_number_of_mib() {
    let t = tempfile::tempdir().unwrap();
    let o = bin(t.path(), &["check", "--memory-budget", "lots"]);
    assert_eq!(o.code, 2, "{o:?}");
    std::fs::write(t.path().join("unsnarl.toml"), "memory-budget = \"lots\"\n").unwrap();
    let o = bin(t.path(), &["check"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(o.stderr.contains("memory-budget"), "{o:?}");
}

/// `.pre-commit-hooks.yaml`: each hook's command runs as pre-commit runs it
/// (with the staged files appended, or alone), and its file pattern names
/// only extensions unsnarl scans.
#[test]
fn the_pre_commit_hooks_run_and_match_source_files() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/.pre-commit-hooks.yaml"
    ))
    .unwrap();
    let hooks: Vec<&str> = text.split("\n- id: ").skip(1).collect();
    assert_eq!(hooks.len(), 2, "{text}");
    let t = Tree::new();
    t.write("a.py", "x = 1\n").write("b.go", "package b\n");
    for hook in hooks {
        let field = |name: &str| {
            hook.lines()
                .find_map(|l| l.trim().strip_prefix(&format!("{name}: ")))
                .unwrap_or_else(|| panic!("no {name} in {hook}"))
        };
        let entry: Vec<&str> = field("entry").split_whitespace().collect();
        assert_eq!(entry[0], "unsnarl", "{hook}");
        let mut args = entry[1..].to_vec();
        if !hook.contains("pass_filenames: false") {
            args.extend(["a.py", "b.go"]);
        }
        let o = bin(t.path(), &args);
        assert_eq!(o.code, 0, "{hook}: {o:?}");
        let files = field("files");
        let exts = files
            .strip_prefix("\\.(")
            .and_then(|f| f.strip_suffix(")$"))
            .unwrap_or_else(|| panic!("unexpected files pattern {files}"));
        for ext in exts.split('|') {
            assert!(Language::from_extension(ext).is_some(), "{ext} in {hook}");
        }
        assert_eq!(field("require_serial"), "true", "{hook}");
    }
}
