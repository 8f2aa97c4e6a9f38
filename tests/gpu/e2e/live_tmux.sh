#!/usr/bin/env bash
# A live session typed on a terminal: gpux --repl -c live inside tmux,
# keystrokes sent as a person types them (readline on a real pty: Tab
# completion, history), the screen captured at each step into
# OUTDIR/screen.txt. The capture is for a reader (tests/gpu/RESULTS.md);
# the checks are what live.sh checks, less the exact counts.
# Usage: live_tmux.sh E2E_DIR GPUX OUTDIR   env: TMUX_BIN (default tmux,
# else E2E_DIR/tools/tmux with its libraries in E2E_DIR/tools/lib)
set -u
e2e=$1 gpux=$2 out=$3
mkdir -p "$out"
fail() { echo "live_tmux: FAIL: $*"; exit 1; }
tm=${TMUX_BIN:-}
if [ -z "$tm" ]; then
	if command -v tmux >/dev/null; then tm=tmux
	elif [ -x "$e2e/tools/tmux" ]; then tm=$e2e/tools/tmux
	else echo "live_tmux: SKIP: no tmux"; exit 77
	fi
fi
lib=$e2e/tools/lib
sock=$out/tmux.sock
t() { LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$tm" -S "$sock" "$@"; }
step=0
shot() {
	step=$((step + 1))
	{ echo "----- screen $step: $1"
	  t capture-pane -p -t gpux -S -60 |
		awk '{ l[NR] = $0 } NF { last = NR } END { for (i = 1; i <= last; i++) print l[i] }'
	} >>"$out/screen.txt"
}
keys() { t send-keys -t gpux "$@"; }
line() { keys -l "$1"; keys Enter; sleep "${2:-1}"; }
: >"$out/screen.txt"
gpux=$(readlink -f "$gpux") e2e=$(readlink -f "$e2e")
home=$(mktemp -d) # history and the JIT cache, not the capture's folder
trap 'rm -rf "$home"' EXIT
t new-session -d -s gpux -x 110 -y 60 \
	"env -u LD_LIBRARY_PATH HOME='$home' TERM=screen '$gpux' --repl -c 'exec $e2e/live >$out/app.out'; sleep 30" ||
	fail "tmux would not start"
sleep 3
line 'gdev:kernel_exit { @[kernel] = count(); }' 2
line '@'
line ':probes'
shot "a probe attached, its map, the active probes"
keys -l ':hea'
keys Tab
sleep 0.5
keys -l ' @'
keys Tab
sleep 0.5
shot "Tab completes ':hea' and a map name"
keys C-u
line ':detach 1'
line 'gdev:kernel_exit /lane < 8/ { @l[activelanes] = count(); @a[sm, warp] = count(); }' 2
line ':heatmap @a' 2
shot "an SM x warp heatmap"
line ':top' 1
line '@l'
shot ":top and the active lanes"
line ':detach 2'
line ':pause'
line ':resume'
line ':quit' 2
shot "detached, and the end"
t kill-server 2>/dev/null
grep -q 'Attached 1: gdev:kernel_exit' "$out/screen.txt" || fail "no attach on screen"
grep -q '^@\[add_one(float\*, int)\]: [1-9]' "$out/screen.txt" || fail "no counts on screen"
grep -q '^scale:' "$out/screen.txt" || fail "no heatmap on screen"
grep -q 'KERNEL' "$out/screen.txt" || fail "no :top on screen"
grep -q '^@l\[8\]: [1-9]' "$out/screen.txt" && ! grep -q '^@l\[[^8]' "$out/screen.txt" ||
	fail "activelanes: want only 8"
grep -q '^live: x\[0\]' "$out/app.out" || fail "the program did not end normally"
echo "live_tmux: PASS (screen in $out/screen.txt)"
