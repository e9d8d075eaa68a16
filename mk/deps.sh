#!/bin/sh
# The one list of Debian packages lscat needs, and the step that installs the missing ones.
# Run by `make` before it builds (a stamp file keeps it to once per list change).
# Usage: mk/deps.sh [--check]   (--check: report missing packages, install nothing, exit 1 if any)
set -eu

# Libraries the programs link, and the tools the tests, benchmarks and report use.
PACKAGES="
build-essential pkg-config ca-certificates git
libcurl4-openssl-dev libgit2-dev libarchive-dev libclang-22-dev
libsqlite3-dev sqlite3 libzstd-dev libjansson-dev libisal-dev isal zlib1g-dev
python3 gnuplot-nox bubblewrap procps zip unzip zstd
time openmpi-bin libopenmpi-dev graphviz
python3-numpy python3-scipy python3-sklearn
chromium fonts-dejavu-core
slurmctld slurmd slurm-client munge
"

missing=""
for p in $PACKAGES; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$st" in
        *"install ok installed"*) ;;
        *) missing="$missing $p" ;;
    esac
done

if [ -z "$missing" ]; then
    exit 0
fi
if [ "${1:-}" = "--check" ]; then
    echo "lscat: missing Debian packages:$missing" >&2
    exit 1
fi
if [ "$(id -u)" != 0 ]; then
    echo "lscat: missing Debian packages:$missing" >&2
    echo "lscat: run as root, or install them: apt-get install -y$missing" >&2
    exit 1
fi
echo "lscat: installing missing Debian packages:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# A fresh machine has empty package lists; refresh them once, then retry after a failure.
if ! ls /var/lib/apt/lists/*_Packages >/dev/null 2>&1; then
    apt-get update -q >&2
fi
# shellcheck disable=SC2086
if ! apt-get install -y -q --no-install-recommends $missing >&2; then
    apt-get update -q >&2
    apt-get install -y -q --no-install-recommends $missing >&2
fi
echo "lscat: installed:$missing" >&2
