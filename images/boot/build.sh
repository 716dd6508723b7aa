#!/bin/sh
# Builds the WarmMetal agent boot image from Debian's packages and the agent jar:
#   OUT/vmlinuz     Debian's kernel (the version linux-image-amd64 names)
#   OUT/initrd.img  busybox, the virtio network drivers, a jlinked Java runtime with a CDS archive, the agent jar
#                   and /init: network by DHCP, then the agent, kept running, enrolling with the API URL, CA pin
#                   and token the kernel command line carries (warmmetal.api=, warmmetal.ca_pin=, warmmetal.token=).
# Usage: images/boot/build.sh [OUT]   (default: warmmetal-data/boot, where the API serves /v1/boot/files from)
# Needs: root or fakeroot-free apt-get download; packages busybox-static cpio (installed if missing); a JDK 17 with
# jlink. Takes 10–60 s (the kernel package is downloaded); the initrd is about 57 MB.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=$(mkdir -p "${1:-warmmetal-data/boot}" && cd "${1:-warmmetal-data/boot}" && pwd)
jar=${WARMMETAL_AGENT_JAR:-$repo/agent/target/warmmetal-agent.jar}
[ -f "$jar" ] || { echo "no agent jar at $jar: mvn -B package -DskipTests first" >&2; exit 2; }
apt_ready() { [ -n "$(ls /var/lib/apt/lists/ 2>/dev/null | grep -v -e lock -e partial)" ] || apt-get update -qq; }
for tool in busybox cpio; do
  command -v $tool >/dev/null || { apt_ready; apt-get install -y -qq --no-install-recommends busybox-static cpio; }
done
java_home=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root"/bin "$root"/sbin "$root"/etc "$root"/proc "$root"/sys "$root"/dev "$root"/run "$root"/tmp \
  "$root"/var/lib/warmmetal-agent "$root"/opt/warmmetal "$root"/lib/modules

# The kernel and the virtio network modules (devtmpfs, the initramfs, the serial console are built in).
apt_ready
kpkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/ {print $2; exit}')
[ -n "$kpkg" ] || { echo "apt knows no linux-image-amd64: is a Debian mirror configured?" >&2; exit 2; }
kver=${kpkg#linux-image-}
(cd "$work" && apt-get download -qq "$kpkg")
dpkg-deb -x "$work"/"$kpkg"_*.deb "$work/kpkg"
cp "$work/kpkg/boot/vmlinuz-$kver" "$out/vmlinuz"
modules="virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci failover net_failover virtio_net"
modules="$modules rng-core virtio-rng"  # entropy from the host, where offered: the JVM's key generation waits for it
for m in $modules; do
  find "$work/kpkg/lib/modules/$kver" -name "$m.ko" -exec cp {} "$root/lib/modules/" \;
done
echo "$modules" > "$root/lib/modules/load-order"

# Busybox for the shell, mounts, DHCP and the rest.
cp "$(command -v busybox)" "$root/bin/busybox"
for applet in $("$root/bin/busybox" --list); do
  [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done

# A small Java runtime: the modules the agent uses (jdeps, plus what it loads by reflection: XML for logback's
# configuration, EC for its keys and TLS, JNDI and JMX that logback and Netty look for), with a CDS archive.
"$java_home/bin/jlink" --add-modules \
  java.base,java.logging,jdk.unsupported,java.xml,java.naming,java.management,jdk.crypto.ec,java.sql \
  --strip-debug --no-header-files --no-man-pages --output "$root/opt/warmmetal/jre"
"$root/opt/warmmetal/jre/bin/java" -Xshare:dump >/dev/null 2>&1 || true
cp "$jar" "$root/opt/warmmetal/warmmetal-agent.jar"

# The shared libraries the runtime needs, at the paths it looks for them.
for f in "$root/opt/warmmetal/jre/bin/java" "$root"/opt/warmmetal/jre/lib/*.so "$root"/opt/warmmetal/jre/lib/server/*.so; do
  ldd "$f" 2>/dev/null | awk '/=> \// {print $3} /^\t\/.*ld-linux/ {print $1}'
done | sort -u | while read -r lib; do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
for lib in /lib/x86_64-linux-gnu/libnss_files.so.2 /lib/x86_64-linux-gnu/libnss_dns.so.2; do
  [ -f "$lib" ] && mkdir -p "$root$(dirname "$lib")" && cp -L "$lib" "$root$lib"
done
mkdir -p "$root/lib64" && cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$root/etc/passwd"
printf 'root:x:0:\n' > "$root/etc/group"
printf 'hosts: files dns\n' > "$root/etc/nsswitch.conf"
printf '127.0.0.1 localhost\n' > "$root/etc/hosts"

install -m 0755 "$here/init" "$root/init"
install -m 0755 "$here/udhcpc.script" "$root/etc/udhcpc.script"

(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$out/initrd.img"
echo "built $out/vmlinuz ($kver) and $out/initrd.img ($(du -h "$out/initrd.img" | cut -f1))"
