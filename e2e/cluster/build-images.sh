#!/usr/bin/env bash
# Builds the container images a test node needs, as docker-archive tars that `ctr images import` loads — no registry
# is reachable here. Both are one layer holding Debian's static busybox:
#   warmmetal.test/pause:1   the pod sandbox (kubelet's pod-infra image): waits for a signal, exits on TERM
#   warmmetal.test/busybox:1 what test pods run
# Usage: build-images.sh OUTDIR   (writes OUTDIR/pause.tar and OUTDIR/busybox.tar; needs busybox-static)
set -euo pipefail
out=${1:?usage: build-images.sh OUTDIR}
archive="$(cd "$(dirname "$0")/../.." && pwd)/images/node/lib/image-archive.sh"
busybox=$(command -v busybox) || { echo "build-images: no busybox (install busybox-static)" >&2; exit 1; }
if ldd "$busybox" >/dev/null 2>&1; then echo "build-images: $busybox is not static (install busybox-static)" >&2; exit 1; fi
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The layer: /bin/busybox and the applets as links, the directories a container runtime expects.
mkdir -p "$work/rootfs/bin" "$work/rootfs/tmp" "$work/rootfs/etc" "$work/rootfs/proc" "$work/rootfs/sys" "$work/rootfs/dev"
cp "$busybox" "$work/rootfs/bin/busybox"
for applet in sh sleep cat echo ls wget nc hostname true false env ps kill; do ln -s busybox "$work/rootfs/bin/$applet"; done
echo 'root:x:0:0:root:/:/bin/sh' > "$work/rootfs/etc/passwd"
echo 'root:x:0:' > "$work/rootfs/etc/group"

sh "$archive" warmmetal.test/pause:1 "$work/rootfs" \
  '["/bin/sh","-c","trap \"exit 0\" TERM INT; sleep 2147483647 & wait"]' "$out/pause.tar"
sh "$archive" warmmetal.test/busybox:1 "$work/rootfs" '["/bin/sh"]' "$out/busybox.tar"
echo "$out"
