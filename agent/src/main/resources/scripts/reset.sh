#!/bin/sh
# Leave the cluster and make the host as it was before it joined: kubeadm reset, kubelet and CNI state removed,
# data disks wiped per policy (WARMMETAL_WIPE_POLICY: none | quick | full), then prepare again.
set -eu
params=$(cat)

echo "::step kubeadm-reset"
kubeadm reset -f >/dev/null 2>&1 || true

echo "::step wipe"
rm -rf /etc/cni/net.d /var/lib/kubelet /var/lib/cni /etc/kubernetes
for disk in ${WARMMETAL_DATA_DISKS:-}; do
  case "${WARMMETAL_WIPE_POLICY:-quick}" in
    none) ;;
    quick) wipefs -a "$disk" >/dev/null; blkdiscard -f "$disk" 2>/dev/null || true ;;
    full) dd if=/dev/zero of="$disk" bs=4M status=none || true ;;
  esac
done

printf '%s' "$params" | /bin/sh "$(dirname "$0")/prepare.sh"
