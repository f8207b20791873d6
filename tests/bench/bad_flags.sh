#!/bin/bash
# holdfast-bench refuses bad flags before it starts anything: exit status 2, a message that
# names the flag, and no report written. Usage: bad_flags.sh HOLDFAST_BENCH
set -u
bench=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failures=0
expect() {  # expect "MESSAGE" FLAGS...
  local want=$1
  shift
  local err status
  err=$("$bench" --out "$out/report" "$@" 2>&1 >/dev/null)
  status=$?
  if [ "$status" != 2 ]; then
    echo "FAIL: $* exited $status, not 2: $err"; failures=$((failures + 1))
  elif [[ "$err" != *"$want"* ]]; then
    echo "FAIL: $* said '$err', not '$want'"; failures=$((failures + 1))
  elif [ -e "$out/report" ]; then
    echo "FAIL: $* wrote a report"; failures=$((failures + 1))
  else
    echo "ok: $* -> $want"
  fi
}
expect "--connections needs a comma list of counts from 1 to 4096, not 'x'" --connections 1,x
expect "--connections needs a comma list of counts from 1 to 4096, not 0" --connections 0
expect "--pg-nodes needs a comma list of counts from 1 to 16, not '1x'" --pg-nodes 1x
expect "--tls-connections needs a comma list of counts from 1 to 4096, not 5000" --tls-connections 5000
expect "--duration needs seconds from more than 0 to 3600" --duration -1
expect "--rounds needs windows from 1 to 100" --rounds 0
expect "--depth needs requests in flight from 1 to 1024" --depth 0
expect "--keys needs keys from 1 to 100000000" --keys 0
expect "--hot-connections needs connections from 1 to 4096" --hot-connections 0
expect "--writer-every needs connections from 1 to 4096" --writer-every 0
expect "--semaphore-permits needs permits from 1 to 1000000" --semaphore-permits 1000001
expect "unknown target 'bogus' (--targets takes holdfast-always," --targets bogus
expect "unknown workload 'zz' (--workloads takes floor," --workloads zz
expect "--targets needs at least one target" --targets ,
expect "--backoff-min-us must not exceed --backoff-max-us" --backoff-min-us 500 --backoff-max-us 100
expect "Could not convert: --duration = soon" --duration soon
expect "--client-poll-us: Value 20000 not in range 0 to 10000" --client-poll-us 20000
expect "--sleeping-connections needs a comma list of counts from 1 to 4096, not 0" --sleeping-connections 0
expect "--idle-connections: Value 20000 not in range 0 to 10000" --idle-connections 20000
expect "--idle-seconds: Value 0 not in range 0.100000 to 3600" --idle-seconds 0
exit $((failures > 0))
