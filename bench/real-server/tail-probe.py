"""Where does the TTFT tail of closed-loop users come from? At 16 and 32 users the calibrated simulator reads the H100
server's TTFT p90 30-45 % low, fresh and used alike, where its p50 is within ~15 %. llama.cpp's server, choosing an
idle slot by LRU for a prompt that matches none, saves that slot's context into its host-RAM prompt cache first
(`--cache-ram`, 8 GiB by default: a copy of the slot's KV cells off the GPU, in the server's loop, before any batch) in
newer builds; c392e5094, the issue's, has no prompt cache but compares the prompt with every idle slot's tokens (LCS)
before it takes one, which the model has a term for. Is the tail in the wait before a prompt is processed or in its
processing? This probe runs closed-loop users 16 and 32 on the server it is given, streaming every request, and
writes each request's send, first and last token times and the server's own timings; then one line a load: TTFT
p50/p90 from the client, the server's prompt_ms p50/p90 and the wait before it (TTFT less prompt_ms). With FILL,
every slot is first given a FILL-token prompt (the used state of the tables). Not a test: `h100-predict.sh tail`.

  python3 tail-probe.py URL OUT.jsonl LABEL [FILL]
"""

import json
import sys

from llama_probe import Server, closed_loop

URL, OUT, LABEL = sys.argv[1], sys.argv[2], sys.argv[3]
server = Server(URL, 17)


def stream(prompt_len, out_len):
    r = server.tokens(prompt_len, out_len)
    times = r["times"]
    return {"sent": r["sent"], "first": times[0] if times else None, "last": times[-1] if times else None,
            "tokens": len(times), "timings": r["timings"]}


def users(c, seconds, prompt_len=256, out_len=128):
    """Closed-loop users, each sending its next request when its answer ends, until `seconds` have passed."""
    return closed_loop(c, lambda: stream(prompt_len, out_len), seconds=seconds)


def pct(xs, q):
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(q * (len(xs) - 1) + 0.5))], 1) if xs else None


def summary(name, reqs, before, after):
    # every request, the users' first (sent together at the start) among them; the file keeps each request's times, so
    # a reader can leave the start out (docs/calibration.md's figures are after each load's first 5 s)
    ttft = [(r["first"] - r["sent"]) * 1000 for r in reqs if r["first"] is not None]
    prompt = [r["timings"]["prompt_ms"] for r in reqs if r["timings"]]
    wait = [(r["first"] - r["sent"]) * 1000 - r["timings"]["prompt_ms"] for r in reqs if r["timings"] and r["first"]]
    tpot = [(r["last"] - r["first"]) * 1000 / (r["tokens"] - 1) for r in reqs if r["tokens"] > 1]
    row = {"server": LABEL, "load": name, "requests": len(reqs), "kv_before": before, "kv_after": after,
           "ttft_p50": pct(ttft, 0.5), "ttft_p90": pct(ttft, 0.9), "prompt_ms_p50": pct(prompt, 0.5),
           "prompt_ms_p90": pct(prompt, 0.9), "wait_p50": pct(wait, 0.5), "wait_p90": pct(wait, 0.9),
           "tpot_p50": pct(tpot, 0.5), "tpot_p90": pct(tpot, 0.9)}
    print(json.dumps(row), flush=True)
    with open(OUT, "a") as out:
        out.write(json.dumps(row) + "\n")
        for r in reqs:
            out.write(json.dumps({"server": LABEL, "load": name, **r}) + "\n")


if len(sys.argv) > 4:
    for s in range(64):
        server.post({"prompt": server.ids(int(sys.argv[4])), "n_predict": 1, "id_slot": s, "cache_prompt": True})
for c, seconds in ((16, 25), (32, 30)):
    before = server.kv()
    reqs = users(c, seconds)
    summary(f"users-{c}", reqs, before, server.kv())
