"""Is calibrate's first decode row slow because of the server's state or because of the probe? Session 51's
calibration read one stream at 4.22 ms a token (client TPOT, 3,338 cells held) in its first minute, where a restarted
server's users-1 load read 2.7-3.6 and graphs-probe.py's one stream (the server's own predicted_per_token_ms) 2.5-3.2
at 0-4.2k cells. Run right after calibrate's first probes (h100-predict.sh asfound stops it there) and again on a
restarted server: one stream's own timings, request after request, its byte tokens banned and allowed, the same cells
before each. The CLI's users loads beside it are h100-predict.sh's. Not a test.

  python3 asfound-probe.py URL LABEL OUT.jsonl
"""

import json
import statistics
import sys

from llama_probe import BYTE_TOKEN_BAN, Server

URL, LABEL, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
server = Server(URL, 53, timeout=300)
out = open(OUT, "a")


def one_stream(phase, ban, n=6):
    xs = []
    for i in range(n):
        before = server.kv()
        body = {"prompt": server.ids(128), "n_predict": 128, "ignore_eos": True, "cache_prompt": True}
        if ban:
            body["logit_bias"] = BYTE_TOKEN_BAN
        got = server.post(body)
        t = got["timings"]
        out.write(json.dumps({"label": LABEL, "phase": phase, "i": i, "kv_before": before, "slot": got.get("id_slot"),
                              "per_token_ms": t["predicted_per_token_ms"], "prompt_ms": t["prompt_ms"]}) + "\n")
        out.flush()
        xs.append(t["predicted_per_token_ms"])
    print(f"{LABEL} {phase}: one stream, the server's per-token ms median {statistics.median(xs):.2f} "
          f"(min {min(xs):.2f}, max {max(xs):.2f}), kv {server.kv()}", flush=True)


one_stream("bytes-banned", True)
one_stream("bytes-allowed", False)
