//! GitHub Actions workflow commands: one annotation per finding.
//! <https://docs.github.com/en/actions/reference/workflow-commands-for-github-actions>

use super::ScanReport;
use crate::walk::{ProblemKind, SkipReason};
use std::fmt::Write;
use unsnarl_model::Severity;

/// Escapes a command's message (data).
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a command property value (also `:` and `,`).
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

fn command(s: Severity) -> &'static str {
    match s {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low => "notice",
    }
}

pub fn render(report: &ScanReport) -> String {
    let mut out = String::new();
    for f in &report.findings {
        let title = format!("{} {}", f.rule, f.category.slug());
        let mut msg = f.message.clone();
        if !f.fix.is_empty() {
            msg.push_str("\nfix: ");
            msg.push_str(&f.fix);
        }
        for r in &f.related {
            let _ = write!(msg, "\nnote: {}:{}: {}", r.loc.path, r.loc.line, r.message);
        }
        let _ = writeln!(
            out,
            "::{} file={},line={},col={},endLine={},endColumn={},title={}::{}",
            command(f.severity),
            escape_property(&f.loc.path),
            f.loc.line,
            f.loc.column,
            f.loc.end_line,
            f.loc.end_column,
            escape_property(&title),
            escape_data(&msg)
        );
    }
    for p in &report.summary.problems {
        let title = match p.kind {
            ProblemKind::Internal => "unsnarl internal error",
            _ => "unsnarl could not read this file",
        };
        let _ = writeln!(
            out,
            "::error file={},title={}::{}",
            escape_property(&p.path),
            escape_property(title),
            escape_data(&p.message)
        );
    }
    for (path, reason) in &report.summary.skipped {
        if *reason == SkipReason::Timeout {
            let _ = writeln!(
                out,
                "::warning file={},title={}::{}",
                escape_property(path),
                escape_property("unsnarl gave up on this file (timeout)"),
                escape_data(&reason.describe())
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_follows_the_runner_rules() {
        assert_eq!(escape_data("50%\r\nx:y,z"), "50%25%0D%0Ax:y,z");
        assert_eq!(escape_property("a:b,c%"), "a%3Ab%2Cc%25");
    }
}
