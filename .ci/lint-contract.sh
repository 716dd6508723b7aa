#!/usr/bin/env bash
# Lints openapi.yaml with two independent linters, Redocly CLI (`recommended`, redocly.yaml) and Spectral
# (`spectral:oas`, .spectral.yaml); exits non-zero on any error or warning. Each pinned version is installed with
# npm once into its own directory under WARMMETAL_NPM_CACHE (outside the work tree), so later runs install nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

REDOCLY_VERSION=2.77.0   # needs Node.js >= 20.19
SPECTRAL_VERSION=6.16.3
CACHE="${WARMMETAL_NPM_CACHE:-/var/cache/warmmetal/npm}"

command -v node >/dev/null && command -v npm >/dev/null || {
  echo "lint-contract: node and npm are needed (Debian: apt-get install nodejs npm)" >&2; exit 1; }

# npm_tool NAME PACKAGE VERSION: the tool's bin directory, installed on first use. A half-finished install (no
# marker) is redone.
npm_tool() {
  local dir="$CACHE/$1-$3"
  if [ ! -f "$dir/.installed" ]; then
    rm -rf "$dir" && mkdir -p "$dir"
    npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --save-exact "$2@$3" >&2
    touch "$dir/.installed"
  fi
  echo "$dir/node_modules/.bin"
}

redocly="$(npm_tool redocly-cli @redocly/cli "$REDOCLY_VERSION")/redocly"
spectral="$(npm_tool spectral-cli @stoplight/spectral-cli "$SPECTRAL_VERSION")/spectral"

export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
# Redocly exits 0 on warnings; they count here too.
out="$("$redocly" lint --config redocly.yaml --max-problems 200 openapi.yaml 2>&1)" || { echo "$out"; exit 1; }
echo "$out"
if grep -qE 'You have [0-9]+ warnings?' <<<"$out"; then echo "lint-contract: Redocly warnings" >&2; exit 1; fi
"$spectral" lint --ruleset .spectral.yaml --fail-severity warn openapi.yaml
echo "lint-contract: openapi.yaml is clean (Redocly $REDOCLY_VERSION, Spectral $SPECTRAL_VERSION)"
