"""What llama.cpp's server does with a step, in its own words (each response's `timings`): prefill time by prompt
length at a fixed KV occupancy, prompts batched together, decode steps by streams and occupancy, and a prompt that
arrives among streams. The server must run with --slot-save-path (so POST /slots/N?action=erase empties a slot) and
--metrics (kv_cache_tokens). Every request names its slot (`id_slot`), so what the cache holds is what this script
put there. Not a test: bench/real-server/h100-predict.sh runs it on the GPU machine.

  python3 probe-llamacpp.py URL SLOTS OUT.jsonl
"""

import asyncio
import json
import random
import statistics
import sys
import time

import aiohttp

URL, SLOTS, OUT = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = random.Random(7)
out = open(OUT, "w")


def record(kind, **kw):
    row = {"kind": kind, **kw}
    out.write(json.dumps(row) + "\n")
    out.flush()
    print(json.dumps(row), flush=True)


def ids(n):
    # byte tokens of the random-weight model's vocabulary: no two prompts share a prefix
    return [rng.randrange(3, 250) for _ in range(n)]


async def kv(s):
    async with s.get(f"{URL}/metrics") as r:
        for line in (await r.text()).splitlines():
            if line.startswith("llamacpp:kv_cache_tokens"):
                return int(float(line.split()[-1]))
    return None


async def erase_all(s):
    for i in range(SLOTS):
        async with s.post(f"{URL}/slots/{i}?action=erase") as r:
            await r.read()


async def complete(s, slot, n_prompt, n_predict):
    body = {"prompt": ids(n_prompt), "n_predict": n_predict, "id_slot": slot, "cache_prompt": True,
            "temperature": 0, "ignore_eos": True}
    t0 = time.perf_counter()
    async with s.post(f"{URL}/completion", json=body) as r:
        j = await r.json()
    wall = (time.perf_counter() - t0) * 1000
    t = j.get("timings", {})
    return {"wall_ms": wall, "prompt_ms": t.get("prompt_ms"), "prompt_n": t.get("prompt_n"),
            "tpot_ms": t.get("predicted_per_token_ms"), "predicted_n": t.get("predicted_n")}


async def fill(s, first, last, tokens):
    """Slots first..last-1 each hold `tokens` cells."""
    await asyncio.gather(*(complete(s, i, tokens, 1) for i in range(first, last)))


async def prefill_series(s, label, lengths, reps=4):
    for n in lengths:
        rows = [await complete(s, 0, n, 1) for _ in range(reps)]
        record("prefill", state=label, prompt=n, kv=await kv(s),
               prompt_ms=statistics.median(r["prompt_ms"] for r in rows),
               wall_ms=statistics.median(r["wall_ms"] for r in rows))


async def decode_series(s, label, counts, prompt=128, predict=128):
    for c in counts:
        before = await kv(s)
        rows = await asyncio.gather(*(complete(s, i, prompt, predict) for i in range(c)))
        record("decode", state=label, streams=c, prompt=prompt, kv_before=before, kv_after=await kv(s),
               tpot_ms=statistics.median(r["tpot_ms"] for r in rows),
               prompt_ms=statistics.median(r["prompt_ms"] for r in rows))


async def main():
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=600)) as s:
        for _ in range(8):
            await complete(s, 0, 32, 4)
        await erase_all(s)
        await prefill_series(s, "empty", [32, 64, 128, 256, 512, 1024, 2048])
        # prompts batched together: k at once, each in its own slot, nothing else held
        for k in [2, 4, 8, 16]:
            for L in [256, 1024]:
                await erase_all(s)
                rows = await asyncio.gather(*(complete(s, i, L, 1) for i in range(k)))
                record("batched", prompts=k, prompt=L, kv=await kv(s),
                       prompt_ms=[round(r["prompt_ms"], 2) for r in rows],
                       wall_ms=[round(r["wall_ms"], 2) for r in rows])
        await erase_all(s)
        await decode_series(s, "empty", [1, 4, 16, 32, 64])
        # occupancy: every other slot holds F cells
        for F in [256, 1024, 3072]:
            await erase_all(s)
            await fill(s, 1, SLOTS, F)
            label = f"others-{F}"
            await prefill_series(s, label, [128, 512, 2048], reps=3)
            await fill(s, 1, SLOTS, F)
            await decode_series(s, label, [1, 8, 32], predict=64)
        # a prompt among streams: 8 streams decode 256 tokens; prompts of 512 arrive in slot 9 one after another
        for L in [128, 512, 2048]:
            await erase_all(s)
            base = await asyncio.gather(*(complete(s, i, 128, 256) for i in range(8)))
            await erase_all(s)
            streams = asyncio.gather(*(complete(s, i, 128, 256) for i in range(8)))
            await asyncio.sleep(0.2)
            injected = []
            for _ in range(3):
                injected.append(await complete(s, 9, L, 1))
                await asyncio.sleep(0.1)
            mixed = await streams
            record("mixed", streams=8, prompt=L,
                   injected_prompt_ms=[round(r["prompt_ms"], 2) for r in injected],
                   injected_wall_ms=[round(r["wall_ms"], 2) for r in injected],
                   tpot_alone=statistics.median(r["tpot_ms"] for r in base),
                   tpot_with=statistics.median(r["tpot_ms"] for r in mixed))


asyncio.run(main())
