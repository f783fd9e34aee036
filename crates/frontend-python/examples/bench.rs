//! Rough throughput of parsing vs. parsing + lowering, over every `.py`/`.pyi`
//! file under the directories given as arguments (not a test; run with an
//! optimized build for meaningful numbers):
//!
//! `cargo run -p unsnarl-frontend-python --example bench -- /usr/lib/python3.11`
use std::path::{Path, PathBuf};
use std::time::Instant;
use unsnarl_model::{Language, SourceInput};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            collect(&p, out);
        } else if ft.is_file() && p.extension().is_some_and(|x| x == "py" || x == "pyi") {
            out.push(p);
        }
    }
}

fn main() {
    let mut paths = Vec::new();
    for a in std::env::args().skip(1) {
        collect(Path::new(&a), &mut paths);
    }
    paths.sort();
    let files: Vec<(String, String)> = paths
        .iter()
        .filter_map(|p| Some((std::fs::read_to_string(p).ok()?, p.display().to_string())))
        .collect();
    let bytes: usize = files.iter().map(|f| f.0.len()).sum();

    // Best of three rounds each: the machine is shared.
    let mut parse = f64::MAX;
    let mut total = f64::MAX;
    let mut tokens = 0;
    let (mut exprs, mut errors, mut funcs) = (0, 0, 0);
    for _ in 0..3 {
        let t = Instant::now();
        tokens = 0;
        for (text, _) in &files {
            let parsed = ruff_python_parser::parse_unchecked_source(
                text,
                ruff_python_ast::PySourceType::Python,
            );
            tokens += parsed.tokens().len();
        }
        parse = parse.min(t.elapsed().as_secs_f64());

        let t = Instant::now();
        (exprs, errors, funcs) = (0, 0, 0);
        for (text, path) in &files {
            let m = unsnarl_frontend_python::lower(&SourceInput {
                text,
                rel_path: path.trim_start_matches('/'),
                language: Language::Python,
            });
            exprs += m.exprs.len();
            funcs += m.functions.len();
            errors += usize::from(!m.syntax_errors.is_empty());
        }
        total = total.min(t.elapsed().as_secs_f64());
    }
    let mb = bytes as f64 / 1e6;
    println!(
        "{} files, {mb:.1} MB ({tokens} tokens): parse {:.1} MB/s, parse+lower {:.1} MB/s, lowering alone ~{:.1} MB/s; {funcs} functions, {exprs} exprs, {errors} files with syntax errors",
        files.len(),
        mb / parse,
        mb / total,
        mb / (total - parse).max(1e-9),
    );
}
