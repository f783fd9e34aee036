//! The application around findings, in-process with the toy front end
//! (`tests/common/toy.rs`): exit codes, selection, thresholds, suppressions,
//! per-file ignores, user knowledge, every output format, internal errors,
//! determinism and fingerprints. The rules and the engine are the real ones.

mod common;

use common::{Tree, bin, places, toy};
use serde_json::Value;

/// PY002 (blocking-in-async, high) on line 5, PY003 (unbounded-queue,
/// medium) on line 2.
const APP: &str =
    "import asyncio\njobs = asyncio.Queue()\n\nasync def handler():\n    time.sleep(1)\n";

fn tree(files: &[(&str, &str)]) -> Tree {
    let t = Tree::new();
    for (p, c) in files {
        t.write(p, c);
    }
    t
}

fn json(t: &Tree, args: &[&str]) -> (i32, Value) {
    let mut a = vec!["check", "--format", "json", "--no-config"];
    a.extend_from_slice(args);
    let o = toy(t.path(), &a);
    (o.code, o.json())
}

#[test]
fn findings_exit_1_and_none_exit_0() {
    let t = tree(&[("app.py", APP)]);
    let (code, v) = json(&t, &[]);
    assert_eq!(code, 1);
    assert_eq!(places(&v), ["app.py:2:PY003", "app.py:5:PY002"]);
    let t = tree(&[("app.py", "x = 1\n")]);
    assert_eq!(json(&t, &[]).0, 0);
}

#[test]
fn select_and_ignore_by_category_id_and_name() {
    let t = tree(&[("app.py", APP)]);
    for (args, want) in [
        (
            vec!["--select", "blocking-in-async"],
            vec!["app.py:5:PY002"],
        ),
        (vec!["--select", "PY003"], vec!["app.py:2:PY003"]),
        (vec!["--select", "py003"], vec!["app.py:2:PY003"]),
        (
            vec!["--select", "unbounded-queue,PY002"],
            vec!["app.py:2:PY003", "app.py:5:PY002"],
        ),
        (vec!["--ignore", "unbounded-queue"], vec!["app.py:5:PY002"]),
        (vec!["--ignore", "PY002"], vec!["app.py:2:PY003"]),
        (
            vec!["--ignore", "blocking-call-in-async"],
            vec!["app.py:2:PY003"],
        ),
        (
            vec!["--select", "blocking-in-async", "--ignore", "PY002"],
            vec![],
        ),
    ] {
        let (_, v) = json(&t, &args);
        assert_eq!(places(&v), want, "{args:?}");
    }
}

#[test]
fn fail_on_and_min_severity() {
    let t = tree(&[("app.py", "import asyncio\njobs = asyncio.Queue()\n")]);
    // Only a medium finding.
    assert_eq!(json(&t, &["--fail-on", "high"]).0, 0);
    assert_eq!(json(&t, &["--fail-on", "medium"]).0, 1);
    assert_eq!(json(&t, &["--fail-on", "low"]).0, 1);
    let (code, v) = json(&t, &["--min-severity", "high"]);
    assert_eq!(code, 0);
    assert!(places(&v).is_empty());
}

#[test]
fn suppressions_on_the_line_the_line_above_and_the_file() {
    let cases: &[(&str, &[&str])] = &[
        (
            "async def h():\n    time.sleep(1)  # unsnarl: ignore[PY002]\n",
            &[],
        ),
        (
            "async def h():\n    time.sleep(1)  # unsnarl: ignore[blocking-in-async]\n",
            &[],
        ),
        (
            "async def h():\n    time.sleep(1)  # unsnarl: ignore[blocking-call-in-async]\n",
            &[],
        ),
        (
            "async def h():\n    time.sleep(1)  # unsnarl: ignore\n",
            &[],
        ),
        (
            "async def h():\n    # unsnarl: ignore[PY002] -- test helper\n    time.sleep(1)\n",
            &[],
        ),
        (
            "async def h():\n    time.sleep(1)  # unsnarl: ignore[unbounded-queue]\n",
            &["a.py:2:PY002"],
        ),
        (
            "async def h():\n    x = 1  # unsnarl: ignore\n    time.sleep(1)\n",
            &["a.py:3:PY002"],
        ),
        (
            "# unsnarl: ignore[PY002]\n\nasync def h():\n    time.sleep(1)\n",
            &["a.py:4:PY002"],
        ),
        (
            "# unsnarl: ignore-file[blocking-in-async]\nasync def h():\n    time.sleep(1)\nq = asyncio.Queue()\n",
            &["a.py:4:PY003"],
        ),
        (
            "async def h():\n    time.sleep(1)\nq = asyncio.Queue()\n# unsnarl: ignore-file\n",
            &[],
        ),
        (
            "async def h():\n    time.sleep(1)  # unsnarl: ignore[PY002\n",
            &["a.py:2:PY002"],
        ),
    ];
    for (src, want) in cases {
        let t = tree(&[("a.py", src)]);
        let (_, v) = json(&t, &[]);
        assert_eq!(places(&v), *want, "{src}");
    }
}

#[test]
fn unused_suppressions_are_warned_about_when_asked_and_their_rules_ran() {
    let t = tree(&[(
        "a.py",
        "import asyncio\n\
         jobs = asyncio.Queue()  # unsnarl: ignore[PY003]\n\
         x = 1  # unsnarl: ignore[PY002]\n\
         async def handler():\n    \
         time.sleep(1)  # unsnarl: ignore[unbounded-queue]\n    \
         y = 2  # unsnarl: ignore\n\
         # unsnarl: ignore-file[GO016]\n\
         z = 3  # unsnarl: ignore[PY999]\n",
    )]);
    let warnings = |args: &[&str]| -> Vec<String> {
        let (_, v) = json(&t, args);
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| format!("{}: {}", w["line"], w["message"].as_str().unwrap()))
            .collect()
    };
    let unknown = "8: unknown rule or category \"PY999\" in suppression comment";
    assert_eq!(warnings(&[]), [unknown]);
    assert_eq!(
        warnings(&["--warn-unused-suppressions"]),
        [
            "3: unused suppression `ignore[PY002]`: no finding where it applies to ignore; remove it",
            "5: unused suppression `ignore[unbounded-queue]`: no finding where it applies to ignore; remove it",
            "6: unused suppression `ignore`: no finding where it applies to ignore; remove it",
            unknown,
        ]
    );
    // A suppressed finding below --min-severity still uses its directive;
    // directives naming a rule that did not run (PY002) are not judged,
    // those whose rules all ran are (the Python rules of unbounded-queue).
    assert_eq!(
        warnings(&[
            "--warn-unused-suppressions",
            "--min-severity",
            "high",
            "--select",
            "PY003"
        ]),
        [
            "5: unused suppression `ignore[unbounded-queue]`: no finding where it applies to ignore; remove it",
            "6: unused suppression `ignore`: no finding where it applies to ignore; remove it",
            unknown,
        ]
    );
    // File-level directives, and the text report's stderr.
    t.write("b.py", "# unsnarl: ignore-file[PY002]\nx = 1\n");
    let o = toy(
        t.path(),
        &["check", "--no-config", "--warn-unused-suppressions", "b.py"],
    );
    assert_eq!(o.code, 0, "warnings do not change the exit code: {o:?}");
    assert!(
        o.stderr.contains("warning: b.py:1: unused suppression `ignore-file[PY002]`: no finding in this file to ignore; remove it"),
        "{o:?}"
    );
    t.write("unsnarl.toml", "warn-unused-suppressions = true\n");
    let o = toy(t.path(), &["check", "b.py"]);
    assert!(o.stderr.contains("unused suppression"), "{o:?}");
}

#[test]
fn unknown_codes_in_suppressions_are_warnings_not_errors() {
    let t = tree(&[(
        "a.py",
        "async def h():\n    time.sleep(1)  # unsnarl: ignore[PY002, no-such-rule]\n",
    )]);
    let o = toy(t.path(), &["check", "--no-config"]);
    assert_eq!(o.code, 0, "{o:?}");
    assert!(
        o.stderr.contains(
            "warning: a.py:2: unknown rule or category \"no-such-rule\" in suppression comment"
        ),
        "{o:?}"
    );
    assert!(o.stdout.contains("1 suppressed."), "{o:?}");
    let (_, v) = json(&t, &[]);
    assert_eq!(v["warnings"][0]["line"], 2);
}

#[test]
fn per_file_ignores_and_config_selection() {
    let t = tree(&[
        (
            "unsnarl.toml",
            "select = [\"blocking-in-async\"]\n\n[per-file-ignores]\n\"tests/**\" = [\"PY002\"]\n",
        ),
        ("src/app.py", APP),
        ("tests/test_app.py", APP),
    ]);
    let o = toy(t.path(), &["check", "--format", "json"]);
    assert_eq!(places(&o.json()), ["src/app.py:5:PY002"], "{o:?}");
    // Flags win over the config; per-file ignores are relative to the
    // config's directory wherever the scan starts.
    let o = toy(
        &t.join("src"),
        &[
            "check",
            "--format",
            "json",
            "--select",
            "unbounded-queue",
            "../tests",
            ".",
        ],
    );
    assert_eq!(
        places(&o.json()),
        ["../tests/test_app.py:2:PY003", "app.py:2:PY003"],
        "{o:?}"
    );
}

#[test]
fn pyproject_configuration_applies() {
    let t = tree(&[
        (
            "pyproject.toml",
            "[tool.unsnarl]\nignore = [\"PY003\"]\nfail-on = \"critical\"\n",
        ),
        ("a.py", APP),
    ]);
    let o = toy(t.path(), &["check", "--format", "json"]);
    assert_eq!(o.code, 0, "high is below the critical threshold: {o:?}");
    assert_eq!(places(&o.json()), ["a.py:5:PY002"]);
}

#[test]
fn user_knowledge_extends_the_tables() {
    let src = "async def h():\n    mydb.query(1)\n";
    let t = tree(&[("a.py", src)]);
    assert!(places(&json(&t, &[]).1).is_empty());
    t.write(
        "unsnarl.toml",
        "[knowledge.python]\nblocking = [\"mydb.query\"]\n",
    );
    let o = toy(t.path(), &["check", "--format", "json"]);
    assert_eq!(places(&o.json()), ["a.py:2:PY002"], "{o:?}");
}

/// A user-declared deadline scope bounds the cleanup it wraps, with the
/// duration as its first argument.
#[test]
fn user_knowledge_declares_deadline_scopes() {
    let src = "import aiohttp\nimport mylib\n\n\nasync def process(job, session: aiohttp.ClientSession):\n    try:\n        await job.run()\n    finally:\n        async with mylib.deadline(2):\n            await session.post(\"/release\", json={\"id\": job.id})\n";
    let t = tree(&[("a.py", src)]);
    let args = ["check", "--format", "json", "--no-cache"];
    let o = bin(t.path(), &args);
    assert_eq!(places(&o.json()), ["a.py:10:PY024"], "{o:?}");
    t.write(
        "unsnarl.toml",
        "[knowledge.python]\ndeadline = [\"mylib.deadline\"]\n",
    );
    let o = bin(t.path(), &args);
    assert!(places(&o.json()).is_empty(), "{o:?}");
}

#[test]
fn a_file_past_its_time_budget_is_skipped_as_timeout_in_every_format() {
    let t = tree(&[("a.py", APP), ("slow.py", "# TOY_SLOW\n")]);
    let args = ["check", "--no-config", "--file-timeout", "0.05"];
    let o = toy(t.path(), &args);
    assert_eq!(o.code, 1, "a timeout is not an error: {o:?}");
    assert!(
        o.stderr
            .contains("note: skipped slow.py: analysis abandoned: it took longer than the per-file time budget"),
        "{o:?}"
    );
    assert!(o.stdout.contains("1 file skipped (1 timeout)"), "{o:?}");
    assert!(o.stdout.contains("PY002"), "the other files: {o:?}");
    let (code, v) = json(&t, &["--file-timeout", "0.05"]);
    assert_eq!(code, 1);
    assert_eq!(v["summary"]["files_scanned"], 1);
    assert_eq!(
        v["summary"]["files_skipped"]["by_reason"]["timeout"]["paths"][0],
        "slow.py"
    );
    let mut a = args.to_vec();
    a.extend(["--format", "sarif"]);
    let s = toy(t.path(), &a).json();
    let n = &s["runs"][0]["invocations"][0]["toolExecutionNotifications"][0];
    assert_eq!(n["descriptor"]["id"], "timeout", "{s}");
    assert_eq!(n["level"], "warning");
    let mut a = args.to_vec();
    a.extend(["--format", "github"]);
    let o = toy(t.path(), &a);
    assert!(
        o.stdout.contains(
            "::warning file=slow.py,title=unsnarl gave up on this file (timeout)::analysis abandoned"
        ),
        "{o:?}"
    );
    // 0 is no limit; the config file sets it too; the flag wins.
    let (_, v) = json(&t, &["--file-timeout", "0"]);
    assert_eq!(v["summary"]["files_scanned"], 2, "{v}");
    t.write("unsnarl.toml", "file-timeout = 0.05\n");
    let o = toy(t.path(), &["check", "--format", "json"]);
    assert_eq!(o.json()["summary"]["files_scanned"], 1, "{o:?}");
    let o = toy(
        t.path(),
        &["check", "--format", "json", "--file-timeout", "60"],
    );
    assert_eq!(o.json()["summary"]["files_scanned"], 2, "{o:?}");
    let o = toy(t.path(), &["check", "--file-timeout", "-1"]);
    assert_eq!(o.code, 2, "{o:?}");
}

#[test]
fn a_panic_in_one_file_is_an_internal_error_and_the_scan_goes_on() {
    let t = tree(&[("a.py", APP), ("boom.py", "TOY_PANIC\n")]);
    let o = toy(t.path(), &["check", "--no-config"]);
    assert_eq!(o.code, 2, "{o:?}");
    assert!(
        !o.stderr.contains("panicked at"),
        "the default hook is silenced: {o:?}"
    );
    assert!(
        o.stderr.contains(
            "error: boom.py: internal error while parsing: toy front end: TOY_PANIC found"
        ),
        "{o:?}"
    );
    assert!(o.stdout.contains("1 internal error"), "{o:?}");
    assert!(
        o.stdout.contains("PY002"),
        "other files are still analyzed: {o:?}"
    );
    let (code, v) = json(&t, &[]);
    assert_eq!(code, 2);
    assert_eq!(v["summary"]["internal_errors"], 1);
    assert_eq!(v["errors"][0]["kind"], "internal-error");
    assert_eq!(places(&v).len(), 2);
    let o = toy(t.path(), &["check", "--no-config", "--format", "sarif"]);
    assert_eq!(o.code, 2);
    let s = o.json();
    let inv = &s["runs"][0]["invocations"][0];
    assert_eq!(inv["executionSuccessful"], false);
    assert_eq!(inv["toolExecutionNotifications"][0]["level"], "error");
    assert!(o.stderr.contains("internal error"), "never silent: {o:?}");
    let o = toy(t.path(), &["check", "--no-config", "--format", "github"]);
    assert_eq!(o.code, 2);
    assert!(
        o.stdout
            .contains("::error file=boom.py,title=unsnarl internal error::"),
        "{o:?}"
    );
}

#[test]
fn syntax_errors_are_counted_reported_and_the_file_still_analyzed() {
    let t = tree(&[(
        "a.py",
        "async def h():\n    time.sleep(1)\n  TOY_SYNTAX here\nTOY_SYNTAX\n",
    )]);
    let o = toy(t.path(), &["check", "--no-config"]);
    assert_eq!(o.code, 1, "{o:?}");
    assert!(o.stderr.contains("warning: a.py:3:3: syntax error: toy syntax error (and 1 more); the file is analyzed anyway"), "{o:?}");
    assert!(o.stdout.contains("1 file with syntax errors"), "{o:?}");
    let (_, v) = json(&t, &[]);
    assert_eq!(v["summary"]["files_with_syntax_errors"], 1);
    assert_eq!(v["summary"]["syntax_errors"][0]["line"], 3);
    assert_eq!(v["summary"]["syntax_errors"][0]["count"], 2);
    assert_eq!(places(&v), ["a.py:2:PY002"]);
}

#[test]
fn generated_files_are_skipped_unless_asked_for() {
    let t = tree(&[("gen.py", "# TOY_GENERATED\nq = asyncio.Queue()\n")]);
    let (code, v) = json(&t, &[]);
    assert_eq!(code, 0);
    assert_eq!(
        v["summary"]["files_skipped"]["by_reason"]["generated"]["count"],
        1
    );
    let (code, v) = json(&t, &["--include-generated"]);
    assert_eq!(code, 1);
    assert_eq!(places(&v), ["gen.py:2:PY003"]);
}

#[test]
fn json_findings_have_every_contract_field() {
    let t = tree(&[("a.py", "async def h():\n    x = 'é'; time.sleep(1)\n")]);
    let (_, v) = json(&t, &[]);
    let f = &v["findings"][0];
    assert_eq!(f["rule"], "PY002");
    assert_eq!(f["rule_name"], "blocking-call-in-async");
    assert_eq!(f["category"], "blocking-in-async");
    assert_eq!(f["severity"], "high");
    assert_eq!(f["path"], "a.py");
    assert_eq!(f["line"], 2);
    assert_eq!(f["column"], 14, "columns count characters, not bytes (15)");
    assert_eq!(f["end_line"], 2);
    assert_eq!(f["end_column"], 27);
    assert!(f["message"].as_str().unwrap().contains("time.sleep"));
    assert!(!f["fix"].as_str().unwrap().is_empty());
    assert!(f["related"].as_array().is_some());
    assert_eq!(f["fingerprint"].as_str().unwrap().len(), 32);
    assert_eq!(
        v["summary"]["findings_by_severity"],
        serde_json::json!({"critical": 0, "high": 1, "medium": 0, "low": 0})
    );
    assert_eq!(v["summary"]["findings_total"], 1);
}

#[test]
fn text_output_has_code_frames_fixes_and_a_summary() {
    let t = tree(&[("a.py", APP)]);
    let o = toy(t.path(), &["check", "--no-config"]);
    assert_eq!(o.code, 1);
    let out = &o.stdout;
    assert!(
        out.contains("medium[unbounded-queue] PY003: `asyncio.Queue`"),
        "{out}"
    );
    assert!(
        out.contains("high[blocking-in-async] PY002: `time.sleep`"),
        "{out}"
    );
    assert!(out.contains("--> a.py:5:5"), "{out}");
    assert!(out.contains("5 |     time.sleep(1)"), "{out}");
    assert!(
        out.contains("^^^^^^^^^^^^^ blocking-call-in-async"),
        "{out}"
    );
    assert!(out.contains("fix: "), "{out}");
    assert!(!out.contains('\x1b'), "no color when not asked: {out:?}");
    let last = out.lines().last().unwrap();
    assert!(last.starts_with("Scanned 1 file in "), "{last}");
    assert!(
        last.contains("2 findings (0 critical, 1 high, 1 medium, 0 low)."),
        "{last}"
    );
    let o = toy(t.path(), &["check", "--no-config", "--quiet"]);
    assert!(!o.stdout.contains("Scanned"), "{o:?}");
}

#[test]
fn concise_output_is_one_line_per_finding() {
    let t = tree(&[("a.py", APP), ("bad.py", "x = 1\nTOY_SYNTAX\n")]);
    let o = toy(t.path(), &["check", "--no-config", "--format", "concise"]);
    assert_eq!(o.code, 1);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{o:?}");
    assert!(
        lines[0].starts_with("a.py:2:8: PY003 [medium] `asyncio.Queue`"),
        "{o:?}"
    );
    assert!(
        lines[1].starts_with("a.py:5:5: PY002 [high] `time.sleep`"),
        "{o:?}"
    );
    assert!(lines[2].starts_with("Scanned 2 files in "), "{o:?}");
    // Notices go to stderr, as with text.
    assert!(o.stderr.contains("bad.py:2:1: syntax error"), "{o:?}");
    let o = toy(
        t.path(),
        &["check", "--no-config", "--format", "concise", "--quiet"],
    );
    assert_eq!(o.stdout.lines().count(), 2, "{o:?}");
    assert_eq!(o.stderr, "", "{o:?}");
    let o = toy(
        t.path(),
        &[
            "check",
            "--no-config",
            "--format",
            "concise",
            "--statistics",
        ],
    );
    assert!(o.stdout.contains("1  PY002"), "{o:?}");
}

#[test]
fn output_file_takes_the_report_instead_of_stdout() {
    let t = tree(&[("a.py", APP)]);
    let o = toy(
        t.path(),
        &[
            "check",
            "--no-config",
            "--format",
            "json",
            "-o",
            "out/r.json",
        ],
    );
    assert_eq!(o.code, 2, "the directory does not exist: {o:?}");
    assert!(
        o.stderr.contains("cannot write the report to out/r.json"),
        "{o:?}"
    );
    std::fs::create_dir(t.join("out")).unwrap();
    let o = toy(
        t.path(),
        &[
            "check",
            "--no-config",
            "--format",
            "json",
            "-o",
            "out/r.json",
        ],
    );
    assert_eq!(o.code, 1, "{o:?}");
    assert_eq!(o.stdout, "");
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(t.join("out/r.json")).unwrap()).unwrap();
    assert_eq!(places(&v), ["a.py:2:PY003", "a.py:5:PY002"]);
}

#[test]
fn statistics_count_per_rule() {
    let t = tree(&[
        ("a.py", APP),
        (
            "b.py",
            "async def h():\n    time.sleep(1)\n    time.sleep(2)\n",
        ),
    ]);
    let o = toy(t.path(), &["check", "--no-config", "--statistics"]);
    assert_eq!(o.code, 1);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert!(
        lines[0].contains("count") && lines[0].contains("rule"),
        "{o:?}"
    );
    assert!(lines[1].trim_start().starts_with("3  PY002"), "{o:?}");
    assert!(lines[2].trim_start().starts_with("1  PY003"), "{o:?}");
    let (_, v) = json(&t, &["--statistics"]);
    assert_eq!(
        v["statistics"][0],
        serde_json::json!({"rule": "PY002", "rule_name": "blocking-call-in-async", "category": "blocking-in-async", "severity": "high", "count": 3})
    );
    assert!(v.get("findings").is_none());
}

#[test]
fn sarif_results_reference_rules_and_carry_fingerprints() {
    let t = tree(&[("dir with space/a.py", APP)]);
    let o = toy(
        t.path(),
        &[
            "check",
            "--no-config",
            "--format",
            "sarif",
            "--select",
            "PY003,PY002",
        ],
    );
    let v = o.json();
    let run = &v["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    for r in results {
        let idx = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[idx]["id"], r["ruleId"]);
        assert_eq!(
            r["partialFingerprints"]["unsnarl/v1"]
                .as_str()
                .unwrap()
                .len(),
            32
        );
        let loc = &r["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], "dir%20with%20space/a.py");
        assert_eq!(loc["artifactLocation"]["uriBaseId"], "%SRCROOT%");
    }
    assert_eq!(results[0]["level"], "warning");
    assert_eq!(results[0]["properties"]["category"], "unbounded-queue");
    assert_eq!(results[1]["level"], "error");
    assert_eq!(
        results[1]["locations"][0]["physicalLocation"]["region"],
        serde_json::json!({"startLine": 5, "startColumn": 5, "endLine": 5, "endColumn": 18})
    );
    assert!(v.to_string().find("timestamp").is_none());
}

#[test]
fn github_annotations_are_escaped() {
    let t = tree(&[("we,ird:name.py", APP)]);
    let o = toy(t.path(), &["check", "--no-config", "--format", "github"]);
    assert_eq!(o.code, 1);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{o:?}");
    assert!(lines[0].starts_with("::warning file=we%2Cird%3Aname.py,line=2,col=8,endLine=2,endColumn=23,title=PY003 unbounded-queue::`asyncio.Queue`"), "{}", lines[0]);
    assert!(lines[1].starts_with("::error file=we%2Cird%3Aname.py,line=5,col=5,endLine=5,endColumn=18,title=PY002 blocking-in-async::"), "{}", lines[1]);
    assert!(lines[1].contains("%0Afix: "), "{}", lines[1]);
}

#[test]
fn output_is_identical_across_thread_counts_and_runs() {
    let t = Tree::new();
    for i in 0..60 {
        t.write(&format!("p{}/m{i}.py", i % 7), format!("q{i} = asyncio.Queue()\nasync def h{i}():\n    time.sleep({i})\n    time.sleep({i})\n"));
    }
    t.write("boom.py", "TOY_PANIC").write("bin.py", "\0");
    for format in ["json", "sarif", "text", "concise", "github"] {
        let run = |j: &str| {
            let o = toy(t.path(), &["check", "--no-config", "--format", format, j]);
            o.stdout
                .lines()
                .map(|l| {
                    if l.contains("elapsed_ms") || l.starts_with("Scanned") {
                        ""
                    } else {
                        l
                    }
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        let one = run("-j1");
        assert_eq!(one, run("-j4"), "{format}");
        assert_eq!(one, run("-j3"), "{format}");
    }
}

#[test]
fn fingerprints_survive_line_moves_and_tell_duplicates_apart() {
    let src = "async def h():\n    time.sleep(1)\n    time.sleep(1)\n";
    let t = tree(&[("a.py", src)]);
    let fps = |t: &Tree| -> Vec<String> {
        json(t, &[]).1["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["fingerprint"].as_str().unwrap().to_string())
            .collect()
    };
    let before = fps(&t);
    assert_eq!(before.len(), 2);
    assert_ne!(before[0], before[1]);
    t.write("a.py", format!("# a new comment\n\n{src}"));
    assert_eq!(fps(&t), before);
    t.write(
        "a.py",
        src.replace(
            "time.sleep(1)\n    time.sleep(1)",
            "time.sleep(1); time.sleep(1)",
        ),
    );
    let same_line = fps(&t);
    assert_ne!(same_line[0], same_line[1]);
}
