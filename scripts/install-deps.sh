#!/usr/bin/env bash
# Installs npm dependencies when node_modules is missing or older than the lock file.
# `npm install` rather than `npm ci`: the registry mirror these machines use lacks the other
# platforms' optional chDB binaries, which `npm ci` insists on finding in the lock file.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "[deps] npm install"
  npm install --no-audit --no-fund --loglevel=error
fi

# The console's browser tests drive Debian's chromium (playwright-core, no browser download).
if ! command -v chromium >/dev/null 2>&1; then
  echo "[deps] apt-get install chromium"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

# The operators' console (served at /console): its bundle is built here, at install (esbuild, well under a second).
npm run --silent console:build
