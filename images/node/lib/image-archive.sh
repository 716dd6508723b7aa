#!/bin/sh
# Writes a container image as a docker-archive tar — what `ctr images import` and `docker load` read — from a
# directory that becomes its one layer. For hosts without a registry: the node image's pause, the tests' busybox.
# Reproducible: the layer's files get owner 0 and mtime 0, sorted, so the same directory gives the same digest.
#
# Usage: image-archive.sh NAME:TAG ROOTFS_DIR ENTRYPOINT_JSON OUT.tar
#   e.g. image-archive.sh k8s.gcr.io/pause:3.4 rootfs '["/pause"]' pause.tar
set -eu
ref=$1 rootfs=$2 entrypoint=$3 out=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$rootfs" && tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$work/layer.tar" .)
layer=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
mkdir -p "$work/image/$layer"
mv "$work/layer.tar" "$work/image/$layer/layer.tar"
cat > "$work/config.json" <<JSON
{"architecture":"amd64","os":"linux","config":{"Entrypoint":$entrypoint,"Env":["PATH=/bin:/usr/bin"],"WorkingDir":"/"},
 "rootfs":{"type":"layers","diff_ids":["sha256:$layer"]},"history":[{"created_by":"warmmetal image-archive.sh"}]}
JSON
config=$(sha256sum "$work/config.json" | cut -d' ' -f1)
mv "$work/config.json" "$work/image/$config.json"
printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]\n' "$config" "$ref" "$layer" \
  > "$work/image/manifest.json"
(cd "$work/image" && tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$work/out.tar" .)
mv "$work/out.tar" "$out"
