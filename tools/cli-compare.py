#!/usr/bin/env python3
"""Whole-process `redact` time of several CLI builds on the same files,
interleaved run by run so that a busy moment of a shared machine falls on
every build alike: each file is read by build A, B, ..., then again, REPS
times; the minimum and median per build, and its minimum over the last
build's.

`bench --cli-b` gives the ratio of two builds inside `make bench` (nine runs each, the fastest);
this takes any files and any number of builds, for a before/after of one change
(docs/benchmarks.md says which figures came from it).

Usage: tools/cli-compare.py [--reps N] CLI... -- FILE...
Example: tools/cli-compare.py /tmp/old/result-sanitizer target/release/result-sanitizer -- /tmp/ci.txt
(`target/release/examples/profile write-ci-ascii 2048 /tmp/ci.txt` writes a 2 MB CI log.)
"""

import statistics
import subprocess
import sys
import time


def once(cli: str, path: str) -> float:
    with open(path, "rb") as f:
        t = time.perf_counter()
        subprocess.run([cli, "redact"], stdin=f, stdout=subprocess.DEVNULL, check=True)
        return time.perf_counter() - t


def main() -> None:
    args = sys.argv[1:]
    reps = 9
    if args[:1] == ["--reps"]:
        reps, args = int(args[1]), args[2:]
    if "--" not in args:
        sys.exit(__doc__)
    k = args.index("--")
    clis, files = args[:k], args[k + 1 :]
    if not clis or not files:
        sys.exit(__doc__)
    for path in files:
        times: dict[str, list[float]] = {c: [] for c in clis}
        for _ in range(reps):
            for c in clis:
                times[c].append(once(c, path))
        last = min(times[clis[-1]])
        cols = [f"{c}: min {min(v) * 1e3:.1f} ms, median {statistics.median(v) * 1e3:.1f} ms, time / the last build's {min(v) / last:.2f}" for c, v in times.items()]
        print(f"{path}\n  " + "\n  ".join(cols))


if __name__ == "__main__":
    main()
