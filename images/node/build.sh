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
#   --kube-bin DIR   kubelet, kubeadm and pause (+ pause.tag) of the cluster's version (default: what
#                    e2e/cluster/build-kubernetes.sh builds from Debian's source package)
#   --agent-jar JAR  default agent/target/warmmetal-agent.jar (mvn -B package -DskipTests)
#   --images DIR     more image archives (docker-archive *.tar) for the node to import: DaemonSets' images
#   --install DIR    copy the image into DIR/<version>/ (the API's WARMMETAL_BOOT_DIR) and, unless --no-default,
#                    point DIR/default at it (what servers the API knows nothing of boot)
# Prints the version, digest and sizes; the last line is the image's directory. Run as root (mmdebstrap, chroot).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${WARMMETAL_IMAGE_CACHE:-/var/cache/warmmetal/node-image}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1767225600} # 2026-01-01: a fixed time for every file
kube_bin= agent_jar=$repo/agent/target/warmmetal-agent.jar extra_images= install= make_default=1
while [ $# -gt 0 ]; do
  case "$1" in
    --kube-bin) kube_bin=$2; shift 2 ;;
    --agent-jar) agent_jar=$2; shift 2 ;;
    --images) extra_images=$2; shift 2 ;;
    --install) install=$2; shift 2 ;;
    --no-default) make_default=0; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
done
log() { echo "node-image: $*" >&2; }
[ "$(id -u)" = 0 ] || { log "run as root (mmdebstrap --mode=root, chroot)"; exit 2; }
[ -f "$agent_jar" ] || { log "no agent jar at $agent_jar: mvn -B package -DskipTests first"; exit 2; }
[ -n "$kube_bin" ] || kube_bin=$("$repo/e2e/cluster/build-kubernetes.sh" | tail -n 1)
for f in kubelet kubeadm pause pause.tag; do
  [ -e "$kube_bin/$f" ] || { log "no $f in $kube_bin"; exit 2; }
done

missing=()
for tool in mmdebstrap:mmdebstrap mksquashfs:squashfs-tools zstd:zstd; do
  command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
java_home=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}

# sha256 of files and directory trees (names, modes and contents), for cache keys.
tree_hash() {
  for p in "$@"; do
    if [ -d "$p" ]; then
      (cd "$p" && find . \( -type f -o -type l \) -print0 | LC_ALL=C sort -z \
        | xargs -0r sh -c 'for f; do stat -c "%n %a" "$f"; if [ -L "$f" ]; then readlink "$f"; else sha256sum < "$f"; fi; done' _)
    else
      stat -c '%a' "$p"; sha256sum < "$p"
    fi
  done | sha256sum | cut -c1-16
}
# dir out.squashfs: reproducible (fixed times, sorted, no append); zstd: xz is 12 % smaller but reads several times
# slower, which under emulation cost seconds of every boot.
squash() {
  mksquashfs "$1" "$2.tmp" -noappend -quiet -no-progress -comp zstd -Xcompression-level 19 -b 1M -processors "$(nproc)" \
    -reproducible >&2  # SOURCE_DATE_EPOCH: the file system's and every file's time
  mv "$2.tmp" "$2"
}
size() { stat -c %s "$1"; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

# ---------------------------------------------------------------------------------------------------------- OS layer
packages=$(grep -o '^[^#]*' "$here/os/packages" | awk 'NF {print $1}' | paste -sd, -)
# What apt would install from nothing (with versions): the OS layer is rebuilt when Debian updates any of it.
newest_list=$(ls -t /var/lib/apt/lists/*Release 2>/dev/null | head -n 1)
[ -n "$newest_list" ] && [ $(( $(date +%s) - $(stat -c %Y "$newest_list") )) -lt 86400 ] || apt-get update -qq
resolved=$(apt-get -s -qq -o Dir::State::Status=/dev/null -o APT::Install-Recommends=0 install ${packages//,/ } \
  | awk '/^Inst / {print $2, $3}' | tr -d '(' | LC_ALL=C sort)
[ -n "$resolved" ] || { log "apt resolved none of os/packages: is a Debian mirror configured?"; exit 1; }
os_key=$( { echo "$resolved"; tree_hash "$here/os" "$here/build.sh"; cat "$java_home/release"; echo "$SOURCE_DATE_EPOCH"; } \
  | sha256sum | cut -c1-16)
os_dir=$cache/os/$os_key

build_os() {
  local work=$cache/work/os-$os_key root
  root=$work/rootfs
  rm -rf "$work" && mkdir -p "$work"
  log "building the OS layer $os_key (first build with these packages: ~5 minutes)"
  # Debian's packages, without documentation; the kernel's own initramfs is not built (ours is, below).
  mmdebstrap --variant=essential --mode=root --quiet \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' --dpkgopt=force-confold --dpkgopt=force-confdef \
    --essential-hook='mkdir -p "$1/etc/initramfs-tools" && echo update_initramfs=no > "$1/etc/initramfs-tools/update-initramfs.conf"' \
    --include="$packages" bookworm "$root" >&2
  local kver
  kver=$(ls "$root/lib/modules")
  chroot "$root" dpkg-query -W -f '${Package} ${Version}\n' > "$work/packages.txt"

  # Only the modules a node needs, with their dependencies.
  local keep=$work/modules.keep
  for m in $(grep -ho '^[^#]*' "$here/os/modules" "$here/os/initrd-modules"); do
    chroot "$root" modprobe -S "$kver" --show-depends "$m" || { log "kernel $kver has no module $m"; exit 1; }
  done | awk '$1 == "insmod" {print $2}' | sort -u > "$keep"
  (cd "$root" && find "lib/modules/$kver/kernel" -name '*.ko*' | sed 's|^|/|' | sort) | comm -23 - "$keep" \
    | sed "s|^|$root|" | xargs rm -f
  find "$root/lib/modules/$kver/kernel" -type d -empty -delete
  chroot "$root" depmod "$kver"

  # The initramfs: our boot script, busybox for wget and sha256sum, the listed drivers (loaded by udev as needed).
  local irt=$root/etc/initramfs-tools
  cp "$here/os/initramfs/scripts/warmmetal" "$irt/scripts/warmmetal"
  install -m 0755 "$here/os/initramfs/hooks/warmmetal" "$irt/hooks/warmmetal"
  install -m 0755 "$here/os/initramfs/udhcpc.script" "$irt/warmmetal-udhcpc.script"
  grep -o '^[^#]*' "$here/os/initrd-modules" | tr ' ' '\n' | grep . > "$irt/warmmetal-modules"
  printf 'squashfs\nloop\noverlay\n' > "$irt/modules"
  sed -i -e 's/^MODULES=.*/MODULES=list/' -e 's/^BUSYBOX=.*/BUSYBOX=y/' -e 's/^COMPRESS=.*/COMPRESS=zstd/' \
    "$irt/initramfs.conf"
  chroot "$root" env SOURCE_DATE_EPOCH="$SOURCE_DATE_EPOCH" mkinitramfs -o /boot/warmmetal-initrd.img "$kver" >&2
  mkdir -p "$work/out"
  cp "$root/boot/vmlinuz-$kver" "$work/out/vmlinuz"
  cp "$root/boot/warmmetal-initrd.img" "$work/out/initrd.img"

  # What only built the initramfs goes; so do the CNI plugins no node configuration uses, and containerd's v1 shims.
  chroot "$root" dpkg --purge --force-depends initramfs-tools initramfs-tools-core klibc-utils libklibc busybox \
    >/dev/null
  (cd "$root/usr/lib/cni" && ls | grep -vx -e bridge -e host-local -e loopback -e portmap -e bandwidth -e firewall \
    | xargs -r rm -f)
  rm -f "$root/usr/bin/containerd-shim" "$root/usr/bin/containerd-shim-runc-v1"

  # WarmMetal's files, its units enabled; the Java runtime the agent runs on (jlink: the modules it uses, and those
  # its libraries load by reflection), with its class-data archive.
  cp -a "$here/os/files/." "$root/"
  "$java_home/bin/jlink" --add-modules \
    java.base,java.logging,jdk.unsupported,java.xml,java.naming,java.management,jdk.crypto.ec,java.sql \
    --strip-debug --no-header-files --no-man-pages --output "$root/usr/lib/warmmetal/jre"
  # (the launcher finds its libraries by $ORIGIN, which glibc reads from /proc)
  mount -t proc proc "$root/proc"
  chroot "$root" /usr/lib/warmmetal/jre/bin/java -Xshare:dump >/dev/null || { umount "$root/proc"; exit 1; }
  umount "$root/proc"
  chroot "$root" systemctl enable systemd-networkd.service systemd-resolved.service containerd.service \
    warmmetal-agent.service >/dev/null 2>&1
  chroot "$root" systemctl mask getty@tty1.service e2scrub_reap.service e2scrub_all.timer fstrim.timer \
    systemd-networkd-wait-online.service systemd-binfmt.service proc-sys-fs-binfmt_misc.automount >/dev/null 2>&1
  # resolved's stub for programs, the lease's servers for the kubelet (kubeadm picks that file when resolved runs).
  ln -sf ../run/systemd/resolve/stub-resolv.conf "$root/etc/resolv.conf"

  # Nothing that differs between two builds of the same packages, nothing left of the build.
  : > "$root/etc/machine-id"
  rm -rf "$root/boot"/* "$root/var/cache"/* "$root/var/log"/* "$root/var/lib/apt/lists"/* "$root/tmp"/* \
    "$root/var/lib/dpkg"/*-old "$root/etc/initramfs-tools" "$root/var/lib/systemd/catalog/database" \
    "$root/etc/ssl/certs/java"
  rm -f "$root/var/cache/ldconfig/aux-cache" "$root/etc/.pwd.lock" "$root/var/lib/dbus/machine-id"
  cp "$work/packages.txt" "$root/usr/lib/warmmetal/packages.txt"
  squash "$root" "$work/out/os.squashfs"
  echo "$kver" > "$work/out/kernel-version"
  mv "$work/packages.txt" "$work/out/"
  rm -rf "$os_dir" && mkdir -p "$(dirname "$os_dir")"
  mv "$work/out" "$os_dir"
  rm -rf "$work"
}
[ -f "$os_dir/os.squashfs" ] || build_os

# -------------------------------------------------------------------------------------------------- Kubernetes layer
kube_version=$("$kube_bin/kubeadm" version -o short)
"$kube_bin/kubelet" --version | grep -qw "$kube_version" \
  || { log "kubelet and kubeadm in $kube_bin are not the same version"; exit 2; }
pause_ref="k8s.gcr.io/pause:$(cat "$kube_bin/pause.tag")"
kube_key=$( { tree_hash "$here/kubernetes" "$here/lib" "$here/build.sh" "$kube_bin/kubelet" "$kube_bin/kubeadm" \
  "$kube_bin/pause"; echo "$pause_ref"; [ -z "$extra_images" ] || tree_hash "$extra_images"; } | sha256sum | cut -c1-16)
kube_dir=$cache/kubernetes/$kube_key
build_kubernetes() {
  local work=$cache/work/kubernetes-$kube_key root
  root=$work/root
  rm -rf "$work" && mkdir -p "$root/usr/bin" "$root/usr/share/warmmetal/images" \
    "$root/usr/lib/warmmetal" "$work/pause/usr/bin"
  log "building the Kubernetes $kube_version layer $kube_key"
  cp -a "$here/kubernetes/files/." "$root/"
  install -m 0755 "$kube_bin/kubelet" "$kube_bin/kubeadm" "$root/usr/bin/"
  install -m 0755 "$kube_bin/pause" "$work/pause/pause"
  sh "$here/lib/image-archive.sh" "$pause_ref" "$work/pause" '["/pause"]' "$root/usr/share/warmmetal/images/pause.tar"
  [ -z "$extra_images" ] || cp "$extra_images"/*.tar "$root/usr/share/warmmetal/images/"
  sed "s|@PAUSE_IMAGE@|$pause_ref|" "$root/etc/containerd/config.toml.in" > "$root/etc/containerd/config.toml"
  rm "$root/etc/containerd/config.toml.in"
  printf 'WARMMETAL_KUBE_VERSION=%s\n' "$kube_version" > "$root/usr/lib/warmmetal/kubernetes.env"
  mkdir -p "$work/out"
  squash "$root" "$work/out/kubernetes.squashfs"
  rm -rf "$kube_dir" && mkdir -p "$(dirname "$kube_dir")"
  mv "$work/out" "$kube_dir"
  rm -rf "$work"
}
[ -f "$kube_dir/kubernetes.squashfs" ] || build_kubernetes

# ------------------------------------------------------------------------------------------------------- agent layer
agent_key=$(tree_hash "$agent_jar" "$here/build.sh")
agent_dir=$cache/agent/$agent_key
if [ ! -f "$agent_dir/agent.squashfs" ]; then
  work=$cache/work/agent-$agent_key
  rm -rf "$work" && mkdir -p "$work/root/usr/lib/warmmetal" "$work/out"
  install -m 0644 "$agent_jar" "$work/root/usr/lib/warmmetal/warmmetal-agent.jar"
  squash "$work/root" "$work/out/agent.squashfs"
  rm -rf "$agent_dir" && mkdir -p "$(dirname "$agent_dir")"
  mv "$work/out" "$agent_dir"
  rm -rf "$work"
fi

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
