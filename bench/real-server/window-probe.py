"""Is a llama.cpp step's cost set by the KV cells held, or by the window of cells it attends over (the highest cell
in use)? The same pinned one-stream decode and 256-token prefill, in llama.cpp's own timings, at the same cells held
reached two ways: filled in order (the window is what is held) and after emptying slots of a full cache (the freed
cells lie below the window; new tokens go above it). calibrate's used-state probes are made the second way and record
what is held. Not a test: `h100-predict.sh window` runs it against a server it restarts between the two states.

  python3 window-probe.py URL compact|fragmented OUT.jsonl
"""

import json
import statistics
import sys

from llama_probe import Server

URL, STATE, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
server = Server(URL, 7)
post, kv, ids = server.post, server.kv, server.ids
SLOTS = 64
FILL = 1024
KEEP = 16  # slots still holding a fill in the fragmented state; the compact state fills as many cells in order


def fill(slot, n):
    post({"prompt": ids(n), "n_predict": 1, "id_slot": slot, "cache_prompt": True})


if STATE == "fragmented":
    # every slot full in order (the window reaches 64 × 1024), then 48 slots emptied by short prompts of their own:
    # their 1,024 cells freed below the window, each short prompt placed above it
    for s in range(SLOTS):
        fill(s, FILL)
    full = kv()
    for s in range(KEEP, SLOTS):
        fill(s, 128)
else:
    # as many cells held, filled in order: slots 0.. hold a fill each, then short prompts after them
    full = None
    for s in range(KEEP):
        fill(s, FILL)
    for s in range(KEEP, SLOTS):
        fill(s, 128)
held = kv()
# the probes go to slot 0 (it held a fill in both states): a prompt there empties it first
dec = [post({"prompt": ids(128), "n_predict": 64, "id_slot": 0, "ignore_eos": True})["timings"]["predicted_per_token_ms"]
       for _ in range(5)]
pre = [post({"prompt": ids(256), "n_predict": 1, "id_slot": 0})["timings"]["prompt_ms"] for _ in range(5)]
row = {"state": STATE, "kv_full": full, "kv_held": held, "kv_after": kv(), "decode1_ms_per_token": statistics.median(dec),
       "decode_all": dec, "prefill256_ms": statistics.median(pre), "prefill_all": pre}
print(json.dumps(row))
with open(OUT, "a") as out:
    out.write(json.dumps(row) + "\n")
