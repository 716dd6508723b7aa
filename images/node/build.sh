#!/usr/bin/env bash
# Builds the WarmMetal node image: the live OS a server network-boots into from the API and runs in RAM — Debian's
# kernel, an initramfs that fetches the root over HTTP, and the root as three read-only squashfs layers under a tmpfs:
#   os.squashfs          Debian 12 from its packages (images/node/os/packages): systemd, containerd and runc, the CNI
#                        plugins, iptables and the rest a node needs, only the kernel modules a node needs
#                        (os/modules), a jlinked Java runtime for the agent, WarmMetal's units and settings (os/files)
#   kubernetes.squashfs  kubelet and kubeadm of one Kubernetes version, their systemd units, the pause image
#                        (and any other image archives given) imported by the agent's prepare
#   agent.squashfs       the agent jar
# and image.json: the version (Kubernetes version + a digest of everything), the files with their sizes and sha256,
# the kernel parameters the image needs. The API serves an image directory as it is (WARMMETAL_BOOT_DIR/<version>/).
#
# Each layer is cached outside the work tree by the hash of its inputs (WARMMETAL_IMAGE_CACHE, default
# /var/cache/warmmetal/node-image): the OS layer's include the Debian package versions apt resolves, so a Debian
# update rebuilds it; only the first build on a machine pays the OS (~5 min, mostly downloads). The build is
# reproducible: timestamps are fixed (SOURCE_DATE_EPOCH) and the same inputs give the same digest, printed at the end.
#
# Usage: images/node/build.sh [--kube-bin DIR] [--agent-jar JAR] [--images DIR] [--install BOOT_DIR] [--no-default]
#                              [--os-only]
#   --kube-bin DIR   kubelet, kubeadm and pause (+ pause.tag) of the cluster's version (default: what
#                    e2e/cluster/build-kubernetes.sh builds from Debian's source package)
#   --agent-jar JAR  default agent/target/warmmetal-agent.jar (mvn -B package -DskipTests)
#   --images DIR     more image archives (docker-archive *.tar) for the node to import: DaemonSets' images
#   --install DIR    copy the image into DIR/<version>/ (the API's WARMMETAL_BOOT_DIR) and, unless --no-default,
#                    point DIR/default at it (what servers the API knows nothing of boot)
#   --os-only        build (or find) only the OS layer, the slow one, and print its directory: CI starts it early
# Prints the version, digest and sizes; the last line is the image's directory. Run as root (mmdebstrap, chroot).
set -euo pipefail
AGENT_LAYOUT=1 # what the agent layer holds where: bump it when the layer's contents change shape
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${WARMMETAL_IMAGE_CACHE:-/var/cache/warmmetal/node-image}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1767225600} # 2026-01-01: a fixed time for every file
kube_bin= agent_jar=$repo/agent/target/warmmetal-agent.jar extra_images= install= make_default=1 os_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --kube-bin) kube_bin=$2; shift 2 ;;
    --agent-jar) agent_jar=$2; shift 2 ;;
    --images) extra_images=$2; shift 2 ;;
    --install) install=$2; shift 2 ;;
    --no-default) make_default=0; shift ;;
    --os-only) os_only=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
done
. "$here/lib/common.sh"
[ "$(id -u)" = 0 ] || { log "run as root (mmdebstrap --mode=root, chroot)"; exit 2; }
if [ "$os_only" = 0 ]; then
  [ -f "$agent_jar" ] || { log "no agent jar at $agent_jar: mvn -B package -DskipTests first"; exit 2; }
  [ -n "$kube_bin" ] || kube_bin=$("$repo/e2e/cluster/build-kubernetes.sh" | tail -n 1)
  for f in kubelet kubeadm pause pause.tag; do
    [ -e "$kube_bin/$f" ] || { log "no $f in $kube_bin"; exit 2; }
  done
fi

missing=()
for tool in mmdebstrap:mmdebstrap mksquashfs:squashfs-tools zstd:zstd; do
  command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  apt_get update -qq && DEBIAN_FRONTEND=noninteractive apt_get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
export JAVA_HOME=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}
java_home=$JAVA_HOME

# ---------------------------------------------------------------------------------------------------------- OS layer
packages=$(grep -o '^[^#]*' "$here/os/packages" | awk 'NF {print $1}' | paste -sd, -)
# What apt would install from nothing (with versions): the OS layer is rebuilt when Debian updates any of it.
newest_list=$(ls -t /var/lib/apt/lists/*Release 2>/dev/null | head -n 1)
[ -n "$newest_list" ] && [ $(( $(date +%s) - $(stat -c %Y "$newest_list") )) -lt 86400 ] || apt_get update -qq
resolved=$(apt_get -s -qq -o Dir::State::Status=/dev/null -o APT::Install-Recommends=0 install ${packages//,/ } \
  | awk '/^Inst / {print $2, $3}' | tr -d '(' | LC_ALL=C sort)
[ -n "$resolved" ] || { log "apt resolved none of os/packages: is a Debian mirror configured?"; exit 1; }
os_key=$( { echo "$resolved"; tree_hash "$here/os" "$here/lib"; cat "$java_home/release"; echo "$SOURCE_DATE_EPOCH"; } \
  | sha256sum | cut -c1-16)
os_dir=$cache/os/$os_key

# Builds a layer with SCRIPT ARGS… into the cache at DIR (in a work directory of the cache, moved into place whole).
build_layer() { # what dir script args…
  local what=$1 dir=$2 script=$3 work
  shift 3
  work=$cache/work/$(basename "$(dirname "$dir")")-$(basename "$dir")
  rm -rf "$work" && mkdir -p "$work"
  log "building the $what layer $(basename "$dir")"
  "$script" "$@" "$work" "$work/out"
  rm -rf "$dir" && mkdir -p "$(dirname "$dir")"
  mv "$work/out" "$dir"
  rm -rf "$work"
}
[ -f "$os_dir/os.squashfs" ] || build_layer "OS (first build with these packages: ~5 minutes)" "$os_dir" \
  "$here/os/build-layer.sh"
if [ "$os_only" = 1 ]; then
  echo "$os_dir"
  exit 0
fi

# -------------------------------------------------------------------------------------------------- Kubernetes layer
kube_version=$("$kube_bin/kubeadm" version -o short)
"$kube_bin/kubelet" --version | grep -qw "$kube_version" \
  || { log "kubelet and kubeadm in $kube_bin are not the same version"; exit 2; }
pause_ref="k8s.gcr.io/pause:$(cat "$kube_bin/pause.tag")"
kube_key=$( { tree_hash "$here/kubernetes" "$here/lib" "$kube_bin/kubelet" "$kube_bin/kubeadm" \
  "$kube_bin/pause"; cat "$kube_bin/kubelet.env" 2>/dev/null; echo "$pause_ref"; [ -z "$extra_images" ] || tree_hash "$extra_images"; } | sha256sum | cut -c1-16)
kube_dir=$cache/kubernetes/$kube_key
[ -f "$kube_dir/kubernetes.squashfs" ] || build_layer "Kubernetes $kube_version" "$kube_dir" \
  "$here/kubernetes/build-layer.sh" "$kube_bin" "$extra_images"

# ------------------------------------------------------------------------------------------------------- agent layer
agent_key=$( { tree_hash "$agent_jar" "$here/lib"; echo "$AGENT_LAYOUT"; } | sha256sum | cut -c1-16)
agent_dir=$cache/agent/$agent_key
agent_layer() { # jar work out
  mkdir -p "$2/root/usr/lib/warmmetal" "$3"
  install -m 0644 "$1" "$2/root/usr/lib/warmmetal/warmmetal-agent.jar"
  squash "$2/root" "$3/agent.squashfs"
}
[ -f "$agent_dir/agent.squashfs" ] || build_layer agent "$agent_dir" agent_layer "$agent_jar"

# ---------------------------------------------------------------------------------------------------------- assembly
# The kernel parameters the image needs: kubelets before 1.25 do not support cgroup v2 fully, so they get v1.
minor=$(echo "$kube_version" | sed -n 's/^v1\.\([0-9]*\).*/\1/p')
cmdline="quiet"
[ "${minor:-99}" -ge 25 ] || cmdline="$cmdline systemd.unified_cgroup_hierarchy=0"
entry() { printf '{"name": "%s", "size": %s, "sha256": "%s"}' "$(basename "$1")" "$(size "$1")" "$(sha "$1")"; }
layers_json=$(printf '%s, %s, %s' "$(entry "$agent_dir/agent.squashfs")" "$(entry "$kube_dir/kubernetes.squashfs")" \
  "$(entry "$os_dir/os.squashfs")")
body=$(printf '"kubernetesVersion": "%s", "kernelVersion": "%s", "os": "Debian 12 (bookworm)",\n  "cmdline": "%s",\n  "kernel": %s,\n  "initrd": %s,\n  "layers": [%s]' \
  "$kube_version" "$(cat "$os_dir/kernel-version")" "$cmdline" "$(entry "$os_dir/vmlinuz")" \
  "$(entry "$os_dir/initrd.img")" "$layers_json")
digest=$(printf '%s' "$body" | sha256sum | cut -d' ' -f1)
version="$kube_version-${digest:0:12}"
image_dir=$cache/images/$version
if [ ! -f "$image_dir/image.json" ]; then
  rm -rf "$image_dir.tmp" && mkdir -p "$image_dir.tmp"
  for f in "$os_dir/vmlinuz" "$os_dir/initrd.img" "$os_dir/os.squashfs" "$kube_dir/kubernetes.squashfs" \
    "$agent_dir/agent.squashfs"; do
    ln "$f" "$image_dir.tmp/" 2>/dev/null || cp "$f" "$image_dir.tmp/"
  done
  printf '{\n  "version": "%s", "digest": "sha256:%s",\n  %s\n}\n' "$version" "$digest" "$body" \
    > "$image_dir.tmp/image.json"
  cp "$os_dir/packages.txt" "$image_dir.tmp/packages.txt"
  rm -rf "$image_dir" && mv "$image_dir.tmp" "$image_dir"
fi

mib() { awk -v b="$1" 'BEGIN {printf "%.1f MiB", b / 1048576}'; }
total=0
for f in vmlinuz initrd.img agent.squashfs kubernetes.squashfs os.squashfs; do
  total=$((total + $(size "$image_dir/$f")))
done
log "image $version (Kubernetes $kube_version, kernel $(cat "$os_dir/kernel-version"))"
log "digest sha256:$digest"
log "kernel $(mib "$(size "$image_dir/vmlinuz")"), initrd $(mib "$(size "$image_dir/initrd.img")"), layers: os $(mib \
"$(size "$image_dir/os.squashfs")"), kubernetes $(mib "$(size "$image_dir/kubernetes.squashfs")"), agent $(mib \
"$(size "$image_dir/agent.squashfs")"); transferred at boot: $(mib "$total")"

if [ -n "$install" ]; then
  mkdir -p "$install"
  rm -rf "$install/$version.tmp" && mkdir -p "$install/$version.tmp"
  for f in "$image_dir"/*; do
    ln "$f" "$install/$version.tmp/" 2>/dev/null || cp "$f" "$install/$version.tmp/"
  done
  rm -rf "${install:?}/$version" && mv "$install/$version.tmp" "$install/$version"
  [ "$make_default" = 0 ] || ln -sfn "$version" "$install/default"
  log "installed in $install/$version$([ "$make_default" = 0 ] || echo " (the default image)")"
  image_dir=$install/$version
fi
echo "$image_dir"
