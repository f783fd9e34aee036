//! The results cache: what stage 1 of the pipeline learned of each file
//! (its function summaries, its findings and notices, the questions its
//! rules asked of the one-file index), kept between runs so that a file
//! whose bytes did not change is neither parsed nor lowered again.
//!
//! Stage 1's results depend on the file alone: findings that depend on
//! other files are settled afterwards by the project index, which a run
//! always builds from every file's summaries, and a file whose recorded
//! questions the project index answers differently runs its rules again
//! from its source, as in a run without the cache. Those stage-3 results
//! are kept too, with what the project index told the rules
//! ([`LastingLog`]: functions named by their file's path and content hash,
//! not by the scan's file numbers), and stand in a later run whose project
//! index gives the same answers. So a run with the cache reports what a run
//! without it reports.
//!
//! By default each project (the configuration file's directory, else the
//! current one) has a directory in the user's cache directory, so nothing
//! is written into the project; `--cache-dir` and the like choose another.
//! In it, one file per set of settings (`<key>.bin`): the key hashes everything
//! else stage 1 depends on (this binary, the front end, the rules that run,
//! the knowledge tables with the user's additions, the filters, whether
//! generated files are read), so changing any of them starts a fresh file.
//! Entries are found by absolute path and used only when the content hash,
//! the path shown in reports and the path relative to the scan root all
//! match. The file is replaced atomically (written beside, then renamed);
//! one that cannot be read or decoded is ignored, and one that cannot be
//! written costs the next run its speed, never its results.

use crate::report::{Excerpt, FindingOut, Location, Notice, RelatedOut, SyntaxErrorOut};
use crate::walk::SourceFile;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use unsnarl_model::{Category, Language, Severity};
use unsnarl_rules::{FileSummaries, LastingLog, QueryLog, find_rule};

/// The name of a project's cache directory inside the user's cache
/// directory: the project directory's name, for people looking, and a hash
/// of its whole path.
pub fn project_dir_name(project: &Path) -> String {
    let mut h = std::hash::DefaultHasher::new();
    project.hash(&mut h);
    let name: String = project
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    format!("{name}-{:016x}", h.finish())
}

/// Bumped when the layout of a cache file changes.
const FORMAT: u32 = 8;

/// What a cached file gives back to the pipeline: stage 1's results.
pub struct Stage1Results {
    pub syntax: Option<SyntaxErrorOut>,
    pub summaries: FileSummaries,
    pub findings: Vec<FindingOut>,
    pub notices: Vec<Notice>,
    pub suppressed: usize,
    pub queries: QueryLog,
    /// The results of the file's last run against a project index, if it
    /// had one, with what that index told its rules.
    /// Boxed: most files have none.
    pub lasting: Option<Box<LastingResults>>,
}

/// A file's results from a run of its rules against the project index
/// (stage 3), and what the index told them ([`LastingLog`]): they stand
/// in a later run whose project index gives the same answers.
pub struct LastingResults {
    pub findings: Vec<FindingOut>,
    pub notices: Vec<Notice>,
    pub suppressed: usize,
    pub log: LastingLog,
}

/// What the cache knows of a file.
pub enum Cached {
    /// It is generated (and generated files are skipped).
    Generated,
    /// Boxed: the results are large beside `Generated`.
    Results(Box<Stage1Results>),
}

/// Stage 1's results as the pipeline holds them, to be stored.
#[derive(Clone, Copy)]
pub struct Stage1View<'a> {
    pub syntax: Option<&'a SyntaxErrorOut>,
    pub summaries: &'a FileSummaries,
    pub findings: &'a [FindingOut],
    pub notices: &'a [Notice],
    pub suppressed: usize,
    pub queries: &'a QueryLog,
}

/// The cache of one run: the entries read at the start, and those made
/// during the run.
pub struct Cache {
    dir: PathBuf,
    /// Failing to write is not reported (the place was not chosen by the
    /// user: a read-only home should not warn on every run).
    quiet: bool,
    file: PathBuf,
    key: u64,
    /// The entries read at the start: read on a thread of their own from
    /// [`Cache::open`], beside the walk of the scanned directories, and
    /// waited for on first use.
    old: OnceLock<Entries>,
    loading: Mutex<Option<std::thread::JoinHandle<Entries>>>,
    fresh: Mutex<Vec<(PathBuf, Entry)>>,
    /// Stage-3 results made during the run: path, content hash, encoded
    /// [`StoredLasting`].
    lasting: Mutex<Vec<(PathBuf, u64, Vec<u8>)>>,
}

/// Where a source file's entry applies, and its stage-1 results, encoded
/// (decoded only when used; written back as they are when not replaced).
#[derive(Serialize, Deserialize)]
struct Entry {
    /// Skipped as generated: nothing else is kept.
    generated: bool,
    display: String,
    rel: String,
    lang: Language,
    len: u64,
    hash: u64,
    /// One byte string: decoded as a sequence it cost a call per byte.
    #[serde(with = "serde_bytes")]
    results: Vec<u8>,
    /// A hash of `results`: a damaged entry is not decoded into summaries
    /// the project index would trust.
    check: u64,
    /// The file's stage-3 results ([`StoredLasting`]), empty if it has
    /// none, and their hash.
    #[serde(with = "serde_bytes")]
    lasting: Vec<u8>,
    lasting_check: u64,
}

/// A cache file's entries by source path, each with whether this run
/// used it.
type Entries = HashMap<PathBuf, (Entry, AtomicBool)>;

/// The entries of the cache file at `path`, if it holds settings `key`.
fn read_entries(path: &Path, key: u64) -> Entries {
    std::fs::read(path)
        .ok()
        .and_then(|bytes| postcard::from_bytes::<CacheFile>(&bytes).ok())
        .filter(|c| c.format == FORMAT && c.key == key)
        .map(|c| {
            c.entries
                .into_iter()
                .map(|(p, e)| (p, (e, AtomicBool::new(false))))
                .collect()
        })
        .unwrap_or_default()
}

#[derive(Serialize, Deserialize)]
struct CacheFile {
    format: u32,
    key: u64,
    entries: Vec<(PathBuf, Entry)>,
}

/// [`Stage1Results`] as stored: rules by id (the report holds them as
/// static strings, found again on reading).
#[derive(Serialize, Deserialize)]
struct Stored {
    syntax: Option<StoredSyntax>,
    summaries: FileSummaries,
    findings: Vec<StoredFinding>,
    notices: Vec<(u32, String)>,
    suppressed: u64,
    queries: QueryLog,
}

/// [`LastingResults`] as stored.
#[derive(Serialize, Deserialize)]
struct StoredLasting {
    findings: Vec<StoredFinding>,
    notices: Vec<(u32, String)>,
    suppressed: u64,
    log: LastingLog,
}

/// [`Stored`] made from borrowed parts: the same fields in the same order,
/// so that it is read back as a [`Stored`] (the format is positional).
#[derive(Serialize)]
struct StoredRef<'a> {
    syntax: Option<StoredSyntax>,
    summaries: &'a FileSummaries,
    findings: Vec<StoredFinding>,
    notices: Vec<(u32, String)>,
    suppressed: u64,
    queries: &'a QueryLog,
}

#[derive(Serialize, Deserialize)]
struct StoredSyntax {
    line: u32,
    column: u32,
    message: String,
    count: u64,
}

#[derive(Serialize, Deserialize)]
struct StoredFinding {
    rule: String,
    category: Category,
    severity: Severity,
    at: [u32; 4],
    message: String,
    fix: String,
    /// Related locations: the path when it is another file's.
    related: Vec<(Option<String>, [u32; 4], String)>,
    fingerprint: String,
    content_hash: String,
    excerpt: (u32, String, u64, u64),
}

/// The key of a cache file: everything besides a file's own bytes and paths
/// that stage 1's results depend on, as text (`settings`), with this
/// binary's identity.
pub fn key(settings: &str) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    FORMAT.hash(&mut h);
    env!("CARGO_PKG_VERSION").hash(&mut h);
    // The same version number covers many builds while unsnarl is
    // developed: the executable's size and time tell them apart.
    if let Some(meta) = std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::metadata(p).ok())
    {
        meta.len().hash(&mut h);
        if let Ok(t) = meta.modified()
            && let Ok(d) = t.duration_since(std::time::UNIX_EPOCH)
        {
            d.as_nanos().hash(&mut h);
        }
    }
    settings.hash(&mut h);
    h.finish()
}

/// xxh3: every scanned file is hashed on every run, and at 10 GB/s and
/// more it costs next to nothing beside reading the file (SipHash, std's
/// default, took more CPU than the rest of a warm run's first stage).
pub fn bytes_hash(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

/// A file's identity across runs for [`LastingLog`]s: what its summaries
/// and the locations in it depend on (the paths it is shown and resolved
/// by, and its content).
pub fn file_identity(f: &SourceFile, hash: u64) -> u64 {
    let mut bytes = Vec::with_capacity(f.display.len() + f.rel.len() + 10);
    bytes.extend_from_slice(f.display.as_bytes());
    bytes.push(0);
    bytes.extend_from_slice(f.rel.as_bytes());
    bytes.push(0);
    bytes.push(f.lang as u8);
    bytes.extend_from_slice(&hash.to_le_bytes());
    bytes_hash(&bytes)
}

impl Cache {
    /// The cache in `dir` for settings `key`; empty when there is none yet
    /// or it cannot be read.
    pub fn open(dir: &Path, key: u64, quiet: bool) -> Cache {
        let file = dir.join(format!("{key:016x}.bin"));
        let old = OnceLock::new();
        let path = file.clone();
        let loading = match std::thread::Builder::new()
            .name("unsnarl-cache".into())
            .spawn(move || read_entries(&path, key))
        {
            Ok(handle) => Some(handle),
            Err(_) => {
                let _ = old.set(read_entries(&file, key));
                None
            }
        };
        Cache {
            dir: dir.to_path_buf(),
            quiet,
            file,
            key,
            old,
            loading: Mutex::new(loading),
            fresh: Mutex::new(Vec::new()),
            lasting: Mutex::new(Vec::new()),
        }
    }

    fn old(&self) -> &Entries {
        self.old.get_or_init(|| {
            let handle = self
                .loading
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            // A reading thread that panicked leaves an empty cache.
            handle.and_then(|h| h.join().ok()).unwrap_or_default()
        })
    }

    /// What the cache knows of a file whose bytes, as read, are `len` long
    /// and hash to `hash` ([`bytes_hash`]), if anything.
    pub fn get(&self, f: &SourceFile, len: usize, hash: u64) -> Option<Cached> {
        let (e, used) = self.old().get(&f.abs)?;
        if e.len != len as u64
            || e.hash != hash
            || e.lang != f.lang
            || e.display != f.display
            || e.rel != f.rel
        {
            return None;
        }
        if bytes_hash(&e.results) != e.check {
            return None;
        }
        let r = if e.generated {
            Cached::Generated
        } else {
            let stored: Stored = postcard::from_bytes(&e.results).ok()?;
            let mut r = stored.restore(&f.display)?;
            // Damaged or from rules this build lacks: only this part is lost.
            r.lasting = (!e.lasting.is_empty() && bytes_hash(&e.lasting) == e.lasting_check)
                .then(|| postcard::from_bytes::<StoredLasting>(&e.lasting).ok())
                .flatten()
                .and_then(|l| l.restore(&f.display))
                .map(Box::new);
            Cached::Results(Box::new(r))
        };
        used.store(true, Ordering::Relaxed);
        Some(r)
    }

    /// Records stage 1's results for a file whose bytes, as read, are `len` long
    /// and hash to `hash` (`None`: the file is generated, and was skipped).
    pub fn put(&self, f: &SourceFile, len: usize, hash: u64, r: Option<Stage1View>) {
        let results = match r {
            Some(r) => match postcard::to_stdvec(&StoredRef::of(r)) {
                Ok(bytes) => bytes,
                Err(_) => return,
            },
            None => Vec::new(),
        };
        let e = Entry {
            generated: r.is_none(),
            display: f.display.clone(),
            rel: f.rel.clone(),
            lang: f.lang,
            len: len as u64,
            hash,
            check: bytes_hash(&results),
            results,
            lasting: Vec::new(),
            lasting_check: 0,
        };
        self.fresh
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((f.abs.clone(), e));
    }

    /// Records a file's stage-3 results (its rules run against the project
    /// index) with what the index told them, for the file whose bytes hash
    /// to `hash` ([`bytes_hash`]).
    pub fn put_lasting(
        &self,
        f: &SourceFile,
        hash: u64,
        findings: &[FindingOut],
        notices: &[Notice],
        suppressed: usize,
        log: LastingLog,
    ) {
        let stored = StoredLasting {
            findings: findings
                .iter()
                .map(|x| stored_finding(x, &f.display))
                .collect(),
            notices: stored_notices(notices),
            suppressed: suppressed as u64,
            log,
        };
        if let Ok(bytes) = postcard::to_stdvec(&stored) {
            self.lasting
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((f.abs.clone(), hash, bytes));
        }
    }

    /// Writes the cache back: this run's entries, the entries it used, and
    /// the entries of files outside `roots` (another scan's); entries of
    /// files under `roots` that this run did not analyze (deleted,
    /// excluded, skipped) are dropped. Nothing is written when nothing
    /// changed. Errors are returned for a notice; the results stand.
    pub fn save(self, roots: &[PathBuf]) -> Result<(), String> {
        let quiet = self.quiet;
        match self.write(roots) {
            Err(_) if quiet => Ok(()),
            r => r,
        }
    }

    fn write(self, roots: &[PathBuf]) -> Result<(), String> {
        self.old();
        let old = self.old.into_inner().unwrap_or_default();
        let fresh = self.fresh.into_inner().unwrap_or_else(|e| e.into_inner());
        let mut lasting: HashMap<PathBuf, (u64, Vec<u8>)> = self
            .lasting
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .into_iter()
            .map(|(p, h, b)| (p, (h, b)))
            .collect();
        let replaced: std::collections::HashSet<&PathBuf> = fresh.iter().map(|(p, _)| p).collect();
        let mut dropped = false;
        let mut entries: Vec<(PathBuf, Entry)> = Vec::with_capacity(old.len() + fresh.len());
        for (p, (e, used)) in old {
            if replaced.contains(&p) {
                continue;
            }
            if used.into_inner() || !roots.iter().any(|r| p.starts_with(r)) {
                entries.push((p, e));
            } else {
                dropped = true;
            }
        }
        if fresh.is_empty() && !dropped && lasting.is_empty() {
            return Ok(());
        }
        entries.extend(fresh);
        for (p, e) in entries.iter_mut() {
            if lasting.get(p).is_some_and(|(hash, _)| *hash == e.hash)
                && !e.generated
                && let Some((_, bytes)) = lasting.remove(p)
            {
                e.lasting_check = bytes_hash(&bytes);
                e.lasting = bytes;
            }
        }
        // The same bytes for the same entries, whatever the thread timing
        // (by the paths' bytes: `Path`'s component-wise order costs more).
        entries.sort_by(|a, b| a.0.as_os_str().cmp(b.0.as_os_str()));
        let data = CacheFile {
            format: FORMAT,
            key: self.key,
            entries,
        };
        make_dir(&self.dir)?;
        let mut tmp = tempfile::NamedTempFile::new_in(&self.dir).map_err(|e| e.to_string())?;
        // Streamed: a second copy of a large cache in memory would raise
        // the run's peak by as much.
        let mut out = std::io::BufWriter::new(tmp.as_file_mut());
        postcard::to_io(&data, &mut out).map_err(|e| e.to_string())?;
        std::io::Write::flush(&mut out).map_err(|e| e.to_string())?;
        drop(out);
        tmp.persist(&self.file).map_err(|e| e.to_string())?;
        remove_unused(&self.dir, &self.file);
        if self.quiet {
            // The default place: other projects' directories sit beside it.
            remove_unused_projects(&self.dir);
        }
        Ok(())
    }
}

/// How long a cache file nobody wrote stays: every build of unsnarl and
/// every set of settings has its own file, and those of past builds would
/// otherwise stay for good.
const UNUSED_FOR: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);

/// Removes the cache files in `dir` other than `keep` not written for
/// [`UNUSED_FOR`] (best effort: another run may be using them).
fn remove_unused(dir: &Path, keep: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = std::time::SystemTime::now();
    for e in entries.flatten() {
        let p = e.path();
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age > UNUSED_FOR);
        if old && p != keep && p.extension().is_some_and(|x| x == "bin") {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Removes, beside the project's directory `dir`, the cache files of other
/// projects not written for [`UNUSED_FOR`], and those projects' directories
/// once they hold nothing else.
fn remove_unused_projects(dir: &Path) {
    let Some(Ok(siblings)) = dir.parent().map(std::fs::read_dir) else {
        return;
    };
    for s in siblings.flatten() {
        let p = s.path();
        if p == dir || !s.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        remove_unused(&p, dir);
        let ours = |name: &std::ffi::OsStr| name == ".gitignore" || name == "CACHEDIR.TAG";
        let only_ours = std::fs::read_dir(&p)
            .map(|rd| rd.flatten().all(|e| ours(&e.file_name())))
            .unwrap_or(false);
        if only_ours {
            let _ = std::fs::remove_file(p.join(".gitignore"));
            let _ = std::fs::remove_file(p.join("CACHEDIR.TAG"));
            let _ = std::fs::remove_dir(&p);
        }
    }
}

/// Makes the cache directory, with a `.gitignore` that keeps it out of
/// version control and a `CACHEDIR.TAG` that keeps it out of backups.
fn make_dir(dir: &Path) -> Result<(), String> {
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let _ = std::fs::write(
        dir.join(".gitignore"),
        "# Made by unsnarl's results cache.\n*\n",
    );
    let _ = std::fs::write(
        dir.join("CACHEDIR.TAG"),
        "Signature: 8a477f597d28d172789f06886806bc55\n\
         # This directory is unsnarl's results cache (https://bford.info/cachedir/).\n",
    );
    Ok(())
}

fn at(l: &Location) -> [u32; 4] {
    [l.line, l.column, l.end_line, l.end_column]
}

fn location(path: &str, a: [u32; 4]) -> Location {
    Location {
        path: path.to_string(),
        line: a[0],
        column: a[1],
        end_line: a[2],
        end_column: a[3],
    }
}

impl<'a> StoredRef<'a> {
    fn of(r: Stage1View<'a>) -> StoredRef<'a> {
        StoredRef {
            syntax: r.syntax.map(|s| StoredSyntax {
                line: s.line,
                column: s.column,
                message: s.message.clone(),
                count: s.count as u64,
            }),
            summaries: r.summaries,
            findings: r
                .findings
                .iter()
                .map(|f| stored_finding(f, &f.loc.path))
                .collect(),
            notices: stored_notices(r.notices),
            suppressed: r.suppressed as u64,
            queries: r.queries,
        }
    }
}

/// A finding of the file shown as `own` as stored.
fn stored_finding(f: &FindingOut, own: &str) -> StoredFinding {
    StoredFinding {
        rule: f.rule.to_string(),
        category: f.category,
        severity: f.severity,
        at: at(&f.loc),
        message: f.message.clone(),
        fix: f.fix.clone(),
        related: f
            .related
            .iter()
            .map(|r| {
                let path = (r.loc.path != own).then(|| r.loc.path.clone());
                (path, at(&r.loc), r.message.clone())
            })
            .collect(),
        fingerprint: f.fingerprint.clone(),
        content_hash: f.content_hash.clone(),
        excerpt: (
            f.excerpt.first_line,
            f.excerpt.text.clone(),
            f.excerpt.span.start as u64,
            f.excerpt.span.end as u64,
        ),
    }
}

/// Stored findings back, for the file shown as `path`; `None` if a rule is
/// not known (a cache of another build that shares the key by accident).
fn restore_findings(stored: Vec<StoredFinding>, path: &str) -> Option<Vec<FindingOut>> {
    let mut findings = Vec::with_capacity(stored.len());
    for f in stored {
        let meta = find_rule(&f.rule)?.meta();
        findings.push(FindingOut {
            rule: meta.id,
            rule_name: meta.name,
            category: f.category,
            severity: f.severity,
            loc: location(path, f.at),
            message: f.message,
            fix: f.fix,
            related: f
                .related
                .into_iter()
                .map(|(other, a, message)| RelatedOut {
                    loc: location(other.as_deref().unwrap_or(path), a),
                    message,
                })
                .collect(),
            fingerprint: f.fingerprint,
            content_hash: f.content_hash,
            excerpt: Excerpt {
                first_line: f.excerpt.0,
                text: f.excerpt.1,
                span: f.excerpt.2 as usize..f.excerpt.3 as usize,
            },
        });
    }
    Some(findings)
}

fn stored_notices(notices: &[Notice]) -> Vec<(u32, String)> {
    notices
        .iter()
        .map(|n| (n.line, n.message.clone()))
        .collect()
}

fn restore_notices(stored: Vec<(u32, String)>, path: &str) -> Vec<Notice> {
    stored
        .into_iter()
        .map(|(line, message)| Notice {
            path: path.to_string(),
            line,
            message,
        })
        .collect()
}

impl StoredLasting {
    fn restore(self, path: &str) -> Option<LastingResults> {
        Some(LastingResults {
            findings: restore_findings(self.findings, path)?,
            notices: restore_notices(self.notices, path),
            suppressed: self.suppressed as usize,
            log: self.log,
        })
    }
}

impl Stored {
    /// The results for the file shown as `path`; `None` if a rule is not
    /// known (a cache of another build that shares the key by accident).
    fn restore(self, path: &str) -> Option<Stage1Results> {
        let findings = restore_findings(self.findings, path)?;
        Some(Stage1Results {
            syntax: self.syntax.map(|s| SyntaxErrorOut {
                path: path.to_string(),
                line: s.line,
                column: s.column,
                message: s.message,
                count: s.count as usize,
            }),
            summaries: self.summaries,
            findings,
            notices: restore_notices(self.notices, path),
            suppressed: self.suppressed as usize,
            queries: self.queries,
            lasting: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(abs: &str) -> SourceFile {
        SourceFile {
            display: abs.to_string(),
            abs: PathBuf::from(abs),
            rel: abs.trim_start_matches('/').to_string(),
            lang: Language::Python,
            stdin: None,
        }
    }

    fn put(c: &Cache, abs: &str) {
        let (sums, queries) = (FileSummaries::default(), QueryLog::default());
        let view = Stage1View {
            syntax: None,
            summaries: &sums,
            findings: &[],
            notices: &[],
            suppressed: 0,
            queries: &queries,
        };
        c.put(&source(abs), 1, 7, Some(view));
    }

    fn has(c: &Cache, abs: &str) -> bool {
        c.get(&source(abs), 1, 7).is_some()
    }

    #[test]
    fn saving_keeps_used_and_other_scans_entries_and_drops_files_gone_from_the_scan() {
        let dir = tempfile::tempdir().unwrap();
        let c = Cache::open(dir.path(), 1, false);
        for f in ["/r/a.py", "/r/b.py", "/o/c.py"] {
            put(&c, f);
        }
        c.save(&[]).unwrap();
        // A scan of /r that finds a.py only (b.py was deleted).
        let c = Cache::open(dir.path(), 1, false);
        assert!(has(&c, "/r/a.py"));
        c.save(&[PathBuf::from("/r")]).unwrap();
        let c = Cache::open(dir.path(), 1, false);
        assert!(has(&c, "/r/a.py"));
        assert!(
            !has(&c, "/r/b.py"),
            "the entry of a file gone from /r stayed"
        );
        assert!(has(&c, "/o/c.py"), "an entry outside the scan was dropped");
        // Another key does not read it; a changed hash or length misses.
        assert!(!has(&Cache::open(dir.path(), 2, false), "/r/a.py"));
        assert!(c.get(&source("/r/a.py"), 1, 8).is_none());
        assert!(c.get(&source("/r/a.py"), 2, 7).is_none());
        // A damaged entry is a miss.
        let mut c = c;
        c.old();
        c.old
            .get_mut()
            .unwrap()
            .get_mut(Path::new("/r/a.py"))
            .unwrap()
            .0
            .results[0] ^= 1;
        assert!(!has(&c, "/r/a.py"), "a damaged entry was used");
        assert!(has(&c, "/o/c.py"));
        let mut moved = source("/o/c.py");
        moved.rel = "a.py".into();
        assert!(c.get(&moved, 1, 7).is_none(), "a new module path must miss");
    }

    #[test]
    fn writing_removes_cache_files_unused_for_a_month() {
        let dir = tempfile::tempdir().unwrap();
        let month_ago = std::time::SystemTime::now() - UNUSED_FOR - UNUSED_FOR / 10;
        for (name, when) in [
            ("0000000000000001.bin", Some(month_ago)),
            ("0000000000000002.bin", None),
            ("notes.txt", Some(month_ago)),
        ] {
            let f = std::fs::File::create(dir.path().join(name)).unwrap();
            if let Some(t) = when {
                f.set_modified(t).unwrap();
            }
        }
        let c = Cache::open(dir.path(), 3, false);
        put(&c, "/r/a.py");
        c.save(&[]).unwrap();
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            // (The directory existed: no .gitignore is written into it.)
            ["0000000000000002.bin", "0000000000000003.bin", "notes.txt"]
        );
    }
}
