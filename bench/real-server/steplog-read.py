"""Reads a server's step log (step-log-patch.py) by step-probe.py's phases: for each phase, its prompt micro-batches
(more than four tokens) and its decode steps, with the host's mask time (inputs_us) as ns per token × window cell, and
the step's interval to the next (the server's own clock). Not a test.

  python3 steplog-read.py STEPLOG.log PHASES.jsonl
"""

import json
import re
import statistics
import sys

steps = [{k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)}
         for line in open(sys.argv[1]) if line.startswith("STEPLOG")]
for a, b in zip(steps, steps[1:]):
    a["dt_us"] = b["t_us"] - a["t_us"]
phases = {}
for line in open(sys.argv[2]):
    m = json.loads(line)
    phases.setdefault(m["phase"], {})[m["edge"]] = m


def med(xs):
    return round(statistics.median(xs), 2) if xs else None


for name, edges in phases.items():
    if "start" not in edges or "end" not in edges:
        continue
    inside = [s for s in steps if edges["start"]["t_us"] <= s["t_us"] <= edges["end"]["t_us"]]
    prompts = [s for s in inside if s["tokens"] > 4]
    decode = [s for s in inside if s["tokens"] <= 4]
    row = {"phase": name, "steps": len(inside), "kv_held_end": edges["end"].get("kv")}
    if prompts:
        row["prompt_ubatches"] = len(prompts)
        row["tokens_x_window_M"] = med([s["tokens"] * s["n_kv"] / 1e6 for s in prompts])
        row["mask_ms"] = med([s["inputs_us"] / 1000 for s in prompts])
        row["mask_ns_per_entry"] = med([s["inputs_us"] * 1000 / (s["tokens"] * s["n_kv"]) for s in prompts])
        row["interval_ms"] = med([s["dt_us"] / 1000 for s in prompts if "dt_us" in s])
    if decode:
        row["decode_steps"] = len(decode)
        row["decode_mask_ms"] = med([s["inputs_us"] / 1000 for s in decode])
        row["decode_interval_ms"] = med([s["dt_us"] / 1000 for s in decode if "dt_us" in s])
    print(json.dumps(row))
