//! Hostile trees: special files, links that lead out or around, names that
//! are not UTF-8, depth, sheer numbers, files that vanish, trees that must
//! not be written to, and files that take too long. Each scan runs the real
//! binary under a guard: a run that hangs is killed and fails the test
//! instead of hanging it, and the child's peak memory is read back.
#![cfg(unix)]

mod common;

use common::Tree;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

/// What a guarded run printed and used.
#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    /// Peak resident memory of the child, in KiB (`ru_maxrss`).
    max_rss_kib: i64,
    elapsed: Duration,
}

impl Run {
    fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self:?}"))
    }

    /// Exit 0 or 1, and nothing on stderr that says a thread panicked.
    fn completed(&self) -> &Run {
        assert!(self.code == 0 || self.code == 1, "{self:?}");
        assert!(!self.stderr.contains("panicked"), "{self:?}");
        self
    }
}

/// Runs the binary in `dir` with `args`; kills it and fails the test if it
/// is still running after `limit`.
// The child is reaped by `wait4` (which also gives its rusage), not by
// `Child::wait`.
#[allow(clippy::zombie_processes)]
fn guarded(dir: &Path, args: &[&str], limit: Duration) -> Run {
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_unsnarl"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("CLICOLOR_FORCE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run unsnarl");
    let pid = child.id() as libc::pid_t;
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain old data; an all-zero value is valid.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: wait4 on our own child, with valid out-pointers.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break;
        }
        assert!(r == 0, "wait4 failed: {}", std::io::Error::last_os_error());
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("unsnarl {args:?} still running after {limit:?}: killed (a hang)");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -libc::WTERMSIG(status)
    };
    Run {
        code,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
        max_rss_kib: usage.ru_maxrss,
        elapsed: start.elapsed(),
    }
}

const MINUTE: Duration = Duration::from_secs(60);

fn json_check(dir: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["check", "--no-config", "--format", "json"];
    args.extend_from_slice(extra);
    guarded(dir, &args, MINUTE)
}

fn skipped(v: &serde_json::Value, reason: &str) -> Vec<String> {
    v["summary"]["files_skipped"]["by_reason"][reason]["paths"]
        .as_array()
        .map(|a| a.iter().map(|p| p.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

#[test]
fn a_fifo_and_a_socket_are_skipped_never_opened() {
    let t = Tree::new();
    t.write("a.py", "x = 1\n");
    std::fs::create_dir_all(t.join("sub")).unwrap();
    let st = Command::new("mkfifo")
        .arg(t.join("sub/pipe.py"))
        .status()
        .expect("mkfifo");
    assert!(st.success());
    let _listener = std::os::unix::net::UnixListener::bind(t.join("sock.js")).unwrap();
    let r = json_check(t.path(), &[]);
    let v = r.completed().json();
    assert_eq!(v["summary"]["files_scanned"], 1, "{r:?}");
    assert_eq!(
        skipped(&v, "not-a-regular-file"),
        ["sock.js", "sub/pipe.py"]
    );
    // Named on the command line, too (the path that skips the walker).
    let r = guarded(
        t.path(),
        &["check", "--no-config", "sub/pipe.py", "sock.js", "a.py"],
        MINUTE,
    );
    r.completed();
    assert!(
        r.stderr
            .contains("note: skipped sub/pipe.py: not a regular file"),
        "{r:?}"
    );
    assert!(
        r.stderr
            .contains("note: skipped sock.js: not a regular file"),
        "{r:?}"
    );
}

#[test]
fn dev_zero_and_a_directory_symlinked_into_the_tree_are_not_followed() {
    let t = Tree::new();
    let outside = Tree::new();
    outside
        .write("far.py", "x = 1\n")
        .write("deep/far.go", "package p\n");
    t.write("a.py", "x = 1\n");
    std::os::unix::fs::symlink("/dev/zero", t.join("zero.py")).unwrap();
    std::os::unix::fs::symlink(outside.path(), t.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(outside.path(), t.join("pkg.py")).unwrap();
    let r = json_check(t.path(), &[]);
    let v = r.completed().json();
    assert_eq!(v["summary"]["files_scanned"], 1, "{r:?}");
    assert_eq!(skipped(&v, "symlink"), ["pkg.py", "zero.py"], "{r:?}");
    assert!(!r.stdout.contains("far."), "{r:?}");
    // Named explicitly, /dev/zero through a link is a device: skipped.
    let r = guarded(t.path(), &["check", "--no-config", "zero.py"], MINUTE);
    r.completed();
    assert!(
        r.stderr
            .contains("note: skipped zero.py: not a regular file"),
        "{r:?}"
    );
}

#[test]
fn symlink_loops_neither_hang_nor_fail() {
    let t = Tree::new();
    t.write("a/b/x.py", "x = 1\n");
    let link = |target: &str, at: &str| std::os::unix::fs::symlink(target, t.join(at)).unwrap();
    link("..", "a/b/up");
    link("../..", "a/b/top");
    link(".", "a/here");
    link("self.py", "self.py");
    link("ping.py", "pong.py");
    link("pong.py", "ping.py");
    link("loopdir", "loopdir");
    let r = json_check(t.path(), &[]);
    let v = r.completed().json();
    assert_eq!(v["summary"]["files_scanned"], 1, "{r:?}");
    assert_eq!(
        skipped(&v, "symlink"),
        ["ping.py", "pong.py", "self.py"],
        "{r:?}"
    );
    assert_eq!(v["summary"]["files_with_errors"], 0, "{r:?}");
}

#[test]
fn file_names_that_are_not_utf8_are_shown_lossily() {
    let t = Tree::new();
    t.write("ok.py", "x = 1\n");
    let dir = t.path().join(OsStr::from_bytes(b"d\xff\xfe"));
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(
        dir.join(OsStr::from_bytes(b"m\xe9.py")),
        "import asyncio\nimport time\n\nasync def h():\n    time.sleep(1)\n",
    )
    .unwrap();
    std::fs::write(t.path().join(OsStr::from_bytes(b"\x80.go")), "package p\n").unwrap();
    for format in ["text", "json", "sarif", "github"] {
        let r = guarded(
            t.path(),
            &["check", "--no-config", "--format", format],
            MINUTE,
        );
        r.completed();
    }
    let r = json_check(t.path(), &[]);
    let v = r.completed().json();
    assert_eq!(v["summary"]["files_scanned"], 3, "{r:?}");
    if common::frontend_ready(unsnarl_model::Language::Python) {
        assert_eq!(
            common::places(&v),
            ["d\u{fffd}\u{fffd}/m\u{fffd}.py:5:PY002"],
            "{r:?}"
        );
    }
}

#[test]
fn a_20_level_deep_directory_is_scanned() {
    let t = Tree::new();
    let deep: PathBuf = (0..20).map(|i| format!("level{i}")).collect();
    let rel = format!("{}/deep.py", deep.display());
    t.write(&rel, "x = 1\n").write("top.py", "x = 1\n");
    let r = json_check(t.path(), &[]);
    let v = r.completed().json();
    assert_eq!(v["summary"]["files_scanned"], 2, "{r:?}");
    // The module path of the deep file is all twenty folders.
    let dump = guarded(t.path(), &["debug-model", &rel], MINUTE);
    assert_eq!(dump.code, 0, "{dump:?}");
}

#[test]
fn fifty_thousand_tiny_files_complete_in_bounded_memory() {
    // Every file is a hard link to one of four originals kept outside the
    // scanned tree: 50,000 separate files would take 200 MB of 4 KiB blocks,
    // more than some CI disks have free. The scan still opens and reads each
    // path on its own.
    let originals = tempfile::tempdir().expect("temp dir");
    let kinds = [
        ("py", "x = 1\n"),
        ("js", "let x = 1;\n"),
        ("go", "package p\n"),
        ("txt", "not source\n"),
    ];
    for (ext, body) in kinds {
        std::fs::write(originals.path().join(format!("original.{ext}")), body).unwrap();
    }
    let t = Tree::new();
    let mut n = 0;
    for d in 0..100 {
        let dir = t.join(&format!("pkg{d}"));
        std::fs::create_dir(&dir).unwrap();
        for f in 0..500 {
            let (ext, body) = kinds[f % 4];
            let original = originals.path().join(format!("original.{ext}"));
            let link = dir.join(format!("m{f}.{ext}"));
            // A file system without hard links gets real copies.
            if std::fs::hard_link(&original, &link).is_err() {
                std::fs::write(&link, body).unwrap();
            }
            n += 1;
        }
    }
    assert_eq!(n, 50_000);
    let r = guarded(
        t.path(),
        &["check", "--no-config", "--format", "json"],
        Duration::from_secs(20 * 60),
    );
    let v = r.completed().json();
    assert_eq!(v["summary"]["files_scanned"], 37_500, "{}", r.stderr);
    assert!(
        r.max_rss_kib > 0 && r.max_rss_kib < 1024 * 1024,
        "peak memory {} KiB (limit 1 GiB)",
        r.max_rss_kib
    );
    eprintln!(
        "50,000 files: {:?}, peak memory {} MiB",
        r.elapsed,
        r.max_rss_kib / 1024
    );
}

/// A front end that deletes every other file of the tree the first time it
/// is called: with one thread, the files after the first are read after
/// they are gone, exactly as if they had been deleted between the walk and
/// the read.
struct Deleter {
    dir: PathBuf,
    done: std::sync::atomic::AtomicBool,
}

impl unsnarl::frontend::Frontend for Deleter {
    fn lower(&self, input: &unsnarl_model::SourceInput) -> unsnarl_model::FileModel {
        if !self.done.swap(true, std::sync::atomic::Ordering::SeqCst) {
            for e in std::fs::read_dir(&self.dir).unwrap() {
                let p = e.unwrap().path();
                if !p.ends_with(input.rel_path) {
                    std::fs::remove_file(p).unwrap();
                }
            }
        }
        unsnarl::frontend::Builtin.lower(input)
    }
}

#[test]
fn a_file_deleted_between_walk_and_read_is_skipped_as_vanished() {
    let t = Tree::new();
    t.write("a.py", "x = 1\n")
        .write("b.py", "x = 1\n")
        .write("c.go", "package c\n");
    let cwd = std::fs::canonicalize(t.path()).unwrap();
    let opts = unsnarl::pipeline::ScanOptions {
        roots: vec![unsnarl::walk::Root {
            given: PathBuf::from("."),
            abs: cwd.clone(),
        }],
        cwd: cwd.clone(),
        exclude: Vec::new(),
        threads: 1,
        rules: unsnarl_rules::all_rules().to_vec(),
        knowledge: unsnarl_model::Knowledge::builtin(),
        filter: unsnarl::filter::Filter::default(),
        include_generated: false,
        file_timeout: None,
        memory_budget: unsnarl::pipeline::DEFAULT_MEMORY_BUDGET,
        progress: false,
        stdin: None,
        cache: None,
    };
    let frontend = Deleter {
        dir: cwd,
        done: Default::default(),
    };
    let report = unsnarl::pipeline::scan(opts, &frontend).unwrap();
    let s = &report.summary;
    assert_eq!(s.files_scanned, 1);
    assert_eq!(
        s.skipped,
        [
            ("b.py".to_string(), unsnarl::walk::SkipReason::Vanished),
            ("c.go".to_string(), unsnarl::walk::SkipReason::Vanished),
        ]
    );
    assert!(s.problems.is_empty(), "{:?}", s.problems);
    let json = unsnarl::report::json::render(&report);
    assert!(json.contains("\"vanished\""), "{json}");
}

/// Every entry under `root` with its type, size, permissions and mtime.
fn listing(root: &Path) -> BTreeMap<PathBuf, (String, u64, u32, SystemTime)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let md = std::fs::symlink_metadata(&p).unwrap();
            if md.is_dir() {
                stack.push(p.clone());
            }
            out.insert(
                p,
                (
                    format!("{:?}", md.file_type()),
                    md.len(),
                    md.permissions().mode(),
                    md.modified().unwrap(),
                ),
            );
        }
    }
    out
}

fn set_tree_mode(root: &Path, dir_mode: u32, file_mode: u32) {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let md = std::fs::symlink_metadata(&p).unwrap();
            if md.is_dir() {
                stack.push(p.clone());
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(dir_mode)).unwrap();
            } else if md.is_file() {
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(file_mode)).unwrap();
            }
        }
    }
    std::fs::set_permissions(root, std::fs::Permissions::from_mode(dir_mode)).unwrap();
}

#[test]
fn a_read_only_tree_is_never_written_to() {
    let t = Tree::new();
    t.write(
        "app/h.py",
        "import asyncio\nimport time\n\nasync def h():\n    time.sleep(1)\n",
    )
    .write(
        "web/s.js",
        "const fs = require('fs');\nasync function h() { fs.readFileSync('x'); }\n",
    )
    .write("go/m.go", "package m\n\nfunc f() { go func() {}() }\n")
    .write("rs/lib.rs", "fn f() { std::thread::spawn(|| {}); }\n")
    .write("bad.py", b"\xff\n")
    .write("unsnarl.toml", "fail-on = \"high\"\n")
    .write(".gitignore", "ignored/\n")
    .write("ignored/x.py", "x = 1\n");
    set_tree_mode(t.path(), 0o555, 0o444);
    let before = listing(t.path());
    let runs: &[&[&str]] = &[
        &["check"],
        &["check", "--format", "json"],
        &["check", "--format", "sarif", "-j1"],
        &["check", "--format", "github"],
        &["check", "--statistics"],
        &["check", "app/h.py", "web"],
        &["debug-model", "app/h.py"],
    ];
    for args in runs {
        let r = guarded(t.path(), args, MINUTE);
        assert!(!r.stderr.contains("panicked"), "{r:?}");
        assert!(
            r.code != 2 || r.stderr.contains("not valid UTF-8"),
            "{args:?}: {r:?}"
        );
    }
    let after = listing(t.path());
    set_tree_mode(t.path(), 0o755, 0o644);
    assert_eq!(before, after, "the scan changed the tree");
}

#[test]
fn a_pathological_file_is_abandoned_and_the_run_completes() {
    let t = Tree::new();
    // Far more than a millisecond of work for any front end.
    let mut big = String::new();
    for i in 0..20_000 {
        big.push_str(&format!(
            "async def f{i}(a, b):\n    x = [j * {i} for j in range(a)]\n    return await g(x, b)\n"
        ));
    }
    t.write("big.py", &big).write("small.py", "x = 1\n");
    for format in ["json", "text", "sarif", "github"] {
        let r = guarded(
            t.path(),
            &[
                "check",
                "--no-config",
                "--file-timeout",
                "0.001",
                "--format",
                format,
            ],
            MINUTE,
        );
        r.completed();
        match format {
            "json" => {
                // (On a very busy machine even small.py may time out.)
                let timed_out = skipped(&r.json(), "timeout");
                assert!(timed_out.contains(&"big.py".to_string()), "{r:?}");
            }
            "text" => {
                assert!(r.stdout.contains(" timeout)"), "{r:?}");
                assert!(
                    r.stderr
                        .contains("note: skipped big.py: analysis abandoned")
                );
            }
            "sarif" => assert!(r.stdout.contains("\"id\": \"timeout\""), "{r:?}"),
            _ => assert!(r.stdout.contains("::warning file=big.py,"), "{r:?}"),
        }
    }
}

#[test]
fn a_go_mod_that_is_a_fifo_or_dev_zero_does_not_block_the_go_rules() {
    // GO015 and GO030 read the `go` directive of the nearest go.mod. That
    // read used to open whatever was named go.mod: a FIFO blocked the scan
    // forever (the time budget cannot interrupt a blocked read), a link to
    // /dev/zero never ended.
    let capture = "package p\n\nfunc f(xs []int) {\n\tfor _, x := range xs {\n\t\tgo func() { println(x) }()\n\t}\n}\n";
    let t = Tree::new();
    t.write("fifo/a.go", capture).write("zero/a.go", capture);
    let st = Command::new("mkfifo")
        .arg(t.join("fifo/go.mod"))
        .status()
        .expect("mkfifo");
    assert!(st.success());
    std::os::unix::fs::symlink("/dev/zero", t.join("zero/go.mod")).unwrap();
    for dir in ["fifo", "zero"] {
        let r = guarded(
            &t.join(dir),
            &[
                "check",
                "--no-config",
                "--format",
                "json",
                "--file-timeout",
                "0",
            ],
            MINUTE,
        );
        let v = r.completed().json();
        assert_eq!(v["summary"]["files_scanned"], 1, "{dir}: {r:?}");
        assert!(r.max_rss_kib < 1024 * 1024, "{dir}: {r:?}");
    }
}

#[test]
fn ignore_files_that_are_fifos_or_devices_neither_block_nor_exhaust_memory() {
    // The walker reads a folder's .gitignore, .ignore and .git/info/exclude
    // as it enters it, and used to open them whatever they were: a FIFO
    // blocked the scan forever, a link to /dev/zero never ended.
    let mkfifo = |p: PathBuf| {
        let st = Command::new("mkfifo").arg(p).status().expect("mkfifo");
        assert!(st.success());
    };
    let t = Tree::new();
    t.write("a.py", "x = 1\n")
        .write("fifo/b.py", "x = 1\n")
        .write("zero/c.py", "x = 1\n")
        .write("repo/.git/info/.keep", "")
        .write("repo/d.py", "x = 1\n")
        .write("worktree/e.py", "x = 1\n")
        .write("gitdir/HEAD", "ref: refs/heads/main\n")
        .write("fine/.gitignore", "skipped.py\n")
        .write("fine/skipped.py", "x = 1\n")
        .write("fine/f.py", "x = 1\n");
    mkfifo(t.join("fifo/.gitignore"));
    std::os::unix::fs::symlink("/dev/zero", t.join("zero/.ignore")).unwrap();
    mkfifo(t.join("repo/.git/info/exclude"));
    mkfifo(t.join("gitdir/commondir"));
    t.write(
        "worktree/.git",
        format!("gitdir: {}\n", t.join("gitdir").display()),
    );
    let r = json_check(t.path(), &[]);
    let v = r.completed().json();
    // a.py and fine/f.py; fine/.gitignore is still honored.
    assert_eq!(v["summary"]["files_scanned"], 2, "{r:?}");
    let errors: Vec<(String, String)> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["path"].as_str().unwrap().to_string(),
                e["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let paths: Vec<&str> = errors.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, ["fifo", "repo", "worktree", "zero"], "{r:?}");
    assert!(
        errors[0]
            .1
            .starts_with("folder not scanned: .gitignore is not a regular file"),
        "{errors:?}"
    );
    assert!(
        errors[3].1.contains(".ignore is not a regular file"),
        "{errors:?}"
    );
    // The same at the root of the scan: ignore files are then not honored,
    // and the scan goes on.
    let r = json_check(&t.join("zero"), &[]);
    let v = r.completed().json();
    assert_eq!(v["summary"]["files_scanned"], 1, "{r:?}");
    assert!(
        v["errors"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("ignore files not honored: "),
        "{r:?}"
    );
}
