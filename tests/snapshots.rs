//! Snapshots (insta) of the text, JSON and SARIF reports of `examples/`.
//! The elapsed time is masked. After changing the examples, the rules or a
//! reporter: `INSTA_UPDATE=always cargo test --test snapshots`, then review
//! the diff of `tests/snapshots/`.

mod common;

use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn run(format: &str) -> String {
    let o = common::bin(
        root(),
        &[
            "check",
            "examples",
            "--no-config",
            "--no-cache",
            "--format",
            format,
            "-j2",
        ],
    );
    assert!(o.code == 0 || o.code == 1, "{o:?}");
    o.stdout
}

/// Replaces the elapsed time of the text summary line.
fn mask_text(s: &str) -> String {
    s.lines()
        .map(|l| match (l.find(" in "), l.find("s: ")) {
            (Some(a), Some(b)) if l.starts_with("Scanned ") && a < b => {
                format!("{} in [elapsed]{}", &l[..a], &l[b + 1..])
            }
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn mask_json(s: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(s).unwrap();
    if v.get("summary").is_some() {
        v["summary"]["elapsed_ms"] = serde_json::json!("[elapsed]");
    }
    serde_json::to_string_pretty(&v).unwrap()
}

#[test]
fn text_report_of_the_examples() {
    insta::assert_snapshot!("examples_text", mask_text(&run("text")));
}

#[test]
fn json_report_of_the_examples() {
    insta::assert_snapshot!("examples_json", mask_json(&run("json")));
}

#[test]
fn sarif_report_of_the_examples() {
    insta::assert_snapshot!("examples_sarif", run("sarif"));
}

#[test]
fn the_text_mask_only_touches_the_elapsed_time() {
    assert_eq!(
        mask_text("x\nScanned 3 files in 0.12s: no findings."),
        "x\nScanned 3 files in [elapsed]: no findings."
    );
}
