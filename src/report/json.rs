//! The JSON report: a stable, documented contract (docs/json.md in the
//! README). Keys are emitted in sorted order; the only value that changes
//! between identical runs is `summary.elapsed_ms`.

use super::{FindingOut, ScanReport, statistics};
use crate::walk::{ProblemKind, group_skipped};
use serde_json::{Value, json};

/// Version of the JSON layout; bumped on incompatible changes.
pub const FORMAT_VERSION: u32 = 1;

pub fn finding(f: &FindingOut) -> Value {
    json!({
        "rule": f.rule,
        "rule_name": f.rule_name,
        "category": f.category.slug(),
        "severity": f.severity.slug(),
        "path": f.loc.path,
        "line": f.loc.line,
        "column": f.loc.column,
        "end_line": f.loc.end_line,
        "end_column": f.loc.end_column,
        "message": f.message,
        "fix": f.fix,
        "related": f.related.iter().map(|r| json!({
            "path": r.loc.path,
            "line": r.loc.line,
            "column": r.loc.column,
            "end_line": r.loc.end_line,
            "end_column": r.loc.end_column,
            "message": r.message,
        })).collect::<Vec<_>>(),
        "fingerprint": f.fingerprint,
    })
}

pub fn summary(report: &ScanReport) -> Value {
    let s = &report.summary;
    let by_reason: serde_json::Map<String, Value> = group_skipped(&s.skipped)
        .into_iter()
        .map(|(r, paths)| {
            (
                r.slug().to_string(),
                json!({ "count": paths.len(), "paths": paths }),
            )
        })
        .collect();
    let by_sev: serde_json::Map<String, Value> = report
        .by_severity()
        .iter()
        .map(|(sev, n)| (sev.slug().to_string(), json!(n)))
        .collect();
    json!({
        "files_scanned": s.files_scanned,
        "files_cached": s.files_cached,
        "files_with_syntax_errors": s.syntax_errors.len(),
        "syntax_errors": s.syntax_errors.iter().map(|e| json!({
            "path": e.path,
            "line": e.line,
            "column": e.column,
            "message": e.message,
            "count": e.count,
        })).collect::<Vec<_>>(),
        "files_skipped": {
            "total": s.skipped.len(),
            "by_reason": by_reason,
        },
        "files_with_errors": s.problems.iter().filter(|p| p.kind != ProblemKind::Internal).count(),
        "internal_errors": s.internal_errors(),
        "suppressed": s.suppressed,
        "baselined": s.baselined,
        "baseline_stale": s.baseline_stale,
        "unchanged": s.unchanged,
        "rules_run": report.rules.len(),
        "findings_by_severity": by_sev,
        "findings_total": report.findings.len(),
        "elapsed_ms": s.elapsed.as_millis() as u64,
    })
}

fn errors(report: &ScanReport) -> Value {
    report
        .summary
        .problems
        .iter()
        .map(|p| json!({ "path": p.path, "kind": p.kind.slug(), "message": p.message }))
        .collect()
}

fn warnings(report: &ScanReport) -> Value {
    report
        .notices
        .iter()
        .map(|n| json!({ "path": n.path, "line": n.line, "message": n.message }))
        .collect()
}

fn envelope(report: &ScanReport) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert("version".into(), json!(FORMAT_VERSION));
    m.insert(
        "tool".into(),
        json!({ "name": "unsnarl", "version": env!("CARGO_PKG_VERSION") }),
    );
    m.insert("summary".into(), summary(report));
    m.insert("errors".into(), errors(report));
    m.insert("warnings".into(), warnings(report));
    m
}

/// The full report.
pub fn render(report: &ScanReport) -> String {
    let mut m = envelope(report);
    m.insert(
        "findings".into(),
        report.findings.iter().map(finding).collect(),
    );
    to_string(Value::Object(m))
}

/// `--statistics --format json`: `statistics` instead of `findings`.
pub fn render_statistics(report: &ScanReport) -> String {
    let mut m = envelope(report);
    let rows: Vec<Value> = statistics::rows(report)
        .iter()
        .map(|r| {
            json!({
                "rule": r.rule,
                "rule_name": r.rule_name,
                "category": r.category.slug(),
                "severity": r.severity.slug(),
                "count": r.count,
            })
        })
        .collect();
    m.insert("statistics".into(), Value::Array(rows));
    to_string(Value::Object(m))
}

fn to_string(v: Value) -> String {
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}
