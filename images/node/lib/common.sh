# Helpers the node image's build scripts share (sourced).
log() { echo "node-image: $*" >&2; }
# apt, one at a time across WarmMetal's build scripts (CI runs this build beside the Kubernetes one).
apt_get() { flock /var/lock/warmmetal-apt.lock apt-get "$@"; }
# sha256 of files and directory trees (names, modes and contents), for cache keys.
tree_hash() {
  for p in "$@"; do
    if [ -d "$p" ]; then
      (cd "$p" && find . \( -type f -o -type l \) -print0 | LC_ALL=C sort -z \
        | xargs -0r sh -c 'for f; do stat -c "%n %a" "$f"; if [ -L "$f" ]; then readlink "$f"; else sha256sum < "$f"; fi; done' _)
    else
      stat -c '%a' "$p"; sha256sum < "$p"
    fi
  done | sha256sum | cut -c1-16
}
# dir out.squashfs: reproducible (fixed times, sorted, no append); zstd: xz is 12 % smaller but reads several times
# slower, which under emulation cost seconds of every boot.
squash() {
  mksquashfs "$1" "$2.tmp" -noappend -quiet -no-progress -comp zstd -Xcompression-level 19 -b 1M -processors "$(nproc)" \
    -reproducible >&2  # SOURCE_DATE_EPOCH: the file system's and every file's time
  mv "$2.tmp" "$2"
}
size() { stat -c %s "$1"; }
sha() { sha256sum "$1" | cut -d' ' -f1; }
