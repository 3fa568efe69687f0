#!/usr/bin/env bash
# Issue 35's router figure on the 16-core GPU host, in one call of the device tool:
#   run(command: 'bash bench/device/router-cores.sh', carry: ['.device/node.xz', '.device/node_modules-dev.tar.xz'])
# (.device/ as bench/device/unit-under-hog.sh says). Writes its lines to $OUT/router-cores.txt.
set -euo pipefail
. bench/device/node-env.sh
node bench/router-cores.bench.ts 2>&1 | tee "$out/router-cores.txt"
# more than the workers' 288 streams at speed 9 can carry: the router, not the simulated GPUs, sets the rate
ROUTER_CORES_STREAMS=512 ROUTER_CORES_SPEED=16 node bench/router-cores.bench.ts 2>&1 | tee -a "$out/router-cores.txt"
