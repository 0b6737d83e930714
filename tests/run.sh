#!/usr/bin/env bash
# Runs every lancet test on a fresh machine: installs what the tests need
# (the sqlite3 shell, to check that reproducers run with SQLite's own
# client; PostgreSQL's and MariaDB's server programs and clients, for the
# throwaway servers the PostgreSQL and MariaDB tests start on 127.0.0.1;
# headless Chromium, which renders the HTML campaign report),
# then the whole workspace's tests in release mode (the fuzzing tests run
# tens of thousands of checks; debug builds of SQLite are slow).
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v sqlite3 >/dev/null 2>&1 || need+=(sqlite3)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
# mariadbd is in /usr/sbin, which is not on every PATH.
maria=()
command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || maria+=(mariadb-server)
command -v mariadb >/dev/null 2>&1 || maria+=(mariadb-client)
# A real browser for the report's test (tests/report.rs).
browser=()
command -v chromium >/dev/null 2>&1 || browser+=(chromium)
if [ ${#need[@]} -gt 0 ] || [ ${#maria[@]} -gt 0 ] || [ ${#browser[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "tests/run.sh: installing ${need[*]}"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
fi
# The MariaDB tests say SKIPPED rather than failing the whole run when the
# server cannot be installed here.
if [ ${#maria[@]} -gt 0 ]; then
  echo "tests/run.sh: installing ${maria[*]}"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${maria[@]}" ||
    echo "tests/run.sh: could not install ${maria[*]}: the MariaDB tests (tests/mysql.rs) will pass as SKIPPED"
fi

if [ ${#browser[@]} -gt 0 ]; then
  echo "tests/run.sh: installing ${browser[*]}"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${browser[@]}" ||
    echo "tests/run.sh: could not install ${browser[*]}: the report's browser check (tests/report.rs) will say SKIPPED"
fi

# Citus is not in the package registries; its tests run where it is
# installed for the PostgreSQL the tests use, and say so otherwise.
if ! ls /usr/lib/postgresql/*/lib/citus.so >/dev/null 2>&1; then
  echo "tests/run.sh: Citus is not installed (no /usr/lib/postgresql/*/lib/citus.so): the Citus tests (tests/citus.rs) will pass as SKIPPED"
fi

cargo test --release --workspace "$@"
