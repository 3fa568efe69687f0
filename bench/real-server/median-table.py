#!/usr/bin/env python3
"""The real side of several predict-check.ts runs of one state as its median, against the simulator's.

    python3 bench/real-server/median-table.py STATE ROWS.json ROWS.json …

Each ROWS.json is one run's `STATE-rows.json` (a server started for each load, or a used server taken through the
loads): the measured figures of a load move between starts (session 29: TTFT p50 up to 21 %), the simulator's ≤ 1 %,
so a prediction is judged against the real median, with the real runs' range beside it; the error is the
simulator's median against the real median. The table is one predict-check.ts reads as its real side
(`MEASURED=TABLE.md node bench/real-server/predict-check.ts PROFILE STATE OUT`: the simulator alone, here, against
the medians), so a change to the model is judged without GPU time.
"""
import json
import statistics
import sys

state, paths = sys.argv[1], sys.argv[2:]
runs = [json.load(open(p))["rows"] for p in paths]
keys = ["ttft_p50", "ttft_p90", "tpot_p50", "tpot_p90"]


def f(v):
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}"


print(f"| {state}: load ({len(runs)} runs) | cells held at start | " + " | ".join(f"{k.replace('_', ' ').upper()} real median [range] / sim (err)" for k in keys) + " |")
print("|---|---|" + "---|" * len(keys))
within = {k: 0 for k in keys}
names = [r["name"] for r in runs[0]]
for name in names:
    rows = [r for run in runs for r in run if r["name"] == name]
    cells = []
    for k in keys:
        real = [r["measured"][k] for r in rows]
        m, s = statistics.median(real), statistics.median(r["predicted"][k] for r in rows)
        err = (s - m) / m * 100
        within[k] += abs(err) <= 10
        cells.append(f"{f(m)} [{f(min(real))}–{f(max(real))}] / {f(s)} ({err:+.0f} %)")
    kv = statistics.median(r["kv"] for r in rows)
    print(f"| {name} | {kv:.0f} | " + " | ".join(cells) + " |")
print("within 10 % of the real median: " + ", ".join(f"{k} {within[k]} of {len(names)}" for k in keys))
