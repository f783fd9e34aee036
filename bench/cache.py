#!/usr/bin/env python3
"""What the results cache saves. Python 3.11, standard library only.

    python3 bench/cache.py                         # every corpus, 5 rounds
    python3 bench/cache.py --corpora python --runs 3

Uses the corpora and peers bench/run.py set up (run it, or bench/corpus.sh,
first) and the release binary (build it with `cargo build --release`).
Each round, on each corpus, with a cache directory of its own:

    unsnarl --no-cache      (what bench/run.py measures)
    unsnarl, empty cache    (the first run: analyzes and writes the cache)
    unsnarl, warm cache     (nothing changed since)
    unsnarl, one file edited (a comment appended to the largest file)

and on the Python corpus ruff's ASYNC rules with its own cache warm (the
everyday case of both tools). Prints the medians: wall time, CPU time (user
+ sys) and peak RSS, and each cache's size. Every run must report what the
run without the cache reports (checked on the JSON report, untimed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MB) of one run; its output is discarded."""
    start = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit(f"{' '.join(argv)}: exit {code}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def report(argv: list[str], cwd: Path, env: dict[str, str]) -> dict:
    out = subprocess.run(argv + ["--format", "json"], cwd=cwd, env=env, capture_output=True, text=True)
    v = json.loads(out.stdout)
    v["summary"]["elapsed_ms"] = 0
    cached = v["summary"].pop("files_cached")
    v["cached"] = cached
    return v


def du(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", default="python,jsts,go,rust")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--corpus-dir", default=os.environ.get("CORPUS", "~/.cache/unsnarl-corpus"))
    ap.add_argument("--unsnarl", default=str(Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release/unsnarl"))
    ap.add_argument("--ruff", default=str(Path("~/.cache/unsnarl-bench/tools/venv/bin/ruff").expanduser()))
    a = ap.parse_args()
    trees = Path(a.corpus_dir).expanduser() / "trees"
    unsnarl = str(Path(a.unsnarl).resolve())
    lines = ["| corpus | run | wall | CPU | peak RSS | from the cache |", "|---|---|---|---|---|---|"]
    for corpus in a.corpora.split(","):
        src = trees / corpus
        if not src.is_dir():
            sys.exit(f"{src} is missing: build the corpora first (bench/corpus.sh)")
        work = Path(tempfile.mkdtemp(prefix=f"unsnarl-cache-{corpus}-"))
        try:
            # A copy of the tree (hard links), so that one file can be edited.
            tree = work / "tree"
            subprocess.run(["cp", "-al", str(src), str(tree)], check=True)
            home = work / "home"
            env = {**os.environ, "XDG_CACHE_HOME": str(home)}
            env.pop("UNSNARL_NO_CACHE", None)
            env.pop("UNSNARL_CACHE_DIR", None)
            base = [unsnarl, "check", "--no-config", "--include-generated", "."]
            largest = max((p for p in tree.rglob("*") if p.is_file() and p.suffix in {".py", ".js", ".ts", ".go", ".rs"}),
                          key=lambda p: p.stat().st_size)
            comment = {".py": "#", ".go": "//", ".rs": "//"}.get(largest.suffix, "//")
            original = largest.read_bytes()

            def edit(n: int) -> None:
                # Replace the hard link by a file of its own before writing.
                largest.unlink()
                largest.write_bytes(original + f"\n{comment} edit {n}\n".encode())

            # Untimed: every way of running reports the same.
            want = report(base + ["--no-cache"], tree, env)
            shutil.rmtree(home, ignore_errors=True)
            for what in ("empty cache", "warm cache"):
                got = report(base, tree, env)
                cached = got.pop("cached")
                want.pop("cached", None)
                if got != want:
                    sys.exit(f"{corpus}: the report with the {what} differs from the one without the cache")
                print(f"{corpus}: {what}: same report, {cached} files from the cache", file=sys.stderr)
            samples: dict[str, list[tuple[float, float, float]]] = {}
            hits: dict[str, int] = {}
            for i in range(a.runs):
                shutil.rmtree(home, ignore_errors=True)
                samples.setdefault("--no-cache", []).append(timed(base[:-1] + ["--no-cache", "."], tree, env))
                samples.setdefault("empty cache", []).append(timed(base, tree, env))
                samples.setdefault("warm cache", []).append(timed(base, tree, env))
                edit(i)
                samples.setdefault("one file edited", []).append(timed(base, tree, env))
            hits["warm cache"] = report(base, tree, env)["cached"]
            edit(a.runs)
            hits["one file edited"] = report(base, tree, env)["cached"]
            size = du(home)
            if corpus == "python" and Path(a.ruff).exists():
                ruff = [a.ruff, "check", "--isolated", "--select", "ASYNC", "--cache-dir", str(work / "ruff-cache"), "."]
                timed(ruff, tree, env)  # fills ruff's cache
                for _ in range(a.runs):
                    samples.setdefault("ruff --select ASYNC, warm cache", []).append(timed(ruff, tree, env))
            for what, runs in samples.items():
                w, c, r = (statistics.median(x[k] for x in runs) for k in range(3))
                lines.append(f"| {corpus} | {what} | {w:.2f} s | {c:.2f} s | {r:.0f} MB | {hits.get(what, '')} |")
            lines.append(f"| {corpus} | cache size | | | | {size:.0f} MB |")
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
