//! The bundled examples say where their bugs are: a comment containing
//! `BUG:` marks the next code line. The scan of `examples/` must report a
//! finding on every marked line and nothing anywhere else, so the examples
//! stay honest as rules change (the snapshots pin the exact output).

mod common;

use std::collections::BTreeSet;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `(path, line)` of every line following a `BUG:` comment (skipping further
/// comment lines).
fn marked_lines() -> BTreeSet<(String, u32)> {
    let mut out = BTreeSet::new();
    let mut stack = vec![root().join("examples")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&p) else {
                continue;
            };
            let rel = p
                .strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let lines: Vec<&str> = text.lines().collect();
            for (i, l) in lines.iter().enumerate() {
                let t = l.trim_start();
                let is_comment = t.starts_with('#') || t.starts_with("//");
                if !(is_comment && t.contains("BUG:")) {
                    continue;
                }
                let mut j = i + 1;
                while j < lines.len() {
                    let n = lines[j].trim_start();
                    if !(n.starts_with('#') || n.starts_with("//")) {
                        break;
                    }
                    j += 1;
                }
                out.insert((rel.clone(), j as u32 + 1));
            }
        }
    }
    out
}

#[test]
fn findings_of_the_examples_are_exactly_the_marked_bugs() {
    let o = common::bin(
        root(),
        &[
            "check",
            "examples",
            "--no-config",
            "--no-cache",
            "--format",
            "json",
        ],
    );
    assert!(o.code == 0 || o.code == 1, "{o:?}");
    let report: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let found: BTreeSet<(String, u32)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap() as u32,
            )
        })
        .collect();
    let expected = marked_lines();
    assert!(expected.len() >= 20, "the examples should show many bugs");
    let missing: Vec<_> = expected.difference(&found).collect();
    let extra: Vec<_> = found.difference(&expected).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "marked bugs without a finding: {missing:#?}\nfindings on unmarked lines: {extra:#?}"
    );
}
