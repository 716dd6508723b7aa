#!/usr/bin/env bash
# Builds the node image's Kubernetes layer (called by images/node/build.sh, which caches it by its inputs): kubelet and
# kubeadm from KUBE_BIN with their systemd units and containerd's configuration (files/), the pause image built from
# KUBE_BIN/pause (tagged k8s.gcr.io/pause:<pause.tag>) and any image archives in IMAGES, for the agent's prepare to
# import. Writes OUT/kubernetes.squashfs.
# Usage: kubernetes/build-layer.sh KUBE_BIN IMAGES|"" WORK OUT   (SOURCE_DATE_EPOCH set)
set -euo pipefail
layer=$(cd "$(dirname "$0")" && pwd)
. "$layer/../lib/common.sh"
kube_bin=$1 extra_images=$2 work=$3 out=$4
root=$work/root
kube_version=$("$kube_bin/kubeadm" version -o short)
pause_ref="k8s.gcr.io/pause:$(cat "$kube_bin/pause.tag")"
mkdir -p "$out"
mkdir -p "$root/usr/bin" "$root/usr/share/warmmetal/images" \
  "$root/usr/lib/warmmetal" "$work/pause/usr/bin"
cp -a "$layer/files/." "$root/"
install -m 0755 "$kube_bin/kubelet" "$kube_bin/kubeadm" "$root/usr/bin/"
install -m 0755 "$kube_bin/pause" "$work/pause/pause"
sh "$layer/../lib/image-archive.sh" "$pause_ref" "$work/pause" '["/pause"]' "$root/usr/share/warmmetal/images/pause.tar"
[ -z "$extra_images" ] || cp "$extra_images"/*.tar "$root/usr/share/warmmetal/images/"
sed "s|@PAUSE_IMAGE@|$pause_ref|" "$root/etc/containerd/config.toml.in" > "$root/etc/containerd/config.toml"
rm "$root/etc/containerd/config.toml.in"
{
  printf 'WARMMETAL_KUBE_VERSION=%s\n' "$kube_version"
  # What the join should know about this kubelet (build-kubernetes.sh says: WARMMETAL_KUBELET_FAST_STATUS).
  [ ! -f "$kube_bin/kubelet.env" ] || cat "$kube_bin/kubelet.env"
} > "$root/usr/lib/warmmetal/kubernetes.env"
squash "$root" "$out/kubernetes.squashfs"
