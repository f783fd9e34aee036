//! One line per finding, `path:line:column: RULE [severity] message`: the
//! shape compilers print, which editors' quickfix lists, `grep` and
//! pre-commit's output read without configuration.

use super::ScanReport;

/// Renders the findings and, unless `quiet`, the text report's summary line.
pub fn render(report: &ScanReport, quiet: bool) -> String {
    let mut out = String::new();
    for f in &report.findings {
        out.push_str(&format!(
            "{}:{}:{}: {} [{}] {}\n",
            f.loc.path,
            f.loc.line,
            f.loc.column,
            f.rule,
            f.severity.slug(),
            one_line(&f.message)
        ));
    }
    if !quiet {
        out.push_str(&super::text::summary_line(report));
        out.push('\n');
    }
    out
}

/// Line breaks would split a finding over several records.
fn one_line(s: &str) -> String {
    s.split(['\n', '\r'])
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_stay_on_one_line() {
        assert_eq!(one_line("a\nb\r\n\nc"), "a b c");
        assert_eq!(one_line("plain"), "plain");
    }
}
