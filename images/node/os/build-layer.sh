#!/usr/bin/env bash
# Builds the node image's OS layer (called by images/node/build.sh, which caches it by its inputs): Debian's packages
# (packages) by mmdebstrap, only the kernel modules a node needs (modules, initrd-modules), WarmMetal's files
# (files/) and units, a jlinked Java runtime for the agent; the kernel and an initramfs with WarmMetal's boot script
# (initramfs/). Writes OUT/{vmlinuz,initrd.img,os.squashfs,packages.txt,kernel-version}.
# Usage: os/build-layer.sh WORK OUT   (WORK: an empty directory for the root; root; SOURCE_DATE_EPOCH and JAVA_HOME set)
set -euo pipefail
layer=$(cd "$(dirname "$0")" && pwd)
. "$layer/../lib/common.sh"
work=$1 out=$2
root=$work/rootfs
packages=$(grep -o '^[^#]*' "$layer/packages" | awk 'NF {print $1}' | paste -sd, -)
java_home=${JAVA_HOME:?}
mkdir -p "$out"

# Debian's packages, without documentation; the kernel's own initramfs is not built (ours is, below).
mmdebstrap --variant=essential --mode=root --quiet \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-exclude=/usr/share/info/*' --dpkgopt=force-confold --dpkgopt=force-confdef \
  --essential-hook='mkdir -p "$1/etc/initramfs-tools" && echo update_initramfs=no > "$1/etc/initramfs-tools/update-initramfs.conf"' \
  --include="$packages" bookworm "$root" >&2
kver=$(ls "$root/lib/modules")
chroot "$root" dpkg-query -W -f '${Package} ${Version}\n' > "$work/packages.txt"

# Only the modules a node needs, with their dependencies.
keep=$work/modules.keep
for m in $(grep -ho '^[^#]*' "$layer/modules" "$layer/initrd-modules"); do
  chroot "$root" modprobe -S "$kver" --show-depends "$m" || { log "kernel $kver has no module $m"; exit 1; }
done | awk '$1 == "insmod" {print $2}' | sort -u > "$keep"
(cd "$root" && find "lib/modules/$kver/kernel" -name '*.ko*' | sed 's|^|/|' | sort) | comm -23 - "$keep" \
  | sed "s|^|$root|" | xargs rm -f
find "$root/lib/modules/$kver/kernel" -type d -empty -delete
chroot "$root" depmod "$kver"

# The initramfs: our boot script, busybox for wget and sha256sum, the listed drivers (loaded by udev as needed).
irt=$root/etc/initramfs-tools
cp "$layer/initramfs/scripts/warmmetal" "$irt/scripts/warmmetal"
install -m 0755 "$layer/initramfs/hooks/warmmetal" "$irt/hooks/warmmetal"
install -m 0755 "$layer/initramfs/udhcpc.script" "$irt/warmmetal-udhcpc.script"
grep -o '^[^#]*' "$layer/initrd-modules" | tr ' ' '\n' | grep . > "$irt/warmmetal-modules"
printf 'squashfs\nloop\noverlay\n' > "$irt/modules"
sed -i -e 's/^MODULES=.*/MODULES=list/' -e 's/^BUSYBOX=.*/BUSYBOX=y/' -e 's/^COMPRESS=.*/COMPRESS=zstd/' \
  "$irt/initramfs.conf"
chroot "$root" env SOURCE_DATE_EPOCH="$SOURCE_DATE_EPOCH" mkinitramfs -o /boot/warmmetal-initrd.img "$kver" >&2
cp "$root/boot/vmlinuz-$kver" "$out/vmlinuz"
cp "$root/boot/warmmetal-initrd.img" "$out/initrd.img"

# What only built the initramfs goes; so do the CNI plugins no node configuration uses, and containerd's v1 shims.
chroot "$root" dpkg --purge --force-depends initramfs-tools initramfs-tools-core klibc-utils libklibc busybox \
  >/dev/null
(cd "$root/usr/lib/cni" && ls | grep -vx -e bridge -e host-local -e loopback -e portmap -e bandwidth -e firewall \
  | xargs -r rm -f)
rm -f "$root/usr/bin/containerd-shim" "$root/usr/bin/containerd-shim-runc-v1"

# WarmMetal's files, its units enabled; the Java runtime the agent runs on (jlink: the modules it uses, and those
# its libraries load by reflection). No class-data archive: JDK 17 writes a different one each time (JDK 19 made it
# reproducible), and the image must be; it saved 0.4 s of the agent's start under emulation.
cp -a "$layer/files/." "$root/"
"$java_home/bin/jlink" --add-modules \
  java.base,java.logging,jdk.unsupported,java.xml,java.naming,java.management,jdk.crypto.ec,java.sql \
  --strip-debug --no-header-files --no-man-pages --output "$root/usr/lib/warmmetal/jre"
chroot "$root" systemctl enable systemd-networkd.service systemd-resolved.service containerd.service \
  warmmetal-agent.service >/dev/null 2>&1
chroot "$root" systemctl mask getty@tty1.service e2scrub_reap.service e2scrub_all.timer fstrim.timer \
  systemd-networkd-wait-online.service systemd-binfmt.service proc-sys-fs-binfmt_misc.automount >/dev/null 2>&1
# resolved's stub for programs, the lease's servers for the kubelet (kubeadm picks that file when resolved runs).
ln -sf ../run/systemd/resolve/stub-resolv.conf "$root/etc/resolv.conf"

# Nothing that differs between two builds of the same packages, nothing left of the build.
: > "$root/etc/machine-id"
# Accounts made by packages' scripts record the day they were made: the build's day becomes SOURCE_DATE_EPOCH's.
sed -i -E "s/^([^:]*:[^:]*:)[0-9]+:/\1$((SOURCE_DATE_EPOCH / 86400)):/" "$root/etc/shadow"
rm -f "$root/etc/passwd-" "$root/etc/group-" "$root/etc/shadow-" "$root/etc/gshadow-"
rm -rf "$root/boot"/* "$root/var/cache"/* "$root/var/log"/* "$root/var/lib/apt/lists"/* "$root/tmp"/* \
  "$root/var/lib/dpkg"/*-old "$root/etc/initramfs-tools" "$root/var/lib/systemd/catalog/database" \
  "$root/etc/ssl/certs/java"
rm -f "$root/var/cache/ldconfig/aux-cache" "$root/etc/.pwd.lock" "$root/var/lib/dbus/machine-id"
cp "$work/packages.txt" "$root/usr/lib/warmmetal/packages.txt"
squash "$root" "$out/os.squashfs"
echo "$kver" > "$out/kernel-version"
mv "$work/packages.txt" "$out/"
