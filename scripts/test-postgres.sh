#!/usr/bin/env bash
# Start Debian's PostgreSQL cluster on loopback (installed by `system-deps.sh --test`),
# make sure the test role and database exist, and print the URL the tests read from
# DUCK_TEST_DATABASE_URL. The cluster belongs to the postgres user (initdb refuses to run
# as root); pg_ctlcluster and runuser switch to it.
set -euo pipefail
role=ducklm_test
db=ducklm_test
password=ducklm_test  # loopback only, a throwaway test database

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi
}

if ! command -v pg_lsclusters >/dev/null 2>&1; then
  echo "test-postgres: PostgreSQL is not installed (scripts/system-deps.sh --test)" >&2
  exit 1
fi
read -r version cluster port status _ < <(pg_lsclusters -h | head -n 1) || true
if [ -z "${version:-}" ]; then  # the package was installed without creating a cluster
  version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
  as_root pg_createcluster "$version" main >&2
  read -r version cluster port status _ < <(pg_lsclusters -h | head -n 1)
fi
if [ "$status" != "online" ]; then
  as_root pg_ctlcluster "$version" "$cluster" start >&2
fi

psql_admin() {
  as_root runuser -u postgres -- psql -p "$port" -v ON_ERROR_STOP=1 -qtAc "$1"
}
if [ "$(psql_admin "SELECT 1 FROM pg_roles WHERE rolname = '$role'")" != "1" ]; then
  psql_admin "CREATE ROLE $role LOGIN PASSWORD '$password'" >&2
fi
if [ "$(psql_admin "SELECT 1 FROM pg_database WHERE datname = '$db'")" != "1" ]; then
  psql_admin "CREATE DATABASE $db OWNER $role" >&2
fi
echo "postgresql://$role:$password@127.0.0.1:$port/$db"
