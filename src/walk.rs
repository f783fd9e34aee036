//! Finding the files to scan, and reading them safely.
//!
//! The walk honors `.gitignore`, `.ignore` and `.git/info/exclude` (also
//! outside a git repository), skips hidden files and a few dependency and
//! cache folders, applies `--exclude`, and never follows symbolic links (a
//! link cannot lead the scan out of the tree, and a link loop cannot hang
//! it). Reading checks the file type from metadata before opening (a FIFO
//! would block `open`), enforces the size limits, and tells binaries,
//! minified bundles, vanished files and invalid UTF-8 apart; each such file
//! is reported with a reason, never silently dropped.

use ignore::overrides::OverrideBuilder;
use ignore::{WalkBuilder, WalkState};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use unsnarl_model::Language;

/// Files larger than this are not read (reported as `too-large`). Hand
/// written source is far below it; above it is a bundle, a vendored blob or
/// generated code, and parsing it would dominate the run.
pub const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;
/// A file of more than [`MINIFIED_MIN_BYTES`] with a line longer than this
/// is treated as minified (reported as `minified`).
pub const MINIFIED_LINE_BYTES: usize = 20_000;
pub const MINIFIED_MIN_BYTES: usize = 100 * 1024;
/// A file whose lines average more than this is minified or packed (a
/// bundler's chunk, a wasm or HTML blob in a string), whatever its size:
/// the most line-heavy hand-written sources of the benchmark corpora
/// average under 500 bytes a line, and findings on a chunk of bundled code
/// at line 1, column 9,000 help nobody.
pub const MINIFIED_AVERAGE_LINE_BYTES: usize = 1_000;
/// A NUL byte in this many leading bytes makes a file binary.
pub const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// Folders never scanned: installed dependencies and caches. (`.git` and
/// other hidden folders are skipped as hidden files.)
pub const DEFAULT_EXCLUDES: &[&str] = &["node_modules/", "__pycache__/", "venv/", "site-packages/"];

/// Why a file was not analyzed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SkipReason {
    TooLarge,
    Minified,
    Binary,
    NotRegular,
    Symlink,
    Vanished,
    Generated,
    Unsupported,
    /// The analysis ran past the per-file time budget (`--file-timeout`).
    Timeout,
}

impl SkipReason {
    pub fn slug(self) -> &'static str {
        match self {
            SkipReason::TooLarge => "too-large",
            SkipReason::Minified => "minified",
            SkipReason::Binary => "binary",
            SkipReason::NotRegular => "not-a-regular-file",
            SkipReason::Symlink => "symlink",
            SkipReason::Vanished => "vanished",
            SkipReason::Generated => "generated",
            SkipReason::Unsupported => "unsupported-extension",
            SkipReason::Timeout => "timeout",
        }
    }

    /// A phrase for notices and the text summary.
    pub fn describe(self) -> String {
        match self {
            SkipReason::TooLarge => format!("larger than {} MiB", MAX_FILE_BYTES / (1024 * 1024)),
            SkipReason::Minified => format!(
                "minified (a .min.js name, lines averaging over {MINIFIED_AVERAGE_LINE_BYTES} bytes, or a line longer than {MINIFIED_LINE_BYTES} bytes in a file over {} KiB)",
                MINIFIED_MIN_BYTES / 1024
            ),
            SkipReason::Binary => "binary (NUL byte in the first 8 KiB)".into(),
            SkipReason::NotRegular => "not a regular file (FIFO, socket or device)".into(),
            SkipReason::Symlink => "symbolic link (not followed)".into(),
            SkipReason::Vanished => "removed before it could be read".into(),
            SkipReason::Generated => "generated code (--include-generated to analyze it)".into(),
            SkipReason::Unsupported => {
                "not a Python, JavaScript, TypeScript, Go or Rust file".into()
            }
            SkipReason::Timeout => {
                "analysis abandoned: it took longer than the per-file time budget (--file-timeout); findings in this file are not reported".into()
            }
        }
    }
}

/// A file to analyze.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The path shown in reports: relative to the current directory when
    /// the file is under it, else as given; `/` separators.
    pub display: String,
    /// Where to read it (absolute).
    pub abs: PathBuf,
    /// The path relative to its scan root (`/` separators), for module names.
    pub rel: String,
    pub lang: Language,
    /// The content given on stdin (`--stdin-filename`) instead of the
    /// file's on disk.
    pub stdin: Option<std::sync::Arc<[u8]>>,
}

/// A problem found while walking or reading: not a finding, not a skip.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileProblem {
    pub path: String,
    pub kind: ProblemKind,
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ProblemKind {
    /// Permissions, I/O errors.
    Unreadable,
    InvalidUtf8,
    /// A panic in the analysis (a bug in unsnarl).
    Internal,
}

impl ProblemKind {
    pub fn slug(self) -> &'static str {
        match self {
            ProblemKind::Unreadable => "unreadable",
            ProblemKind::InvalidUtf8 => "invalid-utf8",
            ProblemKind::Internal => "internal-error",
        }
    }
}

#[derive(Debug, Default)]
pub struct WalkResult {
    pub files: Vec<SourceFile>,
    pub skipped: Vec<(String, SkipReason)>,
    pub problems: Vec<FileProblem>,
}

/// A root to scan: as given on the command line, and resolved.
#[derive(Clone, Debug)]
pub struct Root {
    pub given: PathBuf,
    pub abs: PathBuf,
}

/// Validates an `--exclude` glob (gitignore syntax).
pub fn check_glob(glob: &str) -> Result<(), String> {
    OverrideBuilder::new("/")
        .add(&format!("!{glob}"))
        .map(|_| ())
        .map_err(|e| format!("not a valid glob: {e}"))
}

/// Walks every root. `cwd` is absolute; roots must exist (the caller checks
/// and reports missing ones as usage errors).
pub fn walk(
    roots: &[Root],
    cwd: &Path,
    exclude: &[String],
    threads: usize,
) -> Result<WalkResult, String> {
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let mut out = WalkResult::default();
    let mut seen = std::collections::HashSet::new();
    for root in roots {
        let md =
            std::fs::metadata(&root.abs).map_err(|e| format!("{}: {e}", root.given.display()))?;
        let abs_root = std::fs::canonicalize(&root.abs).unwrap_or_else(|_| root.abs.clone());
        if !md.is_dir() {
            // An explicitly named file is scanned whatever the ignore files
            // say: the user asked for it.
            let display = display_path(&root.given, Path::new(""), &abs_root, &cwd);
            if !seen.insert(abs_root.clone()) {
                continue;
            }
            match named_file(root, abs_root, display) {
                Ok(f) => out.files.push(f),
                Err(skip) => out.skipped.push(skip),
            }
            continue;
        }
        let mut overrides = OverrideBuilder::new(&abs_root);
        for g in DEFAULT_EXCLUDES
            .iter()
            .copied()
            .chain(exclude.iter().map(String::as_str))
        {
            overrides
                .add(&format!("!{g}"))
                .map_err(|e| format!("--exclude {g}: not a valid glob: {e}"))?;
        }
        let overrides = overrides.build().map_err(|e| format!("--exclude: {e}"))?;
        let mut b = WalkBuilder::new(&abs_root);
        b.follow_links(false)
            .require_git(false)
            .hidden(true)
            .overrides(overrides)
            .threads(threads);
        let found: Arc<Mutex<Vec<Entry>>> = Arc::default();
        // The walker reads a folder's ignore files as it enters it, opening
        // whatever bears their names: a folder whose ignore file is a FIFO
        // (which would block forever) or a device is not entered.
        let root_hostile = abs_root
            .ancestors()
            .find_map(|d| unsafe_ignore_file(d).map(|why| (d.to_path_buf(), why)));
        if let Some((dir, why)) = root_hostile {
            b.git_ignore(false)
                .git_exclude(false)
                .ignore(false)
                .parents(false);
            found.lock().unwrap_or_else(|p| p.into_inner()).push(Entry {
                path: abs_root.clone(),
                kind: EntryKind::Problem(format!(
                    "ignore files not honored: {}: {why}",
                    dir.display()
                )),
            });
        }
        let pruned = Arc::clone(&found);
        b.filter_entry(move |e| {
            if !e.file_type().is_some_and(|t| t.is_dir()) {
                return true;
            }
            match unsafe_ignore_file(e.path()) {
                None => true,
                Some(why) => {
                    pruned.lock().unwrap_or_else(|p| p.into_inner()).push(Entry {
                        path: e.path().to_path_buf(),
                        kind: EntryKind::Problem(format!(
                            "folder not scanned: {why} (ignore files are read before a folder's files)"
                        )),
                    });
                    false
                }
            }
        });
        b.build_parallel().run(|| {
            let found = &found;
            Box::new(move |res| {
                let e = classify(res);
                if let Some(e) = e {
                    found.lock().unwrap_or_else(|p| p.into_inner()).push(e);
                }
                WalkState::Continue
            })
        });
        let mut found = std::mem::take(&mut *found.lock().unwrap_or_else(|p| p.into_inner()));
        // Only for a fixed order of the parallel walk's finds (the lists are
        // sorted for the report below): comparing the paths as bytes is a
        // memcmp, where `Path`'s component-wise order cost 5% of a warm
        // run's instructions.
        found.sort_by(|a, b| a.path.as_os_str().cmp(b.path.as_os_str()));
        for e in found {
            let rel = e
                .path
                .strip_prefix(&abs_root)
                .unwrap_or(&e.path)
                .to_path_buf();
            let display = display_path(&root.given, &rel, &abs_root, &cwd);
            match e.kind {
                EntryKind::Source(Language::Go) if outside_go_packages(&rel) => {}
                EntryKind::Source(lang) => {
                    if seen.insert(e.path.clone()) {
                        out.files.push(SourceFile {
                            display,
                            abs: e.path,
                            rel: slash_path(&rel),
                            lang,
                            stdin: None,
                        });
                    }
                }
                EntryKind::Skip(reason) => out.skipped.push((display, reason)),
                EntryKind::Problem(message) => out.problems.push(FileProblem {
                    path: display,
                    kind: ProblemKind::Unreadable,
                    message,
                }),
            }
        }
    }
    out.files
        .sort_by(|a, b| a.display.cmp(&b.display).then_with(|| a.abs.cmp(&b.abs)));
    out.skipped.sort();
    out.problems.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// Whether the go tool leaves a Go file out of every package: it sits in a
/// folder named `testdata` (inputs of tests, often broken or buggy on
/// purpose), or its name or a folder's starts with `_` (examples and tools
/// kept out of the module; hidden names are skipped for every language).
/// `rel` is relative to the scanned root, so naming such a folder on the
/// command line still scans it.
fn outside_go_packages(rel: &Path) -> bool {
    let mut names = rel.components().filter_map(|c| match c {
        Component::Normal(name) => Some(name.as_encoded_bytes()),
        _ => None,
    });
    let file = names.next_back();
    file.is_some_and(|f| f.starts_with(b"_"))
        || names.any(|dir| dir == b"testdata" || dir.starts_with(b"_"))
}

struct Entry {
    path: PathBuf,
    kind: EntryKind,
}

enum EntryKind {
    Source(Language),
    Skip(SkipReason),
    Problem(String),
}

fn classify(res: Result<ignore::DirEntry, ignore::Error>) -> Option<Entry> {
    let entry = match res {
        Ok(e) => e,
        Err(err) => {
            let path = error_path(&err)?;
            let vanished = err
                .io_error()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::NotFound);
            let kind = if vanished {
                EntryKind::Skip(SkipReason::Vanished)
            } else {
                EntryKind::Problem(error_message(&err))
            };
            return Some(Entry { path, kind });
        }
    };
    let ft = entry.file_type()?;
    if ft.is_dir() {
        return None;
    }
    let lang = language_of(entry.path())?;
    let kind = if ft.is_symlink() {
        EntryKind::Skip(SkipReason::Symlink)
    } else if ft.is_file() {
        EntryKind::Source(lang)
    } else {
        EntryKind::Skip(SkipReason::NotRegular)
    };
    Some(Entry {
        path: entry.into_path(),
        kind,
    })
}

/// Ignore files larger than this are not read.
const MAX_IGNORE_FILE_BYTES: u64 = MAX_FILE_BYTES;

/// Why the ignore files the walker would read on entering `dir` are unsafe
/// to open (`None`: absent, or regular files of sane size): `.gitignore`,
/// `.ignore`, `.git/info/exclude`, and for a `.git` file (worktrees,
/// submodules) the `commondir` and `info/exclude` of the folder it names.
fn unsafe_ignore_file(dir: &Path) -> Option<String> {
    let shown = |p: &Path| slash_path(p.strip_prefix(dir).unwrap_or(p));
    let check = |p: &Path| -> Result<bool, String> {
        match std::fs::metadata(p) {
            Err(_) => Ok(false),
            Ok(md) if md.is_dir() => Ok(false),
            Ok(md) if !md.is_file() => Err(format!(
                "{} is not a regular file (FIFO, socket or device)",
                shown(p)
            )),
            Ok(md) if md.len() > MAX_IGNORE_FILE_BYTES => Err(format!(
                "{} is larger than {} MiB",
                shown(p),
                MAX_IGNORE_FILE_BYTES / (1024 * 1024)
            )),
            Ok(_) => Ok(true),
        }
    };
    fn first_line(p: &Path) -> Option<String> {
        let text = std::fs::read(p).ok()?;
        let line = text.split(|&b| b == b'\n').next()?;
        Some(
            String::from_utf8_lossy(line)
                .trim_end_matches('\r')
                .to_string(),
        )
    }
    let run = || -> Result<(), String> {
        check(&dir.join(".gitignore"))?;
        check(&dir.join(".ignore"))?;
        let git = dir.join(".git");
        let git_type = std::fs::metadata(&git).map(|m| m.file_type());
        if git_type.is_ok_and(|t| !t.is_dir() && !t.is_file()) {
            // The walker reads a `.git` only when it is a file or a folder.
            return Ok(());
        }
        if !check(&git)? {
            // A folder (or nothing): its exclude file.
            check(&git.join("info").join("exclude"))?;
            return Ok(());
        }
        // A `.git` file: `gitdir: <path>`, whose `commondir` names the
        // folder holding `info/exclude`.
        let Some(gitdir) =
            first_line(&git).and_then(|l| l.strip_prefix("gitdir: ").map(PathBuf::from))
        else {
            return Ok(());
        };
        check(&gitdir.join("info").join("exclude"))?;
        let commondir = gitdir.join("commondir");
        if check(&commondir)?
            && let Some(c) = first_line(&commondir)
        {
            let c = if c.starts_with('.') {
                gitdir.join(c)
            } else {
                PathBuf::from(c)
            };
            check(&c.join("info").join("exclude"))?;
        }
        Ok(())
    };
    run().err()
}

fn error_path(err: &ignore::Error) -> Option<PathBuf> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Loop { child, .. } => Some(child.clone()),
        _ => None,
    }
}

fn error_message(err: &ignore::Error) -> String {
    match err {
        ignore::Error::WithPath { err, .. } => error_message(err),
        ignore::Error::WithDepth { err, .. } => error_message(err),
        other => other.to_string(),
    }
}

/// The language of a path from its extension.
pub fn language_of(path: &Path) -> Option<Language> {
    Language::from_extension(path.extension()?.to_str()?)
}

/// Joins path components with `/`.
pub fn slash_path(p: &Path) -> String {
    let mut s = String::new();
    for c in p.components() {
        let part = match c {
            Component::RootDir => {
                s.push('/');
                continue;
            }
            Component::CurDir => continue,
            Component::Prefix(p) => p.as_os_str().to_string_lossy(),
            Component::ParentDir => "..".into(),
            Component::Normal(n) => n.to_string_lossy(),
        };
        if !s.is_empty() && !s.ends_with('/') {
            s.push('/');
        }
        s.push_str(&part);
    }
    s
}

/// A file named on the command line (`root`, whose real path is
/// `abs_root`), or why it is skipped.
fn named_file(
    root: &Root,
    abs_root: PathBuf,
    display: String,
) -> Result<SourceFile, (String, SkipReason)> {
    // The language comes from the name as given: a link `x.py` to
    // `/dev/zero` is then read, and skipped as a device.
    let Some(lang) = language_of(&root.abs).or_else(|| language_of(&abs_root)) else {
        return Err((display, SkipReason::Unsupported));
    };
    // Module names come from this path: keep the folders when the file is
    // under the current directory (`pkg/mod.py` is `pkg.mod`, as when
    // scanning `.`).
    let rel = if display.starts_with('/') || display.starts_with("../") {
        abs_root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    } else {
        display.clone()
    };
    Ok(SourceFile {
        display,
        abs: abs_root,
        rel,
        lang,
        stdin: None,
    })
}

/// Makes the file `root` (`--stdin-filename`) read `text` instead of the
/// disk: the walked file of that path, or a new one when the walk did not
/// list it (it is not on disk yet, or not under the scanned paths).
/// Explicit, so neither ignore files nor `--exclude` drop it.
pub fn add_stdin_file(
    walked: &mut WalkResult,
    root: &Root,
    cwd: &Path,
    text: std::sync::Arc<[u8]>,
) -> Result<(), String> {
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    // Its real path, as the walk has it; a file not on disk yet by its
    // directory's real path.
    let abs = std::fs::canonicalize(&root.abs).unwrap_or_else(|_| {
        let abs = normalize_lexically(&root.abs);
        match (abs.parent().map(std::fs::canonicalize), abs.file_name()) {
            (Some(Ok(dir)), Some(name)) => dir.join(name),
            _ => abs,
        }
    });
    if let Some(f) = walked.files.iter_mut().find(|f| f.abs == abs) {
        f.stdin = Some(text);
        return Ok(());
    }
    let display = display_path(&root.given, Path::new(""), &abs, &cwd);
    // Skipped on disk (binary, too large...) is not what stdin holds.
    walked.skipped.retain(|(p, _)| *p != display);
    let mut file = named_file(root, abs, display).map_err(|(path, _)| {
        format!(
            "--stdin-filename {path}: not a Python, JavaScript, TypeScript, Go or Rust file name"
        )
    })?;
    file.stdin = Some(text);
    walked.files.push(file);
    walked
        .files
        .sort_by(|a, b| a.display.cmp(&b.display).then_with(|| a.abs.cmp(&b.abs)));
    Ok(())
}

/// Reads a walked file: its stdin content when it has one, else the disk.
pub fn load_source(file: &SourceFile) -> Load {
    match read_source(file) {
        Ok(bytes) => classify_bytes(&file.abs, bytes),
        Err(l) => l,
    }
}

/// A source file's bytes as read, not yet classified (binary, minified,
/// UTF-8): what the results cache hashes, so that a file it knows is not
/// checked again. `Err` is the file's outcome when it cannot be read.
pub fn read_source(file: &SourceFile) -> Result<Vec<u8>, Load> {
    match &file.stdin {
        Some(bytes) => Ok(bytes.to_vec()),
        None => read_bytes(&file.abs),
    }
}

/// `p` with `.` dropped and `..` applied to the component before it,
/// without asking the file system (`/a/b/../c` -> `/a/c`).
pub fn normalize_lexically(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `target` relative to `base` (both absolute and normalized), with `..`
/// where needed; `None` when they share nothing but the root.
pub fn lexical_relative(base: &Path, target: &Path) -> Option<PathBuf> {
    let base: Vec<_> = base.components().collect();
    let target: Vec<_> = target.components().collect();
    let common = base.iter().zip(&target).take_while(|(a, b)| a == b).count();
    if common <= 1 {
        return None;
    }
    let mut rel = PathBuf::new();
    for _ in common..base.len() {
        rel.push("..");
    }
    for c in &target[common..] {
        rel.push(c);
    }
    Some(rel)
}

/// The report path of a file: relative to `cwd` when under it, else the
/// root as given joined with the path inside it.
fn display_path(given: &Path, rel: &Path, abs_root: &Path, cwd: &Path) -> String {
    let abs = abs_root.join(rel);
    if let Ok(under) = abs.strip_prefix(cwd)
        && !under.as_os_str().is_empty()
    {
        return slash_path(under);
    }
    let shown = slash_path(&given.join(rel));
    if shown.is_empty() { ".".into() } else { shown }
}

/// What reading a file gave.
#[derive(Debug)]
pub enum Load {
    Text(String),
    Skip(SkipReason),
    Problem(ProblemKind, String),
}

/// Reads a file, enforcing the limits. Never panics, never blocks on a FIFO.
pub fn load(path: &Path) -> Load {
    match read_bytes(path) {
        Ok(bytes) => classify_bytes(path, bytes),
        Err(l) => l,
    }
}

/// The I/O half of [`load`]: a regular file's bytes, at most one byte more
/// than [`MAX_FILE_BYTES`].
fn read_bytes(path: &Path) -> Result<Vec<u8>, Load> {
    use std::io::ErrorKind;
    let gone = |e: &std::io::Error| e.kind() == ErrorKind::NotFound;
    // The type comes from metadata before `open`: opening a FIFO would block
    // until a writer appears.
    let md = match std::fs::metadata(path) {
        Ok(md) => md,
        Err(e) if gone(&e) => return Err(Load::Skip(SkipReason::Vanished)),
        Err(e) => return Err(Load::Problem(ProblemKind::Unreadable, e.to_string())),
    };
    if !md.is_file() {
        return Err(Load::Skip(SkipReason::NotRegular));
    }
    if md.len() > MAX_FILE_BYTES {
        return Err(Load::Skip(SkipReason::TooLarge));
    }
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if gone(&e) => return Err(Load::Skip(SkipReason::Vanished)),
        Err(e) => return Err(Load::Problem(ProblemKind::Unreadable, e.to_string())),
    };
    // The file may have been swapped between the two calls.
    match file.metadata() {
        Ok(m) if m.is_file() => {}
        Ok(_) => return Err(Load::Skip(SkipReason::NotRegular)),
        Err(e) => return Err(Load::Problem(ProblemKind::Unreadable, e.to_string())),
    }
    let mut bytes = Vec::with_capacity(md.len() as usize);
    // It may also have grown: never read more than the limit allows.
    if let Err(e) = file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes) {
        return Err(Load::Problem(ProblemKind::Unreadable, e.to_string()));
    }
    Ok(bytes)
}

/// The checks on the content of a file, apart from I/O (unit tested).
pub fn classify_bytes(path: &Path, mut bytes: Vec<u8>) -> Load {
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Load::Skip(SkipReason::TooLarge);
    }
    if memchr::memchr(0, &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)]).is_some() {
        return Load::Skip(SkipReason::Binary);
    }
    if is_minified(path, &bytes) {
        return Load::Skip(SkipReason::Minified);
    }
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    match String::from_utf8(bytes) {
        Ok(s) => Load::Text(s),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            Load::Problem(
                ProblemKind::InvalidUtf8,
                format!("not valid UTF-8 (first invalid byte at line {line}, byte offset {at})"),
            )
        }
    }
}

fn is_minified(path: &Path, bytes: &[u8]) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    if [".min.js", ".min.mjs", ".min.cjs"]
        .iter()
        .any(|s| name.ends_with(s))
    {
        return true;
    }
    let big = bytes.len() > MINIFIED_MIN_BYTES;
    // More lines than this and the average is short: a small file need not
    // be read further (a big one still looks for one very long line).
    let enough = bytes.len() / MINIFIED_AVERAGE_LINE_BYTES;
    let (mut start, mut lines) = (0, 0);
    for nl in memchr::memchr_iter(b'\n', bytes).chain(std::iter::once(bytes.len())) {
        if big && nl - start > MINIFIED_LINE_BYTES {
            return true;
        }
        start = nl + 1;
        lines += 1;
        if !big && lines > enough {
            return false;
        }
    }
    bytes.len() / lines > MINIFIED_AVERAGE_LINE_BYTES
}

/// Skipped files grouped by reason, for summaries.
pub fn group_skipped(skipped: &[(String, SkipReason)]) -> BTreeMap<SkipReason, Vec<&str>> {
    let mut m: BTreeMap<SkipReason, Vec<&str>> = BTreeMap::new();
    for (p, r) in skipped {
        m.entry(*r).or_default().push(p);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(name: &str, bytes: &[u8]) -> String {
        match classify_bytes(Path::new(name), bytes.to_vec()) {
            Load::Text(_) => "text".into(),
            Load::Skip(r) => r.slug().into(),
            Load::Problem(k, _) => k.slug().into(),
        }
    }

    #[test]
    fn contents_are_classified() {
        assert_eq!(kind("a.py", b"x = 1\n"), "text");
        assert_eq!(kind("a.py", b""), "text");
        assert_eq!(kind("a.py", b"x\0y"), "binary");
        assert_eq!(kind("a.py", b"x = '\xff'\n"), "invalid-utf8");
        assert_eq!(kind("a.min.js", b"x"), "minified");
        let long = vec![b'a'; MINIFIED_MIN_BYTES + 10];
        assert_eq!(kind("a.js", &long), "minified");
        let mut lines = Vec::new();
        while lines.len() <= MINIFIED_MIN_BYTES {
            lines.extend_from_slice(b"let x = 1;\n");
        }
        assert_eq!(kind("a.js", &lines), "text");
        // Small files: the average line decides, not the longest line.
        let chunk = format!("{}\n", "f(a,b);".repeat(300));
        assert_eq!(kind("chunk.js", chunk.as_bytes()), "minified");
        let data = format!("x = 1\n{}\ny = 2\n", "0".repeat(1_900));
        assert_eq!(kind("data.py", data.as_bytes()), "text");
        // Right at the limit: 2 lines averaging 1,000 bytes, then 1,001.
        let at = |n: usize| format!("{}\n{}", "a".repeat(n), "b".repeat(999));
        assert_eq!(kind("edge.js", at(1_000).as_bytes()), "text");
        assert_eq!(kind("edge.js", at(1_003).as_bytes()), "minified");
        let huge = vec![b'\n'; MAX_FILE_BYTES as usize + 1];
        assert_eq!(kind("a.js", &huge), "too-large");
    }

    #[test]
    fn a_bom_is_dropped() {
        match classify_bytes(Path::new("a.py"), b"\xEF\xBB\xBFx = 1\n".to_vec()) {
            Load::Text(s) => assert_eq!(s, "x = 1\n"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn display_paths_are_relative_to_cwd_or_as_given() {
        let cwd = Path::new("/home/u/proj");
        assert_eq!(
            display_path(
                Path::new("."),
                Path::new("src/a.py"),
                Path::new("/home/u/proj"),
                cwd
            ),
            "src/a.py"
        );
        assert_eq!(
            display_path(
                Path::new("../other"),
                Path::new("b.py"),
                Path::new("/home/u/other"),
                cwd
            ),
            "../other/b.py"
        );
        assert_eq!(
            display_path(
                Path::new("/abs/x.go"),
                Path::new(""),
                Path::new("/abs/x.go"),
                cwd
            ),
            "/abs/x.go"
        );
    }

    #[test]
    fn vanished_and_special_files_are_skipped_not_errors() {
        assert!(matches!(
            load(Path::new("/no/such/file.py")),
            Load::Skip(SkipReason::Vanished)
        ));
        assert!(matches!(
            load(Path::new("/dev/null")),
            Load::Skip(SkipReason::NotRegular)
        ));
        assert!(matches!(
            load(Path::new("/")),
            Load::Skip(SkipReason::NotRegular)
        ));
    }

    #[test]
    fn go_files_outside_packages_are_recognized() {
        for skipped in [
            "testdata/race.go",
            "a/_examples/main.go",
            "_tools/gen.go",
            "_x.go",
        ] {
            assert!(outside_go_packages(Path::new(skipped)), "{skipped}");
        }
        for kept in [
            "main.go",
            "a/b/c.go",
            "a/my_testdata/x.go",
            "internal/x_test.go",
            "x_.go",
        ] {
            assert!(!outside_go_packages(Path::new(kept)), "{kept}");
        }
    }

    #[test]
    fn globs_are_validated() {
        assert!(check_glob("vendor/**").is_ok());
        assert!(check_glob("a[").is_err());
    }
}
