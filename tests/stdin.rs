//! `check --stdin-filename PATH`: an editor's unsaved buffer analyzed as the
//! file it will be, alone or within the project (in-process, toy front end).

mod common;

use common::{Out, Tree, inproc_with_stdin, places};
use serde_json::Value;

/// PY003 on line 2, PY002 on line 5.
const APP: &str =
    "import asyncio\njobs = asyncio.Queue()\n\nasync def handler():\n    time.sleep(1)\n";

fn run(t: &Tree, dir: &str, args: &[&str], input: &[u8]) -> Out {
    inproc_with_stdin(&t.join(dir), args, &common::toy::Toy, input)
}

fn json(t: &Tree, dir: &str, args: &[&str], input: &[u8]) -> (i32, Value) {
    let mut a = vec!["check", "--format", "json"];
    a.extend_from_slice(args);
    let o = run(t, dir, &a, input);
    (o.code, o.json())
}

#[test]
fn stdin_alone_is_analyzed_as_the_named_file() {
    let t = Tree::new();
    t.write("other.py", APP);
    // Not on disk at all.
    let (code, v) = json(&t, ".", &["--stdin-filename", "pkg/new.py"], APP.as_bytes());
    assert_eq!(code, 1, "{v}");
    assert_eq!(places(&v), ["pkg/new.py:2:PY003", "pkg/new.py:5:PY002"]);
    assert_eq!(v["summary"]["files_scanned"], 1, "only the stdin file");
    // On disk with other content: stdin wins.
    t.write("clean.py", "x = 1\n");
    let (_, v) = json(&t, ".", &["--stdin-filename", "clean.py"], APP.as_bytes());
    assert_eq!(places(&v), ["clean.py:2:PY003", "clean.py:5:PY002"]);
    let (code, v) = json(&t, ".", &["--stdin-filename", "other.py"], b"x = 1\n");
    assert_eq!(code, 0, "{v}");
    assert_eq!(places(&v), Vec::<String>::new());
}

#[test]
fn stdin_with_paths_replaces_or_adds_the_file_in_the_scan() {
    let t = Tree::new();
    t.write("src/app.py", "x = 1\n").write("src/b.py", APP);
    let (_, v) = json(
        &t,
        ".",
        &["--stdin-filename", "src/app.py", "src"],
        APP.as_bytes(),
    );
    assert_eq!(
        places(&v),
        [
            "src/app.py:2:PY003",
            "src/app.py:5:PY002",
            "src/b.py:2:PY003",
            "src/b.py:5:PY002"
        ]
    );
    assert_eq!(v["summary"]["files_scanned"], 2);
    let (_, v) = json(
        &t,
        ".",
        &["--stdin-filename", "src/c.py", "src"],
        b"async def h():\n    time.sleep(1)\n",
    );
    assert_eq!(
        places(&v),
        ["src/b.py:2:PY003", "src/b.py:5:PY002", "src/c.py:2:PY002"]
    );
}

#[test]
fn the_configuration_is_found_from_the_stdin_files_place() {
    let t = Tree::new();
    t.write("proj/unsnarl.toml", "ignore = [\"PY003\"]\n");
    std::fs::create_dir_all(t.join("elsewhere")).unwrap();
    let (_, v) = json(
        &t,
        "elsewhere",
        &["--stdin-filename", "../proj/sub/new.py"],
        APP.as_bytes(),
    );
    assert_eq!(places(&v), ["../proj/sub/new.py:5:PY002"]);
}

#[test]
fn a_dash_names_stdin() {
    let t = Tree::new();
    t.write("other.py", APP);
    let (code, v) = json(&t, ".", &["--stdin-filename", "a.py", "-"], APP.as_bytes());
    assert_eq!(code, 1, "{v}");
    assert_eq!(places(&v), ["a.py:2:PY003", "a.py:5:PY002"]);
    let o = run(&t, ".", &["check", "-"], APP.as_bytes());
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr
            .contains("`-` reads the code from stdin and needs `--stdin-filename PATH`"),
        "{o:?}"
    );
}

#[test]
fn odd_stdin_input_is_reported_not_a_crash() {
    let t = Tree::new();
    let o = run(
        &t,
        ".",
        &["check", "--stdin-filename", "notes.txt"],
        APP.as_bytes(),
    );
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr.contains(
            "--stdin-filename notes.txt: not a Python, JavaScript, TypeScript, Go or Rust file name"
        ),
        "{o:?}"
    );
    let (code, v) = json(&t, ".", &["--stdin-filename", "a.py"], b"x = '\xff'\n");
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["errors"][0]["path"], "a.py");
    assert_eq!(v["errors"][0]["kind"], "invalid-utf8");
    let (_, v) = json(&t, ".", &["--stdin-filename", "a.py"], b"x\0y");
    assert_eq!(
        v["summary"]["files_skipped"]["by_reason"]["binary"]["count"],
        1
    );
    let (code, v) = json(&t, ".", &["--stdin-filename", "a.py"], b"");
    assert_eq!(code, 0);
    assert_eq!(v["summary"]["files_scanned"], 1);
}
