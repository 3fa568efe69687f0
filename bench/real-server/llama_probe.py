"""What the python probes of llama.cpp's server share (h100-predict.sh runs them): a /completion, the KV cache
tokens its /metrics reports, and random prompt ids from a seeded generator (a probe's prompts are the same each run).
"""

import json
import random
import time
import urllib.request


class Server:
    def __init__(self, url, seed, timeout=300):
        self.url = url
        self.rng = random.Random(seed)
        self.timeout = timeout

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

    def kv(self):
        """The tokens the KV cache holds (llamacpp:kv_cache_tokens, with --metrics); None where not reported."""
        with urllib.request.urlopen(self.url + "/metrics", timeout=10) as r:
            for line in r.read().decode().splitlines():
                if line.startswith("llamacpp:kv_cache_tokens"):
                    return float(line.split()[-1])

    def ids(self, n):
        """n random token ids from the model's ordinary range."""
        return [self.rng.randrange(10, 300) for _ in range(n)]
