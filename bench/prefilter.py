#!/usr/bin/env python3
"""How much a keyword prefilter that keeps results identical could skip.

    python3 bench/prefilter.py            # every corpus under ~/.cache/unsnarl-corpus/trees

A file can be skipped without changing any finding only if it mentions none
of the names the rules look for: every identifier in the language's
knowledge table (`knowledge/<lang>.toml`: what blocks, spawns, locks...) and
the language's concurrency keywords. This counts, per corpus, the files that
mention none of them (as whole words) and the share of the bytes they hold:
the most such a prefilter could save before parsing. Standard library only
(Python 3.11 for `tomllib`).
"""

import argparse
import os
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# corpus -> (knowledge table, file extensions, keywords the rules look for)
CORPORA = {
    "python": ("python", (".py",), ["async", "await"]),
    "jsts": ("javascript", (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"),
             ["async", "await", "Promise", "then", "setTimeout", "setInterval"]),
    "go": ("go", (".go",), ["go", "chan", "select", "sync"]),
    "rust": ("rust", (".rs",), ["async", "await", "thread", "Mutex", "spawn"]),
}

# Prose fields of a knowledge entry: words in them are not names.
PROSE = {"what", "fix", "why", "doc", "note"}


def names(value, out: set[str]) -> None:
    if isinstance(value, str):
        out.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", value))
    elif isinstance(value, list):
        for v in value:
            names(v, out)
    elif isinstance(value, dict):
        for k, v in value.items():
            if k not in PROSE:
                names(v, out)
                names(k, out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus-dir", default=os.environ.get("CORPUS", "~/.cache/unsnarl-corpus"))
    args = ap.parse_args()
    trees = Path(args.corpus_dir).expanduser() / "trees"
    print("| corpus | words | files | files mentioning none | their share of the bytes |")
    print("|---|---|---|---|---|")
    for corpus, (table, exts, keywords) in CORPORA.items():
        tree = trees / corpus
        if not tree.is_dir():
            print(f"{tree} is missing: build the corpora with bench/corpus.sh", file=sys.stderr)
            return 1
        words: set[str] = set(keywords)
        names(tomllib.loads((ROOT / "knowledge" / f"{table}.toml").read_text()), words)
        pattern = re.compile(rb"\b(?:" + b"|".join(re.escape(w.encode()) for w in
                                                  sorted(words, key=len, reverse=True)) + rb")\b")
        files = skippable = total = skipped = 0
        for root, _, fs in os.walk(tree):
            for f in fs:
                if not f.endswith(exts):
                    continue
                try:
                    data = (Path(root) / f).read_bytes()
                except OSError:
                    continue
                files += 1
                total += len(data)
                if not pattern.search(data):
                    skippable += 1
                    skipped += len(data)
        share = skipped / total if total else 0.0
        print(f"| {corpus} | {len(words)} | {files:,} | {skippable:,} | {share:.1%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
