"""``POST /lint`` gives positions whenever the body has lines: the body is named ``<body>``
unless ``?file=`` names it (docs/guides/choices.md); never ``-:0:0:``."""

from __future__ import annotations

from collections.abc import Callable

import yaml
from draguard.inventory import StaticInventory
from draguard.server.state import ServerState

from server.conftest import Served
from server.reviews import claim


def test_body_without_a_file_name_is_called_body_and_has_positions(
    serve: Callable[..., Served], static_inventory: StaticInventory
) -> None:
    s = serve(ServerState(inventory=static_inventory))
    body = yaml.safe_dump_all([claim("ok"), claim("bad", request="GPU_x")])
    findings = s.client.post("/lint", content=body).json()["findings"]
    assert findings and all(f["file"] == "<body>" and f["line"] > 0 for f in findings)
    (finding,) = [f for f in findings if f["name"] == "bad"]
    assert finding["file"] == "<body>"
    assert finding["line"] > yaml.safe_dump(claim("ok")).count("\n")  # in the second document
    assert finding["column"] > 0
    text = s.client.post("/lint?format=text", content=body).text
    assert f"<body>:{finding['line']}:{finding['column']}: error: ResourceClaim default/bad" in text
    assert "-:0:0" not in text


def test_a_given_file_name_wins(serve: Callable[..., Served]) -> None:
    s = serve(ServerState())
    body = yaml.safe_dump(claim("bad", request="GPU_x"))
    text = s.client.post("/lint?format=text&file=claims/bad.yaml", content=body).text
    assert text.startswith("claims/bad.yaml:")


def test_decode_errors_in_the_body_have_positions(serve: Callable[..., Served]) -> None:
    s = serve(ServerState())
    (finding,) = s.client.post("/lint", content=b"kind: ResourceClaim\nmetadata: [unclosed\n").json()["findings"]
    assert finding["reason"] == "DecodeError" and finding["file"] == "<body>" and finding["line"] >= 2
