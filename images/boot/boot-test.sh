#!/bin/sh
# The boot test: builds the agent image, starts the API (embedded PostgreSQL) on loopback, and network-boots a
# QEMU machine (software emulation) the way a server boots: its NIC's iPXE ROM takes the API's iPXE script as the
# DHCP boot file (with a boot token in the URL), then the kernel and initrd from the API over HTTP. Passes when the
# machine is warm in the API — enrolled, connected, prepared by the pool — and prints the time from power-on.
# The guest reaches only the host's loopback, through QEMU's user-mode network (10.0.2.2).
# Usage: images/boot/boot-test.sh   (needs the jars: mvn -B package -DskipTests; about 2–4 minutes)
# The agent runs with warmmetal.simulate=1: its prepare/join scripts need containerd and kubeadm, which this
# initramfs image does not carry.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
http_port=${WARMMETAL_BOOT_TEST_HTTP_PORT:-18080}
agent_port=${WARMMETAL_BOOT_TEST_AGENT_PORT:-18443}
timeout_s=${WARMMETAL_BOOT_TEST_TIMEOUT:-900}
admin=boot-test-admin-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')

need() { command -v "$1" >/dev/null || apt-get install -y --no-install-recommends "$2" >/dev/null; }
need qemu-system-x86_64 qemu-system-x86
need curl curl
[ -d /usr/lib/ipxe/qemu ] || apt-get install -y --no-install-recommends ipxe-qemu >/dev/null

work=$(mktemp -d)
# Traversable, so the embedded PostgreSQL (an unprivileged user when this runs as root) keeps its cluster inside and
# goes with it; otherwise it would live on in /var/lib/warmmetal.
chmod 711 "$work"
api_pid=
qemu_pid=
cleanup() {
  [ -n "$qemu_pid" ] && kill "$qemu_pid" 2>/dev/null || true
  [ -n "$api_pid" ] && kill "$api_pid" 2>/dev/null && wait "$api_pid" 2>/dev/null || true
  [ -n "${KEEP:-}" ] && echo "logs kept in $work" || rm -rf "$work"
}
trap cleanup EXIT

"$here/build.sh" "$work/boot"

WARMMETAL_DATA_DIR=$work/data WARMMETAL_HTTP_HOST=127.0.0.1 WARMMETAL_HTTP_PORT=$http_port \
WARMMETAL_AGENT_HOST=127.0.0.1 WARMMETAL_AGENT_PORT=$agent_port WARMMETAL_AGENT_NAMES=10.0.2.2 \
WARMMETAL_ADMIN_TOKEN=$admin WARMMETAL_BOOT_DIR=$work/boot WARMMETAL_POOL_INTERVAL_MS=500 \
WARMMETAL_BOOT_CMDLINE="console=ttyS0,115200 warmmetal.simulate=1" \
  java -jar "$repo/api/target/warmmetal-api.jar" > "$work/api.log" 2>&1 &
api_pid=$!
api=http://127.0.0.1:$http_port
i=0
until curl -sf "$api/readyz" >/dev/null; do
  i=$((i + 1)); [ $i -lt 120 ] || { echo "the API did not start:"; tail -20 "$work/api.log"; exit 1; }; sleep 1
done
auth="Authorization: Bearer $admin"
boot_token=$(curl -sf -H "$auth" -H 'Content-Type: application/json' -d '{"name": "pxe", "role": "boot"}' \
  "$api/v1/tokens" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')

start=$(date +%s.%N)
elapsed() { echo "$(date +%s.%N) $start" | awk '{printf "%.1f", $1 - $2}'; }
qemu-system-x86_64 -accel tcg -m 1536 -smp 2 -nographic -no-reboot -boot n \
  -uuid "$(cat /proc/sys/kernel/random/uuid)" -device virtio-rng-pci \
  -nic "user,model=virtio-net-pci,bootfile=http://boot:$boot_token@10.0.2.2:$http_port/v1/boot/ipxe" \
  > "$work/console.log" 2>&1 < /dev/null &
qemu_pid=$!
echo "powered on at $(date -u +%H:%M:%S.%N | cut -c1-12) UTC (QEMU, TCG); console: $work/console.log"

machine=
state=
while :; do
  if ! kill -0 "$qemu_pid" 2>/dev/null; then echo "QEMU stopped:"; tail -30 "$work/console.log"; exit 1; fi
  if [ "$(elapsed | cut -d. -f1)" -gt "$timeout_s" ]; then
    echo "not warm after $timeout_s s (machine ${machine:-none}, state ${state:-none}); console:"
    tail -30 "$work/console.log"; exit 1
  fi
  page=$(curl -sf -H "$auth" "$api/v1/machines")
  if [ -z "$machine" ]; then
    machine=$(echo "$page" | sed -n 's/.*"id":"\(m-[0-9a-f]*\)".*/\1/p')
    if [ -n "$machine" ]; then
      echo "enrolled as $machine at $(elapsed) s"
      shape=$(echo "$page" | sed -n 's/.*"shape":"\([^"]*\)".*/\1/p')
      curl -sf -X PUT -H "$auth" -H 'Content-Type: application/json' -d '{"minWarm": 1, "maxWarm": 1}' \
        "$api/v1/pools/$shape" >/dev/null
    fi
  fi
  state=$(echo "$page" | sed -n 's/.*"state":"\([a-z-]*\)".*/\1/p')
  if [ "$state" = warm ]; then
    echo "warm at $(elapsed) s after power-on (machine $machine, shape $shape)"
    grep -a -e '^warmmetal:' -e 'INFO' "$work/console.log" | sed 's/^/  guest /'
    exit 0
  fi
  sleep 0.5
done
