#!/bin/sh
# Prepare this host to join a cluster in seconds: container runtime and kubelet/kubeadm present at the pinned
# version, images pre-pulled, data disks clean. Parameters arrive as JSON on stdin. Steps: "::step NAME".
set -eu
params=$(cat)
KUBE_VERSION=${WARMMETAL_KUBE_VERSION:-}

echo "::step container-runtime"
command -v containerd >/dev/null || { echo "containerd is not installed"; exit 1; }
systemctl is-active --quiet containerd || systemctl start containerd

echo "::step kubelet"
for tool in kubelet kubeadm; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed"; exit 1; }
done
if [ -n "$KUBE_VERSION" ]; then
  kubeadm version -o short | grep -qx "v${KUBE_VERSION#v}" || { echo "kubeadm is not $KUBE_VERSION"; exit 1; }
fi

echo "::step images"
for image in ${WARMMETAL_PREPULL_IMAGES:-}; do
  crictl pull "$image" >/dev/null
done
if [ -n "$KUBE_VERSION" ]; then
  kubeadm config images pull --kubernetes-version "$KUBE_VERSION" >/dev/null
fi

echo "::step disks"
# Data disks are wiped by reset; here they are only checked to be unmounted and clean.
for disk in ${WARMMETAL_DATA_DISKS:-}; do
  if grep -q "^$disk" /proc/mounts; then echo "$disk is mounted"; exit 1; fi
done
echo "prepared"
