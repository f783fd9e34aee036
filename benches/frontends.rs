//! Front-end throughput and project-index cost (issue 7), with divan.
//!
//!     cargo bench --bench frontends              # everything
//!     cargo bench --bench frontends -- lower     # only parse + lower
//!     cargo bench --bench frontends -- parse_only  # the parsers alone
//!     cargo bench --bench frontends -- rust_stages # lexer, parser, tree
//!     cargo bench --bench frontends -- index     # only the project index
//!
//! `lower` times parse + lower (`unsnarl_frontend_*::lower`) of a fixed
//! sample of each language's benchmark corpus, one thread, and reports MB/s
//! (divan's bytes counter). `parse_only` times the parsers alone (the tree
//! built and dropped) on the same samples, and `rust_stages` the Rust front
//! end's lexer, parser events and tree. `index` times `ProjectIndex::build` from the
//! function summaries of every file of the largest corpus (the summaries are
//! made once, outside the timing, and cloned for each iteration).
//!
//! The corpora are the trees that `bash bench/corpus.sh` builds under
//! `$CORPUS/trees` (default `~/.cache/unsnarl-corpus`). When a tree is
//! missing, the language falls back to the files of `examples/` and
//! `tests/fixtures/`, and says so on stderr: such numbers are not comparable
//! with the corpus ones.
//!
//! Knobs (environment): `UNSNARL_BENCH_SAMPLE_MB` (sample size per language,
//! default 4), `UNSNARL_BENCH_INDEX_TREE` (a tree name under `trees/`, for
//! example `all`, instead of the largest of the four corpora).

use divan::counter::BytesCount;
use divan::{Bencher, black_box};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use unsnarl_frontend_rust::Stage as RustStage;
use unsnarl_model::{FileModel, Knowledge, Language, SourceInput};
use unsnarl_rules::{Engine, FileSummaries, ProjectIndex, all_rules};

/// The allocator of the `unsnarl` binary (src/main.rs), regions on: parsers
/// and lowering allocate a lot, and with the system allocator the numbers
/// were not the binary's (ruff's parser alone: 67 MB/s instead of 88 on the
/// Python sample).
#[global_allocator]
static GLOBAL: unsnarl_alloc::ScanAllocator = unsnarl_alloc::ScanAllocator;

fn main() {
    // SAFETY: `ScanAllocator` is the global allocator.
    unsafe { unsnarl_alloc::enable() };
    divan::main();
}

/// One source file held in memory.
struct Source {
    rel: String,
    text: String,
    lang: Language,
}

/// A sample of one language.
struct Sample {
    files: Vec<Source>,
    bytes: usize,
}

const LANGS: &[&str] = &["python", "javascript", "typescript", "go", "rust"];

fn language(name: &str) -> Language {
    match name {
        "python" => Language::Python,
        "javascript" => Language::JavaScript,
        "typescript" => Language::TypeScript,
        "go" => Language::Go,
        "rust" => Language::Rust,
        _ => unreachable!("{name}"),
    }
}

/// The tree that holds a language.
fn tree_of(lang: Language) -> &'static str {
    match lang {
        Language::Python => "python",
        Language::JavaScript | Language::TypeScript => "jsts",
        Language::Go => "go",
        Language::Rust => "rust",
    }
}

fn lower(input: &SourceInput) -> FileModel {
    match input.language {
        Language::Python => unsnarl_frontend_python::lower(input),
        Language::JavaScript | Language::TypeScript => unsnarl_frontend_js::lower(input),
        Language::Go => unsnarl_frontend_go::lower(input),
        Language::Rust => unsnarl_frontend_rust::lower(input),
    }
}

fn trees_dir() -> PathBuf {
    let corpus = std::env::var_os("CORPUS")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/unsnarl-corpus")))
        .unwrap_or_else(|| PathBuf::from(".cache/unsnarl-corpus"));
    corpus.join("trees")
}

/// Every file of `lang` under `root`, sorted by path (deterministic), as
/// (relative path, absolute path, size).
fn list(root: &Path, lang: Language) -> Vec<Listed> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                stack.push(p);
            } else if ft.is_file()
                && p.extension()
                    .and_then(|x| x.to_str())
                    .and_then(Language::from_extension)
                    == Some(lang)
            {
                let size = e.metadata().map(|m| m.len()).unwrap_or(0);
                let rel = p
                    .strip_prefix(root)
                    .unwrap_or(&p)
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((rel, p, size));
            }
        }
    }
    out.sort();
    out
}

fn read(files: &[Listed], lang: Language) -> Vec<Source> {
    files
        .par_iter()
        .filter_map(|(rel, p, _)| {
            let text = std::fs::read_to_string(p).ok()?;
            Some(Source {
                rel: rel.clone(),
                text,
                lang,
            })
        })
        .collect()
}

/// The fallback when the corpus is missing: examples/ and tests/fixtures/.
fn fallback(lang: Language) -> Vec<Listed> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = list(&root.join("examples"), lang);
    files.extend(list(&root.join("tests/fixtures"), lang));
    files
}

/// A deterministic sample of about `UNSNARL_BENCH_SAMPLE_MB` of one
/// language: every n-th file of the sorted list.
fn sample(name: &str) -> &'static Sample {
    static SAMPLES: OnceLock<Vec<(String, Sample)>> = OnceLock::new();
    let all = SAMPLES.get_or_init(|| {
        let target: f64 = std::env::var("UNSNARL_BENCH_SAMPLE_MB")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(4.0);
        LANGS
            .iter()
            .map(|&name| {
                let lang = language(name);
                let tree = trees_dir().join(tree_of(lang));
                let mut files = list(&tree, lang);
                let source = if files.is_empty() {
                    files = fallback(lang);
                    "examples/ and tests/fixtures/ (the corpus is missing: run bash bench/corpus.sh)"
                        .to_string()
                } else {
                    tree.display().to_string()
                };
                let total: u64 = files.iter().map(|f| f.2).sum();
                let step = ((total as f64 / (target * 1e6)).floor() as usize).max(1);
                let picked: Vec<_> = files.into_iter().step_by(step).collect();
                let files = read(&picked, lang);
                let bytes = files.iter().map(|f| f.text.len()).sum();
                eprintln!(
                    "{name}: {} files, {:.2} MB, every {step}th file of {source}",
                    files.len(),
                    bytes as f64 / 1e6
                );
                (name.to_string(), Sample { files, bytes })
            })
            .collect()
    });
    &all.iter().find(|(n, _)| n == name).expect("a language").1
}

/// Parse + lower throughput, one thread.
#[divan::bench(args = LANGS, sample_count = 10, sample_size = 1)]
fn parse_lower(bencher: Bencher, name: &str) {
    bench_each_file(bencher, name, |input| {
        black_box(lower(input));
    });
}

/// Times `run` over every file of the sample of language `name`, counting
/// the sample's bytes.
fn bench_each_file(bencher: Bencher, name: &str, run: impl Fn(&SourceInput) + Sync) {
    let s = sample(name);
    bencher.counter(BytesCount::new(s.bytes)).bench(|| {
        for f in &s.files {
            run(&SourceInput {
                text: &f.text,
                rel_path: &f.rel,
                language: f.lang,
            });
        }
    });
}

/// The parser alone, one thread: each file parsed as its front end parses
/// it and the tree dropped, not lowered. Beside `parse_lower`, the share of
/// the front end that is the parser's. Go has no such split: its fast path
/// lowers while it parses.
#[divan::bench(args = ["python", "javascript", "typescript", "rust"], sample_count = 10, sample_size = 1)]
fn parse_only(bencher: Bencher, name: &str) {
    bench_each_file(bencher, name, |input| {
        black_box(match input.language {
            Language::Python => unsnarl_frontend_python::parse_only(input),
            Language::JavaScript | Language::TypeScript => unsnarl_frontend_js::parse_only(input),
            Language::Rust => unsnarl_frontend_rust::run_stage(input.text, RustStage::Tree),
            Language::Go => unreachable!("Go is not among the arguments"),
        });
    });
}

/// The Rust front end's stages on the Rust sample, one thread: the lexer
/// alone, the lexer and the parser's events (no tree), and the syntax tree
/// as lowering gets it. With `parse_lower`, where the Rust front end's time
/// goes.
#[divan::bench(args = ["lex", "parse", "tree"], sample_count = 10, sample_size = 1)]
fn rust_stages(bencher: Bencher, stage: &str) {
    let stage = match stage {
        "lex" => RustStage::Lex,
        "parse" => RustStage::Parse,
        _ => RustStage::Tree,
    };
    bench_each_file(bencher, "rust", |input| {
        black_box(unsnarl_frontend_rust::run_stage(input.text, stage));
    });
}

/// A file as listed: path relative to the tree, absolute path, size.
type Listed = (String, PathBuf, u64);
/// The input of `ProjectIndex::build`: per file, its summaries.
type Summaries = Vec<FileSummaries>;

/// The summaries of every file of the largest corpus (or of
/// `UNSNARL_BENCH_INDEX_TREE`), made in parallel, once.
fn index_input() -> &'static (String, Summaries) {
    static INPUT: OnceLock<(String, Summaries)> = OnceLock::new();
    INPUT.get_or_init(|| {
        let trees = trees_dir();
        let chosen = std::env::var("UNSNARL_BENCH_INDEX_TREE").ok();
        let candidates: Vec<&str> = match &chosen {
            Some(t) => vec![t.as_str()],
            None => vec!["python", "jsts", "go", "rust"],
        };
        // Every supported file of each candidate tree; the largest by bytes.
        let mut best: Option<(String, Vec<Listed>)> = None;
        for t in candidates {
            let root = trees.join(t);
            let mut files = Vec::new();
            for lang in [
                Language::Python,
                Language::JavaScript,
                Language::TypeScript,
                Language::Go,
                Language::Rust,
            ] {
                files.extend(list(&root, lang));
            }
            let size: u64 = files.iter().map(|f| f.2).sum();
            if size > 0
                && best
                    .as_ref()
                    .is_none_or(|b| size > b.1.iter().map(|f| f.2).sum())
            {
                best = Some((root.display().to_string(), files));
            }
        }
        let (label, mut files) = best.unwrap_or_else(|| {
            let mut files = Vec::new();
            for lang in [
                Language::Python,
                Language::JavaScript,
                Language::TypeScript,
                Language::Go,
                Language::Rust,
            ] {
                files.extend(fallback(lang));
            }
            (
                "examples/ and tests/fixtures/ (the corpus is missing: run bash bench/corpus.sh)"
                    .to_string(),
                files,
            )
        });
        files.sort();
        let engine = Engine::new(all_rules().to_vec(), Knowledge::builtin());
        // Lower + prepare in parallel on a big stack (parsers recurse),
        // keeping only the summaries.
        let pool = rayon::ThreadPoolBuilder::new()
            .stack_size(256 * 1024 * 1024)
            .build()
            .expect("a thread pool");
        let bytes: u64 = files.iter().map(|f| f.2).sum();
        let summaries: Summaries = pool.install(|| {
            files
                .par_iter()
                .filter_map(|(rel, p, _)| {
                    let lang = p
                        .extension()
                        .and_then(|x| x.to_str())
                        .and_then(Language::from_extension)?;
                    let text = std::fs::read_to_string(p).ok()?;
                    let input = SourceInput {
                        text: &text,
                        rel_path: rel,
                        language: lang,
                    };
                    let model = lower(&input);
                    let (_, sums) = engine.prepare(model, lang);
                    Some(sums)
                })
                .collect()
        });
        let fns: usize = summaries.iter().map(|s| s.len()).sum();
        eprintln!(
            "index: {} files, {:.1} MB, {fns} function summaries, from {label}",
            summaries.len(),
            bytes as f64 / 1e6
        );
        (label, summaries)
    })
}

/// The project index build (stage 2 of the pipeline), one thread.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn index(bencher: Bencher) {
    let (_, summaries) = index_input();
    bencher
        .with_inputs(|| summaries.clone())
        .bench_values(|s| black_box(ProjectIndex::build(s)));
}
