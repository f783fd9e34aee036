//! Helpers shared by the integration tests: temp trees, running the binary,
//! running the application in-process, and a toy front end.
#![allow(dead_code)]

pub mod toy;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use unsnarl::frontend::Frontend;
use unsnarl_model::{Language, SourceInput};

/// A temporary directory with files.
pub struct Tree {
    pub dir: tempfile::TempDir,
}

impl Tree {
    pub fn new() -> Tree {
        Tree {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn join(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> &Tree {
        let p = self.join(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(p, content).unwrap();
        self
    }
}

/// What a run printed and returned.
#[derive(Debug)]
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

/// The user cache directory the binary sees in tests (one for all of them:
/// each project has its own directory in it).
pub fn test_cache_home() -> PathBuf {
    std::env::temp_dir().join("unsnarl-tests-cache-home")
}

/// Runs the built binary in `dir`.
pub fn bin(dir: &Path, args: &[&str]) -> Out {
    bin_env(dir, args, &[])
}

/// [`bin`] with these environment variables set.
pub fn bin_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    let o = Command::new(env!("CARGO_BIN_EXE_unsnarl"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("UNSNARL_NO_CACHE")
        .env_remove("UNSNARL_CACHE_DIR")
        // The default cache goes under the user's cache directory: not the
        // real one (tests run in many temporary projects).
        .env("XDG_CACHE_HOME", test_cache_home())
        .envs(env.iter().copied())
        .output()
        .expect("run unsnarl");
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Runs the application in-process with a given front end, in `dir`.
pub fn inproc(dir: &Path, args: &[&str], frontend: &dyn Frontend) -> Out {
    inproc_with_stdin(dir, args, frontend, b"")
}

/// [`inproc`], with `input` on stdin.
pub fn inproc_with_stdin(dir: &Path, args: &[&str], frontend: &dyn Frontend, input: &[u8]) -> Out {
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let mut stdin = input;
    let mut io = unsnarl::Io {
        cwd: dir.to_path_buf(),
        stdin: &mut stdin,
        stdout: &mut stdout,
        stderr: &mut stderr,
        color: false,
        progress: false,
        // In-process runs keep no cache unless a test gives a directory.
        cache_home: None,
    };
    let argv: Vec<OsString> = std::iter::once("unsnarl")
        .chain(args.iter().copied())
        .map(OsString::from)
        .collect();
    let code = unsnarl::run(argv, &mut io, frontend);
    Out {
        code: code as i32,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

/// Runs the application in-process with the toy front end.
pub fn toy(dir: &Path, args: &[&str]) -> Out {
    inproc(dir, args, &toy::Toy)
}

/// True when the real front end of `lang` lowers code (until the front ends
/// are merged they are stubs that return an empty model; tests that need
/// real findings say so and return early).
pub fn frontend_ready(lang: Language) -> bool {
    let (text, path) = match lang {
        Language::Python => ("def f():\n    pass\n", "probe.py"),
        Language::JavaScript => ("function f() {}\n", "probe.js"),
        Language::TypeScript => ("function f(): void {}\n", "probe.ts"),
        Language::Go => ("package p\n\nfunc f() {}\n", "probe.go"),
        Language::Rust => ("fn f() {}\n", "probe.rs"),
    };
    let m = unsnarl::frontend::Builtin.lower(&SourceInput {
        text,
        rel_path: path,
        language: lang,
    });
    let ready = m.functions.len() > 1;
    if !ready {
        eprintln!(
            "note: the {} front end is a stub; test parts needing it are not run",
            lang.slug()
        );
    }
    ready
}

/// The findings of a JSON report as `path:line:rule` strings.
pub fn places(v: &serde_json::Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            format!(
                "{}:{}:{}",
                f["path"].as_str().unwrap(),
                f["line"],
                f["rule"].as_str().unwrap()
            )
        })
        .collect()
}
