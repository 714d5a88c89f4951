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

__all__ = ["add_capacity_arguments", "add_explain_arguments", "add_ui_arguments", "run_capacity", "run_explain",
           "run_ui"]

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
    parser.add_argument("target", metavar="pod/NAME|claim/NAME|deployment/NAME|…",
                        help="what to explain: a pod, a claim, or a workload (deployment/, statefulset/, daemonset/, "
                             "replicaset/, job/, cronjob/NAME: its pod template)")
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


def add_ui_arguments(parser: argparse.ArgumentParser) -> None:
    from .ui import add_listen_arguments

    parser.add_argument("-n", "--namespace", default=None,
                        help="your namespace: its claims are named when you may not list every namespace's "
                             "(default: the context's, else default)")
    _source_arguments(parser)
    add_listen_arguments(parser)


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


_KINDS = {
    "pod": "Pod", "pods": "Pod", "po": "Pod",
    "claim": "ResourceClaim", "resourceclaim": "ResourceClaim", "resourceclaims": "ResourceClaim",
    "deployment": "Deployment", "deployments": "Deployment", "deploy": "Deployment",
    "replicaset": "ReplicaSet", "replicasets": "ReplicaSet", "rs": "ReplicaSet",
    "statefulset": "StatefulSet", "statefulsets": "StatefulSet", "sts": "StatefulSet",
    "daemonset": "DaemonSet", "daemonsets": "DaemonSet", "ds": "DaemonSet",
    "job": "Job", "jobs": "Job",
    "cronjob": "CronJob", "cronjobs": "CronJob", "cj": "CronJob",
}
"""What ``explain KIND/NAME`` accepts (kubectl's names, short names and ``kind.group``)."""

_COLLECTIONS = {
    "Pod": "/api/v1/{ns}pods", "ResourceClaim": "/apis/resource.k8s.io/v1/{ns}resourceclaims",
    "Deployment": "/apis/apps/v1/{ns}deployments", "ReplicaSet": "/apis/apps/v1/{ns}replicasets",
    "StatefulSet": "/apis/apps/v1/{ns}statefulsets", "DaemonSet": "/apis/apps/v1/{ns}daemonsets",
    "Job": "/apis/batch/v1/{ns}jobs", "CronJob": "/apis/batch/v1/{ns}cronjobs",
}
"""The API path of each kind's collection (``{ns}`` is ``namespaces/NS/``, or empty: every namespace)."""

WORKLOADS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob")


def _parse_target(text: str) -> tuple[str, str]:
    kind, _, name = text.partition("/")
    kind = kind.lower().partition(".")[0]
    if not name or kind not in _KINDS:
        raise _Fail(EXIT_USAGE, f"explain: {text!r}: give pod/NAME, claim/NAME or a workload "
                                "(deployment/, statefulset/, daemonset/, replicaset/, job/, cronjob/NAME)")
    return _KINDS[kind], name


def _target(args: argparse.Namespace) -> Any:
    """The target of ``--kubernetes-version``/``--feature-gates`` (files are stored as it stores them,
    the object is validated for it); a usage error names the flag."""
    from .k8s import FeatureGateError, parse_target

    try:
        return parse_target(getattr(args, "kubernetes_version", None), getattr(args, "feature_gates", None))
    except FeatureGateError as exc:
        raise _Fail(EXIT_USAGE, f"--{exc.parameter}: {exc}") from exc


def _read_files(paths: list[str], wanted: tuple[str, str, str] | None,
                target: Any = None) -> tuple[Any, dict[tuple[str, str, str], dict[str, Any]]]:
    from .inventory import InputError, StaticInventory, load_paths

    try:
        source = StaticInventory(paths) if target is None else StaticInventory(paths, target=target)
        objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        if wanted is not None:  # every namespace's: the files are the user's (a hint may name them)
            for doc in load_paths(paths).documents:
                if doc.kind == wanted[0] and isinstance(doc.obj, dict):
                    meta = doc.obj.get("metadata") or {}
                    key = (wanted[0], meta.get("namespace") or "default", meta.get("name") or "")
                    objects[key] = doc.obj
    except InputError as exc:
        raise _Fail(EXIT_USAGE, str(exc)) from exc
    inventory = source.snapshot()
    if inventory is None:
        raise _Fail(EXIT_USAGE, "the inventory files hold nothing")
    return inventory, objects


def _kube_config(args: argparse.Namespace) -> Any:
    from .inventory import KubeConfigError, load_kube_config

    path = _kubeconfig_path(args.kubeconfig)
    if path is None:
        raise _Fail(EXIT_USAGE, "no kubeconfig: give --kubeconfig, set $KUBECONFIG, or --inventory PATH for files")
    try:
        return load_kube_config(path, args.context)
    except KubeConfigError as exc:
        raise _Fail(EXIT_USAGE, str(exc)) from exc


def _read_cluster(args: argparse.Namespace, namespace: str, named: list[tuple[str, str, str]]) -> Any:
    from .inventory import ReadError, read_cluster

    try:
        return read_cluster(_kube_config(args), namespace=namespace, named=named)
    except ReadError as exc:
        raise _Fail(EXIT_USAGE, str(exc)) from exc


def _user_get(config: Any, path: str, params: dict[str, str] | None = None) -> tuple[int, Any]:
    """One GET with the user's own credentials: (HTTP status, body or None); (0, None) when the API
    server cannot be reached.  What the user may not read stays unread (RBAC decides, not us)."""
    import asyncio

    import httpx

    from .inventory import make_client
    from .k8s import DraguardError

    async def get() -> tuple[int, Any]:
        async with make_client(config) as client:
            resp = await client.get(path, params=params or {})
            if resp.status_code != 200:
                return resp.status_code, None
            return 200, resp.json()

    try:
        return asyncio.run(get())
    except (httpx.HTTPError, DraguardError, ValueError):
        return 0, None


def _read_workload(config: Any, kind: str, namespace: str, name: str, gaps: list[str]) -> dict[str, Any] | None:
    """The workload ``kind namespace/name`` (read_cluster fetches pods and claims by name)."""
    status, body = _user_get(config, _COLLECTIONS[kind].format(ns=f"namespaces/{namespace}/") + f"/{name}")
    if status == 403:
        gaps.append(f"{kind} {namespace}/{name} not readable (403)")
    if status != 200 or not isinstance(body, dict):
        return None
    body.setdefault("kind", kind)
    return body


def _elsewhere(kind: str, name: str, namespace: str, listed: list[str]) -> str:
    others = sorted({ns for ns in listed if ns != namespace})
    if not others:
        return ""
    shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
    return (f"; {kind} {name} exists in namespace{'s' if len(others) > 1 else ''} {shown} "
            f"(give -n {others[0]})")


def _hint_cluster(config: Any, kind: str, namespace: str, name: str) -> str:
    """Where else ``kind name`` exists — asked of the API server with the user's credentials across
    every namespace, so only a user who may list them all gets an answer (no leak across tenants:
    a 403 is no hint)."""
    status, body = _user_get(config, _COLLECTIONS[kind].format(ns=""),
                             {"fieldSelector": f"metadata.name={name}", "limit": "20"})
    if status != 200 or not isinstance(body, dict):
        return ""
    items = [i for i in body.get("items") or [] if isinstance(i, dict)]
    return _elsewhere(kind, name, namespace,
                      [str((i.get("metadata") or {}).get("namespace") or "") for i in items])


def _hint_files(kind: str, namespace: str, name: str, inventory: Any, objects: dict[tuple[str, str, str], Any]) -> str:
    listed = [ns for k, ns, n in objects if k == kind and n == name]
    if kind == "ResourceClaim":
        listed += [ns for ns, n in inventory.cluster.claims if n == name]
    return _elsewhere(kind, name, namespace, listed)


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
    target = _target(args)
    namespace = _namespace(args)
    gaps: list[str] = []
    config = None
    if args.inventory:
        inventory, objects = _read_files(args.inventory, (kind, namespace, name), target)
    else:
        config = _kube_config(args)
        read = _read_cluster(args, namespace, [] if kind in WORKLOADS else [(kind, namespace, name)])
        inventory, objects, gaps = read.inventory, read.objects, read.gaps
        if kind in WORKLOADS:
            workload = _read_workload(config, kind, namespace, name, gaps)
            if workload is not None:
                objects[(kind, namespace, name)] = workload
    explanation = explain_object(kind, namespace, name, inventory, objects, budget=Budget.within(args.deadline_seconds),
                                 target=target)
    if explanation is None:
        hint = (_hint_files(kind, namespace, name, inventory, objects) if config is None
                else _hint_cluster(config, kind, namespace, name))
        raise _Fail(EXIT_NOT_FOUND, f"explain: {kind} {namespace}/{name} not found{hint}")
    explanation.gaps.extend(gaps)
    return render_explanation(explanation, args.format)


def _capacity(args: argparse.Namespace) -> str:
    from .k8s import Budget
    from .report import render_capacity
    from .review import fit_object
    from .satisfy import class_usage

    namespace = "default" if args.inventory else _context_namespace(_kubeconfig_path(args.kubeconfig), args.context) or "default"
    gaps: list[str] = []
    target = _target(args)
    if args.inventory:
        inventory, _ = _read_files(args.inventory, None, target)
    else:
        read = _read_cluster(args, namespace, [])
        inventory, gaps = read.inventory, read.gaps
    fit = None
    if args.fit:
        fit = _fit(args.fit, inventory, Budget.within(args.deadline_seconds), fit_object, target)
    alloc = inventory.cluster.allocations
    summary: dict[str, Any] = {"allocated_claims": alloc.claims, "unknown_results": alloc.unknown,
                               "claims_known": inventory.cluster.known, "gaps": gaps}
    return render_capacity(class_usage(inventory), args.format, summary=summary, fit=fit)


def _fit(path: str, inventory: Any, budget: Any, fit_object: Any, target: Any) -> Any:
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
        answer = fit_object(doc.obj, inventory, budget=budget, others=others, target=target)
        if answer.pop("uses_dra", True):
            return answer
    if claims:
        return fit_object(claims[0].obj, inventory, budget=budget, target=target)
    raise _Fail(EXIT_USAGE, f"--fit {path}: no workload, ResourceClaim or ResourceClaimTemplate in it")


def run_explain(args: argparse.Namespace) -> int:
    return _run(_explain, args)


def run_capacity(args: argparse.Namespace) -> int:
    return _run(_capacity, args)


def run_ui(args: argparse.Namespace) -> int:
    """``draguard ui``: the page over the same sources as ``explain`` and ``capacity`` (:mod:`app.ui`)."""
    from .ui import ClusterSource, FileSource, SourceError, serve_ui

    try:
        target = _target(args)
        namespace = _namespace(args)
        source = (FileSource(args.inventory, namespace=namespace, target=target) if args.inventory
                  else ClusterSource(_kube_config(args), namespace))
    except (_Fail, SourceError) as exc:
        print(f"draguard: ui: {exc}", file=sys.stderr)
        return exc.code if isinstance(exc, _Fail) else EXIT_USAGE
    return serve_ui(source, address=args.address, port=args.port, target=target, deadline=args.deadline_seconds)


def _run(command: Any, args: argparse.Namespace) -> int:
    try:
        sys.stdout.write(command(args))
    except _Fail as exc:
        print(f"draguard: {exc}", file=sys.stderr)
        return exc.code
    return EXIT_OK
