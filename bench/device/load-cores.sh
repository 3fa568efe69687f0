#!/usr/bin/env bash
# Issue 35's load-engine figure on the 16-core GPU host, in one call of the device tool:
#   run(command: 'bash bench/device/load-cores.sh', carry: ['.device/node.xz', '.device/node_modules-dev.tar.xz'])
# (.device/ as bench/device/unit-under-hog.sh says). Writes its lines to $OUT/load-cores.txt.
set -euo pipefail
. bench/device/node-env.sh
for rate in ${LOAD_CORES_RATES:-500 1000}; do
  LOAD_CORES_RATE=$rate node bench/load-cores.bench.ts 2>&1 | grep -v '^vitest-llm-perf:' | tee -a "$out/load-cores.txt"
done
