#!/usr/bin/env bash
# Builds the real Kubernetes control plane of one version from Go modules, and the differential
# oracle (scripts/oracle/main.go: Kubernetes' own validation and allocator over YAML, the team's
# tool that made the conformance sample's expectations) against that version's packages:
#
#   scripts/build-kubernetes.sh v1.37.2 [kube-apiserver kube-scheduler kube-controller-manager oracle]
#
# into .cache/kube/<version>/{kube-apiserver,kube-scheduler,kube-controller-manager,dra-oracle}, a link
# to the machine's cache ($DRAGUARD_KUBE_CACHE, default ~/.cache/draguard/kube/<version>/): a fresh
# clone on a machine that built a version once (CI runs in one) finds it at once.
#
# How: a throwaway Go module (.cache/kube/<version>/mod) that requires k8s.io/kubernetes at that
# version and replaces each of its staging modules (the `replace ... => ./staging/src/k8s.io/X`
# block of Kubernetes' own go.mod, read from the module proxy, so the list is always the
# version's own) by the published module of the matching v0.X.Y. The Go build cache and module
# cache are the machine's: a second build of the same version takes seconds, and a version
# already built on this machine is not rebuilt (delete the file to force it).
#
# Bounded and best effort by design: each build has a time limit (DRAGUARD_KUBE_BUILD_TIMEOUT,
# seconds, default 1500); what cannot be built is said, with the Go error's last lines, and the
# script exits 0 so the rest of CI runs — the tests that need a version's binaries skip with the
# reason. Exit 1 only on a malformed version argument.
set -u
cd "$(dirname "$0")/.."
V=${1:-}
shift || true
if ! [[ "$V" =~ ^v1\.([0-9]+)\.([0-9]+)(-(alpha|beta|rc)\.[0-9]+)?$ ]]; then
  echo "usage: $0 v1.MINOR.PATCH[-(alpha|beta|rc).N] [kube-apiserver kube-scheduler kube-controller-manager oracle]" >&2
  exit 1
fi
STAGING_V="v0.${V#v1.}"
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(kube-apiserver kube-scheduler kube-controller-manager oracle)
LIMIT=${DRAGUARD_KUBE_BUILD_TIMEOUT:-1500}
MACHINE=${DRAGUARD_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/draguard/kube}
OUT=$MACHINE/$V
MOD=$OUT/mod
SHARED_ORACLE=${DRAGUARD_ORACLE_SRC:-scripts/oracle/main.go}
say() { echo "build-kubernetes $V: $*"; }
command -v go >/dev/null 2>&1 || { say "no Go on PATH: nothing built (the tests that need $V's binaries skip)"; exit 0; }
export GOFLAGS=-mod=mod CGO_ENABLED=0
mkdir -p "$MOD" .cache/kube
if [ -d ".cache/kube/$V" ] && [ ! -L ".cache/kube/$V" ]; then  # an earlier layout: move it to the machine's cache
  cp -n ".cache/kube/$V"/kube-* ".cache/kube/$V"/dra-oracle "$OUT/" 2>/dev/null; rm -rf ".cache/kube/$V"
fi
ln -sfn "$OUT" ".cache/kube/$V"

gomod=$(timeout 120 go mod download -json "k8s.io/kubernetes@$V" 2>/dev/null \
  | python3 -c 'import json,sys; print(json.load(sys.stdin).get("GoMod",""))' 2>/dev/null)
if [ -z "$gomod" ] || [ ! -f "$gomod" ]; then
  say "k8s.io/kubernetes@$V is not served by the Go module proxy here: nothing built"
  exit 0
fi
goline=$(grep -m1 '^go ' "$gomod" | cut -d' ' -f2)
# a version whose go.mod asks for a newer Go than the machine's takes the approved toolchain from
# the module proxy (DRAGUARD_GOTOOLCHAIN; the only one served here is go1.27.3)
local_go=$(go env GOVERSION | sed 's/^go//')
if [ "$(printf '%s\n%s\n' "$goline" "$local_go" | sort -V | tail -1)" != "$local_go" ]; then
  export GOTOOLCHAIN=${DRAGUARD_GOTOOLCHAIN:-go1.27.3}
  say "go.mod asks for Go $goline; using GOTOOLCHAIN=$GOTOOLCHAIN"
fi
{
  echo "module draguard.local/kube"
  echo
  echo "go $goline"
  echo
  echo "require k8s.io/kubernetes $V"
  echo
  echo "replace ("
  sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/src/k8s.io/.*#\t\1 => \1 '"$STAGING_V"'#p' "$gomod"
  echo ")"
} > "$MOD/go.mod"
mkdir -p "$MOD/oracle"
if [ -f "$SHARED_ORACLE" ]; then
  cp "$SHARED_ORACLE" "$MOD/oracle/main.go"
  # adaptations of the 1.36 oracle source to later packages, one sed per known move
  for patch in scripts/oracle-patches/*.sh; do
    [ -f "$patch" ] && bash "$patch" "$V" "$MOD/oracle/main.go"
  done
fi

build() {  # name package
  local name=$1 pkg=$2 log=$OUT/$1.log
  if [ -x "$OUT/$name" ]; then say "$name already built ($OUT/$name)"; return 0; fi
  say "building $name (limit ${LIMIT}s) ..."
  local t0=$SECONDS
  if (cd "$MOD" && timeout "$LIMIT" go build -trimpath -ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$V -X k8s.io/client-go/pkg/version.gitVersion=$V" -o "$OUT/$name.tmp" "$pkg") >"$log" 2>&1; then
    mv "$OUT/$name.tmp" "$OUT/$name"
    say "built $name in $((SECONDS - t0)) s"
  else
    rm -f "$OUT/$name.tmp"
    say "could not build $name ($((SECONDS - t0)) s); the last lines of $log:"
    tail -n 8 "$log" | sed 's/^/    /'
  fi
}

for t in "${TARGETS[@]}"; do
  case $t in
    kube-apiserver|kube-scheduler|kube-controller-manager) build "$t" "k8s.io/kubernetes/cmd/$t" ;;
    oracle) [ -f "$MOD/oracle/main.go" ] && build dra-oracle ./oracle || say "no oracle source at $SHARED_ORACLE" ;;
    *) say "unknown target $t (kube-apiserver kube-scheduler kube-controller-manager oracle)" ;;
  esac
done
exit 0
