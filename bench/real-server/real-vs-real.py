"""The real server against itself (issue 43): two of predict-check's rows files for the same state, row by row, each
figure's two measured values and how far apart, and how many agree within 10 % — the bar no prediction of one run can
be held to more tightly than the next run of the same server meets it. Rows are paired by their order (the Poisson
rates differ where the two capacity searches did). Not a test.

  python3 bench/real-server/real-vs-real.py profiles/h200-s41-fresh-rows-1.json profiles/h200-s41-fresh-rows-2.json
"""

import json
import sys

FIGURES = ["ttft_p50", "ttft_p90", "tpot_p50", "tpot_p90"]


def rows(path):
    data = json.load(open(path))
    return [r for r in (data["rows"] if isinstance(data, dict) else data) if "measured" in r]


def main(a_path, b_path):
    a, b = rows(a_path), rows(b_path)
    if len(a) != len(b):
        sys.exit(f"{a_path} has {len(a)} rows and {b_path} {len(b)}: not the same check")
    states = {(ra.get("kv"), rb.get("kv")) for ra, rb in zip(a, b) if ra.get("kv") != rb.get("kv")}
    if states:
        # a fresh server against a used one is two servers, not one against itself
        sys.exit(f"the rows started from different cells held: {sorted(states)}")
    within, total = {f: 0 for f in FIGURES}, 0
    print("| load | " + " | ".join(f"{f} first / second (apart)" for f in FIGURES) + " |")
    print("|---|" + "---|" * len(FIGURES))
    for ra, rb in zip(a, b):
        cells = []
        for f in FIGURES:
            x, y = ra["measured"][f], rb["measured"][f]
            apart = (y - x) / x * 100
            within[f] += abs(apart) <= 10
            cells.append(f"{x:.1f} / {y:.1f} ({apart:+.0f} %)")
        total += 1
        name = ra["name"] if ra["name"] == rb["name"] else f"{ra['name']} / {rb['name']}"
        print(f"| {name} | " + " | ".join(cells) + " |")
    agreed = sum(within.values())
    by = ", ".join(f"{f} {n}" for f, n in within.items())
    print(f"\nwithin 10 % of each other: {agreed} of {total * len(FIGURES)} figures ({by})")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: real-vs-real.py ROWS_A.json ROWS_B.json")
    main(sys.argv[1], sys.argv[2])
