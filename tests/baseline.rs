//! Baselines (`--write-baseline`, `--baseline`, `baseline` in the
//! configuration), in-process with the toy front end (`tests/common/toy.rs`):
//! recorded findings are left out, new ones are not, and the file is
//! matched by content and by the path relative to it, whatever directory
//! the scan runs from.

mod common;

use common::{Out, Tree, places, toy};
use serde_json::Value;

/// PY003 on line 2, PY002 on line 5.
const APP: &str =
    "import asyncio\njobs = asyncio.Queue()\n\nasync def handler():\n    time.sleep(1)\n";

fn run(t: &Tree, dir: &str, args: &[&str]) -> Out {
    toy(&t.join(dir), args)
}

fn report(t: &Tree, dir: &str, args: &[&str]) -> (i32, Value) {
    let mut a = vec!["check", "--format", "json"];
    a.extend_from_slice(args);
    let o = run(t, dir, &a);
    (o.code, o.json())
}

/// Writes the baseline `file` for the tree's findings, from its root.
fn record(t: &Tree, file: &str) {
    let o = run(t, ".", &["check", "--no-config", "--write-baseline", file]);
    assert_eq!(o.code, 0, "{o:?}");
}

/// (path, rule) of each entry, in the file's order (path, then line).
fn entries(t: &Tree, file: &str) -> Vec<(String, String)> {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(t.join(file)).unwrap()).unwrap();
    assert_eq!(v["unsnarl_baseline"], 1);
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["path"].as_str().unwrap().to_string(),
                e["rule"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn recorded_findings_are_left_out_and_new_ones_reported() {
    let t = Tree::new();
    t.write("src/app.py", APP);
    let o = run(
        &t,
        ".",
        &["check", "--no-config", "--write-baseline", "base.json"],
    );
    assert_eq!(o.code, 0, "{o:?}");
    assert_eq!(o.stdout, "", "writing reports nothing: {o:?}");
    assert!(
        o.stderr.contains("wrote base.json: 2 findings recorded"),
        "{o:?}"
    );
    assert_eq!(
        entries(&t, "base.json"),
        [
            ("src/app.py".to_string(), "PY003".to_string()),
            ("src/app.py".to_string(), "PY002".to_string())
        ]
    );

    let (code, v) = report(&t, ".", &["--no-config", "--baseline", "base.json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(places(&v), Vec::<String>::new());
    assert_eq!(v["summary"]["baselined"], 2);
    assert_eq!(v["summary"]["baseline_stale"], 0);

    // Lines moved by an edit above, and a new bug below.
    t.write(
        "src/app.py",
        format!("# header\n\n{APP}\nasync def other():\n    time.sleep(2)\n"),
    );
    let (code, v) = report(&t, ".", &["--no-config", "--baseline", "base.json"]);
    assert_eq!(code, 1);
    assert_eq!(places(&v), ["src/app.py:10:PY002"]);
    assert_eq!(v["summary"]["baselined"], 2);

    // Without the baseline, everything.
    let (_, v) = report(&t, ".", &["--no-config"]);
    assert_eq!(places(&v).len(), 3);
}

#[test]
fn a_second_copy_of_a_recorded_bug_is_new() {
    let t = Tree::new();
    t.write("app.py", "async def a():\n    time.sleep(1)\n");
    record(&t, "b.json");
    t.write(
        "app.py",
        "async def a():\n    time.sleep(1)\n\nasync def b():\n    time.sleep(1)\n",
    );
    let (code, v) = report(&t, ".", &["--no-config", "--baseline", "b.json"]);
    assert_eq!(code, 1);
    assert_eq!(places(&v), ["app.py:5:PY002"]);
}

#[test]
fn the_baseline_matches_from_any_directory() {
    let t = Tree::new();
    t.write("src/app.py", APP).write("src/lib/other.py", APP);
    record(&t, "base.json");
    // From a subdirectory, scanning a part of the tree.
    let (code, v) = report(
        &t,
        "src/lib",
        &["--no-config", "--baseline", "../../base.json"],
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["summary"]["baselined"], 2);
    // Given by absolute path, scanning by absolute path.
    let abs_base = t.join("base.json");
    let abs_src = t.join("src");
    let (code, v) = report(
        &t,
        "src/lib",
        &[
            "--no-config",
            "--baseline",
            abs_base.to_str().unwrap(),
            abs_src.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["summary"]["baselined"], 4);
}

#[test]
fn fixed_findings_are_counted_as_stale_only_within_the_scan() {
    let t = Tree::new();
    t.write("a/app.py", APP).write("b/app.py", APP);
    record(&t, "base.json");
    // The blocking call in a/ is fixed.
    t.write("a/app.py", "import asyncio\njobs = asyncio.Queue()\n");
    let (code, v) = report(&t, ".", &["--no-config", "--baseline", "base.json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["summary"]["baselined"], 3);
    assert_eq!(v["summary"]["baseline_stale"], 1);
    let o = run(
        &t,
        ".",
        &["check", "--no-config", "--baseline", "base.json"],
    );
    assert!(
        o.stderr
            .contains("note: 1 baseline entry is no longer found"),
        "{o:?}"
    );
    assert!(o.stdout.contains("3 in the baseline."), "{o:?}");
    // b/ alone, or PY003 alone: the fix in a/ is out of reach.
    let (_, v) = report(&t, ".", &["--no-config", "--baseline", "base.json", "b"]);
    assert_eq!(v["summary"]["baseline_stale"], 0);
    let (_, v) = report(
        &t,
        ".",
        &[
            "--no-config",
            "--baseline",
            "base.json",
            "--select",
            "PY003",
        ],
    );
    assert_eq!(v["summary"]["baseline_stale"], 0);
    assert_eq!(v["summary"]["baselined"], 2);
}

#[test]
fn rewriting_part_of_the_tree_keeps_the_rest() {
    let t = Tree::new();
    t.write("a/app.py", APP).write("b/app.py", APP);
    record(&t, "base.json");
    t.write("a/app.py", "import asyncio\njobs = asyncio.Queue()\n");
    // Only a/, only PY002: b/'s entries and a/'s PY003 stay.
    let o = run(
        &t,
        ".",
        &[
            "check",
            "--no-config",
            "--write-baseline",
            "base.json",
            "--select",
            "PY002",
            "a",
        ],
    );
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stderr.contains(
            "wrote base.json: 0 findings recorded (3 kept from paths or rules outside this scan)"
        ),
        "{o:?}"
    );
    assert_eq!(
        entries(&t, "base.json"),
        [
            ("a/app.py".to_string(), "PY003".to_string()),
            ("b/app.py".to_string(), "PY003".to_string()),
            ("b/app.py".to_string(), "PY002".to_string())
        ]
    );
}

#[test]
fn the_configured_baseline_applies_and_can_be_turned_off_or_rewritten() {
    let t = Tree::new();
    t.write("proj/unsnarl.toml", "baseline = \"ci/baseline.json\"\n")
        .write("proj/src/app.py", APP);
    std::fs::create_dir_all(t.join("proj/ci")).unwrap();
    // The configured file does not exist yet: an error that says how to
    // create it, before any scan.
    let o = run(&t, "proj/src", &["check"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr.contains(
            "baseline file ../ci/baseline.json does not exist; create it with `unsnarl check --write-baseline ../ci/baseline.json`"
        ),
        "{o:?}"
    );
    // --write-baseline without a name writes the configured file.
    let o = run(&t, "proj/src", &["check", "--write-baseline"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert_eq!(
        entries(&t, "proj/ci/baseline.json"),
        [
            ("../src/app.py".to_string(), "PY003".to_string()),
            ("../src/app.py".to_string(), "PY002".to_string())
        ]
    );
    let (code, v) = report(&t, "proj", &[]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["summary"]["baselined"], 2);
    let (code, v) = report(&t, "proj", &["--no-baseline"]);
    assert_eq!(code, 1);
    assert_eq!(v["summary"]["baselined"], 0);
    assert_eq!(places(&v).len(), 2);
}

#[test]
fn bad_baseline_files_are_errors_and_never_overwritten() {
    let t = Tree::new();
    t.write("app.py", APP)
        .write("notes.json", "{\"todo\": []}\n")
        .write("broken.json", "{\"unsnarl_baseline\": 1, \"findings\": [")
        .write("future.json", "{\"unsnarl_baseline\": 9, \"findings\": []}");
    // Each: the flags after `check --no-config`, and what stderr says.
    let errors: &[(&[&str], &[&str])] = &[
        (
            &["--baseline", "missing.json"],
            &["baseline file missing.json does not exist"],
        ),
        (
            &["--baseline", "broken.json"],
            &["broken.json: not an unsnarl baseline (line 1"],
        ),
        (
            &["--baseline", "future.json"],
            &["version 9 is not supported"],
        ),
        (
            &["--write-baseline", "notes.json"],
            &["notes.json: not an unsnarl baseline", "not overwritten"],
        ),
        (
            &["--write-baseline"],
            &["--write-baseline needs a file name"],
        ),
        (&["--write-baseline", "."], &["is a directory"]),
    ];
    for (flags, says) in errors {
        let mut args = vec!["check", "--no-config"];
        args.extend_from_slice(flags);
        let o = run(&t, ".", &args);
        assert_eq!(o.code, 2, "{flags:?}: {o:?}");
        for needle in *says {
            assert!(o.stderr.contains(needle), "{flags:?}: {o:?}");
        }
    }
    assert_eq!(
        std::fs::read_to_string(t.join("notes.json")).unwrap(),
        "{\"todo\": []}\n"
    );
    let o = run(
        &t,
        ".",
        &[
            "check",
            "--no-config",
            "--baseline",
            "x.json",
            "--no-baseline",
        ],
    );
    assert_eq!(o.code, 2, "conflicting flags are a usage error: {o:?}");
    t.write("unsnarl.toml", "baseline = 3\n");
    let o = run(&t, ".", &["check"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("unsnarl.toml:1"), "{o:?}");
}

#[test]
fn an_internal_error_while_writing_exits_2_and_names_the_file() {
    let t = Tree::new();
    t.write("app.py", APP).write("bad.py", "TOY_PANIC\n");
    let o = run(
        &t,
        ".",
        &["check", "--no-config", "--write-baseline", "b.json"],
    );
    assert_eq!(o.code, 2, "{o:?}");
    assert_eq!(o.stderr.matches("error: bad.py: ").count(), 1, "{o:?}");
    assert!(
        o.stderr.contains("wrote b.json: 2 findings recorded"),
        "{o:?}"
    );
    let o = run(
        &t,
        ".",
        &[
            "check",
            "--no-config",
            "--format",
            "json",
            "--write-baseline",
            "b.json",
        ],
    );
    assert_eq!(o.code, 2, "{o:?}");
    assert_eq!(o.stderr.matches("error: bad.py: ").count(), 1, "{o:?}");
}
