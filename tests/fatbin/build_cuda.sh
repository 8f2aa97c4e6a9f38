#!/usr/bin/env bash
# Builds the CUDA objects and programs the fatbin tests parse.
# Usage: build_cuda.sh NVCC SRCDIR OUTDIR
set -euo pipefail
nvcc=$1 src=$2 out=$3
mkdir -p "$out"
cd "$out"
k=$src/kernels.cu s=$src/second.cu
g="-gencode arch=compute_80,code=[sm_80,compute_80] -gencode arch=compute_90,code=sm_90"
# shellcheck disable=SC2086
{
	"$nvcc" $g -c "$k" -o k_def.o
	"$nvcc" $g -no-compress -c "$k" -o k_none.o
	"$nvcc" $g -Xfatbin -compress-all -c "$k" -o k_all.o
	"$nvcc" $g -compress-mode=size -c "$k" -o k_size.o
	"$nvcc" $g -compress-mode=speed -c "$k" -o k_speed.o
	"$nvcc" $g -compress-mode=speed -Xfatbin -compress-all -c "$k" -o k_speed_all.o
	"$nvcc" -gencode arch=compute_80,code=sm_80 -c "$k" -o k_sass.o
	# the register counts ptxas reports, the oracle for the cubin's
	"$nvcc" $g -Xptxas -v -c "$k" -o k_v.o 2>ptxas_v.txt
	"$nvcc" $g -rdc=true -c "$k" -o k_rdc.o
	"$nvcc" $g "$k" "$s" -o two
	"$nvcc" $g -rdc=true "$k" "$s" -o two_rdc
	# The oracle for extracted PTX: what nvcc emits for compute_80.
	"$nvcc" -ptx -arch=compute_80 "$k" -o k80.ptx
	"$nvcc" -ptx -arch=compute_80 "$s" -o second80.ptx
}
touch stamp
