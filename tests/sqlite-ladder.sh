#!/usr/bin/env bash
# Builds a ladder of SQLite releases as shared libraries, for
# `lancet fuzz --sqlite-lib`, `lancet bisect --libs DIR` and the tests.
#
#   tests/sqlite-ladder.sh DIR [VERSION...]
#
# writes DIR/libsqlite3-VERSION.so for each SQLite VERSION (default: a
# ladder from 3.26 to 3.51). The sources are the amalgamations that the
# `libsqlite3-sys` crates on crates.io bundle; the table below says which
# crate version carries which SQLite release (read off each crate's
# sqlite3.h). Downloads go to DIR/.crates and builds are kept: running it
# again only builds what is missing.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 DIR [SQLITE_VERSION...]" >&2
  exit 2
fi
dir=$1
shift

# SQLite release -> libsqlite3-sys crate version that bundles it.
declare -A crate=(
  [3.24.0]=0.9.3 [3.25.2]=0.10.0 [3.26.0]=0.11.1 [3.27.2]=0.13.0
  [3.28.0]=0.15.0 [3.29.0]=0.16.0 [3.30.1]=0.17.0 [3.31.0]=0.17.3
  [3.31.1]=0.18.0 [3.33.0]=0.20.0 [3.35.4]=0.22.2 [3.36.0]=0.23.0
  [3.37.0]=0.23.2 [3.38.0]=0.24.0 [3.38.2]=0.24.2 [3.39.0]=0.25.0
  [3.39.2]=0.25.2 [3.41.2]=0.26.0 [3.44.0]=0.27.0 [3.45.0]=0.28.0
  [3.46.0]=0.29.0 [3.48.0]=0.31.0 [3.49.1]=0.32.0 [3.49.2]=0.34.0
  [3.50.2]=0.35.0 [3.51.1]=0.36.0 [3.51.3]=0.37.0
)

if [ $# -eq 0 ]; then
  set -- 3.26.0 3.31.1 3.35.4 3.38.2 3.41.2 3.44.0 3.46.0 3.49.2 3.50.2 3.51.3
fi

mkdir -p "$dir/.crates"
# One build at a time per directory: the tests call this script from
# several threads and processes at once, and each must find whole files.
exec 9>"$dir/.lock"
flock 9
for version in "$@"; do
  out="$dir/libsqlite3-$version.so"
  if [ -s "$out" ]; then
    continue
  fi
  c=${crate[$version]:-}
  if [ -z "$c" ]; then
    echo "$0: no libsqlite3-sys crate is known to bundle SQLite $version; known: $(printf '%s\n' "${!crate[@]}" | sort -V | tr '\n' ' ')" >&2
    exit 2
  fi
  archive="$dir/.crates/libsqlite3-sys-$c.crate"
  if [ ! -s "$archive" ]; then
    curl -sSfL --retry 3 -m 300 -o "$archive.part.$$" \
      "https://static.crates.io/crates/libsqlite3-sys/libsqlite3-sys-$c.crate"
    mv "$archive.part.$$" "$archive"
  fi
  src=$(mktemp -d)
  tar -xzf "$archive" -C "$src" "libsqlite3-sys-$c/sqlite3/sqlite3.c" "libsqlite3-sys-$c/sqlite3/sqlite3.h"
  got=$(sed -n 's/^#define SQLITE_VERSION *"\(.*\)"/\1/p' "$src/libsqlite3-sys-$c/sqlite3/sqlite3.h")
  if [ "$got" != "$version" ]; then
    echo "$0: libsqlite3-sys $c carries SQLite $got, not $version" >&2
    rm -rf "$src"
    exit 1
  fi
  echo "$0: building SQLite $version (from libsqlite3-sys $c)"
  # The options of a usual distribution build: thread-safe, JSON and math
  # functions, STAT4; lancet gates what it generates by release.
  gcc -O1 -fPIC -shared -o "$out.part.$$" \
    -DSQLITE_THREADSAFE=1 -DSQLITE_ENABLE_JSON1 -DSQLITE_ENABLE_MATH_FUNCTIONS \
    -DSQLITE_ENABLE_STAT4 -DSQLITE_ENABLE_COLUMN_METADATA \
    "$src/libsqlite3-sys-$c/sqlite3/sqlite3.c" -lpthread -ldl -lm
  mv "$out.part.$$" "$out"
  rm -rf "$src"
done
ls "$dir"/libsqlite3-*.so
