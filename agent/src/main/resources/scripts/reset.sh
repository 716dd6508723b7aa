#!/bin/sh
# Leave the cluster and make the host as it was before it joined — kubelet stopped, the pods' containers removed,
# kubeadm reset, the kubelet's mounts and state and the pods' network state removed, data disks wiped per policy
# (WARMMETAL_WIPE_POLICY: none | quick | full) — then prepare again. The CNI configuration in /etc/cni/net.d is kept,
# as kubeadm reset keeps it: it belongs to the host's preparation, and the next join needs it to be Ready at once.
set -eu
params=$(cat)
cri=${WARMMETAL_CRI_SOCKET:-/run/containerd/containerd.sock}
cri=${cri#unix://}
run_dir=${WARMMETAL_KUBELET_RUN_DIR:-/run/warmmetal}
supervisor=${WARMMETAL_KUBELET_SUPERVISOR:-agent}
[ -z "${WARMMETAL_KUBELET_SUPERVISOR:-}" ] && [ -d /run/systemd/system ] && supervisor=systemd

echo "::step kubelet-stop"
if [ "$supervisor" = systemd ]; then
  systemctl stop kubelet 2>/dev/null || true
elif [ -f "$run_dir/kubelet.pid" ]; then
  pid=$(cat "$run_dir/kubelet.pid")
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$run_dir/kubelet.pid"
fi

echo "::step containers"
# kubeadm reset removes containers with crictl; where there is none, containerd's own client does it.
if command -v crictl >/dev/null; then
  crictl --runtime-endpoint "unix://$cri" rmp -fa >/dev/null 2>&1 || true
elif command -v ctr >/dev/null; then
  for task in $(ctr -a "$cri" -n k8s.io tasks ls -q 2>/dev/null); do
    ctr -a "$cri" -n k8s.io tasks kill -s SIGKILL "$task" >/dev/null 2>&1 || true
  done
  for _ in $(seq 1 50); do
    [ -z "$(ctr -a "$cri" -n k8s.io tasks ls -q 2>/dev/null)" ] && break
    sleep 0.1
  done
  for task in $(ctr -a "$cri" -n k8s.io tasks ls -q 2>/dev/null); do
    ctr -a "$cri" -n k8s.io tasks rm -f "$task" >/dev/null 2>&1 || true
  done
  for container in $(ctr -a "$cri" -n k8s.io containers ls -q 2>/dev/null); do
    ctr -a "$cri" -n k8s.io containers rm "$container" >/dev/null 2>&1 || true
  done
fi

echo "::step kubeadm-reset"
kubeadm reset -f --cri-socket "$cri" >/dev/null 2>&1 || true

echo "::step wipe"
# The kubelet's mounts (volumes, and /var/lib/kubelet bind-mounted onto itself), deepest first.
for mount in $(awk '$2 == "/var/lib/kubelet" || index($2, "/var/lib/kubelet/") == 1 {print $2}' /proc/self/mounts | sort -r); do
  umount "$mount" 2>/dev/null || umount -l "$mount" 2>/dev/null || true
done
# Their contents, then the directories where they are not mount points of their own.
for dir in /var/lib/kubelet /etc/kubernetes /var/lib/cni/networks /var/lib/cni/results; do
  [ -d "$dir" ] || continue
  find "$dir" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
  rmdir "$dir" 2>/dev/null || true
done
for disk in ${WARMMETAL_DATA_DISKS:-}; do
  case "${WARMMETAL_WIPE_POLICY:-quick}" in
    none) ;;
    quick) wipefs -a "$disk" >/dev/null; blkdiscard -f "$disk" 2>/dev/null || true ;;
    full) dd if=/dev/zero of="$disk" bs=4M status=none || true ;;
  esac
done

printf '%s' "$params" | /bin/sh "$(dirname "$0")/prepare.sh"
