#!/usr/bin/env bash
# The unit suite under a CPU hog, five times at once, each copy on two cores of its own with a busy loop on the same
# two (CI's 2-core machine with a noisy neighbour), in one call of the device tool:
#   run(command: 'bash bench/device/unit-under-hog.sh unit-timing', carry: ['.device'])
# .device/ holds node.xz (node@24's binary) and node_modules-dev.tar.xz (this tree's node_modules without the
# linters and type checker). The GPU machine has neither Chromium nor PostgreSQL: those tests skip there.
set -euo pipefail
project=${1:?usage: unit-under-hog.sh unit|unit-timing|unit-alone [copies] [hog|nohog]}
copies=${2:-5}
hog=${3:-hog}
. bench/device/node-env.sh
pids=()
for i in $(seq 0 $((copies - 1))); do
  cores="$((2 * i)),$((2 * i + 1))"
  copy=/tmp/copy$i
  rm -rf "$copy" && mkdir -p "$copy/tmp"
  tar cf - --exclude=.device --exclude=.git . | tar xf - -C "$copy"
  (
    cd "$copy"
    busy=
    if [ "$hog" = hog ]; then
      taskset -c "$cores" node -e 'for (;;) {}' &
      busy=$!
    fi
    start=$(date +%s)
    rc=0
    # the tarball test installs the packed package from the registry, which the GPU host cannot reach (a project's
    # own exclude list wins over --exclude, so the copy goes without it)
    rm -f test/tarball.test.ts
    TMPDIR="$copy/tmp" taskset -c "$cores" node_modules/.bin/vitest run --project "$project" >"$out/$project-$i.log" 2>&1 || rc=$?
    [ -z "$busy" ] || kill "$busy"
    echo "copy $i cores $cores: exit $rc in $(($(date +%s) - start)) s" >>"$out/summary.txt"
  ) &
  pids+=($!)
done
wait "${pids[@]}"
sort "$out/summary.txt"
for f in "$out"/$project-*.log; do
  echo "== $f"
  sed 's/\x1b\[[0-9;]*m//g' "$f" | grep -E '^ +(×|FAIL)|Test Files|Tests ' || true
done
