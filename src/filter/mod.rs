//! Which findings are reported: rule selection (before the analysis),
//! severity threshold, per-file ignores and inline suppressions (after it),
//! and the baseline and `--changed-since` (after the scan).

pub mod baseline;
pub mod changed;
pub mod selection;
pub mod suppressions;

use selection::Code;
use std::path::{Path, PathBuf};
use suppressions::{Scope, Suppressions};
use unsnarl_model::{Category, Language, Severity};
use unsnarl_rules::all_rules;

/// The per-finding filters, built once per scan.
#[derive(Debug, Default)]
pub struct Filter {
    pub min_severity: Option<Severity>,
    /// `[per-file-ignores]`: globs relative to `base`.
    pub per_file: Vec<(globset::GlobMatcher, Vec<Code>)>,
    pub base: Option<PathBuf>,
    /// `--warn-unused-suppressions`: the ids of the rules that ran, so that
    /// a directive is called unused only when every rule it names ran.
    pub unused_check: Option<Vec<&'static str>>,
}

impl Filter {
    pub fn new(
        min_severity: Option<Severity>,
        per_file: &[(String, Vec<Code>)],
        base: Option<PathBuf>,
    ) -> Result<Filter, String> {
        let per_file = per_file
            .iter()
            .map(|(g, codes)| {
                let glob = globset::GlobBuilder::new(g)
                    .literal_separator(false)
                    .build()
                    .map_err(|e| format!("per-file-ignores \"{g}\": {e}"))?;
                Ok((glob.compile_matcher(), codes.clone()))
            })
            .collect::<Result<_, String>>()?;
        Ok(Filter {
            min_severity,
            per_file,
            base,
            unused_check: None,
        })
    }

    /// The codes ignored for a file by `[per-file-ignores]`.
    pub fn ignored_for(&self, abs: &Path) -> Vec<Code> {
        if self.per_file.is_empty() {
            return Vec::new();
        }
        let rel = match &self.base {
            Some(b) => abs.strip_prefix(b).unwrap_or(abs),
            None => abs,
        };
        let rel = crate::walk::slash_path(rel);
        self.per_file
            .iter()
            .filter(|(g, _)| g.is_match(&rel))
            .flat_map(|(_, c)| c.iter().copied())
            .collect()
    }

    pub fn below_threshold(&self, s: Severity) -> bool {
        self.min_severity.is_some_and(|m| s < m)
    }
}

impl Filter {
    /// The directives of a file in `lang` that covered no finding (`used`
    /// says which did) although every rule they name ran: `(line, message)`.
    /// Nothing unless `--warn-unused-suppressions`.
    pub fn unused_suppressions(
        &self,
        sup: &Suppressions,
        used: &[bool],
        lang: Language,
    ) -> Vec<(u32, String)> {
        let Some(ran) = &self.unused_check else {
            return Vec::new();
        };
        let could_fire = |code: &str| {
            let Some(code) = Code::parse(code) else {
                return false;
            };
            let mut covered = all_rules()
                .iter()
                .map(|r| r.meta())
                .filter(|m| m.languages.contains(&lang) && code.matches(m))
                .peekable();
            covered.peek().is_some() && covered.all(|m| ran.contains(&m.id))
        };
        sup.directives
            .iter()
            .zip(used)
            .filter(|(_, used)| !**used)
            .filter_map(|(d, _)| {
                let written = match &d.scope {
                    Scope::All => String::new(),
                    Scope::Codes(codes) if codes.iter().all(|c| could_fire(c)) => {
                        format!("[{}]", codes.join(", "))
                    }
                    Scope::Codes(_) => return None,
                };
                if d.scope == Scope::All
                    && !all_rules()
                        .iter()
                        .map(|r| r.meta())
                        .any(|m| m.languages.contains(&lang) && ran.contains(&m.id))
                {
                    return None;
                }
                let (kind, place) = if d.file_level {
                    ("ignore-file", "in this file")
                } else {
                    ("ignore", "where it applies")
                };
                Some((
                    d.line,
                    format!("unused suppression `{kind}{written}`: no finding {place} to ignore; remove it"),
                ))
            })
            .collect()
    }
}

/// Whether a suppression code written by the user covers a finding.
pub fn code_covers(code: &str, rule: &str, category: Category) -> bool {
    Code::parse(code).is_some_and(|c| c.matches_finding(rule, category))
}

/// True when an inline suppression or a per-file ignore covers the finding.
pub fn is_suppressed(
    sup: &Suppressions,
    file_ignores: &[Code],
    line: u32,
    rule: &str,
    category: Category,
) -> bool {
    file_ignores
        .iter()
        .any(|c| c.matches_finding(rule, category))
        || sup.suppresses(line, &|code| code_covers(code, rule, category))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_file_ignores_match_paths_relative_to_the_config() {
        let f = Filter::new(
            None,
            &[(
                "tests/**".into(),
                vec![Code::Category(Category::BlockingInAsync)],
            )],
            Some(PathBuf::from("/proj")),
        )
        .unwrap();
        assert_eq!(f.ignored_for(Path::new("/proj/tests/a/b.py")).len(), 1);
        assert!(f.ignored_for(Path::new("/proj/src/tests.py")).is_empty());
    }

    #[test]
    fn suppression_codes_match_category_or_rule() {
        let s = Suppressions::parse("x  # unsnarl: ignore[blocking-in-async]\n");
        assert!(is_suppressed(
            &s,
            &[],
            1,
            "PY999",
            Category::BlockingInAsync
        ));
        assert!(!is_suppressed(
            &s,
            &[],
            1,
            "PY999",
            Category::UnboundedQueue
        ));
    }
}
