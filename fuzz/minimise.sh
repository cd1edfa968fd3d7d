#!/usr/bin/env bash
# fuzz/minimise.sh TARGET...
#
# Replaces each target's cov-* seeds in fuzz/corpus/TARGET with a greedy
# set cover of the edges (libFuzzer -set_cover_merge=1, -use_counters=0:
# every edge once, hit counts aside) that the found corpus
# target/fuzz/corpus/TARGET and the current seeds reach together. Named
# seeds and regress-* seeds stay as they are. Needs the fuzz binaries
# (`make fuzz`, or `cargo fuzz build -s none -a --target-dir target/fuzz`).
# An input slower than TIMEOUT seconds (default 20) is left out, so that
# the smoke in `make test`, which runs every seed, stays short.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/fuzz/$(rustc -vV | sed -n 's/^host: //p')/release
for t in "$@"; do
  tmp=$(mktemp -d)
  for f in fuzz/corpus/"$t"/*; do
    case $(basename "$f") in cov-* | run-*) ;; *) cp "$f" "$tmp/" ;; esac
  done
  mkdir -p target/fuzz/corpus/"$t"
  "$bin/$t" -set_cover_merge=1 -use_counters=0 -rss_limit_mb=2048 -timeout="${TIMEOUT:-20}" \
    "$tmp" target/fuzz/corpus/"$t" fuzz/corpus/"$t" 2>&1 | grep 'MERGE-OUTER: .* new files' || true
  rm -f fuzz/corpus/"$t"/cov-* fuzz/corpus/"$t"/run-*
  # libFuzzer names what it adds by its sha1; 40-hex names are ignored by
  # git (what a bare `cargo fuzz run` leaves), so these get a prefix.
  for f in "$tmp"/*; do
    n=$(basename "$f")
    [ -e fuzz/corpus/"$t"/"$n" ] || cp "$f" fuzz/corpus/"$t"/cov-"${n:0:12}"
  done
  echo "$t: $(ls fuzz/corpus/"$t" | wc -l) seeds, $(du -sh fuzz/corpus/"$t" | cut -f1)"
  rm -rf "$tmp"
done
