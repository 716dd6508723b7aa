#!/usr/bin/env bash
# A TypeScript client generated from openapi.yaml, type-checked and run against an API:
#   .ci/client-ts.sh install   installs the pinned toolchain (once; CI runs this before the tests)
#   .ci/client-ts.sh run       generates the types, compiles api/src/test/ts/launch.ts with tsc --strict and runs it
#                              against WARMMETAL_API_URL with WARMMETAL_TOKEN (GeneratedClientTest does this)
# The toolchain lives in WARMMETAL_NPM_CACHE (outside the work tree); generated code in CLIENT_TS_OUT
# (default api/target/client-ts), never in the repository.
set -euo pipefail
cd "$(dirname "$0")/.."

OPENAPI_TYPESCRIPT_VERSION=7.13.0
OPENAPI_FETCH_VERSION=0.17.0
TYPESCRIPT_VERSION=5.9.3
TYPES_NODE_VERSION=20.19.43   # the Node.js 20 the machines run
CACHE="${WARMMETAL_NPM_CACHE:-/var/cache/warmmetal/npm}"
TOOLS="$CACHE/client-ts-$OPENAPI_TYPESCRIPT_VERSION-$OPENAPI_FETCH_VERSION-$TYPESCRIPT_VERSION-$TYPES_NODE_VERSION"
OUT="${CLIENT_TS_OUT:-api/target/client-ts}"

command -v node >/dev/null && command -v npm >/dev/null || {
  echo "client-ts: node and npm are needed (Debian: apt-get install nodejs npm)" >&2; exit 1; }

install() {
  [ -f "$TOOLS/.installed" ] && return
  rm -rf "$TOOLS" && mkdir -p "$TOOLS"
  npm install --prefix "$TOOLS" --no-audit --no-fund --loglevel=error --save-exact \
    "openapi-typescript@$OPENAPI_TYPESCRIPT_VERSION" "openapi-fetch@$OPENAPI_FETCH_VERSION" \
    "typescript@$TYPESCRIPT_VERSION" "@types/node@$TYPES_NODE_VERSION" >&2
  touch "$TOOLS/.installed" # a half-finished install has no marker and is redone
}

run() {
  : "${WARMMETAL_API_URL:?}" "${WARMMETAL_TOKEN:?}"
  install
  rm -rf "$OUT" && mkdir -p "$OUT/src"
  ln -s "$TOOLS/node_modules" "$OUT/node_modules"
  echo '{ "type": "module", "private": true }' > "$OUT/package.json"
  # A property with a default may be left out of a request: not required in the generated types.
  "$TOOLS/node_modules/.bin/openapi-typescript" openapi.yaml --default-non-nullable=false \
    --output "$OUT/src/schema.d.ts" >&2
  cp api/src/test/ts/launch.ts "$OUT/src/"
  cat > "$OUT/tsconfig.json" <<'JSON'
{
  "compilerOptions": {
    "strict": true, "noUncheckedIndexedAccess": true, "noEmitOnError": true,
    "target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext", "lib": ["ES2022", "DOM"],
    "types": ["node"], "rootDir": "src", "outDir": "dist", "skipLibCheck": false
  },
  "include": ["src"]
}
JSON
  "$TOOLS/node_modules/.bin/tsc" -p "$OUT/tsconfig.json" >&2
  node "$OUT/dist/launch.js"
}

case "${1:-}" in
  install) install ;;
  run) run ;;
  *) echo "usage: $0 install|run" >&2; exit 2 ;;
esac
