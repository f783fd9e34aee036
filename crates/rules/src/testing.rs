//! Test support: runs a rule on its pass/fail examples and checks findings
//! against `expect` markers.

use crate::Engine;
use crate::index::ProjectIndex;
use crate::rule::{Examples, Rule};
use std::collections::BTreeSet;
use unsnarl_model::{FileModel, Finding, Knowledge, Language, LineIndex, SourceInput};

/// Lowers a source with the language's front end.
pub fn lower(lang: Language, text: &str, rel_path: &str) -> FileModel {
    let input = SourceInput {
        text,
        rel_path,
        language: lang,
    };
    match lang {
        Language::Python => unsnarl_frontend_python::lower(&input),
        Language::JavaScript | Language::TypeScript => unsnarl_frontend_js::lower(&input),
        Language::Go => unsnarl_frontend_go::lower(&input),
        Language::Rust => unsnarl_frontend_rust::lower(&input),
    }
}

fn default_path(lang: Language) -> &'static str {
    match lang {
        Language::Python => "app/example.py",
        Language::JavaScript => "src/example.js",
        Language::TypeScript => "src/example.ts",
        Language::Go => "app/example.go",
        Language::Rust => "src/example.rs",
    }
}

/// Splits an example into files at `# file: path` / `// file: path` lines.
fn split_files(lang: Language, example: &str) -> Vec<(String, String)> {
    let leader = lang.line_comment();
    let mut files: Vec<(String, String)> = Vec::new();
    let mut cur_path = default_path(lang).to_string();
    let mut cur = String::new();
    for line in example.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix(leader).map(str::trim)
            && let Some(p) = rest.strip_prefix("file:")
        {
            if !cur.trim().is_empty() {
                files.push((cur_path, std::mem::take(&mut cur)));
            }
            cur.clear();
            cur_path = p.trim().to_string();
            // Keep line numbers stable within each file: nothing to add.
            continue;
        }
        cur.push_str(line);
        cur.push('\n');
    }
    if !cur.trim().is_empty() || files.is_empty() {
        files.push((cur_path, cur));
    }
    files
}

fn lang_of_path(default: Language, path: &str) -> Language {
    path.rsplit('.')
        .next()
        .and_then(Language::from_extension)
        .unwrap_or(default)
}

/// A finding's place for comparison: file path and 1-based line.
type Place = (String, u32);

/// Runs one rule over a (possibly multi-file) example; returns the places of
/// its findings and the places marked `expect`.
pub fn run_example(
    rule: &'static dyn Rule,
    lang: Language,
    example: &str,
) -> (Vec<(Place, Finding)>, BTreeSet<Place>) {
    let engine = Engine::new(vec![rule], Knowledge::builtin());
    let files = split_files(lang, example);
    let mut prepared = Vec::new();
    let mut summaries = Vec::new();
    let mut expected = BTreeSet::new();
    for (path, text) in &files {
        let flang = lang_of_path(lang, path);
        let leader = flang.line_comment();
        for (i, line) in text.lines().enumerate() {
            if let Some(pos) = line.rfind(leader)
                && line[pos + leader.len()..].trim().starts_with("expect")
            {
                expected.insert((path.clone(), i as u32 + 1));
            }
        }
        let model = lower(flang, text, path);
        let (p, s) = engine.prepare(model, flang);
        summaries.push(s);
        prepared.push(p);
    }
    let index = ProjectIndex::build(summaries);
    let mut found = Vec::new();
    for (i, ((path, text), p)) in files.iter().zip(&prepared).enumerate() {
        let lines = LineIndex::new(text);
        for f in engine.check(i, path, text, p, &index) {
            let lc = lines.line_col(text, f.span.start);
            found.push(((path.clone(), lc.line), f));
        }
    }
    (found, expected)
}

/// The messages one rule gives on an example, in the order of its findings.
pub fn messages(rule: &'static dyn Rule, lang: Language, example: &str) -> Vec<String> {
    run_example(rule, lang, example)
        .0
        .into_iter()
        .map(|(_, f)| f.message)
        .collect()
}

/// Every finding one rule gives on all of its fail examples, in order.
pub fn fail_findings(rule: &'static dyn Rule, ex: &Examples) -> Vec<Finding> {
    ex.fail
        .iter()
        .flat_map(|src| run_example(rule, ex.language, src).0)
        .map(|(_, f)| f)
        .collect()
}

/// The fixes one rule gives on an example, in the order of its findings.
pub fn fixes(rule: &'static dyn Rule, lang: Language, example: &str) -> Vec<String> {
    run_example(rule, lang, example)
        .0
        .into_iter()
        .map(|(_, f)| f.fix)
        .collect()
}

/// The first of `messages` that contains `needle`; panics, listing them all,
/// when none does.
pub fn message_with<'m>(messages: &'m [String], needle: &str) -> &'m str {
    messages
        .iter()
        .find(|m| m.contains(needle))
        .unwrap_or_else(|| panic!("no message contains {needle:?}: {messages:#?}"))
}

fn render(found: &[(Place, Finding)]) -> String {
    found
        .iter()
        .map(|((p, l), f)| format!("  {p}:{l}: {}", f.message))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every fail example must be flagged exactly on its marked lines.
pub fn check_fail(rule: &'static dyn Rule, ex: &Examples) {
    assert!(!ex.fail.is_empty(), "{}: no fail examples", rule.meta().id);
    for (n, example) in ex.fail.iter().enumerate() {
        let (found, expected) = run_example(rule, ex.language, example);
        assert!(
            !expected.is_empty(),
            "{} fail example #{n} has no `expect` marker",
            rule.meta().id
        );
        let got: BTreeSet<Place> = found.iter().map(|(p, _)| p.clone()).collect();
        let missing: Vec<_> = expected.difference(&got).collect();
        let extra: Vec<_> = found
            .iter()
            .filter(|(p, _)| !expected.contains(p))
            .cloned()
            .collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{} fail example #{n}:\n{example}\nmissing findings at {missing:?}\nunexpected findings:\n{}",
            rule.meta().id,
            render(&extra)
        );
    }
}

/// Every pass example must give no finding of the rule.
pub fn check_pass(rule: &'static dyn Rule, ex: &Examples) {
    assert!(!ex.pass.is_empty(), "{}: no pass examples", rule.meta().id);
    for (n, example) in ex.pass.iter().enumerate() {
        let (found, _) = run_example(rule, ex.language, example);
        assert!(
            found.is_empty(),
            "{} pass example #{n} was flagged:\n{example}\n{}",
            rule.meta().id,
            render(&found)
        );
    }
}

/// The code block under `## Example` in the docs must be flagged, and the
/// one under `## Fix` must not.
pub fn check_docs(rule: &'static dyn Rule, lang: Language) {
    let docs = rule.meta().docs;
    let block_after = |heading: &str| -> Option<String> {
        let start = docs.find(heading)?;
        let rest = &docs[start..];
        let open = rest.find("```")?;
        let body_start = open + rest[open..].find('\n')? + 1;
        let close = rest[body_start..].find("```")?;
        Some(rest[body_start..body_start + close].to_string())
    };
    let bad =
        block_after("## Example").unwrap_or_else(|| panic!("{}: no example block", rule.meta().id));
    let (found, _) = run_example(rule, lang, &bad);
    assert!(
        !found.is_empty(),
        "{}: the docs example is not flagged:\n{bad}",
        rule.meta().id
    );
    let good = block_after("## Fix").unwrap_or_else(|| panic!("{}: no fix block", rule.meta().id));
    let (found, _) = run_example(rule, lang, &good);
    assert!(
        found.is_empty(),
        "{}: the docs fix is flagged:\n{good}\n{}",
        rule.meta().id,
        render(&found)
    );
}

/// Declares the example tests of a rule: `rule_tests!(RuleValue);`
macro_rules! rule_tests {
    ($rule:expr) => {
        #[test]
        fn fail_examples_are_flagged() {
            let r: &'static dyn $crate::rule::Rule = &$rule;
            $crate::testing::check_fail(r, r.meta().examples);
        }
        #[test]
        fn pass_examples_are_silent() {
            let r: &'static dyn $crate::rule::Rule = &$rule;
            $crate::testing::check_pass(r, r.meta().examples);
        }
        #[test]
        fn docs_example_is_flagged_and_fix_is_not() {
            let r: &'static dyn $crate::rule::Rule = &$rule;
            $crate::testing::check_docs(r, r.meta().examples.language);
        }
    };
}
pub(crate) use rule_tests;
