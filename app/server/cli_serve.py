"""``draguard serve``: flags → :class:`ServerState` → uvicorn over TLS.

Why self-signed by default: the webhook cannot run without TLS, and a first ``draguard serve``
on a laptop should just work; the generated CA is logged so ``curl --cacert`` can trust it.
In a cluster the Secret ``draguard-tls`` provides ``--tls-cert``/``--tls-key`` and is
hot-reloaded on rotation.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import functools
import ipaddress
import json
import logging
import signal
import ssl
import sys
import tempfile
import threading
from pathlib import Path

from ..certs import generate_bundle, write_bundle
from ..inventory import (
    RECHECK_SECONDS,
    STALE_AFTER_SECONDS,
    ClusterTarget,
    InputError,
    InventorySource,
    KubeConfig,
    KubeConfigError,
    WithPotential,
    detect,
    load_in_cluster,
    load_kube_config,
    load_workload_kinds,
    open_inventory,
)
from ..k8s import (
    DEFAULT_VERSION,
    VERSION_METAVAR,
    DraguardError,
    FeatureGateError,
    Reason,
    Target,
    bulk_allocation,
    parse_target,
)
from ..review import DEFAULT_DENY, DenyPolicyError, ReviewOptions, parse_deny
from .app import create_app
from .audit import AuditObjects, Auditor, AuditSettings
from .drain import DrainingServer
from .health import health_only
from .logs import configure_logging
from .runner import BackgroundServer, make_server
from .selfcerts import SelfCertError, SelfManagedCerts, SelfManagedSettings, pod_namespace
from .state import ServerState
from .tls import CertReloader

__all__ = ["add_serve_arguments", "build_state", "run_serve"]

log = logging.getLogger("draguard.serve")


class UsageError(DraguardError):
    """A flag combination or input that cannot work; ``run_serve`` exits 2 with the message."""


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``draguard serve`` (README "The CLI")."""
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on (default 0.0.0.0)")
    parser.add_argument("--port", type=int, default=8443, help="HTTPS port (default 8443)")
    parser.add_argument("--tls-cert", help="serving certificate (PEM); reloaded when the file changes")
    parser.add_argument("--tls-key", help="serving key (PEM)")
    parser.add_argument("--client-ca", help="require client certificates signed by this CA")
    parser.add_argument("--inventory", action="append", default=[], metavar="PATH",
                        help="static inventory: a DeviceClass/ResourceSlice/Node file, folder or - "
                             "(repeat the flag for more, as with kubectl -f)")
    parser.add_argument("--potential-inventory", nargs="+", action="extend", default=[], metavar="PATH",
                        help="node-group templates an autoscaler can create (Nodes, ResourceSlices; e.g. a "
                             "mounted ConfigMap): extra candidate nodes for the unsatisfiability proof")
    parser.add_argument("--kube", action="store_true",
                        help="live inventory: list+watch the API server (in-cluster credentials)")
    parser.add_argument("--kubeconfig", help="live inventory from this kubeconfig (implies --kube)")
    parser.add_argument("--stale-after-seconds", type=float, default=STALE_AFTER_SECONDS, metavar="S",
                        help="with --kube/--kubeconfig: how long a device watch may stay failed before the "
                             "inventory is stale — then nothing is denied from it and every answer warns "
                             f"(default {STALE_AFTER_SECONDS:g})")
    parser.add_argument("--allow-insecure-kubeconfig", action="store_true",
                        help="accept a kubeconfig cluster with insecure-skip-tls-verify (refused otherwise)")
    parser.add_argument("--deny", default=None, metavar="REASON,...",
                        help=f"finding reasons that deny at the webhook (default {','.join(sorted(DEFAULT_DENY))}): "
                             "Unsatisfiable, SelectorRuntimeError, Lint* policies, or none; every other error is a "
                             "warning")
    parser.add_argument("--unsatisfiable", choices=["deny", "warn"], default=None,
                        help="deprecated: same as adding Unsatisfiable to (deny) or removing it from (warn) --deny")
    parser.add_argument("--no-mutate", action="store_true", help="/mutate never patches")
    parser.add_argument("--lint-token-file", help="require this bearer token on POST /lint")
    parser.add_argument("--deadline-seconds", type=float, default=2.0,
                        help="per-request deadline, below the webhook timeoutSeconds (default 2)")
    parser.add_argument("--shutdown-drain-seconds", type=float, default=5.0,
                        help="on SIGTERM, fail /readyz but keep serving this long before stopping, so "
                             "API servers stop calling first (default 5)")
    parser.add_argument("--cert-reload-seconds", type=float, default=5.0,
                        help="how often to check the certificate files for rotation (default 5)")
    parser.add_argument("--cert-secret", metavar="NAME",
                        help="self-managed certificates: keep a CA and serving certificate in this Secret "
                             "(renewed before expiry, caBundle patched) and serve it from --tls-cert/--tls-key")
    parser.add_argument("--webhook-configuration", default="draguard", metavar="NAME",
                        help="with --cert-secret: the Validating- and MutatingWebhookConfiguration whose "
                             "caBundle is kept current (default draguard)")
    parser.add_argument("--service", default="draguard", metavar="NAME",
                        help="with --cert-secret: the Service the certificate is for (default draguard)")
    parser.add_argument("--namespace", default=None, metavar="NS",
                        help="with --cert-secret or --audit: namespace of the Secret, Leases and Service "
                             "(default: POD_NAMESPACE, else the service account's namespace)")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    parser.add_argument("--kubernetes-version", default=None, metavar=VERSION_METAVAR,
                        help="answer as this Kubernetes version's API server would (default: with --kube or "
                             "--kubeconfig the cluster's own version, read from its /version at start and after "
                             f"reconnects; else {DEFAULT_VERSION}, the newest released)")
    parser.add_argument("--feature-gates", default=None, metavar="Name=true,...",
                        help="kube-apiserver --feature-gates on top of the version's defaults (DRA gates)")
    parser.add_argument("--workload-kinds", action="append", default=[], metavar="FILE",
                        help="kinds that embed pod templates beyond the built-in ones (README \"Workloads\")")
    parser.add_argument("--audit", action="store_true",
                        help="also re-evaluate existing claims, templates, pending Pods and DRA workloads and "
                             "publish PolicyReports, Events and metrics (needs --kube or --kubeconfig; one "
                             "writer among replicas, through the Lease --audit-lease)")
    parser.add_argument("--audit-period-seconds", type=float, default=300.0, metavar="S",
                        help="with --audit: re-evaluate everything at least this often (default 300)")
    parser.add_argument("--audit-grace-seconds", type=float, default=120.0, metavar="S",
                        help="with --audit: publish a finding only once it has persisted this long (default 120)")
    parser.add_argument("--audit-debounce-seconds", type=float, default=5.0, metavar="S",
                        help="with --audit: wait this long after a change before a pass (default 5)")
    parser.add_argument("--audit-lease", default="draguard-audit", metavar="NAME",
                        help="with --audit: the Lease (in --namespace) that elects the one writer (default draguard-audit)")
    parser.add_argument("--audit-writes-per-second", type=float, default=5.0, metavar="N",
                        help="with --audit: API writes (reports, Events) per second, bursts of 4x (default 5)")
    parser.add_argument("--audit-no-events", action="store_true", help="with --audit: no Events, reports and metrics only")
    parser.add_argument("--health-port", type=int, default=None, metavar="PORT",
                        help="also serve /healthz, /readyz and /metrics over plain HTTP on this port "
                             "(for kubelet probes when --client-ca is on)")


def _self_signed(host: str) -> tuple[Path, Path]:
    out = Path(tempfile.mkdtemp(prefix="draguard-certs-"))
    sans = ["localhost", "127.0.0.1"]
    try:
        if not ipaddress.ip_address(host).is_unspecified:
            sans.append(host)
    except ValueError:
        sans.append(host)
    paths = write_bundle(generate_bundle("draguard", "draguard", extra_sans=sans), out)
    log.warning(json.dumps({"msg": "no --tls-cert given: serving a self-signed certificate",
                            "ca": str(paths["ca"])}))
    return paths["cert"], paths["key"]


def _kube_config(args: argparse.Namespace) -> KubeConfig | None:
    if not (args.kube or args.kubeconfig):
        return None
    try:
        config = (load_kube_config(args.kubeconfig, allow_insecure=args.allow_insecure_kubeconfig)
                  if args.kubeconfig else load_in_cluster())
        config.ssl_context()  # fail now, not in a background task, on unusable CA/client cert
    except (KubeConfigError, ssl.SSLError) as exc:
        raise UsageError(str(exc)) from exc
    return config


def _inventory(args: argparse.Namespace, target: Target) -> InventorySource:
    """The inventory source; bad documents in files are logged (and shown in ``/readyz``)."""
    if args.inventory and (args.kube or args.kubeconfig):
        raise UsageError("use either --inventory or --kube/--kubeconfig, not both")
    try:
        with bulk_allocation():  # the start-up build: a big tree of survivors
            source = open_inventory(args.inventory, kube_config=_kube_config(args), target=target,
                                    stale_after=args.stale_after_seconds)
    except InputError as exc:
        raise UsageError(f"--inventory: {exc}") from exc
    if args.potential_inventory:
        try:
            source = WithPotential(source, args.potential_inventory, target=target)
        except InputError as exc:
            raise UsageError(f"--potential-inventory: {exc}") from exc
    for finding in source.findings():
        log.warning(json.dumps({"msg": "inventory document skipped", "file": finding.file,
                                "line": finding.line, "error": finding.message}))
    return source


def _token(path: str | None) -> tuple[str | None, str | None]:
    """(token, why /lint is disabled).  A token file that does not exist disables /lint instead
    of failing start-up: the shipped manifests mount an *optional* Secret, and an unprotected
    /lint must never be the fallback."""
    if not path:
        return None, None
    if not Path(path).exists():
        return None, f"/lint is disabled: no token at {path} (create the Secret draguard-lint-token)"
    try:
        token = Path(path).read_text().strip()
    except OSError as exc:
        raise UsageError(f"--lint-token-file: {exc}") from exc
    if not token:
        raise UsageError(f"--lint-token-file {path} is empty")
    return token, None


def deny_reasons(deny: str | None, unsatisfiable: str | None) -> frozenset[str]:
    """``--deny``, with the older ``--unsatisfiable deny|warn`` mapped onto it."""
    try:
        reasons = parse_deny(deny) if deny is not None else DEFAULT_DENY
    except DenyPolicyError as exc:
        raise UsageError(f"--deny: {exc}") from exc
    if unsatisfiable == "warn":  # the older flag meant "never deny for the search": both of its proofs
        reasons = reasons - {Reason.UNSATISFIABLE, Reason.SELECTOR_RUNTIME_ERROR}
    elif unsatisfiable == "deny":
        reasons = reasons | {Reason.UNSATISFIABLE}
    return reasons


def build_state(args: argparse.Namespace) -> ServerState:
    """The server state for parsed ``serve`` flags; raises :class:`UsageError`."""
    if bool(args.tls_cert) != bool(args.tls_key):
        raise UsageError("--tls-cert and --tls-key go together")
    if not args.stale_after_seconds > 0:
        raise UsageError("--stale-after-seconds must be positive")
    if not 0 < args.deadline_seconds <= 29:
        raise UsageError("--deadline-seconds must be in (0, 29]: the webhook timeout is at most 30s")
    rotator = _self_managed(args) if getattr(args, "cert_secret", None) else None
    cert, key = (Path(args.tls_cert), Path(args.tls_key)) if args.tls_cert else _self_signed(args.host)
    try:
        tls = CertReloader(cert, key, client_ca=args.client_ca, interval=args.cert_reload_seconds)
    except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
        raise UsageError(f"cannot load the TLS certificate: {exc}") from exc
    try:
        target = parse_target(args.kubernetes_version, args.feature_gates)
    except FeatureGateError as exc:
        raise UsageError(f"--{exc.parameter}: {exc}") from exc
    cluster = _cluster_target(args, target)
    if cluster is not None:
        target = cluster.target
    try:
        workload_kinds = load_workload_kinds(args.workload_kinds)
    except InputError as exc:
        raise UsageError(f"--workload-kinds: {exc}") from exc
    source = _inventory(args, target)
    lint_token, lint_disabled = _token(args.lint_token_file)
    state = ServerState(
        inventory=source,
        options=ReviewOptions(deny=deny_reasons(args.deny, args.unsatisfiable), mutate=not args.no_mutate,
                              target=target, workload_kinds=workload_kinds,
                              version_notice=cluster.notice if cluster is not None else None),
        deadline_seconds=args.deadline_seconds,
        lint_token=lint_token,
        lint_disabled=lint_disabled,
        tls=tls,
    )
    state.background.append(source.run)
    if cluster is not None:
        state.cluster_target = cluster
        state.background.append(functools.partial(_follow_cluster_version, args, state))
    if args.audit:
        state.audit = _auditor(args, source, state.options)
        state.background.append(state.audit.run)
    if rotator is not None:
        rotator.reloader = tls
        state.self_managed = rotator
        state.background.append(rotator.run)
    return state


def _cluster_target(args: argparse.Namespace, configured: Target) -> ClusterTarget | None:
    """With a cluster and no ``--kubernetes-version``: the cluster's own version and gates
    (:mod:`app.inventory.clusterversion`); None when the target is the operator's to choose."""
    config = _kube_config(args)
    if config is None or args.kubernetes_version:
        return None
    try:
        found = asyncio.run(detect(config, fallback=configured, operator_gates=args.feature_gates))
    except FeatureGateError as exc:  # the operator's --feature-gates does not fit the cluster's version
        raise UsageError(f"--feature-gates: {exc} (the cluster's version decides the target: "
                         "give --kubernetes-version to choose another)") from exc
    _log_target(found)
    return found


def _log_target(found: ClusterTarget) -> None:
    level = logging.WARNING if (found.problem or found.notice) else logging.INFO
    log.log(level, json.dumps({"msg": "target Kubernetes version", **found.status()}))


def _retarget(source: object, target: Target) -> None:
    """Tell the live inventory (through wrappers' ``inner``) to build for ``target`` from now on."""
    for _ in range(4):
        retarget = getattr(source, "retarget", None)
        if callable(retarget):
            retarget(target)
            return
        source = getattr(source, "inner", None)
        if source is None:
            return


async def _follow_cluster_version(args: argparse.Namespace, state: ServerState) -> None:
    """Ask the cluster again every :data:`RECHECK_SECONDS`; a new version or gate setting (an
    upgrade, another API server behind the address) becomes the target of every later answer."""
    config = _kube_config(args)
    if config is None:
        return
    while True:
        await asyncio.sleep(RECHECK_SECONDS)
        current: ClusterTarget = state.cluster_target
        try:
            found = await detect(config, fallback=current.target, operator_gates=args.feature_gates)
        except FeatureGateError as exc:
            found = ClusterTarget(current.target, git_version=current.git_version,
                                  problem=f"--feature-gates does not fit the cluster's version now: {exc}")
        if found.problem and current.git_version:  # a failed read keeps what was read before
            found = dataclasses.replace(current, problem=found.problem)
        if found.target.key != current.target.key:
            _retarget(state.inventory, found.target)
        if found.target.key != current.target.key or found.notice != current.notice:
            state.options = dataclasses.replace(state.options, target=found.target, version_notice=found.notice)
            if state.audit is not None:
                state.audit.options = dataclasses.replace(state.audit.options, target=found.target,
                                                          version_notice=found.notice)
        if found.status() != current.status():
            _log_target(found)
        state.cluster_target = found


def _auditor(args: argparse.Namespace, source: InventorySource, options: ReviewOptions) -> Auditor:
    """``--audit``: the loop over the same cluster the live inventory watches."""
    config = _kube_config(args)
    if config is None:
        raise UsageError("--audit needs --kube or --kubeconfig: it re-evaluates the cluster's objects")
    for flag in ("period", "grace", "debounce"):
        if getattr(args, f"audit_{flag}_seconds") < 0:
            raise UsageError(f"--audit-{flag}-seconds must not be negative")
    if args.audit_writes_per_second <= 0:
        raise UsageError("--audit-writes-per-second must be positive")
    settings = AuditSettings(
        period_seconds=max(args.audit_period_seconds, 0.1),
        grace_seconds=args.audit_grace_seconds,
        debounce_seconds=args.audit_debounce_seconds,
        lease_namespace=args.namespace or pod_namespace() or "default",
        lease_name=args.audit_lease,
        writes_per_second=args.audit_writes_per_second,
        write_burst=max(1, int(args.audit_writes_per_second * 4)),
        events=not args.audit_no_events,
    )
    return Auditor(source, AuditObjects(config), config, settings, options=options)


def _self_managed(args: argparse.Namespace) -> SelfManagedCerts:
    """``--cert-secret``: put a certificate in place from the Secret (creating it when due) before
    the server starts; the returned rotator keeps it current afterwards."""
    if not (args.tls_cert and args.tls_key):
        raise UsageError("--cert-secret needs --tls-cert and --tls-key: the files it writes and serves")
    namespace = args.namespace or pod_namespace()
    if not namespace:
        raise UsageError("--cert-secret needs --namespace (or POD_NAMESPACE) outside a cluster")
    try:
        config = (load_kube_config(args.kubeconfig, allow_insecure=args.allow_insecure_kubeconfig)
                  if args.kubeconfig else load_in_cluster())
        config.ssl_context()
    except (KubeConfigError, ssl.SSLError) as exc:
        raise UsageError(str(exc)) from exc
    rotator = SelfManagedCerts(config, SelfManagedSettings(
        namespace=namespace, secret=args.cert_secret, service=args.service,
        webhook_configurations=[args.webhook_configuration],
        cert_file=Path(args.tls_cert), key_file=Path(args.tls_key),
    ))
    try:
        asyncio.run(rotator.bootstrap())
    except SelfCertError as exc:
        raise UsageError(str(exc)) from exc
    return rotator


def run_serve(args: argparse.Namespace) -> int:
    """``draguard serve``: 0 after a clean shutdown, 2 on a usage problem."""
    configure_logging(args.log_level)
    try:
        state = build_state(args)
    except UsageError as exc:
        print(f"draguard serve: {exc}", file=sys.stderr)
        return 2
    assert state.tls is not None
    app = create_app(state)
    drain = functools.partial(DrainingServer, state=state, drain_seconds=max(args.shutdown_drain_seconds, 0.0))
    server = make_server(app, ssl_context=state.tls.context, host=args.host, port=args.port,
                         log_level=args.log_level, server_class=drain, guard=state.guard,
                         graceful_shutdown=int(args.deadline_seconds) + 3)  # reviews in flight finish
    if args.health_port is not None:
        health = BackgroundServer(health_only(app), host=args.host, port=args.health_port, lifespan="off",
                                  log_level=args.log_level).start()
        log.info(json.dumps({"msg": "serving health over plain HTTP", "port": health.port}))
    log.info(json.dumps({"msg": "serving", "host": args.host, "port": args.port,
                         "inventory": state.inventory.status()}))
    if threading.current_thread() is threading.main_thread():
        # uvicorn shuts down gracefully on SIGTERM, then re-raises the signal for the previous
        # handler; this one turns it into a clean exit 0 (Kubernetes stops pods with SIGTERM).
        signal.signal(signal.SIGTERM, _exit_cleanly)
    try:
        server.run()
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def _exit_cleanly(signum: int, frame: object) -> None:
    raise SystemExit(0)
