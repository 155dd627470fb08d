#!/bin/sh
# interleave.sh runs BenchmarkRoundTrip with every transport in a process of
# its own, round after round, so that no column owes its figures to where it
# runs in the process (after which others, on how large a heap) and the
# machine's drift spreads over all columns alike. BENCH=InProcess runs
# BenchmarkInProcess instead (no network). TRANSPORTS, a space-separated
# list, runs only those (e.g. TRANSPORTS="bare recorder otelhttp").
# Usage, from bench/:
#
#	./interleave.sh [rounds [calls]] > bench.txt
#	benchstat -col /transport bench.txt
set -eu
rounds=${1:-8}
calls=${2:-3000}
bench=Benchmark${BENCH:-RoundTrip}
bin=$(mktemp)
trap 'rm -f "$bin"' EXIT
go test -c -o "$bin" .
# The transports, in the order the benchmark lists them.
transports=$("$bin" -test.run '^$' -test.bench "^$bench/call=json/" -test.benchtime 1x |
	sed -n "s|^$bench/call=json/transport=\([^ 	]*\)[ 	].*|\1|p" | sed 's/-[0-9]*$//')
if [ -n "${TRANSPORTS:-}" ]; then
	for t in $TRANSPORTS; do
		printf '%s\n' "$transports" | grep -qxF -- "$t" || {
			echo "interleave.sh: no transport $t in $bench" >&2
			exit 1
		}
	done
	transports=$TRANSPORTS
fi
[ -n "$transports" ] || {
	echo "interleave.sh: found no transports in $bench" >&2
	exit 1
}
i=0
while [ "$i" -lt "$rounds" ]; do
	for t in $transports; do
		pattern=$(printf '%s' "$t" | sed 's/[+.]/\\&/g')
		"$bin" -test.run '^$' -test.bench "^$bench/call=(json|stream)/transport=$pattern\$" \
			-test.benchtime "${calls}x" -test.benchmem
	done
	i=$((i + 1))
done
