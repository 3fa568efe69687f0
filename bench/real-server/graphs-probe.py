"""Does a server's history change one stream's step? llama.cpp's CUDA backend replays a CUDA graph for one-token
batches and turns graphs off for the rest of the process after four graph updates in a row (ggml-cuda.cu,
number_consecutive_updates >= 4). Its KV defrag (--defrag-thold 0.1) runs a graph of copies on the same backend, so
one stream decoding while defrag runs step after step alternates two graphs: each step an update. Session 51's
calibration read one stream at 4.2 ms a token at 3,338 cells where the fresh check's users-1 read 2.6-3.6.
Here, llama.cpp's own predicted_per_token_ms for one stream, request after request: on a fresh server; after a churn
that leaves holes for defrag while one stream decodes, with every slot then erased (the cells as fresh, the history
not); and (STATE=nographs, a server started with GGML_CUDA_DISABLE_GRAPHS=1) on a fresh server. Not a test:
h100-predict.sh graphs runs it.

  python3 graphs-probe.py URL STATE OUT.jsonl      STATE: default | nographs
"""

import json
import statistics
import sys
import urllib.request

from llama_probe import BYTE_TOKEN_BAN, Server

URL, STATE, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
server = Server(URL, 51, timeout=300)
post, kv, ids = server.post, server.kv, server.ids
out = open(OUT, "a")


def one_stream(phase, n=12):
    xs = []
    for i in range(n):
        before = kv()
        got = post({"prompt": ids(256), "n_predict": 128, "ignore_eos": True, "cache_prompt": True,
                    "logit_bias": BYTE_TOKEN_BAN})
        t = got["timings"]
        row = {"state": STATE, "phase": phase, "i": i, "kv_before": before,
               "per_token_ms": t["predicted_per_token_ms"], "prompt_ms": t["prompt_ms"], "slot": got.get("id_slot")}
        out.write(json.dumps(row) + "\n")
        out.flush()
        xs.append(t["predicted_per_token_ms"])
    print(f"{STATE} {phase}: one stream, per-token ms median {statistics.median(xs):.2f} "
          f"(min {min(xs):.2f}, max {max(xs):.2f}, n {n}), kv {kv()}", flush=True)


def erase_all():
    for s in range(64):
        req = urllib.request.Request(f"{URL}/slots/{s}?action=erase", b"{}", {"Content-Type": "application/json"})
        urllib.request.urlopen(req, timeout=30).read()


one_stream("fresh")
if STATE == "default":
    # every slot 1,024 tokens, then 24 slots' contexts replaced by 144 (128 + 16 decoded, one stream at a time):
    # ~21k of ~65k cells freed in holes, over the 10 % at which defrag runs after every step
    server.together([{"prompt": ids(1024), "n_predict": 1, "cache_prompt": True} for _ in range(64)])
    print(f"{STATE} filled: kv {kv()}", flush=True)
    for s in range(24):
        post({"prompt": ids(128), "n_predict": 16, "ignore_eos": True, "id_slot": s, "cache_prompt": True})
    print(f"{STATE} churned: kv {kv()}", flush=True)
    erase_all()
    print(f"{STATE} erased: kv {kv()}", flush=True)
    one_stream("after-churn-erased")
