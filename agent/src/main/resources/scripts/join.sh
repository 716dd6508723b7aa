#!/bin/sh
# Join the cluster: kubeadm join with the instance's bootstrap parameters, node labels, taints and providerID — or
# run the instance's user data instead. Parameters (secrets included) arrive as JSON on stdin, never in argv.
set -eu
params=$(cat)
field() { printf '%s' "$params" | python3 -c "import json,sys; p=json.load(sys.stdin)['params']; print($1)"; }

if [ "$(field "'userData' in p")" = "True" ]; then
  echo "::step user-data"
  script=$(mktemp); trap 'rm -f "$script"' EXIT
  field "__import__('base64').b64decode(p['userData']).decode()" > "$script"
  chmod 700 "$script"
  exec "$script"
fi

echo "::step kubeadm-join"
api=$(field "p['kubernetes']['apiServer']")
hash=$(field "p['kubernetes']['caCertHash']")
labels=$(field "','.join(k+'='+v for k,v in p['kubernetes'].get('nodeLabels',{}).items())")
taints=$(field "','.join(t['key']+('='+t['value'] if t.get('value') else '')+':'+t['effect'] for t in p['kubernetes'].get('taints',[]))")
provider=$(field "p['providerId']")
config=$(mktemp); trap 'rm -f "$config"' EXIT
chmod 600 "$config"
# The token goes into a 0600 config file, not onto kubeadm's command line.
cat > "$config" <<CFG
apiVersion: kubeadm.k8s.io/v1beta3
kind: JoinConfiguration
discovery:
  bootstrapToken:
    apiServerEndpoint: "$api"
    token: "$(field "p['kubernetes']['bootstrapToken']")"
    caCertHashes: ["$hash"]
nodeRegistration:
  kubeletExtraArgs:
    node-labels: "$labels"
    register-with-taints: "$taints"
    provider-id: "$provider"
CFG
kubeadm join --config "$config"
echo "joined"
