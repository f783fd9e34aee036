#!/usr/bin/env bash
# Build the benchmark corpora of unsnarl (issue 7) under $CORPUS
# (default ~/.cache/unsnarl-corpus, outside the source tree).
#
#   bash bench/corpus.sh            # fetch what is missing, then (re)build the trees
#   bash bench/corpus.sh python go  # only some parts: python js ts go rust; then the trees
#   FORCE=1 bash bench/corpus.sh    # fetch everything again
#
# Real code, pinned, fetched only through the package registries' ordinary
# clients: pip (sdists), npm pack, cargo vendor, and apt (Debian's golang-go
# source and Go -dev packages). Each part writes $CORPUS/.stamps/<part> when
# complete and is skipped next time; a part that failed halfway is wiped and
# redone.
#
# Then the benchmark trees, under $CORPUS/trees, made of hard links (cp -al;
# unsnarl does not follow symbolic links) and pruned by bench/prune.py to the
# files that every tool reads (see prune.py for what is removed and why):
#
#   python  the CPython stdlib of the python3 on PATH + the Python sdists
#   jsts    the JavaScript and the TypeScript packages (one JS/TS corpus)
#   go      Go's standard library + Debian's Go -dev packages
#   rust    the vendored crates (without the Windows API bindings)
#   all     the four trees above
#   double  the "all" tree twice (for the linearity target)
#
# $CORPUS/trees/manifest.json lists files and bytes per tree; the script
# fails if a corpus has fewer than 5,000 source files.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CORPUS=${CORPUS:-$HOME/.cache/unsnarl-corpus}
STAMPS="$CORPUS/.stamps"
TREES="$CORPUS/trees"
MIN_FILES=5000
# Bump when the tree layout or the pruning changes: the trees are rebuilt.
TREES_VERSION=1
mkdir -p "$STAMPS"

# Pins (what was measured on 2026-11-29). cargo vendor resolves the Rust
# transitive dependencies afresh (no lock file), so those can drift; the Go
# part follows Debian's current golang-go and -dev packages, and the Python
# stdlib is the one of the python3 on PATH (its version is recorded).
PY_PKGS=(aiohttp==3.14.5 httpx==0.28.1 anyio==4.16.0 starlette==1.10.0 uvicorn==0.54.0 celery==5.7.0 django==5.2.19)
# Plain-JavaScript packages (they also carry some .d.ts files).
JS_PKGS=(express@5.3.0 socket.io@4.8.4 engine.io@6.6.13 ws@8.23.0 undici@7.30.2 mongoose@9.12.1 pg@8.23.1
         async@3.2.6 bluebird@3.7.2 ioredis@6.0.0 bullmq@6.7.0 @nestjs/core@12.5.1 typeorm@1.1.1)
# Packages that ship TypeScript (.ts/.tsx) sources, next to their compiled .js/.d.ts.
TS_PKGS=(rxjs@7.8.2 effect@4.1.0 zod@4.6.7 @tanstack/query-core@5.108.4 @tanstack/react-query@5.108.4
         @tanstack/react-router@1.170.46 @trpc/server@11.25.2 @radix-ui/themes@3.3.0
         @react-navigation/native@7.5.1 @react-navigation/stack@7.12.1 p-queue@9.3.5)
APT_PKGS=(golang-go golang-google-grpc-dev golang-github-prometheus-client-golang-dev)

log() { printf '== %s\n' "$*" >&2; }

# run_part NAME FUNCTION: skip if stamped, otherwise wipe $CORPUS/NAME, build, stamp.
run_part() {
  local name=$1 fn=$2
  if [[ -e "$STAMPS/$name" && "${FORCE:-0}" != 1 ]]; then log "$name: up to date"; return; fi
  rm -rf "${CORPUS:?}/$name" "$STAMPS/$name"
  mkdir -p "$CORPUS/$name"
  log "$name: fetching"
  "$fn" "$CORPUS/$name"
  date -u +%FT%TZ > "$STAMPS/$name"
}

apt_once() {
  if ! dpkg -s "${APT_PKGS[@]}" >/dev/null 2>&1; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${APT_PKGS[@]}"
  fi
}

build_python() {
  local dst=$1
  # sdists only; pip builds each sdist's metadata, which takes ~2 min.
  pip download --no-deps --no-binary :all: -d "$dst/_sdist" "${PY_PKGS[@]}"
  mkdir -p "$dst/pkgs"
  for f in "$dst"/_sdist/*.tar.gz; do tar -C "$dst/pkgs" -xzf "$f"; done
  # CPython stdlib of the python3 on PATH, without site-packages and bytecode.
  local lib
  lib=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
  mkdir -p "$dst/stdlib"
  tar -C "$lib" --exclude=./site-packages --exclude=__pycache__ -cf - . | tar -C "$dst/stdlib" -xf -
  python3 -c 'import sys; print(sys.version)' > "$dst/stdlib/.python-version-used"
}

npm_unpack() {
  local dst=$1; shift
  local tmp
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent --pack-destination "$tmp" "$@" >/dev/null)
  for f in "$tmp"/*.tgz; do
    local d
    d="$dst/$(basename "$f" .tgz)"
    mkdir -p "$d"
    tar -C "$d" --strip-components=1 -xzf "$f"
  done
  rm -rf "$tmp"
}
build_js() { npm_unpack "$1" "${JS_PKGS[@]}"; }
build_ts() { npm_unpack "$1" "${TS_PKGS[@]}"; }

build_go() {
  local dst=$1
  apt_once
  local gosrc
  gosrc=$(readlink -f "$(go env GOROOT)/src")
  cp -a "$gosrc" "$dst/stdlib"
  cp -a /usr/share/gocode/src "$dst/gocode"
  # aws-sdk-go (pulled in as a dependency: 2,500 files, ~167 MB of generated
  # service clients) would dominate the corpus; leave it out.
  rm -rf "$dst/gocode/github.com/aws"
  # Debian's compatibility symlinks duplicate other trees.
  find "$dst" -type l -delete
  go version > "$dst/.go-version-used"
}

build_rust() {
  local dst=$1 proj="$1/_proj"
  mkdir -p "$proj/src"
  cat > "$proj/Cargo.toml" <<'EOF'
[package]
name = "corpus-vendor"
version = "0.0.0"
edition = "2024"
rust-version = "1.95"
publish = false

[dependencies]
tokio = { version = "=1.54.1", features = ["full"] }
hyper = { version = "=1.12.0", features = ["full"] }
reqwest = "=0.13.5"
axum = "=0.8.9"
tonic = "=0.14.9"
rayon = "=1.12.0"
crossbeam = "=0.8.5"
EOF
  echo 'fn main() {}' > "$proj/src/main.rs"
  (cd "$proj" && cargo vendor --versioned-dirs --quiet "$dst/vendor" >/dev/null)
  # Windows API binding crates are generated code (windows-sys alone is tens of
  # MB); they stay out of the benchmark tree (see build_trees).
  mkdir -p "$dst/_windows_bindings"
  find "$dst/vendor" -mindepth 1 -maxdepth 1 -type d \
    \( -name 'windows*' -o -name 'winapi*' \) -exec mv -t "$dst/_windows_bindings" {} +
}

# --- the benchmark trees ----------------------------------------------------

# link SRC DST: a hard-link copy (no data is copied; deleting a link in the
# tree never touches the cached original).
link() { mkdir -p "$(dirname "$2")"; cp -al "$1" "$2"; }

trees_fresh() {
  [[ -e "$TREES/.stamp" && "${FORCE:-0}" != 1 ]] || return 1
  [[ "$(cat "$TREES/.stamp")" == "$TREES_VERSION" ]] || return 1
  local p
  for p in python js ts go rust; do
    [[ "$STAMPS/$p" -nt "$TREES/.stamp" ]] && return 1
  done
  [[ "$HERE/prune.py" -nt "$TREES/.stamp" ]] && return 1
  return 0
}

build_trees() {
  if trees_fresh; then log "trees: up to date"; return; fi
  local p
  for p in python js ts go rust; do
    [[ -e "$STAMPS/$p" ]] || { echo "part $p is missing: run bash bench/corpus.sh $p" >&2; exit 1; }
  done
  log "trees: linking and pruning"
  rm -rf "${TREES:?}"
  mkdir -p "$TREES"
  link "$CORPUS/python/stdlib" "$TREES/python/stdlib"
  link "$CORPUS/python/pkgs" "$TREES/python/pkgs"
  link "$CORPUS/js" "$TREES/jsts/js"
  link "$CORPUS/ts" "$TREES/jsts/ts"
  link "$CORPUS/go/stdlib" "$TREES/go/stdlib"
  link "$CORPUS/go/gocode" "$TREES/go/gocode"
  link "$CORPUS/rust/vendor" "$TREES/rust/vendor"
  local reports=()
  for t in python jsts go rust; do
    reports+=("$(python3 "$HERE/prune.py" "$TREES/$t" "$t")")
  done
  for t in python jsts go rust; do link "$TREES/$t" "$TREES/all/$t"; done
  link "$TREES/all" "$TREES/double/1"
  link "$TREES/all" "$TREES/double/2"
  # Provenance and sizes, for the runner and for people.
  python3 - "$TREES" "$MIN_FILES" "${reports[@]}" <<'PY'
import json, os, sys
trees, min_files, reports = sys.argv[1], int(sys.argv[2]), [json.loads(r) for r in sys.argv[3:]]
def versions():
    out = {}
    for name, f in [("python-stdlib", "python/stdlib/.python-version-used"), ("go", "go/.go-version-used")]:
        p = os.path.join(os.path.dirname(trees), f)
        if os.path.exists(p):
            out[name] = open(p).read().strip()
    return out
m = {"trees": {}, "versions": versions()}
for r in reports:
    m["trees"][r["corpus"]] = {"files": r["files"], "bytes": r["bytes"], "removed": r["removed"]}
m["trees"]["all"] = {"files": sum(r["files"] for r in reports), "bytes": sum(r["bytes"] for r in reports)}
m["trees"]["double"] = {"files": 2 * m["trees"]["all"]["files"], "bytes": 2 * m["trees"]["all"]["bytes"]}
json.dump(m, open(os.path.join(trees, "manifest.json"), "w"), indent=2, sort_keys=True)
bad = []
for name, t in m["trees"].items():
    print(f"{name:7} {t['files']:7} files {t['bytes'] / 1e6:8.1f} MB", file=sys.stderr)
    if name in ("python", "jsts", "go", "rust") and t["files"] < min_files:
        bad.append(f"{name}: {t['files']} files < {min_files}")
if bad:
    sys.exit("corpus too small: " + "; ".join(bad))
PY
  echo "$TREES_VERSION" > "$TREES/.stamp"
}

parts=("$@")
[[ ${#parts[@]} -eq 0 ]] && parts=(python js ts go rust)
for p in "${parts[@]}"; do
  case $p in
    python) run_part python build_python ;;
    js) run_part js build_js ;;
    ts) run_part ts build_ts ;;
    go) run_part go build_go ;;
    rust) run_part rust build_rust ;;
    *) echo "unknown part: $p (python js ts go rust)" >&2; exit 2 ;;
  esac
done
build_trees
log "done: trees in $TREES"
