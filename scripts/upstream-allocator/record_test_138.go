/*
Copyright 2026 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package incubating

// Kubernetes 1.38 (k8s.io/dynamic-resource-allocation v0.38.0-beta.0) variant: the allocators
// take the internal draapi.ResourceSlice (recorded converted back to resource.k8s.io/v1), the
// allocated state is schedulerapi.AllocatedState (shared devices without share IDs, consumed
// capacity keyed by fully-qualified name "domain/name"), the shared table runs on a
// k8s.io/ktesting TContext (the *testing.T is found through its TB()), and "stable" takes the
// whole allocated state and runs the lexicographical table too.

// record_test.go records upstream's shared allocator test table
// (allocatortesting.TestAllocator and TestLexicographicalAllocator) as data:
// for every case, the inputs the allocator receives (features, allocated
// state, device classes from the lister, slices, and on each Allocate call
// the node and the claims) and what the real allocator returned.
//
// It is not part of upstream. It only runs when DRA_RECORD_DIR is set:
//
//	DRA_RECORD_DIR=/some/dir go test -run '^TestAllocatorRecord$' \
//	    ./staging/src/k8s.io/dynamic-resource-allocation/structured/internal/incubating/
//
// The table is run three times, against the "incubating", "experimental" and
// "stable" implementations (each skips the cases needing features it does
// not support). A case is written (DRA_RECORD_DIR/<case>.json, "/" in a
// subtest name written as "__") from the
// first implementation of stable, incubating, experimental (the order in which
// structured/allocator.go picks one for a feature set) whose run of the
// upstream test PASSED, i.e. whose results equal upstream's expectations.
// The other implementations' outcomes are kept as a cross-check.
//
// Where the allocated state is not empty, the recorder also asks a fresh
// allocator of the same implementation, with an EMPTY allocated state and
// the same node, classes, slices and claims (deep copies), for its result:
// "ever". That is the real allocator's answer on derived input, not an
// upstream expectation, and is marked so in the JSON ("everDerived").

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	draapi "k8s.io/dynamic-resource-allocation/api"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured/internal"
	"k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting"
	"k8s.io/dynamic-resource-allocation/structured/internal/experimental"
	"k8s.io/dynamic-resource-allocation/structured/internal/stable"
	"k8s.io/klog/v2"
	klogktesting "k8s.io/klog/v2/ktesting"
	"k8s.io/ktesting"
	"k8s.io/utils/ptr"
)

// recordedShareID stands for every share ID the allocator generated (fixedShareID in upstream's test).
var recordedShareID = types.UID("aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa")

type recDeviceID struct {
	Driver string `json:"driver"`
	Pool   string `json:"pool"`
	Device string `json:"device"`
}

type recSharedDeviceID struct {
	recDeviceID
	ShareID string `json:"shareID"`
}

type recConsumed struct {
	recDeviceID
	Capacity map[string]string `json:"capacity"`
}

type recAllocatedState struct {
	Devices          []recDeviceID       `json:"devices"`
	SharedDevices    []recSharedDeviceID `json:"sharedDevices"`
	ConsumedCapacity []recConsumed       `json:"consumedCapacity"`
}

func (s recAllocatedState) empty() bool {
	return len(s.Devices) == 0 && len(s.SharedDevices) == 0 && len(s.ConsumedCapacity) == 0
}

type recOutcome struct {
	// "allocated": all claims allocated; "unallocatable": Allocate returned
	// neither results nor an error; "failed-on-node": an error wrapping
	// ErrFailedAllocationOnNode (the scheduler treats the node as
	// unschedulable with that message); "error": any other error (the
	// scheduler aborts the attempt).
	Outcome string                         `json:"outcome"`
	Results []resourceapi.AllocationResult `json:"results"`
	Error   string                         `json:"error,omitempty"`
}

type recCall struct {
	Node   *v1.Node                     `json:"node"`
	Claims []*resourceapi.ResourceClaim `json:"claims"`
	recOutcome
	Ever *recOutcome `json:"ever,omitempty"`
}

type recCase struct {
	Case           string                       `json:"case"`
	Source         string                       `json:"source,omitempty"`
	Test           string                       `json:"test"`
	Implementation string                       `json:"implementation"`
	Features       internal.Features            `json:"features"`
	FeatureSet     []string                     `json:"featureSet"`
	AllocatedState recAllocatedState            `json:"allocatedState"`
	Classes        []*resourceapi.DeviceClass   `json:"classes"`
	ClassListError string                       `json:"classListError,omitempty"`
	Slices         []*resourceapi.ResourceSlice `json:"slices"` // converted from draapi
	Calls          []*recCall                   `json:"calls"`
	EverDerived    bool                         `json:"everDerived"`
	UpstreamPassed bool                         `json:"upstreamPassed"`
	CrossCheck     map[string]string            `json:"crossCheck,omitempty"`
	skipped        bool
}

type newAllocatorFunc func(ctx context.Context, features internal.Features, allocatedState internal.AllocatedState,
	classLister internal.DeviceClassLister, slices []*draapi.ResourceSlice, celCache *cel.Cache) (internal.Allocator, error)

type recorder struct {
	mu    sync.Mutex
	impl  string
	cases map[string]*recCase // by case name
	order []string
	skips map[string]string
	fails map[string]bool
}

func testingTFromContext(ctx context.Context) *testing.T {
	if tc, ok := ctx.(ktesting.TContext); ok {
		if tt, ok := tc.TB().(*testing.T); ok {
			return tt
		}
	}
	logger := klog.FromContext(ctx)
	if u, ok := logger.GetSink().(klogktesting.Underlier); ok {
		if t, ok := u.GetUnderlying().(*testing.T); ok {
			return t
		}
	}
	return nil
}

// caseName strips the parent test names: "TestAllocatorRecord/incubating/simple" -> "simple".
func caseName(t *testing.T) string {
	parts := strings.SplitN(t.Name(), "/", 3)
	return parts[len(parts)-1]
}

func outcomeOf(results []resourceapi.AllocationResult, err error) recOutcome {
	switch {
	case err != nil && errors.Is(err, internal.ErrFailedAllocationOnNode):
		return recOutcome{Outcome: "failed-on-node", Error: err.Error()}
	case err != nil:
		return recOutcome{Outcome: "error", Error: err.Error()}
	case results == nil:
		return recOutcome{Outcome: "unallocatable"}
	default:
		out := make([]resourceapi.AllocationResult, len(results))
		for i := range results {
			results[i].DeepCopyInto(&out[i])
			// Share IDs are random UUIDs: replaced, as upstream's test does, so that
			// recording twice writes the same bytes.
			for j := range out[i].Devices.Results {
				if out[i].Devices.Results[j].ShareID != nil {
					out[i].Devices.Results[j].ShareID = ptr.To(recordedShareID)
				}
			}
		}
		return recOutcome{Outcome: "allocated", Results: out}
	}
}

func recordState(s internal.AllocatedState) recAllocatedState {
	var out recAllocatedState
	for id := range s.AllocatedDevices {
		out.Devices = append(out.Devices, recDeviceID{id.Driver.String(), id.Pool.String(), id.Device.String()})
	}
	for id := range s.AllocatedSharedDeviceIDs {
		// 1.38 keeps only the device of a share, not the share ID.
		out.SharedDevices = append(out.SharedDevices, recSharedDeviceID{recDeviceID{id.Driver.String(), id.Pool.String(), id.Device.String()}, ""})
	}
	for id, consumed := range s.AggregatedCapacity {
		c := recConsumed{recDeviceID: recDeviceID{id.Driver.String(), id.Pool.String(), id.Device.String()}, Capacity: map[string]string{}}
		for name, q := range consumed {
			if q != nil {
				c.Capacity[name.String()] = q.String()
			}
		}
		out.ConsumedCapacity = append(out.ConsumedCapacity, c)
	}
	key := func(d recDeviceID) string { return d.Driver + "\x00" + d.Pool + "\x00" + d.Device }
	sort.Slice(out.Devices, func(i, j int) bool { return key(out.Devices[i]) < key(out.Devices[j]) })
	sort.Slice(out.SharedDevices, func(i, j int) bool {
		return key(out.SharedDevices[i].recDeviceID)+out.SharedDevices[i].ShareID < key(out.SharedDevices[j].recDeviceID)+out.SharedDevices[j].ShareID
	})
	sort.Slice(out.ConsumedCapacity, func(i, j int) bool {
		return key(out.ConsumedCapacity[i].recDeviceID) < key(out.ConsumedCapacity[j].recDeviceID)
	})
	return out
}

// recordingAllocator forwards to the real allocator and records each call.
type recordingAllocator struct {
	real     internal.Allocator
	rec      *recCase
	fresh    func(ctx context.Context) (internal.Allocator, error) // same inputs, empty allocated state
	everFrom bool
}

func (a *recordingAllocator) Channel() internal.AllocatorChannel { return a.real.Channel() }

func (a *recordingAllocator) Allocate(ctx context.Context, node *v1.Node, claims []*resourceapi.ResourceClaim) ([]resourceapi.AllocationResult, error) {
	call := &recCall{Node: node.DeepCopy()}
	for _, c := range claims {
		call.Claims = append(call.Claims, c.DeepCopy())
	}
	results, err := a.real.Allocate(ctx, node, claims)
	call.recOutcome = outcomeOf(results, err)
	if a.everFrom {
		everAlloc, ferr := a.fresh(ctx)
		if ferr != nil {
			call.Ever = &recOutcome{Outcome: "error", Error: "creating the empty-state allocator: " + ferr.Error()}
		} else {
			copies := make([]*resourceapi.ResourceClaim, len(claims))
			for i, c := range claims {
				copies[i] = c.DeepCopy()
			}
			r2, e2 := everAlloc.Allocate(ctx, node.DeepCopy(), copies)
			o := outcomeOf(r2, e2)
			call.Ever = &o
		}
	}
	a.rec.Calls = append(a.rec.Calls, call)
	return results, err
}

// recordingAllocatorExt also forwards GetStats, for the cases that check it.
type recordingAllocatorExt struct{ *recordingAllocator }

func (a recordingAllocatorExt) GetStats() internal.Stats {
	return a.real.(internal.AllocatorExtended).GetStats()
}

func (r *recorder) wrap(impl newAllocatorFunc) newAllocatorFunc {
	return func(ctx context.Context, features internal.Features, allocatedState internal.AllocatedState,
		classLister internal.DeviceClassLister, slices []*draapi.ResourceSlice, celCache *cel.Cache) (internal.Allocator, error) {
		t := testingTFromContext(ctx)
		if t == nil {
			panic("record_test: cannot find the *testing.T of the case in the context's logger")
		}
		name := caseName(t)
		rc := &recCase{
			Case:           name,
			Test:           t.Name(),
			Implementation: r.impl,
			Features:       features,
			FeatureSet:     sets.List(features.Set()),
			AllocatedState: recordState(allocatedState),
		}
		classes, err := classLister.List()
		if err != nil {
			rc.ClassListError = err.Error()
		}
		for _, c := range classes {
			rc.Classes = append(rc.Classes, c.DeepCopy())
		}
		for _, s := range slices {
			var v1slice resourceapi.ResourceSlice
			if err := draapi.Convert_api_ResourceSlice_To_v1_ResourceSlice(s.DeepCopy(), &v1slice, nil); err != nil {
				panic(fmt.Sprintf("record_test: converting slice %s back to v1: %v", s.Name, err))
			}
			rc.Slices = append(rc.Slices, &v1slice)
		}
		real, err := impl(ctx, features, allocatedState, classLister, slices, celCache)
		if err != nil {
			return nil, err
		}
		ra := &recordingAllocator{real: real, rec: rc, everFrom: !rc.AllocatedState.empty()}
		rc.EverDerived = ra.everFrom
		ra.fresh = func(ctx context.Context) (internal.Allocator, error) {
			empty := internal.AllocatedState{
				AllocatedDevices:         sets.New[internal.DeviceID](),
				AllocatedSharedDeviceIDs: sets.New[internal.DeviceID](),
				AggregatedCapacity:       internal.NewConsumedCapacityCollection(),
			}
			copies := make([]*draapi.ResourceSlice, len(slices))
			for i, s := range slices {
				copies[i] = s.DeepCopy()
			}
			return impl(ctx, features, empty, classLister, copies, celCache)
		}
		r.mu.Lock()
		r.cases[name] = rc
		r.order = append(r.order, name)
		r.mu.Unlock()
		t.Cleanup(func() {
			rc.UpstreamPassed = !t.Failed() && !t.Skipped()
			rc.skipped = t.Skipped()
			if t.Failed() {
				r.mu.Lock()
				r.fails[name] = true
				r.mu.Unlock()
			}
		})
		if _, ok := real.(internal.AllocatorExtended); ok {
			return recordingAllocatorExt{ra}, nil
		}
		return ra, nil
	}
}

func summary(rc *recCase) string {
	if rc == nil {
		return "not run (skipped: features not supported)"
	}
	if rc.skipped {
		return "skipped by the upstream harness"
	}
	if !rc.UpstreamPassed {
		return "upstream test FAILED"
	}
	var parts []string
	for _, c := range rc.Calls {
		parts = append(parts, c.Outcome)
	}
	return strings.Join(parts, ",")
}

// caseSources finds "file:line" of each case name in the shared test files (best effort).
func caseSources() map[string]string {
	out := map[string]string{}
	for _, fn := range []string{"allocator_testing.go", "lexicographical_testing.go"} {
		data, err := os.ReadFile(filepath.Join("..", "allocatortesting", fn))
		if err != nil {
			continue
		}
		inTable := false
		for i, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "testcases := map[string]AllocatorTestCase{") {
				inTable = true
				continue
			}
			if strings.Contains(line, `Run("interrupt"`) {
				for _, n := range []string{"off", "timeout", "deadline", "cancel"} {
					out["interrupt/"+n] = fmt.Sprintf("%s:%d", fn, i+1)
				}
			}
			if !inTable || !strings.HasPrefix(line, "\t\t\"") {
				continue
			}
			rest := line[3:]
			end := strings.Index(rest, "\"")
			if end <= 0 || !strings.HasPrefix(rest[end:], "\": {") {
				continue
			}
			if name := rest[:end]; out[name] == "" {
				out[name] = fmt.Sprintf("%s:%d", fn, i+1)
			}
		}
	}
	return out
}

func TestAllocatorRecord(t *testing.T) {
	dir := os.Getenv("DRA_RECORD_DIR")
	if dir == "" {
		t.Skip("set DRA_RECORD_DIR to record the shared allocator test table")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	impls := []struct {
		name      string
		supported internal.Features
		new       newAllocatorFunc
	}{
		{"incubating", SupportedFeatures, func(ctx context.Context, f internal.Features, s internal.AllocatedState, l internal.DeviceClassLister, sl []*draapi.ResourceSlice, c *cel.Cache) (internal.Allocator, error) {
			return NewAllocator(ctx, f, s, l, sl, c)
		}},
		{"experimental", experimental.SupportedFeatures, func(ctx context.Context, f internal.Features, s internal.AllocatedState, l internal.DeviceClassLister, sl []*draapi.ResourceSlice, c *cel.Cache) (internal.Allocator, error) {
			return experimental.NewAllocator(ctx, f, s, l, sl, c)
		}},
		{"stable", stable.SupportedFeatures, func(ctx context.Context, f internal.Features, s internal.AllocatedState, l internal.DeviceClassLister, sl []*draapi.ResourceSlice, c *cel.Cache) (internal.Allocator, error) {
			return stable.NewAllocator(ctx, f, s, l, sl, c)
		}},
	}
	recs := map[string]*recorder{}
	for _, impl := range impls {
		r := &recorder{impl: impl.name, cases: map[string]*recCase{}, skips: map[string]string{}, fails: map[string]bool{}}
		recs[impl.name] = r
		t.Run(impl.name, func(t *testing.T) {
			allocatortesting.TestAllocator(t, impl.supported, r.wrap(impl.new))
			// As upstream 1.38: every implementation runs the lexicographical table too.
			allocatortesting.TestLexicographicalAllocator(t, impl.supported, r.wrap(impl.new))
		})
	}

	sources := caseSources()
	names := sets.New[string]()
	for _, r := range recs {
		for n := range r.cases {
			names.Insert(n)
		}
	}
	written, unrecorded := 0, []string{}
	for _, name := range sets.List(names) {
		// The implementation the scheduler would use: structured/allocator.go picks the first
		// of stable, incubating, experimental whose SupportedFeatures cover the case's features
		// (an implementation whose features do not cover them skipped the case).
		var chosen *recCase
		for _, impl := range []string{"stable", "incubating", "experimental"} {
			if rc := recs[impl].cases[name]; rc != nil && rc.UpstreamPassed && len(rc.Calls) > 0 {
				chosen = rc
				break
			}
		}
		if chosen == nil {
			unrecorded = append(unrecorded, fmt.Sprintf("%s: incubating %s; experimental %s", name,
				summary(recs["incubating"].cases[name]), summary(recs["experimental"].cases[name])))
			continue
		}
		chosen.Source = sources[name]
		chosen.CrossCheck = map[string]string{}
		for _, impl := range []string{"incubating", "experimental", "stable"} {
			if impl != chosen.Implementation {
				chosen.CrossCheck[impl] = summary(recs[impl].cases[name])
			}
		}
		data, err := json.MarshalIndent(chosen, "", " ")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, strings.ReplaceAll(name, "/", "__")+".json"), append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		written++
	}
	t.Logf("recorded %d cases into %s", written, dir)
	for _, u := range unrecorded {
		t.Logf("not recorded: %s", u)
	}
	data, _ := json.MarshalIndent(map[string]any{"recorded": written, "notRecorded": unrecorded}, "", " ")
	_ = os.WriteFile(filepath.Join(dir, "_index.json"), append(data, '\n'), 0o644)
}
