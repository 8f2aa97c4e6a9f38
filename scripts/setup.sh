#!/usr/bin/env bash
# Install what gpux needs on Debian 12, build it, and run a first example.
set -euo pipefail
cd "$(dirname "$0")/.."

# bpftrace: tests/conformance runs it beside gpux and compares outputs;
# libmicrohttpd and libcurl: --export; prometheus and python3: tests/export;
# zsh: tests/install completes with the installed zsh completion
pkgs=(build-essential cmake flex bison libreadline-dev valgrind llvm-16-dev libbpf-dev libelf-dev libdw-dev zlib1g-dev libzstd-dev bpftrace systemtap-sdt-dev
	libmicrohttpd-dev libcurl4-openssl-dev prometheus python3 zsh)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi

# the kernel VM tests' QEMU, kernel, headers and libbpf 1.4 (tests/qemu)
bash tests/qemu/fetch.sh

# the developer build: warnings are errors (GPUX_WERROR)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUX_WERROR=ON >/dev/null
make -C build -j"$(nproc)" >/dev/null
echo "built build/cli/gpux"

# A first example: check a device one-liner and show its typed tree.
build/cli/gpux -d types -e 'gdev:kernel_exit { @[kernel] = count(); }'
