"""/validate and /mutate over real HTTPS: every kind and operation, dryRun, bad and huge bodies."""

from __future__ import annotations

import base64
import json
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from draguard.inventory import StaticInventory
from draguard.review.pipeline import ReviewOptions
from draguard.server.state import ServerState

from server.conftest import Served
from server.reviews import admission_review, claim, device_class, resource_slice, template

BAD_NAME_BODY = (
    "Invalid value: \"GPU_x\": a lowercase RFC 1123 label must consist of "
    "lower case alphanumeric characters or '-', and must start and end with an alphanumeric character "
    "(e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
# A cause carries the body alone (metav1.StatusCause.Message); the message prefixes the path.
BAD_NAME_MESSAGE = f"spec.devices.requests[0].name: {BAD_NAME_BODY}"


@pytest.fixture
def served(serve: Callable[..., Served], static_inventory: StaticInventory) -> Served:
    return serve(ServerState(inventory=static_inventory))


def post(s: Served, route: str, review: dict[str, Any]) -> dict[str, Any]:
    resp = s.client.post(route, json=review)
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-type"] == "application/json"
    body: dict[str, Any] = resp.json()
    assert set(body) == {"apiVersion", "kind", "response"}
    assert body["kind"] == "AdmissionReview"
    assert body["apiVersion"] == review["apiVersion"]
    assert body["response"]["uid"] == review["request"]["uid"]
    return body["response"]


def check_warnings(response: dict[str, Any]) -> list[str]:
    warnings: list[str] = response.get("warnings", [])
    assert all(0 < len(w) <= 120 and "\n" not in w for w in warnings), warnings
    return warnings


# ------------------------------------------------------------------ ResourceClaim
def test_valid_claim_is_allowed_with_info_as_warning(served: Served) -> None:
    review = admission_review(claim("ok"))
    response = post(served, "/validate", review)
    assert response["allowed"] is True
    assert "status" not in response and "patch" not in response
    warnings = check_warnings(response)
    assert warnings == ['CapacityDefaulted: 4Gi memory for request "gpu", the policy default (none requested) '
                        "at spec.devices.requests[0].exactly"]


SKEW = "version skew?"


def test_parity_finding_is_allowed_with_a_warning_naming_version_skew(served: Served) -> None:
    # The API server validates before calling the webhook: a parity finding here means draguard and
    # the cluster disagree (version skew, a draguard bug), never a bad object — so it warns.
    review = admission_review(claim("bad", memory="8Gi", request="GPU_x"))
    response = post(served, "/validate", review)
    assert response["uid"] == review["request"]["uid"] and response["allowed"] is True
    warnings = check_warnings(response)
    assert warnings[0].startswith(f"FieldValueInvalid: {SKEW}") and "GPU_x" in warnings[0]


def test_several_parity_findings_are_each_a_warning(served: Served) -> None:
    bad = claim("two", request="GPU_x")
    bad["spec"]["devices"]["requests"].append({"name": "GPU_x", "exactly": {"deviceClassName": ""}})
    response = post(served, "/validate", admission_review(bad))
    assert response["allowed"] is True
    skewed = [w for w in check_warnings(response) if SKEW in w]
    assert len(skewed) >= 3


def test_parity_finding_denies_nothing_even_when_deny_lists_everything_allowed(
    serve: Callable[..., Served], static_inventory: StaticInventory
) -> None:
    deny = frozenset({"Unsatisfiable", "SelectorRuntimeError", "LintNegativeCapacityRequest"})
    s = serve(ServerState(inventory=static_inventory, options=ReviewOptions(deny=deny)))
    assert post(s, "/validate", admission_review(claim("bad", request="GPU_x")))["allowed"] is True
    assert post(s, "/validate", admission_review(claim("big", memory="50Gi")))["allowed"] is False


def test_unsatisfiable_claim_is_denied_with_the_explanation(served: Served) -> None:
    response = post(served, "/validate", admission_review(claim("big", memory="50Gi")))
    assert response["allowed"] is False
    cause = response["status"]["details"]["causes"][0]
    assert cause["reason"] == "Unsatisfiable"
    assert cause["field"] == "spec.devices.requests[0]"
    assert "above the policy maximum 16Gi" in cause["message"] and "node-a/gpu-0" in cause["message"]
    assert response["status"]["code"] == 422


def test_unsatisfiable_warn_mode_allows_with_warning(
    serve: Callable[..., Served], static_inventory: StaticInventory
) -> None:
    s = serve(ServerState(inventory=static_inventory, options=ReviewOptions(deny=frozenset())))
    response = post(s, "/validate", admission_review(claim("big", memory="50Gi")))
    assert response["allowed"] is True
    assert check_warnings(response)[0].startswith('Unsatisfiable: request "gpu": 52Gi after rounding 50Gi')


def test_dry_run_is_answered_exactly_like_a_real_request(served: Served) -> None:
    for obj in (claim("ok"), claim("big", memory="50Gi"), claim("bad", request="GPU_x")):
        real = admission_review(obj, uid="u-1")
        dry = admission_review(obj, uid="u-1", dry_run=True)
        assert post(served, "/validate", real) == post(served, "/validate", dry)
        assert post(served, "/mutate", real) == post(served, "/mutate", dry)


def test_update_of_a_claim_checks_only_immutability(served: Served) -> None:
    old = claim("big", memory="50Gi")
    new = json.loads(json.dumps(old))
    new["metadata"]["labels"] = {"team": "a"}
    # same (unsatisfiable) spec: an UPDATE must not re-run satisfiability
    response = post(served, "/validate", admission_review(new, operation="UPDATE", old=old))
    assert response["allowed"] is True
    assert not any("Unsatisfiable" in w for w in response.get("warnings", []))
    changed = json.loads(json.dumps(old))
    changed["spec"]["devices"]["requests"][0]["exactly"]["count"] = 2
    response = post(served, "/validate", admission_review(changed, operation="UPDATE", old=old))
    assert response["allowed"] is True  # the API server enforces immutability itself, before the webhook
    assert any(w.startswith(f"FieldValueInvalid: {SKEW}") for w in check_warnings(response)), response


def test_delete_and_connect_are_allowed_untouched(served: Served) -> None:
    old = claim("bad", request="GPU_x")
    for operation in ("DELETE", "CONNECT"):
        review = admission_review(None, operation=operation, old=old)
        assert post(served, "/validate", review) == {"uid": review["request"]["uid"], "allowed": True}
        assert post(served, "/mutate", review) == {"uid": review["request"]["uid"], "allowed": True}


def test_unknown_kind_is_allowed_with_a_warning(served: Served) -> None:
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p", "namespace": "default"}}
    review = admission_review(config, group="", version="v1")
    response = post(served, "/validate", review)
    assert response["allowed"] is True
    assert check_warnings(response) == ["draguard does not check ConfigMap objects; allowed without checks"]
    # a Pod is a checked kind now; one that uses no DRA has nothing to be told
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "x"}]}}
    response = post(served, "/validate", admission_review(pod, group="", version="v1"))
    assert response == {"uid": response["uid"], "allowed": True}
    other_version = admission_review(claim("x", request="GPU_x"), version="v1beta2")
    response = post(served, "/validate", other_version)
    assert response["allowed"] is True and "v1beta2" in response["warnings"][0]


def test_v1beta1_admission_review_is_echoed(served: Served) -> None:
    review = admission_review(claim("ok"), api_version="admission.k8s.io/v1beta1")
    assert post(served, "/validate", review)["allowed"] is True


# ------------------------------------------------------------------ templates, slices, classes
def test_templates(served: Served) -> None:
    response = post(served, "/validate", admission_review(template("t-bad", request="GPU_x")))
    assert response["allowed"] is True
    assert check_warnings(response)[0].startswith(f"FieldValueInvalid: {SKEW}")
    response = post(served, "/validate", admission_review(template("t-big", memory="50Gi")))
    assert response["allowed"] is False
    assert response["status"]["message"].startswith('ResourceClaimTemplate.resource.k8s.io "t-big" is invalid: ')
    assert response["status"]["details"]["causes"][0]["reason"] == "Unsatisfiable"


def test_template_is_not_patched(served: Served) -> None:
    review = admission_review(template("t-ok"))
    assert post(served, "/mutate", review) == {"uid": review["request"]["uid"], "allowed": True}


def test_resource_slices_create_and_update(served: Served) -> None:
    good = resource_slice("s-ok")
    for operation, old in (("CREATE", None), ("UPDATE", good)):
        response = post(served, "/validate", admission_review(good, operation=operation, old=old))
        assert response["allowed"] is True, response
    bad = resource_slice("s-bad", step="0")
    for operation, old in (("CREATE", None), ("UPDATE", good)):
        response = post(served, "/validate", admission_review(bad, operation=operation, old=old))
        assert response["allowed"] is True  # a driver's slice is never blocked by draguard's parity rules
        assert any("must be greater than zero" in w and SKEW in w for w in check_warnings(response)), response


def test_device_classes(served: Served) -> None:
    response = post(served, "/validate", admission_review(device_class("ok")))
    assert response["allowed"] is True
    bad = device_class("bad", expression="device.driver ==")
    for operation, old in (("CREATE", None), ("UPDATE", device_class("bad"))):
        response = post(served, "/validate", admission_review(bad, operation=operation, old=old))
        assert response["allowed"] is True
        assert check_warnings(response)[0].startswith(f"FieldValueInvalid: {SKEW}")


# ------------------------------------------------------------------ mutation
def test_mutate_fills_defaults_with_a_jsonpatch(served: Served) -> None:
    review = admission_review(claim("fill"))
    response = post(served, "/mutate", review)
    assert response["allowed"] is True
    assert response["patchType"] == "JSONPatch"
    patch = json.loads(base64.b64decode(response["patch"]))
    assert patch == [{"op": "add", "path": "/spec/devices/requests/0/exactly/capacity",
                      "value": {"requests": {"memory": "4Gi"}}}]
    warnings = check_warnings(response)
    assert warnings == ['CapacityDefaulted: 4Gi memory filled in for request "gpu": '
                        "the policy default of every device it can get"]


def test_mutate_without_anything_to_fill(served: Served) -> None:
    for obj in (claim("explicit", memory="8Gi"), claim("bad", request="GPU_x"), claim("big", memory="50Gi")):
        review = admission_review(obj)
        assert post(served, "/mutate", review) == {"uid": review["request"]["uid"], "allowed": True}


def test_no_mutate_option(serve: Callable[..., Served], static_inventory: StaticInventory) -> None:
    s = serve(ServerState(inventory=static_inventory, options=ReviewOptions(mutate=False)))
    review = admission_review(claim("fill"))
    assert post(s, "/mutate", review) == {"uid": review["request"]["uid"], "allowed": True}


# ------------------------------------------------------------------ bad requests
@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (b"", "not JSON"),
        (b"{not json", "not JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"kind": "Pod", "apiVersion": "v1"}', "expected kind AdmissionReview"),
        (b'{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1"}', "no request"),
        (b'{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": {"kind": {"kind": "X"}}}',
         "uid"),
        (b'{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": '
         b'{"uid": "1", "kind": {"kind": "ResourceClaim"}, "operation": "PATCH"}}', "operation"),
        (b'{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": '
         b'{"uid": "1", "kind": {"kind": "ResourceClaim"}, "operation": "CREATE"}}', "object is required"),
        (b"\xff\xfe\x00garbage", "not JSON"),
    ],
)
def test_bad_bodies_get_400_with_a_json_reason(served: Served, body: bytes, needle: str) -> None:
    for route in ("/validate", "/mutate"):
        resp = served.client.post(route, content=body, headers={"content-type": "application/json"})
        assert resp.status_code == 400
        err = resp.json()
        assert err["code"] == 400 and err["reason"] == "BadRequest" and err["kind"] == "Status"
        assert needle in err["message"]


def test_oversized_body_gets_413(served: Served) -> None:
    big = admission_review(claim("huge"))
    big["request"]["object"]["metadata"]["annotations"] = {"pad": "x" * (3 * 1024 * 1024)}
    resp = served.client.post("/validate", json=big)
    assert resp.status_code == 413
    assert resp.json()["reason"] == "RequestEntityTooLarge"

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit must hold while streaming
        for _ in range(64):
            yield b"x" * 65536

    resp = served.client.post("/validate", content=chunks())
    assert resp.status_code == 413
    # the server is fine afterwards
    assert post(served, "/validate", admission_review(claim("ok")))["allowed"] is True


def test_just_under_the_limit_is_read(served: Served) -> None:
    review = admission_review(claim("padded"))
    review["request"]["object"]["metadata"]["annotations"] = {"pad": "x" * (3 * 1024 * 1024 - 4096)}
    resp = served.client.post("/validate", json=review)
    assert resp.status_code == 200 and resp.json()["response"]["uid"] == review["request"]["uid"]


def test_wrong_method_and_path(served: Served) -> None:
    assert served.client.get("/validate").status_code == 405
    assert served.client.post("/nope", json={}).status_code == 404


# ------------------------------------------------------------------ logs
def test_one_structured_log_line_per_review(served: Served, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="draguard.review")
    review = admission_review(claim("big", memory="50Gi"), uid="log-uid-1")
    post(served, "/validate", review)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not any(
        getattr(r, "fields", {}).get("uid") == "log-uid-1" for r in caplog.records
    ):
        time.sleep(0.01)
    records = [r for r in caplog.records if getattr(r, "fields", {}).get("uid") == "log-uid-1"]
    assert len(records) == 1
    fields = records[0].fields  # type: ignore[attr-defined]
    assert fields["kind"] == "ResourceClaim" and fields["name"] == "big" and fields["namespace"] == "default"
    assert fields["decision"] == "denied" and fields["reason"] == "Unsatisfiable"
    assert fields["operation"] == "CREATE" and fields["route"] == "validate"
    assert isinstance(fields["ms"], float) and fields["ms"] > 0
    from draguard.server.logs import JsonFormatter

    line = JsonFormatter().format(records[0])
    parsed = json.loads(line)
    assert parsed["uid"] == "log-uid-1" and parsed["msg"] == "review" and "\n" not in line


def test_rounding_warning_is_figure_first(served: Served) -> None:
    response = post(served, "/validate", admission_review(claim("seven", memory="7Gi")))
    assert response["allowed"] is True
    # the field path would pass 120 characters: the figure stays, the path is left out
    assert check_warnings(response) == ['CapacityRounded: 7Gi->8Gi memory for request "gpu" (policy rounds up)']
