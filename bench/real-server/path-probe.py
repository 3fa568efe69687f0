"""Does the way a server reached its state move its steps? (issue 43, session 39) The used check's loads step 25-40 %
faster than calibrate's decode rows at the same cells held (session 37). Calibrate reaches its 1,024-token state
after four smaller occupancies, each ended by 64 streams that leave every slot ~192 cells: a 1,024-token prompt fits
no such hole, so the fill lays its cells past the end and the window every step attends over can stand well above the
cells /metrics counts. The check fills a freshly started server once. Here one server is taken along calibrate's path
(PATH=calibrate) or filled once (PATH=once), then serves, at each step of the same list: calibrate's decode probe
(c users of 128/128, started together, rounds of them), a closed-loop load as the check runs it (256/128, each user's
next request when its last ends), and the probe again. Each request's TPOT in the server's own words
(timings.predicted_per_token_ms) and in the client's, and the cells held before and after. Not a test:
`h100-predict.sh pathprobe` runs it.

  python3 path-probe.py URL OUT.jsonl calibrate|once
"""

import json
import statistics
import sys

from llama_probe import Server, closed_loop, started_together

URL, OUT, PATH = sys.argv[1], sys.argv[2], sys.argv[3]
server = Server(URL, 39)
SLOTS = 64


def stream(prompt_len, out_len, slot=None):
    return server.tokens(prompt_len, out_len, slot)


def at_once(c, prompt_len, out_len):
    """c requests started together (calibrate's probe round, and its fills)."""
    return started_together(c, lambda: stream(prompt_len, out_len))


def record(phase, reqs, before, after, **extra):
    server_tpot = [r["timings"]["predicted_per_token_ms"] for r in reqs if r["timings"]]
    client_tpot = [(r["times"][-1] - r["times"][0]) * 1000 / (len(r["times"]) - 1) for r in reqs if len(r["times"]) > 1]
    row = {
        "path": PATH,
        "phase": phase,
        "kv_before": before,
        "kv_after": after,
        "requests": len(reqs),
        "server_tpot_p50": round(statistics.median(server_tpot), 3) if server_tpot else None,
        "client_tpot_p50": round(statistics.median(client_tpot), 3) if client_tpot else None,
        "server_tpots": [round(x, 2) for x in server_tpot],
        "prompt_ms": [round(r["timings"]["prompt_ms"], 2) for r in reqs if r["timings"]],
        **extra,
    }
    print(json.dumps({k: v for k, v in row.items() if k not in ("server_tpots", "prompt_ms")}), flush=True)
    with open(OUT, "a") as out:
        out.write(json.dumps(row) + "\n")


def probe(c, rounds, tag):
    before = server.kv()
    reqs = []
    for _ in range(rounds):
        reqs += at_once(c, 128, 128)
    record(f"probe-c{c}-{tag}", reqs, before, server.kv(), streams=c, rounds=rounds)


def load(c, per_user):
    before = server.kv()
    reqs = closed_loop(c, lambda: stream(256, 128), per_user=per_user)
    record(f"users-{c}", reqs, before, server.kv(), streams=c)


def fill(per_slot):
    """calibrate's fill: every slot's user at once, a prompt of per_slot tokens and one token out; then its settle."""
    at_once(SLOTS, per_slot, 1)
    stream(32, 512, slot=0)


if PATH == "calibrate":
    # calibrate's occupancies before 1,024, each ended as its 64-stream probe ends it
    for per_slot in (64, 128, 256, 512):
        fill(per_slot)
        at_once(SLOTS, 128, 128)
    record("path-done", [], server.kv(), server.kv())
fill(1024)
record("filled", [], server.kv(), server.kv())
# calibrate's rounds at this state: 7 for 1 and 2 streams, 3 for 4, 1 for 16; each load between two probes of its c
for c, rounds, per_user in ((1, 7, 6), (2, 7, 6), (4, 3, 6), (16, 1, 4)):
    probe(c, rounds, "before")
    load(c, per_user)
    probe(c, rounds, "after")
