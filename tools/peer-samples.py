#!/usr/bin/env python3
"""Extract the labelled samples of peer scanners' rule tests, for `make precision`.

gitleaks and Betterleaks write every rule as Go code that checks its own true- and
false-positive samples (`utils.Validate(rule, tps, fps)`) when their generator builds
the rules file. This script fetches each scanner's module from the Go module proxy,
copies it under target/bench/peers/, makes that copy's `Validate` print the samples it is
given as JSON lines, and runs the generator. Nothing of theirs enters this repository:
the samples are measurement data in target/, regenerated on demand.

Some samples are generated at random from a regex by the generator, so two extractions
differ in those bytes (not in their number or shape); the file is kept once made.

Usage: tools/peer-samples.py [OUT_DIR]   (default target/bench/peers)
Writes OUT_DIR/<peer>.jsonl: {"peer", "rule", "tps": [...], "fps": [...]} per rule.
"""
import json, os, shutil, subprocess, sys

PEERS = {
    "gitleaks": ("github.com/zricethezav/gitleaks/v8", "v8.30.1"),
    "betterleaks": ("github.com/betterleaks/betterleaks", "v1.7.0"),
}

PATCH_FUNC = '''
func dumpSamples(id string, tps []string, fps []string) {
	b, _ := json.Marshal(map[string]any{"rule": id, "tps": tps, "fps": fps})
	_, _ = os.Stdout.Write(append(b, '\\n'))
}
'''


def patch(validate_go):
    s = open(validate_go).read()
    s = s.replace("import (", 'import (\n\t"encoding/json"\n\t"os"', 1)
    head = "func Validate(rule config.Rule, truePositives []string, falsePositives []string) *config.Rule {\n\tr := &rule\n"
    assert head in s, "Validate's shape changed"
    s = s.replace(head, head + "\tdumpSamples(r.RuleID, truePositives, falsePositives)\n", 1)
    head = "func ValidateWithPaths(rule config.Rule, truePositives map[string]string, falsePositives map[string]string) *config.Rule {\n\tr := &rule\n"
    if head in s:
        s = s.replace(head, head + "\t{\n\t\tvar t, f []string\n\t\tfor _, v := range truePositives {\n\t\t\tt = append(t, v)\n\t\t}\n\t\tfor _, v := range falsePositives {\n\t\t\tf = append(f, v)\n\t\t}\n\t\tdumpSamples(r.RuleID, t, f)\n\t}\n", 1)
    open(validate_go, "w").write(s + PATCH_FUNC)


def extract(name, module, version, out_dir):
    out = os.path.join(out_dir, name + ".jsonl")
    if os.path.exists(out):
        print(f"{out}: kept (delete it to extract again)")
        return out
    info = json.loads(subprocess.run(
        ["go", "mod", "download", "-json", f"{module}@{version}"],
        check=True, capture_output=True, text=True).stdout)
    src = os.path.join(out_dir, f"{name}-src")
    shutil.rmtree(src, ignore_errors=True)
    shutil.copytree(info["Dir"], src)
    for root, dirs, files in os.walk(src):
        for f in dirs + files:
            os.chmod(os.path.join(root, f), 0o755)
    patch(os.path.join(src, "cmd/generate/config/utils/validate.go"))
    gen = os.path.join(src, "cmd/generate/config")
    run = subprocess.run(["go", "run", ".", os.path.join(out_dir, f"{name}.toml")],
                         cwd=gen, capture_output=True, text=True, env={**os.environ, "GOFLAGS": "-mod=mod", "GOWORK": "off"})
    if run.returncode != 0:
        sys.exit(f"{name}: the generator failed:\n{run.stderr[-2000:]}")
    rules = tps = fps = 0
    with open(out + ".part", "w") as w:
        for line in run.stdout.splitlines():
            if not line.startswith("{"):
                continue
            d = json.loads(line)
            d = {"peer": name, "rule": d["rule"], "tps": d["tps"] or [], "fps": d["fps"] or []}
            rules += 1
            tps += len(d["tps"])
            fps += len(d["fps"])
            w.write(json.dumps(d) + "\n")
    os.rename(out + ".part", out)
    shutil.rmtree(src, ignore_errors=True)
    print(f"{out}: {rules} rules, {tps} positives, {fps} negatives ({name} {version})")
    return out


def main():
    out_dir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/bench/peers")
    os.makedirs(out_dir, exist_ok=True)
    for name, (module, version) in PEERS.items():
        extract(name, module, version, out_dir)


if __name__ == "__main__":
    main()
