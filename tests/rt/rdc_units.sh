#!/bin/sh
# Relocatable device code as a program carries it: each unit's fatbin
# (its __nv_relfatbin section: relocatable SASS and PTX) and nvlink's
# linked fatbin (the device link's .nv_fatbin), for drv_app's rdc mode.
#   rdc_units.sh NVCC SRCDIR OUTDIR
set -e
nvcc=$1 src=$2 out=$3
g="-gencode arch=compute_90,code=[sm_90,compute_90]"
for u in rdc_main rdc_lib; do
	"$nvcc" $g -rdc=true -c "$src/$u.cu" -o "$out/$u.o"
	objcopy -O binary --only-section=__nv_relfatbin "$out/$u.o" "$out/$u.fatbin"
done
"$nvcc" $g -dlink "$out/rdc_main.o" "$out/rdc_lib.o" -o "$out/rdc_dlink.o"
objcopy -O binary --only-section=.nv_fatbin "$out/rdc_dlink.o" "$out/rdc_linked.fatbin"
