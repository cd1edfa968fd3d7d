#!/usr/bin/env python3
"""Pretty-prints a result-sanitizer message for `make demo`: the text the
model sees (shortened in the middle for the terminal) and the record."""
import json
import sys

msg = json.load(sys.stdin)
if "content" in msg:  # MCP
    record = msg["_meta"]["result-sanitizer/record"]
    texts = [b.get("text", f"<{b['type']} block>") for b in msg["content"]]
    is_error = msg["isError"]
else:
    record = msg["record"]
    m = msg["message"]
    c = m["content"]
    texts = [c] if isinstance(c, str) else [b.get("text", f"<{b['type']} block>") for b in c]
    is_error = m.get("is_error", False)
text = "\n".join(texts)
lines = text.split("\n")
if len(lines) > 40:
    lines = lines[:18] + [f"      ... ({len(lines) - 36} more lines on screen, all sent) ..."] + lines[-18:]
print("\n".join("  | " + l[:160] for l in lines))
print(f"  isError={is_error} truncated={record['truncated']} strategy={record['strategy']} "
      f"bytes {record['original_bytes']} -> {len(text.encode())}, tokens out={record['output_tokens']} "
      f"(budget {record['budget']['max_tokens']})")
print("  redactions: " + ", ".join(f"{r['rule_id']}×{r['count']}" for r in record["redactions"]) or "none")
