"""What choosing a slot costs llama.cpp: the wait before the server began a prompt (the client's time to the one-token
answer less the server's own prompt_ms), the same 256-token prompts pinned to slot 0 and left to the server to place
(it compares the prompt with every idle slot's cache, common_lcs, before it takes the least recently used), on a
fresh server and with every other slot holding 256, 1024 and 2048 tokens. Medians of 12. Not a test:
h100-predict.sh slotwait.

  python3 slot-wait-probe.py URL OUT.jsonl
"""

import json
import statistics
import sys

from llama_probe import Server

URL, OUT = sys.argv[1], sys.argv[2]
server = Server(URL, 9)
post, kv, ids = server.timed_post, server.kv, server.ids
out = open(OUT, "w")


def waits(prompt, pin, n=12):
    ws, ps = [], []
    for _ in range(n):
        body = {"prompt": ids(prompt), "n_predict": 1, "cache_prompt": True}
        if pin:
            body["id_slot"] = 0
        total, r = post(body)
        ps.append(r["timings"]["prompt_ms"])
        ws.append(total - r["timings"]["prompt_ms"])
    return statistics.median(ws), statistics.median(ps)


# warm the server's paths once
for _ in range(3):
    post({"prompt": ids(256), "n_predict": 1, "id_slot": 0})
for fill in [0, 256, 1024, 2048]:
    if fill > 0:
        for slot in range(1, 64):
            post({"prompt": ids(fill), "n_predict": 1, "id_slot": slot, "cache_prompt": True})
    for prompt in [256, 1024] if fill in (0, 2048) else [256]:
        before = kv()
        pinned, pinned_prompt = waits(prompt, True)
        mid = kv()
        any_slot, any_prompt = waits(prompt, False)
        after = kv()
        line = {
            "fill": fill,
            "prompt": prompt,
            "cells_before": before,
            "cells_mid": mid,
            "cells_after": after,
            "wait_pinned_ms": round(pinned, 2),
            "wait_any_slot_ms": round(any_slot, 2),
            "prompt_ms_pinned": round(pinned_prompt, 2),
            "prompt_ms_any_slot": round(any_prompt, 2),
        }
        print(json.dumps(line), flush=True)
        out.write(json.dumps(line) + "\n")
        out.flush()
