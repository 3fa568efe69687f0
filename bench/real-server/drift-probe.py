"""Does a llama.cpp step's time drift while the server's state stands still? load-steps-probe.py read the same probe
(2 streams, 16.4k cells held) at 5.6 ms and then 8.0 ms a step, seconds apart. Here every slot holds 256 tokens and,
for a few minutes, rounds alternate: 2 streams pinned to slots 0 and 1 (each prompt replaces its slot's last, so the
cells held stand still), and 2 streams left to the server's slot choice; each round's server-timed ms a token
(`predicted_per_token_ms`), its time, and the cells held. A drift with the state fixed is the machine's; a step that
moves only with the placement is the cache's. Not a test: `h100-predict.sh drift` runs it.

  python3 drift-probe.py URL OUT.jsonl [ROUNDS]
"""

import json
import statistics
import sys
import threading
import time

from llama_probe import BYTE_TOKEN_BAN, Server

URL, OUT = sys.argv[1], sys.argv[2]
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 40
server = Server(URL, 13)
post, kv, ids = server.post, server.kv, server.ids


def round_of(pinned):
    got = [None, None]

    def one(i):
        body = {"prompt": ids(128), "n_predict": 128, "ignore_eos": True, "temperature": 0, "logit_bias": BYTE_TOKEN_BAN}
        if pinned:
            body["id_slot"] = i
        got[i] = post(body)["timings"]["predicted_per_token_ms"]

    ts = [threading.Thread(target=one, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return got


for s in range(64):
    post({"prompt": ids(256), "n_predict": 1, "id_slot": s, "cache_prompt": True})
t0 = time.time()
rows = []
for r in range(ROUNDS):
    for pinned in (True, False):
        before = kv()
        ms = round_of(pinned)
        row = {"round": r, "pinned": pinned, "t_s": round(time.time() - t0, 2), "kv_before": before, "kv_after": kv(),
               "ms_per_token": [round(x, 3) for x in ms]}
        print(json.dumps(row), flush=True)
        rows.append(row)
with open(OUT, "a") as out:
    for row in rows:
        out.write(json.dumps(row) + "\n")
for pinned in (True, False):
    xs = [statistics.fmean(r["ms_per_token"]) for r in rows if r["pinned"] == pinned]
    print(json.dumps({"pinned": pinned, "median": statistics.median(xs), "min": min(xs), "max": max(xs),
                      "first10": statistics.median(xs[:10]), "last10": statistics.median(xs[-10:])}))
