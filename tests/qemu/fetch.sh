#!/usr/bin/env bash
# What the kernel VM tests need, from Debian (scripts/setup.sh runs this):
# QEMU, pahole (module BTF), busybox and cpio from bookworm; from
# bookworm-backports the 6.12 cloud kernel (BTF, module BTF), its
# headers and kbuild, and libbpf 1.4 (struct_ops in module BTF), which
# are unpacked into a cache folder rather than installed, so this
# machine keeps its own kernel and libbpf. Idempotent.
#   tests/qemu/fetch.sh        env: GPUX_QEMU_DIR (default below)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/qemu/paths.sh
. "$here/paths.sh"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

pkgs=(qemu-system-x86 dwarves busybox-static cpio)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
bp=/etc/apt/sources.list.d/gpux-backports.sources
if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	printf '%s\n' 'Types: deb' 'URIs: http://deb.debian.org/debian' 'Suites: bookworm-backports' \
		'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' |
		$sudo tee "$bp" >/dev/null
	missing+=(update)
fi
if [ ${#missing[@]} -gt 0 ]; then
	$sudo apt-get update -qq
	pk=()
	for p in "${missing[@]}"; do [ "$p" = update ] || pk+=("$p"); done
	[ ${#pk[@]} -eq 0 ] || DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${pk[@]}"
fi

# the newest 6.12 cloud kernel of bookworm-backports, and its packages
abi=$(apt-cache depends -t bookworm-backports linux-image-cloud-amd64 2>/dev/null |
	sed -n 's/.*Depends: linux-image-\(6\.[0-9.]*+deb12\)-cloud-amd64.*/\1/p' | head -n 1)
[ -n "$abi" ] || { echo "fetch.sh: no bookworm-backports kernel found (apt-get update?)" >&2; exit 1; }
if [ -f "$GPUX_QEMU_DIR/abi" ] && [ "$(cat "$GPUX_QEMU_DIR/abi")" = "$abi" ] &&
	[ -f "$GPUX_QEMU_DIR/root/usr/lib/x86_64-linux-gnu/libbpf.a" ]; then
	echo "fetch.sh: kernel $abi and libbpf already in $GPUX_QEMU_DIR"
	exit 0
fi
rm -rf "$GPUX_QEMU_DIR"
mkdir -p "$GPUX_QEMU_DIR/debs" "$GPUX_QEMU_DIR/root"
(cd "$GPUX_QEMU_DIR/debs" && apt-get download -q \
	"linux-image-$abi-cloud-amd64-unsigned" "linux-headers-$abi-cloud-amd64" \
	"linux-headers-$abi-common" "linux-kbuild-${abi%%+*}+deb12" \
	libbpf1/bookworm-backports libbpf-dev/bookworm-backports bpftool/bookworm-backports \
	2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
for d in "$GPUX_QEMU_DIR"/debs/*.deb; do dpkg-deb -x "$d" "$GPUX_QEMU_DIR/root"; done
rm -rf "$GPUX_QEMU_DIR/debs"
# the headers' Makefile names its common half by its installed path
hdr=$GPUX_QEMU_DIR/root/usr/src/linux-headers-$abi-cloud-amd64
sed -i "s|^include /usr/src/|include $GPUX_QEMU_DIR/root/usr/src/|" "$hdr/Makefile"
[ -f "$GPUX_QEMU_DIR/root/usr/lib/x86_64-linux-gnu/libbpf.a" ] ||
	{ echo "fetch.sh: libbpf-dev from bookworm-backports did not unpack" >&2; exit 1; }
echo "$abi" >"$GPUX_QEMU_DIR/abi"
echo "fetch.sh: kernel $abi, its headers and libbpf $(ls "$GPUX_QEMU_DIR"/root/usr/lib/x86_64-linux-gnu/libbpf.so.1.* | sed 's/.*libbpf\.so\.//') in $GPUX_QEMU_DIR"
