"""What the self-managed certificate mode should write next: a pure function of the Secret's
contents and the time.

Why pure: every rule of rotation — when the serving certificate is renewed, when a new CA is
introduced, how long it sits in ``caBundle`` before it signs anything, when an old CA leaves
the bundle — is then tested without a cluster, and the I/O side (:mod:`app.server.selfcerts`)
only reads, writes under a Lease, and patches.

The Secret holds (PEM, as ``data`` keys):

* ``tls.crt``/``tls.key`` — the serving pair every replica serves;
* ``ca.crt`` — the **trust bundle**: every CA a client must trust right now; it is what goes
  into the webhooks' ``caBundle``;
* ``ca-signer.crt``/``ca-signer.key`` — the CA that signs serving certificates;
* ``ca-next.crt``/``ca-next.key`` — a CA already in the bundle but not yet signing, with the
  annotation :data:`CA_NEXT_SINCE` saying since when.

The order that keeps every handshake valid: a new CA is first *added* to the
bundle next to the old one; only after ``ca_propagation`` (time for the API servers to pick up
the new ``caBundle``) does it sign a new serving certificate; the old CA stays in the bundle
until it expires.  Renewing only the serving certificate never touches the bundle.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization

from ..certs import generate_ca, generate_leaf

__all__ = [
    "BUNDLE_KEY",
    "CA_NEXT_SINCE",
    "RotationPlan",
    "RotationPolicy",
    "parse_certificates",
    "plan_rotation",
]

CERT_KEY, KEY_KEY, BUNDLE_KEY = "tls.crt", "tls.key", "ca.crt"
SIGNER_CERT, SIGNER_KEY = "ca-signer.crt", "ca-signer.key"
NEXT_CERT, NEXT_KEY = "ca-next.crt", "ca-next.key"
CA_NEXT_SINCE = "draguard.dev/ca-next-since"
_DAY = dt.timedelta(days=1)


@dataclass(frozen=True)
class RotationPolicy:
    """Lifetimes and margins.  Defaults: serving certificate 90 days, renewed 45 days before it
    expires (so the 30-day expiry warning only ever fires when rotation is broken); CA 3 years,
    replaced 180 days before it expires, signing 10 minutes after it entered the bundle."""

    leaf_days: int = 90
    leaf_renew_before: dt.timedelta = 45 * _DAY
    ca_days: int = 3 * 365
    ca_renew_before: dt.timedelta = 180 * _DAY
    ca_propagation: dt.timedelta = dt.timedelta(minutes=10)


@dataclass(frozen=True)
class RotationPlan:
    """The Secret's next ``data`` and annotations, and why; ``changed`` False means keep it."""

    data: dict[str, bytes]
    annotations: dict[str, str]
    reasons: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.reasons)


def parse_certificates(pem: bytes | None) -> list[x509.Certificate]:
    """Every certificate in a PEM bundle; nothing (not an exception) for garbage."""
    if not pem:
        return []
    try:
        return list(x509.load_pem_x509_certificates(pem))
    except ValueError:
        return []


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _usable_ca(cert_pem: bytes | None, key_pem: bytes | None, now: dt.datetime) -> x509.Certificate | None:
    """The CA certificate when it is a CA, unexpired, and ``key_pem`` is its key."""
    certs = parse_certificates(cert_pem)
    if len(certs) != 1 or not key_pem:
        return None
    cert = certs[0]
    try:
        key = serialization.load_pem_private_key(key_pem, password=None)
        is_ca = cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    except (ValueError, TypeError, x509.ExtensionNotFound):
        return None
    if not is_ca or cert.not_valid_after_utc <= now:
        return None
    if key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo) != \
            cert.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo):
        return None
    return cert


def _leaf_due(data: dict[str, bytes], signer: x509.Certificate, names: Sequence[str], now: dt.datetime,
              policy: RotationPolicy) -> str | None:
    """Why the serving certificate must be (re)issued, or None when it is fine."""
    certs = parse_certificates(data.get(CERT_KEY))
    if not certs or not data.get(KEY_KEY):
        return "no serving certificate"
    leaf = certs[0]
    try:
        key = serialization.load_pem_private_key(data[KEY_KEY], password=None)
    except (ValueError, TypeError):
        return "the serving key is unreadable"
    spki = serialization.PublicFormat.SubjectPublicKeyInfo
    if key.public_key().public_bytes(serialization.Encoding.DER, spki) != \
            leaf.public_key().public_bytes(serialization.Encoding.DER, spki):
        return "the serving key does not match the certificate"
    try:
        leaf.verify_directly_issued_by(signer)
    except (ValueError, TypeError, InvalidSignature):
        return "the serving certificate is not signed by the current CA"
    try:
        san = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        dns = set(san.get_values_for_type(x509.DNSName))
    except x509.ExtensionNotFound:
        dns = set()
    if not set(names) <= dns:
        return "the serving certificate does not name the Service"
    # due when it expires within the margin — unless it already lasts as long as its CA can
    # sign (a leaf never outlives its CA; re-issuing it would change nothing)
    limit = min(now + policy.leaf_renew_before, signer.not_valid_after_utc)
    if leaf.not_valid_after_utc < limit:
        return f"the serving certificate expires {leaf.not_valid_after_utc:%Y-%m-%d %H:%M} UTC"
    return None


def plan_rotation(
    data: dict[str, bytes],
    annotations: dict[str, str],
    *,
    names: Sequence[str],
    common_name: str,
    now: dt.datetime,
    policy: RotationPolicy = RotationPolicy(),
) -> RotationPlan:
    """The Secret contents that should be in place at ``now`` (see the module docstring)."""
    out = dict(data)
    notes = dict(annotations)
    reasons: list[str] = []
    trusted = [c for c in parse_certificates(data.get(BUNDLE_KEY)) if c.not_valid_after_utc > now]

    signer = _usable_ca(data.get(SIGNER_CERT), data.get(SIGNER_KEY), now)
    nxt = _usable_ca(data.get(NEXT_CERT), data.get(NEXT_KEY), now)
    since = _parse_time(notes.get(CA_NEXT_SINCE))
    # each CA gets its own subject: TLS stacks look issuers up by name, and two CAs of one
    # name in a bundle would make them try the wrong key
    ca_name = f"{common_name[:43]} {now:%Y-%m-%dT%H:%M:%SZ}"  # a CN holds at most 64 characters
    if signer is None:
        ca_pem, ca_key = generate_ca(ca_name, policy.ca_days, now)
        out[SIGNER_CERT], out[SIGNER_KEY] = ca_pem, ca_key
        signer = parse_certificates(ca_pem)[0]
        reasons.append("created a CA (none usable in the Secret)")
    elif nxt is not None and since is not None and now >= since + policy.ca_propagation:
        out[SIGNER_CERT], out[SIGNER_KEY] = out.pop(NEXT_CERT), out.pop(NEXT_KEY)
        notes.pop(CA_NEXT_SINCE, None)
        signer, nxt = nxt, None
        reasons.append("the new CA now signs (it has been in caBundle since "
                       f"{since:%Y-%m-%d %H:%M:%S} UTC)")
    elif nxt is None and signer.not_valid_after_utc - now < policy.ca_renew_before:
        ca_pem, ca_key = generate_ca(ca_name, policy.ca_days, now)
        out[NEXT_CERT], out[NEXT_KEY] = ca_pem, ca_key
        notes[CA_NEXT_SINCE] = now.strftime("%Y-%m-%dT%H:%M:%SZ")
        nxt = parse_certificates(ca_pem)[0]
        reasons.append(f"added a new CA to caBundle (the current one expires "
                       f"{signer.not_valid_after_utc:%Y-%m-%d} UTC)")
    if nxt is None and (NEXT_CERT in out or NEXT_KEY in out):
        out.pop(NEXT_CERT, None)
        out.pop(NEXT_KEY, None)
        notes.pop(CA_NEXT_SINCE, None)

    why = _leaf_due(out, signer, names, now, policy)
    if why is not None:
        out[CERT_KEY], out[KEY_KEY] = generate_leaf(_pem(signer), out[SIGNER_KEY], list(names),
                                                     policy.leaf_days, now)
        reasons.append(f"issued a serving certificate ({why})")

    # the bundle: signer, the pending CA, then every other CA still valid (old leaves served by
    # replicas that have not reloaded yet stay verifiable until their CA expires)
    bundle: list[x509.Certificate] = []
    for cert in [signer, *([nxt] if nxt is not None else []), *trusted]:
        if cert.not_valid_after_utc > now and all(cert != b for b in bundle):
            bundle.append(cert)
    bundle_pem = b"".join(_pem(c) for c in bundle)
    if bundle_pem != data.get(BUNDLE_KEY):
        out[BUNDLE_KEY] = bundle_pem
        if not reasons:
            reasons.append("updated the CA bundle (expired CAs dropped)")
    return RotationPlan(out, notes, reasons)


def _parse_time(value: str | None) -> dt.datetime | None:
    if not value:
        return None
    try:
        return dt.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
    except ValueError:
        return None
