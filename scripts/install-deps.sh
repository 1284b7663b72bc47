#!/usr/bin/env bash
# The Debian packages `make install` needs beyond Python: the C client headers, pkg-config and a compiler
# to build mysqlclient (MySQLdb), the JDBC source's fast MySQL/MariaDB driver; iproute2 and socat for the
# tests across hosts (network namespaces, tests/integration/netlab.py); promtool (Debian's prometheus
# package: checks GET /metrics), headless Chromium with its driver (the status page's browser test), and
# openssl (the stack's throwaway CA and certificates for TLS to the databases); PostGIS for the stack's
# PostgreSQL (the JDBC sinks write Debezium's geometry into PostGIS columns; the tests create the extension
# only in databases of their own), for the PostgreSQL major installed, else Debian 12's (15).
# Installs only what is missing; runs `apt-get update` only if the install fails without it. Elsewhere
# (no dpkg/apt-get, not root and no sudo) it says what to install and leaves it: cdc then falls back to
# PyMySQL.
set -uo pipefail
PG_MAJOR=$(find /usr/lib/postgresql -mindepth 1 -maxdepth 1 -type d -printf '%f\n' 2>/dev/null | sort -V | tail -1)
PACKAGES=(libmariadb-dev pkg-config build-essential iproute2 socat prometheus chromium chromium-driver openssl
          "postgresql-${PG_MAJOR:-15}-postgis-3")

command -v dpkg-query >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 || {
    echo "install-deps: no apt-get here; for mysqlclient install the MariaDB/MySQL client headers," \
         "pkg-config and a C compiler" >&2
    exit 0
}
missing=()
for pkg in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=(sudo -n); else
        echo "install-deps: missing ${missing[*]}; run as root: apt-get install -y ${missing[*]}" >&2
        exit 0
    fi
fi
echo "install-deps: apt-get install -y ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get install -y -q "${missing[@]}" >/dev/null \
    || { "${SUDO[@]}" apt-get update -q >/dev/null && "${SUDO[@]}" apt-get install -y -q "${missing[@]}" >/dev/null; } \
    || echo "install-deps: could not install ${missing[*]} (without the headers mysqlclient will not build and" \
            "PyMySQL is used; without ip/socat the tests across hosts skip)" >&2
exit 0
