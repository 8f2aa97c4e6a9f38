#!/usr/bin/env bash
# Driver policies on a real kernel: builds kmod/ against Debian's 6.12
# headers and a gpux against libbpf 1.4 (both from tests/qemu/fetch.sh),
# boots that kernel in QEMU (TCG, under a hard timeout) with them in an
# initramfs, and there attaches every policy of ./cases as struct_ops
# and runs every workload of ./workloads through the module
# (guest.sh). Each run's counts must equal gpux --sim's on the same
# workload and policy, exactly; with no policy, after a detach, and
# under policies that return nonsense or spin, the default's. Prints
# PASS/FAIL lines and a summary; exit 1 on any FAIL.
#   tests/qemu/run.sh [BUILD_DIR]     (default build-qemu)
#   env: GPUX_QEMU_DIR (fetch.sh's), QEMU_TIMEOUT (default 600 s)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=tests/qemu/paths.sh
. "$here/paths.sh"
out=${1:-$top/build-qemu}
mkdir -p "$out"
out=$(cd "$out" && pwd)
t0=$(date +%s)
R=$GPUX_QEMU_DIR/root
abi=$(cat "$GPUX_QEMU_DIR/abi" 2>/dev/null) ||
	{ echo "FAIL: no kernel in $GPUX_QEMU_DIR: run tests/qemu/fetch.sh (scripts/setup.sh does)"; exit 1; }
kernel=$R/boot/vmlinuz-$abi-cloud-amd64
headers=$R/usr/src/linux-headers-$abi-cloud-amd64
busybox=$(command -v busybox) || { echo "FAIL: no busybox (apt-get install busybox-static)"; exit 1; }
fails=0
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1${2:+: $2}"; fails=$((fails + 1)); }

# gpux for the guest: libbpf 1.4 linked in (the module's struct_ops are
# found in module BTF from libbpf 1.4 on)
cmake -S "$top" -B "$out/gpux" -DCMAKE_BUILD_TYPE=Release -DGPUX_WERROR=ON \
	-DGPUX_BPF_LIB="$R/usr/lib/x86_64-linux-gnu/libbpf.so.1" \
	-DGPUX_BPF_ARCHIVE="$R/usr/lib/x86_64-linux-gnu/libbpf.a" \
	-DCMAKE_C_FLAGS="-I$R/usr/include" >"$out/cmake.log" 2>&1 &&
	cmake --build "$out/gpux" -j"$(nproc)" --target gpux gpux-host >"$out/build.log" 2>&1 ||
	{ tail -20 "$out/build.log"; echo "FAIL: building gpux for the guest"; exit 1; }
gpux=$out/gpux/cli/gpux
# the module, out of the source tree (it builds sim/'s sources too)
rm -rf "$out/src" && mkdir -p "$out/src" && cp -r "$top/kmod" "$top/sim" "$out/src/"
make -C "$out/src/kmod" KDIR="$headers" >"$out/kmod.log" 2>&1 ||
	{ tail -20 "$out/kmod.log"; echo "FAIL: building kmod/"; exit 1; }
# and nvidia_uvm again with decision contexts, in a copy of its own
rm -rf "$out/src-decision" && mkdir -p "$out/src-decision" &&
	cp -r "$top/kmod" "$top/sim" "$out/src-decision/" &&
	make -C "$out/src-decision/kmod" KDIR="$headers" KMOD_ABI=decision >"$out/kmod-decision.log" 2>&1 ||
	{ tail -20 "$out/kmod-decision.log"; echo "FAIL: building kmod/ with KMOD_ABI=decision"; exit 1; }
mkdir -p "$out/src/kmod/decision" && cp "$out/src-decision/kmod/nvidia_uvm.ko" "$out/src/kmod/decision/"
pass "kmod/ builds against linux-headers-$abi, with lists and with decision contexts"
grep -v '^#' "$here/cases" | grep -v '^$' >"$out/cases"
# a kprobe at a byte into a function: its third instruction (past
# endbr64 and the ftrace call), from the module as built
read -r kbase kinsn < <(objdump -d --no-show-raw-insn "$out/src/kmod/nvidia_uvm.ko" | awk '
	/<uvm_perf_prefetch_get_hint_va_block>:$/ { base = $1; f = 1; next }
	f && /^ *[0-9a-f]+:/ { if (++n == 3) { sub(":", "", $1); print base, $1; exit } }')
[ -n "${kinsn:-}" ] || { echo "FAIL: no offset into uvm_perf_prefetch_get_hint_va_block"; exit 1; }
echo $((0x$kinsn - 0x$kbase)) >"$out/kprobes"
bash "$here/initramfs.sh" "$out/initramfs.cpio" "$busybox" "$out/gpux/cli" "$out/src/kmod" \
	"$here/guest.sh" "$out/cases" "$here/workloads" "$here/midrun" "$out/kprobes" ||
	{ echo "FAIL: writing the initramfs"; exit 1; }
tb=$(date +%s)
# cx16 off: this QEMU's TCG mis-emulates SLUB's cmpxchg16b fast path
# (guests without any module double-fault in kmem_cache_alloc); an oops
# ends the VM instead of hanging it to the timeout; slub_debug catches
# the module's own memory errors
timeout "${QEMU_TIMEOUT:-600}" qemu-system-x86_64 -accel tcg -cpu max,cx16=off -m 2048 -nographic \
	-no-reboot -kernel "$kernel" -initrd "$out/initramfs.cpio" \
	-append "console=ttyS0 panic=-1 oops=panic quiet slub_debug=FZP" </dev/null >"$out/serial.log" 2>&1
qrc=$?
tv=$(date +%s)
tr -d '\r' <"$out/serial.log" >"$out/serial.txt"
[ $qrc = 0 ] || fail "QEMU exited $qrc (124: past QEMU_TIMEOUT)" "$(tail -5 "$out/serial.txt")"
! grep -qE 'Oops|BUG:|Kernel panic|general protection' "$out/serial.txt" && pass "the kernel reported no oops" ||
	fail "the kernel reported an oops" "$(grep -m3 -E 'Oops|BUG:|RIP:' "$out/serial.txt")"
grep -q '^qemu: module loaded' "$out/serial.txt" && pass "module loads" || fail "module loads"
grep -q '^qemu: module btf' "$out/serial.txt" && pass "module BTF in /sys/kernel/btf/nvidia_uvm and nvidia" ||
	fail "module BTF"
grep -q '^qemu: decision module loaded' "$out/serial.txt" && pass "nvidia_uvm with decision contexts loads in its place" ||
	fail "nvidia_uvm with decision contexts loads in its place"

keys="accesses faults batches htod_bytes dtoh_bytes evictions refaults prefetched_pages policy_errors"
# got N W: the guest's counts of case N on workload W, "key=value ..."
got() {
	awk -v n="$1" -v w="$2" -v keys="$keys" '
		BEGIN { split(keys, k, " "); for (i in k) want[k[i]] = 1 }
		$1 == "qemu-result" && $2 == n && $3 == w && want[$4] { v[$4] = $5 }
		END { s = ""; for (i = 1; i in k; i++) s = s k[i] "=" v[k[i]] " "; print s }' "$out/serial.txt"
}
# sim ROW SPEC: gpux --sim's counts of ROW (default: the default row)
sim() {
	"$gpux" -f json --sim "$2" ${1:+"$1"} 2>/dev/null |
		python3 -c '
import json, sys
want, keys = sys.argv[1], sys.argv[2].split()
for line in sys.stdin:
    r = json.loads(line)
    if r.get("type") != "sim":  # the policy output itself (printf, maps)
        continue
    d = r["data"]
    if (d["policy"] == "default") == (want == ""):
        print(" ".join("%s=%s" % (k, d[k]) for k in keys) + " ")
        break' "$1" "$keys"
}
# tenants N W: the guest's scheduling outcome, "PID TIMESLICE/INTERLEAVE/FINISH/REJECTED" a line
tenants() {
	awk -v n="$1" -v w="$2" '$1 == "qemu-sched" && $2 == n && $3 == w && $4 ~ /^tenant/ {
		sub(/^tenant/, "", $4); print $4, $5 }' "$out/serial.txt" | sort
}
# sim_tenants ROW SPEC: the same from gpux --sim (nothing where the row has no scheduling hooks)
sim_tenants() {
	"$gpux" -f json --sim "$2" "$1" 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    if r.get("type") != "sim":
        continue
    d = r["data"]
    if d["policy"] != "default":
        for t in d.get("tenants", []):
            print(t["pid"], "%d/%d/%d/%d" % (t["timeslice_us"], t["interleave"], t["finish_us"], t["rejected"]))' | sort
}
sched_calls() {
	awk -v n="$1" -v w="$2" '$1 == "qemu-sched" && $2 == n && $3 == w && $4 == "hook_calls" { print $5 }' "$out/serial.txt"
}
mapfile -t specs <"$here/workloads"
case_rc() { sed -n "s/^qemu-case $1 rc=//p" "$out/serial.txt"; }
# with no policy, and detached: the default
for w in "${!specs[@]}"; do
	spec=${specs[$w]} want=$(sim "" "${specs[$w]}")
	for n in 0 d; do
		g=$(got $n $((w + 1)))
		what="no policy"
		[ $n = d ] && what="detached"
		[ "$g" = "$want" ] && pass "$what: $spec" || fail "$what: $spec" "kernel [$g] sim [$want]"
	done
done
for tag in '' D; do
	n=0
	while IFS='|' read -r files args expect expect_d; do
		n=$((n + 1))
		t=$tag$n
		[ "$tag" = D ] && expect=$expect_d
		name="$files${args:+ $args}${tag:+ (decision contexts)}"
		row=""
		IFS='+' read -ra fs <<<"$files"
		for f in "${fs[@]}"; do
			case $f in */*) p=$top/$f ;; *) p=$top/stdlib/policies/$f ;; esac
			row=${row:+$row+}$p
		done
		row=$row${args:+:$args}
		rc=$(case_rc $t)
		if [ "${expect%%:*}" = refused ]; then
			o=$(sed -n "s/^qemu-out $t //p" "$out/serial.txt")
			[ "$rc" = 1 ] && grep -qF -- "${expect#refused:}" <<<"$o" &&
				grep -qE "^/gpux/p/[^ ]+:[0-9]+:[0-9]+-[0-9]+: ERROR: " <<<"$o" &&
				! grep -q 'PROG LOAD LOG' <<<"$o" &&
				pass "$name: refused, one located error: $(grep -o "ERROR: .*" <<<"$o" | head -n 1)" ||
				fail "$name: refused" "rc ${rc:-none}: $(tail -3 <<<"$o")"
			continue
		fi
		if [ "$rc" != 0 ]; then
			fail "$name: gpux attached and ran (rc ${rc:-none})" \
				"$(sed -n "s/^qemu-out $t //p" "$out/serial.txt" | tail -8)"
			continue
		fi
		for w in "${!specs[@]}"; do
			spec=${specs[$w]}
			want=$(sim "$row" "$spec")
			g=$(got $t $((w + 1)))
			[ -n "$want" ] && [ "$g" = "$want" ] && pass "$name on $spec: kernel = --sim" ||
				fail "$name on $spec: kernel = --sim" "kernel [$g] sim [$want]"
			st=$(sim_tenants "$row" "$spec")
			if [ -n "$st" ]; then
				gt=$(tenants $t $((w + 1)))
				[ "$gt" = "$st" ] && pass "$name on $spec: tenants' timeslices and finish = --sim" ||
					fail "$name on $spec: tenants = --sim" "kernel [$(echo $gt)] sim [$(echo $st)]"
			elif [ "$(sched_calls $t $((w + 1)))" != 0 ]; then
				fail "$name on $spec: no scheduling hooks" "$(sched_calls $t $((w + 1))) calls"
			fi
		done
		# the nonsense decisions were made, and ignored
		case $files in
		*bad_return.gpx)
			b=$(awk -v n=$t '$1 == "qemu-result" && $2 == n && $4 == "bad_returns" { s += $5 } END { print s + 0 }' "$out/serial.txt")
			[ "$b" -gt 0 ] && pass "$name: bad returns ignored by the module ($b)" || fail "$name: bad returns seen" "0" ;;
		*long_loop.gpx)
			h=$(awk -v n=$t '$1 == "qemu-result" && $2 == n && $4 == "hook_calls" { s += $5 } END { print s + 0 }' "$out/serial.txt")
			[ "$h" -gt 0 ] && pass "$name: the spinning hook ran ($h calls)" || fail "$name: the spinning hook ran" "0 calls" ;;
		esac
	done <"$out/cases"
done
# detached mid-run
mid() { sed -n "s/^qemu-midrun${2:-} $1 //p" "$out/serial.txt" | head -n 1; }
[ "$(mid attached)" = 1 ] && [ "$(mid gpux_rc)" = 0 ] && [ "$(mid write_rc)" = 0 ] &&
	[ "$(mid status)" = 0 ] && [ -n "$(mid accesses)" ] &&
	[ "$(mid accesses)" = "$(mid accesses -default)" ] &&
	[ "$(mid hook_calls)" -gt 0 ] && [ "$(mid unattached)" -gt 0 ] &&
	pass "a policy detached mid-run: $(mid hook_calls) hook calls, then $(mid unattached) on the default path; every access counted ($(mid accesses))" ||
	fail "a policy detached mid-run" "attached $(mid attached) gpux $(mid gpux_rc) write $(mid write_rc) status $(mid status) accesses $(mid accesses) of $(mid accesses -default), hooks $(mid hook_calls) then $(mid unattached)"
# kprobes: each probe fired once per call of the hook its function
# serves, as the policy beside them counted, and as a counting policy
# counts in gpux --sim on the same workload (the module runs the same
# model)
kp() { sed -n "s/^qemu-kprobe $1//p" "$out/serial.txt" | head -n 1; }
printf 'gpu_mem:prefetch { @prefetch = count(); } gpu_mem:access { @access = count(); }\n' >"$out/count.gpx"
simk=$("$gpux" --sim "${specs[0]}" "$out/count.gpx" 2>/dev/null)
want_p=$(echo "$simk" | sed -n 's/^@prefetch: //p') want_a=$(echo "$simk" | sed -n 's/^@access: //p')
[ "$(kp 'rc ')" = 0 ] && pass "kprobes attached and detached in the kernel" ||
	fail "kprobes attached and detached in the kernel" "rc $(kp 'rc ') $(grep -m3 '^qemu-kprobe' "$out/serial.txt" | tr '\n' ' ')"
[ -n "$want_p" ] && [ "$want_p" -gt 0 ] && [ -n "$want_a" ] ||
	fail "kprobes: the simulator's hook calls" "[$simk]"
for k in "@prefetch: $want_p" "@access: $want_a" "@entry: $want_p" "@ret: $want_p" \
	"@off: $want_p" "@kaccess: $want_a" "@glob[kmod_uvm_prefetch, kprobe:kmod_uvm_prefetch]: $want_p"; do
	grep -qxF "qemu-kprobe $k" "$out/serial.txt" && pass "kprobe count $k, as --sim's hook calls" ||
		fail "kprobe count $k, as --sim's hook calls" "$(grep '^qemu-kprobe @' "$out/serial.txt" | tr '\n' ' ')"
done
t1=$(date +%s)
echo "qemu: kernel $abi; build $((tb - t0)) s, VM $((tv - tb)) s, all $((t1 - t0)) s; $fails failed"
[ $fails = 0 ]
