#!/usr/bin/env python3
"""Where unsnarl's time goes, in instruction counts (repeatable on a busy
machine): valgrind --tool=callgrind on a slice of each corpus, then the
inclusive cost of each pipeline stage. Python 3.11, standard library only.

    python3 bench/profile.py                     # every corpus, 3 MB slices
    python3 bench/profile.py --corpora go --mb 1
    python3 bench/profile.py --report /path/cg.go.out   # only the breakdown
    python3 bench/profile.py --corpora python --mb 100 --ruff "$(which ruff)"

With --ruff, the Python slice is also checked by `ruff check --select ASYNC`
under callgrind (one thread), and the two instruction totals are compared,
with the self cost of the parser crate both tools share (ruff_python_parser)
in unsnarl's run. --mb larger than the corpus takes the whole corpus.

Needs valgrind and the trees of bench/corpus.sh. The slice is every n-th
file (sorted by path) of a tree, hard-linked under --work; unsnarl runs with
-j1 (callgrind serializes threads anyway), --no-config --include-generated.
The release profile keeps line tables (Cargo.toml), so the names resolve.

The stage figures are inclusive instruction counts of the stage functions
(for a function that is inlined in places, the largest of its entries), so
they overlap where one stage calls another: "parse" is part of
"parse+lower". The allocator line is the self cost of malloc/free/realloc
and friends over the whole run, whoever called them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

STAGES = [
    ("walk (ignore crate)", r"^unsnarl::walk::walk$"),
    ("read files", r"^unsnarl::walk::load$"),
    ("parse+lower (Frontend::lower)", r"^<unsnarl::frontend::Builtin as unsnarl::frontend::Frontend>::lower$"),
    # With LTO the entry points may be inlined: the first function below them.
    ("  parse: ruff_python_parser", r"^ruff_python_parser::(parse_unchecked_source|parser::Parser::parse)$"),
    ("  parse: tree-sitter", r"^ts_parser_parse$"),
    ("  parse: ra_ap_parser + rowan (incl. macro bodies)", r"^unsnarl_frontend_rust::parse::parse$"),
    ("semantic+summaries (Engine::prepare)", r"^unsnarl_rules::Engine::prepare$"),
    ("  semantic types (annotate)", r"^unsnarl_rules::semantic::types::annotate$"),
    ("  summaries (index::summarize)", r"^unsnarl_rules::index::summarize$"),
    ("indexes (the project's, and each file's own)", r"^unsnarl_rules::index::ProjectIndex::build(_from)?$"),
    ("rules (Engine::check)", r"^unsnarl_rules::Engine::check(_within)?$"),
    ("rules + suppressions (check_analyzed, where the above is inlined)", r"^unsnarl::pipeline::check_analyzed$"),
    ("line index (LineIndex::new)", r"^unsnarl_model::span::LineIndex::new$"),
    ("drop the file states", r"^core::ptr::drop_in_place<unsnarl::pipeline::FileState>$"),
    ("text report", r"^unsnarl::report::text::render$"),
]
ALLOC = (r"^(_int_)?(malloc|free|realloc|calloc)$|malloc_consolidate|unlink_chunk|^__rdl_|"
         r"^__rust_(alloc|dealloc|realloc)|alloc_perturb|sysmalloc|_int_memalign|"
         # mimalloc (the binary's allocator)
         r"^_?mi_")
MEM = r"memcpy|memmove|memset|memcmp|memchr"
LINE = re.compile(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$")


def annotate(path: Path, inclusive: bool) -> tuple[int, list[tuple[str, str, int]]]:
    args = ["callgrind_annotate", "--auto=no", "--threshold=100"]
    if inclusive:
        args.append("--inclusive=yes")
    out = subprocess.run(args + [str(path)], capture_output=True, text=True, check=True).stdout
    total, rows = 0, []
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        cost = int(m.group(1).replace(",", ""))
        rest = re.sub(r" \[[^\]]*\]$", "", m.group(2))
        if rest.startswith("PROGRAM TOTALS"):
            total = cost
            continue
        i = rest.find(":")
        file, fn = (rest[:i], rest[i + 1:]) if i > 0 and " " not in rest[:i] else ("", rest)
        rows.append((file, fn, cost))
    return total, rows


def report(path: Path, top: int = 15) -> str:
    total, incl = annotate(path, inclusive=True)
    _, excl = annotate(path, inclusive=False)
    best: dict[str, int] = {}
    for _, fn, c in incl:
        best[fn] = max(best.get(fn, 0), c)
    lines = [f"{path.name}: {total:,} instructions"]

    def row(name: str, c: int) -> None:
        lines.append(f"  {name:52} {c:>15,} {100 * c / total:5.1f}%")

    # oxc is inlined into the JS front end: its share is the entry of the
    # front end's lower attributed to oxc_parser's lib.rs.
    oxc = max([c for f, fn, c in incl if "oxc_parser" in f and fn == "unsnarl_frontend_js::lower"] or [0])
    for name, pat in STAGES:
        c = max([v for k, v in best.items() if re.search(pat, k)] or [0])
        if c:
            row(name, c)
        if name.startswith("parse+lower") and oxc:
            row("  parse: oxc_parser (inlined part)", oxc)
    selfc: dict[str, int] = {}
    for _, fn, c in excl:
        selfc[fn] = selfc.get(fn, 0) + c
    parser = sum(v for k, v in selfc.items() if k.startswith("ruff_python_parser::"))
    if parser:
        row("ruff_python_parser (self cost, inlined code included)", parser)
    row("allocator (self cost, whole run)", sum(v for k, v in selfc.items() if re.search(ALLOC, k)))
    row("memcpy/memcmp/... (self cost, whole run)", sum(v for k, v in selfc.items() if re.search(MEM, k)))
    lines.append("  top self cost:")
    for k, v in sorted(selfc.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"    {v:>15,} {100 * v / total:5.1f}%  {k[:120]}")
    return "\n".join(lines)


def compare_ruff(ruff: str, sl: Path, ours: Path, work: Path) -> str:
    """ruff's async rules on the same files, one thread, under callgrind."""
    out = work / "cg.ruff.out"
    print(f"== ruff: callgrind", file=sys.stderr, flush=True)
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", ruff, "check",
                    "--select", "ASYNC", "--no-cache", "--isolated", "--quiet", str(sl)],
                   env={**os.environ, "RAYON_NUM_THREADS": "1"},
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    theirs, _ = annotate(out, inclusive=False)
    total, incl = annotate(ours, inclusive=True)
    pat = dict(STAGES)["  parse: ruff_python_parser"]
    parse = max([c for _, fn, c in incl if re.search(pat, fn)] or [0])
    return "\n".join([
        f"ruff check --select ASYNC: {theirs:,} instructions; unsnarl/ruff {total / theirs:.2f}",
        f"  besides the parse ({parse:,} in unsnarl's run, the same parser crate): unsnarl"
        f" {total - parse:,}, ruff about {theirs - parse:,} ({(total - parse) / max(1, theirs - parse):.2f}x)",
    ])


def make_slice(tree: Path, dst: Path, mb: float) -> tuple[int, int]:
    files = []
    for d, _, names in os.walk(tree):
        for n in names:
            p = Path(d) / n
            files.append((str(p.relative_to(tree)), p.stat().st_size))
    files.sort()
    total = sum(s for _, s in files)
    step = max(1, int(total / (mb * 1e6)))
    picked = files[::step]
    for rel, _ in picked:
        out = dst / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        if not out.exists():
            os.link(tree / rel, out)
    return len(picked), sum(s for _, s in picked)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", default="python,jsts,go,rust")
    ap.add_argument("--mb", type=float, default=3.0, help="slice size per corpus in MB (default 3)")
    ap.add_argument("--corpus-dir", default=os.environ.get("CORPUS", "~/.cache/unsnarl-corpus"))
    ap.add_argument("--work", default="/tmp/unsnarl-profile", help="where the slices and callgrind files go")
    ap.add_argument("--unsnarl", help="the binary (default: the release build of this checkout)")
    ap.add_argument("--report", nargs="*", help="only print the breakdown of these callgrind files")
    ap.add_argument("--ruff", help="a ruff binary: also count its instructions on the Python slice")
    args = ap.parse_args()
    if args.report:
        for f in args.report:
            print(report(Path(f)))
        return 0
    binary = args.unsnarl
    if not binary:
        subprocess.run(["cargo", "build", "--release", "--locked", "--bin", "unsnarl"], cwd=ROOT, check=True)
        meta = subprocess.run(["cargo", "metadata", "--no-deps", "--format-version", "1"], cwd=ROOT,
                              capture_output=True, text=True, check=True).stdout
        binary = str(Path(json.loads(meta)["target_directory"]) / "release" / "unsnarl")
    trees = Path(args.corpus_dir).expanduser() / "trees"
    work = Path(args.work)
    for c in [c for c in args.corpora.split(",") if c]:
        if not (trees / c).is_dir():
            sys.exit(f"{trees / c} is missing: run bash bench/corpus.sh")
        sl = work / f"slice-{args.mb:g}mb" / c
        n, size = make_slice(trees / c, sl, args.mb)
        out = work / f"cg.{c}.out"
        print(f"== {c}: {n} files, {size / 1e6:.2f} MB: callgrind", file=sys.stderr, flush=True)
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary, "check",
                        "--no-config", "--no-cache", "--include-generated", "-j1", str(sl)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        print(f"{c} ({n} files, {size / 1e6:.2f} MB)")
        print(report(out))
        if args.ruff and c == "python":
            print(compare_ruff(args.ruff, sl, out, work))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
