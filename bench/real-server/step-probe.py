"""Where a step's time goes on llama.cpp's server (issue 43), read from the server's own step log (step-log-patch.py,
LLAMA_STEP_LOG=1): calibrate's prefill probes and batch-probe's against the same state, and the rounds of a load. Each
phase's start and end are written as markers on this machine's monotonic clock (the log's t_us is ggml_time_us(),
CLOCK_MONOTONIC too), so steplog-read.py can cut the server's log by phase. Not a test: h100-predict.sh steplog.

  python3 step-probe.py URL OUT.jsonl calibrate|load|hog|layout|layouts|gaps
"""

import json
import os
import subprocess
import sys
import threading
import time
import urllib.request

from llama_probe import BYTE_TOKEN_BAN, Server, closed_loop

URL, OUT, WHAT = sys.argv[1], sys.argv[2], sys.argv[3]
server = Server(URL, 43)
post, kv, ids = server.post, server.kv, server.ids
out = open(OUT, "a")


def mark(phase, edge, **extra):
    row = {"phase": phase, "edge": edge, "t_us": time.monotonic_ns() // 1000, "kv": kv(), **extra}
    out.write(json.dumps(row) + "\n")
    out.flush()
    print(json.dumps(row), flush=True)


def at_once(bodies):
    threads = [threading.Thread(target=post, args=(b,)) for b in bodies]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def one(phase, body, times):
    """The requests of a phase one after another, each's client ms and llama.cpp's prompt_ms."""
    mark(phase, "start")
    got = []
    for _ in range(times):
        ms, answer = server.timed_post(body())
        got.append({"client_ms": round(ms, 2), "prompt_ms": answer["timings"]["prompt_ms"]})
    mark(phase, "end", requests=got)


def erase_every_slot():
    """Every slot emptied (llama.cpp's /slots/N?action=erase; the server needs --slot-save-path)."""
    for i in range(64):
        urllib.request.urlopen(urllib.request.Request(f"{URL}/slots/{i}?action=erase", method="POST"), timeout=30)


def settle():
    """calibrate's settle: 512 decode steps in slot 0, so llama.cpp's defrag has closed the fill's holes."""
    post({"prompt": ids(32), "n_predict": 512, "id_slot": 0, "logit_bias": BYTE_TOKEN_BAN, "ignore_eos": True})


def warm():
    """As predict-check.ts's WARM=1: one request a slot, all at once, then every slot emptied (the fresh server's one
    ~0.9-s stall out of the load; the cells' freed bookkeeping left to the allocator)."""
    mark("warm", "start")
    at_once([{"prompt": ids(256), "n_predict": 16, "id_slot": i} for i in range(64)])
    erase_every_slot()
    mark("warm", "end")


if WHAT == "load" or os.environ.get("WARM") == "1":
    warm()

if WHAT == "calibrate":
    # calibrate's state at its 256-token occupancy: 64 prompts at once (calibrate's fill is 64 users), then the settle
    # (512 decode steps in slot 0), then its table's prefills in slot 0, five of each length, in its order
    mark("fill-64-at-once", "start")
    at_once([{"prompt": ids(256), "n_predict": 1, "cache_prompt": True} for _ in range(64)])
    mark("fill-64-at-once", "end")
    mark("settle", "start")
    settle()
    mark("settle", "end")
    for n in [32, 128, 256, 512, 1024, 2048]:
        one(f"calibrate-slot0-{n}", lambda n=n: {"prompt": ids(n), "n_predict": 1, "id_slot": 0}, 5)
    # batch-probe's state: slots 0-7 refilled to 256, one at a time, before each round
    for name, sizes in [("one-1024", [1024]), ("four-256", [256] * 4)]:
        mark(f"batch-{name}", "start")
        rounds = []
        for _ in range(5):
            for slot in range(8):
                post({"prompt": ids(256), "n_predict": 1, "id_slot": slot, "cache_prompt": True})
            wall, pm = server.together([{"prompt": ids(n), "n_predict": 1, "id_slot": i} for i, n in enumerate(sizes)])
            rounds.append({"client_ms": round(wall, 2), "prompt_ms": max(pm)})
        mark(f"batch-{name}", "end", requests=rounds)
    # calibrate's 1,024 again after batch-probe's rounds: the same prompt in the same slot, another history
    one("calibrate-slot0-1024-again", lambda: {"prompt": ids(1024), "n_predict": 1, "id_slot": 0}, 5)
if WHAT == "load":
    # issue 43's users-4 row: four closed-loop users, 256-token prompts, 128-token answers, 12 requests a user, on a
    # server started for it (each request takes a slot no request has used)
    mark("users-4", "start")
    got = closed_loop(4, lambda: server.timed_post({"prompt": ids(256), "n_predict": 128, "logit_bias": BYTE_TOKEN_BAN,
                                                  "ignore_eos": True, "cache_prompt": True}), per_user=12)
    mark("users-4", "end", requests=[{"client_ms": round(ms, 2), "prompt_ms": a["timings"]["prompt_ms"]}
                                     for ms, a in got])
if WHAT == "hog":
    # does the host's other work slow a step? calibrate's 256-token occupancy, then one 1,024-token prompt in slot 0
    # (ten) and a 64-token answer in slot 0 (five) with 0, 8 and 16 busy processes (`yes`) beside the server, and with
    # none again
    at_once([{"prompt": ids(256), "n_predict": 1, "cache_prompt": True} for _ in range(64)])
    settle()
    for hogs in [0, 8, 16, 0]:
        busy = [subprocess.Popen(["timeout", "120", "yes"], stdout=subprocess.DEVNULL) for _ in range(hogs)]
        try:
            one(f"hogs-{hogs}-prefill-1024", lambda: {"prompt": ids(1024), "n_predict": 1, "id_slot": 0}, 10)
            mark(f"hogs-{hogs}-decode", "start")
            tpots = [post({"prompt": ids(32), "n_predict": 64, "id_slot": 0, "logit_bias": BYTE_TOKEN_BAN,
                           "ignore_eos": True})["timings"]["predicted_per_token_ms"] for _ in range(5)]
            mark(f"hogs-{hogs}-decode", "end", tpot_ms=tpots)
        finally:
            for b in busy:
                b.terminate()
                b.wait()
if WHAT == "layout":
    # does the cells' order cost the host's mask? the same 64 × 256 cells held, laid out as 64 runs (the prompts at
    # once: each slot's cells in one run) and interleaved (64 streams decoding at once: one cell of each slot a step);
    # then five 512-token prompts in slot 0 on each
    for r in range(int(os.environ.get("ROUNDS", "1"))):
        erase_every_slot()
        at_once([{"prompt": ids(256), "n_predict": 1, "id_slot": i, "cache_prompt": True} for i in range(64)])
        one(f"runs-prefill-512-{r}", lambda: {"prompt": ids(512), "n_predict": 1, "id_slot": 0}, 5)
        erase_every_slot()
        at_once([{"prompt": ids(16), "n_predict": 240, "id_slot": i, "logit_bias": BYTE_TOKEN_BAN,
                  "ignore_eos": True, "cache_prompt": True} for i in range(64)])
        one(f"interleaved-prefill-512-{r}", lambda: {"prompt": ids(512), "n_predict": 1, "id_slot": 0}, 5)
if WHAT == "layouts":
    # the prompt's cost by how the 64 × 256 cells lie: in runs (prompts at once), as a 256/128 load leaves them (a
    # 171-token prompt then 85 tokens decoded, all 64 at once: two thirds in runs) and interleaved (16 + 240 decoded);
    # 512- and 2,048-token prompts in slot 0 on each, rounds alternating so the layout is not confounded with time
    shapes = {"runs": (256, 1), "loadlike": (171, 86), "interleaved": (16, 241)}
    for r in range(int(os.environ.get("ROUNDS", "2"))):
        for name, (prompt, answer) in shapes.items():
            erase_every_slot()
            at_once([{"prompt": ids(prompt), "n_predict": answer, "id_slot": i, "logit_bias": BYTE_TOKEN_BAN,
                      "ignore_eos": True, "cache_prompt": True} for i in range(64)])
            for n in [512, 2048]:
                one(f"{name}-prefill-{n}-{r}", lambda n=n: {"prompt": ids(n), "n_predict": 1, "id_slot": 0}, 3)
            # and the streams' steps on that layout: one stream, then two at once, 64 tokens each (slots 1 and 2)
            for streams in [1, 2]:
                mark(f"{name}-decode-{streams}-{r}", "start")
                tpots = []
                for _ in range(3):
                    bodies = [{"prompt": ids(32), "n_predict": 64, "id_slot": 1 + i, "logit_bias": BYTE_TOKEN_BAN,
                               "ignore_eos": True} for i in range(streams)]
                    got = [None] * streams
                    ts = [threading.Thread(target=lambda i=i: got.__setitem__(i, post(bodies[i])))
                          for i in range(streams)]
                    for t in ts:
                        t.start()
                    for t in ts:
                        t.join()
                    tpots += [g["timings"]["predicted_per_token_ms"] for g in got]
                mark(f"{name}-decode-{streams}-{r}", "end", tpot_ms=tpots)
if WHAT == "gaps":
    # does a stream decode slower after the server sat idle (GPU clocks, the host's wake-up)? one 256/128 request at a
    # time after 0, 50, 300 and 1,000 ms idle, rounds alternating; then a prompt arriving among two streams
    for r in range(2):
        for gap in [0, 0.05, 0.3, 1.0]:
            mark(f"gap-{int(gap * 1000)}-{r}", "start")
            got = []
            for _ in range(4):
                time.sleep(gap)
                ms, a = server.timed_post({"prompt": ids(256), "n_predict": 128, "logit_bias": BYTE_TOKEN_BAN,
                                           "ignore_eos": True})
                got.append({"client_ms": round(ms, 2), "prompt_ms": a["timings"]["prompt_ms"],
                            "tpot_ms": a["timings"]["predicted_per_token_ms"]})
            mark(f"gap-{int(gap * 1000)}-{r}", "end", requests=got)
