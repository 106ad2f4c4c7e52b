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
