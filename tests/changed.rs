//! `--changed-since REV`: only findings on lines changed since a git
//! revision (a real repository in a temporary directory; git must be
//! installed, as it is wherever this repository was cloned).

mod common;

use common::{Tree, bin, places, toy};
use std::process::Command;

/// PY003 on line 2, PY002 on line 5.
const APP: &str =
    "import asyncio\njobs = asyncio.Queue()\n\nasync def handler():\n    time.sleep(1)\n";

fn git(t: &Tree, args: &[&str]) {
    let o = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(t.path())
        .output()
        .expect("git");
    assert!(o.status.success(), "git {args:?}: {o:?}");
}

fn repo(files: &[(&str, &str)]) -> Tree {
    let t = Tree::new();
    git(&t, &["init", "-q"]);
    for (p, c) in files {
        t.write(p, c);
    }
    git(&t, &["add", "-A"]);
    git(&t, &["commit", "-q", "-m", "start"]);
    t
}

#[test]
fn only_findings_on_changed_or_new_lines_are_reported() {
    let t = repo(&[("app.py", APP)]);
    t.write(
        "app.py",
        format!("{APP}\nasync def other():\n    time.sleep(2)\n"),
    )
    .write("new.py", APP);
    let o = toy(
        t.path(),
        &["check", "--format", "json", "--changed-since", "HEAD"],
    );
    assert_eq!(o.code, 1, "{o:?}");
    let v = o.json();
    assert_eq!(
        places(&v),
        ["app.py:8:PY002", "new.py:2:PY003", "new.py:5:PY002"]
    );
    assert_eq!(v["summary"]["unchanged"], 2);
    // Committed, the change is still there since the first commit.
    git(&t, &["add", "-A"]);
    git(&t, &["commit", "-q", "-m", "more"]);
    let o = toy(t.path(), &["check", "--changed-since", "HEAD~1"]);
    assert!(o.stdout.contains("2 on unchanged lines."), "{o:?}");
    let o = toy(t.path(), &["check", "--changed-since", "HEAD"]);
    assert_eq!(o.code, 0, "nothing changed since HEAD: {o:?}");
}

#[test]
fn a_finding_whose_related_location_changed_is_kept() {
    if !common::frontend_ready(unsnarl_model::Language::Python) {
        return;
    }
    let t = repo(&[
        (
            "handlers.py",
            "from db import load\n\nasync def get(order_id):\n    return load(order_id)\n",
        ),
        ("db.py", "def load(order_id):\n    return order_id\n"),
    ]);
    // The helper starts blocking; the call in the unchanged handler is the
    // finding, the changed line its related location.
    t.write(
        "db.py",
        "import time\n\ndef load(order_id):\n    time.sleep(1)\n    return order_id\n",
    );
    let o = bin(
        t.path(),
        &["check", "--format", "json", "--changed-since", "HEAD"],
    );
    assert_eq!(places(&o.json()), ["handlers.py:4:PY002"], "{o:?}");
}

#[test]
fn bad_revisions_and_trees_outside_git_are_errors() {
    let t = repo(&[("app.py", APP)]);
    for rev in ["no-such-branch", "--output=x"] {
        let flag = format!("--changed-since={rev}");
        let o = toy(t.path(), &["check", &flag]);
        assert_eq!(o.code, 2, "{o:?}");
        assert!(
            o.stderr.contains(&format!("--changed-since {rev}")),
            "{o:?}"
        );
    }
    assert!(!t.join("x").exists());
    let plain = Tree::new();
    plain.write("app.py", APP);
    let o = toy(plain.path(), &["check", "--changed-since", "HEAD"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        o.stderr
            .contains("--changed-since: `git rev-parse --show-toplevel` failed"),
        "{o:?}"
    );
    let o = toy(
        t.path(),
        &[
            "check",
            "--changed-since",
            "HEAD",
            "--write-baseline",
            "b.json",
        ],
    );
    assert_eq!(o.code, 2, "conflicting flags: {o:?}");
}

#[test]
fn files_whose_names_git_quotes_are_followed() {
    let name = "we\"ird.py";
    let t = repo(&[(name, "x = 1\n")]);
    t.write(name, APP);
    let o = toy(
        t.path(),
        &["check", "--format", "json", "--changed-since", "HEAD"],
    );
    assert_eq!(
        places(&o.json()),
        ["we\"ird.py:2:PY003", "we\"ird.py:5:PY002"],
        "{o:?}"
    );
}
