#!/usr/bin/env python3
"""Which findings of the peers unsnarl shares, on the benchmark corpora.

    python3 bench/overlap.py                 # summary per peer rule
    python3 bench/overlap.py --list 20       # and up to 20 unshared findings per rule

Runs unsnarl (release build, JSON output) and, on the same tree, `ruff check
--select ASYNC` on the Python corpus and oxlint's concurrency rules
(`no-async-promise-executor`, `promise/catch-or-return`) on the JS/TS corpus.
A peer finding counts as shared when unsnarl reports anything within one line
of it in the same file. The corpora and the peers are the ones `run.py`
installs (run it, or `run.py --corpora python,jsts --peers ruff,oxlint
--runs 1 --no-scaling`, once first). Standard library only.
"""

import argparse
import collections
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402  (the runner: where the corpora, peers and binary are)


def unsnarl_findings(env: run.Env, tree: Path) -> list[tuple[str, int, str]]:
    out = subprocess.run([str(env.unsnarl), "check", "--no-config", "--no-cache", "--format", "json", str(tree)],
                         capture_output=True, text=True, env=env.env)
    if out.returncode not in (0, 1):
        run.die(f"unsnarl failed on {tree}: {out.stderr[-2000:]}")
    return [(f["path"], f["line"], f["rule"]) for f in json.loads(out.stdout)["findings"]]


def ruff_findings(env: run.Env, tree: Path) -> list[tuple[str, int, str]]:
    out = subprocess.run([env.bin("ruff"), "check", "--isolated", "--no-cache", "--select", "ASYNC",
                          "--output-format", "json", str(tree)], capture_output=True, text=True, env=env.env)
    return [(f["filename"], f["location"]["row"], f["code"] or "syntax-error")
            for f in json.loads(out.stdout)]


def oxlint_findings(env: run.Env, tree: Path) -> list[tuple[str, int, str]]:
    out = subprocess.run([env.oxlint(), "-A", "all", "-D", "no-async-promise-executor", "--promise-plugin",
                          "-D", "promise/catch-or-return", "-f", "json", str(tree)],
                         capture_output=True, text=True, env=env.env)
    return [(f["filename"], f["labels"][0]["span"]["line"], f["code"])
            for f in json.loads(out.stdout)["diagnostics"] if f.get("labels")]


def compare(peer: str, theirs, ours, listing: int) -> None:
    near = {(os.path.realpath(p), l + d) for p, l, _ in ours for d in (-1, 0, 1)}
    by_rule = collections.defaultdict(list)
    for p, l, rule in theirs:
        by_rule[rule].append((p, l, (os.path.realpath(p), l) in near))
    print(f"\n{peer}: {len(theirs)} findings; unsnarl: {len(ours)} findings on the same tree\n")
    print("| peer rule | findings | unsnarl reports the same line |")
    print("|---|---|---|")
    for rule, items in sorted(by_rule.items(), key=lambda kv: -len(kv[1])):
        print(f"| `{rule}` | {len(items)} | {sum(s for *_, s in items)} |")
    if listing:
        for rule, items in sorted(by_rule.items()):
            unshared = [(p, l) for p, l, s in items if not s]
            for p, l in unshared[:listing]:
                print(f"  {rule} not shared: {p}:{l}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", type=int, default=0, metavar="N",
                    help="print up to N peer findings per rule that unsnarl does not share")
    ap.add_argument("--skip-build", action="store_true", help="use the unsnarl release binary already built")
    ap.add_argument("--corpus-dir", default=os.environ.get("CORPUS", "~/.cache/unsnarl-corpus"))
    ap.add_argument("--tools-dir", default="~/.cache/unsnarl-bench/tools")
    args = ap.parse_args()
    env = run.Env(args)
    env.install_peers({"ruff", "oxlint"})
    env.build_unsnarl()
    for corpus, peer, find in (("python", "ruff check --select ASYNC", ruff_findings),
                               ("jsts", "oxlint (no-async-promise-executor, promise/catch-or-return)",
                                oxlint_findings)):
        tree = env.trees / corpus
        if not tree.is_dir():
            run.die(f"{tree} is missing: build the corpora with bench/corpus.sh")
        compare(f"{corpus}: {peer}", find(env, tree), unsnarl_findings(env, tree), args.list)
    return 0


if __name__ == "__main__":
    sys.exit(main())
