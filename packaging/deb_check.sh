#!/usr/bin/env bash
# The Debian package on a clean Debian 12: builds it (a Release build and
# cpack), makes a fresh bookworm root with debootstrap (kept in ROOT for
# the next run), installs the .deb there with apt (which fetches its
# dependencies) and, chrooted, counts pthread_create calls of a parallel
# sort with a uprobe, lists probes and runs a stdlib policy in the
# simulator. Needs root and the network (debootstrap, apt); not part of
# the test suite (a build step downloads nothing). Prints PASS or FAIL
# lines; exit 1 on a failure.
#   packaging/deb_check.sh [BUILD_DIR]   env: ROOT (default /tmp/gpux-deb-root),
#                                        MIRROR (default deb.debian.org)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build-deb}
root=${ROOT:-/tmp/gpux-deb-root}
mirror=${MIRROR:-http://deb.debian.org/debian}
fails=0
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1${2:+: $2}"; fails=$((fails + 1)); }
[ "$(id -u)" = 0 ] || { echo "FAIL: needs root (debootstrap, chroot, bpf)"; exit 1; }

# a build directory of one's own is reused as configured (a packager's)
mkdir -p "$build"
{ [ -f "$build/CMakeCache.txt" ] ||
	cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
		>"$build/deb_check.cmake.log" 2>&1; } &&
	cmake --build "$build" -j"$(nproc)" >"$build/deb_check.build.log" 2>&1 &&
	(cd "$build" && cpack >deb_check.cpack.log 2>&1) ||
	{ tail -20 "$build"/deb_check.*.log; echo "FAIL: building the package"; exit 1; }
deb=$(ls "$build"/gpux_*_amd64.deb | head -1)
pass "built $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB; $(dpkg-deb -f "$deb" Depends))"

if [ ! -x "$root/bin/sh" ]; then
	debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 ||
		{ tail -20 "$root.debootstrap.log"; echo "FAIL: debootstrap"; exit 1; }
fi
pass "a fresh Debian 12 root in $root ($(cat "$root/etc/debian_version"))"
mounted=()
for m in proc sys dev; do
	mountpoint -q "$root/$m" || { mount --rbind "/$m" "$root/$m" && mounted+=("$root/$m"); }
done
cleanup() { for m in "${mounted[@]}"; do umount -R "$m" 2>/dev/null; done; }
trap cleanup EXIT
cp "$deb" "$root/tmp/gpux.deb"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }
if in_root sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq /tmp/gpux.deb' \
	>"$root.apt.log" 2>&1; then
	pass "apt installed it with its dependencies"
else
	tail -20 "$root.apt.log"
	fail "apt install"
fi

in_root sh -c 'seq 1 2000000 | sort -R > /tmp/nums.txt'
out=$(in_root gpux -e 'uprobe:libc:pthread_create { @ = count(); }' \
	-c 'sort --parallel=4 -S 200M -o /dev/null /tmp/nums.txt' 2>&1)
n=$(sed -n 's/^@: //p' <<<"$out")
[ -n "$n" ] && [ "$n" -gt 0 ] && pass "uprobe:libc:pthread_create counted $n calls of a parallel sort" ||
	fail "uprobe:libc:pthread_create" "$out"
out=$(in_root gpux -l 'gdev:kernel_*' 2>&1)
[ "$out" = "$(printf 'gdev:kernel_entry\ngdev:kernel_exit')" ] && pass "gpux -l" || fail "gpux -l" "$out"
out=$(in_root gpux --sim hotcold /usr/share/gpux/policies/eviction_lfu.gpx 2>&1 | grep -v '^@')
grep -qE 'eviction_lfu.gpx +[0-9]+ ' <<<"$out" && pass "--sim with an installed policy" ||
	fail "--sim" "$out"
out=$(in_root man -w gpux 2>&1)
[ -n "$out" ] && [ -e "$root$out" ] && pass "man gpux: $out" ||
	{ [ -e "$root/usr/share/man/man8/gpux.8" ] && pass "gpux.8 installed (no man-db in minbase)" ||
		fail "the manual page"; }
exit $((fails > 0))
