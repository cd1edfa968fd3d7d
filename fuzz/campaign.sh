#!/usr/bin/env bash
# fuzz/campaign.sh TARGET CPU_SECONDS
#
# One recorded fuzz campaign (docs/SECURITY.md, "Fuzz campaigns"): runs the
# target's built binary on its found corpus and the committed seeds until
# the fuzzer itself has used CPU_SECONDS of CPU (user + sys, read from
# /proc), then stops it with SIGINT so that libFuzzer prints its final
# stats. Wall time is not the measure: campaigns share a 2-core machine
# with other work. The log, target/fuzz/campaigns/TARGET.<start>.log,
# holds the commit, the start and end, libFuzzer's output, and the lines
# `cpu_user`, `cpu_sys`, `wall` and `exit` that the table is filled from.
# Needs the fuzz binaries (`make fuzz`, or `cargo fuzz build -s none -a
# --target-dir target/fuzz` in fuzz/).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: fuzz/campaign.sh TARGET CPU_SECONDS" >&2; exit 2; }
t=$1 budget=$2
bin=target/fuzz/$(rustc -vV | sed -n 's/^host: //p')/release/$t
[ -x "$bin" ] || { echo "no fuzz binary $bin: build it first" >&2; exit 2; }
mkdir -p target/fuzz/campaigns target/fuzz/corpus/"$t" target/fuzz/artifacts/"$t"
log=target/fuzz/campaigns/$t.$(date -u +%Y%m%dT%H%M%S).log
# `nice` ranks processes only within their own session; the autogroup's
# nice value ranks this session against the others (tests, builds).
echo 19 > /proc/self/autogroup 2>/dev/null || true
dirty=$(git diff --quiet HEAD -- guest pack-format fuzz/src fuzz/fuzz_targets rules || echo " (changed)")
{
  echo "target $t"
  echo "commit $(git rev-parse --short=7 HEAD)$dirty"
  echo "budget_cpu_s $budget"
  echo "start $(date -u '+%F %T')"
} > "$log"
start=$(date +%s)
"$bin" -rss_limit_mb=2048 -timeout=300 -print_final_stats=1 \
  -artifact_prefix=target/fuzz/artifacts/"$t"/ \
  target/fuzz/corpus/"$t" fuzz/corpus/"$t" >> "$log" 2>&1 &
pid=$!
tck=$(getconf CLK_TCK)
used=0 utime=0 stime=0
while kill -0 "$pid" 2>/dev/null; do
  # Fields 14 and 15 of /proc/PID/stat: utime and stime in clock ticks
  # (the name field holds no spaces: it is the target's file name).
  if s=$(cat /proc/"$pid"/stat 2>/dev/null); then
    read -r -a f <<< "$s"
    utime=${f[13]} stime=${f[14]}
    used=$(( (utime + stime) / tck ))
    [ "$used" -lt "$budget" ] || kill -INT "$pid" 2>/dev/null || true
  fi
  sleep 2
done
rc=0
wait "$pid" || rc=$?
{
  echo "end $(date -u '+%F %T')"
  # The last reading before the stop: the final stats add a moment more.
  awk -v u="$utime" -v s="$stime" -v t="$tck" -v w="$(( $(date +%s) - start ))" \
    'BEGIN { printf "cpu_user %.2f cpu_sys %.2f wall %d\n", u / t, s / t, w }'
  echo "exit $rc"
  echo "corpus_files $(ls target/fuzz/corpus/"$t" | wc -l) corpus_kb $(du -sk target/fuzz/corpus/"$t" | cut -f1)"
  echo "artifacts $(ls target/fuzz/artifacts/"$t" | wc -l)"
} >> "$log"
tail -n 6 "$log"
