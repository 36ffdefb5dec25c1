#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster on a loopback port for the test suite, installing PostgreSQL from
# Debian's packages when it is missing. Source it:  . scripts/pg-test-cluster.sh   (exports TEST_PG_URL)
# Stop it with:  pg_test_cluster_stop
set -euo pipefail

. "$(dirname "${BASH_SOURCE[0]}")/retry.sh"

PG_PORT="${PG_PORT:-54329}"
find_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

PG_BIN="$(find_bin)"
if [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/initdb" ]; then
  echo "PostgreSQL not found: installing it from Debian's packages" >&2
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  svc_retry $SUDO apt-get update -qq
  svc_retry $SUDO apt-get install -y -qq -o DPkg::Lock::Timeout=300 postgresql >/dev/null
  PG_BIN="$(find_bin)"
fi

PG_DIR="$(mktemp -d /tmp/svc-pg-XXXXXX)"
RUN_AS=()
if [ "$(id -u)" -eq 0 ]; then
  # initdb refuses to run as root: run the cluster as the postgres system user
  id postgres >/dev/null 2>&1 || useradd --system --home "$PG_DIR" postgres
  chown postgres "$PG_DIR"
  RUN_AS=(runuser -u postgres --)
fi
"${RUN_AS[@]}" "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust -E UTF8 >/dev/null
"${RUN_AS[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w \
  -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DIR -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" start >/dev/null

export TEST_PG_URL="postgres://postgres@127.0.0.1:$PG_PORT/postgres"
export SVC_PG_DIR="$PG_DIR"
pg_test_cluster_stop() { "${RUN_AS[@]}" "$PG_BIN/pg_ctl" -D "$SVC_PG_DIR/data" -m fast stop >/dev/null || true; rm -rf "$SVC_PG_DIR"; }
echo "PostgreSQL test cluster on $TEST_PG_URL" >&2
