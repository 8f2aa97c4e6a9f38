# Where the kernel VM tests keep Debian's kernel, headers and libbpf
# (fetch.sh writes it, run.sh reads it); sourced.
if [ -z "${GPUX_QEMU_DIR:-}" ]; then
	if [ -w /var/cache ]; then GPUX_QEMU_DIR=/var/cache/gpux-qemu
	else GPUX_QEMU_DIR=${XDG_CACHE_HOME:-$HOME/.cache}/gpux-qemu; fi
fi
export GPUX_QEMU_DIR
