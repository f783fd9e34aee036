//! The fixture harness: `tests/fixtures/<language>/**` with `expect:`
//! markers (see tests/fixtures/README.md). Each language folder is analyzed
//! in-process as one project; any missing or extra finding fails, with a
//! diff.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use unsnarl::frontend::{Builtin, Frontend};
use unsnarl_model::Language;

/// (path relative to the language folder, line) → codes.
type Marks = BTreeMap<(String, u32), Vec<String>>;

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if unsnarl::walk::language_of(&p).is_some() {
            out.push(p);
        }
    }
}

/// The `expect:` markers of every source file under `dir`.
fn expectations(dir: &Path) -> Marks {
    let mut paths = Vec::new();
    files(dir, &mut paths);
    let mut marks = Marks::new();
    for p in paths {
        let lang = unsnarl::walk::language_of(&p).unwrap();
        let leader = lang.line_comment();
        let text = std::fs::read_to_string(&p).unwrap();
        let rel = unsnarl::walk::slash_path(p.strip_prefix(dir).unwrap());
        for (i, line) in text.lines().enumerate() {
            let Some(pos) = line.rfind(leader) else {
                continue;
            };
            let Some(list) = line[pos + leader.len()..].trim().strip_prefix("expect:") else {
                continue;
            };
            let codes: Vec<String> = list
                .split(',')
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty())
                .collect();
            assert!(!codes.is_empty(), "{rel}:{}: empty expect marker", i + 1);
            for c in &codes {
                assert!(
                    unsnarl::filter::selection::Code::parse(c).is_some(),
                    "{rel}:{}: unknown code {c:?} in expect marker",
                    i + 1
                );
            }
            marks.insert((rel.clone(), i as u32 + 1), codes);
        }
    }
    marks
}

struct Got {
    rule: String,
    category: String,
    name: String,
    message: String,
}

fn covers(code: &str, g: &Got) -> bool {
    code.eq_ignore_ascii_case(&g.rule) || code == g.category || code == g.name
}

/// Checks one language folder; returns the diff (empty when all is well).
fn check(dir: &Path, frontend: &dyn Frontend) -> String {
    let o = common::inproc(
        dir,
        &[
            "check",
            "--format",
            "json",
            "--no-config",
            "--no-cache",
            "--include-generated",
            ".",
        ],
        frontend,
    );
    let v = o.json();
    assert_eq!(v["summary"]["internal_errors"], 0, "{}", o.stderr);
    let mut got: BTreeMap<(String, u32), Vec<Got>> = BTreeMap::new();
    for f in v["findings"].as_array().unwrap() {
        got.entry((
            f["path"].as_str().unwrap().to_string(),
            f["line"].as_u64().unwrap() as u32,
        ))
        .or_default()
        .push(Got {
            rule: f["rule"].as_str().unwrap().into(),
            category: f["category"].as_str().unwrap().into(),
            name: f["rule_name"].as_str().unwrap().into(),
            message: f["message"].as_str().unwrap().into(),
        });
    }
    let mut marks = expectations(dir);
    let mut diff = String::new();
    let keys: std::collections::BTreeSet<_> = marks.keys().chain(got.keys()).cloned().collect();
    for key in keys {
        let mut expected = marks.remove(&key).unwrap_or_default();
        let mut found = got.remove(&key).unwrap_or_default();
        // Match each expected code with one finding it covers.
        expected.retain(|code| match found.iter().position(|g| covers(code, g)) {
            Some(i) => {
                found.remove(i);
                false
            }
            None => true,
        });
        for code in expected {
            diff.push_str(&format!(
                "  missing  {}:{}: expected {code}\n",
                key.0, key.1
            ));
        }
        for g in found {
            diff.push_str(&format!(
                "  extra    {}:{}: {} [{}] {}\n",
                key.0, key.1, g.rule, g.category, g.message
            ));
        }
    }
    diff
}

#[test]
fn fixtures_match_their_expect_markers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut failures = String::new();
    let mut checked = 0;
    for lang in Language::ALL {
        let dir = root.join(lang.slug());
        if !dir.is_dir() {
            continue;
        }
        if !common::frontend_ready(lang) {
            eprintln!(
                "note: fixtures/{} not checked: the front end is a stub",
                lang.slug()
            );
            continue;
        }
        checked += 1;
        let diff = check(&dir, &Builtin);
        if !diff.is_empty() {
            failures.push_str(&format!("fixtures/{}:\n{diff}", lang.slug()));
        }
    }
    assert!(
        failures.is_empty(),
        "fixture findings differ from the expect markers:\n{failures}"
    );
    eprintln!("{checked} fixture folders checked");
}

#[test]
fn markers_are_parsed_with_codes_and_lines() {
    let t = common::Tree::new();
    t.write(
        "a.py",
        "x = 1  # expect: blocking-in-async, PY003\ny = 2 # a comment\n",
    )
    .write("b.go", "go f() // expect: orphan-task\n");
    let m = expectations(t.path());
    assert_eq!(m.len(), 2);
    assert_eq!(m[&("a.py".to_string(), 1)], ["blocking-in-async", "PY003"]);
    assert_eq!(m[&("b.go".to_string(), 1)], ["orphan-task"]);
}

#[test]
fn the_harness_reports_missing_and_extra_findings() {
    // The toy front end (tests/common/toy.rs) gives PY002 for `time.sleep`
    // in an async function and PY003 for `asyncio.Queue()`.
    let t = common::Tree::new();
    t.write(
        "a.py",
        "q = asyncio.Queue()  # expect: unbounded-queue\n\
         async def h():\n\
         \x20   time.sleep(1)  # expect: PY002, orphan-task\n\
         \x20   time.sleep(2)\n\
         x = 1  # expect: blocking-in-async\n",
    );
    let diff = check(t.path(), &common::toy::Toy);
    let lines: Vec<&str> = diff.lines().collect();
    assert_eq!(lines.len(), 3, "{diff}");
    assert_eq!(lines[0], "  missing  a.py:3: expected orphan-task");
    assert!(
        lines[1].starts_with("  extra    a.py:4: PY002 [blocking-in-async] `time.sleep`"),
        "{diff}"
    );
    assert_eq!(lines[2], "  missing  a.py:5: expected blocking-in-async");
    t.write("a.py", "q = asyncio.Queue()  # expect: PY003\n");
    assert_eq!(check(t.path(), &common::toy::Toy), "");
}
