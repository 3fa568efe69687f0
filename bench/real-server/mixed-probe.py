"""What a prompt costs among streams: llama.cpp's own prompt_ms for a 256-token prefill pinned to slot 0 while N other
slots decode (N = 0, 2, 8, 32), every other slot first filled in turn with a 383-token prompt (~24k cells held), and
the client's TTFT beside it (the wait before the prompt began is the difference). Not a test: h100-predict.sh mixed.

  python3 mixed-probe.py URL OUT.jsonl
"""

import json
import statistics
import sys
import threading
import time

from llama_probe import Server

URL, OUT = sys.argv[1], sys.argv[2]
server = Server(URL, 5)
post, kv, ids = server.post, server.kv, server.ids
out = open(OUT, "w")


for slot in range(1, 64):
    post({"prompt": ids(383), "n_predict": 1, "id_slot": slot, "cache_prompt": True})

for n in [0, 2, 8, 32]:
    stop = threading.Event()
    tpots = []

    def stream(slot):
        while not stop.is_set():
            r = post({"prompt": ids(128), "n_predict": 96, "ignore_eos": True, "id_slot": slot})
            tpots.append(r["timings"]["predicted_per_token_ms"])

    threads = [threading.Thread(target=stream, args=(s,)) for s in range(1, n + 1)]
    for t in threads:
        t.start()
    time.sleep(0.5)
    held = kv()
    prompt_ms, ttft_ms = [], []
    for _ in range(8):
        t0 = time.perf_counter()
        r = post({"prompt": ids(256), "n_predict": 1, "id_slot": 0, "cache_prompt": True})
        ttft_ms.append((time.perf_counter() - t0) * 1000)
        prompt_ms.append(r["timings"]["prompt_ms"])
        time.sleep(0.05)
    stop.set()
    for t in threads:
        t.join()
    row = {"streams": n, "kv": held, "prompt_ms_p50": statistics.median(prompt_ms), "prompt_ms": prompt_ms,
           "client_ms_p50": statistics.median(ttft_ms), "stream_tpot_ms_p50": statistics.median(tpots) if tpots else None}
    out.write(json.dumps(row) + "\n")
    out.flush()
    print(json.dumps(row), flush=True)
