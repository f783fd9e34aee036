//! Human output: a code frame per finding (annotate-snippets), then one
//! summary line. Colors are decided by the caller (a terminal without
//! `NO_COLOR`); the frames are otherwise identical.

use super::{FindingOut, ScanReport, Summary};
use crate::walk::{ProblemKind, SkipReason, group_skipped};
use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};
use std::fmt::Write;
use unsnarl_model::Severity;

/// Renders the findings and, unless `quiet`, the summary line.
pub fn render(report: &ScanReport, color: bool, quiet: bool) -> String {
    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let mut out = String::new();
    for f in &report.findings {
        out.push_str(&frame(&renderer, f));
        out.push_str("\n\n");
    }
    if !quiet {
        out.push_str(&summary_line(report));
        out.push('\n');
    }
    out
}

fn level(s: Severity) -> Level<'static> {
    match s {
        Severity::Critical | Severity::High => Level::ERROR,
        Severity::Medium => Level::WARNING,
        Severity::Low => Level::NOTE,
    }
}

/// One finding: `high[blocking-in-async] PY002: message`, the location and
/// the flagged lines, then the fix and the related locations.
pub fn frame(renderer: &Renderer, f: &FindingOut) -> String {
    let header = format!("{}[{}] {}", f.severity.slug(), f.category.slug(), f.rule);
    let ex = &f.excerpt;
    let mut span = ex.span.clone();
    if span.is_empty() && span.end < ex.text.len() {
        // Underline at least one character.
        let mut end = span.end + 1;
        while !ex.text.is_char_boundary(end) {
            end += 1;
        }
        span.end = end;
    }
    let snippet = Snippet::source(ex.text.as_str())
        .line_start(ex.first_line as usize)
        .path(f.loc.path.as_str())
        .annotation(AnnotationKind::Primary.span(span).label(f.rule_name));
    let mut groups = vec![
        level(f.severity)
            .with_name(header)
            .primary_title(f.message.as_str())
            .element(snippet),
    ];
    if !f.fix.is_empty() {
        groups.push(Group::with_title(
            Level::HELP.with_name("fix").secondary_title(f.fix.as_str()),
        ));
    }
    for r in &f.related {
        groups.push(Group::with_title(Level::NOTE.secondary_title(format!(
            "{}:{}:{}: {}",
            r.loc.path, r.loc.line, r.loc.column, r.message
        ))));
    }
    renderer.render(&groups)
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `Scanned 12 files in 0.31s: 3 findings (1 critical, 2 high, 0 medium, 0 low). ...`
pub fn summary_line(report: &ScanReport) -> String {
    let s = &report.summary;
    let cached = if s.files_cached > 0 {
        format!(" ({} from the cache)", s.files_cached)
    } else {
        String::new()
    };
    let mut out = format!(
        "Scanned {}{cached} in {:.2}s: ",
        plural(s.files_scanned, "file", "files"),
        s.elapsed.as_secs_f64()
    );
    let total = report.findings.len();
    if total == 0 {
        out.push_str("no findings.");
    } else {
        let by: Vec<String> = report
            .by_severity()
            .iter()
            .map(|(sev, n)| format!("{n} {}", sev.slug()))
            .collect();
        let _ = write!(
            out,
            "{} ({}).",
            plural(total, "finding", "findings"),
            by.join(", ")
        );
    }
    out.push_str(&details(s));
    out
}

fn details(s: &Summary) -> String {
    let mut out = String::new();
    if s.suppressed > 0 {
        let _ = write!(out, " {} suppressed.", s.suppressed);
    }
    if s.baselined > 0 {
        let _ = write!(out, " {} in the baseline.", s.baselined);
    }
    if s.unchanged > 0 {
        let _ = write!(out, " {} on unchanged lines.", s.unchanged);
    }
    if !s.syntax_errors.is_empty() {
        let _ = write!(
            out,
            " {} with syntax errors (analyzed anyway).",
            plural(s.syntax_errors.len(), "file", "files")
        );
    }
    if !s.skipped.is_empty() {
        let groups: Vec<String> = group_skipped(&s.skipped)
            .iter()
            .map(|(r, paths)| format!("{} {}", paths.len(), r.slug()))
            .collect();
        let _ = write!(
            out,
            " {} skipped ({}).",
            plural(s.skipped.len(), "file", "files"),
            groups.join(", ")
        );
    }
    let count = |k: ProblemKind| s.problems.iter().filter(|p| p.kind == k).count();
    let unreadable = count(ProblemKind::Unreadable) + count(ProblemKind::InvalidUtf8);
    if unreadable > 0 {
        let _ = write!(
            out,
            " {} could not be read.",
            plural(unreadable, "file", "files")
        );
    }
    let internal = count(ProblemKind::Internal);
    if internal > 0 {
        let _ = write!(
            out,
            " {} (a bug in unsnarl: please report it).",
            plural(internal, "internal error", "internal errors")
        );
    }
    out
}

/// Per-file notices for stderr: syntax errors, skipped files, unreadable
/// files, internal errors, suppression comments that name unknown rules.
pub fn notices(report: &ScanReport) -> String {
    let s = &report.summary;
    let mut out = String::new();
    for p in &s.problems {
        let _ = writeln!(out, "error: {}: {}", p.path, p.message);
    }
    for e in &s.syntax_errors {
        let more = if e.count > 1 {
            format!(" (and {} more)", e.count - 1)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "warning: {}:{}:{}: syntax error: {}{more}; the file is analyzed anyway",
            e.path, e.line, e.column, e.message
        );
    }
    for (path, reason) in &s.skipped {
        // Generated files and links are common and expected: the summary
        // counts them, a line each would drown everything else.
        if matches!(reason, SkipReason::Generated | SkipReason::Symlink) {
            continue;
        }
        let _ = writeln!(out, "note: skipped {path}: {}", reason.describe());
    }
    for n in &report.notices {
        let _ = writeln!(out, "warning: {}:{}: {}", n.path, n.line, n.message);
    }
    if let Some(w) = &s.cache_warning {
        let _ = writeln!(out, "warning: the results cache was not saved: {w}");
    }
    if s.baseline_stale > 0 {
        let _ = writeln!(
            out,
            "note: {} no longer found (fixed, or the line changed); `unsnarl check --write-baseline` drops {}",
            plural(
                s.baseline_stale,
                "baseline entry is",
                "baseline entries are"
            ),
            if s.baseline_stale == 1 { "it" } else { "them" }
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Excerpt, Location, RelatedOut};
    use unsnarl_model::Category;

    fn finding(text: &str, span: std::ops::Range<usize>) -> FindingOut {
        FindingOut {
            rule: "PY004",
            rule_name: "lock-held-across-await",
            category: Category::LockAcrossAwait,
            severity: Severity::Critical,
            loc: Location {
                path: "src/a.py".into(),
                line: 10,
                column: 5,
                end_line: 12,
                end_column: 9,
            },
            message: "the lock is held across an await".into(),
            fix: "release it before awaiting".into(),
            related: vec![RelatedOut {
                loc: Location {
                    path: "src/b.py".into(),
                    line: 3,
                    column: 1,
                    end_line: 3,
                    end_column: 4,
                },
                message: "the lock is created here".into(),
            }],
            fingerprint: String::new(),
            content_hash: String::new(),
            excerpt: Excerpt {
                first_line: 10,
                text: text.into(),
                span,
            },
        }
    }

    #[test]
    fn multi_line_spans_fixes_and_related_locations_render() {
        let text = "    with lock:\n        await x()\n        y()";
        let out = frame(&Renderer::plain(), &finding(text, 4..text.len()));
        assert!(
            out.starts_with(
                "critical[lock-across-await] PY004: the lock is held across an await\n"
            ),
            "{out}"
        );
        assert!(out.contains("--> src/a.py:10:5"), "{out}");
        assert!(out.contains("10 |"), "{out}");
        assert!(out.contains("12 |"), "{out}");
        assert!(out.contains("fix: release it before awaiting"), "{out}");
        assert!(
            out.contains("note: src/b.py:3:1: the lock is created here"),
            "{out}"
        );
    }

    #[test]
    fn empty_and_end_of_text_spans_do_not_panic() {
        for (text, span) in [("abc", 1..1), ("abc", 3..3), ("", 0..0), ("é", 0..0)] {
            let out = frame(&Renderer::plain(), &finding(text, span));
            assert!(out.contains("PY004"));
        }
    }

    #[test]
    fn colors_only_when_asked() {
        let f = finding("x = 1", 0..1);
        assert!(!frame(&Renderer::plain(), &f).contains('\x1b'));
        assert!(frame(&Renderer::styled(), &f).contains('\x1b'));
    }
}
