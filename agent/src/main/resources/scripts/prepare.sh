#!/bin/sh
# Prepare this host to join a cluster in seconds: the container runtime answering, kubelet and kubeadm present (at
# the pinned version), no kubelet left running, images in the runtime (loaded from local archives, pulled, or both),
# data disks clean. Parameters arrive as JSON on stdin. Steps: "::step NAME".
#
# Settings (environment): WARMMETAL_CRI_SOCKET (/run/containerd/containerd.sock), WARMMETAL_KUBE_VERSION (e.g.
# v1.20.2: kubeadm must be that version), WARMMETAL_IMAGE_ARCHIVES (image tars — files or directories of *.tar — to
# import, for hosts without a registry), WARMMETAL_PREPULL_IMAGES (images to pull: at least the runtime's sandbox
# (pause) image, and the DaemonSets' images), WARMMETAL_DATA_DISKS, WARMMETAL_MIN_MEMORY_MIB (refuse a host with less
# RAM: it would be counted warm and fail its pods), WARMMETAL_KUBELET_RUN_DIR (/run/warmmetal).
set -eu
params=$(cat)
KUBE_VERSION=${WARMMETAL_KUBE_VERSION:-}
cri=${WARMMETAL_CRI_SOCKET:-/run/containerd/containerd.sock}
cri=${cri#unix://}
run_dir=${WARMMETAL_KUBELET_RUN_DIR:-/run/warmmetal}
supervisor=${WARMMETAL_KUBELET_SUPERVISOR:-agent}
[ -z "${WARMMETAL_KUBELET_SUPERVISOR:-}" ] && [ -d /run/systemd/system ] && supervisor=systemd

echo "::step host"
if [ -n "${WARMMETAL_MIN_MEMORY_MIB:-}" ]; then
  mib=$(( $(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 1024 ))
  [ "$mib" -ge "$WARMMETAL_MIN_MEMORY_MIB" ] \
    || { echo "this host has $mib MiB of RAM; a node needs at least $WARMMETAL_MIN_MEMORY_MIB MiB"; exit 1; }
fi

echo "::step container-runtime"
command -v containerd >/dev/null || { echo "containerd is not installed"; exit 1; }
if [ -d /run/systemd/system ]; then
  systemctl is-active --quiet containerd || systemctl start containerd
fi
for _ in $(seq 1 50); do
  ctr -a "$cri" version >/dev/null 2>&1 && break
  sleep 0.1
done
ctr -a "$cri" version >/dev/null 2>&1 || { echo "containerd does not answer on $cri"; exit 1; }

echo "::step kubelet"
for tool in kubelet kubeadm; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed"; exit 1; }
done
if [ -n "$KUBE_VERSION" ]; then
  kubeadm version -o short | grep -qx "v${KUBE_VERSION#v}" || { echo "kubeadm is not $KUBE_VERSION"; exit 1; }
fi
if [ "$supervisor" = systemd ]; then
  # The kubelet's in-tree AWS credential provider asks the cloud-metadata address at every start: seconds of
  # timeouts on a server that is not in AWS.
  drop_in=/etc/systemd/system/kubelet.service.d/20-warmmetal.conf
  if [ ! -f "$drop_in" ]; then
    mkdir -p "$(dirname "$drop_in")"
    printf '[Service]\nEnvironment=AWS_EC2_METADATA_DISABLED=true\n' > "$drop_in"
    systemctl daemon-reload
  fi
  if systemctl is-active --quiet kubelet; then echo "a kubelet is running: reset this host first"; exit 1; fi
elif [ -f "$run_dir/kubelet.pid" ] && kill -0 "$(cat "$run_dir/kubelet.pid")" 2>/dev/null; then
  echo "a kubelet is running: reset this host first"; exit 1
fi

# Containers a kubelet of an earlier boot left in the runtime (its store may be on a data disk that outlived it).
for task in $(ctr -a "$cri" -n k8s.io tasks ls -q 2>/dev/null); do
  ctr -a "$cri" -n k8s.io tasks kill -s SIGKILL "$task" >/dev/null 2>&1 || true
  ctr -a "$cri" -n k8s.io tasks rm -f "$task" >/dev/null 2>&1 || true
done
for container in $(ctr -a "$cri" -n k8s.io containers ls -q 2>/dev/null); do
  ctr -a "$cri" -n k8s.io containers rm "$container" >/dev/null 2>&1 || true
done

echo "::step images"
for archive in ${WARMMETAL_IMAGE_ARCHIVES:-}; do
  if [ -d "$archive" ]; then set -- "$archive"/*.tar; else set -- "$archive"; fi
  for tar in "$@"; do
    [ -f "$tar" ] || continue
    ctr -a "$cri" -n k8s.io images import "$tar" >/dev/null || { echo "importing $tar failed"; exit 1; }
  done
done
for image in ${WARMMETAL_PREPULL_IMAGES:-}; do
  if command -v crictl >/dev/null; then
    crictl --runtime-endpoint "unix://$cri" pull "$image" >/dev/null
  else
    ctr -a "$cri" -n k8s.io images pull "$image" >/dev/null
  fi
done

echo "::step disks"
# Data disks are wiped by reset; here they are only checked to be unmounted and clean.
for disk in ${WARMMETAL_DATA_DISKS:-}; do
  if grep -q "^$disk" /proc/mounts; then echo "$disk is mounted"; exit 1; fi
done
echo "prepared"
