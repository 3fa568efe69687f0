#!/usr/bin/env bash
# The real-server checks of issues 43 and 44 on the GPU machine, one step a call of the device tool (the machine
# keeps .llama/, the CUDA build and the model, while it stays warm; chain the calls):
#   run(command: 'bash bench/real-server/h100-predict.sh calibrate', carry: ['.device'])  # build, model, profile
#   (calibrate again, chained at once, resumes one the call's limit cut: its journal is .llama/cal, this GPU's own)
#   run(command: 'bash bench/real-server/h100-predict.sh fresh', carry: ['.device'])      # table, restarted server
#   run(command: 'bash bench/real-server/h100-predict.sh used', carry: ['.device'])       # table, every slot used
#   run(command: 'bash bench/real-server/h100-predict.sh history', carry: ['.device'])    # a series for the gate
#   gpus: a CLI run with --gpus auto (issue 47); churn: the same pinned steps on a server filled in order and on one
#   that served traffic (churn-probe.py); ONLY=capacity with fresh|used: the capacity search alone (used: from the
#   state the rows leave, every slot 256 + 127 tokens); batch: several prompts at once (batch-probe.py); STEADY=1 with
#   fresh|used: closed-loop users rows of 8 requests a user, each user's first left out (predict-check.ts); RATE_BASE=search
#   with fresh|used: the Poisson rows at 0.25/0.5/0.75 of the real server's capacity, searched first (the issue's rates;
#   session 40's used call took 592 s of the 600 a call may: add ONLY=rows, and search the simulator's capacity off the
#   GPU with `MEASURED=TABLE.md ONLY=capacity node bench/real-server/predict-check.ts PROFILE STATE OUT`, from the cells
#   the table's capacity row says the real search began at); WARM=1
#   with fresh: each restarted server serves one request a slot and is emptied before the load (the fresh server's
#   one ~0.9-s stall, session 28, out of the load)
#   BYTES=1 with fresh|used: the random model's byte tokens allowed on the real side (predict-check bans them by default:
#   a first token that opens a UTF-8 character is held back, and sessions 34-40 ran so, 92 % of answers held in part)
#   steplog (DEVICE=.device-sl: node, node_modules, the full source): the server patched to log every step
#   (step-log-patch.py), step-probe.py's calibrate phases and a users-4 load (session 30); hog, layout: step-probe.py
#   on the unpatched server; layouts (session 33): 512- and 2,048-token prompts and one and two streams on 64 × 256
#   cells laid in runs, as a 256/128 load leaves them and interleaved; gaps: one request at a time after 0-1,000 ms
#   idle. Two of these in one command: the second takes the next free port (waitPortFree; the first's is held a
#   minute after it stops, which lost two steps in session 33). Keep $OUT to a few files: the device tool leaves out
#   files past a count
#   pair "CMD0" "CMD1" (nvidia-h200-x2, session 31): two steps at once, a GPU each (their own port, work folder and
#   results), e.g. pair "WARM=1 bash $0 fresh" "bash $0 used"; bench/real-server/median-table.py reads several runs'
#   rows as the real side's median. The H100's build (CUDA 13, sm_90) runs on the H200 unchanged
#   One GPU (nvidia-h200, session 34): chain calls at once so the machine stays warm (it keeps .llama/profile.json, the
#   last calibration, which fresh|used read when PROFILE is not given), two steps in one call with the second on its
#   own port and results folder, e.g. "bash $0 used; PORT=8082 OUT=\$OUT/r2 WARM=1 bash $0 fresh": calibrate (~340 s),
#   the fresh rows (~200 s), the used rows then the fresh again (~440 s), both capacities (~530 s) fit 1,800 s.
#   Session 35: the next call met a bare machine twice (its build gone: 194 s again, and a calibration cut at 600 s):
#   put the llama-bin.tar.xz.* a call sends back into .device-all/ before the next call, whatever `warm` said. Within
#   the device tool's 64 MiB: node stripped and xz -9e (27 MB), the build recompressed xz -9e (34 MB), node_modules
#   without *.d.ts, *.ts, docs/, test/, benchmark/, examples/, zod's src/ and locales/ (1.2 MB), gguf-py alone
#   as llama-src.tar.xz (60 KB): 62 MB. Calibrate takes ~450 s with the streams probed on interleaved cells
# .device/ holds what the machine lacks (it reaches nothing outside): node.xz (node@24's binary), node_modules.tar.xz
# (`npm ci --omit=dev --omit=peer`) and llama-src.tar.xz (llama.cpp c392e5094's source without models/, docs/, media/,
# with an empty pocs/CMakeLists.txt). The server is issue 43's: a random-weight llama of 16 layers × 2048 (F16,
# ~0.8 B, tiny-llama-gguf.py), `-ngl 99 --parallel 64 -c 262144 --metrics`.
set -euo pipefail
step=${1:?usage: h100-predict.sh pair|calibrate|asfound|asfound-repeat|steplog|hog|layout|layouts|fresh|used|history|explore|gpus|endpoint|churn|batch|pin|mixed|slotwait|window|streamtpot|pathprobe|loadsteps|drift|tail|build-new|spec|graphs}
repo=$(pwd)
out=${OUT:-/tmp/out}
# PORT, W: the server's port and the work folder, so that `pair` can run two steps at once, a GPU each
port=${PORT:-8080}
w=${W:-/tmp/w}
mkdir -p "$out" /tmp/w "$w" "$repo/.llama"
# DEVICE=.device-llama (the llama.cpp parts alone) for the python probes: the tree and .device pass 64 MiB together.
# DEVICE=.device-all (session 28, 63 MB): an earlier call's llama-bin.tar.xz.* (recompressed, xz -9e), node stripped
# (`strip`, xz -9e: 27 MB), node_modules without *.d.ts, *.map, *.md, LICENSE* (2.4 MB) and gguf-py alone as
# llama-src.tar.xz: every step, the node ones too, without the 260-s build
dev=$repo/${DEVICE:-.device}
if [ ! -x /tmp/w/node ] && [ -f "$dev/node.xz" ]; then
  xz -dc "$dev/node.xz" >/tmp/w/node && chmod +x /tmp/w/node
fi
export PATH=/tmp/w:$PATH
[ -d "$repo/node_modules/undici" ] || [ ! -f "$dev/node_modules.tar.xz" ] || tar xJf "$dev/node_modules.tar.xz" -C "$repo"
llama=$repo/.llama
if [ ! -x "$llama/build/bin/llama-server" ] && ls "$dev"/llama-bin.tar.xz.* >/dev/null 2>&1; then
  # a build an earlier call sent back (static, sm_90): 3.5 minutes of GPU time saved a call
  mkdir -p "$llama/build/bin" "$llama/src"
  cat "$dev"/llama-bin.tar.xz.* | tar xJf - -C "$llama/build/bin"
  tar xJf "$dev/llama-src.tar.xz" -C "$llama/src"  # gguf-py (the model writer) at least
fi
# a build from another machine's image can lack its libraries there (the H100's linked libcudart.so.13): build again
if [ -x "$llama/build/bin/llama-server" ] && ldd "$llama/build/bin/llama-server" | grep -q 'not found'; then
  ldd "$llama/build/bin/llama-server" | grep 'not found' | tee "$out/ldd-missing.txt"
  rm -f "$llama/build/bin/llama-server"
fi
# buildServer SRC BUILD NAME LOG: llama-server built for CUDA sm_90 from SRC into BUILD (its output in LOG), its
# stripped binary sent back in 15 MB parts ($out/NAME-bin.tar.xz.*): put them in .device*/ and the next calls skip it
buildServer() {
  local src=$1 build=$2 name=$3 log=$4 start
  start=$(date +%s)
  (cd "$src" && cmake -B "$build" -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_CURL=OFF \
    -DBUILD_SHARED_LIBS=OFF -DCMAKE_BUILD_TYPE=Release >"$log" 2>&1 &&
    cmake --build "$build" --target llama-server -j"$(nproc)" >>"$log" 2>&1)
  echo "$name built in $(($(date +%s) - start)) s"
  strip "$build/bin/llama-server" || true
  tar cf - -C "$build/bin" llama-server | xz -6 -T16 | split -b 15M - "$out/$name-bin.tar.xz."
  ls -la "$out/$name"-bin.tar.xz.*
}
# steplog and build-new build their own server: the unpatched build (~290 s of GPU time) is not theirs to wait for
if [ ! -x "$llama/build/bin/llama-server" ] && [ "$step" != steplog ] && [ "$step" != build-new ]; then
  mkdir -p "$llama/src" && tar xJf "$dev/llama-src.tar.xz" -C "$llama/src"
  buildServer "$llama/src" "$llama/build" llama "$out/build.log"
fi
makeModel() {
  [ -f "$llama/model.gguf" ] || PYTHONPATH=$llama/src/gguf-py python3 "$repo/bench/real-server/tiny-llama-gguf.py" \
    "$llama/model.gguf" --embd 2048 --layers 16 --ff 5632 --heads 16 --ctx 16384
}
# build-new writes it while its build runs
[ "$step" = build-new ] || makeModel
server=("$llama/build/bin/llama-server" -m "$llama/model.gguf" -ngl 99 --parallel 64 -c 262144 --metrics)
cli() { node "$repo/bin/vitest-llm-perf.js" "$@"; }
waitHealthy() {
  for _ in $(seq 1 600); do
    curl -sf http://127.0.0.1:$port/health >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "llama-server did not become healthy" && return 1
}
# $port free to bind, or the next free one of this GPU's (a step of 2: `pair`'s other GPU has the other parity). A
# stopped server's port is held for a minute by the connections it closed (TIME_WAIT; its listener did not set
# SO_REUSEADDR): the second of two steps in one command found it taken after 30 s (session 33, here and on the GPU)
portFree() {
  python3 -c "import socket; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', $port))" 2>/dev/null
}
waitPortFree() {
  for _ in $(seq 1 30); do
    portFree && return 0
    sleep 0.1
  done
  for _ in $(seq 1 20); do
    port=$((port + 2))
    portFree && echo "port now $port" && return 0
  done
  echo "no free port up to $port" && return 1
}

# a llama-server for the rest of this step: serve LOG COMMAND ARGS… (on $port, stopped when the step ends)
serve() {
  local log=$1
  shift
  waitPortFree
  "$@" --port $port >"$log" 2>&1 &
  pid=$!
  trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
  waitHealthy
}

# the newer llama.cpp's build (build-new), done within $1 seconds
waitBuilt() {
  for _ in $(seq 1 "$1"); do
    [ -f "$llama/new/built" ] && return 0
    [ -f "$llama/new/building" ] || return 1
    sleep 1
  done
  return 1
}

# calibrateFirstState SECONDS NAME: calibrate on $port as the calibrate step runs it, stopped (SIGINT) after SECONDS,
# its profile and probes under $w/NAME*: its first state (the as-found rows) takes ~60 s on the H100 (session 53)
calibrateFirstState() {
  timeout -s INT "$1" node "$repo/bin/vitest-llm-perf.js" calibrate http://127.0.0.1:$port --api completions \
    --budget-s 200 --layers 16 --out "$w/$2.json" --work-dir "$w/$2-cal"
}

case $step in
pair)
  # two steps at once, one a GPU (nvidia-h200-x2), each its own server port, work folder and results folder:
  #   h100-predict.sh pair "COMMAND FOR GPU 0" "COMMAND FOR GPU 1"   (each a bash command line, run from the repo)
  # every server a step starts is on its own GPU; the host (32 vCPUs) holds both servers' one-thread mask builds
  cmds=("${2:?usage: h100-predict.sh pair CMD0 CMD1}" "${3:?usage: h100-predict.sh pair CMD0 CMD1}")
  for g in 0 1; do
    mkdir -p "$out/g$g"
    (export CUDA_VISIBLE_DEVICES=$g PORT=$((8080 + g)) W=/tmp/w$g OUT=$out/g$g DEVICE=${DEVICE:-.device}
      bash -c "${cmds[$g]}" >"$out/g$g/pair.log" 2>&1; echo "exit $?" >>"$out/g$g/pair.log") &
  done
  wait
  tail -n 3 "$out"/g*/pair.log
  (cd "$out" && tar czf pair.tgz g0 g1 && rm -rf g0 g1)
  ;;
calibrate)
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$out/gpu.txt" 2>&1 || true
  serve "$out/llama-server.log" "${server[@]}"
  start=$(date +%s)
  cat /proc/net/netstat >"$out/calibrate-netstat-before.txt" 2>/dev/null || true
  # a calibration this GPU began and a call's limit cut off (session 55's, at 560 s) goes on from its journal: the
  # next call, on the same warm machine, probes only what it lacks (another GPU's is begun anew: machines differ 1.5×)
  gpu=$(nvidia-smi --query-gpu=uuid --format=csv,noheader 2>/dev/null || echo none)
  resume=()
  if [ "${RESUME:-1}" = 1 ] && [ -f "$llama/cal/probes/journal.jsonl" ] && [ "$(cat "$llama/cal/gpu" 2>/dev/null)" = "$gpu" ]; then
    resume=(--resume)
  else
    rm -rf "$llama/cal" && mkdir -p "$llama/cal" && echo "$gpu" >"$llama/cal/gpu"
  fi
  cli calibrate http://127.0.0.1:$port --api completions --name "${NAME:-llamacpp-h100-random-0.8b}" --budget-s 200 --layers 16 \
    --out "$llama/profile.json" --work-dir "$llama/cal" "${resume[@]}" 2>&1 |
    # each line with the seconds since the start: session 55's calibration was cut at 560 s, past its --budget-s
    # (which bounds only the fresh probes), and its log could not say which states took the time
    while IFS= read -r line; do printf '%4ds %s\n' $(($(date +%s) - start)) "$line"; done | tee "$out/calibrate.log"
  echo "calibrated in $(($(date +%s) - start)) s of GPU time" | tee -a "$out/calibrate.log"
  cat /proc/net/netstat >"$out/calibrate-netstat-after.txt" 2>/dev/null || true
  cp "$llama/cal/probes/journal.jsonl" "$out/calibrate-journal.jsonl" || true
  cp "$llama/profile.json" "$out/profile.json"
  ;;
fresh | used)
  # PROFILE if given; else this machine's last calibration; else the committed one
  profile=${PROFILE:-}
  if [ -z "$profile" ] && [ -f "$llama/profile.json" ]; then profile=$llama/profile.json; fi
  profile=${profile:-$repo/bench/real-server/profiles/llamacpp-h100-random-0.8b.json}
  # the host's TCP counters around the loads: llama.cpp listens with a queue of 5, and a SYN it drops is sent again a
  # second later inside a request's TTFT (ListenOverflows, TCPSynRetrans; session 50); connect_wait says which rows
  cat /proc/net/netstat >"$out/$step-netstat-before.txt" 2>/dev/null || true
  node "$repo/bench/real-server/predict-check.ts" "$profile" "$step" $w/$step -- "${server[@]}" \
    2>&1 | tee "$out/$step.log"
  cat /proc/net/netstat >"$out/$step-netstat-after.txt" 2>/dev/null || true
  cp $w/$step/$step-table.md $w/$step/$step-rows.json "$out/" || true
  tar czf "$out/$step-runs.tgz" --exclude='*.html' -C "$w" "$step"
  ;;
explore)
  # what the server does with a step, in its own words (probe-llamacpp.py); --slot-save-path lets it empty slots
  mkdir -p $w/slots
  serve "$out/llama-server.log" "${server[@]}" --slot-save-path $w/slots
  python3 "$repo/bench/real-server/probe-llamacpp.py" http://127.0.0.1:$port 64 "$out/explore.jsonl"
  ;;
endpoint)
  # one stream's decode, request after request, in the state calibrate leaves and in the used check's (a server each;
  # endpoint-probe.py, session 37)
  serve "$out/llama-server.log" "${server[@]}"
  python3 "$repo/bench/real-server/endpoint-probe.py" http://127.0.0.1:$port calibrate "$out/endpoint.jsonl"
  kill $pid && wait $pid 2>/dev/null || true
  port=$((port + 2))
  serve "$out/llama-server-2.log" "${server[@]}"
  python3 "$repo/bench/real-server/endpoint-probe.py" http://127.0.0.1:$port used "$out/endpoint.jsonl"
  ;;
graphs)
  # one stream's step on a fresh server, after a churn that keeps defrag running (then every slot erased), and on a
  # fresh server without CUDA graphs (graphs-probe.py, session 51)
  mkdir -p $w/slots
  serve "$out/llama-server.log" "${server[@]}" --slot-save-path $w/slots
  python3 "$repo/bench/real-server/graphs-probe.py" http://127.0.0.1:$port default "$out/graphs.jsonl"
  kill $pid && wait $pid 2>/dev/null || true
  port=$((port + 2))
  GGML_CUDA_DISABLE_GRAPHS=1 serve "$out/llama-server-2.log" "${server[@]}"
  python3 "$repo/bench/real-server/graphs-probe.py" http://127.0.0.1:$port nographs "$out/graphs.jsonl"
  ;;
asfound)
  # session 53: calibrate's first probes on a fresh server, stopped after its as-found decode rows (ASFOUND_S seconds),
  # then in that state one stream's own timings (asfound-probe.py) and the CLI's users 1 and 4 as calibrate's decode
  # probes send them (128/128, bytes allowed); then a restarted server, the same loads first (the fresh check's state)
  serve "$out/llama-server.log" "${server[@]}"
  calibrateFirstState "${ASFOUND_S:-100}" asfound 2>&1 | tee "$out/asfound-calibrate.log" || true
  asfoundLoads() {
    for u in 1 4; do
      cli run http://127.0.0.1:$port --api completions --users $u --requests $((u * 6)) --input-len 128 \
        --output-len 128 --out-dir $w/asfound-$1-u$u 2>&1 | tail -1 | tee -a "$out/asfound.log"
      node -e "const m = require('$w/asfound-$1-u$u/summary.json').metrics
        console.log('$1 users $u: TPOT p50', m.tpot?.p50, 'TTFT p50', m.client_ttft?.p50)" | tee -a "$out/asfound.log"
    done
  }
  python3 "$repo/bench/real-server/asfound-probe.py" http://127.0.0.1:$port after-calibrate "$out/asfound.jsonl" |
    tee -a "$out/asfound.log"
  asfoundLoads after-calibrate
  kill $pid 2>/dev/null || true
  wait $pid 2>/dev/null || true
  port=$((port + 2))
  serve "$out/llama-server-2.log" "${server[@]}"
  asfoundLoads restarted
  python3 "$repo/bench/real-server/asfound-probe.py" http://127.0.0.1:$port restarted "$out/asfound.jsonl" |
    tee -a "$out/asfound.log"
  ;;
asfound-repeat)
  # calibrate's first state (its as-found prefill and decode rows) on REPEAT freshly started servers one after another,
  # each stopped after ASFOUND_S seconds: how far a fresh server's light steps read apart from one start to the next
  # on one machine (session 51's calibration read them 25-42 % slower than session 53's on another)
  for i in $(seq 1 "${REPEAT:-3}"); do
    # the card's clocks and limits at each start: a machine whose light steps read slow may be one held lower
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.limit,power.draw,temperature.gpu \
      --format=csv,noheader 2>&1 | sed "s/^/start $i gpu: /" >>"$out/asfound-repeat.log" || true
    serve "$out/llama-server-$i.log" "${server[@]}"
    calibrateFirstState "${ASFOUND_S:-70}" "asfound-$i" 2>&1 | sed "s/^/start $i: /" |
      tee -a "$out/asfound-repeat.log" || true
    kill $pid 2>/dev/null || true
    wait $pid 2>/dev/null || true
    port=$((port + 2))
  done
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$out/gpu-after.txt" 2>&1 || true
  ;;
churn)
  # the same pinned prefill and decode on a server filled in order and on one that served traffic (churn-probe.py)
  serve "$out/llama-server.log" "${server[@]}"
  python3 "$repo/bench/real-server/churn-probe.py" http://127.0.0.1:$port "$out/churn.jsonl"
  ;;
slotwait)
  # what choosing a slot costs: the wait before each prompt began, pinned and left to the server (slot-wait-probe.py)
  serve "$out/llama-server.log" "${server[@]}"
  python3 "$repo/bench/real-server/slot-wait-probe.py" http://127.0.0.1:$port "$out/slot-wait.jsonl"
  ;;
window)
  # does a step cost what is held or the window it attends over? the same pinned steps at the same cells held, on a
  # cache filled in order and on one whose freed cells lie below its window (window-probe.py), a server each
  serve "$out/llama-server-fragmented.log" "${server[@]}"
  python3 "$repo/bench/real-server/window-probe.py" http://127.0.0.1:$port fragmented "$out/window.jsonl"
  kill $pid && wait $pid 2>/dev/null || true
  # the second on port 8081: the first held 8080 for over 30 s after it was stopped
  "${server[@]}" --port 8081 >"$out/llama-server-compact.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 600); do curl -sf http://127.0.0.1:8081/health >/dev/null 2>&1 && break; sleep 0.1; done
  python3 "$repo/bench/real-server/window-probe.py" http://127.0.0.1:8081 compact "$out/window.jsonl"
  ;;
pathprobe)
  # does the way the server reached its state move its steps? calibrate's path to "every slot holds 1,024" and a fill
  # on a freshly started server, each then calibrate's decode probes beside the check's closed-loop loads
  # (path-probe.py, session 39), a server each
  for path in ${PATHS:-calibrate once}; do
    serve "$out/llama-server-$path.log" "${server[@]}"
    python3 "$repo/bench/real-server/path-probe.py" http://127.0.0.1:$port "$out/path.jsonl" "$path"
    kill $pid 2>/dev/null || true
    wait $pid 2>/dev/null || true
  done
  ;;
streamtpot)
  # one stream's decode as the client reads it and as the server times it, every slot holding 1,024 tokens
  serve "$out/llama-server.log" "${server[@]}"
  python3 "$repo/bench/real-server/stream-tpot-probe.py" http://127.0.0.1:$port "$out/stream-tpot.jsonl"
  ;;
loadsteps)
  # a decode step inside closed-loop and Poisson loads against calibrate's probe of it, one server, one state each
  serve "$out/llama-server.log" "${server[@]}"
  python3 "$repo/bench/real-server/load-steps-probe.py" http://127.0.0.1:$port "$out/load-steps.jsonl" ${FILLS:-256 1024}
  ;;
tail)
  # closed-loop users 16 and 32: is the TTFT tail the wait before a prompt or its processing? (tail-probe.py) A
  # fresh server, then another filled with 1,024 tokens a slot, each with its log (each launch and prompt timed: c392e5094
  # prints --log-timestamps only with --log-prefix; session 27's logs, with the first alone, have no times)
  serve "$out/llama-server-fresh.log" "${server[@]}" --log-prefix --log-timestamps
  python3 "$repo/bench/real-server/tail-probe.py" http://127.0.0.1:$port "$out/tail.jsonl" fresh
  # SIGTERM alone left port 8080 held for 30 s once (session 26): the used half never started
  kill $pid 2>/dev/null || true
  sleep 3
  kill -9 $pid 2>/dev/null || true
  wait $pid 2>/dev/null || true
  serve "$out/llama-server-used.log" "${server[@]}" --log-prefix --log-timestamps
  python3 "$repo/bench/real-server/tail-probe.py" http://127.0.0.1:$port "$out/tail.jsonl" used 1024
  ;;
drift)
  # does a step's time drift while the state stands still? pinned and unpinned 2-stream rounds for minutes
  serve "$out/llama-server.log" "${server[@]}"
  python3 "$repo/bench/real-server/drift-probe.py" http://127.0.0.1:$port "$out/drift.jsonl" ${ROUNDS:-40}
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >"$out/gpu-after.txt" 2>&1 || true
  ;;
pin)
  # four 256-token prompts pinned, left to the server, one-token and 128-token answers, and as a load's rounds, on a
  # cache filled in turn and (a server restarted, on port 8081) on one filled by 64 prompts at once (pin-probe.py)
  serve "$out/llama-server.log" "${server[@]}"
  python3 "$repo/bench/real-server/pin-probe.py" http://127.0.0.1:$port "$out/pin.jsonl" in-turn
  kill -9 $pid && wait $pid 2>/dev/null || true
  "${server[@]}" --port 8081 >"$out/llama-server-at-once.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 600); do curl -sf http://127.0.0.1:8081/health >/dev/null 2>&1 && break; sleep 0.1; done
  python3 "$repo/bench/real-server/pin-probe.py" http://127.0.0.1:8081 "$out/pin.jsonl" at-once
  ;;
batch)
  # four and eight prompts at once against one prompt of their tokens, at five occupancies (batch-probe.py)
  serve "$out/llama-server.log" "${server[@]}"
  python3 "$repo/bench/real-server/batch-probe.py" http://127.0.0.1:$port "$out/batch.jsonl" ${FILLS:-}
  ;;
mixed)
  # a prompt's cost among N decoding streams, in the server's own prompt_ms (mixed-probe.py)
  serve "$out/llama-server.log" "${server[@]}"
  python3 "$repo/bench/real-server/mixed-probe.py" http://127.0.0.1:$port "$out/mixed.jsonl"
  ;;
gpus)
  # issue 47: a run that samples the GPU it loads (--gpus auto reads nvidia-smi), its summary and report sent back
  serve "$out/llama-server.log" "${server[@]}"
  cli run http://127.0.0.1:$port --api completions --rate 4 --requests 80 --input-len 256 --output-len 128 \
    --gpus auto --out-dir $w/gpus 2>&1 | tee "$out/gpus.log"
  cp $w/gpus/*/summary.json $w/gpus/summary.json "$out/" 2>/dev/null || true
  (cd $w/gpus && tar czf "$out/gpus-run.tgz" .)
  ;;
hog | layout | layouts | gaps)
  # step-probe.py on the unpatched server: hog, does the host's other work slow its steps (0, 8 and 16 busy processes
  # beside it); layout, does the cells' order (runs or interleaved, the same cells held) slow a prompt
  lscpu >"$out/cpu.txt" 2>&1 || true
  mkdir -p $w/slots
  serve "$out/llama-server.log" "${server[@]}" --slot-save-path $w/slots
  python3 "$repo/bench/real-server/step-probe.py" http://127.0.0.1:$port "$out/$step.jsonl" "$step"
  ;;
steplog)
  # issue 43: what each step of the server was, in its own words: c392e5094 built for CUDA with step-log-patch.py
  # (its stripped binary back as llama-sl-bin.tar.xz.*; SLBIN=<folder of them> skips the build), then step-probe.py's
  # calibrate phases on one server and a users-4 load on another, each with LLAMA_STEP_LOG=1
  sl=$llama/sl
  mkdir -p "$sl/build/bin" $w/slots
  if [ -n "${SLBIN:-}" ] && [ ! -x "$sl/build/bin/llama-server" ]; then
    cat "$repo/$SLBIN"/llama-sl-bin.tar.xz.* | tar xJf - -C "$sl/build/bin"
  fi
  if [ ! -x "$sl/build/bin/llama-server" ]; then
    # a build an earlier call left half done goes on where it stopped (the source not extracted again)
    [ -f "$sl/src/CMakeLists.txt" ] || { mkdir -p "$sl/src" && tar xJf "$dev/llama-src.tar.xz" -C "$sl/src"; }
    python3 "$repo/bench/real-server/step-log-patch.py" "$sl/src"
    buildServer "$sl/src" "$sl/build" llama-sl "$out/build-sl.log"
  fi
  lscpu >"$out/cpu.txt" 2>&1 || true
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >"$out/gpu.txt" 2>&1 || true
  export LLAMA_STEP_LOG=${LLAMA_STEP_LOG:-1}
  slserver=("$sl/build/bin/llama-server" "${server[@]:1}" --slot-save-path $w/slots)
  for what in ${SLSTEPS:-calibrate load}; do
    serve "$out/steplog-$what.log" "${slserver[@]}"
    python3 "$repo/bench/real-server/step-probe.py" http://127.0.0.1:$port "$out/steplog-$what.jsonl" "$what"
    kill $pid && wait $pid 2>/dev/null || true
    xz -T16 "$out/steplog-$what.log"
  done
  # the results as one file (the device tool leaves out files past a count: session 30 lost a call's logs so)
  (cd "$out" && tar cf steplog.tar --remove-files steplog-*.jsonl steplog-*.log.xz cpu.txt gpu.txt 2>/dev/null) || true
  ;;
build-new)
  # issue 47: a llama.cpp whose responses carry its draft counts (timings.draft_n, draft_n_accepted), built for CUDA
  # from NEWSRC (a later llama.cpp's source, tools/server and what it needs, 7 MB; c392e5094 has no such counts). The
  # build runs in a session of its own, so a call that ends first does not kill it (the next step waits for it). Its
  # stripped binary comes back in 15 MB parts (llama-new-bin.tar.xz.*): NEWBIN=<folder of them> skips the build.
  new=$llama/new
  mkdir -p "$new/build/bin"
  if [ -n "${NEWBIN:-}" ]; then
    cat "$repo/$NEWBIN"/llama-new-bin.tar.xz.* | tar xJf - -C "$new/build/bin" && touch "$new/built"
  elif [ ! -f "$new/built" ] && [ ! -f "$new/building" ]; then
    rm -rf "$new/src" && mkdir -p "$new/src" && tar xJf "$repo/${NEWSRC:-.device-new/llama-new-src.tar.xz}" -C "$new/src"
    touch "$new/building"
    setsid bash -c "start=\$(date +%s); cd '$new/src' && cmake -B '$new/build' -DGGML_CUDA=ON \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_CUDA_NCCL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
      -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF \
      -DBUILD_SHARED_LIBS=OFF -DCMAKE_BUILD_TYPE=Release >'$new/build.log' 2>&1 &&
      cmake --build '$new/build' --target llama-server -j"$(nproc)" >>'$new/build.log' 2>&1 &&
      echo \"built in \$((\$(date +%s) - start)) s\" >>'$new/build.log' && touch '$new/built'; rm -f '$new/building'" \
      </dev/null >/dev/null 2>&1 &
  fi
  makeModel
  waitBuilt "${WAIT_S:-540}" || true
  cp "$new/build.log" "$out/build-new.log" 2>/dev/null || true
  if [ -f "$new/built" ] && [ -z "${NEWBIN:-}" ] && [ ! -f "$new/sent" ]; then
    strip "$new/build/bin/llama-server" || true
    tar cf - -C "$new/build/bin" llama-server | xz -6 -T16 | split -b 15M - "$out/llama-new-bin.tar.xz."
    touch "$new/sent"
  fi
  [ -f "$new/built" ] && "$new/build/bin/llama-server" --version 2>&1 | tail -2 | tee "$out/llama-new-version.txt"
  ;;
spec)
  waitBuilt 400 || { echo "the newer llama-server is not built: run build-new first" && exit 1; }
  # issue 47: speculative decoding on the GPU, the same random model as its own draft (a high acceptance); our run's
  # spec_acceptance per request beside the server's own per-request log line ("draft acceptance = …")
  # the later server fails an answer that is not valid UTF-8, which a random model's byte tokens make: the same
  # shape with its byte tokens typed as control tokens (--text-only); temperature 0 (our default), so the draft, the
  # same weights, is accepted wherever the target's choice is not a near tie
  [ -f "$llama/model-text.gguf" ] || PYTHONPATH=$llama/src/gguf-py python3 "$repo/bench/real-server/tiny-llama-gguf.py" \
    "$llama/model-text.gguf" --embd 2048 --layers 16 --ff 5632 --heads 16 --ctx 16384 --text-only
  serve "$out/llama-server-spec.log" "$llama/new/build/bin/llama-server" -m "$llama/model-text.gguf" \
    -md "$llama/model-text.gguf" -ngl 99 -ngld 99 --spec-type draft-simple --spec-draft-n-max 8 --spec-draft-n-min 1 \
    --parallel 4 -c 16384 --metrics
  rm -rf $w/spec
  cli run http://127.0.0.1:$port --api completions --rate 2 --requests 20 --input-len 128 --output-len 128 \
    --gpus auto --out-dir $w/spec 2>&1 | tee "$out/spec.log"
  kill $pid && wait $pid 2>/dev/null || true
  grep -a "draft acceptance" "$out/llama-server-spec.log" >"$out/spec-server-acceptance.txt" || true
  (cd $w/spec && tar czf "$out/spec-run.tgz" .)
  ;;
history)
  # issue 44's series, each run on a freshly started server as a CI job meets it: 10 as configured, then 3 with one
  # layer on the CPU (-ngl 15); a new seed each run. The gate judges the folders (history record/check) afterwards.
  rm -rf $w/hist && mkdir -p $w/hist
  for i in $(seq 1 13); do
    ngl=99
    [ "$i" -gt 10 ] && ngl=15
    "$llama/build/bin/llama-server" -m "$llama/model.gguf" -ngl $ngl --parallel 64 -c 262144 --metrics --port $port \
      >"$w/hist/server-$i.log" 2>&1 &
    pid=$!
    waitHealthy
    cli run http://127.0.0.1:$port --api completions --rate 3 --requests 45 --input-len 256 --output-len 128 \
      --seed "$i" --out-dir "$w/hist/run-$(printf %02d "$i")" 2>&1 | tail -3 | tee -a "$out/history.log"
    kill $pid && wait $pid 2>/dev/null || true
  done
  tar czf "$out/history-runs.tgz" --exclude='*.html' --exclude='*.log' -C "$w" hist
  ;;
esac
