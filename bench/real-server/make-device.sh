#!/usr/bin/env bash
# Makes the folders h100-predict.sh reads on the GPU machine, which reaches nothing outside (sessions 35-45 made
# them by hand, ~15 minutes a fresh machine):
#   .device/     llama-src.tar.xz (llama.cpp c392e5094 without models/, docs/, media/, with an empty
#                pocs/CMakeLists.txt), node.xz (this machine's node@24, stripped) and node_modules.tar.xz
#                (`npm ci --omit=dev --omit=peer`, without types, maps and docs; zod's locales kept: its v4 index
#                imports them, and the CLI failed to start without them in session 45)
#   .device-all/ the same node and node_modules, gguf-py alone as llama-src.tar.xz, and a CUDA build an earlier call
#                sent back (BIN=folder of its llama-bin.tar.xz.* parts), recompressed xz -9e: with the tracked tree
#                this fits the device tool's 64 MiB (session 45: 59.3 MiB)
# Needs the llama.cpp snapshot (the search tool's `fetch github:ggerganov/llama.cpp`) at LLAMA_GIT (its git dir).
#   bash bench/real-server/make-device.sh            # .device
#   BIN=/work/.device/1 bash bench/real-server/make-device.sh all   # .device-all too
set -euo pipefail
cd "$(dirname "$0")/../.."
git_dir=${LLAMA_GIT:-/work/.mirror/ggerganov+llama.cpp/repo}
commit=${LLAMA_COMMIT:-c392e5094}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p .device

if [ ! -f .device/llama-src.tar.xz ]; then
  mkdir -p "$tmp/src"
  # the snapshot lacks its largest files (models/'s vocabularies): leave those folders out of the archive itself
  git --git-dir "$git_dir" archive "$commit" -- . ':!models' ':!docs' ':!media' | tar xf - -C "$tmp/src"
  mkdir -p "$tmp/src/pocs" && : >"$tmp/src/pocs/CMakeLists.txt"
  tar cf - -C "$tmp/src" . | xz -9 -T0 >.device/llama-src.tar.xz
fi

if [ ! -f .device/node.xz ]; then
  node_bin=$(command -v node)
  if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 22 ]; then
    echo "node on PATH is older than 22: $node_bin"
    exit 1
  fi
  cp "$(readlink -f "$node_bin")" "$tmp/node" && strip "$tmp/node"
  xz --x86 --lzma2=preset=9e,dict=128MiB -T0 -c "$tmp/node" >.device/node.xz
fi

if [ ! -f .device/node_modules.tar.xz ]; then
  mkdir -p "$tmp/nm"
  cp package.json package-lock.json "$tmp/nm/"
  (cd "$tmp/nm" && npm ci --omit=dev --omit=peer --no-audit --no-fund --loglevel=error --ignore-scripts)
  find "$tmp/nm/node_modules" \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' -o -name '*.md' \
    -o -name 'LICENSE*' \) -type f -delete
  find "$tmp/nm/node_modules" -type d \( -name docs -o -name test -o -name benchmark -o -name examples \) -prune \
    -exec rm -rf {} +
  rm -rf "$tmp/nm/node_modules/zod/src"
  tar cf - -C "$tmp/nm" node_modules | xz -9e -T0 >.device/node_modules.tar.xz
fi

# xz's x86 filter (BCJ) on the two executables: node 26.8 → 25.9 MB, the build 34.1 → 33.9 MB. Session 49's tracked
# tree (5.9 MiB on disk) and .device-all (59.3) passed the device tool's 64 MiB; with the filter they fit again
if [ "${1:-}" = all ]; then
  : "${BIN:?BIN=folder holding the llama-bin.tar.xz.* parts}"
  mkdir -p .device-all
  cp .device/node.xz .device/node_modules.tar.xz .device-all/
  mkdir -p "$tmp/gguf"
  tar xJf .device/llama-src.tar.xz -C "$tmp/gguf" ./gguf-py
  tar cf - -C "$tmp/gguf" . | xz -9 -T0 >.device-all/llama-src.tar.xz
  rm -f .device-all/llama-bin.tar.xz.*
  cat "$BIN"/llama-bin.tar.xz.* | xz -dc | xz --x86 --lzma2=preset=9e,dict=128MiB -T0 |
    split -b 15M - .device-all/llama-bin.tar.xz.
fi
du -sh .device .device-all 2>/dev/null
