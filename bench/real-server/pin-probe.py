"""Why do four 256-token prompts cost the server twice as much inside a closed-loop load as batch-probe.py's four
pinned ones at the same cells held? (session 27's users-4 rows, fresh server: llama.cpp's own prompt_ms ~250 ms at
~16.9k cells; batch-probe.py's four-256 at 16.4k: 123 ms; calibrate's one 1,024-token prompt in slot 0 at 17k: 238.)
Every slot filled with 256 tokens (in turn, one request at a time, or all 64 at once as calibrate fills), then the
same prompts five ways, five rounds each, the server's prompt_ms and the client's ms: four pinned to slots 0-3 and
one of 1,024 in slot 0 (batch-probe's cases), four left to the server to place (n_predict 1, and 128 as a load's),
four pinned with n_predict 128; and closed-loop users 4 for 6 rounds (the load itself). Not a test:
h100-predict.sh pin.

  python3 pin-probe.py URL OUT.jsonl
"""

import json
import statistics
import sys
import time

from llama_probe import BYTE_TOKEN_BAN, Server

URL, OUT = sys.argv[1], sys.argv[2]
server = Server(URL, 28)
post, kv, ids, together = server.post, server.kv, server.ids, server.together
out = open(OUT, "a")
FILL = 256


def fill_in_turn(slots):
    for slot in slots:
        post({"prompt": ids(FILL), "n_predict": 1, "id_slot": slot, "cache_prompt": True})


def fill_at_once(slots):
    together([{"prompt": ids(FILL), "n_predict": 1, "id_slot": s, "cache_prompt": True} for s in slots])


def body(n, slot=None, predict=1):
    b = {"prompt": ids(n), "n_predict": predict, "cache_prompt": True, "logit_bias": BYTE_TOKEN_BAN}
    if slot is not None:
        b["id_slot"] = slot
    return b


CASES = [
    ("four-256-pinned", lambda: [body(256, s) for s in range(4)]),
    ("one-1024-slot0", lambda: [body(1024, 0)]),
    ("four-256-any-slot", lambda: [body(256) for _ in range(4)]),
    ("four-256-any-slot-128", lambda: [body(256, None, 128) for _ in range(4)]),
    ("four-256-pinned-128", lambda: [body(256, s, 128) for s in range(4)]),
]


def run(state):
    for name, make in CASES:
        walls, pms, held = [], [], []
        for _ in range(5):
            held.append(kv())
            wall, pm = together(make())
            walls.append(wall)
            pms.append(max(pm))
            # the slots these took back to 256 tokens each (the least recently used 4 for the any-slot cases)
            fill_in_turn(range(4)) if "pinned" in name or "slot0" in name else None
            time.sleep(0.05)
        row = {"state": state, "case": name, "kv": statistics.median(held), "client_ms_p50": statistics.median(walls),
               "prompt_ms_max_p50": statistics.median(pms), "client_ms": walls, "prompt_ms_max": pms}
        out.write(json.dumps(row) + "\n")
        out.flush()
        print(json.dumps({k: v for k, v in row.items() if k not in ("client_ms", "prompt_ms_max")}), flush=True)
    # the load itself: four users, each a 256/128 request after its last, unpinned, prompt_ms of each round
    rounds = []
    for _ in range(6):
        held = kv()
        wall, pm = together([body(256, None, 128) for _ in range(4)])
        rounds.append({"kv": held, "client_ms": wall, "prompt_ms": pm})
    row = {"state": state, "case": "users-4-rounds", "rounds": rounds}
    out.write(json.dumps(row) + "\n")
    out.flush()
    print(json.dumps(row), flush=True)


post({"prompt": ids(32), "n_predict": 1})
state = sys.argv[3] if len(sys.argv) > 3 else "in-turn"
(fill_in_turn if state == "in-turn" else fill_at_once)(range(64))
run(state)
