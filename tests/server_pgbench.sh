#!/bin/sh
# server_pgbench.sh KEEL WORKDIR
#
# Real pgbench against keel serve: `pgbench -i -I dtGvp -s 1` (server-side
# generation, its row counts checked), `pgbench -i -s 1` (pgbench's own
# initialization: DROP, CREATE, TRUNCATE, INSERT, COPY, VACUUM, ALTER
# TABLE ADD PRIMARY KEY), then each built-in script (select-only,
# tpcb-like, simple-update) in each protocol mode (simple, extended,
# prepared) for a second with 3 clients, serialization failures retried
# (--max-tries).  Every run must process transactions; after the
# tpcb-like runs the account, teller and branch totals must each equal
# the history's, after the simple-update runs the accounts' must; after
# SIGTERM `keel check` must pass.  Nothing may fail but the conflicts
# pgbench retries: not even its catalog query before a run, which asks
# where pgbench_accounts is and whether it is partitioned.
#
# Exit status 0 when all of that holds; 1 otherwise, with pgbench's
# output and the server's log; 77 (skipped) without pgbench or psql.
set -u
KEEL=$1
WORK=$2
SECONDS_EACH=${KEEL_PGBENCH_SECONDS:-1}

for tool in pgbench psql; do
    if ! command -v $tool >/dev/null 2>&1; then
        echo "server_pgbench: $tool not found: skipped"
        exit 77
    fi
done

rm -rf "$WORK"
mkdir -p "$WORK/sock" || exit 1
LOG=$WORK/server.log
PID=

fail() {
    echo "server_pgbench: FAILED: $*"
    if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
        kill -TERM "$PID"
        wait "$PID"
    fi
    echo "---- server log ($LOG) ----"
    grep -v " LOG: " "$LOG" 2>/dev/null | tail -n 40
    exit 1
}

"$KEEL" init "$WORK/db" >/dev/null || fail "keel init"
tries=0
while :; do
    tries=$((tries + 1))
    [ $tries -gt 30 ] && fail "no free port found"
    PORT=$((20000 + ($$ * 13 + tries * 991) % 40000))
    "$KEEL" serve "$WORK/db" --port $PORT --socket-dir "$WORK/sock" \
        --listen '' >"$LOG" 2>&1 &
    PID=$!
    i=0
    while [ $i -lt 300 ]; do
        grep -q "ready to accept connections" "$LOG" && break
        kill -0 "$PID" 2>/dev/null || break
        sleep 0.05
        i=$((i + 1))
    done
    grep -q "ready to accept connections" "$LOG" && break
    kill -0 "$PID" 2>/dev/null && fail "the server did not become ready"
    wait "$PID"
    PID=
    grep -q -e "could not listen" -e "another server" "$LOG" ||
        fail "keel serve did not start"
done

export PGHOST="$WORK/sock" PGPORT=$PORT PGUSER=keel PGDATABASE=keel
unset PGSERVICE PGOPTIONS PGPASSWORD PGHOSTADDR 2>/dev/null

# Server-side generation first (INSERT ... SELECT from generate_series),
# checked by its counts, then pgbench's default client-side COPY, which
# the runs below use.
pgbench -i -I dtGvp -s 1 >"$WORK/init-server.out" 2>&1 ||
    fail "pgbench -i -I dtGvp: $(cat "$WORK/init-server.out")"
grep -q "^done in" "$WORK/init-server.out" ||
    fail "pgbench -i -I dtGvp: $(cat "$WORK/init-server.out")"
counts=$(psql -X -A -t -c "SELECT (SELECT count(*) FROM pgbench_accounts) || ' ' ||
    (SELECT count(*) FROM pgbench_tellers) || ' ' ||
    (SELECT count(*) FROM pgbench_branches) || ' ' ||
    (SELECT max(aid) FROM pgbench_accounts)" 2>&1)
[ "$counts" = "100000 10 1 100000" ] ||
    fail "pgbench -i -I dtGvp made the wrong rows: $counts"
echo "ok      pgbench -i -I dtGvp -s 1: $counts"

pgbench -i -s 1 >"$WORK/init.out" 2>&1 ||
    fail "pgbench -i: $(cat "$WORK/init.out")"
grep -q "^done in" "$WORK/init.out" || fail "pgbench -i: $(cat "$WORK/init.out")"
echo "ok      pgbench -i -s 1"

# Runs one built-in script in one protocol mode (extra options after).
run() {
    script=$1
    mode=$2
    shift 2
    out=$WORK/$script-$mode.out
    pgbench -b $script -M $mode -c 3 -j 3 -T $SECONDS_EACH --max-tries=1000 \
        "$@" >"$out" 2>&1 || fail "pgbench -b $script -M $mode: $(cat "$out")"
    n=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$out")
    [ -n "$n" ] && [ "$n" -gt 0 ] ||
        fail "pgbench -b $script -M $mode processed nothing: $(cat "$out")"
    echo "ok      pgbench -b $script -M $mode: $n transactions"
}

# The totals of the four tables' balance columns, |-separated.
totals() {
    out=""
    for q in "sum(abalance) FROM pgbench_accounts" \
             "sum(tbalance) FROM pgbench_tellers" \
             "sum(bbalance) FROM pgbench_branches" \
             "sum(delta) FROM pgbench_history"; do
        v=$(psql -X -At -c "SELECT $q" 2>&1) || fail "SELECT $q: $v"
        [ -n "$v" ] || v=0
        out="$out|$v"
    done
    echo "${out#|}"
}

for mode in simple extended prepared; do
    run select-only $mode
done
# tpcb-like: the first run empties the history (as pgbench does before a
# run, after its VACUUMs); the others keep it (-n).  Each transaction adds
# its delta to an account, a teller and a branch, and records it.
run tpcb-like simple
run tpcb-like extended -n
run tpcb-like prepared -n
t=$(totals)
echo "$t" | awk -F'|' '{ exit !($1 == $2 && $2 == $3 && $3 == $4) }' ||
    fail "balances do not add up after tpcb-like: $t"
echo "ok      balances add up: $t"
# simple-update changes only accounts, and records the change.
for mode in simple extended prepared; do
    run simple-update $mode -n
done
t=$(totals)
echo "$t" | awk -F'|' '{ exit !($1 == $4 && $2 == $3) }' ||
    fail "balances do not add up after simple-update: $t"
echo "ok      accounts add up to the history: $t"

# Nothing pgbench sent failed but the conflicts it retries: its question
# of where pgbench_accounts is and whether it is partitioned (a query of
# pg_catalog's views) included.
bad=$(grep "ERROR:" "$LOG" | grep -v "could not serialize access")
[ -z "$bad" ] || fail "errors in the server log: $bad"
bad=$(grep -il "error" "$WORK"/*.out)
[ -z "$bad" ] || fail "errors in pgbench's output: $(cat $bad)"
echo "ok      no errors but serialization conflicts"

kill -TERM "$PID"
wait "$PID"
rc=$?
PID=
[ $rc -eq 0 ] || fail "keel serve exited with status $rc after SIGTERM"
"$KEEL" check "$WORK/db" >"$WORK/check.out" 2>&1 ||
    fail "keel check: $(cat "$WORK/check.out")"
echo "server_pgbench: ok"
rm -rf "$WORK"
exit 0
