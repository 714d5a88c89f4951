"""``draguard serve | lint | certs`` — the command-line door (README "The CLI").

Why lazy imports per sub-command: ``draguard lint`` runs in CI on every push and should start
fast; it never needs FastAPI, uvicorn or the certificate machinery.

Exit status of ``lint``: 0 when nothing is at or above ``--fail-on`` (default ``error``), 1 when
something is, 2 for a usage error or an unusable input (with a one-line message naming it): a
path that cannot be read, an unrendered Helm/Go template, or paths with no Kubernetes object at
all (``--allow-empty`` accepts that on purpose) — a CI job pointed at the wrong folder must not
pass green on nothing.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["entry", "kubectl_entry", "main"]

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
LINT_HELP = "lint manifest files and folders (for CI)"


class _Parser(argparse.ArgumentParser):
    """argparse exits with 2 on usage errors already; keep its one-line style."""


def _lint_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="files (.yaml, .yml, .json; multi-document; kind: List), folders, or - for stdin")
    parser.add_argument("--inventory", action="append", default=[], metavar="PATH",
                        help="DeviceClasses, ResourceSlices and Nodes that make up the cluster: a file, a "
                             "folder or - (repeat the flag for more, as with kubectl -f)")
    parser.add_argument("--format", choices=["text", "json", "junit", "sarif"], default="text")
    parser.add_argument("--fail-on", choices=["error", "warning", "never"], default="error",
                        help="lowest severity that makes the exit status 1 (default: error)")
    parser.add_argument("--strict", action="store_true",
                        help="draguard's own Lint* checks and a missing DeviceClass become errors")
    parser.add_argument("--show-mutations", action="store_true",
                        help="also print the JSONPatch the mutating webhook would apply")
    parser.add_argument("--deadline-seconds", type=float, default=None, metavar="S",
                        help="give up a satisfiability search after S seconds (default: no deadline)")
    parser.add_argument("--verbose", action="store_true", help="list documents of kinds draguard skips")
    parser.add_argument("--sarif-root", default=None, metavar="DIR",
                        help="SARIF artifact URIs are relative to DIR (default: the working directory)")
    parser.add_argument("--allow-empty", action="store_true",
                        help="exit 0 when the paths hold no Kubernetes object (default: exit 2, naming them)")
    parser.add_argument("--no-cache", action="store_true",
                        help="build the --inventory files again instead of reading back the build an earlier run "
                             "kept for the same bytes, version and gates (in $DRAGUARD_CACHE_DIR; off: never)")
    add_target_arguments(parser)
    add_workload_kinds_argument(parser)
    add_repository_arguments(parser)


def add_repository_arguments(parser: argparse.ArgumentParser) -> None:
    """``--exclude``, ``--no-render`` and ``--context`` (lint on real repositories, README "In CI")."""
    parser.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                        help="leave out files and folders matching GLOB (relative to the working directory or "
                             "the folder given, or a base name); repeat for more; .draguardignore files (one "
                             "glob a line) in the working directory and in folders given add to them")
    parser.add_argument("--no-render", action="store_true",
                        help="do not run helm/kubectl on Helm charts (Chart.yaml) and kustomizations "
                             "(kustomization.yaml): skip them, said once each (default: render when the tool is "
                             "on PATH)")
    parser.add_argument("--context", action="append", default=[], metavar="PATH",
                        help="also read PATH (files or folders, e.g. the repository) so that references resolve "
                             "across files, but report only on the PATHs to lint (pre-commit, pull requests)")


def add_workload_kinds_argument(parser: argparse.ArgumentParser) -> None:
    """``--workload-kinds FILE`` (shared by lint and serve): rows for CRDs that embed pod templates."""
    parser.add_argument("--workload-kinds", action="append", default=[], metavar="FILE",
                        help="kinds that embed pod templates (JobSet, LeaderWorkerSet, MPIJob…) beyond the "
                             "built-in ones: where their templates and replica counts are (README \"Workloads\"; "
                             "examples/workload-kinds.yaml)")


def add_target_arguments(parser: argparse.ArgumentParser) -> None:
    """``--kubernetes-version`` and ``--feature-gates`` (lint, explain, capacity)."""
    from .k8s import VERSION_HELP, VERSION_METAVAR  # the one list of versions and the default

    parser.add_argument("--kubernetes-version", default=None, metavar=VERSION_METAVAR, help=VERSION_HELP)
    parser.add_argument("--feature-gates", default=None, metavar="Name=true,...",
                        help="kube-apiserver --feature-gates on top of the version's defaults (DRA gates)")


_retained: list[object] | None = None
"""Where a lint about to end with :func:`entry`'s quick exit keeps what it no longer needs, so
that it is never freed object by object (``review_documents``'s ``retain``); ``None`` when
:func:`main` runs in a process that goes on (tests, a library caller): then everything is freed."""


def _run_lint(args: argparse.Namespace) -> int:
    from .inventory import InputError, load_paths, load_workload_kinds, open_inventory
    from .k8s import INVENTORY_KINDS, UNRENDERED_TEMPLATE, FeatureGateError, parse_target
    from .report import count_at_least, render
    from .review import ReviewOptions, review_documents

    if "-" in args.paths and "-" in args.inventory:
        print("draguard: standard input (-) can be read once: give it to PATH or to --inventory",
              file=sys.stderr)
        return EXIT_USAGE
    try:
        target = parse_target(args.kubernetes_version, args.feature_gates)
    except FeatureGateError as exc:
        print(f"draguard: --{exc.parameter}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    skipped: list[str] = []
    read: set[str] = set()
    try:
        workload_kinds = load_workload_kinds(args.workload_kinds)
        decoded = load_paths(args.paths, exclude=args.exclude, use_tools=not args.no_render, skipped=skipped, read=read)
        context = None
        if args.context:
            context = load_paths(args.context, exclude=args.exclude, use_tools=not args.no_render,
                                 skip_files=frozenset(read), skipped=[])
        source = open_inventory(args.inventory, target=target, disk_cache=not args.no_cache)
    except InputError as exc:
        print(f"draguard: {exc}", file=sys.stderr)
        return EXIT_USAGE

    inventory_templates = [f for f in source.findings() if f.extra.get(UNRENDERED_TEMPLATE)]
    for f in inventory_templates:
        print(f"draguard: {f.file}:{f.line}: {f.message}", file=sys.stderr)
    if inventory_templates:
        return EXIT_USAGE
    # a chart, kustomization or template that could not be rendered is said once and skipped; the
    # rest is linted — exit 2 only when nothing at all could be read
    templates = [f for f in decoded.findings if f.extra.get(UNRENDERED_TEMPLATE)]
    for f in templates:
        print(f"draguard: {f.file}:{f.line}: {f.message}; not rendered, skipped", file=sys.stderr)
    for why in skipped:
        print(f"draguard: {why}", file=sys.stderr)
    decoded.findings[:] = [f for f in decoded.findings if not f.extra.get(UNRENDERED_TEMPLATE)]
    if not decoded.documents and not decoded.findings and (templates or skipped):
        print(f"draguard: nothing could be read in {', '.join(args.paths)}: every manifest there is a template or "
              "chart that was not rendered", file=sys.stderr)
        return EXIT_USAGE
    if not decoded.documents and not decoded.findings and not args.allow_empty:
        print(f"draguard: no Kubernetes object in {', '.join(args.paths)} (no .yaml, .yml or .json "
              "documents there; --allow-empty accepts that)", file=sys.stderr)
        return EXIT_USAGE

    inventory = source.snapshot()
    findings = [*decoded.findings, *source.findings()]
    options = ReviewOptions(
        strict=args.strict,
        deadline_seconds=args.deadline_seconds,
        show_mutations=args.show_mutations,
        mutate=False,
        target=target,
        workload_kinds=workload_kinds,
    )
    documents = decoded.documents if context is None else [*decoded.documents, *context.documents]
    review = review_documents(
        documents,
        inventory=inventory,
        inventory_objects=source.objects(),
        inventory_problem=source.problem(),
        options=options,
        decode_findings=findings,
        inventory_name=", ".join(args.inventory),
        retain=_retained,
    )
    if context is not None:
        review = _reported_only(review, {d.source for d in decoded.documents} | {f.file for f in decoded.findings})
    if args.verbose:  # what the review skipped (it decides: a PodGroup is checked where the target serves it)
        lines = {(d.source, d.kind, d.name): d.line for d in decoded.documents}
        for ref in review.skipped:
            if ref.kind not in INVENTORY_KINDS:
                line = ref.line or lines.get((ref.file, ref.kind, ref.name), 0)
                print(f"{ref.file}:{line}: skipped {ref.kind or 'object without kind'} {ref.name}", file=sys.stderr)
    sys.stdout.write(render(review, args.format, fail_on=args.fail_on, show_mutations=args.show_mutations,
                            sarif_root=args.sarif_root or os.getcwd()))
    return EXIT_FINDINGS if count_at_least(review.findings, args.fail_on) else EXIT_OK


def _reported_only(review: Any, files: set[str]) -> Any:
    """``--context``: the review of every object read, keeping only the objects and findings of the
    files asked about (and those with no file).  Why: pre-commit passes only the changed files, so
    a Deployment whose ResourceClaimTemplate sits in an unchanged file got a false
    ``ReferenceNotFound`` and lost its replica check; the review now sees the repository, and the
    report stays on the changed files."""
    from .review import Review

    keep = {os.path.abspath(f) for f in files if f}

    def wanted(path: str) -> bool:
        return not path or os.path.abspath(path) in keep

    return Review(objects=[o for o in review.objects if wanted(o.ref.file)],
                  findings=[f for f in review.findings if wanted(f.file)],
                  skipped=[r for r in review.skipped if wanted(r.file)], notices=list(review.notices))


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; the server and certs options are loaded only when that command is asked for."""
    parser = _Parser(prog="draguard", description="Admission webhook and linter for Kubernetes DRA objects")
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", required=True)
    lint = sub.add_parser("lint", help=LINT_HELP)
    _lint_arguments(lint)
    serve = sub.add_parser("serve", help="run the admission webhook and lint endpoint over HTTPS")
    certs = sub.add_parser("certs", help="generate a CA and serving certificate; inject caBundle")
    explain = sub.add_parser("explain", help="why a pod or claim is (not) running: per node class, ever and now")
    capacity = sub.add_parser("capacity", help="what is free where: devices and capacity per class, pool and node")
    ui = sub.add_parser("ui", help="a local web page of the devices, claims and pending pods (capacity and "
                                   "explain, live), with a box to check a claim or workload")
    if command == "explain":
        from .commands import add_explain_arguments

        add_explain_arguments(explain)
        add_target_arguments(explain)
    if command == "capacity":
        from .commands import add_capacity_arguments

        add_capacity_arguments(capacity)
        add_target_arguments(capacity)
    if command == "ui":
        from .commands import add_ui_arguments

        add_ui_arguments(ui)
        add_target_arguments(ui)
    if command == "serve":
        from .server import add_serve_arguments

        add_serve_arguments(serve)
    if command == "certs":
        from .certs import add_certs_arguments

        add_certs_arguments(certs)
    return parser


class _VersionAction(argparse.Action):
    """``draguard --version``: the installed distribution's version, read only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        from .report import tool_version

        print(f"draguard {tool_version()}")
        parser.exit()


def parse(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """Parse ``argv``; lint's paths may stand before and after its options
    (``draguard lint a.yaml --inventory inv/ b.yaml``), as with ``kubectl -f``."""
    if argv[:1] == ["lint"]:  # argparse cannot intermix inside sub-commands: lint parses alone
        lint = _Parser(prog="draguard lint", description=LINT_HELP)
        _lint_arguments(lint)
        args = lint.parse_intermixed_args(argv[1:])
        args.command = "lint"
        return args
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv else None)
    args = parse(parser, argv)
    try:
        if args.command == "lint":
            from .collector import bulk_allocation

            with bulk_allocation():  # a batch that builds big trees of survivors, then exits
                return _run_lint(args)
        if args.command == "serve":
            from .server import run_serve

            return run_serve(args)
        if args.command == "explain":
            from .commands import run_explain

            return run_explain(args)
        if args.command == "capacity":
            from .commands import run_capacity

            return run_capacity(args)
        if args.command == "ui":
            from .commands import run_ui

            return run_ui(args)
        if args.command == "certs":
            from .certs import run_certs

            return run_certs(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    parser.error(f"unknown command {args.command}")
    return EXIT_USAGE  # pragma: no cover


def entry() -> None:
    """The ``draguard`` program: :func:`main`, and after a lint an exit that skips tearing down the heap.

    Why: a lint against a big inventory ends holding millions of small objects, and the
    interpreter's orderly shutdown frees them one by one — ~0.4 s of a 1.6 s lint against 1,000
    nodes — only for the kernel to take the whole address space back an instant later.  The
    report is flushed first; a lint registers no exit work of its own, the cyclic collector,
    paused for the lint (:mod:`app.collector`), is not resumed for the few allocations left, and
    the review's intermediate objects are kept to the end rather than freed (:data:`_retained`).
    Should the flush fail (a closed pipe), the ordinary exit runs so that its status and message
    stay as they were.
    ``serve`` and ``certs`` exit the ordinary way (log handlers, servers), and so does a lint
    run under a profiler or a coverage tracer, whose reports are written at exit.
    """
    argv = sys.argv[1:]
    quick_exit = argv[:1] == ["lint"] and sys.getprofile() is None and sys.gettrace() is None
    if quick_exit:
        global _retained
        _retained = []
        # The collector stays paused to the end (main's bulk_allocation finds it off and leaves it
        # off): resumed after the lint, its first young-generation pass would scan every object
        # the paused run made — the whole heap, ~10 % of linting 400 objects — right before the exit.
        gc.disable()
    code = main(argv)
    if quick_exit:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:
            sys.exit(code)
        os._exit(code)
    sys.exit(code)


def kubectl_entry() -> None:
    """``kubectl draguard explain pod/NAME`` (and every other command): kubectl runs the
    ``kubectl-draguard`` program it finds on ``PATH`` with the words after ``draguard``."""
    entry()


if __name__ == "__main__":  # pragma: no cover
    entry()
