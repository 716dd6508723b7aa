#!/bin/sh
# Join the cluster: kubeadm join with the instance's bootstrap parameters, node labels, taints and providerID — or
# run the instance's user data instead. Parameters (secrets included) arrive as JSON on stdin, never in argv or the
# environment. Temporary files go in $TMPDIR, a private directory the agent removes after the command, whatever
# happens to this script.
set -eu
command -v python3 >/dev/null || { echo "python3 is needed to read the join parameters"; exit 1; }
work=${TMPDIR:-$(mktemp -d)}
params="$work/params.json"
( umask 077; cat > "$params" )

if python3 -c "import json,sys; sys.exit(0 if 'userData' in json.load(open(sys.argv[1]))['params'] else 1)" "$params"; then
  echo "::step user-data"
  script="$work/user-data"
  ( umask 077; python3 -c "import base64,json,sys; sys.stdout.write(base64.b64decode(json.load(open(sys.argv[1]))['params']['userData']).decode())" "$params" > "$script" )
  chmod 700 "$script"
  rc=0; "$script" || rc=$?
  rm -f "$script" "$params"
  exit $rc
fi

echo "::step kubeadm-join"
config="$work/join.yaml"
# The JoinConfiguration is written by Python from the JSON (JSON is valid YAML), so no value can break its syntax;
# the token stays in this 0600 file, off kubeadm's command line.
( umask 077; python3 - "$params" > "$config" <<'PY'
import json, re, sys
p = json.load(open(sys.argv[1]))["params"]
k = p["kubernetes"]
label = re.compile(r"^([a-z0-9.-]+/)?[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$")
labels = k.get("nodeLabels", {})
for key, value in labels.items():
    if not label.match(key) or (value and not label.match(value)):
        sys.exit("refusing node label %r=%r" % (key, value))
taints = [{"key": t["key"], "value": t.get("value", ""), "effect": t["effect"]} for t in k.get("taints", [])]
config = {
    "apiVersion": "kubeadm.k8s.io/v1beta3",
    "kind": "JoinConfiguration",
    "discovery": {"bootstrapToken": {"apiServerEndpoint": k["apiServer"], "token": k["bootstrapToken"],
                                     "caCertHashes": [k["caCertHash"]]}},
    "nodeRegistration": {"taints": taints, "kubeletExtraArgs": {
        "node-labels": ",".join("%s=%s" % kv for kv in labels.items()),
        "provider-id": p["providerId"]}},
}
print(json.dumps(config))
PY
)
rc=0; kubeadm join --config "$config" || rc=$?
rm -f "$config" "$params"
[ $rc -eq 0 ] && echo "joined"
exit $rc
