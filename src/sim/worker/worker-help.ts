import { PROFILES } from './profiles.ts'

export const WORKER_HELP = `vitest-llm-perf sim-server [flags]

A simulated SGLang worker: SGLang's HTTP protocol over a real-time model of continuous batching.
Flags with SGLang's names mean what they mean in sglang.launch_server.

  --host HOST                       bind address (default 127.0.0.1)
  --port PORT                       port (default 30000; 0 picks a free one and prints it)
  --model-path NAME                 reported model path (default sim/<profile>)
  --served-model-name NAME          model id on /v1/models (default: the model path)
  --max-running-requests N          concurrent running requests (default: the profile's)
  --max-total-tokens N              KV-cache token budget (default: the profile's)
  --chunked-prefill-size N          prefill tokens per step, -1 disables chunking (default 8192)
  --max-queued-requests N           answer 503 "The request queue is full." past N waiting
  --enable-metrics                  /metrics and the timing fields in meta_info
  --enable-cache-report             /v1/* usage carries prompt_tokens_details.cached_tokens (as SGLang's flag)
  --incremental-streaming-output    /generate streams deltas instead of cumulative text
  --stream-interval N               tokens per streamed chunk (default 1)
  --disable-radix-cache             no prefix caching
  --skip-server-warmup              ready at once
  --random-seed N                   seed for EOS lengths, output tokens and faults
  --api-key KEY                     require Authorization: Bearer KEY
  --timestamp-format F              meta_info timing names: current | v0.5.5 | v0.5.6 | patched

Simulator only:
  --profile NAME|FILE.json          speed profile: ${Object.keys(PROFILES).join(', ')} (derived on paper), or
                                    a profile.json that \`vitest-llm-perf calibrate\` measured on a real server
  --speed X                         time scale: 2 runs every step twice as fast (default 1)
  --kv-cache-tokens N               the cells idle slots hold at start, with a profile calibrated on llama.cpp
                                    (its unified KV cache keeps finished requests' contexts): the state a used
                                    server is in, as its llamacpp:kv_cache_tokens says (default 0: fresh)
  --reasoning-tokens N              the first N tokens of every answer are reasoning, each API in its own form:
                                    chat's delta.reasoning_content (and usage's completion_tokens_details
                                    .reasoning_tokens), /v1/completions' and /generate's text inside
                                    <think>…</think>, as a reasoning model behind SGLang's --reasoning-parser
                                    serves them (default 0)
  --speculative-accept-length X     speculative decoding: a decode step yields X tokens a request on average (at
                                    its one step's cost), sent in one chunk; meta_info carries spec_verify_ct, the
                                    verifies, as SGLang's with a draft model (default 1: off)
  --startup-delay S                 seconds before listening, as a model load (default 0)
  --warmup-time S                   seconds /health answers 503 after listening (default 0.2)

Faults:
  --fault-crash-at-start MESSAGE    print MESSAGE to stderr and exit 1 instead of starting
  --fault-exit-after S              SIGKILL itself S seconds after becoming ready (mid-stream)
  --fault-exit-after-tokens N       SIGKILL itself once it has generated N output tokens: mid-stream by the load's
                                    own progress, however busy the machine (tests wait on this, not on time)
  --fault-refuse-after S            stop accepting connections S seconds after becoming ready
  --fault-error-rate P              fail a fraction P of requests (500, or an error chunk when streaming)
  --fault-drop-requests N,M         close the connection of the Nth and Mth generation requests (counted from 1)
                                    unanswered, as a server that drops a connection now and then
  --fault-stall-rate P              pause a fraction P of streams half-way, for --fault-stall-ms
  --fault-stall-ms MS               the pause, in milliseconds (default 2000)

Accepted and ignored (so SGLang command lines run unchanged): --tp-size, --dp-size,
--mem-fraction-static, --base-gpu-id, --context-length, --schedule-policy, --log-level, and others.

Examples:
  npx vitest-llm-perf sim-server --port 30000 --enable-metrics
  npx vitest-llm-perf sim-server --port 30001 --enable-metrics --profile llama-3.1-70b-h100-tp4 --speed 4 \\
      --max-running-requests 64 --fault-error-rate 0.01`
