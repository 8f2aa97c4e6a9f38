#!/bin/sh
# A ptxas for the fake Sanitizer (fake_sanitizer.c): the "cubin" of
# `ptxas -arch=sm_NN --compile-as-tools-patch IN -o OUT` is IN itself,
# which the fake loads as PTX. Refuses anything else.
[ "$#" -eq 5 ] && [ "$2" = --compile-as-tools-patch ] && [ "$4" = -o ] || {
	echo "fake_ptxas: unexpected arguments: $*" >&2
	exit 2
}
cp "$3" "$5"
