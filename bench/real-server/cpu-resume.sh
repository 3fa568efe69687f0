#!/usr/bin/env bash
# calibrate --resume against a real llama.cpp server on this machine's CPU (session 56: no GPU machine came): a
# calibration cut by SIGINT after CUT_S seconds, the server restarted (as a GPU call's limit leaves it), the same
# command again with --resume; then the same calibration uncut on a restarted server, for the time it takes whole.
#   SERVER=/path/to/llama-server MODEL=/path/to/model.gguf bash bench/real-server/cpu-resume.sh OUT_DIR
# The model: tiny-llama-gguf.py (a random-weight llama); the server: llama.cpp built on CPU (see the README's
# "Real servers"). Not a test: it takes ~6 minutes on 2 cores.
set -euo pipefail
out=${1:?usage: cpu-resume.sh OUT_DIR}
server=${SERVER:?the llama-server binary}
model=${MODEL:?the model (gguf)}
port=${PORT:-18080}
cut=${CUT_S:-95}
repo=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
rm -rf "$out/cut" "$out/whole"
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; true' EXIT
restart() {
  [ -n "$pid" ] && kill $pid 2>/dev/null && wait $pid 2>/dev/null || true
  "$server" -m "$model" --parallel 4 -c 4096 --metrics --port "$port" >"$out/server-$1.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && return 0; sleep 0.1; done
  echo "llama-server did not become healthy" && return 1
}
# each line with the seconds since its command began
calibrate() {
  local log=$1 start
  shift
  start=$(date +%s)
  node "$repo/bin/vitest-llm-perf.js" calibrate "http://127.0.0.1:$port" --api completions --budget-s 30 --layers 4 "$@" 2>&1 |
    while IFS= read -r line; do printf '%4ds %s\n' $(($(date +%s) - start)) "$line"; done >"$log"
}
restart cut
timeout -s INT "$cut" bash -c "$(declare -f calibrate); repo=$repo port=$port calibrate '$out/cut-1.log' --out '$out/cut.json' --work-dir '$out/cut'" || true
echo "cut after $cut s: $(($(wc -l <"$out/cut/probes/journal.jsonl") - 1)) journal lines"
restart resume
calibrate "$out/cut-2.log" --out "$out/cut.json" --work-dir "$out/cut" --resume
echo "resumed: $(grep -c 'from the journal' "$out/cut-2.log") lines read back; $(tail -1 "$out/cut-2.log")"
restart whole
calibrate "$out/whole.log" --out "$out/whole.json" --work-dir "$out/whole"
echo "whole: $(tail -1 "$out/whole.log")"
