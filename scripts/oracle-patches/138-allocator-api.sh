#!/usr/bin/env bash
# Adapts the copy of the 1.36 oracle source (scripts/oracle/main.go, copied by
# scripts/build-kubernetes.sh into its throwaway module) to the structured allocator of
# Kubernetes 1.38 (k8s.io/dynamic-resource-allocation v0.38):
#
#   bash scripts/oracle-patches/138-allocator-api.sh v1.38.0-beta.0 PATH/TO/oracle/main.go
#
# A no-op (exit 0, nothing touched) for versions before 1.38. For 1.38 and later:
#   - structured.NewAllocator takes the DRA module's internal slice form
#     ([]*k8s.io/dynamic-resource-allocation/api.ResourceSlice): the v1 slices are converted once
#     per run with that module's own conversion, as the scheduler's informer does (a slice that
#     does not convert cleanly is kept as converted and a warning goes to stderr, as there);
#   - AllocatedState.AllocatedSharedDeviceIDs is a set of plain DeviceIDs (share IDs dropped);
#   - the allocator's feature set is the one the 1.38 scheduler derives from the feature gates
#     (dynamicresources.AllocatorFeatures), all DRA gates being on: the 1.36 source hard-codes the
#     six features 1.36's incubating allocator knew, so CompatibilityGroups, DerivedAttributes,
#     FractionalCapacityRange, ListTypeAttributes and OptionalNodeOperations would stay off while
#     API validation has their gates on. DRA_ORACLE_136_FEATURES=1 at run time keeps the 1.36 set
#     (to tell a version's changes from the feature set's);
#   - validation ends, as the API server's create does (rest.ValidateCreate), with the strategy's
#     declarative validation (ValidateDeclaratively with its DeclarativeValidationConfig, as a v1
#     create): from 1.38 some rules exist only as declarative tags (a claim's capacity.requests
#     amounts: +k8s:eachVal=+k8s:minimum=0, +k8s:maxProperties=32) and standard declarative errors
#     supersede their handwritten twins, so the handwritten functions alone miss what a 1.38 API
#     server rejects. DRA_ORACLE_NO_DECLARATIVE=1 at run time skips that step.
# The output (JSON lines) keeps every field. The helpers live in a Go file written beside main.go
# (same package); main.go gets four textual substitutions, each checked.
set -euo pipefail
V=${1:?usage: $0 VERSION PATH/TO/main.go}
MAIN=${2:?usage: $0 VERSION PATH/TO/main.go}
if ! [[ "$V" =~ ^v?1\.([0-9]+)\. ]]; then
  echo "oracle-patches/138-allocator-api: cannot read the version '$V': nothing done" >&2
  exit 0
fi
(( BASH_REMATCH[1] >= 38 )) || exit 0
DIR=$(dirname "$MAIN")
say() { echo "oracle-patches/138-allocator-api: $*" >&2; }

# sub FROM TO: replace a literal text once; already replaced counts as done, absent is an error
sub() {
  if TO="$2" perl -0777 -ne 'exit(index($_, $ENV{TO}) >= 0 ? 0 : 1)' "$MAIN"; then return 0; fi
  if FROM="$1" TO="$2" perl -0777 -i -pe '$n = s/\Q$ENV{FROM}\E/$ENV{TO}/; END { exit($n ? 0 : 3) }' "$MAIN"; then
    return 0
  fi
  say "did not find '$1' in $MAIN: the shared oracle source changed, adapt this patch"
  exit 1
}

HELPERS="$DIR/zz_allocator_api_138.go"
# written only once every substitution took: a half-patched copy must fail to compile, not build
# silently with a helper file left from an earlier run
rm -f "$HELPERS"
chmod u+w "$MAIN"
sub 'AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),' \
    'AllocatedSharedDeviceIDs: sets.New[structured.DeviceID](),'
sub '}, e.classes, e.slices, e.celCache)' \
    '}, e.classes, e.draSlices(), e.celCache)'
sub $'\tif *flagAllocator == "experimental" {\n\t\tenv.features.ListTypeAttributes = true' \
    $'\tenv.features = schedulerAllocatorFeatures(env.features)\n\tif *flagAllocator == "experimental" {\n\t\tenv.features.ListTypeAttributes = true'
sub $'\t}\n\treturn errs, ""\n}' \
    $'\t}\n\treturn withDeclarativeValidation(ctx, internal, nsc, errs), ""\n}'

cat > "$HELPERS" <<'GO'
// Written by draguard's scripts/oracle-patches/138-allocator-api.sh: the 1.38 allocator API.

package main

import (
	"context"
	"fmt"
	"os"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	draapi "k8s.io/dynamic-resource-allocation/api"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/kubernetes/pkg/apis/resource"
	"k8s.io/kubernetes/pkg/registry/resource/deviceclass"
	"k8s.io/kubernetes/pkg/registry/resource/resourceclaim"
	"k8s.io/kubernetes/pkg/registry/resource/resourceclaimtemplate"
	"k8s.io/kubernetes/pkg/registry/resource/resourceslice"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	schedfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
)

// draSlicesOf caches the converted slices per environment: the world is read once, before any
// allocation, and a fresh allocator is made for every node and claim.
var draSlicesOf = map[*allocEnv][]*draapi.ResourceSlice{}

// draSlices returns the environment's slices in the allocator's internal form, converted as the
// scheduler's slice informer converts them (errors logged, the slice kept).
func (e *allocEnv) draSlices() []*draapi.ResourceSlice {
	if out, ok := draSlicesOf[e]; ok && len(out) == len(e.slices) {
		return out
	}
	out := make([]*draapi.ResourceSlice, 0, len(e.slices))
	for _, s := range e.slices {
		var c draapi.ResourceSlice
		if err := draapi.Convert_v1_ResourceSlice_To_api_ResourceSlice(s, &c, nil); err != nil {
			fmt.Fprintf(os.Stderr, "dra-oracle: warning: converting ResourceSlice %s for the allocator: %v\n", s.Name, err)
		}
		out = append(out, &c)
	}
	draSlicesOf[e] = out
	return out
}

// schedulerAllocatorFeatures is the allocator feature set of the scheduler with the current
// feature gates (every DRA gate is on by now), unless DRA_ORACLE_136_FEATURES asks for the set
// the 1.36 source hard-codes (given).
func schedulerAllocatorFeatures(given structured.Features) structured.Features {
	if os.Getenv("DRA_ORACLE_136_FEATURES") != "" {
		return given
	}
	return dynamicresources.AllocatorFeatures(schedfeature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate))
}

// withDeclarativeValidation finishes the create validation of one internal object the way the
// API server's rest.ValidateCreate does after the strategy's handwritten Validate: the
// strategy's declarative validation with migration checks (handwritten errors superseded by
// enforced declarative ones dropped, enforced declarative errors appended), for a resource.k8s.io/v1
// create of that resource.
func withDeclarativeValidation(ctx context.Context, obj runtime.Object, nsc *nsClient, errs field.ErrorList) field.ErrorList {
	if os.Getenv("DRA_ORACLE_NO_DECLARATIVE") != "" {
		return errs
	}
	var strategy any
	var plural string
	switch obj.(type) {
	case *resource.ResourceClaim:
		strategy, plural = resourceclaim.NewStrategy(nsc, nil), "resourceclaims"
	case *resource.ResourceClaimTemplate:
		strategy, plural = resourceclaimtemplate.NewStrategy(nsc), "resourceclaimtemplates"
	case *resource.ResourceSlice:
		strategy, plural = resourceslice.Strategy, "resourceslices"
	case *resource.DeviceClass:
		strategy, plural = deviceclass.Strategy, "deviceclasses"
	default:
		return errs
	}
	dv, ok := strategy.(rest.DeclarativeValidationStrategy)
	if !ok {
		return errs
	}
	ctx = genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{
		IsResourceRequest: true,
		Verb:              "create",
		APIPrefix:         "apis",
		APIGroup:          resourcev1.GroupName,
		APIVersion:        resourcev1.SchemeGroupVersion.Version,
		Resource:          plural,
	})
	return dv.ValidateDeclaratively(ctx, obj, nil, errs, operation.Create, dv.DeclarativeValidationConfig(ctx, obj, nil))
}
GO
say "adapted $MAIN to the 1.38 allocator API and validation (+ $HELPERS)"
