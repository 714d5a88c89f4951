#!/usr/bin/env python3
# ruff: noqa  -- a verbatim copy of the workload scorer of the shared conformance sample, kept as it is
"""Score draguard's workload (Pod / controller) findings against a real kube-scheduler's outcomes.

    python3 score.py [-v] [-j 2] [--draguard CMD] [--args '...']      (this folder's sample)
    python3 score.py --truth T.jsonl --cases DIR --inventory DIR [-v]  (any cases with cluster-oracle truth)

Truth: truth/cases.jsonl, written by ../../tools/cluster-oracle.py (one JSON line per case file; see
README.md). draguard lints every case file on its own:
`draguard lint CASE --inventory INV --format json --fail-on never` (cases are independent scenarios, so
they are never linted together).

A workload is a Pod without an owner, or a Deployment / ReplicaSet / StatefulSet / DaemonSet / Job /
CronJob of the case file. For each, the truth gives s scheduled pods of N (N: 1 for a Pod; the pods the
controller was expected to create, e.g. replicas, min(parallelism, completions), a DaemonSet's
desiredNumberScheduled), or "rejected" (the API server refused the object with a 4xx), or "undecided"
(some pod was neither bound nor Unschedulable after the settle timeout, e.g. a missing template).

draguard's contract, on findings whose kind/namespace/name is the workload's (a Pod's on the Pod):
- `Unsatisfiable`, severity error: no pod of it can ever be scheduled;
- `ReplicasExceedCapacity` (warning), details {"replicas": N, "fit": k, "exact": bool}: only k of N fit;
- error-severity `FieldValue*`: the API server would reject it;
- `ReferenceNotFound` (warning): a claim or template it references does not exist.

Metrics (last line; exit 0 only when every one holds):
- unsatisfiable caught C/T: workloads with s == 0 (not rejected, not undecided) flagged Unsatisfiable;
- false rejections F: workloads with s > 0, or undecided, flagged Unsatisfiable (must be 0);
- replica counts exact E bound B of R: workloads with N > 1 and 0 < s < N; exact = fit == s,
  bound = fit > s with exact false; anything else (no finding, fit < s, fit > s claimed exact) is a miss;
- false capacity warnings W: ReplicasExceedCapacity on a workload whose N pods were all scheduled;
- api rejections A/Q: rejected workloads with an error-severity FieldValue* finding;
- references warned M/P: workloads whose pods wait for a missing claim/template, with ReferenceNotFound.
With -v, one line per disagreement (and per bound-only replica count).
"""
import argparse
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = HERE
CONTROLLERS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob")


def ns_of(x):
    return x or "default"


# ------------------------------------------------------------------ truth per workload
def workloads_of(rec):
    """[(kind, ns, name, truth dict)] with truth: cat (never|partial|all|rejected|undecided), s, n, why, missing_ref."""
    out = []
    pods = rec.get("pods") or []
    wl = {(w["kind"], ns_of(w.get("namespace")), w["name"]): w for w in rec.get("workloads") or []}
    missing = {(ns_of(m.get("namespace")), m["name"]) for m in rec.get("missingPods") or []}
    for o in rec.get("objects") or []:
        kind = o.get("kind")
        if kind not in CONTROLLERS + ("Pod",) or str(o.get("note") or "").startswith("made by the tool"):
            continue
        key = (kind, ns_of(o.get("namespace")), o.get("name"))
        t = {"s": 0, "n": 0, "why": "", "missing_ref": False}
        if not o.get("created"):
            code = o.get("code")
            if code is None or not (400 <= int(code) < 500):
                continue   # not posted / not a verdict: unscored
            t.update(cat="rejected", why=f"{code} {o.get('reason')}: {str(o.get('message'))[:300]}")
            out.append((*key, t))
            continue
        if kind == "Pod":
            mine = [x for x in pods if x.get("owner") is None and x["name"] == key[2] and ns_of(x.get("namespace")) == key[1]]
            t["n"] = 1
            incomplete = (key[1], key[2]) in missing or not mine
        else:
            w = wl.get(key)
            if w is None:
                continue
            mine = [x for x in pods if x.get("owner") == {"kind": kind, "name": key[2]} and ns_of(x.get("namespace")) == key[1]]
            t["n"] = w.get("expectedPods") or 0
            incomplete = not w.get("complete")
        t["s"] = sum(1 for x in mine if x.get("state") == "scheduled")
        hints = [h for x in mine for h in x.get("hints") or [] if "does not exist" in h]
        t["missing_ref"] = bool(hints)
        msgs = sorted({x.get("message") or "" for x in mine if x.get("state") == "unschedulable"})
        if incomplete or any(x.get("state") in ("undecided", "gated") for x in mine):
            t["cat"] = "undecided"
            t["why"] = "; ".join(hints) or "pods not all decided"
        elif t["n"] == 0:
            continue   # nothing expected (e.g. a DaemonSet with no eligible node): unscored
        elif t["s"] == 0:
            t["cat"] = "never"
        elif t["s"] < t["n"]:
            t["cat"] = "partial"
        else:
            t["cat"] = "all"
        if msgs and t["cat"] in ("never", "partial"):
            t["why"] = msgs[0][:300]
        out.append((*key, t))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", nargs="?", help="a sample under --root with inventories/NAME, cases/NAME, truth/NAME.jsonl (default: this folder's own layout)")
    p.add_argument("--root", default=ROOT)
    p.add_argument("--truth"), p.add_argument("--cases"), p.add_argument("--inventory")
    p.add_argument("--draguard", default=os.environ.get("DRAGUARD", "draguard"), help="command string (default $DRAGUARD or draguard)")
    p.add_argument("--args", default="", help="extra draguard lint arguments")
    p.add_argument("-j", type=int, default=2, help="parallel draguard runs")
    p.add_argument("--timeout", type=float, default=300, help="seconds per draguard run")
    p.add_argument("-v", action="store_true")
    a = p.parse_args()
    if not (a.name or a.truth or a.cases or a.inventory):  # this folder's own sample
        a.truth, a.cases, a.inventory = (os.path.join(HERE, "truth", "cases.jsonl"), os.path.join(HERE, "cases"),
                                         os.path.join(HERE, "inventory"))
    if not (a.name or (a.truth and a.cases and a.inventory)):
        p.error("give a sample name, or --truth, --cases and --inventory")
    truth_path = a.truth or os.path.join(a.root, "truth", f"{a.name}.jsonl")
    cases_dir = a.cases or os.path.join(a.root, "cases", a.name)
    inv_dir = a.inventory or os.path.join(a.root, "inventories", a.name)
    label = a.name or os.path.basename(os.path.normpath(cases_dir))

    records = {}
    with open(truth_path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                records[os.path.basename(r["case"])] = r
    case_files = sorted(fn for fn in os.listdir(cases_dir) if fn.endswith((".yaml", ".yml", ".json")))
    scored = [fn for fn in case_files if fn in records and records[fn].get("verdict") != "error"]
    unscored = [fn for fn in case_files if fn not in scored]

    # ------------------------------------------------------------------ draguard
    def lint(fn):
        path = os.path.join(cases_dir, fn)
        cmd = shlex.split(a.draguard) + ["lint", path, "--inventory", inv_dir, "--format", "json", "--fail-on", "never"] + shlex.split(a.args)
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
        except subprocess.TimeoutExpired:
            return fn, None, f"timed out after {a.timeout:.0f}s"
        except OSError as e:
            return fn, None, f"cannot run draguard: {e}"
        try:
            rep = json.loads(r.stdout)
        except ValueError:
            return fn, None, f"no JSON (rc {r.returncode}): {' '.join(r.stderr.split())[-200:]}"
        real = os.path.realpath(path)
        found = {}
        for x in rep.get("findings") or []:
            if x.get("file") and os.path.realpath(x["file"]) != real:
                continue   # a finding on an inventory object
            found.setdefault((x.get("kind"), ns_of(x.get("namespace")), x.get("name")), []).append(x)
        return fn, found, None


    with concurrent.futures.ThreadPoolExecutor(max(1, a.j)) as ex:
        results = {fn: (found, err) for fn, found, err in ex.map(lint, scored)}

    # ------------------------------------------------------------------ score
    C = T = F = E = B = R = W = A = Q = M = P = 0
    dist = {"never": 0, "partial": 0, "all": 0, "rejected": 0, "undecided": 0}
    failures = []
    lines = []

    def say(tag, fn, key, text):
        lines.append(f"{tag}: {fn} {key[0]} {key[1]}/{key[2]}: {text}")

    for fn in scored:
        found, err = results[fn]
        if err:
            failures.append(f"{fn}: {err}")
            found = {}
        for kind, ns, name, t in workloads_of(records[fn]):
            key = (kind, ns, name)
            fs = found.get(key, [])
            dist[t["cat"]] += 1
            unsat = [x for x in fs if x.get("reason") == "Unsatisfiable" and x.get("severity") == "error"]
            rec_ = [x for x in fs if x.get("reason") == "ReplicasExceedCapacity"]
            api = [x for x in fs if x.get("severity") == "error" and str(x.get("reason") or "").startswith("FieldValue")]
            ref = [x for x in fs if x.get("reason") == "ReferenceNotFound" and x.get("severity") in ("warning", "error")]
            cat, s, n = t["cat"], t["s"], t["n"]
            if cat == "never":
                T += 1
                if unsat:
                    C += 1
                else:
                    say("MISSED UNSATISFIABLE", fn, key, f"0/{n} scheduled ({t['why']})")
            if unsat and (s > 0 or cat == "undecided"):
                F += 1
                say("FALSE REJECTION", fn, key, f"truth {'undecided' if cat == 'undecided' else f'{s}/{n} scheduled'}; "
                    f"draguard: {unsat[0].get('message', '')[:200]}")
            if cat == "partial" and n > 1:
                R += 1
                best = None
                for x in rec_:
                    d = x.get("details") or {}
                    try:
                        fit = int(d.get("fit"))
                    except (TypeError, ValueError):
                        continue
                    exact = d.get("exact")
                    note = "" if d.get("replicas") == n else f" (details.replicas {d.get('replicas')}, truth N {n})"
                    if fit == s:
                        best = ("exact", fit, exact, note)
                        break
                    if fit > s and exact is False and (best is None or best[0] == "wrong"):
                        best = ("bound", fit, exact, note)
                    elif best is None or best[0] == "wrong":
                        best = ("wrong", fit, exact, note)
                if best and best[0] == "exact":
                    E += 1
                    if best[3]:
                        say("REPLICA COUNT NOTE", fn, key, f"fit {best[1]} == {s} of {n}{best[3]}")
                elif best and best[0] == "bound":
                    B += 1
                    say("REPLICA COUNT BOUND", fn, key, f"truth {s}/{n} scheduled; draguard fit {best[1]} (exact false){best[3]}")
                elif best:
                    say("WRONG REPLICA COUNT", fn, key, f"truth {s}/{n} scheduled; draguard fit {best[1]}, exact {best[2]}{best[3]}")
                else:
                    say("MISSED REPLICA COUNT", fn, key, f"truth {s}/{n} scheduled ({t['why']})")
            if cat == "all" and rec_:
                W += 1
                d = rec_[0].get("details") or {}
                say("FALSE CAPACITY WARNING", fn, key, f"all {n} scheduled; draguard fit {d.get('fit')} of {d.get('replicas')}")
            if cat == "rejected":
                Q += 1
                if api:
                    A += 1
                else:
                    say("MISSED API REJECTION", fn, key, t["why"])
            if t["missing_ref"]:
                P += 1
                if ref:
                    M += 1
                else:
                    say("MISSED REFERENCE", fn, key, t["why"])

    if a.v:
        for l in lines:
            print(l)
        for l in failures:
            print(f"DRAGUARD FAILED: {l}")
        for fn in unscored:
            print(f"UNSCORED: {fn} (no usable truth record)")
    total = sum(dist.values())
    print(f"truth [{label}]: {len(scored)} case(s), {total} workload(s): never-schedulable {dist['never']}, partial {dist['partial']}, "
          f"all scheduled {dist['all']}, rejected {dist['rejected']}, undecided {dist['undecided']}"
          + (f"; {len(failures)} draguard failure(s)" if failures else "") + (f"; {len(unscored)} unscored" if unscored else ""))
    print(f"workloads: unsatisfiable caught {C}/{T}, false rejections {F}, replica counts exact {E} bound {B} of {R}, "
          f"false capacity warnings {W}, api rejections {A}/{Q}, references warned {M}/{P}"
          + (f", draguard failures {len(failures)}" if failures else ""))
    ok = C == T and F == 0 and E + B == R and W == 0 and A == Q and M == P and not failures
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
