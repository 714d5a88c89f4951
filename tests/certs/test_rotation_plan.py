"""The self-managed rotation rules, without a cluster: when the serving certificate is renewed,
when a new CA enters the bundle, when it starts signing, when an old CA leaves."""

from __future__ import annotations

import datetime as dt

from cryptography import x509
from draguard.certs import service_dns_names
from draguard.server.rotation_plan import (
    BUNDLE_KEY,
    CA_NEXT_SINCE,
    RotationPlan,
    RotationPolicy,
    parse_certificates,
    plan_rotation,
)

NAMES = service_dns_names("draguard", "draguard")
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)
POLICY = RotationPolicy()


def plan(data: dict[str, bytes], now: dt.datetime, annotations: dict[str, str] | None = None,
         names: list[str] = NAMES) -> RotationPlan:
    return plan_rotation(data, annotations or {}, names=names, common_name="test-ca", now=now, policy=POLICY)


def leaf(data: dict[str, bytes]) -> x509.Certificate:
    return parse_certificates(data["tls.crt"])[0]


def bundle(data: dict[str, bytes]) -> list[x509.Certificate]:
    return parse_certificates(data[BUNDLE_KEY])


def fresh() -> dict[str, bytes]:
    return plan({}, T0).data


def test_empty_secret_gets_a_ca_and_a_serving_certificate() -> None:
    p = plan({}, T0)
    assert p.changed
    assert [b.subject for b in bundle(p.data)] == [leaf(p.data).issuer]
    san = leaf(p.data).extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(NAMES) <= set(san.get_values_for_type(x509.DNSName))
    assert leaf(p.data).not_valid_after_utc == T0 + POLICY.leaf_days * DAY


def test_a_current_secret_is_left_alone() -> None:
    data = fresh()
    assert not plan(data, T0 + DAY).changed
    assert not plan(data, T0 + (POLICY.leaf_days * DAY - POLICY.leaf_renew_before) - DAY).changed


def test_serving_certificate_renewed_inside_the_margin_with_the_same_ca() -> None:
    data = fresh()
    later = T0 + (POLICY.leaf_days * DAY - POLICY.leaf_renew_before) + DAY
    p = plan(data, later)
    assert p.changed and "issued a serving certificate" in p.reasons[0]
    assert leaf(p.data).serial_number != leaf(data).serial_number
    assert p.data[BUNDLE_KEY] == data[BUNDLE_KEY]  # the caBundle does not move


def test_garbage_and_wrong_names_are_replaced() -> None:
    data = fresh()
    assert plan({**data, "tls.crt": b"not a certificate"}, T0).changed
    assert plan({**data, "tls.key": fresh()["tls.key"]}, T0).reasons == [
        "issued a serving certificate (the serving key does not match the certificate)"]
    other = plan(data, T0, names=service_dns_names("draguard", "platform-dra"))
    assert other.reasons == ["issued a serving certificate (the serving certificate does not name the Service)"]


def test_new_ca_enters_the_bundle_before_it_signs() -> None:
    data = fresh()
    near = T0 + POLICY.ca_days * DAY - POLICY.ca_renew_before + DAY
    added = plan(data, near)
    assert any("added a new CA to caBundle" in r for r in added.reasons)
    old_ca, new_ca = bundle(added.data)
    assert old_ca.subject == bundle(data)[0].subject and new_ca.serial_number != old_ca.serial_number
    assert leaf(added.data).issuer == old_ca.subject  # still signed by the old CA
    assert leaf(added.data).verify_directly_issued_by(old_ca) is None
    assert CA_NEXT_SINCE in added.annotations
    # before the propagation time has passed nothing changes
    assert not plan(added.data, near + POLICY.ca_propagation - dt.timedelta(seconds=1), added.annotations).changed
    # after it, the new CA signs a new serving certificate; the old CA stays trusted
    switched = plan(added.data, near + POLICY.ca_propagation, added.annotations)
    assert switched.changed and any("the new CA now signs" in r for r in switched.reasons)
    assert leaf(switched.data).verify_directly_issued_by(new_ca) is None
    assert {c.serial_number for c in bundle(switched.data)} == {old_ca.serial_number, new_ca.serial_number}
    assert CA_NEXT_SINCE not in switched.annotations
    # once the old CA has expired it leaves the bundle
    after = plan(switched.data, old_ca.not_valid_after_utc + DAY, switched.annotations)
    assert [c.serial_number for c in bundle(after.data)] == [new_ca.serial_number]


def test_an_expired_ca_is_replaced_outright() -> None:
    data = fresh()
    p = plan(data, T0 + POLICY.ca_days * DAY + DAY)
    assert p.reasons[0] == "created a CA (none usable in the Secret)"
    assert [c.serial_number for c in bundle(p.data)] != [c.serial_number for c in bundle(data)]
