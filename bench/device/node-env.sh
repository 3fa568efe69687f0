# Sourced by the device scripts: node@24 and this tree's node_modules from .device/ (node.xz, node_modules-dev.tar.xz;
# unit-under-hog.sh's header says how they are made), and $out, where the script's files go ($OUT on the device).
repo=$(pwd)
out=${OUT:-/tmp/out}
mkdir -p "$out" /tmp/w
xz -dc "$repo/.device/node.xz" >/tmp/w/node && chmod +x /tmp/w/node
export PATH=/tmp/w:$PATH
tar xJf "$repo/.device/node_modules-dev.tar.xz" -C "$repo"
nproc >"$out/nproc.txt"
