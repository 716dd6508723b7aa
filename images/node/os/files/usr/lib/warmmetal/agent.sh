#!/bin/sh
# Starts the WarmMetal agent with what the kernel command line carries — the API's iPXE script wrote it:
# warmmetal.api= (the agents' port), warmmetal.ca_pin= (the API's CA, by its key), warmmetal.token= (a single-use
# enrollment token). The token goes to a 0600 file in RAM; the agent keeps its key and certificate in its state
# directory, in RAM too: a reboot enrolls again.
set -eu
api= pin= token=
for word in $(cat /proc/cmdline); do
  case "$word" in
    warmmetal.api=*) api=${word#*=} ;;
    warmmetal.ca_pin=*) pin=${word#*=} ;;
    warmmetal.token=*) token=${word#*=} ;;
  esac
done
[ -n "$api" ] || { echo "warmmetal-agent: no warmmetal.api= on the kernel command line"; exit 1; }
umask 077
mkdir -p /run/warmmetal
[ -n "$token" ] && [ ! -e /run/warmmetal/token ] && printf '%s' "$token" > /run/warmmetal/token
# The address it is reached at: the one the initramfs was leased, or the default route's.
address=
[ -f /run/warmmetal/boot.env ] && address=$(sed -n 's/^BOOT_ADDRESS=//p' /run/warmmetal/boot.env)
[ -n "$address" ] || address=$(ip -4 -o route get 1.0.0.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')
# The kubelet reports the same address (the join passes it on).
[ -z "$address" ] || export WARMMETAL_NODE_IP="$address"
echo "warmmetal-agent: starting at $(cut -d' ' -f1 /proc/uptime) s"
# shellcheck disable=SC2086
exec /usr/lib/warmmetal/jre/bin/java ${WARMMETAL_AGENT_JAVA_OPTS:-} -jar /usr/lib/warmmetal/warmmetal-agent.jar \
  --api "$api" --ca-pin "$pin" --token-file /run/warmmetal/token --state-dir /var/lib/warmmetal-agent \
  ${address:+--address "$address"}
