"""Does a decode step inside a load cost what calibrate's decode probe says it costs? On the H100 the used server's
real closed-loop and Poisson loads read TPOT p50 15–26 % below what the calibrated table predicts, while the table's
rows agree with the server's own step times (session 19's explore). Here the same server, in one state, serves
calibrate's probe (c users, one request each, starting together) and closed-loop and Poisson loads, all streamed:
each token's arrival is a step's end, so the gaps between a stream's tokens are its steps, and the streams in flight
at each gap are the step's decoding streams. A gap that holds another request's prefill is long; the median gap for a
number of streams in flight is that many streams' decode step inside the load. Not a test: `h100-predict.sh
loadsteps` runs it.

  python3 load-steps-probe.py URL OUT.jsonl [FILL ...]
"""

import json
import random
import statistics
import sys
import threading
import time

from llama_probe import Server, closed_loop, started_together

URL, OUT = sys.argv[1], sys.argv[2]
FILLS = [int(x) for x in sys.argv[3:]] or [256, 1024]
server = Server(URL, 11)
post, kv, ids = server.post, server.kv, server.ids
SLOTS = 64
lock = threading.Lock()


def stream(prompt_len, out_len):
    """One streamed /completion left to the server's slot choice: its send time, token arrival times, timings."""
    return server.tokens(prompt_len, out_len)


def probe(c, prompt_len=128, out_len=128):
    """calibrate's decode probe: c users, one request each, started together."""
    return started_together(c, lambda: stream(prompt_len, out_len))


def users(c, per_user, prompt_len=256, out_len=128):
    """Closed-loop users, each sending its next request when its answer ends."""
    return closed_loop(c, lambda: stream(prompt_len, out_len), per_user=per_user)


def poisson(rate, n, prompt_len=256, out_len=128, seed=3):
    rng = random.Random(seed)
    got, ts = [], []

    def one():
        r = stream(prompt_len, out_len)
        with lock:
            got.append(r)

    for _ in range(n):
        t = threading.Thread(target=one)
        t.start()
        ts.append(t)
        time.sleep(rng.expovariate(rate))
    for t in ts:
        t.join()
    return got


def steps(reqs):
    """Each gap between a stream's tokens, with the streams decoding then (first token to last) and whether another
    request's prompt was sent and not yet answered with its first token (a prefill could be in that step)."""
    spans = [(r["times"][0], r["times"][-1]) for r in reqs if len(r["times"]) > 1]
    waits = [(r["sent"], r["times"][0]) for r in reqs if r["times"]]
    by = {}
    for r in reqs:
        for a, b in zip(r["times"], r["times"][1:]):
            mid = (a + b) / 2
            n = sum(1 for s, e in spans if s <= mid <= e)
            pending = any(s < b and a < e for s, e in waits)
            by.setdefault((n, pending), []).append((b - a) * 1000)
    return by


def summary(name, fill, reqs, before, after):
    by = steps(reqs)
    tpots = [(r["times"][-1] - r["times"][0]) * 1000 / (len(r["times"]) - 1) for r in reqs if len(r["times"]) > 1]
    server_tpot = [r["timings"]["predicted_per_token_ms"] for r in reqs if r["timings"]]
    row = {
        "fill": fill,
        "phase": name,
        "kv_before": before,
        "kv_after": after,
        "requests": len(reqs),
        "tpot_p50": statistics.median(tpots) if tpots else None,
        "server_tpot_p50": statistics.median(server_tpot) if server_tpot else None,
        # the median gap by streams in flight, gaps with no prompt waiting (pure decode steps) and with one
        "pure_gap_p50": {n: round(statistics.median(g), 3) for (n, p), g in sorted(by.items()) if not p and len(g) >= 20},
        "pure_gaps": {n: len(g) for (n, p), g in sorted(by.items()) if not p},
        "mixed_gap_p50": {n: round(statistics.median(g), 3) for (n, p), g in sorted(by.items()) if p and len(g) >= 20},
        "mixed_gaps": {n: len(g) for (n, p), g in sorted(by.items()) if p},
        "mixed_gap_mean": {n: round(statistics.fmean(g), 3) for (n, p), g in sorted(by.items()) if p and len(g) >= 20},
    }
    print(json.dumps(row), flush=True)
    with open(OUT, "a") as out:
        out.write(json.dumps(row) + "\n")


def phase(name, fill, run):
    before = kv()
    reqs = run()
    summary(name, fill, reqs, before, kv())


for fill in FILLS:
    # every slot used once and holding its context, as calibrate's "every slot holds FILL" state
    for s in range(SLOTS):
        post({"prompt": ids(fill), "n_predict": 1, "id_slot": s, "cache_prompt": True})
    for rep in range(2):
        for c in (1, 2, 4, 8):
            phase(f"probe-c{c}-{rep}", fill, lambda c=c: probe(c))
    phase("users-4", fill, lambda: users(4, 10))
    phase("users-8", fill, lambda: users(8, 6))
    for c in (2, 4, 8):
        phase(f"probe-c{c}-after", fill, lambda c=c: probe(c))
    phase("poisson-2.5", fill, lambda: poisson(2.5, 40))
