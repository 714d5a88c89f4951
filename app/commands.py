"""``draguard explain`` and ``draguard capacity`` — the "why is it not running now?" commands
(README "The CLI"), also the kubectl plugin ``kubectl draguard``.

Why their own module: they read a cluster with the *user's* credentials (kubeconfig like
kubectl: ``--kubeconfig``, ``$KUBECONFIG``, ``~/.kube/config``; the context's namespace when
``-n`` is not given) or files for a support ticket (an inventory plus a dump of claims), and
print what they found, gaps included.  Exit status: 0 answered, 2 usage error or nothing to
read (the message says which), 3 the object asked about does not exist.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import yaml

__all__ = ["add_capacity_arguments", "add_explain_arguments", "run_capacity", "run_explain"]

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_NOT_FOUND = 3


def _source_arguments(parser: argparse.ArgumentParser) -> None:
    src = parser.add_mutually_exclusive_group()
    src.add_argument("--kubeconfig", default=None, metavar="F",
                     help="read the cluster with this kubeconfig (default: $KUBECONFIG, then ~/.kube/config)")
    src.add_argument("--inventory", action="append", default=[], metavar="PATH",
                     help="read files instead: DeviceClasses, ResourceSlices, Nodes and a dump of claims "
                          "(kubectl get resourceclaims -A -o yaml); repeat for more")
    parser.add_argument("--context", default=None, help="the kubeconfig context to use (default: current)")
    parser.add_argument("--deadline-seconds", type=float, default=20.0, metavar="S",
                        help="the command's searches give up after S seconds in all (default 20)")


def add_explain_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="pod/NAME|claim/NAME", help="what to explain")
    parser.add_argument("-n", "--namespace", default=None, help="namespace (default: the context's, else default)")
    _source_arguments(parser)
    parser.add_argument("--format", choices=["text", "json"], default="text")


def add_capacity_arguments(parser: argparse.ArgumentParser) -> None:
    _source_arguments(parser)
    parser.add_argument("--fit", default=None, metavar="FILE",
                        help="how many pods of this shape fit now, and with every device free, counted as lint counts "
                             "replicas: a workload (Deployment, Job, StatefulSet, Pod …; the claim templates it names "
                             "from the same file or the cluster) with its pods' tolerations and nodeSelector, or a bare "
                             "ResourceClaim / ResourceClaimTemplate (a pod with nothing else: no tolerations)")
    parser.add_argument("--format", choices=["text", "json", "svg"], default="text")


def _kubeconfig_path(given: str | None) -> str | None:
    if given:
        return given
    env = os.environ.get("KUBECONFIG", "")
    first = next((p for p in env.split(os.pathsep) if p), "")
    if first:
        return first
    home = Path("~/.kube/config").expanduser()
    return str(home) if home.is_file() else None


def _context_namespace(path: str | None, context: str | None) -> str:
    if not path:
        return ""
    try:
        doc = yaml.safe_load(Path(path).expanduser().read_text())
    except (OSError, yaml.YAMLError):
        return ""
    if not isinstance(doc, dict):
        return ""
    name = context or doc.get("current-context")
    for entry in doc.get("contexts") or []:
        if isinstance(entry, dict) and entry.get("name") == name and isinstance(entry.get("context"), dict):
            ns = entry["context"].get("namespace")
            return ns if isinstance(ns, str) else ""
    return ""


class _Fail(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _parse_target(text: str) -> tuple[str, str]:
    kind, _, name = text.partition("/")
    kinds = {"pod": "Pod", "pods": "Pod", "po": "Pod", "claim": "ResourceClaim", "resourceclaim": "ResourceClaim",
             "resourceclaims": "ResourceClaim"}
    if not name or kind.lower() not in kinds:
        raise _Fail(EXIT_USAGE, f"explain: {text!r}: give pod/NAME or claim/NAME")
    return kinds[kind.lower()], name


def _read_files(paths: list[str], wanted: tuple[str, str, str] | None) -> tuple[Any, dict[tuple[str, str, str], dict[str, Any]]]:
    from .inventory import InputError, StaticInventory, load_paths

    try:
        source = StaticInventory(paths)
        objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        if wanted is not None and wanted[0] == "Pod":
            for doc in load_paths(paths).documents:
                if doc.kind == "Pod" and isinstance(doc.obj, dict):
                    meta = doc.obj.get("metadata") or {}
                    key = ("Pod", meta.get("namespace") or "default", meta.get("name") or "")
                    objects[key] = doc.obj
    except InputError as exc:
        raise _Fail(EXIT_USAGE, str(exc)) from exc
    inventory = source.snapshot()
    if inventory is None:
        raise _Fail(EXIT_USAGE, "the inventory files hold nothing")
    return inventory, objects


def _read_cluster(args: argparse.Namespace, namespace: str, named: list[tuple[str, str, str]]) -> Any:
    from .inventory import KubeConfigError, ReadError, load_kube_config, read_cluster

    path = _kubeconfig_path(args.kubeconfig)
    if path is None:
        raise _Fail(EXIT_USAGE, "no kubeconfig: give --kubeconfig, set $KUBECONFIG, or --inventory PATH for files")
    try:
        config = load_kube_config(path, args.context)
        return read_cluster(config, namespace=namespace, named=named)
    except (KubeConfigError, ReadError) as exc:
        raise _Fail(EXIT_USAGE, str(exc)) from exc


def _namespace(args: argparse.Namespace) -> str:
    if args.namespace:
        return str(args.namespace)
    if args.inventory:
        return "default"
    return _context_namespace(_kubeconfig_path(args.kubeconfig), args.context) or "default"


def _explain(args: argparse.Namespace) -> str:
    from .k8s import Budget
    from .report import render_explanation
    from .review import explain_object

    kind, name = _parse_target(args.target)
    namespace = _namespace(args)
    gaps: list[str] = []
    if args.inventory:
        inventory, objects = _read_files(args.inventory, (kind, namespace, name))
    else:
        read = _read_cluster(args, namespace, [(kind, namespace, name)])
        inventory, objects, gaps = read.inventory, read.objects, read.gaps
    explanation = explain_object(kind, namespace, name, inventory, objects, budget=Budget.within(args.deadline_seconds))
    if explanation is None:
        raise _Fail(EXIT_NOT_FOUND, f"explain: {kind} {namespace}/{name} not found")
    explanation.gaps.extend(gaps)
    return render_explanation(explanation, args.format)


def _capacity(args: argparse.Namespace) -> str:
    from .k8s import Budget
    from .report import render_capacity
    from .review import fit_object
    from .satisfy import class_usage

    namespace = "default" if args.inventory else _context_namespace(_kubeconfig_path(args.kubeconfig), args.context) or "default"
    gaps: list[str] = []
    if args.inventory:
        inventory, _ = _read_files(args.inventory, None)
    else:
        read = _read_cluster(args, namespace, [])
        inventory, gaps = read.inventory, read.gaps
    fit = None
    if args.fit:
        fit = _fit(args.fit, inventory, Budget.within(args.deadline_seconds), fit_object)
    alloc = inventory.cluster.allocations
    summary: dict[str, Any] = {"allocated_claims": alloc.claims, "unknown_results": alloc.unknown,
                               "claims_known": inventory.cluster.known, "gaps": gaps}
    return render_capacity(class_usage(inventory), args.format, summary=summary, fit=fit)


def _fit(path: str, inventory: Any, budget: Any, fit_object: Any) -> Any:
    """``--fit FILE``: the file's first workload that uses DRA, else its first claim or template;
    the file's other objects are what the workload's references resolve to."""
    from .inventory import InputError, load_paths
    from .k8s import CHECKED_KINDS, DRA_KINDS

    try:
        docs = [d for d in load_paths([path]).documents if isinstance(d.obj, dict)]
    except InputError as exc:
        raise _Fail(EXIT_USAGE, str(exc)) from exc
    claims = [d for d in docs if d.kind in ("ResourceClaim", "ResourceClaimTemplate")]
    workloads = [d for d in docs if d.kind in CHECKED_KINDS and d.kind not in DRA_KINDS]
    others = [d.obj for d in claims]
    for doc in workloads:
        answer = fit_object(doc.obj, inventory, budget=budget, others=others)
        if answer.pop("uses_dra", True):
            return answer
    if claims:
        return fit_object(claims[0].obj, inventory, budget=budget)
    raise _Fail(EXIT_USAGE, f"--fit {path}: no workload, ResourceClaim or ResourceClaimTemplate in it")


def run_explain(args: argparse.Namespace) -> int:
    return _run(_explain, args)


def run_capacity(args: argparse.Namespace) -> int:
    return _run(_capacity, args)


def _run(command: Any, args: argparse.Namespace) -> int:
    try:
        sys.stdout.write(command(args))
    except _Fail as exc:
        print(f"draguard: {exc}", file=sys.stderr)
        return exc.code
    return EXIT_OK
