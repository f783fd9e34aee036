//! The scan: walk; per file in parallel read, lower, prepare and run the
//! rules against an index of the file's own functions; build the project
//! index; per file in parallel keep those results or run the rules again;
//! one sort. A panic in one file's analysis is contained and reported as an
//! internal error for that file; the other files are still analyzed.
//!
//! Rules follow calls into other files through the project index, which
//! needs every file first. Running them early against a one-file index
//! records each question they ask it ([`ProjectIndex::for_one_file`]); when
//! the project index answers every one the same way, the early results are
//! the results. Most files ask nothing that another file changes, so their
//! models are dropped at once. The others are run again in stage 3, from a
//! model kept within the memory budget or read and lowered again. Either
//! way the findings are the ones a run with every model kept would give;
//! only time and memory differ.

use crate::cache::{self, Cache, Cached, Stage1View};
use crate::filter::{self, Filter, suppressions::Suppressions};
use crate::frontend::Frontend;
use crate::report::{
    Excerpt, FindingOut, Location, Notice, RelatedOut, ScanReport, Summary, SyntaxErrorOut,
    fingerprint,
};
use crate::walk::{self, FileProblem, Load, ProblemKind, Root, SkipReason, SourceFile};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Once, OnceLock};
use std::time::{Duration, Instant};
use unsnarl_model::{Finding, Knowledge, Language, LineIndex, SourceInput};
use unsnarl_rules::{
    Deadline, Engine, FileSummaries, Prepared, ProjectIndex, QueryLog, Rule, find_rule,
};

/// Parsers recurse; deeply nested input needs deep stacks.
pub const STACK_SIZE: usize = 256 * 1024 * 1024;

/// The default memory budget for models kept for a second run of the rules
/// (`--memory-budget`): none. Those files are a few percent of a project,
/// and parsing them again costs less than holding them (measured in the
/// README's benchmarks).
pub const DEFAULT_MEMORY_BUDGET: usize = 0;

/// The default per-file time budget (`--file-timeout`).
pub const DEFAULT_FILE_TIMEOUT: Duration = Duration::from_secs(10);

/// Longest code frame, in lines (a finding spanning a whole function shows
/// its first lines).
const MAX_EXCERPT_LINES: usize = 8;

pub struct ScanOptions {
    pub roots: Vec<Root>,
    /// Absolute current directory (report paths are relative to it).
    pub cwd: PathBuf,
    pub exclude: Vec<String>,
    pub threads: usize,
    pub rules: Vec<&'static dyn Rule>,
    pub knowledge: Knowledge,
    pub filter: Filter,
    pub include_generated: bool,
    /// Per-file time budget (`None`: unlimited). A file whose analysis runs
    /// past it is abandoned and reported as skipped (`timeout`).
    pub file_timeout: Option<Duration>,
    /// Bytes of file models (and their texts) kept between stage 1 and the
    /// rules; files past it are lowered again in stage 3.
    pub memory_budget: usize,
    /// Show a progress bar on stderr if the scan takes more than a second.
    pub progress: bool,
    /// `--stdin-filename`: this file's content comes from stdin.
    pub stdin: Option<(walk::Root, std::sync::Arc<[u8]>)>,
    /// The results cache, if on (`None`: `--no-cache`).
    pub cache: Option<Cache>,
}

/// Runs a scan. `Err` only for problems that stop the whole scan (a thread
/// pool that cannot start, an invalid exclude glob).
pub fn scan(opts: ScanOptions, frontend: &dyn Frontend) -> Result<ScanReport, String> {
    let start = Instant::now();
    install_panic_hook();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .stack_size(STACK_SIZE)
        .thread_name(|i| format!("unsnarl-{i}"))
        .build()
        .map_err(|e| format!("cannot start the analysis threads: {e}"))?;
    let mut walked = walk::walk(&opts.roots, &opts.cwd, &opts.exclude, opts.threads)?;
    if let Some((root, text)) = &opts.stdin {
        walk::add_stdin_file(&mut walked, root, &opts.cwd, text.clone())?;
    }
    let progress = Progress::new(opts.progress, walked.files.len() as u64 * 2, start);
    let engine = Engine::new(opts.rules.clone(), opts.knowledge.clone());
    let mut summary = Summary {
        skipped: walked.skipped,
        problems: walked.problems,
        ..Summary::default()
    };

    // Stage 1: read, lower, semantic pass (parallel, file order kept).
    let memory = MemoryBudget::new(opts.memory_budget);
    let stage1: Vec<Stage1> = pool.install(|| {
        walked
            .files
            .into_par_iter()
            .map(|f| {
                let r = prepare_file(
                    f,
                    &engine,
                    frontend,
                    &opts.filter,
                    opts.include_generated,
                    opts.file_timeout,
                    &memory,
                    opts.cache.as_ref(),
                );
                progress.inc();
                r
            })
            .collect()
    });
    let mut files: Vec<FileState> = Vec::with_capacity(stage1.len());
    let mut early: Vec<Early> = Vec::with_capacity(stage1.len());
    let mut summaries: Vec<FileSummaries> = Vec::with_capacity(stage1.len());
    for s in stage1 {
        match s {
            Stage1::Ready(mut f, sums, e) => {
                if let Some(e) = f.syntax.take() {
                    summary.syntax_errors.push(e);
                }
                summaries.push(sums);
                files.push(*f);
                early.push(e);
            }
            Stage1::Skip(path, reason) => summary.skipped.push((path, reason)),
            Stage1::Problem(p) => summary.problems.push(p),
        }
    }

    engine.forget_names();
    // Stage 2: the project index (file order = index order), on the scan's
    // threads.
    let python_packages = files
        .iter()
        .filter(|f| f.file.lang == Language::Python)
        .filter_map(|f| unsnarl_frontend_python::package_defined_by(&f.file.rel))
        .map(String::into_boxed_str)
        .collect();
    // Top-level modules in folders that cannot be imported, less those a
    // file at the scan's root also defines.
    let python_files = || files.iter().filter(|f| f.file.lang == Language::Python);
    let root_modules: std::collections::HashSet<String> = python_files()
        .filter_map(|f| unsnarl_frontend_python::root_module(&f.file.rel))
        .collect();
    let only_top_level = python_files()
        .filter_map(|f| unsnarl_frontend_python::unimportable_folder_module(&f.file.rel))
        .filter(|m| !root_modules.contains(m))
        .map(String::into_boxed_str)
        .collect();
    let mut index = match pool.install(|| {
        contained(|| {
            ProjectIndex::build_knowing_packages(summaries, python_packages, only_top_level)
        })
    }) {
        Ok(ix) => ix,
        Err(msg) => {
            summary.problems.push(FileProblem {
                path: "<project index>".into(),
                kind: ProblemKind::Internal,
                message: msg,
            });
            ProjectIndex::build(Vec::new())
        }
    };
    index.set_file_paths(files.iter().map(|f| f.file.rel.as_str().into()).collect());

    // With the cache, what stage 3's rules ask the project index is kept
    // with their results, by file identity: a later run whose index answers
    // the same reuses them. A file without a content hash (an editor's
    // buffer) gets an identity of this run only, so nothing that depends on
    // it is reused.
    let cache = opts.cache.as_ref();
    if cache.is_some() {
        let run = std::hash::RandomState::new();
        let ids = files
            .iter()
            .enumerate()
            .map(|(i, f)| match f.hash {
                Some(h) => cache::file_identity(&f.file, h),
                None => std::hash::BuildHasher::hash_one(&run, i),
            })
            .collect();
        index.record_lasting(ids);
    }

    // Stage 3: the results of stage 1 where the project index answers as
    // the file's own functions did, else those of the file's last run
    // against a project index that answered the same (from the cache),
    // else the rules again (parallel).
    let cached = std::sync::atomic::AtomicUsize::new(0);
    let checked: Vec<Checked> = pool.install(|| {
        early
            .into_par_iter()
            .enumerate()
            .map(|(i, e)| {
                let lang = files[i].file.lang;
                let r = if index.confirms(&e.queries, lang, i as u32) {
                    if files[i].from_cache {
                        cached.fetch_add(1, Ordering::Relaxed);
                    }
                    e.checked
                } else if let Some(l) = e
                    .lasting
                    .filter(|l| index.confirms_lasting(&l.log, lang, i as u32))
                {
                    cached.fetch_add(1, Ordering::Relaxed);
                    Checked::Ok {
                        findings: l.findings,
                        notices: l.notices,
                        suppressed: l.suppressed,
                    }
                } else {
                    let r = check_file(
                        i,
                        &files,
                        &engine,
                        frontend,
                        &index,
                        &opts.filter,
                        opts.file_timeout,
                    );
                    keep_lasting(cache, &files[i], &index, i, &r);
                    r
                };
                progress.inc();
                r
            })
            .collect()
    });
    // Freeing every file model and the index is a tenth of a large scan
    // and nothing waits for it: a background thread does it while the
    // report is written (and the process may exit before it is done).
    std::thread::Builder::new()
        .name("unsnarl-free".into())
        .spawn(move || drop((index, files)))
        .map_err(|e| format!("cannot start a thread: {e}"))?;
    summary.files_cached = cached.into_inner();
    if let Some(c) = opts.cache {
        let roots: Vec<PathBuf> = opts
            .roots
            .iter()
            .map(|r| walk::normalize_lexically(&r.abs))
            .collect();
        summary.cache_warning = c.save(&roots).err();
    }
    let mut findings = Vec::new();
    let mut notices = Vec::new();
    for c in checked {
        match c {
            Checked::Ok {
                findings: f,
                notices: n,
                suppressed,
            } => {
                summary.files_scanned += 1;
                summary.suppressed += suppressed;
                findings.extend(f);
                notices.extend(n);
            }
            Checked::Problem(p) => summary.problems.push(p),
            Checked::Timeout(path) => summary.skipped.push((path, SkipReason::Timeout)),
        }
    }
    findings.sort_by(|a, b| {
        (
            &a.loc.path,
            a.loc.line,
            a.loc.column,
            a.rule,
            a.loc.end_line,
            a.loc.end_column,
            &a.message,
        )
            .cmp(&(
                &b.loc.path,
                b.loc.line,
                b.loc.column,
                b.rule,
                b.loc.end_line,
                b.loc.end_column,
                &b.message,
            ))
    });
    notices.sort();
    summary.skipped.sort();
    summary
        .problems
        .sort_by(|a, b| (&a.path, a.kind, &a.message).cmp(&(&b.path, b.kind, &b.message)));
    summary.syntax_errors.sort_by(|a, b| a.path.cmp(&b.path));
    progress.finish();
    summary.elapsed = start.elapsed();
    Ok(ScanReport {
        findings,
        summary,
        notices,
        rules: opts.rules,
    })
}

/// The file number rules see in stage 1, when the index holds only the
/// file's own functions.
const EARLY_FILE: u32 = u32::MAX;

/// Keeps file `i`'s stage-3 results in the cache with what the project
/// index told its rules (a file the cache does not hold, one without a
/// content hash, or one that failed keeps nothing).
fn keep_lasting(cache: Option<&Cache>, f: &FileState, index: &ProjectIndex, i: usize, r: &Checked) {
    let log = index.take_lasting(i as u32);
    if let (
        Some(c),
        Some(hash),
        Checked::Ok {
            findings,
            notices,
            suppressed,
        },
    ) = (cache, f.hash, r)
    {
        c.put_lasting(&f.file, hash, findings, notices, *suppressed, log);
    }
}

/// A file's findings from stage 1, and what the rules asked the one-file
/// index to get them.
struct Early {
    checked: Checked,
    queries: QueryLog,
    /// From the cache: the results of the file's last run against a project
    /// index, which stand if this run's index answers as that one did.
    lasting: Option<Box<cache::LastingResults>>,
}

/// One file after stage 1.
struct FileState {
    file: SourceFile,
    /// The analyzed file, unless dropped to stay within the memory budget
    /// (stage 3 then reads and lowers it again). Boxed: most files keep
    /// nothing.
    kept: Option<Box<Analyzed>>,
    syntax: Option<SyntaxErrorOut>,
    /// Time spent on it in stage 1 (counts against the time budget).
    spent: Duration,
    /// Its stage-1 results came from the results cache.
    from_cache: bool,
    /// Its content hash, when the results cache is on.
    hash: Option<u64>,
}

/// A file's text and its model after the semantic pass.
struct Analyzed {
    text: String,
    /// Built on first use: only files with findings or a syntax error need
    /// line numbers, and most files have neither.
    lines: OnceLock<LineIndex>,
    prepared: Prepared,
}

impl Analyzed {
    fn lines(&self) -> &LineIndex {
        self.lines.get_or_init(|| LineIndex::new(&self.text))
    }
}

/// Bytes of models still allowed to stay in memory between the passes.
struct MemoryBudget {
    left: std::sync::atomic::AtomicUsize,
}

impl MemoryBudget {
    fn new(bytes: usize) -> MemoryBudget {
        MemoryBudget {
            left: std::sync::atomic::AtomicUsize::new(bytes),
        }
    }

    /// Whether `bytes` are left, without reserving them.
    fn has(&self, bytes: usize) -> bool {
        self.left.load(Ordering::Relaxed) >= bytes
    }

    /// Reserves `bytes` if that much is left.
    fn take(&self, bytes: usize) -> bool {
        self.left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(bytes)
            })
            .is_ok()
    }
}

enum Stage1 {
    Ready(Box<FileState>, FileSummaries, Early),
    Skip(String, SkipReason),
    Problem(FileProblem),
}

#[allow(clippy::too_many_arguments)]
fn prepare_file(
    file: SourceFile,
    engine: &Engine,
    frontend: &dyn Frontend,
    filter: &Filter,
    include_generated: bool,
    budget: Option<Duration>,
    memory: &MemoryBudget,
    cache: Option<&Cache>,
) -> Stage1 {
    let started = Instant::now();
    let deadline = Deadline::after(budget);
    let bytes = match walk::read_source(&file) {
        Ok(b) => b,
        Err(l) => return not_loaded(file, l),
    };
    // The buffer of an editor (stdin) is not worth keeping. The cache hashes
    // the bytes as read: a file it knows was readable text with these very
    // bytes, so it is not checked again (binary, minified, UTF-8).
    let cache = cache.filter(|_| file.stdin.is_none());
    let len = bytes.len();
    let hash = cache.map(|_| cache::bytes_hash(&bytes));
    if let (Some(c), Some(hash)) = (cache, hash) {
        match c.get(&file, len, hash) {
            Some(Cached::Results(r)) => return ready_from_cache(file, hash, *r, engine, started),
            Some(Cached::Generated) => return Stage1::Skip(file.display, SkipReason::Generated),
            None => {}
        }
    }
    let text = match walk::classify_bytes(&file.abs, bytes) {
        Load::Text(t) => t,
        other => return not_loaded(file, other),
    };
    let internal = |path: &str, stage: &str, msg: String| {
        Stage1::Problem(FileProblem {
            path: path.to_string(),
            kind: ProblemKind::Internal,
            message: format!("internal error while {stage}: {msg}"),
        })
    };
    let input = SourceInput {
        text: &text,
        rel_path: &file.rel,
        language: file.lang,
    };
    let model = match contained(|| frontend.lower(&input)) {
        Ok(m) => m,
        Err(msg) => return internal(&file.display, "parsing", msg),
    };
    if model.is_generated && !include_generated {
        if let (Some(c), Some(hash)) = (cache, hash) {
            c.put(&file, len, hash, None);
        }
        return Stage1::Skip(file.display, SkipReason::Generated);
    }
    if deadline.expired() {
        return Stage1::Skip(file.display, SkipReason::Timeout);
    }
    let lines = OnceLock::new();
    let syntax = model.syntax_errors.first().map(|e| {
        let lc = lines
            .get_or_init(|| LineIndex::new(&text))
            .line_col(&text, e.span.start);
        SyntaxErrorOut {
            path: file.display.clone(),
            line: lc.line,
            column: lc.column,
            message: e.message.clone(),
            count: model.syntax_errors.len(),
        }
    });
    let lang = file.lang;
    let (prepared, sums) = match contained(move || engine.prepare(model, lang)) {
        Ok(p) => p,
        Err(msg) => return internal(&file.display, "running the semantic pass", msg),
    };
    if deadline.expired() {
        return Stage1::Skip(file.display, SkipReason::Timeout);
    }
    // The rules run now, while the model is fresh, against an index of the
    // file's own functions. Most files never ask about another file's
    // functions; their results are final and their models can go.
    let a = Analyzed {
        text,
        lines,
        prepared,
    };
    let local = ProjectIndex::for_one_file(EARLY_FILE, sums);
    let own = |_: usize, span| location(&file.display, &a.text, a.lines(), span);
    let checked = check_analyzed(
        &file,
        &a,
        EARLY_FILE as usize,
        engine,
        &local,
        filter,
        deadline,
        &own,
    );
    let (queries, sums) = local.into_queries();
    if let (
        Some(c),
        Some(hash),
        Checked::Ok {
            findings,
            notices,
            suppressed,
        },
    ) = (cache, hash, &checked)
    {
        let view = Stage1View {
            syntax: syntax.as_ref(),
            summaries: &sums,
            findings,
            notices,
            suppressed: *suppressed,
            queries: &queries,
        };
        c.put(&file, len, hash, Some(view));
    }
    // The text alone must fit before the full cost, which needs the line
    // index, is worth computing (with the default budget, none is kept).
    let keep = !queries.is_empty()
        && memory.has(a.text.len())
        && memory.take(a.prepared.approx_bytes() + a.text.len() + a.lines().line_count() * 4);
    let kept = if keep {
        Some(Box::new(a))
    } else {
        a.prepared.model.recycle();
        None
    };
    Stage1::Ready(
        Box::new(FileState {
            file,
            kept,
            syntax,
            spent: started.elapsed(),
            from_cache: false,
            hash,
        }),
        sums,
        Early {
            checked,
            queries,
            lasting: None,
        },
    )
}

/// A file that was not read as text: skipped, or a problem.
fn not_loaded(file: SourceFile, l: Load) -> Stage1 {
    match l {
        Load::Skip(r) => Stage1::Skip(file.display, r),
        Load::Problem(kind, message) => Stage1::Problem(FileProblem {
            path: file.display,
            kind,
            message,
        }),
        // Not produced by the callers; kept total rather than panicking.
        Load::Text(_) => Stage1::Problem(FileProblem {
            path: file.display,
            kind: ProblemKind::Internal,
            message: "internal error: a loaded file was taken for a failed one".into(),
        }),
    }
}

/// A file's stage-1 results read from the results cache.
fn ready_from_cache(
    file: SourceFile,
    hash: u64,
    r: cache::Stage1Results,
    engine: &Engine,
    started: Instant,
) -> Stage1 {
    let mut sums = r.summaries;
    engine.share_names(&mut sums);
    Stage1::Ready(
        Box::new(FileState {
            file,
            kept: None,
            syntax: r.syntax,
            spent: started.elapsed(),
            from_cache: true,
            hash: Some(hash),
        }),
        sums,
        Early {
            checked: Checked::Ok {
                findings: r.findings,
                notices: r.notices,
                suppressed: r.suppressed,
            },
            queries: r.queries,
            lasting: r.lasting,
        },
    )
}

/// Reads and analyzes a file again in stage 3 (its model was not kept).
fn reanalyze(
    file: &SourceFile,
    engine: &Engine,
    frontend: &dyn Frontend,
) -> Result<Analyzed, String> {
    let text = match walk::load_source(file) {
        Load::Text(t) => t,
        Load::Skip(r) => return Err(format!("the file changed during the scan ({})", r.slug())),
        Load::Problem(_, message) => return Err(message),
    };
    let input = SourceInput {
        text: &text,
        rel_path: &file.rel,
        language: file.lang,
    };
    let model = frontend.lower(&input);
    let (prepared, _) = engine.prepare(model, file.lang);
    Ok(Analyzed {
        text,
        lines: OnceLock::new(),
        prepared,
    })
}

enum Checked {
    Ok {
        findings: Vec<FindingOut>,
        notices: Vec<Notice>,
        suppressed: usize,
    },
    Problem(FileProblem),
    /// Abandoned: past the time budget.
    Timeout(String),
}

fn check_file(
    i: usize,
    files: &[FileState],
    engine: &Engine,
    frontend: &dyn Frontend,
    index: &ProjectIndex,
    filter: &Filter,
    budget: Option<Duration>,
) -> Checked {
    let f = &files[i];
    // What is left of the budget after stage 1.
    let deadline = Deadline::after(budget.map(|b| b.saturating_sub(f.spent)));
    let again;
    let a = match &f.kept {
        Some(a) => a,
        None => match contained(|| reanalyze(&f.file, engine, frontend)) {
            Ok(Ok(a)) => {
                again = a;
                &again
            }
            Ok(Err(message)) => {
                return Checked::Problem(FileProblem {
                    path: f.file.display.clone(),
                    kind: ProblemKind::Unreadable,
                    message,
                });
            }
            Err(msg) => {
                return Checked::Problem(FileProblem {
                    path: f.file.display.clone(),
                    kind: ProblemKind::Internal,
                    message: format!("internal error while parsing: {msg}"),
                });
            }
        },
    };
    let other = |j: usize, span| match files.get(j) {
        Some(o) if j != i => related_location(o, span),
        _ => location(&f.file.display, &a.text, a.lines(), span),
    };
    check_analyzed(&f.file, a, i, engine, index, filter, deadline, &other)
}

/// Runs the rules and the filters on one analyzed file. `other` gives the
/// location of a span in the scan's file number `n` (related locations).
#[allow(clippy::too_many_arguments)]
fn check_analyzed(
    file: &SourceFile,
    a: &Analyzed,
    file_no: usize,
    engine: &Engine,
    index: &ProjectIndex,
    filter: &Filter,
    deadline: Deadline,
    other: &dyn Fn(usize, unsnarl_model::Span) -> Location,
) -> Checked {
    let checked = contained(|| {
        engine.check_within(
            file_no,
            &file.display,
            &a.text,
            &a.prepared,
            index,
            deadline,
        )
    });
    let raw = match checked {
        Ok(Ok(r)) => r,
        Ok(Err(_timed_out)) => return Checked::Timeout(file.display.clone()),
        Err(msg) => {
            return Checked::Problem(FileProblem {
                path: file.display.clone(),
                kind: ProblemKind::Internal,
                message: format!("internal error while running the rules: {msg}"),
            });
        }
    };
    let sup = Suppressions::parse(&a.text);
    let mut notices = suppression_notices(&file.display, &sup);
    let file_ignores = filter.ignored_for(&file.abs);
    let mut suppressed = 0;
    let mut out = Vec::with_capacity(raw.len());
    // Which directives covered a finding (any severity), when asked.
    let mut used = vec![false; sup.directives.len()];
    let track_use = filter.unused_check.is_some() && !used.is_empty();
    for finding in raw {
        let loc = location(&file.display, &a.text, a.lines(), finding.span);
        if track_use {
            let covers = |code: &str| filter::code_covers(code, finding.rule, finding.category);
            for i in sup.covering(loc.line, &covers) {
                used[i] = true;
            }
        }
        if filter.below_threshold(finding.severity) {
            continue;
        }
        if filter::is_suppressed(
            &sup,
            &file_ignores,
            loc.line,
            finding.rule,
            finding.category,
        ) {
            suppressed += 1;
            continue;
        }
        out.push(to_out(finding, loc, file_no, a, other));
    }
    if out.len() > 1 {
        out.sort_by(|a, b| {
            (a.loc.line, a.loc.column, a.rule).cmp(&(b.loc.line, b.loc.column, b.rule))
        });
    }
    assign_fingerprints(&mut out, a);
    notices.extend(
        filter
            .unused_suppressions(&sup, &used, file.lang)
            .into_iter()
            .map(|(line, message)| Notice {
                path: file.display.clone(),
                line,
                message,
            }),
    );
    notices.sort();
    Checked::Ok {
        findings: out,
        notices: std::mem::take(&mut notices),
        suppressed,
    }
}

fn suppression_notices(path: &str, sup: &Suppressions) -> Vec<Notice> {
    let mut out: Vec<Notice> = sup
        .codes()
        .filter(|(_, code)| filter::selection::Code::parse(code).is_none())
        .map(|(line, code)| Notice {
            path: path.to_string(),
            line,
            message: format!("unknown rule or category \"{code}\" in suppression comment"),
        })
        .collect();
    out.extend(sup.malformed.iter().map(|m| Notice {
        path: path.to_string(),
        line: m.line,
        message: m.message.to_string(),
    }));
    out
}

fn location(path: &str, text: &str, lines: &LineIndex, span: unsnarl_model::Span) -> Location {
    let start = lines.line_col(text, span.start);
    let end = lines.line_col(text, span.end.max(span.start));
    Location {
        path: path.to_string(),
        line: start.line,
        column: start.column,
        end_line: end.line,
        end_column: end.column,
    }
}

fn to_out(
    finding: Finding,
    loc: Location,
    file_no: usize,
    a: &Analyzed,
    other: &dyn Fn(usize, unsnarl_model::Span) -> Location,
) -> FindingOut {
    let related = finding
        .related
        .iter()
        .map(|r| {
            let loc = other(r.file.unwrap_or(file_no), r.span);
            RelatedOut {
                loc,
                message: r.message.clone(),
            }
        })
        .collect();
    let rule_name = find_rule(finding.rule).map(|r| r.meta().name).unwrap_or("");
    FindingOut {
        rule: finding.rule,
        rule_name,
        category: finding.category,
        severity: finding.severity,
        excerpt: excerpt(&a.text, a.lines(), finding.span),
        loc,
        message: finding.message,
        fix: finding.fix,
        related,
        fingerprint: String::new(),
        content_hash: String::new(),
    }
}

/// A location in another file, whose text may have been dropped after stage
/// 1 (then it is read again: related locations are few).
fn related_location(other: &FileState, span: unsnarl_model::Span) -> Location {
    if let Some(a) = &other.kept {
        return location(&other.file.display, &a.text, a.lines(), span);
    }
    let text = match walk::load_source(&other.file) {
        Load::Text(t) => t,
        _ => String::new(),
    };
    location(&other.file.display, &text, &LineIndex::new(&text), span)
}

/// The whole lines a span covers (at most [`MAX_EXCERPT_LINES`]).
fn excerpt(text: &str, lines: &LineIndex, span: unsnarl_model::Span) -> Excerpt {
    let len = text.len() as u32;
    let (s, e) = (
        span.start.min(len),
        span.end.min(len).max(span.start.min(len)),
    );
    let first = lines.line_of(s);
    let last = lines.line_of(e).min(first + MAX_EXCERPT_LINES - 1);
    let from = lines.line_start(first) as usize;
    let to = if last + 1 < lines.line_count() {
        lines.line_start(last + 1) as usize
    } else {
        text.len()
    };
    let mut to = to.min(text.len());
    while to > from && !text.is_char_boundary(to) {
        to -= 1;
    }
    let body = text
        .get(from..to)
        .unwrap_or("")
        .trim_end_matches(['\n', '\r']);
    let clamp = |x: usize| {
        let mut x = x.saturating_sub(from).min(body.len());
        while x > 0 && !body.is_char_boundary(x) {
            x -= 1;
        }
        x
    };
    let (a, b) = (clamp(s as usize), clamp(e as usize));
    Excerpt {
        first_line: first as u32 + 1,
        text: body.to_string(),
        span: a..b,
    }
}

fn assign_fingerprints(out: &mut [FindingOut], a: &Analyzed) {
    if out.is_empty() {
        return;
    }
    let last = out.iter().map(|o| o.loc.line as usize).max().unwrap_or(0);
    let lines: Vec<&str> = a.text.lines().take(last).collect();
    let occurrences = fingerprint::occurrences(&lines);
    let mut seen: HashMap<String, usize> = HashMap::new();
    for o in out.iter_mut() {
        let line0 = o.loc.line as usize - 1;
        let line_text = lines.get(line0).copied().unwrap_or("");
        // Past the last line (a finding at the end of the file): every
        // blank line comes before it.
        let occ = occurrences.get(line0).copied().unwrap_or_else(|| {
            lines
                .iter()
                .filter(|l| fingerprint::normalize(l).is_empty())
                .count()
        });
        let ex = &o.excerpt;
        let flagged = ex.text.get(ex.span.clone()).unwrap_or("");
        let base = fingerprint::fingerprint(o.rule, &o.loc.path, line_text, flagged, occ, 0);
        let dup = seen.entry(base.clone()).or_insert(0);
        o.fingerprint = if *dup == 0 {
            base
        } else {
            fingerprint::fingerprint(o.rule, &o.loc.path, line_text, flagged, occ, *dup)
        };
        o.content_hash = fingerprint::fingerprint(o.rule, "", line_text, flagged, occ, *dup);
        *dup += 1;
    }
}

// ---- panic containment ----

thread_local! {
    /// Set while this thread runs contained analysis code: the panic hook
    /// then records the message instead of printing it.
    static CAPTURING: Cell<bool> = const { Cell::new(false) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs (once per process) a panic hook that is silent for contained
/// panics and behaves as before for every other panic.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CAPTURING.with(Cell::get) {
                let payload = info.payload();
                let msg = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "panic with a non-string payload".into());
                let at = info
                    .location()
                    .map(|l| format!(" at {}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{msg}{at}")));
            } else {
                previous(info);
            }
        }));
    });
}

/// Runs `f`, turning a panic into its message.
pub fn contained<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_panic_hook();
    let was = CAPTURING.with(|c| c.replace(true));
    let r = catch_unwind(AssertUnwindSafe(f));
    CAPTURING.with(|c| c.set(was));
    r.map_err(|_| {
        LAST_PANIC
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| "panic".into())
    })
}

// ---- progress ----

/// A progress bar drawn on stderr only once the scan has run for a second
/// (short scans stay quiet) and only when asked (stderr is a terminal).
struct Progress {
    bar: Option<ProgressBar>,
    shown: AtomicBool,
    start: Instant,
}

impl Progress {
    fn new(enabled: bool, len: u64, start: Instant) -> Progress {
        let bar = enabled.then(|| {
            let b = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
            if let Ok(style) =
                ProgressStyle::with_template("{spinner} analyzing {pos}/{len} [{elapsed}]")
            {
                b.set_style(style);
            }
            b
        });
        Progress {
            bar,
            shown: AtomicBool::new(false),
            start,
        }
    }

    fn inc(&self) {
        let Some(bar) = &self.bar else { return };
        if !self.shown.load(Ordering::Relaxed)
            && self.start.elapsed() > Duration::from_secs(1)
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        bar.inc(1);
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_are_contained_and_their_message_kept() {
        let r: Result<(), String> = contained(|| panic!("boom {}", 42));
        let msg = r.unwrap_err();
        assert!(msg.starts_with("boom 42 at "), "{msg}");
        assert_eq!(contained(|| 7).unwrap(), 7);
    }

    #[test]
    fn excerpts_cover_whole_lines_and_locate_the_span() {
        let text = "a = 1\nb = foo(x)\nc\n";
        let li = LineIndex::new(text);
        let s = text.find("foo").unwrap() as u32;
        let ex = excerpt(text, &li, unsnarl_model::Span::new(s, s + 6));
        assert_eq!(ex.first_line, 2);
        assert_eq!(ex.text, "b = foo(x)");
        assert_eq!(&ex.text[ex.span.clone()], "foo(x)");
        // Out-of-range spans are clamped, never a panic.
        let ex = excerpt(text, &li, unsnarl_model::Span::new(999, 2000));
        assert!(ex.span.end <= ex.text.len());
    }
}
