"""One stream's decode as a client reads it and as llama.cpp times it, on a cache whose every slot holds 1,024 tokens
(calibrate's "every slot holds 1024" state), with the random model's byte tokens allowed and banned. calibrate's
probe there read a TPOT of 11.5 ms where the server's own timings elsewhere read ~9.5 at 65k cells: is the client's
figure the server's step? Not a test: `h100-predict.sh streamtpot` runs it.

  python3 stream-tpot-probe.py URL OUT.jsonl
"""

import json
import statistics
import sys

from llama_probe import BYTE_TOKEN_BAN, Server

URL, OUT = sys.argv[1], sys.argv[2]
server = Server(URL, 5)
post, kv, ids = server.post, server.kv, server.ids


def stream(body):
    """Chunk arrival times (from the send) of one streamed /completion, those with text, and its final timings."""
    t0, events, timings = server.stream(body)
    return [t - t0 for t, d in events if d.get("content")], timings


for s in range(64):
    post({"prompt": ids(1024), "n_predict": 1, "id_slot": s, "cache_prompt": True})
rows = []
for ban in (False, True, False, True):
    body = {"prompt": ids(128), "n_predict": 128, "ignore_eos": True, "temperature": 0}
    if ban:
        body["logit_bias"] = BYTE_TOKEN_BAN
    before = kv()
    times, timings = stream(body)
    n = timings["predicted_n"]
    row = {
        "ban_bytes": ban,
        "kv_before": before,
        "chunks_with_text": len(times),
        "predicted_n": n,
        "client_first_ms": times[0] * 1000 if times else None,
        # as our TPOT: (last chunk − first chunk) / (tokens − 1)
        "client_tpot_ms": (times[-1] - times[0]) * 1000 / (n - 1) if len(times) > 1 else None,
        "server_ms_per_token": timings["predicted_per_token_ms"],
        "server_prompt_ms": timings["prompt_ms"],
        "gaps_ms_p50": statistics.median([(b - a) * 1000 for a, b in zip(times, times[1:])]) if len(times) > 2 else None,
    }
    print(json.dumps(row))
    rows.append(row)
with open(OUT, "a") as out:
    for row in rows:
        out.write(json.dumps(row) + "\n")
