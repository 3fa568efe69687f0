"""Does a batch of several prompts cost what one prompt of their tokens does? calibrate's prefill table is measured with
one prompt in slot 0, and session 27's users-4 rows read four 256-token prompts at once 0.5-0.75x of what that table
says for 1,024 tokens at the same cells held. At each occupancy (every slot filled in turn with L tokens: 0, 64, 128,
256, 512 a slot, ~0-33k cells), five rounds each of: one 256-token prompt in slot 0, one 1,024-token prompt, two of
512 and four of 256 started together (slots 0-3), one of 2,048 and eight of 256 (slots 0-7) — each round's client
time until the last answer (n_predict 1) and llama.cpp's own prompt_ms; slots 0-7 refilled to L after every round,
so each round meets the same cells. Not a test: h100-predict.sh batch.

  python3 batch-probe.py URL OUT.jsonl [FILLS…]
"""

import json
import statistics
import sys
import time

from llama_probe import Server

URL, OUT = sys.argv[1], sys.argv[2]
FILLS = [int(x) for x in sys.argv[3:]] or [0, 64, 128, 256, 512]
ROUNDS = 5
server = Server(URL, 27)
post, kv, ids = server.post, server.kv, server.ids
out = open(OUT, "a")


def fill(slots, length):
    """Each slot's context replaced by `length` new tokens (0: by one token, the least a slot can hold)."""
    for slot in slots:
        post({"prompt": ids(max(length, 1)), "n_predict": 1, "id_slot": slot, "cache_prompt": True})


def together(prompts):
    """The prompts sent at once, prompt i pinned to slot i: the client's ms until the last answer, each prompt_ms."""
    return server.together([{"prompt": p, "n_predict": 1, "id_slot": i, "cache_prompt": True}
                            for i, p in enumerate(prompts)])


# the same tokens one way and another: 1,024 as one prompt, two of 512 and four of 256 (two 512-token micro-batches
# each); 2,048 as one prompt and eight of 256 (four micro-batches)
CASES = [("one-256", [256]), ("one-1024", [1024]), ("two-512", [512] * 2), ("four-256", [256] * 4),
         ("one-2048", [2048]), ("eight-256", [256] * 8)]

for length in FILLS:
    fill(range(64), length)
    for name, sizes in CASES:
        walls, prompt_ms, held = [], [], []
        for _ in range(ROUNDS):
            held.append(kv())
            wall, pm = together([ids(n) for n in sizes])
            walls.append(wall)
            prompt_ms.append(max(pm))
            fill(range(8), length)
            time.sleep(0.05)
        row = {"fill": length, "case": name, "tokens": sum(sizes), "prompts": len(sizes), "kv": statistics.median(held),
               "client_ms_p50": statistics.median(walls), "prompt_ms_max_p50": statistics.median(prompt_ms),
               "client_ms": walls, "prompt_ms_max": prompt_ms}
        out.write(json.dumps(row) + "\n")
        out.flush()
        print(json.dumps({k: v for k, v in row.items() if k not in ("client_ms", "prompt_ms_max")}), flush=True)
