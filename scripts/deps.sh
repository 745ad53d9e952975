#!/usr/bin/env bash
# Installs the Debian packages Tandem needs, only those missing. Idempotent; needs root
# (or sudo) when something is missing. Exit 0 when everything is present afterwards.
set -euo pipefail
PKGS=(cmake make clang llvm-dev tcc libtcc-dev libcjson-dev libarchive-dev libssl-dev
      libzstd-dev libboost-context-dev libclang-rt-dev git python3 valgrind
      help2man libxml2-dev libxml2-utils man-db pkgconf)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "tandem: installing missing packages: ${missing[*]}" >&2
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
