#!/usr/bin/env bash
# bloat-instructions.sh: what the catalog cache's pruning costs the bloat
# scenario's transaction (the select-only transaction plus one look-up of
# a name never asked for before), in instructions and in simulated cache
# misses, which repeat from run to run where its throughput does not.
#
# usage: bench/bloat-instructions.sh [DIR]
#
# Runs `keel bench bloat DIR --clients 1 --prune off|on --transactions N
# --pairs 1` under callgrind, counting the client thread alone
# (--toggle-collect=client_main*), for N = N1 and N = N2 in each setting.
# A transaction's cost is the difference over the difference in N:
#     per transaction = (I(N2) - I(N1)) / (N2 - N1)
# so that what a run costs once (the client's open and close, its cache
# samples, the warm-up) cancels.  With pruning on, each session's cache
# fills its 4 MiB target after about 32,000 transactions (a missing
# name's entry takes about 132 bytes) and from then on each transaction's
# new entry evicts an old one: N1 must lie past that point for the
# difference to be the steady state's, and the script says so when the
# N1 run evicted nothing.  With pruning off the cache grows by one entry
# a transaction throughout.
#
# With CACHE_SIM=1 (the default) callgrind also simulates the caches
# (first level and last level, sized as valgrind detects this machine's)
# and the misses per transaction are taken the same way: a model of the
# hardware, without its prefetchers, but one that repeats.
#
# Without DIR a scale-SCALE database is made in a temporary directory and
# removed afterwards.  keel bench bloat opens DIR read-only and leaves it
# as it was (the names probed are missing).
#
# Environment: KEEL (the keel binary, default build/release/keel of this
# tree: `make release`), N1 and N2 (default 50000 and 150000), SCALE
# (default 10), CACHE_SIM (1, or 0 to count instructions alone, about
# twice as fast), KEEP=1 keeps the work directory.
#
# The last line printed is `on_over_off_instructions R`: the instructions
# of a transaction with pruning on over those with it off.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
keel=${KEEL:-$src/build/release/keel}
n1=${N1:-50000}
n2=${N2:-150000}
scale=${SCALE:-10}
cache_sim=${CACHE_SIM:-1}
me=bloat-instructions.sh

if ! command -v valgrind >/dev/null 2>&1; then
    echo "$me: valgrind is not installed (it counts the instructions);" \
         "install it and rerun" >&2
    exit 1
fi
if [ ! -x "$keel" ]; then
    echo "$me: no keel binary at $keel (run make release, or set KEEL)" >&2
    exit 1
fi
for v in "$n1" "$n2" "$scale"; do
    case $v in
    '' | *[!0-9]*)
        echo "$me: N1, N2 and SCALE must be whole numbers: '$v'" >&2
        exit 1
        ;;
    esac
done
case $cache_sim in
0 | 1) ;;
*)
    echo "$me: CACHE_SIM must be 0 or 1: '$cache_sim'" >&2
    exit 1
    ;;
esac
if [ "$n2" -le "$n1" ]; then
    echo "$me: N2 ($n2) must be larger than N1 ($n1)" >&2
    exit 1
fi
if [ $# -gt 1 ]; then
    echo "usage: $me [DIR]" >&2
    exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/keel-bloat-instr-XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
    echo "work directory: $work" >&2
else
    trap 'rm -rf "$work"' EXIT
fi

if [ $# -eq 1 ]; then
    db=$1
else
    db=$work/db
    echo "making a scale-$scale database in $db" >&2
    if ! "$keel" init "$db" --scale "$scale" >"$work/init.log" 2>&1; then
        echo "$me: keel init failed:" >&2
        tail -5 "$work/init.log" >&2
        exit 1
    fi
fi

sim=--cache-sim=no
[ "$cache_sim" = 1 ] && sim=--cache-sim=yes

# event NAME FILE: the total of callgrind event NAME in FILE (0 if the
# run did not record it).
event() {
    awk -v want="$1" '
        /^events:/ { for (i = 2; i <= NF; i++) col[$i] = i - 1 }
        /^totals:/ { if (want in col) v = $(col[want] + 1) }
        END { print (v == "" ? 0 : v) }' "$2"
}

for setting in off on; do
    for n in "$n1" "$n2"; do
        out=$work/$setting.$n
        echo "callgrind: pruning $setting, $n transactions" >&2
        if ! valgrind --tool=callgrind "$sim" --toggle-collect='client_main*' \
            --callgrind-out-file="$out.cg" \
            "$keel" bench bloat "$db" --clients 1 --prune "$setting" \
            --transactions "$n" --pairs 1 --json "$out.json" \
            >"$out.log" 2>&1; then
            echo "$me: keel bench bloat failed under callgrind:" >&2
            grep -v "^==\|^--" "$out.log" | tail -5 >&2
            exit 1
        fi
        if [ "$(event Ir "$out.cg")" = 0 ]; then
            echo "$me: callgrind counted nothing in client_main" \
                 "(was $keel built with its symbols?)" >&2
            exit 1
        fi
    done
done

# per SETTING EVENT...: the sum of the events per transaction, N1 to N2.
per() {
    local setting=$1 a=0 b=0 e
    shift
    for e in "$@"; do
        a=$((a + $(event "$e" "$work/$setting.$n1.cg")))
        b=$((b + $(event "$e" "$work/$setting.$n2.cg")))
    done
    # A count that moved by less than a twentieth a transaction prints as
    # 0.0, not -0.0 (cache misses vary by a few between runs).
    awk -v a="$a" -v b="$b" -v d="$((n2 - n1))" \
        'BEGIN { x = (b - a) / d; if (x > -0.05 && x < 0.05) x = 0;
                 printf "%.1f", x }'
}

printf '%-8s %14s' pruning instructions
[ "$cache_sim" = 1 ] && printf ' %16s %16s %16s' I1_misses D1_misses LL_misses
printf '   (per transaction, %s to %s)\n' "$n1" "$n2"
for setting in off on; do
    printf '%-8s %14s' "$setting" "$(per "$setting" Ir)"
    [ "$cache_sim" = 1 ] && printf ' %16s %16s %16s' \
        "$(per "$setting" I1mr)" "$(per "$setting" D1mr D1mw)" \
        "$(per "$setting" ILmr DLmr DLmw)"
    printf '\n'
done

evicted=$(grep -o '"evictions": [0-9]*' "$work/on.$n1.json" | head -1 |
          grep -o '[0-9]*$' || true)
if [ "${evicted:-0}" = 0 ]; then
    echo "note: with pruning on, the cache had evicted nothing by" \
         "$n1 transactions: it had not reached its memory target, so" \
         "these are not the steady state's counts (raise N1)"
fi

off=$(per off Ir)
on=$(per on Ir)
echo "instructions_per_txn_off $off"
echo "instructions_per_txn_on $on"
awk -v a="$on" -v b="$off" 'BEGIN { printf "on_over_off_instructions %.4f\n", a / b }'
