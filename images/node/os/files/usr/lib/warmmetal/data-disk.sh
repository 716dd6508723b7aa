#!/bin/sh
# containerd's store (/var/lib/containerd): a data disk where the server has one — a filesystem labelled
# WARMMETAL-DATA, or the blank disk named by warmmetal.data_disk= on the kernel command line, formatted and labelled
# here — so pulled images survive a reboot; else a tmpfs. Nothing else of the server persists.
set -eu
label=WARMMETAL-DATA
named=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^warmmetal\.data_disk=//p')
# udev's coldplug has run (the unit is ordered after it); a named disk gets a few seconds more to appear.
if [ -n "$named" ]; then
  for _ in $(seq 1 50); do [ -b "$named" ] && break; sleep 0.1; done
fi
disk=$(blkid -L "$label" 2>/dev/null || true)
if [ -z "$disk" ] && [ -n "$named" ]; then
  if [ ! -b "$named" ]; then
    echo "warmmetal: data disk $named does not exist; containerd's store is in RAM"
  elif [ -n "$(blkid -p -o value -s TYPE "$named" 2>/dev/null)" ] || [ "$(lsblk -n -o NAME "$named" | wc -l)" -gt 1 ]; then
    echo "warmmetal: data disk $named holds a filesystem or partitions and no $label label: left alone"
  else
    mkfs.ext4 -q -L "$label" "$named" && disk=$named
  fi
fi
mkdir -p /var/lib/containerd
if [ -n "$disk" ]; then
  mkdir -p /var/lib/warmmetal-data
  mount -o noatime "$disk" /var/lib/warmmetal-data
  mkdir -p /var/lib/warmmetal-data/containerd
  mount --bind /var/lib/warmmetal-data/containerd /var/lib/containerd
  echo "warmmetal: containerd's store on $disk (kept across reboots)"
else
  mount -t tmpfs -o mode=0711 tmpfs /var/lib/containerd
  echo "warmmetal: containerd's store in RAM"
fi
