#!/usr/bin/env bash
# Builds, for each version in scripts/kubernetes-versions, that release's control plane and DRA
# oracle from Go modules (scripts/build-kubernetes.sh), within one overall time budget.
#
# Why a budget: CI has 90 minutes on a fresh clone.  On a machine that built a version once, its
# binaries are in the machine's cache and this takes seconds; on a new machine each version is a
# cold Go build of ~10 minutes on two cores.  DRAGUARD_KUBE_BUDGET (seconds, default 2700) bounds
# the whole: a version not reached in time is skipped, and said, and the tests that need it skip
# with the reason.  DRAGUARD_KUBE_VERSIONS overrides the list (space-separated; "none" builds nothing).
set -u
cd "$(dirname "$0")/.."
BUDGET=${DRAGUARD_KUBE_BUDGET:-2700}
say() { echo "setup-kubernetes-versions: $*"; }
if [ -n "${DRAGUARD_KUBE_VERSIONS:-}" ]; then
  read -r -a versions <<<"$DRAGUARD_KUBE_VERSIONS"
else  # a line: VERSION [TARGET ...] (default: every target)
  mapfile -t versions < <(grep -v '^\s*#' scripts/kubernetes-versions | grep -v '^\s*$')
fi
start=$SECONDS
for line in "${versions[@]}"; do
  read -r -a words <<<"$line"
  v=${words[0]}
  [ "$v" = none ] && continue
  left=$((BUDGET - (SECONDS - start)))
  if [ "$left" -le 60 ]; then
    say "time budget (${BUDGET}s) spent: $v not built; the tests that need it skip"
    continue
  fi
  # one binary may take at most what is left of the budget
  DRAGUARD_KUBE_BUILD_TIMEOUT=$(( left < ${DRAGUARD_KUBE_BUILD_TIMEOUT:-1500} ? left : ${DRAGUARD_KUBE_BUILD_TIMEOUT:-1500} )) \
    bash scripts/build-kubernetes.sh "$v" "${words[@]:1}"
done
say "done in $((SECONDS - start)) s"
exit 0
