#!/usr/bin/env bash
# Run every test that needs no GPU: the normal build; a Release build
# (-O3 warns where -O2 does not) without libbpf, which runs only its own
# tests (tests/nolibbpf); then the whole suite again under
# AddressSanitizer and UBSan; then driver policies in a kernel VM
# (tests/qemu/run.sh; GPUX_QEMU=skip leaves it out). Warnings are errors
# here.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
# tracepoint formats come from tracefs; as root, mount it where a
# minimal system has not (tests/diag reads them)
if [ "$(id -u)" = 0 ] && [ -d /sys/kernel/tracing ] && [ -z "$(ls -A /sys/kernel/tracing)" ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUX_WERROR=ON >/dev/null
make -C build -j"$jobs" >/dev/null
(cd build && ctest -j"$jobs" --output-on-failure)

cmake -S . -B build-nolibbpf -DCMAKE_BUILD_TYPE=Release -DGPUX_WERROR=ON \
	-DGPUX_WITH_LIBBPF=OFF >/dev/null
make -C build-nolibbpf -j"$jobs" >/dev/null
(cd build-nolibbpf && ctest -j"$jobs" -R '^nolibbpf\.' --no-tests=error --output-on-failure)

cmake -S . -B build-asan -DGPUX_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DGPUX_WERROR=ON >/dev/null
make -C build-asan -j"$jobs" >/dev/null
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest -j"$jobs" --output-on-failure)

if [ "${GPUX_QEMU:-}" != skip ]; then
	bash tests/qemu/run.sh build-qemu
fi
