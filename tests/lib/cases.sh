# The case runner the shell drivers of tests/ share (sourced): a
# driver's cases are its functions named t_NAME, and ctest runs one per
# test (tests/*/CMakeLists.txt).
#   cases_main NAME [WRAP]   runs t_NAME and exits with its status (77:
#                            skipped)
#   cases_main "" [WRAP]     runs every case, each in a subshell, prints
#                            the log of each that failed and the name of
#                            each skipped, then "N passed, M failed";
#                            exits 1 if any failed
# WRAP, when given, runs a case as WRAP t_NAME (per-case setup and
# checks around it).
cases_main() {
	local one=$1 wrap=${2:-} t pass=0 failed=0 log
	if [ -n "$one" ]; then
		$wrap "t_$one"
		exit
	fi
	log=$(mktemp)
	for t in $(declare -F | awk '$3 ~ /^t_/ { print $3 }'); do
		($wrap "$t") >"$log" 2>&1
		case $? in
		0) pass=$((pass + 1)) ;;
		77) echo "skip ${t#t_}: $(tail -n 1 "$log")" ;;
		*) echo "case ${t#t_}:"; cat "$log"; failed=$((failed + 1)) ;;
		esac
	done
	rm -f "$log"
	echo "$pass passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}
