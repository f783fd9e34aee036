//! The results cache (a directory per project in the user's cache
//! directory, `--no-cache`, `--cache-dir`, `cache` and `cache-dir` in the
//! configuration, `UNSNARL_NO_CACHE`, `UNSNARL_CACHE_DIR`), with the real
//! front ends: a warm run reports what
//! a cold run and a run without the cache report, files read from the cache
//! still see what changed in the files they call, and a cache that cannot
//! be read or written costs speed, never results.

mod common;

use common::{Out, Tree, bin_env, places};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The user's cache directory of the runs: beside the scanned tree (the
/// tree is `t.join("p")`, the user's cache `t.join("home")`).
fn home(dir: &Path) -> PathBuf {
    let mut d = dir;
    while d.file_name().is_some_and(|n| n != "p") {
        d = d.parent().unwrap();
    }
    d.parent().unwrap().join("home")
}

/// Runs the binary in `dir` (inside a project `p`) with the user's cache
/// directory beside the project.
fn bin(dir: &Path, args: &[&str]) -> Out {
    bin_with(dir, args, &[])
}

fn bin_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    let home = home(dir);
    let mut all = vec![("XDG_CACHE_HOME", home.to_str().unwrap())];
    all.extend_from_slice(env);
    bin_env(dir, args, &all)
}

fn check(dir: &Path, args: &[&str]) -> Out {
    let mut a = vec!["check", "--no-config"];
    a.extend_from_slice(args);
    bin_with(dir, &a, &[])
}

/// A project `p`, and the user's cache directory `home` beside it.
struct Project {
    t: Tree,
}

impl Project {
    fn new() -> Project {
        let t = Tree::new();
        std::fs::create_dir(t.join("p")).unwrap();
        Project { t }
    }

    fn path(&self) -> PathBuf {
        self.t.join("p")
    }

    fn join(&self, rel: &str) -> PathBuf {
        self.path().join(rel)
    }

    fn write(&self, rel: &str, content: &str) -> &Project {
        self.t.write(&format!("p/{rel}"), content);
        self
    }

    /// The project's cache directory in the user's cache directory.
    fn default_cache(&self) -> PathBuf {
        self.t
            .join("home/unsnarl")
            .join(unsnarl::cache::project_dir_name(&self.path()))
    }
}

fn json(dir: &Path, args: &[&str]) -> Value {
    let mut a = vec!["--format", "json"];
    a.extend_from_slice(args);
    let o = check(dir, &a);
    assert!(o.code == 0 || o.code == 1, "{o:?}");
    o.json()
}

/// The report without what a warm run changes: the time, and how many
/// files came from the cache.
fn comparable(v: &Value) -> Value {
    let mut v = v.clone();
    v["summary"]["elapsed_ms"] = Value::from(0);
    v["summary"]["files_cached"] = Value::from(0);
    v
}

fn cached(v: &Value) -> u64 {
    v["summary"]["files_cached"].as_u64().unwrap()
}

fn scanned(v: &Value) -> u64 {
    v["summary"]["files_scanned"].as_u64().unwrap()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// The cache files (`*.bin`) in a cache directory.
fn cache_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<_> = rd
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "bin"))
        .collect();
    v.sort();
    v
}

const SLOW: &str = "import time\n\n\ndef helper():\n    time.sleep(1)\n";
const FAST: &str = "def helper():\n    return 1\n";
const HANDLER: &str = "from pkg.b import helper\n\n\nasync def handler():\n    helper()\n";

#[test]
fn warm_runs_report_what_cold_runs_and_runs_without_the_cache_report() {
    // The bundled examples (every language, cross-file chains) and the
    // fixtures (syntax errors, suppressions, notices, generated files).
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for tree in ["examples", "tests/fixtures"] {
        let t = Project::new();
        copy_dir(&repo.join(tree), &t.path());
        for format in ["json", "sarif", "text"] {
            let run = |extra: &[&str]| {
                let mut a = vec!["--format", format];
                a.extend_from_slice(extra);
                let o = check(&t.path(), &a);
                assert!(o.code == 0 || o.code == 1, "{tree} {format}: {o:?}");
                (o.code, o.stdout, o.stderr)
            };
            let without = run(&["--no-cache"]);
            let cold = run(&[]);
            let warm = run(&[]);
            if format == "json" {
                let (c, w, n): (Value, Value, Value) = (
                    serde_json::from_str(&cold.1).unwrap(),
                    serde_json::from_str(&warm.1).unwrap(),
                    serde_json::from_str(&without.1).unwrap(),
                );
                assert_eq!(cached(&n), 0);
                assert!(cached(&w) > 0, "{tree}: nothing came from the cache");
                assert!(cached(&w) <= scanned(&w));
                assert!(!w["findings"].as_array().unwrap().is_empty());
                assert_eq!(comparable(&c), comparable(&n), "{tree}: cold run differs");
                assert_eq!(comparable(&w), comparable(&n), "{tree}: warm run differs");
            } else if format == "sarif" {
                assert_eq!(cold, without, "{tree}: cold SARIF differs");
                assert_eq!(warm, without, "{tree}: warm SARIF differs");
            } else {
                // The text report ends with the summary line (time, cache).
                let body = |s: &str| s.rsplit_once("\nScanned ").map(|(b, _)| b.to_string());
                assert_eq!(body(&warm.1), body(&without.1), "{tree}: warm text differs");
                assert!(warm.1.contains(" from the cache) in "), "{}", warm.1);
                assert_eq!(warm.2, without.2, "{tree}: notices differ");
                assert_eq!(warm.0, without.0);
            }
        }
        let dir = t.default_cache();
        assert_eq!(
            std::fs::read_to_string(dir.join(".gitignore"))
                .unwrap()
                .lines()
                .last(),
            Some("*")
        );
        assert!(dir.join("CACHEDIR.TAG").is_file());
    }
}

#[test]
fn an_edited_file_is_analyzed_again() {
    let t = Project::new();
    t.write("pkg/__init__.py", "")
        .write("pkg/b.py", SLOW)
        .write("pkg/c.py", "import asyncio\n\nq = asyncio.Queue()\n");
    let first = json(&t.path(), &[]);
    assert_eq!(places(&first), ["pkg/c.py:3:PY003"]);
    // The same length: the content, not the size, tells.
    t.write("pkg/c.py", "import asyncio\n\nq = asyncio.Event()\n");
    let second = json(&t.path(), &[]);
    assert_eq!(places(&second), Vec::<String>::new());
    assert_eq!(cached(&second), scanned(&second) - 1);
}

#[test]
fn a_cached_file_sees_what_changed_in_the_functions_it_calls() {
    // handler() calls helper() of another file: when helper starts to
    // block, the unchanged caller's finding appears, and goes when it stops.
    let t = Project::new();
    t.write("pkg/__init__.py", "")
        .write("pkg/a.py", HANDLER)
        .write("pkg/b.py", FAST);
    assert_eq!(places(&json(&t.path(), &[])), Vec::<String>::new());
    t.write("pkg/b.py", SLOW);
    let v = json(&t.path(), &[]);
    assert_eq!(places(&v), ["pkg/a.py:5:PY002"]);
    assert_eq!(v["findings"][0]["related"][0]["path"], "pkg/b.py");
    t.write("pkg/b.py", FAST);
    assert_eq!(places(&json(&t.path(), &[])), Vec::<String>::new());
}

#[test]
fn a_file_that_calls_another_files_functions_is_cached_with_what_it_learned() {
    // a.py's finding depends on b.py: its results against the project index
    // are cached with the answers that index gave, and reused while the
    // answers hold; a changed, moved or added callee file changes them.
    let t = Project::new();
    t.write("pkg/__init__.py", "")
        .write("pkg/a.py", HANDLER)
        .write("pkg/b.py", SLOW);
    let cold = json(&t.path(), &[]);
    assert_eq!(places(&cold), ["pkg/a.py:5:PY002"]);
    let warm = json(&t.path(), &[]);
    assert_eq!(cached(&warm), scanned(&warm), "a.py was analyzed again");
    assert_eq!(comparable(&warm), comparable(&cold));
    let no_cache = json(&t.path(), &["--no-cache"]);
    assert_eq!(comparable(&warm), comparable(&no_cache));

    // The callee stops blocking, then blocks again: a.py follows each time,
    // and is read from the cache again once nothing changes.
    t.write("pkg/b.py", FAST);
    assert_eq!(places(&json(&t.path(), &[])), Vec::<String>::new());
    t.write("pkg/b.py", SLOW);
    let v = json(&t.path(), &[]);
    assert_eq!(places(&v), ["pkg/a.py:5:PY002"]);
    assert_eq!(cached(&v), scanned(&v) - 2, "only a.py and b.py run again");
    let v = json(&t.path(), &[]);
    assert_eq!(cached(&v), scanned(&v));

    // The same module in another file: the related location follows it.
    std::fs::remove_file(t.join("pkg/b.py")).unwrap();
    t.write("pkg/b/__init__.py", SLOW);
    let moved = json(&t.path(), &[]);
    assert_eq!(places(&moved), ["pkg/a.py:5:PY002"]);
    assert_eq!(
        moved["findings"][0]["related"][0]["path"],
        "pkg/b/__init__.py"
    );
    assert_eq!(
        comparable(&json(&t.path(), &[])),
        comparable(&json(&t.path(), &["--no-cache"]))
    );

    // A file added beside them that a.py's call now resolves to instead.
    let t = Project::new();
    t.write(
        "a.py",
        "from b import helper\n\n\nasync def handler():\n    helper()\n",
    )
    .write("lib/b.py", SLOW);
    assert_eq!(places(&json(&t.path(), &[])), ["a.py:5:PY002"]);
    assert_eq!(places(&json(&t.path(), &[])), ["a.py:5:PY002"]);
    t.write("b.py", FAST);
    let v = json(&t.path(), &[]);
    assert_eq!(places(&v), Vec::<String>::new());
    assert_eq!(
        comparable(&v),
        comparable(&json(&t.path(), &["--no-cache"]))
    );
}

#[test]
fn files_are_recognized_by_their_bytes_as_read() {
    // The cache hashes a file's bytes before they are checked (byte order
    // mark, UTF-8): a known file is not checked again, and a changed one
    // is, including one that stops being text.
    let t = Project::new();
    t.write("a.py", "\u{feff}import asyncio\n\nq = asyncio.Queue()\n")
        .write("b.py", "import asyncio\n\nr = asyncio.Queue()\n");
    let cold = json(&t.path(), &[]);
    assert_eq!(places(&cold), ["a.py:3:PY003", "b.py:3:PY003"]);
    let warm = json(&t.path(), &[]);
    assert_eq!(cached(&warm), 2);
    assert_eq!(comparable(&warm), comparable(&cold));
    std::fs::write(t.join("b.py"), b"import asyncio\n\nr = '\xff'\n").unwrap();
    let v = json(&t.path(), &[]);
    assert_eq!(places(&v), ["a.py:3:PY003"]);
    assert_eq!(v["summary"]["files_with_errors"], 1, "{v}");
    assert_eq!(cached(&v), 1);
}

#[test]
fn settings_that_change_the_results_do_not_share_a_cache() {
    let t = Project::new();
    t.write(
        "app.py",
        "import asyncio\nimport time\nimport mylib\n\nq = asyncio.Queue()\n\n\nasync def handler():\n    time.sleep(1)\n    mylib.slow_call()\n",
    );
    // The rules that run.
    assert_eq!(
        places(&json(&t.path(), &["--select", "PY003"])),
        ["app.py:5:PY003"]
    );
    assert_eq!(
        places(&json(&t.path(), &[])),
        ["app.py:5:PY003", "app.py:9:PY002"]
    );
    // Knowledge added in the configuration (and the configuration's filters).
    let with_config = |config: &str| {
        t.write("unsnarl.toml", config);
        let o = bin(&t.path(), &["check", "--format", "json"]);
        assert!(o.code == 0 || o.code == 1, "{o:?}");
        places(&o.json())
    };
    assert_eq!(with_config(""), ["app.py:5:PY003", "app.py:9:PY002"]);
    assert_eq!(
        with_config("[knowledge.python]\nblocking = [\"mylib.slow_call\"]\n"),
        ["app.py:5:PY003", "app.py:9:PY002", "app.py:10:PY002"]
    );
    assert_eq!(
        with_config("[per-file-ignores]\n\"app.py\" = [\"PY003\"]\n"),
        ["app.py:9:PY002"]
    );
    assert_eq!(
        with_config("min-severity = \"critical\"\n"),
        Vec::<String>::new()
    );
    // Each set of settings has its cache file; the first ones still hit.
    assert!(cache_files(&t.default_cache()).len() >= 5);
    let again = json(&t.path(), &["--select", "PY003"]);
    assert_eq!(cached(&again), 1);
}

#[test]
fn the_cache_can_be_turned_off_or_moved() {
    let t = Project::new();
    t.write("app.py", "import asyncio\n\nq = asyncio.Queue()\n");
    let none_made = |o: Out| {
        assert_eq!(o.code, 1, "{o:?}");
        assert!(!t.default_cache().exists(), "{o:?}");
    };
    none_made(check(&t.path(), &["--no-cache"]));
    none_made(bin_with(
        &t.path(),
        &["check"],
        &[("UNSNARL_NO_CACHE", "1")],
    ));
    t.write("unsnarl.toml", "cache = false\n");
    none_made(bin(&t.path(), &["check"]));
    // A directory given on the command line, in the environment, in the
    // configuration (relative to the configuration file).
    std::fs::create_dir(t.join("sub")).unwrap();
    let o = check(&t.join("sub"), &["--cache-dir", "../flag-cache", ".."]);
    assert_eq!(o.code, 1, "{o:?}");
    assert_eq!(cache_files(&t.join("flag-cache")).len(), 1);
    let o = bin_with(
        &t.path(),
        &["check", "--no-config"],
        &[("UNSNARL_CACHE_DIR", "env-cache")],
    );
    assert_eq!(o.code, 1, "{o:?}");
    assert_eq!(cache_files(&t.join("env-cache")).len(), 1);
    t.write("unsnarl.toml", "cache-dir = \"config-cache\"\n");
    let o = bin(&t.join("sub"), &["check", ".."]);
    assert_eq!(o.code, 1, "{o:?}");
    assert_eq!(cache_files(&t.join("config-cache")).len(), 1);
    assert!(!t.join("sub/config-cache").exists());
    // The flag wins over the environment.
    let o = bin_with(
        &t.join("sub"),
        &["check", "--no-config", "--cache-dir", "../flag-cache", ".."],
        &[("UNSNARL_NO_CACHE", "1")],
    );
    assert!(o.stdout.contains("(1 from the cache)"), "{o:?}");
    // Bad values are errors that name the key.
    for bad in ["cache = \"yes\"\n", "cache-dir = 3\n", "cache-dir = \"\"\n"] {
        t.write("unsnarl.toml", bad);
        let o = bin(&t.path(), &["check"]);
        assert_eq!(o.code, 2, "{bad}: {o:?}");
        assert!(o.stderr.contains("cache"), "{bad}: {o:?}");
    }
    let o = check(&t.path(), &["--no-cache", "--cache-dir", "x"]);
    assert_eq!(o.code, 2, "{o:?}");
}

#[test]
fn a_damaged_cache_is_ignored_and_replaced() {
    let t = Project::new();
    t.write("app.py", "import asyncio\n\nq = asyncio.Queue()\n");
    let first = json(&t.path(), &[]);
    let files = cache_files(&t.default_cache());
    assert_eq!(files.len(), 1);
    for damage in [&b"not a cache"[..], b"", &[0xff; 64]] {
        std::fs::write(&files[0], damage).unwrap();
        let v = json(&t.path(), &[]);
        assert_eq!(comparable(&v), comparable(&first));
        assert_eq!(cached(&v), 0);
        // Written again, and read on the next run.
        assert_eq!(cached(&json(&t.path(), &[])), 1);
    }
    // Cut short, as by a crash (the writer renames a finished file into
    // place, but another program might not).
    let whole = std::fs::read(&files[0]).unwrap();
    std::fs::write(&files[0], &whole[..whole.len() / 2]).unwrap();
    let v = json(&t.path(), &[]);
    assert_eq!(comparable(&v), comparable(&first));
}

#[test]
fn a_cache_that_cannot_be_written_costs_speed_not_results() {
    let t = Project::new();
    t.write("app.py", "import asyncio\n\nq = asyncio.Queue()\n")
        .write("blocker", "a file where the cache directory would go");
    let with = check(&t.path(), &["--cache-dir", "blocker"]);
    let without = check(&t.path(), &["--no-cache"]);
    assert_eq!(with.code, without.code);
    let body = |s: &str| s.rsplit_once("\nScanned ").map(|(b, _)| b.to_string());
    assert_eq!(body(&with.stdout), body(&without.stdout));
    assert!(
        with.stderr
            .contains("warning: the results cache was not saved"),
        "{with:?}"
    );
    let v = json(&t.path(), &["--cache-dir", "blocker"]);
    assert_eq!(places(&v), ["app.py:3:PY003"]);
}
