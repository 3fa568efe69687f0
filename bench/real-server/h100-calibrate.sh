#!/usr/bin/env bash
# Calibrates the simulator against a CUDA llama.cpp server on the GPU machine, in one call of the device tool:
#   run(command: 'bash bench/real-server/h100-calibrate.sh', carry: ['.device'])
# .device/ holds what the machine lacks (it reaches nothing outside): node.xz (the node binary of node@24),
# node_modules.tar.xz (`npm ci --omit=dev --omit=peer`) and llama-src.tar.xz (llama.cpp's source, no .git, with an
# empty pocs/CMakeLists.txt). The model is a llama of random weights written by llama.cpp's gguf-py
# (tiny-llama-gguf.py): 16 layers × 2048, ~0.8 B parameters in F16, so the GPU does a real model's work.
set -euo pipefail
repo=$(pwd)
out=${OUT:-/tmp/out}
mkdir -p "$out" /tmp/w
cd /tmp/w
xz -dc "$repo/.device/node.xz" >node && chmod +x node
export PATH=/tmp/w:$PATH
tar xJf "$repo/.device/node_modules.tar.xz" -C "$repo"
mkdir -p llama && tar xJf "$repo/.device/llama-src.tar.xz" -C llama
start=$(date +%s)
(cd llama && cmake -B build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_CURL=OFF -DCMAKE_BUILD_TYPE=Release \
  >"$out/build.log" 2>&1 && cmake --build build --target llama-server -j16 >>"$out/build.log" 2>&1)
echo "llama-server built in $(($(date +%s) - start)) s" | tee -a "$out/calibrate.log"
PYTHONPATH=/tmp/w/llama/gguf-py python3 "$repo/bench/real-server/tiny-llama-gguf.py" /tmp/w/model.gguf \
  --embd 2048 --layers 16 --ff 5632 --heads 16 --ctx 16384 | tee -a "$out/calibrate.log"
./llama/build/bin/llama-server -m /tmp/w/model.gguf --port 8080 -ngl 99 -c 16384 -np 8 >"$out/llama-server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  curl -sf http://127.0.0.1:8080/health >/dev/null 2>&1 && break
  sleep 1
done
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$out/gpu.txt" 2>&1 || true
cd "$repo"
node bin/vitest-llm-perf.js calibrate http://127.0.0.1:8080 --api completions --name llamacpp-h100-random-0.8b \
  --out "$out/llamacpp-h100.json" --validate --point-s 15 --work-dir /tmp/w/cal 2>&1 | tee -a "$out/calibrate.log"
