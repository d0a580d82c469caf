#!/bin/sh
# server_sql.sh KEEL SRCDIR WORKDIR [NAME ...]
#
# keel serve driven by a real psql, as PostgreSQL's regression tests drive
# postgres: a fresh database, a server on a free port (TCP 127.0.0.1 and a
# Unix socket in WORKDIR), and each tests/sql/NAME.sql run through
# `psql -X -a -q` over the Unix socket, its output (stdout and stderr)
# compared with tests/sql/NAME.out.  Dropping a NAME.sql/NAME.out pair in
# tests/sql/ adds a test; NAMEs limit the run to those.  Then a query over
# TCP, SIGTERM, a clean exit (status 0, socket file removed) and a
# `keel check` of the database.  Each file runs in a session of its own;
# the files share the database, in name order.
#
# Exit status 0 when everything matched; 1 otherwise, with the diffs and
# the server's log; 77 (skipped) without psql.
set -u
KEEL=$1
SRC=$2
WORK=$3
shift 3

PSQL=${PSQL:-psql}
if ! command -v "$PSQL" >/dev/null 2>&1; then
    echo "server_sql: psql not found: skipped"
    exit 77
fi

rm -rf "$WORK"
mkdir -p "$WORK/sock" "$WORK/results" || exit 1
LOG=$WORK/server.log
PID=

fail() {
    echo "server_sql: FAILED: $*"
    if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
        kill -TERM "$PID"
        wait "$PID"
    fi
    echo "---- server log ($LOG) ----"
    tail -n 60 "$LOG" 2>/dev/null
    exit 1
}

"$KEEL" init "$WORK/db" >/dev/null || fail "keel init"

# A free port: ports in use are skipped (the server exits at once and says
# so); one derived from the process id keeps parallel runs apart.
tries=0
while :; do
    tries=$((tries + 1))
    [ $tries -gt 30 ] && fail "no free port found"
    PORT=$((20000 + ($$ * 7 + tries * 997) % 40000))
    "$KEEL" serve "$WORK/db" --port $PORT --socket-dir "$WORK/sock" \
        >"$LOG" 2>&1 &
    PID=$!
    i=0
    while [ $i -lt 300 ]; do
        grep -q "ready to accept connections" "$LOG" && break
        kill -0 "$PID" 2>/dev/null || break
        sleep 0.05
        i=$((i + 1))
    done
    grep -q "ready to accept connections" "$LOG" && break
    if kill -0 "$PID" 2>/dev/null; then
        fail "the server did not become ready"
    fi
    wait "$PID"
    PID=
    grep -q -e "could not listen" -e "another server" "$LOG" ||
        fail "keel serve did not start"
done

export PGCLIENTENCODING=UTF8 PGTZ=UTC PGDATESTYLE="ISO, MDY"
export PGUSER=keel PGDATABASE=keel PGAPPNAME=
unset PGSERVICE PGOPTIONS PGPASSWORD PGHOST PGHOSTADDR 2>/dev/null

if [ $# -eq 0 ]; then
    set -- $(cd "$SRC/tests/sql" && ls *.sql | sed 's/\.sql$//')
fi
failed=""
for name in "$@"; do
    "$PSQL" -X -a -q -h "$WORK/sock" -p $PORT <"$SRC/tests/sql/$name.sql" \
        >"$WORK/results/$name.out" 2>&1
    if diff -u "$SRC/tests/sql/$name.out" "$WORK/results/$name.out" \
        >"$WORK/results/$name.diff"; then
        echo "ok      $name"
        rm -f "$WORK/results/$name.diff"
    else
        echo "FAILED  $name"
        cat "$WORK/results/$name.diff"
        failed="$failed $name"
    fi
done

out=$("$PSQL" -X -At -h 127.0.0.1 -p $PORT -c "SELECT 1" 2>&1)
[ "$out" = "1" ] || failed="$failed tcp($out)"

kill -TERM "$PID"
wait "$PID"
rc=$?
PID=
[ $rc -eq 0 ] || fail "keel serve exited with status $rc after SIGTERM"
grep -q "database system is shut down" "$LOG" || fail "no clean shutdown"
[ -e "$WORK/sock/.s.PGSQL.$PORT" ] && fail "the socket file was left behind"
"$KEEL" check "$WORK/db" >"$WORK/check.out" 2>&1 ||
    fail "keel check: $(cat "$WORK/check.out")"
[ -z "$failed" ] || fail "differences in:$failed (results in $WORK/results)"
echo "server_sql: ok"
rm -rf "$WORK"
exit 0
