//! `unsnarl check`: the flags merged over the configuration, the scan, the
//! baseline, and the report written where it was asked for.

use crate::cli::{CheckArgs, Format};
use crate::filter::selection::{self, Code};
use crate::frontend::Frontend;
use crate::report::{self, ScanReport};
use crate::{
    EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, Fatal, Io, absolute, config, filter, pipeline, shown_path,
    walk, write_out,
};
use std::io::Read;
use std::path::{Path, PathBuf};
use unsnarl_model::{Knowledge, Severity};

/// The settings of a check, after merging flags over the config file.
struct Settings {
    format: Format,
    fail_on: Severity,
    select: Option<Vec<Code>>,
    ignore: Vec<Code>,
    exclude: Vec<String>,
    threads: usize,
    knowledge: Knowledge,
    filter: filter::Filter,
    include_generated: bool,
    file_timeout: Option<std::time::Duration>,
    memory_budget: usize,
    /// The baseline file in effect (`--baseline`, else the configuration's
    /// unless `--no-baseline`): absolute, and as shown in messages.
    baseline: Option<(PathBuf, PathBuf)>,
    /// The results cache's place, unless it is off.
    cache: Option<CachePlace>,
}

/// Whether an environment variable is set to something other than empty
/// or `0`.
fn env_flag(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0")
}

/// The results cache's place: `--no-cache` / `--cache-dir`, then the
/// environment, then the configuration (relative to its file), else a
/// directory for the project (the configuration's directory, or the current
/// one) in the user's cache directory, so that nothing is written into the
/// project.
fn cache_place(
    args: &CheckArgs,
    c: &config::Config,
    config_dir: Option<&Path>,
    io: &Io,
) -> Option<CachePlace> {
    let chosen = |dir: PathBuf| {
        Some(CachePlace {
            dir: walk::normalize_lexically(&dir),
            chosen: true,
        })
    };
    if args.no_cache {
        return None;
    }
    if let Some(d) = &args.cache_dir {
        return chosen(absolute(&io.cwd, d));
    }
    if env_flag("UNSNARL_NO_CACHE") {
        return None;
    }
    if let Some(d) = std::env::var_os("UNSNARL_CACHE_DIR").filter(|d| !d.is_empty()) {
        return chosen(absolute(&io.cwd, Path::new(&d)));
    }
    if c.cache == Some(false) {
        return None;
    }
    let project = config_dir.unwrap_or(&io.cwd);
    if let Some(d) = &c.cache_dir {
        return chosen(project.join(d));
    }
    let home = io.cache_home.as_ref()?;
    Some(CachePlace {
        dir: home.join(crate::cache::project_dir_name(project)),
        chosen: false,
    })
}

/// Where the results cache is, and whether the user chose the place (then
/// failing to write it is worth a warning).
struct CachePlace {
    dir: PathBuf,
    chosen: bool,
}

fn codes_from_flag(flag: &str, values: &[String]) -> Result<Vec<Code>, Fatal> {
    selection::parse_codes(values).map_err(|bad| {
        format!(
            "unknown rule or category \"{bad}\" in --{flag}; {}",
            selection::unknown_code_hint(&bad)
        )
    })
}

/// The settings of a check; a configuration is discovered upward from
/// `start` (a directory).
fn settings(args: &CheckArgs, start: &Path, io: &Io) -> Result<Settings, Fatal> {
    let loaded = if args.no_config {
        config::Loaded::default()
    } else if let Some(p) = &args.config {
        config::load_file(&absolute(&io.cwd, p))
            .map_err(|e| e.map_path(|_| p.clone()).to_string())?
    } else {
        config::discover(start).map_err(|e| e.map_path(|p| shown_path(&io.cwd, p)).to_string())?
    };
    let c = loaded.config;
    let cache = cache_place(args, &c, loaded.dir.as_deref(), io);
    let baseline = match (&args.baseline, &c.baseline, &loaded.dir) {
        (Some(p), _, _) => Some((absolute(&io.cwd, p), p.clone())),
        (None, Some(p), Some(dir)) if !args.no_baseline => {
            let abs = walk::normalize_lexically(&dir.join(p));
            Some((abs.clone(), shown_path(&io.cwd, &abs)))
        }
        _ => None,
    };
    let select = match (&args.select, &c.select) {
        (Some(v), _) => Some(codes_from_flag("select", v)?),
        (None, Some(v)) => {
            Some(selection::parse_codes(v).map_err(|b| format!("unknown code {b}"))?)
        }
        (None, None) => None,
    };
    let ignore = match (&args.ignore, &c.ignore) {
        (Some(v), _) => codes_from_flag("ignore", v)?,
        (None, Some(v)) => selection::parse_codes(v).map_err(|b| format!("unknown code {b}"))?,
        (None, None) => Vec::new(),
    };
    let exclude = args.exclude.clone().or(c.exclude).unwrap_or_default();
    for g in &exclude {
        walk::check_glob(g).map_err(|e| format!("--exclude \"{g}\": {e}"))?;
    }
    let threads = args
        .threads
        .or(c.threads)
        .map(|n| n as usize)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let mut knowledge = Knowledge::builtin();
    for (lang, effect, names) in c.knowledge {
        knowledge.table_mut(lang).extend(effect, names);
    }
    let min_severity = args.min_severity.map(|s| s.severity()).or(c.min_severity);
    let mut filter = filter::Filter::new(min_severity, &c.per_file_ignores, loaded.dir)?;
    if args.warn_unused_suppressions || c.warn_unused_suppressions.unwrap_or(false) {
        // The rules that ran are filled in once the selection is known.
        filter.unused_check = Some(Vec::new());
    }
    Ok(Settings {
        format: args.format.or(c.format).unwrap_or_default(),
        fail_on: args
            .fail_on
            .map(|s| s.severity())
            .or(c.fail_on)
            .unwrap_or(Severity::Low),
        select,
        ignore,
        exclude,
        threads,
        knowledge,
        filter,
        include_generated: args.include_generated || c.include_generated.unwrap_or(false),
        file_timeout: match args.file_timeout.or(c.file_timeout) {
            None => Some(pipeline::DEFAULT_FILE_TIMEOUT),
            Some(0.0) => None,
            Some(secs) => Some(std::time::Duration::from_secs_f64(secs)),
        },
        memory_budget: args
            .memory_budget
            .or(c.memory_budget)
            .map_or(pipeline::DEFAULT_MEMORY_BUDGET, |mib| {
                mib as usize * 1024 * 1024
            }),
        baseline,
        cache,
    })
}

pub fn check(args: CheckArgs, io: &mut Io, frontend: &dyn Frontend) -> Result<u8, Fatal> {
    let (roots, stdin) = scanned(&args, io)?;
    // The configuration is found, and git runs, from the closest existing
    // directory of the first scanned path or of the stdin file's place.
    let first = roots.first().or(stdin.as_ref().map(|(r, _)| r));
    let home = first.map_or(io.cwd.clone(), |r| existing_dir(&r.abs));
    let mut s = settings(&args, &home, io)?;
    if args.statistics && matches!(s.format, Format::Sarif | Format::Github) {
        return Err("--statistics works with --format text, concise or json only".into());
    }
    let rules = selection::enabled_rules(s.select.as_deref(), &s.ignore);
    // The baseline and the changed lines are read before the scan: a
    // missing file or a bad revision should not cost a whole scan to find.
    let baseline = BaselineMode::new(&args, &s, io)?;
    let changed = match &args.changed_since {
        Some(rev) => Some(filter::changed::ChangedLines::since(rev, &home)?),
        None => None,
    };
    let scope_roots: Vec<PathBuf> = roots
        .iter()
        .chain(stdin.as_ref().map(|(root, _)| root))
        .map(|r| walk::normalize_lexically(&r.abs))
        .collect();
    let scope_rules: Vec<&'static str> = rules.iter().map(|r| r.meta().id).collect();
    if let Some(ran) = &mut s.filter.unused_check {
        ran.clone_from(&scope_rules);
    }
    let scope = filter::baseline::Scope {
        roots: &scope_roots,
        rules: &scope_rules,
    };
    // Everything besides a file's bytes that its first results depend on.
    let cache = s.cache.as_ref().map(|place| {
        let ids: Vec<&str> = rules.iter().map(|r| r.meta().id).collect();
        let settings = format!(
            "{}\n{ids:?}\n{:?}\n{:?}\n{}",
            frontend.name(),
            s.knowledge,
            s.filter,
            s.include_generated
        );
        crate::cache::Cache::open(&place.dir, crate::cache::key(&settings), !place.chosen)
    });
    let opts = pipeline::ScanOptions {
        roots,
        cwd: io.cwd.clone(),
        exclude: s.exclude,
        threads: s.threads,
        rules,
        knowledge: s.knowledge,
        filter: s.filter,
        include_generated: s.include_generated,
        file_timeout: s.file_timeout,
        memory_budget: s.memory_budget,
        progress: io.progress && !args.quiet,
        stdin,
        cache,
    };
    let mut report = pipeline::scan(opts, frontend)?;
    match &baseline {
        BaselineMode::Off => {}
        BaselineMode::Apply(b) => {
            let applied = b.apply(&mut report, &io.cwd, &scope);
            report.summary.baselined = applied.hidden;
            report.summary.baseline_stale = applied.stale;
        }
        BaselineMode::Write(w) => {
            // (`--changed-since` cannot be given with `--write-baseline`.)
            let notices = s.format.is_human() && !args.quiet;
            return w.finish(&report, &scope, notices, io);
        }
    }
    if let Some(changed) = &changed {
        report.summary.unchanged = changed.apply(&mut report, &io.cwd);
    }
    // Colors only on a terminal, never in a file.
    let color = io.color && args.output_file.is_none();
    let rendered = match (s.format, args.statistics) {
        (Format::Text, false) => report::text::render(&report, color, args.quiet),
        (Format::Concise, false) => report::concise::render(&report, args.quiet),
        (Format::Text | Format::Concise, true) => {
            report::statistics::render_text(&report, args.quiet)
        }
        (Format::Json, false) => report::json::render(&report),
        (Format::Json, true) => report::json::render_statistics(&report),
        (Format::Sarif, _) => report::sarif::render(&report),
        (Format::Github, _) => report::github::render(&report),
    };
    write_notices(&report, s.format.is_human() && !args.quiet, io);
    match &args.output_file {
        Some(p) => std::fs::write(absolute(&io.cwd, p), &rendered)
            .map_err(|e| format!("cannot write the report to {}: {e}", p.display()))?,
        None => write_out(io, &rendered)?,
    }
    Ok(exit_code(&report, s.fail_on))
}

/// The paths to scan (the current directory by default), checked to
/// exist, and the file given on stdin, if any. `-` among the paths names
/// stdin, as for other linters; its name comes from `--stdin-filename`.
fn scanned(args: &CheckArgs, io: &mut Io) -> Result<(Vec<walk::Root>, Option<StdinFile>), Fatal> {
    let dash = Path::new("-");
    if args.paths.iter().any(|p| p == dash) && args.stdin_filename.is_none() {
        return Err(
            "`-` reads the code from stdin and needs `--stdin-filename PATH` (the language and the place of the file come from its name)"
                .into(),
        );
    }
    let stdin = match &args.stdin_filename {
        Some(name) => Some(read_stdin_file(name, io)?),
        None => None,
    };
    let mut given: Vec<&Path> = args
        .paths
        .iter()
        .map(PathBuf::as_path)
        .filter(|p| *p != dash)
        .collect();
    // With `--stdin-filename` and no paths, only that file is analyzed.
    if given.is_empty() && stdin.is_none() {
        given.push(Path::new("."));
    }
    let mut roots = Vec::new();
    for p in given {
        let abs = absolute(&io.cwd, p);
        if std::fs::metadata(&abs).is_err() {
            return Err(format!("path does not exist: {}", p.display()));
        }
        roots.push(walk::Root {
            given: p.to_path_buf(),
            abs,
        });
    }
    Ok((roots, stdin))
}

/// `--stdin-filename`: the file's name as a root, and the bytes of stdin.
type StdinFile = (walk::Root, std::sync::Arc<[u8]>);

/// `--stdin-filename NAME`: the name as a root, and the bytes of stdin.
fn read_stdin_file(name: &Path, io: &mut Io) -> Result<StdinFile, Fatal> {
    if walk::language_of(name).is_none() {
        return Err(format!(
            "--stdin-filename {}: not a Python, JavaScript, TypeScript, Go or Rust file name",
            name.display()
        ));
    }
    let mut bytes = Vec::new();
    // Past the size limit the file is skipped as too large, as on disk.
    io.stdin
        .take(walk::MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    let root = walk::Root {
        given: name.to_path_buf(),
        abs: absolute(&io.cwd, name),
    };
    Ok((root, bytes.into()))
}

/// The closest existing directory at or above `p`.
fn existing_dir(p: &Path) -> PathBuf {
    p.ancestors()
        .find(|a| a.is_dir())
        .unwrap_or(Path::new("/"))
        .to_path_buf()
}

/// What `check` does with a baseline file.
enum BaselineMode {
    Off,
    Apply(filter::baseline::Baseline),
    Write(BaselineWrite),
}

/// `--write-baseline`: the file (absolute, and as shown) and its current
/// content (empty when it does not exist yet).
struct BaselineWrite {
    old: filter::baseline::Baseline,
    file: PathBuf,
    shown: PathBuf,
}

impl BaselineMode {
    fn new(args: &CheckArgs, s: &Settings, io: &Io) -> Result<BaselineMode, Fatal> {
        use filter::baseline::Baseline;
        let Some(target) = &args.write_baseline else {
            return Ok(match &s.baseline {
                Some((abs, shown)) => BaselineMode::Apply(Baseline::read(abs, shown)?),
                None => BaselineMode::Off,
            });
        };
        let (file, shown) = match (target, &s.baseline) {
            (Some(p), _) => (absolute(&io.cwd, p), p.clone()),
            (None, Some(b)) => b.clone(),
            (None, None) => {
                return Err(
                    "--write-baseline needs a file name (or `baseline` in the configuration)"
                        .into(),
                );
            }
        };
        if std::fs::metadata(&file).is_ok_and(|m| m.is_dir()) {
            return Err(format!(
                "--write-baseline: {} is a directory",
                shown.display()
            ));
        }
        // An existing file must be a baseline: it is about to be replaced,
        // and its entries outside this scan are kept.
        let old = if file.exists() {
            Baseline::read(&file, &shown).map_err(|e| format!("{e}; not overwritten"))?
        } else {
            Baseline::empty(&file)
        };
        Ok(BaselineMode::Write(BaselineWrite { old, file, shown }))
    }
}

impl BaselineWrite {
    /// Records the scan's findings instead of reporting them. Exit 0, or 2
    /// when some file could not be analyzed (its findings are then missing
    /// from the baseline).
    fn finish(
        &self,
        report: &ScanReport,
        scope: &filter::baseline::Scope,
        notices: bool,
        io: &mut Io,
    ) -> Result<u8, Fatal> {
        let (file, shown) = (&self.file, &self.shown);
        let new = self.old.rewritten(report, &io.cwd, scope);
        new.write(file, shown)?;
        write_notices(report, notices, io);
        let kept = new.entries.len() - report.findings.len();
        let kept = if kept > 0 {
            format!(" ({kept} kept from paths or rules outside this scan)")
        } else {
            String::new()
        };
        let _ = writeln!(
            io.stderr,
            "wrote {}: {} recorded{kept}",
            shown.display(),
            match report.findings.len() {
                1 => "1 finding".to_string(),
                n => format!("{n} findings"),
            }
        );
        if report.summary.internal_errors() > 0 {
            return Ok(EXIT_ERROR);
        }
        Ok(EXIT_OK)
    }
}

/// The text report's notices on stderr (`all`), or else only the internal
/// errors, which are never silent whatever the format.
fn write_notices(report: &ScanReport, all: bool, io: &mut Io) {
    if all {
        let notices = report::text::notices(report);
        let _ = io.stderr.write_all(notices.as_bytes());
    } else {
        for p in report
            .summary
            .problems
            .iter()
            .filter(|p| p.kind == walk::ProblemKind::Internal)
        {
            let _ = writeln!(io.stderr, "error: {}: {}", p.path, p.message);
        }
    }
}

/// 2 on internal errors, 1 when a finding is at or above `fail_on`, else 0.
pub fn exit_code(report: &ScanReport, fail_on: Severity) -> u8 {
    if report.summary.internal_errors() > 0 {
        EXIT_ERROR
    } else if report.findings.iter().any(|f| f.severity >= fail_on) {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    }
}
