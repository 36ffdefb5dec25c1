# Puts a supported Node.js first on PATH in the current shell, installing it from the npm registry's `node`
# package into a cache directory when the machine's own Node is not that major version. Source it:
#
#   source scripts/node.sh        # Node 24 (the version .nvmrc names)
#   source scripts/node.sh 22     # Node 22
#
# Also sets npm_config_nodedir to that Node's headers, so a native build (if any dependency ever needs one)
# compiles against the Node that runs it. The cache is $SVC_NODE_CACHE (default ~/.cache/svc-node).

. "$(dirname "${BASH_SOURCE[0]:-$0}")/retry.sh"

svc_node_use() {
  local want="${1:-24}"
  local have
  have="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
  if [ "$have" = "$want" ]; then
    echo "Node $(node --version) already on PATH" >&2
    return 0
  fi
  local cache="${SVC_NODE_CACHE:-$HOME/.cache/svc-node}/$want"
  local pkg="$cache/node_modules/node"
  if [ ! -x "$pkg/bin/node" ]; then
    echo "Installing Node $want from the npm registry into $cache" >&2
    mkdir -p "$cache"
    # npm needs a Node to run; the machine's own is enough for installing the package
    svc_retry npm install --prefix "$cache" --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
      "node@$want" >&2 || return 1
  fi
  export PATH="$pkg/bin:$PATH"
  local headers
  headers="$(ls -d "$pkg"/node_modules/node-*/include 2>/dev/null | head -n 1 || true)"
  if [ -n "$headers" ]; then export npm_config_nodedir="${headers%/include}"; fi
  hash -r 2>/dev/null || true
  echo "Using Node $(node --version) from $pkg/bin" >&2
}

svc_node_use "$@"
