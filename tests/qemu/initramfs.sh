#!/usr/bin/env bash
# Writes the guest's initramfs (an uncompressed cpio): busybox, the
# modules, a gpux built against libbpf >= 1.4 with every library it
# loads (copied from this machine: the guest runs the same userspace),
# the policies, and the guest's script as /init's work.
#   initramfs.sh OUT.cpio BUSYBOX GPUX_DIR MODULES_DIR GUEST_SCRIPT [FILE...]
# FILEs go into /qemu; the policies gpux attaches into /gpux/p (stdlib's
# and the tests' own, tests/... from the repository's root).
set -euo pipefail
out=$1 busybox=$2 gpux_dir=$3 mods=$4 guest=$5
shift 5
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,dev,proc,sys,tmp,run,lib/modules,gpux/p/tests/qemu,etc,qemu}
cp "$busybox" "$root/bin/busybox"
cp "$gpux_dir/gpux" "$gpux_dir/libgpux-host.so" "$root/gpux/"
cp "$mods"/*.ko "$root/lib/modules/"
if [ -d "$mods/decision" ]; then # the module's other build (KMOD_ABI=decision)
	mkdir -p "$root/lib/modules/decision"
	cp "$mods"/decision/*.ko "$root/lib/modules/decision/"
fi
cp "$top"/stdlib/policies/*.gpx "$root/gpux/p/"
cp -r "$top/tests/qemu/policies" "$root/gpux/p/tests/qemu/"
cp "$guest" "$root/guest.sh"
[ $# -eq 0 ] || cp "$@" "$root/qemu/"
# every library gpux and its module load, at the paths they load from
for f in "$gpux_dir/gpux" "$gpux_dir/libgpux-host.so"; do
	ldd "$f" | awk '/=>/ { print $3 } /^\t\/lib/ { print $1 }'
done | sort -u | while read -r lib; do
	[ -f "$lib" ] || continue
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
mkdir -p "$root/lib64"
cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"
cat >"$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t bpf bpf /sys/fs/bpf
mount -t tmpfs tmp /tmp
echo "qemu-guest: up $(uname -r)"
sh /guest.sh
echo "qemu-guest: exit $?"
poweroff -f
INIT
chmod +x "$root/init" "$root/bin/busybox"
(cd "$root" && find . | cpio -o -H newc --quiet) >"$out"
