#!/usr/bin/env bash
# --export: a real Prometheus server scraping gpux, OTLP pushes to a
# local receiver (otlp_receiver.py), the series cap, refusals. Usage:
#   export_test.sh GPUX CASE     run one case (ctest registers each)
# Exit 77 (skipped) without python3, or without prometheus for the case
# that needs it. Waits have generous bounds for a stuck run; nothing
# here measures time.
set -u
GPUX=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
util() { python3 "$here/export_util.py" "$@"; }
fail() { echo "FAIL: $*"; return 1; }

# wait_for CMD...: until CMD succeeds, for at most 60 s
wait_for() {
	for _ in $(seq 600); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# gpux in the background (its stdout and stderr in files); stop_gpux
# sends SIGINT, as Ctrl-C: the maps print, the last push goes, status 0.
start_gpux() {
	"$GPUX" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null &
	gpid=$!
	pids+=("$gpid")
}
stop_gpux() {
	kill -INT "$gpid"
	wait "$gpid"
	local rc=$?
	[ "$rc" = 0 ] || { cat "$tmp/err"; fail "gpux exited $rc"; }
}
gpux_port() { sed -n 's/^gpux: metrics on .*:\([0-9]*\) (GET \/metrics)$/\1/p' "$tmp/err"; }
has_port() { [ -n "$(gpux_port)" ]; }
wait_port() {
	wait_for has_port || { cat "$tmp/err"; fail "gpux did not say its port"; return 1; }
	port=$(gpux_port)
}

# expect NAME WANT GOT: equal, or both shown
expect() {
	[ "$2" = "$3" ] && return 0
	printf -- '--- %s: want\n%s\n--- got\n%s\n' "$1" "$2" "$3"
	fail "$1"
}

# 50 ticks, then nothing changes until the run ends: exact values
TICKS='interval:ms:10 /@n < 50/ { @n = @n + 1; @c = count(); @h = hist(@n);
  @l = lhist(@n, 0, 40, 10); @k[@n % 3] = count(); @s[@n % 2] = sum(@n); @mx = max(@n);
  @st = stats(@n); }'
PROG='BEGIN { @n = 0; @w["a b\"c\\d"] = count(); } '"$TICKS"' interval:s:300 { exit(); }'
PROG_ENDS='BEGIN { @n = 0; @w["a b\"c\\d"] = count(); } '"$TICKS"'
  interval:ms:10 /@n == 50/ { exit(); }'
# more keys than a cap of 3
MANY='BEGIN { for ($i : 0..10) { @k[$i] = count(); @v[$i] = $i; @h[$i] = hist($i); } }'

# an OTLP receiver on a free port: $rport, posts recorded in $tmp/otlp
start_receiver() {
	mkdir -p "$tmp/otlp"
	python3 "$here/otlp_receiver.py" "$tmp/otlp" "${1:-200}" &
	pids+=("$!")
	wait_for test -s "$tmp/otlp/port" || { fail "the receiver did not start"; return 1; }
	rport=$(cat "$tmp/otlp/port")
}

# ---- Prometheus ----

prom_ready() { util get "http://127.0.0.1:$pport/-/ready" 2>/dev/null | grep -q '^200 '; }

# Prometheus on a free port scraping 127.0.0.1:$port every second; a port
# taken between choosing and binding it: another one
start_prometheus() {
	command -v prometheus >/dev/null || { echo "SKIP: prometheus is not installed"; exit 77; }
	cat >"$tmp/prom.yml" <<-EOF
	global:
	  scrape_interval: 1s
	  scrape_timeout: 1s
	scrape_configs:
	  - job_name: gpux
	    static_configs:
	      - targets: ['127.0.0.1:$port']
	EOF
	for _ in 1 2 3; do
		pport=$(util port)
		prometheus --config.file="$tmp/prom.yml" --storage.tsdb.path="$tmp/tsdb" \
			--web.listen-address="127.0.0.1:$pport" >"$tmp/prom.log" 2>&1 &
		local p=$!
		pids+=("$p")
		for _ in $(seq 600); do
			prom_ready && return 0
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill "$p" 2>/dev/null
	done
	cat "$tmp/prom.log"
	fail "prometheus did not start"
}

q() { util query "http://127.0.0.1:$pport" "$1"; }
scraped_final() { [ "$(q gpux_c)" = '{__name__="gpux_c"} 50' ]; }

t_prometheus() {
	start_gpux --export prometheus:127.0.0.1:0 -e "$PROG" && wait_port &&
	start_prometheus || return 1
	wait_for scraped_final || { q gpux_c; cat "$tmp/err"; fail "no scrape of @c = 50"; return 1; }
	expect up '{__name__="up"} 1' "$(q 'up{job="gpux"}')" &&
	expect keys "$(printf '%s\n' '{__name__="gpux_k",key="0"} 16' \
		'{__name__="gpux_k",key="1"} 17' '{__name__="gpux_k",key="2"} 17')" "$(q gpux_k)" &&
	expect sum "$(printf '%s\n' '{__name__="gpux_s",key="0"} 650' \
		'{__name__="gpux_s",key="1"} 625')" "$(q gpux_s)" &&
	expect hist "$(printf '%s\n' '{__name__="gpux_h_bucket",le="+Inf"} 50' \
		'{__name__="gpux_h_bucket",le="0"} 0' '{__name__="gpux_h_bucket",le="1"} 1' \
		'{__name__="gpux_h_bucket",le="15"} 15' '{__name__="gpux_h_bucket",le="3"} 3' \
		'{__name__="gpux_h_bucket",le="31"} 31' '{__name__="gpux_h_bucket",le="63"} 50' \
		'{__name__="gpux_h_bucket",le="7"} 7')" \
		"$(q 'gpux_h_bucket{le=~"0|1|3|7|15|31|63|\\+Inf"}')" &&
	expect hist_count '{__name__="gpux_h_count"} 50' "$(q gpux_h_count)" &&
	expect lhist "$(printf '%s\n' '{__name__="gpux_l_bucket",le="+Inf"} 50' \
		'{__name__="gpux_l_bucket",le="-1"} 0' '{__name__="gpux_l_bucket",le="19"} 19' \
		'{__name__="gpux_l_bucket",le="29"} 29' '{__name__="gpux_l_bucket",le="39"} 39' \
		'{__name__="gpux_l_bucket",le="9"} 9')" "$(q gpux_l_bucket)" &&
	expect quantile '{} 39' "$(q 'histogram_quantile(0.78, gpux_l_bucket)')" &&
	expect max '{__name__="gpux_mx"} 50' "$(q gpux_mx)" &&
	expect stats "$(printf '%s\n' '{__name__="gpux_st_count"} 50' '{__name__="gpux_st_sum"} 1275')" \
		"$(q '{__name__=~"gpux_st_.*"}')" &&
	expect escaped '{__name__="gpux_w",key="a b\"c\\d"} 1' "$(q gpux_w)" &&
	expect dropped '{} 0' "$(q 'sum(gpux_export_dropped_series)')" &&
	expect maps '{} 9' "$(q 'count(gpux_export_dropped_series)')" &&
	stop_gpux && grep -qx '@c: 50' "$tmp/out" || fail "gpux's own output"
}

# ---- gpux's endpoint, read directly ----

t_scrape() {
	start_gpux --export prometheus:127.0.0.1:0 --export-max-series 3 \
		-e "$MANY interval:s:300 { exit(); }" && wait_port || return 1
	util get "http://127.0.0.1:$port/metrics" >"$tmp/scrape"
	local got
	got=$(grep -E '^(200 |# TYPE gpux_k |gpux_k|gpux_v|gpux_h_count|gpux_h_bucket.*le="7"|gpux_export)' \
		"$tmp/scrape")
	expect scrape "$(cat <<-'EOF'
	200 text/plain; version=0.0.4; charset=utf-8
	gpux_h_bucket{key="0",le="7"} 1
	gpux_h_count{key="0"} 1
	gpux_h_bucket{key="1",le="7"} 1
	gpux_h_count{key="1"} 1
	gpux_h_bucket{key="2",le="7"} 1
	gpux_h_count{key="2"} 1
	gpux_h_bucket{key="__overflow__",le="7"} 5
	gpux_h_count{key="__overflow__"} 7
	# TYPE gpux_k counter
	gpux_k{key="0"} 1
	gpux_k{key="1"} 1
	gpux_k{key="2"} 1
	gpux_k{key="__overflow__"} 7
	gpux_v{key="0"} 0
	gpux_v{key="1"} 1
	gpux_v{key="2"} 2
	gpux_export_dropped_series{map="@h"} 7
	gpux_export_dropped_series{map="@k"} 7
	gpux_export_dropped_series{map="@v"} 7
	EOF
	)" "$got" || return 1
	expect not_found "404 text/plain; charset=utf-8" \
		"$(util get "http://127.0.0.1:$port/" | head -1)" &&
	stop_gpux
}

# ---- OTLP ----

t_otlp() {
	start_receiver || return 1
	"$GPUX" --export "otlp:http://127.0.0.1:$rport/v1/metrics" --export-interval 100ms \
		-e "$PROG_ENDS" >"$tmp/out" 2>"$tmp/err" </dev/null ||
		{ cat "$tmp/err"; fail "gpux failed"; return 1; }
	[ ! -s "$tmp/err" ] || { cat "$tmp/err"; fail "stderr not empty"; return 1; }
	grep -qx '@c: 50' "$tmp/out" || fail "gpux's own output" || return 1
	util bodies "$tmp/otlp" >/dev/null || fail "a post is not OTLP JSON" || return 1
	local S='sum(monotonic=true,temporality=2)' D='gpux_export_dropped_series gauge'
	expect otlp "$(cat <<-EOF
	gpux_c $S {} 50
	gpux_h histogram(temporality=2) {} count=50 counts=0,0,1,2,4,8,16,19 nbounds=65 bounds=-1,0,1,3,7
	gpux_k $S {key="0"} 16
	gpux_k $S {key="1"} 17
	gpux_k $S {key="2"} 17
	gpux_l histogram(temporality=2) {} count=50 counts=0,9,10,10,10,11 nbounds=5 bounds=-1,9,19,29,39
	gpux_mx gauge {} 50
	gpux_n gauge {} 50
	gpux_s $S {key="0"} 650
	gpux_s $S {key="1"} 625
	gpux_st summary {} count=50 sum=1275
	gpux_w $S {key="a b\\"c\\\\d"} 1
	$D {map="@c"} 0
	$D {map="@h"} 0
	$D {map="@k"} 0
	$D {map="@l"} 0
	$D {map="@mx"} 0
	$D {map="@n"} 0
	$D {map="@s"} 0
	$D {map="@st"} 0
	$D {map="@w"} 0
	EOF
	)" "$(util otlp "$tmp/otlp")"
}

t_otlp_overflow() {
	start_receiver || return 1
	"$GPUX" --export "otlp:http://127.0.0.1:$rport/v1/metrics" --export-max-series 3 \
		-e "$MANY"' BEGIN { exit(); }' >"$tmp/out" 2>"$tmp/err" </dev/null ||
		{ cat "$tmp/err"; fail "gpux failed"; return 1; }
	local S='sum(monotonic=true,temporality=2)' D='gpux_export_dropped_series gauge'
	local H='histogram(temporality=2)'
	expect otlp "$(cat <<-EOF
	gpux_h $H {key="0"} count=1 counts=0,1 nbounds=65 bounds=-1,0,1,3,7
	gpux_h $H {key="1"} count=1 counts=0,0,1 nbounds=65 bounds=-1,0,1,3,7
	gpux_h $H {key="2"} count=1 counts=0,0,0,1 nbounds=65 bounds=-1,0,1,3,7
	gpux_h $H {key="__overflow__"} count=7 counts=0,0,0,1,4,2 nbounds=65 bounds=-1,0,1,3,7
	gpux_k $S {key="0"} 1
	gpux_k $S {key="1"} 1
	gpux_k $S {key="2"} 1
	gpux_k $S {key="__overflow__"} 7
	gpux_v gauge {key="0"} 0
	gpux_v gauge {key="1"} 1
	gpux_v gauge {key="2"} 2
	$D {map="@h"} 7
	$D {map="@k"} 7
	$D {map="@v"} 7
	EOF
	)" "$(util otlp "$tmp/otlp")"
}

# A map the kernel holds (a uprobe, as root): exact calls of the command
# (export_work.c: work(i % 3) for i below 10).
t_uprobe() {
	[ "$(id -u)" = 0 ] || { echo "SKIP: uprobes need root"; exit 77; }
	start_receiver || return 1
	"$GPUX" --export "otlp:http://127.0.0.1:$rport/v1/metrics" \
		-e "uprobe:$EXPORT_WORK:work { @calls[arg0] = count(); }" -- "$EXPORT_WORK" 10 \
		>"$tmp/out" 2>"$tmp/err" </dev/null
	local rc=$?
	if grep -q 'without libbpf' "$tmp/err"; then
		echo "SKIP: this gpux has no libbpf"
		exit 77
	fi
	[ "$rc" = 0 ] || { cat "$tmp/err"; fail "gpux exited $rc"; return 1; }
	local S='sum(monotonic=true,temporality=2)'
	expect uprobe "$(printf '%s\n' "gpux_calls $S {key=\"0\"} 4" "gpux_calls $S {key=\"1\"} 3" \
		"gpux_calls $S {key=\"2\"} 3" 'gpux_export_dropped_series gauge {map="@calls"} 0')" \
		"$(util otlp "$tmp/otlp")"
}

# A receiver that is not there, or refuses: one warning as it happens,
# a count at the end, the run itself unharmed.
t_otlp_down() {
	local p
	p=$(util port)
	"$GPUX" --export "otlp:http://127.0.0.1:$p/v1/metrics" -e 'BEGIN { @a = count(); exit(); }' \
		>"$tmp/out" 2>"$tmp/err" </dev/null || { cat "$tmp/err"; fail "gpux failed"; return 1; }
	grep -qx '@a: 1' "$tmp/out" || fail "gpux's own output" || return 1
	expect warnings "$(printf '%s\n' \
		"gpux: WARNING: OTLP push to http://127.0.0.1:$p/v1/metrics failed: X; later failures are counted" \
		"gpux: WARNING: 1 of 1 OTLP pushes to http://127.0.0.1:$p/v1/metrics failed")" \
		"$(sed 's/failed: .*; later/failed: X; later/' "$tmp/err")"
}

t_otlp_refused() {
	start_receiver 500 || return 1
	"$GPUX" --export "otlp:http://127.0.0.1:$rport/v1/metrics" -e 'BEGIN { @a = count(); exit(); }' \
		>"$tmp/out" 2>"$tmp/err" </dev/null || { cat "$tmp/err"; fail "gpux failed"; return 1; }
	grep -q "failed: HTTP status 500; later failures are counted" "$tmp/err" ||
		{ cat "$tmp/err"; fail "no warning of the status"; }
}

# Both at once: a scrape while it runs, the last push at Ctrl-C.
t_both() {
	start_receiver || return 1
	start_gpux --export prometheus:127.0.0.1:0 --export "otlp:http://127.0.0.1:$rport/v1/metrics" \
		-e "$PROG" && wait_port || return 1
	scrape_final() {
		util get "http://127.0.0.1:$port/metrics" | grep -qx 'gpux_c 50'
	}
	wait_for scrape_final || { fail "no scrape of gpux_c 50"; return 1; }
	stop_gpux && expect pushed "gpux_c sum(monotonic=true,temporality=2) {} 50" \
		"$(util otlp "$tmp/otlp" | grep '^gpux_c ')"
}

# ---- refusals ----

# run RC ARGS...: gpux in the foreground, its status checked
run() {
	local want=$1
	shift
	"$GPUX" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	local rc=$?
	[ "$rc" = "$want" ] || { cat "$tmp/err"; fail "gpux $* exited $rc, expected $want"; }
}
err_has() { grep -qF -- "$1" "$tmp/err" || { cat "$tmp/err"; fail "stderr lacks '$1'"; }; }

t_usage() {
	local B='BEGIN { exit(); }'
	run 0 -h && grep -q -- '--export SPEC' "$tmp/out" &&
	run 1 --export foo:1 -e "$B" && err_has "unknown export (prometheus:[ADDR:]PORT or otlp:URL) in --export 'foo:1'" &&
	run 1 --export prometheus:99999 -e "$B" && err_has "the port must be a number from 0 to 65535" &&
	run 1 --export prometheus: -e "$B" && err_has "the port must be a number" &&
	run 1 --export prometheus:::1:80 -e "$B" && err_has "an IPv6 address is written [ADDR]:PORT" &&
	run 1 --export otlp:ftp://x -e "$B" && err_has "the URL must start with http:// or https://" &&
	run 1 --export prometheus:1 --export prometheus:2 -e "$B" && err_has "--export prometheus given twice" &&
	run 1 --export prometheus:1 --export-interval 0 -e "$B" && err_has "invalid --export-interval '0'" &&
	run 1 --export prometheus:1 --export-interval 5h -e "$B" && err_has "invalid --export-interval '5h'" &&
	run 1 --export-interval 5s -e "$B" && err_has "--export-interval and --export-max-series go with --export" &&
	run 1 --export prometheus:1 --export-max-series 0 -e "$B" && err_has "invalid --export-max-series '0'" &&
	run 1 --export prometheus:1 -l && err_has "--export exports the maps of a program run" &&
	run 1 --export prometheus:nosuchhost.invalid:0 -e "$B" && err_has "cannot listen on 'nosuchhost.invalid'"
}

# A port another process holds: a clear error before anything runs.
t_port_taken() {
	start_receiver || return 1
	run 1 --export "prometheus:127.0.0.1:$rport" -e 'BEGIN { printf("ran\n"); exit(); }' &&
	err_has "cannot listen on 127.0.0.1:$rport: Address already in use" &&
	{ ! grep -q ran "$tmp/out" || fail "the program ran"; }
}

# ---- the module (libgpux-export.so) ----

# gpux itself needs neither libmicrohttpd nor libcurl: the module does.
t_links_neither() {
	command -v ldd >/dev/null || { echo "SKIP: no ldd"; exit 77; }
	local mod
	mod="$(dirname "$GPUX")/libgpux-export.so"
	ldd "$GPUX" >"$tmp/ldd" || { fail "ldd $GPUX failed"; return 1; }
	! grep -E 'libmicrohttpd|libcurl' "$tmp/ldd" || { fail "gpux links them"; return 1; }
	[ -f "$mod" ] || { fail "no $mod beside gpux"; return 1; }
}

# gpux and the host module in a folder of their own
host_bin() {
	mkdir -p "$tmp/bin" && cp "$GPUX" "$tmp/bin/gpux" &&
		cp "$(dirname "$GPUX")/libgpux-host.so" "$tmp/bin/"
}

# gpux without the module: runs, and --export says which module it lacks.
t_no_module() {
	host_bin || return 1
	local B='BEGIN { printf("ran\n"); exit(); }' bin=$tmp/bin/gpux
	"$bin" -e "$B" >"$tmp/out" 2>"$tmp/err" </dev/null ||
		{ cat "$tmp/err"; fail "gpux without the module failed"; return 1; }
	grep -qx ran "$tmp/out" || { fail "the program did not run"; return 1; }
	GPUX=$bin run 1 --export prometheus:127.0.0.1:0 -e "$B" &&
	err_has "cannot load the metrics exporter (--export): libgpux-export.so not found" &&
	err_has "looked for libgpux-export.so at: $tmp/bin/libgpux-export.so" &&
	{ ! grep -q ran "$tmp/out" || fail "the program ran"; }
}

# The module beside gpux but a library it needs missing (its name made
# one that no machine has): the error names that library.
t_module_lib_missing() {
	local mod
	mod="$(dirname "$GPUX")/libgpux-export.so"
	grep -q libmicrohttpd.so "$mod" ||
		{ echo "SKIP: the module was built without libmicrohttpd"; exit 77; }
	host_bin || return 1
	python3 - "$mod" "$tmp/bin/libgpux-export.so" <<'PY' || { fail "cannot rename the library"; return 1; }
import sys
d = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(d.replace(b"libmicrohttpd.so", b"libmicrohttpX.so"))
PY
	GPUX=$tmp/bin/gpux run 1 --export prometheus:127.0.0.1:0 -e 'BEGIN { exit(); }' &&
	err_has "cannot load the metrics exporter (--export): libmicrohttpX.so" &&
	err_has "looked for libgpux-export.so at: $tmp/bin/libgpux-export.so"
}

. "$(dirname "$0")/../lib/cases.sh"
cases_main "${2:-}"
