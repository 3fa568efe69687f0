"""Is the step table's last one-stream point the server or a moment of it? Session 36's calibration read one stream's
decode at 57,022 cells held (every slot 1,024 tokens, laid in runs) as 10.96 ms a token, where its previous point
(29,886 cells) read 4.94 and the used check's one user at ~65k cells read 6.7-7.5: the simulator then put users-1's
TPOT p50 +43 % high. Here, llama.cpp's own predicted_per_token_ms for one stream, request after request, in the
state calibrate leaves (fills of 64 prompts at 64, 128, 256, 512 and 1,024 tokens a slot, each then 512 steps in slot
0) and in the state the check's used server starts in (a restarted server filled once with 64 x 1,024), with
128-token prompts (calibrate's probe) and 256-token ones (the check's load). Not a test: h100-predict.sh endpoint
runs it.

  python3 endpoint-probe.py URL STATE OUT.jsonl      STATE: calibrate | used
"""

import json
import statistics
import sys

from llama_probe import Server

URL, STATE, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
server = Server(URL, 36, timeout=300)
post, kv, ids = server.post, server.kv, server.ids
out = open(OUT, "a")


def fill(per_slot):
    """64 prompts of per_slot tokens at once, one token each, as calibrate's fill (the server places them)."""
    server.together([{"prompt": ids(per_slot), "n_predict": 1, "cache_prompt": True} for _ in range(64)])


def settle():
    post({"prompt": ids(32), "n_predict": 512, "id_slot": 0, "ignore_eos": True})


fills = [64, 128, 256, 512, 1024] if STATE == "calibrate" else [1024]
for per_slot in fills:
    fill(per_slot)
    if STATE == "calibrate":
        settle()
    print(json.dumps({"state": STATE, "filled": per_slot, "kv": kv()}), flush=True)

for prompt in [128, 256, 128]:
    for i in range(8):
        before = kv()
        got = post({"prompt": ids(prompt), "n_predict": 128, "ignore_eos": True, "cache_prompt": True})
        t = got["timings"]
        row = {"state": STATE, "prompt": prompt, "i": i, "kv_before": before, "kv_after": kv(),
               "per_token_ms": t["predicted_per_token_ms"], "prompt_ms": t["prompt_ms"], "slot": got.get("id_slot")}
        out.write(json.dumps(row) + "\n")
        out.flush()
        print(json.dumps(row), flush=True)

rows = [json.loads(line) for line in open(OUT) if '"per_token_ms"' in line and f'"state": "{STATE}"' in line]
for prompt in [128, 256]:
    xs = [r["per_token_ms"] for r in rows if r["prompt"] == prompt]
    print(f"{STATE} prompt {prompt}: per-token ms median {statistics.median(xs):.2f}, min {min(xs):.2f}, "
          f"max {max(xs):.2f}, n {len(xs)}", flush=True)
