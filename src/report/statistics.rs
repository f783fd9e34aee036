//! `--statistics`: the number of findings per rule instead of the list.

use super::ScanReport;
use std::collections::BTreeMap;
use std::fmt::Write;
use unsnarl_model::{Category, Severity};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub rule: &'static str,
    pub rule_name: &'static str,
    pub category: Category,
    /// The highest severity among the rule's findings.
    pub severity: Severity,
    pub count: usize,
}

/// One row per rule with findings: most findings first, then by rule id.
pub fn rows(report: &ScanReport) -> Vec<Row> {
    let mut by_rule: BTreeMap<&'static str, Row> = BTreeMap::new();
    for f in &report.findings {
        let row = by_rule.entry(f.rule).or_insert(Row {
            rule: f.rule,
            rule_name: f.rule_name,
            category: f.category,
            severity: f.severity,
            count: 0,
        });
        row.count += 1;
        row.severity = row.severity.max(f.severity);
    }
    let mut rows: Vec<Row> = by_rule.into_values().collect();
    rows.sort_by(|a, b| b.count.cmp(&a.count).then(a.rule.cmp(b.rule)));
    rows
}

/// A plain table for the terminal.
pub fn render_text(report: &ScanReport, quiet: bool) -> String {
    let rows = rows(report);
    let mut out = String::new();
    if !rows.is_empty() {
        let w_name = rows
            .iter()
            .map(|r| r.rule_name.len())
            .max()
            .unwrap_or(0)
            .max(4);
        let w_cat = rows
            .iter()
            .map(|r| r.category.slug().len())
            .max()
            .unwrap_or(0)
            .max(8);
        let _ = writeln!(
            out,
            "{:>5}  {:<7} {:<w_name$}  {:<w_cat$}  severity",
            "count", "rule", "name", "category"
        );
        for r in &rows {
            let _ = writeln!(
                out,
                "{:>5}  {:<7} {:<w_name$}  {:<w_cat$}  {}",
                r.count,
                r.rule,
                r.rule_name,
                r.category.slug(),
                r.severity.slug()
            );
        }
    }
    if !quiet {
        out.push_str(&super::text::summary_line(report));
        out.push('\n');
    }
    out
}
