#!/usr/bin/env bash
# Record Kubernetes' own structured-allocator test table at one version and convert it into
# draguard conformance cases (tests/data/upstream-allocator/<minor>/cases.json.gz).
#
#   scripts/record-upstream-allocator.sh v0.37.2     # k8s.io/dynamic-resource-allocation version
#   scripts/record-upstream-allocator.sh v1.37.2     # or the Kubernetes version it belongs to
#   GOTOOLCHAIN=go1.27.3 scripts/record-upstream-allocator.sh v0.38.0-beta.0
#
# Why a script: the table (allocatortesting.TestAllocator) is internal to the DRA module, so the
# recorder must be compiled inside a writable copy of the module at the version wanted
# (.cache/upstream-allocator/<version>/dra). The recorder writes one raw JSON per case (inputs and
# the real allocator's outcome, only from cases whose upstream test passed), convert.py turns each
# into draguard inputs plus the truth, and the result is stored compactly per minor version.
#
# Best effort and bounded: every step that fails is reported and the script still exits 0 (the
# committed data of a version is replaced only when its recording and conversion succeeded).
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
TOOLS="$HERE/upstream-allocator"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
[ -x "$PY" ] || PY=python3

say() { echo "record-upstream-allocator: $*" >&2; }
give_up() { say "NOT DONE: $*"; exit 0; }

[ $# -eq 1 ] || give_up "usage: $0 VERSION (v0.37.2, v1.37.2, v0.38.0-beta.0)"
V="$1"
case "$V" in
  v1.*) V="v0.${V#v1.}" ;;   # Kubernetes v1.X.Y -> staging module v0.X.Y
  v0.*) ;;
  *) give_up "version $V: want v0.X.Y or v1.X.Y" ;;
esac
MINOR="$(echo "$V" | sed -E 's/^v0\.([0-9]+)\..*/1.\1/')"
case "$MINOR" in
  1.36|1.37) RECORDER="$TOOLS/record_test_136.go" ;;   # 1.36 signatures (also 1.37's)
  1.38) RECORDER="$TOOLS/record_test_138.go"
        export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}" ;;  # the module asks for go 1.27
  *) give_up "no recorder for Kubernetes $MINOR (have 1.36, 1.37, 1.38): adapt record_test_*.go" ;;
esac
export GOFLAGS=-mod=mod

WORK="$ROOT/.cache/upstream-allocator/$V"
OUT="$ROOT/tests/data/upstream-allocator/$MINOR"
say "version $V (Kubernetes $MINOR), recorder $(basename "$RECORDER"), work dir $WORK"

DIR="$(cd /tmp && go mod download -json "k8s.io/dynamic-resource-allocation@$V" 2>/dev/null \
  | "$PY" -c 'import json,sys; print(json.load(sys.stdin).get("Dir",""))' 2>/dev/null)"
[ -n "$DIR" ] && [ -d "$DIR" ] || give_up "k8s.io/dynamic-resource-allocation@$V is not in the module cache and could not be downloaded"

# Which implementation the scheduler uses is chosen per feature set in structured/allocator.go
# (the first of stable, incubating, experimental whose SupportedFeatures cover it); the recorder
# runs all three and keeps the first that ran and passed in that order.
grep -q 'stable.SupportedFeatures' "$DIR/structured/allocator.go" \
  || say "warning: structured/allocator.go at $V no longer lists stable first: check the recorder's order"

rm -rf "$WORK/dra" "$WORK/raw" "$WORK/converted"
mkdir -p "$WORK"
cp -r "$DIR" "$WORK/dra" && chmod -R u+w "$WORK/dra" || give_up "copying $DIR"
cp "$RECORDER" "$WORK/dra/structured/internal/incubating/record_test.go"

say "recording (go test; several minutes on a busy machine)..."
( cd "$WORK/dra" && DRA_RECORD_DIR="$WORK/raw" timeout 1800 \
    go test -count=1 -run '^TestAllocatorRecord$' ./structured/internal/incubating/ ) >"$WORK/record.log" 2>&1
rc=$?
tail -3 "$WORK/record.log" >&2
[ $rc -eq 0 ] || say "go test exited $rc (see $WORK/record.log): converting what was recorded"
ls "$WORK/raw"/*.json >/dev/null 2>&1 || give_up "nothing recorded (see $WORK/record.log)"
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print("recorded", d["recorded"]); [print("  not recorded:", n) for n in d["notRecorded"]]' \
  "$WORK/raw/_index.json" >&2 || true

"$PY" "$TOOLS/convert.py" --raw "$WORK/raw" --out "$WORK/converted" --kubernetes-version "$MINOR" \
  --source "k8s.io/dynamic-resource-allocation@$V" || give_up "convert.py failed"
"$PY" "$TOOLS/pack.py" --converted "$WORK/converted" --out "$OUT" || give_up "pack.py failed"
say "wrote $OUT"
exit 0
