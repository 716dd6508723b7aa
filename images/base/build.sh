#!/usr/bin/env bash
# Builds the base of WarmMetal's container images (the API, the controller, the fleet simulator) from Debian's
# packages, with no Docker daemon and no registry: Debian 12's essential packages and base/packages by mmdebstrap, a
# jlinked Java runtime in /opt/java (on PATH), the user warmmetal (10001) and the directories the API writes. Written
# as a docker-archive tarball (docker save's format, one layer) — what Jib builds WarmMetal's images on
# (from tar://…, `mvn -B package -Pimages`; docs/deploying.md#images).
#
# Cached outside the work tree by the hash of its inputs (WARMMETAL_IMAGE_CACHE/container-base/<key>/base.tar,
# default /var/cache/warmmetal): the inputs include the Debian package versions apt resolves and the JDK's release,
# so a Debian or JDK update rebuilds it. Reproducible: every file's time is SOURCE_DATE_EPOCH, the same inputs give the
# same image id, printed at the end. Run as root (mmdebstrap --mode=root).
#
# Usage: images/base/build.sh [--link PATH]
#   --link PATH   also point the symlink PATH at the tarball (the Maven build's target/images/base.tar)
# Prints the image id and size; the last line is the tarball's path.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
. "$repo/images/node/lib/common.sh"
log() { echo "container-base: $*" >&2; }
cache=${WARMMETAL_IMAGE_CACHE:-/var/cache/warmmetal}/container-base
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1767225600} # 2026-01-01: a fixed time for every file
# The runtime's modules: the whole Java SE API, and the JDK modules the programs or their libraries use (the
# controller's metrics endpoint is the JDK's HTTP server; Netty and Vert.x reach for jdk.unsupported).
MODULES=java.se,jdk.httpserver,jdk.unsupported,jdk.crypto.ec,jdk.crypto.cryptoki,jdk.management,jdk.naming.dns,jdk.zipfs
link=
while [ $# -gt 0 ]; do
  case "$1" in
    --link) link=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { log "run as root (mmdebstrap --mode=root)"; exit 2; }
command -v mmdebstrap >/dev/null || {
  log "installing mmdebstrap"
  apt_get update -qq && DEBIAN_FRONTEND=noninteractive apt_get install -y -qq --no-install-recommends mmdebstrap >&2
}
export JAVA_HOME=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}

packages=$(grep -o '^[^#]*' "$here/packages" | awk 'NF {print $1}' | paste -sd, -)
newest_list=$(ls -t /var/lib/apt/lists/*Release 2>/dev/null | head -n 1)
[ -n "$newest_list" ] && [ $(( $(date +%s) - $(stat -c %Y "$newest_list") )) -lt 86400 ] || apt_get update -qq
resolved=$(apt_get -s -qq -o Dir::State::Status=/dev/null -o APT::Install-Recommends=0 install ${packages//,/ } \
  | awk '/^Inst / {print $2, $3}' | tr -d '(' | LC_ALL=C sort)
[ -n "$resolved" ] || { log "apt resolved none of base/packages: is a Debian mirror configured?"; exit 1; }
key=$( { echo "$resolved"; tree_hash "$here"; cat "$JAVA_HOME/release"; echo "$MODULES $SOURCE_DATE_EPOCH"; } \
  | sha256sum | cut -c1-16)
out=$cache/$key

if [ ! -f "$out/base.tar" ]; then
  work=$cache/work/$key
  rm -rf "$work" && mkdir -p "$work"
  root=$work/rootfs
  log "building $key (first build with these packages: ~2 minutes)"
  mmdebstrap --variant=essential --mode=root --quiet \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --include="$packages" bookworm "$root" >&2
  chroot "$root" dpkg-query -W -f '${Package} ${Version}\n' > "$work/packages.txt"

  "$JAVA_HOME/bin/jlink" --add-modules "$MODULES" --strip-debug --no-header-files --no-man-pages \
    --output "$root/opt/java"
  # Java's trust store is Debian's CA bundle as the runtime reads it (a JKS built from the same certificates).
  cp -L "$JAVA_HOME/lib/security/cacerts" "$root/opt/java/lib/security/cacerts"
  # The runtime runs on these libraries (its launcher finds libjli through /proc/self/exe).
  mount -t proc proc "$root/proc"
  chroot "$root" /opt/java/bin/java -version >&2 || { umount "$root/proc"; exit 1; }
  umount "$root/proc"

  # The programs' user (the essential set has no useradd): no password, no login shell.
  echo 'warmmetal:x:10001:10001:WarmMetal:/var/lib/warmmetal:/usr/sbin/nologin' >> "$root/etc/passwd"
  echo 'warmmetal:x:10001:' >> "$root/etc/group"
  echo "warmmetal:!*:$((SOURCE_DATE_EPOCH / 86400))::::::" >> "$root/etc/shadow"
  mkdir -p "$root/opt/warmmetal" "$root/var/lib/warmmetal" "$root/var/lib/warmmetal-ca"
  chown 10001:10001 "$root/var/lib/warmmetal" "$root/var/lib/warmmetal-ca"

  # Nothing that differs between two builds of the same packages, nothing left of the build.
  : > "$root/etc/machine-id"
  sed -i -E "s/^([^:]*:[^:]*:)[0-9]+:/\1$((SOURCE_DATE_EPOCH / 86400)):/" "$root/etc/shadow"
  rm -f "$root/etc/passwd-" "$root/etc/group-" "$root/etc/shadow-" "$root/etc/gshadow-" "$root/etc/.pwd.lock" \
    "$root/var/cache/ldconfig/aux-cache"
  rm -rf "$root/var/cache"/* "$root/var/log"/* "$root/var/lib/apt/lists"/* "$root/tmp"/* "$root/var/lib/dpkg"/*-old \
    "$root/dev"/*
  cp "$work/packages.txt" "$root/opt/java/packages.txt"

  # The image: one layer, its config, docker save's manifest.
  image=$work/image
  mkdir -p "$image"
  tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --numeric-owner --format=posix \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime -C "$root" -cf "$image/layer.tar" .
  layer=$(sha "$image/layer.tar")
  created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
  cat > "$image/config.json" <<JSON
{"architecture":"amd64","os":"linux","created":"$created",
 "config":{"Env":["PATH=/opt/java/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","JAVA_HOME=/opt/java"],
  "WorkingDir":"/","Labels":{"org.opencontainers.image.title":"warmmetal-base","io.warmmetal.base.key":"$key"}},
 "rootfs":{"type":"layers","diff_ids":["sha256:$layer"]},
 "history":[{"created":"$created","created_by":"images/base/build.sh: Debian 12 essential + $packages, jlinked Java"}]}
JSON
  id=$(sha "$image/config.json")
  mv "$image/config.json" "$image/$id.json"
  mkdir "$image/$layer" && mv "$image/layer.tar" "$image/$layer/layer.tar"
  printf '[{"Config":"%s.json","RepoTags":["warmmetal/base:%s"],"Layers":["%s/layer.tar"]}]\n' "$id" "$key" "$layer" \
    > "$image/manifest.json"
  tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --numeric-owner --owner=0 --group=0 --format=posix \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime -C "$image" -cf "$work/base.tar" \
    manifest.json "$id.json" "$layer/layer.tar" # named, not ".": readers refuse an entry "./"
  rm -rf "$out" && mkdir -p "$out"
  mv "$work/base.tar" "$out/base.tar"
  cp "$work/packages.txt" "$out/packages.txt"
  echo "sha256:$id" > "$out/image-id"
  rm -rf "$work"
fi

if [ -n "$link" ]; then
  mkdir -p "$(dirname "$link")"
  ln -sfn "$out/base.tar" "$link"
fi
log "image id $(cat "$out/image-id"), $(( $(size "$out/base.tar") / 1048576 )) MiB"
echo "$out/base.tar"
