# Runs inside the kernel VM (busybox sh, from the initramfs's /init):
# loads the module, runs every workload with no policy, then under each
# case's policy attached by gpux (a fresh attach per workload), then
# again with none (detached: the
# default path), then detaches a policy in the middle of a run. What it
# prints, read back by run.sh from the serial console:
#   qemu: module loaded | qemu: insmod failed
#   qemu-case N rc=RC            (N: a line of cases, 0 none, d detached;
#                                 DN: a line of cases, the decision module)
#   qemu-result N W KEY VALUE    (W: a line of workloads; the memory model)
#   qemu-sched N W KEY VALUE     (its tenants through the scheduling model)
#   qemu-out N TEXT              gpux's output, when it failed
#   qemu-midrun KEY VALUE
#   qemu-kprobe rc RC | qemu-kprobe LINE   (gpux's output with kprobes)
run=/sys/kernel/debug/gpux_uvm/run
res=/sys/kernel/debug/gpux_uvm/result
if insmod /lib/modules/nvidia_uvm.ko && insmod /lib/modules/nvidia.ko; then
	echo "qemu: module loaded"
else echo "qemu: insmod failed"; exit 1; fi
[ -f /sys/kernel/btf/nvidia_uvm ] && [ -f /sys/kernel/btf/nvidia ] && echo "qemu: module btf"
cat >/tmp/workloads.sh <<'EOF'
# workloads.sh N [W]: each workload (or the W-th alone) through the
# module, its counts tagged
w=0
while read -r spec; do
	w=$((w + 1))
	[ -n "$2" ] && [ "$2" != $w ] && continue
	echo "$spec" >/sys/kernel/debug/gpux_uvm/run
	sed "s/^/qemu-result $1 $w /" /sys/kernel/debug/gpux_uvm/result
	echo "$spec" >/sys/kernel/debug/gpux_sched/run
	sed "s/^/qemu-sched $1 $w /" /sys/kernel/debug/gpux_sched/result
done </qemu/workloads
EOF
sh /tmp/workloads.sh 0
nw=$(grep -c . /qemu/workloads)
echo "qemu-case 0 rc=0"
cd /gpux || exit 1
# cases TAG: each policy of /qemu/cases attached, its runs tagged TAGN
cases() {
	tag=$1 n=0
	while IFS='|' read -r files args rest; do
		case $files in '' | '#'*) continue ;; esac
		n=$((n + 1))
		set -f
		# shellcheck disable=SC2046 # split on purpose: the files, the arguments
		set -- $(echo "$files" | tr '+' ' ' | sed 's|\([^ ]*\)|/gpux/p/\1|g') $(echo "$args" | tr ':' ' ')
		set +f
		# a policy of its own for each workload, as --sim runs it: its
		# maps (keyed by chunk pointers, which the next run reuses) do
		# not carry over
		rc=0 w=0
		while [ $w -lt "$nw" ] && [ $rc = 0 ]; do
			w=$((w + 1))
			./gpux -q -c "sh /tmp/workloads.sh $tag$n $w" "$@" >/tmp/out 2>&1
			rc=$?
			grep -E '^qemu-(result|sched)' /tmp/out
		done
		echo "qemu-case $tag$n rc=$rc"
		[ $rc = 0 ] || grep -vE '^qemu-(result|sched)' /tmp/out | sed "s/^/qemu-out $tag$n /"
	done </qemu/cases
}
cases ''
# detached: the module's default path again
sh /tmp/workloads.sh d
echo "qemu-case d rc=0"
# a policy detached while a run goes on: the run ends with every access
# counted, the kernel in charge from the detach on
./gpux /gpux/p/eviction_mru.gpx >/tmp/mid.out 2>&1 &
g=$!
i=0
while [ $i -lt 600 ] && ! grep -q Attaching /tmp/mid.out; do sleep 0.1; i=$((i + 1)); done
grep -q Attaching /tmp/mid.out && echo "qemu-midrun attached 1"
(echo "$(cat /qemu/midrun)" >$run; echo "qemu-midrun write_rc $?") &
w=$!
sleep 1
kill -INT $g
wait $g
echo "qemu-midrun gpux_rc $?"
wait $w
sed 's/^/qemu-midrun /' $res
echo "$(cat /qemu/midrun)" >$run
sed 's/^/qemu-midrun-default /' $res
# kprobes (providers/kprobe.c) on the module's own functions, over the
# first workload: by MODULE:FUNCTION, its return, a glob, and a byte
# into a function (/qemu/kprobes: its offset, from the build's objdump),
# beside a policy that counts its hooks (the module calls them, and so
# those functions, only with a policy attached)
off=$(cat /qemu/kprobes)
./gpux -e "kprobe:nvidia_uvm:kmod_uvm_prefetch { @entry = count(); }
	kretprobe:kmod_uvm_prefetch { @ret = count(); }
	k:kmod_uvm_pref* { @glob[func, probe] = count(); }
	kprobe:uvm_perf_prefetch_get_hint_va_block+$off { @off = count(); }
	kr:kmod_uvm_access { @kaccess = count(); }
	gpu_mem:prefetch { @prefetch = count(); }
	gpu_mem:access { @access = count(); }" -c "sh /tmp/workloads.sh k 1" >/tmp/k.out 2>&1
echo "qemu-kprobe rc $?"
grep -vE '^qemu-(result|sched)' /tmp/k.out | sed 's/^/qemu-kprobe /'
# gpu_ext's newest generation: the module again, built with decision
# contexts (KMOD_ABI=decision), every case again, tagged D
if rmmod nvidia_uvm && insmod /lib/modules/decision/nvidia_uvm.ko; then
	echo "qemu: decision module loaded"
	cases D
fi
exit 0
