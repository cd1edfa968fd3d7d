#!/usr/bin/env python3
"""Kingfisher's rule examples as a held-out breadth check (issue #38).

Issue #38 keeps Kingfisher's rule files out of the rule writing, for an
independent check of recall: this reads a local checkout's `data/rules/*.yml`
(`examples` are positives, `negative_examples` negatives) and writes them in
`tools/peer-samples.py`'s format, for `precision_peers --peers DIR`.

Usage: tools/kingfisher-samples.py KINGFISHER_CHECKOUT OUT_DIR
"""
import glob, json, os, sys

import yaml


def main():
    src, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    rules = tps = fps = 0
    with open(os.path.join(out_dir, "kingfisher.jsonl"), "w") as w:
        for path in sorted(glob.glob(os.path.join(src, "data/rules/*.yml"))):
            try:
                doc = yaml.safe_load(open(path))
            except yaml.YAMLError:
                continue
            for r in (doc or {}).get("rules", []) or []:
                t = [e for e in r.get("examples") or [] if isinstance(e, str)]
                f = [e for e in r.get("negative_examples") or [] if isinstance(e, str)]
                if not t and not f:
                    continue
                rules += 1
                tps += len(t)
                fps += len(f)
                w.write(json.dumps({"peer": "kingfisher", "rule": r.get("id", "?"), "tps": t, "fps": f}) + "\n")
    print(f"{out_dir}/kingfisher.jsonl: {rules} rules, {tps} positives, {fps} negatives")


if __name__ == "__main__":
    main()
