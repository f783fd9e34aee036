//! What a rule is: metadata, documentation, a check, and examples.

use crate::context::FileCx;
use unsnarl_model::{Category, Finding, Language, Severity};

/// Static description of a rule. Its documentation is what `unsnarl rule ID`
/// prints and what `docs/rules.md` is generated from.
#[derive(Debug)]
pub struct RuleMeta {
    /// Stable id: a language prefix and a number (`PY001`, `JS003`, `GO002`,
    /// `RS004`).
    pub id: &'static str,
    /// Kebab-case name saying what is flagged (`discarded-task`).
    pub name: &'static str,
    pub category: Category,
    /// Default severity; a finding may escalate it.
    pub severity: Severity,
    pub languages: &'static [Language],
    /// One sentence: what the rule flags.
    pub summary: &'static str,
    /// Markdown with the sections `## Why`, `## Example` (a fenced code block
    /// the rule flags) and `## Fix` (a fenced code block it accepts).
    pub docs: &'static str,
    /// Pass and fail examples, run as the rule's tests.
    pub examples: &'static Examples,
}

impl RuleMeta {
    pub fn applies_to(&self, lang: Language) -> bool {
        self.languages.contains(&lang)
            || (lang == Language::TypeScript && self.languages.contains(&Language::JavaScript))
    }
}

/// A check over one file. Rules that need other files read the project index
/// through [`FileCx::index`].
pub trait Rule: Send + Sync {
    fn meta(&self) -> &'static RuleMeta;
    fn check(&self, cx: &FileCx, out: &mut Vec<Finding>);
}

/// Pass and fail examples of a rule, run as its tests. In fail examples each
/// line that must be flagged carries a trailing `# expect` (Python) or
/// `// expect` comment; every finding must land on a marked line and every
/// marked line must get one. Pass examples must give no finding of the rule.
/// An example may hold several files, each introduced by a line
/// `# file: path/to/mod.py` (`// file: ...`).
#[derive(Debug)]
pub struct Examples {
    pub language: Language,
    pub fail: &'static [&'static str],
    pub pass: &'static [&'static str],
}
