#!/bin/sh
# Join the cluster: kubeadm join with the instance's bootstrap parameters, node labels, taints and providerID — or
# run the instance's user data instead. Parameters (secrets included) arrive as JSON on stdin, never in argv or the
# environment. Temporary files go in $TMPDIR, a private directory the agent removes after the command, whatever
# happens to this script.
#
# On a prepared host only the join itself is left, and it is kept short:
# - kubeadm's preflight checks are skipped: prepare checked the host, and the checks cost seconds (one resolves the
#   host's name, ten seconds where that name is in no DNS);
# - the JoinConfiguration is the version the installed kubeadm reads (v1beta2 before 1.22, v1beta3 from 1.22);
# - where no systemd runs, this script starts the kubelet itself the moment kubeadm has written its files (kubeadm
#   would only wait for a service manager that is not there), without the cloud-metadata probe of its credential
#   provider (seconds on a host that is not in AWS);
# - a kubelet older than 1.27 that lacks upstream's start-up status loop (kubernetes/kubernetes#112618, which
#   WARMMETAL_KUBELET_FAST_STATUS=true says it has: WarmMetal's node image builds it in) computes its node status
#   every second rather than ten, so its first Ready is posted within a second of being true; a kubelet with the
#   loop posts it within 100 ms and keeps its default afterwards.
#
# Settings (environment): WARMMETAL_CRI_SOCKET (/run/containerd/containerd.sock), WARMMETAL_NODE_NAME (the host name),
# WARMMETAL_NODE_IP (the address the kubelet reports; default: the kubelet's choice), WARMMETAL_KUBELET_CGROUP_DRIVER
# (the container runtime's: systemd or cgroupfs; it overrides the cluster's kubelet configuration, which may say
# otherwise), WARMMETAL_KUBELET_SUPERVISOR (systemd where systemd runs, else agent: who starts the kubelet),
# WARMMETAL_KUBELET_ARGS (more kubelet flags, when the agent starts it), WARMMETAL_KUBELET_RUN_DIR (/run/warmmetal: the
# kubelet's pid file and log when the agent starts it), WARMMETAL_KUBELET_FAST_STATUS (true: the kubelet keeps its
# fast status updates until Ready, as 1.27+ do; default false below 1.27).
set -eu
command -v python3 >/dev/null || { echo "python3 is needed to read the join parameters"; exit 1; }
work=${TMPDIR:-$(mktemp -d)}
params="$work/params.json"
( umask 077; cat > "$params" )

# The parameters are JoinParams (protocol/…/commands/JoinParams.java); the Python below reads them as p, the join as
# k, a taint as t, the kubelet's settings as kl: ProtocolContractTest checks that what it reads is what the record and
# the contract define.
if python3 -c "import json,sys; p = json.load(open(sys.argv[1]))['params']; sys.exit(0 if 'userData' in p else 1)" "$params"; then
  echo "::step user-data"
  script="$work/user-data"
  ( umask 077; python3 -c "import base64,json,sys; p = json.load(open(sys.argv[1]))['params']; sys.stdout.write(base64.b64decode(p['userData']).decode())" "$params" > "$script" )
  chmod 700 "$script"
  rc=0; "$script" || rc=$?
  rm -f "$script" "$params"
  exit $rc
fi

cri=${WARMMETAL_CRI_SOCKET:-/run/containerd/containerd.sock}
cri=${cri#unix://}
kubeadm_version=$(kubeadm version -o short)
run_dir=${WARMMETAL_KUBELET_RUN_DIR:-/run/warmmetal}

echo "::step kubeadm-join"
config="$work/join.yaml"
# The JoinConfiguration is written by Python from the JSON (JSON is valid YAML), so no value can break its syntax;
# the token stays in this 0600 file, off kubeadm's command line.
( umask 077; python3 - "$params" "$kubeadm_version" "$cri" "${WARMMETAL_NODE_NAME:-}" "${WARMMETAL_NODE_IP:-}" \
    "${WARMMETAL_KUBELET_CGROUP_DRIVER:-}" "${WARMMETAL_KUBELET_FAST_STATUS:-false}" > "$config" <<'PY'
import json, re, sys
p = json.load(open(sys.argv[1]))["params"]
version = tuple(int(x) for x in re.findall(r"\d+", sys.argv[2])[:2])
cri, node_name, node_ip, cgroup_driver = sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
fast_status = version >= (1, 27) or sys.argv[7] == "true"
k = p["kubernetes"]
# The version skew policy: a kubelet never newer than the control plane, at most 2 minor versions older (3 from
# 1.28). Refused here, before kubeadm changes anything: the machine fails saying why, and no join is half done.
if k.get("controlPlaneVersion"):
    plane = tuple(int(x) for x in re.findall(r"\d+", k["controlPlaneVersion"])[:2])
    behind = 3 if plane >= (1, 28) else 2
    if version > plane or plane[1] - version[1] > behind or plane[0] != version[0]:
        sys.exit("kubelet %s cannot join control plane %s: a kubelet may be at most %d minor versions older than "
                 "the control plane, and never newer (boot this machine into an image for the cluster's version)"
                 % (sys.argv[2], k["controlPlaneVersion"], behind))
label = re.compile(r"^([a-z0-9.-]+/)?[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$")
# The labels a Karpenter node carries: the launch's (NodePool, template labels, capacity type), the instance type the
# API chose, and the machine's topology (zone, region). arch, os and hostname the kubelet sets itself.
labels = dict(k.get("nodeLabels", {}))
if p.get("shape"):
    labels["node.kubernetes.io/instance-type"] = p["shape"]
for key, value in (p.get("machineLabels") or {}).items():
    if key in ("topology.kubernetes.io/zone", "topology.kubernetes.io/region"):
        labels.setdefault(key, value)
for key, value in labels.items():
    if not label.match(key) or (value and not label.match(value)):
        sys.exit("refusing node label %r=%r" % (key, value))
# The kubelet refuses to start with labels in the kubernetes.io and k8s.io namespaces but for its own few; those the
# controller puts on the Node when it registers.
kubelet_keys = {"kubernetes.io/hostname", "kubernetes.io/arch", "kubernetes.io/os", "node.kubernetes.io/instance-type",
                "topology.kubernetes.io/zone", "topology.kubernetes.io/region", "beta.kubernetes.io/arch",
                "beta.kubernetes.io/os", "beta.kubernetes.io/instance-type",
                "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"}
def kubelet_may_set(key):
    prefix = key.split("/")[0] if "/" in key else ""
    restricted = any(prefix == d or prefix.endswith("." + d) for d in ("kubernetes.io", "k8s.io"))
    allowed_prefix = any(prefix == d or prefix.endswith("." + d) for d in ("kubelet.kubernetes.io",
                                                                          "node.kubernetes.io"))
    return not restricted or key in kubelet_keys or allowed_prefix
labels = {k: v for k, v in labels.items() if kubelet_may_set(k)}
taints = [{"key": t["key"], "value": t.get("value", ""), "effect": t["effect"]} for t in k.get("taints", [])]
registration = {
    # v1beta3 wants the socket as a URL; v1beta2 reads a path.
    "criSocket": ("unix://" + cri) if version >= (1, 22) else cri,
    "taints": taints,
    "kubeletExtraArgs": {
        "node-labels": ",".join("%s=%s" % kv for kv in sorted(labels.items())),
        "provider-id": p["providerId"],
    },
}
if not fast_status:
    registration["kubeletExtraArgs"]["node-status-update-frequency"] = "1s"
# The node class's kubelet settings, as flags (kubeadm's per-node way at every version): the Node then reports the
# allocatable the controller planned with. Checked again here: a value is a quantity, so no flag can be smuggled in.
kl = k.get("kubelet") or {}
quantity = re.compile(r"^\+?[0-9.]+[eEinumkKMGTP]*[-+]?[0-9]*$")
if kl.get("maxPods") is not None:
    registration["kubeletExtraArgs"]["max-pods"] = str(int(kl["maxPods"]))
for flag, reserved in (("system-reserved", kl.get("systemReserved") or {}),
                       ("kube-reserved", kl.get("kubeReserved") or {})):
    for resource, amount in reserved.items():
        if resource not in ("cpu", "memory", "ephemeral-storage", "pid") or not quantity.match(str(amount)):
            sys.exit("refusing kubelet --%s %r=%r" % (flag, resource, amount))
    if reserved:
        registration["kubeletExtraArgs"][flag] = ",".join("%s=%s" % kv for kv in sorted(reserved.items()))
if node_name:
    registration["name"] = node_name
if node_ip:
    registration["kubeletExtraArgs"]["node-ip"] = node_ip
if cgroup_driver:
    registration["kubeletExtraArgs"]["cgroup-driver"] = cgroup_driver
config = {
    "apiVersion": "kubeadm.k8s.io/v1beta3" if version >= (1, 22) else "kubeadm.k8s.io/v1beta2",
    "kind": "JoinConfiguration",
    "discovery": {"bootstrapToken": {"apiServerEndpoint": k["apiServer"], "token": k["bootstrapToken"],
                                     "caCertHashes": [k["caCertHash"]]}},
    "nodeRegistration": registration,
}
print(json.dumps(config))
PY
)

supervisor=${WARMMETAL_KUBELET_SUPERVISOR:-agent}
[ -z "${WARMMETAL_KUBELET_SUPERVISOR:-}" ] && [ -d /run/systemd/system ] && supervisor=systemd
log="$work/kubeadm.log"
kubeadm join --config "$config" --skip-phases=preflight > "$log" 2>&1 &
join=$!

if [ "$supervisor" = agent ]; then
  # kubeadm writes the kubelet's files, then waits for its TLS bootstrap: start it as soon as they are there.
  while [ ! -s /var/lib/kubelet/kubeadm-flags.env ] || [ ! -s /var/lib/kubelet/config.yaml ]; do
    if ! kill -0 $join 2>/dev/null; then
      rc=0; wait $join || rc=$?
      tail -n 20 "$log"; rm -f "$config" "$params" "$log"
      exit $(( rc == 0 ? 1 : rc ))
    fi
    sleep 0.05
  done
  echo "::step kubelet-start"
  mkdir -p "$run_dir"
  # The flags kubeadm wrote (KUBELET_KUBEADM_ARGS), as its systemd drop-in would pass them.
  . /var/lib/kubelet/kubeadm-flags.env
  # shellcheck disable=SC2086
  AWS_EC2_METADATA_DISABLED=true setsid kubelet --bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf \
    --kubeconfig=/etc/kubernetes/kubelet.conf --config=/var/lib/kubelet/config.yaml \
    $KUBELET_KUBEADM_ARGS ${WARMMETAL_KUBELET_ARGS:-} >> "$run_dir/kubelet.log" 2>&1 < /dev/null &
  echo $! > "$run_dir/kubelet.pid"
fi

echo "::step tls-bootstrap"
rc=0; wait $join || rc=$?
rm -f "$config" "$params"
if [ $rc -ne 0 ]; then
  tail -n 12 "$log"
  # What the kubelet said, where systemd ran it (the agent's kubelet logs to $run_dir/kubelet.log): its errors.
  [ "$supervisor" != systemd ] || journalctl -u kubelet --no-pager -o cat 2>/dev/null | grep -E '^[FE][0-9]{4} ' \
    | tail -n 8 | cut -c1-300
fi
rm -f "$log"
[ $rc -eq 0 ] || exit $rc
echo "joined"
