#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# qpio-pingpong on the soft NIC: 2000 orders, each acknowledged, and the
# half round trip histogram printed; 64-byte messages (--size) too, and
# --calibrate files every order under a placement; a device without the
# flat burst (soft0,flat_burst=0) gets the work-request fallback; a bad
# option exits 2.
set -u
exe=$1
eal=(-l 0-1 --no-huge --no-shconf --no-pci --log-level=lib.eal:error)
out=$("$exe" "${eal[@]}" --file-prefix=pp-smoke-$$ -- --count 2000 --warmup 100 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
echo "$out" | grep -q "^half round trip over 2000 orders: min [0-9]* ns, p50 [0-9]* ns, p90 [0-9]* ns, p99 [0-9]* ns, p99.9 [0-9]* ns, p99.99 [0-9]* ns, p99.999 [0-9]* ns, max [0-9]* ns$" ||
	{ echo "FAIL: no percentile line"; exit 1; }
# The worst order: one of the 2000, and its half round trip is the max.
max=$(echo "$out" | sed -n 's/^half round trip over .*, max \([0-9]*\) ns$/\1/p')
worst=$(echo "$out" | sed -n 's/^worst order: #\([0-9]*\) of 2000, sent [0-9]*\.[0-9]\{3\} ms after the first, half round trip \([0-9]*\) ns$/\1 \2/p')
[ -n "$worst" ] || { echo "FAIL: no worst order line"; exit 1; }
[ "${worst% *}" -lt 2000 ] && [ "${worst#* }" = "$max" ] ||
	{ echo "FAIL: worst order '$worst' is not one of the 2000 at the max $max"; exit 1; }
total=$(echo "$out" | awk '$1 ~ /^[0-9]+$/ && NF >= 2 { s += $2 } END { print s }')
[ "$total" = 2000 ] || { echo "FAIL: histogram holds $total orders, not 2000"; exit 1; }
echo "$out" | tail -1 | grep -qx "posted with: qpio_qp_post_send_sge() (the flat burst)" ||
	{ echo "FAIL: the soft NIC's RC QP did not post with the flat burst"; exit 1; }
# A driver without the flat burst (-EOPNOTSUPP): the same orders through
# qpio_qp_post_send(), every ack checked as before.
out=$("$exe" "${eal[@]}" --file-prefix=pp-smoke-w-$$ -- --count 500 --warmup 10 --dev soft0,flat_burst=0 2>&1)
rc=$?
[ $rc -eq 0 ] || { echo "$out"; echo "FAIL: flat_burst=0 exit $rc"; exit 1; }
echo "$out" | grep -q "^half round trip over 500 orders: " ||
	{ echo "$out"; echo "FAIL: flat_burst=0: no percentile line"; exit 1; }
echo "$out" | tail -1 | grep -qx "posted with: qpio_qp_post_send() (the driver has no flat burst)" ||
	{ echo "$out"; echo "FAIL: flat_burst=0: not the work-request fallback"; exit 1; }
"$exe" "${eal[@]}" --file-prefix=pp-smoke-b-$$ -- --count 0 > /dev/null 2>&1
rc=$?
[ $rc -eq 2 ] || { echo "FAIL: --count 0 exit $rc, wanted 2"; exit 1; }
out=$("$exe" "${eal[@]}" --file-prefix=pp-smoke-s-$$ -- --count 500 --warmup 10 --size 64 2>&1)
rc=$?
[ $rc -eq 0 ] || { echo "$out"; echo "FAIL: --size 64 exit $rc"; exit 1; }
echo "$out" | grep -q "^qpio-pingpong: 500 orders of 64 bytes on soft0" ||
	{ echo "$out"; echo "FAIL: --size 64 not in the header line"; exit 1; }
echo "$out" | grep -q "^half round trip over 500 orders: " ||
	{ echo "$out"; echo "FAIL: --size 64: no percentile line"; exit 1; }
out=$("$exe" "${eal[@]}" --file-prefix=pp-smoke-c-$$ -- --count 300 --warmup 10 --calibrate 2>&1)
rc=$?
[ $rc -eq 0 ] || { echo "$out"; echo "FAIL: --calibrate exit $rc"; exit 1; }
echo "$out" | grep -q "^calibrated (" ||
	{ echo "$out"; echo "FAIL: --calibrate: no calibrated line"; exit 1; }
# Every order is filed under one placement.
filed=$(echo "$out" | sed -n 's/^  \(near\|far\): \([0-9]*\) orders, one-way p50 [0-9]* ns, half round trip p50 [0-9]* ns, [0-9.]* one-way times$/\2/p' |
	awk '{ s += $1 } END { print s + 0 }')
[ "$filed" = 300 ] || { echo "$out"; echo "FAIL: --calibrate filed $filed orders, not 300"; exit 1; }
for bad in 31 257 64x; do
	"$exe" "${eal[@]}" --file-prefix=pp-smoke-b-$$ -- --size "$bad" > /dev/null 2>&1
	rc=$?
	[ $rc -eq 2 ] || { echo "FAIL: --size $bad exit $rc, wanted 2"; exit 1; }
done
echo "pingpong smoke: PASS"
