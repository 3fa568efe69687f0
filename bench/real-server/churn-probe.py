"""Does a server that has served traffic step slower than one filled in order, at the same KV cache tokens held?
llama.cpp's own timings for the same pinned prefill (slot 0) and one-stream decode, first with every other slot
filled in turn (63 × 383-token prompts, as calibrate's fills are made), then after 128 requests of 256/128 tokens
that took slots as the server chose them (as a used server is found). Not a test: h100-predict.sh churn runs it.

  python3 churn-probe.py URL OUT.jsonl
"""

import json
import statistics
import sys
import threading

from llama_probe import Server

URL, OUT = sys.argv[1], sys.argv[2]
server = Server(URL, 11, timeout=120)
post, kv, ids = server.post, server.kv, server.ids
out = open(OUT, "w")


def probe(state):
    pre = [post({"prompt": ids(256), "n_predict": 1, "id_slot": 0, "cache_prompt": True})["timings"]["prompt_ms"]
           for _ in range(8)]
    dec = [post({"prompt": ids(128), "n_predict": 64, "id_slot": 0, "ignore_eos": True})["timings"]["predicted_per_token_ms"]
           for _ in range(4)]
    row = {"state": state, "kv": kv(), "prefill256_ms": statistics.median(pre), "prefill_all": pre,
           "decode1_ms_per_token": statistics.median(dec)}
    out.write(json.dumps(row) + "\n")
    out.flush()
    print(json.dumps(row), flush=True)


for slot in range(1, 64):
    post({"prompt": ids(383), "n_predict": 1, "id_slot": slot, "cache_prompt": True})
probe("filled in order")


def user():
    for _ in range(16):
        post({"prompt": ids(256), "n_predict": 128, "ignore_eos": True, "cache_prompt": True})


threads = [threading.Thread(target=user) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
probe("after 128 requests in slots the server chose")
