#!/bin/sh
# The build steps of the Dockerfile, in one place so that a test can run them outside Docker
# (test/integration/deploy/build-script.test.ts runs both stages in a clean directory).
#   deploy/build.sh compile   all dependencies, then TypeScript and the console to dist/  (the build stage)
#   deploy/build.sh runtime   production dependencies only                (the runtime stage)
# npm settings come from the environment as usual (e.g. npm_config_offline=true).
set -eu
cd "$(dirname "$0")/.."

case "${1:-}" in
  compile)
    # --ignore-scripts: `prepare` would compile before the sources are all in place.
    npm ci --ignore-scripts --no-audit --no-fund
    # better-sqlite3 13 ships its binary; only a Node 20 host builds 12 (a no-op elsewhere).
    node deploy/sqlite-for-node20.mjs
    npx tsc -p tsconfig.build.json
    npx vite build --config console/vite.config.ts --logLevel warn
    test -f dist/src/main.js
    test -f dist/console/index.html
    ;;
  runtime)
    npm ci --omit=dev --ignore-scripts --no-audit --no-fund
    # onnxruntime-node ships every platform's binaries; keep this machine's (what `prepare` does after npm ci).
    node deploy/prune-onnx-binaries.mjs
    # better-sqlite3 13 ships its binary; only a Node 20 host builds 12 (a no-op elsewhere).
    node deploy/sqlite-for-node20.mjs
    # ffmpeg's installer picks its binary.
    npm rebuild @ffmpeg-installer/linux-x64 @ffmpeg-installer/ffmpeg
    ;;
  *)
    echo "usage: deploy/build.sh compile|runtime" >&2
    exit 64
    ;;
esac
