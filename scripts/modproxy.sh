#!/usr/bin/env bash
# scripts/modproxy.sh: the environment in which the repository's modules
# resolve each other the way users' builds will, before a release
# publishes them: every released module at VERSION in a file-system
# module proxy built from the tree (tools/release proxy, zips made as the
# go command makes them from a tag: of the files git tracks, as the work
# tree has them; an untracked file is left out until `git add`), in front
# of the usual proxy, with a module cache of its own (a module version,
# once cached, is never read again: the shared cache would keep an older
# tree's v0.1.0).
#
#   eval "$(scripts/modproxy.sh DIR)"     DIR: where the proxy and cache go
#
# prints export lines: GOWORK=off, GOPROXY, GOMODCACHE and GONOSUMDB.
# Modules already in the usual module cache are served
# from it (its download directory is itself a file-system proxy).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
dir=${1:?usage: scripts/modproxy.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
rm -rf "$dir/proxy"
go -C tools/release run . proxy -root ../.. -out "$dir/proxy" >&2
cache=$(go env GOMODCACHE)
upstream=$(go env GOPROXY)
cat <<ENV
export GOWORK=off

export GONOSUMDB=github.com/leadership-go
export GOMODCACHE='$dir/modcache'
export GOPROXY='file://$dir/proxy,file://$cache/cache/download,$upstream'
ENV
