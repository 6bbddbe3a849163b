#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# What on this machine disturbs the given CPUs, measured over a window,
# so a tail latency figure can be told apart from the machine's own noise:
#
#   usertools/qpio-core-check.sh [-w SECONDS] [-v] CPU[,CPU...]
#
# For each CPU it prints one line:
#   cpu N: isolated yes|no, nohz_full yes|no, governor G|none,
#          irqs K in W s (top: NAME K, ...),
#          other threads seen runnable T (20 samples)
# where the interrupts are counted from /proc/interrupts before and after
# the window (every source, local timer included), and the runnable tasks
# are the threads other than this script's found in state R on that CPU
# at 20 samples across the window (/proc/*/task/*/stat, fields 3 and 39);
# -v lists each of those threads (tid, name, samples) before the verdict.
# Then a verdict per CPU: "quiet" when it is isolated, has no other
# runnable task and took at most 1 interrupt per 10 ms of the window (the
# tick of nohz_full still comes once a second; a tickless CPU takes
# fewer), else "disturbed" with the reasons. Exit 0 when every CPU was
# measured (a disturbed CPU is a finding, not an error), 2 on bad usage.
#
# What can be done about a disturbed CPU is in doc/guides/sample_app_ug/
# pingpong.rst ("Quiet cores"): isolcpus and nohz_full on the kernel
# command line, irqaffinity, the performance governor; in a VM the host's
# scheduler can still take the vCPU away, which nothing inside can see.
set -euo pipefail

usage() {
	sed -n '4,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}

window=1
verbose=0
while getopts "w:vh" o; do
	case $o in
	w) window=$OPTARG ;;
	v) verbose=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
[[ $window =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v w="$window" 'BEGIN { exit !(w > 0 && w <= 60) }' ||
	{ echo "qpio-core-check: -w $window: seconds in (0, 60]" >&2; exit 2; }
[[ $1 =~ ^[0-9]+(,[0-9]+)*$ ]] ||
	{ echo "qpio-core-check: '$1': CPU numbers separated by commas, e.g. 0,1" >&2; exit 2; }
IFS=, read -r -a cpus <<< "$1"
ncpu=$(nproc --all)
for c in "${cpus[@]}"; do
	[ "$c" -lt "$ncpu" ] ||
		{ echo "qpio-core-check: CPU $c: this machine has CPUs 0..$((ncpu - 1))" >&2; exit 2; }
done

# CPU list file (e.g. "1-3,5") -> is CPU $2 in it?
in_list() {
	local f=$1 c=$2 r lo hi
	[ -r "$f" ] || return 1
	IFS=, read -r -a rs < "$f" || true
	for r in "${rs[@]}"; do
		[ -n "$r" ] || continue
		lo=${r%-*}; hi=${r#*-}
		[ "$c" -ge "$lo" ] && [ "$c" -le "$hi" ] && return 0
	done
	return 1
}

# /proc/interrupts -> "cpu irqname count" lines
irq_snapshot() {
	awk 'NR == 1 { n = NF; next }
	     { name = $1; sub(":", "", name)
	       for (i = 2; i <= n + 1 && i <= NF; i++)
		       if ($i ~ /^[0-9]+$/) print i - 2, name, $i }' /proc/interrupts
}

# Threads in state R, as "cpu tid comm" lines, this script's own process
# and its children (the sampling subshells) left out.
runnable_sample() {
	local me=$$ sub=$BASHPID st line rest comm
	for st in /proc/[0-9]*/task/[0-9]*/stat; do
		{ read -r line < "$st"; } 2>/dev/null || continue
		# comm may hold spaces: the fields after its ')' are fixed
		comm=${line#*(}
		comm=${comm%)*}
		rest=${line##*) }
		set -- $rest
		# $1 state (field 3), $2 ppid (4), $37 processor (39)
		[ "$1" = R ] || continue
		tid=${st%/stat}
		tid=${tid##*/}
		case " $me $sub " in *" $tid "* | *" $2 "*) continue ;; esac
		echo "${37} $tid ${comm// /_}"
	done
}

before=$(irq_snapshot)
declare -A runs=() seen=()
samples=20
step=$(awk -v w="$window" -v s=$samples 'BEGIN { printf "%.3f", w / s }')
for ((k = 0; k < samples; k++)); do
	while read -r c tid comm; do
		runs[$c]=$(( ${runs[$c]:-0} + 1 ))
		seen["$c $tid $comm"]=$(( ${seen["$c $tid $comm"]:-0} + 1 ))
	done < <(runnable_sample)
	sleep "$step"
done
after=$(irq_snapshot)

for c in "${cpus[@]}"; do
	iso=no; nohz=no; gov=none
	in_list /sys/devices/system/cpu/isolated "$c" && iso=yes
	in_list /sys/devices/system/cpu/nohz_full "$c" && nohz=yes
	f=/sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor
	[ -r "$f" ] && gov=$(cat "$f")
	irqs=$(join -j1 <(echo "$before" | awk -v c="$c" '$1 == c { print $2, $3 }' | sort) \
		<(echo "$after" | awk -v c="$c" '$1 == c { print $2, $3 }' | sort) |
		awk '{ d = $3 - $2; if (d > 0) print d, $1 }' | sort -rn)
	total=$(echo "$irqs" | awk '{ s += $1 } END { print s + 0 }')
	top=$(echo "$irqs" | head -3 | awk 'NF { printf "%s%s %s", sep, $2, $1; sep = ", " }')
	other=${runs[$c]:-0}
	printf 'cpu %s: isolated %s, nohz_full %s, governor %s, irqs %s in %s s (top: %s), other threads seen runnable %s (%s samples)\n' \
		"$c" "$iso" "$nohz" "$gov" "$total" "$window" "${top:-none}" "$other" "$samples"
	why=()
	[ "$iso" = yes ] || why+=("not isolated (isolcpus)")
	[ "$other" -eq 0 ] || why+=("other threads runnable there ($other)")
	awk -v t="$total" -v w="$window" 'BEGIN { exit !(t > w * 100) }' &&
		why+=("$total interrupts")
	[ "$gov" = none ] || [ "$gov" = performance ] || why+=("governor $gov")
	if [ $verbose = 1 ]; then
		for k in "${!seen[@]}"; do
			read -r kc tid comm <<< "$k"
			if [ "$kc" = "$c" ]; then
				echo "cpu $c: runnable: tid $tid $comm in ${seen[$k]} of $samples samples"
			fi
		done | sort -t' ' -k8,8nr
	fi
	if [ ${#why[@]} -eq 0 ]; then
		echo "cpu $c: quiet"
	else
		(IFS=';'; echo "cpu $c: disturbed: ${why[*]}" | sed 's/;/; /g')
	fi
done
