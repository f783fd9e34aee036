//! A bare-bones scanner for rule authors: lowers every source file under a
//! directory, runs the selected rules and prints findings, one per line, as
//! `path:line:col: RULE category: message`. No config, no filters, no
//! suppressions — use the `unsnarl` binary for real scans. Handy for triaging
//! a rule on a corpus while the CLI is being changed:
//!
//! `cargo run --release -p unsnarl-rules --example scan -- DIR [RULE_PREFIX]`

use std::path::{Path, PathBuf};
use unsnarl_model::{FileModel, Knowledge, Language, LineIndex, SourceInput};
use unsnarl_rules::{Engine, ProjectIndex, all_rules};

fn lower(lang: Language, text: &str, rel_path: &str) -> FileModel {
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

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let Ok(ft) = e.file_type() else { continue };
        let p = e.path();
        if ft.is_dir() {
            collect(&p, out);
        } else if ft.is_file() {
            out.push(p);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let root = PathBuf::from(args.get(1).expect("usage: scan DIR [RULE_PREFIX]"));
    let prefix = args.get(2).cloned().unwrap_or_default();
    let rules = all_rules()
        .iter()
        .copied()
        .filter(|r| r.meta().id.starts_with(&prefix))
        .collect();
    let engine = Engine::new(rules, Knowledge::builtin());
    let mut paths = Vec::new();
    collect(&root, &mut paths);
    paths.sort();
    let mut files = Vec::new();
    for p in paths {
        let Some(lang) = p
            .extension()
            .and_then(|e| e.to_str())
            .and_then(Language::from_extension)
        else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        if text.len() > 2 << 20 {
            continue;
        }
        let rel = p
            .strip_prefix(&root)
            .unwrap_or(&p)
            .to_string_lossy()
            .replace('\\', "/");
        files.push((rel, lang, text));
    }
    // Lower on a big-stack thread: parsers recurse.
    let handle = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let mut prepared = Vec::new();
            let mut sums = Vec::new();
            for (rel, lang, text) in &files {
                let (p, s) = engine.prepare(lower(*lang, text, rel), *lang);
                sums.push(s);
                prepared.push(p);
            }
            let index = ProjectIndex::build(sums);
            let mut n = 0;
            for (i, ((rel, _, text), p)) in files.iter().zip(&prepared).enumerate() {
                let lines = LineIndex::new(text);
                for f in engine.check(i, rel, text, p, &index) {
                    let lc = lines.line_col(text, f.span.start);
                    println!(
                        "{rel}:{}:{}: {} {}: {}",
                        lc.line,
                        lc.column,
                        f.rule,
                        f.category.slug(),
                        f.message
                    );
                    n += 1;
                }
            }
            eprintln!("{} files, {n} findings", files.len());
        })
        .unwrap();
    handle.join().unwrap();
}
