//! Which rules run: `select`/`ignore` by category slug, rule id or rule name.

use unsnarl_model::Category;
use unsnarl_rules::{Rule, RuleMeta, all_rules};

/// A user-written selector, resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    Category(Category),
    /// One rule, by id.
    Rule(&'static str),
    /// Every rule with this name (each language has its own rule for a
    /// shared concern, e.g. `retry-without-backoff`).
    Name(&'static str),
}

impl Code {
    /// Resolves a category slug, a rule id (any case) or a rule name.
    pub fn parse(s: &str) -> Option<Code> {
        let s = s.trim();
        if let Some(c) = Category::from_slug(&s.to_ascii_lowercase()) {
            return Some(Code::Category(c));
        }
        let metas = || all_rules().iter().map(|r| r.meta());
        if let Some(m) = metas().find(|m| m.id.eq_ignore_ascii_case(s)) {
            return Some(Code::Rule(m.id));
        }
        metas()
            .find(|m| m.name.eq_ignore_ascii_case(s))
            .map(|m| Code::Name(m.name))
    }

    pub fn matches(self, meta: &RuleMeta) -> bool {
        self.matches_finding(meta.id, meta.category)
    }

    /// True when a finding of `rule` in `category` is covered by the code.
    pub fn matches_finding(self, rule: &str, category: Category) -> bool {
        match self {
            Code::Category(c) => c == category,
            Code::Rule(id) => id == rule,
            Code::Name(name) => {
                unsnarl_rules::find_rule(rule).is_some_and(|r| r.meta().name == name)
            }
        }
    }
}

/// Every valid value, for error messages.
pub fn valid_codes() -> String {
    let cats: Vec<&str> = Category::ALL.iter().map(|c| c.slug()).collect();
    let rules: Vec<String> = all_rules()
        .iter()
        .map(|r| format!("{} ({})", r.meta().id, r.meta().name))
        .collect();
    format!(
        "expected a category ({}) or a rule ({})",
        cats.join(", "),
        rules.join(", ")
    )
}

/// What to say about an unknown code: the closest valid ones (categories,
/// rule ids and names within two edits), then every valid code.
pub fn unknown_code_hint(bad: &str) -> String {
    let bad_l = bad.trim().to_ascii_lowercase();
    let mut scored: Vec<(usize, String)> = Category::ALL
        .iter()
        .map(|c| c.slug().to_string())
        .chain(all_rules().iter().flat_map(|r| {
            let m = r.meta();
            [m.id.to_string(), m.name.to_string()]
        }))
        .map(|c| (crate::docs::distance(&bad_l, &c.to_ascii_lowercase()), c))
        .filter(|(d, _)| *d <= 2)
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    let close: Vec<String> = scored
        .into_iter()
        .take(3)
        .map(|(_, c)| format!("\"{c}\""))
        .collect();
    if close.is_empty() {
        valid_codes()
    } else {
        format!("did you mean {}? {}", close.join(" or "), valid_codes())
    }
}

/// Resolves a list of codes; the first unknown one is the error.
pub fn parse_codes(values: &[String]) -> Result<Vec<Code>, String> {
    values
        .iter()
        .filter(|v| !v.trim().is_empty())
        .map(|v| Code::parse(v).ok_or_else(|| v.trim().to_string()))
        .collect()
}

/// The rules to run: every rule matched by `select` (all when `None`), minus
/// those matched by `ignore`. Registry order is kept.
pub fn enabled_rules(select: Option<&[Code]>, ignore: &[Code]) -> Vec<&'static dyn Rule> {
    all_rules()
        .iter()
        .copied()
        .filter(|r| select.is_none_or(|s| s.iter().any(|c| c.matches(r.meta()))))
        .filter(|r| !ignore.iter().any(|c| c.matches(r.meta())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_resolve_by_category_id_and_name() {
        assert_eq!(
            Code::parse("blocking-in-async"),
            Some(Code::Category(Category::BlockingInAsync))
        );
        let first = all_rules()[0].meta();
        assert_eq!(Code::parse(first.id), Some(Code::Rule(first.id)));
        assert_eq!(
            Code::parse(&first.id.to_ascii_lowercase()),
            Some(Code::Rule(first.id))
        );
        assert_eq!(Code::parse(first.name), Some(Code::Name(first.name)));
        assert!(Code::Name(first.name).matches(first));
        assert_eq!(Code::parse("no-such-thing"), None);
    }

    #[test]
    fn a_shared_name_selects_the_rule_of_every_language() {
        let shared: Vec<_> = all_rules()
            .iter()
            .map(|r| r.meta())
            .filter(|m| m.name == "retry-without-backoff")
            .collect();
        assert!(shared.len() >= 2, "several languages have this rule");
        let code = Code::parse("retry-without-backoff").unwrap();
        assert!(shared.iter().all(|m| code.matches(m)));
        let other = all_rules()[0].meta();
        assert!(other.name == "retry-without-backoff" || !code.matches(other));
    }

    #[test]
    fn ignore_removes_from_select() {
        let all = enabled_rules(None, &[]);
        assert_eq!(all.len(), all_rules().len());
        let first = all_rules()[0].meta();
        let without = enabled_rules(None, &[Code::Rule(first.id)]);
        assert_eq!(without.len(), all.len() - 1);
        let only = enabled_rules(Some(&[Code::Category(first.category)]), &[]);
        assert!(only.iter().all(|r| r.meta().category == first.category));
        assert!(!only.is_empty());
    }
}
