#!/usr/bin/env bash
# The recipe for a new Kubernetes release (docs/guides/versions.md "Adding a Kubernetes version"):
#
#   make kubernetes-version V=v1.39.0      # or: bash scripts/add-kubernetes-version.sh v1.39.0
#
# 1. adds V to scripts/kubernetes-versions (what CI and `make apiserver` build);
# 2. builds its kube-apiserver, kube-scheduler, kube-controller-manager and DRA oracle from Go
#    modules (scripts/build-kubernetes.sh);
# 3. prints its DRA feature gates against draguard's table, and what changed since the newest
#    version known before it (scripts/gate-table.py);
# 4. prints the DRA API types' field changes (k8s.io/api resource/ and scheduling/ types.go);
# 5. records Kubernetes' own allocator test table for it (scripts/record-upstream-allocator.sh);
# 6. makes the conformance sample's expectations with its oracle and prints the verdicts that
#    changed (scripts/oracle-expectations.py).
# What is then left by hand is printed at the end.  Each step says what it could not do and the
# recipe goes on: a version whose modules are not served yet stops at step 2 with the reason.
set -u
cd "$(dirname "$0")/.."
V=${1:-}
if ! [[ "$V" =~ ^v1\.([0-9]+)\.([0-9]+)(-(alpha|beta|rc)\.[0-9]+)?$ ]]; then
  echo "usage: $0 v1.MINOR.PATCH[-(alpha|beta|rc).N]" >&2
  exit 2
fi
PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
step() { echo; echo "== $*"; }
previous=$(grep -v '^\s*#' scripts/kubernetes-versions | grep -v '^\s*$' | awk '{print $1}' | grep -vx "$V" | tail -1)
previous=${previous:-v1.36.3}

step "1. scripts/kubernetes-versions"
if awk '{print $1}' scripts/kubernetes-versions | grep -qx "$V"; then echo "$V is listed already"; else echo "$V" >> scripts/kubernetes-versions; echo "added $V"; fi

step "2. binaries and oracle of $V"
bash scripts/build-kubernetes.sh "$V"

step "3. DRA gates of $V (against draguard's table; changes since $previous)"
"$PY" scripts/gate-table.py "$V" --against "$previous"
gates_rc=$?

step "4. DRA API types: fields added or removed since $previous"
cache=$(go env GOMODCACHE 2>/dev/null)
staging() { echo "v0.${1#v1.}"; }
for group in resource/v1 scheduling/v1beta1; do
  old="$cache/k8s.io/api@$(staging "$previous")/$group/types.go"
  new="$cache/k8s.io/api@$(staging "$V")/$group/types.go"
  (cd /tmp && GOFLAGS=-mod=mod go mod download "k8s.io/api@$(staging "$previous")" "k8s.io/api@$(staging "$V")" >/dev/null 2>&1)
  if [ -f "$old" ] && [ -f "$new" ]; then
    echo "-- $group"
    diff "$old" "$new" | grep -E '^[<>].*json:"' | sed -e 's/^</  removed:/' -e 's/^>/  added:  /' || echo "  (no field changes)"
  else
    echo "-- $group: not in both versions"
  fi
done

step "5. Kubernetes' allocator test table recorded from $V"
if [ -x scripts/record-upstream-allocator.sh ] || [ -f scripts/record-upstream-allocator.sh ]; then
  bash scripts/record-upstream-allocator.sh "$V"
else
  echo "no scripts/record-upstream-allocator.sh"
fi

step "6. conformance expectations by $V's oracle"
"$PY" scripts/oracle-expectations.py "$V"

minor=$(echo "$V" | sed -E 's/^v([0-9]+\.[0-9]+).*/\1/')
step "left to do by hand for $minor"
cat <<EOF
- app/k8s/features.py: add the $minor column (step 3 lists what differs: exit $gates_rc), SUPPORTED_VERSIONS,
  and DEFAULT_VERSION once $minor.0 is released and verified; _REMOVED for gates the version removed.
- new or renamed fields of step 4: the decoder's per-version schema and the gated-field table
  (app/k8s/gated.py), validation rules of the version's changelog (app/validation/), each with a
  test that shows the new target and the one before it answering as their binaries do.
- the allocator table of step 5: run \`pytest tests/upstream\`; explain or fix every new disagreement
  (tests/data/upstream-allocator/known.json).
- the verdicts that changed in step 6: make them target-dependent in app/ where draguard does not
  yet follow them; \`pytest tests/versions\` runs the real $minor API server on the corpus.
- docs/guides/versions.md "Kubernetes versions and feature gates": the table's new column (docs/reference/gates.md follows app/k8s/features.py: `make docs`).
EOF
exit 0
