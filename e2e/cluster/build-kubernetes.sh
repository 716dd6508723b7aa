#!/usr/bin/env bash
# Builds the Kubernetes server binaries the real-cluster tests run (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet, kubeadm) from Debian's `kubernetes` source package, and installs the Debian packages the
# cluster fixture starts beside them (etcd, containerd, runc, CNI plugins, iptables, conntrack, …). Also the pod
# sandbox's `pause` from the same tree (build/pause: static C, its tag in pause.tag), which the node image carries as
# its sandbox image: no registry serves one here.
#
# No registry here serves Kubernetes server binaries; Debian's source package carries the whole tree with vendor/
# and Debian's Go builds it offline. The kubelet is built with the upstream `dockerless` tag (KEP-1547): without it,
# cAdvisor's Docker factory asks a Docker daemon for its root directory five times, a second apart, at every kubelet
# start on a host without one (google/cadvisor#3175) — 5 s of every join; WarmMetal's nodes run containerd through
# the CRI, and the tag also leaves dockershim out, so `--container-runtime=docker` fails at start instead of
# half-working. Kubernetes itself dropped the factory later (kubernetes/kubernetes#139870). Patches in patches/ are
# applied in name order. The binaries are cached outside the work tree by the source package's version and a key of
# the patches and the kubelet's tags (WARMMETAL_KUBE_CACHE, default
# /var/cache/warmmetal/kubernetes/<version>+wm.<key>/bin, its BUILD file saying what went in), so only a machine's
# first run pays the build (~10 min on 2 cores); later runs print the cached directory at once.
#
# Prints the directory holding the binaries on its last line. Run as root (apt-get).
set -euo pipefail

cache_root=${WARMMETAL_KUBE_CACHE:-/var/cache/warmmetal/kubernetes}
here=$(cd "$(dirname "$0")" && pwd)
kubelet_tags=dockerless
patches=("$here"/patches/*.patch)   # applied in name order; none is fine
[ -e "${patches[0]}" ] || patches=()
binaries=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubeadm)
packages=(golang-go rsync dpkg-dev gcc libc6-dev etcd-server containerd runc containernetworking-plugins iptables conntrack socat
  ebtables ethtool iproute2 util-linux mount openssl golang-github-modern-go-reflect2-dev)

log() { echo "build-kubernetes: $*" >&2; }
# apt, one at a time across WarmMetal's build scripts (CI runs the node image's build beside this one).
apt_get() { flock /var/lock/warmmetal-apt.lock apt-get "$@"; }

missing=()
for p in "${packages[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p"); done

# Debian's sources: a deb-src twin of the main entry (same URI and keyring; apt refuses a list without Signed-By).
src_list=/etc/apt/sources.list.d/warmmetal-src.sources
need_update=0
if [ ! -f "$src_list" ]; then
  cat > "$src_list" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  need_update=1
fi
if [ ${#missing[@]} -gt 0 ] || [ $need_update = 1 ] || ! apt-cache showsrc kubernetes >/dev/null 2>&1; then
  log "installing ${missing[*]:-nothing}"
  apt_get update -qq
  [ ${#missing[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive apt_get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

version=$(apt-cache showsrc kubernetes | awk '/^Version:/ {print $2; exit}')
[ -n "$version" ] || { log "Debian has no kubernetes source package"; exit 1; }
# What the binaries are built from besides Debian's source: our patches and the kubelet's build tags. A change to
# either is a new cache directory (and, through the kubelet's hash, a new node image).
build_key=$({ for p in "${patches[@]}"; do sha256sum < "$p"; done; echo "kubelet-tags=$kubelet_tags"; } \
  | sha256sum | cut -c1-12)
out="$cache_root/$version+wm.$build_key"

# pause, as build/pause/Makefile builds it (-Os -static), into DIR; its tag (the Makefile's TAG) into DIR/pause.tag.
build_pause() { # tree dir
  local tag
  tag=$(awk '$1 == "TAG" && $2 == "=" {print $3; exit}' "$1/build/pause/Makefile")
  gcc -Os -Wall -Werror -static -DVERSION="v$tag-debian" -o "$2/pause" "$1/build/pause/linux/pause.c"
  echo "$tag" > "$2/pause.tag"
}

if [ -f "$out/bin/.complete" ]; then
  if [ ! -x "$out/bin/pause" ]; then
    # A cache from before pause was built: only its source file is needed.
    log "adding pause to $out/bin"
    work="$out/pause-src"
    rm -rf "$work" && mkdir -p "$work"
    (cd "$work" && apt_get source -qq --download-only kubernetes >&2 && tar -xzf kubernetes_*.orig.tar.gz --wildcards \
      --strip-components=1 '*/build/pause')
    build_pause "$work" "$out/bin"
    rm -rf "$work"
  fi
  echo "$out/bin"
  exit 0
fi

log "building Kubernetes $version into $out (first run on this machine: ~10 minutes)"
mkdir -p "$out"
work="$out/src"
rm -rf "$work" "$out/bin" "$out/bin.tmp"
mkdir -p "$work"
(cd "$work" && apt_get source -qq --download-only kubernetes >&2 && dpkg-source -x --no-check kubernetes_*.dsc tree >&2)
tree="$work/tree"

# The vendored reflect2 v1.0.1 crashes every binary built with Go >= 1.18 ("fatal error: fault" in mapiternext on the
# first JSON encode of a map); Debian's v1.0.2 does not.
rm -rf "$tree/vendor/github.com/modern-go/reflect2"
cp -r /usr/share/gocode/src/github.com/modern-go/reflect2 "$tree/vendor/github.com/modern-go/reflect2"
rm -f "$tree/vendor/github.com/modern-go/reflect2/go.mod"
for p in "${patches[@]}"; do
  log "applying $(basename "$p")"
  patch -d "$tree" -p1 --forward --batch < "$p" >&2
done

# As debian/rules builds it: a GOPATH whose k8s.io/kubernetes is the tree, cgo off. The Go build cache lives in the
# cache too, so a rebuild (say, after a failed first run) takes minutes, not ten.
export GOPATH="$tree/.go" GOCACHE="$cache_root/go-build" CGO_ENABLED=0 GOFLAGS=-mod=vendor GO111MODULE=on
mkdir -p "$tree/.go/src/k8s.io"
ln -sfn ../../.. "$tree/.go/src/k8s.io/kubernetes"
build() {
  (cd "$tree/.go/src/k8s.io/kubernetes" \
    && make WHAT="cmd/kube-apiserver cmd/kube-controller-manager cmd/kube-scheduler cmd/kubeadm" >&2 \
    && GOFLAGS="-mod=vendor -tags=$kubelet_tags" make WHAT=cmd/kubelet >&2)
}
if ! build; then
  # A failed first run can leave zero-byte generator binaries behind; start the output over once.
  log "build failed once; retrying from a clean _output"
  rm -rf "$tree/_output"
  build
fi

mkdir -p "$out/bin.tmp"
for b in "${binaries[@]}"; do
  cp "$tree/_output/local/bin/linux/amd64/$b" "$out/bin.tmp/$b"
  # kubeadm says its version as a subcommand, the others as a flag.
  { "$out/bin.tmp/$b" --version || "$out/bin.tmp/$b" version -o short; } >/dev/null 2>&1 || { log "$b does not run"; exit 1; }
done
build_pause "$tree" "$out/bin.tmp"
# A kubelet built with cAdvisor's Docker factory would still spend 5 s at every start: refuse it.
if grep -q 'cadvisor/container/docker\.RootDir' "$out/bin.tmp/kubelet"; then
  log "the kubelet still carries cAdvisor's Docker factory (tags: $kubelet_tags)"
  exit 1
fi
# What went in, for the node image and for people.
{
  echo "debian-source=$version"
  echo "kubelet-tags=$kubelet_tags"
  for p in "${patches[@]}"; do echo "patch=$(basename "$p") $(sha256sum < "$p" | cut -c1-12)"; done
} > "$out/bin.tmp/BUILD"
# What the agent's join should know about this kubelet (the node image passes it on in its kubernetes.env, the e2e
# tier's hosts in their agent's environment).
{
  [ ! -e "$here/patches/0001-kubelet-fast-status-until-ready.patch" ] || echo "WARMMETAL_KUBELET_FAST_STATUS=true"
} > "$out/bin.tmp/kubelet.env"
touch "$out/bin.tmp/.complete"
mv "$out/bin.tmp" "$out/bin"
rm -rf "$work"
log "built $(du -sh "$out/bin" | cut -f1) of binaries"
echo "$out/bin"
