//! docs/rules.md, generated from the rule metadata so that the reference
//! cannot drift from the code (a test fails when the file is stale).

use std::fmt::Write;
use unsnarl_rules::{RuleMeta, all_rules};

fn languages(m: &RuleMeta) -> String {
    m.languages
        .iter()
        .map(|l| l.slug())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Shifts markdown headings one level down, outside fenced code blocks
/// (a rule's `## Why` becomes `### Why` under the rule's own heading).
fn demote_headings(md: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if !fenced && line.starts_with('#') {
            out.push('#');
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The full text of docs/rules.md.
pub fn rules_markdown() -> String {
    let mut out = String::new();
    out.push_str("# unsnarl rules\n\n");
    out.push_str("<!-- Generated from the rule metadata by `cargo run -- generate-docs`. Do not edit. -->\n\n");
    out.push_str("Every rule, with its category (see the catalog of categories), default severity and languages. `unsnarl rule ID` prints the same documentation.\n\n");
    out.push_str("| id | name | category | severity | languages |\n|---|---|---|---|---|\n");
    for r in all_rules() {
        let m = r.meta();
        let _ = writeln!(
            out,
            "| [{}](#{}) | `{}` | `{}` | {} | {} |",
            m.id,
            m.id.to_ascii_lowercase(),
            m.name,
            m.category.slug(),
            m.severity.slug(),
            languages(m)
        );
    }
    for r in all_rules() {
        let m = r.meta();
        let _ = write!(
            out,
            "\n## {}\n\n`{}` · category `{}` · severity {} · {}\n\n{}\n\n{}",
            m.id,
            m.name,
            m.category.slug(),
            m.severity.slug(),
            languages(m),
            m.summary,
            demote_headings(m.docs.trim())
        );
    }
    out
}

/// Where the generated rule overview sits in README.md.
pub const OVERVIEW_START: &str =
    "<!-- rules-overview:start (generated: UPDATE_DOCS=1 cargo test --test docs) -->";
pub const OVERVIEW_END: &str = "<!-- rules-overview:end -->";

/// The README's rule overview: per category, the rules of each language
/// family, so a reader sees at a glance what is covered where.
pub fn rules_overview_markdown() -> String {
    use unsnarl_model::finding::Category;
    let families = ["python", "javascript", "go", "rust"];
    let in_family = |m: &RuleMeta, fam: &str| {
        m.languages.iter().any(|l| {
            let slug = l.slug();
            slug == fam || (fam == "javascript" && slug == "typescript")
        })
    };
    let rules: Vec<&RuleMeta> = all_rules().iter().map(|r| r.meta()).collect();
    let mut out = String::new();
    let count = |fam: &str| rules.iter().filter(|m| in_family(m, fam)).count();
    let _ = writeln!(
        out,
        "{} rules: {} for Python, {} for JavaScript/TypeScript, {} for Go, {} for Rust.\n",
        rules.len(),
        count("python"),
        count("javascript"),
        count("go"),
        count("rust")
    );
    out.push_str(
        "| category | Python | JavaScript / TypeScript | Go | Rust |\n|---|---|---|---|---|\n",
    );
    for cat in Category::ALL {
        let of_cat: Vec<&&RuleMeta> = rules.iter().filter(|m| m.category == *cat).collect();
        if of_cat.is_empty() {
            continue;
        }
        let _ = write!(out, "| `{}` |", cat.slug());
        for fam in families {
            let ids: Vec<String> = of_cat
                .iter()
                .filter(|m| in_family(m, fam))
                .map(|m| format!("[{}](docs/rules.md#{})", m.id, m.id.to_ascii_lowercase()))
                .collect();
            let _ = write!(
                out,
                " {} |",
                if ids.is_empty() {
                    "".into()
                } else {
                    ids.join(" ")
                }
            );
        }
        out.push('\n');
    }
    out
}

/// `readme` with its generated overview section replaced by the current one,
/// or `None` when the markers are missing.
pub fn readme_with_overview(readme: &str) -> Option<String> {
    let start = readme.find(OVERVIEW_START)? + OVERVIEW_START.len();
    let end = readme[start..].find(OVERVIEW_END)? + start;
    Some(format!(
        "{}\n\n{}\n{}",
        &readme[..start],
        rules_overview_markdown(),
        &readme[end..]
    ))
}

/// `unsnarl rule ID` in text: the header fields, the summary, the docs.
pub fn rule_text(m: &RuleMeta) -> String {
    format!(
        "{} {}\ncategory:  {}\nseverity:  {}\nlanguages: {}\n\n{}\n\n{}\n",
        m.id,
        m.name,
        m.category.slug(),
        m.severity.slug(),
        languages(m),
        m.summary,
        m.docs.trim()
    )
}

pub fn rule_json(m: &RuleMeta) -> serde_json::Value {
    serde_json::json!({
        "id": m.id,
        "name": m.name,
        "category": m.category.slug(),
        "severity": m.severity.slug(),
        "languages": m.languages.iter().map(|l| l.slug()).collect::<Vec<_>>(),
        "summary": m.summary,
        "docs": m.docs.trim(),
    })
}

/// `unsnarl rules` in text: one aligned line per rule.
pub fn rules_table() -> String {
    let metas: Vec<&RuleMeta> = all_rules().iter().map(|r| r.meta()).collect();
    let w_name = metas.iter().map(|m| m.name.len()).max().unwrap_or(0).max(4);
    let w_cat = metas
        .iter()
        .map(|m| m.category.slug().len())
        .max()
        .unwrap_or(0)
        .max(8);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<7} {:<w_name$}  {:<w_cat$}  {:<8}  languages",
        "id", "name", "category", "severity"
    );
    for m in metas {
        let _ = writeln!(
            out,
            "{:<7} {:<w_name$}  {:<w_cat$}  {:<8}  {}",
            m.id,
            m.name,
            m.category.slug(),
            m.severity.slug(),
            languages(m)
        );
    }
    out
}

/// Levenshtein distance, for "did you mean" hints.
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Rule ids close to what the user typed (by id or name), closest first; all
/// ids when nothing is close.
pub fn close_ids(key: &str) -> Vec<&'static str> {
    let mut scored: Vec<(usize, &'static str)> = all_rules()
        .iter()
        .map(|r| {
            let m = r.meta();
            let d = distance(key, m.id).min(distance(key, m.name));
            (d, m.id)
        })
        .collect();
    scored.sort();
    let close: Vec<&'static str> = scored
        .iter()
        .filter(|(d, _)| *d <= 2)
        .map(|(_, id)| *id)
        .collect();
    if close.is_empty() {
        all_rules().iter().map(|r| r.meta().id).collect()
    } else {
        close
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_are_demoted_outside_code_blocks() {
        assert_eq!(
            demote_headings("## Why\n```py\n# comment\n```\n"),
            "### Why\n```py\n# comment\n```\n"
        );
    }

    #[test]
    fn close_ids_find_typos() {
        let first = all_rules()[0].meta().id;
        let typo = format!("{}x", first);
        assert_eq!(close_ids(&typo)[0], first);
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
