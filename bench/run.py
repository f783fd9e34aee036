#!/usr/bin/env python3
"""unsnarl's benchmark runner (issue 7). Python 3.11, standard library only.

    python3 bench/run.py                      # everything: corpus, peers, build, all pairs, scaling
    python3 bench/run.py --corpora python --peers ruff,rg --runs 3   # a quick check
    python3 bench/run.py --help

Steps:
1. builds or reuses the corpora (bench/corpus.sh; cached outside the tree);
2. installs the peers, pinned, into a cache folder (pip in a venv: ruff,
   flake8 + flake8-async, semgrep; npm: oxlint, @ast-grep/cli; ripgrep from
   apt-get, or cargo install when apt-get is not usable);
3. builds unsnarl in release mode (honours CARGO_TARGET_DIR);
4. checks, untimed, how many files each tool reads in each corpus (each tool's
   own count), so that a tool silently skipping files shows up in the table;
5. for each corpus and each peer, alternates unsnarl and the peer (A B A B ...:
   warm-up runs, then the counted runs) and records wall time, CPU time
   (user + sys of the process and its reaped descendants, from os.wait4) and
   peak RSS (ru_maxrss: the largest single process of the tree, not a sum);
6. the scaling rows on the "all" tree: -j1 vs -j2, the "double" tree vs the
   "all" tree, peak RSS;
7. prints the Markdown table with the machine facts (cores, memory, load
   average, versions) and writes it to bench/results/latest.md, and every
   sample to bench/results/latest.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
PEERS_DIR = BENCH / "peers"

# Peer pins (what was measured). Change them here only.
PIP_PINS = ["ruff==0.17.6", "flake8==7.5.0", "flake8-async==26.8.1", "semgrep==1.185.0"]
NPM_PINS = ["oxlint@1.94.0", "@ast-grep/cli@0.51.1"]

CORPORA = ["python", "jsts", "go", "rust"]
# The keyword ripgrep counts in each corpus (the floor: the cost of reading
# the bytes).
KEYWORD = {"python": "async", "jsts": "async", "go": "chan", "rust": "spawn"}
# The languages of semgrep's rule file that each corpus holds.
SEMGREP_LANGUAGES = {"python": {"python"}, "jsts": {"javascript", "typescript"},
                     "go": {"go"}, "rust": {"rust"}}
PEERS_FOR = {
    "python": ["ruff", "flake8", "semgrep", "ast-grep", "rg"],
    "jsts": ["oxlint", "semgrep", "ast-grep", "rg"],
    "go": ["semgrep", "ast-grep", "rg"],
    "rust": ["semgrep", "ast-grep", "rg"],
}
ALL_PEERS = ["ruff", "flake8", "semgrep", "ast-grep", "oxlint", "rg"]
# Targets of issue 7 on the ratio unsnarl/peer of median wall times.
TARGETS = {"ruff": 1.0, "semgrep": 0.1, "ast-grep": 1.0, "rg": 3.0}
TARGET_J2_SPEEDUP = 1.7
TARGET_DOUBLE = 2.1
TARGET_RSS_MB = 300.0

# No network, no telemetry, no colors.
BASE_ENV = {
    "NO_COLOR": "1",
    "SEMGREP_ENABLE_VERSION_CHECK": "0",
    "SEMGREP_SEND_METRICS": "off",
}


def log(msg: str) -> None:
    print(f"== {msg}", file=sys.stderr, flush=True)


def die(msg: str) -> None:
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(2)


def run_quiet(argv: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, **kw)


def loadavg() -> tuple[float, float, float]:
    return os.getloadavg()


# --- measuring one process ---------------------------------------------------


@dataclass
class Sample:
    wall: float  # seconds
    cpu: float  # seconds, user + sys
    rss_mb: float  # peak RSS, MB (10^6 bytes)
    code: int


def measure(argv: list[str], env: dict, timeout: float, cwd: Path | None = None) -> tuple[Sample, str]:
    """Runs argv once with stdout to /dev/null; returns the sample and the
    tail of stderr."""
    with open(os.devnull, "wb") as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                             env=env, cwd=cwd, start_new_session=True)

        def kill():
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, ru = os.wait4(p.pid, 0)
        finally:
            timer.cancel()
        t1 = time.perf_counter()
        code = os.waitstatus_to_exitcode(status)
        p.returncode = code  # reaped here, not by Popen
        err.seek(0)
        tail = err.read()[-2000:].decode("utf-8", "replace")
    # ru_maxrss is in KiB on Linux.
    return Sample(t1 - t0, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024 / 1e6, code), tail


# --- tools -------------------------------------------------------------------


@dataclass
class Tool:
    name: str  # key: unsnarl, ruff, ...
    label: str  # shown in the table
    argv: list[str]
    ok_codes: tuple = (0, 1)
    env: dict = field(default_factory=dict)


class Env:
    """Where things are: the cache folders, the binaries."""

    def __init__(self, args):
        self.args = args
        self.corpus = Path(args.corpus_dir).expanduser()
        self.trees = self.corpus / "trees"
        self.tools = Path(args.tools_dir).expanduser()
        self.venv = self.tools / "venv"
        self.npm = self.tools / "npm"
        self.unsnarl: Path | None = None
        self.rg: str | None = None
        self.env = dict(os.environ)
        self.env.update(BASE_ENV)

    # -- install ---------------------------------------------------------------

    def install_peers(self, wanted: set[str]) -> None:
        self.tools.mkdir(parents=True, exist_ok=True)
        if wanted & {"ruff", "flake8", "semgrep"}:
            stamp = self.venv / ".unsnarl-bench-pins"
            if not stamp.exists() or stamp.read_text() != "\n".join(PIP_PINS):
                log(f"installing {' '.join(PIP_PINS)} into {self.venv}")
                if not (self.venv / "bin" / "python").exists():
                    subprocess.run([sys.executable, "-m", "venv", str(self.venv)], check=True)
                subprocess.run([str(self.venv / "bin" / "python"), "-m", "pip", "install",
                                "--disable-pip-version-check", "-q", *PIP_PINS], check=True)
                stamp.write_text("\n".join(PIP_PINS))
        if wanted & {"oxlint", "ast-grep"}:
            stamp = self.npm / ".unsnarl-bench-pins"
            if not stamp.exists() or stamp.read_text() != "\n".join(NPM_PINS):
                log(f"installing {' '.join(NPM_PINS)} into {self.npm}")
                self.npm.mkdir(parents=True, exist_ok=True)
                subprocess.run(["npm", "install", "--prefix", str(self.npm), "--no-audit",
                                "--no-fund", "--no-save", *NPM_PINS], check=True, cwd=self.npm)
                stamp.write_text("\n".join(NPM_PINS))
        if "rg" in wanted:
            self.rg = shutil.which("rg") or str(self.tools / "cargo" / "bin" / "rg")
            if not Path(self.rg).exists():
                if shutil.which("apt-get") and os.geteuid() == 0:
                    log("installing ripgrep with apt-get")
                    r = subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", "ripgrep"],
                                       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
                    if r.returncode != 0:
                        subprocess.run(["apt-get", "update"], check=False)
                        subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", "ripgrep"],
                                       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
                self.rg = shutil.which("rg")
                if not self.rg:
                    log("installing ripgrep with cargo install")
                    subprocess.run(["cargo", "install", "--locked", "ripgrep", "--root",
                                    str(self.tools / "cargo")], check=True)
                    self.rg = str(self.tools / "cargo" / "bin" / "rg")

    def ast_grep(self) -> str:
        # The platform package holds the native binary; prefer it over the
        # wrapper the main package may install.
        for p in sorted((self.npm / "node_modules" / "@ast-grep").glob("cli-*/ast-grep")):
            return str(p)
        return str(self.npm / "node_modules" / ".bin" / "ast-grep")

    def oxlint(self) -> str:
        return str(self.npm / "node_modules" / ".bin" / "oxlint")

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)

    # -- unsnarl -------------------------------------------------------------------

    def build_unsnarl(self) -> None:
        meta = json.loads(run_quiet(["cargo", "metadata", "--no-deps", "--format-version", "1"],
                                    cwd=ROOT, check=True).stdout)
        target = Path(meta["target_directory"])
        if not self.args.skip_build:
            log("building unsnarl (cargo build --release --locked --bin unsnarl)")
            subprocess.run(["cargo", "build", "--release", "--locked", "--bin", "unsnarl"],
                           cwd=ROOT, check=True)
        self.unsnarl = target / "release" / "unsnarl"
        if not self.unsnarl.exists():
            die(f"{self.unsnarl} does not exist (build it, or drop --skip-build)")

    # -- the command lines ---------------------------------------------------------

    def unsnarl_tool(self, tree: Path, threads: int | None = None, label: str = "unsnarl") -> Tool:
        argv = [str(self.unsnarl), "check", "--no-config", "--no-cache", "--include-generated"]
        if threads:
            argv += ["-j", str(threads)]
        return Tool("unsnarl", label, argv + [str(tree)])

    def peer(self, name: str, corpus: str, tree: Path) -> Tool:
        if name == "ruff":
            return Tool(name, "ruff check --select ASYNC",
                        [self.bin("ruff"), "check", "--isolated", "--no-cache", "--select", "ASYNC", str(tree)])
        if name == "flake8":
            return Tool(name, "flake8 --select ASYNC (flake8-async)",
                        [self.bin("flake8"), "--isolated", "--select", "ASYNC", str(tree)])
        if name == "semgrep":
            return Tool(name, f"semgrep ({semgrep_rule_count(corpus)} rules)",
                        [self.bin("semgrep"), "scan", "--config", str(PEERS_DIR / "semgrep.yml"),
                         "--metrics=off", "--disable-version-check", "--oss-only", "--no-git-ignore",
                         "--x-ignore-semgrepignore-files", str(tree)])
        if name == "ast-grep":
            return Tool(name, "ast-grep scan (1 pattern per language)",
                        [self.ast_grep(), "scan", "--rule", str(PEERS_DIR / "ast-grep.yml"), str(tree)])
        if name == "oxlint":
            return Tool(name, "oxlint (default rules)", [self.oxlint(), str(tree)])
        if name == "rg":
            kw = KEYWORD[corpus]
            return Tool(name, f"rg -c {kw}", [self.rg or "rg", "-c", kw, str(tree)])
        raise ValueError(name)

    def version(self, name: str) -> str:
        argv = {
            "unsnarl": [str(self.unsnarl), "--version"],
            "ruff": [self.bin("ruff"), "--version"],
            "flake8": [self.bin("flake8"), "--version"],
            "semgrep": [self.bin("semgrep"), "--version", "--disable-version-check"],
            "ast-grep": [self.ast_grep(), "--version"],
            "oxlint": [self.oxlint(), "--version"],  # prints "Version: X"
            "rg": [self.rg or "rg", "--version"],
        }[name]
        try:
            r = run_quiet(argv, env=self.env, timeout=120)
            out = (r.stdout or r.stderr).strip().splitlines()
            first = out[0].strip() if out else "?"
            if name == "oxlint":
                return f"oxlint {first.removeprefix('Version: ')}"
            return ("flake8 " + " ".join(l.strip() for l in out)) if name == "flake8" else first
        except Exception as e:  # noqa: BLE001 - shown in the report
            return f"unknown ({e})"


def semgrep_rule_count(corpus: str) -> int:
    """How many rules of bench/peers/semgrep.yml apply to the corpus's
    languages (read from each rule's `languages: [...]` line: the file is
    written that way, and the runner has no YAML parser)."""
    wanted = SEMGREP_LANGUAGES.get(corpus, set())
    n = 0
    for line in (PEERS_DIR / "semgrep.yml").read_text().splitlines():
        m = re.match(r"\s*languages:\s*\[(.*)\]", line)
        if m and wanted & {x.strip() for x in m.group(1).split(",")}:
            n += 1
    return n


# --- how many files each tool reads (untimed) ----------------------------------


def count_tree_files(tree: Path, exts: tuple[str, ...] | None = None) -> int:
    n = 0
    for _, _, files in os.walk(tree):
        n += sum(1 for f in files if not f.startswith(".") and (exts is None or f.endswith(exts)))
    return n


def files_seen(e: Env, tool: Tool, corpus: str, tree: Path) -> tuple[str, str]:
    """Runs the tool once in a mode that tells how many files it read.
    Returns (count or '?', note)."""
    try:
        if tool.name == "unsnarl":
            r = run_quiet(tool.argv[:-1] + ["--format", "json", str(tree)], env=e.env, timeout=e.args.timeout)
            s = json.loads(r.stdout)["summary"]
            note = []
            if s["files_skipped"]["total"]:
                note.append(f"skipped {s['files_skipped']['total']}")
            if s["files_with_errors"] or s["internal_errors"]:
                note.append(f"errors {s['files_with_errors']}, internal {s['internal_errors']}")
            if s["files_with_syntax_errors"]:
                note.append(f"{s['files_with_syntax_errors']} with syntax errors")
            note.append(f"{s['findings_total']} findings, {s['rules_run']} rules")
            return str(s["files_scanned"]), "; ".join(note)
        if tool.name == "ruff":
            r = run_quiet(tool.argv[:-1] + ["--show-files", str(tree)], env=e.env, timeout=e.args.timeout)
            return str(sum(1 for l in r.stdout.splitlines() if l.strip().endswith((".py", ".pyi")))), ""
        if tool.name == "flake8":
            r = run_quiet(tool.argv[:-1] + ["--benchmark", str(tree)], env=e.env, timeout=e.args.timeout)
            m = re.search(r"^\s*([\d.]+)\s+total files processed\s*$", r.stdout, re.M)
            return (str(int(float(m.group(1)))) if m else "?"), ""
        if tool.name == "semgrep":
            r = run_quiet(tool.argv[:-1] + ["--json", str(tree)], env=e.env, timeout=e.args.timeout)
            j = json.loads(r.stdout)
            scanned = len(j.get("paths", {}).get("scanned", []))
            errs = j.get("errors", [])
            kinds: dict[str, int] = {}
            for x in errs:
                k = x.get("type", "error")
                k = k[0] if isinstance(k, list) else k
                kinds[str(k)] = kinds.get(str(k), 0) + 1
            note = ", ".join(f"{v} {k}" for k, v in sorted(kinds.items()))
            return str(scanned), (f"errors: {note}" if note else "")
        if tool.name == "ast-grep":
            r = run_quiet(tool.argv[:-1] + ["--inspect", "summary", str(tree)], env=e.env, timeout=e.args.timeout)
            m = re.search(r"scannedFileCount=(\d+)", r.stderr)
            return (m.group(1) if m else "?"), ""
        if tool.name == "oxlint":
            r = run_quiet(tool.argv, env=e.env, timeout=e.args.timeout)
            m = re.search(r"on (\d+) files?", r.stdout + r.stderr)
            return (m.group(1) if m else "?"), ""
        if tool.name == "rg":
            r = run_quiet([tool.argv[0], "--files", str(tree)], env=e.env, timeout=e.args.timeout)
            return str(len(r.stdout.splitlines())), ""
    except Exception as ex:  # noqa: BLE001 - shown in the report
        return "?", f"count failed: {ex}"
    return "?", ""


# --- alternating runs ----------------------------------------------------------


@dataclass
class Series:
    tool: Tool
    samples: list[Sample] = field(default_factory=list)
    warmups: list[Sample] = field(default_factory=list)
    failure: str = ""
    files: str = "?"
    note: str = ""

    def med(self, attr: str) -> float:
        return statistics.median(getattr(s, attr) for s in self.samples)

    def rng(self, attr: str) -> tuple[float, float]:
        v = [getattr(s, attr) for s in self.samples]
        return min(v), max(v)


def alternate(e: Env, a: Tool, b: Tool, what: str) -> tuple[Series, Series, tuple, tuple]:
    """A B A B ...: warm-ups, then counted runs. Returns both series and the
    load average before and after. A run that fails (exit code not in the
    tool's ok codes, or killed at the timeout) ends the pair."""
    sa, sb = Series(a), Series(b)
    before = loadavg()
    for i in range(e.args.warmup + e.args.runs):
        warm = i < e.args.warmup
        walls = []
        for s in (sa, sb):
            sample, tail = measure(s.tool.argv, e.env, e.args.timeout)
            if sample.code not in s.tool.ok_codes:
                s.failure = f"exit code {sample.code} after {sample.wall:.1f} s: {tail.strip()[-400:]}"
                log(f"{what}: {s.tool.label} failed: {s.failure}")
                return sa, sb, before, loadavg()
            (s.warmups if warm else s.samples).append(sample)
            walls.append(f"{s.tool.label} {sample.wall:.2f} s (CPU {sample.cpu:.2f} s, {sample.rss_mb:.0f} MB)")
        phase = "warm-up" if warm else f"run {i - e.args.warmup + 1}/{e.args.runs}"
        log(f"{what}: {phase}: " + "; ".join(walls))
    return sa, sb, before, loadavg()


# --- the report ----------------------------------------------------------------


def fmt_s(x: float) -> str:
    return f"{x:.2f} s" if x < 100 else f"{x:.0f} s"


def cell_wall(s: Series) -> str:
    if s.failure or not s.samples:
        return "failed"
    lo, hi = s.rng("wall")
    return f"{fmt_s(s.med('wall'))} ({lo:.2f}–{hi:.2f})"


def cell_cpu(s: Series) -> str:
    return "" if s.failure or not s.samples else fmt_s(s.med("cpu"))


def cell_rss(s: Series) -> str:
    return "" if s.failure or not s.samples else f"{s.med('rss_mb'):.0f} MB"


def machine_facts(e: Env, tools: list[str]) -> list[str]:
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    commit = run_quiet(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT).stdout.strip() or "?"
    dirty = run_quiet(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT).stdout.strip()
    facts = [
        f"- machine: {os.cpu_count()} cores ({cpu}), {mem} memory, {platform.system()} {platform.release()}",
        f"- unsnarl: {e.version('unsnarl')} at commit {commit}{' (with uncommitted changes)' if dirty else ''}",
    ]
    for t in tools:
        facts.append(f"- {t}: {e.version(t)}")
    return facts


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("**met**" if ok else "**missed**")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", default=",".join(CORPORA), help="comma separated: python,jsts,go,rust")
    ap.add_argument("--peers", default=",".join(ALL_PEERS), help="comma separated: " + ",".join(ALL_PEERS))
    ap.add_argument("--runs", type=int, default=5, help="counted runs per tool and pair (default 5)")
    ap.add_argument("--warmup", type=int, default=1, help="warm-up runs per tool and pair (default 1)")
    ap.add_argument("--no-scaling", action="store_true", help="skip the scaling rows (-j1/-j2, double, RSS)")
    ap.add_argument("--only-scaling", action="store_true", help="only the scaling rows")
    ap.add_argument("--no-counts", action="store_true", help="skip the untimed files-seen check")
    ap.add_argument("--skip-build", action="store_true", help="use the unsnarl binary already built")
    ap.add_argument("--skip-corpus", action="store_true", help="do not run bench/corpus.sh (the trees must exist)")
    ap.add_argument("--corpus-dir", default=os.environ.get("CORPUS", "~/.cache/unsnarl-corpus"))
    ap.add_argument("--tools-dir", default="~/.cache/unsnarl-bench/tools")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds for one run before it is killed")
    ap.add_argument("--out", default=str(BENCH / "results" / "latest.md"))
    args = ap.parse_args()
    if args.runs < 1 or args.warmup < 0:
        die("--runs must be at least 1 and --warmup at least 0")

    corpora = [c for c in args.corpora.split(",") if c]
    peers = [p for p in args.peers.split(",") if p]
    for c in corpora:
        if c not in CORPORA:
            die(f"unknown corpus {c!r} (one of {', '.join(CORPORA)})")
    for p in peers:
        if p not in ALL_PEERS:
            die(f"unknown peer {p!r} (one of {', '.join(ALL_PEERS)})")
    if args.only_scaling:
        corpora, peers = [], []

    e = Env(args)
    started = dt.datetime.now(dt.timezone.utc)
    load_start = loadavg()

    if not args.skip_corpus:
        log("corpus: bash bench/corpus.sh")
        subprocess.run(["bash", str(BENCH / "corpus.sh")], check=True, env={**os.environ, "CORPUS": str(e.corpus)})
    manifest_path = e.trees / "manifest.json"
    if not manifest_path.exists():
        die(f"{manifest_path} is missing: run bash bench/corpus.sh")
    manifest = json.loads(manifest_path.read_text())["trees"]

    used_peers = sorted({p for c in corpora for p in PEERS_FOR[c] if p in peers}, key=ALL_PEERS.index)
    e.install_peers(set(used_peers))
    e.build_unsnarl()

    # The schedule: the cheap pairs of every corpus first, then the scaling
    # rows, then the expensive peers (flake8, semgrep), so that an
    # interrupted run still has the most of the table. The report is
    # rewritten after every pair.
    results = []  # (corpus, Series unsnarl, Series peer, load before, after)
    scaling = {}
    facts = machine_facts(e, used_peers)

    def write_report(final: bool) -> str:
        load_end = loadavg()
        results.sort(key=lambda r: (CORPORA.index(r[0]), ALL_PEERS.index(r[2].tool.name)))
        lines = []
        lines.append(f"# unsnarl benchmark, {started:%Y-%m-%d %H:%M} UTC")
        if not final:
            lines.append("")
            lines.append(f"**Partial: the run was still going at {dt.datetime.now(dt.timezone.utc):%H:%M} UTC.**")
        lines.append("")
        lines.append(f"Command: `python3 bench/run.py {' '.join(sys.argv[1:])}`".replace("`python3 bench/run.py `", "`python3 bench/run.py`"))
        lines.append("")
        lines.append(f"Each pair alternates unsnarl and the peer on the same tree (A B A B ...): "
                     f"{args.warmup} warm-up run{'s' if args.warmup != 1 else ''} each, then {args.runs} counted run{'s' if args.runs != 1 else ''} each; "
                     "wall is the median (min–max), CPU is user+sys of the process tree (median), "
                     "RSS is the median peak RSS of the largest process of the tree. "
                     "Ratios are unsnarl/peer of the median wall times of the same pair (in parentheses, of the median CPU times); "
                     "the targets are on wall time.")
        lines.append("")
        lines.append(f"Load average (1, 5, 15 min) at start {load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f}, "
                     f"at end {load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f}, "
                     f"on {os.cpu_count()} cores: a load above the core count means other processes were competing "
                     "for the CPU and wall times are noisy (CPU times much less so).")
        lines.append("")
        lines.extend(facts)
        lines.append("")
        targets = []  # (text, ok)
        if results:
            lines.append("| corpus | tool | wall | CPU | peak RSS | files read | unsnarl/peer | target | load 1 min |")
            lines.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
            for c, sa, sb, l0, l1 in results:
                m = manifest.get(c, {})
                cname = f"{c} ({m.get('files', 0):,} files, {m.get('bytes', 0) / 1e6:.1f} MB)"
                p = sb.tool.name
                ratio = None
                if sa.samples and sb.samples:
                    ratio = sa.med("wall") / sb.med("wall")
                tgt = TARGETS.get(p)
                if p == "ruff" and c != "python":
                    tgt = None
                ok = None if (tgt is None or ratio is None) else ratio <= tgt
                tcell = "" if tgt is None else f"≤ {tgt:g}: {verdict(ok)}"
                # The CPU ratio too: much less sensitive to a loaded machine.
                rcell = "" if ratio is None else f"{ratio:.2f} (CPU {sa.med('cpu') / max(sb.med('cpu'), 1e-9):.2f})"
                if tgt is not None:
                    targets.append((f"{c}: unsnarl ≤ {tgt:g}× {sb.tool.label}",
                                    ok, "" if ratio is None else f"{ratio:.2f}×"))
                files_b = sb.files + (f" ({sb.note})" if sb.note else "")
                files_a = sa.files + (f" ({sa.note})" if sa.note else "")
                lines.append(f"| {cname} | {sb.tool.label} | {cell_wall(sb) if not sb.failure else 'failed: ' + sb.failure.replace('|', '/')[:200]} "
                             f"| {cell_cpu(sb)} | {cell_rss(sb)} | {files_b} | | | {l0[0]:.1f} → {l1[0]:.1f} |")
                lines.append(f"| | {sa.tool.label} | {cell_wall(sa) if not sa.failure else 'failed: ' + sa.failure.replace('|', '/')[:200]} "
                             f"| {cell_cpu(sa)} | {cell_rss(sa)} | {files_a} | {rcell} | {tcell} | |")
            lines.append("")
        if scaling:
            ma = manifest.get("all", {})
            md = manifest.get("double", {})
            lines.append(f"Scaling on the \"all\" tree ({ma.get('files', 0):,} files, {ma.get('bytes', 0) / 1e6:.1f} MB) "
                         f"and the \"double\" tree ({md.get('files', 0):,} files, {md.get('bytes', 0) / 1e6:.1f} MB):")
            lines.append("")
            lines.append("| measure | A | B | result | target | load 1 min |")
            lines.append("| --- | --- | --- | --- | --- | --- |")
            s1, s2, l0, l1 = scaling["threads"]
            if s1.samples and s2.samples:
                sp = s1.med("wall") / s2.med("wall")
                ok = sp >= TARGET_J2_SPEEDUP
                lines.append(f"| 2 threads vs 1 | -j1: {cell_wall(s1)}, CPU {cell_cpu(s1)} | -j2: {cell_wall(s2)}, CPU {cell_cpu(s2)} "
                             f"| {sp:.2f}× faster | ≥ {TARGET_J2_SPEEDUP}×: {verdict(ok)} | {l0[0]:.1f} → {l1[0]:.1f} |")
                targets.append((f"all: -j2 ≥ {TARGET_J2_SPEEDUP}× faster than -j1", ok, f"{sp:.2f}×"))
            else:
                lines.append(f"| 2 threads vs 1 | failed: {(s1.failure or s2.failure)[:200]} | | | | |")
            d1, d2, l0, l1 = scaling.get("double", (Series(s1.tool), Series(s2.tool), l1, l1))
            if "double" not in scaling:
                pass
            elif d1.samples and d2.samples:
                dr = d2.med("wall") / d1.med("wall")
                ok = dr <= TARGET_DOUBLE
                lines.append(f"| double vs all | all: {cell_wall(d1)}, CPU {cell_cpu(d1)} | double: {cell_wall(d2)}, CPU {cell_cpu(d2)} "
                             f"| {dr:.2f}× the time (CPU {d2.med('cpu') / d1.med('cpu'):.2f}×) | ≤ {TARGET_DOUBLE}×: {verdict(ok)} | {l0[0]:.1f} → {l1[0]:.1f} |")
                targets.append((f"double tree ≤ {TARGET_DOUBLE}× the time of the all tree", ok, f"{dr:.2f}×"))
                rss = [s.rss_mb for s in d1.samples + s2.samples]
                rmax = max(rss)
                ok = rmax <= TARGET_RSS_MB
                lines.append(f"| peak RSS, all tree | max of {len(rss)} runs (-j2 and default threads): {rmax:.0f} MB | "
                             f"double tree: {max(s.rss_mb for s in d2.samples):.0f} MB | {rmax:.0f} MB "
                             f"| ≤ {TARGET_RSS_MB:.0f} MB: {verdict(ok)} | |")
                targets.append((f"peak RSS on the all tree ≤ {TARGET_RSS_MB:.0f} MB", ok, f"{rmax:.0f} MB"))
            else:
                lines.append(f"| double vs all | failed: {(d1.failure or d2.failure)[:200]} | | | | |")
            lines.append("")
        if targets:
            lines.append("Targets:")
            lines.append("")
            for text, ok, val in targets:
                lines.append(f"- {text}: {val or 'no result'} — {verdict(ok)}")
            lines.append("")
        report = "\n".join(lines)
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(report)
        raw = {
            "started": started.isoformat(),
            "argv": sys.argv[1:],
            "load_start": load_start,
            "load_end": load_end,
            "pairs": [
                {"corpus": c, "load_before": l0, "load_after": l1,
                 **{k: {"label": s.tool.label, "argv": s.tool.argv, "files": s.files, "note": s.note,
                        "failure": s.failure, "warmups": [vars(x) for x in s.warmups],
                        "samples": [vars(x) for x in s.samples]} for k, s in (("unsnarl", sa), ("peer", sb))}}
                for c, sa, sb, l0, l1 in results
            ],
            "scaling": {
                k: {"load_before": l0, "load_after": l1,
                    **{n: {"label": s.tool.label, "argv": s.tool.argv, "failure": s.failure,
                           "samples": [vars(x) for x in s.samples]} for n, s in (("a", a), ("b", b))}}
                for k, (a, b, l0, l1) in scaling.items()
            },
        }
        out.with_suffix(".json").write_text(json.dumps(raw, indent=1))
        return report

    def pair(c: str, p: str) -> None:
        tree = e.trees / c
        a = e.unsnarl_tool(tree, label=f"unsnarl (vs {p})")
        b = e.peer(p, c, tree)
        fa = fb = ("?", "")
        if not args.no_counts:
            log(f"{c}: counting the files unsnarl and {p} read")
            fa = files_seen(e, a, c, tree)
            fb = files_seen(e, b, c, tree)
        sa, sb, l0, l1 = alternate(e, a, b, f"{c} / {p}")
        sa.files, sa.note = fa
        sb.files, sb.note = fb
        results.append((c, sa, sb, l0, l1))
        write_report(final=False)

    expensive = ("flake8", "semgrep")
    for c in corpora:
        for p in PEERS_FOR[c]:
            if p in peers and p not in expensive:
                pair(c, p)
    if not args.no_scaling:
        all_tree, double_tree = e.trees / "all", e.trees / "double"
        j1 = e.unsnarl_tool(all_tree, threads=1, label="unsnarl -j1 (all)")
        j2 = e.unsnarl_tool(all_tree, threads=2, label="unsnarl -j2 (all)")
        scaling["threads"] = alternate(e, j1, j2, "all / -j1 vs -j2")
        write_report(final=False)
        one = e.unsnarl_tool(all_tree, label="unsnarl (all)")
        two = e.unsnarl_tool(double_tree, label="unsnarl (double)")
        scaling["double"] = alternate(e, one, two, "all / all vs double")
        write_report(final=False)
    for p in expensive:
        for c in corpora:
            if p in peers and p in PEERS_FOR[c]:
                pair(c, p)
    print(write_report(final=True))
    log(f"wrote {args.out} and {Path(args.out).with_suffix('.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
