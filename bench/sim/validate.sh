#!/usr/bin/env bash
# Run the real-driver workloads on the GPU machine, one JSON line per run into
# OUTDIR/real.ndjson, stderr of each run into OUTDIR/NN-WORKLOAD.log.
#   validate.sh BIN_DIR OUTDIR
# env: WORKLOADS  runs, one per line (or separated by ';'):
#                 "WORKLOAD key=value ..." (default: the six below)
#      RUN_TIMEOUT seconds per run (default 300)
#      GPU_INDEX  nvidia-smi index to check (default: first of
#                 CUDA_VISIBLE_DEVICES if numeric, else 0)
set -uo pipefail
if [[ $# -ne 2 ]]; then
	echo "usage: validate.sh BIN_DIR OUTDIR" >&2
	exit 2
fi
bin=$1/uvm_workloads
out=$2
[[ -x $bin ]] || { echo "validate.sh: no executable $bin" >&2; exit 2; }
mkdir -p "$out"

default_runs='seq size=2g gpu=1600m passes=2
stride size=2g gpu=1600m passes=2
random size=2g gpu=1600m passes=2
hotcold size=2g gpu=1600m passes=2
layers size=2g gpu=1600m passes=2
mix size=2g gpu=1600m passes=2'
runs=${WORKLOADS:-$default_runs}
runs=${runs//;/$'\n'}
timeout_s=${RUN_TIMEOUT:-300}

# size with k/m/g suffix (powers of 1024) -> bytes
to_bytes() {
	local v=$1 m=1
	case $v in
	*[kK]) m=1024; v=${v%?} ;;
	*[mM]) m=$((1024 * 1024)); v=${v%?} ;;
	*[gG]) m=$((1024 * 1024 * 1024)); v=${v%?} ;;
	esac
	[[ $v =~ ^[0-9]+$ ]] || { echo "validate.sh: bad size '$1'" >&2; exit 2; }
	echo $((v * m))
}

# Largest size among the runs (default size is 1g).
max_size=0
while read -r line; do
	[[ -z ${line// /} ]] && continue
	sz=$((1024 * 1024 * 1024))
	for kv in $line; do
		[[ $kv == size=* ]] && sz=$(to_bytes "${kv#size=}")
	done
	((sz > max_size)) && max_size=$sz
done <<<"$runs"

idx=${GPU_INDEX:-}
if [[ -z $idx ]]; then
	first=${CUDA_VISIBLE_DEVICES:-0}
	first=${first%%,*}
	[[ $first =~ ^[0-9]+$ ]] && idx=$first || idx=0
fi
echo "validate.sh: nvidia-smi (GPU $idx):"
if ! free_mib=$(nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,memory.free \
	--format=csv,noheader,nounits -i "$idx"); then
	echo "validate.sh: nvidia-smi failed; refusing to run" >&2
	exit 1
fi
echo "  name, driver, total MiB, used MiB, free MiB: $free_mib"
free_mib=$(echo "$free_mib" | awk -F', *' '{print $NF}')
need_mib=$(((max_size + 1024 * 1024 * 1024) / 1024 / 1024))
if ! [[ $free_mib =~ ^[0-9]+$ ]] || ((free_mib < need_mib)); then
	echo "validate.sh: free memory ${free_mib} MiB < largest size + 1 GiB (${need_mib} MiB); refusing to run" >&2
	exit 1
fi

nd=$out/real.ndjson
: >"$nd"
n=0 fails=0
while read -r line; do
	[[ -z ${line// /} ]] && continue
	n=$((n + 1))
	wl=${line%% *}
	log=$(printf '%s/%02d-%s.log' "$out" "$n" "$wl")
	echo "validate.sh: [$n] $line"
	# shellcheck disable=SC2086  # word splitting of the run line is wanted
	res=$(timeout "$timeout_s" "$bin" $line 2>"$log")
	rc=$?
	if [[ -n $res ]]; then
		echo "$res" >>"$nd"
	else
		args_json=$(printf '%s' "$line" | sed 's/\\/\\\\/g; s/"/\\"/g')
		echo "{\"workload\":\"$wl\",\"args\":\"$args_json\",\"error\":\"exit $rc\"}" >>"$nd"
	fi
	if ((rc != 0)); then
		fails=$((fails + 1))
		echo "validate.sh: [$n] exit $rc (log: $log)" >&2
		tail -n 5 "$log" | sed 's/^/    /' >&2
	else
		echo "  $res" | cut -c1-300
	fi
done <<<"$runs"
echo "validate.sh: $n runs, $fails failed; results in $nd"
((fails == 0))
