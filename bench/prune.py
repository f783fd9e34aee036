#!/usr/bin/env python3
"""Prune a benchmark tree (made of hard links) down to the files every tool reads.

Used by corpus.sh; Python 3.11 standard library only. Deleting a hard link
never touches the cached original, so a tree can be pruned freely.

A tree keeps only regular files whose extension unsnarl analyzes for that
corpus (plus go.mod files in Go trees: unsnarl reads them for the Go version),
and drops what one of the tools would skip on its own, so that unsnarl and
every peer see exactly the same files:

- symbolic links (unsnarl never follows them);
- hidden files and folders, and folders unsnarl and ruff exclude by default
  (node_modules, __pycache__, venv, site-packages);
- files over 1,000,000 bytes (semgrep's default --max-target-bytes; unsnarl's
  own limit is 2 MiB);
- minified files by unsnarl's rule (a .min.js/.min.mjs/.min.cjs name, or a
  line over 20,000 bytes in a file over 100 KiB);
- binary files (a NUL byte in the first 8 KiB) and files that are not valid
  UTF-8 (unsnarl reports them as problems instead of analyzing them).

Prints one JSON object: files kept, bytes kept, and what was removed per
reason.
"""

import json
import os
import shutil
import sys

EXTS = {
    "python": {".py", ".pyi"},
    "jsts": {".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"},
    "go": {".go"},
    "rust": {".rs"},
}
KEEP_NAMES = {"go": {"go.mod"}}
EXCLUDED_DIRS = {"node_modules", "__pycache__", "venv", "site-packages"}
MAX_BYTES = 1_000_000
MINIFIED_LINE = 20_000
MINIFIED_MIN = 100 * 1024
SNIFF = 8 * 1024


def reason_to_drop(path: str, name: str, exts: set, keep_names: set):
    if name.startswith("."):
        return "hidden"
    ext = os.path.splitext(name)[1]
    if ext not in exts and name not in keep_names:
        return "other-extension"
    st = os.lstat(path)
    if not os.path.isfile(path) or os.path.islink(path):
        return "not-regular"
    if st.st_size > MAX_BYTES:
        return "over-1MB"
    if name.endswith((".min.js", ".min.mjs", ".min.cjs")):
        return "minified"
    with open(path, "rb") as f:
        data = f.read()
    if b"\0" in data[:SNIFF]:
        return "binary"
    if len(data) > MINIFIED_MIN and any(len(l) > MINIFIED_LINE for l in data.split(b"\n")):
        return "minified"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "invalid-utf8"
    return None


def prune(root: str, corpus: str) -> dict:
    exts = EXTS[corpus]
    keep_names = KEEP_NAMES.get(corpus, set())
    removed: dict[str, int] = {}
    files = 0
    size = 0

    def drop(reason):
        removed[reason] = removed.get(reason, 0) + 1

    for dirpath, dirnames, filenames in os.walk(root, topdown=True):
        for d in list(dirnames):
            p = os.path.join(dirpath, d)
            if os.path.islink(p):
                os.unlink(p)
                dirnames.remove(d)
                drop("symlink")
            elif d.startswith(".") or d in EXCLUDED_DIRS:
                shutil.rmtree(p)
                dirnames.remove(d)
                drop("excluded-folder")
        for n in filenames:
            p = os.path.join(dirpath, n)
            if os.path.islink(p):
                os.unlink(p)
                drop("symlink")
                continue
            why = reason_to_drop(p, n, exts, keep_names)
            if why:
                os.unlink(p)
                drop(why)
                continue
            if n in keep_names:
                continue
            files += 1
            size += os.lstat(p).st_size
    # Folders left empty are harmless but noisy: remove them bottom-up.
    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        if dirpath != root and not os.listdir(dirpath):
            os.rmdir(dirpath)
    return {"corpus": corpus, "files": files, "bytes": size, "removed": removed}


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[2] not in EXTS:
        sys.exit(f"usage: prune.py TREE {{{','.join(EXTS)}}}")
    print(json.dumps(prune(sys.argv[1], sys.argv[2]), sort_keys=True))
