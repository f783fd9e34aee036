//! What a scan produced, in the shape every reporter reads, and the
//! reporters (one module per format).
//!
//! Everything here is already resolved to paths and 1-based line/columns and
//! sorted: the reporters only format. Nothing but the elapsed time varies
//! between runs or thread counts.

pub mod concise;
pub mod fingerprint;
pub mod github;
pub mod json;
pub mod sarif;
pub mod statistics;
pub mod text;

use crate::walk::{FileProblem, ProblemKind, SkipReason};
use std::time::Duration;
use unsnarl_model::{Category, Severity};
use unsnarl_rules::Rule;

/// A place in a file: 1-based lines, columns counted in characters; the end
/// is exclusive.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Location {
    pub path: String,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelatedOut {
    pub loc: Location,
    pub message: String,
}

/// The source lines a finding covers, for code frames (kept so the file
/// texts can be dropped after the analysis).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Excerpt {
    /// 1-based number of the first line of `text`.
    pub first_line: u32,
    pub text: String,
    /// The flagged bytes inside `text`.
    pub span: std::ops::Range<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindingOut {
    pub rule: &'static str,
    pub rule_name: &'static str,
    pub category: Category,
    pub severity: Severity,
    pub loc: Location,
    pub message: String,
    pub fix: String,
    pub related: Vec<RelatedOut>,
    pub fingerprint: String,
    /// The fingerprint without the path: what a baseline records, next to
    /// the path relative to the baseline file (`filter::baseline`).
    pub content_hash: String,
    pub excerpt: Excerpt,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxErrorOut {
    pub path: String,
    pub line: u32,
    pub column: u32,
    pub message: String,
    /// How many syntax errors the file has in all.
    pub count: usize,
}

/// A warning about the input that is not a finding: an unknown code in a
/// suppression comment, a malformed suppression.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Notice {
    pub path: String,
    pub line: u32,
    pub message: String,
}

#[derive(Debug, Default)]
pub struct Summary {
    pub files_scanned: usize,
    pub syntax_errors: Vec<SyntaxErrorOut>,
    pub skipped: Vec<(String, SkipReason)>,
    pub problems: Vec<FileProblem>,
    /// Findings dropped by inline suppressions and per-file ignores.
    pub suppressed: usize,
    /// Findings left out because the baseline records them.
    pub baselined: usize,
    /// Baseline entries this scan could have matched and did not (fixed
    /// or edited since).
    pub baseline_stale: usize,
    /// Findings left out by `--changed-since` (on lines not changed).
    pub unchanged: usize,
    /// Files whose first results came from the results cache.
    pub files_cached: usize,
    /// Why the results cache could not be written (the results stand).
    pub cache_warning: Option<String>,
    pub elapsed: Duration,
}

impl Summary {
    pub fn internal_errors(&self) -> usize {
        self.problems
            .iter()
            .filter(|p| p.kind == ProblemKind::Internal)
            .count()
    }
}

/// The result of `unsnarl check`.
pub struct ScanReport {
    pub findings: Vec<FindingOut>,
    pub summary: Summary,
    pub notices: Vec<Notice>,
    /// The rules that ran (after selection), in id order.
    pub rules: Vec<&'static dyn Rule>,
}

impl ScanReport {
    /// Count of findings per severity, all four always present, most severe first.
    pub fn by_severity(&self) -> [(Severity, usize); 4] {
        Severity::ALL.map(|s| (s, self.findings.iter().filter(|f| f.severity == s).count()))
    }
}
