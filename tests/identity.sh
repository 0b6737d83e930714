#!/usr/bin/env bash
# tests/identity.sh: is a refactor behaviour-preserving? (issue 42, item 8)
#
# Runs two lancet binaries, BEFORE and AFTER, with the same arguments on
# each target and seed, and compares what they wrote: the statement logs
# (<run>/statements/) byte for byte, and the findings (findings/*.sql,
# *.json, index.json, index.md) and the summary's counts once what
# legitimately differs between two runs is masked: the run id and the
# token in database names, the output paths, times and durations.
# One line per target and seed; exit status 1 if any differ, 2 on bad
# input or a server that did not start. A seed that differs is run once
# more with BEFORE: if that differs from BEFORE's first run, the line says
# "unstable" (the DBMS did not repeat itself; rerun the seed).
#
# Usage:
#   bash tests/identity.sh [OPTIONS] BEFORE AFTER TARGET[:SEEDS]... [-- LANCET-ARGS]
#
#   TARGET   sqlite | duckdb | postgres | citus | mariadb, each with an
#            optional -txn suffix (sqlite-txn, postgres-txn, ...) for
#            `--oracle txn`
#   SEEDS    1-40, 3, or 1,5,9 (default 1-10)
#   LANCET-ARGS  added to every run of both binaries (e.g. --oracle knobs,
#            --duckdb-lib OLD.so, --inject-fault drop-row for findings)
#
# Options:
#   --checks N       checks per run (default: 4000 sqlite, 2000 duckdb,
#                    1500 postgres/mariadb, 600 citus; txn: 100 schedules)
#   --per-database N --checks-per-database (default: checks / 5, so that
#                    each run makes several databases)
#   --reduce         reduce findings (default: --no-reduce; reduction has
#                    a time limit, so its output may differ between runs)
#   --out DIR        keep the runs here (default: a temporary directory,
#                    removed at the end unless something differs)
#
# Example (issue 42's list):
#   bash tests/identity.sh /tmp/base/lancet target/release/lancet \
#     sqlite:1-40 postgres:1-15 citus:1-3 duckdb:1-10 \
#     sqlite-txn:1-10 postgres-txn:1-10
#
# Servers: `postgres` starts a throwaway PostgreSQL from
# $LANCET_PG18_BINDIR (else $LANCET_PG15_BINDIR), `citus` a coordinator
# and two workers from the Citus built into $LANCET_PG18_BINDIR's install,
# `mariadb` a throwaway mariadbd, as the testkit does (testkit/src/lib.rs,
# citus.rs, mariadb.rs): 127.0.0.1, a free port, data on /dev/shm, run as
# `postgres` or `mysql` when we are root, stopped by a trap even on
# failure. One server per target serves every seed of both binaries.
# `duckdb` loads $LANCET_DUCKDB_LIB (`bash tests/engines.sh | grep
# ^LANCET_` prints it). The txn oracle refuses --log-statements in older
# binaries: then neither run logs statements, and only the findings and
# summary counts are compared (the line says so).

set -uo pipefail

usage() {
    sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
}

die() {
    echo "identity.sh: $*" >&2
    exit 2
}

# ---------------------------------------------------------------- arguments

checks_opt=""
per_db_opt=""
reduce=no
out_opt=""
targets=()
extra=()
positional=()
while (($#)); do
    case $1 in
        --checks) checks_opt=${2:?}; shift 2 ;;
        --per-database) per_db_opt=${2:?}; shift 2 ;;
        --reduce) reduce=yes; shift ;;
        --out) out_opt=${2:?}; shift 2 ;;
        -h | --help) usage ;;
        --) shift; extra=("$@"); break ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) positional+=("$1"); shift ;;
    esac
done
((${#positional[@]} >= 3)) || usage
before=$(realpath "${positional[0]}") || die "no binary ${positional[0]}"
after=$(realpath "${positional[1]}") || die "no binary ${positional[1]}"
targets=("${positional[@]:2}")
[[ -x $before ]] || die "$before is not executable"
[[ -x $after ]] || die "$after is not executable"

# "1-3,7" -> "1 2 3 7"
expand_seeds() {
    local part parts i list=()
    IFS=, read -ra parts <<<"$1"
    for part in "${parts[@]}"; do
        if [[ $part =~ ^([0-9]+)-([0-9]+)$ ]]; then
            for ((i = BASH_REMATCH[1]; i <= BASH_REMATCH[2]; i++)); do
                list+=("$i")
            done
        elif [[ $part =~ ^[0-9]+$ ]]; then
            list+=("$part")
        else
            die "bad seeds '$1'"
        fi
    done
    echo "${list[@]}"
}

for t in "${targets[@]}"; do
    case ${t%%:*} in
        sqlite | duckdb | postgres | citus | mariadb) ;;
        sqlite-txn | postgres-txn | citus-txn | mariadb-txn) ;;
        *) die "unknown target '${t%%:*}'" ;;
    esac
    [[ $t == *:* ]] && expand_seeds "${t#*:}" >/dev/null
done

if [[ -n $out_opt ]]; then
    mkdir -p "$out_opt" || die "cannot create $out_opt"
    out=$(realpath "$out_opt")
    keep=yes
else
    out=$(mktemp -d /tmp/lancet-identity.XXXXXX)
    keep=no
fi

# ---------------------------------------------------------------- servers

# Directories to remove and commands to run when the script ends, however.
cleanups=()
cleanup() {
    local i
    for ((i = ${#cleanups[@]} - 1; i >= 0; i--)); do
        eval "${cleanups[i]}" >/dev/null 2>&1
    done
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

is_root() { [[ $(id -u) == 0 ]]; }

# Runs a command as `user` when we are root (servers refuse to run as root).
as_user() {
    local user=$1
    shift
    if is_root; then
        (cd / && runuser -u "$user" -- "$@")
    else
        "$@"
    fi
}

# A RAM disk if there is one (as the testkit), else /tmp.
server_root() {
    if [[ -d /dev/shm && -w /dev/shm ]]; then echo /dev/shm; else echo /tmp; fi
}

# A port nobody listens on right now (a race remains: callers retry).
free_port() {
    local port
    while :; do
        port=$((20000 + RANDOM % 40000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            echo "$port"
            return
        fi
    done
}

pg_bindir() {
    local dir=${LANCET_PG18_BINDIR:-${LANCET_PG15_BINDIR:-}}
    [[ -n $dir && -x $dir/initdb ]] ||
        die "no PostgreSQL: set LANCET_PG18_BINDIR or LANCET_PG15_BINDIR (bash tests/engines.sh | grep ^LANCET_)"
    echo "$dir"
}

# Starts a throwaway PostgreSQL; extra arguments are `-c name=value`
# settings. Sets `port`; the trap stops it. (Not called in $(...): the
# trap's list must grow in this shell.)
start_pg() {
    local bindir=$1
    shift
    local dir opts
    [[ -x $bindir/initdb ]] || die "no initdb in '$bindir'"
    dir=$(mktemp -d "$(server_root)/lancet-identity-pg.XXXXXX") || die "mktemp"
    cleanups+=("rm -rf '$dir'")
    is_root && chown postgres "$dir"
    as_user postgres "$bindir/initdb" -D "$dir/data" -U postgres -E UTF8 \
        --locale=C --no-sync -A trust >"$dir/initdb.log" 2>&1 ||
        die "initdb failed: $(cat "$dir/initdb.log")"
    for _ in 1 2 3 4 5; do
        port=$(free_port)
        opts="-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off"
        opts+=" -c synchronous_commit=off -c full_page_writes=off"
        opts+=" -c max_connections=60 -c shared_buffers=64MB $*"
        if as_user postgres "$bindir/pg_ctl" -D "$dir/data" -l "$dir/log" \
            -o "$opts" -w -t 60 start >/dev/null 2>&1; then
            cleanups+=("as_user postgres '$bindir/pg_ctl' -D '$dir/data' -m immediate -w stop")
            return
        fi
    done
    die "PostgreSQL did not start; its log: $(cat "$dir/log")"
}

pg_sql() {
    local bindir=$1 port=$2 sql=$3
    "$bindir/psql" -X -A -t -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" \
        -U postgres -d postgres -c "$sql"
}

# A coordinator and two workers, as testkit/src/citus.rs makes them.
# Sets `port` to the coordinator's.
start_citus() {
    local bindir node ports=()
    bindir=${LANCET_PG18_BINDIR:-}
    [[ -n $bindir && -f $bindir/../lib/citus.so ]] ||
        die "no Citus: LANCET_PG18_BINDIR must name the PostgreSQL 18 install tests/engines.sh built Citus into"
    for node in coordinator worker1 worker2; do
        start_pg "$bindir" -c shared_preload_libraries=citus \
            -c "citus.node_conninfo='sslmode=disable'" \
            -c max_prepared_transactions=100 -c max_worker_processes=32 \
            -c max_connections=120
        pg_sql "$bindir" "$port" "CREATE EXTENSION citus" >/dev/null ||
            die "CREATE EXTENSION citus failed on the $node"
        ports+=("$port")
    done
    pg_sql "$bindir" "${ports[0]}" \
        "SELECT citus_set_coordinator_host('127.0.0.1', ${ports[0]})" >/dev/null ||
        die "registering the coordinator failed"
    for port in "${ports[@]:1}"; do
        pg_sql "$bindir" "${ports[0]}" "SELECT citus_add_node('127.0.0.1', $port)" >/dev/null ||
            die "registering the worker on port $port failed"
    done
    port=${ports[0]}
}

# Stops the mariadbd started as `pid` (a process group of its own), as
# the testkit does: SIGTERM, a graceful shutdown, SIGKILL after 20 s.
stop_mariadb() {
    local pid=$1 dir=$2 server i
    server=$(cat "$dir/pid" 2>/dev/null)
    kill -TERM "$pid" ${server:+"$server"} 2>/dev/null
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || { [[ -n $server ]] && kill -0 "$server" 2>/dev/null; } || break
        sleep 0.2
    done
    kill -KILL -- "-$pid" ${server:+"$server"} 2>/dev/null
    return 0
}

# A throwaway mariadbd with the `lancet` account and the `test` database,
# as testkit/src/mariadb.rs makes it. Sets `port`.
start_mariadb() {
    local mariadbd install client dir i pid user=mysql as=()
    mariadbd=$(PATH=/usr/sbin:/usr/local/sbin:$PATH command -v mariadbd) || die "no mariadbd"
    install=$(command -v mariadb-install-db) || die "no mariadb-install-db"
    client=$(command -v mariadb) || die "no mariadb client"
    dir=$(mktemp -d /tmp/lancet-identity-my.XXXXXX) || die "mktemp"
    cleanups+=("rm -rf '$dir'")
    mkdir -p "$dir/tmp"
    if is_root; then
        chown -R "$user" "$dir"
        as=(--user="$user")
    fi
    (cd "$dir" && "$install" --no-defaults --datadir="$dir/data" --tmpdir="$dir/tmp" \
        --auth-root-authentication-method=normal --skip-test-db \
        --innodb-log-file-size=16M --innodb-buffer-pool-size=64M \
        "${as[@]}" </dev/null >"$dir/install.log" 2>&1) ||
        die "mariadb-install-db failed: $(cat "$dir/install.log")"
    for _ in 1 2 3 4 5; do
        port=$(free_port)
        (cd "$dir" && exec setsid "$mariadbd" --no-defaults --datadir="$dir/data" \
            --port="$port" --socket="$dir/sock" --tmpdir="$dir/tmp" \
            --pid-file="$dir/pid" --log-error="$dir/err.log" \
            --bind-address=127.0.0.1 --skip-name-resolve \
            --innodb-buffer-pool-size=64M --innodb-log-file-size=16M \
            --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 \
            --skip-log-bin --max-connections=100 \
            --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci \
            "${as[@]}" </dev/null >"$dir/out" 2>&1) &
        pid=$!
        cleanups+=("stop_mariadb $pid '$dir'")
        for ((i = 0; i < 300; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            if [[ $("$client" --no-defaults -N -B --connect-timeout=5 -h 127.0.0.1 \
                -P "$port" -u root -e 'SELECT @@socket' 2>/dev/null) == "$dir/sock" ]]; then
                "$client" --no-defaults --socket="$dir/sock" -u root -e \
                    "CREATE USER 'lancet'@'127.0.0.1' IDENTIFIED BY 'lancet-pw';
                     GRANT ALL ON *.* TO 'lancet'@'127.0.0.1';
                     CREATE DATABASE test;" || die "creating the lancet account failed"
                return
            fi
            sleep 0.1
        done
        kill -KILL -- "-$pid" 2>/dev/null
    done
    die "mariadbd did not start; its log: $(cat "$dir/err.log" "$dir/out" 2>/dev/null)"
}

# ---------------------------------------------------------------- comparing

# Writes FILE's text with what differs between two runs masked, to stdout.
# Statement logs get only the run's token (in database names), a txn
# run's server process ids (its lock-wait query names a session's
# backend) and, in the `-- error:` comments, the DBMS's excerpt of the
# query at the error
# (`LINE 1: ... ^`): DuckDB evaluates the parts of a query in parallel and
# names whichever failed first, so two runs of one binary differ there.
# Findings and summaries also get paths, times and durations masked, and
# JSON keys that hold times. A txn run's summary (kind txn-summary) also
# gets its outcome counts masked: which transactions commit, conflict
# (serialization failures, deadlocks) or wait depends on timing, and two
# runs of one binary on PostgreSQL differ there; the schedules per level
# and the findings stay compared.
mask() {
    local file=$1 run_dir=$2 run_id=$3 token=$4 kind=$5
    local sub=(-e "s#$run_dir#<run>#g" -e "s#$run_id#<run-id>#g" -e "s#$token#<token>#g")
    if [[ $kind == statements ]]; then
        # A txn run's observer asks the server whether a session waits for
        # a lock by its backend's process id, which the server assigns.
        sed "${sub[@]}" -E -e 's#^(-- error: .*) LINE [0-9]+: .*\^#\1 LINE <excerpt> ^#' \
            -e "s#^(SELECT count\(\*\) FROM pg_stat_activity WHERE pid = )[0-9]+#\1<pid>#" "$file"
    elif [[ $file == *.json ]]; then
        local txn='.'
        # Summaries before the one campaign for every oracle named the
        # transaction oracle's counts `transactions`; now `tallies`.
        [[ $kind == txn-summary ]] &&
            txn='(if has("transactions") then .tallies = .transactions | del(.transactions) else . end)
                | .statements = "<masked>" | .nonempty_share = "<masked>"
                | .tallies |= (if . == null then . else map_values(
                    .committed = "<masked>" | .conflicts = "<masked>"
                    | .undetermined = "<masked>") end)'
        jq "$txn"' | walk(if type == "object" then with_entries(
                if (.key | test("(^|_)(seconds|secs|ms|millis|elapsed|unix|time|timings|per_second|dbms_time_share|started|finished|host|findings_dir|run_id|lancet_version|slowest_shapes)$"))
                then .value = "<masked>" else . end) else . end)' "$file" |
            sed "${sub[@]}" -E -e 's#[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z?#<time>#g'
    else
        sed "${sub[@]}" -E \
            -e 's#[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z?#<time>#g' \
            -e 's#[0-9]+(\.[0-9]+)? ms\b#<ms> ms#g' \
            -e 's#\bin [0-9]+(\.[0-9]+)? s\b#in <s> s#g' \
            -e '/^-- lancet [^ ]+ finding:/s#lancet [^ ]+#lancet <version>#' \
            "$file"
    fi
}

# The files of one run to compare, relative to its directory.
run_files() {
    local dir=$1
    (cd "$dir" && {
        [[ -d statements ]] && find statements -type f
        [[ -d findings ]] && find findings -type f \( -name '*.sql' -o -name '*.json' -o -name 'index.md' \)
        [[ -f summary.json ]] && echo summary.json
    } | LC_ALL=C sort)
}

# Compares two runs (of a txn target if the third argument is txn);
# prints "identical (N files)" or "differs: FILE line L" followed by both
# versions of that line (indented), and returns 1.
compare_runs() {
    local a=$1 b=$2 txn=${3:-} na nb fa fb f kind line la lb
    local id_a id_b tok_a tok_b
    id_a=$(basename "$a")
    id_b=$(basename "$b")
    tok_a=${id_a##*-}
    tok_b=${id_b##*-}
    fa=$(run_files "$a")
    fb=$(run_files "$b")
    if [[ $fa != "$fb" ]]; then
        f=$(diff <(echo "$fa") <(echo "$fb") | grep '^[<>]' | head -1)
        case $f in
            '<'*) echo "differs: ${f#< } only in before" ;;
            *) echo "differs: ${f#> } only in after" ;;
        esac
        return 1
    fi
    na=$(grep -c . <<<"$fa")
    while read -r f; do
        [[ -z $f ]] && continue
        kind=findings
        [[ $f == statements/* ]] && kind=statements
        [[ $f == summary.json && $txn == txn ]] && kind="txn-summary"
        # Most files are the same even unmasked: mask only the others.
        cmp -s "$a/$f" "$b/$f" && continue
        if ! cmp -s <(mask "$a/$f" "$a" "$id_a" "$tok_a" "$kind") \
            <(mask "$b/$f" "$b" "$id_b" "$tok_b" "$kind"); then
            line=$(cmp <(mask "$a/$f" "$a" "$id_a" "$tok_a" "$kind") \
                <(mask "$b/$f" "$b" "$id_b" "$tok_b" "$kind") 2>&1 |
                sed -nE 's/.*line ([0-9]+).*/\1/p; s/.*EOF on [^ ]+( after.*line ([0-9]+))?.*/\2/p' | head -1)
            line=${line:-1}
            la=$(mask "$a/$f" "$a" "$id_a" "$tok_a" "$kind" | sed -n "${line}p" | cut -c1-300)
            lb=$(mask "$b/$f" "$b" "$id_b" "$tok_b" "$kind" | sed -n "${line}p" | cut -c1-300)
            echo "differs: $f line $line"
            echo "      before: $la"
            echo "      after:  $lb"
            return 1
        fi
    done <<<"$fa"
    nb=$(grep -c '^statements/' <<<"$fa")
    echo "identical ($na files, $nb statement logs)"
}

# ---------------------------------------------------------------- running

default_checks() {
    case $1 in
        *-txn) echo 100 ;;
        sqlite) echo 4000 ;;
        duckdb) echo 2000 ;;
        citus) echo 600 ;;
        *) echo 1500 ;;
    esac
}

# Runs BINARY with ARGS into DIR; prints the run directory. Exit status
# 2 means lancet refused the arguments.
run_lancet() {
    local binary=$1 dir=$2
    shift 2
    mkdir -p "$dir"
    "$binary" fuzz "$@" --out "$dir" >"$dir.stdout" 2>"$dir.stderr"
    local rc=$?
    # 0: clean, 1: findings, 3: could not finish (still compared: both
    # sides should stop the same way).
    local run
    run=$(find "$dir" -mindepth 1 -maxdepth 1 -type d | head -1)
    echo "$run"
    return "$rc"
}

failures=0
started=$SECONDS
declare -A server_url
for t in "${targets[@]}"; do
    name=${t%%:*}
    seeds=$(expand_seeds "${t#*:}")
    [[ $t == *:* ]] || seeds=$(expand_seeds 1-10)
    dbms=${name%-txn}
    checks=${checks_opt:-$(default_checks "$name")}
    per_db=${per_db_opt:-$((checks / 5 > 0 ? checks / 5 : 1))}
    args=(--dbms "$dbms" --threads 1 --queries "$checks" --status-interval 0)
    [[ $name == *-txn ]] && args+=(--oracle txn)
    [[ $dbms == mariadb ]] && args=(--dbms mysql "${args[@]:2}")
    # txn makes one database per run; the others several.
    [[ $name == *-txn ]] || args+=(--checks-per-database "$per_db")
    [[ $reduce == no ]] && args+=(--no-reduce)
    case $dbms in
        duckdb)
            [[ -n ${LANCET_DUCKDB_LIB:-} ]] ||
                die "no DuckDB: set LANCET_DUCKDB_LIB (bash tests/engines.sh | grep ^LANCET_)"
            args+=(--duckdb-lib "$LANCET_DUCKDB_LIB")
            ;;
        postgres | citus | mariadb)
            if [[ -z ${server_url[$dbms]:-} ]]; then
                case $dbms in
                    postgres) start_pg "$(pg_bindir)"
                        server_url[$dbms]="postgres://postgres@127.0.0.1:$port/postgres" ;;
                    citus) start_citus
                        server_url[$dbms]="postgres://postgres@127.0.0.1:$port/postgres" ;;
                    mariadb) start_mariadb
                        server_url[$dbms]="mysql://lancet:lancet-pw@127.0.0.1:$port/test" ;;
                esac
            fi
            args+=(--url "${server_url[$dbms]}")
            ;;
    esac
    for seed in $seeds; do
        tstart=$SECONDS
        base="$out/$name/s$seed"
        rm -rf "$base"
        log=(--log-statements)
        note=""
        run_b=$(run_lancet "$before" "$base/before" "${args[@]}" --seed "$seed" "${log[@]}" "${extra[@]}")
        rc_b=$?
        if ((rc_b == 2)) && [[ $name == *-txn ]] && grep -q -- '--log-statements' "$base/before.stderr"; then
            # The before binary refuses statement logs for txn: compare
            # findings and summary counts only.
            rm -rf "$base"
            log=()
            note=" [no statement logs: lancet refuses --log-statements with --oracle txn; findings and summary counts compared]"
            run_b=$(run_lancet "$before" "$base/before" "${args[@]}" --seed "$seed" "${extra[@]}")
            rc_b=$?
        fi
        run_a=$(run_lancet "$after" "$base/after" "${args[@]}" --seed "$seed" "${log[@]}" "${extra[@]}")
        rc_a=$?
        if ((rc_b == 2 || rc_a == 2)) || [[ -z $run_b || -z $run_a ]]; then
            echo "$name seed $seed: error: lancet refused the run (before $rc_b, after $rc_a; see $base/*.stderr)"
            failures=$((failures + 1))
            keep=yes
            continue
        fi
        result=$(compare_runs "$run_b" "$run_a" "${name##*-}")
        status=$?
        if ((rc_b != rc_a)); then
            result="differs: exit status $rc_b before, $rc_a after; files: $result"
            status=1
        fi
        if ((status != 0)); then
            # Does the DBMS repeat itself? A second run of BEFORE that
            # differs from the first marks the difference unstable (seen:
            # MariaDB's EXPLAIN row estimates, which steer the knobs and
            # perf oracles, and Citus's error for whichever shard failed
            # first): not a proof either way, rerun that seed.
            run_c=$(run_lancet "$before" "$base/before-again" "${args[@]}" --seed "$seed" "${log[@]}" "${extra[@]}")
            if [[ -n $run_c ]] && ! again=$(compare_runs "$run_b" "$run_c" "${name##*-}"); then
                result="unstable: BEFORE differs from itself (${again%%$'\n'*}); before vs after ${result}"
            fi
        fi
        findings=$(jq -r .findings "$run_b/summary.json" 2>/dev/null)
        head=${result%%$'\n'*}
        rest=""
        [[ $result == *$'\n'* ]] && rest=${result#*$'\n'}
        printf '%-13s seed %-3s %s (%s findings, %ds)%s\n' "$name" "$seed" "$head" \
            "${findings:-?}" $((SECONDS - tstart)) "$note"
        [[ -n $rest ]] && echo "$rest"
        if ((status != 0)); then
            failures=$((failures + 1))
            keep=yes
        fi
    done
done

echo "identity.sh: $failures difference(s); $((SECONDS - started)) s"
if [[ $keep == yes ]]; then
    echo "identity.sh: runs kept in $out"
else
    rm -rf "$out"
fi
((failures == 0))
