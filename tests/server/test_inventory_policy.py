"""The serve door of the one bad-inventory-document policy (the lint door: tests/inventory/).

``draguard serve --inventory`` with a bad document starts (a webhook that refuses to start over
one bad line blocks every claim under ``failurePolicy: Fail``), says so in ``/readyz``, and never
denies a claim as Unsatisfiable against the incomplete inventory.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import pytest
from draguard.server.cli_serve import UsageError, add_serve_arguments, build_state

from server.conftest import DATA, Served
from server.reviews import admission_review, claim

BAD_DOCUMENT = "apiVersion: v1\nkind: [unclosed\n"


def serve_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_serve_arguments(parser)
    return parser.parse_args(list(argv))


def test_sound_inventory_denies_the_unsatisfiable_claim(serve: Callable[..., Served]) -> None:
    state = build_state(serve_args("--inventory", str(DATA / "inventory.yaml")))
    s = serve(state)
    response = s.client.post("/validate", json=admission_review(claim("big", memory="50Gi"))).json()["response"]
    assert response["allowed"] is False
    assert response["status"]["details"]["causes"][0]["reason"] == "Unsatisfiable"


def test_bad_inventory_document_starts_reports_and_never_denies(
    serve: Callable[..., Served], tmp_path: Path
) -> None:
    (tmp_path / "inventory.yaml").write_text((DATA / "inventory.yaml").read_text())
    (tmp_path / "zz-bad.yaml").write_text(BAD_DOCUMENT)
    state = build_state(serve_args("--inventory", str(tmp_path)))
    s = serve(state)
    ready = s.client.get("/readyz").json()
    assert ready["ready"] is True
    assert "zz-bad.yaml" in ready["inventory"]["problem"]
    assert ready["inventory"]["bad_documents"] == 1
    response = s.client.post("/validate", json=admission_review(claim("big", memory="50Gi"))).json()["response"]
    assert response["allowed"] is True
    assert any(w.startswith("SatisfiabilityUnknown:") for w in response["warnings"])


def test_missing_inventory_path_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        build_state(serve_args("--inventory", str(tmp_path / "missing.yaml")))


def test_serve_inventory_repeats(tmp_path: Path) -> None:
    documents = (DATA / "inventory.yaml").read_text().split("\n---\n")
    (tmp_path / "class.yaml").write_text(documents[1])
    (tmp_path / "rest.yaml").write_text("\n---\n".join([documents[0], documents[2]]))
    state = build_state(serve_args("--inventory", str(tmp_path / "class.yaml"),
                                   "--inventory", str(tmp_path / "rest.yaml")))
    assert sorted(o["kind"] for o in state.inventory.objects()) == ["DeviceClass", "Node", "ResourceSlice"]
