#!/usr/bin/env bash
# catcache-instructions.sh: what the catalog cache's protection against
# bloat costs on its hit path, in instructions and in time.
#
# Builds keel (RelWithDebInfo, no tests) five times in temporary build
# directories: KEEL_CATCACHE_PRUNE=OFF (the protection compiled out), and
# PRUNE=ON with KEEL_CATCACHE_WIRING=0 (keel's design), 1 (a run-time
# branch on "pruning enabled" in the search routine), 2 (the search
# routine through a function pointer) and 3 (the 1..4-key entry points
# through function pointers).  In each, `keel bench catcache DIR --loop N`
# runs exactly N lookups + releases of each of three kinds of cache hit (1
# key, 3 keys, a cached miss) in the functions bench_catcache_loop_hit1,
# _hit3 and _negative, which callgrind counts alone
# (--toggle-collect=bench_catcache_loop*).  Two values of N are run and the
# difference taken, so that what the loops cost once (their calls, the
# warm-up through them) cancels:
#     instructions per lookup = (I(N2) - I(N1)) / (3 * (N2 - N1))
# and per kind from callgrind_annotate's inclusive count of each function,
# with the part spent in the string and hash library functions that name
# keys call (strlen, XXH3; the name comparison is inline).  A library
# function's count can depend on where its arguments lie in memory, so
# every count is the mean over several heap layouts (the database opened
# under paths whose lengths are 16 bytes apart, which shifts what is
# allocated after the path).
# Then each PRUNE=ON build is timed against the OFF build with the same
# loops (mean of the three kinds' ns per lookup), the two builds' runs
# alternating (OFF first in odd pairs, second in even ones): reported as
# the ratio of the medians and the mean of the per-pair ratios.
# Instruction counts settle differences that timing on a shared machine
# cannot resolve.
#
# The last line printed is `extra_instructions_per_lookup X`: keel's
# design (PRUNE=ON, WIRING=0) minus PRUNE=OFF, per lookup of the mix; the
# line before it is the same outside those library functions.
#
# Environment: JOBS (parallel compile jobs, default nproc), N1 and N2
# (lookups of each kind counted, default 20000 and 60000), TIME_N (lookups
# of each kind per timed round, default 1000000; a timed run reports the
# fastest of 5 rounds), PAIRS (timed pairs per build, default 15), LAYOUTS
# (heap layouts counted, default 4), KEEP=1 keeps the work directory.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
jobs=${JOBS:-$(nproc)}
n1=${N1:-20000}
n2=${N2:-60000}
time_n=${TIME_N:-1000000}
pairs=${PAIRS:-15}
layouts=${LAYOUTS:-4}

if ! command -v valgrind >/dev/null 2>&1; then
    echo "catcache-instructions.sh: valgrind is not installed" \
         "(it counts the instructions); install it and rerun" >&2
    exit 1
fi
if [ "$n2" -le "$n1" ]; then
    echo "catcache-instructions.sh: N2 must be larger than N1" >&2
    exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/keel-catcache-instr-XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
    echo "work directory: $work" >&2
else
    trap 'rm -rf "$work"' EXIT
fi

# name, cmake options, description
builds=(off on w1 w2 w3)
declare -A opts=(
    [off]="-DKEEL_CATCACHE_PRUNE=OFF"
    [on]="-DKEEL_CATCACHE_PRUNE=ON -DKEEL_CATCACHE_WIRING=0"
    [w1]="-DKEEL_CATCACHE_PRUNE=ON -DKEEL_CATCACHE_WIRING=1"
    [w2]="-DKEEL_CATCACHE_PRUNE=ON -DKEEL_CATCACHE_WIRING=2"
    [w3]="-DKEEL_CATCACHE_PRUNE=ON -DKEEL_CATCACHE_WIRING=3"
)
declare -A desc=(
    [off]="PRUNE=OFF (compiled out)"
    [on]="PRUNE=ON, wiring 0 (keel)"
    [w1]="PRUNE=ON, wiring 1 (branch)"
    [w2]="PRUNE=ON, wiring 2 (fn ptr search)"
    [w3]="PRUNE=ON, wiring 3 (fn ptr entry)"
)

for b in "${builds[@]}"; do
    echo "building $b: ${opts[$b]}" >&2
    # shellcheck disable=SC2086
    if ! cmake -S "$src" -B "$work/build-$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
            -DKEEL_TESTS=OFF ${opts[$b]} >"$work/build-$b.log" 2>&1 ||
       ! cmake --build "$work/build-$b" --target keel_cmd -j "$jobs" \
            >>"$work/build-$b.log" 2>&1; then
        echo "catcache-instructions.sh: build $b failed:" >&2
        tail -20 "$work/build-$b.log" >&2
        exit 1
    fi
done

db="$work/db"
# Creates the database and the benchmark's tables once; every build then
# opens the same one.
"$work/build-off/keel" bench catcache "$db" --loop 1 >/dev/null
# Copies of it under names 16 bytes apart: the engine keeps the path on
# the heap, so each shifts the addresses of what is allocated after it
# (the cache's entries among them) by 16 bytes.
dbs=("$db")
for ((l = 1; l < layouts; l++)); do
    d="$db-$(printf "%$((16 * l - 1))s" "" | tr ' ' x)"
    cp -r "$db" "$d"
    dbs+=("$d")
done

# Instructions that callgrind collected in bench_catcache_loop (its
# "totals:" line, or "summary:" where totals are absent).
count_instructions() { # build n db
    local out="$work/callgrind.$1.$2"
    valgrind --tool=callgrind --callgrind-out-file="$out" \
        --toggle-collect='bench_catcache_loop*' \
        "$work/build-$1/keel" bench catcache "$3" --loop "$2" \
        >"$out.stdout" 2>"$out.stderr" || {
        echo "catcache-instructions.sh: callgrind run of $1 failed:" >&2
        tail -20 "$out.stderr" >&2
        exit 1
    }
    if grep -q '^warning:' "$out.stdout"; then
        grep '^warning:' "$out.stdout" >&2
    fi
    local total kinds
    total=$(awk '/^totals:/ { t = $2 } /^summary:/ { s = $2 }
         END { if (t != "") print t; else if (s != "") print s; else exit 1 }' \
        "$out")
    # Each loop function's inclusive count, and what the string and hash
    # library functions they call (strcmp, strlen, XXH3) cost: the lines
    # that name a function's object.
    kinds=$(callgrind_annotate --inclusive=yes "$out" 2>/dev/null | awk '
        function add(k) { gsub(",", "", $1); v[k] += $1 }
        /bench_catcache_loop_hit1[^ ]* \[/ { add("hit1") }
        /bench_catcache_loop_hit3[^ ]* \[/ { add("hit3") }
        /bench_catcache_loop_negative[^ ]* \[/ { add("neg") }
        /:(__)?(str|mem)[a-z0-9_]* \[/ || /:XXH[A-Za-z0-9_]* \[/ { add("lib") }
        END { printf "%d %d %d %d", v["hit1"], v["hit3"], v["neg"], v["lib"] }')
    echo "$total $kinds"
}

# Nanoseconds per lookup of one timed --loop run (the fastest of 5 rounds
# of each kind).
time_loop() { # build
    "$work/build-$1/keel" bench catcache "$db" --loop "$time_n" --rounds 5 |
        awk '/^loop_ns_per_lookup/ { print $2 }'
}

# Per build and heap layout: the counts of N2 minus those of N1 (total,
# hit1, hit3, negative, libraries), one line per layout; then per build
# their mean per lookup: of the mix, of each kind, of the mix in the
# library string and hash functions.
declare -A ipl kind lib
for b in "${builds[@]}"; do
    echo "counting instructions: $b ($layouts heap layouts)" >&2
    : >"$work/count.$b"
    for d in "${dbs[@]}"; do
        c1=$(count_instructions "$b" "$n1" "$d")
        c2=$(count_instructions "$b" "$n2" "$d")
        awk -v a="$c1" -v b="$c2" 'BEGIN { split(a, x, " "); split(b, y, " ")
            for (i = 1; i <= 5; i++) printf "%d ", y[i] - x[i]; print "" }' \
            >>"$work/count.$b"
    done
    read -r "ipl[$b]" "kind[$b]" "lib[$b]" < <(awk -v d="$((n2 - n1))" '
        { for (i = 1; i <= 5; i++) s[i] += $i; n++ }
        END { printf "%.4f %.2f/%.2f/%.2f %.4f\n", s[1] / (3 * d * n),
                  s[2] / (d * n), s[3] / (d * n), s[4] / (d * n),
                  s[5] / (3 * d * n) }' "$work/count.$b")
done
# keel's design minus OFF per lookup, in each layout.
by_layout=$(paste -d ' ' "$work/count.on" "$work/count.off" | awk -v d="$((n2 - n1))" '
    { printf "%s%.2f", (NR > 1 ? " " : ""), ($1 - $6) / (3 * d) }')

# The median of column col of a file of numbers.
median() { # file col
    awk -v c="$2" '{ print $c }' "$1" | sort -g |
        awk '{ v[NR] = $1 }
             END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Interleaved timing of each PRUNE=ON build against the OFF build.
declare -A tratio tmean
for b in on w1 w2 w3; do
    echo "timing $b against off: $pairs pairs" >&2
    : >"$work/time.$b"
    for ((p = 1; p <= pairs; p++)); do
        if ((p % 2)); then
            toff=$(time_loop off)
            tb=$(time_loop "$b")
        else
            tb=$(time_loop "$b")
            toff=$(time_loop off)
        fi
        echo "$toff $tb" >>"$work/time.$b"
    done
    tratio[$b]=$(awk -v a="$(median "$work/time.$b" 1)" \
        -v b="$(median "$work/time.$b" 2)" 'BEGIN { printf "%.4f", b / a }')
    tmean[$b]=$(awk '{ s += $2 / $1; n++ } END { printf "%.4f", s / n }' \
        "$work/time.$b")
    echo "  ns per lookup (off, $b) per pair: $(tr '\n' ';' <"$work/time.$b")" >&2
done

echo
echo "catalog cache hit path: instructions per lookup + release (callgrind," \
     "N = $n1 and $n2 lookups of each of 3 kinds, difference; mean of" \
     "$layouts heap layouts);"
echo "time ratio vs the PRUNE=OFF build: $pairs interleaved pairs of runs" \
     "of 5 rounds of $time_n lookups per kind, the fastest counting (ratio" \
     "of medians, mean of pair ratios)"
echo
printf "  %-34s %12s %20s %8s %8s %14s %12s\n" build "instr/lookup" \
    "hit1/hit3/negative" "in libs" "vs off" "time (medians)" "time (pairs)"
for b in "${builds[@]}"; do
    r=$(awk -v a="${ipl[$b]}" -v o="${ipl[off]}" \
        'BEGIN { printf "%.4f", a / o }')
    if [ "$b" = off ]; then
        printf "  %-34s %12.2f %20s %8.2f %8s %14s %12s\n" "${desc[$b]}" \
            "${ipl[$b]}" "${kind[$b]}" "${lib[$b]}" "1.0000" "-" "-"
    else
        printf "  %-34s %12.2f %20s %8.2f %8s %14s %12s\n" "${desc[$b]}" \
            "${ipl[$b]}" "${kind[$b]}" "${lib[$b]}" "$r" "${tratio[$b]}" \
            "${tmean[$b]}"
    fi
done
echo "  (in libs: per lookup of the mix, inside strlen and XXH3, which" \
     "the name key of the negative lookups calls)"
echo "  keel's design minus OFF, instructions per lookup in each of the" \
     "$layouts heap layouts: $by_layout"
echo
for b in w1 w2 w3; do
    awk -v b="$b" -v a="${ipl[$b]}" -v o="${ipl[off]}" -v t="${tratio[$b]}" \
        'BEGIN { printf "wiring_%s_instructions_per_lookup %.2f " \
                 "time_ratio_vs_off %s\n", substr(b, 2), a, t }'
done
awk -v a="${ipl[on]}" -v o="${ipl[off]}" \
    'BEGIN { printf "instruction_ratio_on_vs_off %.4f\n", a / o }'
awk -v a="${ipl[on]}" -v o="${ipl[off]}" -v la="${lib[on]}" -v lo="${lib[off]}" \
    'BEGIN { x = (a - la) - (o - lo); if (x > -0.05 && x < 0.05) x = 0
             printf "extra_instructions_per_lookup_outside_libs %.1f\n", x }'
awk -v a="${ipl[on]}" -v o="${ipl[off]}" \
    'BEGIN { x = a - o; if (x > -0.05 && x < 0.05) x = 0
             printf "extra_instructions_per_lookup %.1f\n", x }'
