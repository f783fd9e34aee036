//! SARIF 2.1.0, as GitHub code scanning reads it. No timestamps and no
//! absolute paths of the machine: the log is identical across runs.

use super::{FindingOut, ScanReport};
use crate::walk::SkipReason;
use serde_json::{Value, json};
use unsnarl_model::Severity;
use unsnarl_rules::RuleMeta;

pub const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";
pub const INFORMATION_URI: &str = "https://github.com/unsnarl/unsnarl";
/// The key of our fingerprint in `partialFingerprints`.
pub const FINGERPRINT_KEY: &str = "unsnarl/v1";

pub fn level(s: Severity) -> &'static str {
    match s {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low => "note",
    }
}

/// Percent-encodes a relative path for a URI (keeps `/` and unreserved
/// characters).
pub fn encode_uri_path(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    for b in p.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// An artifact location: relative to `%SRCROOT%`, or an absolute file URI
/// for files outside the current directory.
fn artifact(path: &str) -> Value {
    if let Some(abs) = path.strip_prefix('/') {
        json!({ "uri": format!("file:///{}", encode_uri_path(abs)) })
    } else {
        // Also for `../x`: a relative reference resolves against %SRCROOT%.
        json!({ "uri": encode_uri_path(path), "uriBaseId": "%SRCROOT%" })
    }
}

fn region(line: u32, column: u32, end_line: u32, end_column: u32) -> Value {
    // SARIF regions must not be empty-and-inverted; an empty span is
    // widened to one column.
    let end_column = if end_line == line && end_column <= column {
        column + 1
    } else {
        end_column
    };
    json!({
        "startLine": line,
        "startColumn": column,
        "endLine": end_line,
        "endColumn": end_column,
    })
}

/// The rule's summary and the part of its docs before the first heading
/// (`## Why`), whitespace collapsed.
fn full_description(m: &RuleMeta) -> String {
    let body = m.docs.split("\n## ").next().unwrap_or("");
    let body = body.split_whitespace().collect::<Vec<_>>().join(" ");
    if body.is_empty() {
        m.summary.to_string()
    } else {
        format!("{} {body}", m.summary)
    }
}

fn rule(m: &RuleMeta) -> Value {
    let mut tags = vec!["concurrency".to_string(), m.category.slug().to_string()];
    tags.extend(m.languages.iter().map(|l| l.slug().to_string()));
    let full = full_description(m);
    let docs = m.docs.trim();
    json!({
        "id": m.id,
        "name": m.name,
        "shortDescription": { "text": m.summary },
        "fullDescription": { "text": full },
        "help": {
            "text": format!("{}\n\n{docs}", m.summary),
            "markdown": format!("**{}** ({}, {})\n\n{}\n\n{docs}", m.name, m.category.slug(), m.severity.slug(), m.summary),
        },
        "defaultConfiguration": { "level": level(m.severity) },
        "properties": {
            "category": m.category.slug(),
            "tags": tags,
            "precision": "high",
        },
    })
}

fn result(f: &FindingOut, rule_index: Option<usize>) -> Value {
    let text = if f.fix.is_empty() {
        f.message.clone()
    } else {
        format!("{}\nFix: {}", f.message, f.fix)
    };
    let mut r = json!({
        "ruleId": f.rule,
        "level": level(f.severity),
        "message": { "text": text },
        "locations": [{
            "physicalLocation": {
                "artifactLocation": artifact(&f.loc.path),
                "region": region(f.loc.line, f.loc.column, f.loc.end_line, f.loc.end_column),
            }
        }],
        "partialFingerprints": { FINGERPRINT_KEY: f.fingerprint },
        "properties": {
            "category": f.category.slug(),
            "severity": f.severity.slug(),
        },
    });
    if let Some(i) = rule_index {
        r["ruleIndex"] = json!(i);
    }
    if !f.related.is_empty() {
        r["relatedLocations"] = f
            .related
            .iter()
            .enumerate()
            .map(|(i, rel)| {
                json!({
                    "id": i,
                    "message": { "text": rel.message },
                    "physicalLocation": {
                        "artifactLocation": artifact(&rel.loc.path),
                        "region": region(rel.loc.line, rel.loc.column, rel.loc.end_line, rel.loc.end_column),
                    }
                })
            })
            .collect();
    }
    r
}

fn notifications(report: &ScanReport) -> Vec<Value> {
    let s = &report.summary;
    let mut out: Vec<Value> = s
        .problems
        .iter()
        .map(|p| {
            json!({
                "level": "error",
                "message": { "text": format!("{}: {}", p.path, p.message) },
                "descriptor": { "id": p.kind.slug() },
                "locations": [{ "physicalLocation": { "artifactLocation": artifact(&p.path) } }],
            })
        })
        .collect();
    // A file abandoned past its time budget may hide findings: say so.
    out.extend(
        s.skipped
            .iter()
            .filter(|(_, r)| *r == SkipReason::Timeout)
            .map(|(path, r)| {
                json!({
                    "level": "warning",
                    "message": { "text": format!("{path}: skipped: {}", r.describe()) },
                    "descriptor": { "id": r.slug() },
                    "locations": [{ "physicalLocation": { "artifactLocation": artifact(path) } }],
                })
            }),
    );
    out.extend(s.syntax_errors.iter().map(|e| {
        json!({
            "level": "warning",
            "message": { "text": format!("syntax error: {} (the file is analyzed anyway)", e.message) },
            "descriptor": { "id": "syntax-error" },
            "locations": [{ "physicalLocation": {
                "artifactLocation": artifact(&e.path),
                "region": { "startLine": e.line, "startColumn": e.column },
            } }],
        })
    }));
    out
}

pub fn render(report: &ScanReport) -> String {
    let rules: Vec<Value> = report.rules.iter().map(|r| rule(r.meta())).collect();
    let results: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            let idx = report.rules.iter().position(|r| r.meta().id == f.rule);
            result(f, idx)
        })
        .collect();
    let successful = report.summary.internal_errors() == 0;
    let log = json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "unsnarl",
                    "informationUri": INFORMATION_URI,
                    "version": env!("CARGO_PKG_VERSION"),
                    "semanticVersion": env!("CARGO_PKG_VERSION"),
                    "rules": rules,
                }
            },
            "invocations": [{
                "executionSuccessful": successful,
                "toolExecutionNotifications": notifications(report),
            }],
            "columnKind": "unicodeCodePoints",
            "results": results,
        }]
    });
    let mut s = serde_json::to_string_pretty(&log).unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_encoded() {
        assert_eq!(encode_uri_path("src/a b#c.py"), "src/a%20b%23c.py");
        assert_eq!(artifact("/tmp/x.py")["uri"], "file:///tmp/x.py");
        assert_eq!(artifact("a/x.py")["uriBaseId"], "%SRCROOT%");
    }

    #[test]
    fn empty_regions_are_widened() {
        assert_eq!(region(3, 5, 3, 5)["endColumn"], 6);
        assert_eq!(region(3, 5, 4, 1)["endColumn"], 1);
    }
}
