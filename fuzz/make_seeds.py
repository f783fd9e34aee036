#!/usr/bin/env python3
"""Regenerates the committed seed corpora in fuzz/seeds/<target>/ from the
test fixtures, examples/, and the rule examples in docs/rules.md, keeping the
minimized crash inputs (fuzz/seeds/<target>/regression-*). Run from the
repository root: python3 fuzz/make_seeds.py"""
import hashlib, os, re, shutil, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEEDS = os.path.join(ROOT, "fuzz", "seeds")
MAX = 16 * 1024  # keep seeds small

EXT = {
    "python": (".py",),
    "js": (".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".mts"),
    "go": (".go",),
    "rust": (".rs",),
}
FENCE = {"python": "python", "javascript": "js", "js": "js", "typescript": "js",
         "ts": "js", "go": "go", "rust": "rust"}


def add(target, data):
    if isinstance(data, str):
        data = data.encode()
    if not data.strip() or len(data) > MAX:
        return
    d = os.path.join(SEEDS, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    # Minimized crash inputs (`regression-*`) are kept; the rest is rebuilt.
    kept = {}
    if os.path.isdir(SEEDS):
        for t in os.listdir(SEEDS):
            for fn in os.listdir(os.path.join(SEEDS, t)):
                if fn.startswith("regression-"):
                    kept[(t, fn)] = open(os.path.join(SEEDS, t, fn), "rb").read()
        shutil.rmtree(SEEDS)
    for (t, fn), data in kept.items():
        os.makedirs(os.path.join(SEEDS, t), exist_ok=True)
        with open(os.path.join(SEEDS, t, fn), "wb") as f:
            f.write(data)
    for top in ("tests/fixtures", "examples"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for fn in sorted(files):
                p = os.path.join(dirpath, fn)
                data = open(p, "rb").read()
                for target, exts in EXT.items():
                    if fn.endswith(exts):
                        add(target, data)
                if b"unsnarl:" in data:
                    add("suppressions", data)
    docs = open(os.path.join(ROOT, "docs", "rules.md"), encoding="utf-8").read()
    for lang, body in re.findall(r"```(\w+)\n(.*?)```", docs, re.S):
        if lang in FENCE:
            add(FENCE[lang], body)
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    for lang, body in re.findall(r"```(\w+)\n(.*?)```", readme, re.S):
        if lang == "toml":
            add("config", body)
            add("config", "[tool.unsnarl]\n" + body)
        if lang == "text" and "unsnarl:" in body:
            add("suppressions", body)
    for body in [
        'select = ["blocking-in-async", "PY002"]\nignore = "unbounded-queue"\n'
        'exclude = ["vendor/", "*.gen.py"]\nfail-on = "high"\nmin-severity = "medium"\n'
        'threads = 3\nformat = "json"\ninclude-generated = true\nfile-timeout = 2.5\n'
        '[knowledge.python]\nblocking = ["myapp.db.query"]\n'
        '[per-file-ignores]\n"tests/**" = ["blocking-in-async"]\n',
        '[project]\nname = "x"\n\n[tool.unsnarl]\nfail-on = "critical"\nselect = ["PY"]\n',
        'threads = "four"\n', "select = [\n", "[knowledge.cobol]\nblocking = [1]\n",
    ]:
        add("config", body)
    for body in [
        "x = risky()  # unsnarl: ignore[blocking-in-async, PY003] reason\n",
        "# unsnarl: ignore[PY002]\ny = 1\n// unsnarl: ignore\n//unsnarl:ignore-file[unbounded-queue]\n",
        "# unsnarl: ignore[\n# unsnarl: ignore-fil\n# unsnarl: ignore[,]\n#unsnarl:\n",
    ]:
        add("suppressions", body)
    for t in sorted(os.listdir(SEEDS)):
        print(t, len(os.listdir(os.path.join(SEEDS, t))), file=sys.stderr)


main()
