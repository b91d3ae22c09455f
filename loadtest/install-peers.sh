#!/usr/bin/env bash
# Installs the peers the load tests run beside Hangar (Debian packages): nginx (static
# files; front of git http-backend), fcgiwrap (CGI for git http-backend), wrk
# (closed-loop max throughput), bc, git-lfs, time. Idempotent.
set -euo pipefail
pkgs=(nginx fcgiwrap wrk bc git git-lfs curl time)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  # nginx's package tries to start a system service; the load tests run their own.
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
