"""What the python probes of llama.cpp's server share (h100-predict.sh runs them): a /completion, streamed or not, the
KV cache tokens its /metrics reports, and random prompt ids from a seeded generator (a probe's prompts are the same
each run; drawn under a lock, as the probes that send from several threads do).
"""

import http.client
import json
import random
import threading
import time
import urllib.parse
import urllib.request

# the random model's byte tokens banned (`logit_bias`): llama.cpp holds back a token that is half a UTF-8 character
# and sends it with the next, so its gap would read as two steps
BYTE_TOKEN_BAN = [[3 + i, False] for i in range(256)]


class Server:
    def __init__(self, url, seed, timeout=300):
        self.url = url
        self.rng = random.Random(seed)
        self.timeout = timeout
        self.lock = threading.Lock()

    def post(self, body):
        """One /completion, its JSON answer."""
        return self.timed_post(body)[1]

    def timed_post(self, body):
        """One /completion: the milliseconds from send to its whole answer, and the answer."""
        req = urllib.request.Request(
            self.url + "/completion", json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        t0 = time.perf_counter()
        with urllib.request.urlopen(req, timeout=self.timeout) as r:
            got = json.loads(r.read())
        return (time.perf_counter() - t0) * 1000, got

    def together(self, bodies):
        """The bodies sent at once, a thread each, released together: the client's ms from the release to the last
        answer, and each answer's own prompt_ms (llama.cpp's timings)."""
        got = [None] * len(bodies)
        start = threading.Barrier(len(bodies) + 1)

        def one(i):
            start.wait()
            got[i] = self.post(bodies[i])

        threads = [threading.Thread(target=one, args=(i,)) for i in range(len(bodies))]
        for t in threads:
            t.start()
        start.wait()
        t0 = time.perf_counter()
        for t in threads:
            t.join()
        return (time.perf_counter() - t0) * 1000, [g["timings"]["prompt_ms"] for g in got]

    def stream(self, body):
        """One streamed /completion: its send time, each event with its arrival time (time.perf_counter()), and the
        final event's timings."""
        host = urllib.parse.urlparse(self.url)
        conn = http.client.HTTPConnection(host.hostname, host.port, timeout=self.timeout)
        t0 = time.perf_counter()
        conn.request("POST", "/completion", json.dumps({**body, "stream": True}), {"Content-Type": "application/json"})
        events, timings = [], None
        for raw in conn.getresponse():
            line = raw.decode().strip()
            if not line.startswith("data: "):
                continue
            d = json.loads(line[6:])
            events.append((time.perf_counter(), d))
            if d.get("stop"):
                timings = d.get("timings")
        conn.close()
        return t0, events, timings

    def tokens(self, prompt_len, out_len, slot=None):
        """One streamed /completion of a random prompt, greedy, every token asked for and the byte tokens banned, left
        to the server's slot choice or in `slot`: its send time, each token's arrival time and the final timings."""
        body = {"prompt": self.ids(prompt_len), "n_predict": out_len, "ignore_eos": True, "temperature": 0,
                "logit_bias": BYTE_TOKEN_BAN, "cache_prompt": True}
        if slot is not None:
            body["id_slot"] = slot
        t0, events, timings = self.stream(body)
        return {"sent": t0, "times": [t for t, d in events if not d.get("stop")], "timings": timings}

    def kv(self):
        """The tokens the KV cache holds (llamacpp:kv_cache_tokens, with --metrics); None where not reported."""
        with urllib.request.urlopen(self.url + "/metrics", timeout=10) as r:
            for line in r.read().decode().splitlines():
                if line.startswith("llamacpp:kv_cache_tokens"):
                    return float(line.split()[-1])

    def ids(self, n):
        """n random token ids from the model's ordinary range."""
        with self.lock:
            return [self.rng.randrange(10, 300) for _ in range(n)]


def started_together(c, send):
    """c calls of send() at once, a thread each (calibrate's decode probe round, and its fills): their results."""
    got = [None] * c
    ts = [threading.Thread(target=lambda i=i: got.__setitem__(i, send())) for i in range(c)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return got


def closed_loop(c, send, per_user=None, seconds=None):
    """Closed-loop users: c threads, each calling send() for its next request as soon as its last returns, per_user
    times each or until `seconds` have passed; every result, in the order they ended."""
    got = []
    lock = threading.Lock()
    end = None if seconds is None else time.perf_counter() + seconds

    def user():
        n = 0
        while (per_user is None or n < per_user) and (end is None or time.perf_counter() < end):
            r = send()
            n += 1
            with lock:
                got.append(r)

    ts = [threading.Thread(target=user) for _ in range(c)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return got
